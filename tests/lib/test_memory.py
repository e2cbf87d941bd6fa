# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpintest.memory: the overhead beyond guest RAM."""

import unittest

from gpintest import memory

SMAPS = """55d0c0000000-55d0c0100000 r-xp 00000000 fe:01 123  /usr/bin/gpin-vmm
Size:               1024 kB
Rss:                 800 kB
7f0000000000-7f0020000000 rw-p 00000000 00:00 0 
Size:             524288 kB
Rss:              240000 kB
7f1000000000-7f1000800000 rw-p 00000000 00:00 0 
Size:               8192 kB
Rss:                  64 kB
7f2000000000-7f2020000000 rw-p 00000000 00:00 0  [heap]
Rss:                1000 kB
"""


class Overhead(unittest.TestCase):
    def test_guest_ram_is_the_anonymous_mapping_of_its_size(self):
        s = memory.sample(SMAPS, 512 << 20)
        self.assertTrue(s.found_ram)
        self.assertEqual(s.ram_kib, 240000)
        self.assertEqual(s.rss_kib, 800 + 240000 + 64 + 1000)
        # a named mapping of the same size ([heap]) is not guest RAM
        self.assertEqual(s.overhead_kib, 1864)

    def test_loading_while_an_image_is_mapped(self):
        text = SMAPS + ("7f3000000000-7f3002000000 r--p 00000000 fe:01 9  "
                        "/var/cache/initrd.gz\nRss: 30000 kB\n")
        self.assertTrue(memory.sample(text, 512 << 20,
                                      {"/var/cache/initrd.gz"}).loading)
        self.assertFalse(memory.sample(SMAPS, 512 << 20,
                                       {"/var/cache/initrd.gz"}).loading)

    def test_no_ram_mapping(self):
        s = memory.sample(SMAPS, 1 << 30)
        self.assertFalse(s.found_ram)

    def test_parse_names_and_sizes(self):
        maps = memory.parse_smaps(SMAPS)
        self.assertEqual(len(maps), 4)
        self.assertEqual(maps[0].name, "/usr/bin/gpin-vmm")
        self.assertEqual(maps[1].size, 512 << 20)
        self.assertEqual(maps[3].name, "[heap]")


if __name__ == "__main__":
    unittest.main()
