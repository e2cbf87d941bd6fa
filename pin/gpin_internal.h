/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gpin.ko internals: the per-file context (file.c), PIN handles
 * (handle.c), pinned ranges (range.c, walk.c), direct I/O (dio.c) and the
 * statistics (stats.c).
 */
#ifndef GPIN_INTERNAL_H
#define GPIN_INTERNAL_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/maple_tree.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include <gpin.h>

/*
 * Per-CPU counters of one mode; summed (max for max_irqoff_ns) on read.
 * Updated with this_cpu_*() operations: a request's pages are released in
 * its completion, which may interrupt a pin on the same CPU.
 */
struct gpin_pcpu_mode {
	u64 calls;
	u64 pages;
	u64 fast_pages;
	u64 fallbacks;
	u64 huge_leaves;
	u64 lock_wait_ns;
	u64 max_irqoff_ns;
	u64 failures;
	u64 dio_requests;
	u64 dio_bytes;
	long live_pages;	/* pin on one CPU, unpin on another: sum */
};

struct gpin_pcpu_stats {
	struct gpin_pcpu_mode mode[GPIN_MODE_COUNT];
};

/* What one gpin_range_pin() call did, for the counters. */
struct gpin_pin_tally {
	unsigned long pages;
	unsigned long fast_pages;
	unsigned long huge;
	u64 lock_wait_ns;
	u64 max_irqoff_ns;
	bool fallback;
	bool failed;
};

/**
 * struct gpin_range - pages of one user range, pinned (FOLL_PIN)
 * @start: first user address
 * @npages: number of pages in @pages
 * @pages: the pinned pages, in address order
 * @stats: the owning file's counters (the module's are updated too)
 * @mode: enum gpin_mode used to take them
 * @write: taken for writing (FOLL_WRITE)
 * @held: the pins are still held (gpin_range_unpin() clears it)
 * @own_pages: @pages was allocated by gpin_range_pin(), not lent to it
 * @fast_pages: how many the lockless walk took
 * @lender: a view of a PIN handle's pages (GPIN_DIO_PINNED), holding a use
 *	of that handle instead of pins of its own; NULL for a range that
 *	pinned its pages
 *
 * The unit of pinning: a PIN handle owns one, and a direct I/O request
 * holds one per non-empty iovec segment (dio.c).
 */
struct gpin_range {
	unsigned long start;
	unsigned long npages;
	struct page **pages;
	struct gpin_pcpu_stats __percpu *stats;
	u32 mode;
	bool write;
	bool held;
	bool own_pages;
	unsigned long fast_pages;
	struct gpin_handle *lender;
};

/**
 * struct gpin_handle - a PIN handle: a range of a file, pinned long-term
 * @r: its pages
 * @gf: the file that pinned them, a reference: the charges go back to it
 * @users: one for the file's tables, one per direct I/O request whose
 *	buffers are in it; the last put releases the pages
 * @dio: GPIN_PIN_DIO: also in @gf->spans, found there by address
 * @rcu: a request's lookup may still see the handle after the last put
 */
struct gpin_handle {
	struct gpin_range r;
	struct gpin_file *gf;
	refcount_t users;
	bool dio;
	struct rcu_head rcu;
};

/**
 * struct gpin_file - state of one open file of /dev/gpin
 * @refs: one for the open file, one per direct I/O request not yet freed,
 *	one per PIN handle not yet released; the last put frees the file,
 *	after its close
 * @mm: the mm of the opener (mmgrab()ed); the only mm the file acts on
 * @stats: this file's counters (GPIN_STATS_FILE)
 * @pins_lock: serialises changes of @pins and @spans (lookups take none)
 * @pins: handle -> struct gpin_handle
 * @spans: the GPIN_PIN_DIO handles by user address range (RCU readers)
 * @live_pages: pages held through @pins and by direct I/O requests not yet
 *	released
 * @dio_lock: protects @dio_events, @dio_closed and @eventfd
 * @dio_events: completed asynchronous requests, not yet reaped; their
 *	pages and file references are already released
 * @dio_closed: the file was closed: nobody reaps any more
 * @dio_reqs: submitted requests not yet reaped (<= GPIN_DIO_MAX_INFLIGHT)
 * @eventfd: signalled once per completed asynchronous request, or NULL
 */
struct gpin_file {
	refcount_t refs;
	struct mm_struct *mm;
	struct gpin_pcpu_stats __percpu *stats;
	struct mutex pins_lock;		/* @pins, @spans: writers */
	struct xarray pins;
	struct maple_tree spans;
	atomic_long_t live_pages;

	spinlock_t dio_lock;		/* @dio_events, @dio_closed, @eventfd */
	struct list_head dio_events;
	bool dio_closed;
	atomic_t dio_reqs;
	struct eventfd_ctx *eventfd;
};

/* Tunables (range.c). */
extern unsigned int gpin_batch;
extern unsigned int gpin_folio_ref_limit;

/* walk.c: lockless walk of [start, start + nr pages), IRQs already off. */
struct gpin_walk {
	struct page **pages;
	unsigned long nr;	/* pages pinned so far */
	unsigned long huge;	/* huge leaves used */
	bool write;
	bool longterm;		/* FOLL_LONGTERM: only pinnable zones */
	/* NR_FOLL_PIN_ACQUIRED not yet added to pins_node's vmstat */
	struct pglist_data *pins_node;
	long pins_counted;
};

int gpin_walk_range(struct mm_struct *mm, unsigned long addr,
		    unsigned long end, struct gpin_walk *w);
void gpin_walk_undo(struct page **pages, unsigned long nr);

/* range.c */
#define GPIN_RANGE_WRITE	BIT(0)	/* the pages will be written to */
#define GPIN_RANGE_LONGTERM	BIT(1)	/* held indefinitely (PIN handles) */

int gpin_range_init(void);
void gpin_range_exit(void);
int gpin_range_pin(struct gpin_range *r, unsigned long start,
		   unsigned long npages, u32 mode, unsigned int flags,
		   struct page **pages,
		   struct gpin_pcpu_stats __percpu *stats);
bool gpin_range_dirty(const struct gpin_range *r);
void gpin_range_unpin(struct gpin_range *r, bool dirty);
void gpin_range_release(struct gpin_range *r, bool dirty);
void gpin_range_forget(struct gpin_range *r);

/* file.c */
struct gpin_file *gpin_file_create(void);
void gpin_file_get(struct gpin_file *gf);
void gpin_file_put(struct gpin_file *gf);
int gpin_file_check_caller(struct gpin_file *gf);
int gpin_file_account(struct gpin_file *gf, unsigned long npages);
void gpin_file_unaccount(struct gpin_file *gf, unsigned long npages);

/* handle.c: GPIN_IOC_PIN, GPIN_IOC_UNPIN */
long gpin_handle_pin(struct gpin_file *gf, void *arg, void __user *uarg);
long gpin_handle_unpin(struct gpin_file *gf, void *arg, void __user *uarg);
void gpin_handle_release_all(struct gpin_file *gf);
struct gpin_handle *gpin_span_get(struct gpin_file *gf, unsigned long start,
				  unsigned long end, bool write);
void gpin_handle_put(struct gpin_handle *h);
bool gpin_handle_put_unless_last(struct gpin_handle *h);

/* main.c: the /dev/gpin file behind @fd, referenced (fput()), or NULL */
struct file *gpin_fget(int fd);

/* dio.c */
int gpin_dio_init(void);
void gpin_dio_exit(void);
void gpin_dio_file_init(struct gpin_file *gf);
void gpin_dio_file_close(struct gpin_file *gf);
long gpin_dio_sync(struct gpin_file *gf, void *arg, void __user *uarg);
long gpin_dio_submit(struct gpin_file *gf, void *arg, void __user *uarg);
long gpin_dio_reap(struct gpin_file *gf, void *arg, void __user *uarg);
long gpin_dio_set_eventfd(struct gpin_file *gf, void *arg,
			  void __user *uarg);

/*
 * Copy a struct that starts with "__u32 size; __u32 flags;" from user
 * space.  Smaller than we know: -EINVAL; larger: fine if the unknown tail
 * is zero (-E2BIG otherwise, from copy_struct_from_user()).
 */
static inline int gpin_copy_in(void *dst, size_t ksize,
			       void __user *uarg)
{
	u32 usize;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < ksize)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	return copy_struct_from_user(dst, ksize, uarg, usize);
}

/* stats.c: @file is a file's counters, NULL for the module's alone */
int gpin_stats_init(void);
void gpin_stats_exit(void);
struct gpin_pcpu_stats __percpu *gpin_stats_file_alloc(void);
void gpin_stats_file_free(struct gpin_pcpu_stats __percpu *file);
void gpin_stats_pin(struct gpin_pcpu_stats __percpu *file, u32 mode,
		    const struct gpin_pin_tally *t);
void gpin_stats_live(struct gpin_pcpu_stats __percpu *file, u32 mode,
		     long delta);
void gpin_stats_dio(struct gpin_pcpu_stats __percpu *file, u32 mode,
		    long res);
long gpin_live_pages(void);
long gpin_stats(struct gpin_file *gf, void *arg, void __user *uarg);
long gpin_stats_reset(struct gpin_file *gf, void *arg, void __user *uarg);

#endif /* GPIN_INTERNAL_H */
