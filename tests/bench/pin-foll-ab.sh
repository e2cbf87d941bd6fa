#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What FOLL_PIN costs the fast path: tests/bench/module-ab.sh --bench pin
# (gpin.ko of REV, default 56f1c27^, the last one taking plain references,
# against the work tree's; gpin-bench pin ns per page, paired by round).
#
# Usage: tests/bench/pin-foll-ab.sh [--kernel 6.1|6.12] [--rev REV]
#                                   [--rounds N] [--duration SEC]
exec "$(dirname "${BASH_SOURCE[0]}")/module-ab.sh" --bench pin "$@"
