/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-scan: what one `plan` of a process costs, next to the floor, the raw
 * pagemap read of the same resident pages.  `make bench` runs it through
 * bench/run; bench/README.md has the figures and how to read them.
 *
 * Three children are laid out and touched once, one after the other, then
 * measured repeatedly (median of --runs, after one warm-up round).  Each is
 * this program exec'd again (--child), so that its mm holds nothing of the
 * bench's own memory (a forked child shared the bench's heap, which showed
 * up as an extra VMA of non-exclusive pages):
 *   dense   4 GiB written in 4 KiB pages (1048576 resident pages)
 *   half    4 GiB in which every other 16-page (64 KiB) block is written:
 *           each 2 MiB range is half full, planned 2M,64K with
 *           max_ptes_none 0, so 2M misses, the order walk tries 64K blocks
 *           and the kpageflags of the occupied pages must be read
 *   sparse  a 16 GiB MAP_NORESERVE mapping: every 64th 2 MiB range fully
 *           written, one page in every 7th range (1.6% resident)
 *
 * Rows, for each child (a row only where it says so):
 *   floor        pread of /proc/CHILD/pagemap, 4 KiB (512 entries) for each
 *                populated 2 MiB range and nothing else (the bench laid the
 *                ranges out, so it knows them)
 *   plan         in-process, as `mthpd plan` does it today: kif init, feature
 *                probe, knobs, kpageflags open, mthpd_target_open() without a
 *                pidfd and then a pidfd_open() of the child (daemon/main.c
 *                does the same), mthpd_target_pass() with a sink that does
 *                nothing; "pass ms" is the pass alone.  dense and sparse
 *                plan 2M, half plans 2M,64K with max_ptes_none 0.
 *                Its parts, each timed alone with lib's own functions:
 *                the VMA list (mthpd_vmas_read), the populated-range walk
 *                (mthpd_pagemap_next_range over every VMA, with
 *                mthpd_pagemap_reset before each), scan.c + plan.c on entries
 *                read beforehand, (half) the kpageflags reads and re-plan of
 *                the ranges whose walk tried a block below 2M, and the
 *                refusal probe: one 4 KiB MADV_COLLAPSE per VMA with memory
 *   smaps fallback  dense, sparse: the same plan with no pidfd (t.pidfd = -1),
 *                so VM_NOHUGEPAGE comes from /proc/PID/smaps
 *   plan 2M,64K  dense, sparse: a size below 2M with khugepaged's knobs
 *   plan 2M      half: the same knobs without the size below 2M
 *   no PAGEMAP_SCAN/PROCMAP_QUERY  dense, sparse: the fallbacks of older kernels
 *   CLI          `mthpd plan --pid CHILD --json >/dev/null`, fork to wait (with
 *                the scenario's --sizes and --max-ptes-none), dense and
 *                sparse also with MTHPD_DISABLE=pagemap_scan,procmap_query;
 *                and the same command on a tiny idle process (a re-exec of
 *                this program, with no eligible anonymous range): the CLI's
 *                fixed cost of exec, feature probe and output.  The derived
 *                row subtracts it sample by sample.
 *   whole mapping  sparse: pread of the pagemap of the whole mapping
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
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
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
#include "vmas.h"

#define MAX_RUNS 64
#define MAX_CHILDREN 4
#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)
#define ORDERS_2M (1U << MTHPD_PMD_ORDER)
#define ORDERS_2M_64K ((1U << MTHPD_PMD_ORDER) | (1U << 4))
#define CHILD_ARG "--child"

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

enum range_fill { FILL_NONE, FILL_FULL, FILL_ONE, FILL_HALF };

enum scenario { SC_DENSE, SC_HALF, SC_SPARSE };

struct layout {
	const char *name;
	enum scenario kind;
	uint64_t size;            /* bytes, a multiple of 2 MiB */
	uint32_t orders;          /* sizes of the scenario's plan */
	int max_ptes_none;        /* -1: khugepaged's sysfs value */
	const char *cli_sizes;    /* the same, as CLI options (NULL: not given) */
	const char *cli_none;
};

static enum range_fill range_fill(const struct layout *l, uint64_t i)
{
	switch (l->kind) {
	case SC_DENSE:
		return FILL_FULL;
	case SC_HALF:
		return FILL_HALF;
	case SC_SPARSE:
		break;
	}
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

/* FILL_HALF: pages 0-15 written, 16-31 not, 32-47 written... */
static bool half_page_written(uint64_t p)
{
	return (p / 16) % 2 == 0;
}

static uint64_t resident_pages(const struct layout *l)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < l->size / MTHPD_PMD_SIZE; i++) {
		switch (range_fill(l, i)) {
		case FILL_FULL:
			n += MTHPD_PMD_NR;
			break;
		case FILL_HALF:
			n += MTHPD_PMD_NR / 2;
			break;
		case FILL_ONE:
			n++;
			break;
		case FILL_NONE:
			break;
		}
	}
	return n;
}

static double now_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/*
 * In the child, which is this program exec'd again (`bench-scan --child KIND
 * MIB PARENT`), so that its mm holds none of the bench's own memory: map,
 * align to 2 MiB, touch, write the base to stdout, wait to be killed.
 * KIND "idle" maps nothing: the tiny process for the CLI's fixed cost.
 */
static _Noreturn void child_main(const char *kind, const char *mib, const char *parent)
{
	struct layout l = {.name = kind, .size = strtoull(mib, NULL, 10) * MIB};
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	uint64_t base = 0, head, tail;
	char *map;

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != (pid_t)strtol(parent, NULL, 10))
		_exit(1); /* the bench died before the prctl */
	if (strcmp(kind, "idle") == 0)
		goto report;
	l.kind = strcmp(kind, "dense") == 0  ? SC_DENSE
		 : strcmp(kind, "half") == 0 ? SC_HALF
					     : SC_SPARSE;
	if (l.kind == SC_SPARSE)
		flags |= MAP_NORESERVE;
	map = mmap(NULL, l.size + MTHPD_PMD_SIZE, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (map == MAP_FAILED)
		_exit(2);
	/* Trim to exactly [base, base + size): every 2 MiB range is whole. */
	base = ((uint64_t)(uintptr_t)map + MTHPD_PMD_SIZE - 1) & ~(MTHPD_PMD_SIZE - 1);
	head = base - (uint64_t)(uintptr_t)map;
	tail = MTHPD_PMD_SIZE - head;
	if (head)
		(void)munmap(map, head);
	if (tail)
		(void)munmap((char *)(uintptr_t)(base + l.size), tail);

	for (uint64_t i = 0; i < l.size / MTHPD_PMD_SIZE; i++) {
		volatile char *r = (volatile char *)(uintptr_t)(base + i * MTHPD_PMD_SIZE);

		switch (range_fill(&l, i)) {
		case FILL_FULL:
			for (uint64_t p = 0; p < MTHPD_PMD_NR; p++)
				r[p * MTHPD_PAGE_SIZE] = 1;
			break;
		case FILL_HALF:
			for (uint64_t p = 0; p < MTHPD_PMD_NR; p++)
				if (half_page_written(p))
					r[p * MTHPD_PAGE_SIZE] = 1;
			break;
		case FILL_ONE:
			r[one_page_index(i) * MTHPD_PAGE_SIZE] = 1;
			break;
		case FILL_NONE:
			break;
		}
	}
report:
	if (write(STDOUT_FILENO, &base, sizeof(base)) != (ssize_t)sizeof(base))
		_exit(3);
	(void)close(STDOUT_FILENO);
	for (;;)
		(void)pause();
}

/*
 * Starts a child of @kind ("dense", "half", "sparse" or "idle") over @size
 * bytes.  Returns its pid and its base address once it has touched its
 * memory, or -1.
 */
static pid_t spawn_child(const char *kind, uint64_t size, uint64_t *ret_base,
			 double *ret_touch_ms)
{
	char self[24], mib[24];
	int p[2];
	double t0 = now_ms();
	pid_t pid;
	ssize_t n;

	(void)snprintf(self, sizeof(self), "%d", (int)getpid());
	(void)snprintf(mib, sizeof(mib), "%" PRIu64, size / MIB);
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
		/* dup2 leaves the copy without O_CLOEXEC: the child's stdout. */
		if (dup2(p[1], STDOUT_FILENO) < 0)
			_exit(126);
		execl("/proc/self/exe", "bench-scan", CHILD_ARG, kind, mib, self, (char *)NULL);
		_exit(127);
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

/* How one in-process plan is run. */
struct plan_cfg {
	uint32_t orders;
	int max_ptes_none;  /* -1: sysfs */
	bool fallback;      /* features.pagemap_scan and .procmap_query off */
	bool pidfd;         /* pidfd_open the target, as `mthpd plan` does; else smaps */
};

struct plan_run {
	double total_ms; /* init + probe + knobs + open + pass + close */
	double pass_ms;  /* mthpd_target_pass() alone */
	bool had_pidfd;
	struct mthpd_pass_stats st;
};

/*
 * One in-process plan, as `mthpd plan --pid PID` does it minus the output
 * (daemon/main.c run(): target open, then a pidfd of the target for the
 * refusal probe).  Returns 0 or -errno.
 */
static int plan_once(pid_t pid, const struct plan_cfg *c, struct plan_run *ret)
{
	struct mthpd_kif kif = {.proc_fd = -1, .sys_fd = -1};
	struct mthpd_features features;
	struct mthpd_knobs knobs;
	struct mthpd_target t;
	const char *failed = NULL;
	double t0, t1 = 0, t2 = 0;
	int kpf = -1, r;

	t0 = now_ms();
	r = mthpd_kif_linux_init(NULL, NULL, &kif, NULL);
	if (r < 0)
		return r;
	r = mthpd_knobs_read_sysfs(&kif, 7, &knobs, &failed);
	if (r < 0)
		goto out_kif;
	knobs.orders = c->orders;
	if (c->max_ptes_none >= 0)
		knobs.max_ptes_none = (unsigned int)c->max_ptes_none;
	r = mthpd_target_open(&kif, pid, false, &t);
	if (r < 0)
		goto out_kif;
	if (c->pidfd) {
		int fd = kif.ops->pidfd_open(&kif, pid);

		t.pidfd = fd >= 0 ? fd : -1;
	}
	ret->had_pidfd = t.pidfd >= 0;
	r = mthpd_features_probe(&kif, &features);
	if (r < 0)
		goto out_target;
	if (c->fallback) {
		features.pagemap_scan = false;
		features.procmap_query = false;
	}
	kpf = kif.ops->open_proc(&kif, "kpageflags", O_RDONLY);
	if (kpf < 0) {
		r = kpf;
		goto out_target;
	}

	struct mthpd_pass_opts o = {
		.knobs = &knobs,
		.features = &features,
		.kpageflags_fd = kpf,
		.collapse = false,
	};
	t1 = now_ms();
	r = mthpd_target_pass(&kif, &t, &o, null_sink, NULL, &ret->st);
	t2 = now_ms();
	(void)close(kpf);
out_target:
	mthpd_target_close(&t);
out_kif:
	mthpd_kif_done(&kif);
	if (r < 0)
		return r;
	ret->pass_ms = t2 - t1;
	ret->total_ms = now_ms() - t0;
	return 0;
}

/*
 * `mthpd plan --pid PID --json [--sizes S] [--max-ptes-none N] > /dev/null`,
 * fork to wait.  Returns the exit status.
 */
static int cli_once(const char *mthpd, pid_t pid, const struct layout *l, const char *disable,
		    double *ret_ms)
{
	char pidbuf[16];
	const char *argv[12];
	double t0 = now_ms();
	unsigned int n = 0;
	pid_t c;
	int status;

	(void)snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	argv[n++] = mthpd;
	argv[n++] = "plan";
	argv[n++] = "--pid";
	argv[n++] = pidbuf;
	argv[n++] = "--json";
	if (l->cli_sizes) {
		argv[n++] = "--sizes";
		argv[n++] = l->cli_sizes;
	}
	if (l->cli_none) {
		argv[n++] = "--max-ptes-none";
		argv[n++] = l->cli_none;
	}
	argv[n] = NULL;
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
		/* execv's argv is char *const[]; nothing writes through it. */
		execv(mthpd, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	while (waitpid(c, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	*ret_ms = now_ms() - t0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- what the pass is made of, with lib's functions ---- */

/* Every populated range of every eligible VMA, read once (untimed). */
struct preread {
	uint64_t *addr;
	uint64_t (*entries)[MTHPD_PMD_NR];
	size_t n, cap;
};

/* What measure() holds open while it measures one child. */
struct session {
	const struct layout *l;
	pid_t pid;
	uint64_t base;
	int pm_fd;
	int kpf_fd;
	int pidfd;
	struct mthpd_kif kif;
	struct mthpd_features features;
	struct mthpd_knobs knobs;      /* the scenario's */
	struct mthpd_vma *vmas;
	bool *vma_has_memory;
	size_t nvmas;
	struct preread pre;
};

static int preread_add(struct preread *p, uint64_t addr, const uint64_t *entries)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 1024;
		uint64_t *a = realloc(p->addr, cap * sizeof(*p->addr));
		uint64_t(*e)[MTHPD_PMD_NR];

		if (!a)
			return -ENOMEM;
		p->addr = a;
		e = realloc(p->entries, cap * sizeof(*p->entries));
		if (!e)
			return -ENOMEM;
		p->entries = e;
		p->cap = cap;
	}
	p->addr[p->n] = addr;
	memcpy(p->entries[p->n], entries, sizeof(p->entries[p->n]));
	p->n++;
	return 0;
}

/*
 * Lists the eligible VMAs and walks them once (untimed): which have memory
 * (the refusal probe's VMAs) and the entries of every populated range.
 */
static int session_prepare(struct session *s)
{
	struct mthpd_pagemap pm = {.kif = &s->kif, .fd = s->pm_fd,
				   .use_scan = s->features.pagemap_scan};
	uint64_t entries[MTHPD_PMD_NR], addr;
	int r;

	free(s->vmas);
	free(s->vma_has_memory);
	s->vmas = NULL;
	s->vma_has_memory = NULL;
	s->pre.n = 0;
	r = mthpd_vmas_read(&s->kif, s->pid, s->features.procmap_query, &s->vmas, &s->nvmas);
	if (r < 0)
		return r;
	s->vma_has_memory = calloc(s->nvmas ? s->nvmas : 1, sizeof(*s->vma_has_memory));
	if (!s->vma_has_memory)
		return -ENOMEM;
	for (size_t v = 0; v < s->nvmas; v++) {
		uint64_t cursor = s->vmas[v].start;

		mthpd_pagemap_reset(&pm);
		while ((r = mthpd_pagemap_next_range(&pm, &cursor, s->vmas[v].end, &addr,
						     entries)) > 0) {
			s->vma_has_memory[v] = true;
			r = preread_add(&s->pre, addr, entries);
			if (r < 0)
				return r;
		}
		if (r < 0)
			return r;
	}
	return 0;
}

/* The VMA list alone: mthpd_vmas_read(), as the pass starts. */
static int vmas_once(struct session *s, double *ret_ms)
{
	struct mthpd_vma *v = NULL;
	size_t n = 0;
	double t0 = now_ms();
	int r;

	r = mthpd_vmas_read(&s->kif, s->pid, s->features.procmap_query, &v, &n);
	*ret_ms = now_ms() - t0;
	free(v);
	return r;
}

/*
 * mthpd_pagemap_next_range() alone over every eligible VMA, with
 * mthpd_pagemap_reset() before each, as mthpd_target_pass() walks them.
 */
static int walk_once(struct session *s, struct mthpd_pass_stats *st, double *ret_ms)
{
	struct mthpd_pagemap pm = {.kif = &s->kif, .fd = s->pm_fd,
				   .use_scan = s->features.pagemap_scan};
	uint64_t addr, entries[MTHPD_PMD_NR];
	unsigned long n = 0;
	double t0 = now_ms();
	int r = 0;

	for (size_t v = 0; v < s->nvmas && r >= 0; v++) {
		uint64_t cursor = s->vmas[v].start;

		mthpd_pagemap_reset(&pm);
		while ((r = mthpd_pagemap_next_range(&pm, &cursor, s->vmas[v].end, &addr,
						     entries)) > 0)
			n++;
	}
	*ret_ms = now_ms() - t0;
	if (r < 0)
		return r;
	*st = (struct mthpd_pass_stats){
		.vmas = s->nvmas,
		.ranges = n,
		.pagemap_reads = pm.nr_range_reads,
		.scan_ioctls = pm.nr_scan_ioctls,
	};
	return 0;
}

/*
 * Whether the walk tried a block below 2M that passed its occupancy test:
 * the condition under which mthpd_target_pass() reads the range's folio
 * orders from kpageflags and plans it again (plan_needs_folio_orders() in
 * lib/target.c, which is static there).
 */
static bool needs_folio_orders(const struct mthpd_range_plan *p)
{
	for (unsigned int i = 0; i < p->nr_blocks; i++)
		if (p->blocks[i].order < MTHPD_PMD_ORDER &&
		    p->blocks[i].reason != MTHPD_SCAN_EXCEED_NONE_PTE)
			return true;
	return false;
}

static bool below_pmd(const struct mthpd_knobs *k)
{
	return k->orders & ((1U << MTHPD_PMD_ORDER) - 1);
}

/*
 * The pass's CPU over pre-read entries: mthpd_scan_range() (no folio orders,
 * as the pass asks) and the first mthpd_plan_range().  With @kpf, instead
 * only what follows for the ranges that need it: mthpd_scan_read_folio_orders()
 * and the second mthpd_plan_range().  Each range's entries are copied to a
 * local buffer first (not timed), so that they are as hot in the cache as
 * right after the pread.
 */
static int cpu_once(const struct session *s, bool kpf, struct mthpd_pass_stats *st,
		    double *ret_ms)
{
	static struct mthpd_range_scan scan;
	static struct mthpd_range_plan plan;
	uint64_t entries[MTHPD_PMD_NR];
	struct mthpd_scan_ctx sc;
	unsigned long replanned = 0;
	double total = 0, t0;
	int r;

	mthpd_scan_ctx_init(&sc, s->kpf_fd, false);
	for (size_t i = 0; i < s->pre.n; i++) {
		memcpy(entries, s->pre.entries[i], sizeof(entries));
		t0 = now_ms();
		r = mthpd_scan_range(&sc, s->pre.addr[i], entries, &scan);
		if (r < 0)
			return r;
		mthpd_plan_range(&scan, &s->knobs, NULL, NULL, &plan);
		if (!kpf)
			total += now_ms() - t0;
		if (!below_pmd(&s->knobs) || scan.folio_orders_known || !needs_folio_orders(&plan))
			continue;
		replanned++;
		if (!kpf)
			continue;
		t0 = now_ms();
		r = mthpd_scan_read_folio_orders(&sc, entries, &scan);
		if (r < 0)
			return r;
		mthpd_plan_range(&scan, &s->knobs, NULL, NULL, &plan);
		total += now_ms() - t0;
	}
	*ret_ms = total;
	*st = (struct mthpd_pass_stats){
		.ranges = kpf ? replanned : s->pre.n,
		.kpageflags_pfns = sc.nr_kpageflags_pfns,
	};
	return 0;
}

/*
 * The refusal probe alone: one process_madvise(pidfd, {vma_start, 4 KiB},
 * MADV_COLLAPSE, 0) per VMA with memory, through lib's kif as target.c
 * calls it.  Returns 0, or -errno other than EINVAL (a refused VMA).
 */
static int probe_once(struct session *s, unsigned long *ret_n, double *ret_ms)
{
	unsigned long n = 0;
	double t0 = now_ms();
	int r = 0;

	for (size_t v = 0; v < s->nvmas; v++) {
		int64_t c;

		if (!s->vma_has_memory[v])
			continue;
		c = s->kif.ops->collapse(&s->kif, s->pidfd, s->vmas[v].start, MTHPD_PAGE_SIZE, 0);
		n++;
		if (c < 0 && c != -EINVAL) {
			r = (int)c;
			break;
		}
	}
	*ret_ms = now_ms() - t0;
	*ret_n = n;
	return r;
}

/*
 * Untimed: the pages in large folios (the figures are only those of 4K
 * memory if there are none), and for the scenario's knobs the ranges whose
 * folio orders the pass reads, with their PFNs and the preads that takes
 * (one per run of consecutive PFNs, as mthpd_scan_read_folio_orders()).
 */
struct layout_check {
	uint64_t large, pmd_mapped;
	unsigned long kpf_ranges, kpf_pfns, kpf_runs;
	/* runs of at least @long_run PFNs: the only ones that can prove a folio
	 * of the smallest order below 2M asked for (kpageflags.c's lower bound) */
	unsigned int long_run;
	unsigned long kpf_long_runs, kpf_long_pfns;
};

/* Pages in the run of consecutive PFNs of the occupied pages that starts at @k. */
static unsigned int pfn_run(const struct mthpd_range_scan *scan, const uint64_t *e, unsigned int k)
{
	unsigned int j = k + 1;

	while (j < MTHPD_PMD_NR && mthpd_bit(scan->occupied, j) &&
	       mthpd_pagemap_pfn(e[j]) == mthpd_pagemap_pfn(e[k]) + (j - k))
		j++;
	return j - k;
}

static int check_layout(const struct session *s, struct layout_check *ret)
{
	static struct mthpd_range_scan scan;
	static struct mthpd_range_plan plan;
	struct layout_check c = {0};
	struct mthpd_scan_ctx sc;
	uint32_t small = s->knobs.orders & ((1U << MTHPD_PMD_ORDER) - 1);
	int r;

	/* A run of L PFNs proves at most order ceil(log2(L + 1)). */
	c.long_run = small ? 1U << (__builtin_ctz(small) - 1) : MTHPD_PMD_NR;

	mthpd_scan_ctx_init(&sc, s->kpf_fd, false);
	for (size_t i = 0; i < s->pre.n; i++) {
		const uint64_t *e = s->pre.entries[i];
		bool needed;

		r = mthpd_scan_range(&sc, s->pre.addr[i], e, &scan);
		if (r < 0)
			return r;
		mthpd_plan_range(&scan, &s->knobs, NULL, NULL, &plan);
		needed = below_pmd(&s->knobs) && !scan.folio_orders_known &&
			 needs_folio_orders(&plan);
		c.pmd_mapped += scan.pmd_mapped;
		if (!scan.folio_orders_known) {
			r = mthpd_scan_read_folio_orders(&sc, e, &scan);
			if (r < 0)
				return r;
		}
		for (unsigned int k = 0; k < MTHPD_PMD_NR; k++) {
			bool occ = mthpd_bit(scan.occupied, k);

			c.large += occ && scan.folio_order[k] > 0;
			if (!needed || !occ)
				continue;
			c.kpf_pfns++;
			if (k == 0 || !mthpd_bit(scan.occupied, k - 1) ||
			    mthpd_pagemap_pfn(e[k]) != mthpd_pagemap_pfn(e[k - 1]) + 1) {
				unsigned int run = pfn_run(&scan, e, k);

				c.kpf_runs++;
				if (run >= c.long_run) {
					c.kpf_long_runs++;
					c.kpf_long_pfns += run;
				}
			}
		}
		c.kpf_ranges += needed;
	}
	*ret = c;
	return 0;
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
	M_PLAN,          /* the scenario's plan, pidfd probe */
	M_VMAS,          /*   its parts */
	M_WALK,
	M_CPU,
	M_KPF,           /*   half only */
	M_PROBE,
	M_PLAN_SMAPS,    /* dense, sparse */
	M_PLAN_64K,      /* dense, sparse */
	M_PLAN_2M,       /* half: without the size below 2M */
	M_PLAN_FALLBACK, /* dense, sparse */
	M_CLI,
	M_CLI_FALLBACK,  /* dense, sparse */
	M_CLI_IDLE,
	M_CLI_NET,       /* derived: M_CLI - M_CLI_IDLE, not measured */
	M_FULL,          /* sparse */
	M_NR,
};

static bool method_applies(const struct layout *l, enum method m)
{
	switch (m) {
	case M_KPF:
	case M_PLAN_2M:
		return l->kind == SC_HALF;
	case M_PLAN_SMAPS:
	case M_PLAN_64K:
	case M_PLAN_FALLBACK:
	case M_CLI_FALLBACK:
		return l->kind != SC_HALF;
	case M_FULL:
		return l->kind == SC_SPARSE;
	default:
		return true;
	}
}

static const char *method_name(const struct layout *l, enum method m)
{
	bool half = l->kind == SC_HALF;

	switch (m) {
	case M_FLOOR:
		return "floor: pagemap of the resident ranges";
	case M_PLAN:
		return half ? "plan 2M,64K none=0 (in-process)" : "plan 2M (in-process)";
	case M_VMAS:
		return "  VMA list (vmas.c)";
	case M_WALK:
		return "  populated-range walk (pagemap.c)";
	case M_CPU:
		return "  scan+plan CPU (scan.c, plan.c)";
	case M_KPF:
		return "  kpageflags reads + re-plan (scan.c)";
	case M_PROBE:
		return "  refusal probe: 4K MADV_COLLAPSE per VMA";
	case M_PLAN_SMAPS:
		return "plan 2M, no pidfd: smaps fallback";
	case M_PLAN_64K:
		return "plan 2M,64K (in-process)";
	case M_PLAN_2M:
		return "plan 2M none=0 (no kpageflags needed)";
	case M_PLAN_FALLBACK:
		return "plan 2M, no PAGEMAP_SCAN/PROCMAP_QUERY";
	case M_CLI:
		return "mthpd plan --json (CLI, fork..wait)";
	case M_CLI_FALLBACK:
		return "  same, MTHPD_DISABLE=pagemap_scan,...";
	case M_CLI_IDLE:
		return "  same on an idle process: fixed cost";
	case M_CLI_NET:
		return "  CLI minus fixed cost (derived)";
	case M_FULL:
		return "pagemap of the whole mapping";
	case M_NR:
		break;
	}
	return "?";
}

struct figures {
	double ms[M_NR][MAX_RUNS];
	/* the floor measured just before this sample: the host's speed drifts */
	double floor_ms[M_NR][MAX_RUNS];
	double pass_ms[M_NR][MAX_RUNS];
	struct mthpd_pass_stats st[M_NR];
	bool have_st[M_NR];
	const char *refusal[M_NR]; /* how VM_NOHUGEPAGE was asked: "probe", "smaps" */
	unsigned long probes;
};

struct opts {
	const char *mthpd;
	unsigned int runs;
	uint64_t dense_size, half_size, sparse_size;
	const char *only;         /* one scenario */
	unsigned int plan_loop;   /* profiling aid: only N plan passes per child */
	bool samples;             /* also print every sample (stderr) */
};

static void print_header(void)
{
	printf("%-8s %-42s %8s %8s %8s %8s %7s %6s %8s %6s %8s %7s\n", "scenario", "method",
	       "resident", "floor ms", "time ms", "pass ms", "ratio", "%pass", "pm reads",
	       "ioctls", "kpf PFNs", "refusal");
}

static bool is_part(enum method m)
{
	return m == M_VMAS || m == M_WALK || m == M_CPU || m == M_KPF || m == M_PROBE;
}

static bool is_plan(enum method m)
{
	return m == M_PLAN || m == M_PLAN_SMAPS || m == M_PLAN_64K || m == M_PLAN_2M ||
	       m == M_PLAN_FALLBACK;
}

/* @pass_ms: the scenario's plan pass, for the share of the rows that are parts of it. */
static void print_row(const struct layout *l, enum method m, uint64_t resident, double floor_ms,
		      double pass_ms, const struct figures *f, unsigned int runs)
{
	double ms[MAX_RUNS], ratios[MAX_RUNS], t;
	char pass[16] = "-", share[16] = "", reads[24] = "-", ioctls[24] = "-", kpf[24] = "-";
	const char *refusal = f->refusal[m] ? f->refusal[m] : "-";

	for (unsigned int i = 0; i < runs; i++) {
		if (m == M_CLI_NET) {
			ms[i] = f->ms[M_CLI][i] - f->ms[M_CLI_IDLE][i];
			ratios[i] = ms[i] / f->floor_ms[M_CLI][i];
		} else {
			ms[i] = f->ms[m][i];
			ratios[i] = ms[i] / f->floor_ms[m][i];
		}
	}
	t = median(ms, runs);
	if (f->have_st[m]) {
		const struct mthpd_pass_stats *st = &f->st[m];

		if (m != M_CPU && m != M_KPF) {
			(void)snprintf(reads, sizeof(reads), "%lu", st->pagemap_reads);
			(void)snprintf(ioctls, sizeof(ioctls), "%lu", st->scan_ioctls);
		}
		if (m != M_WALK)
			(void)snprintf(kpf, sizeof(kpf), "%lu", st->kpageflags_pfns);
		if (is_plan(m))
			(void)snprintf(pass, sizeof(pass), "%.2f", median(f->pass_ms[m], runs));
	}
	if (is_part(m))
		(void)snprintf(share, sizeof(share), "%.0f%%", 100.0 * t / pass_ms);
	printf("%-8s %-42s %8" PRIu64 " %8.2f %8.2f %8s %6.2fx %6s %8s %6s %8s %7s\n", l->name,
	       method_name(l, m), resident, floor_ms, t, pass, median(ratios, runs), share, reads,
	       ioctls, kpf, refusal);
}

static void session_end(struct session *s)
{
	if (s->pm_fd >= 0)
		(void)close(s->pm_fd);
	if (s->kpf_fd >= 0)
		(void)close(s->kpf_fd);
	if (s->pidfd >= 0)
		(void)close(s->pidfd);
	mthpd_kif_done(&s->kif);
	free(s->pre.addr);
	free(s->pre.entries);
	free(s->vmas);
	free(s->vma_has_memory);
	if (s->pid > 0)
		reap_child(s->pid);
}

/* The floor once: 512 pagemap entries of each resident range. */
static int floor_sample(const struct session *s, uint64_t *xsink, double *ret_ms)
{
	double t0 = now_ms();

	if (floor_read(s->pm_fd, s->l, s->base, xsink) < 0)
		return -errno;
	*ret_ms = now_ms() - t0;
	return 0;
}

static struct plan_cfg method_cfg(const struct layout *l, enum method m)
{
	struct plan_cfg c = {
		.orders = l->orders,
		.max_ptes_none = l->max_ptes_none,
		.fallback = m == M_PLAN_FALLBACK,
		.pidfd = m != M_PLAN_SMAPS,
	};

	if (m == M_PLAN_64K)
		c.orders = ORDERS_2M_64K;
	if (m == M_PLAN_2M)
		c.orders = ORDERS_2M;
	return c;
}

/*
 * One method once, into sample slot @i, paired with a floor measured just
 * before it: the ratio of the pair does not drift with the host's speed.
 */
static int measure_one(const struct opts *op, struct session *s, pid_t idle, struct figures *f,
		       enum method m, unsigned int i, uint64_t *xsink)
{
	const struct layout *l = s->l;
	struct plan_run pr;
	double ms = 0;
	int r;

	r = floor_sample(s, xsink, &f->floor_ms[m][i]);
	if (r < 0)
		return r;
	switch (m) {
	case M_FLOOR:
		r = floor_sample(s, xsink, &ms);
		break;
	case M_PLAN:
	case M_PLAN_SMAPS:
	case M_PLAN_64K:
	case M_PLAN_2M:
	case M_PLAN_FALLBACK: {
		struct plan_cfg c = method_cfg(l, m);

		r = plan_once(s->pid, &c, &pr);
		if (r < 0)
			break;
		ms = pr.total_ms;
		f->pass_ms[m][i] = pr.pass_ms;
		f->st[m] = pr.st;
		f->have_st[m] = true;
		f->refusal[m] = pr.st.smaps_read ? "smaps" : pr.had_pidfd ? "probe" : "none";
		break;
	}
	case M_VMAS:
		r = vmas_once(s, &ms);
		break;
	case M_WALK:
		r = walk_once(s, &f->st[m], &ms);
		f->have_st[m] = true;
		break;
	case M_CPU:
	case M_KPF:
		r = cpu_once(s, m == M_KPF, &f->st[m], &ms);
		f->have_st[m] = true;
		break;
	case M_PROBE:
		r = probe_once(s, &f->probes, &ms);
		f->refusal[m] = "probe";
		break;
	case M_CLI:
	case M_CLI_FALLBACK:
	case M_CLI_IDLE: {
		pid_t pid = m == M_CLI_IDLE ? idle : s->pid;
		const char *disable = m == M_CLI_FALLBACK ? "pagemap_scan,procmap_query" : NULL;

		r = cli_once(op->mthpd, pid, l, disable, &ms);
		if (r != 0) {
			fprintf(stderr, "bench-scan: %s%s plan --pid %d exited %d\n",
				disable ? "MTHPD_DISABLE=... " : "", op->mthpd, (int)pid, r);
			r = -ECHILD;
		}
		break;
	}
	case M_FULL: {
		double t0 = now_ms();

		r = full_read(s->pm_fd, l, s->base, xsink) < 0 ? -errno : 0;
		ms = now_ms() - t0;
		break;
	}
	case M_CLI_NET:
	case M_NR:
		break;
	}
	f->ms[m][i] = ms;
	return r;
}

static int session_start(struct session *s, const struct layout *l, double *ret_touch_ms)
{
	const char *failed = NULL;
	int r;

	s->l = l;
	s->pid = spawn_child(l->name, l->size, &s->base, ret_touch_ms);
	if (s->pid < 0) {
		fprintf(stderr, "bench-scan: %s: the child could not map or touch its memory\n",
			l->name);
		return -ECHILD;
	}
	s->pm_fd = open_pagemap(s->pid);
	if (s->pm_fd < 0)
		return -errno;
	r = mthpd_kif_linux_init(NULL, NULL, &s->kif, NULL);
	if (r < 0)
		return r;
	r = mthpd_features_probe(&s->kif, &s->features);
	if (r < 0)
		return r;
	r = mthpd_knobs_read_sysfs(&s->kif, 7, &s->knobs, &failed);
	if (r < 0)
		return r;
	s->knobs.orders = l->orders;
	if (l->max_ptes_none >= 0)
		s->knobs.max_ptes_none = (unsigned int)l->max_ptes_none;
	s->kpf_fd = s->kif.ops->open_proc(&s->kif, "kpageflags", O_RDONLY);
	if (s->kpf_fd < 0)
		return s->kpf_fd;
	s->pidfd = s->kif.ops->pidfd_open(&s->kif, s->pid);
	if (s->pidfd < 0)
		return s->pidfd;
	return session_prepare(s);
}

/* Lays out one child, runs every method @runs times (after a warm-up round), prints. */
static int measure(const struct opts *op, const struct layout *l, pid_t idle, bool first)
{
	static struct figures f;
	struct session s = {.pm_fd = -1, .kpf_fd = -1, .pidfd = -1,
			    .kif = {.proc_fd = -1, .sys_fd = -1}};
	uint64_t resident = resident_pages(l), xsink = 0;
	struct layout_check chk;
	double touch_ms, floor_ms, pass_ms;
	int r;

	memset(&f, 0, sizeof(f));
	fprintf(stderr, "bench-scan: %s: touching %" PRIu64 " pages in a %" PRIu64
			" MiB mapping...\n",
		l->name, resident, l->size / MIB);
	r = session_start(&s, l, &touch_ms);
	if (r < 0)
		goto fail;

	/* Untimed: the layout is what it should be, in 4 KiB pages. */
	r = check_layout(&s, &chk);
	if (r < 0)
		goto fail;
	fprintf(stderr, "bench-scan: %s: child %d touched in %.1f s; Rss %ld kB, "
			"AnonHugePages %ld kB, pages in large folios %" PRIu64 "; %zu VMAs, "
			"%zu populated ranges\n",
		l->name, (int)s.pid, touch_ms / 1e3, rollup_kb(s.pid, "Rss"),
		rollup_kb(s.pid, "AnonHugePages"), chk.large, s.nvmas, s.pre.n);
	if (below_pmd(&s.knobs))
		fprintf(stderr, "bench-scan: %s: with these knobs the pass reads the folio orders "
				"of %lu ranges: %lu PFNs in %lu runs (one pread each); %lu runs "
				"(%lu PFNs) are long enough (>= %u) to prove a folio of the "
				"smallest size asked\n",
			l->name, chk.kpf_ranges, chk.kpf_pfns, chk.kpf_runs, chk.kpf_long_runs,
			chk.kpf_long_pfns, chk.long_run);
	if (chk.large || chk.pmd_mapped)
		fprintf(stderr, "bench-scan: warning: %s is not all 4 KiB pages; the figures "
				"are not those of 4K memory\n",
			l->name);

	if (op->plan_loop) {
		/* Profiling aid: nothing but plan passes, e.g. under perf record. */
		struct plan_cfg c = method_cfg(l, M_PLAN);
		struct plan_run pr;
		double t0 = now_ms();

		for (unsigned int k = 0; k < op->plan_loop; k++) {
			r = plan_once(s.pid, &c, &pr);
			if (r < 0)
				goto fail;
		}
		printf("%s: %u plan passes, %.3f ms each\n", l->name, op->plan_loop,
		       (now_ms() - t0) / op->plan_loop);
		session_end(&s);
		return 0;
	}

	for (unsigned int run = 0; run <= op->runs; run++) {
		/* Round 0 warms caches and page tables up and is overwritten. */
		for (enum method m = 0; m < M_NR; m++) {
			if (!method_applies(l, m) || m == M_CLI_NET)
				continue;
			r = measure_one(op, &s, idle, &f, m, run ? run - 1 : 0, &xsink);
			if (r < 0)
				goto fail;
		}
	}

	/* Untimed: nothing above (the refusal probes included) changed the pages. */
	r = session_prepare(&s);
	if (r >= 0)
		r = check_layout(&s, &chk);
	if (r < 0)
		goto fail;
	if (chk.large || chk.pmd_mapped || rollup_kb(s.pid, "AnonHugePages") != 0)
		fprintf(stderr, "bench-scan: warning: %s: %" PRIu64 " pages are in large folios "
				"after the runs\n",
			l->name, chk.large);

	floor_ms = median(f.floor_ms[M_PLAN], op->runs);
	pass_ms = median(f.pass_ms[M_PLAN], op->runs);
	if (first)
		print_header();
	for (enum method m = 0; m < M_NR; m++) {
		if (!method_applies(l, m))
			continue;
		print_row(l, m, resident, floor_ms, pass_ms, &f, op->runs);
		if (op->samples && m != M_CLI_NET) {
			fprintf(stderr, "%s %s:", l->name, method_name(l, m));
			for (unsigned int i = 0; i < op->runs; i++)
				fprintf(stderr, " %.2f", f.ms[m][i]);
			fputc('\n', stderr);
		}
	}
	fflush(stdout);
	fprintf(stderr, "bench-scan: %s: %lu refusal probes per round\n", l->name, f.probes);
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
	fputs("Usage: bench-scan --mthpd PATH [--runs N] [--dense-mib N] [--half-mib N]\n"
	      "                  [--sparse-mib N] [--only dense|half|sparse] [--samples]\n"
	      "                  [--plan-loop N]\n"
	      "Prints the cost of `mthpd plan` next to the raw pagemap read of the same\n"
	      "resident pages (median of N runs, default 7).  Needs root.\n"
	      "  --dense-mib N   size of the dense child (default 4096)\n"
	      "  --half-mib N    size of the half-written child (default 4096)\n"
	      "  --sparse-mib N  size of the sparse mapping (default 16384)\n"
	      "  --only S        measure one scenario\n"
	      "  --samples       print every sample to stderr\n"
	      "  --plan-loop N   profiling aid: only N in-process plan passes per child\n"
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
		{"half-mib", required_argument, NULL, 'H'},
		{"sparse-mib", required_argument, NULL, 's'},
		{"only", required_argument, NULL, 'o'},
		{"plan-loop", required_argument, NULL, 'l'},
		{"samples", no_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	struct opts op = {.mthpd = NULL, .runs = 7, .dense_size = 4 * GIB, .half_size = 4 * GIB,
			  .sparse_size = 16 * GIB};
	struct sigaction sa = {.sa_handler = on_fatal_signal};
	int o, status = 0;
	pid_t idle;

	if (argc == 5 && strcmp(argv[1], CHILD_ARG) == 0)
		child_main(argv[2], argv[3], argv[4]);
	while ((o = getopt_long(argc, argv, "m:r:d:H:s:o:l:Sh", lo, NULL)) >= 0) {
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
		case 'H':
		case 's':
			if (parse_mib(optarg, o == 'd'   ? &op.dense_size
					      : o == 'H' ? &op.half_size
							 : &op.sparse_size) < 0) {
				fprintf(stderr, "bench-scan: --%s-mib: an even number of MiB\n",
					o == 'd' ? "dense" : o == 'H' ? "half" : "sparse");
				return 2;
			}
			break;
		case 'o':
			if (strcmp(optarg, "dense") && strcmp(optarg, "half") &&
			    strcmp(optarg, "sparse")) {
				fprintf(stderr, "bench-scan: --only: dense, half or sparse\n");
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

	{
		uint64_t unused;
		double unused_ms;

		idle = spawn_child("idle", 0, &unused, &unused_ms);
	}
	if (idle < 0) {
		fprintf(stderr, "bench-scan: the idle process for the CLI's fixed cost did not "
				"start\n");
		return 1;
	}

	{
		struct plan_cfg c = {.orders = ORDERS_2M, .max_ptes_none = -1, .pidfd = true};
		struct plan_run pr;

		if (plan_once(idle, &c, &pr) == 0)
			fprintf(stderr, "bench-scan: idle process %d: %lu eligible VMAs, %lu "
					"populated ranges\n",
				(int)idle, pr.st.vmas, pr.st.ranges);
	}

	const struct layout layouts[] = {
		{.name = "dense", .kind = SC_DENSE, .size = op.dense_size, .orders = ORDERS_2M,
		 .max_ptes_none = -1},
		{.name = "half", .kind = SC_HALF, .size = op.half_size, .orders = ORDERS_2M_64K,
		 .max_ptes_none = 0, .cli_sizes = "2M,64K", .cli_none = "0"},
		{.name = "sparse", .kind = SC_SPARSE, .size = op.sparse_size, .orders = ORDERS_2M,
		 .max_ptes_none = -1},
	};
	printf("median of %u runs (after 1 warm-up); dense: %" PRIu64 " MiB all written in 4K "
	       "pages; half: %" PRIu64 " MiB, every other 64K block written, planned 2M,64K "
	       "with max_ptes_none 0; sparse: %" PRIu64 " MiB MAP_NORESERVE, every 64th 2M "
	       "range written, 1 page in every 7th\n",
	       op.runs, op.dense_size / MIB, op.half_size / MIB, op.sparse_size / MIB);
	bool first = true;

	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		if (op.only && strcmp(op.only, layouts[i].name) != 0)
			continue;
		if (measure(&op, &layouts[i], idle, first) < 0)
			status = 1;
		first = false;
	}
	kill_children();
	return status;
}
