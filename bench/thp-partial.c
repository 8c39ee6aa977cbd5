/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * thp-partial PID: the memory a process holds in 2 MiB THPs that it maps
 * only in part, which RssAnon does not count.
 *
 * An allocator that gives back 4K pages of a PMD-mapped THP (jemalloc's
 * purge: MADV_DONTNEED) makes the kernel split the PMD and unmap those
 * pages; the folio itself stays whole, queued for the deferred split, which
 * runs under memory pressure.  Until then its unmapped pages are allocated
 * memory that /proc/PID/status no longer shows.  bench/redis --refill adds
 * them to RssAnon to compare the daemon's arms honestly.
 *
 * Reads /proc/PID/pagemap over the writable private mappings and
 * /proc/kpageflags for each present page; pages with KPF_THP are grouped by
 * their 2 MiB-aligned PFN block (only 2M THPs are enabled where this runs:
 * the order is not in kpageflags).  Prints one line:
 *
 *   thp_folios=N partial=P mapped_kb=M hidden_kb=H
 *
 * N folios with a mapped page, P of them mapped in part, M kB of their
 * pages mapped, H kB of them not mapped.  Needs root.  Exit 0, or 1 with a
 * message.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE_SIZE 4096ULL
#define PMD_PAGES 512ULL
#define PM_PFN_MASK ((1ULL << 55) - 1)
#define PM_PRESENT (1ULL << 63)
#define KPF_THP 22
#define KPF_ZERO_PAGE 24
#define CHUNK 4096
/* 64 GiB of mapped THP pages at most: the array is sized by the target */
#define MAX_PAGES (16ULL << 20)

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	char path[64], line[512];
	uint64_t *blocks = NULL, nr = 0, size = 0, folios = 0, partial = 0, hidden = 0;
	static uint64_t pm[CHUNK];
	FILE *maps;
	int pm_fd, kpf_fd, n;

	if (argc != 2) {
		fprintf(stderr, "usage: thp-partial PID\n");
		return 1;
	}
	n = snprintf(path, sizeof(path), "/proc/%s/maps", argv[1]);
	if (n < 0 || (size_t)n >= sizeof(path))
		return 1;
	maps = fopen(path, "re");
	(void)snprintf(path, sizeof(path), "/proc/%s/pagemap", argv[1]);
	pm_fd = open(path, O_RDONLY | O_CLOEXEC);
	kpf_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (!maps || pm_fd < 0 || kpf_fd < 0) {
		fprintf(stderr, "thp-partial: cannot open /proc/%s or kpageflags: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	/* 7f2a40000000-7f2a80000000 rw-p 00000000 00:00 0          [heap] */
	while (fgets(line, sizeof(line), maps)) {
		uint64_t start, end;
		char perms[8];
		int name = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %*s %n", &start, &end, perms,
			   &name) < 3 ||
		    strcmp(perms, "rw-p") != 0)
			continue;
		if (name > 0 && line[name] != '\n' && line[name] != '\0' &&
		    strncmp(line + name, "[heap]", 6) != 0 && strncmp(line + name, "[anon", 5) != 0)
			continue;
		for (uint64_t a = start; a < end;) {
			uint64_t cnt = (end - a) / PAGE_SIZE;
			ssize_t got;

			if (cnt > CHUNK)
				cnt = CHUNK;
			got = pread(pm_fd, pm, cnt * 8, (off_t)(a / PAGE_SIZE * 8));
			if (got <= 0)
				break; /* the mapping went away */
			cnt = (uint64_t)got / 8;
			for (uint64_t i = 0; i < cnt; i++) {
				uint64_t pfn = pm[i] & PM_PFN_MASK, kpf;

				if (!(pm[i] & PM_PRESENT) || pfn == 0)
					continue;
				if (pread(kpf_fd, &kpf, 8, (off_t)(pfn * 8)) != 8)
					continue;
				if (!(kpf & (1ULL << KPF_THP)) || (kpf & (1ULL << KPF_ZERO_PAGE)))
					continue;
				if (nr == size) {
					uint64_t *b;

					size = size ? 2 * size : 65536;
					if (size > MAX_PAGES) {
						fprintf(stderr, "thp-partial: more than %llu THP pages\n",
							MAX_PAGES);
						return 1;
					}
					b = realloc(blocks, size * sizeof(*b));
					if (!b)
						return 1;
					blocks = b;
				}
				blocks[nr++] = pfn / PMD_PAGES;
			}
			a += cnt * PAGE_SIZE;
		}
	}
	qsort(blocks, nr, sizeof(*blocks), cmp_u64);
	for (uint64_t i = 0; i < nr;) {
		uint64_t j = i;

		while (j < nr && blocks[j] == blocks[i])
			j++;
		folios++;
		if (j - i < PMD_PAGES) {
			partial++;
			hidden += PMD_PAGES - (j - i);
		}
		i = j;
	}
	printf("thp_folios=%" PRIu64 " partial=%" PRIu64 " mapped_kb=%" PRIu64 " hidden_kb=%" PRIu64
	       "\n",
	       folios, partial, nr * 4, hidden * 4);
	free(blocks);
	(void)fclose(maps);
	(void)close(pm_fd);
	(void)close(kpf_fd);
	return 0;
}
