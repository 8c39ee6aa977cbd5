/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/hold.c: why a matched process gets nothing collapsed now.  One row
 * per case: each reason alone, the order between them, and a hold that
 * ended taking a settled process back at once.
 */
#include <stdbool.h>
#include <string.h>

#include "hold.h"
#include "test.h"
#include "util.h"

enum { SET = 1, HB = 2, REST = 4, DRY = 8, PSI = 16, ALLOC = 32, BUDGET = 64, PLAN = 128, YOUNG = 256 };

static struct mthpd_hold_in in_of(unsigned int f)
{
	return (struct mthpd_hold_in){
		.settled = f & SET,
		.held_before = f & HB,
		.resting = f & REST,
		.dry_run = f & DRY,
		.pressure = f & PSI,
		.alloc_pause = f & ALLOC,
		.budget_spent = f & BUDGET,
		.plan_only = f & PLAN,
		.young = f & YOUNG,
	};
}

static void test_decide(void)
{
	static const struct {
		const char *what;
		unsigned int in;
		enum mthpd_hold want;
	} t[] = {
		{ "nothing holds it", 0, MTHPD_HOLD_NONE },
		{ "settled", SET, MTHPD_HOLD_SETTLED },
		{ "resting", REST, MTHPD_HOLD_RESTING },
		{ "dry run", DRY, MTHPD_HOLD_DRY_RUN },
		{ "pressure", PSI, MTHPD_HOLD_PRESSURE },
		{ "allocation pause", ALLOC, MTHPD_HOLD_ALLOC_PAUSE },
		{ "budget spent", BUDGET, MTHPD_HOLD_OVER_BUDGET },
		{ "plan only", PLAN, MTHPD_HOLD_PLAN_ONLY },
		{ "young", YOUNG, MTHPD_HOLD_YOUNG },
		{ "resting before young", REST | YOUNG, MTHPD_HOLD_RESTING },
		{ "settled before young", SET | YOUNG, MTHPD_HOLD_SETTLED },
		{ "young before a dry run", YOUNG | DRY | PSI, MTHPD_HOLD_YOUNG },
		{ "held before, not now: visited though settled", SET | HB, MTHPD_HOLD_NONE },
		{ "held before, still under pressure: stays settled", SET | HB | PSI, MTHPD_HOLD_SETTLED },
		{ "held before, allocation pause goes on", SET | HB | ALLOC, MTHPD_HOLD_SETTLED },
		{ "held before, budget still spent", SET | HB | BUDGET, MTHPD_HOLD_SETTLED },
		{ "held before, now a dry run: visited, planned", SET | HB | DRY, MTHPD_HOLD_DRY_RUN },
		{ "held before, not settled, pressure: held again", HB | PSI, MTHPD_HOLD_PRESSURE },
		{ "settled before resting", SET | REST, MTHPD_HOLD_SETTLED },
		{ "released, but resting", SET | HB | REST, MTHPD_HOLD_RESTING },
		{ "resting before a dry run", REST | DRY, MTHPD_HOLD_RESTING },
		{ "dry run before pressure", DRY | PSI | ALLOC | BUDGET, MTHPD_HOLD_DRY_RUN },
		{ "pressure before the allocation pause", PSI | ALLOC | BUDGET, MTHPD_HOLD_PRESSURE },
		{ "allocation pause before the budget", ALLOC | BUDGET, MTHPD_HOLD_ALLOC_PAUSE },
		{ "budget before plan only", BUDGET | PLAN, MTHPD_HOLD_OVER_BUDGET },
		{ "dry run before plan only", DRY | PLAN, MTHPD_HOLD_DRY_RUN },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		struct mthpd_hold_in in = in_of(t[i].in);

		test_case = t[i].what;
		TEST_ASSERT_EQ(mthpd_hold_decide(&in), t[i].want);
	}
	test_case = NULL;
}

/* Every combination of the nine inputs: the answer is the first reason in the order. */
static void test_every_combination(void)
{
	test_case = "every combination";
	for (unsigned int f = 0; f < 512; f++) {
		struct mthpd_hold_in in = in_of(f);
		bool released = (f & HB) && !(f & (PSI | ALLOC | BUDGET));
		enum mthpd_hold want = (f & SET) && !released ? MTHPD_HOLD_SETTLED
				       : f & REST            ? MTHPD_HOLD_RESTING
				       : f & YOUNG           ? MTHPD_HOLD_YOUNG
				       : f & DRY             ? MTHPD_HOLD_DRY_RUN
				       : f & PSI             ? MTHPD_HOLD_PRESSURE
				       : f & ALLOC           ? MTHPD_HOLD_ALLOC_PAUSE
				       : f & BUDGET          ? MTHPD_HOLD_OVER_BUDGET
				       : f & PLAN            ? MTHPD_HOLD_PLAN_ONLY
							     : MTHPD_HOLD_NONE;

		TEST_ASSERT_EQ(mthpd_hold_decide(&in), want);
	}
	test_case = NULL;
}

static void test_results(void)
{
	static const struct {
		enum mthpd_hold h;
		bool visits;
		enum mthpd_scan_result result;
		const char *name;
	} t[] = {
		{ MTHPD_HOLD_NONE, true, MTHPD_RESULT_DRY_RUN, "none" },
		{ MTHPD_HOLD_SETTLED, false, MTHPD_RESULT_DRY_RUN, "settled" },
		{ MTHPD_HOLD_RESTING, false, MTHPD_RESULT_DRY_RUN, "resting" },
		{ MTHPD_HOLD_YOUNG, false, MTHPD_RESULT_DRY_RUN, "young" },
		{ MTHPD_HOLD_DRY_RUN, true, MTHPD_RESULT_DRY_RUN, "dry_run" },
		{ MTHPD_HOLD_PRESSURE, true, MTHPD_RESULT_HELD_PRESSURE, "pressure" },
		{ MTHPD_HOLD_ALLOC_PAUSE, true, MTHPD_RESULT_HELD_ALLOC_FAILED, "alloc_pause" },
		{ MTHPD_HOLD_OVER_BUDGET, true, MTHPD_RESULT_OVER_BUDGET, "over_budget" },
		{ MTHPD_HOLD_PLAN_ONLY, true, MTHPD_RESULT_DRY_RUN, "plan_only" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		test_case = t[i].name;
		TEST_ASSERT_EQ(mthpd_hold_visits(t[i].h), t[i].visits);
		TEST_ASSERT_EQ(mthpd_hold_result(t[i].h), t[i].result);
		TEST_ASSERT(strcmp(mthpd_hold_name(t[i].h), t[i].name) == 0);
	}
	test_case = NULL;
}

/* The allocation pause's probes: an eighth of alloc_sleep_millisecs (1 s at least), doubling, up to it. */
static void test_probe_delay(void)
{
	static const struct {
		unsigned int failures;
		uint64_t max_usec, want;
	} t[] = {
		{ 0, 60000000, 0 },
		{ 1, 60000000, 7500000 },      /* the default: 7.5 s, 15, 30, 60 */
		{ 2, 60000000, 15000000 },
		{ 3, 60000000, 30000000 },
		{ 4, 60000000, 60000000 },
		{ 5, 60000000, 60000000 },     /* 120 s: capped */
		{ 1000, 60000000, 60000000 },  /* no overflow however many */
		{ UINT32_MAX, 86400000000ULL, 86400000000ULL },
		{ 1, 10000, 10000 },           /* alloc_sleep_millisecs=10: below the shortest */
		{ 1, 3000000, 1000000 },       /* 3 s: an eighth is below 1 s */
		{ 2, 3000000, 2000000 },
		{ 3, 3000000, 3000000 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		test_case = "probe delay";
		TEST_ASSERT_EQ(mthpd_hold_probe_delay(t[i].failures, t[i].max_usec), t[i].want);
	}
	test_case = NULL;
}

/* The allocation pause ends when buddyinfo shows memory freed since the failure. */
static void test_alloc_freed(void)
{
	static const struct {
		const char *what;
		uint64_t then, now;
		bool want;
	} t[] = {
		{ "none then, none now", 0, 0, false },
		{ "none then, one now", 0, 1, true },
		{ "none then, thousands now", 0, 4000, true },
		{ "as many as then", 40, 40, false },
		{ "fewer than then", 40, 10, false },
		{ "an eighth more: not yet", 40, 45, false },
		{ "more than an eighth more", 40, 46, true },
		{ "unknown then", UINT64_MAX, 4000, false },
		{ "unknown now", 0, UINT64_MAX, false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		test_case = t[i].what;
		TEST_ASSERT_EQ(mthpd_hold_alloc_freed(t[i].then, t[i].now), t[i].want);
	}
	test_case = NULL;
}

int main(void)
{
	test_probe_delay();
	test_alloc_freed();
	test_decide();
	test_every_combination();
	test_results();
	return test_finish();
}
