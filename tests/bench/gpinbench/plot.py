# SPDX-License-Identifier: GPL-2.0-only
"""One PNG per benchmark: its figures with their intervals, and its
ratios against their targets."""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from . import stats  # noqa: E402

COLOURS = {stats.AHEAD: "tab:green", stats.BEHIND: "tab:red",
           stats.CANT_TELL: "tab:gray"}
SIGN = {">=": "≥", "<=": "≤"}


def _errbar(e):
    """matplotlib's (below, above) for estimate E; no bar without an
    interval."""
    if not e.has_interval:
        return (0.0, 0.0)
    return (e.value - e.lo, e.hi - e.value)


def _figures_panel(ax, panel):
    """Dots with interval bars: one group per cell, one colour per
    configuration, on a log scale (figures differ by orders)."""
    groups, series = panel["groups"], panel["series"]
    n = max(len(series), 1)
    width = 0.8 / n
    for i, (name, ests) in enumerate(series.items()):
        xs, ys, errs = [], [], [[], []]
        for g, e in enumerate(ests):
            if e is None or e.value is None or e.value <= 0:
                continue
            xs.append(g - 0.4 + width * (i + 0.5))
            ys.append(e.value)
            below, above = _errbar(e)
            errs[0].append(below)
            errs[1].append(above)
        ax.errorbar(xs, ys, yerr=errs, fmt="o", ms=4, capsize=3,
                    label=name, color="C%d" % i)
    ax.set_yscale("log")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(panel["ylabel"])
    ax.set_title(panel["title"], fontsize=10)
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)


def _normalised(r):
    """Ratio R (a dict: estimate, op, value) against its target, so that
    right of 1 is ahead for both >= and <= targets; None for ==."""
    e, op, t = r["estimate"], r["op"], r["value"]
    if op not in SIGN or e.value is None or e.value <= 0 or t <= 0:
        return None
    lo = e.lo if e.has_interval else e.value
    hi = e.hi if e.has_interval else e.value
    if op == ">=":
        return e.value / t, lo / t, hi / t
    return t / e.value, t / hi if hi > 0 else math.inf, \
        t / lo if lo > 0 else math.inf


def _ratios_panel(ax, ratios):
    """One line per ratio: its median and interval divided by its target
    (inverted for <= targets), coloured by the verdict."""
    rows = [(r, _normalised(r)) for r in ratios]
    rows = [(r, n) for r, n in rows if n]
    for y, (r, (v, lo, hi)) in enumerate(reversed(rows)):
        c = COLOURS[r["verdict"]]
        ax.plot([lo, min(hi, 1e3)], [y, y], color=c, lw=2)
        ax.plot([v], [y], "o", color=c, ms=5)
        e = r["estimate"]
        ax.annotate("%s  %s%g  %s" % (_fmt(e), SIGN[r["op"]], r["value"],
                                      r["verdict"]),
                    (1, y), xycoords=("axes fraction", "data"),
                    xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=7, color=c)
    ax.axvline(1.0, color="black", lw=1)
    ax.set_xscale("log")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r["label"] for r, _ in reversed(rows)], fontsize=7)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel("ratio ÷ target (right of the line: ahead; "
                  "for ≤ targets, target ÷ ratio)")
    ax.set_title("Ratios against their targets: median and 95% interval; "
                 "green ahead, red behind, grey can't tell", fontsize=10)
    ax.grid(axis="x", which="both", alpha=0.3)


def _fmt(e):
    if not e.has_interval:
        return "%.3g" % e.value
    return "%.3g [%.3g, %.3g]" % (e.value, e.lo, e.hi)


def write(path, title, panels, ratios):
    """PANELS: [{'title', 'ylabel', 'groups': [label], 'series':
    {configuration: [Estimate or None per group]}}], two a row; RATIOS:
    [{'label', 'estimate', 'op', 'value', 'verdict'}] below them."""
    nrat = sum(1 for r in ratios if _normalised(r))
    cols = min(len(panels), 2)
    rows = math.ceil(len(panels) / cols)
    heights = [4.5] * rows + ([1.2 + 0.2 * nrat] if nrat else [])
    fig = plt.figure(figsize=(11 if cols > 1 else 8, sum(heights)))
    grid = fig.add_gridspec(len(heights), cols, height_ratios=heights)
    for i, panel in enumerate(panels):
        _figures_panel(fig.add_subplot(grid[i // cols, i % cols]), panel)
    if nrat:
        _ratios_panel(fig.add_subplot(grid[rows, :]), ratios)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
