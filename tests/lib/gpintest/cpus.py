# SPDX-License-Identifier: GPL-2.0-only
"""Where the test host's CPUs are, named by its kernel's symbols.

When a test host stops making progress the rig asks QEMU for `info
registers -a` and names each CPU's instruction pointer from the test-host
kernel's text symbols (/proc/kallsyms, saved once per kernel: the rig
boots it with nokaslr, so every boot has the same addresses) or from the
module that holds it (/proc/modules, saved when COMMAND starts).  A CPU in
gpin.ko shows as "[gpin]+0x...", which deaths.gpin_frames() recognises.
"""

import bisect
import re


def load_kallsyms(path):
    """Sorted (addresses, names) of the text symbols in a kallsyms copy."""
    pairs = []
    try:
        with open(path) as f:
            for line in f:
                fields = line.split()
                if len(fields) >= 3 and fields[1] in "tTwW":
                    pairs.append((int(fields[0], 16), fields[2]))
    except OSError:
        pass
    pairs.sort()
    return [a for a, _ in pairs], [n for _, n in pairs]


def load_modules(path):
    """(start, size, name) of each module in a copy of /proc/modules."""
    mods = []
    try:
        with open(path) as f:
            for line in f:
                fields = line.split()
                if len(fields) >= 6 and fields[5].startswith("0x"):
                    mods.append((int(fields[5], 16), int(fields[1]),
                                 fields[0]))
    except OSError:
        pass
    return mods


def name_of(rip, kallsyms, modules):
    for start, size, name in modules:
        if start <= rip < start + size:
            return "[%s]+%#x" % (name, rip - start)
    addrs, names = kallsyms
    i = bisect.bisect_right(addrs, rip) - 1
    if i >= 0 and rip - addrs[i] < 0x100000:
        return "%s+%#x" % (names[i], rip - addrs[i])
    return "?"


def cpu_lines(registers, kallsyms, modules):
    """"cpuN rip ADDR SYMBOL+OFF [(halted)]" per CPU of an `info registers
    -a` answer."""
    lines, cpu = [], None
    for line in registers.splitlines():
        m = re.match(r"\s*CPU#(\d+)", line)
        if m:
            cpu = int(m.group(1))
        m = re.search(r"\bRIP=([0-9a-f]{16})", line)
        if m and cpu is not None:
            rip = int(m.group(1), 16)
            halted = " (halted)" if " HLT=1" in line else ""
            lines.append("cpu%d rip %016x %s%s" % (
                cpu, rip, name_of(rip, kallsyms, modules), halted))
    return lines
