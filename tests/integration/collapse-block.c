/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collapse-block: one process_madvise(MADV_COLLAPSE) call on another
 * process, with the flags of the contrib/kernel patch, so that
 * test-subpmd.sh can show what the kernel answers mthpd (the ABI of
 * contrib/kernel/README.md) without mthpd's planner in between.
 *
 *   collapse-block PID ADDR LEN FLAGS
 *   collapse-block --thp-disabled COMMAND [ARG...]
 *
 * ADDR, LEN and FLAGS in C notation (0x... allowed).  FLAGS: 1 ORDER,
 * 2 STRICT.  Prints "ok BYTES" or the errno's name ("EINVAL") and exits 0;
 * exits 2 on a usage error or an unknown pid.  The second form runs COMMAND
 * with PR_SET_THP_DISABLE set, as a parent that disabled THP would leave it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

static const char *errno_name(int e)
{
	switch (e) {
	case EINVAL: return "EINVAL";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOMEM: return "ENOMEM";
	case EBUSY: return "EBUSY";
	case ENODATA: return "ENODATA";
	case EAGAIN: return "EAGAIN";
	case EPERM: return "EPERM";
	case ESRCH: return "ESRCH";
	case EFAULT: return "EFAULT";
	default: return strerror(e);
	}
}

static int parse(const char *s, unsigned long long *ret)
{
	char *end;

	errno = 0;
	*ret = strtoull(s, &end, 0);
	return errno || end == s || *end ? -1 : 0;
}

int main(int argc, char **argv)
{
	unsigned long long pid, addr, len, flags;
	struct iovec iov;
	long n;
	int pidfd;

	if (argc >= 3 && strcmp(argv[1], "--thp-disabled") == 0) {
		if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) < 0) {
			fprintf(stderr, "collapse-block: PR_SET_THP_DISABLE: %s\n", strerror(errno));
			return 2;
		}
		execvp(argv[2], argv + 2);
		fprintf(stderr, "collapse-block: %s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	if (argc != 5 || parse(argv[1], &pid) || parse(argv[2], &addr) || parse(argv[3], &len) ||
	    parse(argv[4], &flags)) {
		fprintf(stderr, "usage: collapse-block PID ADDR LEN FLAGS\n");
		return 2;
	}
	pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0U);
	if (pidfd < 0) {
		fprintf(stderr, "collapse-block: pidfd_open %llu: %s\n", pid, strerror(errno));
		return 2;
	}
	iov.iov_base = (void *)(uintptr_t)addr;
	iov.iov_len = (size_t)len;
	n = syscall(SYS_process_madvise, pidfd, &iov, 1UL, MADV_COLLAPSE, (unsigned int)flags);
	if (n < 0)
		puts(errno_name(errno));
	else
		printf("ok %ld\n", n);
	close(pidfd);
	return 0;
}
