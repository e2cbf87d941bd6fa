# SPDX-License-Identifier: GPL-2.0-only
"""The rig: run one command inside a nested test host, return its status.

The machines gpin is tested on cannot load modules and have no /dev/kvm
(docs/RIG.md).  The rig boots a Debian kernel under QEMU/TCG with -cpu max
(which has SVM), loads kvm-amd in it, shares this machine's / read-only
over 9p and runs COMMAND chrooted into it (tests/rig/host-init): the same
binaries at the same paths, under a kernel that takes modules and has a
/dev/kvm.

One boot of the test host ends in exactly one of these ways (Boot.end):

  done      COMMAND finished; its status is the result
  timeout   COMMAND or the whole test host outlived its limit
  error     the test host could not set up (RIG-ERROR: a module, 9p)
  died      the test host died: it crashed (a kernel panic or oops on
            its console), reset itself (QEMU ended with no result and no
            message), went silent (no heartbeat: the rig stopped it) or
            wedged (soft lockups: the rig stopped it); before or after
            COMMAND began

The rig alone stops QEMU, and it records why before it does, so a stop is
never mistaken for a reset.  What is done about a death is the death
policy's (gpintest/deaths.py): recorded, COMMAND run once more, a second
death or one in gpin.ko is a failure.
"""

import dataclasses
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from . import cpus as cpumap
from . import deaths
from . import tap
from .qmp import QMP, QMPError

EX_TIMEOUT = 124
EX_RIG = 125

# tsc=reliable: no clocksource watchdog on the TSC.  Under load it found the
# TCG test host's TSC skewed and declared it unstable, and the switch of
# sched_clock that follows patches a jump label (__sched_clock_work), which
# multi-threaded TCG turned into an int3 oops in sched_clock_cpu() three
# pin runs out of three on 6.12 (docs/RIG.md).  TCG's TSC is the host's
# clock on every vCPU: nothing to watch.
TSC_PARAMS = "tsc=reliable"
# Shadow paging for the test host's guests: with TCG's emulation of nested
# paging, guests died in half of the boots under I/O load; with npt=0 they
# became rare (docs/RIG.md).  --append kvm_amd.npt=1 undoes it.
KVM_AMD_PARAMS = "kvm_amd.npt=0"
# Seconds for the test host to reach COMMAND (~4-6 s measured; TCG on a
# loaded machine takes several times that).
BOOT_LIMIT = 180
# Seconds for powering off after COMMAND ended, and for QEMU to quit.
POWEROFF_LIMIT = 60
# Seconds without a heartbeat (run.sh touches .rig/heartbeat every 5 s
# while COMMAND runs) that mean the test host is silent: every CPU stuck.
HEARTBEAT_LIMIT = int(os.environ.get("RIG_HEARTBEAT_LIMIT", "90"))
HEARTBEAT_EVERY = 5

BEGIN = "@@RIG-BEGIN@@"
END = re.compile(r"@@RIG-END rc=(\d+)@@")
# A test-host kernel message among COMMAND's output (its level is high
# enough for the console: warnings and worse)
KERNEL_LINE = re.compile(r"^\[\s*\d+\.\d+\] ")


def log(msg):
    print("rig: " + msg, file=sys.stderr, flush=True)


@dataclasses.dataclass
class Options:
    command: list
    kernel: str = "6.1"
    cpus: int = 2
    mem: str = "4G"
    timeout: int = 600
    insmods: list = dataclasses.field(default_factory=list)
    envs: list = dataclasses.field(default_factory=list)
    append: str = ""
    out: str = ""
    verbose: bool = False


@dataclasses.dataclass
class Kernel:
    """What scripts/kernel-pkg printed: the test-host kernel."""
    kver: str
    kdir: str
    vmlinuz: str


@dataclasses.dataclass
class Boot:
    """One boot of the test host and how it ended."""
    began: bool = False
    rc: int = None
    error: str = ""
    stopped_for: str = ""
    cpus: str = ""
    qemu_status: int = None
    seconds: float = 0.0
    failures: list = dataclasses.field(default_factory=list)

    @property
    def end(self):
        if self.rc is not None:
            return "done"
        if self.stopped_for == "timeout":
            return "timeout"
        if self.error:
            return "error"
        return "died"


class Console:
    """Reads the test host's serial console: keeps it all in console.log,
    passes COMMAND's output (between host-init's markers) to stdout and
    notes what the rig watches for."""

    def __init__(self, stream, path, verbose):
        self.stream = stream
        self.file = open(path, "wb")
        self.verbose = verbose
        self.lock = threading.Lock()
        self.began_at = None
        self.end_rc = None
        self.ended_at = None
        self.error = ""
        self.lockups = 0
        self.failures = tap.FailureReports()
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self):
        on = False
        for raw in iter(self.stream.readline, b""):
            self.file.write(raw)
            self.file.flush()
            line = raw.decode(errors="replace").rstrip("\n").replace("\r", "")
            with self.lock:
                if BEGIN in line:
                    self.began_at = time.monotonic()
                    on = True
                    continue
                m = END.search(line)
                if m:
                    self.end_rc = int(m.group(1))
                    self.ended_at = time.monotonic()
                    on = False
                    continue
                if "RIG-ERROR" in line and not self.error:
                    self.error = line[line.index("RIG-ERROR"):]
                self.lockups += deaths.soft_lockups(line)
            if on and KERNEL_LINE.match(line):
                # a comment, so that a TAP reader does not trip on it
                line = "# test host: " + line
            if on:
                self.failures.feed(line)
            if on or self.verbose:
                sys.stdout.write(line + "\n")
                sys.stdout.flush()

    def close(self):
        self.thread.join(timeout=10)
        self.file.close()


class TestHost:
    def __init__(self, opts, kernel, initrd, out, cache):
        self.opts = opts
        self.kernel = kernel
        self.initrd = initrd
        self.out = out
        self.rig = os.path.join(out, ".rig")
        self.cache = cache

    def qemu_command(self):
        append = "console=ttyS0 quiet panic=-1 nokaslr %s %s %s" % (
            TSC_PARAMS, KVM_AMD_PARAMS, self.opts.append)
        return [
            "qemu-system-x86_64", "-accel", "tcg,thread=multi", "-cpu", "max",
            "-smp", str(self.opts.cpus), "-m", self.opts.mem,
            "-nographic", "-no-reboot", "-net", "none",
            "-kernel", self.kernel.vmlinuz, "-initrd", self.initrd,
            "-append", append.strip(),
            "-qmp", "unix:%s/qmp,server=on,wait=off" % self.rig,
            # for a human: socat - UNIX-CONNECT:$OUT/.rig/monitor
            "-monitor", "unix:%s/monitor,server=on,wait=off" % self.rig,
            "-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,"
                       "readonly=on,multidevs=remap",
            "-virtfs", "local,path=%s,mount_tag=rigout,security_model=none"
                       % self.out,
        ]

    def heartbeat_age(self, console):
        """Seconds since COMMAND began or last beat, whichever is later."""
        last = console.began_at
        try:
            mtime = os.stat(os.path.join(self.rig, "heartbeat")).st_mtime
            last = max(last, time.monotonic() - (time.time() - mtime))
        except FileNotFoundError:
            pass
        return time.monotonic() - last

    def dump_cpus(self):
        """Where the CPUs are: the whole dump in test-host-cpus.txt, one
        line per CPU on stderr; returns the lines joined."""
        try:
            with QMP(os.path.join(self.rig, "qmp")) as q:
                regs = q.human("info registers -a")
        except (OSError, QMPError) as e:
            log("test-host monitor: %s" % e)
            return ""
        with open(os.path.join(self.out, "test-host-cpus.txt"), "w") as f:
            f.write(regs)
        syms = os.path.join(self.cache, "kallsyms")
        if not os.path.exists(syms):
            syms = os.path.join(self.rig, "kallsyms")
        lines = cpumap.cpu_lines(regs, cpumap.load_kallsyms(syms),
                                 cpumap.load_modules(
                                     os.path.join(self.rig, "modules")))
        for line in lines:
            log("test host " + line)
        return "; ".join(l.split(" ", 3)[0] + " " + l.split(" ", 3)[3]
                         for l in lines)

    def stop(self, proc, boot, why, message):
        """Stops the test host, why recorded first: a stop of the rig's is
        never taken for the test host's own end."""
        boot.stopped_for = why
        log("%s: stopping it" % message)
        if why != "timeout" or boot.began:
            boot.cpus = self.dump_cpus()
        try:
            with QMP(os.path.join(self.rig, "qmp"), timeout=5) as q:
                q.execute("quit")
        except (OSError, QMPError):
            proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()

    def watch(self, proc, console, boot, started):
        """Waits for QEMU to end, stopping it when the test host is silent,
        wedged, or past its limits."""
        while proc.poll() is None:
            time.sleep(1)
            now = time.monotonic()
            with console.lock:
                began_at, ended_at = console.began_at, console.ended_at
                lockups = console.lockups
            if began_at is None:
                if now - started > BOOT_LIMIT:
                    self.stop(proc, boot, "hang",
                              "the test host did not reach COMMAND within "
                              "%ds" % BOOT_LIMIT)
                continue
            if ended_at is not None:
                if now - ended_at > POWEROFF_LIMIT:
                    # COMMAND's status is in: only the power-off hangs.
                    self.stop(proc, boot, "poweroff",
                              "the test host did not power off")
                continue
            if now - began_at > self.opts.timeout + 30:
                self.stop(proc, boot, "timeout",
                          "COMMAND outlived --timeout %ds" % self.opts.timeout)
            elif self.heartbeat_age(console) > HEARTBEAT_LIMIT:
                self.stop(proc, boot, "silence",
                          "the test host gave no heartbeat for %ds"
                          % HEARTBEAT_LIMIT)
            elif lockups >= 2:
                self.stop(proc, boot, "wedge",
                          "the test host is wedged (soft lockups of 100 s "
                          "and more)")

    def boot(self):
        for name in ("heartbeat", "rc", "qmp", "monitor"):
            try:
                os.unlink(os.path.join(self.rig, name))
            except FileNotFoundError:
                pass
        boot = Boot()
        started = time.monotonic()
        proc = subprocess.Popen(self.qemu_command(), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        console = Console(proc.stdout, os.path.join(self.out, "console.log"),
                          self.opts.verbose)
        try:
            self.watch(proc, console, boot, started)
        except KeyboardInterrupt:
            proc.kill()
            raise
        finally:
            proc.wait()
            console.close()
        boot.qemu_status = proc.returncode
        boot.began = console.began_at is not None
        boot.error = console.error
        boot.failures = console.failures.lines()
        boot.seconds = time.monotonic() - started
        try:
            with open(os.path.join(self.rig, "rc")) as f:
                boot.rc = int(f.read().strip())
        except (FileNotFoundError, ValueError):
            boot.rc = console.end_rc
        return boot


def kernel_package(top, kernel):
    out = subprocess.run([os.path.join(top, "scripts", "kernel-pkg"), kernel],
                         stdout=subprocess.PIPE, text=True)
    if out.returncode != 0:
        raise RuntimeError("scripts/kernel-pkg %s failed" % kernel)
    env = {}
    for line in out.stdout.splitlines():
        name, _, value = line.partition("=")
        env[name] = shlex.split(value)[0] if value else ""
    return Kernel(env["KVER"], env["KDIR"], env["VMLINUZ"])


def run_script(opts, kernel, out, cache_syms, test, top):
    """The script host-init runs chrooted into this machine's root."""
    q = shlex.quote
    env = {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"),
           "HOME": "/root", "TERM": "dumb", "RIG_KVER": kernel.kver,
           "RIG_MODDIR": kernel.kdir, "RIG_OUT": out,
           # COMMAND's own deaths go to this rig's ledger (same path inside)
           "GPIN_DEATH_LOG": os.path.join(out, "deaths.jsonl"),
           "GPIN_TEST_NAME": test}
    for name in ("CI",):
        if os.environ.get(name):
            env[name] = os.environ[name]
    lines = ["#!/bin/bash"]
    lines += ["export %s=%s" % (k, q(v)) for k, v in env.items()]
    lines.append('export RIG_RUN=$(cat "$RIG_OUT/.rig/run")')
    lines += ["export %s" % q(e) for e in opts.envs]
    lines.append("cd -- %s || { echo \"rig: cwd %s is not visible in the "
                 "test host\" >&2; exit %d; }" % (q(os.getcwd()),
                                                  q(os.getcwd()), EX_RIG))
    # Where the modules are, for naming a stuck CPU (addresses: root).
    lines.append('cat /proc/modules >"$RIG_OUT/.rig/modules" 2>/dev/null')
    if not os.path.exists(cache_syms):
        # once per kernel: nokaslr gives every boot the same addresses
        lines.append("grep ' [tT] ' /proc/kallsyms | grep -v '\\[' "
                     '>"$RIG_OUT/.rig/kallsyms"')
    # KVM's static keys held on before COMMAND makes any VM: under MTTCG
    # their text patching can leave a CPU on a stale int3 (kvm-keys says
    # more).  A failure is reported, not fatal: COMMAND may not need KVM.
    lines.append("%s || echo 'rig: kvm-keys failed; KVM static keys will "
                 "flip' >&2" % q(os.path.join(top, "tests", "rig",
                                               "kvm-keys")))
    # The heartbeat: the rig counts silence from COMMAND's start, so a
    # beat that never came is as silent as one that stopped.
    lines.append('(while :; do touch "$RIG_OUT/.rig/heartbeat"; sleep %d; '
                 'done) &' % HEARTBEAT_EVERY)
    lines.append("exec timeout --kill-after=10 %d %s" % (
        opts.timeout, " ".join(q(a) for a in opts.command)))
    return "\n".join(lines) + "\n"


def gpin_fault(console_path):
    """A kernel trace in the console that names gpin.ko, or ''."""
    with open(console_path, errors="replace") as f:
        text = f.read()
    frames = deaths.gpin_frames(text)
    if not frames:
        return ""
    return "%s (%s)" % (deaths.kernel_fault(text) or "a kernel trace",
                        ", ".join(frames[:3]))


def keep_console(out, tag):
    for name in ("console.log", "test-host-cpus.txt"):
        path = os.path.join(out, name)
        if os.path.exists(path):
            os.replace(path, "%s.%s" % (path, tag))
    return "console.log." + tag


def run(opts, top):
    """Boots the test host until COMMAND has a result or the death policy
    says stop; returns the rig's exit status."""
    cache = os.environ.get("GPIN_CACHE", "/var/cache/gpin")
    try:
        kernel = kernel_package(top, opts.kernel)
    except RuntimeError as e:
        log(str(e))
        return EX_RIG
    kcache = os.path.join(cache, "rig", kernel.kver)
    initrd = os.path.join(kcache, "host-initrd.cpio.gz")
    if subprocess.run([os.path.join(top, "tests", "rig", "host-initrd"),
                       kernel.kver, kernel.kdir, initrd]).returncode != 0:
        log("building the test-host initramfs failed")
        return EX_RIG

    out = opts.out or tempfile.mkdtemp(prefix="rig.", dir="/tmp")
    os.makedirs(out, exist_ok=True)
    out = os.path.realpath(out)
    if re.search(r"\s", out):
        log("--out must not contain spaces")
        return EX_RIG
    rigdir = os.path.join(out, ".rig")
    shutil.rmtree(rigdir, ignore_errors=True)
    for stale in ("rc", "deaths.jsonl"):
        try:
            os.unlink(os.path.join(out, stale))
        except FileNotFoundError:
            pass
    os.makedirs(rigdir)
    with open(os.path.join(rigdir, "outpath"), "w") as f:
        f.write(out + "\n")
    with open(os.path.join(rigdir, "insmod.list"), "w") as f:
        f.writelines(m + "\n" for m in opts.insmods)
    test = os.environ.get("GPIN_TEST_NAME") or os.path.basename(
        opts.command[0])
    syms = os.path.join(kcache, "kallsyms")
    with open(os.path.join(rigdir, "run.sh"), "w") as f:
        f.write(run_script(opts, kernel, out, syms, test, top))
    ledger = deaths.Ledger(os.path.join(out, "deaths.jsonl"))
    host = TestHost(opts, kernel, initrd, out, kcache)
    log("test host %s, %d cpus, %s, out %s" % (kernel.kver, opts.cpus,
                                                opts.mem, out))
    start = time.monotonic()
    for attempt in range(1, 100):
        with open(os.path.join(rigdir, "run"), "w") as f:
            f.write("%d\n" % attempt)
        boot = host.boot()
        saved = os.path.join(rigdir, "kallsyms")
        if os.path.getsize(saved) if os.path.exists(saved) else 0:
            shutil.move(saved, syms)
        rc = outcome(boot, host, opts, ledger, test, attempt)
        if rc is not None:
            break
    report_deaths(ledger)
    with open(os.path.join(out, "rc"), "w") as f:
        f.write("%d\n" % rc)
    log("status %d after %ds (console: %s/console.log)"
        % (rc, time.monotonic() - start, out))
    return rc


def outcome(boot, host, opts, ledger, test, attempt):
    """The rig's status after BOOT, or None to boot again."""
    out = host.out
    if boot.end == "done":
        fault = gpin_fault(os.path.join(out, "console.log"))
        if fault:
            log("the test host's kernel reported a fault in gpin.ko: " + fault)
            return EX_RIG
        if boot.rc == EX_TIMEOUT:
            log("COMMAND timed out after %ds" % opts.timeout)
        if boot.rc and boot.failures:
            report_failures(boot.failures)
        return boot.rc
    if boot.end == "timeout":
        tail(out)
        return EX_TIMEOUT
    if boot.end == "error":
        log(boot.error)
        tail(out)
        return EX_RIG
    with open(os.path.join(out, "console.log"), errors="replace") as f:
        console = f.read()
    death = deaths.test_host_death(console, boot.began, boot.stopped_for,
                                   boot.cpus)
    kept = keep_console(out, "died%d" % attempt)
    verdict = ledger.judge(test, "", death, os.path.join(out, kept))
    log("the %s (%s)" % (death.describe(), kept))
    if verdict == "fail":
        why = ("gpin code is in the trace" if death.in_gpin else
               "the test host died %d times"
               % (deaths.RETRIES["test host"] + 1))
        log("giving up: %s (the death policy, tests/lib/gpintest/deaths.py)"
            % why)
        with open(os.path.join(out, kept), errors="replace") as f:
            lines = f.read().replace("\r", "").splitlines()[-30:]
        for line in lines:
            print("  | " + line, file=sys.stderr)
        return EX_RIG
    if boot.began:
        log("running COMMAND again (RIG_RUN=%d)" % (attempt + 1))
        # On stdout too: a TAP reader keeps the first run's results
        # (tests/rig/guest-test-lib.sh)
        print("# rig: running COMMAND again", flush=True)
    else:
        log("booting the test host again")
    return None


def report_failures(lines):
    """The failed cases' own reports (tap.py), on stderr."""
    log("what the failed cases reported:")
    for line in lines:
        print("  | " + line, file=sys.stderr)


def tail(out):
    path = os.path.join(out, "console.log")
    log("last lines of %s:" % path)
    with open(path, errors="replace") as f:
        for line in f.read().replace("\r", "").splitlines()[-30:]:
            print("  | " + line, file=sys.stderr)


def report_deaths(ledger):
    """The deaths of this rig run on stderr, and into $GPIN_DEATH_LOG."""
    records = ledger.records()
    if not records:
        return
    for line in deaths.summary_lines(records):
        log(line)
    outer = os.environ.get("GPIN_DEATH_LOG")
    if outer and os.path.realpath(outer) != os.path.realpath(ledger.path):
        target = deaths.Ledger(outer)
        for r in records:
            target.append(r)
