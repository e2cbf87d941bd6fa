#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise a module A/B of gpin-dio-bench (tests/bench/dio-ab.sh, module-ab.sh): per
cell (read/write, request size, depth) the median CPU time per I/O of
pin=fast under the old and the new module and of pin=kernel (io_uring,
the same in both), new ÷ old for fast, and fast ÷ kernel under each
module, each paired by round (a round loads both modules, back to back,
in an order that alternates), with 95% bootstrap intervals
(gpinbench/stats.py).  CPU time, not IOPS: the bench's thread does the
pinning, the submission and the completion's user-space half, and under
TCG the time per instruction drifts, which pairing cancels.

Usage: dio_ab.py DIR   (DIR holds {old,new}-{read,write}-ROUND.json)
"""
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpinbench import report, stats  # noqa: E402

METRIC = "cpu_ns_per_io"
NAME = re.compile(r"(old|new)-(read|write)-(\d+)\.json$")


def load(directory):
    """{(module, mode, rw, bs, qd): {round: CPU ns per I/O}}."""
    data = {}
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        m = NAME.search(path)
        if not m:
            continue
        module, rw, rnd = m.group(1), m.group(2), int(m.group(3))
        with open(path) as f:
            for line in f:
                c = json.loads(line)
                key = (module, c["mode"], rw, c["bs"], c["qd"])
                data.setdefault(key, {})[rnd] = c[METRIC]
    return data


def cells(data):
    return sorted({(rw, bs, qd) for _, _, rw, bs, qd in data})


def rows(data):
    out = []
    for rw, bs, qd in cells(data):
        def s(module, mode):
            return data.get((module, mode, rw, bs, qd), {})
        old_f, new_f = s("old", "fast"), s("new", "fast")
        old_k, new_k = s("old", "kernel"), s("new", "kernel")
        kernel = {**old_k, **new_k} if not new_k else new_k
        out.append(["%s %dK qd%d" % (rw, bs // 1024, qd),
                    report.est_md(stats.median(old_f.values())),
                    report.est_md(stats.median(new_f.values())),
                    report.est_md(stats.median(kernel.values())),
                    report.est_md(stats.ratio(new_f, old_f)),
                    report.est_md(stats.ratio(old_f, old_k)),
                    report.est_md(stats.ratio(new_f, new_k))])
    return out


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    data = load(argv[1])
    if not data:
        print("dio_ab: no results in %s" % argv[1], file=sys.stderr)
        return 1
    print("\n".join(report.table(["cell", "old fast ns/IO", "new fast ns/IO",
                        "kernel ns/IO", "fast new ÷ old",
                        "old: fast ÷ kernel", "new: fast ÷ kernel"],
                       rows(data))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
