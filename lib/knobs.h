/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Knob parsing shared by the CLI and (later) the policy files: folio sizes,
 * the max_ptes_* limits, and their defaults from khugepaged's sysfs knobs.
 */
#ifndef MTHPD_KNOBS_H
#define MTHPD_KNOBS_H

#include <stddef.h>
#include <stdint.h>

#include "kif.h"
#include "plan.h"

/*
 * Parses "2M,64K" into a bitmask of orders (bit 9 for 2M, bit 4 for 64K).
 * Sizes are powers of two from 16K to 2M with a K or M suffix, any case.
 * Returns 0, or -EINVAL and the offending item (at most @bad_size bytes,
 * NUL-terminated) in @bad.
 */
int mthpd_parse_sizes(const char *s, uint32_t *ret_orders, char *bad, size_t bad_size);

/* Parses a decimal in [0, max] with nothing after it.  Returns 0, -EINVAL, -ERANGE. */
int mthpd_parse_uint(const char *s, unsigned int max, unsigned int *ret);

/* "2M", "64K"... for order 2..9. */
const char *mthpd_order_name(unsigned int order);

/* "2M,64K": the sizes of @orders, largest first, as a sizes= line takes them;
 * "" for none.  Returns @buf. */
const char *mthpd_orders_name(uint32_t orders, char *buf, size_t size);

/*
 * Reads max_ptes_{none,swap,shared} from
 * kernel/mm/transparent_hugepage/khugepaged/ below the sys root, those whose
 * bit is set in @which (1 none, 2 swap, 4 shared); the others are 0 in @ret.
 * Returns 0, or -errno with the failing file's name in *ret_failed.
 */
int mthpd_knobs_read_sysfs(const struct mthpd_kif *kif, unsigned int which,
			   struct mthpd_knobs *ret, const char **ret_failed);

#endif
