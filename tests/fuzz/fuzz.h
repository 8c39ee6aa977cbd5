/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fuzz harnesses: each is one LLVMFuzzerTestOneInput().  Built with
 * clang -fsanitize=fuzzer,address,undefined by `make fuzz`; built with the
 * ordinary compiler and standalone.c by `make check`, which runs the seed
 * and regression inputs through them.  [systemd src/fuzz/fuzz.h]
 */
#ifndef MTHPD_FUZZ_H
#define MTHPD_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs larger than this say nothing new and only slow the fuzzer down. */
#define FUZZ_MAX_INPUT (128 * 1024)

/* An invariant broken: abort, which both libFuzzer and `make check` report. */
#define FUZZ_CHECK(cond)                                                                  \
	do {                                                                              \
		if (!(cond))                                                              \
			abort();                                                          \
	} while (0)

#endif
