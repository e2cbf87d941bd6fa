// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device tests' disk (fake_disk.h): prepared requests wait on their
 * queue's owner until submit hands them to the disk thread, which
 * finishes them in order and signals the queue's eventfd; reap gives the
 * finished ones to the device.  Like a real backend it bounces
 * misaligned buffers (blk_backend__bounce) when it is "direct".
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "devices/virtio_blk.h"
#include "fake_disk.h"

#define DEPTH		VIRTIO_BLK_QUEUE_SIZE

struct at_disk {
	struct blk_io *io;
	unsigned int q;
};

static struct {
	struct fake_disk_opts next;	/* for the next start */
	struct fake_disk_opts o;
	unsigned int nq;
	/* each queue's owner's: prepared, not submitted */
	struct blk_io *prepared[FAKE_DISK_QUEUES][DEPTH];
	unsigned int nprepared[FAKE_DISK_QUEUES];

	pthread_mutex_t lock;
	pthread_cond_t work;
	struct at_disk queued[FAKE_DISK_QUEUES * DEPTH];
	unsigned int nqueued, working;
	struct blk_io *done[FAKE_DISK_QUEUES][DEPTH];
	unsigned int ndone[FAKE_DISK_QUEUES];
	bool hold, full, stop;
	unsigned int credits;		/* may finish while held */
	/* fake_disk__gate(): other threads' reaps wait while shut */
	pthread_cond_t gate;
	pthread_t tester;
	unsigned int gate_at;
	bool gate_shut;
	int efd[FAKE_DISK_QUEUES];
	pthread_t thread;

	_Atomic unsigned long reaped, reaps;
} disk;

void fake_disk__set(const struct fake_disk_opts *o)
{
	disk.next = *o;
}

void fake_disk__hold(bool on)
{
	pthread_mutex_lock(&disk.lock);
	disk.hold = on;
	pthread_cond_signal(&disk.work);
	pthread_mutex_unlock(&disk.lock);
}

void fake_disk__release(unsigned int n)
{
	pthread_mutex_lock(&disk.lock);
	disk.credits += n;
	pthread_cond_signal(&disk.work);
	pthread_mutex_unlock(&disk.lock);
}

void fake_disk__full(bool on)
{
	pthread_mutex_lock(&disk.lock);
	disk.full = on;
	pthread_mutex_unlock(&disk.lock);
}

unsigned long fake_disk__reaped(void)
{
	return atomic_load(&disk.reaped);
}

unsigned long fake_disk__reaps(void)
{
	return atomic_load(&disk.reaps);
}

void fake_disk__gate(unsigned int at)
{
	pthread_mutex_lock(&disk.lock);
	disk.tester = pthread_self();
	disk.gate_at = at;
	disk.gate_shut = false;
	pthread_cond_broadcast(&disk.gate);
	pthread_mutex_unlock(&disk.lock);
}

unsigned int fake_disk__queued(void)
{
	unsigned int n;

	pthread_mutex_lock(&disk.lock);
	n = disk.nqueued + disk.working;
	pthread_mutex_unlock(&disk.lock);
	return n;
}

/* What a READ brings: into the bounce buffer if there is one. */
static void fill(struct blk_io *io)
{
	unsigned int i;

	if (disk.o.fill < 0 || io->op != BLK_IO_READ)
		return;
	if (io->bounce) {
		memset(io->bounce, disk.o.fill, io->len);
		return;
	}
	for (i = 0; i < io->niov; i++)
		memset(io->iov[i].iov_base, disk.o.fill, io->iov[i].iov_len);
}

static void *disk_thread(void *arg)
{
	unsigned int seed = 1;

	pthread_mutex_lock(&disk.lock);
	while (!disk.stop) {
		struct timespec ts = { 0, 0 };
		struct at_disk r;

		if (!disk.nqueued || (disk.hold && !disk.credits)) {
			pthread_cond_wait(&disk.work, &disk.lock);
			continue;
		}
		if (disk.hold)
			disk.credits--;
		r = disk.queued[0];
		memmove(disk.queued, disk.queued + 1,
			--disk.nqueued * sizeof(r));
		disk.working++;
		pthread_mutex_unlock(&disk.lock);
		if (disk.o.max_delay_us && rand_r(&seed) % 4)
			ts.tv_nsec = rand_r(&seed) % (disk.o.max_delay_us * 1000);
		nanosleep(&ts, NULL);
		fill(r.io);
		pthread_mutex_lock(&disk.lock);
		disk.working--;
		disk.done[r.q][disk.ndone[r.q]++] = r.io;
		eventfd_write(disk.efd[r.q], 1);
	}
	pthread_mutex_unlock(&disk.lock);
	return NULL;
}

static int disk_start(struct blk_backend *be)
{
	unsigned int i;

	ck_assert_uint_le(be->p.nqueues, FAKE_DISK_QUEUES);
	memset(disk.nprepared, 0, sizeof(disk.nprepared));
	memset(disk.ndone, 0, sizeof(disk.ndone));
	disk.o = disk.next;
	disk.nq = be->p.nqueues;
	disk.nqueued = disk.working = 0;
	disk.hold = disk.o.hold;
	disk.full = disk.stop = false;
	disk.credits = 0;
	disk.gate_at = 0;
	disk.gate_shut = false;
	disk.reaped = disk.reaps = 0;
	be->direct = disk.o.direct;
	be->lbs = 512;
	pthread_mutex_init(&disk.lock, NULL);
	pthread_cond_init(&disk.work, NULL);
	pthread_cond_init(&disk.gate, NULL);
	for (i = 0; i < disk.nq; i++) {
		disk.efd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (disk.efd[i] < 0)
			return -errno;
	}
	return -pthread_create(&disk.thread, NULL, disk_thread, NULL);
}

static unsigned int at_disk(unsigned int q)
{
	unsigned int i, n = disk.ndone[q];

	for (i = 0; i < disk.nqueued; i++)
		n += disk.queued[i].q == q;
	return n;
}

static int disk_prep(struct blk_backend *be, unsigned int q, struct blk_io *io)
{
	int ret = 0;

	if (io->op == BLK_IO_READ || io->op == BLK_IO_WRITE)
		ret = blk_backend__bounce(be, io);
	if (ret)
		return ret;
	ck_assert_uint_lt(disk.nprepared[q], DEPTH);
	disk.prepared[q][disk.nprepared[q]++] = io;
	return 0;
}

static int disk_submit(struct blk_backend *be, unsigned int q)
{
	unsigned int i;

	pthread_mutex_lock(&disk.lock);
	if (disk.full && disk.nprepared[q]) {
		pthread_mutex_unlock(&disk.lock);
		return -EAGAIN;
	}
	/* the device never has more than a queue's depth out */
	ck_assert_uint_le(at_disk(q) + disk.nprepared[q], DEPTH);
	for (i = 0; i < disk.nprepared[q]; i++)
		disk.queued[disk.nqueued++] = (struct at_disk) {
			disk.prepared[q][i], q };
	disk.nprepared[q] = 0;
	if (disk.gate_at && disk.nqueued + disk.working >= disk.gate_at)
		disk.gate_shut = true;
	pthread_cond_signal(&disk.work);
	pthread_mutex_unlock(&disk.lock);
	return 0;
}

/*
 * A reap by anyone but the test's thread waits while the gate is shut,
 * at most 10 s so that a test that forgets to open it fails rather than
 * hangs.
 */
static void wait_at_gate(void)
{
	struct timespec end;

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += 10;
	while (disk.gate_shut && !pthread_equal(pthread_self(), disk.tester))
		if (pthread_cond_timedwait(&disk.gate, &disk.lock, &end))
			break;
}

static unsigned int disk_reap(struct blk_backend *be, unsigned int q)
{
	struct blk_io *done[DEPTH];
	unsigned int i, n;

	atomic_fetch_add(&disk.reaps, 1);
	pthread_mutex_lock(&disk.lock);
	wait_at_gate();
	n = disk.ndone[q];
	memcpy(done, disk.done[q], n * sizeof(done[0]));
	disk.ndone[q] = 0;
	pthread_mutex_unlock(&disk.lock);
	for (i = 0; i < n; i++) {
		be->p.complete(be->p.opaque, q, done[i], (int64_t)done[i]->len);
		atomic_fetch_add(&disk.reaped, 1);
	}
	return n;
}

static int disk_event_fd(struct blk_backend *be, unsigned int q)
{
	return disk.efd[q];
}

/*
 * The device is closed: requests still at the disk (a test that never
 * released them) end unreported, as a closed ring's would; their bounce
 * buffers go back.
 */
static void disk_stop(struct blk_backend *be)
{
	unsigned int q, i;

	pthread_mutex_lock(&disk.lock);
	disk.stop = true;
	pthread_cond_signal(&disk.work);
	pthread_mutex_unlock(&disk.lock);
	pthread_join(disk.thread, NULL);
	pthread_cond_destroy(&disk.gate);
	for (i = 0; i < disk.nqueued; i++)
		blk_backend__finish(be, disk.queued[i].io, -EIO, false);
	for (q = 0; q < disk.nq; q++) {
		for (i = 0; i < disk.nprepared[q]; i++)
			blk_backend__finish(be, disk.prepared[q][i], -EIO, false);
		for (i = 0; i < disk.ndone[q]; i++)
			blk_backend__finish(be, disk.done[q][i], -EIO, false);
		close(disk.efd[q]);
	}
	pthread_mutex_destroy(&disk.lock);
	pthread_cond_destroy(&disk.work);
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
