/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A disk for the device tests, behind the backend ops table
 * (fake_disk.c): requests go to the disk's own thread, which finishes
 * them in order, after a random delay or when the test releases them,
 * and signals the queue's eventfd as io_uring would.  The test can also
 * make it refuse submissions for a while (its ring is full).
 */
#ifndef GPIN_TEST_FAKE_DISK_H
#define GPIN_TEST_FAKE_DISK_H

#include <stdbool.h>

#include "devices/blk_backend.h"

#define FAKE_DISK_QUEUES	2

struct fake_disk_opts {
	bool direct;		/* as O_DIRECT: misaligned buffers bounce */
	unsigned int max_delay_us;	/* each takes 0..this; 1 in 4 none */
	int fill;		/* byte a READ brings; -1: none */
	bool hold;		/* from the start: fake_disk__hold(true) */
};

/* For the next device made with fake_disk_ops (defaults: all zero). */
void fake_disk__set(const struct fake_disk_opts *o);
/* While held, nothing at the disk finishes; releasing lets it all go. */
void fake_disk__hold(bool on);
/* Lets @n requests finish even while held. */
void fake_disk__release(unsigned int n);
/* While full, submit keeps everything back (-EAGAIN). */
void fake_disk__full(bool on);
/* Completions the device reaped, all queues. */
unsigned long fake_disk__reaped(void);
/*
 * Once a submit leaves @at or more requests at the disk, the reaps of
 * every thread but the caller's (the queue's thread: its passes) wait
 * until the next call; 0 opens the gate.  Holds back the thread's timer
 * while the test looks at what a vCPU's pass left.
 */
void fake_disk__gate(unsigned int at);
/* Requests at the disk (submitted, not finished). */
unsigned int fake_disk__queued(void);
/* Calls of reap(): the queue's passes, each a wake-up of its owner. */
unsigned long fake_disk__reaps(void);

extern const struct blk_backend_ops fake_disk_ops;

#endif /* GPIN_TEST_FAKE_DISK_H */
