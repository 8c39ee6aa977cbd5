/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "watch.h"

#define WATCH_MASK                                                                          \
	(IN_CREATE | IN_DELETE | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | \
	 IN_MOVE_SELF | IN_ONLYDIR)

int watch_open(struct watch *w, const char *config_dir)
{
	*w = (struct watch){.fd = -1, .timer_fd = -1, .wd_dir = -1, .wd_policy = -1};
	if (snprintf(w->policy_dir, sizeof(w->policy_dir), "%s/policy.d", config_dir) >=
	    (int)sizeof(w->policy_dir))
		return -ENAMETOOLONG;
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	w->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (w->fd < 0 || w->timer_fd < 0)
		return -errno;
	w->wd_dir = inotify_add_watch(w->fd, config_dir, WATCH_MASK);
	if (w->wd_dir < 0)
		return -errno;
	return watch_rearm(w);
}

int watch_rearm(struct watch *w)
{
	int wd;

	if (w->fd < 0)
		return 0;
	/* the same directory gives the same descriptor; another one a new one */
	wd = inotify_add_watch(w->fd, w->policy_dir, WATCH_MASK);
	if (wd < 0 && errno != ENOENT && errno != ENOTDIR)
		return -errno;
	if (w->wd_policy >= 0 && w->wd_policy != wd)
		(void)inotify_rm_watch(w->fd, w->wd_policy); /* EINVAL if it went already */
	w->wd_policy = wd < 0 ? -1 : wd;
	return 0;
}

/*
 * Whether an event may change what mthpd reads: mthpd.conf, policy.d
 * itself, a policy file (*.conf, not hidden), or Kubernetes' "..data"
 * swap and its "..TIMESTAMP" directories.  Not the state or metrics file,
 * an editor's swap file or a temporary file before its rename.
 */
static bool relevant(const struct watch *w, const struct inotify_event *ev)
{
	const char *name = ev->len ? ev->name : "";
	size_t len = strlen(name);

	if (ev->mask & (IN_Q_OVERFLOW | IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED))
		return true;
	if (strncmp(name, "..", 2) == 0)
		return true;
	if (ev->wd == w->wd_dir)
		return strcmp(name, "mthpd.conf") == 0 || strcmp(name, "policy.d") == 0;
	return name[0] != '.' && len > 5 && strcmp(name + len - 5, ".conf") == 0;
}

/*
 * What changed, for "'DIR' changed (WHAT): reloading": a file's name, or
 * the watched directory itself; an event without a name on either is its
 * move or removal (relevant() lets only those through).
 */
static void name_change(struct watch *w, const struct inotify_event *ev)
{
	bool in_policy = ev->wd == w->wd_policy;

	if (ev->mask & IN_Q_OVERFLOW)
		(void)snprintf(w->what, sizeof(w->what), "more changes than inotify could queue");
	else if (ev->len)
		(void)snprintf(w->what, sizeof(w->what), "%s%s", in_policy ? "policy.d/" : "",
			       ev->name);
	else
		(void)snprintf(w->what, sizeof(w->what), "%s was moved or removed",
			       in_policy ? "policy.d" : "the directory");
}

void watch_read(struct watch *w, uint64_t now_usec)
{
	/* aligned for struct inotify_event, as inotify(7) asks */
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool changed = false;
	ssize_t n;

	if (w->fd < 0)
		return;
	while ((n = read(w->fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(void *)p;

			if (ev->wd == w->wd_policy && (ev->mask & IN_IGNORED))
				w->wd_policy = -1; /* policy.d went: watched again after the reload */
			if (relevant(w, ev)) {
				if (!w->first && !changed)
					name_change(w, ev);
				changed = true;
			}
			p += sizeof(*ev) + ev->len;
		}
	}
	if (!changed)
		return;
	if (!w->first)
		w->first = now_usec;
	{
		uint64_t at = now_usec + WATCH_QUIET_USEC;
		struct itimerspec its = {0};

		if (at > w->first + WATCH_MAX_USEC)
			at = w->first + WATCH_MAX_USEC;
		its.it_value.tv_sec = (time_t)(at / 1000000ULL);
		its.it_value.tv_nsec = (long)(at % 1000000ULL) * 1000L;
		(void)timerfd_settime(w->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
	}
}

bool watch_due(struct watch *w)
{
	uint64_t expirations;

	if (w->timer_fd < 0 ||
	    read(w->timer_fd, &expirations, sizeof(expirations)) != (ssize_t)sizeof(expirations))
		return false;
	w->first = 0;
	return true;
}

void watch_close(struct watch *w)
{
	if (w->fd >= 0)
		(void)close(w->fd);
	if (w->timer_fd >= 0)
		(void)close(w->timer_fd);
	w->fd = w->timer_fd = -1;
}
