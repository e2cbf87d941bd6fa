/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The terminal the guest's serial console is attached to: raw mode while
 * the guest runs (restored on every way out), output to stdout, input from
 * stdin with one escape, Ctrl-a x, to quit (Ctrl-a Ctrl-a sends Ctrl-a).
 *
 * Output never blocks the vCPU that writes the UART: bytes go into a
 * bounded buffer that the console's own thread writes out.  When nobody
 * reads the output (a full pipe, a stopped terminal) the buffer fills and
 * further bytes are dropped and counted; console__stop() says how many.
 */
#ifndef GPIN_CONSOLE_H
#define GPIN_CONSOLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <termios.h>

#include "vm_config.h"

#define CONSOLE_ESCAPE	0x01	/* Ctrl-a */
/* Output the reader may fall behind by before bytes are dropped. */
#define CONSOLE_OUT_BUF	(64 * 1024)
/* How long console__stop() waits for the buffer to drain. */
#define CONSOLE_DRAIN_MS	1000

struct console {
	int in_fd;
	int out_fd;
	bool raw;
	bool escape;		/* the last input byte was the escape */
	struct termios saved;

	/* output: the UART fills @buf, @writer empties it into @out_fd */
	pthread_mutex_t lock;
	pthread_cond_t more;	/* bytes came, or stopping */
	pthread_cond_t drained;	/* the buffer is empty */
	uint8_t buf[CONSOLE_OUT_BUF];
	size_t head;		/* oldest byte */
	size_t len;
	uint64_t dropped;
	bool started;
	bool stopping;
	pthread_t writer;
};

struct pty;

void console__init(struct console *con, int in_fd, int out_fd);

/*
 * console__init() for the console a VM config asks for: stdin and
 * stdout, stdout only, nothing, or the PTY @pty,
 * opened here unless it is open already (vm.reboot keeps the PTY and its
 * path).  0 or -errno.
 */
int console__open(struct console *con, enum vm_console kind, struct pty *pty);

/* Starts the output thread; 0 or -errno.  Bytes before it wait in the buffer. */
int console__start(struct console *con);

/*
 * Writes out what is buffered (waiting at most CONSOLE_DRAIN_MS) and ends
 * the output thread; reports dropped bytes on stderr.  Idempotent.
 */
void console__stop(struct console *con);
/* Puts the terminal in raw mode when @in_fd is one. */
int console__enter_raw(struct console *con);
void console__restore(struct console *con);

/*
 * Writes @len bytes of the VMM's own text (lines ending in LF) to @out,
 * with CR LF when @out is a terminal in raw mode: without output
 * processing the next line would not start at column 0.  The lines of
 * threads that print at once do not interleave.
 */
void console__write_lines(FILE *out, const char *text, size_t len);

/* serial_backend.tx for the UART: one byte to the output; never blocks. */
void console__tx(void *opaque, uint8_t byte);

/*
 * Copies @in to @out minus the escape sequences; sets *@quit on Ctrl-a x.
 * Returns the bytes written to @out (at most @n).
 */
size_t console__filter_input(struct console *con, const uint8_t *in, size_t n,
			     uint8_t *out, bool *quit);

#endif /* GPIN_CONSOLE_H */
