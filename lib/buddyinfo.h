/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /proc/buddyinfo: the free blocks of each order, per zone.  Whether the
 * host has a free 2 MiB block now tells, without allocating one, whether a
 * held collapse could succeed (issue 31): a failed huge page allocation
 * compacts memory, and each try costs every process on the host.
 */
#ifndef MTHPD_BUDDYINFO_H
#define MTHPD_BUDDYINFO_H

#include <stdint.h>

#include "kif.h"

/*
 * Pure: the free blocks of order @min_order or larger in a /proc/buddyinfo
 * text, counted in blocks of @min_order (a free order-10 block is two
 * order-9 ones).  The DMA zone is left out: the kernel's lowmem reserve
 * keeps it from the allocations of a collapse.  Returns 0, -EINVAL for a
 * line that is not "Node N, zone NAME" followed by 1 to 11 counts, or
 * -ERANGE for @min_order above 10.
 */
int mthpd_buddyinfo_parse(const char *buf, unsigned int min_order, uint64_t *ret);

/* The same, read from the proc root of @kif.  Returns 0 or -errno. */
int mthpd_buddyinfo_read(const struct mthpd_kif *kif, unsigned int min_order, uint64_t *ret);

#endif
