# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of gpinbench.parse: fio's JSON, gpin-vmm's counter lines,
gpin-stat's table, the guest's markers on a noisy console."""

import json
import unittest

from gpinbench import parse

# fio 3.33's JSON for a --group_reporting randread job, cut to what is read
# (and a few fields that are not)
FIO = {
    "fio version": "fio-3.33",
    "jobs": [{
        "jobname": "randread", "groupid": 0, "error": 0,
        "read": {"io_bytes": 31211520, "io_kbytes": 30480, "bw": 30480,
                 "iops": 7522.211254, "runtime": 1013, "total_ios": 7620,
                 "short_ios": 0, "drop_ios": 0,
                 "clat_ns": {"min": 1000, "max": 90000, "mean": 250000.0,
                             "percentile": {"1.000000": 2000,
                                            "50.000000": 240640,
                                            "99.000000": 618496,
                                            "99.900000": 1236992}},
                 "lat_ns": {"min": 1200, "max": 91000,
                            "mean": 259321.726903}},
        "write": {"io_bytes": 0, "iops": 0.0, "total_ios": 0,
                  "lat_ns": {"mean": 0.0}},
    }],
}


class Fio(unittest.TestCase):
    def test_read_side_of_a_read_job(self):
        r = parse.fio_result(json.dumps(FIO), "randread")
        self.assertAlmostEqual(r["iops"], 7522.211254)
        self.assertAlmostEqual(r["lat_us"], 259.321726903)
        self.assertAlmostEqual(r["p50_us"], 240.64)
        self.assertAlmostEqual(r["p99_us"], 618.496)
        self.assertAlmostEqual(r["p999_us"], 1236.992)
        self.assertEqual(r["ios"], 7620)
        self.assertEqual(r["bytes"], 31211520)
        self.assertEqual(r["fio_errors"], 0)

    def test_write_side_of_a_write_job(self):
        r = parse.fio_result(json.dumps(FIO), "randwrite")
        self.assertEqual(r["ios"], 0)
        self.assertIsNone(r["p50_us"])
        self.assertIsNone(r["p99_us"])
        self.assertIsNone(r["p999_us"])

    def test_warnings_before_the_json(self):
        text = "fio: file hash not empty on exit\n" + json.dumps(FIO)
        self.assertEqual(parse.fio_result(text, "randread")["ios"], 7620)

    def test_no_json(self):
        with self.assertRaises(ValueError):
            parse.fio_result("fio: engine libaio not loadable\n", "randread")
        with self.assertRaises(ValueError):
            parse.fio_result('{"jobs": [{"read": ', "randread")


class VmmCounters(unittest.TestCase):
    EXIT = ("gpin-vmm: churn: 812 mmap/munmap cycles\r\n"
            "gpin-vmm: blk0: gpin.ko pin=fast: 9 DIO requests, 9 pin calls,"
            " 0 fallbacks, 0 us mmap_lock wait\n"
            "gpin-vmm: blk0-q0: 5 requests, 20480 bytes, 0 errors\n"
            "gpin-vmm: blk0-q1: 4 requests, 16384 bytes, 1 errors\n"
            "gpin-vmm: blk0-gpin: dio_requests 9, pin_calls 9, "
            "pin_fallbacks 0, mmap_lock_wait_us 12\n")

    def test_queue_and_backend_lines(self):
        (snap,) = parse.vmm_snapshots(self.EXIT)
        self.assertEqual(snap["blk0-q0"], {"requests": 5, "bytes": 20480,
                                           "errors": 0})
        self.assertEqual(snap["blk0-q1"]["errors"], 1)
        self.assertEqual(snap["blk0-gpin"], {
            "dio_requests": 9, "pin_calls": 9, "pin_fallbacks": 0,
            "mmap_lock_wait_us": 12})
        self.assertEqual(parse.sum_queues(snap, "requests"), 9)
        # "blk0:" (the module's own summary) is not a counter line
        self.assertNotIn("blk0", snap)

    def test_extra_and_odd_fields_are_tolerated(self):
        text = ("gpin-vmm: blk1-q0: 7 requests, 28672 bytes, 0 errors, "
                "3 notifies suppressed, polls 11, state idle\n"
                "gpin-vmm: blk1-io: batches 2\n")
        (snap,) = parse.vmm_snapshots(text)
        self.assertEqual(snap["blk1-q0"], {
            "requests": 7, "bytes": 28672, "errors": 0,
            "notifies_suppressed": 3, "polls": 11})
        self.assertEqual(snap["blk1-io"], {"batches": 2})

    def test_snapshots_split_where_a_device_repeats(self):
        usr1 = ("gpin-vmm: blk0-q0: 1 requests, 4096 bytes, 0 errors\n"
                "gpin-vmm: vcpu0: 100 exits, in the guest (last exit 2)\n")
        later = usr1.replace("1 requests", "3 requests")
        snaps = parse.vmm_snapshots("guest line\n" + usr1 + "more\n" + later)
        self.assertEqual([s["blk0-q0"]["requests"] for s in snaps], [1, 3])
        self.assertEqual(parse.subtract(snaps[1], snaps[0]),
                         {"blk0-q0": {"requests": 2, "bytes": 0,
                                      "errors": 0}})

    def test_no_counters(self):
        self.assertEqual(parse.vmm_snapshots("nothing here\n"), [])


GPIN_STAT = """live_pages 0  batch 64  max_pages_per_pin 512  max_pages_per_file 65536
mode          calls          pages     fast_pages  fallbacks       huge    lockwait_ns   irqoff_max       live failures
fast          12000          12000          12000          0          0              0        41230          0        0
locked         8000           8000              0          0          0      123456789            0          0        0
kernel            0              0              0          0          0              0            0          0        0
"""


class GpinStat(unittest.TestCase):
    def test_table(self):
        t = parse.gpin_stat(GPIN_STAT)
        self.assertEqual(set(t), {"fast", "locked", "kernel"})
        self.assertEqual(t["locked"]["lockwait_ns"], 123456789)
        self.assertEqual(t["fast"]["irqoff_max"], 41230)

    def test_nothing(self):
        self.assertEqual(parse.gpin_stat(""), {})


class Markers(unittest.TestCase):
    def test_a_job_on_a_noisy_console(self):
        body = json.dumps(FIO, indent=1).replace("\n", "\r\n")
        # gpin-vmm's register line cut into a line of the JSON, a guest
        # kernel message between two lines of it
        cut = body.index('"iops"') + 9
        body = (body[:cut] + "gpin-vmm: vcpu1: rip 0xffffffff81000000\n" +
                body[cut:])
        body = body.replace("\r\n", "\r\n[   12.345678] random: crng\r\n",
                            1)
        self.assertIn("12.345678", body)
        text = ("\x1bc\x1b[?7lE2E-START randread:4k:32\r\n"
                "E2E-STOP randread:4k:32\r\n"
                "E2E-BEGIN randread:4k:32\r\n" + body + "\r\nE2E-END\r\n")
        m = parse.Markers("E2E")
        events = []
        # fed in pieces, split mid-line, as a growing log is read
        for i in range(0, len(text), 37):
            events += m.feed(text[i:i + 37])
        self.assertEqual([(e[0], e[1]) for e in events],
                         [("START", "randread:4k:32"),
                          ("STOP", "randread:4k:32"),
                          ("END", "randread:4k:32")])
        r = parse.fio_result(events[2][2], "randread")
        self.assertAlmostEqual(r["iops"], 7522.211254)

    def test_error_marker(self):
        events = parse.Markers("E2E").feed("E2E-ERROR randread:4k:1 fio\n")
        self.assertEqual(events, [("ERROR", "randread:4k:1 fio", "")])

    def test_a_line_not_yet_ended_waits(self):
        m = parse.Markers("E2E")
        self.assertEqual(m.feed("E2E-START a"), [])
        self.assertEqual(m.feed("b\n"), [("START", "ab", "")])


# A 6.1 guest's /proc/interrupts on virtio-pci, before and after a job.
IRQS_BEFORE = """           CPU0       CPU1
  0:         38          0   IO-APIC   2-edge      timer
  4:        100          0   IO-APIC   4-edge      ttyS0
 24:          0          1  PCI-MSIX-0000:00:02.0   0-edge      virtio0-config
 25:       1000          0  PCI-MSIX-0000:00:02.0   1-edge      virtio0-req.0
 26:          0       2000  PCI-MSIX-0000:00:02.0   2-edge      virtio0-req.1
NMI:          0          0   Non-maskable interrupts
LOC:        500        600   Local timer interrupts
RES:         10         20   Rescheduling interrupts
CAL:          1          2   Function call interrupts
TLB:          0          1   TLB shootdowns
ERR:          0
"""
IRQS_AFTER = IRQS_BEFORE.replace("1000          0", "1400          0") \
    .replace("0       2000", "0       2300") \
    .replace("500        600", "550        640") \
    .replace("10         20", "30         25") \
    .replace("100          0", "130          0")


class Interrupts(unittest.TestCase):
    def test_two_tables_give_the_delta_by_kind(self):
        text = IRQS_BEFORE + IRQS_AFTER.replace("\n", "\r\n")
        d = parse.interrupt_delta(text)
        self.assertEqual(d, {"virtio": 700, "ipi": 25, "timer": 90,
                             "other": 30})

    def test_rows_are_named_by_their_action(self):
        t = parse.interrupt_tables(IRQS_BEFORE)
        self.assertEqual(len(t), 1)
        self.assertEqual(t[0]["virtio0-req.1"], 2000)
        self.assertEqual(t[0]["LOC"], 1100)
        self.assertEqual(t[0]["ERR"], 0)

    def test_kinds(self):
        self.assertEqual(parse.interrupt_group("virtio0-req.3"), "virtio")
        self.assertEqual(parse.interrupt_group("virtio2"), "virtio")
        self.assertEqual(parse.interrupt_group("virtio0-config"), "other")
        self.assertEqual(parse.interrupt_group("RES"), "ipi")
        self.assertEqual(parse.interrupt_group("LOC"), "timer")
        self.assertEqual(parse.interrupt_group("timer"), "other")

    def test_one_table_or_none_is_no_delta(self):
        self.assertIsNone(parse.interrupt_delta(IRQS_BEFORE))
        self.assertIsNone(parse.interrupt_delta(""))


if __name__ == "__main__":
    unittest.main()
