/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prefault: how long a 2 MiB collapse holds its range, with and without
 * mthpd's prefault (lib/kif.h: mthpd_kif_prefault(), daemon key prefault=).
 *
 * bench/prefault [RANGES [ROUNDS]] (64 and 7 by default).  Each round maps
 * RANGES 2 MiB ranges of small pages (MADV_NOHUGEPAGE, then every byte
 * written, then MADV_HUGEPAGE) and collapses them one call per range
 * through the library's kernel interface, as the daemon's paced calls go:
 *   cold      the call alone;
 *   prefault  mthpd_kif_prefault() of one page, then the call.
 * The two take turns, which one goes first alternating, with PAUSE (5) s
 * of sleep before each: a guest's free page reporting gives the host the
 * free 2 MiB blocks that have stayed free for 2 s, and what the previous
 * arm freed must not make this arm's memory warmer than a service's is.
 *
 * The time of a call is how long the target's range is unmapped and its
 * mmap lock held: the copy dominates it.  Per arm: the median and the 90th
 * percentile of the calls of a round, then the median [min-max] of those
 * over the rounds; the prefault's own time (mthpd's, nobody waits on it);
 * and the whole cost per range in CPU time.  The floor is writing a fresh
 * 2 MiB page in this process (the fault and zeroing the prefault does),
 * measured in the same rounds.  Every range is checked after its call:
 * the bytes as written, or the bench stops with an error.  Prints figures,
 * judges none.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "kif.h"
#include "util.h"

#define MIB2 (2UL << 20)
#define MAX_ROUNDS 31
#define MAX_RANGES 1024
#define PAUSE_SEC 5

enum { COLD, WARM, NR_ARMS };
static const char *const arm_name[NR_ARMS] = {"cold", "prefault"};

static double clock_us(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The @pct percentile of @n values (sorts them). */
static double pctl(double *v, int n, int pct)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[(n - 1) * pct / 100];
}

struct round {
	double p50, p90, pre, cpu, floor;
};

static uint8_t byte_at(size_t i)
{
	return (uint8_t)(i * 7 + i / 4096);
}

/* One arm's round: RANGES collapses.  Returns 0, or -1 with the reason printed. */
static int one_round(struct mthpd_kif *kif, int pidfd, int arm, int nr, struct round *ret)
{
	static double call[MAX_RANGES], pre[MAX_RANGES];
	double cpu0, f0;
	uint8_t *map, *r, *fresh;

	map = mmap(NULL, (size_t)(nr + 1) * MIB2, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		perror("prefault: mmap");
		return -1;
	}
	r = (uint8_t *)(((uintptr_t)map + MIB2 - 1) & ~(MIB2 - 1));
	(void)madvise(r, (size_t)nr * MIB2, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < (size_t)nr * MIB2; i++)
		r[i] = byte_at(i);
	(void)madvise(r, (size_t)nr * MIB2, MADV_HUGEPAGE);
	cpu0 = clock_us(CLOCK_THREAD_CPUTIME_ID);
	for (int i = 0; i < nr; i++) {
		double t0 = clock_us(CLOCK_MONOTONIC), t1;
		int64_t n;

		if (arm == WARM)
			mthpd_kif_prefault(kif, 1);
		t1 = clock_us(CLOCK_MONOTONIC);
		n = kif->ops->collapse(kif, pidfd, (uint64_t)(uintptr_t)(r + (size_t)i * MIB2), MIB2, 0);
		call[i] = clock_us(CLOCK_MONOTONIC) - t1;
		pre[i] = t1 - t0;
		if (n != (int64_t)MIB2) {
			fprintf(stderr, "prefault: range %d: the collapse answered %lld (%s)\n", i,
				(long long)n, n < 0 ? strerror((int)-n) : "short");
			(void)munmap(map, (size_t)(nr + 1) * MIB2);
			return -1;
		}
	}
	ret->cpu = (clock_us(CLOCK_THREAD_CPUTIME_ID) - cpu0) / nr;
	for (size_t i = 0; i < (size_t)nr * MIB2; i++)
		if (r[i] != byte_at(i)) {
			fprintf(stderr, "prefault: byte %zu changed in the collapse\n", i);
			(void)munmap(map, (size_t)(nr + 1) * MIB2);
			return -1;
		}
	(void)munmap(map, (size_t)(nr + 1) * MIB2);
	ret->p50 = pctl(call, nr, 50);
	ret->p90 = pctl(call, nr, 90);
	ret->pre = arm == WARM ? pctl(pre, nr, 50) : 0;
	/* the floor: one fresh 2 MiB page written, as the prefault does */
	fresh = mmap(NULL, 2 * MIB2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fresh == MAP_FAILED)
		return -1;
	r = (uint8_t *)(((uintptr_t)fresh + MIB2 - 1) & ~(MIB2 - 1));
	(void)madvise(r, MIB2, MADV_HUGEPAGE);
	f0 = clock_us(CLOCK_MONOTONIC);
	r[0] = 1;
	ret->floor = clock_us(CLOCK_MONOTONIC) - f0;
	(void)munmap(fresh, 2 * MIB2);
	return 0;
}

/* "median [min-max]" of field @off of @n rounds. */
static const char *spread(const struct round *rs, int n, size_t off, char *buf, size_t size)
{
	double v[MAX_ROUNDS];

	for (int i = 0; i < n; i++)
		v[i] = *(const double *)((const char *)&rs[i] + off);
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	(void)snprintf(buf, size, "%.0f [%.0f-%.0f]", n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2,
		       v[0], v[n - 1]);
	return buf;
}

int main(int argc, char **argv)
{
	int nr = argc > 1 ? atoi(argv[1]) : 64, rounds = argc > 2 ? atoi(argv[2]) : 7;
	static struct round res[NR_ARMS][MAX_ROUNDS];
	struct mthpd_kif kif;
	struct utsname u;
	int pidfd;

	if (nr < 1 || nr > MAX_RANGES || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: prefault [RANGES (1-%d) [ROUNDS (1-%d)]]\n", MAX_RANGES,
			MAX_ROUNDS);
		return 2;
	}
	if (mthpd_kif_linux_init(NULL, NULL, &kif, NULL) < 0 || mthpd_kif_prefault_set(&kif, true) < 0) {
		perror("prefault: setup");
		return 1;
	}
	pidfd = kif.ops->pidfd_open(&kif, getpid());
	if (pidfd < 0) {
		fprintf(stderr, "prefault: pidfd_open: %s\n", strerror(-pidfd));
		return 1;
	}
	(void)uname(&u);
	printf("prefault: %s %s, %ld CPUs, free page reporting %s; %d ranges x %d rounds per arm, %d s pauses\n",
	       u.release, u.machine, sysconf(_SC_NPROCESSORS_ONLN),
	       mthpd_kif_free_page_reporting(&kif) ? "yes" : "no", nr, rounds, PAUSE_SEC);
	for (int i = 0; i < rounds; i++)
		for (int k = 0; k < NR_ARMS; k++) {
			int arm = (i + k) % NR_ARMS;

			(void)sleep(PAUSE_SEC);
			if (one_round(&kif, pidfd, arm, nr, &res[arm][i]) < 0)
				return 1;
		}
	for (int arm = 0; arm < NR_ARMS; arm++) {
		char a[64], b[64], c[64], d[64];

		printf("%-9s range held us: p50 %s  p90 %s;  prefault us %s;  CPU us per range %s\n",
		       arm_name[arm], spread(res[arm], rounds, offsetof(struct round, p50), a, sizeof(a)),
		       spread(res[arm], rounds, offsetof(struct round, p90), b, sizeof(b)),
		       arm == WARM ? spread(res[arm], rounds, offsetof(struct round, pre), c, sizeof(c)) : "-",
		       spread(res[arm], rounds, offsetof(struct round, cpu), d, sizeof(d)));
	}
	{
		char a[64];

		printf("floor     a fresh 2 MiB page written: us %s\n",
		       spread(res[COLD], rounds, offsetof(struct round, floor), a, sizeof(a)));
	}
	(void)close(pidfd);
	mthpd_kif_done(&kif);
	return 0;
}
