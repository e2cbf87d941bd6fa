/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Storage behind a virtio-blk device: one backing file or block device,
 * opened O_DIRECT, with one submission/completion context per device
 * queue.  A backend owns no thread: the device's queue owner
 * (virtio/vq_service.h) prepares requests, submits them in one go and
 * reaps what completed, and the queue's thread sleeps on the eventfd the
 * backend signals when something completed.  So every call on a queue's
 * context comes from one thread at a time.
 *
 * Backends are ops tables: "kernel" (blk_backend_uring.c) is io_uring on
 * the O_DIRECT fd, the host kernel's own pinning (GUP-fast in the block
 * layer); the gpin backends (blk_backend_gpin.c: gpin.ko's asynchronous
 * DIO with pin=fast, pin=locked or pin=registered) fill the same slots.
 */
#ifndef GPIN_BLK_BACKEND_H
#define GPIN_BLK_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "counters.h"

struct vm_pinned_ram;

enum blk_io_op {
	BLK_IO_READ,
	BLK_IO_WRITE,
	BLK_IO_FLUSH,		/* fdatasync */
	BLK_IO_DISCARD,		/* punch a hole; failure is not an error */
	BLK_IO_WRITE_ZEROES,	/* zero the range */
};

/* One I/O; the caller owns it until its completion. */
struct blk_io {
	enum blk_io_op op;
	uint64_t offset;		/* bytes */
	uint64_t len;			/* bytes */
	const struct iovec *iov;	/* READ/WRITE buffers (guest memory) */
	unsigned int niov;
	void *bounce;			/* the backend's, for misaligned buffers */
};

/*
 * From reap(), on the queue's owner: @res is the backend's raw result,
 * bytes or -errno (blk_backend__finish() turns it into the device's).
 */
typedef void (*blk_complete_fn)(void *opaque, unsigned int q,
				struct blk_io *io, int64_t res);

struct blk_backend_params {
	const char *path;
	bool ro;
	unsigned int nqueues;
	unsigned int queue_depth;	/* most I/Os in flight per queue */
	unsigned int disk_index;	/* N of blkN, for messages */
	/* the gpin backend's: GPIN_MODE_FAST or GPIN_MODE_LOCKED */
	unsigned int gpin_mode;
	/*
	 * The gpin backend's pin=registered: guest RAM the VM pinned once
	 * (vm_pinned_ram.h), which outlives the backend; NULL otherwise.
	 */
	const struct vm_pinned_ram *pinned_ram;
	blk_complete_fn complete;
	void *opaque;
};

struct blk_backend;

struct blk_backend_ops {
	const char *name;
	/* Sets up the queues' contexts; 0 or -errno. */
	int (*start)(struct blk_backend *be);
	/*
	 * Prepares @io on queue @q, without a system call.  0, or -errno
	 * and then @io gets no completion.
	 */
	int (*prep)(struct blk_backend *be, unsigned int q, struct blk_io *io);
	/*
	 * Hands everything prepared on @q to the kernel, in one system call
	 * where it can.  A request the kernel refuses on its own completes
	 * with its error (through p.complete, before this returns).  0, or
	 * -EAGAIN when some could not go yet (the kernel is out of room
	 * until we reap): they stay prepared for the next call.
	 */
	int (*submit)(struct blk_backend *be, unsigned int q);
	/*
	 * Calls p.complete for every request of @q that has finished,
	 * without waiting; returns how many.
	 */
	unsigned int (*reap)(struct blk_backend *be, unsigned int q);
	/*
	 * A non-blocking eventfd that becomes readable when reap() has
	 * something; the queue's thread sleeps on it and reads it.
	 */
	int (*event_fd)(struct blk_backend *be, unsigned int q);
	/* Frees the contexts; nothing may be in flight any more. */
	void (*stop)(struct blk_backend *be);
	/*
	 * Optional: the backend's own counters, for vm.counters and SIGUSR1
	 * (the gpin backends: the module's, since this disk started).
	 */
	void (*counters)(struct blk_backend *be, counter_fn fn, void *opaque);
	/*
	 * Optional: the pin= word this instance serves, when it is not
	 * @name (the gpin backend serves fast, locked and registered).
	 */
	const char *(*pin_name)(const struct blk_backend *be);
};

/*
 * Bytes of bounce buffers one disk may hold at once, all queues together:
 * eight requests of the largest size the device accepts.  A misaligned
 * request past it fails (IOERR) rather than allocate: a guest cannot make
 * the VMM commit memory without bound.
 */
#define BLK_BOUNCE_BUDGET	(32ULL << 20)

struct blk_backend {
	const struct blk_backend_ops *ops;
	struct blk_backend_params p;
	int fd;
	uint64_t size;			/* bytes, a multiple of 512 */
	uint32_t lbs;			/* logical block size, DIO alignment */
	bool direct;			/* opened O_DIRECT */
	_Atomic uint64_t bounce_bytes;	/* held, <= BLK_BOUNCE_BUDGET */
	void *priv;			/* the backend's */
};

/* pin=kernel: io_uring on the O_DIRECT fd, the host kernel pins */
extern const struct blk_backend_ops blk_backend_uring_ops;
/*
 * pin=fast, pin=locked: gpin.ko's asynchronous DIO, pages pinned in
 * p.gpin_mode (its lockless walk, or under mmap_lock); pin=registered
 * (p.pinned_ram set): the same on guest RAM pinned once for the VM.
 */
extern const struct blk_backend_ops blk_backend_gpin_ops;

/* The pin= word of @be: "kernel", "fast", "locked" or "registered". */
const char *blk_backend__pin_name(const struct blk_backend *be);

/*
 * Opens @p->path (O_DIRECT; buffered with a note where the filesystem
 * refuses O_DIRECT) and starts backend @ops.  NULL with a reason in @err.
 */
struct blk_backend *blk_backend__open(const struct blk_backend_ops *ops,
				      const struct blk_backend_params *p,
				      char *err, size_t errlen);
void blk_backend__close(struct blk_backend *be);

/* Whether a buffer list can go to the fd as it is (alignment for DIO). */
bool blk_backend__aligned(const struct blk_backend *be,
			  const struct iovec *iov, unsigned int niov);

/*
 * READ/WRITE: when @io's buffers cannot go to the fd as they are, points
 * io->bounce at an aligned copy of io->len bytes (filled from the guest's
 * buffers for a WRITE), charged to the disk's BLK_BOUNCE_BUDGET; else
 * io->bounce = NULL.  0, -ENOBUFS past the budget, or -ENOMEM.
 */
int blk_backend__bounce(struct blk_backend *be, struct blk_io *io);

/*
 * The result of @io as the device sees it, from the backend's raw @res
 * (bytes or -errno): a short READ/WRITE is -EIO, a bounced READ is copied
 * back to the guest when @to_guest (not for a request whose queue was
 * reset under it: that memory is the driver's again) and the bounce
 * freed, a DISCARD the backing cannot do succeeds.
 */
int64_t blk_backend__finish(struct blk_backend *be, struct blk_io *io,
			    int64_t res, bool to_guest);

#endif /* GPIN_BLK_BACKEND_H */
