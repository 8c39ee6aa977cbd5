/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kernel UAPI that Debian 12's linux-libc-dev (6.1) lacks, defined from
 * include/uapi/linux/fs.h of Linux 6.11: PAGEMAP_SCAN (6.7) and
 * PROCMAP_QUERY (6.11).  Sizes checked below; both are measured on this
 * project's 6.18 machines (96 and 104 bytes, 0xc0606610 and 0xc0686611).
 */
#ifndef MTHPD_UAPI_H
#define MTHPD_UAPI_H

#include <linux/ioctl.h>
#include <stdint.h>

#ifndef PAGEMAP_SCAN
#define PAGE_IS_WPALLOWED (1 << 0)
#define PAGE_IS_WRITTEN (1 << 1)
#define PAGE_IS_FILE (1 << 2)
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_SWAPPED (1 << 4)
#define PAGE_IS_PFNZERO (1 << 5)
#define PAGE_IS_HUGE (1 << 6)
#define PAGE_IS_SOFT_DIRTY (1 << 7)

struct page_region {
	uint64_t start;
	uint64_t end;
	uint64_t categories;
};

struct pm_scan_arg {
	uint64_t size;
	uint64_t flags;
	uint64_t start;
	uint64_t end;
	uint64_t walk_end;
	uint64_t vec;
	uint64_t vec_len;
	uint64_t max_pages;
	uint64_t category_inverted;
	uint64_t category_mask;
	uint64_t category_anyof_mask;
	uint64_t return_mask;
};

#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#endif

#ifndef PROCMAP_QUERY
enum procmap_query_flags {
	PROCMAP_QUERY_VMA_READABLE = 0x01,
	PROCMAP_QUERY_VMA_WRITABLE = 0x02,
	PROCMAP_QUERY_VMA_EXECUTABLE = 0x04,
	PROCMAP_QUERY_VMA_SHARED = 0x08,
	PROCMAP_QUERY_COVERING_OR_NEXT_VMA = 0x10,
	PROCMAP_QUERY_FILE_BACKED_VMA = 0x20,
};

struct procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};

#define PROCMAP_QUERY _IOWR('f', 17, struct procmap_query)
#endif

_Static_assert(sizeof(struct pm_scan_arg) == 96, "pm_scan_arg is 96 bytes");
_Static_assert(sizeof(struct procmap_query) == 104, "procmap_query is 104 bytes");

#endif
