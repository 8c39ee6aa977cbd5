/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging of the daemon: stderr lines with <N> syslog-level prefixes (which
 * journald turns into priorities), and, under journald, one structured
 * record per process, pass and result (MTHPD_PID=, MTHPD_RESULT=,
 * MTHPD_SIZES=...), so that `journalctl -u mthpd MTHPD_RESULT=succeeded`
 * works; with debug, one per collapse decision too (MTHPD_ADDR=...).
 */
#ifndef MTHPD_LOG_H
#define MTHPD_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

enum { LOG_LVL_ERR = 3, LOG_LVL_WARNING = 4, LOG_LVL_NOTICE = 5, LOG_LVL_INFO = 6, LOG_LVL_DEBUG = 7 };

/* Detects journald on stderr (JOURNAL_STREAM) and sets the maximum level. */
void log_setup(int max_level);
bool log_to_journal(void);

_printf_(2, 3) void log_msg(int level, const char *fmt, ...);
/* Logs with errno set to -r (so %m works) and returns r. */
_printf_(3, 4) int log_errno(int level, int r, const char *fmt, ...);

#define log_error(...) log_msg(LOG_LVL_ERR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_LVL_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_LVL_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

struct log_decision {
	pid_t pid;
	const char *comm, *cgroup, *unit, *policy;
	uint64_t addr;
	unsigned int order;
	const char *result; /* "succeeded", a failure name, or "dry_run" */
};

/* One record per collapse decision, at debug level: structured under
 * journald, a line otherwise. */
void log_decision(const struct log_decision *d);

/* What one visit of one process did, for one result. */
struct log_visit {
	pid_t pid;
	const char *comm, *cgroup, *unit, *policy;
	const char *result;      /* as in struct log_decision */
	unsigned int counts[10]; /* blocks per order (2..9) */
	unsigned int visits;     /* >1: summed over this many visits (MTHPD_VISITS=) */
	double seconds;          /* ... from the first to the last */
};

/*
 * One record per process, pass and result: "pid 1234 'redis-server'
 * redis.service: succeeded: 2M x12, 64K x3", with MTHPD_RESULT=, MTHPD_BLOCKS=,
 * MTHPD_BYTES= and MTHPD_SIZES=2M:12,64K:3 under journald.  Succeeded at
 * info, anything else at notice.  Successes summed over several visits
 * end in "in 40 visits over 12.3 s" (MTHPD_VISITS=40).
 */
void log_visit(const struct log_visit *v);

/* What one visit did to the 2M folios its process maps in part, for one result. */
struct log_split {
	pid_t pid;
	const char *comm, *cgroup, *unit, *policy;
	const char *result;  /* "split_partial" (split), "dry_run" or a held_* result, or why not */
	unsigned long folios;
	uint64_t bytes;      /* given back, or (not split) still held */
};

/*
 * "pid 1234 'redis-server' redis.service: split 3 2M folios mapped in part:
 * 2460 KiB given back", with MTHPD_ACTION=split, MTHPD_RESULT=split_partial
 * (or dry_run, or why not), MTHPD_FOLIOS= and MTHPD_BYTES= under journald.
 * Split and not attempted (dry run) at info, a failure at notice.
 */
void log_split(const struct log_split *s);

/* Why mthpd leaves a process, or part of it, alone. */
struct log_process {
	pid_t pid;
	const char *comm, *cgroup, *unit, *policy;
	const char *result; /* "thp_disabled", "vma_refused" */
	const char *text;   /* the sentence after "pid N 'comm' UNIT: " */
};

/*
 * One record, at notice: "pid 1234 'mariadbd' mariadb.service: THP disabled
 * ...", with MTHPD_RESULT= and the process fields under journald.  The
 * caller says it once per process and change, not every pass.
 */
void log_process(const struct log_process *p);

#endif
