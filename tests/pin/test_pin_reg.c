// SPDX-License-Identifier: GPL-2.0
/*
 * Direct I/O on registered memory (GPIN_PIN_DIO handles, GPIN_DIO_PINNED
 * requests: gpin-vmm's pin=registered), run with test_pin.c in the test
 * host on the targets of test_pin_dio.c.  What is checked: the data goes
 * both ways through the handle's pages with no pin work per request (no
 * pin call in any mode); a request is refused when a buffer is not
 * inside one handle of the file it names, that file is not /dev/gpin or
 * acts on another mm; and a handle unpinned, or its file closed, with I/O
 * in flight keeps its pages (and its VmPin charge) until that I/O is
 * over, then gives everything back.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libgpin.h"
#include "test_pin.h"

#define REG_PAGES	64
#define REG_BYTES	(REG_PAGES * PAGE)

/* One registry: a file whose one GPIN_PIN_DIO handle covers a buffer. */
struct reg {
	struct libgpin *pins;
	char *buf;
	uint32_t handle;
};

static void reg_open(struct reg *r, unsigned int flags)
{
	r->buf = map_anon(REG_BYTES, PROT_READ | PROT_WRITE);
	touch(r->buf, REG_BYTES, 3);
	r->pins = libgpin_open();
	ck_assert(r->pins);
	ck_assert_msg(!libgpin_pin(r->pins, r->buf, REG_PAGES, GPIN_MODE_FAST,
				   GPIN_PIN_DIO | flags, NULL, &r->handle,
				   NULL), "PIN: %s", strerror(errno));
}

static void reg_close(struct reg *r)
{
	libgpin_close(r->pins);
	munmap(r->buf, REG_BYTES);
}

/* One request on @fd through file @via, its buffers in @r's handle. */
static ssize_t reg_dio(struct libgpin *via, struct reg *r, int fd,
		       enum gpin_dio_op op, uint64_t off,
		       const struct iovec *iov, unsigned int n)
{
	struct gpin_dio d;
	int ret;

	libgpin_dio_prep(&d, fd, op, off, iov, n, 0, 0);
	libgpin_dio_use_pinned(&d, r->pins);
	ret = ioctl(libgpin_fd(via), GPIN_IOC_DIO, &d);
	return ret < 0 ? -1 : ret;
}

/*
 * A write and a read of three segments (one page, one across pages at a
 * 512-byte offset, 32 pages: more than a request holds inline), through
 * the test's own file with the registry's handle: the data, and the
 * counters: two requests counted under the handle's mode, no pin call in
 * any mode, the same FOLL_PIN pins held after as before.
 */
START_TEST(test_reg_roundtrip)
{
	enum dio_target t = _i;
	struct reg r;
	struct iovec iov[3];
	struct gpin_stats a, b;
	size_t bytes = PAGE + 2 * PAGE + 32 * PAGE;
	char *back;
	long long held;
	int fd, dfd;

	fd = dio_open_target(t, 0);
	if (fd < 0)
		return;
	dfd = dio_open_target(t, O_DIRECT);
	ck_assert_int_ge(dfd, 0);
	reg_open(&r, GPIN_PIN_WRITE);
	ck_assert_int_eq(posix_memalign((void **)&back, PAGE, bytes), 0);
	iov[0] = (struct iovec){ r.buf, PAGE };
	iov[1] = (struct iovec){ r.buf + 4 * PAGE + 512, 2 * PAGE };
	iov[2] = (struct iovec){ r.buf + 24 * PAGE, 32 * PAGE };

	held = pins_held();
	stats(&a);
	ck_assert_int_eq(reg_dio(g, &r, fd, GPIN_DIO_WRITE, 1 << 20, iov, 3),
			 bytes);
	ck_assert_int_eq(pread(dfd, back, bytes, 1 << 20), bytes);
	ck_assert(!memcmp(back, iov[0].iov_base, PAGE));
	ck_assert(!memcmp(back + PAGE, iov[1].iov_base, 2 * PAGE));
	ck_assert(!memcmp(back + 3 * PAGE, iov[2].iov_base, 32 * PAGE));

	memset(back, 0x5a, bytes);
	ck_assert_int_eq(pwrite(dfd, back, bytes, 1 << 20), bytes);
	ck_assert_int_eq(reg_dio(g, &r, fd, GPIN_DIO_READ, 1 << 20, iov, 3),
			 bytes);
	ck_assert_int_eq(r.buf[4 * PAGE + 512], 0x5a);
	ck_assert_int_eq(r.buf[56 * PAGE - 1], 0x5a);
	ck_assert_int_ne(r.buf[4 * PAGE + 511], 0x5a);
	stats(&b);

	ck_assert_int_eq(DELTA(&a, &b, GPIN_MODE_FAST, dio_requests), 2);
	ck_assert_int_eq(DELTA(&a, &b, GPIN_MODE_FAST, dio_bytes), 2 * bytes);
	ck_assert_int_eq(DELTA(&a, &b, GPIN_MODE_FAST, calls), 0);
	ck_assert_int_eq(DELTA(&a, &b, GPIN_MODE_LOCKED, calls), 0);
	ck_assert_int_eq(DELTA(&a, &b, GPIN_MODE_KERNEL, calls), 0);
	if (held >= 0)
		ck_assert_int_eq(pins_held(), held);

	/* the registry's own file serves its handles too */
	ck_assert_int_eq(reg_dio(r.pins, &r, fd, GPIN_DIO_READ, 1 << 20,
				 iov, 1), PAGE);
	free(back);
	reg_close(&r);
	close(dfd);
	close(fd);
	ck_assert_uint_eq(wait_unpinned(), 0);
}
END_TEST

/* Requests refused, and handles that cannot serve them. */
START_TEST(test_reg_refused)
{
	struct reg r, ro;
	struct iovec iov;
	struct gpin_dio d;
	uint32_t h;
	int fd, status;
	pid_t pid;

	fd = dio_open_target(T_BRD, 0);
	if (fd < 0)
		return;
	reg_open(&r, GPIN_PIN_WRITE);
	reg_open(&ro, 0);

	/* outside the handle, across its end, in a read-only handle */
	iov = (struct iovec){ r.buf + REG_BYTES, PAGE };
	ck_assert_int_eq(reg_dio(g, &r, fd, GPIN_DIO_WRITE, 0, &iov, 1), -1);
	ck_assert_int_eq(errno, EFAULT);
	iov = (struct iovec){ r.buf + REG_BYTES - PAGE, 2 * PAGE };
	ck_assert_int_eq(reg_dio(g, &r, fd, GPIN_DIO_WRITE, 0, &iov, 1), -1);
	ck_assert_int_eq(errno, EFAULT);
	iov = (struct iovec){ ro.buf, PAGE };
	ck_assert_int_eq(reg_dio(g, &ro, fd, GPIN_DIO_READ, 0, &iov, 1), -1);
	ck_assert_int_eq(errno, EFAULT);
	ck_assert_int_eq(reg_dio(g, &ro, fd, GPIN_DIO_WRITE, 0, &iov, 1),
			 PAGE);
	/* another file's handle does not serve: r's buffer through ro */
	iov = (struct iovec){ r.buf, PAGE };
	ck_assert_int_eq(reg_dio(g, &ro, fd, GPIN_DIO_WRITE, 0, &iov, 1), -1);
	ck_assert_int_eq(errno, EFAULT);

	/* GPIN_PIN_DIO handles of one file do not overlap; others may */
	ck_assert_int_eq(libgpin_pin(r.pins, r.buf + PAGE, 1, GPIN_MODE_FAST,
				     GPIN_PIN_DIO, NULL, &h, NULL), -1);
	ck_assert_int_eq(errno, EEXIST);
	ck_assert_int_eq(libgpin_pin(r.pins, r.buf + PAGE, 1, GPIN_MODE_FAST,
				     0, NULL, &h, NULL), 0);
	ck_assert_int_eq(libgpin_unpin(r.pins, h), 0);

	/* the file named is no /dev/gpin; a mode; a pins_fd without flag */
	iov = (struct iovec){ r.buf, PAGE };
	libgpin_dio_prep(&d, fd, GPIN_DIO_WRITE, 0, &iov, 1, 0, 0);
	libgpin_dio_use_pinned(&d, r.pins);
	d.pins_fd = fd;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_DIO, &d), -1);
	ck_assert_int_eq(errno, EBADF);
	d.pins_fd = -1;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_DIO, &d), -1);
	ck_assert_int_eq(errno, EBADF);
	libgpin_dio_use_pinned(&d, r.pins);
	d.mode = GPIN_MODE_LOCKED;
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_DIO, &d), -1);
	ck_assert_int_eq(errno, EINVAL);
	libgpin_dio_prep(&d, fd, GPIN_DIO_WRITE, 0, &iov, 1, 0, 0);
	d.pins_fd = libgpin_fd(r.pins);
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_DIO, &d), -1);
	ck_assert_int_eq(errno, EINVAL);

	/* a child's own file naming the parent's registry: another mm */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct libgpin *gc = libgpin_open();

		_exit(!gc || reg_dio(gc, &r, fd, GPIN_DIO_WRITE, 0, &iov, 1) !=
		      -1 || errno != EPERM);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && !WEXITSTATUS(status),
		      "a child's request on the parent's handles was not EPERM");

	/* unpinned: its range serves no more */
	ck_assert_int_eq(libgpin_unpin(r.pins, r.handle), 0);
	ck_assert_int_eq(reg_dio(g, &r, fd, GPIN_DIO_WRITE, 0, &iov, 1), -1);
	ck_assert_int_eq(errno, EFAULT);
	reg_close(&ro);
	reg_close(&r);
	close(fd);
	ck_assert_uint_eq(wait_unpinned(), 0);
}
END_TEST

#define FLY_REQS	64

/*
 * Reads in flight on the dm-delay device (300 ms each) when the handle
 * is unpinned (odd loop index) or its file closed (even): the pages stay
 * pinned and charged (VmPin) until the last read is over, every read
 * completes with its page of data, and then nothing is left: no live
 * page, no FOLL_PIN held, VmPin back where it was.
 */
START_TEST(test_reg_release_inflight)
{
	static struct gpin_dio reqs[FLY_REQS];
	static struct iovec iov[FLY_REQS];
	struct gpin_dio_event ev[FLY_REQS];
	const char *dev = getenv("GPIN_TEST_SLOWDEV");
	long long held = pins_held();
	long pinned = vm_pin_kib();
	int i, n, fd, done = 0, tries = 0;
	char *pattern;
	struct reg r;

	if (!dev) {
		fprintf(stderr, "# SKIP registered release in flight: no slow device\n");
		return;
	}
	fd = open(dev, O_RDWR | O_DIRECT);
	ck_assert_msg(fd >= 0, "%s: %s", dev, strerror(errno));
	pattern = map_anon(FLY_REQS * PAGE, PROT_READ | PROT_WRITE);
	touch(pattern, FLY_REQS * PAGE, 40 + _i);
	ck_assert_int_eq(pwrite(fd, pattern, FLY_REQS * PAGE, 0),
			 FLY_REQS * PAGE);
	reg_open(&r, GPIN_PIN_WRITE);
	memset(r.buf, 0, REG_BYTES);
	for (i = 0; i < FLY_REQS; i++) {
		iov[i] = (struct iovec){ r.buf + i * PAGE, PAGE };
		libgpin_dio_prep(&reqs[i], fd, GPIN_DIO_READ, (uint64_t)i * PAGE,
				 &iov[i], 1, 0, i);
		libgpin_dio_use_pinned(&reqs[i], r.pins);
	}
	for (i = 0; i < FLY_REQS; i += n) {
		n = libgpin_dio_submit(g, reqs + i, FLY_REQS - i);
		ck_assert_msg(n > 0, "submit: %s", strerror(errno));
	}
	if (_i % 2)
		ck_assert_int_eq(libgpin_unpin(r.pins, r.handle), 0);
	else
		libgpin_close(r.pins);
	/* 300 ms per read: they are all still running */
	ck_assert_int_eq(vm_pin_kib(), pinned + REG_BYTES / 1024);
	while (done < FLY_REQS) {
		n = libgpin_dio_reap(g, ev, FLY_REQS, NULL);
		ck_assert_int_ge(n, 0);
		for (i = 0; i < n; i++)
			ck_assert_int_eq(ev[i].result, PAGE);
		done += n;
		if (!n) {
			ck_assert_msg(++tries < 20000, "only %d events", done);
			usleep(1000);
		}
	}
	ck_assert_msg(!memcmp(r.buf, pattern, FLY_REQS * PAGE),
		      "the reads' data differs");
	if (_i % 2)
		libgpin_close(r.pins);
	munmap(r.buf, REG_BYTES);
	munmap(pattern, FLY_REQS * PAGE);
	close(fd);
	ck_assert_uint_eq(wait_unpinned(), 0);
	ck_assert_int_eq(vm_pin_kib(), pinned);
	if (held >= 0)
		ck_assert_int_eq(pins_held(), held);
}
END_TEST

void reg_add_tcases(Suite *s)
{
	TCase *tc = tcase_create("registered");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_reg_roundtrip, 0, T_COUNT);
	tcase_add_test(tc, test_reg_refused);
	tcase_add_loop_test(tc, test_reg_release_inflight, 0, 4);
	suite_add_tcase(s, tc);
}
