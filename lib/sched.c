/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"
#include "util.h"

/* Closes and frees one; accepts NULL. */
static void proc_free(struct mthpd_sched_proc *p)
{
	if (p && p->open)
		mthpd_target_close(&p->t);
	free(p);
}

struct pid_at {
	pid_t pid;
	size_t at;
};

static int cmp_pid_at(const void *a, const void *b)
{
	const struct pid_at *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

int mthpd_sched_update(struct mthpd_sched *s, const pid_t *pids, size_t n)
{
	_cleanup_free_ struct pid_at *sorted = calloc(n ? n : 1, sizeof(*sorted));
	_cleanup_free_ bool *born = calloc(n ? n : 1, sizeof(*born));
	struct mthpd_sched_proc **next = calloc(n ? n : 1, sizeof(*next));
	size_t j = 0, k = 0;

	if (!sorted || !born || !next)
		goto nomem;
	for (size_t x = 0; x < n; x++)
		sorted[x] = (struct pid_at){pids[x], x};
	qsort(sorted, n, sizeof(*sorted), cmp_pid_at);

	/*
	 * Merge two lists sorted by pid.  Entries are separate allocations (a
	 * target holds the pagemap reader's 8 KiB queue): a pass moves
	 * pointers, not processes.  Nothing old is freed before the new list
	 * is whole, so running out of memory changes nothing.
	 */
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && sorted[i].pid == sorted[i - 1].pid)
			continue;
		while (j < s->n && s->procs[j]->pid < sorted[i].pid)
			j++;
		if (j < s->n && s->procs[j]->pid == sorted[i].pid) {
			next[k] = s->procs[j++];
		} else {
			next[k] = calloc(1, sizeof(**next));
			if (!next[k])
				goto nomem;
			*next[k] = (struct mthpd_sched_proc){
				.pid = sorted[i].pid,
				.policy = -1,
				.t = {.pidfd = -1, .stat_fd = -1, .pagemap = {.fd = -1}},
				.cov = {.last_result = -1, .sweep_result = -1, .held = -1},
			};
			born[k] = true;
		}
		next[k++]->proc = sorted[i].at;
	}
	/* The old ones not carried over are gone. */
	for (size_t i = 0, x = 0; i < s->n; i++) {
		while (x < k && next[x]->pid < s->procs[i]->pid)
			x++;
		if (x == k || next[x] != s->procs[i])
			proc_free(s->procs[i]);
	}
	free(s->procs);
	s->procs = next;
	s->n = k;
	return 0;
nomem:
	for (size_t x = 0; x < k; x++)
		if (born && born[x])
			free(next[x]);
	free(next);
	return -ENOMEM;
}

void mthpd_sched_free(struct mthpd_sched *s)
{
	for (size_t i = 0; i < s->n; i++)
		proc_free(s->procs[i]);
	free(s->procs);
	s->procs = NULL;
	s->n = 0;
}

/* Visit order: by policy, cgroup; within one, never visited (0) first, then oldest visit. */
static int cmp_turn(const void *a, const void *b)
{
	const struct mthpd_sched_proc *x = *(struct mthpd_sched_proc *const *)a;
	const struct mthpd_sched_proc *y = *(struct mthpd_sched_proc *const *)b;

	if (x->policy != y->policy)
		return x->policy < y->policy ? -1 : 1;
	if (x->cgroup_id != y->cgroup_id)
		return x->cgroup_id < y->cgroup_id ? -1 : 1;
	if (x->last_visit != y->last_visit)
		return x->last_visit < y->last_visit ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* One cgroup's processes in this pass: order[next..end) are still to visit. */
struct cg {
	size_t next, end;
};

/* One policy's cgroups: cgs[first..first + n), of which @left still have some. */
struct pol {
	size_t first, n, left;
};

struct pass {
	struct mthpd_sched *s;
	struct mthpd_sched_proc **order;
	struct cg *cgs;
	mthpd_sched_visit_fn visit;
	void *userdata;
	struct mthpd_sched_stats st;
};

/*
 * A cgroup's processes in turn with @allowance pages: until it is spent or
 * every process was visited.  A process whose visit runs out of budget
 * keeps its resume address and is visited first in its next turn.
 */
static int serve_cgroup(struct pass *ps, struct cg *c, uint64_t allowance, uint64_t *ret_spent)
{
	uint64_t left = allowance;
	int r = 0;

	while (left > 0 && c->next < c->end) {
		struct mthpd_sched_proc *p = ps->order[c->next];
		uint64_t spent = 0;

		r = ps->visit(ps->userdata, p, left, &spent);
		if (r < 0)
			break;
		if (spent > left)
			spent = left;
		p->last_visit = ++ps->s->visits;
		ps->st.visits++;
		left -= spent;
		/* stopped inside it: it goes on from p->resume next time */
		if (p->resume != 0 && spent > 0)
			break;
		ps->st.completed += p->resume == 0;
		c->next++;
	}
	*ret_spent = allowance - left;
	return r;
}

/*
 * Rounds, the same at both levels: each member still holding unvisited
 * processes gets an even share of what is left; a round ends every member
 * either through its processes or out of its share, so what one leaves
 * goes to the others in the next round.  Members are a policy's cgroups
 * (serve_policy) or the policies (mthpd_sched_pass); who goes first turns
 * every pass.
 */
static int serve_policy(struct pass *ps, struct pol *pl, uint64_t allowance, uint64_t *ret_spent)
{
	uint64_t left = allowance;
	int r = 0;

	while (left > 0 && pl->left > 0 && r == 0) {
		uint64_t share = left / pl->left ? left / pl->left : 1;
		size_t first = ps->s->rota % pl->n;

		for (size_t k = 0; k < pl->n && left > 0 && r == 0; k++) {
			struct cg *c = &ps->cgs[pl->first + (first + k) % pl->n];
			uint64_t spent;

			if (c->next == c->end)
				continue;
			r = serve_cgroup(ps, c, share < left ? share : left, &spent);
			left -= spent;
			if (c->next == c->end)
				pl->left--;
		}
	}
	*ret_spent = allowance - left;
	return r;
}

int mthpd_sched_pass(struct mthpd_sched *s, uint64_t budget, mthpd_sched_visit_fn visit,
		     void *userdata, struct mthpd_sched_stats *ret)
{
	_cleanup_free_ struct mthpd_sched_proc **order = calloc(s->n ? s->n : 1, sizeof(*order));
	_cleanup_free_ struct cg *cgs = calloc(s->n ? s->n : 1, sizeof(*cgs));
	_cleanup_free_ struct pol *pols = calloc(s->n ? s->n : 1, sizeof(*pols));
	struct pass ps = {.s = s, .order = order, .cgs = cgs, .visit = visit, .userdata = userdata};
	size_t n = 0, ncg = 0, npol = 0, left_pols;
	uint64_t left = budget;
	int r = 0;

	if (!order || !cgs || !pols)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++)
		if (s->procs[i]->policy >= 0)
			order[n++] = s->procs[i];
	qsort(order, n, sizeof(*order), cmp_turn);
	for (size_t i = 0; i < n; i++) {
		bool new_pol = i == 0 || order[i]->policy != order[i - 1]->policy;

		if (new_pol)
			pols[npol++] = (struct pol){.first = ncg};
		if (new_pol || order[i]->cgroup_id != order[i - 1]->cgroup_id) {
			cgs[ncg++].next = i;
			pols[npol - 1].n++;
			pols[npol - 1].left++;
		}
		cgs[ncg - 1].end = i + 1;
	}
	ps.st.policies = npol;
	left_pols = npol;

	while (left > 0 && left_pols > 0 && r == 0) {
		uint64_t share = left / left_pols ? left / left_pols : 1;
		size_t first = s->rota % npol;

		for (size_t k = 0; k < npol && left > 0 && r == 0; k++) {
			struct pol *pl = &pols[(first + k) % npol];
			uint64_t spent;

			if (pl->left == 0)
				continue;
			r = serve_policy(&ps, pl, share < left ? share : left, &spent);
			left -= spent;
			if (pl->left == 0)
				left_pols--;
		}
	}
	s->rota++;
	ps.st.spent = budget - left;
	if (ret)
		*ret = ps.st;
	return r;
}
