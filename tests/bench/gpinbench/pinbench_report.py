# SPDX-License-Identifier: GPL-2.0-only
"""pin-bench's report: pin-bench.md, .json, .jsonl and .png from the raw
records."""

import os

from . import plot, report
from .pinbench import MODES


def _per_call(r):
    return r["pages"] / r["calls"] if r.get("calls") else None


METRICS = {
    "ns_per_page": lambda r: r.get("ns_per_page"),
    "pin_ns_per_page": lambda r: r.get("pin_ns_per_page"),
    "unpin_ns_per_page": lambda r: r.get("unpin_ns_per_page"),
    "pages_per_s": lambda r: r.get("pages_per_s"),
    "writer_ops_per_s": lambda r: r.get("writer_ops_per_s"),
    "pages_per_call": _per_call,
    "fallbacks": lambda r: r.get("fallbacks"),
    "lock_wait_ms": lambda r: r.get("lock_wait_ms"),
    "max_irqoff_us": lambda r: r.get("max_irqoff_us"),
}

COUNTS = [("pages_per_call", "pages / pin call"),
          ("fallbacks", "fallbacks"),
          ("lock_wait_ms", "mmap_lock wait ms"),
          ("max_irqoff_us", "max IRQ-off us")]


def cells(records, table):
    """The cells of gpin-bench's table TABLE ('single' or 'threads')."""
    recs = [r for r in records if r.get("table") == table]
    if table == "single":
        keys = sorted({(r["cpus"], r["backing"], r["batch"]) for r in recs})
        return [{"cpus": c, "table": table, "backing": b, "batch": n}
                for c, b, n in keys]
    keys = sorted({(r["cpus"], r["writer"], r["threads"]) for r in recs})
    return [{"cpus": c, "table": table, "threads": t, "writer": w}
            for c, w, t in keys]


def cell_label(cell):
    if cell["table"] == "single":
        return "%d CPUs, %s, batch %d" % (cell["cpus"], cell["backing"],
                                          cell["batch"])
    return "%d CPUs, %d threads, %s writer" % (
        cell["cpus"], cell["threads"], "with" if cell["writer"] else "no")


def short_label(cell):
    if cell["table"] == "single":
        return "%s batch %d" % (cell["backing"], cell["batch"])
    return "%d thr%s" % (cell["threads"], " +writer" if cell["writer"]
                         else "")


def modes_of(records):
    have = {r["config"] for r in records}
    return [m for m in MODES if m in have]


def figure_table(cells_, records, modes, metric, fmt=report.num):
    rows = [[cell_label(c)] + [
        report.est_md(report.estimate(records, m, c, METRICS[metric]), fmt)
        for m in modes] for c in cells_]
    return report.table(["cell"] + modes, rows)


def counts_table(all_cells, records, modes):
    rows = []
    for c in all_cells:
        for m in modes:
            ests = [report.estimate(records, m, c, METRICS[k])
                    for k, _ in COUNTS]
            rows.append([cell_label(c), m] + [report.est_md(e) for e in ests])
    return report.table(["cell", "mode"] + [h for _, h in COUNTS], rows)


def runs_lines(records, ledger):
    rounds = [r for r in records if r.get("kind") == "round"]
    failed = [r for r in rounds if r.get("status")]
    lines = ["%d rounds of gpin-bench in %d test-host start(s); mode order "
             "per round: %s." % (
                 len(rounds), len([r for r in records
                                   if r.get("kind") == "host"]),
                 "; ".join("%d CPUs r%d %s" % (r["cpus"], r["round"],
                                               ",".join(r["modes"]))
                           for r in rounds))]
    if failed:
        lines.append("Rounds where gpin-bench failed: " + ", ".join(
            "%d CPUs r%d (status %d)" % (r["cpus"], r["round"], r["status"])
            for r in failed) + ".")
    if ledger:
        lines.append("Test-host deaths: " + "; ".join(
            "%s (%s)" % (d.get("kind"), d.get("action")) for d in ledger)
            + ".")
    return lines


def plot_data(records, modes, results):
    panels = []
    for cpus in sorted({r["cpus"] for r in records}):
        for table, metric, ylabel in (
                ("single", "ns_per_page", "ns per page (log; lower is "
                 "better)"),
                ("threads", "pages_per_s", "pages/s (log)")):
            cs = [c for c in cells(records, table) if c["cpus"] == cpus]
            if not cs:
                continue
            panels.append({
                "title": "%s, %d CPUs (median, 95%% CI)" % (
                    "one thread" if table == "single" else "threads",
                    cpus),
                "ylabel": ylabel, "groups": [short_label(c) for c in cs],
                "series": {m: [report.estimate(records, m, c,
                                               METRICS[metric])
                               for c in cs] for m in modes}})
    return panels, plot.strips(results, cells(records, "single") +
                               cells(records, "threads"),
                               lambda c: "%d CPUs %s" % (c["cpus"],
                                                         short_label(c)))


def where_text(meta):
    """Where gpin-bench ran."""
    if meta.get("host_kind") == "native":
        return "natively on this host (kernel %s)" % meta["kernel"]
    return "in the rig's QEMU/TCG test host (kernel %s, 4 GiB)" % \
        meta["kernel"]


def write(out, records, ledger, meta, png=True):
    cellrecs = [r for r in records if r.get("kind") == "cell"]
    modes = modes_of(cellrecs)
    single, threads = cells(cellrecs, "single"), cells(cellrecs, "threads")
    results = report.evaluate("pin-bench", single + threads, cellrecs,
                              METRICS)
    judged = [x for x in results if x["verdict"]]
    free = [x for x in results if not x["verdict"]]
    md = ["# gpin-bench pin: what a page costs to pin, per mode", "",
          "Generated by", "", "    " + meta["command"], "",
          "at commit %s on %s, %s, started on %s: `gpin-bench pin "
          "--duration %g%s` each round, the modes in the round's order.  "
          "What the numbers mean is in docs/PIN.md (\"Benchmark\").%s"
          % (meta["commit"], meta["date"], where_text(meta),
             report.machine(meta), meta["duration"],
             " " + meta["bench_args"] if meta["bench_args"] else "",
             "" if meta.get("host_kind") == "native" else
             "  TCG figures are not absolute: compare within one run."),
          "", report.method_text(meta["rounds"]), "", "## Targets", ""]
    md += report.comparison_lines(judged, cell_label)
    md += ["", report.family_text(results)]
    if single:
        md += ["", "## One thread: ns per page (PIN + UNPIN)", ""]
        md += figure_table(single, cellrecs, modes, "ns_per_page")
        # gpin-bench times the two calls apart since 2026-12-07
        if any(r.get("pin_ns_per_page") is not None for r in cellrecs):
            md += ["", "## One thread: ns per page of the PIN call alone "
                   "(the walk: where the modes differ)", ""]
            md += figure_table(single, cellrecs, modes, "pin_ns_per_page")
            md += ["", "## One thread: ns per page of the UNPIN call alone "
                   "(the release, the same in every mode)", ""]
            md += figure_table(single, cellrecs, modes, "unpin_ns_per_page")
    if threads:
        md += ["", "## Threads of one process: pages per second", ""]
        md += figure_table(threads, cellrecs, modes, "pages_per_s",
                           report.mega)
    md += ["", "## Counts", "",
           "gpin.ko's counters for the cell's mode, reset before each cell "
           "(gpin-bench); the IRQ-off time is the longest window of the "
           "cell.", ""]
    md += counts_table(single + threads, cellrecs, modes)
    md += ["", "## Comparisons without a target", ""]
    md += report.comparison_lines(free, cell_label)
    md += ["", "## Runs", ""] + runs_lines(records, ledger)
    md += ["", "![per mode, ratios against targets](pin-bench.png)", ""]
    text = "\n".join(md)
    figures = [dict(c, config=m, metric=k, **report.estimate(
                   cellrecs, m, c, METRICS[k]).to_json())
               for c in single + threads for m in modes for k in METRICS]
    report.write_files(out, "pin-bench", text, records,
                       report.summary(meta, figures, results, ledger,
                                      modes=modes))
    if png:
        panels, strips = plot_data(cellrecs, modes, results)
        plot.write(os.path.join(out, "pin-bench.png"),
                   "gpin-bench pin (rig TCG test host: compare within the "
                   "run), %s" % meta["date"], panels, strips)
    return text
