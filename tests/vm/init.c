/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PID 1 of the initramfs that tests/vm/run builds: the whole guest is that
 * initramfs (no disk, no modules), and the results leave it on the serial
 * console.  This program mounts what the tests expect of a booted system,
 * runs /vm/guest (bash) with the console as its stdin, stdout and stderr,
 * reaps every process that ends while it waits (the tests leave orphans
 * behind), and powers the machine off.
 *
 *   proc /proc, sysfs /sys, devtmpfs /dev (+ /dev/fd, /dev/std*),
 *   tmpfs /tmp /run /dev/shm, cgroup2 /sys/fs/cgroup
 *
 * Any mount that fails is reported and the guest goes on: on a small
 * kernel (tinyconfig: no cgroups, say) the tests that need the missing
 * piece skip, the others still run.
 *
 * With "mthpdvm.probe" on the kernel command line it only prints the probe
 * line and powers off: tests/vm/run boots that to learn whether KVM works.
 *
 * Power-off: reboot(RB_POWER_OFF).  Where the kernel cannot power off (no
 * ACPI), the syscall ends PID 1, the kernel panics, panic=-1 reboots and
 * qemu -no-reboot exits all the same.  Linked statically, so it runs before
 * anything else in the image is known to work.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define TAG "mthpd-vm: "
#define GUEST "/vm/guest"

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fputs(TAG "init: ", stdout);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

static void do_mount(const char *src, const char *dir, const char *type, unsigned long flags,
		     const char *data)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		say("mkdir %s: %s", dir, strerror(errno));
		return;
	}
	/* EBUSY: already mounted (a kernel with CONFIG_DEVTMPFS_MOUNT, say). */
	if (mount(src, dir, type, flags, data) < 0 && errno != EBUSY)
		say("mount -t %s %s: %s", type, dir, strerror(errno));
}

/*
 * The kernel gives PID 1 /dev/console as fds 0-2 when the initramfs has it
 * (the kernel's built-in one always does); if not, take it from devtmpfs.
 */
static void console_fds(void)
{
	int fd;

	if (fcntl(1, F_GETFD) >= 0)
		return;
	fd = open("/dev/console", O_RDWR | O_NOCTTY);
	if (fd < 0)
		return;
	for (int i = 0; i < 3; i++)
		if (fd != i)
			(void)dup2(fd, i);
	if (fd > 2)
		close(fd);
}

/* Returns 1 if the kernel command line holds the word WORD. */
static int cmdline_has(const char *word)
{
	char buf[4096], *tok, *save = NULL;
	ssize_t n;
	int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
		if (strcmp(tok, word) == 0)
			return 1;
	return 0;
}

static void power_off(void)
{
	sync();
	/* Leftovers of the tests must not hold the console or write on. */
	(void)kill(-1, SIGKILL);
	reboot(RB_POWER_OFF);
	say("reboot(RB_POWER_OFF): %s", strerror(errno));
	reboot(RB_AUTOBOOT);
}

int main(void)
{
	pid_t guest, pid;
	int status = 0, guest_status = -1;

	do_mount("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755");
	console_fds();
	do_mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	do_mount("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	do_mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
	do_mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755");
	do_mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
	/* The tests find cgroup2 in /proc/self/mountinfo, as mthpd does. */
	if (access("/sys/fs/cgroup", F_OK) == 0)
		do_mount("cgroup2", "/sys/fs/cgroup", "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			 NULL);
	else
		say("no /sys/fs/cgroup: kernel without cgroups, cgroup2 not mounted");
	/* bash's <(...) and the tests' /dev/stdin need these; devtmpfs has none. */
	(void)symlink("/proc/self/fd", "/dev/fd");
	(void)symlink("/proc/self/fd/0", "/dev/stdin");
	(void)symlink("/proc/self/fd/1", "/dev/stdout");
	(void)symlink("/proc/self/fd/2", "/dev/stderr");

	if (cmdline_has("mthpdvm.probe")) {
		say("probe ok");
		power_off();
		return 1;
	}

	guest = fork();
	if (guest < 0) {
		say("fork: %s", strerror(errno));
		power_off();
		return 1;
	}
	if (guest == 0) {
		char *const argv[] = {(char *)"/bin/bash", (char *)GUEST, NULL};
		char *const envp[] = {(char *)"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
				      (char *)"HOME=/root", (char *)"TERM=dumb", (char *)"LANG=C",
				      (char *)"TMPDIR=/tmp", NULL};

		/* Its own session and process group, apart from PID 1. */
		(void)setsid();
		execve(argv[0], argv, envp);
		say("exec %s %s: %s", argv[0], GUEST, strerror(errno));
		_exit(127);
	}
	/* Reap everything; stop when the guest script itself has ended. */
	for (;;) {
		pid = waitpid(-1, &status, 0);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pid == guest) {
			guest_status = status;
			break;
		}
	}
	if (guest_status < 0)
		say("lost the guest script: %s", strerror(errno));
	else if (WIFSIGNALED(guest_status))
		say("guest script killed by signal %d", WTERMSIG(guest_status));
	else
		say("guest script exit status %d", WEXITSTATUS(guest_status));
	power_off();
	return 1;
}
