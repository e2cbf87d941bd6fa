#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Smoke test of the rig itself: one test-host boot must show a usable
# /dev/kvm, svm in the vCPU flags, the requested kernel release, RIG_MODDIR
# usable by modprobe -d, a writable RIG_OUT, and must hand back the
# command's own exit status (3 here).  Then a test host that goes silent
# (COMMAND kills the heartbeat, RIG_HEARTBEAT_LIMIT=30): the rig must stop
# it well before --timeout, name where its CPUs are (in the kernel's
# symbols), run COMMAND once more, and end with 125.  And a test host that
# resets itself in COMMAND's first run: COMMAND runs again with RIG_RUN=2
# and its status is the rig's.
#
# Usage: tests/rig/test-rig-smoke.sh [6.1|6.12|VER]   (default 6.1)
# Exit: 0 pass, 1 fail, 77 skipped (reason printed).

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly HERE
readonly EX_SKIP=77

silent_test_host() {
	local kernel=$1 out rc=0 t0=$SECONDS
	out=$(mktemp -d /tmp/rig-smoke.XXXXXX)
	RIG_HEARTBEAT_LIMIT=30 "$HERE/rig" --kernel "$kernel" --out "$out" \
		--timeout 600 -- bash -c '
		pkill -f "^/bin/bash .*/\.rig/run\.sh"; sleep 590' \
		>"$out/stdout" 2>"$out/stderr" || rc=$?
	sed 's/^/# /' "$out/stderr"
	if ((rc != 125)); then
		echo "FAIL: silent test host: rig returned $rc, want 125"
		exit 1
	fi
	if ((SECONDS - t0 > 400)); then
		echo "FAIL: silent test host stopped only after $((SECONDS - t0)) s"
		exit 1
	fi
	grep -q '^rig: the test host gave no heartbeat' "$out/stderr" &&
		grep -q '^rig: test host cpu0 rip [0-9a-f]* [a-z_][a-z_0-9.]*+0x' "$out/stderr" &&
		grep -q '^# rig: running COMMAND again' "$out/stdout" &&
		[[ -s $out/test-host-cpus.txt ]] ||
		{ echo "FAIL: silent test host: no heartbeat stop, CPU dump or rerun"; exit 1; }
	rm -rf "$out"
}

resetting_test_host() {
	local kernel=$1 out rc=0
	out=$(mktemp -d /tmp/rig-smoke.XXXXXX)
	# shellcheck disable=SC2016 # expanded inside
	"$HERE/rig" --kernel "$kernel" --out "$out" --timeout 120 -- bash -c '
		if [ "$RIG_RUN" = 1 ]; then
			echo 1 >/proc/sys/kernel/sysrq; echo b >/proc/sysrq-trigger
			sleep 60
		fi
		echo "second run: RIG_RUN=$RIG_RUN"; exit 4' \
		>"$out/stdout" 2>"$out/stderr" || rc=$?
	sed 's/^/# /' "$out/stderr"
	if ((rc != 4)) || ! grep -q '^second run: RIG_RUN=2$' "$out/stdout" ||
		! grep -q '^rig: the test host reset itself' "$out/stderr"; then
		echo "FAIL: resetting test host: rig returned $rc, want 4 from a second run"
		exit 1
	fi
	rm -rf "$out"
}

main() {
	local kernel=${1:-6.1} out rc=0
	command -v qemu-system-x86_64 >/dev/null || { echo "SKIP: no qemu-system-x86_64"; exit "$EX_SKIP"; }
	((EUID == 0)) || { echo "SKIP: the rig needs root"; exit "$EX_SKIP"; }
	"$HERE/../../scripts/kernel-pkg" "$kernel" >/dev/null ||
		{ echo "SKIP: no Debian $kernel kernel available through apt"; exit "$EX_SKIP"; }

	out=$(mktemp -d /tmp/rig-smoke.XXXXXX)
	# The inner script fails with 1 on the first unmet expectation, so only
	# a fully healthy test host can return 3.  Expanded inside, hence the quotes.
	# shellcheck disable=SC2016
	"$HERE/rig" --kernel "$kernel" --out "$out" --timeout 120 -- bash -c '
		set -e
		ls -l /dev/kvm; test -c /dev/kvm
		echo "svm cpus: $(grep -c svm /proc/cpuinfo)"; grep -q svm /proc/cpuinfo
		echo "kernel: $(uname -r)"; test "$(uname -r)" = "$RIG_KVER"
		modprobe -d "$RIG_MODDIR" brd rd_nr=1 rd_size=16384; test -b /dev/ram0
		echo ok >"$RIG_OUT/written-inside"
		exit 3' || rc=$?

	if ((rc != 3)); then
		echo "FAIL: rig returned $rc, want 3"
		exit 1
	fi
	[[ $(cat "$out/written-inside") == ok ]] || { echo "FAIL: RIG_OUT not written"; exit 1; }
	rm -rf "$out"
	silent_test_host "$kernel"
	resetting_test_host "$kernel"
	echo PASS
}

main "$@"
