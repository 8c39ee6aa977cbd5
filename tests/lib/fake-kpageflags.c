/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "fake-kpageflags.h"

int test_kpageflags_open(void)
{
	char path[] = "/tmp/mthpd-test-kpageflags.XXXXXX";
	int fd = mkostemp(path, O_CLOEXEC);

	if (fd < 0)
		return -errno;
	(void)unlink(path);
	return fd;
}

int test_kpageflags_set(int fd, uint64_t pfn, unsigned int n, uint64_t first, uint64_t rest)
{
	for (unsigned int i = 0; i < n; i++) {
		const uint64_t le = htole64(i ? rest : first);
		const off_t off = (off_t)((pfn + i) * sizeof(le));

		if (pwrite(fd, &le, sizeof(le), off) != (ssize_t)sizeof(le))
			return -EIO;
	}
	return 0;
}
