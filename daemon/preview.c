/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `mthpd plan --config-dir DIR [--policy FILE|NAME] [--unit GLOB]
 * [--cgroup GLOB] [--json]`: what the daemon would do with a configuration,
 * on the processes running now, before it is enabled.  Nothing is collapsed.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buddyinfo.h"
#include "config.h"
#include "discover.h"
#include "features.h"
#include "kif.h"
#include "knobs.h"
#include "output.h"
#include "preview.h"
#include "target.h"
#include "text.h"
#include "util.h"

/* The most processes one preview looks at. */
#define PREVIEW_MAX_PROCS 16384

enum {
	EXIT_OK = 0,
	EXIT_TARGET = 1,
	EXIT_USAGE = 2,
	EXIT_SYSTEM = 3,
};

/* What a process is to the daemon. */
enum verdict {
	V_PLANNED,      /* matched, enabled: planned with its policy */
	V_DISABLED,     /* matched by a policy with enabled=no: never touched */
	V_THP_DISABLED, /* matched, but it turned THP off for itself */
	V_NO_POLICY,    /* no policy matches: never touched */
	V_GONE,         /* exited, or could not be read, during the preview */
};

static const char *const verdict_names[] = {
	[V_PLANNED] = "planned",
	[V_DISABLED] = "policy_disabled",
	[V_THP_DISABLED] = "thp_disabled",
	[V_NO_POLICY] = "no_policy",
	[V_GONE] = "gone",
};

struct entry {
	const struct mthpd_proc *proc;
	int policy; /* index in the configuration, -1: none */
	char comm[32];
	enum verdict verdict;
	uint64_t anon_kb, huge_kb;     /* smaps_rollup: Anonymous, AnonHugePages */
	uint64_t collapse_bytes[MTHPD_PMD_ORDER + 1]; /* what the plan collapses, by size */
	uint64_t fill_bytes;           /* empty pages those collapses would fill */
	uint64_t partial_bytes;        /* held by 2M folios mapped in part, which nothing maps */
	unsigned long vmas_refused;
	unsigned int young_sec;        /* min_age=: the daemon looks at it in this many seconds */
};

/* The sink of a plan: adds up what would be collapsed, and what it would add. */
static int tally(void *userdata, const struct mthpd_target *t _unused_,
		 const struct mthpd_range_scan *s, const struct mthpd_range_plan *p)
{
	struct entry *e = userdata;

	e->partial_bytes += (uint64_t)mthpd_scan_partial_unmapped(s) * MTHPD_PAGE_SIZE;
	for (unsigned int i = 0; i < p->nr_blocks; i++) {
		const struct mthpd_block *b = &p->blocks[i];

		if (b->action != MTHPD_ACTION_COLLAPSE)
			continue;
		e->collapse_bytes[b->order] += (uint64_t)MTHPD_PAGE_SIZE << b->order;
		e->fill_bytes += (uint64_t)mthpd_block_empty(s, b) * MTHPD_PAGE_SIZE;
	}
	return 0;
}

/*
 * "Anonymous:      123456 kB" and "AnonHugePages:   2048 kB" of a
 * /proc/PID/smaps_rollup text; a missing line reads 0.
 */
static uint64_t rollup_kb(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	unsigned long long v;

	if (!p || (p != text && p[-1] != '\n') || sscanf(p + strlen(key), " %llu kB", &v) != 1)
		return 0;
	return v;
}

static uint64_t total_collapse(const struct entry *e)
{
	uint64_t sum = 0;

	for (unsigned int o = MTHPD_MIN_ORDER; o <= MTHPD_PMD_ORDER; o++)
		sum += e->collapse_bytes[o];
	return sum;
}

/* "2M 1.1 GiB, 64K 3.0 MiB" or "nothing". */
static const char *sizes_line(const uint64_t bytes[MTHPD_PMD_ORDER + 1], char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned int o = MTHPD_PMD_ORDER; o >= MTHPD_MIN_ORDER && n < size; o--) {
		char h[32];

		if (!bytes[o])
			continue;
		n += (size_t)snprintf(buf + n, size - n, "%s%s %s", n ? ", " : "", mthpd_order_name(o),
				      mthpd_text_bytes(bytes[o], h, sizeof(h)));
	}
	if (!buf[0])
		(void)snprintf(buf, size, "nothing");
	return buf;
}

static void json_sizes(const uint64_t bytes[MTHPD_PMD_ORDER + 1])
{
	bool any = false;

	putchar('{');
	for (unsigned int o = MTHPD_PMD_ORDER; o >= MTHPD_MIN_ORDER; o--) {
		if (!bytes[o])
			continue;
		printf("%s\"%s\":%" PRIu64, any ? "," : "", mthpd_order_name(o), bytes[o]);
		any = true;
	}
	putchar('}');
}

static int cmp_entries(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	/* by policy in file-name order, no policy last; then unit or cgroup; then pid */
	unsigned int px = x->policy < 0 ? UINT32_MAX : (unsigned int)x->policy;
	unsigned int py = y->policy < 0 ? UINT32_MAX : (unsigned int)y->policy;
	int r;

	if (px != py)
		return px < py ? -1 : 1;
	r = strcmp(x->proc->unit[0] ? x->proc->unit : x->proc->cgroup,
		   y->proc->unit[0] ? y->proc->unit : y->proc->cgroup);
	if (r)
		return r;
	return x->proc->pid < y->proc->pid ? -1 : x->proc->pid > y->proc->pid;
}

struct filter {
	const struct preview_opts *o;
	const struct mthpd_config *c;
	int only; /* --policy: its index, else -1 */
};

/* Which cgroups' processes to read: those a policy (enabled or not) or the filters could match. */
static bool wanted(void *userdata, const char *cgroup, const char *unit)
{
	const struct filter *f = userdata;

	if (f->o->unit && (!unit[0] || fnmatch(f->o->unit, unit, 0) != 0))
		return false;
	if (f->o->cgroup && fnmatch(f->o->cgroup, cgroup, 0) != 0)
		return false;
	if (f->o->unit || f->o->cgroup)
		return true;
	return mthpd_config_may_match_any(f->c, cgroup, unit, true);
}

/* The policy --policy names: a file (previewed as if in policy.d) or a name there. */
static int pick_policy(struct mthpd_config *c, const char *arg, const struct mthpd_knobs *defaults,
		       int *ret)
{
	char err[MTHPD_ERR_SIZE];
	const char *base = strrchr(arg, '/') ? strrchr(arg, '/') + 1 : arg;
	size_t len = strlen(arg);
	int r;

	if (strchr(arg, '/') || access(arg, F_OK) == 0) {
		r = mthpd_config_add_policy(c, arg, defaults, err, sizeof(err));
		if (r < 0) {
			mthpd_output_line(stderr, "mthpd: %s", err[0] ? err : strerror(-r));
			return EXIT_USAGE;
		}
	}
	for (size_t i = 0; i < c->nr_policies; i++) {
		const char *n = c->policies[i].name;

		/* "50-redis.conf", or "50-redis" */
		if (strcmp(n, base) == 0 ||
		    (strlen(n) == len + 5 && strncmp(n, arg, len) == 0 && strcmp(n + len, ".conf") == 0)) {
			*ret = (int)i;
			return EXIT_OK;
		}
	}
	mthpd_output_line(stderr, "mthpd: --policy: no policy '%s' in %s/policy.d, and no such file",
			  arg, c->dir);
	return EXIT_USAGE;
}

/* One process, as the daemon would see it, into @e. */
static void look_at(struct mthpd_kif *kif, const struct mthpd_config *c,
		    const struct mthpd_features *features, int kpf_fd, struct entry *e)
{
	struct mthpd_target t;
	struct mthpd_pass_stats st;
	char path[64], text[4096];
	int r;

	if (e->policy < 0) {
		e->verdict = V_NO_POLICY;
	} else if (!c->policies[e->policy].enabled) {
		e->verdict = V_DISABLED;
	}
	(void)snprintf(path, sizeof(path), "%d/smaps_rollup", (int)e->proc->pid);
	if (mthpd_kif_read_proc(kif, path, text, sizeof(text)) >= 0) {
		e->anon_kb = rollup_kb(text, "Anonymous:");
		e->huge_kb = rollup_kb(text, "AnonHugePages:");
	}
	if (e->policy < 0 || !c->policies[e->policy].enabled)
		return;

	r = mthpd_target_open(kif, e->proc->pid, false, &t);
	if (r < 0) {
		e->verdict = V_GONE;
		return;
	}
	/* asks the kernel about each VMA with a pidfd, as plan --pid does (target.c) */
	r = kif->ops->pidfd_open(kif, e->proc->pid);
	t.pidfd = r >= 0 ? r : -1;
	{
		uint64_t age, min = (uint64_t)c->policies[e->policy].min_age_sec * 1000000ULL;

		if (mthpd_process_age_usec(t.start_ticks, &age) == 0 && age < min)
			e->young_sec = (unsigned int)((min - age + 999999) / 1000000);
	}
	if (t.thp_disabled) {
		e->verdict = V_THP_DISABLED;
	} else {
		const struct mthpd_knobs *k = &c->policies[e->policy].knobs;
		struct mthpd_pass_opts po = {
			.knobs = k,
			.features = features,
			.kpageflags_fd = kpf_fd,
		};

		r = mthpd_target_pass(kif, &t, &po, tally, e, &st);
		e->verdict = r < 0 ? V_GONE : V_PLANNED;
		e->vmas_refused = st.vmas_refused;
	}
	mthpd_target_close(&t);
}

/*
 * Whether a huge page could be allocated now (issue 31): the free 2 MiB
 * blocks /proc/buddyinfo shows, said when there is none, for then every
 * collapse the preview proposes would fail and the daemon would pause.
 * Nothing when it cannot be read.
 */
static void print_free_blocks(const struct mthpd_kif *kif)
{
	uint64_t n;

	if (mthpd_buddyinfo_read(kif, MTHPD_PMD_ORDER, &n) < 0)
		return;
	if (n == 0)
		puts("memory: no free 2 MiB block now (/proc/buddyinfo): a collapse would fail, and "
		     "the daemon would pause collapsing until memory is freed");
	else
		printf("memory: %" PRIu64 " free 2 MiB block%s now (/proc/buddyinfo)\n", n,
		       n == 1 ? "" : "s");
}

static void print_text(const struct mthpd_config *c, const struct entry *es, size_t n,
		       const struct mthpd_features *features, const struct mthpd_kif *kif)
{
	char feat[160], h1[32], h2[32], h3[32], sizes[200];
	char w[MTHPD_TEXT_ESCAPED_SIZE(sizeof(es->proc->cgroup))];
	char comm[MTHPD_TEXT_ESCAPED_SIZE(sizeof(es->comm))];
	int cur = -2;

	printf("kernel: %s\n", mthpd_features_describe(features, feat, sizeof(feat)));
	print_free_blocks(kif);
	/* the daemon's memory of each range (refill and failure backoff) is its own */
	puts("note: each process is planned as on the daemon's first visit: ranges a running "
	     "daemon holds back (refill_backoff, backoff) are proposed here too");
	for (size_t i = 0; i < n; i++) {
		const struct entry *e = &es[i];
		const char *who = e->proc->unit[0] ? e->proc->unit : e->proc->cgroup;

		if (e->policy != cur) {
			uint64_t anon = 0, huge = 0, fill = 0, by[MTHPD_PMD_ORDER + 1] = {0};
			size_t procs = 0;

			cur = e->policy;
			for (size_t j = i; j < n && es[j].policy == cur; j++, procs++) {
				anon += es[j].anon_kb << 10;
				huge += es[j].huge_kb << 10;
				fill += es[j].fill_bytes;
				for (unsigned int o = MTHPD_MIN_ORDER; o <= MTHPD_PMD_ORDER; o++)
					by[o] += es[j].collapse_bytes[o];
			}
			if (cur < 0) {
				printf("\nno policy: %zu process%s, never touched\n", procs,
				       procs == 1 ? "" : "es");
			} else {
				const struct mthpd_policy *p = &c->policies[cur];
				char os[64], name[MTHPD_TEXT_ESCAPED_SIZE(256)];

				printf("\npolicy %s (%s", mthpd_text_escape(p->name, name, sizeof(name)),
				       p->enabled ? "" : "enabled=no: ");
				if (p->enabled)
					printf("sizes %s, max_ptes_none %u%s", mthpd_orders_name(p->knobs.orders, os, sizeof(os)),
					       p->knobs.max_ptes_none, p->dry_run ? ", dry_run=yes" : "");
				else
					printf("never touched");
				printf("): %zu process%s, anon %s, huge %s (%.0f%%)\n", procs,
				       procs == 1 ? "" : "es", mthpd_text_bytes(anon, h1, sizeof(h1)),
				       mthpd_text_bytes(huge, h2, sizeof(h2)),
				       anon ? 100.0 * (double)huge / (double)anon : 0.0);
				if (p->enabled)
					printf("  would collapse: %s; new memory (pages filled): %s\n",
					       sizes_line(by, sizes, sizeof(sizes)),
					       mthpd_text_bytes(fill, h3, sizeof(h3)));
			}
		}
		/* the unit (as systemctl shows it), the cgroup and the comm escaped */
		printf("  %s pid %d '%s': anon %s, huge %s", mthpd_text_escape(who, w, sizeof(w)),
		       (int)e->proc->pid, mthpd_text_escape(e->comm, comm, sizeof(comm)),
		       mthpd_text_bytes(e->anon_kb << 10, h1, sizeof(h1)),
		       mthpd_text_bytes(e->huge_kb << 10, h2, sizeof(h2)));
		switch (e->verdict) {
		case V_PLANNED:
			printf("; would collapse %s, filling %s",
			       sizes_line(e->collapse_bytes, sizes, sizeof(sizes)),
			       mthpd_text_bytes(e->fill_bytes, h3, sizeof(h3)));
			if (e->young_sec)
				printf("; min_age=%u: first looked at in %u s",
				       c->policies[e->policy].min_age_sec, e->young_sec);
			if (e->vmas_refused)
				printf("; %lu VMA%s refused (MADV_NOHUGEPAGE)", e->vmas_refused,
				       e->vmas_refused == 1 ? "" : "s");
			if (e->partial_bytes)
				printf("; %s in 2M folios mapped in part, which nothing maps (%s)",
				       mthpd_text_bytes(e->partial_bytes, h3, sizeof(h3)),
				       c->policies[e->policy].split_partial ? "split_partial=yes: split"
									    : "split_partial=no: kept");
			break;
		case V_DISABLED:
			printf("; enabled=no: never touched");
			break;
		case V_THP_DISABLED:
			printf("; THP disabled for this process (PR_SET_THP_DISABLE): nothing can be "
			       "collapsed; hint: %s", mthpd_thp_disabled_hint(e->comm));
			break;
		case V_NO_POLICY:
			printf("; no policy matches: never touched");
			break;
		case V_GONE:
			printf("; exited or unreadable during the preview");
			break;
		}
		putchar('\n');
	}
	if (n == 0)
		puts("\nno process matches (no policy, or none of its cgroups has processes)");
}

static void print_json(const struct mthpd_config *c, const struct entry *es, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct entry *e = &es[i];

		printf("{\"type\":\"process\",\"policy\":");
		if (e->policy >= 0)
			mthpd_output_json_string(stdout, c->policies[e->policy].name);
		else
			printf("null");
		printf(",\"unit\":");
		mthpd_output_json_string(stdout, e->proc->unit);
		printf(",\"cgroup\":");
		mthpd_output_json_string(stdout, e->proc->cgroup);
		printf(",\"pid\":%d,\"comm\":", (int)e->proc->pid);
		mthpd_output_json_string(stdout, e->comm);
		printf(",\"status\":\"%s\",\"anon_bytes\":%" PRIu64 ",\"huge_bytes\":%" PRIu64
		       ",\"collapse_bytes\":%" PRIu64 ",\"collapse\":",
		       verdict_names[e->verdict], e->anon_kb << 10, e->huge_kb << 10, total_collapse(e));
		json_sizes(e->collapse_bytes);
		printf(",\"fill_bytes\":%" PRIu64 ",\"partial_bytes\":%" PRIu64
		       ",\"vmas_refused\":%lu,\"min_age_wait_seconds\":%u}\n",
		       e->fill_bytes, e->partial_bytes, e->vmas_refused, e->young_sec);
	}
	/* one summary per policy with processes, in file-name order */
	for (size_t i = 0; i < n;) {
		int pol = es[i].policy;
		uint64_t anon = 0, huge = 0, fill = 0, partial = 0, by[MTHPD_PMD_ORDER + 1] = {0}, all = 0;
		size_t procs = 0;

		for (; i < n && es[i].policy == pol; i++, procs++) {
			anon += es[i].anon_kb << 10;
			huge += es[i].huge_kb << 10;
			fill += es[i].fill_bytes;
			partial += es[i].partial_bytes;
			all += total_collapse(&es[i]);
			for (unsigned int o = MTHPD_MIN_ORDER; o <= MTHPD_PMD_ORDER; o++)
				by[o] += es[i].collapse_bytes[o];
		}
		printf("{\"type\":\"policy\",\"policy\":");
		if (pol >= 0)
			mthpd_output_json_string(stdout, c->policies[pol].name);
		else
			printf("null");
		printf(",\"enabled\":%s,\"processes\":%zu,\"anon_bytes\":%" PRIu64
		       ",\"huge_bytes\":%" PRIu64 ",\"collapse_bytes\":%" PRIu64 ",\"collapse\":",
		       pol >= 0 && c->policies[pol].enabled ? "true" : "false", procs, anon, huge, all);
		json_sizes(by);
		printf(",\"fill_bytes\":%" PRIu64 ",\"partial_bytes\":%" PRIu64 "}\n", fill, partial);
	}
}

/*
 * The configuration of @o->config_dir, its policies taking khugepaged's
 * values where they set none, and --policy's index into @f->only.  Returns
 * the exit status; @ret_c is set only on EXIT_OK.
 */
static int load_config(const struct preview_opts *o, struct mthpd_kif *kif, struct filter *f,
		       struct mthpd_config **ret_c)
{
	struct mthpd_knobs defaults;
	struct mthpd_config *c = NULL;
	char err[MTHPD_ERR_SIZE];
	const char *file = NULL;
	int r, status;

	/* policies take khugepaged's values where they set none, as in the daemon */
	r = mthpd_knobs_read_sysfs(kif, 7, &defaults, &file);
	if (r < 0) {
		fprintf(stderr, "mthpd: cannot read '/sys/%s': %s\n", file, strerror(-r));
		return EXIT_SYSTEM;
	}
	r = mthpd_config_load(o->config_dir, &defaults, &c, err, sizeof(err));
	if (r < 0) {
		mthpd_output_line(stderr, "mthpd: %s", err[0] ? err : strerror(-r));
		return EXIT_USAGE;
	}
	if (o->policy) {
		status = pick_policy(c, o->policy, &defaults, &f->only);
		if (status != EXIT_OK) {
			mthpd_config_free(c);
			return status;
		}
	}
	*ret_c = c;
	return EXIT_OK;
}

/*
 * What the kernel offers, /proc/kpageflags into @ret_kpf_fd and the cgroup2
 * mount point into @mount.  Returns EXIT_OK, or EXIT_SYSTEM (said why).
 */
static int open_kernel(struct mthpd_kif *kif, struct mthpd_features *features, int *ret_kpf_fd,
		       char *mount, size_t mount_size)
{
	char mountinfo[65536];
	int r;

	r = mthpd_features_probe(kif, features);
	if (r < 0 || !features->pfns_visible) {
		fprintf(stderr, "mthpd: %s\n",
			r < 0 ? strerror(-r)
			      : "/proc/self/pagemap shows no page frame numbers: mthpd needs "
				"CAP_SYS_ADMIN (run it as root)");
		return EXIT_SYSTEM;
	}
	r = kif->ops->open_proc(kif, "kpageflags", O_RDONLY);
	if (r < 0) {
		fprintf(stderr, "mthpd: cannot open /proc/kpageflags: %s (mthpd needs root)\n",
			strerror(-r));
		return EXIT_SYSTEM;
	}
	*ret_kpf_fd = r;
	r = mthpd_kif_read_proc(kif, "self/mountinfo", mountinfo, sizeof(mountinfo));
	if (r >= 0 || r == -EFBIG)
		r = mthpd_mountinfo_cgroup2(mountinfo, mount, mount_size);
	if (r < 0) {
		fprintf(stderr, "mthpd: no cgroup2 hierarchy mounted: no process can be matched\n");
		return EXIT_SYSTEM;
	}
	return EXIT_OK;
}

/*
 * Each of the @stored processes found matched as the daemon matches it, and
 * those the preview shows looked at, into @es.  Returns how many are in @es.
 */
static size_t look_at_all(struct mthpd_kif *kif, const struct mthpd_config *c,
			  const struct filter *f, const struct mthpd_features *features, int kpf_fd,
			  const struct mthpd_proc *procs, size_t stored, struct entry *es)
{
	const struct preview_opts *o = f->o;
	size_t n = 0;

	for (size_t i = 0; i < stored; i++) {
		struct entry *e = &es[n];
		const struct mthpd_policy *pol;
		char path[64];

		if (procs[i].pid == getpid())
			continue;
		*e = (struct entry){.proc = &procs[i], .policy = -1};
		(void)snprintf(path, sizeof(path), "%d/comm", (int)procs[i].pid);
		if (mthpd_kif_read_proc(kif, path, e->comm, sizeof(e->comm)) < 0)
			continue; /* gone since the walk */
		mthpd_text_chomp(e->comm);
		/* the daemon's rule: the first policy, in file-name order, whose keys all match */
		pol = mthpd_config_match(c, procs[i].cgroup, procs[i].unit[0] ? procs[i].unit : NULL,
					 e->comm);
		e->policy = pol ? (int)(pol - c->policies) : -1;
		if (f->only >= 0 && e->policy != f->only)
			continue;
		/* a process no policy matches, only when the filters asked for its service */
		if (e->policy < 0 && !o->unit && !o->cgroup)
			continue;
		{
			/* a kernel thread has no memory: not listed */
			char stat[1024];

			(void)snprintf(path, sizeof(path), "%d/stat", (int)procs[i].pid);
			if (mthpd_kif_read_proc(kif, path, stat, sizeof(stat)) >= 0 &&
			    mthpd_stat_parse_kthread(stat) > 0)
				continue;
		}
		look_at(kif, c, features, kpf_fd, e);
		n++;
	}
	return n;
}

int preview_run(const struct preview_opts *o)
{
	struct mthpd_kif kif = {.proc_fd = -1, .sys_fd = -1};
	struct mthpd_features features = {0};
	struct mthpd_config *c = NULL;
	_cleanup_free_ struct mthpd_proc *procs = NULL;
	_cleanup_free_ struct entry *es = NULL;
	_cleanup_close_ int kpf_fd = -1;
	char mount[4096];
	const char *bad = NULL;
	struct filter f = {.o = o, .only = -1};
	size_t stored = 0, n;
	int found, r, status;

	r = mthpd_kif_linux_init(NULL, NULL, &kif, &bad);
	if (r < 0) {
		fprintf(stderr, "mthpd: cannot open '%s': %s\n", bad, strerror(-r));
		return EXIT_SYSTEM;
	}
	status = load_config(o, &kif, &f, &c);
	if (status != EXIT_OK)
		goto out;
	f.c = c;
	status = open_kernel(&kif, &features, &kpf_fd, mount, sizeof(mount));
	if (status != EXIT_OK)
		goto out;

	procs = calloc(PREVIEW_MAX_PROCS, sizeof(*procs));
	es = calloc(PREVIEW_MAX_PROCS, sizeof(*es));
	if (!procs || !es) {
		fprintf(stderr, "mthpd: out of memory\n");
		status = EXIT_SYSTEM;
		goto out;
	}
	found = mthpd_discover(mount, wanted, &f, 0, 0, procs, PREVIEW_MAX_PROCS, &stored);
	if (found < 0) {
		mthpd_output_line(stderr, "mthpd: cannot walk the cgroups below '%s': %s", mount,
				  strerror(-found));
		status = EXIT_SYSTEM;
		goto out;
	}
	if ((size_t)found > stored)
		fprintf(stderr, "mthpd: %d processes, only the first %zu are shown\n", found, stored);

	n = look_at_all(&kif, c, &f, &features, kpf_fd, procs, stored, es);
	qsort(es, n, sizeof(*es), cmp_entries);
	if (o->json)
		print_json(c, es, n);
	else
		print_text(c, es, n, &features, &kif);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "mthpd: cannot write the output: %s\n", strerror(errno));
		status = EXIT_TARGET;
	}
out:
	mthpd_config_free(c);
	mthpd_kif_done(&kif);
	return status;
}
