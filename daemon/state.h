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
 * Whether files can be written at @path the way the daemon writes them
 * (daemon/metrics.c): a new file created in its directory and renamed
 * there.  Tries exactly that with names of its own (PATH.probe-PID), which
 * it removes.  Returns 0 or -errno (-EISDIR: @path is a directory); the
 * directory goes to @ret_dir.
 */
int state_probe_writable(const char *path, char *ret_dir, size_t dir_size);

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
 * `mthpd status`: checks that the state file at @path was written by a
 * process that is still that process (pid, comm, start time, boot id) and
 * recently (STATE_STALE_USEC), and is no zombie; prints the verdict and
 * the file to @out.  Only a regular file is read (a FIFO would block).
 * Returns 0 when it runs, 3 when it does not or the file is stale.
 */
int state_show(const char *path, FILE *out);

#endif
