// SPDX-License-Identifier: GPL-2.0-only
/*
 * The "fast" and "locked" backends: gpin.ko's asynchronous direct I/O.
 *
 * Each device queue opens /dev/gpin itself (one file per queue: each file
 * has its own completion list and eventfd) and has a thread, blkN-qM,
 * that sleeps on that eventfd.  submit() turns a READ/WRITE into a
 * struct gpin_dio whose iovecs point straight at guest RAM; kick() hands
 * the batch to GPIN_IOC_DIO_SUBMIT, which pins the pages (the module's
 * lockless walk, or mmap_read_lock + get_user_pages) and starts the I/O in
 * the calling thread - the vCPU that notified the queue, by default: many
 * threads of one process pinning at once, the seed's workload.  The queue
 * thread reaps with GPIN_IOC_DIO_REAP and completes the requests.
 *
 * What the module does not do goes to an io_uring backend ("kernel") that
 * shares the fd: FLUSH, DISCARD and WRITE_ZEROES (rare, and the same code
 * as pin=kernel), READ/WRITE larger than GPIN_DIO_MAX_BYTES (the guest may
 * raise max_sectors_kb), and with io=iothread the ioeventfd watch.
 *
 * The module counts per mode, not per file: the backend reads the
 * counters when it starts and when it stops and prints the difference
 * (requests, fallbacks to the locked path, mmap_lock wait).  Other users
 * of the same mode in between are counted too.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "libgpin.h"

#include "devices/blk_backend.h"

struct gpin_pending {
	struct gpin_dio d;
	struct iovec biov;		/* the bounce buffer, when there is one */
};

struct failed_io {
	struct blk_io *io;
	int err;
};

struct gpin_queue {
	struct blk_backend *be;
	unsigned int idx;
	struct libgpin *g;
	int efd;			/* completions, and stop / failed wake-ups */
	pthread_t thread;
	bool thread_ok;
	bool stop;
	bool inner_kick;		/* something went to the io_uring side */
	/* Prepared by submit(), sent by kick(); the queue's lock held. */
	unsigned int npending;
	struct gpin_pending *pending;
	/*
	 * Requests the module refused at submit, completed by the thread:
	 * kick() fills failed[cur] under @lock, the thread swaps @cur and
	 * completes the other array without it.
	 */
	pthread_mutex_t lock;
	unsigned int nfailed, cur;
	struct failed_io *failed[2];
	struct gpin_dio_event *events;
};

struct gpin_backend {
	enum gpin_mode mode;
	struct blk_backend inner;	/* io_uring on the same fd */
	bool inner_ok;
	struct gpin_stats st0;		/* the module's counters at start */
	bool st0_ok;
	unsigned int nq;
	struct gpin_queue q[];
};

static struct gpin_backend *gpin_be(struct blk_backend *be)
{
	return be->priv;
}

/* Whether the module takes @io; the rest goes to io_uring. */
static bool for_module(const struct blk_io *io)
{
	return (io->op == BLK_IO_READ || io->op == BLK_IO_WRITE) &&
	       io->len <= GPIN_DIO_MAX_BYTES && io->niov <= GPIN_DIO_MAX_SEGS;
}

static int gpin_submit(struct blk_backend *be, unsigned int q,
		       struct blk_io *io)
{
	struct gpin_backend *gb = gpin_be(be);
	struct gpin_queue *gq = &gb->q[q];
	struct gpin_pending *pd;
	const struct iovec *iov = io->iov;
	unsigned int niov = io->niov;
	int ret;

	if (!for_module(io)) {
		ret = gb->inner.ops->submit(&gb->inner, q, io);
		if (!ret)
			gq->inner_kick = true;
		return ret;
	}
	if (gq->npending == be->p.queue_depth)
		return -EBUSY;		/* more than the queue holds: a bug */
	ret = blk_backend__bounce(be, io);
	if (ret)
		return ret;
	pd = &gq->pending[gq->npending++];
	if (io->bounce) {
		pd->biov = (struct iovec) { io->bounce, io->len };
		iov = &pd->biov;
		niov = 1;
	}
	libgpin_dio_prep(&pd->d, be->fd,
		      io->op == BLK_IO_WRITE ? GPIN_DIO_WRITE : GPIN_DIO_READ,
		      io->offset, iov, niov, gb->mode, (uintptr_t)io);
	return 0;
}

/* A request the module did not start: the queue thread completes it. */
static void defer_failure(struct gpin_queue *gq, struct blk_io *io, int err)
{
	pthread_mutex_lock(&gq->lock);
	gq->failed[gq->cur][gq->nfailed++] = (struct failed_io) { io, err };
	pthread_mutex_unlock(&gq->lock);
}

static void gpin_kick(struct blk_backend *be, unsigned int q)
{
	struct gpin_backend *gb = gpin_be(be);
	struct gpin_queue *gq = &gb->q[q];
	unsigned int done = 0, tries = 0;
	bool failed = false;

	while (done < gq->npending) {
		unsigned int nr = gq->npending - done;
		int ret;

		if (nr > GPIN_DIO_MAX_BATCH)
			nr = GPIN_DIO_MAX_BATCH;
		ret = libgpin_dio_submit(gq->g, &gq->pending[done].d, nr);
		if (ret > 0) {
			done += ret;
			continue;
		}
		if ((errno == EAGAIN || errno == EINTR) && ++tries < 1000)
			continue;
		/* The first request of the batch has an error of its own. */
		defer_failure(gq, (struct blk_io *)(uintptr_t)
			      gq->pending[done].d.user_data, errno);
		failed = true;
		done++;
	}
	gq->npending = 0;
	if (failed)
		eventfd_write(gq->efd, 1);
	if (gq->inner_kick) {
		gq->inner_kick = false;
		gb->inner.ops->kick(&gb->inner, q);
	}
}

/* Completes what kick() could not start; returns how many. */
static unsigned int complete_failed(struct gpin_queue *gq)
{
	struct blk_backend *be = gq->be;
	struct failed_io *f;
	unsigned int i, n;

	pthread_mutex_lock(&gq->lock);
	n = gq->nfailed;
	f = gq->failed[gq->cur];
	gq->cur ^= 1;
	gq->nfailed = 0;
	pthread_mutex_unlock(&gq->lock);
	for (i = 0; i < n; i++)
		be->p.complete(be->p.opaque, gq->idx, f[i].io,
			       blk_backend__finish(be, f[i].io, -f[i].err));
	return n;
}

static void *queue_thread(void *arg)
{
	struct gpin_queue *gq = arg;
	struct blk_backend *be = gq->be;
	char name[16];

	snprintf(name, sizeof(name), "blk%u-q%u", be->p.disk_index, gq->idx);
	pthread_setname_np(pthread_self(), name);
	for (;;) {
		unsigned int n = 0;
		eventfd_t v;
		int ret, i;

		if (eventfd_read(gq->efd, &v) && errno == EINTR)
			continue;
		if (__atomic_load_n(&gq->stop, __ATOMIC_ACQUIRE))
			break;
		n += complete_failed(gq);
		/*
		 * Reap until empty: one eventfd read may stand for many.  A
		 * short reap emptied the list; what completes after it
		 * signals the eventfd again, so no second call to see 0.
		 */
		do {
			ret = libgpin_dio_reap(gq->g, gq->events,
					    GPIN_DIO_MAX_BATCH, NULL);
			if (ret <= 0)
				break;
			for (i = 0; i < ret; i++) {
				struct blk_io *io = (struct blk_io *)(uintptr_t)
						    gq->events[i].user_data;

				be->p.complete(be->p.opaque, gq->idx, io,
					       blk_backend__finish(be, io,
						       gq->events[i].result));
			}
			n += ret;
		} while (ret == GPIN_DIO_MAX_BATCH);
		if (ret < 0)
			fprintf(stderr, "gpin-vmm: %s: GPIN_IOC_DIO_REAP: %s\n",
				name, libgpin_strerror(errno));
		if (n)
			be->p.batch_done(be->p.opaque, gq->idx);
	}
	return NULL;
}

/*
 * The module's counters for this backend's mode since start, as "blkN-gpin"
 * counters (module-wide: other users of the mode count too).  Pin
 * fallbacks are the fast path's lockless walk giving up; 0 is the goal.
 */
static void gpin_counters(struct blk_backend *be, counter_fn fn, void *opaque)
{
	struct gpin_backend *gb = gpin_be(be);
	const struct gpin_mode_stats *a, *b;
	struct gpin_stats st = { 0 };
	char dev[32];

	if (!gb || !gb->st0_ok || !gb->nq || libgpin_stats(gb->q[0].g, &st))
		return;
	a = &gb->st0.mode[gb->mode];
	b = &st.mode[gb->mode];
	snprintf(dev, sizeof(dev), "blk%u-gpin", be->p.disk_index);
	fn(opaque, dev, "dio_requests", b->dio_requests - a->dio_requests);
	fn(opaque, dev, "pin_calls", b->calls - a->calls);
	fn(opaque, dev, "pin_fallbacks", b->fallbacks - a->fallbacks);
	fn(opaque, dev, "mmap_lock_wait_us",
	   (b->lock_wait_ns - a->lock_wait_ns) / 1000);
}

/* The module's counters for this backend's mode since start, on stderr. */
static void print_module_stats(struct blk_backend *be)
{
	struct gpin_backend *gb = gpin_be(be);
	const struct gpin_mode_stats *a = &gb->st0.mode[gb->mode], *b;
	struct gpin_stats st = { 0 };

	if (!gb->st0_ok || !gb->nq || libgpin_stats(gb->q[0].g, &st))
		return;
	b = &st.mode[gb->mode];
	fprintf(stderr, "gpin-vmm: blk%u: gpin.ko pin=%s: %llu DIO requests, "
		"%llu pin calls, %llu fallbacks, %llu us mmap_lock wait\n",
		be->p.disk_index, libgpin_mode_name(gb->mode),
		(unsigned long long)(b->dio_requests - a->dio_requests),
		(unsigned long long)(b->calls - a->calls),
		(unsigned long long)(b->fallbacks - a->fallbacks),
		(unsigned long long)((b->lock_wait_ns - a->lock_wait_ns) / 1000));
}

static void gpin_stop(struct blk_backend *be)
{
	struct gpin_backend *gb = gpin_be(be);
	unsigned int i;

	if (!gb)
		return;
	print_module_stats(be);
	for (i = 0; i < gb->nq; i++) {
		struct gpin_queue *gq = &gb->q[i];

		if (gq->thread_ok) {
			__atomic_store_n(&gq->stop, true, __ATOMIC_RELEASE);
			eventfd_write(gq->efd, 1);
			pthread_join(gq->thread, NULL);
		}
		if (gq->g)
			libgpin_close(gq->g);
		if (gq->efd >= 0)
			close(gq->efd);
		pthread_mutex_destroy(&gq->lock);
		free(gq->pending);
		free(gq->failed[0]);
		free(gq->failed[1]);
		free(gq->events);
	}
	if (gb->inner_ok)
		gb->inner.ops->stop(&gb->inner);
	free(gb);
	be->priv = NULL;
}

static int queue_init(struct blk_backend *be, struct gpin_queue *gq)
{
	unsigned int depth = be->p.queue_depth;

	gq->g = libgpin_open();
	if (!gq->g)
		return -errno;
	gq->efd = eventfd(0, EFD_CLOEXEC);
	if (gq->efd < 0)
		return -errno;
	if (libgpin_set_eventfd(gq->g, gq->efd))
		return -errno;
	gq->pending = calloc(depth, sizeof(*gq->pending));
	gq->failed[0] = calloc(depth, sizeof(*gq->failed[0]));
	gq->failed[1] = calloc(depth, sizeof(*gq->failed[1]));
	gq->events = calloc(GPIN_DIO_MAX_BATCH, sizeof(*gq->events));
	if (!gq->pending || !gq->failed[0] || !gq->failed[1] || !gq->events)
		return -ENOMEM;
	return -pthread_create(&gq->thread, NULL, queue_thread, gq);
}

static int gpin_start_mode(struct blk_backend *be, enum gpin_mode mode)
{
	unsigned int nq = be->p.nqueues, i;
	struct gpin_backend *gb;
	int ret = 0;

	/* The module always does IOCB_DIRECT: a buffered fallback won't do. */
	if (!be->direct) {
		fprintf(stderr, "gpin-vmm: %s: pin=%s needs a backing that "
			"takes O_DIRECT\n", be->p.path, libgpin_mode_name(mode));
		return -EOPNOTSUPP;
	}
	gb = calloc(1, sizeof(*gb) + nq * sizeof(gb->q[0]));
	if (!gb)
		return -ENOMEM;
	be->priv = gb;
	gb->mode = mode;
	gb->nq = nq;
	for (i = 0; i < nq; i++) {
		gb->q[i].efd = -1;
		pthread_mutex_init(&gb->q[i].lock, NULL);
	}
	gb->inner = *be;
	gb->inner.ops = &blk_backend_kernel_ops;
	gb->inner.priv = NULL;
	ret = gb->inner.ops->start(&gb->inner);
	gb->inner_ok = !ret;
	for (i = 0; i < nq && !ret; i++) {
		struct gpin_queue *gq = &gb->q[i];

		gq->be = be;
		gq->idx = i;
		ret = queue_init(be, gq);
		gq->thread_ok = !ret;
	}
	if (!ret)
		gb->st0_ok = !libgpin_stats(gb->q[0].g, &gb->st0);
	if (ret) {
		if (ret == -ENOENT)
			fprintf(stderr, "gpin-vmm: %s: pin=%s: no %s (gpin.ko "
				"not loaded); pin=kernel works without it\n",
				be->p.path, libgpin_mode_name(mode),
				GPIN_DEVICE_PATH);
		gpin_stop(be);
	}
	return ret;
}

static int gpin_start_fast(struct blk_backend *be)
{
	return gpin_start_mode(be, GPIN_MODE_FAST);
}

static int gpin_start_locked(struct blk_backend *be)
{
	return gpin_start_mode(be, GPIN_MODE_LOCKED);
}

static int gpin_watch(struct blk_backend *be, unsigned int q, int efd)
{
	struct gpin_backend *gb = gpin_be(be);

	return gb->inner.ops->watch(&gb->inner, q, efd);
}

const struct blk_backend_ops blk_backend_gpin_fast_ops = {
	.name = "fast",
	.start = gpin_start_fast,
	.submit = gpin_submit,
	.kick = gpin_kick,
	.watch = gpin_watch,
	.stop = gpin_stop,
	.counters = gpin_counters,
};

const struct blk_backend_ops blk_backend_gpin_locked_ops = {
	.name = "locked",
	.start = gpin_start_locked,
	.submit = gpin_submit,
	.kick = gpin_kick,
	.watch = gpin_watch,
	.stop = gpin_stop,
	.counters = gpin_counters,
};
