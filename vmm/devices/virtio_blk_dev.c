// SPDX-License-Identifier: GPL-2.0-only
/*
 * A virtio-blk device's life around its requests (virtio_blk.c): created
 * over a backend with one service per queue, activated by the driver,
 * reset (waiting, within bounds, for what is in flight), destroyed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <linux/virtio_ids.h>

#include "devices/virtio_blk_queue.h"
#include "log.h"

/* Discard / write-zeroes limits per request, in 512-byte sectors (2 GiB). */
#define BLK_MAX_RANGE_SECTORS	(1u << 22)
/*
 * How long a reset waits for the backend to finish requests in flight,
 * all queues together (the whole-device fuzz target builds with 0: every
 * reset with I/O out takes the stale path at once).
 */
#ifndef BLK_RESET_WAIT_MS
#define BLK_RESET_WAIT_MS	5000
#endif

/* service=vcpu: the notifying vCPU serves the queue, unless someone does. */
static void blk_notify(struct virtio_dev *vdev, unsigned int q)
{
	vq_service__kick(&to_blk(vdev)->q[q].svc, 0);
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
		struct blk_queue *q = &blk->q[i];

		vq_service__hold(&q->svc);
		q->active = vdev->ready[i];
		vq_service__unhold(&q->svc, 0);
		nready += vdev->ready[i];
	}
	return nready ? 0 : -EINVAL;
}

/* Stops taking chains from @q; its passes only reap from now on. */
static void stop_queue(struct blk_queue *q)
{
	vq_service__hold(&q->svc);
	q->active = false;
	atomic_store(&q->quiet_us, 0);
	atomic_store(&q->throttle_us, 0);
	atomic_store(&q->hold_until_ns, 0);
	pthread_mutex_lock(&q->lock);
	q->drained = !q->inflight;
	pthread_mutex_unlock(&q->lock);
	vq_service__unhold(&q->svc, 0);
}

/* Waits until @q drained or @end (CLOCK_MONOTONIC) passed. */
static void wait_drained(struct blk_queue *q, const struct timespec *end)
{
	int ret = 0;

	pthread_mutex_lock(&q->lock);
	while (!q->drained && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&q->idle, &q->lock, end);
	pthread_mutex_unlock(&q->lock);
}

/*
 * After the wait: requests still out become stale - the queue's
 * generation moves on, their completions later only free their slots and
 * write nothing into guest memory, and a guest that offers one of those
 * slots again sees the device needing a reset.
 */
static void forget_inflight(struct virtio_blk *blk, struct blk_queue *q)
{
	vq_service__hold(&q->svc);
	if (q->inflight) {
		if (!blk->p.quiet)
			pr_warn("blk%u-q%u: reset: %u "
				"requests still in flight after %u ms; their "
				"completions will be dropped", blk->p.index,
				q->idx, q->inflight, BLK_RESET_WAIT_MS);
		q->stale += q->inflight;
		q->inflight = 0;
		q->gen++;
	}
	q->need_irq = false;
	irq_hold__cancel(&q->hold);
	atomic_store(&q->hold_until_ns, 0);
	/* q->retry stays: what the backend kept back still has to go out */
	vq_service__unhold(&q->svc, 0);
}

/*
 * Waits for the requests in flight, BLK_RESET_WAIT_MS at most for all
 * queues together: a backend that never completes (a hung device) must
 * not hang the vCPU that writes the reset, and with it the VM.
 */
static void blk_reset(struct virtio_dev *vdev)
{
	struct virtio_blk *blk = to_blk(vdev);
	struct timespec end;
	unsigned int i;

	for (i = 0; i < blk->nq; i++)
		stop_queue(&blk->q[i]);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += BLK_RESET_WAIT_MS / 1000;
	end.tv_nsec += (long)(BLK_RESET_WAIT_MS % 1000) * 1000000L;
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	for (i = 0; i < blk->nq; i++)
		wait_drained(&blk->q[i], &end);
	for (i = 0; i < blk->nq; i++)
		forget_inflight(blk, &blk->q[i]);
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

static int init_queue(struct virtio_blk *blk, struct blk_queue *q,
		      unsigned int i)
{
	pthread_condattr_t ca;
	char name[32];

	q->blk = blk;
	q->idx = i;
	q->kick_fd = -1;
	irq_hold__init(&q->hold, blk->p.irq_hold_us);
	blk_pace__init(&q->pace, blk->p.poll_us);
	pthread_mutex_init(&q->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->idle, &ca);
	pthread_condattr_destroy(&ca);
	snprintf(name, sizeof(name), "blk%u-q%u", blk->p.index, i);
	if (blk->p.iothread) {
		q->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (q->kick_fd < 0)
			return -errno;
	}
	return vq_service__init(&q->svc, &blk_service_ops, blk, i, name);
}

static int blk_init_queues(struct virtio_blk *blk)
{
	unsigned int i;
	int ret = 0;

	blk->q = calloc(blk->nq, sizeof(*blk->q));
	if (!blk->q)
		return -ENOMEM;
	for (i = 0; i < blk->nq && !ret; i++)
		ret = init_queue(blk, &blk->q[i], i);
	return ret;
}

/*
 * Each queue's thread sleeps on the backend's completions and, with
 * service=iothread, on the queue's ioeventfd; the fuzz target runs none.
 */
static int blk_start_queues(struct virtio_blk *blk)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < blk->nq && !ret; i++) {
		struct blk_queue *q = &blk->q[i];

		ret = vq_service__watch(&q->svc,
					blk->be->ops->event_fd(blk->be, i));
		if (!ret && q->kick_fd >= 0)
			ret = vq_service__watch(&q->svc, q->kick_fd);
		if (!ret && !blk->p.manual)
			ret = vq_service__start(&q->svc);
	}
	return ret;
}

static void report_disk(const struct virtio_blk *blk)
{
	const struct virtio_blk_params *p = &blk->p;
	char limits[64] = "";

	if (p->iops || p->bps)
		snprintf(limits, sizeof(limits), ", at most %llu IOPS and "
			 "%llu bytes/s", (unsigned long long)p->iops,
			 (unsigned long long)p->bps);
	pr_info("blk%u: %s: %llu MiB, %u-byte blocks, %u "
		"queue%s, pin=%s, service=%s%s%s%s", p->index, p->path,
		(unsigned long long)(blk->be->size >> 20), blk->be->lbs, blk->nq,
		blk->nq == 1 ? "" : "s", blk_backend__pin_name(blk->be),
		p->iothread ? "iothread" : "vcpu", p->ro ? ", read-only" : "",
		blk->be->direct ? "" : ", buffered (no O_DIRECT)", limits);
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
		.gpin_mode = p->gpin_mode,
		.pinned_ram = p->pinned_ram,
		.complete = blk_complete,
	};
	int ret;

	if (!p->nqueues || p->nqueues > VIRTIO_BLK_MAX_QUEUES) {
		err__set(err, errlen, "%s: %u queues (1..%d)", p->path,
			 p->nqueues, VIRTIO_BLK_MAX_QUEUES);
		return NULL;
	}
	if (p->poll_us < 0 || p->poll_us > VIRTIO_BLK_TIMER_MAX_US ||
	    (p->irq_hold_us < 0 && p->irq_hold_us != VIRTIO_BLK_IRQ_HOLD_AUTO) ||
	    p->irq_hold_us > VIRTIO_BLK_TIMER_MAX_US) {
		err__set(err, errlen, "%s: poll=%ld, irq_hold=%ld (auto or 0..%d us)",
			 p->path, p->poll_us, p->irq_hold_us,
			 VIRTIO_BLK_TIMER_MAX_US);
		return NULL;
	}
	blk = calloc(1, sizeof(*blk));
	if (!blk) {
		err__set(err, errlen, "out of memory");
		return NULL;
	}
	blk->p = *p;
	blk->nq = p->nqueues;
	pthread_mutex_init(&blk->throttle_lock, NULL);
	blk_throttle__init(&blk->throttle, p->iops, p->bps,
			   VIRTIO_BLK_SEG_MAX * VIRTIO_BLK_SIZE_MAX, blk_now_ns());
	snprintf(blk->serial, sizeof(blk->serial), "gpin-blk%u", p->index);
	ret = blk_init_queues(blk);
	if (ret) {
		err__set(err, errlen, "%s: %s", p->path, strerror(-ret));
		goto err_free;
	}
	bp.opaque = blk;
	blk->be = blk_backend__open(p->backend, &bp, err, errlen);
	if (!blk->be)
		goto err_free;
	ret = blk_start_queues(blk);
	if (ret) {
		err__set(err, errlen, "%s: starting the queues: %s", p->path,
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
	unsigned int i, j;

	if (!blk)
		return;
	/* the threads first: they call into the backend */
	for (i = 0; blk->q && i < blk->nq; i++)
		vq_service__exit(&blk->q[i].svc);
	blk_backend__close(blk->be);
	for (i = 0; blk->q && i < blk->nq; i++) {
		/* requests whose completion never came: the backend is gone */
		for (j = 0; j < VIRTIO_BLK_QUEUE_SIZE; j++)
			blk_slot_put_iov(&blk->q[i], &blk->q[i].slots[j]);
		if (blk->q[i].kick_fd >= 0)
			close(blk->q[i].kick_fd);
		pthread_mutex_destroy(&blk->q[i].lock);
		pthread_cond_destroy(&blk->q[i].idle);
	}
	free(blk->q);
	pthread_mutex_destroy(&blk->throttle_lock);
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

void virtio_blk__service(struct virtio_blk *blk, unsigned int q,
			 bool timed_out)
{
	vq_service__kick(&blk->q[q].svc,
			 VQS_THREAD | (timed_out ? VQS_TIMEOUT : 0));
}
