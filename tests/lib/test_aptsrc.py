# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpintest.aptsrc: deb-src entries and apt's retries."""

import unittest

from gpintest import aptsrc

DEB822 = """Types: deb
# a snapshot
URIs: http://deb.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.example/debian-security
Suites: bookworm-security
Components: main

Types: deb
URIs: http://other.example/trixie
Suites: trixie
Components: main
"""

ONE_LINE = """# comment
deb http://deb.example/debian bookworm main contrib # a note
deb-src http://deb.example/debian bookworm main
deb http://deb.example/debian trixie main
"""


class DebSrc(unittest.TestCase):
    def test_twins_of_this_releases_deb_entries(self):
        text = aptsrc.deb_src([DEB822], ONE_LINE, "bookworm")
        stanzas = text.strip().split("\n\n")
        self.assertEqual(len(stanzas), 2)
        self.assertTrue(stanzas[0].startswith("Types: deb-src\n"))
        self.assertIn("Suites: bookworm bookworm-updates", stanzas[0])
        self.assertIn("Signed-By:", stanzas[0])
        self.assertEqual(stanzas[1], "Types: deb-src\nURIs: "
                         "http://deb.example/debian\nSuites: bookworm\n"
                         "Components: main contrib")

    def test_nothing_for_another_release(self):
        self.assertEqual(aptsrc.deb_src([DEB822], "", "buster"), "")


class Retry(unittest.TestCase):
    def test_until_true_waiting_longer(self):
        results, waits = iter([None, [], ["1.0"]]), []
        self.assertEqual(aptsrc.retry(lambda: next(results), 5, 2,
                                      waits.append), ["1.0"])
        self.assertEqual(waits, [2, 4])

    def test_gives_up(self):
        waits = []
        self.assertFalse(aptsrc.retry(lambda: False, 3, 1, waits.append))
        self.assertEqual(waits, [1, 2])

    def test_newest_in_dpkg_order(self):
        self.assertEqual(aptsrc.newest(["9.0.0-4", "9.0.0-4+deb12u1",
                                        "10.0-1~bpo12"]), "10.0-1~bpo12")


if __name__ == "__main__":
    unittest.main()
