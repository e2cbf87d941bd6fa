# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpinbench/syscalls.py: the tracepoint's id from tracefs,
the threads of a process, and (where this kernel lets us: tracefs
mounted, perf events open to root) a child's system calls counted."""

import os
import subprocess
import sys
import tempfile
import unittest
import unittest.mock

from gpinbench import syscalls

# the child: says it is up (its start-up's syscalls are over), waits for
# a line, makes 1000 getppid() calls, says so, and waits for the end of
# its input
CHILD = """import os, sys
print("ready", flush=True)
sys.stdin.readline()
for _ in range(1000):
    os.getppid()
print("done", flush=True)
sys.stdin.read()
"""


class Syscalls(unittest.TestCase):
    def test_tracepoint_id_from_the_first_tracefs_that_has_it(self):
        with tempfile.TemporaryDirectory() as d:
            empty, full = os.path.join(d, "a"), os.path.join(d, "b")
            os.makedirs(os.path.join(full, os.path.dirname(syscalls.EVENT)))
            with open(os.path.join(full, syscalls.EVENT), "w") as f:
                f.write("443\n")
            self.assertEqual(syscalls.tracepoint_id((empty, full)), 443)
            self.assertIsNone(syscalls.tracepoint_id((empty,)))

    def test_threads_of_a_process(self):
        self.assertIn(os.getpid(), syscalls.threads(os.getpid()))
        p = subprocess.Popen(["true"])
        p.wait()
        self.assertEqual(syscalls.threads(p.pid), [])

    def test_a_process_gone_reads_none(self):
        p = subprocess.Popen(["true"])
        p.wait()
        c = syscalls.Counter(p.pid, event_id=443)
        self.assertIsNone(c.read())
        c.close()

    def with_open(self, fake):
        real = syscalls._open
        syscalls._open = fake
        self.addCleanup(setattr, syscalls, "_open", real)

    def test_a_thread_not_counted_means_no_count(self):
        # two threads, the second's counter refused: a part would
        # undercount, so nothing is counted and the first fd is closed
        opened = []

        def fake(attr, tid):
            if opened:
                return None
            opened.append(os.open(os.devnull, os.O_RDONLY))
            return opened[0]
        self.with_open(fake)
        with unittest.mock.patch.object(syscalls, "threads",
                                        return_value=[1, 2]):
            c = syscalls.Counter(1, event_id=443)
        self.assertIsNone(c.read())
        with self.assertRaises(OSError):
            os.fstat(opened[0])

    def test_an_unreadable_counter_reads_none(self):
        # /dev/null reads empty, as a perf event in error state does
        self.with_open(lambda attr, tid: os.open(os.devnull, os.O_RDONLY))
        with unittest.mock.patch.object(syscalls, "threads",
                                        return_value=[1]):
            c = syscalls.Counter(1, event_id=443)
        self.assertIsNone(c.read())
        c.close()

    def test_a_child_counted(self):
        if syscalls.tracepoint_id() is None:
            self.skipTest("no tracefs with raw_syscalls:sys_enter here")
        p = subprocess.Popen([sys.executable, "-c", CHILD],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
        try:
            self.assertEqual(p.stdout.readline(), "ready\n")
            c = syscalls.Counter(p.pid)
            before = c.read()
            if before is None:
                self.skipTest("perf events on tracepoints refused here")
            p.stdin.write("go\n")
            p.stdin.flush()
            self.assertEqual(p.stdout.readline(), "done\n")
            n = c.read() - before
            c.close()
        finally:
            p.communicate()
        # the 1000 calls, the read of the line, the write and little else
        self.assertGreaterEqual(n, 1000)
        self.assertLess(n, 1100)


if __name__ == "__main__":
    unittest.main()
