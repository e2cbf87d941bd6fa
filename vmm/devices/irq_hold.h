/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Interrupt moderation of one virtio-blk queue (--disk ...,irq_hold=),
 * as a NIC's or an NVMe controller's interrupt coalescing.
 *
 * Each interrupt costs the guest an injection, an EOI exit and a pass
 * through its handler.  When the host completes faster than the guest
 * submits, a guest at depth still sees every request complete before it
 * adds the next, takes one interrupt per request and never gets more than
 * one out: the speed of the host keeps the guest at qd1.  Held, the first
 * completion lets the guest carry on adding chains (the queue keeps
 * notifications off meanwhile, and its thread looks on a timer), their
 * completions join it, and one interrupt covers the batch.
 *
 * A hold ends at its bound from its first completion at the latest, or as
 * soon as a look finds the batch no longer growing: the guest added
 * nothing since the last look, and either nothing is in flight or nothing
 * completed since then - the guest is waiting for this interrupt.  So
 * requests merely in flight do not keep a hold (one stuck at the disk
 * would hold every other completion until the bound), while completions
 * that keep coming do, which is what batches a guest whose whole depth is
 * out.  The
 * looks are IRQ_HOLD_LOOK_GAPS of the guest's usual gaps between chains
 * apart (irq_hold__note_chains()), so the rule fits a guest under TCG,
 * hundreds of microseconds between its requests, and one on hardware, a
 * few: a fixed look either ends holds while the guest is still adding or
 * idles the queue long after it stopped.  A guest at qd1 always waits: a
 * hold that covered one completion with nothing else in flight makes the
 * next 1, 2, 4 ... up to IRQ_HOLD_BACKOFF_MAX interrupts go unheld, so
 * qd1 pays a look on one request in that many once it has settled.
 *
 * The bound: irq_hold=US holds at most US microseconds, a figure that
 * fits one disk (4000 suits the rig's TCG guest and would be a 4 ms tail
 * on an NVMe disk).  irq_hold=auto, the default, takes it from what the
 * queue shows: the longer of its recent completion latency
 * (irq_hold__note_latency()) and IRQ_HOLD_AUTO_LOOKS looks at the guest's
 * pace, clamped to IRQ_HOLD_AUTO_MIN_US..IRQ_HOLD_AUTO_MAX_US.  A hold
 * exists to gather the guest's next chains, so it must outlast a few of
 * its gaps (the completion latency alone failed where holds pay most: a
 * host faster than its guest completes in a fraction of the guest's gap,
 * and holds bounded by it ended before the guest added a second chain,
 * docs/results/e2e-defaults.md); it need not outlast a request much.
 * No hold before the queue has shown either.  irq_hold=0: never.
 *
 * Pure: the queue passes the time, its ring's avail and used indices,
 * what is in flight and what a hold covered; it keeps the timer and the
 * wake-ups.
 * Used by the queue's owner only.
 */
#ifndef GPIN_IRQ_HOLD_H
#define GPIN_IRQ_HOLD_H

#include <stdbool.h>
#include <stdint.h>

/* irq_hold=auto */
#define IRQ_HOLD_AUTO		(-1L)
#define IRQ_HOLD_AUTO_MIN_US	20
#define IRQ_HOLD_AUTO_MAX_US	4000
/* irq_hold=auto: a hold lasts at least this many looks */
#define IRQ_HOLD_AUTO_LOOKS	5
/* Looks are this many of the guest's gaps between chains apart ... */
#define IRQ_HOLD_LOOK_GAPS	4
/* ... and at least this far apart. */
#define IRQ_HOLD_LOOK_MIN_US	10
#define IRQ_HOLD_BACKOFF_MAX	256

struct irq_hold {
	long setting_us;	/* irq_hold=: IRQ_HOLD_AUTO, 0 or the bound */
	/* the hold in progress */
	uint64_t held_ns;	/* since (0: none) */
	long bound_us;		/* its bound */
	uint64_t look_ns;	/* the last look at the ring */
	uint16_t look_avail;	/* the guest's avail index then */
	uint16_t look_used;	/* and the used index */
	/* what the queue showed */
	uint64_t lat_ns;	/* completion latency, averaged */
	uint64_t took_ns;	/* a pass last took chains */
	uint64_t chain_gap_ns;	/* between two chains, averaged */
	unsigned int skip;	/* interrupts to let through unheld */
	unsigned int backoff;	/* what the last vain hold set @skip to */
};

void irq_hold__init(struct irq_hold *h, long setting_us);

/* Whether holds may happen at all (irq_hold= not 0). */
static inline bool irq_hold__enabled(const struct irq_hold *h)
{
	return h->setting_us != 0;
}

static inline bool irq_hold__auto(const struct irq_hold *h)
{
	return h->setting_us == IRQ_HOLD_AUTO;
}

/* Whether an interrupt is held now. */
static inline bool irq_hold__held(const struct irq_hold *h)
{
	return h->held_ns != 0;
}

/* A reset: the hold in progress is dropped, with no back-off. */
static inline void irq_hold__cancel(struct irq_hold *h)
{
	h->held_ns = 0;
}

/* The bound, in microseconds, of a hold that began now; 0: no hold. */
long irq_hold__bound_us(const struct irq_hold *h);

/* A request completed @ns after it was taken (irq_hold=auto's bound). */
void irq_hold__note_latency(struct irq_hold *h, uint64_t ns);

/* A pass at @now took @taken chains (the looks' spacing, auto's bound). */
void irq_hold__note_chains(struct irq_hold *h, unsigned int taken,
			   uint64_t now);

/*
 * Completions were pushed at @now, the guest's avail index @avail, the
 * used index @used, @inflight requests at the backend: whether their
 * interrupt waits.  If
 * it does, *@until_ns is when the queue must look again (call this once
 * more then) and *@began whether this call began the hold.
 */
bool irq_hold__wait(struct irq_hold *h, uint64_t now, uint16_t avail,
		    uint16_t used, unsigned int inflight, uint64_t *until_ns,
		    bool *began);

/*
 * The interrupt goes out, after a hold or without one; @covered: the
 * completions it covers, @inflight: the requests still at the backend.
 * A hold that covered one completion with nothing else in flight - a
 * guest at depth 1 - backs off; one that covered one while others were
 * out (a slow disk at depth) does not: the next may gather more.
 */
void irq_hold__end(struct irq_hold *h, unsigned int covered,
		   unsigned int inflight);

#endif /* GPIN_IRQ_HOLD_H */
