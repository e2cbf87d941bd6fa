/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Split virtqueue accessor (virtio 1.x, section 2.7): the one place where
 * the guest's rings are read.  Everything the guest controls - ring
 * addresses, the available index, head and next indexes, descriptor
 * addresses and lengths, chain length - is checked here, so a device sees
 * only chains of host pointers that lie inside guest RAM.
 *
 * Guest addresses are turned into host pointers by a translate callback
 * (vm__gpa_to_hva() in the VMM, a plain buffer in the tests and the fuzz
 * target): this file needs neither KVM nor a VM.
 *
 * Not thread-safe: a queue is used by one thread at a time (the device
 * holds a lock per queue).
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
 * both ring indexes start at 0.
 */
int virtq__init(struct virtq *vq, const struct virtq_mem *mem, uint16_t size,
		uint64_t desc_gpa, uint64_t avail_gpa, uint64_t used_gpa);

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

/* Returns chain @head to the driver, @len bytes written into it. */
void virtq__push(struct virtq *vq, uint16_t head, uint32_t len);

/* After pushes: whether the driver wants an interrupt for them. */
bool virtq__needs_interrupt(struct virtq *vq);

/* Number of chains the guest made available that were not taken yet. */
uint16_t virtq__pending(const struct virtq *vq);

#endif /* GPIN_VIRTQUEUE_H */
