/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-scan's rows: which method applies to which scenario, one sample of
 * a method paired with a floor measured just before it, and the printed
 * row (medians of the samples and of their ratios to the floor).
 */
#include <errno.h>
#include <fcntl.h>
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

#include "bench-scan.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double median(const double *v, unsigned int n)
{
	double s[MAX_RUNS];

	if (n == 0)
		return 0;
	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

bool method_applies(const struct layout *l, enum method m)
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

const char *method_name(const struct layout *l, enum method m)
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

struct plan_cfg method_cfg(const struct layout *l, enum method m)
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
int measure_one(const struct opts *op, struct session *s, pid_t idle, struct figures *f,
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

void print_header(void)
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
void print_row(const struct layout *l, enum method m, uint64_t resident, double floor_ms,
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
