# SPDX-License-Identifier: GPL-2.0-only
"""The kernel's FOLL_PIN counters around a command.

nr_foll_pin_acquired and nr_foll_pin_released in /proc/vmstat count every
FOLL_PIN pin the kernel takes and drops, system-wide; their difference is
the pins held.  Each CPU keeps a share of each count that it folds in only
past a threshold, so every snapshot first writes vm.stat_refresh (root),
which folds them all.

    python3 -m gpintest.follpin [--repeat N] -- COMMAND [ARGS...]

prints what COMMAND changed: pins acquired, released, and released minus
acquired (the drift; 0 when every pin COMMAND's I/O took was dropped and
counted both ways).  Nothing else on the machine should pin meanwhile.
Exit: COMMAND's status, or 2 when the counters cannot be read.
"""

import argparse
import dataclasses
import subprocess
import sys

VMSTAT = "/proc/vmstat"
STAT_REFRESH = "/proc/sys/vm/stat_refresh"


class Unavailable(Exception):
    """No nr_foll_pin_* in /proc/vmstat (a kernel before 5.7)."""


@dataclasses.dataclass(frozen=True)
class Counts:
    acquired: int
    released: int

    def __sub__(self, before):
        return Counts(self.acquired - before.acquired,
                      self.released - before.released)

    @property
    def drift(self):
        """Releases counted beyond acquisitions (negative: pins held)."""
        return self.released - self.acquired


def parse(text):
    """The two counters from the text of /proc/vmstat."""
    found = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in ("nr_foll_pin_acquired", "nr_foll_pin_released"):
            found[name] = int(value)
    if len(found) != 2:
        raise Unavailable("no nr_foll_pin_acquired/released in " + VMSTAT)
    return Counts(found["nr_foll_pin_acquired"],
                  found["nr_foll_pin_released"])


def snapshot(vmstat=VMSTAT, refresh=STAT_REFRESH):
    """Fold every CPU's share, then read the counters."""
    with open(refresh, "w") as f:
        f.write("1\n")
    with open(vmstat) as f:
        return parse(f.read())


def describe(delta):
    return (f"acquired +{delta.acquired} released +{delta.released} "
            f"released-acquired {delta.drift:+d}")


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python3 -m gpintest.follpin",
        description="FOLL_PIN pins acquired and released around COMMAND "
                    "(root: writes vm.stat_refresh).")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run COMMAND this many times, one line each")
    ap.add_argument("command", nargs=argparse.REMAINDER,
                    help="-- COMMAND [ARGS...]")
    args = ap.parse_args(argv)
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd or args.repeat < 1:
        ap.error("a COMMAND after -- and --repeat >= 1 are needed")
    rc = 0
    for _ in range(args.repeat):
        try:
            before = snapshot()
            rc = subprocess.call(cmd)
            after = snapshot()
        except (OSError, Unavailable) as e:
            print(f"follpin: {e}", file=sys.stderr)
            return 2
        print(describe(after - before), flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
