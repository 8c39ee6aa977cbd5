/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The keys of the configuration files (lib/confkeys.c): each value parser
 * at the edges of its range, through the table as the file reader uses
 * it, with the reason it gives; the table itself, and its sections.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "confkeys.h"
#include "pace.h"
#include "test.h"
#include "util.h"

#define D MTHPD_CONF_DAEMON
#define P MTHPD_CONF_POLICY

static const struct mthpd_confkey *find(enum mthpd_conf_target t, const char *section,
					const char *name)
{
	for (size_t i = 0; i < mthpd_confkeys_count; i++)
		if (mthpd_confkeys[i].target == t && strcmp(mthpd_confkeys[i].section, section) == 0 &&
		    strcmp(mthpd_confkeys[i].name, name) == 0)
			return &mthpd_confkeys[i];
	return NULL;
}

/*
 * One value of one key: accepted with the field then holding @want (read
 * @width bytes wide; width 0 is a string field, equal to the value), or
 * refused with @why.
 */
static const struct {
	enum mthpd_conf_target t;
	const char *section, *key, *value;
	size_t width;
	uint64_t want;
	const char *why;
} cases[] = {
	{D, "Daemon", "dry_run", "Yes", 1, 1, NULL},
	{D, "Daemon", "dry_run", "on", 1, 1, NULL},
	{D, "Daemon", "dry_run", "1", 1, 1, NULL},
	{D, "Daemon", "dry_run", "OFF", 1, 0, NULL},
	{D, "Daemon", "dry_run", "maybe", 0, 0, "'maybe' is not a boolean (yes or no)"},
	{D, "Daemon", "scan_sleep_millisecs", "10", 4, 10, NULL},
	{D, "Daemon", "scan_sleep_millisecs", "86400000", 4, 86400000, NULL},
	{D, "Daemon", "scan_sleep_millisecs", "9", 0, 0,
	 "'9' is not a number of milliseconds from 10 to 86400000"},
	{D, "Daemon", "alloc_sleep_millisecs", "86400001", 0, 0,
	 "'86400001' is not a number of milliseconds from 10 to 86400000"},
	{D, "Daemon", "pages_to_scan", "1", 8, 1, NULL},
	{D, "Daemon", "pages_to_scan", "1099511627776", 8, 1ULL << 40, NULL},
	{D, "Daemon", "pages_to_scan", "1099511627777", 0, 0, "'1099511627777' is not a number of pages from 1"},
	{D, "Daemon", "pages_to_scan", "0", 0, 0, "'0' is not a number of pages from 1"},
	{D, "Daemon", "pages_to_scan", "4k", 0, 0, "'4k' is not a number of pages from 1"},
	{D, "Daemon", "psi_threshold", "0", 4, 0, NULL},
	{D, "Daemon", "psi_threshold", "2.5", 4, 250, NULL},
	{D, "Daemon", "psi_threshold", "0.05", 4, 5, NULL},
	{D, "Daemon", "psi_threshold", "100", 4, 10000, NULL},
	{D, "Daemon", "psi_threshold", "100.01", 0, 0,
	 "'100.01' is not a percentage from 0 to 100 (0 turns it off)"},
	{D, "Daemon", "psi_threshold", "1.234", 0, 0,
	 "'1.234' is not a percentage from 0 to 100 (0 turns it off)"},
	{D, "Daemon", "max_pids_per_pass", "1000000", 4, 1000000, NULL},
	{D, "Daemon", "max_pids_per_pass", "0", 0, 0, "'0' is not a number from 1 to 1000000"},
	{D, "Daemon", "metrics_max_units", "0", 4, 0, NULL},
	{D, "Daemon", "metrics_max_units", "4096", 4, 4096, NULL},
	{D, "Daemon", "metrics_max_units", "4097", 0, 0, "'4097' is not a number from 0 to 4096"},
	{D, "Daemon", "metrics_file", "", 0, 0, NULL},
	{D, "Daemon", "state_file", "/run/x", 0, 0, NULL},
	{D, "Daemon", "state_file", "run/x", 0, 0, "'run/x' is not an absolute path (or empty for none)"},
	{P, "Match", "cgroup", "/system.slice/*", 0, 0, NULL},
	{P, "Match", "unit", "", 0, 0, "empty pattern (leave the key out to match anything)"},
	/* comm: the fewest characters a glob matches against TASK_COMM_LEN - 1 */
	{P, "Match", "comm", "123456789012345", 0, 0, NULL},
	{P, "Match", "comm", "*12345678901234*5*", 0, 0, NULL},
	{P, "Match", "comm", "[abc]23456789012345", 0, 0, NULL},
	{P, "Match", "comm", "\\*23456789012345", 0, 0, NULL},
	{P, "Match", "comm", "[abc]234567890123456", 0, 0,
	 "'[abc]234567890123456' can never match: a process's comm is at most 15 characters "
	 "(the kernel cuts longer names)"},
	{P, "Match", "comm", "1234567890123456", 0, 0,
	 "'1234567890123456' can never match: a process's comm is at most 15 characters "
	 "(the kernel cuts longer names)"},
	{P, "Policy", "enabled", "no", 1, 0, NULL},
	{P, "Policy", "sizes", "2M,64K", 4, (1U << 9) | (1U << 4), NULL},
	{P, "Policy", "sizes", "8K", 0, 0, "'8K' is not a size from 16K to 2M (16K, 32K, ..., 1M, 2M)"},
	{P, "Policy", "max_ptes_none", "511", 4, 511, NULL},
	{P, "Policy", "max_ptes_shared", "512", 0, 0, "'512' is not a number from 0 to 511"},
	{P, "Policy", "max_bytes_per_pass", "0", 8, 0, NULL},
	{P, "Policy", "max_bytes_per_pass", "4096", 8, 4096, NULL},
	{P, "Policy", "max_bytes_per_pass", "1g", 8, 1ULL << 30, NULL},
	{P, "Policy", "max_bytes_per_pass", "1024T", 8, 1ULL << 50, NULL},
	{P, "Policy", "max_bytes_per_pass", "1025T", 0, 0,
	 "'1025T' is not a size (bytes, or with K, M, G, T; 0 for none)"},
	{P, "Policy", "max_bytes_per_pass", "1MB", 0, 0,
	 "'1MB' is not a size (bytes, or with K, M, G, T; 0 for none)"},
	{P, "Policy", "max_bytes_per_pass", "-1", 0, 0,
	 "'-1' is not a size (bytes, or with K, M, G, T; 0 for none)"},
	{P, "Policy", "pace", "yes", 4, MTHPD_PACE_DEFAULT_PERCENT, NULL},
	{P, "Policy", "pace", "no", 4, 0, NULL},
	{P, "Policy", "pace", "0%", 0, 0, "'0%' is not no, yes, auto or a percentage from 1% to 100%"},
	{P, "Policy", "min_age", "86400", 4, 86400, NULL},
	{P, "Policy", "min_age", "86401", 0, 0, "'86401' is not a number of seconds from 0 to 86400"},
};

static uint64_t read_field(const void *field, size_t width)
{
	switch (width) {
	case 1:
		return *(const bool *)field;
	case 4:
		return *(const unsigned int *)field;
	default:
		return *(const uint64_t *)field;
	}
}

static void test_values(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct mthpd_confkey *k = find(cases[i].t, cases[i].section, cases[i].key);
		struct mthpd_daemon_conf d = {0};
		struct mthpd_policy pol = {0};
		char why[256] = "";
		void *field;
		int r;

		test_case = cases[i].value;
		TEST_ASSERT(k != NULL);
		if (!k)
			continue;
		field = (char *)(cases[i].t == D ? (void *)&d : (void *)&pol) + k->offset;
		r = k->parse(cases[i].value, field, why, sizeof(why));
		if (cases[i].why) {
			TEST_ASSERT_EQ(r, -EINVAL);
			TEST_ASSERT_STREQ(why, cases[i].why);
		} else if (cases[i].width) {
			TEST_ASSERT_EQ(r, 0);
			TEST_ASSERT_EQ(read_field(field, cases[i].width), cases[i].want);
		} else {
			TEST_ASSERT_EQ(r, 0);
			TEST_ASSERT_STREQ(*(char **)field, cases[i].value);
		}
		free(d.metrics_file);
		free(d.state_file);
		free(pol.match_cgroup);
		free(pol.match_unit);
		free(pol.match_comm);
	}
	test_case = NULL;
}

/* A string given twice: the second replaces the first, nothing leaks. */
static void test_string_again(void)
{
	const struct mthpd_confkey *k = find(D, "Daemon", "metrics_file");
	struct mthpd_daemon_conf d = {0};
	char why[64];

	test_case = "metrics_file twice";
	TEST_ASSERT(k != NULL);
	if (!k)
		return;
	TEST_ASSERT_EQ(k->parse("/a", (char *)&d + k->offset, why, sizeof(why)), 0);
	TEST_ASSERT_EQ(k->parse("/b", (char *)&d + k->offset, why, sizeof(why)), 0);
	TEST_ASSERT_STREQ(d.metrics_file, "/b");
	free(d.metrics_file);
	test_case = NULL;
}

/* The table: keys unique per section, at most 64 (the reader's bits), sections known. */
static void test_table(void)
{
	test_case = "table";
	TEST_ASSERT(mthpd_confkeys_count > 0 && mthpd_confkeys_count <= 64);
	for (size_t i = 0; i < mthpd_confkeys_count; i++) {
		const struct mthpd_confkey *k = &mthpd_confkeys[i];

		TEST_ASSERT(find(k->target, k->section, k->name) == k);
		TEST_ASSERT(mthpd_confkeys_section_known(k->target, k->section, strlen(k->section)));
		TEST_ASSERT_EQ(k->target == D, strcmp(k->section, "Daemon") == 0);
	}
	/* the same name in both kinds of file is two keys */
	TEST_ASSERT(find(D, "Daemon", "dry_run") && find(P, "Policy", "dry_run"));
	TEST_ASSERT(find(D, "Daemon", "pace") == NULL);
	TEST_ASSERT(find(P, "Policy", "state_file") == NULL);

	test_case = "sections";
	/* the name is not NUL-terminated: a header's text up to its ']' */
	TEST_ASSERT(mthpd_confkeys_section_known(D, "Daemon]", 6));
	TEST_ASSERT(!mthpd_confkeys_section_known(D, "Daemon]", 5));
	TEST_ASSERT(!mthpd_confkeys_section_known(D, "Daemon]", 7));
	TEST_ASSERT(mthpd_confkeys_section_known(P, "Match", 5));
	TEST_ASSERT(mthpd_confkeys_section_known(P, "Policy", 6));
	TEST_ASSERT(!mthpd_confkeys_section_known(P, "Daemon", 6));
	TEST_ASSERT(!mthpd_confkeys_section_known(D, "Policy", 6));
	TEST_ASSERT(!mthpd_confkeys_section_known(D, "", 0));
	TEST_ASSERT(!mthpd_confkeys_section_known(P, "policy", 6));
	test_case = NULL;
}

int main(void)
{
	test_values();
	test_string_again();
	test_table();
	return test_finish();
}
