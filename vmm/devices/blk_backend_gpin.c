// SPDX-License-Identifier: GPL-2.0-only
/*
 * The "fast", "locked" and "registered" backends: gpin.ko's asynchronous
 * direct I/O.
 *
 * Each device queue opens /dev/gpin itself (one file per queue: each file
 * has its own completion list) and has an io_uring on the same fd for
 * what the module does not do: FLUSH, DISCARD and WRITE_ZEROES (rare, and
 * the same code as pin=kernel) and READ/WRITE larger than gpin.ko takes
 * (GPIN_DIO_MAX_BYTES; the guest may raise max_sectors_kb).  The choice
 * is made per request, in prep().  Both the module and the ring signal
 * the queue's one eventfd, so the queue's thread sleeps on one thing.
 *
 * prep() turns a READ/WRITE into a struct gpin_dio whose iovecs point
 * straight at guest RAM; submit() hands the batch to GPIN_IOC_DIO_SUBMIT,
 * which pins the pages (the module's lockless walk, or mmap_read_lock +
 * pin_user_pages) and starts the I/O on the calling thread - the queue's
 * owner: the vCPU that notified an idle queue, or the queue's thread at
 * depth.  Many threads of one process pinning at once: the seed's
 * workload.  reap() takes the completions with GPIN_IOC_DIO_REAP.
 *
 * pin=registered is the same backend with p.pinned_ram, the guest RAM the
 * VM pinned once at start (vm_pinned_ram.h): prep() marks a request on
 * guest RAM GPIN_DIO_PINNED, and the module does no pin work for it.
 * What is not inside one of those pins (a bounce buffer, a buffer across
 * two of them) is pinned per request as with pin=fast.
 *
 * The counters are the queues' files' own (GPIN_STATS_FILE), in the mode
 * the backend pins with; a GPIN_DIO_PINNED request counts under the mode
 * its RAM was pinned in, GPIN_MODE_FAST, with no pin call.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "libgpin.h"

#include "devices/blk_backend.h"
#include "devices/blk_uring.h"
#include "log.h"
#include "vm_pinned_ram.h"

struct gpin_pending {
	struct gpin_dio d;
	struct iovec biov;		/* the bounce buffer, when there is one */
	bool bounced;
};

struct gpin_queue {
	struct blk_uring u;		/* what the module does not take */
	struct libgpin *g;
	int efd;			/* completions of both */
	/* Prepared: [sent, npending) still to go to the module. */
	unsigned int npending, sent;
	struct gpin_pending *pending;
	unsigned int module_inflight;	/* submitted, not reaped */
	bool reap_reported;
	struct gpin_dio_event *events;
};

struct gpin_backend {
	enum gpin_mode mode;
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

static void point_at_bounce(struct gpin_pending *pd)
{
	pd->d.iov = (uintptr_t)&pd->biov;
}

/*
 * pin=registered: a request on guest RAM names the VM's pins instead of
 * pinning.  A bounce buffer is not guest RAM, and no one pin holds a
 * buffer that crosses from one into the next: those pin as pin=fast.
 */
static void use_registered(const struct blk_backend *be,
			   struct gpin_pending *pd, const struct blk_io *io)
{
	const struct vm_pinned_ram *pr = be->p.pinned_ram;

	if (pr && !pd->bounced && vm_pinned_ram__holds(pr, io->iov, io->niov))
		libgpin_dio_use_pinned(&pd->d, vm_pinned_ram__file(pr));
}

static int gpin_prep(struct blk_backend *be, unsigned int q,
		     struct blk_io *io)
{
	struct gpin_backend *gb = gpin_be(be);
	struct gpin_queue *gq = &gb->q[q];
	struct gpin_pending *pd;
	int ret;

	if (!for_module(io))
		return blk_uring__prep(be, &gq->u, io);
	if (gq->npending == be->p.queue_depth)
		return -EBUSY;		/* more than the queue holds: a bug */
	ret = blk_backend__bounce(be, io);
	if (ret)
		return ret;
	pd = &gq->pending[gq->npending++];
	libgpin_dio_prep(&pd->d, be->fd,
		      io->op == BLK_IO_WRITE ? GPIN_DIO_WRITE : GPIN_DIO_READ,
		      io->offset, io->iov, io->niov, gb->mode, (uintptr_t)io);
	pd->bounced = io->bounce;
	if (pd->bounced) {
		pd->biov = (struct iovec) { io->bounce, io->len };
		pd->d.nr_segs = 1;
		point_at_bounce(pd);
	}
	use_registered(be, pd, io);
	return 0;
}

/*
 * What the module could not take yet moves to the front; a bounced
 * request's iovec lives in its entry, so its pointer moves with it.
 */
static void keep_unsent(struct gpin_queue *gq)
{
	unsigned int i, left = gq->npending - gq->sent;

	memmove(gq->pending, gq->pending + gq->sent,
		left * sizeof(*gq->pending));
	for (i = 0; i < left; i++)
		if (gq->pending[i].bounced)
			point_at_bounce(&gq->pending[i]);
	gq->npending = left;
	gq->sent = 0;
}

static int submit_to_module(struct blk_backend *be, unsigned int q,
			    struct gpin_queue *gq)
{
	int ret = 0;

	while (gq->sent < gq->npending) {
		unsigned int nr = gq->npending - gq->sent;
		struct blk_io *io;
		int n;

		if (nr > GPIN_DIO_MAX_BATCH)
			nr = GPIN_DIO_MAX_BATCH;
		n = libgpin_dio_submit(gq->g, &gq->pending[gq->sent].d, nr);
		if (n > 0) {
			gq->sent += n;
			gq->module_inflight += n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) {
			/* GPIN_DIO_MAX_INFLIGHT unreaped: after a reap */
			ret = -EAGAIN;
			break;
		}
		/* The first request of the batch has an error of its own. */
		io = (struct blk_io *)(uintptr_t)gq->pending[gq->sent++].d.user_data;
		be->p.complete(be->p.opaque, q, io, -errno);
	}
	if (gq->sent == gq->npending)
		gq->npending = gq->sent = 0;
	else
		keep_unsent(gq);
	return ret;
}

static int gpin_submit(struct blk_backend *be, unsigned int q)
{
	struct gpin_queue *gq = &gpin_be(be)->q[q];
	int a = blk_uring__submit(be, &gq->u, q);
	int b = submit_to_module(be, q, gq);

	return a ?: b;
}

static unsigned int reap_module(struct blk_backend *be, unsigned int q,
				struct gpin_queue *gq)
{
	unsigned int n = 0;
	int ret, i;

	/*
	 * Until a short batch: what completes after it signals the eventfd
	 * again, so the next pass looks then.
	 */
	do {
		ret = libgpin_dio_reap(gq->g, gq->events, GPIN_DIO_MAX_BATCH, NULL);
		for (i = 0; i < ret; i++)
			be->p.complete(be->p.opaque, q,
				       (struct blk_io *)(uintptr_t)
				       gq->events[i].user_data,
				       gq->events[i].result);
		if (ret > 0) {
			n += ret;
			gq->module_inflight -= ret;
		}
	} while (ret == GPIN_DIO_MAX_BATCH && gq->module_inflight);
	if (ret < 0 && !gq->reap_reported) {
		gq->reap_reported = true;
		pr_err("blk%u-q%u: GPIN_IOC_DIO_REAP: %s "
			"(reported once)", be->p.disk_index, q,
			libgpin_strerror(errno));
	}
	return n;
}

static unsigned int gpin_reap(struct blk_backend *be, unsigned int q)
{
	struct gpin_queue *gq = &gpin_be(be)->q[q];
	unsigned int n = blk_uring__reap(be, &gq->u, q);

	/* No system call for a queue with nothing at the module. */
	if (gq->module_inflight)
		n += reap_module(be, q, gq);
	return n;
}

static int gpin_event_fd(struct blk_backend *be, unsigned int q)
{
	return gpin_be(be)->q[q].efd;
}

/*
 * This disk's counters from gpin.ko: the sum over its queues' files, each
 * counting its own work since it was opened (GPIN_STATS_FILE), whatever
 * other VMs and processes do with the module.  False when one cannot be
 * read.
 */
static bool disk_counters(struct gpin_backend *gb, struct gpin_mode_stats *sum)
{
	struct gpin_stats st;
	unsigned int i;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < gb->nq; i++) {
		const struct gpin_mode_stats *m = &st.mode[gb->mode];

		if (!gb->q[i].g || libgpin_file_stats(gb->q[i].g, &st))
			return false;
		sum->dio_requests += m->dio_requests;
		sum->calls += m->calls;
		sum->fallbacks += m->fallbacks;
		sum->lock_wait_ns += m->lock_wait_ns;
	}
	return gb->nq > 0;
}

/*
 * As "blkN-gpin" counters.  Pin fallbacks are the fast path's lockless
 * walk giving up; 0 is the goal.
 */
static void gpin_counters(struct blk_backend *be, counter_fn fn, void *opaque)
{
	struct gpin_backend *gb = gpin_be(be);
	struct gpin_mode_stats m;
	char dev[32];

	if (!gb || !disk_counters(gb, &m))
		return;
	snprintf(dev, sizeof(dev), "blk%u-gpin", be->p.disk_index);
	fn(opaque, dev, "dio_requests", m.dio_requests);
	fn(opaque, dev, "pin_calls", m.calls);
	fn(opaque, dev, "pin_fallbacks", m.fallbacks);
	fn(opaque, dev, "mmap_lock_wait_us", m.lock_wait_ns / 1000);
}

/* The same on stderr, when the disk stops. */
static void print_disk_counters(struct blk_backend *be)
{
	struct gpin_backend *gb = gpin_be(be);
	struct gpin_mode_stats m;

	if (!disk_counters(gb, &m))
		return;
	pr_info("blk%u: gpin.ko pin=%s: %llu DIO requests, "
		"%llu pin calls, %llu fallbacks, %llu us mmap_lock wait",
		be->p.disk_index, blk_backend__pin_name(be),
		(unsigned long long)m.dio_requests,
		(unsigned long long)m.calls,
		(unsigned long long)m.fallbacks,
		(unsigned long long)(m.lock_wait_ns / 1000));
}

static void gpin_stop(struct blk_backend *be)
{
	struct gpin_backend *gb = gpin_be(be);
	unsigned int i;

	if (!gb)
		return;
	print_disk_counters(be);
	for (i = 0; i < gb->nq; i++) {
		struct gpin_queue *gq = &gb->q[i];

		blk_uring__exit(&gq->u);
		if (gq->g)
			libgpin_close(gq->g);
		if (gq->efd >= 0)
			close(gq->efd);
		free(gq->pending);
		free(gq->events);
	}
	free(gb);
	be->priv = NULL;
}

static int queue_init(struct blk_backend *be, struct gpin_queue *gq)
{
	unsigned int depth = be->p.queue_depth;
	int ret;

	gq->g = libgpin_open();
	if (!gq->g)
		return -errno;
	gq->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (gq->efd < 0)
		return -errno;
	if (libgpin_set_eventfd(gq->g, gq->efd))
		return -errno;
	ret = blk_uring__init(&gq->u, depth, gq->efd);
	if (ret)
		return ret;
	gq->pending = calloc(depth, sizeof(*gq->pending));
	gq->events = calloc(GPIN_DIO_MAX_BATCH, sizeof(*gq->events));
	if (!gq->pending || !gq->events)
		return -ENOMEM;
	return 0;
}

static int gpin_start(struct blk_backend *be)
{
	enum gpin_mode mode = be->p.gpin_mode;
	unsigned int nq = be->p.nqueues, i;
	struct gpin_backend *gb;
	int ret = 0;

	if (mode != GPIN_MODE_FAST && mode != GPIN_MODE_LOCKED)
		return -EINVAL;
	/* The module always does IOCB_DIRECT: a buffered fallback won't do. */
	if (!be->direct) {
		pr_err("%s: pin=%s needs a backing that takes O_DIRECT",
		       be->p.path, blk_backend__pin_name(be));
		return -EOPNOTSUPP;
	}
	gb = calloc(1, sizeof(*gb) + nq * sizeof(gb->q[0]));
	if (!gb)
		return -ENOMEM;
	be->priv = gb;
	gb->mode = mode;
	gb->nq = nq;
	for (i = 0; i < nq; i++)
		gb->q[i].efd = -1;
	for (i = 0; i < nq && !ret; i++)
		ret = queue_init(be, &gb->q[i]);
	if (ret) {
		if (ret == -ENOENT)
			pr_err("%s: pin=%s: no %s (gpin.ko "
				"not loaded); pin=kernel works without it",
				be->p.path, blk_backend__pin_name(be),
				GPIN_DEVICE_PATH);
		gpin_stop(be);
	}
	return ret;
}

static const char *gpin_pin_name(const struct blk_backend *be)
{
	if (be->p.pinned_ram)
		return "registered";
	return libgpin_mode_name(be->p.gpin_mode);
}

const struct blk_backend_ops blk_backend_gpin_ops = {
	.name = "gpin",
	.start = gpin_start,
	.prep = gpin_prep,
	.submit = gpin_submit,
	.reap = gpin_reap,
	.event_fd = gpin_event_fd,
	.stop = gpin_stop,
	.counters = gpin_counters,
	.pin_name = gpin_pin_name,
};
