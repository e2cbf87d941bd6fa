/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * gpin-vmm's one convention for messages and for errors.
 *
 * Messages are lines on stderr, each "gpin-vmm: " and the text, written
 * whole (lines of several threads never interleave), with CR LF while
 * stderr is the guest's terminal in raw mode:
 *   pr_err()    something failed
 *   pr_warn()   something is off, and the VMM goes on
 *   pr_info()   what the VMM chose or made (a default, the console's PTY)
 *   pr_debug()  details, with --verbose only
 * --quiet keeps errors and warnings only.  The text has no newline.
 *
 * Errors: functions return 0 or -errno and unwind with err_ labels.  A
 * function whose caller decides how a failure is shown (exit status 2,
 * an HTTP 400, a domain XML's line number) says why in a buffer: "0, or
 * -1 (or -errno) with a reason in @err"; err__set() writes that reason.
 * Nothing below the front ends (main.c, api/) prints a reason it also
 * returns.
 */
#ifndef GPIN_LOG_H
#define GPIN_LOG_H

#include <stdarg.h>
#include <stddef.h>

#define LOG_PREFIX	"gpin-vmm: "

enum log_level {
	LOG_LEVEL_ERROR,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,		/* the default */
	LOG_LEVEL_DEBUG,
};

/*
 * The one process-wide setting: main() sets it from --quiet/--verbose
 * before any thread starts; everything after only reads it.
 */
void log__set_level(enum log_level level);

void log__printf(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pr_err(...)	log__printf(LOG_LEVEL_ERROR, __VA_ARGS__)
#define pr_warn(...)	log__printf(LOG_LEVEL_WARN, __VA_ARGS__)
#define pr_info(...)	log__printf(LOG_LEVEL_INFO, __VA_ARGS__)
#define pr_debug(...)	log__printf(LOG_LEVEL_DEBUG, __VA_ARGS__)

/* Formats the reason into @err (@errlen bytes, may be 0); returns -1. */
int err__set(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int err__vset(char *err, size_t errlen, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#endif /* GPIN_LOG_H */
