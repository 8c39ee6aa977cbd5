/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The text parsers of /proc: a /proc/PID/maps line, /proc/self/mountinfo,
 * and a cgroup path's unit.  Invariants: a parsed maps line has start <=
 * end; a cgroup2 mount and a unit are non-empty strings that fit.
 */
#include <string.h>

#include "discover.h"
#include "fuzz.h"
#include "vmas.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mthpd_maps_entry e;
	char *s, mnt[256], unit[64];

	if (size > FUZZ_MAX_INPUT)
		return 0;
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (mthpd_maps_parse_line(s, &e) == 0) {
		FUZZ_CHECK(e.start <= e.end);
		(void)mthpd_maps_entry_eligible(&e);
	}
	if (mthpd_mountinfo_cgroup2(s, mnt, sizeof(mnt)) == 0)
		FUZZ_CHECK(mnt[0] != '\0' && strlen(mnt) < sizeof(mnt));
	if (mthpd_cgroup_unit(s, unit, sizeof(unit)) == 0)
		FUZZ_CHECK(unit[0] != '\0' && strlen(unit) < sizeof(unit));
	free(s);
	return 0;
}
