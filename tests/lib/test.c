/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>
#include <stdio.h>

#include "test.h"

const char *test_case;

static unsigned int nr_checks, nr_failed, nr_xfailed;
static const char *xfail_why;     /* inside test_xfail_begin() .. _end() */
static unsigned int xfail_before; /* nr_xfailed when it began */

void test_pass(void)
{
	nr_checks++;
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	nr_checks++;
	if (xfail_why)
		nr_xfailed++;
	else
		nr_failed++;
	fprintf(stderr, "%s:%d: %s%s%s%s", file, line, xfail_why ? "XFAIL: " : "FAIL: ",
		test_case ? "[" : "", test_case ? test_case : "", test_case ? "] " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void test_xfail_begin(const char *why)
{
	xfail_why = why;
	xfail_before = nr_xfailed;
}

void test_xfail_end(void)
{
	const char *why = xfail_why;

	xfail_why = NULL;
	if (nr_xfailed == xfail_before) {
		nr_failed++;
		fprintf(stderr, "XPASS: [%s] expected to fail (%s) but passed: remove the mark\n",
			test_case ? test_case : "", why);
	} else {
		fprintf(stderr, "XFAIL: [%s] known bug: %s\n", test_case ? test_case : "", why);
	}
}

int test_finish(void)
{
	printf("%u checks, %u failed, %u expected failures\n", nr_checks, nr_failed, nr_xfailed);
	return nr_failed ? 1 : 0;
}
