/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * account: counters named as the kernel's per-size mTHP stats
 * (/sys/kernel/mm/transparent_hugepage/hugepages-*kB/stats/collapse_*),
 * kept per policy and in total.
 */
#ifndef MTHPD_ACCOUNT_H
#define MTHPD_ACCOUNT_H

#include <stdbool.h>

#include "plan.h"
#include "scan.h"

struct mthpd_counters {
	/* per order; mthpd counts verified collapses, the kernel allocations */
	unsigned long collapse_alloc[MTHPD_PMD_ORDER + 1];
	unsigned long collapse_alloc_failed[MTHPD_PMD_ORDER + 1];
	unsigned long collapse_exceed_none_pte[MTHPD_PMD_ORDER + 1];
	unsigned long collapse_exceed_swap_pte[MTHPD_PMD_ORDER + 1];
	unsigned long collapse_exceed_shared_pte[MTHPD_PMD_ORDER + 1];
	unsigned long collapse_failed[MTHPD_PMD_ORDER + 1]; /* any other failed attempt */
	unsigned long planned[MTHPD_PMD_ORDER + 1];         /* blocks the walk would collapse */
	/* pages that were empty in the blocks collapsed: the memory collapsing added */
	unsigned long filled_pages;
	/* blocks not collapsed because mthpd had collapsed them before (refill_backoff) */
	unsigned long refill_backoff;
	unsigned long scanned_ranges;
	unsigned long scanned_pages; /* occupied pages of the scanned ranges */
	/* 2M folios mapped in part that mthpd split, and the pages that freed */
	unsigned long split_folios;
	unsigned long released_pages;
	/* pace=auto: rests because the service felt the work (lib/pace.h), and of them after a fault */
	unsigned long pace_rests;
	unsigned long pace_rests_fault;
};

/* Adds one range's plan (and, when @acted, its results) to @c. */
void mthpd_account_range(struct mthpd_counters *c, const struct mthpd_range_scan *s,
			 const struct mthpd_range_plan *p, bool acted);

/* @into += @from. */
void mthpd_account_add(struct mthpd_counters *into, const struct mthpd_counters *from);

#endif
