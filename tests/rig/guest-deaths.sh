#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# How often do gpin-vmm's guests die in the rig's test host?  A diagnostic,
# not a test (docs/RIG.md, "Guests died under I/O load"): boots the guest
# BOOTS times, each running fio 4K randread at iodepth 32 with 2 jobs for
# RUNTIME seconds on a memory-backed null_blk, and counts the boots that
# ended in a triple fault, a double fault, a stall or a hang.  `perf record
# -a` in the test host (PERF_HZ, 0 for none) adds sampling interrupts, which
# made deaths frequent enough to compare settings in minutes.
#
# Usage: tests/rig/guest-deaths.sh GPIN_VMM [6.1|6.12|VER] [RIG OPTION...]
#   e.g. tests/rig/guest-deaths.sh build/vmm/gpin-vmm 6.1 --append kvm_amd.npt=1
#        (nested paging back on: about half of the boots died)
# Environment: BOOTS (6), RUNTIME (20), PERF_HZ (999), PIN (kernel; fast or
# locked need gpin.ko: pass --insmod), TRANSPORT (pci).
# Exit: 0 no guest died, 1 some did, 77 skipped (reason printed).

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
readonly HERE TOP

# shellcheck source=tests/rig/guest-test-lib.sh
. "$HERE/guest-test-lib.sh"

inside() {
	local vmm=$1 vmlinuz=$2 initrd=$3 n log rc died=0 why script
	modprobe -d "$RIG_MODDIR" null_blk nr_devices=1 memory_backed=1 gb=1 \
		bs=512
	script="fio --name=r --filename=/dev/vda --direct=1 --ioengine=libaio \
--rw=randread --bs=4k --iodepth=32 --numjobs=2 --size=128M \
--offset_increment=128M --time_based --runtime=$RUNTIME >/dev/null 2>&1; \
echo FIO-DONE"
	echo "# $(tr -d '\r' </proc/cmdline)"
	if ((PERF_HZ > 0)); then
		perf record -a -F "$PERF_HZ" -q -o "$RIG_OUT/perf.data" \
			>/dev/null 2>&1 &
	fi
	for ((n = 1; n <= BOOTS; n++)); do
		log=$RIG_OUT/boot-$n.log
		rc=0
		run_vmm $((RUNTIME + 240)) "$log" "$vmm" --test-exit-port \
			--kernel "$vmlinuz" --initrd "$initrd" --cpus 2 --mem 512M \
			--disk "/dev/nullb0,pin=$PIN,transport=$TRANSPORT" \
			--params "console=ttyS0 quiet gpin.sh=$(b64 "$script")" ||
			rc=$?
		why=$("$TOP/tests/lib/deaths" classify --log "$log" --status "$rc")
		[[ -z $why ]] && ! has "$log" FIO-DONE && why="status $rc, no fio result"
		[[ -n $why ]] && died=$((died + 1))
		echo "boot $n: ${why:-fine}"
	done
	echo "guest deaths: $died of $BOOTS boots"
	((died == 0))
}

if [[ ${1:-} == --inside ]]; then
	shift
	inside "$@"
	exit
fi
export BOOTS=${BOOTS:-6} RUNTIME=${RUNTIME:-20} PERF_HZ=${PERF_HZ:-999}
export PIN=${PIN:-kernel} TRANSPORT=${TRANSPORT:-pci}
vmm=${1:?usage: $0 GPIN_VMM [KERNEL] [RIG OPTION...]} kernel=${2:-6.1}
shift $(($# < 2 ? $# : 2))
vmm=$(realpath "$vmm")
((EUID == 0)) || tap_skip_all "the rig needs root"
img=$("$TOP/guest-images/build-guest" "$kernel") || tap_skip_all "no $kernel guest image"
KVER='' VMLINUZ='' INITRD=''
eval "$img"
exec "$HERE/rig" --kernel "$KVER" --timeout $((BOOTS * (RUNTIME + 300))) \
	--env BOOTS="$BOOTS" --env RUNTIME="$RUNTIME" --env PERF_HZ="$PERF_HZ" \
	--env PIN="$PIN" --env TRANSPORT="$TRANSPORT" "$@" -- \
	"$HERE/guest-deaths.sh" --inside "$vmm" "$VMLINUZ" "$INITRD"
