# SPDX-License-Identifier: GPL-2.0-only
"""A VMM's memory beyond guest RAM, from /proc/PID/smaps.

Firecracker's bound is at most 5 MiB of VMM overhead.  What counts as
overhead here: the process's resident memory (the sum of every mapping's
Rss, as VmRSS) minus the resident part of the guest RAM mapping (the one
anonymous mapping exactly the guest's RAM size).  Guest RAM is the guest's;
everything else (heap, stacks, rings, libraries, a boot image still held)
is the VMM's.
"""

import dataclasses
import re
import time

_HEADER = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$")
_FIELD = re.compile(r"^(\w+):\s+(\d+) kB$")


@dataclasses.dataclass
class Mapping:
    start: int
    end: int
    perms: str
    name: str
    rss_kib: int = 0

    @property
    def size(self):
        return self.end - self.start


def parse_smaps(text):
    """The mappings of an smaps text, with their Rss."""
    maps = []
    for line in text.splitlines():
        m = _HEADER.match(line)
        if m:
            maps.append(Mapping(int(m.group(1), 16), int(m.group(2), 16),
                                m.group(3), m.group(4)))
            continue
        f = _FIELD.match(line)
        if f and maps and f.group(1) == "Rss":
            maps[-1].rss_kib = int(f.group(2))
    return maps


@dataclasses.dataclass
class Sample:
    rss_kib: int        # all mappings
    ram_kib: int        # the guest RAM mapping's resident part
    found_ram: bool
    loading: bool = False   # a boot image was still mapped

    @property
    def overhead_kib(self):
        return self.rss_kib - self.ram_kib


def guest_ram(maps, ram_bytes):
    """The guest RAM mapping of MAPS (the anonymous one of exactly
    RAM_BYTES), or None."""
    ram = [m for m in maps if m.size == ram_bytes and not m.name]
    return ram[0] if ram else None


def sample(text, ram_bytes, images=()):
    """One sample from an smaps TEXT; IMAGES are the boot images' paths,
    mapped only while the VMM copies them into guest RAM."""
    maps = parse_smaps(text)
    ram = guest_ram(maps, ram_bytes)
    return Sample(sum(m.rss_kib for m in maps),
                  ram.rss_kib if ram else 0, ram is not None,
                  any(m.name in images for m in maps))


def read_sample(pid, ram_bytes, images=()):
    """One sample of process PID, or None once it is gone."""
    try:
        with open("/proc/%d/smaps" % pid) as f:
            return sample(f.read(), ram_bytes, images)
    except (FileNotFoundError, ProcessLookupError):
        return None


def find_pid(name, timeout):
    """The newest process whose comm is NAME, waiting up to TIMEOUT s."""
    import os
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        best = None
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/comm" % d) as f:
                    if f.read().strip() == name:
                        best = max(best or 0, int(d))
            except OSError:
                continue
        if best:
            return best
        time.sleep(0.2)
    return None


def main(argv=None):
    """tests/bench/vmm-memory: sample a VMM's overhead until it exits."""
    import argparse
    import json
    import os
    p = argparse.ArgumentParser(prog="vmm-memory", description=__doc__)
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--pid", type=int)
    who.add_argument("--name", help="wait for a process of this comm")
    p.add_argument("--ram", type=int, required=True,
                   help="the guest's RAM in bytes")
    p.add_argument("--interval", type=float, default=0.5)
    p.add_argument("--wait", type=float, default=60,
                   help="seconds to wait for --name to appear")
    p.add_argument("--image", action="append", default=[],
                   help="a boot image's path: samples taken while it is "
                        "mapped (loading) do not count; repeatable")
    p.add_argument("--json", help="write the samples and the maximum here")
    p.add_argument("--limit-kib", type=int,
                   help="exit 1 when the largest overhead once the VM runs "
                        "is beyond this")
    args = p.parse_args(argv)

    pid = args.pid or find_pid(args.name, args.wait)
    if not pid:
        print("vmm-memory: no process %s appeared" % args.name)
        return 2
    images = {os.path.realpath(i) for i in args.image}
    samples = []
    while True:
        s = read_sample(pid, args.ram, images)
        if s is None:
            break
        if s.found_ram:
            samples.append(s)
        time.sleep(args.interval)
    running = [s for s in samples if not s.loading]
    if not running:
        print("vmm-memory: pid %d: no sample found its guest RAM mapping "
              "with the boot images gone" % pid)
        return 2
    worst = max(running, key=lambda s: s.overhead_kib)
    loading = [s.overhead_kib for s in samples if s.loading]
    print("vmm-memory: pid %d, %d samples: overhead beyond guest RAM max %d "
          "KiB once running (VmRSS %d KiB, guest RAM resident %d KiB), "
          "last %d KiB; %s"
          % (pid, len(running), worst.overhead_kib, worst.rss_kib,
             worst.ram_kib, running[-1].overhead_kib,
             "%d KiB while loading the boot images" % max(loading)
             if loading else "no sample while loading"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"pid": pid, "ram_bytes": args.ram,
                       "max_overhead_kib": worst.overhead_kib,
                       "max_loading_kib": max(loading) if loading else None,
                       "samples": [dataclasses.asdict(s) for s in samples]},
                      f)
    if args.limit_kib is not None and worst.overhead_kib > args.limit_kib:
        print("vmm-memory: beyond the limit of %d KiB" % args.limit_kib)
        return 1
    return 0
