// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pty.h"
#include "console.h"
#include "log.h"
#include "thread.h"

void console__init(struct console *con, int in_fd, int out_fd)
{
	/* Not raw, nothing buffered or dropped, no output thread yet. */
	memset(con, 0, sizeof(*con));
	con->in_fd = in_fd;
	con->out_fd = out_fd;
	pthread_mutex_init(&con->lock, NULL);
	pthread_cond_init(&con->more, NULL);
	pthread_cond_init(&con->drained, NULL);
}

int console__open(struct console *con, enum vm_console kind, struct pty *pty)
{
	int ret;

	switch (kind) {
	case VM_CONSOLE_STDIO:
		console__init(con, STDIN_FILENO, STDOUT_FILENO);
		break;
	case VM_CONSOLE_STDOUT:
		console__init(con, -1, STDOUT_FILENO);
		break;
	case VM_CONSOLE_OFF:
		console__init(con, -1, -1);	/* output dropped */
		break;
	case VM_CONSOLE_PTY:
		if (pty->master < 0) {
			ret = pty__open(pty);
			if (ret)
				return ret;
		}
		console__init(con, pty->master, pty->master);
		break;
	}
	return 0;
}

/* The contiguous run of buffered bytes from the oldest; under @lock. */
static size_t out_chunk(const struct console *con)
{
	size_t to_end = CONSOLE_OUT_BUF - con->head;

	return con->len < to_end ? con->len : to_end;
}

static void write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;	/* output gone: the bytes are lost */
		p += w;
		n -= w;
	}
}

/*
 * The output thread.  It copies a chunk out under the lock and writes it
 * without, so a writer blocked on a full pipe holds up nobody: the UART
 * keeps filling the buffer, and drops bytes once it is full.
 */
static void *console_writer(void *arg)
{
	struct console *con = arg;
	uint8_t chunk[4096];
	int old;

	/* cancelled only inside write(), never holding the lock */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	pthread_mutex_lock(&con->lock);
	for (;;) {
		size_t n;

		while (!con->len && !con->stopping) {
			pthread_cond_broadcast(&con->drained);
			pthread_cond_wait(&con->more, &con->lock);
		}
		if (!con->len)
			break;
		n = out_chunk(con);
		if (n > sizeof(chunk))
			n = sizeof(chunk);
		memcpy(chunk, con->buf + con->head, n);
		con->head = (con->head + n) % CONSOLE_OUT_BUF;
		con->len -= n;
		pthread_mutex_unlock(&con->lock);
		if (con->out_fd >= 0) {
			pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
			write_all(con->out_fd, chunk, n);
			pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
		}
		pthread_mutex_lock(&con->lock);
	}
	pthread_cond_broadcast(&con->drained);
	pthread_mutex_unlock(&con->lock);
	return NULL;
}

int console__start(struct console *con)
{
	int ret;

	if (con->started)
		return 0;
	ret = thread__start(&con->writer, console_writer, con,
			   THREAD_STACK_SMALL);
	if (!ret) {
		pthread_setname_np(con->writer, "console");
		con->started = true;
	}
	return ret;
}

void console__stop(struct console *con)
{
	struct timespec end;
	bool stuck = false;

	if (!con->started)
		return;
	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += CONSOLE_DRAIN_MS / 1000;
	end.tv_nsec += (CONSOLE_DRAIN_MS % 1000) * 1000000L;
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&con->lock);
	con->stopping = true;
	pthread_cond_signal(&con->more);
	while (con->len && !stuck)
		stuck = pthread_cond_timedwait(&con->drained, &con->lock,
					       &end) == ETIMEDOUT;
	if (stuck) {
		/* the reader is gone: what is left is dropped too */
		con->dropped += con->len;
		con->len = 0;
	}
	pthread_mutex_unlock(&con->lock);
	/* a writer blocked in write() is cancelled there */
	if (stuck)
		pthread_cancel(con->writer);
	pthread_join(con->writer, NULL);
	con->started = false;
	if (con->dropped)
		pr_warn("console: %llu bytes of guest output "
			"dropped: nobody read them",
			(unsigned long long)con->dropped);
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

	/* Under the stream's lock: lines of several threads stay whole. */
	flockfile(out);
	for (i = 0; i < len; i++) {
		if (cr && text[i] == '\n')
			putc_unlocked('\r', out);
		putc_unlocked(text[i], out);
	}
	fflush_unlocked(out);
	funlockfile(out);
}

void console__tx(void *opaque, uint8_t byte)
{
	struct console *con = opaque;

	pthread_mutex_lock(&con->lock);
	if (con->len == CONSOLE_OUT_BUF) {
		con->dropped++;
	} else {
		con->buf[(con->head + con->len) % CONSOLE_OUT_BUF] = byte;
		if (!con->len++)
			pthread_cond_signal(&con->more);
	}
	pthread_mutex_unlock(&con->lock);
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
