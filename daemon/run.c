/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `mthpd run`: the daemon.  One pass over the processes that policies
 * match, then sleep scan_sleep_millisecs, as khugepaged does; signals and
 * timers arrive through signalfd and timerfd, waited on with poll().
 * [systemd src/oom/oomd.c run(), OpenBSD ntpd: flag-only signal handling]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "discover.h"
#include "features.h"
#include "kif.h"
#include "knobs.h"
#include "log.h"
#include "metrics.h"
#include "pace.h"
#include "run.h"
#include "sandbox.h"
#include "sched.h"
#include "state.h"
#include "target.h"
#include "text.h"
#include "version.h"
#include "watch.h"

void daemon_watchdog_ping(struct daemon *d)
{
	uint64_t now;

	if (!d->watchdog_usec)
		return;
	now = now_usec();
	if (now < d->next_watchdog)
		return;
	(void)sd_notify(0, "WATCHDOG=1");
	d->next_watchdog = now + d->watchdog_usec / 2;
}

/* The metrics and state files, whatever changed. */
void daemon_write_files(struct daemon *d)
{
	const struct mthpd_config *c = d->cfg;
	int r;

	d->written_usec = now_usec();
	pass_count_processes(d);
	d->metrics.max_units = c->daemon.metrics_max_units;
	r = metrics_write_prometheus(&d->metrics, c->daemon.metrics_file);
	/* Said once, and again when it changes: not after every pass. */
	if (r < 0 && r != d->metrics_err)
		log_errno(LOG_LVL_WARNING, r, "cannot write '%s': %m, ignoring", c->daemon.metrics_file);
	d->metrics_err = r < 0 ? r : 0;
	r = metrics_write_state(&d->metrics, c->daemon.state_file);
	if (r < 0 && r != d->state_err)
		log_errno(LOG_LVL_WARNING, r, "cannot write '%s': %m, ignoring", c->daemon.state_file);
	d->state_err = r < 0 ? r : 0;
}

/*
 * `mthpd status` takes a state file older than a few seconds for a hung
 * daemon: rewritten at least once a second, also between passes
 * scan_sleep_millisecs apart and during a pass that takes long.
 */
void daemon_keep_files_fresh(struct daemon *d)
{
	/* 9/10: the arrival timer's tick a second later must not find it a hair too young */
	if (now_usec() - d->written_usec >= FILES_INTERVAL_USEC * 9 / 10)
		daemon_write_files(d);
}

/*
 * Signals whose default action would end the daemon but that mean nothing
 * to it: a stray one (a mistyped kill, a `pkill -USR2 mthp`, a pipe that
 * closed) must not stop a root daemon that services count on.  They are
 * read from the signalfd like the others and dropped, SIGUSR1 after it
 * has logged the last pass's status line.
 */
static const int ignored_signals[] = {
	SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSTKFLT, SIGXFSZ,
};

/*
 * Reads pending signals without blocking: SIGTERM/SIGINT stop, SIGHUP
 * reloads, SIGUSR1 logs one status line, the other ignored_signals[] are
 * said once each (by whom) and dropped.
 */
void daemon_read_signals(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		int sig = (int)si.ssi_signo;

		if (sig == SIGHUP) {
			d->reload = true;
		} else if (sig == SIGTERM || sig == SIGINT) {
			d->stop = true;
		} else if (sig == SIGUSR1) {
			log_notice("SIGUSR1 from pid %u: %s (%.1f s ago)", (unsigned int)si.ssi_pid,
				   d->last_status[0] ? d->last_status : "no pass yet",
				   (double)(now_usec() - d->last_status_usec) / 1e6);
		} else if (sig > 0 && sig < 64 && !(d->signals_said & (1ULL << sig))) {
			d->signals_said |= 1ULL << sig;
			log_info("ignoring SIG%s from pid %u (said once)", sigabbrev_np(sig),
				 (unsigned int)si.ssi_pid);
		}
	}
}

static int arm_timer(struct daemon *d, uint64_t msec)
{
	struct itimerspec its = {
		.it_value = {.tv_sec = (time_t)(msec / 1000), .tv_nsec = (long)(msec % 1000) * 1000000L},
	};

	if (msec == 0)
		its.it_value.tv_nsec = 1; /* zero would disarm it */
	return timerfd_settime(d->timer_fd, 0, &its, NULL) < 0 ? -errno : 0;
}

/*
 * After a pass: the next one scan_sleep_millisecs later, or, when passes
 * come at most a second apart and nothing is left to do, on the arrival
 * timer's next tick.  At a pass every 10 ms over 100 settled processes the
 * wake-ups and passes that found nothing were 3% of a CPU (bench/daemon).
 */
static int arm_next_pass(struct daemon *d)
{
	static const struct itimerspec off;

	uint64_t msec = d->cfg->daemon.scan_sleep_millisecs, now = now_usec();

	d->idle = d->cfg->daemon.scan_sleep_millisecs <= ARRIVAL_CHECK_MSEC && pass_settled(d);
	if (d->idle)
		return timerfd_settime(d->timer_fd, 0, &off, NULL) < 0 ? -errno : 0;
	/*
	 * A process that comes of age (min_age=) before then: a pass then,
	 * not up to scan_sleep_millisecs later; at least 100 ms on, so that
	 * one a pass did not reach (pages_to_scan spent) cannot spin passes.
	 */
	for (size_t i = 0; i < d->sched.n; i++) {
		uint64_t until = d->sched.procs[i]->young_until, wait;

		if (!until || d->sched.procs[i]->policy < 0)
			continue;
		wait = until > now ? (until - now + 999) / 1000 : 0;
		if (wait < 100)
			wait = 100;
		if (wait < msec)
			msec = wait;
	}
	return arm_timer(d, msec);
}

/*
 * The kernel as mthpd finds it: knobs, features, kpageflags, whether
 * MADV_COLD splits, said once.  Returns 0 or -errno, logged.
 */
static int setup_kernel(struct daemon *d)
{
	char feat[160];
	const char *dis;
	int r;

	r = mthpd_features_probe(&d->kif, &d->features);
	if (r < 0)
		return log_errno(LOG_LVL_ERR, r, "cannot probe kernel features: %m");
	if (!d->opts->proc_root && !d->features.pfns_visible) {
		log_error("pagemap shows no page frame numbers: mthpd needs CAP_SYS_ADMIN");
		return -EPERM;
	}
	r = d->kif.ops->open_proc(&d->kif, "kpageflags", O_RDONLY);
	if (r < 0)
		return log_errno(LOG_LVL_ERR, r, "cannot open kpageflags: %m (mthpd needs root)");
	d->kpf_fd = r;
	/* a synthetic proc root has no kernel behind it to try */
	if (!d->opts->proc_root) {
		r = mthpd_features_probe_split(&d->kif, d->kpf_fd, &d->features);
		if (r < 0)
			return log_errno(LOG_LVL_ERR, r, "cannot probe kernel features: %m");
	}
	log_info("kernel: %s", mthpd_features_describe(&d->features, feat, sizeof(feat)));
	d->page_reporting = mthpd_kif_free_page_reporting(&d->kif);
	reload_prefault(d, true);
	notice_unsupported_sizes(d);
	notice_no_split(d);
	/* Testing aid: the daemon as it was before the refill backoff. */
	dis = getenv("MTHPD_DISABLE");
	d->no_refill_backoff = dis && strstr(dis, "refill_backoff");
	if (d->no_refill_backoff)
		log_notice("MTHPD_DISABLE=refill_backoff: emptied ranges are refilled");
	return 0;
}

/* The cgroup2 hierarchy and the pid arrays of discovery.  Returns 0 or -ENOMEM, logged. */
static int setup_discovery(struct daemon *d)
{
	char mountinfo[65536];
	int r;

	r = mthpd_kif_read_proc(&d->kif, "self/mountinfo", mountinfo, sizeof(mountinfo));
	if (r >= 0 || r == -EFBIG)
		r = mthpd_mountinfo_cgroup2(mountinfo, d->cgroup_mount, sizeof(d->cgroup_mount));
	if (r < 0) {
		log_warning("no cgroup2 hierarchy mounted: no process can be matched");
	} else {
		log_info("cgroup2 hierarchy at '%s'", d->cgroup_mount);
		d->cgroup_fd = open(d->cgroup_mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		/* without it (no inotify instance left): the tree is walked every time, as before */
		d->discover_cache.inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	}
	d->procs = calloc(d->cfg->daemon.max_pids_per_pass + 1U, sizeof(*d->procs));
	d->pids = calloc(d->cfg->daemon.max_pids_per_pass + 1U, sizeof(*d->pids));
	d->pids_size = d->cfg->daemon.max_pids_per_pass;
	d->cfg_gen = 1;
	if (!d->procs || !d->pids)
		return log_errno(LOG_LVL_ERR, -ENOMEM, "%m");
	return 0;
}

/* Signals through the signalfd only, and the timers.  Returns 0 or -errno, logged. */
static int setup_events(struct daemon *d)
{
	const struct itimerspec every = {
		.it_interval = {.tv_sec = ARRIVAL_CHECK_MSEC / 1000},
		.it_value = {.tv_sec = ARRIVAL_CHECK_MSEC / 1000},
	};
	sigset_t mask;

	/* Signals only through the signalfd: no handlers at all. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	for (size_t i = 0; i < ARRAY_SIZE(ignored_signals); i++)
		sigaddset(&mask, ignored_signals[i]);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return log_errno(LOG_LVL_ERR, -errno, "sigprocmask: %m");
	d->sig_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	d->arrival_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	d->pace_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->sig_fd < 0 || d->timer_fd < 0 || d->arrival_fd < 0 || d->pace_fd < 0)
		return log_errno(LOG_LVL_ERR, -errno, "signalfd/timerfd: %m");
	if (timerfd_settime(d->arrival_fd, 0, &every, NULL) < 0)
		return log_errno(LOG_LVL_ERR, -errno, "timerfd_settime: %m");
	return 0;
}

/*
 * Each process kept open from pass to pass holds three fds (pagemap,
 * stat, pidfd), and discovery keeps up to MTHPD_DISCOVER_MAX_FDS
 * cgroup.procs open.  mthpd uses poll(), not select(), so the soft limit
 * may go up to the hard one (systemd's advice for LimitNOFILE=); past it,
 * targets are closed after each visit.
 */
static void setup_fd_limit(struct daemon *d)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		rl.rlim_cur = 1024;
	d->max_open = rl.rlim_cur > 128 + MTHPD_DISCOVER_MAX_FDS
			      ? (size_t)(rl.rlim_cur - 64 - MTHPD_DISCOVER_MAX_FDS) / 3
			      : 21;
}

static int setup(struct daemon *d)
{
	const char *bad_root = NULL, *file = NULL;
	int r;

	r = mthpd_kif_linux_init(d->opts->proc_root, d->opts->sys_root, &d->kif, &bad_root);
	if (r < 0)
		return log_errno(LOG_LVL_ERR, r, "cannot open '%s': %m", bad_root);
	r = mthpd_knobs_read_sysfs(&d->kif, 7, &d->sys_defaults, &file);
	if (r < 0)
		return log_errno(LOG_LVL_ERR, r, "cannot read '%s': %m", file);
	alloc_hold_init(d);
	r = reload_load(d, &d->cfg);
	if (r >= 0)
		r = reload_claim_files(d);
	if (r >= 0)
		r = setup_kernel(d);
	if (r >= 0)
		r = setup_discovery(d);
	if (r >= 0)
		r = setup_events(d);
	if (r < 0)
		return r;
	setup_fd_limit(d);
	if (sd_watchdog_enabled(0, &d->watchdog_usec) <= 0)
		d->watchdog_usec = 0;
	r = watch_open(&d->watch, d->opts->config_dir);
	if (r < 0) {
		log_errno(LOG_LVL_WARNING, r,
			  "cannot watch '%s' for changes: %m; reload with SIGHUP after editing it",
			  d->opts->config_dir);
		watch_close(&d->watch);
	}
	/* Everything is open: from here on only the capabilities and system calls it needs. */
	if (d->opts->sandbox) {
		char err[256], desc[256];

		r = sandbox_enter(err, sizeof(err));
		if (r < 0)
			return log_errno(LOG_LVL_ERR, r, "cannot enter the sandbox: %s", err);
		if (sandbox_describe(desc, sizeof(desc)) == 0)
			log_info("sandbox: %s", desc);
	}
	return 0;
}

int run_daemon(const struct run_opts *o)
{
	struct daemon d = {.opts = o, .kpf_fd = -1, .sig_fd = -1, .timer_fd = -1, .arrival_fd = -1,
			   .pace_fd = -1, .cgroup_fd = -1, .lock = {.dir_fd = -1, .file_fd = -1},
			   .watch = {.fd = -1, .timer_fd = -1, .wd_dir = -1, .wd_policy = -1},
			   .kif = {.proc_fd = -1, .sys_fd = -1},
			   .discover_cache = {.inotify_fd = -1}};
	int r, status = 0;

	log_setup(getenv("MTHPD_DEBUG") ? LOG_LVL_DEBUG : LOG_LVL_INFO);
	d.metrics.pid = getpid();
	d.metrics.version = MTHPD_VERSION;
	d.metrics.features = &d.features;
	r = setup(&d);
	if (r < 0) {
		status = r == -EINVAL || r == -EBUSY ? 2 : 3; /* a second daemon: 2 */
		goto out;
	}
	log_notice("started: mthpd %s, %zu polic%s from '%s', a pass every %u ms%s", MTHPD_VERSION,
		   d.cfg->nr_policies, d.cfg->nr_policies == 1 ? "y" : "ies", o->config_dir,
		   d.cfg->daemon.scan_sleep_millisecs, d.cfg->daemon.dry_run ? ", dry run" : "");
	(void)sd_notify(0, "READY=1\nSTATUS=started");
	d.next_watchdog = 0;
	daemon_watchdog_ping(&d);
	r = arm_timer(&d, 0);

	while (!d.stop && r >= 0) {
		struct pollfd pfd[6] = {{.fd = d.sig_fd, .events = POLLIN},
					{.fd = d.timer_fd, .events = POLLIN},
					{.fd = d.arrival_fd, .events = POLLIN},
					{.fd = d.pace_fd, .events = POLLIN},
					{.fd = d.watch.fd, .events = POLLIN},
					{.fd = d.watch.timer_fd, .events = POLLIN}};
		int timeout = d.watchdog_usec ? (int)(d.watchdog_usec / 2000) : -1;
		uint64_t expirations;

		if (poll(pfd, ARRAY_SIZE(pfd), timeout) < 0 && errno != EINTR) {
			r = log_errno(LOG_LVL_ERR, -errno, "poll: %m");
			break;
		}
		daemon_watchdog_ping(&d);
		daemon_read_signals(&d);
		if (d.stop)
			break;
		if (pfd[4].revents)
			watch_read(&d.watch, now_usec());
		if (pfd[5].revents && watch_due(&d.watch)) {
			log_notice("'%s' changed (%s): reloading", o->config_dir, d.watch.what);
			d.reload = true;
		}
		if (d.reload) {
			d.reload = false;
			/* first: a change while the files are read is seen, and reloads again */
			if (watch_rearm(&d.watch) < 0)
				log_warning("cannot watch '%s' for changes any more: reload with SIGHUP",
					    d.watch.policy_dir);
			reload_now(&d);
		}
		bool due = read(d.timer_fd, &expirations, sizeof(expirations)) == (ssize_t)sizeof(expirations);
		bool tick = !due && read(d.arrival_fd, &expirations, sizeof(expirations)) ==
					    (ssize_t)sizeof(expirations);

		/*
		 * The arrival timer's tick: for an idle daemon, its pass; with
		 * passes more than a second apart, one at once if a process
		 * came, pressure ended, or the allocation pause ended or
		 * probes.
		 */
		/*
		 * The allocation pause: buddyinfo once a second, and a pass
		 * at once when it ends or its probe is due (alloc-hold.c).
		 */
		bool alloc_pass = tick && alloc_hold_poll(&d);

		if (due || (tick && d.idle) || alloc_pass ||
		    (tick && d.cfg->daemon.scan_sleep_millisecs > ARRIVAL_CHECK_MSEC &&
		     (pass_newcomers(&d) || pressure_ended(&d)))) {
			pass_run(&d, tick && d.idle);
			r = arm_next_pass(&d);
			if (r >= 0)
				r = pass_arm_pace(&d);
		} else if (read(d.pace_fd, &expirations, sizeof(expirations)) ==
			   (ssize_t)sizeof(expirations)) {
			pass_pace_resume(&d);
			r = pass_arm_pace(&d);
		}
		daemon_keep_files_fresh(&d);
	}
	(void)sd_notify(0, "STOPPING=1\nSTATUS=stopping");
	log_notice("stopping after %lu pass%s", d.metrics.passes, d.metrics.passes == 1 ? "" : "es");
out:
	if (d.kpf_fd >= 0)
		(void)close(d.kpf_fd);
	if (d.sig_fd >= 0)
		(void)close(d.sig_fd);
	if (d.cgroup_fd >= 0)
		(void)close(d.cgroup_fd);
	if (d.timer_fd >= 0)
		(void)close(d.timer_fd);
	if (d.arrival_fd >= 0)
		(void)close(d.arrival_fd);
	if (d.pace_fd >= 0)
		(void)close(d.pace_fd);
	watch_close(&d.watch);
	if (d.discover_cache.inotify_fd >= 0)
		(void)close(d.discover_cache.inotify_fd);
	mthpd_discover_cache_free(&d.discover_cache);
	free(d.bytes_left);
	mthpd_kif_done(&d.kif);
	state_lock_release(&d.lock);
	metrics_free(&d.metrics);
	mthpd_sched_free(&d.sched);
	mthpd_config_free(d.cfg);
	free(d.procs);
	free(d.pids);
	return status;
}
