/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
};

/* Reads "cgroup.procs" of the directory @dfd, one pid per line. */
static int add_procs(struct walk *w, int dfd, const char *cgpath)
{
	_cleanup_fclose_ FILE *f = NULL;
	char unit[256];
	int fd;
	long pid;

	if (mthpd_cgroup_unit(cgpath, unit, sizeof(unit)) < 0)
		unit[0] = '\0';
	/* Reading cgroup.procs walks the cgroup's tasks: only where wanted. */
	if (w->filter && !w->filter(w->userdata, cgpath, unit))
		return 0;
	fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	f = fdopen(fd, "re");
	if (!f) {
		(void)close(fd);
		return -errno;
	}
	while (fscanf(f, "%ld", &pid) == 1) {
		/* the pids from the skip-th on, wrapping around the period */
		bool in_window = w->period <= w->max ||
				 ((w->n % w->period) + w->period - w->skip % w->period) % w->period < w->max;

		if (pid <= 0)
			continue;
		if (in_window && w->stored < w->max) {
			struct mthpd_proc *p = &w->procs[w->stored++];

			p->pid = (pid_t)pid;
			if (snprintf(p->cgroup, sizeof(p->cgroup), "%s", cgpath) >= (int)sizeof(p->cgroup))
				continue; /* a path this long is not worth a policy */
			memcpy(p->unit, unit, sizeof(p->unit));
		}
		w->n++;
	}
	return 0;
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
