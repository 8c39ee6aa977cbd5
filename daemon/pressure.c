/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Memory pressure: PSI "some avg10" of the host (/proc/pressure/memory)
 * and of a process's own cgroup (memory.pressure).  Above psi_threshold
 * the daemon plans but collapses nothing, and says so when it starts and
 * stops holding back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "util.h"

/*
 * PSI "some avg10" of a pressure file, in hundredths of a percent:
 * "some avg10=1.23 avg60=0.50 avg300=0.10 total=123456\n".  -errno if unreadable.
 */
static int read_psi(int dirfd_or_kif, const struct mthpd_kif *kif, const char *path)
{
	char buf[256];
	unsigned int whole, frac;
	const char *p;
	int r;

	if (kif) {
		r = mthpd_kif_read_proc(kif, path, buf, sizeof(buf));
	} else {
		_cleanup_close_ int fd = openat(dirfd_or_kif, path, O_RDONLY | O_CLOEXEC);
		ssize_t n;

		if (fd < 0)
			return -errno;
		n = read(fd, buf, sizeof(buf) - 1);
		if (n < 0)
			return -errno;
		buf[n] = '\0';
		r = (int)n;
	}
	if (r < 0)
		return r;
	p = strstr(buf, "some avg10=");
	if (!p || sscanf(p, "some avg10=%u.%2u", &whole, &frac) != 2)
		return -EINVAL;
	return (int)(whole * 100 + frac);
}

static bool over_threshold(const struct daemon *d, int psi)
{
	return d->cfg->daemon.psi_threshold && psi >= 0 &&
	       (unsigned int)psi > d->cfg->daemon.psi_threshold;
}

/* The memory pressure of the process's own cgroup, where the cgroup2 hierarchy has it. */
bool pressure_cgroup(const struct daemon *d, const struct mthpd_proc *proc)
{
	char path[700];

	if (!d->cgroup_mount[0] || !d->cfg->daemon.psi_threshold || d->cgroup_fd < 0)
		return false;
	(void)snprintf(path, sizeof(path), "%s/memory.pressure",
		       strcmp(proc->cgroup, "/") == 0 ? "." : proc->cgroup + 1);
	return over_threshold(d, read_psi(d->cgroup_fd, NULL, path));
}

/* Memory pressure, system-wide: log when mthpd starts and stops holding back. */
void pressure_check(struct daemon *d)
{
	int psi = read_psi(-1, &d->kif, "pressure/memory");
	bool over = over_threshold(d, psi);

	if (over && !d->backing_off)
		log_notice("memory pressure some avg10=%d.%02d%% is above psi_threshold %u.%02u%%: "
			   "planning only, collapsing nothing until it falls",
			   psi / 100, psi % 100, d->cfg->daemon.psi_threshold / 100,
			   d->cfg->daemon.psi_threshold % 100);
	else if (!over && d->backing_off)
		log_notice("memory pressure some avg10=%d.%02d%% is below psi_threshold again: "
			   "collapsing resumes", psi / 100, psi % 100);
	d->backing_off = over;
}

/*
 * Between passes, once a second while memory pressure holds collapses
 * back: has it ended?  Then a pass starts at once, and the processes held
 * back go first (visit(): p->held), not scan_sleep_millisecs later.
 */
bool pressure_ended(struct daemon *d)
{
	return d->backing_off && !over_threshold(d, read_psi(-1, &d->kif, "pressure/memory"));
}

/*
 * pace=auto (lib/pace.h): how long the service waited, as the "some
 * total=" (us) of its cgroup's cpu.pressure and memory.pressure, or of
 * the host's where its cgroup has none (the root cgroup, no cgroup2), or
 * its main thread's wait for the CPU where the kernel has no PSI.
 */
static bool some_total(const char *buf, uint64_t *total)
{
	const char *p = strncmp(buf, "some ", 5) == 0 ? strstr(buf, " total=") : NULL;
	const char *eol = strchr(buf, '\n');
	unsigned long long v;

	if (!p || (eol && p > eol) || sscanf(p, " total=%llu", &v) != 1)
		return false;
	*total = v;
	return true;
}

void pressure_stall_open(const struct daemon *d, const struct mthpd_proc *proc, int fd[2])
{
	static const char *const file[2] = {"cpu.pressure", "memory.pressure"};
	char path[700];

	for (size_t i = 0; i < 2; i++) {
		fd[i] = -1;
		if (!d->cgroup_mount[0] || d->cgroup_fd < 0 || strcmp(proc->cgroup, "/") == 0)
			continue;
		(void)snprintf(path, sizeof(path), "%s/%s", proc->cgroup + 1, file[i]);
		fd[i] = openat(d->cgroup_fd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	}
}

void pressure_stall_close(int fd[2])
{
	for (size_t i = 0; i < 2; i++) {
		if (fd[i] >= 0)
			(void)close(fd[i]);
		fd[i] = -1;
	}
}

/*
 * Without PSI (a kernel built with CONFIG_PSI_DEFAULT_DISABLED, as
 * Debian's, booted without psi=1): the time the process's main thread
 * waited on a run queue, /proc/PID/schedstat's second field (ns).
 */
static bool run_delay(const struct daemon *d, pid_t pid, uint64_t *total)
{
	char path[32], buf[128];
	unsigned long long run, wait;

	(void)snprintf(path, sizeof(path), "%d/schedstat", (int)pid);
	if (mthpd_kif_read_proc(&d->kif, path, buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%llu %llu", &run, &wait) != 2)
		return false;
	*total = wait / 1000;
	return true;
}

bool pressure_stall_read(const struct daemon *d, const int fd[2], pid_t pid, uint64_t *total)
{
	static const char *const host[2] = {"pressure/cpu", "pressure/memory"};
	char buf[256];
	uint64_t sum = 0, v;

	for (size_t i = 0; i < 2; i++) {
		ssize_t n = -1;

		if (fd[i] >= 0) {
			/* a read at offset 0 makes the kernel count again up to now */
			n = pread(fd[i], buf, sizeof(buf) - 1, 0);
			if (n >= 0)
				buf[n] = '\0';
		} else {
			n = mthpd_kif_read_proc(&d->kif, host[i], buf, sizeof(buf));
		}
		if (n < 0 || !some_total(buf, &v))
			return run_delay(d, pid, total);
		sum += v;
	}
	*total = sum;
	return true;
}
