/* SPDX-License-Identifier: GPL-2.0-or-later */
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

/* The block of one policy: its totals in a sentence, then its units and their processes. */
static void show_policy(const char *body, const struct words *pl, FILE *out)
{
	char a[16], h[16], p[16], t[16], pct[16], name[SHOWN_SIZE], w[SHOWN_SIZE];
	int width = 24;

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
	for (const char *q = body; q; q = next_line(q)) {
		struct words ul;

		if (!starts(q, "unit "))
			continue;
		split(q, &ul);
		if (ul.n >= 3 && word_is(&ul, 1, pl->w[1], pl->len[1]) &&
		    (int)strlen(shown(&ul, 2, w)) > width)
			width = (int)strlen(w);
	}
	if (width > 60)
		width = 60;
	bool header = false;

	for (const char *q = body; q; q = next_line(q)) {
		struct words ul;

		if (!starts(q, "unit "))
			continue;
		split(q, &ul);
		if (ul.n < 3 || !word_is(&ul, 1, pl->w[1], pl->len[1]))
			continue;
		if (!header) {
			fprintf(out, "  %-*s %6s %10s %10s %6s %10s %10s  %-16s %s\n", width, "UNIT", "PROCS",
				"ANON", "HUGE", "%", "LAST PASS", "TOTAL", "LAST RESULT", "WHY NOT");
			header = true;
		}
		fprintf(out, "  %-*s %6" PRIu64, width, shown(&ul, 2, w), number(&ul, "processes"));
		coverage_columns(&ul, out);
		for (const char *r = body; r; r = next_line(r)) {
			struct words prl;

			if (!starts(r, "process "))
				continue;
			split(r, &prl);
			if (prl.n < 5 || !word_is(&prl, 3, pl->w[1], pl->len[1]) ||
			    !word_is(&prl, 4, ul.w[2], ul.len[2]))
				continue;
			/* the process's pid and comm under its unit, the columns as the unit's */
			fprintf(out, "    %-8.*s %-*s", prl.len[1], prl.w[1], width - 4,
				shown(&prl, 2, w));
			coverage_columns(&prl, out);
		}
	}
}

void coverage_show(const char *body, FILE *out)
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
		struct words pl;

		if (!starts(q, "policy "))
			continue;
		split(q, &pl);
		if (pl.n >= 2)
			show_policy(body, &pl, out);
	}
}
