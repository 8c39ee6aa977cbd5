/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-scan's measured operations that stand alone: the floor (pagemap of
 * the resident ranges), the whole mapping's pagemap, one in-process plan as
 * `mthpd plan` does it, and the CLI itself.
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

static int pread_all(int fd, void *buf, size_t len, off_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = pread(fd, (char *)buf + got, len - got, off + (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

int open_pagemap(pid_t pid)
{
	char path[64];

	(void)snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* The floor: 512 entries for each populated 2 MiB range, nothing else. */
int floor_read(int fd, const struct layout *l, uint64_t base, uint64_t *sink)
{
	uint64_t buf[MTHPD_PMD_NR];

	for (uint64_t i = 0; i < l->size / MTHPD_PMD_SIZE; i++) {
		uint64_t addr = base + i * MTHPD_PMD_SIZE;

		if (range_fill(l, i) == FILL_NONE)
			continue;
		if (pread_all(fd, buf, sizeof(buf), (off_t)(addr / MTHPD_PAGE_SIZE * 8)) < 0)
			return -1;
		*sink += buf[0] ^ buf[MTHPD_PMD_NR - 1];
	}
	return 0;
}

/* The whole mapping's pagemap in 4 KiB reads, as if there were no PAGEMAP_SCAN. */
int full_read(int fd, const struct layout *l, uint64_t base, uint64_t *sink)
{
	uint64_t buf[MTHPD_PMD_NR];

	for (uint64_t addr = base; addr < base + l->size; addr += MTHPD_PMD_SIZE) {
		if (pread_all(fd, buf, sizeof(buf), (off_t)(addr / MTHPD_PAGE_SIZE * 8)) < 0)
			return -1;
		*sink += buf[0] ^ buf[MTHPD_PMD_NR - 1];
	}
	return 0;
}

static int null_sink(void *userdata, const struct mthpd_target *t,
		     const struct mthpd_range_scan *scan, const struct mthpd_range_plan *plan)
{
	(void)userdata;
	(void)t;
	(void)scan;
	(void)plan;
	return 0;
}

/*
 * One in-process plan, as `mthpd plan --pid PID` does it minus the output
 * (daemon/main.c run(): target open, then a pidfd of the target for the
 * refusal probe).  Returns 0 or -errno.
 */
int plan_once(pid_t pid, const struct plan_cfg *c, struct plan_run *ret)
{
	struct mthpd_kif kif = {.proc_fd = -1, .sys_fd = -1};
	struct mthpd_features features;
	struct mthpd_knobs knobs;
	struct mthpd_target t;
	const char *failed = NULL;
	double t0, t1 = 0, t2 = 0;
	int kpf = -1, r;

	t0 = now_ms();
	r = mthpd_kif_linux_init(NULL, NULL, &kif, NULL);
	if (r < 0)
		return r;
	r = mthpd_knobs_read_sysfs(&kif, 7, &knobs, &failed);
	if (r < 0)
		goto out_kif;
	knobs.orders = c->orders;
	if (c->max_ptes_none >= 0)
		knobs.max_ptes_none = (unsigned int)c->max_ptes_none;
	r = mthpd_target_open(&kif, pid, false, &t);
	if (r < 0)
		goto out_kif;
	if (c->pidfd) {
		int fd = kif.ops->pidfd_open(&kif, pid);

		t.pidfd = fd >= 0 ? fd : -1;
	}
	ret->had_pidfd = t.pidfd >= 0;
	r = mthpd_features_probe(&kif, &features);
	if (r < 0)
		goto out_target;
	if (c->fallback) {
		features.pagemap_scan = false;
		features.procmap_query = false;
	}
	kpf = kif.ops->open_proc(&kif, "kpageflags", O_RDONLY);
	if (kpf < 0) {
		r = kpf;
		goto out_target;
	}

	struct mthpd_pass_opts o = {
		.knobs = &knobs,
		.features = &features,
		.kpageflags_fd = kpf,
		.collapse = false,
	};
	t1 = now_ms();
	r = mthpd_target_pass(&kif, &t, &o, null_sink, NULL, &ret->st);
	t2 = now_ms();
	(void)close(kpf);
out_target:
	mthpd_target_close(&t);
out_kif:
	mthpd_kif_done(&kif);
	if (r < 0)
		return r;
	ret->pass_ms = t2 - t1;
	ret->total_ms = now_ms() - t0;
	return 0;
}

/*
 * `mthpd plan --pid PID --json [--sizes S] [--max-ptes-none N] > /dev/null`,
 * fork to wait.  Returns the exit status.
 */
int cli_once(const char *mthpd, pid_t pid, const struct layout *l, const char *disable,
		    double *ret_ms)
{
	char pidbuf[16];
	const char *argv[12];
	double t0 = now_ms();
	unsigned int n = 0;
	pid_t c;
	int status;

	(void)snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	argv[n++] = mthpd;
	argv[n++] = "plan";
	argv[n++] = "--pid";
	argv[n++] = pidbuf;
	argv[n++] = "--json";
	if (l->cli_sizes) {
		argv[n++] = "--sizes";
		argv[n++] = l->cli_sizes;
	}
	if (l->cli_none) {
		argv[n++] = "--max-ptes-none";
		argv[n++] = l->cli_none;
	}
	argv[n] = NULL;
	fflush(NULL);
	c = fork();
	if (c < 0)
		return -1;
	if (c == 0) {
		int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(126);
		if (disable)
			(void)setenv("MTHPD_DISABLE", disable, 1);
		else
			(void)unsetenv("MTHPD_DISABLE");
		/* execv's argv is char *const[]; nothing writes through it. */
		execv(mthpd, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	while (waitpid(c, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	*ret_ms = now_ms() - t0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
