#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise tests/bench/pin-foll-ab.sh: median ns/page per cell (backing,
batch, mode) over the rounds, for the old and the new module, and new/old.

Usage: pin_foll_ab.py DIR   (DIR holds old-N.json and new-N.json)
"""
import glob
import json
import os
import statistics
import sys


def cells(path):
    """{(backing, batch, mode): ns_per_page} of one gpin-bench JSON."""
    with open(path) as f:
        res = json.load(f)
    return {(c["backing"], c["batch"], c["mode"]): c["ns_per_page"]
            for c in res["single"]}


def medians(d, which):
    runs = [cells(p) for p in sorted(glob.glob(
        os.path.join(d, which + "-*.json")))]
    if not runs:
        sys.exit("no %s-*.json in %s" % (which, d))
    keys = runs[0].keys()
    return {k: statistics.median(r[k] for r in runs if k in r)
            for k in keys}, len(runs)


def main():
    d = sys.argv[1]
    old, n_old = medians(d, "old")
    new, n_new = medians(d, "new")
    print("median of %d (old) and %d (new) rounds" % (n_old, n_new))
    print()
    print("| backing | batch | mode | old ns/page | new ns/page | new / old |")
    print("|---|---:|---|---:|---:|---:|")
    fast = []
    for k in sorted(old, key=lambda k: (k[2], k[0], k[1])):
        if k not in new:
            continue
        ratio = new[k] / old[k]
        if k[2] == "fast":
            fast.append(ratio)
        print("| %s | %d | %s | %.1f | %.1f | %.2f |" %
              (k[0], k[1], k[2], old[k], new[k], ratio))
    if fast:
        print()
        print("fast new / old: median %.2f, range %.2f .. %.2f over %d cells"
              % (statistics.median(fast), min(fast), max(fast), len(fast)))


if __name__ == "__main__":
    main()
