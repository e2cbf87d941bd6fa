# SPDX-License-Identifier: GPL-2.0-only
"""Every report in docs/results is what its committed raw data and today's
code give (gpinbench/regen.py; tests/bench/regen-results remakes them)."""

import glob
import os
import unittest

from gpinbench import regen

# Reports in docs/results that regen does not make, and why.
OTHERS = {
    "fuzz.md": "prose: long fuzzing runs, with their commands",
    "pin-lifetime.md": "prose: the lifetime evidence of issue 26, with "
                       "its commands and figures quoted from the runs",
    "memory.md": "tests/bench/vmm-memory's own report",
    "hostile-memory.md": "tests/bench/memory-bench's own report",
    "pin-foll-ab.md": "tests/bench/pin-foll-ab.sh's report; its raw "
                      "files were not committed (issue 28: to be rerun)",
    "datapath.md": "prose; its tables are dio_ab.py's over the committed "
                   "raw files in dio-ab-*/ (the commands are in it)",
    "packages.md": "prose: tests/rig/test-packages' checks per kernel, "
                   "pass or fail, with their command",
    "crash-replay.md": "prose: tests/rig/test-crash-replay.sh's runs, "
                       "points checked per case, with their commands",
}


class Committed(unittest.TestCase):
    def test_each_report_is_its_raw_data(self):
        for name, bench in regen.REPORTS:
            with self.subTest(report=name):
                self.assertTrue(regen.check(name, bench),
                                "docs/results/%s.md differs from what its "
                                "raw data gives: tests/bench/regen-results"
                                % name)

    def test_every_report_is_accounted_for(self):
        made = {name + ".md" for name, _ in regen.REPORTS}
        for path in glob.glob(os.path.join(regen.RESULTS, "**", "*.md"),
                              recursive=True):
            rel = os.path.relpath(path, regen.RESULTS)
            with self.subTest(report=rel):
                self.assertTrue(rel in made or rel in OTHERS,
                                "%s: neither remade from raw data nor "
                                "listed with a reason" % rel)


if __name__ == "__main__":
    unittest.main()
