/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mkfixture SPEC OUTDIR: builds a synthetic /proc and /sys tree for mthpd's
 * fixture tests (--proc-root OUTDIR/proc --sys-root OUTDIR/sys) from a text
 * spec that a person can read and review.  The binary files (pagemap,
 * kpageflags) are only ever generated, never edited by hand.
 *
 * Spec language, one statement per line; "#" at the start of a word starts
 * a comment:
 *
 *   khugepaged max_ptes_none=511 max_ptes_swap=64 max_ptes_shared=256
 *   khugepaged absent            (write no khugepaged files at all)
 *   folio_pfns contiguous        (or gapped, the default: see below)
 *   process 4242 comm=redis-server [thp_disabled]
 *   vma 0x7f0000000000-0x7f0000a00000 rw-p [nohugepage] [hugepage]
 *       [name=[heap]] [file=/usr/lib/libc.so.6]
 *   range 0x7f0000000000: 100 written, 12 zero, 400 none
 *   range 0x7f0000200000 repeat 3: 512 written
 *
 * The khugepaged line is optional; missing knobs get the kernel defaults
 * (511, 64, 256).  comm= takes "double quotes" for names with spaces, and
 * \" and \\ inside them for a quote or a backslash, \xHH for any other
 * byte (not NUL).
 * vma and range lines belong to the process above them; a range starts at
 * a page address and describes consecutive pages, which must all lie in a
 * vma of that process declared above it and be described only once.
 * "repeat N" lays the same pattern down N times back to back.
 *
 * Page kinds ("COUNT KIND", COUNT pages; "Nx"/"N" before a folio kind is a
 * number of folios, default 1):
 *   written    private anon page: present, exclusive, own PFN
 *   shared     anon page COW-shared with another process: present, not
 *              exclusive, own PFN
 *   zero       the shared 4K zero page (PFN 0x3b30)
 *   none       never touched (entry 0)
 *   swap       swapped out (bit 62, swap type 0, own offset)
 *   guard      MADV_GUARD_INSTALL marker (bits 62 and 58)
 *   thp        PMD-mapped THP: 512 pages, 2 MiB-aligned address, 512-aligned
 *              PFNs, HEAD|THP then TAIL|THP
 *   huge_zero  the huge zero page: 512 pages, 2 MiB-aligned, bit 61 on
 *              every entry, ZERO_PAGE|THP|HEAD/TAIL
 *   folio16k folio32k folio64k folio128k folio256k folio512k folio1m
 *              PTE-mapped anon large folio: aligned address and PFNs
 *
 * Entry and flag values follow Documentation/admin-guide/mm/pagemap.rst and
 * include/uapi/linux/kernel-page-flags.h, as measured on Linux 6.18
 * (/work/shared/facts/kernel-interfaces-probe.md): they are spelled out here
 * rather than taken from lib/, so that a wrong constant in mthpd cannot be
 * mirrored by its own fixtures.
 *
 * PFNs of small pages come from a counter that starts at 0x100001 and skips
 * every multiple of 512, so that no run of 4K pages can pass for a PMD-mapped
 * THP.  Folios get aligned PFNs from a separate counter above them, with a
 * hole of one folio after each, so that consecutive small folios never look
 * like one larger folio either.  "folio_pfns contiguous" drops the holes for
 * the folios of the lines below it (as a fresh buddy allocator hands out
 * 64K folios one after another from one 2M block); "folio_pfns gapped"
 * brings them back.  Past 12 GiB of small pages (the counter reaching the
 * folios' base) the small counter goes on at 0x10000001, far above the
 * folios (bench/synth lays down 16 GiB; kpageflags is then a sparse file of
 * 2 GiB).
 *
 * Output: OUTDIR/proc/PID/{maps,smaps,pagemap,comm,status},
 * OUTDIR/proc/kpageflags and
 * OUTDIR/sys/kernel/mm/transparent_hugepage/khugepaged/max_ptes_{none,swap,shared}.
 * pagemap and kpageflags are sparse files of little-endian u64 written with
 * pwrite at (vaddr / 4096) * 8 and pfn * 8; each is as long as a reader may
 * need (the end of the highest VMA, the highest PFN used).
 *
 * Exit status: 0 done, 1 error in the spec (FILE:LINE: message) or in
 * writing OUTDIR, 2 usage.
 */
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE_SIZE 4096ULL
#define PMD_NR 512ULL
#define PMD_SIZE (PAGE_SIZE * PMD_NR)

/* /proc/PID/pagemap (Documentation/admin-guide/mm/pagemap.rst) */
#define PM_PRESENT (1ULL << 63)
#define PM_SWAP (1ULL << 62)
#define PM_FILE (1ULL << 61) /* also set on the huge zero page (measured) */
#define PM_GUARD (1ULL << 58)
#define PM_EXCLUSIVE (1ULL << 56)
#define PM_SWAP_TYPE_BITS 5 /* swap entries: type in bits 0-4, offset above */

/* /proc/kpageflags (include/uapi/linux/kernel-page-flags.h) */
#define KPF(b) (1ULL << (b))
#define KPF_UPTODATE 3
#define KPF_LRU 5
#define KPF_MMAP 11
#define KPF_ANON 12
#define KPF_SWAPBACKED 14
#define KPF_COMPOUND_HEAD 15
#define KPF_COMPOUND_TAIL 16
#define KPF_THP 22
#define KPF_ZERO_PAGE 24
#define KPF_RESERVED 32
#define KPF_MAPPEDTODISK 34 /* PG_anon_exclusive on anon pages */

/* 0x5828: what a written 4K anon page shows (measured), plus 34 if exclusive */
#define ANON_FLAGS (KPF(KPF_UPTODATE) | KPF(KPF_LRU) | KPF(KPF_MMAP) | KPF(KPF_ANON) | \
		    KPF(KPF_SWAPBACKED))

#define ZERO_PFN 0x3b30ULL       /* the 4K zero page (measured, the same in every run) */
#define HUGE_ZERO_PFN 0x3c00ULL  /* the huge zero page: 512-aligned, below the others */
#define SMALL_PFN_BASE 0x100001ULL
#define FOLIO_PFN_BASE 0x400000ULL
#define SMALL_PFN_HIGH 0x10000001ULL /* small pages past FOLIO_PFN_BASE go on here */
#define SWAP_OFFSET_BASE 0x1000ULL

#define MAX_PAGES_PER_LINE (1ULL << 22) /* 16 GiB of pages: a typo guard */
#define MAX_PROCS 65536 /* a typo guard; bench/synth makes a few thousand */
#define MAX_COMM 15                     /* TASK_COMM_LEN - 1 */

enum kind {
	K_WRITTEN,
	K_SHARED,
	K_ZERO,
	K_NONE,
	K_SWAP,
	K_GUARD,
	K_THP,
	K_HUGE_ZERO,
	K_FOLIO,
};

static const struct kind_def {
	const char *name;
	enum kind kind;
	unsigned int order; /* large kinds: pages per unit = 1 << order */
} kinds[] = {
	{"written", K_WRITTEN, 0},   {"shared", K_SHARED, 0},     {"zero", K_ZERO, 0},
	{"none", K_NONE, 0},         {"swap", K_SWAP, 0},         {"guard", K_GUARD, 0},
	{"thp", K_THP, 9},           {"huge_zero", K_HUGE_ZERO, 9}, {"folio16k", K_FOLIO, 2},
	{"folio32k", K_FOLIO, 3},    {"folio64k", K_FOLIO, 4},    {"folio128k", K_FOLIO, 5},
	{"folio256k", K_FOLIO, 6},   {"folio512k", K_FOLIO, 7},   {"folio1m", K_FOLIO, 8},
};

struct page {
	uint64_t vaddr;
	uint64_t entry;
	enum kind kind;
	unsigned int line;
};

struct vma {
	uint64_t start, end;
	char perms[5];
	bool nohugepage, hugepage;
	char *name; /* NULL for anonymous */
	bool file;
	unsigned int line;
};

struct proc {
	int pid;
	char comm[MAX_COMM + 1];
	bool thp_disabled;
	struct vma *vmas;
	size_t nvmas;
	struct page *pages;
	size_t npages, cap_pages;
};

struct kpf {
	uint64_t pfn, flags;
};

struct spec {
	const char *path;
	unsigned int line;
	bool khugepaged_absent, khugepaged_seen;
	bool folio_pfns_contiguous;
	unsigned int max_ptes[3]; /* none, swap, shared */
	struct proc *procs;
	size_t nprocs, cap_procs;
	struct kpf *kpf;
	size_t nkpf, cap_kpf;
	uint64_t next_small_pfn, next_folio_pfn, next_swap_offset;
};

_Noreturn __attribute__((format(printf, 2, 3))) static void spec_error(const struct spec *s,
								      const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%u: ", s->path, s->line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

_Noreturn __attribute__((format(printf, 1, 2))) static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("mkfixture: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xreallocarray(void *p, size_t n, size_t size)
{
	void *q = reallocarray(p, n, size);

	if (!q)
		die("out of memory");
	return q;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		die("out of memory");
	return d;
}

/* A whole token as an unsigned number: 0x hex or decimal (never octal). */
static bool parse_u64(const char *t, uint64_t *ret)
{
	const bool hex = t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)t[0]) || (hex && !isxdigit((unsigned char)t[2])))
		return false;
	errno = 0;
	v = strtoull(t, &end, hex ? 16 : 10);
	if (errno || end == t || *end)
		return false;
	*ret = v;
	return true;
}

static uint64_t need_u64(const struct spec *s, const char *t, const char *what)
{
	uint64_t v;

	if (!parse_u64(t, &v))
		spec_error(s, "%s: '%s' is not a number", what, t);
	return v;
}

/*
 * Splits @line in place into whitespace-separated tokens; a token may hold
 * "double quoted" text with spaces (quotes removed).  Returns the count.
 */
static size_t tokenize(const struct spec *s, char *line, char **tok, size_t max)
{
	size_t n = 0;
	char *p = line;

	for (;;) {
		char *out;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			return n;
		if (n == max)
			spec_error(s, "too many words on one line");
		tok[n++] = out = p;
		while (*p && !isspace((unsigned char)*p)) {
			if (*p == '"') {
				p++;
				while (*p && *p != '"') {
					/* \" and \\ inside quotes: a quote or backslash in a comm */
					if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
						p++;
					/* \xHH: any other byte (ESC, a newline), as prctl(PR_SET_NAME) takes */
					if (*p == '\\' && p[1] == 'x' && isxdigit((unsigned char)p[2]) &&
					    isxdigit((unsigned char)p[3])) {
						char hex[3] = {p[2], p[3], '\0'};
						long b = strtol(hex, NULL, 16);

						if (b == 0)
							spec_error(s, "\\x00 in a name");
						*out++ = (char)b;
						p += 4;
						continue;
					}
					*out++ = *p++;
				}
				if (*p != '"')
					spec_error(s, "unterminated quote");
				p++;
				continue;
			}
			*out++ = *p++;
		}
		if (*p)
			p++;
		*out = '\0';
	}
}

static char *trim(char *p)
{
	char *e;

	while (isspace((unsigned char)*p))
		p++;
	e = p + strlen(p);
	while (e > p && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return p;
}

static struct proc *cur_proc(struct spec *s, const char *what)
{
	if (s->nprocs == 0)
		spec_error(s, "'%s' before any 'process' line", what);
	return &s->procs[s->nprocs - 1];
}

static void parse_khugepaged(struct spec *s, char **tok, size_t n)
{
	static const char *const keys[] = {"max_ptes_none", "max_ptes_swap", "max_ptes_shared"};

	if (s->khugepaged_seen)
		spec_error(s, "a second 'khugepaged' line");
	s->khugepaged_seen = true;
	if (n == 2 && strcmp(tok[1], "absent") == 0) {
		s->khugepaged_absent = true;
		return;
	}
	for (size_t i = 1; i < n; i++) {
		char *eq = strchr(tok[i], '=');
		size_t k;

		if (!eq)
			spec_error(s, "khugepaged: expected KEY=VALUE, got '%s'", tok[i]);
		*eq = '\0';
		for (k = 0; k < 3 && strcmp(tok[i], keys[k]) != 0; k++)
			;
		if (k == 3)
			spec_error(s, "khugepaged: unknown knob '%s' (max_ptes_none, "
				      "max_ptes_swap, max_ptes_shared)", tok[i]);
		uint64_t v = need_u64(s, eq + 1, keys[k]);
		if (v > 511)
			spec_error(s, "khugepaged: %s=%" PRIu64 " is above 511", keys[k], v);
		s->max_ptes[k] = (unsigned int)v;
	}
}

static void parse_process(struct spec *s, char **tok, size_t n)
{
	struct proc *p;
	uint64_t pid;

	if (n < 2)
		spec_error(s, "process: expected 'process PID comm=NAME [thp_disabled]'");
	pid = need_u64(s, tok[1], "process id");
	if (pid == 0 || pid > 4194304)
		spec_error(s, "process id %" PRIu64 " is out of range (1..4194304)", pid);
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == (int)pid)
			spec_error(s, "process %" PRIu64 " is already described", pid);
	if (s->nprocs == MAX_PROCS)
		spec_error(s, "more than %d processes", MAX_PROCS);
	if (s->nprocs == s->cap_procs) {
		s->cap_procs = s->cap_procs ? 2 * s->cap_procs : 64;
		s->procs = xreallocarray(s->procs, s->cap_procs, sizeof(*s->procs));
	}
	p = &s->procs[s->nprocs++];
	*p = (struct proc){.pid = (int)pid};
	snprintf(p->comm, sizeof(p->comm), "proc%d", p->pid);
	for (size_t i = 2; i < n; i++) {
		if (strncmp(tok[i], "comm=", 5) == 0) {
			const char *c = tok[i] + 5;

			if (!*c || strlen(c) > MAX_COMM || strchr(c, '\n'))
				spec_error(s, "comm '%s' must be 1 to %d characters", c, MAX_COMM);
			memcpy(p->comm, c, strlen(c) + 1);
		} else if (strcmp(tok[i], "thp_disabled") == 0) {
			p->thp_disabled = true;
		} else {
			spec_error(s, "process: unknown word '%s' (comm=NAME, thp_disabled)", tok[i]);
		}
	}
}

static bool valid_perms(const char *p)
{
	return strlen(p) == 4 && (p[0] == 'r' || p[0] == '-') && (p[1] == 'w' || p[1] == '-') &&
	       (p[2] == 'x' || p[2] == '-') && (p[3] == 'p' || p[3] == 's');
}

static void parse_vma(struct spec *s, char **tok, size_t n)
{
	struct proc *p = cur_proc(s, "vma");
	struct vma v = {.line = s->line};
	char *dash;

	if (n < 3)
		spec_error(s, "vma: expected 'vma START-END PERMS [nohugepage] [name=...]'");
	dash = strchr(tok[1], '-');
	if (!dash)
		spec_error(s, "vma: expected START-END, got '%s'", tok[1]);
	*dash = '\0';
	v.start = need_u64(s, tok[1], "vma start");
	v.end = need_u64(s, dash + 1, "vma end");
	if (v.start % PAGE_SIZE || v.end % PAGE_SIZE)
		spec_error(s, "vma: 0x%" PRIx64 "-0x%" PRIx64 " is not page aligned", v.start, v.end);
	if (v.end <= v.start || v.end > (1ULL << 47))
		spec_error(s, "vma: 0x%" PRIx64 "-0x%" PRIx64 " is empty or beyond the user "
			      "address space", v.start, v.end);
	if (!valid_perms(tok[2]))
		spec_error(s, "vma: '%s' is not a permission string like rw-p", tok[2]);
	memcpy(v.perms, tok[2], 5);
	for (size_t i = 3; i < n; i++) {
		if (strcmp(tok[i], "nohugepage") == 0) {
			v.nohugepage = true;
		} else if (strcmp(tok[i], "hugepage") == 0) {
			v.hugepage = true;
		} else if (strncmp(tok[i], "name=", 5) == 0 && tok[i][5] && !v.name) {
			v.name = xstrdup(tok[i] + 5);
		} else if (strncmp(tok[i], "file=", 5) == 0 && tok[i][5] == '/' && !v.name) {
			v.name = xstrdup(tok[i] + 5);
			v.file = true;
		} else {
			spec_error(s, "vma: unexpected '%s' (nohugepage, hugepage, name=NAME, "
				      "file=/PATH; one name at most)", tok[i]);
		}
	}
	if (v.nohugepage && v.hugepage)
		spec_error(s, "vma: both hugepage and nohugepage");
	for (size_t i = 0; i < p->nvmas; i++)
		if (v.start < p->vmas[i].end && p->vmas[i].start < v.end)
			spec_error(s, "vma overlaps the one on line %u", p->vmas[i].line);
	p->vmas = xreallocarray(p->vmas, p->nvmas + 1, sizeof(*p->vmas));
	p->vmas[p->nvmas++] = v;
}

static const struct kind_def *find_kind(const char *name)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kinds[i].name, name) == 0)
			return &kinds[i];
	return NULL;
}

static void add_kpf(struct spec *s, uint64_t pfn, uint64_t flags)
{
	if (s->nkpf == s->cap_kpf) {
		s->cap_kpf = s->cap_kpf ? s->cap_kpf * 2 : 1024;
		s->kpf = xreallocarray(s->kpf, s->cap_kpf, sizeof(*s->kpf));
	}
	s->kpf[s->nkpf++] = (struct kpf){pfn, flags};
}

static void add_page(struct spec *s, struct proc *p, uint64_t vaddr, uint64_t entry,
		     enum kind kind)
{
	bool inside = false;

	for (size_t i = 0; i < p->nvmas && !inside; i++)
		inside = vaddr >= p->vmas[i].start && vaddr < p->vmas[i].end;
	if (!inside)
		spec_error(s, "page 0x%" PRIx64 " is in no vma of process %d declared above",
			   vaddr, p->pid);
	if (p->npages == p->cap_pages) {
		p->cap_pages = p->cap_pages ? p->cap_pages * 2 : 4096;
		p->pages = xreallocarray(p->pages, p->cap_pages, sizeof(*p->pages));
	}
	p->pages[p->npages++] = (struct page){vaddr, entry, kind, s->line};
}

/* Small pages never get a 512-aligned PFN: see the header. */
static uint64_t alloc_small_pfn(struct spec *s)
{
	if (s->next_small_pfn % PMD_NR == 0)
		s->next_small_pfn++;
	if (s->next_small_pfn == FOLIO_PFN_BASE)
		s->next_small_pfn = SMALL_PFN_HIGH;
	if (s->next_small_pfn >= 2 * SMALL_PFN_HIGH)
		die("too many 4K pages for the PFN space of a fixture");
	return s->next_small_pfn++;
}

static uint64_t alloc_folio_pfn(struct spec *s, uint64_t nr)
{
	uint64_t pfn = (s->next_folio_pfn + nr - 1) & ~(nr - 1);

	/* The hole keeps neighbours from forming a larger aligned run. */
	s->next_folio_pfn = pfn + (s->folio_pfns_contiguous ? nr : 2 * nr);
	if (s->next_folio_pfn >= SMALL_PFN_HIGH)
		die("too many folios for the PFN space of a fixture");
	return pfn;
}

/* Lays down @count units of @k at *vaddr and advances it. */
static void add_item(struct spec *s, struct proc *p, uint64_t *vaddr, uint64_t count,
		     const struct kind_def *k)
{
	const uint64_t nr = 1ULL << k->order;

	if (k->order && *vaddr % (nr * PAGE_SIZE))
		spec_error(s, "%s at 0x%" PRIx64 " is not aligned to its size (%" PRIu64 "K)",
			   k->name, *vaddr, nr * 4);
	for (uint64_t u = 0; u < count; u++) {
		uint64_t pfn;

		switch (k->kind) {
		case K_WRITTEN:
			pfn = alloc_small_pfn(s);
			add_page(s, p, *vaddr, PM_PRESENT | PM_EXCLUSIVE | pfn, k->kind);
			add_kpf(s, pfn, ANON_FLAGS | KPF(KPF_MAPPEDTODISK));
			break;
		case K_SHARED:
			pfn = alloc_small_pfn(s);
			add_page(s, p, *vaddr, PM_PRESENT | pfn, k->kind);
			add_kpf(s, pfn, ANON_FLAGS);
			break;
		case K_ZERO:
			add_page(s, p, *vaddr, PM_PRESENT | ZERO_PFN, k->kind);
			break;
		case K_NONE:
			add_page(s, p, *vaddr, 0, k->kind);
			break;
		case K_SWAP:
			add_page(s, p, *vaddr, PM_SWAP | (s->next_swap_offset++ << PM_SWAP_TYPE_BITS),
				 k->kind);
			break;
		case K_GUARD:
			add_page(s, p, *vaddr, PM_SWAP | PM_GUARD, k->kind);
			break;
		case K_HUGE_ZERO:
			for (uint64_t i = 0; i < nr; i++)
				add_page(s, p, *vaddr + i * PAGE_SIZE,
					 PM_PRESENT | PM_FILE | (HUGE_ZERO_PFN + i), k->kind);
			break;
		case K_THP:
		case K_FOLIO:
			pfn = alloc_folio_pfn(s, nr);
			for (uint64_t i = 0; i < nr; i++) {
				add_page(s, p, *vaddr + i * PAGE_SIZE, PM_PRESENT | PM_EXCLUSIVE | (pfn + i),
					 k->kind);
				add_kpf(s, pfn + i,
					ANON_FLAGS | KPF(KPF_MAPPEDTODISK) | KPF(KPF_THP) |
						KPF(i ? KPF_COMPOUND_TAIL : KPF_COMPOUND_HEAD));
			}
			break;
		}
		*vaddr += (k->order ? nr : 1) * PAGE_SIZE;
	}
}

/* "512 written", "32x folio64k", "thp" */
static void parse_item(struct spec *s, struct proc *p, char *item, uint64_t *vaddr)
{
	char *tok[3];
	size_t n = tokenize(s, item, tok, 3);
	const struct kind_def *k;
	uint64_t count = 1;
	const char *kname;

	if (n == 0)
		spec_error(s, "range: empty item (a stray comma?)");
	if (n > 2)
		spec_error(s, "range: '%s %s %s...' is not 'COUNT KIND'", tok[0], tok[1], tok[2]);
	kname = tok[n - 1];
	if (n == 2) {
		size_t len = strlen(tok[0]);

		if (len > 1 && tok[0][len - 1] == 'x')
			tok[0][len - 1] = '\0';
		count = need_u64(s, tok[0], "count");
	}
	k = find_kind(kname);
	if (!k)
		spec_error(s, "unknown page kind '%s' (written, shared, zero, none, swap, guard, "
			      "thp, huge_zero, folio16k..folio1m)", kname);
	if (count == 0 || count > MAX_PAGES_PER_LINE >> k->order)
		spec_error(s, "count %" PRIu64 " of %s is zero or too large", count, kname);
	add_item(s, p, vaddr, count, k);
}

/* "range ADDR[ repeat N]: ITEM, ITEM, ..." */
static void parse_range(struct spec *s, char *rest)
{
	struct proc *p = cur_proc(s, "range");
	char *colon = strchr(rest, ':'), *head[4];
	uint64_t vaddr, repeat = 1;
	size_t n;

	if (!colon)
		spec_error(s, "range: expected 'range ADDR: COUNT KIND, ...'");
	*colon = '\0';
	n = tokenize(s, rest, head, 4);
	if (n == 3 && strcmp(head[1], "repeat") == 0)
		repeat = need_u64(s, head[2], "repeat");
	else if (n != 1)
		spec_error(s, "range: expected 'range ADDR[ repeat N]:' before the colon");
	vaddr = need_u64(s, head[0], "range address");
	if (vaddr % PAGE_SIZE)
		spec_error(s, "range: 0x%" PRIx64 " is not page aligned", vaddr);
	if (repeat == 0 || repeat > 4096)
		spec_error(s, "range: repeat %" PRIu64 " is out of range (1..4096)", repeat);

	for (uint64_t r = 0; r < repeat; r++) {
		char *items = xstrdup(colon + 1), *save = NULL;

		/* strtok_r would merge empty items; keep them to report them. */
		for (char *it = items;; it = save) {
			char *comma = strchr(it, ',');

			save = comma ? comma + 1 : NULL;
			if (comma)
				*comma = '\0';
			parse_item(s, p, it, &vaddr);
			if (!save)
				break;
		}
		free(items);
	}
}

/* Cuts a comment: "#" at the start of a word, outside "quotes". */
static void strip_comment(char *line)
{
	bool quoted = false;

	for (char *p = line; *p; p++) {
		if (*p == '\\' && quoted && p[1])
			p++;
		else if (*p == '"')
			quoted = !quoted;
		else if (*p == '#' && !quoted && (p == line || isspace((unsigned char)p[-1]))) {
			*p = '\0';
			return;
		}
	}
}

static void parse_line(struct spec *s, char *line)
{
	char *tok[32];
	size_t n;

	strip_comment(line);
	line = trim(line);
	if (!*line)
		return;
	/* range items are separated by commas, not words: parsed on their own. */
	if (strcspn(line, " \t:") == 5 && strncmp(line, "range", 5) == 0) {
		parse_range(s, line + 5);
		return;
	}
	n = tokenize(s, line, tok, 32);
	if (strcmp(tok[0], "khugepaged") == 0)
		parse_khugepaged(s, tok, n);
	else if (strcmp(tok[0], "process") == 0)
		parse_process(s, tok, n);
	else if (strcmp(tok[0], "vma") == 0)
		parse_vma(s, tok, n);
	else if (strcmp(tok[0], "folio_pfns") == 0 && n == 2 && strcmp(tok[1], "contiguous") == 0)
		s->folio_pfns_contiguous = true;
	else if (strcmp(tok[0], "folio_pfns") == 0 && n == 2 && strcmp(tok[1], "gapped") == 0)
		s->folio_pfns_contiguous = false;
	else if (strcmp(tok[0], "folio_pfns") == 0)
		spec_error(s, "expected 'folio_pfns contiguous' or 'folio_pfns gapped'");
	else
		spec_error(s, "unknown statement '%s' (khugepaged, process, vma, range, "
			      "folio_pfns)", tok[0]);
}

static void parse_spec(struct spec *s)
{
	FILE *f = fopen(s->path, "re");
	char *line = NULL;
	size_t cap = 0;

	if (!f)
		die("cannot open '%s': %s", s->path, strerror(errno));
	while (getline(&line, &cap, f) >= 0) {
		s->line++;
		parse_line(s, line);
	}
	if (ferror(f))
		die("cannot read '%s': %s", s->path, strerror(errno));
	free(line);
	fclose(f);
	if (s->nprocs == 0) {
		s->line = 0;
		spec_error(s, "no 'process' line");
	}
}

/* ---- output ---- */

static int cmp_page(const void *a, const void *b)
{
	const struct page *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static int cmp_vma(const void *a, const void *b)
{
	const struct vma *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static char *path_join(const char *a, const char *b)
{
	char *p;

	if (asprintf(&p, "%s/%s", a, b) < 0)
		die("out of memory");
	return p;
}

static void mkdir_p(const char *path)
{
	char *p = xstrdup(path);

	for (char *c = p + 1;; c++) {
		bool end = *c == '\0';

		if (*c != '/' && !end)
			continue;
		*c = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			die("cannot create '%s': %s", p, strerror(errno));
		if (end)
			break;
		*c = '/';
	}
	free(p);
}

static int open_out(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		die("cannot create '%s': %s", path, strerror(errno));
	return fd;
}

static void write_text(const char *path, const char *text)
{
	int fd = open_out(path);
	size_t len = strlen(text), done = 0;

	while (done < len) {
		ssize_t r = write(fd, text + done, len - done);

		if (r < 0)
			die("cannot write '%s': %s", path, strerror(errno));
		done += (size_t)r;
	}
	if (close(fd) < 0)
		die("cannot write '%s': %s", path, strerror(errno));
}

static void pwrite_u64(int fd, const char *path, uint64_t index, uint64_t v)
{
	uint64_t le = htole64(v);

	if (pwrite(fd, &le, sizeof(le), (off_t)(index * sizeof(le))) != (ssize_t)sizeof(le))
		die("cannot write '%s': %s", path, strerror(errno));
}

static void set_size(int fd, const char *path, uint64_t entries)
{
	if (ftruncate(fd, (off_t)(entries * sizeof(uint64_t))) < 0)
		die("cannot size '%s': %s", path, strerror(errno));
}

/* A growing text buffer for maps, smaps and status. */
struct buf {
	char *p;
	size_t len, cap;
};

__attribute__((format(printf, 2, 3))) static void bprintf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("formatting failed");
	if (b->len + (size_t)n + 1 > b->cap) {
		b->cap = (b->len + (size_t)n + 1) * 2;
		b->p = xreallocarray(b->p, b->cap, 1);
	}
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/*
 * fs/proc/task_mmu.c show_vma_header_prefix(): "%08lx-%08lx %s %08llx
 * %02x:%02x %lu " and, when there is a name, padding to column 73.
 */
static void maps_line(struct buf *b, const struct vma *v)
{
	size_t before = b->len;

	bprintf(b, "%08" PRIx64 "-%08" PRIx64 " %s %08" PRIx64 " %s %" PRIu64 " ", v->start, v->end,
		v->perms, (uint64_t)0, v->file ? "08:01" : "00:00",
		v->file ? (uint64_t)1048577 : 0);
	if (v->name) {
		size_t width = b->len - before;

		bprintf(b, "%*s%s", width < 73 ? (int)(73 - width) : 0, "", v->name);
	}
	bprintf(b, "\n");
}

struct vma_stats {
	uint64_t private_pages, shared_pages, swap_pages, thp_pages;
};

static struct vma_stats vma_stats(const struct proc *p, const struct vma *v)
{
	struct vma_stats st = {0};

	for (size_t i = 0; i < p->npages; i++) {
		const struct page *pg = &p->pages[i];

		if (pg->vaddr < v->start || pg->vaddr >= v->end)
			continue;
		switch (pg->kind) {
		case K_WRITTEN:
		case K_FOLIO:
			st.private_pages++;
			break;
		case K_THP:
			st.private_pages++;
			st.thp_pages++;
			break;
		case K_SHARED:
			st.shared_pages++;
			break;
		case K_SWAP:
			st.swap_pages++;
			break;
		case K_ZERO: /* the zero pages are not "normal" pages: not in Rss */
		case K_HUGE_ZERO:
		case K_NONE:
		case K_GUARD:
			break;
		}
	}
	return st;
}

static void smaps_vmflags(struct buf *b, const struct vma *v)
{
	/* In bit order of fs/proc/task_mmu.c show_smap_vma_flags(). */
	bprintf(b, "VmFlags:");
	if (v->perms[0] == 'r')
		bprintf(b, " rd");
	if (v->perms[1] == 'w')
		bprintf(b, " wr");
	if (v->perms[2] == 'x')
		bprintf(b, " ex");
	if (v->perms[3] == 's')
		bprintf(b, " sh");
	bprintf(b, " mr mw me");
	if (v->perms[1] == 'w' && v->perms[3] == 'p')
		bprintf(b, " ac");
	if (v->hugepage)
		bprintf(b, " hg");
	if (v->nohugepage)
		bprintf(b, " nh");
	bprintf(b, " \n");
}

static void write_proc(const char *procdir, const struct proc *p)
{
	char pidname[16];
	char *dir, *path;
	struct buf maps = {0}, smaps = {0}, status = {0};
	uint64_t rss_kb = 0, swap_kb = 0, pagemap_len = 0;
	int fd;

	snprintf(pidname, sizeof(pidname), "%d", p->pid);
	dir = path_join(procdir, pidname);
	mkdir_p(dir);

	for (size_t i = 0; i < p->nvmas; i++) {
		const struct vma *v = &p->vmas[i];
		const struct vma_stats st = vma_stats(p, v);
		const uint64_t rss = (st.private_pages + st.shared_pages) * 4;
		const bool anon = !v->file && v->perms[3] == 'p';
		const bool eligible = anon && !v->nohugepage && !p->thp_disabled;

		maps_line(&maps, v);
		maps_line(&smaps, v);
		bprintf(&smaps,
			"Size:           %8" PRIu64 " kB\n"
			"KernelPageSize: %8d kB\n"
			"MMUPageSize:    %8d kB\n"
			"Rss:            %8" PRIu64 " kB\n"
			"Pss:            %8" PRIu64 " kB\n"
			"Shared_Clean:   %8d kB\n"
			"Shared_Dirty:   %8" PRIu64 " kB\n"
			"Private_Clean:  %8d kB\n"
			"Private_Dirty:  %8" PRIu64 " kB\n"
			"Referenced:     %8" PRIu64 " kB\n"
			"Anonymous:      %8" PRIu64 " kB\n"
			"AnonHugePages:  %8" PRIu64 " kB\n"
			"Swap:           %8" PRIu64 " kB\n"
			"Locked:         %8d kB\n"
			"THPeligible:    %8d\n",
			(v->end - v->start) / 1024, 4, 4, rss,
			st.private_pages * 4 + st.shared_pages * 2, 0, st.shared_pages * 4, 0,
			st.private_pages * 4, rss, anon ? rss : 0, st.thp_pages * 4,
			st.swap_pages * 4, 0, eligible ? 1 : 0);
		smaps_vmflags(&smaps, v);
		rss_kb += rss;
		swap_kb += st.swap_pages * 4;
		if (v->end / PAGE_SIZE > pagemap_len)
			pagemap_len = v->end / PAGE_SIZE;
	}

	bprintf(&status,
		"Name:\t%s\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%d\nNgid:\t0\nPid:\t%d\n"
		"PPid:\t1\nTracerPid:\t0\nUid:\t1000\t1000\t1000\t1000\n"
		"Gid:\t1000\t1000\t1000\t1000\nVmRSS:\t%8" PRIu64 " kB\nRssAnon:\t%8" PRIu64
		" kB\nVmSwap:\t%8" PRIu64 " kB\nCoreDumping:\t0\nTHP_enabled:\t%d\nThreads:\t1\n",
		p->comm, p->pid, p->pid, rss_kb, rss_kb, swap_kb, p->thp_disabled ? 0 : 1);

	path = path_join(dir, "maps");
	write_text(path, maps.len ? maps.p : "");
	free(path);
	path = path_join(dir, "smaps");
	write_text(path, smaps.len ? smaps.p : "");
	free(path);
	path = path_join(dir, "status");
	write_text(path, status.p);
	free(path);
	path = path_join(dir, "comm");
	{
		char comm[MAX_COMM + 2];

		snprintf(comm, sizeof(comm), "%s\n", p->comm);
		write_text(path, comm);
	}
	free(path);

	path = path_join(dir, "pagemap");
	fd = open_out(path);
	set_size(fd, path, pagemap_len);
	for (size_t i = 0; i < p->npages; i++)
		if (p->pages[i].entry)
			pwrite_u64(fd, path, p->pages[i].vaddr / PAGE_SIZE, p->pages[i].entry);
	if (close(fd) < 0)
		die("cannot write '%s': %s", path, strerror(errno));
	free(path);

	free(maps.p);
	free(smaps.p);
	free(status.p);
	free(dir);
}

static void write_kpageflags(const char *procdir, const struct spec *s)
{
	char *path = path_join(procdir, "kpageflags");
	uint64_t end = HUGE_ZERO_PFN + PMD_NR;
	int fd = open_out(path);

	for (size_t i = 0; i < s->nkpf; i++)
		if (s->kpf[i].pfn + 1 > end)
			end = s->kpf[i].pfn + 1;
	/* Like the real file: as long as the PFN space, rounded to a section. */
	end = (end + 0x7fff) & ~0x7fffULL;
	set_size(fd, path, end);
	pwrite_u64(fd, path, ZERO_PFN, KPF(KPF_ZERO_PAGE) | KPF(KPF_RESERVED));
	for (uint64_t i = 0; i < PMD_NR; i++)
		pwrite_u64(fd, path, HUGE_ZERO_PFN + i,
			   KPF(KPF_ZERO_PAGE) | KPF(KPF_THP) |
				   KPF(i ? KPF_COMPOUND_TAIL : KPF_COMPOUND_HEAD));
	for (size_t i = 0; i < s->nkpf; i++)
		pwrite_u64(fd, path, s->kpf[i].pfn, s->kpf[i].flags);
	if (close(fd) < 0)
		die("cannot write '%s': %s", path, strerror(errno));
	free(path);
}

static void write_sys(const char *outdir, const struct spec *s)
{
	static const char *const files[] = {"max_ptes_none", "max_ptes_swap", "max_ptes_shared"};
	char *dir = path_join(outdir, "sys/kernel/mm/transparent_hugepage/khugepaged");

	mkdir_p(dir);
	for (size_t i = 0; i < 3 && !s->khugepaged_absent; i++) {
		char *path = path_join(dir, files[i]), val[16];

		snprintf(val, sizeof(val), "%u\n", s->max_ptes[i]);
		write_text(path, val);
		free(path);
	}
	free(dir);
}

/* Every page is described once; reported with the lines of both. */
static void check_duplicates(struct spec *s)
{
	for (size_t i = 0; i < s->nprocs; i++) {
		struct proc *p = &s->procs[i];

		qsort(p->pages, p->npages, sizeof(*p->pages), cmp_page);
		qsort(p->vmas, p->nvmas, sizeof(*p->vmas), cmp_vma);
		for (size_t j = 1; j < p->npages; j++)
			if (p->pages[j].vaddr == p->pages[j - 1].vaddr) {
				unsigned int a = p->pages[j - 1].line, b = p->pages[j].line;

				s->line = a > b ? a : b;
				spec_error(s, "page 0x%" PRIx64 " of process %d is already described on "
					      "line %u", p->pages[j].vaddr, p->pid, a < b ? a : b);
			}
	}
}

int main(int argc, char **argv)
{
	static struct spec s = {
		.max_ptes = {511, 64, 256},
		.next_small_pfn = SMALL_PFN_BASE,
		.next_folio_pfn = FOLIO_PFN_BASE,
		.next_swap_offset = SWAP_OFFSET_BASE,
	};
	char *procdir;

	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("Usage: mkfixture SPEC OUTDIR\n"
		       "Writes OUTDIR/proc and OUTDIR/sys for mthpd --proc-root/--sys-root\n"
		       "from a text SPEC; the language is described in contrib/mkfixture.c.\n");
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "Usage: mkfixture SPEC OUTDIR\n");
		return 2;
	}
	s.path = argv[1];
	parse_spec(&s);
	check_duplicates(&s);

	procdir = path_join(argv[2], "proc");
	mkdir_p(procdir);
	for (size_t i = 0; i < s.nprocs; i++)
		write_proc(procdir, &s.procs[i]);
	write_kpageflags(procdir, &s);
	write_sys(argv[2], &s);
	free(procdir);
	return 0;
}
