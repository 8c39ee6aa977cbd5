/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Result names: the kernel's trace strings (include/trace/events/
 * huge_memory.h, SCAN_STATUS) that the JSON output and the journal carry, so
 * each must be unique and parse back to its value.
 */
#include <errno.h>

#include "result.h"
#include "test.h"
#include "util.h"

static void test_names_unique_and_round_trip(void)
{
	for (int r = 0; r < _MTHPD_SCAN_RESULT_MAX; r++) {
		const char *name = mthpd_result_name((enum mthpd_scan_result)r);

		test_case = name;
		TEST_ASSERT(name != NULL);
		if (!name)
			continue;
		TEST_ASSERT(strcmp(name, "unknown") != 0);
		TEST_ASSERT(name[0] != '\0');
		TEST_ASSERT_EQ(mthpd_result_from_name(name), r);
		for (int s = 0; s < r; s++)
			TEST_ASSERT(strcmp(name, mthpd_result_name((enum mthpd_scan_result)s)) != 0);
	}
	test_case = NULL;
}

/* The names the README documents, and the kernel's own spelling. */
static void test_names_documented(void)
{
	static const struct {
		enum mthpd_scan_result r;
		const char *name;
	} t[] = {
		{ MTHPD_SCAN_FAIL, "failed" },
		{ MTHPD_SCAN_SUCCEED, "succeeded" },
		{ MTHPD_SCAN_PMD_MAPPED, "page_pmd_mapped" },
		{ MTHPD_SCAN_EXCEED_NONE_PTE, "exceed_none_pte" },
		{ MTHPD_SCAN_EXCEED_SWAP_PTE, "exceed_swap_pte" },
		{ MTHPD_SCAN_EXCEED_SHARED_PTE, "exceed_shared_pte" },
		{ MTHPD_SCAN_PTE_NON_PRESENT, "pte_non_present" },
		{ MTHPD_SCAN_PTE_MAPPED_HUGEPAGE, "pte_mapped_hugepage" },
		{ MTHPD_SCAN_VMA_CHECK, "vma_check_failed" },
		{ MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL, "alloc_huge_page_failed" },
		{ MTHPD_SCAN_CGROUP_CHARGE_FAIL, "ccgroup_charge_failed" }, /* sic, as the kernel */
		{ MTHPD_RESULT_TRY_AGAIN, "try_again" },
		{ MTHPD_RESULT_NOOP, "noop" },
		{ MTHPD_RESULT_UNSUPPORTED, "unsupported" },
		{ MTHPD_RESULT_PROCESS_EXITED, "process_exited" },
		{ MTHPD_RESULT_PERMISSION_DENIED, "permission_denied" },
		{ MTHPD_RESULT_ERROR, "error" },
		{ MTHPD_RESULT_DRY_RUN, "dry_run" },
		{ MTHPD_RESULT_HELD_PRESSURE, "held_pressure" },
		{ MTHPD_RESULT_HELD_ALLOC_FAILED, "held_alloc_failed" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		test_case = t[i].name;
		TEST_ASSERT_STREQ(mthpd_result_name(t[i].r), t[i].name);
	}
	test_case = NULL;
}

/* What the log says of a pass held back, and of everything else: the name. */
static void test_texts(void)
{
	test_case = "texts";
	TEST_ASSERT_STREQ(mthpd_result_text(MTHPD_RESULT_HELD_PRESSURE), "held: memory pressure");
	TEST_ASSERT_STREQ(mthpd_result_text(MTHPD_RESULT_HELD_ALLOC_FAILED), "held: allocation failure");
	TEST_ASSERT_STREQ(mthpd_result_text(MTHPD_RESULT_DRY_RUN), "dry_run");
	TEST_ASSERT_STREQ(mthpd_result_text(MTHPD_SCAN_SUCCEED), "succeeded");
	test_case = NULL;
}

static void test_names_invalid(void)
{
	test_case = "invalid";
	TEST_ASSERT_STREQ(mthpd_result_name(_MTHPD_SCAN_RESULT_MAX), "unknown");
	TEST_ASSERT_STREQ(mthpd_result_name((enum mthpd_scan_result)-1), "unknown");
	TEST_ASSERT_EQ(mthpd_result_from_name("unknown"), -EINVAL);
	TEST_ASSERT_EQ(mthpd_result_from_name(""), -EINVAL);
	TEST_ASSERT_EQ(mthpd_result_from_name("Succeeded"), -EINVAL);
	TEST_ASSERT_EQ(mthpd_result_from_name("succeeded "), -EINVAL);
	test_case = NULL;
}

int main(void)
{
	test_names_unique_and_round_trip();
	test_names_documented();
	test_names_invalid();
	test_texts();
	return test_finish();
}
