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
#include "text.h"
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
	for (size_t i = 0; i < m->nr_units; i++)
		free(m->units[i].unit);
	free(m->units);
	m->units = NULL;
	m->nr_units = 0;
	free(m->rows);
	m->rows = NULL;
	m->nr_rows = m->rows_size = 0;
}

int metrics_unit_collapsed(struct metrics *m, const char *policy, const char *unit, uint64_t bytes)
{
	struct mthpd_counters *c = metrics_policy(m, policy);
	struct metrics_unit *u;
	size_t pi;

	if (!c)
		return -E2BIG;
	pi = (size_t)(c - m->per_policy);
	for (size_t i = 0; i < m->nr_units; i++)
		if (m->units[i].policy == pi && strcmp(m->units[i].unit, unit) == 0) {
			m->units[i].collapsed += bytes;
			return 0;
		}
	if (m->nr_units >= METRICS_MAX_UNITS)
		return -E2BIG;
	/* one more at a time: a unit is added once, on its first collapse */
	u = reallocarray(m->units, m->nr_units + 1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	m->units = u;
	u[m->nr_units] = (struct metrics_unit){.policy = pi, .unit = strdup(unit), .collapsed = bytes};
	if (!u[m->nr_units].unit)
		return -ENOMEM;
	m->nr_units++;
	return 0;
}

int metrics_rows(struct metrics *m, size_t n)
{
	if (n > m->rows_size) {
		struct metrics_row *r = reallocarray(m->rows, n, sizeof(*r));

		if (!r) {
			m->nr_rows = 0;
			return -ENOMEM;
		}
		m->rows = r;
		m->rows_size = n;
	}
	m->nr_rows = n;
	if (n)
		memset(m->rows, 0, n * sizeof(*m->rows));
	return 0;
}

/* By policy, unit, the largest process first, then pid. */
static int row_cmp(const void *a, const void *b)
{
	const struct metrics_row *x = a, *y = b;
	int c;

	if (x->policy != y->policy)
		return x->policy < y->policy ? -1 : 1;
	c = strcmp(x->unit, y->unit);
	if (c)
		return c;
	if (x->anon != y->anon)
		return x->anon > y->anon ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

void metrics_rows_done(struct metrics *m)
{
	if (m->nr_rows > 1)
		qsort(m->rows, m->nr_rows, sizeof(*m->rows), row_cmp);
}

/* The processes of one policy and unit: rows [first, first + n) of the sorted rows. */
struct unit_sum {
	size_t first;
	uint64_t n, thp_disabled, anon, huge, collapsed_pass, partial;
};

/* The group starting at row @i; returns the row after it. */
static size_t unit_sum(const struct metrics *m, size_t i, struct unit_sum *u)
{
	const struct metrics_row *r0 = &m->rows[i];

	*u = (struct unit_sum){.first = i};
	for (; i < m->nr_rows && m->rows[i].policy == r0->policy &&
	       strcmp(m->rows[i].unit, r0->unit) == 0;
	     i++) {
		u->n++;
		u->anon += m->rows[i].anon;
		u->huge += m->rows[i].huge;
		u->partial += m->rows[i].partial;
		u->collapsed_pass += m->rows[i].collapsed_pass;
		u->thp_disabled += m->rows[i].thp_disabled;
	}
	return i;
}

static uint64_t unit_collapsed(const struct metrics *m, size_t policy, const char *unit)
{
	for (size_t i = 0; i < m->nr_units; i++)
		if (m->units[i].policy == policy && strcmp(m->units[i].unit, unit) == 0)
			return m->units[i].collapsed;
	return 0;
}

static bool has_unit(const struct metrics *m, size_t policy, const char *unit)
{
	for (size_t i = 0; i < m->nr_units; i++)
		if (m->units[i].policy == policy && strcmp(m->units[i].unit, unit) == 0)
			return true;
	return false;
}

static double percent(uint64_t part, uint64_t whole)
{
	if (!whole)
		return 0;
	return part >= whole ? 100.0 : 100.0 * (double)part / (double)whole;
}

/*
 * A new file next to @path for writing (daemon/state.h: created O_EXCL
 * under a random name, never through a planted link); finish() renames it
 * over @path.
 */
static FILE *open_tmp(const char *path, struct state_tmp *t)
{
	int fd, r;
	FILE *f;

	r = state_tmp_create(path, t, &fd);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	f = fdopen(fd, "we");
	if (!f) {
		r = errno;
		(void)close(fd);
		state_tmp_discard(t);
		errno = r;
	}
	return f;
}

/*
 * No fsync: the files are rewritten after every pass (up to 10 a second),
 * readers only need never to see half a file, which the rename gives, and
 * after a crash the next pass writes them anew.  fsync was 3% of an idle
 * daemon's CPU (perf, 100 settled processes, a pass every 100 ms).
 */
static int finish(FILE *f, struct state_tmp *t)
{
	bool bad = ferror(f) != 0;

	errno = 0;
	if (fflush(f) != 0)
		bad = true;
	if (fclose(f) != 0)
		bad = true;
	if (bad) {
		int r = errno ? -errno : -EIO;

		state_tmp_discard(t);
		return r;
	}
	return state_tmp_commit(t);
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
	F(collapse_failed,
	  "Collapses that failed for other reasons (a process that exited is none), by size."),
	F(planned, "Blocks the order walk planned to collapse (also in dry runs), by size."),
};

static void write_family(FILE *f, const struct metrics *m, const struct family *fam)
{
	fprintf(f, "# HELP mthpd_%s_total %s\n# TYPE mthpd_%s_total counter\n", fam->name, fam->help,
		fam->name);
	/*
	 * Per policy only: an unlabelled total beside its own breakdown would
	 * double every sum() over the family (issue 25); m->total is their
	 * sum, sum by (size) (...) in PromQL.
	 */
	for (size_t i = 0; i < m->n; i++) {
		const struct mthpd_counters *c = &m->per_policy[i];
		const unsigned long *v = (const unsigned long *)(const void *)((const char *)c + fam->offset);

		for (unsigned int o = MTHPD_MIN_ORDER; o <= MTHPD_PMD_ORDER; o++)
			fprintf(f, "mthpd_%s_total{policy=\"%s\",size=\"%s\"} %lu\n", fam->name,
				m->names[i], mthpd_order_name(o), v[o]);
	}
}

/* One counter unlabelled by size, per policy (no total beside them, as above). */
static void write_scanned(FILE *f, const struct metrics *m, const char *name, const char *help,
			  size_t offset)
{
	fprintf(f, "# HELP mthpd_%s_total %s\n# TYPE mthpd_%s_total counter\n", name, help, name);
	for (size_t i = 0; i < m->n; i++) {
		const struct mthpd_counters *c = &m->per_policy[i];
		unsigned long v = *(const unsigned long *)(const void *)((const char *)c + offset);

		fprintf(f, "mthpd_%s_total{policy=\"%s\"} %lu\n", name, m->names[i], v);
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

/*
 * A label value: backslash, double quote and newline escaped (the text
 * format's rule), after lib/text.c's escape of what another user named: a
 * unit's cgroup may hold control bytes or bytes that are not UTF-8, which
 * the exposition format does not allow and which would make a scraper
 * drop the whole file.  They read "\\xHH" here, as `mthpd status` shows them.
 */
static void put_label(FILE *f, const char *v)
{
	_cleanup_free_ char *e = mthpd_text_escape_dup(v);

	for (v = e ? e : "?"; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void unit_labels(FILE *f, const struct metrics *m, size_t policy, const char *unit)
{
	fputs("{policy=\"", f);
	put_label(f, m->names[policy]);
	fputs("\",unit=\"", f);
	put_label(f, unit);
	fputs("\"}", f);
}

/* A unit as metrics_max_units ranks them: the most anonymous memory first. */
struct unit_rank {
	size_t policy;
	const char *unit;
	uint64_t anon, collapsed;
};

static int rank_cmp(const void *a, const void *b)
{
	const struct unit_rank *x = a, *y = b;

	if (x->anon != y->anon)
		return x->anon > y->anon ? -1 : 1;
	if (x->collapsed != y->collapsed)
		return x->collapsed > y->collapsed ? -1 : 1;
	if (x->policy != y->policy)
		return x->policy < y->policy ? -1 : 1;
	return strcmp(x->unit, y->unit);
}

static int key_cmp(const void *a, const void *b)
{
	const struct unit_rank *x = a, *y = b;

	if (x->policy != y->policy)
		return x->policy < y->policy ? -1 : 1;
	return strcmp(x->unit, y->unit);
}

/*
 * The units with series of their own: all of them (@all) when they are
 * no more than max_units, else the max_units largest, sorted by policy
 * and unit for listed().  A unit ranks by the anonymous memory of its
 * processes now; one whose processes are gone keeps only its counter
 * and ranks by it, below every unit with memory.
 */
struct listed {
	bool all;
	struct unit_rank *v;
	size_t n;
};

static void listed_make(const struct metrics *m, struct listed *l)
{
	size_t total = 0, n = 0;

	*l = (struct listed){.all = true};
	for (size_t i = 0; i < m->nr_rows; total++) {
		struct unit_sum u;

		i = unit_sum(m, i, &u);
	}
	total += m->nr_units; /* an upper bound: a unit may be in both */
	if (total <= m->max_units)
		return;
	/* without memory for the ranking, every unit keeps its series, as before the cap */
	l->v = calloc(total, sizeof(*l->v));
	if (!l->v)
		return;
	for (size_t i = 0; i < m->nr_rows;) {
		struct unit_sum u;

		i = unit_sum(m, i, &u);
		l->v[n++] = (struct unit_rank){.policy = m->rows[u.first].policy,
					       .unit = m->rows[u.first].unit,
					       .anon = u.anon,
					       .collapsed = unit_collapsed(m, m->rows[u.first].policy,
									   m->rows[u.first].unit)};
	}
	/* the counters of units whose processes are gone; one with processes is there already */
	qsort(l->v, n, sizeof(*l->v), key_cmp);
	for (size_t i = 0, rows = n; i < m->nr_units; i++) {
		struct unit_rank k = {.policy = m->units[i].policy, .unit = m->units[i].unit};

		if (!bsearch(&k, l->v, rows, sizeof(*l->v), key_cmp)) {
			k.collapsed = m->units[i].collapsed;
			l->v[n++] = k;
		}
	}
	qsort(l->v, n, sizeof(*l->v), rank_cmp);
	l->n = n < m->max_units ? n : m->max_units;
	qsort(l->v, l->n, sizeof(*l->v), key_cmp);
	l->all = false;
}

static bool listed(const struct listed *l, size_t policy, const char *unit)
{
	struct unit_rank k = {.policy = policy, .unit = unit};

	return l->all || bsearch(&k, l->v, l->n, sizeof(*l->v), key_cmp);
}

/* The label of the units of a policy past metrics_max_units: no unit name or cgroup path reads so. */
#define OTHER_UNITS "(other)"

/*
 * The per-unit families: what the processes of each policy and unit are
 * like now, for the metrics_max_units largest units; the rest of each
 * policy summed under unit="(other)", so that a node with a thousand
 * units does not write a thousand series per family.
 */
static void write_units(FILE *f, const struct metrics *m)
{
	static const struct {
		const char *name, *help;
		size_t offset; /* of the gauge in struct unit_sum */
	} gauges[] = {
		{"unit_processes", "Matched processes of the unit (its cgroup path outside any unit).",
		 offsetof(struct unit_sum, n)},
		{"unit_anon_bytes", "Their anonymous memory (RssAnon).", offsetof(struct unit_sum, anon)},
		{"unit_huge_bytes", "Of it, in PMD-mapped THPs, as of each process's last whole scan (or "
		 "smaps_rollup: after a collapse, with THP disabled).",
		 offsetof(struct unit_sum, huge)},
		{"unit_partial_bytes",
		 "Memory held by 2M folios they map in part, which nothing maps and RssAnon does "
		 "not count, as of each process's last whole scan.",
		 offsetof(struct unit_sum, partial)},
		{"unit_collapsed_last_pass_bytes", "Bytes mthpd collapsed in them in the last pass.",
		 offsetof(struct unit_sum, collapsed_pass)},
		{"unit_processes_thp_disabled",
		 "Of them, processes with THP disabled for themselves: nothing can be collapsed.",
		 offsetof(struct unit_sum, thp_disabled)},
	};
	_cleanup_free_ uint64_t *other = calloc(m->n ? m->n : 1, sizeof(*other));
	_cleanup_free_ bool *other_seen = calloc(m->n ? m->n : 1, sizeof(*other_seen));
	_cleanup_free_ uint64_t *units = calloc(m->n ? m->n : 1, sizeof(*units));
	struct listed l;

	listed_make(m, &l);
	if (!other || !other_seen || !units)
		l.all = true; /* nowhere to sum the others: every unit its own series */
	for (size_t i = 0; i < m->nr_rows;) {
		struct unit_sum u;

		i = unit_sum(m, i, &u);
		if (units)
			units[m->rows[u.first].policy]++;
	}
	fputs("# HELP mthpd_units Units (or cgroups outside any) with matched processes. The "
	      "metrics_max_units largest have unit series of their own, the others of a policy are "
	      "summed in unit=\"" OTHER_UNITS "\".\n# TYPE mthpd_units gauge\n", f);
	for (size_t p = 0; p < m->n && units; p++) {
		fputs("mthpd_units{policy=\"", f);
		put_label(f, m->names[p]);
		fprintf(f, "\"} %" PRIu64 "\n", units[p]);
	}
	for (size_t k = 0; k < ARRAY_SIZE(gauges); k++) {
		fprintf(f, "# HELP mthpd_%s %s\n# TYPE mthpd_%s gauge\n", gauges[k].name,
			gauges[k].help, gauges[k].name);
		for (size_t i = 0; i < m->nr_rows;) {
			size_t policy = m->rows[i].policy;
			uint64_t v;
			struct unit_sum u;

			i = unit_sum(m, i, &u);
			v = *(const uint64_t *)(const void *)((const char *)&u + gauges[k].offset);
			if (!listed(&l, policy, m->rows[u.first].unit)) {
				other[policy] += v;
				other_seen[policy] = true;
			} else {
				fprintf(f, "mthpd_%s", gauges[k].name);
				unit_labels(f, m, policy, m->rows[u.first].unit);
				fprintf(f, " %" PRIu64 "\n", v);
			}
			/* the others of a policy after its last unit (rows are sorted by policy) */
			if (!l.all && other_seen[policy] &&
			    (i == m->nr_rows || m->rows[i].policy != policy)) {
				fprintf(f, "mthpd_%s", gauges[k].name);
				unit_labels(f, m, policy, OTHER_UNITS);
				fprintf(f, " %" PRIu64 "\n", other[policy]);
				other[policy] = 0;
				other_seen[policy] = false;
			}
		}
	}
	/*
	 * Every matched unit has its series, 0 until something is collapsed
	 * in it (a series that appears only at the first collapse makes
	 * rate() miss that collapse); kept for units whose processes are
	 * gone: a counter does not vanish.  The others of a policy are summed:
	 * that sum falls when a unit leaves it for a series of its own, which
	 * rate() takes for a counter reset.
	 */
	fputs("# HELP mthpd_unit_collapsed_bytes_total Bytes mthpd collapsed in the unit's "
	      "processes since it started.\n# TYPE mthpd_unit_collapsed_bytes_total counter\n", f);
	for (size_t i = 0; i < m->nr_rows;) {
		const struct metrics_row *r = &m->rows[i];
		struct unit_sum u;

		i = unit_sum(m, i, &u);
		if (has_unit(m, r->policy, r->unit))
			continue;
		if (!listed(&l, r->policy, r->unit)) {
			other_seen[r->policy] = true;
			continue;
		}
		fputs("mthpd_unit_collapsed_bytes_total", f);
		unit_labels(f, m, r->policy, r->unit);
		fputs(" 0\n", f);
	}
	for (size_t i = 0; i < m->nr_units; i++) {
		if (!listed(&l, m->units[i].policy, m->units[i].unit)) {
			other[m->units[i].policy] += m->units[i].collapsed;
			other_seen[m->units[i].policy] = true;
			continue;
		}
		fputs("mthpd_unit_collapsed_bytes_total", f);
		unit_labels(f, m, m->units[i].policy, m->units[i].unit);
		fprintf(f, " %" PRIu64 "\n", m->units[i].collapsed);
	}
	for (size_t p = 0; p < m->n && !l.all; p++) {
		if (!other_seen[p])
			continue;
		fputs("mthpd_unit_collapsed_bytes_total", f);
		unit_labels(f, m, p, OTHER_UNITS);
		fprintf(f, " %" PRIu64 "\n", other[p]);
	}
	free(l.v);
}

/* Seconds until the allocation pause's next probe: 0 without a pause, or when it is due. */
static double alloc_probe_seconds(const struct metrics *m)
{
	struct timespec ts;
	uint64_t now;

	if (!m->alloc_hold)
		return 0;
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
	return m->alloc_probe_usec > now ? (double)(m->alloc_probe_usec - now) / 1e6 : 0;
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
	write_scanned(f, m, "split_folios",
		      "2M folios mapped in part (pages given back by the allocator) that mthpd "
		      "split, so that the kernel freed what nothing mapped.",
		      offsetof(struct mthpd_counters, split_folios));
	write_scanned(f, m, "released_pages",
		      "Pages those splits freed: allocated, mapped nowhere, in no RssAnon.",
		      offsetof(struct mthpd_counters, released_pages));
	write_scanned(f, m, "pace_rests",
		      "pace=auto: rests taken because the service felt the work (it waited for "
		      "CPU or memory, or faulted while a collapse ran).",
		      offsetof(struct mthpd_counters, pace_rests));
	write_scanned(f, m, "pace_rests_fault",
		      "Of those, after the service faulted while a collapse ran (blocked by it).",
		      offsetof(struct mthpd_counters, pace_rests_fault));
	write_gauge(f, m, "processes", "Processes the policy matches (after the last pass).",
		    offsetof(struct metrics_procs, processes));
	write_gauge(f, m, "anon_bytes", "Anonymous memory (RssAnon) of the matched processes.",
		    offsetof(struct metrics_procs, anon));
	write_gauge(f, m, "huge_bytes",
		    "Of it, in PMD-mapped THPs, as of each process's last whole scan (or "
		    "smaps_rollup: after a collapse, with THP disabled).",
		    offsetof(struct metrics_procs, huge));
	write_gauge(f, m, "partial_bytes",
		    "Memory held by 2M folios the matched processes map in part, which nothing "
		    "maps and RssAnon does not count, as of each process's last whole scan.",
		    offsetof(struct metrics_procs, partial));
	write_gauge(f, m, "processes_thp_disabled",
		    "Matched processes with THP disabled for themselves (PR_SET_THP_DISABLE): "
		    "nothing can be collapsed.",
		    offsetof(struct metrics_procs, thp_disabled));
	write_gauge(f, m, "vmas_refused",
		    "VMAs with memory of matched processes that the kernel refuses to collapse "
		    "(MADV_NOHUGEPAGE).",
		    offsetof(struct metrics_procs, vmas_refused));
	write_units(f, m);
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
	fprintf(f,
		"# HELP mthpd_alloc_hold 1 while a huge page that could not be allocated keeps "
		"mthpd from collapsing (not memory pressure: mthpd_backing_off).\n"
		"# TYPE mthpd_alloc_hold gauge\nmthpd_alloc_hold %d\n"
		"# HELP mthpd_alloc_hold_next_probe_seconds Seconds until the allocation pause "
		"tries one range again; 0 without a pause.\n"
		"# TYPE mthpd_alloc_hold_next_probe_seconds gauge\n"
		"mthpd_alloc_hold_next_probe_seconds %.1f\n",
		m->alloc_hold ? 1 : 0, alloc_probe_seconds(m));
	fprintf(f,
		"# HELP mthpd_config_last_reload_successful 0 while the last reload (SIGHUP, or a "
		"change the watch saw) was refused and the configuration before it is in use.\n"
		"# TYPE mthpd_config_last_reload_successful gauge\n"
		"mthpd_config_last_reload_successful %d\n"
		"# HELP mthpd_config_reload_failures_total Reloads refused since mthpd started.\n"
		"# TYPE mthpd_config_reload_failures_total counter\n"
		"mthpd_config_reload_failures_total %lu\n",
		m->reload_failed ? 0 : 1, m->reload_failures);
	fprintf(f,
		"# HELP mthpd_prefault 1 if a 2 MiB page is faulted in and freed before each "
		"2M collapse (prefault= in mthpd.conf; auto: where the host takes free pages back).\n"
		"# TYPE mthpd_prefault gauge\n"
		"mthpd_prefault %d\n",
		m->prefault ? 1 : 0);
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

/* Writes a new file with @body and renames it over PATH.  An empty path writes nothing. */
static int write_atomic(const char *path, void (*body)(FILE *, const struct metrics *),
			const struct metrics *m)
{
	struct state_tmp t;
	FILE *f;

	if (!path || !*path)
		return 0;
	f = open_tmp(path, &t);
	if (!f)
		return -errno;
	body(f, m);
	return finish(f, &t);
}

int metrics_write_prometheus(const struct metrics *m, const char *path)
{
	return write_atomic(path, prometheus_body, m);
}

static void state_counters(FILE *f, const char *who, const struct mthpd_counters *c)
{
	fprintf(f, "%s ranges=%lu pages=%lu filled_pages=%lu refill_backoff=%lu split_folios=%lu "
		"released_pages=%lu", who, c->scanned_ranges, c->scanned_pages, c->filled_pages,
		c->refill_backoff, c->split_folios, c->released_pages);
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

/*
 * One word of a state-file line: a unit, a cgroup path or a comm may hold
 * spaces; those, controls and the backslash are written \xHH.
 */
static void put_word(FILE *f, const char *w)
{
	if (!*w)
		fputc('-', f);
	for (; *w; w++) {
		unsigned char c = (unsigned char)*w;

		if (c <= ' ' || c == 0x7f || c == '\\')
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

/* The bytes of the blocks collapsed, all sizes. */
static uint64_t collapsed_bytes(const struct mthpd_counters *c)
{
	uint64_t b = 0;

	for (unsigned int o = MTHPD_MIN_ORDER; o <= MTHPD_PMD_ORDER; o++)
		b += (uint64_t)c->collapse_alloc[o] * (MTHPD_PAGE_SIZE << o);
	return b;
}

static void state_coverage(FILE *f, uint64_t anon, uint64_t huge, uint64_t partial, uint64_t pass,
			   uint64_t total)
{
	fprintf(f,
		" anon_bytes=%" PRIu64 " huge_bytes=%" PRIu64 " huge_percent=%.1f"
		" partial_bytes=%" PRIu64 " collapsed_last_pass_bytes=%" PRIu64
		" collapsed_bytes_total=%" PRIu64,
		anon, huge, percent(huge, anon), partial, pass, total);
}

/* "unit POLICY UNIT ..." and, largest first, "process PID COMM POLICY UNIT ..." */
static void state_units(FILE *f, const struct metrics *m)
{
	size_t listed = 0;

	for (size_t i = 0; i < m->nr_rows;) {
		const struct metrics_row *big;
		const char *reason = "-";
		struct unit_sum u;

		i = unit_sum(m, i, &u);
		big = &m->rows[u.first];
		for (size_t k = u.first; k < i && strcmp(reason, "-") == 0; k++)
			reason = m->rows[k].reason;
		fputs("unit ", f);
		put_word(f, m->names[big->policy]);
		fputc(' ', f);
		put_word(f, big->unit);
		fprintf(f, " processes=%" PRIu64 " thp_disabled=%" PRIu64, u.n, u.thp_disabled);
		state_coverage(f, u.anon, u.huge, u.partial, u.collapsed_pass,
			       unit_collapsed(m, big->policy, big->unit));
		fprintf(f, " last_result=%s reason=%s\n", big->last_result, reason);
		for (size_t k = u.first; k < i && listed < METRICS_STATE_MAX_PROCS; k++, listed++) {
			const struct metrics_row *r = &m->rows[k];

			fprintf(f, "process %d ", (int)r->pid);
			put_word(f, r->comm);
			fputc(' ', f);
			put_word(f, m->names[r->policy]);
			fputc(' ', f);
			put_word(f, r->unit);
			state_coverage(f, r->anon, r->huge, r->partial, r->collapsed_pass, r->collapsed);
			fprintf(f, " last_result=%s reason=%s\n", r->last_result, r->reason);
		}
	}
	if (listed < m->nr_rows)
		fprintf(f, "processes_not_listed %zu\n", m->nr_rows - listed);
}

static void state_body(FILE *f, const struct metrics *m)
{
	struct timespec ts;

	/*
	 * One "key value..." per line; `mthpd status` shows it.  First who
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
		"passes_total %lu\nlast_pass_seconds %.6f\nlast_pass_visited %lu\n"
		"last_pass_huge_ranges %lu\nlast_pass_quiet %lu\nbacking_off %s\n",
		m->passes, m->last_pass_seconds, m->targets, m->ranges_huge, m->quiet,
		m->backing_off ? "yes" : "no");
	if (m->alloc_hold)
		fprintf(f, "alloc_hold yes (%s), next probe in %.1f s\n", m->alloc_cause,
			alloc_probe_seconds(m));
	else
		fprintf(f, "alloc_hold no\n");
	if (m->features) {
		char feat[160];

		fprintf(f, "kernel %s\n", mthpd_features_describe(m->features, feat, sizeof(feat)));
	}
	state_counters(f, "total", &m->total);
	for (size_t i = 0; i < m->n; i++) {
		const struct metrics_procs *p = &m->procs[i];
		char who[300];

		fputs("policy ", f);
		put_word(f, m->names[i]); /* as on the unit and process lines */
		fprintf(f, " processes=%lu thp_disabled=%lu vmas_refused=%lu", p->processes,
			p->thp_disabled, p->vmas_refused);
		state_coverage(f, p->anon, p->huge, p->partial, p->collapsed_pass,
			       collapsed_bytes(&m->per_policy[i]));
		fputc('\n', f);
		(void)snprintf(who, sizeof(who), "policy_total %s", m->names[i]);
		state_counters(f, who, &m->per_policy[i]);
	}
	state_units(f, m);
}

int metrics_write_state(const struct metrics *m, const char *path)
{
	return write_atomic(path, state_body, m);
}
