/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The configuration reader on one file's text: the first byte picks a
 * policy file or mthpd.conf, the rest is the text.  Invariants: an accepted
 * text has no NUL and stays within 64 KiB; a refused one has a message that
 * names "<text>" (and so a file, and a line where there is one).
 */
#include <errno.h>
#include <string.h>

#include "config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct mthpd_knobs defaults = {.max_ptes_none = 511, .max_ptes_swap = 64,
						    .max_ptes_shared = 256};
	char err[512];
	int r;

	if (size < 1 || size > FUZZ_MAX_INPUT)
		return 0;
	r = mthpd_config_check_text((const char *)data + 1, size - 1, data[0] & 1, &defaults, err,
				    sizeof(err));
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOMEM);
	if (r == 0)
		FUZZ_CHECK(memchr(data + 1, 0, size - 1) == NULL && size - 1 <= 64 * 1024);
	else if (r == -EINVAL)
		FUZZ_CHECK(strncmp(err, "<text>", 6) == 0);
	return 0;
}
