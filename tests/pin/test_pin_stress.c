// SPDX-License-Identifier: GPL-2.0
/*
 * gpin.ko direct I/O under stress, run with test_pin.c in the test host:
 * several threads submit and several reap on one file at once, on a
 * device that completes inside submit_bio() in the submitting thread
 * (brd), on one that completes from a timer interrupt later (null_blk)
 * and on an ext4 file (iomap, completing in the submitter too); processes
 * that close, fork or are killed with I/O in flight; completed requests
 * nobody reaps.  After each: every event says what its request did, the
 * module holds no page, the kernel's FOLL_PIN counts balance
 * (nr_foll_pin_acquired == nr_foll_pin_released after vm.stat_refresh)
 * and the buffer's pages are neither still pinned (fork shares them) nor
 * released once too often (they pin again, which the kernel refuses with
 * a WARN for a reference count at or below zero).
 *
 * A use after free of a request is a narrow window (a completion on the
 * submitter's own stack, a reaper freeing the request before the
 * submitter has left the file's code): gpin.ko's complete_delay_us makes
 * each such completion sleep there, so the window is open on every
 * request; the test host boots with slab poisoning (slub_debug=FZPU) and
 * in-host.sh fails on a poisoned or oopsing kernel log.
 *
 * GPIN_STRESS_SECONDS (default 2) sets how long each cell runs.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libgpin.h"
#include "test_pin.h"

#define BUF_PAGES	64
#define TARGET_PAGES	2048	/* the smallest target: the 8 MiB ext4 file */
#define MAX_BATCH	8
#define SUBMITTERS	2
#define REAPERS		2
#define MAX_TIMED	(1 << 16)	/* requests a timed run follows */
#define DELAY_US	2000	/* complete_delay_us of the timed run */

struct stress {
	struct libgpin *g;
	int fd;
	char *buf;
	int mode;
	atomic_long submitted;
	atomic_long reaped;
	atomic_long bad;	/* events whose result was not their length */
	atomic_int stop;	/* submitters: no more */
	atomic_int all_submitted;	/* every submitter has returned */
	atomic_int failed;	/* a submit or reap error (errno in err) */
	int err;
	/*
	 * A timed run (one request per SUBMIT): when each SUBMIT returned,
	 * by request, and how many events were reaped more than @early_ns
	 * before their SUBMIT returned.
	 */
	_Atomic uint64_t *returned_ns;
	atomic_long next;
	uint64_t early_ns;
	atomic_long early;
};

struct stress_thread {
	struct stress *s;
	unsigned int seed;
};

static double stress_seconds(void)
{
	const char *e = getenv("GPIN_STRESS_SECONDS");

	return e ? atof(e) : 2.0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* user_data: the request's number (timed runs) and its length in pages */
#define UD(idx, pages)		((uint64_t)(idx) << 4 | (pages))
#define UD_IDX(ud)		((ud) >> 4)
#define UD_BYTES(ud)		(((ud) & 15) * PAGE)

static void stress_fail(struct stress *s, int err)
{
	s->err = err;
	atomic_store(&s->failed, 1);
	atomic_store(&s->stop, 1);
}

/*
 * Batches of 1..MAX_BATCH requests: reads and writes of one or two pages
 * of the shared buffer (slots overlap: one page is often pinned by several
 * requests at once) at random offsets of the target.  The length travels
 * in user_data for the reaper to check.  A timed run submits one request
 * per call and notes when each call returned.
 */
static void *submitter(void *arg)
{
	struct stress_thread *t = arg;
	struct stress *s = t->s;
	struct gpin_dio reqs[MAX_BATCH];
	struct iovec iov[MAX_BATCH];

	while (!atomic_load(&s->stop)) {
		unsigned int n = 1 + rand_r(&t->seed) % MAX_BATCH, i;
		long idx = 0;
		int done;

		if (s->returned_ns) {
			n = 1;
			idx = atomic_fetch_add(&s->next, 1);
			if (idx >= MAX_TIMED)
				break;
		}
		for (i = 0; i < n; i++) {
			unsigned int pages = 1 + rand_r(&t->seed) % 2;
			unsigned int slot = rand_r(&t->seed) %
					    (BUF_PAGES - pages + 1);
			uint64_t off = (uint64_t)(rand_r(&t->seed) %
						  (TARGET_PAGES - pages)) * PAGE;
			enum gpin_dio_op op = rand_r(&t->seed) % 4 ?
					      GPIN_DIO_READ : GPIN_DIO_WRITE;

			iov[i] = (struct iovec){ s->buf + slot * PAGE,
						 pages * PAGE };
			libgpin_dio_prep(&reqs[i], s->fd, op, off, &iov[i], 1,
					 s->mode, UD(idx, pages));
		}
		for (i = 0; i < n; i += done) {
			done = libgpin_dio_submit(s->g, reqs + i, n - i);
			if (done < 0 && errno == EAGAIN) {
				/* GPIN_DIO_MAX_INFLIGHT unreaped: let them */
				done = 0;
				if (atomic_load(&s->stop))
					break;
				sched_yield();
				continue;
			}
			if (done <= 0) {
				stress_fail(s, errno);
				return NULL;
			}
			if (s->returned_ns)
				atomic_store(&s->returned_ns[idx], now_ns());
			atomic_fetch_add(&s->submitted, done);
		}
	}
	return NULL;
}

/*
 * A timed run: how long before its SUBMIT returned was @ud's event
 * reaped?  An event reaped while its submitter is still inside the file's
 * ->read_iter or ->write_iter is a request freed under the file's code.
 */
static void check_reaped_early(struct stress *s, uint64_t ud)
{
	_Atomic uint64_t *returned = &s->returned_ns[UD_IDX(ud)];
	uint64_t reaped = now_ns(), t;

	while (!(t = atomic_load(returned)))
		sched_yield();
	if (t > reaped && t - reaped > s->early_ns)
		atomic_fetch_add(&s->early, 1);
}

/* Reap until every submitter has returned and all it submitted is reaped. */
static void *reaper(void *arg)
{
	struct stress_thread *t = arg;
	struct stress *s = t->s;
	struct gpin_dio_event ev[64];

	for (;;) {
		int n = libgpin_dio_reap(s->g, ev, 64, NULL), i;

		if (n < 0) {
			stress_fail(s, errno);
			return NULL;
		}
		for (i = 0; i < n; i++) {
			if (ev[i].result != (int64_t)UD_BYTES(ev[i].user_data))
				atomic_fetch_add(&s->bad, 1);
			if (s->returned_ns)
				check_reaped_early(s, ev[i].user_data);
		}
		atomic_fetch_add(&s->reaped, n);
		if (n)
			continue;
		if (atomic_load(&s->all_submitted) &&
		    atomic_load(&s->reaped) == atomic_load(&s->submitted))
			return NULL;
		if (atomic_load(&s->failed))
			return NULL;
		sched_yield();
	}
}

/* @nsub submitters and @nreap reapers on one file for @seconds. */
static void stress_run(struct stress *s, int nsub, int nreap, double seconds)
{
	struct stress_thread t[SUBMITTERS + REAPERS];
	pthread_t tid[SUBMITTERS + REAPERS];
	struct timespec ts = {
		.tv_sec = (time_t)seconds,
		.tv_nsec = (long)((seconds - (time_t)seconds) * 1e9),
	};
	int i;

	ck_assert_int_le(nsub + nreap, SUBMITTERS + REAPERS);
	for (i = 0; i < nsub + nreap; i++) {
		t[i] = (struct stress_thread){ .s = s, .seed = 17 + i };
		ck_assert_int_eq(pthread_create(&tid[i], NULL,
						i < nsub ? submitter : reaper,
						&t[i]), 0);
	}
	nanosleep(&ts, NULL);
	atomic_store(&s->stop, 1);
	for (i = 0; i < nsub; i++)
		pthread_join(tid[i], NULL);
	atomic_store(&s->all_submitted, 1);
	for (i = nsub; i < nsub + nreap; i++)
		pthread_join(tid[i], NULL);
}

/*
 * What every cell requires once its file is idle: nothing pinned by the
 * module or, per the kernel's own counts, by anyone; the buffer's pages
 * neither left pinned nor released once too often.
 */
static void check_released(char *buf, long long before)
{
	long long held = before >= 0 ? pins_settle(before) : -1;
	struct gpin_stats st;
	uint32_t h;

	stats(&st);
	ck_assert_msg(st.live_pages == 0, "%llu pages still pinned",
		      (unsigned long long)st.live_pages);
	ck_assert_uint_eq(st.file_live_pages, 0);
	/* the pages first: a count off by a pin shows here which way */
	ck_assert_msg(pages_unpinned(buf, BUF_PAGES),
		      "a buffer page is still pinned");
	/* a count released below zero: the kernel refuses (and WARNs) */
	ck_assert_msg(!libgpin_pin(g, buf, BUF_PAGES, GPIN_MODE_LOCKED,
				   GPIN_PIN_WRITE, NULL, &h, NULL),
		      "pin after the stress: %s", strerror(errno));
	ck_assert_int_eq(libgpin_unpin(g, h), 0);
	ck_assert_msg(held == before,
		      "FOLL_PIN pins acquired - released: %lld, was %lld",
		      held, before);
}

/* pins_held(), or -1 with a note that the balance cannot be checked. */
static long long pins_before(void)
{
	long long before = pins_steady();

	if (before < 0)
		fprintf(stderr, "# vm.stat_refresh not writable: FOLL_PIN balance not checked\n");
	return before;
}

/*
 * @nsub submitters and @nreap reapers on @target in @mode for @seconds,
 * then the checks.  @timed: one request per SUBMIT, each reaped event
 * checked against its SUBMIT's return (check_reaped_early()): at most 1%
 * reaped more than half of complete_delay_us early (TCG may stall a
 * thread between an event's publish and its SUBMIT's return).
 */
static void stress_cell(enum dio_target target, int mode, int nsub,
			int nreap, double seconds, bool timed)
{
	struct stress s = { .g = g, .mode = mode };
	long submitted, reaped, bad, early;
	long long before;

	s.fd = dio_open_target(target, 0);
	if (s.fd < 0)
		return;
	s.buf = map_anon(BUF_PAGES * PAGE, PROT_READ | PROT_WRITE);
	touch(s.buf, BUF_PAGES * PAGE, 5);
	if (timed) {
		s.returned_ns = calloc(MAX_TIMED, sizeof(*s.returned_ns));
		ck_assert_ptr_nonnull(s.returned_ns);
		s.early_ns = DELAY_US * 1000ULL / 2;
	}
	before = pins_before();

	stress_run(&s, nsub, nreap, seconds);

	ck_assert_msg(!atomic_load(&s.failed), "%s %s: %s",
		      dio_target_names[target], libgpin_mode_name(mode),
		      strerror(s.err));
	submitted = atomic_load(&s.submitted);
	reaped = atomic_load(&s.reaped);
	bad = atomic_load(&s.bad);
	early = atomic_load(&s.early);
	fprintf(stderr, "# stress %s %s: %ld requests by %d threads, reaped by %d",
		dio_target_names[target], libgpin_mode_name(mode), submitted,
		nsub, nreap);
	if (timed)
		fprintf(stderr, "; %ld reaped over %d us before their SUBMIT returned",
			early, DELAY_US / 2);
	fprintf(stderr, "\n");
	ck_assert_int_gt(submitted, 0);
	ck_assert_int_eq(reaped, submitted);
	ck_assert_msg(bad == 0, "%ld events with a wrong result", bad);
	ck_assert_msg(early * 100 <= submitted,
		      "%ld of %ld events reaped while their SUBMIT was still in the file's code",
		      early, submitted);
	check_released(s.buf, before);
	close(s.fd);
	munmap(s.buf, BUF_PAGES * PAGE);
	free(s.returned_ns);
}

/* Loop index: target * GPIN_MODE_COUNT + mode. */
START_TEST(test_stress_submit_reap)
{
	stress_cell(_i / GPIN_MODE_COUNT, _i % GPIN_MODE_COUNT, SUBMITTERS,
		    REAPERS, stress_seconds(), false);
}
END_TEST

/*
 * Every completion that runs on its submitter's stack (brd completes
 * inside submit_bio()) sleeps 2 ms there (complete_delay_us), inside the
 * file's ->read_iter or ->write_iter, while two reapers poll.  Were the
 * event published at the completion, the reapers would reap it, and so
 * free the request, during that sleep, under the file's code: a use
 * after free wherever that code touches the request afterwards, and an
 * event reaped about 2 ms before its SUBMIT returns.  With the submitter's
 * reference no event may be seen before ->read_iter returned: at most 1%
 * of them are reaped over 1 ms early.  The lifetime before the
 * submitter's reference fails this with nearly all of them early
 * (docs/PIN.md, "Request lifetime").  Loop index: mode.
 */
START_TEST(test_stress_delayed_completion)
{
	set_param("complete_delay_us", DELAY_US);
	stress_cell(T_BRD, _i, 1, REAPERS, stress_seconds() / 2, true);
	set_param("complete_delay_us", 0);
}
END_TEST

/* Once the delayed cells are over, whether they passed or not. */
static void delay_off(void)
{
	set_param("complete_delay_us", 0);
}

enum lifecycle { L_CLOSE, L_FORK, L_KILL, L_COUNT };

static const char *const lifecycle_names[L_COUNT] = {
	"close with I/O in flight", "fork with I/O in flight", "kill -9",
};

/*
 * In a child process of its own: a file, a buffer and stress threads.
 * L_CLOSE and L_FORK stop the threads without reaping and close (L_FORK
 * forks first: the grandchild inherits the file, may neither reap nor
 * submit from its other mm, and exits holding it); L_KILL runs until the
 * parent kills it.
 */
static void lifecycle_child(enum dio_target target, int mode,
			    enum lifecycle how)
{
	struct stress s = { .mode = mode };
	pid_t pid;

	s.g = libgpin_open();
	s.fd = dio_open_target(target, 0);
	if (!s.g || s.fd < 0)
		_exit(2);
	s.buf = map_anon(BUF_PAGES * PAGE, PROT_READ | PROT_WRITE);
	touch(s.buf, BUF_PAGES * PAGE, 6);
	if (how == L_KILL) {
		stress_run(&s, SUBMITTERS, REAPERS, 3600);
		_exit(3);
	}
	/* submitters only: requests pile up unreaped and in flight */
	stress_run(&s, SUBMITTERS, 0, 0.3);
	if (how == L_FORK) {
		pid = fork();
		if (pid == 0) {
			struct gpin_dio_event ev;

			_exit(libgpin_dio_reap(s.g, &ev, 1, NULL) != -1 ||
			      errno != EPERM);
		}
		if (pid < 0 || waitpid(pid, &s.err, 0) != pid || s.err)
			_exit(4);
	}
	_exit(libgpin_close(s.g) ? 5 : 0);
}

/* Loop index: target * L_COUNT + how, in every mode in turn. */
START_TEST(test_stress_lifecycle)
{
	enum dio_target target = _i / L_COUNT;
	enum lifecycle how = _i % L_COUNT;
	unsigned long long left;
	long long before, held;
	int fd, mode, status;
	pid_t pid;

	fd = dio_open_target(target, 0);
	if (fd < 0)
		return;
	close(fd);
	before = pins_before();
	for (mode = 0; mode < GPIN_MODE_COUNT; mode++) {
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0)
			lifecycle_child(target, mode, how);
		if (how == L_KILL) {
			usleep(500000);
			kill(pid, SIGKILL);
		}
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		if (how == L_KILL)
			ck_assert(WIFSIGNALED(status) &&
				  WTERMSIG(status) == SIGKILL);
		else
			ck_assert_msg(WIFEXITED(status) && !WEXITSTATUS(status),
				      "%s %s: child status %#x",
				      lifecycle_names[how],
				      libgpin_mode_name(mode), status);
	}
	left = wait_unpinned();
	ck_assert_msg(left == 0, "%s on %s: %llu pages still pinned",
		      lifecycle_names[how], dio_target_names[target], left);
	held = before >= 0 ? pins_settle(before) : -1;
	ck_assert_msg(held == before,
		      "FOLL_PIN pins acquired - released: %lld, was %lld",
		      held, before);
}
END_TEST

/* Submit @n one-page READs into @buf's pages in turn; all must start. */
static void submit_reads(int fd, char *buf, unsigned int n, int mode)
{
	struct gpin_dio d;
	struct iovec iov;
	unsigned int i;

	for (i = 0; i < n; i++) {
		iov = (struct iovec){ buf + (i % BUF_PAGES) * PAGE, PAGE };
		libgpin_dio_prep(&d, fd, GPIN_DIO_READ, (uint64_t)i * PAGE,
				 &iov, 1, mode, PAGE);
		ck_assert_msg(libgpin_dio_submit(g, &d, 1) == 1,
			      "request %u: %s", i, strerror(errno));
	}
}

static unsigned int reap_all(unsigned int n)
{
	struct gpin_dio_event ev[64];
	unsigned int got = 0;
	int r, i;

	while ((r = libgpin_dio_reap(g, ev, 64, NULL)) > 0) {
		for (i = 0; i < r; i++)
			ck_assert_int_eq(ev[i].result, PAGE);
		got += r;
	}
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(got, n);
	return got;
}

/*
 * Completed requests nobody reaps hold no page (their pages are released
 * at completion), up to the GPIN_DIO_MAX_INFLIGHT requests a file may
 * have submitted and not reaped; past that, EAGAIN.  Loop index: target
 * * GPIN_MODE_COUNT + mode.
 */
START_TEST(test_dio_unreaped_hold_nothing)
{
	enum dio_target target = _i / GPIN_MODE_COUNT;
	int mode = _i % GPIN_MODE_COUNT, fd, efd;
	char *buf;
	long long before;
	struct gpin_dio d;
	struct iovec iov;

	fd = dio_open_target(target, 0);
	if (fd < 0)
		return;
	buf = map_anon(BUF_PAGES * PAGE, PROT_READ | PROT_WRITE);
	touch(buf, BUF_PAGES * PAGE, 7);
	efd = eventfd(0, EFD_CLOEXEC);
	ck_assert_int_ge(efd, 0);
	ck_assert_int_eq(libgpin_set_eventfd(g, efd), 0);
	before = pins_before();

	submit_reads(fd, buf, GPIN_DIO_MAX_INFLIGHT, mode);
	wait_eventfd(efd, GPIN_DIO_MAX_INFLIGHT);
	/* all completed, none reaped: nothing pinned, no room for more */
	check_released(buf, before);
	iov = (struct iovec){ buf, PAGE };
	libgpin_dio_prep(&d, fd, GPIN_DIO_READ, 0, &iov, 1, mode, PAGE);
	ck_assert_int_eq(libgpin_dio_submit(g, &d, 1), -1);
	ck_assert_int_eq(errno, EAGAIN);
	reap_all(GPIN_DIO_MAX_INFLIGHT);
	ck_assert_int_eq(libgpin_dio_submit(g, &d, 1), 1);
	wait_eventfd(efd, 1);
	reap_all(1);

	ck_assert_int_eq(libgpin_set_eventfd(g, -1), 0);
	close(efd);
	close(fd);
	munmap(buf, BUF_PAGES * PAGE);
}
END_TEST

void stress_add_tcases(Suite *s)
{
	TCase *tc = tcase_create("stress");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_stress_submit_reap, 0,
			    T_COUNT * GPIN_MODE_COUNT);
	tcase_add_loop_test(tc, test_stress_lifecycle, 0, T_COUNT * L_COUNT);
	tcase_add_loop_test(tc, test_dio_unreaped_hold_nothing, 0,
			    T_COUNT * GPIN_MODE_COUNT);
	suite_add_tcase(s, tc);

	tc = tcase_create("stress_delayed");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_unchecked_fixture(tc, NULL, delay_off);
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, test_stress_delayed_completion, 0,
			    GPIN_MODE_COUNT);
	suite_add_tcase(s, tc);
}
