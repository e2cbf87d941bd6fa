# SPDX-License-Identifier: GPL-2.0-only
"""tests/bench/boot-time: how long from starting the VMM until the guest's
init runs its workload, gpin-vmm against QEMU with KVM.

A benchmark, not a test.  In one rig test host, R rounds, the two VMMs in
a balanced order that changes every round, boot the same kernel and initramfs
(workload `hello`, `quiet`) with the same vCPUs and 512 MiB.  "Init" is
the moment the workload's line reaches the VMM's output, "exit" the VMM's
end.  A guest that dies is booted again as the death policy allows
(tests/lib/gpintest/deaths.py).  Writes OUT/boot-time.md, .json, .png and
.jsonl (every boot).  Under the rig's TCG almost all of the time is the
guest kernel's own boot: only the ratio means something, within one run.

Exit: 0 done, 77 skipped (reason printed), else failed.
"""

import argparse
import os
import sys
import time

from gpintest import deaths

from . import guest, rig, schedule
from .store import Store

ENTRY = os.path.join(rig.TOP, "tests", "bench", "boot-time")
VMMS = ("gpin-vmm", "qemu")
MARKER = "hello from the gpin guest"
CMDLINE = "console=ttyS0 quiet gpin.workload=hello"
MEM = "512M"
# Seconds to init (docs/RIG.md: up to ~100 s on a loaded machine), then to
# the VMM's end
INIT_LIMIT = 300
EXIT_LIMIT = 60


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="tests/bench/boot-time", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    rig.add_run_args(p, "the guests boot (natively it needs no gpin.ko "
                     "when asked for)")
    p.add_argument("--cpus", type=int, default=2,
                   help="guest vCPUs, and the test host's CPUs (default 2)")
    p.add_argument("--kernel", default="6.1",
                   help="test-host and guest kernel (default 6.1)")
    p.add_argument("--build", default=os.environ.get(
        "GPIN_BUILD", os.path.join(rig.TOP, "build")),
        help="gpin's Meson build (vmm/gpin-vmm); default build/")
    p.add_argument("--report-from", metavar="WORK",
                   help="no runs: the report of an earlier run's raw "
                   "results (WORK: the work directory it printed)")
    p.add_argument("--out", default=rig.default_out("boot-time"),
                   help="where boot-time.{md,json,jsonl,png} go (default "
                   "./gpin-results/boot-time-TIME; docs/results holds the "
                   "project's own figures)")
    args = p.parse_args(argv)
    if args.rounds < 1 or args.cpus < 1:
        p.error("--rounds and --cpus want at least 1")
    return args


# -- in the test host ------------------------------------------------------

def command(plan, vmm):
    if vmm == "qemu":
        return guest.qemu(plan["vmlinuz"], plan["initrd"], plan["cpus"], MEM,
                          CMDLINE)
    return guest.gpin_vmm(plan["vmm"], plan["vmlinuz"], plan["initrd"],
                          plan["cpus"], MEM, CMDLINE)


def boot_once(plan, vmm, log):
    """One boot; (status, seconds to init or None, seconds to exit, text)."""
    t0 = time.monotonic()
    seen = {}

    def on_text(text):
        if "init" not in seen and MARKER in text:
            seen["init"] = time.monotonic() - t0
            return True
        return False

    running = guest.Running(command(plan, vmm), log, is_vmm=vmm != "qemu")
    rc = guest.watch(running, on_text, INIT_LIMIT, EXIT_LIMIT)
    t_exit = time.monotonic() - t0
    if vmm == "qemu":
        rc = guest.qemu_status(rc)
    return rc, seen.get("init"), t_exit, running.text


def run_vmm(plan, rnd, vmm, store, ledger):
    case = "%s-r%d" % (vmm, rnd)
    for attempt in range(1, 100):
        log = os.path.join(os.environ["RIG_OUT"], "boot-%s-r%d-b%d.log"
                           % (vmm, rnd, attempt))
        rc, t_init, t_exit, text = boot_once(plan, vmm, log)
        death = deaths.guest_death(text, rc)
        ok = rc == 0 and t_init is not None
        store.append({"kind": "boot", "bench": "boot-time", "round": rnd,
                      "config": vmm, "cpus": plan["cpus"],
                      "attempt": attempt, "status": rc,
                      "init_s": t_init if ok else None,
                      "exit_s": t_exit if ok else None,
                      "death": death.describe() if death else None})
        print("[round %d] %-8s init after %s s, exit after %.2f s, status %d"
              % (rnd, vmm, "%.2f" % t_init if t_init else "-", t_exit, rc),
              flush=True)
        if ok or death is None:
            return
        verdict = ledger.judge("boot-time", case, death, log + ".died")
        os.replace(log, log + ".died")
        print("  the %s: %s" % (death.describe(), "booting again"
                                if verdict == "retry" else "no result"),
              flush=True)
        if verdict != "retry":
            return


def inside(plan):
    store = Store(os.path.join(os.environ["RIG_OUT"], "boot-time.jsonl"))
    rig_run = int(os.environ.get("RIG_RUN", "1"))
    if rig_run == 1 and os.path.exists(store.path):
        os.unlink(store.path)
    store.append({"kind": "host", "bench": "boot-time", "cpus": plan["cpus"],
                  "rig_run": rig_run, "kernel": os.uname().release})
    done = store.done(lambda r: (r["round"], r["config"]), kind="boot")
    ledger = deaths.Ledger(deaths.default_ledger())
    for rnd, vmm in schedule.plan(VMMS, plan["rounds"]):
        if (rnd, vmm) not in done:
            run_vmm(plan, rnd, vmm, store, ledger)
    return 0


# -- on the CI host --------------------------------------------------------

def run_all(args, work, meta):
    """The rounds in one test host, or on this one; whether it finished."""
    native = args.host == "native"
    if not native:
        rig.require_host()
    vmm = rig.build_tool(args.build, "vmm/gpin-vmm")
    img = rig.guest_image(args.kernel)
    meta["kernel"] = img["KVER"]
    rig.save_meta(work, meta)
    plan = {"vmm": vmm, "vmlinuz": img["VMLINUZ"], "initrd": img["INITRD"],
            "cpus": args.cpus, "rounds": args.rounds}
    out = os.path.join(work, "cpus%d" % args.cpus)
    limit = args.rounds * len(VMMS) * 2 * (INIT_LIMIT + EXIT_LIMIT)
    rc = rig.run_plan(args.host, ENTRY, plan, out, limit, img["KVER"],
                      args.cpus)
    if rc:
        print("boot-time: the test host failed (status %d); its finished "
              "rounds count" % rc, flush=True)
    return rc == 0


def outside(argv):
    args = parse_args(argv)

    def fresh(work, meta):
        meta.update({"rounds": args.rounds, "cpus": args.cpus})
        # by default native only where the others are (a gpin host: some
        # machines' /dev/kvm is a software one, hopeless for Linux); asked
        # for, native wherever /dev/kvm works - boot-time needs no gpin.ko
        problem = rig.native_problem()
        if args.host is None:
            args.host = "native" if problem is None else "rig"
        elif args.host == "native" and problem and \
                not problem.startswith("no /dev/gpin"):
            raise rig.Skip("--host native: " + problem)
        meta["host_kind"] = args.host
        return run_all(args, work, meta)

    def report(out, records, ledger, meta):
        # not at the top: the test host's half must not import matplotlib
        from . import boottime_report
        return boottime_report.write(out, records, ledger, meta)

    return rig.drive("boot-time", args, argv, fresh,
                     lambda r: r.get("init_s"), report)


def main(argv=None):
    return rig.main(outside, inside, sys.argv[1:] if argv is None else argv)
