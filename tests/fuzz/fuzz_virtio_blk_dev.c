// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the whole virtio-blk device as a hostile guest reaches
 * it - the virtio-mmio transport (virtio/mmio.c, status.c), the ring
 * (virtqueue.c), the device (devices/virtio_blk.c: slots, GET_ID, the
 * service budget, reset with I/O in flight), the parser and the backend
 * helpers (bounce buffers and their budget) - over a fake backend that
 * completes requests only when the input says so.
 *
 * The input is a sequence of 8-byte guest actions: a register write or
 * read, a 32-bit write anywhere in guest RAM (rings, descriptors, headers:
 * also while requests are in flight), or the completion of a queue's
 * oldest request (success, or an error).  At the end every request still
 * out completes and the device is destroyed.
 *
 * What must hold, besides no crash and no sanitizer report: the device
 * never submits a request that is already in flight, never more than a
 * queue's depth, every buffer it hands the backend lies in guest RAM (the
 * fake backend writes each READ buffer whole), and every request
 * submitted completes exactly once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <linux/virtio_mmio.h>

#include "devices/blk_backend.h"
#include "devices/virtio_blk.h"
#include "virtio/mmio.h"

#define RAM_SIZE	0x10000
#define NQ		2
#define MMIO_BASE	0xd0000000ULL

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t ram[RAM_SIZE];
static char disk[] = "/dev/shm/fuzz_virtio_blk_dev.XXXXXX";

static void *translate(void *opaque, uint64_t gpa, uint64_t len)
{
	if (gpa > RAM_SIZE || len > RAM_SIZE - gpa)
		return NULL;
	return ram + gpa;
}

static void set_irq(void *opaque, unsigned int gsi, int level)
{
}

/* ---- the fake backend ------------------------------------------------- */

struct fake_queue {
	struct blk_io *prepared[VIRTIO_BLK_QUEUE_SIZE];	/* not submitted */
	unsigned int nprepared;
	struct blk_io *out[VIRTIO_BLK_QUEUE_SIZE];	/* at the "disk" */
	unsigned int n;
	struct blk_io *done[VIRTIO_BLK_QUEUE_SIZE];	/* finished, unreaped */
	int64_t res[VIRTIO_BLK_QUEUE_SIZE];
	unsigned int ndone;
	int efd;
};

static struct fake {
	struct fake_queue q[NQ];
	bool refuse_submit;		/* submit() keeps everything back */
	unsigned long submitted, completed;
} fk;

static int fake_start(struct blk_backend *be)
{
	unsigned int i;

	/* as on a disk that takes O_DIRECT: misaligned buffers bounce */
	be->direct = true;
	be->lbs = 512;
	for (i = 0; i < NQ; i++) {
		fk.q[i].efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (fk.q[i].efd < 0)
			abort();
	}
	return 0;
}

static bool in_flight(const struct fake_queue *q, const struct blk_io *io)
{
	unsigned int i;

	for (i = 0; i < q->nprepared; i++)
		if (q->prepared[i] == io)
			return true;
	for (i = 0; i < q->n; i++)
		if (q->out[i] == io)
			return true;
	for (i = 0; i < q->ndone; i++)
		if (q->done[i] == io)
			return true;
	return false;
}

static int fake_prep(struct blk_backend *be, unsigned int qi,
		     struct blk_io *io)
{
	struct fake_queue *q = &fk.q[qi];
	unsigned int j;
	int ret;

	if (qi >= NQ ||
	    q->nprepared + q->n + q->ndone == VIRTIO_BLK_QUEUE_SIZE)
		abort();	/* a queue that is not there, or past its depth */
	if (in_flight(q, io))
		abort();	/* a slot reused while in flight */
	if (io->op == BLK_IO_READ || io->op == BLK_IO_WRITE) {
		ret = blk_backend__bounce(be, io);
		if (ret)
			return ret;
		/* every byte of every buffer must be guest RAM */
		for (j = 0; j < io->niov; j++) {
			uint8_t *b = io->iov[j].iov_base;

			if (b < ram || io->iov[j].iov_len > RAM_SIZE ||
			    b + io->iov[j].iov_len > ram + RAM_SIZE)
				abort();
			if (io->op == BLK_IO_READ && !io->bounce)
				memset(b, 0xab, io->iov[j].iov_len);
		}
	}
	q->prepared[q->nprepared++] = io;
	fk.submitted++;
	return 0;
}

static int fake_submit(struct blk_backend *be, unsigned int qi)
{
	struct fake_queue *q = &fk.q[qi];

	if (fk.refuse_submit)
		return q->nprepared ? -EAGAIN : 0;
	memcpy(q->out + q->n, q->prepared, q->nprepared * sizeof(q->out[0]));
	q->n += q->nprepared;
	q->nprepared = 0;
	return 0;
}

static unsigned int fake_reap(struct blk_backend *be, unsigned int qi)
{
	struct fake_queue *q = &fk.q[qi];
	unsigned int i, n = q->ndone;

	q->ndone = 0;
	for (i = 0; i < n; i++) {
		fk.completed++;
		be->p.complete(be->p.opaque, qi, q->done[i], q->res[i]);
	}
	return n;
}

static int fake_event_fd(struct blk_backend *be, unsigned int qi)
{
	return fk.q[qi].efd;
}

/* Queue @qi's oldest request at the disk finishes; false when none. */
static bool fake_finish_one(unsigned int qi, bool fail)
{
	struct fake_queue *q = &fk.q[qi];
	struct blk_io *io;

	if (!q->n)
		return false;
	io = q->out[0];
	memmove(q->out, q->out + 1, --q->n * sizeof(q->out[0]));
	q->res[q->ndone] = fail ? -5 : (int64_t)io->len;
	q->done[q->ndone++] = io;
	return true;
}

/*
 * The device is being closed: what is still out ends now, as the kernel
 * would end it when the ring or the file is closed (stale by now).
 */
static void fake_stop(struct blk_backend *be)
{
	unsigned int qi, i;

	for (qi = 0; qi < NQ; qi++) {
		struct fake_queue *q = &fk.q[qi];

		fake_submit(be, qi);
		while (fake_finish_one(qi, false))
			;
		for (i = 0; i < q->ndone; i++) {
			fk.completed++;
			blk_backend__finish(be, q->done[i], -EIO, false);
		}
		q->ndone = 0;
		close(q->efd);
	}
}

static const struct blk_backend_ops fake_ops = {
	.name = "fuzz",
	.start = fake_start,
	.prep = fake_prep,
	.submit = fake_submit,
	.reap = fake_reap,
	.event_fd = fake_event_fd,
	.stop = fake_stop,
};

/* ---- the guest ------------------------------------------------------- */

enum { A_WRITE_REG, A_READ_REG, A_WRITE_RAM, A_COMPLETE, A_KINDS };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd = mkstemp(disk);

	if (fd < 0 || ftruncate(fd, 1 << 20))
		abort();
	close(fd);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct virtq_mem mem = { .translate = translate };
	struct virtio_blk_params p = {
		.path = disk,
		.nqueues = NQ,
		.backend = &fake_ops,
		.quiet = true,
		.manual = true,
	};
	struct virtio_mmio *m;
	struct virtio_blk *blk;
	struct blk_backend *be;
	char err[256];
	size_t i;

	memset(ram, 0, sizeof(ram));
	memset(&fk, 0, sizeof(fk));
	blk = virtio_blk__create(&p, err, sizeof(err));
	if (!blk)
		abort();
	be = virtio_blk__backend(blk);
	m = virtio_mmio__create(virtio_blk__dev(blk), &mem, MMIO_BASE, 16,
				set_irq, NULL);
	if (!m)
		abort();
	for (i = 0; i + 8 <= size; i += 8) {
		const uint8_t *a = data + i;
		uint16_t off;
		uint32_t val;
		uint64_t v;

		memcpy(&off, a + 2, sizeof(off));
		memcpy(&val, a + 4, sizeof(val));
		v = val;
		switch (a[0] % A_KINDS) {
		case A_WRITE_REG:
			virtio_mmio__ops.write(m, off % (VIRTIO_MMIO_WINDOW - 3),
					       &v, 4);
			break;
		case A_READ_REG:
			virtio_mmio__ops.read(m, off % (VIRTIO_MMIO_WINDOW - 3),
					      &v, 4);
			break;
		case A_WRITE_RAM:
			memcpy(ram + off % (RAM_SIZE - 3), &val, 4);
			break;
		case A_COMPLETE:
			/*
			 * a[1]: bit 7 fail, bit 6 only the quiet timer
			 * (nothing finishes), bit 5 toggle a backend that
			 * keeps requests back; then the queue's thread
			 * wakes and serves the queue.
			 */
			if (a[1] & 0x20)
				fk.refuse_submit = !fk.refuse_submit;
			if (!(a[1] & 0x40))
				fake_finish_one(a[1] % NQ, a[1] & 0x80);
			virtio_blk__service(blk, a[1] % NQ, a[1] & 0x40);
			break;
		}
	}
	fk.refuse_submit = false;
	for (i = 0; i < NQ; i++) {
		virtio_blk__service(blk, i, false);
		while (fake_finish_one(i, false))
			virtio_blk__service(blk, i, false);
	}
	virtio_mmio__destroy(m);
	virtio_blk__destroy(blk);
	if (fk.completed != fk.submitted)
		abort();	/* a request lost or completed twice */
	/* what a seed reached (tests/fuzz/corpus-dev/make-seeds.py) */
	if (getenv("FUZZ_BLK_DEV_VERBOSE"))
		fprintf(stderr, "fuzz_virtio_blk_dev: %lu requests submitted\n",
			fk.submitted);
	return 0;
}
