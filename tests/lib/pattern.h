/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Page patterns: a readable way to write the 512 pages of a range in a test
 * table, and to print a scan result the same way when a check fails.
 *
 * A pattern is tokens separated by spaces, each [COUNT]PAGES[:ORDER]: the
 * page letters PAGES repeated COUNT times (default once), where
 *   o  occupied (present, exclusive)     S  occupied and shared
 *   .  pte_none                          z  the zero page (none to khugepaged)
 *   s  swap entry                        g  guard marker
 * and :ORDER is the order of the large folio mapping the token's occupied
 * pages.  "256o 256." is half a range written; "4ooo." is "ooo." four
 * times: 16 pages, every fourth one empty; "16o:4" is one 64K folio.
 */
#ifndef MTHPD_TEST_PATTERN_H
#define MTHPD_TEST_PATTERN_H

#include <stddef.h>

#include "scan.h"

/* Builds @ret (addr 0) from @pattern.  Returns 0, or -EINVAL if the pattern
 * is malformed or does not describe exactly 512 pages. */
int test_pattern_scan(const char *pattern, struct mthpd_range_scan *ret);

/* Writes @s as a run-length pattern ("16o:4 16o 480.") into @buf; zero pages
 * and none are both '.'.  Returns @buf. */
char *test_pattern_describe(const struct mthpd_range_scan *s, char *buf, size_t size);

#endif
