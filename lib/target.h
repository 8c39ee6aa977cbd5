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
#include "features.h"
#include "kif.h"
#include "pagemap.h"
#include "plan.h"
#include "scan.h"

#define MTHPD_BACKOFF_MAX 16

/* What the kernel answered for a VMA: does MADV_COLLAPSE refuse it? */
struct mthpd_vma_verdict {
	uint64_t start, end;
	bool refused;
};

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
	/*
	 * Ranges whose collapse failed for a lasting reason, not tried again
	 * before @until (monotonic us) unless their pagemap entries changed
	 * (@sig): at most MTHPD_BACKOFF_MAX of them, the oldest replaced.
	 */
	struct mthpd_backoff {
		uint64_t addr, sig, until;
		unsigned int fails;
	} backoff[MTHPD_BACKOFF_MAX];
	unsigned int nr_backoff;
	/*
	 * The 2 MiB ranges mthpd collapsed (something in them), sorted: one
	 * that is planned again has lost its folio since (the allocator gave
	 * pages back, the kernel split it), and is only collapsed again where
	 * that adds no memory (max_ptes_none 0), not refilled pass after
	 * pass.  At most MTHPD_REFILL_MAX, then no more are added.
	 */
	uint64_t *collapsed;
	size_t nr_collapsed, collapsed_size;
};
/* 512 GiB of collapsed ranges: 2 MiB of addresses per process at most */
#define MTHPD_REFILL_MAX (1U << 18)

/* Did mthpd collapse (part of) the 2 MiB range at @addr before? */
bool mthpd_refill_known(const struct mthpd_target *t, uint64_t addr);

/* Remembers that mthpd collapsed in the range at @addr.  Returns 0, -ENOMEM, -E2BIG when full. */
int mthpd_refill_note(struct mthpd_target *t, uint64_t addr);
/* The first retry after this, then twice as long each time, up to an hour. */
#define MTHPD_BACKOFF_BASE_USEC (30ULL * 1000000ULL)
#define MTHPD_BACKOFF_CAP_USEC (3600ULL * 1000000ULL)

/* Pure: a signature of a range's 512 pagemap entries (what is mapped where). */
uint64_t mthpd_range_sig(const uint64_t entries[MTHPD_PMD_NR]);

/* Is the range at @addr, with entries of signature @sig, still waiting at @now? */
bool mthpd_backoff_waiting(const struct mthpd_target *t, uint64_t addr, uint64_t sig, uint64_t now);

/*
 * After an attempt on the range at @addr: @lasting says it failed for a
 * reason that a retry would meet again (not an allocation failure, which
 * alloc_sleep_millisecs handles): it waits, twice as long as last time.
 * Otherwise it is forgotten.
 */
void mthpd_backoff_note(struct mthpd_target *t, uint64_t addr, uint64_t sig, bool lasting,
			uint64_t now);

/*
 * Opens /proc/PID/pagemap, reads comm and status, and with @need_pidfd opens
 * a pidfd.  Returns 0, -ESRCH for no such process, -EACCES/-EPERM when it
 * may not be read, -EOPNOTSUPP for a kernel thread (no user memory),
 * -errno.  On failure @ret is left closed.
 */
int mthpd_target_open(struct mthpd_kif *kif, pid_t pid, bool need_pidfd,
		      struct mthpd_target *ret);

/*
 * Reads /proc/PID/status again for THP_enabled: a process may call
 * prctl(PR_SET_THP_DISABLE) at any time (MariaDB does, after start-up).
 * Returns 0, -ESRCH when it exited, -errno.
 */
int mthpd_target_read_status(struct mthpd_kif *kif, struct mthpd_target *t);

/*
 * Pure: the RssAnon of a /proc/PID/status text ("...\nRssAnon:\t 1234 kB\n..."),
 * in bytes.  Returns 0, -ENOENT when it has none (a kernel thread, a
 * synthetic tree), -EINVAL when it is not a number of kB.
 */
int mthpd_status_parse_rss_anon(const char *status, uint64_t *ret);

/*
 * Pure: the Anonymous and AnonHugePages lines of a /proc/PID/smaps_rollup
 * text, in bytes: what the kernel maps of the process's anonymous memory
 * now, and of it PMD-mapped.  Returns 0, -ENOENT when a line is missing,
 * -EINVAL when one is not a number of kB.
 */
int mthpd_rollup_parse(const char *rollup, uint64_t *ret_anon, uint64_t *ret_huge);

/*
 * The same read from /proc/PID/smaps_rollup: exact, unlike RssAnon (per-CPU
 * counters), at the price of a walk of the process's page tables.
 * Returns 0, -ENOENT (a synthetic tree without it, or gone), -errno.
 */
int mthpd_target_read_rollup(struct mthpd_kif *kif, const struct mthpd_target *t,
			     uint64_t *ret_anon, uint64_t *ret_huge);

/*
 * Pure: what a user can do about a process with THP disabled, by its comm:
 * the setting of a service known to turn it off, or a general sentence.
 */
const char *mthpd_thp_disabled_hint(const char *comm);

/*
 * Pure: minflt + majflt of a /proc/PID/stat line, e.g.
 * "1234 (redis-server) S 1 1234 1234 0 -1 4194560 1500 0 3 0 ...": 1503.
 * The comm may hold spaces and parentheses: fields count from the last ')'.
 * Returns 0, or -EINVAL for a line that is not one.
 */
int mthpd_stat_parse_faults(const char *line, uint64_t *ret);

/* Pure: 1 if the /proc/PID/stat line is a kernel thread's (PF_KTHREAD), 0 if not, -EINVAL. */
int mthpd_stat_parse_kthread(const char *line);

/*
 * Pure: the comm (between the first '(' and the last ')', cut to fit
 * @comm_size) and the start time (field 22, clock ticks after boot) of a
 * /proc/PID/stat line.  A pid and its start time name one process for the
 * whole boot; a pid alone is reused.  Returns 0, or -EINVAL for a line
 * that is not one (then nothing is written).
 */
int mthpd_stat_parse_start(const char *line, char *ret_comm, size_t comm_size,
			   uint64_t *ret_start);

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
};

/* Called for each populated range.  Returns >= 0 to go on, -errno to stop. */
typedef int (*mthpd_range_sink)(void *userdata, const struct mthpd_target *t,
				const struct mthpd_range_scan *scan,
				const struct mthpd_range_plan *plan);

/*
 * Walks every eligible VMA of @t from @o->start on.  Returns 0, -ESRCH when
 * the target exited mid-pass (what was done so far went through the sink),
 * the sink's -errno (-EDQUOT: a budget is spent; stats->resume says where
 * to go on), or -errno.
 */
int mthpd_target_pass(struct mthpd_kif *kif, struct mthpd_target *t,
		      const struct mthpd_pass_opts *o, mthpd_range_sink sink, void *userdata,
		      struct mthpd_pass_stats *stats);

#endif
