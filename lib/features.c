/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "act.h"
#include "features.h"
#include "pagemap.h"
#include "util.h"
#include "vmas.h"

int mthpd_features_probe(struct mthpd_kif *kif, struct mthpd_features *ret)
{
	struct mthpd_features f = {0};
	_cleanup_close_ int pm_fd = -1, pidfd = -1;
	uint64_t entry = 0;
	char *map, *p;
	int r;

	/* 4 MiB so a 2 MiB-aligned block fits whatever mmap returns. */
	map = mmap(NULL, 2 * MTHPD_PMD_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (map == MAP_FAILED)
		return -errno;
	p = (char *)(((uintptr_t)map + MTHPD_PMD_SIZE - 1) & ~(uintptr_t)(MTHPD_PMD_SIZE - 1));
	memset(p, 0x5a, MTHPD_PAGE_SIZE);

	pm_fd = kif->ops->open_proc(kif, "self/pagemap", O_RDONLY);
	if (pm_fd >= 0) {
		struct mthpd_pagemap pm = {.kif = kif, .fd = pm_fd};

		r = mthpd_pagemap_scan_probe(kif, pm_fd);
		f.pagemap_scan = r > 0;
		if (mthpd_pagemap_read(&pm, (uint64_t)(uintptr_t)p, 1, &entry) == 0)
			f.pfns_visible = (entry & PM_PRESENT) && mthpd_pagemap_pfn(entry) != 0;
	}
	f.procmap_query = mthpd_vmas_query_probe(kif, getpid()) > 0;

	/*
	 * The sub-PMD probe needs a range the kernel would accept, so that
	 * EINVAL can only mean "flag unknown": a 64 KiB block whose first
	 * page is written, inside a VMA holding a whole PMD.
	 */
	pidfd = kif->ops->pidfd_open(kif, getpid());
	if (pidfd >= 0) {
		int64_t n = kif->ops->collapse(kif, pidfd, (uint64_t)(uintptr_t)p, 16 * MTHPD_PAGE_SIZE,
					       MTHPD_MADV_COLLAPSE_ORDER);

		f.subpmd_errno = n < 0 ? (int)-n : 0;
		f.subpmd_collapse = n >= 0 || (n != -EINVAL && n != -ENOSYS && n != -EPERM);
	} else {
		f.subpmd_errno = -pidfd;
	}

	(void)munmap(map, 2 * MTHPD_PMD_SIZE);
	*ret = f;
	return 0;
}

const char *mthpd_features_describe(const struct mthpd_features *f, char *buf, size_t size)
{
	int n = snprintf(buf, size, "pagemap_scan=%s procmap_query=%s pfns=%s subpmd_collapse=%s",
			 f->pagemap_scan ? "yes" : "no", f->procmap_query ? "yes" : "no",
			 f->pfns_visible ? "yes" : "no", f->subpmd_collapse ? "yes" : "no");

	if (n < 0 || (size_t)n >= size)
		return "?";
	return buf;
}
