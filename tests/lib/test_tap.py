# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpintest.tap: the failed cases' reports."""

import unittest

from gpintest import tap


def feed(text):
    f = tap.FailureReports()
    for line in text.splitlines():
        f.feed(line)
    return f


class FailureReports(unittest.TestCase):
    def test_a_failed_case_keeps_its_comments(self):
        f = feed("1..3\n# a: fine\nok 1 - a\n# b: status 11\n"
                 "#   fio: verify failed\nnot ok 2 - b\n# c\nok 3 - c\n")
        self.assertEqual(f.reports, [["# b: status 11",
                                      "#   fio: verify failed",
                                      "not ok 2 - b"]])

    def test_passing_cases_report_nothing(self):
        self.assertEqual(feed("1..2\n# x\nok 1 - a\nok 2 - b # SKIP\n")
                         .lines(), [])

    def test_plain_output_is_not_a_comment(self):
        f = feed("rig: booting\n# why\nnot ok 1 - a\n")
        self.assertEqual(f.lines(), ["# why", "not ok 1 - a"])

    def test_bounded(self):
        text = "".join("# line %d\n" % i for i in range(1000))
        text += "".join("not ok %d - c\n" % i for i in range(50))
        f = feed(text)
        self.assertEqual(len(f.reports), tap.KEEP_REPORTS)
        self.assertEqual(len(f.reports[0]), tap.KEEP_LINES + 1)
        self.assertEqual(f.reports[0][-2], "# line 999")
        # the next case starts with a clean block
        self.assertEqual(f.reports[1], ["not ok 1 - c"])


class Writer(unittest.TestCase):
    def test_results_and_plan(self):
        import io
        out = io.StringIO()
        w = tap.Writer(out)
        self.assertTrue(w.result("a"))
        self.assertFalse(w.result("b", "it broke", ["line 1\r\nline 2"]))
        w.passed_through("ok 3 - c, from elsewhere")
        w.passed_through("# a comment")
        self.assertEqual(w.plan(), 1)
        self.assertEqual(out.getvalue(), "ok 1 - a\nnot ok 2 - b\n"
                         "# it broke\n# line 1\n# line 2\n1..3\n")


class MergeAfterRerun(unittest.TestCase):
    def test_the_first_runs_results_stand(self):
        lines = ["1..3\n", "ok 1 - a\n", "# rig: running COMMAND again\n",
                 "1..3\n", "ok 1 - a\n", "not ok 2 - b\n", "ok 3 - c\n"]
        self.assertEqual(list(tap.merge_after_rerun(lines)),
                         ["1..3\n", "ok 1 - a\n",
                          "# rig: running COMMAND again\n",
                          "not ok 2 - b\n", "ok 3 - c\n"])

    def test_a_trailing_plan_comes_from_the_rerun(self):
        lines = ["ok 1 - a\n", "# rig: running COMMAND again\n",
                 "ok 1 - a\n", "ok 2 - b\n", "1..2\n"]
        self.assertEqual(list(tap.merge_after_rerun(lines)),
                         ["ok 1 - a\n", "# rig: running COMMAND again\n",
                          "ok 2 - b\n", "1..2\n"])

    def test_no_rerun_passes_everything(self):
        lines = ["1..2\n", "ok 1\n", "# note\n", "ok 1 again\n"]
        self.assertEqual(list(tap.merge_after_rerun(lines)), lines)


if __name__ == "__main__":
    unittest.main()
