/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A bystander for bench/fragment (issue 31, part 3): a process that has
 * nothing to do with mthpd and allocates memory, as any service that grows
 * does.  Round after round it maps MIB MiB of private anonymous memory,
 * writes every 4 KiB page (a page fault each: the allocator's free lists,
 * the zone lock and the LRU, which compaction also takes), and unmaps it.
 * What it measures is how long a round takes; the daemon's compaction
 * storms, if any, show as slower rounds.
 *
 *   bystander SECONDS [MIB]   (MIB: 64)
 *
 * It prints one line of JSON after SECONDS: the rounds, MiB written per
 * second, and the median, p99 and largest round in milliseconds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define PAGE 4096UL
#define MAX_ROUNDS 1000000

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	static double round_ms[MAX_ROUNDS];
	double seconds, t0, end, t;
	size_t mib = 64, len, i, n = 0;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: bystander SECONDS [MIB]\n");
		return 2;
	}
	seconds = strtod(argv[1], NULL);
	if (argc == 3)
		mib = strtoul(argv[2], NULL, 10);
	if (seconds <= 0 || mib == 0) {
		fprintf(stderr, "bystander: SECONDS and MIB must be positive\n");
		return 2;
	}
	len = mib << 20;
	t0 = now_ms();
	end = t0 + seconds * 1e3;
	for (t = t0; t < end && n < MAX_ROUNDS; n++) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		double r0 = t;

		if (p == MAP_FAILED) {
			perror("bystander: mmap");
			return 1;
		}
		for (i = 0; i < len; i += PAGE)
			((volatile char *)p)[i] = 1;
		munmap(p, len);
		t = now_ms();
		round_ms[n] = t - r0;
	}
	qsort(round_ms, n, sizeof(*round_ms), cmp_double);
	printf("{\"rounds\":%zu,\"mib_per_s\":%.0f,\"median_ms\":%.2f,\"p99_ms\":%.2f,\"max_ms\":%.2f}\n",
	       n, (double)(n * mib) / ((t - t0) / 1e3), n ? round_ms[n / 2] : 0.0,
	       n ? round_ms[n * 99 / 100] : 0.0, n ? round_ms[n - 1] : 0.0);
	return 0;
}
