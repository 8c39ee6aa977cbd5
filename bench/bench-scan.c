/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-scan: what one `plan` of a process costs, next to the floor, the raw
 * pagemap read of the same resident pages.  `make bench` runs it through
 * bench/run; bench/README.md has the figures and how to read them.
 *
 * Two children are laid out and touched once, then measured repeatedly
 * (median of --runs, after one warm-up round):
 *   dense   4 GiB written in 4 KiB pages (1048576 resident pages)
 *   sparse  a 16 GiB MAP_NORESERVE mapping: every 64th 2 MiB range fully
 *           written, one page in every 7th range (1.6% resident)
 *
 * Rows, for each child:
 *   floor        pread of /proc/CHILD/pagemap, 4 KiB (512 entries) for each
 *                populated 2 MiB range and nothing else (the bench laid the
 *                ranges out, so it knows them)
 *   plan 2M      in-process, as `mthpd plan` does it: kif init, feature probe,
 *                knobs, kpageflags open, target open, mthpd_target_pass() with
 *                a sink that does nothing; "pass ms" is the last call alone.
 *                Its parts, each timed alone: the populated-range walk
 *                (mthpd_pagemap_next_range), scan.c + plan.c on entries read
 *                beforehand, and the smaps read (mthpd_vmas_read_nohugepage)
 *   plan 2M,64K  the same with a size below 2M: kpageflags of every occupied page
 *   no PAGEMAP_SCAN/PROCMAP_QUERY  the fallbacks of older kernels
 *   CLI          `mthpd plan --pid CHILD --json >/dev/null`, fork to wait, also
 *                with MTHPD_DISABLE=pagemap_scan,procmap_query
 *   whole mapping  pread of the pagemap of the whole sparse mapping
 *   P1..P4       prototypes of changes proposed for lib/ (bench code, not
 *                mthpd's; see "Proposals" in bench/README.md)
 * Every sample is paired with a floor measured just before it, and the ratio
 * column is the median of those pairs' ratios: the host's speed drifts by up
 * to 2x between rounds, and a pair shares the same moment.
 *
 * A timing is never a pass/fail test: this program only prints figures.
 * The children are killed on every exit (atexit, fatal signals, and
 * PR_SET_PDEATHSIG should the bench itself die).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "features.h"
#include "kif.h"
#include "knobs.h"
#include "pagemap.h"
#include "plan.h"
#include "scan.h"
#include "target.h"
#include "uapi.h"
#include "vmas.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define MAX_RUNS 64
#define MAX_CHILDREN 4
#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)

/* ---- children, and killing them on every way out ---- */

static volatile pid_t children[MAX_CHILDREN];

static void kill_children(void)
{
	for (int i = 0; i < MAX_CHILDREN; i++) {
		pid_t p = children[i];

		if (p > 0) {
			(void)kill(p, SIGKILL);
			(void)waitpid(p, NULL, 0);
			children[i] = 0;
		}
	}
}

static void on_fatal_signal(int sig)
{
	/* kill() and waitpid() are async-signal-safe. */
	kill_children();
	(void)signal(sig, SIG_DFL);
	(void)raise(sig);
}

static void remember_child(pid_t p)
{
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (children[i] == 0) {
			children[i] = p;
			return;
		}
}

static void reap_child(pid_t p)
{
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (children[i] == p) {
			(void)kill(p, SIGKILL);
			(void)waitpid(p, NULL, 0);
			children[i] = 0;
		}
}

/* ---- layouts ---- */

enum range_fill { FILL_NONE, FILL_FULL, FILL_ONE };

struct layout {
	const char *name;
	uint64_t size;      /* bytes, a multiple of 2 MiB */
	bool sparse;
};

static enum range_fill range_fill(const struct layout *l, uint64_t i)
{
	if (!l->sparse)
		return FILL_FULL;
	if (i % 64 == 0)
		return FILL_FULL;
	if (i % 7 == 0)
		return FILL_ONE;
	return FILL_NONE;
}

/* The page written in a FILL_ONE range: varies, so it is not always the first. */
static uint64_t one_page_index(uint64_t i)
{
	return (i * 37) % MTHPD_PMD_NR;
}

static uint64_t resident_pages(const struct layout *l)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < l->size / MTHPD_PMD_SIZE; i++) {
		enum range_fill f = range_fill(l, i);

		n += f == FILL_FULL ? MTHPD_PMD_NR : f == FILL_ONE ? 1 : 0;
	}
	return n;
}

static double now_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* In the child: map, align to 2 MiB, touch, report the base, wait to be killed. */
static _Noreturn void child_main(const struct layout *l, int wfd, pid_t parent)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | (l->sparse ? MAP_NORESERVE : 0);
	uint64_t base, head, tail;
	char *map;

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1); /* the bench died before the prctl */
	map = mmap(NULL, l->size + MTHPD_PMD_SIZE, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (map == MAP_FAILED)
		_exit(2);
	/* Trim to exactly [base, base + size): every 2 MiB range is whole. */
	base = ((uint64_t)(uintptr_t)map + MTHPD_PMD_SIZE - 1) & ~(MTHPD_PMD_SIZE - 1);
	head = base - (uint64_t)(uintptr_t)map;
	tail = MTHPD_PMD_SIZE - head;
	if (head)
		(void)munmap(map, head);
	if (tail)
		(void)munmap((char *)(uintptr_t)(base + l->size), tail);

	for (uint64_t i = 0; i < l->size / MTHPD_PMD_SIZE; i++) {
		volatile char *r = (volatile char *)(uintptr_t)(base + i * MTHPD_PMD_SIZE);

		switch (range_fill(l, i)) {
		case FILL_FULL:
			for (uint64_t p = 0; p < MTHPD_PMD_NR; p++)
				r[p * MTHPD_PAGE_SIZE] = 1;
			break;
		case FILL_ONE:
			r[one_page_index(i) * MTHPD_PAGE_SIZE] = 1;
			break;
		case FILL_NONE:
			break;
		}
	}
	if (write(wfd, &base, sizeof(base)) != (ssize_t)sizeof(base))
		_exit(3);
	for (;;)
		(void)pause();
}

/* Starts a child with layout @l.  Returns its pid and its base address. */
static pid_t spawn_child(const struct layout *l, uint64_t *ret_base, double *ret_touch_ms)
{
	int p[2];
	double t0 = now_ms();
	pid_t pid, self = getpid();
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		(void)close(p[0]);
		(void)close(p[1]);
		return -1;
	}
	if (pid == 0) {
		(void)close(p[0]);
		child_main(l, p[1], self);
	}
	remember_child(pid);
	(void)close(p[1]);
	do
		n = read(p[0], ret_base, sizeof(*ret_base));
	while (n < 0 && errno == EINTR);
	(void)close(p[0]);
	*ret_touch_ms = now_ms() - t0;
	if (n != (ssize_t)sizeof(*ret_base)) {
		reap_child(pid);
		return -1;
	}
	return pid;
}

/* kB value of @field in /proc/PID/smaps_rollup, or -1. */
static long rollup_kb(pid_t pid, const char *field)
{
	char path[64], line[256];
	size_t flen = strlen(field);
	long v = -1;
	FILE *f;

	(void)snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, flen) == 0 && line[flen] == ':') {
			v = strtol(line + flen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* ---- the measured operations ---- */

static int open_pagemap(pid_t pid)
{
	char path[64];

	(void)snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static int pread_all(int fd, void *buf, size_t len, off_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = pread(fd, (char *)buf + got, len - got, off + (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* The floor: 512 entries for each populated 2 MiB range, nothing else. */
static int floor_read(int fd, const struct layout *l, uint64_t base, uint64_t *sink)
{
	uint64_t buf[MTHPD_PMD_NR];

	for (uint64_t i = 0; i < l->size / MTHPD_PMD_SIZE; i++) {
		uint64_t addr = base + i * MTHPD_PMD_SIZE;

		if (range_fill(l, i) == FILL_NONE)
			continue;
		if (pread_all(fd, buf, sizeof(buf), (off_t)(addr / MTHPD_PAGE_SIZE * 8)) < 0)
			return -1;
		*sink += buf[0] ^ buf[MTHPD_PMD_NR - 1];
	}
	return 0;
}

/* The whole mapping's pagemap in 4 KiB reads, as if there were no PAGEMAP_SCAN. */
static int full_read(int fd, const struct layout *l, uint64_t base, uint64_t *sink)
{
	uint64_t buf[MTHPD_PMD_NR];

	for (uint64_t addr = base; addr < base + l->size; addr += MTHPD_PMD_SIZE) {
		if (pread_all(fd, buf, sizeof(buf), (off_t)(addr / MTHPD_PAGE_SIZE * 8)) < 0)
			return -1;
		*sink += buf[0] ^ buf[MTHPD_PMD_NR - 1];
	}
	return 0;
}

static int null_sink(void *userdata, const struct mthpd_target *t,
		     const struct mthpd_range_scan *scan, const struct mthpd_range_plan *plan)
{
	(void)userdata;
	(void)t;
	(void)scan;
	(void)plan;
	return 0;
}

/* Untimed check: counts occupied pages that belong to a large folio. */
static int folio_sink(void *userdata, const struct mthpd_target *t,
		      const struct mthpd_range_scan *scan, const struct mthpd_range_plan *plan)
{
	uint64_t *large = userdata;

	(void)t;
	(void)plan;
	for (unsigned int i = 0; i < MTHPD_PMD_NR; i++)
		if (mthpd_bit(scan->occupied, i) && scan->folio_order[i] > 0)
			(*large)++;
	return 0;
}

struct plan_run {
	double total_ms; /* init + probe + knobs + open + pass + close */
	double pass_ms;  /* mthpd_target_pass() alone */
	struct mthpd_pass_stats st;
};

/*
 * One in-process plan, as `mthpd plan --pid PID` does it minus the output.
 * Returns 0 or -errno.
 */
static int plan_once(pid_t pid, uint32_t orders, bool fallback, mthpd_range_sink sink,
		     void *userdata, struct plan_run *ret)
{
	struct mthpd_kif kif = {.proc_fd = -1, .sys_fd = -1};
	struct mthpd_features features;
	struct mthpd_knobs knobs;
	struct mthpd_target t;
	const char *failed = NULL;
	double t0, t1, t2;
	int kpf = -1, r;

	t0 = now_ms();
	r = mthpd_kif_linux_init(NULL, NULL, &kif, NULL);
	if (r < 0)
		return r;
	r = mthpd_features_probe(&kif, &features);
	if (r < 0)
		goto out_kif;
	if (fallback) {
		features.pagemap_scan = false;
		features.procmap_query = false;
	}
	r = mthpd_knobs_read_sysfs(&kif, 7, &knobs, &failed);
	if (r < 0)
		goto out_kif;
	knobs.orders = orders;
	kpf = kif.ops->open_proc(&kif, "kpageflags", O_RDONLY);
	if (kpf < 0) {
		r = kpf;
		goto out_kif;
	}
	r = mthpd_target_open(&kif, pid, false, &t);
	if (r < 0)
		goto out_kpf;

	struct mthpd_pass_opts o = {
		.knobs = &knobs,
		.features = &features,
		.kpageflags_fd = kpf,
		.collapse = false,
	};
	t1 = now_ms();
	r = mthpd_target_pass(&kif, &t, &o, sink, userdata, &ret->st);
	t2 = now_ms();
	mthpd_target_close(&t);
out_kpf:
	(void)close(kpf);
out_kif:
	mthpd_kif_done(&kif);
	if (r < 0)
		return r;
	ret->pass_ms = t2 - t1;
	ret->total_ms = now_ms() - t0;
	return 0;
}

/* The smaps VmFlags read alone (VMAs listed beforehand, untimed). */
static int smaps_once(pid_t pid, double *ret_ms)
{
	struct mthpd_kif kif = {.proc_fd = -1, .sys_fd = -1};
	struct mthpd_vma *v = NULL;
	size_t n = 0;
	double t0;
	int r;

	r = mthpd_kif_linux_init(NULL, NULL, &kif, NULL);
	if (r < 0)
		return r;
	r = mthpd_vmas_read(&kif, pid, true, &v, &n);
	if (r >= 0) {
		t0 = now_ms();
		r = mthpd_vmas_read_nohugepage(&kif, pid, v, n);
		*ret_ms = now_ms() - t0;
	}
	free(v);
	mthpd_kif_done(&kif);
	return r;
}

/* `mthpd plan --pid PID --json > /dev/null`, fork to wait.  Returns the exit status. */
static int cli_once(const char *mthpd, pid_t pid, const char *disable, double *ret_ms)
{
	char pidbuf[16];
	double t0 = now_ms();
	pid_t c;
	int status;

	(void)snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	fflush(NULL);
	c = fork();
	if (c < 0)
		return -1;
	if (c == 0) {
		int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(126);
		if (disable)
			(void)setenv("MTHPD_DISABLE", disable, 1);
		else
			(void)unsetenv("MTHPD_DISABLE");
		execl(mthpd, mthpd, "plan", "--pid", pidbuf, "--json", (char *)NULL);
		_exit(127);
	}
	while (waitpid(c, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	*ret_ms = now_ms() - t0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- figures ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *v, unsigned int n)
{
	double s[MAX_RUNS];

	if (n == 0)
		return 0;
	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

enum method {
	M_FLOOR,
	M_PLAN_2M,
	M_WALK,
	M_CPU,
	M_SMAPS,
	M_PLAN_64K,
	M_PLAN_FALLBACK,
	M_CLI,
	M_CLI_FALLBACK,
	M_FULL,
	/* prototypes of proposed changes to lib/ (bench code, not mthpd's) */
	M_P_TAIL,
	M_P_BATCH,
	M_P_CPU,
	M_P_PROBE,
	M_P_PASS,
	M_NR,
};

static const char *const method_names[M_NR] = {
	[M_FLOOR] = "floor: pagemap of the resident ranges",
	[M_PLAN_2M] = "plan 2M (in-process)",
	[M_WALK] = "  populated-range walk (pagemap.c)",
	[M_CPU] = "  scan+plan CPU (scan.c, plan.c)",
	[M_SMAPS] = "  smaps VmFlags read (vmas.c)",
	[M_PLAN_64K] = "plan 2M,64K (in-process)",
	[M_PLAN_FALLBACK] = "plan 2M, no PAGEMAP_SCAN/PROCMAP_QUERY",
	[M_CLI] = "mthpd plan --json (CLI, fork..wait)",
	[M_CLI_FALLBACK] = "  same, MTHPD_DISABLE=pagemap_scan,...",
	[M_FULL] = "pagemap of the whole mapping",
	[M_P_TAIL] = "P1 walk: read ahead only after a full tail",
	[M_P_BATCH] = "P2 walk: P1 + batched PAGEMAP_SCAN",
	[M_P_CPU] = "P3 scan + word-level 2M verdict",
	[M_P_PROBE] = "P4 MADV_COLLAPSE 4K probe per VMA",
	[M_P_PASS] = "P2+P3+P4: prototype plan 2M pass",
};

struct figures {
	double ms[M_NR][MAX_RUNS];
	/* the floor measured just before this sample: the host's speed drifts */
	double floor_ms[M_NR][MAX_RUNS];
	double pass_ms[M_NR][MAX_RUNS];
	struct mthpd_pass_stats st[M_NR];
	bool have_st[M_NR];
};

struct opts {
	const char *mthpd;
	unsigned int runs;
	uint64_t dense_size, sparse_size;
	const char *only;         /* "dense" or "sparse": one scenario */
	unsigned int plan_loop;   /* profiling aid: only N plan 2M passes per child */
	bool samples;             /* also print every sample (stderr) */
};

static void print_header(void)
{
	printf("%-8s %-42s %8s %8s %8s %8s %7s %6s %8s %6s %8s %5s\n", "scenario", "method",
	       "resident", "floor ms", "time ms", "pass ms", "ratio", "%pass", "pm reads",
	       "ioctls", "kpf PFNs", "smaps");
}

/* Rows that only walk: no plan, no kpageflags, no smaps. */
static bool walk_only(enum method m)
{
	return m == M_WALK || m == M_P_TAIL || m == M_P_BATCH;
}

/* @pass_ms: the plan 2M pass, for the share of the rows that are parts of it. */
static void print_row(const char *scen, enum method m, uint64_t resident, double floor_ms,
		      double pass_ms, const struct figures *f, unsigned int runs)
{
	double t = median(f->ms[m], runs), ratios[MAX_RUNS];
	char pass[16] = "-", share[16] = "", reads[24] = "-", ioctls[24] = "-", kpf[24] = "-";
	const char *smaps = "-";

	if (f->have_st[m]) {
		const struct mthpd_pass_stats *st = &f->st[m];

		(void)snprintf(reads, sizeof(reads), "%lu", st->pagemap_reads);
		(void)snprintf(ioctls, sizeof(ioctls), "%lu", st->scan_ioctls);
		if (!walk_only(m)) {
			(void)snprintf(pass, sizeof(pass), "%.2f", median(f->pass_ms[m], runs));
			(void)snprintf(kpf, sizeof(kpf), "%lu", st->kpageflags_pfns);
			smaps = m == M_P_PASS ? "probe" : st->smaps_read ? "yes" : "no";
		}
	}
	if (m == M_WALK || m == M_CPU || m == M_SMAPS)
		(void)snprintf(share, sizeof(share), "%.0f%%", 100.0 * t / pass_ms);
	for (unsigned int i = 0; i < runs; i++)
		ratios[i] = f->ms[m][i] / f->floor_ms[m][i];
	printf("%-8s %-42s %8" PRIu64 " %8.2f %8.2f %8s %6.2fx %6s %8s %6s %8s %5s\n", scen,
	       method_names[m], resident, floor_ms, t, pass, median(ratios, runs), share, reads,
	       ioctls, kpf, smaps);
}

/*
 * mthpd_pagemap_next_range() alone over the bench's mapping: how the pass
 * finds the populated ranges and reads their entries.
 */
static int walk_once(struct mthpd_kif *kif, int pm_fd, const struct layout *l, uint64_t base,
		     const struct mthpd_features *features, struct mthpd_pass_stats *st,
		     double *ret_ms)
{
	struct mthpd_pagemap pm = {.kif = kif, .fd = pm_fd, .use_scan = features->pagemap_scan};
	uint64_t cursor = base, addr, entries[MTHPD_PMD_NR];
	unsigned long n = 0;
	double t0 = now_ms();
	int r;

	while ((r = mthpd_pagemap_next_range(&pm, &cursor, base + l->size, &addr, entries)) > 0)
		n++;
	*ret_ms = now_ms() - t0;
	if (r < 0)
		return r;
	*st = (struct mthpd_pass_stats){
		.ranges = n,
		.pagemap_reads = pm.nr_range_reads,
		.scan_ioctls = pm.nr_scan_ioctls,
	};
	return 0;
}

/* Entries of every populated range, read once, for timing the CPU part alone. */
struct preread {
	uint64_t *addr;
	uint64_t (*entries)[MTHPD_PMD_NR];
	size_t n;
};

static int preread_fill(int pm_fd, const struct layout *l, uint64_t base, struct preread *p)
{
	size_t cap = 0;

	for (uint64_t i = 0; i < l->size / MTHPD_PMD_SIZE; i++)
		cap += range_fill(l, i) != FILL_NONE;
	p->addr = calloc(cap ? cap : 1, sizeof(*p->addr));
	p->entries = calloc(cap ? cap : 1, sizeof(*p->entries));
	p->n = 0;
	if (!p->addr || !p->entries)
		return -ENOMEM;
	for (uint64_t i = 0; i < l->size / MTHPD_PMD_SIZE; i++) {
		uint64_t addr = base + i * MTHPD_PMD_SIZE;

		if (range_fill(l, i) == FILL_NONE)
			continue;
		if (pread_all(pm_fd, p->entries[p->n], sizeof(p->entries[p->n]),
			      (off_t)(addr / MTHPD_PAGE_SIZE * 8)) < 0)
			return -errno;
		p->addr[p->n++] = addr;
	}
	return 0;
}

/*
 * mthpd_scan_range() + mthpd_plan_range() over pre-read entries: the pass's
 * own CPU.  Each range's entries are copied to a local buffer first (not
 * timed), so that they are as hot in the cache as right after the pread.
 */
static int cpu_once(const struct preread *p, const struct mthpd_knobs *knobs, int kpf_fd,
		    struct mthpd_pass_stats *st, double *ret_ms)
{
	static struct mthpd_range_scan scan;
	static struct mthpd_range_plan plan;
	uint64_t entries[MTHPD_PMD_NR];
	struct mthpd_scan_ctx sc;
	unsigned long blocks = 0;
	double total = 0, t0;
	int r;

	mthpd_scan_ctx_init(&sc, kpf_fd, knobs->orders & ((1U << MTHPD_PMD_ORDER) - 1));
	for (size_t i = 0; i < p->n; i++) {
		memcpy(entries, p->entries[i], sizeof(entries));
		t0 = now_ms();
		r = mthpd_scan_range(&sc, p->addr[i], entries, &scan);
		if (r < 0)
			return r;
		mthpd_plan_range(&scan, knobs, NULL, NULL, &plan);
		total += now_ms() - t0;
		blocks += plan.nr_blocks;
	}
	*ret_ms = total;
	*st = (struct mthpd_pass_stats){
		.ranges = p->n,
		.blocks_planned = blocks,
		.kpageflags_pfns = sc.nr_kpageflags_pfns,
	};
	return 0;
}

/* ---- prototypes of the proposed changes (see bench/README.md) ---- */

/*
 * P1 and P2: the populated-range walk of lib/pagemap.c with two changes.
 * P1: read the next 2 MiB range straight away only when the last entry of
 * the range just read is populated (dense memory runs on; a range that ends
 * in a hole is followed by a hole more often than not), and only past what
 * PAGEMAP_SCAN has already reported on.  Otherwise ask PAGEMAP_SCAN.
 * P2: ask it for up to @vec_len regions at once, bounded by @max_pages pages
 * so that a dense stretch is not walked twice, and read exactly the ranges
 * the regions touch.  Everything below walk_end is known: a range there
 * with no region is empty and is not read.
 */
struct proto_walk {
	int fd;
	uint64_t cur, end;
	uint64_t known_end; /* PAGEMAP_SCAN reported every populated page below this */
	unsigned int vec_len;
	uint64_t max_pages;
	struct page_region reg[256];
	unsigned int nreg, ri;
	bool read_ahead;
	unsigned long reads, ioctls;
};

static void proto_walk_init(struct proto_walk *w, int fd, uint64_t start, uint64_t end,
			    unsigned int vec_len, uint64_t max_pages)
{
	*w = (struct proto_walk){
		.fd = fd,
		.cur = start,
		.end = end,
		.known_end = start,
		.vec_len = vec_len < 256 ? vec_len : 256,
		.max_pages = max_pages,
	};
}

static bool entry_populated(uint64_t e)
{
	return e & (PM_PRESENT | PM_SWAP);
}

static int proto_scan(struct proto_walk *w)
{
	struct pm_scan_arg arg = {
		.size = sizeof(arg),
		.start = w->cur,
		.end = w->end,
		.vec = (uint64_t)(uintptr_t)w->reg,
		.vec_len = w->vec_len,
		.max_pages = w->max_pages,
		.category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
		.return_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
	};
	int r;

	w->ioctls++;
	r = ioctl(w->fd, PAGEMAP_SCAN, &arg);
	if (r < 0)
		return -errno;
	w->nreg = (unsigned int)r;
	w->ri = 0;
	/* A walk that stopped early reports where; one that did not, the end. */
	w->known_end = arg.walk_end > w->cur ? arg.walk_end : w->end;
	return 0;
}

/* Returns 1 with the next populated range, 0 at the end, -errno. */
static int proto_walk_next(struct proto_walk *w, uint64_t *ret_addr, uint64_t *entries)
{
	while (w->cur < w->end) {
		uint64_t addr;
		bool any = false;
		int r;

		while (w->ri < w->nreg && w->reg[w->ri].end <= w->cur)
			w->ri++;
		if (w->ri < w->nreg) {
			addr = w->reg[w->ri].start > w->cur ? w->reg[w->ri].start : w->cur;
			addr &= ~(MTHPD_PMD_SIZE - 1);
		} else if ((w->known_end & ~(MTHPD_PMD_SIZE - 1)) > w->cur) {
			/* Reported empty up to known_end: skip without reading. */
			w->cur = w->known_end & ~(MTHPD_PMD_SIZE - 1);
			w->read_ahead = false;
			continue;
		} else if (w->read_ahead) {
			addr = w->cur;
		} else {
			r = proto_scan(w);
			if (r < 0)
				return r;
			if (w->nreg == 0 && w->known_end >= w->end)
				break;
			continue;
		}
		w->reads++;
		if (pread_all(w->fd, entries, MTHPD_PMD_NR * sizeof(*entries),
			      (off_t)(addr / MTHPD_PAGE_SIZE * 8)) < 0)
			return -errno;
		w->cur = addr + MTHPD_PMD_SIZE;
		for (unsigned int i = 0; i < MTHPD_PMD_NR && !any; i++)
			any = entry_populated(entries[i]);
		w->read_ahead = entry_populated(entries[MTHPD_PMD_NR - 1]);
		if (any) {
			*ret_addr = addr;
			return 1;
		}
	}
	w->cur = w->end;
	return 0;
}

static int proto_walk_once(const struct layout *l, uint64_t base, int pm_fd,
			   unsigned int vec_len, uint64_t max_pages, struct mthpd_pass_stats *st,
			   double *ret_ms)
{
	struct proto_walk w = {0};
	uint64_t addr, entries[MTHPD_PMD_NR];
	unsigned long n = 0;
	double t0 = now_ms();
	int r;

	proto_walk_init(&w, pm_fd, base, base + l->size, vec_len, max_pages);
	while ((r = proto_walk_next(&w, &addr, entries)) > 0)
		n++;
	*ret_ms = now_ms() - t0;
	if (r < 0)
		return r;
	*st = (struct mthpd_pass_stats){.ranges = n, .pagemap_reads = w.reads, .scan_ioctls = w.ioctls};
	return 0;
}

/*
 * P3: the 2M-only verdict from whole-bitmap counts.  collapse_scan_pmd()
 * counts in PTE order and stops at the first limit exceeded; the counts only
 * grow, so it stops at all only if a final count exceeds its limit, and if
 * exactly one does, that one is the reason.  Only with two or more exceeded
 * does the PTE order matter: then false, and the caller uses plan.c.
 */
static bool plan_fast_2m(const struct mthpd_range_scan *s, const struct mthpd_knobs *k,
			 enum mthpd_scan_result *ret)
{
	unsigned int none = 0, unmapped = 0, shared = 0, exceeded;
	bool guard = false;

	if (k->orders != 1U << MTHPD_PMD_ORDER)
		return false;
	if (s->pmd_mapped) {
		*ret = MTHPD_SCAN_PMD_MAPPED;
		return true;
	}
	for (unsigned int w = 0; w < MTHPD_BITMAP_WORDS; w++) {
		uint64_t occ = s->occupied[w], nonpresent = (s->swap[w] | s->guard[w]) & ~occ;

		none += (unsigned int)__builtin_popcountll(~(occ | nonpresent));
		unmapped += (unsigned int)__builtin_popcountll(nonpresent);
		shared += (unsigned int)__builtin_popcountll(s->shared[w] & occ);
		guard = guard || s->guard[w];
	}
	exceeded = (none > k->max_ptes_none ? 1U : 0U) + (unmapped > k->max_ptes_swap ? 1U : 0U) +
		   (shared > k->max_ptes_shared ? 1U : 0U);
	if (exceeded > 1)
		return false;
	if (none > k->max_ptes_none)
		*ret = MTHPD_SCAN_EXCEED_NONE_PTE;
	else if (unmapped > k->max_ptes_swap)
		*ret = MTHPD_SCAN_EXCEED_SWAP_PTE;
	else if (shared > k->max_ptes_shared)
		*ret = MTHPD_SCAN_EXCEED_SHARED_PTE;
	else
		*ret = guard ? MTHPD_SCAN_PTE_NON_PRESENT : MTHPD_SCAN_SUCCEED;
	return true;
}

/* Untimed: P3 gives plan.c's verdict on every range.  Returns the mismatches. */
static unsigned long plan_fast_check(const struct preread *p, const struct mthpd_knobs *knobs,
				     int kpf_fd)
{
	static struct mthpd_range_scan scan;
	static struct mthpd_range_plan plan;
	struct mthpd_scan_ctx sc;
	unsigned long bad = 0;
	enum mthpd_scan_result v;

	mthpd_scan_ctx_init(&sc, kpf_fd, false);
	for (size_t i = 0; i < p->n; i++) {
		if (mthpd_scan_range(&sc, p->addr[i], p->entries[i], &scan) < 0)
			return ULONG_MAX;
		mthpd_plan_range(&scan, knobs, NULL, NULL, &plan);
		if (plan_fast_2m(&scan, knobs, &v) &&
		    (plan.nr_blocks != 1 || plan.blocks[0].reason != v))
			bad++;
	}
	return bad;
}

static int proto_cpu_once(const struct preread *p, const struct mthpd_knobs *knobs, int kpf_fd,
			  double *ret_ms)
{
	static struct mthpd_range_scan scan;
	static struct mthpd_range_plan plan;
	uint64_t entries[MTHPD_PMD_NR];
	struct mthpd_scan_ctx sc;
	enum mthpd_scan_result v;
	double total = 0, t0;
	int r;

	mthpd_scan_ctx_init(&sc, kpf_fd, false);
	for (size_t i = 0; i < p->n; i++) {
		memcpy(entries, p->entries[i], sizeof(entries));
		t0 = now_ms();
		r = mthpd_scan_range(&sc, p->addr[i], entries, &scan);
		if (r < 0)
			return r;
		if (!plan_fast_2m(&scan, knobs, &v))
			mthpd_plan_range(&scan, knobs, NULL, NULL, &plan);
		total += now_ms() - t0;
	}
	*ret_ms = total;
	return 0;
}

/*
 * P4: VM_NOHUGEPAGE without smaps.  MADV_COLLAPSE on a 4 KiB range holds no
 * whole PMD, so it collapses nothing; the kernel still runs its VMA check
 * first and answers EINVAL where it refuses the VMA (VM_NOHUGEPAGE among
 * others).  Returns 1 eligible, 0 refused, -errno.
 */
static int collapse_probe(int pidfd, uint64_t vma_start)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)vma_start, .iov_len = MTHPD_PAGE_SIZE};
	long r = syscall(SYS_process_madvise, pidfd, &iov, 1UL, MADV_COLLAPSE, 0U);

	if (r >= 0)
		return 1;
	return errno == EINVAL ? 0 : -errno;
}

static int proto_probe_once(pid_t pid, double *ret_ms)
{
	struct mthpd_kif kif = {.proc_fd = -1, .sys_fd = -1};
	struct mthpd_vma *v = NULL;
	size_t n = 0;
	double t0;
	int r, pidfd;

	r = mthpd_kif_linux_init(NULL, NULL, &kif, NULL);
	if (r < 0)
		return r;
	r = mthpd_vmas_read(&kif, pid, true, &v, &n);
	mthpd_kif_done(&kif);
	if (r < 0)
		return r;
	t0 = now_ms();
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0U);
	if (pidfd < 0) {
		r = -errno;
	} else {
		for (size_t i = 0; i < n && r >= 0; i++)
			r = collapse_probe(pidfd, v[i].start);
		(void)close(pidfd);
	}
	*ret_ms = now_ms() - t0;
	free(v);
	return r < 0 ? r : 0;
}

/*
 * P1-P4 in one pass over every eligible VMA, as mthpd_target_pass() would
 * run with them: VMAs from PROCMAP_QUERY, the P2 walk, scan.c, the P3
 * verdict (plan.c where it does not decide), and the P4 probe once per VMA
 * that has something to collapse.  Timed like the "pass ms" of plan 2M.
 */
static int proto_pass_once(pid_t pid, int pm_fd, int kpf_fd, const struct mthpd_knobs *knobs,
			   struct mthpd_pass_stats *st, double *ret_ms)
{
	static struct mthpd_range_scan scan;
	static struct mthpd_range_plan plan;
	struct mthpd_kif kif = {.proc_fd = -1, .sys_fd = -1};
	struct mthpd_pass_stats o = {0};
	struct mthpd_vma *v = NULL;
	struct mthpd_scan_ctx sc;
	struct proto_walk w = {0};
	uint64_t addr, entries[MTHPD_PMD_NR];
	size_t n = 0;
	int r, pidfd = -1;
	double t0;

	r = mthpd_kif_linux_init(NULL, NULL, &kif, NULL);
	if (r < 0)
		return r;
	t0 = now_ms();
	mthpd_scan_ctx_init(&sc, kpf_fd, false);
	r = mthpd_vmas_read(&kif, pid, true, &v, &n);
	if (r < 0)
		goto out;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0U);
	if (pidfd < 0) {
		r = -errno;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		bool probed = false, refused = false;

		proto_walk_init(&w, pm_fd, v[i].start, v[i].end, 256, 4096);
		while ((r = proto_walk_next(&w, &addr, entries)) > 0) {
			enum mthpd_scan_result verdict;
			bool collapse;

			o.ranges++;
			r = mthpd_scan_range(&sc, addr, entries, &scan);
			if (r < 0)
				goto out;
			if (plan_fast_2m(&scan, knobs, &verdict)) {
				collapse = verdict == MTHPD_SCAN_SUCCEED;
			} else {
				mthpd_plan_range(&scan, knobs, NULL, NULL, &plan);
				collapse = plan.nr_collapsed > 0;
			}
			if (collapse && !probed) {
				r = collapse_probe(pidfd, v[i].start);
				if (r < 0)
					goto out;
				probed = true;
				refused = r == 0;
			}
			o.blocks_planned += collapse && !refused;
		}
		o.pagemap_reads += w.reads;
		o.scan_ioctls += w.ioctls;
		if (r < 0)
			goto out;
	}
	r = 0;
out:
	*ret_ms = now_ms() - t0;
	if (pidfd >= 0)
		(void)close(pidfd);
	free(v);
	mthpd_kif_done(&kif);
	o.vmas = n;
	o.kpageflags_pfns = sc.nr_kpageflags_pfns;
	*st = o;
	return r;
}

/* What measure() holds open while it measures one child. */
struct session {
	pid_t pid;
	int pm_fd;
	int kpf_fd;
	struct mthpd_kif kif;
	struct mthpd_features features;
	struct mthpd_knobs knobs;
	struct preread pre;
};

static void session_end(struct session *s)
{
	if (s->pm_fd >= 0)
		(void)close(s->pm_fd);
	if (s->kpf_fd >= 0)
		(void)close(s->kpf_fd);
	mthpd_kif_done(&s->kif);
	free(s->pre.addr);
	free(s->pre.entries);
	if (s->pid > 0)
		reap_child(s->pid);
}

/* The floor once: 512 pagemap entries of each resident range. */
static int floor_sample(const struct layout *l, uint64_t base, struct session *s,
			uint64_t *xsink, double *ret_ms)
{
	double t0 = now_ms();

	if (floor_read(s->pm_fd, l, base, xsink) < 0)
		return -errno;
	*ret_ms = now_ms() - t0;
	return 0;
}

/*
 * One method once, into sample slot @i, paired with a floor measured just
 * before it: the ratio of the pair does not drift with the host's speed.
 */
static int measure_one(const struct opts *op, const struct layout *l, uint64_t base,
		       struct session *s, struct figures *f, enum method m, unsigned int i,
		       uint64_t *xsink)
{
	static const uint32_t orders_2m = 1U << MTHPD_PMD_ORDER;
	static const uint32_t orders_64k = (1U << MTHPD_PMD_ORDER) | (1U << 4);
	struct plan_run pr;
	double ms = 0;
	int r;

	r = floor_sample(l, base, s, xsink, &f->floor_ms[m][i]);
	if (r < 0)
		return r;
	switch (m) {
	case M_FLOOR:
		r = floor_sample(l, base, s, xsink, &ms);
		break;
	case M_PLAN_2M:
	case M_PLAN_64K:
	case M_PLAN_FALLBACK:
		r = plan_once(s->pid, m == M_PLAN_64K ? orders_64k : orders_2m,
			      m == M_PLAN_FALLBACK, null_sink, NULL, &pr);
		if (r < 0)
			break;
		ms = pr.total_ms;
		f->pass_ms[m][i] = pr.pass_ms;
		f->st[m] = pr.st;
		f->have_st[m] = true;
		break;
	case M_WALK:
		r = walk_once(&s->kif, s->pm_fd, l, base, &s->features, &f->st[m], &ms);
		f->have_st[m] = true;
		break;
	case M_CPU:
		r = cpu_once(&s->pre, &s->knobs, s->kpf_fd, &f->st[m], &ms);
		break;
	case M_SMAPS:
		r = smaps_once(s->pid, &ms);
		break;
	case M_CLI:
	case M_CLI_FALLBACK:
		r = cli_once(op->mthpd, s->pid,
			     m == M_CLI_FALLBACK ? "pagemap_scan,procmap_query" : NULL, &ms);
		if (r != 0) {
			fprintf(stderr, "bench-scan: %s%s plan --pid %d exited %d\n",
				m == M_CLI_FALLBACK ? "MTHPD_DISABLE=... " : "", op->mthpd,
				(int)s->pid, r);
			r = -ECHILD;
		}
		break;
	case M_FULL: {
		double t0 = now_ms();

		r = full_read(s->pm_fd, l, base, xsink) < 0 ? -errno : 0;
		ms = now_ms() - t0;
		break;
	}
	case M_P_TAIL:
	case M_P_BATCH:
		r = proto_walk_once(l, base, s->pm_fd, m == M_P_TAIL ? 1 : 256,
				    m == M_P_TAIL ? 1 : 4096, &f->st[m], &ms);
		f->have_st[m] = true;
		break;
	case M_P_CPU:
		r = proto_cpu_once(&s->pre, &s->knobs, s->kpf_fd, &ms);
		break;
	case M_P_PROBE:
		r = proto_probe_once(s->pid, &ms);
		break;
	case M_P_PASS:
		r = proto_pass_once(s->pid, s->pm_fd, s->kpf_fd, &s->knobs, &f->st[m], &ms);
		f->pass_ms[m][i] = ms;
		f->have_st[m] = true;
		break;
	case M_NR:
		break;
	}
	f->ms[m][i] = ms;
	return r;
}

/* Lays out one child, runs every method @runs times (after a warm-up round), prints. */
static int measure(const struct opts *op, const struct layout *l, bool first)
{
	static struct figures f;
	struct session s = {.pm_fd = -1, .kpf_fd = -1, .kif = {.proc_fd = -1, .sys_fd = -1}};
	uint64_t base = 0, resident = resident_pages(l), xsink = 0, large = 0;
	const char *failed = NULL;
	double touch_ms, floor_ms, pass_ms;
	struct plan_run pr;
	int r;

	memset(&f, 0, sizeof(f));
	fprintf(stderr, "bench-scan: %s: touching %" PRIu64 " pages in a %" PRIu64
			" MiB mapping...\n",
		l->name, resident, l->size / MIB);
	s.pid = spawn_child(l, &base, &touch_ms);
	if (s.pid < 0) {
		fprintf(stderr, "bench-scan: %s: the child could not map or touch its memory\n",
			l->name);
		return -1;
	}
	s.pm_fd = open_pagemap(s.pid);
	if (s.pm_fd < 0) {
		r = -errno;
		goto fail;
	}
	r = mthpd_kif_linux_init(NULL, NULL, &s.kif, NULL);
	if (r < 0)
		goto fail;
	r = mthpd_features_probe(&s.kif, &s.features);
	if (r < 0)
		goto fail;
	r = mthpd_knobs_read_sysfs(&s.kif, 7, &s.knobs, &failed);
	if (r < 0)
		goto fail;
	s.knobs.orders = 1U << MTHPD_PMD_ORDER;
	s.kpf_fd = s.kif.ops->open_proc(&s.kif, "kpageflags", O_RDONLY);
	if (s.kpf_fd < 0) {
		r = s.kpf_fd;
		goto fail;
	}
	r = preread_fill(s.pm_fd, l, base, &s.pre);
	if (r < 0)
		goto fail;

	/* Untimed: the layout is what it should be, in 4 KiB pages. */
	r = plan_once(s.pid, (1U << MTHPD_PMD_ORDER) | (1U << 4), false, folio_sink, &large, &pr);
	if (r < 0)
		goto fail;
	fprintf(stderr, "bench-scan: %s: child %d touched in %.1f s; Rss %ld kB, "
			"AnonHugePages %ld kB, pages in large folios %" PRIu64 "\n",
		l->name, (int)s.pid, touch_ms / 1e3, rollup_kb(s.pid, "Rss"),
		rollup_kb(s.pid, "AnonHugePages"), large);
	if (large)
		fprintf(stderr, "bench-scan: warning: %s is not all 4 KiB pages; the figures "
				"are not those of 4K memory\n",
			l->name);
	if (plan_fast_check(&s.pre, &s.knobs, s.kpf_fd) != 0)
		fprintf(stderr, "bench-scan: warning: %s: the P3 prototype disagrees with "
				"plan.c; its figures do not count\n",
			l->name);

	if (op->plan_loop) {
		/* Profiling aid: nothing but plan passes, e.g. under perf record. */
		double t0 = now_ms();

		for (unsigned int k = 0; k < op->plan_loop; k++) {
			r = plan_once(s.pid, 1U << MTHPD_PMD_ORDER, false, null_sink, NULL, &pr);
			if (r < 0)
				goto fail;
		}
		printf("%s: %u plan 2M passes, %.3f ms each\n", l->name, op->plan_loop,
		       (now_ms() - t0) / op->plan_loop);
		session_end(&s);
		return 0;
	}

	for (unsigned int run = 0; run <= op->runs; run++) {
		/* Round 0 warms caches and page tables up and is overwritten. */
		for (enum method m = 0; m < M_NR; m++) {
			if (m == M_FULL && !l->sparse)
				continue; /* the same reads as the floor */
			r = measure_one(op, l, base, &s, &f, m, run ? run - 1 : 0, &xsink);
			if (r < 0)
				goto fail;
		}
	}

	/* Untimed: nothing above (the P4 probes included) changed the pages. */
	large = 0;
	r = plan_once(s.pid, (1U << MTHPD_PMD_ORDER) | (1U << 4), false, folio_sink, &large, &pr);
	if (r < 0)
		goto fail;
	if (large || rollup_kb(s.pid, "AnonHugePages") != 0)
		fprintf(stderr, "bench-scan: warning: %s: %" PRIu64 " pages are in large folios "
				"after the runs\n",
			l->name, large);

	floor_ms = median(f.floor_ms[M_PLAN_2M], op->runs);
	pass_ms = median(f.pass_ms[M_PLAN_2M], op->runs);
	if (first)
		print_header();
	for (enum method m = 0; m < M_NR; m++) {
		if (m == M_FULL && !l->sparse)
			continue; /* the same reads as the floor */
		if (m == M_P_TAIL)
			printf("%-8s -- prototypes of proposed lib/ changes (bench code, see "
			       "bench/README.md) --\n",
			       l->name);
		print_row(l->name, m, resident, floor_ms, pass_ms, &f, op->runs);
		if (op->samples) {
			fprintf(stderr, "%s %s:", l->name, method_names[m]);
			for (unsigned int i = 0; i < op->runs; i++)
				fprintf(stderr, " %.2f", f.ms[m][i]);
			fputc('\n', stderr);
		}
	}
	fflush(stdout);
	session_end(&s);
	return xsink == 42 ? 1 : 0; /* keeps the reads from being optimised out */
fail:
	if (r != -ECHILD)
		fprintf(stderr, "bench-scan: %s: measuring child %d failed: %s\n", l->name,
			(int)s.pid, strerror(-r));
	session_end(&s);
	return -1;
}

static void usage(FILE *f)
{
	fputs("Usage: bench-scan --mthpd PATH [--runs N] [--dense-mib N] [--sparse-mib N]\n"
	      "                  [--only dense|sparse] [--samples] [--plan-loop N]\n"
	      "Prints the cost of `mthpd plan` next to the raw pagemap read of the same\n"
	      "resident pages (median of N runs, default 7).  Needs root.\n"
	      "  --dense-mib N   size of the dense child (default 4096)\n"
	      "  --sparse-mib N  size of the sparse mapping (default 16384)\n"
	      "  --only S        measure one scenario\n"
	      "  --samples       print every sample to stderr\n"
	      "  --plan-loop N   profiling aid: only N in-process plan 2M passes per child\n"
	      "                  (e.g. under perf record -g)\n",
	      f);
}

static int parse_mib(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v == 0 || v % 2 || v > 1024 * 1024)
		return -1;
	*ret = v * MIB;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"mthpd", required_argument, NULL, 'm'},
		{"runs", required_argument, NULL, 'r'},
		{"dense-mib", required_argument, NULL, 'd'},
		{"sparse-mib", required_argument, NULL, 's'},
		{"only", required_argument, NULL, 'o'},
		{"plan-loop", required_argument, NULL, 'l'},
		{"samples", no_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	struct opts op = {.mthpd = NULL, .runs = 7, .dense_size = 4 * GIB, .sparse_size = 16 * GIB};
	struct sigaction sa = {.sa_handler = on_fatal_signal};
	int o, status = 0;

	while ((o = getopt_long(argc, argv, "m:r:d:s:o:l:Sh", lo, NULL)) >= 0) {
		switch (o) {
		case 'm':
			op.mthpd = optarg;
			break;
		case 'r':
			op.runs = (unsigned int)strtoul(optarg, NULL, 10);
			if (op.runs == 0 || op.runs >= MAX_RUNS) {
				fprintf(stderr, "bench-scan: --runs: 1..%d\n", MAX_RUNS - 1);
				return 2;
			}
			break;
		case 'd':
			if (parse_mib(optarg, &op.dense_size) < 0) {
				fprintf(stderr, "bench-scan: --dense-mib: an even number of MiB\n");
				return 2;
			}
			break;
		case 's':
			if (parse_mib(optarg, &op.sparse_size) < 0) {
				fprintf(stderr, "bench-scan: --sparse-mib: an even number of MiB\n");
				return 2;
			}
			break;
		case 'o':
			if (strcmp(optarg, "dense") && strcmp(optarg, "sparse")) {
				fprintf(stderr, "bench-scan: --only: dense or sparse\n");
				return 2;
			}
			op.only = optarg;
			break;
		case 'l':
			op.plan_loop = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'S':
			op.samples = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!op.mthpd || optind < argc) {
		usage(stderr);
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "bench-scan: needs root (pagemap PFNs, /proc/kpageflags)\n");
		return 77;
	}
	if (access(op.mthpd, X_OK) < 0) {
		fprintf(stderr, "bench-scan: %s: %s\n", op.mthpd, strerror(errno));
		return 2;
	}

	if (atexit(kill_children) != 0)
		return 1;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGINT, &sa, NULL);
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGHUP, &sa, NULL);
	(void)sigaction(SIGQUIT, &sa, NULL);
	(void)sigaction(SIGSEGV, &sa, NULL);
	(void)sigaction(SIGABRT, &sa, NULL);
	(void)sigaction(SIGBUS, &sa, NULL);

	const struct layout layouts[] = {
		{.name = "dense", .size = op.dense_size, .sparse = false},
		{.name = "sparse", .size = op.sparse_size, .sparse = true},
	};
	printf("median of %u runs (after 1 warm-up); dense: %" PRIu64 " MiB all written in 4K "
	       "pages; sparse: %" PRIu64 " MiB MAP_NORESERVE, every 64th 2M range written, "
	       "1 page in every 7th\n",
	       op.runs, op.dense_size / MIB, op.sparse_size / MIB);
	bool first = true;

	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		if (op.only && strcmp(op.only, layouts[i].name) != 0)
			continue;
		if (measure(&op, &layouts[i], first) < 0)
			status = 1;
		first = false;
	}
	kill_children();
	return status;
}
