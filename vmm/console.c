// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <unistd.h>

#include "console.h"

void console__init(struct console *con, int in_fd, int out_fd)
{
	con->in_fd = in_fd;
	con->out_fd = out_fd;
	con->raw = false;
	con->escape = false;
}

int console__enter_raw(struct console *con)
{
	struct termios raw;

	if (!isatty(con->in_fd))
		return 0;
	if (tcgetattr(con->in_fd, &con->saved))
		return -errno;
	raw = con->saved;
	cfmakeraw(&raw);
	/* Keep output post-processing off too: the guest sends CR LF itself. */
	if (tcsetattr(con->in_fd, TCSAFLUSH, &raw))
		return -errno;
	con->raw = true;
	return 0;
}

void console__restore(struct console *con)
{
	if (con->raw) {
		tcsetattr(con->in_fd, TCSAFLUSH, &con->saved);
		con->raw = false;
	}
}

static bool raw_terminal(FILE *out)
{
	struct termios t;
	int fd = fileno(out);

	return fd >= 0 && isatty(fd) && !tcgetattr(fd, &t) &&
	       !(t.c_oflag & OPOST);
}

void console__write_lines(FILE *out, const char *text, size_t len)
{
	bool cr = raw_terminal(out);
	size_t i;

	for (i = 0; i < len; i++) {
		if (cr && text[i] == '\n')
			fputc('\r', out);
		fputc(text[i], out);
	}
	fflush(out);
}

void console__tx(void *opaque, uint8_t byte)
{
	struct console *con = opaque;
	ssize_t n;

	do {
		n = write(con->out_fd, &byte, 1);
	} while (n < 0 && errno == EINTR);
}

size_t console__filter_input(struct console *con, const uint8_t *in, size_t n,
			     uint8_t *out, bool *quit)
{
	size_t i, o = 0;

	*quit = false;
	for (i = 0; i < n; i++) {
		uint8_t c = in[i];

		if (con->escape) {
			con->escape = false;
			if (c == 'x' || c == 'X') {
				*quit = true;
				return o;
			}
			if (c == CONSOLE_ESCAPE)
				out[o++] = c;
			/* Any other key after Ctrl-a is dropped with it. */
			continue;
		}
		if (c == CONSOLE_ESCAPE && con->raw) {
			con->escape = true;
			continue;
		}
		out[o++] = c;
	}
	return o;
}
