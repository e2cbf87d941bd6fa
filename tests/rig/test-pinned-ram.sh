#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What pin=registered costs the host (issue 30): in the rig's test host,
# with two NUMA nodes (numa=fake=2), a guest boots with 512 MiB and idles
# while the test host measures gpin-vmm from outside
# (tests/lib/gpintest/pinned.py): VmPin, VmRSS, the guest RAM mapping's
# resident part, and whether 4096 of its present pages can be migrated to
# the other node (move_pages(2): what compaction, NUMA balancing and
# memory hot-unplug need, and a balloon's freed pages would):
#   registered  all of guest RAM pinned from the start: VmPin = 512 MiB,
#               resident from the start, and no page migrates
#   fast        nothing pinned while no I/O runs: VmPin 0, and the present
#               pages migrate
# Each VMM is then killed with SIGKILL: gpin.ko must hold no page after.
#
# Usage: tests/rig/test-pinned-ram.sh GPIN_VMM [6.1|6.12|VER] [CASE,...]
# Output: TAP, with each measurement as a JSON comment line.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
readonly HERE TOP
readonly GUEST_TIMEOUT=300 RAM_MB=512

# shellcheck source=tests/rig/guest-test-lib.sh
. "$HERE/guest-test-lib.sh"

# Idles until the test host has measured (the VMM is stopped then).
GUEST_IDLE='echo GUEST ready; sleep 600; exit 0'

# Waits for the guest's "GUEST ready" in log $2 while VMM pid $1 runs.
wait_ready() {
	local pid=$1 log=$2 end=$((SECONDS + GUEST_TIMEOUT))
	while kill -0 "$pid" 2>/dev/null && ((SECONDS < end)); do
		has "$log" '^GUEST ready' && return 0
		sleep 1
	done
	return 1
}

# One case: the guest with --disk ...,pin=$1, measured, expected $2.
measure_case() {
	local pin=$1 expect=$2 log=$OUT/pinned-$1.log pid rc=0 try
	for try in 1 2; do
		: >"$log"	# there before the first look for the marker
		"$VMM" --kernel "$VMLINUZ" --initrd "$INITRD" --cpus 2 \
			--mem "${RAM_MB}M" --disk "$NULLB,pin=$pin" \
			--params "console=ttyS0 quiet gpin.sh=$(b64 "$GUEST_IDLE")" \
			</dev/null >"$log" 2>&1 &
		pid=$!
		wait_ready "$pid" "$log" && break
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		echo "# try $try: the guest did not come up; last lines:"
		tail -n 5 "$log" | tr -d '\r' | sed 's/^/#   /'
		((try < 2)) || return 1
	done
	PYTHONPATH="$TOP/tests/lib" python3 -m gpintest.pinned --pid "$pid" \
		--ram $((RAM_MB << 20)) --expect "$expect" | sed 's/^/# /' ||
		rc=1
	# killed outright: its files' last close releases every pin
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	for try in $(seq 20); do
		[[ $(gpin_live_pages) == 0 ]] && break
		sleep 0.5
	done
	echo "# after kill -9: gpin.ko holds $(gpin_live_pages) pages"
	[[ $(gpin_live_pages) == 0 ]] || rc=1
	return "$rc"
}

# gpin.ko's pages pinned now, all files together (gpin-stat, built
# beside gpin-vmm).
gpin_live_pages() {
	"$(dirname "$VMM")/../pin/gpin-stat" |
		sed -n 's/^live_pages \([0-9]*\) .*/\1/p'
}

case_registered() { measure_case registered pinned; }
case_fast() { measure_case fast unpinned; }

# Runs in the test host, chrooted into the CI host's root.
inside() {
	VMM=$1 VMLINUZ=$2 INITRD=$3
	local cases=${4:-registered,fast}
	OUT=${RIG_OUT:-/tmp}
	[[ -c /dev/kvm ]] || { tap_not_ok "no /dev/kvm in the test host"; return 1; }
	[[ -c /dev/gpin ]] || { tap_not_ok "no /dev/gpin in the test host"; return 1; }
	modprobe -d "$RIG_MODDIR" null_blk nr_devices=1 gb=1 memory_backed=1 ||
		{ tap_not_ok "null_blk does not load"; return 1; }
	NULLB=/dev/nullb0
	local nodes=(/sys/devices/system/node/node*)
	echo "# test host $(uname -r), ${#nodes[@]} NUMA nodes"
	# shellcheck disable=SC2086 # one word per case, by design
	run_cases ${cases//,/ }
}

# gpin.ko for the test host's kernel; two NUMA nodes to migrate between.
guest_test_rig_args() {
	rig_args_gpin_ko "$1"
	printf '%s\n' --mem 4G --append numa=fake=2
}

if [[ ${1:-} == --inside ]]; then
	shift
	inside "$@"
else
	guest_test_main "$HERE/test-pinned-ram.sh" $((4 * GUEST_TIMEOUT)) "$@"
fi
