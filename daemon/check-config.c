/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `mthpd check-config [--config-dir DIR]`: the configuration printed as the
 * daemon will use it, every default filled in, then the files it names
 * (state_file=, metrics_file=) checked.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check-config.h"
#include "cli.h"
#include "config.h"
#include "knobs.h"
#include "output.h"
#include "plan.h"
#include "state.h"
#include "util.h"

/* `check-config`: the configuration as it will be used, every default filled in. */
static void print_config(const struct mthpd_config *c)
{
	const struct mthpd_daemon_conf *d = &c->daemon;

	/* the paths and globs escaped (lib/text.h): a file name can hold any byte */
	mthpd_output_line(stdout, "# %s/mthpd.conf", c->dir);
	printf("[Daemon]\nscan_sleep_millisecs=%u\nalloc_sleep_millisecs=%u\n"
	       "pages_to_scan=%" PRIu64 "\npsi_threshold=%u.%02u\nmax_pids_per_pass=%u\n"
	       "dry_run=%s\n",
	       d->scan_sleep_millisecs, d->alloc_sleep_millisecs, d->pages_to_scan,
	       d->psi_threshold / 100, d->psi_threshold % 100, d->max_pids_per_pass,
	       d->dry_run ? "yes" : "no");
	mthpd_output_line(stdout, "metrics_file=%s", d->metrics_file);
	printf("metrics_max_units=%u\n", d->metrics_max_units);
	mthpd_output_line(stdout, "state_file=%s", d->state_file);
	printf("prefault=%s\n", mthpd_prefault_name(d->prefault));
	/* mthpd.service: ProtectSystem=strict, and /run/mthpd is its RuntimeDirectory= */
	if ((*d->metrics_file && strncmp(d->metrics_file, "/run/mthpd/", 11) != 0) ||
	    (*d->state_file && strncmp(d->state_file, "/run/mthpd/", 11) != 0))
		printf("# note: under mthpd.service only /run/mthpd is writable: a file elsewhere "
		       "needs ReadWritePaths= for its directory in a drop-in\n");
	for (size_t i = 0; i < c->nr_policies; i++) {
		const struct mthpd_policy *p = &c->policies[i];

		mthpd_output_line(stdout, "\n# %s (precedence %zu)", p->path, i + 1);
		printf("[Match]\n");
		if (p->match_cgroup)
			mthpd_output_line(stdout, "cgroup=%s", p->match_cgroup);
		if (p->match_unit)
			mthpd_output_line(stdout, "unit=%s", p->match_unit);
		if (p->match_comm)
			mthpd_output_line(stdout, "comm=%s", p->match_comm);
		char sizes[64];

		printf("[Policy]\nenabled=%s\ndry_run=%s\nsizes=%s\n", p->enabled ? "yes" : "no",
		       p->dry_run ? "yes" : "no", mthpd_orders_name(p->knobs.orders, sizes, sizeof(sizes)));
		printf("max_ptes_none=%u\nmax_ptes_swap=%u\nmax_ptes_shared=%u\n"
		       "max_bytes_per_pass=%" PRIu64 "\n",
		       p->knobs.max_ptes_none, p->knobs.max_ptes_swap, p->knobs.max_ptes_shared,
		       p->max_bytes_per_pass);
		if (p->pace.autop)
			printf("pace=auto\n");
		else if (p->pace.percent)
			printf("pace=%u%%\n", p->pace.percent);
		else
			printf("pace=no\n");
		printf("split_partial=%s\n", p->split_partial ? "yes" : "no");
		printf("min_age=%u\n", p->min_age_sec);
		if (mthpd_knobs_max_ptes_none_degraded(&p->knobs))
			printf("# note: max_ptes_none=%u acts as 0 for the sizes below 2M\n",
			       p->knobs.max_ptes_none);
	}
}

/*
 * check-config: can the daemon write its files there, and can no other
 * user swap them (state_dir_check(): refused, naming the line of the key)?
 * The state file is refused, the metrics only warned about.  A directory
 * that does not exist yet is only a note: systemd's RuntimeDirectory=mthpd
 * makes /run/mthpd when the service starts, `mthpd run` makes it by hand,
 * and `run` checks again then, inside the unit's sandbox.
 */
static int check_paths(const struct mthpd_config *c)
{
	const struct {
		const char *key, *path;
		unsigned int line;
		bool required;
	} files[] = {
		{"state_file", c->daemon.state_file, c->daemon.state_file_line, true},
		{"metrics_file", c->daemon.metrics_file, c->daemon.metrics_file_line, false},
	};
	int status = EXIT_OK;

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char dir[4096], why[4200], where[4400];
		int r;

		if (!*files[i].path)
			continue;
		state_key_where(c->dir, files[i].key, files[i].path, files[i].line, where,
				sizeof(where));
		r = state_dir_check(files[i].path, why, sizeof(why));
		if (r == -EPERM && state_in_runtime_dir(files[i].path) && state_runtime_dir_loose())
			cli_fail("note: %s=%s: %s: `mthpd run` makes '%s' mode 0755", files[i].key,
				 files[i].path, why, STATE_RUNTIME_DIR);
		else if (r == -EPERM) {
			cli_fail("%s: %s", where, why);
			status = EXIT_USAGE;
			continue;
		}
		r = state_probe_writable(files[i].path, dir, sizeof(dir), why, sizeof(why));
		if (r == -ENOENT && access(dir, F_OK) < 0 && state_in_runtime_dir(files[i].path))
			cli_fail("note: %s=%s: directory '%s' does not exist yet: `mthpd run` creates "
				 "it (root, mode 0755)", files[i].key, files[i].path, dir);
		else if (r == -ENOENT && access(dir, F_OK) < 0)
			cli_fail("note: %s=%s: directory '%s' does not exist (yet?): the daemon writes "
				 "nothing there until it does", files[i].key, files[i].path, dir);
		else if (r < 0 && files[i].required) {
			cli_fail("%s=%s: %s", files[i].key, files[i].path, why);
			status = EXIT_USAGE;
		} else if (r < 0)
			cli_fail("warning: %s=%s: %s", files[i].key, files[i].path, why);
	}
	return status;
}

/* `check-config`: the configuration printed, then its files checked; returns an exit status. */
int check_config_run(const struct mthpd_config *c, const char *config_dir)
{
	int status;

	print_config(c);
	status = check_paths(c);
	if (status == EXIT_OK)
		mthpd_output_line(stdout, "\nconfiguration OK: %s", config_dir);
	return status;
}
