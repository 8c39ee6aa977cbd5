/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "knobs.h"
#include "metrics.h"
#include "util.h"

struct mthpd_counters *metrics_policy(struct metrics *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->names[i], name) == 0)
			return &m->per_policy[i];
	if (m->n >= METRICS_MAX_POLICIES)
		return NULL;
	m->names[m->n] = strdup(name);
	if (!m->names[m->n])
		return NULL;
	memset(&m->per_policy[m->n], 0, sizeof(m->per_policy[m->n]));
	return &m->per_policy[m->n++];
}

void metrics_free(struct metrics *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->names[i]);
	m->n = 0;
}

/* Opens PATH.tmp for writing; the caller renames it over PATH when done. */
static FILE *open_tmp(const char *path, char *tmp, size_t size)
{
	int fd;
	FILE *f;

	if (snprintf(tmp, size, "%s.tmp", path) >= (int)size) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "we");
	if (!f)
		(void)close(fd);
	return f;
}

/*
 * No fsync: the files are rewritten after every pass (up to 10 a second),
 * readers only need never to see half a file, which the rename gives, and
 * after a crash the next pass writes them anew.  fsync was 3% of an idle
 * daemon's CPU (perf, 100 settled processes, a pass every 100 ms).
 */
static int finish(FILE *f, const char *tmp, const char *path)
{
	bool bad = ferror(f) != 0;

	if (fflush(f) != 0)
		bad = true;
	if (fclose(f) != 0)
		bad = true;
	if (bad || rename(tmp, path) < 0) {
		int r = errno ? -errno : -EIO;

		(void)unlink(tmp);
		return r;
	}
	return 0;
}

struct family {
	const char *name, *help;
	size_t offset; /* of the per-order array in struct mthpd_counters */
};

#define F(field, help) {#field, help, offsetof(struct mthpd_counters, field)}
static const struct family families[] = {
	F(collapse_alloc, "Blocks collapsed and verified in kpageflags, by folio size."),
	F(collapse_alloc_failed, "Collapses that failed to allocate the folio (ENOMEM), by size."),
	F(collapse_exceed_none_pte, "Blocks skipped for too many empty or zero pages, by size."),
	F(collapse_exceed_swap_pte, "Blocks skipped for swapped-out pages, by size."),
	F(collapse_exceed_shared_pte, "Blocks skipped for pages shared with other processes, by size."),
	F(collapse_failed, "Collapses that failed for other reasons, by size."),
	F(planned, "Blocks the order walk planned to collapse (also in dry runs), by size."),
};

static void write_family(FILE *f, const struct metrics *m, const struct family *fam)
{
	fprintf(f, "# HELP mthpd_%s_total %s\n# TYPE mthpd_%s_total counter\n", fam->name, fam->help,
		fam->name);
	for (size_t i = 0; i <= m->n; i++) {
		const struct mthpd_counters *c = i < m->n ? &m->per_policy[i] : &m->total;
		const unsigned long *v = (const unsigned long *)(const void *)((const char *)c + fam->offset);

		for (unsigned int o = MTHPD_MIN_ORDER; o <= MTHPD_PMD_ORDER; o++)
			if (i < m->n)
				fprintf(f, "mthpd_%s_total{policy=\"%s\",size=\"%s\"} %lu\n", fam->name,
					m->names[i], mthpd_order_name(o), v[o]);
			else
				fprintf(f, "mthpd_%s_total{size=\"%s\"} %lu\n", fam->name,
					mthpd_order_name(o), v[o]);
	}
}

/* One unlabelled-by-size counter, per policy and in total. */
static void write_scanned(FILE *f, const struct metrics *m, const char *name, const char *help,
			  size_t offset)
{
	fprintf(f, "# HELP mthpd_%s_total %s\n# TYPE mthpd_%s_total counter\n", name, help, name);
	for (size_t i = 0; i <= m->n; i++) {
		const struct mthpd_counters *c = i < m->n ? &m->per_policy[i] : &m->total;
		unsigned long v = *(const unsigned long *)(const void *)((const char *)c + offset);

		if (i < m->n)
			fprintf(f, "mthpd_%s_total{policy=\"%s\"} %lu\n", name, m->names[i], v);
		else
			fprintf(f, "mthpd_%s_total %lu\n", name, v);
	}
}

/* One per-policy gauge of struct metrics_procs, at @offset. */
static void write_gauge(FILE *f, const struct metrics *m, const char *name, const char *help,
			size_t offset)
{
	fprintf(f, "# HELP mthpd_%s %s\n# TYPE mthpd_%s gauge\n", name, help, name);
	for (size_t i = 0; i < m->n; i++)
		fprintf(f, "mthpd_%s{policy=\"%s\"} %lu\n", name, m->names[i],
			*(const unsigned long *)(const void *)((const char *)&m->procs[i] + offset));
}

static void prometheus_body(FILE *f, const struct metrics *m)
{
	for (size_t i = 0; i < ARRAY_SIZE(families); i++)
		write_family(f, m, &families[i]);
	write_scanned(f, m, "scanned_ranges", "Populated 2 MiB ranges scanned.",
		      offsetof(struct mthpd_counters, scanned_ranges));
	write_scanned(f, m, "scanned_pages", "Occupied pages in the scanned ranges.",
		      offsetof(struct mthpd_counters, scanned_pages));
	write_scanned(f, m, "filled_pages", "Empty pages the collapses filled: the memory they added.",
		      offsetof(struct mthpd_counters, filled_pages));
	write_scanned(f, m, "refill_backoff",
		      "Blocks not filled again: collapsed by mthpd before, emptied since.",
		      offsetof(struct mthpd_counters, refill_backoff));
	write_gauge(f, m, "processes", "Processes the policy matches (after the last pass).",
		    offsetof(struct metrics_procs, processes));
	write_gauge(f, m, "processes_thp_disabled",
		    "Matched processes with THP disabled for themselves (PR_SET_THP_DISABLE): "
		    "nothing can be collapsed.",
		    offsetof(struct metrics_procs, thp_disabled));
	write_gauge(f, m, "vmas_refused",
		    "VMAs with memory of matched processes that the kernel refuses to collapse "
		    "(MADV_NOHUGEPAGE).",
		    offsetof(struct metrics_procs, vmas_refused));
	fprintf(f,
		"# HELP mthpd_passes_total Passes over the matched processes.\n"
		"# TYPE mthpd_passes_total counter\nmthpd_passes_total %lu\n"
		"# HELP mthpd_last_pass_seconds Duration of the last pass.\n"
		"# TYPE mthpd_last_pass_seconds gauge\nmthpd_last_pass_seconds %.6f\n"
		"# HELP mthpd_backing_off 1 while memory pressure keeps mthpd from collapsing.\n"
		"# TYPE mthpd_backing_off gauge\nmthpd_backing_off %d\n"
		"# HELP mthpd_last_pass_huge_ranges Ranges of the last pass found PMD-mapped "
		"without being read.\n"
		"# TYPE mthpd_last_pass_huge_ranges gauge\nmthpd_last_pass_huge_ranges %lu\n"
		"# HELP mthpd_last_pass_quiet_processes Processes of the last pass left alone: "
		"nothing to do and no page fault since.\n"
		"# TYPE mthpd_last_pass_quiet_processes gauge\nmthpd_last_pass_quiet_processes %lu\n",
		m->passes, m->last_pass_seconds, m->backing_off ? 1 : 0, m->ranges_huge, m->quiet);
	if (m->version)
		fprintf(f, "# HELP mthpd_build_info The version of the running mthpd.\n"
			   "# TYPE mthpd_build_info gauge\nmthpd_build_info{version=\"%s\"} 1\n",
			m->version);
	if (!m->features)
		return;
	fputs("# HELP mthpd_subpmd_collapse 1 if the kernel collapses this size below 2M "
	      "(contrib/kernel patch, size enabled; probed at start and on reload).\n"
	      "# TYPE mthpd_subpmd_collapse gauge\n", f);
	for (unsigned int o = MTHPD_MIN_ORDER; o < MTHPD_PMD_ORDER; o++)
		fprintf(f, "mthpd_subpmd_collapse{size=\"%s\"} %d\n", mthpd_order_name(o),
			mthpd_features_can_collapse(m->features, o) ? 1 : 0);
}

/* Writes PATH.tmp with @body and renames it over PATH.  An empty path writes nothing. */
static int write_atomic(const char *path, void (*body)(FILE *, const struct metrics *),
			const struct metrics *m)
{
	char tmp[4096];
	FILE *f;

	if (!path || !*path)
		return 0;
	f = open_tmp(path, tmp, sizeof(tmp));
	if (!f)
		return -errno;
	body(f, m);
	return finish(f, tmp, path);
}

int metrics_write_prometheus(const struct metrics *m, const char *path)
{
	return write_atomic(path, prometheus_body, m);
}

static void state_counters(FILE *f, const char *who, const struct mthpd_counters *c)
{
	fprintf(f, "%s ranges=%lu pages=%lu filled_pages=%lu refill_backoff=%lu", who,
		c->scanned_ranges, c->scanned_pages, c->filled_pages, c->refill_backoff);
	for (unsigned int o = MTHPD_PMD_ORDER; o >= MTHPD_MIN_ORDER; o--)
		if (c->planned[o] || c->collapse_alloc[o] || c->collapse_alloc_failed[o] ||
		    c->collapse_exceed_none_pte[o] || c->collapse_exceed_swap_pte[o] ||
		    c->collapse_exceed_shared_pte[o] || c->collapse_failed[o])
			fprintf(f,
				" %s:planned=%lu,collapse_alloc=%lu,collapse_alloc_failed=%lu,"
				"exceed_none_pte=%lu,exceed_swap_pte=%lu,exceed_shared_pte=%lu,failed=%lu",
				mthpd_order_name(o), c->planned[o], c->collapse_alloc[o],
				c->collapse_alloc_failed[o], c->collapse_exceed_none_pte[o],
				c->collapse_exceed_swap_pte[o], c->collapse_exceed_shared_pte[o],
				c->collapse_failed[o]);
	fputc('\n', f);
}

static void state_body(FILE *f, const struct metrics *m)
{
	struct timespec ts;

	/*
	 * One "key value..." per line; `mthpd status` prints it.  First who
	 * wrote it and when (daemon/state.h): status believes a pid only with
	 * its start time, comm and boot id, and only a file written in the
	 * last few seconds.
	 */
	(void)clock_gettime(CLOCK_BOOTTIME, &ts);
	fprintf(f, "pid %d\nversion %s\ncomm %s\nstart_time %" PRIu64 "\nboot_id %s\n"
		   "written_boottime_usec %" PRIu64 "\n",
		(int)m->pid, m->version ? m->version : "unknown", m->ident.comm, m->ident.start_time,
		m->ident.boot_id, (uint64_t)ts.tv_sec * 1000000U + (uint64_t)ts.tv_nsec / 1000U);
	fprintf(f,
		"passes %lu\nlast_pass_seconds %.6f\ntargets %lu\nhuge_ranges %lu\n"
		"quiet %lu\nbacking_off %s\n",
		m->passes, m->last_pass_seconds, m->targets, m->ranges_huge, m->quiet,
		m->backing_off ? "yes" : "no");
	if (m->features) {
		char feat[160];

		fprintf(f, "kernel %s\n", mthpd_features_describe(m->features, feat, sizeof(feat)));
	}
	state_counters(f, "total", &m->total);
	for (size_t i = 0; i < m->n; i++) {
		char who[300];

		(void)snprintf(who, sizeof(who), "policy %s processes=%lu thp_disabled=%lu vmas_refused=%lu",
			       m->names[i], m->procs[i].processes, m->procs[i].thp_disabled,
			       m->procs[i].vmas_refused);
		state_counters(f, who, &m->per_policy[i]);
	}
}

int metrics_write_state(const struct metrics *m, const char *path)
{
	return write_atomic(path, state_body, m);
}
