# SPDX-License-Identifier: GPL-2.0-only
"""One PNG per benchmark: its figures with their intervals, then one strip
per targeted ratio, every cell's median and interval against the target,
coloured by the verdict."""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import ticker  # noqa: E402

from . import stats  # noqa: E402

COLOURS = {stats.AHEAD: "tab:green", stats.BEHIND: "tab:red",
           stats.CANT_TELL: "tab:gray"}
SIGN = {">=": "≥", "<=": "≤", "==": "="}


def _bar(e):
    """matplotlib's (below, above) for estimate E: none without an
    interval."""
    if not e.has_interval:
        return 0.0, 0.0
    return e.value - e.lo, e.hi - e.value


def _dots(ax, x, ests, **style):
    """Estimates ESTS at positions X as dots with interval bars; those
    without a positive figure are left out (log scale)."""
    pts = [(xi, e) for xi, e in zip(x, ests)
           if e is not None and e.value is not None and e.value > 0]
    if not pts:
        return None
    below, above = zip(*(_bar(e) for _, e in pts))
    return ax.errorbar([p[0] for p in pts], [e.value for _, e in pts],
                       yerr=[below, above], fmt="o", ms=4, capsize=3,
                       **style)


def _extent(ests, extra=()):
    """The smallest and largest positive value among ESTS' intervals and
    EXTRA (targets)."""
    vals = list(extra)
    for e in ests:
        if e is not None and e.value is not None:
            vals += [v for v in (e.value, e.lo, e.hi) if v is not None]
    vals = [v for v in vals if v > 0]
    return (min(vals), max(vals)) if vals else None


def _plain(v):
    """A tick label: 2M, 300k, 40, 0.9."""
    for scale, unit in ((1e6, "M"), (1e3, "k")):
        if v >= scale:
            return "%g%s" % (float("%.3g" % (v / scale)), unit)
    return "%g" % float("%.3g" % v)


def _log_axis(ax, extent):
    """A log y axis a quarter beyond EXTENT either way, labelled in plain
    numbers; the minor ticks too when at most one power of ten is on it."""
    ax.set_yscale("log")
    if extent:
        ax.set_ylim(extent[0] / 1.25, extent[1] * 1.25)
    plain = ticker.FuncFormatter(lambda v, _: _plain(v))
    ax.yaxis.set_major_formatter(plain)
    lo, hi = ax.get_ylim()
    decades = math.floor(math.log10(hi)) - math.ceil(math.log10(lo)) + 1
    ax.yaxis.set_minor_formatter(plain if decades <= 1
                                 else ticker.NullFormatter())
    ax.tick_params(axis="y", which="both", labelsize=7)


def _axes_common(ax, groups, title, ylabel):
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=35, ha="right", fontsize=7)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.set_title(title, fontsize=9)
    ax.grid(axis="y", which="both", alpha=0.3)


def _figures(ax, panel):
    """One group per cell, one colour per configuration, side by side."""
    series = panel["series"]
    width = 0.8 / max(len(series), 1)
    for i, (name, ests) in enumerate(series.items()):
        x = [g - 0.4 + width * (i + 0.5) for g in range(len(ests))]
        _dots(ax, x, ests, color="C%d" % i, label=name)
    _log_axis(ax, _extent([e for ests in series.values() for e in ests]))
    _axes_common(ax, panel["groups"], panel["title"], panel["ylabel"])
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))


def _ratio(ax, strip):
    """STRIP: {'title', 'groups', 'points': [{'estimate', 'op', 'value',
    'verdict'} or None per group]}.  The target of each cell is a black
    bar; the ratio's dot and interval are coloured by the verdict."""
    for g, p in enumerate(strip["points"]):
        if p is None:
            continue
        _dots(ax, [g], [p["estimate"]], color=COLOURS[p["verdict"]])
        ax.plot([g], [p["value"]], "_", color="black", ms=16, mew=2)
    pts = [p for p in strip["points"] if p]
    _log_axis(ax, _extent([p["estimate"] for p in pts],
                          [p["value"] for p in pts]))
    _axes_common(ax, strip["groups"], strip["title"], "ratio (log)")


def _grid(n, cols):
    return math.ceil(n / cols) if n else 0


def write(path, title, panels, strips):
    """PANELS: [{'title', 'ylabel', 'groups': [label], 'series':
    {configuration: [Estimate or None per group]}}]; STRIPS: the ratios
    with targets, as _ratio wants them.  Two a row where there are more
    than one of either."""
    cols = 2 if max(len(panels), len(strips)) > 1 else 1
    rows = _grid(len(panels), cols) + _grid(len(strips), cols)
    fig = plt.figure(figsize=(7.5 * cols, 3.6 * rows + 0.6),
                     layout="constrained")
    grid = fig.add_gridspec(rows, cols)
    for i, panel in enumerate(panels):
        _figures(fig.add_subplot(grid[i // cols, i % cols]), panel)
    first = _grid(len(panels), cols)
    for i, strip in enumerate(strips):
        _ratio(fig.add_subplot(grid[first + i // cols, i % cols]), strip)
    fig.suptitle(title + "\nratios: green ahead of the target (black bar), "
                 "red behind, grey can't tell; bars: 95% intervals",
                 fontsize=10)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def strips(results, cells, cell_label):
    """The targeted ratios of report.evaluate's RESULTS: one strip per
    ratio across CELLS, or, when they are all in one cell (a --quick run),
    one strip across the ratios."""
    xs = [x for x in results if x["verdict"] and x["row"].den]
    have = [c for c in cells if any(x["cell"] == c for x in xs)]
    if len(have) == 1:
        return [{"title": "Ratios against their targets, %s"
                 % cell_label(have[0]),
                 "groups": ["%s %s %g" % (x["row"].name, SIGN[x["row"].op],
                                          x["row"].value) for x in xs],
                 "points": [_point(x) for x in xs]}]
    names = []
    for x in xs:
        if x["row"].name not in names:
            names.append(x["row"].name)
    out = []
    for name in names:
        mine = [x for x in xs if x["row"].name == name]
        targets = sorted({"%s %g" % (SIGN[x["row"].op], x["row"].value)
                          for x in mine})
        on = [c for c in have if any(x["cell"] == c for x in mine)]
        out.append({"title": "%s (target %s)" % (name, ", ".join(targets)),
                    "groups": [cell_label(c) for c in on],
                    "points": [_point(next(x for x in mine
                                           if x["cell"] == c))
                               for c in on]})
    return out


def _point(x):
    return {"estimate": x["estimate"], "op": x["row"].op,
            "value": x["row"].value, "verdict": x["verdict"]}
