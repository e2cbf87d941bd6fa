// SPDX-License-Identifier: GPL-2.0-only
/*
 * The layout of a request (section 5.2.6): a 16-byte header the device
 * reads, then data (read by the device for OUT, DISCARD, WRITE_ZEROES;
 * written for IN, GET_ID), then one status byte the device writes.  The
 * specification lets the driver split these across descriptors as it
 * likes, so nothing here assumes one part per descriptor: the header and
 * the segments are gathered by byte offset, and the data is the readable
 * bytes after the header or the writable bytes before the status.
 */
#include <errno.h>
#include <string.h>

#include "devices/virtio_blk_req.h"

/* Copies @n bytes at byte @off of bufs[first, first + count). */
static bool gather(const struct virtq_chain *c, unsigned int first,
		   unsigned int count, uint64_t off, void *dst, size_t n)
{
	uint8_t *d = dst;
	unsigned int i;

	for (i = first; i < first + count && n; i++) {
		const struct virtq_buf *b = &c->bufs[i];
		size_t take;

		if (off >= b->len) {
			off -= b->len;
			continue;
		}
		take = b->len - off < n ? b->len - off : n;
		memcpy(d, (uint8_t *)b->addr + off, take);
		d += take;
		n -= take;
		off = 0;
	}
	return n == 0;
}

/* iov entries for bytes [off, off + len) of bufs[first, first + count). */
static unsigned int slice(const struct virtq_chain *c, unsigned int first,
			  unsigned int count, uint64_t off, uint64_t len,
			  struct iovec *iov)
{
	unsigned int i, n = 0;

	for (i = first; i < first + count && len; i++) {
		const struct virtq_buf *b = &c->bufs[i];
		uint64_t take;

		if (off >= b->len) {
			off -= b->len;
			continue;
		}
		take = b->len - off < len ? b->len - off : len;
		iov[n].iov_base = (uint8_t *)b->addr + off;
		iov[n].iov_len = take;
		n++;
		len -= take;
		off = 0;
	}
	return n;
}

/* [sector, sector + bytes / 512) inside the disk and block-aligned. */
static bool range_ok(const struct blk_limits *lim, uint64_t sector,
		     uint64_t bytes)
{
	uint64_t sectors = bytes / VIRTIO_BLK_SECTOR;
	uint64_t per_block = lim->blk_size / VIRTIO_BLK_SECTOR;

	if (bytes % lim->blk_size || (per_block && sector % per_block))
		return false;
	return sector <= lim->capacity && sectors <= lim->capacity - sector;
}

static int fail(struct blk_req *req, int status)
{
	req->len = 0;
	req->niov = 0;
	return status;
}

/*
 * The data segments within what the device advertised (SEG_MAX,
 * SIZE_MAX): together they bound a request, and with it what the backends
 * may pin or bounce for it, whatever the guest writes in its descriptors.
 */
static bool segments_ok(const struct blk_limits *lim,
			const struct blk_req *req)
{
	unsigned int i;

	if (lim->seg_max && req->niov > lim->seg_max)
		return false;
	for (i = 0; lim->size_max && i < req->niov; i++)
		if (req->iov[i].iov_len > lim->size_max)
			return false;
	return true;
}

static int parse_range_cmd(const struct virtq_chain *c,
			   const struct blk_limits *lim, uint64_t out_len,
			   uint64_t in_len, struct blk_req *req)
{
	bool discard = req->type == VIRTIO_BLK_T_DISCARD;
	struct virtio_blk_discard_write_zeroes seg;
	uint32_t max = discard ? lim->max_discard_sectors :
				 lim->max_write_zeroes_sectors;
	uint32_t allowed = discard ? 0 : VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP;

	if (!(discard ? lim->discard : lim->write_zeroes))
		return fail(req, VIRTIO_BLK_S_UNSUPP);
	if (lim->ro || in_len || !out_len || out_len % VIRTIO_BLK_SEG_LEN ||
	    out_len / VIRTIO_BLK_SEG_LEN > VIRTIO_BLK_MAX_SEGS)
		return fail(req, VIRTIO_BLK_S_IOERR);
	if (!gather(c, 0, c->nreadable, VIRTIO_BLK_HDR_LEN, &seg, sizeof(seg)))
		return fail(req, VIRTIO_BLK_S_IOERR);
	if (seg.flags & ~allowed)
		return fail(req, VIRTIO_BLK_S_UNSUPP);
	if (!seg.num_sectors || seg.num_sectors > max ||
	    !range_ok(lim, seg.sector,
		      (uint64_t)seg.num_sectors * VIRTIO_BLK_SECTOR))
		return fail(req, VIRTIO_BLK_S_IOERR);
	req->offset = seg.sector * VIRTIO_BLK_SECTOR;
	req->len = (uint64_t)seg.num_sectors * VIRTIO_BLK_SECTOR;
	req->flags = seg.flags;
	return VIRTIO_BLK_S_OK;
}

int virtio_blk__parse(const struct virtq_chain *c,
		      const struct blk_limits *lim, struct iovec *iov,
		      struct blk_req *req)
{
	const struct virtq_buf *last = c->nbufs ? &c->bufs[c->nbufs - 1] : NULL;
	unsigned int nwritable = c->nbufs - c->nreadable;
	struct virtio_blk_outhdr hdr;
	uint64_t out_len, in_len;

	memset(req, 0, sizeof(*req));
	req->iov = iov;
	if (!last || !last->writable || !last->len)
		return -EINVAL;
	req->status = (uint8_t *)last->addr + last->len - 1;

	if (c->readable_len < VIRTIO_BLK_HDR_LEN ||
	    !gather(c, 0, c->nreadable, 0, &hdr, sizeof(hdr)))
		return fail(req, VIRTIO_BLK_S_IOERR);
	req->type = hdr.type;
	out_len = c->readable_len - VIRTIO_BLK_HDR_LEN;
	in_len = c->writable_len - 1;

	switch (hdr.type) {
	case VIRTIO_BLK_T_IN:
		/* The used length (data + status) must fit in 32 bits. */
		if (out_len || in_len >= UINT32_MAX ||
		    !range_ok(lim, hdr.sector, in_len))
			return fail(req, VIRTIO_BLK_S_IOERR);
		req->len = in_len;
		req->niov = slice(c, c->nreadable, nwritable, 0, in_len, iov);
		break;
	case VIRTIO_BLK_T_OUT:
		if (lim->ro || in_len || !range_ok(lim, hdr.sector, out_len))
			return fail(req, VIRTIO_BLK_S_IOERR);
		req->len = out_len;
		req->niov = slice(c, 0, c->nreadable, VIRTIO_BLK_HDR_LEN,
				  out_len, iov);
		break;
	case VIRTIO_BLK_T_FLUSH:
		if (out_len || in_len)
			return fail(req, VIRTIO_BLK_S_IOERR);
		return VIRTIO_BLK_S_OK;
	case VIRTIO_BLK_T_GET_ID:
		if (out_len || !in_len)
			return fail(req, VIRTIO_BLK_S_IOERR);
		req->len = in_len < VIRTIO_BLK_ID_BYTES ? in_len :
							  VIRTIO_BLK_ID_BYTES;
		req->niov = slice(c, c->nreadable, nwritable, 0, req->len, iov);
		return VIRTIO_BLK_S_OK;
	case VIRTIO_BLK_T_DISCARD:
	case VIRTIO_BLK_T_WRITE_ZEROES:
		return parse_range_cmd(c, lim, out_len, in_len, req);
	default:
		return fail(req, VIRTIO_BLK_S_UNSUPP);
	}
	if (!segments_ok(lim, req))
		return fail(req, VIRTIO_BLK_S_IOERR);
	req->offset = hdr.sector * VIRTIO_BLK_SECTOR;
	return VIRTIO_BLK_S_OK;
}

uint32_t virtio_blk__used_len(const struct blk_req *req, uint8_t status)
{
	bool wrote_data = status == VIRTIO_BLK_S_OK &&
			  (req->type == VIRTIO_BLK_T_IN ||
			   req->type == VIRTIO_BLK_T_GET_ID);

	/* len <= the chain's writable bytes, which fit the used ring's u32. */
	return 1 + (wrote_data ? (uint32_t)req->len : 0);
}
