# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpintest.summary: skips, the CI policy, the time table."""

import unittest

from gpintest import summary


def test(name, suites, result, stdout="", twins="", start=0.0, duration=1.0):
    return summary.Test.from_json({
        "name": "gpin:%s / %s" % ("+".join(suites), name), "result": result,
        "stdout": stdout, "starttime": start, "duration": duration,
        "env": {"GPIN_TWINS": twins} if twins else {}})


class Parse(unittest.TestCase):
    def test_name_and_suites(self):
        t = test("fuzz-virtio-blk", ["unit", "fuzz"], "OK")
        self.assertEqual((t.name, t.suites), ("fuzz-virtio-blk",
                                              ["unit", "fuzz"]))

    def test_skip_reasons(self):
        self.assertEqual(test("a", ["kvm"], "SKIP",
                              "1..0 # SKIP /dev/kvm is missing\n").skip_reason(),
                         "/dev/kvm is missing")
        self.assertEqual(test("b", ["rig"], "SKIP",
                              "SKIP: no qemu\n").skip_reason(), "no qemu")
        self.assertEqual(test("c", ["rig"], "SKIP", "").skip_reason(),
                         "no reason given")

    def test_skipped_subtests(self):
        t = test("vmm-blk-6.1", ["rig"], "OK",
                 "1..2\nok 1 - ro\nok 2 - verify_fast # SKIP no /dev/gpin\n")
        self.assertEqual(t.skipped_subtests(), [("verify_fast", "no /dev/gpin")])


class Policy(unittest.TestCase):
    def run_report(self, tests, ci=True):
        return summary.report(tests, [], ci)

    def test_skip_without_twin_fails_under_ci_only(self):
        tests = [test("virsh", ["libvirt"], "SKIP", "1..0 # SKIP no kvm")]
        r = self.run_report(tests)
        self.assertEqual((r.passed, r.failed, r.skipped), (0, 1, 0))
        self.assertIn("  virsh: skipped, and it has no twin", r.lines)
        r = self.run_report(tests, ci=False)
        self.assertEqual((r.passed, r.failed, r.skipped), (0, 0, 1))
        self.assertIn("  virsh: no kvm", r.lines)

    def test_skip_with_a_passed_twin_is_allowed(self):
        tests = [test("hostdirect", ["kvm"], "SKIP", "1..0 # SKIP no kvm",
                      twins="hostdirect-6.1 hostdirect-6.12"),
                 test("hostdirect-6.1", ["kvm", "rig"], "OK"),
                 test("hostdirect-6.12", ["kvm", "rig"], "OK")]
        r = self.run_report(tests)
        self.assertTrue(r.ok)
        self.assertEqual(r.lines[-1], "2 passed, 0 failed, 1 skipped")

    def test_skip_whose_twin_failed_or_did_not_run(self):
        tests = [test("hostdirect", ["kvm"], "SKIP", twins="hd-6.1 hd-6.12"),
                 test("hd-6.1", ["kvm", "rig"], "FAIL")]
        r = self.run_report(tests)
        self.assertEqual(r.failed, 2)
        self.assertTrue(any("hd-6.1 (FAIL), hd-6.12 (not run)" in l
                            for l in r.lines))

    def test_skipped_case_of_a_passing_rig_test_fails_under_ci(self):
        tests = [test("vmm-blk-6.1", ["rig"], "OK",
                      "ok 1 - verify_fast # SKIP no /dev/gpin\n")]
        r = self.run_report(tests)
        self.assertEqual((r.passed, r.failed), (0, 1))
        self.assertIn("  vmm-blk-6.1 / verify_fast: no /dev/gpin", r.lines)

    def test_unguarded_suite_may_skip(self):
        r = self.run_report([test("bench", ["bench"], "SKIP")])
        self.assertTrue(r.ok)

    def test_failures_are_listed_and_counted(self):
        r = self.run_report([test("a", ["unit"], "TIMEOUT"),
                             test("b", ["unit"], "OK")])
        self.assertIn("  a: TIMEOUT", r.lines)
        self.assertEqual(r.lines[-1], "1 passed, 1 failed, 0 skipped")


class Times(unittest.TestCase):
    def test_suite_table(self):
        tests = [test("a", ["unit"], "OK", start=0, duration=2),
                 test("b", ["unit", "fuzz"], "OK", start=1, duration=10),
                 test("c", ["rig"], "OK", start=20, duration=100)]
        rows = {s: (n, busy, wall) for s, n, busy, wall in
                summary.suite_table(tests)}
        self.assertEqual(rows["unit"], (2, 12, 11))
        self.assertEqual(rows["fuzz"], (1, 10, 10))
        self.assertEqual(rows["rig"], (1, 100, 100))


if __name__ == "__main__":
    unittest.main()
