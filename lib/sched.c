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

/* Visit order: by policy; within one, never visited (0) first, then oldest visit. */
static int cmp_turn(const void *a, const void *b)
{
	const struct mthpd_sched_proc *x = *(struct mthpd_sched_proc *const *)a;
	const struct mthpd_sched_proc *y = *(struct mthpd_sched_proc *const *)b;

	if (x->policy != y->policy)
		return x->policy < y->policy ? -1 : 1;
	if (x->last_visit != y->last_visit)
		return x->last_visit < y->last_visit ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* One policy's processes in this pass: order[next..end) are still to visit. */
struct group {
	size_t next, end;
};

int mthpd_sched_pass(struct mthpd_sched *s, uint64_t budget, mthpd_sched_visit_fn visit,
		     void *userdata, struct mthpd_sched_stats *ret)
{
	_cleanup_free_ struct mthpd_sched_proc **order = calloc(s->n ? s->n : 1, sizeof(*order));
	_cleanup_free_ struct group *groups = NULL;
	struct mthpd_sched_stats st = {0};
	size_t n = 0, ng = 0, left_groups;
	uint64_t left = budget;
	int r = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++)
		if (s->procs[i]->policy >= 0)
			order[n++] = s->procs[i];
	qsort(order, n, sizeof(*order), cmp_turn);
	groups = calloc(n ? n : 1, sizeof(*groups));
	if (!groups)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || order[i]->policy != order[i - 1]->policy)
			groups[ng++].next = i;
		groups[ng - 1].end = i + 1;
	}
	st.policies = ng;
	left_groups = ng;

	/*
	 * Rounds: each policy still holding unvisited processes gets an even
	 * share of what is left; a round ends every policy either through its
	 * processes or out of its share, so what one leaves goes to the others
	 * in the next round.
	 */
	while (left > 0 && left_groups > 0 && r == 0) {
		uint64_t share = left / left_groups ? left / left_groups : 1;
		size_t first = ng ? s->rota % ng : 0;

		for (size_t g = 0; g < ng && left > 0 && r == 0; g++) {
			struct group *gr = &groups[(first + g) % ng];
			uint64_t allowance = share < left ? share : left;

			while (allowance > 0 && gr->next < gr->end) {
				struct mthpd_sched_proc *p = order[gr->next];
				uint64_t spent = 0;

				r = visit(userdata, p, allowance, &spent);
				if (r < 0)
					break;
				if (spent > allowance)
					spent = allowance;
				p->last_visit = ++s->visits;
				st.visits++;
				allowance -= spent;
				left -= spent;
				/* stopped inside it: it goes on from p->resume next time */
				if (p->resume != 0 && spent > 0)
					break;
				st.completed += p->resume == 0;
				if (++gr->next == gr->end)
					left_groups--;
			}
		}
	}
	s->rota++;
	st.spent = budget - left;
	if (ret)
		*ret = st;
	return r;
}
