# SPDX-License-Identifier: GPL-2.0-only
"""tests/bench/e2e: fio in a guest under each configuration, R rounds.

A benchmark, not a test.  In the rig's test host (one per vCPU count, as
many CPUs as the guest has vCPUs), with gpin.ko inserted and a
memory-backed null_blk as the backing, each round boots the same guest
under every configuration, in an order that rotates every round:
  fast, locked, kernel      gpin-vmm --disk ...,pin=MODE,transport=T
  fast-churn, locked-churn  the same with --churn: an mmap_lock writer
                            mapping 64 KiB 1000 times a second
  qemu                      QEMU -accel kvm, virtio-blk-pci, cache=none,
                            aio=io_uring, num-queues = vCPUs
  direct                    the same fio in the test host on the backing
Each boot runs fio (direct=1, libaio, numjobs = vCPUs) for every workload
(--rw x --bs x --qd), reading the test host's KVM counters, gpin.ko's and
gpin-vmm's own around each job.  The report gives every figure and ratio
as a median with its 95% bootstrap interval and each target as ahead,
behind or can't tell (tests/bench/gpinbench/stats.py, targets.py).
Writes OUT/e2e.md, e2e.json, e2e.png and e2e.jsonl (every raw result);
the logs stay in the work directory it prints.  A test host that dies
is run again once by the rig and keeps the rounds it finished; a guest
that dies is booted again for its jobs as the death policy allows
(tests/lib/gpintest/deaths.py).  TCG figures are not absolute: compare
within one run.

Exit: 0 done, 77 skipped (reason printed), else failed.
"""

import argparse
import os
import sys

from . import e2e_host, rig
from .workload import RWS, SIZES, cross

ALL_CONFIGS = e2e_host.CONFIGS
# The full run (60-90 minutes on a 2-core machine)
DEFAULTS = {"rounds": 5, "cpus": "2 4", "runtime": 5,
            "configs": ",".join(ALL_CONFIGS),
            "rw": " ".join(RWS), "bs": "4k 256k", "qd": "1 32"}
# scripts/demo's: one workload, every configuration but direct
QUICK = {"rounds": 3, "cpus": "2", "runtime": 5,
         "configs": "fast,locked,fast-churn,locked-churn,kernel,qemu",
         "rw": "randread", "bs": "4k", "qd": "32"}
# Seconds a boot may take beyond its fio jobs (the rig's own limit: each
# guest has its own watchdog, e2e_host.BOOT_LIMIT and JOB_SLACK)
BOOT_BUDGET = 300
JOB_BUDGET = 30


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="tests/bench/e2e", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int,
                   help="rounds of every configuration (default %d; "
                   "--quick: %d)" % (DEFAULTS["rounds"], QUICK["rounds"]))
    p.add_argument("--configs", help="comma-separated, of %s (default: all)"
                   % ",".join(ALL_CONFIGS))
    p.add_argument("--cpus", help="guest vCPUs, one test host each, with as "
                   "many CPUs (4 on a 2-core machine is oversubscribed); "
                   "default '%s'" % DEFAULTS["cpus"])
    p.add_argument("--runtime", type=int,
                   help="seconds per fio job (default %d)"
                   % DEFAULTS["runtime"])
    p.add_argument("--rw", help="fio directions (default '%s')"
                   % DEFAULTS["rw"])
    p.add_argument("--bs", help="block sizes, of %s (default '%s')"
                   % (" ".join(SIZES), DEFAULTS["bs"]))
    p.add_argument("--qd", help="iodepths (default '%s')" % DEFAULTS["qd"])
    p.add_argument("--quick", action="store_true",
                   help="scripts/demo's run: %d rounds, %s vCPUs, %s %s "
                   "qd%s, %d s, configs %s (options given as well win)"
                   % (QUICK["rounds"], QUICK["cpus"], QUICK["rw"],
                      QUICK["bs"], QUICK["qd"], QUICK["runtime"],
                      QUICK["configs"]))
    p.add_argument("--transport", choices=("pci", "mmio"), default="pci",
                   help="gpin-vmm's virtio transport (default pci, as "
                   "QEMU's)")
    p.add_argument("--kernel", default="6.1",
                   help="test-host and guest kernel (default 6.1)")
    p.add_argument("--build", default=os.environ.get(
        "GPIN_BUILD", os.path.join(rig.TOP, "build")),
        help="gpin's Meson build (gpin-vmm, gpin-stat); default build/")
    p.add_argument("--perf", action="store_true",
                   help="profile the whole test host (perf record -a) "
                   "during each boot; flat profiles beside the logs")
    p.add_argument("--rig-append", default="", metavar="ARGS",
                   help="test-host kernel arguments (tests/rig/rig "
                   "--append): kvm_amd.npt=1 runs the guests on nested "
                   "paging, as a real host does, instead of the rig's "
                   "shadow paging")
    p.add_argument("--report-from", metavar="WORK",
                   help="no runs: the report of an earlier run's raw "
                   "results (WORK: the work directory it printed)")
    p.add_argument("--out", default=os.path.join(rig.TOP, "docs",
                                                 "results"),
                   help="where e2e.{md,json,jsonl,png} go (default "
                   "docs/results)")
    args = p.parse_args(argv)
    preset = QUICK if args.quick else DEFAULTS
    for k, v in preset.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    args.configs = args.configs.split(",")
    bad = [c for c in args.configs if c not in ALL_CONFIGS]
    if bad:
        p.error("unknown config(s) %s" % ",".join(bad))
    if args.rounds < 1 or args.runtime < 1:
        p.error("--rounds and --runtime want at least 1")
    try:
        args.cpus = [int(c) for c in args.cpus.split()]
        qds = [int(q) for q in args.qd.split()]
    except ValueError:
        p.error("--cpus and --qd want numbers")
    if any(b not in SIZES for b in args.bs.split()):
        p.error("--bs: of %s" % " ".join(SIZES))
    args.workloads = cross(args.rw.split(), args.bs.split(), qds)
    return args


def paging(append):
    if "kvm_amd.npt=1" in append.split():
        return "nested paging (kvm_amd.npt=1, as on a real host)"
    return "shadow paging (kvm_amd.npt=0, the rig default)"


def rig_timeout(args):
    per_round = sum(BOOT_BUDGET + len(args.workloads) *
                    (args.runtime + JOB_BUDGET) for _ in args.configs)
    return args.rounds * per_round


def run_all(args, work, meta):
    """The runs, one test host per vCPU count."""
    rig.require_host(args.perf)
    vmm = rig.build_tool(args.build, "vmm/gpin-vmm")
    stat = rig.build_tool(args.build, "pin/gpin-stat")
    img = rig.guest_image(args.kernel)
    ko = rig.gpin_ko(img["KVER"])
    meta["kernel"] = img["KVER"]
    rig.save_meta(work, meta)
    print("e2e: %d rounds x %d configurations x %d fio jobs of %d s, "
          "vCPUs %s; guest %s; transport=%s; results in %s"
          % (args.rounds, len(args.configs), len(args.workloads),
             args.runtime, " ".join(map(str, args.cpus)), img["KVER"],
             args.transport, work), flush=True)
    for cpus in args.cpus:
        print("=== test host with %d CPUs, guest with %d vCPUs" % (cpus, cpus),
              flush=True)
        plan = {"vmm": vmm, "gpin_stat": stat, "vmlinuz": img["VMLINUZ"],
                "initrd": img["INITRD"], "cpus": cpus,
                "runtime": args.runtime, "rounds": args.rounds,
                "configs": args.configs, "transport": args.transport,
                "perf": args.perf,
                "workloads": [w.key for w in args.workloads]}
        rc = rig.run(ENTRY, plan, os.path.join(work, "cpus%d" % cpus),
                     img["KVER"], cpus, rig_timeout(args), insmod=ko,
                     append=args.rig_append)
        if rc:
            print("e2e: the test host with %d CPUs failed (status %d); its "
                  "finished rounds count" % (cpus, rc), flush=True)


def outside(argv):
    args = parse_args(argv)
    command = " ".join(["tests/bench/e2e"] + argv)
    if args.report_from:
        work = os.path.realpath(args.report_from)
        meta = rig.load_meta(work, command)
    else:
        work = rig.workdir("e2e")
        meta = {"command": command, "transport": args.transport,
                "paging": paging(args.rig_append), "rounds": args.rounds,
                "runtime": args.runtime}
        run_all(args, work, meta)
    records, ledger = rig.load_results(work, "e2e.jsonl")
    if not any(r.get("kind") == "job" for r in records):
        print("e2e: no results (logs: %s)" % work)
        return 1
    # not at the top: the test host's half must not import matplotlib
    # (over 9p under TCG that takes minutes, a font cache built each time)
    from . import e2e_report
    text = e2e_report.write(args.out, records, ledger, meta)
    print()
    print(text)
    print("wrote %s/e2e.{md,json,jsonl,png} (logs: %s)" % (args.out, work))
    return 0


ENTRY = os.path.join(rig.TOP, "tests", "bench", "e2e")


def main(argv=None):
    return rig.main(outside, e2e_host.inside,
                    sys.argv[1:] if argv is None else argv)
