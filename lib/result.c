/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>

#include "result.h"
#include "util.h"

/* Strings as in include/trace/events/huge_memory.h, SCAN_STATUS (Linux 7.2). */
static const char *const names[_MTHPD_SCAN_RESULT_MAX] = {
	[MTHPD_SCAN_FAIL] = "failed",
	[MTHPD_SCAN_SUCCEED] = "succeeded",
	[MTHPD_SCAN_NO_PTE_TABLE] = "no_pte_table",
	[MTHPD_SCAN_PMD_MAPPED] = "page_pmd_mapped",
	[MTHPD_SCAN_EXCEED_NONE_PTE] = "exceed_none_pte",
	[MTHPD_SCAN_EXCEED_SWAP_PTE] = "exceed_swap_pte",
	[MTHPD_SCAN_EXCEED_SHARED_PTE] = "exceed_shared_pte",
	[MTHPD_SCAN_PTE_NON_PRESENT] = "pte_non_present",
	[MTHPD_SCAN_PTE_MAPPED_HUGEPAGE] = "pte_mapped_hugepage",
	[MTHPD_SCAN_PAGE_NULL] = "page_null",
	[MTHPD_SCAN_PAGE_LOCK] = "page_locked",
	[MTHPD_SCAN_PAGE_ANON] = "page_not_anon",
	[MTHPD_SCAN_ANY_PROCESS] = "no_process_for_page",
	[MTHPD_SCAN_VMA_CHECK] = "vma_check_failed",
	[MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL] = "alloc_huge_page_failed",
	[MTHPD_SCAN_CGROUP_CHARGE_FAIL] = "ccgroup_charge_failed",
	[MTHPD_RESULT_TRY_AGAIN] = "try_again",
	[MTHPD_RESULT_NOOP] = "noop",
	[MTHPD_RESULT_UNSUPPORTED] = "unsupported",
	[MTHPD_RESULT_PROCESS_EXITED] = "process_exited",
	[MTHPD_RESULT_PERMISSION_DENIED] = "permission_denied",
	[MTHPD_RESULT_ERROR] = "error",
	[MTHPD_RESULT_OVER_BUDGET] = "over_budget",
	[MTHPD_RESULT_DRY_RUN] = "dry_run",
	[MTHPD_RESULT_BACKOFF] = "backoff",
	[MTHPD_RESULT_UNMAPPED] = "unmapped",
	[MTHPD_RESULT_REFILL_BACKOFF] = "refill_backoff",
	[MTHPD_RESULT_THP_DISABLED] = "thp_disabled",
	[MTHPD_RESULT_VMA_REFUSED] = "vma_refused",
	[MTHPD_RESULT_HELD_PRESSURE] = "held_pressure",
	[MTHPD_RESULT_HELD_ALLOC_FAILED] = "held_alloc_failed",
};

const char *mthpd_result_text(enum mthpd_scan_result r)
{
	switch (r) {
	case MTHPD_RESULT_HELD_PRESSURE:
		return "held: memory pressure";
	case MTHPD_RESULT_HELD_ALLOC_FAILED:
		return "held: allocation failure";
	default:
		return mthpd_result_name(r);
	}
}

const char *mthpd_result_name(enum mthpd_scan_result r)
{
	if ((unsigned)r >= ARRAY_SIZE(names) || !names[r])
		return "unknown";
	return names[r];
}

int mthpd_result_from_name(const char *name)
{
	for (unsigned i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i] && strcmp(names[i], name) == 0)
			return (int)i;
	return -EINVAL;
}
