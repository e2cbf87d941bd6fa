/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The insides of a virtio-blk device, shared by its files:
 *   virtio_blk.c        a request's life, and the pass that serves a queue
 *   virtio_blk_dev.c    creating the device, activation, reset, teardown
 *   virtio_blk_stats.c  its counters and what it prints about itself
 * and its pure units: virtio_blk_req.c (the parser), irq_hold.c
 * (interrupt moderation), blk_pace.c (who looks at the ring next),
 * blk_throttle.c (rate limits).  Nothing outside them includes this.
 */
#ifndef GPIN_VIRTIO_BLK_QUEUE_H
#define GPIN_VIRTIO_BLK_QUEUE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "devices/blk_backend.h"
#include "devices/blk_pace.h"
#include "devices/blk_throttle.h"
#include "devices/irq_hold.h"
#include "devices/virtio_blk.h"
#include "devices/virtio_blk_req.h"
#include "virtio/vq_service.h"

struct blk_slot {
	struct blk_io io;
	struct blk_req req;
	struct iovec *iov;	/* own_iov, or borrowed */
	struct iovec own_iov[VIRTIO_BLK_SLOT_IOV];
	uint16_t head;
	bool busy;
	uint64_t start_ns;	/* the pass that took it (irq_hold=auto) */
	unsigned int gen;	/* the queue's generation at submission */
};

struct blk_queue {
	struct virtio_blk *blk;
	unsigned int idx;
	struct vq_service svc;
	int kick_fd;			/* service=iothread: the ioeventfd, or -1 */

	/* The owner's; control paths change them holding the queue. */
	bool active;
	bool need_irq;
	struct irq_hold hold;		/* irq_hold=: interrupt moderation */
	uint64_t pass_ns;		/* irq_hold=auto: this pass began */
	unsigned int inflight;
	unsigned int gen;		/* bumped by a reset that gave up waiting */
	unsigned int stale;		/* requests in flight across such a reset */
	unsigned int iov_borrowed;	/* of VIRTIO_BLK_IOV_BUDGET */
	bool reported_error;
	struct blk_pace pace;		/* who looks at the ring next */
	struct virtq_buf bufs[VIRTIO_BLK_QUEUE_SIZE];	/* one chain */
	struct iovec iov[VIRTIO_BLK_QUEUE_SIZE];	/* its data */
	struct blk_slot slots[VIRTIO_BLK_QUEUE_SIZE];

	/* What the thread reads before it sleeps. */
	_Atomic long quiet_us;		/* notifications off: look again then */
	_Atomic long throttle_us;	/* a rate limit holds chains back */
	_Atomic uint64_t hold_until_ns;	/* irq_hold=: the next look, or 0 */
	_Atomic bool retry;		/* the backend kept requests back */

	/* A reset waiting for the queue to drain. */
	pthread_mutex_t lock;
	pthread_cond_t idle;
	bool drained;

	/* Counters, read from any thread. */
	_Atomic uint64_t requests;
	_Atomic uint64_t bytes;
	_Atomic uint64_t errors;
	_Atomic uint64_t interrupts;	/* raised for this queue */
	_Atomic uint64_t holds;		/* irq_hold=: holds begun */
};

struct virtio_blk {
	struct virtio_dev vdev;
	struct virtio_blk_params p;
	struct blk_backend *be;
	struct virtio_blk_config cfg;
	struct blk_limits lim;
	char serial[VIRTIO_BLK_ID_BYTES];
	unsigned int nq;
	struct blk_queue *q;
	/* --disk iops=, bps=: one budget for all queues */
	pthread_mutex_t throttle_lock;
	struct blk_throttle throttle;
};

static inline struct virtio_blk *to_blk(struct virtio_dev *vdev)
{
	return vdev->priv;
}

/* CLOCK_MONOTONIC in nanoseconds: the clock of every timer of a queue. */
uint64_t blk_now_ns(void);

/* virtio_blk.c: what a queue's service runs, and the backend's callback */
extern const struct vq_service_ops blk_service_ops;
void blk_complete(void *opaque, unsigned int qi, struct blk_io *io,
		  int64_t res);
/* Gives back what a slot borrowed for its request's iovecs. */
void blk_slot_put_iov(struct blk_queue *q, struct blk_slot *slot);

#endif /* GPIN_VIRTIO_BLK_QUEUE_H */
