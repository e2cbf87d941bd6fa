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
 * Every pin the module holds, over all files and modes: one page pinned
 * twice (aliased buffers) counts twice.  A per-CPU counter, so that the
 * vCPU threads of one process do not share a cache line per pin.
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
 * The pre-2008 path: mmap_lock for reading, then pin_user_pages(), which
 * faults pages in (and unshares them) as needed and knows every kind of
 * VMA.  All or nothing: on error nothing stays pinned.
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
		ret = gpin_pin_user_pages(start + (done << PAGE_SHIFT),
					  nr - done, gup_flags, pages + done);
		if (ret <= 0)
			break;
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
 * for a whole call, so calls are bounded to gpin_batch pages, as our walk's
 * windows are; the time of each call is recorded as its interrupts-off
 * time (an upper bound: it includes the setup around the walk).
 */
static int gpin_pin_kernel(unsigned long start, unsigned long nr,
			   unsigned int gup_flags, struct page **pages)
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
		gpin_stats_irqoff(GPIN_MODE_KERNEL, local_clock() - t0);
		if (ret <= 0)
			break;
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
 */
static unsigned long gpin_pin_walk(unsigned long start, unsigned long nr,
				   unsigned int flags, struct page **pages,
				   unsigned long *huge)
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
		gpin_stats_irqoff(GPIN_MODE_FAST, local_clock() - t0);
		local_irq_restore(irqflags);
		if (read_seqcount_retry(&mm->write_protect_seq, seq)) {
			unpin_user_pages(pages + before, w.nr - before);
			w.nr = before;
			break;
		}
		if (!ok)
			break;
		addr = next;
		cond_resched();
	}
	*huge = w.huge;
	return w.nr;
}

static unsigned int gpin_gup_flags(unsigned int flags)
{
	return (flags & GPIN_RANGE_WRITE ? FOLL_WRITE : 0) |
	       (flags & GPIN_RANGE_LONGTERM ? FOLL_LONGTERM : 0);
}

static int gpin_pin_mode(struct gpin_range *r, unsigned int flags,
			 unsigned long *huge, bool *fallback, u64 *wait_ns)
{
	unsigned int gup_flags = gpin_gup_flags(flags);
	unsigned long fast;
	int ret;

	switch (r->mode) {
	case GPIN_MODE_FAST:
		fast = gpin_pin_walk(r->start, r->npages, flags, r->pages,
				     huge);
		r->fast_pages = fast;
		if (fast == r->npages)
			return 0;
		/* Keep what the walk took; the locked path does the rest. */
		*fallback = true;
		ret = gpin_pin_locked(r->start + (fast << PAGE_SHIFT),
				      r->npages - fast, gup_flags,
				      r->pages + fast, wait_ns);
		if (ret)
			unpin_user_pages(r->pages, fast);
		else
			*huge += gpin_count_huge(r->pages + fast,
						 r->npages - fast);
		return ret;
	case GPIN_MODE_LOCKED:
		ret = gpin_pin_locked(r->start, r->npages, gup_flags, r->pages,
				      wait_ns);
		break;
	case GPIN_MODE_KERNEL:
		ret = gpin_pin_kernel(r->start, r->npages, gup_flags, r->pages);
		break;
	default:
		return -EINVAL;
	}
	if (!ret)
		*huge = gpin_count_huge(r->pages, r->npages);
	return ret;
}

/**
 * gpin_range_pin - pin the pages of a user range of current->mm
 * @r: range to fill; r->pages is allocated here
 * @start: page-aligned user address (validated by the caller)
 * @npages: 1..GPIN_MAX_PAGES_PER_PIN
 * @mode: enum gpin_mode
 * @flags: GPIN_RANGE_WRITE (the pages will be written to),
 *	   GPIN_RANGE_LONGTERM (held indefinitely: FOLL_LONGTERM)
 *
 * Return: 0 with every page pinned, or a negative errno with none; -ENOMEM
 * also when the module already holds max_pins pins.
 */
int gpin_range_pin(struct gpin_range *r, unsigned long start,
		   unsigned long npages, u32 mode, unsigned int flags)
{
	unsigned long huge = 0;
	struct gpin_pcpu_mode *st;
	bool fallback = false;
	u64 wait_ns = 0;
	int ret;

	if (mode >= GPIN_MODE_COUNT)
		return -EINVAL;
	ret = gpin_pins_reserve(npages);
	if (ret)
		return ret;
	r->pages = kvmalloc_array(npages, sizeof(*r->pages), GFP_KERNEL);
	if (!r->pages) {
		gpin_pins_unreserve(npages);
		return -ENOMEM;
	}
	r->start = start;
	r->npages = npages;
	r->mode = mode;
	r->write = flags & GPIN_RANGE_WRITE;
	r->fast_pages = 0;

	ret = gpin_pin_mode(r, flags, &huge, &fallback, &wait_ns);

	st = gpin_stats_this_cpu(mode);
	st->calls++;
	st->lock_wait_ns += wait_ns;
	st->fallbacks += fallback;
	if (ret) {
		st->failures++;
	} else {
		st->pages += npages;
		st->fast_pages += r->fast_pages;
		st->huge_leaves += huge;
		st->live_pages += npages;
	}
	gpin_stats_put_cpu();
	if (ret) {
		kvfree(r->pages);
		r->pages = NULL;
		gpin_pins_unreserve(npages);
	}
	return ret;
}

/**
 * gpin_range_release - unpin a pinned range
 * @r: a range filled by gpin_range_pin()
 * @dirty: the kernel wrote to the pages (a direct I/O read): mark them
 *	   dirty, once per folio, under the page lock
 *
 * Process context: dirtying may sleep on the page lock.
 */
void gpin_range_release(struct gpin_range *r, bool dirty)
{
	if (!r->pages)
		return;
	unpin_user_pages_dirty_lock(r->pages, r->npages, dirty && r->write);
	gpin_stats_live(r->mode, -(long)r->npages);
	gpin_pins_unreserve(r->npages);
	kvfree(r->pages);
	r->pages = NULL;
}
