# SPDX-License-Identifier: GPL-2.0-only
"""What a crash at each flush would have left: replay, fsck, fsynced files.

The guest of tests/rig/test-crash-replay.sh works on ext4 over a disk the
test host logs with dm-log-writes.  After every fsync of a file it appends
"NAME SHA256" to /LEDGER and fsyncs the ledger: so whatever a crash leaves,
every file the ledger names was fsynced before, and must be there with
that content.  For each FLUSH or FUA point of the log after the mark the
test set once the filesystem was made (and at most --points of them,
evenly spread), this replays the log onto an image of the disk as it was
when logging began, and checks a copy of it:

  1. e2fsck -E journal_only replays the journal, as a mount after the
     crash would, and nothing else; then e2fsck -fn must find nothing
     (status 0): whatever else it would fix was lost or torn;
  2. the ledger's every file is there, with its SHA-256 (debugfs reads
     them: nothing is mounted).

    python3 -m gpintest.crashcheck --log DEV --size BYTES --mark NAME \\
        [--points N] [--work DIR]

prints one line per point checked and a summary; exit 1 at the first
point that fails (the image is kept in --work).
"""

import argparse
import hashlib
import os
import shutil
import subprocess
import sys

from gpintest import logwrites


class CheckFailed(Exception):
    pass


def spread(points, most):
    """At most MOST of POINTS, evenly spread, the last always in."""
    if most <= 0 or len(points) <= most:
        return list(points)
    step = len(points) / most
    chosen = [points[int(i * step)] for i in range(most)]
    if chosen[-1] != points[-1]:
        chosen[-1] = points[-1]
    return chosen


def parse_ledger(text):
    """{name: sha256} of the ledger's complete lines; a line cut short by
    the crash (no newline, or not two words) is not a claim."""
    out = {}
    lines = text.split("\n")
    for line in lines[:-1]:             # the last has no newline
        words = line.split()
        if len(words) == 2 and len(words[1]) == 64:
            out[words[0]] = words[1]
    return out


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def debugfs_read(image, path, dest):
    """PATH of the ext4 IMAGE into DEST; False when it is not there."""
    p = run(["debugfs", "-R", "dump %s %s" % (path, dest), image])
    return p.returncode == 0 and os.path.exists(dest) and \
        "File not found" not in p.stderr


def check_image(image, work):
    """The checks of one point on a copy of IMAGE; how many files the
    ledger vouched for."""
    copy = os.path.join(work, "check.img")
    shutil.copyfile(image, copy)
    p = run(["e2fsck", "-y", "-E", "journal_only", copy])
    if p.returncode >= 4:
        raise CheckFailed("e2fsck -E journal_only: status %d: %s"
                          % (p.returncode, p.stdout[-500:]))
    p = run(["e2fsck", "-fn", copy])
    if p.returncode:
        raise CheckFailed("e2fsck -fn after the journal: status %d: %s"
                          % (p.returncode, p.stdout[-500:]))
    dest = os.path.join(work, "file")
    ledger = {}
    if debugfs_read(copy, "/LEDGER", dest):
        with open(dest, errors="replace") as f:
            ledger = parse_ledger(f.read())
    for name, digest in sorted(ledger.items()):
        if os.path.exists(dest):
            os.unlink(dest)
        if not debugfs_read(copy, "/" + name, dest):
            raise CheckFailed("%s: fsynced, not there" % name)
        with open(dest, "rb") as f:
            if hashlib.sha256(f.read()).hexdigest() != digest:
                raise CheckFailed("%s: fsynced, other content" % name)
    return len(ledger)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m gpintest.crashcheck",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--log", required=True)
    ap.add_argument("--size", type=int, required=True,
                    help="the logged device's size in bytes")
    ap.add_argument("--mark", required=True)
    ap.add_argument("--points", type=int, default=0,
                    help="check at most this many points (0: all)")
    ap.add_argument("--work", default="/tmp/crashcheck")
    args = ap.parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    image = os.path.join(args.work, "replay.img")
    with open(image, "wb") as f:
        f.truncate(args.size)
    fd = os.open(image, os.O_WRONLY)
    try:
        with logwrites.Log(args.log) as log:
            entries = list(log.entries())
            marks = [e.index for e in entries if e.mark == args.mark]
            if not marks:
                print("crashcheck: no mark %r in the log" % args.mark)
                return 1
            start = marks[0]
            points = spread([e.index for e in entries
                             if e.is_point and e.index > start], args.points)
            logwrites.replay(log, fd, 0, start)
            done, files = start, 0
            for point in points:
                logwrites.replay(log, fd, done + 1, point)
                done = point
                os.fsync(fd)
                try:
                    n = check_image(image, args.work)
                except CheckFailed as e:
                    print("crashcheck: point %d (entry %d of %d): %s; "
                          "image kept in %s" % (points.index(point) + 1,
                                                point, len(entries), e,
                                                args.work))
                    return 1
                files = max(files, n)
                print("point %d/%d (entry %d): fsck clean, %d fsynced "
                      "files there" % (points.index(point) + 1, len(points),
                                       point, n), flush=True)
    except (OSError, logwrites.LogError) as e:
        print("crashcheck: %s" % e)
        return 1
    finally:
        os.close(fd)
    print("crashcheck: %d points checked, 0 fsck errors, 0 fsynced files "
          "lost (up to %d at a point)" % (len(points), files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
