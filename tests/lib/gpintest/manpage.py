# SPDX-License-Identifier: GPL-2.0-only
"""A man page says every option its program's --help says.

    python3 -m gpintest.manpage PAGE.scd -- PROGRAM [ARGS...]

runs PROGRAM ARGS (its --help, say), takes every long option (--name) and
every disk word (name= inside the --disk synopsis of gpin-vmm) it prints,
and fails naming those the scdoc source PAGE.scd does not mention as
*--name* or *name=*.  So a new option cannot land without its page.
Exit: 0, 1 when something is missing, 2 when PROGRAM cannot run.
"""

import re
import subprocess
import sys

_LONG = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")
_WORD = re.compile(r"[\[,]([a-z_]+)=")


def options(help_text):
    """Long options and --disk words a help text names."""
    longs = set(_LONG.findall(help_text))
    words = set()
    for line in help_text.splitlines():
        if line.lstrip().startswith(("-d, --disk", "[,")):
            words.update(_WORD.findall(line))
    return longs, words


def missing(help_text, page_text):
    """What the help names and the page does not, sorted."""
    longs, words = options(help_text)
    out = [f"--{o}" for o in sorted(longs) if f"*--{o}*" not in page_text]
    out += [f"{w}=" for w in sorted(words) if f"*{w}=*" not in page_text]
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--" not in argv or argv.index("--") != 1 or len(argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    page, cmd = argv[0], argv[2:]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"manpage: {cmd[0]}: {e}", file=sys.stderr)
        return 2
    if run.returncode:
        print(f"manpage: {' '.join(cmd)}: status {run.returncode}",
              file=sys.stderr)
        return 2
    with open(page) as f:
        gone = missing(run.stdout + run.stderr, f.read())
    if gone:
        print(f"manpage: {page} does not describe {', '.join(gone)} "
              f"(from {' '.join(cmd)})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
