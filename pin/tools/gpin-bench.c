// SPDX-License-Identifier: GPL-2.0
/*
 * gpin-bench pin: what a page costs to pin in each gpin mode.
 *
 * Two tables, each cell run for --duration seconds:
 *  - single: one thread pins and unpins BATCH pages at a time, cycling over
 *    a pre-faulted buffer of 4K pages or of THPs; cost in ns per page
 *    (PIN + UNPIN ioctls included, the same for every mode), and apart the
 *    time inside the PIN ioctls (finding and pinning: where the modes
 *    differ) and inside the UNPIN ones (the release, shared by all);
 *  - threads: N threads of this process pin/unpin --thread-batch pages of
 *    one shared 4K buffer, each through its own /dev/gpin file, with and
 *    without one more thread looping mmap/munmap (an mmap_lock writer);
 *    aggregate pages per second.
 * Module counters (calls, fallbacks, lock wait, worst IRQ-off window) are
 * reset before and read after each cell.  A benchmark: no pass/fail.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "libgpin.h"

#include "cli.h"

#define PAGE		4096UL
#define HPAGE		(2UL << 20)
#define BUF_PAGES	4096UL		/* 16 MiB: 8 THPs */

struct opts {
	double duration;
	int single, threads;
	struct cli_list modes, backing, batches, nthreads, writer;
	unsigned long thread_batch;
	const char *json;
};

struct cell_stats {
	double calls, pages, fast_pages, fallbacks, huge, lock_wait_ms;
	double irqoff_us;
};

struct single_cell {
	int mode, thp;
	unsigned long batch;
	double ns_per_page, pin_ns_per_page, unpin_ns_per_page;
	struct cell_stats st;
};

struct thread_cell {
	int mode, writer;
	unsigned long nthreads;
	double pages_per_s, writer_ops_per_s;
	struct cell_stats st;
};

static const char *const backing_names[] = { "4k", "thp" };

static void usage(FILE *f)
{
	fprintf(f,
"usage: gpin-bench pin [OPTIONS]\n"
"Pin/unpin cost per gpin mode (needs gpin.ko and root).  Lists are\n"
"comma-separated.\n"
"  --duration SEC       seconds per cell (default 1); in the single table\n"
"                       half of it times whole pin+unpin rounds (ns/page),\n"
"                       half each PIN and UNPIN call apart\n"
"  --only single|threads   run one of the two tables (default both)\n"
"  --modes LIST         fast,locked,kernel (default all three)\n"
"  --backing LIST       single table: 4k,thp (default both)\n"
"  --batches LIST       single table: pages per PIN call (default 1,16,64,512)\n"
"  --threads LIST       threads table: pinning threads (default 1,2,4,8)\n"
"  --thread-batch N     threads table: pages per PIN call (default 64)\n"
"  --writer LIST        threads table: no,yes = without/with one extra thread\n"
"                       looping mmap/munmap (default no,yes)\n"
"  --json FILE          also write every cell, counters and ratios as JSON\n"
"  -h, --help           this text\n"
"Output: the two tables (Markdown), then the ratios fast/kernel ns per page\n"
"and fast/locked pages/s with the writer.  gpin " GPIN_VERSION "\n");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "gpin-bench: %s: %s\n", what, libgpin_strerror(errno));
	exit(1);
}

static void *map_buffer(int thp)
{
	size_t len = BUF_PAGES * PAGE;
	char *p = mmap(NULL, len + HPAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a;

	if (p == MAP_FAILED)
		die("mmap");
	a = (char *)(((unsigned long)p + HPAGE - 1) & ~(HPAGE - 1));
	madvise(a, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(a, 1, len);	/* fault everything in: the steady state */
	return a;
}

/*
 * Adds @mode's counters of a file (GPIN_STATS_FILE: that file's own work,
 * whatever other users of the module do) to @c; the longest
 * interrupts-off window is the longest of them.
 */
static void add_file_counters(const struct gpin_stats *st, int mode,
			      struct cell_stats *c)
{
	const struct gpin_mode_stats *m = &st->mode[mode];

	c->calls += m->calls;
	c->pages += m->pages;
	c->fast_pages += m->fast_pages;
	c->fallbacks += m->fallbacks;
	c->huge += m->huge_leaves;
	c->lock_wait_ms += m->lock_wait_ns / 1e6;
	if (m->max_irqoff_ns / 1e3 > c->irqoff_us)
		c->irqoff_us = m->max_irqoff_ns / 1e3;
}

/* A single-thread cell: its file's counters, zeroed at the cell's start. */
static void read_file_stats(struct libgpin *g, int mode, struct cell_stats *c)
{
	struct gpin_stats st;

	if (libgpin_file_stats(g, &st))
		die("stats");
	memset(c, 0, sizeof(*c));
	add_file_counters(&st, mode, c);
}

/* One pin + unpin of @n pages; exits on error (a benchmark must not lie). */
static void pin_unpin(struct libgpin *g, char *p, unsigned long n, int mode)
{
	uint32_t h;

	if (libgpin_pin(g, p, n, mode, GPIN_PIN_WRITE, NULL, &h, NULL))
		die("pin");
	if (libgpin_unpin(g, h))
		die("unpin");
}

/*
 * The same, timing each of the two calls into @pin_s and @unpin_s.  Each
 * time holds about one clock read (tens of ns under TCG): a visible part
 * of a call of 1 page, a negligible one per page at batches of 64 and up.
 */
static void pin_unpin_timed(struct libgpin *g, char *p, unsigned long n,
			    int mode, double *pin_s, double *unpin_s)
{
	double t0 = now(), t1, t2;
	uint32_t h;

	if (libgpin_pin(g, p, n, mode, GPIN_PIN_WRITE, NULL, &h, NULL))
		die("pin");
	t1 = now();
	if (libgpin_unpin(g, h))
		die("unpin");
	t2 = now();
	*pin_s += t1 - t0;
	*unpin_s += t2 - t1;
}

/* Cycles over the buffer: the next BATCH pages at @pos, wrapping. */
static unsigned long next_pos(unsigned long pos, unsigned long batch)
{
	pos += batch;
	return pos + batch > BUF_PAGES ? 0 : pos;
}

/* What a pass of the single table took: pages, seconds, and apart. */
struct single_pass {
	unsigned long pages;
	double seconds, pin_s, unpin_s;
};

/*
 * Pin and unpin BATCH pages at a time from *@pos for @seconds, with the
 * clock read every 16 calls; @timed also times each PIN and UNPIN call
 * apart (pin_unpin_timed()).
 */
static void run_pass(struct libgpin *g, const struct single_cell *c,
		     char *buf, unsigned long *pos, double seconds, bool timed,
		     struct single_pass *p)
{
	double t0 = now();
	int i;

	do {
		for (i = 0; i < 16; i++) {
			if (timed)
				pin_unpin_timed(g, buf + *pos * PAGE, c->batch,
						c->mode, &p->pin_s,
						&p->unpin_s);
			else
				pin_unpin(g, buf + *pos * PAGE, c->batch,
					  c->mode);
			p->pages += c->batch;
			*pos = next_pos(*pos, c->batch);
		}
		p->seconds = now() - t0;
	} while (p->seconds < seconds);
}

/*
 * Two passes of half the duration each: the first times whole rounds of
 * 16 calls (ns_per_page, the clock kept out of the calls), the second
 * each PIN and UNPIN call apart (pin_ns_per_page, unpin_ns_per_page).
 */
static void run_single(struct libgpin *g, const struct opts *o,
		       struct single_cell *c)
{
	char *buf = map_buffer(c->thp);
	struct single_pass whole = { 0 }, apart = { 0 };
	unsigned long pos = 0;

	libgpin_file_stats_reset(g);
	run_pass(g, c, buf, &pos, o->duration / 2, false, &whole);
	run_pass(g, c, buf, &pos, o->duration / 2, true, &apart);
	c->ns_per_page = whole.seconds * 1e9 / whole.pages;
	c->pin_ns_per_page = apart.pin_s * 1e9 / apart.pages;
	c->unpin_ns_per_page = apart.unpin_s * 1e9 / apart.pages;
	read_file_stats(g, c->mode, &c->st);
	munmap(buf, BUF_PAGES * PAGE);
}

struct worker {
	pthread_t tid;
	char *buf;
	unsigned long batch, start, count;
	int mode;
	struct gpin_stats st;	/* a pinner's file's counters at its end */
};

static int go, stop;

#define LOAD(x)		__atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define STORE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

static void *pinner(void *arg)
{
	struct worker *w = arg;
	struct libgpin *g = libgpin_open();
	unsigned long pos = w->start;

	if (!g)
		die("open");
	while (!LOAD(go))
		;
	while (!LOAD(stop)) {
		pin_unpin(g, w->buf + pos * PAGE, w->batch, w->mode);
		w->count += w->batch;
		pos = next_pos(pos, w->batch);
	}
	/* the thread's own file: exactly its work (zero at open) */
	if (libgpin_file_stats(g, &w->st))
		die("stats");
	libgpin_close(g);
	return NULL;
}

/*
 * The mmap_lock writer: every mmap and munmap takes it for writing.  The
 * page is not touched: munmap of a mapped page would add a TLB-shootdown
 * IPI to every CPU running this mm, which measures IPIs, not the lock.
 */
static void *writer(void *arg)
{
	struct worker *w = arg;

	while (!LOAD(go))
		;
	while (!LOAD(stop)) {
		char *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			die("mmap");
		munmap(p, PAGE);
		w->count++;
	}
	return NULL;
}

static void run_threads(const struct opts *o, struct thread_cell *c)
{
	char *buf = map_buffer(0);
	struct worker *w = calloc(c->nthreads + 1, sizeof(*w));
	unsigned long i, pages = 0;
	double t0, t;

	STORE(go, 0);
	STORE(stop, 0);
	for (i = 0; i <= c->nthreads; i++) {
		w[i].buf = buf;
		w[i].batch = o->thread_batch;
		w[i].mode = c->mode;
		/* start apart; they still meet on the same pages */
		w[i].start = (i * BUF_PAGES / (c->nthreads + 1)) /
			     o->thread_batch * o->thread_batch;
		if (i < c->nthreads)
			pthread_create(&w[i].tid, NULL, pinner, &w[i]);
		else if (c->writer)
			pthread_create(&w[i].tid, NULL, writer, &w[i]);
	}
	usleep(100000);
	t0 = now();
	STORE(go, 1);
	usleep((useconds_t)(o->duration * 1e6));
	STORE(stop, 1);
	t = now() - t0;
	memset(&c->st, 0, sizeof(c->st));
	for (i = 0; i <= c->nthreads; i++) {
		if (i < c->nthreads || c->writer)
			pthread_join(w[i].tid, NULL);
		if (i < c->nthreads) {
			pages += w[i].count;
			add_file_counters(&w[i].st, c->mode, &c->st);
		}
	}
	c->pages_per_s = pages / t;
	c->writer_ops_per_s = c->writer ? w[c->nthreads].count / t : 0;
	free(w);
	munmap(buf, BUF_PAGES * PAGE);
}

static const struct single_cell *find_single(const struct single_cell *s,
					     unsigned int n, int mode, int thp,
					     unsigned long batch)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (s[i].mode == mode && s[i].thp == thp && s[i].batch == batch)
			return &s[i];
	return NULL;
}

static const struct thread_cell *find_thread(const struct thread_cell *t,
					     unsigned int n, int mode,
					     unsigned long nthreads, int wr)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (t[i].mode == mode && t[i].nthreads == nthreads &&
		    t[i].writer == wr)
			return &t[i];
	return NULL;
}

static void json_stats(FILE *f, const struct cell_stats *s)
{
	fprintf(f, "\"calls\": %.0f, \"pages\": %.0f, \"fast_pages\": %.0f, "
		"\"fallbacks\": %.0f, \"huge_leaves\": %.0f, "
		"\"lock_wait_ms\": %.3f, \"max_irqoff_us\": %.1f",
		s->calls, s->pages, s->fast_pages, s->fallbacks, s->huge,
		s->lock_wait_ms, s->irqoff_us);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "only", required_argument, NULL, 'o' },
		{ "modes", required_argument, NULL, 'm' },
		{ "backing", required_argument, NULL, 'b' },
		{ "batches", required_argument, NULL, 'B' },
		{ "threads", required_argument, NULL, 't' },
		{ "thread-batch", required_argument, NULL, 'T' },
		{ "writer", required_argument, NULL, 'w' },
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const mode_names[] = { "fast", "locked", "kernel" };
	static const char *const yesno[] = { "no", "yes" };
	struct opts o = {
		.duration = 1.0, .single = 1, .threads = 1, .thread_batch = 64,
		.modes = { 3, { 0, 1, 2 } }, .backing = { 2, { 0, 1 } },
		.batches = { 4, { 1, 16, 64, 512 } },
		.nthreads = { 4, { 1, 2, 4, 8 } }, .writer = { 2, { 0, 1 } },
	};
	struct single_cell *sc;
	struct thread_cell *tc;
	unsigned int ns = 0, nt = 0, i, j, k, m;
	struct gpin_stats st;
	struct utsname un;
	struct libgpin *g;
	FILE *jf = NULL;
	int c;

	if (argc < 2 || strcmp(argv[1], "pin")) {
		if (argc >= 2 && (!strcmp(argv[1], "-h") ||
				  !strcmp(argv[1], "--help"))) {
			usage(stdout);
			return 0;
		}
		usage(stderr);
		return 2;
	}
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		int bad = 0;
		char *end;

		switch (c) {
		case 'd':
			o.duration = strtod(optarg, &end);
			bad = *end || o.duration <= 0;
			break;
		case 'o':
			o.single = !strcmp(optarg, "single");
			o.threads = !strcmp(optarg, "threads");
			bad = !o.single && !o.threads;
			break;
		case 'm':
			bad = cli_parse_list(optarg, &o.modes, mode_names, 3,
					     0);
			break;
		case 'b':
			bad = cli_parse_list(optarg, &o.backing,
					     backing_names, 2, 0);
			break;
		case 'B':
			bad = cli_parse_list(optarg, &o.batches, NULL, 0, 0);
			for (i = 0; !bad && i < o.batches.n; i++)
				bad = o.batches.v[i] > 512;
			break;
		case 't':
			bad = cli_parse_list(optarg, &o.nthreads, NULL, 0, 0);
			for (i = 0; !bad && i < o.nthreads.n; i++)
				bad = o.nthreads.v[i] > 64;
			break;
		case 'T':
			o.thread_batch = strtoul(optarg, &end, 10);
			bad = *end || !o.thread_batch ||
			      o.thread_batch > BUF_PAGES / 16;
			break;
		case 'w':
			bad = cli_parse_list(optarg, &o.writer, yesno, 2, 0);
			break;
		case 'j':
			o.json = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (bad) {
			for (i = 0; lopts[i].val != c; i++)
				;
			fprintf(stderr, "gpin-bench: bad value for --%s: %s\n",
				lopts[i].name, optarg);
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}

	g = libgpin_open();
	if (!g)
		die("open " GPIN_DEVICE_PATH);
	if (libgpin_stats(g, &st))
		die("stats");
	uname(&un);
	printf("gpin-bench pin: kernel %s, %ld CPUs online, module batch %u, %.2f s per cell\n",
	       un.release, sysconf(_SC_NPROCESSORS_ONLN), st.batch,
	       o.duration);
	sc = calloc(o.modes.n * o.backing.n * o.batches.n, sizeof(*sc));
	tc = calloc(o.modes.n * o.nthreads.n * o.writer.n, sizeof(*tc));

	if (o.single) {
		printf("\n| backing | batch | mode | ns/page | pin ns/page | unpin ns/page | calls | fallbacks | huge leaves | lock wait ms | max IRQ-off us |\n");
		printf("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
		for (i = 0; i < o.backing.n; i++)
			for (j = 0; j < o.batches.n; j++)
				for (m = 0; m < o.modes.n; m++) {
					struct single_cell *s = &sc[ns++];

					s->thp = o.backing.v[i];
					s->batch = o.batches.v[j];
					s->mode = o.modes.v[m];
					run_single(g, &o, s);
					printf("| %s | %lu | %s | %.1f | %.1f | %.1f | %.0f | %.0f | %.0f | %.2f | %.1f |\n",
					       backing_names[s->thp], s->batch,
					       mode_names[s->mode],
					       s->ns_per_page,
					       s->pin_ns_per_page,
					       s->unpin_ns_per_page, s->st.calls,
					       s->st.fallbacks, s->st.huge,
					       s->st.lock_wait_ms,
					       s->st.irqoff_us);
					fflush(stdout);
				}
	}
	if (o.threads) {
		printf("\n| threads | writer | mode | pages/s | writer ops/s | calls | fallbacks | lock wait ms | max IRQ-off us |\n");
		printf("|---:|---|---|---:|---:|---:|---:|---:|---:|\n");
		for (k = 0; k < o.writer.n; k++)
			for (i = 0; i < o.nthreads.n; i++)
				for (m = 0; m < o.modes.n; m++) {
					struct thread_cell *t = &tc[nt++];

					t->writer = o.writer.v[k];
					t->nthreads = o.nthreads.v[i];
					t->mode = o.modes.v[m];
					run_threads(&o, t);
					printf("| %lu | %s | %s | %.3g M | %.3g k | %.0f | %.0f | %.2f | %.1f |\n",
					       t->nthreads, yesno[t->writer],
					       mode_names[t->mode],
					       t->pages_per_s / 1e6,
					       t->writer_ops_per_s / 1e3,
					       t->st.calls, t->st.fallbacks,
					       t->st.lock_wait_ms,
					       t->st.irqoff_us);
					fflush(stdout);
				}
	}

	if (o.json) {
		jf = fopen(o.json, "w");
		if (!jf)
			die(o.json);
		fprintf(jf, "{\n  \"kernel\": \"%s\", \"cpus\": %ld, \"module_batch\": %u, \"duration_s\": %.3f, \"thread_batch\": %lu,\n",
			un.release, sysconf(_SC_NPROCESSORS_ONLN), st.batch,
			o.duration, o.thread_batch);
		fprintf(jf, "  \"single\": [");
		for (i = 0; i < ns; i++) {
			fprintf(jf, "%s\n    {\"backing\": \"%s\", \"batch\": %lu, \"mode\": \"%s\", \"ns_per_page\": %.2f, \"pin_ns_per_page\": %.2f, \"unpin_ns_per_page\": %.2f, ",
				i ? "," : "", backing_names[sc[i].thp],
				sc[i].batch, mode_names[sc[i].mode],
				sc[i].ns_per_page, sc[i].pin_ns_per_page,
				sc[i].unpin_ns_per_page);
			json_stats(jf, &sc[i].st);
			fprintf(jf, "}");
		}
		fprintf(jf, "\n  ],\n  \"threads\": [");
		for (i = 0; i < nt; i++) {
			fprintf(jf, "%s\n    {\"threads\": %lu, \"writer\": %s, \"mode\": \"%s\", \"pages_per_s\": %.0f, \"writer_ops_per_s\": %.0f, ",
				i ? "," : "", tc[i].nthreads,
				tc[i].writer ? "true" : "false",
				mode_names[tc[i].mode], tc[i].pages_per_s,
				tc[i].writer_ops_per_s);
			json_stats(jf, &tc[i].st);
			fprintf(jf, "}");
		}
		fprintf(jf, "\n  ],\n  \"ratios\": [");
	}

	/* The targets, as ratios within this run. */
	printf("\n| ratio | cell | value | target |\n|---|---|---:|---|\n");
	k = 0;
	for (i = 0; i < o.backing.n; i++)
		for (j = 0; j < o.batches.n; j++) {
			const struct single_cell *f, *r;

			f = find_single(sc, ns, 0, o.backing.v[i],
					o.batches.v[j]);
			r = find_single(sc, ns, 2, o.backing.v[i],
					o.batches.v[j]);
			if (!f || !r)
				continue;
			printf("| fast/kernel ns per page | %s, batch %lu | %.2f | <= 1.0 |\n",
			       backing_names[o.backing.v[i]], o.batches.v[j],
			       f->ns_per_page / r->ns_per_page);
			if (jf)
				fprintf(jf, "%s\n    {\"ratio\": \"fast/kernel ns_per_page\", \"backing\": \"%s\", \"batch\": %lu, \"value\": %.3f}",
					k++ ? "," : "",
					backing_names[o.backing.v[i]],
					o.batches.v[j],
					f->ns_per_page / r->ns_per_page);
		}
	for (i = 0; i < o.nthreads.n; i++)
		for (j = 0; j < o.writer.n; j++) {
			const struct thread_cell *f, *l;

			f = find_thread(tc, nt, 0, o.nthreads.v[i],
					o.writer.v[j]);
			l = find_thread(tc, nt, 1, o.nthreads.v[i],
					o.writer.v[j]);
			if (!f || !l || !l->pages_per_s)
				continue;
			printf("| fast/locked pages/s | %lu threads, writer %s | %.2f | %s |\n",
			       o.nthreads.v[i], yesno[o.writer.v[j]],
			       f->pages_per_s / l->pages_per_s,
			       o.writer.v[j] ? ">= 5" : "-");
			if (jf)
				fprintf(jf, "%s\n    {\"ratio\": \"fast/locked pages_per_s\", \"threads\": %lu, \"writer\": %s, \"value\": %.3f}",
					k++ ? "," : "", o.nthreads.v[i],
					o.writer.v[j] ? "true" : "false",
					f->pages_per_s / l->pages_per_s);
		}
	if (jf) {
		fprintf(jf, "\n  ]\n}\n");
		if (fclose(jf))
			die(o.json);
	}
	free(sc);
	free(tc);
	libgpin_close(g);
	return 0;
}
