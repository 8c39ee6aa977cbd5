/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake-kif.h"
#include "kpageflags.h"
#include "pagemap.h"
#include "util.h"

#define ANON_FLAGS 0x5828ULL /* UPTODATE|LRU|MMAP|ANON|SWAPBACKED, measured */

static int fake_open(const struct mthpd_kif *kif, const char *path, int flags)
{
	int fd = openat(kif->proc_fd, path, flags | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int fake_pidfd_open(const struct mthpd_kif *kif _unused_, pid_t pid _unused_)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int write_flags(struct fake_kif *f, uint64_t pfn, const uint64_t *flags, unsigned int n)
{
	char path[96];
	_cleanup_close_ int fd = -1;

	(void)snprintf(path, sizeof(path), "%s/proc/kpageflags", f->dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pwrite(fd, flags, n * sizeof(*flags), (off_t)(pfn * 8)) != (ssize_t)(n * sizeof(*flags)))
		return -EIO;
	return 0;
}

/* kpageflags of the pages at @addr..@addr+@len: one folio, or (@folio false) small pages. */
static int mark_pages(struct fake_kif *f, uint64_t addr, uint64_t len, bool folio)
{
	unsigned int n = (unsigned int)(len / MTHPD_PAGE_SIZE);
	_cleanup_free_ uint64_t *fl = calloc(n, sizeof(*fl));

	if (!fl)
		return -ENOMEM;
	for (unsigned int k = 0; k < n; k++)
		fl[k] = ANON_FLAGS | (folio ? KPF_BIT(KPF_THP) |
						      KPF_BIT(k ? KPF_COMPOUND_TAIL : KPF_COMPOUND_HEAD)
					    : 0);
	return write_flags(f, f->pfn_base + (addr - f->base) / MTHPD_PAGE_SIZE, fl, n);
}

int fake_kif_folio(struct fake_kif *f, uint64_t addr, uint64_t len)
{
	return mark_pages(f, addr, len, true);
}

/* The next scripted answer for a call of @flags on @addr, @len, recorded. */
static int64_t next_answer(struct fake_kif *f, uint64_t addr, uint64_t len, unsigned int flags,
			   unsigned int *ret_i)
{
	unsigned int i = f->nr_calls;

	if (i >= FAKE_KIF_MAX_CALLS)
		return -E2BIG;
	f->calls[f->nr_calls++] = (struct fake_kif_call){.addr = addr, .len = len, .flags = flags};
	*ret_i = i;
	return i < f->nr_answers ? f->answers[i] : -ENOSYS;
}

static int64_t fake_collapse(struct mthpd_kif *kif, int pidfd _unused_, uint64_t addr,
			     uint64_t len, unsigned int flags)
{
	struct fake_kif *f = kif->priv;
	unsigned int i = 0;
	int64_t answer = next_answer(f, addr, len, flags, &i);

	if (answer == -E2BIG)
		return answer;
	if (f->call_usec) {
		struct timespec ts = {.tv_nsec = (long)f->call_usec * 1000L};

		(void)nanosleep(&ts, NULL);
	}
	if (answer == -ENOMEM && f->effect[i] && f->has_vmstat)
		(void)fake_kif_vmstat(f, f->alloc_failed + 1);
	if (answer >= 0 && f->effect[i]) {
		if (f->folio_len[i]) {
			len = f->folio_len[i];
			addr &= ~(len - 1);
		}
		if (mark_pages(f, addr, len, true) == -ENOMEM)
			return -ENOMEM;
	}
	return answer;
}

/* MADV_COLD: with effect, the 2M folio around @addr is split into small pages. */
static int64_t fake_cold(struct mthpd_kif *kif, int pidfd _unused_, uint64_t addr, uint64_t len)
{
	struct fake_kif *f = kif->priv;
	unsigned int i = 0;
	int64_t answer = next_answer(f, addr, len, FAKE_KIF_COLD, &i);

	if (answer >= 0 && i < f->nr_answers && f->effect[i] &&
	    mark_pages(f, addr & ~(MTHPD_PMD_SIZE - 1), MTHPD_PMD_SIZE, false) == -ENOMEM)
		return -ENOMEM;
	return answer;
}

/* As the kernel: the blocks one by one, stopping at the first that fails. */
static int64_t fake_collapse_batch(struct mthpd_kif *kif, int pidfd,
				   const struct mthpd_kif_block *blocks, size_t n, unsigned int flags)
{
	struct fake_kif *f = kif->priv;
	int64_t done = 0;

	f->nr_batches++;
	for (size_t i = 0; i < n; i++) {
		int64_t r = fake_collapse(kif, pidfd, blocks[i].addr, blocks[i].len, flags);

		if (r < 0)
			return done ? done : r;
		done += (int64_t)blocks[i].len;
	}
	return done;
}

static int fake_ioctl(const struct mthpd_kif *kif _unused_, int fd _unused_,
		      unsigned long req _unused_, void *arg _unused_)
{
	return -ENOTTY; /* a regular file: no PAGEMAP_SCAN, no PROCMAP_QUERY */
}

/* Recorded with the index of the call it comes before. */
static void fake_prefault(struct mthpd_kif *kif, size_t n)
{
	struct fake_kif *f = kif->priv;

	if (f->nr_prefaults < FAKE_KIF_MAX_CALLS)
		f->prefaults[f->nr_prefaults++] =
			(struct fake_kif_prefault){.before_call = f->nr_calls, .n = (unsigned int)n};
}

static const struct mthpd_kif_ops fake_ops = {
	.open_proc = fake_open,
	.open_sys = fake_open,
	.pidfd_open = fake_pidfd_open,
	.collapse = fake_collapse,
	.collapse_batch = fake_collapse_batch,
	.cold = fake_cold,
	.ioctl = fake_ioctl,
	.prefault = fake_prefault,
};

int fake_kif_init(struct fake_kif *f, uint64_t base, unsigned int nr_pages, uint64_t pfn_base)
{
	_cleanup_free_ uint64_t *e = calloc(nr_pages, sizeof(*e));
	_cleanup_free_ uint64_t *fl = calloc(nr_pages, sizeof(*fl));
	_cleanup_close_ int fd = -1;
	char path[96];

	memset(f, 0, sizeof(*f));
	if (!e || !fl)
		return -ENOMEM;
	(void)snprintf(f->dir, sizeof(f->dir), "/tmp/mthpd-fake-XXXXXX");
	if (!mkdtemp(f->dir))
		return -errno;
	(void)snprintf(path, sizeof(path), "%s/proc", f->dir);
	if (mkdir(path, 0700) < 0)
		return -errno;
	(void)snprintf(path, sizeof(path), "%s/proc/42", f->dir);
	if (mkdir(path, 0700) < 0)
		return -errno;
	for (unsigned int i = 0; i < nr_pages; i++) {
		e[i] = PM_PRESENT | PM_MMAP_EXCLUSIVE | (pfn_base + i);
		fl[i] = ANON_FLAGS;
	}
	(void)snprintf(path, sizeof(path), "%s/proc/42/pagemap", f->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || pwrite(fd, e, nr_pages * 8UL, (off_t)(base / MTHPD_PAGE_SIZE * 8)) < 0)
		return -errno;
	(void)close(TAKE_FD(fd));
	(void)snprintf(path, sizeof(path), "%s/proc/kpageflags", f->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	f->base = base;
	f->pfn_base = pfn_base;
	if (write_flags(f, pfn_base, fl, nr_pages) < 0)
		return -EIO;
	(void)snprintf(path, sizeof(path), "%s/proc", f->dir);
	f->kif = (struct mthpd_kif){
		.ops = &fake_ops,
		.proc_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC),
		.sys_fd = -1,
		.priv = f,
	};
	return f->kif.proc_fd < 0 ? -errno : 0;
}

void fake_kif_done(struct fake_kif *f)
{
	char cmd[128];

	if (f->kif.proc_fd >= 0)
		(void)close(f->kif.proc_fd);
	f->kif.proc_fd = -1;
	(void)mthpd_kif_prefault_set(&f->kif, false);
	if (f->dir[0] && snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir) < (int)sizeof(cmd))
		(void)!system(cmd);
}

void fake_kif_answer(struct fake_kif *f, int64_t answer, bool effect)
{
	if (f->nr_answers < FAKE_KIF_MAX_CALLS) {
		f->answers[f->nr_answers] = answer;
		f->folio_len[f->nr_answers] = 0;
		f->effect[f->nr_answers++] = effect;
	}
}

void fake_kif_answer_folio(struct fake_kif *f, int64_t answer, uint64_t folio_len)
{
	if (f->nr_answers < FAKE_KIF_MAX_CALLS) {
		f->answers[f->nr_answers] = answer;
		f->folio_len[f->nr_answers] = folio_len;
		f->effect[f->nr_answers++] = true;
	}
}

int fake_kif_vmstat(struct fake_kif *f, uint64_t alloc_failed)
{
	char path[96];
	FILE *file;

	(void)snprintf(path, sizeof(path), "%s/proc/vmstat", f->dir);
	file = fopen(path, "we");
	if (!file)
		return -errno;
	fprintf(file, "nr_free_pages 1000\nthp_collapse_alloc 7\nthp_collapse_alloc_failed %llu\n"
		      "thp_file_alloc 0\n",
		(unsigned long long)alloc_failed);
	if (fclose(file) != 0)
		return -EIO;
	f->has_vmstat = true;
	f->alloc_failed = alloc_failed;
	return 0;
}
