# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpinbench.schedule: the rotating order of rounds."""

import unittest

from gpinbench import schedule


class Rotation(unittest.TestCase):
    def test_rounds_rotate(self):
        self.assertEqual(schedule.rotation("ABC", 1), list("ABC"))
        self.assertEqual(schedule.rotation("ABC", 2), list("BCA"))
        self.assertEqual(schedule.rotation("ABC", 3), list("CAB"))
        self.assertEqual(schedule.rotation("ABC", 4), list("ABC"))

    def test_every_item_takes_every_position(self):
        items = ["fast", "locked", "kernel", "qemu"]
        seen = {i: set() for i in items}
        for r in range(1, len(items) + 1):
            for pos, item in enumerate(schedule.rotation(items, r)):
                seen[item].add(pos)
        self.assertTrue(all(p == set(range(4)) for p in seen.values()))

    def test_plan_in_run_order(self):
        self.assertEqual(schedule.plan(["A", "B"], 3),
                         [(1, "A"), (1, "B"), (2, "B"), (2, "A"),
                          (3, "A"), (3, "B")])

    def test_nothing_to_order(self):
        self.assertEqual(schedule.rotation([], 2), [])


if __name__ == "__main__":
    unittest.main()
