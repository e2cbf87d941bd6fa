# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpintest.testhost: how a boot ended, and what the rig
does about it (without booting anything)."""

import contextlib
import io
import os
import tempfile
import unittest

from gpintest import deaths, testhost


class FakeHost:
    def __init__(self, out):
        self.out = out


class Outcome(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.out = self.dir.name
        self.ledger = deaths.Ledger(os.path.join(self.out, "deaths.jsonl"))
        self.opts = testhost.Options(command=["true"], timeout=60)

    def tearDown(self):
        self.dir.cleanup()

    def console(self, text):
        with open(os.path.join(self.out, "console.log"), "w") as f:
            f.write(text)

    def outcome(self, boot, attempt=1):
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            rc = testhost.outcome(boot, FakeHost(self.out), self.opts,
                                  self.ledger, "t", attempt)
        return rc, out.getvalue(), err.getvalue()

    def test_ends(self):
        self.assertEqual(testhost.Boot(rc=3).end, "done")
        self.assertEqual(testhost.Boot(stopped_for="timeout").end, "timeout")
        self.assertEqual(testhost.Boot(error="RIG-ERROR: x").end, "error")
        self.assertEqual(testhost.Boot(stopped_for="silence").end, "died")
        self.assertEqual(testhost.Boot().end, "died")
        # the rig stopped it for silence after COMMAND's status came:
        # the status counts
        self.assertEqual(testhost.Boot(rc=0, stopped_for="poweroff").end,
                         "done")

    def test_command_status_is_the_rigs(self):
        self.console("@@RIG-BEGIN@@\nhello\n")
        rc, out, _ = self.outcome(testhost.Boot(began=True, rc=5))
        self.assertEqual(rc, 5)
        self.assertEqual(self.ledger.records(), [])
        self.assertNotIn("again", out)

    def test_a_failed_command_reports_its_failed_cases(self):
        self.console("@@RIG-BEGIN@@\n")
        boot = testhost.Boot(began=True, rc=1,
                             failures=["# b: status 11", "not ok 2 - b"])
        rc, _, err = self.outcome(boot)
        self.assertEqual(rc, 1)
        self.assertIn("  | # b: status 11\n  | not ok 2 - b\n", err)
        boot = testhost.Boot(began=True, rc=0, failures=["not ok 1 - x"])
        self.assertNotIn("not ok", self.outcome(boot)[2])

    def test_a_gpin_trace_fails_a_passing_command(self):
        self.console("@@RIG-BEGIN@@\n[ 1.0] WARNING: CPU: 0 PID: 9 at "
                     "x.c:1 gpin_pin+0x1/0x2 [gpin]\n")
        rc, _, err = self.outcome(testhost.Boot(began=True, rc=0))
        self.assertEqual(rc, testhost.EX_RIG)
        self.assertIn("fault in gpin.ko", err)

    def test_first_death_runs_again_second_fails(self):
        self.console("@@RIG-BEGIN@@\nKernel panic - not syncing: Fatal\n")
        rc, out, err = self.outcome(testhost.Boot(began=True))
        self.assertIsNone(rc)
        self.assertIn("# rig: running COMMAND again", out)
        self.assertTrue(os.path.exists(os.path.join(self.out,
                                                    "console.log.died1")))
        self.console("@@RIG-BEGIN@@\n")
        rc, out, err = self.outcome(testhost.Boot(began=True,
                                                  stopped_for="silence",
                                                  cpus="cpu0 x+0x1"), 2)
        self.assertEqual(rc, testhost.EX_RIG)
        self.assertIn("giving up", err)
        kinds = [(r["kind"], r["action"]) for r in self.ledger.records()]
        self.assertEqual(kinds, [("crash", "retried"), ("silence", "failed")])

    def test_a_death_in_gpin_is_never_retried(self):
        self.console("@@RIG-BEGIN@@\nBUG: kernel NULL pointer dereference\n"
                     "RIP: 0010:gpin_walk_pmd+0x1c/0x90 [gpin]\n")
        rc, out, _ = self.outcome(testhost.Boot(began=True))
        self.assertEqual(rc, testhost.EX_RIG)
        self.assertNotIn("again", out)

    def test_boot_death_boots_again_quietly(self):
        self.console("Oops: int3\n")
        rc, out, err = self.outcome(testhost.Boot(began=False))
        self.assertIsNone(rc)
        self.assertEqual(out, "")
        self.assertIn("booting the test host again", err)
        self.assertEqual(self.ledger.records()[0]["kind"], "boot crash")

    def test_timeout_is_not_a_death(self):
        self.console("@@RIG-BEGIN@@\n")
        rc, _, _ = self.outcome(testhost.Boot(began=True,
                                              stopped_for="timeout"))
        self.assertEqual(rc, testhost.EX_TIMEOUT)
        self.assertEqual(self.ledger.records(), [])


class RunScript(unittest.TestCase):
    def test_environment_heartbeat_and_command(self):
        opts = testhost.Options(command=["bash", "-c", "echo 'a b'"],
                                timeout=77, envs=["X=1 2"])
        k = testhost.Kernel("6.1.0-57-amd64", "/var/cache/k", "/v")
        text = testhost.run_script(opts, k, "/tmp/out", "/no/such/syms", "t1",
                                   "/src/gpin")
        self.assertIn("export RIG_KVER=6.1.0-57-amd64", text)
        self.assertIn("export GPIN_DEATH_LOG=/tmp/out/deaths.jsonl", text)
        self.assertIn("export GPIN_TEST_NAME=t1", text)
        self.assertIn("export 'X=1 2'", text)
        self.assertIn('touch "$RIG_OUT/.rig/heartbeat"', text)
        self.assertIn("/proc/kallsyms", text)   # no cached symbols yet
        # the keys are held before COMMAND starts
        self.assertLess(text.index("/src/gpin/tests/rig/kvm-keys"),
                        text.index("exec timeout"))
        self.assertTrue(text.rstrip().endswith(
            "exec timeout --kill-after=10 77 bash -c 'echo '\"'\"'a b'\"'\"''"))


if __name__ == "__main__":
    unittest.main()
