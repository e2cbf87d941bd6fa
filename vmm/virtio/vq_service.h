/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Who serves a virtqueue, and when.
 *
 * A queue has one owner at a time, and only the owner touches its rings
 * and its backend context: the vCPU whose notification found the queue
 * idle (service=vcpu), or the queue's own thread, which wakes on completions,
 * on the queue's ioeventfd (service=iothread), on a hand-over and on a timer.
 * A thread that has something for a queue another thread owns only says
 * so (the AGAIN bit) and goes on with its own work: the owner runs one
 * more pass before it lets go.  So whoever completes requests also takes
 * the chains the guest added meanwhile, no lock is held across a system
 * call, and no thread ever waits for a pass to end, except a control
 * path (reset, activation, stop), which holds the queue: it waits for the
 * pass under way, and nobody starts another until it lets go.
 *
 * A vCPU owner runs at most VQS_VCPU_PASSES passes and then hands the
 * queue to its thread, so a busy queue cannot keep a vCPU out of the
 * guest.
 */
#ifndef GPIN_VQ_SERVICE_H
#define GPIN_VQ_SERVICE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* Flags of a pass. */
enum {
	VQS_THREAD = 1u << 0,	/* on the queue's own thread */
	VQS_TIMEOUT = 1u << 1,	/* the thread woke because its timer ran out */
};

#define VQS_VCPU_PASSES	2
/* File descriptors the thread waits on besides its own wake-up. */
#define VQS_MAX_FDS	2

struct vq_service_ops {
	/*
	 * One pass over queue @q, by its owner; @flags VQS_*.  Returns true
	 * when work is left that the pass's budget did not cover.
	 */
	bool (*pass)(void *opaque, unsigned int q, unsigned int flags);
	/*
	 * Before the thread sleeps: at most how many microseconds, or -1
	 * until one of its file descriptors wakes it.
	 */
	long (*sleep_us)(void *opaque, unsigned int q);
};

struct vq_service {
	_Atomic uint32_t run;		/* VQS_RUN_* (vq_service.c) */
	const struct vq_service_ops *ops;
	void *opaque;
	unsigned int q;
	char name[16];			/* the thread's: blkN-qM */
	int wake_fd;			/* eventfd: hand-over, stop, new timer */
	int fds[VQS_MAX_FDS];		/* eventfds the thread drains */
	unsigned int nfds;
	pthread_mutex_t hold_lock;	/* one control path at a time */
	pthread_t thread;
	bool thread_ok;
	_Atomic bool stop;
};

/* Sets up @s for queue @q (no thread yet); 0 or -errno. */
int vq_service__init(struct vq_service *s, const struct vq_service_ops *ops,
		     void *opaque, unsigned int q, const char *name);
/*
 * Before start: the thread also wakes when eventfd @fd (non-blocking)
 * becomes readable, and reads it.  0 or -EINVAL when there is no room.
 */
int vq_service__watch(struct vq_service *s, int fd);
/* Starts the thread; 0 or -errno. */
int vq_service__start(struct vq_service *s);
/* Stops and joins the thread (if any) and frees what init took. */
void vq_service__exit(struct vq_service *s);

/*
 * There is work on the queue (a notification, a completion): serve it on
 * this thread if nobody does, else leave it to the owner.  @flags: 0 on a
 * vCPU; the thread passes VQS_THREAD.
 */
void vq_service__kick(struct vq_service *s, unsigned int flags);

/*
 * Waits for the pass under way and keeps others from starting, until
 * vq_service__unhold(), which first runs what was kicked meanwhile.
 */
void vq_service__hold(struct vq_service *s);
void vq_service__unhold(struct vq_service *s, unsigned int flags);

/* Wakes the thread: it asks sleep_us() again and serves the queue. */
void vq_service__wake(struct vq_service *s);
/*
 * A pass of @flags set or moved a timer that sleep_us() reports: the
 * thread is to take it.  On the thread itself that happens when the pass
 * returns; a vCPU wakes it.
 */
void vq_service__timer_changed(struct vq_service *s, unsigned int flags);

#endif /* GPIN_VQ_SERVICE_H */
