/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <unistd.h>

#include "kif.h"
#include "kpageflags.h"

int mthpd_kpageflags_read(int fd, uint64_t pfn, unsigned int nr, uint64_t *ret)
{
	int r = mthpd_pread_full(fd, ret, (size_t)nr * sizeof(uint64_t), pfn * sizeof(uint64_t));

	return r == -ENODATA ? -ERANGE : r; /* PFN beyond the end of memory */
}

static unsigned int ceil_log2(unsigned int n)
{
	unsigned int o = 0;

	while ((1U << o) < n)
		o++;
	return o;
}

/* Pages i + 1.. that continue the folio of page i: consecutive PFNs, tails. */
static unsigned int tail_run(const uint64_t *pfn, const uint64_t *flags, const uint8_t *valid,
			     unsigned int nr, unsigned int i)
{
	const uint64_t tail = KPF_BIT(KPF_COMPOUND_TAIL) | KPF_BIT(KPF_THP);
	const uint64_t mask = tail | KPF_BIT(KPF_ZERO_PAGE);
	unsigned int j = i + 1;

	while (j < nr && valid[j] && pfn[j] == pfn[i] + (j - i) && (flags[j] & mask) == tail)
		j++;
	return j - i - 1;
}

void mthpd_kpageflags_folio_orders(const uint64_t *pfn, const uint64_t *flags,
				   const uint8_t *valid, unsigned int nr, uint8_t *ret_order)
{
	const uint64_t head = KPF_BIT(KPF_COMPOUND_HEAD) | KPF_BIT(KPF_THP);
	const uint64_t tail = KPF_BIT(KPF_COMPOUND_TAIL) | KPF_BIT(KPF_THP);
	const uint64_t mask = head | tail | KPF_BIT(KPF_ZERO_PAGE);
	unsigned int i = 0;

	while (i < nr) {
		uint64_t f = flags[i] & mask;
		unsigned int run, order;

		if (!valid[i] || (f != head && f != tail)) {
			ret_order[i++] = 0;
			continue;
		}
		/*
		 * A folio holds at least the pages seen of it, and its size is
		 * a power of two: a head and n tails prove order
		 * >= ceil(log2(n + 1)); so do n + 1 tails whose head lies
		 * before the range (the "+ 1" is that head).
		 */
		run = 1 + tail_run(pfn, flags, valid, nr, i);
		order = ceil_log2(f == head ? run : run + 1);
		if (f == head && (pfn[i] & ((1ULL << order) - 1))) {
			/* Not aligned to what it claims: trust only the aligned part. */
			while (order > 0 && (pfn[i] & ((1ULL << order) - 1)))
				order--;
		}
		for (unsigned int end = i + run; i < end; i++)
			ret_order[i] = (uint8_t)order;
	}
}
