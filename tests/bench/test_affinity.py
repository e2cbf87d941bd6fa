# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpinbench.affinity: a VMM's threads pinned to CPUs."""

import os
import tempfile
import unittest

from gpinbench import affinity


class Parse(unittest.TestCase):
    def test_roles_and_lists(self):
        self.assertEqual(affinity.parse("vcpu=0-3,io=4,5"),
                         {"vcpu": [0, 1, 2, 3], "io": [4, 5]})
        self.assertEqual(affinity.parse("io=1"), {"io": [1]})

    def test_bad_specs(self):
        for bad in ("", "cpu=1", "vcpu=", "vcpu=3-1", "vcpu=a", "1,vcpu=2",
                    "vcpu=1,vcpu=2"):
            with self.assertRaises(affinity.SpecError, msg=bad):
                affinity.parse(bad)

    def test_cpus_must_exist(self):
        with self.assertRaisesRegex(affinity.SpecError, "CPUs 0-1"):
            affinity.parse("vcpu=0-2", ncpus=2)


class Threads(unittest.TestCase):
    def test_names(self):
        self.assertEqual(affinity.role_of("vcpu12"), ("vcpu", 12))
        self.assertEqual(affinity.role_of("CPU 3/KVM"), ("vcpu", 3))
        self.assertEqual(affinity.role_of("blk0-q2"), ("io", 2))
        self.assertEqual(affinity.role_of("IO io0"), ("io", 0))
        self.assertIsNone(affinity.role_of("gpin-vmm"))
        self.assertIsNone(affinity.role_of("qemu-system-x86"))

    def test_plan_wraps_and_leaves_the_rest(self):
        threads = [(10, "gpin-vmm"), (11, "vcpu0"), (12, "vcpu1"),
                   (13, "vcpu2"), (14, "blk0-q0"), (15, "blk0-q1")]
        self.assertEqual(affinity.plan(threads, {"vcpu": [4, 5]}),
                         {11: 4, 12: 5, 13: 4})
        self.assertEqual(affinity.plan(threads, {"io": [7]}),
                         {14: 7, 15: 7})

    def test_pinner_pins_each_thread_once_as_it_appears(self):
        calls = []
        with tempfile.TemporaryDirectory() as proc:
            def thread(tid, comm):
                os.makedirs("%s/42/task/%d" % (proc, tid))
                with open("%s/42/task/%d/comm" % (proc, tid), "w") as f:
                    f.write(comm + "\n")
            thread(42, "gpin-vmm")
            thread(43, "vcpu0")
            p = affinity.Pinner(42, {"vcpu": [1], "io": [0]},
                                lambda tid, cpus: calls.append((tid, cpus)),
                                proc)
            self.assertEqual(p.poll(), {"vcpu0": 1})
            thread(44, "blk0-q0")
            self.assertEqual(p.poll(), {"vcpu0": 1, "blk0-q0": 0})
            self.assertEqual(calls, [(43, {1}), (44, {0})])
        self.assertEqual(affinity.threads_of(424242, proc), [])


if __name__ == "__main__":
    unittest.main()
