/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mthpd_scan_range(): 512 pagemap entries and a fake /proc/kpageflags (an
 * unlinked file in /tmp, one u64 per PFN) become the bitmaps of the planner.
 * Entries are the raw values measured on Linux 6.18
 * (kernel-interfaces-probe.md §1), flags those of §2.  Each case also says
 * how many PFNs' flags the scan may read: kpageflags is the costly part.
 * And mthpd_bitmap_weight(), the kernel's bitmap_weight_from().
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fake-kpageflags.h"
#include "pattern.h"
#include "scan.h"
#include "test.h"
#include "util.h"

/* Measured pagemap entries (§1). */
#define E_ANON 0x810000000010ec47ULL     /* written private anon: present, exclusive */
#define E_ZERO 0x8000000000003b30ULL     /* read-only touched: the 4K zero page */
#define E_COW 0x8000000000117ab4ULL      /* COW-shared after fork */
#define E_SWAP 0x4000000000000060ULL     /* swapped out */
#define E_GUARD 0x440000000000009fULL    /* MADV_GUARD_INSTALL marker */
#define E_THP 0x810000000016b200ULL      /* head of a PMD-mapped THP */
#define E_HUGE_ZERO 0xa000000000141800ULL /* the huge zero page: bit 61 set */
#define PFN_ZERO 0x3b30ULL
#define PFN_COW 0x117ab4ULL
#define PFN_THP 0x16b200ULL

/* @n entries: @entry, then @entry + @step, + 2 * @step... (steps the PFN). */
struct entry_run {
	unsigned int n;
	uint64_t entry, step;
};

/* Flags of @n PFNs from @pfn: @first, then @rest. */
struct kpf_run {
	uint64_t pfn;
	unsigned int n;
	uint64_t first, rest;
};

struct scan_case {
	const char *name;
	struct entry_run entries[6]; /* ends at n == 0; the rest of the range is none */
	struct kpf_run kpf[4];       /* ends at n == 0 */
	bool no_kpageflags;          /* kpageflags_fd = -1 */
	bool want_folio_orders;
	uint64_t known_zero_pfn;     /* sc->zero_pfn before the scan; 0: not known */
	int ret;
	const char *expect;          /* tests/lib/pattern.h */
	bool pmd_mapped, folio_orders_known;
	uint64_t zero_pfn;           /* sc->zero_pfn after; 0: not known (UINT64_MAX) */
	uint64_t nr_kpageflags_pfns;
	/* a 2M folio mapped in part: its head PFN (0: none), pages mapped, where */
	uint64_t partial_pfn;
	unsigned int partial_mapped, partial_page;
};

static const struct scan_case cases[] = {
	{
		/* Bit 56 set: never the zero page, never shared; and no page
		 * i at a PFN 512k + i, which could be left of a 2M folio. */
		.name = "exclusive pages need no kpageflags",
		.entries = { { 512, 0x8100000000100001ULL, 3 } },
		.expect = "512o",
	},
	{
		/* page 0 at a 512-aligned PFN: it could be all that is left */
		.name = "a page where a 2M folio's head would be, not a THP: one read",
		.entries = { { 1, 0x8100000000300000ULL, 0 } },
		.kpf = { { 0x300000, 1, TEST_KPF_ANON, 0 } },
		.expect = "1o 511.",
		.nr_kpageflags_pfns = 1,
	},
	{
		.name = "zero page: not occupied; its PFN is read once and remembered",
		.entries = { { 256, E_ZERO, 0 }, { 256, 0x8100000000100000ULL, 2 } },
		.kpf = { { PFN_ZERO, 1, TEST_KPF_ZERO, 0 } },
		.expect = "256z 256o",
		.zero_pfn = PFN_ZERO, .nr_kpageflags_pfns = 1,
	},
	{
		.name = "zero PFN already known: no kpageflags read at all",
		.entries = { { 8, E_ZERO, 0 }, { 1, E_ANON, 0 } },
		.known_zero_pfn = PFN_ZERO,
		.expect = "8z 1o 503.",
		.zero_pfn = PFN_ZERO,
	},
	{
		.name = "COW-shared page (not exclusive, not zero): occupied and shared",
		.entries = { { 1, E_COW, 0 }, { 1, E_ANON, 0 } },
		.kpf = { { PFN_COW, 1, TEST_KPF_ANON_COW, 0 } },
		.expect = "1S 1o 510.",
		.nr_kpageflags_pfns = 1,
	},
	{
		.name = "every kind of entry: zero, shared, swap, guard, none, anon",
		.entries = { { 1, E_ZERO, 0 }, { 1, E_COW, 0 }, { 1, E_SWAP, 0 }, { 1, E_GUARD, 0 },
			     { 1, 0, 0 }, { 1, E_ANON, 0 } },
		.kpf = { { PFN_ZERO, 1, TEST_KPF_ZERO, 0 }, { PFN_COW, 1, TEST_KPF_ANON_COW, 0 } },
		.expect = "1z 1S 1s 1g 1. 1o 506.",
		.zero_pfn = PFN_ZERO, .nr_kpageflags_pfns = 2,
	},
	{
		/* is_zero_pfn() cannot tell without kpageflags: the safe side is
		 * "shared", which refuses the block below PMD. */
		.name = "no kpageflags: a non-exclusive page counts as shared",
		.entries = { { 1, E_ZERO, 0 } },
		.no_kpageflags = true,
		.expect = "1S 511.",
	},
	{
		/* Empty fake kpageflags: EOF, a PFN beyond the memory map. */
		.name = "non-exclusive page past the end of kpageflags: not the zero page",
		.entries = { { 1, E_COW, 0 } },
		.expect = "1S 511.",
		.nr_kpageflags_pfns = 1,
	},
	{
		/* 512 consecutive PFNs from a 512-aligned head: the head and page 256. */
		.name = "PMD-mapped THP: page_pmd_mapped from two 8-byte reads",
		.entries = { { 512, E_THP, 1 } },
		.kpf = { { PFN_THP, 512, TEST_KPF_THP_HEAD, TEST_KPF_THP_TAIL } },
		.want_folio_orders = true,
		.expect = "512o:9", .pmd_mapped = true, .folio_orders_known = true,
		.nr_kpageflags_pfns = 2,
	},
	{
		/* Small folios back to back look the same from the head alone. */
		.name = "consecutive PFNs with a head at 0 and another at 256: not PMD-mapped",
		.entries = { { 512, E_THP, 1 } },
		.kpf = { { PFN_THP, 1, TEST_KPF_THP_HEAD, TEST_KPF_THP_HEAD },
			 { PFN_THP + 256, 1, TEST_KPF_THP_HEAD, TEST_KPF_THP_HEAD } },
		/* and not one folio mapped in part either: 2 reads more */
		.expect = "512o",
		.nr_kpageflags_pfns = 4,
	},
	{
		.name = "512 consecutive PFNs whose head is not a THP head: not PMD-mapped",
		.entries = { { 512, 0x8100000000200000ULL, 1 } },
		.kpf = { { 0x200000, 512, TEST_KPF_ANON, TEST_KPF_ANON } },
		.expect = "512o",
		.nr_kpageflags_pfns = 2,
	},
	{
		.name = "the same with folio orders wanted: one more read of 512 PFNs",
		.entries = { { 512, 0x8100000000200000ULL, 1 } },
		.kpf = { { 0x200000, 512, TEST_KPF_ANON, TEST_KPF_ANON } },
		.want_folio_orders = true,
		.expect = "512o", .folio_orders_known = true,
		.nr_kpageflags_pfns = 2 + 512,
	},
	{
		/* Measured flags of the huge zero page's head; the entries here
		 * lack bit 61 so that only the flags can tell. */
		.name = "a head with HEAD|THP|ZERO_PAGE (huge zero page) is not a THP",
		.entries = { { 512, 0x8100000000141800ULL, 1 } },
		.kpf = { { 0x141800, 512, TEST_KPF_HUGE_ZERO_HEAD, TEST_KPF_HUGE_ZERO_TAIL } },
		.expect = "512o",
		.nr_kpageflags_pfns = 2,
	},
	{
		.name = "consecutive PFNs from a head that is not 512-aligned: no read",
		.entries = { { 512, E_THP + 1, 1 } },
		.kpf = { { PFN_THP + 1, 512, TEST_KPF_THP_HEAD, TEST_KPF_THP_TAIL } },
		.expect = "512o",
	},
	{
		.name = "511 pages of a THP and a hole: not PMD-mapped, a folio mapped in part",
		.entries = { { 511, E_THP, 1 } },
		.kpf = { { PFN_THP, 512, TEST_KPF_THP_HEAD, TEST_KPF_THP_TAIL } },
		.expect = "511o 1.",
		.nr_kpageflags_pfns = 2,
		.partial_pfn = PFN_THP, .partial_mapped = 511, .partial_page = 0,
	},
	{
		/* jemalloc purged pages 100-355 (MADV_DONTNEED): the head and page 256 are gone */
		.name = "a 2M folio with half its pages given back: 256 held, two reads",
		.entries = { { 100, E_THP, 1 }, { 256, 0, 0 }, { 156, E_THP + 356, 1 } },
		.kpf = { { PFN_THP, 512, TEST_KPF_THP_HEAD, TEST_KPF_THP_TAIL } },
		.expect = "100o 256. 156o",
		.nr_kpageflags_pfns = 2,
		.partial_pfn = PFN_THP, .partial_mapped = 256, .partial_page = 0,
	},
	{
		.name = "the pages given back faulted in again as small pages: still 256 held",
		.entries = { { 100, E_THP, 1 }, { 256, 0x8100000000300001ULL, 3 },
			     { 156, E_THP + 356, 1 } },
		.kpf = { { PFN_THP, 512, TEST_KPF_THP_HEAD, TEST_KPF_THP_TAIL } },
		.expect = "512o",
		.nr_kpageflags_pfns = 2,
		.partial_pfn = PFN_THP, .partial_mapped = 256, .partial_page = 0,
	},
	{
		.name = "one page of a 2M folio left, at page 300: 511 held",
		.entries = { { 300, 0, 0 }, { 1, E_THP + 300, 0 } },
		.kpf = { { PFN_THP, 512, TEST_KPF_THP_HEAD, TEST_KPF_THP_TAIL } },
		.expect = "300. 1o 211.",
		.nr_kpageflags_pfns = 2,
		.partial_pfn = PFN_THP, .partial_mapped = 1, .partial_page = 300,
	},
	{
		/* shared with a child after fork: the kernel would not split it */
		.name = "a 2M folio mapped in part, one page of it shared: not reported",
		.entries = { { 10, E_THP, 1 }, { 1, (E_THP + 10) & ~(1ULL << 56), 0 } },
		.kpf = { { PFN_THP, 512, TEST_KPF_THP_HEAD, TEST_KPF_THP_TAIL } },
		.expect = "10o 1S 501.",
		.nr_kpageflags_pfns = 1 + 2,
	},
	{
		/* Measured: the huge zero page shows bit 61 on all 512 entries;
		 * the kernel finds a huge PMD there (SCAN_PMD_MAPPED). */
		.name = "huge zero page mapped by a PMD: pmd_mapped, nothing occupied",
		.entries = { { 512, E_HUGE_ZERO, 1 } },
		.no_kpageflags = true,
		.expect = "512.", .pmd_mapped = true, .folio_orders_known = true,
	},
	{
		.name = "bit 61 on a present page of a private anon range: not occupied",
		.entries = { { 16, E_HUGE_ZERO, 1 }, { 496, 0x8100000000100001ULL, 3 } },
		.expect = "16z 496o",
	},
	{
		.name = "folio orders: a 64K folio and 16 small pages, one read per PFN run",
		.entries = { { 16, 0x8100000000002000ULL, 1 }, { 16, 0x8100000000300000ULL, 1 } },
		.kpf = { { 0x2000, 16, TEST_KPF_THP_HEAD, TEST_KPF_THP_TAIL },
			 { 0x300000, 16, TEST_KPF_ANON, TEST_KPF_ANON } },
		.want_folio_orders = true,
		/* pages 0-15 at PFNs 0x2000 + i: a 2M folio's head checked (2) */
		.expect = "16o:4 16o 480.", .folio_orders_known = true,
		.nr_kpageflags_pfns = 2 + 32,
	},
	{
		.name = "folio orders not wanted: no read, orders unknown",
		.entries = { { 16, 0x8100000000002000ULL, 1 }, { 16, 0x8100000000300000ULL, 1 } },
		.kpf = { { 0x2000, 16, TEST_KPF_THP_HEAD, TEST_KPF_THP_TAIL },
			 { 0x300000, 16, TEST_KPF_ANON, TEST_KPF_ANON } },
		.expect = "32o 480.",
		.nr_kpageflags_pfns = 2,
	},
	{
		.name = "folio orders: a PFN past the end of kpageflags is not a folio",
		.entries = { { 16, 0x8100000000002000ULL, 1 }, { 1, 0x8100000000fffff0ULL, 0 } },
		.kpf = { { 0x2000, 16, TEST_KPF_THP_HEAD, TEST_KPF_THP_TAIL } },
		.want_folio_orders = true,
		.expect = "16o:4 1o 495.", .folio_orders_known = true,
		.nr_kpageflags_pfns = 2 + 17,
	},
	{
		.name = "folio orders: swap, guard and zero pages are not read",
		.entries = { { 4, E_SWAP, 0 }, { 4, E_GUARD, 0 }, { 4, E_ZERO, 0 },
			     { 8, 0x8100000000002008ULL, 1 } },
		.kpf = { { PFN_ZERO, 1, TEST_KPF_ZERO, 0 },
			 { 0x2000, 16, TEST_KPF_THP_HEAD, TEST_KPF_THP_TAIL } },
		.want_folio_orders = true,
		/* 8 tails whose head is out of view: a folio of 9+ pages, order >= 4 */
		.expect = "4s 4g 4z 8o:4 492.", .folio_orders_known = true,
		.zero_pfn = PFN_ZERO, .nr_kpageflags_pfns = 1 + 8,
	},
};

static void fill_entries(const struct entry_run *runs, size_t nr_runs, uint64_t *e)
{
	unsigned int i = 0;

	memset(e, 0, MTHPD_PMD_NR * sizeof(*e));
	for (size_t r = 0; r < nr_runs && runs[r].n; r++)
		for (unsigned int k = 0; k < runs[r].n && i < MTHPD_PMD_NR; k++)
			e[i++] = runs[r].entry + k * runs[r].step;
}

static bool bitmaps_equal(const uint64_t *a, const uint64_t *b)
{
	return memcmp(a, b, MTHPD_BITMAP_WORDS * sizeof(*a)) == 0;
}

static void check_scan(const struct mthpd_range_scan *got, const struct mthpd_range_scan *want)
{
	char g[1024], w[1024];
	bool same = bitmaps_equal(got->occupied, want->occupied) &&
		    bitmaps_equal(got->swap, want->swap) && bitmaps_equal(got->guard, want->guard) &&
		    bitmaps_equal(got->shared, want->shared) &&
		    memcmp(got->folio_order, want->folio_order, sizeof(got->folio_order)) == 0;

	if (same)
		test_pass();
	else
		test_fail(__FILE__, __LINE__, "scan: got \"%s\", want \"%s\"",
			  test_pattern_describe(got, g, sizeof(g)),
			  test_pattern_describe(want, w, sizeof(w)));
}

static void test_scan_cases(void)
{
	static uint64_t entries[MTHPD_PMD_NR];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct scan_case *c = &cases[i];
		struct mthpd_range_scan got, want;
		struct mthpd_scan_ctx sc;
		int fd, r;

		test_case = c->name;
		fd = test_kpageflags_open();
		TEST_ASSERT(fd >= 0);
		if (fd < 0)
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(c->kpf) && c->kpf[k].n; k++)
			TEST_ASSERT_EQ(test_kpageflags_set(fd, c->kpf[k].pfn, c->kpf[k].n,
							   c->kpf[k].first, c->kpf[k].rest), 0);
		fill_entries(c->entries, ARRAY_SIZE(c->entries), entries);
		mthpd_scan_ctx_init(&sc, c->no_kpageflags ? -1 : fd, c->want_folio_orders);
		if (c->known_zero_pfn)
			sc.zero_pfn = c->known_zero_pfn;

		r = mthpd_scan_range(&sc, 0x7f2a40000000ULL, entries, &got);
		TEST_ASSERT_EQ(r, c->ret);
		TEST_ASSERT_EQ(sc.nr_kpageflags_pfns, c->nr_kpageflags_pfns);
		(void)close(fd);
		if (r < 0)
			continue;
		TEST_ASSERT_EQ(got.addr, 0x7f2a40000000ULL);
		TEST_ASSERT_EQ(got.pmd_mapped, c->pmd_mapped);
		TEST_ASSERT_EQ(got.folio_orders_known, c->folio_orders_known);
		TEST_ASSERT_EQ(sc.zero_pfn, c->zero_pfn ? c->zero_pfn : UINT64_MAX);
		TEST_ASSERT_EQ(got.partial_pfn, c->partial_pfn);
		TEST_ASSERT_EQ(got.partial_mapped, c->partial_mapped);
		TEST_ASSERT_EQ(got.partial_page, c->partial_page);
		TEST_ASSERT_EQ(mthpd_scan_partial_unmapped(&got),
			       c->partial_pfn ? MTHPD_PMD_NR - c->partial_mapped : 0);
		TEST_ASSERT_EQ(test_pattern_scan(c->expect, &want), 0);
		check_scan(&got, &want);
	}
	test_case = NULL;
}

/* The zero PFN learned in one range saves the read in the next. */
static void test_scan_zero_pfn_carried_over(void)
{
	static uint64_t entries[MTHPD_PMD_NR];
	struct mthpd_range_scan s;
	struct mthpd_scan_ctx sc;
	int fd = test_kpageflags_open();

	test_case = "zero PFN carried over to the next range";
	TEST_ASSERT(fd >= 0);
	TEST_ASSERT_EQ(test_kpageflags_set(fd, PFN_ZERO, 1, TEST_KPF_ZERO, 0), 0);
	mthpd_scan_ctx_init(&sc, fd, false);
	TEST_ASSERT_EQ(sc.zero_pfn, UINT64_MAX);
	fill_entries((const struct entry_run[]){ { 3, E_ZERO, 0 }, { 0, 0, 0 } }, 2, entries);
	TEST_ASSERT_EQ(mthpd_scan_range(&sc, 0, entries, &s), 0);
	TEST_ASSERT_EQ(mthpd_scan_range(&sc, MTHPD_PMD_SIZE, entries, &s), 0);
	TEST_ASSERT_EQ(sc.nr_kpageflags_pfns, 1);
	TEST_ASSERT_EQ(mthpd_bitmap_weight(s.occupied, 0, MTHPD_PMD_NR), 0);
	TEST_ASSERT_EQ(s.addr, MTHPD_PMD_SIZE);
	(void)close(fd);
	test_case = NULL;
}

static void test_bitmap_weight_edges(void)
{
	uint64_t bm[MTHPD_BITMAP_WORDS] = { 0 };
	static const struct {
		unsigned int from, to, weight;
	} t[] = {
		/* bits set: 0, 63, 64, 127, 200, 511 */
		{ 0, 0, 0 },     { 5, 5, 0 },     { 512, 512, 0 },   { 0, 1, 1 },     { 1, 63, 0 },
		{ 1, 64, 1 },    { 63, 65, 2 },   { 64, 128, 2 },    { 0, 128, 4 },   { 65, 127, 0 },
		{ 65, 128, 1 },  { 127, 201, 2 }, { 201, 511, 0 },   { 511, 512, 1 }, { 0, 512, 6 },
		{ 60, 200, 3 },  { 60, 201, 4 },  { 448, 512, 1 },
	};

	for (unsigned int b = 0; b < MTHPD_PMD_NR; b++)
		if (b == 0 || b == 63 || b == 64 || b == 127 || b == 200 || b == 511)
			mthpd_set_bit(bm, b);
	test_case = "bitmap_weight edges";
	for (size_t i = 0; i < ARRAY_SIZE(t); i++)
		TEST_ASSERT_EQ(mthpd_bitmap_weight(bm, t[i].from, t[i].to), t[i].weight);

	memset(bm, 0xff, sizeof(bm));
	TEST_ASSERT_EQ(mthpd_bitmap_weight(bm, 0, MTHPD_PMD_NR), 512);
	TEST_ASSERT_EQ(mthpd_bitmap_weight(bm, 3, 509), 506);
	TEST_ASSERT_EQ(mthpd_bitmap_weight(bm, 64, 64), 0);
	test_case = NULL;
}

/* Every [from, to) against prefix sums, for a pseudo-random bitmap. */
static void test_bitmap_weight_all_ranges(void)
{
	uint64_t bm[MTHPD_BITMAP_WORDS], x = 0x2545f4914f6cdd1dULL;
	unsigned int prefix[MTHPD_PMD_NR + 1] = { 0 };
	unsigned int bad = 0;

	for (unsigned int w = 0; w < MTHPD_BITMAP_WORDS; w++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		bm[w] = x;
	}
	for (unsigned int i = 0; i < MTHPD_PMD_NR; i++)
		prefix[i + 1] = prefix[i] + mthpd_bit(bm, i);
	for (unsigned int from = 0; from <= MTHPD_PMD_NR; from++)
		for (unsigned int to = from; to <= MTHPD_PMD_NR; to++)
			if (mthpd_bitmap_weight(bm, from, to) != prefix[to] - prefix[from] && bad++ < 5)
				test_fail(__FILE__, __LINE__, "bitmap_weight(%u, %u) = %u, want %u",
					  from, to, mthpd_bitmap_weight(bm, from, to),
					  prefix[to] - prefix[from]);
	TEST_ASSERT_EQ(bad, 0);
}

int main(void)
{
	test_bitmap_weight_edges();
	test_bitmap_weight_all_ranges();
	test_scan_cases();
	test_scan_zero_pfn_carried_over();
	return test_finish();
}
