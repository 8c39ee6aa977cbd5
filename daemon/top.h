/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `mthpd top`: the state file as a live view (daemon/top.c). */
#ifndef MTHPD_TOP_H
#define MTHPD_TOP_H

#include <stdio.h>

#include "coverage.h"

/*
 * Shows @state_file every @interval_ms as `mthpd status` reads it, one
 * frame of coverage_top() each (only @filter's policy and units), until
 * q on a terminal, a signal, or @iterations frames (0: no end).  Returns
 * the exit status of the last frame, as `mthpd status` (0, or 3 for a
 * daemon that is not running or stale).
 */
int top_run(const char *state_file, const struct coverage_filter *filter, unsigned int interval_ms,
	    unsigned long iterations, FILE *out);

#endif
