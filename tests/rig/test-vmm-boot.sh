#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# gpin-vmm boots Linux: inside the rig's test host (tests/rig/rig), the
# Debian kernel and the guest image (guest-images/build-guest) boot under
# gpin-vmm, and each way a guest can end is checked against the VMM's exit
# status:
#   nproc     --cpus 2: the console shows the kernel and userspace, the guest
#             counts 2 CPUs, and the workload's status 0 comes back; no
#             alarming line ("PCI: Fatal", "BUG:", "Oops") on the way
#   cpus3     --cpus 3 (quiet): the guest counts 3 CPUs
#   fail      the workload's status 7 comes back through the exit device
#   poweroff  `poweroff -f` (ACPI S5): status 0, no exit-device write
#   reboot    `reboot -f` (ACPI reset register / i8042): status 0
#   panic     sysrq crash with pvpanic: status 3
#
# Usage: tests/rig/test-vmm-boot.sh GPIN_VMM [6.1|6.12|VER]   (default 6.1)
# Output: TAP, one line a case.  Exit: 0 pass, 1 fail, 77 skipped (reason
# printed).  It starts the rig itself and runs itself again inside with
# --inside.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
readonly HERE TOP
readonly GUEST_TIMEOUT=480

# shellcheck source=tests/rig/guest-test-lib.sh
. "$HERE/guest-test-lib.sh"

# One boot, again if the guest died (boot_until_alive: the death policy).
# Args: name want-status log cpus cmdline-extra; the rest of the checks
# look at the log.
boot() {
	local name=$1 want=$2 log=$3 cpus=$4 extra=$5 rc=0 t0
	t0=$SECONDS
	boot_until_alive "$name" "$want" "$GUEST_TIMEOUT" "$log" "$VMM" \
		--test-exit-port --kernel "$VMLINUZ" --initrd "$INITRD" --cpus "$cpus" --mem 512M \
		--params "console=ttyS0 $extra" || rc=$?
	echo "# $name: status $rc (want $want), $((SECONDS - t0)) s"
	if ((rc != want)); then
		echo "# last lines of $log:"
		tail -n 15 "$log" | tr -d '\r' | sed 's/^/#   /'
		grep -a '^gpin-vmm: vcpu' "$log" | tr -d '\r' | sed 's/^/#   /'
		return 1
	fi
}

case_nproc() {
	local log=$OUT/boot-nproc.log
	boot nproc 0 "$log" 2 "gpin.workload=nproc" &&
		has "$log" 'Linux version' &&
		has "$log" '^GUEST_NPROC=2$' &&
		has "$log" 'gpin-init: exit status 0' || return 1
	# A default boot says nothing alarming (a PC without a PCI host
	# bridge made Linux print "PCI: Fatal: No config space access
	# function found"; the XSAVE warning is TCG's, docs/RIG.md).
	if has "$log" 'PCI: Fatal\|BUG: \|Oops'; then
		echo "# an alarming line on a default boot:"
		tr -d '\r' <"$log" | grep 'PCI: Fatal\|BUG: \|Oops' | sed 's/^/#   /'
		return 1
	fi
}

case_cpus3() {
	local log=$OUT/boot-cpus3.log
	boot cpus3 0 "$log" 3 "quiet gpin.workload=nproc" &&
		has "$log" '^GUEST_NPROC=3$'
}

case_fail() {
	boot fail 7 "$OUT/boot-fail.log" 2 "quiet gpin.workload=fail"
}

case_poweroff() {
	local log=$OUT/boot-poweroff.log
	boot poweroff 0 "$log" 2 "quiet gpin.sh=$(b64 'echo powering off; poweroff -f')" &&
		has "$log" 'powering off' &&
		! has "$log" 'gpin-init: exit status'
}

case_reboot() {
	local log=$OUT/boot-reboot.log
	boot reboot 0 "$log" 2 "quiet gpin.sh=$(b64 'echo rebooting; reboot -f')" &&
		has "$log" 'rebooting' &&
		! has "$log" 'gpin-init: exit status'
}

case_panic() {
	local log=$OUT/boot-panic.log
	boot panic 3 "$log" 2 "quiet gpin.sh=$(b64 'echo c >/proc/sysrq-trigger')" &&
		has "$log" 'guest kernel panicked'
}

# Runs in the test host, chrooted into the CI host's root.
inside() {
	VMM=$1 VMLINUZ=$2 INITRD=$3
	OUT=${RIG_OUT:-/tmp}
	[[ -c /dev/kvm ]] || { tap_not_ok "no /dev/kvm in the test host"; return 1; }
	echo "# test host $(uname -r), $(nproc) CPUs; guest $VMLINUZ"
	run_cases nproc cpus3 fail poweroff reboot panic
}

if [[ ${1:-} == --inside ]]; then
	shift
	inside "$@"
else
	guest_test_main "$HERE/test-vmm-boot.sh" $((8 * GUEST_TIMEOUT)) "$@"
fi
