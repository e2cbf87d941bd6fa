// SPDX-License-Identifier: GPL-2.0-only
/*
 * Locking: each queue has one mutex, taken by whoever serves the queue
 * (pop, parse, submit) and by its completion thread (push).  Holding it
 * while submitting keeps each backend ring single-producer.  A reset
 * clears a queue's @active flag under that mutex and then waits for its
 * requests in flight, so after reset no thread touches the guest's rings.
 *
 * Interrupts are decided once per batch under that mutex - after serving
 * the ring (requests completed on the spot) and after each batch of
 * backend completions - never per request: with EVENT_IDX the decision
 * covers every push since the previous one, so the driver gets one
 * interrupt for a burst, and only when it asked for one.
 *
 * Each in-flight request owns the slot of its head descriptor.  A guest
 * that makes a head available again while it is still in flight breaks
 * the ring protocol (the driver may only reuse descriptors it got back):
 * the device is marked NEEDS_RESET rather than letting two requests share
 * a slot.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <linux/virtio_ids.h>

#include "devices/virtio_blk.h"
#include "devices/virtio_blk_req.h"

/* Discard / write-zeroes limits per request, in 512-byte sectors (2 GiB). */
#define BLK_MAX_RANGE_SECTORS	(1u << 22)

/*
 * Chains one pass of serve_queue() takes before it lets go of the queue:
 * a guest that keeps re-offering requests that complete at once (GET_ID,
 * malformed ones) cannot hold the serving thread and the queue lock, and
 * with them pause, stop and reset, for ever.
 */
#define BLK_SERVE_BUDGET	(2 * VIRTIO_BLK_QUEUE_SIZE)
/*
 * How long a reset waits for the backend to finish requests in flight
 * (the whole-device fuzz target builds with 0: every reset with I/O out
 * takes the stale path at once).
 */
#ifndef BLK_RESET_WAIT_MS
#define BLK_RESET_WAIT_MS	5000
#endif

struct blk_slot {
	struct blk_io io;
	struct blk_req req;
	struct iovec iov[VIRTIO_BLK_SEG_MAX];
	uint16_t head;
	bool busy;
	unsigned int gen;	/* the queue's generation at submission */
};

struct blk_queue {
	struct virtio_blk *blk;
	unsigned int idx;
	pthread_mutex_t lock;
	pthread_cond_t idle;
	bool active;
	unsigned int inflight;
	bool need_irq;
	bool more;		/* a pass ran out of budget: serve again */
	unsigned int gen;	/* bumped by a reset that gave up waiting */
	unsigned int stale;	/* requests in flight across such a reset */
	struct virtq_buf bufs[VIRTIO_BLK_QUEUE_SIZE];	/* one chain */
	struct iovec iov[VIRTIO_BLK_QUEUE_SIZE];	/* its data */
	struct blk_slot slots[VIRTIO_BLK_QUEUE_SIZE];
	struct virtio_blk_queue_stats st;
	bool reported_error;
	int kick_fd;
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
};

static struct virtio_blk *to_blk(struct virtio_dev *vdev)
{
	return vdev->priv;
}

/* Completes a request that never reached the backend.  Queue lock held. */
static void complete_now(struct blk_queue *q, uint16_t head,
			 const struct blk_req *req, int status)
{
	struct virtq *vq = &q->blk->vdev.vqs[q->idx];

	if (status >= 0)
		*req->status = status;
	virtq__push(vq, head, status >= 0 ? virtio_blk__used_len(req, status) : 0);
	q->st.requests++;
	if (status != VIRTIO_BLK_S_OK)
		q->st.errors++;
	q->need_irq = true;
}

static enum blk_io_op io_op(uint32_t type)
{
	switch (type) {
	case VIRTIO_BLK_T_IN:
		return BLK_IO_READ;
	case VIRTIO_BLK_T_OUT:
		return BLK_IO_WRITE;
	case VIRTIO_BLK_T_FLUSH:
		return BLK_IO_FLUSH;
	case VIRTIO_BLK_T_DISCARD:
		return BLK_IO_DISCARD;
	default:
		return BLK_IO_WRITE_ZEROES;
	}
}

/* Copies the serial into the GET_ID buffers (req->len <= 20 bytes). */
static void get_id(struct virtio_blk *blk, const struct blk_req *req)
{
	const char *s = blk->serial;
	uint64_t left = req->len;
	unsigned int i;

	for (i = 0; i < req->niov && left; i++) {
		size_t n = req->iov[i].iov_len;

		memcpy(req->iov[i].iov_base, s, n);
		s += n;
		left -= n;
	}
}

/*
 * One validated request: start it on the backend, or complete it here.
 * Returns true when it went to the backend.  Queue lock held.
 */
static bool start_request(struct blk_queue *q, uint16_t head, int status,
			  struct blk_req *req)
{
	struct virtio_blk *blk = q->blk;
	struct blk_slot *slot = &q->slots[head];

	if (status != VIRTIO_BLK_S_OK) {
		complete_now(q, head, req, status);
		return false;
	}
	if (req->type == VIRTIO_BLK_T_GET_ID) {
		get_id(blk, req);
		complete_now(q, head, req, VIRTIO_BLK_S_OK);
		return false;
	}
	if ((req->type == VIRTIO_BLK_T_IN || req->type == VIRTIO_BLK_T_OUT) &&
	    !req->len) {
		complete_now(q, head, req, VIRTIO_BLK_S_OK);
		return false;
	}
	/* the parser held IN/OUT to seg_max; this guards slot->iov itself */
	if (req->niov > VIRTIO_BLK_SEG_MAX) {
		complete_now(q, head, req, VIRTIO_BLK_S_IOERR);
		return false;
	}
	slot->req = *req;
	memcpy(slot->iov, req->iov, req->niov * sizeof(*req->iov));
	slot->req.iov = slot->iov;
	slot->head = head;
	slot->io = (struct blk_io) {
		.op = io_op(req->type),
		.offset = req->offset,
		.len = req->len,
		.iov = slot->iov,
		.niov = req->niov,
	};
	if (blk->be->ops->submit(blk->be, q->idx, &slot->io)) {
		complete_now(q, head, req, VIRTIO_BLK_S_IOERR);
		return false;
	}
	slot->busy = true;
	slot->gen = q->gen;
	q->inflight++;
	return true;
}

/*
 * Takes every new request of queue @qi: on the notifying vCPU thread, or
 * on the queue's thread with io=iothread.  With EVENT_IDX the driver does
 * not notify again until we re-arm, so one exit takes a whole burst, and
 * we only leave once the ring was seen empty after re-arming.
 */
static void serve_queue(struct virtio_blk *blk, unsigned int qi)
{
	struct blk_queue *q = &blk->q[qi];
	struct virtq *vq = &blk->vdev.vqs[qi];
	bool submitted = false, irq = false, broken = false;
	unsigned int taken = 0;

	pthread_mutex_lock(&q->lock);
	q->more = false;
	while (q->active) {
		struct virtq_chain chain = { .bufs = q->bufs };
		struct blk_req req;
		int ret, status;

		if (taken++ == BLK_SERVE_BUDGET) {
			/*
			 * The rest waits for the next completion batch, on
			 * the backend's thread (blk_batch_done); with nothing
			 * in flight, for the guest's next notification.
			 */
			if (q->inflight)
				q->more = true;
			else
				virtq__enable_notify(vq);
			break;
		}
		ret = virtq__pop(vq, &chain);
		if (ret == 0) {
			/*
			 * Re-arm, then look once more: with EVENT_IDX the
			 * driver notified for nothing published after the
			 * chain at the old avail_event, and a chain it
			 * published before seeing the new one never will be.
			 */
			virtq__enable_notify(vq);
			if (!virtq__pending(vq))
				break;
			continue;
		}
		if (ret < 0 || q->slots[chain.head].busy) {
			q->active = false;
			broken = true;
			break;
		}
		status = virtio_blk__parse(&chain, &blk->lim, q->iov, &req);
		if (start_request(q, chain.head, status, &req))
			submitted = true;
	}
	if (submitted)
		blk->be->ops->kick(blk->be, qi);
	if (q->need_irq && !broken) {
		q->need_irq = false;
		irq = virtq__needs_interrupt(vq);
	}
	pthread_mutex_unlock(&q->lock);
	if (broken)
		virtio_dev__needs_reset(&blk->vdev);
	if (irq)
		virtio_dev__signal_used(&blk->vdev, qi);
}

static void blk_notify(struct virtio_dev *vdev, unsigned int q)
{
	serve_queue(to_blk(vdev), q);
}

static void blk_kicked(void *opaque, unsigned int q)
{
	serve_queue(opaque, q);
}

/* Backend completion, on the queue's thread. */
static void blk_complete(void *opaque, unsigned int qi, struct blk_io *io,
			 int64_t res)
{
	struct virtio_blk *blk = opaque;
	struct blk_slot *slot = (struct blk_slot *)((char *)io -
					offsetof(struct blk_slot, io));
	struct blk_queue *q = &blk->q[qi];
	int status = res < 0 ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK;

	pthread_mutex_lock(&q->lock);
	if (slot->gen != q->gen) {
		/*
		 * In flight across a reset that gave up on it: the ring it
		 * came from is gone, so nothing is written to guest memory.
		 */
		slot->busy = false;
		q->stale--;
		pthread_mutex_unlock(&q->lock);
		return;
	}
	if (res < 0 && !q->reported_error && !blk->p.quiet) {
		q->reported_error = true;
		fprintf(stderr, "gpin-vmm: blk%u-q%u: I/O error at byte %llu: "
			"%s (further errors only counted)\n", blk->p.index, qi,
			(unsigned long long)io->offset, strerror((int)-res));
	}
	complete_now(q, slot->head, &slot->req, status);
	if (status == VIRTIO_BLK_S_OK && io->op <= BLK_IO_WRITE)
		q->st.bytes += io->len;
	slot->busy = false;
	if (!--q->inflight)
		pthread_cond_broadcast(&q->idle);
	pthread_mutex_unlock(&q->lock);
}

static void blk_batch_done(void *opaque, unsigned int qi)
{
	struct virtio_blk *blk = opaque;
	struct blk_queue *q = &blk->q[qi];
	bool irq = false, more;

	pthread_mutex_lock(&q->lock);
	if (q->need_irq) {
		q->need_irq = false;
		irq = virtq__needs_interrupt(&blk->vdev.vqs[qi]);
	}
	more = q->more;
	pthread_mutex_unlock(&q->lock);
	if (irq)
		virtio_dev__signal_used(&blk->vdev, qi);
	if (more)
		serve_queue(blk, qi);
}

static void blk_config_read(struct virtio_dev *vdev, uint32_t off, void *data,
			    unsigned int len)
{
	memcpy(data, (uint8_t *)&to_blk(vdev)->cfg + off, len);
}

static int blk_activate(struct virtio_dev *vdev)
{
	struct virtio_blk *blk = to_blk(vdev);
	unsigned int i, nready = 0;

	blk->lim.discard = virtio_dev__has(vdev, VIRTIO_BLK_F_DISCARD);
	blk->lim.write_zeroes = virtio_dev__has(vdev, VIRTIO_BLK_F_WRITE_ZEROES);
	for (i = 0; i < blk->nq; i++) {
		pthread_mutex_lock(&blk->q[i].lock);
		blk->q[i].active = vdev->ready[i];
		pthread_mutex_unlock(&blk->q[i].lock);
		nready += vdev->ready[i];
	}
	return nready ? 0 : -EINVAL;
}

static void deadline_in(struct timespec *t, unsigned int ms)
{
	clock_gettime(CLOCK_REALTIME, t);
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

/*
 * Waits for the queue's requests in flight, BLK_RESET_WAIT_MS at most: a
 * backend that never completes (a hung device) must not hang the vCPU
 * that writes the reset, and with it the VM.  Past the wait, the requests
 * still out become stale: the queue's generation moves on, their
 * completions later only free their slots, and a guest that offers one of
 * those slots again sees the device needing a reset.
 */
static void blk_reset_queue(struct virtio_blk *blk, struct blk_queue *q)
{
	struct timespec end;
	int ret = 0;

	deadline_in(&end, BLK_RESET_WAIT_MS);
	pthread_mutex_lock(&q->lock);
	q->active = false;
	q->more = false;
	while (q->inflight && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&q->idle, &q->lock, &end);
	if (q->inflight) {
		if (!blk->p.quiet)
			fprintf(stderr, "gpin-vmm: blk%u-q%u: reset: %u "
				"requests still in flight after %u ms; their "
				"completions will be dropped\n", blk->p.index,
				q->idx, q->inflight, BLK_RESET_WAIT_MS);
		q->stale += q->inflight;
		q->inflight = 0;
		q->gen++;
	}
	q->need_irq = false;
	pthread_mutex_unlock(&q->lock);
}

static void blk_reset(struct virtio_dev *vdev)
{
	struct virtio_blk *blk = to_blk(vdev);
	unsigned int i;

	for (i = 0; i < blk->nq; i++)
		blk_reset_queue(blk, &blk->q[i]);
}

static const struct virtio_dev_ops blk_ops = {
	.config_read = blk_config_read,
	.activate = blk_activate,
	.notify = blk_notify,
	.reset = blk_reset,
};

static void blk_fill_config(struct virtio_blk *blk)
{
	struct virtio_blk_config *c = &blk->cfg;
	uint32_t lbs = blk->be->lbs;

	c->capacity = blk->be->size / VIRTIO_BLK_SECTOR;
	c->seg_max = VIRTIO_BLK_SEG_MAX;
	c->size_max = VIRTIO_BLK_SIZE_MAX;
	c->blk_size = lbs;
	c->num_queues = blk->nq;
	c->max_discard_sectors = BLK_MAX_RANGE_SECTORS;
	c->max_discard_seg = VIRTIO_BLK_MAX_SEGS;
	c->discard_sector_alignment = lbs / VIRTIO_BLK_SECTOR;
	c->max_write_zeroes_sectors = BLK_MAX_RANGE_SECTORS;
	c->max_write_zeroes_seg = VIRTIO_BLK_MAX_SEGS;
	c->write_zeroes_may_unmap = 0;

	blk->lim = (struct blk_limits) {
		.capacity = c->capacity,
		.blk_size = lbs,
		.ro = blk->p.ro,
		.max_discard_sectors = BLK_MAX_RANGE_SECTORS,
		.max_write_zeroes_sectors = BLK_MAX_RANGE_SECTORS,
		.seg_max = VIRTIO_BLK_SEG_MAX,
		.size_max = VIRTIO_BLK_SIZE_MAX,
	};
}

static uint64_t blk_features(const struct virtio_blk *blk)
{
	uint64_t f = 1ULL << VIRTIO_F_VERSION_1 |
		     1ULL << VIRTIO_BLK_F_SEG_MAX |
		     1ULL << VIRTIO_BLK_F_SIZE_MAX |
		     1ULL << VIRTIO_BLK_F_BLK_SIZE |
		     1ULL << VIRTIO_BLK_F_FLUSH |
		     1ULL << VIRTIO_BLK_F_MQ;

	if (!blk->p.no_event_idx)
		f |= 1ULL << VIRTIO_RING_F_EVENT_IDX;
	if (blk->p.ro)
		f |= 1ULL << VIRTIO_BLK_F_RO;
	else
		f |= 1ULL << VIRTIO_BLK_F_DISCARD |
		     1ULL << VIRTIO_BLK_F_WRITE_ZEROES;
	return f;
}

static int blk_init_queues(struct virtio_blk *blk)
{
	unsigned int i;

	blk->q = calloc(blk->nq, sizeof(*blk->q));
	if (!blk->q)
		return -ENOMEM;
	for (i = 0; i < blk->nq; i++) {
		struct blk_queue *q = &blk->q[i];

		q->blk = blk;
		q->idx = i;
		q->kick_fd = -1;
		pthread_mutex_init(&q->lock, NULL);
		pthread_cond_init(&q->idle, NULL);
		if (blk->p.iothread) {
			q->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
			if (q->kick_fd < 0)
				return -errno;
		}
	}
	return 0;
}

static int blk_watch_kicks(struct virtio_blk *blk)
{
	unsigned int i;
	int ret;

	if (!blk->p.iothread)
		return 0;
	if (!blk->be->ops->watch)
		return -EOPNOTSUPP;
	for (i = 0; i < blk->nq; i++) {
		ret = blk->be->ops->watch(blk->be, i, blk->q[i].kick_fd);
		if (ret)
			return ret;
	}
	return 0;
}

static void report_disk(const struct virtio_blk *blk)
{
	const struct virtio_blk_params *p = &blk->p;

	fprintf(stderr, "gpin-vmm: blk%u: %s: %llu MiB, %u-byte blocks, %u "
		"queue%s, pin=%s, io=%s%s%s\n", p->index, p->path,
		(unsigned long long)(blk->be->size >> 20), blk->be->lbs, blk->nq,
		blk->nq == 1 ? "" : "s", p->backend->name,
		p->iothread ? "iothread" : "vcpu", p->ro ? ", read-only" : "",
		blk->be->direct ? "" : ", buffered (no O_DIRECT)");
}

struct virtio_blk *virtio_blk__create(const struct virtio_blk_params *p,
				      char *err, size_t errlen)
{
	struct virtio_blk *blk;
	struct blk_backend_params bp = {
		.path = p->path,
		.ro = p->ro,
		.nqueues = p->nqueues,
		.queue_depth = VIRTIO_BLK_QUEUE_SIZE,
		.disk_index = p->index,
		.complete = blk_complete,
		.batch_done = blk_batch_done,
		.kicked = blk_kicked,
	};
	int ret;

	if (!p->nqueues || p->nqueues > VIRTIO_BLK_MAX_QUEUES) {
		snprintf(err, errlen, "%s: %u queues (1..%d)", p->path,
			 p->nqueues, VIRTIO_BLK_MAX_QUEUES);
		return NULL;
	}
	blk = calloc(1, sizeof(*blk));
	if (!blk) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	blk->p = *p;
	blk->nq = p->nqueues;
	snprintf(blk->serial, sizeof(blk->serial), "gpin-blk%u", p->index);
	ret = blk_init_queues(blk);
	if (ret) {
		snprintf(err, errlen, "%s: %s", p->path, strerror(-ret));
		goto err_free;
	}
	bp.opaque = blk;
	blk->be = blk_backend__open(p->backend, &bp, err, errlen);
	if (!blk->be)
		goto err_free;
	ret = blk_watch_kicks(blk);
	if (ret) {
		snprintf(err, errlen, "%s: io=iothread: %s", p->path,
			 strerror(-ret));
		goto err_free;
	}
	blk_fill_config(blk);
	if (!p->quiet)
		report_disk(blk);
	blk->vdev = (struct virtio_dev) {
		.device_id = VIRTIO_ID_BLOCK,
		.features = blk_features(blk),
		.num_queues = blk->nq,
		.queue_max = VIRTIO_BLK_QUEUE_SIZE,
		.config_size = sizeof(blk->cfg),
		.ops = &blk_ops,
		.priv = blk,
	};
	return blk;

err_free:
	virtio_blk__destroy(blk);
	return NULL;
}

void virtio_blk__destroy(struct virtio_blk *blk)
{
	unsigned int i;

	if (!blk)
		return;
	blk_backend__close(blk->be);
	for (i = 0; blk->q && i < blk->nq; i++) {
		if (blk->q[i].kick_fd >= 0)
			close(blk->q[i].kick_fd);
		pthread_mutex_destroy(&blk->q[i].lock);
		pthread_cond_destroy(&blk->q[i].idle);
	}
	free(blk->q);
	free(blk);
}

struct blk_backend *virtio_blk__backend(struct virtio_blk *blk)
{
	return blk->be;
}

struct virtio_dev *virtio_blk__dev(struct virtio_blk *blk)
{
	return &blk->vdev;
}

int virtio_blk__kick_fd(const struct virtio_blk *blk, unsigned int q)
{
	return q < blk->nq ? blk->q[q].kick_fd : -1;
}

void virtio_blk__stats(const struct virtio_blk *blk, unsigned int qi,
		       struct virtio_blk_queue_stats *st)
{
	struct blk_queue *q = &blk->q[qi];

	pthread_mutex_lock(&q->lock);
	*st = q->st;
	pthread_mutex_unlock(&q->lock);
}

/* The backend's counters on one line: "gpin-vmm: blk0-gpin: name N, ..." */
struct counter_line {
	FILE *out;
	bool started;
};

static void print_counter(void *opaque, const char *dev, const char *name,
			  uint64_t value)
{
	struct counter_line *l = opaque;

	if (!l->started)
		fprintf(l->out, "gpin-vmm: %s:", dev);
	fprintf(l->out, "%s %s %llu", l->started ? "," : "", name,
		(unsigned long long)value);
	l->started = true;
}

static void print_backend_counters(const struct virtio_blk *blk, FILE *out)
{
	struct counter_line l = { .out = out };

	if (!blk->be->ops->counters)
		return;
	blk->be->ops->counters(blk->be, print_counter, &l);
	if (l.started)
		fputc('\n', out);
}

void virtio_blk__print_stats(const struct virtio_blk *blk, FILE *out)
{
	unsigned int i;

	for (i = 0; i < blk->nq; i++) {
		struct virtio_blk_queue_stats st;

		virtio_blk__stats(blk, i, &st);
		fprintf(out, "gpin-vmm: blk%u-q%u: %llu requests, %llu bytes, "
			"%llu errors\n", blk->p.index, i,
			(unsigned long long)st.requests,
			(unsigned long long)st.bytes,
			(unsigned long long)st.errors);
	}
	print_backend_counters(blk, out);
}

void virtio_blk__counters(const struct virtio_blk *blk, counter_fn fn,
			  void *opaque)
{
	unsigned int i;

	for (i = 0; i < blk->nq; i++) {
		struct virtio_blk_queue_stats st;
		char dev[32];

		virtio_blk__stats(blk, i, &st);
		/* The name of the exit line, so both read the same. */
		snprintf(dev, sizeof(dev), "blk%u-q%u", blk->p.index, i);
		fn(opaque, dev, "requests", st.requests);
		fn(opaque, dev, "bytes", st.bytes);
		fn(opaque, dev, "errors", st.errors);
	}
	if (blk->be->ops->counters)
		blk->be->ops->counters(blk->be, fn, opaque);
}
