/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libgpin: the library API of gpin.ko for user space (a static library,
 * pin/lib; gpin-vmm, gpin-stat, gpin-bench and tests/pin link it).
 *
 * It wraps the UAPI of include/gpin.h, whose structs it takes and gives
 * back (struct gpin_dio, gpin_dio_event, gpin_stats): one handle, struct
 * libgpin, per open of /dev/gpin; every function is libgpin_*, so no name
 * is shared with the module's own functions (pin/dio.c: gpin_dio_submit()
 * there is the ioctl handler behind libgpin_dio_submit()).
 *
 *   libgpin_open() / libgpin_close() / libgpin_fd()    the handle
 *   libgpin_pin() / libgpin_unpin()                    pin pages, by handle
 *   libgpin_dio()                                      synchronous direct I/O
 *   libgpin_dio_prep() / _submit() / _reap()           asynchronous direct I/O
 *   libgpin_set_eventfd()                              completion notification
 *   libgpin_stats() / libgpin_stats_reset()            the module's counters
 *   libgpin_mode_name() / libgpin_strerror()           text for messages
 *
 * Errors are errno-style: functions return 0 (or a pointer, or a count) on
 * success and -1 (or NULL) with errno set on failure.  libgpin_open()
 * fails with ENOENT when /dev/gpin does not exist (gpin.ko not loaded):
 * callers then use the kernel's own paths (O_DIRECT) instead.
 * libgpin_strerror() explains a code in gpin's terms.  A handle may be used
 * by several threads at once; the module serialises what needs it.
 */
#ifndef LIBGPIN_H
#define LIBGPIN_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <gpin.h>

struct libgpin;

struct libgpin *libgpin_open(void);
int libgpin_close(struct libgpin *g);
int libgpin_fd(const struct libgpin *g);

/*
 * Pin @npages pages from @start (page aligned) in @mode; @flags is
 * GPIN_PIN_*; @pfns may be NULL or receive @npages page frame numbers;
 * @handle receives the handle for libgpin_unpin(); @fast_pages (may be NULL)
 * how many pages the lockless walk served.
 */
int libgpin_pin(struct libgpin *g, const void *start, uint64_t npages,
	     enum gpin_mode mode, unsigned int flags, uint64_t *pfns,
	     uint32_t *handle, uint64_t *fast_pages);
int libgpin_unpin(struct libgpin *g, uint32_t handle);
/*
 * The module's counters, all files together (the reset needs
 * CAP_SYS_ADMIN), and those of @g's own file alone (zero at open).
 */
int libgpin_stats(struct libgpin *g, struct gpin_stats *st);
int libgpin_stats_reset(struct libgpin *g);
int libgpin_file_stats(struct libgpin *g, struct gpin_stats *st);
int libgpin_file_stats_reset(struct libgpin *g);

/*
 * Direct I/O, like preadv()/pwritev() on an O_DIRECT descriptor (@op is
 * GPIN_DIO_READ or GPIN_DIO_WRITE), the buffers pinned in @mode.
 * Returns the bytes transferred (possibly short), or -1 with errno.
 */
ssize_t libgpin_dio(struct libgpin *g, int fd, enum gpin_dio_op op,
		 uint64_t offset, const struct iovec *iov, unsigned int nr_segs,
		 enum gpin_mode mode);

/* Fill one request for libgpin_dio_submit() (sets size, zeroes the rest). */
void libgpin_dio_prep(struct gpin_dio *d, int fd, enum gpin_dio_op op,
		   uint64_t offset, const struct iovec *iov,
		   unsigned int nr_segs, enum gpin_mode mode,
		   uint64_t user_data);

/*
 * Make request @d one on registered memory (GPIN_DIO_PINNED): its buffers
 * lie in GPIN_PIN_DIO handles of @pins, and the module pins nothing for
 * it.  Call after libgpin_dio_prep().
 */
void libgpin_dio_use_pinned(struct gpin_dio *d, const struct libgpin *pins);

/*
 * Start @nr requests (1..GPIN_DIO_MAX_BATCH) without waiting.  Returns the
 * number started (a prefix; the first one not started had an error), or
 * -1 with errno when none was (EAGAIN: GPIN_DIO_MAX_INFLIGHT unreaped).
 */
int libgpin_dio_submit(struct libgpin *g, struct gpin_dio *reqs, unsigned int nr);

/*
 * Copy up to @max completions into @ev without blocking.  Returns how many
 * (0 when none is ready) or -1 with errno; @inflight (may be NULL) gets
 * the number of requests still submitted and not reaped.
 */
int libgpin_dio_reap(struct libgpin *g, struct gpin_dio_event *ev, unsigned int max,
		  uint64_t *inflight);

/* Signal eventfd @efd once per completion; -1 stops. */
int libgpin_set_eventfd(struct libgpin *g, int efd);

const char *libgpin_mode_name(enum gpin_mode mode);
const char *libgpin_strerror(int err);

#endif /* LIBGPIN_H */
