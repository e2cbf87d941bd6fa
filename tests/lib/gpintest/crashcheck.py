# SPDX-License-Identifier: GPL-2.0-only
"""What a crash at each flush would have left: replay, fsck, fsynced files.

The guest of tests/rig/test-crash-replay.sh works on ext4 over a disk the
test host logs with dm-log-writes, and keeps /LEDGER, a log of what it
did, each line appended and fsynced (so a line is there only if what it
says was done before it):

    PUT NAME SHA       NAME was written and fsynced with content SHA
    MV FROM TO         about to rename FROM to TO (line written before)
    MOVED FROM TO      renamed, both directories fsynced
    RM NAME            about to unlink NAME (never fsynced: may be undone)

What the ledger demands of a crash image (expect()): a PUT file is there
with its content until a later line says otherwise; during an MV exactly
one of FROM and TO is there, with FROM's content (a rename is atomic);
after MOVED, TO is and FROM is not; after RM the file may be there or not
but if it is, it has its content.  For each FLUSH or FUA point of the log
after the mark the test set once the filesystem was made (and at most
--points of them, evenly spread), this replays the log onto an image of
the disk as it was when logging began, and checks a copy of it:

  1. e2fsck -E journal_only replays the journal, as a mount after the
     crash would, and nothing else; then e2fsck -fn must find nothing
     (status 0): whatever else it would fix was lost or torn;
  2. the ledger's demands hold (debugfs reads the files: nothing is
     mounted).

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


class Expect:
    """What a crash image must hold, by the ledger: MUST {name: sha},
    GONE (names not there), MAYBE {name: sha} (either absent or with
    that content) and ONE_OF [(from, to, sha)] (exactly one there)."""

    def __init__(self):
        self.must, self.maybe, self.gone, self.one_of = {}, {}, set(), []

    def _forget(self, name):
        self.must.pop(name, None)
        self.maybe.pop(name, None)
        self.gone.discard(name)
        self.one_of = [p for p in self.one_of if name not in p[:2]]

    def _known(self, name):
        """The content NAME is known to have, or None."""
        if name in self.must:
            return self.must[name]
        for frm, to, sha in self.one_of:
            if name in (frm, to):
                return sha
        return self.maybe.get(name)

    def apply(self, words):
        """One complete ledger line; False when it is not one."""
        op, args = (words[0], words[1:]) if words else ("", [])
        if op == "PUT" and len(args) == 2 and len(args[1]) == 64:
            self._forget(args[0])
            self.must[args[0]] = args[1]
        elif op == "MV" and len(args) == 2:
            sha = self._known(args[0])
            if sha is None:
                return False
            self._forget(args[0])
            self._forget(args[1])
            self.one_of.append((args[0], args[1], sha))
        elif op == "MOVED" and len(args) == 2:
            sha = self._known(args[0]) or self._known(args[1])
            if sha is None:
                return False
            self._forget(args[0])
            self._forget(args[1])
            self.must[args[1]] = sha
            self.gone.add(args[0])
        elif op == "RM" and len(args) == 1:
            sha = self._known(args[0])
            if sha is None:
                return False
            self._forget(args[0])
            self.maybe[args[0]] = sha
        else:
            return False
        return True

    def names(self):
        return len(self.must) + len(self.one_of)

    def violations(self, content):
        """What the image breaks; CONTENT(name) is the SHA-256 of the
        file NAME in the image, or None when it is not there."""
        bad = []
        for name, sha in sorted(self.must.items()):
            got = content(name)
            if got is None:
                bad.append("%s: fsynced, not there" % name)
            elif got != sha:
                bad.append("%s: fsynced, other content" % name)
        for name in sorted(self.gone):
            if content(name) is not None:
                bad.append("%s: renamed away and fsynced, still there"
                           % name)
        for name, sha in sorted(self.maybe.items()):
            got = content(name)
            if got is not None and got != sha:
                bad.append("%s: being unlinked, other content" % name)
        for frm, to, sha in self.one_of:
            there = [n for n in (frm, to) if content(n) is not None]
            if len(there) != 1:
                bad.append("%s -> %s: mid-rename, %d of the two there"
                           % (frm, to, len(there)))
            elif content(there[0]) != sha:
                bad.append("%s: mid-rename, other content" % there[0])
        return bad


def expect(text):
    """The Expect of a ledger's complete lines.  A line cut short by the
    crash (no newline) is not a claim; a complete line that makes no
    sense is an error (the ledger itself came back wrong)."""
    ex = Expect()
    lines = text.split("\n")
    for n, line in enumerate(lines[:-1], 1):    # the last has no newline
        if line.strip("\0") == "":
            continue                # a crash may leave zeros past the end
        if not ex.apply(line.split()):
            raise CheckFailed("LEDGER line %d makes no sense: %r"
                              % (n, line[:120]))
    return ex


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def debugfs_read(image, paths, dest):
    """The files PATHS of the ext4 IMAGE, read with one debugfs (nothing
    is mounted): {path: bytes, or None when it is not there}.  DEST is a
    scratch directory."""
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    cmds = os.path.join(dest, "cmds")
    with open(cmds, "w") as f:
        for i, path in enumerate(paths):
            f.write('dump "%s" "%s"\n' % (path, os.path.join(dest, str(i))))
    run(["debugfs", "-f", cmds, image])
    out = {}
    for i, path in enumerate(paths):
        try:
            with open(os.path.join(dest, str(i)), "rb") as f:
                out[path] = f.read()
        except FileNotFoundError:
            out[path] = None
    return out


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
    dest = os.path.join(work, "files")
    text = debugfs_read(copy, ["/LEDGER"], dest)["/LEDGER"] or b""
    ex = expect(text.decode(errors="replace"))
    names = sorted(set(ex.must) | ex.gone | set(ex.maybe) |
                   {n for p in ex.one_of for n in p[:2]})
    files = debugfs_read(copy, ["/" + n for n in names], dest)
    sha = {n: None if files["/" + n] is None else
           hashlib.sha256(files["/" + n]).hexdigest() for n in names}
    bad = ex.violations(sha.get)
    if bad:
        raise CheckFailed("; ".join(bad[:5]))
    return ex.names()


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
