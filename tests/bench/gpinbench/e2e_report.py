# SPDX-License-Identifier: GPL-2.0-only
"""The end-to-end benchmark's report: e2e.md, e2e.json, e2e.jsonl and
e2e.png from the raw records."""

import collections
import os

from . import parse, report, stats
from .e2e_host import CONFIGS
from .workload import Workload


def _per_io(r, value):
    return value / r["ios"] if value is not None and r.get("ios") else None


def _kvm(r, name):
    return (r.get("kvm") or {}).get(name)


def _vmm_gpin(r, name):
    """A counter of gpin-vmm's own "blkN-gpin" line, summed over disks."""
    vmm = r.get("vmm") or {}
    vals = [v[name] for dev, v in vmm.items()
            if dev.endswith("-gpin") and name in v]
    return sum(vals) if vals else None


def _gpin(r, vmm_name, stat_name, scale=1):
    """A pin counter: gpin-vmm's own line, else gpin-stat's (module-wide
    for the configuration's mode)."""
    v = _vmm_gpin(r, vmm_name)
    if v is None and (r.get("gpin") or {}).get(stat_name) is not None:
        v = r["gpin"][stat_name] / scale
    return v


def _requests(r):
    """Requests over gpin-vmm's queues ("blkN-qM" lines)."""
    return parse.sum_queues(r["vmm"], "requests") if r.get("vmm") else None


def _pages_per_call(r):
    g = r.get("gpin") or {}
    return g["pages"] / g["calls"] if g.get("calls") else None


def _guest_irqs(r, group):
    """Interrupts of GROUP (parse.interrupt_group) the guest took."""
    return (r.get("guest_irqs") or {}).get(group)


def _exits_irqs(r):
    e, i = _kvm(r, "exits"), _kvm(r, "irq_injections")
    return _per_io(r, e + i) if e is not None and i is not None else None


METRICS = {
    "iops": lambda r: r["iops"],
    "lat_us": lambda r: r["lat_us"],
    "p50_us": lambda r: r.get("p50_us"),
    "p99_us": lambda r: r.get("p99_us"),
    "p999_us": lambda r: r.get("p999_us"),
    "exits_per_io": lambda r: _per_io(r, _kvm(r, "exits")),
    "irqs_per_io": lambda r: _per_io(r, _kvm(r, "irq_injections")),
    "exits_irqs_per_io": _exits_irqs,
    "guest_device_irqs_per_io": lambda r: _per_io(
        r, _guest_irqs(r, "virtio")),
    "guest_ipis_per_io": lambda r: _per_io(r, _guest_irqs(r, "ipi")),
    "guest_timer_irqs_per_io": lambda r: _per_io(r, _guest_irqs(r, "timer")),
    "requests_per_io": lambda r: _per_io(r, _requests(r)),
    "syscalls_per_io": lambda r: _per_io(r, r.get("vmm_syscalls")),
    "pin_calls_per_io": lambda r: _per_io(
        r, _gpin(r, "pin_calls", "calls")),
    "pages_per_call": _pages_per_call,
    "pin_fallbacks": lambda r: _gpin(r, "pin_fallbacks", "fallbacks"),
    "lock_wait_us_per_io": lambda r: _per_io(
        r, _gpin(r, "mmap_lock_wait_us", "lockwait_ns", 1000)),
}

# The latency tables: (metric, title)
LATENCY = [("p50_us", "Completion latency p50, us"),
           ("p99_us", "Completion latency p99, us"),
           ("p999_us", "Completion latency p99.9, us"),
           ("lat_us", "Mean latency, us")]

# The counts table: (metric, column heading)
COUNTS = [("exits_per_io", "KVM exits / I/O"),
          ("irqs_per_io", "interrupts / I/O"),
          ("guest_device_irqs_per_io", "guest: disk IRQs / I/O"),
          ("guest_ipis_per_io", "guest: IPIs / I/O"),
          ("guest_timer_irqs_per_io", "guest: timer IRQs / I/O"),
          ("requests_per_io", "VMM requests / I/O"),
          ("syscalls_per_io", "VMM syscalls / I/O"),
          ("pin_calls_per_io", "pin calls / I/O"),
          ("pages_per_call", "pages / pin call"),
          ("pin_fallbacks", "pin fallbacks"),
          ("lock_wait_us_per_io", "mmap_lock wait us / I/O")]


def cells(records):
    """The (cpus, rw, bs, qd) cells of the job records, in a stable order."""
    keys = {(r["cpus"], r["bs"], r["rw"], r["qd"])
            for r in records if r.get("kind") == "job"}
    order = {"4k": 0, "64k": 1, "256k": 2}
    return [{"cpus": c, "rw": rw, "bs": bs, "qd": qd}
            for c, bs, rw, qd in sorted(keys, key=lambda k: (
                k[0], order.get(k[1], 9), k[1], k[2], k[3]))]


def cell_label(cell):
    return "%d vCPUs, %s" % (cell["cpus"],
                            Workload.from_record(cell).label)


def gpin_vmm_text(meta):
    """How gpin-vmm ran: its defaults, or what the run set for all."""
    if meta.get("transport"):
        text = "virtio transport %s (e2e --transport)" % meta["transport"]
    else:
        text = ("its own defaults (`--disk PATH,pin=MODE`; a configuration "
                "named NAME@WORDS adds WORDS, a non-default setting)")
    return text + vmm_disk_text(meta)


def command_lines(records):
    """Each configuration's command line (its first boot's) and QEMU's
    version, as the test host had it."""
    seen, lines = {}, []
    for r in records:
        if r.get("kind") == "boot" and r.get("command"):
            seen.setdefault(r["config"], r["command"])
    versions = sorted({r["qemu_version"] for r in records
                       if r.get("kind") == "host" and r.get("qemu_version")})
    if versions:
        lines += ["QEMU: %s." % "; ".join(versions), ""]
    fios = sorted({r["fio_version"] for r in records
                   if r.get("kind") == "job" and r.get("fio_version")})
    if fios:
        lines += ["fio (in the guest): %s." % "; ".join(fios), ""]
    hosts = [r for r in records if r.get("kind") == "host"]
    pins = sorted({r["affinity"] for r in hosts if r.get("affinity")})
    if pins:
        lines += ["Threads pinned to CPUs (--affinity): %s."
                  % "; ".join(pins), ""]
    elif any("affinity" in r for r in hosts):
        # runs from before --affinity say nothing either way
        lines += ["Threads not pinned: the scheduler placed them (no "
                  "--affinity).", ""]
    for config in sorted(seen):
        lines += ["- %s:" % config, "", "      " + seen[config], ""]
    return lines or ["(not recorded by this run)"]


def vmm_disk_text(meta):
    """What every gpin-vmm configuration added to its --disk, if anything
    (runs from before --vmm-disk have no such key: nothing)."""
    words = meta.get("vmm_disk")
    if not words:
        return ""
    return (", and every configuration of it runs with `--disk ...,%s` "
            "(e2e --vmm-disk; a configuration's own words after @ win)"
            % words)


def present(records):
    """The configurations with results, in CONFIGS' order; a variant
    (fast@poll=0) right after its base configuration."""
    have = {r["config"] for r in records if r.get("kind") == "job"}
    order = {c: i for i, c in enumerate(CONFIGS)}
    return sorted(have, key=lambda c: (order.get(c.partition("@")[0],
                                                 len(CONFIGS)), c))


def figure_tables(jobs, configs, metric, title):
    lines = []
    for cpus in sorted({c["cpus"] for c in cells(jobs)}):
        lines += ["", "%s, %d vCPUs:" % (title, cpus), ""]
        rows = []
        for cell in (c for c in cells(jobs) if c["cpus"] == cpus):
            rows.append([Workload.from_record(cell).label] + [
                report.est_md(report.estimate(jobs, cfg, cell,
                                              METRICS[metric]))
                for cfg in configs])
        lines += report.table(["workload"] + configs, rows)
    return lines


def counts_table(jobs, configs):
    rows = []
    for cell in cells(jobs):
        for cfg in configs:
            if cfg == "direct":
                continue
            ests = [report.estimate(jobs, cfg, cell, METRICS[m])
                    for m, _ in COUNTS]
            if all(e.value is None for e in ests):
                continue
            rows.append([cell_label(cell), cfg] +
                        [report.est_md(e) for e in ests])
    return report.table(["cell", "config"] + [h for _, h in COUNTS], rows)


def significance_summary(results):
    """Per comparison name: in which cells its interval excludes 1 (or 0)."""
    names = []
    for x in results:
        if x["row"].den and x["row"].name not in names:
            names.append(x["row"].name)
    lines = []
    for name in names:
        xs = [x for x in results if x["row"].name == name]
        sig = [x for x in xs if x["estimate"].significant()]
        bare = sum(1 for x in xs if not x["estimate"].has_interval)
        text = "- %s: significant in %d of %d cells" % (name, len(sig),
                                                        len(xs))
        if bare:
            text += ", %d without an interval (too few rounds)" % bare
        if sig:
            text += " (" + "; ".join(
                "%s: %s" % (cell_label(x["cell"]),
                            report.est_md(x["estimate"])) for x in sig) + ")"
        lines.append(text + ".")
    return lines


def irqoff_table(records):
    """Per vCPU count and pinning configuration: the boots' longest
    interrupts-off windows, us (median [95% CI], boots)."""
    boots = {}
    for r in records:
        if r.get("kind") == "boot" and r.get("irqoff_max_ns") is not None:
            boots.setdefault((r["cpus"], r["config"]), []).append(
                r["irqoff_max_ns"] / 1e3)
    if not boots:
        return ["No boot recorded it."]
    return report.table(
        ["vCPUs", "config", "longest IRQ-off window, us", "boots"],
        [[c, cfg, report.est_md(stats.median(v)), len(v)]
         for (c, cfg), v in sorted(boots.items())])


def runs_lines(records, ledger):
    boots = [r for r in records if r.get("kind") == "boot"]
    hosts = [r for r in records if r.get("kind") == "host"]
    secs = sorted(r["seconds"] for r in boots
                  if r.get("seconds") and r["config"] != "direct")
    starts = collections.Counter(h["cpus"] for h in hosts)
    lines = ["%d guest boots (or direct runs); test-host starts of the "
             "benchmark, one test host per vCPU count: %s (a second start "
             "for a vCPU count follows a test-host death: the rig ran it "
             "again and it kept the finished rounds)."
             % (len(boots), ", ".join("%d for %d vCPUs" % (n, c)
                                      for c, n in sorted(starts.items()))
                or "none recorded")]
    if secs:
        lines[0] += ("  A guest's boot with its jobs took %.0f s (median; "
                     "%.0f-%.0f)." % (secs[len(secs) // 2], secs[0],
                                      secs[-1]))
    dead = [r for r in boots if r.get("death")]
    if dead:
        lines.append("Guests that died (TCG, docs/RIG.md) and what was done "
                     "(tests/lib/gpintest/deaths.py): " + "; ".join(
                         "%s, %d vCPUs, round %d: %s" % (
                             r["config"], r["cpus"], r["round"], r["death"])
                         for r in dead) + ".")
    host_deaths = [d for d in ledger if d.get("where") == "test host"]
    if host_deaths:
        lines.append("Test-host deaths: " + "; ".join(
            "%s (%s)" % (d.get("kind"), d.get("action"))
            for d in host_deaths) + ".")
    short = [r for r in boots if r.get("jobs_left")]
    if short:
        lines.append("Boots that left jobs without a result: " + "; ".join(
            "%s, %d vCPUs, round %d, status %s: %s" % (
                r["config"], r["cpus"], r["round"], r["status"],
                " ".join(r["jobs_left"])) for r in short) + ".")
    return lines


# The plot's panels, per vCPU count: (metric, title, axis)
PANELS = [("iops", "fio IOPS in the guest", "IOPS (log)"),
          ("p99_us", "fio completion latency p99", "us (log)"),
          ("p999_us", "fio completion latency p99.9", "us (log)")]


def plot_data(jobs, configs, results):
    from . import plot      # see write()
    panels = []
    for cpus in sorted({c["cpus"] for c in cells(jobs)}):
        cs = [c for c in cells(jobs) if c["cpus"] == cpus]
        for metric, title, ylabel in PANELS:
            panels.append({
                "title": "%s, %d vCPUs (median, 95%% CI)" % (title, cpus),
                "ylabel": ylabel,
                "groups": [Workload.from_record(c).label for c in cs],
                "series": {cfg: [report.estimate(jobs, cfg, c,
                                                 METRICS[metric])
                                 for c in cs] for cfg in configs}})
    return panels, plot.strips(results, cells(jobs), short_label)


def short_label(cell):
    return "%d vCPUs %s" % (cell["cpus"], Workload.from_record(cell).label)


def backing_text(meta):
    """The disk the VMMs served."""
    if meta.get("backing", "null_blk") == "null_blk":
        return "null_blk, memory-backed, where the guests ran"
    return "the block device %s (e2e --device)" % meta["backing"]


def where_text(meta):
    """Where the guests ran."""
    if meta.get("host_kind") == "native":
        return "natively on this host (kernel %s)" % meta["kernel"]
    return ("in the rig's QEMU/TCG test host (kernel %s; as many CPUs as "
            "the guest has vCPUs)" % meta["kernel"])


def write(out, records, ledger, meta, png=True):
    """Writes OUT/e2e.{md,json,jsonl,png}; returns the Markdown."""
    jobs = [r for r in records if r.get("kind") == "job"]
    configs = present(jobs)
    results = report.evaluate("e2e", cells(jobs), jobs, METRICS)
    judged = [x for x in results if x["verdict"]]
    free = [x for x in results if not x["verdict"]]
    md = ["# End-to-end: fio in a guest, gpin-vmm's pin modes against QEMU",
          "", "Generated by", "", "    " + meta["command"], "",
          "at commit %s on %s, %s, started on %s; "
          "backing: %s; "
          "gpin-vmm: %s; QEMU: an iothread, aio=io_uring (qemu-native: "
          "aio=native), cache=none (command lines below); the guests on "
          "%s.  fio: "
          "direct=1, libaio, numjobs = vCPUs, %d s per job, %s.  "
          "`direct` is the same fio on the backing itself, outside any "
          "guest.  %s"
          % (meta["commit"], meta["date"], where_text(meta),
             report.machine(meta), backing_text(meta), gpin_vmm_text(meta),
             meta["paging"],
             meta["runtime"],
             "after an unmeasured run of %d s (the ramp)" % meta["ramp"]
             if meta.get("ramp") else "no ramp",
             "" if meta.get("host_kind") == "native" else
             "TCG figures are not absolute: compare within one run."),
          "", report.method_text(meta["rounds"]),
          "", "## Targets", ""]
    md += report.comparison_lines(judged, cell_label)
    md += ["", report.family_text(results)]
    md += ["", "## Which differences are significant", ""]
    md += significance_summary(results)
    md += ["", "## IOPS"]
    md += figure_tables(jobs, configs, "iops", "IOPS (median [95% CI])")
    md += ["", "## Latency", "",
           "fio's completion latency in the guest (clat: from the "
           "request's submission to its completion, as fio's JSON gives "
           "it for every job), in us: the median, p99 and p99.9 of each "
           "job, then the median of those over the rounds with its 95% "
           "interval; and the mean total latency."]
    for metric, title in LATENCY:
        md += figure_tables(jobs, configs, metric, title)
    md += ["", "## Counts per I/O", "",
           "Counts do not drift with TCG as times do.  KVM exits and "
           "interrupt injections: the test host's KVM debugfs, read when the "
           "guest starts and ends each fio job, over fio's I/Os; VMM "
           "requests: gpin-vmm's own queue counters (SIGUSR1 at the same "
           "moments); VMM syscalls: the test host kernel's "
           "raw_syscalls:sys_enter tracepoint, counted on every thread of "
           "gpin-vmm or QEMU from START to STOP (gpinbench/syscalls.py; "
           "gpin-vmm's answer to that SIGUSR1 adds a few dozen); "
           "pin calls, fallbacks and mmap_lock wait: gpin-vmm's "
           "`blkN-gpin` line, pages per pin call: gpin-stat (gpin.ko, "
           "module-wide for the mode); the guest's interrupts: its "
           "/proc/interrupts before and after fio (disk: the virtio "
           "device's queue vectors; IPIs: RES, CAL, TLB; timer: LOC).", ""]
    md += counts_table(jobs, configs)
    md += ["", "## Interrupts-off windows of the pin calls", "",
           "The longest window a pin call of the boot kept interrupts off "
           "in (gpin.ko's max_irqoff_ns for the mode, reset as each guest "
           "boots and read as it ends: fast, the walk's windows; locked "
           "takes the lock with interrupts on and reads 0; kernel and "
           "qemu do not pin through gpin.ko), in us, median over the boots "
           "with its 95% interval.  Under TCG a window stretches when the "
           "test host's vCPU thread is descheduled in it.", ""]
    md += irqoff_table(records)
    md += ["", "## Comparisons without a target", ""]
    md += report.comparison_lines(free, cell_label)
    md += ["", "## Runs", ""] + runs_lines(records, ledger)
    md += ["", "## Command lines", ""] + command_lines(records)
    md += ["", "![IOPS per configuration, ratios against targets](e2e.png)",
           ""]
    text = "\n".join(md)
    figures = [dict(cell, config=cfg, metric=m,
                    **report.estimate(jobs, cfg, cell, METRICS[m]).to_json())
               for cell in cells(jobs) for cfg in configs for m in METRICS]
    report.write_files(out, "e2e", text, records,
                       report.summary(meta, figures, results, ledger,
                                      configs=configs))
    if png:
        # only here: matplotlib takes minutes to import where Python's
        # files are slow to read (a test host's 9p root)
        from . import plot
        panels, strips = plot_data(jobs, configs, results)
        plot.write(os.path.join(out, "e2e.png"),
                   "End-to-end (%s: compare within the run), %s"
                   % ("native" if meta.get("host_kind") == "native"
                      else "rig TCG test host", meta["date"]),
                   panels, strips)
    return text
