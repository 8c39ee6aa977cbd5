/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * discover: the processes a pass works on.  Finds the cgroup2 mount (on
 * hybrid hosts /sys/fs/cgroup/unified, not /sys/fs/cgroup), walks its
 * cgroups, names each one's systemd unit, and lists their pids.
 */
#ifndef MTHPD_DISCOVER_H
#define MTHPD_DISCOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "kif.h"

/* Cgroups deeper than this, or more of them, are not walked. */
#define MTHPD_MAX_CGROUP_DEPTH 32
#define MTHPD_MAX_CGROUPS 65536

/*
 * Pure: the cgroup2 mount point in a /proc/self/mountinfo text, e.g.
 * "35 25 0:30 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate\n"
 * Returns 0, -ENOENT if there is none, -ENAMETOOLONG.
 */
int mthpd_mountinfo_cgroup2(const char *mountinfo, char *ret, size_t size);

/*
 * Pure: the systemd unit a cgroup path belongs to: its first component that
 * is not a slice, if that has a unit suffix ("/system.slice/redis.service/x"
 * -> "redis.service").  Returns 0, or -ENOENT when it is in no unit.
 */
int mthpd_cgroup_unit(const char *path, char *ret, size_t size);

struct mthpd_proc {
	pid_t pid;
	char cgroup[512]; /* path below the cgroup2 mount, "/" for the root */
	char unit[256];   /* "" when in no unit */
};

/* Whether the processes of a cgroup (path below the mount, its unit or "")
 * are wanted; a cgroup it says no to is walked, but its pids are not read. */
typedef bool (*mthpd_discover_filter)(void *userdata, const char *cgroup, const char *unit);

/*
 * Walks the cgroup2 tree mounted at @mount and appends the pids of every
 * cgroup @filter wants (all when NULL; cgroup.procs) to @ret, at most @max,
 * their number in *ret_stored.  When there are more: with @period, the
 * number found last time, the @max kept are those from the @skip-th on,
 * wrapping around, so that a caller moving @skip on by @max each time
 * comes round to every one of them.  Returns the number found (more than
 * @max if some were left out), or -errno.  Cgroups that vanish during the
 * walk are skipped.
 */
int mthpd_discover(const char *mount, mthpd_discover_filter filter, void *userdata,
		   size_t skip, size_t period, struct mthpd_proc *ret, size_t max, size_t *ret_stored);

/*
 * The cgroups a walk found wanted, kept until the tree changes (issue 28):
 * a node has a thousand cgroups, a policy matches a few, and the walk
 * opened every one of them once a second.  Each cgroup directory walked is
 * watched (inotify: a directory made, removed or moved in it; the kernel
 * says so for cgroups, which are made and removed with mkdir and rmdir);
 * until an event comes, a call reads the cgroup.procs of the wanted ones
 * only, with one pread each on a file kept open (the first
 * MTHPD_DISCOVER_MAX_FDS; the others are opened each time).  New processes in them are found as before: their cgroup.procs
 * is read every time.
 */
#define MTHPD_DISCOVER_MAX_FDS 256

struct mthpd_discover_cache {
	int inotify_fd; /* the caller's, IN_NONBLOCK; -1: no cache, every call walks */
	bool valid;     /* the list is what the tree holds now */
	struct mthpd_discover_cgroup {
		char *cgroup; /* path below the mount */
		char *unit;
		int fd;       /* its cgroup.procs, kept open; -1 past MTHPD_DISCOVER_MAX_FDS */
	} *cgroups;
	size_t n, size, open; /* open: how many of them have an fd */
	unsigned long walks, reuses; /* calls that walked the tree, calls that did not */
};

/*
 * mthpd_discover() through @cache: the same processes, the same window,
 * without walking the tree when nothing in it changed since the last
 * walk.  Set cache->valid to false when what @filter says changes (a
 * reload).  Falls back to walking every time when a watch cannot be
 * added (the inotify watch limit).
 */
int mthpd_discover_cached(struct mthpd_discover_cache *cache, const char *mount,
			  mthpd_discover_filter filter, void *userdata, size_t skip, size_t period,
			  struct mthpd_proc *ret, size_t max, size_t *ret_stored);

/* Frees the list (not the inotify fd, which is the caller's). */
void mthpd_discover_cache_free(struct mthpd_discover_cache *cache);

#endif
