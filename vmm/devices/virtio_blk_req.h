/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio-blk request parsing (virtio 1.x, section 5.2.6): a pure function
 * from a checked descriptor chain to a request, or to the status the
 * request must fail with.  No I/O, no device state: the unit tests and
 * the fuzz target call it on plain memory.
 */
#ifndef GPIN_VIRTIO_BLK_REQ_H
#define GPIN_VIRTIO_BLK_REQ_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include <linux/virtio_blk.h>

#include "virtio/virtqueue.h"

#define VIRTIO_BLK_SECTOR	512
#define VIRTIO_BLK_HDR_LEN	16	/* struct virtio_blk_outhdr */
#define VIRTIO_BLK_SEG_LEN	16	/* struct virtio_blk_discard_write_zeroes */
#define VIRTIO_BLK_MAX_SEGS	1	/* discard / write-zeroes segments */

/* What the device accepts; the parser checks requests against it. */
struct blk_limits {
	uint64_t capacity;		/* in 512-byte sectors */
	uint32_t blk_size;		/* logical block: 512, 4096, ... */
	bool ro;
	bool discard;			/* VIRTIO_BLK_F_DISCARD negotiated */
	bool write_zeroes;		/* VIRTIO_BLK_F_WRITE_ZEROES negotiated */
	uint32_t max_discard_sectors;
	uint32_t max_write_zeroes_sectors;
	uint32_t seg_max;		/* data segments of IN/OUT; 0: any */
	uint32_t size_max;		/* bytes per data segment; 0: any */
};

struct blk_req {
	uint32_t type;			/* VIRTIO_BLK_T_* */
	uint64_t offset;		/* bytes into the disk */
	uint64_t len;			/* data bytes, or bytes of the range */
	uint32_t flags;			/* WRITE_ZEROES: ..._FLAG_UNMAP */
	struct iovec *iov;		/* data buffers (IN, OUT, GET_ID) */
	unsigned int niov;
	uint8_t *status;		/* the status byte in guest memory */
};

/*
 * Parses @chain.  @iov must have room for chain->nbufs entries; the
 * request's data buffers are built there, trimmed of header and status.
 * Returns:
 *   VIRTIO_BLK_S_OK      @req is work for the backend (len may be 0)
 *   VIRTIO_BLK_S_IOERR   malformed, out of range, misaligned, more or
 *                        larger data segments than seg_max/size_max, or
 *                        a write to a read-only disk: write the status,
 *                        complete
 *   VIRTIO_BLK_S_UNSUPP  unknown or not negotiated type, unknown flags
 *   -EINVAL              no writable status byte at the end of the chain:
 *                        nothing can be reported, complete with 0 bytes
 * For the two error statuses req->status is set and req->len is 0.
 */
int virtio_blk__parse(const struct virtq_chain *chain,
		      const struct blk_limits *lim, struct iovec *iov,
		      struct blk_req *req);

/* Bytes the device writes into the chain for a completed request. */
uint32_t virtio_blk__used_len(const struct blk_req *req, uint8_t status);

#endif /* GPIN_VIRTIO_BLK_REQ_H */
