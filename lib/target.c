/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target.h"
#include "util.h"
#include "vmas.h"

static int pid_path(char *buf, size_t size, pid_t pid, const char *file)
{
	int n = snprintf(buf, size, "%d/%s", (int)pid, file);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* /proc/PID/status: "THP_enabled:\t1\n" (Linux 5.0+); 0 after PR_SET_THP_DISABLE. */
static bool status_thp_disabled(const char *status)
{
	const char *p = strstr(status, "\nTHP_enabled:");

	if (!p)
		return false;
	p += strlen("\nTHP_enabled:");
	p += strspn(p, " \t");
	return *p == '0';
}

/* The "\nKEY:   N kB" line of a /proc text (@key with its newline and colon), in bytes. */
static int parse_kb_line(const char *text, const char *key, uint64_t *ret)
{
	const char *p = strstr(text, key);
	unsigned long long kb;
	char *end;

	if (!p)
		return -ENOENT;
	p += strlen(key);
	p += strspn(p, " \t");
	if (*p < '0' || *p > '9')
		return -EINVAL;
	errno = 0;
	kb = strtoull(p, &end, 10);
	if (errno || strncmp(end, " kB", 3) != 0 || kb > UINT64_MAX / 1024)
		return -EINVAL;
	*ret = (uint64_t)kb * 1024;
	return 0;
}

int mthpd_status_parse_rss_anon(const char *status, uint64_t *ret)
{
	return parse_kb_line(status, "\nRssAnon:", ret);
}

/*
 * /proc/PID/smaps_rollup:
 * "55d0b6a3e000-7ffd8f1f8000 ---p 00000000 00:00 0    [rollup]\nRss: ...
 *  Anonymous:         30876 kB\nKSM: ...\nAnonHugePages:     28672 kB\n..."
 */
int mthpd_rollup_parse(const char *rollup, uint64_t *ret_anon, uint64_t *ret_huge)
{
	uint64_t anon, huge;
	int r = parse_kb_line(rollup, "\nAnonymous:", &anon);

	if (r >= 0)
		r = parse_kb_line(rollup, "\nAnonHugePages:", &huge);
	if (r < 0)
		return r;
	*ret_anon = anon;
	*ret_huge = huge;
	return 0;
}

int mthpd_target_read_rollup(struct mthpd_kif *kif, const struct mthpd_target *t,
			     uint64_t *ret_anon, uint64_t *ret_huge)
{
	char path[64], rollup[4096];
	int r = pid_path(path, sizeof(path), t->pid, "smaps_rollup");

	if (r >= 0)
		r = mthpd_kif_read_proc(kif, path, rollup, sizeof(rollup));
	if (r < 0)
		return r;
	return mthpd_rollup_parse(rollup, ret_anon, ret_huge);
}

int mthpd_target_read_status(struct mthpd_kif *kif, struct mthpd_target *t)
{
	char path[64], status[4096];
	int r = pid_path(path, sizeof(path), t->pid, "status");

	if (r >= 0)
		r = mthpd_kif_read_proc(kif, path, status, sizeof(status));
	if (r == -ENOENT)
		return -ESRCH;
	if (r < 0 && r != -EFBIG)
		return r;
	t->thp_disabled = r >= 0 && status_thp_disabled(status);
	if (r < 0 || mthpd_status_parse_rss_anon(status, &t->rss_anon) < 0)
		t->rss_anon = 0;
	return 0;
}

const char *mthpd_thp_disabled_hint(const char *comm)
{
	/*
	 * The services known to turn THP off for themselves, by their comm.
	 * Redis: disable-thp (default yes) calls PR_SET_THP_DISABLE when
	 * /sys/kernel/mm/transparent_hugepage/enabled is "always".
	 */
	if (strncmp(comm, "redis-server", 12) == 0 || strncmp(comm, "redis-sentinel", 14) == 0)
		return "Redis turns THP off for itself when 'disable-thp' is yes (its default) and "
		       "THP 'enabled' is 'always': set 'disable-thp no' in redis.conf and restart it";
	if (strcmp(comm, "mariadbd") == 0 || strcmp(comm, "mysqld") == 0)
		return "MariaDB (10.11 in Debian 12) turns THP off for itself once its engines are "
		       "up (sql/mysqld.cc, MDEV-33279), whatever its settings: it cannot be "
		       "collapsed; see mthpd's README, 'Services that turn THP off'";
	return "the process, or whatever started it, called prctl(PR_SET_THP_DISABLE), which "
	       "fork and exec inherit: look for a THP setting of the service and of its launcher";
}

int mthpd_target_open(struct mthpd_kif *kif, pid_t pid, bool need_pidfd,
		      struct mthpd_target *ret)
{
	struct mthpd_target t = {.pid = pid, .pidfd = -1, .stat_fd = -1, .pagemap = {.kif = kif, .fd = -1}};
	char path[64];
	int r;

	if (pid <= 0)
		return -ESRCH;
	/*
	 * stat first: a kernel thread (no user memory) cannot even open its
	 * pagemap (ESRCH), and would pass for a process that is gone.
	 * Optional: without it (a synthetic tree) the faults are unknown.
	 */
	r = pid_path(path, sizeof(path), pid, "stat");
	if (r >= 0)
		r = kif->ops->open_proc(kif, path, O_RDONLY);
	t.stat_fd = r >= 0 ? r : -1;
	if (t.stat_fd >= 0) {
		char line[1024];
		ssize_t n = pread(t.stat_fd, line, sizeof(line) - 1, 0);

		if (n > 0 && (line[n] = '\0', mthpd_stat_parse_kthread(line) > 0)) {
			r = -EOPNOTSUPP;
			goto fail;
		}
		if (n > 0) {
			char comm[32];

			/* its age, for min_age=; unknown (0) in a tree without it */
			if (mthpd_stat_parse_start(line, comm, sizeof(comm), &t.start_ticks) < 0)
				t.start_ticks = 0;
		}
	}
	r = pid_path(path, sizeof(path), pid, "pagemap");
	if (r >= 0)
		r = kif->ops->open_proc(kif, path, O_RDONLY);
	if (r < 0)
		goto fail;
	t.pagemap.fd = r;

	r = pid_path(path, sizeof(path), pid, "comm");
	if (r >= 0)
		r = mthpd_kif_read_proc(kif, path, t.comm, sizeof(t.comm));
	if (r < 0)
		goto fail;
	t.comm[strcspn(t.comm, "\n")] = '\0';

	r = mthpd_target_read_status(kif, &t);
	if (r < 0)
		goto fail;

	if (need_pidfd) {
		r = kif->ops->pidfd_open(kif, pid);
		if (r < 0)
			goto fail;
		t.pidfd = r;
	}
	*ret = t;
	return 0;
fail:
	mthpd_target_close(&t);
	return r == -ENOENT ? -ESRCH : r;
}

void mthpd_target_forget_vmas(struct mthpd_target *t)
{
	free(t->verdicts);
	t->verdicts = NULL;
	t->nr_verdicts = 0;
}

/* Fields 3 to 12 of a /proc/PID/stat line into @v (the state letter as 0). */
static int stat_fields(const char *line, uint64_t v[10])
{
	const char *p = strrchr(line, ')');

	/* after ')': state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt */
	if (!p)
		return -EINVAL;
	p++;
	for (unsigned int i = 0; i < 10; i++) {
		char *end;

		p += strspn(p, " ");
		if (i == 0) { /* the state letter */
			if (!*p || *p == ' ')
				return -EINVAL;
			p++;
			v[i] = 0;
			continue;
		}
		if (*p < '0' || *p > '9') {
			if (*p != '-' || i > 6) /* tty_nr and tpgid may be negative */
				return -EINVAL;
		}
		errno = 0;
		v[i] = strtoull(p, &end, 10);
		if (errno || end == p || (*end != ' ' && *end != '\n' && *end))
			return -EINVAL;
		p = end;
	}
	return 0;
}

int mthpd_stat_parse_faults(const char *line, uint64_t *ret)
{
	uint64_t v[10];
	int r = stat_fields(line, v);

	if (r < 0)
		return r;
	*ret = v[7] + v[9];
	return 0;
}

/* include/linux/sched.h: PF_KTHREAD, in the flags field of /proc/PID/stat */
#define PF_KTHREAD 0x00200000ULL

int mthpd_stat_parse_kthread(const char *line)
{
	uint64_t v[10];
	int r = stat_fields(line, v);

	return r < 0 ? r : !!(v[6] & PF_KTHREAD);
}

int mthpd_stat_parse_start(const char *line, char *ret_comm, size_t comm_size,
			   uint64_t *ret_start)
{
	const char *open = strchr(line, '('), *close = strrchr(line, ')'), *p;
	uint64_t v = 0;
	size_t len;

	if (!open || !close || close < open || comm_size == 0)
		return -EINVAL;
	/* fields 3 (state) to 21 after ')', each one word; field 22 is the start time */
	p = close + 1;
	for (unsigned int field = 3; field <= 22; field++) {
		p += strspn(p, " ");
		if (!*p || *p == '\n')
			return -EINVAL;
		if (field < 22) {
			p += strcspn(p, " \n");
			continue;
		}
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (v > (UINT64_MAX - 9) / 10)
				return -EINVAL;
			v = v * 10 + (uint64_t)(*p - '0');
		}
		if (*p && *p != ' ' && *p != '\n')
			return -EINVAL;
	}
	len = (size_t)(close - open - 1);
	if (len >= comm_size)
		len = comm_size - 1;
	memcpy(ret_comm, open + 1, len);
	ret_comm[len] = '\0';
	*ret_start = v;
	return 0;
}

int mthpd_target_faults(struct mthpd_target *t, uint64_t *ret)
{
	char buf[1024];
	ssize_t n;

	if (t->stat_fd < 0)
		return -EBADF;
	/* a seq_file: reading from offset 0 again makes the line anew */
	n = pread(t->stat_fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	if (n == 0)
		return -ESRCH;
	buf[n] = '\0';
	return mthpd_stat_parse_faults(buf, ret);
}

/* The index of the first entry of t->collapsed >= @addr. */
static size_t refill_index(const struct mthpd_target *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nr_collapsed;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->collapsed[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool mthpd_refill_known(const struct mthpd_target *t, uint64_t addr)
{
	size_t i = refill_index(t, addr);

	return i < t->nr_collapsed && t->collapsed[i] == addr;
}

int mthpd_refill_note(struct mthpd_target *t, uint64_t addr)
{
	size_t i = refill_index(t, addr);

	if (i < t->nr_collapsed && t->collapsed[i] == addr)
		return 0;
	if (t->nr_collapsed >= MTHPD_REFILL_MAX)
		return -E2BIG;
	if (t->nr_collapsed == t->collapsed_size) {
		size_t size = t->collapsed_size ? 2 * t->collapsed_size : 64;
		uint64_t *c = reallocarray(t->collapsed, size, sizeof(*c));

		if (!c)
			return -ENOMEM;
		t->collapsed = c;
		t->collapsed_size = size;
	}
	memmove(t->collapsed + i + 1, t->collapsed + i, (t->nr_collapsed - i) * sizeof(*t->collapsed));
	t->collapsed[i] = addr;
	t->nr_collapsed++;
	return 0;
}

void mthpd_target_close(struct mthpd_target *t)
{
	if (t->pagemap.fd >= 0)
		(void)close(t->pagemap.fd);
	if (t->pidfd >= 0)
		(void)close(t->pidfd);
	if (t->stat_fd >= 0)
		(void)close(t->stat_fd);
	t->pagemap.fd = t->pidfd = t->stat_fd = -1;
	mthpd_target_forget_vmas(t);
	free(t->collapsed);
	t->collapsed = NULL;
	t->nr_collapsed = t->collapsed_size = 0;
}

/* The verdict an earlier pass got for exactly this VMA: 1 refused, 0 not, -1 unknown. */
static int verdict_lookup(const struct mthpd_target *t, const struct mthpd_vma *v)
{
	size_t lo = 0, hi = t->nr_verdicts;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->verdicts[mid].start < v->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->nr_verdicts && t->verdicts[lo].start == v->start && t->verdicts[lo].end == v->end)
		return t->verdicts[lo].refused;
	return -1;
}

static bool plan_has_collapse(const struct mthpd_range_plan *p)
{
	for (unsigned int i = 0; i < p->nr_blocks; i++)
		if (p->blocks[i].action == MTHPD_ACTION_COLLAPSE)
			return true;
	return false;
}

/*
 * Whether the walk reached predict_collapse() for a block below PMD order:
 * only there do existing folio orders change the answer (seed 005).  Blocks
 * that missed the threshold carry exceed_none_pte, which predict never gives.
 */
static bool plan_needs_folio_orders(const struct mthpd_range_plan *p)
{
	for (unsigned int i = 0; i < p->nr_blocks; i++)
		if (p->blocks[i].order < MTHPD_PMD_ORDER &&
		    p->blocks[i].reason != MTHPD_SCAN_EXCEED_NONE_PTE)
			return true;
	return false;
}

/*
 * Would the kernel refuse MADV_COLLAPSE on this VMA (VM_NOHUGEPAGE:
 * thp_vma_allowable_order() fails, EINVAL)?  The cheap question is the
 * kernel's own: MADV_COLLAPSE of the VMA's first 4 KiB, which holds no whole
 * PMD and so collapses nothing, answers 0, or EINVAL for a refused VMA
 * (measured: 0.3-0.5 us, about 100 us once for the LRU drain it does).
 * Without a pidfd, or where the call is not allowed, smaps VmFlags "nh"
 * tells, at the price of a walk of every page table of the process, once.
 * Returns 1 refused, 0 accepted, -ESRCH, -errno.
 */
static int vma_refused(struct mthpd_kif *kif, struct mthpd_target *t, struct mthpd_vma *v,
		       size_t i, size_t n, bool *smaps_read)
{
	if (t->pidfd >= 0 && !*smaps_read) {
		int64_t r = kif->ops->collapse(kif, t->pidfd, v[i].start, MTHPD_PAGE_SIZE, 0);

		if (r >= 0)
			return 0;
		if (r == -EINVAL)
			return 1;
		if (r == -ESRCH)
			return -ESRCH;
		/* EPERM (no CAP_SYS_NICE), ENOSYS...: ask smaps instead */
	}
	if (!*smaps_read) {
		int r = mthpd_vmas_read_nohugepage(kif, t->pid, v, n);

		if (r < 0)
			return r;
		*smaps_read = true;
	}
	return v[i].nohugepage;
}

static void count_plan(const struct mthpd_range_plan *p, bool collapsing, struct mthpd_pass_stats *st)
{
	for (unsigned int i = 0; i < p->nr_blocks; i++) {
		if (p->blocks[i].action == MTHPD_ACTION_COLLAPSE)
			st->blocks_planned++;
		if (p->blocks[i].action == MTHPD_ACTION_COLLAPSE &&
		    p->blocks[i].result == MTHPD_SCAN_SUCCEED && collapsing) {
			st->blocks_collapsed++;
			st->bytes_collapsed += MTHPD_PAGE_SIZE << p->blocks[i].order;
		}
	}
}

uint64_t mthpd_range_sig(const uint64_t entries[MTHPD_PMD_NR])
{
	uint64_t h = 0xcbf29ce484222325ULL;

	/* FNV-1a over the entries: present, swap and exclusive bits and PFNs */
	for (unsigned int i = 0; i < MTHPD_PMD_NR; i++)
		h = (h ^ entries[i]) * 0x100000001b3ULL;
	return h;
}

/* The index of the range at @addr in the backoff table, or -1. */
static int backoff_find(const struct mthpd_target *t, uint64_t addr)
{
	for (unsigned int i = 0; i < t->nr_backoff; i++)
		if (t->backoff[i].addr == addr)
			return (int)i;
	return -1;
}

bool mthpd_backoff_waiting(const struct mthpd_target *t, uint64_t addr, uint64_t sig, uint64_t now)
{
	int i = backoff_find(t, addr);

	return i >= 0 && t->backoff[i].sig == sig && now < t->backoff[i].until;
}

void mthpd_backoff_note(struct mthpd_target *t, uint64_t addr, uint64_t sig, bool lasting,
			uint64_t now)
{
	int i = backoff_find(t, addr);
	struct mthpd_backoff *b = i >= 0 ? &t->backoff[i] : NULL;
	uint64_t wait;

	if (!lasting) {
		if (b)
			*b = t->backoff[--t->nr_backoff];
		return;
	}
	if (!b && t->nr_backoff < MTHPD_BACKOFF_MAX) {
		b = &t->backoff[t->nr_backoff++];
		*b = (struct mthpd_backoff){.addr = addr};
	} else if (!b) {
		/* full: the one that would be retried first makes room */
		b = &t->backoff[0];
		for (unsigned int k = 1; k < t->nr_backoff; k++)
			if (t->backoff[k].until < b->until)
				b = &t->backoff[k];
		*b = (struct mthpd_backoff){.addr = addr};
	}
	if (b->sig != sig)
		b->fails = 0; /* other pages than last time: start again */
	b->sig = sig;
	b->fails++;
	wait = b->fails >= 8 ? MTHPD_BACKOFF_CAP_USEC : MTHPD_BACKOFF_BASE_USEC << (b->fails - 1);
	b->until = now + (wait < MTHPD_BACKOFF_CAP_USEC ? wait : MTHPD_BACKOFF_CAP_USEC);
}

/*
 * Whether a finished attempt on a range failed for a reason a retry would
 * meet again: the kernel refused the VMA (EINVAL), the memcg is full or a
 * page is not collapsible (EBUSY), pages stayed pinned or locked (EAGAIN
 * twice), a strict refusal, or a success that did nothing.  Allocation
 * failures are not: alloc_sleep_millisecs handles them for everyone.
 */
static bool plan_failed_lasting(const struct mthpd_range_plan *p)
{
	bool failed = false;

	for (unsigned int i = 0; i < p->nr_blocks; i++) {
		const struct mthpd_block *b = &p->blocks[i];

		if (b->action != MTHPD_ACTION_COLLAPSE)
			continue;
		switch (b->result) {
		case MTHPD_SCAN_SUCCEED:
			return false; /* some of it worked: its pages changed anyway */
		case MTHPD_SCAN_VMA_CHECK:
		case MTHPD_SCAN_CGROUP_CHARGE_FAIL:
		case MTHPD_SCAN_EXCEED_NONE_PTE:
		case MTHPD_RESULT_TRY_AGAIN:
		case MTHPD_RESULT_NOOP:
		case MTHPD_RESULT_ERROR:
			failed = true;
			break;
		default:
			break;
		}
	}
	return failed;
}

/* Marks the planned collapses of @p as waiting for their retry. */
static void plan_mark_backoff(struct mthpd_range_plan *p)
{
	for (unsigned int i = 0; i < p->nr_blocks; i++)
		if (p->blocks[i].action == MTHPD_ACTION_COLLAPSE)
			p->blocks[i].result = MTHPD_RESULT_BACKOFF;
}

/* The plan is one 2 MiB collapse of the whole range: it can go in a batch. */
static bool plan_is_whole_pmd(const struct mthpd_range_plan *p)
{
	return p->nr_blocks == 1 && p->blocks[0].order == MTHPD_PMD_ORDER &&
	       p->blocks[0].action == MTHPD_ACTION_COLLAPSE;
}

/*
 * Would @p collapse a block with empty pages, so that the collapse adds
 * memory (zero-filled pages: max_ptes_none at work)?  Swapped pages are
 * not new memory, they come back.
 */
static bool plan_fills(const struct mthpd_range_scan *s, const struct mthpd_range_plan *p)
{
	for (unsigned int i = 0; i < p->nr_blocks; i++)
		if (p->blocks[i].action == MTHPD_ACTION_COLLAPSE && mthpd_block_empty(s, &p->blocks[i]))
			return true;
	return false;
}

/* The blocks a strict replan of a collapsed-before range skips for empty pages. */
static void plan_mark_refill(struct mthpd_range_plan *p)
{
	for (unsigned int i = 0; i < p->nr_blocks; i++)
		if (p->blocks[i].action != MTHPD_ACTION_COLLAPSE &&
		    p->blocks[i].reason == MTHPD_SCAN_EXCEED_NONE_PTE)
			p->blocks[i].reason = p->blocks[i].result = MTHPD_RESULT_REFILL_BACKOFF;
}

/* A range of a batch, waiting for its process_madvise() call. */
struct pending {
	struct mthpd_range_scan scan;
	struct mthpd_range_plan plan;
	struct mthpd_knobs knobs; /* its own: strict for a range collapsed before */
	uint64_t sig; /* mthpd_range_sig() of its entries, for the backoff */
};

/*
 * Collapses the @n ranges waiting in @b with as few process_madvise() calls
 * as the kernel allows, then plans each again with the result (the walk's
 * fallback runs where its 2M failed) and passes it to the sink, in order.
 * Every range goes through the sink, also after one says stop: they are
 * done.  Returns 0 or the sink's first -errno.
 */
static int flush(struct mthpd_act *act, const struct mthpd_pass_opts *o, struct pending *b,
		 size_t n, struct mthpd_target *t, mthpd_range_sink sink, void *userdata,
		 struct mthpd_pass_stats *st)
{
	uint64_t addrs[MTHPD_COLLAPSE_BATCH] = {0};
	uint8_t res[MTHPD_COLLAPSE_BATCH] = {0};
	int first = 0;

	for (size_t i = 0; i < n; i++)
		addrs[i] = b[i].scan.addr;
	st->batches++;
	mthpd_act_collapse_pmds(act, addrs, n, res);
	for (size_t i = 0; i < n; i++) {
		int r;

		mthpd_act_after_batch(act, &b[i].scan, &b[i].knobs, res[i], &b[i].plan);
		if (b[i].plan.nr_collapsed)
			(void)mthpd_refill_note(t, b[i].scan.addr);
		if (o->now_usec)
			mthpd_backoff_note(t, b[i].scan.addr, b[i].sig, plan_failed_lasting(&b[i].plan),
					   o->now_usec);
		count_plan(&b[i].plan, true, st);
		r = sink(userdata, t, &b[i].scan, &b[i].plan);
		if (r < 0 && first == 0)
			first = r;
	}
	return first;
}

/*
 * The range maps a 2M folio in part (@scan): split it, so that the kernel
 * frees the pages of it that nothing maps, and scan the range again as it
 * is now.  The range counts as collapsed before: the pages the allocator
 * gave back are not filled again (with max_ptes_none 511 the next plan
 * would otherwise collapse them back into a folio, and the allocator's
 * next purge would leave it mapped in part again).  Returns 0 or -errno.
 */
static int split_partial(struct mthpd_act *act, struct mthpd_scan_ctx *sc, struct mthpd_target *t,
			 uint64_t entries[MTHPD_PMD_NR], struct mthpd_range_scan *scan,
			 struct mthpd_pass_stats *st)
{
	const unsigned int held = mthpd_scan_partial_unmapped(scan);
	const uint64_t addr = scan->addr;
	enum mthpd_scan_result res = mthpd_act_split(act, scan);
	int r;

	if (res == MTHPD_SCAN_SUCCEED) {
		st->splits++;
		st->released_pages += held;
		(void)mthpd_refill_note(t, addr);
		r = mthpd_pagemap_read(&t->pagemap, addr, MTHPD_PMD_NR, entries);
		if (r < 0)
			return r;
		r = mthpd_scan_range(sc, addr, entries, scan);
		if (r < 0)
			return r;
		scan->released = (uint16_t)held;
	}
	scan->split_tried = true;
	scan->split_result = (uint8_t)res;
	return 0;
}

/*
 * Plans a scanned range with @knobs, reading the kpageflags of its occupied
 * pages only where the walk tried a block below 2M (@below_pmd: the knobs
 * allow such sizes).  Returns 0 or -errno.
 */
static int plan_range(struct mthpd_scan_ctx *sc, const uint64_t entries[MTHPD_PMD_NR],
		      const struct mthpd_knobs *knobs, bool below_pmd, struct mthpd_range_scan *scan,
		      struct mthpd_range_plan *plan)
{
	int r;

	mthpd_plan_range(scan, knobs, NULL, NULL, plan);
	if (below_pmd && !scan->folio_orders_known && plan_needs_folio_orders(plan)) {
		r = mthpd_scan_read_folio_orders(sc, entries, scan);
		if (r < 0)
			return r;
		mthpd_plan_range(scan, knobs, NULL, NULL, plan);
	}
	return 0;
}

int mthpd_target_pass(struct mthpd_kif *kif, struct mthpd_target *t,
		      const struct mthpd_pass_opts *o, mthpd_range_sink sink, void *userdata,
		      struct mthpd_pass_stats *stats)
{
	_cleanup_free_ struct mthpd_vma *vmas = NULL;
	_cleanup_free_ struct mthpd_vma_verdict *verdicts = NULL;
	_cleanup_free_ struct mthpd_range_plan *plan = NULL;
	_cleanup_free_ struct mthpd_range_scan *scan = NULL;
	_cleanup_free_ struct pending *batch = NULL;
	size_t nbatch = 0, batch_max = o->batch ? o->batch : MTHPD_COLLAPSE_BATCH;
	struct mthpd_pass_stats st = {0};
	struct mthpd_scan_ctx sc;
	struct mthpd_act act = {
		.kif = kif,
		.pidfd = t->pidfd,
		.pagemap = &t->pagemap,
		.kpageflags_fd = o->kpageflags_fd,
		.subpmd_orders = o->features->subpmd_orders, /* 0 unless PATCHED */
		.subpmd_flags = o->subpmd_flags,
		.pmd_flags = o->features->subpmd == MTHPD_SUBPMD_PATCHED ? o->subpmd_flags : 0,
		.budget = o->budget_bytes ? o->budget_bytes : UINT64_MAX,
	};
	bool below_pmd = o->knobs->orders & ((1U << MTHPD_PMD_ORDER) - 1);
	uint64_t entries[MTHPD_PMD_NR], sig;
	const struct mthpd_knobs *knobs;
	struct mthpd_knobs strict;
	bool waiting;
	size_t nvmas = 0, nverdicts = 0;
	int r = 0;

	mthpd_scan_ctx_init(&sc, o->kpageflags_fd, false);
	if (below_pmd)
		sc.min_folio_run = 1U << (__builtin_ctz(o->knobs->orders) - 1);
	if (t->thp_disabled)
		goto out;

	plan = malloc(sizeof(*plan));
	scan = malloc(sizeof(*scan));
	if (!plan || !scan)
		return -ENOMEM;
	if (batch_max > MTHPD_COLLAPSE_BATCH)
		batch_max = MTHPD_COLLAPSE_BATCH;
	if (o->collapse && batch_max > 1 && kif->ops->collapse_batch) {
		batch = malloc(batch_max * sizeof(*batch));
		if (!batch)
			return -ENOMEM;
	}

	r = mthpd_vmas_read(kif, t->pid, o->features->procmap_query, &vmas, &nvmas);
	if (r < 0)
		goto out;
	st.vmas = nvmas;
	t->pagemap.use_scan = o->features->pagemap_scan;
	verdicts = calloc(nvmas ? nvmas : 1, sizeof(*verdicts));
	if (!verdicts) {
		r = -ENOMEM;
		goto out;
	}

	for (size_t v = 0; v < nvmas; v++) {
		uint64_t cursor = vmas[v].start, addr;
		int known = verdict_lookup(t, &vmas[v]);
		bool checked = known >= 0;

		if (known >= 0)
			verdicts[nverdicts++] = (struct mthpd_vma_verdict){vmas[v].start, vmas[v].end, known};
		if (known > 0) {
			st.vmas_refused++;
			continue;
		}
		if (vmas[v].end <= o->start)
			continue;
		if (cursor < o->start)
			cursor = o->start & ~(MTHPD_PMD_SIZE - 1);
		mthpd_pagemap_reset(&t->pagemap);
		for (;;) {
			r = mthpd_pagemap_next_range(&t->pagemap, &cursor, vmas[v].end, &addr, entries);
			if (r < 0)
				goto out;
			if (r == 0)
				break;
			if (!checked) {
				/* Only VMAs with memory in them are asked about. */
				r = vma_refused(kif, t, vmas, v, nvmas, &st.smaps_read);
				if (r < 0)
					goto out;
				checked = true;
				verdicts[nverdicts++] =
					(struct mthpd_vma_verdict){vmas[v].start, vmas[v].end, r > 0};
				if (r > 0) {
					st.vmas_refused++;
					break;
				}
			}
			st.ranges++;
			st.ranges_huge += t->pagemap.last_huge != MTHPD_HUGE_NO;
			if (t->pagemap.last_huge != MTHPD_HUGE_NO) {
				/* PAGEMAP_SCAN said PAGE_IS_HUGE: nothing was read */
				mthpd_scan_pmd_mapped(addr, t->pagemap.last_huge == MTHPD_HUGE_ZERO, scan);
			} else {
				r = mthpd_scan_range(&sc, addr, entries, scan);
				if (r < 0)
					goto out;
				if (scan->partial_pfn) {
					st.partial_folios++;
					st.partial_pages += mthpd_scan_partial_unmapped(scan);
				}
				if (scan->partial_pfn && o->collapse && o->split_partial) {
					r = split_partial(&act, &sc, t, entries, scan, &st);
					if (r < 0)
						goto out;
				}
			}

			knobs = o->knobs;
			r = plan_range(&sc, entries, knobs, below_pmd, scan, plan);
			if (r < 0)
				goto out;
			if (o->collapse && !o->no_refill_backoff && knobs->max_ptes_none &&
			    mthpd_refill_known(t, addr) &&
			    plan_fills(scan, plan)) {
				/*
				 * Collapsed by mthpd before, emptied since (the allocator
				 * gave pages back, or the kernel split the folio): filling
				 * it again would undo what the application did, pass after
				 * pass.  Only what is full again is collapsed.
				 */
				strict = *o->knobs;
				strict.max_ptes_none = 0;
				knobs = &strict;
				r = plan_range(&sc, entries, knobs, below_pmd, scan, plan);
				if (r < 0)
					goto out;
				plan_mark_refill(plan);
				st.refill_backoff++;
			}
			sig = 0;
			waiting = false;
			if (o->collapse && o->now_usec && plan_has_collapse(plan)) {
				sig = mthpd_range_sig(entries);
				waiting = mthpd_backoff_waiting(t, addr, sig, o->now_usec);
			}
			if (batch && !waiting && plan_is_whole_pmd(plan)) {
				/* several ranges per process_madvise(): collapsed at the flush */
				batch[nbatch].scan = *scan;
				batch[nbatch].knobs = *knobs;
				batch[nbatch].sig = sig;
				batch[nbatch++].plan = *plan;
				if (nbatch < batch_max)
					continue;
				r = flush(&act, o, batch, nbatch, t, sink, userdata, &st);
				nbatch = 0;
			} else {
				if (nbatch) {
					r = flush(&act, o, batch, nbatch, t, sink, userdata, &st);
					nbatch = 0;
					if (r == -EDQUOT)
						st.resume = addr; /* this range was not looked at */
					if (r < 0)
						goto out;
				}
				if (waiting) {
					plan_mark_backoff(plan); /* failed before, nothing changed */
				} else if (o->collapse && plan_has_collapse(plan)) {
					mthpd_act_range(&act, scan, knobs, plan);
					if (plan->nr_collapsed)
						(void)mthpd_refill_note(t, addr);
					if (o->now_usec)
						mthpd_backoff_note(t, addr, sig, plan_failed_lasting(plan),
								   o->now_usec);
				}
				count_plan(plan, o->collapse, &st);
				r = sink(userdata, t, scan, plan);
			}
			if (r == -EDQUOT)
				st.resume = cursor;
			if (r < 0)
				goto out;
			if (act.exited) {
				r = -ESRCH;
				goto out;
			}
		}
	}
	r = 0;
	if (nbatch) {
		r = flush(&act, o, batch, nbatch, t, sink, userdata, &st);
		if (r == -EDQUOT)
			st.resume = 0; /* spent, but on the last ranges: the visit is complete */
		if (r == 0 && act.exited)
			r = -ESRCH;
	}
out:
	if (verdicts && (r == 0 || r == -EDQUOT)) {
		/* the VMAs asked about and those known before: sorted, as vmas[] */
		free(t->verdicts);
		t->verdicts = TAKE_PTR(verdicts);
		t->nr_verdicts = nverdicts;
	}
	st.noops = act.nr_noop;
	st.madvise_calls = act.nr_calls;
	st.kpageflags_pfns = sc.nr_kpageflags_pfns;
	st.pagemap_reads = t->pagemap.nr_range_reads;
	st.scan_ioctls = t->pagemap.nr_scan_ioctls;
	if (stats)
		*stats = st;
	return r;
}
