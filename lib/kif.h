/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel-interface table.  Every /proc and /sys file mthpd reads is opened
 * through it, relative to a proc root and a sys root, and every syscall that
 * reaches another process (pidfd_open, process_madvise) and every procfs
 * ioctl goes through it.  kif-linux.c is the real implementation; tests swap
 * in tests/lib/fake-kif.c, which records the collapse calls.
 * [chrony localp.h, sys.c, sys_null.c]
 */
#ifndef MTHPD_KIF_H
#define MTHPD_KIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mthpd_kif;

/* The most 2 MiB ranges mthpd puts in one collapse_batch() call. */
#define MTHPD_COLLAPSE_BATCH 32
/* The most blocks one collapse_batch() call takes (UIO_MAXIOV is 1024):
 * a 2 MiB range in blocks of the smallest mTHP size, 16 KiB. */
#define MTHPD_KIF_MAX_BLOCKS 128

/*
 * Prefault: the most 2 MiB pages mthpd faults in and frees before one
 * call, and so the most 2 MiB ranges of a call when it does (8 MiB of
 * its own memory for a moment).
 */
#define MTHPD_PREFAULT_MAX 4

/* One iovec of a collapse_batch() call: a block of the target's memory. */
struct mthpd_kif_block {
	uint64_t addr, len;
};

struct mthpd_kif_ops {
	/* openat(proc root, path, flags | O_CLOEXEC).  Returns fd or -errno. */
	int (*open_proc)(const struct mthpd_kif *kif, const char *path, int flags);
	/* openat(sys root, path, flags | O_CLOEXEC).  Returns fd or -errno. */
	int (*open_sys)(const struct mthpd_kif *kif, const char *path, int flags);
	/* pidfd_open(pid, 0).  Returns fd or -errno. */
	int (*pidfd_open)(const struct mthpd_kif *kif, pid_t pid);
	/*
	 * process_madvise(pidfd, {addr, len}, 1, MADV_COLLAPSE, flags).
	 * Returns the bytes advised (>= 0) or -errno.
	 */
	int64_t (*collapse)(struct mthpd_kif *kif, int pidfd, uint64_t addr, uint64_t len,
			    unsigned int flags);
	/*
	 * process_madvise(pidfd, iov, @n, MADV_COLLAPSE, @flags) with one
	 * iovec per block of @blocks (@n <= MTHPD_KIF_MAX_BLOCKS).  The kernel
	 * works through them in order and stops at the first that fails:
	 * returns the bytes advised before it (all of them when all
	 * succeeded), or -errno when the first one failed.
	 */
	int64_t (*collapse_batch)(struct mthpd_kif *kif, int pidfd,
				  const struct mthpd_kif_block *blocks, size_t n, unsigned int flags);
	/*
	 * process_madvise(pidfd, {addr, len}, 1, MADV_COLD, 0): for mthpd,
	 * the split of a large folio the range does not cover whole.
	 * Returns the bytes advised (>= 0) or -errno.
	 */
	int64_t (*cold)(struct mthpd_kif *kif, int pidfd, uint64_t addr, uint64_t len);
	/* ioctl(fd, req, arg) on an fd from open_proc.  Returns >= 0 or -errno. */
	int (*ioctl)(const struct mthpd_kif *kif, int fd, unsigned long req, void *arg);
	/*
	 * Faults in @n (1..MTHPD_PREFAULT_MAX) 2 MiB pages of kif->prefault_area
	 * and frees them (MADV_DONTNEED): see mthpd_kif_prefault().
	 */
	void (*prefault)(struct mthpd_kif *kif, size_t n);
};

struct mthpd_kif {
	const struct mthpd_kif_ops *ops;
	int proc_fd;
	int sys_fd;
	void *priv; /* implementation's own state (the fake's call log) */
	/* MTHPD_PREFAULT_MAX 2 MiB-aligned pages of address space, or NULL: no prefault */
	void *prefault_area;
	/*
	 * The longest a 2 MiB range was held by one collapse call since the
	 * caller last zeroed it: the call's wall time divided by its ranges
	 * (mthpd_act's calls).  A thread of the service that touched the
	 * range waited at most that long (pace=auto, lib/pace.h).
	 */
	uint64_t held_max_usec;
};

/*
 * Before a collapse of @n 2 MiB ranges (@n is cut to MTHPD_PREFAULT_MAX),
 * when prefault is on: faults in that many 2 MiB pages of mthpd's own and
 * frees them at once.  The kernel keeps a freed 2 MiB page on the CPU's
 * list of free pages, and the collapse that follows on the same CPU takes
 * it from there for its new huge page.
 *
 * Why: the collapse copies the range's 512 pages into the new page while
 * the target's mmap lock is held and the range is unmapped; every thread
 * of the service that touches the range waits for it.  On a guest whose
 * free memory is given back to the host (free page reporting), the new
 * page is not backed until written, and each of its first writes in the
 * copy is a fault on the host: 4.1 ms a range against 0.47 ms with a page
 * mthpd faulted in first (bench/README.md, "Prefault").  The fault moves
 * to mthpd's own time, where nobody waits for it.
 */
static inline void mthpd_kif_prefault(struct mthpd_kif *kif, size_t n)
{
	if (kif->prefault_area && kif->ops->prefault && n > 0)
		kif->ops->prefault(kif, n < MTHPD_PREFAULT_MAX ? n : MTHPD_PREFAULT_MAX);
}

/*
 * Turns prefault on (reserves kif->prefault_area: address space only,
 * MADV_HUGEPAGE) or off (unmaps it).  Returns 0 or -errno.
 */
int mthpd_kif_prefault_set(struct mthpd_kif *kif, bool on);

/*
 * Does the host take this guest's free memory back?  True when a
 * virtio-balloon device below the sys root offers free page reporting
 * (VIRTIO_BALLOON_F_REPORTING, feature bit 5).  What prefault=auto asks.
 */
bool mthpd_kif_free_page_reporting(const struct mthpd_kif *kif);

/*
 * Opens the two roots ("/proc" and "/sys" when NULL) and fills @ret with the
 * Linux implementation.  Returns 0, or -errno naming the root that failed to
 * open in *ret_failed_root when that is non-NULL.
 */
int mthpd_kif_linux_init(const char *proc_root, const char *sys_root, struct mthpd_kif *ret,
			 const char **ret_failed_root);

/* Closes the roots.  Accepts a zeroed or half-initialised kif. */
void mthpd_kif_done(struct mthpd_kif *kif);

/* Convenience: read a whole small file below the proc or sys root into buf,
 * NUL-terminated.  Returns the length read or -errno (-EFBIG if it does not
 * fit). */
int mthpd_kif_read_proc(const struct mthpd_kif *kif, const char *path, char *buf, size_t size);
int mthpd_kif_read_sys(const struct mthpd_kif *kif, const char *path, char *buf, size_t size);

/* pread() of exactly @len bytes at @off, across short reads and EINTR.
 * Returns 0, -ENODATA when the file ends first, -errno. */
int mthpd_pread_full(int fd, void *buf, size_t len, uint64_t off);

#endif
