# SPDX-License-Identifier: GPL-2.0-only
"""The end-to-end benchmark inside the test host: R rounds of every
configuration, in a balanced order, each a guest boot (or, for `direct`, the
same script in the test host) that runs the fio jobs and prints each one's
JSON on its console; counters read around each job; every result appended
to $RIG_OUT/e2e.jsonl as it comes."""

import os
import re
import shlex
import signal
import subprocess
import time

from gpintest import deaths

from . import affinity, guest, parse, schedule, syscalls
from .store import Store
from .workload import Workload

CONFIGS = ("fast", "locked", "kernel", "registered", "fast-churn",
           "locked-churn", "qemu", "qemu-native", "direct")
NULLB = "/dev/nullb0"
NULLB_GB = 1
GUEST_MEM = "512M"
KVM_DEBUGFS = "/sys/kernel/debug/kvm"
KVM_COUNTERS = ("exits", "irq_injections", "mmio_exits", "io_exits",
                "halt_exits")
# Seconds until the guest's first marker (a loaded 2-core machine boots a
# quiet 6.1 guest in up to ~100 s: docs/RIG.md, Timings), and between two
# markers beyond the fio runtime (a job's start-up under TCG).
BOOT_LIMIT = 300
# Between fio's JSON and the guest's interrupt tables in a job's block.
IRQ_SEPARATOR = "E2E-IRQS"
JOB_SLACK = 120


def guest_script(cpus, runtime, workloads, device="/dev/vda", ramp=0):
    """The guest's script: each job runs fio for RAMP seconds first (its
    results dropped: queues, caches and the VMM's moderation settle), then
    prints START, runs fio again (numjobs = vCPUs, each on its own 128
    MiB) for RUNTIME, prints STOP, then between BEGIN and END its JSON
    and, after IRQ_SEPARATOR, the guest's /proc/interrupts from before and
    after fio (which interrupts the guest took per I/O: the device's, or
    IPIs and timers).  The ramp is a run of its own, not fio's
    --ramp_time, so that the counters read at START and STOP bracket every
    I/O fio counts.  The pause at the end lets the console drain before
    the exit device ends the VMM (QEMU's last block was cut short without
    it)."""
    jobs = " ".join(w.key for w in workloads)
    ramp_line = "f %d >/dev/null 2>&1\n" % ramp if ramp > 0 else ""
    return f"""[ -b {device} ] || {{ echo E2E-ERROR no {device}; exit 10; }}
f() {{ fio --name=$rw --filename={device} --direct=1 --ioengine=libaio \\
 --rw=$rw --bs=$bs --iodepth=$qd --numjobs={cpus} --size=128M \\
 --offset_increment=128M --time_based --runtime=$1 --group_reporting \\
 --output-format=json --output=/tmp/r.json >/dev/null 2>&1; }}
for j in {jobs}; do rw=${{j%%:*}}; r=${{j#*:}}; bs=${{r%%:*}}; qd=${{r#*:}}
{ramp_line}echo E2E-START $j
cat /proc/interrupts >/tmp/i0
f {runtime} || echo E2E-ERROR $j fio
cat /proc/interrupts >/tmp/i1
echo E2E-STOP $j
echo E2E-BEGIN $j; cat /tmp/r.json; echo {IRQ_SEPARATOR}; cat /tmp/i0 /tmp/i1
echo E2E-END
done
sleep 2
exit 0
"""


def split_config(config):
    """A configuration's name and its extra --disk words: "fast@poll=200"
    is fast with --disk ...,poll=200 (an A/B of a VMM setting in one run);
    "fast@poll=200+irq_hold=500" gives both ("," separates configs)."""
    name, _, extra = config.partition("@")
    return name, extra


def disk_pin(config):
    """The pin= word of a gpin-vmm configuration: its name without
    -churn, kernel where that is no gpin.ko mode."""
    word = split_config(config)[0].removesuffix("-churn")
    return word if word in ("fast", "locked", "registered") else "kernel"


def pin_mode(config):
    """gpin.ko's mode a configuration's counters are under, or None:
    pin=registered's RAM is pinned (once) in the fast mode."""
    word = disk_pin(config)
    return {"registered": "fast"}.get(word, word) \
        if word != "kernel" else None


def kvm_counters():
    """The test host's KVM counters, summed over its VMs (one runs)."""
    out = {}
    for name in KVM_COUNTERS:
        try:
            with open(os.path.join(KVM_DEBUGFS, name)) as f:
                out[name] = int(f.read())
        except (OSError, ValueError):
            pass
    return out


def gpin_counters(gpin_stat, reset=False):
    """gpin.ko's counters per mode (gpin-stat), {} without the module."""
    if not os.path.exists("/dev/gpin"):
        return {}
    cmd = [gpin_stat] + (["-r"] if reset else [])
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    return parse.gpin_stat(p.stdout) if p.returncode == 0 else {}


def _delta(after, before):
    if after is None or before is None:
        return None
    return parse.subtract(after, before)


class Boot:
    """One boot of a configuration: the jobs as their markers come.

    At START and STOP of a job the test host's KVM counters and gpin.ko's
    are read, and the VMM's (gpin-vmm's or QEMU's) system calls are
    counted from one to the other (syscalls.py; gpin-vmm's answer to
    the SIGUSR1 below, a few dozen calls, falls inside the job).
    gpin-vmm is asked for its own counters (SIGUSR1) at START
    only: it writes them to stderr a byte at a time, which on a loaded
    machine took over a second and cut into the JSON the guest printed
    after STOP; during the job the guest prints nothing.  So a job's VMM
    counters run from its START to the next job's (or to the VMM's exit
    lines after the last): the requests and pins between are the job's,
    as the guest does no I/O outside fio.  A job's record goes into the
    store once those counters are in, at the next job's STOP or when the
    boot ends."""

    def __init__(self, plan, ctx, running, store):
        self.plan, self.ctx = plan, ctx
        self.running, self.store = running, store
        self.mode = pin_mode(ctx["config"])
        self.markers = parse.Markers("E2E")
        self.jobs = []          # {"id", "START", "STOP", "record"}
        self.done = []
        self.sys = None         # the VMM's syscall counter, from a START
        self.pinner = None      # --affinity
        self.new_counter = syscalls.Counter

    def count_syscalls(self, start):
        """The VMM's syscalls since the current job's START (a counter
        opened there: START gives 0), None when they cannot be counted."""
        if start:
            self.close()
            self.sys = self.new_counter(self.running.pid)
        return self.sys.read() if self.sys else None

    def close(self):
        if self.sys:
            self.sys.close()
            self.sys = None

    def snapshot(self, start):
        """The counters at a job's START (which also asks gpin-vmm for
        its own and opens the syscall counter) or at its STOP."""
        s = {"at": len(self.running.text), "kvm": None, "gpin": None,
             "syscalls": None}
        if self.ctx["config"] != "direct":
            s["kvm"] = kvm_counters()
            s["syscalls"] = self.count_syscalls(start)
        if self.mode:
            s["gpin"] = gpin_counters(self.plan["gpin_stat"]).get(self.mode)
        if start:
            self.running.signal_state()
        return s

    def on_text(self, text):
        progress = False
        for marker, ident, block in self.markers.feed(text):
            progress = True
            if marker == "START":
                self.jobs.append({"id": ident,
                                  "START": self.snapshot(start=True)})
            elif marker == "STOP" and self.jobs:
                self.jobs[-1]["STOP"] = self.snapshot(start=False)
                self.store_finished(last=False)
            elif marker == "END" and self.jobs:
                self.finish_job(self.jobs[-1], block)
            elif marker == "ERROR":
                print("  %s: guest error: %s" % (self.ctx["config"], ident),
                      flush=True)
        return progress

    def vmm_counters(self, i, exited):
        """gpin-vmm's counters over job I, or None."""
        if not self.running.is_vmm:
            return None
        text = self.running.text
        first = parse.vmm_snapshots(text[self.jobs[i]["START"]["at"]:])
        if i + 1 < len(self.jobs):
            later = parse.vmm_snapshots(text[self.jobs[i + 1]["START"]["at"]:])
            end = later[0] if later else None
        else:
            # the exit lines, when the VMM got to print them
            end = first[-1] if exited and len(first) > 1 else None
        if not first or end is None:
            return None
        return parse.subtract(end, first[0])

    def store_finished(self, last, exited=False):
        """Stores the records whose VMM counters are in: every job before
        the last one (its successor's START block has been printed), and
        with LAST the last one too."""
        n = len(self.jobs) if last else len(self.jobs) - 1
        for i in range(n):
            job = self.jobs[i]
            rec = job.pop("record", None)
            if rec is None:
                continue
            rec["vmm"] = self.vmm_counters(i, exited)
            self.store.append(rec)
            print("  " + job_line(rec), flush=True)

    def finish_job(self, job, block):
        w = Workload.from_key(job["id"])
        fio_text, _, irq_text = block.partition(IRQ_SEPARATOR)
        try:
            fio = parse.fio_result(fio_text, w.rw)
        except (ValueError, KeyError, IndexError) as e:
            print("  %s %s: unparsable fio output (%s)"
                  % (self.ctx["config"], w.label, e), flush=True)
            return
        start, stop = job["START"], job.get("STOP")
        rec = dict(self.ctx, kind="job", **w.fields(), **fio,
                   kvm=None, gpin=None, vmm=None, vmm_syscalls=None,
                   guest_irqs=parse.interrupt_delta(irq_text))
        if stop:
            rec["kvm"] = _delta(stop["kvm"], start["kvm"])
            rec["gpin"] = _delta(stop["gpin"], start["gpin"])
            if None not in (stop["syscalls"], start["syscalls"]):
                rec["vmm_syscalls"] = stop["syscalls"] - start["syscalls"]
        job["record"] = rec
        self.done.append(job["id"])


def job_line(r):
    line = "%-12s %-20s %8.0f IOPS %9.1f us" % (
        r["config"], Workload.from_record(r).label, r["iops"], r["lat_us"])
    if r["kvm"] and r["ios"]:
        line += "; per I/O %.2f exits, %.2f interrupts" % (
            r["kvm"].get("exits", 0) / r["ios"],
            r["kvm"].get("irq_injections", 0) / r["ios"])
    if r["gpin"]:
        line += "; %d fallbacks, %d us lock wait" % (
            r["gpin"].get("fallbacks", 0),
            r["gpin"].get("lockwait_ns", 0) // 1000)
    return line


# QEMU's configurations: the aio= of each
QEMU_AIO = {"qemu": "io_uring", "qemu-native": "native"}


def is_qemu(config):
    return config in QEMU_AIO


def backing(plan):
    """The disk every configuration serves: the user's device (--device,
    checked before the run), or the memory-backed null_blk."""
    return plan.get("device") or NULLB


def vm_command(plan, config, cmdline):
    """The VMM's command line.  gpin-vmm gets its own defaults but the
    pin mode, unless the run (--transport, --vmm-disk) or the
    configuration (@ words) says otherwise."""
    cpus = plan["cpus"]
    if is_qemu(config):
        return guest.qemu(plan["vmlinuz"], plan["initrd"], cpus, GUEST_MEM,
                          cmdline, drive=backing(plan),
                          aio=QEMU_AIO[config])
    name, extra = split_config(config)
    disk = "%s,pin=%s" % (backing(plan), disk_pin(config))
    if plan.get("transport"):
        disk += ",transport=" + plan["transport"]
    # every gpin-vmm configuration's (--vmm-disk); a config's own win
    if plan.get("vmm_disk"):
        disk += "," + plan["vmm_disk"]
    if extra:
        disk += "," + extra.replace("+", ",")
    return guest.gpin_vmm(plan["vmm"], plan["vmlinuz"], plan["initrd"], cpus,
                          GUEST_MEM, cmdline, disk=disk,
                          churn=name.endswith("-churn"))


def start(plan, config, workloads, log):
    script = guest_script(plan["cpus"], plan["runtime"], workloads,
                          ramp=plan.get("ramp", 0), device=
                          backing(plan) if config == "direct" else
                          "/dev/vda")
    if config == "direct":
        return guest.Running(["sh", "-c", script], log, is_vmm=False)
    cmd = vm_command(plan, config, guest.cmdline_with_script(script))
    return guest.Running(cmd, log, is_vmm=not is_qemu(config))


def perf_start(path):
    return subprocess.Popen(["perf", "record", "-a", "-g", "-F", "499", "-q",
                             "-o", path + ".data"],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def perf_stop(proc, path):
    """Stops the profiler; its flat profile goes to PATH.txt."""
    proc.send_signal(signal.SIGINT)
    proc.wait()
    with open(path + ".txt", "w") as f:
        subprocess.run(["perf", "report", "-i", path + ".data", "--stdio",
                        "--no-children", "--sort", "comm,dso,sym",
                        "--percent-limit", "0.3", "-g", "none"],
                       stdout=f, stderr=subprocess.DEVNULL)


def boot(plan, ctx, workloads, store):
    """One boot running WORKLOADS; returns (status, Boot, Running)."""
    config, out = ctx["config"], os.environ["RIG_OUT"]
    name = "e2e-%s-%dc-r%d-b%d" % (config, plan["cpus"], ctx["round"],
                                   ctx["attempt"])
    mode = pin_mode(config)
    if mode:
        # the worst IRQ-off window is a maximum since the last reset:
        # reset here, so the boot record holds this boot's
        gpin_counters(plan["gpin_stat"], reset=True)
    profiler = perf_start(os.path.join(out, "perf-" + name)) \
        if plan["perf"] else None
    running = start(plan, config, workloads, os.path.join(out, name + ".log"))
    b = Boot(plan, ctx, running, store)
    on_text = b.on_text
    if plan.get("affinity") and config != "direct":
        # its threads come as it boots: looked for at every poll
        b.pinner = affinity.Pinner(running.pid,
                                   affinity.parse(plan["affinity"]))

        def on_text(text):
            b.pinner.poll()
            return b.on_text(text)
    try:
        rc = guest.watch(running, on_text, BOOT_LIMIT,
                         plan["runtime"] + plan.get("ramp", 0) + JOB_SLACK)
    finally:
        b.close()
    if is_qemu(config):
        rc = guest.qemu_status(rc)
    b.store_finished(last=True, exited=rc == 0)
    if profiler:
        perf_stop(profiler, os.path.join(out, "perf-" + name))
    return rc, b, running


def shown_command(cmd):
    """CMD as a shell line, the guest's script (base64 in gpin.sh=)
    shortened: what the report shows of each VMM's command line."""
    return re.sub(r"gpin\.sh=[A-Za-z0-9+/=]+", "gpin.sh=<script>",
                  shlex.join(cmd))


def qemu_version():
    try:
        p = subprocess.run(["qemu-system-x86_64", "--version"],
                           stdout=subprocess.PIPE, text=True)
    except OSError:
        return None
    return p.stdout.split("\n")[0].strip() or None


def boot_record(plan, ctx, rc, b, running, seconds, death, left):
    rec = dict(ctx, kind="boot", status=rc, seconds=round(seconds, 1),
               death=death.describe() if death else None,
               jobs_done=b.done, jobs_left=[w.key for w in left],
               log=running.log, command=shown_command(running.cmd), vmm_exit=None, churn_cycles=None,
               irqoff_max_ns=None,
               pinned=b.pinner.pinned if b.pinner else None)
    if running.is_vmm:
        snaps = parse.vmm_snapshots(running.text)
        rec["vmm_exit"] = snaps[-1] if snaps and rc == 0 else None
        m = re.search(r"gpin-vmm: churn: (\d+) mmap/munmap cycles",
                      running.text)
        rec["churn_cycles"] = int(m.group(1)) if m else None
    if b.mode:
        st = gpin_counters(plan["gpin_stat"]).get(b.mode, {})
        rec["irqoff_max_ns"] = st.get("irqoff_max")
    return rec


def run_config(plan, rnd, position, config, workloads, store, ledger):
    """CONFIG's jobs of round RND, and more boots for the jobs a dead guest
    left, as the death policy allows (TCG now and then kills a guest:
    docs/RIG.md)."""
    case = "%s-%dc-r%d" % (config, plan["cpus"], rnd)
    left = list(workloads)
    for attempt in range(1, 100):
        ctx = {"bench": "e2e", "cpus": plan["cpus"], "round": rnd,
               "config": config, "position": position, "attempt": attempt,
               "rig_run": int(os.environ.get("RIG_RUN", "1"))}
        t0 = time.monotonic()
        rc, b, running = boot(plan, ctx, left, store)
        left = [w for w in left if w.key not in b.done]
        death = deaths.guest_death(running.text, rc)
        store.append(boot_record(plan, ctx, rc, b, running,
                                 time.monotonic() - t0, death, left))
        if not left:
            return
        if death is None:
            print("  %s: status %d, no results for %s; last lines of %s:"
                  % (config, rc, " ".join(w.key for w in left), running.log))
            for line in running.text.replace("\r", "").splitlines()[-15:]:
                print("    " + line)
            return
        verdict = ledger.judge("e2e", case, death, running.log + ".died")
        os.replace(running.log, running.log + ".died")
        print("  %s: the %s; %s" % (config, death.describe(),
                                    "booting it again for the jobs left"
                                    if verdict == "retry" else
                                    "no results for " +
                                    " ".join(w.key for w in left)),
              flush=True)
        if verdict != "retry":
            return


NULLB_PARAMS = "/sys/module/null_blk/parameters/"


def modprobe_args():
    """modprobe's: the test host's module tree (the rig), or the host's."""
    moddir = os.environ.get("RIG_MODDIR")
    return ["modprobe"] + (["-d", moddir] if moddir else [])


def setup_backing():
    """A memory-backed null_blk with every block written once, so that
    reads find data.  On a host where null_blk is loaded already (its
    parameters are the loader's), only a memory-backed one of at least
    NULLB_GB will do: anything else is refused rather than measured."""
    if os.path.exists(NULLB_PARAMS):
        try:
            with open(NULLB_PARAMS + "memory_backed") as f:
                memory = f.read().strip() in ("1", "Y")
            with open(NULLB_PARAMS + "gb") as f:
                gb = int(f.read())
        except (OSError, ValueError):
            memory, gb = False, 0
        if not (memory and gb >= NULLB_GB and os.path.exists(NULLB)):
            raise RuntimeError("null_blk is loaded already, not as %s "
                               "memory-backed of %d GiB: unload it "
                               "(rmmod null_blk) or load it so"
                               % (NULLB, NULLB_GB))
    else:
        subprocess.run(modprobe_args() + [
            "null_blk", "nr_devices=1", "memory_backed=1",
            "gb=%d" % NULLB_GB, "bs=512"], check=True)
    subprocess.run(["dd", "if=/dev/zero", "of=" + NULLB, "bs=1M",
                    "count=%d" % (NULLB_GB * 1024), "oflag=direct",
                    "status=none"], check=True)


def todo(plan, jobs):
    """[(round, position, config, workloads left)] in run order: the
    configurations change order every round (schedule.py), and so do the
    workloads within a
    boot; what JOBS (the records so far) hold is not run again."""
    done = {(r["round"], r["config"], r["rw"], r["bs"], r["qd"])
            for r in jobs}
    workloads = [Workload.from_key(k) for k in plan["workloads"]]
    out = []
    for rnd, config in schedule.plan(plan["configs"], plan["rounds"]):
        position = schedule.order(plan["configs"], rnd).index(config) + 1
        left = [w for w in schedule.order(workloads, rnd)
                if (rnd, config, w.rw, w.bs, w.qd) not in done]
        out.append((rnd, position, config, left))
    return out


def mount_debugfs():
    """The KVM counters live in debugfs, which a host may not mount."""
    if not os.path.isdir(KVM_DEBUGFS):
        subprocess.run(["mount", "-t", "debugfs", "none",
                        "/sys/kernel/debug"], stderr=subprocess.DEVNULL)


def mount_tracefs():
    """Whether the VMMs' syscalls can be counted (syscalls.py): tracefs,
    mounted here if the test host has not, and a counter on this process
    that opens and reads."""
    if syscalls.tracepoint_id() is None:
        subprocess.run(["mount", "-t", "tracefs", "nodev",
                        syscalls.TRACEFS[0]], stderr=subprocess.DEVNULL)
    probe = syscalls.Counter(os.getpid())
    counted = probe.read() is not None
    probe.close()
    return counted


def inside(plan):
    out = os.environ["RIG_OUT"]
    store = Store(os.path.join(out, "e2e.jsonl"))
    rig_run = int(os.environ.get("RIG_RUN", "1"))
    if rig_run == 1 and os.path.exists(store.path):
        os.unlink(store.path)
    if not os.path.exists("/dev/kvm"):
        print("e2e: no /dev/kvm in the test host")
        return 1
    if plan.get("affinity"):
        try:
            affinity.parse(plan["affinity"], os.cpu_count())
        except affinity.SpecError as e:
            print("e2e: --affinity: %s" % e)
            return 1
    try:
        if not plan.get("device"):
            setup_backing()
    except (RuntimeError, subprocess.CalledProcessError) as e:
        print("e2e: backing: %s" % e)
        return 1
    mount_debugfs()
    counted = mount_tracefs()
    store.append({"kind": "host", "bench": "e2e", "cpus": plan["cpus"],
                  "rig_run": rig_run, "kernel": os.uname().release,
                  "host_cpus": os.cpu_count(),
                  "gpin_loaded": os.path.exists("/dev/gpin"),
                  "syscalls_counted": counted,
                  "affinity": plan.get("affinity"),
                  "qemu_version": qemu_version()})
    print("# test host %s, %d CPUs; guest %d vCPUs, %s; backing %s "
          "(%s); gpin.ko %s; transport %s; "
          "VMM syscalls %s"
          % (os.uname().release, os.cpu_count(), plan["cpus"], GUEST_MEM,
             backing(plan), "the user's device" if plan.get("device") else
             "null_blk memory_backed, %d GiB" % NULLB_GB,
             "loaded" if os.path.exists("/dev/gpin")
             else "ABSENT", plan["transport"] or "gpin-vmm's default",
             "counted" if counted else "NOT counted (no tracefs)"),
          flush=True)
    ledger = deaths.Ledger(deaths.default_ledger())
    for rnd, position, config, left in todo(plan, store.records("job")):
        head = "[round %d/%d, %d/%d] %s, %d vCPUs" % (
            rnd, plan["rounds"], position, len(plan["configs"]), config,
            plan["cpus"])
        if not left:
            print(head + ": done before the test host crashed", flush=True)
            continue
        print("%s: %s, %d s each" % (head, " ".join(w.key for w in left),
                                     plan["runtime"]), flush=True)
        run_config(plan, rnd, position, config, left, store, ledger)
    return 0
