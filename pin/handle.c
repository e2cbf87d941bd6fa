// SPDX-License-Identifier: GPL-2.0
/*
 * PIN handles: GPIN_IOC_PIN pins a range long-term and names it by a
 * handle of the file; GPIN_IOC_UNPIN or the last close releases it.
 *
 * A handle's pages are charged to the process's pinned_vm (VmPin in
 * /proc/PID/status) against RLIMIT_MEMLOCK, unless it has CAP_IPC_LOCK,
 * as RDMA charges registered memory.  Not to locked_vm, which VFIO
 * charges: that is mlock()'s counter too, so a VM whose RAM is also
 * mlock()ed would be charged twice, and account_locked_vm() takes the
 * mmap_lock for writing, the lock gpin exists to stay off.
 *
 * A GPIN_PIN_DIO handle is also in the file's @spans, by address, where a
 * GPIN_DIO_PINNED request (dio.c) finds the pages of its buffers with no
 * pin work, and takes a use of the handle for as long as its I/O runs.
 * So a handle is refcounted: UNPIN and the last close only take it out of
 * the tables and drop the tables' use; the last use releases the pages.
 * The two tables change together, under the file's @pins_lock.
 * A lookup runs under RCU, beside an UNPIN that may take the handle away:
 * it keeps the handle only if its use count was not zero yet, and the
 * handle's memory outlives the grace period (kfree_rcu()).
 */
#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "gpin_internal.h"

static int gpin_charge_pinned(struct gpin_file *gf, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	s64 now = atomic64_add_return(npages, &gf->mm->pinned_vm);

	if (now > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &gf->mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

/* The mm_struct stays allocated (mmgrab() at open), the process need not. */
static void gpin_uncharge_pinned(struct gpin_file *gf, unsigned long npages)
{
	atomic64_sub(npages, &gf->mm->pinned_vm);
}

/*
 * The last use.  A write handle's pages are dirtied on release, as VFIO
 * and RDMA do: a device may have written them through the frame numbers
 * (or a GPIN_DIO_PINNED read through the handle), not through the
 * process's ptes, and a clean page could then be dropped or written back
 * without that data.  Process context: releasing may sleep.
 */
void gpin_handle_put(struct gpin_handle *h)
{
	struct gpin_file *gf = h->gf;
	unsigned long npages = h->r.npages;

	might_sleep();
	if (!refcount_dec_and_test(&h->users))
		return;
	gpin_range_release(&h->r, h->r.write);
	gpin_uncharge_pinned(gf, npages);
	gpin_file_unaccount(gf, npages);
	kfree_rcu(h, rcu);
	gpin_file_put(gf);
}

/* Any context: drop a use that is not the last; false, doing nothing, if it is. */
bool gpin_handle_put_unless_last(struct gpin_handle *h)
{
	return refcount_dec_not_one(&h->users);
}

/* The last byte of @h's range: the maple tree's ranges are inclusive. */
static unsigned long gpin_handle_last(const struct gpin_handle *h)
{
	return h->r.start + (h->r.npages << PAGE_SHIFT) - 1;
}

/**
 * gpin_span_get - the GPIN_PIN_DIO handle of @gf that holds [@start, @end)
 * @gf: the file whose handles are looked in
 * @start: first user address
 * @end: one past the last; @start < @end
 * @write: the pages will be written to: a write handle only
 *
 * Return: the handle with a use taken for the caller (gpin_handle_put()),
 * or NULL when no one handle holds the whole range.
 */
struct gpin_handle *gpin_span_get(struct gpin_file *gf, unsigned long start,
				  unsigned long end, bool write)
{
	struct gpin_handle *h;

	rcu_read_lock();
	h = mtree_load(&gf->spans, start);
	if (h && (end - h->r.start > h->r.npages << PAGE_SHIFT ||
		  (write && !h->r.write) || !refcount_inc_not_zero(&h->users)))
		h = NULL;
	rcu_read_unlock();
	return h;
}

static int gpin_copy_pfns(struct gpin_range *r, u64 __user *upfns)
{
	u64 buf[32];
	unsigned long i = 0;

	while (i < r->npages) {
		unsigned long n = min_t(unsigned long, r->npages - i,
					ARRAY_SIZE(buf));
		unsigned long j;

		for (j = 0; j < n; j++)
			buf[j] = page_to_pfn(r->pages[i + j]);
		if (copy_to_user(upfns + i, buf, n * sizeof(buf[0])))
			return -EFAULT;
		i += n;
	}
	return 0;
}

static int gpin_pin_check(const struct gpin_pin *p)
{
	unsigned long len;
	u64 end;

	if ((p->flags & ~GPIN_PIN_FLAGS_ALL) || p->mode >= GPIN_MODE_COUNT ||
	    p->reserved[0] || p->reserved[1])
		return -EINVAL;
	if (!p->npages || !PAGE_ALIGNED(p->start))
		return -EINVAL;
	if (p->npages > GPIN_MAX_PAGES_PER_PIN)
		return -E2BIG;
	len = p->npages << PAGE_SHIFT;
	if (check_add_overflow(p->start, (u64)len, &end))
		return -EOVERFLOW;
	if (!access_ok(u64_to_user_ptr(p->start), len))
		return -EFAULT;
	/* physical addresses: what /proc/PID/pagemap shows only to admins */
	if (p->pfns && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (p->pfns && !access_ok(u64_to_user_ptr(p->pfns),
				  p->npages * sizeof(u64)))
		return -EFAULT;
	return 0;
}

/*
 * Into the file's tables, under @pins_lock: a number, then, for
 * GPIN_PIN_DIO, the address range (EEXIST when it overlaps another).  In
 * that order because undoing the number takes no memory; undoing a range
 * might.  Once the lock is dropped another thread may find the handle by
 * address and take a use of it, or guess its number and retire it.
 * 0 or -errno, with *@handle.
 */
static int gpin_handle_insert(struct gpin_file *gf, struct gpin_handle *h,
			      u32 *handle)
{
	int ret;

	mutex_lock(&gf->pins_lock);
	ret = xa_alloc(&gf->pins, handle, h,
		       XA_LIMIT(1, GPIN_MAX_HANDLES_PER_FILE), GFP_KERNEL);
	if (ret == -EBUSY)
		ret = -ENOSPC;
	if (!ret && h->dio) {
		ret = mtree_insert_range(&gf->spans, h->r.start,
					 gpin_handle_last(h), h,
					 GFP_KERNEL_ACCOUNT);
		if (ret)
			xa_erase(&gf->pins, *handle);
	}
	mutex_unlock(&gf->pins_lock);
	return ret;
}

/*
 * Handle @handle out of the file's tables, under @pins_lock, so that no
 * new request finds it.  Taking a range out of the maple tree may need
 * memory (-ENOMEM); then nothing has changed.  Return: the handle, whose
 * tables' use the caller now holds, or an ERR_PTR().
 */
static struct gpin_handle *gpin_handle_remove(struct gpin_file *gf,
					      u32 handle)
{
	struct gpin_handle *h;
	int ret = 0;

	mutex_lock(&gf->pins_lock);
	h = handle ? xa_load(&gf->pins, handle) : NULL;
	if (!h)
		ret = -ENOENT;
	else if (h->dio)
		ret = mtree_store_range(&gf->spans, h->r.start,
					gpin_handle_last(h), NULL, GFP_KERNEL);
	if (!ret)
		xa_erase(&gf->pins, handle);
	mutex_unlock(&gf->pins_lock);
	return ret ? ERR_PTR(ret) : h;
}

/* GPIN_IOC_PIN */
long gpin_handle_pin(struct gpin_file *gf, void *arg, void __user *uarg)
{
	struct gpin_pin __user *up = uarg;
	struct gpin_pin *p = arg;
	struct gpin_handle *h, *old;
	u64 fast_pages;
	u32 handle;
	int ret;

	ret = gpin_pin_check(p);
	if (ret)
		return ret;
	ret = gpin_file_account(gf, p->npages);
	if (ret)
		return ret;
	ret = gpin_charge_pinned(gf, p->npages);
	if (ret)
		goto err_unaccount;
	h = kzalloc(sizeof(*h), GFP_KERNEL_ACCOUNT);
	if (!h) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	ret = gpin_range_pin(&h->r, p->start, p->npages, p->mode,
			     GPIN_RANGE_LONGTERM |
			     (p->flags & GPIN_PIN_WRITE ? GPIN_RANGE_WRITE : 0),
			     NULL, gf->stats);
	if (ret)
		goto err_free;
	if (p->pfns) {
		ret = gpin_copy_pfns(&h->r, u64_to_user_ptr(p->pfns));
		if (ret)
			goto err_release;
	}
	h->dio = p->flags & GPIN_PIN_DIO;
	refcount_set(&h->users, 1);
	gpin_file_get(gf);
	h->gf = gf;
	fast_pages = h->r.fast_pages;
	ret = gpin_handle_insert(gf, h, &handle);
	if (ret) {
		/* never seen by anyone: its one use is ours */
		gpin_handle_put(h);
		return ret;
	}

	if (put_user(handle, &up->handle) ||
	    put_user(fast_pages, &up->fast_pages)) {
		/*
		 * Another thread may have guessed the handle and unpinned;
		 * if it cannot be taken out now, the close releases it.
		 */
		old = gpin_handle_remove(gf, handle);
		if (!IS_ERR(old))
			gpin_handle_put(old);
		return -EFAULT;
	}
	return 0;

err_release:
	gpin_range_release(&h->r, false);
err_free:
	kfree(h);
err_uncharge:
	gpin_uncharge_pinned(gf, p->npages);
err_unaccount:
	gpin_file_unaccount(gf, p->npages);
	return ret;
}

/* GPIN_IOC_UNPIN */
long gpin_handle_unpin(struct gpin_file *gf, void *arg, void __user *uarg)
{
	struct gpin_unpin *u = arg;
	struct gpin_handle *h;

	if (u->flags || u->reserved)
		return -EINVAL;
	/* of two racing UNPINs, the second finds nothing: ENOENT */
	h = gpin_handle_remove(gf, u->handle);
	if (IS_ERR(h))
		return PTR_ERR(h);
	gpin_handle_put(h);
	return 0;
}

/*
 * Last close: every handle, up to GPIN_MAX_PAGES_PER_FILE pages, with a
 * chance to reschedule after each (and inside a large one, range.c).  A
 * handle still under direct I/O is released when that I/O is over.  No
 * lookup by address can run any more (each holds a reference to the
 * file), so the maple tree goes as a whole, after the handles.
 */
void gpin_handle_release_all(struct gpin_file *gf)
{
	struct gpin_handle *h;
	unsigned long index;

	xa_for_each(&gf->pins, index, h) {
		xa_erase(&gf->pins, index);
		gpin_handle_put(h);
		cond_resched();
	}
	xa_destroy(&gf->pins);
	mtree_destroy(&gf->spans);
}
