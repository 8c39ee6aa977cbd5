/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How `plan` and `collapse` show their work: one JSON object per block, or a
 * table per process with a picture of each 2 MiB range.
 */
#ifndef MTHPD_OUTPUT_H
#define MTHPD_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "features.h"
#include "plan.h"
#include "target.h"

struct mthpd_output {
	FILE *f;
	bool json;
	bool collapse;
	bool synthetic; /* --proc-root: no kernel was probed */
	const struct mthpd_knobs *knobs;
	const struct mthpd_features *features;
	/* text mode: identical consecutive ranges are folded into a count */
	char last[512];
	unsigned long repeats;
	unsigned long planned_by_order[MTHPD_PMD_ORDER + 1];
	unsigned long done_by_order[MTHPD_PMD_ORDER + 1];
};

void mthpd_output_init(struct mthpd_output *o, FILE *f, bool json, bool collapse,
		       bool synthetic, const struct mthpd_knobs *knobs,
		       const struct mthpd_features *features);
void mthpd_output_header(struct mthpd_output *o);
void mthpd_output_target_begin(struct mthpd_output *o, const struct mthpd_target *t);
/* mthpd_range_sink */
int mthpd_output_range(void *userdata, const struct mthpd_target *t,
		       const struct mthpd_range_scan *scan, const struct mthpd_range_plan *plan);
void mthpd_output_target_end(struct mthpd_output *o, const struct mthpd_target *t,
			     const struct mthpd_pass_stats *st);
void mthpd_output_footer(struct mthpd_output *o);

/*
 * The line @fmt makes, then '\n', on @f, with its control characters
 * escaped (lib/text.h): for a line that names something another user chose
 * (a comm, a cgroup, a file name).  Nothing is cut.
 */
void mthpd_output_line(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* @s as a JSON string, escaped: comm and paths are chosen by others. */
void mthpd_output_json_string(FILE *f, const char *s);

/* The two 64-cell lines of a range's picture, one cell per 8 pages. */
void mthpd_output_picture(const struct mthpd_range_scan *scan, const struct mthpd_range_plan *plan,
			  char used[65], char planned[65]);

#endif
