#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise tests/bench/pin-foll-ab.sh: per cell (backing, batch, mode)
the median ns/page of the old and the new module with their 95% bootstrap
intervals, and new ÷ old paired by round (the two modules of a round run
back to back in one boot), with the verdict against the 10% bound of
issue 12 for the fast mode (gpinbench/stats.py: ahead / behind / can't
tell).  One table for a whole pin + unpin, then, where gpin-bench timed
them apart, one for the PIN call alone (the walk: where the modes differ)
and one for the UNPIN call alone (the release, the same in every mode).

Usage: pin_foll_ab.py DIR   (DIR holds old-N.json and new-N.json)
"""
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpinbench import report, stats  # noqa: E402

BOUND = 1.10    # FOLL_PIN may cost the fast path at most 10% ns/page

# (what, gpin-bench's field, whether the fast mode gets a verdict)
METRICS = (("pin+unpin", "ns_per_page", True),
           ("PIN alone", "pin_ns_per_page", True),
           ("UNPIN alone", "unpin_ns_per_page", False))


def cells(path):
    """{(backing, batch, mode, what): ns/page} of one gpin-bench JSON; a
    metric the file does not have (an older gpin-bench) is left out."""
    with open(path) as f:
        res = json.load(f)
    return {(c["backing"], c["batch"], c["mode"], what): c[field]
            for c in res["single"]
            for what, field, _ in METRICS if field in c}


def rounds(d, which):
    """{round: cells} of DIR's WHICH-N.json files."""
    out = {}
    for path in glob.glob(os.path.join(d, which + "-*.json")):
        m = re.search(r"-(\d+)\.json$", path)
        if m:
            out[int(m.group(1))] = cells(path)
    return out


def by_round(runs, key):
    return {r: c[key] for r, c in runs.items() if key in c}


def judged(what):
    return any(w == what and j for w, _, j in METRICS)


def summarise(old, new):
    """Rows (key, old median, new median, new ÷ old, verdict or '') for
    every cell both modules have: by metric, fast mode first."""
    keys = set()
    for runs in (old, new):
        for c in runs.values():
            keys.update(c)
    order = [w for w, _, _ in METRICS]
    rows = []
    for k in sorted(keys, key=lambda k: (order.index(k[3]), k[2] != "fast",
                                         k[2], k[0], k[1])):
        o, n = by_round(old, k), by_round(new, k)
        if not o or not n:
            continue
        r = stats.ratio(n, o)
        v = (stats.verdict(r, "<=", BOUND)
             if k[2] == "fast" and judged(k[3]) else "")
        rows.append((k, stats.median(o.values()), stats.median(n.values()),
                     r, v))
    return rows


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    old, new = rounds(sys.argv[1], "old"), rounds(sys.argv[1], "new")
    if not old or not new:
        sys.exit("no old-N.json or new-N.json in %s" % sys.argv[1])
    print("%d (old) and %d (new) rounds; medians with 95%% bootstrap "
          "intervals, new ÷ old paired by round" % (len(old), len(new)))
    rows = summarise(old, new)
    for what, _, _ in METRICS:
        mine = [row for row in rows if row[0][3] == what]
        if not mine:
            continue
        print()
        print("%s, ns per page:" % what)
        print()
        print("\n".join(report.table(
            ["backing", "batch", "mode", "old ns/page", "new ns/page",
             "new ÷ old", "new ÷ old <= %.2f" % BOUND],
            [[k[0], k[1], k[2], report.est_md(o), report.est_md(n),
              report.est_md(r), v] for k, o, n, r, v in mine])))


if __name__ == "__main__":
    main()
