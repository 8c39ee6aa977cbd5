/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Configuration files: defaults, every kind of bad file with its exact
 * one-line message (file:line), and which policy wins for a process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "pace.h"
#include "test.h"
#include "util.h"

static const struct mthpd_knobs defaults = {.max_ptes_none = 511, .max_ptes_swap = 64,
					    .max_ptes_shared = 256};

static char dir[64];

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	(void)snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	TEST_ASSERT(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

static void fresh_dir(void)
{
	char cmd[128], pd[96];

	if (dir[0]) {
		(void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		(void)!system(cmd);
	}
	(void)snprintf(dir, sizeof(dir), "/tmp/mthpd-config-XXXXXX");
	TEST_ASSERT(mkdtemp(dir) != NULL);
	(void)snprintf(pd, sizeof(pd), "%s/policy.d", dir);
	TEST_ASSERT_EQ(mkdir(pd, 0700), 0);
}

/* Loads dir and expects failure with exactly "<dir>/<msg>". */
static void expect_error(const char *name, const char *msg)
{
	struct mthpd_config *c = NULL;
	char err[512], want[512];

	test_case = name;
	TEST_ASSERT_EQ(mthpd_config_load(dir, &defaults, &c, err, sizeof(err)), -EINVAL);
	TEST_ASSERT(c == NULL);
	(void)snprintf(want, sizeof(want), "%s/%s", dir, msg);
	TEST_ASSERT_STREQ(err, want);
	mthpd_config_free(c);
}

static const struct {
	const char *name, *file, *text, *msg;
} bad[] = {
	{"unknown key", "mthpd.conf", "[Daemon]\nscan_sleep_millisecs=100\nfrobnicate=1\n",
	 "mthpd.conf:3: unknown key 'frobnicate' in [Daemon]"},
	/* a UTF-8 byte order mark is skipped, as systemd does: the lines count as before */
	{"unknown key after a BOM", "mthpd.conf", "\xef\xbb\xbf[Daemon]\nfrobnicate=1\n",
	 "mthpd.conf:2: unknown key 'frobnicate' in [Daemon]"},
	{"unknown section", "mthpd.conf", "[Deamon]\nscan_sleep_millisecs=100\n",
	 "mthpd.conf:1: unknown section [Deamon] (mthpd.conf has [Daemon])"},
	{"bad millis", "mthpd.conf", "[Daemon]\nscan_sleep_millisecs=soon\n",
	 "mthpd.conf:2: scan_sleep_millisecs=: 'soon' is not a number of milliseconds from 10 to 86400000"},
	{"bad bool", "mthpd.conf", "[Daemon]\n\n; a comment\ndry_run=maybe\n",
	 "mthpd.conf:4: dry_run=: 'maybe' is not a boolean (yes or no)"},
	{"bad percent", "mthpd.conf", "[Daemon]\npsi_threshold=101\n",
	 "mthpd.conf:2: psi_threshold=: '101' is not a percentage from 0 to 100 (0 turns it off)"},
	{"bad prefault", "mthpd.conf", "[Daemon]\nprefault=sometimes\n",
	 "mthpd.conf:2: prefault=: 'sometimes' is not auto, yes or no"},
	{"relative path", "mthpd.conf", "[Daemon]\nmetrics_file=metrics.prom\n",
	 "mthpd.conf:2: metrics_file=: 'metrics.prom' is not an absolute path (or empty for none)"},
	{"no equals", "mthpd.conf", "[Daemon]\nscan_sleep_millisecs 100\n",
	 "mthpd.conf:2: not a 'key=value' or '[Section]' line"},
	{"repeated key", "policy.d/10-a.conf", "[Match]\ncomm=a\n[Policy]\nsizes=2M\nsizes=64K\n",
	 "policy.d/10-a.conf:5: sizes= given twice in [Policy]"},
	{"bad size", "policy.d/10-a.conf", "[Match]\ncomm=a\n[Policy]\nsizes=2M,3K\n",
	 "policy.d/10-a.conf:4: sizes=: '3K' is not a size from 16K to 2M (16K, 32K, ..., 1M, 2M)"},
	{"ptes out of range", "policy.d/10-a.conf", "[Match]\nunit=a.service\n[Policy]\nmax_ptes_none=512\n",
	 "policy.d/10-a.conf:4: max_ptes_none=: '512' is not a number from 0 to 511"},
	{"bad budget", "policy.d/10-a.conf", "[Match]\ncomm=a\n[Policy]\nmax_bytes_per_pass=lots\n",
	 "policy.d/10-a.conf:4: max_bytes_per_pass=: 'lots' is not a size (bytes, or with K, M, G, T; 0 for none)"},
	{"bad pace", "policy.d/10-a.conf", "[Match]\ncomm=a\n[Policy]\npace=0%\n",
	 "policy.d/10-a.conf:4: pace=: '0%' is not no, yes, auto or a percentage from 1% to 100%"},
	{"pace over 100%", "policy.d/10-a.conf", "[Match]\ncomm=a\n[Policy]\npace=150%\n",
	 "policy.d/10-a.conf:4: pace=: '150%' is not no, yes, auto or a percentage from 1% to 100%"},
	{"pace as a duration", "policy.d/10-a.conf", "[Match]\ncomm=a\n[Policy]\npace=100ms\n",
	 "policy.d/10-a.conf:4: pace=: '100ms' is not no, yes, auto or a percentage from 1% to 100%"},
	{"bad split_partial", "policy.d/10-a.conf", "[Match]\ncomm=a\n[Policy]\nsplit_partial=later\n",
	 "policy.d/10-a.conf:4: split_partial=: 'later' is not a boolean (yes or no)"},
	{"split_partial in [Daemon]", "mthpd.conf", "[Daemon]\nsplit_partial=no\n",
	 "mthpd.conf:2: unknown key 'split_partial' in [Daemon]"},
	{"min_age negative", "policy.d/10-a.conf", "[Match]\ncomm=a\n[Policy]\nmin_age=-1\n",
	 "policy.d/10-a.conf:4: min_age=: '-1' is not a number of seconds from 0 to 86400"},
	{"min_age with a unit", "policy.d/10-a.conf", "[Match]\ncomm=a\n[Policy]\nmin_age=10s\n",
	 "policy.d/10-a.conf:4: min_age=: '10s' is not a number of seconds from 0 to 86400"},
	{"min_age over a day", "policy.d/10-a.conf", "[Match]\ncomm=a\n[Policy]\nmin_age=86401\n",
	 "policy.d/10-a.conf:4: min_age=: '86401' is not a number of seconds from 0 to 86400"},
	{"min_age empty", "policy.d/10-a.conf", "[Match]\ncomm=a\n[Policy]\nmin_age=\n",
	 "policy.d/10-a.conf:4: min_age=: '' is not a number of seconds from 0 to 86400"},
	{"min_age in [Daemon]", "mthpd.conf", "[Daemon]\nmin_age=0\n",
	 "mthpd.conf:2: unknown key 'min_age' in [Daemon]"},
	{"pace in [Daemon]", "mthpd.conf", "[Daemon]\npace=yes\n",
	 "mthpd.conf:2: unknown key 'pace' in [Daemon]"},
	{"daemon key in a policy", "policy.d/10-a.conf", "[Match]\ncomm=a\n[Daemon]\ndry_run=yes\n",
	 "policy.d/10-a.conf:3: unknown section [Daemon] (a policy has [Match] and [Policy])"},
	{"empty glob", "policy.d/10-a.conf", "[Match]\ncomm=\n",
	 "policy.d/10-a.conf:2: comm=: empty pattern (leave the key out to match anything)"},
	{"no match", "policy.d/10-a.conf", "[Policy]\nsizes=2M\n",
	 "policy.d/10-a.conf: no [Match] key: say which processes it is for with cgroup=, unit= or comm="},
	{"unknown policy key", "policy.d/20-b.conf", "[Match]\ncomm=b\n[Policy]\nmax_ptes_nome=0\n",
	 "policy.d/20-b.conf:4: unknown key 'max_ptes_nome' in [Policy]"},
	/* issue 10: what inih read differently from what was meant */
	{"a key after a header, on its line", "policy.d/10-a.conf",
	 "[Match]\ncomm=a\n[Policy] enabled=no\n",
	 "policy.d/10-a.conf:3: text after [Policy]: 'enabled=no' (one key per line, after the section)"},
	{"empty section name", "mthpd.conf", "[]\n",
	 "mthpd.conf:1: unknown section [] (mthpd.conf has [Daemon])"},
	{"misspelt section without keys", "policy.d/10-a.conf", "[Match]\ncomm=a\n[Polcy]\n",
	 "policy.d/10-a.conf:3: unknown section [Polcy] (a policy has [Match] and [Policy])"},
	{"[Daemon] without keys in a policy", "policy.d/10-a.conf", "[Match]\ncomm=a\n[Daemon]\n",
	 "policy.d/10-a.conf:3: unknown section [Daemon] (a policy has [Match] and [Policy])"},
	{"no closing bracket", "policy.d/10-a.conf", "[Match\ncomm=a\n",
	 "policy.d/10-a.conf:1: no ']' closes the section name '[Match'"},
	{"continuation line", "policy.d/10-a.conf", "[Match]\ncomm=a\n  b\n",
	 "policy.d/10-a.conf:3: the line starts with a blank (inih would join it to the line before); "
	 "remove the leading blanks"},
	{"key: value", "policy.d/10-a.conf", "[Match]\ncomm: x\n",
	 "policy.d/10-a.conf:2: 'comm': write key=value, not key: value"},
	{"a key before any section", "policy.d/10-a.conf", "comm=a\n[Match]\nunit=a.service\n",
	 "policy.d/10-a.conf:1: 'comm=' before any section"},
	{"a size that would wrap to 0", "policy.d/10-a.conf",
	 "[Match]\ncomm=a\n[Policy]\nmax_bytes_per_pass=17179869184T\n",
	 "policy.d/10-a.conf:4: max_bytes_per_pass=: '17179869184T' is not a size (bytes, or with K, M, G, T; 0 for none)"},
	{"sizes= that would wrap to 2M", "policy.d/10-a.conf",
	 "[Match]\ncomm=a\n[Policy]\nsizes=17592186044418M\n",
	 "policy.d/10-a.conf:4: sizes=: '17592186044418M' is not a size from 16K to 2M (16K, 32K, ..., 1M, 2M)"},
	{"comm that can never match", "policy.d/10-a.conf", "[Match]\ncomm=a-very-long-process-name\n",
	 "policy.d/10-a.conf:2: comm=: 'a-very-long-process-name' can never match: a process's comm is "
	 "at most 15 characters (the kernel cuts longer names)"},
};

/* Writes @len bytes of @text as @name (NULs allowed). */
static void put_bytes(const char *name, const char *text, size_t len)
{
	char path[256];
	FILE *f;

	(void)snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	TEST_ASSERT(f != NULL);
	if (!f)
		return;
	TEST_ASSERT_EQ(fwrite(text, 1, len, f), len);
	fclose(f);
}

/*
 * Files that are no text, or no file: each is refused with its reason,
 * without blocking (a FIFO) or reading forever (/dev/zero).
 */
static void test_not_text(void)
{
	char path[256];
	char *big;

	fresh_dir();
	put_bytes("policy.d/10-a.conf", "[Match]\ncomm=a\0b\n", 16);
	expect_error("a NUL byte", "policy.d/10-a.conf:2: a NUL byte: not a text file");

	fresh_dir();
	(void)snprintf(path, sizeof(path), "%s/policy.d/10-a.conf", dir);
	TEST_ASSERT_EQ(mkdir(path, 0700), 0);
	expect_error("a directory named x.conf", "policy.d/10-a.conf: not a regular file (a directory)");

	fresh_dir();
	(void)snprintf(path, sizeof(path), "%s/policy.d/10-a.conf", dir);
	TEST_ASSERT_EQ(mkfifo(path, 0600), 0);
	expect_error("a FIFO", "policy.d/10-a.conf: not a regular file (a FIFO)");

	fresh_dir();
	(void)snprintf(path, sizeof(path), "%s/policy.d/10-a.conf", dir);
	TEST_ASSERT_EQ(symlink("/dev/zero", path), 0);
	expect_error("a symlink to /dev/zero", "policy.d/10-a.conf: not a regular file (a character device)");

	fresh_dir();
	(void)snprintf(path, sizeof(path), "%s/mthpd.conf", dir);
	TEST_ASSERT_EQ(mkdir(path, 0700), 0);
	expect_error("mthpd.conf is a directory", "mthpd.conf: not a regular file (a directory)");

	fresh_dir();
	big = malloc(70000);
	TEST_ASSERT(big != NULL);
	if (big) {
		memset(big, ';', 70000);
		for (size_t i = 63; i < 70000; i += 64)
			big[i] = '\n';
		put_bytes("policy.d/10-a.conf", big, 70000);
		free(big);
	}
	expect_error("70000 bytes", "policy.d/10-a.conf: larger than 64 KiB, not a configuration file");
	test_case = NULL;
}

/* A file previewed as if in policy.d: at its place by name, in place of its namesake. */
static void test_add_policy(void)
{
	struct mthpd_config *c = NULL;
	char err[512], path[128], want[256];

	fresh_dir();
	put("policy.d/20-a.conf", "[Match]\ncomm=a\n");
	put("policy.d/60-c.conf", "[Match]\ncomm=c\n");
	put("40-b.conf", "[Match]\ncomm=b*\n[Policy]\nmax_ptes_none=0\n");
	put("60-c.conf", "[Match]\ncomm=c\n[Policy]\nenabled=no\n");
	put("bad.conf", "[Match]\ncomm=x\n[Policy]\nsizes=3M\n");
	put("nomatch.conf", "[Policy]\nsizes=2M\n");
	put("x.txt", "[Match]\ncomm=x\n");
	TEST_ASSERT_EQ(mthpd_config_load(dir, &defaults, &c, err, sizeof(err)), 0);
	if (!c)
		return;
	test_case = "add_policy: inserted in file-name order";
	(void)snprintf(path, sizeof(path), "%s/40-b.conf", dir);
	TEST_ASSERT_EQ(mthpd_config_add_policy(c, path, &defaults, err, sizeof(err)), 0);
	TEST_ASSERT_EQ(c->nr_policies, 3);
	TEST_ASSERT_STREQ(c->policies[1].name, "40-b.conf");
	TEST_ASSERT_STREQ(c->policies[1].path, path);
	TEST_ASSERT_EQ(c->policies[1].knobs.max_ptes_none, 0);
	TEST_ASSERT(mthpd_config_match(c, "/", NULL, "bee") == &c->policies[1]);
	test_case = "add_policy: replaces the one of the same name";
	(void)snprintf(path, sizeof(path), "%s/60-c.conf", dir);
	TEST_ASSERT_EQ(mthpd_config_add_policy(c, path, &defaults, err, sizeof(err)), 0);
	TEST_ASSERT_EQ(c->nr_policies, 3);
	TEST_ASSERT(!c->policies[2].enabled);
	test_case = "add_policy: errors name the file and line, the config is unchanged";
	(void)snprintf(path, sizeof(path), "%s/bad.conf", dir);
	TEST_ASSERT_EQ(mthpd_config_add_policy(c, path, &defaults, err, sizeof(err)), -EINVAL);
	(void)snprintf(want, sizeof(want), "%s:4: ", path);
	TEST_ASSERT(strncmp(err, want, strlen(want)) == 0);
	(void)snprintf(path, sizeof(path), "%s/nomatch.conf", dir);
	TEST_ASSERT_EQ(mthpd_config_add_policy(c, path, &defaults, err, sizeof(err)), -EINVAL);
	(void)snprintf(path, sizeof(path), "%s/x.txt", dir);
	TEST_ASSERT_EQ(mthpd_config_add_policy(c, path, &defaults, err, sizeof(err)), -EINVAL);
	(void)snprintf(path, sizeof(path), "%s/missing.conf", dir);
	TEST_ASSERT(mthpd_config_add_policy(c, path, &defaults, err, sizeof(err)) < 0);
	TEST_ASSERT_EQ(c->nr_policies, 3);
	mthpd_config_free(c);
	test_case = NULL;
}

/* A file an editor saved with a UTF-8 byte order mark reads as without it. */
static void test_bom(void)
{
	struct mthpd_config *c = NULL;
	char err[512] = "";

	test_case = "a UTF-8 BOM";
	fresh_dir();
	put("mthpd.conf", "\xef\xbb\xbf[Daemon]\nscan_sleep_millisecs=500\n");
	put("policy.d/50-a.conf", "\xef\xbb\xbf[Match]\ncomm=a\n[Policy]\nsizes=2M\n");
	TEST_ASSERT_EQ(mthpd_config_load(dir, &defaults, &c, err, sizeof(err)), 0);
	TEST_ASSERT_STREQ(err, "");
	if (c) {
		TEST_ASSERT_EQ(c->daemon.scan_sleep_millisecs, 500);
		TEST_ASSERT_EQ(c->nr_policies, 1);
	}
	c = mthpd_config_free(c);
	test_case = NULL;
}

int main(void)
{
	test_bom();
	test_add_policy();
	struct mthpd_config *c = NULL;
	const struct mthpd_policy *p;
	char err[512];

	test_case = "an empty directory: every default, no policy";
	fresh_dir();
	TEST_ASSERT_EQ(mthpd_config_load(dir, &defaults, &c, err, sizeof(err)), 0);
	if (c) {
		TEST_ASSERT_EQ(c->daemon.scan_sleep_millisecs, 10000);
		TEST_ASSERT_EQ(c->daemon.alloc_sleep_millisecs, 60000);
		TEST_ASSERT_EQ(c->daemon.psi_threshold, 1000);
		TEST_ASSERT_EQ(c->daemon.dry_run, false);
		TEST_ASSERT_EQ(c->daemon.prefault, MTHPD_PREFAULT_AUTO);
		TEST_ASSERT_STREQ(c->daemon.metrics_file, "/run/mthpd/metrics.prom");
		TEST_ASSERT_EQ(c->daemon.state_file_line, 0); /* the default: set by no line */
		TEST_ASSERT_EQ(c->nr_policies, 0);
		TEST_ASSERT(mthpd_config_match(c, "/system.slice/a.service", "a.service", "a") == NULL);
	}
	c = mthpd_config_free(c);

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		fresh_dir();
		put(bad[i].file, bad[i].text);
		expect_error(bad[i].name, bad[i].msg);
	}

	test_case = "the lines that set state_file and metrics_file, for a complaint about the path";
	fresh_dir();
	put("mthpd.conf", "# paths\n[Daemon]\nscan_sleep_millisecs=500\nstate_file=/tmp/x/status\n"
			  "\nmetrics_file=\n");
	TEST_ASSERT_EQ(mthpd_config_load(dir, &defaults, &c, err, sizeof(err)), 0);
	if (c) {
		TEST_ASSERT_EQ(c->daemon.state_file_line, 4);
		TEST_ASSERT_EQ(c->daemon.metrics_file_line, 6);
	}
	c = mthpd_config_free(c);

	test_case = "precedence: file-name order, all keys of a [Match] must match";
	fresh_dir();
	put("mthpd.conf", "[Daemon]\nscan_sleep_millisecs=500 ; inline comment\npsi_threshold=2.5\n"
			  "prefault=No\n");
	put("policy.d/50-redis.conf",
	    "[Match]\nunit=redis*.service\ncomm=redis-server\n[Policy]\nsizes=2M,64K\nmax_ptes_none=0\n"
	    "pace=yes\nsplit_partial=no\nmin_age=0\n");
	put("policy.d/10-off.conf", "[Match]\ncgroup=/system.slice/latency.service\n[Policy]\nenabled=no\n");
	put("policy.d/90-catchall.conf", "[Match]\ncgroup=/system.slice/*\n[Policy]\ndry_run=yes\n");
	put("policy.d/README", "not a .conf file: ignored\n");
	TEST_ASSERT_EQ(mthpd_config_load(dir, &defaults, &c, err, sizeof(err)), 0);
	TEST_ASSERT_STREQ(err, "");
	if (c) {
		TEST_ASSERT_EQ(c->daemon.scan_sleep_millisecs, 500);
		TEST_ASSERT_EQ(c->daemon.psi_threshold, 250);
		TEST_ASSERT_EQ(c->daemon.prefault, MTHPD_PREFAULT_NO);
		TEST_ASSERT_EQ(c->nr_policies, 3);
		TEST_ASSERT_STREQ(c->policies[0].name, "10-off.conf");
		TEST_ASSERT_STREQ(c->policies[1].name, "50-redis.conf");
		TEST_ASSERT_EQ(c->policies[1].knobs.orders, (1U << 9) | (1U << 4));
		TEST_ASSERT_EQ(c->policies[1].knobs.max_ptes_none, 0);
		TEST_ASSERT_EQ(c->policies[1].knobs.max_ptes_swap, 64); /* from the defaults */
		TEST_ASSERT_EQ(c->policies[2].knobs.orders, 1U << 9);  /* sizes default: 2M */
		/* pace=yes is the default share; pace=auto unless a policy says otherwise */
		TEST_ASSERT_EQ(c->policies[1].pace.percent, MTHPD_PACE_DEFAULT_PERCENT);
		TEST_ASSERT(!c->policies[1].pace.autop);
		TEST_ASSERT_EQ(c->policies[0].pace.percent, 0);
		TEST_ASSERT(c->policies[0].pace.autop);
		TEST_ASSERT(c->policies[2].pace.autop);
		/* split_partial: yes unless a policy says no */
		TEST_ASSERT_EQ(c->policies[1].split_partial, false);
		TEST_ASSERT_EQ(c->policies[0].split_partial, true);
		TEST_ASSERT_EQ(c->policies[2].split_partial, true);
		/* min_age: 0 where asked, else the default */
		TEST_ASSERT_EQ(c->policies[1].min_age_sec, 0);
		TEST_ASSERT_EQ(c->policies[0].min_age_sec, MTHPD_MIN_AGE_DEFAULT_SEC);
		TEST_ASSERT_EQ(c->policies[2].min_age_sec, MTHPD_MIN_AGE_DEFAULT_SEC);

		p = mthpd_config_match(c, "/system.slice/redis-server.service", "redis-server.service",
				       "redis-server");
		TEST_ASSERT(p && strcmp(p->name, "50-redis.conf") == 0);
		/* unit matches but comm does not: the next file that matches */
		p = mthpd_config_match(c, "/system.slice/redis-server.service", "redis-server.service",
				       "redis-check");
		TEST_ASSERT(p && strcmp(p->name, "90-catchall.conf") == 0);
		/* the first file wins even where a later one matches too */
		p = mthpd_config_match(c, "/system.slice/latency.service", "latency.service", "lat");
		TEST_ASSERT(p && strcmp(p->name, "10-off.conf") == 0 && !p->enabled);
		/* no unit: a unit= key cannot match */
		p = mthpd_config_match(c, "/user.slice", NULL, "redis-server");
		TEST_ASSERT(p == NULL);

		/* discovery reads a cgroup's processes only where one could match */
		TEST_ASSERT(mthpd_config_may_match(c, "/system.slice/redis-server.service",
						   "redis-server.service"));
		TEST_ASSERT(mthpd_config_may_match(c, "/system.slice/cron.service", "cron.service"));
		TEST_ASSERT(!mthpd_config_may_match(c, "/user.slice", ""));
		TEST_ASSERT(!mthpd_config_may_match(c, "/", ""));
		/* the redis unit outside system.slice: unit= matches, comm unknown */
		TEST_ASSERT(mthpd_config_may_match(c, "/other.slice/redis-server.service",
						   "redis-server.service"));
	}
	c = mthpd_config_free(c);

	fresh_dir();
	{
		char cmd[128];

		(void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		(void)!system(cmd);
	}
	test_case = "a missing directory is an error";
	TEST_ASSERT_EQ(mthpd_config_load("/nonexistent/mthpd", &defaults, &c, err, sizeof(err)), -EINVAL);
	TEST_ASSERT(c == NULL);
	TEST_ASSERT_STREQ(err, "/nonexistent/mthpd: no such configuration directory");
	test_case = "a file as the directory";
	fresh_dir();
	put("mthpd.conf", "[Daemon]\n");
	{
		char file[128], want[192];

		(void)snprintf(file, sizeof(file), "%s/mthpd.conf", dir);
		(void)snprintf(want, sizeof(want), "%s: not a directory", file);
		TEST_ASSERT_EQ(mthpd_config_load(file, &defaults, &c, err, sizeof(err)), -EINVAL);
		TEST_ASSERT_STREQ(err, want);
	}
	c = mthpd_config_free(c);
	test_not_text();
	{
		char cmd[128];

		(void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		(void)!system(cmd);
	}
	return test_finish();
}
