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
		{"auto", 0, 0},        {"AUTO", 0, 0},   {"auto%", -EINVAL, 0}, {"autos", -EINVAL, 0},
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		struct mthpd_pace_conf c = {.percent = 12345, .autop = true};
		bool autop = t[i].v[0] == 'a' || t[i].v[0] == 'A';

		test_case = t[i].v;
		TEST_ASSERT_EQ(mthpd_pace_parse(t[i].v, &c), t[i].r);
		TEST_ASSERT_EQ(c.percent, t[i].r == 0 ? t[i].pct : 12345);
		TEST_ASSERT_EQ(c.autop, t[i].r == 0 ? autop : true);
		TEST_ASSERT_EQ(mthpd_paced(&c), t[i].r != 0 || autop || t[i].pct != 0);
	}
	test_case = NULL;
}

/* What the service felt: @stall us of PSI, @faults page faults. */
static struct mthpd_pace_felt felt(uint64_t stall, uint64_t faults)
{
	return (struct mthpd_pace_felt){.stall = stall, .faults = faults, .stall_known = true, .faults_known = true};
}

/*
 * pace=auto: a service that feels nothing gets no rest at all; one that
 * waits or faults in a window gets 10% of the CPU, counted in the daemon's
 * CPU time whatever the wall time; once it feels nothing, full speed.
 */
static void test_auto(void)
{
	struct mthpd_pace_auto a = {0};
	struct mthpd_pace_felt f = felt(5000, 100), unknown = {0};
	uint64_t next = 0, now = 1000000, rest;

	test_case = "quiet: no rest, window after window";
	mthpd_pace_auto_start(&a, now, &f);
	for (int i = 0; i < 100; i++) {
		now += 1000;
		f.stall += 50; /* 5%: under the threshold */
		TEST_ASSERT_EQ(mthpd_pace_auto_charge(&a, &next, now, 900, &f), 0);
		TEST_ASSERT_EQ(next, now);
	}
	TEST_ASSERT_EQ(a.level, 0);
	TEST_ASSERT_EQ(a.felt_windows, 0);

	test_case = "a window shorter than 10 ms is not judged on its wait";
	mthpd_pace_auto_start(&a, now, &f);
	now += 9000;
	f.stall += 900; /* 10% of 9 ms, within what a whole window allows: 1 ms */
	TEST_ASSERT_EQ(mthpd_pace_auto_charge(&a, &next, now, 9000, &f), 0);
	TEST_ASSERT_EQ(a.level, 0);

	test_case = "the service waited: 10% of the CPU, 9 times the CPU spent as rest";
	mthpd_pace_auto_start(&a, now, &f);
	now += 10000;
	f.stall += 2000; /* 20% of the window */
	rest = mthpd_pace_auto_charge(&a, &next, now, 8000, &f);
	TEST_ASSERT_EQ(rest, 72000);
	TEST_ASSERT_EQ(next, now + 72000);
	TEST_ASSERT_EQ(a.level, 1);

	test_case = "counted in CPU time: a slow window (busy host) rests by its CPU, not its length";
	now += rest;
	mthpd_pace_auto_start(&a, now, &f);
	now += 40000;
	f.stall += 30000;
	rest = mthpd_pace_auto_charge(&a, &next, now, 4000, &f);
	TEST_ASSERT_EQ(rest, 4000 * 9); /* second in a row: still 10% */
	TEST_ASSERT_EQ(a.level, 1);

	test_case = "a fault of the service ends the window at once: it was blocked by a collapse";
	now += rest;
	mthpd_pace_auto_start(&a, now, &f);
	now += 2000;
	f.faults++;
	rest = mthpd_pace_auto_charge(&a, &next, now, 2000, &f);
	TEST_ASSERT_EQ(rest, 2000 * 9);
	TEST_ASSERT_EQ(a.faulted_windows, 1);

	test_case = "a fault with the hold known: it waited at most that long, 5% of the window: no rest";
	now += rest;
	a.level = 0;
	mthpd_pace_auto_start(&a, now, &f);
	now += 2000;
	f.faults++;
	f.held = 500;
	TEST_ASSERT_EQ(mthpd_pace_auto_charge(&a, &next, now, 2000, &f), 0); /* not judged yet */
	f.held = 0; /* no call since: the window keeps its longest */
	now += 8000;
	TEST_ASSERT_EQ(mthpd_pace_auto_charge(&a, &next, now, 8000, &f), 0);
	TEST_ASSERT_EQ(a.level, 0);
	TEST_ASSERT_EQ(a.faulted_windows, 1);

	test_case = "three faults of a 500 us hold: more than a whole window allows, a rest at once";
	mthpd_pace_auto_start(&a, now, &f);
	now += 2000;
	f.faults += 3;
	f.held = 500;
	rest = mthpd_pace_auto_charge(&a, &next, now, 2000, &f);
	TEST_ASSERT_EQ(rest, 2000 * 9);
	TEST_ASSERT_EQ(a.level, 1);
	TEST_ASSERT_EQ(a.faulted_windows, 2);
	f.held = 0;

	test_case = "feeling goes on: 10% and no lower";
	for (int i = 0; i < 2; i++) {
		now += rest;
		mthpd_pace_auto_start(&a, now, &f);
		now += 10000;
		f.stall += 9000;
		rest = mthpd_pace_auto_charge(&a, &next, now, 10000, &f);
		TEST_ASSERT_EQ(rest, 90000);
	}
	TEST_ASSERT_EQ(a.level, MTHPD_PACE_AUTO_MAX_LEVEL);
	TEST_ASSERT_EQ(a.felt_windows, 6);

	test_case = "no rest longer than 2 s";
	mthpd_pace_auto_start(&a, now, &f);
	now += 300000;
	f.stall += 290000;
	TEST_ASSERT_EQ(mthpd_pace_auto_charge(&a, &next, now, 300000, &f), MTHPD_PACE_AUTO_MAX_REST_USEC);

	test_case = "it feels nothing: no rest, full speed again";
	for (unsigned int want = MTHPD_PACE_AUTO_MAX_LEVEL; want-- > 0;) {
		mthpd_pace_auto_start(&a, now, &f);
		now += 10000;
		TEST_ASSERT_EQ(mthpd_pace_auto_charge(&a, &next, now, 10000, &f), 0);
		TEST_ASSERT_EQ(a.level, want);
	}

	test_case = "a long wait in a short window ends it at once";
	mthpd_pace_auto_start(&a, now, &f);
	now += 2000;
	f.stall += 1500; /* more than 10% of a whole 10 ms window */
	TEST_ASSERT_EQ(mthpd_pace_auto_charge(&a, &next, now, 2000, &f), 18000);

	test_case = "unreadable: every whole window ends in the first share's rest";
	a = (struct mthpd_pace_auto){.level = 3};
	mthpd_pace_auto_start(&a, now, &unknown);
	now += 5000;
	TEST_ASSERT_EQ(mthpd_pace_auto_charge(&a, &next, now, 5000, &f), 0);
	now += 5000;
	TEST_ASSERT_EQ(mthpd_pace_auto_charge(&a, &next, now, 5000, &f), 90000);
	TEST_ASSERT_EQ(a.level, 1);
	mthpd_pace_auto_start(&a, now, &f);
	now += 10000;
	TEST_ASSERT_EQ(mthpd_pace_auto_charge(&a, &next, now, 10000, &unknown), 90000);
	TEST_ASSERT_EQ(a.level, 1);

	test_case = "a total that goes back says nothing; a rest within the slack is not taken";
	a = (struct mthpd_pace_auto){0};
	mthpd_pace_auto_start(&a, now, &f);
	now += 10000;
	f.stall -= 4000;
	f.faults -= 1;
	TEST_ASSERT_EQ(mthpd_pace_auto_charge(&a, &next, now, 100, &f), 0);
	TEST_ASSERT_EQ(a.level, 0);
	mthpd_pace_auto_start(&a, now, &f);
	now += 10000;
	f.stall += 5000;
	TEST_ASSERT_EQ(mthpd_pace_auto_charge(&a, &next, now, 100, &f), 0); /* 900 us */
	TEST_ASSERT_EQ(a.level, 1);
	TEST_ASSERT_EQ(next, now);

	test_case = "shares";
	TEST_ASSERT_EQ(mthpd_pace_auto_share(0), 100);
	TEST_ASSERT_EQ(mthpd_pace_auto_share(1), MTHPD_PACE_DEFAULT_PERCENT);
	TEST_ASSERT_EQ(mthpd_pace_auto_share(99), MTHPD_PACE_DEFAULT_PERCENT);
	test_case = NULL;
}

int main(void)
{
	test_duty_cycle();
	test_charge();
	test_parse();
	test_auto();
	return test_finish();
}
