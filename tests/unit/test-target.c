/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pure parts of lib/target.c: the page-fault count of a /proc/PID/stat
 * line (lines as Linux 6.18 prints them), which the daemon compares from
 * pass to pass to leave a settled process alone.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "target.h"
#include "test.h"
#include "util.h"

static void test_stat_parse_faults(void)
{
	static const struct {
		const char *what, *line;
		int r;
		uint64_t faults;
	} t[] = {
		{ "a plain comm",
		  "1234 (redis-server) S 1 1234 1234 0 -1 4194560 1500 0 3 0 12 5 0 0 20 0 4 0 "
		  "4242 123456789 2000 18446744073709551615 1 1 0 0 0 0 0 4096 17920 0 0 0 17 1 0 0 0 0 0\n",
		  0, 1503 },
		{ "a comm with spaces and a parenthesis",
		  "77 (my (odd) name) R 1 77 77 34816 77 4194304 9 0 0 0 0 0 0 0 20 0 1 0 1 2 3\n", 0, 9 },
		{ "negative tty_nr and tpgid", "5 (x) S 1 5 5 -1 -1 0 10 20 30 0\n", 0, 40 },
		{ "no closing parenthesis", "5 (x S 1 5 5 0 -1 0 10 0 30 0\n", -EINVAL, 0 },
		{ "cut short before majflt", "5 (x) S 1 5 5 0 -1 0 10 0", -EINVAL, 0 },
		{ "a word where minflt is", "5 (x) S 1 5 5 0 -1 0 ten 0 30 0\n", -EINVAL, 0 },
		{ "empty", "", -EINVAL, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		uint64_t got = 0xdead;

		test_case = t[i].what;
		TEST_ASSERT_EQ(mthpd_stat_parse_faults(t[i].line, &got), t[i].r);
		TEST_ASSERT_EQ(got, t[i].r == 0 ? t[i].faults : 0xdead);
	}
	test_case = NULL;
}

/* RssAnon, the anonymous memory `mthpd status` shows a process with. */
static void test_status_parse_rss_anon(void)
{
	static const struct {
		const char *what, *status;
		int r;
		uint64_t bytes;
	} t[] = {
		{ "a process", "Name:\tredis-server\nRssAnon:\t 2359296 kB\nRssFile:\t 4 kB\n", 0,
		  2359296ULL * 1024 },
		{ "none yet", "Name:\tx\nRssAnon:\t       0 kB\n", 0, 0 },
		{ "a kernel thread: no such line", "Name:\tkthreadd\nUmask:\t0000\n", -ENOENT, 0 },
		{ "not at a line's start", "Name:\tx RssAnon: 5 kB\n", -ENOENT, 0 },
		{ "not a number", "Name:\tx\nRssAnon:\tlots kB\n", -EINVAL, 0 },
		{ "no unit", "Name:\tx\nRssAnon:\t12\n", -EINVAL, 0 },
		{ "too large", "Name:\tx\nRssAnon:\t99999999999999999999 kB\n", -EINVAL, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		uint64_t got = 0xdead;

		test_case = t[i].what;
		TEST_ASSERT_EQ(mthpd_status_parse_rss_anon(t[i].status, &got), t[i].r);
		TEST_ASSERT_EQ(got, t[i].r == 0 ? t[i].bytes : 0xdead);
	}
	test_case = NULL;
}

/* smaps_rollup: what `mthpd status` shows after a collapse, and of a process with THP off. */
static void test_rollup_parse(void)
{
	static const char head[] = "55d0b6a3e000-7ffd8f1f8000 ---p 00000000 00:00 0    [rollup]\n"
				   "Rss:               31000 kB\n";
	static const struct {
		const char *what, *rest;
		int r;
		uint64_t anon, huge;
	} t[] = {
		{ "a collapsed process", "Anonymous:         30876 kB\nKSM:        0 kB\n"
		  "AnonHugePages:     28672 kB\nShmemPmdMapped:        0 kB\n", 0,
		  30876ULL * 1024, 28672ULL * 1024 },
		{ "nothing huge", "Anonymous:           120 kB\nAnonHugePages:         0 kB\n", 0,
		  120ULL * 1024, 0 },
		{ "no AnonHugePages (THP not built in)", "Anonymous:           120 kB\n", -ENOENT, 0, 0 },
		{ "no Anonymous", "AnonHugePages:         0 kB\n", -ENOENT, 0, 0 },
		{ "not a number", "Anonymous:  x kB\nAnonHugePages:  0 kB\n", -EINVAL, 0, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		char text[512];
		uint64_t anon = 0xdead, huge = 0xdead;

		test_case = t[i].what;
		(void)snprintf(text, sizeof(text), "%s%s", head, t[i].rest);
		TEST_ASSERT_EQ(mthpd_rollup_parse(text, &anon, &huge), t[i].r);
		TEST_ASSERT_EQ(anon, t[i].r == 0 ? t[i].anon : 0xdead);
		TEST_ASSERT_EQ(huge, t[i].r == 0 ? t[i].huge : 0xdead);
	}
	test_case = NULL;
}

/* Comm and start time (field 22): what `mthpd status` compares with its state file. */
static void test_stat_parse_start(void)
{
	static const struct {
		const char *what, *line;
		int r;
		const char *comm;
		uint64_t start;
	} t[] = {
		{ "a plain comm",
		  "1234 (redis-server) S 1 1234 1234 0 -1 4194560 1500 0 3 0 12 5 0 0 20 0 4 0 "
		  "4242 123456789 2000 18446744073709551615 1 1 0 0 0 0 0 4096 17920 0 0 0 17 1 0 0 0 0 0\n",
		  0, "redis-server", 4242 },
		{ "a comm with spaces and a parenthesis",
		  "77 (my (odd) name) R 1 77 77 34816 77 4194304 9 0 0 0 0 0 0 0 20 0 1 0 99 2 3\n", 0,
		  "my (odd) name", 99 },
		{ "start time last on the line", "5 (x) S 1 5 5 -1 -1 0 10 20 30 0 0 0 0 0 20 0 1 0 7", 0,
		  "x", 7 },
		{ "cut short before the start time", "5 (x) S 1 5 5 0 -1 0 10 0 30 0 0 0 0 0 20 0 1 0\n",
		  -EINVAL, "", 0 },
		{ "a word where the start time is",
		  "5 (x) S 1 5 5 0 -1 0 10 0 30 0 0 0 0 0 20 0 1 0 soon 1\n", -EINVAL, "", 0 },
		{ "no parentheses", "5 x S 1 5 5 0 -1 0 10 0 30 0 0 0 0 0 20 0 1 0 7\n", -EINVAL, "", 0 },
		{ "empty", "", -EINVAL, "", 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		char comm[16] = "";
		uint64_t got = 0xdead;

		test_case = t[i].what;
		TEST_ASSERT_EQ(mthpd_stat_parse_start(t[i].line, comm, sizeof(comm), &got), t[i].r);
		TEST_ASSERT_EQ(got, t[i].r == 0 ? t[i].start : 0xdead);
		TEST_ASSERT_STREQ(comm, t[i].comm);
	}
	test_case = NULL;
}

/*
 * The range backoff: a lasting failure makes a range wait 30 s, then 60,
 * 120...; other pages (another signature) or a success end the wait; the
 * table keeps MTHPD_BACKOFF_MAX ranges, the one due first makes room.
 */
static void test_backoff(void)
{
	struct mthpd_target t = {.pidfd = -1, .stat_fd = -1, .pagemap = {.fd = -1}};
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
	TEST_ASSERT_EQ(t.nr_backoff, 0);
	for (unsigned int k = 0; k < MTHPD_BACKOFF_MAX + 4; k++)
		mthpd_backoff_note(&t, A + k * 0x200000ULL, sig, true, (300 + k) * s);
	TEST_ASSERT_EQ(t.nr_backoff, MTHPD_BACKOFF_MAX);
	TEST_ASSERT(!mthpd_backoff_waiting(&t, A, sig, 301 * s)); /* the oldest made room */
	TEST_ASSERT(mthpd_backoff_waiting(&t, A + (MTHPD_BACKOFF_MAX + 3) * 0x200000ULL, sig, 330 * s));
	test_case = NULL;
}

/* The ranges mthpd collapsed: a sorted set, found again whatever the order of notes. */
static void test_refill(void)
{
	struct mthpd_target t = {.pagemap = {.fd = -1}, .pidfd = -1, .stat_fd = -1};
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
	test_case = "refill set: freed with the target";
	mthpd_target_close(&t);
	TEST_ASSERT(t.collapsed == NULL && t.nr_collapsed == 0);
	TEST_ASSERT(!mthpd_refill_known(&t, 0x7f0000000000ULL));
}

int main(void)
{
	test_refill();
	test_stat_parse_faults();
	test_stat_parse_start();
	test_status_parse_rss_anon();
	test_rollup_parse();
	test_backoff();
	return test_finish();
}
