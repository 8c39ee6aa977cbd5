/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/backoff.c: what mthpd remembers of a process's ranges from pass to
 * pass, the backoff of ranges that keep failing and the set of ranges it
 * collapsed (not refilled).
 */
#include <errno.h>
#include <stdint.h>

#include "backoff.h"
#include "test.h"
#include "util.h"

/*
 * The range backoff: a lasting failure makes a range wait 30 s, then 60,
 * 120...; other pages (another signature) or a success end the wait; the
 * table keeps MTHPD_BACKOFF_MAX ranges, the one due first makes room.
 */
static void test_backoff(void)
{
	struct mthpd_backoff t = {0};
	const uint64_t s = 1000000, A = 0x7f0000000000ULL, B = A + 0x200000;
	uint64_t e[MTHPD_PMD_NR] = {0};
	uint64_t sig;

	test_case = "range backoff";
	e[3] = 0x8100000000001234ULL;
	sig = mthpd_range_sig(e);
	e[4] = 0x8100000000001235ULL;
	TEST_ASSERT(mthpd_range_sig(e) != sig); /* one more page: another signature */
	TEST_ASSERT(!mthpd_backoff_waiting(&t, A, sig, 0));
	mthpd_backoff_note(&t, A, sig, true, 100 * s);
	TEST_ASSERT(mthpd_backoff_waiting(&t, A, sig, 129 * s));
	TEST_ASSERT(!mthpd_backoff_waiting(&t, A, sig, 130 * s));
	TEST_ASSERT(!mthpd_backoff_waiting(&t, A, sig + 1, 101 * s)); /* its pages changed */
	TEST_ASSERT(!mthpd_backoff_waiting(&t, B, sig, 101 * s));
	mthpd_backoff_note(&t, A, sig, true, 130 * s); /* failed again: 60 s */
	TEST_ASSERT(mthpd_backoff_waiting(&t, A, sig, 189 * s));
	TEST_ASSERT(!mthpd_backoff_waiting(&t, A, sig, 190 * s));
	for (unsigned int k = 0; k < 20; k++)
		mthpd_backoff_note(&t, A, sig, true, 190 * s);
	TEST_ASSERT(mthpd_backoff_waiting(&t, A, sig, 190 * s + 3599 * s)); /* capped at 1 h */
	TEST_ASSERT(!mthpd_backoff_waiting(&t, A, sig, 190 * s + 3600 * s));
	mthpd_backoff_note(&t, A, sig, false, 200 * s); /* then it worked */
	TEST_ASSERT(!mthpd_backoff_waiting(&t, A, sig, 201 * s));
	TEST_ASSERT_EQ(t.nr_ranges, 0);
	for (unsigned int k = 0; k < MTHPD_BACKOFF_MAX + 4; k++)
		mthpd_backoff_note(&t, A + k * 0x200000ULL, sig, true, (300 + k) * s);
	TEST_ASSERT_EQ(t.nr_ranges, MTHPD_BACKOFF_MAX);
	TEST_ASSERT(!mthpd_backoff_waiting(&t, A, sig, 301 * s)); /* the oldest made room */
	TEST_ASSERT(mthpd_backoff_waiting(&t, A + (MTHPD_BACKOFF_MAX + 3) * 0x200000ULL, sig, 330 * s));
	test_case = NULL;
}

/* The ranges mthpd collapsed: a sorted set, found again whatever the order of notes. */
static void test_refill(void)
{
	struct mthpd_backoff t = {0};
	const uint64_t r = MTHPD_PMD_SIZE;

	test_case = "refill set: empty";
	TEST_ASSERT(!mthpd_refill_known(&t, 0x7f0000000000ULL));
	test_case = "refill set: notes out of order, one twice";
	for (uint64_t i = 0; i < 200; i++)
		TEST_ASSERT_EQ(mthpd_refill_note(&t, 0x7f0000000000ULL + ((i * 37) % 200) * r), 0);
	TEST_ASSERT_EQ(mthpd_refill_note(&t, 0x7f0000000000ULL + 5 * r), 0);
	TEST_ASSERT_EQ(t.nr_collapsed, 200);
	for (size_t i = 1; i < t.nr_collapsed; i++)
		TEST_ASSERT(t.collapsed[i - 1] < t.collapsed[i]);
	TEST_ASSERT(mthpd_refill_known(&t, 0x7f0000000000ULL));
	TEST_ASSERT(mthpd_refill_known(&t, 0x7f0000000000ULL + 199 * r));
	TEST_ASSERT(!mthpd_refill_known(&t, 0x7f0000000000ULL + 200 * r));
	TEST_ASSERT(!mthpd_refill_known(&t, 0x7f0000000000ULL - r));
	test_case = "refill set: full at MTHPD_REFILL_MAX, a known range still is";
	for (uint64_t a = 0x7f0000000000ULL + 200 * r; t.nr_collapsed < MTHPD_REFILL_MAX; a += r)
		TEST_ASSERT_EQ(mthpd_refill_note(&t, a), 0);
	TEST_ASSERT_EQ(mthpd_refill_note(&t, 0x10000000ULL), -E2BIG);
	TEST_ASSERT_EQ(mthpd_refill_note(&t, 0x7f0000000000ULL + 7 * r), 0);
	TEST_ASSERT(!mthpd_refill_known(&t, 0x10000000ULL));
	test_case = "refill set: freed";
	mthpd_backoff_free(&t);
	TEST_ASSERT(t.collapsed == NULL && t.nr_collapsed == 0);
	TEST_ASSERT(!mthpd_refill_known(&t, 0x7f0000000000ULL));
}

int main(void)
{
	test_refill();
	test_backoff();
	return test_finish();
}
