/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * thp-inspect: what folios back each 2 MiB range of a process, read
 * independently of mthpd's scanner so that tests can check mthpd against it.
 * In the style of the kernel's tools/mm/page-types.c.
 *
 *   thp-inspect PID ADDR NR_RANGES
 *
 * One line per 2 MiB range from ADDR (2 MiB aligned, hex with 0x):
 *
 *   0x7f2a40000000 present=512 zero=0 swap=0 pmd=1 folios=order9x1
 *
 *   present  pagemap entries with bit 63 (zero pages included)
 *   zero     present entries mapping the 4K or the huge zero page
 *   swap     swap entries (bit 62 without the guard bit 58)
 *   pmd      1 if the range is mapped by one PMD (PAGEMAP_SCAN reports it
 *            PAGE_IS_HUGE; before 6.7, deduced from smaps: see pmd_from_smaps()),
 *            0 if not, ? if it cannot be told
 *   folios   the folios mapping the non-zero present pages, by order,
 *            largest first: "order4x16,order0x192"; "none" if there are
 *            none; "runN" for a compound run that is not a whole naturally
 *            aligned folio (partly mapped)
 *
 * Needs root: PFNs in pagemap are zero without CAP_SYS_ADMIN and
 * /proc/kpageflags is root only.  Exit status 0, or 1 with a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "uapi.h"

#define PAGE_SIZE 4096ULL
#define RANGE_PAGES 512U
#define RANGE_SIZE (PAGE_SIZE * RANGE_PAGES)
#define MAX_RANGES (1U << 20)

/* pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst) */
#define PM_PFN_MASK ((1ULL << 55) - 1)
#define PM_GUARD (1ULL << 58)
#define PM_SWAP (1ULL << 62)
#define PM_PRESENT (1ULL << 63)

/* include/uapi/linux/kernel-page-flags.h */
#define KPF_COMPOUND_HEAD 15
#define KPF_COMPOUND_TAIL 16
#define KPF_THP 22
#define KPF_ZERO_PAGE 24
#define BIT(b) (1ULL << (b))

/* page-types.c: do_u64_read() -- full 8-byte entries or an error. */
static int read_u64s(int fd, uint64_t *buf, size_t nr, uint64_t index)
{
	size_t want = nr * sizeof(uint64_t), got = 0;

	while (got < want) {
		ssize_t r = pread(fd, (char *)buf + got, want - got,
				  (off_t)(index * sizeof(uint64_t) + got));

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -ENODATA; /* process gone, or PFN past the end */
		got += (size_t)r;
	}
	return 0;
}

static int parse_u64(const char *s, int base, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || end == s || *end != '\0' || s[0] == '-')
		return -EINVAL;
	*ret = v;
	return 0;
}

/* 1, 0, or -1 (unknown) for "the range is one PMD mapping". */
static int pmd_mapped(int pagemap_fd, uint64_t addr)
{
	struct page_region regions[4];
	struct pm_scan_arg arg = {
		.size = sizeof(arg),
		.start = addr,
		.end = addr + RANGE_SIZE,
		.vec = (uint64_t)(uintptr_t)regions,
		.vec_len = sizeof(regions) / sizeof(regions[0]),
		.category_mask = PAGE_IS_HUGE,
		.return_mask = PAGE_IS_HUGE | PAGE_IS_PFNZERO,
	};
	int n = ioctl(pagemap_fd, PAGEMAP_SCAN, &arg);

	if (n < 0)
		return -1;
	return n == 1 && regions[0].start == addr && regions[0].end == addr + RANGE_SIZE &&
	       !(regions[0].categories & PAGE_IS_PFNZERO);
}

/*
 * Returns 1 if the 2 MiB range at @addr is one order-9 THP: 512 present
 * pages with consecutive PFNs from a 512-aligned compound head, the others
 * its tails.  0 if not, -errno if reading failed.
 */
static int range_is_thp(int pagemap_fd, int kpf_fd, uint64_t addr)
{
	uint64_t pm[RANGE_PAGES], kpf[RANGE_PAGES], pfn0;
	int r = read_u64s(pagemap_fd, pm, RANGE_PAGES, addr / PAGE_SIZE);

	if (r < 0)
		return r;
	pfn0 = pm[0] & PM_PFN_MASK;
	if (!(pm[0] & PM_PRESENT) || pfn0 == 0 || (pfn0 & (RANGE_PAGES - 1)))
		return 0;
	for (unsigned int i = 1; i < RANGE_PAGES; i++)
		if (!(pm[i] & PM_PRESENT) || (pm[i] & PM_PFN_MASK) != pfn0 + i)
			return 0;
	r = read_u64s(kpf_fd, kpf, RANGE_PAGES, pfn0);
	if (r < 0)
		return r;
	if ((kpf[0] & (BIT(KPF_COMPOUND_HEAD) | BIT(KPF_THP) | BIT(KPF_ZERO_PAGE))) !=
	    (BIT(KPF_COMPOUND_HEAD) | BIT(KPF_THP)))
		return 0;
	for (unsigned int i = 1; i < RANGE_PAGES; i++)
		if (!(kpf[i] & BIT(KPF_COMPOUND_TAIL)))
			return 0;
	return 1;
}

/*
 * Without PAGEMAP_SCAN (before 6.7) nothing says per range whether a PMD
 * maps it, but smaps says per VMA how much: AnonHugePages counts exactly
 * the VMA's PMD-mapped anon THPs, and each of them is a 2 MiB range that
 * range_is_thp().  So if AnonHugePages is 2048 kB times the number of such
 * ranges in the VMA, every one of them is PMD-mapped; if it is 0, none is;
 * otherwise which ones cannot be told.  A range that is no THP is not
 * PMD-mapped (as with PAGEMAP_SCAN, a huge zero page counts as not).
 *
 * Returns 1, 0 or -1 (unknown) for the range at @addr.  The VMA's verdict is
 * kept for the next range in the same VMA: one smaps read and one walk per
 * VMA, not per range.
 */
static int pmd_from_smaps(uint64_t pid, int pagemap_fd, int kpf_fd, uint64_t addr)
{
	static uint64_t vma_start, vma_end;
	static int vma_verdict;
	char path[64], line[512];
	uint64_t start = 0, end = 0, a, lo, hi;
	unsigned long long s, e, kb = ~0ULL;
	unsigned int thps = 0;
	int found = 0, r;
	FILE *f;

	r = range_is_thp(pagemap_fd, kpf_fd, addr);
	if (r <= 0)
		return r < 0 ? -1 : 0;
	if (vma_start <= addr && addr + RANGE_SIZE <= vma_end)
		return vma_verdict;
	if ((size_t)snprintf(path, sizeof(path), "/proc/%" PRIu64 "/smaps", pid) >= sizeof(path))
		return -1;
	f = fopen(path, "re");
	if (!f)
		return -1;
	/* 7f2a40000000-7f2a41400000 rw-p 00000000 00:00 0 ... then "AnonHugePages:  6144 kB" */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx ", &s, &e) == 2) {
			found = s <= addr && addr + RANGE_SIZE <= e;
			if (found) {
				start = s;
				end = e;
			}
		} else if (found && sscanf(line, "AnonHugePages: %llu kB", &kb) == 1) {
			break;
		}
	}
	fclose(f);
	/* no VMA, no AnonHugePages line, or too large to walk (64 GiB) */
	if (!found || kb == ~0ULL || end - start > (1ULL << 36))
		return -1;
	lo = (start + RANGE_SIZE - 1) & ~(RANGE_SIZE - 1);
	hi = end & ~(RANGE_SIZE - 1);
	for (a = lo; a < hi; a += RANGE_SIZE) {
		r = range_is_thp(pagemap_fd, kpf_fd, a);
		if (r < 0)
			return -1;
		thps += (unsigned int)r;
	}
	vma_start = start;
	vma_end = end;
	vma_verdict = kb == (unsigned long long)thps * 2048 ? 1 : kb == 0 ? 0 : -1;
	return vma_verdict;
}

static unsigned int log2_exact(unsigned int n)
{
	unsigned int o = 0;

	while ((1U << o) < n)
		o++;
	return (1U << o) == n ? o : UINT32_MAX;
}

static int inspect_range(uint64_t pid, int pagemap_fd, int kpf_fd, uint64_t addr)
{
	uint64_t pm[RANGE_PAGES], kpf[RANGE_PAGES];
	unsigned int present = 0, zero = 0, swap = 0, i;
	/* folios by order 0..9, and runs that are not whole folios by length */
	unsigned int by_order[10] = { 0 }, odd_runs[RANGE_PAGES + 1] = { 0 };
	bool any = false, odd = false;
	int r, pmd;

	r = read_u64s(pagemap_fd, pm, RANGE_PAGES, addr / PAGE_SIZE);
	if (r < 0)
		return r;
	for (i = 0; i < RANGE_PAGES; i++) {
		kpf[i] = 0;
		if (pm[i] & PM_PRESENT) {
			uint64_t pfn = pm[i] & PM_PFN_MASK;

			present++;
			if (pfn == 0)
				return -EPERM; /* PFNs hidden: not CAP_SYS_ADMIN */
			r = read_u64s(kpf_fd, &kpf[i], 1, pfn);
			if (r < 0)
				return r;
			if (kpf[i] & BIT(KPF_ZERO_PAGE))
				zero++;
		} else if ((pm[i] & PM_SWAP) && !(pm[i] & PM_GUARD)) {
			swap++;
		}
	}

	/* Walk the non-zero present pages: a head and its tails make one folio. */
	i = 0;
	while (i < RANGE_PAGES) {
		uint64_t head_pfn = pm[i] & PM_PFN_MASK;
		unsigned int j, order;

		if (!(pm[i] & PM_PRESENT) || (kpf[i] & BIT(KPF_ZERO_PAGE))) {
			i++;
			continue;
		}
		if (!(kpf[i] & BIT(KPF_COMPOUND_HEAD))) {
			/* a small page, or a tail whose head lies outside the range */
			by_order[0]++;
			i++;
			continue;
		}
		for (j = i + 1; j < RANGE_PAGES && (pm[j] & PM_PRESENT) &&
				(pm[j] & PM_PFN_MASK) == head_pfn + (j - i) &&
				(kpf[j] & BIT(KPF_COMPOUND_TAIL));
		     j++)
			;
		order = log2_exact(j - i);
		if (order <= 9 && !(head_pfn & ((1ULL << order) - 1)) && (kpf[i] & BIT(KPF_THP))) {
			by_order[order]++;
		} else {
			odd_runs[j - i]++;
			odd = true;
		}
		i = j;
	}

	pmd = pmd_mapped(pagemap_fd, addr);
	if (pmd < 0)
		pmd = pmd_from_smaps(pid, pagemap_fd, kpf_fd, addr);
	printf("0x%" PRIx64 " present=%u zero=%u swap=%u pmd=%s folios=", addr, present, zero,
	       swap, pmd < 0 ? "?" : pmd ? "1" : "0");
	for (int o = 9; o >= 0; o--) {
		if (!by_order[o])
			continue;
		printf("%sorder%dx%u", any ? "," : "", o, by_order[o]);
		any = true;
	}
	for (unsigned int n = 0; odd && n <= RANGE_PAGES; n++) {
		if (!odd_runs[n])
			continue;
		printf("%srun%ux%u", any ? "," : "", n, odd_runs[n]);
		any = true;
	}
	printf("%s\n", any ? "" : "none");
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t pid, addr, nr;
	char path[64];
	int pagemap_fd, kpf_fd;

	if (argc != 4 || parse_u64(argv[1], 10, &pid) < 0 || parse_u64(argv[2], 16, &addr) < 0 ||
	    parse_u64(argv[3], 10, &nr) < 0 || nr == 0 || nr > MAX_RANGES ||
	    (addr & (RANGE_SIZE - 1))) {
		fprintf(stderr, "usage: thp-inspect PID ADDR NR_RANGES "
				"(ADDR 2 MiB aligned, hex; 1..%u ranges)\n", MAX_RANGES);
		return 1;
	}
	if ((size_t)snprintf(path, sizeof(path), "/proc/%" PRIu64 "/pagemap", pid) >= sizeof(path))
		return 1;
	pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (pagemap_fd < 0) {
		fprintf(stderr, "thp-inspect: cannot open '%s': %s\n", path, strerror(errno));
		return 1;
	}
	kpf_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (kpf_fd < 0) {
		fprintf(stderr, "thp-inspect: cannot open '/proc/kpageflags': %s\n",
			strerror(errno));
		return 1;
	}
	for (uint64_t k = 0; k < nr; k++) {
		int r = inspect_range(pid, pagemap_fd, kpf_fd, addr + k * RANGE_SIZE);

		if (r < 0) {
			fprintf(stderr, "thp-inspect: pid %" PRIu64 " range 0x%" PRIx64 ": %s\n",
				pid, (uint64_t)(addr + k * RANGE_SIZE),
				r == -EPERM ? "pagemap shows no PFNs (needs CAP_SYS_ADMIN)"
					    : strerror(-r));
			return 1;
		}
	}
	(void)close(kpf_fd);
	(void)close(pagemap_fd);
	return 0;
}
