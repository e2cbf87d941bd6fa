# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpintest.deaths: signatures and the one policy."""

import io
import json
import os
import tempfile
import unittest
from contextlib import redirect_stdout

from gpintest import deaths

TRIPLE = """[    5.1] virtio_blk virtio0: [vda] 2097152 512-byte logical blocks
gpin-vmm: guest triple fault: reset
gpin-vmm: vcpu1: rip 0xffffffff81000000 rsp 0x0 rflags 0x2 cr2 0 cr3 0x1000
"""
DOUBLE = """[   12.0] traps: PANIC: double fault, error_code: 0x0
[   12.0] RIP: 0010:entry_SYSCALL_64+0x0/0x30
[   12.0] Kernel panic - not syncing: Fatal exception in interrupt
"""
HOST_PANIC = """rig: test host up after 4.0 s
@@RIG-BEGIN@@
[  300.1] BUG: unable to handle page fault for address: 0000000000001234
[  300.1] Oops: 0000 [#1] PREEMPT SMP NOPTI
[  300.1] CPU: 1 PID: 77 Comm: gpin-vmm Not tainted 6.1.0-57-amd64
[  300.1] RIP: 0010:__svm_vcpu_run+0x5e/0x120 [kvm_amd]
[  300.1] Kernel panic - not syncing: Fatal exception in interrupt
"""
GPIN_OOPS = """@@RIG-BEGIN@@
[  30.0] BUG: kernel NULL pointer dereference, address: 0000000000000008
[  30.0] RIP: 0010:gpin_walk_pmd+0x1c/0x90 [gpin]
[  30.0] Call Trace:
[  30.0]  gpin_pin_range+0x80/0x120 [gpin]
[  30.0] Kernel panic - not syncing: Fatal exception
"""


class GuestDeath(unittest.TestCase):
    def test_no_death_when_the_status_is_wanted(self):
        self.assertIsNone(deaths.guest_death("GUEST ok\n", 0))
        self.assertIsNone(deaths.guest_death("gpin-vmm: guest kernel "
                                             "panicked\n", 3, want=3))

    def test_a_wrong_status_alone_is_a_failure_not_a_death(self):
        self.assertIsNone(deaths.guest_death("fio: verify failed\n", 11))

    def test_triple_fault_even_with_status_zero(self):
        d = deaths.guest_death(TRIPLE, 0)
        self.assertEqual(d.kind, "triple fault")
        self.assertIn("vcpu1: rip 0xffffffff81000000", d.detail)
        self.assertFalse(d.in_gpin)

    def test_double_fault_names_the_place(self):
        d = deaths.guest_death(DOUBLE, 3)
        self.assertEqual(d.kind, "double fault")
        self.assertIn("entry_SYSCALL_64+0x0/0x30", d.detail)

    def test_stall_and_hang_from_run_vmm(self):
        self.assertEqual(deaths.guest_death(
            "rcu: INFO: rcu_preempt detected stalls\n", 125).kind, "stall")
        self.assertEqual(deaths.guest_death("", 124).kind, "hang")

    RING = ("gpin-vmm: blk0-q%d-ring: avail %d, taken %d, used 7, "
            "decided 7, avail_event 9, used_event 6, inflight %d, run 0, "
            "quiet_us 0, retry 0\r\n")

    def test_a_hang_with_an_idle_ring_is_a_death(self):
        log = (self.RING % (0, 9, 9, 0)) * 2 + self.RING % (1, 4, 4, 0)
        d = deaths.guest_death(log, 124)
        self.assertEqual((d.kind, d.in_gpin), ("hang", False))

    def test_a_hang_with_work_left_in_the_ring_is_gpins(self):
        # chains made available, not taken, notifications off (avail_event
        # behind what was taken), in both snapshots: a lost wake-up
        log = (self.RING % (0, 9, 9, 0) + self.RING % (1, 12, 10, 0)) * 2
        d = deaths.guest_death(log, 124)
        self.assertEqual((d.kind, d.in_gpin), ("stuck queue", True))
        self.assertEqual(d.detail, (self.RING % (1, 12, 10, 0))[10:].strip())
        # a request in flight that did not come back
        d = deaths.guest_death((self.RING % (0, 9, 9, 1)) * 2, 124)
        self.assertEqual((d.kind, d.in_gpin), ("stuck queue", True))
        # without EVENT_IDX: NO_NOTIFY set
        ring = self.RING.replace("avail_event 9", "no_notify 1")
        d = deaths.guest_death((ring % (0, 12, 10, 0)) * 2, 124)
        self.assertEqual(d.kind, "stuck queue")

    def test_chains_waiting_for_a_notify_are_a_hang(self):
        # notifications on (avail_event 9 == taken): the driver owed one,
        # or stopped between publishing and notifying
        line = self.RING % (0, 12, 9, 0)
        d = deaths.guest_death(line * 2, 124)
        self.assertEqual((d.kind, d.in_gpin), ("hang", False))
        self.assertEqual(d.detail, line[10:].strip())
        ring = self.RING.replace("avail_event 9", "no_notify 0")
        self.assertFalse(deaths.guest_death((ring % (0, 12, 10, 0)) * 2,
                                            124).in_gpin)

    def test_a_moving_ring_is_not_stuck(self):
        log = self.RING % (0, 12, 9, 3) + self.RING % (0, 14, 14, 2)
        self.assertEqual(deaths.guest_death(log, 124).kind, "hang")
        # one snapshot alone says nothing
        self.assertEqual(deaths.guest_death(self.RING % (0, 12, 9, 3),
                                            124).kind, "hang")

    def test_an_oops_with_impossible_flags_is_a_death(self):
        # seen in the rig: the guest's oops, then the VMM's registers
        oops = ("[   27.7] RIP: 0010:0x0\r\n"
                "[   27.7] RSP: 0018:ff357ae60005fcd0 EFLAGS: 41319646\r\n")
        d = deaths.guest_death(oops, 11)
        self.assertEqual((d.kind, d.in_gpin), ("corrupt CPU state", False))
        self.assertEqual(d.detail,
                         "RSP: 0018:ff357ae60005fcd0 EFLAGS: 41319646")
        regs = ("gpin-vmm: vcpu0: rip 0xffffffff910e705f "
                "rsp 0xffffffff92003e88 rflags 0x41108212 cr2 0x0\n")
        self.assertEqual(deaths.guest_death(regs, 11).kind,
                         "corrupt CPU state")
        # bit 1 is always set
        self.assertEqual(deaths.guest_death("EFLAGS: 00000200\n", 11).kind,
                         "corrupt CPU state")

    def test_an_oops_with_possible_flags_is_a_plain_failure(self):
        oops = "[ 5.1] RSP: 0018:ffffb0c0 EFLAGS: 00010246\n"
        self.assertIsNone(deaths.guest_death(oops, 11))
        regs = ("gpin-vmm: vcpu1: rip 0x7fe6773482a0 rsp 0x7fe6628f3788 "
                "rflags 0x206 cr2 0x0\n")
        self.assertIsNone(deaths.guest_death(regs, 11))
        # a guest that ended as wanted did not die
        self.assertIsNone(deaths.guest_death("EFLAGS: 41319646\n", 0))

    def test_unexpected_guest_panic(self):
        d = deaths.guest_death("Kernel panic - not syncing: VFS\n", 3)
        self.assertEqual(d.kind, "panic")

    def test_vmm_crash_is_gpin_code(self):
        d = deaths.guest_death("", 128 + 11)
        self.assertEqual(d.kind, "gpin-vmm crash")
        self.assertIn("SIGSEGV", d.detail)
        self.assertTrue(d.in_gpin)
        d = deaths.guest_death("==1==ERROR: AddressSanitizer: heap-use", 1)
        self.assertTrue(d.in_gpin)


class TestHostDeath(unittest.TestCase):
    def test_crash_outside_gpin(self):
        d = deaths.test_host_death(HOST_PANIC, began=True)
        self.assertEqual(d.kind, "crash")
        self.assertIn("Kernel panic - not syncing", d.detail)
        # Comm: gpin-vmm is the process, not gpin code
        self.assertFalse(d.in_gpin)

    def test_crash_in_gpin_ko(self):
        d = deaths.test_host_death(GPIN_OOPS, began=True)
        self.assertTrue(d.in_gpin)
        self.assertEqual(deaths.gpin_frames(GPIN_OOPS),
                         ["gpin_walk_pmd+0x1c", "[gpin]", "gpin_pin_range+0x80"])

    def test_unreliable_frames_are_not_gpin_code(self):
        # TCG's cross-modifying code: an int3 left in a jump label of
        # sched_clock_cpu(); gpin only in the unwinder's "?" guesses
        oops = ("[  130.187517] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI\n"
                "[  130.188389] RIP: 0010:sched_clock_cpu+0x9/0x190\n"
                "[  130.189387] Call Trace:\n"
                "[  130.189387]  update_rq_clock+0x35/0x1a0\n"
                "[  130.189387]  __do_sys_sched_yield+0xe/0x20\n"
                "[  130.189387]  ? gpin_dio_reap+0x313/0x370 [gpin]\n"
                "[  130.189387]  ? gpin_ioctl+0xc1/0x110 [gpin]\n"
                "[  130.189387] Kernel panic - not syncing: Fatal exception"
                " in interrupt\n")
        self.assertEqual(deaths.gpin_frames(oops), [])
        self.assertFalse(deaths.test_host_death(oops, began=True).in_gpin)
        # the same trace with one reliable gpin frame is gpin's
        reliable = oops.replace("  update_rq_clock+0x35/0x1a0",
                                "  gpin_dio_put+0x20/0x90 [gpin]")
        self.assertEqual(deaths.gpin_frames(reliable),
                         ["gpin_dio_put+0x20", "[gpin]"])
        self.assertTrue(deaths.test_host_death(reliable, began=True).in_gpin)

    def test_reset_silence_wedge_boot(self):
        self.assertEqual(deaths.test_host_death("@@RIG-BEGIN@@\n", True).kind,
                         "reset")
        d = deaths.test_host_death("", True, "silence",
                                   "cpu0 exc_int3+0x4e; cpu1 __schedule+0x2")
        self.assertEqual((d.kind, d.detail), ("silence",
                         "cpu0 exc_int3+0x4e; cpu1 __schedule+0x2"))
        self.assertFalse(d.in_gpin)
        self.assertTrue(deaths.test_host_death(
            "", True, "silence", "cpu0 [gpin]+0x1c0").in_gpin)
        self.assertEqual(deaths.test_host_death(
            "watchdog: BUG: soft lockup - CPU#0 stuck for 104s! [x:1]\n",
            True, "wedge").kind, "wedge")
        self.assertEqual(deaths.test_host_death("Oops: int3\n", False).kind,
                         "boot crash")

    def test_soft_lockups_of_100s_and_more(self):
        text = ("BUG: soft lockup - CPU#0 stuck for 44s!\n"
                "BUG: soft lockup - CPU#1 stuck for 104s!\n"
                "BUG: soft lockup - CPU#0 stuck for 130s!\n")
        self.assertEqual(deaths.soft_lockups(text), 2)


class Policy(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.ledger = deaths.Ledger(os.path.join(self.dir.name, "d.jsonl"))

    def tearDown(self):
        self.dir.cleanup()

    def test_two_guest_deaths_are_retried_the_third_fails(self):
        d = deaths.Death("guest", "triple fault")
        self.assertEqual(self.ledger.judge("vmm-blk-6.1", "pci", d), "retry")
        # another case has its own budget
        self.assertEqual(self.ledger.judge("vmm-blk-6.1", "ro", d), "retry")
        self.assertEqual(self.ledger.judge("vmm-blk-6.1", "pci", d), "retry")
        self.assertEqual(self.ledger.judge("vmm-blk-6.1", "pci", d), "fail")
        actions = [(r["case"], r["action"]) for r in self.ledger.records()]
        self.assertEqual(actions, [("pci", "retried"), ("ro", "retried"),
                                   ("pci", "retried"), ("pci", "failed")])

    def test_one_test_host_death_is_retried_the_second_fails(self):
        d = deaths.Death("test host", "crash")
        self.assertEqual(self.ledger.judge("pin-6.1", "", d), "retry")
        self.assertEqual(self.ledger.judge("pin-6.1", "", d), "fail")

    def test_a_death_in_gpin_code_fails_at_once(self):
        d = deaths.Death("test host", "crash", "Oops", in_gpin=True)
        self.assertEqual(self.ledger.judge("pin-6.1", "", d), "fail")

    def test_summary_counts_by_signature(self):
        self.ledger.judge("t", "a", deaths.Death("guest", "hang"))
        self.ledger.judge("t", "", deaths.Death("test host", "silence", "x"))
        lines = deaths.summary_lines(self.ledger.records())
        self.assertEqual(lines[0], "deaths: 2")
        self.assertIn("t/a: guest hang, retried", lines[1])
        self.assertIn("t: test host silence (x), retried", lines[2])
        self.assertIn("guest hang x1, test host silence x1", lines[3])
        self.assertEqual(deaths.summary_lines([]), ["deaths: none"])

    def test_cli_exit_codes(self):
        log = os.path.join(self.dir.name, "guest.log")
        with open(log, "w") as f:
            f.write(TRIPLE)
        argv = ["guest", "--case", "c", "--log", log, "--status", "0",
                "--ledger", self.ledger.path, "--test", "t"]
        out = io.StringIO()
        with redirect_stdout(out):
            self.assertEqual(deaths.main(argv), 10)
            self.assertEqual(deaths.main(argv), 10)
            self.assertEqual(deaths.main(argv), 1)
        self.assertIn("# c: the guest triple fault", out.getvalue())
        self.assertIn("# c: failed: it died 3 times", out.getvalue())
        with open(log, "w") as f:
            f.write("all good\n")
        with redirect_stdout(io.StringIO()):
            self.assertEqual(deaths.main(argv), 0)
        with open(self.ledger.path) as f:
            recs = [json.loads(l) for l in f]
        self.assertEqual(len(recs), 3)


if __name__ == "__main__":
    unittest.main()
