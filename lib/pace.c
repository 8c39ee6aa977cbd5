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

int mthpd_pace_parse(const char *v, unsigned int *ret)
{
	char num[8];
	size_t len = strlen(v);
	unsigned int pct;

	if (strcasecmp(v, "no") == 0) {
		*ret = 0;
		return 0;
	}
	if (strcasecmp(v, "yes") == 0) {
		*ret = MTHPD_PACE_DEFAULT_PERCENT;
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
	*ret = pct == 100 ? 0 : pct;
	return 0;
}
