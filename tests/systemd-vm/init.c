/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PID 1 of the tiny initramfs that tests/systemd-vm/run builds: load the
 * modules listed in /modules.list (in order, one absolute path a line; the
 * list comes from `modprobe --show-depends` on the host), wait for
 * /dev/vda, mount it as ext4 and hand over to its /sbin/init (systemd).
 *
 * Debian's 6.1 kernel has virtio, virtio_blk and ext4 as modules, so some
 * initramfs is needed; this one is 1 MB and boots 3 s faster under TCG than
 * an initramfs-tools one (shared/facts/systemd-vm.md).  Linked statically.
 *
 * On any failure it prints why and exits: the kernel panics, panic=-1
 * reboots, and qemu -no-reboot ends, so a broken image never hangs a run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ROOT_DEV "/dev/vda"
#define NEWROOT "/newroot"
#define WAIT_ROOT_MS 20000

static void say(const char *fmt, ...)
{
	va_list ap;

	fputs("mthpd-vm-init: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int load_modules(void)
{
	char line[512];
	FILE *f = fopen("/modules.list", "re");
	int loaded = 0;

	if (!f) {
		say("no /modules.list: %s", strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		int fd;

		line[strcspn(line, "\r\n")] = '\0';
		if (line[0] == '\0' || line[0] == '#')
			continue;
		fd = open(line, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			say("open %s: %s", line, strerror(errno));
			continue;
		}
		if (syscall(SYS_finit_module, fd, "", 0) == 0)
			loaded++;
		else if (errno != EEXIST)
			/* crc32c-intel: ENODEV on TCG's qemu64 CPU (no SSE4.2), harmless */
			say("load %s: %s", strrchr(line, '/') + 1, strerror(errno));
		close(fd);
	}
	fclose(f);
	return loaded;
}

static int wait_for(const char *path, int ms)
{
	struct stat st;
	const struct timespec step = {0, 20 * 1000 * 1000};

	for (int waited = 0; waited < ms; waited += 20) {
		if (stat(path, &st) == 0)
			return 0;
		nanosleep(&step, NULL);
	}
	return -1;
}

int main(int argc, char **argv)
{
	(void)argc;
	mkdir("/dev", 0755);
	mkdir("/proc", 0555);
	mkdir("/sys", 0555);
	mkdir(NEWROOT, 0755);
	if (mount("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755") < 0 && errno != EBUSY)
		say("mount /dev: %s", strerror(errno));
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		say("mount /proc: %s", strerror(errno));
	if (mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		say("mount /sys: %s", strerror(errno));

	say("%d modules loaded", load_modules());
	if (wait_for(ROOT_DEV, WAIT_ROOT_MS) < 0) {
		say("%s did not appear within %d ms", ROOT_DEV, WAIT_ROOT_MS);
		return 1;
	}
	if (mount(ROOT_DEV, NEWROOT, "ext4", 0, NULL) < 0) {
		say("mount %s: %s", ROOT_DEV, strerror(errno));
		return 1;
	}
	/* systemd mounts /proc and /sys itself; /dev keeps its nodes. */
	if (mount("/dev", NEWROOT "/dev", NULL, MS_MOVE, NULL) < 0)
		say("move /dev: %s", strerror(errno));
	umount2("/proc", MNT_DETACH);
	umount2("/sys", MNT_DETACH);
	if (chdir(NEWROOT) < 0 || mount(".", "/", NULL, MS_MOVE, NULL) < 0 || chroot(".") < 0 ||
	    chdir("/") < 0) {
		say("switch root: %s", strerror(errno));
		return 1;
	}
	argv[0] = (char *)"/sbin/init";
	execv("/sbin/init", argv);
	say("exec /sbin/init: %s", strerror(errno));
	return 1;
}
