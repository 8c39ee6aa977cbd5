/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disturb: one of the things a paced collapse does, alone, at a fixed
 * period, for bench/redis's noise arms (issue 27: which part of a
 * collapse does a service on another CPU feel?).
 *
 *   disturb MODE PERIOD_MS SECONDS [SPIN_US]
 *
 * Every PERIOD_MS, for SECONDS, one operation of MODE:
 *   spin        burn SPIN_US (3800) of CPU and touch no memory: the CPU
 *               time alone;
 *   fault       mthpd_kif_prefault() of one page: a fresh 2 MiB page of
 *               this process written and freed, as the daemon does
 *               before a 2M collapse (the guest's page zeroing and, on a
 *               host that took the free page back, the host's faults);
 *   collapse    one 2 MiB range of this process's own small pages
 *               collapsed (process_madvise(MADV_COLLAPSE) on itself
 *               through the library's kernel interface): the copy, the
 *               LRU drain and the TLB flush, without the service's mmap
 *               lock;
 *   pfcollapse  fault, then collapse: what the daemon does per range.
 * The ranges for the collapse modes are written before the period starts
 * (MADV_NOHUGEPAGE, written, then MADV_HUGEPAGE), one per period, and
 * checked after: a byte that changed is an error.
 *
 * With DISTURB_YIELD=1 in the environment, each operation runs at nice 19
 * with the kernel's shortest slice (0.1 ms), and at nice 0 with the
 * default slice after it: what that scheduling spares the service
 * (tried for mthpd's prefault and not kept: bench/README.md, "Who waits
 * for a burst of mthpd's").
 *
 * Prints "window T0 T1" (the first and last operation's times, seconds
 * since the epoch, for bench/redis to cut its GET latencies with), then
 * how many operations ran, their duration (p50 and p90, ms) and the CPU
 * time they took.  Prints figures, judges none.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kif.h"
#include "util.h"

#define MIB2 (2UL << 20)
#define MAX_OPS 100000

enum mode { SPIN, FAULT, FRESH, COLLAPSE, PFCOLLAPSE };
static const char *const mode_name[] = {"spin", "fault", "fresh", "collapse", "pfcollapse"};

static double clock_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static uint8_t byte_at(size_t i)
{
	return (uint8_t)(i * 7 + i / 4096);
}

/* sched_setattr(2) of the calling thread: SCHED_OTHER, @nice, slice @slice_ns (0: the default) */
static void sched_to(int nice, unsigned long long slice_ns)
{
	struct {
		uint32_t size, policy;
		uint64_t flags;
		int32_t nice;
		uint32_t prio;
		uint64_t runtime, deadline, period;
	} a = {.size = sizeof(a), .nice = nice, .runtime = slice_ns};

	if (syscall(SYS_sched_setattr, 0, &a, 0U) < 0)
		perror("disturb: sched_setattr");
}

static void spin(double us)
{
	double end = clock_s(CLOCK_MONOTONIC) + us / 1e6;

	while (clock_s(CLOCK_MONOTONIC) < end)
		;
}

int main(int argc, char **argv)
{
	static double dur[MAX_OPS];
	int mode = -1, period_ms, seconds, nr, pidfd = -1;
	double spin_us = argc > 4 ? atof(argv[4]) : 3800, t0 = 0, t1 = 0, cpu0;
	struct mthpd_kif kif;
	struct timespec next;
	uint8_t *map = NULL, *r = NULL, *fresh = NULL;
	const char *y = getenv("DISTURB_YIELD");
	bool yield = y && !strcmp(y, "1");
	size_t len = 0;

	for (int i = 0; argc > 1 && i < 5; i++)
		if (!strcmp(argv[1], mode_name[i]))
			mode = i;
	period_ms = argc > 2 ? atoi(argv[2]) : 0;
	seconds = argc > 3 ? atoi(argv[3]) : 0;
	if (mode < 0 || period_ms < 1 || seconds < 1 || spin_us <= 0) {
		fprintf(stderr, "usage: disturb spin|fault|fresh|collapse|pfcollapse PERIOD_MS SECONDS [SPIN_US]\n");
		return 2;
	}
	nr = (int)((long)seconds * 1000 / period_ms);
	if (nr > MAX_OPS) {
		fprintf(stderr, "disturb: %d operations; at most %d\n", nr, MAX_OPS);
		return 2;
	}
	if (mthpd_kif_linux_init(NULL, NULL, &kif, NULL) < 0 || mthpd_kif_prefault_set(&kif, true) < 0) {
		perror("disturb: setup");
		return 1;
	}
	if (mode != SPIN && mode != FAULT) {
		/* one 2 MiB-aligned page or range a period */
		len = (size_t)(nr + 1) * MIB2;
		map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (map == MAP_FAILED) {
			perror("disturb: mmap");
			return 1;
		}
		r = (uint8_t *)(((uintptr_t)map + MIB2 - 1) & ~(MIB2 - 1));
	}
	if (mode == FRESH) {
		fresh = r;
		r = NULL;
		(void)madvise(fresh, (size_t)nr * MIB2, MADV_HUGEPAGE);
	}
	if (mode == COLLAPSE || mode == PFCOLLAPSE) {
		pidfd = kif.ops->pidfd_open(&kif, getpid());
		if (pidfd < 0) {
			fprintf(stderr, "disturb: pidfd_open: %s\n", strerror(-pidfd));
			return 1;
		}
		(void)madvise(r, (size_t)nr * MIB2, MADV_NOHUGEPAGE);
		for (size_t i = 0; i < (size_t)nr * MIB2; i++)
			r[i] = byte_at(i);
		(void)madvise(r, (size_t)nr * MIB2, MADV_HUGEPAGE);
	}
	cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (int i = 0; i < nr; i++) {
		double s = clock_s(CLOCK_MONOTONIC), real = clock_s(CLOCK_REALTIME);
		int64_t n;

		if (i == 0)
			t0 = real;
		t1 = real;
		if (yield)
			sched_to(19, 100000); /* the kernel's shortest slice */
		switch (mode) {
		case SPIN:
			spin(spin_us);
			break;
		case FAULT:
			mthpd_kif_prefault(&kif, 1);
			break;
		case FRESH:
			fresh[(size_t)i * MIB2] = 1;
			break;
		case PFCOLLAPSE:
			mthpd_kif_prefault(&kif, 1);
			/* fall through */
		case COLLAPSE:
			n = kif.ops->collapse(&kif, pidfd, (uint64_t)(uintptr_t)(r + (size_t)i * MIB2), MIB2, 0);
			if (n != (int64_t)MIB2) {
				fprintf(stderr, "disturb: range %d: the collapse answered %lld (%s)\n", i,
					(long long)n, n < 0 ? strerror((int)-n) : "short");
				return 1;
			}
			break;
		}
		if (yield)
			sched_to(0, 0);
		dur[i] = (clock_s(CLOCK_MONOTONIC) - s) * 1e3;
		next.tv_nsec += (long)period_ms * 1000000;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
	cpu0 = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	if (r)
		for (size_t i = 0; i < (size_t)nr * MIB2; i++)
			if (r[i] != byte_at(i)) {
				fprintf(stderr, "disturb: byte %zu changed in the collapse\n", i);
				return 1;
			}
	qsort(dur, (size_t)nr, sizeof(*dur), cmp_double);
	printf("window %.6f %.6f\n", t0, t1);
	printf("disturb %s%s: %d ops every %d ms, op ms p50 %.2f p90 %.2f, CPU %.2f s (%.1f%% of the window)\n",
	       mode_name[mode], yield ? " (nice 19, 0.1 ms slice)" : "", nr, period_ms, dur[(nr - 1) / 2], dur[(nr - 1) * 9 / 10], cpu0,
	       t1 > t0 ? cpu0 * 100 / (t1 - t0) : 0);
	if (map)
		(void)munmap(map, len);
	if (pidfd >= 0)
		(void)close(pidfd);
	mthpd_kif_done(&kif);
	return 0;
}
