# SPDX-License-Identifier: GPL-2.0-only
"""How often a guest's interrupt fired, from its /proc/interrupts.

A guest script copies the lines it cares about to the console, each
prefixed "GUEST irq: " (tests/rig/test-vmm-blk.sh), e.g.

    GUEST irq:  25:   1042   0   PCI-MSIX-0000:00:02.0   1-edge   virtio0-req.0

    python3 -m gpintest.guestirqs LOG NAME

prints the sum of the per-CPU counts of the interrupt named NAME (the
line's last word) in console log LOG, 0 when it is not there.
"""

import re
import sys

_COUNT = re.compile(r"^\d+$")


def count(text, name):
    total = 0
    for line in text.replace("\r", "").splitlines():
        words = line.split()
        if words[:2] != ["GUEST", "irq:"] or words[-1] != name:
            continue
        # words[2] is "NN:", then one count per CPU, then the chip's words
        for w in words[3:]:
            if not _COUNT.match(w):
                break
            total += int(w)
    return total


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print("usage: python3 -m gpintest.guestirqs LOG NAME",
              file=sys.stderr)
        return 2
    with open(argv[0], errors="replace") as f:
        print(count(f.read(), argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
