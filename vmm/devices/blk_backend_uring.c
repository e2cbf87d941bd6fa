// SPDX-License-Identifier: GPL-2.0-only
/*
 * The "kernel" backend: io_uring on the O_DIRECT fd.  Each device queue
 * has its own ring and its own thread (blkN-qM) that waits for
 * completions; the serving thread (a vCPU, by default) prepares SQEs and
 * submits them with one io_uring_enter per notification.  The two sides
 * of a ring are single-producer (the submitter, under the device's queue
 * lock) and single-consumer (the queue thread), which liburing allows
 * without a lock between them.
 *
 * The kernel pins the guest's pages itself (GUP-fast in the block layer's
 * bio_iov_iter_get_pages): this is the baseline the gpin backends are
 * compared with.  Buffers that are not aligned to the logical block size
 * cannot go to O_DIRECT as they are; they are copied through an aligned
 * bounce buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "devices/blk_backend.h"

struct uring_queue {
	struct blk_backend *be;
	unsigned int idx;
	struct io_uring ring;
	bool ring_ok;
	pthread_t thread;
	bool thread_ok;
	int kick_fd;			/* io=iothread: the ioeventfd, or -1 */
	uint64_t kick_tag;		/* its address tags the poll's CQEs */
};

struct uring_backend {
	unsigned int nq;
	struct uring_queue q[];
};

static struct uring_queue *queue(struct blk_backend *be, unsigned int q)
{
	return &((struct uring_backend *)be->priv)->q[q];
}

static int prep_rw(struct blk_backend *be, struct io_uring_sqe *sqe,
		   struct blk_io *io)
{
	bool write = io->op == BLK_IO_WRITE;
	int ret = blk_backend__bounce(be, io);

	if (ret)
		return ret;
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

static int uring_submit(struct blk_backend *be, unsigned int q,
			struct blk_io *io)
{
	struct uring_queue *uq = queue(be, q);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&uq->ring);
	int ret = 0;

	if (!sqe) {
		/* Full of prepared SQEs: send them, then there is room. */
		io_uring_submit(&uq->ring);
		sqe = io_uring_get_sqe(&uq->ring);
		if (!sqe)
			return -EBUSY;
	}
	switch (io->op) {
	case BLK_IO_READ:
	case BLK_IO_WRITE:
		ret = prep_rw(be, sqe, io);
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
	default:
		ret = -EINVAL;
	}
	if (ret) {
		/* The SQE is taken: make it a no-op the thread ignores. */
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data(sqe, uq);
		return ret;
	}
	io_uring_sqe_set_data(sqe, io);
	return 0;
}

/*
 * Submits every prepared SQE.  EBUSY (the completion ring is full) and
 * EAGAIN pass as the queue's thread reaps, so they are waited out, 50 us
 * at a time, rather than given up on: an SQE left behind would be a guest
 * request never completed.  Another error is reported, and what is left
 * goes with the next kick.
 */
static void uring_kick(struct blk_backend *be, unsigned int q)
{
	struct uring_queue *uq = queue(be, q);
	int ret = 0;

	while (io_uring_sq_ready(&uq->ring)) {
		ret = io_uring_submit(&uq->ring);
		if (ret == -EINTR)
			continue;
		if (ret == -EAGAIN || ret == -EBUSY) {
			usleep(50);
			continue;
		}
		if (ret < 0)
			break;
	}
	if (ret < 0)
		fprintf(stderr, "gpin-vmm: blk%u-q%u: io_uring_submit: %s\n",
			be->p.disk_index, q, strerror(-ret));
}

static void rearm_kick(struct uring_queue *uq)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&uq->ring);

	if (!sqe)
		return;
	io_uring_prep_poll_multishot(sqe, uq->kick_fd, POLLIN);
	io_uring_sqe_set_data(sqe, &uq->kick_tag);
	io_uring_submit(&uq->ring);
}

/* A kick CQE: drain the eventfd and serve the queue here. */
static void kicked(struct uring_queue *uq, struct io_uring_cqe *cqe)
{
	struct blk_backend *be = uq->be;
	eventfd_t v;

	if (eventfd_read(uq->kick_fd, &v) == 0 || errno == EAGAIN)
		be->p.kicked(be->p.opaque, uq->idx);
	if (!(cqe->flags & IORING_CQE_F_MORE))
		rearm_kick(uq);
}

static void *queue_thread(void *arg)
{
	struct uring_queue *uq = arg;
	struct blk_backend *be = uq->be;
	char name[16];
	bool stop = false;

	snprintf(name, sizeof(name), "blk%u-q%u", be->p.disk_index, uq->idx);
	pthread_setname_np(pthread_self(), name);
	while (!stop) {
		struct io_uring_cqe *cqe;
		unsigned int head, n = 0;
		int ret;

		ret = io_uring_wait_cqe(&uq->ring, &cqe);
		if (ret == -EINTR)
			continue;
		if (ret < 0) {
			fprintf(stderr, "gpin-vmm: %s: io_uring_wait_cqe: %s\n",
				name, strerror(-ret));
			break;
		}
		io_uring_for_each_cqe(&uq->ring, head, cqe) {
			void *data = io_uring_cqe_get_data(cqe);

			n++;
			if (!data) {
				stop = true;
			} else if (data == &uq->kick_tag) {
				kicked(uq, cqe);
			} else if (data != (void *)uq) {
				struct blk_io *io = data;

				be->p.complete(be->p.opaque, uq->idx, io,
					       blk_backend__finish(be, io, cqe->res));
			}
		}
		io_uring_cq_advance(&uq->ring, n);
		be->p.batch_done(be->p.opaque, uq->idx);
	}
	return NULL;
}

static void uring_stop(struct blk_backend *be)
{
	struct uring_backend *ub = be->priv;
	unsigned int i;

	if (!ub)
		return;
	for (i = 0; i < ub->nq; i++) {
		struct uring_queue *uq = &ub->q[i];

		if (uq->thread_ok) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&uq->ring);

			if (sqe) {
				io_uring_prep_nop(sqe);
				io_uring_sqe_set_data(sqe, NULL);
				io_uring_submit(&uq->ring);
				pthread_join(uq->thread, NULL);
			} else {
				pthread_cancel(uq->thread);
				pthread_join(uq->thread, NULL);
			}
		}
		if (uq->ring_ok)
			io_uring_queue_exit(&uq->ring);
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
	for (i = 0; i < nq && !ret; i++) {
		struct uring_queue *uq = &ub->q[i];

		uq->be = be;
		uq->idx = i;
		uq->kick_fd = -1;
		/* One SQE per request in flight, one for the kick poll. */
		ret = io_uring_queue_init(be->p.queue_depth + 1, &uq->ring, 0);
		if (ret)
			break;
		uq->ring_ok = true;
		ret = -pthread_create(&uq->thread, NULL, queue_thread, uq);
		uq->thread_ok = !ret;
	}
	if (ret)
		uring_stop(be);
	return ret;
}

static int uring_watch(struct blk_backend *be, unsigned int q, int efd)
{
	struct uring_queue *uq = queue(be, q);

	uq->kick_fd = efd;
	rearm_kick(uq);
	return 0;
}

const struct blk_backend_ops blk_backend_kernel_ops = {
	.name = "kernel",
	.start = uring_start,
	.submit = uring_submit,
	.kick = uring_kick,
	.watch = uring_watch,
	.stop = uring_stop,
};
