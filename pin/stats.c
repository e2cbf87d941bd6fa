// SPDX-License-Identifier: GPL-2.0
/*
 * gpin statistics: per-CPU counters per mode, summed on read, exported
 * through GPIN_IOC_STATS and /sys/kernel/debug/gpin/stats.
 */
#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "gpin_internal.h"

static struct gpin_pcpu_stats __percpu *gpin_pcpu;
static struct dentry *gpin_debugfs_dir;

static const char * const gpin_mode_names[GPIN_MODE_COUNT] = {
	[GPIN_MODE_FAST] = "fast",
	[GPIN_MODE_LOCKED] = "locked",
	[GPIN_MODE_KERNEL] = "kernel",
};

/*
 * Every update is a this_cpu_*() operation, safe against interrupts on the
 * same CPU: a request's pages are released (live_pages, dio_*) in its
 * completion, which may interrupt a pin call's own updates.
 */
#define gpin_pcpu_add(set, m, field, v) \
	this_cpu_add((set)->mode[m].field, v)

static void gpin_stats_pin_one(struct gpin_pcpu_stats __percpu *set,
			       u32 mode, const struct gpin_pin_tally *t)
{
	struct gpin_pcpu_mode *m;

	gpin_pcpu_add(set, mode, calls, 1);
	gpin_pcpu_add(set, mode, lock_wait_ns, t->lock_wait_ns);
	gpin_pcpu_add(set, mode, fallbacks, (u64)t->fallback);
	if (t->failed) {
		gpin_pcpu_add(set, mode, failures, 1);
	} else {
		gpin_pcpu_add(set, mode, pages, t->pages);
		gpin_pcpu_add(set, mode, fast_pages, t->fast_pages);
		gpin_pcpu_add(set, mode, huge_leaves, t->huge);
		gpin_pcpu_add(set, mode, live_pages, t->pages);
	}
	/* a read-compare-write: neither migrated nor preempted meanwhile */
	m = &get_cpu_ptr(set)->mode[mode];
	if (t->max_irqoff_ns > m->max_irqoff_ns)
		m->max_irqoff_ns = t->max_irqoff_ns;
	put_cpu_ptr(set);
}

/* One gpin_range_pin() call, for the module and for @file. */
void gpin_stats_pin(struct gpin_pcpu_stats __percpu *file, u32 mode,
		    const struct gpin_pin_tally *t)
{
	gpin_stats_pin_one(gpin_pcpu, mode, t);
	if (file)
		gpin_stats_pin_one(file, mode, t);
}

/* Pages of @mode pinned (@delta > 0) or released; any context. */
void gpin_stats_live(struct gpin_pcpu_stats __percpu *file, u32 mode,
		     long delta)
{
	gpin_pcpu_add(gpin_pcpu, mode, live_pages, delta);
	if (file)
		gpin_pcpu_add(file, mode, live_pages, delta);
}

/* One direct I/O request finished with @res (bytes or -errno). */
void gpin_stats_dio(struct gpin_pcpu_stats __percpu *file, u32 mode,
		    long res)
{
	gpin_pcpu_add(gpin_pcpu, mode, dio_requests, 1);
	if (file)
		gpin_pcpu_add(file, mode, dio_requests, 1);
	if (res > 0) {
		gpin_pcpu_add(gpin_pcpu, mode, dio_bytes, res);
		if (file)
			gpin_pcpu_add(file, mode, dio_bytes, res);
	}
}

struct gpin_pcpu_stats __percpu *gpin_stats_file_alloc(void)
{
	return alloc_percpu_gfp(struct gpin_pcpu_stats, GFP_KERNEL_ACCOUNT);
}

void gpin_stats_file_free(struct gpin_pcpu_stats __percpu *file)
{
	free_percpu(file);
}

long gpin_live_pages(void)
{
	long sum = 0;
	int cpu, i;

	for_each_possible_cpu(cpu) {
		struct gpin_pcpu_stats *s = per_cpu_ptr(gpin_pcpu, cpu);

		for (i = 0; i < GPIN_MODE_COUNT; i++)
			sum += READ_ONCE(s->mode[i].live_pages);
	}
	return sum;
}

/* Fills the counter part of @st from @set (the module's, or a file's). */
static void gpin_stats_read(struct gpin_pcpu_stats __percpu *set,
			    struct gpin_stats *st)
{
	int cpu, i;

	st->nr_modes = GPIN_MODE_COUNT;
	st->batch = READ_ONCE(gpin_batch);
	st->max_pages_per_pin = GPIN_MAX_PAGES_PER_PIN;
	st->max_pages_per_file = GPIN_MAX_PAGES_PER_FILE;
	memset(st->mode, 0, sizeof(st->mode));
	for_each_possible_cpu(cpu) {
		struct gpin_pcpu_stats *s = per_cpu_ptr(set, cpu);

		for (i = 0; i < GPIN_MODE_COUNT; i++) {
			struct gpin_pcpu_mode *c = &s->mode[i];
			struct gpin_mode_stats *o = &st->mode[i];
			u64 max = READ_ONCE(c->max_irqoff_ns);

			o->calls += READ_ONCE(c->calls);
			o->pages += READ_ONCE(c->pages);
			o->fast_pages += READ_ONCE(c->fast_pages);
			o->fallbacks += READ_ONCE(c->fallbacks);
			o->huge_leaves += READ_ONCE(c->huge_leaves);
			o->lock_wait_ns += READ_ONCE(c->lock_wait_ns);
			o->failures += READ_ONCE(c->failures);
			o->dio_requests += READ_ONCE(c->dio_requests);
			o->dio_bytes += READ_ONCE(c->dio_bytes);
			/* signed per-CPU parts, a non-negative sum */
			o->live_pages += (u64)READ_ONCE(c->live_pages);
			if (max > o->max_irqoff_ns)
				o->max_irqoff_ns = max;
		}
	}
	st->live_pages = 0;
	for (i = 0; i < GPIN_MODE_COUNT; i++)
		st->live_pages += st->mode[i].live_pages;
}

/*
 * Racy against concurrent updates by design: a counter bumped while it is
 * being zeroed may survive.  Live counts are state, not statistics, and are
 * kept.
 */
static void gpin_stats_zero(struct gpin_pcpu_stats __percpu *set)
{
	int cpu, i;

	for_each_possible_cpu(cpu) {
		struct gpin_pcpu_stats *s = per_cpu_ptr(set, cpu);

		for (i = 0; i < GPIN_MODE_COUNT; i++) {
			struct gpin_pcpu_mode *c = &s->mode[i];

			WRITE_ONCE(c->calls, 0);
			WRITE_ONCE(c->pages, 0);
			WRITE_ONCE(c->fast_pages, 0);
			WRITE_ONCE(c->fallbacks, 0);
			WRITE_ONCE(c->huge_leaves, 0);
			WRITE_ONCE(c->lock_wait_ns, 0);
			WRITE_ONCE(c->max_irqoff_ns, 0);
			WRITE_ONCE(c->failures, 0);
			WRITE_ONCE(c->dio_requests, 0);
			WRITE_ONCE(c->dio_bytes, 0);
		}
	}
}

/* GPIN_IOC_STATS */
long gpin_stats(struct gpin_file *gf, void *arg, void __user *uarg)
{
	struct gpin_stats *st = arg;
	bool file = st->flags & GPIN_STATS_FILE;

	if (st->flags & ~GPIN_STATS_FLAGS_ALL)
		return -EINVAL;
	gpin_stats_read(file ? gf->stats : gpin_pcpu, st);
	st->size = sizeof(*st);
	st->file_live_pages = atomic_long_read(&gf->live_pages);
	return copy_to_user(uarg, st, sizeof(*st)) ? -EFAULT : 0;
}

/*
 * GPIN_IOC_STATS_RESET: a file's own counters, or, for an administrator,
 * the module's, which every other user of the module reads too.
 */
long gpin_stats_reset(struct gpin_file *gf, void *arg, void __user *uarg)
{
	struct gpin_stats_reset *sr = arg;

	if (sr->flags & ~GPIN_STATS_FLAGS_ALL)
		return -EINVAL;
	if (sr->flags & GPIN_STATS_FILE) {
		gpin_stats_zero(gf->stats);
		return 0;
	}
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	gpin_stats_zero(gpin_pcpu);
	return 0;
}

static int gpin_stats_show(struct seq_file *sf, void *unused)
{
	struct gpin_stats *st;
	int i;

	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	gpin_stats_read(gpin_pcpu, st);
	seq_printf(sf, "live_pages %llu\nbatch %u\n", st->live_pages,
		   st->batch);
	seq_puts(sf, "mode calls pages fast_pages fallbacks huge_leaves lock_wait_ns max_irqoff_ns live_pages failures dio_requests dio_bytes\n");
	for (i = 0; i < GPIN_MODE_COUNT; i++) {
		struct gpin_mode_stats *m = &st->mode[i];

		seq_printf(sf, "%s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu\n",
			   gpin_mode_names[i], m->calls, m->pages,
			   m->fast_pages, m->fallbacks, m->huge_leaves,
			   m->lock_wait_ns, m->max_irqoff_ns, m->live_pages,
			   m->failures, m->dio_requests, m->dio_bytes);
	}
	kfree(st);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpin_stats);

int gpin_stats_init(void)
{
	gpin_pcpu = alloc_percpu(struct gpin_pcpu_stats);
	if (!gpin_pcpu)
		return -ENOMEM;
	/* debugfs is optional: errors are ignored, as debugfs asks. */
	gpin_debugfs_dir = debugfs_create_dir("gpin", NULL);
	debugfs_create_file("stats", 0400, gpin_debugfs_dir, NULL,
			    &gpin_stats_fops);
	return 0;
}

void gpin_stats_exit(void)
{
	debugfs_remove_recursive(gpin_debugfs_dir);
	free_percpu(gpin_pcpu);
}
