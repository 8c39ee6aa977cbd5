/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Read beside mm/khugepaged.c of Linux 7.2 (linux-mm 001dba133cfa).  Names
 * and control flow follow the kernel's, including its labels, so that a
 * change upstream can be carried over line by line.
 *
 * What the kernel checks and mthpd cannot see, and why it is left out:
 * - pte_uffd / userfaultfd_armed: not visible from pagemap (bit 57 is
 *   uffd-wp only for registered ranges); MADV_COLLAPSE refuses such VMAs.
 * - SCAN_PAGE_LRU, SCAN_PAGE_LOCK, SCAN_PAGE_COUNT in the scan: transient
 *   and racy even in the kernel; the executor sees them as EAGAIN.
 * - SCAN_LACK_REFERENCED_PAGE: young bits are not exported, and kpageflags
 *   REFERENCED is always 0 on anon pages here (measured).  MADV_COLLAPSE
 *   (cc->is_khugepaged == false) does not check it either.
 * - collapse_scan_abort() (node_reclaim distance): single-node machines.
 */
#include <string.h>

#include "plan.h"

/* mm/khugepaged.c: collapse_max_ptes_none(), Linux 7.2 (seed 004). */
unsigned int mthpd_collapse_max_ptes_none(const struct mthpd_knobs *k, unsigned int order)
{
	const unsigned int max_ptes_none = k->max_ptes_none;

	/* for PMD collapse, respect the user defined maximum */
	if (order == MTHPD_PMD_ORDER)
		return max_ptes_none;
	/* for mTHP collapse at KHUGEPAGED_MAX_PTES_LIMIT, scale to the order */
	if (max_ptes_none == MTHPD_MAX_PTES_LIMIT)
		return (1U << order) - 1;
	/* any other value: the kernel warns once and uses 0 (no creep) */
	return 0;
}

/* mm/khugepaged.c: collapse_max_ptes_swap(), Linux 7.2 (seed 004). */
unsigned int mthpd_collapse_max_ptes_swap(const struct mthpd_knobs *k, unsigned int order)
{
	/* for mTHP collapse do not allow any non-present PTEs */
	if (order != MTHPD_PMD_ORDER)
		return 0;
	return k->max_ptes_swap;
}

/* mm/khugepaged.c: collapse_max_ptes_shared(), Linux 7.2 (seed 004). */
unsigned int mthpd_collapse_max_ptes_shared(const struct mthpd_knobs *k, unsigned int order)
{
	/* for mTHP collapse do not allow pages shared between processes */
	if (order != MTHPD_PMD_ORDER)
		return 0;
	return k->max_ptes_shared;
}

bool mthpd_knobs_max_ptes_none_degraded(const struct mthpd_knobs *k)
{
	bool below_pmd = k->orders & ((1U << MTHPD_PMD_ORDER) - 1);

	return below_pmd && k->max_ptes_none != 0 && k->max_ptes_none != MTHPD_MAX_PTES_LIMIT;
}

/* mm/khugepaged.c: max_order_from_offset(), Linux 7.2 (seed 008). */
unsigned int mthpd_max_order_from_offset(unsigned int offset)
{
	unsigned int ffs;

	if (offset == 0)
		return MTHPD_PMD_ORDER;
	ffs = (unsigned int)__builtin_ctz(offset);
	return ffs < MTHPD_PMD_ORDER ? ffs : MTHPD_PMD_ORDER;
}

static bool pte_none_or_zero(const struct mthpd_range_scan *s, unsigned int i)
{
	return !mthpd_bit(s->occupied, i) && !mthpd_bit(s->swap, i) && !mthpd_bit(s->guard, i);
}

/*
 * The scan phase: mm/khugepaged.c: collapse_scan_pmd() with
 * collapse_check_pte(), Linux 7.2 (seed 008; linux-mm 001dba133cfa).
 * Counts in PTE order and stops at the first limit exceeded, as the kernel
 * does, so the reason is the kernel's even when several limits are exceeded.
 * Returns SCAN_SUCCEED and the number of swap PTEs ("unmapped"), or the
 * scan_result that ends the range.
 */
static enum mthpd_scan_result collapse_scan_pmd(const struct mthpd_range_scan *s,
						const struct mthpd_knobs *k,
						unsigned int *ret_unmapped)
{
	unsigned int max_ptes_none = mthpd_collapse_max_ptes_none(k, MTHPD_PMD_ORDER);
	const unsigned int max_ptes_swap = mthpd_collapse_max_ptes_swap(k, MTHPD_PMD_ORDER);
	const unsigned int max_ptes_shared = mthpd_collapse_max_ptes_shared(k, MTHPD_PMD_ORDER);
	unsigned int none_or_zero, unmapped, shared, exceeded;

	/* find_pmd_or_thp_or_none(): already a huge PMD */
	if (s->pmd_mapped)
		return MTHPD_SCAN_PMD_MAPPED;

	/*
	 * If PMD is the only enabled order, enforce max_ptes_none, otherwise
	 * scan all pages to populate the bitmap for mTHP collapse.
	 */
	if (k->orders != (1U << MTHPD_PMD_ORDER))
		max_ptes_none = MTHPD_MAX_PTES_LIMIT;

	/*
	 * Not in the kernel, which counts as it walks: the counts only grow,
	 * so whole-range totals give the same verdict unless two limits are
	 * exceeded, and only then does the PTE order decide which one the
	 * kernel reports.  Word popcounts instead of 512 bit tests.
	 */
	unmapped = mthpd_bitmap_weight(s->swap, 0, MTHPD_PMD_NR) +
		   mthpd_bitmap_weight(s->guard, 0, MTHPD_PMD_NR);
	none_or_zero = MTHPD_PMD_NR - mthpd_bitmap_weight(s->occupied, 0, MTHPD_PMD_NR) - unmapped;
	shared = mthpd_bitmap_weight(s->shared, 0, MTHPD_PMD_NR);
	exceeded = (unsigned int)(none_or_zero > max_ptes_none) +
		   (unsigned int)(unmapped > max_ptes_swap) + (unsigned int)(shared > max_ptes_shared);
	if (exceeded == 0) {
		*ret_unmapped = unmapped;
		return MTHPD_SCAN_SUCCEED;
	}
	if (exceeded == 1)
		return none_or_zero > max_ptes_none ? MTHPD_SCAN_EXCEED_NONE_PTE
		       : unmapped > max_ptes_swap   ? MTHPD_SCAN_EXCEED_SWAP_PTE
						    : MTHPD_SCAN_EXCEED_SHARED_PTE;

	none_or_zero = unmapped = shared = 0;
	for (unsigned int i = 0; i < MTHPD_PMD_NR; i++) {
		if (pte_none_or_zero(s, i)) {
			if (++none_or_zero > max_ptes_none)
				return MTHPD_SCAN_EXCEED_NONE_PTE;
			continue;
		}
		/* !pte_present(): swap entries and guard markers alike */
		if (!mthpd_bit(s->occupied, i)) {
			if (++unmapped > max_ptes_swap)
				return MTHPD_SCAN_EXCEED_SWAP_PTE;
			continue;
		}
		if (mthpd_bit(s->shared, i) && ++shared > max_ptes_shared)
			return MTHPD_SCAN_EXCEED_SHARED_PTE;
	}
	*ret_unmapped = unmapped;
	return MTHPD_SCAN_SUCCEED;
}

/*
 * What collapse_huge_page(mm, addr, ..., order) would answer, decided from
 * the scan alone, in the kernel's order of checks:
 * - __collapse_huge_page_swapin() runs when the scan saw non-present PTEs.
 *   Below PMD order it bails on the first one with SCAN_EXCEED_SWAP_PTE
 *   (seed 004).  At PMD order it swaps them in; do_swap_page() on a guard
 *   marker is VM_FAULT_SIGSEGV, which swap-in turns into SCAN_FAIL.
 * - __collapse_huge_page_isolate() per PTE: collapse_check_pte() refuses a
 *   shared page below PMD order (max_ptes_shared 0), then the existing folio
 *   must be smaller than the target order (seed 005).
 * Refusing a shared block here, before any attempt, also avoids a kernel
 * weakness measured with the series: the pages isolated before the shared
 * one sit in the per-CPU LRU batch and make the smaller retry fail too.
 */
static enum mthpd_scan_result predict_collapse(const struct mthpd_range_scan *s,
					       const struct mthpd_knobs *k,
					       unsigned int offset, unsigned int order)
{
	const unsigned int end = offset + (1U << order);
	const unsigned int max_ptes_shared = mthpd_collapse_max_ptes_shared(k, order);
	unsigned int shared = 0;

	/* __collapse_huge_page_swapin(): the same verdict whichever entry comes first */
	if (order != MTHPD_PMD_ORDER && (mthpd_bitmap_weight(s->swap, offset, end) ||
					 mthpd_bitmap_weight(s->guard, offset, end)))
		return MTHPD_SCAN_EXCEED_SWAP_PTE;
	if (order == MTHPD_PMD_ORDER && mthpd_bitmap_weight(s->guard, offset, end))
		return MTHPD_SCAN_FAIL;

	/*
	 * __collapse_huge_page_isolate(): without large folios to meet (any at
	 * PMD order, where seed 005's check does not apply), only the count of
	 * shared pages matters; otherwise the PTE order decides which check
	 * fails first.
	 */
	if (order == MTHPD_PMD_ORDER || !s->folio_orders_known)
		return mthpd_bitmap_weight(s->shared, offset, end) > max_ptes_shared
			       ? MTHPD_SCAN_EXCEED_SHARED_PTE
			       : MTHPD_SCAN_SUCCEED;
	for (unsigned int i = offset; i < end; i++) {
		if (!mthpd_bit(s->occupied, i))
			continue;
		if (mthpd_bit(s->shared, i) && ++shared > max_ptes_shared)
			return MTHPD_SCAN_EXCEED_SHARED_PTE;
		if (s->folio_order[i] >= order)
			return MTHPD_SCAN_PTE_MAPPED_HUGEPAGE;
	}
	return MTHPD_SCAN_SUCCEED;
}

static void add_block(struct mthpd_range_plan *p, unsigned int offset, unsigned int order,
		      unsigned int occupied, enum mthpd_scan_result reason,
		      enum mthpd_scan_result result)
{
	/* Cannot overflow: each (offset, order) pair is visited at most once. */
	if (p->nr_blocks >= MTHPD_PLAN_MAX_BLOCKS)
		return;
	p->blocks[p->nr_blocks++] = (struct mthpd_block){
		.offset = (uint16_t)offset,
		.order = (uint8_t)order,
		.action = reason == MTHPD_SCAN_SUCCEED ? MTHPD_ACTION_COLLAPSE : MTHPD_ACTION_SKIP,
		.occupied = (uint16_t)occupied,
		.reason = (uint8_t)reason,
		.result = (uint8_t)result,
	};
}

/* mm/khugepaged.c: mthp_collapse(), Linux 7.2 (seeds 008 and 009). */
static enum mthpd_scan_result mthp_collapse(const struct mthpd_range_scan *s,
					    const struct mthpd_knobs *k, unsigned int unmapped,
					    mthpd_collapse_fn collapse, void *userdata,
					    struct mthpd_range_plan *p)
{
	const uint32_t enabled_orders = k->orders;
	unsigned int nr_occupied_ptes, nr_ptes, max_ptes_none;
	enum mthpd_scan_result last_result = MTHPD_SCAN_FAIL;
	unsigned int collapsed = 0;
	bool alloc_failed = false;
	unsigned int offset = 0;
	unsigned int order = MTHPD_PMD_ORDER;

	while (offset < MTHPD_PMD_NR) {
		nr_ptes = 1U << order;

		if (!(enabled_orders & (1U << order)))
			goto next_order;

		max_ptes_none = mthpd_collapse_max_ptes_none(k, order);
		nr_occupied_ptes = mthpd_bitmap_weight(s->occupied, offset, offset + nr_ptes);

		/*
		 * Swap PTEs accepted during the scan are counted in @unmapped,
		 * not in the present-PTE bitmap.  Account them for the
		 * PMD-order candidate.
		 */
		if (order == MTHPD_PMD_ORDER)
			nr_occupied_ptes += unmapped;

		if (nr_occupied_ptes >= nr_ptes - max_ptes_none) {
			enum mthpd_scan_result reason, ret;

			reason = predict_collapse(s, k, offset, order);
			ret = reason;
			if (reason == MTHPD_SCAN_SUCCEED && collapse)
				ret = collapse(userdata, s, offset, order);
			add_block(p, offset, order,
				  mthpd_bitmap_weight(s->occupied, offset, offset + nr_ptes),
				  reason, ret);

			switch (ret) {
			/* Cases where we continue to next collapse candidate */
			case MTHPD_SCAN_SUCCEED:
				collapsed += nr_ptes;
				__attribute__((fallthrough));
			case MTHPD_SCAN_PTE_MAPPED_HUGEPAGE:
			/* mthpd: nothing to gain from a smaller order either */
			case MTHPD_RESULT_NOOP:
			case MTHPD_RESULT_UNSUPPORTED:
				goto next_offset;
			/*
			 * mthpd: not attempted, an allocation of this size
			 * failed before in the pass (lib/act.h); the plan's
			 * next block is held too, and shown so
			 */
			case MTHPD_RESULT_HELD_ALLOC_FAILED:
				last_result = ret;
				goto next_offset;
			/* Cases where lower orders might still succeed */
			case MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL:
				alloc_failed = true;
				__attribute__((fallthrough));
			case MTHPD_SCAN_EXCEED_NONE_PTE:
			case MTHPD_SCAN_EXCEED_SWAP_PTE:
			case MTHPD_SCAN_EXCEED_SHARED_PTE:
			case MTHPD_SCAN_PAGE_LOCK:
			case MTHPD_SCAN_PAGE_NULL:
			case MTHPD_SCAN_PTE_NON_PRESENT:
			/* mthpd: EAGAIN stands for SCAN_PAGE_COUNT/LOCK/DEL_PAGE_LRU */
			case MTHPD_RESULT_TRY_AGAIN:
				last_result = ret;
				goto next_order;
			/* Cases where no further collapse is possible */
			case MTHPD_SCAN_PMD_MAPPED:
			default:
				last_result = ret;
				goto done;
			}
		}
		/*
		 * Not in the kernel, which moves on silently: record the miss
		 * under the name of the knob that caused it.
		 */
		add_block(p, offset, order,
			  mthpd_bitmap_weight(s->occupied, offset, offset + nr_ptes),
			  MTHPD_SCAN_EXCEED_NONE_PTE, MTHPD_SCAN_EXCEED_NONE_PTE);

next_order:
		/*
		 * Continue with the next smaller order if there is still any
		 * smaller order enabled.  When at the smallest order we must
		 * always move to the next offset.
		 */
		if (order > MTHPD_MIN_ORDER && (enabled_orders & ((1U << order) - 1))) {
			order--;
			continue;
		}
next_offset:
		/*
		 * Advance past the region we just processed; the next order is
		 * limited by the natural alignment of the new offset.
		 */
		offset += nr_ptes;
		order = mthpd_max_order_from_offset(offset);
	}
done:
	p->nr_collapsed = collapsed;
	if (collapsed)
		return MTHPD_SCAN_SUCCEED;
	if (alloc_failed)
		return MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL;
	return last_result;
}

unsigned int mthpd_block_empty(const struct mthpd_range_scan *s, const struct mthpd_block *b)
{
	unsigned int nr = 1U << b->order;
	unsigned int kept = b->occupied + mthpd_bitmap_weight(s->swap, b->offset, b->offset + nr);

	return kept < nr ? nr - kept : 0;
}

void mthpd_plan_range(const struct mthpd_range_scan *scan, const struct mthpd_knobs *knobs,
		      mthpd_collapse_fn collapse, void *userdata, struct mthpd_range_plan *ret)
{
	unsigned int unmapped = 0;
	enum mthpd_scan_result r;

	ret->addr = scan->addr;
	ret->nr_blocks = 0;
	ret->nr_collapsed = 0;

	r = collapse_scan_pmd(scan, knobs, &unmapped);
	if (r != MTHPD_SCAN_SUCCEED) {
		/* The range ends in the scan: shown as its PMD-order block. */
		add_block(ret, 0, MTHPD_PMD_ORDER,
			  mthpd_bitmap_weight(scan->occupied, 0, MTHPD_PMD_NR), r, r);
		ret->result = r;
		return;
	}
	ret->result = mthp_collapse(scan, knobs, unmapped, collapse, userdata, ret);
}
