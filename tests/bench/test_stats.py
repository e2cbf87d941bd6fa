# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpinbench.stats: medians, bootstrap intervals, ratios,
the verdict rule."""

import unittest

from gpinbench import stats
from gpinbench.stats import AHEAD, BEHIND, CANT_TELL, Estimate


class Median(unittest.TestCase):
    def test_five_rounds_interval_is_their_range(self):
        # a resample's median is the smallest value with probability
        # 5.8% > 2.5%: the interval's ends are the extremes
        e = stats.median([10, 12, 11, 30, 9])
        self.assertEqual(e.value, 11)
        self.assertEqual((e.lo, e.hi), (9, 30))
        self.assertEqual(e.n, 5)

    def test_many_rounds_interval_is_inside_the_range(self):
        xs = list(range(1, 41))
        e = stats.median(xs)
        self.assertEqual(e.value, 20.5)
        self.assertGreater(e.lo, 1)
        self.assertLess(e.hi, 40)
        self.assertLess(e.lo, e.value)
        self.assertGreater(e.hi, e.value)

    def test_same_samples_same_interval(self):
        # the fixed seed: a report made twice is the same report
        xs = [3.1, 2.7, 3.9, 3.3, 2.2, 4.1, 3.0]
        self.assertEqual(stats.median(xs), stats.median(list(xs)))

    def test_equal_samples_give_a_point_interval(self):
        e = stats.median([7, 7, 7])
        self.assertEqual((e.value, e.lo, e.hi), (7, 7, 7))

    def test_one_round_has_no_interval(self):
        e = stats.median([5])
        self.assertEqual(e.value, 5)
        self.assertFalse(e.has_interval)

    def test_two_rounds_have_no_interval(self):
        # their range holds the true median only half the time
        e = stats.median([5, 7])
        self.assertEqual((e.value, e.n), (6, 2))
        self.assertFalse(e.has_interval)
        self.assertEqual(stats.median([5, 7, 6]).lo, 5)

    def test_no_rounds_no_figure(self):
        e = stats.median([])
        self.assertIsNone(e.value)
        self.assertEqual(e.n, 0)


class Ratio(unittest.TestCase):
    def test_paired_is_the_median_of_the_rounds_ratios(self):
        # a drift that moves both sides cancels in each round's ratio
        num = {1: 200, 2: 400, 3: 800}
        den = {1: 100, 2: 200, 3: 400}
        e = stats.ratio(num, den)
        self.assertEqual(e.pairing, "paired")
        self.assertEqual(e.kind, "ratio")
        self.assertEqual((e.value, e.lo, e.hi), (2, 2, 2))
        # three rounds cover 75%: no claim of significance
        self.assertFalse(e.significant())
        six = stats.ratio({r: 200 * r for r in range(1, 7)},
                          {r: 100 * r for r in range(1, 7)})
        self.assertTrue(six.significant())

    def test_unpaired_when_rounds_do_not_meet(self):
        e = stats.ratio({1: 10, 2: 12, 3: 11}, {4: 5, 5: 6, 6: 5.5})
        self.assertEqual(e.pairing, "unpaired")
        self.assertAlmostEqual(e.value, 11 / 5.5)
        self.assertTrue(e.has_interval)
        self.assertLessEqual(e.lo, e.value)
        self.assertGreaterEqual(e.hi, e.value)

    def test_one_round_on_a_side_has_no_interval(self):
        e = stats.ratio({1: 10, 2: 20, 4: 15}, {3: 10})
        self.assertEqual(e.pairing, "unpaired")
        self.assertFalse(e.has_interval)

    def test_straddling_one_is_not_significant(self):
        e = stats.ratio({1: 90, 2: 110, 3: 100}, {1: 100, 2: 100, 3: 100})
        self.assertEqual((e.lo, e.hi), (0.9, 1.1))
        self.assertFalse(e.significant())

    def test_zero_denominator_rounds_are_left_out(self):
        e = stats.ratio({1: 4, 2: 6, 3: 8, 4: 9}, {1: 0, 2: 2, 3: 4, 4: 3})
        self.assertEqual((e.n, e.pairing), (3, "paired"))
        self.assertEqual(e.value, 3)     # of 6/2, 8/4, 9/3

    def test_compare_counts_that_can_be_zero_by_difference(self):
        e = stats.compare({1: 0, 2: 0, 3: 0}, {1: 0, 2: 0, 3: 0})
        self.assertEqual(e.kind, "difference")
        self.assertEqual((e.value, e.lo, e.hi), (0, 0, 0))
        self.assertFalse(e.significant())
        e = stats.compare({1: 5, 2: 7, 3: 6, 4: 5, 5: 6, 6: 7},
                          {1: 0, 2: 1, 3: 0, 4: 0, 5: 1, 6: 0})
        self.assertEqual(e.kind, "difference")
        self.assertTrue(e.significant())

    def test_compare_is_a_ratio_when_it_can_be(self):
        self.assertEqual(stats.compare({1: 2, 2: 3}, {1: 1, 2: 1}).kind,
                         "ratio")

    def test_too_few_rounds_cannot_tell(self):
        e = stats.ratio({1: 200, 2: 210}, {1: 100, 2: 100})
        self.assertEqual((e.value, e.pairing), (2.05, "paired"))
        self.assertFalse(e.has_interval)
        self.assertEqual(stats.verdict(e, ">=", 1.1), CANT_TELL)


class Verdict(unittest.TestCase):
    def v(self, lo, hi, op, target, coverage=0.969):
        return stats.verdict(Estimate((lo + hi) / 2, lo, hi, 6, "ratio",
                                      coverage=coverage), op, target)

    def test_at_least(self):
        self.assertEqual(self.v(1.2, 1.5, ">=", 1.1), AHEAD)
        self.assertEqual(self.v(1.1, 1.5, ">=", 1.1), AHEAD)  # touches
        self.assertEqual(self.v(0.8, 1.05, ">=", 1.1), BEHIND)
        self.assertEqual(self.v(0.9, 1.3, ">=", 1.1), CANT_TELL)
        self.assertEqual(self.v(0.9, 1.1, ">=", 1.1), CANT_TELL)

    def test_at_most(self):
        self.assertEqual(self.v(0.5, 0.9, "<=", 1.0), AHEAD)
        self.assertEqual(self.v(1.01, 1.4, "<=", 1.0), BEHIND)
        self.assertEqual(self.v(0.9, 1.2, "<=", 1.0), CANT_TELL)

    def test_exactly(self):
        self.assertEqual(self.v(0, 0, "==", 0), AHEAD)
        self.assertEqual(self.v(0, 3, "==", 0), CANT_TELL)
        self.assertEqual(self.v(1, 3, "==", 0), BEHIND)

    def test_below_full_coverage_cannot_tell(self):
        # 5 rounds: their range holds the median 93.8% of the time
        self.assertEqual(self.v(1.2, 1.5, ">=", 1.1, coverage=0.9375),
                         CANT_TELL)
        self.assertEqual(self.v(1.2, 1.5, ">=", 1.1, coverage=None),
                         CANT_TELL)

    def test_no_interval_cannot_tell(self):
        one = Estimate(5.0, n=1, kind="ratio")
        self.assertEqual(stats.verdict(one, ">=", 1.0), CANT_TELL)
        self.assertEqual(stats.verdict(Estimate(None), ">=", 1.0), CANT_TELL)

    def test_rounds_end_to_end(self):
        # six rounds all above the target: ahead; one below: can't tell
        den = {r: 100 for r in range(1, 7)}
        up = stats.ratio({1: 130, 2: 125, 3: 140, 4: 128, 5: 150, 6: 133},
                         den)
        self.assertEqual(stats.verdict(up, ">=", 1.2), AHEAD)
        mixed = stats.ratio({1: 130, 2: 110, 3: 140, 4: 128, 5: 150,
                             6: 133}, den)
        self.assertEqual(stats.verdict(mixed, ">=", 1.2), CANT_TELL)
        # five rounds, all above: their range covers 93.8% only
        five = stats.ratio({r: 130 for r in range(1, 6)},
                           {r: 100 for r in range(1, 6)})
        self.assertAlmostEqual(five.coverage, 0.9375)
        self.assertEqual(stats.verdict(five, ">=", 1.2), CANT_TELL)


class Coverage(unittest.TestCase):
    def test_exact_coverage_of_order_statistics(self):
        self.assertAlmostEqual(stats.interval_coverage(3, 1), 0.75)
        self.assertAlmostEqual(stats.interval_coverage(5, 1), 0.9375)
        self.assertAlmostEqual(stats.interval_coverage(6, 1), 0.96875)
        # 20 rounds: x_(6)..x_(15) still holds it 95.9% of the time
        self.assertGreater(stats.interval_coverage(20, 6), 0.95)
        self.assertLess(stats.interval_coverage(20, 7), 0.95)

    def test_interval_narrows_with_rounds(self):
        e = stats.median(range(1, 21))
        self.assertEqual((e.lo, e.hi), (6, 15))
        self.assertGreaterEqual(e.coverage, stats.LEVEL)
        e = stats.median([3, 1, 2, 5, 4, 6])
        self.assertEqual((e.lo, e.hi), (1, 6))
        self.assertAlmostEqual(e.coverage, 0.96875)


class Family(unittest.TestCase):
    def test_sign_test(self):
        p, lean = stats.sign_test([1.3, 1.4, 1.5, 1.3, 1.6, 1.35], ">=", 1.2)
        self.assertAlmostEqual(p, 2 / 64)
        self.assertEqual(lean, AHEAD)
        p, lean = stats.sign_test([0.8, 0.9, 1.3], "<=", 1.0)
        self.assertEqual(lean, AHEAD)
        p, lean = stats.sign_test([0.8, 0.9, 0.7], ">=", 1.0)
        self.assertEqual(lean, BEHIND)
        # ties are left out; nothing off the target: p = 1
        self.assertEqual(stats.sign_test([1.0, 1.0], ">=", 1.0)[0], 1.0)

    def test_holm_steps_down(self):
        self.assertEqual(stats.holm([0.01, 0.04, 0.03]),
                         [True, False, False])
        self.assertEqual(stats.holm([0.001, 0.02, None, 0.04]),
                         [True, True, False, True])
        self.assertEqual(stats.holm([0.03, 0.03]), [False, False])

    def test_smallest_p(self):
        self.assertAlmostEqual(stats.smallest_p(6), 1 / 32)
        self.assertEqual(stats.smallest_p(0), 1.0)

    def test_facts(self):
        self.assertTrue(stats.fact([0, 0, 0], 0))
        self.assertFalse(stats.fact([0, 2, 0], 0))
        self.assertIsNone(stats.fact([], 0))


if __name__ == "__main__":
    unittest.main()
