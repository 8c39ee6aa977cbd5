/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef MTHPD_RUN_H
#define MTHPD_RUN_H

#include <stdbool.h>

struct run_opts {
	const char *config_dir;
	const char *proc_root; /* NULL: /proc */
	const char *sys_root;  /* NULL: /sys */
	bool sandbox;          /* capabilities and seccomp before READY=1 */
};

/* `mthpd run`: returns the process exit status. */
int run_daemon(const struct run_opts *o);

#endif
