// SPDX-License-Identifier: GPL-2.0-only
/*
 * The "kernel" backend: io_uring on the O_DIRECT fd, one ring per device
 * queue.  The queue's owner prepares SQEs, submits them with one
 * io_uring_enter per pass and reaps CQEs straight from the shared ring
 * without a system call; the ring signals the queue's eventfd when a CQE
 * arrives, which is what the queue's thread sleeps on.
 *
 * The kernel pins the guest's pages itself (GUP-fast in the block layer's
 * bio_iov_iter_get_pages): this is the baseline the gpin backends are
 * compared with.  Buffers that are not aligned to the logical block size
 * cannot go to O_DIRECT as they are; they are copied through an aligned
 * bounce buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "devices/blk_uring.h"
#include "log.h"

int blk_uring__init(struct blk_uring *u, unsigned int depth, int efd)
{
	int ret;

	/* CQ is twice the SQ: it cannot overflow with @depth in flight. */
	ret = io_uring_queue_init(depth, &u->ring, 0);
	if (ret)
		return ret;
	u->ok = true;
	return io_uring_register_eventfd(&u->ring, efd);
}

void blk_uring__exit(struct blk_uring *u)
{
	if (u->ok)
		io_uring_queue_exit(&u->ring);
	u->ok = false;
}

static int prep_rw(struct blk_backend *be, struct io_uring_sqe *sqe,
		   struct blk_io *io)
{
	bool write = io->op == BLK_IO_WRITE;

	if (io->bounce && write)
		io_uring_prep_write(sqe, be->fd, io->bounce, io->len, io->offset);
	else if (io->bounce)
		io_uring_prep_read(sqe, be->fd, io->bounce, io->len, io->offset);
	else if (write)
		io_uring_prep_writev(sqe, be->fd, io->iov, io->niov, io->offset);
	else
		io_uring_prep_readv(sqe, be->fd, io->iov, io->niov, io->offset);
	return 0;
}

int blk_uring__prep(struct blk_backend *be, struct blk_uring *u,
		    struct blk_io *io)
{
	struct io_uring_sqe *sqe;
	int ret;

	/* The bounce first: a refusal must not leave an SQE taken. */
	io->bounce = NULL;
	if (io->op == BLK_IO_READ || io->op == BLK_IO_WRITE) {
		ret = blk_backend__bounce(be, io);
		if (ret)
			return ret;
	}
	/* One SQE per request a queue holds: none left is a bug. */
	sqe = io_uring_get_sqe(&u->ring);
	if (!sqe) {
		blk_backend__finish(be, io, -EBUSY, false);
		return -EBUSY;
	}
	switch (io->op) {
	case BLK_IO_READ:
	case BLK_IO_WRITE:
		prep_rw(be, sqe, io);
		break;
	case BLK_IO_FLUSH:
		io_uring_prep_fsync(sqe, be->fd, IORING_FSYNC_DATASYNC);
		break;
	case BLK_IO_DISCARD:
		io_uring_prep_fallocate(sqe, be->fd,
					FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					io->offset, io->len);
		break;
	case BLK_IO_WRITE_ZEROES:
		io_uring_prep_fallocate(sqe, be->fd,
					FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
					io->offset, io->len);
		break;
	}
	io_uring_sqe_set_data(sqe, io);
	return 0;
}

/*
 * EAGAIN and EBUSY pass as we reap, so what could not go stays in the
 * SQ for the next pass: an SQE left behind would be a guest request
 * never completed.  Another error is reported once and handled the same
 * way.
 */
int blk_uring__submit(struct blk_backend *be, struct blk_uring *u,
		      unsigned int q)
{
	int ret;

	while (io_uring_sq_ready(&u->ring)) {
		ret = io_uring_submit(&u->ring);
		if (ret == -EINTR || ret > 0)
			continue;
		if (ret != -EAGAIN && ret != -EBUSY && !u->reported) {
			u->reported = true;
			pr_err("blk%u-q%u: io_uring_submit: "
				"%s (retrying; reported once)",
				be->p.disk_index, q, strerror(-ret));
		}
		return -EAGAIN;
	}
	return 0;
}

unsigned int blk_uring__reap(struct blk_backend *be, struct blk_uring *u,
			     unsigned int q)
{
	struct io_uring_cqe *cqe;
	unsigned int head, n = 0;

	io_uring_for_each_cqe(&u->ring, head, cqe) {
		n++;
		be->p.complete(be->p.opaque, q, io_uring_cqe_get_data(cqe),
			       cqe->res);
	}
	io_uring_cq_advance(&u->ring, n);
	return n;
}

/* ---- the "kernel" backend: a ring and an eventfd per queue ------------ */

struct uring_queue {
	struct blk_uring u;
	int efd;
};

struct uring_backend {
	unsigned int nq;
	struct uring_queue q[];
};

static struct uring_queue *queue(struct blk_backend *be, unsigned int q)
{
	return &((struct uring_backend *)be->priv)->q[q];
}

static int uring_prep(struct blk_backend *be, unsigned int q,
		      struct blk_io *io)
{
	return blk_uring__prep(be, &queue(be, q)->u, io);
}

static int uring_submit(struct blk_backend *be, unsigned int q)
{
	return blk_uring__submit(be, &queue(be, q)->u, q);
}

static unsigned int uring_reap(struct blk_backend *be, unsigned int q)
{
	return blk_uring__reap(be, &queue(be, q)->u, q);
}

static int uring_event_fd(struct blk_backend *be, unsigned int q)
{
	return queue(be, q)->efd;
}

static void uring_stop(struct blk_backend *be)
{
	struct uring_backend *ub = be->priv;
	unsigned int i;

	if (!ub)
		return;
	for (i = 0; i < ub->nq; i++) {
		blk_uring__exit(&ub->q[i].u);
		if (ub->q[i].efd >= 0)
			close(ub->q[i].efd);
	}
	free(ub);
	be->priv = NULL;
}

static int uring_start(struct blk_backend *be)
{
	unsigned int nq = be->p.nqueues, i;
	struct uring_backend *ub;
	int ret = 0;

	ub = calloc(1, sizeof(*ub) + nq * sizeof(ub->q[0]));
	if (!ub)
		return -ENOMEM;
	be->priv = ub;
	ub->nq = nq;
	for (i = 0; i < nq; i++)
		ub->q[i].efd = -1;
	for (i = 0; i < nq && !ret; i++) {
		struct uring_queue *uq = &ub->q[i];

		uq->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (uq->efd < 0)
			ret = -errno;
		else
			ret = blk_uring__init(&uq->u, be->p.queue_depth, uq->efd);
	}
	if (ret)
		uring_stop(be);
	return ret;
}

const struct blk_backend_ops blk_backend_uring_ops = {
	.name = "kernel",
	.start = uring_start,
	.prep = uring_prep,
	.submit = uring_submit,
	.reap = uring_reap,
	.event_fd = uring_event_fd,
	.stop = uring_stop,
};
