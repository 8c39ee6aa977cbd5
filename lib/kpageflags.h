/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /proc/kpageflags: one 64-bit flag word per PFN
 * (include/uapi/linux/kernel-page-flags.h).  Read only where needed: it costs
 * 60-200 ns per PFN against 19 ns per pagemap entry (measured on 6.18).
 */
#ifndef MTHPD_KPAGEFLAGS_H
#define MTHPD_KPAGEFLAGS_H

#include <stdint.h>

#include "kif.h"

#define KPF_LOCKED 0
#define KPF_LRU 5
#define KPF_COMPOUND_HEAD 15
#define KPF_COMPOUND_TAIL 16
#define KPF_THP 22
#define KPF_ZERO_PAGE 24

#define KPF_BIT(b) (1ULL << (b))

/* Reads the flags of @nr consecutive PFNs from @pfn.  Returns 0 or -errno. */
int mthpd_kpageflags_read(int fd, uint64_t pfn, unsigned int nr, uint64_t *ret);

/*
 * Pure: a lower bound on the order of the large folio each page belongs to,
 * from the flags of a run of mapped pages.  @pfn[i] and @flags[i] describe
 * page i of @nr pages in virtual-address order; @valid[i] says whether page i
 * is mapped to a page whose flags were read.  A folio shows as a
 * COMPOUND_HEAD|THP page followed by COMPOUND_TAIL|THP pages with
 * consecutive PFNs; a head and n tails prove a folio of at least n + 1
 * pages, so of order ceil(log2(n + 1)) or more (all of it when it is fully
 * mapped here).  Tails whose head lies before the run count the head too.
 * The zero pages (4K and huge) are never folios here.  Small pages get 0.
 */
void mthpd_kpageflags_folio_orders(const uint64_t *pfn, const uint64_t *flags,
				   const uint8_t *valid, unsigned int nr, uint8_t *ret_order);

#endif
