/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-range scan: the 512 pagemap entries of one 2 MiB range become the
 * bitmaps that mm/khugepaged.c: collapse_scan_pmd() builds while it walks the
 * PTEs (Linux 7.2, seed 008), plus what mthpd can see and khugepaged gets for
 * free: whether the range is already a PMD-mapped THP, and the order of any
 * large folio already mapped there.
 */
#ifndef MTHPD_SCAN_H
#define MTHPD_SCAN_H

#include <stdbool.h>
#include <stdint.h>

#include "pagemap.h"

#define MTHPD_BITMAP_WORDS (MTHPD_PMD_NR / 64)

struct mthpd_range_scan {
	uint64_t addr; /* 2 MiB aligned */
	/* present and not a zero page: kernel's !pte_none_or_zero() && pte_present() */
	uint64_t occupied[MTHPD_BITMAP_WORDS];
	/* swap entries: !pte_present(), counted as "unmapped" by the kernel */
	uint64_t swap[MTHPD_BITMAP_WORDS];
	/* guard markers: non-present like swap, but never swapped in */
	uint64_t guard[MTHPD_BITMAP_WORDS];
	/* occupied and not exclusively mapped: folio_maybe_mapped_shared() */
	uint64_t shared[MTHPD_BITMAP_WORDS];
	/* for occupied pages, the order of the large folio mapping it; 0 if small */
	uint8_t folio_order[MTHPD_PMD_NR];
	bool pmd_mapped;          /* already one PMD-mapped THP (or the huge zero page) */
	bool folio_orders_known;  /* folio_order[] was filled from kpageflags */
	/*
	 * A 2 MiB folio the range maps in part (partial_pfn, its first PFN;
	 * 0: none): the allocator gave some of its pages back, which splits
	 * the PMD mapping but not the folio, so its other 512 - partial_mapped
	 * pages stay allocated, mapped nowhere and counted in no RssAnon,
	 * until the kernel's deferred split runs under memory pressure.
	 * partial_page is a page of the range that maps it.
	 */
	uint64_t partial_pfn;
	uint16_t partial_mapped;
	uint16_t partial_page;
	/*
	 * Set by target.c, not the scan: mthpd tried to split such a folio
	 * before this scan (split_tried) with split_result (enum
	 * mthpd_scan_result); on success the range was scanned again after it,
	 * and @released pages of the folio, which nothing mapped, were freed.
	 */
	bool split_tried;
	uint8_t split_result;
	uint16_t released;
};

/* Pages a 2 MiB folio mapped in part holds that nothing maps (0: none). */
static inline unsigned int mthpd_scan_partial_unmapped(const struct mthpd_range_scan *s)
{
	return s->partial_pfn ? MTHPD_PMD_NR - s->partial_mapped : 0;
}

/* State of scanning one process; the zero-page PFN is learned on the way. */
struct mthpd_scan_ctx {
	int kpageflags_fd;       /* /proc/kpageflags, opened once */
	bool want_folio_orders;  /* sizes below 2M requested: read kpageflags of occupied pages */
	uint64_t zero_pfn;       /* PFN of the 4K zero page once seen, else UINT64_MAX */
	/*
	 * Runs of consecutive PFNs shorter than this are not read for folio
	 * orders: n pages prove at most order ceil(log2(n + 1)), so below
	 * 2^(m-1) pages they cannot stop a block of the smallest order m asked
	 * (seed 005).  0 reads every run.
	 */
	unsigned int min_folio_run;
	uint64_t nr_kpageflags_pfns;
};

void mthpd_scan_ctx_init(struct mthpd_scan_ctx *sc, int kpageflags_fd, bool want_folio_orders);

static inline bool mthpd_bit(const uint64_t *bm, unsigned int i)
{
	return (bm[i / 64] >> (i % 64)) & 1;
}

static inline void mthpd_set_bit(uint64_t *bm, unsigned int i)
{
	bm[i / 64] |= 1ULL << (i % 64);
}

/* Number of set bits in [from, to). */
unsigned int mthpd_bitmap_weight(const uint64_t *bm, unsigned int from, unsigned int to);

/*
 * Builds @ret for the range at @addr from its 512 pagemap @entries.
 * kpageflags is read only where the entries cannot answer: for present pages
 * that are not exclusively mapped (zero page or shared?), for the head of a
 * range that may be a PMD-mapped THP, for a page that may be part of a 2 MiB
 * folio left mapped in part (one or two 8-byte reads), and, when
 * sc->want_folio_orders, for the occupied pages (one pread per run of
 * consecutive PFNs).
 * Returns 0 or -errno from kpageflags.
 */
int mthpd_scan_range(struct mthpd_scan_ctx *sc, uint64_t addr,
		     const uint64_t entries[MTHPD_PMD_NR], struct mthpd_range_scan *ret);

/*
 * Builds @ret for a range known to be one PMD-mapped THP (every page
 * occupied by an order-9 folio) or, with @huge_zero, the huge zero page
 * (mapped, occupying nothing), without reading anything.
 */
void mthpd_scan_pmd_mapped(uint64_t addr, bool huge_zero, struct mthpd_range_scan *ret);

/*
 * Fills @s->folio_order from kpageflags of the occupied pages of the range
 * whose pagemap @entries built @s, one pread per run of consecutive PFNs.
 * Returns 0 or -errno.
 */
int mthpd_scan_read_folio_orders(struct mthpd_scan_ctx *sc, const uint64_t entries[MTHPD_PMD_NR],
				 struct mthpd_range_scan *s);

#endif
