/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `mthpd status`: the state file's coverage lines (daemon/metrics.c) as an
 * operator reads them, one block per policy, with a table of its units and
 * of their processes:
 *
 *   policy NAME processes=N thp_disabled=N vmas_refused=N anon_bytes=B ...
 *   unit POLICY UNIT processes=N ... last_result=R reason=W
 *   process PID COMM POLICY UNIT anon_bytes=B ... last_result=R reason=W
 *
 * Every other line is shown as it is.
 */
#ifndef MTHPD_COVERAGE_H
#define MTHPD_COVERAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* What `mthpd status` shows of the coverage: --policy, --unit, --limit. */
struct coverage_filter {
	const char *policy;  /* one policy by its name as shown; NULL: every one */
	const char *unit;    /* fnmatch(3) glob on the unit as shown; NULL: every one */
	unsigned int limit;  /* units per policy and processes per unit shown; 0: all */
	bool json;           /* --json: one JSON object (coverage_show_json()) */
	/* `mthpd top`: one frame of coverage_top(), this many columns and rows; 0: not top */
	unsigned int top_cols, top_rows;
};

/* The units and processes `mthpd status` shows of each list without --limit. */
#define COVERAGE_LIMIT_DEFAULT 20U

/* Shows the state file's text @body (NUL-terminated) on @out, as @f says. */
void coverage_show(const char *body, const struct coverage_filter *f, FILE *out);

/*
 * The version of `mthpd status --json`'s schema (man/mthpd.8): raised when a
 * member changes its meaning or goes; new members may come without it.
 */
#define COVERAGE_JSON_SCHEMA 1

/*
 * The members of `status --json` that the state file's text @body gives
 * (passes_total, ..., "counters", "processes_not_listed", "policies"), each
 * after a ',', as @f says (the same policies, units and processes as
 * coverage_show()): the caller writes the braces and the members before.
 */
void coverage_show_json(const char *body, const struct coverage_filter *f, FILE *out);

/*
 * One frame of `mthpd top` from the state file's text @body: the pass and
 * what holds the daemon back on one line, then one row per unit (of every
 * policy @f lets through), largest first, as many as @rows allows, each
 * with its anon and huge memory, a coverage bar, what the last pass
 * collapsed in it ("NOW") and why (part of) it is left alone; @cols wide.
 */
void coverage_top(const char *body, const struct coverage_filter *f, unsigned int cols,
		  unsigned int rows, FILE *out);

/* Pure: @bytes for a human, "0 B", "512 KiB", "4.0 MiB", "2.25 GiB", into @buf. */
const char *coverage_bytes(uint64_t bytes, char *buf, size_t size);

#endif
