# SPDX-License-Identifier: GPL-2.0-only
"""Reading and replaying a dm-log-writes log (issue 32's crash checks).

The kernel's dm-log-writes target (drivers/md/dm-log-writes.c,
Documentation/admin-guide/device-mapper/log-writes.rst) passes every I/O
to a device and logs every write to a second one, in the order the
writes reached stable storage: a write is logged only once a FLUSH that
came after its completion has completed (the FLUSH is logged right
after the writes it covers), a FUA write as soon as it completes.  So
replaying the log onto a copy of the device as it was when logging began,
up to any FLUSH or FUA entry, gives the device as a power cut right after
that point could have left it.

The log, in blocks of the super's sectorsize bytes (the logged device's
logical block size), little-endian:

    block 0      super: magic 0x6a736677736872, version 1, nr_entries,
                 sectorsize
    block 1...   one entry after the other: a header block (sector,
                 nr_sectors, flags, data_len; a mark's text right after
                 the header), then, unless it is a discard, its nr_sectors
                 data blocks

Entry sectors and lengths are in sectorsize blocks too.  The super's
nr_entries is rewritten at every FUA write and mark, so a log read while
logging goes on (or after a crash) may hold more entries than it says;
the walk stops at nr_entries.  Every log ends with the mark
"dm-log-writes-end" when the target is removed.

    python3 -m gpintest.logwrites list LOG
    python3 -m gpintest.logwrites points LOG
    python3 -m gpintest.logwrites replay LOG TARGET [--upto N] [--from N]

list prints the entries; points the indices of the FLUSH and FUA entries
(where a crash check replays to); replay writes entries FROM..UPTO
(inclusive, default all) onto TARGET, a file or block device as it was
when logging began (or as an earlier replay to FROM - 1 left it), discards
as zeros.
"""

import argparse
import dataclasses
import os
import struct
import sys

MAGIC = 0x6a736677736872
VERSION = 1
FLUSH, FUA, DISCARD, MARK, METADATA = 1, 2, 4, 8, 16
END_MARK = "dm-log-writes-end"

_SUPER = struct.Struct("<QQQI")
_ENTRY = struct.Struct("<QQQQ")


class LogError(Exception):
    """Not a dm-log-writes log, or one cut short."""


@dataclasses.dataclass(frozen=True)
class Entry:
    index: int          # 0-based, in log order
    sector: int         # where on the device, in blocks
    nr_sectors: int     # how many blocks
    flags: int
    mark: str           # a mark's text, else ""
    data_at: int        # byte offset of its data in the log (0: none)

    @property
    def is_point(self):
        """A point a crash may leave the device at: right after it."""
        return bool(self.flags & (FLUSH | FUA))

    def describe(self):
        kinds = [n for bit, n in ((FLUSH, "flush"), (FUA, "fua"),
                                  (DISCARD, "discard"), (MARK, "mark"),
                                  (METADATA, "metadata"))
                 if self.flags & bit]
        what = "+".join(kinds) or "write"
        if self.flags & MARK:
            return "%d mark %s" % (self.index, self.mark)
        return "%d %s sector %d blocks %d" % (self.index, what, self.sector,
                                              self.nr_sectors)


class Log:
    """A log file or device, opened for reading."""

    def __init__(self, path):
        self.f = open(path, "rb")
        head = self.f.read(_SUPER.size)
        if len(head) < _SUPER.size:
            raise LogError("%s: shorter than a super block" % path)
        magic, version, self.nr_entries, self.sectorsize = \
            _SUPER.unpack(head)
        if magic != MAGIC:
            raise LogError("%s: not a dm-log-writes log (magic %#x)"
                           % (path, magic))
        if version != VERSION:
            raise LogError("%s: log version %d, not %d"
                           % (path, version, VERSION))
        if self.sectorsize < 512 or self.sectorsize & (self.sectorsize - 1):
            raise LogError("%s: sector size %d" % (path, self.sectorsize))

    def close(self):
        self.f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def entries(self):
        """Every entry the super counts, in order."""
        block = 1
        for i in range(self.nr_entries):
            self.f.seek(block * self.sectorsize)
            head = self.f.read(self.sectorsize)
            if len(head) < _ENTRY.size:
                raise LogError("entry %d: the log ends at block %d"
                               % (i, block))
            sector, nr, flags, data_len = _ENTRY.unpack_from(head)
            mark = ""
            if flags & MARK:
                text = head[_ENTRY.size:_ENTRY.size + data_len]
                mark = text.split(b"\0")[0].decode("utf-8", "replace")
            has_data = nr and not flags & (DISCARD | MARK)
            yield Entry(i, sector, nr, flags, mark,
                        (block + 1) * self.sectorsize if has_data else 0)
            block += 1 + (nr if has_data else 0)

    def data(self, entry):
        """An entry's data blocks."""
        self.f.seek(entry.data_at)
        want = entry.nr_sectors * self.sectorsize
        buf = self.f.read(want)
        if len(buf) != want:
            raise LogError("entry %d: its data runs past the log's end"
                           % entry.index)
        return buf


def points(log):
    """The indices of the entries a crash check replays to."""
    return [e.index for e in log.entries() if e.is_point]


def replay(log, target_fd, first=0, last=None):
    """Writes entries FIRST..LAST (inclusive; LAST None: to the end) to
    the open TARGET_FD.  Returns the last entry written, or None."""
    done = None
    for e in log.entries():
        if last is not None and e.index > last:
            break
        if e.index < first:
            continue
        at = e.sector * log.sectorsize
        if e.flags & DISCARD:
            zero = bytes(log.sectorsize)
            for i in range(e.nr_sectors):
                os.pwrite(target_fd, zero, at + i * log.sectorsize)
        elif e.data_at:
            os.pwrite(target_fd, log.data(e), at)
        done = e
    return done


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m gpintest.logwrites",
                                 description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list").add_argument("log")
    sub.add_parser("points").add_argument("log")
    r = sub.add_parser("replay")
    r.add_argument("log")
    r.add_argument("target")
    r.add_argument("--from", dest="first", type=int, default=0)
    r.add_argument("--upto", type=int)
    args = ap.parse_args(argv)
    try:
        with Log(args.log) as log:
            if args.cmd == "list":
                for e in log.entries():
                    print(e.describe())
            elif args.cmd == "points":
                print(" ".join(map(str, points(log))))
            else:
                fd = os.open(args.target, os.O_WRONLY)
                try:
                    replay(log, fd, args.first, args.upto)
                    os.fsync(fd)
                finally:
                    os.close(fd)
    except (OSError, LogError) as e:
        print("logwrites: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
