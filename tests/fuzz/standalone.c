/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main() for a harness built without libFuzzer: runs every file named on
 * the command line, and every file in every directory named, through
 * LLVMFuzzerTestOneInput(); with no argument, tests/fuzz/corpus/NAME.
 * Exits 0 when all ran (a broken invariant or a sanitizer stops it
 * before), 1 when a file cannot be read, 77 without a corpus.
 * [systemd src/fuzz/fuzz-main.c]
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

static int run_file(const char *path, unsigned long *count)
{
	static uint8_t buf[FUZZ_MAX_INPUT + 1];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n;

	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	while (len < sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - len)) > 0)
		len += (size_t)n;
	(void)close(fd);
	(void)LLVMFuzzerTestOneInput(buf, len);
	(*count)++;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long count = 0;
	int bad = 0;
	char dflt[4096];
	char *dflt_argv[] = {argv[0], dflt, NULL};

	/* No argument (make check): the harness's own corpus, from the top of the tree. */
	if (argc == 1) {
		const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
		struct stat st;

		(void)snprintf(dflt, sizeof(dflt), "tests/fuzz/corpus/%s", name);
		if (stat(dflt, &st) < 0) {
			printf("no corpus at %s (run from the top of the tree)\n", dflt);
			return 77;
		}
		argc = 2;
		argv = dflt_argv;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *de;

		if (stat(argv[i], &st) < 0 || !S_ISDIR(st.st_mode)) {
			bad |= run_file(argv[i], &count) < 0;
			continue;
		}
		d = opendir(argv[i]);
		if (!d) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			bad = 1;
			continue;
		}
		while ((de = readdir(d))) {
			char path[4096];

			if (de->d_name[0] == '.')
				continue;
			(void)snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
			bad |= run_file(path, &count) < 0;
		}
		(void)closedir(d);
	}
	printf("%s: %lu inputs\n", argv[0], count);
	return bad;
}
