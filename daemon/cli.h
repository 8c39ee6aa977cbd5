/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the commands of the command line share: the exit statuses (README.md
 * and --help, "Exit status"), the way they report a failure, and `plan` and
 * `collapse` as main.c parses them.
 */
#ifndef MTHPD_CLI_H
#define MTHPD_CLI_H

#include <stdbool.h>
#include <sys/types.h>

#include "preview.h"
#include "util.h"

enum {
	EXIT_OK = 0,
	EXIT_TARGET = 1,  /* a target could not be processed */
	EXIT_USAGE = 2,   /* bad usage or input; nothing done */
	EXIT_SYSTEM = 3,  /* this system cannot run mthpd */
};

#define MAX_PIDS 4096

struct cli {
	bool collapse;
	bool json;
	pid_t pids[MAX_PIDS];
	size_t nr_pids;
	const char *sizes;
	const char *max_ptes[3]; /* none, swap, shared, as given */
	const char *proc_root;
	const char *sys_root;
	struct preview_opts preview; /* plan --config-dir: a configuration on the live processes */
};

/* "mthpd: " and the line, whole and escaped (lib/text.h): it may name a process or a file. */
_printf_(1, 2) void cli_fail(const char *fmt, ...);

#endif
