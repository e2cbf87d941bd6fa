/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gpin.ko internals: the device, the per-file context, the pinned-range
 * object and the statistics.
 */
#ifndef GPIN_INTERNAL_H
#define GPIN_INTERNAL_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include <gpin.h>

/* Per-CPU counters of one mode; summed (max for max_irqoff_ns) on read. */
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

/**
 * struct gpin_range - pages of one user range, pinned (FOLL_PIN)
 * @start: first user address
 * @npages: number of pages in @pages
 * @pages: the pinned pages, in address order
 * @mode: enum gpin_mode used to take them
 * @write: taken for writing (FOLL_WRITE)
 * @fast_pages: how many the lockless walk took
 *
 * The unit of pinning: a PIN handle owns one, and a direct I/O request
 * holds one per non-empty iovec segment (dio.c).
 */
struct gpin_range {
	unsigned long start;
	unsigned long npages;
	struct page **pages;
	u32 mode;
	bool write;
	unsigned long fast_pages;
};

/**
 * struct gpin_file - state of one open file of /dev/gpin
 * @mm: the mm of the opener (mmgrab()ed); the only mm the file acts on
 * @pins: handle -> struct gpin_range
 * @live_pages: pages held through @pins and by direct I/O requests not yet
 *	released
 * @dio_lock: protects @dio_events, @dio_inflight, @dio_closed and @eventfd
 *	(read without it once @dio_closed: nothing signals it then)
 * @dio_events: completed asynchronous requests, not yet reaped
 * @dio_inflight: submitted requests whose I/O has not completed
 * @dio_closed: the file was closed; completions go to gpin_dio_wq
 * @dio_reqs: submitted requests not yet reaped (<= GPIN_DIO_MAX_INFLIGHT)
 * @dio_orphans: requests in flight at close not yet released, plus one
 *	while the close itself runs; whoever counts it to zero frees the file
 * @eventfd: signalled once per completed asynchronous request, or NULL
 */
struct gpin_file {
	struct mm_struct *mm;
	struct xarray pins;
	atomic_long_t live_pages;

	spinlock_t dio_lock;
	struct list_head dio_events;
	unsigned int dio_inflight;
	bool dio_closed;
	atomic_t dio_reqs;
	atomic_t dio_orphans;
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

/* range.c */
#define GPIN_RANGE_WRITE	BIT(0)	/* the pages will be written to */
#define GPIN_RANGE_LONGTERM	BIT(1)	/* held indefinitely (PIN handles) */

int gpin_range_init(void);
void gpin_range_exit(void);
int gpin_range_pin(struct gpin_range *r, unsigned long start,
		   unsigned long npages, u32 mode, unsigned int flags);
void gpin_range_release(struct gpin_range *r, bool dirty);
void gpin_range_forget(struct gpin_range *r);

/* dio.c */
int gpin_dio_init(void);
void gpin_dio_exit(void);
void gpin_dio_file_init(struct gpin_file *gf);
bool gpin_dio_file_release(struct gpin_file *gf);
long gpin_dio_sync(struct gpin_file *gf, void __user *uarg);
long gpin_dio_submit(struct gpin_file *gf, void __user *uarg);
long gpin_dio_reap(struct gpin_file *gf, void __user *uarg);
long gpin_dio_set_eventfd(struct gpin_file *gf, void __user *uarg);

/* main.c */
int gpin_copy_in(void *dst, size_t ksize, void __user *uarg);
int gpin_check_caller(struct gpin_file *gf);
int gpin_file_account(struct gpin_file *gf, unsigned long npages);
void gpin_file_unaccount(struct gpin_file *gf, unsigned long npages);
void gpin_file_free(struct gpin_file *gf);

/* stats.c */
int gpin_stats_init(void);
void gpin_stats_exit(void);
struct gpin_pcpu_mode *gpin_stats_this_cpu(u32 mode);
void gpin_stats_put_cpu(void);
void gpin_stats_live(u32 mode, long delta);
void gpin_stats_irqoff(u32 mode, u64 ns);
void gpin_stats_dio(u32 mode, long res);
long gpin_live_pages(void);
void gpin_stats_read(struct gpin_stats *st);
void gpin_stats_reset(void);

#endif /* GPIN_INTERNAL_H */
