# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpinbench/rig.py's --report-from half: several runs'
work directories merged into one report only when they measured alike,
and never two runs of the same vCPU count."""

import json
import os
import tempfile
import unittest

from gpinbench import rig

META = {"transport": "pci", "vmm_disk": "irq_hold=4000",
        "paging": "shadow", "rounds": 5, "runtime": 5,
        "kernel": "6.1.0-57-amd64"}


class ReportFromTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def run_dir(self, name, cpus, records, **meta):
        """A work directory as a finished run leaves it."""
        work = os.path.join(self.tmp.name, name)
        d = os.path.join(work, "cpus%d" % cpus)
        os.makedirs(d)
        with open(os.path.join(work, "meta.json"), "w") as f:
            json.dump(dict(META, **meta), f)
        with open(os.path.join(d, "e2e.jsonl"), "w") as f:
            for r in records:
                f.write(json.dumps(dict(r, cpus=cpus)) + "\n")
        return work

    def test_two_vcpu_counts_in_one_report(self):
        a = self.run_dir("a", 2, [{"kind": "job", "iops": 1}],
                         command="e2e --cpus 2", commit="aaa",
                         date="2026-12-06")
        b = self.run_dir("b", 4, [{"kind": "job", "iops": 2},
                                  {"kind": "job", "iops": 3}],
                         command="e2e --cpus 4", commit="bbb",
                         date="2026-12-07")
        meta = rig.load_meta([a, b], "e2e --report-from a --report-from b")
        self.assertEqual(meta["commit"], "aaa, bbb")
        self.assertEqual(meta["date"], "2026-12-06, 2026-12-07")
        self.assertEqual(meta["command"], "e2e --cpus 2; e2e --cpus 4 "
                         "(report: e2e --report-from a --report-from b)")
        self.assertEqual(meta["rounds"], 5)
        records, deaths = rig.load_results([b, a], "e2e.jsonl")
        self.assertEqual(sorted((r["cpus"], r["iops"]) for r in records),
                         [(2, 1), (4, 2), (4, 3)])
        self.assertEqual(deaths, [])

    def test_e2e_report_from_end_to_end(self):
        # the whole outside half of e2e on a finished run's files
        from gpinbench import e2e
        job = {"kind": "job", "bench": "e2e", "rw": "randread", "bs": "4k",
               "qd": 32, "config": "fast", "iops": 1000.0, "lat_us": 32.0,
               "ios": 5000, "kvm": None, "gpin": None, "vmm": None}
        w = self.run_dir("w", 2, [dict(job, round=r) for r in (1, 2, 3)],
                         command="e2e", commit="aaa", date="2026-12-07",
                         kernel="6.1", paging="shadow", runtime=5)
        out = os.path.join(self.tmp.name, "report")
        self.assertEqual(e2e.outside(["--report-from", w, "--no-plot",
                                      "--out", out]), 0)
        with open(os.path.join(out, "e2e.md")) as f:
            self.assertIn("| randread 4K qd32 | 1000 [1000, 1000] (75%) |",
                          f.read())
        self.assertFalse(os.path.exists(os.path.join(out, "e2e.png")))

    def test_one_run_as_before(self):
        a = self.run_dir("a", 2, [], command="e2e", commit="aaa",
                         date="2026-12-06")
        meta = rig.load_meta([a], "e2e --report-from a")
        self.assertEqual(meta["command"], "e2e (report: e2e --report-from a)")
        self.assertEqual(meta["commit"], "aaa")

    def test_different_settings_refused(self):
        a = self.run_dir("a", 2, [], command="x", commit="a", date="d")
        b = self.run_dir("b", 4, [], command="y", commit="b", date="d",
                         rounds=3)
        with self.assertRaises(SystemExit) as e:
            rig.load_meta([a, b], "z")
        self.assertIn("rounds", str(e.exception.code))

    def test_same_vcpu_count_refused(self):
        a = self.run_dir("a", 2, [], command="x", commit="a", date="d")
        b = self.run_dir("b", 2, [], command="y", commit="b", date="d")
        with self.assertRaises(SystemExit) as e:
            rig.load_results([a, b], "e2e.jsonl")
        self.assertIn("cpus2", str(e.exception.code))


class WhereAndWhat(unittest.TestCase):
    def test_default_out_is_never_the_projects_results(self):
        out = rig.default_out("e2e")
        self.assertTrue(out.startswith(os.path.join("gpin-results", "e2e-")))
        self.assertNotIn("docs", out)

    def test_commit_names_a_dirty_tree(self):
        c = rig.commit()
        self.assertRegex(c, r"^([0-9a-f]{7,}(-dirty)?|unknown)$")

    def test_machine_as_recorded(self):
        from gpinbench import report
        self.assertEqual(report.machine({"host": "X, 2 CPUs, Linux 6"}),
                         "X, 2 CPUs, Linux 6")
        self.assertEqual(report.machine({}), "a machine it did not record")
        self.assertRegex(rig.host_text(), r", \d+ CPUs, Linux ")



class NativeHost(unittest.TestCase):
    def setUp(self):
        self.saved = rig.native_problem

    def tearDown(self):
        rig.native_problem = self.saved

    def test_native_where_it_works_else_the_rig(self):
        rig.native_problem = lambda: None
        self.assertEqual(rig.pick_host(None), "native")
        self.assertEqual(rig.pick_host("rig"), "rig")
        rig.native_problem = lambda: "no /dev/gpin"
        self.assertEqual(rig.pick_host(None), "rig")
        with self.assertRaises(rig.Skip) as cm:
            rig.pick_host("native")
        self.assertIn("no /dev/gpin", str(cm.exception))

    def test_run_native_gives_the_rigs_environment(self):
        with tempfile.TemporaryDirectory() as d:
            entry = os.path.join(d, "entry")
            with open(entry, "w") as f:
                f.write("#!/bin/sh\n[ \"$1\" = --inside ] || exit 3\n"
                        "env > \"$RIG_OUT/env\"\nexit 7\n")
            os.chmod(entry, 0o755)
            rc = rig.run_native(entry, {"cpus": 2}, os.path.join(d, "o"),
                                30)
            self.assertEqual(rc, 7)
            with open(os.path.join(d, "o", "env")) as f:
                env = dict(l.rstrip("\n").split("=", 1) for l in f
                           if "=" in l)
            with open(os.path.join(d, "o", "plan.json")) as f:
                self.assertEqual(json.load(f), {"cpus": 2})
        self.assertEqual(env["RIG_OUT"], os.path.join(d, "o"))
        self.assertEqual(env["RIG_RUN"], "1")
        self.assertNotIn("RIG_MODDIR", env)
        self.assertTrue(env["GPIN_DEATH_LOG"].endswith("deaths.jsonl"))

    def test_workdir_under_the_callers_base(self):
        with tempfile.TemporaryDirectory() as d:
            os.environ["GPIN_BENCH_WORKDIR"] = d
            try:
                w = rig.workdir("e2e")
            finally:
                del os.environ["GPIN_BENCH_WORKDIR"]
            self.assertTrue(w.startswith(os.path.join(d, "gpin-e2e.")))


if __name__ == "__main__":
    unittest.main()
