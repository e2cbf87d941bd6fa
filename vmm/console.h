/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The terminal the guest's serial console is attached to: raw mode while
 * the guest runs (restored on every way out), output to stdout, input from
 * stdin with one escape, Ctrl-a x, to quit (Ctrl-a Ctrl-a sends Ctrl-a).
 */
#ifndef GPIN_CONSOLE_H
#define GPIN_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <termios.h>

#define CONSOLE_ESCAPE	0x01	/* Ctrl-a */

struct console {
	int in_fd;
	int out_fd;
	bool raw;
	bool escape;		/* the last input byte was the escape */
	struct termios saved;
};

void console__init(struct console *con, int in_fd, int out_fd);
/* Puts the terminal in raw mode when @in_fd is one. */
int console__enter_raw(struct console *con);
void console__restore(struct console *con);

/*
 * Writes @len bytes of the VMM's own text (lines ending in LF) to @out,
 * with CR LF when @out is a terminal in raw mode: without output
 * processing the next line would not start at column 0.
 */
void console__write_lines(FILE *out, const char *text, size_t len);

/* serial_backend.tx for the UART: one byte to the output. */
void console__tx(void *opaque, uint8_t byte);

/*
 * Copies @in to @out minus the escape sequences; sets *@quit on Ctrl-a x.
 * Returns the bytes written to @out (at most @n).
 */
size_t console__filter_input(struct console *con, const uint8_t *in, size_t n,
			     uint8_t *out, bool *quit);

#endif /* GPIN_CONSOLE_H */
