/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "hold.h"

enum mthpd_hold mthpd_hold_decide(const struct mthpd_hold_in *in)
{
	/* a hold of the last visit that has ended: at once, not after the quiet minute */
	bool released = in->held_before && !in->pressure && !in->alloc_pause && !in->budget_spent;

	if (in->settled && !released)
		return MTHPD_HOLD_SETTLED;
	/* pace=: a pass does not cut a rest short, the pace timer ends it */
	if (in->resting)
		return MTHPD_HOLD_RESTING;
	/* min_age=: a service finishes starting first */
	if (in->young)
		return MTHPD_HOLD_YOUNG;
	/* the settings first, then what passes */
	if (in->dry_run)
		return MTHPD_HOLD_DRY_RUN;
	if (in->pressure)
		return MTHPD_HOLD_PRESSURE;
	if (in->alloc_pause)
		return MTHPD_HOLD_ALLOC_PAUSE;
	if (in->budget_spent)
		return MTHPD_HOLD_OVER_BUDGET;
	if (in->plan_only)
		return MTHPD_HOLD_PLAN_ONLY;
	return MTHPD_HOLD_NONE;
}

bool mthpd_hold_visits(enum mthpd_hold h)
{
	return h != MTHPD_HOLD_SETTLED && h != MTHPD_HOLD_RESTING && h != MTHPD_HOLD_YOUNG;
}

enum mthpd_scan_result mthpd_hold_result(enum mthpd_hold h)
{
	switch (h) {
	case MTHPD_HOLD_PRESSURE:
		return MTHPD_RESULT_HELD_PRESSURE;
	case MTHPD_HOLD_ALLOC_PAUSE:
		return MTHPD_RESULT_HELD_ALLOC_FAILED;
	case MTHPD_HOLD_OVER_BUDGET:
		return MTHPD_RESULT_OVER_BUDGET;
	case MTHPD_HOLD_NONE:
	case MTHPD_HOLD_SETTLED:
	case MTHPD_HOLD_RESTING:
	case MTHPD_HOLD_YOUNG:
	case MTHPD_HOLD_DRY_RUN:
	case MTHPD_HOLD_PLAN_ONLY:
		break;
	}
	/* planned, not attempted: a dry run, or a plan-only daemon */
	return MTHPD_RESULT_DRY_RUN;
}

const char *mthpd_hold_name(enum mthpd_hold h)
{
	switch (h) {
	case MTHPD_HOLD_NONE:
		return "none";
	case MTHPD_HOLD_SETTLED:
		return "settled";
	case MTHPD_HOLD_RESTING:
		return "resting";
	case MTHPD_HOLD_YOUNG:
		return "young";
	case MTHPD_HOLD_DRY_RUN:
		return "dry_run";
	case MTHPD_HOLD_PRESSURE:
		return "pressure";
	case MTHPD_HOLD_ALLOC_PAUSE:
		return "alloc_pause";
	case MTHPD_HOLD_OVER_BUDGET:
		return "over_budget";
	case MTHPD_HOLD_PLAN_ONLY:
		return "plan_only";
	}
	return "?";
}

uint64_t mthpd_hold_probe_delay(unsigned int failures, uint64_t max_usec)
{
	uint64_t wait = max_usec / 8;

	if (failures == 0)
		return 0;
	if (wait < MTHPD_HOLD_PROBE_FIRST_USEC)
		wait = MTHPD_HOLD_PROBE_FIRST_USEC;
	/* doubles from the first, without overflow: at most @max_usec anyway */
	for (unsigned int i = 1; i < failures && wait < max_usec; i++)
		wait *= 2;
	return wait < max_usec ? wait : max_usec;
}

bool mthpd_hold_alloc_freed(uint64_t free_then, uint64_t free_now)
{
	if (free_then == UINT64_MAX || free_now == UINT64_MAX)
		return false;
	return free_now > free_then + free_then / 8;
}
