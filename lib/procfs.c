/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What /proc/PID/stat and /proc/PID/status say of a process: pure parsers
 * of their text (lines as Linux 6.18 prints them), and the one reader that
 * tells a process from a thread's id and a zombie.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "procfs.h"

int mthpd_procfs_pid_path(char *buf, size_t size, pid_t pid, const char *file)
{
	int n = snprintf(buf, size, "%d/%s", (int)pid, file);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* /proc/PID/status: "THP_enabled:\t1\n" (Linux 5.0+); 0 after PR_SET_THP_DISABLE. */
bool mthpd_status_parse_thp_disabled(const char *status)
{
	const char *p = strstr(status, "\nTHP_enabled:");

	if (!p)
		return false;
	p += strlen("\nTHP_enabled:");
	p += strspn(p, " \t");
	return *p == '0';
}

/* The "\nKEY:   N kB" line of a /proc text (@key with its newline and colon), in bytes. */
static int parse_kb_line(const char *text, const char *key, uint64_t *ret)
{
	const char *p = strstr(text, key);
	unsigned long long kb;
	char *end;

	if (!p)
		return -ENOENT;
	p += strlen(key);
	p += strspn(p, " \t");
	if (*p < '0' || *p > '9')
		return -EINVAL;
	errno = 0;
	kb = strtoull(p, &end, 10);
	if (errno || strncmp(end, " kB", 3) != 0 || kb > UINT64_MAX / 1024)
		return -EINVAL;
	*ret = (uint64_t)kb * 1024;
	return 0;
}

int mthpd_status_parse_rss_anon(const char *status, uint64_t *ret)
{
	return parse_kb_line(status, "\nRssAnon:", ret);
}

/*
 * /proc/PID/smaps_rollup:
 * "55d0b6a3e000-7ffd8f1f8000 ---p 00000000 00:00 0    [rollup]\nRss: ...
 *  Anonymous:         30876 kB\nKSM: ...\nAnonHugePages:     28672 kB\n..."
 */
int mthpd_rollup_parse(const char *rollup, uint64_t *ret_anon, uint64_t *ret_huge)
{
	uint64_t anon, huge;
	int r = parse_kb_line(rollup, "\nAnonymous:", &anon);

	if (r >= 0)
		r = parse_kb_line(rollup, "\nAnonHugePages:", &huge);
	if (r < 0)
		return r;
	*ret_anon = anon;
	*ret_huge = huge;
	return 0;
}

/* The number after "\nKEY:\t" in @status into @ret; -EINVAL if absent or bad. */
static int status_pid(const char *status, const char *key, pid_t *ret)
{
	const char *p = strstr(status, key);
	long v;
	char *end;

	if (!p)
		return -EINVAL;
	p += strlen(key);
	p += strspn(p, " \t");
	if (*p < '0' || *p > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(p, &end, 10);
	if (errno || (*end != '\n' && *end != '\0') || v > INT_MAX)
		return -EINVAL;
	*ret = (pid_t)v;
	return 0;
}

int mthpd_status_parse_ident(const char *status, struct mthpd_pid_ident *ret)
{
	struct mthpd_pid_ident id;
	const char *state = strstr(status, "\nState:");

	/* "State:\tZ (zombie)": one letter */
	if (!state)
		return -EINVAL;
	state += strlen("\nState:");
	state += strspn(state, " \t");
	if (*state < 'A' || *state > 'Z')
		return -EINVAL;
	id.state = *state;
	if (status_pid(status, "\nTgid:", &id.tgid) < 0 || status_pid(status, "\nPPid:", &id.ppid) < 0)
		return -EINVAL;
	*ret = id;
	return 0;
}

int mthpd_procfs_read_status(struct mthpd_kif *kif, pid_t pid, char *buf, size_t size)
{
	char path[64];
	int r;

	if (pid <= 0)
		return -ESRCH;
	r = mthpd_procfs_pid_path(path, sizeof(path), pid, "status");
	if (r >= 0)
		r = mthpd_kif_read_proc(kif, path, buf, size);
	if (r == -ENOENT)
		return -ESRCH;
	/* cut: not terminated by the reader, but the first lines are there */
	if (r == -EFBIG)
		buf[size - 1] = '\0';
	return r;
}

int mthpd_pid_identify(struct mthpd_kif *kif, pid_t pid, struct mthpd_pid_ident *ret)
{
	char status[4096];
	int r = mthpd_procfs_read_status(kif, pid, status, sizeof(status));

	/* -EFBIG: State, Tgid and PPid are among its first lines */
	if (r < 0 && r != -EFBIG)
		return r;
	return mthpd_status_parse_ident(status, ret);
}

/* Fields 3 to 12 of a /proc/PID/stat line into @v (the state letter as 0). */
static int stat_fields(const char *line, uint64_t v[10])
{
	const char *p = strrchr(line, ')');

	/* after ')': state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt */
	if (!p)
		return -EINVAL;
	p++;
	for (unsigned int i = 0; i < 10; i++) {
		char *end;

		p += strspn(p, " ");
		if (i == 0) { /* the state letter */
			if (!*p || *p == ' ')
				return -EINVAL;
			p++;
			v[i] = 0;
			continue;
		}
		if (*p < '0' || *p > '9') {
			if (*p != '-' || i > 6) /* tty_nr and tpgid may be negative */
				return -EINVAL;
		}
		errno = 0;
		v[i] = strtoull(p, &end, 10);
		if (errno || end == p || (*end != ' ' && *end != '\n' && *end))
			return -EINVAL;
		p = end;
	}
	return 0;
}

int mthpd_stat_parse_faults(const char *line, uint64_t *ret)
{
	uint64_t v[10];
	int r = stat_fields(line, v);

	if (r < 0)
		return r;
	*ret = v[7] + v[9];
	return 0;
}

/* include/linux/sched.h: PF_KTHREAD, in the flags field of /proc/PID/stat */
#define PF_KTHREAD 0x00200000ULL

int mthpd_stat_parse_kthread(const char *line)
{
	uint64_t v[10];
	int r = stat_fields(line, v);

	return r < 0 ? r : !!(v[6] & PF_KTHREAD);
}

int mthpd_stat_parse_start(const char *line, char *ret_comm, size_t comm_size,
			   uint64_t *ret_start)
{
	const char *open = strchr(line, '('), *close = strrchr(line, ')'), *p;
	uint64_t v = 0;
	size_t len;

	if (!open || !close || close < open || comm_size == 0)
		return -EINVAL;
	/* fields 3 (state) to 21 after ')', each one word; field 22 is the start time */
	p = close + 1;
	for (unsigned int field = 3; field <= 22; field++) {
		p += strspn(p, " ");
		if (!*p || *p == '\n')
			return -EINVAL;
		if (field < 22) {
			p += strcspn(p, " \n");
			continue;
		}
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (v > (UINT64_MAX - 9) / 10)
				return -EINVAL;
			v = v * 10 + (uint64_t)(*p - '0');
		}
		if (*p && *p != ' ' && *p != '\n')
			return -EINVAL;
	}
	len = (size_t)(close - open - 1);
	if (len >= comm_size)
		len = comm_size - 1;
	memcpy(ret_comm, open + 1, len);
	ret_comm[len] = '\0';
	*ret_start = v;
	return 0;
}

const char *mthpd_thp_disabled_hint(const char *comm)
{
	/*
	 * The services known to turn THP off for themselves, by their comm.
	 * Redis: disable-thp (default yes) calls PR_SET_THP_DISABLE when
	 * /sys/kernel/mm/transparent_hugepage/enabled is "always".
	 */
	if (strncmp(comm, "redis-server", 12) == 0 || strncmp(comm, "redis-sentinel", 14) == 0)
		return "Redis turns THP off for itself when 'disable-thp' is yes (its default) and "
		       "THP 'enabled' is 'always': set 'disable-thp no' in redis.conf and restart it";
	if (strcmp(comm, "mariadbd") == 0 || strcmp(comm, "mysqld") == 0)
		return "MariaDB (10.11 in Debian 12) turns THP off for itself once its engines are "
		       "up (sql/mysqld.cc, MDEV-33279), whatever its settings: mthpd cannot "
		       "collapse it. Its way to 2 MiB pages is large_pages=ON (hugetlbfs: reserve "
		       "vm.nr_hugepages, set innodb_buffer_pool_size_max to the pool's size); a "
		       "MariaDB that asked for PR_THP_DISABLE_EXCEPT_ADVISED instead (Linux 6.18) "
		       "could be collapsed. See mthpd's README, 'Services that turn THP off'";
	return "the process, or whatever started it, called prctl(PR_SET_THP_DISABLE), which "
	       "fork and exec inherit: look for a THP setting of the service and of its launcher";
}

int mthpd_process_age_usec(uint64_t start_ticks, uint64_t *ret)
{
	long tck = sysconf(_SC_CLK_TCK);
	struct timespec ts;
	uint64_t start, now;

	if (!start_ticks || tck <= 0)
		return -ENODATA;
	if (clock_gettime(CLOCK_BOOTTIME, &ts) < 0)
		return -errno;
	/* both after boot: stat's field 22 is in CLOCK_BOOTTIME ticks */
	start = start_ticks * 1000000ULL / (uint64_t)tck;
	now = (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000U;
	*ret = now > start ? now - start : 0;
	return 0;
}
