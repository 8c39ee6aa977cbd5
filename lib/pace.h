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

/*
 * Parses a `pace=` value: "no" (0: not paced), "yes" (the default
 * percent), or a percentage "1%".."99%" (the '%' may be left out).
 * Returns 0, or -EINVAL.
 */
int mthpd_pace_parse(const char *v, unsigned int *ret);

#endif
