/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's rooms share this: the state of `mthpd run` (struct daemon),
 * its intervals, and what a visit of one process carries.  Where to look:
 *   run.c       the loop: signals, timers, the watchdog, the files' rewrite
 *   reload.c    the configuration: load, the files and locks it names, reload
 *   pass.c      one pass: discovery, matching, the cursor, budgets, status rows
 *   visit.c     one process: the hold decision, open, the library pass, record
 *   pressure.c  memory pressure (PSI), the host's and each cgroup's
 *   notices.c   what is said once per process or policy, with journald fields
 */
#ifndef MTHPD_DAEMON_H
#define MTHPD_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "config.h"
#include "discover.h"
#include "features.h"
#include "kif.h"
#include "knobs.h"
#include "metrics.h"
#include "run.h"
#include "sched.h"
#include "state.h"
#include "target.h"
#include "watch.h"

struct daemon {
	const struct run_opts *opts;
	struct mthpd_config *cfg;
	struct mthpd_kif kif;
	struct mthpd_features features;
	struct mthpd_knobs sys_defaults;
	int kpf_fd;
	char cgroup_mount[4096];
	struct mthpd_discover_cache discover_cache; /* the wanted cgroups, until the tree changes */
	int sig_fd, timer_fd;
	int arrival_fd; /* every ARRIVAL_CHECK_MSEC between passes: new processes? */
	int pace_fd;    /* when the first paced process that stopped to rest may go on */
	int cgroup_fd; /* the cgroup2 mount, opened once: per-cgroup memory.pressure */
	uint64_t watchdog_usec, next_watchdog;
	uint64_t no_collapse_until; /* the allocation pause: collapse nothing before this */
	/*
	 * The allocation pause (alloc-hold.c, issue 31): since a huge page
	 * could not be allocated, nothing is collapsed until
	 * no_collapse_until; then one range is probed, and after each failed
	 * probe the wait doubles from an eighth of alloc_sleep_millisecs up to it.  It
	 * ends with a probe that collapses, or at once when /proc/buddyinfo
	 * shows more free 2 MiB blocks than when the allocation failed.
	 */
	bool alloc_hold;
	unsigned int alloc_failures;  /* failed allocations in a row: the first, then the probes */
	uint64_t alloc_hold_since;    /* when it started */
	uint64_t alloc_free_blocks;   /* free 2 MiB blocks at the last failure; UINT64_MAX: unknown */
	uint64_t alloc_checked_usec;  /* buddyinfo last read */
	uint64_t alloc_probe_passed;  /* the no_collapse_until a pass was started for, to probe */
	/* the kernel's compact_stall and compact_fail when last read: at the start and end of a pause */
	uint64_t alloc_compact_stall, alloc_compact_fail;
	bool alloc_compact_known;
	unsigned int alloc_pauses; /* pauses so far */
	bool stop, reload;
	uint64_t signals_said;     /* the ignored signals already logged, by number */
	char last_status[320];     /* the last pass's STATUS= line, for SIGUSR1 */
	uint64_t last_status_usec; /* and when that pass ended */
	bool backing_off;
	/*
	 * Every matched process was left settled by the last pass (see
	 * settled()), and passes come at most a second apart: the pass timer
	 * is disarmed, and the next pass is the arrival timer's next tick.
	 */
	bool idle;
	bool no_refill_backoff; /* MTHPD_DISABLE=refill_backoff: a bench's comparison */
	bool page_reporting;    /* the host takes free pages back: what prefault=auto asks */
	struct metrics metrics;
	struct mthpd_proc *procs;
	pid_t *pids;               /* this pass's discovery, for the cursor */
	unsigned int pids_size;    /* procs[] and pids[] hold this many, plus one */
	struct mthpd_sched sched;  /* the processes kept from pass to pass */
	uint64_t cfg_gen;          /* bumped by every reload: policies are matched again */
	/*
	 * Per policy, its max_bytes_per_pass still unspent in this pass
	 * (UINT64_MAX: none); kept between passes for the paced processes
	 * that go on before the next one.  Made for configuration @bytes_gen.
	 */
	uint64_t *bytes_left;
	uint64_t bytes_gen;
	uint64_t verdicts_usec;    /* when the VMA verdicts were last forgotten */
	size_t nr_open, max_open;  /* targets kept open (3 fds each), and the most allowed */
	size_t window, window_period; /* past max_pids_per_pass: which of them this time */
	int metrics_err, state_err; /* the last write's error, logged when it changes */
	struct state_lock lock;     /* one daemon per configuration and state file */
	struct watch watch;         /* the configuration's files: reload when they change */
	uint64_t written_usec;      /* when STATUS= and the files were last written */
	uint64_t signals_usec;      /* when a pass last read the signalfd (visit.c, range_sink) */
	/*
	 * When each pid last had its planned-only decisions logged: a dry run
	 * repeats the same plan every pass, and one record per block per pass
	 * would flood the journal.  Indexed by pid modulo the size; a
	 * collision only logs a plan early.
	 */
	struct {
		pid_t pid;
		uint64_t usec;
	} dry_logged[4096];
};

/* Planned-only decisions of one pid are logged at most this often. */
#define DRY_RUN_LOG_INTERVAL_USEC (60ULL * 1000000ULL)
/*
 * A process whose last visit found nothing to collapse is left alone while
 * its page-fault count stays the same (no new page), but visited again at
 * least this often, for what faults do not show (a THP split, a VMA
 * change).  One whose collapses failed is retried after a backoff that
 * doubles from QUIET_BACKOFF_MIN_USEC up to this, or as soon as it faults.
 */
#define QUIET_MAX_USEC (60ULL * 1000000ULL)
#define QUIET_BACKOFF_MIN_USEC (1000000ULL)
/*
 * How often the fault count of a quiet process is read (a pass may come
 * every 10 ms): 1 s after its visit, then twice as long after each read
 * that found it unchanged, up to QUIET_CHECK_MAX_USEC.  On a node with
 * hundreds of settled services these reads were most of the settled
 * daemon's cost (issue 28): one pread of /proc/PID/stat each, 500 a
 * second for 500 processes.
 */
#define QUIET_CHECK_USEC (1000000ULL)
#define QUIET_CHECK_MAX_USEC (4000000ULL)
/* An idle daemon's pass, once a second, counts a read due this much early, not to miss it by a hair. */
#define QUIET_CHECK_SLACK_USEC (200000ULL)
/*
 * A process's successful collapses are logged once its walk ends, or
 * after this long when it goes on (a paced walk of a large process).
 */
#define OK_LOG_USEC (10ULL * 1000000ULL)
/*
 * During a pass, pending signals (a SIGTERM) are read at most this often:
 * once a range, it was one read of the signalfd per 2 MiB, as many system
 * calls as the pagemap reads themselves (bench/synth).
 */
#define PASS_SIGNALS_USEC (10000ULL)
/* smaps_rollup of a process with THP disabled, at most this often (read_rollup()) */
#define ROLLUP_THP_DISABLED_USEC (10ULL * 1000000ULL)
/*
 * How often discovery runs between passes, so that a new process of a
 * managed service waits about this long, not scan_sleep_millisecs: a walk
 * of the cgroups a policy could match, no page is read.
 */
#define ARRIVAL_CHECK_MSEC 1000U
/* After a pass with nothing new, the state files and STATUS= wait this long. */
#define FILES_INTERVAL_USEC (1000000ULL)
/*
 * The kernel's answer whether it accepts a VMA (MADV_NOHUGEPAGE, THP
 * disabled) is kept for a VMA whose bounds stay the same; it is asked
 * again this often, for a madvise() that changed a whole VMA's flags.
 */
#define VMA_VERDICT_TTL_USEC (60ULL * 1000000ULL)

/* What the sink of one target needs. */
struct target_ctx {
	struct daemon *d;
	const struct mthpd_proc *proc;
	const struct mthpd_policy *policy;
	struct mthpd_counters *counters;
	bool acting;
	enum mthpd_scan_result held; /* when not acting, why: dry_run, held_*, over_budget */
	unsigned long held_blocks;   /* collapses planned and held back for a while */
	bool log_dry;    /* log this pid's not-attempted decisions in this pass */
	bool logged_dry; /* and some were: the minute starts again */
	bool alloc_failed;
	unsigned long pending; /* collapses planned and not done (except unsupported) */
	unsigned long failed;  /* of those, attempted and failed */
	uint64_t *pages_budget;
	struct mthpd_sched_proc *sp; /* its place in the cursor: the pacing clock */
	uint64_t pace_mark;          /* monotonic us up to which its work was charged */
	bool paced;                  /* its clock is ahead: the visit stops to rest */
	uint64_t cpu_mark;           /* pace=auto: the thread's CPU us up to pace_mark */
	int psi_fd[2];               /* and its service's cpu/memory.pressure (-1: the host's) */
	/* collapse decisions of this visit, per result and order: one record each */
	unsigned int tally[_MTHPD_SCAN_RESULT_MAX][MTHPD_PMD_ORDER + 1];
	/* and all of them, logged or not: what `mthpd status` calls its last result */
	unsigned int seen[_MTHPD_SCAN_RESULT_MAX];
	/* 2M folios mapped in part: split, not split (and why), would be split */
	struct split_tally {
		unsigned long folios;
		uint64_t pages;
	} split, split_failed, split_dry;
	uint8_t split_failed_result;
};

/* What a visit of the cursor needs besides the process. */
struct visit_ctx {
	struct daemon *d;
	uint64_t *bytes_left; /* per policy: its max_bytes_per_pass still unspent (UINT64_MAX: none) */
	bool check_quiet;     /* the idle daemon's pass: a fault count due within QUIET_CHECK_SLACK_USEC is read */
};

/* The calling thread's CPU time in microseconds: what pace=auto charges. */
static inline uint64_t thread_cpu_usec(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
}


/* pressure.c */
/* Is the memory pressure of @proc's own cgroup above psi_threshold? */
bool pressure_cgroup(const struct daemon *d, const struct mthpd_proc *proc);
/* The host's memory pressure into d->backing_off, said when it changes. */
void pressure_check(struct daemon *d);
/* Between passes: has the pressure that held collapses back ended? */
bool pressure_ended(struct daemon *d);
/* pace=auto: opens @proc's cgroup cpu.pressure and memory.pressure into @fd (-1: none, the host's). */
void pressure_stall_open(const struct daemon *d, const struct mthpd_proc *proc, int fd[2]);
void pressure_stall_close(int fd[2]);
/*
 * The service's stall so far (us): the sum of the two "some total", or
 * without PSI process @pid's main thread's run-queue wait; false if unreadable.
 */
bool pressure_stall_read(const struct daemon *d, const int fd[2], pid_t pid, uint64_t *total);

/* alloc-hold.c */
/*
 * A huge page could not be allocated, for pid @pid '@comm': the pause
 * starts (said, with the cause /proc/buddyinfo shows), or a probe failed
 * and the next waits twice as long.
 */
/* At the daemon's start: the kernel's compaction counts, for the first pause's notice. */
void alloc_hold_init(struct daemon *d);
void alloc_hold_failed(struct daemon *d, pid_t pid, const char *comm);
/* A probe collapsed: huge pages can be allocated again, the pause ends (said). */
void alloc_hold_probe_done(struct daemon *d);
/* Between passes, once a second while the pause lasts: true if a pass should start now
 * (free 2 MiB blocks again: the pause ended; or a probe is due). */
bool alloc_hold_poll(struct daemon *d);

/* notices.c: each said once, and again when what it says changes */
void notice_thp_disabled(struct mthpd_sched_proc *p, const struct mthpd_proc *proc,
			 const struct mthpd_policy *pol);
void notice_splits(struct target_ctx *tc, const struct mthpd_sched_proc *p,
		   const struct mthpd_proc *proc, const struct mthpd_policy *pol);
void notice_vmas_refused(struct mthpd_sched_proc *p, const struct mthpd_proc *proc,
			 const struct mthpd_policy *pol);
void notice_unreadable(const struct mthpd_sched_proc *p, const struct mthpd_proc *proc,
		       const struct mthpd_policy *pol, const char *comm, int err);
void notice_unsupported_sizes(const struct daemon *d);
void notice_no_split(const struct daemon *d);

/* reload.c */
/* Loads the configuration of d->opts->config_dir, its error logged.  Returns 0 or -errno. */
int reload_load(struct daemon *d, struct mthpd_config **ret);
/*
 * At start, before any sandbox could hide why: /run/mthpd made by hand, the
 * files' directories checked, the locks taken, the files probed.  Returns
 * 0, -EBUSY (another daemon), -EINVAL or -errno, logged.
 */
int reload_claim_files(struct daemon *d);
/* A reload: the new configuration swapped in whole, or refused and the old kept. */
void reload_now(struct daemon *d);
/*
 * prefault= of the configuration in use applied to d->kif (lib/kif.h),
 * and said in the log: at @start, and after a reload that changes it.
 */
void reload_prefault(struct daemon *d, bool start);

/* pass.c */
/* /proc/PID/comm without its newline.  Returns 0 or -errno. */
int daemon_read_comm(const struct daemon *d, pid_t pid, char *buf, size_t size);
/* One pass; @check_quiet: the idle daemon's pass, which reads the quiet processes' fault counts due soon too. */
void pass_run(struct daemon *d, bool check_quiet);
/* Between passes: a matched process never visited yet?  (a pass then, at once) */
bool pass_newcomers(struct daemon *d);
/* The rows and per-policy gauges the metrics and state files show now. */
void pass_count_processes(struct daemon *d);
/* Whether passes can find nothing new until something changes (idle: no pass timer). */
bool pass_settled(const struct daemon *d);
/* The paced processes whose rest is over go on from where they stopped. */
void pass_pace_resume(struct daemon *d);
/* The pace timer for the first paced process to go on, or off.  Returns 0 or -errno. */
int pass_arm_pace(struct daemon *d);

/* visit.c */
/* One visit of one process: the mthpd_sched_visit_fn of the cursor (lib/sched.h). */
int visit_process(void *userdata, struct mthpd_sched_proc *p, uint64_t allowance,
		  uint64_t *ret_spent);

/* run.c: what the pass and the visits call back into the loop for */
void daemon_watchdog_ping(struct daemon *d);
void daemon_write_files(struct daemon *d);
void daemon_keep_files_fresh(struct daemon *d);
void daemon_read_signals(struct daemon *d);

#endif
