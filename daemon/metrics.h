/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The counters, written after each pass with news (else once a second): in Prometheus text format for
 * node_exporter's textfile collector, and as a state file for `mthpd status`.
 * Both are written to a temporary file and renamed, so readers never see a
 * half-written file.
 */
#ifndef MTHPD_METRICS_H
#define MTHPD_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "account.h"
#include "features.h"
#include "state.h"

#define METRICS_MAX_POLICIES 1024

struct metrics {
	size_t n;
	char *names[METRICS_MAX_POLICIES];
	struct mthpd_counters per_policy[METRICS_MAX_POLICIES];
	struct mthpd_counters total;
	/*
	 * Gauges per policy, counted after each pass over the processes it
	 * matches: how many, how many of them turned THP off for themselves
	 * (nothing can be done), and their VMAs the kernel refuses.
	 */
	struct metrics_procs {
		unsigned long processes, thp_disabled, vmas_refused;
	} procs[METRICS_MAX_POLICIES];
	unsigned long passes;
	unsigned long targets;    /* processes worked on in the last pass */
	unsigned long ranges_huge; /* ranges of the last pass PAGEMAP_SCAN showed PMD-mapped */
	unsigned long quiet;       /* processes of the last pass left alone: settled, no new fault */
	double last_pass_seconds;
	bool backing_off;
	pid_t pid;
	struct state_ident ident; /* the daemon's own, for `mthpd status`; zero: unknown */
	const char *version;      /* MTHPD_VERSION */
	const struct mthpd_features *features; /* the last probe; NULL: not probed */
};

/* The counters of policy @name, created on first use; NULL past the cap. */
struct mthpd_counters *metrics_policy(struct metrics *m, const char *name);
void metrics_free(struct metrics *m);

/* Returns 0 or -errno.  An empty @path writes nothing. */
int metrics_write_prometheus(const struct metrics *m, const char *path);
int metrics_write_state(const struct metrics *m, const char *path);

#endif
