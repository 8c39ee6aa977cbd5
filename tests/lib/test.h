/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The unit-test harness, after chrony's test/unit/test.h: an assertion that
 * fails prints file:line, the expression and both values, counts the
 * failure and lets the test go on, so that one run shows every broken case.
 * Each test's main() ends with `return test_finish();`: 0 if nothing failed,
 * 1 otherwise.
 *
 * A known bug is checked, not hidden: between test_xfail_begin("why") and
 * test_xfail_end() failures are expected and reported as XFAIL; if none
 * happens (the bug was fixed) that is a failure, so the mark gets removed.
 */
#ifndef MTHPD_TEST_H
#define MTHPD_TEST_H

#include <string.h>

/* The table case being checked, printed with each failure; may be NULL. */
extern const char *test_case;

void test_pass(void);
void test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void test_xfail_begin(const char *why);
void test_xfail_end(void);
int test_finish(void);

#define TEST_ASSERT(cond)                                                     \
	do {                                                                  \
		if (cond)                                                     \
			test_pass();                                          \
		else                                                          \
			test_fail(__FILE__, __LINE__, "%s", #cond);           \
	} while (0)

/* Integers of any width and signedness; both are printed in decimal and hex. */
#define TEST_ASSERT_EQ(a, b)                                                  \
	do {                                                                  \
		const unsigned long long test_a_ = (unsigned long long)(a);   \
		const unsigned long long test_b_ = (unsigned long long)(b);   \
		if (test_a_ == test_b_)                                       \
			test_pass();                                          \
		else                                                          \
			test_fail(__FILE__, __LINE__,                         \
				  "%s == %s: %lld (%#llx) != %lld (%#llx)",   \
				  #a, #b, (long long)test_a_, test_a_,        \
				  (long long)test_b_, test_b_);               \
	} while (0)

#define TEST_ASSERT_STREQ(a, b)                                               \
	do {                                                                  \
		const char *test_sa_ = (a), *test_sb_ = (b);                  \
		if (test_sa_ && test_sb_ && strcmp(test_sa_, test_sb_) == 0)  \
			test_pass();                                          \
		else                                                          \
			test_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", \
				  #a, #b, test_sa_ ? test_sa_ : "(null)",     \
				  test_sb_ ? test_sb_ : "(null)");            \
	} while (0)

#endif
