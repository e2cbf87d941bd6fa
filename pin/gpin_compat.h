/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel API differences between the kernels gpin.ko builds for
 * (Debian 6.1 and 6.12), in one place.  checkpatch's "LINUX_VERSION_CODE
 * should be avoided" applies to in-tree code; an out-of-tree module that
 * builds against several kernels needs exactly these checks.
 */
#ifndef GPIN_COMPAT_H
#define GPIN_COMPAT_H

#include <linux/mm.h>
#include <linux/version.h>

/* 6.5 dropped the vmas argument of get_user_pages(). */
static inline long gpin_get_user_pages(unsigned long start, unsigned long nr,
				       unsigned int gup_flags,
				       struct page **pages)
{
#if KERNEL_VERSION(6, 5, 0) <= LINUX_VERSION_CODE
	return get_user_pages(start, nr, gup_flags, pages);
#else
	return get_user_pages(start, nr, gup_flags, pages, NULL);
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

#endif /* GPIN_COMPAT_H */
