# SPDX-License-Identifier: GPL-2.0-only
"""Raw results as JSON lines, appended the moment each one exists.

A test host that dies mid-run (docs/RIG.md) loses only what was not yet
written: the rig runs the benchmark again (RIG_RUN=2), which reads what
the file already holds and runs only the rest.  A line cut short by the
crash is not a result: it is skipped when read.
"""

import json
import os


class Store:
    def __init__(self, path):
        self.path = path

    def append(self, record):
        """Writes RECORD as one line and pushes it to the disk (over 9p
        from the test host: a later crash must not take it along)."""
        line = json.dumps(record, sort_keys=True) + "\n"
        with open(self.path, "a+b") as f:
            # after a line cut short, start a new one: the torn line
            # stays unreadable, this record does not join it
            if f.tell() > 0:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    line = "\n" + line
            f.write(line.encode())
            f.flush()
            os.fsync(f.fileno())

    def records(self, kind=None):
        """Every whole record (of KIND when given), in the order written."""
        out = []
        try:
            with open(self.path) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            return out
        for line in lines:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if isinstance(r, dict) and (kind is None or r.get("kind") == kind):
                out.append(r)
        return out

    def done(self, key, kind=None):
        """The set of key(record) over the records (of KIND)."""
        return {key(r) for r in self.records(kind)}


def load(paths, kind=None):
    """The records of several stores, in order."""
    out = []
    for p in paths:
        out += Store(p).records(kind)
    return out
