/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pagemap.h"
#include "uapi.h"
#include "util.h"
#include "vmas.h"

static uint64_t align_up(uint64_t v)
{
	return (v + MTHPD_PMD_SIZE - 1) & ~(MTHPD_PMD_SIZE - 1);
}

static uint64_t align_down(uint64_t v)
{
	return v & ~(MTHPD_PMD_SIZE - 1);
}

int mthpd_maps_parse_line(const char *line, struct mthpd_maps_entry *ret)
{
	struct mthpd_maps_entry e = {0};
	int name_at = 0;

	/* start-end perms offset major:minor inode [name] */
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n", &e.start,
		   &e.end, e.perms, &e.offset, &e.dev_major, &e.dev_minor, &e.inode, &name_at) != 7)
		return -EINVAL;
	if (e.end <= e.start || strlen(e.perms) != 4)
		return -EINVAL;
	e.name = line + name_at;
	*ret = e;
	return 0;
}

bool mthpd_maps_entry_eligible(const struct mthpd_maps_entry *e)
{
	const char *n = e->name;

	if (strncmp(e->perms, "rw", 2) != 0 || e->perms[3] != 'p')
		return false;
	if (e->inode != 0 || e->dev_major != 0 || e->dev_minor != 0)
		return false;
	/* Anonymous, the heap, the stack, or named anonymous memory. */
	return *n == '\0' || *n == '\n' || strncmp(n, "[heap]", 6) == 0 ||
	       strncmp(n, "[stack]", 7) == 0 || strncmp(n, "[anon:", 6) == 0;
}

struct vma_list {
	struct mthpd_vma *v;
	size_t n, cap;
};

static int vma_list_add(struct vma_list *l, uint64_t start, uint64_t end)
{
	uint64_t s = align_up(start), e = align_down(end);

	if (s >= e)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct mthpd_vma *nv;

		if (l->n >= MTHPD_MAX_VMAS)
			return -E2BIG;
		nv = reallocarray(l->v, cap, sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = cap;
	}
	l->v[l->n++] = (struct mthpd_vma){.start = s, .end = e};
	return 0;
}

static int open_pid_file(const struct mthpd_kif *kif, pid_t pid, const char *file)
{
	char path[64];

	if (snprintf(path, sizeof(path), "%d/%s", (int)pid, file) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	return kif->ops->open_proc(kif, path, O_RDONLY);
}

static int read_with_query(const struct mthpd_kif *kif, int fd, struct vma_list *l)
{
	uint64_t addr = 0;

	for (;;) {
		/*
		 * The kernel skips VMAs that are not readable and writable
		 * itself (libraries' text and read-only data, guard gaps):
		 * 10 ioctls instead of 25 for a small C program (measured).
		 */
		struct procmap_query q = {
			.size = sizeof(q),
			.query_flags = PROCMAP_QUERY_COVERING_OR_NEXT_VMA | PROCMAP_QUERY_VMA_READABLE |
				       PROCMAP_QUERY_VMA_WRITABLE,
			.query_addr = addr,
		};
		int r = kif->ops->ioctl(kif, fd, PROCMAP_QUERY, &q);

		if (r == -ENOENT)
			return 0; /* no VMA at or after addr */
		if (r < 0)
			return r;
		if ((q.vma_flags & PROCMAP_QUERY_VMA_READABLE) &&
		    (q.vma_flags & PROCMAP_QUERY_VMA_WRITABLE) &&
		    !(q.vma_flags & PROCMAP_QUERY_VMA_SHARED) && q.inode == 0 && q.dev_major == 0 &&
		    q.dev_minor == 0) {
			r = vma_list_add(l, q.vma_start, q.vma_end);
			if (r < 0)
				return r;
		}
		addr = q.vma_end;
	}
}

static int read_with_maps(int fd, struct vma_list *l)
{
	_cleanup_fclose_ FILE *f = fdopen(fd, "re");
	char line[4096 + 128]; /* PATH_MAX name plus the fields */

	if (!f) {
		(void)close(fd);
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		struct mthpd_maps_entry e;
		int r;

		if (mthpd_maps_parse_line(line, &e) < 0)
			continue;
		if (!mthpd_maps_entry_eligible(&e))
			continue;
		r = vma_list_add(l, e.start, e.end);
		if (r < 0)
			return r;
	}
	return ferror(f) ? -EIO : 0;
}

int mthpd_vmas_read(const struct mthpd_kif *kif, pid_t pid, bool use_query,
		    struct mthpd_vma **ret, size_t *ret_n)
{
	struct vma_list l = {0};
	int fd, r;

	fd = open_pid_file(kif, pid, "maps");
	if (fd < 0)
		return fd == -ENOENT ? -ESRCH : fd;
	if (use_query) {
		r = read_with_query(kif, fd, &l);
		(void)close(fd);
	} else {
		r = read_with_maps(fd, &l); /* takes ownership of fd */
	}
	if (r < 0) {
		free(l.v);
		return r;
	}
	/* A maps file of an exited process reads empty: nothing to do either way. */
	*ret = l.v;
	*ret_n = l.n;
	return 0;
}

int mthpd_vmas_read_nohugepage(const struct mthpd_kif *kif, pid_t pid, struct mthpd_vma *v,
			       size_t n)
{
	_cleanup_fclose_ FILE *f = NULL;
	struct mthpd_maps_entry cur = {0};
	bool have = false;
	char line[4096 + 128];
	size_t idx = 0;
	int fd;

	fd = open_pid_file(kif, pid, "smaps");
	if (fd < 0)
		return fd == -ENOENT ? -ESRCH : fd;
	f = fdopen(fd, "re");
	if (!f) {
		(void)close(fd);
		return -errno;
	}
	/* "VmFlags: rd wr mr mw me ac sd nh " follows each VMA's fields. */
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "VmFlags:", 8) == 0) {
			/* Both lists ascend: one pass with a cursor into @v. */
			while (have && idx < n && v[idx].end <= cur.start)
				idx++;
			if (have && idx < n && v[idx].start >= cur.start && v[idx].end <= cur.end &&
			    strstr(line + 8, " nh"))
				v[idx].nohugepage = true;
			have = false;
			continue;
		}
		if (mthpd_maps_parse_line(line, &cur) == 0)
			have = true;
	}
	return ferror(f) ? -EIO : 0;
}

int mthpd_vmas_query_probe(const struct mthpd_kif *kif, pid_t pid)
{
	struct procmap_query q = {
		.size = sizeof(q),
		.query_flags = PROCMAP_QUERY_COVERING_OR_NEXT_VMA,
	};
	_cleanup_close_ int fd = open_pid_file(kif, pid, "maps");
	int r;

	if (fd < 0)
		return fd;
	r = kif->ops->ioctl(kif, fd, PROCMAP_QUERY, &q);
	if (r >= 0 || r == -ENOENT)
		return 1;
	if (r == -ENOTTY || r == -EINVAL || r == -EOPNOTSUPP)
		return 0;
	return r;
}

int mthpd_vma_verdict_lookup(const struct mthpd_vma_verdict *verdicts, size_t n,
			     const struct mthpd_vma *v)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (verdicts[mid].start < v->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && verdicts[lo].start == v->start && verdicts[lo].end == v->end)
		return verdicts[lo].refused;
	return -1;
}

int mthpd_vma_refused(struct mthpd_kif *kif, int pidfd, pid_t pid, struct mthpd_vma *v, size_t i,
		      size_t n, bool *smaps_read)
{
	if (pidfd >= 0 && !*smaps_read) {
		int64_t r = kif->ops->collapse(kif, pidfd, v[i].start, MTHPD_PAGE_SIZE, 0);

		if (r >= 0)
			return 0;
		if (r == -EINVAL)
			return 1;
		if (r == -ESRCH)
			return -ESRCH;
		/* EPERM (no CAP_SYS_NICE), ENOSYS...: ask smaps instead */
	}
	if (!*smaps_read) {
		int r = mthpd_vmas_read_nohugepage(kif, pid, v, n);

		if (r < 0)
			return r;
		*smaps_read = true;
	}
	return v[i].nohugepage;
}
