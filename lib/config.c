/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The configuration directory as a whole: the defaults, mthpd.conf, then
 * policy.d/ in file-name order (a policy added to preview it, one file's
 * text checked for the fuzzer), and which policy a process gets.  One file
 * is read and parsed by lib/conffile.c, each key's value by lib/confkeys.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conffile.h"
#include "config.h"
#include "confkeys.h"
#include "util.h"

/* A policy before its file is read: what each key it does not set means. */
static struct mthpd_policy policy_defaults(const struct mthpd_knobs *defaults)
{
	return (struct mthpd_policy){.enabled = true, .split_partial = true, .knobs = *defaults,
				     .min_age_sec = MTHPD_MIN_AGE_DEFAULT_SEC,
				     .pace = {.autop = true}};
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
	struct mthpd_conffile st;
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
		.metrics_max_units = MTHPD_METRICS_MAX_UNITS_DEFAULT,
		.state_file = strdup("/run/mthpd/status"),
	};
	if (!c->dir || !c->daemon.metrics_file || !c->daemon.state_file) {
		r = -ENOMEM;
		goto fail;
	}

	r = join(&main_path, dir, "mthpd.conf");
	if (r < 0)
		goto fail;
	r = mthpd_conffile_parse(main_path, main_path, MTHPD_CONF_DAEMON, &c->daemon, &st, err,
				 err_size);
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
		r = mthpd_conffile_parse(pol->path, pol->path, MTHPD_CONF_POLICY, pol, &st, err,
					 err_size);
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
	struct mthpd_conffile st;
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
	r = mthpd_conffile_parse(path, path, MTHPD_CONF_POLICY, &pol, &st, err, err_size);
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
	struct mthpd_conffile st;
	int r;

	err[0] = '\0';
	if (len > MTHPD_CONF_MAX_BYTES) {
		(void)snprintf(err, err_size, "<text>: larger than %d KiB", MTHPD_CONF_MAX_BYTES / 1024);
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
		r = mthpd_conffile_parse_text(text, "<text>", MTHPD_CONF_POLICY, &pol, &st, err,
					      err_size);
		if (r == 0 && !st.has_match) {
			(void)snprintf(err, err_size, "<text>: no [Match] key");
			r = -EINVAL;
		}
		policy_done(&pol);
	} else {
		struct mthpd_daemon_conf d = {0};

		r = mthpd_conffile_parse_text(text, "<text>", MTHPD_CONF_DAEMON, &d, &st, err,
					      err_size);
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
