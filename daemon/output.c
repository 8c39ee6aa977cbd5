/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "knobs.h"
#include "output.h"
#include "text.h"
#include "util.h"

#define CELL_PAGES 8
#define NR_CELLS (MTHPD_PMD_NR / CELL_PAGES)

void mthpd_output_init(struct mthpd_output *o, FILE *f, bool json, bool collapse,
		       bool synthetic, const struct mthpd_knobs *knobs,
		       const struct mthpd_features *features)
{
	*o = (struct mthpd_output){
		.f = f,
		.synthetic = synthetic,
		.json = json,
		.collapse = collapse,
		.knobs = knobs,
		.features = features,
	};
}

static bool supported(const struct mthpd_output *o, unsigned int order)
{
	return mthpd_features_can_collapse(o->features, order);
}

void mthpd_output_header(struct mthpd_output *o)
{
	char feat[160], sizes[64];

	if (o->json)
		return;
	mthpd_orders_name(o->knobs->orders, sizes, sizeof(sizes));
	if (o->synthetic)
		fputs("kernel: not probed (synthetic --proc-root)\n", o->f);
	else
		fprintf(o->f, "kernel: %s\n",
			mthpd_features_describe(o->features, feat, sizeof(feat)));
	fprintf(o->f, "sizes %s, max_ptes_none %u, max_ptes_swap %u, max_ptes_shared %u\n\n",
		sizes, o->knobs->max_ptes_none, o->knobs->max_ptes_swap,
		o->knobs->max_ptes_shared);
}

void mthpd_output_line(FILE *f, const char *fmt, ...)
{
	_cleanup_free_ char *line = NULL;
	va_list ap;

	va_start(ap, fmt);
	line = mthpd_text_vformat(fmt, ap);
	va_end(ap);
	fprintf(f, "%s\n", line ? line : "(out of memory)");
}

/*
 * A comm is up to 15 bytes the process chose: escape it for JSON.  Valid
 * UTF-8 is kept (a C1 control or a bidi override as its \uXXXX); a byte
 * that is not UTF-8 can only be given as the code point of the same value,
 * \u00XX, as the control bytes are.
 */
void mthpd_output_json_string(FILE *f, const char *s)
{
	size_t len = strlen(s);

	fputc('"', f);
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)s[i];
		uint32_t cp;
		size_t k;

		if (c == '"' || c == '\\') {
			fprintf(f, "\\%c", c);
			i++;
		} else if (c >= 0x20 && c < 0x7f) {
			fputc(c, f);
			i++;
		} else if (c >= 0x80 && (k = mthpd_text_utf8(s + i, len - i, &cp)) > 0) {
			if (mthpd_text_hidden(cp))
				fprintf(f, "\\u%04x", (unsigned int)cp);
			else
				fwrite(s + i, 1, k, f);
			i += k;
		} else {
			fprintf(f, "\\u%04x", c);
			i++;
		}
	}
	fputc('"', f);
}

void mthpd_output_target_begin(struct mthpd_output *o, const struct mthpd_target *t)
{
	memset(o->planned_by_order, 0, sizeof(o->planned_by_order));
	memset(o->done_by_order, 0, sizeof(o->done_by_order));
	o->last[0] = '\0';
	o->repeats = 0;
	if (o->json) {
		/* one object for a process nothing can be done to, so that it is not silently absent */
		if (t->thp_disabled) {
			fprintf(o->f, "{\"pid\":%d,\"comm\":", (int)t->pid);
			mthpd_output_json_string(o->f, t->comm);
			fputs(",\"action\":\"skip\",\"reason\":\"thp_disabled\",\"hint\":", o->f);
			mthpd_output_json_string(o->f, mthpd_thp_disabled_hint(t->comm));
			if (o->collapse)
				fputs(",\"result\":\"not_attempted\"", o->f);
			fputs("}\n", o->f);
		}
		return;
	}
	if (t->thp_disabled) {
		mthpd_output_line(o->f,
				  "pid %d '%s': THP disabled for this process (PR_SET_THP_DISABLE), "
				  "skipped: the kernel refuses MADV_COLLAPSE for all of its memory",
				  (int)t->pid, t->comm);
		fprintf(o->f, "  hint: %s\n\n", mthpd_thp_disabled_hint(t->comm));
		return;
	}
	mthpd_output_line(o->f, "pid %d '%s'", (int)t->pid, t->comm);
	fprintf(o->f, "  %-16s %8s %5s %6s  %s\n", "RANGE", "OCCUPIED", "SWAP", "SHARED",
		o->collapse ? "PLAN -> RESULT" : "PLAN");
}

static void json_block(struct mthpd_output *o, const struct mthpd_target *t,
		       const struct mthpd_range_scan *s, const struct mthpd_block *b)
{
	const unsigned int from = b->offset, to = b->offset + (1U << b->order);

	fprintf(o->f, "{\"pid\":%d,\"comm\":", (int)t->pid);
	mthpd_output_json_string(o->f, t->comm);
	fprintf(o->f,
		",\"addr\":\"0x%" PRIx64 "\",\"order\":%u,"
		"\"size\":\"%s\",\"occupied\":%u,\"swap\":%u,\"shared\":%u,"
		"\"action\":\"%s\",\"reason\":\"%s\",\"supported\":%s",
		(uint64_t)(s->addr + b->offset * MTHPD_PAGE_SIZE), b->order,
		mthpd_order_name(b->order), b->occupied, mthpd_bitmap_weight(s->swap, from, to),
		mthpd_bitmap_weight(s->shared, from, to),
		b->action == MTHPD_ACTION_COLLAPSE ? "collapse" : "skip",
		mthpd_result_name(b->reason), supported(o, b->order) ? "true" : "false");
	if (o->collapse)
		fprintf(o->f, ",\"result\":\"%s\"",
			b->action == MTHPD_ACTION_COLLAPSE ? mthpd_result_name(b->result)
							   : "not_attempted");
	fputs("}\n", o->f);
}

void mthpd_output_picture(const struct mthpd_range_scan *s, const struct mthpd_range_plan *p,
			  char used[65], char planned[65])
{
	for (unsigned int c = 0; c < NR_CELLS; c++) {
		unsigned int from = c * CELL_PAGES, to = from + CELL_PAGES;
		unsigned int occ = mthpd_bitmap_weight(s->occupied, from, to);

		if (mthpd_bitmap_weight(s->guard, from, to))
			used[c] = 'g';
		else if (mthpd_bitmap_weight(s->swap, from, to))
			used[c] = 's';
		else if (mthpd_bitmap_weight(s->shared, from, to))
			used[c] = 'S';
		else
			used[c] = occ == CELL_PAGES ? '#' : occ ? '+' : '.';
		planned[c] = '-';
	}
	for (unsigned int i = 0; i < p->nr_blocks; i++) {
		const struct mthpd_block *b = &p->blocks[i];
		unsigned int from = b->offset / CELL_PAGES;
		unsigned int to = (b->offset + (1U << b->order) + CELL_PAGES - 1) / CELL_PAGES;

		if (b->action != MTHPD_ACTION_COLLAPSE)
			continue;
		for (unsigned int c = from; c < to && c < NR_CELLS; c++)
			if (planned[c] == '-' || planned[c] < (char)('0' + b->order))
				planned[c] = (char)('0' + b->order);
	}
	used[NR_CELLS] = planned[NR_CELLS] = '\0';
}

/* "2M collapse", "16x 64K collapse (not supported by this kernel)", "skip: ..." */
static void plan_summary(struct mthpd_output *o, const struct mthpd_range_plan *p, char *buf,
			 size_t size)
{
	unsigned int count[MTHPD_PMD_ORDER + 1] = {0}, ok[MTHPD_PMD_ORDER + 1] = {0};
	size_t n = 0;
	int w;

	buf[0] = '\0';
	for (unsigned int i = 0; i < p->nr_blocks; i++) {
		const struct mthpd_block *b = &p->blocks[i];

		if (b->action != MTHPD_ACTION_COLLAPSE)
			continue;
		count[b->order]++;
		o->planned_by_order[b->order]++;
		if (b->result == MTHPD_SCAN_SUCCEED) {
			ok[b->order]++;
			o->done_by_order[b->order]++;
		}
	}
	for (unsigned int order = MTHPD_PMD_ORDER; order >= MTHPD_MIN_ORDER; order--) {
		if (!count[order])
			continue;
		if (count[order] == 1)
			w = snprintf(buf + n, size - n, "%s%s collapse", n ? ", " : "",
				     mthpd_order_name(order));
		else
			w = snprintf(buf + n, size - n, "%s%ux %s collapse", n ? ", " : "",
				     count[order], mthpd_order_name(order));
		if (w < 0 || (size_t)w >= size - n)
			return;
		n += (size_t)w;
		if (!supported(o, order)) {
			w = snprintf(buf + n, size - n, " (%s)",
				     o->features->subpmd == MTHPD_SUBPMD_PATCHED
					     ? "size disabled in sysfs"
					     : "not supported by this kernel");
			if (w < 0 || (size_t)w >= size - n)
				return;
			n += (size_t)w;
		} else if (o->collapse) {
			w = snprintf(buf + n, size - n, " -> %u succeeded", ok[order]);
			if (w < 0 || (size_t)w >= size - n)
				return;
			n += (size_t)w;
		}
	}
	if (n == 0 && p->nr_blocks > 0)
		(void)snprintf(buf, size, "skip: %s at %s", mthpd_result_name(p->blocks[0].reason),
			       mthpd_order_name(p->blocks[0].order));
	if (o->collapse && n > 0) {
		/* Name the failures, e.g. "; failed: alloc_huge_page_failed". */
		for (unsigned int i = 0; i < p->nr_blocks; i++) {
			const struct mthpd_block *b = &p->blocks[i];

			if (b->action != MTHPD_ACTION_COLLAPSE || b->result == MTHPD_SCAN_SUCCEED ||
			    b->result == MTHPD_RESULT_UNSUPPORTED)
				continue;
			w = snprintf(buf + n, size - n, "; %s at 0x%x/%s", mthpd_result_name(b->result),
				     b->offset, mthpd_order_name(b->order));
			if (w < 0 || (size_t)w >= size - n)
				return;
			n += (size_t)w;
		}
	}
}

static void flush_repeats(struct mthpd_output *o)
{
	if (o->repeats)
		fprintf(o->f, "  ... and %lu more range%s like the one above\n", o->repeats,
			o->repeats == 1 ? "" : "s");
	o->repeats = 0;
}

int mthpd_output_range(void *userdata, const struct mthpd_target *t,
		       const struct mthpd_range_scan *s, const struct mthpd_range_plan *p)
{
	struct mthpd_output *o = userdata;
	char used[NR_CELLS + 1], planned[NR_CELLS + 1], summary[256], key[sizeof(o->last)];

	if (o->json) {
		for (unsigned int i = 0; i < p->nr_blocks; i++)
			json_block(o, t, s, &p->blocks[i]);
		/* Line-buffered for scripts that read as it goes. */
		return fflush(o->f) == 0 ? 0 : -EIO;
	}

	plan_summary(o, p, summary, sizeof(summary));
	mthpd_output_picture(s, p, used, planned);
	(void)snprintf(key, sizeof(key), "%u %u %u %s|%s|%s",
		       mthpd_bitmap_weight(s->occupied, 0, MTHPD_PMD_NR),
		       mthpd_bitmap_weight(s->swap, 0, MTHPD_PMD_NR),
		       mthpd_bitmap_weight(s->shared, 0, MTHPD_PMD_NR), summary, used, planned);
	if (strcmp(key, o->last) == 0) {
		o->repeats++;
		return 0;
	}
	flush_repeats(o);
	memcpy(o->last, key, sizeof(o->last));
	fprintf(o->f, "  0x%-14" PRIx64 " %4u/512 %5u %6u  %s\n", s->addr,
		mthpd_bitmap_weight(s->occupied, 0, MTHPD_PMD_NR),
		mthpd_bitmap_weight(s->swap, 0, MTHPD_PMD_NR),
		mthpd_bitmap_weight(s->shared, 0, MTHPD_PMD_NR), summary);
	fprintf(o->f, "      used |%s|\n      plan |%s|\n", used, planned);
	return 0;
}

void mthpd_output_target_end(struct mthpd_output *o, const struct mthpd_target *t,
			     const struct mthpd_pass_stats *st)
{
	bool any = false;

	if (o->json || t->thp_disabled)
		return;
	flush_repeats(o);
	fprintf(o->f, "  %lu range%s populated in %lu VMA%s; planned:", st->ranges,
		st->ranges == 1 ? "" : "s", st->vmas, st->vmas == 1 ? "" : "s");
	for (unsigned int order = MTHPD_PMD_ORDER; order >= MTHPD_MIN_ORDER; order--)
		if (o->planned_by_order[order]) {
			fprintf(o->f, "%s %lux %s", any ? "," : "", o->planned_by_order[order],
				mthpd_order_name(order));
			any = true;
		}
	fputs(any ? "\n" : " nothing\n", o->f);
	if (st->vmas_refused)
		fprintf(o->f, "  %lu VMA%s with memory refused by the kernel (MADV_NOHUGEPAGE), left alone\n",
			st->vmas_refused, st->vmas_refused == 1 ? "" : "s");
	if (st->partial_folios) {
		char b[32];

		fprintf(o->f,
			"  %lu 2M folio%s mapped in part: %s that nothing maps and no RssAnon "
			"counts (the daemon's split_partial= gives it back)\n",
			st->partial_folios, st->partial_folios == 1 ? "" : "s",
			mthpd_text_bytes(st->partial_pages * (uint64_t)MTHPD_PAGE_SIZE, b, sizeof(b)));
	}
	if (o->collapse) {
		any = false;
		fputs("  collapsed:", o->f);
		for (unsigned int order = MTHPD_PMD_ORDER; order >= MTHPD_MIN_ORDER; order--)
			if (o->done_by_order[order]) {
				fprintf(o->f, "%s %lux %s", any ? "," : "", o->done_by_order[order],
					mthpd_order_name(order));
				any = true;
			}
		fprintf(o->f, "%s (%lu process_madvise calls, %lu no-op)\n", any ? "" : " nothing",
			st->madvise_calls, st->noops);
	}
	fputc('\n', o->f);
}

void mthpd_output_footer(struct mthpd_output *o)
{
	if (o->json)
		return;
	fputs("legend: used: '#' 8 of 8 pages occupied, '+' some, '.' none, 'S' shared,\n"
	      "        's' swapped, 'g' guard region; plan: the order of the planned folio\n"
	      "        (9=2M 8=1M 7=512K 6=256K 5=128K 4=64K 3=32K 2=16K), '-' none\n",
	      o->f);
}
