/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef MTHPD_CHECK_CONFIG_H
#define MTHPD_CHECK_CONFIG_H

struct mthpd_config;

/*
 * `check-config` on the loaded configuration @c of @config_dir: prints it,
 * checks its files, ends with 'configuration OK'.  Returns the exit status.
 */
int check_config_run(const struct mthpd_config *c, const char *config_dir);

#endif
