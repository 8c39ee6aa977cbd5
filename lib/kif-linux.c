/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "kif.h"
#include "util.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define MTHPD_PREFAULT_PAGE (2UL << 20)

static int linux_open_proc(const struct mthpd_kif *kif, const char *path, int flags)
{
	int fd = openat(kif->proc_fd, path, flags | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int linux_open_sys(const struct mthpd_kif *kif, const char *path, int flags)
{
	int fd = openat(kif->sys_fd, path, flags | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int linux_pidfd_open(const struct mthpd_kif *kif _unused_, pid_t pid)
{
	/* glibc 2.36 has a wrapper, but the raw call keeps older libcs building. */
	long fd = syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : (int)fd;
}

/* process_madvise() of one range.  Returns the bytes advised or -errno. */
static int64_t advise_one(int pidfd, uint64_t addr, uint64_t len, int advice, unsigned int flags)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	long r = syscall(SYS_process_madvise, pidfd, &iov, 1UL, advice, flags);

	return r < 0 ? -errno : r;
}

static int64_t linux_collapse(struct mthpd_kif *kif _unused_, int pidfd, uint64_t addr,
			      uint64_t len, unsigned int flags)
{
	return advise_one(pidfd, addr, len, MADV_COLLAPSE, flags);
}

static int64_t linux_collapse_batch(struct mthpd_kif *kif _unused_, int pidfd,
				    const struct mthpd_kif_block *blocks, size_t n, unsigned int flags)
{
	struct iovec iov[MTHPD_KIF_MAX_BLOCKS];
	long r;

	if (n == 0 || n > MTHPD_KIF_MAX_BLOCKS)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		iov[i] = (struct iovec){.iov_base = (void *)(uintptr_t)blocks[i].addr,
					.iov_len = blocks[i].len};
	r = syscall(SYS_process_madvise, pidfd, iov, (unsigned long)n, MADV_COLLAPSE, flags);
	return r < 0 ? -errno : r;
}

static int64_t linux_cold(struct mthpd_kif *kif _unused_, int pidfd, uint64_t addr, uint64_t len)
{
	return advise_one(pidfd, addr, len, MADV_COLD, 0);
}

static int linux_ioctl(const struct mthpd_kif *kif _unused_, int fd, unsigned long req,
		       void *arg)
{
	int r = ioctl(fd, req, arg);

	return r < 0 ? -errno : r;
}

static void linux_prefault(struct mthpd_kif *kif, size_t n)
{
	volatile uint8_t *area = kif->prefault_area;

	for (size_t i = 0; i < n; i++)
		area[i * MTHPD_PREFAULT_PAGE] = 1;
	(void)madvise(kif->prefault_area, n * MTHPD_PREFAULT_PAGE, MADV_DONTNEED);
}

static const struct mthpd_kif_ops linux_ops = {
	.open_proc = linux_open_proc,
	.open_sys = linux_open_sys,
	.pidfd_open = linux_pidfd_open,
	.collapse = linux_collapse,
	.collapse_batch = linux_collapse_batch,
	.cold = linux_cold,
	.ioctl = linux_ioctl,
	.prefault = linux_prefault,
};

int mthpd_kif_linux_init(const char *proc_root, const char *sys_root, struct mthpd_kif *ret,
			 const char **ret_failed_root)
{
	const char *p = proc_root ? proc_root : "/proc";
	const char *s = sys_root ? sys_root : "/sys";
	_cleanup_close_ int pfd = -1, sfd = -1;

	pfd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		if (ret_failed_root)
			*ret_failed_root = p;
		return -errno;
	}
	sfd = open(s, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0) {
		if (ret_failed_root)
			*ret_failed_root = s;
		return -errno;
	}
	*ret = (struct mthpd_kif){
		.ops = &linux_ops,
		.proc_fd = TAKE_FD(pfd),
		.sys_fd = TAKE_FD(sfd),
	};
	return 0;
}


int mthpd_kif_prefault_set(struct mthpd_kif *kif, bool on)
{
	const size_t len = MTHPD_PREFAULT_MAX * MTHPD_PREFAULT_PAGE;
	uint8_t *p;
	uintptr_t aligned;

	if (!on && kif->prefault_area) {
		(void)munmap(kif->prefault_area, len);
		kif->prefault_area = NULL;
	}
	if (!on || kif->prefault_area)
		return 0;
	/* one page more, to start on a 2 MiB boundary; the rest is unmapped */
	p = mmap(NULL, len + MTHPD_PREFAULT_PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	aligned = ((uintptr_t)p + MTHPD_PREFAULT_PAGE - 1) & ~(MTHPD_PREFAULT_PAGE - 1);
	if (aligned > (uintptr_t)p)
		(void)munmap(p, aligned - (uintptr_t)p);
	(void)munmap((void *)(aligned + len), (uintptr_t)p + MTHPD_PREFAULT_PAGE - aligned);
	/* THP=madvise hosts: without it each fault would give 4 KiB pages */
	if (madvise((void *)aligned, len, MADV_HUGEPAGE) < 0) {
		int r = -errno;

		(void)munmap((void *)aligned, len);
		return r;
	}
	kif->prefault_area = (void *)aligned;
	return 0;
}

bool mthpd_kif_free_page_reporting(const struct mthpd_kif *kif)
{
	int fd = kif->ops->open_sys(kif, "bus/virtio/drivers/virtio_balloon", O_RDONLY | O_DIRECTORY);
	bool yes = false;
	struct dirent *e;
	DIR *d;

	if (fd < 0)
		return false;
	d = fdopendir(fd);
	if (!d) {
		(void)close(fd);
		return false;
	}
	while (!yes && (e = readdir(d))) {
		char path[96 + sizeof(e->d_name)], feat[256];

		if (strncmp(e->d_name, "virtio", 6) != 0)
			continue;
		(void)snprintf(path, sizeof(path), "bus/virtio/drivers/virtio_balloon/%s/features",
			       e->d_name);
		/* the device's features: one '0' or '1' per bit, bit 0 first */
		yes = mthpd_kif_read_sys(kif, path, feat, sizeof(feat)) > 5 && feat[5] == '1';
	}
	(void)closedir(d);
	return yes;
}
