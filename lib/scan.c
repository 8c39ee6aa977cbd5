/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>

#include "kpageflags.h"
#include "scan.h"

void mthpd_scan_ctx_init(struct mthpd_scan_ctx *sc, int kpageflags_fd, bool want_folio_orders)
{
	*sc = (struct mthpd_scan_ctx){
		.kpageflags_fd = kpageflags_fd,
		.want_folio_orders = want_folio_orders,
		.zero_pfn = UINT64_MAX,
	};
}

unsigned int mthpd_bitmap_weight(const uint64_t *bm, unsigned int from, unsigned int to)
{
	unsigned int n = 0;

	while (from < to && (from % 64)) {
		n += mthpd_bit(bm, from);
		from++;
	}
	for (; from + 64 <= to; from += 64)
		n += (unsigned int)__builtin_popcountll(bm[from / 64]);
	for (; from < to; from++)
		n += mthpd_bit(bm, from);
	return n;
}

/*
 * A present page that is not exclusively mapped is either the shared zero
 * page or an anon page mapped by more than one process.  Exclusive pages are
 * never the zero page, so only these few need kpageflags; the zero page's
 * PFN is the same everywhere and is remembered once seen.
 * Returns 1 for the zero page, 0 otherwise, -errno.
 */
static int is_zero_pfn(struct mthpd_scan_ctx *sc, uint64_t pfn)
{
	uint64_t flags;
	int r;

	if (pfn == sc->zero_pfn)
		return 1;
	if (sc->kpageflags_fd < 0)
		return 0;
	r = mthpd_kpageflags_read(sc->kpageflags_fd, pfn, 1, &flags);
	sc->nr_kpageflags_pfns++;
	if (r == -ERANGE)
		return 0; /* beyond the memory map: no zero page there */
	if (r < 0)
		return r;
	if (!(flags & KPF_BIT(KPF_ZERO_PAGE)))
		return 0;
	sc->zero_pfn = pfn;
	return 1;
}

/*
 * 512 present entries with consecutive PFNs from a 512-aligned head may be
 * one order-9 folio.  The head's flags alone cannot tell it from 32 small
 * folios laid back to back; page 256's can: a compound tail there, with
 * naturally aligned folios, belongs to a folio of order 9 or more that
 * starts at the head.  Two 8-byte reads instead of 512.
 * The huge zero page shows bit 61 (FILE) on every entry (measured); the
 * kernel sees a huge PMD there too (SCAN_PMD_MAPPED).
 * Sets *ret_pmd_mapped, and *ret_huge_zero for the huge zero page.
 */
static int detect_pmd_mapped(struct mthpd_scan_ctx *sc, const uint64_t e[MTHPD_PMD_NR],
			     bool *ret_pmd_mapped, bool *ret_huge_zero)
{
	const uint64_t thp = KPF_BIT(KPF_THP), zero = KPF_BIT(KPF_ZERO_PAGE);
	const uint64_t head_mask = KPF_BIT(KPF_COMPOUND_HEAD) | thp | zero;
	const uint64_t tail_mask = KPF_BIT(KPF_COMPOUND_TAIL) | thp | zero;
	uint64_t head = mthpd_pagemap_pfn(e[0]), flags;
	bool file = true;
	int r;

	*ret_pmd_mapped = *ret_huge_zero = false;
	if (!(e[0] & PM_PRESENT) || head == 0 || (head & (MTHPD_PMD_NR - 1)))
		return 0;
	for (unsigned int i = 1; i < MTHPD_PMD_NR; i++)
		if (!(e[i] & PM_PRESENT) || mthpd_pagemap_pfn(e[i]) != head + i)
			return 0;
	for (unsigned int i = 0; i < MTHPD_PMD_NR && file; i++)
		file = e[i] & PM_FILE;
	if (file) {
		*ret_pmd_mapped = *ret_huge_zero = true;
		return 0;
	}
	if (sc->kpageflags_fd < 0)
		return 0;
	r = mthpd_kpageflags_read(sc->kpageflags_fd, head, 1, &flags);
	sc->nr_kpageflags_pfns++;
	if (r < 0)
		return r == -ERANGE ? 0 : r;
	if ((flags & head_mask) != (KPF_BIT(KPF_COMPOUND_HEAD) | thp))
		return 0;
	r = mthpd_kpageflags_read(sc->kpageflags_fd, head + MTHPD_PMD_NR / 2, 1, &flags);
	sc->nr_kpageflags_pfns++;
	if (r < 0)
		return r == -ERANGE ? 0 : r;
	*ret_pmd_mapped = (flags & tail_mask) == (KPF_BIT(KPF_COMPOUND_TAIL) | thp);
	return 0;
}

/*
 * A 2 MiB folio that was PMD-mapped here and lost part of its mapping
 * (MADV_DONTNEED of some pages splits the PMD, not the folio) still maps
 * each page that is left where the PMD put it: page i at PFN head + i,
 * the head 512-aligned.  The head that the most exclusive pages point to
 * this way is checked as detect_pmd_mapped() checks a whole one: a THP
 * head there and a THP tail at head + 256 make one folio of order 9.  A
 * random small page points to an aligned head once in 512, so a range of
 * small pages costs about one 8-byte read here.  The folio's pages the
 * range maps are then counted wherever they are; a page of it mapped
 * shared, or all 512 mapped, is no partial folio to report.
 */
static int detect_partial(struct mthpd_scan_ctx *sc, const uint64_t e[MTHPD_PMD_NR],
			  struct mthpd_range_scan *s)
{
	const uint64_t thp = KPF_BIT(KPF_THP), zero = KPF_BIT(KPF_ZERO_PAGE);
	uint64_t heads[4], head, flags;
	unsigned int votes[4] = {0}, nr = 0, best = 0, mapped = 0, page = MTHPD_PMD_NR;
	int r;

	/* the exclusive occupied pages only, by their bits: a sparse range costs little */
	for (unsigned int w = 0; w < MTHPD_BITMAP_WORDS; w++) {
		for (uint64_t bits = s->occupied[w] & ~s->shared[w]; bits; bits &= bits - 1) {
			unsigned int i = w * 64 + (unsigned int)__builtin_ctzll(bits), k;
			uint64_t pfn = mthpd_pagemap_pfn(e[i]);

			if ((pfn & (MTHPD_PMD_NR - 1)) != i || pfn == i)
				continue;
			for (k = 0; k < nr && heads[k] != pfn - i; k++)
				;
			if (k == nr) {
				if (nr == 4)
					continue;
				heads[nr++] = pfn - i;
			}
			votes[k]++;
		}
	}
	if (nr == 0)
		return 0;
	for (unsigned int k = 1; k < nr; k++)
		if (votes[k] > votes[best])
			best = k;
	head = heads[best];

	r = mthpd_kpageflags_read(sc->kpageflags_fd, head, 1, &flags);
	sc->nr_kpageflags_pfns++;
	if (r < 0 || (flags & (KPF_BIT(KPF_COMPOUND_HEAD) | thp | zero)) !=
			     (KPF_BIT(KPF_COMPOUND_HEAD) | thp))
		return r == -ERANGE || r >= 0 ? 0 : r;
	r = mthpd_kpageflags_read(sc->kpageflags_fd, head + MTHPD_PMD_NR / 2, 1, &flags);
	sc->nr_kpageflags_pfns++;
	if (r < 0 || (flags & (KPF_BIT(KPF_COMPOUND_TAIL) | thp | zero)) !=
			     (KPF_BIT(KPF_COMPOUND_TAIL) | thp))
		return r == -ERANGE || r >= 0 ? 0 : r;

	for (unsigned int i = 0; i < MTHPD_PMD_NR; i++) {
		uint64_t pfn = mthpd_pagemap_pfn(e[i]);

		if (!mthpd_bit(s->occupied, i) || pfn < head || pfn >= head + MTHPD_PMD_NR)
			continue;
		if (mthpd_bit(s->shared, i))
			return 0;
		mapped++;
		if (pfn == head + i && page == MTHPD_PMD_NR)
			page = i; /* the first left in place: the split's address */
	}
	if (page == MTHPD_PMD_NR || mapped >= MTHPD_PMD_NR)
		return 0;
	s->partial_pfn = head;
	s->partial_mapped = (uint16_t)mapped;
	s->partial_page = (uint16_t)page;
	return 0;
}

int mthpd_scan_read_folio_orders(struct mthpd_scan_ctx *sc, const uint64_t e[MTHPD_PMD_NR],
				 struct mthpd_range_scan *s)
{
	uint64_t pfn[MTHPD_PMD_NR], flags[MTHPD_PMD_NR];
	uint8_t valid[MTHPD_PMD_NR];
	unsigned int i = 0;
	int r;

	for (unsigned int k = 0; k < MTHPD_PMD_NR; k++) {
		valid[k] = mthpd_bit(s->occupied, k);
		pfn[k] = mthpd_pagemap_pfn(e[k]);
	}
	while (i < MTHPD_PMD_NR) {
		unsigned int j;

		if (!valid[i]) {
			i++;
			continue;
		}
		for (j = i + 1; j < MTHPD_PMD_NR && valid[j] && pfn[j] == pfn[i] + (j - i); j++)
			;
		if (j - i < sc->min_folio_run) {
			/* Too short to prove a folio of the smallest order asked: small pages. */
			memset(valid + i, 0, j - i);
			i = j;
			continue;
		}
		r = mthpd_kpageflags_read(sc->kpageflags_fd, pfn[i], j - i, flags + i);
		sc->nr_kpageflags_pfns += j - i;
		if (r == -ERANGE) {
			/* PFN outside the memory map (device page?): not a folio. */
			memset(valid + i, 0, j - i);
		} else if (r < 0) {
			return r;
		}
		i = j;
	}
	mthpd_kpageflags_folio_orders(pfn, flags, valid, MTHPD_PMD_NR, s->folio_order);
	s->folio_orders_known = true;
	return 0;
}

void mthpd_scan_pmd_mapped(uint64_t addr, bool huge_zero, struct mthpd_range_scan *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->addr = addr;
	ret->pmd_mapped = true;
	ret->folio_orders_known = true;
	if (huge_zero)
		return; /* mapped, but it occupies nothing */
	memset(ret->occupied, 0xff, sizeof(ret->occupied));
	memset(ret->folio_order, MTHPD_PMD_ORDER, sizeof(ret->folio_order));
}

int mthpd_scan_range(struct mthpd_scan_ctx *sc, uint64_t addr,
		     const uint64_t entries[MTHPD_PMD_NR], struct mthpd_range_scan *ret)
{
	struct mthpd_range_scan *s = ret;
	bool pmd_mapped, huge_zero;
	int r;

	r = detect_pmd_mapped(sc, entries, &pmd_mapped, &huge_zero);
	if (r < 0)
		return r;
	if (pmd_mapped) {
		mthpd_scan_pmd_mapped(addr, huge_zero, s);
		return 0;
	}
	memset(s, 0, sizeof(*s));
	s->addr = addr;

	for (unsigned int i = 0; i < MTHPD_PMD_NR; i++) {
		uint64_t e = entries[i];

		if (e == 0)
			continue; /* none: most entries of a sparse range */
		switch (mthpd_pagemap_kind(e)) {
		case MTHPD_PTE_NONE:
			break;
		case MTHPD_PTE_SWAP:
			mthpd_set_bit(s->swap, i);
			break;
		case MTHPD_PTE_GUARD:
			mthpd_set_bit(s->guard, i);
			break;
		case MTHPD_PTE_PRESENT:
			/* Bit 61 in a private anon VMA: a huge zero page mapped by PTEs. */
			if (e & PM_FILE)
				break;
			if (!(e & PM_MMAP_EXCLUSIVE)) {
				r = is_zero_pfn(sc, mthpd_pagemap_pfn(e));
				if (r < 0)
					return r;
				if (r > 0)
					break;
				mthpd_set_bit(s->shared, i);
			}
			mthpd_set_bit(s->occupied, i);
			break;
		}
	}

	if (sc->kpageflags_fd >= 0) {
		r = detect_partial(sc, entries, s);
		if (r < 0)
			return r;
	}
	if (sc->want_folio_orders && sc->kpageflags_fd >= 0) {
		r = mthpd_scan_read_folio_orders(sc, entries, s);
		if (r < 0)
			return r;
	}
	return 0;
}
