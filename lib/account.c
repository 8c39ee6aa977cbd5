/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "account.h"

void mthpd_account_range(struct mthpd_counters *c, const struct mthpd_range_scan *s,
			 const struct mthpd_range_plan *p, bool acted)
{
	c->scanned_ranges++;
	c->scanned_pages += mthpd_bitmap_weight(s->occupied, 0, MTHPD_PMD_NR);
	if (s->split_tried && s->split_result == MTHPD_SCAN_SUCCEED) {
		c->split_folios++;
		c->released_pages += s->released;
	}
	for (unsigned int i = 0; i < p->nr_blocks; i++) {
		const struct mthpd_block *b = &p->blocks[i];
		enum mthpd_scan_result r = b->action == MTHPD_ACTION_COLLAPSE && acted
						   ? (enum mthpd_scan_result)b->result
						   : (enum mthpd_scan_result)b->reason;

		if (b->action == MTHPD_ACTION_COLLAPSE)
			c->planned[b->order]++;
		switch (r) {
		case MTHPD_SCAN_SUCCEED:
			if (acted) {
				c->collapse_alloc[b->order]++;
				c->filled_pages += mthpd_block_empty(s, b);
			}
			break;
		case MTHPD_RESULT_REFILL_BACKOFF:
			c->refill_backoff++;
			break;
		case MTHPD_SCAN_ALLOC_HUGE_PAGE_FAIL:
			c->collapse_alloc_failed[b->order]++;
			break;
		case MTHPD_SCAN_EXCEED_NONE_PTE:
			c->collapse_exceed_none_pte[b->order]++;
			break;
		case MTHPD_SCAN_EXCEED_SWAP_PTE:
			c->collapse_exceed_swap_pte[b->order]++;
			break;
		case MTHPD_SCAN_EXCEED_SHARED_PTE:
			c->collapse_exceed_shared_pte[b->order]++;
			break;
		case MTHPD_SCAN_PMD_MAPPED:
		case MTHPD_SCAN_PTE_MAPPED_HUGEPAGE:
		case MTHPD_RESULT_UNSUPPORTED:
		case MTHPD_RESULT_OVER_BUDGET:
		case MTHPD_RESULT_HELD_ALLOC_FAILED: /* not attempted */
		case MTHPD_RESULT_PROCESS_EXITED: /* an exit is no failure of the collapse */
			break;
		default:
			if (b->action == MTHPD_ACTION_COLLAPSE && acted)
				c->collapse_failed[b->order]++;
			break;
		}
	}
}

void mthpd_account_add(struct mthpd_counters *into, const struct mthpd_counters *from)
{
	for (unsigned int o = 0; o <= MTHPD_PMD_ORDER; o++) {
		into->collapse_alloc[o] += from->collapse_alloc[o];
		into->collapse_alloc_failed[o] += from->collapse_alloc_failed[o];
		into->collapse_exceed_none_pte[o] += from->collapse_exceed_none_pte[o];
		into->collapse_exceed_swap_pte[o] += from->collapse_exceed_swap_pte[o];
		into->collapse_exceed_shared_pte[o] += from->collapse_exceed_shared_pte[o];
		into->collapse_failed[o] += from->collapse_failed[o];
		into->planned[o] += from->planned[o];
	}
	into->filled_pages += from->filled_pages;
	into->refill_backoff += from->refill_backoff;
	into->scanned_ranges += from->scanned_ranges;
	into->scanned_pages += from->scanned_pages;
	into->split_folios += from->split_folios;
	into->released_pages += from->released_pages;
	into->pace_rests += from->pace_rests;
	into->pace_rests_fault += from->pace_rests_fault;
}
