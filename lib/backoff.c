/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What mthpd remembers of one process's 2 MiB ranges from pass to pass:
 * the ranges whose collapse keeps failing wait longer each time (the
 * backoff), and the ranges it collapsed are not filled again once the
 * allocator gave pages back (the refill set).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backoff.h"

void mthpd_backoff_free(struct mthpd_backoff *m)
{
	free(m->collapsed);
	m->collapsed = NULL;
	m->nr_collapsed = m->collapsed_size = 0;
}

/* The index of the first entry of m->collapsed >= @addr. */
static size_t refill_index(const struct mthpd_backoff *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nr_collapsed;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->collapsed[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool mthpd_refill_known(const struct mthpd_backoff *m, uint64_t addr)
{
	size_t i = refill_index(m, addr);

	return i < m->nr_collapsed && m->collapsed[i] == addr;
}

int mthpd_refill_note(struct mthpd_backoff *m, uint64_t addr)
{
	size_t i = refill_index(m, addr);

	if (i < m->nr_collapsed && m->collapsed[i] == addr)
		return 0;
	if (m->nr_collapsed >= MTHPD_REFILL_MAX)
		return -E2BIG;
	if (m->nr_collapsed == m->collapsed_size) {
		size_t size = m->collapsed_size ? 2 * m->collapsed_size : 64;
		uint64_t *c = reallocarray(m->collapsed, size, sizeof(*c));

		if (!c)
			return -ENOMEM;
		m->collapsed = c;
		m->collapsed_size = size;
	}
	memmove(m->collapsed + i + 1, m->collapsed + i, (m->nr_collapsed - i) * sizeof(*m->collapsed));
	m->collapsed[i] = addr;
	m->nr_collapsed++;
	return 0;
}

uint64_t mthpd_range_sig(const uint64_t entries[MTHPD_PMD_NR])
{
	uint64_t h = 0xcbf29ce484222325ULL;

	/* FNV-1a over the entries: present, swap and exclusive bits and PFNs */
	for (unsigned int i = 0; i < MTHPD_PMD_NR; i++)
		h = (h ^ entries[i]) * 0x100000001b3ULL;
	return h;
}

/* The index of the range at @addr in the table, or -1. */
static int backoff_find(const struct mthpd_backoff *m, uint64_t addr)
{
	for (unsigned int i = 0; i < m->nr_ranges; i++)
		if (m->ranges[i].addr == addr)
			return (int)i;
	return -1;
}

bool mthpd_backoff_waiting(const struct mthpd_backoff *m, uint64_t addr, uint64_t sig, uint64_t now)
{
	int i = backoff_find(m, addr);

	return i >= 0 && m->ranges[i].sig == sig && now < m->ranges[i].until;
}

void mthpd_backoff_note(struct mthpd_backoff *m, uint64_t addr, uint64_t sig, bool lasting,
			uint64_t now)
{
	int i = backoff_find(m, addr);
	struct mthpd_backoff_range *b = i >= 0 ? &m->ranges[i] : NULL;
	uint64_t wait;

	if (!lasting) {
		if (b)
			*b = m->ranges[--m->nr_ranges];
		return;
	}
	if (!b && m->nr_ranges < MTHPD_BACKOFF_MAX) {
		b = &m->ranges[m->nr_ranges++];
		*b = (struct mthpd_backoff_range){.addr = addr};
	} else if (!b) {
		/* full: the one that would be retried first makes room */
		b = &m->ranges[0];
		for (unsigned int k = 1; k < m->nr_ranges; k++)
			if (m->ranges[k].until < b->until)
				b = &m->ranges[k];
		*b = (struct mthpd_backoff_range){.addr = addr};
	}
	if (b->sig != sig)
		b->fails = 0; /* other pages than last time: start again */
	b->sig = sig;
	b->fails++;
	wait = b->fails >= 8 ? MTHPD_BACKOFF_CAP_USEC : MTHPD_BACKOFF_BASE_USEC << (b->fails - 1);
	b->until = now + (wait < MTHPD_BACKOFF_CAP_USEC ? wait : MTHPD_BACKOFF_CAP_USEC);
}
