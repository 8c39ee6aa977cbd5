/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One pass: discovery (the processes of the cgroups a policy could match),
 * matching each to its policy, the per-policy budgets, the cursor's visits
 * (lib/sched.c), the pass's status line, and the rows the metrics and
 * state files show.  Also the paced processes that go on between passes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "pace.h"
#include "text.h"
#include "util.h"

int daemon_read_comm(const struct daemon *d, pid_t pid, char *buf, size_t size)
{
	char path[64];
	int r;

	(void)snprintf(path, sizeof(path), "%d/comm", (int)pid);
	r = mthpd_kif_read_proc(&d->kif, path, buf, size);
	if (r < 0)
		return r;
	mthpd_text_chomp(buf);
	return 0;
}

/* FNV-1a: tells whether a process moved to another cgroup since it was matched. */
static uint64_t cgroup_id(const char *path)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *path; path++)
		h = (h ^ (unsigned char)*path) * 0x100000001b3ULL;
	return h;
}

/*
 * The policy of each process: matched once, and again after a reload, a
 * move to another cgroup, or an exec.  Returns the number with a policy.
 */
static unsigned long match_policies(struct daemon *d, pid_t self)
{
	const struct mthpd_config *c = d->cfg;
	unsigned long matched = 0;

	for (size_t i = 0; i < d->sched.n; i++) {
		struct mthpd_sched_proc *p = d->sched.procs[i];
		const struct mthpd_proc *proc = &d->procs[p->proc];
		uint64_t id = cgroup_id(proc->cgroup);
		const struct mthpd_policy *pol;
		char comm[32];

		if (p->match_gen != d->cfg_gen || p->cgroup_id != id) {
			p->match_gen = d->cfg_gen;
			p->quiet_until = 0; /* a new policy, or a new probe: look again */
			p->cgroup_id = id;
			p->policy = -1;
			if (p->pid == self || daemon_read_comm(d, p->pid, comm, sizeof(comm)) < 0)
				continue;
			pol = mthpd_config_match(c, proc->cgroup, proc->unit[0] ? proc->unit : NULL, comm);
			/* No policy, or one that says enabled=no: never touched. */
			if (pol && pol->enabled)
				p->policy = (int)(pol - c->policies);
		}
		matched += p->policy >= 0;
	}
	return matched;
}

/* mthpd_discover_filter: only cgroups whose processes some enabled policy could match. */
static bool may_match(void *userdata, const char *cgroup, const char *unit)
{
	return mthpd_config_may_match(userdata, cgroup, unit);
}

/*
 * Discovery: the processes of the cgroups a policy could match, into the
 * cursor's set, each matched to its policy.  Sets *ret_matched.  Returns
 * the number of processes, or -errno (the set is left as it was).
 */
static int refresh(struct daemon *d, unsigned long *ret_matched)
{
	const struct mthpd_config *c = d->cfg;
	int n, r;

	size_t stored = 0;

	/* the tree is walked again only when a cgroup was made, removed or moved */
	n = d->cgroup_mount[0] ? mthpd_discover_cached(&d->discover_cache, d->cgroup_mount, may_match,
						       d->cfg, d->window, d->window_period, d->procs,
						       c->daemon.max_pids_per_pass, &stored)
			       : 0;
	if (n < 0) {
		log_errno(LOG_LVL_WARNING, n, "cannot walk the cgroups below '%s': %m, ignoring",
			  d->cgroup_mount);
		n = 0;
		stored = 0;
	}
	if ((unsigned int)n > c->daemon.max_pids_per_pass) {
		/*
		 * More than can be kept: a window of them, moved on every
		 * time, so that all of them take turns.  Said once per count.
		 */
		if ((size_t)n != d->window_period)
			log_warning("%d processes, more than max_pids_per_pass=%u: they take turns, "
				    "%u at a time", n, c->daemon.max_pids_per_pass,
				    c->daemon.max_pids_per_pass);
		d->window = (d->window + c->daemon.max_pids_per_pass) % (size_t)n;
		d->window_period = (size_t)n;
	} else {
		d->window = d->window_period = 0;
	}
	n = (int)stored;
	for (int i = 0; i < n; i++)
		d->pids[i] = d->procs[i].pid;
	r = mthpd_sched_update(&d->sched, d->pids, (size_t)n);
	if (r < 0)
		return log_errno(LOG_LVL_WARNING, r, "cannot keep track of %d processes: %m, ignoring", n);
	*ret_matched = match_policies(d, getpid());
	return n;
}

/*
 * Between passes, once a second: has a process appeared that a policy
 * matches and that was never visited?  Then the caller starts a pass at
 * once, instead of letting it wait up to scan_sleep_millisecs.
 */
bool pass_newcomers(struct daemon *d)
{
	unsigned long matched;

	if (refresh(d, &matched) < 0 || matched == 0)
		return false;
	for (size_t i = 0; i < d->sched.n; i++)
		if (d->sched.procs[i]->policy >= 0 && d->sched.procs[i]->last_visit == 0)
			return true;
	return false;
}

/* Why (part of) a process is left alone, as words for `mthpd status`; "-" when nothing is. */
static void reason_of(const struct mthpd_sched_proc *p, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
#define ADD(...)                                                                             \
	do {                                                                                 \
		if (n < size)                                                                \
			n += (size_t)snprintf(buf + n, size - n, n ? ",%s" : "%s", __VA_ARGS__); \
	} while (0)
	if (p->open && p->t.thp_disabled)
		ADD("thp_disabled");
	if (p->cov.held >= 0)
		ADD(mthpd_result_name((enum mthpd_scan_result)p->cov.held));
	if (p->said_vmas_refused) {
		char v[32];

		(void)snprintf(v, sizeof(v), "vmas_refused=%u", p->said_vmas_refused);
		ADD(v);
	}
	if (p->cov.backoff)
		ADD("backoff");
	if (p->said_unreadable)
		ADD("permission_denied");
	if (p->young_until)
		ADD("min_age");
	if (p->pace_auto.level) {
		char v[32];

		/* pace=auto: the service feels the work, which goes on at this share of a CPU */
		(void)snprintf(v, sizeof(v), "pace_auto=%u%%", mthpd_pace_auto_share(p->pace_auto.level));
		ADD(v);
	}
#undef ADD
	if (!buf[0])
		(void)snprintf(buf, size, "-");
}

/*
 * What the metrics and state files show of the processes now: a row per
 * matched process, and per policy the gauges summed over them.
 */
void pass_count_processes(struct daemon *d)
{
	const struct mthpd_config *c = d->cfg;
	size_t n = 0;

	memset(d->metrics.procs, 0, sizeof(d->metrics.procs));
	for (size_t i = 0; i < d->sched.n; i++)
		n += d->sched.procs[i]->policy >= 0;
	(void)metrics_rows(&d->metrics, n); /* without memory for them: no rows */
	n = 0;
	for (size_t i = 0; i < d->sched.n; i++) {
		const struct mthpd_sched_proc *p = d->sched.procs[i];
		const struct mthpd_proc *proc = &d->procs[p->proc];
		struct metrics_row *row;
		struct mthpd_counters *mc;
		struct metrics_procs *mp;
		bool thp_off = p->open && p->t.thp_disabled;

		if (p->policy < 0 || (size_t)p->policy >= c->nr_policies)
			continue;
		mc = metrics_policy(&d->metrics, c->policies[p->policy].name);
		if (!mc)
			continue;
		mp = &d->metrics.procs[mc - d->metrics.per_policy];
		mp->processes++;
		mp->thp_disabled += thp_off;
		mp->vmas_refused += p->said_vmas_refused;
		if (n >= d->metrics.nr_rows)
			continue;
		row = &d->metrics.rows[n++];
		row->pid = p->pid;
		(void)snprintf(row->comm, sizeof(row->comm), "%s", p->t.comm);
		row->policy = (size_t)(mc - d->metrics.per_policy);
		row->unit = proc->unit[0] ? proc->unit : proc->cgroup;
		row->anon = p->open ? p->t.rss_anon : 0;
		row->huge = p->cov.huge_bytes;
		row->partial = p->cov.partial_bytes;
		row->collapsed_pass = p->cov.collapsed_in == d->metrics.passes ? p->cov.collapsed_pass : 0;
		row->collapsed = p->cov.collapsed_total;
		row->thp_disabled = thp_off;
		row->last_result = p->last_visit == 0 || (p->young_until && p->cov.last_result < 0)
					   ? "not_visited"
				   : row->thp_disabled      ? "thp_disabled"
				   : p->said_unreadable     ? "permission_denied"
				   : p->cov.last_result < 0 ? "nothing_to_do"
							    : mthpd_result_name(p->cov.last_result);
		reason_of(p, row->reason, sizeof(row->reason));
		mp->anon += row->anon;
		mp->huge += row->huge;
		mp->partial += row->partial;
		mp->collapsed_pass += row->collapsed_pass;
	}
	d->metrics.nr_rows = n;
	metrics_rows_done(&d->metrics);
}

/* Every policy's max_bytes_per_pass, whole again: at the start of a pass. */
static int reset_bytes_left(struct daemon *d)
{
	const struct mthpd_config *c = d->cfg;
	uint64_t *b = reallocarray(d->bytes_left, c->nr_policies ? c->nr_policies : 1,
				   sizeof(uint64_t));

	if (!b)
		return -ENOMEM;
	d->bytes_left = b;
	d->bytes_gen = d->cfg_gen;
	for (size_t i = 0; i < c->nr_policies; i++)
		b[i] = c->policies[i].max_bytes_per_pass ? c->policies[i].max_bytes_per_pass
							 : UINT64_MAX;
	return 0;
}

/*
 * Between passes, on the pace timer: the paced processes whose rest is over
 * go on from where they stopped, with what their visit had left of the
 * pass's budget (pages and bytes).  A process whose policy changed since
 * (a reload) goes on at the next pass instead.
 */
void pass_pace_resume(struct daemon *d)
{
	struct visit_ctx vc = {.d = d, .bytes_left = d->bytes_left};
	uint64_t now = now_usec();

	if (!d->bytes_left || d->bytes_gen != d->cfg_gen) {
		if (reset_bytes_left(d) < 0)
			return;
		vc.bytes_left = d->bytes_left;
	}
	for (size_t i = 0; i < d->sched.n && !d->stop; i++) {
		struct mthpd_sched_proc *p = d->sched.procs[i];
		uint64_t spent;

		if (!p->pace_waiting)
			continue;
		if (p->policy < 0 || p->match_gen != d->cfg_gen) {
			p->pace_waiting = false;
			continue;
		}
		if (mthpd_pace_wait(p->pace_next, now) > 0)
			continue;
		if (visit_process(&vc, p, p->pace_allowance, &spent) == -ECANCELED)
			break;
	}
}

/* Arms the pace timer for the first paced process to go on; disarms it if none waits. */
int pass_arm_pace(struct daemon *d)
{
	struct itimerspec its = {0};
	uint64_t first = UINT64_MAX;

	for (size_t i = 0; i < d->sched.n; i++)
		if (d->sched.procs[i]->pace_waiting && d->sched.procs[i]->pace_next < first)
			first = d->sched.procs[i]->pace_next;
	if (first != UINT64_MAX) {
		/* CLOCK_MONOTONIC, as now_usec(): a time already past fires at once */
		its.it_value.tv_sec = (time_t)(first / 1000000ULL);
		its.it_value.tv_nsec = (long)(first % 1000000ULL) * 1000L;
		if (first == 0)
			its.it_value.tv_nsec = 1; /* zero would disarm it */
	}
	return timerfd_settime(d->pace_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0 ? -errno : 0;
}

/*
 * Whether the next passes can find nothing to do until something changes:
 * every matched process is open and quiet (its last visit left nothing to
 * collapse, or only failures in backoff), none held back or resting, none
 * stopped halfway, and discovery sees them all (no max_pids_per_pass
 * window to move on).  What changes that (a fault, a new process, the end
 * of a backoff) is found by a pass with check_quiet, once a second.
 */
bool pass_settled(const struct daemon *d)
{
	uint64_t now = now_usec();

	if (d->window_period)
		return false;
	for (size_t i = 0; i < d->sched.n; i++) {
		const struct mthpd_sched_proc *p = d->sched.procs[i];

		if (p->policy < 0)
			continue;
		if (!p->open || p->quiet_until <= now || p->held || p->pace_waiting || p->resume)
			return false;
	}
	return true;
}

/* One pass; @check_quiet: the idle daemon's pass, which reads the quiet processes' fault counts due soon too. */
void pass_run(struct daemon *d, bool check_quiet)
{
	const struct mthpd_config *c = d->cfg;
	uint64_t start = now_usec();
	unsigned long matched = 0, collapsed = 0, planned = 0;
	struct mthpd_counters before = d->metrics.total;
	struct mthpd_sched_stats ss = {0};
	struct visit_ctx vc = {.d = d, .check_quiet = check_quiet};
	char status[320];
	bool news;
	int n;

	if (reset_bytes_left(d) < 0)
		return;
	vc.bytes_left = d->bytes_left;
	pressure_check(d);
	d->metrics.targets = 0;
	d->metrics.ranges_huge = 0;
	d->metrics.quiet = 0;

	n = refresh(d, &matched);
	if (n < 0)
		return;
	if (start - d->verdicts_usec >= VMA_VERDICT_TTL_USEC) {
		for (size_t i = 0; i < d->sched.n; i++)
			mthpd_target_forget_vmas(&d->sched.procs[i]->t);
		d->verdicts_usec = start;
	}
	d->nr_open = 0;
	for (size_t i = 0; i < d->sched.n; i++)
		d->nr_open += d->sched.procs[i]->open;
	(void)mthpd_sched_pass(&d->sched, c->daemon.pages_to_scan, visit_process, &vc, &ss);

	/* Totals from the per-policy counters of this pass. */
	memset(&d->metrics.total, 0, sizeof(d->metrics.total));
	for (size_t i = 0; i < d->metrics.n; i++)
		mthpd_account_add(&d->metrics.total, &d->metrics.per_policy[i]);
	d->metrics.passes++;
	d->metrics.last_pass_seconds = (double)(now_usec() - start) / 1e6;
	news = d->metrics.backing_off != d->backing_off;
	d->metrics.backing_off = d->backing_off;

	{
		for (unsigned int o = MTHPD_MIN_ORDER; o <= MTHPD_PMD_ORDER; o++) {
			collapsed += d->metrics.total.collapse_alloc[o] - before.collapse_alloc[o];
			planned += d->metrics.total.planned[o] - before.planned[o];
		}
		(void)snprintf(status, sizeof(status),
			       "pass %lu: %lu of %d processes matched, %lu visited (%lu to their end), "
			       "%lu blocks planned, %lu collapsed%s%s%s",
			       d->metrics.passes, matched, n, ss.visits, ss.completed, planned, collapsed,
			       d->backing_off ? ", backing off (memory pressure)" : "",
			       d->alloc_hold ? ", holding (a huge page could not be allocated)" : "",
			       ss.spent >= c->daemon.pages_to_scan ? ", pages_to_scan reached" : "");
	}
	(void)snprintf(d->last_status, sizeof(d->last_status), "%s", status);
	d->last_status_usec = now_usec();
	/* A pass with nothing to do is not news: STATUS= still shows it. */
	log_msg(planned || collapsed ? LOG_LVL_NOTICE : LOG_LVL_DEBUG, "%s in %.3f s", status,
		d->metrics.last_pass_seconds);
	/*
	 * STATUS= and the files after every pass that planned or collapsed
	 * something, else at most once a second: at a pass every 100 ms over
	 * settled memory they were a third of the daemon's CPU (bench/daemon).
	 */
	news |= planned || collapsed || d->metrics.passes == 1;
	if (!news && now_usec() - d->written_usec < FILES_INTERVAL_USEC)
		return;
	(void)sd_notifyf(0, "STATUS=%s", status);
	daemon_write_files(d);
}
