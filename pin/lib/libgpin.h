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
#include <sys/types.h>
#include <sys/uio.h>

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

/*
 * Direct I/O, like preadv()/pwritev() on an O_DIRECT descriptor (@op is
 * GPIN_DIO_READ or GPIN_DIO_WRITE), the buffers pinned in @mode.
 * Returns the bytes transferred (possibly short), or -1 with errno.
 */
ssize_t gpin_dio(struct gpin *g, int fd, enum gpin_dio_op op,
		 uint64_t offset, const struct iovec *iov, unsigned int nr_segs,
		 enum gpin_mode mode);

/* Fill one request for gpin_dio_submit() (sets size, zeroes the rest). */
void gpin_dio_prep(struct gpin_dio *d, int fd, enum gpin_dio_op op,
		   uint64_t offset, const struct iovec *iov,
		   unsigned int nr_segs, enum gpin_mode mode,
		   uint64_t user_data);

/*
 * Start @nr requests (1..GPIN_DIO_MAX_BATCH) without waiting.  Returns the
 * number started (a prefix; the first one not started had an error), or
 * -1 with errno when none was (EAGAIN: GPIN_DIO_MAX_INFLIGHT unreaped).
 */
int gpin_dio_submit(struct gpin *g, struct gpin_dio *reqs, unsigned int nr);

/*
 * Copy up to @max completions into @ev without blocking.  Returns how many
 * (0 when none is ready) or -1 with errno; @inflight (may be NULL) gets
 * the number of requests still submitted and not reaped.
 */
int gpin_dio_reap(struct gpin *g, struct gpin_dio_event *ev, unsigned int max,
		  uint64_t *inflight);

/* Signal eventfd @efd once per completion; -1 stops. */
int gpin_set_eventfd(struct gpin *g, int efd);

const char *gpin_mode_name(enum gpin_mode mode);
const char *gpin_strerror(int err);

#endif /* LIBGPIN_H */
