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


def parse_list(text):
    """Workloads from TEXT: space-separated RW:BS:QD items, each field a
    comma-separated list whose combinations all count ("randread,randwrite:
    4k:1,32" is four).  A ValueError says what is wrong."""
    out = []
    for item in text.split():
        fields = item.split(":")
        if len(fields) != 3:
            raise ValueError("%s: not RW:BS:QD" % item)
        rws, sizes, depths = (f.split(",") for f in fields)
        for rw, bs, qd in itertools.product(rws, sizes, depths):
            if rw not in RWS:
                raise ValueError("%s: RW is one of %s" % (item,
                                                          ",".join(RWS)))
            if bs not in SIZES:
                raise ValueError("%s: BS is one of %s" % (item,
                                                          ",".join(SIZES)))
            if not qd.isdigit() or int(qd) < 1:
                raise ValueError("%s: QD is a depth, 1 or more" % item)
            w = Workload(rw, bs, int(qd))
            if w not in out:
                out.append(w)
    if not out:
        raise ValueError("no workload")
    return out
