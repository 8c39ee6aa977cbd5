/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "pagemap.h"
#include "uapi.h"
#include "util.h"

enum mthpd_pte_kind mthpd_pagemap_kind(uint64_t entry)
{
	if (entry & PM_PRESENT)
		return MTHPD_PTE_PRESENT;
	/* Guard markers carry bit 62 too (measured): test 58 first. */
	if (entry & PM_GUARD_REGION)
		return MTHPD_PTE_GUARD;
	if (entry & PM_SWAP)
		return MTHPD_PTE_SWAP;
	return MTHPD_PTE_NONE;
}

int mthpd_pagemap_read(struct mthpd_pagemap *pm, uint64_t addr, unsigned int nr, uint64_t *ret)
{
	size_t want = (size_t)nr * sizeof(uint64_t), got = 0;
	off_t off = (off_t)(addr / MTHPD_PAGE_SIZE * sizeof(uint64_t));

	while (got < want) {
		ssize_t r = pread(pm->fd, (char *)ret + got, want - got, off + (off_t)got);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* A pagemap fd of an exited process reads EOF, not an error. */
		if (r == 0)
			return -ESRCH;
		got += (size_t)r;
	}
	pm->nr_range_reads++;
	return 0;
}

static bool range_populated(const uint64_t e[MTHPD_PMD_NR])
{
	for (unsigned i = 0; i < MTHPD_PMD_NR; i++)
		if (e[i] & (PM_PRESENT | PM_SWAP))
			return true;
	return false;
}

/*
 * Asks the kernel for the first present or swapped page in [start, end).
 * max_pages = 1 stops the walk there, so the cost is the empty page-table
 * levels skipped plus one PTE.  A category filter is always passed: without
 * one, 6.18 reports a wrong walk_end on large VMAs (measured).
 * Returns 1 and *ret_addr, 0 when there is none, -errno.
 */
static int scan_first_populated(struct mthpd_pagemap *pm, uint64_t start, uint64_t end,
				uint64_t *ret_addr)
{
	struct page_region region;
	struct pm_scan_arg arg = {
		.size = sizeof(arg),
		.start = start,
		.end = end,
		.vec = (uint64_t)(uintptr_t)&region,
		.vec_len = 1,
		.max_pages = 1,
		.category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
		.return_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
	};
	int r;

	pm->nr_scan_ioctls++;
	r = pm->kif->ops->ioctl(pm->kif, pm->fd, PAGEMAP_SCAN, &arg);
	if (r < 0)
		return r;
	if (r == 0)
		return 0;
	*ret_addr = region.start;
	return 1;
}

int mthpd_pagemap_next_range(struct mthpd_pagemap *pm, uint64_t *cursor, uint64_t end,
			     uint64_t *ret_addr, uint64_t ret_entries[MTHPD_PMD_NR])
{
	uint64_t addr = *cursor;
	int r;

	while (addr < end) {
		/*
		 * Dense memory: after a populated range the next one is most
		 * likely populated too, so read it straight away and keep the
		 * PAGEMAP_SCAN walk for skipping holes.
		 */
		if (pm->use_scan && !pm->last_populated) {
			uint64_t first;

			r = scan_first_populated(pm, addr, end, &first);
			if (r < 0)
				return r;
			if (r == 0) {
				addr = end;
				break;
			}
			addr = first & ~(MTHPD_PMD_SIZE - 1);
		}
		r = mthpd_pagemap_read(pm, addr, MTHPD_PMD_NR, ret_entries);
		if (r < 0)
			return r;
		if (range_populated(ret_entries)) {
			pm->last_populated = true;
			*ret_addr = addr;
			*cursor = addr + MTHPD_PMD_SIZE;
			return 1;
		}
		pm->last_populated = false;
		addr += MTHPD_PMD_SIZE;
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
