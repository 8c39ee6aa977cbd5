/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fake /proc/kpageflags: an unlinked temporary file holding one
 * little-endian u64 per PFN at offset pfn * 8, as the kernel lays it out.
 * Reads past its end get EOF, as reads past the end of memory do.  The
 * same layout serves as a fake /proc/PID/pagemap (one u64 per page).
 */
#ifndef MTHPD_TEST_FAKE_KPAGEFLAGS_H
#define MTHPD_TEST_FAKE_KPAGEFLAGS_H

#include <stdint.h>

#include "kpageflags.h"

/* Flag words measured on Linux 6.18 (kernel-interfaces-probe.md §2). */
#define TEST_KPF_ANON 0x400005828ULL          /* exclusive anon 4K page */
#define TEST_KPF_ANON_COW 0x5828ULL           /* anon page shared after fork */
#define TEST_KPF_THP_HEAD 0x40040d828ULL      /* + COMPOUND_HEAD + THP */
#define TEST_KPF_THP_TAIL 0x400415828ULL      /* + COMPOUND_TAIL + THP */
#define TEST_KPF_ZERO 0x101000000ULL          /* ZERO_PAGE + RESERVED */
#define TEST_KPF_HUGE_ZERO_HEAD \
	(KPF_BIT(KPF_COMPOUND_HEAD) | KPF_BIT(KPF_THP) | KPF_BIT(KPF_ZERO_PAGE))
#define TEST_KPF_HUGE_ZERO_TAIL \
	(KPF_BIT(KPF_COMPOUND_TAIL) | KPF_BIT(KPF_THP) | KPF_BIT(KPF_ZERO_PAGE))

/* Returns an fd of a new, empty, already unlinked file in /tmp, or -errno. */
int test_kpageflags_open(void);

/* Writes @first at @pfn and @rest at the @n - 1 PFNs after it.  Returns 0 or -errno. */
int test_kpageflags_set(int fd, uint64_t pfn, unsigned int n, uint64_t first, uint64_t rest);

#endif
