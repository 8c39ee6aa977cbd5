/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "coverage.h"
#include "output.h"
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

/*
 * The first "process" line at or after @r that is of policy @pl's unit
 * @ul (state-file lines, split), split into @prl; NULL when none is left.
 */
static const char *unit_process(const char *r, const struct words *pl, const struct words *ul,
				struct words *prl)
{
	for (; r; r = next_line(r)) {
		if (!starts(r, "process "))
			continue;
		split(r, prl);
		if (prl->n >= 5 && word_is(prl, 3, pl->w[1], pl->len[1]) &&
		    word_is(prl, 4, ul->w[2], ul->len[2]))
			return r;
	}
	return NULL;
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
 * The units of policy @pl (NULL: of every policy --policy lets through)
 * that @f lets through, largest first, in *@ret (to free); returns how
 * many, 0 also without memory.
 */
static size_t policy_units(const char *body, const struct words *pl, const struct coverage_filter *f,
			   struct unit_line **ret)
{
	struct unit_line *v = NULL;
	size_t n = 0, size = 0;
	char w[SHOWN_SIZE];

	for (const char *q = body; q; q = next_line(q)) {
		struct words ul;

		if (!starts(q, "unit "))
			continue;
		split(q, &ul);
		if (ul.n < 3 || !unit_wanted(&ul, f))
			continue;
		if (pl ? !word_is(&ul, 1, pl->w[1], pl->len[1])
		       : f->policy && strcmp(shown(&ul, 1, w), f->policy) != 0)
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
		struct words prl;

		for (const char *r = body; (r = unit_process(r, pl, ul, &prl)); r = next_line(r)) {
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

/* The first "policy" line at or after @q that --policy lets through, split into @pl; NULL: none. */
static const char *filtered_policy(const char *q, const struct coverage_filter *f, struct words *pl)
{
	char name[SHOWN_SIZE];

	for (; q; q = next_line(q)) {
		if (!starts(q, "policy "))
			continue;
		split(q, pl);
		if (pl->n >= 2 && (!f->policy || strcmp(shown(pl, 1, name), f->policy) == 0))
			return q;
	}
	return NULL;
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
	struct words pl;

	for (const char *q = body; (q = filtered_policy(q, f, &pl)); q = next_line(q))
		show_policy(body, &pl, f, out);
}

/*
 * `status --json` (schema in man/mthpd.8, COVERAGE_JSON_SCHEMA): the same
 * lines as JSON members.  Every name is the state file's word decoded
 * (\xHH) and JSON-escaped (daemon/output.c); every number is parsed here,
 * so that a damaged state file still makes valid JSON.
 */

/* Word @i of @l decoded, as JSON; a word that does not decode as it is. */
static void json_word(const struct words *l, unsigned int i, FILE *out)
{
	char raw[1024], copy[1024];

	if (mthpd_text_unhex(l->w[i], (size_t)l->len[i], raw, sizeof(raw)) < 0) {
		(void)snprintf(copy, sizeof(copy), "%.*s", l->len[i], l->w[i]);
		mthpd_output_json_string(out, copy);
	} else {
		mthpd_output_json_string(out, raw);
	}
}

/* A number the state file wrote with "%.1f" or "%.6f", as JSON with @digits; null when it is not one. */
static void json_real(const char *s, int digits, FILE *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(d))
		fputs("null", out);
	else
		fprintf(out, "%.*f", digits, d);
}

/* "thp_disabled,vmas_refused=3" as ["thp_disabled","vmas_refused=3"]; "-" as []. */
static void json_list(const char *s, FILE *out)
{
	bool first = true;

	fputc('[', out);
	while (*s && strcmp(s, "-") != 0) {
		size_t k = strcspn(s, ",");
		char item[100];

		if (k) {
			(void)snprintf(item, sizeof(item), "%.*s", (int)k, s);
			fputs(first ? "" : ",", out);
			mthpd_output_json_string(out, item);
			first = false;
		}
		s += k + (s[k] == ',');
	}
	fputc(']', out);
}

/* The coverage of a policy, unit or process line: the members its words give. */
static void json_coverage(const struct words *l, FILE *out)
{
	char pct[32];

	value(l, "huge_percent", pct, sizeof(pct));
	fprintf(out,
		"\"anon_bytes\":%" PRIu64 ",\"huge_bytes\":%" PRIu64 ",\"huge_percent\":",
		number(l, "anon_bytes"), number(l, "huge_bytes"));
	json_real(pct, 1, out);
	fprintf(out,
		",\"partial_bytes\":%" PRIu64 ",\"collapsed_last_pass_bytes\":%" PRIu64
		",\"collapsed_bytes_total\":%" PRIu64,
		number(l, "partial_bytes"), number(l, "collapsed_last_pass_bytes"),
		number(l, "collapsed_bytes_total"));
}

/* last_result and reason of a unit or process line. */
static void json_result(const struct words *l, FILE *out)
{
	char res[40], why[100];

	value(l, "last_result", res, sizeof(res));
	value(l, "reason", why, sizeof(why));
	fputs(",\"last_result\":", out);
	mthpd_output_json_string(out, res[0] ? res : "-");
	fputs(",\"why_not\":", out);
	json_list(why, out);
}

static bool is_key(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* "key=N" (@n bytes at @s) as "key":N; false (nothing written) when it is not that. */
static bool json_pair(const char *s, size_t n, bool first, FILE *out)
{
	const char *eq = memchr(s, '=', n);
	char v[32], *end;
	uint64_t x;

	if (!eq || !is_key(s, (size_t)(eq - s)) || n - (size_t)(eq - s) - 1 >= sizeof(v))
		return false;
	(void)snprintf(v, sizeof(v), "%.*s", (int)(n - (size_t)(eq - s) - 1), eq + 1);
	if (v[0] < '0' || v[0] > '9')
		return false;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || *end)
		return false;
	fprintf(out, "%s\"%.*s\":%" PRIu64, first ? "" : ",", (int)(eq - s), s, x);
	return true;
}

/*
 * The counters since start, from @p on ("ranges=N pages=N ... 2M:planned=N,
 * collapse_alloc=N,..."): {"ranges":N,...,"by_size":{"2M":{"planned":N,...}}}.
 */
static void json_counters(const char *p, FILE *out)
{
	const char *end = p + strcspn(p, "\n");
	bool first = true, sizes = false;

	fputc('{', out);
	for (const char *w = p; w < end;) {
		size_t n = strcspn(w, " \n");
		const char *colon = memchr(w, ':', n);

		if (!colon && json_pair(w, n, first, out))
			first = false;
		w += n + (w[n] == ' ');
	}
	for (const char *w = p; w < end;) {
		size_t n = strcspn(w, " \n");
		const char *colon = memchr(w, ':', n);

		/* "2M:planned=1,collapse_alloc=1,...": a size is digits and K or M */
		if (colon && colon > w && colon - w < 8 && strspn(w, "0123456789") == (size_t)(colon - w - 1) &&
		    (colon[-1] == 'K' || colon[-1] == 'M')) {
			bool f1 = true;

			fprintf(out, "%s%s\"%.*s\":{", first && !sizes ? "" : ",",
				sizes ? "" : "\"by_size\":{", (int)(colon - w), w);
			sizes = true;
			for (const char *q = colon + 1; q < w + n;) {
				size_t k = strcspn(q, ", \n");

				if (json_pair(q, k, f1, out))
					f1 = false;
				q += k + (q[k] == ',');
			}
			fputc('}', out);
		}
		w += n + (w[n] == ' ');
	}
	fputs(sizes ? "}}" : "}", out);
}

/* The counters of the policy line at @q: the "policy_total NAME ..." line right after it. */
static void json_policy_counters(const char *q, FILE *out)
{
	const char *next = next_line(q), *end, *at = NULL;

	fputs(",\"counters\":", out);
	if (!next || !starts(next, "policy_total ")) {
		fputs("null", out);
		return;
	}
	/* the name may hold blanks (it is written as it is): the counters follow its last " ranges=" */
	end = next + strcspn(next, "\n");
	for (const char *s = next; (s = strstr(s, " ranges=")) && s < end; s++)
		at = s;
	if (!at)
		fputs("null", out);
	else
		json_counters(at + 1, out);
}

/* A line "KEY VALUE" of the daemon's own, or NULL. */
static const char *daemon_line(const char *body, const char *key)
{
	for (const char *q = body; q && *q; q = next_line(q))
		if (starts(q, key) && q[strlen(key)] == ' ')
			return q + strlen(key) + 1;
	return NULL;
}

/* The value of "KEY N" as a JSON number, or null. */
static void json_daemon_u64(const char *body, const char *key, FILE *out)
{
	const char *v = daemon_line(body, key);
	char buf[32];

	fprintf(out, ",\"%s\":", key);
	if (!v || strcspn(v, "\n") >= sizeof(buf)) {
		fputs("null", out);
		return;
	}
	(void)snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(v, "\n"), v);
	if (buf[0] < '0' || buf[0] > '9' || buf[strspn(buf, "0123456789")])
		fputs("null", out);
	else
		fputs(buf, out);
}

/* The rest of a daemon line as a JSON string, or null. */
static void json_daemon_text(const char *v, FILE *out)
{
	_cleanup_free_ char *s = NULL;

	if (!v) {
		fputs("null", out);
		return;
	}
	s = strndup(v, strcspn(v, "\n"));
	if (s)
		mthpd_output_json_string(out, s);
	else
		fputs("null", out);
}

/* The daemon's own lines: its passes, the hold, the kernel, its counters. */
static void json_daemon(const char *body, FILE *out)
{
	const char *v;
	char buf[64];

	json_daemon_u64(body, "passes_total", out);
	fputs(",\"last_pass_seconds\":", out);
	v = daemon_line(body, "last_pass_seconds");
	(void)snprintf(buf, sizeof(buf), "%.*s", v ? (int)strcspn(v, "\n") : 0, v ? v : "");
	json_real(buf, 6, out);
	json_daemon_u64(body, "last_pass_visited", out);
	json_daemon_u64(body, "last_pass_huge_ranges", out);
	json_daemon_u64(body, "last_pass_quiet", out);
	v = daemon_line(body, "backing_off");
	fprintf(out, ",\"backing_off\":%s", !v ? "null" : starts(v, "yes") ? "true" : "false");
	/* "alloc_hold yes (CAUSE), next probe in 1.5 s" or "alloc_hold no" */
	v = daemon_line(body, "alloc_hold");
	if (!v) {
		fputs(",\"alloc_hold\":null", out);
	} else if (starts(v, "yes (")) {
		const char *cause = v + 5, *close = strstr(cause, "), next probe in ");
		const char *eol = v + strcspn(v, "\n");
		_cleanup_free_ char *c = NULL;

		fputs(",\"alloc_hold\":{\"held\":true,\"cause\":", out);
		c = close && close < eol ? strndup(cause, (size_t)(close - cause)) : NULL;
		if (c)
			mthpd_output_json_string(out, c);
		else
			fputs("null", out);
		fputs(",\"next_probe_seconds\":", out);
		buf[0] = '\0';
		if (close && close < eol)
			(void)snprintf(buf, sizeof(buf), "%.*s",
				       (int)strcspn(close + 17, " \n"), close + 17);
		json_real(buf, 1, out);
		fputc('}', out);
	} else {
		fputs(",\"alloc_hold\":{\"held\":false,\"cause\":null,\"next_probe_seconds\":null}", out);
	}
	fputs(",\"kernel\":", out);
	json_daemon_text(daemon_line(body, "kernel"), out);
	fputs(",\"counters\":", out);
	v = daemon_line(body, "total");
	if (v)
		json_counters(v, out);
	else
		fputs("null", out);
	/* written only when the daemon left process lines out */
	if (daemon_line(body, "processes_not_listed"))
		json_daemon_u64(body, "processes_not_listed", out);
	else
		fputs(",\"processes_not_listed\":0", out);
}

/* One process line of a unit, as JSON. */
static void json_process(const struct words *prl, FILE *out)
{
	fprintf(out, "{\"pid\":%" PRIu64 ",\"comm\":", (uint64_t)strtoull(prl->w[1], NULL, 10));
	json_word(prl, 2, out);
	fputc(',', out);
	json_coverage(prl, out);
	json_result(prl, out);
	fputc('}', out);
}

/* One policy, as show_policy() shows it: its units largest first, each list cut at f->limit. */
static void json_policy(const char *body, const char *q, const struct words *pl,
			const struct coverage_filter *f, bool *first, FILE *out)
{
	_cleanup_free_ struct unit_line *units = NULL;
	size_t n = policy_units(body, pl, f, &units), shown_units;
	uint64_t anon = 0, huge = 0;

	if (f->unit && n == 0)
		return;
	fputs(*first ? "" : ",", out);
	*first = false;
	fputs("{\"name\":", out);
	json_word(pl, 1, out);
	fprintf(out, ",\"process_count\":%" PRIu64 ",\"thp_disabled_count\":%" PRIu64
		",\"vmas_refused\":%" PRIu64 ",",
		number(pl, "processes"), number(pl, "thp_disabled"), number(pl, "vmas_refused"));
	json_coverage(pl, out);
	json_policy_counters(q, out);
	shown_units = f->limit && n > f->limit ? f->limit : n;
	fprintf(out, ",\"unit_count\":%zu,\"units\":[", n);
	for (size_t i = 0; i < shown_units; i++) {
		const struct words *ul = &units[i].w;
		size_t procs = 0;

		fputs(i ? ",{\"name\":" : "{\"name\":", out);
		json_word(ul, 2, out);
		fprintf(out, ",\"process_count\":%" PRIu64 ",\"thp_disabled_count\":%" PRIu64 ",",
			number(ul, "processes"), number(ul, "thp_disabled"));
		json_coverage(ul, out);
		json_result(ul, out);
		fputs(",\"processes\":[", out);
		struct words prl;

		for (const char *r = body; (r = unit_process(r, pl, ul, &prl)); r = next_line(r)) {
			if (f->limit && procs++ >= f->limit)
				continue;
			if (!f->limit)
				procs++;
			fputs(procs > 1 ? "," : "", out);
			json_process(&prl, out);
		}
		fprintf(out, "],\"processes_omitted\":%zu}",
			f->limit && procs > f->limit ? procs - f->limit : 0);
	}
	for (size_t i = shown_units; i < n; i++) {
		anon += units[i].anon;
		huge += number(&units[i].w, "huge_bytes");
	}
	fprintf(out,
		"],\"units_omitted\":%zu,\"units_omitted_anon_bytes\":%" PRIu64
		",\"units_omitted_huge_bytes\":%" PRIu64 "}",
		n - shown_units, anon, huge);
}

void coverage_show_json(const char *body, const struct coverage_filter *f, FILE *out)
{
	bool first = true;

	json_daemon(body, out);
	fputs(",\"policies\":[", out);
	struct words pl;

	for (const char *q = body; (q = filtered_policy(q, f, &pl)); q = next_line(q))
		json_policy(body, q, &pl, f, &first, out);
	fputc(']', out);
}

/* daemon_line()'s value of @key, up to the line's end, in @buf; "?" when there is none. */
static const char *body_value(const char *body, const char *key, char *buf, size_t size)
{
	const char *v = daemon_line(body, key);
	size_t n = v ? strcspn(v, "\n") : 0;

	if (!v)
		(void)snprintf(buf, size, "?");
	else
		(void)snprintf(buf, size, "%.*s", n < size ? (int)n : (int)size - 1, v);
	return buf;
}

/* @s in a column of @width: cut with a '~' when longer. */
static void column(FILE *out, const char *s, int width)
{
	if ((int)strlen(s) <= width)
		fprintf(out, "%-*s", width, s);
	else
		fprintf(out, "%.*s~", width - 1, s);
}

void coverage_top(const char *body, const struct coverage_filter *f, unsigned int cols,
		  unsigned int rows, FILE *out)
{
	_cleanup_free_ struct unit_line *units = NULL;
	size_t n = policy_units(body, NULL, f, &units), shown_units;
	char passes[32], secs[32], visited[32], backing[16], hold[160];
	int unit_w, why_w;

	body_value(body, "passes_total", passes, sizeof(passes));
	body_value(body, "last_pass_seconds", secs, sizeof(secs));
	body_value(body, "last_pass_visited", visited, sizeof(visited));
	body_value(body, "backing_off", backing, sizeof(backing));
	body_value(body, "alloc_hold", hold, sizeof(hold));
	fprintf(out, "pass %s (%.1f ms, %s visited); memory pressure: %s; allocation pause: %s\n",
		passes, strtod(secs, NULL) * 1e3, visited,
		strcmp(backing, "yes") == 0 ? "backing off" : "no", hold);
	/* ANON, HUGE, COVERAGE ("[##########] 100.0%") and NOW take 52: UNIT and WHY NOT share the rest */
	cols = cols < 70 ? 70 : cols > 300 ? 300 : cols;
	unit_w = (int)(cols - 52) * 2 / 3;
	why_w = (int)(cols - 52) - unit_w - 1;
	column(out, "UNIT", unit_w);
	fprintf(out, " %9s %9s  %-19s %9s  WHY NOT\n", "ANON", "HUGE", "COVERAGE", "NOW");
	/* the header lines above, and one for the units left out */
	shown_units = rows > 4 ? rows - 4 : 1;
	if (shown_units > n)
		shown_units = n;
	for (size_t i = 0; i < shown_units; i++) {
		const struct words *ul = &units[i].w;
		uint64_t anon = units[i].anon, huge = number(ul, "huge_bytes");
		uint64_t now = number(ul, "collapsed_last_pass_bytes");
		char name[SHOWN_SIZE], why[100], pct[16], a[16], h[16], p[20], bar[11];
		/* to the nearest tenth, as huge_percent */
		unsigned int filled = anon ? (unsigned int)(((huge > anon ? anon : huge) * 10 + anon / 2) / anon) : 0;

		for (unsigned int b = 0; b < 10; b++)
			bar[b] = b < filled ? '#' : '.';
		bar[10] = '\0';
		p[0] = '-';
		p[1] = '\0';
		if (now) {
			p[0] = '+';
			(void)coverage_bytes(now, p + 1, sizeof(p) - 1);
		}
		value(ul, "reason", why, sizeof(why));
		value(ul, "huge_percent", pct, sizeof(pct));
		column(out, shown(ul, 2, name), unit_w);
		fprintf(out, " %9s %9s  [%s] %5s%% %9s  ", coverage_bytes(anon, a, sizeof(a)),
			coverage_bytes(huge, h, sizeof(h)), bar, pct, p);
		if ((int)strlen(why) > why_w)
			(void)snprintf(why + why_w - 1, sizeof(why) - (size_t)why_w + 1, "~");
		fprintf(out, "%s\n", why);
	}
	if (shown_units < n)
		fprintf(out, "(%zu more unit%s: --unit GLOB or a taller terminal)\n", n - shown_units,
			n - shown_units == 1 ? "" : "s");
	else if (n == 0)
		fprintf(out, "(no unit with a matched process%s)\n", f->unit || f->policy ? " here" : "");
}
