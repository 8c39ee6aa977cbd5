/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One configuration file read and parsed: the text read whole (a regular
 * file of at most 64 KiB, no NUL), the lines inih would read otherwise
 * than meant refused first, then inih with a callback that looks each key
 * up in lib/confkeys.c.  The first error is kept, as "FILE:LINE: ...".
 */
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conffile.h"
#include "text.h"
#include "config.h"
#include "confkeys.h"
#include "util.h"

_printf_(2, 3) static void fail(struct mthpd_conffile *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->r < 0)
		return; /* keep the first error */
	p->r = -EINVAL;
	n = snprintf(p->err, p->err_size, "%s:%u: ", p->file, p->line);
	if (n < 0 || (size_t)n >= p->err_size)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(p->err + n, p->err_size - (size_t)n, fmt, ap);
	va_end(ap);
}

/* inih's reader: the next line of the text, counted, so the handler knows where it is. */
static char *reader(char *str, int num, void *stream)
{
	struct mthpd_conffile *p = stream;
	const char *start = p->text + p->pos, *nl;
	size_t len;

	if (!*start)
		return NULL;
	nl = strchr(start, '\n');
	len = nl ? (size_t)(nl - start) + 1 : strlen(start);
	p->pos += len;
	p->line++;
	if (len > (size_t)num - 1) {
		fail(p, "line longer than %d characters", num - 2);
		len = (size_t)num - 1; /* the rest of it is skipped, not read as a new line */
	}
	memcpy(str, start, len);
	str[len] = '\0';
	return str;
}

/*
 * What inih would read differently from what a person means, line by line,
 * before inih sees the text: text after a section header ("[Policy]
 * enabled=no" would lose the key), a header without its ']', empty or
 * unknown sections, "key: value" (inih takes ':' too; mthpd.conf(5) says
 * key=value), indented lines (inih joins them to the key before), and keys
 * before any section.  Sets the first error in @p.
 */
static void lint(struct mthpd_conffile *p)
{
	const char *line = p->text;
	bool in_section = false;

	for (unsigned int no = 1; *line; no++) {
		const char *end = strchr(line, '\n'), *s = line, *close, *eq, *colon;

		if (!end)
			end = line + strlen(line);
		p->line = no;
		while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
			s++;
		if (s == end || *s == ';' || *s == '#') {
			line = *end ? end + 1 : end;
			continue;
		}
		if (s > line) {
			fail(p, "the line starts with a blank (inih would join it to the line before); "
				"remove the leading blanks");
			return;
		}
		if (*s == '[') {
			const char *t;

			close = memchr(s, ']', (size_t)(end - s));
			if (!close) {
				fail(p, "no ']' closes the section name '%.*s'", (int)(end - s), s);
				return;
			}
			for (t = close + 1; t < end && (*t == ' ' || *t == '\t' || *t == '\r'); t++)
				;
			if (t < end && *t != ';' && *t != '#') {
				fail(p, "text after [%.*s]: '%.*s' (one key per line, after the section)",
				     (int)(close - s - 1), s + 1, (int)(end - t), t);
				return;
			}
			if (!mthpd_confkeys_section_known(p->target, s + 1, (size_t)(close - s - 1))) {
				fail(p, "unknown section [%.*s]%s", (int)(close - s - 1), s + 1,
				     p->target == MTHPD_CONF_DAEMON
					     ? " (mthpd.conf has [Daemon])"
					     : " (a policy has [Match] and [Policy])");
				return;
			}
			in_section = true;
		} else {
			eq = memchr(s, '=', (size_t)(end - s));
			colon = memchr(s, ':', (size_t)(end - s));
			if (colon && (!eq || colon < eq)) {
				fail(p, "'%.*s': write key=value, not key: value", (int)(colon - s), s);
				return;
			}
			if (!eq) {
				fail(p, "not a 'key=value' or '[Section]' line");
				return;
			}
			if (!in_section) {
				fail(p, "'%.*s=' before any section", (int)(eq - s), s);
				return;
			}
		}
		line = *end ? end + 1 : end;
	}
}

/*
 * Reads @path whole into *ret (NUL-terminated).  Only a regular file: a
 * FIFO would block (opened O_NONBLOCK, then checked), a device like
 * /dev/zero would never end.  Returns 0, -ENOENT, or -EINVAL with a
 * message in @err, or -errno.
 */
static int read_text(const char *path, char **ret, char *err, size_t err_size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t len = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode)) {
		(void)snprintf(err, err_size, "%s: not a regular file (%s)", path,
			       mthpd_text_file_type(st.st_mode));
		return -EINVAL;
	}
	buf = malloc(MTHPD_CONF_MAX_BYTES + 2);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf + len, MTHPD_CONF_MAX_BYTES + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > MTHPD_CONF_MAX_BYTES) {
			(void)snprintf(err, err_size, "%s: larger than %d KiB, not a configuration file",
				       path, MTHPD_CONF_MAX_BYTES / 1024);
			return -EINVAL;
		}
	}
	buf[len] = '\0';
	if (strlen(buf) != len) {
		unsigned int line = 1;

		for (const char *c = buf; *c; c++)
			line += *c == '\n';
		(void)snprintf(err, err_size, "%s:%u: a NUL byte: not a text file", path, line);
		return -EINVAL;
	}
	*ret = TAKE_PTR(buf);
	return 0;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct mthpd_conffile *p = user;
	char why[256];

	if (!name) /* a section header alone (inih with INI_CALL_HANDLER_ON_NEW_SECTION) */
		return 1;
	for (size_t i = 0; i < mthpd_confkeys_count; i++) {
		const struct mthpd_confkey *k = &mthpd_confkeys[i];

		if (k->target != p->target || strcmp(k->section, section) != 0 ||
		    strcmp(k->name, name) != 0)
			continue;
		if (p->seen & (1ULL << i)) {
			fail(p, "%s= given twice in [%s]", name, section);
			return 1;
		}
		p->seen |= 1ULL << i;
		if (k->parse(value, (char *)p->base + k->offset, why, sizeof(why)) < 0)
			fail(p, "%s=: %s", name, why);
		if (k->target == MTHPD_CONF_DAEMON &&
		    k->offset == offsetof(struct mthpd_daemon_conf, state_file))
			((struct mthpd_daemon_conf *)p->base)->state_file_line = p->line;
		if (k->target == MTHPD_CONF_DAEMON &&
		    k->offset == offsetof(struct mthpd_daemon_conf, metrics_file))
			((struct mthpd_daemon_conf *)p->base)->metrics_file_line = p->line;
		if (strcmp(section, "Match") == 0)
			p->has_match = true;
		return 1;
	}
	/* lint() has refused unknown sections already: this is a known one */
	fail(p, "unknown key '%s' in [%s]", name, section);
	return 1; /* go on: the first error is kept, and inih's own errors still count */
}

/* Parses @text (NUL-terminated, no NUL inside) of the file shown as @shown. */
int mthpd_conffile_parse_text(const char *text, const char *shown,
			      enum mthpd_conf_target target, void *base,
			      struct mthpd_conffile *ret_state, char *err, size_t err_size)
{
	struct mthpd_conffile p = {
		.file = shown,
		.target = target,
		.base = base,
		.err = err,
		.err_size = err_size,
		.text = text,
	};
	int r;

	/* a UTF-8 byte order mark, as some editors save one: skipped, as systemd does */
	if (strncmp(p.text, "\xef\xbb\xbf", 3) == 0)
		p.text += 3;
	lint(&p);
	if (p.r < 0) {
		*ret_state = p;
		return p.r;
	}
	p.line = 0;
	r = ini_parse_stream(reader, &p, handler, &p);
	if (p.r == 0 && r > 0) {
		/* inih's own complaint: no '=' or ']' on that line */
		p.line = (unsigned int)r;
		fail(&p, "not a 'key=value' or '[Section]' line");
	}
	*ret_state = p;
	return p.r;
}

int mthpd_conffile_parse(const char *path, const char *shown,
			 enum mthpd_conf_target target, void *base,
			 struct mthpd_conffile *ret_state, char *err, size_t err_size)
{
	_cleanup_free_ char *text = NULL;
	int r;

	r = read_text(path, &text, err, err_size);
	if (r < 0)
		return r;
	return mthpd_conffile_parse_text(text, shown, target, base, ret_state, err, err_size);
}
