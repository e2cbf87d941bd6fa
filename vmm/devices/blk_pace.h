/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Who looks at a virtio-blk queue's ring next, once a pass found it empty:
 * the guest, by a notification (an exit), or the queue itself, on the
 * pass of its next completion or on its thread's timer.
 *
 * A notification is the costliest step of a request when the host
 * completes in microseconds, and it is wasted whenever the queue was
 * going to look anyway.  So:
 *
 * - At depth, notifications stay off: while requests are in flight the
 *   pass of the next completion looks at the ring, and a guest at depth
 *   adds its next chains without an exit.  On a vCPU only from
 *   BLK_PACE_DEPTH_MIN requests in flight: a guest that keeps a single
 *   request out (qd1) is served by its notifying vCPU as soon as it asks,
 *   the path with the lowest latency.  Until a completion comes, the
 *   quiet timer looks, after four of the queue's usual gaps between
 *   completions (BLK_PACE_QUIET_MIN_US..BLK_PACE_QUIET_MAX_US): a request
 *   that arrives behind a slow one (a flush) waits for that long, not for
 *   the slow one.  When the quiet timer ran out, the completions are
 *   slow and the guest is asked to notify.
 * - poll= (off by default): a queue that was busy lately (two or more in
 *   flight since it last asked for notifications) is looked at again on a
 *   timer of poll= microseconds instead, until BLK_PACE_POLL_TRIES timer
 *   looks in a row found nothing.  A guest at qd1 sends its next request
 *   only when it has seen the last complete: a timer can only be later
 *   than its notification, so qd1 never counts as busy.
 * - Otherwise the guest is asked to notify (and the queue looks once more,
 *   for a chain published before the guest could see that).
 *
 * Pure: the queue passes the time and what it has in flight; it turns the
 * answer into notification flags and its thread's timer.  Used by the
 * queue's owner only.
 */
#ifndef GPIN_BLK_PACE_H
#define GPIN_BLK_PACE_H

#include <stdbool.h>
#include <stdint.h>

#define BLK_PACE_QUIET_MIN_US	100
#define BLK_PACE_QUIET_MAX_US	20000
/* In flight after a vCPU's pass for it to leave notifications off. */
#define BLK_PACE_DEPTH_MIN	2
/* poll=: timer looks finding nothing before the guest notifies again */
#define BLK_PACE_POLL_TRIES	3

struct blk_pace {
	long poll_us;			/* poll=, 0: off */
	uint64_t last_done_ns;		/* the last pass that completed some */
	uint64_t gap_ns;		/* between such passes, averaged */
	unsigned int empty_polls;	/* poll=: timer looks that found none */
	unsigned int peak_inflight;	/* most in flight since notifications on */
};

/* Who looks next (blk_pace__settle()). */
enum blk_pace_look {
	BLK_PACE_NOTIFY,	/* the guest: notifications on */
	BLK_PACE_QUIET,		/* completions, or the quiet timer */
	BLK_PACE_POLL,		/* poll=: the thread's timer */
};

/* How the pass that found the ring empty ran. */
struct blk_pace_pass {
	unsigned int inflight;	/* requests out after it */
	unsigned int taken;	/* chains it took */
	bool thread;		/* on the queue's thread, not a vCPU */
	bool timed_out;		/* woken by the thread's timer */
};

void blk_pace__init(struct blk_pace *p, long poll_us);

/* A pass completed requests at @now_ns. */
void blk_pace__note_completions(struct blk_pace *p, uint64_t now_ns);

/* A request started; @inflight: how many are out now. */
static inline void blk_pace__note_started(struct blk_pace *p,
					  unsigned int inflight)
{
	if (inflight > p->peak_inflight)
		p->peak_inflight = inflight;
}

/* The quiet timer, in microseconds. */
long blk_pace__quiet_us(const struct blk_pace *p);

/*
 * The ring was found empty by @pass: who looks next, and for the queue's
 * own looks, in how many microseconds (*@us).
 */
enum blk_pace_look blk_pace__settle(struct blk_pace *p,
				    const struct blk_pace_pass *pass,
				    long *us);

/* The sooner of two timers, each 0 (or less) when not set. */
static inline long blk_pace__sooner_us(long a, long b)
{
	if (a <= 0)
		return b;
	return b > 0 && b < a ? b : a;
}

#endif /* GPIN_BLK_PACE_H */
