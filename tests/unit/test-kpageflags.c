/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /proc/kpageflags: the folio order of each mapped page, inferred from runs
 * of COMPOUND_HEAD|THP + COMPOUND_TAIL|THP flags with consecutive PFNs (the
 * flags carry no order: KPF_THP is set for mTHP too, probe §2), and the
 * reader against a fake kpageflags file.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "fake-kpageflags.h"
#include "kpageflags.h"
#include "pagemap.h"
#include "test.h"
#include "util.h"

enum page_kind {
	P_END,
	P_FOLIO,       /* THP head, then THP tails */
	P_TAILS,       /* THP tails only: the head is not in this run */
	P_SMALL,       /* order-0 anon pages */
	P_ZERO,        /* the 4K zero page */
	P_HUGE_ZERO,   /* the huge zero page: HEAD|THP|ZERO, TAIL|THP|ZERO */
	P_COMPOUND,    /* compound head and tails without THP (not an anon THP) */
	P_INVALID,     /* not read (valid = 0); flags would say THP folio */
	P_INVALID_TAIL, /* not read; flags would say THP tail */
};

/* @n pages of @kind, PFNs from @pfn (all equal for the zero page). */
struct page_run {
	enum page_kind kind;
	unsigned int n;
	uint64_t pfn;
};

struct order_run {
	unsigned int n, order;
};

struct folio_case {
	const char *name;
	struct page_run pages[5];
	struct order_run expect[5];
};

static const struct folio_case cases[] = {
	{
		.name = "64K folio: head + 15 tails, aligned",
		.pages = { { P_FOLIO, 16, 0x10000 } },
		.expect = { { 16, 4 } },
	},
	{
		.name = "PMD folio: head + 511 tails",
		.pages = { { P_FOLIO, 512, 0x16b200 } },
		.expect = { { 512, 9 } },
	},
	{
		.name = "the 4K zero page is never a folio",
		.pages = { { P_ZERO, 8, 0x3b30 } },
		.expect = { { 8, 0 } },
	},
	{
		.name = "the huge zero page (HEAD|THP|ZERO_PAGE) is never a folio",
		.pages = { { P_HUGE_ZERO, 512, 0x141800 } },
		.expect = { { 512, 0 } },
	},
	{
		/* As documented in kpageflags.h: the largest power of two in
		 * the run.  The kernel's check (seed 005) uses folio_order()
		 * of the whole folio, which is at least 4 here: 11 pages with
		 * consecutive PFNs from the head are all in it. */
		/* 11 pages of a power-of-two folio: it has 16 or more (seed 005's check) */
		.name = "partly mapped folio: head + 10 tails is at least order 4",
		.pages = { { P_FOLIO, 11, 0x20000 }, { P_SMALL, 1, 0x20100 } },
		.expect = { { 11, 4 }, { 1, 0 } },
	},
	{
		.name = "head PFN aligned to 4 only: order 2 for a run of 16",
		.pages = { { P_FOLIO, 16, 0x20004 } },
		.expect = { { 16, 2 } },
	},
	{
		/* 8 tails whose head is out of sight: a folio of 9 or more pages */
		.name = "non-consecutive PFNs break the run; 8 tails without a head are order 4",
		.pages = { { P_FOLIO, 8, 0x30000 }, { P_TAILS, 8, 0x30100 } },
		.expect = { { 8, 3 }, { 8, 4 } },
	},
	{
		.name = "an unread page breaks the run",
		.pages = { { P_FOLIO, 4, 0x40000 }, { P_INVALID_TAIL, 1, 0x40004 },
			   { P_TAILS, 11, 0x40005 } },
		.expect = { { 4, 2 }, { 1, 0 }, { 11, 4 } },
	},
	{
		.name = "two adjacent 32K folios: the second head ends the first",
		.pages = { { P_FOLIO, 8, 0x50000 }, { P_FOLIO, 8, 0x50008 } },
		.expect = { { 8, 3 }, { 8, 3 } },
	},
	{
		.name = "small pages around a 16K folio",
		.pages = { { P_SMALL, 3, 0x60000 }, { P_FOLIO, 4, 0x61000 }, { P_SMALL, 1, 0x61004 } },
		.expect = { { 3, 0 }, { 4, 2 }, { 1, 0 } },
	},
	{
		.name = "a head without its tails is order 0",
		.pages = { { P_FOLIO, 1, 0x70000 }, { P_SMALL, 1, 0x70001 } },
		.expect = { { 2, 0 } },
	},
	{
		.name = "compound pages without KPF_THP are not anon folios",
		.pages = { { P_COMPOUND, 16, 0x80000 } },
		.expect = { { 16, 0 } },
	},
	{
		.name = "unread pages are 0 whatever their flags say",
		.pages = { { P_INVALID, 16, 0x90000 } },
		.expect = { { 16, 0 } },
	},
};

static void build(const struct page_run *runs, size_t nr_runs, uint64_t *pfn, uint64_t *flags,
		  uint8_t *valid, unsigned int *ret_n)
{
	unsigned int n = 0;

	for (size_t r = 0; r < nr_runs && runs[r].kind != P_END; r++)
		for (unsigned int k = 0; k < runs[r].n && n < MTHPD_PMD_NR; k++, n++) {
			const bool first = k == 0;

			pfn[n] = runs[r].pfn + (runs[r].kind == P_ZERO ? 0 : k);
			valid[n] = runs[r].kind != P_INVALID && runs[r].kind != P_INVALID_TAIL;
			switch (runs[r].kind) {
			case P_FOLIO:
			case P_INVALID:
				flags[n] = first ? TEST_KPF_THP_HEAD : TEST_KPF_THP_TAIL;
				break;
			case P_TAILS:
			case P_INVALID_TAIL:
				flags[n] = TEST_KPF_THP_TAIL;
				break;
			case P_ZERO:
				flags[n] = TEST_KPF_ZERO;
				break;
			case P_HUGE_ZERO:
				flags[n] = first ? TEST_KPF_HUGE_ZERO_HEAD : TEST_KPF_HUGE_ZERO_TAIL;
				break;
			case P_COMPOUND:
				flags[n] = KPF_BIT(first ? KPF_COMPOUND_HEAD : KPF_COMPOUND_TAIL);
				break;
			case P_SMALL:
			case P_END:
				flags[n] = TEST_KPF_ANON;
				break;
			}
		}
	*ret_n = n;
}

static void test_folio_orders(void)
{
	static uint64_t pfn[MTHPD_PMD_NR], flags[MTHPD_PMD_NR];
	static uint8_t valid[MTHPD_PMD_NR], order[MTHPD_PMD_NR];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct folio_case *c = &cases[i];
		unsigned int n, k = 0;

		test_case = c->name;
		build(c->pages, ARRAY_SIZE(c->pages), pfn, flags, valid, &n);
		memset(order, 0xee, sizeof(order));
		mthpd_kpageflags_folio_orders(pfn, flags, valid, n, order);
		for (size_t e = 0; e < ARRAY_SIZE(c->expect) && c->expect[e].n; e++)
			for (unsigned int j = 0; j < c->expect[e].n; j++, k++)
				if (k < n && order[k] != c->expect[e].order)
					test_fail(__FILE__, __LINE__, "page %u: order %u, want %u", k,
						  order[k], c->expect[e].order);
				else
					test_pass();
		TEST_ASSERT_EQ(k, n);
		/* nothing written past @nr */
		TEST_ASSERT(n == MTHPD_PMD_NR || order[n] == 0xee);
	}
	test_case = NULL;
}

static void test_kpageflags_read(void)
{
	uint64_t got[4] = { 0 };
	int fd = test_kpageflags_open();

	test_case = "kpageflags_read";
	TEST_ASSERT(fd >= 0);
	TEST_ASSERT_EQ(test_kpageflags_set(fd, 10, 1, TEST_KPF_THP_HEAD, 0), 0);
	TEST_ASSERT_EQ(test_kpageflags_set(fd, 11, 2, TEST_KPF_THP_TAIL, TEST_KPF_ZERO), 0);

	TEST_ASSERT_EQ(mthpd_kpageflags_read(fd, 10, 3, got), 0);
	TEST_ASSERT_EQ(got[0], TEST_KPF_THP_HEAD);
	TEST_ASSERT_EQ(got[1], TEST_KPF_THP_TAIL);
	TEST_ASSERT_EQ(got[2], TEST_KPF_ZERO);
	TEST_ASSERT_EQ(mthpd_kpageflags_read(fd, 0, 1, got), 0);
	TEST_ASSERT_EQ(got[0], 0); /* a hole in the file reads as zeros */
	TEST_ASSERT_EQ(mthpd_kpageflags_read(fd, 12, 0, got), 0);
	/* Past the end of memory: EOF, reported as -ERANGE. */
	TEST_ASSERT_EQ(mthpd_kpageflags_read(fd, 11, 3, got), -ERANGE);
	TEST_ASSERT_EQ(mthpd_kpageflags_read(fd, 13, 1, got), -ERANGE);
	TEST_ASSERT_EQ(mthpd_kpageflags_read(fd, 1ULL << 40, 1, got), -ERANGE);
	(void)close(fd);
	TEST_ASSERT_EQ(mthpd_kpageflags_read(-1, 0, 1, got), -EBADF);
	test_case = NULL;
}

int main(void)
{
	test_folio_orders();
	test_kpageflags_read();
	return test_finish();
}
