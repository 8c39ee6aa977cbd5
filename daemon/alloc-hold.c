/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The allocation pause (issue 31).  A huge page that cannot be allocated
 * says the host has no free 2 MiB block that compaction could make, and
 * every further try compacts again, at every process's cost: the pass
 * stops at the first failure (lib/target.c), and nothing is collapsed
 * until a probe, one range, an eighth of alloc_sleep_millisecs later (at
 * least 1 s), then twice as long while the probes fail, up to
 * alloc_sleep_millisecs.  Freed memory ends it
 * sooner: /proc/buddyinfo is read once a second on the arrival timer's
 * tick, and more free 2 MiB blocks than at the failure end it at once.
 */
#include <inttypes.h>
#include <stdio.h>

#include "act.h"
#include "buddyinfo.h"
#include "daemon.h"
#include "hold.h"
#include "log.h"

/* buddyinfo at most this often (the arrival timer ticks once a second) */
#define BUDDYINFO_INTERVAL_USEC (ARRIVAL_CHECK_MSEC * 1000ULL * 9 / 10)

/* Free 2 MiB blocks now, UINT64_MAX when /proc/buddyinfo cannot be read. */
static uint64_t free_pmd_blocks(const struct daemon *d)
{
	uint64_t n;

	return mthpd_buddyinfo_read(&d->kif, MTHPD_PMD_ORDER, &n) < 0 ? UINT64_MAX : n;
}

/*
 * The host's compaction since the last reading, as the kernel counts it
 * (/proc/vmstat compact_stall, compact_fail: every process's, not only
 * the daemon's), in @buf: "; compaction stalled 3 times and failed 2 since
 * ...", or "" when vmstat cannot be read or there was no reading before.
 */
static void compaction_since(struct daemon *d, const char *since, char *buf, size_t size)
{
	char vm[16384];
	uint64_t stall, fail;

	buf[0] = '\0';
	if (mthpd_kif_read_proc(&d->kif, "vmstat", vm, sizeof(vm)) < 0 ||
	    mthpd_act_parse_vmstat(vm, "compact_stall", &stall) < 0 ||
	    mthpd_act_parse_vmstat(vm, "compact_fail", &fail) < 0) {
		d->alloc_compact_known = false;
		return;
	}
	if (d->alloc_compact_known)
		(void)snprintf(buf, size, "; compaction stalled %" PRIu64 " time%s and failed %" PRIu64 " %s",
			       stall - d->alloc_compact_stall, stall - d->alloc_compact_stall == 1 ? "" : "s",
			       fail - d->alloc_compact_fail, since);
	d->alloc_compact_stall = stall;
	d->alloc_compact_fail = fail;
	d->alloc_compact_known = true;
}

void alloc_hold_init(struct daemon *d)
{
	char unused[8];

	compaction_since(d, "", unused, sizeof(unused));
}

static void hold_end(struct daemon *d, const char *why)
{
	char compaction[128];

	compaction_since(d, "during the pause", compaction, sizeof(compaction));
	log_notice("huge pages can be allocated again (%s): the allocation pause ends after "
		   "%.1f s and %u failed allocation%s%s, collapsing resumes",
		   why, (double)(now_usec() - d->alloc_hold_since) / 1e6, d->alloc_failures,
		   d->alloc_failures == 1 ? "" : "s", compaction);
	d->alloc_hold = false;
	d->alloc_failures = 0;
	d->no_collapse_until = 0;
	d->metrics.alloc_hold = false;
}

void alloc_hold_failed(struct daemon *d, pid_t pid, const char *comm)
{
	const uint64_t max = d->cfg->daemon.alloc_sleep_millisecs * 1000ULL;
	uint64_t now = now_usec(), wait;
	char cause[96], compaction[128];

	d->alloc_failures++;
	wait = mthpd_hold_probe_delay(d->alloc_failures, max);
	d->no_collapse_until = now + wait;
	d->alloc_free_blocks = free_pmd_blocks(d);
	d->alloc_checked_usec = now;
	d->metrics.alloc_hold = true;
	d->metrics.alloc_probe_usec = d->no_collapse_until;
	if (d->alloc_free_blocks == 0)
		(void)snprintf(cause, sizeof(cause), "no free 2 MiB block");
	else if (d->alloc_free_blocks == UINT64_MAX)
		(void)snprintf(cause, sizeof(cause), "/proc/buddyinfo unreadable");
	else
		(void)snprintf(cause, sizeof(cause), "%" PRIu64 " free 2 MiB blocks, none it could take",
			       d->alloc_free_blocks);
	(void)snprintf(d->metrics.alloc_cause, sizeof(d->metrics.alloc_cause), "%s", cause);
	if (d->alloc_hold) {
		/* a failed probe: the next waits twice as long, said at info */
		log_info("allocation pause: the probe with pid %d '%s' failed too (%s): next in %.1f s",
			 (int)pid, comm, cause, (double)wait / 1e6);
		return;
	}
	d->alloc_hold = true;
	d->alloc_hold_since = now;
	compaction_since(d, d->alloc_pauses ? "since the last pause" : "since mthpd started", compaction,
			 sizeof(compaction));
	d->alloc_pauses++;
	log_notice("a huge page could not be allocated for pid %d '%s' (%s%s): collapsing nothing, "
		   "next try with one range in %.1f s, then up to every %u ms; at once when 2 MiB "
		   "blocks are free again",
		   (int)pid, comm, cause, compaction, (double)wait / 1e6,
		   d->cfg->daemon.alloc_sleep_millisecs);
}

void alloc_hold_probe_done(struct daemon *d)
{
	if (d->alloc_hold)
		hold_end(d, "a probe collapsed");
}

bool alloc_hold_poll(struct daemon *d)
{
	uint64_t now = now_usec(), n;
	char why[64];

	if (!d->alloc_hold)
		return false;
	if (now >= d->no_collapse_until) {
		/* the probe's time: one pass for it, not one every tick */
		if (d->alloc_probe_passed == d->no_collapse_until)
			return false;
		d->alloc_probe_passed = d->no_collapse_until;
		return true;
	}
	if (now - d->alloc_checked_usec < BUDDYINFO_INTERVAL_USEC)
		return false;
	d->alloc_checked_usec = now;
	n = free_pmd_blocks(d);
	if (!mthpd_hold_alloc_freed(d->alloc_free_blocks, n))
		return false;
	(void)snprintf(why, sizeof(why), "%" PRIu64 " free 2 MiB blocks", n);
	hold_end(d, why);
	return true;
}
