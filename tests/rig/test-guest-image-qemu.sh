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
# Usage: tests/rig/test-guest-image-qemu.sh [6.1|6.12|VER]   (default 6.1)
# Exit: 0 pass, 1 fail, 77 skipped (reason printed).  Run it on the CI host;
# it starts the rig itself (and, inside, runs itself again with --inside).

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
readonly HERE TOP
readonly EX_SKIP=77
readonly GUEST_TIMEOUT=600

skip() {
	echo "SKIP: $*"
	exit "$EX_SKIP"
}

# One guest boot.  Args: vmlinuz initrd workload expected-qemu-status log
# [extra kernel arguments].
boot_guest() {
	local vmlinuz=$1 initrd=$2 workload=$3 want=$4 log=$5 extra=${6:-} rc t0
	t0=$(date +%s.%N)
	set +e
	timeout "$GUEST_TIMEOUT" qemu-system-x86_64 -accel kvm -cpu host -smp 2 -m 512 \
		-nographic -no-reboot -kernel "$vmlinuz" -initrd "$initrd" \
		-append "console=ttyS0 gpin.workload=$workload${extra:+ $extra}" \
		-device isa-debug-exit,iobase=0x501,iosize=1 </dev/null >"$log" 2>&1
	rc=$?
	set -e
	printf 'guest %s%s: qemu status %d (want %d), %.1f s wall\n' "$workload" \
		"${extra:+ ($extra)}" "$rc" "$want" "$(echo "$(date +%s.%N) - $t0" | bc)"
	if ((rc != want)); then
		echo "FAIL: guest $workload: qemu status $rc, want $want; last lines of $log:"
		tail -n 20 "$log" | tr -d '\r'
		return 1
	fi
}

# Runs in the test host (chrooted into the CI host's root).
inside() {
	local vmlinuz=$1 initrd=$2 log=${RIG_OUT:-/tmp}/guest-nproc.log
	[[ -c /dev/kvm ]] || { echo "FAIL: no /dev/kvm in the test host"; return 1; }
	boot_guest "$vmlinuz" "$initrd" nproc 1 "$log" quiet
	# Not anchored: with `quiet`, SeaBIOS's screen-clearing escapes share
	# the line with the guest's first output.
	grep -q 'GUEST_NPROC=2' <(tr -d '\r' <"$log") ||
		{ echo "FAIL: no GUEST_NPROC=2 in $log"; tail -n 20 "$log"; return 1; }
	echo "guest printed: $(tr -d '\r' <"$log" | grep '^GUEST_NPROC=')"
	boot_guest "$vmlinuz" "$initrd" fail 15 "${RIG_OUT:-/tmp}/guest-fail.log" quiet
	echo "PASS"
}

main() {
	if [[ ${1:-} == --inside ]]; then
		inside "$2" "$3"
		return
	fi
	local kernel=${1:-6.1} img
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed"
	((EUID == 0)) || skip "the rig needs root (mknod, apt, /var/cache)"
	"$TOP/scripts/kernel-pkg" "$kernel" >/dev/null ||
		skip "no Debian $kernel kernel available through apt"

	img=$("$TOP/guest-images/build-guest" "$kernel")
	local KVER='' VMLINUZ='' INITRD=''
	eval "$img"
	echo "guest image: $KVER $INITRD"
	"$HERE/rig" --kernel "$KVER" --timeout $((3 * GUEST_TIMEOUT)) -- \
		"$HERE/test-guest-image-qemu.sh" --inside "$VMLINUZ" "$INITRD"
}

main "$@"
