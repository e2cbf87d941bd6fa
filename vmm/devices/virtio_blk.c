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
 *   5. settles notifications: while requests are in flight (on a vCPU:
 *      two or more) or an interrupt is held, they stay off, because the
 *      next completion's pass or the hold's timer looks at the ring anyway
 *      (a guest at depth then adds chains without an exit, and the queue's
 *      thread serves them); when the queue is idle, or when completions
 *      stopped coming for a while (the thread's quiet timer), it asks for
 *      a notification and looks once more.
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
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <linux/virtio_ids.h>

#include "devices/blk_throttle.h"
#include "devices/irq_hold.h"
#include "devices/virtio_blk.h"
#include "devices/virtio_blk_req.h"
#include "log.h"
#include "virtio/vq_service.h"

/* Discard / write-zeroes limits per request, in 512-byte sectors (2 GiB). */
#define BLK_MAX_RANGE_SECTORS	(1u << 22)

/*
 * Chains one pass takes: a guest that keeps re-offering requests that
 * complete at once (GET_ID, malformed ones) cannot keep a pass going, and
 * with it a reset or a stop waiting for the queue, for ever.
 */
#define BLK_PASS_BUDGET		VIRTIO_BLK_QUEUE_SIZE
/*
 * How long a reset waits for the backend to finish requests in flight,
 * all queues together (the whole-device fuzz target builds with 0: every
 * reset with I/O out takes the stale path at once).
 */
#ifndef BLK_RESET_WAIT_MS
#define BLK_RESET_WAIT_MS	5000
#endif
/*
 * The quiet timer: with notifications off and requests in flight, the
 * thread looks at the ring again after four times the usual gap between
 * completions, within these bounds - a request that arrives behind a
 * slow one (a flush) waits for at most that long, not for the slow one.
 */
#define BLK_QUIET_MIN_US	100
#define BLK_QUIET_MAX_US	20000
/* In flight after a vCPU's pass for it to leave notifications off. */
#define BLK_DEPTH_MIN		2
/* poll=: timer passes finding nothing before the driver notifies again */
#define BLK_POLL_TRIES		3
/* The backend kept requests back (its ring was full): retry after this. */
#define BLK_RETRY_US		200

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
	int kick_fd;			/* io=iothread: the ioeventfd, or -1 */

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
	uint64_t last_done_ns;		/* the last pass that completed some */
	uint64_t gap_ns;		/* between such passes, averaged */
	unsigned int empty_polls;	/* poll=: timer passes that found none */
	unsigned int peak_inflight;	/* most in flight since notifications on */
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

static struct virtio_blk *to_blk(struct virtio_dev *vdev)
{
	return vdev->priv;
}

static uint64_t now_ns(void)
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
static void slot_put_iov(struct blk_queue *q, struct blk_slot *slot)
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
		slot_put_iov(q, slot);
		complete_now(q, head, req, VIRTIO_BLK_S_IOERR);
		return false;
	}
	slot->busy = true;
	slot->gen = q->gen;
	slot->start_ns = q->pass_ns;
	if (++q->inflight > q->peak_inflight)
		q->peak_inflight = q->inflight;
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
static void blk_complete(void *opaque, unsigned int qi, struct blk_io *io,
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
	slot_put_iov(q, slot);
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

/* The sooner of two timers, each 0 (or less) when not set. */
static long sooner_us(long a, long b)
{
	if (a <= 0)
		return b;
	return b > 0 && b < a ? b : a;
}

/* After a pass completed requests: how far apart such passes are. */
static void note_completions(struct blk_queue *q)
{
	uint64_t now = now_ns(), gap;

	if (q->last_done_ns) {
		gap = now - q->last_done_ns;
		if (gap > BLK_QUIET_MAX_US * 1000ULL)
			gap = BLK_QUIET_MAX_US * 1000ULL;
		q->gap_ns = q->gap_ns ? (7 * q->gap_ns + gap) / 8 : gap;
	}
	q->last_done_ns = now;
}

static long quiet_us(const struct blk_queue *q)
{
	long us = (long)(4 * q->gap_ns / 1000);

	if (us < BLK_QUIET_MIN_US)
		return BLK_QUIET_MIN_US;
	return us > BLK_QUIET_MAX_US ? BLK_QUIET_MAX_US : us;
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
	if (!irq_hold__wait(&q->hold, now_ns(), guest_avail(vq), vq->used_idx,
			    q->inflight, &until, &began))
		return false;
	if (began)
		atomic_fetch_add_explicit(&q->holds, 1, memory_order_relaxed);
	old = atomic_exchange(&q->hold_until_ns, until);
	if ((!old || until < old) && !(flags & VQS_THREAD))
		vq_service__wake(&q->svc);
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
	/* the thread's timer retries; a vCPU leaves now */
	if (retry && !(flags & VQS_THREAD))
		vq_service__wake(&q->svc);
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
	ok = blk_throttle__admit(&blk->throttle, bytes, now_ns(), &wait_ns);
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
 * poll= (off by default): whether the queue was busy lately, so that the
 * guest's next chain is better found by the thread's timer than
 * announced by a notification - an exit, the costliest step of a request
 * when the host completes in microseconds and the queue runs empty
 * between two of the guest's submissions.  A pass that took chains makes
 * the queue hot; BLK_POLL_TRIES timer passes that find nothing cool it.
 */
static bool still_hot(struct blk_queue *q, unsigned int flags,
		      unsigned int taken)
{
	/*
	 * A guest that keeps one request out at a time (qd1) sends the
	 * next only when it has seen the last complete: a timer can only
	 * be later than its notification, so only a queue that had two or
	 * more in flight since it last asked for one counts as busy.
	 */
	if (!q->blk->p.poll_us || q->peak_inflight < 2)
		return false;
	if (taken)
		q->empty_polls = 0;
	else if (flags & VQS_TIMEOUT)
		q->empty_polls++;
	if (q->empty_polls < BLK_POLL_TRIES)
		return true;
	q->empty_polls = 0;
	return false;
}

/*
 * Whether the ring, found empty, is left to the passes of the completions
 * to come, notifications off.  The queue's thread does so whenever
 * requests are in flight; a vCPU only when at least BLK_DEPTH_MIN are:
 * a guest at depth then adds its next chains without an exit, while one
 * that keeps a single request out (qd1) is served by its notifying vCPU
 * as soon as it asks, the path with the lowest latency.  The quiet timer
 * ran out: the completions are slow, a guest must not wait for them.
 */
static bool at_depth(const struct blk_queue *q, unsigned int flags)
{
	if (!q->inflight || (flags & VQS_TIMEOUT))
		return false;
	return (flags & VQS_THREAD) || q->inflight >= BLK_DEPTH_MIN;
}

/*
 * The ring was found empty.  At depth (above) notifications stay off: the
 * pass of the next completion looks at the ring anyway, and until then
 * the quiet timer does.  Otherwise the driver is asked to notify again,
 * and the ring looked at once more: a chain published before the driver
 * could see that came without one.  Returns true when that look found a
 * chain.
 */
static bool settle_notifications(struct blk_queue *q, struct virtq *vq,
				 unsigned int flags, unsigned int taken)
{
	if (atomic_load(&q->throttle_us)) {
		/* held back by a rate limit: the thread's timer comes back */
		virtq__disable_notify(vq);
		if (!(flags & VQS_THREAD))
			vq_service__wake(&q->svc);
		return false;
	}
	if (irq_hold__held(&q->hold)) {
		/* irq_hold=: the hold's timer looks; the guest adds freely */
		virtq__disable_notify(vq);
		return false;
	}
	if (at_depth(q, flags)) {
		long us = sooner_us(quiet_us(q), q->blk->p.poll_us);

		virtq__disable_notify(vq);
		/* a vCPU leaves now: the thread arms the timer it set */
		if (!atomic_exchange(&q->quiet_us, us) && !(flags & VQS_THREAD))
			vq_service__wake(&q->svc);
		return false;
	}
	if (still_hot(q, flags, taken)) {
		/* poll=: the thread looks again soon, instead of an exit */
		virtq__disable_notify(vq);
		atomic_store(&q->quiet_us, q->blk->p.poll_us);
		if (!(flags & VQS_THREAD))
			vq_service__wake(&q->svc);
		return false;
	}
	atomic_store(&q->quiet_us, 0);
	q->peak_inflight = q->inflight;
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
		q->pass_ns = now_ns();
	if (blk->be->ops->reap(blk->be, qi))
		note_completions(q);
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
		irq_hold__note_chains(&q->hold, taken, now_ns());
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
	now = now_ns();
	return until > now ? (long)((until - now + 999) / 1000) : 1;
}

static long blk_sleep_us(void *opaque, unsigned int qi)
{
	struct blk_queue *q = &((struct virtio_blk *)opaque)->q[qi];
	long us;

	us = sooner_us(atomic_load(&q->quiet_us), atomic_load(&q->throttle_us));
	us = sooner_us(us, hold_timer_us(q));
	if (atomic_load(&q->retry))
		us = sooner_us(BLK_RETRY_US, us);
	return us > 0 ? us : -1;
}

static const struct vq_service_ops blk_service_ops = {
	.pass = blk_pass,
	.sleep_us = blk_sleep_us,
};

/* io=vcpu: the notifying vCPU serves the queue, unless someone does. */
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
 * io=iothread, on the queue's ioeventfd; the fuzz target runs none.
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
		"queue%s, pin=%s, io=%s%s%s%s", p->index, p->path,
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
			   VIRTIO_BLK_SEG_MAX * VIRTIO_BLK_SIZE_MAX, now_ns());
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
			slot_put_iov(&blk->q[i], &blk->q[i].slots[j]);
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

void virtio_blk__stats(const struct virtio_blk *blk, unsigned int qi,
		       struct virtio_blk_queue_stats *st)
{
	struct blk_queue *q = &blk->q[qi];

	st->requests = atomic_load_explicit(&q->requests, memory_order_relaxed);
	st->bytes = atomic_load_explicit(&q->bytes, memory_order_relaxed);
	st->errors = atomic_load_explicit(&q->errors, memory_order_relaxed);
	st->interrupts = atomic_load_explicit(&q->interrupts,
					      memory_order_relaxed);
	st->holds = atomic_load_explicit(&q->holds, memory_order_relaxed);
}

/*
 * The backend's counters on one line: "gpin-vmm: blk0-gpin: name N, ...",
 * formatted first and written whole, so that a reader of stderr (SIGUSR1
 * while the VM runs) never sees half a line.
 */
struct counter_line {
	char buf[256];
	size_t len;
};

static void print_counter(void *opaque, const char *dev, const char *name,
			  uint64_t value)
{
	struct counter_line *l = opaque;
	size_t room = sizeof(l->buf) - l->len;
	int n;

	if (!l->len)
		n = snprintf(l->buf, room, "gpin-vmm: %s: %s %llu", dev, name,
			     (unsigned long long)value);
	else
		n = snprintf(l->buf + l->len, room, ", %s %llu", name,
			     (unsigned long long)value);
	if (n > 0)
		l->len += (size_t)n < room ? (size_t)n : room - 1;
}

static void print_backend_counters(const struct virtio_blk *blk, FILE *out)
{
	struct counter_line l = { .len = 0 };

	if (!blk->be->ops->counters)
		return;
	blk->be->ops->counters(blk->be, print_counter, &l);
	if (l.len)
		fprintf(out, "%s\n", l.buf);
}

void virtio_blk__print_stats(const struct virtio_blk *blk, FILE *out)
{
	unsigned int i;

	for (i = 0; i < blk->nq; i++) {
		struct virtio_blk_queue_stats st;

		virtio_blk__stats(blk, i, &st);
		fprintf(out, "gpin-vmm: blk%u-q%u: %llu requests, %llu bytes, "
			"%llu errors", blk->p.index, i,
			(unsigned long long)st.requests,
			(unsigned long long)st.bytes,
			(unsigned long long)st.errors);
		/* whether the holds pay: interrupts per request */
		if (blk->p.irq_hold_us)
			fprintf(out, ", %llu interrupts, %llu holds",
				(unsigned long long)st.interrupts,
				(unsigned long long)st.holds);
		fputc('\n', out);
	}
	print_backend_counters(blk, out);
}

/*
 * Where queue @q's ring and service stand, for a person (or the rig's
 * hang verdict) looking at a guest that stopped making progress: chains
 * made available and not taken with notifications on is a lost
 * notification; used entries past used_event and never decided on, a
 * lost interrupt; requests in flight for seconds, a backend that lost a
 * completion.  Read without holding the queue (its owner may be the one
 * stuck), so one line can be a pass out of date.
 */
static void print_ring(const struct virtio_blk *blk, const struct blk_queue *q,
		       FILE *out)
{
	const struct virtq *vq = &blk->vdev.vqs[q->idx];
	struct virtq_snapshot s;

	if (!virtq__snapshot(vq, &s))
		return;
	fprintf(out, "gpin-vmm: blk%u-q%u-ring: avail %u, taken %u, used %u, "
		"decided %u, %s %u, used_event %u%s, inflight %u, run %#x, "
		"quiet_us %ld, retry %d\n", blk->p.index, q->idx, s.avail,
		s.taken, s.used, s.decided,
		s.event_idx ? "avail_event" : "no_notify",
		s.event_idx ? s.avail_event : s.no_notify, s.used_event,
		s.no_interrupt ? ", no_interrupt" : "",
		__atomic_load_n(&q->inflight, __ATOMIC_RELAXED),
		(unsigned int)atomic_load(&q->svc.run),
		atomic_load(&q->quiet_us), (int)atomic_load(&q->retry));
}

void virtio_blk__print_rings(const struct virtio_blk *blk, FILE *out)
{
	unsigned int i;

	for (i = 0; i < blk->nq; i++)
		if (__atomic_load_n(&blk->q[i].active, __ATOMIC_RELAXED))
			print_ring(blk, &blk->q[i], out);
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
		if (blk->p.irq_hold_us) {
			fn(opaque, dev, "interrupts", st.interrupts);
			fn(opaque, dev, "holds", st.holds);
		}
	}
	if (blk->be->ops->counters)
		blk->be->ops->counters(blk->be, fn, opaque);
}
