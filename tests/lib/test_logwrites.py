# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpintest.logwrites: a dm-log-writes log read and replayed."""

import os
import struct
import tempfile
import unittest

from gpintest import logwrites as lw

BS = 512


def make_log(path, entries, sectorsize=BS, count=None):
    """A log as dm-log-writes lays it out; ENTRIES (flags, sector, data,
    mark, nr): data bytes for a write, mark text for a mark, nr for a
    discard's length."""
    blocks = [b""]
    for flags, sector, data, mark, nr in entries:
        if flags & lw.MARK:
            text = mark.encode()
            head = struct.pack("<QQQQ", 0, 0, flags, len(text)) + text
            blocks.append(head.ljust(sectorsize, b"\0"))
            continue
        nr = nr if flags & lw.DISCARD else len(data) // sectorsize
        blocks.append(struct.pack("<QQQQ", sector, nr, flags, 0)
                      .ljust(sectorsize, b"\0"))
        if not flags & lw.DISCARD:
            blocks += [data[i:i + sectorsize]
                       for i in range(0, len(data), sectorsize)]
    blocks[0] = struct.pack("<QQQI", lw.MAGIC, lw.VERSION,
                            len(entries) if count is None else count,
                            sectorsize).ljust(sectorsize, b"\0")
    with open(path, "wb") as f:
        f.write(b"".join(blocks))


ENTRIES = [
    (lw.MARK, 0, b"", "mkfs", 0),
    (0, 2, b"A" * 2 * BS, "", 0),           # 1: two blocks at 2
    (lw.FLUSH, 0, b"", "", 0),              # 2: a point
    (lw.DISCARD, 3, b"", "", 1),            # 3: block 3 discarded
    (lw.FUA, 5, b"B" * BS, "", 0),          # 4: a point
    (lw.MARK, 0, b"", lw.END_MARK, 0),
]


class LogWrites(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.log = os.path.join(self.dir.name, "log")
        self.dev = os.path.join(self.dir.name, "dev")
        make_log(self.log, ENTRIES)
        with open(self.dev, "wb") as f:
            f.write(b"." * 8 * BS)

    def tearDown(self):
        self.dir.cleanup()

    def open(self):
        log = lw.Log(self.log)
        self.addCleanup(log.close)
        return log

    def device(self):
        with open(self.dev, "rb") as f:
            data = f.read()
        return [data[i * BS:(i + 1) * BS][:1] for i in range(8)]

    def test_entries(self):
        log = self.open()
        got = [e.describe() for e in log.entries()]
        self.assertEqual(got, ["0 mark mkfs", "1 write sector 2 blocks 2",
                               "2 flush sector 0 blocks 0",
                               "3 discard sector 3 blocks 1",
                               "4 fua sector 5 blocks 1",
                               "5 mark " + lw.END_MARK])
        self.assertEqual(lw.points(log), [2, 4])

    def test_replay_to_a_point_then_on(self):
        log = self.open()
        fd = os.open(self.dev, os.O_WRONLY)
        try:
            self.assertEqual(lw.replay(log, fd, last=2).index, 2)
            self.assertEqual(self.device(), [b".", b".", b"A", b"A", b".",
                                             b".", b".", b"."])
            self.assertEqual(lw.replay(log, fd, first=3).index, 5)
        finally:
            os.close(fd)
        self.assertEqual(self.device(), [b".", b".", b"A", b"\0", b".",
                                         b"B", b".", b"."])

    def test_the_super_counts_the_entries(self):
        # written while logging went on: two more entries than it says
        make_log(self.log, ENTRIES, count=4)
        self.assertEqual(len(list(self.open().entries())), 4)

    def test_other_block_sizes(self):
        entries = [(0, 1, b"C" * 4096, "", 0), (lw.FLUSH, 0, b"", "", 0)]
        make_log(self.log, entries, sectorsize=4096)
        log = self.open()
        e = list(log.entries())
        self.assertEqual((e[0].sector, e[0].nr_sectors), (1, 1))
        self.assertEqual(log.data(e[0]), b"C" * 4096)

    def test_not_a_log_or_cut_short(self):
        with open(self.log, "wb") as f:
            f.write(b"\0" * BS)
        with self.assertRaisesRegex(lw.LogError, "not a dm-log-writes"):
            lw.Log(self.log)
        make_log(self.log, ENTRIES)
        with open(self.log, "r+b") as f:
            f.truncate(3 * BS)          # the write's second block gone
        log = self.open()
        with self.assertRaisesRegex(lw.LogError, "past the log's end"):
            fd = os.open(self.dev, os.O_WRONLY)
            try:
                lw.replay(log, fd)
            finally:
                os.close(fd)

    def test_command_line(self):
        self.assertEqual(lw.main(["replay", self.log, self.dev,
                                  "--upto", "1"]), 0)
        self.assertEqual(self.device()[2], b"A")
        self.assertEqual(lw.main(["points", os.path.join(self.dir.name,
                                                         "none")]), 1)


if __name__ == "__main__":
    unittest.main()
