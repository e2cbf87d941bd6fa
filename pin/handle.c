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
 * A write handle's pages are dirtied on release, as VFIO and RDMA do: a
 * device may have written them through the frame numbers, not through
 * the process's ptes, and a clean page could then be dropped or written
 * back without that data.
 */
static void gpin_handle_drop(struct gpin_file *gf, struct gpin_range *r)
{
	unsigned long npages = r->npages;

	gpin_range_release(r, r->write);
	kfree(r);
	gpin_uncharge_pinned(gf, npages);
	gpin_file_unaccount(gf, npages);
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

/* GPIN_IOC_PIN */
long gpin_handle_pin(struct gpin_file *gf, void *arg, void __user *uarg)
{
	struct gpin_pin __user *up = uarg;
	struct gpin_pin *p = arg;
	struct gpin_range *r, *old;
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
	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	ret = gpin_range_pin(r, p->start, p->npages, p->mode,
			     GPIN_RANGE_LONGTERM |
			     (p->flags & GPIN_PIN_WRITE ? GPIN_RANGE_WRITE : 0),
			     NULL, gf->stats);
	if (ret)
		goto err_free;
	if (p->pfns) {
		ret = gpin_copy_pfns(r, u64_to_user_ptr(p->pfns));
		if (ret)
			goto err_release;
	}
	/*
	 * Once in the table, another thread may guess the handle and unpin
	 * it: @r is not ours to read after xa_alloc().
	 */
	fast_pages = r->fast_pages;
	ret = xa_alloc(&gf->pins, &handle, r,
		       XA_LIMIT(1, GPIN_MAX_HANDLES_PER_FILE), GFP_KERNEL);
	if (ret) {
		if (ret == -EBUSY)
			ret = -ENOSPC;
		goto err_release;
	}

	if (put_user(handle, &up->handle) ||
	    put_user(fast_pages, &up->fast_pages)) {
		/* Another thread may have guessed the handle and unpinned. */
		old = xa_erase(&gf->pins, handle);
		if (old)
			gpin_handle_drop(gf, old);
		return -EFAULT;
	}
	return 0;

err_release:
	gpin_range_release(r, false);
err_free:
	kfree(r);
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
	struct gpin_range *r;

	if (u->flags || u->reserved)
		return -EINVAL;
	/* xa_erase() is atomic: of two racing UNPINs, one gets ENOENT. */
	r = u->handle ? xa_erase(&gf->pins, u->handle) : NULL;
	if (!r)
		return -ENOENT;
	gpin_handle_drop(gf, r);
	return 0;
}

/*
 * Last close: every handle, up to GPIN_MAX_PAGES_PER_FILE pages, with a
 * chance to reschedule after each (and inside a large one, range.c).
 */
void gpin_handle_release_all(struct gpin_file *gf)
{
	struct gpin_range *r;
	unsigned long index;

	xa_for_each(&gf->pins, index, r) {
		xa_erase(&gf->pins, index);
		gpin_handle_drop(gf, r);
		cond_resched();
	}
	xa_destroy(&gf->pins);
}
