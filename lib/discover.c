/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "discover.h"
#include "util.h"

int mthpd_mountinfo_cgroup2(const char *mountinfo, char *ret, size_t size)
{
	const char *line = mountinfo;

	while (line && *line) {
		const char *eol = strchr(line, '\n');
		const char *sep = strstr(line, " - ");
		char mnt[4096];

		/* fields: id parent maj:min root mountpoint ... - fstype source opts */
		if (sep && (!eol || sep < eol) && strncmp(sep + 3, "cgroup2 ", 8) == 0 &&
		    sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1) {
			/* mountinfo escapes blanks as \040; cgroup mounts have none in practice */
			if (strlen(mnt) >= size)
				return -ENAMETOOLONG;
			memcpy(ret, mnt, strlen(mnt) + 1);
			return 0;
		}
		line = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

static bool has_suffix(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len > n && memcmp(s + len - n, suffix, n) == 0;
}

int mthpd_cgroup_unit(const char *path, char *ret, size_t size)
{
	static const char *const units[] = {".service", ".scope", ".socket", ".mount", ".swap"};
	const char *p = path;

	while (*p) {
		size_t len;

		p += strspn(p, "/");
		len = strcspn(p, "/");
		if (len == 0)
			break;
		if (has_suffix(p, len, ".slice")) {
			p += len;
			continue;
		}
		for (size_t i = 0; i < ARRAY_SIZE(units); i++)
			if (has_suffix(p, len, units[i])) {
				if (len >= size)
					return -ENAMETOOLONG;
				memcpy(ret, p, len);
				ret[len] = '\0';
				return 0;
			}
		return -ENOENT;
	}
	return -ENOENT;
}

struct walk {
	struct mthpd_proc *procs;
	size_t max, n, stored, cgroups;
	size_t skip, period; /* the window of pids kept when there are too many */
	mthpd_discover_filter filter;
	void *userdata;
	/* a walk that fills a cache: the wanted cgroups, and a watch on every directory */
	struct mthpd_discover_cache *cache;
	const char *mount;
	bool cache_failed;
};

/*
 * Remembers the wanted cgroup @cgpath (of @unit) for the calls that do not
 * walk, with its cgroup.procs open in @fd (taken; -1: none), so that
 * they read it again with one pread and no open.
 */
static void cache_add(struct walk *w, const char *cgpath, const char *unit, int fd)
{
	struct mthpd_discover_cache *c = w->cache;

	if (c->n == c->size) {
		size_t size = c->size ? 2 * c->size : 64;
		struct mthpd_discover_cgroup *v = reallocarray(c->cgroups, size, sizeof(*v));

		if (!v) {
			w->cache_failed = true;
			closep(&fd);
			return;
		}
		c->cgroups = v;
		c->size = size;
	}
	c->cgroups[c->n].cgroup = strdup(cgpath);
	c->cgroups[c->n].unit = strdup(unit);
	c->cgroups[c->n].fd = fd;
	if (!c->cgroups[c->n].cgroup || !c->cgroups[c->n].unit) {
		free(c->cgroups[c->n].cgroup);
		free(c->cgroups[c->n].unit);
		closep(&fd);
		w->cache_failed = true;
		return;
	}
	if (fd >= 0)
		c->open++;
	c->n++;
}

/* One pid of @cgpath, kept if it is in the walk's window. */
static void add_pid(struct walk *w, long pid, const char *cgpath, const char *unit)
{
	/* the pids from the skip-th on, wrapping around the period */
	bool in_window = w->period <= w->max ||
			 ((w->n % w->period) + w->period - w->skip % w->period) % w->period < w->max;

	if (pid <= 0 || pid > 0x3fffffff)
		return;
	if (in_window && w->stored < w->max) {
		struct mthpd_proc *p = &w->procs[w->stored++];

		p->pid = (pid_t)pid;
		if (snprintf(p->cgroup, sizeof(p->cgroup), "%s", cgpath) >= (int)sizeof(p->cgroup))
			w->stored--; /* a path this long is not worth a policy */
		else
			(void)snprintf(p->unit, sizeof(p->unit), "%s", unit);
	}
	w->n++;
}

/*
 * Reads the pids of a cgroup's "cgroup.procs", open in @fd, from its
 * start into the walk's window: pread() and a parse of its own, not
 * stdio, whose fstat and fcntl per file were a third of the system calls
 * of a settled daemon's discovery.  Only a read of nothing is the end: a
 * seq_file such as cgroup.procs hands out whole lines of one page at a
 * time (4092 bytes of 682 pids, measured), so a short read is not.
 * Returns 0, or -errno of the read (-ENODEV: the cgroup was removed).
 */
static int read_procs(struct walk *w, int fd, const char *cgpath, const char *unit)
{
	char buf[4096];
	bool digits = false;
	long pid = 0;
	off_t off = 0;
	ssize_t n;

	do {
		n = pread(fd, buf, sizeof(buf), off);
		if (n < 0)
			return -errno;
		off += n;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] >= '0' && buf[i] <= '9') {
				pid = pid > 0x3fffffff ? pid : pid * 10 + (buf[i] - '0');
				digits = true;
				continue;
			}
			if (digits)
				add_pid(w, pid, cgpath, unit);
			pid = 0;
			digits = false;
		}
	} while (n > 0);
	if (digits)
		add_pid(w, pid, cgpath, unit);
	return 0;
}

/*
 * The processes of the cgroup in @dfd, if the filter wants them.  A walk
 * that fills a cache keeps the file open there, up to
 * MTHPD_DISCOVER_MAX_FDS of them.
 */
static int add_procs(struct walk *w, int dfd, const char *cgpath)
{
	_cleanup_close_ int fd = -1;
	char unit[256];
	int r;

	if (mthpd_cgroup_unit(cgpath, unit, sizeof(unit)) < 0)
		unit[0] = '\0';
	/* Reading cgroup.procs walks the cgroup's tasks: only where wanted. */
	if (w->filter && !w->filter(w->userdata, cgpath, unit))
		return 0;
	fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno; /* ENOENT: removed under us */
	r = read_procs(w, fd, cgpath, unit);
	if (w->cache && !w->cache_failed)
		cache_add(w, cgpath, unit, w->cache->open < MTHPD_DISCOVER_MAX_FDS ? TAKE_FD(fd) : -1);
	return r == -ENODEV ? 0 : r;
}

/* Watches the directory of cgroup @path for cgroups made, removed or moved in it. */
static void watch_dir(struct walk *w, const char *path)
{
	char full[4096 + 512];

	if (!w->cache || w->cache_failed)
		return;
	if (snprintf(full, sizeof(full), "%s%s", w->mount, path) >= (int)sizeof(full) ||
	    inotify_add_watch(w->cache->inotify_fd, full,
			      IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR |
				      IN_DONT_FOLLOW) < 0)
		w->cache_failed = true; /* ENOSPC: the watch limit; walk every time */
}

static int walk_dir(struct walk *w, int dfd, char *path, size_t path_len, size_t path_size,
		    unsigned int depth)
{
	_cleanup_close_ int own = -1;
	DIR *d;
	struct dirent *de;
	int r;

	r = add_procs(w, dfd, path_len ? path : "/");
	if (r < 0)
		return r;
	if (depth >= MTHPD_MAX_CGROUP_DEPTH)
		return 0;
	/* before its entries are read: a cgroup made after the watch is an event, one before is read */
	watch_dir(w, path);
	own = dup(dfd);
	if (own < 0)
		return -errno;
	d = fdopendir(own);
	if (!d)
		return -errno;
	own = -1; /* owned by d now */
	while ((de = readdir(d))) {
		_cleanup_close_ int sub = -1;
		size_t len = strlen(de->d_name);

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (++w->cgroups > MTHPD_MAX_CGROUPS || path_len + 1 + len + 1 > path_size)
			continue;
		sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub < 0)
			continue; /* removed under us */
		path[path_len] = '/';
		memcpy(path + path_len + 1, de->d_name, len + 1);
		r = walk_dir(w, sub, path, path_len + 1 + len, path_size, depth + 1);
		path[path_len] = '\0';
		if (r < 0) {
			(void)closedir(d);
			return r;
		}
	}
	(void)closedir(d);
	return 0;
}

int mthpd_discover(const char *mount, mthpd_discover_filter filter, void *userdata,
		   size_t skip, size_t period, struct mthpd_proc *ret, size_t max, size_t *ret_stored)
{
	struct walk w = {.procs = ret, .max = max, .skip = skip, .period = period,
			 .filter = filter, .userdata = userdata};
	_cleanup_close_ int root = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char path[512] = "";
	int r;

	if (root < 0)
		return -errno;
	r = walk_dir(&w, root, path, 0, sizeof(path), 0);
	if (r < 0)
		return r;
	*ret_stored = w.stored;
	return w.n > (size_t)0x7fffffff ? 0x7fffffff : (int)w.n;
}

void mthpd_discover_cache_free(struct mthpd_discover_cache *cache)
{
	for (size_t i = 0; i < cache->n; i++) {
		free(cache->cgroups[i].cgroup);
		free(cache->cgroups[i].unit);
		closep(&cache->cgroups[i].fd);
	}
	free(cache->cgroups);
	cache->cgroups = NULL;
	cache->n = cache->size = cache->open = 0;
	cache->valid = false;
}

/*
 * Whether anything came on the cache's inotify fd since the last look (it
 * is read empty).  IN_IGNORED alone is not a change: it says that the
 * watch of a removed directory is gone, whose removal its parent's watch
 * has told already, and it comes late when that directory's cgroup.procs
 * was still open in the list (until the walk that follows closes it).
 */
static bool tree_changed(const struct mthpd_discover_cache *cache)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool changed = false;
	ssize_t n;

	while ((n = read(cache->inotify_fd, buf, sizeof(buf))) > 0)
		for (ssize_t at = 0; at + (ssize_t)sizeof(struct inotify_event) <= n;) {
			const struct inotify_event *e = (const void *)(buf + at);

			if (e->mask != IN_IGNORED)
				changed = true;
			at += (ssize_t)(sizeof(*e) + e->len);
		}
	/* EAGAIN: nothing more; anything else: not to be trusted */
	return changed || (n < 0 && errno != EAGAIN && errno != EINTR);
}

int mthpd_discover_cached(struct mthpd_discover_cache *cache, const char *mount,
			  mthpd_discover_filter filter, void *userdata, size_t skip, size_t period,
			  struct mthpd_proc *ret, size_t max, size_t *ret_stored)
{
	struct walk w = {.procs = ret, .max = max, .skip = skip, .period = period,
			 .filter = filter, .userdata = userdata, .mount = mount};
	_cleanup_close_ int root = -1;
	char path[512] = "";
	int r;

	if (cache->inotify_fd < 0)
		return mthpd_discover(mount, filter, userdata, skip, period, ret, max, ret_stored);
	if (tree_changed(cache))
		cache->valid = false;
	if (cache->valid) {
		cache->reuses++;
		for (size_t i = 0; i < cache->n; i++) {
			const struct mthpd_discover_cgroup *g = &cache->cgroups[i];
			_cleanup_close_ int own = -1;
			int fd = g->fd;

			if (fd < 0) {
				/* past MTHPD_DISCOVER_MAX_FDS: one openat below the mount */
				char file[sizeof(path) + sizeof("/cgroup.procs")];

				(void)snprintf(file, sizeof(file), "%s%scgroup.procs", g->cgroup + 1,
					       g->cgroup[1] ? "/" : "");
				if (root < 0)
					root = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
				if (root < 0)
					return -errno;
				fd = own = openat(root, file, O_RDONLY | O_CLOEXEC);
				if (fd < 0 && errno != ENOENT)
					return -errno;
			}
			r = fd < 0 ? -ENOENT : read_procs(&w, fd, g->cgroup, g->unit);
			if (r == -ENOENT || r == -ENODEV) {
				cache->valid = false; /* gone: its event is on its way; walk next time */
				continue;
			}
			if (r < 0)
				return r;
		}
	} else {
		cache->walks++;
		mthpd_discover_cache_free(cache);
		root = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (root < 0)
			return -errno;
		w.cache = cache;
		r = walk_dir(&w, root, path, 0, sizeof(path), 0);
		if (r < 0) {
			mthpd_discover_cache_free(cache);
			return r;
		}
		/* too many cgroups to walk them all: no list of them to trust */
		cache->valid = !w.cache_failed && w.cgroups <= MTHPD_MAX_CGROUPS;
		if (!cache->valid)
			mthpd_discover_cache_free(cache);
	}
	*ret_stored = w.stored;
	return w.n > (size_t)0x7fffffff ? 0x7fffffff : (int)w.n;
}
