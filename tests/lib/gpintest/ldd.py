# SPDX-License-Identifier: GPL-2.0-only
"""The shared libraries a program loads, as ldd(1) lists them.

    python3 -m gpintest.ldd FILE...

prints, one a line and each once, every library path ldd reports for the
FILEs ("libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)") and the
dynamic loader ("/lib64/ld-linux-x86-64.so.2 (0x...)"): what an initramfs
must hold beside them, at those very paths (scripts/lib/initramfs.sh: the
image has no ld.so.cache, so the loader looks in its built-in directories
and the programs' RUNPATHs).  vDSOs and "not found" are left out, a
static program lists nothing.  Exit 1 when ldd fails on a FILE.
"""

import subprocess
import sys


def libraries(ldd_text):
    """The paths of ldd's output, in order."""
    out = []
    for line in ldd_text.splitlines():
        words = line.split()
        # the loader may be listed both ways ("/lib64/ld... => /usr/...")
        if words and words[0].startswith("/"):
            out.append(words[0])
        if len(words) >= 3 and words[1] == "=>" and words[2].startswith("/"):
            out.append(words[2])
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    seen = []
    for path in argv:
        p = subprocess.run(["ldd", path], capture_output=True, text=True)
        if p.returncode and "not a dynamic executable" not in p.stdout + \
                p.stderr:
            print("ldd: %s: %s" % (path, p.stderr.strip()), file=sys.stderr)
            return 1
        for lib in libraries(p.stdout):
            if lib not in seen:
                seen.append(lib)
    for lib in seen:
        print(lib)
    return 0


if __name__ == "__main__":
    sys.exit(main())
