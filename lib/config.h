/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Configuration: DIR/mthpd.conf ([Daemon]: knobs named like khugepaged's)
 * and DIR/policy.d/ *.conf, one file per service ([Match] and [Policy]).
 * Parsed with inih into a validated struct mthpd_config, defaults first;
 * every error names file, line and key.  [systemd oomd.c, chrony conf.c]
 */
#ifndef MTHPD_CONFIG_H
#define MTHPD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pace.h"
#include "plan.h"

/* A directory holds at most this many policy files. */
#define MTHPD_MAX_POLICIES 1024

struct mthpd_policy {
	char *name;  /* file name, e.g. "50-redis.conf": its place in the order */
	char *path;
	/* [Match]: shell globs (fnmatch); NULL matches anything.  All given must match. */
	char *match_cgroup;
	char *match_unit;
	char *match_comm;
	/* [Policy] */
	bool enabled;
	bool dry_run;
	struct mthpd_knobs knobs;
	uint64_t max_bytes_per_pass; /* budget of collapsed bytes per pass; 0: none */
	/* pace=: a share of wall time (%) mthpd may work on one of its processes, or auto */
	struct mthpd_pace_conf pace;
	/* split_partial=: split 2M folios its processes map in part (default yes) */
	bool split_partial;
	/*
	 * min_age=: seconds a process must have run before its first collapse,
	 * so that a service finishes starting (and makes its prctl) first
	 */
	unsigned int min_age_sec;
};

/* min_age= of a policy that does not set it: see man/mthpd.conf.5 */
#define MTHPD_MIN_AGE_DEFAULT_SEC 10U
#define MTHPD_MIN_AGE_MAX_SEC 86400U

/* metrics_max_units= of a configuration that does not set it, and its largest value */
#define MTHPD_METRICS_MAX_UNITS_DEFAULT 100U
#define MTHPD_METRICS_MAX_UNITS_MAX 4096U

/*
 * prefault=: before a collapse, fault in a 2 MiB page of mthpd's own and
 * free it, so that the kernel takes that page, already backed by the
 * host, for the collapse (lib/kif.h: mthpd_kif_prefault()).
 */
enum mthpd_prefault {
	MTHPD_PREFAULT_AUTO, /* yes where the host takes free pages back (free page reporting) */
	MTHPD_PREFAULT_NO,
	MTHPD_PREFAULT_YES,
};

/* "auto", "no" or "yes", as mthpd.conf says it. */
const char *mthpd_prefault_name(enum mthpd_prefault p);

struct mthpd_daemon_conf {
	unsigned int scan_sleep_millisecs;  /* between passes */
	unsigned int alloc_sleep_millisecs; /* after an allocation failure */
	uint64_t pages_to_scan;             /* resident pages scanned per pass, all processes */
	unsigned int psi_threshold;         /* memory "some avg10" in hundredths of %; 0: off */
	unsigned int max_pids_per_pass;
	bool dry_run;
	char *metrics_file;                 /* Prometheus text format; "" for none */
	unsigned int metrics_max_units;     /* units with series of their own, the largest */
	char *state_file;                   /* for `mthpd status` */
	enum mthpd_prefault prefault;
	/* the lines of mthpd.conf that set them, for a later complaint; 0: the default */
	unsigned int metrics_file_line, state_file_line;
};

struct mthpd_config {
	char *dir;
	struct mthpd_daemon_conf daemon;
	struct mthpd_policy *policies; /* sorted by file name: the first match wins */
	size_t nr_policies;
};

/*
 * An error buffer that no message of this module or of the daemon's cuts:
 * two paths of PATH_MAX (4096) bytes, a line's value (at most 198 bytes)
 * and the reason.  A 512-byte one lost the reason behind a long path.
 */
#define MTHPD_ERR_SIZE (2 * 4096 + 1024)

/*
 * Loads @dir.  @defaults gives the max_ptes_* a policy gets when it does
 * not set them (khugepaged's sysfs values).  @dir must exist; a missing
 * mthpd.conf in it means all defaults, a missing policy.d no policies.
 * Every file must be a regular file of at most 64 KiB.  Returns 0, or -EINVAL
 * with a one-line message "FILE:LINE: ..." in @err, or -errno.
 */
int mthpd_config_load(const char *dir, const struct mthpd_knobs *defaults,
		      struct mthpd_config **ret, char *err, size_t err_size);

/*
 * Adds the policy file @path as if it were in @c's policy.d: at the place
 * its file name gives it, in place of a policy of the same name (to preview
 * a policy before installing it).  Returns 0, -EINVAL with "FILE:LINE: ..."
 * in @err, or -errno.
 */
int mthpd_config_add_policy(struct mthpd_config *c, const char *path,
			    const struct mthpd_knobs *defaults, char *err, size_t err_size);

/* Frees a config; accepts NULL and half-built ones.  Returns NULL. */
struct mthpd_config *mthpd_config_free(struct mthpd_config *c);

/*
 * Checks one file's text, @len bytes of @buf (NULs allowed: they are an
 * error), as a policy file or as mthpd.conf, with the same rules and
 * messages as mthpd_config_load() (the file shown as "<text>").  For tests
 * and fuzzers: no file is read.  Returns 0, -EINVAL with the message in
 * @err, or -ENOMEM.
 */
int mthpd_config_check_text(const char *buf, size_t len, bool policy,
			    const struct mthpd_knobs *defaults, char *err, size_t err_size);

/*
 * Could a process of this cgroup (@unit: its unit, "" for none) get an
 * enabled policy, whatever its comm?  False when no enabled policy's cgroup=
 * and unit= keys match: discovery then leaves its processes unread.
 */
bool mthpd_config_may_match(const struct mthpd_config *c, const char *cgroup, const char *unit);

/* The same, and with @disabled_too also policies that say enabled=no (a preview lists them). */
bool mthpd_config_may_match_any(const struct mthpd_config *c, const char *cgroup,
				const char *unit, bool disabled_too);

/*
 * The policy for a process: the first, in file-name order, whose [Match]
 * keys all match.  @unit may be NULL (not under a unit).  NULL if none.
 */
const struct mthpd_policy *mthpd_config_match(const struct mthpd_config *c, const char *cgroup,
					      const char *unit, const char *comm);

#endif
