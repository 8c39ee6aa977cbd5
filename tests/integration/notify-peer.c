/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The systemd side of sd_notify(), for tests: binds an AF_UNIX datagram
 * socket, runs a command with NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID
 * set as systemd would set them, and writes every message it receives, one
 * field per line ("READY=1"), to a log file, until the command exits.
 *
 *   notify-peer LOG WATCHDOG_USEC -- COMMAND [ARG...]
 *
 * Prints the command's pid on stdout first, so a test can signal it; exits
 * with the command's exit status (128 + signal if it was killed).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	FILE *log;
	pid_t child;
	int fd, status = 0;
	double t0 = now();

	if (argc < 5 || strcmp(argv[3], "--") != 0) {
		fprintf(stderr, "usage: notify-peer LOG WATCHDOG_USEC -- COMMAND [ARG...]\n");
		return 2;
	}
	log = fopen(argv[1], "we");
	if (!log) {
		perror(argv[1]);
		return 2;
	}
	setvbuf(log, NULL, _IOLBF, 0);
	(void)snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/mthpd-notify-%d", (int)getpid());
	(void)unlink(sa.sun_path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("notify socket");
		return 2;
	}
	child = fork();
	if (child < 0)
		return 2;
	if (child == 0) {
		char pid[32];

		(void)snprintf(pid, sizeof(pid), "%d", (int)getpid());
		setenv("NOTIFY_SOCKET", sa.sun_path, 1);
		if (strcmp(argv[2], "0") != 0) {
			setenv("WATCHDOG_USEC", argv[2], 1);
			setenv("WATCHDOG_PID", pid, 1);
		}
		execvp(argv[4], argv + 4);
		perror(argv[4]);
		_exit(127);
	}
	printf("%d\n", (int)child);
	fflush(stdout);

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		char buf[4096];
		ssize_t n;

		if (poll(&p, 1, 100) > 0 && (n = recv(fd, buf, sizeof(buf) - 1, 0)) > 0) {
			char *line, *save = NULL;

			buf[n] = '\0';
			for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
				fprintf(log, "%.3f %s\n", now() - t0, line);
			continue;
		}
		if (waitpid(child, &status, WNOHANG) == child)
			break;
	}
	/* Drain what was sent right before the exit. */
	for (;;) {
		char buf[4096];
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		char *line, *save = NULL;

		if (n <= 0)
			break;
		buf[n] = '\0';
		for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			fprintf(log, "%.3f %s\n", now() - t0, line);
	}
	(void)unlink(sa.sun_path);
	fclose(log);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
