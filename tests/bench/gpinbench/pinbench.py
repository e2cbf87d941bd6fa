# SPDX-License-Identifier: GPL-2.0-only
"""tests/bench/pin-bench: what a page costs to pin in each gpin mode.

A benchmark, not a test.  Runs `gpin-bench pin` (pin/tools/gpin-bench.c:
one thread pinning BATCH pages at a time, ns per page; N threads of one
process pinning, with and without an mmap_lock writer beside them, pages
per second) R rounds in the rig's test host, one test host per CPU count
(4 on a 2-core machine is oversubscribed), with the modes in an order
that changes every round (balanced: schedule.py).  The report gives each cell's median with its
95% bootstrap interval, fast ÷ kernel and fast ÷ locked paired by round,
and each target (tests/bench/gpinbench/targets.py) as ahead, behind or
can't tell.  Writes OUT/pin-bench.md, .json, .png and .jsonl (every cell
of every round).  Options after -- go to gpin-bench (not --modes,
--duration or --json: the benchmark sets those).  TCG figures are not absolute:
compare within one run.

Exit: 0 done, 77 skipped (reason printed), else failed.
"""

import argparse
import json
import os
import subprocess
import sys
import time

from . import rig, schedule
from .store import Store

ENTRY = os.path.join(rig.TOP, "tests", "bench", "pin-bench")
MODES = ("fast", "locked", "kernel")
# gpin-bench's cells: 2 backings x 4 batches and 4 thread counts x 2 writer
# settings
CELLS = 16
# The rig's limit: per cell and mode its duration and seconds of set-up (a
# pre-faulted 16 MiB buffer, threads) under TCG, and the round's start
CELL_SLACK = 2
ROUND_SLACK = 120


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="tests/bench/pin-bench", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="%(prog)s [options] [-- GPIN-BENCH-OPTIONS...]")
    rig.add_run_args(p, "gpin-bench runs")
    p.add_argument("--cpus", default="2 4",
                   help="rig: test-host CPUs, one test host each (default "
                   "'2 4'); native: this host's CPUs, one run")
    p.add_argument("--duration", type=float, default=1.0,
                   help="seconds per cell and mode (default 1)")
    p.add_argument("--modes", default=",".join(MODES),
                   help="modes to compare, reordered every round (default "
                   "%s)" % ",".join(MODES))
    p.add_argument("--kernel", default="6.1",
                   help="test-host kernel (default 6.1)")
    p.add_argument("--build", default=os.environ.get(
        "GPIN_BUILD", os.path.join(rig.TOP, "build")),
        help="gpin's Meson build (pin/gpin-bench); default build/")
    p.add_argument("--rig-append", default="", metavar="ARGS",
                   help="test-host kernel arguments (tests/rig/rig --append)")
    p.add_argument("--report-from", metavar="WORK", action="append",
                   help="no runs: the report of an earlier run's raw "
                   "results (WORK: the work directory it printed); "
                   "repeated, of several runs with the same settings "
                   "(as one per vCPU count) in one report")
    p.add_argument("--out", default=rig.default_out("pin-bench"),
                   help="where pin-bench.{md,json,jsonl,png} go (default "
                   "./gpin-results/pin-bench-TIME; docs/results holds the "
                   "project's own figures)")
    own, passthrough = argv, []
    if "--" in argv:
        i = argv.index("--")
        own, passthrough = argv[:i], argv[i + 1:]
    args = p.parse_args(own)
    args.bench_args = passthrough
    if any(a.split("=")[0] in ("--modes", "--duration", "--json")
           for a in passthrough):
        p.error("give --modes and --duration before -- (pin-bench's own), "
                "and no --json (pin-bench sets it)")
    args.modes = args.modes.split(",")
    if any(m not in MODES for m in args.modes):
        p.error("--modes: of %s" % ",".join(MODES))
    try:
        args.cpus = [int(c) for c in args.cpus.split()]
    except ValueError:
        p.error("--cpus wants numbers")
    if args.rounds < 1:
        p.error("--rounds wants at least 1")
    return args


# -- in the test host ------------------------------------------------------

def cell_records(result, ctx):
    """gpin-bench's JSON RESULT as one record per cell and mode."""
    out = []
    for c in result.get("single", []):
        out.append(dict(ctx, kind="cell", table="single", config=c["mode"],
                        **{k: v for k, v in c.items() if k != "mode"}))
    for c in result.get("threads", []):
        out.append(dict(ctx, kind="cell", table="threads", config=c["mode"],
                        **{k: v for k, v in c.items() if k != "mode"}))
    return out


def run_round(plan, rnd, store):
    out = os.environ["RIG_OUT"]
    modes = schedule.order(plan["modes"], rnd)
    js = os.path.join(out, "pin-bench-r%d.json" % rnd)
    txt = os.path.join(out, "pin-bench-r%d.txt" % rnd)
    cmd = [plan["gpin_bench"], "pin", "--json", js, "--modes",
           ",".join(modes), "--duration", str(plan["duration"])]
    cmd += plan["bench_args"]
    print("[round %d/%d] gpin-bench pin --modes %s" % (
        rnd, plan["rounds"], ",".join(modes)), flush=True)
    t0 = time.monotonic()
    with open(txt, "w") as f:
        rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode
    ctx = {"bench": "pin-bench", "cpus": plan["cpus"], "round": rnd,
           "rig_run": int(os.environ.get("RIG_RUN", "1"))}
    if rc == 0:
        with open(js) as f:
            for rec in cell_records(json.load(f), ctx):
                store.append(rec)
    else:
        with open(txt) as f:
            print("  gpin-bench failed (status %d):\n%s" % (rc, f.read()))
    store.append(dict(ctx, kind="round", modes=modes, status=rc,
                      seconds=round(time.monotonic() - t0, 1)))


def inside(plan):
    out = os.environ["RIG_OUT"]
    store = Store(os.path.join(out, "pin-bench.jsonl"))
    rig_run = int(os.environ.get("RIG_RUN", "1"))
    if rig_run == 1 and os.path.exists(store.path):
        os.unlink(store.path)
    store.append({"kind": "host", "bench": "pin-bench", "cpus": plan["cpus"],
                  "rig_run": rig_run, "kernel": os.uname().release,
                  "host_cpus": os.cpu_count()})
    done = store.done(lambda r: r["round"], kind="round")
    for rnd in range(1, plan["rounds"] + 1):
        if rnd in done:
            print("[round %d/%d] done before the test host crashed"
                  % (rnd, plan["rounds"]), flush=True)
            continue
        run_round(plan, rnd, store)
    return 0


# -- on the CI host --------------------------------------------------------

def run_all(args, work, meta):
    """The rounds, one test host per CPU count; whether every test host
    finished (the report shows what the others did)."""
    native = args.host == "native"
    if not native:
        rig.require_host()
    bench = rig.build_tool(args.build, "pin/gpin-bench")
    kver = os.uname().release if native else rig.kernel_release(args.kernel)
    ko = None if native else rig.gpin_ko(kver)
    if native:
        args.cpus = [os.cpu_count()]
    meta["kernel"] = kver
    rig.save_meta(work, meta)
    per_round = (len(args.modes) * CELLS * (args.duration + CELL_SLACK) +
                 ROUND_SLACK)
    ok = True
    for cpus in args.cpus:
        print("=== gpin-bench pin, %s, %d CPUs, %d rounds"
              % (kver, cpus, args.rounds), flush=True)
        plan = {"gpin_bench": bench, "cpus": cpus, "rounds": args.rounds,
                "duration": args.duration, "modes": args.modes,
                "bench_args": args.bench_args}
        out = os.path.join(work, "cpus%d" % cpus)
        rc = rig.run_plan(args.host, ENTRY, plan, out,
                          args.rounds * per_round, kver, cpus, insmod=ko,
                          append=args.rig_append)
        if rc:
            print("pin-bench: the test host with %d CPUs failed (status %d);"
                  " its finished rounds count" % (cpus, rc), flush=True)
            ok = False
    return ok


def outside(argv):
    args = parse_args(argv)

    def fresh(work, meta):
        meta.update({"rounds": args.rounds, "duration": args.duration,
                     "bench_args": " ".join(args.bench_args)})
        args.host = rig.pick_host(args.host)
        meta["host_kind"] = args.host
        return run_all(args, work, meta)

    def report(out, records, ledger, meta):
        # not at the top: the test host's half must not import matplotlib
        from . import pinbench_report
        return pinbench_report.write(out, records, ledger, meta)

    return rig.drive("pin-bench", args, argv, fresh,
                     lambda r: r.get("kind") == "cell", report)


def main(argv=None):
    return rig.main(outside, inside, sys.argv[1:] if argv is None else argv)
