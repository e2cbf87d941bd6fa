# SPDX-License-Identifier: GPL-2.0-only
"""The order things run in: a balanced order that changes every round.

The rounds follow a Williams design, the crossover trials' balanced Latin
square: over a full cycle of rounds (as many as there are items when
their number is even, twice that when it is odd) every item takes every
position equally often, and every item runs right after every other one
equally often.  A plain rotation (A B C, B C A, C A B) does the first but
not the second: B always follows A, so whatever A leaves behind (a warm
or cold page cache, a test host still settling from A's guest) always
lands on B.  With the Williams order neither a drift of the test host
over the run, nor "the first after a boot", nor a neighbour's after-effect
favours one item, and each round still has every item close in time to
the others (stats.py pairs by round).
"""


def _first_row(n):
    """0, 1, n-1, 2, n-2, ...: the differences between neighbours take
    every value mod N once, which is what balances the carry-over."""
    row, lo, hi = [0], 1, n - 1
    while len(row) < n:
        row.append(lo)
        lo += 1
        if len(row) < n:
            row.append(hi)
            hi -= 1
    return row


def cycle(n):
    """The rows of the design for N items, as index lists: N rows when N
    is even, 2N (each row also reversed) when it is odd."""
    if n <= 0:
        return [[]]
    first = _first_row(n)
    rows = [[(x + i) % n for x in first] for i in range(n)]
    if n % 2:
        rows += [list(reversed(r)) for r in rows]
    return rows


def order(items, rnd):
    """ITEMS in the order of round RND (1-based)."""
    items = list(items)
    rows = cycle(len(items))
    return [items[i] for i in rows[(rnd - 1) % len(rows)]]


def plan(items, rounds, first=1):
    """[(round, item)] in run order for rounds FIRST..ROUNDS."""
    return [(r, item) for r in range(first, rounds + 1)
            for item in order(items, r)]
