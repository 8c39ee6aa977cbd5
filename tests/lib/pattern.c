/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

static int set_page(struct mthpd_range_scan *s, unsigned int i, char c, unsigned int order)
{
	switch (c) {
	case 'S':
		mthpd_set_bit(s->shared, i);
		__attribute__((fallthrough));
	case 'o':
		mthpd_set_bit(s->occupied, i);
		s->folio_order[i] = (uint8_t)order;
		return 0;
	case '.':
	case 'z':
		return 0;
	case 's':
		mthpd_set_bit(s->swap, i);
		return 0;
	case 'g':
		mthpd_set_bit(s->guard, i);
		return 0;
	default:
		return -EINVAL;
	}
}

int test_pattern_scan(const char *pattern, struct mthpd_range_scan *ret)
{
	const char *p = pattern;
	unsigned int n = 0;

	memset(ret, 0, sizeof(*ret));
	while (*p) {
		unsigned long count = 1, order = 0;
		const char *body;
		size_t len;
		char *end;

		if (*p == ' ') {
			p++;
			continue;
		}
		if (*p >= '0' && *p <= '9') {
			count = strtoul(p, &end, 10);
			p = end;
		}
		body = p;
		len = strcspn(body, ": ");
		if (len == 0 || count == 0)
			return -EINVAL;
		p = body + len;
		if (*p == ':') {
			order = strtoul(p + 1, &end, 10);
			if (end == p + 1 || order > MTHPD_PMD_ORDER)
				return -EINVAL;
			p = end;
			ret->folio_orders_known = true;
		}
		for (unsigned long k = 0; k < count; k++)
			for (size_t j = 0; j < len; j++) {
				if (n >= MTHPD_PMD_NR || set_page(ret, n, body[j], (unsigned int)order) < 0)
					return -EINVAL;
				n++;
			}
	}
	return n == MTHPD_PMD_NR ? 0 : -EINVAL;
}

static char page_letter(const struct mthpd_range_scan *s, unsigned int i)
{
	if (mthpd_bit(s->occupied, i))
		return mthpd_bit(s->shared, i) ? 'S' : 'o';
	if (mthpd_bit(s->guard, i))
		return 'g';
	if (mthpd_bit(s->swap, i))
		return 's';
	return '.';
}

char *test_pattern_describe(const struct mthpd_range_scan *s, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned int i = 0, j; i < MTHPD_PMD_NR && used < size; i = j) {
		const char c = page_letter(s, i);
		int r;

		for (j = i + 1; j < MTHPD_PMD_NR && page_letter(s, j) == c &&
				s->folio_order[j] == s->folio_order[i];
		     j++)
			;
		if (s->folio_order[i])
			r = snprintf(buf + used, size - used, "%s%u%c:%u", used ? " " : "", j - i,
				     c, s->folio_order[i]);
		else
			r = snprintf(buf + used, size - used, "%s%u%c", used ? " " : "", j - i, c);
		if (r < 0)
			break;
		used += (size_t)r;
	}
	return buf;
}
