# SPDX-License-Identifier: GPL-2.0-only
"""The starting half of a benchmark: what it needs, and where its
measuring half runs - natively on this host (--host native: a KVM host with
gpin.ko loaded), or in the rig's test host (tests/rig/rig, docs/RIG.md).
Either way the benchmark's own entry runs again with --inside PLAN: the
rig is one way to provide a host, not a different benchmark."""

import datetime
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

from .store import load

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.realpath(__file__)))))
EX_SKIP = 77
# Rounds by default: the fewest whose range covers the median with 95%
# or more (stats.py: 96.9%)
ROUNDS = 6


class Skip(Exception):
    """The benchmark cannot run here; the message says why (status 77)."""


def require_host(perf=False):
    if os.geteuid() != 0:
        raise Skip("the rig needs root")
    if not shutil.which("qemu-system-x86_64"):
        raise Skip("qemu-system-x86_64 not installed")
    if perf and not shutil.which("perf"):
        raise Skip("--perf: perf not installed (linux-perf)")


def _assignments(text):
    """KEY=VALUE lines (values shell-quoted) as a dict."""
    out = {}
    for word in shlex.split(text):
        k, sep, v = word.partition("=")
        if sep:
            out[k] = v
    return out


def guest_image(kernel):
    """{'KVER', 'VMLINUZ', 'INITRD'} of guest-images/build-guest."""
    p = subprocess.run([os.path.join(TOP, "guest-images", "build-guest"),
                        kernel], stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise Skip("no guest image for kernel %s" % kernel)
    return _assignments(p.stdout)


def kernel_release(kernel):
    """The Debian kernel release scripts/kernel-pkg picks for KERNEL."""
    p = subprocess.run([os.path.join(TOP, "scripts", "kernel-pkg"), kernel],
                       stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise Skip("no Debian kernel %s with headers (scripts/kernel-pkg)"
                   % kernel)
    return _assignments(p.stdout)["KVER"]


def gpin_ko(kver):
    """gpin.ko built against linux-headers-KVER (pin/kbuild.sh, in
    $GPIN_PIN_BUILDDIR or build-pin/)."""
    base = os.environ.get("GPIN_PIN_BUILDDIR",
                          os.path.join(TOP, "build-pin"))
    out = os.path.join(base, kver)
    ko = os.path.join(out, "gpin.ko")
    headers = "/usr/src/linux-headers-" + kver
    p = subprocess.run([os.path.join(TOP, "pin", "kbuild.sh"), headers,
                        os.path.join(TOP, "pin"),
                        os.path.join(TOP, "include", "gpin.h"),
                        os.path.join(out, "kmod"), ko],
                       stdout=subprocess.DEVNULL)
    if p.returncode != 0:
        raise Skip("gpin.ko does not build against " + headers)
    return ko


def build_tool(build, path):
    """BUILD/PATH (a program of gpin's Meson build), which must exist."""
    tool = os.path.join(os.path.realpath(build), path)
    if not os.access(tool, os.X_OK):
        raise Skip("no %s: build gpin first (scripts/build)" % tool)
    return tool


def workdir(name):
    """A new directory for the logs and raw results of a run: under
    $GPIN_BENCH_WORKDIR, or /var/tmp, which the test host sees (and may
    write: the rig's --out)."""
    base = os.environ.get("GPIN_BENCH_WORKDIR", "/var/tmp")
    os.makedirs(base, exist_ok=True)
    return tempfile.mkdtemp(prefix="gpin-%s." % name, dir=base)


def run(entry, plan, out, kver, cpus, timeout, insmod=None, append=""):
    """Runs ENTRY --inside OUT/plan.json in a test host with CPUS CPUs;
    OUT is the rig's --out (writable inside).  Returns the rig's status."""
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "plan.json")
    with open(path, "w") as f:
        json.dump(plan, f, indent=1)
    cmd = [os.path.join(TOP, "tests", "rig", "rig"), "--kernel", kver,
           "--cpus", str(cpus), "--timeout", str(int(timeout)),
           "--out", out]
    if insmod:
        cmd += ["--insmod", insmod]
    if append:
        cmd += ["--append", append]
    cmd += ["--", entry, "--inside", path]
    sys.stdout.flush()
    return subprocess.run(cmd).returncode


def commit():
    """The commit that ran, "-dirty" when tracked files differ from it
    (what ran is then not what the commit holds)."""
    try:
        head = subprocess.run(["git", "-C", TOP, "rev-parse", "--short",
                               "HEAD"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    dirty = subprocess.run(["git", "-C", TOP, "diff-index", "--quiet",
                            "HEAD", "--"], stderr=subprocess.DEVNULL)
    return head + ("-dirty" if dirty.returncode else "")


def default_out(bench):
    """Where a run's report goes unless --out says: a fresh directory
    under ./gpin-results, never the project's committed docs/results."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return os.path.join("gpin-results", "%s-%s" % (bench, stamp))


def host_text():
    """The machine the run started on: CPU model, CPUs, kernel."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%s, %d CPUs, Linux %s" % (model, os.cpu_count() or 0,
                                      os.uname().release)


def save_meta(work, meta):
    """What the report says about the run, with the commit that ran
    (and whether the tree was dirty), the machine and the date; kept for
    --report-from."""
    meta.update(commit=commit(), date=datetime.date.today().isoformat(),
                host=host_text())
    with open(os.path.join(work, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)


# What runs merged into one report must share: runs that differ in these
# measured different things.  Commits, dates and commands are listed.
SAME_SETTINGS = ("kernel", "transport", "vmm_disk", "paging", "rounds",
                 "runtime", "ramp", "duration", "bench_args", "cpus")


def load_meta(works, command):
    """The meta of earlier runs (WORKS: their work directories), marked as
    reported by COMMAND.  Several runs (one per vCPU count, say) make one
    report only if they agree on SAME_SETTINGS; else SystemExit."""
    metas = []
    for work in works:
        with open(os.path.join(work, "meta.json")) as f:
            metas.append(json.load(f))
    meta = dict(metas[0])
    for key in SAME_SETTINGS:
        values = [m.get(key) for m in metas]
        if any(v != values[0] for v in values):
            sys.exit("cannot report %s together: they differ in %s (%s)"
                     % (", ".join(works), key,
                        ", ".join(str(v) for v in values)))
    for key, sep in (("command", "; "), ("commit", ", "), ("date", ", ")):
        values = []
        for m in metas:
            if m.get(key) is not None and m[key] not in values:
                values.append(m[key])
        meta[key] = sep.join(values)
    meta["command"] += " (report: %s)" % command
    return meta


def load_results(works, name):
    """The raw records of every test host of the runs in WORKS
    (WORK/cpus*/NAME) and the deaths their rigs recorded.  Two runs with
    the same vCPU count would mix their rounds: SystemExit."""
    dirs = {}
    for work in works:
        for d in sorted(os.listdir(work)):
            if not d.startswith("cpus"):
                continue
            if d in dirs:
                sys.exit("both %s and %s hold %s: one run per vCPU count"
                         % (dirs[d], work, d))
            dirs[d] = work
    paths = [os.path.join(w, d) for d, w in sorted(dirs.items())]
    return (load([os.path.join(d, name) for d in paths]),
            load([os.path.join(d, "deaths.jsonl") for d in paths]))


def native_problem():
    """Why this host cannot run a benchmark natively (None: it can): root,
    a usable /dev/kvm, gpin.ko loaded."""
    if os.geteuid() != 0:
        return "not root"
    try:
        os.close(os.open("/dev/kvm", os.O_RDWR))
    except OSError as e:
        return "no usable /dev/kvm (%s)" % e.strerror
    if not os.path.exists("/dev/gpin"):
        return "no /dev/gpin (load gpin.ko: insmod build-pin/$(uname -r)/gpin.ko)"
    return None


def add_run_args(p, what):
    """The options every benchmark takes alike: --rounds (stats.py's
    default) and --host; WHAT says what runs where."""
    p.add_argument("--rounds", type=int, default=ROUNDS,
                   help="rounds (default %d: the fewest whose interval "
                   "covers 95%%%%)" % ROUNDS)
    p.add_argument("--host", choices=("native", "rig"),
                   help="where %s: native, on this host with the gpin.ko "
                   "it has loaded (root; the default where that works), or "
                   "rig, in the nested test host (docs/RIG.md)" % what)


def pick_host(asked):
    """ASKED ('native', 'rig' or None: native where it can run, else the
    rig) and, for a native run that cannot, Skip with the reason."""
    problem = native_problem()
    if asked is None:
        return "native" if problem is None else "rig"
    if asked == "native" and problem:
        raise Skip("--host native: " + problem)
    return asked


def run_native(entry, plan, out, timeout):
    """Runs ENTRY --inside OUT/plan.json on this host, with the environment
    the rig gives it inside a test host (RIG_OUT, RIG_RUN, the death
    ledger; RIG_MODDIR only if the caller has one - a test host - else the
    host's own modules).  Returns its status, 124 when it outlived
    TIMEOUT seconds."""
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "plan.json")
    with open(path, "w") as f:
        json.dump(plan, f, indent=1)
    env = dict(os.environ, RIG_OUT=out, RIG_RUN="1",
               RIG_KVER=os.uname().release,
               GPIN_DEATH_LOG=os.path.join(out, "deaths.jsonl"))
    sys.stdout.flush()
    try:
        return subprocess.run([entry, "--inside", path], env=env,
                              timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        return 124


def run_plan(host, entry, plan, out, timeout, kver=None, cpus=None,
             insmod=None, append=""):
    """ENTRY's half of a run on HOST ("native": here; else a test host
    with CPUS CPUs and kernel KVER).  Returns its status."""
    if host == "native":
        return run_native(entry, plan, out, timeout)
    return run(entry, plan, out, kver, cpus, timeout, insmod=insmod,
               append=append)


def drive(bench, args, argv, fresh, has_result, report):
    """The CI host's half every benchmark shares.  With --report-from,
    only the report of earlier runs (their meta.json); else a new work
    directory and FRESH(work, meta) -> whether every run finished, which
    fills in META.  Then the raw results of all the work directories
    (BENCH.jsonl), at least one record HAS_RESULT, and REPORT(out, records, ledger, meta)
    -> the report's text, printed.  Returns the exit status."""
    command = shlex.join(["tests/bench/" + bench] + argv)
    if args.report_from:
        froms = args.report_from if isinstance(args.report_from, list) \
            else [args.report_from]
        works = [os.path.realpath(w) for w in froms]
        meta, ok = load_meta(works, command), True
    else:
        works = [workdir(bench)]
        meta = {"command": command}
        ok = fresh(works[0], meta)
    records, ledger = load_results(works, bench + ".jsonl")
    if not any(has_result(r) for r in records):
        print("%s: no results (logs: %s)" % (bench, ", ".join(works)))
        return 1
    text = report(args.out, records, ledger, meta)
    print()
    print(text)
    print("wrote %s/%s.{md,json,jsonl,png} (logs: %s)"
          % (args.out, bench, ", ".join(works)))
    return 0 if ok else 1


def read_plan(path):
    with open(path) as f:
        return json.load(f)


def main(run_outside, run_inside, argv):
    """The shared shape of an entry point: --inside PLAN runs the test
    host's half; anything else the CI host's, where Skip is status 77."""
    if argv[:1] == ["--inside"]:
        return run_inside(read_plan(argv[1]))
    try:
        return run_outside(argv)
    except Skip as e:
        print("SKIP: %s" % e)
        return EX_SKIP
