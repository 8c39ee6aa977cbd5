/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-scan's children: the layouts of the three scenarios (which 2 MiB
 * ranges are written, and how), the child that lays one out (this program
 * exec'd again), and killing them on every way out.
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

static volatile pid_t children[MAX_CHILDREN];

void kill_children(void)
{
	for (int i = 0; i < MAX_CHILDREN; i++) {
		pid_t p = children[i];

		if (p > 0) {
			(void)kill(p, SIGKILL);
			(void)waitpid(p, NULL, 0);
			children[i] = 0;
		}
	}
}

void on_fatal_signal(int sig)
{
	/* kill() and waitpid() are async-signal-safe. */
	kill_children();
	(void)signal(sig, SIG_DFL);
	(void)raise(sig);
}

static void remember_child(pid_t p)
{
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (children[i] == 0) {
			children[i] = p;
			return;
		}
}

void reap_child(pid_t p)
{
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (children[i] == p) {
			(void)kill(p, SIGKILL);
			(void)waitpid(p, NULL, 0);
			children[i] = 0;
		}
}

enum range_fill range_fill(const struct layout *l, uint64_t i)
{
	switch (l->kind) {
	case SC_DENSE:
		return FILL_FULL;
	case SC_HALF:
		return FILL_HALF;
	case SC_SPARSE:
		break;
	}
	if (l->every)
		return i % l->every == 0 ? FILL_FULL : FILL_NONE;
	if (i % 64 == 0)
		return FILL_FULL;
	if (i % 7 == 0)
		return FILL_ONE;
	return FILL_NONE;
}

/* The page written in a FILL_ONE range: varies, so it is not always the first. */
static uint64_t one_page_index(uint64_t i)
{
	return (i * 37) % MTHPD_PMD_NR;
}

/* FILL_HALF: pages 0-15 written, 16-31 not, 32-47 written... */
static bool half_page_written(uint64_t p)
{
	return (p / 16) % 2 == 0;
}

uint64_t resident_pages(const struct layout *l)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < l->size / MTHPD_PMD_SIZE; i++) {
		switch (range_fill(l, i)) {
		case FILL_FULL:
			n += MTHPD_PMD_NR;
			break;
		case FILL_HALF:
			n += MTHPD_PMD_NR / 2;
			break;
		case FILL_ONE:
			n++;
			break;
		case FILL_NONE:
			break;
		}
	}
	return n;
}

double now_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/*
 * In the child, which is this program exec'd again (`bench-scan --child KIND
 * MIB PARENT`), so that its mm holds none of the bench's own memory: map,
 * align to 2 MiB, touch, write the base to stdout, wait to be killed.
 * KIND "idle" maps nothing: the tiny process for the CLI's fixed cost.
 * EVERY is the sparse layout's struct layout.every.
 */
_Noreturn void child_main(const char *kind, const char *mib, const char *every,
			 const char *parent)
{
	struct layout l = {.name = kind, .size = strtoull(mib, NULL, 10) * MIB,
			   .every = (unsigned int)strtoul(every, NULL, 10)};
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	uint64_t base = 0, head, tail;
	char *map;

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != (pid_t)strtol(parent, NULL, 10))
		_exit(1); /* the bench died before the prctl */
	if (strcmp(kind, "idle") == 0)
		goto report;
	l.kind = strcmp(kind, "dense") == 0  ? SC_DENSE
		 : strcmp(kind, "half") == 0 ? SC_HALF
					     : SC_SPARSE;
	if (l.kind == SC_SPARSE)
		flags |= MAP_NORESERVE;
	map = mmap(NULL, l.size + MTHPD_PMD_SIZE, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (map == MAP_FAILED)
		_exit(2);
	/* Trim to exactly [base, base + size): every 2 MiB range is whole. */
	base = ((uint64_t)(uintptr_t)map + MTHPD_PMD_SIZE - 1) & ~(MTHPD_PMD_SIZE - 1);
	head = base - (uint64_t)(uintptr_t)map;
	tail = MTHPD_PMD_SIZE - head;
	if (head)
		(void)munmap(map, head);
	if (tail)
		(void)munmap((char *)(uintptr_t)(base + l.size), tail);

	for (uint64_t i = 0; i < l.size / MTHPD_PMD_SIZE; i++) {
		volatile char *r = (volatile char *)(uintptr_t)(base + i * MTHPD_PMD_SIZE);

		switch (range_fill(&l, i)) {
		case FILL_FULL:
			for (uint64_t p = 0; p < MTHPD_PMD_NR; p++)
				r[p * MTHPD_PAGE_SIZE] = 1;
			break;
		case FILL_HALF:
			for (uint64_t p = 0; p < MTHPD_PMD_NR; p++)
				if (half_page_written(p))
					r[p * MTHPD_PAGE_SIZE] = 1;
			break;
		case FILL_ONE:
			r[one_page_index(i) * MTHPD_PAGE_SIZE] = 1;
			break;
		case FILL_NONE:
			break;
		}
	}
report:
	if (write(STDOUT_FILENO, &base, sizeof(base)) != (ssize_t)sizeof(base))
		_exit(3);
	(void)close(STDOUT_FILENO);
	for (;;)
		(void)pause();
}

/*
 * Starts a child of @kind ("dense", "half", "sparse" or "idle") over @size
 * bytes (sparse: with struct layout.every @every).  Returns its pid and its
 * base address once it has touched its memory, or -1.
 */
pid_t spawn_child(const char *kind, uint64_t size, unsigned int every, uint64_t *ret_base,
		  double *ret_touch_ms)
{
	char self[24], mib[24], ev[24];
	int p[2];
	double t0 = now_ms();
	pid_t pid;
	ssize_t n;

	(void)snprintf(self, sizeof(self), "%d", (int)getpid());
	(void)snprintf(mib, sizeof(mib), "%" PRIu64, size / MIB);
	(void)snprintf(ev, sizeof(ev), "%u", every);
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		(void)close(p[0]);
		(void)close(p[1]);
		return -1;
	}
	if (pid == 0) {
		/* dup2 leaves the copy without O_CLOEXEC: the child's stdout. */
		if (dup2(p[1], STDOUT_FILENO) < 0)
			_exit(126);
		execl("/proc/self/exe", "bench-scan", CHILD_ARG, kind, mib, ev, self, (char *)NULL);
		_exit(127);
	}
	remember_child(pid);
	(void)close(p[1]);
	do
		n = read(p[0], ret_base, sizeof(*ret_base));
	while (n < 0 && errno == EINTR);
	(void)close(p[0]);
	*ret_touch_ms = now_ms() - t0;
	if (n != (ssize_t)sizeof(*ret_base)) {
		reap_child(pid);
		return -1;
	}
	return pid;
}

/* kB value of @field in /proc/PID/smaps_rollup, or -1. */
long rollup_kb(pid_t pid, const char *field)
{
	char path[64], line[256];
	size_t flen = strlen(field);
	long v = -1;
	FILE *f;

	(void)snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, flen) == 0 && line[flen] == ':') {
			v = strtol(line + flen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}
