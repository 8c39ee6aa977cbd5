/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pacing (lib/pace.c): the clock that keeps mthpd's work on one process to
 * a share of wall time, the rest it asks for, and the pace= values.
 */
#include <errno.h>
#include <stdint.h>

#include "pace.h"
#include "test.h"
#include "util.h"

/* Back-to-back slices of work, each started when the last rest ended, keep the share. */
static void test_duty_cycle(void)
{
	static const unsigned int percents[] = {1, 5, 10, 25, 50, 99};

	for (size_t k = 0; k < ARRAY_SIZE(percents); k++) {
		unsigned int pct = percents[k];
		uint64_t next = 0, now = 1000000, start = now, work = 0;

		test_case = "duty cycle";
		for (int i = 0; i < 1000; i++) {
			uint64_t w = 500 + (uint64_t)(i % 7) * 700; /* 0.5..4.7 ms, as 2M collapses */
			uint64_t rest;

			now += w;
			work += w;
			rest = mthpd_pace_charge(&next, now, w, pct);
			TEST_ASSERT_EQ(rest, mthpd_pace_wait(next, now));
			now += rest;
		}
		/* work / wall within 1% of the asked share (the slack lets a slice run over) */
		TEST_ASSERT(work * 100 * 100 <= (uint64_t)(pct + 1) * 100 * (now - start));
		TEST_ASSERT(work * 100 * 100 >= (uint64_t)(pct > 1 ? pct - 1 : 0) * 100 * (now - start));
	}
	test_case = NULL;
}

static void test_charge(void)
{
	uint64_t next = 0;

	test_case = "10%: 2 ms of work ask for 18 ms of rest";
	TEST_ASSERT_EQ(mthpd_pace_charge(&next, 100000, 2000, 10), 18000);
	TEST_ASSERT_EQ(next, 118000);

	test_case = "work during the rest is charged after it";
	TEST_ASSERT_EQ(mthpd_pace_charge(&next, 110000, 1000, 10), 18000);
	TEST_ASSERT_EQ(next, 128000);

	test_case = "time not used is not saved up: no burst after an idle hour";
	next = 1000;
	TEST_ASSERT_EQ(mthpd_pace_charge(&next, 3600000000ULL, 2000, 10), 18000);
	TEST_ASSERT_EQ(next, 3600018000ULL);

	test_case = "short work within the slack goes on";
	next = 0;
	TEST_ASSERT_EQ(mthpd_pace_charge(&next, 50000, 50, 10), 0); /* 450 us ahead */
	TEST_ASSERT_EQ(next, 50450);
	TEST_ASSERT_EQ(mthpd_pace_charge(&next, 50100, 50, 10), 0); /* 850 us ahead */
	TEST_ASSERT_EQ(mthpd_pace_charge(&next, 50150, 50, 10), 1300); /* past the slack */

	test_case = "not paced: 0 and 100 charge nothing";
	next = 7;
	TEST_ASSERT_EQ(mthpd_pace_charge(&next, 50000, 5000, 0), 0);
	TEST_ASSERT_EQ(mthpd_pace_charge(&next, 50000, 5000, 100), 0);
	TEST_ASSERT_EQ(next, 7);

	test_case = "work longer than the clock's age (at boot)";
	next = 0;
	TEST_ASSERT_EQ(mthpd_pace_charge(&next, 100, 5000, 50), 9900);

	test_case = "a slice of hours counts as one hour: nothing wraps";
	next = 0;
	TEST_ASSERT_EQ(mthpd_pace_charge(&next, 36000000000ULL, 18000000000ULL, 1), 342000000000ULL);
	next = 0;
	TEST_ASSERT_EQ(mthpd_pace_charge(&next, UINT64_MAX / 2, UINT64_MAX / 2, 1), 0);
	TEST_ASSERT_EQ(next, 360000000000ULL);

	test_case = "wait";
	TEST_ASSERT_EQ(mthpd_pace_wait(0, 1000), 0);
	TEST_ASSERT_EQ(mthpd_pace_wait(1000 + MTHPD_PACE_SLACK_USEC, 1000), 0);
	TEST_ASSERT_EQ(mthpd_pace_wait(1001 + MTHPD_PACE_SLACK_USEC, 1000), MTHPD_PACE_SLACK_USEC + 1);
	test_case = NULL;
}

static void test_parse(void)
{
	static const struct {
		const char *v;
		int r;
		unsigned int pct;
	} t[] = {
		{"no", 0, 0},          {"NO", 0, 0},     {"yes", 0, MTHPD_PACE_DEFAULT_PERCENT},
		{"10%", 0, 10},        {"10", 0, 10},    {"1%", 0, 1},
		{"99%", 0, 99},        {"100%", 0, 0},   {"0%", -EINVAL, 0},
		{"0", -EINVAL, 0},     {"101%", -EINVAL, 0}, {"%", -EINVAL, 0},
		{"", -EINVAL, 0},      {"10%%", -EINVAL, 0}, {"-5%", -EINVAL, 0},
		{" 10%", -EINVAL, 0},  {"10 %", -EINVAL, 0}, {"1e1%", -EINVAL, 0},
		{"0000010%", 0, 10}, {"000000010%", -EINVAL, 0}, {"4294967306%", -EINVAL, 0}, {"true", -EINVAL, 0},
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		unsigned int pct = 12345;

		test_case = t[i].v;
		TEST_ASSERT_EQ(mthpd_pace_parse(t[i].v, &pct), t[i].r);
		TEST_ASSERT_EQ(pct, t[i].r == 0 ? t[i].pct : 12345);
	}
	test_case = NULL;
}

int main(void)
{
	test_duty_cycle();
	test_charge();
	test_parse();
	return test_finish();
}
