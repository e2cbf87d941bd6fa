# SPDX-License-Identifier: GPL-2.0-only
"""Deaths of guests and test hosts: what they look like, and the one policy.

The nested test rig (docs/RIG.md) runs Linux guests on kvm-amd inside a
QEMU/TCG test host.  TCG's emulation of nested SVM now and then kills a
guest (triple fault, double fault, stall, hang) or the test host itself
(panic, wedge, silence, reset) through no fault of gpin's.  Every test that
boots something asks this module what happened, and this module alone
decides what is done about it:

  - every death is recorded, with its signature, in a ledger (one JSON line
    each) that the rig and scripts/test print in their summaries;
  - a death whose trace names gpin code (a gpin.ko frame, gpin-vmm killed
    by a signal or a sanitizer) is a failure at once, never retried;
  - otherwise a case may die RETRIES[where] times and is run again; one
    more death fails it.  A guest may die twice: a boot is cheap, and a
    hang only counts as a death when its rings are idle (stuck_queues:
    a device that lost an event is gpin's, and fails at once).  A test
    host, whose death reruns the whole COMMAND, once.

A "case" is one named unit of a test (a run_cases case, a demo boot, or
the rig's COMMAND as a whole for a test-host death).  The ledger is the
file $GPIN_DEATH_LOG; inside the test host the rig points it into its out
directory and copies the records out when the test host is gone.
"""

import dataclasses
import json
import os
import re
import signal
import time

# A case may die this often, per where, and run again; one more fails it.
RETRIES = {"guest": 2, "test host": 1}

# Frames of gpin.ko in a kernel trace: "[gpin]" after a symbol, or a gpin_
# function ("gpin_walk_pmd+0x1c/0x90").
_GPIN_FRAME = re.compile(r"\[gpin\]|\bgpin_[a-z0-9_]+\+0x[0-9a-f]+")

# Signals that mean gpin-vmm itself crashed (status 128 + signal).
_VMM_CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT,
                      signal.SIGILL, signal.SIGFPE}
_SANITIZER = re.compile(r"ERROR: (Address|Undefined|Leak|Thread)Sanitizer"
                        r"|runtime error: ")

# Messages of a test-host (or guest) kernel in trouble, most telling first.
_KERNEL_FAULTS = [
    re.compile(r"Kernel panic - not syncing:.*"),
    re.compile(r"BUG: unable to handle .*"),
    re.compile(r"kernel BUG at .*"),
    re.compile(r"general protection fault.*"),
    re.compile(r"Oops: .*"),
    re.compile(r"BUG: soft lockup - CPU#\d+ stuck for \d+s!.*"),
    re.compile(r"BUG: KASAN: .*"),
    re.compile(r"WARNING: CPU: \d+ PID: \d+ at .*"),
]
_RIP = re.compile(r"RIP: [0-9a-f]{4}:(\S+)")
_STAMP = re.compile(r"^\[\s*\d+\.\d+\]\s*")

EX_TIMEOUT = 124
EX_STALLED = 125        # guest-test-lib.sh's run_vmm: an RCU stall or lockup


@dataclasses.dataclass
class Death:
    """One death.  where: 'guest' or 'test host'; kind: its signature."""
    where: str
    kind: str
    detail: str = ""
    in_gpin: bool = False

    def describe(self):
        text = "%s %s" % (self.where, self.kind)
        if self.detail:
            text += " (%s)" % self.detail
        if self.in_gpin:
            text += " [gpin code in the trace]"
        return text


def gpin_frames(text):
    """The gpin.ko frames that a kernel trace in TEXT names, in order.

    Not the entries the unwinder marks "?": those are words found on the
    stack that look like return addresses, left by calls that have long
    returned (a task that went from gpin's ioctl into sched_yield() keeps
    "? gpin_dio_reap+0x313" below its frames), not part of the chain that
    faulted.  The faulting RIP and every reliable frame still count."""
    seen = []
    for line in text.splitlines():
        if _clean(line).startswith("? "):
            continue
        for m in _GPIN_FRAME.finditer(line):
            if m.group(0) not in seen:
                seen.append(m.group(0))
    return seen


def _clean(line):
    return _STAMP.sub("", line.replace("\r", "")).strip()


def kernel_fault(text, patterns=None):
    """The first line of TEXT that says a kernel is in trouble, with the
    RIP that follows it, or ''.  PATTERNS (default: every kind of fault,
    the most telling first) are what counts."""
    lines = [_clean(l) for l in text.splitlines()]
    for pattern in patterns or _KERNEL_FAULTS:
        for i, line in enumerate(lines):
            m = pattern.search(line)
            if not m:
                continue
            what = m.group(0)
            for later in lines[i + 1:i + 40]:
                rip = _RIP.search(later)
                if rip:
                    return "%s at %s" % (what, rip.group(1))
            return what
    return ""


def soft_lockups(text):
    """How many soft lockups of 100 s and more TEXT reports."""
    return len(re.findall(r"soft lockup - CPU#\d+ stuck for \d{3,}s", text))


# gpin-vmm's SIGUSR1 line of a queue's ring (virtio_blk__print_rings).
_RING = re.compile(r"^gpin-vmm: (blk\d+-q\d+)-ring: avail (\d+), "
                   r"taken (\d+), .*?(avail_event|no_notify) (\d+), "
                   r".*\binflight (\d+),", re.M)


def _ring_verdict(m):
    """What one ring line says: 'gpin' (the device holds work nobody will
    do), 'notify' (chains wait for a notification the driver should have
    sent) or None (idle)."""
    avail, taken, inflight = int(m.group(2)), int(m.group(3)), int(m.group(6))
    if inflight:
        return "gpin"
    if avail == taken:
        return None
    if m.group(4) == "avail_event":
        notify_on = int(m.group(5)) == taken
    else:
        notify_on = m.group(5) == "0"
    return "notify" if notify_on else "gpin"


def stuck_queues(log):
    """The queues of a guest that hung which gpin-vmm left with work in
    them: the two last snapshots of the ring (run_vmm signals SIGUSR1
    twice, seconds apart) agree, and show requests in flight, or chains
    taken by nobody.  A guest that TCG stopped leaves its rings idle.
    Returns (gpin, notify), lists of "blkN-qM-ring: ..." lines: queues
    where gpin-vmm holds work nobody will do (requests in flight that
    never came back; chains left with notifications off: a lost
    wake-up), and queues whose chains wait for a notification with
    notifications on (a lost notify exit, or a guest stopped between
    publishing and notifying)."""
    seen = {}
    for m in _RING.finditer(log):
        seen.setdefault(m.group(1), []).append(m)
    out = {"gpin": [], "notify": []}
    for _, snaps in sorted(seen.items()):
        if len(snaps) < 2 or snaps[-1].group(0) != snaps[-2].group(0):
            continue
        verdict = _ring_verdict(snaps[-1])
        if verdict:
            line = log[snaps[-1].start():].split("\n", 1)[0]
            out[verdict].append(line[len("gpin-vmm: "):].strip())
    return out["gpin"], out["notify"]


# EFLAGS bits an x86 CPU can hold (CF, 1, PF, AF, ZF..OF, IOPL, NT, RF..ID):
# any other bit set in a register dump, or bit 1 clear, is no state a CPU
# can be in - the (nested, emulated) virtualisation corrupted it.
_EFLAGS_VALID = 0x3F7FD7
_EFLAGS = re.compile(r"(?:EFLAGS: |gpin-vmm: vcpu\d+: rip \S+ rsp \S+ "
                     r"rflags 0x)([0-9a-f]+)")


def corrupt_cpu_state(log):
    """The first register dump in LOG (the guest kernel's oops, gpin-vmm's
    vCPU registers) whose flags no CPU can hold, as its line; or ""."""
    for m in _EFLAGS.finditer(log):
        flags = int(m.group(1), 16)
        if flags & ~_EFLAGS_VALID or not flags & 2:
            start = log.rfind("\n", 0, m.start()) + 1
            return _clean(log[start:].split("\n", 1)[0])
    return ""


def guest_death(log, status, want=0):
    """Whether the guest of console log LOG (gpin-vmm's stdout and stderr),
    whose VMM ended with STATUS where WANT was expected, died; a Death or
    None.  A guest that did not die but got the wrong status is a plain
    failure: None."""
    if status > 128 and status - 128 in _VMM_CRASH_SIGNALS:
        return Death("guest", "gpin-vmm crash",
                     "killed by %s" % signal.Signals(status - 128).name,
                     in_gpin=True)
    m = _SANITIZER.search(log)
    if m:
        return Death("guest", "gpin-vmm crash", m.group(0), in_gpin=True)
    if re.search(r"^gpin-vmm: guest triple fault", log, re.M):
        m = re.search(r"^gpin-vmm: vcpu\d+: rip \S+", log, re.M)
        return Death("guest", "triple fault", m.group(0) if m else "")
    if "PANIC: double fault" in log:
        return Death("guest", "double fault", kernel_fault(
            log, [re.compile(r"PANIC: double fault.*")]))
    if status == want:
        return None
    if status == EX_STALLED:
        return Death("guest", "stall", kernel_fault(log))
    if status == EX_TIMEOUT:
        stuck, waiting = stuck_queues(log)
        if stuck:
            return Death("guest", "stuck queue", "; ".join(stuck),
                         in_gpin=True)
        return Death("guest", "hang", "; ".join(waiting) or
                     corrupt_cpu_state(log) or "no progress until the limit")
    fault = kernel_fault(log, _KERNEL_FAULTS[:1])
    if fault:
        return Death("guest", "panic", fault)
    # an oops that killed the job, not the kernel: a death only when the
    # CPU's own state says the virtualisation broke it
    bad = corrupt_cpu_state(log)
    if bad:
        return Death("guest", "corrupt CPU state", bad)
    return None


def test_host_death(console, began, stopped_for="", cpus=""):
    """What killed a test host that ended without COMMAND's result.

    CONSOLE is its console, BEGAN whether COMMAND had started, STOPPED_FOR
    why the rig stopped it ('silence', 'wedge', 'boot hang'; '' when it
    ended by itself) and CPUS where its CPUs were (the rig's dump)."""
    fault = kernel_fault(console)
    if stopped_for == "silence":
        kind, detail = "silence", cpus or "no heartbeat"
    elif stopped_for == "wedge":
        kind, detail = "wedge", fault
    elif stopped_for:
        kind, detail = stopped_for, fault or cpus
    elif fault:
        kind, detail = "crash", fault
    else:
        kind, detail = "reset", "QEMU ended with no result and no message"
    if not began:
        kind = "boot " + kind
    return Death("test host", kind, detail,
                 in_gpin=bool(gpin_frames(console + "\n" + cpus)))


class Ledger:
    """The death log: one JSON object a line, appended to by every judge."""

    def __init__(self, path):
        self.path = path

    def records(self):
        try:
            with open(self.path) as f:
                return [json.loads(l) for l in f if l.strip()]
        except FileNotFoundError:
            return []

    def append(self, record):
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        with open(self.path, "a") as f:
            f.write(json.dumps(record, sort_keys=True) + "\n")

    def judge(self, test, case, death, log=""):
        """Records DEATH of CASE in TEST and returns 'retry' or 'fail'."""
        before = sum(1 for r in self.records()
                     if r.get("test") == test and r.get("case") == case)
        if death.in_gpin:
            action = "failed"
        elif before >= RETRIES[death.where]:
            action = "failed"
        else:
            action = "retried"
        self.append({"test": test, "case": case, "where": death.where,
                     "kind": death.kind, "detail": death.detail,
                     "in_gpin": death.in_gpin, "action": action, "log": log,
                     "time": time.strftime("%Y-%m-%dT%H:%M:%S")})
        return "retry" if action == "retried" else "fail"


def describe_record(r):
    where = r.get("test", "?")
    if r.get("case"):
        where += "/" + r["case"]
    text = "%s: %s %s" % (where, r.get("where", "?"), r.get("kind", "?"))
    if r.get("detail"):
        text += " (%s)" % r["detail"]
    if r.get("in_gpin"):
        text += " [gpin code]"
    return text + ", " + r.get("action", "?")


def summary_lines(records):
    """One line per death, then a count by signature."""
    if not records:
        return ["deaths: none"]
    lines = ["deaths: %d" % len(records)]
    lines += ["  " + describe_record(r) for r in records]
    counts = {}
    for r in records:
        key = "%s %s" % (r.get("where"), r.get("kind"))
        counts[key] = counts.get(key, 0) + 1
    lines.append("  by signature: " + ", ".join(
        "%s x%d" % (k, n) for k, n in sorted(counts.items())))
    return lines


def default_ledger():
    """$GPIN_DEATH_LOG, or the rig's out directory's ledger inside a test
    host."""
    if os.environ.get("GPIN_DEATH_LOG"):
        return os.environ["GPIN_DEATH_LOG"]
    if os.environ.get("RIG_OUT"):
        return os.path.join(os.environ["RIG_OUT"], ".rig", "deaths.jsonl")
    return ""


def main(argv=None):
    """tests/lib/deaths: the policy for shell scripts.

    deaths guest --case NAME --log FILE --status N [--want N]
        exit 0: the guest did not die (STATUS is the case's own result);
        10: it died, run the case again; 1: it died, the case fails.
        Says which on stdout, as TAP comments.
    deaths classify --log FILE --status N [--want N]
        prints the guest's death signature, or nothing; records nothing
        (for diagnostics that count deaths, tests/rig/guest-deaths.sh).
    deaths summary [LEDGER]
        prints the deaths recorded so far.
    """
    import argparse
    p = argparse.ArgumentParser(prog="deaths", description=main.__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("guest")
    g.add_argument("--case", required=True)
    g.add_argument("--log", required=True)
    g.add_argument("--status", type=int, required=True)
    g.add_argument("--want", type=int, default=0)
    g.add_argument("--test", default=os.environ.get("GPIN_TEST_NAME", ""))
    g.add_argument("--ledger", default=default_ledger())
    c = sub.add_parser("classify")
    c.add_argument("--log", required=True)
    c.add_argument("--status", type=int, required=True)
    c.add_argument("--want", type=int, default=0)
    s = sub.add_parser("summary")
    s.add_argument("ledger", nargs="?", default=default_ledger())
    args = p.parse_args(argv)

    if args.cmd == "summary":
        for line in summary_lines(Ledger(args.ledger).records()):
            print(line)
        return 0
    if args.cmd == "classify":
        with open(args.log, errors="replace") as f:
            death = guest_death(f.read(), args.status, args.want)
        if death:
            print(death.describe())
        return 0
    if not args.ledger:
        p.error("no ledger: set GPIN_DEATH_LOG or RIG_OUT, or pass --ledger")
    with open(args.log, errors="replace") as f:
        log = f.read()
    death = guest_death(log, args.status, args.want)
    if death is None:
        return 0
    verdict = Ledger(args.ledger).judge(args.test, args.case, death, args.log)
    print("# %s: the %s" % (args.case, death.describe()))
    if verdict == "retry":
        print("# %s: running it again (the death policy allows %d; "
              "tests/lib/gpintest/deaths.py)"
              % (args.case, RETRIES[death.where]))
        return 10
    why = ("it is gpin's (%s)" % death.kind if death.in_gpin
           else "it died %d times" % (RETRIES[death.where] + 1))
    print("# %s: failed: %s" % (args.case, why))
    return 1
