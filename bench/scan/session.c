/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What bench-scan holds open while it measures one child (struct session),
 * and the parts of the pass timed alone with lib's own functions: the VMA
 * list, the populated-range walk, scan+plan CPU, the kpageflags reads and
 * the refusal probe; and the untimed check that the layout is 4K memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-scan.h"

static int preread_add(struct preread *p, uint64_t addr, const uint64_t *entries)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 1024;
		uint64_t *a = realloc(p->addr, cap * sizeof(*p->addr));
		uint64_t(*e)[MTHPD_PMD_NR];

		if (!a)
			return -ENOMEM;
		p->addr = a;
		e = realloc(p->entries, cap * sizeof(*p->entries));
		if (!e)
			return -ENOMEM;
		p->entries = e;
		p->cap = cap;
	}
	p->addr[p->n] = addr;
	memcpy(p->entries[p->n], entries, sizeof(p->entries[p->n]));
	p->n++;
	return 0;
}

int session_start(struct session *s, const struct layout *l, double *ret_touch_ms)
{
	const char *failed = NULL;
	int r;

	s->l = l;
	s->pid = spawn_child(l->name, l->size, l->every, &s->base, ret_touch_ms);
	if (s->pid < 0) {
		fprintf(stderr, "bench-scan: %s: the child could not map or touch its memory\n",
			l->name);
		return -ECHILD;
	}
	s->pm_fd = open_pagemap(s->pid);
	if (s->pm_fd < 0)
		return -errno;
	r = mthpd_kif_linux_init(NULL, NULL, &s->kif, NULL);
	if (r < 0)
		return r;
	r = mthpd_features_probe(&s->kif, &s->features);
	if (r < 0)
		return r;
	r = mthpd_knobs_read_sysfs(&s->kif, 7, &s->knobs, &failed);
	if (r < 0)
		return r;
	s->knobs.orders = l->orders;
	if (l->max_ptes_none >= 0)
		s->knobs.max_ptes_none = (unsigned int)l->max_ptes_none;
	s->kpf_fd = s->kif.ops->open_proc(&s->kif, "kpageflags", O_RDONLY);
	if (s->kpf_fd < 0)
		return s->kpf_fd;
	s->pidfd = s->kif.ops->pidfd_open(&s->kif, s->pid);
	if (s->pidfd < 0)
		return s->pidfd;
	return session_prepare(s);
}

/*
 * Lists the eligible VMAs and walks them once (untimed): which have memory
 * (the refusal probe's VMAs) and the entries of every populated range.
 */
int session_prepare(struct session *s)
{
	struct mthpd_scan_hit queue[MTHPD_SCAN_QUEUE];
	struct mthpd_pagemap pm = {.kif = &s->kif, .fd = s->pm_fd,
				   .use_scan = s->features.pagemap_scan, .queue = queue};
	uint64_t entries[MTHPD_PMD_NR], addr;
	int r;

	free(s->vmas);
	free(s->vma_has_memory);
	s->vmas = NULL;
	s->vma_has_memory = NULL;
	s->pre.n = 0;
	r = mthpd_vmas_read(&s->kif, s->pid, s->features.procmap_query, &s->vmas, &s->nvmas);
	if (r < 0)
		return r;
	s->vma_has_memory = calloc(s->nvmas ? s->nvmas : 1, sizeof(*s->vma_has_memory));
	if (!s->vma_has_memory)
		return -ENOMEM;
	for (size_t v = 0; v < s->nvmas; v++) {
		uint64_t cursor = s->vmas[v].start;

		mthpd_pagemap_reset(&pm);
		while ((r = mthpd_pagemap_next_range(&pm, &cursor, s->vmas[v].end, &addr,
						     entries)) > 0) {
			s->vma_has_memory[v] = true;
			r = preread_add(&s->pre, addr, entries);
			if (r < 0)
				return r;
		}
		if (r < 0)
			return r;
	}
	return 0;
}

void session_end(struct session *s)
{
	if (s->pm_fd >= 0)
		(void)close(s->pm_fd);
	if (s->kpf_fd >= 0)
		(void)close(s->kpf_fd);
	if (s->pidfd >= 0)
		(void)close(s->pidfd);
	mthpd_kif_done(&s->kif);
	free(s->pre.addr);
	free(s->pre.entries);
	free(s->vmas);
	free(s->vma_has_memory);
	if (s->pid > 0)
		reap_child(s->pid);
}

/* The floor once: 512 pagemap entries of each resident range. */
int floor_sample(const struct session *s, uint64_t *xsink, double *ret_ms)
{
	double t0 = now_ms();

	if (floor_read(s->pm_fd, s->l, s->base, xsink) < 0)
		return -errno;
	*ret_ms = now_ms() - t0;
	return 0;
}

/* The VMA list alone: mthpd_vmas_read(), as the pass starts. */
int vmas_once(struct session *s, double *ret_ms)
{
	struct mthpd_vma *v = NULL;
	size_t n = 0;
	double t0 = now_ms();
	int r;

	r = mthpd_vmas_read(&s->kif, s->pid, s->features.procmap_query, &v, &n);
	*ret_ms = now_ms() - t0;
	free(v);
	return r;
}

/*
 * mthpd_pagemap_next_range() alone over every eligible VMA, with
 * mthpd_pagemap_reset() before each, as mthpd_target_pass() walks them.
 */
int walk_once(struct session *s, struct mthpd_pass_stats *st, double *ret_ms)
{
	struct mthpd_scan_hit queue[MTHPD_SCAN_QUEUE];
	struct mthpd_pagemap pm = {.kif = &s->kif, .fd = s->pm_fd,
				   .use_scan = s->features.pagemap_scan, .queue = queue};
	uint64_t addr, entries[MTHPD_PMD_NR];
	unsigned long n = 0;
	double t0 = now_ms();
	int r = 0;

	for (size_t v = 0; v < s->nvmas && r >= 0; v++) {
		uint64_t cursor = s->vmas[v].start;

		mthpd_pagemap_reset(&pm);
		while ((r = mthpd_pagemap_next_range(&pm, &cursor, s->vmas[v].end, &addr,
						     entries)) > 0)
			n++;
	}
	*ret_ms = now_ms() - t0;
	if (r < 0)
		return r;
	*st = (struct mthpd_pass_stats){
		.vmas = s->nvmas,
		.ranges = n,
		.pagemap_reads = pm.nr_range_reads,
		.scan_ioctls = pm.nr_scan_ioctls,
	};
	return 0;
}

/*
 * Whether the walk tried a block below 2M that passed its occupancy test:
 * the condition under which mthpd_target_pass() reads the range's folio
 * orders from kpageflags and plans it again (plan_needs_folio_orders() in
 * lib/target.c, which is static there).
 */
static bool needs_folio_orders(const struct mthpd_range_plan *p)
{
	for (unsigned int i = 0; i < p->nr_blocks; i++)
		if (p->blocks[i].order < MTHPD_PMD_ORDER &&
		    p->blocks[i].reason != MTHPD_SCAN_EXCEED_NONE_PTE)
			return true;
	return false;
}

bool below_pmd(const struct mthpd_knobs *k)
{
	return k->orders & ((1U << MTHPD_PMD_ORDER) - 1);
}

/*
 * The pass's CPU over pre-read entries: mthpd_scan_range() (no folio orders,
 * as the pass asks) and the first mthpd_plan_range().  With @kpf, instead
 * only what follows for the ranges that need it: mthpd_scan_read_folio_orders()
 * and the second mthpd_plan_range().  Each range's entries are copied to a
 * local buffer first (not timed), so that they are as hot in the cache as
 * right after the pread.
 */
int cpu_once(const struct session *s, bool kpf, struct mthpd_pass_stats *st,
		    double *ret_ms)
{
	static struct mthpd_range_scan scan;
	static struct mthpd_range_plan plan;
	uint64_t entries[MTHPD_PMD_NR];
	struct mthpd_scan_ctx sc;
	unsigned long replanned = 0;
	double total = 0, t0;
	int r;

	mthpd_scan_ctx_init(&sc, s->kpf_fd, false);
	for (size_t i = 0; i < s->pre.n; i++) {
		memcpy(entries, s->pre.entries[i], sizeof(entries));
		t0 = now_ms();
		r = mthpd_scan_range(&sc, s->pre.addr[i], entries, &scan);
		if (r < 0)
			return r;
		mthpd_plan_range(&scan, &s->knobs, NULL, NULL, &plan);
		if (!kpf)
			total += now_ms() - t0;
		if (!below_pmd(&s->knobs) || scan.folio_orders_known || !needs_folio_orders(&plan))
			continue;
		replanned++;
		if (!kpf)
			continue;
		t0 = now_ms();
		r = mthpd_scan_read_folio_orders(&sc, entries, &scan);
		if (r < 0)
			return r;
		mthpd_plan_range(&scan, &s->knobs, NULL, NULL, &plan);
		total += now_ms() - t0;
	}
	*ret_ms = total;
	*st = (struct mthpd_pass_stats){
		.ranges = kpf ? replanned : s->pre.n,
		.kpageflags_pfns = sc.nr_kpageflags_pfns,
	};
	return 0;
}

/*
 * The refusal probe alone: one process_madvise(pidfd, {vma_start, 4 KiB},
 * MADV_COLLAPSE, 0) per VMA with memory, through lib's kif as target.c
 * calls it.  Returns 0, or -errno other than EINVAL (a refused VMA).
 */
int probe_once(struct session *s, unsigned long *ret_n, double *ret_ms)
{
	unsigned long n = 0;
	double t0 = now_ms();
	int r = 0;

	for (size_t v = 0; v < s->nvmas; v++) {
		int64_t c;

		if (!s->vma_has_memory[v])
			continue;
		c = s->kif.ops->collapse(&s->kif, s->pidfd, s->vmas[v].start, MTHPD_PAGE_SIZE, 0);
		n++;
		if (c < 0 && c != -EINVAL) {
			r = (int)c;
			break;
		}
	}
	*ret_ms = now_ms() - t0;
	*ret_n = n;
	return r;
}

/* Pages in the run of consecutive PFNs of the occupied pages that starts at @k. */
static unsigned int pfn_run(const struct mthpd_range_scan *scan, const uint64_t *e, unsigned int k)
{
	unsigned int j = k + 1;

	while (j < MTHPD_PMD_NR && mthpd_bit(scan->occupied, j) &&
	       mthpd_pagemap_pfn(e[j]) == mthpd_pagemap_pfn(e[k]) + (j - k))
		j++;
	return j - k;
}

int check_layout(const struct session *s, struct layout_check *ret)
{
	static struct mthpd_range_scan scan;
	static struct mthpd_range_plan plan;
	struct layout_check c = {0};
	struct mthpd_scan_ctx sc;
	uint32_t small = s->knobs.orders & ((1U << MTHPD_PMD_ORDER) - 1);
	int r;

	/* A run of L PFNs proves at most order ceil(log2(L + 1)). */
	c.long_run = small ? 1U << (__builtin_ctz(small) - 1) : MTHPD_PMD_NR;

	mthpd_scan_ctx_init(&sc, s->kpf_fd, false);
	for (size_t i = 0; i < s->pre.n; i++) {
		const uint64_t *e = s->pre.entries[i];
		bool needed;

		r = mthpd_scan_range(&sc, s->pre.addr[i], e, &scan);
		if (r < 0)
			return r;
		mthpd_plan_range(&scan, &s->knobs, NULL, NULL, &plan);
		needed = below_pmd(&s->knobs) && !scan.folio_orders_known &&
			 needs_folio_orders(&plan);
		c.pmd_mapped += scan.pmd_mapped;
		if (!scan.folio_orders_known) {
			r = mthpd_scan_read_folio_orders(&sc, e, &scan);
			if (r < 0)
				return r;
		}
		for (unsigned int k = 0; k < MTHPD_PMD_NR; k++) {
			bool occ = mthpd_bit(scan.occupied, k);

			c.large += occ && scan.folio_order[k] > 0;
			if (!needed || !occ)
				continue;
			c.kpf_pfns++;
			if (k == 0 || !mthpd_bit(scan.occupied, k - 1) ||
			    mthpd_pagemap_pfn(e[k]) != mthpd_pagemap_pfn(e[k - 1]) + 1) {
				unsigned int run = pfn_run(&scan, e, k);

				c.kpf_runs++;
				if (run >= c.long_run) {
					c.kpf_long_runs++;
					c.kpf_long_pfns += run;
				}
			}
		}
		c.kpf_ranges += needed;
	}
	*ret = c;
	return 0;
}
