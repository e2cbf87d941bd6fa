# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpintest.kernelpkg: which release a kernel series means."""

import unittest

from gpintest import kernelpkg


class FakeApt:
    def __init__(self, names, downloadable):
        self._names, self._ok = names, set(downloadable)

    def names(self, regex):
        return list(self._names)

    def candidate(self, package):
        return "1" if package in self._ok else None


NAMES = ["linux-image-6.1.0-9-amd64", "linux-image-6.1.0-10-amd64",
         "linux-image-6.1.0-10-cloud-amd64", "linux-image-6.1.0-10-rt-amd64",
         "linux-image-6.1.0-10-amd64-unsigned", "linux-image-6.1.0-11-amd64",
         "linux-image-6.12.9+deb12-amd64", "linux-image-6.12.10+deb12-amd64",
         "linux-image-6.12.10+deb12-amd64-dbg"]


def both(release):
    return ["linux-image-" + release, "linux-headers-" + release]


class Resolve(unittest.TestCase):
    def test_newest_with_image_and_headers(self):
        # 6.1.0-11 has no headers yet: passed over, and said so
        apt = FakeApt(NAMES, both("6.1.0-10-amd64") + both("6.1.0-9-amd64")
                      + ["linux-image-6.1.0-11-amd64"])
        notes = []
        self.assertEqual(kernelpkg.resolve("6.1", apt, notes.append),
                         "6.1.0-10-amd64")
        self.assertEqual(notes, ["skipping 6.1.0-11-amd64 (image or headers "
                                 "not downloadable)"])

    def test_natural_order_and_no_other_flavours(self):
        apt = FakeApt(NAMES, both("6.12.9+deb12-amd64") +
                      both("6.12.10+deb12-amd64"))
        self.assertEqual(kernelpkg.resolve("6.12", apt),
                         "6.12.10+deb12-amd64")
        self.assertLess(kernelpkg.version_key("6.1.0-9-amd64"),
                        kernelpkg.version_key("6.1.0-10-amd64"))

    def test_exact_releases(self):
        apt = FakeApt(NAMES, both("6.1.0-9-amd64"))
        self.assertEqual(kernelpkg.resolve("6.1.0-9-amd64", apt),
                         "6.1.0-9-amd64")
        for bad, why in (("6.1.0-10-amd64", "no linux-image"),
                         ("6.1.0-10-cloud-amd64", "generic signed"),
                         ("6.1.0-10-amd64-unsigned", "generic signed"),
                         ("5.10", "unknown kernel")):
            with self.assertRaisesRegex(kernelpkg.Unresolved, why):
                kernelpkg.resolve(bad, apt)

    def test_nothing_downloadable(self):
        with self.assertRaisesRegex(kernelpkg.Unresolved, "no downloadable"):
            kernelpkg.resolve("6.1", FakeApt(NAMES, []))

    def test_policy_text(self):
        text = ("linux-image-6.1.0-10-amd64:\n  Installed: (none)\n"
                "  Candidate: 6.1.38-1\n  Version table:\n")
        self.assertEqual(kernelpkg.candidate_of(text), "6.1.38-1")
        self.assertIsNone(kernelpkg.candidate_of(
            "x:\n  Installed: (none)\n  Candidate: (none)\n"))
        self.assertIsNone(kernelpkg.candidate_of(""))


if __name__ == "__main__":
    unittest.main()
