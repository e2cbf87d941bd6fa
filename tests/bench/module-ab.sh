#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What a change to gpin.ko costs (a benchmark, not a test): builds gpin.ko
# and the bench tool of an older commit REV and of the work tree (each
# side's tool against its own UAPI and libgpin: the work tree's source
# where REV has none), then in ONE boot of the rig's test host loads the
# two modules in turn ROUNDS times (old first in odd rounds) and runs the
# bench on each; a summary script prints the paired comparison.
#
#   --bench pin  `gpin-bench pin --only single`, fast and kernel modes:
#                ns per page (tests/bench/pin_foll_ab.py; default REV
#                56f1c27^, the last module taking plain references)
#   --bench dio  `gpin-dio-bench`, reads and writes on a memory-backed
#                null_blk, pin=fast against io_uring: CPU time per I/O
#                (tests/bench/dio_ab.py; default REV HEAD)
#
# TCG: ratios only.  pin-foll-ab.sh and dio-ab.sh are this with --bench.
#
# Usage: tests/bench/module-ab.sh --bench pin|dio [--kernel 6.1|6.12]
#                                 [--rev REV] [--rounds N] [--duration SEC]
# Exit: 0 done, 77 skipped (reason printed), else failed.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
readonly HERE TOP
BUILD=${GPIN_PIN_BUILDDIR:-$TOP/build-pin}

# One module's turn inside the test host: run_bench BENCH DIR WHICH ROUND
run_bench() {
	local bench=$1 ab=$2 which=$3 r=$4 rw flags
	if [[ $bench == pin ]]; then
		"$ab/$which-tool" pin --only single --modes fast,kernel \
			--duration "$duration" \
			--json "$RIG_OUT/$which-$r.json" >/dev/null
		return
	fi
	for rw in read write; do
		flags=(--file /dev/nullb0)
		[[ $rw == write ]] && flags+=(--write)
		"$ab/$which-tool" "${flags[@]}" --modes fast,kernel --rounds 1 \
			--duration "$duration" \
			--json "$RIG_OUT/$which-$rw-$r.json" >/dev/null
	done
}

# Inside the test host: module-ab.sh --in-host BENCH DIR ROUNDS DURATION
if [[ ${1:-} == --in-host ]]; then
	bench=$2 ab=$3 rounds=$4 duration=$5
	mount -t debugfs none /sys/kernel/debug 2>/dev/null || true
	if [[ $bench == dio ]]; then
		modprobe -d "$RIG_MODDIR" null_blk nr_devices=1 \
			memory_backed=1 gb=1 bs=512
		dd if=/dev/zero of=/dev/nullb0 bs=1M count=1024 oflag=direct \
			status=none
	fi
	for ((r = 1; r <= rounds; r++)); do
		order="old new"
		((r % 2)) || order="new old"
		for which in $order; do
			insmod "$ab/$which.ko"
			run_bench "$bench" "$ab" "$which" "$r"
			rmmod gpin
			echo "# round $r: $which done"
		done
	done
	exit 0
fi

bench='' kernel=6.1 rev='' rounds='' duration=''
while [[ $# -gt 0 ]]; do
	case $1 in
	--bench) bench=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--rev) rev=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--duration) duration=$2; shift 2 ;;
	*) sed -n '20,21s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
case $bench in
pin) tool=gpin-bench summary=pin_foll_ab.py libs=(-pthread)
	: "${rev:=56f1c27^}" "${rounds:=3}" "${duration:=0.5}" ;;
dio) tool=gpin-dio-bench summary=dio_ab.py libs=(-luring)
	: "${rev:=HEAD}" "${rounds:=4}" "${duration:=1}" ;;
*) sed -n '20,21s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac

[[ -x $TOP/tests/rig/rig ]] || { echo "SKIP: no tests/rig/rig"; exit 77; }
pkg=$("$TOP/scripts/kernel-pkg" "$kernel") ||
	{ echo "SKIP: no Debian kernel $kernel with headers"; exit 77; }
KVER='' KHEADERS=''
eval "$pkg"

ab=$BUILD/$bench-ab/$KVER
rm -rf "$ab"
mkdir -p "$ab/old-src" "$ab/new-src" "$ab/out"
ab=$(cd "$ab" && pwd)
git -C "$TOP" archive "$rev" pin include | tar -x -C "$ab/old-src"
cp -r "$TOP/pin" "$TOP/include" "$ab/new-src"
printf '#define GPIN_VERSION "ab"\n' >"$ab/config.h"
for which in old new; do
	src=$ab/$which-src
	"$TOP/pin/kbuild.sh" "$KHEADERS" "$src/pin" "$src/include/gpin.h" \
		"$ab/$which-kmod" "$ab/$which.ko"
	tool_src=$src/pin/tools/$tool.c
	[[ -e $tool_src ]] || tool_src=$TOP/pin/tools/$tool.c
	# the tools' shared list parsing, where that tree has it
	cli=()
	[[ -e ${tool_src%/*}/cli.c ]] && cli=("${tool_src%/*}/cli.c")
	cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -I "$ab" \
		-I "$src/include" -I "$src/pin/lib" -I "${tool_src%/*}" \
		"$tool_src" "${cli[@]}" "$src/pin/lib/libgpin.c" "${libs[@]}" \
		-o "$ab/$which-tool"
done

"$TOP/tests/rig/rig" --kernel "$kernel" --timeout 3000 --out "$ab/out" -- \
	"$HERE/module-ab.sh" --in-host "$bench" "$ab" "$rounds" "$duration"
echo "old: $(git -C "$TOP" rev-parse --short "$rev"), new: work tree at" \
	"$(git -C "$TOP" rev-parse --short HEAD)$(git -C "$TOP" diff --quiet \
	HEAD -- pin include || echo ' (modified)'), kernel $KVER," \
	"$rounds rounds of $duration s per cell"
/usr/bin/python3 "$HERE/$summary" "$ab/out"
