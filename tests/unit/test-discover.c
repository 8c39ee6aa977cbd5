/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * discover: the cgroup2 mount from mountinfo, a cgroup's unit from its
 * path, and the walk over a synthetic cgroup tree (directories with
 * cgroup.procs files): the filter, and the window that lets more processes
 * than max_pids_per_pass take turns.  As root on a cgroup2 host, also a
 * real cgroup.procs longer than one page, read through the cache.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "discover.h"
#include "test.h"
#include "util.h"

static void test_mountinfo(void)
{
	char mnt[64];

	test_case = "mountinfo: hybrid host";
	TEST_ASSERT_EQ(mthpd_mountinfo_cgroup2(
			       "25 1 0:23 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
			       "35 25 0:30 / /sys/fs/cgroup/unified rw,nosuid,nodev shared:10 - cgroup2 "
			       "cgroup2 rw,nsdelegate\n",
			       mnt, sizeof(mnt)),
		       0);
	TEST_ASSERT_STREQ(mnt, "/sys/fs/cgroup/unified");
	test_case = "mountinfo: no cgroup2";
	TEST_ASSERT_EQ(mthpd_mountinfo_cgroup2("25 1 0:23 / /sys/fs/cgroup ro - tmpfs tmpfs ro\n", mnt,
					       sizeof(mnt)),
		       -ENOENT);
	test_case = NULL;
}

static void test_unit(void)
{
	static const struct {
		const char *path, *unit;
	} t[] = {
		{"/system.slice/redis-server.service", "redis-server.service"},
		{"/system.slice/redis-server.service/worker", "redis-server.service"},
		{"/user.slice/user-1000.slice/session-2.scope", "session-2.scope"},
		{"/system.slice", NULL},
		{"/", NULL},
		{"/mthpd-test-a", NULL},
	};
	char unit[64];

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		test_case = t[i].path;
		if (t[i].unit) {
			TEST_ASSERT_EQ(mthpd_cgroup_unit(t[i].path, unit, sizeof(unit)), 0);
			TEST_ASSERT_STREQ(unit, t[i].unit);
		} else {
			TEST_ASSERT_EQ(mthpd_cgroup_unit(t[i].path, unit, sizeof(unit)), -ENOENT);
		}
	}
	test_case = NULL;
}

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	(void)snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "we");
	TEST_ASSERT(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A synthetic cgroup tree in a new root: the root, a.slice and b.slice, with these pids. */
static void tree_make(const char *procs, const char *a, const char *b)
{
	char path[128];

	(void)snprintf(root, sizeof(root), "/tmp/mthpd-discover-XXXXXX");
	TEST_ASSERT(mkdtemp(root) != NULL);
	(void)snprintf(path, sizeof(path), "%s/a.slice", root);
	TEST_ASSERT_EQ(mkdir(path, 0755), 0);
	(void)snprintf(path, sizeof(path), "%s/b.slice", root);
	TEST_ASSERT_EQ(mkdir(path, 0755), 0);
	put("cgroup.procs", procs);
	put("a.slice/cgroup.procs", a);
	put("b.slice/cgroup.procs", b);
}

static bool not_b(void *userdata _unused_, const char *cgroup, const char *unit _unused_)
{
	return strcmp(cgroup, "/b.slice") != 0;
}

/* The pids in @p[0..n), as a bitmask of 1..31. */
static unsigned long mask(const struct mthpd_proc *p, size_t n)
{
	unsigned long m = 0;

	for (size_t i = 0; i < n; i++)
		m |= 1UL << p[i].pid;
	return m;
}

static void test_walk(void)
{
	struct mthpd_proc procs[8];
	size_t stored = 0;
	char cmd[128];

	test_case = "walk a synthetic tree";
	tree_make("1\n2\n", "3\n4\n5\n6\n", "7\n8\n9\n10\n");

	TEST_ASSERT_EQ(mthpd_discover(root, NULL, NULL, 0, 0, procs, 8, &stored), 10);
	TEST_ASSERT_EQ(stored, 8);
	TEST_ASSERT_EQ(mthpd_discover(root, not_b, NULL, 0, 0, procs, 8, &stored), 6);
	TEST_ASSERT_EQ(stored, 6);
	TEST_ASSERT_EQ(mask(procs, stored), 0x7eUL); /* 1..6: b.slice's left unread */
	TEST_ASSERT_STREQ(procs[2].cgroup, "/a.slice");

	/*
	 * 10 processes, 4 at a time: windows from 0, 4 and 8 (wrapping) in
	 * walk order (readdir's, so compared as sets): the first two are
	 * disjoint, the three cover all 10, the third wraps onto the first.
	 */
	test_case = "more processes than the cap take turns";
	{
		unsigned long w[3];

		for (unsigned int k = 0; k < 3; k++) {
			TEST_ASSERT_EQ(mthpd_discover(root, NULL, NULL, 4 * k, 10, procs, 4, &stored), 10);
			TEST_ASSERT_EQ(stored, 4);
			w[k] = mask(procs, stored);
			TEST_ASSERT_EQ(__builtin_popcountl(w[k]), 4);
		}
		TEST_ASSERT_EQ(w[0] & w[1], 0);
		TEST_ASSERT_EQ(w[0] | w[1] | w[2], 0x7feUL); /* 1..10 */
		TEST_ASSERT_EQ(__builtin_popcountl(w[2] & w[0]), 2);
	}

	(void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	(void)!system(cmd);
	test_case = NULL;
}

/*
 * The cache (issue 28): the tree is walked once, then only the wanted
 * cgroups' cgroup.procs are read, and a new pid in one of them is found
 * without a walk; a cgroup made or removed anywhere makes the next call
 * walk; a cleared valid (a reload) too.  Each call's pids are what
 * mthpd_discover() finds in the same tree.
 */
static void test_cache(void)
{
	struct mthpd_discover_cache c = {.inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)};
	struct mthpd_proc procs[16], plain[16];
	size_t stored = 0, plain_stored = 0;
	char path[128];

#define SAME_AS_PLAIN()                                                                            \
	do {                                                                                       \
		TEST_ASSERT_EQ(mthpd_discover(root, not_b, NULL, 0, 0, plain, 16, &plain_stored),  \
			       (int)plain_stored);                                                 \
		TEST_ASSERT_EQ(stored, plain_stored);                                              \
		TEST_ASSERT_EQ(mask(procs, stored), mask(plain, plain_stored));                    \
	} while (0)

	test_case = "cache: the first call walks";
	TEST_ASSERT(c.inotify_fd >= 0);
	tree_make("1\n", "3\n4\n", "7\n");
	TEST_ASSERT_EQ(mthpd_discover_cached(&c, root, not_b, NULL, 0, 0, procs, 16, &stored), 3);
	TEST_ASSERT_EQ(mask(procs, stored), 0x1aUL); /* 1, 3, 4 */
	TEST_ASSERT_EQ(c.walks, 1);
	TEST_ASSERT_EQ(c.n, 2); /* the root and a.slice: b.slice is not wanted */
	TEST_ASSERT_EQ(c.open, 2); /* their cgroup.procs kept open */
	SAME_AS_PLAIN();

	test_case = "cache: a new pid in a wanted cgroup, without a walk";
	put("a.slice/cgroup.procs", "3\n4\n5\n");
	put("b.slice/cgroup.procs", "7\n8\n");
	TEST_ASSERT_EQ(mthpd_discover_cached(&c, root, not_b, NULL, 0, 0, procs, 16, &stored), 4);
	TEST_ASSERT_EQ(c.walks, 1);
	TEST_ASSERT_EQ(c.reuses, 1);
	SAME_AS_PLAIN();

	test_case = "cache: a cgroup made below a wanted one is walked to";
	(void)snprintf(path, sizeof(path), "%s/a.slice/x.service", root);
	TEST_ASSERT_EQ(mkdir(path, 0755), 0);
	put("a.slice/x.service/cgroup.procs", "9\n");
	TEST_ASSERT_EQ(mthpd_discover_cached(&c, root, not_b, NULL, 0, 0, procs, 16, &stored), 5);
	TEST_ASSERT_EQ(c.walks, 2);
	TEST_ASSERT(mask(procs, stored) & (1UL << 9));
	TEST_ASSERT_STREQ(procs[stored - 1].unit, "x.service");
	SAME_AS_PLAIN();

	test_case = "cache: a cgroup made below an unwanted one";
	(void)snprintf(path, sizeof(path), "%s/b.slice/y.service", root);
	TEST_ASSERT_EQ(mkdir(path, 0755), 0);
	put("b.slice/y.service/cgroup.procs", "11\n");
	TEST_ASSERT_EQ(mthpd_discover_cached(&c, root, not_b, NULL, 0, 0, procs, 16, &stored), 6);
	TEST_ASSERT_EQ(c.walks, 3);
	TEST_ASSERT(mask(procs, stored) & (1UL << 11));
	SAME_AS_PLAIN();

	test_case = "cache: a cgroup removed";
	(void)snprintf(path, sizeof(path), "%s/a.slice/x.service/cgroup.procs", root);
	TEST_ASSERT_EQ(unlink(path), 0);
	(void)snprintf(path, sizeof(path), "%s/a.slice/x.service", root);
	TEST_ASSERT_EQ(rmdir(path), 0);
	TEST_ASSERT_EQ(mthpd_discover_cached(&c, root, not_b, NULL, 0, 0, procs, 16, &stored), 5);
	TEST_ASSERT_EQ(c.walks, 4);
	SAME_AS_PLAIN();
	TEST_ASSERT_EQ(mthpd_discover_cached(&c, root, not_b, NULL, 0, 0, procs, 16, &stored), 5);
	TEST_ASSERT_EQ(c.walks, 4);

	test_case = "cache: cleared by the caller (a reload)";
	c.valid = false;
	TEST_ASSERT_EQ(mthpd_discover_cached(&c, root, NULL, NULL, 0, 0, procs, 16, &stored), 7);
	TEST_ASSERT_EQ(c.walks, 5);

	test_case = "cache: without an inotify fd, every call walks";
	{
		struct mthpd_discover_cache none = {.inotify_fd = -1};

		TEST_ASSERT_EQ(mthpd_discover_cached(&none, root, not_b, NULL, 0, 0, procs, 16, &stored), 5);
		TEST_ASSERT_EQ(none.walks + none.reuses, 0);
		SAME_AS_PLAIN();
	}
#undef SAME_AS_PLAIN
	mthpd_discover_cache_free(&c);
	(void)close(c.inotify_fd);
	(void)snprintf(path, sizeof(path), "rm -rf '%s'", root);
	(void)!system(path);
	test_case = NULL;
}

/*
 * The files the cache keeps open: at most MTHPD_DISCOVER_MAX_FDS, the
 * cgroups past them read with an open each time; a file longer than one
 * read's buffer is read to its end, through the open file too.
 */
static void test_cache_fds(void)
{
	enum { CGROUPS = MTHPD_DISCOVER_MAX_FDS + 44, BIG = 1500 };
	struct mthpd_discover_cache c = {.inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)};
	struct mthpd_proc *procs = calloc(CGROUPS + 2 * BIG, sizeof(*procs));
	size_t stored = 0;
	char path[128], text[BIG * 8 + 1];

	test_case = "cache fds: capped, the rest opened each time";
	TEST_ASSERT(procs != NULL && c.inotify_fd >= 0);
	if (!procs)
		return;
	tree_make("", "", "");
	for (int i = 0; i < CGROUPS; i++) {
		(void)snprintf(path, sizeof(path), "%s/a.slice/c%d", root, i);
		TEST_ASSERT_EQ(mkdir(path, 0755), 0);
		(void)snprintf(path, sizeof(path), "a.slice/c%d/cgroup.procs", i);
		(void)snprintf(text, sizeof(text), "%d\n", 1000 + i);
		put(path, text);
	}
	TEST_ASSERT_EQ(mthpd_discover_cached(&c, root, NULL, NULL, 0, 0, procs, CGROUPS + 2 * BIG,
					     &stored), CGROUPS);
	TEST_ASSERT_EQ(c.n, CGROUPS + 3); /* and the root, a.slice, b.slice */
	TEST_ASSERT_EQ(c.open, MTHPD_DISCOVER_MAX_FDS);

	test_case = "cache fds: a long file, kept open and not";
	text[0] = '\0';
	for (int i = 0; i < BIG; i++)
		(void)snprintf(text + strlen(text), sizeof(text) - strlen(text), "%d\n", 100000 + i);
	TEST_ASSERT(strlen(text) > 4096);
	put("cgroup.procs", text); /* walked first: open */
	(void)snprintf(path, sizeof(path), "a.slice/c%d/cgroup.procs", CGROUPS - 1); /* past the cap */
	put(path, text);
	TEST_ASSERT_EQ(mthpd_discover_cached(&c, root, NULL, NULL, 0, 0, procs, CGROUPS + 2 * BIG,
					     &stored), CGROUPS - 1 + 2 * BIG);
	TEST_ASSERT_EQ(c.walks, 1);
	TEST_ASSERT_EQ(stored, CGROUPS - 1 + 2 * BIG);
	mthpd_discover_cache_free(&c);
	TEST_ASSERT_EQ(c.open, 0);
	(void)close(c.inotify_fd);
	free(procs);
	(void)snprintf(path, sizeof(path), "rm -rf '%s'", root);
	(void)!system(path);
	test_case = NULL;
}

static char live_cgroup[128];

static bool only_live(void *userdata _unused_, const char *cgroup, const char *unit _unused_)
{
	return strcmp(cgroup, live_cgroup) == 0;
}

/*
 * A real cgroup.procs of 1,000 processes is a seq_file that hands out one
 * page of whole lines per read (4092 bytes), not its end: the walk and the
 * cache's pread of the file it keeps open find all of them, twice.
 */
static void test_live_long_procs(void)
{
	enum { KIDS = 1000 };
	struct mthpd_discover_cache c = {.inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)};
	struct mthpd_proc *procs = calloc(KIDS + 16, sizeof(*procs));
	char mount[256], dir[512], file[600], *text = NULL;
	size_t stored = 0, size = 0;
	pid_t kids[KIDS];
	FILE *f;
	int n = 0;

	f = fopen("/proc/self/mountinfo", "re");
	if (f) {
		(void)!getdelim(&text, &size, '\0', f);
		fclose(f);
	}
	if (geteuid() != 0 || !text || mthpd_mountinfo_cgroup2(text, mount, sizeof(mount)) < 0 || !procs) {
		printf("SKIP: live cgroup.procs: not root on a cgroup2 host\n");
		free(text);
		free(procs);
		(void)close(c.inotify_fd);
		return;
	}
	free(text);
	test_case = "live: a cgroup.procs longer than a page";
	(void)snprintf(live_cgroup, sizeof(live_cgroup), "/mthpd-test-discover-%d", (int)getpid());
	(void)snprintf(dir, sizeof(dir), "%s%s", mount, live_cgroup);
	(void)snprintf(file, sizeof(file), "%s/cgroup.procs", dir);
	TEST_ASSERT_EQ(mkdir(dir, 0755), 0);
	for (; n < KIDS; n++) {
		kids[n] = fork();
		if (kids[n] == 0) {
			(void)pause();
			_exit(0);
		}
		if (kids[n] < 0)
			break;
		f = fopen(file, "we");
		if (f) {
			fprintf(f, "%d\n", (int)kids[n]);
			fclose(f);
		}
	}
	TEST_ASSERT_EQ(n, KIDS);
	TEST_ASSERT_EQ(mthpd_discover_cached(&c, mount, only_live, NULL, 0, 0, procs, KIDS + 16, &stored),
		       n);
	TEST_ASSERT_EQ(c.walks, 1);
	TEST_ASSERT_EQ(mthpd_discover_cached(&c, mount, only_live, NULL, 0, 0, procs, KIDS + 16, &stored),
		       n);
	TEST_ASSERT_EQ(c.reuses, 1);
	TEST_ASSERT_EQ(stored, (size_t)n);
	for (int i = 0; i < n; i++)
		(void)kill(kids[i], SIGKILL);
	for (int i = 0; i < n; i++)
		(void)waitpid(kids[i], NULL, 0);
	mthpd_discover_cache_free(&c);
	(void)close(c.inotify_fd);
	for (int i = 0; i < 50 && rmdir(dir) < 0 && errno == EBUSY; i++)
		(void)usleep(20000);
	free(procs);
	test_case = NULL;
}

int main(void)
{
	test_mountinfo();
	test_unit();
	test_walk();
	test_cache();
	test_cache_fds();
	test_live_long_procs();
	return test_finish();
}
