# SPDX-License-Identifier: GPL-2.0-only
"""From raw records to estimates, verdicts and Markdown: shared by the
benchmarks."""

import os

from . import stats, targets

VERDICT_MD = {stats.AHEAD: "**ahead**", stats.BEHIND: "**behind**",
              stats.CANT_TELL: "can't tell"}


def matches(record, cell):
    return all(record.get(k) == v for k, v in cell.items())


def series(records, config, cell, metric):
    """{round: figure} of CONFIG in CELL; METRIC(record) gives the figure
    (None: the record has none)."""
    out = {}
    for r in records:
        if r.get("config") == config and matches(r, cell):
            v = metric(r)
            if v is not None:
                out[r["round"]] = v
    return out


def estimate(records, config, cell, metric):
    return stats.median(series(records, config, cell, metric).values())


def evaluate(bench, cells, records, metrics):
    """The rows of targets.TABLE for BENCH in each of CELLS: a dict each
    with the row, the cell, the estimate and the verdict (None without a
    target).  METRICS: {metric name: function of a record}."""
    out = []
    for cell in cells:
        for row in targets.rows(bench, cell):
            fn = metrics[row.metric]
            num = series(records, row.num, cell, fn)
            if not num:
                continue
            if row.den is None:
                est = stats.median(num.values())
            else:
                den = series(records, row.den, cell, fn)
                if not den:
                    continue
                est = (stats.ratio(num, den) if row.op
                       else stats.compare(num, den))
            v = stats.verdict(est, row.op, row.value) if row.op else None
            out.append({"row": row, "cell": cell, "estimate": est,
                        "verdict": v})
    return out


def num(x):
    """X to about three significant digits."""
    if x is None:
        return "-"
    a = abs(x)
    if a >= 100 or a == 0:
        return "%.0f" % x
    if a >= 10:
        return "%.1f" % x
    if a >= 1:
        return "%.2f" % x
    return "%.3g" % x


def mega(x):
    """Millions (pages/s), the interval's ends alike: 0.907M."""
    return "%.3gM" % (x / 1e6)


def est_md(e, fmt=num):
    """'median [lo, hi]', 'median (1 round)' or '-', numbers by FMT."""
    if e is None or e.value is None:
        return "-"
    if not e.has_interval:
        return "%s (%d round%s)" % (fmt(e.value), e.n,
                                    "" if e.n == 1 else "s")
    return "%s [%s, %s]" % (fmt(e.value), fmt(e.lo), fmt(e.hi))


def machine(meta):
    """The machine a run started on, as its meta recorded it (runs from
    before that: this one's CPU count)."""
    return meta.get("host") or "a %d-CPU machine" % (os.cpu_count() or 0)


def table(header, rows):
    """Markdown lines of a table."""
    lines = ["| " + " | ".join(header) + " |",
             "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return lines


def comparison_lines(results, cell_label):
    """The table of EVALUATE's results: targets with verdicts, and the
    comparisons without a target with whether they are significant."""
    rows = []
    for x in results:
        row, e = x["row"], x["estimate"]
        if x["verdict"]:
            judged = VERDICT_MD[x["verdict"]]
        elif e.kind == "median":
            judged = ""
        elif not e.has_interval:
            judged = "no interval"
        else:
            judged = "significant" if e.significant() else "not significant"
        what = {"ratio": "ratio", "difference": "difference",
                "median": "median"}[e.kind]
        if e.pairing:
            what += ", " + e.pairing
        rows.append([cell_label(x["cell"]), row.name, est_md(e), what,
                     row.target or "-", judged])
    return table(["cell", "comparison", "median [95% CI]", "of",
                  "target", "verdict / significance"], rows)


def results_json(results):
    return [{"name": x["row"].name, "cell": x["cell"],
             "num": x["row"].num, "den": x["row"].den,
             "metric": x["row"].metric, "target": x["row"].target or None,
             "source": x["row"].source, "verdict": x["verdict"],
             **x["estimate"].to_json()} for x in results]


def method_text(rounds):
    return ("Each figure is the median of the rounds (%d asked for) with "
            "its %d%% percentile-bootstrap interval (%d resamples, seed %d; "
            "tests/bench/gpinbench/stats.py).  With 5 rounds or fewer the "
            "interval is the range of the rounds, which holds the true "
            "median with probability 94%% for 5 rounds, 75%% for 3; with "
            "fewer than %d there is no interval (\"(2 rounds)\").  The "
            "configurations run in an order that changes every round, a "
            "Williams design (schedule.py): over a full cycle each takes "
            "every position, and runs right after every other one, equally "
            "often.  Ratios are paired by round (the median and "
            "interval of each round's ratio: a drift of the test host that "
            "moves both sides cancels) where at least %d rounds have both "
            "sides (or all have), else unpaired.  A target is **ahead** when "
            "the whole interval meets it, **behind** when none of it does, "
            "and *can't tell* when the interval straddles it or there is "
            "none; a "
            "comparison without a target is significant when its interval "
            "excludes 1 (a ratio) or 0 (a difference, where a count can be "
            "0)." % (rounds, round(stats.LEVEL * 100), stats.RESAMPLES,
                     stats.SEED, stats.MIN_ROUNDS, stats.MIN_ROUNDS))