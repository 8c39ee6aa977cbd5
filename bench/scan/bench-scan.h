/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-scan, the cost of one `mthpd plan` next to the pagemap floor: the
 * types its files share (bench/bench-scan.c has the whole story).
 *   children.c    the scenarios' layouts and the children that hold them
 *   operations.c  the floor, the whole pagemap, a plan in-process, the CLI
 *   session.c     one child measured: the pass's parts timed alone
 *   figures.c     the methods, one paired sample, the printed rows
 */
#ifndef MTHPD_BENCH_SCAN_H
#define MTHPD_BENCH_SCAN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

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
	unsigned int every;       /* sparse: every Nth 2 MiB range written, no other
				     page (0: every 64th, and one page of every 7th) */
};

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
	unsigned int sparse_every; /* --sparse-every (0: the default pattern) */
	const char *only;         /* one scenario */
	unsigned int plan_loop;   /* profiling aid: only N plan passes per child */
	bool samples;             /* also print every sample (stderr) */
};

/* children.c */
void kill_children(void);
void on_fatal_signal(int sig);
void reap_child(pid_t p);
enum range_fill range_fill(const struct layout *l, uint64_t i);
uint64_t resident_pages(const struct layout *l);
double now_ms(void);
_Noreturn void child_main(const char *kind, const char *mib, const char *every,
			 const char *parent);
pid_t spawn_child(const char *kind, uint64_t size, unsigned int every, uint64_t *ret_base,
		  double *ret_touch_ms);
long rollup_kb(pid_t pid, const char *field);

/* operations.c */
int open_pagemap(pid_t pid);
int floor_read(int fd, const struct layout *l, uint64_t base, uint64_t *sink);
int full_read(int fd, const struct layout *l, uint64_t base, uint64_t *sink);
int plan_once(pid_t pid, const struct plan_cfg *c, struct plan_run *ret);
int cli_once(const char *mthpd, pid_t pid, const struct layout *l, const char *disable,
	     double *ret_ms);

/* session.c */
int session_start(struct session *s, const struct layout *l, double *ret_touch_ms);
int session_prepare(struct session *s);
void session_end(struct session *s);
int floor_sample(const struct session *s, uint64_t *xsink, double *ret_ms);
int vmas_once(struct session *s, double *ret_ms);
int walk_once(struct session *s, struct mthpd_pass_stats *st, double *ret_ms);
bool below_pmd(const struct mthpd_knobs *k);
int cpu_once(const struct session *s, bool kpf, struct mthpd_pass_stats *st, double *ret_ms);
int probe_once(struct session *s, unsigned long *ret_n, double *ret_ms);
int check_layout(const struct session *s, struct layout_check *ret);

/* figures.c */
double median(const double *v, unsigned int n);
bool method_applies(const struct layout *l, enum method m);
const char *method_name(const struct layout *l, enum method m);
struct plan_cfg method_cfg(const struct layout *l, enum method m);
int measure_one(const struct opts *op, struct session *s, pid_t idle, struct figures *f,
		enum method m, unsigned int i, uint64_t *xsink);
void print_header(void);
void print_row(const struct layout *l, enum method m, uint64_t resident, double floor_ms,
	       double pass_ms, const struct figures *f, unsigned int runs);

#endif
