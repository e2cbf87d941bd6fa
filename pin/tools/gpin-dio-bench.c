// SPDX-License-Identifier: GPL-2.0
/*
 * gpin-dio-bench: what one direct I/O costs through gpin.ko (pin=fast,
 * pin=locked: GPIN_IOC_DIO_SUBMIT/REAP) and through io_uring on the same
 * O_DIRECT file (pin=kernel: the block layer's own pinning), with no
 * guest and no VMM in between: the module's datapath alone.
 *
 * One thread keeps --qd requests in flight on one file, as one gpin-vmm
 * queue does: it submits what it has in one call, sleeps on an eventfd
 * that both the module and the ring signal, and reaps what completed.
 * Each request is --bs bytes at a random --bs-aligned offset, its buffer
 * split into 4 KiB iovecs that are not adjacent in memory, as a guest's
 * scattered pages reach the VMM.  Every round runs every cell (bs x qd)
 * under every mode, the modes in an order that rotates with the round, so
 * that a drift of the machine touches them all alike.  Per cell: I/Os per
 * second and the CPU time of this process per I/O (user + system: the
 * pin, the bvec building, the submission and completion work that runs
 * in this thread).  A benchmark: no pass/fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/fs.h>
#include <liburing.h>

#include "libgpin.h"

#include "cli.h"

#define PAGE		4096UL
#define MAX_QD		256U
#define MAX_BS		(1UL << 20)
#define SPAN_MAX	(1ULL << 30)	/* offsets within the first 1 GiB */

enum bench_mode { BM_FAST, BM_LOCKED, BM_KERNEL, BM_COUNT };

static const char *const mode_names[BM_COUNT] = { "fast", "locked",
						  "kernel" };

struct opts {
	const char *file, *json;
	bool write;
	double duration;
	unsigned int rounds;
	struct cli_list modes, bs, qd;
};

/* One request slot: its iovecs point into the shared buffer. */
struct slot {
	struct iovec iov[MAX_BS / PAGE];
	unsigned int niov;
	struct gpin_dio d;
};

struct runner {
	const struct opts *o;
	int fd, efd;
	uint64_t span;
	uint64_t rng;
	unsigned char *buf;
	struct slot *slots;
	struct libgpin *g;
	struct io_uring ring;
	struct gpin_dio_event ev[MAX_QD];
};

struct cell {
	unsigned int round, mode;
	unsigned long bs, qd;
	double iops, cpu_ns_per_io, seconds;
	uint64_t ios, errors, pin_calls, fallbacks;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: gpin-dio-bench --file PATH [OPTIONS]\n"
"The cost of one direct I/O on PATH (a block device or a file that takes\n"
"O_DIRECT) through gpin.ko's fast and locked paths and through io_uring\n"
"(kernel), one thread, --qd in flight.  Needs gpin.ko for fast/locked and\n"
"root.  Lists are comma-separated.\n"
"  --file PATH          what to read or write (writes destroy its data)\n"
"  --write              write instead of read\n"
"  --modes LIST         of fast,locked,kernel (default all three)\n"
"  --bs LIST            request sizes, multiples of 4k up to 1m\n"
"                       (default 4k,64k,256k)\n"
"  --qd LIST            requests in flight, 1..%u (default 1,32)\n"
"  --duration SEC       seconds per cell (default 1)\n"
"  --rounds N           every cell under every mode N times, modes in a\n"
"                       rotating order (default 3)\n"
"  --json FILE          also write one JSON object per cell and round\n"
"  -h, --help           this text\n", MAX_QD);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static uint64_t next_rand(struct runner *r)
{
	r->rng ^= r->rng << 13;
	r->rng ^= r->rng >> 7;
	r->rng ^= r->rng << 17;
	return r->rng;
}

/*
 * Slot @i's pages: page k of request i is page (k * qd + i) * 2 of the
 * buffer - never next to its neighbour in the same request, so the
 * module and the block layer see one segment per page.
 */
static void fill_slot(struct runner *r, unsigned int i, unsigned long bs,
		      unsigned long qd)
{
	struct slot *s = &r->slots[i];
	unsigned int k;

	s->niov = bs / PAGE;
	for (k = 0; k < s->niov; k++) {
		s->iov[k].iov_base = r->buf + ((k * qd + i) * 2) * PAGE;
		s->iov[k].iov_len = PAGE;
	}
}

static uint64_t random_offset(struct runner *r, unsigned long bs)
{
	return (next_rand(r) % (r->span / bs)) * bs;
}

/* Start @n requests from slot @first on, in one call. */
static int submit_gpin(struct runner *r, enum gpin_mode mode,
		       unsigned int *ids, unsigned int n, unsigned long bs)
{
	struct gpin_dio d[MAX_QD];
	unsigned int i, done = 0;

	for (i = 0; i < n; i++) {
		struct slot *s = &r->slots[ids[i]];

		libgpin_dio_prep(&d[i], r->fd,
				 r->o->write ? GPIN_DIO_WRITE : GPIN_DIO_READ,
				 random_offset(r, bs), s->iov, s->niov, mode,
				 ids[i]);
	}
	while (done < n) {
		int ret = libgpin_dio_submit(r->g, d + done, n - done);

		if (ret < 0 && errno != EINTR)
			return -errno;
		if (ret > 0)
			done += ret;
	}
	return 0;
}

static int submit_uring(struct runner *r, unsigned int *ids, unsigned int n,
			unsigned long bs)
{
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
		struct slot *s = &r->slots[ids[i]];

		if (!sqe)
			return -EBUSY;
		if (r->o->write)
			io_uring_prep_writev(sqe, r->fd, s->iov, s->niov,
					     random_offset(r, bs));
		else
			io_uring_prep_readv(sqe, r->fd, s->iov, s->niov,
					    random_offset(r, bs));
		io_uring_sqe_set_data64(sqe, ids[i]);
	}
	do
		ret = io_uring_submit(&r->ring);
	while (ret == -EINTR);
	return ret < 0 ? ret : 0;
}

/* Completed slots into @ids; their count, or -errno. */
static int reap(struct runner *r, unsigned int mode, unsigned int *ids,
		uint64_t *errors)
{
	struct io_uring_cqe *cqe;
	unsigned int head, n = 0;
	int ret, i;

	if (mode == BM_KERNEL) {
		io_uring_for_each_cqe(&r->ring, head, cqe) {
			if (cqe->res < 0)
				(*errors)++;
			ids[n++] = io_uring_cqe_get_data64(cqe);
		}
		io_uring_cq_advance(&r->ring, n);
		return n;
	}
	ret = libgpin_dio_reap(r->g, r->ev, MAX_QD, NULL);
	if (ret < 0)
		return -errno;
	for (i = 0; i < ret; i++) {
		if (r->ev[i].result < 0)
			(*errors)++;
		ids[i] = r->ev[i].user_data;
	}
	return ret;
}

static int submit(struct runner *r, unsigned int mode, unsigned int *ids,
		  unsigned int n, unsigned long bs)
{
	if (!n)
		return 0;
	if (mode == BM_KERNEL)
		return submit_uring(r, ids, n, bs);
	return submit_gpin(r, mode == BM_FAST ? GPIN_MODE_FAST :
			   GPIN_MODE_LOCKED, ids, n, bs);
}

static void read_pin_stats(struct runner *r, unsigned int mode,
			   uint64_t *calls, uint64_t *fallbacks)
{
	struct gpin_stats st;

	*calls = *fallbacks = 0;
	if (mode == BM_KERNEL || !r->g || libgpin_stats(r->g, &st))
		return;
	*calls = st.mode[mode].calls;
	*fallbacks = st.mode[mode].fallbacks;
}

/* One cell: qd in flight for the duration, then drain. */
static int run_cell(struct runner *r, struct cell *c)
{
	unsigned int ids[MAX_QD], i, inflight;
	uint64_t calls0, fb0, calls1, fb1, cnt;
	double t0, c0, end;
	int ret, n;

	for (i = 0; i < c->qd; i++) {
		fill_slot(r, i, c->bs, c->qd);
		ids[i] = i;
	}
	read_pin_stats(r, c->mode, &calls0, &fb0);
	t0 = now_s();
	c0 = cpu_s();
	end = t0 + r->o->duration;
	ret = submit(r, c->mode, ids, c->qd, c->bs);
	inflight = ret ? 0 : c->qd;
	while (inflight) {
		if (read(r->efd, &cnt, sizeof(cnt)) < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		n = reap(r, c->mode, ids, &c->errors);
		if (n < 0) {
			ret = n;
			break;
		}
		inflight -= n;
		c->ios += n;
		if (now_s() >= end)
			continue;	/* drain */
		ret = submit(r, c->mode, ids, n, c->bs);
		if (ret)
			break;
		inflight += n;
	}
	c->seconds = now_s() - t0;
	c->cpu_ns_per_io = c->ios ? (cpu_s() - c0) * 1e9 / c->ios : 0;
	c->iops = c->ios / c->seconds;
	read_pin_stats(r, c->mode, &calls1, &fb1);
	c->pin_calls = calls1 - calls0;
	c->fallbacks = fb1 - fb0;
	return ret;
}

static int open_target(struct runner *r)
{
	struct stat sb;
	uint64_t size;

	r->fd = open(r->o->file, (r->o->write ? O_RDWR : O_RDONLY) | O_DIRECT);
	if (r->fd < 0 || fstat(r->fd, &sb))
		return -errno;
	size = sb.st_size;
	if (S_ISBLK(sb.st_mode) && ioctl(r->fd, BLKGETSIZE64, &size))
		return -errno;
	r->span = size < SPAN_MAX ? size : SPAN_MAX;
	return r->span < MAX_BS ? -ENOSPC : 0;
}

static int setup(struct runner *r, bool need_gpin)
{
	size_t len = 2 * MAX_QD * (MAX_BS / PAGE) * PAGE;
	int ret = open_target(r);

	if (ret)
		return ret;
	r->efd = eventfd(0, EFD_CLOEXEC);
	r->buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	r->slots = calloc(MAX_QD, sizeof(*r->slots));
	if (r->efd < 0 || r->buf == MAP_FAILED || !r->slots)
		return -ENOMEM;
	/* dirty every page once, as a guest's RAM is */
	memset(r->buf, 0x5a, len);
	ret = io_uring_queue_init(MAX_QD, &r->ring, 0);
	if (ret)
		return ret;
	ret = io_uring_register_eventfd(&r->ring, r->efd);
	if (ret)
		return ret;
	if (!need_gpin)
		return 0;
	r->g = libgpin_open();
	if (!r->g) {
		ret = errno;
		fprintf(stderr, "gpin-dio-bench: %s\n", libgpin_strerror(ret));
		return -ret;
	}
	return libgpin_set_eventfd(r->g, r->efd) ? -errno : 0;
}

static void print_cell(FILE *f, const struct cell *c)
{
	fprintf(f, "%5u %-7s %5luk %4lu %10.0f %12.0f %8llu %6llu %6llu\n",
		c->round, mode_names[c->mode], c->bs >> 10, c->qd, c->iops,
		c->cpu_ns_per_io, (unsigned long long)c->pin_calls,
		(unsigned long long)c->fallbacks,
		(unsigned long long)c->errors);
}

static void json_cell(FILE *f, const struct opts *o, const struct cell *c)
{
	fprintf(f, "{\"bench\": \"dio\", \"rw\": \"%s\", \"round\": %u, "
		"\"mode\": \"%s\", \"bs\": %lu, \"qd\": %lu, \"iops\": %.1f, "
		"\"cpu_ns_per_io\": %.1f, \"ios\": %llu, \"seconds\": %.3f, "
		"\"pin_calls\": %llu, \"fallbacks\": %llu, \"errors\": %llu}\n",
		o->write ? "write" : "read", c->round, mode_names[c->mode],
		c->bs, c->qd, c->iops, c->cpu_ns_per_io,
		(unsigned long long)c->ios, c->seconds,
		(unsigned long long)c->pin_calls,
		(unsigned long long)c->fallbacks,
		(unsigned long long)c->errors);
}

static int run_all(struct runner *r, FILE *jf)
{
	const struct opts *o = r->o;
	unsigned int rnd, b, q, k;
	int ret;

	printf("%5s %-7s %6s %4s %10s %12s %8s %6s %6s\n", "round", "mode",
	       "bs", "qd", "IOPS", "CPU ns/IO", "pins", "fallbk", "errors");
	for (rnd = 1; rnd <= o->rounds; rnd++)
		for (b = 0; b < o->bs.n; b++)
			for (q = 0; q < o->qd.n; q++)
				for (k = 0; k < o->modes.n; k++) {
					struct cell c = {
						.round = rnd,
						.mode = o->modes.v[(k + rnd) %
								   o->modes.n],
						.bs = o->bs.v[b],
						.qd = o->qd.v[q],
					};

					ret = run_cell(r, &c);
					if (ret) {
						fprintf(stderr, "gpin-dio-bench: %s %luk qd%lu: %s\n",
							mode_names[c.mode],
							c.bs >> 10, c.qd,
							strerror(-ret));
						return ret;
					}
					print_cell(stdout, &c);
					fflush(stdout);
					if (jf)
						json_cell(jf, o, &c);
				}
	return 0;
}

static int check_opts(const struct opts *o)
{
	unsigned int i;

	if (!o->file)
		return -1;
	for (i = 0; i < o->bs.n; i++)
		if (!o->bs.v[i] || o->bs.v[i] % PAGE || o->bs.v[i] > MAX_BS)
			return -1;
	for (i = 0; i < o->qd.n; i++)
		if (!o->qd.v[i] || o->qd.v[i] > MAX_QD)
			return -1;
	return o->rounds && o->duration > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "file", required_argument, NULL, 'f' },
		{ "write", no_argument, NULL, 'w' },
		{ "modes", required_argument, NULL, 'm' },
		{ "bs", required_argument, NULL, 'b' },
		{ "qd", required_argument, NULL, 'q' },
		{ "duration", required_argument, NULL, 'd' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = {
		.duration = 1.0, .rounds = 3,
		.modes = { 3, { BM_FAST, BM_LOCKED, BM_KERNEL } },
		.bs = { 3, { 4096, 65536, 262144 } },
		.qd = { 2, { 1, 32 } },
	};
	struct runner r = { .o = &o, .fd = -1, .efd = -1,
			    .rng = 0x9e3779b97f4a7c15ULL };
	bool need_gpin = false;
	FILE *jf = NULL;
	unsigned int i;
	char *end;
	int c, bad, ret;

	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		bad = 0;
		switch (c) {
		case 'f':
			o.file = optarg;
			break;
		case 'w':
			o.write = true;
			break;
		case 'm':
			bad = cli_parse_list(optarg, &o.modes, mode_names,
					     BM_COUNT, 0);
			break;
		case 'b':
			bad = cli_parse_list(optarg, &o.bs, NULL, 0,
					     CLI_SIZES);
			break;
		case 'q':
			bad = cli_parse_list(optarg, &o.qd, NULL, 0, 0);
			break;
		case 'd':
			o.duration = strtod(optarg, &end);
			bad = *end || !(o.duration > 0);
			break;
		case 'r':
			o.rounds = strtoul(optarg, &end, 10);
			bad = *end || !o.rounds;
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
			fprintf(stderr, "gpin-dio-bench: bad value: %s\n",
				optarg);
			return 2;
		}
	}
	if (optind != argc || check_opts(&o)) {
		usage(stderr);
		return 2;
	}
	for (i = 0; i < o.modes.n; i++)
		need_gpin |= o.modes.v[i] != BM_KERNEL;
	ret = setup(&r, need_gpin);
	if (ret) {
		fprintf(stderr, "gpin-dio-bench: %s: %s\n", o.file,
			strerror(-ret));
		return 1;
	}
	if (o.json) {
		jf = fopen(o.json, "w");
		if (!jf) {
			perror(o.json);
			return 1;
		}
	}
	ret = run_all(&r, jf);
	if (jf && fclose(jf))
		ret = -errno;
	return ret ? 1 : 0;
}
