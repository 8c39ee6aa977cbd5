/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What /proc/PID/stat and /proc/PID/status say of a process.  The parsers
 * are pure (a buffer in, fields out); mthpd_pid_identify() reads through
 * the kif.
 */
#ifndef MTHPD_PROCFS_H
#define MTHPD_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kif.h"

/* "PID/FILE" into @buf, relative to the proc root.  Returns 0 or -ENAMETOOLONG. */
int mthpd_procfs_pid_path(char *buf, size_t size, pid_t pid, const char *file);

/* Pure: true if /proc/PID/status says "THP_enabled:\t0" (PR_SET_THP_DISABLE). */
bool mthpd_status_parse_thp_disabled(const char *status);

/*
 * Pure: the RssAnon of a /proc/PID/status text ("...\nRssAnon:\t 1234 kB\n..."),
 * in bytes.  Returns 0, -ENOENT when it has none (a kernel thread, a
 * synthetic tree), -EINVAL when it is not a number of kB.
 */
int mthpd_status_parse_rss_anon(const char *status, uint64_t *ret);

/*
 * Pure: the Anonymous and AnonHugePages lines of a /proc/PID/smaps_rollup
 * text, in bytes: what the kernel maps of the process's anonymous memory
 * now, and of it PMD-mapped.  Returns 0, -ENOENT when a line is missing,
 * -EINVAL when one is not a number of kB.
 */
int mthpd_rollup_parse(const char *rollup, uint64_t *ret_anon, uint64_t *ret_huge);

/* What /proc/PID/status says a pid is: mthpd_status_parse_ident(). */
struct mthpd_pid_ident {
	pid_t tgid; /* the process it belongs to: another number for a thread */
	pid_t ppid;
	char state; /* 'R', 'S', ..., 'Z' for a zombie */
};

/*
 * Pure: the State, Tgid and PPid lines of a /proc/PID/status text, e.g.
 * "Name:\tredis-server\nUmask:\t0022\nState:\tZ (zombie)\nTgid:\t4242\n...
 * PPid:\t1\n".  Returns 0, or -EINVAL when one is missing or malformed
 * (then nothing is written).
 */
int mthpd_status_parse_ident(const char *status, struct mthpd_pid_ident *ret);

/*
 * /proc/PID/status into @buf, NUL-terminated also when it is cut.
 * Returns its length, -EFBIG when cut to @size, -ESRCH when there is no
 * such pid, -errno.
 */
int mthpd_procfs_read_status(struct mthpd_kif *kif, pid_t pid, char *buf, size_t size);

/*
 * What @pid is, from its /proc/PID/status: a process, a thread of another
 * (ret->tgid != @pid: /proc/TID answers although readdir does not list
 * it) or a zombie.  Returns 0, -ESRCH when there is no such pid, -errno.
 */
int mthpd_pid_identify(struct mthpd_kif *kif, pid_t pid, struct mthpd_pid_ident *ret);

/*
 * Pure: minflt + majflt of a /proc/PID/stat line, e.g.
 * "1234 (redis-server) S 1 1234 1234 0 -1 4194560 1500 0 3 0 ...": 1503.
 * The comm may hold spaces and parentheses: fields count from the last ')'.
 * Returns 0, or -EINVAL for a line that is not one.
 */
int mthpd_stat_parse_faults(const char *line, uint64_t *ret);

/* Pure: 1 if the /proc/PID/stat line is a kernel thread's (PF_KTHREAD), 0 if not, -EINVAL. */
int mthpd_stat_parse_kthread(const char *line);

/*
 * Pure: the comm (between the first '(' and the last ')', cut to fit
 * @comm_size) and the start time (field 22, clock ticks after boot) of a
 * /proc/PID/stat line.  A pid and its start time name one process for the
 * whole boot; a pid alone is reused.  Returns 0, or -EINVAL for a line
 * that is not one (then nothing is written).
 */
int mthpd_stat_parse_start(const char *line, char *ret_comm, size_t comm_size,
			   uint64_t *ret_start);

/*
 * Pure: what a user can do about a process with THP disabled, by its comm:
 * the setting of a service known to turn it off, or a general sentence.
 */
const char *mthpd_thp_disabled_hint(const char *comm);

/*
 * How long a process started @start_ticks after boot (field 22 of its
 * /proc/PID/stat) has run, in microseconds of CLOCK_BOOTTIME.  Returns 0,
 * -ENODATA when the start is unknown (0: a synthetic tree), -errno.
 */
int mthpd_process_age_usec(uint64_t start_ticks, uint64_t *ret);

#endif
