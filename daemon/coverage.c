/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <fnmatch.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "coverage.h"
#include "text.h"
#include "util.h"

const char *coverage_bytes(uint64_t bytes, char *buf, size_t size)
{
	return mthpd_text_bytes(bytes, buf, size);
}

#define MAX_WORDS 32

/* One line of the state file, cut into its space-separated words (not copied). */
struct words {
	const char *w[MAX_WORDS];
	int len[MAX_WORDS];
	unsigned int n;
};

static void split(const char *line, struct words *ret)
{
	const char *end = line + strcspn(line, "\n");

	ret->n = 0;
	while (line < end && ret->n < MAX_WORDS) {
		size_t k = strcspn(line, " \n");

		if (k) {
			ret->w[ret->n] = line;
			ret->len[ret->n++] = (int)k;
		}
		line += k + (line[k] == ' ');
	}
}

static bool word_is(const struct words *l, unsigned int i, const char *s, int len)
{
	return i < l->n && l->len[i] == len && memcmp(l->w[i], s, (size_t)len) == 0;
}

/* The value of KEY=value among the words of @l, "" when absent. */
static void value(const struct words *l, const char *key, char *buf, size_t size)
{
	size_t klen = strlen(key);

	buf[0] = '\0';
	for (unsigned int i = 0; i < l->n; i++)
		if ((size_t)l->len[i] > klen && strncmp(l->w[i], key, klen) == 0 &&
		    l->w[i][klen] == '=') {
			(void)snprintf(buf, size, "%.*s", l->len[i] - (int)klen - 1, l->w[i] + klen + 1);
			return;
		}
}

static uint64_t number(const struct words *l, const char *key)
{
	char v[32];

	value(l, key, v, sizeof(v));
	return strtoull(v, NULL, 10);
}

/* "anon, huge (%), last pass, total" of a unit or process line, as columns. */
static void coverage_columns(const struct words *l, FILE *out)
{
	char a[16], h[16], p[16], t[16], pct[16], res[40], why[100];

	value(l, "huge_percent", pct, sizeof(pct));
	value(l, "last_result", res, sizeof(res));
	value(l, "reason", why, sizeof(why));
	fprintf(out, " %10s %10s %5s%% %10s %10s  %-16s %s\n",
		coverage_bytes(number(l, "anon_bytes"), a, sizeof(a)),
		coverage_bytes(number(l, "huge_bytes"), h, sizeof(h)), pct,
		coverage_bytes(number(l, "collapsed_last_pass_bytes"), p, sizeof(p)),
		coverage_bytes(number(l, "collapsed_bytes_total"), t, sizeof(t)), res, why);
}

/*
 * Word @i of @l (a policy, a unit, a comm) as an operator reads it: the
 * state file's \xHH decoded (a unit is then shown as systemctl shows it,
 * "foo\x20bar.service"), and escaped for a terminal (lib/text.h).
 */
#define SHOWN_SIZE MTHPD_TEXT_ESCAPED_SIZE(1024)
static const char *shown(const struct words *l, unsigned int i, char buf[SHOWN_SIZE])
{
	char raw[1024];

	if (mthpd_text_unhex(l->w[i], (size_t)l->len[i], raw, sizeof(raw)) < 0)
		(void)mthpd_text_escape_mem(l->w[i], (size_t)l->len[i], buf, SHOWN_SIZE);
	else
		(void)mthpd_text_escape(raw, buf, SHOWN_SIZE);
	return buf;
}

static const char *next_line(const char *p)
{
	p = strchr(p, '\n');
	return p ? p + 1 : NULL;
}

static bool starts(const char *p, const char *word)
{
	return strncmp(p, word, strlen(word)) == 0;
}

/* A unit line of the policy being shown, and its anonymous memory: the order of the table. */
struct unit_line {
	struct words w;
	uint64_t anon;
};

static int unit_line_cmp(const void *a, const void *b)
{
	const struct unit_line *x = a, *y = b;
	int n = x->w.len[2] < y->w.len[2] ? x->w.len[2] : y->w.len[2], c;

	if (x->anon != y->anon)
		return x->anon > y->anon ? -1 : 1;
	c = memcmp(x->w.w[2], y->w.w[2], (size_t)n);
	return c ? c : x->w.len[2] - y->w.len[2];
}

static bool unit_wanted(const struct words *ul, const struct coverage_filter *f)
{
	char w[SHOWN_SIZE];

	return !f->unit || fnmatch(f->unit, shown(ul, 2, w), 0) == 0;
}

/*
 * The units of policy @pl that @f lets through, largest first, in
 * *@ret (to free); returns how many, 0 also without memory.
 */
static size_t policy_units(const char *body, const struct words *pl, const struct coverage_filter *f,
			   struct unit_line **ret)
{
	struct unit_line *v = NULL;
	size_t n = 0, size = 0;

	for (const char *q = body; q; q = next_line(q)) {
		struct words ul;

		if (!starts(q, "unit "))
			continue;
		split(q, &ul);
		if (ul.n < 3 || !word_is(&ul, 1, pl->w[1], pl->len[1]) || !unit_wanted(&ul, f))
			continue;
		if (n == size) {
			struct unit_line *nv = reallocarray(v, size ? 2 * size : 64, sizeof(*v));

			if (!nv)
				break;
			v = nv;
			size = size ? 2 * size : 64;
		}
		v[n++] = (struct unit_line){.w = ul, .anon = number(&ul, "anon_bytes")};
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), unit_line_cmp);
	*ret = v;
	return n;
}

/*
 * The block of one policy: its totals in a sentence, then its units,
 * largest first, and their processes (largest first, as the daemon
 * writes them), each list cut at f->limit with a line for the rest.
 */
static void show_policy(const char *body, const struct words *pl, const struct coverage_filter *f,
			FILE *out)
{
	char a[16], h[16], p[16], t[16], pct[16], name[SHOWN_SIZE], w[SHOWN_SIZE];
	_cleanup_free_ struct unit_line *units = NULL;
	size_t n = policy_units(body, pl, f, &units), shown_units;
	int width = 24;

	if (f->unit && n == 0)
		return; /* nothing of it matches --unit */
	value(pl, "huge_percent", pct, sizeof(pct));
	fprintf(out,
		"\npolicy %s: %" PRIu64 " process%s (%" PRIu64 " with THP disabled, %" PRIu64
		" VMAs refused); anon %s, huge %s (%s%%); collapsed %s in the last pass, %s in total\n",
		shown(pl, 1, name), number(pl, "processes"), number(pl, "processes") == 1 ? "" : "es",
		number(pl, "thp_disabled"), number(pl, "vmas_refused"),
		coverage_bytes(number(pl, "anon_bytes"), a, sizeof(a)),
		coverage_bytes(number(pl, "huge_bytes"), h, sizeof(h)), pct,
		coverage_bytes(number(pl, "collapsed_last_pass_bytes"), p, sizeof(p)),
		coverage_bytes(number(pl, "collapsed_bytes_total"), t, sizeof(t)));
	if (number(pl, "partial_bytes"))
		fprintf(out,
			"  and %s more in 2M folios its processes map in part: nothing maps it and "
			"RssAnon does not count it (split_partial=no, or not split yet)\n",
			coverage_bytes(number(pl, "partial_bytes"), a, sizeof(a)));
	shown_units = f->limit && n > f->limit ? f->limit : n;
	for (size_t i = 0; i < shown_units; i++)
		if ((int)strlen(shown(&units[i].w, 2, w)) > width)
			width = (int)strlen(w);
	if (width > 60)
		width = 60;
	if (shown_units)
		fprintf(out, "  %-*s %6s %10s %10s %6s %10s %10s  %-16s %s\n", width, "UNIT", "PROCS",
			"ANON", "HUGE", "%", "LAST PASS", "TOTAL", "LAST RESULT", "WHY NOT");
	for (size_t i = 0; i < shown_units; i++) {
		const struct words *ul = &units[i].w;
		size_t procs = 0;

		fprintf(out, "  %-*s %6" PRIu64, width, shown(ul, 2, w), number(ul, "processes"));
		coverage_columns(ul, out);
		for (const char *r = body; r; r = next_line(r)) {
			struct words prl;

			if (!starts(r, "process "))
				continue;
			split(r, &prl);
			if (prl.n < 5 || !word_is(&prl, 3, pl->w[1], pl->len[1]) ||
			    !word_is(&prl, 4, ul->w[2], ul->len[2]))
				continue;
			if (f->limit && procs++ >= f->limit)
				continue;
			/* the process's pid and comm under its unit, the columns as the unit's */
			fprintf(out, "    %-8.*s %-*s", prl.len[1], prl.w[1], width - 4,
				shown(&prl, 2, w));
			coverage_columns(&prl, out);
		}
		if (f->limit && procs > f->limit)
			fprintf(out, "    (%zu more process%s of this unit: --limit 0 shows every one)\n",
				procs - f->limit, procs - f->limit == 1 ? "" : "es");
	}
	if (shown_units < n) {
		uint64_t anon = 0, huge = 0;

		for (size_t i = shown_units; i < n; i++) {
			anon += units[i].anon;
			huge += number(&units[i].w, "huge_bytes");
		}
		fprintf(out, "  (%zu more unit%s, anon %s, huge %s: --limit 0 shows every one, --unit GLOB some)\n",
			n - shown_units, n - shown_units == 1 ? "" : "s",
			coverage_bytes(anon, a, sizeof(a)), coverage_bytes(huge, h, sizeof(h)));
	}
}

void coverage_show(const char *body, const struct coverage_filter *f, FILE *out)
{
	/* first what is not coverage, as it is (its control bytes escaped) */
	for (const char *q = body; q; q = next_line(q)) {
		size_t n = strcspn(q, "\n");
		_cleanup_free_ char *line = NULL;

		if (!*q)
			break;
		if (starts(q, "policy ") || starts(q, "unit ") || starts(q, "process "))
			continue;
		line = malloc(MTHPD_TEXT_ESCAPED_SIZE(n));
		if (line)
			(void)mthpd_text_escape_mem(q, n, line, MTHPD_TEXT_ESCAPED_SIZE(n));
		fprintf(out, "%s\n", line ? line : "(out of memory)");
	}
	for (const char *q = body; q; q = next_line(q)) {
		char name[SHOWN_SIZE];
		struct words pl;

		if (!starts(q, "policy "))
			continue;
		split(q, &pl);
		if (pl.n < 2 || (f->policy && strcmp(shown(&pl, 1, name), f->policy) != 0))
			continue;
		show_policy(body, &pl, f, out);
	}
}
