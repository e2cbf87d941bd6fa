# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of the end-to-end benchmark's test-host half: the guest's
script, and one boot's jobs put together from a console as it grows."""

import contextlib
import io
import json
import unittest

from gpinbench import e2e, e2e_host, guest
from gpinbench.workload import Workload, parse_list

from test_parse import FIO


class FakeRunning:
    """guest.Running without a process: the console is what the test
    says, SIGUSR1 is noted."""
    is_vmm = True
    log = "fake.log"

    pid = 4242

    def __init__(self):
        self.text = ""
        self.signals = 0

    def signal_state(self):
        self.signals += 1


class FakeCounter:
    """syscalls.Counter of a VMM that makes 250 calls between reads; None
    for every read when the kernel cannot count (no tracefs)."""
    def __init__(self, pid, works=True):
        self.n, self.works, self.closed = 0, works, False

    def read(self):
        if not self.works:
            return None
        n, self.n = self.n, self.n + 250
        return n

    def close(self):
        self.closed = True


class FakeStore:
    def __init__(self):
        self.records = []

    def append(self, r):
        self.records.append(r)


def counters(requests):
    return ("gpin-vmm: blk0-q0: %d requests, %d bytes, 0 errors\n"
            "gpin-vmm: vcpu0: 100 exits, in the guest (last exit 2)\n"
            % (requests, requests * 4096))


class Script(unittest.TestCase):
    def test_the_largest_matrix_fits_the_command_line(self):
        w = parse_list("randread,randwrite:4k,64k,256k:1,32")
        self.assertEqual(len(w), 12)
        line = guest.cmdline_with_script(e2e_host.guest_script(4, 10, w))
        self.assertLess(len(line), guest.CMDLINE_MAX)
        self.assertIn("gpin.sh=", line)

    def test_fio_as_asked(self):
        s = e2e_host.guest_script(4, 7, [Workload("randwrite", "64k", 1)])
        self.assertIn("for j in randwrite:64k:1;", s)
        for opt in ("--numjobs=4", "--runtime=$1", "--direct=1",
                    "--ioengine=libaio", "--filename=/dev/vda"):
            self.assertIn(opt, s)
        self.assertIn("\nf 7 || echo E2E-ERROR", s)
        # no ramp unless asked
        self.assertNotIn("f 0", s)

    def test_the_ramp_runs_before_the_counters_start(self):
        s = e2e_host.guest_script(2, 10, [Workload("randread", "4k", 32)],
                                  ramp=2)
        self.assertLess(s.index("f 2 >/dev/null"), s.index("E2E-START"))
        self.assertLess(s.index("E2E-START"), s.index("f 10 ||"))

    def test_too_long_a_script_is_refused(self):
        with self.assertRaises(ValueError):
            guest.cmdline_with_script("x" * 2000)

    def test_defaults_and_quick(self):
        a = e2e.parse_args([])
        self.assertEqual(a.rounds, 6)
        self.assertEqual(a.configs, list(e2e_host.CONFIGS))
        # 10 s jobs after a 2 s ramp: the full run takes about 2.5 hours
        self.assertEqual((a.runtime, a.ramp), (10, 2))
        self.assertLess(e2e.minutes(a), 180)
        q = e2e.parse_args(["--quick", "--rounds", "2"])
        self.assertEqual(q.rounds, 2)
        self.assertEqual(q.workloads, [Workload("randread", "4k", 32)])
        self.assertNotIn("direct", q.configs)
        # gpin-vmm's defaults unless asked: what a user gets
        self.assertEqual(q.vmm_disk, "")
        self.assertIsNone(q.transport)
        self.assertEqual(e2e.parse_args(["--vmm-disk", "poll=5"]).vmm_disk,
                         "poll=5")


class Jobs(unittest.TestCase):
    def test_lists_and_combinations(self):
        w = parse_list("randread,randwrite:4k:1,32 randread:256k:32")
        self.assertEqual([x.key for x in w],
                         ["randread:4k:1", "randread:4k:32", "randwrite:4k:1",
                          "randwrite:4k:32", "randread:256k:32"])
        self.assertEqual(parse_list("randread:4k:1 randread:4k:1"),
                         [Workload("randread", "4k", 1)])

    def test_bad_lists(self):
        for bad in ("", "randread:4k", "read:4k:1", "randread:8k:1",
                    "randread:4k:0", "randread:4k:x"):
            with self.assertRaises(ValueError, msg=bad):
                parse_list(bad)


class Todo(unittest.TestCase):
    PLAN = {"configs": ["fast", "locked", "qemu"], "rounds": 2,
            "workloads": ["randread:4k:1", "randread:4k:32"]}

    def test_rounds_rotate_configs_and_workloads(self):
        t = e2e_host.todo(self.PLAN, [])
        self.assertEqual([(r, p, c) for r, p, c, _ in t],
                         [(1, 1, "fast"), (1, 2, "locked"), (1, 3, "qemu"),
                          (2, 1, "locked"), (2, 2, "qemu"), (2, 3, "fast")])
        self.assertEqual([w.qd for w in t[0][3]], [1, 32])
        self.assertEqual([w.qd for w in t[3][3]], [32, 1])

    def test_after_a_test_host_death_only_what_is_left(self):
        def job(rnd, config, qd):
            return {"round": rnd, "config": config, "rw": "randread",
                    "bs": "4k", "qd": qd}
        # round 1 finished; round 2's locked had done its first job
        jobs = [job(1, c, q) for c in ("fast", "locked", "qemu")
                for q in (1, 32)] + [job(2, "locked", 32)]
        left = [(r, c, [w.qd for w in ws])
                for r, _, c, ws in e2e_host.todo(self.PLAN, jobs)]
        self.assertEqual(left, [(1, "fast", []), (1, "locked", []),
                                (1, "qemu", []), (2, "locked", [1]),
                                (2, "qemu", [32, 1]), (2, "fast", [32, 1])])


class OneBoot(unittest.TestCase):
    def setUp(self):
        # the progress lines the test host prints
        self.enterContext(contextlib.redirect_stdout(io.StringIO()))

    def test_jobs_with_counters_from_start_to_next_start(self):
        run, store = FakeRunning(), FakeStore()
        ctx = {"bench": "e2e", "cpus": 2, "round": 1, "config": "kernel"}
        b = e2e_host.Boot({"gpin_stat": "gpin-stat"}, ctx, run, store)

        def console(text):
            run.text += text
            return b.on_text(text)

        fio = json.dumps(FIO) + "\n"
        self.assertTrue(console("E2E-START randread:4k:32\n"))
        console(counters(3))                      # SIGUSR1's answer
        console("E2E-STOP randread:4k:32\nE2E-BEGIN randread:4k:32\n" +
                fio + "E2E-END\n")
        self.assertEqual(store.records, [])       # waits for the next START
        console("E2E-START randread:4k:1\n")
        console(counters(1003))
        console("E2E-STOP randread:4k:1\n")
        self.assertEqual(len(store.records), 1)
        console("E2E-BEGIN randread:4k:1\n" + fio + "E2E-END\n")
        console(counters(1503))                   # the exit lines
        b.store_finished(last=True, exited=True)
        self.assertEqual(run.signals, 2)
        self.assertEqual(b.done, ["randread:4k:32", "randread:4k:1"])
        first, second = store.records
        self.assertEqual((first["qd"], second["qd"]), (32, 1))
        self.assertEqual(first["vmm"]["blk0-q0"]["requests"], 1000)
        self.assertEqual(second["vmm"]["blk0-q0"]["requests"], 500)
        self.assertEqual(first["ios"], 7620)

    def run_one_job(self, counter):
        run, store = FakeRunning(), FakeStore()
        ctx = {"bench": "e2e", "cpus": 2, "round": 1, "config": "qemu"}
        b = e2e_host.Boot({"gpin_stat": "gpin-stat"}, ctx, run, store)
        opened = []

        def new_counter(pid):
            opened.append(counter(pid))
            return opened[-1]
        b.new_counter = new_counter
        for text in ("E2E-START randread:4k:32\n", counters(3),
                     "E2E-STOP randread:4k:32\nE2E-BEGIN randread:4k:32\n",
                     json.dumps(FIO) + "\nE2E-END\n"):
            run.text += text
            b.on_text(text)
        b.close()
        b.store_finished(last=True, exited=True)
        return store.records[0], opened

    def test_vmm_syscalls_from_start_to_stop(self):
        rec, opened = self.run_one_job(FakeCounter)
        # opened at START (read 0), read again at STOP (250), then closed
        self.assertEqual(rec["vmm_syscalls"], 250)
        self.assertEqual(len(opened), 1)
        self.assertTrue(opened[0].closed)

    def test_vmm_syscalls_none_when_uncountable(self):
        rec, _ = self.run_one_job(
            lambda pid: FakeCounter(pid, works=False))
        self.assertIsNone(rec["vmm_syscalls"])

    def test_a_dead_guest_keeps_its_finished_jobs(self):
        run, store = FakeRunning(), FakeStore()
        ctx = {"bench": "e2e", "cpus": 2, "round": 1, "config": "kernel"}
        b = e2e_host.Boot({"gpin_stat": "gpin-stat"}, ctx, run, store)
        for text in ("E2E-START randread:4k:32\n", counters(3),
                     "E2E-STOP randread:4k:32\nE2E-BEGIN randread:4k:32\n",
                     json.dumps(FIO) + "\nE2E-END\n",
                     "E2E-START randwrite:4k:32\n", counters(1003),
                     "gpin-vmm: guest triple fault: reset\n"):
            run.text += text
            b.on_text(text)
        b.store_finished(last=True, exited=False)
        self.assertEqual(b.done, ["randread:4k:32"])
        (rec,) = store.records
        self.assertEqual(rec["vmm"]["blk0-q0"]["requests"], 1000)


if __name__ == "__main__":
    unittest.main()


class ConfigVariants(unittest.TestCase):
    PLAN = {"cpus": 2, "vmm": "/b/gpin-vmm", "vmlinuz": "/k", "initrd": "/i",
            "transport": "pci"}

    def disk_of(self, config):
        cmd = e2e_host.vm_command(self.PLAN, config, "console=ttyS0")
        return cmd[cmd.index("--disk") + 1], cmd

    def test_extra_disk_words_after_at(self):
        disk, cmd = self.disk_of("fast@poll=200")
        self.assertEqual(disk, "/dev/nullb0,pin=fast,transport=pci,poll=200")
        self.assertNotIn("--churn", cmd)
        disk, cmd = self.disk_of("locked-churn@iops=500,poll=50")
        self.assertEqual(disk, "/dev/nullb0,pin=locked,transport=pci,"
                         "iops=500,poll=50")
        self.assertIn("--churn", cmd)
        self.assertEqual(e2e_host.pin_mode("fast-churn@poll=1"), "fast")
        disk, _ = self.disk_of("fast@poll=200+irq_hold=500")
        self.assertEqual(disk, "/dev/nullb0,pin=fast,transport=pci,"
                         "poll=200,irq_hold=500")
        disk, _ = self.disk_of("kernel")
        self.assertEqual(disk, "/dev/nullb0,pin=kernel,transport=pci")
        # guest RAM pinned once, in the fast mode: its counters are there
        disk, _ = self.disk_of("registered")
        self.assertEqual(disk, "/dev/nullb0,pin=registered,transport=pci")
        self.assertEqual(e2e_host.pin_mode("registered"), "fast")
        self.assertIsNone(e2e_host.pin_mode("kernel"))

    def test_gpin_vmm_defaults_without_transport(self):
        plan = dict(self.PLAN, transport=None)
        cmd = e2e_host.vm_command(plan, "fast", "console=ttyS0")
        self.assertEqual(cmd[cmd.index("--disk") + 1],
                         "/dev/nullb0,pin=fast")

    def test_qemu_production_setup(self):
        cmd = " ".join(e2e_host.vm_command(self.PLAN, "qemu", "x"))
        self.assertIn("-object iothread,id=io0", cmd)
        self.assertIn("cache=none,aio=io_uring", cmd)
        self.assertIn("virtio-blk-pci,drive=d0,iothread=io0,num-queues=2,"
                      "queue-size=256", cmd)
        cmd = " ".join(e2e_host.vm_command(self.PLAN, "qemu-native", "x"))
        self.assertIn("cache=none,aio=native", cmd)
        self.assertTrue(e2e_host.is_qemu("qemu-native"))
        self.assertFalse(e2e_host.is_qemu("fast"))

    def test_shown_command_hides_the_script(self):
        line = e2e_host.shown_command(["q", "-append",
                                       "quiet gpin.sh=YWJj+/==", "-m", "1"])
        self.assertEqual(line, "q -append 'quiet gpin.sh=<script>' -m 1")

    def test_vmm_disk_words_for_every_vmm_config_before_its_own(self):
        plan = dict(self.PLAN, vmm_disk="irq_hold=4000")
        cmd = e2e_host.vm_command(plan, "locked", "console=ttyS0")
        self.assertEqual(cmd[cmd.index("--disk") + 1],
                         "/dev/nullb0,pin=locked,transport=pci,"
                         "irq_hold=4000")
        cmd = e2e_host.vm_command(plan, "fast@irq_hold=0", "console=ttyS0")
        self.assertEqual(cmd[cmd.index("--disk") + 1],
                         "/dev/nullb0,pin=fast,transport=pci,"
                         "irq_hold=4000,irq_hold=0")
        cmd = e2e_host.vm_command(plan, "qemu", "console=ttyS0")
        self.assertNotIn("irq_hold=4000", " ".join(cmd))

    def test_which_configs_take_extra_words(self):
        self.assertTrue(e2e.known_config("fast@poll=200"))
        self.assertTrue(e2e.known_config("kernel@poll=200"))
        self.assertTrue(e2e.known_config("qemu"))
        self.assertFalse(e2e.known_config("qemu@poll=200"))
        self.assertFalse(e2e.known_config("direct@x"))
        self.assertFalse(e2e.known_config("fastest@poll=200"))

    def test_variants_follow_their_base_in_reports(self):
        from gpinbench import e2e_report
        recs = [{"kind": "job", "config": c} for c in
                ("qemu", "fast@poll=0", "kernel", "fast", "kernel@poll=0")]
        recs.append({"kind": "boot", "config": "locked"})
        self.assertEqual(e2e_report.present(recs),
                         ["fast", "fast@poll=0", "kernel", "kernel@poll=0",
                          "qemu"])
