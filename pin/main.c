// SPDX-License-Identifier: GPL-2.0
/*
 * gpin.ko: /dev/gpin, pinning of the calling process's own pages.
 *
 * Each open file is a struct gpin_file: the mm it acts on, a table of
 * pinned ranges by handle, and its direct I/O requests (dio.c).  Its PIN
 * handles are released at its last close, its direct I/O when that
 * completes; the module cannot be unloaded while a file is open or a
 * closed file's I/O is in flight (the file holds a module reference, and
 * so does the orphan it leaves), so nothing outlives the module.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "gpin_internal.h"

/* The page behind the device's own (VM_PFNMAP) mmap. */
static struct page *gpin_special_page;

/*
 * Copy a struct that starts with "__u32 size; __u32 flags;" from user
 * space.  Smaller than we know: -EINVAL; larger: fine if the unknown tail
 * is zero (-E2BIG otherwise, from copy_struct_from_user()).
 */
int gpin_copy_in(void *dst, size_t ksize, void __user *uarg)
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

/* Only the mm that opened the file, never a kernel thread. */
int gpin_check_caller(struct gpin_file *gf)
{
	if ((current->flags & PF_KTHREAD) || current->mm != gf->mm)
		return -EPERM;
	return 0;
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

/*
 * A PIN handle's charge to the process, as VFIO and io_uring's fixed
 * buffers charge theirs: mm->pinned_vm against RLIMIT_MEMLOCK, unless the
 * caller may lock memory without limit.
 */
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

static void gpin_uncharge_pinned(struct gpin_file *gf, unsigned long npages)
{
	atomic64_sub(npages, &gf->mm->pinned_vm);
}

static void gpin_file_drop(struct gpin_file *gf, struct gpin_range *r)
{
	unsigned long npages = r->npages;

	gpin_range_release(r, false);
	kfree(r);
	gpin_uncharge_pinned(gf, npages);
	gpin_file_unaccount(gf, npages);
}

/* Pages a file holds (PIN handles and direct I/O), at most a file's worth. */
int gpin_file_account(struct gpin_file *gf, unsigned long npages)
{
	if (atomic_long_add_return(npages, &gf->live_pages) >
	    GPIN_MAX_PAGES_PER_FILE) {
		atomic_long_sub(npages, &gf->live_pages);
		return -ENOSPC;
	}
	return 0;
}

void gpin_file_unaccount(struct gpin_file *gf, unsigned long npages)
{
	atomic_long_sub(npages, &gf->live_pages);
}

static long gpin_ioctl_pin(struct gpin_file *gf, void __user *uarg)
{
	struct gpin_pin __user *up = uarg;
	struct gpin_range *r, *old;
	struct gpin_pin p;
	unsigned long len;
	u64 end;
	u32 handle;
	int ret;

	ret = gpin_check_caller(gf);
	if (ret)
		return ret;
	ret = gpin_copy_in(&p, sizeof(p), uarg);
	if (ret)
		return ret;
	if ((p.flags & ~GPIN_PIN_FLAGS_ALL) || p.mode >= GPIN_MODE_COUNT ||
	    p.reserved[0] || p.reserved[1])
		return -EINVAL;
	if (!p.npages || !PAGE_ALIGNED(p.start))
		return -EINVAL;
	if (p.npages > GPIN_MAX_PAGES_PER_PIN)
		return -E2BIG;
	len = p.npages << PAGE_SHIFT;
	if (check_add_overflow(p.start, (u64)len, &end))
		return -EOVERFLOW;
	if (!access_ok(u64_to_user_ptr(p.start), len))
		return -EFAULT;
	/* physical addresses: what /proc/PID/pagemap shows only to admins */
	if (p.pfns && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (p.pfns && !access_ok(u64_to_user_ptr(p.pfns),
				 p.npages * sizeof(u64)))
		return -EFAULT;

	ret = gpin_file_account(gf, p.npages);
	if (ret)
		return ret;
	ret = gpin_charge_pinned(gf, p.npages);
	if (ret)
		goto err_unaccount;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	ret = gpin_range_pin(r, p.start, p.npages, p.mode,
			     GPIN_RANGE_LONGTERM |
			     (p.flags & GPIN_PIN_WRITE ? GPIN_RANGE_WRITE : 0));
	if (ret)
		goto err_free;
	if (p.pfns) {
		ret = gpin_copy_pfns(r, u64_to_user_ptr(p.pfns));
		if (ret)
			goto err_release;
	}
	ret = xa_alloc(&gf->pins, &handle, r,
		       XA_LIMIT(1, GPIN_MAX_HANDLES_PER_FILE), GFP_KERNEL);
	if (ret) {
		if (ret == -EBUSY)
			ret = -ENOSPC;
		goto err_release;
	}

	if (put_user(handle, &up->handle) ||
	    put_user((u64)r->fast_pages, &up->fast_pages)) {
		/* Another thread may have guessed the handle and unpinned. */
		old = xa_erase(&gf->pins, handle);
		if (old)
			gpin_file_drop(gf, old);
		return -EFAULT;
	}
	return 0;

err_release:
	gpin_range_release(r, false);
err_free:
	kfree(r);
err_uncharge:
	gpin_uncharge_pinned(gf, p.npages);
err_unaccount:
	gpin_file_unaccount(gf, p.npages);
	return ret;
}

static long gpin_ioctl_unpin(struct gpin_file *gf, void __user *uarg)
{
	struct gpin_range *r;
	struct gpin_unpin u;
	int ret;

	ret = gpin_check_caller(gf);
	if (ret)
		return ret;
	ret = gpin_copy_in(&u, sizeof(u), uarg);
	if (ret)
		return ret;
	if (u.flags || u.reserved)
		return -EINVAL;
	/* xa_erase() is atomic: of two racing UNPINs, one gets ENOENT. */
	r = u.handle ? xa_erase(&gf->pins, u.handle) : NULL;
	if (!r)
		return -ENOENT;
	gpin_file_drop(gf, r);
	return 0;
}

static long gpin_ioctl_stats(struct gpin_file *gf, void __user *uarg)
{
	struct gpin_stats *st;
	int ret;

	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	ret = gpin_copy_in(st, sizeof(*st), uarg);
	if (ret)
		goto out;
	if (st->flags) {
		ret = -EINVAL;
		goto out;
	}
	gpin_stats_read(st);
	st->size = sizeof(*st);
	st->file_live_pages = atomic_long_read(&gf->live_pages);
	if (copy_to_user(uarg, st, sizeof(*st)))
		ret = -EFAULT;
out:
	kfree(st);
	return ret;
}

static long gpin_ioctl_stats_reset(struct gpin_file *gf, void __user *uarg)
{
	struct gpin_stats_reset sr;
	int ret;

	ret = gpin_copy_in(&sr, sizeof(sr), uarg);
	if (ret)
		return ret;
	if (sr.flags)
		return -EINVAL;
	gpin_stats_reset();
	return 0;
}

static long gpin_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct gpin_file *gf = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case GPIN_IOC_PIN:
		return gpin_ioctl_pin(gf, uarg);
	case GPIN_IOC_UNPIN:
		return gpin_ioctl_unpin(gf, uarg);
	case GPIN_IOC_STATS:
		return gpin_ioctl_stats(gf, uarg);
	case GPIN_IOC_STATS_RESET:
		return gpin_ioctl_stats_reset(gf, uarg);
	case GPIN_IOC_DIO:
		return gpin_dio_sync(gf, uarg);
	case GPIN_IOC_DIO_SUBMIT:
		return gpin_dio_submit(gf, uarg);
	case GPIN_IOC_DIO_REAP:
		return gpin_dio_reap(gf, uarg);
	case GPIN_IOC_SET_EVENTFD:
		return gpin_dio_set_eventfd(gf, uarg);
	default:
		return -ENOTTY;
	}
}

static int gpin_open(struct inode *inode, struct file *file)
{
	struct gpin_file *gf;

	if ((current->flags & PF_KTHREAD) || !current->mm)
		return -EPERM;
	gf = kzalloc(sizeof(*gf), GFP_KERNEL);
	if (!gf)
		return -ENOMEM;
	/*
	 * mmgrab() keeps the mm_struct (not the address space) allocated,
	 * so its address cannot be reused by another process's mm while we
	 * compare against it.
	 */
	gf->mm = current->mm;
	mmgrab(gf->mm);
	xa_init_flags(&gf->pins, XA_FLAGS_ALLOC1);
	atomic_long_set(&gf->live_pages, 0);
	gpin_dio_file_init(gf);
	file->private_data = gf;
	return 0;
}

/* The last of a file: from release, or from its last orphaned request. */
void gpin_file_free(struct gpin_file *gf)
{
	WARN_ON_ONCE(atomic_long_read(&gf->live_pages));
	mmdrop(gf->mm);
	kfree(gf);
}

/*
 * Last close.  It never waits for I/O: requests in flight keep the file
 * (and the module) until they complete (dio.c).
 */
static int gpin_release(struct inode *inode, struct file *file)
{
	struct gpin_file *gf = file->private_data;
	struct gpin_range *r;
	unsigned long index;

	xa_for_each(&gf->pins, index, r) {
		xa_erase(&gf->pins, index);
		gpin_file_drop(gf, r);
	}
	xa_destroy(&gf->pins);
	if (gpin_dio_file_release(gf))
		gpin_file_free(gf);
	return 0;
}

/*
 * A one-page VM_PFNMAP | VM_IO mapping of a kernel page: its pte is
 * special, so the fast walk must stop at it and get_user_pages() must
 * refuse it.  Shared only: a private pfnmap would COW into an ordinary
 * anonymous page on the first write.
 */
static int gpin_mmap(struct file *file, struct vm_area_struct *vma)
{
	if (vma->vm_pgoff || vma->vm_end - vma->vm_start != PAGE_SIZE ||
	    !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	return remap_pfn_range(vma, vma->vm_start,
			       page_to_pfn(gpin_special_page), PAGE_SIZE,
			       vma->vm_page_prot);
}

static const struct file_operations gpin_fops = {
	.owner = THIS_MODULE,
	.open = gpin_open,
	.release = gpin_release,
	.unlocked_ioctl = gpin_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = gpin_mmap,
	.llseek = noop_llseek,
};

static struct miscdevice gpin_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "gpin",
	.fops = &gpin_fops,
	.mode = 0600,
};

static int __init gpin_init(void)
{
	int ret;

	gpin_special_page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!gpin_special_page)
		return -ENOMEM;
	ret = gpin_stats_init();
	if (ret)
		goto err_page;
	ret = gpin_range_init();
	if (ret)
		goto err_stats;
	ret = gpin_dio_init();
	if (ret)
		goto err_range;
	ret = misc_register(&gpin_misc);
	if (ret)
		goto err_dio;
	return 0;

err_dio:
	gpin_dio_exit();
err_range:
	gpin_range_exit();
err_stats:
	gpin_stats_exit();
err_page:
	__free_page(gpin_special_page);
	return ret;
}

static void __exit gpin_exit(void)
{
	misc_deregister(&gpin_misc);
	/*
	 * No file is open, and no orphaned request is left (each holds a
	 * module reference): every pinned page was released.
	 */
	gpin_dio_exit();
	WARN_ON(gpin_live_pages());
	gpin_range_exit();
	gpin_stats_exit();
	__free_page(gpin_special_page);
}

module_init(gpin_init);
module_exit(gpin_exit);

MODULE_DESCRIPTION("gpin: lockless IRQ-off user page pinning");
MODULE_AUTHOR("gpin developers");
MODULE_LICENSE("GPL");
