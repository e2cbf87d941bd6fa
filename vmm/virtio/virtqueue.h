/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Split virtqueue accessor (virtio 1.x, section 2.7): the one place where
 * the guest's rings are read.  Everything the guest controls - ring
 * addresses, the available index, head and next indexes, descriptor
 * addresses and lengths, chain length - is checked here, so a device sees
 * only chains of host pointers that lie inside guest RAM.
 *
 * Guest addresses are turned into host pointers by a translate callback
 * (vm_guest__hva() in the VMM, a plain buffer in the tests and the fuzz
 * target): this file needs neither KVM nor a VM.
 *
 * Not thread-safe: a queue is used by one thread at a time (its owner,
 * virtio/vq_service.h).
 *
 * Notification and interrupt suppression (section 2.7.7, 2.7.10): without
 * VIRTIO_RING_F_EVENT_IDX the flags are all there is: the driver's
 * NO_INTERRUPT, and our NO_NOTIFY while we do not need notifications.
 * With it, the driver names the used index it wants an interrupt for
 * (used_event) and we name the available index we want a notification
 * for (avail_event): one interrupt per batch of completions the driver
 * has not seen yet, and no notifications while the device will look at
 * the ring anyway.  used_event decides nothing but whether to signal, so
 * a wrong one costs that guest missing or extra interrupts, never the VMM
 * anything.
 */
#ifndef GPIN_VIRTQUEUE_H
#define GPIN_VIRTQUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/virtio_ring.h>

/* Largest queue the transport offers; the split ring allows 32768. */
#define VIRTQ_MAX_SIZE		1024

/* Host pointer for [gpa, gpa + len) if it is all guest RAM, else NULL. */
typedef void *(*virtq_translate_fn)(void *opaque, uint64_t gpa, uint64_t len);

struct virtq_mem {
	virtq_translate_fn translate;
	void *opaque;
};

/* One descriptor of a chain, already translated and checked. */
struct virtq_buf {
	void *addr;
	uint32_t len;
	bool writable;		/* device-writable (VRING_DESC_F_WRITE) */
};

/*
 * A descriptor chain.  The caller provides @bufs with room for the queue
 * size; a chain is never longer.  Readable buffers come first: the walk
 * rejects a readable descriptor after a writable one, as the specification
 * requires of the driver, so devices may rely on the order.
 */
struct virtq_chain {
	uint16_t head;
	unsigned int nbufs;
	unsigned int nreadable;		/* bufs[0..nreadable) */
	uint64_t readable_len;
	uint64_t writable_len;
	struct virtq_buf *bufs;
};

struct virtq {
	uint16_t size;			/* power of two, <= VIRTQ_MAX_SIZE */
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint16_t last_avail;		/* next avail entry to take */
	uint16_t used_idx;		/* our copy of used->idx */
	/*
	 * used_idx when virtq__needs_interrupt() last ran, interrupt or not:
	 * the pushes since then are the ones its next answer is about.
	 */
	uint16_t decided_used;
	bool event_idx;			/* VIRTIO_RING_F_EVENT_IDX negotiated */
	bool no_notify;			/* we set VRING_USED_F_NO_NOTIFY */
	struct virtq_mem mem;
};

/* Bytes of each ring part for @size entries (event fields included). */
uint64_t virtq__desc_bytes(uint16_t size);
uint64_t virtq__avail_bytes(uint16_t size);
uint64_t virtq__used_bytes(uint16_t size);

/*
 * Checks and maps a queue the driver configured: @size a power of two
 * from 1 to VIRTQ_MAX_SIZE, each part aligned as the specification says
 * (16, 2, 4) and wholly inside guest RAM.  0 or -EINVAL; on success
 * both ring indexes start at 0 and EVENT_IDX is off.
 */
int virtq__init(struct virtq *vq, const struct virtq_mem *mem, uint16_t size,
		uint64_t desc_gpa, uint64_t avail_gpa, uint64_t used_gpa);

/*
 * Whether the driver negotiated VIRTIO_RING_F_EVENT_IDX.  The transport
 * calls it after virtq__init() once the features are final, before the
 * device uses the queue; turning it on also publishes avail_event, so the
 * driver's first notification does not depend on what the guest left in
 * the used ring.
 */
void virtq__set_event_idx(struct virtq *vq, bool on);

/*
 * Takes the next available chain.  Returns 1 with @chain filled, 0 when
 * the ring is empty, or a negative errno when the guest broke the ring
 * protocol; then the queue is unusable until reset (the transport sets
 * NEEDS_RESET):
 *   -EPROTO  the available index is more than the queue size ahead
 *   -ERANGE  a head or next index is not below the queue size
 *   -ELOOP   the chain is longer than the queue (so it must loop)
 *   -EFAULT  a buffer is not inside guest RAM
 *   -EINVAL  indirect descriptor (not offered), or readable after writable
 * For errors after the head was read, @chain->head names it.
 */
int virtq__pop(struct virtq *vq, struct virtq_chain *chain);

/* What virtq__pop()'s error @err says the guest did, in a few words. */
const char *virtq__pop_error(int err);

/*
 * Puts back the chain virtq__pop() just returned (1): the next pop takes
 * it again, from the ring, checked again.  For a device that cannot take
 * it yet (a rate limit): the chain waits in the guest's ring.
 */
void virtq__unpop(struct virtq *vq);

/* Returns chain @head to the driver, @len bytes written into it. */
void virtq__push(struct virtq *vq, uint16_t head, uint32_t len);

/*
 * After pushes: whether the driver wants an interrupt for the chains
 * pushed since the previous call (EVENT_IDX: whether used->idx passed
 * used_event on the way; else the NO_INTERRUPT flag).  Once per batch is
 * enough, and a "yes" must be acted on: with EVENT_IDX those pushes are
 * not asked about again.
 */
bool virtq__needs_interrupt(struct virtq *vq);

/* Number of chains the guest made available that were not taken yet. */
uint16_t virtq__pending(const struct virtq *vq);

/*
 * Before the device stops looking at a queue it found empty: asks the
 * driver to notify for the next chain it makes available (EVENT_IDX:
 * avail_event = the next entry we take; without it: NO_NOTIFY cleared).
 * The caller must then check virtq__pending() again and go on serving if
 * it is not 0: a chain the driver published before it could see the
 * request came without a notification, and nothing else would take it.
 */
void virtq__enable_notify(struct virtq *vq);

/*
 * The device will look at the ring again without being told (it has
 * requests in flight, whose completions it serves): the driver need not
 * notify (EVENT_IDX: avail_event is left behind; without it: NO_NOTIFY).
 */
void virtq__disable_notify(struct virtq *vq);

/*
 * Where both sides of a ring stand, for a person looking at a stuck
 * queue (SIGUSR1): read without the owner's agreement, so a snapshot may
 * be a pass out of date - it tells a wait apart from a lost event when
 * two of them, seconds apart, agree.
 */
struct virtq_snapshot {
	uint16_t avail;		/* the driver's avail->idx */
	uint16_t taken;		/* our last_avail */
	uint16_t used;		/* our used index */
	uint16_t decided;	/* used index of the last interrupt decision */
	uint16_t avail_event;	/* EVENT_IDX: notify past this entry */
	uint16_t used_event;	/* EVENT_IDX: interrupt past this one */
	bool event_idx;
	bool no_notify;		/* VRING_USED_F_NO_NOTIFY set by us */
	bool no_interrupt;	/* VRING_AVAIL_F_NO_INTERRUPT is set */
};

/* Fills @s; false when the queue has no rings (a reset cleared it). */
bool virtq__snapshot(const struct virtq *vq, struct virtq_snapshot *s);

#endif /* GPIN_VIRTQUEUE_H */
