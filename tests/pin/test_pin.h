/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the gpin.ko test files (test_pin*.c). */
#ifndef TEST_PIN_H
#define TEST_PIN_H

#include <check.h>
#include <stdbool.h>
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

/*
 * NR_FOLL_PIN_ACQUIRED - NR_FOLL_PIN_RELEASED of /proc/vmstat after
 * vm.stat_refresh: the pins held system-wide, -1 when not readable exactly.
 */
long long pins_held(void);
/* VmPin of /proc/self/status in KiB: the process's pinned_vm. */
long vm_pin_kib(void);
/* pins_held() once it equals @want, or after 2 s; a steady baseline. */
long long pins_settle(long long want);
long long pins_steady(void);
/* Whether no page of @n at @buf is pinned (fork shares them all). */
bool pages_unpinned(const void *buf, size_t n);

/* Waits up to 20 s for the module's live pinned pages to reach zero. */
unsigned long long wait_unpinned(void);

/* test_pin_dio.c */
void dio_add_tcases(Suite *s);
/*
 * The direct I/O targets tests/pin/in-host.sh sets up: a brd ramdisk (its
 * requests complete inside submit_bio(), in the submitting thread), a
 * null_blk completing from a timer interrupt later, a file on ext4.
 */
enum dio_target { T_BRD, T_NULLB, T_EXT4, T_COUNT };
extern const char *const dio_target_names[T_COUNT];
/* Opens @t read/write (-1 and a SKIP line when it is not set up). */
int dio_open_target(enum dio_target t, int flags);
/* Waits (20 s at most) until exactly @n completions are signalled on @efd. */
void wait_eventfd(int efd, uint64_t n);

/* test_pin_foll.c */
void foll_add_tcases(Suite *s);

/* test_pin_mm.c */
void mm_add_tcases(Suite *s);

/* test_pin_io.c */
void io_add_tcases(Suite *s);

/* test_pin_reg.c */
void reg_add_tcases(Suite *s);

/* test_pin_stress.c */
void stress_add_tcases(Suite *s);

#endif /* TEST_PIN_H */
