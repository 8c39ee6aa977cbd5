/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mthpd command line: --help, the options of every command, and which file
 * does the command: oneshot.c plan or collapse --pid, preview.c plan
 * --config-dir, check-config.c, state.c status, run.c the daemon.
 * Only this file ends the process, with the exit statuses documented in
 * README.md and --help (cli.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "check-config.h"
#include "cli.h"
#include "kif.h"
#include "knobs.h"
#include "config.h"
#include "coverage.h"
#include "oneshot.h"
#include "run.h"
#include "sandbox.h"
#include "state.h"
#include "top.h"
#include "text.h"
#include "util.h"
#include "preview.h"
#include "version.h"

void cli_fail(const char *fmt, ...)
{
	_cleanup_free_ char *line = NULL;
	va_list ap;

	va_start(ap, fmt);
	line = mthpd_text_vformat(fmt, ap);
	va_end(ap);
	fprintf(stderr, "mthpd: %s\n", line ? line : "out of memory");
}

static void help(FILE *f)
{
	fputs("Usage: mthpd plan     --pid PID [--pid PID ...] [OPTIONS]\n"
	      "       mthpd plan     --config-dir DIR [--policy FILE|NAME] [--unit GLOB]\n"
	      "                      [--cgroup GLOB] [--json]   (a configuration previewed)\n"
	      "       mthpd collapse --pid PID [--pid PID ...] [OPTIONS]\n"
	      "       mthpd run          [--config-dir DIR]   (the daemon)\n"
	      "       mthpd check-config [--config-dir DIR]\n"
	      "       mthpd status       [--config-dir DIR] [--policy NAME] [--unit GLOB]\n"
	      "                          [--limit N] [--json]\n"
	      "       mthpd top          [--config-dir DIR] [--policy NAME] [--unit GLOB]\n"
	      "                          [--interval S] [--iterations N]   (status, live)\n"
	      "       mthpd --version\n"
	      "\n"
	      "Plan or perform the collapse of the anonymous memory of processes into\n"
	      "huge pages, with the order walk of khugepaged's mTHP collapse.\n"
	      "`plan` collapses nothing.\n"
	      "\n"
	      "Options:\n"
	      "  -p, --pid PID            process to work on (repeatable)\n"
	      "  -s, --sizes LIST         folio sizes, e.g. 2M,64K (16K..2M; default 2M)\n"
	      "      --max-ptes-none N    0..511 (default: khugepaged's sysfs value)\n"
	      "      --max-ptes-swap N    0..511 (default: khugepaged's sysfs value)\n"
	      "      --max-ptes-shared N  0..511 (default: khugepaged's sysfs value)\n"
	      "  -j, --json               one JSON object per line, one per block;\n"
	      "                           status: one JSON object (schema: man mthpd)\n"
	      "      --proc-root DIR      read DIR instead of /proc\n"
	      "      --sys-root DIR       read DIR instead of /sys\n"
	      "  -c, --config-dir DIR     mthpd.conf and policy.d/ (default /etc/mthpd)\n"
	      "      --policy FILE|NAME   plan --config-dir: only this policy; a FILE is\n"
	      "                           previewed as if it were in policy.d;\n"
	      "                           status, top: only this policy\n"
	      "      --unit GLOB          plan --config-dir: only these units' processes,\n"
	      "                           also those no policy matches; status, top: only\n"
	      "                           these units\n"
	      "      --cgroup GLOB        plan --config-dir: the same, by cgroup path below\n"
	      "                           the cgroup2 mount\n"
	      "      --limit N            status: at most N units per policy and processes\n"
	      "                           per unit, the largest (default 20; 0: all)\n"
	      "      --interval S         top: seconds between frames (default 1; 0.1..3600)\n"
	      "      --iterations N       top: stop after N frames (default 0: at q)\n"
	      "  -h, --help               show this help\n"
	      "  -V, --version            show the version\n"
	      "\n"
	      "Exit status:\n"
	      "  0  done; every target was processed (per-block failures are results)\n"
	      "  1  at least one target could not be processed (exited mid-run, read error,\n"
	      "     or for collapse: THP disabled for it)\n"
	      "  2  bad usage or input (option, size, value, pid, configuration); nothing\n"
	      "     was collapsed\n"
	      "  3  this system cannot run mthpd (no pagemap PFNs, no /proc/kpageflags);\n"
	      "     for status: the daemon is not running, or its state file is stale\n"
	      "     (2 for status: state_file= is empty, there is nothing to read)\n"
	      "For run, 2 also: another mthpd runs on the configuration or state file, or\n"
	      "the state file cannot be written.\n",
	      f);
}

static int parse_pid(const char *s, pid_t *ret)
{
	unsigned int v;

	if (mthpd_parse_uint(s, 0x3fffffff, &v) < 0 || v == 0)
		return -EINVAL;
	*ret = (pid_t)v;
	return 0;
}

/* argv[1]: plan or collapse.  Returns 0, 1 when --help was shown, -EINVAL (said why). */
static int parse_command(int argc, char **argv, struct cli *c)
{
	if (argc < 2) {
		help(stderr);
		return -EINVAL;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		help(stdout);
		return 1;
	}
	if (strcmp(argv[1], "plan") == 0) {
		c->collapse = false;
	} else if (strcmp(argv[1], "collapse") == 0) {
		c->collapse = true;
	} else {
		cli_fail("unknown command '%s' (expected plan, collapse, run, check-config, status or top; "
			 "see --help)", argv[1]);
		return -EINVAL;
	}
	return 0;
}

/* One --pid: a process id, not given before, within MAX_PIDS.  Returns 0 or -EINVAL. */
static int add_pid(struct cli *c, const char *arg)
{
	if (c->nr_pids >= MAX_PIDS) {
		cli_fail("too many --pid (at most %d)", MAX_PIDS);
		return -EINVAL;
	}
	if (parse_pid(arg, &c->pids[c->nr_pids]) < 0) {
		cli_fail("--pid: '%s' is not a process id", arg);
		return -EINVAL;
	}
	for (size_t i = 0; i < c->nr_pids; i++)
		if (c->pids[i] == c->pids[c->nr_pids]) {
			cli_fail("--pid %d is given twice", (int)c->pids[i]);
			return -EINVAL;
		}
	c->nr_pids++;
	return 0;
}

/* The options after the command, each alone.  Returns 0, 1 (--help shown), -EINVAL. */
static int parse_options(int argc, char **argv, struct cli *c)
{
	enum { OPT_NONE = 0x100, OPT_SWAP, OPT_SHARED, OPT_PROC, OPT_SYS, OPT_POLICY, OPT_UNIT,
	       OPT_CGROUP };
	static const struct option opts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"sizes", required_argument, NULL, 's'},
		{"max-ptes-none", required_argument, NULL, OPT_NONE},
		{"max-ptes-swap", required_argument, NULL, OPT_SWAP},
		{"max-ptes-shared", required_argument, NULL, OPT_SHARED},
		{"json", no_argument, NULL, 'j'},
		{"config-dir", required_argument, NULL, 'c'},
		{"policy", required_argument, NULL, OPT_POLICY},
		{"unit", required_argument, NULL, OPT_UNIT},
		{"cgroup", required_argument, NULL, OPT_CGROUP},
		{"proc-root", required_argument, NULL, OPT_PROC},
		{"sys-root", required_argument, NULL, OPT_SYS},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	int o;

	opterr = 0;
	optind = 2;
	while ((o = getopt_long(argc, argv, ":p:s:jhc:", opts, NULL)) >= 0) {
		switch (o) {
		case 'c':
			c->preview.config_dir = optarg;
			break;
		case OPT_POLICY:
			c->preview.policy = optarg;
			break;
		case OPT_UNIT:
			c->preview.unit = optarg;
			break;
		case OPT_CGROUP:
			c->preview.cgroup = optarg;
			break;
		case 'p':
			if (add_pid(c, optarg) < 0)
				return -EINVAL;
			break;
		case 's':
			c->sizes = optarg;
			break;
		case OPT_NONE:
		case OPT_SWAP:
		case OPT_SHARED:
			c->max_ptes[o - OPT_NONE] = optarg;
			break;
		case 'j':
			c->json = true;
			break;
		case OPT_PROC:
			c->proc_root = optarg;
			break;
		case OPT_SYS:
			c->sys_root = optarg;
			break;
		case 'h':
			help(stdout);
			return 1;
		case ':':
			cli_fail("option '%s' needs a value", argv[optind - 1]);
			return -EINVAL;
		default:
			cli_fail("unknown option '%s' (see --help)", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		cli_fail("unexpected argument '%s' (see --help)", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* The options together: what goes with --config-dir, and what @cmd needs.  0 or -EINVAL. */
static int check_options(struct cli *c, const char *cmd)
{
	if (c->preview.policy || c->preview.unit || c->preview.cgroup) {
		if (!c->preview.config_dir) {
			cli_fail("--policy, --unit and --cgroup go with --config-dir");
			return -EINVAL;
		}
	}
	if (c->preview.config_dir) {
		/* the policies say which processes, sizes and limits: not the command line */
		if (c->collapse) {
			cli_fail("collapse does not take --config-dir: the daemon (mthpd run) acts on a "
				 "configuration; plan --config-dir previews it");
			return -EINVAL;
		}
		if (c->nr_pids || c->sizes || c->max_ptes[0] || c->max_ptes[1] || c->max_ptes[2] ||
		    c->proc_root || c->sys_root) {
			cli_fail("plan --config-dir takes the processes and knobs from the policies: no "
				 "--pid, --sizes, --max-ptes-*, --proc-root or --sys-root");
			return -EINVAL;
		}
		c->preview.json = c->json;
		return 0;
	}
	if (c->nr_pids == 0) {
		cli_fail("%s needs at least one --pid (or --config-dir, for plan)", cmd);
		return -EINVAL;
	}
	return 0;
}

/* plan and collapse: argv into @c.  Returns 0, 1 when --help was shown, -EINVAL (said why). */
static int parse_args(int argc, char **argv, struct cli *c)
{
	int r;

	r = parse_command(argc, argv, c);
	if (r == 0)
		r = parse_options(argc, argv, c);
	if (r == 0)
		r = check_options(c, argv[1]);
	return r;
}

/* plan and collapse: the command line, then a configuration previewed or the given pids. */
static int plan_commands(int argc, char **argv)
{
	struct cli c = {0};
	int r;

	r = parse_args(argc, argv, &c);
	if (r != 0)
		return r > 0 ? EXIT_OK : EXIT_USAGE;
	if (c.preview.config_dir)
		return preview_run(&c.preview);
	return oneshot_run(&c);
}

/* Loads the configuration for check-config and status; returns an exit status. */
static int load_config_for(const char *dir, const char *sys_root, struct mthpd_config **ret)
{
	struct mthpd_kif kif = {.proc_fd = -1, .sys_fd = -1};
	struct mthpd_knobs defaults = {.max_ptes_none = 511, .max_ptes_swap = 64,
				       .max_ptes_shared = 256}; /* the kernel's defaults */
	const char *bad = NULL, *file = NULL;
	char err[MTHPD_ERR_SIZE];
	int r;

	/* Policies take khugepaged's current values where they set none. */
	if (mthpd_kif_linux_init(NULL, sys_root, &kif, &bad) == 0) {
		if (mthpd_knobs_read_sysfs(&kif, 7, &defaults, &file) < 0)
			defaults = (struct mthpd_knobs){.max_ptes_none = 511, .max_ptes_swap = 64,
							.max_ptes_shared = 256};
		mthpd_kif_done(&kif);
	}
	r = mthpd_config_load(dir, &defaults, ret, err, sizeof(err));
	if (r < 0) {
		cli_fail("%s", err[0] ? err : strerror(-r));
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* run, check-config, status, sandbox-test: --config-dir and the roots. */
static int daemon_commands(int argc, char **argv)
{
	enum { OPT_PROC = 0x100, OPT_SYS, OPT_NO_SANDBOX, OPT_POLICY, OPT_UNIT, OPT_LIMIT, OPT_INTERVAL,
	       OPT_ITERATIONS };
	static const struct option opts[] = {
		{"config-dir", required_argument, NULL, 'c'},
		{"policy", required_argument, NULL, OPT_POLICY},
		{"unit", required_argument, NULL, OPT_UNIT},
		{"limit", required_argument, NULL, OPT_LIMIT},
		{"json", no_argument, NULL, 'j'},
		{"interval", required_argument, NULL, OPT_INTERVAL},
		{"iterations", required_argument, NULL, OPT_ITERATIONS},
		{"proc-root", required_argument, NULL, OPT_PROC},
		{"sys-root", required_argument, NULL, OPT_SYS},
		{"no-sandbox", no_argument, NULL, OPT_NO_SANDBOX},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	struct run_opts ro = {.config_dir = "/etc/mthpd", .sandbox = true};
	struct coverage_filter filter = {.limit = COVERAGE_LIMIT_DEFAULT};
	const char *status_opt = NULL; /* the first option that only status takes */
	const char *view_opt = NULL;   /* ... that status and top take */
	const char *top_opt = NULL;    /* ... that only top takes */
	unsigned int interval_ms = 1000, iterations = 0;
	struct mthpd_config *c = NULL;
	const char *cmd = argv[1];
	int o, status;

	opterr = 0;
	optind = 2;
	while ((o = getopt_long(argc, argv, ":c:hj", opts, NULL)) >= 0) {
		switch (o) {
		case 'c':
			ro.config_dir = optarg;
			break;
		case 'j':
			filter.json = true;
			status_opt = status_opt ? status_opt : "--json";
			break;
		case OPT_PROC:
			ro.proc_root = optarg;
			break;
		case OPT_SYS:
			ro.sys_root = optarg;
			break;
		case OPT_NO_SANDBOX:
			ro.sandbox = false;
			break;
		case OPT_POLICY:
			filter.policy = optarg;
			view_opt = view_opt ? view_opt : "--policy";
			break;
		case OPT_UNIT:
			filter.unit = optarg;
			view_opt = view_opt ? view_opt : "--unit";
			break;
		case OPT_INTERVAL: {
			char *end;
			double v;

			errno = 0;
			v = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(v >= 0.1 && v <= 3600)) {
				cli_fail("--interval '%s' is not a number of seconds from 0.1 to 3600", optarg);
				return EXIT_USAGE;
			}
			interval_ms = (unsigned int)(v * 1000 + 0.5);
			top_opt = top_opt ? top_opt : "--interval";
			break;
		}
		case OPT_ITERATIONS:
			if (mthpd_parse_uint(optarg, 1000000, &iterations) < 0) {
				cli_fail("--iterations '%s' is not a number from 0 to 1000000", optarg);
				return EXIT_USAGE;
			}
			top_opt = top_opt ? top_opt : "--iterations";
			break;
		case OPT_LIMIT:
			if (mthpd_parse_uint(optarg, 1000000, &filter.limit) < 0) {
				cli_fail("--limit '%s' is not a number from 0 to 1000000", optarg);
				return EXIT_USAGE;
			}
			status_opt = status_opt ? status_opt : "--limit";
			break;
		case 'h':
			help(stdout);
			return EXIT_OK;
		case ':':
			cli_fail("option '%s' needs a value", argv[optind - 1]);
			return EXIT_USAGE;
		default:
			cli_fail("unknown option '%s' (see --help)", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_fail("unexpected argument '%s' (see --help)", argv[optind]);
		return EXIT_USAGE;
	}
	if (status_opt && strcmp(cmd, "status") != 0) {
		cli_fail("%s is an option of status, not of %s", status_opt, cmd);
		return EXIT_USAGE;
	}
	if (view_opt && strcmp(cmd, "status") != 0 && strcmp(cmd, "top") != 0) {
		cli_fail("%s is an option of status and top, not of %s", view_opt, cmd);
		return EXIT_USAGE;
	}
	if (top_opt && strcmp(cmd, "top") != 0) {
		cli_fail("%s is an option of top, not of %s", top_opt, cmd);
		return EXIT_USAGE;
	}
	if (strcmp(cmd, "run") == 0)
		return run_daemon(&ro);
	if (strcmp(cmd, "sandbox-test") == 0)
		return sandbox_test(stdout);
	status = load_config_for(ro.config_dir, ro.sys_root, &c);
	if (status != EXIT_OK)
		return status;
	if (strcmp(cmd, "check-config") == 0) {
		status = check_config_run(c, ro.config_dir);
	} else if (!c->daemon.state_file[0]) {
		/* nothing to read, whether a daemon runs or not */
		cli_fail("%s has nothing to read: the state file is disabled in the configuration "
			 "(state_file= is empty in %s/mthpd.conf)", cmd, ro.config_dir);
		status = EXIT_USAGE;
	} else if (strcmp(cmd, "top") == 0) {
		filter.limit = 0;
		status = top_run(c->daemon.state_file, &filter, interval_ms, iterations, stdout);
	} else {
		status = state_show(c->daemon.state_file, &filter, stdout);
	}
	mthpd_config_free(c);
	return status;
}

int main(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0 ||
			  strcmp(argv[1], "version") == 0)) {
		printf("mthpd %s\n", MTHPD_VERSION);
		return EXIT_OK;
	}
	if (argc >= 2 && (strcmp(argv[1], "run") == 0 || strcmp(argv[1], "check-config") == 0 ||
			  strcmp(argv[1], "status") == 0 || strcmp(argv[1], "top") == 0 ||
			  strcmp(argv[1], "sandbox-test") == 0))
		return daemon_commands(argc, argv);
	return plan_commands(argc, argv);
}
