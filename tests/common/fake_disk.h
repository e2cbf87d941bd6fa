/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one fake disk of the device tests and fuzzers, behind the backend
 * ops table (fake_disk.c).  Requests a queue's owner prepared go to the
 * disk at submit; the disk finishes them in order - on its own thread,
 * after a random delay or when the test releases them, or (manual) when
 * the test says so - and signals the queue's eventfd as io_uring would;
 * reap hands the finished ones back.  Like a real backend it bounces
 * misaligned buffers when it is "direct".
 *
 * It holds the device to the backend contract and aborts (a failure
 * under Check, a crash report under libFuzzer) when the device breaks
 * it: a queue that is not there, more than a queue's depth out, a
 * request prepared while it is still in flight, a request finished
 * other than exactly once.
 *
 * The unit tests make one device at a time and use the functions without
 * a disk argument, which act on the disk started last; a test with
 * several devices takes each one's disk with fake_disk__of().
 */
#ifndef GPIN_TEST_FAKE_DISK_H
#define GPIN_TEST_FAKE_DISK_H

#include <stdbool.h>

#include "devices/blk_backend.h"

#define FAKE_DISK_QUEUES	2

struct fake_disk;

struct fake_disk_opts {
	bool direct;		/* as O_DIRECT: misaligned buffers bounce */
	unsigned int max_delay_us;	/* each takes 0..this; 1 in 4 none */
	int fill;		/* byte a READ brings; -1: none */
	bool hold;		/* from the start: fake_disk__hold(true) */
	bool manual;		/* no thread: fake_disk__finish_oldest() */
	/* bounced READs longer than this fail (-EIO) instead; 0: none */
	unsigned int fail_bounce_over;
	/* at prep of a READ or WRITE, bounced already: the test's checks */
	void (*on_prep)(const struct blk_io *io);
	/* when the disk does a READ or WRITE (on its thread, if it has one) */
	void (*on_io)(struct blk_io *io);
};

/* For the next device made with fake_disk_ops (defaults: all zero). */
void fake_disk__set(const struct fake_disk_opts *o);

/* ---- the disk started last ------------------------------------------- */

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

/* ---- a given device's ------------------------------------------------- */

/* The disk behind a device's backend (virtio_blk__backend()). */
struct fake_disk *fake_disk__of(struct blk_backend *be);
void fake_disk__set_full(struct fake_disk *d, bool on);
/* Every request the disk does takes @us from now on. */
void fake_disk__set_delay(struct fake_disk *d, unsigned int us);
/* Requests of queue @q the disk holds: prepared, at the disk, unreaped. */
unsigned int fake_disk__held(struct fake_disk *d, unsigned int q);
/* Requests of queue @q the disk finished and the device has not reaped. */
unsigned int fake_disk__unreaped(struct fake_disk *d, unsigned int q);
/* Requests prepared on it so far, all queues. */
unsigned long fake_disk__requests(struct fake_disk *d);
/* Nothing prepared, at the disk or unreaped, and all reaped. */
bool fake_disk__idle(struct fake_disk *d);
/*
 * manual: queue @q's oldest request at the disk finishes (-EIO when
 * @fail); false when it has none there.
 */
bool fake_disk__finish_oldest(struct fake_disk *d, unsigned int q, bool fail);

extern const struct blk_backend_ops fake_disk_ops;

#endif /* GPIN_TEST_FAKE_DISK_H */
