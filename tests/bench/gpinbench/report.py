# SPDX-License-Identifier: GPL-2.0-only
"""From raw records to estimates, verdicts and Markdown: shared by the
benchmarks."""

import json
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
            out.append(judge(row, cell, est))
    apply_holm(out)
    return out


def judge(row, cell, est):
    """One row's result: the interval's verdict, and what the family's
    test needs (its sign test), or, for an exact count, the fact."""
    x = {"row": row, "cell": cell, "estimate": est, "verdict": None,
         "fact": None, "p": None, "lean": None, "holm": None}
    if not row.op:
        return x
    if row.op == "==":
        x["fact"] = stats.fact(est.values, row.value)
        x["verdict"] = {True: stats.AHEAD, False: stats.BEHIND,
                        None: stats.CANT_TELL}[x["fact"]]
        return x
    x["verdict"] = stats.verdict(est, row.op, row.value)
    if est.values and est.pairing != "unpaired":
        x["p"], x["lean"] = stats.sign_test(est.values, row.op, row.value)
    return x


def apply_holm(results):
    """The family of a report: every row with a target and a sign test;
    each gets its Holm verdict and the family's size."""
    family = [x for x in results if x["row"].op and x["row"].op != "=="]
    rejected = stats.holm([x["p"] for x in family])
    for x, r in zip(family, rejected):
        x["holm"] = x["lean"] if r else stats.CANT_TELL
        x["family"] = len(family)


def family_text(results):
    """What the family's correction could decide, in a sentence."""
    family = [x for x in results if x.get("holm") is not None]
    if not family:
        return ""
    rounds = max((x["estimate"].n for x in family), default=0)
    m, p = len(family), stats.smallest_p(rounds)
    passed = sum(x["holm"] != stats.CANT_TELL for x in family)
    text = ("The family of this report is its %d targets (facts aside): "
            "Holm's correction at %d%% familywise over their sign tests "
            "decides %d of them." % (m, round(stats.LEVEL * 100), passed))
    if p > (1 - stats.LEVEL) / m:
        text += (" With %d rounds no sign test can go below p = %.3g, and "
                 "the strictest Holm threshold is %.3g: no target of a "
                 "family this large can be decided; about %d rounds "
                 "could." % (rounds, p, (1 - stats.LEVEL) / m,
                             rounds_for(m)))
    return text


def rounds_for(m):
    """The fewest rounds whose smallest sign-test p passes Holm's
    strictest threshold for a family of M."""
    r = 1
    while stats.smallest_p(r) > (1 - stats.LEVEL) / m:
        r += 1
    return r


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
    """'median [lo, hi]', 'median (1 round)' or '-', numbers by FMT; an
    interval whose coverage is below LEVEL, or unknown (unpaired), says
    so after it."""
    if e is None or e.value is None:
        return "-"
    if not e.has_interval:
        return "%s (%d round%s)" % (fmt(e.value), e.n,
                                    "" if e.n == 1 else "s")
    text = "%s [%s, %s]" % (fmt(e.value), fmt(e.lo), fmt(e.hi))
    if e.coverage is None:
        return text + " (bootstrap)"
    if not e.full_coverage:
        return text + " (%.0f%%)" % (100 * e.coverage)
    return text


def machine(meta):
    """The machine a run started on, as its meta recorded it (runs from
    before that did not: a report remade elsewhere must not guess)."""
    return meta.get("host") or "a machine it did not record"


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
        holm = ""
        if x.get("fact") is not None:
            judged = ("fact: true in every round" if x["fact"]
                      else "fact: **false** in some round")
        elif x["verdict"]:
            judged = VERDICT_MD[x["verdict"]]
            holm = VERDICT_MD[x["holm"]] if x.get("holm") else "-"
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
        cov = ("%.1f%%" % (100 * e.coverage)
               if e.coverage is not None and e.has_interval else "-")
        rows.append([cell_label(x["cell"]), row.name, est_md(e), cov, what,
                     row.target or "-", judged, holm])
    return table(["cell", "comparison", "median [interval]", "coverage",
                  "of", "target", "interval says", "Holm (family)"], rows)


def results_json(results):
    return [{"name": x["row"].name, "cell": x["cell"],
             "num": x["row"].num, "den": x["row"].den,
             "metric": x["row"].metric, "target": x["row"].target or None,
             "source": x["row"].source, "verdict": x["verdict"],
             "fact": x.get("fact"), "sign_p": x.get("p"),
             "holm": x.get("holm"), "family": x.get("family"),
             **x["estimate"].to_json()} for x in results]


def method_text(rounds):
    cov = (stats.interval_coverage(rounds, 1) if rounds >= stats.MIN_ROUNDS
           else None)
    return ("Each figure is the median of the rounds (%d asked for) with a "
            "distribution-free interval between two of the rounds' own "
            "values (order statistics; tests/bench/gpinbench/stats.py), the "
            "narrowest that holds the true median with at least %d%%; its "
            "real coverage is given with it (with %d rounds the range of "
            "the rounds: %s).  An interval marked with a percentage covers "
            "less than %d%% (too few rounds) and gives no verdict; "
            "\"(bootstrap)\" marks an unpaired ratio (rounds lost on one "
            "side), whose coverage is not known.  The configurations run in "
            "an order that changes every round, a Williams design "
            "(schedule.py): over a full cycle each takes every position, and "
            "runs right after every other one, equally often.  Ratios are "
            "paired by round (the median and interval of each round's "
            "ratio: a drift of the test host that moves both sides cancels) "
            "where at least %d rounds have both sides (or all have), else "
            "unpaired.  A target is read twice.  *Interval says*: **ahead** "
            "when the whole interval meets it, **behind** when none of it "
            "does, *can't tell* otherwise (one row at a time).  *Holm*: each "
            "row's rounds in a two-sided sign test against the target, "
            "Holm's step-down correction over all the report's targets at "
            "%d%% familywise; only what survives it is a claim about the "
            "whole report.  Counts held to an exact value (pin fallbacks "
            "== 0) are facts, true or false in each round.  A comparison "
            "without a target is significant when its interval excludes 1 "
            "(a ratio) or 0 (a difference, where a count can be 0)."
            % (rounds, round(stats.LEVEL * 100), rounds,
               "%.1f%%" % (100 * cov) if cov is not None else "no interval",
               round(stats.LEVEL * 100), stats.MIN_ROUNDS,
               round(stats.LEVEL * 100)))

def summary(meta, figures, results, ledger, **extra):
    """A report's NAME.json: the run's meta (and EXTRA), how its
    statistics were made, every figure and comparison, the deaths."""
    return dict(meta, **extra, resamples=stats.RESAMPLES, seed=stats.SEED,
                level=stats.LEVEL, figures=figures,
                comparisons=results_json(results), deaths=ledger)


def write_files(out, name, text, records, summary_):
    """OUT/NAME.md (TEXT), NAME.jsonl (every raw record, one a line) and
    NAME.json (SUMMARY_), the files every report writes."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, name + ".md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, name + ".jsonl"), "w") as f:
        f.writelines(json.dumps(r, sort_keys=True) + "\n" for r in records)
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(summary_, f, indent=1)
