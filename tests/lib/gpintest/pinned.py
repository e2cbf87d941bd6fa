# SPDX-License-Identifier: GPL-2.0-only
"""What pinning does to a VMM's guest RAM, measured from outside.

A long-term pin (gpin-vmm's pin=registered pins all of guest RAM at start)
keeps the pages where they are: the kernel can neither reclaim nor migrate
them (compaction, NUMA balancing, memory hot-unplug, a balloon's freed
pages all need migration).  Per-request pinning holds a page only while
its I/O runs.  This reads, for a running VMM:

  VmPin, VmRSS          /proc/PID/status: what is pinned and resident
  ram_resident_kib      the guest RAM mapping's resident part (smaps)
  migration             move_pages(2) of up to --pages present guest RAM
                        pages (evenly spread) to another NUMA node, then
                        where they are: how many moved, how many stayed

    python3 -m gpintest.pinned --pid PID --ram BYTES [--pages N]
        [--expect pinned|unpinned]

prints one JSON object.  Migration needs two NUMA nodes (numa=fake=2);
with one it is left out ("nodes": 1).  --expect judges an idle VM (no
I/O in flight): "pinned", all of guest RAM is (VmPin) and no page of it
moves; "unpinned", none is and the present pages move; exit 1 otherwise.
"""

import argparse
import ctypes
import json
import os
import re
import sys

from gpintest import memory

SYS_MOVE_PAGES = 279            # x86-64
MPOL_MF_MOVE = 1 << 1
PAGE = os.sysconf("SC_PAGE_SIZE")
_STATUS = re.compile(r"^(VmPin|VmRSS):\s+(\d+) kB$", re.M)


def status_kib(text):
    """{"VmPin": kib, "VmRSS": kib} of a /proc/PID/status text."""
    return {m.group(1): int(m.group(2)) for m in _STATUS.finditer(text)}


def spread(start, npages, most):
    """At most MOST page addresses of [start, start + npages pages),
    evenly spread."""
    step = max(1, npages // most) if most > 0 else 1
    return [start + i * PAGE for i in range(0, npages, step)][:most or None]


def count_moves(before, after):
    """Of pages on nodes BEFORE (a node, or a negative errno when not
    present) and AFTER a move: {"present", "moved", "stayed"}."""
    out = {"present": 0, "moved": 0, "stayed": 0}
    for b, a in zip(before, after):
        if b < 0:
            continue
        out["present"] += 1
        out["moved" if a >= 0 and a != b else "stayed"] += 1
    return out


def _move_pages(pid, addrs, nodes):
    """move_pages(2) of ADDRS in PID to NODES (None: only ask where they
    are); each page's node or -errno."""
    libc = ctypes.CDLL(None, use_errno=True)
    n = len(addrs)
    pages = (ctypes.c_void_p * n)(*addrs)
    status = (ctypes.c_int * n)()
    target = (ctypes.c_int * n)(*nodes) if nodes is not None else None
    ret = libc.syscall(SYS_MOVE_PAGES, ctypes.c_int(pid), ctypes.c_ulong(n),
                       pages, target, status, ctypes.c_int(MPOL_MF_MOVE))
    if ret < 0:
        raise OSError(ctypes.get_errno(), "move_pages")
    return list(status)


def where(pid, addrs):
    return _move_pages(pid, addrs, None)


def migrate(pid, addrs, nnodes):
    """Each present page of ADDRS to the next node; counts of what moved."""
    before = where(pid, addrs)
    present = [(a, b) for a, b in zip(addrs, before) if b >= 0]
    for i in range(0, len(present), 512):
        chunk = present[i:i + 512]
        try:
            _move_pages(pid, [a for a, _ in chunk],
                        [(b + 1) % nnodes for _, b in chunk])
        except OSError:
            pass                # a refused page is counted below
    return count_moves(before, where(pid, addrs))


def numa_nodes():
    try:
        return len([d for d in os.listdir("/sys/devices/system/node")
                    if re.fullmatch(r"node\d+", d)])
    except OSError:
        return 1


def measure(pid, ram, most):
    with open("/proc/%d/status" % pid) as f:
        out = status_kib(f.read())
    with open("/proc/%d/smaps" % pid) as f:
        maps = memory.parse_smaps(f.read())
    ram_map = memory.guest_ram(maps, ram)
    out["ram_resident_kib"] = ram_map.rss_kib if ram_map else None
    out["nodes"] = numa_nodes()
    if ram_map and out["nodes"] > 1:
        addrs = spread(ram_map.start, ram_map.size // PAGE, most)
        out["migration"] = migrate(pid, addrs, out["nodes"])
    return out


def judge(m, ram, expect):
    """What is wrong with measurement M of an idle VM of RAM bytes that
    should be EXPECT ("pinned" or "unpinned"); [] when nothing."""
    bad = []
    pin = m.get("VmPin")
    mig = m.get("migration")
    if expect == "pinned" and pin is not None and pin < ram // 1024:
        bad.append("VmPin %d kB, not all of guest RAM (%d kB)"
                   % (pin, ram // 1024))
    if expect == "unpinned" and pin:
        bad.append("VmPin %d kB on an idle VM" % pin)
    if mig is None:
        return bad
    if not mig["present"]:
        bad.append("no guest RAM page present to migrate")
    elif expect == "pinned" and mig["moved"]:
        bad.append("%d of %d pinned pages migrated"
                   % (mig["moved"], mig["present"]))
    elif expect == "unpinned" and mig["moved"] * 2 < mig["present"]:
        bad.append("only %d of %d pages migrated"
                   % (mig["moved"], mig["present"]))
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m gpintest.pinned",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--ram", type=int, required=True,
                    help="guest RAM in bytes (finds its mapping)")
    ap.add_argument("--pages", type=int, default=4096,
                    help="guest RAM pages to try to migrate (default 4096)")
    ap.add_argument("--expect", choices=("pinned", "unpinned"))
    args = ap.parse_args(argv)
    try:
        m = measure(args.pid, args.ram, args.pages)
    except OSError as e:
        print("gpintest.pinned: %s" % e, file=sys.stderr)
        return 1
    print(json.dumps(m, sort_keys=True))
    bad = judge(m, args.ram, args.expect) if args.expect else []
    for b in bad:
        print("gpintest.pinned: %s" % b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
