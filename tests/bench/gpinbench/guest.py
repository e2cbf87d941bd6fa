# SPDX-License-Identifier: GPL-2.0-only
"""Running a guest in the test host: its console into a log, watched as it
grows, stopped when it stops making progress, and booted again as the
death policy allows (tests/lib/gpintest/deaths.py)."""

import base64
import re
import signal
import subprocess
import time

from gpintest import deaths

POLL_S = 0.1
EX_TIMEOUT = deaths.EX_TIMEOUT
EX_STALLED = deaths.EX_STALLED
# A guest kernel that reports these will not recover under TCG: stop it
# rather than wait out the limit (as tests/rig/guest-test-lib.sh does)
STALL = re.compile(r"rcu: INFO: rcu_.* detected stalls|soft lockup - CPU")

# The guest's kernel command line: its script travels base64 in gpin.sh=
# (guest-images/init).  quiet and loglevel=1: no kernel message (RCU
# stall warnings under TCG) may cut into the JSON on the console, and a
# quiet console boots faster (docs/RIG.md, Timings).
CMDLINE = "console=ttyS0 quiet loglevel=1"
# The kernel's command line holds 2048 bytes (x86 COMMAND_LINE_SIZE).
CMDLINE_MAX = 2047


def cmdline_with_script(script):
    line = "%s gpin.sh=%s" % (CMDLINE,
                              base64.b64encode(script.encode()).decode())
    if len(line) > CMDLINE_MAX:
        raise ValueError("the guest script is too long for the kernel "
                         "command line (%d bytes)" % len(line))
    return line


def gpin_vmm(vmm, vmlinuz, initrd, cpus, mem, cmdline, disk=None,
             churn=False):
    # --test-exit-port: the guest's script ends the VM with its status
    cmd = [vmm, "--test-exit-port", "--kernel", vmlinuz, "--initrd", initrd,
           "--cpus", str(cpus), "--mem", mem, "--params", cmdline]
    if churn:
        cmd.append("--churn")
    if disk:
        cmd += ["--disk", disk]
    return cmd


# gpin-vmm's queue size (vmm/devices/virtio_blk.h: VIRTIO_BLK_QUEUE_SIZE)
QUEUE_SIZE = 256


def qemu(vmlinuz, initrd, cpus, mem, cmdline, drive=None, aio="io_uring"):
    """QEMU with KVM as it is run for disk performance: virtio-blk-pci
    served by its own iothread (not the main loop), a queue per vCPU of
    gpin-vmm's size, cache=none (O_DIRECT), aio=io_uring (or AIO
    "native": Linux AIO); the exit device."""
    # debug-threads: its threads named ("CPU N/KVM", "IO io0"), for
    # --affinity and for whoever profiles it
    cmd = ["qemu-system-x86_64", "-name", "gpin-e2e,debug-threads=on",
           "-accel", "kvm", "-cpu", "host",
           "-smp", str(cpus), "-m", mem, "-nographic", "-no-reboot",
           "-nodefaults", "-serial", "stdio", "-kernel", vmlinuz,
           "-initrd", initrd, "-append", cmdline,
           "-device", "isa-debug-exit,iobase=0x501,iosize=1"]
    if drive:
        cmd += ["-object", "iothread,id=io0",
                "-drive", "file=%s,if=none,id=d0,format=raw,cache=none,"
                "aio=%s" % (drive, aio),
                "-device", "virtio-blk-pci,drive=d0,iothread=io0,"
                "num-queues=%d,queue-size=%d" % (cpus, QUEUE_SIZE)]
    return cmd


def qemu_status(rc):
    """isa-debug-exit makes byte v status (v << 1) | 1: 1 is the guest's 0."""
    return (rc - 1) // 2 if rc % 2 == 1 else rc


class Running:
    """A command with its output in a log; what it appended since last
    asked (new_text), and whether it is gpin-vmm (which answers SIGUSR1
    with its counters and its vCPUs' state)."""

    def __init__(self, cmd, log, is_vmm):
        self.cmd = cmd
        self.log = log
        self.is_vmm = is_vmm
        self._out = open(log, "w")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=self._out,
                                     stderr=subprocess.STDOUT)
        self._pos = 0
        self.text = ""

    @property
    def pid(self):
        return self.proc.pid

    def new_text(self):
        with open(self.log, "rb") as f:
            f.seek(self._pos)
            data = f.read()
        # only whole lines: a marker read in halves is no marker
        cut = data.rfind(b"\n") + 1
        self._pos += cut
        new = data[:cut].decode(errors="replace")
        self.text += new
        return new

    def signal_state(self):
        """Asks gpin-vmm for its counters (SIGUSR1); the lines land in the
        log after len(self.text)."""
        if self.is_vmm and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGUSR1)

    def stop(self):
        """A guest that stopped making progress: gpin-vmm says where its
        vCPUs are first (docs/RIG.md), then it is stopped."""
        if self.is_vmm:
            self.signal_state()
            time.sleep(3)
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def finish(self):
        """Waits for the end; returns its status (128 + signal when
        killed) and the output not yet taken, a last partial line too."""
        rc = self.proc.wait()
        self._out.close()
        rest = self.new_text()
        with open(self.log, "rb") as f:
            f.seek(self._pos)
            tail = f.read().decode(errors="replace")
        self.text += tail
        return (128 - rc if rc < 0 else rc), rest + tail


def watch(running, on_text, first_limit, quiet_limit):
    """Feeds RUNNING's new output to ON_TEXT (which returns True when the
    guest made progress: a marker) until it exits.  Stops it when its
    kernel reports a stall (status EX_STALLED), or when the first progress
    takes longer than FIRST_LIMIT seconds or a later one longer than
    QUIET_LIMIT (EX_TIMEOUT).  Returns its status."""
    last, limit, stopped = time.monotonic(), first_limit, None
    while running.proc.poll() is None:
        text = running.new_text()
        if on_text(text):
            last, limit = time.monotonic(), quiet_limit
        if STALL.search(text):
            stopped = EX_STALLED
        elif time.monotonic() - last > limit:
            stopped = EX_TIMEOUT
        if stopped:
            running.stop()
            break
        time.sleep(POLL_S)
    rc, rest = running.finish()
    on_text(rest)
    return stopped or rc
