# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpintest.crashcheck: the points and the ledger."""

import unittest

from gpintest import crashcheck

SHA = "ab" * 32


class Spread(unittest.TestCase):
    def test_all_when_few(self):
        self.assertEqual(crashcheck.spread([3, 5, 9], 5), [3, 5, 9])
        self.assertEqual(crashcheck.spread([3, 5, 9], 0), [3, 5, 9])

    def test_even_and_the_last(self):
        got = crashcheck.spread(list(range(100)), 10)
        self.assertEqual(len(got), 10)
        self.assertEqual(got[0], 0)
        self.assertEqual(got[-1], 99)
        self.assertEqual(got, sorted(set(got)))


class Ledger(unittest.TestCase):
    def test_complete_lines_only(self):
        text = "a/f1 %s\nf2 %s\nf3 %s" % (SHA, SHA, SHA[:10])
        self.assertEqual(crashcheck.parse_ledger(text),
                         {"a/f1": SHA, "f2": SHA})

    def test_torn_line_and_garbage(self):
        self.assertEqual(crashcheck.parse_ledger("f1 %s\n\0\0\0\n" % SHA),
                         {"f1": SHA})
        self.assertEqual(crashcheck.parse_ledger(""), {})


if __name__ == "__main__":
    unittest.main()
