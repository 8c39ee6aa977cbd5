/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `mthpd plan --config-dir DIR`: a policy previewed on the live processes.
 * Discovery and matching as the daemon does them (the cgroup2 walk, the
 * first policy in file-name order whose [Match] keys all match), then one
 * plan per matched process with its policy's knobs, collapsing nothing.
 */
#ifndef MTHPD_PREVIEW_H
#define MTHPD_PREVIEW_H

#include <stdbool.h>

struct preview_opts {
	const char *config_dir;
	const char *policy; /* a policy's name in policy.d, or a file to preview as if it were there */
	const char *unit;   /* shell glob over the unit; also lists processes no policy matches */
	const char *cgroup; /* shell glob over the cgroup path; the same */
	bool json;
};

/* Returns the process exit status (README.md, "Exit status"). */
int preview_run(const struct preview_opts *o);

#endif
