/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target.h"
#include "text.h"
#include "util.h"
#include "vmas.h"

int mthpd_target_read_rollup(struct mthpd_kif *kif, const struct mthpd_target *t,
			     uint64_t *ret_anon, uint64_t *ret_huge)
{
	char path[64], rollup[4096];
	int r = mthpd_procfs_pid_path(path, sizeof(path), t->pid, "smaps_rollup");

	if (r >= 0)
		r = mthpd_kif_read_proc(kif, path, rollup, sizeof(rollup));
	if (r < 0)
		return r;
	return mthpd_rollup_parse(rollup, ret_anon, ret_huge);
}

int mthpd_target_read_status(struct mthpd_kif *kif, struct mthpd_target *t)
{
	char status[4096];
	int r = mthpd_procfs_read_status(kif, t->pid, status, sizeof(status));

	if (r < 0 && r != -EFBIG)
		return r;
	t->thp_disabled = r >= 0 && mthpd_status_parse_thp_disabled(status);
	if (r < 0 || mthpd_status_parse_rss_anon(status, &t->rss_anon) < 0)
		t->rss_anon = 0;
	return 0;
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
	r = mthpd_procfs_pid_path(path, sizeof(path), pid, "stat");
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
	r = mthpd_procfs_pid_path(path, sizeof(path), pid, "pagemap");
	if (r >= 0)
		r = kif->ops->open_proc(kif, path, O_RDONLY);
	if (r < 0)
		goto fail;
	t.pagemap.fd = r;

	r = mthpd_procfs_pid_path(path, sizeof(path), pid, "comm");
	if (r >= 0)
		r = mthpd_kif_read_proc(kif, path, t.comm, sizeof(t.comm));
	if (r < 0)
		goto fail;
	mthpd_text_chomp(t.comm);

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
	mthpd_backoff_free(&t->backoff);
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

static void count_plan(const struct mthpd_range_plan *p, bool collapsing, struct mthpd_pass_stats *st)
{
	for (unsigned int i = 0; i < p->nr_blocks; i++) {
		if (p->blocks[i].result == MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL && !st->alloc_failed_at)
			st->alloc_failed_at = p->addr;
		if (p->blocks[i].action == MTHPD_ACTION_COLLAPSE)
			st->blocks_planned++;
		if (p->blocks[i].action == MTHPD_ACTION_COLLAPSE &&
		    p->blocks[i].result == MTHPD_SCAN_SUCCEED && collapsing) {
			st->blocks_collapsed++;
			st->bytes_collapsed += MTHPD_PAGE_SIZE << p->blocks[i].order;
		}
	}
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
			(void)mthpd_refill_note(&t->backoff, b[i].scan.addr);
		if (o->now_usec)
			mthpd_backoff_note(&t->backoff, b[i].scan.addr, b[i].sig, plan_failed_lasting(&b[i].plan),
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
		(void)mthpd_refill_note(&t->backoff, addr);
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

/* One mthpd_target_pass(): what its steps share. */
struct pass {
	struct mthpd_kif *kif;
	struct mthpd_target *t;
	const struct mthpd_pass_opts *o;
	mthpd_range_sink sink;
	void *userdata;
	struct mthpd_act act;
	struct mthpd_scan_ctx sc;
	struct mthpd_pass_stats st;
	bool below_pmd;                /* the knobs allow sizes below 2M */
	uint64_t entries[MTHPD_PMD_NR]; /* the range's pagemap entries */
	struct mthpd_range_scan *scan; /* the range's scan and plan */
	struct mthpd_range_plan *plan;
	struct mthpd_knobs strict;     /* the knobs of a range collapsed before */
	struct pending *batch;         /* whole 2M ranges waiting for one call */
	size_t nbatch, batch_max;
	struct mthpd_scan_hit *queue;  /* lent to t->pagemap for the pass (pagemap.h) */
	struct mthpd_vma_verdict *verdicts; /* this pass's, handed to the target */
	size_t nverdicts;
};

/*
 * Scans the populated range at @addr, whose entries are in p->entries;
 * splits a 2M folio it maps in part where asked.  Returns 0 or -errno.
 */
static int scan_populated(struct pass *p, uint64_t addr)
{
	struct mthpd_target *t = p->t;
	int r;

	p->st.ranges++;
	p->st.ranges_huge += t->pagemap.last_huge != MTHPD_HUGE_NO;
	if (t->pagemap.last_huge != MTHPD_HUGE_NO) {
		/* PAGEMAP_SCAN said PAGE_IS_HUGE: nothing was read */
		mthpd_scan_pmd_mapped(addr, t->pagemap.last_huge == MTHPD_HUGE_ZERO, p->scan);
		return 0;
	}
	r = mthpd_scan_range(&p->sc, addr, p->entries, p->scan);
	if (r < 0)
		return r;
	if (p->scan->partial_pfn) {
		p->st.partial_folios++;
		p->st.partial_pages += mthpd_scan_partial_unmapped(p->scan);
	}
	if (p->scan->partial_pfn && p->o->collapse && p->o->split_partial)
		return split_partial(&p->act, &p->sc, t, p->entries, p->scan, &p->st);
	return 0;
}

/*
 * Plans the range just scanned into p->plan; *@ret_knobs: the knobs it was
 * planned with (strict for a range mthpd collapsed before and that emptied
 * since).  Returns 0 or -errno.
 */
static int plan_scanned(struct pass *p, uint64_t addr, const struct mthpd_knobs **ret_knobs)
{
	const struct mthpd_pass_opts *o = p->o;
	const struct mthpd_knobs *knobs = o->knobs;
	int r;

	r = plan_range(&p->sc, p->entries, knobs, p->below_pmd, p->scan, p->plan);
	if (r < 0)
		return r;
	if (o->collapse && !o->no_refill_backoff && knobs->max_ptes_none &&
	    mthpd_refill_known(&p->t->backoff, addr) && plan_fills(p->scan, p->plan)) {
		/*
		 * Collapsed by mthpd before, emptied since (the allocator
		 * gave pages back, or the kernel split the folio): filling
		 * it again would undo what the application did, pass after
		 * pass.  Only what is full again is collapsed.
		 */
		p->strict = *o->knobs;
		p->strict.max_ptes_none = 0;
		knobs = &p->strict;
		r = plan_range(&p->sc, p->entries, knobs, p->below_pmd, p->scan, p->plan);
		if (r < 0)
			return r;
		plan_mark_refill(p->plan);
		p->st.refill_backoff++;
	}
	*ret_knobs = knobs;
	return 0;
}

/*
 * Collapses the planned range at @addr (a whole 2M one joins the batch,
 * flushed when full) unless it is waiting in the backoff, and hands it to
 * the sink.  @cursor: where the walk goes on, the resume point if the
 * budget is spent here.  Returns 1 if the range waits in the batch, 0, or
 * -errno (-EDQUOT: the budget is spent, p->st.resume set).
 */
static int act_planned(struct pass *p, uint64_t addr, uint64_t cursor,
		       const struct mthpd_knobs *knobs)
{
	const struct mthpd_pass_opts *o = p->o;
	struct mthpd_target *t = p->t;
	struct mthpd_range_plan *plan = p->plan;
	uint64_t sig = 0;
	bool waiting = false;
	int r;

	if (o->collapse && o->now_usec && plan_has_collapse(plan)) {
		sig = mthpd_range_sig(p->entries);
		waiting = mthpd_backoff_waiting(&t->backoff, addr, sig, o->now_usec);
	}
	if (p->batch && !waiting && plan_is_whole_pmd(plan)) {
		/* several ranges per process_madvise(): collapsed at the flush */
		p->batch[p->nbatch].scan = *p->scan;
		p->batch[p->nbatch].knobs = *knobs;
		p->batch[p->nbatch].sig = sig;
		p->batch[p->nbatch++].plan = *plan;
		if (p->nbatch < p->batch_max)
			return 1;
		r = flush(&p->act, o, p->batch, p->nbatch, t, p->sink, p->userdata, &p->st);
		p->nbatch = 0;
	} else {
		if (p->nbatch) {
			r = flush(&p->act, o, p->batch, p->nbatch, t, p->sink, p->userdata, &p->st);
			p->nbatch = 0;
			if (r == -EDQUOT)
				p->st.resume = addr; /* this range was not looked at */
			if (r < 0)
				return r;
		}
		if (waiting) {
			plan_mark_backoff(plan); /* failed before, nothing changed */
		} else if (o->collapse && plan_has_collapse(plan)) {
			mthpd_act_range(&p->act, p->scan, knobs, plan);
			if (plan->nr_collapsed)
				(void)mthpd_refill_note(&t->backoff, addr);
			if (o->now_usec)
				mthpd_backoff_note(&t->backoff, addr, sig, plan_failed_lasting(plan),
						   o->now_usec);
		}
		count_plan(plan, o->collapse, &p->st);
		r = p->sink(p->userdata, t, p->scan, plan);
	}
	if (r == 0 && o->probe && p->act.nr_calls)
		r = -EDQUOT; /* a probe asks for one range, no more */
	if (r == -EDQUOT)
		p->st.resume = cursor;
	return r;
}

/*
 * Every populated range of VMA @v from o->start on: asks once whether the
 * kernel refuses the VMA (the first time it has memory), then scan, plan,
 * act.  Returns 0, -ESRCH when the process exited, or -errno.
 */
static int walk_vma(struct pass *p, struct mthpd_vma *vmas, size_t v, size_t nvmas)
{
	struct mthpd_target *t = p->t;
	uint64_t cursor = vmas[v].start, addr;
	int known = mthpd_vma_verdict_lookup(t->verdicts, t->nr_verdicts, &vmas[v]);
	bool checked = known >= 0;
	const struct mthpd_knobs *knobs;
	int r;

	if (known >= 0)
		p->verdicts[p->nverdicts++] = (struct mthpd_vma_verdict){vmas[v].start, vmas[v].end, known};
	if (known > 0) {
		p->st.vmas_refused++;
		return 0;
	}
	if (vmas[v].end <= p->o->start)
		return 0;
	if (cursor < p->o->start)
		cursor = p->o->start & ~(MTHPD_PMD_SIZE - 1);
	mthpd_pagemap_reset(&t->pagemap);
	for (;;) {
		r = mthpd_pagemap_next_range(&t->pagemap, &cursor, vmas[v].end, &addr, p->entries);
		if (r <= 0)
			return r;
		if (!checked) {
			/* Only VMAs with memory in them are asked about. */
			r = mthpd_vma_refused(p->kif, t->pidfd, t->pid, vmas, v, nvmas, &p->st.smaps_read);
			if (r < 0)
				return r;
			checked = true;
			p->verdicts[p->nverdicts++] =
				(struct mthpd_vma_verdict){vmas[v].start, vmas[v].end, r > 0};
			if (r > 0) {
				p->st.vmas_refused++;
				return 0;
			}
		}
		r = scan_populated(p, addr);
		if (r >= 0)
			r = plan_scanned(p, addr, &knobs);
		if (r >= 0)
			r = act_planned(p, addr, cursor, knobs);
		if ((r == 0 || r == -EDQUOT) && p->act.alloc_held) {
			/*
			 * A huge page could not be allocated: the host has no
			 * free block of that size, and every further try
			 * compacts again for nothing, at everyone's cost.  The
			 * visit ends here; the caller holds the others too.
			 * The next visit begins with the range that failed.
			 */
			p->st.resume = p->st.alloc_failed_at ? p->st.alloc_failed_at : cursor;
			return -ENOSPC;
		}
		if (r > 0)
			continue;
		if (r < 0)
			return r;
		if (p->act.exited)
			return -ESRCH;
	}
}

/* Buffers for one range and the batch.  Returns 0 or -ENOMEM. */
static int pass_alloc(struct pass *p)
{
	const struct mthpd_pass_opts *o = p->o;

	p->plan = malloc(sizeof(*p->plan));
	p->scan = malloc(sizeof(*p->scan));
	p->queue = malloc(MTHPD_SCAN_QUEUE * sizeof(*p->queue));
	if (!p->plan || !p->scan || !p->queue)
		return -ENOMEM;
	p->batch_max = o->probe ? 1 : o->batch ? o->batch : MTHPD_COLLAPSE_BATCH;
	if (p->batch_max > MTHPD_COLLAPSE_BATCH)
		p->batch_max = MTHPD_COLLAPSE_BATCH;
	if (o->collapse && p->batch_max > 1 && p->kif->ops->collapse_batch) {
		p->batch = malloc(p->batch_max * sizeof(*p->batch));
		if (!p->batch)
			return -ENOMEM;
	}
	return 0;
}

static void pass_free(struct pass *p)
{
	free(p->plan);
	free(p->scan);
	free(p->queue);
	free(p->batch);
	free(p->verdicts);
}

int mthpd_target_pass(struct mthpd_kif *kif, struct mthpd_target *t,
		      const struct mthpd_pass_opts *o, mthpd_range_sink sink, void *userdata,
		      struct mthpd_pass_stats *stats)
{
	_cleanup_free_ struct mthpd_vma *vmas = NULL;
	struct pass p = {
		.kif = kif,
		.t = t,
		.o = o,
		.sink = sink,
		.userdata = userdata,
		.act = {
			.kif = kif,
			.pidfd = t->pidfd,
			.pagemap = &t->pagemap,
			.kpageflags_fd = o->kpageflags_fd,
			.subpmd_orders = o->features->subpmd_orders, /* 0 unless PATCHED */
			.subpmd_flags = o->subpmd_flags,
			.pmd_flags = o->features->subpmd == MTHPD_SUBPMD_PATCHED ? o->subpmd_flags : 0,
			.budget = o->budget_bytes ? o->budget_bytes : UINT64_MAX,
		},
		.below_pmd = o->knobs->orders & ((1U << MTHPD_PMD_ORDER) - 1),
	};
	size_t nvmas = 0;
	int r = 0;

	mthpd_scan_ctx_init(&p.sc, o->kpageflags_fd, false);
	if (p.below_pmd)
		p.sc.min_folio_run = 1U << (__builtin_ctz(o->knobs->orders) - 1);
	if (t->thp_disabled)
		goto out;
	r = pass_alloc(&p);
	if (r < 0) {
		pass_free(&p);
		return r;
	}

	r = mthpd_vmas_read(kif, t->pid, o->features->procmap_query, &vmas, &nvmas);
	if (r < 0)
		goto out;
	p.st.vmas = nvmas;
	t->pagemap.use_scan = o->features->pagemap_scan;
	t->pagemap.queue = p.queue; /* lent for this pass */
	p.verdicts = calloc(nvmas ? nvmas : 1, sizeof(*p.verdicts));
	if (!p.verdicts) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t v = 0; v < nvmas; v++) {
		r = walk_vma(&p, vmas, v, nvmas);
		if (r < 0)
			goto out;
	}
	r = 0;
	if (p.nbatch) {
		r = flush(&p.act, o, p.batch, p.nbatch, t, sink, userdata, &p.st);
		if (r == -EDQUOT)
			p.st.resume = 0; /* spent, but on the last ranges: the visit is complete */
		if (r == 0 && p.act.exited)
			r = -ESRCH;
		if ((r == 0 || r == -EDQUOT) && p.act.alloc_held) {
			p.st.resume = p.st.alloc_failed_at;
			r = -ENOSPC;
		}
	}
out:
	t->pagemap.queue = NULL;
	if (p.verdicts && (r == 0 || r == -EDQUOT || r == -ENOSPC)) {
		/* the VMAs asked about and those known before: sorted, as vmas[] */
		free(t->verdicts);
		t->verdicts = TAKE_PTR(p.verdicts);
		t->nr_verdicts = p.nverdicts;
	}
	p.st.noops = p.act.nr_noop;
	p.st.madvise_calls = p.act.nr_calls;
	p.st.kpageflags_pfns = p.sc.nr_kpageflags_pfns;
	p.st.pagemap_reads = t->pagemap.nr_range_reads;
	p.st.scan_ioctls = t->pagemap.nr_scan_ioctls;
	if (stats)
		*stats = p.st;
	pass_free(&p);
	return r;
}
