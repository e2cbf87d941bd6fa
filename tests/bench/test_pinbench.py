# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of pin-bench and boot-time: gpin-bench's JSON read as
records, and the reports they write."""

import contextlib
import io
import json
import os
import tempfile
import unittest

from gpinbench import boottime_report, pinbench, pinbench_report, stats

# gpin-bench pin --json, as pin/tools/gpin-bench.c writes it (cut down)
GPIN_BENCH = """{
  "kernel": "6.1.0-57-amd64", "cpus": 2, "module_batch": 64, "duration_s": 1.000, "thread_batch": 64,
  "single": [
    {"backing": "4k", "batch": 64, "mode": "fast", "ns_per_page": 234.20, "calls": 66704, "pages": 4269056, "fast_pages": 4269056, "fallbacks": 0, "huge_leaves": 0, "lock_wait_ms": 0.000, "max_irqoff_us": 3182.3},
    {"backing": "4k", "batch": 64, "mode": "kernel", "ns_per_page": 217.60, "calls": 71824, "pages": 4596736, "fast_pages": 0, "fallbacks": 0, "huge_leaves": 0, "lock_wait_ms": 0.000, "max_irqoff_us": 0.0}
  ],
  "threads": [
    {"threads": 2, "writer": true, "mode": "fast", "pages_per_s": 2060000, "writer_ops_per_s": 6030, "calls": 32182, "pages": 2059648, "fast_pages": 2059648, "fallbacks": 0, "huge_leaves": 0, "lock_wait_ms": 0.000, "max_irqoff_us": 31234.1},
    {"threads": 2, "writer": true, "mode": "locked", "pages_per_s": 347000, "writer_ops_per_s": 866, "calls": 5485, "pages": 351040, "fast_pages": 0, "fallbacks": 0, "huge_leaves": 0, "lock_wait_ms": 1148.320, "max_irqoff_us": 0.0}
  ],
  "ratios": [
    {"ratio": "fast/kernel ns_per_page", "backing": "4k", "batch": 64, "value": 1.076}
  ]
}
"""


def rounds(n):
    """gpin-bench's cells over N rounds, fast 6x locked with the writer."""
    out = []
    for rnd in range(1, n + 1):
        ctx = {"bench": "pin-bench", "cpus": 2, "round": rnd}
        res = json.loads(GPIN_BENCH)
        res["threads"][0]["pages_per_s"] *= 1 + 0.05 * rnd
        out += pinbench.cell_records(res, ctx)
        out.append(dict(ctx, kind="round", modes=["fast", "locked"],
                        status=0))
    return out


class GpinBenchJson(unittest.TestCase):
    def test_one_record_per_cell_and_mode(self):
        recs = pinbench.cell_records(json.loads(GPIN_BENCH),
                                     {"cpus": 2, "round": 3})
        self.assertEqual(len(recs), 4)
        single = [r for r in recs if r["table"] == "single"]
        self.assertEqual({r["config"] for r in single}, {"fast", "kernel"})
        self.assertEqual(single[0]["ns_per_page"], 234.2)
        thr = [r for r in recs if r["table"] == "threads"]
        self.assertIs(thr[1]["writer"], True)
        self.assertEqual(thr[1]["lock_wait_ms"], 1148.32)
        self.assertTrue(all(r["round"] == 3 and "mode" not in r
                            for r in recs))

    def test_options(self):
        a = pinbench.parse_args(["--rounds", "2", "--", "--only",
                                 "threads"])
        self.assertEqual(a.rounds, 2)
        self.assertEqual(a.bench_args, ["--only", "threads"])
        with self.assertRaises(SystemExit), \
                contextlib.redirect_stderr(io.StringIO()):
            pinbench.parse_args(["--", "--modes", "fast"])


class Reports(unittest.TestCase):
    def test_pin_bench_files_and_verdicts(self):
        meta = {"command": "tests/bench/pin-bench --rounds 6",
                "commit": "abc1234", "date": "2026-12-05",
                "kernel": "6.1.0-57-amd64", "rounds": 6, "duration": 1.0,
                "bench_args": ""}
        with tempfile.TemporaryDirectory() as d:
            md = pinbench_report.write(d, rounds(6), [], meta)
            for name in ("md", "json", "jsonl", "png"):
                self.assertGreater(os.path.getsize(
                    os.path.join(d, "pin-bench." + name)), 0)
            with open(os.path.join(d, "pin-bench.json")) as f:
                summary = json.load(f)
        by = {c["name"]: c for c in summary["comparisons"]}
        # fast ÷ locked with the writer, about 6: ahead of 5
        self.assertEqual(by["fast ÷ locked pages/s"]["verdict"],
                         stats.AHEAD)
        # 234.2 ÷ 217.6 in every round: behind "<= 1.0"
        self.assertEqual(by["fast ÷ kernel ns per page"]["verdict"],
                         stats.BEHIND)
        self.assertEqual(by["fast pin fallbacks"]["verdict"], stats.AHEAD)
        self.assertIn("2 CPUs, 2 threads, with writer", md)
        # a gpin-bench from before the split: no PIN/UNPIN tables
        self.assertNotIn("PIN call alone", md)

    def test_pin_and_unpin_tables_when_timed_apart(self):
        recs = rounds(3)
        for r in recs:
            if r.get("table") == "single":
                r["pin_ns_per_page"] = 150.0 if r["config"] == "fast" \
                    else 200.0
                r["unpin_ns_per_page"] = 80.0
        meta = {"command": "pin-bench", "commit": "abc1234",
                "date": "2026-12-07", "kernel": "6.1.0-57-amd64",
                "rounds": 3, "duration": 1.0, "bench_args": ""}
        with tempfile.TemporaryDirectory() as d:
            md = pinbench_report.write(d, recs, [], meta)
            with open(os.path.join(d, "pin-bench.json")) as f:
                summary = json.load(f)
        self.assertIn("PIN call alone", md)
        self.assertIn("UNPIN call alone", md)
        by = {c["name"]: c for c in summary["comparisons"]}
        self.assertAlmostEqual(
            by["fast ÷ kernel PIN ns per page"]["value"], 0.75)

    def test_boot_time(self):
        boots = []
        for rnd in range(1, 4):
            for vmm, t in (("gpin-vmm", 20.0 + rnd), ("qemu", 22.0 + rnd)):
                boots.append({"kind": "boot", "bench": "boot-time",
                              "round": rnd, "config": vmm, "init_s": t,
                              "exit_s": t + 0.3, "death": None})
        meta = {"command": "tests/bench/boot-time", "commit": "abc",
                "date": "2026-12-05", "kernel": "6.1.0-57-amd64",
                "rounds": 3, "cpus": 2}
        with tempfile.TemporaryDirectory() as d:
            md = boottime_report.write(d, boots, [], meta)
            self.assertTrue(os.path.exists(os.path.join(d,
                                                        "boot-time.png")))
        # three rounds: the range, which covers 75%
        self.assertIn("| gpin-vmm | 22.0 [21.0, 23.0] (75%) |", md)
        self.assertIn("qemu ÷ gpin-vmm start to init", md)
        self.assertIn("significant", md)


if __name__ == "__main__":
    unittest.main()
