/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner: khugepaged's mTHP order walk as a pure function.
 *
 * Port of mm/khugepaged.c (Linux 7.2; linux-mm 001dba133cfa, seeds 004, 005,
 * 008, 009): collapse_max_ptes_{none,swap,shared}(), the scan-phase aborts of
 * collapse_scan_pmd(), mthp_collapse() with max_order_from_offset(), and the
 * checks of collapse_huge_page() that decide a block's fate before any page
 * is copied (swap-in refusal below PMD order, isolation's shared and
 * existing-folio checks).
 *
 * It does no I/O.  The executor (act.c) plugs in as the callback that
 * replaces the kernel's collapse_huge_page() call, so `collapse` walks the
 * same loop with real results and falls back to smaller orders exactly where
 * the kernel would.
 */
#ifndef MTHPD_PLAN_H
#define MTHPD_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "result.h"
#include "scan.h"

/* KHUGEPAGED_MIN_MTHP_ORDER: the smallest anon mTHP order (16 KiB). */
#define MTHPD_MIN_ORDER 2
/* KHUGEPAGED_MAX_PTES_LIMIT */
#define MTHPD_MAX_PTES_LIMIT (MTHPD_PMD_NR - 1)
/* Distinct (offset, order) pairs the walk can visit: sum of 512 >> o, o = 2..9. */
#define MTHPD_PLAN_MAX_BLOCKS 255

struct mthpd_knobs {
	uint32_t orders; /* bit n: collapsing to order n is enabled */
	unsigned int max_ptes_none;
	unsigned int max_ptes_swap;
	unsigned int max_ptes_shared;
};

enum mthpd_action {
	MTHPD_ACTION_SKIP,
	MTHPD_ACTION_COLLAPSE,
};

struct mthpd_block {
	uint16_t offset;   /* first page within the range */
	uint8_t order;
	uint8_t action;    /* enum mthpd_action: the walk's plan for this block */
	uint16_t occupied; /* occupied pages in the block (the bitmap weight) */
	uint8_t reason;    /* enum mthpd_scan_result the planner predicts */
	uint8_t result;    /* enum mthpd_scan_result of the attempt; == reason in a plan */
};

struct mthpd_range_plan {
	uint64_t addr;
	enum mthpd_scan_result result; /* like mthp_collapse()'s return, or the scan abort */
	unsigned int nr_collapsed;     /* pages in blocks whose result is succeeded */
	unsigned int nr_blocks;
	struct mthpd_block blocks[MTHPD_PLAN_MAX_BLOCKS];
};

/*
 * Replaces the kernel's collapse_huge_page() call in the walk: performs the
 * collapse of the block (@offset, @order) of @scan and returns its result.
 */
typedef enum mthpd_scan_result (*mthpd_collapse_fn)(void *userdata,
						     const struct mthpd_range_scan *scan,
						     unsigned int offset, unsigned int order);

/* collapse_max_ptes_none() for khugepaged: the knob at PMD order; below it,
 * 511 scales to (1 << order) - 1 and anything else acts as 0 (seed 004). */
unsigned int mthpd_collapse_max_ptes_none(const struct mthpd_knobs *k, unsigned int order);
unsigned int mthpd_collapse_max_ptes_swap(const struct mthpd_knobs *k, unsigned int order);
unsigned int mthpd_collapse_max_ptes_shared(const struct mthpd_knobs *k, unsigned int order);

/* True when a size below PMD is enabled with a max_ptes_none the kernel
 * would warn about (neither 0 nor 511): it then acts as 0. */
bool mthpd_knobs_max_ptes_none_degraded(const struct mthpd_knobs *k);

/* max_order_from_offset(): highest naturally aligned order at @offset. */
unsigned int mthpd_max_order_from_offset(unsigned int offset);

/*
 * Pure: the pages of block @b of range @s that are empty (neither occupied
 * nor swapped): what collapsing it adds as zero-filled memory.
 */
unsigned int mthpd_block_empty(const struct mthpd_range_scan *s, const struct mthpd_block *b);

/*
 * Walks one range.  With @collapse NULL it is a plan: every block the walk
 * would attempt is assumed to get the result the planner predicts.  With a
 * callback, blocks predicted to succeed are handed to it, and its result
 * steers the walk as the kernel's does.  Always fills @ret.
 */
void mthpd_plan_range(const struct mthpd_range_scan *scan, const struct mthpd_knobs *knobs,
		      mthpd_collapse_fn collapse, void *userdata, struct mthpd_range_plan *ret);

#endif
