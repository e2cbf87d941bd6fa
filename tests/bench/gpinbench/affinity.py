# SPDX-License-Identifier: GPL-2.0-only
"""Pinning a VMM's threads to CPUs (e2e --affinity).

A spec names CPU lists per role, e.g. "vcpu=0-3,io=4,5": the VMM's vCPU
threads go one to a CPU of the vcpu list in turn (vCPU N to the Nth CPU,
wrapping), its queue threads likewise over the io list.  The threads are
found by name, in /proc/PID/task/TID/comm:

  gpin-vmm   vcpuN (the vCPUs), blkD-qQ (a disk queue's thread)
  QEMU       "CPU N/KVM" and "IO ID" (its iothreads), with
             -name ...,debug-threads=on

Other threads (the main loop, helpers) are left alone.  The VMM starts
its threads as it boots, so a Pinner looks again on every poll() and pins
what it has not pinned yet.
"""

import os
import re

ROLES = ("vcpu", "io")
_VCPU = (re.compile(r"^vcpu(\d+)$"), re.compile(r"^CPU (\d+)/KVM$"))
_IO = (re.compile(r"^blk\d+-q(\d+)$"), re.compile(r"^IO \S+$"))


class SpecError(ValueError):
    """A spec that names no role, an unknown one, or a bad CPU list."""


def cpu_list(text):
    """"0-3,8" as [0, 1, 2, 3, 8]."""
    cpus = []
    for part in text.split(","):
        lo, sep, hi = part.partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise SpecError("bad CPU list %r" % text)
        lo, hi = int(lo), int(hi) if sep else int(lo)
        if hi < lo:
            raise SpecError("bad CPU range %r" % part)
        cpus.extend(range(lo, hi + 1))
    return cpus


def parse(spec, ncpus=None):
    """{role: [cpu, ...]} of a spec; with NCPUS, every CPU must exist.
    A word with "=" starts a role, a word without one continues its CPU
    list: "vcpu=0,1,io=2" is vcpu 0 and 1, io 2."""
    lists, role = {}, None
    for word in spec.split(","):
        name, sep, cpus = word.partition("=")
        if sep:
            if name not in ROLES:
                raise SpecError("unknown role %r (roles: %s)"
                                % (name, ", ".join(ROLES)))
            if name in lists:
                raise SpecError("%s= given twice" % name)
            role = name
            lists[role] = [cpus]
        elif role:
            lists[role].append(word)
        else:
            raise SpecError("%r: expected ROLE=CPUS first" % word)
    if not lists:
        raise SpecError("no ROLE=CPUS in %r" % spec)
    out = {r: cpu_list(",".join(parts)) for r, parts in lists.items()}
    for r, cpus in out.items():
        if ncpus is not None and max(cpus) >= ncpus:
            raise SpecError("%s=%s: this host has CPUs 0-%d"
                            % (r, ",".join(lists[r]), ncpus - 1))
    return out


def role_of(comm):
    """(role, index) of a thread name, or None for a thread left alone.
    QEMU's iothreads have no index: each is 0."""
    for rx in _VCPU:
        m = rx.match(comm)
        if m:
            return "vcpu", int(m.group(1))
    for rx in _IO:
        m = rx.match(comm)
        if m:
            return "io", int(m.group(1)) if m.groups() else 0
    return None


def plan(threads, cpus):
    """{tid: cpu} for THREADS [(tid, comm)] under CPUS {role: [cpu]}."""
    out = {}
    for tid, comm in threads:
        r = role_of(comm)
        if r and r[0] in cpus:
            role_cpus = cpus[r[0]]
            out[tid] = role_cpus[r[1] % len(role_cpus)]
    return out


def threads_of(pid, proc="/proc"):
    """[(tid, comm)] of a process; [] once it is gone."""
    out = []
    try:
        tids = os.listdir("%s/%d/task" % (proc, pid))
    except OSError:
        return out
    for tid in tids:
        try:
            with open("%s/%d/task/%s/comm" % (proc, pid, tid)) as f:
                out.append((int(tid), f.read().strip()))
        except OSError:
            pass
    return out


class Pinner:
    """Pins PID's threads as CPUS says, as they appear."""

    def __init__(self, pid, cpus, setaffinity=os.sched_setaffinity,
                 proc="/proc"):
        self.pid, self.cpus = pid, cpus
        self.setaffinity, self.proc = setaffinity, proc
        self.pinned = {}        # comm: cpu

    def poll(self):
        threads = threads_of(self.pid, self.proc)
        names = dict(threads)
        for tid, cpu in plan(threads, self.cpus).items():
            if names[tid] in self.pinned:
                continue
            try:
                self.setaffinity(tid, {cpu})
            except OSError:
                continue        # gone meanwhile
            self.pinned[names[tid]] = cpu
        return self.pinned
