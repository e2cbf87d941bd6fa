// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "log.h"

#define LOG_LINE_MAX	1024

/*
 * Written once by main() before any other thread exists (log.h), read by
 * every thread after: no lock needed.
 */
static enum log_level log_level = LOG_LEVEL_INFO;

void log__set_level(enum log_level level)
{
	log_level = level;
}

/* A terminal without output processing does not turn LF into CR LF. */
static int raw_terminal(int fd)
{
	struct termios t;

	return isatty(fd) && !tcgetattr(fd, &t) && !(t.c_oflag & OPOST);
}

void log__printf(enum log_level level, const char *fmt, ...)
{
	char line[LOG_LINE_MAX];
	size_t n = sizeof(LOG_PREFIX) - 1, room;
	va_list ap;
	int len;

	if (level > log_level)
		return;
	memcpy(line, LOG_PREFIX, n);
	/* Room for the text, CR LF and the NUL vsnprintf writes. */
	room = sizeof(line) - n - 2;
	va_start(ap, fmt);
	len = vsnprintf(line + n, room, fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	n += (size_t)len < room ? (size_t)len : room - 1;
	if (raw_terminal(STDERR_FILENO))
		line[n++] = '\r';
	line[n++] = '\n';
	/* One write: lines of different threads do not interleave. */
	fwrite(line, 1, n, stderr);
	fflush(stderr);
}

int err__vset(char *err, size_t errlen, const char *fmt, va_list ap)
{
	if (errlen)
		vsnprintf(err, errlen, fmt, ap);
	return -1;
}

int err__set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err__vset(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}
