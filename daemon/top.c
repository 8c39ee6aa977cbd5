/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `mthpd top`: `mthpd status` as a live view (issue 29, part 2).  Every
 * interval the state file is read again (state_show(), as status reads
 * it, the same freshness checks) and shown as one frame of
 * coverage_top(): a row per unit, largest first, with a coverage bar,
 * what the last pass collapsed and why the rest is left alone.
 *
 * On a terminal the frame is drawn in the alternate screen, over the last
 * one (no flicker over ssh: the cursor goes home, each line is cleared to
 * its end, the rest of the screen below), sized to the terminal (SIGWINCH
 * redraws at once), and `q` quits; the terminal's modes are restored on
 * every way out (q, SIGINT, SIGTERM, SIGHUP).  When stdout or stdin is not
 * a terminal, each frame is printed as plain lines followed by an empty
 * one, 80 columns wide, with no escape sequences.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "coverage.h"
#include "state.h"
#include "top.h"
#include "util.h"

static volatile sig_atomic_t top_stop, top_resized;

static void on_signal(int sig)
{
	if (sig == SIGWINCH)
		top_resized = 1;
	else
		top_stop = 1;
}

/*
 * The frame's lines on a terminal: each cut to @cols (a line that wraps
 * would push the frame down) and cleared to its end, at most @rows of them.
 */
static void draw(const char *frame, unsigned int cols, unsigned int rows, FILE *out)
{
	unsigned int row = 0;

	fputs("\033[H", out);
	for (const char *p = frame; *p && row < rows; row++) {
		size_t n = strcspn(p, "\n"), keep = n < cols ? n : cols;

		fwrite(p, 1, keep, out);
		fputs("\033[K", out);
		p += n;
		if (*p == '\n')
			p++;
		if (*p && row + 1 < rows)
			fputs("\r\n", out);
	}
	if (row < rows)
		fputs("\r\n(q quits)\033[K", out);
	fputs("\033[J", out);
}

/*
 * Waits @ms for a key on a terminal (or, @tty false, just waits); a
 * signal ends the wait early.  Returns true when the key was q.
 */
static bool wait_key(bool tty, int ms)
{
	struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
	char c[16];
	ssize_t n;

	if (poll(tty ? &p : NULL, tty ? 1 : 0, ms) <= 0 || !tty)
		return false;
	n = read(STDIN_FILENO, c, sizeof(c));
	for (ssize_t i = 0; i < n; i++)
		if (c[i] == 'q' || c[i] == 'Q')
			return true;
	return false;
}

int top_run(const char *state_file, const struct coverage_filter *filter, unsigned int interval_ms,
	    unsigned long iterations, FILE *out)
{
	const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH};
	bool tty = isatty(STDOUT_FILENO) && isatty(STDIN_FILENO), quit = false;
	struct coverage_filter f = *filter;
	struct sigaction sa = {.sa_handler = on_signal};
	struct termios saved, raw;
	int status = 0;

	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		(void)sigaction(sigs[i], &sa, NULL);
	if (tty && tcgetattr(STDIN_FILENO, &saved) < 0)
		tty = false;
	if (tty) {
		raw = saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		(void)tcsetattr(STDIN_FILENO, TCSANOW, &raw);
		fputs("\033[?1049h\033[?25l", out); /* the alternate screen, no cursor */
	}
	for (unsigned long i = 0; !top_stop && !quit && (!iterations || i < iterations); i++) {
		_cleanup_free_ char *frame = NULL;
		size_t size = 0;
		struct winsize ws;
		FILE *m;

		f.top_cols = 80;
		f.top_rows = tty ? 24 : 1000;
		if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row) {
			f.top_cols = ws.ws_col;
			f.top_rows = ws.ws_row;
		}
		m = open_memstream(&frame, &size);
		if (!m) {
			status = 1;
			break;
		}
		status = state_show(state_file, &f, m);
		if (fclose(m) != 0 || !frame) {
			status = 1;
			break;
		}
		if (tty)
			draw(frame, f.top_cols, f.top_rows, out);
		else
			fprintf(out, "%s\n", frame);
		(void)fflush(out);
		if (iterations && i + 1 == iterations)
			break;
		top_resized = 0;
		quit = wait_key(tty, (int)interval_ms);
	}
	if (tty) {
		fputs("\033[?25h\033[?1049l", out);
		(void)fflush(out);
		(void)tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	}
	return status;
}
