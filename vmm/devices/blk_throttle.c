// SPDX-License-Identifier: GPL-2.0-only
#include "devices/blk_throttle.h"

#define NS_PER_SEC	1000000000ULL

/* What @n tokens take to earn at @rate, rounded up: never above the rate. */
static uint64_t cost_ns(uint64_t n, uint64_t rate)
{
	return (uint64_t)(((unsigned __int128)n * NS_PER_SEC + rate - 1) / rate);
}

static void bucket_init(struct blk_bucket *b, uint64_t rate, uint64_t least,
			uint64_t now_ns)
{
	uint64_t burst = rate / 10;

	b->rate = rate;
	b->burst = burst > least ? burst : least;
	b->tat = now_ns;	/* full */
}

void blk_throttle__init(struct blk_throttle *t, uint64_t iops, uint64_t bps,
			uint64_t max_request, uint64_t now_ns)
{
	bucket_init(&t->ops, iops, 1, now_ns);
	bucket_init(&t->bytes, bps, max_request, now_ns);
}

/*
 * Whether a request costing @n passes now: the bucket holds @n tokens,
 * or is full when @n is more than it holds.  Else how long until it does.
 */
static bool bucket_ready(const struct blk_bucket *b, uint64_t n,
			 uint64_t now_ns, uint64_t *wait_ns)
{
	uint64_t need, owed, room;

	if (!b->rate || !n)
		return true;
	need = n < b->burst ? n : b->burst;
	owed = b->tat > now_ns ? b->tat - now_ns : 0;	/* tokens missing, in ns */
	room = cost_ns(b->burst, b->rate) - cost_ns(need, b->rate);
	if (owed <= room)
		return true;
	*wait_ns = owed - room;
	return false;
}

static void bucket_take(struct blk_bucket *b, uint64_t n, uint64_t now_ns)
{
	if (!b->rate || !n)
		return;
	if (b->tat < now_ns)
		b->tat = now_ns;	/* full: idle time is not banked */
	b->tat += cost_ns(n, b->rate);
}

bool blk_throttle__admit(struct blk_throttle *t, uint64_t bytes,
			 uint64_t now_ns, uint64_t *wait_ns)
{
	uint64_t w_ops = 0, w_bytes = 0;
	bool ok_ops = bucket_ready(&t->ops, 1, now_ns, &w_ops);
	bool ok_bytes = bucket_ready(&t->bytes, bytes, now_ns, &w_bytes);

	if (!ok_ops || !ok_bytes) {
		*wait_ns = w_ops > w_bytes ? w_ops : w_bytes;
		return false;
	}
	bucket_take(&t->ops, 1, now_ns);
	bucket_take(&t->bytes, bytes, now_ns);
	return true;
}
