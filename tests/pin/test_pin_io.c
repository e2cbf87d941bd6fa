// SPDX-License-Identifier: GPL-2.0
/*
 * gpin.ko's direct I/O when the I/O stalls: a filesystem frozen while
 * writes are in flight, and a device whose I/O never completes on its own.
 * Run with test_pin.c in the test host.  Targets from tests/pin/in-host.sh:
 *   GPIN_TEST_FREEZEDIR   ext4 on a dm-delay device (writes take 100 ms),
 *                         which fsfreeze may freeze
 *   GPIN_TEST_MPATH       a dm multipath device (queue_if_no_path) over
 *   GPIN_TEST_MPATH_PATH  its one path: once the path is failed, I/O
 *                         queues in dm until "fail_if_no_path"
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* Runs a shell command; its exit status. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static unsigned long long live_pages(void)
{
	struct gpin_stats st;

	stats(&st);
	return st.live_pages;
}

/* Submits one write or read of @len bytes at @off; asserts it started. */
static void submit(struct libgpin *gp, int fd, enum gpin_dio_op op, void *buf,
		   size_t len, uint64_t off, int mode, uint64_t id)
{
	struct iovec iov = { buf, len };
	struct gpin_dio d;

	libgpin_dio_prep(&d, fd, op, off, &iov, 1, mode, id);
	ck_assert_msg(libgpin_dio_submit(gp, &d, 1) == 1, "submit %llu: %s",
		      (unsigned long long)id, strerror(errno));
}

/* Reaps until @want events or @secs; counts full-length ones in @ok. */
static int reap(struct libgpin *gp, int want, size_t len, double secs,
		unsigned char *seen, int *ok)
{
	struct gpin_dio_event ev[64];
	double end = now() + secs;
	int got = 0, n, i;

	while (got < want && now() < end) {
		n = libgpin_dio_reap(gp, ev, 64, NULL);
		ck_assert_int_ge(n, 0);
		for (i = 0; i < n; i++) {
			seen[ev[i].user_data]++;
			*ok += ev[i].result == (int64_t)len;
		}
		got += n;
		if (!n)
			usleep(2000);
	}
	return got;
}

/* ---- fsfreeze with writes in flight ------------------------------------- */

#define FRZ_EARLY	32
#define FRZ_LATE	8
#define FRZ_PAGES	(FRZ_EARLY + FRZ_LATE)

struct frz {
	int fd;
	char *buf;
	volatile int late_started;
	double late_at;
};

/* The writes submitted while the filesystem is frozen. */
static void *frz_late(void *arg)
{
	struct frz *f = arg;
	int i;

	for (i = FRZ_EARLY; i < FRZ_PAGES; i++)
		submit(g, f->fd, GPIN_DIO_WRITE, f->buf + i * PAGE, PAGE,
		       (uint64_t)i * PAGE, i % GPIN_MODE_COUNT, i);
	f->late_at = now();
	f->late_started = 1;
	return NULL;
}

/*
 * Writes in flight when fsfreeze -f starts hold the superblock's freeze
 * protection until they complete, as aio's do: the freeze waits for them
 * and they all complete.  Writes submitted while frozen wait in SUBMIT (in
 * sb_start_write()) until the thaw, then complete.  Everything written is
 * read back: nothing lost, nothing hung.
 */
START_TEST(test_fsfreeze_writes)
{
	const char *dir = getenv("GPIN_TEST_FREEZEDIR");
	unsigned char seen[FRZ_PAGES] = { 0 };
	char path[256], *back;
	struct frz f = { 0 };
	pthread_t late;
	double t0, t1;
	int i, ok = 0, got;

	if (!dir) {
		fprintf(stderr, "# SKIP: no GPIN_TEST_FREEZEDIR set up\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/frz-%d", dir, (int)getpid());
	f.fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600);
	ck_assert_msg(f.fd >= 0, "%s: %s", path, strerror(errno));
	f.buf = map_anon(FRZ_PAGES * PAGE, PROT_READ | PROT_WRITE);
	back = map_anon(FRZ_PAGES * PAGE, PROT_READ | PROT_WRITE);
	/* allocated and written once: the writes below only overwrite */
	ck_assert_int_eq(pwrite(f.fd, back, FRZ_PAGES * PAGE, 0),
			 FRZ_PAGES * PAGE);
	ck_assert_int_eq(fsync(f.fd), 0);
	for (i = 0; i < FRZ_PAGES; i++)
		memset(f.buf + i * PAGE, 0xa0 + i, PAGE);

	for (i = 0; i < FRZ_EARLY; i++)
		submit(g, f.fd, GPIN_DIO_WRITE, f.buf + i * PAGE, PAGE,
		       (uint64_t)i * PAGE, i % GPIN_MODE_COUNT, i);
	t0 = now();
	/* returns once the writes in flight are done and the fs is frozen */
	ck_assert_int_eq(sh("timeout 30 fsfreeze -f %s", dir), 0);
	t1 = now();
	got = reap(g, FRZ_EARLY, PAGE, 5, seen, &ok);
	ck_assert_msg(got == FRZ_EARLY, "frozen after %.2f s with %d of %d "
		      "writes completed", t1 - t0, got, FRZ_EARLY);

	ck_assert_int_eq(pthread_create(&late, NULL, frz_late, &f), 0);
	usleep(500000);
	ck_assert_msg(!f.late_started, "a write started on a frozen fs");
	t0 = now();
	ck_assert_int_eq(sh("fsfreeze -u %s", dir), 0);
	ck_assert_int_eq(pthread_join(late, NULL), 0);
	ck_assert(f.late_started && f.late_at >= t0);
	got += reap(g, FRZ_LATE, PAGE, 20, seen, &ok);
	ck_assert_int_eq(got, FRZ_PAGES);
	ck_assert_int_eq(ok, FRZ_PAGES);
	for (i = 0; i < FRZ_PAGES; i++)
		ck_assert_int_eq(seen[i], 1);

	ck_assert_int_eq(pread(f.fd, back, FRZ_PAGES * PAGE, 0),
			 FRZ_PAGES * PAGE);
	for (i = 0; i < FRZ_PAGES; i++)
		ck_assert_msg(!memcmp(back + i * PAGE, f.buf + i * PAGE, PAGE),
			      "page %d lost", i);
	close(f.fd);
	unlink(path);
	munmap(f.buf, FRZ_PAGES * PAGE);
	munmap(back, FRZ_PAGES * PAGE);
}
END_TEST

/* ---- kill -9 with I/O that never completes ------------------------------ */

static unsigned long module_refcnt(void)
{
	FILE *f = fopen("/sys/module/gpin/refcnt", "r");
	unsigned long n = 0;

	ck_assert(f);
	ck_assert_int_eq(fscanf(f, "%lu", &n), 1);
	fclose(f);
	return n;
}

/* How many hold the dm device @name open. */
static int dm_open_count(const char *name)
{
	char cmd[256];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd),
		 "dmsetup info -c --noheadings -o open %s", name);
	p = popen(cmd, "r");
	ck_assert(p);
	if (fscanf(p, "%d", &n) != 1)
		n = -1;
	pclose(p);
	return n;
}

#define MPATH_REQS	8

/*
 * A process with direct I/O queued forever in dm multipath (its one path
 * failed, queue_if_no_path) is killed: it dies at once, its file is
 * orphaned and holds the module (rmmod would fail) and the device, its
 * pages stay pinned.  When dm finally fails the I/O (fail_if_no_path) the
 * orphan releases everything: pages unpinned, the module reference and the
 * device closed.  Every mode.
 */
START_TEST(test_kill_with_io_queued)
{
	const char *name = getenv("GPIN_TEST_MPATH");
	const char *path = getenv("GPIN_TEST_MPATH_PATH");
	char *buf = map_anon(MPATH_REQS * PAGE, PROT_READ | PROT_WRITE);
	unsigned long refs0;
	int status, ready[2], i;
	double t0, end;
	pid_t pid;
	char c;

	if (!name || !path) {
		fprintf(stderr, "# SKIP: no GPIN_TEST_MPATH set up\n");
		return;
	}
	setenv("DM_DISABLE_UDEV", "1", 1);
	/* only our file: orphans of earlier cases are gone (teardown) */
	end = now() + 5;
	while (module_refcnt() != 1 && now() < end)
		usleep(20000);
	ck_assert_int_eq(module_refcnt(), 1);
	ck_assert_int_eq(sh("dmsetup message %s 0 queue_if_no_path", name), 0);
	ck_assert_int_eq(sh("dmsetup message %s 0 fail_path %s", name, path),
			 0);
	touch(buf, MPATH_REQS * PAGE, 12);
	refs0 = module_refcnt();
	ck_assert_int_eq(dm_open_count(name), 0);

	ck_assert_int_eq(pipe(ready), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char dev[256];
		struct libgpin *gc = libgpin_open();
		int fd;

		snprintf(dev, sizeof(dev), "/dev/mapper/%s", name);
		fd = open(dev, O_RDWR);
		if (!gc || fd < 0)
			_exit(1);
		for (i = 0; i < MPATH_REQS; i++)
			submit(gc, fd, GPIN_DIO_READ, buf + i * PAGE, PAGE,
			       (uint64_t)i * PAGE, _i, i);
		close(fd);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	usleep(300000);
	t0 = now();
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(now() - t0 < 2.0, "the killed process took %.1f s to go",
		      now() - t0);
	ck_assert(WIFSIGNALED(status));

	usleep(500000);
	ck_assert_msg(live_pages() >= MPATH_REQS, "%llu pages pinned: the "
		      "queued I/O's pages were released", live_pages());
	ck_assert_msg(module_refcnt() == refs0 + 1, "module refcnt %lu, "
		      "%lu before: the orphan must hold the module",
		      module_refcnt(), refs0);
	ck_assert_msg(dm_open_count(name) >= 1, "the queued I/O's file is "
		      "closed");

	ck_assert_int_eq(sh("dmsetup message %s 0 fail_if_no_path", name), 0);
	end = now() + 20;
	while ((live_pages() || module_refcnt() != refs0 ||
		dm_open_count(name)) && now() < end)
		usleep(50000);
	ck_assert_msg(!live_pages(), "%llu pages still pinned after the I/O "
		      "failed", live_pages());
	ck_assert_msg(module_refcnt() == refs0, "module refcnt %lu, %lu "
		      "before", module_refcnt(), refs0);
	ck_assert_int_eq(dm_open_count(name), 0);

	ck_assert_int_eq(sh("dmsetup message %s 0 reinstate_path %s", name,
			    path), 0);
	close(ready[0]);
	munmap(buf, MPATH_REQS * PAGE);
}
END_TEST

void io_add_tcases(Suite *s)
{
	TCase *tc = tcase_create("io_stall");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_fsfreeze_writes);
	tcase_add_loop_test(tc, test_kill_with_io_queued, 0, GPIN_MODE_COUNT);
	suite_add_tcase(s, tc);
}
