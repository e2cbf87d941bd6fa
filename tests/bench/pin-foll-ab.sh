#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What FOLL_PIN costs the fast path (a benchmark, not a test): builds
# gpin.ko of an older commit (default 56f1c27^, the last one taking plain
# references) and of the work tree, and gpin-bench, then in ONE boot of the
# rig's test host loads them in turn, ROUNDS times (old, new, old, new...),
# each time running `gpin-bench pin --only single` for the fast and kernel
# modes (the pair in an order that alternates: old first in odd rounds);
# tests/bench/pin_foll_ab.py prints the median ns/page of each cell (also
# of PIN and UNPIN apart) for both modules and new / old paired by round,
# with 95% intervals and the verdict against the 10% bound.  TCG: ratios.
#
# Usage: tests/bench/pin-foll-ab.sh [--kernel 6.1|6.12] [--rev REV]
#                                   [--rounds N] [--duration SEC]
# Exit: 0 done, 77 skipped (reason printed), else failed.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
readonly HERE TOP
BUILD=${GPIN_PIN_BUILDDIR:-$TOP/build-pin}

# Inside the test host: pin-foll-ab.sh --in-host GPIN_BENCH ROUNDS DURATION
#   OLD_KO NEW_KO; JSON results into $RIG_OUT.
if [[ ${1:-} == --in-host ]]; then
	bench=$2 rounds=$3 duration=$4 old=$5 new=$6
	mount -t debugfs none /sys/kernel/debug 2>/dev/null || true
	for ((r = 1; r <= rounds; r++)); do
		order="old new"
		((r % 2)) || order="new old"
		for which in $order; do
			ko=$old
			[[ $which == new ]] && ko=$new
			insmod "$ko"
			"$bench" pin --only single --modes fast,kernel \
				--duration "$duration" \
				--json "$RIG_OUT/$which-$r.json" >/dev/null
			rmmod gpin
			echo "# round $r: $which done"
		done
	done
	exit 0
fi

kernel=6.1 rev=56f1c27^ rounds=3 duration=0.5
while [[ $# -gt 0 ]]; do
	case $1 in
	--kernel) kernel=$2; shift 2 ;;
	--rev) rev=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--duration) duration=$2; shift 2 ;;
	*) sed -n '14,16s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done

[[ -x $TOP/tests/rig/rig ]] || { echo "SKIP: no tests/rig/rig"; exit 77; }
pkg=$("$TOP/scripts/kernel-pkg" "$kernel") ||
	{ echo "SKIP: no Debian kernel $kernel with headers"; exit 77; }
KVER='' KHEADERS=''
eval "$pkg"

ab=$BUILD/ab/$KVER
rm -rf "$ab/old-src"
mkdir -p "$ab/old-src" "$ab/out"
ab=$(cd "$ab" && pwd)
git -C "$TOP" archive "$rev" pin include | tar -x -C "$ab/old-src"
"$TOP/pin/kbuild.sh" "$KHEADERS" "$ab/old-src/pin" \
	"$ab/old-src/include/gpin.h" "$ab/old-kmod" "$ab/old.ko"
"$TOP/pin/kbuild.sh" "$KHEADERS" "$TOP/pin" "$TOP/include/gpin.h" \
	"$ab/new-kmod" "$ab/new.ko"
printf '#define GPIN_VERSION "ab"\n' >"$ab/config.h"
cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
	-I "$ab" -I "$TOP/include" -I "$TOP/pin/lib" \
	"$TOP/pin/tools/gpin-bench.c" "$TOP/pin/lib/libgpin.c" \
	-pthread -o "$ab/gpin-bench"

rm -f "$ab"/out/*.json
"$TOP/tests/rig/rig" --kernel "$kernel" --timeout 1800 --out "$ab/out" -- \
	"$HERE/pin-foll-ab.sh" --in-host "$ab/gpin-bench" "$rounds" \
	"$duration" "$ab/old.ko" "$ab/new.ko"
echo "old: $(git -C "$TOP" rev-parse --short "$rev"), new: work tree at" \
	"$(git -C "$TOP" rev-parse --short HEAD), kernel $KVER," \
	"$rounds rounds of $duration s per cell"
/usr/bin/python3 "$HERE/pin_foll_ab.py" "$ab/out"
