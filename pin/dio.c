// SPDX-License-Identifier: GPL-2.0
/*
 * Direct I/O on pinned pages: GPIN_IOC_DIO (synchronous) and
 * GPIN_IOC_DIO_SUBMIT / GPIN_IOC_DIO_REAP (asynchronous, batched).
 *
 * A request pins each iovec segment with gpin_range_pin() in the caller's
 * thread and mode, describes the pinned pages with a bio_vec array, and
 * hands an ITER_BVEC iterator to the file's ->read_iter/->write_iter
 * through vfs_iocb_iter_read()/vfs_iocb_iter_write() with IOCB_DIRECT set:
 * the kiocb path the kernel's aio uses, with our pages instead of
 * get_user_pages() of the iovec inside the filesystem or block layer.
 *
 * Two references, as fs/aio.c gives each iocb (ki_refcnt): one for the
 * submitter, dropped when ->read_iter/->write_iter has returned, one for
 * the completion.  A device that completes inside submit_bio() (brd,
 * zram, pmem, dm-error) runs ->ki_complete on the submitter's own stack,
 * and the file's code goes on using the kiocb, the iterator, its bvec
 * array and the file after that (iov_iter_revert() and _reexpand() in the
 * block device's read and write paths, file_accessed() after ext4's DIO
 * read).  So the request is finished only when both references are gone:
 * then its pages are unpinned (for a read, dirtied: whatever the result,
 * once the read reached the file, as the block layer and iomap do), its
 * file reference dropped, and its event published.  A published event
 * holds nothing but itself: a process that never reaps pins nothing, and
 * GPIN_DIO_MAX_INFLIGHT bounds the memory its events keep.
 *
 * The last reference may go in any context: a block driver's completion
 * interrupt or softirq, a timer, the submitter itself.  Unpinning is fine
 * there; dirtying a page that is not dirty yet takes the page lock, which
 * may sleep.  So a read whose pages are not all dirty already (the first
 * read into a buffer: anonymous pages stay dirty once marked) is finished
 * by a worker of gpin_dio_wq, as bio_check_pages_dirty() does for the
 * kernel's own direct reads; every other request is finished where its
 * last reference goes, with no wake-up between the device and the reaper.
 *
 * Closing the file does not wait for I/O in flight (file.c): a request
 * finished after the close has nobody to reap it and is freed at once, or,
 * when it finishes in a context that cannot free (the page arrays may be
 * vmalloc()ed, the file reference goes), by a worker of gpin_dio_wq.  Each
 * request holds a reference to the file, and a closed file holds the
 * module.
 *
 * Module unload against a completion still on its way out of our code:
 * until its event is published, a request holds the file, and the open or
 * closed file the module.  From the publish on, the reaper may take the
 * event, close the file and let rmmod run, while the completing context
 * still has a few instructions of ours to go (unlocking, returning), and,
 * if it is a task, may be preempted right there.  So unload
 * (gpin_dio_exit()) waits for both kinds of context that can be in module
 * text: synchronize_rcu() for completions that run with interrupts, bottom
 * halves or preemption disabled (block IRQs and softirqs, timers),
 * synchronize_rcu_tasks() for every task that might be running or
 * preempted in our code (a completion inside the submitter's own
 * ->read_iter, a dm or iomap completion worker, a threaded IRQ): it
 * returns only once each such task has passed a voluntary context switch,
 * which no task does inside gpin_dio_post() or on the way back from it.
 * destroy_workqueue() waits for our workers, whose last put of a closed
 * file drops the module reference just before they return.
 */
#include <linux/blkdev.h>
#include <linux/bvec.h>
#include <linux/compat.h>
#include <linux/delay.h>
#include <linux/eventfd.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/preempt.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/uio.h>
#include <linux/workqueue.h>

#include "gpin_compat.h"
#include "gpin_internal.h"

/* Kept in the request itself: segments, and pages (64 KiB) */
#define GPIN_DIO_INLINE_SEGS	4
#define GPIN_DIO_INLINE_PAGES	16

/**
 * struct gpin_dio_req - one direct I/O request, then its completion event
 * @iocb: the kiocb handed to the file; holds the file reference
 * @iter: bvec iterator over @bvec
 * @gf: owning file (a reference: file.c)
 * @refs: the submitter's and the completion's (top of file)
 * @node: in gf->dio_events once published
 * @work: finishes the request (dirtying pages) or frees it (orphan)
 * @submitter: the task that issued it (fault injection only)
 * @issuing: the submitter is inside the file's code for it, holding its
 *	reference (fault injection only)
 * @user_data: the caller's cookie
 * @res: bytes transferred or -errno
 * @mode: enum gpin_mode the pages were pinned with
 * @write: GPIN_DIO_WRITE (buffers are read, pages not dirtied)
 * @dirty: a read that reached the file: its pages are dirtied
 * @nr_ranges: pinned ranges in @ranges
 * @ranges: one per non-empty iovec segment
 * @bvec: one per page of @ranges, in order
 * @pages: the same pages, the ranges' page arrays end to end
 * @npages: pages counted in the file's live pages for this request
 * @inline_ranges, @inline_bvec, @inline_pages: the arrays of a small
 *	request (most are one 4 KiB segment), so that it costs one
 *	allocation, not five, as UIO_FASTIOV and a bio's inline vecs spare
 *	theirs
 */
struct gpin_dio_req {
	struct kiocb iocb;
	struct iov_iter iter;
	struct gpin_file *gf;
	refcount_t refs;
	struct list_head node;
	struct work_struct work;
	struct task_struct *submitter;
	bool issuing;
	u64 user_data;
	long res;
	u32 mode;
	bool write;
	bool dirty;
	unsigned int nr_ranges;
	struct gpin_range *ranges;
	struct bio_vec *bvec;
	struct page **pages;
	unsigned long npages;
	struct gpin_range inline_ranges[GPIN_DIO_INLINE_SEGS];
	struct bio_vec inline_bvec[GPIN_DIO_INLINE_PAGES];
	struct page *inline_pages[GPIN_DIO_INLINE_PAGES];
};

static struct workqueue_struct *gpin_dio_wq;

/*
 * Fault injection for the tests (test_dio_close_inflight): microseconds
 * the close sleeps after it stopped publishing events and before it frees
 * the completed ones, so that requests in flight finish inside that
 * window, as they may by chance.  0 (no sleep) unless a test sets it; at
 * most 1 s.
 */
static unsigned int gpin_close_delay_us;
module_param_named(close_delay_us, gpin_close_delay_us, uint, 0600);
MODULE_PARM_DESC(close_delay_us,
		 "fault injection for the tests: a close sleeps this long before it frees its completed requests (0, the default: never; at most 1 s)");

/*
 * Fault injection for the tests (tests/pin, stress): microseconds a
 * completion that runs on its submitter's own stack (a device that
 * completes inside submit_bio()) sleeps once it has done its part, before
 * it returns into the file's code.  Without the submitter's reference the
 * reaper could free the request meanwhile and the file's code would then
 * use it (the use after free fs/aio.c's ki_refcnt exists for); a window
 * of microseconds that the sleep makes wide enough to hit every time.
 * 0 (no sleep) unless a test sets it; at most 100 ms.
 */
static unsigned int gpin_complete_delay_us;
module_param_named(complete_delay_us, gpin_complete_delay_us, uint, 0600);
MODULE_PARM_DESC(complete_delay_us,
		 "fault injection for the tests: a completion on its submitter's stack sleeps this long there (0, the default: never; at most 100 ms)");

/* Pages of synchronous requests that a file queued: pinned for good. */
static atomic_long_t gpin_dio_leaked;

static struct gpin_dio_req *gpin_dio_req_alloc(struct gpin_file *gf)
{
	struct gpin_dio_req *req = kzalloc(sizeof(*req), GFP_KERNEL_ACCOUNT);

	if (!req)
		return NULL;
	gpin_file_get(gf);
	req->gf = gf;
	refcount_set(&req->refs, 1);
	return req;
}

/*
 * The request's ranges, bio_vecs and, when it pins (@pin), page pointers:
 * in the request when they fit, else allocated.  A GPIN_DIO_PINNED
 * request's ranges point into its handles' page arrays: no array of its
 * own.  -ENOMEM, or 0.
 */
static int gpin_dio_alloc_arrays(struct gpin_dio_req *req, unsigned int nb,
				 unsigned long npages, bool pin)
{
	req->ranges = req->inline_ranges;
	if (nb > GPIN_DIO_INLINE_SEGS)
		req->ranges = kcalloc(nb, sizeof(*req->ranges),
				      GFP_KERNEL_ACCOUNT);
	req->bvec = req->inline_bvec;
	req->pages = req->inline_pages;
	if (npages > GPIN_DIO_INLINE_PAGES) {
		req->bvec = kvmalloc_array(npages, sizeof(*req->bvec),
					   GFP_KERNEL_ACCOUNT);
		if (pin)
			req->pages = kvmalloc_array(npages,
						    sizeof(*req->pages),
						    GFP_KERNEL_ACCOUNT);
	}
	return req->ranges && req->bvec && req->pages ? 0 : -ENOMEM;
}

static void gpin_dio_free_arrays(struct gpin_dio_req *req)
{
	if (req->ranges != req->inline_ranges)
		kfree(req->ranges);
	if (req->bvec != req->inline_bvec)
		kvfree(req->bvec);
	if (req->pages != req->inline_pages)
		kvfree(req->pages);
}

/*
 * Process context: the uses of PIN handles a GPIN_DIO_PINNED request
 * holds, their pages dirtied first when @dirty (a read into them: the
 * handle keeps its pins, so unpinning cannot dirty them).
 */
static void gpin_dio_return_views(struct gpin_dio_req *req, bool dirty)
{
	unsigned int i;
	unsigned long j;

	for (i = 0; i < req->nr_ranges; i++) {
		struct gpin_range *r = &req->ranges[i];

		if (!r->lender)
			continue;
		for (j = 0; dirty && j < r->npages; j++)
			if (!folio_test_dirty(page_folio(r->pages[j])))
				set_page_dirty_lock(r->pages[j]);
		gpin_handle_put(r->lender);
		r->lender = NULL;
	}
}

/*
 * Any context: the same without dirtying, as long as no use is a
 * handle's last (whose release sleeps); false when one is, and the rest
 * is left to gpin_dio_return_views().
 */
static bool gpin_dio_return_views_atomic(struct gpin_dio_req *req)
{
	unsigned int i;

	for (i = 0; i < req->nr_ranges; i++) {
		struct gpin_range *r = &req->ranges[i];

		if (!r->lender)
			continue;
		if (!gpin_handle_put_unless_last(r->lender))
			return false;
		r->lender = NULL;
	}
	return true;
}

/*
 * Process context: whatever the request still holds (everything, on an
 * error before the I/O; only itself, once finished), then the request.
 */
static void gpin_dio_req_free(struct gpin_dio_req *req)
{
	struct gpin_file *gf = req->gf;
	unsigned int i;

	might_sleep();
	/* a synchronous read's, or what an error before the I/O left */
	gpin_dio_return_views(req, req->dirty);
	for (i = 0; i < req->nr_ranges; i++)
		gpin_range_release(&req->ranges[i], req->dirty);
	gpin_dio_free_arrays(req);
	gpin_file_unaccount(gf, req->npages);
	if (req->iocb.ki_filp)
		fput(req->iocb.ki_filp);
	kfree(req);
	gpin_file_put(gf);
}

/*
 * The I/O is over and nobody uses the request for it any more: unpin the
 * pages (or return the handles' uses) and drop the file.  Returns false
 * when @can_sleep is false and what is left needs a context that can:
 * a read's pages dirtied under the page lock, a handle's last use.
 */
static bool gpin_dio_release(struct gpin_dio_req *req, bool can_sleep)
{
	bool dirty = req->dirty;
	unsigned int i;

	if (dirty && !can_sleep) {
		for (i = 0; i < req->nr_ranges; i++)
			if (!gpin_range_dirty(&req->ranges[i]))
				return false;
		dirty = false;	/* all dirty already: a plain unpin */
	}
	if (!can_sleep && !gpin_dio_return_views_atomic(req))
		return false;
	gpin_dio_return_views(req, dirty);
	for (i = 0; i < req->nr_ranges; i++)
		gpin_range_unpin(&req->ranges[i], dirty);
	gpin_file_unaccount(req->gf, req->npages);
	req->npages = 0;
	fput(req->iocb.ki_filp);
	req->iocb.ki_filp = NULL;
	gpin_stats_dio(req->gf->stats, req->mode, req->res);
	return true;
}

static void gpin_dio_orphan_work(struct work_struct *work)
{
	gpin_dio_req_free(container_of(work, struct gpin_dio_req, work));
}

/*
 * Make the finished @req an event, or, once the file is closed, free it.
 * The unlock publishes it: from there on neither @req nor the file may be
 * touched (the reaper may free both) and the module may be going away;
 * see the top of this file for why unload still waits for us.
 */
static void gpin_dio_post(struct gpin_dio_req *req, bool can_sleep)
{
	struct gpin_file *gf = req->gf;
	unsigned long flags;
	bool closed;

	spin_lock_irqsave(&gf->dio_lock, flags);
	closed = gf->dio_closed;
	if (!closed) {
		list_add_tail(&req->node, &gf->dio_events);
		if (gf->eventfd)
			gpin_eventfd_signal(gf->eventfd);
	}
	spin_unlock_irqrestore(&gf->dio_lock, flags);
	if (!closed)
		return;
	/* nobody reaps any more */
	if (can_sleep) {
		gpin_dio_req_free(req);
	} else {
		INIT_WORK(&req->work, gpin_dio_orphan_work);
		queue_work(gpin_dio_wq, &req->work);
	}
}

static void gpin_dio_dirty_work(struct work_struct *work)
{
	struct gpin_dio_req *req = container_of(work, struct gpin_dio_req,
						work);

	gpin_dio_release(req, true);
	gpin_dio_post(req, true);
}

/*
 * Drop one of the two references (top of file); the last finishes the
 * request.  @can_sleep: the caller is in process context and holds no
 * lock (the submitter); a completion may be in any context.
 */
static void gpin_dio_put(struct gpin_dio_req *req, bool can_sleep)
{
	if (!refcount_dec_and_test(&req->refs))
		return;
	if (!gpin_dio_release(req, can_sleep)) {
		INIT_WORK(&req->work, gpin_dio_dirty_work);
		queue_work(gpin_dio_wq, &req->work);
		return;
	}
	gpin_dio_post(req, can_sleep);
}

/*
 * What an event says: bytes or an errno user space knows.  The kernel's
 * restart codes must not escape a system call (aio maps them too): the
 * request cannot be restarted behind the caller's back.
 */
static long gpin_dio_result(long res)
{
	switch (res) {
	case -ERESTARTSYS:
	case -ERESTARTNOINTR:
	case -ERESTARTNOHAND:
	case -ERESTART_RESTARTBLOCK:
		return -EINTR;
	default:
		return res;
	}
}

static int gpin_dio_check(const struct gpin_dio *d)
{
	bool pinned = d->flags & GPIN_DIO_PINNED;

	if ((d->flags & ~GPIN_DIO_FLAGS_ALL) || d->reserved0 ||
	    d->reserved[0] || d->op > GPIN_DIO_WRITE ||
	    d->mode >= GPIN_MODE_COUNT || (pinned ? d->mode : d->pins_fd) ||
	    !d->nr_segs || (s64)d->offset < 0)
		return -EINVAL;
	if (d->nr_segs > GPIN_DIO_MAX_SEGS)
		return -E2BIG;
	/* struct iovec of a 32-bit caller has another layout */
	if (in_compat_syscall())
		return -EOPNOTSUPP;
	return 0;
}

/* The file the I/O goes to, open for it and able to do direct I/O. */
static int gpin_dio_get_file(struct gpin_dio_req *req, int fd)
{
	struct file *file = fget(fd);
	umode_t type;

	if (!file)
		return -EBADF;
	req->iocb.ki_filp = file;
	if (!(file->f_mode & (req->write ? FMODE_WRITE : FMODE_READ)))
		return -EBADF;
	type = file_inode(file)->i_mode & S_IFMT;
	if ((type != S_IFREG && type != S_IFBLK) ||
	    !(file->f_mode & FMODE_CAN_ODIRECT))
		return -EINVAL;
	return 0;
}

/*
 * GPIN_DIO_PINNED: the /dev/gpin file @fd, whose handles hold the
 * buffers; it must act on our mm, or its pages are not the caller's.
 */
static int gpin_dio_get_pins(struct gpin_dio_req *req, int fd,
			     struct file **pfile)
{
	struct gpin_file *src;

	*pfile = gpin_fget(fd);
	if (!*pfile)
		return -EBADF;
	src = (*pfile)->private_data;
	return src->mm == req->gf->mm ? 0 : -EPERM;
}

/*
 * The segments' sizes and pages: *@nb non-empty ones, *@bytes and
 * *@npages in all.
 */
static int gpin_dio_measure(const struct iovec *iov, unsigned int nr_segs,
			    unsigned int *nb, size_t *bytes,
			    unsigned long *npages)
{
	unsigned int i;

	for (i = 0; i < nr_segs; i++) {
		unsigned long base = (unsigned long)iov[i].iov_base;
		size_t len = iov[i].iov_len;
		unsigned long end;

		if (!len)
			continue;
		if (len > GPIN_DIO_MAX_BYTES ||
		    check_add_overflow(*bytes, len, bytes) ||
		    *bytes > GPIN_DIO_MAX_BYTES)
			return -E2BIG;
		if (check_add_overflow(base, len, &end) ||
		    !access_ok(iov[i].iov_base, len))
			return -EFAULT;
		*npages += (PAGE_ALIGN(end) - (base & PAGE_MASK)) >> PAGE_SHIFT;
		(*nb)++;
	}
	return 0;
}

/*
 * Range @r becomes a view of the pages of the handle of @src that holds
 * [@start, @start + @npages pages), with a use of that handle.
 */
static int gpin_dio_lend(struct gpin_dio_req *req, struct gpin_file *src,
			 struct gpin_range *r, unsigned long start,
			 unsigned long npages)
{
	struct gpin_handle *h;

	/* READ: the device writes into the buffers */
	h = gpin_span_get(src, start, start + (npages << PAGE_SHIFT),
			  !req->write);
	if (!h)
		return -EFAULT;
	*r = (struct gpin_range){
		.start = start,
		.npages = npages,
		.pages = h->r.pages + ((start - h->r.start) >> PAGE_SHIFT),
		.stats = req->gf->stats,
		.mode = h->r.mode,
		.write = !req->write,
		.lender = h,
	};
	/* counted under the mode that pinned the first segment's pages */
	if (!req->nr_ranges)
		req->mode = h->r.mode;
	return 0;
}

/* One bio_vec per page of the segment [@base, @base + @len) in @r. */
static void gpin_dio_add_bvecs(struct gpin_dio_req *req,
			       const struct gpin_range *r, unsigned long base,
			       size_t len, unsigned long *nbv)
{
	unsigned int off = offset_in_page(base);
	unsigned long j;

	for (j = 0; j < r->npages; j++) {
		struct bio_vec *bv = &req->bvec[(*nbv)++];
		size_t n = min_t(size_t, len, PAGE_SIZE - off);

		bv->bv_page = r->pages[j];
		bv->bv_offset = off;
		bv->bv_len = n;
		len -= n;
		off = 0;
	}
}

/*
 * Each non-empty segment's pages into a range of @req: pinned in
 * @d->mode, or, with @pins, lent by a handle of that file.
 */
static int gpin_dio_take_pages(struct gpin_dio_req *req,
			       const struct gpin_dio *d,
			       const struct iovec *iov, struct gpin_file *pins)
{
	unsigned long nbv = 0;
	unsigned int i;
	int ret;

	for (i = 0; i < d->nr_segs; i++) {
		unsigned long base = (unsigned long)iov[i].iov_base;
		size_t len = iov[i].iov_len;
		unsigned long start = base & PAGE_MASK;
		unsigned long n = (PAGE_ALIGN(base + len) - start) >> PAGE_SHIFT;
		struct gpin_range *r = &req->ranges[req->nr_ranges];

		if (!len)
			continue;
		if (pins)
			ret = gpin_dio_lend(req, pins, r, start, n);
		else	/* READ: the device writes into the buffers */
			ret = gpin_range_pin(r, start, n, d->mode,
					     req->write ? 0 : GPIN_RANGE_WRITE,
					     req->pages + nbv, req->gf->stats);
		if (ret)
			return ret;
		req->nr_ranges++;
		gpin_dio_add_bvecs(req, r, base, len, &nbv);
	}
	return 0;
}

/*
 * Validate @d, take the file, pin (or borrow) the buffers and build the
 * iterator.  On error what is held is the request's (the caller frees
 * @req).
 */
static int gpin_dio_prep(struct gpin_dio_req *req, const struct gpin_dio *d)
{
	struct iovec fast_iov[UIO_FASTIOV], *iov = fast_iov;
	struct file *pfile = NULL;
	unsigned long npages = 0;
	unsigned int nb = 0;
	size_t bytes = 0;
	int ret;

	ret = gpin_dio_check(d);
	if (ret)
		return ret;
	req->write = d->op == GPIN_DIO_WRITE;
	req->mode = d->mode;
	req->user_data = d->user_data;
	ret = gpin_dio_get_file(req, d->fd);
	if (ret)
		return ret;
	if (d->flags & GPIN_DIO_PINNED) {
		ret = gpin_dio_get_pins(req, d->pins_fd, &pfile);
		if (ret)
			goto out;
	}

	/* most requests are a few segments: no allocation for them */
	if (d->nr_segs > UIO_FASTIOV) {
		iov = memdup_user(u64_to_user_ptr(d->iov),
				  array_size(d->nr_segs, sizeof(*iov)));
		if (IS_ERR(iov)) {
			ret = PTR_ERR(iov);
			iov = fast_iov;
			goto out;
		}
	} else if (copy_from_user(fast_iov, u64_to_user_ptr(d->iov),
				  d->nr_segs * sizeof(*iov))) {
		ret = -EFAULT;
		goto out;
	}
	ret = gpin_dio_measure(iov, d->nr_segs, &nb, &bytes, &npages);
	if (ret)
		goto out;

	/* in flight, pages pinned for it count against the file's limit */
	if (!pfile) {
		ret = gpin_file_account(req->gf, npages);
		if (ret)
			goto out;
		req->npages = npages;
	}
	ret = gpin_dio_alloc_arrays(req, nb, npages, !pfile);
	if (!ret)
		ret = gpin_dio_take_pages(req, d, iov,
					  pfile ? pfile->private_data : NULL);
	if (!ret)
		iov_iter_bvec(&req->iter, req->write ? ITER_SOURCE : ITER_DEST,
			      req->bvec, npages, bytes);
out:
	if (iov != fast_iov)
		kfree(iov);
	if (pfile)
		fput(pfile);
	return ret;
}

/*
 * The kiocb: IOCB_DIRECT whatever the file was opened with, so a file
 * opened without O_DIRECT still gets direct I/O on our pages (the file was
 * checked for FMODE_CAN_ODIRECT).
 */
static void gpin_dio_init_kiocb(struct gpin_dio_req *req, u64 offset)
{
	struct file *file = req->iocb.ki_filp;

	init_sync_kiocb(&req->iocb, file);
	req->iocb.ki_pos = offset;
	req->iocb.ki_flags |= IOCB_DIRECT;
	if (req->write)
		req->iocb.ki_flags |= IOCB_WRITE;
}

static ssize_t gpin_dio_issue(struct gpin_dio_req *req)
{
	ssize_t ret;

	if (!req->write)
		return vfs_iocb_iter_read(req->iocb.ki_filp, &req->iocb,
					  &req->iter);
	gpin_write_begin(&req->iocb);
	ret = vfs_iocb_iter_write(req->iocb.ki_filp, &req->iocb, &req->iter);
	/* once queued, @req may already be completed and reaped */
	if (ret != -EIOCBQUEUED)
		gpin_write_end(&req->iocb, false);
	return ret;
}

/*
 * A file that returns -EIOCBQUEUED for a synchronous kiocb (no
 * ->ki_complete; the VFS's own synchronous paths BUG() on it) still has our
 * pages under I/O and will never say when it is done: neither the pages,
 * nor the file reference, nor @req may ever be released.  They are leaked,
 * and taken out of the accounting of what can be released - the file's
 * live pages, the module's pins and live pages - so that closing the file
 * and unloading the module stay consistent (no WARN for pages nobody can
 * release); gpin_dio_leaked keeps the count, reported now and at unload.
 * Nothing of the module is left behind: the kiocb has no callback.  A
 * write also keeps its freeze protection (6.1: gpin_write_begin()), so the
 * filesystem cannot be frozen any more: the I/O may still be writing.
 */
static void gpin_dio_leak(struct gpin_dio_req *req)
{
	unsigned long pages = req->npages;
	unsigned int i;

	/*
	 * A view keeps its handle's use: that handle's pages stay pinned
	 * for good too, and its file, closed or not, keeps the module.
	 */
	for (i = 0; i < req->nr_ranges; i++) {
		if (req->ranges[i].lender)
			pages += req->ranges[i].npages;
		else
			gpin_range_forget(&req->ranges[i]);
	}
	gpin_file_unaccount(req->gf, req->npages);
	atomic_long_add(pages, &gpin_dio_leaked);
	pr_err("gpin: %pD queued a synchronous direct I/O: %lu pages stay pinned for good\n",
	       req->iocb.ki_filp, pages);
	/* the leaked request must not keep the file, nor so the module */
	gpin_file_put(req->gf);
	req->gf = NULL;
}

/* GPIN_IOC_DIO: one request, done when the ioctl returns. */
long gpin_dio_sync(struct gpin_file *gf, void *arg, void __user *uarg)
{
	struct gpin_dio *d = arg;
	struct gpin_dio_req *req;
	long ret;

	req = gpin_dio_req_alloc(gf);
	if (!req)
		return -ENOMEM;
	ret = gpin_dio_prep(req, d);
	if (ret)
		goto out;
	/* a sync kiocb (no ->ki_complete): the file waits for the I/O */
	gpin_dio_init_kiocb(req, d->offset);
	req->dirty = !req->write;
	ret = gpin_dio_issue(req);
	if (WARN_ON_ONCE(ret == -EIOCBQUEUED)) {
		gpin_dio_leak(req);
		return -EIO;
	}
	req->res = ret;
	gpin_stats_dio(gf->stats, req->mode, ret);
out:
	gpin_dio_req_free(req);
	return ret;
}

/*
 * A completion on its submitter's own stack while the submitter is inside
 * the file's code for this request (so it holds its reference, and the
 * file and the module stay), in a context that may sleep: where
 * gpin_complete_delay_us widens the window that reference closes (top of
 * file).  Not any completion on that task: one of an earlier request,
 * run when a plug is flushed, may be its request's last reference.
 */
static bool gpin_dio_on_submitter(const struct gpin_dio_req *req)
{
	return READ_ONCE(gpin_complete_delay_us) && req->issuing &&
	       current == req->submitter && preemptible() &&
	       !rcu_preempt_depth();
}

/* ->ki_complete: any context, possibly hard IRQ. */
static void gpin_dio_complete(struct kiocb *iocb, long res)
{
	struct gpin_dio_req *req = container_of(iocb, struct gpin_dio_req,
						iocb);
	bool delay = gpin_dio_on_submitter(req);

	req->res = gpin_dio_result(res);
	if (req->write)
		gpin_write_end(&req->iocb, true);
	gpin_dio_put(req, false);
	/* @req lives on: its submitter, below us, still holds a reference */
	if (delay)
		fsleep(min_t(unsigned int, READ_ONCE(gpin_complete_delay_us),
			     100 * USEC_PER_MSEC));
}

/* Start one request of a SUBMIT; on error nothing is held. */
static int gpin_dio_submit_one(struct gpin_file *gf, const struct gpin_dio *d)
{
	struct gpin_dio_req *req;
	ssize_t ret;

	if (atomic_inc_return(&gf->dio_reqs) > GPIN_DIO_MAX_INFLIGHT) {
		ret = -EAGAIN;
		goto err_unaccount;
	}
	req = gpin_dio_req_alloc(gf);
	if (!req) {
		ret = -ENOMEM;
		goto err_unaccount;
	}
	ret = gpin_dio_prep(req, d);
	if (ret)
		goto err_free;

	gpin_dio_init_kiocb(req, d->offset);
	req->iocb.ki_complete = gpin_dio_complete;
	req->submitter = current;
	req->dirty = !req->write;
	/* ours and the completion's (top of file) */
	refcount_set(&req->refs, 2);
	req->issuing = true;
	ret = gpin_dio_issue(req);
	req->issuing = false;
	if (ret != -EIOCBQUEUED) {
		/* done or failed without ->ki_complete: its reference too */
		req->res = gpin_dio_result(ret);
		gpin_dio_put(req, true);
	}
	gpin_dio_put(req, true);
	return 0;

err_free:
	gpin_dio_req_free(req);
err_unaccount:
	atomic_dec(&gf->dio_reqs);
	return ret;
}

/* GPIN_IOC_DIO_SUBMIT */
long gpin_dio_submit(struct gpin_file *gf, void *arg, void __user *uarg)
{
	struct gpin_dio_submit *s = arg;
	struct blk_plug plug;
	struct gpin_dio d;
	u32 stride, size;
	unsigned int i;
	int ret;

	if (s->flags || s->reserved0 || s->reserved[0] || s->reserved[1] ||
	    !s->nr)
		return -EINVAL;
	if (s->nr > GPIN_DIO_MAX_BATCH)
		return -E2BIG;
	if (get_user(stride, (u32 __user *)u64_to_user_ptr(s->reqs)))
		return -EFAULT;
	if (stride < sizeof(d))
		return -EINVAL;
	if (stride > PAGE_SIZE)
		return -E2BIG;

	/*
	 * One plug for the batch, as io_uring and aio have: the block layer
	 * hands the driver the batch's requests together, not one by one.
	 */
	blk_start_plug(&plug);
	for (i = 0; i < s->nr; i++) {
		void __user *ud = u64_to_user_ptr(s->reqs + (u64)i * stride);

		if (get_user(size, (u32 __user *)ud)) {
			ret = -EFAULT;
			break;
		}
		if (size != stride) {
			ret = -EINVAL;
			break;
		}
		ret = gpin_copy_in(&d, sizeof(d), ud);
		if (!ret)
			ret = gpin_dio_submit_one(gf, &d);
		if (ret)
			break;
	}
	blk_finish_plug(&plug);
	return i ? i : ret;
}

/* GPIN_IOC_DIO_REAP: copy out up to nr events, never blocks. */
long gpin_dio_reap(struct gpin_file *gf, void *arg, void __user *uarg)
{
	struct gpin_dio_reap __user *ur = uarg;
	struct gpin_dio_reap *r = arg;
	struct gpin_dio_req *req, *tmp;
	struct gpin_dio_event *ev;
	unsigned int n = 0, max;
	LIST_HEAD(done);
	int ret;

	if (r->flags || r->reserved0 || !r->nr)
		return -EINVAL;
	max = min_t(u32, r->nr, GPIN_DIO_MAX_BATCH);
	/*
	 * @inflight must be writable before any event is taken: a failure
	 * after the events left the list would lose them.
	 */
	if (put_user((u64)atomic_read(&gf->dio_reqs), &ur->inflight))
		return -EFAULT;

	/* IRQs off for at most GPIN_DIO_MAX_BATCH list moves */
	spin_lock_irq(&gf->dio_lock);
	list_for_each_entry_safe(req, tmp, &gf->dio_events, node) {
		if (n == max)
			break;
		list_move_tail(&req->node, &done);
		n++;
	}
	spin_unlock_irq(&gf->dio_lock);
	if (!n)
		return 0;

	/* sized to what was taken: a reaper polls with room for many */
	ev = kmalloc_array(n, sizeof(*ev), GFP_KERNEL);
	if (!ev) {
		ret = -ENOMEM;
		goto put_back;
	}
	n = 0;
	list_for_each_entry(req, &done, node) {
		ev[n] = (struct gpin_dio_event){
			.user_data = req->user_data,
			.result = req->res,
		};
		n++;
	}
	if (copy_to_user(u64_to_user_ptr(r->events), ev, n * sizeof(*ev))) {
		ret = -EFAULT;
		kfree(ev);
		goto put_back;
	}
	kfree(ev);
	list_for_each_entry_safe(req, tmp, &done, node)
		gpin_dio_req_free(req);
	atomic_sub(n, &gf->dio_reqs);
	/*
	 * Delivered: say so, whatever happens to this second write (another
	 * thread may have unmapped @ur meanwhile; the count is only a hint).
	 */
	if (put_user((u64)atomic_read(&gf->dio_reqs), &ur->inflight))
		pr_debug("gpin: REAP: inflight not written back\n");
	return n;

put_back:
	/* back at the head, in order, for the next try */
	spin_lock_irq(&gf->dio_lock);
	list_splice(&done, &gf->dio_events);
	spin_unlock_irq(&gf->dio_lock);
	return ret;
}

/* GPIN_IOC_SET_EVENTFD */
long gpin_dio_set_eventfd(struct gpin_file *gf, void *arg,
			  void __user *uarg)
{
	struct gpin_set_eventfd *e = arg;
	struct eventfd_ctx *ctx = NULL, *old;

	if (e->flags || e->reserved || e->fd < -1)
		return -EINVAL;
	if (e->fd >= 0) {
		ctx = eventfd_ctx_fdget(e->fd);
		if (IS_ERR(ctx))
			return PTR_ERR(ctx);
	}
	spin_lock_irq(&gf->dio_lock);
	old = gf->eventfd;
	gf->eventfd = ctx;
	spin_unlock_irq(&gf->dio_lock);
	if (old)
		eventfd_ctx_put(old);
	return 0;
}

void gpin_dio_file_init(struct gpin_file *gf)
{
	spin_lock_init(&gf->dio_lock);
	INIT_LIST_HEAD(&gf->dio_events);
	gf->dio_closed = false;
	atomic_set(&gf->dio_reqs, 0);
	gf->eventfd = NULL;
}

/**
 * gpin_dio_file_close - last close: the file's direct I/O
 * @gf: the file
 *
 * From here on nothing is published: requests still in flight free
 * themselves when they finish (each holds a reference to @gf).  The
 * completed requests nobody reaped are freed now; they hold no pages.
 */
void gpin_dio_file_close(struct gpin_file *gf)
{
	struct gpin_dio_req *req, *tmp;
	struct eventfd_ctx *ctx;
	unsigned int delay;
	LIST_HEAD(done);

	spin_lock_irq(&gf->dio_lock);
	gf->dio_closed = true;
	list_splice_init(&gf->dio_events, &done);
	ctx = gf->eventfd;
	gf->eventfd = NULL;
	spin_unlock_irq(&gf->dio_lock);

	delay = READ_ONCE(gpin_close_delay_us);
	if (delay)
		fsleep(min_t(unsigned int, delay, USEC_PER_SEC));
	list_for_each_entry_safe(req, tmp, &done, node)
		gpin_dio_req_free(req);
	if (ctx)
		eventfd_ctx_put(ctx);
}

int gpin_dio_init(void)
{
	gpin_dio_wq = alloc_workqueue("gpin_dio", WQ_UNBOUND, 0);
	return gpin_dio_wq ? 0 : -ENOMEM;
}

void gpin_dio_exit(void)
{
	long leaked = atomic_long_read(&gpin_dio_leaked);

	/* after a worker's last put of a closed file: waits for it to return */
	destroy_workqueue(gpin_dio_wq);
	/*
	 * Completions on their way out of gpin_dio_post(): in IRQ, softirq
	 * or other non-preemptible context, then in tasks (top of file).
	 */
	synchronize_rcu();
	synchronize_rcu_tasks();
	if (leaked)
		pr_warn("gpin: unloaded with %ld pages of queued synchronous I/O still pinned\n",
			leaked);
}
