/* SPDX-License-Identifier: GPL-2.0-or-later */
/* /proc/PID/maps lines: parsing and which VMAs MADV_COLLAPSE can work on. */
#include <errno.h>

#include "test.h"
#include "util.h"
#include "vmas.h"

static const struct {
	const char *line;
	int ret;
	bool eligible;
} cases[] = {
	/* lines as the kernel prints them (show_map_vma) */
	{"7f2a40000000-7f2a48000000 rw-p 00000000 00:00 0 \n", 0, true},
	{"55d0c8a4e000-55d0c8a6f000 rw-p 00000000 00:00 0                          [heap]\n", 0, true},
	{"7ffc1b8e0000-7ffc1b901000 rw-p 00000000 00:00 0                          [stack]\n", 0, true},
	{"7f0000000000-7f0000400000 rw-p 00000000 00:00 0                          [anon:jemalloc]\n", 0, true},
	{"7f2a40000000-7f2a48000000 r--p 00000000 00:00 0 \n", 0, false},  /* read-only */
	{"7f2a40000000-7f2a48000000 rw-s 00000000 00:01 1234                       /dev/zero (deleted)\n", 0, false},
	{"7f2a40000000-7f2a48000000 rw-s 00000000 00:00 0 \n", 0, false},  /* shared anon */
	{"7f1e2c000000-7f1e2c021000 rw-p 00001000 fe:01 10952937                   /usr/lib/libc.so.6\n", 0, false},
	{"7ffc1b9fa000-7ffc1b9fe000 r--p 00000000 00:00 0                          [vvar]\n", 0, false},
	{"7ffc1b9fe000-7ffc1ba00000 r-xp 00000000 00:00 0                          [vdso]\n", 0, false},
	{"7f0000000000-7f0000400000 rw-p 00000000 00:00 0                          [vsyscall]\n", 0, false},
	{"7f2a40000000-7f2a48000000 rw-p 00000000 00:00 0", 0, true},        /* no trailing blank */
	{"garbage\n", -EINVAL, false},
	{"7f2a48000000-7f2a40000000 rw-p 00000000 00:00 0 \n", -EINVAL, false}, /* end <= start */
	{"7f2a40000000-7f2a48000000 rw-pxx 00000000 00:00 0 \n", -EINVAL, false},
	{"", -EINVAL, false},
};

int main(void)
{
	struct mthpd_maps_entry e;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		test_case = cases[i].line;
		TEST_ASSERT_EQ(mthpd_maps_parse_line(cases[i].line, &e), cases[i].ret);
		if (cases[i].ret == 0)
			TEST_ASSERT_EQ(mthpd_maps_entry_eligible(&e), cases[i].eligible);
	}
	test_case = "fields";
	TEST_ASSERT_EQ(mthpd_maps_parse_line("7f1e2c000000-7f1e2c021000 rw-p 00001000 fe:01 10952937 /usr/lib/x\n", &e), 0);
	TEST_ASSERT_EQ(e.start, 0x7f1e2c000000ULL);
	TEST_ASSERT_EQ(e.end, 0x7f1e2c021000ULL);
	TEST_ASSERT_EQ(e.offset, 0x1000);
	TEST_ASSERT_EQ(e.dev_major, 0xfe);
	TEST_ASSERT_EQ(e.dev_minor, 1);
	TEST_ASSERT_EQ(e.inode, 10952937);
	TEST_ASSERT_STREQ(e.perms, "rw-p");
	TEST_ASSERT_STREQ(e.name, "/usr/lib/x\n");
	return test_finish();
}
