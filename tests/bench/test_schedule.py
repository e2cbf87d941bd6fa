# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpinbench.schedule: the balanced order of rounds."""

import collections
import itertools
import unittest

from gpinbench import schedule


def full_cycle(items):
    rounds = len(schedule.cycle(len(items)))
    return [schedule.order(items, r) for r in range(1, rounds + 1)]


class Order(unittest.TestCase):
    def test_a_round_holds_every_item_once(self):
        for n in range(1, 8):
            items = list(range(n))
            for row in full_cycle(items):
                self.assertEqual(sorted(row), items)

    def test_every_item_takes_every_position_equally_often(self):
        for n in range(2, 8):
            items = [chr(65 + i) for i in range(n)]
            at = collections.Counter()
            for row in full_cycle(items):
                for pos, item in enumerate(row):
                    at[item, pos] += 1
            self.assertEqual(len(set(at.values())), 1, n)
            self.assertEqual(len(at), n * n)

    def test_every_item_follows_every_other_equally_often(self):
        for n in range(2, 8):
            items = [chr(65 + i) for i in range(n)]
            after = collections.Counter()
            for row in full_cycle(items):
                for a, b in zip(row, row[1:]):
                    after[a, b] += 1
            pairs = list(itertools.permutations(items, 2))
            self.assertEqual(sorted(after), sorted(pairs), n)
            self.assertEqual(len(set(after.values())), 1, n)

    def test_a_rotation_would_not_be_balanced(self):
        # what the design replaces: B always after A
        rows = [list("ABC"), list("BCA"), list("CAB")]
        after = collections.Counter((a, b) for r in rows
                                    for a, b in zip(r, r[1:]))
        self.assertNotIn(("B", "A"), after)

    def test_rounds_repeat_the_cycle(self):
        items = list("ABCD")
        self.assertEqual(schedule.order(items, 1), list("ABDC"))
        self.assertEqual(schedule.order(items, 5), schedule.order(items, 1))

    def test_plan_in_run_order(self):
        self.assertEqual(schedule.plan(["A", "B"], 3),
                         [(1, "A"), (1, "B"), (2, "B"), (2, "A"),
                          (3, "A"), (3, "B")])

    def test_nothing_to_order(self):
        self.assertEqual(schedule.order([], 2), [])


if __name__ == "__main__":
    unittest.main()
