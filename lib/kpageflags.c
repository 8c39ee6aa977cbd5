/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <unistd.h>

#include "kpageflags.h"

int mthpd_kpageflags_read(int fd, uint64_t pfn, unsigned int nr, uint64_t *ret)
{
	size_t want = (size_t)nr * sizeof(uint64_t), got = 0;
	off_t off = (off_t)(pfn * sizeof(uint64_t));

	while (got < want) {
		ssize_t r = pread(fd, (char *)ret + got, want - got, off + (off_t)got);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -ERANGE; /* PFN beyond the end of memory */
		got += (size_t)r;
	}
	return 0;
}

static unsigned int floor_log2(unsigned int n)
{
	unsigned int o = 0;

	while (n >>= 1)
		o++;
	return o;
}

void mthpd_kpageflags_folio_orders(const uint64_t *pfn, const uint64_t *flags,
				   const uint8_t *valid, unsigned int nr, uint8_t *ret_order)
{
	const uint64_t head = KPF_BIT(KPF_COMPOUND_HEAD), tail = KPF_BIT(KPF_COMPOUND_TAIL);
	const uint64_t thp = KPF_BIT(KPF_THP), zero = KPF_BIT(KPF_ZERO_PAGE);
	unsigned int i = 0;

	while (i < nr) {
		unsigned int j, run, order;

		if (!valid[i] || (flags[i] & (head | thp | zero)) != (head | thp)) {
			ret_order[i++] = 0;
			continue;
		}
		for (j = i + 1; j < nr && valid[j] && pfn[j] == pfn[i] + (j - i) &&
				(flags[j] & (tail | thp | zero)) == (tail | thp);
		     j++)
			;
		run = j - i;
		order = floor_log2(run);
		/* A head not aligned to its run is partly mapped: trust the aligned part. */
		while (order > 0 && (pfn[i] & ((1ULL << order) - 1)))
			order--;
		for (; i < j; i++)
			ret_order[i] = (uint8_t)order;
	}
}
