/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What reaches an operator's terminal: names another user chose, escaped;
 * the state file's words decoded; sizes in one style.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "test.h"
#include "text.h"
#include "util.h"

static void test_escape(void)
{
	static const struct {
		const char *in, *out;
	} t[] = {
		{ "", "" },
		{ "redis-server", "redis-server" },
		{ "a b", "a b" },                              /* a space is text */
		{ "\x1b[31mred", "\\x1b[31mred" },             /* ESC */
		{ "\x1b]0;title\x07", "\\x1b]0;title\\x07" },  /* OSC ... BEL */
		{ "a\nb\rc\td", "a\\x0ab\\x0dc\\x09d" },
		{ "\x01\x1f", "\\x01\\x1f" },
		{ "del\x7f", "del\\x7f" },
		{ "foo\\x20bar.service", "foo\\x20bar.service" }, /* as systemctl shows it */
		{ "caf\xc3\xa9", "caf\xc3\xa9" },              /* valid UTF-8 kept */
		{ "\xe2\x82\xac", "\xe2\x82\xac" },            /* U+20AC */
		{ "\xf0\x9f\x90\xa7", "\xf0\x9f\x90\xa7" },    /* U+1F427 */
		{ "\xc2\x9b" "31m", "\\xc2\\x9b31m" },         /* U+009B, C1 CSI */
		{ "\xc2\xa0", "\xc2\xa0" },                    /* U+00A0 is printable */
		{ "a\xe2\x80\xae" "b", "a\\xe2\\x80\\xaeb" },  /* U+202E RIGHT-TO-LEFT OVERRIDE */
		{ "\xe2\x81\xa6", "\\xe2\\x81\\xa6" },         /* U+2066 isolate */
		{ "\xff", "\\xff" },                           /* never UTF-8 */
		{ "\xc3", "\\xc3" },                           /* cut sequence */
		{ "\xc3(", "\\xc3(" },                         /* bad continuation */
		{ "\xc0\xaf", "\\xc0\\xaf" },                  /* overlong '/' */
		{ "\xe0\x80\xaf", "\\xe0\\x80\\xaf" },         /* overlong, 3 bytes */
		{ "\xed\xa0\x80", "\\xed\\xa0\\x80" },         /* a surrogate */
		{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" }, /* above U+10FFFF */
		{ "\xe2\x82", "\\xe2\\x82" },                  /* cut at the end */
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		char buf[MTHPD_TEXT_ESCAPED_SIZE(32)];
		char *dup = mthpd_text_escape_dup(t[i].in);

		test_case = t[i].out;
		TEST_ASSERT_STREQ(mthpd_text_escape(t[i].in, buf, sizeof(buf)), t[i].out);
		TEST_ASSERT_STREQ(dup, t[i].out);
		free(dup);
	}
	test_case = NULL;
}

/* The worst case fits MTHPD_TEXT_ESCAPED_SIZE; a shorter buffer is cut at a whole escape. */
static void test_escape_sizes(void)
{
	char buf[MTHPD_TEXT_ESCAPED_SIZE(3)];

	test_case = "sizes";
	TEST_ASSERT_EQ(mthpd_text_escape_mem("\x1b\x1b\x1b", 3, buf, sizeof(buf)), 12);
	TEST_ASSERT_STREQ(buf, "\\x1b\\x1b\\x1b");
	TEST_ASSERT_EQ(mthpd_text_escape_mem("\x1b\x1b\x1b", 3, buf, 12), 8);
	TEST_ASSERT_STREQ(buf, "\\x1b\\x1b");
	TEST_ASSERT_EQ(mthpd_text_escape_mem("ab\xc3\xa9", 4, buf, 4), 2);
	TEST_ASSERT_STREQ(buf, "ab");
	TEST_ASSERT_EQ(mthpd_text_escape_mem("a\0b", 3, buf, sizeof(buf)), 6);
	TEST_ASSERT_STREQ(buf, "a\\x00b");
	TEST_ASSERT_EQ(mthpd_text_escape_mem("abc", 3, buf, 0), 0);
	test_case = NULL;
}

static void test_unhex(void)
{
	static const struct {
		const char *in, *out;
		int r;
	} t[] = {
		{ "-", "", 0 },
		{ "plain", "plain", 5 },
		{ "foo\\x5cx20bar.service", "foo\\x20bar.service", 18 },
		{ "a\\x20b", "a b", 3 },
		{ "\\x1b[31m", "\x1b[31m", 5 },
		{ "\\x1B", "\x1b", 1 },
		{ "bad\\x", NULL, -EINVAL },
		{ "bad\\x4", NULL, -EINVAL },
		{ "bad\\xzz", NULL, -EINVAL },
		{ "bad\\y20", NULL, -EINVAL },
		{ "nul\\x00", NULL, -EINVAL },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		char buf[32];

		test_case = t[i].in;
		TEST_ASSERT_EQ(mthpd_text_unhex(t[i].in, strlen(t[i].in), buf, sizeof(buf)), t[i].r);
		if (t[i].out)
			TEST_ASSERT_STREQ(buf, t[i].out);
	}
	{
		char buf[4];

		test_case = "small";
		TEST_ASSERT_EQ(mthpd_text_unhex("abcd", 4, buf, sizeof(buf)), -ENOBUFS);
		TEST_ASSERT_EQ(mthpd_text_unhex("abc", 3, buf, sizeof(buf)), 3);
	}
	test_case = NULL;
}

static void test_bytes(void)
{
	static const struct {
		uint64_t in;
		const char *out;
	} t[] = {
		{ 0, "0 B" },
		{ 1023, "1023 B" },
		{ 1024, "1.00 KiB" },
		{ 512 * 1024, "512 KiB" },
		{ 4ULL << 20, "4.00 MiB" },
		{ 12ULL << 20 | 512 << 10, "12.5 MiB" },
		{ 2304ULL << 20, "2.25 GiB" },
		{ (1ULL << 30) + 200ULL * (1 << 20), "1.20 GiB" },
		{ 102348ULL, "99.9 KiB" },
		{ 102349ULL, "100 KiB" }, /* 99.95 KiB: rounds to three digits, not "100.0" */
		{ 3ULL << 40, "3.00 TiB" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		char buf[32];

		test_case = t[i].out;
		TEST_ASSERT_STREQ(mthpd_text_bytes(t[i].in, buf, sizeof(buf)), t[i].out);
	}
	test_case = NULL;
}

/* /proc/PID/comm ends with the kernel's '\n'; a comm's own newline stays. */
static void test_chomp(void)
{
	char a[] = "redis-server\n", b[] = "a\nb\n", c[] = "", d[] = "x";

	test_case = "chomp";
	mthpd_text_chomp(a);
	mthpd_text_chomp(b);
	mthpd_text_chomp(c);
	mthpd_text_chomp(d);
	TEST_ASSERT_STREQ(a, "redis-server");
	TEST_ASSERT_STREQ(b, "a\nb");
	TEST_ASSERT_STREQ(c, "");
	TEST_ASSERT_STREQ(d, "x");
	test_case = NULL;
}

/* What `status` and the configuration reader call a file that is not a regular one. */
static void test_file_type(void)
{
	static const struct {
		unsigned int mode;
		const char *want;
	} t[] = {
		{ S_IFREG | 0644, "a regular file" }, { S_IFDIR | 0755, "a directory" },
		{ S_IFIFO | 0600, "a FIFO" },          { S_IFCHR | 0666, "a character device" },
		{ S_IFBLK | 0660, "a block device" },  { S_IFSOCK | 0777, "a socket" },
		{ S_IFLNK | 0777, "a symbolic link" }, { 0, "not a file" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		test_case = t[i].want;
		TEST_ASSERT(strcmp(mthpd_text_file_type(t[i].mode), t[i].want) == 0);
	}
	test_case = NULL;
}

int main(void)
{
	test_escape();
	test_escape_sizes();
	test_unhex();
	test_bytes();
	test_file_type();
	test_chomp();
	return test_finish();
}
