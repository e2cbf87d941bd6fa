// SPDX-License-Identifier: GPL-2.0
/*
 * gpin.ko holds pages as the kernel holds them for DMA (FOLL_PIN), in every
 * mode: fork, copy-on-write and the limits of long-term pins.  Run with
 * test_pin.c in the test host.  Targets from tests/pin/in-host.sh:
 *   GPIN_TEST_SLOWDEV   a dm-delay device (300 ms per request): I/O is still
 *                       in flight when the test forks
 *   GPIN_TEST_STUCKDEV  a dm-delay device (3 s per request): I/O outlives
 *                       the process that started it
 *   GPIN_TEST_BLKDEV    a brd ramdisk
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libgpin.h"
#include "test_pin.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* @env's device opened read/write (O_DIRECT if @direct), or -1 (skip). */
static int open_dev(const char *env, int direct)
{
	const char *path = getenv(env);
	int fd;

	if (!path) {
		fprintf(stderr, "# SKIP: no %s set up\n", env);
		return -1;
	}
	fd = open(path, O_RDWR | (direct ? O_DIRECT : 0));
	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	return fd;
}

/* The first @len bytes of the device behind @fd become @byte. */
static void fill_dev(int fd, int byte, size_t len)
{
	void *b;

	ck_assert_int_eq(posix_memalign(&b, PAGE, len), 0);
	memset(b, byte, len);
	ck_assert_int_eq(pwrite(fd, b, len, 0), (ssize_t)len);
	free(b);
}

static void submit_one(struct libgpin *gp, int fd, enum gpin_dio_op op,
		       void *buf, size_t len, int mode)
{
	struct iovec iov = { buf, len };
	struct gpin_dio d;

	libgpin_dio_prep(&d, fd, op, 0, &iov, 1, mode, 1);
	ck_assert_msg(libgpin_dio_submit(gp, &d, 1) == 1, "submit: %s",
		      strerror(errno));
}

/* Reap one event within @secs seconds; returns its result. */
static long long reap_one(struct libgpin *gp, double secs)
{
	struct gpin_dio_event ev;
	double end = now() + secs;
	int n;

	while ((n = libgpin_dio_reap(gp, &ev, 1, NULL)) == 0) {
		ck_assert_msg(now() < end, "no completion within %.0f s", secs);
		usleep(1000);
	}
	ck_assert_int_eq(n, 1);
	return ev.result;
}

/*
 * The case the kernel fixed with FOLL_PIN: a direct-I/O READ into the
 * start of a private anonymous page is in flight (a slow device), the
 * process forks, and the parent writes elsewhere in the same page (its
 * own neighbouring variable, a legitimate thing to do).  With plain page
 * references fork shares the page copy-on-write, the parent's write moves
 * the parent to a copy, and the device's data lands in the child's page.
 * With a pin fork copies the page for the child instead, and the data
 * reaches the parent.  Every mode.
 */
START_TEST(test_fork_during_dio_read)
{
	char *buf = map_anon(PAGE, PROT_READ | PROT_WRITE);
	char want[512];
	int fd, dfd, status;
	pid_t pid;

	fd = open_dev("GPIN_TEST_SLOWDEV", 0);
	if (fd < 0)
		return;
	dfd = open_dev("GPIN_TEST_SLOWDEV", 1);
	fill_dev(dfd, 0x5b, PAGE);
	memset(want, 0x5b, sizeof(want));
	memset(buf, 0x11, PAGE);

	submit_one(g, fd, GPIN_DIO_READ, buf, 512, _i);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		usleep(500000);
		_exit(0);
	}
	buf[2048] = 0x22;
	ck_assert_int_eq(reap_one(g, 10), 512);
	ck_assert_msg(!memcmp(buf, want, sizeof(want)),
		      "%s: the READ's data went to the child's copy (parent "
		      "has %#x)", libgpin_mode_name(_i), (unsigned char)buf[0]);
	ck_assert_int_eq(buf[2048], 0x22);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	close(dfd);
	close(fd);
	munmap(buf, PAGE);
}
END_TEST

/*
 * A write PIN handle held across fork: the parent's later writes stay on
 * the pinned pages (the child got copies at fork), so the pinned PFNs are
 * still the parent's.
 */
START_TEST(test_fork_with_write_pin)
{
	char *p = map_anon(4 * PAGE, PROT_READ | PROT_WRITE);
	uint64_t pfns[4];
	uint32_t h;
	int i, status;
	pid_t pid;

	touch(p, 4 * PAGE, 3);
	ck_assert_int_eq(libgpin_pin(g, p, 4, _i, GPIN_PIN_WRITE, pfns, &h, NULL),
			 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		memset(p, 0x77, 4 * PAGE);	/* the child's own copies */
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	for (i = 0; i < 4; i++) {
		p[i * PAGE] = 0x33;
		ck_assert_msg(pagemap_pfn(p + i * PAGE) == pfns[i],
			      "%s: page %d moved away from its pin after fork",
			      libgpin_mode_name(_i), i);
	}
	ck_assert_int_eq(libgpin_unpin(g, h), 0);
	munmap(p, 4 * PAGE);
}
END_TEST

/*
 * A read-only pin of pages that fork left shared: the pin must unshare them
 * first (the fast walk leaves such pages to the locked path, which does),
 * or the parent's next write would move it to a copy and leave the pin on
 * the page the child keeps.
 */
START_TEST(test_cow_after_readonly_pin)
{
	char *p = map_anon(4 * PAGE, PROT_READ | PROT_WRITE);
	struct gpin_stats a, b;
	uint64_t pfns[4];
	long long before;
	int i, status, pipefd[2];
	uint32_t h;
	pid_t pid;
	char c;

	touch(p, 4 * PAGE, 5);
	ck_assert_int_eq(pipe(pipefd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* keep the pages shared until the parent is done */
		close(pipefd[1]);
		_exit(read(pipefd[0], &c, 1) < 0);
	}
	close(pipefd[0]);
	before = pins_held();
	stats(&a);
	ck_assert_int_eq(libgpin_pin(g, p, 4, _i, 0, pfns, &h, NULL), 0);
	stats(&b);
	/* the fast walk's pins it undid are counted released */
	if (before >= 0)
		ck_assert_int_eq(pins_held() - before, 4);
	if (_i == GPIN_MODE_FAST)
		ck_assert_int_ge(DELTA(&a, &b, GPIN_MODE_FAST, fallbacks), 1);
	for (i = 0; i < 4; i++) {
		p[i * PAGE + 1] = 0x44;
		ck_assert_msg(pagemap_pfn(p + i * PAGE) == pfns[i],
			      "%s: page %d: the read-only pin is not on the "
			      "parent's page after its write",
			      libgpin_mode_name(_i), i);
	}
	close(pipefd[1]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(libgpin_unpin(g, h), 0);
	if (before >= 0)
		ck_assert_int_eq(pins_held() - before, 0);
	munmap(p, 4 * PAGE);
}
END_TEST

/*
 * Every pin is counted acquired once and released once, as the kernel's
 * own pins are: the fast walk adds its count once per window, not per page,
 * and none may be lost at a window's end or at the fallback to the locked
 * path.  Three windows' worth (the batch parameter) of present 4K pages,
 * then 100 not yet faulted in: the fast walk takes the first in several
 * windows and the locked path faults in the rest.
 */
START_TEST(test_pins_counted)
{
	const size_t present = 3 * get_param("batch"), n = present + 100;
	char *p = map_anon(n * PAGE, PROT_READ | PROT_WRITE);
	struct gpin_stats a, b;
	long long before;
	uint32_t h;

	ck_assert_uint_gt(present, 0);

	before = pins_held();
	if (before < 0) {
		fprintf(stderr, "# SKIP: vm.stat_refresh not writable: %s\n",
			strerror(errno));
		munmap(p, n * PAGE);
		return;
	}
	ck_assert_int_eq(madvise(p, n * PAGE, MADV_NOHUGEPAGE), 0);
	touch(p, present * PAGE, 9);
	stats(&a);
	ck_assert_int_eq(libgpin_pin(g, p, n, _i, GPIN_PIN_WRITE, NULL, &h,
				  NULL), 0);
	stats(&b);
	if (_i == GPIN_MODE_FAST) {
		ck_assert_int_eq(DELTA(&a, &b, GPIN_MODE_FAST, fast_pages),
				 present);
		ck_assert_int_eq(DELTA(&a, &b, GPIN_MODE_FAST, fallbacks), 1);
	}
	ck_assert_int_eq(pins_held() - before, n);
	ck_assert_int_eq(libgpin_unpin(g, h), 0);
	ck_assert_int_eq(pins_held() - before, 0);
	munmap(p, n * PAGE);
}
END_TEST

/* Drops capability @cap from this process's effective set. */
static void drop_cap(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	ck_assert_int_eq(syscall(SYS_capget, &hdr, data), 0);
	data[cap / 32].effective &= ~(1U << (cap % 32));
	ck_assert_int_eq(syscall(SYS_capset, &hdr, data), 0);
}

/*
 * PIN handles are long-term pins charged to the process's pinned_vm
 * (VmPin) against RLIMIT_MEMLOCK, as RDMA charges registered memory, for
 * a process without CAP_IPC_LOCK; not to locked_vm (VmLck), which is
 * mlock()'s (handle.c says why).
 */
START_TEST(test_memlock_limit)
{
	struct rlimit rl = { 16 * PAGE, 16 * PAGE };
	char *p = map_anon(32 * PAGE, PROT_READ | PROT_WRITE);
	long pinned = vm_pin_kib();
	uint32_t h1, h2;

	touch(p, 32 * PAGE, 7);
	ck_assert_int_eq(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	drop_cap(CAP_IPC_LOCK);
	ck_assert_int_eq(libgpin_pin(g, p, 12, _i, GPIN_PIN_WRITE, NULL, &h1,
				  NULL), 0);
	ck_assert_int_eq(vm_pin_kib() - pinned, 12 * PAGE / 1024);
	ck_assert_int_eq(libgpin_pin(g, p + 12 * PAGE, 8, _i, GPIN_PIN_WRITE,
				  NULL, &h2, NULL), -1);
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_int_eq(libgpin_pin(g, p + 12 * PAGE, 4, _i, GPIN_PIN_WRITE,
				  NULL, &h2, NULL), 0);
	ck_assert_int_eq(libgpin_unpin(g, h1), 0);
	ck_assert_int_eq(libgpin_pin(g, p + 16 * PAGE, 12, _i, 0, NULL, &h1,
				  NULL), 0);
	ck_assert_int_eq(libgpin_unpin(g, h1), 0);
	ck_assert_int_eq(libgpin_unpin(g, h2), 0);
	ck_assert_int_eq(vm_pin_kib(), pinned);
	munmap(p, 32 * PAGE);
}
END_TEST

/*
 * A file's own counters (GPIN_STATS_FILE) count its work alone, from
 * zero at open, and its reset leaves the others; the module's counters
 * count everybody's, and only an administrator may reset them.
 */
START_TEST(test_stats_per_file)
{
	char *p = map_anon(8 * PAGE, PROT_READ | PROT_WRITE);
	struct libgpin *other = libgpin_open();
	struct gpin_stats mine, theirs, all0, all1;
	uint32_t h;

	ck_assert_ptr_nonnull(other);
	touch(p, 8 * PAGE, 3);
	ck_assert_int_eq(libgpin_stats(g, &all0), 0);
	ck_assert_int_eq(libgpin_pin(g, p, 8, _i, GPIN_PIN_WRITE, NULL, &h,
				     NULL), 0);
	ck_assert_int_eq(libgpin_file_stats(g, &mine), 0);
	ck_assert_int_eq(libgpin_file_stats(other, &theirs), 0);
	ck_assert_int_eq(libgpin_stats(other, &all1), 0);
	ck_assert_uint_eq(mine.mode[_i].calls, 1);
	ck_assert_uint_eq(mine.mode[_i].pages, 8);
	ck_assert_uint_eq(mine.mode[_i].live_pages, 8);
	ck_assert_uint_eq(mine.live_pages, 8);
	ck_assert_uint_eq(theirs.mode[_i].calls, 0);
	ck_assert_uint_eq(theirs.live_pages, 0);
	ck_assert_uint_ge(all1.mode[_i].calls - all0.mode[_i].calls, 1);

	/* the file's reset: its statistics, not its state, not the module's */
	ck_assert_int_eq(libgpin_file_stats_reset(g), 0);
	ck_assert_int_eq(libgpin_file_stats(g, &mine), 0);
	ck_assert_uint_eq(mine.mode[_i].calls, 0);
	ck_assert_uint_eq(mine.mode[_i].live_pages, 8);
	ck_assert_int_eq(libgpin_stats(g, &all0), 0);
	ck_assert_uint_ge(all0.mode[_i].calls, all1.mode[_i].calls);

	ck_assert_int_eq(libgpin_unpin(g, h), 0);
	ck_assert_int_eq(libgpin_file_stats(g, &mine), 0);
	ck_assert_uint_eq(mine.live_pages, 0);
	libgpin_close(other);
	munmap(p, 8 * PAGE);
}
END_TEST

/* Zeroing every user's module-wide counters is an administrator's act. */
START_TEST(test_stats_reset_needs_admin)
{
	drop_cap(CAP_SYS_ADMIN);
	ck_assert_int_eq(libgpin_stats_reset(g), -1);
	ck_assert_int_eq(errno, EPERM);
	ck_assert_int_eq(libgpin_file_stats_reset(g), 0);
}
END_TEST

/* Physical frame numbers only for CAP_SYS_ADMIN, as /proc/PID/pagemap. */
START_TEST(test_pfns_need_admin)
{
	char *p = map_anon(2 * PAGE, PROT_READ | PROT_WRITE);
	uint64_t pfns[2];
	uint32_t h;

	touch(p, 2 * PAGE, 9);
	drop_cap(CAP_SYS_ADMIN);
	ck_assert_int_eq(libgpin_pin(g, p, 2, _i, 0, pfns, &h, NULL), -1);
	ck_assert_int_eq(errno, EPERM);
	ck_assert_int_eq(libgpin_pin(g, p, 2, _i, 0, NULL, &h, NULL), 0);
	ck_assert_int_eq(libgpin_unpin(g, h), 0);
	munmap(p, 2 * PAGE);
}
END_TEST

/*
 * REAP with a struct it can read but not write back (its inflight field):
 * -EFAULT, and the completions stay for the next REAP.
 */
START_TEST(test_reap_keeps_events)
{
	char *buf = map_anon(4 * PAGE, PROT_READ | PROT_WRITE);
	struct gpin_dio_event ev[4];
	struct gpin_dio_reap *r;
	struct gpin_dio d;
	struct iovec iov;
	int fd, i, n = 0, tries = 0;

	fd = open_dev("GPIN_TEST_BLKDEV", 0);
	if (fd < 0)
		return;
	for (i = 0; i < 4; i++) {
		iov = (struct iovec){ buf + i * PAGE, PAGE };
		libgpin_dio_prep(&d, fd, GPIN_DIO_READ, (uint64_t)i * PAGE, &iov,
			      1, GPIN_MODE_FAST, i);
		ck_assert_int_eq(libgpin_dio_submit(g, &d, 1), 1);
	}
	r = map_anon(PAGE, PROT_READ | PROT_WRITE);
	*r = (struct gpin_dio_reap){
		.size = sizeof(*r), .nr = 4,
		.events = (uintptr_t)ev,
	};
	ck_assert_int_eq(mprotect(r, PAGE, PROT_READ), 0);
	usleep(100000);
	ck_assert_int_eq(ioctl(libgpin_fd(g), GPIN_IOC_DIO_REAP, r), -1);
	ck_assert_int_eq(errno, EFAULT);
	while (n < 4) {
		int got = libgpin_dio_reap(g, ev + n, 4 - n, NULL);

		ck_assert_int_ge(got, 0);
		n += got;
		ck_assert_msg(++tries < 5000, "only %d of 4 events left", n);
		if (n < 4)
			usleep(1000);
	}
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(ev[i].result, PAGE);
	munmap(r, PAGE);
	close(fd);
	munmap(buf, 4 * PAGE);
}
END_TEST

/* Pinned pages the module holds, from a file of our own. */
static unsigned long long live_pages(void)
{
	struct gpin_stats st;

	stats(&st);
	return st.live_pages;
}

/*
 * A process killed with its I/O stuck in the device (3 s per request)
 * exits at once: the close does not wait.  Its pages stay pinned until the
 * I/O completes, then the orphaned requests release them.
 */
START_TEST(test_kill_with_io_stuck)
{
	char *buf = map_anon(16 * PAGE, PROT_READ | PROT_WRITE);
	int fd, status, ready[2];
	double t0, end;
	pid_t pid;
	char c;

	fd = open_dev("GPIN_TEST_STUCKDEV", 0);
	if (fd < 0)
		return;
	touch(buf, 16 * PAGE, 11);
	ck_assert_int_eq(pipe(ready), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct libgpin *gc = libgpin_open();

		if (!gc)
			_exit(1);
		submit_one(gc, fd, GPIN_DIO_READ, buf, 16 * PAGE,
			   GPIN_MODE_FAST);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	t0 = now();
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(now() - t0 < 2.0, "the killed process took %.1f s to go",
		      now() - t0);
	ck_assert(WIFSIGNALED(status));
	ck_assert_msg(live_pages() >= 16, "the stuck I/O's pages were released"
		      " before it completed");
	end = now() + 20;
	while (live_pages() && now() < end)
		usleep(50000);
	ck_assert_msg(!live_pages(), "%llu pages still pinned long after the I/O"
		      " completed", live_pages());
	close(ready[0]);
	close(fd);
	munmap(buf, 16 * PAGE);
}
END_TEST

/*
 * The huge zero page: a read of never-written MADV_HUGEPAGE memory maps it
 * with one pmd.  It is not an anonymous folio, so the walk leaves it to
 * the locked path, which pins it (every mode), and the frames are the ones
 * pagemap shows; nothing stays pinned after the unpin (teardown).
 */
START_TEST(test_huge_zero_page)
{
	size_t n = HPAGE / PAGE, i;
	uint64_t *pfns = calloc(n, sizeof(*pfns));
	char *p = map_anon(2 * HPAGE, PROT_READ | PROT_WRITE);
	char *a = (char *)(((uintptr_t)p + HPAGE - 1) & ~(HPAGE - 1));
	volatile char c = 0;
	uint32_t h;

	ck_assert_ptr_nonnull(pfns);
	ck_assert_int_eq(madvise(a, HPAGE, MADV_HUGEPAGE), 0);
	for (i = 0; i < n; i += 512)
		c += a[i * PAGE];	/* read faults: the (huge) zero page */
	ck_assert_int_eq(c, 0);
	ck_assert_int_eq(libgpin_pin(g, a, n, _i, 0, pfns, &h, NULL), 0);
	for (i = 0; i < n; i++)
		ck_assert_msg(pfns[i] == pagemap_pfn(a + i * PAGE),
			      "%s: page %zu: pinned %#llx, pagemap %#llx",
			      libgpin_mode_name(_i), i,
			      (unsigned long long)pfns[i],
			      (unsigned long long)pagemap_pfn(a + i * PAGE));
	ck_assert_int_eq(libgpin_unpin(g, h), 0);
	munmap(p, 2 * HPAGE);
	free(pfns);
}
END_TEST

/* ---- SUBMIT, REAP and SET_EVENTFD from several threads at once ---------- */

#define RACE_REQS	2000

struct dio_race {
	int fd;
	char *buf;
	unsigned char *seen;		/* one per user_data */
	int next;			/* the next user_data */
	int submitted;
	int reaped;
	int twice;
	pthread_mutex_t lock;
	volatile int stop;
};

static void *race_submit(void *arg)
{
	struct dio_race *r = arg;
	struct iovec iov;
	struct gpin_dio d;
	int i, id;

	for (i = 0; i < RACE_REQS; i++) {
		id = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED);
		iov = (struct iovec){ r->buf + (id % 16) * PAGE, PAGE };
		libgpin_dio_prep(&d, r->fd, GPIN_DIO_READ,
			      (uint64_t)(id % 16) * PAGE, &iov, 1,
			      id % GPIN_MODE_COUNT, id);
		while (libgpin_dio_submit(g, &d, 1) != 1) {
			if (errno != EAGAIN)
				return NULL;
			usleep(100);	/* 1024 unreaped: let the reapers work */
		}
		__atomic_add_fetch(&r->submitted, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *race_reap(void *arg)
{
	struct dio_race *r = arg;
	struct gpin_dio_event ev[32];
	int n, i;

	while (!r->stop || __atomic_load_n(&r->reaped, __ATOMIC_RELAXED) <
			   __atomic_load_n(&r->submitted, __ATOMIC_RELAXED)) {
		n = libgpin_dio_reap(g, ev, 32, NULL);
		if (n < 0)
			return NULL;
		pthread_mutex_lock(&r->lock);
		for (i = 0; i < n; i++) {
			if (ev[i].user_data >= 2 * RACE_REQS ||
			    r->seen[ev[i].user_data]++)
				r->twice++;
		}
		r->reaped += n;
		pthread_mutex_unlock(&r->lock);
		if (!n)
			usleep(200);
	}
	return NULL;
}

static void *race_eventfd(void *arg)
{
	struct dio_race *r = arg;
	int efd;

	while (!r->stop) {
		efd = eventfd(0, EFD_NONBLOCK);
		libgpin_set_eventfd(g, efd);
		close(efd);
		libgpin_set_eventfd(g, -1);
		usleep(50);
	}
	return NULL;
}

/*
 * Two submitters, two reapers and a thread swapping the eventfd, on one
 * file: every request is reaped exactly once, none is lost.
 */
START_TEST(test_dio_threads)
{
	struct dio_race r = { .seen = calloc(2 * RACE_REQS, 1) };
	pthread_t sub[2], rep[2], efd;
	double end;
	int i;

	r.fd = open_dev("GPIN_TEST_BLKDEV", 0);
	if (r.fd < 0)
		return;
	r.buf = map_anon(16 * PAGE, PROT_READ | PROT_WRITE);
	pthread_mutex_init(&r.lock, NULL);
	for (i = 0; i < 2; i++) {
		pthread_create(&sub[i], NULL, race_submit, &r);
		pthread_create(&rep[i], NULL, race_reap, &r);
	}
	pthread_create(&efd, NULL, race_eventfd, &r);
	for (i = 0; i < 2; i++)
		pthread_join(sub[i], NULL);
	end = now() + 20;
	while (__atomic_load_n(&r.reaped, __ATOMIC_RELAXED) < r.submitted &&
	       now() < end)
		usleep(10000);
	r.stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(rep[i], NULL);
	pthread_join(efd, NULL);
	ck_assert_int_eq(r.submitted, 2 * RACE_REQS);
	ck_assert_int_eq(r.twice, 0);
	ck_assert_int_eq(r.reaped, r.submitted);
	close(r.fd);
	munmap(r.buf, 16 * PAGE);
	free(r.seen);
}
END_TEST

void foll_add_tcases(Suite *s)
{
	TCase *tc = tcase_create("foll_pin");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_fork_during_dio_read, 0, GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_fork_with_write_pin, 0, GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_cow_after_readonly_pin, 0,
			    GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_pins_counted, 0, GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_memlock_limit, 0, GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_stats_per_file, 0, GPIN_MODE_COUNT);
	tcase_add_test(tc, test_stats_reset_needs_admin);
	tcase_add_loop_test(tc, test_pfns_need_admin, 0, GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_huge_zero_page, 0, GPIN_MODE_COUNT);
	tcase_add_test(tc, test_dio_threads);
	tcase_add_test(tc, test_reap_keeps_events);
	tcase_add_test(tc, test_kill_with_io_stuck);
	suite_add_tcase(s, tc);
}
