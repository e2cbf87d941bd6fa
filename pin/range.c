// SPDX-License-Identifier: GPL-2.0
/*
 * Pinning a user range in one of the three modes, and releasing it.
 *
 * All modes take plain page references (FOLL_GET semantics, released with
 * put_page()), so that the comparison between them is about how the pages
 * are found, not about how they are held.
 */
#include <linux/irqflags.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
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
		 "pages per interrupts-disabled window of the fast walk (1..512, default 64)");

static void gpin_put_pages(struct page **pages, unsigned long nr, bool dirty)
{
	unsigned long i;

	for (i = 0; i < nr; i++) {
		if (dirty)
			set_page_dirty_lock(pages[i]);
		put_page(pages[i]);
	}
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
 * The pre-2008 path: mmap_lock for reading, then get_user_pages(), which
 * faults pages in as needed and knows every kind of VMA.  All or nothing:
 * on error nothing stays referenced.
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
		ret = gpin_get_user_pages(start + (done << PAGE_SHIFT),
					  nr - done, gup_flags, pages + done);
		if (ret <= 0)
			break;
		done += ret;
	}
	mmap_read_unlock(mm);

	if (done < nr) {
		gpin_put_pages(pages, done, false);
		return ret < 0 ? ret : -EFAULT;
	}
	return 0;
}

/* The kernel's own lockless walk, for reference. */
static int gpin_pin_kernel(unsigned long start, unsigned long nr,
			   unsigned int gup_flags, struct page **pages)
{
	unsigned long done = 0;
	long ret = 0;

	while (done < nr) {
		unsigned long left = nr - done;
		int chunk = min_t(unsigned long, left, INT_MAX);

		ret = get_user_pages_fast(start + (done << PAGE_SHIFT), chunk,
					  gup_flags, pages + done);
		if (ret <= 0)
			break;
		done += ret;
	}
	if (done < nr) {
		gpin_put_pages(pages, done, false);
		return ret < 0 ? ret : -EFAULT;
	}
	return 0;
}

/*
 * The fast walk, one bounded batch of pages per interrupts-disabled window
 * so that a large pin does not hold off interrupts (and TLB shootdowns of
 * other threads) for long.  Returns the number of pages taken, a prefix of
 * the range.
 */
static unsigned long gpin_pin_walk(unsigned long start, unsigned long nr,
				   bool write, struct page **pages,
				   unsigned long *huge)
{
	unsigned long end = start + (nr << PAGE_SHIFT);
	unsigned long batch = READ_ONCE(gpin_batch);
	struct gpin_walk w = {
		.pages = pages,
		.write = write,
	};
	unsigned long addr = start;

	while (addr != end) {
		unsigned long next, flags;
		int ok;
		u64 t0;

		next = end - addr > (batch << PAGE_SHIFT) ?
		       addr + (batch << PAGE_SHIFT) : end;
		local_irq_save(flags);
		t0 = local_clock();
		ok = gpin_walk_range(current->mm, addr, next, &w);
		gpin_stats_irqoff(GPIN_MODE_FAST, local_clock() - t0);
		local_irq_restore(flags);
		if (!ok)
			break;
		addr = next;
		cond_resched();
	}
	*huge = w.huge;
	return w.nr;
}

/**
 * gpin_range_pin - reference the pages of a user range of current->mm
 * @r: range to fill; r->pages is allocated here
 * @start: page-aligned user address (validated by the caller)
 * @npages: 1..GPIN_MAX_PAGES_PER_PIN
 * @mode: enum gpin_mode
 * @write: the pages will be written to
 *
 * Return: 0 with every page referenced, or a negative errno with none.
 */
int gpin_range_pin(struct gpin_range *r, unsigned long start,
		   unsigned long npages, u32 mode, bool write)
{
	unsigned int gup_flags = write ? FOLL_WRITE : 0;
	unsigned long fast = 0, huge = 0;
	struct gpin_pcpu_mode *st;
	bool fallback = false;
	u64 wait_ns = 0;
	int ret = 0;

	r->pages = kvmalloc_array(npages, sizeof(*r->pages), GFP_KERNEL);
	if (!r->pages)
		return -ENOMEM;
	r->start = start;
	r->npages = npages;
	r->mode = mode;
	r->write = write;

	switch (mode) {
	case GPIN_MODE_FAST:
		fast = gpin_pin_walk(start, npages, write, r->pages, &huge);
		if (fast == npages)
			break;
		/* Keep what the walk took; the locked path does the rest. */
		fallback = true;
		ret = gpin_pin_locked(start + (fast << PAGE_SHIFT),
				      npages - fast, gup_flags,
				      r->pages + fast, &wait_ns);
		if (ret)
			gpin_put_pages(r->pages, fast, false);
		else
			huge += gpin_count_huge(r->pages + fast, npages - fast);
		break;
	case GPIN_MODE_LOCKED:
		ret = gpin_pin_locked(start, npages, gup_flags, r->pages,
				      &wait_ns);
		if (!ret)
			huge = gpin_count_huge(r->pages, npages);
		break;
	case GPIN_MODE_KERNEL:
		ret = gpin_pin_kernel(start, npages, gup_flags, r->pages);
		if (!ret)
			huge = gpin_count_huge(r->pages, npages);
		break;
	default:
		ret = -EINVAL;
		break;
	}

	if (mode >= GPIN_MODE_COUNT)
		goto err_free;

	st = gpin_stats_this_cpu(mode);
	st->calls++;
	st->lock_wait_ns += wait_ns;
	st->fallbacks += fallback;
	if (ret) {
		st->failures++;
	} else {
		st->pages += npages;
		st->fast_pages += fast;
		st->huge_leaves += huge;
		st->live_pages += npages;
	}
	gpin_stats_put_cpu();
	if (ret)
		goto err_free;

	r->fast_pages = fast;
	return 0;

err_free:
	kvfree(r->pages);
	r->pages = NULL;
	return ret;
}

/**
 * gpin_range_release - drop the references of a pinned range
 * @r: a range filled by gpin_range_pin()
 * @dirty: the kernel wrote to the pages (a direct I/O read): mark them dirty
 */
void gpin_range_release(struct gpin_range *r, bool dirty)
{
	if (!r->pages)
		return;
	gpin_put_pages(r->pages, r->npages, dirty && r->write);
	gpin_stats_live(r->mode, -(long)r->npages);
	kvfree(r->pages);
	r->pages = NULL;
}
