// SPDX-License-Identifier: GPL-2.0-only
/* Who looks at a queue's ring next (blk_pace), on a clock the test drives. */
#include "devices/blk_pace.h"
#include "unit.h"

#define US	1000ULL
#define MS	(1000 * US)

static struct blk_pace p;
static long us;

/* The ring found empty by a pass that left @inflight out. */
static enum blk_pace_look settle(unsigned int inflight, unsigned int taken,
				 bool thread, bool timed_out)
{
	const struct blk_pace_pass pass = {
		.inflight = inflight,
		.taken = taken,
		.thread = thread,
		.timed_out = timed_out,
	};

	return blk_pace__settle(&p, &pass, &us);
}

/* qd1: the notifying vCPU serves it; the thread relies on completions. */
START_TEST(test_one_in_flight)
{
	blk_pace__init(&p, 0);
	ck_assert_int_eq(settle(1, 1, false, false), BLK_PACE_NOTIFY);
	ck_assert_int_eq(us, 0);
	ck_assert_int_eq(settle(1, 1, true, false), BLK_PACE_QUIET);
	ck_assert_int_eq(us, BLK_PACE_QUIET_MIN_US);
	/* idle: the guest notifies, on either */
	ck_assert_int_eq(settle(0, 0, true, false), BLK_PACE_NOTIFY);
	ck_assert_int_eq(settle(0, 1, false, false), BLK_PACE_NOTIFY);
}
END_TEST

/* At depth a vCPU leaves notifications off too, until the timer runs out. */
START_TEST(test_at_depth_until_the_quiet_timer)
{
	blk_pace__init(&p, 0);
	ck_assert_int_eq(settle(BLK_PACE_DEPTH_MIN, 2, false, false),
			 BLK_PACE_QUIET);
	ck_assert_int_eq(settle(5, 0, true, true), BLK_PACE_NOTIFY);
}
END_TEST

/* The quiet timer is four of the usual gaps between completions. */
START_TEST(test_quiet_timer_follows_completions)
{
	int i;

	blk_pace__init(&p, 0);
	ck_assert_int_eq(blk_pace__quiet_us(&p), BLK_PACE_QUIET_MIN_US);
	for (i = 0; i <= 40; i++)
		blk_pace__note_completions(&p, 10 * MS + i * 500 * US);
	ck_assert_int_eq(blk_pace__quiet_us(&p), 2000);
	ck_assert_int_eq(settle(3, 0, false, false), BLK_PACE_QUIET);
	ck_assert_int_eq(us, 2000);
	/* a long silence counts as at most the bound */
	for (i = 1; i <= 40; i++)
		blk_pace__note_completions(&p, i * 10000 * MS);
	ck_assert_int_eq(blk_pace__quiet_us(&p), BLK_PACE_QUIET_MAX_US);
}
END_TEST

/* poll=: a busy queue is looked at on a timer until it cools. */
START_TEST(test_poll_until_cool)
{
	int i;

	blk_pace__init(&p, 50);
	blk_pace__note_started(&p, 1);
	blk_pace__note_started(&p, 2);
	ck_assert_int_eq(settle(0, 2, false, false), BLK_PACE_POLL);
	ck_assert_int_eq(us, 50);
	for (i = 1; i < BLK_PACE_POLL_TRIES; i++)
		ck_assert_int_eq(settle(0, 0, true, true), BLK_PACE_POLL);
	ck_assert_int_eq(settle(0, 0, true, true), BLK_PACE_NOTIFY);
	/* cooled: busy is counted afresh, and one at a time is not busy */
	blk_pace__note_started(&p, 1);
	ck_assert_int_eq(settle(0, 1, false, false), BLK_PACE_NOTIFY);
}
END_TEST

/* A chain found resets the count of empty looks. */
START_TEST(test_poll_taken_keeps_it_hot)
{
	int i;

	blk_pace__init(&p, 50);
	blk_pace__note_started(&p, 4);
	for (i = 0; i < 10; i++) {
		ck_assert_int_eq(settle(0, 0, true, true), BLK_PACE_POLL);
		ck_assert_int_eq(settle(0, 1, true, true), BLK_PACE_POLL);
	}
}
END_TEST

/* At depth with poll=, the sooner of the two timers. */
START_TEST(test_poll_shortens_the_quiet_timer)
{
	blk_pace__init(&p, 50);
	ck_assert_int_eq(settle(4, 1, true, false), BLK_PACE_QUIET);
	ck_assert_int_eq(us, 50);
	ck_assert_int_eq(blk_pace__sooner_us(0, 7), 7);
	ck_assert_int_eq(blk_pace__sooner_us(9, 0), 9);
	ck_assert_int_eq(blk_pace__sooner_us(9, 7), 7);
}
END_TEST

static Suite *blk_pace_suite(void)
{
	Suite *s = suite_create("blk_pace");
	TCase *tc = tcase_create("pace");

	tcase_add_test(tc, test_one_in_flight);
	tcase_add_test(tc, test_at_depth_until_the_quiet_timer);
	tcase_add_test(tc, test_quiet_timer_follows_completions);
	tcase_add_test(tc, test_poll_until_cool);
	tcase_add_test(tc, test_poll_taken_keeps_it_hot);
	tcase_add_test(tc, test_poll_shortens_the_quiet_timer);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(blk_pace_suite());
}
