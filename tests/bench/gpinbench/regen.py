# SPDX-License-Identifier: GPL-2.0-only
"""Every report in docs/results remade from its committed raw data.

A report there is NAME.md beside NAME.jsonl (every raw record of the run)
and NAME.json (the run's settings - command, commit, date, kernel,
rounds... - with the figures the report computed).  remake() writes the
report again from the first two with today's code; check() only computes
its Markdown and says whether it is the committed one, which
tests/bench/test_results.py does for each of them: a figure in docs/ is
what its raw data and the committed code give, or the test fails.
"""

import json
import os
import shutil
import tempfile

from . import rig

RESULTS = os.path.join(rig.TOP, "docs", "results")

# (report, its bench) for every report with raw data; the path without
# the extension, relative to docs/results.
REPORTS = [
    ("e2e", "e2e"),
    ("e2e-802c162/e2e", "e2e"),
    ("e2e-irq-hold-4000/e2e", "e2e"),
    ("e2e-irq-hold", "e2e"),
    ("e2e-poll", "e2e"),
    ("e2e-notify-depth", "e2e"),
    ("e2e-syscalls/e2e", "e2e"),
    ("e2e-lifetime/e2e", "e2e"),
    ("e2e-registered/e2e", "e2e"),
    ("pin-bench", "pin-bench"),
]

# What a report's meta holds (the rest of NAME.json is its figures).
META_KEYS = ("command", "commit", "date", "kernel", "transport",
             "vmm_disk", "paging", "rounds", "runtime", "ramp", "duration",
             "bench_args", "host", "host_kind")


def load(name):
    """(records, ledger, meta) of docs/results/NAME.{jsonl,json}."""
    base = os.path.join(RESULTS, name)
    with open(base + ".jsonl") as f:
        records = [json.loads(line) for line in f if line.strip()]
    with open(base + ".json") as f:
        summary = json.load(f)
    meta = {k: summary[k] for k in META_KEYS if k in summary}
    return records, summary.get("deaths", []), meta


def _writer(bench):
    if bench == "e2e":
        from . import e2e_report
        return e2e_report.write
    from . import pinbench_report
    return pinbench_report.write


def _render(name, bench, out, png):
    records, ledger, meta = load(name)
    return _writer(bench)(out, records, ledger, meta, png=png)


def check(name, bench):
    """Whether docs/results/NAME.md is what its raw data gives today."""
    with tempfile.TemporaryDirectory() as d:
        text = _render(name, bench, d, png=False)
    with open(os.path.join(RESULTS, name + ".md")) as f:
        return f.read() == text


def remake(name, bench, png=True):
    """Writes docs/results/NAME.{md,json,jsonl,png} again."""
    with tempfile.TemporaryDirectory() as d:
        _render(name, bench, d, png)
        for ext in ("md", "json", "jsonl", "png"):
            src = os.path.join(d, "%s.%s" % (bench, ext))
            if os.path.exists(src):
                shutil.copyfile(src, os.path.join(RESULTS,
                                                  "%s.%s" % (name, ext)))
