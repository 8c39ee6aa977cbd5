/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `mthpd plan --pid PID...` and `mthpd collapse --pid PID...`: one pass
 * over the processes the command line names, every one checked before
 * anything is done to any of them, each shown as it is planned or
 * collapsed (output.c).  The daemon is run.c; `plan --config-dir` is
 * preview.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "act.h"
#include "cli.h"
#include "features.h"
#include "kif.h"
#include "knobs.h"
#include "oneshot.h"
#include "output.h"
#include "plan.h"
#include "procfs.h"
#include "sandbox.h"
#include "target.h"
#include "util.h"

/* Fills @k from the command line over the sysfs defaults. */
static int build_knobs(const struct cli *c, const struct mthpd_kif *kif, struct mthpd_knobs *k)
{
	static const char *const names[] = {"--max-ptes-none", "--max-ptes-swap",
					    "--max-ptes-shared"};
	unsigned int *fields[] = {&k->max_ptes_none, &k->max_ptes_swap, &k->max_ptes_shared};
	bool need_sysfs = false;
	char bad[32];

	k->orders = 1U << MTHPD_PMD_ORDER;
	if (c->sizes && mthpd_parse_sizes(c->sizes, &k->orders, bad, sizeof(bad)) < 0) {
		cli_fail("--sizes: '%s' is not a size from 16K to 2M (16K, 32K, 64K, ..., 1M, 2M)", bad);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (!c->max_ptes[i]) {
			need_sysfs = true;
			continue;
		}
		if (mthpd_parse_uint(c->max_ptes[i], MTHPD_MAX_PTES_LIMIT, fields[i]) < 0) {
			cli_fail("%s: '%s' is not a number from 0 to %d", names[i], c->max_ptes[i],
				 MTHPD_MAX_PTES_LIMIT);
			return EXIT_USAGE;
		}
	}
	if (need_sysfs) {
		struct mthpd_knobs sys;
		const char *file = NULL;
		int r = mthpd_knobs_read_sysfs(kif, (c->max_ptes[0] ? 0 : 1) | (c->max_ptes[1] ? 0 : 2) |
							     (c->max_ptes[2] ? 0 : 4),
					       &sys, &file);

		if (r < 0) {
			cli_fail("cannot read the default from %s/%s: %s (give --%s)",
				 c->sys_root ? c->sys_root : "/sys", file, strerror(-r),
				 strstr(file, "none")   ? "max-ptes-none"
				 : strstr(file, "swap") ? "max-ptes-swap"
							: "max-ptes-shared");
			return EXIT_SYSTEM;
		}
		if (!c->max_ptes[0])
			k->max_ptes_none = sys.max_ptes_none;
		if (!c->max_ptes[1])
			k->max_ptes_swap = sys.max_ptes_swap;
		if (!c->max_ptes[2])
			k->max_ptes_shared = sys.max_ptes_shared;
	}
	return EXIT_OK;
}

/*
 * Opens @pid into @t, once the checks that name what is wrong with it have
 * passed.  Returns EXIT_OK (@t is open) or EXIT_USAGE (it is not; said why).
 */
static int open_target(const struct cli *c, struct mthpd_kif *kif, pid_t pid,
		       struct mthpd_target *t)
{
	struct mthpd_pid_ident id;
	int r;

	/* Collapsing mthpd's own memory while it reads it proves nothing and helps nobody. */
	if (c->collapse && !c->proc_root && pid == getpid()) {
		cli_fail("--pid %d is mthpd itself: it does not collapse its own memory", (int)pid);
		return EXIT_USAGE;
	}
	/*
	 * /proc/TID answers for a thread although it is not listed: a
	 * thread's pid would pass for its process, planned once for each
	 * of its numbers.  A zombie has no memory left to plan.
	 */
	if (mthpd_pid_identify(kif, pid, &id) == 0) {
		if (id.tgid != pid) {
			cli_fail("--pid %d is a thread of process %d: give --pid %d", (int)pid,
				 (int)id.tgid, (int)id.tgid);
			return EXIT_USAGE;
		}
		if (id.state == 'Z') {
			cli_fail("process %d is a zombie: it exited and its parent %d has not reaped it "
				 "yet; it has no memory", (int)pid, (int)id.ppid);
			return EXIT_USAGE;
		}
	}
	r = mthpd_target_open(kif, pid, c->collapse, t);
	if (r == -EOPNOTSUPP) {
		cli_fail("process %d is a kernel thread: it has no user memory", (int)pid);
		return EXIT_USAGE;
	}
	/* plan asks the kernel about VMAs with a pidfd where it can (target.c) */
	if (r == 0 && !c->collapse && !c->proc_root) {
		int fd = kif->ops->pidfd_open(kif, pid);

		t->pidfd = fd >= 0 ? fd : -1;
	}
	if (r == -ESRCH) {
		cli_fail("no such process: %d", (int)pid);
		return EXIT_USAGE;
	}
	if (r < 0) {
		cli_fail("cannot read process %d: %s", (int)pid, strerror(-r));
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/*
 * Every pid is checked before anything is done to any of them.  @opened
 * counts the targets open, also when one fails.  Returns an exit status.
 */
static int open_targets(const struct cli *c, struct mthpd_kif *kif, struct mthpd_target *targets,
			size_t *opened)
{
	for (; *opened < c->nr_pids; (*opened)++) {
		int status = open_target(c, kif, c->pids[*opened], &targets[*opened]);

		if (status != EXIT_OK)
			return status;
	}
	return EXIT_OK;
}

/*
 * What the kernel offers, and /proc/kpageflags opened into @ret_kpf_fd.
 * Returns EXIT_OK, or EXIT_SYSTEM where this system cannot run mthpd.
 */
static int probe_kernel(const struct cli *c, struct mthpd_kif *kif,
			struct mthpd_features *features, int *ret_kpf_fd)
{
	int r;

	/* A synthetic proc root has no kernel behind it to probe. */
	if (!c->proc_root) {
		r = mthpd_features_probe(kif, features);
		if (r < 0) {
			cli_fail("cannot probe kernel features: %s", strerror(-r));
			return EXIT_SYSTEM;
		}
		if (!features->pfns_visible) {
			cli_fail("/proc/self/pagemap shows no page frame numbers: mthpd needs "
				 "CAP_SYS_ADMIN (run it as root)");
			return EXIT_SYSTEM;
		}
	}
	if (getenv("MTHPD_DISABLE")) {
		/* Testing aid: force the fallbacks of older kernels. */
		const char *d = getenv("MTHPD_DISABLE");

		if (strstr(d, "pagemap_scan"))
			features->pagemap_scan = false;
		if (strstr(d, "procmap_query"))
			features->procmap_query = false;
	}
	r = kif->ops->open_proc(kif, "kpageflags", O_RDONLY);
	if (r < 0) {
		cli_fail("cannot open %s/kpageflags: %s (mthpd needs root)",
			 c->proc_root ? c->proc_root : "/proc", strerror(-r));
		return EXIT_SYSTEM;
	}
	*ret_kpf_fd = r;
	return EXIT_OK;
}

/* Testing aid: the daemon's sandbox around a one-shot pass (test-seccomp). */
static int enter_test_sandbox(void)
{
	char err[256], desc[256];

	if (!getenv("MTHPD_SANDBOX"))
		return EXIT_OK;
	if (sandbox_enter(err, sizeof(err)) < 0) {
		cli_fail("cannot enter the sandbox: %s", err);
		return EXIT_SYSTEM;
	}
	if (sandbox_describe(desc, sizeof(desc)) == 0)
		fprintf(stderr, "mthpd: sandbox: %s\n", desc);
	return EXIT_OK;
}

/*
 * The pass over each open target, each shown as it goes.  Returns EXIT_OK,
 * or EXIT_TARGET when one could not be processed or the output not written.
 */
static int plan_and_print(const struct cli *c, struct mthpd_kif *kif, struct mthpd_target *targets,
			  const struct mthpd_knobs *knobs, const struct mthpd_features *features,
			  int kpf_fd)
{
	struct mthpd_output out;
	int r, status = EXIT_OK;

	mthpd_output_init(&out, stdout, c->json, c->collapse, c->proc_root != NULL, knobs, features);
	mthpd_output_header(&out);
	for (size_t i = 0; i < c->nr_pids; i++) {
		struct mthpd_target *t = &targets[i];
		struct mthpd_pass_opts o = {
			.knobs = knobs,
			.features = features,
			.kpageflags_fd = kpf_fd,
			.collapse = c->collapse,
			.subpmd_flags = MTHPD_MADV_COLLAPSE_ORDER |
					(knobs->max_ptes_none == 0 ? MTHPD_MADV_COLLAPSE_STRICT : 0),
		};
		struct mthpd_pass_stats st;

		mthpd_output_target_begin(&out, t);
		r = mthpd_target_pass(kif, t, &o, mthpd_output_range, &out, &st);
		mthpd_output_target_end(&out, t, &st);
		if (r == 0 && c->collapse && t->thp_disabled) {
			/* nothing could be done to it: a script must not read that as success */
			cli_fail("process %d ('%s'): THP is disabled for it (PR_SET_THP_DISABLE): nothing "
				 "collapsed", (int)t->pid, t->comm);
			status = EXIT_TARGET;
		} else if (r == -ESRCH) {
			cli_fail("process %d ('%s') exited during the pass", (int)t->pid, t->comm);
			status = EXIT_TARGET;
		} else if (r == -ENOSPC) {
			/* the rest would only compact again for nothing (issue 31) */
			cli_fail("process %d ('%s'): a huge page could not be allocated (no free block "
				 "of that size); the rest was not attempted", (int)t->pid, t->comm);
			status = EXIT_TARGET;
		} else if (r < 0) {
			cli_fail("process %d ('%s'): %s", (int)t->pid, t->comm, strerror(-r));
			status = EXIT_TARGET;
		}
	}
	mthpd_output_footer(&out);
	if (fflush(stdout) != 0) {
		cli_fail("cannot write the output: %s", strerror(errno));
		status = EXIT_TARGET;
	}
	return status;
}

/* plan or collapse --pid: the pass over the processes @c names; returns the exit status. */
int oneshot_run(const struct cli *c)
{
	struct mthpd_kif kif = {.proc_fd = -1, .sys_fd = -1};
	struct mthpd_knobs knobs;
	struct mthpd_features features = {0};
	_cleanup_free_ struct mthpd_target *targets = NULL;
	_cleanup_close_ int kpf_fd = -1;
	const char *bad_root = NULL;
	size_t opened = 0;
	int r, status;

	if (c->collapse && (c->proc_root || c->sys_root)) {
		/* The plan would come from the tree, the collapse go to live pids. */
		cli_fail("collapse acts on live processes: --proc-root and --sys-root are for plan only");
		return EXIT_USAGE;
	}
	r = mthpd_kif_linux_init(c->proc_root, c->sys_root, &kif, &bad_root);
	if (r < 0) {
		cli_fail("cannot open '%s': %s", bad_root, strerror(-r));
		return EXIT_USAGE;
	}
	status = build_knobs(c, &kif, &knobs);
	if (status != EXIT_OK)
		goto out;
	targets = calloc(c->nr_pids, sizeof(*targets));
	if (!targets) {
		cli_fail("out of memory");
		status = EXIT_SYSTEM;
		goto out;
	}
	status = open_targets(c, &kif, targets, &opened);
	if (status != EXIT_OK)
		goto out;
	status = probe_kernel(c, &kif, &features, &kpf_fd);
	if (status != EXIT_OK)
		goto out;
	if (mthpd_knobs_max_ptes_none_degraded(&knobs))
		fprintf(stderr,
			"mthpd: warning: max_ptes_none %u acts as 0 for sizes below 2M (only 0 "
			"and 511 are supported there, as in the kernel)\n",
			knobs.max_ptes_none);
	/* as the daemon's prefault=auto (a one-shot reads no mthpd.conf) */
	if (c->collapse && mthpd_kif_free_page_reporting(&kif))
		(void)mthpd_kif_prefault_set(&kif, true);
	status = enter_test_sandbox();
	if (status != EXIT_OK)
		goto out;
	status = plan_and_print(c, &kif, targets, &knobs, &features, kpf_fd);
out:
	for (size_t i = 0; i < opened; i++)
		mthpd_target_close(&targets[i]);
	mthpd_kif_done(&kif);
	return status;
}
