# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpintest.follpin: the FOLL_PIN counters around a command."""

import os
import tempfile
import unittest

from gpintest import follpin

VMSTAT = """nr_free_pages 100
nr_foll_pin_acquired 1035
nr_foll_pin_released 1031
nr_foll_pin_acquired_suffix 9
"""


class Parse(unittest.TestCase):
    def test_both_counters(self):
        c = follpin.parse(VMSTAT)
        self.assertEqual((c.acquired, c.released), (1035, 1031))
        self.assertEqual(c.drift, -4)

    def test_missing_counter_is_unavailable(self):
        with self.assertRaises(follpin.Unavailable):
            follpin.parse("nr_foll_pin_acquired 3\n")

    def test_delta_and_text(self):
        d = follpin.Counts(2063, 4107) - follpin.Counts(1035, 1031)
        self.assertEqual(d, follpin.Counts(1028, 3076))
        self.assertEqual(follpin.describe(d),
                         "acquired +1028 released +3076 "
                         "released-acquired +2048")


class Snapshot(unittest.TestCase):
    def test_refresh_is_written_before_the_read(self):
        with tempfile.TemporaryDirectory() as d:
            vm, refresh = os.path.join(d, "vmstat"), os.path.join(d, "r")
            with open(vm, "w") as f:
                f.write(VMSTAT)
            self.assertEqual(follpin.snapshot(vm, refresh).acquired, 1035)
            with open(refresh) as f:
                self.assertEqual(f.read(), "1\n")


if __name__ == "__main__":
    unittest.main()
