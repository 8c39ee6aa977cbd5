/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small helpers shared by lib/ and daemon/: scoped cleanup in the style of
 * systemd's CODING_STYLE, and array sizing.
 */
#ifndef MTHPD_UTIL_H
#define MTHPD_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		(void)close(*fd);
		errno = saved;
	}
}

static inline void fclosep(FILE **f)
{
	if (*f)
		(void)fclose(*f);
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Hand ownership of a pointer or fd to the caller, leaving NULL or -1 behind. */
#define TAKE_PTR(p)                          \
	({                                   \
		__typeof__(p) _p_ = (p);     \
		(p) = NULL;                  \
		_p_;                         \
	})
#define TAKE_FD(fd)                          \
	({                                   \
		int _fd_ = (fd);             \
		(fd) = -1;                   \
		_fd_;                        \
	})

/* CLOCK_MONOTONIC in microseconds: the daemon's clock for timers, pacing and backoffs. */
static inline uint64_t now_usec(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
}

#endif
