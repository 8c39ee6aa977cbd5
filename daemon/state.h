/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's claim on its configuration and state file, and `mthpd
 * status`'s check of that claim.
 *
 * A state file names the process that wrote it by pid, start time (field
 * 22 of /proc/PID/stat) and boot id, and says when it was written: a pid
 * alone is reused (pid_max wraps in minutes under churn), and a file that
 * stops changing belongs to a daemon that hangs or is gone.  One daemon
 * per configuration: `mthpd run` holds flock()s on the configuration
 * directory and on STATE_FILE.lock for as long as it runs.
 */
#ifndef MTHPD_STATE_H
#define MTHPD_STATE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* A running daemon rewrites its state file at least once a second. */
#define STATE_STALE_USEC (5ULL * 1000000ULL)

struct state_ident {
	pid_t pid;
	uint64_t start_time; /* clock ticks after boot: /proc/PID/stat field 22 */
	char comm[16];
	char boot_id[40];    /* /proc/sys/kernel/random/boot_id */
	char state;          /* field 3: 'Z' for a zombie, killed but not reaped */
};

/*
 * The identity of @pid from the live /proc (@proc_fd).  Returns 0, -ESRCH
 * if there is no such process, or -errno.
 */
int state_ident_read(int proc_fd, pid_t pid, struct state_ident *ret);

/*
 * A file written under a new name next to @path, then renamed over it, so
 * that readers never see half of it (daemon/metrics.c).  Safe in a
 * directory other users can write: the directory is opened O_NOFOLLOW, the
 * new file is created O_EXCL|O_NOFOLLOW under a random name
 * (PATH.tmp-<16 hex digits>) relative to it, so a link planted there is
 * never followed, and renameat() replaces whatever entry @path is (a
 * planted symbolic link included) without writing through it.
 */
struct state_tmp {
	int dir_fd;               /* the directory of the path */
	const char *base;         /* the last part of the path (points into it) */
	char name[NAME_MAX + 1];  /* the new file, in dir_fd */
};

/*
 * Creates the new file; @ret_fd is open for writing.  Returns 0 or -errno.
 * Then exactly one of state_tmp_commit() (the rename) or
 * state_tmp_discard() (removes it).  Both close dir_fd, not @ret_fd.
 */
int state_tmp_create(const char *path, struct state_tmp *ret, int *ret_fd);
/* Returns 0 or -errno (then the new file is removed). */
int state_tmp_commit(struct state_tmp *t);
void state_tmp_discard(struct state_tmp *t);

/*
 * Whether another user could swap or forge the files at @path: the
 * directory of @path and each one above it must belong to root or to this
 * process's user, and must not be writable by group or others unless it
 * has the sticky bit (/tmp); the directory itself must not be a symbolic
 * link.  [sshd StrictModes]  Returns 0; -EPERM with one phrase in @why;
 * -ENOENT when a directory does not exist; another -errno.
 */
int state_dir_check(const char *path, char *why, size_t why_size);

/*
 * Whether files can be written at @path the way the daemon writes them:
 * creates and removes a new file there (state_tmp_create()), and looks at
 * what a rename over @path would meet: a file of another user in a sticky
 * directory, an immutable or append-only file (chattr +i, +a), a
 * directory.  Returns 0 or -errno with the reason in @why ("cannot write
 * files in 'DIR': ..." or about @path itself); the directory goes to
 * @ret_dir.
 */
int state_probe_writable(const char *path, char *ret_dir, size_t dir_size, char *why,
			 size_t why_size);

struct state_lock {
	int dir_fd;  /* the configuration directory, flock()ed */
	int file_fd; /* STATE_FILE.lock, flock()ed, holding our pid; -1 without a state file */
};

/*
 * Takes both locks, without waiting.  Returns 0; -EBUSY when another
 * process holds one; another -errno when the lock file cannot be made.
 * On failure @err holds one line saying which lock or path, and nothing
 * stays locked.  The fds are O_CLOEXEC and need no system call once taken
 * (they outlive the seccomp filter by staying open).
 */
int state_lock_take(const char *config_dir, const char *state_file, struct state_lock *ret,
		    char *err, size_t err_size);
void state_lock_release(struct state_lock *l);

/*
 * Only the lock of @state_file (STATE_FILE.lock), as state_lock_take()
 * takes it; also at a reload that changes state_file.  The lock file must
 * be a regular file of this user with one name.  Returns 0 with the fd in
 * @ret_fd, -EBUSY when another process holds it, -EPERM, -errno; @err
 * holds one line.
 */
int state_lock_file(const char *state_file, int *ret_fd, char *err, size_t err_size);

/*
 * `mthpd status`: checks that the state file at @path was written by a
 * process that is still that process (pid, comm, start time, boot id) and
 * recently (STATE_STALE_USEC), and is no zombie; prints the verdict and
 * the file to @out, its coverage as @f says (daemon/coverage.h).  Only a
 * regular file is read (a FIFO would block).
 * Returns 0 when it runs, 3 when it does not or the file is stale.
 */
struct coverage_filter;
int state_show(const char *path, const struct coverage_filter *f, FILE *out);

/*
 * Where a complaint about a path points: "DIR/mthpd.conf:LINE: KEY=VALUE",
 * or "KEY=VALUE (the default)" when no line set it (@line 0).
 */
void state_key_where(const char *config_dir, const char *key, const char *value,
		     unsigned int line, char *buf, size_t size);

/*
 * The runtime directory of the defaults (systemd's RuntimeDirectory=mthpd
 * makes it for the service; by hand, `mthpd run` does).  Only this one is
 * ever created: a directory named elsewhere is the operator's to make, with
 * the owner and mode they choose.
 */
#define STATE_RUNTIME_DIR "/run/mthpd"

/* Whether @path is a file directly in STATE_RUNTIME_DIR. */
bool state_in_runtime_dir(const char *path);

/*
 * Creates STATE_RUNTIME_DIR (root, 0755) if it is missing, then checks
 * that what is there is a directory owned by root and not a symbolic link;
 * one other users can write without the sticky bit is made 0755.  Returns
 * 1 if it made it, 2 if it changed its mode (the old one in @why), 0 if it
 * was there as it should be, or -errno with @why.
 */
int state_runtime_dir_make(char *why, size_t why_size);

/* Whether STATE_RUNTIME_DIR is root's, and writable by others without the sticky bit. */
bool state_runtime_dir_loose(void);

#endif
