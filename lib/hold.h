/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Why a matched process gets nothing collapsed now, decided in one place:
 * settled (nothing new since a visit found nothing to do), resting (its
 * pace= clock is ahead), a dry run, memory pressure, the pause after an
 * allocation failure, its policy's budget for the pass, or a plan-only
 * daemon.  Pure: the daemon gathers the inputs, this function orders them.
 */
#ifndef MTHPD_HOLD_H
#define MTHPD_HOLD_H

#include <stdbool.h>
#include <stdint.h>

#include "result.h"

enum mthpd_hold {
	MTHPD_HOLD_NONE,         /* visit it, and collapse what the plan says */
	MTHPD_HOLD_SETTLED,      /* no visit: quiet, its fault count unchanged */
	MTHPD_HOLD_RESTING,      /* no visit: pace= rest; the pace timer brings it back */
	MTHPD_HOLD_YOUNG,        /* no visit: younger than its policy's min_age= */
	MTHPD_HOLD_DRY_RUN,      /* visit and plan, collapse nothing: dry_run=yes */
	MTHPD_HOLD_PRESSURE,     /* ... PSI above psi_threshold, the host's or its cgroup's */
	MTHPD_HOLD_ALLOC_PAUSE,  /* ... alloc_sleep_millisecs after an allocation failure */
	MTHPD_HOLD_OVER_BUDGET,  /* ... its policy's max_bytes_per_pass is spent */
	MTHPD_HOLD_PLAN_ONLY,    /* ... a synthetic --proc-root: no live process behind it */
};

struct mthpd_hold_in {
	bool settled;      /* quiet since a visit found nothing to do, and no new fault */
	bool held_before;  /* its last visit was held (pressure, allocation pause, budget) */
	bool resting;      /* pace=: its clock is ahead of its share */
	bool young;        /* younger than min_age= (known once its target is open) */
	bool dry_run;      /* dry_run=yes, the daemon's or its policy's */
	bool pressure;     /* PSI some avg10 above psi_threshold, the host's or its cgroup's */
	bool alloc_pause;  /* within alloc_sleep_millisecs of an allocation failure */
	bool budget_spent; /* its policy's max_bytes_per_pass is spent in this pass */
	bool plan_only;    /* the daemon reads a synthetic --proc-root */
};

/*
 * Pure: the first reason that applies, in this order.  A process whose
 * last visit was held back and whose hold is over is visited at once, not
 * left settled for the quiet minute.  Then the rest of pace=, then
 * min_age=; then the settings (dry run) before what passes (pressure, the
 * allocation pause, the budget).
 */
enum mthpd_hold mthpd_hold_decide(const struct mthpd_hold_in *in);

/* Pure: whether the visit goes on to plan (NONE and the reasons to collapse nothing do). */
bool mthpd_hold_visits(enum mthpd_hold h);

/* Pure: the result the held blocks are logged with (dry_run, held_pressure...). */
enum mthpd_scan_result mthpd_hold_result(enum mthpd_hold h);

/* Pure: "none", "settled", "resting", "young", "dry_run", "pressure", "alloc_pause", ... */
const char *mthpd_hold_name(enum mthpd_hold h);

/* The shortest first probe after a failed huge page allocation. */
#define MTHPD_HOLD_PROBE_FIRST_USEC 1000000ULL

/*
 * Pure: how long the allocation pause waits before its next probe (one
 * range collapsed, to see whether huge pages can be allocated again),
 * after @failures failed allocations in a row (1: the one that started
 * the pause): an eighth of @max_usec (alloc_sleep_millisecs; 7.5 s of
 * the default 60 s), at least 1 s, then twice as long after each probe
 * that failed too, at most @max_usec.  0 failures: 0, no pause.
 *
 * Not sooner: each failed allocation compacts, in the daemon and in
 * kcompactd, which it wakes; and freed memory ends the pause without a
 * probe (mthpd_hold_alloc_freed()).  bench/fragment measured a first
 * probe after 1 s against 8 s: 6 [6-7] failed allocations in 20 s
 * against 3 [2-3], for the same cost to a bystander.
 */
uint64_t mthpd_hold_probe_delay(unsigned int failures, uint64_t max_usec);

/*
 * Pure: whether the allocation pause ends because memory was freed: the
 * kernel shows @free_now free 2 MiB blocks (lib/buddyinfo.h), more than
 * the @free_then of the last failed allocation by more than an eighth
 * (any, from none), so that a few blocks that come and go in a zone at
 * its watermark do not end it every second.  UINT64_MAX, unknown, never.
 */
bool mthpd_hold_alloc_freed(uint64_t free_then, uint64_t free_now);

#endif
