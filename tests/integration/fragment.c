/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fragmented physical memory, as a long-running host ends up with it, made
 * on purpose (issue 31): every free 2 MiB physical block keeps one page
 * that compaction cannot move, and the rest of the block is free again in
 * 4 KiB holes.  The host then has gigabytes free and no 2 MiB block, so a
 * huge page allocation fails after compaction has tried, and tries again.
 *
 *   1. take the free memory in 4 KiB pages (MADV_NOHUGEPAGE, populated by
 *      the kernel) until /proc/buddyinfo shows no free 2 MiB block, or
 *      free memory comes down to a floor above the watermarks;
 *   2. read the physical frame of each page (pagemap, as root) and keep
 *      one page per 2 MiB physical block;
 *   3. pin the kept pages as io_uring fixed buffers (FOLL_LONGTERM: the
 *      page's extra reference makes compaction leave its block alone), a
 *      pin any user may take within RLIMIT_MEMLOCK, unlike mlock, which
 *      compaction migrates;
 *   4. unmap everything: the pinned pages stay, the rest is free again;
 *   5. the free 2 MiB blocks that remain (taken by others' huge pages and
 *      freed meanwhile, or kept at the watermark) are taken as huge pages
 *      of a mapping that is kept, so that none is left.
 *
 *   fragment [--max-mib N]     take at most N MiB in step 1 (default: all
 *                              but the floor)
 *
 * It prints one line of JSON, {"pid":..., "pinned":..., "taken_mib":...,
 * "held_huge":..., "free_mib":..., "free_pmd_blocks":..., "seconds":...},
 * and holds the pins until SIGTERM or SIGINT, then gives everything back.  Exit 77 with a reason on standard error where it
 * cannot fragment (not root: no physical frames in pagemap; no io_uring).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "buddyinfo.h"

#define PAGE 4096UL
#define PMD_ORDER 9
#define CHUNK (256UL << 20)
#define MAX_CHUNKS 1024
/* io_uring takes at most this many fixed buffers per ring */
#define BUFS_PER_RING 16384U
#define MAX_RINGS 64

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A /proc/meminfo field in KiB, or -1. */
static long meminfo_kib(const char *field)
{
	char line[256];
	size_t n = strlen(field);
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, n) == 0 && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* Free 2 MiB blocks now (lib/buddyinfo.h), UINT64_MAX when unknown. */
static uint64_t free_pmd_blocks(void)
{
	char buf[4096];
	uint64_t n;
	ssize_t len;
	int fd = open("/proc/buddyinfo", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return UINT64_MAX;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return UINT64_MAX;
	buf[len] = '\0';
	return mthpd_buddyinfo_parse(buf, PMD_ORDER, &n) < 0 ? UINT64_MAX : n;
}

static long read_long(const char *path)
{
	char buf[64];
	long v = -1;
	FILE *f = fopen(path, "re");

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			v = strtol(buf, NULL, 10);
		fclose(f);
	}
	return v;
}

int main(int argc, char **argv)
{
	static char *chunk[MAX_CHUNKS];
	static struct io_uring ring[MAX_RINGS];
	long max_mib = -1, floor_kib, min_free;
	size_t nchunks = 0, nkeep = 0, i, r, nrings = 0;
	uint64_t *seen = NULL, max_pfn, nwords;
	struct iovec *keep = NULL;
	size_t huge_len = 0, held_huge = 0;
	double t0 = now_sec();
	struct sigaction sa;
	int pagemap, ret;

	if (argc == 3 && strcmp(argv[1], "--max-mib") == 0)
		max_mib = strtol(argv[2], NULL, 10);
	else if (argc != 1) {
		fprintf(stderr, "usage: fragment [--max-mib N]\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGINT, &sa, NULL);

	pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (pagemap < 0) {
		fprintf(stderr, "fragment: /proc/self/pagemap: %s\n", strerror(errno));
		return 77;
	}
	/* the floor: four times min_free_kbytes, well above the high watermarks */
	min_free = read_long("/proc/sys/vm/min_free_kbytes");
	floor_kib = 4 * (min_free > 0 ? min_free : 65536) + 128 * 1024;

	/* 1. the free memory, in 4 KiB pages */
	while (!stop && nchunks < MAX_CHUNKS && free_pmd_blocks() > 0) {
		long free_kib = meminfo_kib("MemFree");
		char *p;

		if (free_kib < 0 || free_kib - (long)(CHUNK >> 10) < floor_kib)
			break;
		if (max_mib >= 0 && (long)((nchunks + 1) * (CHUNK >> 20)) > max_mib)
			break;
		p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			 -1, 0);
		if (p == MAP_FAILED)
			break;
		if (madvise(p, CHUNK, MADV_NOHUGEPAGE) < 0 || madvise(p, CHUNK, MADV_POPULATE_WRITE) < 0) {
			fprintf(stderr, "fragment: populating %lu MiB: %s\n", CHUNK >> 20, strerror(errno));
			munmap(p, CHUNK);
			break;
		}
		chunk[nchunks++] = p;
	}

	/* 2. one page per 2 MiB physical block */
	max_pfn = (uint64_t)sysconf(_SC_PHYS_PAGES) * 2 + (1ULL << 20);
	nwords = (max_pfn >> PMD_ORDER) / 64 + 1;
	seen = calloc(nwords, sizeof(*seen));
	keep = calloc(nchunks * (CHUNK / PAGE) / 512 + (max_pfn >> PMD_ORDER) + 1, sizeof(*keep));
	if (!seen || !keep) {
		fprintf(stderr, "fragment: out of memory\n");
		return 1;
	}
	for (i = 0; i < nchunks; i++) {
		static uint64_t pm[CHUNK / PAGE];
		size_t j;

		if (pread(pagemap, pm, sizeof(pm), (off_t)((uintptr_t)chunk[i] / PAGE * 8)) !=
		    (ssize_t)sizeof(pm)) {
			fprintf(stderr, "fragment: pagemap: %s\n", strerror(errno));
			return 1;
		}
		for (j = 0; j < CHUNK / PAGE; j++) {
			uint64_t pfn = pm[j] & ((1ULL << 55) - 1), blk = pfn >> PMD_ORDER;

			if (!(pm[j] >> 63))
				continue;
			if (pfn == 0) {
				fprintf(stderr, "fragment: pagemap shows no physical frames (not root?)\n");
				return 77;
			}
			if (blk / 64 >= nwords || seen[blk / 64] & (1ULL << (blk % 64)))
				continue;
			seen[blk / 64] |= 1ULL << (blk % 64);
			keep[nkeep].iov_base = chunk[i] + j * PAGE;
			keep[nkeep].iov_len = PAGE;
			nkeep++;
		}
	}

	/* 3. pin them */
	for (i = 0; i < nkeep; i += BUFS_PER_RING) {
		unsigned int n = (unsigned int)(nkeep - i < BUFS_PER_RING ? nkeep - i : BUFS_PER_RING);

		if (nrings == MAX_RINGS) {
			fprintf(stderr, "fragment: more than %u pages to pin\n", MAX_RINGS * BUFS_PER_RING);
			return 1;
		}
		ret = io_uring_queue_init(1, &ring[nrings], 0);
		if (ret < 0) {
			fprintf(stderr, "fragment: io_uring_queue_init: %s\n", strerror(-ret));
			return 77;
		}
		ret = io_uring_register_buffers(&ring[nrings], keep + i, n);
		if (ret < 0) {
			fprintf(stderr, "fragment: io_uring_register_buffers (%u pages): %s\n", n,
				strerror(-ret));
			return ret == -ENOMEM || ret == -EPERM ? 77 : 1;
		}
		nrings++;
	}

	/* 4. give the rest back */
	for (i = 0; i < nchunks; i++)
		munmap(chunk[i], CHUNK);

	/*
	 * 5. what is still free in 2 MiB blocks, as huge pages that are kept
	 * (not under THP "never"; MADV_HUGEPAGE makes the faults take them)
	 */
	for (r = 0; r < 3 && !stop; r++) {
		uint64_t left = free_pmd_blocks();
		size_t len;
		char *p;

		if (left == 0 || left == UINT64_MAX)
			break;
		len = (size_t)left << 21;
		p = mmap(NULL, len + (2UL << 20), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			break;
		p = (char *)(((uintptr_t)p + (2UL << 20) - 1) & ~((2UL << 20) - 1));
		if (madvise(p, len, MADV_HUGEPAGE) < 0)
			break;
		for (i = 0; i < len; i += 2UL << 20)
			p[i] = 1;
		huge_len += len;
	}
	if (huge_len) {
		/* count what became huge (AnonHugePages of this process) */
		FILE *f = fopen("/proc/self/smaps_rollup", "re");
		char line[256];

		while (f && fgets(line, sizeof(line), f))
			if (strncmp(line, "AnonHugePages:", 14) == 0)
				held_huge = (size_t)strtoul(line + 14, NULL, 10) >> 11;
		if (f)
			fclose(f);
	}

	printf("{\"pid\":%d,\"pinned\":%zu,\"taken_mib\":%zu,\"held_huge\":%zu,\"free_mib\":%ld,"
	       "\"free_pmd_blocks\":%" PRIu64 ",\"seconds\":%.1f}\n",
	       (int)getpid(), nkeep, nchunks * (CHUNK >> 20), held_huge, meminfo_kib("MemFree") >> 10,
	       free_pmd_blocks(), now_sec() - t0);
	fflush(stdout);

	while (!stop)
		pause();
	for (i = 0; i < nrings; i++)
		io_uring_queue_exit(&ring[i]);
	return 0;
}
