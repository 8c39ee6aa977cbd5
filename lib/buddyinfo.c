/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buddyinfo.h"

/* The orders the kernel shows: 0 to MAX_PAGE_ORDER (10 on x86-64 and arm64 with 4K pages). */
#define BUDDY_ORDERS 11

/*
 * Sample (Linux 6.18), one line per zone:
 *   Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3
 *   Node 0, zone    DMA32      0      4      2      2      1      2      0      3      3      1    753
 *   Node 0, zone   Normal   6686   6028   3036   1458   1327    479     49    130     47      2    656
 */
static int parse_line(const char *line, const char *end, unsigned int min_order, uint64_t *sum)
{
	const char *p = line, *zone;
	size_t zone_len;
	unsigned int order = 0;
	char *q;

	if (strncmp(p, "Node ", 5) != 0)
		return -EINVAL;
	errno = 0;
	(void)strtoul(p + 5, &q, 10);
	if (errno || q == p + 5 || strncmp(q, ", zone", 6) != 0)
		return -EINVAL;
	p = q + 6;
	while (p < end && *p == ' ')
		p++;
	zone = p;
	while (p < end && *p != ' ')
		p++;
	zone_len = (size_t)(p - zone);
	if (zone_len == 0)
		return -EINVAL;
	for (;;) {
		unsigned long long n;

		while (p < end && *p == ' ')
			p++;
		if (p >= end)
			break;
		if (*p < '0' || *p > '9' || order >= BUDDY_ORDERS)
			return -EINVAL;
		errno = 0;
		n = strtoull(p, &q, 10);
		if (errno || q > end)
			return -EINVAL;
		p = q;
		/* DMA: the lowmem reserve keeps a collapse's allocation out of it */
		if (order >= min_order && !(zone_len == 3 && strncmp(zone, "DMA", 3) == 0))
			*sum += n << (order - min_order);
		order++;
	}
	return order > 0 ? 0 : -EINVAL;
}

int mthpd_buddyinfo_parse(const char *buf, unsigned int min_order, uint64_t *ret)
{
	uint64_t sum = 0;

	if (min_order >= BUDDY_ORDERS)
		return -ERANGE;
	for (const char *line = buf; *line;) {
		const char *end = strchr(line, '\n');
		const char *next = end ? end + 1 : line + strlen(line);
		int r;

		if (!end)
			end = next;
		/* the kernel ends each line with a space */
		while (end > line && end[-1] == ' ')
			end--;
		if (end > line) {
			r = parse_line(line, end, min_order, &sum);
			if (r < 0)
				return r;
		}
		line = next;
	}
	*ret = sum;
	return 0;
}

int mthpd_buddyinfo_read(const struct mthpd_kif *kif, unsigned int min_order, uint64_t *ret)
{
	char buf[16384];
	int r = mthpd_kif_read_proc(kif, "buddyinfo", buf, sizeof(buf));

	return r < 0 ? r : mthpd_buddyinfo_parse(buf, min_order, ret);
}
