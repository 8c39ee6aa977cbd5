/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pagemap and kpageflags decoding, then the order walk: the input is 512
 * pagemap entries (missing ones are 0), 512 kpageflags words after them for
 * the folio orders, and knobs from its first bytes.  Invariants: the
 * bitmaps agree with the entries, and every planned block is naturally
 * aligned, inside the range, of an enabled order, with its occupancy and
 * its action consistent with its reason.
 */
#include <string.h>

#include "fuzz.h"
#include "kpageflags.h"
#include "plan.h"
#include "scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t e[MTHPD_PMD_NR], flags[MTHPD_PMD_NR], pfn[MTHPD_PMD_NR];
	static struct mthpd_range_scan scan;
	static struct mthpd_range_plan plan;
	static uint8_t valid[MTHPD_PMD_NR];
	struct mthpd_scan_ctx sc;
	struct mthpd_knobs k;
	size_t n;

	if (size < 4 || size > 2 * sizeof(e) + 4)
		return 0;
	k = (struct mthpd_knobs){
		/* 2M always, and any of the smaller orders the first byte says */
		.orders = (1U << MTHPD_PMD_ORDER) | ((uint32_t)data[0] << MTHPD_MIN_ORDER & 0x1fcU),
		.max_ptes_none = data[1] % 2 ? 511U : data[2] % 512U,
		.max_ptes_swap = data[2] % 512U,
		.max_ptes_shared = data[3] % 512U,
	};
	data += 4;
	size -= 4;
	memset(e, 0, sizeof(e));
	memset(flags, 0, sizeof(flags));
	n = size < sizeof(e) ? size : sizeof(e);
	memcpy(e, data, n);
	if (size > sizeof(e))
		memcpy(flags, data + sizeof(e), size - sizeof(e));

	mthpd_scan_ctx_init(&sc, -1, false);
	FUZZ_CHECK(mthpd_scan_range(&sc, 0x7f0000000000ULL, e, &scan) == 0);
	for (unsigned int i = 0; i < MTHPD_PMD_NR; i++) {
		if (mthpd_bit(scan.occupied, i) && !scan.pmd_mapped)
			FUZZ_CHECK(mthpd_pagemap_kind(e[i]) == MTHPD_PTE_PRESENT);
		if (mthpd_bit(scan.shared, i))
			FUZZ_CHECK(mthpd_bit(scan.occupied, i));
		pfn[i] = mthpd_pagemap_pfn(e[i]);
		valid[i] = mthpd_bit(scan.occupied, i);
	}
	if (!scan.pmd_mapped) {
		mthpd_kpageflags_folio_orders(pfn, flags, valid, MTHPD_PMD_NR, scan.folio_order);
		scan.folio_orders_known = true;
	}
	mthpd_plan_range(&scan, &k, NULL, NULL, &plan);
	FUZZ_CHECK(plan.nr_blocks <= MTHPD_PLAN_MAX_BLOCKS);
	for (unsigned int i = 0; i < plan.nr_blocks; i++) {
		const struct mthpd_block *b = &plan.blocks[i];

		FUZZ_CHECK(b->order >= MTHPD_MIN_ORDER && b->order <= MTHPD_PMD_ORDER);
		FUZZ_CHECK(k.orders & (1U << b->order));
		FUZZ_CHECK(b->offset % (1U << b->order) == 0);
		FUZZ_CHECK(b->offset + (1U << b->order) <= MTHPD_PMD_NR);
		FUZZ_CHECK(b->occupied <= (1U << b->order));
		FUZZ_CHECK((b->action == MTHPD_ACTION_COLLAPSE) == (b->reason == MTHPD_SCAN_SUCCEED));
	}
	return 0;
}
