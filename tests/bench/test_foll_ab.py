# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of pin_foll_ab.py: rounds read by number, ratios paired by
round, the verdict against the 10% bound for the fast mode only."""

import json
import os
import tempfile
import unittest

import pin_foll_ab


def write_round(d, which, r, cells, split=None):
    """CELLS: {(backing, batch, mode): ns_per_page}; SPLIT: the same keys
    to (pin, unpin) ns/page, which an older gpin-bench did not write."""
    single = []
    for (b, n, m), v in cells.items():
        c = {"backing": b, "batch": n, "mode": m, "ns_per_page": v}
        if split:
            c["pin_ns_per_page"], c["unpin_ns_per_page"] = split[b, n, m]
        single.append(c)
    with open(os.path.join(d, "%s-%d.json" % (which, r)), "w") as f:
        json.dump({"single": single}, f)


class FollAbTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def summary(self):
        return pin_foll_ab.summarise(pin_foll_ab.rounds(self.d, "old"),
                                     pin_foll_ab.rounds(self.d, "new"))

    def test_paired_by_round(self):
        # the host drifts 3x between rounds; new is 1.05x old in each
        fast, kern = ("4k", 512, "fast"), ("4k", 512, "kernel")
        for r, base in enumerate([100, 300, 200, 150, 250, 120], 1):
            write_round(self.d, "old", r, {fast: base, kern: base})
            write_round(self.d, "new", r, {fast: base * 1.05,
                                           kern: base * 2})
        rows = {k[:3]: (r, v) for k, _, _, r, v in self.summary()}
        ratio, verdict = rows[fast]
        self.assertAlmostEqual(ratio.value, 1.05)
        self.assertEqual(ratio.pairing, "paired")
        self.assertAlmostEqual(ratio.lo, 1.05)
        self.assertEqual(verdict, "ahead")
        self.assertAlmostEqual(rows[kern][0].value, 2.0)
        self.assertEqual(rows[kern][1], "")

    def test_verdicts(self):
        cell = ("4k", 64, "fast")
        for r, new in enumerate([1.3, 1.4, 1.5, 1.35, 1.45, 1.3], 1):
            write_round(self.d, "old", r, {cell: 100})
            write_round(self.d, "new", r, {cell: 100 * new})
        self.assertEqual(self.summary()[0][4], "behind")
        write_round(self.d, "new", 2, {cell: 100})
        self.assertEqual(self.summary()[0][4], "can't tell")

    def test_pin_and_unpin_apart(self):
        # the walk 1.05x, the release 2x: the pin alone meets the bound,
        # the release gets no verdict (it is not the fast path's own)
        cell = ("4k", 512, "fast")
        for r in range(1, 7):
            write_round(self.d, "old", r, {cell: 100}, {cell: (60, 40)})
            write_round(self.d, "new", r, {cell: 143}, {cell: (63, 80)})
        rows = {k[3]: (r.value, v) for k, _, _, r, v in self.summary()}
        self.assertEqual([k[3] for k, *_ in self.summary()],
                         ["pin+unpin", "PIN alone", "UNPIN alone"])
        self.assertAlmostEqual(rows["pin+unpin"][0], 1.43)
        self.assertEqual(rows["pin+unpin"][1], "behind")
        self.assertAlmostEqual(rows["PIN alone"][0], 1.05)
        self.assertEqual(rows["PIN alone"][1], "ahead")
        self.assertAlmostEqual(rows["UNPIN alone"][0], 2.0)
        self.assertEqual(rows["UNPIN alone"][1], "")

    def test_split_on_one_side_only(self):
        # an old run without the split: only pin+unpin is compared
        cell = ("4k", 64, "fast")
        write_round(self.d, "old", 1, {cell: 100})
        write_round(self.d, "new", 1, {cell: 100}, {cell: (50, 50)})
        self.assertEqual([k[3] for k, *_ in self.summary()], ["pin+unpin"])

    def test_round_numbers_not_names(self):
        # round 10 sorts before round 2 as a name
        cell = ("thp", 1, "fast")
        for r in range(1, 11):
            write_round(self.d, "old", r, {cell: r})
        self.assertEqual(sorted(pin_foll_ab.rounds(self.d, "old")),
                         list(range(1, 11)))

    def test_cells_on_one_side_left_out(self):
        write_round(self.d, "old", 1, {("4k", 1, "fast"): 5})
        write_round(self.d, "new", 1, {("4k", 16, "fast"): 5})
        self.assertEqual(self.summary(), [])


if __name__ == "__main__":
    unittest.main()
