/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "knobs.h"
#include "pace.h"

uint64_t mthpd_pace_charge(uint64_t *next, uint64_t now, uint64_t work_usec, unsigned int percent)
{
	uint64_t start = now > work_usec ? now - work_usec : 0;

	if (percent == 0 || percent >= 100)
		return 0;
	/* A clock behind the slice's start is time not used: it is not saved up. */
	if (*next < start)
		*next = start;
	/* at most an hour of work per charge: no product can wrap */
	if (work_usec > 3600ULL * 1000000ULL)
		work_usec = 3600ULL * 1000000ULL;
	*next += work_usec * 100 / percent;
	return mthpd_pace_wait(*next, now);
}

uint64_t mthpd_pace_wait(uint64_t next, uint64_t now)
{
	return next > now + MTHPD_PACE_SLACK_USEC ? next - now : 0;
}

int mthpd_pace_parse(const char *v, struct mthpd_pace_conf *ret)
{
	char num[8];
	size_t len = strlen(v);
	unsigned int pct;

	if (strcasecmp(v, "no") == 0) {
		*ret = (struct mthpd_pace_conf){0};
		return 0;
	}
	if (strcasecmp(v, "yes") == 0) {
		*ret = (struct mthpd_pace_conf){.percent = MTHPD_PACE_DEFAULT_PERCENT};
		return 0;
	}
	if (strcasecmp(v, "auto") == 0) {
		*ret = (struct mthpd_pace_conf){.autop = true};
		return 0;
	}
	if (len > 0 && v[len - 1] == '%')
		len--;
	if (len == 0 || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, v, len);
	num[len] = '\0';
	if (mthpd_parse_uint(num, 100, &pct) < 0 || pct == 0)
		return -EINVAL;
	/* 100%: all the time, which is what not pacing does */
	*ret = (struct mthpd_pace_conf){.percent = pct == 100 ? 0 : pct};
	return 0;
}

unsigned int mthpd_pace_auto_share(unsigned int level)
{
	static const unsigned int share[MTHPD_PACE_AUTO_MAX_LEVEL + 1] = {100, MTHPD_PACE_DEFAULT_PERCENT};

	return share[level < MTHPD_PACE_AUTO_MAX_LEVEL ? level : MTHPD_PACE_AUTO_MAX_LEVEL];
}

void mthpd_pace_auto_start(struct mthpd_pace_auto *a, uint64_t now, const struct mthpd_pace_felt *f)
{
	a->start = now;
	a->cpu = 0;
	a->held = 0;
	a->mark = *f;
}

uint64_t mthpd_pace_auto_charge(struct mthpd_pace_auto *a, uint64_t *next, uint64_t now,
				uint64_t cpu_usec, const struct mthpd_pace_felt *f)
{
	uint64_t wall = now > a->start ? now - a->start : 0;
	bool stall_known = f->stall_known && a->mark.stall_known;
	bool faults_known = f->faults_known && a->mark.faults_known;
	uint64_t waited, faults, rest, share;
	bool faulted, blind, felt;

	a->cpu += cpu_usec;
	if (f->held > a->held)
		a->held = f->held;
	/* a total that went back (another cgroup of the same name) says nothing */
	waited = stall_known && f->stall >= a->mark.stall ? f->stall - a->mark.stall : 0;
	faults = faults_known && f->faults > a->mark.faults ? f->faults - a->mark.faults : 0;
	faulted = faults > 0;
	/*
	 * Each fault: the service waited at most the longest hold of the
	 * window (at most 10 s a fault, 10^6 faults: no product can wrap).
	 * With no hold known, a fault is felt whatever it cost.
	 */
	blind = faulted && a->held == 0;
	if (faulted && !blind)
		waited += (faults < 1000000 ? faults : 1000000) * (a->held < 10000000 ? a->held : 10000000);
	/*
	 * The window goes on until it is long enough to judge, unless the
	 * service already waited more than a whole window allows.
	 */
	if (wall < MTHPD_PACE_AUTO_WINDOW_USEC && !blind &&
	    (!stall_known || waited * 100 <= MTHPD_PACE_AUTO_WINDOW_USEC * MTHPD_PACE_AUTO_STALL_PERCENT)) {
		*next = now;
		return 0;
	}
	felt = !stall_known || blind || waited * 100 > wall * MTHPD_PACE_AUTO_STALL_PERCENT;
	if (!felt) {
		if (a->level > 0)
			a->level--;
		rest = 0;
	} else {
		/* unknown: the first share, not less and less as if it felt more */
		if (!stall_known && !faulted)
			a->level = 1;
		else if (a->level < MTHPD_PACE_AUTO_MAX_LEVEL)
			a->level++;
		a->felt_windows++;
		a->faulted_windows += faulted;
		share = mthpd_pace_auto_share(a->level);
		/* at most an hour of CPU per window: no product can wrap */
		rest = (a->cpu < 3600ULL * 1000000ULL ? a->cpu : 3600ULL * 1000000ULL) * (100 - share) / share;
		if (rest > MTHPD_PACE_AUTO_MAX_REST_USEC)
			rest = MTHPD_PACE_AUTO_MAX_REST_USEC;
		/* a rest shorter than a timer's wake-up is not taken */
		if (rest <= MTHPD_PACE_SLACK_USEC)
			rest = 0;
	}
	/*
	 * The next window begins here; after a rest, the visit that goes on
	 * begins it again when the rest is over (what the service felt
	 * during the rest is not the daemon's doing).
	 */
	*next = now + rest;
	mthpd_pace_auto_start(a, now, f);
	return rest;
}
