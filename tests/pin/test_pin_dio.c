// SPDX-License-Identifier: GPL-2.0
/*
 * gpin.ko direct I/O tests (GPIN_IOC_DIO, _SUBMIT, _REAP, _SET_EVENTFD),
 * run with test_pin.c in the test host.  The targets come from
 * tests/pin/in-host.sh:
 *   GPIN_TEST_BLKDEV  a brd ramdisk (completes in the submitting thread)
 *   GPIN_TEST_NULLB   a memory-backed null_blk whose requests complete
 *                     from a timer, in interrupt context, later
 *   GPIN_TEST_FILEDIR a directory on ext4 (on another brd ramdisk)
 * A missing target skips its tests with a message.  The host root (9p)
 * cannot do O_DIRECT, so nothing here uses it.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libgpin.h"
#include "test_pin.h"

const char *const dio_target_names[T_COUNT] = {
	"brd", "null_blk", "ext4 file",
};

#define DIO_BUF_PAGES	64
#define FILE_SIZE	(8UL << 20)

/* Open target @t read/write, without O_DIRECT unless @flags says so. */
int dio_open_target(enum dio_target t, int flags)
{
	static char path[PATH_MAX];
	const char *env;
	int fd;

	switch (t) {
	case T_BRD:
		env = getenv("GPIN_TEST_BLKDEV");
		break;
	case T_NULLB:
		env = getenv("GPIN_TEST_NULLB");
		break;
	default:
		env = getenv("GPIN_TEST_FILEDIR");
		if (!env)
			break;
		snprintf(path, sizeof(path), "%s/gpin-dio", env);
		fd = open(path, O_RDWR | O_CREAT | flags, 0600);
		ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
		ck_assert_int_eq(ftruncate(fd, FILE_SIZE), 0);
		return fd;
	}
	if (!env) {
		fprintf(stderr, "# SKIP dio on %s: no target set up\n",
			dio_target_names[t]);
		return -1;
	}
	fd = open(env, O_RDWR | flags);
	ck_assert_msg(fd >= 0, "%s: %s", env, strerror(errno));
	return fd;
}

static void fill(void *p, size_t len, unsigned int seed)
{
	uint32_t *w = p;
	size_t i;

	for (i = 0; i < len / 4; i++)
		w[i] = seed * 2654435761U + (uint32_t)i;
}

/*
 * Buffers for a round trip: a page-aligned 4K segment, a 512-aligned one
 * that starts inside a page and spans three, an empty one, and a 32K one:
 * 44K in all, scattered over @buf.
 */
#define RT_SEGS		4
#define RT_BYTES	(4096 + 8192 + 32768)

static void rt_iov(char *buf, struct iovec *iov)
{
	iov[0] = (struct iovec){ buf, 4096 };
	iov[1] = (struct iovec){ buf + 2 * PAGE + 512, 8192 };
	iov[2] = (struct iovec){ buf + 6 * PAGE, 0 };
	iov[3] = (struct iovec){ buf + 16 * PAGE, 32768 };
}

/* Concatenate (@to_flat) or scatter the segments. */
static void rt_copy(struct iovec *iov, char *flat, int to_flat)
{
	size_t off = 0;
	int i;

	for (i = 0; i < RT_SEGS; i++) {
		if (to_flat)
			memcpy(flat + off, iov[i].iov_base, iov[i].iov_len);
		else
			memcpy(iov[i].iov_base, flat + off, iov[i].iov_len);
		off += iov[i].iov_len;
	}
}

/* Loop index: target * GPIN_MODE_COUNT + mode. */
START_TEST(test_dio_roundtrip)
{
	enum dio_target t = _i / GPIN_MODE_COUNT;
	int mode = _i % GPIN_MODE_COUNT;
	off_t off = (1 << 20) + (off_t)_i * 128 * 1024;
	char *buf = map_anon(DIO_BUF_PAGES * PAGE, PROT_READ | PROT_WRITE);
	char *flat, *back;
	struct iovec iov[RT_SEGS];
	struct gpin_stats a, b;
	int fd, dfd;

	fd = dio_open_target(t, 0);
	if (fd < 0)
		return;
	dfd = dio_open_target(t, O_DIRECT);
	ck_assert_int_eq(posix_memalign((void **)&flat, PAGE, RT_BYTES), 0);
	ck_assert_int_eq(posix_memalign((void **)&back, PAGE, RT_BYTES), 0);
	rt_iov(buf, iov);

	/* gpin write, O_DIRECT pread */
	fill(buf, DIO_BUF_PAGES * PAGE, _i + 1);
	stats(&a);
	ck_assert_int_eq(libgpin_dio(g, fd, GPIN_DIO_WRITE, off, iov, RT_SEGS,
				  mode), RT_BYTES);
	ck_assert_int_eq(pread(dfd, back, RT_BYTES, off), RT_BYTES);
	rt_copy(iov, flat, 1);
	ck_assert_msg(!memcmp(flat, back, RT_BYTES), "%s/%s: write differs",
		      dio_target_names[t], libgpin_mode_name(mode));

	/* O_DIRECT pwrite, gpin read */
	fill(flat, RT_BYTES, _i + 100);
	ck_assert_int_eq(pwrite(dfd, flat, RT_BYTES, off), RT_BYTES);
	memset(buf, 0, DIO_BUF_PAGES * PAGE);
	ck_assert_int_eq(libgpin_dio(g, fd, GPIN_DIO_READ, off, iov, RT_SEGS,
				  mode), RT_BYTES);
	rt_copy(iov, back, 1);
	ck_assert_msg(!memcmp(flat, back, RT_BYTES), "%s/%s: read differs",
		      dio_target_names[t], libgpin_mode_name(mode));
	/* bytes between the segments were not touched */
	ck_assert_int_eq(buf[2 * PAGE + 511], 0);
	ck_assert_int_eq(buf[6 * PAGE], 0);

	stats(&b);
	ck_assert_int_eq(DELTA(&a, &b, mode, dio_requests), 2);
	ck_assert_int_eq(DELTA(&a, &b, mode, dio_bytes), 2 * RT_BYTES);
	ck_assert_uint_eq(b.live_pages, a.live_pages);
	free(flat);
	free(back);
	close(dfd);
	close(fd);
	munmap(buf, DIO_BUF_PAGES * PAGE);
}
END_TEST

/* A read across the end of the device or file is short, as preadv's. */
START_TEST(test_dio_short)
{
	enum dio_target t = _i;
	char *buf = map_anon(16 * PAGE, PROT_READ | PROT_WRITE);
	struct iovec iov = { buf, 16 * PAGE };
	off_t end;
	int fd;

	fd = dio_open_target(t, 0);
	if (fd < 0)
		return;
	end = lseek(fd, 0, SEEK_END);
	ck_assert_int_gt(end, 4 * PAGE);
	ck_assert_int_eq(libgpin_dio(g, fd, GPIN_DIO_READ, end - 4 * PAGE, &iov,
				  1, GPIN_MODE_FAST), 4 * PAGE);
	ck_assert_int_eq(libgpin_dio(g, fd, GPIN_DIO_READ, end, &iov, 1,
				  GPIN_MODE_FAST), 0);
	close(fd);
	munmap(buf, 16 * PAGE);
}
END_TEST

/* ---- bad input ------------------------------------------------------------ */

static char *dio_buf;
static int dio_fd = -1;

static void dio_setup(void)
{
	setup();
	dio_buf = map_anon(2048 * PAGE, PROT_READ | PROT_WRITE);
	touch(dio_buf, 2048 * PAGE, 0);
	dio_fd = dio_open_target(T_BRD, 0);
}

static void dio_teardown(void)
{
	if (dio_fd >= 0)
		close(dio_fd);
	munmap(dio_buf, 2048 * PAGE);
	teardown();
}

enum bad_fd { FD_DEV, FD_CLOSED, FD_MINUS1, FD_RDONLY, FD_WRONLY, FD_PIPE,
	      FD_CHR, FD_PATH };

static const struct bad_dio {
	const char *what;
	enum bad_fd fd;
	uint32_t op, mode, flags, nr_segs;
	uint64_t offset, iov_off, len;	/* one segment at dio_buf + iov_off */
	uint64_t reserved, iov;		/* iov: overrides the iovec pointer */
	int err;
} bad_dios[] = {
	{ "closed fd", FD_CLOSED, 0, 0, 0, 1, 0, 0, PAGE, 0, 0, EBADF },
	{ "fd -1", FD_MINUS1, 0, 0, 0, 1, 0, 0, PAGE, 0, 0, EBADF },
	{ "O_PATH fd", FD_PATH, 0, 0, 0, 1, 0, 0, PAGE, 0, 0, EBADF },
	{ "write on O_RDONLY", FD_RDONLY, 1, 0, 0, 1, 0, 0, PAGE, 0, 0, EBADF },
	{ "read on O_WRONLY", FD_WRONLY, 0, 0, 0, 1, 0, 0, PAGE, 0, 0, EBADF },
	{ "pipe", FD_PIPE, 0, 0, 0, 1, 0, 0, PAGE, 0, 0, EINVAL },
	{ "char device", FD_CHR, 0, 0, 0, 1, 0, 0, PAGE, 0, 0, EINVAL },
	{ "misaligned buffer", FD_DEV, 0, 0, 0, 1, 0, 1, 512, 0, 0, EINVAL },
	{ "misaligned offset", FD_DEV, 0, 0, 0, 1, 1, 0, PAGE, 0, 0, EINVAL },
	{ "misaligned length", FD_DEV, 1, 1, 0, 1, 0, 0, 100, 0, 0, EINVAL },
	{ "negative offset", FD_DEV, 0, 0, 0, 1, -4096ULL, 0, PAGE, 0, 0,
	  EINVAL },
	{ "zero iovecs", FD_DEV, 0, 0, 0, 0, 0, 0, PAGE, 0, 0, EINVAL },
	{ "too many segments", FD_DEV, 0, 0, 0, GPIN_DIO_MAX_SEGS + 1, 0, 0,
	  PAGE, 0, 0, E2BIG },
	{ "too many bytes", FD_DEV, 0, 2, 0, 1, 0, 0, GPIN_DIO_MAX_BYTES + PAGE,
	  0, 0, E2BIG },
	{ "unknown op", FD_DEV, 2, 0, 0, 1, 0, 0, PAGE, 0, 0, EINVAL },
	{ "unknown mode", FD_DEV, 0, GPIN_MODE_COUNT, 0, 1, 0, 0, PAGE, 0, 0,
	  EINVAL },
	{ "unknown flag", FD_DEV, 0, 0, 2, 1, 0, 0, PAGE, 0, 0, EINVAL },
	{ "reserved", FD_DEV, 0, 0, 0, 1, 0, 0, PAGE, 1, 0, EINVAL },
	{ "iov kernel pointer", FD_DEV, 0, 0, 0, 1, 0, 0, PAGE, 0,
	  0xffff888000000000ULL, EFAULT },
	{ "buffer kernel address", FD_DEV, 0, 1, 0, 1, 0, 0, PAGE, 0, 1,
	  EFAULT },
};

static int bad_fd_open(enum bad_fd k, int *pipefd)
{
	const char *dev = getenv("GPIN_TEST_BLKDEV");
	int fd;

	switch (k) {
	case FD_CLOSED:
		fd = dup(dio_fd);
		close(fd);
		return fd;
	case FD_MINUS1:
		return -1;
	case FD_RDONLY:
		return open(dev, O_RDONLY);
	case FD_WRONLY:
		return open(dev, O_WRONLY);
	case FD_PATH:
		return open(dev, O_PATH);
	case FD_PIPE:
		ck_assert_int_eq(pipe(pipefd), 0);
		return pipefd[0];
	case FD_CHR:
		return open("/dev/zero", O_RDWR);
	default:
		return dio_fd;
	}
}

START_TEST(test_dio_bad)
{
	const struct bad_dio *b = &bad_dios[_i];
	struct iovec *iov = calloc(GPIN_DIO_MAX_SEGS + 1, sizeof(*iov));
	struct iovec kiov = { (void *)0xffff888000000000ULL, PAGE };
	int pipefd[2] = { -1, -1 };
	struct gpin_stats s0, s1;
	struct gpin_dio d;
	unsigned int i;
	int fd, ret;

	if (dio_fd < 0)
		return;
	for (i = 0; i <= GPIN_DIO_MAX_SEGS; i++)
		iov[i] = (struct iovec){ dio_buf + b->iov_off, b->len };
	fd = bad_fd_open(b->fd, pipefd);
	libgpin_dio_prep(&d, fd, b->op, b->offset, iov, b->nr_segs, b->mode, 0);
	d.flags = b->flags;
	d.reserved[0] = b->reserved;
	if (b->iov == 1)
		d.iov = (uintptr_t)&kiov;
	else if (b->iov)
		d.iov = b->iov;

	stats(&s0);
	errno = 0;
	ret = ioctl(libgpin_fd(g), GPIN_IOC_DIO, &d);
	ck_assert_msg(ret == -1, "%s: accepted (%d)", b->what, ret);
	ck_assert_msg(errno == b->err, "%s: errno %d (%s), want %d", b->what,
		      errno, strerror(errno), b->err);
	stats(&s1);
	ck_assert_uint_eq(s1.live_pages, s0.live_pages);
	if (fd >= 0 && fd != dio_fd)
		close(fd);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	free(iov);
}
END_TEST

/* Read into read-only memory: EFAULT, nothing left pinned, per mode. */
START_TEST(test_dio_bad_readonly)
{
	char *ro = map_anon(4 * PAGE, PROT_READ);
	struct iovec iov = { ro, 4 * PAGE };
	struct gpin_stats st;

	if (dio_fd < 0)
		return;
	ck_assert_int_eq(libgpin_dio(g, dio_fd, GPIN_DIO_READ, 0, &iov, 1, _i),
			 -1);
	ck_assert_int_eq(errno, EFAULT);
	/* writing from it is fine: the pages are only read */
	ck_assert_int_eq(libgpin_dio(g, dio_fd, GPIN_DIO_WRITE, 0, &iov, 1, _i),
			 4 * PAGE);
	stats(&st);
	ck_assert_uint_eq(st.live_pages, 0);
	munmap(ro, 4 * PAGE);
}
END_TEST

/* ---- asynchronous --------------------------------------------------------- */

#define ASYNC_REQS	512
#define ASYNC_BATCH	64

/* Wait until @n completions are signalled on @efd (with a timeout). */
void wait_eventfd(int efd, uint64_t n)
{
	uint64_t got = 0, v;

	while (got < n) {
		struct pollfd pfd = { .fd = efd, .events = POLLIN };

		ck_assert_msg(poll(&pfd, 1, 20000) == 1,
			      "eventfd: %llu of %llu completions",
			      (unsigned long long)got, (unsigned long long)n);
		ck_assert_int_eq(read(efd, &v, sizeof(v)), sizeof(v));
		got += v;
	}
	ck_assert_uint_eq(got, n);
}

/* Submit ASYNC_REQS 8K requests (one per 8K of @buf), reap them all. */
static void async_round(int fd, enum gpin_dio_op op, char *buf, int mode,
			int efd)
{
	static struct iovec iov[ASYNC_REQS];
	static struct gpin_dio reqs[ASYNC_REQS];
	struct gpin_dio_event ev[ASYNC_BATCH];
	unsigned char seen[ASYNC_REQS] = { 0 };
	uint64_t inflight;
	int i, n, done = 0;

	for (i = 0; i < ASYNC_REQS; i++) {
		iov[i] = (struct iovec){ buf + i * 2 * PAGE, 2 * PAGE };
		libgpin_dio_prep(&reqs[i], fd, op, (uint64_t)i * 2 * PAGE,
			      &iov[i], 1, (mode + i) % GPIN_MODE_COUNT,
			      1000 + i);
	}
	for (i = 0; i < ASYNC_REQS; i += n) {
		n = libgpin_dio_submit(g, reqs + i, ASYNC_BATCH);
		ck_assert_msg(n == ASYNC_BATCH, "submit: %d (%s)", n,
			      strerror(errno));
	}
	wait_eventfd(efd, ASYNC_REQS);
	while (done < ASYNC_REQS) {
		n = libgpin_dio_reap(g, ev, ASYNC_BATCH, &inflight);
		ck_assert_int_gt(n, 0);
		for (i = 0; i < n; i++) {
			uint64_t k = ev[i].user_data - 1000;

			ck_assert_uint_lt(k, ASYNC_REQS);
			ck_assert_msg(!seen[k], "request %llu twice",
				      (unsigned long long)k);
			seen[k] = 1;
			ck_assert_int_eq(ev[i].result, 2 * PAGE);
		}
		done += n;
	}
	ck_assert_uint_eq(inflight, 0);
	ck_assert_int_eq(libgpin_dio_reap(g, ev, ASYNC_BATCH, NULL), 0);
}

START_TEST(test_dio_async)
{
	enum dio_target t = _i;
	size_t len = ASYNC_REQS * 2 * PAGE;
	char *buf = map_anon(len, PROT_READ | PROT_WRITE);
	char *back = map_anon(len, PROT_READ | PROT_WRITE);
	struct gpin_stats a, b;
	int fd, efd, m;
	long long reqs = 0;

	fd = dio_open_target(t, 0);
	if (fd < 0)
		return;
	efd = eventfd(0, EFD_CLOEXEC);
	ck_assert_int_ge(efd, 0);
	ck_assert_int_eq(libgpin_set_eventfd(g, efd), 0);
	fill(buf, len, 77 + _i);
	stats(&a);
	async_round(fd, GPIN_DIO_WRITE, buf, 0, efd);
	async_round(fd, GPIN_DIO_READ, back, 1, efd);
	stats(&b);
	ck_assert_msg(!memcmp(buf, back, len), "%s: data differs",
		      dio_target_names[t]);
	for (m = 0; m < GPIN_MODE_COUNT; m++)
		reqs += DELTA(&a, &b, m, dio_requests);
	ck_assert_int_eq(reqs, 2 * ASYNC_REQS);
	ck_assert_uint_eq(b.live_pages, 0);
	ck_assert_int_eq(libgpin_set_eventfd(g, -1), 0);
	close(efd);
	close(fd);
	munmap(buf, len);
	munmap(back, len);
}
END_TEST

/* Submission errors, the in-flight bound, reap and eventfd arguments. */
START_TEST(test_dio_async_bad)
{
	static struct gpin_dio reqs[GPIN_DIO_MAX_BATCH];
	struct iovec iov = { dio_buf, 512 };
	struct gpin_dio_event ev[GPIN_DIO_MAX_BATCH];
	struct gpin_dio_submit s = { .size = sizeof(s) };
	struct gpin_dio_reap r = { .size = sizeof(r) };
	unsigned int i, total = 0;
	uint64_t inflight;
	int n, efd;

	if (dio_fd < 0)
		return;
	for (i = 0; i < GPIN_DIO_MAX_BATCH; i++)
		libgpin_dio_prep(&reqs[i], dio_fd, GPIN_DIO_READ, i * 512, &iov,
			      1, GPIN_MODE_FAST, i);
	/* a bad request in the middle stops the batch there */
	reqs[3].nr_segs = 0;
	ck_assert_int_eq(libgpin_dio_submit(g, reqs, 8), 3);
	ck_assert_int_eq(libgpin_dio_submit(g, reqs + 3, 5), -1);
	ck_assert_int_eq(errno, EINVAL);
	reqs[3].nr_segs = 1;
	reqs[3].fd = -1;
	ck_assert_int_eq(libgpin_dio_submit(g, reqs + 3, 5), -1);
	ck_assert_int_eq(errno, EBADF);
	reqs[3].fd = dio_fd;
	reqs[4].size = sizeof(reqs[4]) + 8;	/* stride mismatch */
	ck_assert_int_eq(libgpin_dio_submit(g, reqs + 3, 5), 1);
	reqs[4].size = sizeof(reqs[4]);
	total = 4;

	/* the submit struct itself */
	s.reqs = (uintptr_t)reqs;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_DIO_SUBMIT, &s), -1);
	ck_assert_int_eq(errno, EINVAL);			/* nr 0 */
	s.nr = GPIN_DIO_MAX_BATCH + 1;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_DIO_SUBMIT, &s), -1);
	ck_assert_int_eq(errno, E2BIG);
	s.nr = 1;
	s.reserved[0] = 1;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_DIO_SUBMIT, &s), -1);
	ck_assert_int_eq(errno, EINVAL);
	s.reserved[0] = 0;
	s.flags = 1;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_DIO_SUBMIT, &s), -1);
	ck_assert_int_eq(errno, EINVAL);
	s.flags = 0;
	s.reqs = 0xffff888000000000ULL;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_DIO_SUBMIT, &s), -1);
	ck_assert_int_eq(errno, EFAULT);

	/* GPIN_DIO_MAX_INFLIGHT submitted and unreaped, then EAGAIN */
	while (total < GPIN_DIO_MAX_INFLIGHT) {
		unsigned int k = GPIN_DIO_MAX_INFLIGHT - total;

		if (k > GPIN_DIO_MAX_BATCH)
			k = GPIN_DIO_MAX_BATCH;
		n = libgpin_dio_submit(g, reqs, k);
		ck_assert_int_eq(n, (int)k);
		total += n;
	}
	ck_assert_int_eq(libgpin_dio_submit(g, reqs, 1), -1);
	ck_assert_int_eq(errno, EAGAIN);

	/* reap arguments */
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_DIO_REAP, &r), -1);
	ck_assert_int_eq(errno, EINVAL);			/* nr 0 */
	r.nr = 4;
	r.events = 0xffff888000000000ULL;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_DIO_REAP, &r), -1);
	ck_assert_int_eq(errno, EFAULT);
	r.events = (uintptr_t)ev;
	r.flags = 1;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_DIO_REAP, &r), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* nothing was lost by the failed copy */
	while (total) {
		n = libgpin_dio_reap(g, ev, GPIN_DIO_MAX_BATCH, &inflight);
		ck_assert_int_ge(n, 0);
		for (i = 0; i < (unsigned int)n; i++)
			ck_assert_int_eq(ev[i].result, 512);
		total -= n;
		if (!n)
			usleep(1000);
	}
	ck_assert_uint_eq(inflight, 0);

	/* eventfd arguments */
	ck_assert_int_eq(libgpin_set_eventfd(g, 9999), -1);
	ck_assert_int_eq(errno, EBADF);
	ck_assert_int_eq(libgpin_set_eventfd(g, dio_fd), -1);	/* not one */
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(libgpin_set_eventfd(g, -2), -1);
	ck_assert_int_eq(errno, EINVAL);
	efd = eventfd(0, 0);
	ck_assert_int_eq(libgpin_set_eventfd(g, efd), 0);
	close(efd);	/* the file keeps its own reference */
	ck_assert_int_eq(libgpin_dio_submit(g, reqs, 1), 1);
}
END_TEST

/* ---- close and exit with I/O in flight ---------------------------------- */

#define FLIGHT_REQS	256
#define CLOSE_ROUNDS	8

static int submit_flight(struct libgpin *gp, int fd, char *buf)
{
	static struct iovec iov[FLIGHT_REQS];
	static struct gpin_dio reqs[FLIGHT_REQS];
	int i, n, done = 0;

	for (i = 0; i < FLIGHT_REQS; i++) {
		iov[i] = (struct iovec){ buf + i * 16 * PAGE, 16 * PAGE };
		libgpin_dio_prep(&reqs[i], fd, GPIN_DIO_READ,
			      (uint64_t)i * 16 * PAGE, &iov[i], 1,
			      i % GPIN_MODE_COUNT, i);
	}
	while (done < FLIGHT_REQS) {
		n = libgpin_dio_submit(gp, reqs + done, FLIGHT_REQS - done);
		if (n < 0)
			return -1;
		done += n;
	}
	return done;
}

/* The null_blk target completes from a timer, so requests are in flight. */
START_TEST(test_dio_close_inflight)
{
	size_t len = FLIGHT_REQS * 16 * PAGE;
	char *buf = map_anon(len, PROT_READ | PROT_WRITE);
	struct gpin_stats st;
	struct libgpin *g2;
	int i, fd, status;
	pid_t pid;

	fd = dio_open_target(T_NULLB, 0);
	if (fd < 0)
		fd = dio_open_target(T_BRD, 0);
	if (fd < 0)
		return;
	touch(buf, len, 1);

	/*
	 * Close with everything submitted and nothing reaped: the close
	 * releases the requests that completed while the others complete
	 * as orphans, and the last of those must not free the file under
	 * the close (gpin_file_free() WARNs on the pages the close still
	 * holds; the kernel log check fails on it).  Odd rounds make the
	 * close sleep 20 ms before it releases the completed requests
	 * (gpin.ko's close_delay_us), so every orphan completes first; even
	 * rounds leave the last orphan to free the file.
	 */
	for (i = 0; i < CLOSE_ROUNDS; i++) {
		/* fault injection: a close sleeps before its cleanup */
		set_param("close_delay_us", i % 2 ? 20000 : 0);
		g2 = libgpin_open();
		ck_assert(g2);
		ck_assert_int_eq(submit_flight(g2, fd, buf), FLIGHT_REQS);
		if (!i) {
			stats(&st);
			fprintf(stderr,
				"# close in flight: %llu pages pinned at close\n",
				(unsigned long long)st.live_pages);
		}
		libgpin_close(g2);
		/* the close returned at once; the pages go as I/O completes */
		ck_assert_uint_eq(wait_unpinned(), 0);
	}
	set_param("close_delay_us", 0);

	/* a process that exits with I/O in flight */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct libgpin *gc = libgpin_open();

		_exit(!gc || submit_flight(gc, fd, buf) != FLIGHT_REQS);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_uint_eq(wait_unpinned(), 0);
	close(fd);
	munmap(buf, len);
}
END_TEST

/* ---- buffers that go away while their I/O is in flight -------------------- */

#define GONE_REQS	64
#define GONE_BYTES	(4 * PAGE)

/* Submit GONE_REQS requests of @op, one per GONE_BYTES of @buf. */
static void submit_gone(int fd, enum gpin_dio_op op, char *buf)
{
	static struct iovec iov[GONE_REQS];
	static struct gpin_dio reqs[GONE_REQS];
	int i, n, done = 0;

	for (i = 0; i < GONE_REQS; i++) {
		iov[i] = (struct iovec){ buf + i * GONE_BYTES, GONE_BYTES };
		libgpin_dio_prep(&reqs[i], fd, op, (uint64_t)i * GONE_BYTES,
			      &iov[i], 1, i % GPIN_MODE_COUNT, i);
	}
	while (done < GONE_REQS) {
		n = libgpin_dio_submit(g, reqs + done, GONE_REQS - done);
		ck_assert_msg(n > 0, "submit: %s", strerror(errno));
		done += n;
	}
}

/* Reap @nr events, polling; each must have the result @want. */
static void reap_expect(int nr, long long want)
{
	struct gpin_dio_event ev[GONE_REQS];
	int i, n, done = 0, tries = 0;

	ck_assert_int_le(nr, GONE_REQS);
	while (done < nr) {
		n = libgpin_dio_reap(g, ev, nr - done, NULL);
		ck_assert_int_ge(n, 0);
		if (!n) {
			ck_assert_msg(++tries < 20000, "only %d events", done);
			usleep(1000);
			continue;
		}
		for (i = 0; i < n; i++)
			ck_assert_int_eq(ev[i].result, want);
		done += n;
	}
}

/*
 * munmap() of a buffer with I/O in flight (null_blk completes from a
 * timer, so the I/O is still running): the pinned pages outlive the
 * mapping.  A write sends what the buffer held at submission even though
 * the same addresses now map other contents; a read completes into pages
 * nobody maps any more; and the last reference frees them either way.
 */
START_TEST(test_dio_munmap_inflight)
{
	size_t len = GONE_REQS * GONE_BYTES;
	char *buf = map_anon(len, PROT_READ | PROT_WRITE);
	char *want = malloc(len), *back;
	struct gpin_stats st;
	int fd, dfd;

	fd = dio_open_target(T_NULLB, 0);
	if (fd < 0)
		return;
	dfd = dio_open_target(T_NULLB, O_DIRECT);
	ck_assert_ptr_nonnull(want);
	ck_assert_int_eq(posix_memalign((void **)&back, PAGE, len), 0);
	fill(want, len, 4242);
	memcpy(buf, want, len);

	submit_gone(fd, GPIN_DIO_WRITE, buf);
	ck_assert_int_eq(munmap(buf, len), 0);
	ck_assert_ptr_eq(mmap(buf, len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
			 buf);
	memset(buf, 0xee, len);
	reap_expect(GONE_REQS, GONE_BYTES);
	ck_assert_int_eq(pread(dfd, back, len, 0), (ssize_t)len);
	ck_assert_msg(!memcmp(back, want, len),
		      "the device got the new mapping's bytes");

	submit_gone(fd, GPIN_DIO_READ, buf);
	ck_assert_int_eq(munmap(buf, len), 0);
	reap_expect(GONE_REQS, GONE_BYTES);
	stats(&st);
	ck_assert_uint_eq(st.live_pages, 0);
	free(back);
	free(want);
	close(dfd);
	close(fd);
}
END_TEST

/*
 * fork() with writes in flight, then both processes write to the buffer
 * (each write breaks copy-on-write in its process): the pinned pages are
 * the ones of submission time, so the device gets the submitted bytes.
 */
START_TEST(test_dio_fork_inflight)
{
	size_t len = GONE_REQS * GONE_BYTES;
	char *buf = map_anon(len, PROT_READ | PROT_WRITE);
	char *want = malloc(len), *back;
	struct gpin_stats st;
	int fd, dfd, status;
	pid_t pid;

	fd = dio_open_target(T_NULLB, 0);
	if (fd < 0)
		return;
	dfd = dio_open_target(T_NULLB, O_DIRECT);
	ck_assert_ptr_nonnull(want);
	ck_assert_int_eq(posix_memalign((void **)&back, PAGE, len), 0);
	fill(want, len, 777);
	memcpy(buf, want, len);

	submit_gone(fd, GPIN_DIO_WRITE, buf);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		memset(buf, 0xcc, len);
		_exit(0);
	}
	memset(buf, 0xdd, len);
	reap_expect(GONE_REQS, GONE_BYTES);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(pread(dfd, back, len, 0), (ssize_t)len);
	ck_assert_msg(!memcmp(back, want, len),
		      "the device got bytes written after submission");
	stats(&st);
	ck_assert_uint_eq(st.live_pages, 0);
	free(back);
	free(want);
	close(dfd);
	close(fd);
	munmap(buf, len);
}
END_TEST

/* ---- a device that fails every request ----------------------------------- */

/*
 * GPIN_TEST_ERRDEV: a device-mapper `error` target.  Every mode, sync and
 * async, read and write: -EIO back and nothing left pinned.
 */
START_TEST(test_dio_device_error)
{
	const char *dev = getenv("GPIN_TEST_ERRDEV");
	char *buf = map_anon(16 * PAGE, PROT_READ | PROT_WRITE);
	struct iovec iov = { buf, 4 * PAGE };
	struct gpin_dio reqs[4];
	struct gpin_stats st;
	int fd, m, i;

	if (!dev) {
		fprintf(stderr, "# SKIP device errors: no dm error target\n");
		return;
	}
	fd = open(dev, O_RDWR);
	ck_assert_msg(fd >= 0, "%s: %s", dev, strerror(errno));
	touch(buf, 16 * PAGE, 3);
	for (m = 0; m < GPIN_MODE_COUNT; m++) {
		errno = 0;
		ck_assert_int_eq(libgpin_dio(g, fd, GPIN_DIO_READ, 0, &iov, 1, m),
				 -1);
		ck_assert_int_eq(errno, EIO);
		errno = 0;
		ck_assert_int_eq(libgpin_dio(g, fd, GPIN_DIO_WRITE, 0, &iov, 1,
					  m), -1);
		ck_assert_int_eq(errno, EIO);
	}
	for (i = 0; i < 4; i++)
		libgpin_dio_prep(&reqs[i], fd, i & 1 ? GPIN_DIO_WRITE :
			      GPIN_DIO_READ, (uint64_t)i * 4 * PAGE, &iov, 1,
			      i % GPIN_MODE_COUNT, i);
	ck_assert_int_eq(libgpin_dio_submit(g, reqs, 4), 4);
	reap_expect(4, -EIO);
	stats(&st);
	ck_assert_uint_eq(st.live_pages, 0);
	close(fd);
	munmap(buf, 16 * PAGE);
}
END_TEST

void dio_add_tcases(Suite *s)
{
	TCase *tc;

	tc = tcase_create("dio");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_dio_roundtrip, 0,
			    T_COUNT * GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_dio_short, 0, T_COUNT);
	tcase_add_loop_test(tc, test_dio_async, 0, T_COUNT);
	tcase_add_test(tc, test_dio_close_inflight);
	tcase_add_test(tc, test_dio_munmap_inflight);
	tcase_add_test(tc, test_dio_fork_inflight);
	tcase_add_test(tc, test_dio_device_error);
	suite_add_tcase(s, tc);

	tc = tcase_create("dio_bad_input");
	tcase_add_checked_fixture(tc, dio_setup, dio_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_dio_bad, 0,
			    sizeof(bad_dios) / sizeof(bad_dios[0]));
	tcase_add_loop_test(tc, test_dio_bad_readonly, 0, GPIN_MODE_COUNT);
	tcase_add_test(tc, test_dio_async_bad);
	suite_add_tcase(s, tc);
}
