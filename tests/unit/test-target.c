/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pure parts of lib/target.c: the page-fault count of a /proc/PID/stat
 * line (lines as Linux 6.18 prints them), which the daemon compares from
 * pass to pass to leave a settled process alone.
 */
#include <errno.h>
#include <stdint.h>

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

int main(void)
{
	test_stat_parse_faults();
	return test_finish();
}
