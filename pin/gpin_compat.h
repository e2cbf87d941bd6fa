/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel API differences between the kernels gpin.ko builds for
 * (Debian 6.1 and 6.12), in one place.  checkpatch's "LINUX_VERSION_CODE
 * should be avoided" applies to in-tree code; an out-of-tree module that
 * builds against several kernels needs exactly these checks.
 */
#ifndef GPIN_COMPAT_H
#define GPIN_COMPAT_H

#include <linux/eventfd.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/version.h>

/* 6.5 dropped the vmas argument of pin_user_pages(). */
static inline long gpin_pin_user_pages(unsigned long start, unsigned long nr,
				       unsigned int gup_flags,
				       struct page **pages)
{
#if KERNEL_VERSION(6, 5, 0) <= LINUX_VERSION_CODE
	return pin_user_pages(start, nr, gup_flags, pages);
#else
	return pin_user_pages(start, nr, gup_flags, pages, NULL);
#endif
}

/*
 * The exact pin count of a large folio: 6.3 moved it from the second
 * page's compound_pincount into struct folio.
 */
static inline atomic_t *gpin_folio_pincount(struct folio *folio)
{
#if KERNEL_VERSION(6, 3, 0) <= LINUX_VERSION_CODE
	return &folio->_pincount;
#else
	return folio_pincount_ptr(folio);
#endif
}

/*
 * Special (pfnmap) huge pmd/pud leaves came with huge pfnmaps in 6.11/6.12;
 * before that no huge leaf was special.
 */
#if KERNEL_VERSION(6, 11, 0) <= LINUX_VERSION_CODE
#define gpin_pmd_special(pmd)	pmd_special(pmd)
#define gpin_pud_special(pud)	pud_special(pud)
#else
#define gpin_pmd_special(pmd)	false
#define gpin_pud_special(pud)	false
#endif

/* 6.8 dropped the count argument of eventfd_signal() (it is always 1). */
static inline void gpin_eventfd_signal(struct eventfd_ctx *ctx)
{
#if KERNEL_VERSION(6, 8, 0) <= LINUX_VERSION_CODE
	eventfd_signal(ctx);
#else
	eventfd_signal(ctx, 1);
#endif
}

/*
 * Freeze protection (sb_start_write) around a direct write, as aio and
 * io_uring take it: from submission until the I/O completes.  Since 6.6
 * vfs_iocb_iter_write() takes it itself and drops it when the I/O did not
 * get queued; a queued one must drop it at completion with
 * kiocb_end_write().  Before 6.6 the caller does both, for regular files.
 * The lockdep annotations hand the "lock" over to the completion context.
 */
static inline void gpin_write_begin(struct kiocb *iocb)
{
#if KERNEL_VERSION(6, 6, 0) > LINUX_VERSION_CODE
	struct inode *inode = file_inode(iocb->ki_filp);

	if (S_ISREG(inode->i_mode)) {
		sb_start_write(inode->i_sb);
		__sb_writers_release(inode->i_sb, SB_FREEZE_WRITE);
	}
#endif
}

/* @queued: the write returned -EIOCBQUEUED and is completing now. */
static inline void gpin_write_end(struct kiocb *iocb, bool queued)
{
#if KERNEL_VERSION(6, 6, 0) <= LINUX_VERSION_CODE
	if (queued)
		kiocb_end_write(iocb);
#else
	struct inode *inode = file_inode(iocb->ki_filp);

	if (S_ISREG(inode->i_mode)) {
		__sb_writers_acquired(inode->i_sb, SB_FREEZE_WRITE);
		sb_end_write(inode->i_sb);
	}
#endif
}

#endif /* GPIN_COMPAT_H */
