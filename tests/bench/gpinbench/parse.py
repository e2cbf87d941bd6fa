# SPDX-License-Identifier: GPL-2.0-only
"""What the programs print, read: fio's JSON, gpin-vmm's counter lines,
gpin-stat's table, the guest's markers on a console log."""

import json
import re

# A line of gpin-vmm's on its stderr, which shares the console log with
# the guest's serial output and can land in the middle of a guest line
# (the console thread writes the guest's bytes as they come).
_VMM_LINE = re.compile(r"gpin-vmm: [^\n]*\n")
# A guest kernel message on the console, "[   12.345678] ..."
_KERNEL_LINE = re.compile(r"^\[\s*\d+\.\d+\]")

# "gpin-vmm: blk0-q1: 5 requests, 1024 bytes, 0 errors" and
# "gpin-vmm: blk0-gpin: dio_requests 4, pin_calls 4, ...": a device, then
# comma-separated items, each a number and a name in either order.
_COUNTER_LINE = re.compile(r"^gpin-vmm: (blk\d+-[\w-]+): (.*)$", re.M)
_NUMBER_NAME = re.compile(r"(\d+) ([A-Za-z_][\w ]*)")
_NAME_NUMBER = re.compile(r"([A-Za-z_][\w ]*?) (\d+)")


def clean_console(text):
    """TEXT without carriage returns, gpin-vmm's own lines (even one cut
    into a guest line: the guest line is whole again) and guest kernel
    messages."""
    text = _VMM_LINE.sub("", text.replace("\r", ""))
    return "\n".join(l for l in text.split("\n")
                     if not _KERNEL_LINE.match(l))


def fio_result(text, rw):
    """The figures of fio's JSON output TEXT (anything before its first
    '{' is ignored: fio's warnings) for direction RW ('randread' reads,
    anything else writes), or a ValueError.  A fio job with
    --group_reporting: one job, numjobs threads summed."""
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON in fio's output")
    job = json.loads(text[start:])["jobs"][0]
    side = job["read" if "read" in rw else "write"]
    clat = side.get("clat_ns", {}).get("percentile", {})

    def pct_us(key):
        v = clat.get(key)
        return v / 1000.0 if v is not None else None
    return {"iops": float(side["iops"]),
            "lat_us": side["lat_ns"]["mean"] / 1000.0,
            # completion latency percentiles (fio's default list)
            "p50_us": pct_us("50.000000"),
            "p99_us": pct_us("99.000000"),
            "p999_us": pct_us("99.900000"),
            "ios": int(side["total_ios"]),
            "bytes": int(side["io_bytes"]),
            "fio_errors": int(job.get("error", 0)),
            "fio_version": json.loads(text[start:]).get("fio version")}


def _items(text):
    out = {}
    for item in text.split(","):
        item = item.strip()
        m = _NUMBER_NAME.fullmatch(item)
        if m:
            out[m.group(2).strip().replace(" ", "_")] = int(m.group(1))
            continue
        m = _NAME_NUMBER.fullmatch(item)
        if m:
            out[m.group(1).strip().replace(" ", "_")] = int(m.group(2))
    return out


def vmm_snapshots(text):
    """gpin-vmm's counter lines in TEXT as snapshots, in order: each a
    {device: {name: value}} ("blk0-q0": requests, bytes, errors;
    "blk0-gpin": dio_requests, pin_calls, pin_fallbacks,
    mmap_lock_wait_us; whatever else the VMM adds).  A device seen again
    starts the next snapshot (SIGUSR1 and the exit print every device
    once).  Items that are not a number and a name are skipped."""
    snaps, cur = [], {}
    for m in _COUNTER_LINE.finditer(text.replace("\r", "")):
        if m.group(1) in cur:
            snaps.append(cur)
            cur = {}
        cur[m.group(1)] = _items(m.group(2))
    if cur:
        snaps.append(cur)
    return snaps


def subtract(after, before):
    """AFTER − BEFORE for nested {name: number} dicts; names only in AFTER
    count from 0."""
    out = {}
    for k, v in after.items():
        if isinstance(v, dict):
            out[k] = subtract(v, before.get(k, {}))
        else:
            out[k] = v - before.get(k, 0)
    return out


def sum_queues(counters, name):
    """NAME summed over the "blkN-qM" devices of COUNTERS."""
    return sum(v.get(name, 0) for dev, v in counters.items()
               if re.fullmatch(r"blk\d+-q\d+", dev))


def gpin_stat(text):
    """{mode: {column: value}} from gpin-stat's table (a header line that
    starts with "mode", then one line per mode)."""
    cols, out = None, {}
    for line in text.splitlines():
        words = line.split()
        if words[:1] == ["mode"]:
            cols = words[1:]
        elif cols and len(words) == len(cols) + 1:
            try:
                out[words[0]] = {c: int(v) for c, v in zip(cols, words[1:])}
            except ValueError:
                continue
    return out


class Markers:
    """Reads a growing console log and yields the guest's markers.

    The guest prints "TAG-START id", "TAG-STOP id", "TAG-BEGIN id", its
    fio JSON, "TAG-END" (TAG: the benchmark's).  feed(text) takes what was
    appended since the last call and returns [(marker, id, block)]: block
    is the text between BEGIN and END for an END, else ''.  A marker need
    not start its line (QEMU's firmware leaves escapes before the first
    line the guest prints)."""

    def __init__(self, tag):
        self._re = re.compile(r"%s-(START|STOP|BEGIN|END|ERROR)\b ?([^\n]*)"
                              % re.escape(tag))
        self._partial = ""
        self._block = None
        self._id = ""

    def feed(self, text):
        events = []
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            events += self._line(line)
        return events

    def _line(self, line):
        m = self._re.search(clean_console(line + "\n"))
        if not m:
            if self._block is not None:
                self._block.append(line)
            return []
        marker, ident = m.group(1), m.group(2).strip()
        if marker == "BEGIN":
            self._block, self._id = [], ident
            return []
        if marker == "END":
            block = clean_console("\n".join(self._block or []) + "\n")
            self._block = None
            return [("END", self._id, block)]
        return [(marker, ident, "")]


# /proc/interrupts rows that are IPIs between the guest's CPUs: a wake-up
# of a task on another CPU, a function call, a TLB shootdown.
_IPI_ROWS = ("RES", "CAL", "TLB")


def _interrupt_rows(lines, ncpu):
    """{row: count summed over the CPUs} of one /proc/interrupts table
    (its header line removed).  A numbered row is named by the action
    that closes it (the device, as virtio0-req.1)."""
    rows = {}
    for line in lines:
        label, sep, rest = line.partition(":")
        if not sep or not label.strip():
            continue
        fields = rest.split()
        counts = []
        for f in fields[:ncpu]:
            if not f.isdigit():
                break
            counts.append(int(f))
        if not counts:
            continue
        label = label.strip()
        if label.isdigit():
            label = fields[-1] if len(fields) > len(counts) else label
        rows[label] = rows.get(label, 0) + sum(counts)
    return rows


def interrupt_tables(text):
    """The /proc/interrupts tables in TEXT, one {row: count} each; a
    table starts at its "CPU0 CPU1 ..." header."""
    tables, lines, ncpu = [], None, 0
    for line in clean_console(text).split("\n"):
        words = line.split()
        if words and all(w.startswith("CPU") for w in words):
            if lines is not None:
                tables.append(_interrupt_rows(lines, ncpu))
            lines, ncpu = [], len(words)
        elif lines is not None:
            lines.append(line)
    if lines is not None:
        tables.append(_interrupt_rows(lines, ncpu))
    return tables


def interrupt_group(row):
    """Which kind of interrupt a /proc/interrupts row counts: "virtio"
    (a virtio device's queues; not its configuration vector), "ipi",
    "timer" (the local APIC timer) or "other"."""
    if row.startswith("virtio") and not row.endswith("-config"):
        return "virtio"
    if row in _IPI_ROWS:
        return "ipi"
    return "timer" if row == "LOC" else "other"


def interrupt_delta(text):
    """The interrupts the guest took between its two /proc/interrupts
    tables in TEXT, by interrupt_group(); None without two tables."""
    tables = interrupt_tables(text)
    if len(tables) != 2:
        return None
    before, after = tables
    out = {"virtio": 0, "ipi": 0, "timer": 0, "other": 0}
    for row, n in after.items():
        out[interrupt_group(row)] += max(n - before.get(row, 0), 0)
    return out
