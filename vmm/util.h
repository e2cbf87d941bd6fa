/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef GPIN_UTIL_H
#define GPIN_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Reads a whole regular file; 0 or -errno.  Free *buf with free(). */
int read_whole_file(const char *path, uint8_t **buf, size_t *size);

#endif /* GPIN_UTIL_H */
