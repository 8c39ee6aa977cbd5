/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cursor across passes (lib/sched.c) with a simulated visit: each pid
 * has a number of pages of work; a visit does as much as its allowance lets
 * and leaves a resume address where it stopped.  Checked: the set follows
 * discovery, nothing starves whatever the budget, policies share a pass
 * evenly, a new process is served in the next pass, and budget one policy
 * leaves goes to the others.
 */
#include <errno.h>
#include <stdint.h>

#include "sched.h"
#include "test.h"
#include "util.h"

#define NPID 64

/* Simulated processes, indexed by pid. */
static struct {
	uint64_t work; /* pages a whole visit costs */
	uint64_t done; /* pages done so far in the current sweep */
	unsigned int sweeps; /* times it was visited to the end */
	unsigned int visits;
	unsigned int last_pass; /* pass number of its latest visit */
} sim[NPID];
static unsigned int pass_no;

static int sim_visit(void *userdata _unused_, struct mthpd_sched_proc *p, uint64_t allowance,
		     uint64_t *ret_spent)
{
	uint64_t spent = sim[p->pid].work - sim[p->pid].done;

	/* the resume address is where the simulated process stopped */
	TEST_ASSERT_EQ(p->resume, sim[p->pid].done ? 0x1000 + sim[p->pid].done : 0);
	if (spent > allowance)
		spent = allowance;
	sim[p->pid].done += spent;
	sim[p->pid].visits++;
	sim[p->pid].last_pass = pass_no;
	if (sim[p->pid].done == sim[p->pid].work) {
		sim[p->pid].done = 0;
		sim[p->pid].sweeps++;
		p->resume = 0;
	} else {
		p->resume = 0x1000 + sim[p->pid].done;
	}
	*ret_spent = spent ? spent : 1; /* an empty process still costs a little */
	return 0;
}

static void sim_reset(void)
{
	memset(sim, 0, sizeof(sim));
	pass_no = 0;
}

static struct mthpd_sched_proc *find(struct mthpd_sched *s, pid_t pid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->procs[i]->pid == pid)
			return s->procs[i];
	return NULL;
}

static void set_policy(struct mthpd_sched *s, pid_t pid, int policy)
{
	struct mthpd_sched_proc *p = find(s, pid);

	TEST_ASSERT(p != NULL);
	if (p)
		p->policy = policy;
}

static void run_pass(struct mthpd_sched *s, uint64_t budget, struct mthpd_sched_stats *st)
{
	pass_no++;
	TEST_ASSERT_EQ(mthpd_sched_pass(s, budget, sim_visit, NULL, st), 0);
}

static void test_update(void)
{
	struct mthpd_sched s = {0};
	const pid_t first[] = {30, 10, 20, 10};
	const pid_t second[] = {40, 20, 30};

	test_case = "update: the set follows discovery";
	TEST_ASSERT_EQ(mthpd_sched_update(&s, first, ARRAY_SIZE(first)), 0);
	TEST_ASSERT_EQ(s.n, 3); /* the duplicate 10 is kept once */
	TEST_ASSERT_EQ(s.procs[0]->pid, 10);
	TEST_ASSERT_EQ(s.procs[0]->proc, 1); /* its first discovery index */
	TEST_ASSERT_EQ(s.procs[2]->pid, 30);
	TEST_ASSERT(s.procs[1]->last_visit == 0 && s.procs[1]->policy == -1 && !s.procs[1]->open);
	TEST_ASSERT_EQ(s.procs[1]->t.pagemap.fd, -1);
	s.procs[1]->last_visit = 7; /* 20 was visited */
	s.procs[1]->resume = 0x7000;
	s.procs[1]->policy = 3;
	TEST_ASSERT_EQ(mthpd_sched_update(&s, second, ARRAY_SIZE(second)), 0);
	TEST_ASSERT_EQ(s.n, 3);
	TEST_ASSERT_EQ(s.procs[0]->pid, 20); /* 10 is gone */
	TEST_ASSERT_EQ(s.procs[0]->last_visit, 7);
	TEST_ASSERT_EQ(s.procs[0]->resume, 0x7000);
	TEST_ASSERT_EQ(s.procs[0]->policy, 3);
	TEST_ASSERT_EQ(s.procs[0]->proc, 1);
	TEST_ASSERT_EQ(s.procs[2]->pid, 40);
	TEST_ASSERT_EQ(s.procs[2]->last_visit, 0);
	TEST_ASSERT_EQ(mthpd_sched_update(&s, second, 0), 0);
	TEST_ASSERT_EQ(s.n, 0);
	mthpd_sched_free(&s);
	test_case = NULL;
}

/*
 * The starvation seen before the cursor: 3 processes of 16 PMDs each and
 * pages_to_scan 4096 served [8, 0, 0] forever.  Now all three are swept
 * within ceil(3 * 8192 / 4096) = 6 passes, and keep being swept.
 */
static void test_no_starvation(void)
{
	struct mthpd_sched s = {0};
	const pid_t pids[] = {1, 2, 3};
	struct mthpd_sched_stats st;

	test_case = "no starvation: 3 x 16 PMDs, pages_to_scan 4096";
	sim_reset();
	TEST_ASSERT_EQ(mthpd_sched_update(&s, pids, 3), 0);
	for (unsigned int i = 0; i < 3; i++) {
		set_policy(&s, pids[i], 0);
		sim[pids[i]].work = 16 * 512;
	}
	for (unsigned int k = 0; k < 6; k++) {
		run_pass(&s, 4096, &st);
		TEST_ASSERT_EQ(st.spent, 4096);
	}
	for (unsigned int i = 0; i < 3; i++)
		TEST_ASSERT_EQ(sim[pids[i]].sweeps, 1);
	for (unsigned int k = 0; k < 6; k++)
		run_pass(&s, 4096, &st);
	for (unsigned int i = 0; i < 3; i++)
		TEST_ASSERT_EQ(sim[pids[i]].sweeps, 2);
	mthpd_sched_free(&s);
	test_case = NULL;
}

/*
 * Policies share a pass evenly: policy 0 has 10 large processes, policy 1
 * one.  Policy 1's process gets half of every pass until it is done, and
 * then what it leaves goes to policy 0.
 */
static void test_policy_share(void)
{
	struct mthpd_sched s = {0};
	pid_t pids[11];
	struct mthpd_sched_stats st;
	uint64_t before;

	test_case = "policies share a pass";
	sim_reset();
	for (unsigned int i = 0; i < 11; i++)
		pids[i] = (pid_t)(i + 1);
	TEST_ASSERT_EQ(mthpd_sched_update(&s, pids, 11), 0);
	for (unsigned int i = 0; i < 10; i++) {
		set_policy(&s, pids[i], 0);
		sim[pids[i]].work = 100000;
	}
	set_policy(&s, 11, 1);
	sim[11].work = 3000;
	run_pass(&s, 2000, &st);
	TEST_ASSERT_EQ(st.policies, 2);
	TEST_ASSERT_EQ(sim[11].done, 1000);
	run_pass(&s, 2000, &st);
	TEST_ASSERT_EQ(sim[11].done, 2000);
	/* 1000 left for pid 11: the other 1000 of its share go to policy 0 */
	before = 0;
	for (unsigned int i = 0; i < 10; i++)
		before += sim[pids[i]].done + sim[pids[i]].sweeps * 100000;
	run_pass(&s, 2000, &st);
	TEST_ASSERT_EQ(sim[11].sweeps, 1);
	TEST_ASSERT_EQ(st.spent, 2000);
	{
		uint64_t after = 0;

		for (unsigned int i = 0; i < 10; i++)
			after += sim[pids[i]].done + sim[pids[i]].sweeps * 100000;
		TEST_ASSERT_EQ(after - before, 1000);
	}
	mthpd_sched_free(&s);
	test_case = NULL;
}

/*
 * Cgroups share a policy's part evenly: in one policy, cgroup 1 holds 10
 * large processes and cgroup 2 one; cgroup 2's gets half of every pass.
 * Two policies, one with two cgroups: the single-cgroup policy still gets
 * half, the other's two cgroups a quarter each.
 */
static void test_cgroup_share(void)
{
	struct mthpd_sched s = {0};
	pid_t pids[12];
	struct mthpd_sched_stats st;

	test_case = "cgroups share a policy's part";
	sim_reset();
	for (unsigned int i = 0; i < 12; i++)
		pids[i] = (pid_t)(i + 1);
	TEST_ASSERT_EQ(mthpd_sched_update(&s, pids, 11), 0);
	for (unsigned int i = 0; i < 11; i++) {
		set_policy(&s, pids[i], 0);
		find(&s, pids[i])->cgroup_id = i < 10 ? 1 : 2;
		sim[pids[i]].work = 100000;
	}
	run_pass(&s, 2000, &st);
	TEST_ASSERT_EQ(sim[11].done, 1000);
	run_pass(&s, 2000, &st);
	TEST_ASSERT_EQ(sim[11].done, 2000);

	test_case = "policies, then cgroups";
	TEST_ASSERT_EQ(mthpd_sched_update(&s, pids, 12), 0);
	set_policy(&s, 12, 1);
	find(&s, 12)->cgroup_id = 3;
	sim[12].work = 100000;
	run_pass(&s, 4000, &st);
	TEST_ASSERT_EQ(sim[12].done, 2000);
	TEST_ASSERT_EQ(sim[11].done, 3000);
	mthpd_sched_free(&s);
	test_case = NULL;
}

/*
 * A process that appears while a large one of its own policy is being
 * worked on is visited in the very next pass, before the large one goes on.
 */
static void test_fresh_first(void)
{
	struct mthpd_sched s = {0};
	const pid_t one[] = {5};
	const pid_t two[] = {5, 9};
	struct mthpd_sched_stats st;

	test_case = "a new process is served in the next pass";
	sim_reset();
	TEST_ASSERT_EQ(mthpd_sched_update(&s, one, 1), 0);
	set_policy(&s, 5, 0);
	sim[5].work = 1000000;
	run_pass(&s, 4096, &st);
	run_pass(&s, 4096, &st);
	TEST_ASSERT_EQ(sim[5].done, 8192);
	TEST_ASSERT_EQ(mthpd_sched_update(&s, two, 2), 0);
	set_policy(&s, 9, 0);
	sim[9].work = 512;
	run_pass(&s, 4096, &st);
	TEST_ASSERT_EQ(sim[9].sweeps, 1);
	TEST_ASSERT_EQ(sim[9].last_pass, pass_no);
	TEST_ASSERT_EQ(sim[5].done, 8192 + 4096 - 512);
	/* processes without a policy are never visited */
	TEST_ASSERT_EQ(mthpd_sched_update(&s, (const pid_t[]){5, 9, 12}, 3), 0);
	run_pass(&s, 4096, &st);
	TEST_ASSERT_EQ(sim[12].visits, 0);
	mthpd_sched_free(&s);
	test_case = NULL;
}

/*
 * Round-robin: with a budget for one small process per pass, 20 of them
 * are each visited once in 20 passes, whichever the first policy is.
 */
static void test_round_robin(void)
{
	struct mthpd_sched s = {0};
	pid_t pids[20];
	struct mthpd_sched_stats st;

	test_case = "round-robin within a policy";
	sim_reset();
	for (unsigned int i = 0; i < 20; i++)
		pids[i] = (pid_t)(40 - i);
	TEST_ASSERT_EQ(mthpd_sched_update(&s, pids, 20), 0);
	for (unsigned int i = 0; i < 20; i++) {
		set_policy(&s, pids[i], (int)(i % 2));
		sim[pids[i]].work = 100;
	}
	for (unsigned int k = 0; k < 10; k++)
		run_pass(&s, 200, &st);
	for (unsigned int i = 0; i < 20; i++)
		TEST_ASSERT_EQ(sim[pids[i]].sweeps, 1);
	mthpd_sched_free(&s);
	test_case = NULL;
}

int main(void)
{
	test_update();
	test_no_starvation();
	test_policy_share();
	test_cgroup_share();
	test_fresh_first();
	test_round_robin();
	return test_finish();
}
