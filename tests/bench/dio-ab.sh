#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What a change to gpin.ko costs its direct I/O: tests/bench/module-ab.sh
# --bench dio (gpin.ko of REV, default HEAD, against the work tree's;
# gpin-dio-bench CPU time per I/O, pin=fast against io_uring, paired by
# round).
#
# Usage: tests/bench/dio-ab.sh [--kernel 6.1|6.12] [--rev REV]
#                              [--rounds N] [--duration SEC]
exec "$(dirname "${BASH_SOURCE[0]}")/module-ab.sh" --bench dio "$@"
