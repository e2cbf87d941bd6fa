# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpinbench.device: a user's block device is refused while
it may hold anything, on a made-up machine (sysfs, proc, blkid)."""

import os
import stat
import tempfile
import unittest

from gpinbench import device

GIB = 1 << 30


class Refusals(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        self.dev = os.path.join(d, "dev", "fakeblk")
        os.makedirs(os.path.dirname(self.dev))
        try:
            os.mknod(self.dev, stat.S_IFBLK | 0o600, os.makedev(7, 200))
        except OSError as e:
            self.skipTest("cannot make a block device node: %s" % e)
        self.sysfs = os.path.join(d, "sys")
        self.base = os.path.join(self.sysfs, "class", "block", "fakeblk")
        os.makedirs(os.path.join(self.base, "holders"))
        self.write(os.path.join(self.base, "size"), str(8 * GIB // 512))
        self.proc = os.path.join(d, "proc")
        os.makedirs(self.proc)
        self.write(os.path.join(self.proc, "mounts"),
                   "/dev/sda1 / ext4 rw 0 0\n")
        self.write(os.path.join(self.proc, "swaps"),
                   "Filename Type Size Used Priority\n")
        self.blkid = os.path.join(d, "blkid")
        self.signature("")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, path, text):
        with open(path, "w") as f:
            f.write(text)

    def signature(self, lines):
        self.write(self.blkid, "#!/bin/sh\nprintf '%s'\n" % lines)
        os.chmod(self.blkid, 0o755)

    def refusals(self, destroy=False, need=GIB):
        return device.refusals(self.dev, destroy, need, self.sysfs,
                               self.proc, self.blkid)

    def test_an_empty_device_may_be_used(self):
        self.assertEqual(self.refusals(), [])

    def test_a_filesystem_or_a_partition_table_is_refused(self):
        self.signature("DEVNAME=x\\nTYPE=ext4\\n")
        self.assertIn("TYPE=ext4", self.refusals()[0])
        self.signature("PTTYPE=gpt\\n")
        self.assertIn("PTTYPE=gpt", self.refusals()[0])
        # unless the user said the data may go
        self.assertEqual(self.refusals(destroy=True), [])

    def test_mounted_partitions_and_holders_are_refused(self):
        part = os.path.join(self.base, "fakeblk1")
        os.makedirs(part)
        self.write(os.path.join(part, "partition"), "1\n")
        self.write(os.path.join(self.proc, "mounts"),
                   "/dev/fakeblk1 /data xfs rw 0 0\n")
        os.makedirs(os.path.join(self.base, "holders", "dm-0"))
        why = " | ".join(self.refusals())
        self.assertIn("/dev/fakeblk1 is mounted (/data)", why)
        self.assertIn("held by dm-0", why)
        self.assertIn("has partitions (fakeblk1)", why)

    def test_swap_is_refused(self):
        self.write(os.path.join(self.proc, "swaps"),
                   "Filename Type Size Used Priority\n"
                   "/dev/fakeblk partition 100 0 -2\n")
        self.assertEqual(self.refusals(), ["/dev/fakeblk is swap"])

    def test_too_small_or_not_a_device_is_refused_whatever_the_user_says(self):
        self.assertIn("the jobs need", self.refusals(True, 16 * GIB)[0])
        self.assertIn("not a block device",
                      device.refusals(self.blkid, True)[0])
        self.assertIn("No such file",
                      device.refusals(self.dev + "x", True)[0])


if __name__ == "__main__":
    unittest.main()
