# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Shared by the rig tests that boot Linux guests under gpin-vmm
# (test-vmm-*.sh): TAP output, case running, and the outer half that builds
# the guest image and runs the script again inside the test host.
#
# A test script defines case_NAME functions (0 pass, 77 skip, else fail)
# and an `inside` function, sources this file, and ends with
# `guest_test_main SCRIPT TIMEOUT "$@"`.

readonly EX_SKIP=77

# shellcheck source=tests/lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"

b64() {
	printf '%s' "$1" | base64 -w0
}

# Whether the console log $1 has a line matching $2 (CRs stripped).  Not
# grep -q: it would stop reading at the first match and, under pipefail,
# tr's SIGPIPE would turn a match into a failure.
has() {
	tr -d '\r' <"$1" | grep -- "$2" >/dev/null
}

# Runs a VMM command line with its output in LOG and returns its status.
# Args: timeout-seconds log command...  A guest whose kernel reports an RCU
# stall or a soft lockup is not waited out: the VMM is asked for its
# vCPUs' state and its queues' rings (SIGUSR1: in the guest or in the
# VMM, registers; twice, 3 s apart) and then stopped, status 125.  At the
# timeout the same, status 124.
readonly EX_STALLED=125
run_vmm() {
	local limit=$1 log=$2 pid end rc=0
	shift 2
	end=$((SECONDS + limit))
	"$@" </dev/null >"$log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if ((SECONDS >= end)) ||
			grep -aqE 'rcu: INFO: rcu_.* detected stalls|soft lockup - CPU' "$log"; then
			# twice: rings that did not move in between are stuck
			# (tests/lib/gpintest/deaths.py: stuck_queues)
			kill -USR1 "$pid" 2>/dev/null
			sleep 3
			kill -USR1 "$pid" 2>/dev/null
			sleep 2
			kill -TERM "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			((SECONDS >= end)) && return 124
			return "$EX_STALLED"
		fi
		sleep 1
	done
	wait "$pid" || rc=$?
	return "$rc"
}

# Runs a guest until it did not die, as far as the death policy allows
# (tests/lib/gpintest/deaths.py, the one place it lives: a case's guest
# may die twice and run again; a third death, or one that is gpin's - a
# trace naming gpin code, a crash of gpin-vmm, a queue stuck with work in
# it - fails it; every death goes into the ledger the rig and scripts/test
# report).
# TCG's nested SVM now and then kills a guest (docs/RIG.md): a triple
# fault, a double fault, a stall (run_vmm's 125) or a silent hang (124).
# Args: case want-status limit log command...  Returns the command's
# status, or 1 when the case died for good.  A dead guest's log is kept
# as LOG.diedN.
boot_until_alive() {
	local case=$1 want=$2 limit=$3 log=$4 rc verdict try
	shift 4
	for ((try = 1; ; try++)); do
		rc=0
		run_vmm "$limit" "$log" "$@" || rc=$?
		verdict=0
		"$TOP/tests/lib/deaths" guest --case "$case" --log "$log" \
			--status "$rc" --want "$want" || verdict=$?
		case $verdict in
		0) return "$rc" ;;
		10) mv "$log" "$log.died$try" ;;
		*) tail -n 30 "$log" | tr -d '\r' | sed 's/^/#   /'
		   return 1 ;;
		esac
	done
}


# The status case $1 finished with, from ledger $2 ("NAME STATUS" lines);
# nothing when it did not finish.
ledger_status() {
	local name status
	while read -r name status; do
		[[ $name == "$1" ]] && { echo "$status"; return 0; }
	done <"$2"
	return 0
}

# Runs case_NAME for each NAME and prints one TAP line each.  Each result
# is kept in $RIG_OUT/cases.done: when the rig runs the script again after
# the test host crashed (RIG_RUN > 1), cases that finished keep their
# result instead of running again under the same risk.  A test host that
# died before the first case started left no such file: the run again
# starts one (reading a missing file would end the script under errexit).
run_cases() {
	local c rc done=${RIG_OUT:-/tmp}/cases.done
	if ((${RIG_RUN:-1} == 1)) || [[ ! -e $done ]]; then
		: >"$done"
	fi
	echo "1..$#"
	for c in "$@"; do
		rc=$(ledger_status "$c" "$done")
		if [[ -n $rc ]]; then
			echo "# $c: finished before the test host crashed (status $rc)"
		else
			# In a || list errexit is off for the whole case.
			rc=0
			"case_$c" || rc=$?
			echo "$c $rc" >>"$done"
		fi
		if ((rc == EX_SKIP)) && [[ ${CI:-} == true ]]; then
			echo "# $c: skipped, and under CI=true a skip is a failure"
			rc=1
		fi
		if ((rc == 0)); then
			tap_ok "$c"
		elif ((rc == EX_SKIP)); then
			tap_ok "$c" "SKIP"
		else
			tap_not_ok "$c"
		fi
	done
	echo "# $((tap_n - tap_failed)) passed, $tap_failed failed"
	((tap_failed == 0))
}

# The rig options that insert gpin.ko built for kernel release $1 (in
# ${GPIN_PIN_BUILDDIR:-build-pin}/<ver>/), one a line; none, said on
# stderr, when it does not build (the cases that need it then skip).
rig_args_gpin_ko() {
	local kver=$1 build=${GPIN_PIN_BUILDDIR:-$TOP/build-pin}
	local kheaders=/usr/src/linux-headers-$1
	if [[ -f $kheaders/Makefile ]] &&
		"$TOP/pin/kbuild.sh" "$kheaders" "$TOP/pin" "$TOP/include/gpin.h" \
			"$build/$kver/kmod" "$build/$kver/gpin.ko" >&2; then
		printf '%s\n' --insmod "$build/$kver/gpin.ko"
	else
		echo "# gpin.ko not built for $kver: the cases that need it skip" >&2
	fi
}

# Outer half, on the CI host: checks the prerequisites, builds the guest
# image for the kernel series and runs SCRIPT --inside GPIN_VMM VMLINUZ
# INITRD [EXTRA...] in the test host.  Args: script rig-timeout GPIN_VMM
# [KERNEL [EXTRA...]].  A script that needs more of the rig (a module to
# insert) defines guest_test_rig_args, which gets the kernel release and
# prints further rig options, one a line.
guest_test_main() {
	local script=$1 timeout=$2 vmm=${3:-} kernel=${4:-6.1} img
	local -a rig_args=() inside_args=("${@:5}")
	[[ -n $vmm ]] || { echo "usage: $script GPIN_VMM [KERNEL]" >&2; exit 2; }
	vmm=$(realpath "$vmm")
	[[ -x $vmm ]] || { tap_not_ok "$vmm is not executable"; exit 1; }
	command -v qemu-system-x86_64 >/dev/null || tap_skip_all "qemu-system-x86_64 not installed"
	((EUID == 0)) || tap_skip_all "the rig needs root (mknod, apt, /var/cache)"
	img=$("$TOP/guest-images/build-guest" "$kernel") ||
		{ tap_not_ok "building the $kernel guest image failed"; exit 1; }
	local KVER='' VMLINUZ='' INITRD=''
	eval "$img"
	echo "# guest image: $KVER $INITRD"
	[[ -n ${GPIN_RIG_OUT:-} ]] && rig_args=(--out "$GPIN_RIG_OUT")
	if declare -F guest_test_rig_args >/dev/null; then
		mapfile -t -O "${#rig_args[@]}" rig_args < <(guest_test_rig_args "$KVER")
	fi
	"$TOP/tests/rig/rig" --kernel "$KVER" --timeout "$timeout" "${rig_args[@]}" -- \
		"$script" --inside "$vmm" "$VMLINUZ" "$INITRD" "${inside_args[@]}" |
		tap_after_rerun
	return "${PIPESTATUS[0]}"
}

# Passes TAP through, merging a rerun's (gpintest/tap.py: after the
# rig's "# rig: running COMMAND again", the cases the first run finished
# keep their results).
tap_after_rerun() {
	PYTHONPATH="$TOP/tests/lib" python3 -m gpintest.tap merge
}
