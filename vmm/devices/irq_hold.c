// SPDX-License-Identifier: GPL-2.0-only
/* Interrupt moderation of one virtio-blk queue: see irq_hold.h. */
#include "devices/irq_hold.h"

/* The averages below weigh the last sample 1/8, as TCP's srtt does. */
static uint64_t average(uint64_t avg, uint64_t sample)
{
	return avg ? (7 * avg + sample) / 8 : sample;
}

void irq_hold__init(struct irq_hold *h, long setting_us)
{
	*h = (struct irq_hold) { .setting_us = setting_us };
}

long irq_hold__bound_us(const struct irq_hold *h)
{
	uint64_t pace = IRQ_HOLD_AUTO_LOOKS * IRQ_HOLD_LOOK_GAPS *
			h->chain_gap_ns;
	long us;

	if (!irq_hold__auto(h))
		return h->setting_us;
	if (!h->lat_ns && !h->chain_gap_ns)
		return 0;
	us = (long)((h->lat_ns > pace ? h->lat_ns : pace) / 1000);
	if (us < IRQ_HOLD_AUTO_MIN_US)
		return IRQ_HOLD_AUTO_MIN_US;
	return us > IRQ_HOLD_AUTO_MAX_US ? IRQ_HOLD_AUTO_MAX_US : us;
}

void irq_hold__note_latency(struct irq_hold *h, uint64_t ns)
{
	if (ns)
		h->lat_ns = average(h->lat_ns, ns);
}

/*
 * How far apart the guest adds chains, per chain.  A gap is counted up
 * to the bound (auto: its ceiling): a guest that stopped for longer was
 * waiting, not adding.
 */
void irq_hold__note_chains(struct irq_hold *h, unsigned int taken,
			   uint64_t now)
{
	uint64_t gap, max = (irq_hold__auto(h) ? IRQ_HOLD_AUTO_MAX_US :
			     h->setting_us) * 1000ULL;

	if (!max || !taken)
		return;
	if (h->took_ns && now > h->took_ns) {
		gap = (now - h->took_ns) / taken;
		h->chain_gap_ns = average(h->chain_gap_ns, gap < max ? gap : max);
	}
	h->took_ns = now;
}

/* Microseconds between two looks of the hold in progress. */
static long look_us(const struct irq_hold *h)
{
	long us = (long)(IRQ_HOLD_LOOK_GAPS * h->chain_gap_ns / 1000);

	if (!h->chain_gap_ns)
		us = h->bound_us / IRQ_HOLD_LOOK_GAPS;
	if (us > h->bound_us / 2)
		us = h->bound_us / 2;
	return us < IRQ_HOLD_LOOK_MIN_US ? IRQ_HOLD_LOOK_MIN_US : us;
}

/*
 * Whether the batch is still growing (irq_hold.h): the guest added chains
 * since the last look, or requests are in flight and some completed since
 * then.  Between two looks the hold goes on whatever the ring says.
 */
static bool goes_on(struct irq_hold *h, uint64_t now, uint16_t avail,
		    uint16_t used, unsigned int inflight)
{
	bool growing;

	if (now - h->held_ns >= h->bound_us * 1000ULL)
		return false;
	if (now - h->look_ns < look_us(h) * 1000ULL)
		return true;
	growing = avail != h->look_avail ||
		  (inflight && used != h->look_used);
	if (!growing)
		return false;
	h->look_ns = now;
	h->look_avail = avail;
	h->look_used = used;
	return true;
}

/* The next look, or the bound if no look is due: an absolute time. */
static uint64_t next_look(const struct irq_hold *h, uint64_t now)
{
	long look = look_us(h) - (long)((now - h->look_ns) / 1000);
	long left = h->bound_us - (long)((now - h->held_ns) / 1000);
	long us = look > 0 && look < left ? look : left;

	return now + 1000ULL * (us > 0 ? us : 1);
}

bool irq_hold__wait(struct irq_hold *h, uint64_t now, uint16_t avail,
		    uint16_t used, unsigned int inflight, uint64_t *until_ns,
		    bool *began)
{
	*began = false;
	if (!h->held_ns) {
		long bound = irq_hold__bound_us(h);

		if (!bound)
			return false;
		if (h->skip) {
			h->skip--;
			return false;
		}
		h->bound_us = bound;
		h->held_ns = h->look_ns = now ? now : 1;
		h->look_avail = avail;
		h->look_used = used;
		*began = true;
	} else if (!goes_on(h, now, avail, used, inflight)) {
		return false;
	}
	*until_ns = next_look(h, now);
	return true;
}

void irq_hold__end(struct irq_hold *h, unsigned int covered,
		   unsigned int inflight)
{
	if (!h->held_ns)
		return;
	if (covered > 1 || inflight) {
		h->backoff = 0;
	} else {
		h->backoff = h->backoff ? 2 * h->backoff : 1;
		if (h->backoff > IRQ_HOLD_BACKOFF_MAX)
			h->backoff = IRQ_HOLD_BACKOFF_MAX;
	}
	h->skip = h->backoff;
	h->held_ns = 0;
}
