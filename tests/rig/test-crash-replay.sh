#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Nothing acknowledged is lost (issue 32): in the rig's test host the disk
# gpin-vmm serves is a dm-log-writes device over a ramdisk (brd), logging
# every write, in the order it reached stable storage, to a second one.
# The guest makes nothing of it: it mounts the ext4 the test host made and
# runs three writers at once, each creating, renaming, rewriting and
# unlinking files, fsyncing files and directories, and after every fsync
# of a file appending "NAME SHA256" to /LEDGER and fsyncing that (so the
# ledger vouches only for what was fsynced before it).  Then the test host
# replays the log onto an image of the disk as it was when logging began,
# to every FLUSH/FUA point after the mkfs (at most $POINTS of them, evenly
# spread), and at each one: e2fsck finds nothing once the journal is
# replayed, and every file the ledger names is there with its content
# (tests/lib/gpintest/crashcheck.py, logwrites.py).
#   replay_fast, replay_locked, replay_kernel, replay_registered
#              the same with each pin mode, on virtio-pci with two queues
#   replay_mmio
#              pin=fast on virtio-mmio
#
# Usage: tests/rig/test-crash-replay.sh GPIN_VMM [6.1|6.12|VER] [CASE,...]
# Environment: GPIN_CRASH_POINTS (default 60) points per case.
# Output: TAP.  Not in the Meson suites yet: it has not run to its end.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
readonly HERE TOP
readonly GUEST_TIMEOUT=600
readonly DISK_MB=64 LOG_MB=1024
readonly POINTS=${GPIN_CRASH_POINTS:-60}

# shellcheck source=tests/rig/guest-test-lib.sh
. "$HERE/guest-test-lib.sh"

# The guest's writers: WORKER N ITERATIONS.  Each file's content is new
# random bytes.  The ledger (the line format is crashcheck.py's) says what
# was made durable: PUT after the file's fsync, MV before a rename and
# MOVED after both directories' fsyncs, RM before an unlink; every line
# is appended in one write and fsynced before the worker goes on.
# shellcheck disable=SC2016 # expanded in the guest
GUEST_WORK='set -e
mount -t ext4 /dev/vda /mnt
note() {
	echo "$*" >>/mnt/LEDGER
	sync /mnt/LEDGER
}
worker() {
	w=w$1
	mkdir -p /mnt/$w/a /mnt/$w/b
	sync /mnt/$w/a /mnt/$w/b /mnt/$w /mnt
	i=0
	while [ $i -lt $2 ]; do
		f=$w/a/f$i g=$w/b/g$i
		dd if=/dev/urandom of=/mnt/$f bs=4k count=$((i % 7 + 1)) 2>/dev/null
		sync /mnt/$f
		note PUT $f $(sha256sum /mnt/$f | cut -d" " -f1)
		if [ $((i % 3)) -eq 0 ]; then
			note MV $f $g
			mv /mnt/$f /mnt/$g
			sync /mnt/$w/b /mnt/$w/a
			note MOVED $f $g
		fi
		old=$w/a/f$((i - 4))
		if [ $((i % 5)) -eq 4 ] && [ -e /mnt/$old ]; then
			note RM $old
			rm /mnt/$old
		fi
		i=$((i + 1))
	done
}
worker 1 40 & worker 2 40 & worker 3 40 &
wait
echo GUEST ledger $(wc -l </mnt/LEDGER) lines
umount /mnt
exit 0'

# One case: a fresh logged disk, the guest's work with --disk WORDS, the
# replay checks.
replay_case() {
	local name=$1 words=$2 log=$OUT/crash-$1.log rc=0
	local table
	dmsetup remove lw 2>/dev/null || true
	dd if=/dev/zero of=/dev/ram0 bs=1M count=$DISK_MB 2>/dev/null
	dd if=/dev/zero of=/dev/ram1 bs=1M count=4 2>/dev/null
	table="0 $((DISK_MB * 2048)) log-writes /dev/ram0 /dev/ram1"
	DM_DISABLE_UDEV=1 dmsetup create lw --noudevsync --table "$table" ||
		{ echo "# dmsetup create failed"; return 1; }
	mkfs.ext4 -q -F /dev/mapper/lw || return 1
	dmsetup message lw 0 mark mkfs
	boot_until_alive "crash-$name" 0 "$GUEST_TIMEOUT" "$log" "$VMM" \
		--test-exit-port --kernel "$VMLINUZ" --initrd "$INITRD" \
		--cpus 2 --mem 512M --disk "/dev/mapper/lw$words" \
		--params "console=ttyS0 quiet gpin.sh=$(b64 "$GUEST_WORK")" || rc=$?
	grep -a '^GUEST\|^gpin-vmm: blk' "$log" | tr -d '\r' | sed 's/^/#   /' || true
	DM_DISABLE_UDEV=1 dmsetup remove --noudevsync lw || rc=1
	((rc == 0)) || { echo "# the guest's work: status $rc"; return 1; }
	PYTHONPATH="$TOP/tests/lib" python3 -m gpintest.crashcheck \
		--log /dev/ram1 --size $((DISK_MB << 20)) --mark mkfs \
		--points "$POINTS" --work "$OUT/crash-$name" | sed 's/^/# /'
	return "${PIPESTATUS[0]}"
}

case_replay_fast() { replay_case fast ",pin=fast,transport=pci,queues=2"; }
case_replay_locked() { replay_case locked ",pin=locked,transport=pci,queues=2"; }
case_replay_kernel() { replay_case kernel ",pin=kernel,transport=pci,queues=2"; }
case_replay_registered() {
	replay_case registered ",pin=registered,transport=pci,queues=2"
}
case_replay_mmio() { replay_case mmio ",pin=fast,transport=mmio"; }

# Runs in the test host, chrooted into the CI host's root.
inside() {
	VMM=$1 VMLINUZ=$2 INITRD=$3
	local cases=${4:-replay_fast,replay_locked,replay_kernel,replay_registered,replay_mmio}
	OUT=${RIG_OUT:-/tmp}
	[[ -c /dev/kvm ]] || { tap_not_ok "no /dev/kvm in the test host"; return 1; }
	modprobe -d "$RIG_MODDIR" brd rd_nr=2 rd_size=$((LOG_MB * 1024)) ||
		{ tap_not_ok "brd does not load"; return 1; }
	modprobe -d "$RIG_MODDIR" dm_log_writes ||
		{ tap_not_ok "dm-log-writes does not load"; return 1; }
	echo "# test host $(uname -r); disk $DISK_MB MiB on ram0, log on ram1"
	# shellcheck disable=SC2086 # one word per case, by design
	run_cases ${cases//,/ }
}

# gpin.ko for the test host's kernel; room for two ramdisks.
guest_test_rig_args() {
	rig_args_gpin_ko "$1"
	printf '%s\n' --mem 6G --env "GPIN_CRASH_POINTS=$POINTS"
}

if [[ ${1:-} == --inside ]]; then
	shift
	inside "$@"
else
	guest_test_main "$HERE/test-crash-replay.sh" $((8 * GUEST_TIMEOUT)) "$@"
fi
