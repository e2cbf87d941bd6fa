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
 * What is taken is a pin (FOLL_PIN), in the order the kernel's GUP-fast
 * takes it (try_grab_folio_fast(), gup_fast_pte_range()): the pin first -
 * GUP_PIN_COUNTING_BIAS on a small folio, the exact _pincount on a large
 * one - then the entries re-read, then the checks that need the pin to be
 * visible (anon-exclusive); any failure undoes the pin and ends the walk.
 * page_maybe_dma_pinned() then sees the page, so fork() copies it for the
 * child and swap-out and migration leave it alone.  The caller (range.c)
 * sets MMF_HAS_PINNED before the walk and checks mm->write_protect_seq
 * around it; pins are released with unpin_user_pages*().
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
 * NR_FOLL_PIN_ACQUIRED, as the kernel counts it for every pin, but added
 * once per node and walk window rather than once per page: the per-CPU
 * vmstat update (a this_cpu_cmpxchg() loop, and a global atomic whenever
 * the CPU's share passes its threshold) was a large part of what a 4K pin
 * cost over a plain reference.  The count is a statistic, two counters
 * that only grow and are read as a difference (/proc/vmstat); the pair
 * balances again by the window's end, when the sum is added, and an undo
 * inside the window (gpin_unpin()) may count its release first.
 */
static void gpin_flush_pins(struct gpin_walk *w)
{
	if (w->pins_counted) {
		mod_node_page_state(w->pins_node, NR_FOLL_PIN_ACQUIRED,
				    w->pins_counted);
		w->pins_counted = 0;
	}
}

static void gpin_count_pins(struct gpin_walk *w, struct folio *folio,
			    int refs)
{
	struct pglist_data *node = folio_pgdat(folio);

	if (unlikely(node != w->pins_node)) {
		gpin_flush_pins(w);
		w->pins_node = node;
	}
	w->pins_counted += refs;
}

/*
 * Pin @refs subpages of the folio of @page, as try_grab_folio_fast() does
 * for FOLL_PIN; NULL when it cannot be done here (the locked path decides).
 *
 * 1. Headroom first: never add to a count that could then pass
 *    gpin_folio_ref_limit (range.c says why that limit leaves room for
 *    every racer).  Compared unsigned, so a count that has wrapped
 *    negative is refused too.  With interrupts off, nothing runs on this
 *    CPU between the check and the add below, so each CPU has at most one
 *    add of at most GUP_PIN_COUNTING_BIAS in flight past the check.
 * 2. Add-unless-zero: a zero count is a folio being freed, or frozen for
 *    split or migration, which must not be resurrected.
 * 3. One atomic add takes the whole pin of a small folio (refs times
 *    the bias); a large one gets refs references now and refs in
 *    _pincount below.  A locked add is among the dearest steps of a 4K
 *    page, so the kernel's two (a reference to hold the folio, then the
 *    rest of the bias) become one.  Safe because the add is undone unless
 *    the folio, once held, is still the page's (it may have been split,
 *    or freed and reused, since page_folio() was read) and still as large
 *    as when the size of the add was chosen: a held folio cannot be split,
 *    a split freezes the count at zero first.  Until then the count may
 *    read as pinned on a folio we do not keep; page_maybe_dma_pinned() is
 *    allowed such false positives.
 * 4. The pin itself, then a full barrier, *before* the caller re-reads the
 *    entries.  Swap-out and migration unshare an exclusive anon page
 *    (page_try_share_anon_rmap(), 6.12: folio_try_share_anon_rmap_*()) by
 *    clearing the entry, smp_mb(), then checking page_maybe_dma_pinned():
 *    pinned, they back off and restore the entry.  We pin, smp_mb, then
 *    re-read the entry.  So either they see our pin, or we see their
 *    cleared entry.  A plain reference first and the bias after the
 *    re-read (as this walk once did) loses that: the unmapper sees no pin,
 *    goes on, and the pin lands on a page the process is losing.
 */
static struct folio *gpin_try_pin(struct page *page, int refs,
				  struct gpin_walk *w)
{
	struct folio *folio = page_folio(page);
	bool large = folio_test_large(folio);
	int add = large ? refs : refs * GUP_PIN_COUNTING_BIAS;

	if (unlikely((unsigned long)(unsigned int)folio_ref_count(folio) + add >
		     READ_ONCE(gpin_folio_ref_limit)))
		return NULL;
	if (!folio_ref_add_unless(folio, add, 0))
		return NULL;
	if (unlikely(page_folio(page) != folio ||
		     folio_test_large(folio) != large)) {
		folio_put_refs(folio, add);
		return NULL;
	}
	/* ZONE_MOVABLE or CMA: only the locked path can migrate it out */
	if (w->longterm && !folio_is_longterm_pinnable(folio)) {
		folio_put_refs(folio, add);
		return NULL;
	}
	/* the references taken above stay: a pinned folio is referenced */
	if (large)
		atomic_add(refs, gpin_folio_pincount(folio));
	/* pin before the re-read; pairs with the smp_mb() of the sharer */
	smp_mb__after_atomic();
	gpin_count_pins(w, folio, refs);
	return folio;
}

/*
 * As GUP does, a pinned page is in use and reclaim should age it so; the
 * flag is usually set already, and testing first saves a locked bit
 * operation per page.
 */
static void gpin_mark_referenced(struct folio *folio)
{
	if (!folio_test_referenced(folio))
		folio_set_referenced(folio);
}

/*
 * Undo gpin_try_pin() (the kernel's gup_put_folio(FOLL_PIN)).  Interrupts
 * may be off: the last reference may free the folio, as in GUP-fast.
 * Not unpin_user_page(): on a CONFIG_DEBUG_VM kernel it asserts that the
 * page is anon-exclusive, and undoing a pin that failed that check is one
 * of our cases.
 */
static void gpin_unpin(struct folio *folio, int refs)
{
	node_stat_mod_folio(folio, NR_FOLL_PIN_RELEASED, refs);
	if (folio_test_large(folio))
		atomic_sub(refs, gpin_folio_pincount(folio));
	else
		refs *= GUP_PIN_COUNTING_BIAS;
	folio_put_refs(folio, refs);
}

/*
 * Whether the folio, which we have pinned and which is still mapped by the
 * entry we read (@writable: that entry allows writes), may stay pinned.
 *
 * Anonymous memory only.  File, shmem, secretmem and device pages may need
 * the filesystem or driver to be told about the pin (writeback,
 * truncation, long-term pinning rules); the locked path knows the VMA and
 * gets that right.  An anonymous page mapped read-only that is not
 * exclusive to this process (shared with a fork child, or KSM) must not
 * be pinned as it is: a later write fault would move the process to a copy
 * and leave the pin on a page it no longer maps.  The locked path unshares
 * it first (gup_must_unshare()).  A writable mapping is exclusive already.
 *
 * Ordering: PageAnonExclusive is read after the pin and after the entry
 * was re-read, behind smp_rmb() (as gup_must_unshare() does).  The sharer
 * may clear the flag and put back the very same read-only entry, so no
 * entry change tells us; it clears the flag only after checking for pins
 * (smp_mb() between) and orders the clear before what follows
 * (smp_mb__after_atomic()).  So either it saw our pin and kept the page
 * exclusive, or we see the flag cleared and back off.
 */
static bool gpin_folio_ok(struct folio *folio, struct page *page,
			  bool writable, const struct gpin_walk *w)
{
	if (!folio_test_anon(folio))
		return false;
	if (!w->write && !writable) {
		/* pairs with the sharer's smp_mb__after_atomic() */
		smp_rmb();
		if (PageKsm(page) || !PageAnonExclusive(page))
			return false;
	}
	return true;
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
		folio = gpin_try_pin(page, 1, w);
		if (!folio)
			return 0;

		/*
		 * Pin, then recheck.  Between our read of the pte and the
		 * pin, the page may have been unmapped (munmap,
		 * MADV_DONTNEED, MADV_PAGEOUT, migration, COW break after
		 * fork), freed and even reused: our pin would then be on a
		 * page the process no longer maps.  The unmapper clears the
		 * entry before it drops the mapping's reference or checks
		 * for pins, and our pin is ordered before this re-read
		 * (gpin_try_pin()), so if both entries still read the same
		 * now, the page was mapped here at a moment when it was
		 * already pinned.  The pmd is rechecked too: khugepaged may
		 * have emptied it (collapse) while this old pte table stayed
		 * readable.
		 */
		if (unlikely(pmd_val(pmd) != pmd_val(gpin_read_entry(pmdp)) ||
			     pte_val(pte) != pte_val(ptep_get(ptep))) ||
		    !gpin_folio_ok(folio, page, pte_write(pte), w)) {
			gpin_unpin(folio, 1);
			return 0;
		}
		gpin_mark_referenced(folio);
		w->pages[w->nr++] = page;
	} while (ptep++, addr += PAGE_SIZE, addr != end);

	return 1;
}

/*
 * A huge leaf maps a large folio: one gpin_try_pin() takes a pin for every
 * subpage in [addr, end), each released later by its own unpin
 * (unpin_user_pages() counts a folio's consecutive pages).
 */
static struct folio *gpin_huge_pin(struct page *head, unsigned long addr,
				   unsigned long end, unsigned long mask,
				   struct gpin_walk *w,
				   struct page **first)
{
	int refs = (end - addr) >> PAGE_SHIFT;

	*first = nth_page(head, (addr & ~mask) >> PAGE_SHIFT);
	return gpin_try_pin(*first, refs, w);
}

static void gpin_huge_commit(struct folio *folio, struct page *first,
			     unsigned long addr, unsigned long end,
			     struct gpin_walk *w)
{
	unsigned long i, refs = (end - addr) >> PAGE_SHIFT;

	gpin_mark_referenced(folio);
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

	folio = gpin_huge_pin(pmd_page(pmd), addr, end, PMD_MASK, w, &first);
	if (!folio)
		return 0;
	/*
	 * Same races, same order as for a pte: split, zap, swap-out or
	 * migration of the THP.  The exclusive bit of a PMD-mapped THP or a
	 * hugetlb folio is its head's.
	 */
	if (unlikely(pmd_val(pmd) != pmd_val(gpin_read_entry(pmdp))) ||
	    !gpin_folio_ok(folio, &folio->page, pmd_write(pmd), w)) {
		gpin_unpin(folio, (end - addr) >> PAGE_SHIFT);
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

	folio = gpin_huge_pin(pud_page(pud), addr, end, PUD_MASK, w, &first);
	if (!folio)
		return 0;
	if (unlikely(pud_val(pud) != pud_val(gpin_read_entry(pudp))) ||
	    !gpin_folio_ok(folio, &folio->page, pud_write(pud), w)) {
		gpin_unpin(folio, (end - addr) >> PAGE_SHIFT);
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

static int gpin_pgd_range(struct mm_struct *mm, unsigned long addr,
			  unsigned long end, struct gpin_walk *w)
{
	pgd_t *pgdp = pgd_offset(mm, addr);
	unsigned long next;

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

/**
 * gpin_walk_undo - drop pins the walk took, one call per folio
 * @pages: pages a gpin_walk_range() pinned, in address order
 * @nr: how many
 *
 * For a window that overlapped a fork (range.c): without the sanity
 * checks of unpin_user_pages(), which a page fork has just shared fails
 * (the kernel's GUP-fast undoes such a window the same way).  Any context.
 */
void gpin_walk_undo(struct page **pages, unsigned long nr)
{
	unsigned long i, n;

	for (i = 0; i < nr; i += n) {
		struct folio *folio = page_folio(pages[i]);

		/* the pages of one folio are consecutive in the array */
		n = 1;
		while (i + n < nr && page_folio(pages[i + n]) == folio)
			n++;
		gpin_unpin(folio, n);
	}
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
	int ok;

	lockdep_assert_irqs_disabled();
	ok = gpin_pgd_range(mm, addr, end, w);
	gpin_flush_pins(w);
	return ok;
}
