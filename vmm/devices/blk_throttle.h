/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A disk's rate limits (--disk ...,iops=N,bps=N; libvirt's <iotune>
 * total_iops_sec / total_bytes_sec): a token bucket per limit and queue.
 * A request that finds too few tokens waits in the guest's ring, not in
 * the VMM: the queue stops taking chains until the bucket has refilled.
 * Pure (time comes in as an argument), so the tests drive the clock.
 */
#ifndef GPIN_BLK_THROTTLE_H
#define GPIN_BLK_THROTTLE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A token bucket kept as a time (GCRA): @tat is when the bucket would be
 * full again.  A request is let through while the bucket holds what it
 * costs - or is full, for a request larger than the bucket, which then
 * owes the rest: @tat moves by the full cost either way.  Integer
 * nanoseconds, so no fraction of a token is lost between calls.
 */
struct blk_bucket {
	uint64_t rate;		/* tokens a second; 0: no limit */
	uint64_t burst;		/* the bucket's size, in tokens */
	uint64_t tat;		/* ns: when the bucket is full again */
};

struct blk_throttle {
	struct blk_bucket ops;	/* requests */
	struct blk_bucket bytes;	/* READ/WRITE data */
};

/*
 * Limits of @iops requests and @bps bytes a second (0: none), each with a
 * burst of a tenth of a second's worth (at least one request, or
 * @max_request bytes), starting full at @now_ns.
 */
void blk_throttle__init(struct blk_throttle *t, uint64_t iops, uint64_t bps,
			uint64_t max_request, uint64_t now_ns);

static inline bool blk_throttle__enabled(const struct blk_throttle *t)
{
	return t->ops.rate || t->bytes.rate;
}

/*
 * A request of @bytes data bytes (0 for FLUSH, DISCARD, WRITE_ZEROES) at
 * @now_ns: true and its tokens taken, or false and *@wait_ns says how
 * long until it would pass.
 */
bool blk_throttle__admit(struct blk_throttle *t, uint64_t bytes,
			 uint64_t now_ns, uint64_t *wait_ns);

#endif /* GPIN_BLK_THROTTLE_H */
