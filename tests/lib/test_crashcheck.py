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


OTHER = "cd" * 32


def image(files):
    return files.get


def broken(ledger, files):
    return crashcheck.expect(ledger).violations(image(files))


class Ledger(unittest.TestCase):
    def test_put_must_be_there(self):
        text = "PUT a/f1 %s\nPUT f2 %s\n" % (SHA, SHA)
        self.assertEqual(broken(text, {"a/f1": SHA, "f2": SHA}), [])
        self.assertEqual(broken(text, {"a/f1": SHA}),
                         ["f2: fsynced, not there"])
        self.assertEqual(broken(text, {"a/f1": SHA, "f2": OTHER}),
                         ["f2: fsynced, other content"])

    def test_torn_last_line_is_no_claim(self):
        text = "PUT f1 %s\nPUT f2 %s" % (SHA, SHA[:10])
        self.assertEqual(broken(text, {"f1": SHA}), [])
        self.assertEqual(broken("PUT f1 %s\n\0\0\0\n" % SHA, {"f1": SHA}),
                         [])
        self.assertEqual(broken("", {}), [])

    def test_nonsense_line_is_an_error(self):
        with self.assertRaises(crashcheck.CheckFailed):
            crashcheck.expect("PUT f1 short\nPUT f2 %s\n" % SHA)
        with self.assertRaises(crashcheck.CheckFailed):
            crashcheck.expect("MV nothing there\n")

    def test_mid_rename_exactly_one(self):
        text = "PUT a/f0 %s\nMV a/f0 b/g0\n" % SHA
        self.assertEqual(broken(text, {"a/f0": SHA}), [])
        self.assertEqual(broken(text, {"b/g0": SHA}), [])
        self.assertEqual(broken(text, {}),
                         ["a/f0 -> b/g0: mid-rename, 0 of the two there"])
        self.assertEqual(broken(text, {"a/f0": SHA, "b/g0": SHA}),
                         ["a/f0 -> b/g0: mid-rename, 2 of the two there"])
        self.assertEqual(broken(text, {"b/g0": OTHER}),
                         ["b/g0: mid-rename, other content"])

    def test_moved_is_final(self):
        text = "PUT a/f0 %s\nMV a/f0 b/g0\nMOVED a/f0 b/g0\n" % SHA
        self.assertEqual(broken(text, {"b/g0": SHA}), [])
        self.assertEqual(
            broken(text, {"a/f0": SHA}),
            ["b/g0: fsynced, not there",
             "a/f0: renamed away and fsynced, still there"])
        with self.assertRaises(crashcheck.CheckFailed):
            crashcheck.expect(text + "RM a/f0\n")

    def test_unlink_may_be_undone(self):
        text = "PUT f %s\nRM f\n" % SHA
        self.assertEqual(broken(text, {}), [])
        self.assertEqual(broken(text, {"f": SHA}), [])
        self.assertEqual(broken(text, {"f": OTHER}),
                         ["f: being unlinked, other content"])
        self.assertEqual(crashcheck.expect(text).names(), 0)

    def test_put_again_replaces(self):
        text = "PUT f %s\nRM f\nPUT f %s\n" % (SHA, OTHER)
        self.assertEqual(broken(text, {"f": OTHER}), [])
        self.assertEqual(broken(text, {"f": SHA}),
                         ["f: fsynced, other content"])


if __name__ == "__main__":
    unittest.main()
