/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * gpin: user page pinning through /dev/gpin (gpin.ko).
 *
 * Every ioctl takes a pointer to a struct that starts with
 * "__u32 size; __u32 flags;".  @size is sizeof() of the struct as the caller
 * knows it: a smaller size than the first version is -EINVAL, a larger one
 * is accepted only when the bytes the module does not know are zero
 * (-E2BIG otherwise), so the structs can grow at the end.  Unknown flags
 * and non-zero reserved fields are -EINVAL; unknown ioctl numbers are
 * -ENOTTY.
 *
 * The ioctls act on the calling process's own address space only: the file
 * remembers the mm of the process that opened it, and PIN, UNPIN and the
 * direct I/O ioctls from any other mm (a forked child, a process the fd
 * was passed to) are -EPERM.
 *
 * Errors of GPIN_IOC_PIN:
 *   EINVAL     npages == 0, start not page aligned, bad mode/flags/reserved
 *   E2BIG      npages > GPIN_MAX_PAGES_PER_PIN, or size too large (tail != 0)
 *   EOVERFLOW  start + npages * page size wraps around
 *   EFAULT     range not in user space, not (entirely) mapped, a special
 *              (VM_PFNMAP/VM_IO) mapping, or a bad pfns pointer
 *   ENOSPC     the file would hold more than GPIN_MAX_PAGES_PER_FILE pages
 *              (PIN handles and direct I/O in flight together) or
 *              GPIN_MAX_HANDLES_PER_FILE handles
 *   ENOMEM     the pin would take the process past RLIMIT_MEMLOCK (its
 *              pinned_vm, VmPin in /proc/PID/status; without
 *              CAP_IPC_LOCK), or the module past its max_pins parameter
 *   EPERM      caller's mm is not the one that opened the file, or pfns
 *              asked for without CAP_SYS_ADMIN (as /proc/PID/pagemap)
 *   others     as pin_user_pages() (ENOMEM, EINTR, EHWPOISON, ...)
 * Errors of GPIN_IOC_UNPIN: ENOENT for a handle the file does not hold
 * (never issued, or already unpinned); ENOMEM when a GPIN_PIN_DIO handle
 * cannot be taken out of the file's address table for want of memory
 * (nothing changed: try again, or close the file).
 */
#ifndef _UAPI_GPIN_H
#define _UAPI_GPIN_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define GPIN_DEVICE_PATH	"/dev/gpin"

/* Limits.  Pages are the kernel's PAGE_SIZE (4 KiB on x86-64). */
#define GPIN_MAX_PAGES_PER_PIN		(1U << 18)	/* 1 GiB of 4K pages */
#define GPIN_MAX_PAGES_PER_FILE		(1U << 20)	/* 4 GiB of 4K pages */
#define GPIN_MAX_HANDLES_PER_FILE	65536U

/**
 * enum gpin_mode - how the module finds the pages it pins
 * @GPIN_MODE_FAST: the module's own lockless walk with interrupts disabled,
 *	anonymous pages only; whatever it cannot take is pinned through the
 *	locked path (counted as a fallback)
 * @GPIN_MODE_LOCKED: mmap_read_lock() + pin_user_pages()
 * @GPIN_MODE_KERNEL: the kernel's pin_user_pages_fast()
 * @GPIN_MODE_COUNT: number of modes
 *
 * All three hold the pages the way the kernel holds them for DMA: FOLL_PIN
 * pins (page_maybe_dma_pinned() is true, fork() copies the page for the
 * child rather than sharing it), released with unpin_user_pages().
 */
enum gpin_mode {
	GPIN_MODE_FAST = 0,
	GPIN_MODE_LOCKED = 1,
	GPIN_MODE_KERNEL = 2,
	GPIN_MODE_COUNT = 3,
};

/* gpin_pin.flags */
#define GPIN_PIN_WRITE		(1U << 0)	/* pages will be written to */
#define GPIN_PIN_DIO		(1U << 1)	/* serves GPIN_DIO_PINNED */
#define GPIN_PIN_FLAGS_ALL	(GPIN_PIN_WRITE | GPIN_PIN_DIO)

/**
 * struct gpin_pin - GPIN_IOC_PIN
 * @size: sizeof(struct gpin_pin)
 * @flags: GPIN_PIN_*
 * @start: first user address, page aligned
 * @npages: number of pages, 1..GPIN_MAX_PAGES_PER_PIN
 * @pfns: 0, or a user pointer to __u64[@npages] that receives the page
 *	frame number of each pinned page
 * @mode: enum gpin_mode
 * @handle: out: non-zero handle for GPIN_IOC_UNPIN
 * @fast_pages: out: how many of the pages the fast walk served
 * @reserved: must be zero
 *
 * The pages stay pinned until GPIN_IOC_UNPIN of @handle or the last close
 * of the file.  A PIN handle is a long-term pin (FOLL_LONGTERM: pages in
 * ZONE_MOVABLE or CMA are migrated first) and is charged to the process's
 * pinned_vm (VmPin in /proc/PID/status), against RLIMIT_MEMLOCK unless it
 * has CAP_IPC_LOCK, as RDMA's registered memory is.  Not locked_vm, which
 * VFIO charges: that counter is mlock()'s too (a VM whose RAM is both
 * mlock()ed and pinned would be charged twice) and updating it takes the
 * mmap_lock for writing, the lock gpin exists to stay off.  @pfns needs
 * CAP_SYS_ADMIN.
 *
 * With GPIN_PIN_DIO the handle also serves direct I/O requests that say
 * GPIN_DIO_PINNED (below): their buffers are looked up by address among
 * the file's GPIN_PIN_DIO handles, which therefore must not overlap
 * (EEXIST).  Such a request uses the handle's pages as they were pinned,
 * whatever is mapped at those addresses by then (as RDMA's registered
 * memory does): a process that unmaps or remaps a registered range does
 * I/O on the old pages until it unpins the handle.  UNPIN and the last
 * close do not wait for I/O in flight on a handle: its pages stay pinned
 * (and charged) until that I/O has finished.
 */
struct gpin_pin {
	__u32 size;
	__u32 flags;
	__u64 start;
	__u64 npages;
	__u64 pfns;
	__u32 mode;
	__u32 handle;
	__u64 fast_pages;
	__u64 reserved[2];
};

/**
 * struct gpin_unpin - GPIN_IOC_UNPIN
 * @size: sizeof(struct gpin_unpin)
 * @flags: must be zero
 * @handle: a handle returned by GPIN_IOC_PIN on this file
 * @reserved: must be zero
 */
struct gpin_unpin {
	__u32 size;
	__u32 flags;
	__u32 handle;
	__u32 reserved;
};

/**
 * struct gpin_mode_stats - counters of one mode, summed over all CPUs
 * @calls: GPIN_IOC_PIN calls
 * @pages: pages pinned
 * @fast_pages: pages taken by the lockless walk (GPIN_MODE_FAST only)
 * @fallbacks: calls whose walk stopped early and went to the locked path
 *	(the seed's fast_gup_slow; GPIN_MODE_FAST only)
 * @huge_leaves: FAST: huge pmd/pud leaves the walk used; LOCKED/KERNEL:
 *	runs of pages from one large folio in the result
 * @lock_wait_ns: time spent waiting for mmap_read_lock()
 * @max_irqoff_ns: FAST: longest interrupts-disabled window of the walk;
 *	KERNEL: longest pin_user_pages_fast() call, its slow path included
 *	when it took one (an upper bound of its interrupts-off window, which
 *	the batch bounds); LOCKED: 0
 * @live_pages: pages pinned in this mode and not yet released
 *	(not affected by GPIN_IOC_STATS_RESET)
 * @failures: calls that returned an error
 * @dio_requests: direct I/O requests (GPIN_IOC_DIO, each request of
 *	GPIN_IOC_DIO_SUBMIT) completed with pages pinned in this mode
 * @dio_bytes: bytes those requests transferred
 * @reserved: zero
 */
struct gpin_mode_stats {
	__u64 calls;
	__u64 pages;
	__u64 fast_pages;
	__u64 fallbacks;
	__u64 huge_leaves;
	__u64 lock_wait_ns;
	__u64 max_irqoff_ns;
	__u64 live_pages;
	__u64 failures;
	__u64 dio_requests;
	__u64 dio_bytes;
	__u64 reserved;
};

/* gpin_stats.flags, gpin_stats_reset.flags */
#define GPIN_STATS_FILE		(1U << 0)	/* this file's counters only */
#define GPIN_STATS_FLAGS_ALL	GPIN_STATS_FILE

/**
 * struct gpin_stats - GPIN_IOC_STATS
 * @size: in: sizeof(struct gpin_stats); out: bytes written
 * @flags: 0: the module's counters, all files together;
 *	GPIN_STATS_FILE: the counters of the file the ioctl is called on
 *	(zero at open: a VM's disk sees its own work, whatever other files do)
 * @nr_modes: out: GPIN_MODE_COUNT
 * @batch: out: pages per interrupts-disabled window (module parameter)
 * @live_pages: out: pages pinned and not yet released: through all files,
 *	or with GPIN_STATS_FILE through this one
 * @file_live_pages: out: of those, the ones held by this file
 * @max_pages_per_pin: out: GPIN_MAX_PAGES_PER_PIN
 * @max_pages_per_file: out: GPIN_MAX_PAGES_PER_FILE
 * @mode: out: per-mode counters, indexed by enum gpin_mode
 *
 * Needs no particular mm: any process that can open /dev/gpin may read it.
 */
struct gpin_stats {
	__u32 size;
	__u32 flags;
	__u32 nr_modes;
	__u32 batch;
	__u64 live_pages;
	__u64 file_live_pages;
	__u64 max_pages_per_pin;
	__u64 max_pages_per_file;
	struct gpin_mode_stats mode[GPIN_MODE_COUNT];
};

/**
 * struct gpin_stats_reset - GPIN_IOC_STATS_RESET
 * @size: sizeof(struct gpin_stats_reset)
 * @flags: 0: the module's counters, which needs CAP_SYS_ADMIN (EPERM
 *	otherwise: every user of the module reads them); GPIN_STATS_FILE:
 *	this file's counters, for whoever holds the file
 *
 * Zeroes every counter except the live page counts.
 */
struct gpin_stats_reset {
	__u32 size;
	__u32 flags;
};

/*
 * Direct I/O between a file descriptor and user buffers, the pages pinned
 * with one of the modes.  The file (a regular file whose filesystem does
 * O_DIRECT, or a block device) is opened by the caller, with or without
 * O_DIRECT: the module always issues the I/O with IOCB_DIRECT.  A request
 * behaves like preadv()/pwritev() on an O_DIRECT descriptor: buffers,
 * offset and lengths not aligned as the file requires are -EINVAL, a short
 * transfer is reported as such, errors of the file are passed through.
 *
 * Errors of a request (GPIN_IOC_DIO's return; GPIN_IOC_DIO_SUBMIT stops at
 * the first request that has one):
 *   EBADF      @fd not open, or not open for reading (READ) / writing (WRITE)
 *   EINVAL     bad flags/op/mode/reserved, nr_segs == 0, not a regular file
 *              or block device, a file that cannot do direct I/O,
 *              misalignment, a negative offset
 *   E2BIG      nr_segs > GPIN_DIO_MAX_SEGS, or more than GPIN_DIO_MAX_BYTES
 *   EFAULT     bad iov pointer, buffers not (entirely) mapped or, for READ,
 *              not writable; GPIN_DIO_PINNED: a segment not inside one
 *              GPIN_PIN_DIO handle of @pins_fd (for READ, one pinned with
 *              GPIN_PIN_WRITE)
 *   EPERM      caller's mm is not the one that opened /dev/gpin, or
 *              GPIN_DIO_PINNED with a @pins_fd opened by another mm
 *   EBADF      also: GPIN_DIO_PINNED and @pins_fd is not a /dev/gpin file
 *   others     from pinning (ENOMEM, ...) and from the file (EIO, ENOSPC...)
 */
#define GPIN_DIO_MAX_SEGS	256U		/* iovec segments per request */
#define GPIN_DIO_MAX_BYTES	(4U << 20)	/* bytes per request */
#define GPIN_DIO_MAX_INFLIGHT	1024U		/* submitted, not yet reaped */
#define GPIN_DIO_MAX_BATCH	256U		/* requests per SUBMIT / REAP */

/**
 * enum gpin_dio_op - direction of a direct I/O request
 * @GPIN_DIO_READ: file -> buffers (preadv)
 * @GPIN_DIO_WRITE: buffers -> file (pwritev)
 */
enum gpin_dio_op {
	GPIN_DIO_READ = 0,
	GPIN_DIO_WRITE = 1,
};

/* gpin_dio.flags */
#define GPIN_DIO_PINNED		(1U << 0)	/* no pin work: see @pins_fd */
#define GPIN_DIO_FLAGS_ALL	GPIN_DIO_PINNED

/**
 * struct gpin_dio - one direct I/O request: GPIN_IOC_DIO, and the elements
 *	of GPIN_IOC_DIO_SUBMIT's array
 * @size: sizeof(struct gpin_dio)
 * @flags: GPIN_DIO_*
 * @fd: file descriptor of the caller: regular file or block device
 * @op: enum gpin_dio_op
 * @offset: file offset in bytes
 * @iov: user pointer to struct iovec[@nr_segs], the buffers
 * @nr_segs: 1..GPIN_DIO_MAX_SEGS; zero-length segments are allowed
 * @mode: enum gpin_mode: how the buffers' pages are pinned; with
 *	GPIN_DIO_PINNED must be 0, and the request is counted under the mode
 *	that pinned its (first segment's) handle
 * @user_data: SUBMIT: returned in the request's struct gpin_dio_event;
 *	DIO: ignored
 * @pins_fd: GPIN_DIO_PINNED: a /dev/gpin file of the same process (this
 *	one or another, e.g. one that holds a VM's RAM for all its queues);
 *	each non-empty segment must lie inside one of its GPIN_PIN_DIO
 *	handles, whose pages the I/O uses with no pin work at all; the
 *	request keeps the handle's pages until it completes.  Otherwise
 *	must be zero
 * @reserved0: must be zero
 * @reserved: must be zero
 */
struct gpin_dio {
	__u32 size;
	__u32 flags;
	__s32 fd;
	__u32 op;
	__u64 offset;
	__u64 iov;
	__u32 nr_segs;
	__u32 mode;
	__u64 user_data;
	__s32 pins_fd;
	__u32 reserved0;
	__u64 reserved[1];
};

/**
 * struct gpin_dio_submit - GPIN_IOC_DIO_SUBMIT
 * @size: sizeof(struct gpin_dio_submit)
 * @flags: must be zero
 * @nr: number of requests, 1..GPIN_DIO_MAX_BATCH
 * @reserved0: must be zero
 * @reqs: user pointer to the requests, struct gpin_dio[@nr], contiguous;
 *	the array's stride is the @size of its first element, and every
 *	element must have that size
 * @reserved: must be zero
 *
 * Pins each request's buffers and starts its I/O in the calling thread,
 * in order; returns without waiting for the I/O.  Return: the number of
 * requests started (1..@nr).  A request that cannot be started stops the
 * batch: if it is the first, the ioctl fails with its error (EAGAIN when
 * GPIN_DIO_MAX_INFLIGHT requests are already submitted and not reaped),
 * otherwise the count of those before it is returned.  Each started
 * request produces exactly one struct gpin_dio_event, including requests
 * whose I/O failed immediately.
 */
struct gpin_dio_submit {
	__u32 size;
	__u32 flags;
	__u32 nr;
	__u32 reserved0;
	__u64 reqs;
	__u64 reserved[2];
};

/**
 * struct gpin_dio_event - the completion of one submitted request
 * @user_data: the request's user_data
 * @result: bytes transferred (possibly short), or a negative errno; the
 *	kernel's internal restart codes (ERESTARTSYS and its family) arrive
 *	as EINTR, as with aio
 * @flags: zero
 * @reserved: zero
 */
struct gpin_dio_event {
	__u64 user_data;
	__s64 result;
	__u32 flags;
	__u32 reserved;
};

/**
 * struct gpin_dio_reap - GPIN_IOC_DIO_REAP
 * @size: sizeof(struct gpin_dio_reap)
 * @flags: must be zero
 * @nr: room in @events, 1..GPIN_DIO_MAX_BATCH
 * @reserved0: must be zero
 * @events: user pointer to struct gpin_dio_event[@nr]
 * @inflight: out: requests submitted on this file and not yet reaped,
 *	after this call
 *
 * Never blocks.  Return: the number of events copied, 0 when none is
 * ready.  Events come about in completion order: a read whose pages must
 * first be marked dirty under their lock comes when that is done.  A request's pages are
 * released (and, for reads, dirtied) when its I/O completes, before its
 * event becomes visible: an event waiting to be reaped holds no page and
 * no file reference, so a process that never reaps pins nothing.
 */
struct gpin_dio_reap {
	__u32 size;
	__u32 flags;
	__u32 nr;
	__u32 reserved0;
	__u64 events;
	__u64 inflight;
};

/**
 * struct gpin_set_eventfd - GPIN_IOC_SET_EVENTFD
 * @size: sizeof(struct gpin_set_eventfd)
 * @flags: must be zero
 * @fd: an eventfd, signalled (+1) once per completed request; -1 removes it
 * @reserved: must be zero
 */
struct gpin_set_eventfd {
	__u32 size;
	__u32 flags;
	__s32 fd;
	__u32 reserved;
};

/*
 * ioctl numbers: type 0xBC, free in Documentation/userspace-api/ioctl/
 * ioctl-number.rst (as of Linux 6.12), not registered there.  Each command
 * encodes its direction and its struct, so strace, audit and seccomp can
 * tell them apart.  The module takes each number exactly as written here
 * (a seccomp or LSM rule on a command must not be sidestepped with other
 * size bits); a struct grows through its own @size field, not through its
 * command's number.
 */
#define GPIN_IOC_TYPE		0xBC
#define GPIN_IOC_PIN		_IOWR(GPIN_IOC_TYPE, 0x00, struct gpin_pin)
#define GPIN_IOC_UNPIN		_IOW(GPIN_IOC_TYPE, 0x01, struct gpin_unpin)
#define GPIN_IOC_STATS		_IOWR(GPIN_IOC_TYPE, 0x02, struct gpin_stats)
#define GPIN_IOC_STATS_RESET	_IOW(GPIN_IOC_TYPE, 0x03, struct gpin_stats_reset)
/* 0x10..0x1f: direct I/O */
#define GPIN_IOC_DIO		_IOW(GPIN_IOC_TYPE, 0x10, struct gpin_dio)
#define GPIN_IOC_DIO_SUBMIT	_IOW(GPIN_IOC_TYPE, 0x11, struct gpin_dio_submit)
#define GPIN_IOC_DIO_REAP	_IOWR(GPIN_IOC_TYPE, 0x12, struct gpin_dio_reap)
#define GPIN_IOC_SET_EVENTFD	_IOW(GPIN_IOC_TYPE, 0x13, struct gpin_set_eventfd)

#endif /* _UAPI_GPIN_H */
