#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Proves the guest image (guest-images/build-guest) with QEMU, independently
# of gpin-vmm: inside the rig's test host, QEMU on the test host's kvm-amd
# boots the Debian kernel with the guest initramfs and
#   gpin.workload=nproc  must print GUEST_NPROC=2 and exit through the
#                        isa-debug-exit device at 0x501 with (0<<1)|1 = 1;
#   gpin.workload=fail   must exit with (7<<1)|1 = 15.
# Both boot with `quiet`: what counts is userspace output and the status
# path, and every console byte is an emulated I/O exit (a loaded CI machine
# took over 5 minutes to print a verbose boot).
#
# A guest that dies (TCG's nested SVM, docs/RIG.md) boots again as the
# death policy allows (boot_until_alive, tests/lib/gpintest/deaths.py).
#
# Usage: tests/rig/test-guest-image-qemu.sh [6.1|6.12|VER]   (default 6.1)
# Output: TAP.  Run it on the CI host; it starts the rig itself (and,
# inside, runs itself again with --inside).

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
readonly HERE TOP
readonly GUEST_TIMEOUT=600

# shellcheck source=tests/rig/guest-test-lib.sh
. "$HERE/guest-test-lib.sh"

# One guest boot under QEMU.  Args: workload expected-qemu-status log.
boot_guest() {
	local workload=$1 want=$2 log=$3 rc=0 t0=$SECONDS
	boot_until_alive "$workload" "$want" "$GUEST_TIMEOUT" "$log" \
		qemu-system-x86_64 -accel kvm -cpu host -smp 2 -m 512 \
		-nographic -no-reboot -kernel "$VMLINUZ" -initrd "$INITRD" \
		-append "console=ttyS0 quiet gpin.workload=$workload" \
		-device isa-debug-exit,iobase=0x501,iosize=1 || rc=$?
	echo "# guest $workload: qemu status $rc (want $want), $((SECONDS - t0)) s"
	if ((rc != want)); then
		tail -n 20 "$log" | tr -d '\r' | sed 's/^/#   /'
		return 1
	fi
}

case_nproc() {
	local log=$RIG_OUT/guest-nproc.log
	boot_guest nproc 1 "$log" || return 1
	# Not anchored: with `quiet`, SeaBIOS's screen-clearing escapes share
	# the line with the guest's first output.
	has "$log" 'GUEST_NPROC=2' || { echo "# no GUEST_NPROC=2 in $log"; return 1; }
}

case_fail() {
	boot_guest fail 15 "$RIG_OUT/guest-fail.log"
}

main() {
	if [[ ${1:-} == --inside ]]; then
		VMLINUZ=$2 INITRD=$3
		[[ -c /dev/kvm ]] || { echo "Bail out! no /dev/kvm in the test host"; exit 1; }
		run_cases nproc fail
		return
	fi
	local kernel=${1:-6.1} img
	command -v qemu-system-x86_64 >/dev/null || tap_skip_all "qemu-system-x86_64 not installed"
	((EUID == 0)) || tap_skip_all "the rig needs root (mknod, apt, /var/cache)"
	img=$("$TOP/guest-images/build-guest" "$kernel") ||
		{ echo "Bail out! building the $kernel guest image failed"; exit 1; }
	local KVER='' VMLINUZ='' INITRD=''
	eval "$img"
	echo "# guest image: $KVER $INITRD"
	"$HERE/rig" --kernel "$KVER" --timeout $((4 * GUEST_TIMEOUT)) -- \
		"$HERE/test-guest-image-qemu.sh" --inside "$VMLINUZ" "$INITRD" |
		tap_after_rerun
	return "${PIPESTATUS[0]}"
}

main "$@"
