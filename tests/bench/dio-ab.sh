#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What a change to gpin.ko costs its direct I/O (a benchmark, not a test):
# builds gpin.ko and gpin-dio-bench of an older commit (default HEAD) and
# of the work tree, then in ONE boot of the rig's test host, on a
# memory-backed null_blk, loads the two modules in turn ROUNDS times (old
# first in odd rounds) and runs `gpin-dio-bench` reads and writes, pin=fast
# against pin=kernel (io_uring), 4K/64K/256K at depth 1 and 32.
# tests/bench/dio_ab.py prints CPU time per I/O, new ÷ old and fast ÷
# kernel under each module, paired by round, with 95% intervals.  TCG:
# ratios only.
#
# Usage: tests/bench/dio-ab.sh [--kernel 6.1|6.12] [--rev REV]
#                              [--rounds N] [--duration SEC]
# Exit: 0 done, 77 skipped (reason printed), else failed.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
readonly HERE TOP
BUILD=${GPIN_PIN_BUILDDIR:-$TOP/build-pin}

# Inside the test host: dio-ab.sh --in-host DIR ROUNDS DURATION
if [[ ${1:-} == --in-host ]]; then
	ab=$2 rounds=$3 duration=$4
	modprobe -d "$RIG_MODDIR" null_blk nr_devices=1 memory_backed=1 gb=1 \
		bs=512
	dd if=/dev/zero of=/dev/nullb0 bs=1M count=1024 oflag=direct \
		status=none
	for ((r = 1; r <= rounds; r++)); do
		order="old new"
		((r % 2)) || order="new old"
		for which in $order; do
			insmod "$ab/$which.ko"
			for rw in read write; do
				flags=(--file /dev/nullb0)
				[[ $rw == write ]] && flags+=(--write)
				"$ab/$which-dio-bench" "${flags[@]}" \
					--modes fast,kernel --rounds 1 \
					--duration "$duration" \
					--json "$RIG_OUT/$which-$rw-$r.json" \
					>/dev/null
			done
			rmmod gpin
			echo "# round $r: $which done"
		done
	done
	exit 0
fi

kernel=6.1 rev=HEAD rounds=4 duration=1
while [[ $# -gt 0 ]]; do
	case $1 in
	--kernel) kernel=$2; shift 2 ;;
	--rev) rev=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--duration) duration=$2; shift 2 ;;
	*) sed -n '14,15s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done

[[ -x $TOP/tests/rig/rig ]] || { echo "SKIP: no tests/rig/rig"; exit 77; }
pkg=$("$TOP/scripts/kernel-pkg" "$kernel") ||
	{ echo "SKIP: no Debian kernel $kernel with headers"; exit 77; }
KVER='' KHEADERS=''
eval "$pkg"

ab=$BUILD/dio-ab/$KVER
rm -rf "$ab"
mkdir -p "$ab/old-src" "$ab/new-src" "$ab/out"
ab=$(cd "$ab" && pwd)
git -C "$TOP" archive "$rev" pin include | tar -x -C "$ab/old-src"
cp -r "$TOP/pin" "$TOP/include" "$ab/new-src"
for which in old new; do
	src=$ab/$which-src
	"$TOP/pin/kbuild.sh" "$KHEADERS" "$src/pin" "$src/include/gpin.h" \
		"$ab/$which-kmod" "$ab/$which.ko"
	# the work tree's bench, against each side's UAPI and libgpin
	cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
		-I "$src/include" -I "$src/pin/lib" \
		"$TOP/pin/tools/gpin-dio-bench.c" "$src/pin/lib/libgpin.c" \
		-luring -o "$ab/$which-dio-bench"
done

"$TOP/tests/rig/rig" --kernel "$kernel" --timeout 3000 --out "$ab/out" -- \
	"$HERE/dio-ab.sh" --in-host "$ab" "$rounds" "$duration"
echo "old: $(git -C "$TOP" rev-parse --short "$rev"), new: work tree at" \
	"$(git -C "$TOP" rev-parse --short HEAD)$(git -C "$TOP" diff --quiet \
	HEAD -- pin include || echo ' (modified)'), kernel $KVER," \
	"$rounds rounds of $duration s per cell"
/usr/bin/python3 "$HERE/dio_ab.py" "$ab/out"
