/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "pagemap.h"
#include "uapi.h"
#include "util.h"

int mthpd_pagemap_read(struct mthpd_pagemap *pm, uint64_t addr, unsigned int nr, uint64_t *ret)
{
	int r = mthpd_pread_full(pm->fd, ret, (size_t)nr * sizeof(uint64_t),
				 addr / MTHPD_PAGE_SIZE * sizeof(uint64_t));

	/* A pagemap fd of an exited process reads EOF, not an error. */
	if (r == -ENODATA)
		return -ESRCH;
	if (r == 0)
		pm->nr_range_reads++;
	return r;
}

void mthpd_pagemap_reset(struct mthpd_pagemap *pm)
{
	pm->last_populated = false;
	pm->q_head = pm->q_len = 0;
	pm->scanned_to = 0;
}

static bool range_populated(const uint64_t e[MTHPD_PMD_NR])
{
	for (unsigned int i = 0; i < MTHPD_PMD_NR; i++)
		if (e[i] & (PM_PRESENT | PM_SWAP))
			return true;
	return false;
}

/*
 * Asks the kernel which pages in [start, end) are present or swapped, up to
 * MTHPD_SCAN_REGIONS regions or MTHPD_SCAN_PAGES pages, and queues the 2 MiB
 * ranges they touch with the span of pages they cover in each.  Every page
 * below pm->scanned_to that no region names was empty.  A category filter
 * is always passed: without one, 6.18 reports a wrong walk_end on large
 * VMAs (measured).  Returns 0 or -errno.
 */
static int scan_populated(struct mthpd_pagemap *pm, uint64_t start, uint64_t end)
{
	struct page_region regions[MTHPD_SCAN_REGIONS];
	struct pm_scan_arg arg = {
		.size = sizeof(arg),
		.start = start,
		.end = end,
		.vec = (uint64_t)(uintptr_t)regions,
		.vec_len = MTHPD_SCAN_REGIONS,
		.max_pages = MTHPD_SCAN_PAGES,
		.category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
		.return_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED | PAGE_IS_HUGE | PAGE_IS_PFNZERO,
	};
	struct mthpd_scan_hit *last = NULL;
	int n;

	pm->nr_scan_ioctls++;
	n = pm->kif->ops->ioctl(pm->kif, pm->fd, PAGEMAP_SCAN, &arg);
	if (n < 0)
		return n;
	pm->q_head = pm->q_len = 0;
	for (int i = 0; i < n && i < MTHPD_SCAN_REGIONS; i++) {
		uint64_t r = regions[i].start & ~(MTHPD_PMD_SIZE - 1);
		/*
		 * PAGE_IS_HUGE on present anon memory: a PMD mapping (a THP,
		 * or the huge zero page with PAGE_IS_PFNZERO).  Adjacent ones
		 * come back as one region.  PTE-mapped large folios do not
		 * have it (fs/proc/task_mmu.c: pagemap_scan_thp_entry()).
		 */
		bool huge = (regions[i].categories & (PAGE_IS_HUGE | PAGE_IS_PRESENT)) ==
			    (PAGE_IS_HUGE | PAGE_IS_PRESENT);
		uint8_t kind = !huge ? MTHPD_HUGE_NO
			       : regions[i].categories & PAGE_IS_PFNZERO ? MTHPD_HUGE_ZERO
									 : MTHPD_HUGE_PMD;

		for (; r < regions[i].end; r += MTHPD_PMD_SIZE) {
			uint64_t lo = regions[i].start > r ? regions[i].start : r;
			uint64_t hi = regions[i].end < r + MTHPD_PMD_SIZE ? regions[i].end
									   : r + MTHPD_PMD_SIZE;
			uint16_t plo = (uint16_t)((lo - r) / MTHPD_PAGE_SIZE);
			uint16_t phi = (uint16_t)((hi - r) / MTHPD_PAGE_SIZE);

			if (last && last->addr == r) {
				last->hi = phi;
				last->huge = MTHPD_HUGE_NO;
				continue;
			}
			if (pm->q_len == MTHPD_SCAN_QUEUE)
				break;
			last = &pm->queue[pm->q_len++];
			*last = (struct mthpd_scan_hit){
				.addr = r,
				.lo = plo,
				.hi = phi,
				.huge = plo == 0 && phi == MTHPD_PMD_NR ? kind : MTHPD_HUGE_NO,
			};
		}
	}
	pm->scanned_to = arg.walk_end > start ? arg.walk_end : end;
	/* A range the walk stopped inside: what lies after walk_end is unknown. */
	if (last && last->addr + MTHPD_PMD_SIZE > pm->scanned_to) {
		last->hi = MTHPD_PMD_NR;
		last->huge = MTHPD_HUGE_NO;
		pm->scanned_to = last->addr + MTHPD_PMD_SIZE;
	}
	return 0;
}

/* Reads entries [lo, hi) of the range at @addr; the others are empty. */
static int read_span(struct mthpd_pagemap *pm, uint64_t addr, unsigned int lo, unsigned int hi,
		     uint64_t e[MTHPD_PMD_NR])
{
	if (lo > 0)
		memset(e, 0, lo * sizeof(*e));
	if (hi < MTHPD_PMD_NR)
		memset(e + hi, 0, (MTHPD_PMD_NR - hi) * sizeof(*e));
	return mthpd_pagemap_read(pm, addr + lo * MTHPD_PAGE_SIZE, hi - lo, e + lo);
}

int mthpd_pagemap_next_range(struct mthpd_pagemap *pm, uint64_t *cursor, uint64_t end,
			     uint64_t *ret_addr, uint64_t ret_entries[MTHPD_PMD_NR])
{
	uint64_t addr = *cursor;
	unsigned int lo, hi;
	int r;

	pm->last_huge = MTHPD_HUGE_NO;
	while (addr < end) {
		lo = 0;
		hi = MTHPD_PMD_NR;
		if (pm->q_head < pm->q_len) {
			const struct mthpd_scan_hit *q = &pm->queue[pm->q_head++];

			if (q->addr < addr)
				continue;
			addr = q->addr;
			lo = q->lo;
			hi = q->hi;
			if (q->huge != MTHPD_HUGE_NO && addr + MTHPD_PMD_SIZE <= end) {
				memset(ret_entries, 0, MTHPD_PMD_NR * sizeof(*ret_entries));
				pm->last_huge = q->huge;
				pm->last_populated = false;
				pm->nr_huge_skipped++;
				*ret_addr = addr;
				*cursor = addr + MTHPD_PMD_SIZE;
				return 1;
			}
		} else if (pm->use_scan && pm->queue && !pm->last_populated) {
			/*
			 * Holes: let the kernel's page-table walk skip them.
			 * Dense memory never gets here: after a range that
			 * ends populated the next one is read straight away.
			 */
			uint64_t from = addr > pm->scanned_to ? addr : pm->scanned_to;

			if (from >= end)
				break;
			r = scan_populated(pm, from, end);
			if (r < 0)
				return r;
			if (pm->q_len == 0)
				addr = pm->scanned_to & ~(MTHPD_PMD_SIZE - 1);
			if (pm->q_len == 0 && addr < from)
				addr = from & ~(MTHPD_PMD_SIZE - 1);
			continue;
		}
		r = read_span(pm, addr, lo, hi, ret_entries);
		if (r < 0)
			return r;
		/* Only a range populated to its end predicts a populated next one. */
		pm->last_populated = ret_entries[MTHPD_PMD_NR - 1] & (PM_PRESENT | PM_SWAP);
		addr += MTHPD_PMD_SIZE;
		if (range_populated(ret_entries)) {
			*ret_addr = addr - MTHPD_PMD_SIZE;
			*cursor = addr;
			return 1;
		}
	}
	pm->last_populated = false;
	*cursor = end;
	return 0;
}

int mthpd_pagemap_scan_probe(const struct mthpd_kif *kif, int fd)
{
	struct page_region region;
	struct pm_scan_arg arg = {
		.size = sizeof(arg),
		.start = 0,
		.end = MTHPD_PAGE_SIZE,
		.vec = (uint64_t)(uintptr_t)&region,
		.vec_len = 1,
		.category_anyof_mask = PAGE_IS_PRESENT,
		.return_mask = PAGE_IS_PRESENT,
	};
	int r = kif->ops->ioctl(kif, fd, PAGEMAP_SCAN, &arg);

	if (r >= 0)
		return 1;
	if (r == -ENOTTY || r == -EINVAL || r == -EOPNOTSUPP)
		return 0;
	return r;
}
