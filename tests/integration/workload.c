/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A target process for the integration tests, in the spirit of the
 * mem_ops of the kernel's tools/testing/selftests/mm/khugepaged.c: one
 * private anonymous mapping, 2 MiB aligned, with a named page pattern in
 * each 2 MiB range, that waits to be inspected and collapsed from outside.
 *
 *   workload PATTERN...     one range per PATTERN, in order
 *   workload --probe-split  does this kernel split a THP mapped in part on
 *                           MADV_COLD?  exit 0 (yes), 1 (no) or 77
 *   workload --probe        can this machine collapse with
 *                           process_madvise(MADV_COLLAPSE)?  exit 0 or 77
 *   workload --thp-disabled PATTERN...
 *                           the same, after prctl(PR_SET_THP_DISABLE), as
 *                           MariaDB and Redis do to themselves
 *   workload --touch PATTERN...
 *                           the same, with a thread that reads every page
 *                           of the "full" ranges, over and over, as a busy
 *                           service does: it takes no fault unless a
 *                           range is being collapsed (unmapped while the
 *                           kernel copies it), and then waits for the copy
 *   workload --comm NAME PATTERN...
 *                           the same, named NAME (prctl(PR_SET_NAME), which
 *                           any process may do, control bytes and all); goes
 *                           first
 *
 * Patterns (512 pages per range):
 *   full     all pages written
 *   half     pages 0..255 written, the rest untouched
 *   zero     all pages read only: each maps the shared zero page
 *   empty    untouched
 *   sparse   every 8th page written (0, 8, 16, ...)
 *   cow      all written, then shared with a forked sibling (COW, so not
 *            exclusively mapped)
 *   cowhalf  as cow, then pages 0..255 written again by this process, which
 *            breaks COW for them: 256 shared pages remain
 *   mixed16  in each 16-page block, even blocks fully written, odd blocks
 *            only their first 12 pages
 *   nohuge   all written, then MADV_NOHUGEPAGE on the range (its own VMA,
 *            which MADV_COLLAPSE refuses with EINVAL)
 *   purge    all written; SIGHUP gives pages 256..511 back (then it
 *            checks as half): a collapsed range is left mapped in part
 *   pinned   all written, then page 0 spliced into a pipe that is kept
 *            open (vmsplice): its extra reference makes every collapse
 *            fail (EAGAIN, the kernel's SCAN_PAGE_COUNT) for as long as the
 *            process lives
 *
 * The VMA is left plain: no MADV_HUGEPAGE, so that under THP "madvise"
 * neither the fault path nor khugepaged makes huge pages of it, and no
 * MADV_NOHUGEPAGE, which MADV_COLLAPSE refuses with EINVAL.
 *
 * It prints {"pid":N,"base":"0x...","ranges":N} on one line and waits.
 * SIGUSR1: check every page and print "ok" or "corrupt at range R page P"
 * (written pages hold their pattern, others read as zeros).  A page that
 * pagemap shows as never touched is not read, so checking does not fault in
 * zero pages and the test can check between two runs of mthpd.
 * SIGUSR2: madvise(MADV_HUGEPAGE) over the whole mapping, print "hugepage"
 * (bench/daemon hands the memory to khugepaged this way, for comparison).
 * SIGHUP: as an allocator that gives memory back, MADV_DONTNEED on the
 * pages a "half" range never wrote (256..511; a collapse may have filled
 * them) and on the same pages of a "purge" range, print "released N" (the
 * ranges).
 * SIGWINCH: prctl(PR_SET_THP_DISABLE) now, as MariaDB does once it has
 * started (after a collapse, say), then one page fault elsewhere, as a
 * running service makes (a settled process is visited again on a fault),
 * print "thp_disabled".
 * SIGTERM, SIGINT: kill the sibling and exit 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define PAGE_SIZE 4096UL
#define RANGE_PAGES 512U
#define RANGE_SIZE (PAGE_SIZE * RANGE_PAGES)
#define WORDS_PER_PAGE (PAGE_SIZE / sizeof(uint64_t))
/* Capped so that a typo cannot ask for terabytes. */
#define MAX_RANGES 4096U

#define PM_PRESENT (1ULL << 63)
#define PM_SWAP (1ULL << 62)

enum pattern {
	PAT_FULL,
	PAT_HALF,
	PAT_ZERO,
	PAT_EMPTY,
	PAT_SPARSE,
	PAT_COW,
	PAT_COWHALF,
	PAT_MIXED16,
	PAT_NOHUGE,
	PAT_PINNED,
	PAT_PURGE,
};

static const char *const pattern_names[] = {
	[PAT_FULL] = "full",     [PAT_HALF] = "half",   [PAT_ZERO] = "zero",
	[PAT_EMPTY] = "empty",   [PAT_SPARSE] = "sparse", [PAT_COW] = "cow",
	[PAT_COWHALF] = "cowhalf", [PAT_MIXED16] = "mixed16", [PAT_NOHUGE] = "nohuge",
	[PAT_PINNED] = "pinned", [PAT_PURGE] = "purge",
};

static int parse_pattern(const char *s)
{
	for (size_t i = 0; i < sizeof(pattern_names) / sizeof(pattern_names[0]); i++)
		if (strcmp(s, pattern_names[i]) == 0)
			return (int)i;
	return -1;
}

/* Does pattern @p write page @pg? */
static bool pattern_writes(enum pattern p, unsigned int pg)
{
	switch (p) {
	case PAT_FULL:
	case PAT_COW:
	case PAT_COWHALF:
	case PAT_NOHUGE:
	case PAT_PINNED:
	case PAT_PURGE:
		return true;
	case PAT_HALF:
		return pg < RANGE_PAGES / 2;
	case PAT_SPARSE:
		return pg % 8 == 0;
	case PAT_MIXED16:
		return (pg / 16) % 2 == 0 || pg % 16 < 12;
	case PAT_ZERO:
	case PAT_EMPTY:
		break;
	}
	return false;
}

/* splitmix64: distinct, deterministic content for every word of every page. */
static uint64_t word_value(unsigned int range, unsigned int pg, unsigned int w)
{
	uint64_t z = ((uint64_t)range << 20 | (uint64_t)pg << 10 | w) + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t *page_at(char *base, unsigned int range, unsigned int pg)
{
	return (uint64_t *)(void *)(base + (size_t)range * RANGE_SIZE + (size_t)pg * PAGE_SIZE);
}

static void write_page(char *base, unsigned int range, unsigned int pg)
{
	uint64_t *p = page_at(base, range, pg);

	for (unsigned int w = 0; w < WORDS_PER_PAGE; w++)
		p[w] = word_value(range, pg, w);
}

static void fill_range(char *base, unsigned int range, enum pattern pat)
{
	for (unsigned int pg = 0; pg < RANGE_PAGES; pg++) {
		if (pattern_writes(pat, pg)) {
			write_page(base, range, pg);
		} else if (pat == PAT_ZERO) {
			/* A read fault maps the shared zero page. */
			(void)*(volatile uint64_t *)page_at(base, range, pg);
		}
	}
}

/* mmap of @size bytes aligned to RANGE_SIZE.  Returns NULL on failure. */
static char *map_aligned(size_t size)
{
	size_t len = size + RANGE_SIZE;
	char *p, *aligned;
	uintptr_t a;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	a = ((uintptr_t)p + RANGE_SIZE - 1) & ~(uintptr_t)(RANGE_SIZE - 1);
	aligned = (char *)a;
	if (aligned > p)
		(void)munmap(p, (size_t)(aligned - p));
	if (p + len > aligned + size)
		(void)munmap(aligned + size, (size_t)(p + len - (aligned + size)));
	return aligned;
}

/*
 * Checks every page against its pattern.  Pages that pagemap shows as
 * neither present nor swapped were never touched: not read (they would read
 * as zeros, and reading would map the zero page).  Returns 0 when all pages
 * match, 1 with the first mismatch in *ret_range and *ret_page, -1 on error.
 */
static int verify(char *base, unsigned int nr, const enum pattern *pats, unsigned int *ret_range,
		  unsigned int *ret_page)
{
	uint64_t entries[RANGE_PAGES];
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return -1;
	for (unsigned int r = 0; r < nr && rc == 0; r++) {
		off_t off = (off_t)(((uintptr_t)base + (uintptr_t)r * RANGE_SIZE) / PAGE_SIZE *
				    sizeof(uint64_t));

		if (pread(fd, entries, sizeof(entries), off) != (ssize_t)sizeof(entries)) {
			rc = -1;
			break;
		}
		for (unsigned int pg = 0; pg < RANGE_PAGES; pg++) {
			const volatile uint64_t *p = page_at(base, r, pg);
			bool written = pattern_writes(pats[r], pg);
			bool bad = false;

			if (!written && !(entries[pg] & (PM_PRESENT | PM_SWAP)))
				continue;
			for (unsigned int w = 0; w < WORDS_PER_PAGE && !bad; w++)
				bad = p[w] != (written ? word_value(r, pg, w) : 0);
			if (bad) {
				*ret_range = r;
				*ret_page = pg;
				rc = 1;
				break;
			}
		}
	}
	(void)close(fd);
	return rc;
}

static long sys_pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

/*
 * --probe: one populated 2 MiB range of this process collapsed through
 * pidfd_open() + process_madvise(MADV_COLLAPSE), as mthpd does it.
 * Returns 0 when that works, 77 with the reason on stdout otherwise.
 */
static int probe(void)
{
	char *p = map_aligned(RANGE_SIZE);
	struct iovec iov;
	long pidfd, r;

	if (!p) {
		printf("cannot map 2 MiB: %s\n", strerror(errno));
		return 77;
	}
	memset(p, 0x5a, RANGE_SIZE);
	pidfd = sys_pidfd_open(getpid());
	if (pidfd < 0) {
		printf("pidfd_open: %s\n", strerror(errno));
		return 77;
	}
	iov = (struct iovec){ .iov_base = p, .iov_len = RANGE_SIZE };
	r = syscall(SYS_process_madvise, (int)pidfd, &iov, 1UL, MADV_COLLAPSE, 0U);
	if (r != (long)RANGE_SIZE) {
		printf("process_madvise(MADV_COLLAPSE) does not work here: %s\n",
		       r < 0 ? strerror(errno) : "short count");
		return 77;
	}
	(void)close((int)pidfd);
	(void)munmap(p, RANGE_SIZE);
	return 0;
}

/* The flags of the page at @p: 0 when not present, -1 on error. */
static long long page_flags(const char *p)
{
	uint64_t e, f;
	int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	int kpf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	long long r = -1;

	if (pm >= 0 && kpf >= 0 &&
	    pread(pm, &e, 8, (off_t)((uintptr_t)p / 4096 * 8)) == 8) {
		if (!(e >> 63))
			r = 0;
		else if (pread(kpf, &f, 8, (off_t)((e & ((1ULL << 55) - 1)) * 8)) == 8)
			r = (long long)(f & ((1ULL << 62) - 1));
	}
	if (pm >= 0)
		(void)close(pm);
	if (kpf >= 0)
		(void)close(kpf);
	return r;
}

/*
 * --probe-split: a collapsed range of this process, its first 256 pages
 * given back (MADV_DONTNEED: the PMD is split, the folio stays), then
 * process_madvise(MADV_COLD) on page 300, as mthpd splits a folio mapped
 * in part.  Does page 300 still belong to a THP (kpageflags bit 22)?
 */
static int probe_split(void)
{
	char *p = map_aligned(RANGE_SIZE);
	struct iovec iov;
	long pidfd, r;
	long long f;

	if (!p)
		return 77;
	memset(p, 0x5a, RANGE_SIZE);
	pidfd = sys_pidfd_open(getpid());
	if (pidfd < 0)
		return 77;
	iov = (struct iovec){ .iov_base = p, .iov_len = RANGE_SIZE };
	r = syscall(SYS_process_madvise, (int)pidfd, &iov, 1UL, MADV_COLLAPSE, 0U);
	f = page_flags(p + 300 * 4096);
	if (r != (long)RANGE_SIZE || f < 0 || !(f & (1LL << 22))) {
		printf("no THP to try it on\n");
		return 77;
	}
	(void)madvise(p, 256 * 4096, MADV_DONTNEED);
	iov = (struct iovec){ .iov_base = p + 300 * 4096, .iov_len = 4096 };
	r = syscall(SYS_process_madvise, (int)pidfd, &iov, 1UL, MADV_COLD, 0U);
	f = page_flags(p + 300 * 4096);
	if (r < 0 || f < 0) {
		printf("process_madvise(MADV_COLD): %s\n", r < 0 ? strerror(errno) : "no flags");
		return 77;
	}
	printf("%s\n", f & (1LL << 22) ? "not split" : "split");
	return f & (1LL << 22) ? 1 : 0;
}

/* The COW sibling: keeps the pages it shares mapped until it is killed. */
static void __attribute__((noreturn)) sibling(pid_t parent, int sfd)
{
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);

	/* Do not hold the test's stdout pipe open. */
	if (devnull >= 0)
		(void)dup2(devnull, STDOUT_FILENO);
	(void)close(sfd);
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	for (;;)
		(void)pause(); /* every catchable signal is blocked: only SIGKILL ends it */
}

/* --touch: what the reading thread reads. */
struct touch {
	const char *base;
	unsigned int nr;
	const enum pattern *pats;
};

static void *toucher(void *arg)
{
	const struct touch *t = arg;

	for (;;)
		for (unsigned int r = 0; r < t->nr; r++)
			for (unsigned int pg = 0; pg < RANGE_PAGES && t->pats[r] == PAT_FULL; pg++)
				(void)*(const volatile char *)(t->base + (size_t)r * RANGE_SIZE +
							       (size_t)pg * PAGE_SIZE);
	return NULL;
}

int main(int argc, char **argv)
{
	enum pattern *pats;
	unsigned int nr;
	pid_t child = -1;
	bool any_cow = false, touch = false;
	struct touch tt;
	pthread_t tid;
	sigset_t mask;
	char *base;
	int sfd;

	if (argc == 2 && strcmp(argv[1], "--probe") == 0)
		return probe();
	if (argc == 2 && strcmp(argv[1], "--probe-split") == 0)
		return probe_split();
	if (argc >= 3 && strcmp(argv[1], "--comm") == 0) {
		if (prctl(PR_SET_NAME, argv[2], 0, 0, 0) < 0) {
			perror("workload: PR_SET_NAME");
			return 1;
		}
		argv[2] = argv[0];
		argv += 2;
		argc -= 2;
	}
	if (argc >= 2 && strcmp(argv[1], "--thp-disabled") == 0) {
		if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) < 0) {
			perror("workload: PR_SET_THP_DISABLE");
			return 1;
		}
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	if (argc >= 2 && strcmp(argv[1], "--touch") == 0) {
		touch = true;
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	if (argc < 2 || (unsigned int)(argc - 1) > MAX_RANGES) {
		fprintf(stderr,
			"usage: workload PATTERN... (1..%u of: full half zero empty sparse cow "
			"cowhalf mixed16 nohuge pinned purge) | --probe | --probe-split\n",
			MAX_RANGES);
		return 2;
	}
	nr = (unsigned int)(argc - 1);
	pats = calloc(nr, sizeof(*pats));
	if (!pats)
		return 1;
	for (unsigned int i = 0; i < nr; i++) {
		int p = parse_pattern(argv[i + 1]);

		if (p < 0) {
			fprintf(stderr, "workload: unknown pattern '%s'\n", argv[i + 1]);
			return 2;
		}
		pats[i] = (enum pattern)p;
		any_cow |= pats[i] == PAT_COW || pats[i] == PAT_COWHALF;
	}

	base = map_aligned((size_t)nr * RANGE_SIZE);
	if (!base) {
		perror("workload: mmap");
		return 1;
	}

	(void)sigemptyset(&mask);
	(void)sigaddset(&mask, SIGUSR1);
	(void)sigaddset(&mask, SIGUSR2);
	(void)sigaddset(&mask, SIGTERM);
	(void)sigaddset(&mask, SIGINT);
	(void)sigaddset(&mask, SIGHUP);
	(void)sigaddset(&mask, SIGWINCH);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0) {
		perror("workload: sigprocmask");
		return 1;
	}
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		perror("workload: signalfd");
		return 1;
	}

	/*
	 * The COW ranges are written before the fork and everything else after
	 * it, so that only they are shared with the sibling.
	 */
	for (unsigned int r = 0; r < nr; r++)
		if (pats[r] == PAT_COW || pats[r] == PAT_COWHALF)
			fill_range(base, r, PAT_FULL);
	if (any_cow) {
		pid_t parent = getpid();

		(void)fflush(stdout);
		child = fork();
		if (child < 0) {
			perror("workload: fork");
			return 1;
		}
		if (child == 0)
			sibling(parent, sfd);
	}
	for (unsigned int r = 0; r < nr; r++) {
		if (pats[r] == PAT_COWHALF) {
			/* Writing breaks COW: these pages become this process's own. */
			for (unsigned int pg = 0; pg < RANGE_PAGES / 2; pg++)
				write_page(base, r, pg);
		} else if (pats[r] != PAT_COW) {
			fill_range(base, r, pats[r]);
		}
		if (pats[r] == PAT_PINNED) {
			struct iovec iov = {.iov_base = base + (size_t)r * RANGE_SIZE,
					    .iov_len = PAGE_SIZE};
			int pfd[2];

			/* the pipe is never closed: the page stays referenced */
			if (pipe2(pfd, O_CLOEXEC) < 0 || vmsplice(pfd[1], &iov, 1, 0) != (ssize_t)PAGE_SIZE) {
				perror("workload: vmsplice");
				return 1;
			}
		}
		if (pats[r] == PAT_NOHUGE &&
		    madvise(base + (size_t)r * RANGE_SIZE, RANGE_SIZE, MADV_NOHUGEPAGE) < 0) {
			perror("workload: madvise(MADV_NOHUGEPAGE)");
			return 1;
		}
	}

	tt = (struct touch){.base = base, .nr = nr, .pats = pats};
	if (touch && pthread_create(&tid, NULL, toucher, &tt) != 0) {
		fprintf(stderr, "workload: cannot start the reading thread\n");
		return 1;
	}
	printf("{\"pid\":%d,\"base\":\"%p\",\"ranges\":%u}\n", (int)getpid(), (void *)base, nr);
	(void)fflush(stdout);

	for (;;) {
		struct signalfd_siginfo si;
		ssize_t n = read(sfd, &si, sizeof(si));
		unsigned int bad_range = 0, bad_page = 0;
		int r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(si)) {
			perror("workload: read signalfd");
			break;
		}
		if (si.ssi_signo == SIGHUP) {
			unsigned int released = 0;

			for (unsigned int i = 0; i < nr; i++)
				if ((pats[i] == PAT_HALF || pats[i] == PAT_PURGE) &&
				    madvise(base + (size_t)i * RANGE_SIZE + RANGE_SIZE / 2, RANGE_SIZE / 2,
					    MADV_DONTNEED) == 0) {
					released++;
					pats[i] = PAT_HALF; /* what is left to check */
				}
			printf("released %u\n", released);
			(void)fflush(stdout);
			continue;
		}
		if (si.ssi_signo == SIGUSR2) {
			printf("%s\n", madvise(base, (size_t)nr * RANGE_SIZE, MADV_HUGEPAGE) == 0
					       ? "hugepage" : strerror(errno));
			(void)fflush(stdout);
			continue;
		}
		if (si.ssi_signo == SIGWINCH) {
			bool off = prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0;
			char *page = mmap(NULL, PAGE_SIZE, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (page != MAP_FAILED) {
				*(volatile char *)page = 1;
				(void)munmap(page, PAGE_SIZE);
			}
			printf("%s\n", off ? "thp_disabled" : strerror(errno));
			(void)fflush(stdout);
			continue;
		}
		if (si.ssi_signo != SIGUSR1)
			break;
		r = verify(base, nr, pats, &bad_range, &bad_page);
		if (r == 0)
			printf("ok\n");
		else if (r > 0)
			printf("corrupt at range %u page %u\n", bad_range, bad_page);
		else
			printf("cannot verify: %s\n", strerror(errno));
		(void)fflush(stdout);
	}

	if (child > 0) {
		(void)kill(child, SIGKILL);
		(void)waitpid(child, NULL, 0);
	}
	free(pats);
	return 0;
}
