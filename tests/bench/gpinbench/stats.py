# SPDX-License-Identifier: GPL-2.0-only
"""Medians, bootstrap confidence intervals and the verdict rule.

Every figure a benchmark reports is the median of its rounds with a 95%
percentile-bootstrap interval: RESAMPLES resamples of the rounds (with
replacement), the median of each, and the 2.5th and 97.5th percentiles of
those medians.  The generator is seeded with SEED for every estimate, so a
report made twice from the same results is the same report, whatever order
the estimates are made in.

With R rounds the median of a resample can only be one of the R values (or
the mean of two), so the interval runs between the rounds' own values; with
5 rounds or fewer it is their range (with 5, the chance that a resample's
median is the smallest value is 5.8%, more than 2.5%).  The range of R
rounds holds the true median with probability 1 - 2^(1-R): 94% for 5, 75%
for 3, 50% for 2.  So an interval needs MIN_ROUNDS rounds; fewer give a
figure and no interval, and no verdict.

A ratio between two configurations is estimated *paired* when at least
MIN_ROUNDS rounds have both (or every round of the side with fewer): the
ratio of each round's two figures, then the median and interval of those
ratios.  The configurations of a round run minutes apart in the same test
host, in a balanced order that changes every round (schedule.py), so a drift of
the test host that moves both cancels in the round's ratio; resampling the
two samples independently would count that drift as uncertainty of the
ratio.  With fewer pairs (rounds lost to deaths on one side) the two
samples are resampled independently (*unpaired*) and the ratio is that of
their medians.  Rounds whose denominator is zero have no ratio; compare()
takes the difference instead where a count can be 0 (fallbacks, lock
wait), with the same pairing rule.
"""

import dataclasses

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

    @property
    def has_interval(self):
        return self.lo is not None

    def significant(self):
        """Whether the interval excludes 'no difference' (1 for a ratio, 0
        for a difference); None for a plain median."""
        if self.kind == "median" or not self.has_interval:
            return None if self.kind == "median" else False
        null = 1.0 if self.kind == "ratio" else 0.0
        return not self.lo <= null <= self.hi

    def to_json(self):
        d = dataclasses.asdict(self)
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


def median(samples):
    """The median of SAMPLES with its bootstrap interval."""
    x = np.asarray([float(s) for s in samples])
    if len(x) == 0:
        return Estimate(None)
    m = float(np.median(x))
    if len(x) < MIN_ROUNDS:
        return Estimate(m, n=len(x))
    lo, hi = _percentiles(_resampled_medians(_rng(), x))
    return Estimate(m, lo, hi, len(x))


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
    return Estimate(value, lo, hi, n, kind, "unpaired")


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
    """AHEAD when every value of EST's interval meets the target (OP
    TARGET), BEHIND when none does, CANT_TELL otherwise: the interval
    straddles the target, or there is no interval (too few rounds)."""
    if est.value is None or not est.has_interval:
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
