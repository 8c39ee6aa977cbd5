/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The configuration and the files it names: loaded at start and on a
 * reload (SIGHUP, or a change the watch saw), the state and metrics files
 * checked (no directory another user can write, writable) and locked (one
 * daemon per state file), and swapped in whole or refused whole.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "util.h"

int reload_load(struct daemon *d, struct mthpd_config **ret)
{
	char err[MTHPD_ERR_SIZE];
	int r = mthpd_config_load(d->opts->config_dir, &d->sys_defaults, ret, err, sizeof(err));

	if (r < 0)
		log_error("%s", err[0] ? err : strerror(-r));
	return r;
}

/*
 * Sizes below 2M are switched in sysfs at any time (hugepages-*kB/enabled);
 * SIGHUP is how the admin tells mthpd to look again.
 */
static void reprobe_subpmd(struct daemon *d)
{
	struct mthpd_features f = d->features;
	char now[160], before[160];

	if (mthpd_features_probe_subpmd(&d->kif, &f) < 0)
		return;
	if (f.subpmd == d->features.subpmd && f.subpmd_orders == d->features.subpmd_orders)
		return;
	log_notice("kernel: %s (was %s)", mthpd_features_describe(&f, now, sizeof(now)),
		   mthpd_features_describe(&d->features, before, sizeof(before)));
	d->features = f;
}

/*
 * The files of @c no other user can swap (state_dir_check()); @old: only
 * the paths that differ from it.  Logs the refusal with the file and line
 * of the key.  Returns 0 or -EINVAL.
 */
static int files_safe(const struct daemon *d, const struct mthpd_config *c,
		      const struct mthpd_config *old)
{
	const struct {
		const char *key, *path, *was;
		unsigned int line;
	} files[] = {
		{"state_file", c->daemon.state_file, old ? old->daemon.state_file : NULL,
		 c->daemon.state_file_line},
		{"metrics_file", c->daemon.metrics_file, old ? old->daemon.metrics_file : NULL,
		 c->daemon.metrics_file_line},
	};

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char why[4200], where[4400];

		if (!*files[i].path || (files[i].was && strcmp(files[i].path, files[i].was) == 0))
			continue;
		if (state_dir_check(files[i].path, why, sizeof(why)) != -EPERM)
			continue; /* a missing directory: the probe says so */
		state_key_where(d->opts->config_dir, files[i].key, files[i].path, files[i].line,
				where, sizeof(where));
		if (old)
			log_error("reload of '%s' refused: %s: %s; keeping the configuration in use",
				  d->opts->config_dir, where, why);
		else
			log_error("%s: %s", where, why);
		return -EINVAL;
	}
	return 0;
}

/*
 * A reload to another state_file: the new one must be writable and its
 * lock free (else a second daemon on it would share it), or the reload is
 * refused, the old file and lock kept.  Returns 0 with the new lock's fd in
 * @ret_lock_fd (-1: the state file stays or there is none), or -errno.
 */
static int reload_files(struct daemon *d, const struct mthpd_config *c, int *ret_lock_fd)
{
	const struct mthpd_daemon_conf *was = &d->cfg->daemon, *now = &c->daemon;
	char why[4200], dir[4096];
	int r;

	*ret_lock_fd = -1;
	r = files_safe(d, c, d->cfg);
	if (r < 0)
		return r;
	if (*now->state_file && strcmp(now->state_file, was->state_file) != 0) {
		r = state_probe_writable(now->state_file, dir, sizeof(dir), why, sizeof(why));
		if (r == 0)
			r = state_lock_file(now->state_file, ret_lock_fd, why, sizeof(why));
		if (r < 0) {
			log_error("reload of '%s' refused: state_file=%s: %s; keeping state_file=%s "
				  "and the configuration in use",
				  d->opts->config_dir, now->state_file, why,
				  *was->state_file ? was->state_file : "(none)");
			return r;
		}
	}
	if (*now->metrics_file && strcmp(now->metrics_file, was->metrics_file) != 0) {
		r = state_probe_writable(now->metrics_file, dir, sizeof(dir), why, sizeof(why));
		if (r < 0) {
			log_warning("metrics_file=%s: %s; running without metrics", now->metrics_file,
				    why);
			d->metrics_err = r; /* not said again after each pass */
		}
	}
	return 0;
}

void reload_prefault(struct daemon *d, bool start)
{
	enum mthpd_prefault want = d->cfg->daemon.prefault;
	bool on = want == MTHPD_PREFAULT_YES || (want == MTHPD_PREFAULT_AUTO && d->page_reporting);
	bool was = d->kif.prefault_area != NULL;
	int r;

	if (!start && on == was)
		return;
	r = mthpd_kif_prefault_set(&d->kif, on);
	d->metrics.prefault = d->kif.prefault_area != NULL;
	if (r < 0) {
		log_errno(LOG_LVL_WARNING, r, "prefault: cannot reserve its 2 MiB pages: %m; no prefault");
		return;
	}
	log_info("prefault: %s (%s%s)", on ? "yes" : "no", want == MTHPD_PREFAULT_AUTO ? "auto: " : "",
		 want != MTHPD_PREFAULT_AUTO   ? "prefault= in mthpd.conf"
		 : d->page_reporting ? "the host takes free pages back, virtio-balloon free page reporting"
				     : "no free page reporting seen");
}

void reload_now(struct daemon *d)
{
	struct mthpd_config *c = NULL;
	int lock_fd = -1;

	(void)sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64 "\nSTATUS=reloading", now_usec());
	/* refused until it takes: mthpd_config_last_reload_successful */
	d->metrics.reload_failed = true;
	if (reload_load(d, &c) < 0) {
		log_error("reload of '%s' failed: keeping the configuration in use",
			  d->opts->config_dir);
		d->metrics.reload_failures++;
	} else if (reload_files(d, c, &lock_fd) < 0) {
		mthpd_config_free(c);
		d->metrics.reload_failures++;
	} else {
		struct mthpd_proc *procs = NULL;
		pid_t *pids = NULL;

		/* max_pids_per_pass may have grown: the pid arrays follow it (they never shrink). */
		bool grow = c->daemon.max_pids_per_pass > d->pids_size;

		if (grow) {
			procs = reallocarray(d->procs, c->daemon.max_pids_per_pass + 1U,
					     sizeof(*d->procs));
			if (procs)
				d->procs = procs;
			pids = reallocarray(d->pids, c->daemon.max_pids_per_pass + 1U, sizeof(*d->pids));
			if (pids)
				d->pids = pids;
		}
		if (grow && procs && pids)
			d->pids_size = c->daemon.max_pids_per_pass;
		if (grow && (!procs || !pids)) {
			log_error("reload of '%s' failed: out of memory; keeping the configuration in use",
				  d->opts->config_dir);
			d->metrics.reload_failures++;
			mthpd_config_free(c);
			if (lock_fd >= 0)
				(void)close(lock_fd);
			(void)sd_notify(0, "READY=1");
			return;
		}
		/* Another state file: its lock is held now, the old one's let go. */
		if (strcmp(c->daemon.state_file, d->cfg->daemon.state_file) != 0) {
			log_notice("state_file is now '%s' (was '%s')", c->daemon.state_file,
				   d->cfg->daemon.state_file);
			if (d->lock.file_fd >= 0)
				(void)close(d->lock.file_fd);
			d->lock.file_fd = lock_fd;
			d->state_err = 0;
		}
		mthpd_config_free(d->cfg);
		d->cfg = c;
		d->metrics.reload_failed = false;

		log_notice("reloaded '%s': %zu polic%s", d->opts->config_dir, c->nr_policies,
			   c->nr_policies == 1 ? "y" : "ies");
		reload_prefault(d, false);
	}
	if (!d->opts->proc_root)
		reprobe_subpmd(d);
	/* Policies, or the sizes the kernel collapses, may have changed: match every process again. */
	d->cfg_gen++;
	d->discover_cache.valid = false; /* and find their cgroups again */
	notice_unsupported_sizes(d);
	(void)sd_notify(0, "READY=1");
}

/*
 * Before anything else, and before the sandboxes (systemd's read-only
 * file system, the seccomp filter) could hide why: the locks, and whether
 * the state and metrics files can be written where the configuration says.
 * No state file for `mthpd status` is an error; no metrics, a warning.
 */
int reload_claim_files(struct daemon *d)
{
	const struct mthpd_daemon_conf *dc = &d->cfg->daemon;
	struct mthpd_kif self = {.proc_fd = -1, .sys_fd = -1};
	const char *bad = NULL;
	char err[MTHPD_ERR_SIZE], dir[4096], why[MTHPD_ERR_SIZE];
	int r;

	/* By hand, without systemd's RuntimeDirectory=mthpd: the default directory, only that one */
	if (state_in_runtime_dir(dc->state_file) || state_in_runtime_dir(dc->metrics_file)) {
		r = state_runtime_dir_make(why, sizeof(why));
		if (r < 0)
			return log_errno(LOG_LVL_ERR, -EINVAL, "%s", why);
		if (r == 1)
			log_info("created '%s' (root, mode 0755)", STATE_RUNTIME_DIR);
		else if (r == 2)
			log_notice("'%s' could be written by other users (%s): made it mode 0755",
				   STATE_RUNTIME_DIR, why);
	}
	r = files_safe(d, d->cfg, NULL);
	if (r < 0)
		return r;
	r = state_lock_take(d->opts->config_dir, dc->state_file, &d->lock, err, sizeof(err));
	if (r < 0) {
		log_error("%s", err);
		return r == -EBUSY ? r : -EINVAL;
	}
	if (*dc->state_file) {
		r = state_probe_writable(dc->state_file, dir, sizeof(dir), why, sizeof(why));
		if (r < 0)
			return log_errno(LOG_LVL_ERR, -EINVAL, "state_file=%s: %s", dc->state_file,
					 why);
	}
	if (*dc->metrics_file) {
		r = state_probe_writable(dc->metrics_file, dir, sizeof(dir), why, sizeof(why));
		if (r < 0) {
			log_warning("metrics_file=%s: %s; running without metrics", dc->metrics_file,
				    why);
			d->metrics_err = r; /* not said again after each pass */
		}
	}
	/* Who writes the state file: the live process, whatever --proc-root says. */
	r = mthpd_kif_linux_init(NULL, NULL, &self, &bad);
	if (r >= 0)
		r = state_ident_read(self.proc_fd, getpid(), &d->metrics.ident);
	mthpd_kif_done(&self);
	if (r < 0)
		return log_errno(LOG_LVL_ERR, r, "cannot read mthpd's own identity in /proc: %m");
	return 0;
}
