# SPDX-License-Identifier: GPL-2.0-only
"""The order things run in: rounds whose order rotates.

Round 1 runs A B C, round 2 B C A, round 3 C A B, round 4 A B C again.
Every configuration takes every position equally often (over a multiple
of their number of rounds), so neither a drift of the test host over the
run nor "the first after a boot" favours one of them, and each round has
every configuration close in time to the others (stats.py pairs by round).
"""


def rotation(items, rnd):
    """ITEMS in the order of round RND (1-based)."""
    items = list(items)
    if not items:
        return []
    k = (rnd - 1) % len(items)
    return items[k:] + items[:k]


def plan(items, rounds, first=1):
    """[(round, item)] in run order for rounds FIRST..ROUNDS."""
    return [(r, item) for r in range(first, rounds + 1)
            for item in rotation(items, r)]
