// SPDX-License-Identifier: GPL-2.0
/*
 * Pinning a user range in one of the three modes, and releasing it.
 *
 * Every mode holds pages the way the kernel holds them for DMA: FOLL_PIN
 * pins (pin_user_pages() under the lock, pin_user_pages_fast(), or our own
 * walk taking pins as GUP-fast does), released with unpin_user_pages*().
 * So fork() copies a pinned page for the child instead of sharing it
 * copy-on-write, and I/O into it still lands in the process that asked
 * for it.  The comparison between the modes is about how the pages are
 * found, not about how they are held.
 */
#include <linux/irqflags.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/moduleparam.h>
#include <linux/percpu_counter.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/coredump.h>
#include <linux/seqlock.h>
#include <linux/slab.h>

#include "gpin_compat.h"
#include "gpin_internal.h"

#define GPIN_BATCH_MIN	1
#define GPIN_BATCH_MAX	512

unsigned int gpin_batch = 64;

static int gpin_batch_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, GPIN_BATCH_MIN, GPIN_BATCH_MAX);
}

static const struct kernel_param_ops gpin_batch_ops = {
	.set = gpin_batch_set,
	.get = param_get_uint,
};

module_param_cb(batch, &gpin_batch_ops, &gpin_batch, 0644);
MODULE_PARM_DESC(batch,
		 "pages per interrupts-disabled window of the fast walk and the kernel mode (1..512, default 64)");

/*
 * How far a folio's reference count may go through gpin's pins, in every
 * mode.  A small folio takes GUP_PIN_COUNTING_BIAS (1024) references per
 * pin, so one page pinned through many handles, files or aliased mappings
 * (a shmem page mapped many times, the huge zero page) reaches 2^31 after
 * 2^21 pins: a count that size reads negative, the kernel's own GUP
 * refuses it (and WARNs), and 2^32 wraps to zero, which frees a page
 * still in use.  The module-wide max_pins below does not prevent that: it
 * bounds pins over all pages, and its default (the number of RAM pages)
 * times 1024 passes 2^31 on any host with more than 8 GiB.
 *
 * So every pin is checked against this limit on the folio itself:
 * - fast: before anything is added (walk.c, gpin_try_pin()).  Between the
 *   check and the add interrupts are off, so each CPU has at most one add
 *   of at most 1024 in flight: NR_CPUS * 1024 <= 2^23 past the limit.
 * - locked and kernel: pin_user_pages*() adds first; gpin checks every
 *   folio of each call's result and unpins the call if one is past the
 *   limit (gpin_refs_ok()).  Calls are at most GPIN_BATCH_MAX pages, so a
 *   caller takes a folio at most 512 * 1024 = 2^19 past the limit before
 *   it notices and undoes it (2^9 for a large folio, which takes one
 *   reference per page).
 * The default leaves 2^29 between the limit and 2^31: the fast walk's
 * racers cannot use it up, and the locked and kernel modes would need a
 * thousand callers, each holding a batch of aliases of one small page
 * unchecked at the same instant.  Even then nothing wraps: the kernel
 * refuses each add itself once the count reads negative (try_grab_folio(),
 * try_grab_page() on 6.1).  A large folio's _pincount grows with its
 * reference count, so bounding the latter bounds both.
 *
 * Lower it (folio_ref_limit, root only) to exercise the limit without
 * millions of pins (tests/pin).
 */
#define GPIN_FOLIO_REF_LIMIT	(3U << 29)
#define GPIN_FOLIO_REF_MIN	(2U * GUP_PIN_COUNTING_BIAS)

unsigned int gpin_folio_ref_limit = GPIN_FOLIO_REF_LIMIT;

static int gpin_folio_ref_limit_set(const char *val,
				    const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, GPIN_FOLIO_REF_MIN,
				     GPIN_FOLIO_REF_LIMIT);
}

static const struct kernel_param_ops gpin_folio_ref_limit_ops = {
	.set = gpin_folio_ref_limit_set,
	.get = param_get_uint,
};

module_param_cb(folio_ref_limit, &gpin_folio_ref_limit_ops,
		&gpin_folio_ref_limit, 0600);
MODULE_PARM_DESC(folio_ref_limit,
		 "reference count a folio may reach through gpin's pins (2048..1610612736, the default)");

/*
 * Every pin the module holds, over all files and modes: one page pinned
 * twice (aliased buffers) counts twice.  A resource limit (pinned memory
 * cannot be reclaimed), not an overflow guard: see gpin_folio_ref_limit.
 * A per-CPU counter, so that the vCPU threads of one process do not share
 * a cache line per pin.
 */
static struct percpu_counter gpin_pins_held;
static unsigned long gpin_max_pins;
module_param_named(max_pins, gpin_max_pins, ulong, 0644);
MODULE_PARM_DESC(max_pins,
		 "pins the module may hold at once, all files together (default: the number of RAM pages)");
#define GPIN_PINS_BATCH	1024

int gpin_range_init(void)
{
	if (!gpin_max_pins)
		gpin_max_pins = totalram_pages();
	return percpu_counter_init(&gpin_pins_held, 0, GFP_KERNEL);
}

void gpin_range_exit(void)
{
	WARN_ON_ONCE(percpu_counter_sum(&gpin_pins_held));
	percpu_counter_destroy(&gpin_pins_held);
}

static int gpin_pins_reserve(unsigned long npages)
{
	percpu_counter_add_batch(&gpin_pins_held, npages, GPIN_PINS_BATCH);
	if (__percpu_counter_compare(&gpin_pins_held, READ_ONCE(gpin_max_pins),
				     GPIN_PINS_BATCH) > 0) {
		percpu_counter_add_batch(&gpin_pins_held, -(s64)npages,
					 GPIN_PINS_BATCH);
		return -ENOMEM;
	}
	return 0;
}

static void gpin_pins_unreserve(unsigned long npages)
{
	percpu_counter_add_batch(&gpin_pins_held, -(s64)npages,
				 GPIN_PINS_BATCH);
}

/* Runs of pages that belong to one large folio (THP, hugetlb). */
static unsigned long gpin_count_huge(struct page **pages, unsigned long nr)
{
	struct folio *prev = NULL;
	unsigned long i, runs = 0;

	for (i = 0; i < nr; i++) {
		struct folio *folio = page_folio(pages[i]);

		if (folio != prev && folio_test_large(folio))
			runs++;
		prev = folio;
	}
	return runs;
}

/*
 * After a pin_user_pages*() call: whether every folio of @pages is within
 * gpin_folio_ref_limit.  The kernel pinned them without that limit; the
 * caller undoes the call when one is past it.
 */
static bool gpin_refs_ok(struct page **pages, unsigned long nr)
{
	unsigned int limit = READ_ONCE(gpin_folio_ref_limit);
	struct folio *prev = NULL;
	unsigned long i;

	for (i = 0; i < nr; i++) {
		struct folio *folio = page_folio(pages[i]);

		if (folio == prev)
			continue;
		prev = folio;
		if (unlikely((unsigned int)folio_ref_count(folio) > limit))
			return false;
	}
	return true;
}

/*
 * The pre-2008 path: mmap_lock for reading, then pin_user_pages(), which
 * faults pages in (and unshares them) as needed and knows every kind of
 * VMA; in calls of at most GPIN_BATCH_MAX pages, each checked by
 * gpin_refs_ok().  All or nothing: on error nothing stays pinned.
 */
static int gpin_pin_locked(unsigned long start, unsigned long nr,
			   unsigned int gup_flags, struct page **pages,
			   u64 *wait_ns)
{
	struct mm_struct *mm = current->mm;
	unsigned long done = 0;
	long ret = 0;
	u64 t0;

	t0 = local_clock();
	if (mmap_read_lock_killable(mm))
		return -EINTR;
	*wait_ns += local_clock() - t0;

	while (done < nr) {
		unsigned long chunk = min_t(unsigned long, nr - done,
					    GPIN_BATCH_MAX);

		ret = gpin_pin_user_pages(start + (done << PAGE_SHIFT), chunk,
					  gup_flags, pages + done);
		if (ret <= 0)
			break;
		if (!gpin_refs_ok(pages + done, ret)) {
			unpin_user_pages(pages + done, ret);
			ret = -ENOMEM;
			break;
		}
		done += ret;
	}
	mmap_read_unlock(mm);

	if (done < nr) {
		unpin_user_pages(pages, done);
		return ret < 0 ? ret : -EFAULT;
	}
	return 0;
}

/*
 * The kernel's own lockless walk, for reference.  It keeps interrupts off
 * for its walk, so calls are bounded to gpin_batch pages, as our walk's
 * windows are.  The time of each call is what max_irqoff_ns records for
 * this mode: the walk with interrupts off, but also the setup around it
 * and, when the walk stops early, pin_user_pages_fast()'s own slow path
 * (mmap_lock, faults) - an upper bound, not a measurement.  The bound on
 * the interrupts-off part is the batch.
 */
static int gpin_pin_kernel(unsigned long start, unsigned long nr,
			   unsigned int gup_flags, struct page **pages,
			   struct gpin_pin_tally *t)
{
	unsigned int batch = READ_ONCE(gpin_batch);
	unsigned long done = 0;
	long ret = 0;
	u64 t0;

	while (done < nr) {
		int chunk = min_t(unsigned long, nr - done, batch);

		t0 = local_clock();
		ret = pin_user_pages_fast(start + (done << PAGE_SHIFT), chunk,
					  gup_flags, pages + done);
		t->max_irqoff_ns = max(t->max_irqoff_ns, local_clock() - t0);
		if (ret <= 0)
			break;
		if (!gpin_refs_ok(pages + done, ret)) {
			unpin_user_pages(pages + done, ret);
			ret = -ENOMEM;
			break;
		}
		done += ret;
		cond_resched();
	}
	if (done < nr) {
		unpin_user_pages(pages, done);
		return ret < 0 ? ret : -EFAULT;
	}
	return 0;
}

/* What the kernel's gup.c does before its lockless walk with FOLL_PIN. */
static void gpin_mm_set_has_pinned(struct mm_struct *mm)
{
	if (!test_bit(MMF_HAS_PINNED, &mm->flags))
		set_bit(MMF_HAS_PINNED, &mm->flags);
}

/*
 * The fast walk, one bounded batch of pages per interrupts-disabled window
 * so that a large pin does not hold off interrupts (and TLB shootdowns of
 * other threads) for long.  Returns the number of pages pinned, a prefix
 * of the range.
 *
 * Each window is also a read section of mm->write_protect_seq, which fork()
 * holds while it write-protects the parent's anonymous pages.  fork()
 * decides per page whether to share it copy-on-write or copy it now, by
 * page_maybe_dma_pinned(); a pin that appears after that decision would
 * be on a page the parent must give up at its next write.  So a window
 * that overlapped a fork drops its pins and ends the walk: the locked path,
 * which fork excludes through mmap_lock, takes the rest.  Pins of earlier
 * windows were visible before the fork began and were honoured by it.
 * The window's pins are undone per folio by the walk's own unpin
 * (gpin_walk_undo()), not by unpin_user_pages(): a page that fork has just
 * shared is no longer anon-exclusive, which that function's debug checks
 * (CONFIG_DEBUG_VM) would report, and which is the very reason we undo.
 */
static unsigned long gpin_pin_walk(unsigned long start, unsigned long nr,
				   unsigned int flags, struct page **pages,
				   struct gpin_pin_tally *t)
{
	struct mm_struct *mm = current->mm;
	unsigned long end = start + (nr << PAGE_SHIFT);
	unsigned long batch = READ_ONCE(gpin_batch);
	struct gpin_walk w = {
		.pages = pages,
		.write = flags & GPIN_RANGE_WRITE,
		.longterm = flags & GPIN_RANGE_LONGTERM,
	};
	unsigned long addr = start;

	gpin_mm_set_has_pinned(mm);
	while (addr != end) {
		unsigned long next, irqflags, before = w.nr;
		unsigned int seq;
		int ok;
		u64 t0;

		seq = raw_read_seqcount(&mm->write_protect_seq);
		if (seq & 1)
			break;	/* fork in progress */
		next = end - addr > (batch << PAGE_SHIFT) ?
		       addr + (batch << PAGE_SHIFT) : end;
		local_irq_save(irqflags);
		t0 = local_clock();
		ok = gpin_walk_range(mm, addr, next, &w);
		t0 = local_clock() - t0;
		local_irq_restore(irqflags);
		t->max_irqoff_ns = max(t->max_irqoff_ns, t0);
		if (read_seqcount_retry(&mm->write_protect_seq, seq)) {
			gpin_walk_undo(pages + before, w.nr - before);
			w.nr = before;
			break;
		}
		if (!ok)
			break;
		addr = next;
		cond_resched();
	}
	t->huge = w.huge;
	return w.nr;
}

static unsigned int gpin_gup_flags(unsigned int flags)
{
	return (flags & GPIN_RANGE_WRITE ? FOLL_WRITE : 0) |
	       (flags & GPIN_RANGE_LONGTERM ? FOLL_LONGTERM : 0);
}

static int gpin_pin_mode(struct gpin_range *r, unsigned int flags,
			 struct gpin_pin_tally *t)
{
	unsigned int gup_flags = gpin_gup_flags(flags);
	unsigned long fast;
	int ret;

	switch (r->mode) {
	case GPIN_MODE_FAST:
		fast = gpin_pin_walk(r->start, r->npages, flags, r->pages, t);
		r->fast_pages = fast;
		if (fast == r->npages)
			return 0;
		/* Keep what the walk took; the locked path does the rest. */
		t->fallback = true;
		ret = gpin_pin_locked(r->start + (fast << PAGE_SHIFT),
				      r->npages - fast, gup_flags,
				      r->pages + fast, &t->lock_wait_ns);
		if (ret)
			unpin_user_pages(r->pages, fast);
		else
			t->huge += gpin_count_huge(r->pages + fast,
						   r->npages - fast);
		return ret;
	case GPIN_MODE_LOCKED:
		ret = gpin_pin_locked(r->start, r->npages, gup_flags, r->pages,
				      &t->lock_wait_ns);
		break;
	case GPIN_MODE_KERNEL:
		ret = gpin_pin_kernel(r->start, r->npages, gup_flags, r->pages,
				      t);
		break;
	default:
		return -EINVAL;
	}
	if (!ret)
		t->huge = gpin_count_huge(r->pages, r->npages);
	return ret;
}

/**
 * gpin_range_pin - pin the pages of a user range of current->mm
 * @r: range to fill
 * @start: page-aligned user address (validated by the caller)
 * @npages: 1..GPIN_MAX_PAGES_PER_PIN
 * @mode: enum gpin_mode
 * @flags: GPIN_RANGE_WRITE (the pages will be written to),
 *	   GPIN_RANGE_LONGTERM (held indefinitely: FOLL_LONGTERM)
 * @pages: room for @npages page pointers that outlives the range (a
 *	   direct I/O request keeps its own, one array for all its ranges,
 *	   inline when small), or NULL: allocated here and freed on release
 * @stats: the counters of the file the pin is for (the module's are
 *	   updated too)
 *
 * Return: 0 with every page pinned, or a negative errno with none; -ENOMEM
 * also when the module already holds max_pins pins, or when a folio would
 * pass gpin_folio_ref_limit.
 */
int gpin_range_pin(struct gpin_range *r, unsigned long start,
		   unsigned long npages, u32 mode, unsigned int flags,
		   struct page **pages,
		   struct gpin_pcpu_stats __percpu *stats)
{
	struct gpin_pin_tally t = { };
	int ret;

	if (mode >= GPIN_MODE_COUNT)
		return -EINVAL;
	ret = gpin_pins_reserve(npages);
	if (ret)
		return ret;
	r->own_pages = !pages;
	r->pages = pages ?: kvmalloc_array(npages, sizeof(*r->pages),
					   GFP_KERNEL_ACCOUNT);
	if (!r->pages) {
		gpin_pins_unreserve(npages);
		return -ENOMEM;
	}
	r->start = start;
	r->npages = npages;
	r->stats = stats;
	r->mode = mode;
	r->write = flags & GPIN_RANGE_WRITE;
	r->fast_pages = 0;

	ret = gpin_pin_mode(r, flags, &t);
	t.failed = ret;
	t.pages = npages;
	t.fast_pages = r->fast_pages;
	gpin_stats_pin(stats, mode, &t);
	if (ret) {
		if (r->own_pages)
			kvfree(r->pages);
		r->pages = NULL;
		gpin_pins_unreserve(npages);
		return ret;
	}
	r->held = true;
	return 0;
}

/**
 * gpin_range_forget - stop accounting a range that can never be released
 * @r: a range filled by gpin_range_pin(), whose pages stay pinned for good
 *
 * For dio.c's leak of pages under I/O it cannot wait for: @r and its pages
 * stay as they are; the module's pin and live-page counts drop them.
 */
void gpin_range_forget(struct gpin_range *r)
{
	gpin_stats_live(r->stats, r->mode, -(long)r->npages);
	gpin_pins_unreserve(r->npages);
	r->held = false;
}

/**
 * gpin_range_dirty - whether every folio of a range is dirty already
 * @r: a held range
 *
 * A direct I/O read that completes in interrupt context may unpin without
 * the page lock when the device wrote only into pages already marked
 * dirty (what bio_check_pages_dirty() does for the kernel's own reads).
 * Anonymous memory stays dirty once marked, so after the first read into
 * a buffer this is the usual case.
 */
bool gpin_range_dirty(const struct gpin_range *r)
{
	unsigned long i;

	for (i = 0; i < r->npages; i++)
		if (!folio_test_dirty(page_folio(r->pages[i])))
			return false;
	return true;
}

/**
 * gpin_range_unpin - drop the pins of a range, keep its page array
 * @r: a range filled by gpin_range_pin(); nothing happens once unpinned
 * @dirty: mark the pages dirty under the page lock (process context);
 *	   without it, any context (a completion's interrupt included)
 */
void gpin_range_unpin(struct gpin_range *r, bool dirty)
{
	if (!r->held)
		return;
	unpin_user_pages_dirty_lock(r->pages, r->npages, dirty && r->write);
	gpin_stats_live(r->stats, r->mode, -(long)r->npages);
	gpin_pins_unreserve(r->npages);
	r->held = false;
}

/**
 * gpin_range_release - unpin a range and free its page array (if its own)
 * @r: a range filled by gpin_range_pin() (or one never filled)
 * @dirty: the kernel wrote to the pages (a direct I/O read): mark them
 *	   dirty, once per folio, under the page lock
 *
 * Process context.  A PIN handle holds up to GPIN_MAX_PAGES_PER_PIN pages:
 * they go back in batches with a chance to reschedule between them.
 */
void gpin_range_release(struct gpin_range *r, bool dirty)
{
	unsigned long done, n;

	if (r->held) {
		for (done = 0; done < r->npages; done += n) {
			n = min_t(unsigned long, r->npages - done,
				  GPIN_BATCH_MAX);
			unpin_user_pages_dirty_lock(r->pages + done, n,
						    dirty && r->write);
			cond_resched();
		}
		gpin_stats_live(r->stats, r->mode, -(long)r->npages);
		gpin_pins_unreserve(r->npages);
		r->held = false;
	}
	if (r->own_pages)
		kvfree(r->pages);
	r->pages = NULL;
}
