/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libgpin: user-space access to /dev/gpin (gpin.ko).
 *
 * Errors are errno-style: functions return 0 (or a pointer) on success and
 * -1 (or NULL) with errno set on failure.  gpin_open() fails with ENOENT
 * when /dev/gpin does not exist (gpin.ko not loaded): callers then use the
 * kernel's own paths (O_DIRECT) instead.  gpin_strerror() explains a code
 * in gpin's terms.
 */
#ifndef LIBGPIN_H
#define LIBGPIN_H

#include <stdint.h>

#include <gpin.h>

struct gpin;

struct gpin *gpin_open(void);
int gpin_close(struct gpin *g);
int gpin_fd(const struct gpin *g);

/*
 * Pin @npages pages from @start (page aligned) in @mode; @flags is
 * GPIN_PIN_*; @pfns may be NULL or receive @npages page frame numbers;
 * @handle receives the handle for gpin_unpin(); @fast_pages (may be NULL)
 * how many pages the lockless walk served.
 */
int gpin_pin(struct gpin *g, const void *start, uint64_t npages,
	     enum gpin_mode mode, unsigned int flags, uint64_t *pfns,
	     uint32_t *handle, uint64_t *fast_pages);
int gpin_unpin(struct gpin *g, uint32_t handle);
int gpin_stats(struct gpin *g, struct gpin_stats *st);
int gpin_stats_reset(struct gpin *g);

const char *gpin_mode_name(enum gpin_mode mode);
const char *gpin_strerror(int err);

#endif /* LIBGPIN_H */
