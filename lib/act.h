/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The executor: process_madvise(pidfd, iov, n, MADV_COLLAPSE, flags) for the
 * planned blocks, each errno turned into a named result, and every claimed
 * success checked in kpageflags, because the kernel also answers success for
 * ranges it did nothing to (a 64 KiB range on a stock kernel; measured).
 * It plugs into the planner's walk as its collapse callback.
 */
#ifndef MTHPD_ACT_H
#define MTHPD_ACT_H

#include <stdbool.h>
#include <stdint.h>

#include "kif.h"
#include "pagemap.h"
#include "plan.h"
#include "result.h"
#include "scan.h"

/*
 * process_madvise() flags of the contrib/kernel patch: collapse each iovec,
 * one naturally aligned block, to exactly its order; STRICT refuses a block
 * with an empty or zero page.  An unpatched kernel rejects any flag with
 * EINVAL, which is how mthpd tells the two apart.
 */
#define MTHPD_MADV_COLLAPSE_ORDER (1U << 0)
#define MTHPD_MADV_COLLAPSE_STRICT (1U << 1)

struct mthpd_act {
	struct mthpd_kif *kif;
	int pidfd;
	struct mthpd_pagemap *pagemap; /* to verify: re-read the block's entries */
	int kpageflags_fd;
	uint32_t subpmd_orders; /* orders below PMD the kernel collapses (contrib patch, enabled) */
	unsigned int subpmd_flags;
	/*
	 * Flags of PMD-order calls: 0 on a stock kernel; with the contrib
	 * patch the same as subpmd_flags, so that a batch of 2M ranges drains
	 * the kernel's LRU caches once per call rather than once per range,
	 * and a strict policy cannot add memory by racing a fault.
	 */
	unsigned int pmd_flags;
	/*
	 * The kernel's count of failed collapse allocations per order, read
	 * before the first call of that order in this pass (bit set in
	 * @alloc_failed_known): an ENOMEM that did not move it was not an
	 * allocation failure but a range no longer mapped.
	 */
	uint64_t alloc_failed[MTHPD_PMD_ORDER + 1];
	uint32_t alloc_failed_known;
	/*
	 * Orders not attempted any more in this pass: every order from the
	 * smallest whose folio could not be allocated up.  An allocation that
	 * failed says the host has no free block of that size (compaction
	 * could not make one), and each further try compacts again for
	 * nothing, at the cost of every other process (issue 31).  Smaller
	 * orders may still find memory.  Their blocks are
	 * MTHPD_RESULT_HELD_ALLOC_FAILED: planned, not attempted.
	 */
	uint32_t alloc_held;
	bool exited;            /* the target went away: stop calling */
	uint64_t budget;        /* bytes it may still collapse; UINT64_MAX: no limit */
	unsigned int nr_calls;
	unsigned int nr_noop;
};

/* Pure: the named result of a MADV_COLLAPSE errno (mm/khugepaged.c:
 * madvise_collapse_errno() read backwards). */
enum mthpd_scan_result mthpd_act_errno_result(int err);

/*
 * Pure: the value of counter @name in a /proc/vmstat text ("name value\n"
 * lines).  Returns 0, or -ENOENT when it is not there.
 */
int mthpd_act_parse_vmstat(const char *buf, const char *name, uint64_t *ret);

/*
 * How many collapses of @order failed to allocate their folio, system-wide:
 * thp_collapse_alloc_failed of /proc/vmstat for 2M (the kernel counts only
 * PMD order there), hugepages-<size>kB/stats/collapse_alloc_failed below
 * (Linux 7.2+).  Returns 0, or -errno when the kernel has no such count.
 */
int mthpd_act_read_alloc_failed(const struct mthpd_kif *kif, unsigned int order, uint64_t *ret);

/*
 * Checks that [@addr, @addr + 4K << @order) of the target is now one folio of
 * exactly @order: consecutive PFNs from an aligned head, the head
 * COMPOUND_HEAD|THP, every other page COMPOUND_TAIL|THP, none a zero page.
 * Returns 1 if so, 0 if not, -ESRCH if the target exited, -errno.
 */
int mthpd_act_verify(struct mthpd_act *a, uint64_t addr, unsigned int order);

/* Pure: whether a block of @order is held after an allocation failure in this pass. */
static inline bool mthpd_act_held(const struct mthpd_act *a, unsigned int order)
{
	return (a->alloc_held >> order) & 1U;
}

/* A result of mthpd_act_collapse_pmds() for a range it could not tell. */
#define MTHPD_ACT_UNKNOWN _MTHPD_SCAN_RESULT_MAX

/*
 * Collapses the whole 2 MiB ranges at @addrs (@n <= MTHPD_COLLAPSE_BATCH) in
 * as few process_madvise() calls as the kernel allows: all in one, and
 * after a failure the rest in the next.  Each success is checked in
 * kpageflags as mthpd_act_collapse() does.  ret[i] is succeeded, noop,
 * over-budget or process_exited, alloc_huge_page_failed (the call stopped
 * there and the kernel counted a failed allocation; the ranges after it
 * are held_alloc_failed, not sent), or MTHPD_ACT_UNKNOWN for a range the
 * kernel stopped at: the batch cannot tell its errno, so the caller
 * collapses it alone with mthpd_act_collapse() (which retries EAGAIN and
 * names the failure).  A call that advised nothing answers its first
 * range's errno: that range gets its result as mthpd_act_collapse() would
 * name it (EAGAIN stays unknown, to be retried alone).
 */
void mthpd_act_collapse_pmds(struct mthpd_act *a, const uint64_t *addrs, size_t n, uint8_t *ret);

/*
 * Splits the 2 MiB folio @s maps in part (s->partial_pfn), so that the
 * kernel frees the pages of it that nothing maps now, not when its
 * deferred split runs under memory pressure: process_madvise(MADV_COLD) of
 * one page of it (s->partial_page).  mm/madvise.c:
 * madvise_cold_or_pageout_pte_range() splits a large folio that the
 * advised range does not cover whole, then deactivates that one page.  The
 * split is checked in kpageflags: the page's PFN no longer belongs to a
 * THP.  Returns succeeded, noop (the kernel left it whole: the folio was
 * locked, pinned or shared), unmapped (ENOMEM: the page is gone),
 * process_exited, or the result of another errno.
 */
enum mthpd_scan_result mthpd_act_split(struct mthpd_act *a, const struct mthpd_range_scan *s);

/* mthpd_collapse_fn for mthpd_plan_range(); @userdata is a struct mthpd_act. */
enum mthpd_scan_result mthpd_act_collapse(void *userdata, const struct mthpd_range_scan *scan,
					  unsigned int offset, unsigned int order);

/*
 * Collapses one range and fills @p as mthpd_plan_range(@scan, @knobs,
 * mthpd_act_collapse, @a, @p) would, with the same calls' results and the
 * same fallbacks, but in fewer calls.  @p holds the plan of @scan
 * (mthpd_plan_range() without a callback): its blocks below 2M that the
 * kernel supports go to the kernel in one vector call when the walk comes
 * to the first of them, as far as the budget reaches.  Where the kernel
 * stopped, the block is collapsed alone, so its errno is known (unless the
 * call advised nothing: then the errno is the first block's); the blocks
 * of the walk's fallback and those after it go in the next vector call.
 * The walk asks for the blocks in the plan's order, because a success
 * steers it the way the plan assumed.
 */
void mthpd_act_range(struct mthpd_act *a, const struct mthpd_range_scan *scan,
		     const struct mthpd_knobs *knobs, struct mthpd_range_plan *p);

/*
 * mthpd_act_range() for a range whose 2M collapse went in a batch with
 * mthpd_act_collapse_pmds(): the walk's 2M attempt gets @pmd_result, the
 * batch's answer (MTHPD_ACT_UNKNOWN: asked again alone), and the blocks of
 * its fallback go in vector calls.
 */
void mthpd_act_after_batch(struct mthpd_act *a, const struct mthpd_range_scan *scan,
			   const struct mthpd_knobs *knobs, uint8_t pmd_result,
			   struct mthpd_range_plan *p);

#endif
