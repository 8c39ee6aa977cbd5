/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The number parsers of the command line and the configuration: --sizes
 * (mthpd_parse_sizes), --max-ptes-* (mthpd_parse_uint), and the fields of
 * /proc/PID/stat the daemon reads.  Invariants: a size list that parses
 * names only orders 2..9 and prints back as a list that parses to the same
 * orders; a number is never above its maximum.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "knobs.h"
#include "plan.h"
#include "target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[256], name[96], bad[32];
	uint32_t orders = 0, again = 0;
	unsigned int v = 0;
	uint64_t faults;

	if (size > sizeof(s) - 1)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	if (mthpd_parse_sizes(s, &orders, bad, sizeof(bad)) == 0) {
		FUZZ_CHECK(orders != 0);
		FUZZ_CHECK((orders & ~(((1U << (MTHPD_PMD_ORDER + 1)) - 1) & ~3U)) == 0);
		mthpd_orders_name(orders, name, sizeof(name));
		FUZZ_CHECK(mthpd_parse_sizes(name, &again, bad, sizeof(bad)) == 0 && again == orders);
	}
	if (mthpd_parse_uint(s, 511, &v) == 0)
		FUZZ_CHECK(v <= 511);
	(void)mthpd_stat_parse_faults(s, &faults);
	(void)mthpd_stat_parse_kthread(s);
	return 0;
}
