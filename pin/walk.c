// SPDX-License-Identifier: GPL-2.0
/*
 * The lockless page-table walk of GPIN_MODE_FAST (Piggin's fast_gup).
 *
 * Why interrupts off keeps the page tables alive (x86-64):
 * A page-table page is only freed after every CPU that might be walking it
 * has been told.  The native kernel frees table pages after the TLB
 * shootdown IPI for the unmap has been acknowledged by every CPU in
 * mm_cpumask(); a CPU with interrupts disabled cannot acknowledge, so the
 * freeing CPU waits for us.  Under paravirt, and for the pte tables that
 * khugepaged retracts on 6.5+, tables are freed through RCU instead
 * (MMU_GATHER_RCU_TABLE_FREE, pte_free_defer()), and a region with
 * interrupts disabled is an RCU read-side critical section, which holds off
 * that grace period.  Either way: while interrupts are off on this CPU, no
 * table page we reached through current->mm's pgd can be freed or reused
 * under us, even though we hold neither mmap_lock nor the page-table lock.
 * The entries in those tables can still change at any time, which is what
 * the take-then-recheck below is about.  This only holds for the mm this
 * CPU is running (its TLB must be one of those flushed), hence current->mm
 * only.
 *
 * Shape: one function per level, each reads its entry once, computes
 * "next", descends, and returns 1 when [addr, end) was taken completely or
 * 0 ("fall back") at the first entry it cannot handle, with every page taken
 * before that point left in w->pages in address order.  Never an errno: the
 * locked path decides what the error is.
 *
 * What is taken is a pin (FOLL_PIN), as the kernel's GUP-fast takes it:
 * first plain references (add-unless-zero, then the entries re-read), then,
 * once the page is known to be the one mapped, the reference is turned
 * into a pin - GUP_PIN_COUNTING_BIAS more on a small folio, the exact
 * _pincount on a large one - so that page_maybe_dma_pinned() sees it and
 * fork() copies the page for the child instead of sharing it.  The caller
 * (range.c) sets MMF_HAS_PINNED before the walk and checks
 * mm->write_protect_seq around it; pins are released with
 * unpin_user_pages*().
 */
#include <linux/mm.h>
#include <linux/page-flags.h>
#include <linux/pgtable.h>
#include <linux/vmstat.h>

#include "gpin_compat.h"
#include "gpin_internal.h"

#ifndef CONFIG_X86_64
#error "gpin's lockless walk relies on x86-64 page-table freeing rules"
#endif

/*
 * Entries are read exactly once into a local copy, and everything below is
 * decided on that copy.  On x86-64 every level's entry is one machine word,
 * so READ_ONCE() is the lockless read (the *_get_lockless() helpers only
 * differ on 32-bit PAE, where an entry is two words).
 */
#define gpin_read_entry(p)	READ_ONCE(*(p))

/*
 * Take @refs plain references on the folio of @page, unless its count is
 * zero (being freed, or frozen for split/migration).  The page may have
 * been split or freed and reused between reading the entry and here, so the
 * folio is re-derived after the reference is held.  A count that nears
 * overflow (or has wrapped negative: compared unsigned) is left to the
 * locked path, whose try_grab_folio() refuses it with -ENOMEM; the margin
 * of INT_MAX / 2 holds every pin that CPUs racing past this check at once
 * can add.
 */
static struct folio *gpin_try_get(struct page *page, int refs)
{
	struct folio *folio = page_folio(page);

	if (unlikely((unsigned int)folio_ref_count(folio) > INT_MAX / 2))
		return NULL;
	if (!folio_ref_add_unless(folio, refs, 0))
		return NULL;
	if (unlikely(page_folio(page) != folio)) {
		folio_put_refs(folio, refs);
		return NULL;
	}
	return folio;
}

/*
 * Whether the folio, which we hold and which is still mapped by the entry
 * we read (@writable: that entry allows writes), may be pinned here.
 *
 * Anonymous memory only.  File, shmem, secretmem and device pages may need
 * the filesystem or driver to be told about the pin (writeback,
 * truncation, long-term pinning rules); the locked path knows the VMA and
 * gets that right.  An anonymous page mapped read-only that is not
 * exclusive to this process (shared with a fork child, or KSM) must not
 * be pinned as it is: a later write fault would move the process to a copy
 * and leave the pin on a page it no longer maps.  The locked path unshares
 * it first (gup_must_unshare()).  A writable mapping is exclusive already.
 * For a long-term pin, folios in ZONE_MOVABLE or CMA must be migrated
 * first, which only the locked path can do.
 */
static bool gpin_folio_ok(struct folio *folio, struct page *page,
			  bool writable, const struct gpin_walk *w)
{
	if (!folio_test_anon(folio))
		return false;
	if (!w->write && !writable &&
	    (PageKsm(page) || !PageAnonExclusive(page)))
		return false;
	if (w->longterm && !folio_is_longterm_pinnable(folio))
		return false;
	return true;
}

/*
 * Turn @refs references, taken by gpin_try_get(), into @refs pins.  The
 * references stay: a pinned folio is also a referenced one.
 */
static void gpin_make_pins(struct folio *folio, int refs)
{
	if (folio_test_large(folio))
		atomic_add(refs, gpin_folio_pincount(folio));
	else
		folio_ref_add(folio, refs * (GUP_PIN_COUNTING_BIAS - 1));
	node_stat_mod_folio(folio, NR_FOLL_PIN_ACQUIRED, refs);
	/* as GUP does: the page is in use, reclaim should age it so */
	folio_set_referenced(folio);
}

static int gpin_pte_range(pmd_t pmd, pmd_t *pmdp, unsigned long addr,
			  unsigned long end, struct gpin_walk *w)
{
	/*
	 * pte_offset_map() is not usable here: on 6.5+ it is built on
	 * __pte_offset_map(), which modules cannot call.  Compute the
	 * pointer from our copy of the pmd instead.  The pte table it
	 * points to cannot be freed while interrupts are off (see the top
	 * of this file), even if the pmd itself changes; the pmd recheck
	 * below catches that change.
	 */
	pte_t *ptep = pte_offset_kernel(&pmd, addr);

	do {
		pte_t pte = ptep_get_lockless(ptep);
		struct folio *folio;
		struct page *page;

		/* present, user, and writable when writing (and pkeys) */
		if (!pte_access_permitted(pte, w->write))
			return 0;
		/* NUMA hinting: the fault must run to migrate the page */
		if (pte_protnone(pte))
			return 0;
		/* no struct page we may touch (pfnmap, zero page) */
		if (pte_special(pte) || pte_devmap(pte))
			return 0;

		page = pte_page(pte);
		folio = gpin_try_get(page, 1);
		if (!folio)
			return 0;

		/*
		 * Take, then recheck.  Between our read of the pte and the
		 * reference, the page may have been unmapped (munmap,
		 * MADV_DONTNEED, migration, COW break after fork), freed and
		 * even reused: our reference would then be on a page the
		 * process no longer maps.  The unmapper clears the entry
		 * before it drops the mapping's reference, and our
		 * reference is a fully ordered atomic, so if both entries
		 * still read the same now, the page was mapped here at a
		 * moment when we already held it.  The pmd is rechecked
		 * too: khugepaged may have emptied it (collapse) while this
		 * old pte table stayed readable.
		 */
		if (unlikely(pmd_val(pmd) != pmd_val(gpin_read_entry(pmdp)) ||
			     pte_val(pte) != pte_val(ptep_get(ptep)))) {
			folio_put_refs(folio, 1);
			return 0;
		}
		if (!gpin_folio_ok(folio, page, pte_write(pte), w)) {
			folio_put_refs(folio, 1);
			return 0;
		}
		gpin_make_pins(folio, 1);
		w->pages[w->nr++] = page;
	} while (ptep++, addr += PAGE_SIZE, addr != end);

	return 1;
}

/*
 * A huge leaf maps a large folio: one add-unless-zero takes a reference for
 * every subpage in [addr, end), later one pin each, each released by its
 * own unpin (unpin_user_pages() counts a folio's consecutive pages).
 */
static struct folio *gpin_huge_take(struct page *head, unsigned long addr,
				    unsigned long end, unsigned long mask,
				    struct page **first)
{
	int refs = (end - addr) >> PAGE_SHIFT;

	*first = nth_page(head, (addr & ~mask) >> PAGE_SHIFT);
	return gpin_try_get(*first, refs);
}

static void gpin_huge_commit(struct folio *folio, struct page *first,
			     unsigned long addr, unsigned long end,
			     struct gpin_walk *w)
{
	unsigned long i, refs = (end - addr) >> PAGE_SHIFT;

	gpin_make_pins(folio, refs);
	for (i = 0; i < refs; i++)
		w->pages[w->nr++] = nth_page(first, i);
	w->huge++;
}

static int gpin_pmd_leaf(pmd_t pmd, pmd_t *pmdp, unsigned long addr,
			 unsigned long end, struct gpin_walk *w)
{
	struct folio *folio;
	struct page *first;

	if (!pmd_access_permitted(pmd, w->write))
		return 0;
	if (pmd_protnone(pmd) || pmd_devmap(pmd) || gpin_pmd_special(pmd))
		return 0;

	folio = gpin_huge_take(pmd_page(pmd), addr, end, PMD_MASK, &first);
	if (!folio)
		return 0;
	/*
	 * Same race as for a pte: split, zap or migration of the THP.  The
	 * exclusive bit of a PMD-mapped THP or a hugetlb folio is its head's.
	 */
	if (unlikely(pmd_val(pmd) != pmd_val(gpin_read_entry(pmdp))) ||
	    !gpin_folio_ok(folio, &folio->page, pmd_write(pmd), w)) {
		folio_put_refs(folio, (end - addr) >> PAGE_SHIFT);
		return 0;
	}
	gpin_huge_commit(folio, first, addr, end, w);
	return 1;
}

static int gpin_pmd_range(pud_t pud, pud_t *pudp, unsigned long addr,
			  unsigned long end, struct gpin_walk *w)
{
	pmd_t *pmdp = pmd_offset_lockless(pudp, pud, addr);
	unsigned long next;

	do {
		pmd_t pmd = gpin_read_entry(pmdp);

		next = pmd_addr_end(addr, end);
		/* none, swap or migration entry: needs a fault */
		if (!pmd_present(pmd))
			return 0;
		if (pmd_leaf(pmd)) {
			/* THP or hugetlb: one entry maps 2M */
			if (!gpin_pmd_leaf(pmd, pmdp, addr, next, w))
				return 0;
		} else if (!gpin_pte_range(pmd, pmdp, addr, next, w)) {
			return 0;
		}
	} while (pmdp++, addr = next, addr != end);

	return 1;
}

static int gpin_pud_leaf(pud_t pud, pud_t *pudp, unsigned long addr,
			 unsigned long end, struct gpin_walk *w)
{
	struct folio *folio;
	struct page *first;

	if (!pud_access_permitted(pud, w->write))
		return 0;
	if (pud_devmap(pud) || gpin_pud_special(pud))
		return 0;

	folio = gpin_huge_take(pud_page(pud), addr, end, PUD_MASK, &first);
	if (!folio)
		return 0;
	if (unlikely(pud_val(pud) != pud_val(gpin_read_entry(pudp))) ||
	    !gpin_folio_ok(folio, &folio->page, pud_write(pud), w)) {
		folio_put_refs(folio, (end - addr) >> PAGE_SHIFT);
		return 0;
	}
	gpin_huge_commit(folio, first, addr, end, w);
	return 1;
}

static int gpin_pud_range(p4d_t p4d, p4d_t *p4dp, unsigned long addr,
			  unsigned long end, struct gpin_walk *w)
{
	pud_t *pudp = pud_offset_lockless(p4dp, p4d, addr);
	unsigned long next;

	do {
		pud_t pud = gpin_read_entry(pudp);

		next = pud_addr_end(addr, end);
		if (!pud_present(pud))
			return 0;
		if (pud_leaf(pud)) {
			/* 1G hugetlb */
			if (!gpin_pud_leaf(pud, pudp, addr, next, w))
				return 0;
		} else if (!gpin_pmd_range(pud, pudp, addr, next, w)) {
			return 0;
		}
	} while (pudp++, addr = next, addr != end);

	return 1;
}

/*
 * With 4-level paging (no la57) the p4d level is folded at run time:
 * p4d_offset_lockless() then returns a pointer to our copy of the pgd and
 * p4d_addr_end() spans the whole pgd entry, so the loop runs once.
 */
static int gpin_p4d_range(pgd_t pgd, pgd_t *pgdp, unsigned long addr,
			  unsigned long end, struct gpin_walk *w)
{
	p4d_t *p4dp = p4d_offset_lockless(pgdp, pgd, addr);
	unsigned long next;

	do {
		p4d_t p4d = gpin_read_entry(p4dp);

		next = p4d_addr_end(addr, end);
		if (p4d_none(p4d) || unlikely(p4d_bad(p4d)))
			return 0;
		if (!gpin_pud_range(p4d, p4dp, addr, next, w))
			return 0;
	} while (p4dp++, addr = next, addr != end);

	return 1;
}

/**
 * gpin_walk_range - pin the pages of [addr, end)
 * @mm: current->mm
 * @addr: page-aligned start
 * @end: page-aligned end, > @addr
 * @w: output; w->nr grows by the pages taken
 *
 * Must be called with interrupts disabled.
 *
 * Return: 1 when the whole range was taken, 0 when the walk stopped early
 * (the pages taken so far are in w->pages and still pinned).
 */
int gpin_walk_range(struct mm_struct *mm, unsigned long addr,
		    unsigned long end, struct gpin_walk *w)
{
	pgd_t *pgdp = pgd_offset(mm, addr);
	unsigned long next;

	lockdep_assert_irqs_disabled();
	do {
		pgd_t pgd = gpin_read_entry(pgdp);

		next = pgd_addr_end(addr, end);
		if (pgd_none(pgd) || unlikely(pgd_bad(pgd)))
			return 0;
		if (!gpin_p4d_range(pgd, pgdp, addr, next, w))
			return 0;
	} while (pgdp++, addr = next, addr != end);

	return 1;
}
