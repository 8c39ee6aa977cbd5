/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "text.h"

/*
 * The length of the valid UTF-8 sequence at @s (of at most @len bytes) and
 * its code point, or 0 when it is not one: overlong forms, surrogates and
 * code points above U+10FFFF are not (RFC 3629, section 4).
 */
size_t mthpd_text_utf8(const char *str, size_t len, uint32_t *ret_cp)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n;
	uint32_t cp;

	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1fU;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0fU;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07U;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		return 0;
	}
	if (len < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3fU);
	}
	*ret_cp = cp;
	return n;
}

/*
 * Characters that move the cursor, recolour or rewrite a terminal, or
 * reorder what is shown around them: C1 controls (a terminal may take
 * U+009B as CSI), and the bidirectional embeddings, overrides and isolates.
 */
bool mthpd_text_hidden(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

size_t mthpd_text_escape_mem(const char *s, size_t len, char *buf, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, n = 0;

	if (!size)
		return 0;
	while (i < len) {
		size_t k = 1;
		uint32_t cp = 0;
		bool raw;

		if (u[i] >= 0x20 && u[i] < 0x7f) {
			raw = true;
		} else if (u[i] >= 0x80 && (k = mthpd_text_utf8(s + i, len - i, &cp)) > 0) {
			raw = !mthpd_text_hidden(cp);
		} else {
			/* a control byte, or a byte that starts no valid sequence */
			k = 1;
			raw = false;
		}
		if (raw) {
			if (n + k >= size)
				break;
			memcpy(buf + n, u + i, k);
			n += k;
		} else {
			if (n + 4 * k >= size)
				break;
			for (size_t j = 0; j < k; j++) {
				buf[n++] = '\\';
				buf[n++] = 'x';
				buf[n++] = hex[u[i + j] >> 4];
				buf[n++] = hex[u[i + j] & 0xf];
			}
		}
		i += k;
	}
	buf[n] = '\0';
	return n;
}

const char *mthpd_text_escape(const char *s, char *buf, size_t size)
{
	(void)mthpd_text_escape_mem(s, strlen(s), buf, size);
	return buf;
}

char *mthpd_text_escape_dup(const char *s)
{
	size_t len = strlen(s);
	char *buf = malloc(MTHPD_TEXT_ESCAPED_SIZE(len));

	if (buf)
		(void)mthpd_text_escape_mem(s, len, buf, MTHPD_TEXT_ESCAPED_SIZE(len));
	return buf;
}

char *mthpd_text_vformat(const char *fmt, va_list ap)
{
	char *raw = NULL, *s;

	if (vasprintf(&raw, fmt, ap) < 0)
		return NULL;
	s = mthpd_text_escape_dup(raw);
	free(raw);
	return s;
}

char *mthpd_text_format(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = mthpd_text_vformat(fmt, ap);
	va_end(ap);
	return s;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int mthpd_text_unhex(const char *s, size_t len, char *buf, size_t size)
{
	size_t n = 0;

	if (len == 1 && s[0] == '-')
		len = 0;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (c == '\\') {
			int h, l;

			if (len - i < 4)
				return -EINVAL;
			if (s[i + 1] != 'x' || (h = hexval(s[i + 2])) < 0 || (l = hexval(s[i + 3])) < 0)
				return -EINVAL;
			c = (char)(h << 4 | l);
			if (!c)
				return -EINVAL;
			i += 3;
		}
		if (n + 1 >= size)
			return -ENOBUFS;
		buf[n++] = c;
	}
	if (!size)
		return -ENOBUFS;
	buf[n] = '\0';
	return (int)n;
}

void mthpd_text_chomp(char *s)
{
	size_t n = strlen(s);

	if (n && s[n - 1] == '\n')
		s[n - 1] = '\0';
}

const char *mthpd_text_bytes(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)bytes;
	unsigned int u = 0;

	if (bytes < 1024) {
		(void)snprintf(buf, size, "%" PRIu64 " B", bytes);
		return buf;
	}
	v /= 1024;
	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	/*
	 * three significant digits: 512 KiB, 4.00 MiB, 2.25 GiB; the bounds are
	 * where rounding adds a digit (99.96 is "100", not "100.0")
	 */
	(void)snprintf(buf, size, v >= 99.95 ? "%.0f %s" : v >= 9.995 ? "%.1f %s" : "%.2f %s", v,
		       units[u]);
	return buf;
}

const char *mthpd_text_file_type(unsigned int mode)
{
	return S_ISREG(mode)    ? "a regular file"
	       : S_ISDIR(mode)  ? "a directory"
	       : S_ISFIFO(mode) ? "a FIFO"
	       : S_ISCHR(mode)  ? "a character device"
	       : S_ISBLK(mode)  ? "a block device"
	       : S_ISSOCK(mode) ? "a socket"
	       : S_ISLNK(mode)  ? "a symbolic link"
				: "not a file";
}
