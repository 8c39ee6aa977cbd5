/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's cursor across passes, as khugepaged's mm slots and scan
 * address (mm/khugepaged.c: khugepaged_scan, khugepaged_scan_mm_slot()),
 * with fairness khugepaged does not need because it has one global list:
 *
 * - the processes a pass found are kept, with their open target, from one
 *   pass to the next (sorted by pid); those no longer found are closed;
 * - each pass splits pages_to_scan evenly between the policies that have
 *   processes, and a policy's share evenly between its cgroups, so one
 *   large service cannot starve the others; one that gets through all its
 *   processes with budget left hands the rest on;
 * - within a cgroup, processes never visited come first, then the one
 *   visited longest ago; a visit that runs out of budget leaves a resume
 *   address, and the process goes on from there when its turn comes again.
 *
 * So every byte of every matched process is reached within a bounded number
 * of passes, whatever the budget, and a new process waits at most one pass.
 */
#ifndef MTHPD_SCHED_H
#define MTHPD_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pace.h"
#include "target.h"

struct mthpd_sched_proc {
	pid_t pid;
	int policy;          /* index of the policy that matched it, -1: none (never visited) */
	uint64_t match_gen;  /* the configuration generation @policy was matched under; 0: not yet */
	uint64_t cgroup_id;  /* hash of the cgroup path it was matched in: shares are per cgroup */
	size_t proc;         /* its index in this pass's discovery array */
	uint64_t resume;     /* where the next visit starts; 0: from the beginning */
	uint64_t last_visit; /* sequence number of its latest visit; 0: never, served first */
	bool open;           /* @t is open */
	struct mthpd_target t;
	/*
	 * A process with nothing left to do is skipped until @quiet_until
	 * (monotonic us) while its fault count stays @quiet_faults: no new
	 * page, nothing new to collapse; the count is read 1 s after the
	 * visit, then less and less often while it stays the same
	 * (@quiet_checked, @quiet_check_usec).  Set by the daemon.
	 */
	uint64_t quiet_faults, quiet_until, quiet_checked, backoff_usec;
	uint64_t quiet_check_usec; /* how long after quiet_checked the next read is (daemon.h) */
	/*
	 * Its last visit planned collapses that were held back (memory
	 * pressure, alloc_sleep_millisecs, max_bytes_per_pass): quiet or not,
	 * it is visited again as soon as that ends.
	 */
	bool held;
	/*
	 * What the daemon last said about why it leaves (part of) the process
	 * alone, so that it says it once, and again only when it changes: THP
	 * disabled for the whole process, and how many VMAs the kernel refuses.
	 */
	bool said_thp_disabled;
	unsigned int said_vmas_refused;
	bool said_unreadable; /* its pagemap or pidfd could not be opened: EACCES/EPERM */
	/* younger than its policy's min_age=: left alone until then (monotonic us); 0: not */
	uint64_t young_until;
	/*
	 * Pacing (lib/pace.h), set by the daemon: the clock of a paced
	 * process, and whether a visit stopped at @resume only to rest; it
	 * goes on when its clock allows, with the @pace_allowance pages of
	 * budget that visit had left, without waiting for the next pass.
	 */
	uint64_t pace_next, pace_allowance;
	bool pace_waiting;
	/* pace=auto: its window and how long in a row its service waited */
	struct mthpd_pace_auto pace_auto;
	/*
	 * The daemon's: blocks by order whose collapse succeeded in visits
	 * not logged yet, how many such visits, and since when (monotonic
	 * us): a paced walk is one record, not one per range (daemon/visit.c).
	 */
	unsigned int ok_counts[10];
	unsigned int ok_visits;
	uint64_t ok_since;
	/*
	 * What `mthpd status` and the metrics show of it, kept by the daemon:
	 * how much of its memory is in PMD-mapped THPs (counted range by range
	 * as the visits go, published when a sweep reaches the end), what
	 * mthpd collapsed in it, and what its last visit came to.
	 */
	struct mthpd_coverage {
		uint64_t huge_bytes;       /* PMD-mapped, at the end of its last whole sweep */
		uint64_t sweep_huge;       /* the sweep under way, so far */
		/* held by 2M folios it maps in part (scan.h), as huge_bytes */
		uint64_t partial_bytes, sweep_partial;
		uint64_t collapsed_pass;   /* bytes collapsed during pass @collapsed_in */
		unsigned long collapsed_in;
		uint64_t collapsed_total;  /* bytes collapsed since mthpd found it */
		int last_result;           /* enum mthpd_scan_result most blocks came to, -1: none */
		int sweep_result;          /* the same, for the sweep under way */
		int held;                  /* enum mthpd_scan_result that held its plan back, -1: none */
		bool backoff;              /* ranges waiting for a retry (backoff, refill_backoff) */
		/* THP disabled: when smaps_rollup gave huge_bytes last (monotonic us), 0: never */
		uint64_t rollup_usec;
		bool sweep_collapsed;      /* something was collapsed in the sweep under way */
	} cov;
};

struct mthpd_sched {
	struct mthpd_sched_proc **procs; /* sorted by pid, each its own allocation */
	size_t n;
	uint64_t visits;   /* visit sequence */
	unsigned int rota; /* which policy goes first: turns every pass */
};

/*
 * Replaces the set of processes with @pids (@n of them, as discovery found
 * them, @pids[i] at discovery index i): a pid already known keeps its state,
 * a new one starts fresh, one not listed is closed and dropped.  Duplicates
 * keep the first.  Returns 0 or -ENOMEM (then nothing changed).
 */
int mthpd_sched_update(struct mthpd_sched *s, const pid_t *pids, size_t n);

/* Closes every target and frees the set; @s may be zeroed. */
void mthpd_sched_free(struct mthpd_sched *s);

/*
 * Visits @p with at most @allowance pages of budget: sets @p->resume (0 when
 * it reached the end) and *ret_spent.  Returns 0, or -ECANCELED to end the
 * pass (shutdown).
 */
typedef int (*mthpd_sched_visit_fn)(void *userdata, struct mthpd_sched_proc *p,
				    uint64_t allowance, uint64_t *ret_spent);

struct mthpd_sched_stats {
	unsigned long visits;    /* processes visited */
	unsigned long completed; /* visits that reached the process's end */
	unsigned long policies;  /* policies with processes */
	uint64_t spent;          /* budget used */
};

/*
 * One pass over the processes with a policy (policy >= 0), @budget pages
 * shared between policies as described above.  Returns 0, or -ECANCELED
 * from @visit.
 */
int mthpd_sched_pass(struct mthpd_sched *s, uint64_t budget, mthpd_sched_visit_fn visit,
		     void *userdata, struct mthpd_sched_stats *ret);

#endif
