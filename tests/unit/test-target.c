/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One pass over one process (lib/target.c) against the fake kernel
 * interface: 8 MiB of small anonymous pages, 4 whole 2M ranges.  Issue 31:
 * after the first huge page that cannot be allocated, the pass makes no
 * further process_madvise() call, holds what it had planned, and stops.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "fake-kif.h"
#include "result.h"
#include "target.h"
#include "test.h"

#define BASE 0x7f0000000000ULL
#define PFN_BASE 0x100000ULL
#define NR_PMDS 4

static int write_file(const struct fake_kif *f, const char *name, const char *text)
{
	char path[128];
	FILE *file;

	(void)snprintf(path, sizeof(path), "%s/proc/42/%s", f->dir, name);
	file = fopen(path, "we");
	if (!file)
		return -errno;
	(void)fputs(text, file);
	return fclose(file) == 0 ? 0 : -EIO;
}

/* Process 42: one anonymous VMA over the fake mapping, THP allowed. */
static void fake_process(struct fake_kif *f)
{
	char maps[128];

	TEST_ASSERT_EQ(fake_kif_init(f, BASE, NR_PMDS * MTHPD_PMD_NR, PFN_BASE), 0);
	(void)snprintf(maps, sizeof(maps), "%llx-%llx rw-p 00000000 00:00 0 \n",
		       (unsigned long long)BASE,
		       (unsigned long long)(BASE + NR_PMDS * MTHPD_PMD_SIZE));
	TEST_ASSERT_EQ(write_file(f, "maps", maps), 0);
	TEST_ASSERT_EQ(write_file(f, "smaps", "VmFlags: rd wr mr mw me ac \n"), 0);
	TEST_ASSERT_EQ(write_file(f, "comm", "worker\n"), 0);
	TEST_ASSERT_EQ(write_file(f, "status", "Name:\tworker\nRssAnon:\t8192 kB\nTHP_enabled:\t1\n"), 0);
	TEST_ASSERT_EQ(fake_kif_vmstat(f, 7), 0);
}

struct tally {
	unsigned int ranges;
	unsigned int results[_MTHPD_SCAN_RESULT_MAX];
};

static int count_sink(void *userdata, const struct mthpd_target *t, const struct mthpd_range_scan *s,
		      const struct mthpd_range_plan *p)
{
	struct tally *tl = userdata;

	(void)t;
	(void)s;
	tl->ranges++;
	for (unsigned int i = 0; i < p->nr_blocks; i++)
		if (p->blocks[i].action == MTHPD_ACTION_COLLAPSE)
			tl->results[p->blocks[i].result]++;
	return 0;
}

/* A collapsing pass over process 42, 2M only, @batch ranges a call, or a @probe. */
static int run_pass_opts(struct fake_kif *f, unsigned int batch, bool probe, struct tally *tl,
			 struct mthpd_pass_stats *st)
{
	const struct mthpd_knobs k = {.orders = 1U << MTHPD_PMD_ORDER, .max_ptes_none = 0};
	const struct mthpd_features feat = {0};
	struct mthpd_target t;
	struct mthpd_pass_opts o = {
		.knobs = &k,
		.features = &feat,
		.collapse = true,
		.batch = batch,
		.probe = probe,
	};
	int r;

	o.kpageflags_fd = f->kif.ops->open_proc(&f->kif, "kpageflags", O_RDONLY);
	TEST_ASSERT(o.kpageflags_fd >= 0);
	TEST_ASSERT_EQ(mthpd_target_open(&f->kif, 42, false, &t), 0);
	r = mthpd_target_pass(&f->kif, &t, &o, count_sink, tl, st);
	mthpd_target_close(&t);
	(void)close(o.kpageflags_fd);
	return r;
}

static int run_pass(struct fake_kif *f, unsigned int batch, struct tally *tl,
		    struct mthpd_pass_stats *st)
{
	return run_pass_opts(f, batch, false, tl, st);
}

static void test_alloc_failure_stops_pass(void)
{
	struct fake_kif f;
	struct tally tl = {0};
	struct mthpd_pass_stats st;

	test_case = "range by range: the 2nd 2M cannot be allocated, nothing asked after it";
	fake_process(&f);
	fake_kif_answer(&f, (int64_t)MTHPD_PMD_SIZE, true);
	fake_kif_answer(&f, -ENOMEM, true);
	fake_kif_answer(&f, (int64_t)MTHPD_PMD_SIZE, true);
	fake_kif_answer(&f, (int64_t)MTHPD_PMD_SIZE, true);
	TEST_ASSERT_EQ(run_pass(&f, 1, &tl, &st), -ENOSPC);
	TEST_ASSERT_EQ(f.nr_calls, 2);
	TEST_ASSERT_EQ(tl.ranges, 2);
	TEST_ASSERT_EQ(tl.results[MTHPD_SCAN_SUCCEED], 1);
	TEST_ASSERT_EQ(tl.results[MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL], 1);
	TEST_ASSERT_EQ(st.alloc_failed_at, BASE + MTHPD_PMD_SIZE);
	TEST_ASSERT_EQ(st.resume, BASE + MTHPD_PMD_SIZE); /* begins there, after the hold */
	fake_kif_done(&f);

	test_case = "a batch of 4: stopped at the 2nd, the last two held, one call";
	tl = (struct tally){0};
	fake_process(&f);
	fake_kif_answer(&f, (int64_t)MTHPD_PMD_SIZE, true);
	fake_kif_answer(&f, -ENOMEM, true);
	fake_kif_answer(&f, (int64_t)MTHPD_PMD_SIZE, true);
	fake_kif_answer(&f, (int64_t)MTHPD_PMD_SIZE, true);
	TEST_ASSERT_EQ(run_pass(&f, NR_PMDS, &tl, &st), -ENOSPC);
	TEST_ASSERT_EQ(f.nr_batches, 1);
	TEST_ASSERT_EQ(f.nr_calls, 2);
	TEST_ASSERT_EQ(st.madvise_calls, 1);
	TEST_ASSERT_EQ(tl.ranges, NR_PMDS);
	TEST_ASSERT_EQ(tl.results[MTHPD_SCAN_SUCCEED], 1);
	TEST_ASSERT_EQ(tl.results[MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL], 1);
	TEST_ASSERT_EQ(tl.results[MTHPD_RESULT_HELD_ALLOC_FAILED], 2);
	TEST_ASSERT_EQ(st.resume, BASE + MTHPD_PMD_SIZE);
	fake_kif_done(&f);

	test_case = "a range no longer mapped (ENOMEM, not counted) does not stop the pass";
	tl = (struct tally){0};
	fake_process(&f);
	fake_kif_answer(&f, -ENOMEM, false);
	for (int i = 0; i < NR_PMDS - 1; i++)
		fake_kif_answer(&f, (int64_t)MTHPD_PMD_SIZE, true);
	TEST_ASSERT_EQ(run_pass(&f, 1, &tl, &st), 0);
	TEST_ASSERT_EQ(f.nr_calls, NR_PMDS);
	TEST_ASSERT_EQ(tl.results[MTHPD_RESULT_UNMAPPED], 1);
	TEST_ASSERT_EQ(tl.results[MTHPD_SCAN_SUCCEED], NR_PMDS - 1);
	TEST_ASSERT_EQ(st.alloc_failed_at, 0);
	fake_kif_done(&f);
	test_case = NULL;
}

/*
 * The allocation pause's probe: one range asked, however large the batch
 * would be, then it stops as a spent budget does, to go on from the next.
 */
static void test_probe(void)
{
	struct fake_kif f;
	struct tally tl = {0};
	struct mthpd_pass_stats st;

	test_case = "a probe that succeeds: one range, one call, then it stops";
	fake_process(&f);
	for (int i = 0; i < NR_PMDS; i++)
		fake_kif_answer(&f, (int64_t)MTHPD_PMD_SIZE, true);
	TEST_ASSERT_EQ(run_pass_opts(&f, NR_PMDS, true, &tl, &st), -EDQUOT);
	TEST_ASSERT_EQ(f.nr_calls, 1);
	TEST_ASSERT_EQ(f.nr_batches, 0);
	TEST_ASSERT_EQ(tl.ranges, 1);
	TEST_ASSERT_EQ(tl.results[MTHPD_SCAN_SUCCEED], 1);
	TEST_ASSERT_EQ(st.resume, BASE + MTHPD_PMD_SIZE);
	fake_kif_done(&f);

	test_case = "a probe that fails: one failed allocation, -ENOSPC, resume at it";
	tl = (struct tally){0};
	fake_process(&f);
	fake_kif_answer(&f, -ENOMEM, true);
	TEST_ASSERT_EQ(run_pass_opts(&f, NR_PMDS, true, &tl, &st), -ENOSPC);
	TEST_ASSERT_EQ(f.nr_calls, 1);
	TEST_ASSERT_EQ(tl.results[MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL], 1);
	TEST_ASSERT_EQ(st.resume, BASE);
	fake_kif_done(&f);
	test_case = NULL;
}

int main(void)
{
	test_alloc_failure_stops_pass();
	test_probe();
	return test_finish();
}
