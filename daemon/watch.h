/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The configuration reloads when its files change, as on SIGHUP: nobody
 * sends a signal when Kubernetes updates a mounted ConfigMap (it swaps a
 * "..data" symlink inside the mount) or when configuration management
 * rewrites a file.  inotify watches the configuration directory and its
 * policy.d; the events that can change what mthpd reads start a short
 * quiet period, and the reload comes when it ends, so that a tool writing
 * ten files causes one reload, not ten.
 */
#ifndef MTHPD_WATCH_H
#define MTHPD_WATCH_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

/* The reload waits until nothing changed for this long... */
#define WATCH_QUIET_USEC (300ULL * 1000ULL)
/* ...but no longer than this after the first change. */
#define WATCH_MAX_USEC (2ULL * 1000000ULL)

struct watch {
	int fd;           /* inotify; -1: not watching */
	int timer_fd;     /* fires when the quiet period ends; -1 */
	int wd_dir, wd_policy; /* -1: not watched (policy.d may not exist) */
	char policy_dir[PATH_MAX];
	uint64_t first;   /* monotonic us of the first change not yet reloaded; 0: none */
	char what[128];   /* the name of that change, for the log */
};

/*
 * Watches @config_dir and @config_dir/policy.d (which need not exist).
 * Returns 0 or -errno (then @w watches nothing and may be closed).
 */
int watch_open(struct watch *w, const char *config_dir);

/*
 * Reads the pending events (non-blocking), and arms the timer when one of
 * them may change the configuration.  Call when the inotify fd is readable.
 */
void watch_read(struct watch *w, uint64_t now_usec);

/*
 * Call when the timer fd is readable: true when the quiet period is over
 * and the caller should reload now (w->what names the first change).
 */
bool watch_due(struct watch *w);

/*
 * After a reload: policy.d again, which may be another directory now (or
 * appeared, or went).  Returns 0 or -errno.
 */
int watch_rearm(struct watch *w);

void watch_close(struct watch *w);

#endif
