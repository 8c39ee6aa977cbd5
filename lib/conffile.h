/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One configuration file read and parsed into struct mthpd_daemon_conf or
 * one struct mthpd_policy: the text, the lines inih would read otherwise
 * than meant, the inih callback, "FILE:LINE: ..." errors.
 */
#ifndef MTHPD_CONFFILE_H
#define MTHPD_CONFFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "confkeys.h"

/* A configuration file is small text: more than this is a mistake. */
#define MTHPD_CONF_MAX_BYTES (64 * 1024)

/* State of parsing one file. */
struct mthpd_conffile {
	const char *file;
	enum mthpd_conf_target target;
	void *base;
	const char *text;     /* the whole file, NUL-terminated; no NUL inside */
	size_t pos;           /* where the reader goes on */
	unsigned int line;
	uint64_t seen;        /* mthpd_confkeys[] given so far, to refuse repeats */
	bool has_match;
	int r;                /* first error */
	char *err;
	size_t err_size;
};

/*
 * Parses @text (NUL-terminated, no NUL inside; a UTF-8 byte order mark
 * skipped) as a file of kind @target into @base, a struct
 * mthpd_daemon_conf or struct mthpd_policy filled with its defaults; errors
 * name the file @shown.  *ret_state is written either way (has_match: a
 * [Match] key was given).  Returns 0, or -EINVAL with the first error
 * "SHOWN:LINE: ..." in @err.
 */
int mthpd_conffile_parse_text(const char *text, const char *shown,
			      enum mthpd_conf_target target, void *base,
			      struct mthpd_conffile *ret_state, char *err, size_t err_size);

/*
 * Reads @path (a regular file of at most MTHPD_CONF_MAX_BYTES, no NUL) and
 * parses it as mthpd_conffile_parse_text() does.  Returns 0, -EINVAL with
 * the message in @err, or -errno with @err left as it was (-ENOENT: no
 * such file; the caller names the file).
 */
int mthpd_conffile_parse(const char *path, const char *shown,
			 enum mthpd_conf_target target, void *base,
			 struct mthpd_conffile *ret_state, char *err, size_t err_size);

#endif
