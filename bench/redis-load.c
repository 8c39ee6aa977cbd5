/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * redis-load: GETs at a fixed rate, each one's latency kept, for
 * bench/redis to cut to the daemon's own collapse window.
 *
 *   redis-load SOCKET RATE SECONDS KEYS OUT
 *       sends RATE GETs a second for SECONDS (0: until SIGTERM or
 *       SIGINT) over CONNS (32) connections
 *       to the Redis server on the unix SOCKET, for random keys of
 *       redis-benchmark's form (key:%012u, below KEYS); writes one record
 *       per reply to OUT: when the GET was due (CLOCK_REALTIME, us) and
 *       how long after that its reply came (us).
 *   redis-load --window OUT T0 T1
 *       prints "n p50 p99 p999 max" (ms) of the GETs due in [T0, T1)
 *       (seconds since the epoch, as date +%s.%N prints them).
 *
 * Open loop: a GET is due at start + i / RATE whether or not earlier ones
 * have been answered, and its latency counts from then, so that a stall
 * of the server shows in full in every GET it delayed (redis-benchmark
 * waits for each reply before its next request: a stall lowers its rate
 * and shows in one request per client).  A GET due while every connection
 * waits for a reply waits for one in turn, and that wait counts.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CONNS 32

struct rec {
	uint64_t due_us; /* CLOCK_REALTIME */
	uint32_t lat_us;
	uint32_t pad;
};

struct conn {
	int fd;
	bool busy;
	uint64_t due_mono, due_real;
	char buf[8192];
	size_t len;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t clock_us(clockid_t id)
{
	struct timespec ts;

	(void)clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
}

static int connect_unix(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || strlen(path) >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int send_get(struct conn *c, unsigned int key)
{
	char req[64];
	int n = snprintf(req, sizeof(req), "*2\r\n$3\r\nGET\r\n$16\r\nkey:%012u\r\n", key);

	return write(c->fd, req, (size_t)n) == n ? 0 : -1;
}

/* Whether c->buf holds one whole reply ($N\r\n<N bytes>\r\n, $-1\r\n, or a line); drops it. */
static bool reply_done(struct conn *c)
{
	char *eol = memchr(c->buf, '\n', c->len);
	size_t need;
	long n;

	if (!eol)
		return false;
	need = (size_t)(eol - c->buf) + 1;
	if (c->buf[0] == '$' && (n = strtol(c->buf + 1, NULL, 10)) >= 0)
		need += (size_t)n + 2;
	if (c->len < need)
		return false;
	c->len -= need;
	memmove(c->buf, c->buf + need, c->len);
	return true;
}

static int load(int argc, char **argv)
{
	struct conn *conns = calloc(CONNS, sizeof(*conns));
	double rate = atof(argv[2]), secs = atof(argv[3]);
	unsigned int keys = (unsigned int)strtoul(argv[4], NULL, 10);
	/* until a signal: at most an hour */
	size_t total = (size_t)(rate * (secs > 0 ? secs : 3600)), sent = 0, done = 0, cap = total + 1;
	struct rec *recs = calloc(cap, sizeof(*recs));
	struct sigaction sa = {.sa_handler = on_signal};
	uint64_t start_mono, start_real, seed = 88172645463325252ULL;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	FILE *out;

	(void)argc;
	if (!conns || !recs || ep < 0 || rate <= 0 || secs < 0 || keys == 0) {
		fprintf(stderr, "redis-load: bad arguments or no memory\n");
		return 2;
	}
	for (int i = 0; i < CONNS; i++) {
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};

		conns[i].fd = connect_unix(argv[1]);
		if (conns[i].fd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev) < 0) {
			fprintf(stderr, "redis-load: cannot connect to %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
	}
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGINT, &sa, NULL);
	start_mono = clock_us(CLOCK_MONOTONIC);
	start_real = clock_us(CLOCK_REALTIME);
	while (done < total && !stop) {
		uint64_t now = clock_us(CLOCK_MONOTONIC);
		struct epoll_event evs[CONNS];
		struct timespec timeout = {.tv_sec = 1};
		int n;

		/* every GET due by now goes out on a connection not waiting for a reply */
		for (int i = 0; i < CONNS && sent < total; i++) {
			uint64_t due = start_mono + (uint64_t)((double)sent * 1e6 / rate);

			if (due > now)
				break;
			if (conns[i].busy)
				continue;
			seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
			if (send_get(&conns[i], (unsigned int)(seed % keys)) < 0) {
				fprintf(stderr, "redis-load: write: %s\n", strerror(errno));
				return 1;
			}
			conns[i].busy = true;
			conns[i].due_mono = due;
			conns[i].due_real = start_real + (due - start_mono);
			sent++;
		}
		/*
		 * sleeps until the next GET is due, to the microsecond, or, with
		 * one due and every connection waiting, until a reply: no spinning
		 */
		bool any_free = false;

		for (int i = 0; i < CONNS; i++)
			any_free |= !conns[i].busy;
		if (sent < total && any_free) {
			uint64_t due = start_mono + (uint64_t)((double)sent * 1e6 / rate);
			uint64_t wait = due > now ? due - now : 0;

			timeout = (struct timespec){.tv_sec = (time_t)(wait / 1000000),
						    .tv_nsec = (long)(wait % 1000000) * 1000};
		}
		n = epoll_pwait2(ep, evs, CONNS, &timeout, NULL);
		if (n < 0 && errno == EINTR)
			continue;
		for (int k = 0; k < n; k++) {
			struct conn *c = &conns[evs[k].data.u32];
			ssize_t r = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);

			if (r <= 0) {
				fprintf(stderr, "redis-load: the server closed a connection\n");
				return 1;
			}
			c->len += (size_t)r;
			if (c->busy && reply_done(c)) {
				recs[done].due_us = c->due_real;
				recs[done].lat_us = (uint32_t)(clock_us(CLOCK_MONOTONIC) - c->due_mono);
				done++;
				c->busy = false;
			}
		}
	}
	out = fopen(argv[5], "w");
	if (!out || fwrite(recs, sizeof(*recs), done, out) != done || fclose(out) != 0) {
		fprintf(stderr, "redis-load: cannot write %s\n", argv[5]);
		return 1;
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(const uint32_t *v, size_t n, double p)
{
	size_t i = (size_t)(p * (double)n);

	return (double)v[i < n ? i : n - 1] / 1000.0;
}

static int window(char **argv)
{
	uint64_t t0 = (uint64_t)(atof(argv[3]) * 1e6), t1 = (uint64_t)(atof(argv[4]) * 1e6);
	FILE *f = fopen(argv[2], "r");
	struct rec r;
	uint32_t *v = NULL;
	size_t n = 0, cap = 0;

	if (!f) {
		fprintf(stderr, "redis-load: cannot read %s\n", argv[2]);
		return 1;
	}
	while (fread(&r, sizeof(r), 1, f) == 1) {
		if (r.due_us < t0 || r.due_us >= t1)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				return 1;
		}
		v[n++] = r.lat_us;
	}
	fclose(f);
	if (n == 0) {
		printf("0 nan nan nan nan\n");
		return 0;
	}
	qsort(v, n, sizeof(*v), cmp_u32);
	printf("%zu %.3f %.3f %.3f %.3f\n", n, pct(v, n, 0.5), pct(v, n, 0.99), pct(v, n, 0.999),
	       (double)v[n - 1] / 1000.0);
	free(v);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "--window") == 0)
		return window(argv);
	if (argc == 6)
		return load(argc, argv);
	fprintf(stderr, "usage: redis-load SOCKET RATE SECONDS KEYS OUT | --window OUT T0 T1\n");
	return 2;
}
