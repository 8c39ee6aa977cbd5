/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "coverage.h"
#include "kif.h"
#include "output.h"
#include "state.h"
#include "target.h"
#include "text.h"
#include "util.h"

/* Reads a small file below @dirfd, NUL-terminated.  Returns the length or -errno. */
static int read_at(int dirfd, const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

int state_ident_read(int proc_fd, pid_t pid, struct state_ident *ret)
{
	struct state_ident id = {.pid = pid};
	char path[32], line[1024];
	int r;

	(void)snprintf(path, sizeof(path), "%d/stat", (int)pid);
	r = read_at(proc_fd, path, line, sizeof(line));
	if (r == -ENOENT || r == 0)
		return -ESRCH;
	if (r < 0)
		return r;
	/* "1234 (mthpd) S 1 1234 ... 4242 ...": comm, and field 22 the start time */
	r = mthpd_stat_parse_start(line, id.comm, sizeof(id.comm), &id.start_time);
	if (r < 0)
		return r;
	/* field 3, after the comm's last ')': R, S, D, ..., Z for a zombie */
	id.state = strrchr(line, ')')[2];
	/* "3f0c9a8e-5b1d-4c2e-9f6a-0123456789ab\n", new at every boot */
	r = read_at(proc_fd, "sys/kernel/random/boot_id", id.boot_id, sizeof(id.boot_id));
	if (r < 0)
		return r;
	id.boot_id[strcspn(id.boot_id, "\n")] = '\0';
	*ret = id;
	return 0;
}

/*
 * The directory part of @path into @dir ("/" for "/status", "." for a bare
 * name) and a pointer to the last part.  Returns 0 or -ENAMETOOLONG.
 */
static int split_path(const char *path, char *dir, size_t dir_size, const char **ret_base)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;

	if (!slash) {
		if (dir_size < 2)
			return -ENAMETOOLONG;
		memcpy(dir, ".", 2);
		*ret_base = path;
		return 0;
	}
	if (len == 0)
		len = 1; /* "/status": the root */
	if (len >= dir_size)
		return -ENAMETOOLONG;
	memcpy(dir, path, len);
	dir[len] = '\0';
	*ret_base = slash + 1;
	return 0;
}

/* 64 bits no one else guesses in advance; the time and a count where getrandom() cannot say */
static uint64_t tmp_suffix(void)
{
	static uint64_t count;
	struct timespec ts;
	uint64_t v;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	v = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 32 ^ ++count << 48 ^ (uint64_t)getpid();
	/* splitmix64's finaliser: neighbouring inputs give unrelated names */
	v = (v ^ v >> 30) * 0xbf58476d1ce4e5b9ULL;
	v = (v ^ v >> 27) * 0x94d049bb133111ebULL;
	return v ^ v >> 31;
}

int state_tmp_create(const char *path, struct state_tmp *ret, int *ret_fd)
{
	struct state_tmp t = {.dir_fd = -1};
	char dir[4096];
	int r;

	if (!path || !*path)
		return -EINVAL;
	r = split_path(path, dir, sizeof(dir), &t.base);
	if (r < 0)
		return r;
	if (!*t.base)
		return -EISDIR;
	t.dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (t.dir_fd < 0)
		return -errno;
	/* A name taken (planted, or left by a crash) is only skipped: a few tries. */
	for (int i = 0; i < 8; i++) {
		int fd;

		if (snprintf(t.name, sizeof(t.name), "%s.tmp-%016" PRIx64, t.base, tmp_suffix()) >=
		    (int)sizeof(t.name)) {
			r = -ENAMETOOLONG;
			break;
		}
		fd = openat(t.dir_fd, t.name,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0644);
		if (fd >= 0) {
			*ret = t;
			*ret_fd = fd;
			return 0;
		}
		r = -errno;
		if (r != -EEXIST)
			break;
	}
	(void)close(t.dir_fd);
	return r;
}

int state_tmp_commit(struct state_tmp *t)
{
	int r = 0;

	if (renameat(t->dir_fd, t->name, t->dir_fd, t->base) < 0) {
		r = -errno;
		(void)unlinkat(t->dir_fd, t->name, 0);
	}
	(void)close(t->dir_fd);
	t->dir_fd = -1;
	return r;
}

void state_tmp_discard(struct state_tmp *t)
{
	if (t->dir_fd < 0)
		return;
	(void)unlinkat(t->dir_fd, t->name, 0);
	(void)close(t->dir_fd);
	t->dir_fd = -1;
}

/* Another user can write @st (a directory) without the sticky bit, or owns it. */
static const char *unsafe_dir(const struct stat *st, char *buf, size_t size)
{
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		(void)snprintf(buf, size, "belongs to uid %u, who can change what is in it",
			       (unsigned int)st->st_uid);
		return buf;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX)) {
		(void)snprintf(buf, size,
			       "can be written by other users (mode %04o) and has no sticky bit",
			       (unsigned int)(st->st_mode & 07777));
		return buf;
	}
	return NULL;
}

int state_dir_check(const char *path, char *why, size_t why_size)
{
	char dir[4096], what[96];
	const char *base, *bad;
	struct stat st;
	int r;

	r = split_path(path, dir, sizeof(dir), &base);
	if (r < 0)
		return r;
	if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode)) {
		(void)snprintf(why, why_size,
			       "directory '%s' is a symbolic link: name the directory it points to",
			       dir);
		return -EPERM;
	}
	/* the directory, then every one above it: one above could swap the one below */
	for (;;) {
		char *slash;

		if (stat(dir, &st) < 0)
			return -errno;
		bad = S_ISDIR(st.st_mode) ? unsafe_dir(&st, what, sizeof(what)) : NULL;
		if (bad) {
			(void)snprintf(why, why_size, "directory '%s' %s", dir, bad);
			return -EPERM;
		}
		slash = strrchr(dir, '/');
		if (!slash || strcmp(dir, "/") == 0)
			return 0;
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
}

int state_probe_writable(const char *path, char *ret_dir, size_t dir_size, char *why,
			 size_t why_size)
{
	struct state_tmp t;
	const char *base;
	struct stat st;
	int r, fd;

	r = split_path(path, ret_dir, dir_size, &base);
	if (r < 0)
		return r;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		(void)snprintf(why, why_size, "'%s' is a directory", path);
		return -EISDIR;
	}
	r = state_tmp_create(path, &t, &fd);
	if (r < 0) {
		(void)snprintf(why, why_size, "cannot write files in '%s': %s", ret_dir, strerror(-r));
		return r;
	}
	(void)close(fd);
	/*
	 * What the rename over @path will meet: in a sticky directory, a file
	 * of another user (without CAP_FOWNER, dropped by the sandbox); an
	 * immutable or append-only file (chattr +i, +a) anywhere.
	 */
	if (fstatat(t.dir_fd, t.base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		struct stat dst;

		if (st.st_uid != geteuid() && fstat(t.dir_fd, &dst) == 0 && (dst.st_mode & S_ISVTX)) {
			(void)snprintf(why, why_size,
				       "'%s' belongs to uid %u in a sticky directory: mthpd cannot "
				       "replace it",
				       path, (unsigned int)st.st_uid);
			r = -EPERM;
		} else if (S_ISREG(st.st_mode)) {
			_cleanup_close_ int ffd = openat(t.dir_fd, t.base, O_RDONLY | O_NONBLOCK |
							 O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
			int flags = 0;

			/* ENOTTY, EOPNOTSUPP: a file system without attributes has none set */
			if (ffd >= 0 && ioctl(ffd, FS_IOC_GETFLAGS, &flags) == 0 &&
			    (flags & (FS_IMMUTABLE_FL | FS_APPEND_FL))) {
				(void)snprintf(why, why_size,
					       "'%s' is %s (chattr +%c): mthpd cannot replace it",
					       path,
					       flags & FS_IMMUTABLE_FL ? "immutable" : "append-only",
					       flags & FS_IMMUTABLE_FL ? 'i' : 'a');
				r = -EPERM;
			}
		}
	}
	state_tmp_discard(&t);
	return r;
}

void state_lock_release(struct state_lock *l)
{
	if (l->file_fd >= 0)
		(void)close(l->file_fd);
	if (l->dir_fd >= 0)
		(void)close(l->dir_fd);
	l->file_fd = l->dir_fd = -1;
}

int state_lock_file(const char *state_file, int *ret_fd, char *err, size_t err_size)
{
	_cleanup_close_ int fd = -1;
	char path[4096], holder[32] = "";
	struct stat st;
	int r;

	if (snprintf(path, sizeof(path), "%s.lock", state_file) >= (int)sizeof(path)) {
		(void)snprintf(err, err_size, "state_file=%s: path too long", state_file);
		return -ENAMETOOLONG;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
	if (fd < 0) {
		r = -errno;
		(void)snprintf(err, err_size, "state_file=%s: cannot create its lock '%s': %s",
			       state_file, path, strerror(-r));
		return r;
	}
	/*
	 * It is truncated and written below: only a file of ours with no other
	 * name (a hard link planted to another file would be overwritten).
	 */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    st.st_uid != geteuid()) {
		(void)snprintf(err, err_size,
			       "state_file=%s: its lock '%s' is not a regular file of uid %u with one "
			       "name; remove it",
			       state_file, path, (unsigned int)geteuid());
		return -EPERM;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		r = errno == EWOULDBLOCK ? -EBUSY : -errno;
		if (pread(fd, holder, sizeof(holder) - 1, 0) > 0)
			holder[strcspn(holder, "\n")] = '\0';
		(void)snprintf(err, err_size,
			       "another mthpd%s%s already runs with state_file=%s (it holds '%s')",
			       holder[0] ? " with pid " : "", holder, state_file, path);
		return r;
	}
	/* who holds it, for the message of the next one */
	(void)snprintf(holder, sizeof(holder), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 ||
	    pwrite(fd, holder, strlen(holder), 0) != (ssize_t)strlen(holder)) {
		r = -errno;
		(void)snprintf(err, err_size, "state_file=%s: cannot write its lock '%s': %s",
			       state_file, path, strerror(-r));
		return r;
	}
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int state_lock_take(const char *config_dir, const char *state_file, struct state_lock *ret,
		    char *err, size_t err_size)
{
	struct state_lock l = {.dir_fd = -1, .file_fd = -1};
	int r;

	/* The state file's lock first: it can say who holds it. */
	if (state_file && *state_file) {
		r = state_lock_file(state_file, &l.file_fd, err, err_size);
		if (r < 0)
			return r;
	}
	/* A read-only directory locks as well: flock() needs no write access. */
	l.dir_fd = open(config_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (l.dir_fd < 0 || flock(l.dir_fd, LOCK_EX | LOCK_NB) < 0) {
		r = errno == EWOULDBLOCK ? -EBUSY : -errno;
		if (r == -EBUSY)
			(void)snprintf(err, err_size,
				       "another mthpd already runs on the configuration in '%s'",
				       config_dir);
		else
			(void)snprintf(err, err_size, "cannot lock the configuration directory '%s': %s",
				       config_dir, strerror(-r));
		state_lock_release(&l);
		return r;
	}
	*ret = l;
	return 0;
}

/* The value of "KEY value" in the state file @buf, or NULL; cut at the line's end into @v. */
static const char *field(const char *buf, const char *key, char *v, size_t size)
{
	size_t klen = strlen(key);

	for (const char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, klen) == 0 && p[klen] == ' ') {
			size_t n = strcspn(p + klen + 1, "\n");

			if (n >= size)
				n = size - 1;
			memcpy(v, p + klen + 1, n);
			v[n] = '\0';
			return v;
		}
	}
	return NULL;
}

static bool parse_u64(const char *s, uint64_t *ret)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*ret = strtoull(s, &end, 10);
	return errno == 0 && *end == '\0';
}

/*
 * A verdict of `status` without the file's coverage (the daemon does not
 * run, or the file cannot be believed): one line of text, or with --json
 * one object {"schema_version","state_file","daemon":{"status","pid",
 * "message"}}.  @status: "not_running" or "invalid" (not a state file
 * mthpd wrote).  Returns 3, the exit status of both.
 */
static int __attribute__((format(printf, 6, 7)))
said(FILE *out, const struct coverage_filter *f, const char *path, const char *status, uint64_t pid,
     const char *fmt, ...)
{
	_cleanup_free_ char *line = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (r < 0)
		line = NULL;
	if (!f->json) {
		/* a path, a comm another process chose: escaped (lib/text.h) */
		_cleanup_free_ char *shown = line ? mthpd_text_escape_dup(line) : NULL;

		fprintf(out, "%s\n", shown ? shown : "mthpd: out of memory");
		return 3;
	}
	fprintf(out, "{\"schema_version\":%d,\"state_file\":", COVERAGE_JSON_SCHEMA);
	mthpd_output_json_string(out, path);
	fprintf(out, ",\"daemon\":{\"status\":\"%s\",\"pid\":", status);
	if (pid)
		fprintf(out, "%" PRIu64, pid);
	else
		fputs("null", out);
	fputs(",\"message\":", out);
	mthpd_output_json_string(out, line ? line : "mthpd: out of memory");
	fputs("}}\n", out);
	return 3;
}

/*
 * The daemon runs (@stale false) or wrote its file too long ago: the line
 * that says so and the coverage, as text or as one JSON object.
 */
static int show_body(FILE *out, const struct coverage_filter *f, const char *path, const char *body,
		     uint64_t pid, const char *version, const char *comm, uint64_t start,
		     const char *boot_id, uint64_t age, bool stale)
{
	_cleanup_free_ char *line = NULL;
	int r;

	if (stale)
		r = asprintf(&line,
			     "mthpd is stale: pid %" PRIu64 " (version %s) last wrote '%s' %.1f s ago; a "
			     "running mthpd rewrites it every second (stopped? hung?)",
			     pid, version, path, (double)age / 1e6);
	else if (f->top_cols) /* a line of a terminal: the state file's path is not news */
		r = asprintf(&line, "mthpd is running as pid %" PRIu64 " (version %s; written %.1f s ago)",
			     pid, version, (double)age / 1e6);
	else
		r = asprintf(&line, "mthpd is running as pid %" PRIu64 " (version %s; '%s' written %.1f s ago)",
			     pid, version, path, (double)age / 1e6);
	if (r < 0)
		line = NULL;
	if (!f->json) {
		fprintf(out, "%s\n", line ? line : "mthpd: out of memory");
		if (f->top_cols)
			coverage_top(body, f, f->top_cols, f->top_rows, out);
		else
			coverage_show(body, f, out);
		return stale ? 3 : 0;
	}
	fprintf(out, "{\"schema_version\":%d,\"state_file\":", COVERAGE_JSON_SCHEMA);
	mthpd_output_json_string(out, path);
	fprintf(out, ",\"daemon\":{\"status\":\"%s\",\"pid\":%" PRIu64 ",\"version\":",
		stale ? "stale" : "running", pid);
	mthpd_output_json_string(out, version);
	fputs(",\"comm\":", out);
	mthpd_output_json_string(out, comm);
	fprintf(out, ",\"start_time\":%" PRIu64 ",\"boot_id\":", start);
	mthpd_output_json_string(out, boot_id);
	fprintf(out, ",\"state_age_seconds\":%.3f,\"message\":", (double)age / 1e6);
	mthpd_output_json_string(out, line ? line : "mthpd: out of memory");
	fputc('}', out);
	coverage_show_json(body, f, out);
	fputs("}\n", out);
	return stale ? 3 : 0;
}

int state_show(const char *path, const struct coverage_filter *f, FILE *out)
{
	struct mthpd_kif kif = {.proc_fd = -1, .sys_fd = -1};
	_cleanup_free_ char *buf = malloc(1 << 20);
	char v_pid[32], v_start[32], v_written[32], comm[32], boot_id[64], version[128];
	struct state_ident now_id;
	const char *bad = NULL, *body;
	uint64_t pid, start, written, age;
	struct timespec ts;
	struct stat st = {0};
	_cleanup_close_ int fd = -1;
	ssize_t n;
	int r;

	if (!buf)
		return said(out, f, path, "invalid", 0, "mthpd: out of memory");
	/* O_NONBLOCK: a FIFO there would block the open for ever; the daemon writes only files */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == ELOOP)
		return said(out, f, path, "invalid", 0,
			    "mthpd: '%s' is a symbolic link, not a state file mthpd wrote", path);
	if (fd < 0)
		return said(out, f, path, "not_running", 0,
			    "mthpd is not running (no state file '%s': %s)", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		return said(out, f, path, "invalid", 0, "mthpd: cannot stat '%s': %s", path,
			    strerror(errno));
	if (!S_ISREG(st.st_mode))
		return said(out, f, path, "invalid", 0,
			    "mthpd: '%s' is not a regular file (%s), not a state file mthpd wrote",
			    path, mthpd_text_file_type(st.st_mode));
	n = read(fd, buf, (1 << 20) - 1);
	if (n < 0)
		return said(out, f, path, "invalid", 0, "mthpd: cannot read '%s': %s", path,
			    strerror(errno));
	buf[n] = '\0';
	if (!parse_u64(field(buf, "pid", v_pid, sizeof(v_pid)), &pid) || pid == 0 ||
	    pid > 0x3fffffff)
		return said(out, f, path, "invalid", 0, "mthpd: '%s' is not an mthpd state file", path);
	if (!parse_u64(field(buf, "start_time", v_start, sizeof(v_start)), &start) ||
	    !parse_u64(field(buf, "written_boottime_usec", v_written, sizeof(v_written)), &written) ||
	    !field(buf, "boot_id", boot_id, sizeof(boot_id)) || !field(buf, "comm", comm, sizeof(comm)))
		return said(out, f, path, "not_running", pid,
			    "mthpd is not running, or cannot be told apart from another process: '%s' "
			    "names pid %" PRIu64 " but not its start time, comm and boot id (an older "
			    "mthpd wrote it?)",
			    path, pid);
	if (!field(buf, "version", version, sizeof(version)))
		(void)snprintf(version, sizeof(version), "unknown");

	r = mthpd_kif_linux_init(NULL, NULL, &kif, &bad);
	if (r >= 0)
		r = state_ident_read(kif.proc_fd, (pid_t)pid, &now_id);
	mthpd_kif_done(&kif);
	if (r == -ESRCH)
		return said(out, f, path, "not_running", pid,
			    "mthpd is not running (pid %" PRIu64 " in '%s' is gone)", pid, path);
	if (r < 0)
		return said(out, f, path, "invalid", pid,
			    "mthpd: cannot tell whether pid %" PRIu64 " of '%s' runs: %s", pid, path,
			    strerror(-r));
	if (strcmp(now_id.boot_id, boot_id) != 0)
		return said(out, f, path, "not_running", pid,
			    "mthpd is not running ('%s' was written before the last boot)", path);
	if (now_id.start_time != start || strcmp(now_id.comm, comm) != 0)
		return said(out, f, path, "not_running", pid,
			    "mthpd is not running (pid %" PRIu64 " is now '%s', not the %s that wrote '%s')",
			    pid, now_id.comm, comm, path);
	/* Killed but not reaped: /proc still shows it, with its comm and start time. */
	if (now_id.state == 'Z' || now_id.state == 'X')
		return said(out, f, path, "not_running", pid,
			    "mthpd is not running (pid %" PRIu64 " has exited: a zombie its parent has "
			    "not reaped; '%s' is left from it)",
			    pid, path);
	/* The same boot: CLOCK_BOOTTIME of the writer and of this process compare. */
	(void)clock_gettime(CLOCK_BOOTTIME, &ts);
	age = (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
	age = age > written ? age - written : 0;
	body = strchr(buf, '\n');
	body = body ? body + 1 : "";
	return show_body(out, f, path, body, pid, version, comm, start, boot_id, age,
			 age > STATE_STALE_USEC);
}

void state_key_where(const char *config_dir, const char *key, const char *value,
		     unsigned int line, char *buf, size_t size)
{
	if (line)
		(void)snprintf(buf, size, "%s/mthpd.conf:%u: %s=%s", config_dir, line, key, value);
	else
		(void)snprintf(buf, size, "%s=%s (the default)", key, value);
}

bool state_in_runtime_dir(const char *path)
{
	size_t n = strlen(STATE_RUNTIME_DIR);

	return strncmp(path, STATE_RUNTIME_DIR "/", n + 1) == 0 && !strchr(path + n + 1, '/');
}

int state_runtime_dir_make(char *why, size_t why_size)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	bool made = true;

	if (mkdir(STATE_RUNTIME_DIR, 0755) < 0) {
		int r = -errno;

		if (r != -EEXIST) {
			(void)snprintf(why, why_size, "cannot create '%s': %s", STATE_RUNTIME_DIR,
				       strerror(-r));
			return r;
		}
		made = false;
	}
	/* Whatever is there now, made by us or not: a directory of root's, not a link to one. */
	fd = open(STATE_RUNTIME_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != 0) {
		int r = fd < 0 ? -errno : -EPERM;

		/* O_DIRECTORY|O_NOFOLLOW on a link says ENOTDIR, as for a file */
		if (r == -ENOTDIR && lstat(STATE_RUNTIME_DIR, &st) == 0 && S_ISLNK(st.st_mode))
			r = -ELOOP;

		(void)snprintf(why, why_size, "'%s' is not a directory of root's (%s)",
			       STATE_RUNTIME_DIR,
			       r == -ELOOP ? "a symbolic link" : r == -ENOTDIR ? "not a directory"
			       : r == -EPERM ? "another owner" : strerror(-r));
		return r;
	}
	/*
	 * Made now: the umask may have taken r-x from others (`mthpd status`
	 * reads it as any user).  Found writable by others without the sticky
	 * bit (a Kubernetes emptyDir is 0777): it is mthpd's own, so 0755, as
	 * systemd's RuntimeDirectoryMode= would have it.  What was planted in
	 * it meanwhile is never written through (state_tmp_create()).
	 */
	if (!made && !((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)))
		return 0;
	if (fchmod(fd, 0755) < 0) {
		int r = -errno;

		(void)snprintf(why, why_size, "cannot chmod '%s': %s", STATE_RUNTIME_DIR,
			       strerror(-r));
		return r;
	}
	if (!made)
		(void)snprintf(why, why_size, "mode %04o", (unsigned int)(st.st_mode & 07777));
	return made ? 1 : 2;
}

bool state_runtime_dir_loose(void)
{
	struct stat st;

	return lstat(STATE_RUNTIME_DIR, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 &&
	       (st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX);
}
