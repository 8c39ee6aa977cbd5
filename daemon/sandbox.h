/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's sandbox: keep only the capabilities mthpd needs, set
 * no_new_privs, load the seccomp allow-list.  Called once start-up has
 * opened what it needs, before READY=1.  The measurements behind the
 * capability set and the allow-list are in sandbox.c.
 */
#ifndef MTHPD_SANDBOX_H
#define MTHPD_SANDBOX_H

#include <stddef.h>
#include <stdio.h>

/*
 * Keeps CAP_DAC_READ_SEARCH, CAP_SYS_PTRACE, CAP_SYS_ADMIN and CAP_SYS_NICE
 * (those of them the process has: not being root is no error) in the
 * effective and permitted sets, drops every other one from them, from the
 * inheritable, ambient and (with CAP_SETPCAP) bounding sets, sets
 * no_new_privs and loads the seccomp filter: any system call outside the
 * allow-list fails with EPERM from then on.  Not undoable; call once.
 * Returns 0, or -errno with a one-line reason in @err.
 */
int sandbox_enter(char *err, size_t err_size);

/*
 * One line for the log or a test: "CapEff=... CapBnd=... NoNewPrivs=1
 * Seccomp=2", copied from /proc/self/status.  Works inside the sandbox.
 * Returns 0, or -errno (buffer too small: -ENOBUFS).
 */
int sandbox_describe(char *buf, size_t size);

/*
 * `mthpd sandbox-test` (tests/integration/test-seccomp.sh): enters the
 * sandbox, prints sandbox_describe() as "sandbox: ...", then one line per
 * call the allow-list must refuse ("refused: socket(AF_INET): EPERM") or
 * must allow ("allowed: getpid(): ok").  Returns an exit status: 0 if every
 * refused call failed with EPERM and every allowed one worked, 1 if not,
 * 3 if the sandbox could not be entered.
 */
int sandbox_test(FILE *out);

#endif
