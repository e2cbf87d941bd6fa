# SPDX-License-Identifier: GPL-2.0-only
"""What a failed TAP test said about itself.

COMMAND's output streams to the rig's stdout, which meson keeps in its
test log; CI shows only a failed test's stderr.  The rig picks each "not
ok" line out of COMMAND's TAP output, with the comment lines the case
printed since the previous result (its diagnosis: the guest's status,
the last lines of its console), and prints them on stderr when COMMAND
fails, so that the reason reaches whoever reads CI's output.
"""

import collections
import re

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
