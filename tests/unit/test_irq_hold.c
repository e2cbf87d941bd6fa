// SPDX-License-Identifier: GPL-2.0-only
/* A queue's interrupt moderation (irq_hold=), on a clock the test drives. */
#include "devices/irq_hold.h"
#include "unit.h"

#define US	1000ULL
#define MS	(1000 * US)

static struct irq_hold h;
static uint64_t until;
static bool began;

/* The used index of the tests' ring: what has completed so far. */
static uint16_t used;

/* Whether the interrupt of completions pushed at @now waits. */
static bool wait_at(uint64_t now, uint16_t avail, unsigned int inflight)
{
	return irq_hold__wait(&h, now, avail, used, inflight, &until, &began);
}

START_TEST(test_off_never_holds)
{
	irq_hold__init(&h, 0);
	irq_hold__note_latency(&h, 5 * MS);
	ck_assert_int_eq(irq_hold__bound_us(&h), 0);
	ck_assert(!wait_at(1 * MS, 3, 7));
	ck_assert(!irq_hold__held(&h));
}
END_TEST

/* A fixed bound: the hold lasts while the guest adds, not past it. */
START_TEST(test_fixed_hold_ends_at_its_bound)
{
	irq_hold__init(&h, 1000);
	ck_assert(wait_at(10 * MS, 1, 5));
	ck_assert(began);
	ck_assert(irq_hold__held(&h));
	/* no gap known: looks a quarter of the bound apart */
	ck_assert_uint_eq(until, 10 * MS + 250 * US);
	/* the guest keeps adding: each look finds more */
	ck_assert(wait_at(10 * MS + 250 * US, 4, 5));
	ck_assert(!began);
	ck_assert(wait_at(10 * MS + 500 * US, 9, 5));
	ck_assert(wait_at(10 * MS + 750 * US, 12, 5));
	/* the bound: 1000 us after the first completion */
	ck_assert(!wait_at(10 * MS + 1000 * US, 20, 5));
}
END_TEST

/* A guest that stopped adding, nothing in flight: it waits for us. */
START_TEST(test_hold_ends_when_the_guest_waits)
{
	irq_hold__init(&h, 4000);
	ck_assert(wait_at(1 * MS, 7, 0));
	/* between two looks the hold goes on whatever the ring says */
	ck_assert(wait_at(1 * MS + 100 * US, 7, 0));
	/* a look that finds nothing added and nothing in flight ends it */
	ck_assert(!wait_at(2 * MS + 1 * US, 7, 0));
}
END_TEST

/*
 * Nothing added, requests in flight: the guest waits for this interrupt
 * all the same (a disk slower than the guest must not have its latency
 * added to every completion a hold covers).
 */
START_TEST(test_requests_in_flight_do_not_keep_a_hold)
{
	irq_hold__init(&h, 4000);
	ck_assert(wait_at(1 * MS, 7, 0));
	ck_assert(wait_at(2 * MS + 1 * US, 9, 3));
	ck_assert(!wait_at(3 * MS + 2 * US, 9, 3));
}
END_TEST

/*
 * The guest's whole depth is out: it adds nothing until it hears of a
 * completion, but completions keep coming, and the batch keeps growing
 * until the bound.
 */
START_TEST(test_completions_that_keep_coming_keep_a_hold)
{
	used = 0;
	irq_hold__init(&h, 4000);
	ck_assert(wait_at(1 * MS, 32, 31));
	used = 3;
	ck_assert(wait_at(2 * MS + 1 * US, 32, 28));
	used = 9;
	ck_assert(wait_at(3 * MS + 2 * US, 32, 22));
	/* the bound */
	used = 12;
	ck_assert(!wait_at(5 * MS, 32, 19));
	/* nothing more completed, nothing added: the look ends it */
	used = 0;
	irq_hold__init(&h, 4000);
	ck_assert(wait_at(1 * MS, 32, 31));
	ck_assert(!wait_at(2 * MS + 1 * US, 32, 31));
	/* completed since, but nothing in flight now: the guest waits */
	irq_hold__init(&h, 4000);
	ck_assert(wait_at(1 * MS, 32, 5));
	used = 5;
	ck_assert(!wait_at(2 * MS + 1 * US, 32, 0));
}
END_TEST

/* A hold that covered one completion backs off: qd1 pays rarely. */
START_TEST(test_qd1_backs_off)
{
	unsigned int i, held = 0;

	irq_hold__init(&h, 1000);
	for (i = 0; i < 2000; i++) {
		uint64_t now = (i + 1) * 10 * MS;

		if (wait_at(now, i, 0)) {
			held++;
			/* the next look finds the guest waiting */
			ck_assert(!wait_at(now + 1 * MS, i, 0));
		}
		irq_hold__end(&h, 1, 0);
	}
	/* 1 + 1 + 2 + 4 ... + 256, then one in 257 */
	ck_assert_uint_le(held, 16);
	ck_assert_uint_ge(held, 9);
	ck_assert_uint_eq(h.backoff, IRQ_HOLD_BACKOFF_MAX);
	/* a hold that gathered a batch resets the back-off */
	h.skip = 0;
	ck_assert(wait_at(30 * 1000 * MS, 0, 4));
	irq_hold__end(&h, 8, 0);
	ck_assert_uint_eq(h.backoff, 0);
	/*
	 * One completion while others are out is a slow disk at depth, not
	 * a guest at qd1: no back-off, the next hold may gather more.
	 */
	h.backoff = 0;
	ck_assert(wait_at(32 * 1000 * MS, 0, 4));
	irq_hold__end(&h, 1, 3);
	ck_assert_uint_eq(h.backoff, 0);
	ck_assert(wait_at(33 * 1000 * MS, 0, 4));
}
END_TEST

/*
 * irq_hold=auto: no hold until the queue showed a latency or a pace; then
 * the longer of its completion latency and two looks at the guest's
 * pace, clamped.
 */
START_TEST(test_auto_bound_is_latency_or_pace)
{
	unsigned int i;

	irq_hold__init(&h, IRQ_HOLD_AUTO);
	ck_assert(irq_hold__auto(&h));
	ck_assert_int_eq(irq_hold__bound_us(&h), 0);
	ck_assert(!wait_at(1 * MS, 1, 4));
	irq_hold__note_latency(&h, 80 * US);
	ck_assert_int_eq(irq_hold__bound_us(&h), 80);
	/* averaged: one slow request moves it an eighth of the way */
	irq_hold__note_latency(&h, 880 * US);
	ck_assert_int_eq(irq_hold__bound_us(&h), 180);
	ck_assert(wait_at(2 * MS, 1, 4));
	ck_assert(!wait_at(2 * MS + 180 * US, 30, 4));

	/*
	 * A host faster than its guest: requests complete in 30 us, the
	 * guest adds one every 100 us.  The hold must outlast the guest's
	 * gaps, or it never gathers a second chain: 5 looks of 4 gaps.
	 */
	irq_hold__init(&h, IRQ_HOLD_AUTO);
	for (i = 0; i <= 30; i++) {
		irq_hold__note_latency(&h, 30 * US);
		irq_hold__note_chains(&h, 1, 1 * MS + i * 100 * US);
	}
	ck_assert_int_eq(irq_hold__bound_us(&h), 2000);
	ck_assert(wait_at(10 * MS, 0, 1));
	ck_assert_uint_eq(until, 10 * MS + 400 * US);
	for (i = 1; i < 5; i++)
		ck_assert(wait_at(10 * MS + i * 400 * US, 4 * i, 1));
	ck_assert(!wait_at(10 * MS + 2000 * US, 30, 1));

	irq_hold__init(&h, IRQ_HOLD_AUTO);
	irq_hold__note_latency(&h, 2 * US);
	ck_assert_int_eq(irq_hold__bound_us(&h), IRQ_HOLD_AUTO_MIN_US);
	irq_hold__init(&h, IRQ_HOLD_AUTO);
	irq_hold__note_latency(&h, 50 * MS);
	ck_assert_int_eq(irq_hold__bound_us(&h), IRQ_HOLD_AUTO_MAX_US);
}
END_TEST

/* Looks are four of the guest's gaps between chains apart, bounded. */
START_TEST(test_looks_follow_the_guests_pace)
{
	unsigned int i;

	irq_hold__init(&h, 4000);
	/* a chain every 50 us */
	for (i = 0; i <= 20; i++)
		irq_hold__note_chains(&h, 1, 1 * MS + i * 50 * US);
	ck_assert_uint_eq(h.chain_gap_ns, 50 * US);
	ck_assert(wait_at(5 * MS, 0, 2));
	ck_assert_uint_eq(until, 5 * MS + 200 * US);
	irq_hold__end(&h, 2, 0);
	/* a guest that pauses for longer than the bound was waiting */
	irq_hold__init(&h, 400);
	irq_hold__note_chains(&h, 1, 0 + 1);
	irq_hold__note_chains(&h, 1, 10 * MS);
	ck_assert_uint_eq(h.chain_gap_ns, 400 * US);
	/* and a look is never more than half the bound away */
	ck_assert(wait_at(20 * MS, 0, 2));
	ck_assert_uint_eq(until, 20 * MS + 200 * US);
	/* nor closer than IRQ_HOLD_LOOK_MIN_US */
	irq_hold__init(&h, 4000);
	for (i = 0; i <= 20; i++)
		irq_hold__note_chains(&h, 10, 1 * MS + i * 10 * US);
	ck_assert(wait_at(2 * MS, 0, 2));
	ck_assert_uint_eq(until, 2 * MS + IRQ_HOLD_LOOK_MIN_US * US);
}
END_TEST

static Suite *irq_hold_suite(void)
{
	Suite *s = suite_create("irq_hold");
	TCase *tc = tcase_create("hold");

	tcase_add_test(tc, test_off_never_holds);
	tcase_add_test(tc, test_fixed_hold_ends_at_its_bound);
	tcase_add_test(tc, test_hold_ends_when_the_guest_waits);
	tcase_add_test(tc, test_requests_in_flight_do_not_keep_a_hold);
	tcase_add_test(tc, test_completions_that_keep_coming_keep_a_hold);
	tcase_add_test(tc, test_qd1_backs_off);
	tcase_add_test(tc, test_auto_bound_is_latency_or_pace);
	tcase_add_test(tc, test_looks_follow_the_guests_pace);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(irq_hold_suite());
}
