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
#include <stdint.h>
#include <sys/types.h>

#include "account.h"
#include "features.h"
#include "state.h"

#define METRICS_MAX_POLICIES 1024
#define METRICS_MAX_UNITS 4096
/* Process lines of the state file, at most: the rest is counted */
#define METRICS_STATE_MAX_PROCS 1000

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
		unsigned long anon, huge, collapsed_pass, partial; /* bytes, summed over metrics_row */
	} procs[METRICS_MAX_POLICIES];
	/*
	 * Per matched process, as of the last pass (daemon/run.c fills them
	 * before each write): sorted by policy, then unit, then pid.
	 */
	struct metrics_row {
		pid_t pid;
		char comm[32];
		size_t policy;           /* index into names[] */
		const char *unit;        /* its systemd unit, or its cgroup path when in none */
		uint64_t anon;           /* RssAnon, bytes */
		uint64_t huge;           /* of it, in PMD-mapped THPs (2 MiB each) */
		uint64_t partial;        /* held by 2M folios it maps in part, beyond RssAnon */
		uint64_t collapsed_pass; /* bytes mthpd collapsed in it during the last pass */
		uint64_t collapsed;      /* bytes mthpd collapsed in it since it found it */
		bool thp_disabled;
		const char *last_result; /* the result of most of its last planned blocks, or "none" */
		char reason[96];         /* why (part of) it is left alone, "-" when nothing is */
	} *rows;
	size_t nr_rows, rows_size;
	/*
	 * Bytes collapsed per policy and unit since the daemon started, kept
	 * when the unit's processes exit: a counter, at most METRICS_MAX_UNITS.
	 */
	struct metrics_unit {
		size_t policy;
		char *unit;
		uint64_t collapsed;
	} *units;
	size_t nr_units;
	/*
	 * metrics_max_units: the units with series of their own in the
	 * Prometheus file, the largest by anonymous memory; the others of a
	 * policy are summed in one series with unit="(other)".
	 */
	unsigned int max_units;
	unsigned long passes;
	unsigned long targets;    /* processes worked on in the last pass */
	unsigned long ranges_huge; /* ranges of the last pass PAGEMAP_SCAN showed PMD-mapped */
	unsigned long quiet;       /* processes of the last pass left alone: settled, no new fault */
	double last_pass_seconds;
	bool backing_off;
	/* the allocation pause (daemon/alloc-hold.c): apart from memory pressure */
	bool alloc_hold;
	uint64_t alloc_probe_usec; /* its next probe, CLOCK_MONOTONIC */
	char alloc_cause[96];      /* why, from /proc/buddyinfo at the last failure */
	/* reloads refused (daemon/reload.c), and whether the last one was */
	unsigned long reload_failures;
	bool reload_failed;
	bool prefault; /* prefault= in effect (daemon/reload.c: reload_prefault()) */
	pid_t pid;
	struct state_ident ident; /* the daemon's own, for `mthpd status`; zero: unknown */
	const char *version;      /* MTHPD_VERSION */
	const struct mthpd_features *features; /* the last probe; NULL: not probed */
};

/* The counters of policy @name, created on first use; NULL past the cap. */
struct mthpd_counters *metrics_policy(struct metrics *m, const char *name);
void metrics_free(struct metrics *m);

/* @bytes collapsed in a process of @unit under policy @policy.  Returns 0, -ENOMEM, -E2BIG. */
int metrics_unit_collapsed(struct metrics *m, const char *policy, const char *unit, uint64_t bytes);

/*
 * @n zeroed rows in m->rows, one for every matched process, to fill in;
 * metrics_rows_done() sorts them.  Returns 0 or -ENOMEM (then no rows).
 */
int metrics_rows(struct metrics *m, size_t n);
void metrics_rows_done(struct metrics *m);

/* Returns 0 or -errno.  An empty @path writes nothing. */
int metrics_write_prometheus(const struct metrics *m, const char *path);
int metrics_write_state(const struct metrics *m, const char *path);

#endif
