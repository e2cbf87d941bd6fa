// SPDX-License-Identifier: GPL-2.0-only
/*
 * Serving a queue (virtio/vq_service.h): one owner at a time, the
 * notifying vCPU or the queue's thread, runs passes.  A pass
 *   1. reaps what the backend completed and pushes it to the used ring,
 *   2. decides on one interrupt for all of it (with irq_hold=, the
 *      decision may wait: hold_signal()),
 *   3. takes the new chains (at most a queue's worth: BLK_PASS_BUDGET),
 *      prepares them and submits them all with one system call,
 *   4. decides on one interrupt for those that completed on the spot,
 *   5. settles notifications: while an interrupt is held, or while the
 *      queue itself will look at the ring (devices/blk_pace.h: requests
 *      in flight, whose completions' passes look anyway; poll=), they
 *      stay off, and a guest at depth adds chains without an exit;
 *      otherwise it asks for a notification and looks once more.
 * No lock is held across the submit: only the owner touches the rings,
 * the slots and the backend context.
 *
 * Each in-flight request owns the slot of its head descriptor.  A guest
 * that makes a head available again while it is still in flight breaks
 * the ring protocol (the driver may only reuse descriptors it got back):
 * the device is marked NEEDS_RESET rather than letting two requests share
 * a slot.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devices/virtio_blk_queue.h"
#include "log.h"

/*
 * Chains one pass takes: a guest that keeps re-offering requests that
 * complete at once (GET_ID, malformed ones) cannot keep a pass going, and
 * with it a reset or a stop waiting for the queue, for ever.
 */
#define BLK_PASS_BUDGET		VIRTIO_BLK_QUEUE_SIZE
/* The backend kept requests back (its ring was full): retry after this. */
#define BLK_RETRY_US		200

uint64_t blk_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + t.tv_nsec;
}

/* Completes a request at the used ring.  By the owner. */
static void complete_now(struct blk_queue *q, uint16_t head,
			 const struct blk_req *req, int status)
{
	struct virtq *vq = &q->blk->vdev.vqs[q->idx];

	if (status >= 0)
		*req->status = status;
	virtq__push(vq, head, status >= 0 ? virtio_blk__used_len(req, status) : 0);
	atomic_fetch_add_explicit(&q->requests, 1, memory_order_relaxed);
	if (status != VIRTIO_BLK_S_OK)
		atomic_fetch_add_explicit(&q->errors, 1, memory_order_relaxed);
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

/* Room in @slot for @n iovecs; NULL past the queue's budget.  By the owner. */
static struct iovec *slot_get_iov(struct blk_queue *q, struct blk_slot *slot,
				  unsigned int n)
{
	if (n <= VIRTIO_BLK_SLOT_IOV)
		return slot->own_iov;
	if (q->iov_borrowed + n > VIRTIO_BLK_IOV_BUDGET)
		return NULL;
	slot->iov = malloc(n * sizeof(*slot->iov));
	if (slot->iov)
		q->iov_borrowed += n;
	return slot->iov;
}

/* Gives back what slot_get_iov() lent @slot for its request.  By the owner. */
void blk_slot_put_iov(struct blk_queue *q, struct blk_slot *slot)
{
	if (slot->iov && slot->iov != slot->own_iov) {
		free(slot->iov);
		q->iov_borrowed -= slot->req.niov;
	}
	slot->iov = NULL;
}

/*
 * One validated request: prepare it on the backend, or complete it here.
 * Returns true when it went to the backend.  By the owner.
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
	slot->iov = slot_get_iov(q, slot, req->niov);
	if (!slot->iov) {
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
	if (blk->be->ops->prep(blk->be, q->idx, &slot->io)) {
		blk_slot_put_iov(q, slot);
		complete_now(q, head, req, VIRTIO_BLK_S_IOERR);
		return false;
	}
	slot->busy = true;
	slot->gen = q->gen;
	slot->start_ns = q->pass_ns;
	blk_pace__note_started(&q->pace, ++q->inflight);
	return true;
}

/*
 * irq_hold=auto: a request the backend completed, timed from the pass
 * that took it to the pass that reaped it (both passes' clock, one
 * reading each), averaged over the last eight or so.
 */
static void note_latency(struct blk_queue *q, const struct blk_slot *slot)
{
	if (slot->start_ns && q->pass_ns > slot->start_ns)
		irq_hold__note_latency(&q->hold, q->pass_ns - slot->start_ns);
}

/* A backend completion, from reap() or submit(), by the owner. */
void blk_complete(void *opaque, unsigned int qi, struct blk_io *io,
			 int64_t res)
{
	struct virtio_blk *blk = opaque;
	struct blk_slot *slot = (struct blk_slot *)((char *)io -
					offsetof(struct blk_slot, io));
	struct blk_queue *q = &blk->q[qi];
	bool stale = slot->gen != q->gen;
	int status;

	res = blk_backend__finish(blk->be, io, res, !stale);
	slot->busy = false;
	blk_slot_put_iov(q, slot);
	if (stale) {
		/*
		 * In flight across a reset that gave up on it: the ring it
		 * came from is gone, so nothing is written to guest memory.
		 */
		q->stale--;
		return;
	}
	note_latency(q, slot);
	status = res < 0 ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK;
	if (res < 0 && !q->reported_error && !blk->p.quiet) {
		q->reported_error = true;
		pr_err("blk%u-q%u: I/O error at byte %llu: "
			"%s (further errors only counted)", blk->p.index, qi,
			(unsigned long long)io->offset, strerror((int)-res));
	}
	complete_now(q, slot->head, &slot->req, status);
	if (status == VIRTIO_BLK_S_OK && io->op <= BLK_IO_WRITE)
		atomic_fetch_add_explicit(&q->bytes, io->len,
					  memory_order_relaxed);
	q->inflight--;
}

/* The guest's avail index: the chains taken and those still waiting. */
static uint16_t guest_avail(const struct virtq *vq)
{
	return vq->last_avail + virtq__pending(vq);
}

/*
 * irq_hold= (devices/irq_hold.h): whether the interrupt for what was
 * pushed waits.  If so the thread's timer looks again (an absolute time:
 * the thread may be woken for other reasons meanwhile and recompute its
 * sleep); a vCPU leaves now and wakes the thread unless it already
 * sleeps less than that.
 */
static bool hold_signal(struct blk_queue *q, const struct virtq *vq,
			unsigned int flags)
{
	uint64_t until, old;
	bool began;

	/* irq_hold=0: not even the clock (irq_hold__wait() says no alike) */
	if (!irq_hold__enabled(&q->hold))
		return false;
	if (!irq_hold__wait(&q->hold, blk_now_ns(), guest_avail(vq), vq->used_idx,
			    q->inflight, &until, &began))
		return false;
	if (began)
		atomic_fetch_add_explicit(&q->holds, 1, memory_order_relaxed);
	old = atomic_exchange(&q->hold_until_ns, until);
	if (!old || until < old)
		vq_service__timer_changed(&q->svc, flags);
	return true;
}

/* The interrupt goes out: a hold at qd1 backs off (irq_hold__end()). */
static void end_hold(struct blk_queue *q, const struct virtq *vq)
{
	if (!irq_hold__held(&q->hold))
		return;
	irq_hold__end(&q->hold, (uint16_t)(vq->used_idx - vq->decided_used),
		      q->inflight);
	atomic_store(&q->hold_until_ns, 0);
}

/* One interrupt decision for everything pushed since the last one. */
static void signal_used(struct blk_queue *q, unsigned int flags)
{
	struct virtio_dev *vdev = &q->blk->vdev;
	struct virtq *vq = &vdev->vqs[q->idx];

	/* a queue the guest broke this pass says what it has at once */
	if (!q->need_irq || (q->active && hold_signal(q, vq, flags)))
		return;
	q->need_irq = false;
	end_hold(q, vq);
	if (!virtq__needs_interrupt(vq))
		return;
	atomic_fetch_add_explicit(&q->interrupts, 1, memory_order_relaxed);
	virtio_dev__signal_used(vdev, q->idx);
}

static void submit(struct blk_queue *q, unsigned int flags)
{
	struct blk_backend *be = q->blk->be;
	bool retry = be->ops->submit(be, q->idx) == -EAGAIN;

	atomic_store(&q->retry, retry);
	/* the thread's timer retries */
	if (retry)
		vq_service__timer_changed(&q->svc, flags);
}

/*
 * The guest broke the ring: nothing more is taken from it until a reset.
 * The transport's needs_reset takes no lock a pass could deadlock on.
 * Said once per break (the queue takes nothing more until a reset): a
 * correct driver never does this, so the line marks the moment a guest
 * went wrong (or the device misread it).
 */
static void break_queue(struct blk_queue *q, const struct virtq *vq, int err,
			uint16_t head)
{
	const char *why = err ? virtq__pop_error(err) :
				"head offered while in flight";

	q->active = false;
	if (!q->blk->p.quiet)
		pr_warn("blk%u-q%u: the guest broke the ring (%s; head %u, "
			"%u chains taken): the device needs a reset",
			q->blk->p.index, q->idx, why, head, vq->last_avail);
	virtio_dev__needs_reset(&q->blk->vdev);
}

/* Whether a request would go to the backend (and so counts in a limit). */
static bool for_backend(int status, const struct blk_req *req)
{
	if (status != VIRTIO_BLK_S_OK || req->type == VIRTIO_BLK_T_GET_ID)
		return false;
	return req->len || (req->type != VIRTIO_BLK_T_IN &&
			    req->type != VIRTIO_BLK_T_OUT);
}

/*
 * The disk's rate limits: whether @req may start now.  If not, the queue
 * looks again when the bucket has refilled (throttle_us, the thread's
 * timer), notifications off meanwhile: the guest's notifications could
 * not make it go any sooner.
 */
static bool admit(struct blk_queue *q, int status, const struct blk_req *req)
{
	struct virtio_blk *blk = q->blk;
	uint64_t wait_ns = 0, bytes = 0;
	bool ok;

	if (!blk_throttle__enabled(&blk->throttle) || !for_backend(status, req))
		return true;
	if (req->type == VIRTIO_BLK_T_IN || req->type == VIRTIO_BLK_T_OUT)
		bytes = req->len;
	pthread_mutex_lock(&blk->throttle_lock);
	ok = blk_throttle__admit(&blk->throttle, bytes, blk_now_ns(), &wait_ns);
	pthread_mutex_unlock(&blk->throttle_lock);
	if (!ok)
		atomic_store(&q->throttle_us, (long)(wait_ns / 1000) + 1);
	return ok;
}

/*
 * Takes up to BLK_PASS_BUDGET new chains; *@prepared tells whether any
 * went to the backend, *@taken how many were taken.  Returns true when
 * chains are left.
 */
static bool take_chains(struct blk_queue *q, struct virtq *vq,
			bool *prepared, unsigned int *taken)
{
	struct virtio_blk *blk = q->blk;

	for (*taken = 0; *taken < BLK_PASS_BUDGET; (*taken)++) {
		struct virtq_chain chain = { .bufs = q->bufs };
		struct blk_req req;
		int ret, status;

		ret = virtq__pop(vq, &chain);
		if (ret == 0)
			return false;
		/* We are looking: the guest need not tell us more. */
		if (!*taken)
			virtq__disable_notify(vq);
		if (ret < 0 || q->slots[chain.head].busy) {
			break_queue(q, vq, ret < 0 ? ret : 0, chain.head);
			return false;
		}
		status = virtio_blk__parse(&chain, &blk->lim, q->iov, &req);
		if (!admit(q, status, &req)) {
			virtq__unpop(vq);	/* it waits in the ring */
			return false;
		}
		if (start_request(q, chain.head, status, &req))
			*prepared = true;
	}
	return virtq__pending(vq) != 0;
}

/*
 * The ring was found empty: who looks at it next (devices/blk_pace.h).
 * The queue's own looks keep notifications off; otherwise the driver is
 * asked to notify again, and the ring looked at once more: a chain
 * published before the driver could see that came without one.  Returns
 * true when that look found a chain.
 */
static bool settle_notifications(struct blk_queue *q, struct virtq *vq,
				 unsigned int flags, unsigned int taken)
{
	const struct blk_pace_pass pass = {
		.inflight = q->inflight,
		.taken = taken,
		.thread = flags & VQS_THREAD,
		.timed_out = flags & VQS_TIMEOUT,
	};
	long us;

	if (atomic_load(&q->throttle_us)) {
		/* held back by a rate limit: the thread's timer comes back */
		virtq__disable_notify(vq);
		vq_service__timer_changed(&q->svc, flags);
		return false;
	}
	if (irq_hold__held(&q->hold)) {
		/* irq_hold=: the hold's timer looks; the guest adds freely */
		virtq__disable_notify(vq);
		return false;
	}
	switch (blk_pace__settle(&q->pace, &pass, &us)) {
	case BLK_PACE_QUIET:
		/* the completions to come look, or the quiet timer */
		virtq__disable_notify(vq);
		if (!atomic_exchange(&q->quiet_us, us))
			vq_service__timer_changed(&q->svc, flags);
		return false;
	case BLK_PACE_POLL:
		/* poll=: the thread looks again soon, instead of an exit */
		virtq__disable_notify(vq);
		atomic_store(&q->quiet_us, us);
		vq_service__timer_changed(&q->svc, flags);
		return false;
	case BLK_PACE_NOTIFY:
		break;
	}
	atomic_store(&q->quiet_us, 0);
	virtq__enable_notify(vq);
	return virtq__pending(vq) != 0;
}

/* A reset waits for this: the queue stopped and nothing is in flight. */
static void note_drained(struct blk_queue *q)
{
	if (q->inflight)
		return;
	pthread_mutex_lock(&q->lock);
	q->drained = true;
	pthread_cond_broadcast(&q->idle);
	pthread_mutex_unlock(&q->lock);
}

/* One pass over queue @qi (see the top of the file); by the owner. */
static bool blk_pass(void *opaque, unsigned int qi, unsigned int flags)
{
	struct virtio_blk *blk = opaque;
	struct blk_queue *q = &blk->q[qi];
	struct virtq *vq;
	bool prepared = false, more;
	unsigned int taken = 0;

	if (irq_hold__auto(&q->hold))
		q->pass_ns = blk_now_ns();
	if (blk->be->ops->reap(blk->be, qi))
		blk_pace__note_completions(&q->pace, blk_now_ns());
	/*
	 * What the backend kept back goes out on a stopped queue too (the
	 * guest broke it, or a reset waits for it to drain): left prepared
	 * it would never complete, and would hold its slot and its bounce
	 * buffer for ever.
	 */
	if (atomic_load(&q->retry))
		submit(q, flags);
	if (!q->active) {
		/*
		 * Nothing to look at until a reset (the guest broke the
		 * ring, or a reset stops the queue): the thread wakes for
		 * completions only, not on a timer a pass set before.
		 */
		atomic_store(&q->quiet_us, 0);
		atomic_store(&q->throttle_us, 0);
		atomic_store(&q->hold_until_ns, 0);
		note_drained(q);
		return false;
	}
	/*
	 * Only an active queue has rings: once the transport is gone (the
	 * VMM's exit, completions of requests a reset gave up on) there is
	 * not even the array of them.
	 */
	vq = &blk->vdev.vqs[qi];
	signal_used(q, flags);
	atomic_store(&q->throttle_us, 0);
	more = take_chains(q, vq, &prepared, &taken);
	if (taken && irq_hold__enabled(&q->hold))
		irq_hold__note_chains(&q->hold, taken, blk_now_ns());
	if (prepared)
		submit(q, flags);
	signal_used(q, flags);
	if (!q->active)
		return false;
	if (more)
		return true;
	return settle_notifications(q, vq, flags, taken);
}

/* irq_hold=: microseconds to the hold's timer (at least 1), or 0. */
static long hold_timer_us(struct blk_queue *q)
{
	uint64_t until = atomic_load(&q->hold_until_ns), now;

	if (!until)
		return 0;
	now = blk_now_ns();
	return until > now ? (long)((until - now + 999) / 1000) : 1;
}

static long blk_sleep_us(void *opaque, unsigned int qi)
{
	struct blk_queue *q = &((struct virtio_blk *)opaque)->q[qi];
	long us;

	us = blk_pace__sooner_us(atomic_load(&q->quiet_us), atomic_load(&q->throttle_us));
	us = blk_pace__sooner_us(us, hold_timer_us(q));
	if (atomic_load(&q->retry))
		us = blk_pace__sooner_us(BLK_RETRY_US, us);
	return us > 0 ? us : -1;
}

const struct vq_service_ops blk_service_ops = {
	.pass = blk_pass,
	.sleep_us = blk_sleep_us,
};
