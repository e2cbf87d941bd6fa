// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the split-ring walker and the virtio-blk request
 * parser, the two pieces of gpin-vmm that read what a guest wrote, driven
 * over plain memory exactly as the device drives them.
 *
 * The input is guest memory: a 64 KiB "RAM" whose first bytes choose the
 * queue size, the disk's limits and EVENT_IDX, followed by the available
 * ring, the descriptor table and the used ring packed back to back, so
 * that short inputs already reach every part of the walk.  Every chain
 * that comes out is checked against the invariants the device relies on
 * (buffers inside RAM, data inside the chain, used length within the
 * writable bytes), and the buffers are written the way the device writes
 * them, so AddressSanitizer sees any escape.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devices/virtio_blk_req.h"
#include "virtio/virtqueue.h"

#define RAM_SIZE	0x10000
#define AVAIL		0x8
#define MAX_Q		256

static uint64_t align(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct ram {
	uint8_t *base;
};

static void *translate(void *opaque, uint64_t gpa, uint64_t len)
{
	struct ram *r = opaque;

	if (gpa > RAM_SIZE || len > RAM_SIZE - gpa)
		return NULL;
	return r->base + gpa;
}

static int inside(const void *p, uint64_t len, const void *base, uint64_t size)
{
	const uint8_t *a = p, *b = base;

	return a >= b && a <= b + size && len <= (uint64_t)(b + size - a);
}

static void check_chain(const struct virtq_chain *c, uint16_t qsize,
			uint8_t *ram)
{
	uint64_t r = 0, w = 0;
	unsigned int i;

	if (c->nbufs > qsize || c->nreadable > c->nbufs)
		abort();
	for (i = 0; i < c->nbufs; i++) {
		if (!inside(c->bufs[i].addr, c->bufs[i].len, ram, RAM_SIZE))
			abort();
		if (c->bufs[i].writable != (i >= c->nreadable))
			abort();
		if (c->bufs[i].writable)
			w += c->bufs[i].len;
		else
			r += c->bufs[i].len;
	}
	if (r != c->readable_len || w != c->writable_len)
		abort();
}

/* The iov must lie in the chain's buffers of the right direction. */
static int iov_in_chain(const struct iovec *v, const struct virtq_chain *c,
			int writable)
{
	unsigned int i;

	for (i = 0; i < c->nbufs; i++)
		if (c->bufs[i].writable == writable &&
		    inside(v->iov_base, v->iov_len, c->bufs[i].addr,
			   c->bufs[i].len))
			return 1;
	return 0;
}

static void check_req(const struct virtq_chain *c, const struct blk_req *req,
		      int status)
{
	const struct virtq_buf *last = &c->bufs[c->nbufs - 1];
	int dev_writes = req->type == VIRTIO_BLK_T_IN ||
			 req->type == VIRTIO_BLK_T_GET_ID;
	uint64_t sum = 0;
	unsigned int i;

	if (status < 0)
		return;
	if (!inside(req->status, 1, last->addr, last->len) || !last->writable)
		abort();
	if (virtio_blk__used_len(req, status) > c->writable_len)
		abort();
	*req->status = status;
	if (status != VIRTIO_BLK_S_OK)
		return;
	for (i = 0; i < req->niov; i++) {
		if (!iov_in_chain(&req->iov[i], c, dev_writes))
			abort();
		if (dev_writes)
			memset(req->iov[i].iov_base, 0xa5, req->iov[i].iov_len);
		sum += req->iov[i].iov_len;
	}
	if ((req->type == VIRTIO_BLK_T_IN || req->type == VIRTIO_BLK_T_OUT ||
	     req->type == VIRTIO_BLK_T_GET_ID) && sum != req->len)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct virtq_buf bufs[MAX_Q];
	static struct iovec iov[MAX_Q];
	struct ram r = { .base = calloc(1, RAM_SIZE) };
	struct virtq_mem mem = { .translate = translate, .opaque = &r };
	struct blk_limits lim;
	uint16_t qsize;
	uint64_t desc, used;
	struct virtq vq;
	unsigned int n;

	if (!r.base || size < 4) {
		free(r.base);
		return 0;
	}
	memcpy(r.base, data, size < RAM_SIZE ? size : RAM_SIZE);
	qsize = 1u << (data[0] % 9);
	lim = (struct blk_limits) {
		.capacity = data[1] * 64ULL,
		.blk_size = data[2] & 1 ? 4096 : 512,
		.ro = data[2] & 2,
		.discard = data[2] & 4,
		.write_zeroes = data[2] & 8,
		.max_discard_sectors = data[3] * 8u,
		.max_write_zeroes_sectors = data[3] * 8u,
	};
	desc = align(AVAIL + virtq__avail_bytes(qsize), 16);
	used = align(desc + virtq__desc_bytes(qsize), 4);
	if (virtq__init(&vq, &mem, qsize, desc, AVAIL, used))
		abort();		/* the fixed layout is valid */
	virtq__set_event_idx(&vq, data[2] & 16);
	for (n = 0; n < 2u * qsize; n++) {
		struct virtq_chain c = { .bufs = bufs };
		struct blk_req req;
		int ret, st;

		ret = virtq__pop(&vq, &c);
		if (ret == 0)
			virtq__enable_notify(&vq);	/* as the device does */
		if (ret <= 0)
			break;
		check_chain(&c, qsize, r.base);
		st = virtio_blk__parse(&c, &lim, iov, &req);
		check_req(&c, &req, st);
		virtq__push(&vq, c.head, st < 0 ? 0 : virtio_blk__used_len(&req, st));
		(void)virtq__needs_interrupt(&vq);
	}
	free(r.base);
	return 0;
}
