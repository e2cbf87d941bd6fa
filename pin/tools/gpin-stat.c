// SPDX-License-Identifier: GPL-2.0
/*
 * gpin-stat: print gpin.ko's counters; with an interval, print what
 * changed per second, like vmstat.
 *
 *   gpin-stat [-r] [INTERVAL [COUNT]]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "libgpin.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpin-stat [-r] [INTERVAL [COUNT]]\n"
		"gpin.ko's counters (/dev/gpin), per pin mode.\n"
		"  no INTERVAL     print the counters once\n"
		"  INTERVAL        every INTERVAL seconds, the change per second,\n"
		"                  COUNT times (default: until interrupted)\n"
		"  -r, --reset     reset the module's counters first (needs\n"
		"                  CAP_SYS_ADMIN)\n"
		"  -h, --help      this text\n"
		"  -V, --version   print the version\n"
		"Exit: 0, 1 when /dev/gpin cannot be read, 2 for bad arguments.\n"
		"gpin-stat " GPIN_VERSION "\n");
}

static int parse_ulong(const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || end == s || *end;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void print_totals(const struct gpin_stats *st)
{
	unsigned int i;

	printf("live_pages %llu  batch %u  max_pages_per_pin %llu  max_pages_per_file %llu\n",
	       (unsigned long long)st->live_pages, st->batch,
	       (unsigned long long)st->max_pages_per_pin,
	       (unsigned long long)st->max_pages_per_file);
	printf("%-6s %12s %14s %14s %10s %10s %14s %12s %10s %8s\n", "mode",
	       "calls", "pages", "fast_pages", "fallbacks", "huge", "lockwait_ns",
	       "irqoff_max", "live", "failures");
	for (i = 0; i < GPIN_MODE_COUNT; i++) {
		const struct gpin_mode_stats *m = &st->mode[i];

		printf("%-6s %12llu %14llu %14llu %10llu %10llu %14llu %12llu %10llu %8llu\n",
		       libgpin_mode_name(i), (unsigned long long)m->calls,
		       (unsigned long long)m->pages,
		       (unsigned long long)m->fast_pages,
		       (unsigned long long)m->fallbacks,
		       (unsigned long long)m->huge_leaves,
		       (unsigned long long)m->lock_wait_ns,
		       (unsigned long long)m->max_irqoff_ns,
		       (unsigned long long)m->live_pages,
		       (unsigned long long)m->failures);
	}
}

static double rate(uint64_t now, uint64_t before, double dt)
{
	return (double)(now - before) / dt;
}

static void print_deltas(const struct gpin_stats *a, const struct gpin_stats *b,
			 double dt, unsigned long row)
{
	unsigned int i;

	if (row % 10 == 0)
		printf("%-6s %10s %12s %12s %9s %9s %12s %10s %10s\n", "mode",
		       "calls/s", "pages/s", "fast/s", "fallbk/s", "huge/s",
		       "lkwait_us/s", "irqoff_ns", "live");
	for (i = 0; i < GPIN_MODE_COUNT; i++) {
		const struct gpin_mode_stats *x = &a->mode[i], *y = &b->mode[i];

		printf("%-6s %10.0f %12.0f %12.0f %9.0f %9.0f %12.1f %10llu %10llu\n",
		       libgpin_mode_name(i), rate(y->calls, x->calls, dt),
		       rate(y->pages, x->pages, dt),
		       rate(y->fast_pages, x->fast_pages, dt),
		       rate(y->fallbacks, x->fallbacks, dt),
		       rate(y->huge_leaves, x->huge_leaves, dt),
		       rate(y->lock_wait_ns, x->lock_wait_ns, dt) / 1000.0,
		       (unsigned long long)y->max_irqoff_ns,
		       (unsigned long long)y->live_pages);
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct gpin_stats prev, cur;
	unsigned long interval = 0, count = 0, row;
	int opt, reset = 0;
	struct libgpin *g;
	double t0, t1;

	static const struct option longopts[] = {
		{ "reset", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};

	while ((opt = getopt_long(argc, argv, "rhV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			reset = 1;
			break;
		case 'V':
			printf("gpin-stat " GPIN_VERSION "\n");
			return 0;
		default:	/* -h: the usage and 0, else on stderr and 2 */
			usage(opt == 'h' ? stdout : stderr);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (optind < argc && parse_ulong(argv[optind++], &interval))
		goto bad_usage;
	if (optind < argc && parse_ulong(argv[optind++], &count))
		goto bad_usage;
	if (optind < argc)
		goto bad_usage;

	g = libgpin_open();
	if (!g) {
		fprintf(stderr, "gpin-stat: %s\n", libgpin_strerror(errno));
		return 1;
	}
	if (reset && libgpin_stats_reset(g)) {
		fprintf(stderr, "gpin-stat: reset: %s\n", libgpin_strerror(errno));
		return 1;
	}
	if (libgpin_stats(g, &prev)) {
		fprintf(stderr, "gpin-stat: %s\n", libgpin_strerror(errno));
		return 1;
	}
	if (!interval) {
		print_totals(&prev);
		libgpin_close(g);
		return 0;
	}

	t0 = now_s();
	for (row = 0; !count || row < count; row++) {
		sleep(interval);
		if (libgpin_stats(g, &cur)) {
			fprintf(stderr, "gpin-stat: %s\n", libgpin_strerror(errno));
			return 1;
		}
		t1 = now_s();
		print_deltas(&prev, &cur, t1 - t0, row);
		prev = cur;
		t0 = t1;
	}
	libgpin_close(g);
	return 0;

bad_usage:
	usage(stderr);
	return 2;
}
