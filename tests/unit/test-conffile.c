/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One configuration file's text (lib/conffile.c): what is read into the
 * daemon's section or a policy, the line each error names, the first
 * error kept, and a missing file left for the caller to name.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conffile.h"
#include "config.h"
#include "test.h"
#include "util.h"

#define D MTHPD_CONF_DAEMON
#define P MTHPD_CONF_POLICY

/* Texts of the file "f": accepted (msg NULL), or refused with exactly msg. */
static const struct {
	const char *name;
	enum mthpd_conf_target t;
	const char *text, *msg;
} cases[] = {
	{"empty", D, "", NULL},
	{"comments only", P, "; a\n# b\n\n", NULL},
	{"a comment after a header", D, "[Daemon] ; the daemon\ndry_run=yes\n", NULL},
	{"CRLF line ends", D, "[Daemon]\r\nscan_sleep_millisecs=500\r\n", NULL},
	{"the error names its line", D, "[Daemon]\n\n; x\ndry_run=maybe\n",
	 "f:4: dry_run=: 'maybe' is not a boolean (yes or no)"},
	{"a BOM does not count as a line", D, "\xef\xbb\xbf[Daemon]\nfrobnicate=1\n",
	 "f:2: unknown key 'frobnicate' in [Daemon]"},
	{"the first error is kept", D, "[Daemon]\nfrobnicate=1\ndry_run=maybe\n",
	 "f:2: unknown key 'frobnicate' in [Daemon]"},
	{"a section given again does not make a key new", P,
	 "[Match]\ncomm=a\n[Policy]\nenabled=no\n[Match]\ncomm=b\n",
	 "f:6: comm= given twice in [Match]"},
	{"the same name in [Daemon] and a policy", P, "[Match]\ncomm=a\n[Policy]\ndry_run=yes\n", NULL},
	{"a [Daemon] key in a policy", P, "[Match]\ncomm=a\n[Policy]\nstate_file=/x\n",
	 "f:4: unknown key 'state_file' in [Policy]"},
	{"a policy section in mthpd.conf", D, "[Match]\ncomm=a\n",
	 "f:1: unknown section [Match] (mthpd.conf has [Daemon])"},
	{"text after a header", D, "[Daemon]dry_run=yes\n",
	 "f:1: text after [Daemon]: 'dry_run=yes' (one key per line, after the section)"},
	{"an indented line", D, "[Daemon]\n\tdry_run=yes\n",
	 "f:2: the line starts with a blank (inih would join it to the line before); "
	 "remove the leading blanks"},
	{"key: value", D, "[Daemon]\ndry_run: yes\n", "f:2: 'dry_run': write key=value, not key: value"},
	{"a word alone", D, "[Daemon]\ndry_run\n", "f:2: not a 'key=value' or '[Section]' line"},
	{"a key before any section", D, "dry_run=yes\n[Daemon]\n", "f:1: 'dry_run=' before any section"},
};

static void test_texts(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct mthpd_daemon_conf d = {0};
		struct mthpd_policy pol = {0};
		struct mthpd_conffile st;
		char err[512] = "";
		int r;

		test_case = cases[i].name;
		r = mthpd_conffile_parse_text(cases[i].text, "f", cases[i].t,
					      cases[i].t == D ? (void *)&d : (void *)&pol, &st, err,
					      sizeof(err));
		TEST_ASSERT_EQ(r, cases[i].msg ? -EINVAL : 0);
		TEST_ASSERT_EQ(st.r, r);
		TEST_ASSERT_STREQ(err, cases[i].msg ? cases[i].msg : "");
		free(d.metrics_file);
		free(d.state_file);
		free(pol.match_cgroup);
		free(pol.match_unit);
		free(pol.match_comm);
	}
	test_case = NULL;
}

/* What the parse leaves in the daemon's section and in the state. */
static void test_daemon(void)
{
	struct mthpd_daemon_conf d = {.scan_sleep_millisecs = 1, .alloc_sleep_millisecs = 2};
	struct mthpd_conffile st;
	char err[512] = "";

	test_case = "daemon";
	TEST_ASSERT_EQ(mthpd_conffile_parse_text("# paths\n[Daemon]\nscan_sleep_millisecs=500 ; ms\n"
						 "state_file=/x/status\n\nmetrics_file=\n",
						 "f", D, &d, &st, err, sizeof(err)),
		       0);
	TEST_ASSERT_EQ(d.scan_sleep_millisecs, 500);
	TEST_ASSERT_EQ(d.alloc_sleep_millisecs, 2); /* not given: as it was */
	TEST_ASSERT_STREQ(d.state_file, "/x/status");
	TEST_ASSERT_STREQ(d.metrics_file, "");
	TEST_ASSERT_EQ(d.state_file_line, 4);
	TEST_ASSERT_EQ(d.metrics_file_line, 6);
	TEST_ASSERT(!st.has_match);
	free(d.metrics_file);
	free(d.state_file);
	test_case = NULL;
}

/* has_match tells the caller whether a policy said whom it is for. */
static void test_has_match(void)
{
	struct mthpd_policy pol = {0};
	struct mthpd_conffile st;
	char err[512] = "";

	test_case = "a [Match] key";
	TEST_ASSERT_EQ(mthpd_conffile_parse_text("[Match]\nunit=a.service\n", "f", P, &pol, &st, err,
						 sizeof(err)),
		       0);
	TEST_ASSERT(st.has_match);
	TEST_ASSERT_STREQ(pol.match_unit, "a.service");
	free(pol.match_unit);
	pol.match_unit = NULL;

	test_case = "an empty [Match] section";
	TEST_ASSERT_EQ(mthpd_conffile_parse_text("[Match]\n[Policy]\nsizes=2M\n", "f", P, &pol, &st,
						 err, sizeof(err)),
		       0);
	TEST_ASSERT(!st.has_match);
	TEST_ASSERT_EQ(pol.knobs.orders, 1U << 9);
	test_case = NULL;
}

/* A line longer than inih's buffer is an error of its own, not two lines. */
static void test_long_line(void)
{
	struct mthpd_daemon_conf d = {0};
	struct mthpd_conffile st;
	char text[1024], err[512] = "";

	test_case = "a long line";
	memset(text, 'x', sizeof(text));
	memcpy(text, "[Daemon]\nstate_file=/", 21);
	memcpy(text + sizeof(text) - 16, "\ndry_run=maybe\n", 16);
	TEST_ASSERT_EQ(mthpd_conffile_parse_text(text, "f", D, &d, &st, err, sizeof(err)), -EINVAL);
	TEST_ASSERT(strncmp(err, "f:2: line longer than ", 22) == 0);
	free(d.state_file);
	test_case = NULL;
}

/* A missing file: -ENOENT and no message, for the caller to decide (mthpd.conf may be absent). */
static void test_missing(void)
{
	struct mthpd_daemon_conf d = {0};
	struct mthpd_conffile st;
	char err[512] = "";

	test_case = "a missing file";
	TEST_ASSERT_EQ(mthpd_conffile_parse("/nonexistent/mthpd.conf", "/nonexistent/mthpd.conf", D, &d,
					    &st, err, sizeof(err)),
		       -ENOENT);
	TEST_ASSERT_STREQ(err, "");
	test_case = NULL;
}

int main(void)
{
	test_texts();
	test_daemon();
	test_has_match();
	test_long_line();
	test_missing();
	return test_finish();
}
