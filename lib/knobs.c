/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knobs.h"
#include "util.h"

static const char *const order_names[MTHPD_PMD_ORDER + 1] = {
	[2] = "16K", [3] = "32K", [4] = "64K", [5] = "128K",
	[6] = "256K", [7] = "512K", [8] = "1M", [9] = "2M",
};

const char *mthpd_order_name(unsigned int order)
{
	if (order < MTHPD_MIN_ORDER || order > MTHPD_PMD_ORDER)
		return "?";
	return order_names[order];
}

const char *mthpd_orders_name(uint32_t orders, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned int o = MTHPD_PMD_ORDER; o >= MTHPD_MIN_ORDER; o--) {
		int w;

		if (!(orders & (1U << o)))
			continue;
		w = snprintf(buf + n, size - n, "%s%s", n ? "," : "", mthpd_order_name(o));
		if (w < 0 || (size_t)w >= size - n) {
			buf[n] = '\0'; /* no half name */
			break;
		}
		n += (size_t)w;
	}
	return buf;
}

static int parse_size(const char *item, unsigned int *ret_order)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)item[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(item, &end, 10);
	if (errno || end == item)
		return -EINVAL;
	/* No size here is above 2M: anything larger is refused before the multiply wraps. */
	if (v > 2048)
		return -EINVAL;
	if ((end[0] == 'K' || end[0] == 'k') && end[1] == '\0')
		v *= 1024;
	else if ((end[0] == 'M' || end[0] == 'm') && end[1] == '\0')
		v *= 1024 * 1024;
	else
		return -EINVAL;
	for (unsigned int o = MTHPD_MIN_ORDER; o <= MTHPD_PMD_ORDER; o++)
		if (v == 4096ULL << o) {
			*ret_order = o;
			return 0;
		}
	return -EINVAL;
}

int mthpd_parse_sizes(const char *s, uint32_t *ret_orders, char *bad, size_t bad_size)
{
	uint32_t orders = 0;
	const char *p = s;

	for (;;) {
		size_t len = strcspn(p, ",");
		char item[32];
		unsigned int order;

		if (len == 0 || len >= sizeof(item) ||
		    (memcpy(item, p, len), item[len] = '\0', parse_size(item, &order) < 0)) {
			if (bad && bad_size) {
				size_t n = len < bad_size - 1 ? len : bad_size - 1;

				memcpy(bad, p, n);
				bad[n] = '\0';
			}
			return -EINVAL;
		}
		orders |= 1U << order;
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	*ret_orders = orders;
	return 0;
}

int mthpd_parse_uint(const char *s, unsigned int max, unsigned int *ret)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || *end != '\0')
		return -EINVAL;
	if (v > max)
		return -ERANGE;
	*ret = (unsigned int)v;
	return 0;
}

int mthpd_knobs_read_sysfs(const struct mthpd_kif *kif, unsigned int which,
			   struct mthpd_knobs *ret, const char **ret_failed)
{
	static const char *const files[] = {
		"kernel/mm/transparent_hugepage/khugepaged/max_ptes_none",
		"kernel/mm/transparent_hugepage/khugepaged/max_ptes_swap",
		"kernel/mm/transparent_hugepage/khugepaged/max_ptes_shared",
	};
	unsigned int v[ARRAY_SIZE(files)] = {0};

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char buf[32];
		int r;

		if (!(which & (1U << i)))
			continue;
		r = mthpd_kif_read_sys(kif, files[i], buf, sizeof(buf));

		if (r >= 0) {
			buf[strcspn(buf, "\n")] = '\0';
			r = mthpd_parse_uint(buf, MTHPD_MAX_PTES_LIMIT, &v[i]);
		}
		if (r < 0) {
			if (ret_failed)
				*ret_failed = files[i];
			return r;
		}
	}
	ret->max_ptes_none = v[0];
	ret->max_ptes_swap = v[1];
	ret->max_ptes_shared = v[2];
	return 0;
}
