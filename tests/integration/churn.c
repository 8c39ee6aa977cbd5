/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An allocator that gives memory back, at its most eager: it maps 4 MiB of
 * private anonymous memory (16 2 MiB ranges, aligned), writes every page,
 * and unmaps it again, over and over, moving between four slots so that
 * the range a scan just saw is often gone, not mapped anew, when the
 * collapse call comes: process_madvise() then answers ENOMEM ("not
 * mapped"), which the kernel does not count as an allocation failure.
 *
 * It prints {"pid":N} on one line and runs until SIGTERM or SIGINT.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SLOT_SIZE (4UL << 20)
#define SLOTS 4
#define PAGE 4096UL

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(void)
{
	const size_t span = 2 * SLOTS * SLOT_SIZE;
	struct sigaction sa;
	uintptr_t base;
	char *p;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGINT, &sa, NULL);

	/* an aligned stretch of address space, given back at once: the slots go there */
	p = mmap(NULL, span + (2UL << 20), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED) {
		perror("churn: mmap");
		return 1;
	}
	base = ((uintptr_t)p + (2UL << 20) - 1) & ~((2UL << 20) - 1);
	(void)munmap(p, span + (2UL << 20));

	printf("{\"pid\":%d}\n", (int)getpid());
	fflush(stdout);
	for (unsigned long n = 0; !stop; n++) {
		/* slots 8 MiB apart: never two of them in one VMA */
		char *s = (char *)(base + (n % SLOTS) * 2 * SLOT_SIZE);

		if (mmap(s, SLOT_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != s) {
			perror("churn: mmap slot");
			return 1;
		}
		for (size_t off = 0; off < SLOT_SIZE; off += PAGE)
			s[off] = (char)(n + 1);
		(void)munmap(s, SLOT_SIZE);
		/* a moment with the slot gone: a collapse planned on it lands here */
		(void)usleep(2000);
	}
	return 0;
}
