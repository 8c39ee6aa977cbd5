/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collapse-order: what a process_madvise(MADV_COLLAPSE, PMADV_COLLAPSE_ORDER)
 * costs per block, with all the blocks in one call against one call per
 * block.  It needs a kernel carrying contrib/kernel (it skips, exit 77,
 * elsewhere); tests/vm boots one: MTHPD_VM_EXTRA=build/bench/collapse-order
 * (contrib/kernel/README.md has the figures).
 *
 * For 16 KiB and 64 KiB blocks: 1024 blocks (the most one call takes,
 * IOV_MAX) in one anonymous VMA, every page written, then collapsed
 *   batched   one call with 1024 iovecs
 *   single    1024 calls with one iovec each
 * Both are measured in alternation, on fresh memory each round, and the
 * median of ROUNDS (argument, default 15) is printed in microseconds per
 * block.  Then both are measured again on the blocks just collapsed
 * ("settled"): the kernel finds each block mapped by its folio and does
 * nothing, so what is left is the work per call and per block, without the
 * copy.  The floor is writing the same memory (a page fault per page, the
 * memory the collapse then copies), measured in the same rounds.  Each
 * call is checked: it must answer all its bytes, collapse_alloc must grow
 * by 1024 for a collapse and by nothing for settled blocks, or the bench
 * stops with an error.
 *
 * Each is measured twice: "idle", nothing else running, and "busy", with a
 * child on every other CPU faulting pages in and out, so that those CPUs'
 * LRU batches are never empty (see start_busy()).
 *
 * The kernel's per-call work (lru_add_drain_all(), which queues work on
 * every CPU whose LRU batches hold pages and waits for it, and the
 * collapse_control allocation) is paid once by "batched" and 1024 times
 * by "single"; on a kernel that does it per block, by both.  Timings are
 * printed, never judged.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#define PMADV_COLLAPSE_ORDER 0x1

#define NR_BLOCKS 1024
#define MAX_ROUNDS 64
#define MAX_CPUS 64
#define PMD_SIZE (2UL << 20)

static const char thp[] = "/sys/kernel/mm/transparent_hugepage";

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int write_line(const char *path, const char *val)
{
	FILE *f = fopen(path, "we");
	int ret;

	if (!f)
		return -1;
	ret = fputs(val, f) < 0 ? -1 : 0;
	if (fclose(f))
		ret = -1;
	return ret;
}

static unsigned long collapse_alloc(size_t block)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), "%s/hugepages-%zukB/stats/collapse_alloc", thp, block >> 10);
	if (read_line(path, buf, sizeof(buf)))
		return 0;
	return strtoul(buf, NULL, 10);
}

/* The setting between [] of an "always [madvise] never" file. */
static int current_setting(const char *path, char *out, size_t len)
{
	char buf[128], *l, *r;

	if (read_line(path, buf, sizeof(buf)))
		return -1;
	l = strchr(buf, '[');
	r = l ? strchr(l, ']') : NULL;
	if (!l || !r)
		return -1;
	*r = '\0';
	snprintf(out, len, "%s", l + 1);
	return 0;
}

static ssize_t pmadv(int pidfd, struct iovec *iov, size_t n)
{
	return syscall(SYS_process_madvise, pidfd, iov, n, MADV_COLLAPSE, PMADV_COLLAPSE_ORDER);
}

/* Fresh memory for NR_BLOCKS blocks, PMD aligned, every page written. */
static char *layout(size_t block, void **map, size_t *maplen)
{
	size_t len = NR_BLOCKS * block;
	char *mem;

	*maplen = len + PMD_SIZE;
	*map = mmap(NULL, *maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*map == MAP_FAILED)
		return NULL;
	mem = (char *)(((uintptr_t)*map + PMD_SIZE - 1) & ~(PMD_SIZE - 1));
	for (size_t i = 0; i < len; i += 4096)
		mem[i] = (char)(i >> 12);
	return mem;
}

/* Collapses the NR_BLOCKS blocks at @iov, all in one call or one per call; us per block. */
static int collapse_all(int pidfd, struct iovec *iov, size_t block, int batched, const char *what,
			double *us)
{
	double t0 = now_us();

	if (batched) {
		ssize_t n = pmadv(pidfd, iov, NR_BLOCKS);

		if (n != (ssize_t)(NR_BLOCKS * block)) {
			fprintf(stderr, "collapse-order: %zuK %s batched: returned %zd (%s)\n", block >> 10,
				what, n, n < 0 ? strerror(errno) : "short");
			return -1;
		}
	} else {
		for (size_t i = 0; i < NR_BLOCKS; i++) {
			ssize_t n = pmadv(pidfd, &iov[i], 1);

			if (n != (ssize_t)block) {
				fprintf(stderr, "collapse-order: %zuK %s block %zu: returned %zd (%s)\n",
					block >> 10, what, i, n, n < 0 ? strerror(errno) : "short");
				return -1;
			}
		}
	}
	*us = (now_us() - t0) / NR_BLOCKS;
	return 0;
}

/*
 * One round on fresh memory: the floor (writing it), the collapse in one
 * mode, then both modes again on the blocks now collapsed ("settled": the
 * kernel finds each block mapped by its folio and returns, so only the
 * per-call and per-block work is left).  All in us per block.
 */
static int round_one(int pidfd, size_t block, int batched, double *floor_us, double *us,
		     double *settled_batched, double *settled_single)
{
	struct iovec iov[NR_BLOCKS];
	unsigned long before = collapse_alloc(block);
	size_t maplen;
	void *map;
	double t0, t1;
	char *mem;

	t0 = now_us();
	mem = layout(block, &map, &maplen);
	t1 = now_us();
	if (!mem) {
		fprintf(stderr, "collapse-order: mmap: %s\n", strerror(errno));
		return -1;
	}
	*floor_us = (t1 - t0) / NR_BLOCKS;
	for (size_t i = 0; i < NR_BLOCKS; i++) {
		iov[i].iov_base = mem + i * block;
		iov[i].iov_len = block;
	}
	if (collapse_all(pidfd, iov, block, batched, "collapse", us))
		return -1;
	if (collapse_alloc(block) - before != NR_BLOCKS) {
		fprintf(stderr, "collapse-order: %zuK: collapse_alloc grew by %lu, not %d\n", block >> 10,
			collapse_alloc(block) - before, NR_BLOCKS);
		return -1;
	}
	if (collapse_all(pidfd, iov, block, 1, "settled", settled_batched) ||
	    collapse_all(pidfd, iov, block, 0, "settled", settled_single))
		return -1;
	if (collapse_alloc(block) - before != NR_BLOCKS) {
		fprintf(stderr, "collapse-order: %zuK: settled blocks were collapsed again\n", block >> 10);
		return -1;
	}
	munmap(map, maplen);
	return 0;
}

/* The rows of one condition: for each block size, ROUNDS rounds of both modes. */
static int measure(int pidfd, int rounds, const char *cond)
{
	static const size_t blocks[] = { 16 << 10, 64 << 10 };

	for (size_t s = 0; s < 2; s++) {
		double fl[2 * MAX_ROUNDS], b[MAX_ROUNDS], one[MAX_ROUNDS];
		double sb[2 * MAX_ROUNDS], so[2 * MAX_ROUNDS];
		char label[32];

		/* each round: one fresh layout collapsed batched, one single */
		for (int r = 0; r < rounds; r++) {
			int first = r % 2 == 0;

			if (round_one(pidfd, blocks[s], first, &fl[2 * r], first ? &b[r] : &one[r], &sb[2 * r],
				      &so[2 * r]) ||
			    round_one(pidfd, blocks[s], !first, &fl[2 * r + 1], first ? &one[r] : &b[r],
				      &sb[2 * r + 1], &so[2 * r + 1]))
				return 1;
		}
		double mb = median(b, rounds), mo = median(one, rounds);
		double msb = median(sb, 2 * rounds), mso = median(so, 2 * rounds);

		snprintf(label, sizeof(label), "%s %s", blocks[s] == 16 << 10 ? "16K" : "64K", cond);
		printf("%-11s %8.1f %8.1f %8.1f %5.2fx %8.1f %8.1f %5.2fx\n", label, median(fl, 2 * rounds), mb,
		       mo, mo / mb, msb, mso, mso / msb);
		fflush(stdout);
	}
	return 0;
}

/*
 * "busy": on every other CPU a child that keeps faulting fresh pages in and
 * unmapping them, so that its CPU's LRU batch always holds pages and
 * lru_add_drain_all() must queue work there and wait for it, as on a
 * machine that runs services.  The bench itself stays on CPU 0.
 */
static int start_busy(pid_t *busy)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;
	int n = 0;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return 0;
	for (long c = 1; c < ncpu && n < MAX_CPUS; c++) {
		pid_t pid = fork();

		if (pid < 0)
			break;
		if (pid == 0) {
			(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
			CPU_ZERO(&set);
			CPU_SET((size_t)c, &set);
			(void)sched_setaffinity(0, sizeof(set), &set);
			for (;;) {
				char *p = mmap(NULL, 64 * 4096, PROT_READ | PROT_WRITE,
					       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

				if (p == MAP_FAILED)
					_exit(1);
				for (size_t i = 0; i < 64 * 4096; i += 4096)
					p[i] = 1;
				munmap(p, 64 * 4096);
			}
		}
		busy[n++] = pid;
	}
	return n;
}

static void stop_busy(const pid_t *busy, int n)
{
	for (int i = 0; i < n; i++) {
		kill(busy[i], SIGKILL);
		waitpid(busy[i], NULL, 0);
	}
}

int main(int argc, char **argv)
{
	static const size_t blocks[] = { 16 << 10, 64 << 10 };
	char top[32], old[2][32], path[256];

	int rounds = argc > 1 ? atoi(argv[1]) : 15;
	int pidfd, ret = 0;

	if (rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: collapse-order [ROUNDS 1..%d]\n", MAX_ROUNDS);
		return 2;
	}
	pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (pidfd < 0) {
		fprintf(stderr, "collapse-order: pidfd_open: %s\n", strerror(errno));
		return 77;
	}
	snprintf(path, sizeof(path), "%s/enabled", thp);
	if (current_setting(path, top, sizeof(top))) {
		fprintf(stderr, "collapse-order: no THP here; skipped\n");
		return 77;
	}
	/* Faults map small pages: top level and both sizes "madvise", no MADV_HUGEPAGE. */
	for (size_t s = 0; s < 2; s++) {
		snprintf(path, sizeof(path), "%s/hugepages-%zukB/enabled", thp, blocks[s] >> 10);
		if (current_setting(path, old[s], sizeof(old[s]))) {
			fprintf(stderr, "collapse-order: no %s (mTHP sizes needed); skipped\n", path);
			return 77;
		}
	}
	for (size_t s = 0; s < 2 && ret == 0; s++) {
		snprintf(path, sizeof(path), "%s/hugepages-%zukB/enabled", thp, blocks[s] >> 10);
		if (write_line(path, "madvise")) {
			fprintf(stderr, "collapse-order: cannot write %s (root needed); skipped\n", path);
			ret = 77;
		}
	}
	snprintf(path, sizeof(path), "%s/enabled", thp);
	if (ret == 0 && write_line(path, "madvise"))
		ret = 77;
	if (ret == 0) {
		struct iovec iov;
		size_t maplen;
		void *map;
		char *mem = layout(16 << 10, &map, &maplen);

		iov.iov_base = mem;
		iov.iov_len = 16 << 10;
		if (mem && pmadv(pidfd, &iov, 1) < 0 && errno == EINVAL) {
			fprintf(stderr, "collapse-order: this kernel lacks PMADV_COLLAPSE_ORDER; skipped\n");
			ret = 77;
		}
		if (mem)
			munmap(map, maplen);
	}
	if (ret == 0) {
		printf("collapse-order: %d blocks per round, %d rounds, median us per block\n", NR_BLOCKS, rounds);
		printf("%-11s %8s %18s %18s\n", "", "", "collapse", "settled");
		printf("%-11s %8s %8s %8s %6s %8s %8s %6s\n", "block", "floor", "batched", "single", "ratio",
		       "batched", "single", "ratio");
		ret = measure(pidfd, rounds, "idle");
	}
	if (ret == 0) {
		pid_t busy[MAX_CPUS];
		int nbusy = start_busy(busy);

		if (nbusy > 0)
			ret = measure(pidfd, rounds, "busy");
		else
			printf("busy: not measured (one CPU)\n");
		stop_busy(busy, nbusy);
	}
	for (size_t s = 0; s < 2; s++) {
		snprintf(path, sizeof(path), "%s/hugepages-%zukB/enabled", thp, blocks[s] >> 10);
		write_line(path, old[s]);
	}
	snprintf(path, sizeof(path), "%s/enabled", thp);
	write_line(path, top);
	return ret;
}
