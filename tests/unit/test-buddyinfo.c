/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/buddyinfo.c: free 2 MiB blocks from /proc/buddyinfo, a table of real
 * texts (Linux 6.18) and of broken ones.
 */
#include <errno.h>
#include <stdint.h>

#include "buddyinfo.h"
#include "test.h"
#include "util.h"

static void test_parse(void)
{
	static const struct {
		const char *what, *text;
		unsigned int min_order;
		int ret;
		uint64_t want;
	} t[] = {
		{ "this machine: DMA left out, DMA32 and Normal order 9 and 10",
		  "Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \n"
		  "Node 0, zone    DMA32      0      4      2      2      1      2      0      3      3      1    753 \n"
		  "Node 0, zone   Normal   6686   6028   3036   1458   1327    479     49    130     47      2    656 \n",
		  9, 0, 1 + 2 * 753 + 2 + 2 * 656 },
		{ "fragmented: no free block of order 9 or 10 outside DMA",
		  "Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \n"
		  "Node 0, zone    DMA32  31023  20012   9011   2001    500    120     31      7      0      0      0 \n"
		  "Node 0, zone   Normal 412345 301234  88012   9123   1200    230     12      1      0      0      0 \n",
		  9, 0, 0 },
		{ "only order-10 blocks: two order-9 blocks each",
		  "Node 0, zone   Normal      5      5      5      5      5      5      5      5      5      0      4 \n",
		  9, 0, 8 },
		{ "two nodes and a Movable zone",
		  "Node 0, zone   Normal    100     50     20     10      5      3      2      1      1      1      0 \n"
		  "Node 1, zone   Normal    100     50     20     10      5      3      2      1      1      0      2 \n"
		  "Node 1, zone  Movable      0      0      0      0      0      0      0      0      0      3      0 \n",
		  9, 0, 1 + 4 + 3 },
		{ "order 10 alone", "Node 0, zone   Normal 1 2 3 4 5 6 7 8 9 10 11\n", 10, 0, 11 },
		{ "no trailing newline or space", "Node 0, zone   Normal 0 0 0 0 0 0 0 0 0 7 1", 9, 0, 9 },
		{ "empty: nothing free", "", 9, 0, 0 },
		{ "a kernel with fewer orders (MAX_PAGE_ORDER 8)",
		  "Node 0, zone   Normal 1 1 1 1 1 1 1 1 1\n", 9, 0, 0 },
		{ "not a buddyinfo line", "MemTotal: 1234 kB\n", 9, -EINVAL, 0 },
		{ "no zone name", "Node 0, zone \n", 9, -EINVAL, 0 },
		{ "a word among the counts", "Node 0, zone Normal 1 2 x 4\n", 9, -EINVAL, 0 },
		{ "12 counts", "Node 0, zone Normal 1 2 3 4 5 6 7 8 9 10 11 12\n", 9, -EINVAL, 0 },
		{ "a count too large", "Node 0, zone Normal 99999999999999999999999\n", 9, -EINVAL, 0 },
		{ "order 11 asked", "Node 0, zone Normal 1\n", 11, -ERANGE, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		uint64_t got = 12345;

		test_case = t[i].what;
		TEST_ASSERT_EQ(mthpd_buddyinfo_parse(t[i].text, t[i].min_order, &got), t[i].ret);
		TEST_ASSERT_EQ(got, t[i].ret == 0 ? t[i].want : 12345);
	}
	test_case = NULL;
}

int main(void)
{
	test_parse();
	return test_finish();
}
