// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device tests' and fuzzers' disk (fake_disk.h).  Per queue, the
 * requests its owner prepared; at submit they join the disk's one FIFO
 * (queue and request); the disk - its thread, or the test in manual mode
 * - finishes the oldest, and the queue's reap hands the finished back to
 * the device.  One lock covers it all: the owner's lists are looked at by
 * the tests' threads too.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "devices/virtio_blk.h"
#include "fake_disk.h"

#define DEPTH		VIRTIO_BLK_QUEUE_SIZE

struct at_disk {
	struct blk_io *io;
	unsigned int q;
};

struct finished {
	struct blk_io *io;
	int64_t res;
};

struct fake_disk {
	struct fake_disk_opts o;
	struct blk_backend *be;
	unsigned int nq;
	int efd[FAKE_DISK_QUEUES];

	pthread_mutex_t lock;
	pthread_cond_t work;
	struct blk_io *prepared[FAKE_DISK_QUEUES][DEPTH];
	unsigned int nprepared[FAKE_DISK_QUEUES];
	struct at_disk queued[FAKE_DISK_QUEUES * DEPTH];
	unsigned int nqueued;
	struct at_disk working;		/* the thread's, .io NULL: none */
	struct finished done[FAKE_DISK_QUEUES][DEPTH];
	unsigned int ndone[FAKE_DISK_QUEUES];
	bool hold, full, stop;
	unsigned int credits;		/* may finish while held */
	unsigned int delay_us;		/* fake_disk__set_delay(); 0: random */
	unsigned long requests;		/* prepared, ever */
	unsigned long finished;		/* handed back or ended at stop */

	/* fake_disk__gate(): other threads' reaps wait while shut */
	pthread_cond_t gate;
	pthread_t tester;
	unsigned int gate_at;
	bool gate_shut;

	pthread_t thread;
	bool has_thread;
	_Atomic unsigned long reaped, reaps;
};

static struct fake_disk_opts next_opts;
static struct fake_disk *_Atomic last;

/* The device broke the backend contract: the test fails here. */
static void broken(struct fake_disk *d, const char *why)
{
	fprintf(stderr, "fake_disk: %s\n", why);
	abort();
}

void fake_disk__set(const struct fake_disk_opts *o)
{
	next_opts = *o;
}

struct fake_disk *fake_disk__of(struct blk_backend *be)
{
	return be->priv;
}

/* ---- the disk's work -------------------------------------------------- */

/* What a READ brings: into the bounce buffer if there is one. */
static void fill(const struct fake_disk *d, struct blk_io *io)
{
	unsigned int i;

	if (d->o.fill < 0 || io->op != BLK_IO_READ)
		return;
	if (io->bounce) {
		memset(io->bounce, d->o.fill, io->len);
		return;
	}
	for (i = 0; i < io->niov; i++)
		memset(io->iov[i].iov_base, d->o.fill, io->iov[i].iov_len);
}

/* The disk does @r's I/O (outside the lock); its result. */
static int64_t do_io(struct fake_disk *d, const struct at_disk *r, bool fail)
{
	struct blk_io *io = r->io;
	bool data = io->op == BLK_IO_READ || io->op == BLK_IO_WRITE;

	if (d->o.fail_bounce_over && io->op == BLK_IO_READ && io->bounce &&
	    io->len > d->o.fail_bounce_over)
		fail = true;
	if (fail)
		return -EIO;
	if (data && d->o.on_io)
		d->o.on_io(io);
	fill(d, io);
	return (int64_t)io->len;
}

/* Under the lock: @r finished with @res; its queue hears of it. */
static void finish(struct fake_disk *d, const struct at_disk *r, int64_t res)
{
	d->done[r->q][d->ndone[r->q]++] = (struct finished) { r->io, res };
	eventfd_write(d->efd[r->q], 1);
}

static void sleep_us(unsigned int us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };

	nanosleep(&ts, NULL);
}

static void *disk_thread(void *arg)
{
	struct fake_disk *d = arg;
	unsigned int seed = 1;

	pthread_mutex_lock(&d->lock);
	while (!d->stop) {
		unsigned int us = d->delay_us;
		struct at_disk r;
		int64_t res;

		if (!d->nqueued || (d->hold && !d->credits)) {
			pthread_cond_wait(&d->work, &d->lock);
			continue;
		}
		if (d->hold)
			d->credits--;
		r = d->queued[0];
		memmove(d->queued, d->queued + 1, --d->nqueued * sizeof(r));
		d->working = r;
		pthread_mutex_unlock(&d->lock);
		if (!us && d->o.max_delay_us && rand_r(&seed) % 4)
			us = rand_r(&seed) % d->o.max_delay_us;
		if (us)
			sleep_us(us);
		res = do_io(d, &r, false);
		pthread_mutex_lock(&d->lock);
		d->working.io = NULL;
		finish(d, &r, res);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/* ---- the backend ops -------------------------------------------------- */

/* A start that failed: nothing of it stays (the device will not stop it). */
static int start_failed(struct blk_backend *be, struct fake_disk *d, int err)
{
	unsigned int i;

	for (i = 0; i < d->nq; i++)
		if (d->efd[i] >= 0)
			close(d->efd[i]);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->work);
	pthread_cond_destroy(&d->gate);
	be->priv = NULL;
	free(d);
	return err;
}

static int disk_start(struct blk_backend *be)
{
	struct fake_disk *d = calloc(1, sizeof(*d));
	unsigned int i;
	int ret;

	if (!d)
		return -ENOMEM;
	if (be->p.nqueues > FAKE_DISK_QUEUES)
		broken(d, "more queues than the fake disk has");
	d->o = next_opts;
	d->be = be;
	d->nq = be->p.nqueues;
	d->hold = d->o.hold;
	be->priv = d;
	be->direct = d->o.direct;
	be->lbs = 512;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->work, NULL);
	pthread_cond_init(&d->gate, NULL);
	for (i = 0; i < d->nq; i++)
		d->efd[i] = -1;
	for (i = 0; i < d->nq; i++) {
		d->efd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (d->efd[i] < 0)
			return start_failed(be, d, -errno);
	}
	if (!d->o.manual) {
		ret = -pthread_create(&d->thread, NULL, disk_thread, d);
		if (ret)
			return start_failed(be, d, ret);
		d->has_thread = true;
	}
	atomic_store(&last, d);
	return 0;
}

/* Under the lock: requests of queue @q the disk holds. */
static unsigned int held(const struct fake_disk *d, unsigned int q)
{
	unsigned int i, n = d->nprepared[q] + d->ndone[q];

	for (i = 0; i < d->nqueued; i++)
		n += d->queued[i].q == q;
	return n + (d->working.io && d->working.q == q);
}

/* Under the lock: whether @io is anywhere at the disk. */
static bool in_flight(const struct fake_disk *d, const struct blk_io *io)
{
	unsigned int q, i;

	if (d->working.io == io)
		return true;
	for (i = 0; i < d->nqueued; i++)
		if (d->queued[i].io == io)
			return true;
	for (q = 0; q < d->nq; q++) {
		for (i = 0; i < d->nprepared[q]; i++)
			if (d->prepared[q][i] == io)
				return true;
		for (i = 0; i < d->ndone[q]; i++)
			if (d->done[q][i].io == io)
				return true;
	}
	return false;
}

static int disk_prep(struct blk_backend *be, unsigned int q, struct blk_io *io)
{
	struct fake_disk *d = be->priv;
	bool data = io->op == BLK_IO_READ || io->op == BLK_IO_WRITE;
	int ret = 0;

	if (q >= d->nq)
		broken(d, "prep on a queue that is not there");
	/* before the bounce, which may refuse it: checked every time */
	pthread_mutex_lock(&d->lock);
	if (held(d, q) >= DEPTH)
		broken(d, "more than a queue's depth out");
	if (in_flight(d, io))
		broken(d, "a request prepared while still in flight");
	pthread_mutex_unlock(&d->lock);
	if (data)
		ret = blk_backend__bounce(be, io);
	if (ret)
		return ret;
	if (data && d->o.on_prep)
		d->o.on_prep(io);
	pthread_mutex_lock(&d->lock);
	d->prepared[q][d->nprepared[q]++] = io;
	d->requests++;
	pthread_mutex_unlock(&d->lock);
	return 0;
}

static int disk_submit(struct blk_backend *be, unsigned int q)
{
	struct fake_disk *d = be->priv;
	unsigned int i;

	if (q >= d->nq)
		broken(d, "submit on a queue that is not there");
	pthread_mutex_lock(&d->lock);
	if (d->full && d->nprepared[q]) {
		pthread_mutex_unlock(&d->lock);
		return -EAGAIN;
	}
	for (i = 0; i < d->nprepared[q]; i++)
		d->queued[d->nqueued++] = (struct at_disk) {
			d->prepared[q][i], q };
	d->nprepared[q] = 0;
	if (d->gate_at && d->nqueued + !!d->working.io >= d->gate_at)
		d->gate_shut = true;
	pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

/*
 * A reap by anyone but the test's thread waits while the gate is shut,
 * at most 10 s so that a test that forgets to open it fails rather than
 * hangs.
 */
static void wait_at_gate(struct fake_disk *d)
{
	struct timespec end;

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += 10;
	while (d->gate_shut && !pthread_equal(pthread_self(), d->tester))
		if (pthread_cond_timedwait(&d->gate, &d->lock, &end))
			break;
}

static unsigned int disk_reap(struct blk_backend *be, unsigned int q)
{
	struct fake_disk *d = be->priv;
	struct finished done[DEPTH];
	unsigned int i, n;

	if (q >= d->nq)
		broken(d, "reap on a queue that is not there");
	atomic_fetch_add(&d->reaps, 1);
	pthread_mutex_lock(&d->lock);
	wait_at_gate(d);
	n = d->ndone[q];
	memcpy(done, d->done[q], n * sizeof(done[0]));
	d->ndone[q] = 0;
	d->finished += n;
	if (d->finished > d->requests)
		broken(d, "more requests finished than were prepared");
	pthread_mutex_unlock(&d->lock);
	for (i = 0; i < n; i++) {
		be->p.complete(be->p.opaque, q, done[i].io, done[i].res);
		atomic_fetch_add(&d->reaped, 1);
	}
	return n;
}

static int disk_event_fd(struct blk_backend *be, unsigned int q)
{
	struct fake_disk *d = be->priv;

	if (q >= d->nq)
		broken(d, "the eventfd of a queue that is not there");
	return d->efd[q];
}

/* Under the lock: @io ends unreported, its bounce buffer given back. */
static void end_unreported(struct fake_disk *d, struct blk_io *io)
{
	blk_backend__finish(d->be, io, -EIO, false);
	d->finished++;
}

/*
 * The device is closed: requests still at the disk (a test that never
 * released them, a VMM exiting with I/O out) end unreported, as a closed
 * ring's would.  Every request prepared has then finished exactly once.
 */
static void disk_stop(struct blk_backend *be)
{
	struct fake_disk *d = be->priv, *expect;
	unsigned int q, i;

	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&d->lock);
	if (d->has_thread)
		pthread_join(d->thread, NULL);
	pthread_mutex_lock(&d->lock);
	for (i = 0; i < d->nqueued; i++)
		end_unreported(d, d->queued[i].io);
	for (q = 0; q < d->nq; q++) {
		for (i = 0; i < d->nprepared[q]; i++)
			end_unreported(d, d->prepared[q][i]);
		for (i = 0; i < d->ndone[q]; i++)
			end_unreported(d, d->done[q][i].io);
		close(d->efd[q]);
	}
	if (d->finished != d->requests)
		broken(d, "a request lost or finished twice");
	pthread_mutex_unlock(&d->lock);
	expect = d;
	atomic_compare_exchange_strong(&last, &expect, NULL);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->work);
	pthread_cond_destroy(&d->gate);
	free(d);
}

const struct blk_backend_ops fake_disk_ops = {
	.name = "test-disk",
	.start = disk_start,
	.prep = disk_prep,
	.submit = disk_submit,
	.reap = disk_reap,
	.event_fd = disk_event_fd,
	.stop = disk_stop,
};

/* ---- a given device's ------------------------------------------------- */

void fake_disk__set_full(struct fake_disk *d, bool on)
{
	pthread_mutex_lock(&d->lock);
	d->full = on;
	pthread_mutex_unlock(&d->lock);
}

void fake_disk__set_delay(struct fake_disk *d, unsigned int us)
{
	pthread_mutex_lock(&d->lock);
	d->delay_us = us;
	pthread_mutex_unlock(&d->lock);
}

unsigned int fake_disk__held(struct fake_disk *d, unsigned int q)
{
	unsigned int n;

	pthread_mutex_lock(&d->lock);
	n = held(d, q);
	pthread_mutex_unlock(&d->lock);
	return n;
}

unsigned int fake_disk__unreaped(struct fake_disk *d, unsigned int q)
{
	unsigned int n;

	pthread_mutex_lock(&d->lock);
	n = d->ndone[q];
	pthread_mutex_unlock(&d->lock);
	return n;
}

unsigned long fake_disk__requests(struct fake_disk *d)
{
	unsigned long n;

	pthread_mutex_lock(&d->lock);
	n = d->requests;
	pthread_mutex_unlock(&d->lock);
	return n;
}

bool fake_disk__idle(struct fake_disk *d)
{
	unsigned int q, n = 0;
	bool idle;

	pthread_mutex_lock(&d->lock);
	for (q = 0; q < d->nq; q++)
		n += held(d, q);
	idle = !n && d->finished == d->requests;
	pthread_mutex_unlock(&d->lock);
	return idle;
}

bool fake_disk__finish_oldest(struct fake_disk *d, unsigned int q, bool fail)
{
	struct at_disk r = { NULL, q };
	unsigned int i;

	if (!d->o.manual)
		broken(d, "finish_oldest on a disk with a thread");
	pthread_mutex_lock(&d->lock);
	for (i = 0; i < d->nqueued; i++)
		if (d->queued[i].q == q)
			break;
	if (i < d->nqueued) {
		r = d->queued[i];
		memmove(d->queued + i, d->queued + i + 1,
			(--d->nqueued - i) * sizeof(r));
		finish(d, &r, do_io(d, &r, fail));
	}
	pthread_mutex_unlock(&d->lock);
	return r.io != NULL;
}

/* ---- the disk started last (the unit tests' one device) -------------- */

static struct fake_disk *current(void)
{
	struct fake_disk *d = atomic_load(&last);

	if (!d)
		broken(d, "no fake disk started");
	return d;
}

void fake_disk__hold(bool on)
{
	struct fake_disk *d = current();

	pthread_mutex_lock(&d->lock);
	d->hold = on;
	pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&d->lock);
}

void fake_disk__release(unsigned int n)
{
	struct fake_disk *d = current();

	pthread_mutex_lock(&d->lock);
	d->credits += n;
	pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&d->lock);
}

void fake_disk__full(bool on)
{
	fake_disk__set_full(current(), on);
}

unsigned long fake_disk__reaped(void)
{
	return atomic_load(&current()->reaped);
}

unsigned long fake_disk__reaps(void)
{
	return atomic_load(&current()->reaps);
}

void fake_disk__gate(unsigned int at)
{
	struct fake_disk *d = current();

	pthread_mutex_lock(&d->lock);
	d->tester = pthread_self();
	d->gate_at = at;
	d->gate_shut = false;
	pthread_cond_broadcast(&d->gate);
	pthread_mutex_unlock(&d->lock);
}

unsigned int fake_disk__queued(void)
{
	struct fake_disk *d = current();
	unsigned int n;

	pthread_mutex_lock(&d->lock);
	n = d->nqueued + !!d->working.io;
	pthread_mutex_unlock(&d->lock);
	return n;
}
