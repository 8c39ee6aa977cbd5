/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Option parsing: --sizes lists and the max_ptes_* values, good and bad. */
#include <errno.h>
#include <string.h>

#include "knobs.h"
#include "test.h"
#include "util.h"

#define O(n) (1U << (n))

static const struct {
	const char *in;
	int ret;
	uint32_t orders;
	const char *bad; /* the item named in the error */
} sizes[] = {
	{"2M", 0, O(9), NULL},
	{"2m", 0, O(9), NULL},
	{"2048K", 0, O(9), NULL},
	{"16K", 0, O(2), NULL},
	{"2M,64K", 0, O(9) | O(4), NULL},
	{"64k,2M,64K", 0, O(9) | O(4), NULL},
	{"16K,32K,64K,128K,256K,512K,1M,2M", 0, 0x3fc, NULL},
	{"1024K", 0, O(8), NULL},
	{"8K", -EINVAL, 0, "8K"},        /* order 1: not an anon mTHP size */
	{"4K", -EINVAL, 0, "4K"},
	{"3K", -EINVAL, 0, "3K"},
	{"4M", -EINVAL, 0, "4M"},        /* above PMD */
	{"48K", -EINVAL, 0, "48K"},      /* not a power of two */
	{"2M,", -EINVAL, 0, ""},         /* empty item */
	{",2M", -EINVAL, 0, ""},
	{"", -EINVAL, 0, ""},
	{"2", -EINVAL, 0, "2"},          /* no unit */
	{"2MB", -EINVAL, 0, "2MB"},
	{"-2M", -EINVAL, 0, "-2M"},
	{" 2M", -EINVAL, 0, " 2M"},
	{"2M,64X", -EINVAL, 0, "64X"},
	{"99999999999999999999M", -EINVAL, 0, "99999999999999999999M"},
};

static const struct {
	const char *in;
	unsigned int max;
	int ret;
	unsigned int value;
} uints[] = {
	{"0", 511, 0, 0},
	{"511", 511, 0, 511},
	{"512", 511, -ERANGE, 0},
	{"64", 511, 0, 64},
	{"-1", 511, -EINVAL, 0},
	{"+1", 511, -EINVAL, 0},
	{"", 511, -EINVAL, 0},
	{"1x", 511, -EINVAL, 0},
	{" 1", 511, -EINVAL, 0},
	{"0x10", 511, -EINVAL, 0},
	{"99999999999999999999999", 511, -ERANGE, 0},
};

int main(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		uint32_t orders = 0xdead;
		char bad[32] = "unset";

		test_case = sizes[i].in;
		TEST_ASSERT_EQ(mthpd_parse_sizes(sizes[i].in, &orders, bad, sizeof(bad)), sizes[i].ret);
		if (sizes[i].ret == 0) {
			TEST_ASSERT_EQ(orders, sizes[i].orders);
		} else {
			TEST_ASSERT_EQ(orders, 0xdead); /* untouched on error */
			TEST_ASSERT_STREQ(bad, sizes[i].bad);
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(uints); i++) {
		unsigned int v = 12345;

		test_case = uints[i].in;
		TEST_ASSERT_EQ(mthpd_parse_uint(uints[i].in, uints[i].max, &v), uints[i].ret);
		TEST_ASSERT_EQ(v, uints[i].ret == 0 ? uints[i].value : 12345);
	}
	test_case = "order names";
	TEST_ASSERT_STREQ(mthpd_order_name(9), "2M");
	TEST_ASSERT_STREQ(mthpd_order_name(4), "64K");
	TEST_ASSERT_STREQ(mthpd_order_name(2), "16K");
	TEST_ASSERT_STREQ(mthpd_order_name(1), "?");
	TEST_ASSERT_STREQ(mthpd_order_name(10), "?");

	test_case = "order lists, largest first, and back through the parser";
	{
		char buf[64], small[8];
		uint32_t back = 0;

		TEST_ASSERT_STREQ(mthpd_orders_name((1U << 9) | (1U << 4) | (1U << 2), buf,
						    sizeof(buf)), "2M,64K,16K");
		TEST_ASSERT_EQ(mthpd_parse_sizes(buf, &back, small, sizeof(small)), 0);
		TEST_ASSERT_EQ(back, (1U << 9) | (1U << 4) | (1U << 2));
		TEST_ASSERT_STREQ(mthpd_orders_name(0, buf, sizeof(buf)), "");
		/* cut at a whole name, never in the middle of one */
		TEST_ASSERT_STREQ(mthpd_orders_name((1U << 9) | (1U << 8) | (1U << 7), small,
						    sizeof(small)), "2M,1M");
	}
	return test_finish();
}
