/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>

#include "knobs.h"
#include "log.h"
#include "result.h"
#include "text.h"
#include "util.h"

static int max_level = LOG_LVL_INFO;
static bool journal;

void log_setup(int level)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	max_level = level;
	/* systemd sets JOURNAL_STREAM=dev:ino when stderr is a journal stream. */
	journal = e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && fstat(2, &st) == 0 &&
		  (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

bool log_to_journal(void)
{
	return journal;
}

/*
 * Every line is made whole (a path may be 4095 bytes) and what another user
 * chose in it (a comm, a cgroup, a file name) escaped (lib/text.h), for a
 * terminal and for journalctl, which shows a MESSAGE= holding a control byte
 * as "[blob data]".  The MTHPD_* fields keep the bytes as they are, exact for
 * matching (journalctl MTHPD_COMM=...); journalctl shows such a field as
 * blob data unless --all is given.
 */
#define OOM_LINE "(out of memory for a log line)"

_printf_(2, 0) static void vlog(int level, const char *fmt, va_list ap)
{
	_cleanup_free_ char *line = NULL;

	if (level > max_level)
		return;
	line = mthpd_text_vformat(fmt, ap);
	fprintf(stderr, "<%d>%s\n", level, line ? line : OOM_LINE);
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

int log_errno(int level, int r, const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	errno = r < 0 ? -r : r;
	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
	errno = saved;
	return r;
}

void log_decision(const struct log_decision *d)
{
	_cleanup_free_ char *msg = NULL;
	const char *size = mthpd_order_name(d->order);
	int level = LOG_LVL_DEBUG;

	if (!journal) {
		log_msg(level, "pid %d '%s' %s: %s at 0x%" PRIx64 ": %s (policy %s)", (int)d->pid,
			d->comm, d->unit[0] ? d->unit : d->cgroup, size, d->addr, d->result, d->policy);
		return;
	}
	if (level > max_level)
		return;
	msg = mthpd_text_format("pid %d '%s' %s: %s at 0x%" PRIx64 ": %s", (int)d->pid, d->comm,
		     d->unit[0] ? d->unit : d->cgroup, size, d->addr, d->result);
	(void)sd_journal_send("MESSAGE=%s", msg ? msg : OOM_LINE, "PRIORITY=%d", level,
			      "MTHPD_PID=%d", (int)d->pid, "MTHPD_COMM=%s", d->comm, "MTHPD_CGROUP=%s",
			      d->cgroup, "MTHPD_UNIT=%s", d->unit,
			      "MTHPD_POLICY=%s", d->policy, "MTHPD_ADDR=0x%" PRIx64, d->addr,
			      "MTHPD_ORDER=%u", d->order, "MTHPD_SIZE=%s", size, "MTHPD_RESULT=%s",
			      d->result, NULL);
}

void log_visit(const struct log_visit *v)
{
	_cleanup_free_ char *msg = NULL;
	int level = strcmp(v->result, "succeeded") == 0 ? LOG_LVL_INFO : LOG_LVL_NOTICE;
	char sizes[160] = "", human[200] = "", over[64] = "";
	size_t n = 0, h = 0;
	unsigned long blocks = 0;
	uint64_t bytes = 0;
	const char *text;
	int r;

	if (level > max_level)
		return;
	/* largest first, as sizes= is written: "2M:12,64K:3" and "2M x12, 64K x3" */
	for (unsigned int o = MTHPD_PMD_ORDER; o >= MTHPD_MIN_ORDER; o--) {
		if (!v->counts[o])
			continue;
		blocks += v->counts[o];
		bytes += (uint64_t)v->counts[o] * (4096ULL << o);
		if (n < sizeof(sizes))
			n += (size_t)snprintf(sizes + n, sizeof(sizes) - n, "%s%s:%u", n ? "," : "",
					      mthpd_order_name(o), v->counts[o]);
		if (h < sizeof(human))
			h += (size_t)snprintf(human + h, sizeof(human) - h, "%s%s x%u", h ? ", " : "",
					      mthpd_order_name(o), v->counts[o]);
	}
	if (!blocks)
		return;
	/* "held: memory pressure" where MTHPD_RESULT=held_pressure */
	r = mthpd_result_from_name(v->result);
	text = r >= 0 ? mthpd_result_text((enum mthpd_scan_result)r) : v->result;
	if (v->visits > 1)
		(void)snprintf(over, sizeof(over), " in %u visits over %.1f s", v->visits, v->seconds);
	if (!journal) {
		log_msg(level, "pid %d '%s' %s: %s: %s (policy %s)%s", (int)v->pid, v->comm,
			v->unit[0] ? v->unit : v->cgroup, text, human, v->policy, over);
		return;
	}
	msg = mthpd_text_format("pid %d '%s' %s: %s: %s%s", (int)v->pid, v->comm,
		     v->unit[0] ? v->unit : v->cgroup, text, human, over);
	(void)sd_journal_send("MESSAGE=%s", msg ? msg : OOM_LINE, "PRIORITY=%d", level,
			      "MTHPD_PID=%d", (int)v->pid, "MTHPD_COMM=%s", v->comm, "MTHPD_CGROUP=%s",
			      v->cgroup, "MTHPD_UNIT=%s", v->unit, "MTHPD_POLICY=%s", v->policy,
			      "MTHPD_RESULT=%s", v->result, "MTHPD_BLOCKS=%lu", blocks,
			      "MTHPD_BYTES=%" PRIu64, bytes, "MTHPD_SIZES=%s", sizes,
			      "MTHPD_VISITS=%u", v->visits ? v->visits : 1, NULL);
}

void log_split(const struct log_split *s)
{
	_cleanup_free_ char *msg = NULL;
	const char *who = s->unit[0] ? s->unit : s->cgroup, *plural = s->folios == 1 ? "" : "s";
	bool done = strcmp(s->result, "split_partial") == 0;
	int r = mthpd_result_from_name(s->result);
	bool failed = !done && r != MTHPD_RESULT_DRY_RUN && r != MTHPD_RESULT_HELD_PRESSURE &&
		      r != MTHPD_RESULT_HELD_ALLOC_FAILED && r != MTHPD_RESULT_OVER_BUDGET;
	int level = failed ? LOG_LVL_NOTICE : LOG_LVL_INFO;
	char text[200];

	if (level > max_level || !s->folios)
		return;
	if (done)
		(void)snprintf(text, sizeof(text),
			       "split %lu 2M folio%s mapped in part: %" PRIu64 " KiB given back",
			       s->folios, plural, s->bytes / 1024);
	else if (failed)
		(void)snprintf(text, sizeof(text),
			       "%lu 2M folio%s mapped in part not split (%s): %" PRIu64
			       " KiB that nothing maps still held",
			       s->folios, plural, s->result, s->bytes / 1024);
	else
		(void)snprintf(text, sizeof(text),
			       "%s: %lu 2M folio%s mapped in part to split, %" PRIu64
			       " KiB that nothing maps",
			       mthpd_result_text((enum mthpd_scan_result)r), s->folios, plural,
			       s->bytes / 1024);
	if (!journal) {
		log_msg(level, "pid %d '%s' %s: %s (policy %s)", (int)s->pid, s->comm, who, text,
			s->policy);
		return;
	}
	msg = mthpd_text_format("pid %d '%s' %s: %s", (int)s->pid, s->comm, who, text);
	(void)sd_journal_send("MESSAGE=%s", msg ? msg : OOM_LINE, "PRIORITY=%d", level,
			      "MTHPD_PID=%d", (int)s->pid, "MTHPD_COMM=%s", s->comm, "MTHPD_CGROUP=%s",
			      s->cgroup, "MTHPD_UNIT=%s", s->unit,
			      "MTHPD_POLICY=%s", s->policy, "MTHPD_ACTION=split",
			      "MTHPD_RESULT=%s", s->result, "MTHPD_FOLIOS=%lu", s->folios,
			      "MTHPD_BYTES=%" PRIu64, s->bytes, NULL);
}

void log_process(const struct log_process *p)
{
	_cleanup_free_ char *msg = NULL;
	const char *who = p->unit[0] ? p->unit : p->cgroup;

	if (LOG_LVL_NOTICE > max_level)
		return;
	if (!journal) {
		log_msg(LOG_LVL_NOTICE, "pid %d '%s' %s: %s (policy %s)", (int)p->pid, p->comm, who,
			p->text, p->policy);
		return;
	}
	msg = mthpd_text_format("pid %d '%s' %s: %s", (int)p->pid, p->comm, who, p->text);
	(void)sd_journal_send("MESSAGE=%s", msg ? msg : OOM_LINE, "PRIORITY=%d", LOG_LVL_NOTICE,
			      "MTHPD_PID=%d", (int)p->pid,
			      "MTHPD_COMM=%s", p->comm, "MTHPD_CGROUP=%s", p->cgroup, "MTHPD_UNIT=%s",
			      p->unit, "MTHPD_POLICY=%s", p->policy, "MTHPD_RESULT=%s", p->result,
			      NULL);
}
