/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kernel features, detected once at start on mthpd's own memory.
 */
#ifndef MTHPD_FEATURES_H
#define MTHPD_FEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kif.h"

/*
 * Collapse below PMD order (contrib/kernel): what the kernel answered to
 * process_madvise(MADV_COLLAPSE, PMADV_COLLAPSE_ORDER) on a valid block of
 * mthpd's own memory, per order.
 */
enum mthpd_subpmd {
	MTHPD_SUBPMD_UNKNOWN,   /* not probed (synthetic root) or the probe failed */
	MTHPD_SUBPMD_UNPATCHED, /* EINVAL: the kernel does not know the flag */
	MTHPD_SUBPMD_PATCHED,   /* the flag is known; subpmd_orders says which sizes work */
};

/* Does process_madvise(MADV_COLD) split a 2 MiB folio mapped in part? */
enum mthpd_split {
	MTHPD_SPLIT_UNPROBED, /* not asked (plan, collapse): not described */
	MTHPD_SPLIT_UNKNOWN,  /* the probe could not make a THP, or read it */
	MTHPD_SPLIT_NO,
	MTHPD_SPLIT_YES,
};

struct mthpd_features {
	bool pagemap_scan;    /* PAGEMAP_SCAN ioctl on pagemap (6.7+) */
	bool procmap_query;   /* PROCMAP_QUERY ioctl on maps (6.11+) */
	bool pfns_visible;    /* pagemap shows PFNs (CAP_SYS_ADMIN) */
	enum mthpd_subpmd subpmd;
	uint32_t subpmd_orders; /* PATCHED: bit n set if order n collapsed (EOPNOTSUPP: disabled) */
	int subpmd_errno;       /* UNKNOWN: why the probe could not tell */
	enum mthpd_split split;
};

/* The kernel can collapse a block of @order now (PMD order always can). */
bool mthpd_features_can_collapse(const struct mthpd_features *f, unsigned int order);

/*
 * Probes the running kernel through @kif with a 2 MiB scratch mapping of
 * mthpd's own ("self" below the proc root).  A kernel without a feature, or
 * a synthetic proc root, reports it absent.  Returns 0 or -errno (ENOMEM).
 */
int mthpd_features_probe(struct mthpd_kif *kif, struct mthpd_features *ret);

/*
 * Only the sub-PMD part of the probe (on its own scratch mapping): sizes can
 * be enabled and disabled in sysfs at any time, so the daemon asks again on
 * reload.  Returns 0 or -errno (ENOMEM).
 */
int mthpd_features_probe_subpmd(struct mthpd_kif *kif, struct mthpd_features *f);

/*
 * Whether the kernel splits a 2 MiB folio mapped in part on MADV_COLD
 * (act.c: mthpd_act_split()), tried on a THP of mthpd's own: sets
 * f->split.  Costs a 2 MiB fault (or a MADV_COLLAPSE), so only the daemon
 * asks, once at start.  @kpageflags_fd: /proc/kpageflags.  Returns 0 or
 * -errno (ENOMEM).
 */
int mthpd_features_probe_split(struct mthpd_kif *kif, int kpageflags_fd, struct mthpd_features *f);

/*
 * "pagemap_scan=yes procmap_query=yes pfns=yes subpmd_collapse=patched:64K,16K"
 * for the log and `plan`; subpmd_collapse is one of unpatched, patched:SIZES
 * (largest first, as sizes= lists them),
 * patched:none (every size below 2M disabled in sysfs) or unknown(ERRNO);
 * then, once probed, " split_partial=yes" (or no, unknown).
 */
const char *mthpd_features_describe(const struct mthpd_features *f, char *buf, size_t size);

#endif
