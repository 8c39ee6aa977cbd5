/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A struct mthpd_kif for tests: files come from a directory the test fills,
 * and process_madvise(MADV_COLLAPSE) is not called but recorded, answered
 * from a script, and (on scripted success) made visible by rewriting the
 * fake /proc/kpageflags as the kernel would have.  [chrony test/unit/test.c]
 */
#ifndef MTHPD_FAKE_KIF_H
#define MTHPD_FAKE_KIF_H

#include <stdbool.h>
#include <stdint.h>

#include "kif.h"

#define FAKE_KIF_MAX_CALLS 256

struct fake_kif_call {
	uint64_t addr, len;
	unsigned int flags; /* FAKE_KIF_COLD: a MADV_COLD call, not a collapse */
};
#define FAKE_KIF_COLD 0x80000000U

/* A prefault (ops->prefault): of @n pages, made before calls[@before_call]. */
struct fake_kif_prefault {
	unsigned int before_call, n;
};

struct fake_kif {
	struct mthpd_kif kif;
	char dir[64];             /* mkdtemp()'d root: proc/, with pagemap and kpageflags */
	/* answers for the next calls, in order: >= 0 succeeds, < 0 is -errno */
	int64_t answers[FAKE_KIF_MAX_CALLS];
	/* with a successful answer, rewrite kpageflags so the block is a folio */
	bool effect[FAKE_KIF_MAX_CALLS];
	/* with effect: the folio's size in bytes (0: the call's length), placed
	 * at the call's address rounded down to it */
	uint64_t folio_len[FAKE_KIF_MAX_CALLS];
	unsigned int nr_answers;
	struct fake_kif_call calls[FAKE_KIF_MAX_CALLS]; /* a batch: one per block */
	unsigned int nr_calls;
	unsigned int nr_batches;  /* collapse_batch() calls */
	struct fake_kif_prefault prefaults[FAKE_KIF_MAX_CALLS];
	unsigned int nr_prefaults;
	/*
	 * With fake_kif_vmstat(): proc/vmstat holds thp_collapse_alloc_failed
	 * @alloc_failed, and an -ENOMEM answer with effect counts one more
	 * there (an allocation failure); without effect it is a range that
	 * is not mapped, which the kernel does not count.
	 */
	bool has_vmstat;
	uint64_t alloc_failed;
	uint64_t pfn_base; /* PFN of the page at the fake mapping's base address */
	unsigned int call_usec; /* each collapse of a block takes this long (nanosleep) */
	uint64_t base;     /* the fake mapping's first address */
};

/*
 * Creates a temporary root with proc/42/pagemap for @nr_pages pages at @base,
 * all present and exclusive, PFNs pfn_base + i, and proc/kpageflags marking
 * them small anon pages.  Returns 0 or -errno.
 */
int fake_kif_init(struct fake_kif *f, uint64_t base, unsigned int nr_pages, uint64_t pfn_base);
void fake_kif_done(struct fake_kif *f);
void fake_kif_answer(struct fake_kif *f, int64_t answer, bool effect);
/* Marks the pages at @addr..@addr+@len in kpageflags as one THP folio.  Returns 0 or -errno. */
int fake_kif_folio(struct fake_kif *f, uint64_t addr, uint64_t len);
/* Writes proc/vmstat with thp_collapse_alloc_failed @alloc_failed.  Returns 0 or -errno. */
int fake_kif_vmstat(struct fake_kif *f, uint64_t alloc_failed);
/* A success that leaves a folio of @folio_len around the block (a kernel
 * that collapsed more, or other than, what was asked). */
void fake_kif_answer_folio(struct fake_kif *f, int64_t answer, uint64_t folio_len);

#endif
