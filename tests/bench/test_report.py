# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of the reports: the targets table, the evaluation of the
records, the e2e metrics and the files e2e_report writes."""

import json
import os
import tempfile
import unittest

from gpinbench import e2e_report, report, stats, targets

CELL = {"cpus": 2, "rw": "randread", "bs": "4k", "qd": 32}


def job(rnd, config, iops, exits=None, cell=CELL, **extra):
    r = dict(cell, kind="job", bench="e2e", round=rnd, config=config,
             iops=float(iops), lat_us=1e6 / iops, ios=int(iops * 5),
             kvm=None, gpin=None, vmm=None)
    if exits is not None:
        r["kvm"] = {"exits": exits * r["ios"],
                    "irq_injections": r["ios"] // 2}
    r.update(extra)
    return r


def runs(rounds=6):
    """fast clearly ahead of locked, level with qemu."""
    out = []
    for rnd in range(1, rounds + 1):
        drift = 1 + 0.3 * (rnd % 2)          # the test host's drift
        out += [job(rnd, "fast", 2000 * drift, exits=3),
                job(rnd, "locked", 1000 * drift, exits=3),
                job(rnd, "qemu", (1900 + 50 * rnd) * drift, exits=0.5)]
    return out


class Table(unittest.TestCase):
    def test_specific_row_wins_over_the_general_one(self):
        qd1 = dict(CELL, qd=1)
        names = {r.name: r for r in targets.rows("e2e", qd1)}
        self.assertEqual(names["fast ÷ qemu IOPS"].value, 1.0)
        self.assertIn("fast ÷ qemu p99 latency", names)
        self.assertEqual(names["fast ÷ qemu p99 latency"].op, "<=")
        names = {r.name: r for r in targets.rows("e2e", CELL)}
        self.assertEqual(names["fast ÷ qemu IOPS"].value, 1.2)
        self.assertIn("kernel ÷ qemu IOPS", names)
        # at qd32, p99 is compared without a target, p99.9 held to QEMU's
        self.assertIsNone(names["fast ÷ qemu p99 latency"].op)
        self.assertEqual(names["fast ÷ qemu p99.9 latency"].value, 1.0)
        four = dict(CELL, cpus=4)
        self.assertIn("kernel ÷ qemu IOPS",
                      {r.name for r in targets.rows("e2e", four)})
        big = dict(CELL, bs="64k")
        names = {r.name: r for r in targets.rows("e2e", big)}
        self.assertEqual(names["fast ÷ qemu IOPS"].value, 1.0)
        self.assertNotIn("kernel ÷ qemu IOPS", names)

    def test_every_row_is_well_formed(self):
        for r in targets.TABLE:
            self.assertIn(r.op, (None, ">=", "<=", "=="), r.name)
            self.assertEqual(r.op is None, r.value is None, r.name)
            if r.bench == "e2e":
                self.assertIn(r.metric, e2e_report.METRICS, r.name)
                self.assertIn(r.num, e2e_report.CONFIGS, r.name)
            if r.den is None:
                self.assertIsNotNone(r.op, r.name)


class Evaluate(unittest.TestCase):
    def test_verdicts_from_rounds(self):
        res = report.evaluate("e2e", [CELL], runs(), e2e_report.METRICS)
        by = {x["row"].name: x for x in res}
        fl = by["fast ÷ locked IOPS"]
        # paired: the drift cancels, every round's ratio is 2
        self.assertEqual(fl["estimate"].pairing, "paired")
        self.assertEqual(fl["estimate"].value, 2)
        self.assertEqual(fl["verdict"], stats.AHEAD)
        fq = by["fast ÷ qemu IOPS"]
        self.assertEqual(fq["verdict"], stats.BEHIND)
        ex = by["fast ÷ qemu exits+interrupts per I/O"]
        self.assertEqual(ex["verdict"], stats.BEHIND)
        # the family: 6 rounds cannot pass Holm for a family of 2 or more
        self.assertGreater(fl["family"], 1)
        self.assertAlmostEqual(fl["p"], 1 / 32)
        self.assertEqual(fl["lean"], stats.AHEAD)
        self.assertEqual(fl["holm"], stats.CANT_TELL)
        self.assertIn("no target of a family this large",
                      report.family_text(res))
        # no target: significance only
        self.assertIsNone(by["fast ÷ locked exits per I/O"]["verdict"])
        self.assertFalse(by["fast ÷ locked exits per I/O"]["estimate"]
                         .significant())

    def test_an_exact_count_is_a_fact(self):
        recs = [job(r, "fast", 2000, gpin={"calls": 10, "pages": 10,
                                            "fallbacks": f,
                                            "lockwait_ns": 0})
                for r, f in ((1, 0), (2, 0), (3, 0))]
        by = {x["row"].name: x for x in report.evaluate(
            "e2e", [CELL], recs, e2e_report.METRICS)}
        fb = by["fast pin fallbacks"]
        self.assertIs(fb["fact"], True)
        self.assertEqual(fb["verdict"], stats.AHEAD)
        self.assertIsNone(fb["holm"])
        recs[1]["gpin"]["fallbacks"] = 3
        by = {x["row"].name: x for x in report.evaluate(
            "e2e", [CELL], recs, e2e_report.METRICS)}
        self.assertIs(by["fast pin fallbacks"]["fact"], False)
        lines = report.comparison_lines(list(by.values()), str)
        self.assertTrue(any("fact: **false** in some round" in l
                            for l in lines))

    def test_missing_side_gives_no_row(self):
        only_fast = [r for r in runs() if r["config"] == "fast"]
        res = report.evaluate("e2e", [CELL], only_fast, e2e_report.METRICS)
        self.assertEqual([x for x in res if x["row"].den], [])


class Metrics(unittest.TestCase):
    def test_per_io_counts(self):
        r = job(1, "fast", 1000, exits=3,
                vmm={"blk0-q0": {"requests": 3000}, "blk0-q1":
                     {"requests": 2000}, "blk0-gpin":
                     {"pin_calls": 5000, "pin_fallbacks": 2,
                      "mmap_lock_wait_us": 500}},
                gpin={"calls": 5000, "pages": 10000, "fallbacks": 2,
                      "lockwait_ns": 500000})
        m = e2e_report.METRICS
        self.assertEqual(m["exits_per_io"](r), 3)
        self.assertEqual(m["irqs_per_io"](r), 0.5)
        self.assertEqual(m["exits_irqs_per_io"](r), 3.5)
        self.assertEqual(m["requests_per_io"](r), 1)
        self.assertEqual(m["pin_calls_per_io"](r), 1)
        self.assertEqual(m["pages_per_call"](r), 2)
        self.assertEqual(m["pin_fallbacks"](r), 2)
        self.assertEqual(m["lock_wait_us_per_io"](r), 0.1)

    def test_gpin_stat_when_the_vmm_said_nothing(self):
        r = job(1, "locked", 1000, gpin={"calls": 5000, "pages": 5000,
                                         "fallbacks": 0,
                                         "lockwait_ns": 2500000})
        self.assertEqual(e2e_report.METRICS["lock_wait_us_per_io"](r), 0.5)
        self.assertEqual(e2e_report.METRICS["pin_fallbacks"](r), 0)
        self.assertIsNone(e2e_report.METRICS["exits_per_io"](r))


class Files(unittest.TestCase):
    def test_writes_md_json_jsonl_png(self):
        recs = runs(6) + [{"kind": "boot", "bench": "e2e", "cpus": 2,
                           "round": 1, "config": "fast", "status": 0,
                           "death": "guest triple fault", "jobs_left": []}]
        meta = {"command": "tests/bench/e2e --quick", "commit": "abc1234",
                "date": "2026-12-05", "kernel": "6.1.0-57-amd64",
                "transport": "pci", "paging": "shadow paging",
                "rounds": 6, "runtime": 5}
        with tempfile.TemporaryDirectory() as d:
            md = e2e_report.write(d, recs, [], meta)
            for name in ("e2e.md", "e2e.json", "e2e.jsonl", "e2e.png"):
                self.assertGreater(os.path.getsize(os.path.join(d, name)),
                                   0, name)
            with open(os.path.join(d, "e2e.json")) as f:
                summary = json.load(f)
            with open(os.path.join(d, "e2e.jsonl")) as f:
                self.assertEqual(len(f.readlines()), len(recs))
        self.assertIn("fast ÷ locked IOPS | 2.00 [2.00, 2.00]", md)
        self.assertIn("**ahead**", md)
        self.assertIn("**behind**", md)
        self.assertIn("guest triple fault", md)
        self.assertEqual(summary["resamples"], stats.RESAMPLES)
        fl = [c for c in summary["comparisons"]
              if c["name"] == "fast ÷ locked IOPS"]
        self.assertEqual(fl[0]["verdict"], "ahead")
        self.assertTrue(fl[0]["significant"])
        self.assertNotIn("--vmm-disk", md)     # a run from before it

    def test_irqoff_windows_per_vcpu_count_and_config(self):
        boots = [{"kind": "boot", "cpus": 2, "config": "fast",
                  "irqoff_max_ns": ns} for ns in (3000, 5000, 4000)]
        boots += [{"kind": "boot", "cpus": 2, "config": "qemu",
                   "irqoff_max_ns": None},
                  {"kind": "boot", "cpus": 4, "config": "locked",
                   "irqoff_max_ns": 0}]
        lines = e2e_report.irqoff_table(boots)
        self.assertEqual(len(lines), 4)         # header, rule, two rows
        # three boots: their range holds the median 75% of the time
        self.assertIn("| 2 | fast | 4.00 [3.00, 5.00] (75%) | 3 |", lines)
        self.assertIn("| 4 | locked | 0 (1 round) | 1 |", lines)
        self.assertEqual(e2e_report.irqoff_table(boots[3:4]),
                         ["No boot recorded it."])

    def test_syscalls_per_io(self):
        r = job(1, "fast", 2000, vmm_syscalls=20000)
        self.assertAlmostEqual(e2e_report.METRICS["syscalls_per_io"](r),
                               20000 / r["ios"])
        self.assertIsNone(e2e_report.METRICS["syscalls_per_io"](
            job(1, "fast", 2000)))

    def test_test_host_starts_counted_per_vcpu_count(self):
        # one start per vCPU count is no death; a second for 2 vCPUs is
        hosts = [{"kind": "host", "cpus": c} for c in (2, 4, 2)]
        text = e2e_report.runs_lines(hosts, [])[0]
        self.assertIn("2 for 2 vCPUs, 1 for 4 vCPUs", text)

    def test_header_names_the_disk_words_every_vmm_config_got(self):
        meta = {"vmm_disk": "irq_hold=4000"}
        self.assertIn("`--disk ...,irq_hold=4000`",
                      e2e_report.vmm_disk_text(meta))
        self.assertEqual(e2e_report.vmm_disk_text({"vmm_disk": ""}), "")


class Format(unittest.TestCase):
    def test_estimates(self):
        self.assertEqual(report.est_md(stats.Estimate(1234.4, 1100, 1400, 6,
                                                      coverage=0.969)),
                         "1234 [1100, 1400]")
        # below LEVEL the coverage is said; unknown: a bootstrap
        self.assertEqual(report.est_md(stats.Estimate(1234.4, 1100, 1400, 3,
                                                      coverage=0.75)),
                         "1234 [1100, 1400] (75%)")
        self.assertEqual(report.est_md(stats.Estimate(1234.4, 1100, 1400, 5)),
                         "1234 [1100, 1400] (bootstrap)")
        self.assertEqual(report.est_md(stats.Estimate(0.0512, n=1)),
                         "0.0512 (1 round)")
        self.assertEqual(report.est_md(stats.Estimate(None)), "-")
        self.assertEqual(report.est_md(stats.Estimate(1164128, 907356,
                                                      1420899, 6,
                                                      coverage=0.969),
                                       report.mega),
                         "1.16M [0.907M, 1.42M]")


if __name__ == "__main__":
    unittest.main()
