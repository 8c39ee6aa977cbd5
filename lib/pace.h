/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pacing: a policy's `pace=` caps the share of wall time mthpd spends
 * working on one process (nearly all of it in process_madvise(), where the
 * kernel copies 2 MiB per range with the range's page table locked).  A
 * latency-sensitive service then sees its collapses one range at a time,
 * spread out, instead of one long pass that competes with it for the CPU.
 *
 * The process has a "virtual clock" @next: each slice of work of w us that
 * ended at @now moves it to max(next, now - w) + w * 100 / percent, so
 * that work and rest keep the ratio percent : (100 - percent).  Time not
 * used is not saved up: a process idle for an hour gets no burst.
 * Pure: no clock is read here; the daemon passes its monotonic time.
 */
#ifndef MTHPD_PACE_H
#define MTHPD_PACE_H

#include <stdbool.h>
#include <stdint.h>

/* What `pace=yes` means: the share measured on Redis (bench/redis, bench/README.md). */
#define MTHPD_PACE_DEFAULT_PERCENT 10U

/*
 * A process may go on working while its clock is at most this far ahead
 * of now: scanning a range costs tens of microseconds, and stopping after
 * each would arm a timer for a pause shorter than the wake-up.
 */
#define MTHPD_PACE_SLACK_USEC 1000ULL

/*
 * Charges @work_usec of work that ended at @now to the clock *@next, at
 * @percent (1..100; 100 and 0 charge nothing: not paced).  Returns how long
 * from @now the process must rest before more work (0: it may go on).
 */
uint64_t mthpd_pace_charge(uint64_t *next, uint64_t now, uint64_t work_usec, unsigned int percent);

/* How long from @now a process whose clock is at @next must still rest (0: none). */
uint64_t mthpd_pace_wait(uint64_t next, uint64_t now);

/* A policy's pace=. */
struct mthpd_pace_conf {
	unsigned int percent; /* share of wall time, 1..99; 0: not paced (and for auto) */
	bool autop;           /* pace=auto: by the service's CPU and memory stalls */
};

/* Whether a policy's processes are paced at all: one range per call, rests. */
static inline bool mthpd_paced(const struct mthpd_pace_conf *c)
{
	return c->autop || c->percent;
}

/*
 * Parses a `pace=` value: "no" (not paced), "yes" (the default percent),
 * "auto", or a percentage "1%".."99%" (the '%' may be left out).
 * Returns 0, or -EINVAL (and *ret is untouched).
 */
int mthpd_pace_parse(const char *v, struct mthpd_pace_conf *ret);

/*
 * pace=auto: as fast as unpaced while the service does not feel it, gentle
 * while it does.  It feels the daemon in two ways:
 *
 * - it waits for the CPU or for memory: the growth of the "some total"
 *   (us) of its cgroup's cpu.pressure and memory.pressure (PSI), the time
 *   at least one of its tasks was runnable and not running, or stalled on
 *   memory (the host's, where its cgroup has none);
 * - it is blocked by a collapse: while the kernel copies a 2 MiB range,
 *   the range is unmapped and the VMA locked, and a thread of the service
 *   that touches the VMA's memory faults and sleeps until the copy is done
 *   (lock_mm_and_find_vma).  A settled service faults seldom on its own,
 *   so any fault it took during the daemon's work counts as one, and as a
 *   wait as long as the longest a call of the window held a range (struct
 *   mthpd_kif's held_max_usec; where no hold is known, a fault is felt
 *   whatever it cost).
 *
 * The daemon's cost is its own CPU time (the collapse's copy runs in its
 * context), not wall time, so that a busy host does not stretch the rests
 * as it stretches a share of wall time.
 *
 * The work is judged in windows of MTHPD_PACE_AUTO_WINDOW_USEC: a window
 * in which the service waited, for the CPU, for memory or on the ranges
 * held, more than MTHPD_PACE_AUTO_STALL_PERCENT of it, ends in a rest
 * (at once, once the wait is more than a whole window allows) that keeps
 * the daemon's CPU time at 10% of the window and rest together.  A window
 * in which it felt nothing ends in no rest: full speed again.  (Shares
 * below 10% were tried, halved with each window in a row down to 1%: on
 * Redis they made time-to-huge 5 times as long and the p99 no better,
 * which one collapse's copy sets; bench/README.md.  Since prefault=,
 * lib/kif.h, a copy holds its range about a tenth as long on the guest
 * measured, and auto rests less often.)  Where the service's wait cannot be read,
 * every window ends in the first share's rest.
 */
#define MTHPD_PACE_AUTO_WINDOW_USEC 10000ULL
#define MTHPD_PACE_AUTO_STALL_PERCENT 10U
#define MTHPD_PACE_AUTO_MAX_LEVEL 1U /* 10% */
/* no rest longer than this: the service is asked again at least this often */
#define MTHPD_PACE_AUTO_MAX_REST_USEC 2000000ULL

/* What the service felt so far, as totals since some start. */
struct mthpd_pace_felt {
	uint64_t stall;  /* PSI "some total" of cpu and memory, us */
	uint64_t faults; /* its page faults, minor and major */
	/* the longest a range was held by one call since the last charge, us (0: unknown) */
	uint64_t held;
	bool stall_known, faults_known;
};

struct mthpd_pace_auto {
	uint64_t start;             /* monotonic us the window began */
	uint64_t cpu;               /* the daemon's CPU us spent on the process in it */
	struct mthpd_pace_felt mark; /* the totals at its start */
	uint64_t held;              /* the longest a range was held in it, us (0: unknown) */
	unsigned int level;         /* 0: full speed; 1..MAX: the share it is at */
	uint64_t felt_windows;      /* windows that ended in a rest, ever */
	uint64_t faulted_windows;   /* of those, ended by a fault of the service */
};

/* The CPU share (%) a process gets at @level (0: all it takes). */
unsigned int mthpd_pace_auto_share(unsigned int level);

/* A window begins at @now with what the service felt so far. */
void mthpd_pace_auto_start(struct mthpd_pace_auto *a, uint64_t now, const struct mthpd_pace_felt *f);

/*
 * Charges a slice of work that cost @cpu_usec of the daemon's CPU and
 * ended at @now, with what the service felt so far @f (a total that is
 * unknown now or was at the window's start counts as unknown).  Returns
 * the rest from @now (0: go on) and sets *@next to its end.
 */
uint64_t mthpd_pace_auto_charge(struct mthpd_pace_auto *a, uint64_t *next, uint64_t now,
				uint64_t cpu_usec, const struct mthpd_pace_felt *f);

#endif
