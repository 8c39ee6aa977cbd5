/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/procfs.c, the pure parsers of /proc/PID/stat and /proc/PID/status
 * (lines as Linux 6.18 prints them): the page-fault count the daemon
 * compares from pass to pass to leave a settled process alone, RssAnon,
 * what a pid is (a thread, a zombie), comm and start time.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "procfs.h"
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

/* State, Tgid and PPid: what `--pid` refuses (a thread, a zombie). */
static void test_status_parse_ident(void)
{
	static const struct {
		const char *what, *status;
		int r;
		pid_t tgid, ppid;
		char state;
	} t[] = {
		{ "a process", "Name:\tredis-server\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\n"
		  "Ngid:\t0\nPid:\t4242\nPPid:\t1\n", 0, 4242, 1, 'S' },
		{ "a thread", "Name:\tio_thd\nState:\tR (running)\nTgid:\t4242\nPid:\t4250\nPPid:\t1\n",
		  0, 4242, 1, 'R' },
		{ "a zombie", "Name:\tx\nState:\tZ (zombie)\nTgid:\t77\nPid:\t77\nPPid:\t70\n", 0, 77, 70,
		  'Z' },
		{ "the last line, no newline", "Name:\tx\nState:\tS (sleeping)\nTgid:\t5\nPPid:\t2", 0, 5, 2,
		  'S' },
		{ "no State", "Name:\tx\nTgid:\t5\nPPid:\t1\n", -EINVAL, 0, 0, 0 },
		{ "no Tgid", "Name:\tx\nState:\tS (sleeping)\nPPid:\t1\n", -EINVAL, 0, 0, 0 },
		{ "no PPid", "Name:\tx\nState:\tS (sleeping)\nTgid:\t5\n", -EINVAL, 0, 0, 0 },
		{ "Tgid not a number", "Name:\tx\nState:\tS\nTgid:\tfive\nPPid:\t1\n", -EINVAL, 0, 0, 0 },
		{ "Tgid with junk", "Name:\tx\nState:\tS\nTgid:\t5x\nPPid:\t1\n", -EINVAL, 0, 0, 0 },
		{ "Tgid too large", "Name:\tx\nState:\tS\nTgid:\t99999999999\nPPid:\t1\n", -EINVAL, 0, 0,
		  0 },
		{ "a state in lower case", "Name:\tx\nState:\ts\nTgid:\t5\nPPid:\t1\n", -EINVAL, 0, 0, 0 },
		{ "in a comm, not at a line's start", "Name:\tx State: Z Tgid: 5 PPid: 1\n", -EINVAL, 0, 0, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		struct mthpd_pid_ident got = {.tgid = -1, .ppid = -1, .state = '?'};

		test_case = t[i].what;
		TEST_ASSERT_EQ(mthpd_status_parse_ident(t[i].status, &got), t[i].r);
		TEST_ASSERT_EQ(got.tgid, t[i].r == 0 ? t[i].tgid : -1);
		TEST_ASSERT_EQ(got.ppid, t[i].r == 0 ? t[i].ppid : -1);
		TEST_ASSERT_EQ(got.state, t[i].r == 0 ? t[i].state : '?');
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

/* The hint for a service known to turn THP off names a way out. */
static void test_thp_disabled_hint(void)
{
	const char *h = mthpd_thp_disabled_hint("mariadbd");

	test_case = "mariadbd hint";
	TEST_ASSERT(strstr(h, "large_pages=ON") != NULL);
	TEST_ASSERT(strstr(h, "PR_THP_DISABLE_EXCEPT_ADVISED") != NULL);
	TEST_ASSERT(strstr(mthpd_thp_disabled_hint("mysqld"), "large_pages=ON") != NULL);
	TEST_ASSERT(strstr(mthpd_thp_disabled_hint("redis-server"), "disable-thp no") != NULL);
	test_case = NULL;
}

int main(void)
{
	test_stat_parse_faults();
	test_stat_parse_start();
	test_status_parse_rss_anon();
	test_status_parse_ident();
	test_thp_disabled_hint();
	test_rollup_parse();
	return test_finish();
}
