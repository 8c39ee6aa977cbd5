/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The keys of the configuration files, one table for both kinds: [Daemon]
 * of mthpd.conf, [Match] and [Policy] of a policy file, each with the
 * parser of its value and the field it fills.  Pure: no file is read.
 */
#ifndef MTHPD_CONFKEYS_H
#define MTHPD_CONFKEYS_H

#include <stdbool.h>
#include <stddef.h>

/* What a parser writes into: the daemon section or one policy. */
enum mthpd_conf_target { MTHPD_CONF_DAEMON, MTHPD_CONF_POLICY };

/*
 * Reads @value into @field.  Returns 0, or -EINVAL (-ENOMEM) with the
 * reason in @why, e.g. "'maybe' is not a boolean (yes or no)".
 */
typedef int (*mthpd_confkey_parse_fn)(const char *value, void *field, char *why, size_t why_size);

struct mthpd_confkey {
	const char *section;
	const char *name;
	enum mthpd_conf_target target;
	mthpd_confkey_parse_fn parse;
	size_t offset; /* of its field in struct mthpd_daemon_conf or struct mthpd_policy */
};

/*
 * Every key of both kinds of file, in the order mthpd.conf(5) lists them.
 * At most 64: a file's reader keeps the keys it has seen as bits.
 */
extern const struct mthpd_confkey mthpd_confkeys[];
extern const size_t mthpd_confkeys_count;

/*
 * Is the @len bytes at @name (not NUL-terminated) a section of this kind of
 * file, one that has keys in the table?
 */
bool mthpd_confkeys_section_known(enum mthpd_conf_target t, const char *name, size_t len);

#endif
