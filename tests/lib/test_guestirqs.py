# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpintest.guestirqs: a guest interrupt's count."""

import unittest

from gpintest import guestirqs

LOG = ("boot...\r\n"
       "GUEST irq:  25:   1042   7   PCI-MSIX-0000:00:02.0   1-edge"
       "   virtio0-req.0\r\n"
       "GUEST irq:  26:   3   4   PCI-MSIX-0000:00:02.0   2-edge"
       "   virtio0-req.1\r\n"
       "GUEST irq:  24:   0   0   PCI-MSIX-0000:00:02.0   0-edge"
       "   virtio0-config\r\n"
       "not GUEST irq: 27: 99 virtio0-req.0\n")


class Count(unittest.TestCase):
    def test_sum_over_cpus(self):
        self.assertEqual(guestirqs.count(LOG, "virtio0-req.0"), 1049)
        self.assertEqual(guestirqs.count(LOG, "virtio0-req.1"), 7)
        self.assertEqual(guestirqs.count(LOG, "virtio0-config"), 0)

    def test_absent(self):
        self.assertEqual(guestirqs.count(LOG, "virtio1-req.0"), 0)
        self.assertEqual(guestirqs.count("", "x"), 0)


if __name__ == "__main__":
    unittest.main()
