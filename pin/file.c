// SPDX-License-Identifier: GPL-2.0
/*
 * One open file of /dev/gpin: what it acts on, what it holds, how long it
 * lives.
 *
 * A file acts on the mm of the process that opened it and holds PIN
 * handles (handle.c) and direct I/O requests (dio.c), each of which counts
 * its pages in the file's live_pages, up to GPIN_MAX_PAGES_PER_FILE.
 *
 * Lifetime: one reference for the open file, one for every direct I/O
 * request from its allocation to its free, and one for every PIN handle
 * until its last use (a request of another file may be using its pages:
 * handle.c).  The last close (main.c)
 * releases the handles and the completed requests nobody reaped, and
 * drops the open file's reference; I/O still in flight cannot be recalled from the block
 * layer and is not waited for (an I/O that never completes, on a dm
 * queue_if_no_path device or a hard NFS mount, would leave the closing
 * process unkillable with its pages pinned).  Such requests keep the file
 * until they complete (dio.c frees them from gpin_dio_wq), and the file
 * keeps the module: it takes a module reference at close, dropped when it
 * is freed, so neither outlives the module.
 */
#include <linux/capability.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "gpin_internal.h"

struct gpin_file *gpin_file_create(void)
{
	struct gpin_file *gf;

	if ((current->flags & PF_KTHREAD) || !current->mm)
		return ERR_PTR(-EPERM);
	gf = kzalloc(sizeof(*gf), GFP_KERNEL_ACCOUNT);
	if (!gf)
		return ERR_PTR(-ENOMEM);
	gf->stats = gpin_stats_file_alloc();
	if (!gf->stats) {
		kfree(gf);
		return ERR_PTR(-ENOMEM);
	}
	refcount_set(&gf->refs, 1);
	/*
	 * mmgrab() keeps the mm_struct (not the address space) allocated,
	 * so its address cannot be reused by another process's mm while we
	 * compare against it, and a PIN handle's pinned_vm charge can be
	 * given back after the process is gone.
	 */
	gf->mm = current->mm;
	mmgrab(gf->mm);
	mutex_init(&gf->pins_lock);
	xa_init_flags(&gf->pins, XA_FLAGS_ALLOC1);
	mt_init_flags(&gf->spans, MT_FLAGS_USE_RCU);
	atomic_long_set(&gf->live_pages, 0);
	return gf;
}

void gpin_file_get(struct gpin_file *gf)
{
	refcount_inc(&gf->refs);
}

/*
 * Process context.  After the close, the last put may come from a worker
 * of gpin_dio_wq; the module unload waits for that worker to return
 * (destroy_workqueue()), so the module_put() here can be its last word.
 */
void gpin_file_put(struct gpin_file *gf)
{
	might_sleep();
	if (!refcount_dec_and_test(&gf->refs))
		return;
	WARN_ON_ONCE(atomic_long_read(&gf->live_pages));
	gpin_stats_file_free(gf->stats);
	mmdrop(gf->mm);
	kfree(gf);
	module_put(THIS_MODULE);
}

/* Only the mm that opened the file, never a kernel thread. */
int gpin_file_check_caller(struct gpin_file *gf)
{
	if ((current->flags & PF_KTHREAD) || current->mm != gf->mm)
		return -EPERM;
	return 0;
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

/* Any context (a direct I/O completion gives its pages back). */
void gpin_file_unaccount(struct gpin_file *gf, unsigned long npages)
{
	atomic_long_sub(npages, &gf->live_pages);
}
