/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio-blk: a modern (1.x) block device with one virtqueue per vCPU by
 * default (VIRTIO_BLK_F_MQ).  Transport-agnostic: it is a struct
 * virtio_dev for virtio/mmio.c (or a PCI transport) to drive.
 *
 * Service model (virtio/vq_service.h: one owner per queue at a time):
 *  - service=vcpu (default): the vCPU thread whose QueueNotify write exits to
 *    the VMM serves an idle queue itself - takes the new requests,
 *    validates them, pins and submits - and goes back to the guest.  The
 *    queue's thread, blkN-qM, serves it when completions arrive, and at
 *    depth takes the guest's new requests then, notifications off.
 *  - service=iothread: the notify is an ioeventfd (KVM_IOEVENTFD, no exit to
 *    userspace); blkN-qM wakes on it too and does everything.
 */
#ifndef GPIN_VIRTIO_BLK_H
#define GPIN_VIRTIO_BLK_H

#include <stdbool.h>
#include <stdio.h>

#include "counters.h"
#include "devices/blk_backend.h"
#include "devices/irq_hold.h"
#include "virtio/virtio.h"

#define VIRTIO_BLK_QUEUE_SIZE	256
#define VIRTIO_BLK_MAX_QUEUES	64
/* poll=, irq_hold=: what the device takes (the command line takes less) */
#define VIRTIO_BLK_TIMER_MAX_US	10000000
/* irq_hold=auto (devices/irq_hold.h) */
#define VIRTIO_BLK_IRQ_HOLD_AUTO	IRQ_HOLD_AUTO
/*
 * Data segments a request may have (config seg_max) and bytes per segment
 * (config size_max): a request carries at most 128 x 32 KiB = 4 MiB, what
 * gpin.ko takes in one request (GPIN_DIO_MAX_BYTES).  The guest's block
 * layer splits larger I/O to fit.
 */
#define VIRTIO_BLK_SEG_MAX	128
#define VIRTIO_BLK_SIZE_MAX	(32 * 1024)

/*
 * Data segments a request slot holds in place: 32 KiB of scattered pages,
 * more where the guest merged them.  A request with more borrows its
 * iovecs from the heap, charged to its queue's VIRTIO_BLK_IOV_BUDGET.
 */
#define VIRTIO_BLK_SLOT_IOV	8
/*
 * iovecs a queue's requests may borrow, all together.  A driver that keeps
 * to the ring protocol has at most a table's worth of descriptors in
 * flight (no indirect descriptors are offered), and requests that outlive
 * a reset that gave up on them at most another table's worth: it never meets
 * this bound.  A guest that shares descriptors between chains in flight
 * does, and its request fails (IOERR) - rather than the VMM keeping room
 * for 128 segments in each of the 256 slots of every queue.
 */
#define VIRTIO_BLK_IOV_BUDGET	(2 * VIRTIO_BLK_QUEUE_SIZE)

struct virtio_blk_params {
	const char *path;
	bool ro;
	unsigned int nqueues;		/* 1..VIRTIO_BLK_MAX_QUEUES */
	bool iothread;
	bool no_event_idx;		/* do not offer VIRTIO_RING_F_EVENT_IDX */
	const struct blk_backend_ops *backend;
	unsigned int gpin_mode;		/* blk_backend_gpin_ops': enum gpin_mode */
	/* blk_backend_gpin_ops' pin=registered: the VM's pinned RAM */
	const struct vm_pinned_ram *pinned_ram;
	unsigned int index;		/* N in blkN-qM and the serial */
	uint64_t iops;			/* requests a second, all queues; 0: any */
	uint64_t bps;			/* READ/WRITE bytes a second; 0: any */
	/*
	 * Microseconds between the thread's looks at a busy queue that ran
	 * empty, with notifications off; 0: notifications on at once.
	 */
	long poll_us;
	/*
	 * Interrupt coalescing: how long a completion's interrupt may wait
	 * while the guest keeps adding requests or others are in flight;
	 * 0: none; VIRTIO_BLK_IRQ_HOLD_AUTO: no longer than the queue's
	 * recent completion latency.
	 */
	long irq_hold_us;
	bool quiet;			/* no start-up or error lines (fuzzing) */
	/*
	 * No queue threads: the caller runs virtio_blk__service() (the
	 * fuzz target, which wants every step on its own thread).
	 */
	bool manual;
};

struct virtio_blk;

/* Opens the backing and starts the backend; NULL with a reason in @err. */
struct virtio_blk *virtio_blk__create(const struct virtio_blk_params *p,
				      char *err, size_t errlen);
/* Reset the device (the transport's destroy does) before destroying it. */
void virtio_blk__destroy(struct virtio_blk *blk);

/* The backend the device drives (the fuzz target completes its I/O). */
struct blk_backend *virtio_blk__backend(struct virtio_blk *blk);

/* The device for a transport: virtio_mmio__create(virtio_blk__dev(b), ...). */
struct virtio_dev *virtio_blk__dev(struct virtio_blk *blk);

/*
 * What queue @q's thread does when it wakes (@timed_out: its quiet timer
 * ran out): serve the queue now, on the calling thread.  For a device
 * created with p.manual.
 */
void virtio_blk__service(struct virtio_blk *blk, unsigned int q,
			 bool timed_out);

/* service=iothread: the eventfd KVM must signal for queue @q; else -1. */
int virtio_blk__kick_fd(const struct virtio_blk *blk, unsigned int q);

/*
 * One line per queue: requests, bytes, errors.  Safe while the device
 * runs (the counters are atomics), so SIGUSR1 prints them too.
 */
void virtio_blk__print_stats(const struct virtio_blk *blk, FILE *out);

/*
 * One line per active queue: where its ring and its service stand
 * ("gpin-vmm: blkN-qM-ring: avail A, taken T, used U, ..."), for SIGUSR1.
 */
void virtio_blk__print_rings(const struct virtio_blk *blk, FILE *out);

struct virtio_blk_queue_stats {
	uint64_t requests;
	uint64_t bytes;
	uint64_t errors;
	uint64_t interrupts;	/* raised for the queue's used ring */
	uint64_t holds;		/* irq_hold=: interrupts that waited */
};
void virtio_blk__stats(const struct virtio_blk *blk, unsigned int q,
		       struct virtio_blk_queue_stats *st);

/*
 * The same counters for vm.counters: @fn gets device "blkN-qM" with
 * "requests", "bytes" and "errors" for every queue (with irq_hold=, also
 * "interrupts" and "holds").  Safe while it runs.
 */
void virtio_blk__counters(const struct virtio_blk *blk, counter_fn fn,
			  void *opaque);

#endif /* GPIN_VIRTIO_BLK_H */
