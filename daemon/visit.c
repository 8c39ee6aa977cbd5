/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One visit of one matched process: whether it is visited now and may
 * collapse (lib/hold.c decides why not), its target opened and kept open
 * from pass to pass, the library's pass over its ranges (lib/target.c)
 * with a sink that logs each decision and charges the budgets and the
 * pace clock, then what the visit found, for status and the metrics.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "hold.h"
#include "log.h"
#include "pace.h"
#include "text.h"
#include "util.h"

/*
 * pace=auto: what the service felt so far (lib/pace.h): how long its
 * cgroup waited for the CPU and memory, and how many page faults it took.
 */
static void felt_now(const struct target_ctx *tc, struct mthpd_pace_felt *f)
{
	*f = (struct mthpd_pace_felt){0};
	f->stall_known = pressure_stall_read(tc->d, tc->psi_fd, tc->proc->pid, &f->stall);
	f->faults_known = mthpd_target_faults(&tc->sp->t, &f->faults) == 0;
	/* the longest hold since the last read: each charge sees only its own calls' */
	f->held = tc->d->kif.held_max_usec;
	tc->d->kif.held_max_usec = 0;
}

static int target_sink(void *userdata, const struct mthpd_target *t,
		       const struct mthpd_range_scan *s, const struct mthpd_range_plan *p)
{
	struct target_ctx *tc = userdata;
	struct daemon *d = tc->d;
	unsigned int occupied = mthpd_bitmap_weight(s->occupied, 0, MTHPD_PMD_NR);

	mthpd_account_range(tc->counters, s, p, tc->acting);
	/* coverage: a range already PMD-mapped (not the huge zero page), or made so now */
	if (s->pmd_mapped && occupied)
		tc->sp->cov.sweep_huge += MTHPD_PMD_SIZE;
	tc->sp->cov.sweep_partial += (uint64_t)mthpd_scan_partial_unmapped(s) * MTHPD_PAGE_SIZE;
	if (s->split_tried && s->split_result == MTHPD_SCAN_SUCCEED) {
		tc->split.folios++;
		tc->split.pages += s->released;
	} else if (s->split_tried) {
		tc->split_failed.folios++;
		tc->split_failed.pages += mthpd_scan_partial_unmapped(s);
		tc->split_failed_result = s->split_result;
	} else if (s->partial_pfn && !tc->acting && tc->policy->split_partial &&
		   d->features.split == MTHPD_SPLIT_YES) {
		tc->split_dry.folios++;
		tc->split_dry.pages += mthpd_scan_partial_unmapped(s);
	}
	for (unsigned int i = 0; i < p->nr_blocks; i++) {
		const struct mthpd_block *b = &p->blocks[i];
		struct log_decision ld = {
			.pid = t->pid,
			.comm = t->comm,
			.cgroup = tc->proc->cgroup,
			.unit = tc->proc->unit,
			.policy = tc->policy->name,
			.addr = s->addr + b->offset * MTHPD_PAGE_SIZE,
			.order = b->order,
		};

		if (b->action != MTHPD_ACTION_COLLAPSE && b->reason == MTHPD_RESULT_REFILL_BACKOFF)
			tc->seen[MTHPD_RESULT_REFILL_BACKOFF]++;
		if (b->action != MTHPD_ACTION_COLLAPSE && b->reason == MTHPD_RESULT_REFILL_BACKOFF &&
		    tc->log_dry) {
			/* repeats while the range stays as it is: once a minute, as a dry run */
			ld.result = mthpd_result_name(MTHPD_RESULT_REFILL_BACKOFF);
			log_decision(&ld);
			tc->tally[MTHPD_RESULT_REFILL_BACKOFF][b->order]++;
			tc->logged_dry = true;
		}
		if (b->action != MTHPD_ACTION_COLLAPSE)
			continue;
		ld.result = mthpd_result_name(tc->acting ? (enum mthpd_scan_result)b->result : tc->held);
		tc->seen[tc->acting ? b->result : tc->held]++;
		if (tc->acting && b->result == MTHPD_SCAN_SUCCEED && b->order == MTHPD_PMD_ORDER)
			tc->sp->cov.sweep_huge += MTHPD_PMD_SIZE;
		tc->held_blocks += !tc->acting;
		if (tc->acting && b->result == MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL)
			tc->alloc_failed = true;
		if (b->result != MTHPD_SCAN_SUCCEED && b->result != MTHPD_RESULT_UNSUPPORTED) {
			tc->pending++;
			tc->failed += tc->acting && b->result != MTHPD_RESULT_OVER_BUDGET &&
				      b->result != MTHPD_RESULT_HELD_ALLOC_FAILED;
		}
		/*
		 * Decisions that were not attempted (dry run, pressure, a size
		 * this kernel cannot collapse, a range waiting for its retry),
		 * which would repeat every pass, are logged once a minute per pid.
		 */
		bool attempted = tc->acting && b->result != MTHPD_RESULT_UNSUPPORTED &&
				 b->result != MTHPD_RESULT_BACKOFF &&
				 b->result != MTHPD_RESULT_HELD_ALLOC_FAILED;

		if (attempted || tc->log_dry) {
			log_decision(&ld);
			tc->tally[tc->acting ? b->result : tc->held][b->order]++;
			tc->logged_dry |= !attempted;
		}
	}

	daemon_watchdog_ping(d);
	daemon_keep_files_fresh(d);
	if (now_usec() - d->signals_usec >= PASS_SIGNALS_USEC) {
		d->signals_usec = now_usec();
		daemon_read_signals(d);
	}
	if (d->stop)
		return -ECANCELED;
	/*
	 * The budget counts work done: the resident pages of a range that
	 * was read and planned, and 1 for a range PAGEMAP_SCAN already showed
	 * PMD-mapped, which costs next to nothing (s->pmd_mapped).
	 */
	if (s->pmd_mapped || occupied == 0)
		occupied = 1;
	*tc->pages_budget = *tc->pages_budget > occupied ? *tc->pages_budget - occupied : 0;
	if (tc->acting && tc->policy->pace.autop) {
		uint64_t now = now_usec();

		/*
		 * pace=auto: the daemon's CPU time since the last charge and
		 * how long the service waited (PSI) decide whether the visit
		 * stops to rest (lib/pace.h); asked at most once a
		 * millisecond, not for every range already huge.
		 */
		if (now - tc->pace_mark >= MTHPD_PACE_SLACK_USEC) {
			struct mthpd_pace_auto *a = &tc->sp->pace_auto;
			uint64_t cpu = thread_cpu_usec(), faulted = a->faulted_windows;
			struct mthpd_pace_felt f;

			felt_now(tc, &f);
			tc->paced = mthpd_pace_auto_charge(a, &tc->sp->pace_next, now, cpu - tc->cpu_mark, &f) > 0;
			tc->counters->pace_rests += tc->paced;
			tc->counters->pace_rests_fault += tc->paced && a->faulted_windows > faulted;
			tc->pace_mark = now;
			tc->cpu_mark = cpu;
		}
	} else if (tc->acting && tc->policy->pace.percent) {
		uint64_t now = now_usec();

		/*
		 * pace=: the time since the last range (its scan, and its
		 * collapse, one range per call) is charged to the process's
		 * clock; when the clock runs ahead, the visit stops here and
		 * the pace timer brings it back (lib/pace.h).
		 */
		tc->paced = mthpd_pace_charge(&tc->sp->pace_next, now, now - tc->pace_mark,
					      tc->policy->pace.percent) > 0;
		tc->pace_mark = now;
	}
	if (*tc->pages_budget == 0 || tc->paced)
		return -EDQUOT; /* this visit's share spent: the rest waits for its next turn */
	return 0;
}

/*
 * What a visit found, for `mthpd status` and the metrics (p->cov): the
 * PMD-mapped bytes once a sweep reaches the end, the bytes collapsed, the
 * result most of its planned blocks came to, and why they were held back.
 */
static void note_coverage(struct daemon *d, struct mthpd_sched_proc *p,
			  const struct mthpd_proc *proc, const struct mthpd_policy *pol,
			  const struct target_ctx *tc, const struct mthpd_pass_stats *st, int r)
{
	struct mthpd_coverage *cov = &p->cov;
	unsigned long pass_no = d->metrics.passes + 1; /* the pass under way, or the next */
	unsigned int most = 0;
	int res = -1;

	/* counted also when it exited during the visit: what was done, was done */
	if (st->bytes_collapsed) {
		if (cov->collapsed_in != pass_no)
			cov->collapsed_pass = 0;
		cov->collapsed_in = pass_no;
		cov->collapsed_pass += st->bytes_collapsed;
		cov->collapsed_total += st->bytes_collapsed;
		(void)metrics_unit_collapsed(&d->metrics, pol->name,
					     proc->unit[0] ? proc->unit : proc->cgroup,
					     st->bytes_collapsed);
	}
	if (r < 0 && r != -EDQUOT)
		return; /* exited, stopped: what it had stays */
	/* THP disabled: not scanned, huge_bytes is smaps_rollup's (read_rollup()) */
	if (r == 0 && !p->t.thp_disabled) {
		cov->huge_bytes = cov->sweep_huge;
		cov->partial_bytes = cov->sweep_partial;
	}
	for (int i = 0; i < _MTHPD_SCAN_RESULT_MAX; i++)
		if (tc->seen[i] > most) {
			most = tc->seen[i];
			res = i;
		}
	if (res >= 0)
		cov->last_result = cov->sweep_result = res;
	/* at a sweep's end: what its visits came to, or that nothing was planned in it */
	if (r == 0)
		cov->last_result = cov->sweep_result;
	cov->held = !tc->acting && tc->held_blocks ? (int)tc->held : -1;
	cov->backoff = tc->seen[MTHPD_RESULT_BACKOFF] || tc->seen[MTHPD_RESULT_REFILL_BACKOFF];
}

/*
 * min_age=: a process younger than that is left alone, neither scanned nor
 * collapsed, so that a service finishes starting first (MariaDB turns THP
 * off for itself once its engines are up, after what was collapsed).
 * Sets p->young_until, when it comes of age, for the pass timer.
 */
static bool too_young(struct mthpd_sched_proc *p, const struct mthpd_policy *pol)
{
	uint64_t age, min = (uint64_t)pol->min_age_sec * 1000000ULL;

	p->young_until = 0;
	/* start time unknown (a synthetic tree): old enough */
	if (!min || mthpd_process_age_usec(p->t.start_ticks, &age) < 0 || age >= min)
		return false;
	p->young_until = now_usec() + (min - age);
	return true;
}

/*
 * The anonymous and huge bytes `mthpd status` and the metrics show, read
 * again from smaps_rollup where what the visit knows is not what the
 * kernel maps (issue 25):
 * - at the end of a sweep that collapsed, when huge_bytes is published:
 *   RssAnon was read before the visit, and with max_ptes_none > 0 the
 *   collapses filled pages in (huge 16 MiB of anon 13.4 MiB until the
 *   next visit).  Once a sweep, not after every visit that collapsed: a
 *   paced process collapses one range a visit, and the read walks all of
 *   its page tables under its mmap lock;
 * - a process with THP disabled is not scanned, yet what was collapsed
 *   before its prctl stays huge (MariaDB after start): at the first visit
 *   that finds it so, then at most every ROLLUP_THP_DISABLED_USEC, since
 *   smaps_rollup walks all of its page tables.
 */
static void read_rollup(struct daemon *d, struct mthpd_sched_proc *p,
			const struct mthpd_pass_stats *st, int r)
{
	uint64_t anon, huge, now = now_usec();

	if (r < 0 && r != -EDQUOT)
		return;
	if (!p->t.thp_disabled)
		p->cov.rollup_usec = 0;
	if (p->t.thp_disabled && p->cov.rollup_usec &&
	    now - p->cov.rollup_usec < ROLLUP_THP_DISABLED_USEC)
		return;
	p->cov.sweep_collapsed |= st->bytes_collapsed > 0;
	if (!p->t.thp_disabled && !(r == 0 && p->cov.sweep_collapsed))
		return;
	if (mthpd_target_read_rollup(&d->kif, &p->t, &anon, &huge) < 0)
		return; /* gone, or a synthetic tree without it: as it was */
	p->t.rss_anon = anon;
	p->cov.huge_bytes = huge;
	if (p->t.thp_disabled)
		p->cov.rollup_usec = now;
}

/* Whether the fault count of quiet @p is to be read now (QUIET_CHECK_USEC). */
static bool quiet_check_due(const struct visit_ctx *vc, const struct mthpd_sched_proc *p, uint64_t now)
{
	uint64_t every = p->quiet_check_usec ? p->quiet_check_usec : QUIET_CHECK_USEC;

	return now - p->quiet_checked + (vc->check_quiet ? QUIET_CHECK_SLACK_USEC : 0) >= every;
}

/*
 * Whether @p is settled: quiet since a visit found nothing to do, and no
 * new fault since (one pread of /proc/PID/stat instead of a visit, 1 s
 * after the visit, then less and less often while it stays quiet).
 */
static bool is_settled(const struct visit_ctx *vc, struct mthpd_sched_proc *p, uint64_t now)
{
	uint64_t f;

	if (!p->open || p->quiet_until <= now)
		return false;
	return !quiet_check_due(vc, p, now) ||
	       (mthpd_target_faults(&p->t, &f) == 0 && f == p->quiet_faults);
}

/*
 * What decides whether @p is visited now and may collapse (lib/hold.h),
 * gathered in the order they cost: its cgroup's memory.pressure is read
 * only where the answer depends on it.  @in->young is known once the
 * target is open (hold_young()).
 */
static enum mthpd_hold hold_of(const struct visit_ctx *vc, struct mthpd_sched_proc *p,
			       const struct mthpd_proc *proc, const struct mthpd_policy *pol,
			       struct mthpd_hold_in *in)
{
	struct daemon *d = vc->d;
	uint64_t now = now_usec();

	*in = (struct mthpd_hold_in){
		.settled = is_settled(vc, p, now),
		.held_before = p->held,
		.resting = mthpd_paced(&pol->pace) && mthpd_pace_wait(p->pace_next, now) > 0,
		.dry_run = d->cfg->daemon.dry_run || pol->dry_run,
		.pressure = d->backing_off,
		.alloc_pause = now < d->no_collapse_until,
		.budget_spent = vc->bytes_left[p->policy] == 0,
		/* a synthetic --proc-root has no live process behind its pids */
		.plan_only = d->opts->proc_root != NULL,
	};
	if (!in->pressure && (in->held_before || (!in->settled && !in->resting)))
		in->pressure = pressure_cgroup(d, proc);
	return mthpd_hold_decide(in);
}

/*
 * Opens @p's target, kept open from pass to pass (pagemap, pidfd, the VMA
 * verdicts), or reads THP_enabled again for one that is: a process may
 * turn THP off after start (MariaDB).  Returns true if it is open.
 */
static bool open_target(struct daemon *d, struct mthpd_sched_proc *p, const struct mthpd_proc *proc,
			const struct mthpd_policy *pol)
{
	int r;

	if (p->open) {
		(void)mthpd_target_read_status(&d->kif, &p->t);
		return true;
	}
	r = mthpd_target_open(&d->kif, proc->pid, !d->opts->proc_root, &p->t);
	if (r < 0) {
		/*
		 * Gone since discovery: normal.  Not ours to read (a
		 * capability left out of a container, an LSM): a matched
		 * service that silently gets nothing, said once per pid.
		 */
		if ((r == -EACCES || r == -EPERM) && !p->said_unreadable) {
			char comm[32] = "";

			(void)daemon_read_comm(d, proc->pid, comm, sizeof(comm));
			notice_unreadable(p, proc, pol, comm, r);
		} else {
			log_debug("pid %d: %s", (int)proc->pid, strerror(-r));
		}
		p->said_unreadable |= r == -EACCES || r == -EPERM;
		return false;
	}
	p->said_unreadable = false;
	p->open = true;
	d->nr_open++;
	return true;
}

/* The library's pass over @p's ranges from p->resume on, as the hold and policy say. */
static int pass_ranges(struct daemon *d, struct mthpd_sched_proc *p, const struct mthpd_policy *pol,
		       const uint64_t *bytes_left, uint64_t allowance, struct target_ctx *tc,
		       struct mthpd_pass_stats *st)
{
	struct mthpd_pass_opts o = {
		.knobs = &pol->knobs,
		.features = &d->features,
		.kpageflags_fd = d->kpf_fd,
		.collapse = tc->acting,
		.subpmd_flags = MTHPD_MADV_COLLAPSE_ORDER |
				(pol->knobs.max_ptes_none == 0 ? MTHPD_MADV_COLLAPSE_STRICT : 0),
		.budget_bytes = *bytes_left == UINT64_MAX ? 0 : *bytes_left,
		.start = p->resume,
		.now_usec = now_usec(),
		.no_refill_backoff = d->no_refill_backoff,
		.split_partial = pol->split_partial && d->features.split == MTHPD_SPLIT_YES,
		/* the allocation pause's probe: one range (alloc-hold.c) */
		.probe = tc->acting && d->alloc_hold,
		/*
		 * no more ranges in one call than this visit's share of pages
		 * covers; a paced process gets one range a call, so that a
		 * call is one short slice of its time, not 32
		 */
		.batch = mthpd_paced(&pol->pace) ? 1
			 : allowance / MTHPD_PMD_NR >= MTHPD_COLLAPSE_BATCH ? MTHPD_COLLAPSE_BATCH
			 : allowance / MTHPD_PMD_NR > 0 ? (unsigned int)(allowance / MTHPD_PMD_NR)
							: 1,
	};

	tc->pace_mark = now_usec();
	if (tc->acting && pol->pace.autop) {
		struct mthpd_pace_felt f;

		pressure_stall_open(d, tc->proc, tc->psi_fd);
		felt_now(tc, &f);
		mthpd_pace_auto_start(&p->pace_auto, tc->pace_mark, &f);
		tc->cpu_mark = thread_cpu_usec();
	} else if (!pol->pace.autop) {
		p->pace_auto.level = 0; /* its policy changed: no share to show */
	}
	if (o.start == 0) {
		p->cov.sweep_huge = 0;
		p->cov.sweep_partial = 0;
		p->cov.sweep_result = -1;
		p->cov.sweep_collapsed = false;
	}
	return mthpd_target_pass(&d->kif, &p->t, &o, target_sink, tc, st);
}

/*
 * After a visit that went to its end with nothing left to do, or only
 * failures: quiet until it faults, or for a while (a backoff that doubles
 * while its collapses keep failing).
 */
static void note_quiet(struct mthpd_sched_proc *p, const struct target_ctx *tc, uint64_t faults)
{
	if (tc->pending == 0)
		p->backoff_usec = 0;
	else
		p->backoff_usec = p->backoff_usec ? 2 * p->backoff_usec : QUIET_BACKOFF_MIN_USEC;
	if (p->backoff_usec > QUIET_MAX_USEC)
		p->backoff_usec = QUIET_MAX_USEC;
	p->quiet_faults = faults;
	p->quiet_checked = now_usec();
	p->quiet_check_usec = QUIET_CHECK_USEC;
	p->quiet_until = p->quiet_checked + (p->backoff_usec ? p->backoff_usec : QUIET_MAX_USEC);
}

/*
 * One log_visit() record per result: the visit's decisions by size
 * (log.h).  Successes are summed in @p until its walk ends (@walk_end) or
 * for OK_LOG_USEC: a paced walk collapses one range a visit, and a record
 * each would be a journal line per 2 MiB.
 */
static void log_tally(struct mthpd_sched_proc *p, const struct mthpd_proc *proc,
		      const struct mthpd_policy *pol, const struct target_ctx *tc, bool walk_end)
{
	const unsigned int *ok = tc->tally[MTHPD_SCAN_SUCCEED];
	uint64_t now = now_usec();
	bool any = false;

	for (unsigned int o = 0; o < ARRAY_SIZE(p->ok_counts); o++) {
		p->ok_counts[o] += ok[o];
		any |= ok[o] > 0;
	}
	if (any && p->ok_visits++ == 0)
		p->ok_since = now;
	for (int res = 0; res < _MTHPD_SCAN_RESULT_MAX; res++) {
		struct log_visit lv = {
			.pid = proc->pid,
			.comm = p->t.comm,
			.cgroup = proc->cgroup,
			.unit = proc->unit,
			.policy = pol->name,
			.result = mthpd_result_name((enum mthpd_scan_result)res),
		};

		if (res == MTHPD_SCAN_SUCCEED) {
			if (!p->ok_visits || (!walk_end && now - p->ok_since < OK_LOG_USEC))
				continue;
			memcpy(lv.counts, p->ok_counts, sizeof(lv.counts));
			lv.visits = p->ok_visits;
			lv.seconds = (double)(now - p->ok_since) / 1e6;
			memset(p->ok_counts, 0, sizeof(p->ok_counts));
			p->ok_visits = 0;
		} else {
			memcpy(lv.counts, tc->tally[res], sizeof(lv.counts));
		}
		log_visit(&lv);
	}
}

/*
 * After the pass: an exited process is closed (matched anew if its pid
 * comes back), and one past RLIMIT_NOFILE too.  Returns the visit's result.
 */
static int visit_end(struct daemon *d, struct mthpd_sched_proc *p, const struct mthpd_proc *proc,
		     int r)
{
	if (r == -ESRCH) {
		/*
		 * Exited, or it exec'd (the pagemap fd reads EOF for the old
		 * mm): closed; if the pid is still there, it is opened and
		 * matched anew on its next turn.
		 */
		log_debug("pid %d '%s' exited or exec'd during the pass", (int)proc->pid, p->t.comm);
		mthpd_target_close(&p->t);
		p->open = false;
		d->nr_open--;
		p->match_gen = 0;
		return 0;
	}
	if (d->nr_open > d->max_open) {
		/* past RLIMIT_NOFILE: this one is opened again on its next turn */
		mthpd_target_close(&p->t);
		p->open = false;
		d->nr_open--;
	}
	if (r == -ECANCELED)
		return r;
	if (r < 0 && r != -EDQUOT)
		log_errno(LOG_LVL_WARNING, r, "pid %d '%s': %m, ignoring", (int)proc->pid, p->t.comm);
	return 0;
}

/*
 * One visit of one process (mthpd_sched_visit_fn): from p->resume on, with
 * at most @allowance pages of budget.  Sets p->resume (0: it reached the
 * end) and *ret_spent.  Returns 0, or -ECANCELED (stop).
 */
int visit_process(void *userdata, struct mthpd_sched_proc *p, uint64_t allowance,
		  uint64_t *ret_spent)
{
	struct visit_ctx *vc = userdata;
	struct daemon *d = vc->d;
	const struct mthpd_proc *proc = &d->procs[p->proc];
	const struct mthpd_policy *pol = &d->cfg->policies[p->policy];
	uint64_t *bytes_left = &vc->bytes_left[p->policy];
	struct mthpd_pass_stats st = {0}; /* -ENOMEM leaves it unwritten */
	uint64_t budget = allowance, faults = 0;
	struct mthpd_hold_in in;
	enum mthpd_hold hold;
	bool faults_known, from_start;
	size_t slot;
	struct target_ctx tc = {
		.d = d,
		.proc = proc,
		.policy = pol,
		.pages_budget = &budget,
		.sp = p,
		.psi_fd = {-1, -1},
	};
	int r;

	*ret_spent = 1;
	hold = hold_of(vc, p, proc, pol, &in);
	if (hold == MTHPD_HOLD_SETTLED) {
		uint64_t now = now_usec();

		/* read and unchanged: the next read waits twice as long */
		if (quiet_check_due(vc, p, now)) {
			p->quiet_checked = now;
			p->quiet_check_usec = p->quiet_check_usec ? 2 * p->quiet_check_usec : 2 * QUIET_CHECK_USEC;
			if (p->quiet_check_usec > QUIET_CHECK_MAX_USEC)
				p->quiet_check_usec = QUIET_CHECK_MAX_USEC;
		}
		d->metrics.quiet++;
		p->resume = 0;
		return 0;
	}
	p->quiet_until = 0;
	if (hold == MTHPD_HOLD_RESTING) {
		/*
		 * A pass does not cut its rest short; the pace timer brings it
		 * back, from where it stopped.  It spent nothing, so its share
		 * goes to the others.
		 */
		*ret_spent = 0;
		return 0;
	}
	p->pace_waiting = false;
	tc.counters = metrics_policy(&d->metrics, pol->name);
	if (!tc.counters) {
		p->resume = 0;
		return 0;
	}
	/* Why nothing is collapsed, if so: the held blocks are logged with it. */
	tc.held = mthpd_hold_result(hold);
	tc.acting = hold == MTHPD_HOLD_NONE;
	slot = (size_t)proc->pid % ARRAY_SIZE(d->dry_logged);
	tc.log_dry = d->dry_logged[slot].pid != proc->pid ||
		     now_usec() - d->dry_logged[slot].usec >= DRY_RUN_LOG_INTERVAL_USEC;
	if (!open_target(d, p, proc, pol)) {
		p->resume = 0;
		return 0;
	}
	in.young = too_young(p, pol);
	if (mthpd_hold_decide(&in) == MTHPD_HOLD_YOUNG) {
		/* nothing spent: its share goes to the others; the timer comes back for it */
		p->resume = 0;
		*ret_spent = 0;
		return 0;
	}
	notice_thp_disabled(p, proc, pol);
	/* counted before the visit: a fault during it shows next time */
	faults_known = mthpd_target_faults(&p->t, &faults) == 0;
	from_start = p->resume == 0;
	r = pass_ranges(d, p, pol, bytes_left, allowance, &tc, &st);
	pressure_stall_close(tc.psi_fd);
	if (r == -ENOSPC) {
		/*
		 * A huge page could not be allocated: the pass stopped after
		 * that range (issue 31).  The hold below is the host's: the
		 * next visits of this pass are held too.  This process goes
		 * on from where it stopped when the hold ends, as after a
		 * spent budget.
		 */
		tc.alloc_failed = true;
		r = -EDQUOT;
	}

	note_coverage(d, p, proc, pol, &tc, &st, r);
	read_rollup(d, p, &st, r);
	notice_splits(&tc, p, proc, pol);
	if (r == 0 && from_start && !p->t.thp_disabled)
		notice_vmas_refused(p, proc, pol);
	p->held = (!tc.acting && tc.held != MTHPD_RESULT_DRY_RUN && tc.held_blocks > 0) ||
		  tc.alloc_failed;
	if (tc.logged_dry) {
		/* the minute counts from the last time some were logged */
		d->dry_logged[slot].pid = proc->pid;
		d->dry_logged[slot].usec = now_usec();
	}
	if (r == 0 && faults_known && (tc.pending == 0 || tc.pending == tc.failed))
		note_quiet(p, &tc, faults);
	/* -EDQUOT: it goes on from where it stopped; anything else ends its walk */
	log_tally(p, proc, pol, &tc, r != -EDQUOT);
	d->metrics.targets++;
	d->metrics.ranges_huge += st.ranges_huge;
	*ret_spent = allowance - budget;
	p->resume = r == -EDQUOT ? st.resume : 0;
	/* stopped to rest, with ranges and budget left: goes on when its clock allows */
	p->pace_waiting = tc.paced && r == -EDQUOT && p->resume != 0 && budget > 0;
	p->pace_allowance = p->pace_waiting ? budget : 0;
	if (*bytes_left != UINT64_MAX)
		*bytes_left -= st.bytes_collapsed < *bytes_left ? st.bytes_collapsed : *bytes_left;
	if (tc.alloc_failed)
		alloc_hold_failed(d, proc->pid, p->t.comm);
	else if (tc.acting && st.blocks_collapsed > 0)
		alloc_hold_probe_done(d);
	return visit_end(d, p, proc, r);
}
