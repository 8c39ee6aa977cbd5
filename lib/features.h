/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kernel features, detected once at start on mthpd's own memory.
 */
#ifndef MTHPD_FEATURES_H
#define MTHPD_FEATURES_H

#include <stdbool.h>

#include "kif.h"

struct mthpd_features {
	bool pagemap_scan;    /* PAGEMAP_SCAN ioctl on pagemap (6.7+) */
	bool procmap_query;   /* PROCMAP_QUERY ioctl on maps (6.11+) */
	bool pfns_visible;    /* pagemap shows PFNs (CAP_SYS_ADMIN) */
	bool subpmd_collapse; /* process_madvise(MADV_COLLAPSE) takes the contrib order flag */
	int subpmd_errno;     /* what the sub-PMD probe answered (0 on success) */
};

/*
 * Probes the running kernel through @kif with a 2 MiB scratch mapping of
 * mthpd's own ("self" below the proc root).  A kernel without a feature, or
 * a synthetic proc root, reports it absent.  Returns 0 or -errno (ENOMEM).
 */
int mthpd_features_probe(struct mthpd_kif *kif, struct mthpd_features *ret);

/* "pagemap_scan procmap_query ..." for the log and `plan`. */
const char *mthpd_features_describe(const struct mthpd_features *f, char *buf, size_t size);

#endif
