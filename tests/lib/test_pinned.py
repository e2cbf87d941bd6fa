# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpintest.pinned: status fields, sampling, counting."""

import os
import unittest

from gpintest import pinned


class Pinned(unittest.TestCase):
    def test_status_fields(self):
        text = "Name:\tgpin-vmm\nVmPin:\t  524288 kB\nVmRSS:\t  530000 kB\n"
        self.assertEqual(pinned.status_kib(text),
                         {"VmPin": 524288, "VmRSS": 530000})
        self.assertEqual(pinned.status_kib("Name:\tx\n"), {})

    def test_spread(self):
        page = pinned.PAGE
        got = pinned.spread(0x10000000, 100, 10)
        self.assertEqual(len(got), 10)
        self.assertEqual(got[0], 0x10000000)
        self.assertEqual(got[1] - got[0], 10 * page)
        self.assertEqual(len(pinned.spread(0, 5, 10)), 5)

    def test_count_moves(self):
        enoent = -2
        self.assertEqual(pinned.count_moves([0, 0, 1, enoent], [1, 0, 0, enoent]),
                         {"present": 3, "moved": 2, "stayed": 1})
        # a page that went away in between is not a move
        self.assertEqual(pinned.count_moves([0], [enoent]),
                         {"present": 1, "moved": 0, "stayed": 1})

    def test_judge(self):
        ram = 512 << 20
        mig = {"present": 100, "moved": 0, "stayed": 100}
        held = {"VmPin": 524288, "migration": mig}
        self.assertEqual(pinned.judge(held, ram, "pinned"), [])
        self.assertEqual(pinned.judge(held, ram, "unpinned"),
                         ["VmPin 524288 kB on an idle VM",
                          "only 0 of 100 pages migrated"])
        free = {"VmPin": 0, "migration": {"present": 100, "moved": 97,
                                          "stayed": 3}}
        self.assertEqual(pinned.judge(free, ram, "unpinned"), [])
        self.assertEqual(pinned.judge(free, ram, "pinned"),
                         ["VmPin 0 kB, not all of guest RAM (524288 kB)",
                          "97 of 100 pinned pages migrated"])
        self.assertEqual(pinned.judge({"VmPin": 0}, ram, "unpinned"), [])
        self.assertEqual(
            pinned.judge({"VmPin": 0, "migration": {"present": 0}}, ram,
                         "unpinned"), ["no guest RAM page present to migrate"])

    def test_where_own_pages(self):
        """move_pages(2) on this process: its own pages are on a node."""
        buf = bytearray(pinned.PAGE * 4)
        import ctypes
        addr = ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf))
        addr -= addr % pinned.PAGE
        nodes = pinned.where(os.getpid(), [addr + pinned.PAGE])
        self.assertGreaterEqual(nodes[0], 0)


if __name__ == "__main__":
    unittest.main()
