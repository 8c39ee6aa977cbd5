/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Text an operator reads: names other users chose (a comm, a cgroup, a
 * unit, a file name) made safe for a terminal and a log line, and sizes in
 * one style for plan, the preview and status.
 */
#ifndef MTHPD_TEXT_H
#define MTHPD_TEXT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The buffer that holds the escaped form of @len bytes whole, NUL included. */
#define MTHPD_TEXT_ESCAPED_SIZE(len) (4 * (size_t)(len) + 1)

/*
 * Copies the @len bytes at @s into @buf (NUL-terminated) for a terminal:
 * control characters (C0, DEL, the C1 range U+0080..U+009F), the Unicode
 * bidirectional overrides and isolates, and bytes that are not valid UTF-8
 * are written "\xHH", one per byte, as `mthpd status` always showed them;
 * printable text, valid UTF-8 included, is kept as it is.  A backslash is
 * kept too, so that a unit is shown as systemctl shows it
 * ("foo\x20bar.service").  A @buf shorter than MTHPD_TEXT_ESCAPED_SIZE(@len)
 * gets a prefix cut at a whole character or escape.  Returns the length
 * written.
 */
size_t mthpd_text_escape_mem(const char *s, size_t len, char *buf, size_t size);

/*
 * The length (2 to 4) of the valid UTF-8 sequence of a character above
 * U+007F at @s (of @len bytes), its code point in @ret_cp; 0 when the bytes
 * there are not one (overlong, a surrogate, above U+10FFFF, cut short).
 */
size_t mthpd_text_utf8(const char *s, size_t len, uint32_t *ret_cp);

/* Whether the code point @cp is one that the escape above writes as bytes (C1, bidi). */
bool mthpd_text_hidden(uint32_t cp);

/* The same for the NUL-terminated @s; returns @buf. */
const char *mthpd_text_escape(const char *s, char *buf, size_t size);

/* The same into a new allocation (the caller frees it); NULL: out of memory. */
char *mthpd_text_escape_dup(const char *s);

/*
 * The text @fmt makes, whole (a path may be 4095 bytes: nothing is cut),
 * escaped as above, in a new allocation (the caller frees it): for a log or
 * error line that names something another user chose.  NULL: out of memory.
 */
char *mthpd_text_vformat(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
char *mthpd_text_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Decodes the @len bytes at @s, a word of the state file whose bytes below
 * '!', DEL and the backslash are written "\xHH" (daemon/metrics.c), into
 * @buf, NUL-terminated.  A word of "-" is the empty string.  Returns the
 * length, -EINVAL for a malformed escape or an escaped NUL, -ENOBUFS when
 * @size is too small.
 */
int mthpd_text_unhex(const char *s, size_t len, char *buf, size_t size);

/*
 * Takes the one '\n' the kernel ends /proc/PID/comm with off @s: a comm
 * may hold a newline of its own (prctl(PR_SET_NAME) takes any byte), and is
 * kept whole, to be escaped where it is shown.
 */
void mthpd_text_chomp(char *s);

/*
 * @bytes for a person, in three significant digits: "0 B", "1000 B",
 * "512 KiB", "4.00 MiB", "12.5 MiB", "2.25 GiB".  Returns @buf.
 */
const char *mthpd_text_bytes(uint64_t bytes, char *buf, size_t size);

/* Pure: what a file of mode @mode is, in words: "a regular file", "a FIFO", "a directory", ... */
const char *mthpd_text_file_type(unsigned int mode);

#endif
