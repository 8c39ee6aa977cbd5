/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner against the kernel's mTHP collapse walk (mm/khugepaged.c of
 * Linux 7.2: collapse_scan_pmd(), mthp_collapse(), collapse_max_ptes_*();
 * seeds 003, 004, 005, 008, 009).  Each case is a range written as a page
 * pattern (tests/lib/pattern.h), the knobs, and the exact list of blocks the
 * walk must visit, in order; one case at least per scan_result the planner
 * can reach.  Cases with a script run the walk with a fake kernel answering
 * collapse_huge_page(), to exercise the fallbacks of mthp_collapse().
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "pattern.h"
#include "plan.h"
#include "test.h"
#include "util.h"

#define O(n) (1U << (n))
#define ALL_ORDERS (O(9) | O(8) | O(7) | O(6) | O(5) | O(4) | O(3) | O(2))
#define RANGE_ADDR 0x7f2a40000000ULL

/* Knobs with khugepaged's defaults for swap (64) and shared (256). */
#define KNOBS(ord, none) \
	{ .orders = (ord), .max_ptes_none = (none), .max_ptes_swap = 64, .max_ptes_shared = 256 }
#define KNOBS4(ord, none, swap, shared) \
	{ .orders = (ord), .max_ptes_none = (none), .max_ptes_swap = (swap), .max_ptes_shared = (shared) }

/* One expected block, or @count of them, each 1 << @order after the last. */
struct exp_block {
	unsigned int offset, order, count;
	enum mthpd_action action;
	enum mthpd_scan_result reason, result;
};

/* Planned and (with a fake kernel) succeeded. */
#define COLLAPSES(off, ord, n)                                                              \
	{ .offset = (off), .order = (ord), .count = (n), .action = MTHPD_ACTION_COLLAPSE,  \
	  .reason = MTHPD_SCAN_SUCCEED, .result = MTHPD_SCAN_SUCCEED }
#define COLLAPSE(off, ord) COLLAPSES(off, ord, 1)
/* Refused by the planner for the reason MTHPD_SCAN_<why>. */
#define SKIP(off, ord, why)                                                                 \
	{ .offset = (off), .order = (ord), .count = 1, .action = MTHPD_ACTION_SKIP,        \
	  .reason = MTHPD_SCAN_##why, .result = MTHPD_SCAN_##why }
/* Planned, handed to the fake kernel, which answered @res. */
#define TRIED(off, ord, res)                                                                \
	{ .offset = (off), .order = (ord), .count = 1, .action = MTHPD_ACTION_COLLAPSE,    \
	  .reason = MTHPD_SCAN_SUCCEED, .result = (res) }

/* The fake kernel's answer for one block; blocks not listed succeed. */
struct step {
	unsigned int offset, order;
	enum mthpd_scan_result result;
};

struct plan_case {
	const char *name;
	const char *pages;
	bool pmd_mapped;
	struct mthpd_knobs knobs;
	bool kernel;           /* walk with the fake kernel, else a dry plan */
	struct step script[6]; /* ends at order 0 */
	struct exp_block expect[20]; /* ends at order 0 */
	enum mthpd_scan_result result;
	unsigned int nr_collapsed;
};

static const struct plan_case cases[] = {
	/* --- The scan phase: collapse_scan_pmd() ends the range. --- */
	{
		.name = "already a PMD-mapped THP: page_pmd_mapped, whatever sizes are enabled",
		.pages = "512o:9", .pmd_mapped = true,
		.knobs = KNOBS(ALL_ORDERS, 511),
		.expect = { SKIP(0, 9, PMD_MAPPED) },
		.result = MTHPD_SCAN_PMD_MAPPED,
	},
	{
		.name = "2M only, max_ptes_none 255: 256 empty pages abort the scan",
		.pages = "256o 256.",
		.knobs = KNOBS(O(9), 255),
		.expect = { SKIP(0, 9, EXCEED_NONE_PTE) },
		.result = MTHPD_SCAN_EXCEED_NONE_PTE,
	},
	{
		.name = "2M only, max_ptes_none 256: 256 empty pages are allowed",
		.pages = "256o 256.",
		.knobs = KNOBS(O(9), 256),
		.expect = { COLLAPSE(0, 9) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 512,
	},
	{
		.name = "2M only, max_ptes_none 511 (default): one written page is enough",
		.pages = "1o 511.",
		.knobs = KNOBS(O(9), 511),
		.expect = { COLLAPSE(0, 9) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 512,
	},
	{
		.name = "only zero pages: 512 > 511 aborts the scan even with mTHP enabled",
		.pages = "512z",
		.knobs = KNOBS(ALL_ORDERS, 511),
		.expect = { SKIP(0, 9, EXCEED_NONE_PTE) },
		.result = MTHPD_SCAN_EXCEED_NONE_PTE,
	},
	{
		/* "If PMD is the only enabled order, enforce max_ptes_none,
		 * otherwise scan all pages" (seed 008). */
		.name = "mTHP enabled: the scan does not enforce max_ptes_none, the walk does",
		.pages = "256o 256.",
		.knobs = KNOBS(O(9) | O(8), 0),
		.expect = { SKIP(0, 9, EXCEED_NONE_PTE), COLLAPSE(0, 8), SKIP(256, 8, EXCEED_NONE_PTE) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 256,
	},
	{
		.name = "max_ptes_swap 64: 65 swap entries abort the scan",
		.pages = "65s 447o",
		.knobs = KNOBS(O(9) | O(4), 511),
		.expect = { SKIP(0, 9, EXCEED_SWAP_PTE) },
		.result = MTHPD_SCAN_EXCEED_SWAP_PTE,
	},
	{
		.name = "a guard marker is !pte_present: it counts against max_ptes_swap",
		.pages = "1g 511o",
		.knobs = KNOBS4(O(9), 511, 0, 256),
		.expect = { SKIP(0, 9, EXCEED_SWAP_PTE) },
		.result = MTHPD_SCAN_EXCEED_SWAP_PTE,
	},
	{
		.name = "max_ptes_shared 256: 257 shared pages abort the scan",
		.pages = "257S 255o",
		.knobs = KNOBS(O(9), 511),
		.expect = { SKIP(0, 9, EXCEED_SHARED_PTE) },
		.result = MTHPD_SCAN_EXCEED_SHARED_PTE,
	},
	{
		.name = "max_ptes_shared 256: 256 shared pages collapse at PMD order",
		.pages = "256S 256o",
		.knobs = KNOBS(O(9) | O(8), 511),
		.expect = { COLLAPSE(0, 9) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 512,
	},
	/* Two limits exceeded: the kernel stops at the first PTE over a limit. */
	{
		.name = "all limits 0, swap entry before an empty page: exceed_swap_pte",
		.pages = "1s 1. 510o",
		.knobs = KNOBS4(O(9), 0, 0, 0),
		.expect = { SKIP(0, 9, EXCEED_SWAP_PTE) },
		.result = MTHPD_SCAN_EXCEED_SWAP_PTE,
	},
	{
		.name = "all limits 0, empty page before a swap entry: exceed_none_pte",
		.pages = "1. 1s 510o",
		.knobs = KNOBS4(O(9), 0, 0, 0),
		.expect = { SKIP(0, 9, EXCEED_NONE_PTE) },
		.result = MTHPD_SCAN_EXCEED_NONE_PTE,
	},
	{
		.name = "all limits 0, shared page before a swap entry: exceed_shared_pte",
		.pages = "1S 1s 510o",
		.knobs = KNOBS4(O(9), 0, 0, 0),
		.expect = { SKIP(0, 9, EXCEED_SHARED_PTE) },
		.result = MTHPD_SCAN_EXCEED_SHARED_PTE,
	},
	{
		.name = "all limits 0, swap entry before a shared page: exceed_swap_pte",
		.pages = "1s 1S 510o",
		.knobs = KNOBS4(O(9), 0, 0, 0),
		.expect = { SKIP(0, 9, EXCEED_SWAP_PTE) },
		.result = MTHPD_SCAN_EXCEED_SWAP_PTE,
	},
	/* --- mthp_collapse(): PMD order. --- */
	{
		/* 448 present + 64 swapped = 512 >= 512 - 0: the swap entries
		 * accepted by the scan ("unmapped") count as occupied. */
		.name = "PMD order counts swap entries as occupied",
		.pages = "64s 448o",
		.knobs = KNOBS(O(9) | O(8), 0),
		.expect = { COLLAPSE(0, 9) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 512,
	},
	{
		.name = "PMD order swaps in; below PMD any swap entry refuses the block",
		.pages = "1s 255o 256o",
		.knobs = KNOBS(O(9) | O(8), 511),
		.expect = { COLLAPSE(0, 9) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 512,
	},
	{
		.name = "PMD order accepts shared pages up to max_ptes_shared",
		.pages = "1S 511o",
		.knobs = KNOBS(O(9) | O(8), 511),
		.expect = { COLLAPSE(0, 9) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 512,
	},
	{
		/* seed 005 checks folio_order only !is_pmd_order(order). */
		.name = "PMD order ignores existing mTHP folios",
		.pages = "16o:4 496o",
		.knobs = KNOBS(O(9) | O(4), 0),
		.expect = { COLLAPSE(0, 9) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 512,
	},
	{
		.name = "full range, 2M only",
		.pages = "512o",
		.knobs = KNOBS(O(9), 0),
		.expect = { COLLAPSE(0, 9) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 512,
	},
	/* --- mthp_collapse(): the order walk below PMD. --- */
	{
		.name = "full range, 64K only: 32 blocks, larger orders skipped silently",
		.pages = "512o",
		.knobs = KNOBS(O(4), 0),
		.expect = { COLLAPSES(0, 4, 32) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 512,
	},
	{
		.name = "no size enabled: nothing to walk",
		.pages = "512o",
		.knobs = KNOBS(0, 0),
		.expect = { { 0 } },
		.result = MTHPD_SCAN_FAIL,
	},
	{
		/* Down to 32K at offset 0, then up again as the offset's
		 * alignment allows: max_order_from_offset(16) = 4, (32) = 5... */
		.name = "threshold misses walk down the orders, alignment walks back up",
		.pages = "12o 4. 496o",
		.knobs = KNOBS(ALL_ORDERS, 0),
		.expect = {
			SKIP(0, 9, EXCEED_NONE_PTE), SKIP(0, 8, EXCEED_NONE_PTE),
			SKIP(0, 7, EXCEED_NONE_PTE), SKIP(0, 6, EXCEED_NONE_PTE),
			SKIP(0, 5, EXCEED_NONE_PTE), SKIP(0, 4, EXCEED_NONE_PTE),
			COLLAPSE(0, 3), SKIP(8, 3, EXCEED_NONE_PTE), COLLAPSE(8, 2),
			SKIP(12, 2, EXCEED_NONE_PTE), COLLAPSE(16, 4), COLLAPSE(32, 5),
			COLLAPSE(64, 6), COLLAPSE(128, 7), COLLAPSE(256, 8),
		},
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 8 + 4 + 16 + 32 + 64 + 128 + 256,
	},
	{
		/* At offset 256 the alignment allows order 8, which is off:
		 * the walk goes on to 7 without a block for 8. */
		.name = "disabled orders are passed over without a block",
		.pages = "508o 4.",
		.knobs = KNOBS(O(9) | O(7), 0),
		.expect = { SKIP(0, 9, EXCEED_NONE_PTE), COLLAPSES(0, 7, 3), SKIP(384, 7, EXCEED_NONE_PTE) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 384,
	},
	{
		/* KHUGEPAGED_MIN_MTHP_ORDER: after 16K the walk advances by
		 * 4 pages; at offset 8 order 3 is off, so 16K again. */
		.name = "order 2 is the floor: a miss at 16K moves to the next offset",
		.pages = "3o 1. 252o 256o",
		.knobs = KNOBS(O(8) | O(2), 0),
		.expect = {
			SKIP(0, 8, EXCEED_NONE_PTE), SKIP(0, 2, EXCEED_NONE_PTE),
			COLLAPSES(4, 2, 63), COLLAPSE(256, 8),
		},
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 63 * 4 + 256,
	},
	{
		/* The kernel never enables order 1 for anon memory; even if a
		 * caller sets the bit, the walk must stop at order 2. */
		.name = "order 2 is the floor even with bit 1 set in orders",
		.pages = "3o 1. 252o 256o",
		.knobs = KNOBS(O(8) | O(2) | O(1), 0),
		.expect = {
			SKIP(0, 8, EXCEED_NONE_PTE), SKIP(0, 2, EXCEED_NONE_PTE),
			COLLAPSES(4, 2, 63), COLLAPSE(256, 8),
		},
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 63 * 4 + 256,
	},
	{
		.name = "max_ptes_none 511 scales to (1 << order) - 1 below PMD",
		.pages = "1o 255. 256.",
		.knobs = KNOBS(O(8), 511),
		.expect = { COLLAPSE(0, 8), SKIP(256, 8, EXCEED_NONE_PTE) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 256,
	},
	{
		.name = "max_ptes_none 64 is honoured at PMD order",
		.pages = "448o 64.",
		.knobs = KNOBS(O(9) | O(8), 64),
		.expect = { COLLAPSE(0, 9) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 512,
	},
	{
		/* 200 >= 256 - 64 would collapse if 64 applied below PMD.
		 * Only misses: the kernel's last_result stays SCAN_FAIL. */
		.name = "max_ptes_none 64 acts as 0 below PMD",
		.pages = "200o 56. 200o 56.",
		.knobs = KNOBS(O(9) | O(8), 64),
		.expect = {
			SKIP(0, 9, EXCEED_NONE_PTE), SKIP(0, 8, EXCEED_NONE_PTE),
			SKIP(256, 8, EXCEED_NONE_PTE),
		},
		.result = MTHPD_SCAN_FAIL,
	},
	{
		/*
		 * The article's creep example (seed 000, "Avoiding mTHP creep"):
		 * max_ptes_none 2, a 16-page range with 4 unused pages, 2 in each
		 * half.  The 16-page candidate sees 4 unused pages and fails; if
		 * 2 applied, each 8-page half (2 unused) would collapse, and on
		 * the next scan the 16 pages would all look used and collapse at
		 * 64K, and so on up to PMD size: "creep".  The kernel prevents
		 * it by treating any max_ptes_none other than 0 and 511 as 0
		 * below PMD order, so neither 64K nor 32K collapses here.
		 */
		.name = "creep (article): max_ptes_none 2 acts as 0, no 64K and no 32K",
		.pages = "4ooo. 496o",
		.knobs = KNOBS(O(4) | O(3), 2),
		.expect = {
			SKIP(0, 4, EXCEED_NONE_PTE), SKIP(0, 3, EXCEED_NONE_PTE),
			SKIP(8, 3, EXCEED_NONE_PTE), COLLAPSES(16, 4, 31),
		},
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 496,
	},
	{
		/* With 511 the kernel always collapses at the largest order:
		 * the creep is the configured intent, reached in one pass. */
		.name = "creep (article): max_ptes_none 511 collapses at the largest order",
		.pages = "4ooo. 496o",
		.knobs = KNOBS(O(4) | O(3), 511),
		.expect = { COLLAPSES(0, 4, 32) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 512,
	},
	{
		/* __collapse_huge_page_swapin() bails on the first swap entry
		 * below PMD order (seed 003); lower orders might still succeed
		 * (seed 009), so 128K is tried at the same offset. */
		.name = "below PMD any swap entry: exceed_swap_pte, next order at the same offset",
		.pages = "1s 255o 256o",
		.knobs = KNOBS(O(8) | O(7), 511),
		.expect = {
			SKIP(0, 8, EXCEED_SWAP_PTE), SKIP(0, 7, EXCEED_SWAP_PTE),
			COLLAPSE(128, 7), COLLAPSE(256, 8),
		},
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 384,
	},
	{
		/* collapse_max_ptes_shared() is 0 below PMD order (seed 003). */
		.name = "below PMD any shared page: exceed_shared_pte, next order at the same offset",
		.pages = "128o 1S 127o 255o 1.",
		.knobs = KNOBS(O(9) | O(8) | O(7), 0),
		.expect = {
			SKIP(0, 9, EXCEED_NONE_PTE), SKIP(0, 8, EXCEED_SHARED_PTE), COLLAPSE(0, 7),
			SKIP(128, 7, EXCEED_SHARED_PTE), SKIP(256, 8, EXCEED_NONE_PTE),
			COLLAPSE(256, 7), SKIP(384, 7, EXCEED_NONE_PTE),
		},
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 256,
	},
	{
		.name = "shared pages in every block: the range result is exceed_shared_pte",
		.pages = "1S 255o 1S 255o",
		.knobs = KNOBS(O(8), 511),
		.expect = { SKIP(0, 8, EXCEED_SHARED_PTE), SKIP(256, 8, EXCEED_SHARED_PTE) },
		.result = MTHPD_SCAN_EXCEED_SHARED_PTE,
	},
	{
		/* seed 005: folio_order(folio) >= order is SCAN_PTE_MAPPED_HUGEPAGE,
		 * which goes to next_offset: 32K at offset 0 is never tried. */
		.name = "a 64K folio is not collapsed to 64K: pte_mapped_hugepage, then the next offset",
		.pages = "16o:4 15o 1. 224o 256o",
		.knobs = KNOBS(O(8) | O(7) | O(6) | O(5) | O(4) | O(3), 0),
		.expect = {
			SKIP(0, 8, EXCEED_NONE_PTE), SKIP(0, 7, EXCEED_NONE_PTE),
			SKIP(0, 6, EXCEED_NONE_PTE), SKIP(0, 5, EXCEED_NONE_PTE),
			SKIP(0, 4, PTE_MAPPED_HUGEPAGE), SKIP(16, 4, EXCEED_NONE_PTE),
			COLLAPSE(16, 3), SKIP(24, 3, EXCEED_NONE_PTE), COLLAPSE(32, 5),
			COLLAPSE(64, 6), COLLAPSE(128, 7), COLLAPSE(256, 8),
		},
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 8 + 32 + 64 + 128 + 256,
	},
	{
		/* SCAN_PTE_MAPPED_HUGEPAGE does not set last_result. */
		.name = "a 1M folio at 1M: pte_mapped_hugepage leaves the range result 'failed'",
		.pages = "256o:8 256.",
		.knobs = KNOBS(O(8), 0),
		.expect = { SKIP(0, 8, PTE_MAPPED_HUGEPAGE), SKIP(256, 8, EXCEED_NONE_PTE) },
		.result = MTHPD_SCAN_FAIL,
	},
	{
		.name = "an existing 32K folio does not stop a 64K collapse",
		.pages = "8o:3 8o 496o",
		.knobs = KNOBS(O(4), 0),
		.expect = { COLLAPSES(0, 4, 32) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 512,
	},
	/*
	 * Guard markers, as in mm/khugepaged.c of Linux 7.2 (linux-mm
	 * 001dba133cfa): collapse_huge_page() calls __collapse_huge_page_swapin()
	 * whenever the scan counted "unmapped" PTEs, and that loop treats every
	 * !pte_none && !pte_present PTE as swap: below PMD order it answers
	 * SCAN_EXCEED_SWAP_PTE; at PMD order do_swap_page() on a guard marker
	 * gives VM_FAULT_SIGSEGV, hence SCAN_FAIL, which ends the range in
	 * mthp_collapse() (default case).
	 */
	{
		.name = "guard marker at PMD order: swap-in fails, the range ends",
		.pages = "1g 255o 256o",
		.knobs = KNOBS(O(9) | O(8), 0),
		.expect = { SKIP(0, 9, FAIL) },
		.result = MTHPD_SCAN_FAIL,
	},
	{
		.name = "guard marker below PMD: exceed_swap_pte, then the next offset",
		.pages = "1g 255o 256o",
		.knobs = KNOBS(O(8), 511),
		.expect = { SKIP(0, 8, EXCEED_SWAP_PTE), COLLAPSE(256, 8) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 256,
	},
	{
		.name = "guard marker, 2M only: the range result is failed",
		.pages = "1g 511o",
		.knobs = KNOBS(O(9), 511),
		.expect = { SKIP(0, 9, FAIL) },
		.result = MTHPD_SCAN_FAIL,
	},
	/* --- The walk with a kernel: the fallbacks of mthp_collapse(). --- */
	{
		.name = "kernel: alloc_huge_page_failed tries the next order; nothing succeeds",
		.pages = "512o",
		.knobs = KNOBS(O(9) | O(8), 511),
		.kernel = true,
		.script = {
			{ 0, 9, MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL },
			{ 0, 8, MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL },
			{ 256, 8, MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL },
		},
		.expect = {
			TRIED(0, 9, MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL),
			TRIED(0, 8, MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL),
			TRIED(256, 8, MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL),
		},
		.result = MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL,
	},
	{
		.name = "kernel: alloc_huge_page_failed at 2M, 1M succeeds: the range succeeded",
		.pages = "512o",
		.knobs = KNOBS(O(9) | O(8), 511),
		.kernel = true,
		.script = { { 0, 9, MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL } },
		.expect = { TRIED(0, 9, MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL), COLLAPSES(0, 8, 2) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 512,
	},
	{
		.name = "kernel: an earlier alloc failure outranks the last result",
		.pages = "512o",
		.knobs = KNOBS(O(9) | O(8), 511),
		.kernel = true,
		.script = {
			{ 0, 9, MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL },
			{ 0, 8, MTHPD_RESULT_TRY_AGAIN },
			{ 256, 8, MTHPD_SCAN_EXCEED_SHARED_PTE },
		},
		.expect = {
			TRIED(0, 9, MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL),
			TRIED(0, 8, MTHPD_RESULT_TRY_AGAIN),
			TRIED(256, 8, MTHPD_SCAN_EXCEED_SHARED_PTE),
		},
		.result = MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL,
	},
	{
		.name = "kernel: try_again tries the next order at the same offset",
		.pages = "512o",
		.knobs = KNOBS(O(9) | O(8) | O(7), 511),
		.kernel = true,
		.script = {
			{ 0, 9, MTHPD_RESULT_TRY_AGAIN },
			{ 0, 8, MTHPD_RESULT_TRY_AGAIN },
			{ 128, 7, MTHPD_RESULT_TRY_AGAIN },
		},
		.expect = {
			TRIED(0, 9, MTHPD_RESULT_TRY_AGAIN), TRIED(0, 8, MTHPD_RESULT_TRY_AGAIN),
			COLLAPSE(0, 7), TRIED(128, 7, MTHPD_RESULT_TRY_AGAIN), COLLAPSE(256, 8),
		},
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 384,
	},
	{
		.name = "kernel: try_again everywhere: the range result is try_again",
		.pages = "512o",
		.knobs = KNOBS(O(8), 511),
		.kernel = true,
		.script = { { 0, 8, MTHPD_RESULT_TRY_AGAIN }, { 256, 8, MTHPD_RESULT_TRY_AGAIN } },
		.expect = { TRIED(0, 8, MTHPD_RESULT_TRY_AGAIN), TRIED(256, 8, MTHPD_RESULT_TRY_AGAIN) },
		.result = MTHPD_RESULT_TRY_AGAIN,
	},
	{
		.name = "kernel: exceed_shared_pte found by the kernel tries the next order",
		.pages = "512o",
		.knobs = KNOBS(O(8) | O(7), 511),
		.kernel = true,
		.script = { { 0, 8, MTHPD_SCAN_EXCEED_SHARED_PTE } },
		.expect = { TRIED(0, 8, MTHPD_SCAN_EXCEED_SHARED_PTE), COLLAPSES(0, 7, 2), COLLAPSE(256, 8) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 512,
	},
	{
		.name = "kernel: unsupported and noop go to the next offset, no smaller order",
		.pages = "512o",
		.knobs = KNOBS(O(8) | O(7), 511),
		.kernel = true,
		.script = { { 0, 8, MTHPD_RESULT_UNSUPPORTED }, { 256, 8, MTHPD_RESULT_NOOP } },
		.expect = { TRIED(0, 8, MTHPD_RESULT_UNSUPPORTED), TRIED(256, 8, MTHPD_RESULT_NOOP) },
		.result = MTHPD_SCAN_FAIL,
	},
	{
		.name = "kernel: pte_mapped_hugepage goes to the next offset",
		.pages = "512o",
		.knobs = KNOBS(O(8) | O(7), 511),
		.kernel = true,
		.script = { { 0, 8, MTHPD_SCAN_PTE_MAPPED_HUGEPAGE } },
		.expect = { TRIED(0, 8, MTHPD_SCAN_PTE_MAPPED_HUGEPAGE), COLLAPSE(256, 8) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 256,
	},
	{
		.name = "kernel: vma_check_failed (default case) stops the range",
		.pages = "512o",
		.knobs = KNOBS(O(8) | O(7), 511),
		.kernel = true,
		.script = { { 0, 8, MTHPD_SCAN_VMA_CHECK } },
		.expect = { TRIED(0, 8, MTHPD_SCAN_VMA_CHECK) },
		.result = MTHPD_SCAN_VMA_CHECK,
	},
	{
		.name = "kernel: ccgroup_charge_failed is not a fallback case: it stops the range",
		.pages = "512o",
		.knobs = KNOBS(O(9) | O(8), 511),
		.kernel = true,
		.script = { { 0, 9, MTHPD_SCAN_CGROUP_CHARGE_FAIL } },
		.expect = { TRIED(0, 9, MTHPD_SCAN_CGROUP_CHARGE_FAIL) },
		.result = MTHPD_SCAN_CGROUP_CHARGE_FAIL,
	},
	{
		.name = "kernel: page_pmd_mapped stops the range",
		.pages = "512o",
		.knobs = KNOBS(O(9) | O(8), 511),
		.kernel = true,
		.script = { { 0, 9, MTHPD_SCAN_PMD_MAPPED } },
		.expect = { TRIED(0, 9, MTHPD_SCAN_PMD_MAPPED) },
		.result = MTHPD_SCAN_PMD_MAPPED,
	},
	{
		.name = "kernel: process_exited after a success stops; the range succeeded",
		.pages = "512o",
		.knobs = KNOBS(O(8) | O(7), 511),
		.kernel = true,
		.script = { { 256, 8, MTHPD_RESULT_PROCESS_EXITED } },
		.expect = { COLLAPSE(0, 8), TRIED(256, 8, MTHPD_RESULT_PROCESS_EXITED) },
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 256,
	},
	{
		.name = "kernel: blocks the planner refuses are never handed to the kernel",
		.pages = "1s 255o 256o",
		.knobs = KNOBS(O(8) | O(7), 511),
		.kernel = true,
		.expect = {
			SKIP(0, 8, EXCEED_SWAP_PTE), SKIP(0, 7, EXCEED_SWAP_PTE),
			COLLAPSE(128, 7), COLLAPSE(256, 8),
		},
		.result = MTHPD_SCAN_SUCCEED, .nr_collapsed = 384,
	},
};

/* The fake collapse_huge_page(): answers from a script, records each call. */
struct fake_kernel {
	const struct step *script;
	const struct mthpd_range_scan *scan;
	bool wrong_scan;
	unsigned int nr_calls;
	struct step calls[MTHPD_PLAN_MAX_BLOCKS];
};

static enum mthpd_scan_result fake_collapse(void *userdata, const struct mthpd_range_scan *scan,
					    unsigned int offset, unsigned int order)
{
	struct fake_kernel *k = userdata;
	enum mthpd_scan_result r = MTHPD_SCAN_SUCCEED;

	if (scan != k->scan)
		k->wrong_scan = true;
	for (const struct step *s = k->script; s && s->order; s++)
		if (s->offset == offset && s->order == order)
			r = s->result;
	if (k->nr_calls < ARRAY_SIZE(k->calls))
		k->calls[k->nr_calls] = (struct step){ offset, order, r };
	k->nr_calls++;
	return r;
}

static unsigned int count_occupied(const struct mthpd_range_scan *s, unsigned int from,
				   unsigned int to)
{
	unsigned int n = 0;

	for (unsigned int i = from; i < to; i++)
		n += mthpd_bit(s->occupied, i);
	return n;
}

static void dump_plan(const struct mthpd_range_plan *p)
{
	fprintf(stderr, "    actual: result %s, %u collapsed, %u blocks:\n",
		mthpd_result_name(p->result), p->nr_collapsed, p->nr_blocks);
	for (unsigned int i = 0; i < p->nr_blocks; i++)
		fprintf(stderr, "      %3u/%u %-8s %-20s %-22s occupied %u\n", p->blocks[i].offset,
			p->blocks[i].order,
			p->blocks[i].action == MTHPD_ACTION_COLLAPSE ? "collapse" : "skip",
			mthpd_result_name(p->blocks[i].reason),
			mthpd_result_name(p->blocks[i].result), p->blocks[i].occupied);
}

/* Compares @p with @expect block by block, occupied counted from @s. */
static void check_blocks(const struct mthpd_range_scan *s, const struct mthpd_range_plan *p,
			 const struct exp_block *expect, size_t nr_expect)
{
	unsigned int n = 0, sum = 0;
	bool ok = true;

	for (size_t e = 0; e < nr_expect && expect[e].order; e++)
		for (unsigned int k = 0; k < (expect[e].count ? expect[e].count : 1); k++, n++) {
			const unsigned int off = expect[e].offset + (k << expect[e].order);
			const unsigned int end = off + (1U << expect[e].order);
			const struct mthpd_block *b = &p->blocks[n];

			if (n >= p->nr_blocks) {
				n++;
				ok = false;
				continue;
			}
			if (b->offset != off || b->order != expect[e].order ||
			    b->action != expect[e].action || b->reason != expect[e].reason ||
			    b->result != expect[e].result ||
			    b->occupied != count_occupied(s, off, end)) {
				test_fail(__FILE__, __LINE__,
					  "block %u: expected %u/%u %s %s %s occupied %u", n, off,
					  expect[e].order,
					  expect[e].action == MTHPD_ACTION_COLLAPSE ? "collapse" : "skip",
					  mthpd_result_name(expect[e].reason),
					  mthpd_result_name(expect[e].result),
					  count_occupied(s, off, end));
				ok = false;
			} else {
				test_pass();
			}
		}
	TEST_ASSERT_EQ(p->nr_blocks, n);
	for (unsigned int i = 0; i < p->nr_blocks; i++)
		if (p->blocks[i].result == MTHPD_SCAN_SUCCEED)
			sum += 1U << p->blocks[i].order;
	TEST_ASSERT_EQ(p->nr_collapsed, sum);
	if (!ok || p->nr_blocks != n)
		dump_plan(p);
}

/* The fake kernel got exactly the blocks predicted to succeed, in walk order. */
static void check_calls(const struct mthpd_range_plan *p, const struct fake_kernel *k)
{
	unsigned int n = 0;

	TEST_ASSERT(!k->wrong_scan);
	for (unsigned int i = 0; i < p->nr_blocks; i++) {
		if (p->blocks[i].reason != MTHPD_SCAN_SUCCEED)
			continue;
		if (n < k->nr_calls) {
			TEST_ASSERT_EQ(k->calls[n].offset, p->blocks[i].offset);
			TEST_ASSERT_EQ(k->calls[n].order, p->blocks[i].order);
			TEST_ASSERT_EQ(k->calls[n].result, p->blocks[i].result);
		}
		n++;
	}
	TEST_ASSERT_EQ(k->nr_calls, n);
}

static void test_plan_cases(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct plan_case *c = &cases[i];
		struct mthpd_range_scan scan;
		struct mthpd_range_plan plan;
		struct fake_kernel kernel = { .script = c->script, .scan = &scan };

		test_case = c->name;
		TEST_ASSERT_EQ(test_pattern_scan(c->pages, &scan), 0);
		scan.addr = RANGE_ADDR;
		scan.pmd_mapped = c->pmd_mapped;
		memset(&plan, 0xa5, sizeof(plan)); /* the planner must fill every field */
		mthpd_plan_range(&scan, &c->knobs, c->kernel ? fake_collapse : NULL, &kernel, &plan);

		TEST_ASSERT_EQ(plan.addr, RANGE_ADDR);
		TEST_ASSERT_STREQ(mthpd_result_name(plan.result), mthpd_result_name(c->result));
		TEST_ASSERT_EQ(plan.nr_collapsed, c->nr_collapsed);
		check_blocks(&scan, &plan, c->expect, ARRAY_SIZE(c->expect));
		if (c->kernel)
			check_calls(&plan, &kernel);
		else
			TEST_ASSERT_EQ(kernel.nr_calls, 0);
	}
	test_case = NULL;
}

/*
 * Every 16K block has 3 of 4 pages: with max_ptes_none 0 every candidate
 * misses, so the walk visits all 255 (offset, order) pairs, in pre-order
 * (a block, then its left half, then its right half).  This is also the
 * most blocks a range can have: MTHPD_PLAN_MAX_BLOCKS.
 */
static unsigned int preorder(unsigned int offset, unsigned int order, unsigned int n,
			     struct mthpd_block *ret)
{
	ret[n++] = (struct mthpd_block){ .offset = (uint16_t)offset, .order = (uint8_t)order };
	if (order > MTHPD_MIN_ORDER) {
		n = preorder(offset, order - 1, n, ret);
		n = preorder(offset + (1U << (order - 1)), order - 1, n, ret);
	}
	return n;
}

static void test_plan_every_block_misses(void)
{
	static struct mthpd_block want[MTHPD_PLAN_MAX_BLOCKS];
	const struct mthpd_knobs k = KNOBS(ALL_ORDERS, 0);
	struct mthpd_range_scan scan;
	struct mthpd_range_plan plan;
	unsigned int n;

	test_case = "every block misses";
	TEST_ASSERT_EQ(test_pattern_scan("128ooo.", &scan), 0);
	mthpd_plan_range(&scan, &k, NULL, NULL, &plan);
	n = preorder(0, MTHPD_PMD_ORDER, 0, want);
	TEST_ASSERT_EQ(n, MTHPD_PLAN_MAX_BLOCKS);
	TEST_ASSERT_EQ(plan.nr_blocks, n);
	TEST_ASSERT_EQ(plan.result, MTHPD_SCAN_FAIL);
	TEST_ASSERT_EQ(plan.nr_collapsed, 0);
	for (unsigned int i = 0; i < n && i < plan.nr_blocks; i++) {
		TEST_ASSERT_EQ(plan.blocks[i].offset, want[i].offset);
		TEST_ASSERT_EQ(plan.blocks[i].order, want[i].order);
		TEST_ASSERT_EQ(plan.blocks[i].reason, MTHPD_SCAN_EXCEED_NONE_PTE);
		TEST_ASSERT_EQ(plan.blocks[i].occupied, 3U << (want[i].order - 2));
	}
	test_case = NULL;
}

/*
 * A PMD-order threshold miss records nr_occupied_ptes, which includes the
 * swap entries ("unmapped"), while plan.h and the README define occupied as
 * present pages (the bitmap weight), as every other block records it.
 */
static void test_plan_occupied_excludes_swap(void)
{
	const struct mthpd_knobs k = KNOBS(O(9) | O(8), 0);
	struct mthpd_range_scan scan;
	struct mthpd_range_plan plan;

	test_case = "PMD-order miss with swap entries: occupied";
	TEST_ASSERT_EQ(test_pattern_scan("1s 255o 255o 1.", &scan), 0);
	mthpd_plan_range(&scan, &k, NULL, NULL, &plan);
	TEST_ASSERT_EQ(plan.nr_blocks, 3);
	TEST_ASSERT_EQ(plan.blocks[0].order, 9);
	TEST_ASSERT_EQ(plan.blocks[0].reason, MTHPD_SCAN_EXCEED_NONE_PTE);
	TEST_ASSERT_EQ(plan.blocks[1].occupied, 255);
	TEST_ASSERT_EQ(plan.blocks[0].occupied, 510);
	test_case = NULL;
}

/* xorshift64: the same pseudo-random ranges on every run. */
static uint64_t rnd(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

static void random_scan(uint64_t *state, struct mthpd_range_scan *s)
{
	/* Runs of one kind, so that blocks of every size both hit and miss. */
	static const char kinds[] = "oooooooo..Ssg";
	unsigned int i = 0;

	memset(s, 0, sizeof(*s));
	s->folio_orders_known = true; /* as after kpageflags, which the folio orders stand for */
	while (i < MTHPD_PMD_NR) {
		const char c = kinds[rnd(state) % (sizeof(kinds) - 1)];
		unsigned int len = 1U << (rnd(state) % 8), order = 0;

		if (c == 'o' && rnd(state) % 4 == 0)
			order = 2 + (unsigned int)(rnd(state) % 4);
		for (; len && i < MTHPD_PMD_NR; len--, i++) {
			if (c == 'o' || c == 'S') {
				mthpd_set_bit(s->occupied, i);
				s->folio_order[i] = (uint8_t)order;
			}
			if (c == 'S')
				mthpd_set_bit(s->shared, i);
			if (c == 's')
				mthpd_set_bit(s->swap, i);
			if (c == 'g')
				mthpd_set_bit(s->guard, i);
		}
	}
}

/* What must hold for any range: each block once, aligned, collapses disjoint
 * and allowed by the kernel's rules for their order. */
static void check_plan_invariants(const struct mthpd_range_scan *s, const struct mthpd_knobs *k,
				  const struct mthpd_range_plan *p)
{
	uint64_t covered[MTHPD_BITMAP_WORDS] = { 0 };
	unsigned int sum = 0;

	TEST_ASSERT(p->nr_blocks <= MTHPD_PLAN_MAX_BLOCKS);
	for (unsigned int i = 0; i < p->nr_blocks; i++) {
		const struct mthpd_block *b = &p->blocks[i];
		const unsigned int nr = 1U << b->order, end = b->offset + nr;

		TEST_ASSERT(b->order >= MTHPD_MIN_ORDER && b->order <= MTHPD_PMD_ORDER);
		TEST_ASSERT_EQ(b->offset % nr, 0);
		TEST_ASSERT(end <= MTHPD_PMD_NR);
		TEST_ASSERT(p->nr_blocks == 1 || (k->orders & (1U << b->order)));
		TEST_ASSERT(i == 0 || b->offset >= p->blocks[i - 1].offset);
		TEST_ASSERT_EQ(b->action == MTHPD_ACTION_COLLAPSE, b->reason == MTHPD_SCAN_SUCCEED);
		TEST_ASSERT_EQ(b->result, b->reason);
		for (unsigned int j = 0; j < i; j++)
			TEST_ASSERT(p->blocks[j].offset != b->offset || p->blocks[j].order != b->order);
		if (b->reason != MTHPD_SCAN_SUCCEED)
			continue;
		sum += nr;
		TEST_ASSERT(count_occupied(s, b->offset, end) +
				    (b->order == MTHPD_PMD_ORDER ? mthpd_bitmap_weight(s->swap, 0, end) +
								    mthpd_bitmap_weight(s->guard, 0, end) : 0) >=
			    nr - mthpd_collapse_max_ptes_none(k, b->order));
		for (unsigned int j = b->offset; j < end; j++) {
			TEST_ASSERT(!mthpd_bit(covered, j));
			mthpd_set_bit(covered, j);
			TEST_ASSERT(!mthpd_bit(s->guard, j));
			if (b->order < MTHPD_PMD_ORDER) {
				TEST_ASSERT(!mthpd_bit(s->swap, j) && !mthpd_bit(s->shared, j));
				TEST_ASSERT(s->folio_order[j] < b->order);
			}
		}
	}
	TEST_ASSERT_EQ(p->nr_collapsed, sum);
	TEST_ASSERT_EQ(p->result == MTHPD_SCAN_SUCCEED, sum > 0);
}

static void test_plan_random_invariants(void)
{
	static const struct mthpd_knobs knobs[] = {
		KNOBS(O(9), 511), KNOBS(ALL_ORDERS, 0), KNOBS(ALL_ORDERS, 511),
		KNOBS(ALL_ORDERS, 64), KNOBS(O(9) | O(4) | O(2), 0), KNOBS(O(8) | O(3), 511),
		KNOBS4(ALL_ORDERS, 511, 511, 511),
	};
	uint64_t state = 0x9e3779b97f4a7c15ULL;
	struct mthpd_range_scan scan;
	struct mthpd_range_plan plan;

	test_case = "random ranges";
	for (unsigned int n = 0; n < 2000; n++) {
		random_scan(&state, &scan);
		for (size_t i = 0; i < ARRAY_SIZE(knobs); i++) {
			mthpd_plan_range(&scan, &knobs[i], NULL, NULL, &plan);
			check_plan_invariants(&scan, &knobs[i], &plan);
		}
	}
	test_case = NULL;
}

/* mm/khugepaged.c: max_order_from_offset() (seed 008). */
static void test_max_order_from_offset(void)
{
	static const struct {
		unsigned int offset, order;
	} t[] = {
		{ 0, 9 },   { 1, 0 },   { 2, 1 },   { 3, 0 },   { 4, 2 },   { 8, 3 },
		{ 12, 2 },  { 16, 4 },  { 24, 3 },  { 32, 5 },  { 64, 6 },  { 128, 7 },
		{ 256, 8 }, { 384, 7 }, { 448, 6 }, { 508, 2 }, { 511, 0 }, { 512, 9 },
		{ 1024, 9 }, /* __ffs() is 10: capped at HPAGE_PMD_ORDER */
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		test_case = "max_order_from_offset";
		TEST_ASSERT_EQ(mthpd_max_order_from_offset(t[i].offset), t[i].order);
	}
	test_case = NULL;
}

/* collapse_max_ptes_{none,swap,shared}() for khugepaged (seed 003). */
static void test_collapse_max_ptes(void)
{
	static const struct {
		unsigned int knob, order, none, swap, shared;
	} t[] = {
		/* knob  order  none  swap shared: the same knob value for all three */
		{ 511, 9, 511, 511, 511 }, { 511, 8, 255, 0, 0 }, { 511, 4, 15, 0, 0 },
		{ 511, 2, 3, 0, 0 },       { 0, 9, 0, 0, 0 },     { 0, 4, 0, 0, 0 },
		{ 64, 9, 64, 64, 64 },     { 64, 8, 0, 0, 0 },    { 64, 2, 0, 0, 0 },
		{ 2, 3, 0, 0, 0 },         { 256, 9, 256, 256, 256 }, { 510, 8, 0, 0, 0 },
		{ 1, 2, 0, 0, 0 },
	};

	test_case = "collapse_max_ptes_*";
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		const struct mthpd_knobs k = KNOBS4(ALL_ORDERS, t[i].knob, t[i].knob, t[i].knob);

		TEST_ASSERT_EQ(mthpd_collapse_max_ptes_none(&k, t[i].order), t[i].none);
		TEST_ASSERT_EQ(mthpd_collapse_max_ptes_swap(&k, t[i].order), t[i].swap);
		TEST_ASSERT_EQ(mthpd_collapse_max_ptes_shared(&k, t[i].order), t[i].shared);
	}
	test_case = NULL;
}

/* The kernel warns ("defaulting to 0") only for mTHP orders and 0 < n < 511. */
static void test_max_ptes_none_degraded(void)
{
	static const struct {
		uint32_t orders;
		unsigned int none;
		bool degraded;
	} t[] = {
		{ O(9), 64, false },        { O(9) | O(4), 64, true }, { O(4), 0, false },
		{ O(4), 511, false },       { O(4), 510, true },       { O(2), 1, true },
		{ ALL_ORDERS, 2, true },    { 0, 64, false },          { ALL_ORDERS, 511, false },
	};

	test_case = "max_ptes_none_degraded";
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		const struct mthpd_knobs k = KNOBS(t[i].orders, t[i].none);

		TEST_ASSERT_EQ(mthpd_knobs_max_ptes_none_degraded(&k), t[i].degraded);
	}
	test_case = NULL;
}

/* The pattern helper itself: a typo in a table must not pass silently. */
static void test_pattern(void)
{
	struct mthpd_range_scan s;
	char buf[256];

	test_case = "pattern";
	TEST_ASSERT_EQ(test_pattern_scan("511o", &s), -EINVAL);
	TEST_ASSERT_EQ(test_pattern_scan("513o", &s), -EINVAL);
	TEST_ASSERT_EQ(test_pattern_scan("256o 256x", &s), -EINVAL);
	TEST_ASSERT_EQ(test_pattern_scan("512o:10", &s), -EINVAL);
	TEST_ASSERT_EQ(test_pattern_scan("16o:4 4ooo. 1S 1s 1g 1z 476.", &s), 0);
	TEST_ASSERT_STREQ(test_pattern_describe(&s, buf, sizeof(buf)),
			  "16o:4 3o 1. 3o 1. 3o 1. 3o 1. 1S 1s 1g 477.");
	TEST_ASSERT_EQ(mthpd_bitmap_weight(s.occupied, 0, MTHPD_PMD_NR), 29);
	test_case = NULL;
}

int main(void)
{
	test_pattern();
	test_max_order_from_offset();
	test_collapse_max_ptes();
	test_max_ptes_none_degraded();
	test_plan_cases();
	test_plan_every_block_misses();
	test_plan_occupied_excludes_swap();
	test_plan_random_invariants();
	return test_finish();
}
