// SPDX-License-Identifier: GPL-2.0-only
/*
 * A virtio-blk device's counters, and what it prints about itself: at
 * exit and on SIGUSR1 (print_stats), when a guest seems stuck
 * (print_rings), and for the API's counter listing.
 */
#include <stdatomic.h>
#include <stdio.h>

#include "devices/virtio_blk_queue.h"

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
