/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers over any struct mthpd_kif implementation. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "kif.h"
#include "util.h"

void mthpd_kif_done(struct mthpd_kif *kif)
{
	if (!kif)
		return;
	if (kif->ops && kif->proc_fd >= 0)
		(void)close(kif->proc_fd);
	if (kif->ops && kif->sys_fd >= 0)
		(void)close(kif->sys_fd);
	kif->proc_fd = kif->sys_fd = -1;
	if (kif->ops && kif->prefault_area)
		(void)mthpd_kif_prefault_set(kif, false);
}

static int read_all(int fd, char *buf, size_t size)
{
	size_t n = 0;

	if (size == 0)
		return -EINVAL;
	for (;;) {
		ssize_t r = read(fd, buf + n, size - 1 - n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == size - 1) {
			char c;

			/* Full buffer: only fine if the file ends exactly here. */
			r = read(fd, &c, 1);
			if (r > 0)
				return -EFBIG;
			break;
		}
	}
	buf[n] = '\0';
	return (int)n;
}

int mthpd_kif_read_proc(const struct mthpd_kif *kif, const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = kif->ops->open_proc(kif, path, O_RDONLY);

	if (fd < 0)
		return fd;
	return read_all(fd, buf, size);
}

int mthpd_kif_read_sys(const struct mthpd_kif *kif, const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = kif->ops->open_sys(kif, path, O_RDONLY);

	if (fd < 0)
		return fd;
	return read_all(fd, buf, size);
}

int mthpd_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -ENODATA;
		got += (size_t)r;
	}
	return 0;
}
