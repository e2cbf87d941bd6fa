// SPDX-License-Identifier: GPL-2.0-only
/* Who looks at a queue's ring next: devices/blk_pace.h. */
#include "devices/blk_pace.h"

void blk_pace__init(struct blk_pace *p, long poll_us)
{
	*p = (struct blk_pace) { .poll_us = poll_us };
}

void blk_pace__note_completions(struct blk_pace *p, uint64_t now_ns)
{
	uint64_t gap;

	if (p->last_done_ns) {
		gap = now_ns - p->last_done_ns;
		if (gap > BLK_PACE_QUIET_MAX_US * 1000ULL)
			gap = BLK_PACE_QUIET_MAX_US * 1000ULL;
		p->gap_ns = p->gap_ns ? (7 * p->gap_ns + gap) / 8 : gap;
	}
	p->last_done_ns = now_ns;
}

long blk_pace__quiet_us(const struct blk_pace *p)
{
	long us = (long)(4 * p->gap_ns / 1000);

	if (us < BLK_PACE_QUIET_MIN_US)
		return BLK_PACE_QUIET_MIN_US;
	return us > BLK_PACE_QUIET_MAX_US ? BLK_PACE_QUIET_MAX_US : us;
}

/* Whether the completions to come look at the ring (the top of the .h). */
static bool at_depth(const struct blk_pace_pass *pass)
{
	if (!pass->inflight || pass->timed_out)
		return false;
	return pass->thread || pass->inflight >= BLK_PACE_DEPTH_MIN;
}

/*
 * poll=: whether the queue is still hot.  A pass that took chains makes
 * it so; BLK_PACE_POLL_TRIES timer looks that find nothing cool it.
 */
static bool still_hot(struct blk_pace *p, const struct blk_pace_pass *pass)
{
	if (!p->poll_us || p->peak_inflight < 2)
		return false;
	if (pass->taken)
		p->empty_polls = 0;
	else if (pass->timed_out)
		p->empty_polls++;
	if (p->empty_polls < BLK_PACE_POLL_TRIES)
		return true;
	p->empty_polls = 0;
	return false;
}

enum blk_pace_look blk_pace__settle(struct blk_pace *p,
				    const struct blk_pace_pass *pass,
				    long *us)
{
	if (at_depth(pass)) {
		*us = blk_pace__sooner_us(blk_pace__quiet_us(p), p->poll_us);
		return BLK_PACE_QUIET;
	}
	if (still_hot(p, pass)) {
		*us = p->poll_us;
		return BLK_PACE_POLL;
	}
	/* the guest notifies: busy is counted afresh from here */
	*us = 0;
	p->peak_inflight = pass->inflight;
	return BLK_PACE_NOTIFY;
}
