# SPDX-License-Identifier: GPL-2.0-only
"""A VMM's system calls over one fio job, counted by the kernel.

One perf counter on the raw_syscalls:sys_enter tracepoint per thread of
the process (what `perf stat -e raw_syscalls:sys_enter -p PID` opens),
opened at the job's START marker and read at its STOP, as the KVM
counters are: `perf stat` itself needs a second or more to attach under
TCG and would miss the start of a 5 s job.  Each counter inherits, so a
thread started during the job counts with its creator's.  The same for
gpin-vmm and QEMU: their syscalls per I/O compare directly (KVM_RUN
ioctls, eventfd reads and writes, io_submit or io_uring_enter, gpin.ko's
ioctls, ...).  x86-64 only, as the test host is."""

import ctypes
import os
import struct

NR_PERF_EVENT_OPEN = 298            # x86-64
PERF_TYPE_TRACEPOINT = 2
PERF_ATTR_SIZE_VER0 = 64
PERF_FLAG_FD_CLOEXEC = 8
ATTR_INHERIT = 1 << 1               # perf_event_attr's second flag bit
TRACEFS = ("/sys/kernel/tracing", "/sys/kernel/debug/tracing")
EVENT = "events/raw_syscalls/sys_enter/id"


class PerfEventAttr(ctypes.Structure):
    """perf_event_attr up to PERF_ATTR_SIZE_VER0: type, size, config,
    sample_period, sample_type, read_format, the flag bits, wakeup_events,
    bp_type, bp_addr.  All but four stay zero: count, do not sample."""
    _fields_ = [("type", ctypes.c_uint32), ("size", ctypes.c_uint32),
                ("config", ctypes.c_uint64),
                ("sample_period", ctypes.c_uint64),
                ("sample_type", ctypes.c_uint64),
                ("read_format", ctypes.c_uint64),
                ("flags", ctypes.c_uint64),
                ("wakeup_events", ctypes.c_uint32),
                ("bp_type", ctypes.c_uint32),
                ("bp_addr", ctypes.c_uint64)]


assert ctypes.sizeof(PerfEventAttr) == PERF_ATTR_SIZE_VER0

_libc = ctypes.CDLL(None, use_errno=True)


def tracepoint_id(roots=TRACEFS):
    """The id of raw_syscalls:sys_enter, or None without tracefs."""
    for root in roots:
        try:
            with open(os.path.join(root, EVENT)) as f:
                return int(f.read())
        except (OSError, ValueError):
            continue
    return None


def threads(pid):
    """The thread ids of PID now ([] once it is gone)."""
    try:
        return sorted(int(t) for t in os.listdir("/proc/%d/task" % pid))
    except OSError:
        return []


def _open(attr, tid):
    fd = _libc.syscall(NR_PERF_EVENT_OPEN, ctypes.byref(attr), tid, -1, -1,
                       PERF_FLAG_FD_CLOEXEC)
    return fd if fd >= 0 else None


class Counter:
    """The syscalls of every thread of PID from now on (read() sums them);
    unavailable (read() None) without tracefs or perf events, when the
    counter of any thread could not be opened (a part would undercount),
    or when a counter cannot be read."""

    def __init__(self, pid, event_id=None):
        self.fds = []
        event_id = tracepoint_id() if event_id is None else event_id
        if event_id is None:
            return
        attr = PerfEventAttr(type=PERF_TYPE_TRACEPOINT,
                             size=PERF_ATTR_SIZE_VER0, config=event_id,
                             flags=ATTR_INHERIT)
        tids = threads(pid)
        for tid in tids:
            fd = _open(attr, tid)
            if fd is not None:
                self.fds.append(fd)
        if len(self.fds) != len(tids):
            self.close()

    def read(self):
        if not self.fds:
            return None
        total = 0
        for fd in self.fds:
            data = os.read(fd, 8)
            if len(data) != 8:      # an event in error state reads empty
                return None
            total += struct.unpack("Q", data)[0]
        return total

    def close(self):
        for fd in self.fds:
            os.close(fd)
        self.fds = []
