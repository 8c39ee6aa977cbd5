/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef MTHPD_ONESHOT_H
#define MTHPD_ONESHOT_H

#include "cli.h"

/*
 * plan or collapse --pid: the pass over the processes @c names, printed on
 * stdout, failures on stderr.  Returns the exit status (cli.h).
 */
int oneshot_run(const struct cli *c);

#endif
