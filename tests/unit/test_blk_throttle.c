// SPDX-License-Identifier: GPL-2.0-only
/* The disk rate limits' token buckets, on a clock the test drives. */
#include "devices/blk_throttle.h"
#include "unit.h"

#define MS	1000000ULL
#define SEC	(1000 * MS)
#define MIB	(1ULL << 20)

static struct blk_throttle t;
static uint64_t wait;

START_TEST(test_no_limits)
{
	unsigned int i;

	blk_throttle__init(&t, 0, 0, 4 * MIB, 0);
	ck_assert(!blk_throttle__enabled(&t));
	for (i = 0; i < 100000; i++)
		ck_assert(blk_throttle__admit(&t, 4 * MIB, 0, &wait));
}
END_TEST

/* 100 IOPS: a burst of a tenth of a second, then one every 10 ms. */
START_TEST(test_iops)
{
	unsigned int i;

	blk_throttle__init(&t, 100, 0, 4 * MIB, 5 * SEC);
	ck_assert(blk_throttle__enabled(&t));
	for (i = 0; i < 10; i++)
		ck_assert(blk_throttle__admit(&t, 4096, 5 * SEC, &wait));
	ck_assert(!blk_throttle__admit(&t, 4096, 5 * SEC, &wait));
	ck_assert_uint_ge(wait, 10 * MS);
	ck_assert_uint_le(wait, 10 * MS + 1);
	ck_assert(!blk_throttle__admit(&t, 0, 5 * SEC + 9 * MS, &wait));
	ck_assert(blk_throttle__admit(&t, 0, 5 * SEC + 10 * MS, &wait));
	ck_assert(!blk_throttle__admit(&t, 0, 5 * SEC + 10 * MS, &wait));
}
END_TEST

/* 1 MiB/s with 4 MiB requests: the burst is one request, then a wait. */
START_TEST(test_bps)
{
	blk_throttle__init(&t, 0, MIB, 4 * MIB, 0);
	ck_assert(blk_throttle__admit(&t, 4 * MIB, 0, &wait));
	ck_assert(!blk_throttle__admit(&t, 4096, 0, &wait));
	ck_assert_uint_ge(wait, 4096 * SEC / MIB);
	/* FLUSH, DISCARD, WRITE_ZEROES carry no data bytes */
	ck_assert(blk_throttle__admit(&t, 0, 0, &wait));
	ck_assert(blk_throttle__admit(&t, 4096, 4 * MS, &wait));
}
END_TEST

/* Larger than the bucket: let through from a full one, then paid off. */
START_TEST(test_larger_than_burst)
{
	/* 10 MiB/s: a bucket of 1 MiB */
	blk_throttle__init(&t, 0, 10 * MIB, 1 * MIB, 0);
	ck_assert(blk_throttle__admit(&t, 8 * MIB, 0, &wait));
	/* 7 MiB of debt: 0.8 s before a full MiB is there again */
	ck_assert(!blk_throttle__admit(&t, 2 * MIB, 0, &wait));
	ck_assert_uint_ge(wait, 800 * MS);
	ck_assert(!blk_throttle__admit(&t, 2 * MIB, 790 * MS, &wait));
	ck_assert(blk_throttle__admit(&t, 2 * MIB, 800 * MS, &wait));
}
END_TEST

/* Idle time fills the bucket, but no more than full. */
START_TEST(test_idle_is_not_banked)
{
	unsigned int i, n = 0;

	blk_throttle__init(&t, 1000, 0, 4 * MIB, 0);
	for (i = 0; i < 1000; i++)
		n += blk_throttle__admit(&t, 0, 3600 * SEC, &wait);
	ck_assert_uint_eq(n, 100);
}
END_TEST

/*
 * Over ten simulated seconds of a greedy guest, 4 KiB requests every
 * 10 us: no more than rate x time + burst, and not much less.
 */
START_TEST(test_long_run_rate)
{
	uint64_t now, bytes = 0, ops = 0;

	/* 5000 IOPS binds (64 MiB/s would allow 16384 of 4 KiB) */
	blk_throttle__init(&t, 5000, 64 * MIB, 4 * MIB, 0);
	for (now = 0; now < 10 * SEC; now += 10000)
		if (blk_throttle__admit(&t, 4096, now, &wait))
			ops++;
	ck_assert_uint_le(ops, 10 * 5000 + 500);
	ck_assert_uint_ge(ops, 10 * 5000 - 10);
	/* 8 MiB/s binds: 2048 of 4 KiB a second */
	blk_throttle__init(&t, 5000, 8 * MIB, 4 * MIB, 0);
	for (now = 0; now < 10 * SEC; now += 10000)
		if (blk_throttle__admit(&t, 4096, now, &wait))
			bytes += 4096;
	ck_assert_uint_le(bytes, 10 * 8 * MIB + 4 * MIB);
	ck_assert_uint_ge(bytes, 10 * 8 * MIB - 4096);
}
END_TEST

static Suite *blk_throttle_suite(void)
{
	Suite *s = suite_create("blk_throttle");
	TCase *tc = tcase_create("buckets");

	tcase_add_test(tc, test_no_limits);
	tcase_add_test(tc, test_iops);
	tcase_add_test(tc, test_bps);
	tcase_add_test(tc, test_larger_than_burst);
	tcase_add_test(tc, test_idle_is_not_banked);
	tcase_add_test(tc, test_long_run_rate);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(blk_throttle_suite());
}
