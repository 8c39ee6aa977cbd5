/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "kpageflags.h"
#include "util.h"

enum mthpd_scan_result mthpd_act_errno_result(int err)
{
	switch (err) {
	case 0:
		return MTHPD_SCAN_SUCCEED;
	case ENOMEM: /* SCAN_ALLOC_HUGE_PAGE_FAIL (or an unmapped hole; below
		      * PMD with contrib/kernel v5, no longer an untouched block) */
		return MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL;
	case EBUSY: /* SCAN_CGROUP_CHARGE_FAIL; SCAN_EXCEED_NONE_PTE at PMD order
		     * without the order flag; below PMD also a swap entry, a
		     * shared page or part of a larger folio (contrib/kernel) */
		return MTHPD_SCAN_CGROUP_CHARGE_FAIL;
	case ENODATA: /* PMADV_COLLAPSE_STRICT: an empty or zero page in the
		       * block; with contrib/kernel v5 also a block with no page
		       * of its own, with or without STRICT */
		return MTHPD_SCAN_EXCEED_NONE_PTE;
	case EOPNOTSUPP: /* the size was disabled in sysfs since the probe */
		return MTHPD_RESULT_UNSUPPORTED;
	case EAGAIN: /* SCAN_PAGE_COUNT/LOCK/LRU, DEL_PAGE_LRU: temporary; with
		      * contrib/kernel also a PMD or (v5) a PTE under migration,
		      * a page table freed, or a block that changed between the
		      * kernel's scan and its collapse */
		return MTHPD_RESULT_TRY_AGAIN;
	case EINVAL: /* everything "intrinsic to the range", VMA checks first */
		return MTHPD_SCAN_VMA_CHECK;
	case ESRCH:
		return MTHPD_RESULT_PROCESS_EXITED;
	case EPERM:
	case EACCES:
		return MTHPD_RESULT_PERMISSION_DENIED;
	default:
		return MTHPD_RESULT_ERROR;
	}
}

int mthpd_act_parse_vmstat(const char *buf, const char *name, uint64_t *ret)
{
	size_t len = strlen(name);

	for (const char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		char *end;
		uint64_t v;

		if (strncmp(p, name, len) != 0 || p[len] != ' ')
			continue;
		errno = 0;
		v = strtoull(p + len + 1, &end, 10);
		if (errno || end == p + len + 1 || (*end != '\n' && *end))
			return -EINVAL;
		*ret = v;
		return 0;
	}
	return -ENOENT;
}

int mthpd_act_read_alloc_failed(const struct mthpd_kif *kif, unsigned int order, uint64_t *ret)
{
	char buf[16384], path[96];
	int r;

	if (order == MTHPD_PMD_ORDER) {
		r = mthpd_kif_read_proc(kif, "vmstat", buf, sizeof(buf));
		return r < 0 ? r : mthpd_act_parse_vmstat(buf, "thp_collapse_alloc_failed", ret);
	}
	(void)snprintf(path, sizeof(path),
		       "kernel/mm/transparent_hugepage/hugepages-%llukB/stats/collapse_alloc_failed",
		       4ULL << order);
	r = mthpd_kif_read_sys(kif, path, buf, sizeof(buf));
	if (r < 0)
		return r;
	{
		char *end;
		uint64_t v;

		errno = 0;
		v = strtoull(buf, &end, 10);
		if (errno || end == buf || (*end != '\n' && *end))
			return -EINVAL;
		*ret = v;
	}
	return 0;
}

/* Before a call of @order: the allocation failures so far, once a pass. */
/* A call of @n ranges that began at @t0 has returned: kif->held_max_usec. */
static void note_held(struct mthpd_kif *kif, uint64_t t0, size_t n)
{
	uint64_t per = n ? (now_usec() - t0) / n : 0;

	if (per > kif->held_max_usec)
		kif->held_max_usec = per;
}

static void note_alloc_failed(struct mthpd_act *a, unsigned int order)
{
	if (a->alloc_failed_known & (1U << order))
		return;
	if (mthpd_act_read_alloc_failed(a->kif, order, &a->alloc_failed[order]) == 0)
		a->alloc_failed_known |= 1U << order;
}

/*
 * Whether the kernel's count of failed allocations of @order moved since
 * the last look: 1 if so (the new count kept), 0 if not, -1 when it is not
 * known (an old kernel, below 2M before 7.2, or not read before the call).
 */
static int alloc_counted(struct mthpd_act *a, unsigned int order)
{
	uint64_t now;

	if (!(a->alloc_failed_known & (1U << order)) ||
	    mthpd_act_read_alloc_failed(a->kif, order, &now) < 0)
		return -1;
	if (now == a->alloc_failed[order])
		return 0;
	a->alloc_failed[order] = now;
	return 1;
}

/*
 * A folio of @order could not be allocated: nothing of that size or larger
 * is attempted again in this pass (struct mthpd_act, alloc_held).
 */
static void hold_from(struct mthpd_act *a, unsigned int order)
{
	a->alloc_held |= ((1U << (MTHPD_PMD_ORDER + 1)) - 1) & ~((1U << order) - 1);
}

/*
 * ENOMEM from MADV_COLLAPSE is a folio that could not be allocated
 * (SCAN_ALLOC_HUGE_PAGE_FAIL) or a range with a hole (madvise's walk: "not
 * mapped"), as when an allocator unmapped it after the scan.  The kernel
 * counts only the first: if its count did not move since before the call,
 * the range was not mapped, and the daemon need not stop collapsing
 * everywhere for alloc_sleep_millisecs.  Without the count (an old kernel,
 * below 2M before 7.2), it is taken for an allocation failure, as before.
 */
static enum mthpd_scan_result enomem_result(struct mthpd_act *a, unsigned int order)
{
	if (alloc_counted(a, order) == 0)
		return MTHPD_RESULT_UNMAPPED;
	hold_from(a, order);
	return MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL;
}

int mthpd_act_verify(struct mthpd_act *a, uint64_t addr, unsigned int order)
{
	const unsigned int nr = 1U << order;
	const uint64_t head_thp = KPF_BIT(KPF_COMPOUND_HEAD) | KPF_BIT(KPF_THP);
	const uint64_t tail_thp = KPF_BIT(KPF_COMPOUND_TAIL) | KPF_BIT(KPF_THP);
	const uint64_t mask = head_thp | tail_thp | KPF_BIT(KPF_ZERO_PAGE);
	uint64_t e[MTHPD_PMD_NR], flags[MTHPD_PMD_NR + 1], head;
	int r;

	r = mthpd_pagemap_read(a->pagemap, addr, nr, e);
	if (r < 0)
		return r;
	head = mthpd_pagemap_pfn(e[0]);
	if (!(e[0] & PM_PRESENT) || head == 0 || (head & (nr - 1)))
		return 0;
	for (unsigned int i = 1; i < nr; i++)
		if (!(e[i] & PM_PRESENT) || mthpd_pagemap_pfn(e[i]) != head + i)
			return 0;
	/*
	 * One page more: a tail right after the block belongs to the same
	 * folio (its head would be inside the block), so the folio is larger
	 * than asked.  At the end of memory that page cannot be read: then
	 * nothing follows.
	 */
	r = mthpd_kpageflags_read(a->kpageflags_fd, head, nr + 1, flags);
	if (r < 0) {
		flags[nr] = 0;
		r = mthpd_kpageflags_read(a->kpageflags_fd, head, nr, flags);
	}
	if (r < 0)
		return r;
	if (flags[nr] & KPF_BIT(KPF_COMPOUND_TAIL))
		return 0;
	if ((flags[0] & mask) != head_thp)
		return 0;
	for (unsigned int i = 1; i < nr; i++)
		if ((flags[i] & mask) != tail_thp)
			return 0;
	return 1;
}

/* A success the kernel claimed, checked: succeeded or noop (or exited, error). */
static enum mthpd_scan_result verified(struct mthpd_act *a, uint64_t addr, unsigned int order)
{
	int r = mthpd_act_verify(a, addr, order);

	if (r == -ESRCH) {
		a->exited = true;
		return MTHPD_RESULT_PROCESS_EXITED;
	}
	if (r < 0)
		return MTHPD_RESULT_ERROR;
	if (r == 0) {
		a->nr_noop++;
		return MTHPD_RESULT_NOOP;
	}
	if (a->budget != UINT64_MAX)
		a->budget -= MTHPD_PAGE_SIZE << order;
	return MTHPD_SCAN_SUCCEED;
}

/* The order of a block of @len bytes, a power of two of pages. */
static unsigned int block_order(uint64_t len)
{
	return (unsigned int)__builtin_ctzll(len / MTHPD_PAGE_SIZE);
}

/* How many of the @n @blocks, from the first, the budget covers. */
static size_t within_budget(const struct mthpd_act *a, const struct mthpd_kif_block *blocks,
			    size_t n)
{
	uint64_t bytes = 0;
	size_t k = 0;

	if (a->budget == UINT64_MAX)
		return n;
	for (; k < n && bytes + blocks[k].len <= a->budget; k++)
		bytes += blocks[k].len;
	return k;
}

/* How many of the @n @blocks, from the first, are of sizes not held (alloc_held). */
static size_t not_held(const struct mthpd_act *a, const struct mthpd_kif_block *blocks, size_t n)
{
	size_t k = 0;

	while (k < n && !mthpd_act_held(a, block_order(blocks[k].len)))
		k++;
	return k;
}

/* The result of a call for a block of @order that failed with @err. */
static enum mthpd_scan_result failed(struct mthpd_act *a, int err, unsigned int order)
{
	if (err == ESRCH)
		a->exited = true;
	if (err == ENOMEM)
		return enomem_result(a, order);
	return mthpd_act_errno_result(err);
}

/*
 * One process_madvise() call for @blocks (@n <= MTHPD_KIF_MAX_BLOCKS): each
 * block the kernel got through is verified into @ret; the one it stopped at
 * and those after it are MTHPD_ACT_UNKNOWN.  Returns how many it got through.
 *
 * The kernel answers a call that advised nothing with the errno of its
 * first block (vector_madvise() returns the bytes done, else the error):
 * then that block's result is known, as if it had been asked alone, and
 * it need not be asked again.  EAGAIN is the exception: it stays unknown,
 * so that the call for it alone retries it, as mthpd_act_collapse() does.
 */
static size_t collapse_vec(struct mthpd_act *a, const struct mthpd_kif_block *blocks, size_t n,
			   unsigned int flags, uint8_t *ret)
{
	int64_t bytes;
	size_t done = 0, pmds = 0;
	uint64_t t0;

	for (size_t i = 0; i < n; i++) {
		note_alloc_failed(a, block_order(blocks[i].len));
		pmds += blocks[i].len == MTHPD_PMD_SIZE;
	}
	mthpd_kif_prefault(a->kif, pmds);
	a->nr_calls++;
	t0 = now_usec();
	bytes = a->kif->ops->collapse_batch(a->kif, a->pidfd, blocks, n, flags);
	note_held(a->kif, t0, n);
	for (; done < n && bytes >= (int64_t)blocks[done].len; done++) {
		bytes -= (int64_t)blocks[done].len;
		ret[done] = verified(a, blocks[done].addr, block_order(blocks[done].len));
	}
	for (size_t i = done; i < n; i++)
		ret[i] = MTHPD_ACT_UNKNOWN;
	if (bytes < 0 && bytes != -EAGAIN && n > 0)
		ret[0] = failed(a, (int)-bytes, block_order(blocks[0].len));
	/*
	 * Stopped after some: the errno is lost, but if the kernel counted a
	 * failed allocation of this size meanwhile, that is why.  Named here,
	 * the block is not asked again alone, to fail a second time.
	 */
	if (bytes >= 0 && done < n && alloc_counted(a, block_order(blocks[done].len)) > 0) {
		hold_from(a, block_order(blocks[done].len));
		ret[done] = MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL;
	}
	return done;
}

void mthpd_act_collapse_pmds(struct mthpd_act *a, const uint64_t *addrs, size_t n, uint8_t *ret)
{
	struct mthpd_kif_block blocks[MTHPD_COLLAPSE_BATCH];
	size_t i = 0;

	for (size_t j = 0; j < n && j < MTHPD_COLLAPSE_BATCH; j++)
		blocks[j] = (struct mthpd_kif_block){.addr = addrs[j], .len = MTHPD_PMD_SIZE};
	while (i < n) {
		/* as many as the policy's bytes allow; the rest are over budget */
		size_t k = within_budget(a, blocks + i, n - i), done;

		/* with prefault, no more ranges a call than pages made ready for it */
		if (a->kif->prefault_area && k > MTHPD_PREFAULT_MAX)
			k = MTHPD_PREFAULT_MAX;

		if (a->exited || mthpd_act_held(a, MTHPD_PMD_ORDER) || k == 0) {
			for (; i < n; i++)
				ret[i] = a->exited ? MTHPD_RESULT_PROCESS_EXITED
					 : mthpd_act_held(a, MTHPD_PMD_ORDER) ? MTHPD_RESULT_HELD_ALLOC_FAILED
					 : MTHPD_RESULT_OVER_BUDGET;
			return;
		}
		done = collapse_vec(a, blocks + i, k, a->pmd_flags, ret + i);
		i += done;
		if (done < k && !a->exited)
			i++; /* where the kernel stopped: left MTHPD_ACT_UNKNOWN */
	}
}

enum mthpd_scan_result mthpd_act_collapse(void *userdata, const struct mthpd_range_scan *scan,
					  unsigned int offset, unsigned int order)
{
	struct mthpd_act *a = userdata;
	const uint64_t addr = scan->addr + offset * MTHPD_PAGE_SIZE;
	const uint64_t len = MTHPD_PAGE_SIZE << order;
	unsigned int flags = a->pmd_flags;
	uint64_t t0;
	int64_t n;

	if (a->exited)
		return MTHPD_RESULT_PROCESS_EXITED;
	if (mthpd_act_held(a, order))
		return MTHPD_RESULT_HELD_ALLOC_FAILED;
	if (a->budget < len)
		return MTHPD_RESULT_OVER_BUDGET;
	if (order != MTHPD_PMD_ORDER) {
		if (!(a->subpmd_orders & (1U << order)))
			return MTHPD_RESULT_UNSUPPORTED;
		flags = a->subpmd_flags;
	}

	note_alloc_failed(a, order);
	if (order == MTHPD_PMD_ORDER)
		mthpd_kif_prefault(a->kif, 1);
	a->nr_calls++;
	t0 = now_usec();
	n = a->kif->ops->collapse(a->kif, a->pidfd, addr, len, flags);
	note_held(a->kif, t0, 1);
	/*
	 * EAGAIN: a page was locked, pinned or off the LRU for a moment; retry
	 * once (with no prefault: the first call gave its new page back).
	 */
	if (n == -EAGAIN) {
		a->nr_calls++;
		n = a->kif->ops->collapse(a->kif, a->pidfd, addr, len, flags);
	}
	if (n < 0)
		return failed(a, (int)-n, order);

	return verified(a, addr, order);
}

enum mthpd_scan_result mthpd_act_split(struct mthpd_act *a, const struct mthpd_range_scan *s)
{
	const uint64_t addr = s->addr + s->partial_page * MTHPD_PAGE_SIZE;
	const uint64_t pfn = s->partial_pfn + s->partial_page;
	uint64_t flags;
	int64_t n;
	int r;

	if (a->exited)
		return MTHPD_RESULT_PROCESS_EXITED;
	if (!a->kif->ops->cold)
		return MTHPD_RESULT_UNSUPPORTED;
	a->nr_calls++;
	n = a->kif->ops->cold(a->kif, a->pidfd, addr, MTHPD_PAGE_SIZE);
	if (n == -ESRCH)
		a->exited = true;
	if (n == -ENOMEM) /* madvise's walk: not mapped */
		return MTHPD_RESULT_UNMAPPED;
	if (n < 0)
		return mthpd_act_errno_result((int)-n);
	r = mthpd_kpageflags_read(a->kpageflags_fd, pfn, 1, &flags);
	if (r < 0)
		return MTHPD_RESULT_ERROR;
	if (flags & (KPF_BIT(KPF_THP) | KPF_BIT(KPF_COMPOUND_HEAD) | KPF_BIT(KPF_COMPOUND_TAIL))) {
		a->nr_noop++;
		return MTHPD_RESULT_NOOP;
	}
	return MTHPD_SCAN_SUCCEED;
}

/*
 * Blocks of one range that go to the kernel in vector calls, answered to
 * the planner's walk (@plan, the plan it is filling; @knobs, its knobs) in
 * the order it asks for them.  blocks[i] got res[i] (MTHPD_ACT_UNKNOWN: not
 * known); blocks from index @sent on have not been sent to the kernel yet.
 */
struct replay {
	struct mthpd_act *act;
	const struct mthpd_knobs *knobs;
	struct mthpd_range_plan *plan;
	size_t n, next, sent;
	struct mthpd_kif_block blocks[MTHPD_KIF_MAX_BLOCKS];
	uint8_t res[MTHPD_KIF_MAX_BLOCKS];
};

/*
 * Appends to @rp the blocks of @p from index @from on that go to the kernel
 * in vector calls: those below 2M the plan collapses, of a size the kernel
 * supports.  An unsupported size is never attempted; the walk passes it by
 * as it passes a success, so the blocks after it still come in this order.
 */
static void replay_gather(struct replay *rp, const struct mthpd_range_plan *p,
			  unsigned int from)
{
	for (unsigned int i = from; i < p->nr_blocks && rp->n < MTHPD_KIF_MAX_BLOCKS; i++) {
		const struct mthpd_block *b = &p->blocks[i];

		if (b->action != MTHPD_ACTION_COLLAPSE || !(rp->act->subpmd_orders & (1U << b->order)))
			continue;
		rp->res[rp->n] = MTHPD_ACT_UNKNOWN;
		rp->blocks[rp->n++] = (struct mthpd_kif_block){
			.addr = p->addr + b->offset * MTHPD_PAGE_SIZE,
			.len = MTHPD_PAGE_SIZE << b->order,
		};
	}
}

/*
 * mthpd_collapse_fn of a dry walk: a block the real walk has been through
 * gets its result from there (@userdata, the plan being filled); any other
 * is assumed to succeed, as a plan without a callback assumes.
 */
static enum mthpd_scan_result known_or_success(void *userdata, const struct mthpd_range_scan *scan,
					       unsigned int offset, unsigned int order)
{
	const struct mthpd_range_plan *done = userdata;

	(void)scan;
	for (unsigned int i = 0; i < done->nr_blocks; i++)
		if (done->blocks[i].offset == offset && done->blocks[i].order == order)
			return (enum mthpd_scan_result)done->blocks[i].result;
	return MTHPD_SCAN_SUCCEED;
}

/*
 * The walk left the replay's blocks: a failure sent it to a fallback.  The
 * blocks it will ask for next, if they succeed, are those of a dry walk
 * that knows every result so far; they replace the replay's.  The walk is
 * a pure function of the scan, the knobs and the results, so the dry walk
 * comes to the same block as the real one and goes on from there.
 */
static void replay_predict(struct replay *rp, const struct mthpd_range_scan *scan)
{
	struct mthpd_range_plan dry;

	mthpd_plan_range(scan, rp->knobs, known_or_success, rp->plan, &dry);
	rp->n = rp->next = rp->sent = 0;
	replay_gather(rp, &dry, rp->plan->nr_blocks);
}

/*
 * mthpd_collapse_fn; @userdata is a struct replay.  If the walk asks for the
 * replay's next block, it gets its result; a block not sent yet goes to the
 * kernel in one call with all the blocks after it.  A block below 2M that
 * the replay did not foresee, the walk having taken a fallback, makes it
 * foresee again.  Any other block, and one whose result is unknown (where
 * the kernel stopped), is collapsed alone with mthpd_act_collapse(), which
 * names its errno.
 */
static enum mthpd_scan_result replay_collapse(void *userdata, const struct mthpd_range_scan *scan,
					      unsigned int offset, unsigned int order)
{
	struct replay *rp = userdata;
	struct mthpd_act *a = rp->act;
	const uint64_t addr = scan->addr + offset * MTHPD_PAGE_SIZE;
	const uint64_t len = MTHPD_PAGE_SIZE << order;
	size_t i = rp->next;
	bool next = i < rp->n && rp->blocks[i].addr == addr && rp->blocks[i].len == len;

	/* a block for the kernel that the replay did not foresee */
	if (!next && order != MTHPD_PMD_ORDER && (a->subpmd_orders & (1U << order))) {
		replay_predict(rp, scan);
		i = 0;
		next = rp->n > 0 && rp->blocks[0].addr == addr && rp->blocks[0].len == len;
	}
	if (next) {
		rp->next++;
		/*
		 * Not sent yet: this block and the rest go in one call, as
		 * many as the budget still covers.  One alone is collapsed
		 * alone below, which names its errno.
		 */
		if (i >= rp->sent && !a->exited) {
			/* a size whose allocation failed is not sent again */
			size_t k = within_budget(a, rp->blocks + i, not_held(a, rp->blocks + i, rp->n - i));

			if (k > 1)
				rp->sent = i + collapse_vec(a, rp->blocks + i, k, a->subpmd_flags,
							    rp->res + i) + 1;
		}
		if (rp->res[i] != MTHPD_ACT_UNKNOWN)
			return (enum mthpd_scan_result)rp->res[i];
	}
	return mthpd_act_collapse(a, scan, offset, order);
}

void mthpd_act_range(struct mthpd_act *a, const struct mthpd_range_scan *scan,
		     const struct mthpd_knobs *knobs, struct mthpd_range_plan *p)
{
	struct replay rp = {.act = a, .knobs = knobs, .plan = p};

	/* The blocks below 2M that the plan collapses, in the walk's order. */
	replay_gather(&rp, p, 0);
	mthpd_plan_range(scan, knobs, replay_collapse, &rp, p);
}

void mthpd_act_after_batch(struct mthpd_act *a, const struct mthpd_range_scan *scan,
			   const struct mthpd_knobs *knobs, uint8_t pmd_result,
			   struct mthpd_range_plan *p)
{
	/* the 2M block, sent already */
	struct replay rp = {
		.act = a,
		.knobs = knobs,
		.plan = p,
		.n = 1,
		.sent = 1,
		.blocks = {{.addr = scan->addr, .len = MTHPD_PMD_SIZE}},
		.res = {pmd_result},
	};

	mthpd_plan_range(scan, knobs, replay_collapse, &rp, p);
}
