# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpinbench.guest: a command watched through its log, and
stopped when it hangs or its kernel stalls."""

import os
import tempfile
import unittest

from gpinbench import guest


class Watch(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.log = os.path.join(self.dir.name, "guest.log")

    def tearDown(self):
        self.dir.cleanup()

    def watch(self, script, first=10, quiet=10):
        seen = []

        def on_text(text):
            seen.append(text)
            return "MARK" in text

        running = guest.Running(["sh", "-c", script], self.log, is_vmm=False)
        rc = guest.watch(running, on_text, first, quiet)
        return rc, "".join(seen), running

    def test_status_and_every_line(self):
        rc, seen, running = self.watch("echo one; echo MARK two; printf x; "
                                       "exit 3")
        self.assertEqual(rc, 3)
        self.assertEqual(seen, "one\nMARK two\nx")
        self.assertEqual(running.text, seen)

    def test_no_progress_is_a_hang(self):
        rc, seen, _ = self.watch("echo MARK; sleep 30", quiet=0.5)
        self.assertEqual(rc, guest.EX_TIMEOUT)

    def test_a_stalled_kernel_is_stopped(self):
        rc, _, _ = self.watch("echo 'rcu: INFO: rcu_preempt detected stalls "
                              "on CPUs/tasks:'; sleep 30")
        self.assertEqual(rc, guest.EX_STALLED)

    def test_killed_by_a_signal(self):
        rc, _, _ = self.watch("kill -SEGV $$")
        self.assertEqual(rc, 128 + 11)


class Qemu(unittest.TestCase):
    def test_exit_device_status(self):
        self.assertEqual(guest.qemu_status(1), 0)
        self.assertEqual(guest.qemu_status(21), 10)
        self.assertEqual(guest.qemu_status(0), 0)


if __name__ == "__main__":
    unittest.main()
