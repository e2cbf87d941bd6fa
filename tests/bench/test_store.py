# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpinbench.store: raw results as JSON lines, and a run
that resumes after its test host died."""

import os
import tempfile
import unittest

from gpinbench import schedule
from gpinbench.store import Store, load


def job(rnd, config):
    return {"kind": "job", "round": rnd, "config": config, "iops": 1000.0}


class Resume(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.store = Store(os.path.join(self.dir.name, "e2e.jsonl"))

    def tearDown(self):
        self.dir.cleanup()

    def key(self, r):
        return (r["round"], r["config"])

    def test_appended_records_read_back_in_order(self):
        self.store.append(job(1, "fast"))
        self.store.append({"kind": "boot", "round": 1, "config": "fast"})
        self.store.append(job(1, "locked"))
        self.assertEqual([r["config"] for r in self.store.records("job")],
                         ["fast", "locked"])
        self.assertEqual(len(self.store.records()), 3)

    def test_a_line_cut_short_by_a_crash_is_skipped(self):
        self.store.append(job(1, "fast"))
        with open(self.store.path, "a") as f:
            f.write('{"kind": "job", "round": 1, "con')   # the crash
        self.assertEqual(self.store.done(self.key, "job"), {(1, "fast")})
        # the second run's first record does not join the torn line
        self.store.append(job(1, "locked"))
        self.assertEqual(self.store.done(self.key, "job"),
                         {(1, "fast"), (1, "locked")})

    def test_the_second_run_runs_only_what_is_left(self):
        configs = ["fast", "locked", "qemu"]
        order = schedule.plan(configs, 3)
        for rnd, cfg in order[:4]:         # the test host died here
            self.store.append(job(rnd, cfg))
        done = Store(self.store.path).done(self.key, "job")
        left = [x for x in order if x not in done]
        self.assertEqual(left, order[4:])
        self.assertEqual(left[0], (2, "qemu"))

    def test_missing_store_is_empty(self):
        self.assertEqual(self.store.records(), [])
        self.assertEqual(load([self.store.path, self.store.path + "x"]), [])


if __name__ == "__main__":
    unittest.main()
