/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /proc/PID/pagemap entries: the values measured on Linux 6.18
 * (kernel-interfaces-probe.md §1) decoded by mthpd_pagemap_kind(), and the
 * reader against a fake pagemap file (one u64 per page, as the kernel's).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "fake-kpageflags.h"
#include "pagemap.h"
#include "test.h"
#include "uapi.h"
#include "util.h"

static void test_pagemap_kind(void)
{
	static const struct {
		const char *what;
		uint64_t entry;
		enum mthpd_pte_kind kind;
		uint64_t pfn;
		bool exclusive, file;
	} t[] = {
		{ "written private anon", 0x810000000010ec47ULL, MTHPD_PTE_PRESENT, 0x10ec47, true, false },
		{ "never touched", 0, MTHPD_PTE_NONE, 0, false, false },
		{ "the 4K zero page", 0x8000000000003b30ULL, MTHPD_PTE_PRESENT, 0x3b30, false, false },
		{ "COW-shared after fork", 0x8000000000117ab4ULL, MTHPD_PTE_PRESENT, 0x117ab4, false, false },
		{ "COW broken", 0x8100000000116f9aULL, MTHPD_PTE_PRESENT, 0x116f9a, true, false },
		/* swap type 0, offset 3: bits 0-54 are not a PFN here */
		{ "swapped out", 0x4000000000000060ULL, MTHPD_PTE_SWAP, 0x60, false, false },
		{ "THP head", 0x810000000016b200ULL, MTHPD_PTE_PRESENT, 0x16b200, true, false },
		{ "THP last tail", 0x810000000016b3ffULL, MTHPD_PTE_PRESENT, 0x16b3ff, true, false },
		{ "huge zero page", 0xa000000000141800ULL, MTHPD_PTE_PRESENT, 0x141800, false, true },
		{ "MAP_SHARED|MAP_ANONYMOUS", 0xa10000000010e6c9ULL, MTHPD_PTE_PRESENT, 0x10e6c9, true, true },
		{ "private file map", 0xa000000000103e8dULL, MTHPD_PTE_PRESENT, 0x103e8d, false, true },
		/* guard markers show bit 62 too: bit 58 must win */
		{ "guard region", 0x440000000000009fULL, MTHPD_PTE_GUARD, 0x9f, false, false },
		{ "read without CAP_SYS_ADMIN", 0x8100000000000000ULL, MTHPD_PTE_PRESENT, 0, true, false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		test_case = t[i].what;
		TEST_ASSERT_EQ(mthpd_pagemap_kind(t[i].entry), t[i].kind);
		TEST_ASSERT_EQ(mthpd_pagemap_pfn(t[i].entry), t[i].pfn);
		TEST_ASSERT_EQ(!!(t[i].entry & PM_MMAP_EXCLUSIVE), t[i].exclusive);
		TEST_ASSERT_EQ(!!(t[i].entry & PM_FILE), t[i].file);
		TEST_ASSERT_EQ(!!(t[i].entry & PM_SOFT_DIRTY), false); /* compiled out on 6.18 */
	}
	test_case = NULL;
}

#define PMD(n) ((uint64_t)(n) * MTHPD_PMD_SIZE)
#define PAGE_INDEX(addr) ((addr) / MTHPD_PAGE_SIZE)

static void test_pagemap_read(void)
{
	static uint64_t e[MTHPD_PMD_NR];
	struct mthpd_pagemap pm = { .fd = test_kpageflags_open() };

	test_case = "pagemap_read";
	TEST_ASSERT(pm.fd >= 0);
	/* 1 MiB of address space: entries for 256 pages, the 3rd one present */
	TEST_ASSERT_EQ(test_kpageflags_set(pm.fd, PAGE_INDEX(0x2000), 1, 0x810000000010ec47ULL, 0), 0);
	TEST_ASSERT_EQ(test_kpageflags_set(pm.fd, 255, 1, 0, 0), 0);
	TEST_ASSERT_EQ(mthpd_pagemap_read(&pm, 0, 256, e), 0);
	TEST_ASSERT_EQ(e[2], 0x810000000010ec47ULL);
	TEST_ASSERT_EQ(e[1], 0);
	TEST_ASSERT_EQ(mthpd_pagemap_read(&pm, 0x2000, 1, e), 0);
	TEST_ASSERT_EQ(e[0], 0x810000000010ec47ULL);
	TEST_ASSERT_EQ(pm.nr_range_reads, 2);
	/* A pagemap fd of an exited process reads EOF: -ESRCH, not a short read. */
	TEST_ASSERT_EQ(mthpd_pagemap_read(&pm, 0, MTHPD_PMD_NR, e), -ESRCH);
	(void)close(pm.fd);
	test_case = NULL;
}

static void test_pagemap_next_range(void)
{
	static uint64_t e[MTHPD_PMD_NR];
	struct mthpd_pagemap pm = { .fd = test_kpageflags_open(), .use_scan = false };
	uint64_t cursor = PMD(0), addr = 0;

	test_case = "pagemap_next_range without PAGEMAP_SCAN";
	TEST_ASSERT(pm.fd >= 0);
	/* PMD 1: one swap entry at its end; PMD 3: one present page; 0, 2, 4 empty */
	TEST_ASSERT_EQ(test_kpageflags_set(pm.fd, PAGE_INDEX(PMD(2)) - 1, 1, 0x4000000000000060ULL, 0), 0);
	TEST_ASSERT_EQ(test_kpageflags_set(pm.fd, PAGE_INDEX(PMD(3)) + 7, 1, 0x810000000010ec47ULL, 0), 0);
	TEST_ASSERT_EQ(test_kpageflags_set(pm.fd, PAGE_INDEX(PMD(5)) - 1, 1, 0, 0), 0);

	TEST_ASSERT_EQ(mthpd_pagemap_next_range(&pm, &cursor, PMD(5), &addr, e), 1);
	TEST_ASSERT_EQ(addr, PMD(1));
	TEST_ASSERT_EQ(cursor, PMD(2));
	TEST_ASSERT_EQ(e[511], 0x4000000000000060ULL);
	TEST_ASSERT_EQ(mthpd_pagemap_next_range(&pm, &cursor, PMD(5), &addr, e), 1);
	TEST_ASSERT_EQ(addr, PMD(3));
	TEST_ASSERT_EQ(cursor, PMD(4));
	TEST_ASSERT_EQ(e[7], 0x810000000010ec47ULL);
	TEST_ASSERT_EQ(mthpd_pagemap_next_range(&pm, &cursor, PMD(5), &addr, e), 0);
	TEST_ASSERT_EQ(cursor, PMD(5));
	TEST_ASSERT_EQ(pm.nr_range_reads, 5); /* every PMD read once */
	/* past the end of the file: the process is gone */
	cursor = PMD(5);
	TEST_ASSERT_EQ(mthpd_pagemap_next_range(&pm, &cursor, PMD(6), &addr, e), -ESRCH);
	(void)close(pm.fd);
	test_case = NULL;
}

/*
 * A PAGEMAP_SCAN that answers with a fixed list of regions, as 6.18 does for
 * a VMA at PMD(0) holding: PMD(0) one PMD-mapped THP, PMD(1) and PMD(2)
 * too (adjacent huge mappings come back as one region), PMD(3) the huge
 * zero page, PMD(4) small pages in [8, 16), PMD(5) all small pages.
 */
static const struct page_region scan_answer[] = {
	{ PMD(0), PMD(3), PAGE_IS_PRESENT | PAGE_IS_HUGE },
	{ PMD(3), PMD(4), PAGE_IS_PRESENT | PAGE_IS_HUGE | PAGE_IS_PFNZERO },
	{ PMD(4) + 8 * MTHPD_PAGE_SIZE, PMD(4) + 16 * MTHPD_PAGE_SIZE, PAGE_IS_PRESENT },
	{ PMD(5), PMD(6), PAGE_IS_PRESENT },
};
static unsigned int scan_calls;

static int scripted_scan(const struct mthpd_kif *kif _unused_, int fd _unused_, unsigned long req,
			 void *arg)
{
	struct pm_scan_arg *a = arg;
	struct page_region *out = (struct page_region *)(uintptr_t)a->vec;
	unsigned int n = 0;

	if (req != PAGEMAP_SCAN)
		return -ENOTTY;
	scan_calls++;
	for (size_t i = 0; i < ARRAY_SIZE(scan_answer) && n < a->vec_len; i++)
		if (scan_answer[i].end > a->start && scan_answer[i].start < a->end)
			out[n++] = scan_answer[i];
	a->walk_end = a->end;
	return (int)n;
}

static void test_pagemap_next_range_huge(void)
{
	static const struct mthpd_kif_ops ops = { .ioctl = scripted_scan };
	static const struct mthpd_kif kif = { .ops = &ops };
	static uint64_t e[MTHPD_PMD_NR];
	struct mthpd_scan_hit queue[MTHPD_SCAN_QUEUE];
	struct mthpd_pagemap pm = { .kif = &kif, .fd = test_kpageflags_open(), .use_scan = true,
				    .queue = queue };
	uint64_t cursor = PMD(0), addr = 0;
	static const enum mthpd_huge want[] = { MTHPD_HUGE_PMD, MTHPD_HUGE_PMD, MTHPD_HUGE_PMD,
						MTHPD_HUGE_ZERO, MTHPD_HUGE_NO, MTHPD_HUGE_NO };

	test_case = "pagemap_next_range: PAGE_IS_HUGE ranges are not read";
	TEST_ASSERT(pm.fd >= 0);
	mthpd_pagemap_reset(&pm);
	TEST_ASSERT_EQ(test_kpageflags_set(pm.fd, PAGE_INDEX(PMD(4)) + 8, 1, 0x810000000010ec47ULL, 0), 0);
	TEST_ASSERT_EQ(test_kpageflags_set(pm.fd, PAGE_INDEX(PMD(5)), 1, 0x810000000020ec47ULL, 0), 0);
	TEST_ASSERT_EQ(test_kpageflags_set(pm.fd, PAGE_INDEX(PMD(6)) - 1, 1, 0x810000000020ec48ULL, 0), 0);
	for (unsigned int i = 0; i < ARRAY_SIZE(want); i++) {
		TEST_ASSERT_EQ(mthpd_pagemap_next_range(&pm, &cursor, PMD(6), &addr, e), 1);
		TEST_ASSERT_EQ(addr, PMD(i));
		TEST_ASSERT_EQ(pm.last_huge, want[i]);
	}
	TEST_ASSERT_EQ(e[0], 0x810000000020ec47ULL);
	TEST_ASSERT_EQ(mthpd_pagemap_next_range(&pm, &cursor, PMD(6), &addr, e), 0);
	/* two reads: PMD(4)'s span [8, 16) and PMD(5); the four huge ones none */
	TEST_ASSERT_EQ(pm.nr_range_reads, 2);
	TEST_ASSERT_EQ(pm.nr_huge_skipped, 4);
	TEST_ASSERT_EQ(scan_calls, 1);
	(void)close(pm.fd);
	test_case = NULL;
}

int main(void)
{
	test_pagemap_kind();
	test_pagemap_read();
	test_pagemap_next_range();
	test_pagemap_next_range_huge();
	return test_finish();
}
