/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "act.h"
#include "knobs.h"
#include "features.h"
#include "kpageflags.h"
#include "pagemap.h"
#include "util.h"
#include "vmas.h"

/*
 * One block per order below PMD, order n at [4K << n, 8K << n) of the 2 MiB-
 * aligned @p so the blocks never overlap, with only its first page written,
 * asked with ORDER | STRICT.  The patch checks the arguments (EINVAL), then
 * whether the size is enabled (EOPNOTSUPP), then the block's pages: an
 * empty page under STRICT is ENODATA, so a patched kernel answers without
 * allocating or copying anything, and the per-size collapse statistics the
 * admin reads stay as they were.  An unpatched kernel rejects any
 * process_madvise() flag with EINVAL.  EINVAL can also mean that THP is off
 * for mthpd itself (PR_SET_THP_DISABLE inherited from a parent), which
 * PR_GET_THP_DISABLE tells.  (Asking a plain MADV_COLLAPSE instead costs an
 * lru_add_drain_all(), 80 to 220 us per start on 6.18: measured.)
 */
static void probe_subpmd(struct mthpd_kif *kif, int pidfd, char *p, struct mthpd_features *f)
{
	for (unsigned int order = MTHPD_MIN_ORDER; order < MTHPD_PMD_ORDER; order++) {
		const uint64_t len = MTHPD_PAGE_SIZE << order;
		char *block = p + len;
		int64_t n;

		block[0] = 0x5a;
		n = kif->ops->collapse(kif, pidfd, (uint64_t)(uintptr_t)block, len,
				       MTHPD_MADV_COLLAPSE_ORDER | MTHPD_MADV_COLLAPSE_STRICT);
		if (n == -EINVAL) {
			if (f->subpmd == MTHPD_SUBPMD_PATCHED)
				continue; /* a patched kernel refusing this block: not usable */
			if (prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1) {
				f->subpmd = MTHPD_SUBPMD_UNKNOWN;
				f->subpmd_errno = EINVAL;
			} else {
				f->subpmd = MTHPD_SUBPMD_UNPATCHED;
			}
			return;
		}
		if (n == -EOPNOTSUPP) {
			f->subpmd = MTHPD_SUBPMD_PATCHED;
			continue;
		}
		/*
		 * The strict refusal (ENODATA) expected of an enabled size; a
		 * success, or a failure of this attempt (ENOMEM, EBUSY, EAGAIN),
		 * also shows the flag known and the size enabled.  Anything
		 * else (EPERM, ENOSYS under a seccomp filter) says nothing.
		 */
		if (n >= 0 || n == -ENODATA || n == -ENOMEM || n == -EBUSY || n == -EAGAIN) {
			f->subpmd = MTHPD_SUBPMD_PATCHED;
			f->subpmd_orders |= 1U << order;
			continue;
		}
		f->subpmd = MTHPD_SUBPMD_UNKNOWN;
		f->subpmd_orders = 0;
		f->subpmd_errno = (int)-n;
		return;
	}
}

/* The sub-PMD probe on the 2 MiB-aligned @p of a scratch mapping. */
static void probe_subpmd_at(struct mthpd_kif *kif, char *p, struct mthpd_features *f)
{
	_cleanup_close_ int pidfd = -1;

	f->subpmd = MTHPD_SUBPMD_UNKNOWN;
	f->subpmd_orders = 0;
	f->subpmd_errno = 0;
	pidfd = kif->ops->pidfd_open(kif, getpid());
	if (pidfd >= 0)
		probe_subpmd(kif, pidfd, p, f);
	else
		f->subpmd_errno = -pidfd;
}

/* 4 MiB, so that a 2 MiB-aligned block fits wherever mmap puts it. */
static char *map_scratch(char **aligned)
{
	char *map = mmap(NULL, 2 * MTHPD_PMD_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (map == MAP_FAILED)
		return NULL;
	*aligned = (char *)(((uintptr_t)map + MTHPD_PMD_SIZE - 1) &
			    ~(uintptr_t)(MTHPD_PMD_SIZE - 1));
	return map;
}

int mthpd_features_probe_subpmd(struct mthpd_kif *kif, struct mthpd_features *f)
{
	char *p, *map = map_scratch(&p);

	if (!map)
		return -errno;
	probe_subpmd_at(kif, p, f);
	(void)munmap(map, 2 * MTHPD_PMD_SIZE);
	return 0;
}

/* Is the page at @p of mthpd's own memory part of a THP?  1, 0, -errno. */
static int own_thp(struct mthpd_pagemap *pm, int kpageflags_fd, const char *p)
{
	uint64_t e, flags;
	int r = mthpd_pagemap_read(pm, (uint64_t)(uintptr_t)p, 1, &e);

	if (r < 0)
		return r;
	if (!(e & PM_PRESENT) || mthpd_pagemap_pfn(e) == 0)
		return -ENODATA;
	r = mthpd_kpageflags_read(kpageflags_fd, mthpd_pagemap_pfn(e), 1, &flags);
	if (r < 0)
		return r;
	return !!(flags & KPF_BIT(KPF_THP));
}

/*
 * Linux 6.18 and Debian's 6.1.0-57 split a large folio that a MADV_COLD
 * range does not cover whole (madvise_cold_or_pageout_pte_range(): both
 * measured, tests/integration/test-split.sh), but when that function
 * splits has changed over the kernel's versions (never a folio it takes
 * for shared), and a kernel that leaves the folio whole would be asked
 * for nothing each minute.  So it is tried: a THP of mthpd's own
 * (the fault under MADV_HUGEPAGE; MADV_COLLAPSE where THP is "never"),
 * its first 256 pages given back (the head among them, as a purge may
 * do), MADV_COLD on page 300 through process_madvise() as the daemon
 * calls it, and kpageflags of that page.
 */
int mthpd_features_probe_split(struct mthpd_kif *kif, int kpageflags_fd, struct mthpd_features *f)
{
	_cleanup_close_ int pm_fd = -1, pidfd = -1;
	char *p, *map = map_scratch(&p);
	struct mthpd_pagemap pm;
	int r;

	f->split = MTHPD_SPLIT_UNKNOWN;
	if (!map)
		return -errno;
	pm_fd = kif->ops->open_proc(kif, "self/pagemap", O_RDONLY);
	pidfd = kif->ops->pidfd_open(kif, getpid());
	if (pm_fd < 0 || pidfd < 0 || !kif->ops->cold)
		goto out;
	pm = (struct mthpd_pagemap){.kif = kif, .fd = pm_fd};
	(void)madvise(p, MTHPD_PMD_SIZE, MADV_HUGEPAGE);
	memset(p, 0x5a, MTHPD_PMD_SIZE);
	r = own_thp(&pm, kpageflags_fd, p + 300 * MTHPD_PAGE_SIZE);
	if (r == 0) {
		(void)kif->ops->collapse(kif, pidfd, (uint64_t)(uintptr_t)p, MTHPD_PMD_SIZE, 0);
		r = own_thp(&pm, kpageflags_fd, p + 300 * MTHPD_PAGE_SIZE);
	}
	if (r <= 0)
		goto out;
	if (madvise(p, 256 * MTHPD_PAGE_SIZE, MADV_DONTNEED) < 0)
		goto out;
	/*
	 * The kernel splits only a folio it can lock and whose references it
	 * knows: one still in a CPU's LRU batch holds one more, and one being
	 * migrated or scanned is locked, and MADV_COLD then leaves it whole
	 * (seen once: "split_partial=no" at a start during a CI run, on a
	 * kernel that splits; 80 starts here, idle and loaded, never did).  A
	 * 4 KiB MADV_COLLAPSE drains those batches on every CPU
	 * (lru_add_drain_all) and collapses nothing; up to three tries.
	 */
	for (int tries = 0; tries < 3; tries++) {
		(void)kif->ops->collapse(kif, pidfd, (uint64_t)(uintptr_t)(p + 256 * MTHPD_PAGE_SIZE),
					 MTHPD_PAGE_SIZE, 0);
		if (kif->ops->cold(kif, pidfd, (uint64_t)(uintptr_t)(p + 300 * MTHPD_PAGE_SIZE),
				   MTHPD_PAGE_SIZE) < 0)
			goto out;
		r = own_thp(&pm, kpageflags_fd, p + 300 * MTHPD_PAGE_SIZE);
		if (r <= 0)
			break;
	}
	if (r >= 0)
		f->split = r ? MTHPD_SPLIT_NO : MTHPD_SPLIT_YES;
out:
	(void)munmap(map, 2 * MTHPD_PMD_SIZE);
	return 0;
}

bool mthpd_features_can_collapse(const struct mthpd_features *f, unsigned int order)
{
	return order == MTHPD_PMD_ORDER ||
	       (f->subpmd == MTHPD_SUBPMD_PATCHED && (f->subpmd_orders & (1U << order)));
}

int mthpd_features_probe(struct mthpd_kif *kif, struct mthpd_features *ret)
{
	struct mthpd_features f = {0};
	_cleanup_close_ int pm_fd = -1;
	uint64_t entry = 0;
	char *p, *map = map_scratch(&p);
	int r;

	if (!map)
		return -errno;
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
	/* Its blocks start at p + 16K: the page written above is not among them. */
	probe_subpmd_at(kif, p, &f);

	(void)munmap(map, 2 * MTHPD_PMD_SIZE);
	*ret = f;
	return 0;
}

const char *mthpd_features_describe(const struct mthpd_features *f, char *buf, size_t size)
{
	char sub[96], sizes[64];
	int n;

	switch (f->subpmd) {
	case MTHPD_SUBPMD_UNPATCHED:
		snprintf(sub, sizeof(sub), "unpatched");
		break;
	case MTHPD_SUBPMD_PATCHED:
		snprintf(sub, sizeof(sub), "patched:%s",
			 f->subpmd_orders ? mthpd_orders_name(f->subpmd_orders, sizes, sizeof(sizes))
					  : "none");
		break;
	default:
		/*
		 * No spaces: the line is key=value pairs.  EINVAL only where
		 * PR_GET_THP_DISABLE said so (probe_subpmd()).
		 */
		if (f->subpmd_errno == EINVAL)
			snprintf(sub, sizeof(sub), "unknown(PR_SET_THP_DISABLE)");
		else if (f->subpmd_errno && strerrorname_np(f->subpmd_errno))
			snprintf(sub, sizeof(sub), "unknown(%s)", strerrorname_np(f->subpmd_errno));
		else
			snprintf(sub, sizeof(sub), "unknown");
		break;
	}
	n = snprintf(buf, size, "pagemap_scan=%s procmap_query=%s pfns=%s subpmd_collapse=%s",
		     f->pagemap_scan ? "yes" : "no", f->procmap_query ? "yes" : "no",
		     f->pfns_visible ? "yes" : "no", sub);
	if (n < 0 || (size_t)n >= size)
		return "?";
	if (f->split != MTHPD_SPLIT_UNPROBED)
		n += snprintf(buf + n, size - (size_t)n, " split_partial=%s",
			      f->split == MTHPD_SPLIT_YES  ? "yes"
			      : f->split == MTHPD_SPLIT_NO ? "no"
							   : "unknown");
	if (n < 0 || (size_t)n >= size)
		return "?";
	return buf;
}
