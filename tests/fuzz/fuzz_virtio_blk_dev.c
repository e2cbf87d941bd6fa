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
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	struct blk_io *out[VIRTIO_BLK_QUEUE_SIZE];
	unsigned int n;
};

static struct fake {
	struct fake_queue q[NQ];
	unsigned long submitted, completed;
} fk;

static int fake_start(struct blk_backend *be)
{
	/* as on a disk that takes O_DIRECT: misaligned buffers bounce */
	be->direct = true;
	be->lbs = 512;
	return 0;
}

static int fake_submit(struct blk_backend *be, unsigned int qi,
		       struct blk_io *io)
{
	struct fake_queue *q = &fk.q[qi];
	unsigned int i, j;
	int ret;

	if (qi >= NQ || q->n == VIRTIO_BLK_QUEUE_SIZE)
		abort();	/* a queue that is not there, or past its depth */
	for (i = 0; i < q->n; i++)
		if (q->out[i] == io)
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
	q->out[q->n++] = io;
	fk.submitted++;
	return 0;
}

static void fake_kick(struct blk_backend *be, unsigned int q)
{
}

static int fake_watch(struct blk_backend *be, unsigned int q, int efd)
{
	return 0;
}

/* Completes queue @qi's oldest request; false when none is out. */
static bool fake_complete_one(struct blk_backend *be, unsigned int qi,
			      bool fail)
{
	struct fake_queue *q = &fk.q[qi];
	struct blk_io *io;

	if (!q->n)
		return false;
	io = q->out[0];
	memmove(q->out, q->out + 1, --q->n * sizeof(q->out[0]));
	fk.completed++;
	be->p.complete(be->p.opaque, qi, io,
		       blk_backend__finish(be, io, fail ? -5 : (int64_t)io->len));
	be->p.batch_done(be->p.opaque, qi);
	return true;
}

static void fake_complete_all(struct blk_backend *be)
{
	unsigned int qi;

	for (qi = 0; qi < NQ; qi++)
		while (fake_complete_one(be, qi, false))
			;
}

/* The device is being closed: what is still out completes now (stale). */
static void fake_stop(struct blk_backend *be)
{
	fake_complete_all(be);
}

static const struct blk_backend_ops fake_ops = {
	.name = "fuzz",
	.start = fake_start,
	.submit = fake_submit,
	.kick = fake_kick,
	.watch = fake_watch,
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
			fake_complete_one(be, a[1] % NQ, a[1] & 0x80);
			break;
		}
	}
	fake_complete_all(be);
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
