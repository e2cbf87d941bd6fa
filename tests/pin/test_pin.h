/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the gpin.ko test files (test_pin*.c). */
#ifndef TEST_PIN_H
#define TEST_PIN_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "libgpin.h"

#define PAGE		4096UL
#define HPAGE		(2UL << 20)

/* Counter @field of @mode, after minus before. */
#define DELTA(a, b, m, field) \
	((long long)((b)->mode[m].field - (a)->mode[m].field))

/* The test's own /dev/gpin file, opened by setup(). */
extern struct libgpin *g;

void *map_anon(size_t len, int prot);
/* PFN of @addr from /proc/self/pagemap (root), 0 when not present. */
uint64_t pagemap_pfn(const void *addr);
/* The same for @n pages, in one read of pagemap opened as @fd; 0 or -1. */
int pagemap_pfns(int fd, const void *addr, size_t n, uint64_t *out);
void *map_aligned(size_t len, size_t align);
void touch(void *p, size_t len, int seed);
void stats(struct gpin_stats *st);
void setup(void);
void teardown(void);

/* gpin.ko's module parameter @name (/sys/module/gpin/parameters). */
unsigned long get_param(const char *name);
/* The same, set to @value; returns the old value. */
unsigned long set_param(const char *name, unsigned long value);

/* Waits up to 20 s for the module's live pinned pages to reach zero. */
unsigned long long wait_unpinned(void);

/* test_pin_dio.c */
void dio_add_tcases(Suite *s);

/* test_pin_foll.c */
void foll_add_tcases(Suite *s);

/* test_pin_mm.c */
void mm_add_tcases(Suite *s);

/* test_pin_io.c */
void io_add_tcases(Suite *s);

#endif /* TEST_PIN_H */
