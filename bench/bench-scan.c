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
 *           written, one page in every 7th range (1.6% resident); with
 *           --sparse-every N, every Nth range fully written and no other
 *           page (N 8: 2 GiB of 16 resident)
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
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scan/bench-scan.h"

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
	      "                  [--sparse-mib N] [--sparse-every N] [--only dense|half|sparse]\n"
	      "                  [--samples] [--plan-loop N]\n"
	      "Prints the cost of `mthpd plan` next to the raw pagemap read of the same\n"
	      "resident pages (median of N runs, default 7).  Needs root.\n"
	      "  --dense-mib N   size of the dense child (default 4096)\n"
	      "  --half-mib N    size of the half-written child (default 4096)\n"
	      "  --sparse-mib N  size of the sparse mapping (default 16384)\n"
	      "  --sparse-every N  sparse: every Nth 2 MiB range written and nothing\n"
	      "                  else (default: every 64th, and one page of every 7th)\n"
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

/* Reads the options into @op.  Returns -1 to go on, or the exit status. */
static int parse_opts(int argc, char **argv, struct opts *op)
{
	static const struct option lo[] = {
		{"mthpd", required_argument, NULL, 'm'},
		{"runs", required_argument, NULL, 'r'},
		{"dense-mib", required_argument, NULL, 'd'},
		{"half-mib", required_argument, NULL, 'H'},
		{"sparse-mib", required_argument, NULL, 's'},
		{"sparse-every", required_argument, NULL, 'e'},
		{"only", required_argument, NULL, 'o'},
		{"plan-loop", required_argument, NULL, 'l'},
		{"samples", no_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	int o;

	while ((o = getopt_long(argc, argv, "m:r:d:H:s:e:o:l:Sh", lo, NULL)) >= 0) {
		switch (o) {
		case 'm':
			op->mthpd = optarg;
			break;
		case 'r':
			op->runs = (unsigned int)strtoul(optarg, NULL, 10);
			if (op->runs == 0 || op->runs >= MAX_RUNS) {
				fprintf(stderr, "bench-scan: --runs: 1..%d\n", MAX_RUNS - 1);
				return 2;
			}
			break;
		case 'd':
		case 'H':
		case 's':
			if (parse_mib(optarg, o == 'd'   ? &op->dense_size
					      : o == 'H' ? &op->half_size
							 : &op->sparse_size) < 0) {
				fprintf(stderr, "bench-scan: --%s-mib: an even number of MiB\n",
					o == 'd' ? "dense" : o == 'H' ? "half" : "sparse");
				return 2;
			}
			break;
		case 'e': {
			char *end;
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || v == 0 || v > 1024 * 1024) {
				fprintf(stderr, "bench-scan: --sparse-every: 1..%d\n", 1024 * 1024);
				return 2;
			}
			op->sparse_every = (unsigned int)v;
			break;
		}
		case 'o':
			if (strcmp(optarg, "dense") && strcmp(optarg, "half") &&
			    strcmp(optarg, "sparse")) {
				fprintf(stderr, "bench-scan: --only: dense, half or sparse\n");
				return 2;
			}
			op->only = optarg;
			break;
		case 'l':
			op->plan_loop = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'S':
			op->samples = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!op->mthpd || optind < argc) {
		usage(stderr);
		return 2;
	}
	return -1;
}

/* The children die with the bench, however it ends.  Returns 0 or -1. */
static int kill_children_on_exit(void)
{
	static const int fatal[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGABRT, SIGBUS};
	struct sigaction sa = {.sa_handler = on_fatal_signal};

	if (atexit(kill_children) != 0)
		return -1;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		(void)sigaction(fatal[i], &sa, NULL);
	return 0;
}

/* The tiny process of the CLI's fixed cost, with nothing to plan.  Returns its pid or -1. */
static pid_t start_idle(void)
{
	struct plan_cfg c = {.orders = ORDERS_2M, .max_ptes_none = -1, .pidfd = true};
	struct plan_run pr;
	uint64_t unused;
	double unused_ms;
	pid_t idle;

	idle = spawn_child("idle", 0, 0, &unused, &unused_ms);
	if (idle < 0) {
		fprintf(stderr, "bench-scan: the idle process for the CLI's fixed cost did not "
				"start\n");
		return -1;
	}
	if (plan_once(idle, &c, &pr) == 0)
		fprintf(stderr, "bench-scan: idle process %d: %lu eligible VMAs, %lu "
				"populated ranges\n",
			(int)idle, pr.st.vmas, pr.st.ranges);
	return idle;
}

int main(int argc, char **argv)
{
	struct opts op = {.mthpd = NULL, .runs = 7, .dense_size = 4 * GIB, .half_size = 4 * GIB,
			  .sparse_size = 16 * GIB};
	int status = 0;
	bool first = true;
	pid_t idle;

	if (argc == 6 && strcmp(argv[1], CHILD_ARG) == 0)
		child_main(argv[2], argv[3], argv[4], argv[5]);
	status = parse_opts(argc, argv, &op);
	if (status >= 0)
		return status;
	status = 0;
	if (geteuid() != 0) {
		fprintf(stderr, "bench-scan: needs root (pagemap PFNs, /proc/kpageflags)\n");
		return 77;
	}
	if (access(op.mthpd, X_OK) < 0) {
		fprintf(stderr, "bench-scan: %s: %s\n", op.mthpd, strerror(errno));
		return 2;
	}
	if (kill_children_on_exit() < 0)
		return 1;
	idle = start_idle();
	if (idle < 0)
		return 1;

	const struct layout layouts[] = {
		{.name = "dense", .kind = SC_DENSE, .size = op.dense_size, .orders = ORDERS_2M,
		 .max_ptes_none = -1},
		{.name = "half", .kind = SC_HALF, .size = op.half_size, .orders = ORDERS_2M_64K,
		 .max_ptes_none = 0, .cli_sizes = "2M,64K", .cli_none = "0"},
		{.name = "sparse", .kind = SC_SPARSE, .size = op.sparse_size, .orders = ORDERS_2M,
		 .max_ptes_none = -1, .every = op.sparse_every},
	};
	char sparse_desc[64];

	if (op.sparse_every)
		(void)snprintf(sparse_desc, sizeof(sparse_desc), "every %uth 2M range written",
			       op.sparse_every);
	else
		(void)snprintf(sparse_desc, sizeof(sparse_desc),
			       "every 64th 2M range written, 1 page in every 7th");
	printf("median of %u runs (after 1 warm-up); dense: %" PRIu64 " MiB all written in 4K "
	       "pages; half: %" PRIu64 " MiB, every other 64K block written, planned 2M,64K "
	       "with max_ptes_none 0; sparse: %" PRIu64 " MiB MAP_NORESERVE, %s\n",
	       op.runs, op.dense_size / MIB, op.half_size / MIB, op.sparse_size / MIB, sparse_desc);
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
