# SPDX-License-Identifier: GPL-2.0-only
"""TAP as the rig's tests print it: what a failed case said about itself,
and one test's output over a rerun of its test host.

COMMAND's output streams to the rig's stdout, which meson keeps in its
test log; CI shows only a failed test's stderr.  The rig picks each "not
ok" line out of COMMAND's TAP output, with the comment lines the case
printed since the previous result (its diagnosis: the guest's status,
the last lines of its console), and prints them on stderr when COMMAND
fails, so that the reason reaches whoever reads CI's output.
"""

import collections
import re
import sys

_RESULT = re.compile(r"^(not )?ok\b")
# Comment lines kept per failed case, and failed cases kept: enough for a
# diagnosis, bounded for a case that prints a console's worth.
KEEP_LINES = 60
KEEP_REPORTS = 10


class FailureReports:
    """Feed it COMMAND's output line by line; reports holds, per failed
    case, its last KEEP_LINES comment lines and its "not ok" line."""

    def __init__(self):
        self.block = collections.deque(maxlen=KEEP_LINES)
        self.reports = []

    def feed(self, line):
        if _RESULT.match(line):
            if line.startswith("not ok") and \
                    len(self.reports) < KEEP_REPORTS:
                self.reports.append(list(self.block) + [line])
            self.block.clear()
        elif line.startswith("#"):
            self.block.append(line)

    def lines(self):
        """All reports, one after the other."""
        return [line for report in self.reports for line in report]


class Writer:
    """TAP for a test written in Python: numbered results, a problem and
    its diagnosis as comments, the plan at the end (plan())."""

    def __init__(self, out=None):
        self.out = out or sys.stdout
        self.n = 0
        self.failed = 0

    def result(self, name, problem=None, detail=()):
        """Ok when PROBLEM is empty; returns whether it was."""
        self.n += 1
        if problem:
            self.failed += 1
            lines = ["not ok %d - %s" % (self.n, name)]
            # every line of the problem and the details a comment
            lines += ["# " + line for text in [str(problem)] + list(detail)
                      for line in str(text).replace("\r", "").splitlines()]
        else:
            lines = ["ok %d - %s" % (self.n, name)]
        self.out.write("".join(line + "\n" for line in lines))
        self.out.flush()
        return not problem

    def passed_through(self, line):
        """Counts a result line another program printed (and we passed
        on), so that the plan covers it."""
        m = _NUMBER.match(line)
        if m:
            self.n += 1
            self.failed += line.startswith("not ok")

    def skip_all(self, reason):
        """The test cannot run here: a skip plan, and status 0 (Meson's
        TAP skip; 77 would be an ERROR)."""
        self.out.write("1..0 # SKIP %s\n" % reason)
        self.out.flush()
        return 0

    def plan(self):
        """The trailing plan; the exit status the results make."""
        self.out.write("1..%d\n" % self.n)
        self.out.flush()
        return 1 if self.failed else 0


RERUN = "# rig: running COMMAND again"
_PLAN = re.compile(r"^1\.\.\d+")
_NUMBER = re.compile(r"^(?:not )?ok (\d+)")


def merge_after_rerun(lines):
    """Passes TAP lines through.  After the rig's RERUN line (the test host
    died outside gpin.ko and COMMAND runs again), the cases the first run
    finished keep their results and the second run supplies the rest: the
    results it repeats are dropped, and so is its plan when the first run
    printed one (a trailing plan comes only from the second run)."""
    again = planned = False
    last = 0
    for line in lines:
        if line.startswith(RERUN):
            again = True
        if _PLAN.match(line):
            if again and planned:
                continue
            planned = True
        m = _NUMBER.match(line)
        if m:
            if again and int(m.group(1)) <= last:
                continue
            last = int(m.group(1))
        yield line


def main(argv=None):
    """python3 -m gpintest.tap merge: merge_after_rerun() from stdin to
    stdout, a line at a time (the rig's output streams through it)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv != ["merge"]:
        print("usage: python3 -m gpintest.tap merge", file=sys.stderr)
        return 2
    # bytes in, the same bytes out, whatever the locale: a console line
    # may hold anything
    lines = (b.decode("utf-8", "surrogateescape")
             for b in iter(sys.stdin.buffer.readline, b""))
    for line in merge_after_rerun(lines):
        sys.stdout.buffer.write(line.encode("utf-8", "surrogateescape"))
        sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
