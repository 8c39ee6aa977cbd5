/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's sandbox, entered once start-up holds what it keeps open (the
 * /proc and /sys root dirfds, /proc/kpageflags, the cgroup2 mount path):
 * capabilities first (dropping the bounding set needs CAP_SETPCAP, which
 * goes with it), then no_new_privs, then the seccomp allow-list.
 * [chrony sys_linux.c SYS_Linux_EnableSystemCallFilter(),
 *  systemd src/shared/seccomp-util.c]
 *
 * Capabilities, measured on this project's machines (Linux 6.18, x86_64)
 * and on Debian 12's kernel (6.1.0-57, booted under QEMU by
 * tests/systemd-vm/run with a guest script doing the same): `mthpd collapse
 * --pid P --max-ptes-none 0` of a two-range workload, run as root under
 * `setpriv --bounding-set=-all,+CAPS --inh-caps=-all` with one of the four
 * left out at a time, against a workload of uid 0 (full capabilities, like
 * any root service) and one of uid 65534:
 *
 *   left out             uid 0, 6.18    uid 0, 6.1     uid 65534, both
 *   (none)               2 succeeded    2 succeeded    2 succeeded
 *   CAP_SYS_ADMIN        exit 3: no PFNs in pagemap, on both, for both
 *   CAP_SYS_NICE         2 permission_denied (EPERM), on both, for both
 *   CAP_DAC_READ_SEARCH  2 succeeded    2 succeeded    exit 2: pagemap EACCES
 *   CAP_SYS_PTRACE       2 succeeded    exit 2: EACCES 6.18: 2 succeeded,
 *                                                      6.1: exit 2: EACCES
 *
 * - CAP_SYS_ADMIN: pagemap_open() records file_ns_capable(CAP_SYS_ADMIN)
 *   when each target's pagemap is opened, during every pass: without it the
 *   PFN bits read 0 and kpageflags cannot be looked up.
 * - CAP_SYS_NICE: process_madvise() of another process's mm (mm/madvise.c).
 * - CAP_DAC_READ_SEARCH: /proc/PID/pagemap is mode 0400 owned by the
 *   target's uid; root reading another user's needs a DAC override, and
 *   this one only reads.  (kpageflags is 0400 root: uid 0 owns it, and it is
 *   opened before the sandbox anyway.)
 * - CAP_SYS_PTRACE: the PTRACE_MODE_READ check of mm_access() behind
 *   pagemap, maps, smaps, PROCMAP_QUERY and process_madvise.  It fails for
 *   another uid, and also for a root process holding capabilities mthpd no
 *   longer has (commoncap: the target's permitted set must be a subset of
 *   the caller's): without it, 6.1 refuses every root service.  6.18 lets
 *   perfmon_capable() (CAP_PERFMON or CAP_SYS_ADMIN) pass that check ("mm,
 *   procfs: allow read-only remote mm access under CAP_PERFMON", 2025), so
 *   there it is redundant; older kernels need it, so it stays.
 * Nothing else is needed: config, metrics and state files are root's, the
 * cgroup2 tree and /proc/PID/{status,comm,maps} are world-readable.
 *
 * Seccomp: the default action is EPERM, not killing the process.  A call
 * missing from the list then shows as an error the daemon logs ("cannot
 * write '/run/mthpd/metrics.prom': Operation not permitted") and survives,
 * instead of a SIGSYS crash loop; what it cannot do is the same either way.
 * The list was found with `strace -f` of `mthpd run` under systemd-style
 * NOTIFY_SOCKET, WATCHDOG_USEC and a journald socket (JOURNAL_STREAM set),
 * over several passes collapsing a workload in a matched cgroup, a SIGHUP
 * reload, a failed reload, a reload with 160 policy files (qsort's
 * sysinfo), and SIGTERM; plus `mthpd plan` and `mthpd collapse` of the
 * integration workload (also with MTHPD_DISABLE=pagemap_scan,procmap_query,
 * the fallbacks of older kernels); every call made after the point where
 * the sandbox is entered is below, with who makes it.  Two paths those runs
 * do not reach were read from their sources, listed, and then forced under
 * the filter: sd_journal_send() of a 12 MiB record (its memfd fallback
 * arrived whole) and abort() (the process died of SIGABRT).  One call is
 * refused on purpose: glibc's isatty() probe of stdout (ioctl TCGETS) before
 * the first buffered write; refused, stdout is simply not line-buffered.
 * tests/integration/test-seccomp.sh checks all of it here; the systemd unit
 * with this filter also passed tests/systemd-vm (Debian 12's 6.1 kernel,
 * systemd 252: no PAGEMAP_SCAN or PROCMAP_QUERY, so the fallbacks; collapse,
 * reload, journal records, stop).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sandbox.h"
#include "uapi.h"
#include "util.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#endif
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U /* Linux 6.3 */
#endif

/* Sanitizer builds (make asan) need a few more calls: see sanitizer_rules. */
#if defined(__SANITIZE_ADDRESS__)
#define SANDBOX_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANDBOX_SANITIZER 1
#endif
#endif

static const unsigned int keep_caps[] = {
	CAP_DAC_READ_SEARCH, /* other users' /proc/PID/pagemap (0400) */
	CAP_SYS_PTRACE,      /* PTRACE_MODE_READ of others' tasks, root ones too (6.1) */
	CAP_SYS_ADMIN,       /* PFNs in pagemap */
	CAP_SYS_NICE,        /* process_madvise() of another process */
};

static uint64_t keep_mask(void)
{
	uint64_t m = 0;

	for (size_t i = 0; i < ARRAY_SIZE(keep_caps); i++)
		m |= 1ULL << keep_caps[i];
	return m;
}

/* Writes the reason to @err and returns @r (a -errno). */
_printf_(4, 5) static int fail(int r, char *err, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return r;
}

/* capget/capset through syscall(): no libcap. */
static int caps_get(uint64_t *eff, uint64_t *prm, uint64_t *inh)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {{0}};

	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	*eff = d[0].effective | (uint64_t)d[1].effective << 32;
	*prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	*inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	return 0;
}

static int caps_set(uint64_t eff, uint64_t prm, uint64_t inh)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {
		{.effective = (uint32_t)eff, .permitted = (uint32_t)prm, .inheritable = (uint32_t)inh},
		{.effective = (uint32_t)(eff >> 32), .permitted = (uint32_t)(prm >> 32),
		 .inheritable = (uint32_t)(inh >> 32)},
	};

	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

static int drop_caps(char *err, size_t err_size)
{
	uint64_t keep = keep_mask(), eff, prm, inh;
	bool setpcap;
	int r;

	r = caps_get(&eff, &prm, &inh);
	if (r < 0)
		return fail(r, err, err_size, "capget: %s", strerror(-r));
	setpcap = eff & (1ULL << CAP_SETPCAP);

	/*
	 * Bounding set: caps an execve() could ever bring back.  Dropping
	 * needs CAP_SETPCAP; without it (not root, or started with reduced
	 * caps) the set is left as it is: no_new_privs and seccomp's refusal
	 * of execve close that door as well.  PR_CAPBSET_READ answers EINVAL
	 * past the kernel's last capability.
	 */
	for (unsigned long cap = 0; cap < 64 && setpcap; cap++) {
		int in = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

		if (in < 0)
			break;
		if (in == 0 || (keep & (1ULL << cap)))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
			return fail(-errno, err, err_size, "PR_CAPBSET_DROP of capability %lu: %s",
				    cap, strerror(errno));
	}
	/* Ambient caps (Linux 4.3+) would survive an execve: none. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return fail(-errno, err, err_size, "PR_CAP_AMBIENT_CLEAR_ALL: %s", strerror(errno));

	/* Only ever narrows: what is not there is not asked for. */
	prm &= keep;
	eff &= prm;
	r = caps_set(eff, prm, 0);
	if (r < 0)
		return fail(r, err, err_size, "capset: %s", strerror(-r));

	/* Trust, but check: the kernel must agree. */
	r = caps_get(&eff, &prm, &inh);
	if (r < 0)
		return fail(r, err, err_size, "capget: %s", strerror(-r));
	if ((eff | prm) & ~keep || inh)
		return fail(-EPERM, err, err_size,
			    "capabilities still held after capset: effective %#llx, permitted %#llx",
			    (unsigned long long)eff, (unsigned long long)prm);
	return 0;
}

/* One allow-list entry: a system call, and up to 3 argument checks that must all hold. */
struct rule {
	int nr;
	unsigned int nr_args;
	struct scmp_arg_cmp args[3];
};

#define ARG_EQ(i, v) {.arg = (i), .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)(v)}
/* (argument & mask) == v */
#define ARG_MASKED(i, mask, v)                                                              \
	{.arg = (i), .op = SCMP_CMP_MASKED_EQ, .datum_a = (scmp_datum_t)(mask),            \
	 .datum_b = (scmp_datum_t)(v)}
#define ALLOW(name) {SCMP_SYS(name), 0, {{0}}}
#define ALLOW1(name, a) {SCMP_SYS(name), 1, {a}}
#define ALLOW2(name, a, b) {SCMP_SYS(name), 2, {a, b}}
#define ALLOW3(name, a, b, c) {SCMP_SYS(name), 3, {a, b, c}}

/*
 * Everything the daemon does once sandboxed.  Several rules for one call
 * add up (any may match).  Who needs each:
 */
static const struct rule rules[] = {
	/* Reading /proc (pagemap, maps, smaps, status, comm), /sys, the cgroup2
	 * tree (cgroup.procs, memory.pressure) and the configuration on SIGHUP:
	 * lib/kif.c, lib/target.c, lib/discover.c, lib/conffile.c (inih, open). */
	ALLOW(openat),
	ALLOW(read),
	ALLOW(pread64), /* pagemap and kpageflags at offsets: lib/kif.c */
	ALLOW(close),
	ALLOW(newfstatat), /* glibc's fstat(): fdopendir(), opendir(), stdio buffers */
	ALLOW(getdents64), /* readdir(): cgroup walk (discover.c), policy.d (config.c) */
	ALLOW(dup),        /* discover.c: fdopendir() of a dup of each cgroup dirfd */
	/* fdopendir() and fdopen(): F_GETFL; fdopen("we"): F_SETFD; sd_journal's
	 * memfd fallback: F_ADD_SEALS (memfd_set_sealed()). */
	ALLOW1(fcntl, ARG_EQ(1, F_GETFD)),
	ALLOW1(fcntl, ARG_EQ(1, F_SETFD)),
	ALLOW1(fcntl, ARG_EQ(1, F_GETFL)),
	ALLOW1(fcntl, ARG_EQ(1, F_SETFL)),
	ALLOW1(fcntl, ARG_EQ(1, F_ADD_SEALS)),
	/* The two ioctls of the scan, and no other: lib/pagemap.c, lib/vmas.c. */
	ALLOW1(ioctl, ARG_EQ(1, PAGEMAP_SCAN)),
	ALLOW1(ioctl, ARG_EQ(1, PROCMAP_QUERY)),
	/* The collapse itself (lib/kif-linux.c: act.c, and plan's 4 KiB probe in
	 * target.c): MADV_COLLAPSE, and MADV_COLD, which splits a 2M folio
	 * mapped in part (act.c: mthpd_act_split()); pidfds of the targets. */
	ALLOW1(process_madvise, ARG_EQ(3, MADV_COLLAPSE)),
	ALLOW1(process_madvise, ARG_EQ(3, MADV_COLD)),
	ALLOW1(pidfd_open, ARG_EQ(1, 0)),

	/* malloc, free, realloc (mremap for large blocks).  Never executable:
	 * PROT_EXEC is refused, as MemoryDenyWriteExecute= does. */
	ALLOW(brk),
	ALLOW1(mmap, ARG_MASKED(2, PROT_EXEC, 0)),
	ALLOW1(mprotect, ARG_MASKED(2, PROT_EXEC, 0)),
	ALLOW(munmap),
	ALLOW(mremap),
	/* prefault (lib/kif-linux.c): its 2 MiB pages freed after each fault,
	 * and made huge when a reload turns it on */
	ALLOW1(madvise, ARG_EQ(2, MADV_DONTNEED)),
	ALLOW1(madvise, ARG_EQ(2, MADV_HUGEPAGE)),

	/* stderr log lines (daemon/log.c), plan/collapse output, metrics and
	 * state files (daemon/metrics.c: fdopen, fflush, rename; unlink of
	 * the temporary file when writing fails). */
	ALLOW(write),
	ALLOW(writev), /* sd_journal's memfd fallback; glibc's fatal messages */
	ALLOW(rename),
	ALLOW(unlink),
	/* daemon/state.c state_tmp_*(): the new file is created O_EXCL under a
	 * random name relative to its directory's fd and renamed over the old
	 * one, or removed; a reload to another state_file probes it
	 * (FS_IOC_GETFLAGS: immutable?) and takes its lock (flock, then our
	 * pid written into it). */
	ALLOW1(getrandom, ARG_EQ(2, GRND_NONBLOCK)),
	ALLOW(renameat),
	ALLOW(unlinkat),
	ALLOW1(ioctl, ARG_EQ(1, FS_IOC_GETFLAGS)),
	ALLOW1(flock, ARG_EQ(1, LOCK_EX | LOCK_NB)),
	ALLOW(ftruncate),
	ALLOW(pwrite64),

	/* sd_notify() (READY, STATUS, WATCHDOG, RELOADING, STOPPING) opens a
	 * datagram socket per message, grows its send buffer and sends;
	 * sd_journal_send() (log_decision()) does the same once and keeps the
	 * socket.  No other socket type, no connect(): PrivateNetwork= and
	 * RestrictAddressFamilies=AF_UNIX agree. */
	ALLOW3(socket, ARG_EQ(0, AF_UNIX), ARG_EQ(1, SOCK_DGRAM | SOCK_CLOEXEC), ARG_EQ(2, 0)),
	ALLOW2(getsockopt, ARG_EQ(1, SOL_SOCKET), ARG_EQ(2, SO_SNDBUF)),
	ALLOW2(setsockopt, ARG_EQ(1, SOL_SOCKET), ARG_EQ(2, SO_SNDBUF)),
	/* fails without CAP_NET_ADMIN, which sd_* expects and ignores */
	ALLOW2(setsockopt, ARG_EQ(1, SOL_SOCKET), ARG_EQ(2, SO_SNDBUFFORCE)),
	ALLOW(sendmsg),
	/* sd_notify(): whether to send SCM_CREDENTIALS */
	ALLOW(getuid),
	ALLOW(geteuid),
	ALLOW(getgid),
	ALLOW(getegid),
	/* sd_journal_send(), a record too big for one datagram: memfd_new()
	 * names it after PR_GET_NAME (and asserts that works), writev, seal,
	 * send the fd (systemd 252 journal-send.c, memfd-util.c). */
	ALLOW1(memfd_create, ARG_MASKED(1, MFD_EXEC, 0)), /* never an executable one */
	ALLOW1(prctl, ARG_EQ(0, PR_GET_NAME)),
	/* lib/features.c: the sub-PMD probe again on SIGHUP (THP off for mthpd?) */
	ALLOW1(prctl, ARG_EQ(0, PR_GET_THP_DISABLE)),

	/* The loop (daemon/run.c): poll the signalfd and the timerfd, read
	 * them, re-arm the timer.  timerfd_create, signalfd4 and
	 * rt_sigprocmask are start-up's, listed so that the sandbox may be
	 * entered before them. */
	ALLOW(poll),
	ALLOW(timerfd_settime),
	/* daemon/watch.c: policy.d watched again after a reload (it may be
	 * another directory now); inotify_init1 is start-up's */
	ALLOW(inotify_add_watch),
	ALLOW(inotify_rm_watch),
	ALLOW(timerfd_create),
	ALLOW(signalfd4),
	ALLOW(rt_sigprocmask), /* also abort() */
	ALLOW(clock_gettime),  /* the vDSO's fallback */
	ALLOW(restart_syscall), /* poll() resumed after SIGSTOP/SIGCONT */
	ALLOW(getpid),          /* pass() skips itself; sd_notify() */
	ALLOW(sysinfo),         /* glibc qsort() of more than 1 KiB: policy.d names */

	/* glibc's abort() (assert, _FORTIFY_SOURCE, malloc checks) raises
	 * SIGABRT with tgkill(getpid(), gettid(), SIGABRT); the tgkill rule is
	 * added for this process only, in load_filter(). */
	ALLOW(gettid),

	ALLOW(exit_group),
	ALLOW(exit),

	/* Left out on purpose: futex (one thread: never contended), madvise
	 * but the two above (malloc trims the main arena with brk), clone/fork/execve, kill,
	 * connect and every other socket call, ptrace, mount, bpf, io_uring. */
};

#ifdef SANDBOX_SANITIZER
/*
 * make asan only (-fsanitize=address), never a release build.
 * LeakSanitizer's check at exit stops the world: it clones a tracer task
 * (clone, prctl PR_SET_PTRACER/PR_SET_PDEATHSIG/PR_GET_DUMPABLE,
 * sigaltstack, rt_sigaction), which lists /proc/PID/task (open, getdents,
 * lseek) and ptraces every thread while the daemon waits (wait4,
 * sched_yield, futex, getppid); a leak report reads /proc/self/exe to
 * symbolize (readlink).  Measured with SCMP_ACT_LOG as the default action
 * and the audit records in dmesg, over plan, collapse and a deliberate leak.
 */
static const struct rule sanitizer_rules[] = {
	ALLOW(clone),
	ALLOW(ptrace),
	ALLOW(wait4),
	ALLOW(prctl),
	ALLOW(sched_yield),
	ALLOW(sigaltstack),
	ALLOW(rt_sigaction),
	ALLOW(getppid),
	ALLOW(open),
	ALLOW(getdents),
	ALLOW(lseek),
	ALLOW(futex),
	ALLOW(readlink),
};
#endif

static int add_rules(scmp_filter_ctx ctx, const struct rule *r, size_t n, char *err, size_t err_size)
{
	for (size_t i = 0; i < n; i++) {
		int e = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, r[i].nr, r[i].nr_args, r[i].args);

		if (e < 0) {
			char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, r[i].nr);

			(void)snprintf(err, err_size, "seccomp: cannot allow %s: %s",
				       name ? name : "a system call", strerror(-e));
			free(name);
			return e;
		}
	}
	return 0;
}

static int load_filter(char *err, size_t err_size)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	pid_t self = getpid();
	struct rule abort_rule;
	int r;

	if (!ctx) {
		(void)snprintf(err, err_size, "seccomp_init failed");
		return -ENOMEM;
	}
	/* A call through another ABI (int 0x80, x32) is an attack, not a bug. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (r < 0) {
		(void)snprintf(err, err_size, "seccomp: bad-arch action: %s", strerror(-r));
		goto out;
	}
	r = add_rules(ctx, rules, ARRAY_SIZE(rules), err, err_size);
	if (r < 0)
		goto out;
	/* abort(): SIGABRT to this (single-threaded) process, nothing else. */
	abort_rule = (struct rule)ALLOW3(tgkill, ARG_EQ(0, self), ARG_EQ(1, self), ARG_EQ(2, SIGABRT));
	r = add_rules(ctx, &abort_rule, 1, err, err_size);
	if (r < 0)
		goto out;
#ifdef SANDBOX_SANITIZER
	r = add_rules(ctx, sanitizer_rules, ARRAY_SIZE(sanitizer_rules), err, err_size);
	if (r < 0)
		goto out;
#endif
	r = seccomp_load(ctx);
	if (r < 0)
		(void)snprintf(err, err_size, "seccomp_load: %s", strerror(-r));
out:
	seccomp_release(ctx);
	return r;
}

int sandbox_enter(char *err, size_t err_size)
{
	int r;

	err[0] = '\0';
	r = drop_caps(err, err_size);
	if (r < 0)
		return r;
	/* libseccomp sets it too (SCMP_FLTATR_CTL_NNP); say it once, here. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		r = -errno;
		(void)snprintf(err, err_size, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return r;
	}
	return load_filter(err, err_size);
}

int sandbox_describe(char *buf, size_t size)
{
	static const char *const keys[] = {"CapEff", "CapPrm", "CapBnd", "CapAmb", "NoNewPrivs",
					   "Seccomp"};
	_cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	size_t used = 0;

	if (!f)
		return -errno;
	if (size == 0)
		return -ENOBUFS;
	buf[0] = '\0';
	/* "CapEff:\t0000000000a80004\n" */
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		const char *v;
		int n;

		if (!colon)
			continue;
		*colon = '\0';
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
			if (strcmp(line, keys[i]) != 0)
				continue;
			v = colon + 1 + strspn(colon + 1, " \t");
			n = snprintf(buf + used, size - used, "%s%s=%.*s", used ? " " : "", keys[i],
				     (int)strcspn(v, "\n"), v);
			if (n < 0 || (size_t)n >= size - used)
				return -ENOBUFS;
			used += (size_t)n;
		}
	}
	return 0;
}

/* For sandbox_test(): prints one line, returns 1 if it was not what the list says. */
static int expect(FILE *out, bool refused, const char *what, long ret, int err)
{
	const char *name = ret < 0 ? strerrorname_np(err) : "ok";
	bool good = refused ? ret < 0 && err == EPERM : ret >= 0 || err != EPERM;

	fprintf(out, "%s: %s: %s%s\n", refused ? "refused" : "allowed", what, name ? name : "?",
		good ? "" : "  <-- unexpected");
	return good ? 0 : 1;
}

/* fork(): a child, should the filter let it through, leaves at once. */
static long try_fork(void)
{
	long pid = syscall(SYS_fork);

	if (pid == 0)
		_exit(0);
	return pid;
}

#define TRY(refused, what, call)                                   \
	do {                                                       \
		long ret_;                                         \
		errno = 0;                                         \
		ret_ = (long)(call);                               \
		bad += expect(out, refused, what, ret_, errno);    \
	} while (0)

int sandbox_test(FILE *out)
{
	char err[256], desc[256];
	char *const argv[] = {(char *)"true", NULL};
	long page = sysconf(_SC_PAGESIZE);
	void *mem, *x;
	int bad = 0, fd, pidfd;
	struct iovec iov;

	mem = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED || sandbox_enter(err, sizeof(err)) < 0) {
		fprintf(out, "sandbox: cannot enter: %s\n", mem == MAP_FAILED ? strerror(errno) : err);
		return 3;
	}
	if (sandbox_describe(desc, sizeof(desc)) < 0)
		(void)snprintf(desc, sizeof(desc), "(cannot read /proc/self/status)");
	fprintf(out, "sandbox: %s\n", desc);

	TRY(true, "socket(AF_INET, SOCK_STREAM)", socket(AF_INET, SOCK_STREAM, 0));
	TRY(true, "socket(AF_UNIX, SOCK_STREAM)", socket(AF_UNIX, SOCK_STREAM, 0));
	TRY(true, "execve(/bin/true)", execve("/bin/true", argv, argv + 1));
	TRY(true, "fork()", try_fork());
	TRY(true, "unshare(CLONE_NEWUSER)", syscall(SYS_unshare, 0x10000000L));
#ifndef SANDBOX_SANITIZER /* LeakSanitizer's ptrace is let through there */
	TRY(true, "ptrace(PTRACE_TRACEME)", syscall(SYS_ptrace, 0L, 0L, 0L, 0L));
#endif
	TRY(true, "mmap(PROT_EXEC)",
	    mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) ==
			    MAP_FAILED
		    ? -1L
		    : 0L);
	TRY(true, "mprotect(PROT_EXEC)", mprotect(mem, (size_t)page, PROT_READ | PROT_EXEC));
	TRY(true, "ioctl(0, TIOCGWINSZ)", ioctl(0, TIOCGWINSZ, err));
	TRY(true, "kill(1, 0)", kill(1, 0));

	TRY(false, "getpid()", getpid());
	TRY(false, "mmap(PROT_READ|PROT_WRITE)", (x = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
							   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) ==
							  MAP_FAILED
						  ? -1L
						  : munmap(x, (size_t)page));
	TRY(false, "socket(AF_UNIX, SOCK_DGRAM|SOCK_CLOEXEC)",
	    (fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0 ? -1 : close(fd));
	TRY(false, "openat(/proc/self/pagemap)", fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC));
	/* NULL argument: the kernel answers EFAULT, the filter would say EPERM */
	TRY(false, "ioctl(PAGEMAP_SCAN)", ioctl(fd, PAGEMAP_SCAN, NULL));
	if (fd >= 0)
		(void)close(fd);
	TRY(false, "pidfd_open(self)", pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0));
	iov = (struct iovec){.iov_base = mem, .iov_len = (size_t)page};
	/* 4 KiB holds no 2 MiB range: the kernel answers EINVAL or does nothing */
	TRY(false, "process_madvise(MADV_COLLAPSE)",
	    syscall(SYS_process_madvise, pidfd, &iov, 1UL, MADV_COLLAPSE, 0U));
	TRY(false, "process_madvise(MADV_COLD)",
	    syscall(SYS_process_madvise, pidfd, &iov, 1UL, MADV_COLD, 0U));
	TRY(true, "process_madvise(MADV_PAGEOUT)",
	    syscall(SYS_process_madvise, pidfd, &iov, 1UL, MADV_PAGEOUT, 0U));
	/* prefault's two, and no other madvise */
	TRY(false, "madvise(MADV_HUGEPAGE)", madvise(mem, (size_t)page, MADV_HUGEPAGE));
	TRY(false, "madvise(MADV_DONTNEED)", madvise(mem, (size_t)page, MADV_DONTNEED));
	TRY(true, "madvise(MADV_PAGEOUT)", madvise(mem, (size_t)page, MADV_PAGEOUT));

	fprintf(out, "result: %s\n", bad ? "unexpected answers" : "ok");
	return bad ? 1 : 0;
}
