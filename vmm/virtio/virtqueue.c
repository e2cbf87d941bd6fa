// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory ordering: the guest writes a ring entry and then the index that
 * publishes it, so we read the index with acquire and the entries after;
 * we publish used entries the same way with a release store of used->idx.
 * Suppression is different: deciding on an interrupt or a notification is
 * a store followed by a load of what the other side stored (used->idx
 * then flags or used_event, avail_event then avail->idx, and the mirror
 * image in the driver), and only a full fence orders that, on x86 too.
 *
 * Every descriptor is copied out once before it is checked: the guest can
 * rewrite the table at any moment, and a value checked in guest memory
 * and then read again there would be a different value.
 */
#include <errno.h>
#include <string.h>

#include "virtqueue.h"

uint64_t virtq__desc_bytes(uint16_t size)
{
	return 16ULL * size;
}

/* flags, idx, ring[size], used_event */
uint64_t virtq__avail_bytes(uint16_t size)
{
	return 6ULL + 2ULL * size;
}

/* flags, idx, ring[size] of {id, len}, avail_event */
uint64_t virtq__used_bytes(uint16_t size)
{
	return 6ULL + 8ULL * size;
}

/*
 * The ring as <linux/virtio_ring.h> describes it, so that the event
 * fields are found by its vring_used_event()/vring_avail_event().
 */
static struct vring vring_of(const struct virtq *vq)
{
	return (struct vring) {
		.num = vq->size,
		.desc = vq->desc,
		.avail = vq->avail,
		.used = vq->used,
	};
}

static void *map(const struct virtq_mem *mem, uint64_t gpa, uint64_t len,
		 uint64_t align)
{
	if (gpa & (align - 1))
		return NULL;
	return mem->translate(mem->opaque, gpa, len);
}

int virtq__init(struct virtq *vq, const struct virtq_mem *mem, uint16_t size,
		uint64_t desc_gpa, uint64_t avail_gpa, uint64_t used_gpa)
{
	struct virtq q = { .size = size, .mem = *mem };

	if (!size || size > VIRTQ_MAX_SIZE || (size & (size - 1)))
		return -EINVAL;
	q.desc = map(mem, desc_gpa, virtq__desc_bytes(size), 16);
	q.avail = map(mem, avail_gpa, virtq__avail_bytes(size), 2);
	q.used = map(mem, used_gpa, virtq__used_bytes(size), 4);
	if (!q.desc || !q.avail || !q.used)
		return -EINVAL;
	/*
	 * Both indexes start at 0 after a reset (section 2.7.4), so 0 is
	 * also exactly where the first interrupt decision starts from.
	 */
	*vq = q;
	return 0;
}

void virtq__set_event_idx(struct virtq *vq, bool on)
{
	vq->event_idx = on;
	if (on)
		virtq__enable_notify(vq);
}

void virtq__enable_notify(struct virtq *vq)
{
	struct vring vr = vring_of(vq);

	if (vq->event_idx) {
		__atomic_store_n(&vring_avail_event(&vr), vq->last_avail,
				 __ATOMIC_RELAXED);
	} else if (vq->no_notify) {
		vq->no_notify = false;
		__atomic_store_n(&vq->used->flags, 0, __ATOMIC_RELAXED);
	}
	/*
	 * The driver publishes avail->idx and then reads avail_event (or
	 * the flags); we publish ours and then (the caller) re-read
	 * avail->idx.  The fence makes one side see the other's store:
	 * either the driver notifies or our re-check finds the chain.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void virtq__disable_notify(struct virtq *vq)
{
	struct vring vr = vring_of(vq);

	/*
	 * With EVENT_IDX, avail_event just behind the next entry: the driver
	 * notifies only when it publishes past an avail_event it has not
	 * passed yet.  Without it, the flag says so; a driver may still
	 * notify (the flag is only advice), which costs it an exit and us
	 * nothing.  No fence: a driver that sees the old value notifies
	 * once more.
	 */
	if (vq->event_idx) {
		__atomic_store_n(&vring_avail_event(&vr),
				 (uint16_t)(vq->last_avail - 1), __ATOMIC_RELAXED);
	} else if (!vq->no_notify) {
		vq->no_notify = true;
		__atomic_store_n(&vq->used->flags, VRING_USED_F_NO_NOTIFY,
				 __ATOMIC_RELAXED);
	}
}

uint16_t virtq__pending(const struct virtq *vq)
{
	uint16_t avail = __atomic_load_n(&vq->avail->idx, __ATOMIC_ACQUIRE);

	return (uint16_t)(avail - vq->last_avail);
}

/*
 * The walk.  A chain is bounded by the queue size: a chain that visits
 * more descriptors than the table holds must visit one twice, so the cap
 * is also the loop detector, and it costs nothing per descriptor.
 */
static int virtq_walk(struct virtq *vq, uint16_t head, struct virtq_chain *c)
{
	uint16_t idx = head;
	bool seen_writable = false;

	for (;;) {
		struct vring_desc d;
		struct virtq_buf *b;
		void *p;

		if (c->nbufs == vq->size)
			return -ELOOP;
		memcpy(&d, &vq->desc[idx], sizeof(d));
		if (d.flags & VRING_DESC_F_INDIRECT)
			return -EINVAL;
		if (d.flags & VRING_DESC_F_WRITE)
			seen_writable = true;
		else if (seen_writable)
			return -EINVAL;
		p = vq->mem.translate(vq->mem.opaque, d.addr, d.len);
		if (!p)
			return -EFAULT;
		b = &c->bufs[c->nbufs++];
		b->addr = p;
		b->len = d.len;
		b->writable = seen_writable;
		if (seen_writable) {
			c->writable_len += d.len;
		} else {
			c->readable_len += d.len;
			c->nreadable++;
		}
		if (!(d.flags & VRING_DESC_F_NEXT))
			return 0;
		if (d.next >= vq->size)
			return -ERANGE;
		idx = d.next;
	}
}

int virtq__pop(struct virtq *vq, struct virtq_chain *chain)
{
	uint16_t pending = virtq__pending(vq);
	uint16_t head;

	chain->head = 0;
	chain->nbufs = chain->nreadable = 0;
	chain->readable_len = chain->writable_len = 0;
	if (!pending)
		return 0;
	if (pending > vq->size)
		return -EPROTO;
	head = __atomic_load_n(&vq->avail->ring[vq->last_avail & (vq->size - 1)],
			       __ATOMIC_RELAXED);
	if (head >= vq->size)
		return -ERANGE;
	vq->last_avail++;
	chain->head = head;
	return virtq_walk(vq, head, chain) ?: 1;
}

const char *virtq__pop_error(int err)
{
	switch (err) {
	case -EPROTO:
		return "available index more than a queue ahead";
	case -ERANGE:
		return "descriptor index out of range";
	case -ELOOP:
		return "chain longer than the queue";
	case -EFAULT:
		return "buffer outside guest RAM";
	case -EINVAL:
		return "indirect, or readable after writable";
	default:
		return "broken ring";
	}
}

void virtq__unpop(struct virtq *vq)
{
	vq->last_avail--;
}

void virtq__push(struct virtq *vq, uint16_t head, uint32_t len)
{
	struct vring_used_elem *e = &vq->used->ring[vq->used_idx & (vq->size - 1)];

	e->id = head;
	e->len = len;
	vq->used_idx++;
	__atomic_store_n(&vq->used->idx, vq->used_idx, __ATOMIC_RELEASE);
}

bool virtq__needs_interrupt(struct virtq *vq)
{
	struct vring vr = vring_of(vq);
	uint16_t old = vq->decided_used;

	/*
	 * The pushes since the last decision are this decision's: with
	 * EVENT_IDX a batch that stepped over used_event interrupts even if
	 * it does not end on it, and a "no" here is not asked again.
	 */
	vq->decided_used = vq->used_idx;
	/*
	 * The used index store must be visible before we look at the flag
	 * or used_event: the driver clears NO_INTERRUPT or moves used_event
	 * and then re-reads used->idx, so one of the two sides sees the
	 * other's write.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (vq->event_idx) {
		/* NO_INTERRUPT is to be ignored then (section 2.7.10). */
		uint16_t event = __atomic_load_n(&vring_used_event(&vr),
						 __ATOMIC_RELAXED);

		return vring_need_event(event, vq->used_idx, old);
	}
	return !(__atomic_load_n(&vq->avail->flags, __ATOMIC_RELAXED) &
		 VRING_AVAIL_F_NO_INTERRUPT);
}

bool virtq__snapshot(const struct virtq *vq, struct virtq_snapshot *s)
{
	struct vring_avail *avail = __atomic_load_n(&vq->avail,
						    __ATOMIC_ACQUIRE);
	struct vring_used *used = __atomic_load_n(&vq->used, __ATOMIC_ACQUIRE);
	uint16_t size = __atomic_load_n(&vq->size, __ATOMIC_RELAXED);

	/* a reset may be clearing the queue under us: nothing to show */
	if (!avail || !used || !size)
		return false;
	s->avail = __atomic_load_n(&avail->idx, __ATOMIC_RELAXED);
	s->taken = __atomic_load_n(&vq->last_avail, __ATOMIC_RELAXED);
	s->used = __atomic_load_n(&vq->used_idx, __ATOMIC_RELAXED);
	s->decided = __atomic_load_n(&vq->decided_used, __ATOMIC_RELAXED);
	/* vring_avail_event() / vring_used_event(): past the other ring */
	s->avail_event = __atomic_load_n((uint16_t *)&used->ring[size],
					 __ATOMIC_RELAXED);
	s->used_event = __atomic_load_n(&avail->ring[size], __ATOMIC_RELAXED);
	s->event_idx = __atomic_load_n(&vq->event_idx, __ATOMIC_RELAXED);
	s->no_notify = __atomic_load_n(&used->flags, __ATOMIC_RELAXED) &
		       VRING_USED_F_NO_NOTIFY;
	s->no_interrupt = __atomic_load_n(&avail->flags, __ATOMIC_RELAXED) &
			  VRING_AVAIL_F_NO_INTERRUPT;
	return true;
}
