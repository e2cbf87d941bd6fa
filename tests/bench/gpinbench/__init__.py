# SPDX-License-Identifier: GPL-2.0-only
"""The benchmarks (tests/bench): e2e, pin-bench, boot-time.

They share the statistics (stats), the targets (targets), the balanced
order (schedule), the raw-result store (store), the parsers (parse), the
report and plot, and the hop into the rig's test host (rig).  The death
policy is the rig's own, gpintest.deaths in tests/lib.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.realpath(__file__)))), "lib"))
