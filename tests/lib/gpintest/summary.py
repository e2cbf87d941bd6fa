# SPDX-License-Identifier: GPL-2.0-only
"""The end of scripts/test: what ran, what was skipped and why, how long
each suite took, which guests and test hosts died, and the closing line
"N passed, N failed, N skipped".

It reads Meson's testlog.json (one JSON object per test) and the death
ledger (gpintest/deaths.py).  Under CI=true a skip in a guarded suite is a
failure: on CI nothing has a reason to skip, because the rig needs no
/dev/kvm of the machine.  The one exception is a host-level test that
needs /dev/kvm, declared with GPIN_TWINS (its twins in the rig's test host,
tests/rig/kvm-twin): it may skip when every twin ran and passed.
"""

import dataclasses
import json
import re

from . import deaths

GUARDED_SUITES = {"unit", "fuzz", "libvirt", "kvm", "rig"}
PASSED = {"OK", "EXPECTEDFAIL"}
FAILED = {"FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS"}

_SKIP_PLAN = re.compile(r"^1\.\.0\s*#\s*skip\S*\s*(.*)$", re.I | re.M)
_SKIP_LINE = re.compile(r"^SKIP:?\s+(.*)$", re.M)
_SKIPPED_SUBTEST = re.compile(r"^ok\s+\d+\s*-?\s*(.*?)\s*#\s*skip\S*\s*(.*)$",
                              re.I | re.M)


@dataclasses.dataclass
class Test:
    name: str           # the test's own name
    suites: list        # its suites, as Meson names them
    result: str
    duration: float
    start: float
    stdout: str
    twins: list

    @classmethod
    def from_json(cls, d):
        full = d.get("name", "")
        # "project:suite1+suite2 / name"
        head, _, name = full.partition(" / ")
        suites = head.split(":", 1)[-1].split("+") if name else []
        twins = (d.get("env") or {}).get("GPIN_TWINS", "").split()
        return cls(name or full, suites, d.get("result", "ERROR"),
                   float(d.get("duration") or 0), float(d.get("starttime") or 0),
                   d.get("stdout") or "", twins)

    def skip_reason(self):
        m = _SKIP_PLAN.search(self.stdout) or _SKIP_LINE.search(self.stdout)
        return m.group(1).strip() if m and m.group(1).strip() else \
            "no reason given"

    def skipped_subtests(self):
        return [(m.group(1), m.group(2).strip() or "no reason given")
                for m in _SKIPPED_SUBTEST.finditer(self.stdout)]

    def guarded(self):
        return bool(GUARDED_SUITES.intersection(self.suites))


def load(path):
    tests = []
    with open(path) as f:
        for line in f:
            if line.strip():
                tests.append(Test.from_json(json.loads(line)))
    return tests


@dataclasses.dataclass
class Report:
    lines: list
    passed: int
    failed: int
    skipped: int

    @property
    def ok(self):
        return self.failed == 0


def skips_refused(tests, ci):
    """(test, why) for every skip that CI does not allow."""
    if not ci:
        return []
    by_name = {t.name: t for t in tests}
    refused = []
    for t in tests:
        if not t.guarded():
            continue
        if t.result == "SKIP":
            if not t.twins:
                refused.append((t, "skipped, and it has no twin"))
                continue
            bad = [w for w in t.twins
                   if w not in by_name or by_name[w].result not in PASSED]
            if bad:
                refused.append((t, "skipped, and its twin %s did not pass"
                                % ", ".join("%s (%s)" % (
                                    w, by_name[w].result if w in by_name
                                    else "not run") for w in bad)))
        elif t.result in PASSED:
            for sub, why in t.skipped_subtests():
                refused.append((t, "its case '%s' skipped: %s" % (sub, why)))
    return refused


def suite_table(tests):
    """Rows (suite, tests, seconds of test time, wall seconds) per suite.
    A test in several suites counts in each."""
    rows = {}
    for t in tests:
        for s in t.suites or ["(none)"]:
            r = rows.setdefault(s, [0, 0.0, t.start, t.start + t.duration])
            r[0] += 1
            r[1] += t.duration
            r[2] = min(r[2], t.start)
            r[3] = max(r[3], t.start + t.duration)
    return [(s, n, busy, end - start)
            for s, (n, busy, start, end) in sorted(rows.items())]


def report(tests, death_records, ci, wall=None):
    lines = []
    skipped = [t for t in tests if t.result == "SKIP"]
    subskips = [(t, sub, why) for t in tests if t.result in PASSED
                for sub, why in t.skipped_subtests()]
    if skipped or subskips:
        lines.append("skipped:")
        lines += ["  %s: %s" % (t.name, t.skip_reason()) for t in skipped]
        lines += ["  %s / %s: %s" % (t.name, sub, why)
                  for t, sub, why in subskips]
    else:
        lines.append("skipped: none")

    failed_tests = [t for t in tests if t.result in FAILED]
    if failed_tests:
        lines.append("failed:")
        lines += ["  %s: %s" % (t.name, t.result) for t in failed_tests]

    refused = skips_refused(tests, ci)
    if refused:
        lines.append("CI=true: skips that fail the run:")
        lines += ["  %s: %s" % (t.name, why) for t, why in refused]

    lines += deaths.summary_lines(death_records)

    lines.append("time per suite:")
    lines.append("  %-10s %5s %10s %10s" % ("suite", "tests", "test s", "wall s"))
    for s, n, busy, span in suite_table(tests):
        lines.append("  %-10s %5d %10.0f %10.0f" % (s, n, busy, span))
    if wall is not None:
        lines.append("  %-10s %5d %10s %10.0f" % ("all", len(tests), "", wall))

    refused_tests = {id(t) for t, _ in refused}
    passed = sum(1 for t in tests if t.result in PASSED
                 and id(t) not in refused_tests)
    failed = len(failed_tests) + len(refused_tests)
    nskipped = sum(1 for t in skipped if id(t) not in refused_tests)
    lines.append("%d passed, %d failed, %d skipped" % (passed, failed,
                                                         nskipped))
    return Report(lines, passed, failed, nskipped)


def main(argv=None):
    import argparse
    import os
    p = argparse.ArgumentParser(
        prog="test-summary",
        description="Summarise a Meson test run (scripts/test).")
    p.add_argument("testlog", help="meson-logs/testlog.json")
    p.add_argument("--deaths", default="", help="the death ledger (JSON lines)")
    p.add_argument("--wall", type=float, help="the run's wall seconds")
    args = p.parse_args(argv)
    ci = os.environ.get("CI", "") == "true"
    records = deaths.Ledger(args.deaths).records() if args.deaths else []
    r = report(load(args.testlog), records, ci, args.wall)
    print("\n".join(r.lines))
    return 0 if r.ok else 1
