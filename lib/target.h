/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One pass over one process: vmas -> populated ranges -> scan -> plan
 * (-> act).  The caller gets every range's scan and plan through a sink and
 * decides how to show or account it.
 */
#ifndef MTHPD_TARGET_H
#define MTHPD_TARGET_H

#include <stdbool.h>
#include <sys/types.h>

#include "act.h"
#include "backoff.h"
#include "features.h"
#include "kif.h"
#include "pagemap.h"
#include "plan.h"
#include "procfs.h"
#include "vmas.h"
#include "scan.h"

struct mthpd_target {
	pid_t pid;
	char comm[32];
	int pidfd;          /* only when collapsing; -1 otherwise */
	int stat_fd;        /* /proc/PID/stat, for mthpd_target_faults(); -1 if not open */
	bool thp_disabled;  /* prctl(PR_SET_THP_DISABLE): never touched */
	uint64_t rss_anon;  /* bytes, RssAnon of /proc/PID/status when last read; 0: unknown */
	uint64_t start_ticks; /* its start, clock ticks after boot (stat field 22); 0: unknown */
	struct mthpd_pagemap pagemap;
	/*
	 * The VMAs asked about by earlier passes, sorted by start: a target
	 * kept open across passes (the daemon) asks once per VMA, not once
	 * per pass.  A VMA whose bounds changed is asked again.
	 */
	struct mthpd_vma_verdict *verdicts;
	size_t nr_verdicts;
	struct mthpd_backoff backoff; /* what its ranges did in earlier passes */
};

/*
 * Opens /proc/PID/pagemap, reads comm and status, and with @need_pidfd opens
 * a pidfd.  Returns 0, -ESRCH for no such process, -EACCES/-EPERM when it
 * may not be read, -EOPNOTSUPP for a kernel thread (no user memory),
 * -errno.  On failure @ret is left closed.
 */
int mthpd_target_open(struct mthpd_kif *kif, pid_t pid, bool need_pidfd,
		      struct mthpd_target *ret);

/*
 * The same read from /proc/PID/smaps_rollup: exact, unlike RssAnon (per-CPU
 * counters), at the price of a walk of the process's page tables.
 * Returns 0, -ENOENT (a synthetic tree without it, or gone), -errno.
 */
int mthpd_target_read_rollup(struct mthpd_kif *kif, const struct mthpd_target *t,
			     uint64_t *ret_anon, uint64_t *ret_huge);

/*
 * Reads /proc/PID/status again for THP_enabled: a process may call
 * prctl(PR_SET_THP_DISABLE) at any time (MariaDB does, after start-up).
 * Returns 0, -ESRCH when it exited, -errno.
 */
int mthpd_target_read_status(struct mthpd_kif *kif, struct mthpd_target *t);

/*
 * The page faults of the whole process so far (minflt + majflt of all its
 * threads, /proc/PID/stat).  Every page the process maps anew comes with a
 * fault, so an unchanged count says no page was added since.
 * Returns 0, -ESRCH when it exited, -errno.
 */
int mthpd_target_faults(struct mthpd_target *t, uint64_t *ret);

/* Closes the fds and frees the verdicts; accepts a half-opened or closed target. */
void mthpd_target_close(struct mthpd_target *t);

/* Forgets the VMA verdicts: the next pass asks the kernel again. */
void mthpd_target_forget_vmas(struct mthpd_target *t);

struct mthpd_pass_opts {
	const struct mthpd_knobs *knobs;
	const struct mthpd_features *features;
	int kpageflags_fd;
	bool collapse;             /* act on the plan; otherwise plan only */
	unsigned int subpmd_flags; /* process_madvise flags for blocks below 2M */
	uint64_t budget_bytes;     /* collapsed bytes allowed in this pass; 0: no limit */
	uint64_t start;            /* first address to look at (a cursor); 0: all */
	unsigned int batch;        /* 2M ranges per process_madvise() call, at most
				    * MTHPD_COLLAPSE_BATCH; 0: that many */
	uint64_t now_usec;         /* for the range backoff (monotonic); 0: no backoff */
	bool no_refill_backoff;    /* refill what mthpd collapsed before (bench/redis's
				    * comparison: MTHPD_DISABLE=refill_backoff) */
	bool split_partial;        /* with collapse: split 2M folios mapped in part (policy
				    * split_partial=) */
	bool probe;                /* with collapse: one range a call, and the pass stops
				    * after the first range that made one, as when the
				    * budget is spent (-EDQUOT): the allocation pause's
				    * probe whether huge pages can be allocated again */
};

struct mthpd_pass_stats {
	/* where the pass stopped when the sink said -EDQUOT: the next one starts
	 * there (0: it had reached the end anyway) */
	uint64_t resume;
	unsigned long vmas, vmas_refused, ranges, ranges_huge, blocks_planned, blocks_collapsed;
	unsigned long noops, madvise_calls, batches;
	unsigned long refill_backoff; /* ranges planned strictly: collapsed before, emptied since */
	unsigned long partial_folios; /* 2M folios mapped in part, found (before any split) */
	unsigned long splits;         /* of them, split */
	uint64_t partial_pages;       /* pages of those found that nothing mapped */
	uint64_t released_pages;      /* of them, freed by the splits */
	uint64_t bytes_collapsed;
	unsigned long kpageflags_pfns, pagemap_reads, scan_ioctls;
	bool smaps_read;
	/* the range where a huge page could not be allocated, and the pass stopped;
	 * 0: none (an old kernel's ENOMEM of a 16K block may leave it 0) */
	uint64_t alloc_failed_at;
};

/* Called for each populated range.  Returns >= 0 to go on, -errno to stop. */
typedef int (*mthpd_range_sink)(void *userdata, const struct mthpd_target *t,
				const struct mthpd_range_scan *scan,
				const struct mthpd_range_plan *plan);

/*
 * Walks every eligible VMA of @t from @o->start on.  Returns 0, -ESRCH when
 * the target exited mid-pass (what was done so far went through the sink),
 * the sink's -errno (-EDQUOT: a budget is spent; stats->resume says where
 * to go on), -ENOSPC when a huge page could not be allocated (issue 31:
 * the pass stops after that range, whose blocks of that size and larger
 * and the ranges of its batch are held_alloc_failed; stats->resume says
 * where to go on: the range that failed, or the next when unknown; the
 * caller holds collapses everywhere), or -errno.
 */
int mthpd_target_pass(struct mthpd_kif *kif, struct mthpd_target *t,
		      const struct mthpd_pass_opts *o, mthpd_range_sink sink, void *userdata,
		      struct mthpd_pass_stats *stats);

#endif
