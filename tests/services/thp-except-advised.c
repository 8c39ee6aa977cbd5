/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * thp-except-advised.so: an LD_PRELOAD experiment for check-examples, not
 * a recommendation.  A process's prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0)
 * (THP off for the whole process: the kernel then refuses MADV_COLLAPSE
 * too) becomes prctl(PR_SET_THP_DISABLE, 1, PR_THP_DISABLE_EXCEPT_ADVISED,
 * 0, 0) (Linux 6.18+): no huge page at fault time where none was asked
 * for, but MADV_COLLAPSE, which is advice, is allowed.  It shows what
 * MariaDB's own call would let mthpd do if it asked for that mode.
 * On an older kernel the flag is EINVAL and the prctl fails.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <sys/prctl.h>

#ifndef PR_THP_DISABLE_EXCEPT_ADVISED
#define PR_THP_DISABLE_EXCEPT_ADVISED (1 << 1)
#endif

int prctl(int option, ...);

int prctl(int option, ...)
{
	static int (*next)(int, ...);
	unsigned long arg[4];
	va_list ap;

	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		arg[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (!next)
		next = (int (*)(int, ...))dlsym(RTLD_NEXT, "prctl");
	if (option == PR_SET_THP_DISABLE && arg[0] == 1 && arg[1] == 0)
		arg[1] = PR_THP_DISABLE_EXCEPT_ADVISED;
	return next(option, arg[0], arg[1], arg[2], arg[3]);
}
