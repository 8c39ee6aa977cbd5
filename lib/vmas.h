/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The VMAs of a process that MADV_COLLAPSE can work on: private anonymous,
 * readable and writable (which leaves out [vvar], [vdso] and guard gaps),
 * holding at least one whole, aligned 2 MiB range (a range that spans two
 * VMAs fails with EINVAL), and not VM_NOHUGEPAGE.
 *
 * Read with the PROCMAP_QUERY ioctl (Linux 6.11+) where it works, else by
 * parsing /proc/PID/maps.  VM_NOHUGEPAGE is only visible in smaps VmFlags,
 * whose read walks every page table, so it is read separately and only when
 * the caller has something to collapse.
 */
#ifndef MTHPD_VMAS_H
#define MTHPD_VMAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kif.h"

/* A process controls how many VMAs it has: never keep more than this. */
#define MTHPD_MAX_VMAS 65536

struct mthpd_vma {
	uint64_t start;      /* first whole 2 MiB range */
	uint64_t end;        /* end of the last whole 2 MiB range */
	bool nohugepage;     /* smaps VmFlags "nh" (only after mthpd_vmas_read_nohugepage) */
};

/* One line of /proc/PID/maps, e.g.
 * "7f2a40000000-7f2a48000000 rw-p 00000000 00:00 0 \n"
 * "55d0c8a4e000-55d0c8a6f000 rw-p 00000000 00:00 0          [heap]\n" */
struct mthpd_maps_entry {
	uint64_t start, end, offset, inode;
	unsigned int dev_major, dev_minor;
	char perms[5];
	const char *name; /* points into the parsed line; "" when anonymous */
};

/* Pure.  Returns 0, or -EINVAL if @line is not a maps line. */
int mthpd_maps_parse_line(const char *line, struct mthpd_maps_entry *ret);

/* Pure: private anonymous rw, not a special mapping. */
bool mthpd_maps_entry_eligible(const struct mthpd_maps_entry *e);

/*
 * Lists the eligible VMAs of @pid, each trimmed to whole 2 MiB ranges.
 * @use_query selects PROCMAP_QUERY.  *ret is malloc'ed, owned by the caller.
 * Returns 0, -ESRCH if the process is gone, -E2BIG past MTHPD_MAX_VMAS, -errno.
 */
int mthpd_vmas_read(const struct mthpd_kif *kif, pid_t pid, bool use_query,
		    struct mthpd_vma **ret, size_t *ret_n);

/*
 * Sets .nohugepage from /proc/PID/smaps VmFlags for the VMAs in @v (sorted).
 * Returns 0 or -errno.
 */
int mthpd_vmas_read_nohugepage(const struct mthpd_kif *kif, pid_t pid, struct mthpd_vma *v,
			       size_t n);

/* What the kernel answered for a VMA: does MADV_COLLAPSE refuse it? */
struct mthpd_vma_verdict {
	uint64_t start, end;
	bool refused;
};

/* The verdict of @verdicts (sorted) for exactly this VMA: 1 refused, 0 not, -1 unknown. */
int mthpd_vma_verdict_lookup(const struct mthpd_vma_verdict *verdicts, size_t n,
			     const struct mthpd_vma *v);

/*
 * Would the kernel refuse MADV_COLLAPSE on VMA @i of @v (VM_NOHUGEPAGE:
 * thp_vma_allowable_order() fails, EINVAL)?  The cheap question is the
 * kernel's own: MADV_COLLAPSE of the VMA's first 4 KiB, which holds no whole
 * PMD and so collapses nothing, answers 0, or EINVAL for a refused VMA
 * (measured: 0.3-0.5 us, about 100 us once for the LRU drain it does).
 * Without a pidfd (@pidfd < 0), or where the call is not allowed, smaps
 * VmFlags "nh" tells, at the price of a walk of every page table of the
 * process, once: *@smaps_read says it was read, for all @n VMAs.
 * Returns 1 refused, 0 accepted, -ESRCH, -errno.
 */
int mthpd_vma_refused(struct mthpd_kif *kif, int pidfd, pid_t pid, struct mthpd_vma *v, size_t i,
		      size_t n, bool *smaps_read);

/* Probes PROCMAP_QUERY on @pid's maps.  Returns 1 supported, 0 not, -errno. */
int mthpd_vmas_query_probe(const struct mthpd_kif *kif, pid_t pid);

#endif
