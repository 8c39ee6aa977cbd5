/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/kif-linux.c's prefault: free page reporting read from a sys root
 * made here (what prefault=auto asks), and on the live kernel the pages
 * faulted in and freed again, then a collapse after them that keeps every
 * byte of the range.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kif.h"
#include "test.h"
#include "util.h"

#define MIB2 (2UL << 20)

static char root[64];

/* A sys root whose virtio_balloon device @dev has @features ("" for no device). */
static void sys_root(const char *dev, const char *features)
{
	char cmd[512];

	(void)snprintf(root, sizeof(root), "/tmp/mthpd-kif-XXXXXX");
	TEST_ASSERT(mkdtemp(root) != NULL);
	if (*dev) {
		(void)snprintf(cmd, sizeof(cmd),
			       "mkdir -p %s/bus/virtio/drivers/virtio_balloon/%s && "
			       "echo %s >%s/bus/virtio/drivers/virtio_balloon/%s/features",
			       root, dev, features, root, dev);
		TEST_ASSERT_EQ(system(cmd), 0);
	}
}

static void sys_root_done(void)
{
	char cmd[128];

	(void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	TEST_ASSERT_EQ(system(cmd), 0);
}

static void reporting(const char *name, const char *dev, const char *features, bool want)
{
	struct mthpd_kif kif;

	test_case = name;
	sys_root(dev, features);
	TEST_ASSERT_EQ(mthpd_kif_linux_init("/proc", root, &kif, NULL), 0);
	TEST_ASSERT_EQ(mthpd_kif_free_page_reporting(&kif), want);
	mthpd_kif_done(&kif);
	sys_root_done();
}

static uint64_t vmstat(const char *name)
{
	char buf[16384], *p;
	_cleanup_close_ int fd = open("/proc/vmstat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	size_t len = strlen(name);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, name, len) == 0 && p[len] == ' ')
			return strtoull(p + len + 1, NULL, 10);
	return 0;
}

static bool thp_never(void)
{
	char buf[128] = "";
	_cleanup_close_ int fd =
		open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);

	return fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0 || strstr(buf, "[never]");
}

/* On the live kernel: the area is free after a prefault, and a collapse after one keeps the bytes. */
static void live(void)
{
	struct mthpd_kif kif;
	unsigned char vec[MTHPD_PREFAULT_MAX * MIB2 / 4096];
	uint64_t before;
	uint8_t *map, *r;
	int pidfd;
	int64_t n;

	if (geteuid() != 0 || thp_never()) {
		printf("SKIP: live prefault: needs root and THP not 'never'\n");
		return;
	}
	TEST_ASSERT_EQ(mthpd_kif_linux_init(NULL, NULL, &kif, NULL), 0);

	test_case = "live: the area is reserved 2 MiB-aligned, and holds nothing after a prefault";
	TEST_ASSERT_EQ(mthpd_kif_prefault_set(&kif, true), 0);
	TEST_ASSERT((uintptr_t)kif.prefault_area % MIB2 == 0);
	before = vmstat("thp_fault_alloc");
	mthpd_kif_prefault(&kif, MTHPD_PREFAULT_MAX + 3); /* cut to MTHPD_PREFAULT_MAX */
	/* each page a THP fault of its own (other processes may add more) */
	TEST_ASSERT(vmstat("thp_fault_alloc") >= before + MTHPD_PREFAULT_MAX);
	TEST_ASSERT_EQ(mincore(kif.prefault_area, MTHPD_PREFAULT_MAX * MIB2, vec), 0);
	for (size_t i = 0; i < sizeof(vec); i++)
		if (vec[i] & 1) {
			TEST_ASSERT_EQ(i, sizeof(vec)); /* a page still resident */
			break;
		}

	test_case = "live: a 2 MiB range collapsed after a prefault keeps every byte";
	map = mmap(NULL, 2 * MIB2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TEST_ASSERT(map != MAP_FAILED);
	if (map == MAP_FAILED)
		goto out;
	r = (uint8_t *)(((uintptr_t)map + MIB2 - 1) & ~(MIB2 - 1));
	TEST_ASSERT_EQ(madvise(r, MIB2, MADV_NOHUGEPAGE), 0);
	for (size_t i = 0; i < MIB2; i++)
		r[i] = (uint8_t)(i * 7 + i / 4096);
	TEST_ASSERT_EQ(madvise(r, MIB2, MADV_HUGEPAGE), 0);
	pidfd = kif.ops->pidfd_open(&kif, getpid());
	TEST_ASSERT(pidfd >= 0);
	mthpd_kif_prefault(&kif, 1);
	n = kif.ops->collapse(&kif, pidfd, (uint64_t)(uintptr_t)r, MIB2, 0);
	TEST_ASSERT_EQ(n, MIB2);
	for (size_t i = 0; i < MIB2; i++)
		if (r[i] != (uint8_t)(i * 7 + i / 4096)) {
			TEST_ASSERT_EQ(i, MIB2); /* the first byte that changed */
			break;
		}
	if (pidfd >= 0)
		(void)close(pidfd);
	(void)munmap(map, 2 * MIB2);

	test_case = "live: prefault off unmaps the area";
	TEST_ASSERT_EQ(mthpd_kif_prefault_set(&kif, false), 0);
	TEST_ASSERT(kif.prefault_area == NULL);
out:
	mthpd_kif_done(&kif);
}

int main(void)
{
	reporting("free page reporting: bit 5 set", "virtio3", "0110010100000000", true);
	reporting("a balloon without it", "virtio0", "0110000100000000", false);
	reporting("no balloon", "", "", false);
	reporting("a short features file", "virtio1", "011", false);
	live();
	test_case = NULL;
	return test_finish();
}
