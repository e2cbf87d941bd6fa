// SPDX-License-Identifier: GPL-2.0
/*
 * gpin.ko: /dev/gpin, pinning of the calling process's own pages.
 *
 * This file is the device and its ioctl table: each command is found by
 * its number, its caller checked and its argument copied in once, here,
 * before the command's own function sees it.  An open file is a struct
 * gpin_file (file.c); PIN handles are handle.c's, direct I/O dio.c's,
 * counters stats.c's.
 */
#include <linux/build_bug.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "gpin_internal.h"

/* The page behind the device's own (VM_PFNMAP) mmap. */
static struct page *gpin_special_page;

/* Every command's argument, as this module knows it. */
union gpin_ioctl_arg {
	struct gpin_pin pin;
	struct gpin_unpin unpin;
	struct gpin_stats stats;
	struct gpin_stats_reset stats_reset;
	struct gpin_dio dio;
	struct gpin_dio_submit dio_submit;
	struct gpin_dio_reap dio_reap;
	struct gpin_set_eventfd set_eventfd;
};

/**
 * struct gpin_ioctl - one command
 * @cmd: its number, matched exactly: a seccomp or LSM rule on a command's
 *	number must not be sidestepped by other size bits.  A struct grows
 *	through its own @size field, not its number.
 * @ksize: the struct this module knows
 * @own_mm: only from the mm that opened the file (it acts on that mm)
 * @fn: the command, with @arg copied in; @uarg for what it writes back
 */
struct gpin_ioctl {
	unsigned int cmd;
	unsigned int ksize;
	bool own_mm;
	long (*fn)(struct gpin_file *gf, void *arg, void __user *uarg);
};

#define GPIN_IOCTL(_cmd, _type, _own_mm, _fn)				\
	[_IOC_NR(_cmd)] = {						\
		.cmd = _cmd,						\
		/* and room for it in the copy-in union */		\
		.ksize = sizeof(_type) +				\
			 BUILD_BUG_ON_ZERO(sizeof(_type) >		\
					   sizeof(union gpin_ioctl_arg)), \
		.own_mm = _own_mm,					\
		.fn = _fn,						\
	}

static const struct gpin_ioctl gpin_ioctls[] = {
	GPIN_IOCTL(GPIN_IOC_PIN, struct gpin_pin, true, gpin_handle_pin),
	GPIN_IOCTL(GPIN_IOC_UNPIN, struct gpin_unpin, true,
		   gpin_handle_unpin),
	/* counters: any process that may open the device may read them */
	GPIN_IOCTL(GPIN_IOC_STATS, struct gpin_stats, false, gpin_stats),
	GPIN_IOCTL(GPIN_IOC_STATS_RESET, struct gpin_stats_reset, false,
		   gpin_stats_reset),
	GPIN_IOCTL(GPIN_IOC_DIO, struct gpin_dio, true, gpin_dio_sync),
	GPIN_IOCTL(GPIN_IOC_DIO_SUBMIT, struct gpin_dio_submit, true,
		   gpin_dio_submit),
	GPIN_IOCTL(GPIN_IOC_DIO_REAP, struct gpin_dio_reap, true,
		   gpin_dio_reap),
	GPIN_IOCTL(GPIN_IOC_SET_EVENTFD, struct gpin_set_eventfd, true,
		   gpin_dio_set_eventfd),
};

static const struct gpin_ioctl *gpin_ioctl_find(unsigned int cmd)
{
	const struct gpin_ioctl *ioc;
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != GPIN_IOC_TYPE || nr >= ARRAY_SIZE(gpin_ioctls))
		return NULL;
	ioc = &gpin_ioctls[nr];
	return ioc->fn && cmd == ioc->cmd ? ioc : NULL;
}

static long gpin_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	const struct gpin_ioctl *ioc = gpin_ioctl_find(cmd);
	struct gpin_file *gf = file->private_data;
	void __user *uarg = (void __user *)arg;
	union gpin_ioctl_arg karg;
	int ret;

	if (!ioc)
		return -ENOTTY;
	if (ioc->own_mm) {
		ret = gpin_file_check_caller(gf);
		if (ret)
			return ret;
	}
	ret = gpin_copy_in(&karg, ioc->ksize, uarg);
	if (ret)
		return ret;
	return ioc->fn(gf, &karg, uarg);
}

static int gpin_open(struct inode *inode, struct file *file)
{
	struct gpin_file *gf = gpin_file_create();

	if (IS_ERR(gf))
		return PTR_ERR(gf);
	gpin_dio_file_init(gf);
	file->private_data = gf;
	return 0;
}

/*
 * Last close: release what the file holds; I/O in flight keeps the file,
 * and it never waits for that I/O (file.c says why).
 */
static int gpin_release(struct inode *inode, struct file *file)
{
	struct gpin_file *gf = file->private_data;

	/* the VFS's reference to the module lasts until we return */
	__module_get(THIS_MODULE);
	gpin_handle_release_all(gf);
	gpin_dio_file_close(gf);
	gpin_file_put(gf);
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

struct file *gpin_fget(int fd)
{
	struct file *file = fget(fd);

	if (file && file->f_op != &gpin_fops) {
		fput(file);
		file = NULL;
	}
	return file;
}

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
	 * No file is open, and none that was closed with requests in flight
	 * is left (such a file holds a module reference until its last
	 * request is freed, file.c): every pinned page was released.
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
MODULE_VERSION(GPIN_MODULE_VERSION);
