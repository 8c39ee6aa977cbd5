/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /proc/PID/pagemap: decoding its 64-bit entries, and finding the populated
 * 2 MiB ranges of a mapping so that the cost follows resident pages, not the
 * size of the mapping.
 *
 * Entry layout (Documentation/admin-guide/mm/pagemap.rst, measured on 6.18):
 *   63 present, 62 swapped, 61 file-page or shared-anon, 58 guard region
 *   (guard markers also show 62), 56 exclusively mapped, 55 soft-dirty
 *   (compiled out here), 0-54 PFN (zero without CAP_SYS_ADMIN).
 */
#ifndef MTHPD_PAGEMAP_H
#define MTHPD_PAGEMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "kif.h"

#define MTHPD_PAGE_SIZE 4096ULL
#define MTHPD_PMD_ORDER 9
#define MTHPD_PMD_NR 512
#define MTHPD_PMD_SIZE (MTHPD_PAGE_SIZE * MTHPD_PMD_NR)

#define PM_PFN_MASK ((1ULL << 55) - 1)
#define PM_SOFT_DIRTY (1ULL << 55)
#define PM_MMAP_EXCLUSIVE (1ULL << 56)
#define PM_GUARD_REGION (1ULL << 58)
#define PM_FILE (1ULL << 61)
#define PM_SWAP (1ULL << 62)
#define PM_PRESENT (1ULL << 63)

enum mthpd_pte_kind {
	MTHPD_PTE_NONE,    /* never touched, or discarded */
	MTHPD_PTE_PRESENT, /* mapped to a page (may still be the zero page) */
	MTHPD_PTE_SWAP,    /* swap entry (bit 62 without the guard bit 58) */
	MTHPD_PTE_GUARD,   /* MADV_GUARD_INSTALL marker: 62 and 58 */
};

/* Pure: what an entry says.  Guard markers carry bit 62 too (measured):
 * bit 58 is tested first.  Inline: it runs for every entry scanned. */
static inline enum mthpd_pte_kind mthpd_pagemap_kind(uint64_t entry)
{
	if (entry & PM_PRESENT)
		return MTHPD_PTE_PRESENT;
	if (entry & PM_GUARD_REGION)
		return MTHPD_PTE_GUARD;
	if (entry & PM_SWAP)
		return MTHPD_PTE_SWAP;
	return MTHPD_PTE_NONE;
}

static inline uint64_t mthpd_pagemap_pfn(uint64_t entry)
{
	return entry & PM_PFN_MASK;
}

/*
 * Reader of one process's pagemap.  With PAGEMAP_SCAN (Linux 6.7+) empty
 * stretches are skipped by the kernel's page-table walk; without it every
 * entry of the mapping is read.
 */
/* Regions asked of one PAGEMAP_SCAN, and pages: bounds the ranges it can name. */
#define MTHPD_SCAN_REGIONS 256
#define MTHPD_SCAN_PAGES 4096
#define MTHPD_SCAN_QUEUE (MTHPD_SCAN_PAGES / MTHPD_PMD_NR + 2 * MTHPD_SCAN_REGIONS)

/* A populated range named by a PAGEMAP_SCAN, with the span of pages [lo, hi) its regions cover. */
struct mthpd_scan_hit {
	uint64_t addr;
	uint16_t lo, hi;
	uint8_t huge; /* enum mthpd_huge: PAGEMAP_SCAN said PAGE_IS_HUGE for all of it */
};

struct mthpd_pagemap {
	const struct mthpd_kif *kif;
	int fd;
	bool use_scan;       /* PAGEMAP_SCAN available and wanted */
	bool last_populated; /* the range just read ends populated: read the next one straight */
	/*
	 * Populated ranges named by the last PAGEMAP_SCAN, below scanned_to
	 * (its walk_end): only their entries are read, the rest were empty.
	 * MTHPD_SCAN_QUEUE of them (8 KiB), lent by the caller for the walk
	 * under way, not kept: a daemon keeps a reader per process, and a
	 * queue each was most of its memory per process (bench/synth: 9.3 KB
	 * a process).  NULL: PAGEMAP_SCAN is not used.
	 */
	struct mthpd_scan_hit *queue;
	unsigned int q_head, q_len;
	uint64_t scanned_to;
	/* What mthpd_pagemap_next_range() knows of the range it returned last. */
	enum mthpd_huge {
		MTHPD_HUGE_NO,   /* its entries were read: the scan decides */
		MTHPD_HUGE_PMD,  /* one PMD-mapped THP: entries not read */
		MTHPD_HUGE_ZERO, /* the huge zero page, PMD-mapped: entries not read */
	} last_huge;
	uint64_t nr_huge_skipped; /* ranges returned as MTHPD_HUGE_PMD/ZERO */
	uint64_t nr_scan_ioctls;
	uint64_t nr_range_reads;
};

/* Forgets the walk state: call before each VMA. */
void mthpd_pagemap_reset(struct mthpd_pagemap *pm);

/*
 * Reads @nr entries starting at virtual address @addr into @ret.
 * Returns 0, -ESRCH when the process has exited (the kernel answers EOF),
 * or -errno.
 */
int mthpd_pagemap_read(struct mthpd_pagemap *pm, uint64_t addr, unsigned int nr, uint64_t *ret);

/*
 * Finds the first PMD-aligned 2 MiB range in [*cursor, end) holding a present
 * or swapped entry, reads its 512 entries into @ret_entries and its address
 * into *ret_addr, and moves *cursor past it.  @cursor and @end are 2 MiB
 * aligned.  Returns 1 when a range was found, 0 when none is left, -errno.
 * Where PAGEMAP_SCAN reported the whole range as one huge page
 * (PAGE_IS_HUGE: a PMD-mapped THP), its entries are not read: pm->last_huge
 * says so and @ret_entries is zeroed.  Settled memory costs one ioctl for
 * many ranges, not 512 entries and two kpageflags reads each.
 */
int mthpd_pagemap_next_range(struct mthpd_pagemap *pm, uint64_t *cursor, uint64_t end,
			     uint64_t *ret_addr, uint64_t ret_entries[MTHPD_PMD_NR]);

/*
 * Probes PAGEMAP_SCAN on an open pagemap fd.  Returns 1 if supported, 0 if
 * not (ENOTTY/EINVAL: older kernel or a fixture file), -errno otherwise.
 */
int mthpd_pagemap_scan_probe(const struct mthpd_kif *kif, int fd);

#endif
