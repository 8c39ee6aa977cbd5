/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The keys of the configuration files and how each value is read: [Daemon]
 * of mthpd.conf, [Match] and [Policy] of a policy file, each key with its
 * parser (milliseconds, seconds, counts, booleans, globs, byte counts, page
 * counts, percentages, paths, sizes=, pace=) and its field in struct
 * mthpd_daemon_conf or struct mthpd_policy.  No file is read here:
 * lib/conffile.c reads a file and looks each key up in this table.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "confkeys.h"
#include "knobs.h"
#include "pace.h"
#include "util.h"

static int parse_bool(const char *v, void *field, char *why, size_t n)
{
	static const char *const yes[] = {"yes", "true", "on", "1"};
	static const char *const no[] = {"no", "false", "off", "0"};

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*(bool *)field = true;
			return 0;
		}
		if (strcasecmp(v, no[i]) == 0) {
			*(bool *)field = false;
			return 0;
		}
	}
	(void)snprintf(why, n, "'%s' is not a boolean (yes or no)", v);
	return -EINVAL;
}

static int parse_ptes(const char *v, void *field, char *why, size_t n)
{
	if (mthpd_parse_uint(v, MTHPD_MAX_PTES_LIMIT, field) < 0) {
		(void)snprintf(why, n, "'%s' is not a number from 0 to %d", v, MTHPD_MAX_PTES_LIMIT);
		return -EINVAL;
	}
	return 0;
}

static int parse_millis(const char *v, void *field, char *why, size_t n)
{
	/* At most a day: a longer sleep is a typo, and the watchdog needs passes. */
	if (mthpd_parse_uint(v, 86400000, field) < 0 || *(unsigned int *)field < 10) {
		(void)snprintf(why, n, "'%s' is not a number of milliseconds from 10 to 86400000", v);
		return -EINVAL;
	}
	return 0;
}

static int parse_seconds(const char *v, void *field, char *why, size_t n)
{
	if (mthpd_parse_uint(v, MTHPD_MIN_AGE_MAX_SEC, field) < 0) {
		(void)snprintf(why, n, "'%s' is not a number of seconds from 0 to %u", v,
			       MTHPD_MIN_AGE_MAX_SEC);
		return -EINVAL;
	}
	return 0;
}

static int parse_count(const char *v, void *field, char *why, size_t n)
{
	if (mthpd_parse_uint(v, 1000000, field) < 0 || *(unsigned int *)field == 0) {
		(void)snprintf(why, n, "'%s' is not a number from 1 to 1000000", v);
		return -EINVAL;
	}
	return 0;
}

static int parse_units(const char *v, void *field, char *why, size_t n)
{
	if (mthpd_parse_uint(v, MTHPD_METRICS_MAX_UNITS_MAX, field) < 0) {
		(void)snprintf(why, n, "'%s' is not a number from 0 to %u", v, MTHPD_METRICS_MAX_UNITS_MAX);
		return -EINVAL;
	}
	return 0;
}

/* "1G", "512M", "4096" (bytes) or "0" (no limit). */
static int parse_size_value(const char *v, uint64_t *ret)
{
	unsigned long long x;
	char *end;

	if (*v < '0' || *v > '9')
		return -EINVAL;
	unsigned int shift;

	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case '\0':
		shift = 0;
		break;
	case 'K': case 'k':
		shift = 10;
		break;
	case 'M': case 'm':
		shift = 20;
		break;
	case 'G': case 'g':
		shift = 30;
		break;
	case 'T': case 't':
		shift = 40;
		break;
	default:
		return -EINVAL;
	}
	/* at most 1 PiB, checked before the shift so that nothing wraps to 0 */
	if ((shift && end[1] != '\0') || (!shift && *end != '\0') || x > (1ULL << 50) >> shift)
		return -EINVAL;
	x <<= shift;
	*ret = x;
	return 0;
}

static int parse_bytes(const char *v, void *field, char *why, size_t n)
{
	if (parse_size_value(v, field) < 0) {
		(void)snprintf(why, n, "'%s' is not a size (bytes, or with K, M, G, T; 0 for none)", v);
		return -EINVAL;
	}
	return 0;
}

static int parse_pages(const char *v, void *field, char *why, size_t n)
{
	unsigned long long x;
	char *end;

	errno = 0;
	x = *v >= '0' && *v <= '9' ? strtoull(v, &end, 10) : 0;
	if (errno || x == 0 || x > (1ULL << 40) || *end != '\0') {
		(void)snprintf(why, n, "'%s' is not a number of pages from 1", v);
		return -EINVAL;
	}
	*(uint64_t *)field = x;
	return 0;
}

/* PSI "some avg10" is a percentage with two decimals: "10", "2.5", "0". */
static int parse_percent(const char *v, void *field, char *why, size_t n)
{
	unsigned int whole = 0, frac = 0, digits = 0;
	const char *p = v;

	if (*p < '0' || *p > '9')
		goto bad;
	for (; *p >= '0' && *p <= '9'; p++) {
		whole = whole * 10 + (unsigned int)(*p - '0');
		if (whole > 100)
			goto bad;
	}
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9' && digits < 2; p++, digits++)
			frac = frac * 10 + (unsigned int)(*p - '0');
	if (*p != '\0')
		goto bad;
	if (digits == 1)
		frac *= 10; /* "2.5" is 2.50 */
	if (whole * 100 + frac > 10000)
		goto bad;
	*(unsigned int *)field = whole * 100 + frac;
	return 0;
bad:
	(void)snprintf(why, n, "'%s' is not a percentage from 0 to 100 (0 turns it off)", v);
	return -EINVAL;
}

static int parse_string(const char *v, void *field, char *why, size_t n)
{
	char *s = strdup(v);

	if (!s) {
		(void)snprintf(why, n, "out of memory");
		return -ENOMEM;
	}
	free(*(char **)field);
	*(char **)field = s;
	return 0;
}

static int parse_path(const char *v, void *field, char *why, size_t n)
{
	if (*v != '\0' && *v != '/') {
		(void)snprintf(why, n, "'%s' is not an absolute path (or empty for none)", v);
		return -EINVAL;
	}
	return parse_string(v, field, why, n);
}

static int parse_glob(const char *v, void *field, char *why, size_t n)
{
	if (*v == '\0') {
		(void)snprintf(why, n, "empty pattern (leave the key out to match anything)");
		return -EINVAL;
	}
	return parse_string(v, field, why, n);
}

/*
 * The fewest characters a glob can match: '*' none, '?' and a [...] class
 * one, anything else (a '\\'-escaped character too) one.
 */
static size_t glob_min_len(const char *g)
{
	size_t n = 0;

	for (const char *p = g; *p; p++) {
		if (*p == '*')
			continue;
		if (*p == '\\' && p[1]) {
			p++;
		} else if (*p == '[') {
			const char *close = strchr(p + 2, ']');

			if (close)
				p = close;
		}
		n++;
	}
	return n;
}

/* comm is at most 15 characters (TASK_COMM_LEN - 1): a longer pattern never matches. */
static int parse_comm(const char *v, void *field, char *why, size_t n)
{
	if (*v && glob_min_len(v) > 15) {
		(void)snprintf(why, n,
			       "'%s' can never match: a process's comm is at most 15 characters "
			       "(the kernel cuts longer names)",
			       v);
		return -EINVAL;
	}
	return parse_glob(v, field, why, n);
}

static int parse_sizes(const char *v, void *field, char *why, size_t n)
{
	char bad[32];

	if (mthpd_parse_sizes(v, field, bad, sizeof(bad)) < 0) {
		(void)snprintf(why, n, "'%s' is not a size from 16K to 2M (16K, 32K, ..., 1M, 2M)", bad);
		return -EINVAL;
	}
	return 0;
}

static int parse_pace(const char *v, void *field, char *why, size_t n)
{
	if (mthpd_pace_parse(v, field) < 0) {
		(void)snprintf(why, n, "'%s' is not no, yes, auto or a percentage from 1%% to 100%%", v);
		return -EINVAL;
	}
	return 0;
}

static const char *const prefault_names[] = {
	[MTHPD_PREFAULT_AUTO] = "auto",
	[MTHPD_PREFAULT_NO] = "no",
	[MTHPD_PREFAULT_YES] = "yes",
};

const char *mthpd_prefault_name(enum mthpd_prefault p)
{
	return (size_t)p < ARRAY_SIZE(prefault_names) ? prefault_names[p] : "?";
}

static int parse_prefault(const char *v, void *field, char *why, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(prefault_names); i++)
		if (strcasecmp(v, prefault_names[i]) == 0) {
			*(enum mthpd_prefault *)field = (enum mthpd_prefault)i;
			return 0;
		}
	(void)snprintf(why, n, "'%s' is not auto, yes or no", v);
	return -EINVAL;
}

#define D(name, fn) {"Daemon", #name, MTHPD_CONF_DAEMON, fn, offsetof(struct mthpd_daemon_conf, name)}
#define M(key, field) {"Match", key, MTHPD_CONF_POLICY, parse_glob, offsetof(struct mthpd_policy, field)}
#define P(key, fn, field) {"Policy", key, MTHPD_CONF_POLICY, fn, offsetof(struct mthpd_policy, field)}

const struct mthpd_confkey mthpd_confkeys[] = {
	D(scan_sleep_millisecs, parse_millis),
	D(alloc_sleep_millisecs, parse_millis),
	D(pages_to_scan, parse_pages),
	D(psi_threshold, parse_percent),
	D(max_pids_per_pass, parse_count),
	D(dry_run, parse_bool),
	D(metrics_file, parse_path),
	D(metrics_max_units, parse_units),
	D(state_file, parse_path),
	D(prefault, parse_prefault),
	M("cgroup", match_cgroup),
	M("unit", match_unit),
	{"Match", "comm", MTHPD_CONF_POLICY, parse_comm, offsetof(struct mthpd_policy, match_comm)},
	P("enabled", parse_bool, enabled),
	P("dry_run", parse_bool, dry_run),
	P("sizes", parse_sizes, knobs.orders),
	P("max_ptes_none", parse_ptes, knobs.max_ptes_none),
	P("max_ptes_swap", parse_ptes, knobs.max_ptes_swap),
	P("max_ptes_shared", parse_ptes, knobs.max_ptes_shared),
	P("max_bytes_per_pass", parse_bytes, max_bytes_per_pass),
	P("pace", parse_pace, pace),
	P("split_partial", parse_bool, split_partial),
	P("min_age", parse_seconds, min_age_sec),
};
const size_t mthpd_confkeys_count = ARRAY_SIZE(mthpd_confkeys);

/* A section of this kind of file: one that the table has keys in. */
bool mthpd_confkeys_section_known(enum mthpd_conf_target t, const char *name, size_t len)
{
	for (size_t i = 0; i < mthpd_confkeys_count; i++)
		if (mthpd_confkeys[i].target == t && strlen(mthpd_confkeys[i].section) == len &&
		    memcmp(mthpd_confkeys[i].section, name, len) == 0)
			return true;
	return false;
}
