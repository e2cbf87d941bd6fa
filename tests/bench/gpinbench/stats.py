# SPDX-License-Identifier: GPL-2.0-only
"""Medians, their distribution-free intervals, and the verdict rules.

Every figure a benchmark reports is the median of its rounds with an
interval between two of the rounds' own values, chosen by order
statistics: with R rounds sorted, [x_(k), x_(R+1-k)] holds the true
median with probability 1 - 2 P(B <= k-1), B ~ Binomial(R, 1/2), whatever
the distribution (continuous).  The widest k whose coverage is at least
LEVEL is taken, and that coverage is reported with the interval: with 6
rounds the interval is the range of the rounds, 96.9%; with 5 it can only
be the range, 93.8%, below LEVEL; with 3, 75%.  An interval below LEVEL
is shown with its coverage and gives no verdict.  Fewer than MIN_ROUNDS
rounds give a figure and no interval.

A ratio between two configurations is estimated *paired* when at least
MIN_ROUNDS rounds have both (or every round of the side with fewer): the
ratio of each round's two figures, then the median and interval of those
ratios.  The configurations of a round run minutes apart in the same test
host, in a balanced order that changes every round (schedule.py), so a drift of
the test host that moves both cancels in the round's ratio; resampling the
two samples independently would count that drift as uncertainty of the
ratio.  With fewer pairs (rounds lost to deaths on one side) the two
samples are resampled independently (*unpaired*: a percentile bootstrap,
RESAMPLES resamples, seeded with SEED, whose coverage is not known and
which gives no verdict) and the ratio is that of their medians.

Two readings of a target.  The interval's (verdict()): **ahead** when the
whole interval meets the target, **behind** when none of it does, *can't
tell* otherwise; one row at a time, at the interval's own coverage.  And
the report's, over all its targets at once (holm()): a sign test of each
row's rounds against its target (two-sided, ties left out), Holm's
step-down correction over the family of rows at LEVEL familywise: a row
is ahead or behind only if its test survives the correction.  With R
rounds no sign test gives p below 2^(1-R), so a family of m rows can
reach a verdict only if 2^(1-R) <= (1 - LEVEL) / m; the report says so.
Rows that hold a count to an exact value (pin fallbacks == 0) are facts,
true or false in each round, not estimates: they are shown as such and
are not part of the family.
  Rounds whose denominator is zero have no ratio; compare()
takes the difference instead where a count can be 0 (fallbacks, lock
wait), with the same pairing rule.
"""

import dataclasses
import math

import numpy as np

RESAMPLES = 10000
SEED = 11
LEVEL = 0.95
MIN_ROUNDS = 3

AHEAD, BEHIND, CANT_TELL = "ahead", "behind", "can't tell"


@dataclasses.dataclass(frozen=True)
class Estimate:
    """A median and its interval (lo, hi: None without one); n samples.
    kind: 'median', 'ratio' or 'difference'; pairing: 'paired' or
    'unpaired' for the last two."""
    value: float | None
    lo: float | None = None
    hi: float | None = None
    n: int = 0
    kind: str = "median"
    pairing: str = ""
    coverage: float | None = None   # of the interval; None: unknown
    values: tuple = ()              # what the median is of (the rounds')

    @property
    def has_interval(self):
        return self.lo is not None

    def significant(self):
        """Whether the interval excludes 'no difference' (1 for a ratio, 0
        for a difference); None for a plain median."""
        if self.kind == "median" or not self.has_interval:
            return None if self.kind == "median" else False
        if not self.full_coverage:
            return False        # too few rounds (or unknown coverage)
        null = 1.0 if self.kind == "ratio" else 0.0
        return not self.lo <= null <= self.hi

    @property
    def full_coverage(self):
        """Whether the interval holds the median with at least LEVEL."""
        return self.coverage is not None and self.coverage >= LEVEL - 1e-12

    def to_json(self):
        d = dataclasses.asdict(self)
        d["values"] = list(self.values)
        d["significant"] = self.significant()
        return d


def _rng():
    return np.random.default_rng(SEED)


def _percentiles(values):
    tail = (1.0 - LEVEL) / 2
    lo, hi = np.quantile(values, [tail, 1.0 - tail])
    return float(lo), float(hi)


def _resampled_medians(rng, x):
    idx = rng.integers(0, len(x), size=(RESAMPLES, len(x)))
    return np.median(x[idx], axis=1)


def interval_coverage(n, k):
    """The chance that [x_(k), x_(n+1-k)] of N samples holds the median."""
    tail = sum(math.comb(n, i) for i in range(k)) / 2.0 ** n
    return 1.0 - 2.0 * tail


def _order_interval(x):
    """(lo, hi, coverage): the narrowest order-statistic interval with at
    least LEVEL coverage, or the range with the coverage it has."""
    x = np.sort(x)
    n, k = len(x), 1
    while k + 1 <= n // 2 and interval_coverage(n, k + 1) >= LEVEL:
        k += 1
    return float(x[k - 1]), float(x[n - k]), interval_coverage(n, k)


def median(samples):
    """The median of SAMPLES with its order-statistic interval."""
    x = np.asarray([float(s) for s in samples])
    if len(x) == 0:
        return Estimate(None)
    m = float(np.median(x))
    if len(x) < MIN_ROUNDS:
        return Estimate(m, n=len(x), values=tuple(x))
    lo, hi, cov = _order_interval(x)
    return Estimate(m, lo, hi, len(x), coverage=cov, values=tuple(x))


def _pairs(num, den):
    return [(num[k], den[k]) for k in sorted(num) if k in den]


def _compare(num, den, kind):
    """num, den: {round: figure}.  kind: 'ratio' or 'difference'."""
    op = np.divide if kind == "ratio" else np.subtract
    pairs = _pairs(num, den)
    if pairs and len(pairs) >= min(MIN_ROUNDS, len(num), len(den)):
        e = median([op(a, b) for a, b in pairs])
        return dataclasses.replace(e, kind=kind, pairing="paired")
    a = np.asarray(list(num.values()), dtype=float)
    b = np.asarray(list(den.values()), dtype=float)
    if len(a) == 0 or len(b) == 0:
        return Estimate(None, kind=kind)
    value = float(op(np.median(a), np.median(b)))
    n = min(len(a), len(b))
    if len(a) < MIN_ROUNDS or len(b) < MIN_ROUNDS:
        return Estimate(value, n=n, kind=kind, pairing="unpaired")
    rng = _rng()
    with np.errstate(divide="ignore", invalid="ignore"):
        boot = op(_resampled_medians(rng, a), _resampled_medians(rng, b))
    lo, hi = _percentiles(boot)
    return Estimate(value, lo, hi, n, kind, "unpaired", coverage=None)


def ratio(num, den):
    """NUM ÷ DEN, each {round: figure}.  Rounds whose denominator is 0
    have no ratio and are left out."""
    return _compare(num, {k: v for k, v in den.items() if v != 0}, "ratio")


def difference(num, den):
    """NUM − DEN, each {round: figure}."""
    return _compare(num, den, "difference")


def compare(num, den):
    """How NUM differs from DEN: their ratio, or their difference when a
    denominator is 0 (a count that can be 0: fallbacks, lock wait)."""
    if not den or any(v == 0 for v in den.values()):
        return difference(num, den)
    return ratio(num, den)


OPS = {">=": lambda v, t: v >= t,
       "<=": lambda v, t: v <= t,
       "==": lambda v, t: v == t}


def verdict(est, op, target):
    """The interval's reading of a target: AHEAD when every value of EST's
    interval meets it (OP TARGET), BEHIND when none does, CANT_TELL
    otherwise: the interval straddles the target, or it has less than
    LEVEL coverage (too few rounds), or there is none."""
    if est.value is None or not est.has_interval or not est.full_coverage:
        return CANT_TELL
    meets = OPS[op]
    if op == "==":
        if est.lo == est.hi == target:
            return AHEAD
        return BEHIND if not est.lo <= target <= est.hi else CANT_TELL
    lo_ok, hi_ok = meets(est.lo, target), meets(est.hi, target)
    if lo_ok and hi_ok:
        return AHEAD
    if not lo_ok and not hi_ok:
        return BEHIND
    return CANT_TELL


def fact(values, target):
    """A count held to exactly TARGET in every round: True, False, or None
    without rounds."""
    if not values:
        return None
    return all(v == target for v in values)


def sign_test(values, op, target):
    """(p, direction): a two-sided sign test of VALUES' median against
    TARGET (ties left out), and which way the rounds lean: AHEAD when more
    of them meet OP TARGET strictly than miss it, else BEHIND.  p is 1
    without rounds off the target."""
    x = [float(v) for v in values]
    if op == ">=":
        meet = sum(v > target for v in x)
        miss = sum(v < target for v in x)
    else:
        meet = sum(v < target for v in x)
        miss = sum(v > target for v in x)
    m, k = meet + miss, max(meet, miss)
    if not m:
        return 1.0, CANT_TELL
    tail = sum(math.comb(m, i) for i in range(k, m + 1)) / 2.0 ** m
    return min(1.0, 2.0 * tail), AHEAD if meet > miss else BEHIND


def holm(pvalues, level=LEVEL):
    """Holm's step-down correction: for each p of PVALUES (None: not in
    the family) whether it is rejected at familywise LEVEL."""
    family = sorted((p, i) for i, p in enumerate(pvalues) if p is not None)
    alpha, m = 1.0 - level, len(family)
    out = [False] * len(pvalues)
    for rank, (p, i) in enumerate(family):
        if p > alpha / (m - rank):
            break
        out[i] = True
    return out


def smallest_p(rounds):
    """The smallest p a two-sided sign test of ROUNDS rounds can give."""
    return min(1.0, 2.0 / 2.0 ** rounds) if rounds else 1.0
