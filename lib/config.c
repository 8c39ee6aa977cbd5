/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ini.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "confkeys.h"
#include "util.h"

/* A policy before its file is read: what each key it does not set means. */
static struct mthpd_policy policy_defaults(const struct mthpd_knobs *defaults)
{
	return (struct mthpd_policy){.enabled = true, .split_partial = true, .knobs = *defaults,
				     .min_age_sec = MTHPD_MIN_AGE_DEFAULT_SEC};
}

/* State of parsing one file. */
struct parse {
	const char *file;
	enum mthpd_conf_target target;
	void *base;
	const char *text;     /* the whole file, NUL-terminated; no NUL inside */
	size_t pos;           /* where the reader goes on */
	unsigned int line;
	uint64_t seen;        /* mthpd_confkeys[] given so far, to refuse repeats */
	bool has_match;
	int r;                /* first error */
	char *err;
	size_t err_size;
};

_printf_(2, 3) static void fail(struct parse *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->r < 0)
		return; /* keep the first error */
	p->r = -EINVAL;
	n = snprintf(p->err, p->err_size, "%s:%u: ", p->file, p->line);
	if (n < 0 || (size_t)n >= p->err_size)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(p->err + n, p->err_size - (size_t)n, fmt, ap);
	va_end(ap);
}

/* inih's reader: the next line of the text, counted, so the handler knows where it is. */
static char *reader(char *str, int num, void *stream)
{
	struct parse *p = stream;
	const char *start = p->text + p->pos, *nl;
	size_t len;

	if (!*start)
		return NULL;
	nl = strchr(start, '\n');
	len = nl ? (size_t)(nl - start) + 1 : strlen(start);
	p->pos += len;
	p->line++;
	if (len > (size_t)num - 1) {
		fail(p, "line longer than %d characters", num - 2);
		len = (size_t)num - 1; /* the rest of it is skipped, not read as a new line */
	}
	memcpy(str, start, len);
	str[len] = '\0';
	return str;
}

/*
 * What inih would read differently from what a person means, line by line,
 * before inih sees the text: text after a section header ("[Policy]
 * enabled=no" would lose the key), a header without its ']', empty or
 * unknown sections, "key: value" (inih takes ':' too; mthpd.conf(5) says
 * key=value), indented lines (inih joins them to the key before), and keys
 * before any section.  Sets the first error in @p.
 */
static void lint(struct parse *p)
{
	const char *line = p->text;
	bool in_section = false;

	for (unsigned int no = 1; *line; no++) {
		const char *end = strchr(line, '\n'), *s = line, *close, *eq, *colon;

		if (!end)
			end = line + strlen(line);
		p->line = no;
		while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
			s++;
		if (s == end || *s == ';' || *s == '#') {
			line = *end ? end + 1 : end;
			continue;
		}
		if (s > line) {
			fail(p, "the line starts with a blank (inih would join it to the line before); "
				"remove the leading blanks");
			return;
		}
		if (*s == '[') {
			const char *t;

			close = memchr(s, ']', (size_t)(end - s));
			if (!close) {
				fail(p, "no ']' closes the section name '%.*s'", (int)(end - s), s);
				return;
			}
			for (t = close + 1; t < end && (*t == ' ' || *t == '\t' || *t == '\r'); t++)
				;
			if (t < end && *t != ';' && *t != '#') {
				fail(p, "text after [%.*s]: '%.*s' (one key per line, after the section)",
				     (int)(close - s - 1), s + 1, (int)(end - t), t);
				return;
			}
			if (!mthpd_confkeys_section_known(p->target, s + 1, (size_t)(close - s - 1))) {
				fail(p, "unknown section [%.*s]%s", (int)(close - s - 1), s + 1,
				     p->target == MTHPD_CONF_DAEMON
					     ? " (mthpd.conf has [Daemon])"
					     : " (a policy has [Match] and [Policy])");
				return;
			}
			in_section = true;
		} else {
			eq = memchr(s, '=', (size_t)(end - s));
			colon = memchr(s, ':', (size_t)(end - s));
			if (colon && (!eq || colon < eq)) {
				fail(p, "'%.*s': write key=value, not key: value", (int)(colon - s), s);
				return;
			}
			if (!eq) {
				fail(p, "not a 'key=value' or '[Section]' line");
				return;
			}
			if (!in_section) {
				fail(p, "'%.*s=' before any section", (int)(eq - s), s);
				return;
			}
		}
		line = *end ? end + 1 : end;
	}
}

/* A configuration file is small text: more than this is a mistake. */
#define CONFIG_MAX_BYTES (64 * 1024)

/*
 * Reads @path whole into *ret (NUL-terminated).  Only a regular file: a
 * FIFO would block (opened O_NONBLOCK, then checked), a device like
 * /dev/zero would never end.  Returns 0, -ENOENT, or -EINVAL with a
 * message in @err, or -errno.
 */
static int read_text(const char *path, char **ret, char *err, size_t err_size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t len = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode)) {
		(void)snprintf(err, err_size, "%s: not a regular file (%s)", path,
			       S_ISDIR(st.st_mode)    ? "a directory"
			       : S_ISFIFO(st.st_mode) ? "a FIFO"
			       : S_ISCHR(st.st_mode)  ? "a character device"
			       : S_ISBLK(st.st_mode)  ? "a block device"
			       : S_ISSOCK(st.st_mode) ? "a socket"
						      : "not a file");
		return -EINVAL;
	}
	buf = malloc(CONFIG_MAX_BYTES + 2);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf + len, CONFIG_MAX_BYTES + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > CONFIG_MAX_BYTES) {
			(void)snprintf(err, err_size, "%s: larger than %d KiB, not a configuration file",
				       path, CONFIG_MAX_BYTES / 1024);
			return -EINVAL;
		}
	}
	buf[len] = '\0';
	if (strlen(buf) != len) {
		unsigned int line = 1;

		for (const char *c = buf; *c; c++)
			line += *c == '\n';
		(void)snprintf(err, err_size, "%s:%u: a NUL byte: not a text file", path, line);
		return -EINVAL;
	}
	*ret = TAKE_PTR(buf);
	return 0;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse *p = user;
	char why[256];

	if (!name) /* a section header alone (inih with INI_CALL_HANDLER_ON_NEW_SECTION) */
		return 1;
	for (size_t i = 0; i < mthpd_confkeys_count; i++) {
		const struct mthpd_confkey *k = &mthpd_confkeys[i];

		if (k->target != p->target || strcmp(k->section, section) != 0 ||
		    strcmp(k->name, name) != 0)
			continue;
		if (p->seen & (1ULL << i)) {
			fail(p, "%s= given twice in [%s]", name, section);
			return 1;
		}
		p->seen |= 1ULL << i;
		if (k->parse(value, (char *)p->base + k->offset, why, sizeof(why)) < 0)
			fail(p, "%s=: %s", name, why);
		if (k->target == MTHPD_CONF_DAEMON &&
		    k->offset == offsetof(struct mthpd_daemon_conf, state_file))
			((struct mthpd_daemon_conf *)p->base)->state_file_line = p->line;
		if (k->target == MTHPD_CONF_DAEMON &&
		    k->offset == offsetof(struct mthpd_daemon_conf, metrics_file))
			((struct mthpd_daemon_conf *)p->base)->metrics_file_line = p->line;
		if (strcmp(section, "Match") == 0)
			p->has_match = true;
		return 1;
	}
	/* lint() has refused unknown sections already: this is a known one */
	fail(p, "unknown key '%s' in [%s]", name, section);
	return 1; /* go on: the first error is kept, and inih's own errors still count */
}

/* Parses @text (NUL-terminated, no NUL inside) of the file shown as @shown. */
static int parse_text(const char *text, const char *shown, enum mthpd_conf_target target,
		      void *base, struct parse *ret_state, char *err, size_t err_size)
{
	struct parse p = {
		.file = shown,
		.target = target,
		.base = base,
		.err = err,
		.err_size = err_size,
		.text = text,
	};
	int r;

	/* a UTF-8 byte order mark, as some editors save one: skipped, as systemd does */
	if (strncmp(p.text, "\xef\xbb\xbf", 3) == 0)
		p.text += 3;
	lint(&p);
	if (p.r < 0) {
		*ret_state = p;
		return p.r;
	}
	p.line = 0;
	r = ini_parse_stream(reader, &p, handler, &p);
	if (p.r == 0 && r > 0) {
		/* inih's own complaint: no '=' or ']' on that line */
		p.line = (unsigned int)r;
		fail(&p, "not a 'key=value' or '[Section]' line");
	}
	*ret_state = p;
	return p.r;
}

static int parse_file(const char *path, const char *shown, enum mthpd_conf_target target,
		      void *base, struct parse *ret_state, char *err, size_t err_size)
{
	_cleanup_free_ char *text = NULL;
	int r;

	r = read_text(path, &text, err, err_size);
	if (r < 0)
		return r;
	return parse_text(text, shown, target, base, ret_state, err, err_size);
}

static void policy_done(struct mthpd_policy *pol)
{
	free(pol->name);
	free(pol->path);
	free(pol->match_cgroup);
	free(pol->match_unit);
	free(pol->match_comm);
}

struct mthpd_config *mthpd_config_free(struct mthpd_config *c)
{
	if (!c)
		return NULL;
	for (size_t i = 0; i < c->nr_policies; i++)
		policy_done(&c->policies[i]);
	free(c->policies);
	free(c->daemon.metrics_file);
	free(c->daemon.state_file);
	free(c->dir);
	free(c);
	return NULL;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.conf names in @dir, sorted.  A missing directory has none. */
static int list_policies(const char *dir, char ***ret, size_t *ret_n, char *err, size_t err_size)
{
	DIR *d = opendir(dir);
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	int r = 0;

	*ret = NULL;
	*ret_n = 0;
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char **nn;

		if (de->d_name[0] == '.' || len < 6 || strcmp(de->d_name + len - 5, ".conf") != 0)
			continue;
		if (n >= MTHPD_MAX_POLICIES) {
			(void)snprintf(err, err_size, "%s: more than %d policy files", dir,
				       MTHPD_MAX_POLICIES);
			r = -E2BIG;
			break;
		}
		nn = reallocarray(names, n + 1, sizeof(*names));
		if (!nn || !(nn[n] = strdup(de->d_name))) {
			names = nn ? nn : names;
			r = -ENOMEM;
			break;
		}
		names = nn;
		n++;
	}
	(void)closedir(d);
	if (r < 0) {
		for (size_t i = 0; i < n; i++)
			free(names[i]);
		free(names);
		return r;
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	*ret = names;
	*ret_n = n;
	return 0;
}

static int join(char **ret, const char *a, const char *b)
{
	return asprintf(ret, "%s/%s", a, b) < 0 ? -ENOMEM : 0;
}

int mthpd_config_load(const char *dir, const struct mthpd_knobs *defaults,
		      struct mthpd_config **ret, char *err, size_t err_size)
{
	struct mthpd_config *c = calloc(1, sizeof(*c));
	_cleanup_free_ char *main_path = NULL, *pol_dir = NULL;
	char **names = NULL;
	size_t nr_names = 0;
	struct parse st;
	int r;

	struct stat dst;

	err[0] = '\0';
	if (!c)
		return -ENOMEM;
	/* A missing directory is a mistake (a typo, a package not installed), not "no policy". */
	if (stat(dir, &dst) < 0 || !S_ISDIR(dst.st_mode)) {
		(void)snprintf(err, err_size, "%s: %s", dir,
			       stat(dir, &dst) < 0 ? "no such configuration directory"
						   : "not a directory");
		free(c);
		return -EINVAL;
	}
	c->dir = strdup(dir);
	c->daemon = (struct mthpd_daemon_conf){
		.scan_sleep_millisecs = 10000,
		.alloc_sleep_millisecs = 60000,
		.pages_to_scan = 1ULL << 20, /* 4 GiB of resident memory per pass */
		.psi_threshold = 1000,       /* 10.00 % */
		.max_pids_per_pass = 4096,
		.metrics_file = strdup("/run/mthpd/metrics.prom"),
		.state_file = strdup("/run/mthpd/status"),
	};
	if (!c->dir || !c->daemon.metrics_file || !c->daemon.state_file) {
		r = -ENOMEM;
		goto fail;
	}

	r = join(&main_path, dir, "mthpd.conf");
	if (r < 0)
		goto fail;
	r = parse_file(main_path, main_path, MTHPD_CONF_DAEMON, &c->daemon, &st, err, err_size);
	if (r == -ENOENT)
		r = 0; /* no file: every default */
	else if (r < 0 && !err[0])
		(void)snprintf(err, err_size, "%s: %s", main_path, strerror(-r));
	if (r < 0)
		goto fail;

	r = join(&pol_dir, dir, "policy.d");
	if (r < 0)
		goto fail;
	r = list_policies(pol_dir, &names, &nr_names, err, err_size);
	if (r < 0) {
		if (!err[0])
			(void)snprintf(err, err_size, "%s: %s", pol_dir, strerror(-r));
		goto fail;
	}
	c->policies = calloc(nr_names ? nr_names : 1, sizeof(*c->policies));
	if (!c->policies) {
		r = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < nr_names; i++) {
		struct mthpd_policy *pol = &c->policies[c->nr_policies++];

		*pol = policy_defaults(defaults);
		pol->name = names[i];
		names[i] = NULL;
		pol->knobs.orders = 1U << MTHPD_PMD_ORDER;
		r = join(&pol->path, pol_dir, pol->name);
		if (r < 0)
			goto fail;
		r = parse_file(pol->path, pol->path, MTHPD_CONF_POLICY, pol, &st, err, err_size);
		if (r < 0 && !err[0])
			(void)snprintf(err, err_size, "%s: %s", pol->path, strerror(-r));
		if (r < 0)
			goto fail;
		if (!st.has_match) {
			(void)snprintf(err, err_size,
				       "%s: no [Match] key: say which processes it is for with cgroup=, "
				       "unit= or comm=",
				       pol->path);
			r = -EINVAL;
			goto fail;
		}
	}
	free(names);
	*ret = c;
	return 0;
fail:
	for (size_t i = 0; i < nr_names; i++)
		free(names[i]);
	free(names);
	mthpd_config_free(c);
	return r;
}

int mthpd_config_add_policy(struct mthpd_config *c, const char *path,
			    const struct mthpd_knobs *defaults, char *err, size_t err_size)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t len = strlen(base), at = 0;
	struct mthpd_policy pol = policy_defaults(defaults);
	struct mthpd_policy *more;
	struct parse st;
	int r;

	err[0] = '\0';
	if (len < 6 || strcmp(base + len - 5, ".conf") != 0 || base[0] == '.') {
		/* the daemon would not read it from policy.d either */
		(void)snprintf(err, err_size, "%s: a policy file's name must end in .conf", path);
		return -EINVAL;
	}
	pol.knobs.orders = 1U << MTHPD_PMD_ORDER;
	pol.name = strdup(base);
	pol.path = strdup(path);
	if (!pol.name || !pol.path) {
		policy_done(&pol);
		return -ENOMEM;
	}
	r = parse_file(path, path, MTHPD_CONF_POLICY, &pol, &st, err, err_size);
	if (r < 0 && !err[0])
		(void)snprintf(err, err_size, "%s: %s", path, strerror(-r));
	if (r == 0 && !st.has_match) {
		(void)snprintf(err, err_size,
			       "%s: no [Match] key: say which processes it is for with cgroup=, unit= "
			       "or comm=",
			       path);
		r = -EINVAL;
	}
	if (r < 0) {
		policy_done(&pol);
		return r;
	}
	while (at < c->nr_policies && strcmp(c->policies[at].name, pol.name) < 0)
		at++;
	if (at < c->nr_policies && strcmp(c->policies[at].name, pol.name) == 0) {
		/* the same name in policy.d: this one takes its place */
		policy_done(&c->policies[at]);
		c->policies[at] = pol;
		return 0;
	}
	if (c->nr_policies >= MTHPD_MAX_POLICIES) {
		(void)snprintf(err, err_size, "%s: more than %d policy files", path, MTHPD_MAX_POLICIES);
		policy_done(&pol);
		return -E2BIG;
	}
	more = reallocarray(c->policies, c->nr_policies + 1, sizeof(*more));
	if (!more) {
		policy_done(&pol);
		return -ENOMEM;
	}
	c->policies = more;
	memmove(c->policies + at + 1, c->policies + at, (c->nr_policies - at) * sizeof(*more));
	c->policies[at] = pol;
	c->nr_policies++;
	return 0;
}

int mthpd_config_check_text(const char *buf, size_t len, bool policy,
			    const struct mthpd_knobs *defaults, char *err, size_t err_size)
{
	_cleanup_free_ char *text = NULL;
	struct parse st;
	int r;

	err[0] = '\0';
	if (len > CONFIG_MAX_BYTES) {
		(void)snprintf(err, err_size, "<text>: larger than %d KiB", CONFIG_MAX_BYTES / 1024);
		return -EINVAL;
	}
	text = malloc(len + 1);
	if (!text)
		return -ENOMEM;
	memcpy(text, buf, len);
	text[len] = '\0';
	if (strlen(text) != len) {
		(void)snprintf(err, err_size, "<text>: a NUL byte");
		return -EINVAL;
	}
	if (policy) {
		struct mthpd_policy pol = policy_defaults(defaults);

		pol.knobs.orders = 1U << MTHPD_PMD_ORDER;
		r = parse_text(text, "<text>", MTHPD_CONF_POLICY, &pol, &st, err, err_size);
		if (r == 0 && !st.has_match) {
			(void)snprintf(err, err_size, "<text>: no [Match] key");
			r = -EINVAL;
		}
		policy_done(&pol);
	} else {
		struct mthpd_daemon_conf d = {0};

		r = parse_text(text, "<text>", MTHPD_CONF_DAEMON, &d, &st, err, err_size);
		free(d.metrics_file);
		free(d.state_file);
	}
	return r;
}

bool mthpd_config_may_match(const struct mthpd_config *c, const char *cgroup, const char *unit)
{
	return mthpd_config_may_match_any(c, cgroup, unit, false);
}

bool mthpd_config_may_match_any(const struct mthpd_config *c, const char *cgroup,
				const char *unit, bool disabled_too)
{
	for (size_t i = 0; i < c->nr_policies; i++) {
		const struct mthpd_policy *p = &c->policies[i];

		if (!p->enabled && !disabled_too)
			continue;
		if (p->match_cgroup && fnmatch(p->match_cgroup, cgroup, 0) != 0)
			continue;
		if (p->match_unit && (!unit[0] || fnmatch(p->match_unit, unit, 0) != 0))
			continue;
		return true;
	}
	return false;
}

const struct mthpd_policy *mthpd_config_match(const struct mthpd_config *c, const char *cgroup,
					      const char *unit, const char *comm)
{
	for (size_t i = 0; i < c->nr_policies; i++) {
		const struct mthpd_policy *p = &c->policies[i];

		if (p->match_cgroup && fnmatch(p->match_cgroup, cgroup, 0) != 0)
			continue;
		if (p->match_unit && (!unit || fnmatch(p->match_unit, unit, 0) != 0))
			continue;
		if (p->match_comm && fnmatch(p->match_comm, comm, 0) != 0)
			continue;
		return p;
	}
	return NULL;
}
