/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What mthpd remembers of one process's 2 MiB ranges from pass to pass
 * (struct mthpd_target holds one): which failed for a lasting reason and
 * wait (the backoff), and which it collapsed (the refill set).  Pure
 * bookkeeping: no I/O.
 */
#ifndef MTHPD_BACKOFF_H
#define MTHPD_BACKOFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pagemap.h"

#define MTHPD_BACKOFF_MAX 16

struct mthpd_backoff {
	/*
	 * Ranges whose collapse failed for a lasting reason, not tried again
	 * before @until (monotonic us) unless their pagemap entries changed
	 * (@sig): at most MTHPD_BACKOFF_MAX of them, the oldest replaced.
	 */
	struct mthpd_backoff_range {
		uint64_t addr, sig, until;
		unsigned int fails;
	} ranges[MTHPD_BACKOFF_MAX];
	unsigned int nr_ranges;
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

/* Frees the refill set; the backoff table needs nothing.  Accepts a zeroed one. */
void mthpd_backoff_free(struct mthpd_backoff *m);

/* 512 GiB of collapsed ranges: 2 MiB of addresses per process at most */
#define MTHPD_REFILL_MAX (1U << 18)

/* Did mthpd collapse (part of) the 2 MiB range at @addr before? */
bool mthpd_refill_known(const struct mthpd_backoff *m, uint64_t addr);

/* Remembers that mthpd collapsed in the range at @addr.  Returns 0, -ENOMEM, -E2BIG when full. */
int mthpd_refill_note(struct mthpd_backoff *m, uint64_t addr);

/* The first retry after this, then twice as long each time, up to an hour. */
#define MTHPD_BACKOFF_BASE_USEC (30ULL * 1000000ULL)
#define MTHPD_BACKOFF_CAP_USEC (3600ULL * 1000000ULL)

/* Pure: a signature of a range's 512 pagemap entries (what is mapped where). */
uint64_t mthpd_range_sig(const uint64_t entries[MTHPD_PMD_NR]);

/* Is the range at @addr, with entries of signature @sig, still waiting at @now? */
bool mthpd_backoff_waiting(const struct mthpd_backoff *m, uint64_t addr, uint64_t sig, uint64_t now);

/*
 * After an attempt on the range at @addr: @lasting says it failed for a
 * reason that a retry would meet again (not an allocation failure, which
 * alloc_sleep_millisecs handles): it waits, twice as long as last time.
 * Otherwise it is forgotten.
 */
void mthpd_backoff_note(struct mthpd_backoff *m, uint64_t addr, uint64_t sig, bool lasting,
			uint64_t now);

#endif
