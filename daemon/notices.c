/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What is said once, and again only when it changes, so that a service
 * that gets nothing is never a mystery and the journal is not flooded:
 * per process (THP turned off, VMAs the kernel refuses, folios split) as
 * log_process()/log_split() records with their MTHPD_* journald fields,
 * and per policy (sizes this kernel cannot collapse, no split here).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"
#include "log.h"
#include "util.h"

/* What a log_process() record names the process by. */
static struct log_process process_record(const struct mthpd_sched_proc *p,
					 const struct mthpd_proc *proc,
					 const struct mthpd_policy *pol, const char *result,
					 const char *text)
{
	return (struct log_process){
		.pid = proc->pid,
		.comm = p->t.comm,
		.cgroup = proc->cgroup,
		.unit = proc->unit,
		.policy = pol->name,
		.result = result,
		.text = text,
	};
}

/*
 * A matched process that turned THP off for itself gets nothing, and a
 * service that never gets huge pages must not be a mystery: said once, and
 * again when it changes (a process may call the prctl at any time).
 */
void notice_thp_disabled(struct mthpd_sched_proc *p, const struct mthpd_proc *proc,
			     const struct mthpd_policy *pol)
{
	char text[512];
	struct log_process lp;

	if (p->t.thp_disabled == p->said_thp_disabled)
		return;
	p->said_thp_disabled = p->t.thp_disabled;
	if (!p->t.thp_disabled) {
		log_info("pid %d '%s': THP is enabled again for this process", (int)proc->pid,
			 p->t.comm);
		return;
	}
	(void)snprintf(text, sizeof(text),
		       "THP disabled for this process (PR_SET_THP_DISABLE): the kernel refuses "
		       "MADV_COLLAPSE for all of its memory, nothing is done; hint: %s",
		       mthpd_thp_disabled_hint(p->t.comm));
	lp = process_record(p, proc, pol, "thp_disabled", text);
	log_process(&lp);
}

/* What the visit did to the 2M folios its process maps in part: one record each way. */
void notice_splits(struct target_ctx *tc, const struct mthpd_sched_proc *p,
		       const struct mthpd_proc *proc, const struct mthpd_policy *pol)
{
	struct log_split ls = {
		.pid = proc->pid,
		.comm = p->t.comm,
		.cgroup = proc->cgroup,
		.unit = proc->unit,
		.policy = pol->name,
	};

	if (tc->split.folios) {
		ls.result = "split_partial";
		ls.folios = tc->split.folios;
		ls.bytes = tc->split.pages * MTHPD_PAGE_SIZE;
		log_split(&ls);
	}
	if (tc->split_failed.folios) {
		ls.result = mthpd_result_name((enum mthpd_scan_result)tc->split_failed_result);
		ls.folios = tc->split_failed.folios;
		ls.bytes = tc->split_failed.pages * MTHPD_PAGE_SIZE;
		log_split(&ls);
	}
	/* not attempted: repeats every visit, so once a minute, as a dry run */
	if (tc->split_dry.folios && tc->log_dry) {
		ls.result = mthpd_result_name(tc->held);
		ls.folios = tc->split_dry.folios;
		ls.bytes = tc->split_dry.pages * MTHPD_PAGE_SIZE;
		log_split(&ls);
		tc->logged_dry = true;
	}
}

/* The VMAs of @t the kernel refused, with memory in them: how many, and their bytes. */
static unsigned int vmas_refused(const struct mthpd_target *t, uint64_t *ret_bytes, char *list,
				 size_t size)
{
	unsigned int n = 0;
	size_t len = 0;

	*ret_bytes = 0;
	list[0] = '\0';
	for (size_t i = 0; i < t->nr_verdicts; i++) {
		const struct mthpd_vma_verdict *v = &t->verdicts[i];

		if (!v->refused)
			continue;
		*ret_bytes += v->end - v->start;
		if (++n <= 4 && len < size)
			len += (size_t)snprintf(list + len, size - len, "%s0x%" PRIx64 "-0x%" PRIx64,
						n > 1 ? ", " : "", v->start, v->end);
	}
	if (n > 4 && len < size)
		(void)snprintf(list + len, size - len, ", ...");
	return n;
}

/*
 * After a visit that went over every VMA from the first to the last (so the
 * count is whole): the VMAs left alone because the kernel refuses them
 * (MADV_NOHUGEPAGE), said once, and again when their number changes.
 */
void notice_vmas_refused(struct mthpd_sched_proc *p, const struct mthpd_proc *proc,
			     const struct mthpd_policy *pol)
{
	char list[200], text[400];
	struct log_process lp;
	uint64_t bytes;
	unsigned int n = vmas_refused(&p->t, &bytes, list, sizeof(list));

	if (n == p->said_vmas_refused)
		return;
	p->said_vmas_refused = n;
	if (n == 0)
		return;
	(void)snprintf(text, sizeof(text),
		       "left alone: %u VMA%s of %.1f MiB that the kernel refuses to collapse "
		       "(MADV_NOHUGEPAGE): %s",
		       n, n == 1 ? "" : "s", (double)bytes / (1024.0 * 1024.0), list);
	lp = process_record(p, proc, pol, "vma_refused", text);
	log_process(&lp);
}

/*
 * A policy asking for sizes the kernel cannot collapse would otherwise show
 * it only as "unsupported" decisions, once a minute per pid: say it once per
 * policy, at start and after every reload.
 */
void notice_unsupported_sizes(const struct daemon *d)
{
	uint32_t cannot_all = 0;

	if (d->opts->proc_root)
		return; /* plan only: nothing is collapsed anyway */
	for (unsigned int o = MTHPD_MIN_ORDER; o < MTHPD_PMD_ORDER; o++)
		if (!mthpd_features_can_collapse(&d->features, o))
			cannot_all |= 1U << o;
	for (size_t i = 0; i < d->cfg->nr_policies; i++) {
		const struct mthpd_policy *pol = &d->cfg->policies[i];
		uint32_t cannot = cannot_all & pol->knobs.orders;
		char sizes[64];

		if (!pol->enabled || !cannot)
			continue;
		mthpd_orders_name(cannot, sizes, sizeof(sizes));
		log_warning("policy %s: this kernel does not collapse %s (%s); such blocks are "
			    "reported unsupported",
			    pol->name, sizes,
			    d->features.subpmd == MTHPD_SUBPMD_PATCHED
				    ? "disabled in /sys/kernel/mm/transparent_hugepage/hugepages-*kB/enabled"
			    : d->features.subpmd == MTHPD_SUBPMD_UNPATCHED
				    ? "it lacks the contrib/kernel patch"
				    : "the probe could not tell");
	}
}

/*
 * split_partial= asks for something this kernel may not do: said once at
 * start, with what is still done (the memory is reported).
 */
void notice_no_split(const struct daemon *d)
{
	unsigned int n = 0;

	if (d->opts->proc_root || d->features.split == MTHPD_SPLIT_YES)
		return;
	for (size_t i = 0; i < d->cfg->nr_policies; i++)
		n += d->cfg->policies[i].enabled && d->cfg->policies[i].split_partial;
	if (n)
		log_notice("kernel: MADV_COLD does not split a 2M folio mapped in part here (%s): "
			   "split_partial= of %u polic%s does nothing; the memory such folios hold "
			   "is still reported (partial_bytes)",
			   d->features.split == MTHPD_SPLIT_NO ? "tried on mthpd's own memory"
							       : "the probe could not tell",
			   n, n == 1 ? "y" : "ies");
}

/*
 * A matched process mthpd may not read (a capability left out of a
 * container, an LSM), named by @comm: a service that silently gets
 * nothing, said once per pid (p->said_unreadable, set by the caller).
 */
void notice_unreadable(const struct mthpd_sched_proc *p, const struct mthpd_proc *proc,
		       const struct mthpd_policy *pol, const char *comm, int err)
{
	char text[300];
	struct log_process lp;

	(void)snprintf(text, sizeof(text),
		       "cannot open its pagemap or pidfd: %s; nothing is done "
		       "(mthpd needs CAP_SYS_ADMIN, CAP_SYS_PTRACE, CAP_SYS_NICE "
		       "and CAP_DAC_READ_SEARCH, and no LSM in the way)",
		       strerror(-err));
	lp = process_record(p, proc, pol, "permission_denied", text);
	lp.comm = comm;
	log_process(&lp);
}
