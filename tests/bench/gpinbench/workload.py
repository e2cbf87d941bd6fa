# SPDX-License-Identifier: GPL-2.0-only
"""A fio job of the end-to-end benchmark: direction, block size, depth."""

import dataclasses
import itertools

RWS = ("randread", "randwrite")
SIZES = ("4k", "64k", "256k")


@dataclasses.dataclass(frozen=True)
class Workload:
    rw: str
    bs: str
    qd: int

    @property
    def key(self):
        """'randread:4k:32': a shell word, the guest's marker id."""
        return "%s:%s:%d" % (self.rw, self.bs, self.qd)

    @property
    def label(self):
        return "%s %s qd%d" % (self.rw, self.bs.upper(), self.qd)

    def fields(self):
        return {"rw": self.rw, "bs": self.bs, "qd": self.qd}

    @classmethod
    def from_key(cls, key):
        rw, bs, qd = key.split(":")
        return cls(rw, bs, int(qd))

    @classmethod
    def from_record(cls, r):
        return cls(r["rw"], r["bs"], r["qd"])


def cross(rws, sizes, depths):
    """Every combination, block size outermost, then direction, depth."""
    return [Workload(rw, bs, qd)
            for bs, rw, qd in itertools.product(sizes, rws, depths)]
