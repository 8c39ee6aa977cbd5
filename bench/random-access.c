/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * random-access MIB SECONDS [STRIDE]: what huge pages give random access
 * on this host, outside any runtime: bench/jvm's floor and ceiling without
 * the JVM.
 *
 * Twice, one mapping after the other: MIB MiB of anonymous memory aligned
 * to 2 MiB, advised MADV_NOHUGEPAGE (4K pages) then MADV_HUGEPAGE (huge
 * from the first fault where THP enabled is madvise or always), filled one
 * u64 at a time, then looked up for SECONDS seconds the way
 * bench/Lookup.java does: four dependent chains, each slot chosen from the
 * value the chain's previous lookup found.  With STRIDE (slots of 8
 * bytes), only every STRIDE-th slot is looked up: 512 is one slot per 4 KiB
 * page, so that the data looked up (MIB / 64 MiB of cache lines) fits the
 * caches and what is left is the translation, the TLB's part alone.
 * Prints one line per mapping:
 *
 *   random-access 4k mib=M huge_kb=H lookups_per_s=N stride=S x=X
 *   random-access huge mib=M huge_kb=H lookups_per_s=N stride=S x=X
 *
 * H is the process's AnonHugePages (smaps_rollup) once the mapping is
 * filled, so that a ceiling that did not get huge pages is seen.  Where a
 * hypervisor maps the guest's memory with 4K pages in its own tables (a
 * shadow-paging one such as PVM), the two lines come out alike: the TLB
 * holds the hypervisor's 4K translations whatever the guest maps.
 * Exit 0, or 1 with a message.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define HPAGE (2ULL << 20)
#define BATCH 16384

/* A 64-bit mixer: every input bit reaches every output bit (as Lookup.java's). */
static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A slot in [0, n) from the high 32 bits of h; n < 2^32. */
static uint64_t slot(uint64_t h, uint64_t n)
{
	return ((h >> 32) * n) >> 32;
}

static double now(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* AnonHugePages:    630784 kB */
static uint64_t anon_huge_kb(void)
{
	char line[256];
	uint64_t kb = 0;
	FILE *f = fopen("/proc/self/smaps_rollup", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %" SCNu64, &kb) == 1)
			break;
	(void)fclose(f);
	return kb;
}

/* One mapping, advised ADVICE; prints its line.  Returns 0, or -1 with a message. */
static int one(const char *name, int advice, uint64_t mib, double seconds, uint64_t stride)
{
	uint64_t n = mib * (1ULL << 20) / 8, m = n / stride, k0 = 1, k1 = 2, k2 = 3, k3 = 4, done = 0, huge;
	size_t len = (size_t)(mib << 20) + HPAGE;
	uint64_t *t;
	char *map;
	double t0, t1;

	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		fprintf(stderr, "random-access: mmap of %" PRIu64 " MiB: %s\n", mib, strerror(errno));
		return -1;
	}
	/* aligned, so that every 2 MiB of the table can be one huge page */
	t = (uint64_t *)(void *)(map + (HPAGE - (uintptr_t)map % HPAGE) % HPAGE);
	if (madvise(t, (size_t)(mib << 20), advice) < 0) {
		fprintf(stderr, "random-access: madvise: %s\n", strerror(errno));
		(void)munmap(map, len);
		return -1;
	}
	for (uint64_t i = 0; i < n; i++)
		t[i] = mix(i);
	huge = anon_huge_kb();
	t0 = now();
	do {
		for (int i = 0; i < BATCH; i++) {
			k0 = mix(k0 + t[slot(k0, m) * stride]);
			k1 = mix(k1 + t[slot(k1, m) * stride]);
			k2 = mix(k2 + t[slot(k2, m) * stride]);
			k3 = mix(k3 + t[slot(k3, m) * stride]);
		}
		done += 4 * BATCH;
		t1 = now();
	} while (t1 - t0 < seconds);
	/* the chains' keys are printed (as one bit) so that no lookup is dead code */
	printf("random-access %s mib=%" PRIu64 " huge_kb=%" PRIu64 " lookups_per_s=%.0f stride=%" PRIu64 " x=%u\n",
	       name, mib, huge, (double)done / (t1 - t0), stride, (unsigned)((k0 ^ k1 ^ k2 ^ k3) & 1));
	(void)fflush(stdout);
	(void)munmap(map, len);
	return 0;
}

int main(int argc, char **argv)
{
	char *end;
	unsigned long long mib;
	unsigned long long stride = 1;
	double seconds;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: random-access MIB SECONDS [STRIDE]\n");
		return 1;
	}
	errno = 0;
	mib = strtoull(argv[1], &end, 10);
	if (errno || *end || mib < 4 || mib > 16384) {
		fprintf(stderr, "random-access: MIB '%s' is not a number from 4 to 16384\n", argv[1]);
		return 1;
	}
	seconds = strtod(argv[2], &end);
	if (*end || !(seconds > 0 && seconds <= 3600)) {
		fprintf(stderr, "random-access: SECONDS '%s' is not a number from 0 to 3600\n", argv[2]);
		return 1;
	}
	if (argc == 4) {
		errno = 0;
		stride = strtoull(argv[3], &end, 10);
		if (errno || *end || stride < 1 || stride > mib * 1024) {
			fprintf(stderr, "random-access: STRIDE '%s' is not a number from 1 to %llu\n",
				argv[3], mib * 1024);
			return 1;
		}
	}
	if (one("4k", MADV_NOHUGEPAGE, mib, seconds, stride) < 0 ||
	    one("huge", MADV_HUGEPAGE, mib, seconds, stride) < 0)
		return 1;
	return 0;
}
