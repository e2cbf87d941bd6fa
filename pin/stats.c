// SPDX-License-Identifier: GPL-2.0
/*
 * gpin statistics: per-CPU counters per mode, summed on read, exported
 * through GPIN_IOC_STATS and /sys/kernel/debug/gpin/stats.
 */
#include <linux/debugfs.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "gpin_internal.h"

static struct gpin_pcpu_stats __percpu *gpin_pcpu;
static struct dentry *gpin_debugfs_dir;

static const char * const gpin_mode_names[GPIN_MODE_COUNT] = {
	[GPIN_MODE_FAST] = "fast",
	[GPIN_MODE_LOCKED] = "locked",
	[GPIN_MODE_KERNEL] = "kernel",
};

/* Must be followed by gpin_stats_put_cpu(); preemption is off between. */
struct gpin_pcpu_mode *gpin_stats_this_cpu(u32 mode)
{
	struct gpin_pcpu_stats *s = get_cpu_ptr(gpin_pcpu);

	return &s->mode[mode];
}

void gpin_stats_put_cpu(void)
{
	put_cpu_ptr(gpin_pcpu);
}

void gpin_stats_live(u32 mode, long delta)
{
	this_cpu_add(gpin_pcpu->mode[mode].live_pages, delta);
}

/*
 * The worst interrupts-off window of @mode so far, if @ns is worse.  The
 * fast walk calls it with interrupts off, the kernel mode (range.c) after
 * each call, preemptible: the per-CPU read-compare-write must not migrate
 * or be preempted by another update on the same CPU, hence get_cpu_ptr().
 */
void gpin_stats_irqoff(u32 mode, u64 ns)
{
	struct gpin_pcpu_mode *m = gpin_stats_this_cpu(mode);

	if (ns > m->max_irqoff_ns)
		m->max_irqoff_ns = ns;
	gpin_stats_put_cpu();
}

/* One direct I/O request finished with @res (bytes or -errno). */
void gpin_stats_dio(u32 mode, long res)
{
	struct gpin_pcpu_mode *m = gpin_stats_this_cpu(mode);

	m->dio_requests++;
	if (res > 0)
		m->dio_bytes += res;
	gpin_stats_put_cpu();
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

/* Fills the counter part of @st (everything but size/flags/file fields). */
void gpin_stats_read(struct gpin_stats *st)
{
	int cpu, i;

	st->nr_modes = GPIN_MODE_COUNT;
	st->batch = READ_ONCE(gpin_batch);
	st->max_pages_per_pin = GPIN_MAX_PAGES_PER_PIN;
	st->max_pages_per_file = GPIN_MAX_PAGES_PER_FILE;
	memset(st->mode, 0, sizeof(st->mode));
	for_each_possible_cpu(cpu) {
		struct gpin_pcpu_stats *s = per_cpu_ptr(gpin_pcpu, cpu);

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
void gpin_stats_reset(void)
{
	int cpu, i;

	for_each_possible_cpu(cpu) {
		struct gpin_pcpu_stats *s = per_cpu_ptr(gpin_pcpu, cpu);

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

static int gpin_stats_show(struct seq_file *sf, void *unused)
{
	struct gpin_stats *st;
	int i;

	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	gpin_stats_read(st);
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
