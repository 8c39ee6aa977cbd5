/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Results of scanning, planning and collapsing a block, named as the kernel
 * names them.
 *
 * The first group mirrors enum scan_result of mm/khugepaged.c (Linux 7.2,
 * linux-mm commit 001dba133cfa) and its trace strings in
 * include/trace/events/huge_memory.h, so a kernel engineer can match an
 * mthpd decision with a khugepaged tracepoint.  The second group is mthpd's
 * own: outcomes of process_madvise(MADV_COLLAPSE) that the kernel folds into
 * an errno and that no scan_result names.
 */
#ifndef MTHPD_RESULT_H
#define MTHPD_RESULT_H

enum mthpd_scan_result {
	MTHPD_SCAN_FAIL,
	MTHPD_SCAN_SUCCEED,
	MTHPD_SCAN_NO_PTE_TABLE,
	MTHPD_SCAN_PMD_MAPPED,
	MTHPD_SCAN_EXCEED_NONE_PTE,
	MTHPD_SCAN_EXCEED_SWAP_PTE,
	MTHPD_SCAN_EXCEED_SHARED_PTE,
	MTHPD_SCAN_PTE_NON_PRESENT,
	MTHPD_SCAN_PTE_MAPPED_HUGEPAGE,
	MTHPD_SCAN_PAGE_NULL,
	MTHPD_SCAN_PAGE_LOCK,
	MTHPD_SCAN_PAGE_ANON,
	MTHPD_SCAN_ANY_PROCESS,
	MTHPD_SCAN_VMA_CHECK,
	MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL,
	MTHPD_SCAN_CGROUP_CHARGE_FAIL,
	/* mthpd's own results, not kernel scan_results */
	MTHPD_RESULT_TRY_AGAIN,         /* EAGAIN twice: page locked, pinned, off LRU */
	MTHPD_RESULT_NOOP,              /* kernel said success, kpageflags shows no folio */
	MTHPD_RESULT_UNSUPPORTED,       /* below PMD order on a kernel that cannot */
	MTHPD_RESULT_PROCESS_EXITED,    /* ESRCH: the target went away mid-pass */
	MTHPD_RESULT_PERMISSION_DENIED, /* EPERM/EACCES */
	MTHPD_RESULT_ERROR,             /* any other errno */
	MTHPD_RESULT_OVER_BUDGET,       /* the policy's bytes for this pass are spent */
	MTHPD_RESULT_DRY_RUN,           /* planned, not attempted: dry_run, or plan-only (--proc-root) */
	MTHPD_RESULT_BACKOFF,           /* not attempted: it failed before and nothing changed */
	MTHPD_RESULT_UNMAPPED,          /* ENOMEM, no allocation failed: part of the range is gone */
	MTHPD_RESULT_REFILL_BACKOFF,    /* collapsed before, emptied since: not filled again */
	MTHPD_RESULT_THP_DISABLED,      /* the process turned THP off (PR_SET_THP_DISABLE) */
	MTHPD_RESULT_VMA_REFUSED,       /* a VMA the kernel refuses (MADV_NOHUGEPAGE) */
	MTHPD_RESULT_HELD_PRESSURE,     /* planned, held back: memory pressure above psi_threshold */
	MTHPD_RESULT_HELD_ALLOC_FAILED, /* planned, held back: alloc_sleep_millisecs after ENOMEM */
	_MTHPD_SCAN_RESULT_MAX,
};

/* The kernel's trace string ("exceed_none_pte"), or mthpd's own name. */
const char *mthpd_result_name(enum mthpd_scan_result r);

/*
 * For people: "held: memory pressure" and "held: allocation failure" for
 * the two held results, mthpd_result_name() for every other.
 */
const char *mthpd_result_text(enum mthpd_scan_result r);

/* Inverse of mthpd_result_name(); returns -EINVAL for an unknown name. */
int mthpd_result_from_name(const char *name);

#endif
