/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One queue's io_uring on a backend's fd: what the "kernel" backend is,
 * and what the gpin backends use for the requests gpin.ko does not take
 * (FLUSH, DISCARD, WRITE_ZEROES, oversized READ/WRITE).  Called only by
 * the queue's owner, so both sides of the ring have one user at a time.
 */
#ifndef GPIN_BLK_URING_H
#define GPIN_BLK_URING_H

#include <liburing.h>
#include <stdbool.h>

#include "devices/blk_backend.h"

struct blk_uring {
	struct io_uring ring;
	bool ok;
	bool reported;		/* a submit error, said once */
};

/*
 * A ring for @depth requests in flight whose completions signal eventfd
 * @efd; 0 or -errno.
 */
int blk_uring__init(struct blk_uring *u, unsigned int depth, int efd);
void blk_uring__exit(struct blk_uring *u);

/* Prepares @io (bounced if it must be); 0 or -errno (no completion). */
int blk_uring__prep(struct blk_backend *be, struct blk_uring *u,
		    struct blk_io *io);
/* Submits what is prepared: 0, or -EAGAIN when some must wait. */
int blk_uring__submit(struct blk_backend *be, struct blk_uring *u,
		      unsigned int q);
/* Completes what finished; returns how many. */
unsigned int blk_uring__reap(struct blk_backend *be, struct blk_uring *u,
			     unsigned int q);

#endif /* GPIN_BLK_URING_H */
