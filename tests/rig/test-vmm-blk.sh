#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# gpin-vmm's virtio-blk in a Linux guest: inside the rig's test host
# (tests/rig/rig), a memory-backed null_blk device is the backing, and
# each case boots the Debian guest with --disk and checks what the guest
# and then the test host see:
#   fio-ext4   --cpus 2 (two queues): fio randwrite + crc32c verify,
#              numjobs=2, O_DIRECT; then files and their sha256 sums
#              written into a new ext4 by mkfs.ext4 -d (the guest image
#              has no ext4 module to mount one), sync.  In the test host: the
#              filesystem is clean (e2fsck -fn) and the files' checksums
#              match; both queues served requests (the VMM's counters)
#   iothread   the same fio verify with service=iothread, queues=2
#   verify-kernel, verify-fast, verify-locked, verify-registered
#              the same fio verify with pin=kernel, pin=fast, pin=locked
#              and pin=registered (gpin.ko's async DIO; skipped when the
#              module could not be built or loaded); for the gpin modes,
#              the module's counters (the VMM's exit line, taken from
#              GPIN_IOC_STATS) show DIO requests in that mode, for fast
#              no fallback to the locked path, for registered guest RAM
#              pinned once and (next to) no pin call per request;
#              verify-registered-mmio the same on virtio-mmio
#   registered-memlock
#              pin=registered with RLIMIT_MEMLOCK under guest RAM and no
#              CAP_IPC_LOCK: gpin-vmm refuses to start, naming the limit,
#              and nothing stays pinned
#   ro         ,ro: the guest sees a read-only disk, reads work, writes
#              fail; the backing is unchanged
#   ioerr      device-mapper: 1 MiB linear then an `error` target; the
#              guest's reads in the error zone fail, good reads go on
#              working, the VMM reports the error and exits with the
#              guest's status
#   pci, pci_iothread
#              the same fio verify with transport=pci (service=vcpu, then
#              service=iothread): the guest found the disk on PCI bus 0 with
#              2 queues, both queues served requests, and the guest's
#              /proc/interrupts shows an MSI-X vector per queue
#              (virtio0-req.0, virtio0-req.1) that fired
#   memory     the same fio verify on the default disk, while
#              tests/bench/vmm-memory samples the VMM's smaps: once the
#              boot images are unmapped, its memory beyond guest RAM stays
#              under 16 MiB (the goal, 5 MiB, is a benchmark's; this
#              catches a regression such as holding the images again,
#              which cost 42 MiB)
#
# Usage: tests/rig/test-vmm-blk.sh GPIN_VMM [6.1|6.12|VER] [CASE,...]
#   kernel default 6.1; cases (default all): fio_ext4, iothread,
#   verify_kernel, verify_fast, verify_locked, verify_registered,
#   verify_registered_mmio, registered_memlock, ro, ioerr, pci,
#   pci_iothread, memory
# Output: TAP.  Exit: 0 pass, 1 fail, 77 skipped.  It builds gpin.ko for
# the guest kernel's release (in ${GPIN_PIN_BUILDDIR:-build-pin}/<ver>/),
# starts the rig with it inserted and runs itself again inside with
# --inside.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
readonly HERE TOP
# A guest's fio and mkfs take under a minute in the test host.
readonly GUEST_TIMEOUT=240
readonly NULLB_GB=1

# shellcheck source=tests/rig/guest-test-lib.sh
. "$HERE/guest-test-lib.sh"

# One boot, again if the guest died (boot_until_alive: the death policy).
# Args: name want-status log disk-option guest-script.
boot() {
	local name=$1 want=$2 log=$3 disk=$4 script=$5 rc=0 t0
	t0=$SECONDS
	boot_until_alive "$name" "$want" "$GUEST_TIMEOUT" "$log" "$VMM" \
		--test-exit-port --kernel "$VMLINUZ" --initrd "$INITRD" --cpus 2 --mem 512M \
		--disk "$disk" \
		--params "console=ttyS0 quiet gpin.sh=$(b64 "$script")" || rc=$?
	echo "# $name: status $rc (want $want), $((SECONDS - t0)) s"
	grep -a '^gpin-vmm: \(blk\|vcpu\)\|^GUEST' "$log" | tr -d '\r' |
		sed 's/^/#   /' || true
	if ((rc != want)); then
		echo "# last lines of $log:"
		tail -n 30 "$log" | tr -d '\r' | sed 's/^/#   /'
		return 1
	fi
}

# Guest side of a fio write+verify over /dev/vda, two jobs on separate
# regions; status 11 when fio or its verify fails.
FIO_VERIFY='fio --name=verify --filename=/dev/vda --direct=1 --ioengine=libaio \
	--rw=randwrite --bs=4k --iodepth=8 --numjobs=2 --size=8M \
	--offset_increment=256M --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--group_reporting --eta=never >/tmp/fio.log 2>&1 ||
	{ tail -n 20 /tmp/fio.log; exit 11; }
grep -E "IOPS|err=" /tmp/fio.log | sed "s/^/GUEST fio: /"'

case_fio_ext4() {
	local log=$OUT/blk-fio-ext4.log dir=/tmp/gpin-blk-files
	local script="set -e
[ -b /dev/vda ] || { echo GUEST no /dev/vda; exit 10; }
echo GUEST queues=\$(ls /sys/block/vda/mq | wc -l) ro=\$(cat /sys/block/vda/ro)
$FIO_VERIFY
mkdir -p /tmp/files
for i in 1 2 3; do dd if=/dev/urandom of=/tmp/files/file\$i bs=64k count=\$((i * 8)) 2>/dev/null; done
(cd /tmp/files && sha256sum file1 file2 file3 >SUMS)
sed 's/^/GUEST sum /' /tmp/files/SUMS
mkfs.ext4 -q -F -d /tmp/files /dev/vda || exit 12
sync
exit 0"
	boot fio-ext4 0 "$log" "$NULLB" "$script" || return 1
	has "$log" '^GUEST queues=2 ro=0' || { echo "# guest saw no 2-queue disk"; return 1; }
	if ! has "$log" '^gpin-vmm: blk0-q0: [1-9]' ||
		! has "$log" '^gpin-vmm: blk0-q1: [1-9]'; then
		echo "# a queue served no request"
		return 1
	fi
	e2fsck -fn "$NULLB" >"$OUT/e2fsck.log" 2>&1 ||
		{ echo "# e2fsck found errors:"; sed 's/^/#   /' "$OUT/e2fsck.log"; return 1; }
	# debugfs reads the files without the test host mounting anything.
	mkdir -p "$dir"
	for f in file1 file2 file3 SUMS; do
		debugfs -R "dump /$f $dir/$f" "$NULLB" >/dev/null 2>&1 || return 1
	done
	(cd "$dir" && sha256sum -c SUMS) >"$OUT/sums.log" 2>&1
	local rc=$?
	sed 's/^/#   host: /' "$OUT/sums.log"
	return $rc
}

case_iothread() {
	local log=$OUT/blk-iothread.log
	boot iothread 0 "$log" "$NULLB,service=iothread,queues=2" \
		"set -e; $FIO_VERIFY" || return 1
	has "$log" '^gpin-vmm: blk0-q0: [1-9]' && ! has "$log" 'I/O error'
}

# fio verify with pin=$1; for the gpin modes, the module's counters.
case_verify() {
	local pin=$1 extra=${2:-} log line reqs fb calls
	log=$OUT/blk-verify-$pin$extra.log
	if [[ $pin != kernel && ! -c /dev/gpin ]]; then
		echo "# no /dev/gpin in the test host: skipping pin=$pin"
		return 77
	fi
	boot "verify-$pin$extra" 0 "$log" "$NULLB,pin=$pin$extra" \
		"set -e; $FIO_VERIFY" ||
		return 1
	has "$log" "^gpin-vmm: blk0: .*pin=$pin," ||
		{ echo "# the disk did not start with pin=$pin"; return 1; }
	has "$log" '^gpin-vmm: blk0-q1: [1-9]' && ! has "$log" 'I/O error' ||
		return 1
	[[ $pin == kernel ]] && return 0
	# "gpin-vmm: blk0: gpin.ko pin=fast: N DIO requests, C pin calls,
	#  F fallbacks, W us mmap_lock wait"
	line=$(tr -d '\r' <"$log" | grep "^gpin-vmm: blk0: gpin.ko pin=$pin:") ||
		{ echo "# no module counters in the VMM's output"; return 1; }
	reqs=$(sed 's/.*: \([0-9]*\) DIO requests.*/\1/' <<<"$line")
	fb=$(sed 's/.* \([0-9]*\) fallbacks.*/\1/' <<<"$line")
	echo "# module: $reqs $pin-mode DIO requests, $fb fallbacks"
	# the same counters through the running VM's interface (vm.counters,
	# SIGUSR1), printed once more at exit
	has "$log" "^gpin-vmm: blk0-gpin: dio_requests [1-9][0-9]*, .*pin_fallbacks $fb," ||
		{ echo "# no blk0-gpin counter line"; return 1; }
	((reqs > 1000)) || { echo "# too few $pin-mode DIO requests"; return 1; }
	if [[ $pin == fast ]] && ((fb != 0)); then
		echo "# the fast walk fell back to the locked path"
		return 1
	fi
	[[ $pin == registered ]] || return 0
	# guest RAM pinned once; a request pins only what no one pin holds
	# (a bounce buffer, a buffer across two 1 GiB pins): next to none
	has "$log" '^gpin-vmm: pin=registered: 512 MiB of guest RAM pinned once' ||
		{ echo "# guest RAM was not registered"; return 1; }
	calls=$(sed 's/.* \([0-9]*\) pin calls.*/\1/' <<<"$line")
	echo "# module: $calls pin calls for $reqs requests"
	((calls * 100 <= reqs)) ||
		{ echo "# registered requests did pin work"; return 1; }
}

case_verify_kernel() { case_verify kernel; }
case_verify_fast() { case_verify fast; }
case_verify_locked() { case_verify locked; }
case_verify_registered() { case_verify registered; }
case_verify_registered_mmio() { case_verify registered ,transport=mmio; }

# gpin.ko's pages pinned now, all files together (gpin-stat, built
# beside gpin-vmm).
gpin_live_pages() {
	"$(dirname "$VMM")/../pin/gpin-stat" |
		sed -n 's/^live_pages \([0-9]*\) .*/\1/p'
}

# pin=registered past RLIMIT_MEMLOCK, without CAP_IPC_LOCK (root's
# bounding set without it): gpin-vmm refuses to start, saying why, before
# the guest runs, and leaves nothing pinned.
case_registered_memlock() {
	local log=$OUT/blk-registered-memlock.log rc=0
	[[ -c /dev/gpin ]] || { echo "# no /dev/gpin in the test host"; return 77; }
	(
		ulimit -l 65536
		exec setpriv --bounding-set=-ipc_lock "$VMM" --kernel "$VMLINUZ" \
			--initrd "$INITRD" --mem 512M --disk "$NULLB,pin=registered"
	) </dev/null >"$log" 2>&1 || rc=$?
	sed 's/^/#   /' "$log" | head -n 5
	((rc == 1)) || { echo "# status $rc, not 1"; return 1; }
	has "$log" 'pin=registered: pinning 512 MiB of guest RAM (charged to VmPin) goes past RLIMIT_MEMLOCK, 65536 KiB' ||
		{ echo "# no RLIMIT_MEMLOCK refusal"; return 1; }
	[[ $(gpin_live_pages) == 0 ]] ||
		{ echo "# pages left pinned: $(gpin_live_pages)"; return 1; }
}

case_ro() {
	local log=$OUT/blk-ro.log before after
	before=$(head -c 1048576 "$NULLB" | sha256sum)
	boot ro 0 "$log" "$NULLB,ro" "
[ \"\$(cat /sys/block/vda/ro)\" = 1 ] || { echo GUEST not ro; exit 20; }
dd if=/dev/vda of=/dev/null bs=4k count=256 iflag=direct 2>/dev/null || exit 21
if dd if=/dev/zero of=/dev/vda bs=4k count=1 oflag=direct 2>/dev/null; then
	echo GUEST write succeeded; exit 22
fi
echo GUEST write refused
exit 0" || return 1
	has "$log" '^GUEST write refused' || return 1
	after=$(head -c 1048576 "$NULLB" | sha256sum)
	[[ $before == "$after" ]] || { echo "# backing changed"; return 1; }
}

case_ioerr() {
	local log=$OUT/blk-ioerr.log dm=gpin-blk-err
	if ! modprobe -d "$RIG_MODDIR" dm-mod 2>/dev/null; then
		echo "# dm-mod does not load: skipping"
		return 77
	fi
	# 1 MiB of the null_blk, then 1 MiB that fails every I/O.
	DM_DISABLE_UDEV=1 dmsetup create "$dm" --noudevsync --table \
		"0 2048 linear $NULLB 0
2048 2048 error" || return 1
	boot ioerr 5 "$log" "/dev/mapper/$dm" "
dd if=/dev/vda of=/dev/null bs=4k count=256 iflag=direct 2>/dev/null || exit 30
if dd if=/dev/vda of=/dev/null bs=4k skip=300 count=1 iflag=direct 2>/dev/null; then
	echo GUEST bad read succeeded; exit 31
fi
if dd if=/dev/zero of=/dev/vda bs=4k seek=300 count=1 oflag=direct 2>/dev/null; then
	echo GUEST bad write succeeded; exit 32
fi
dd if=/dev/vda of=/dev/null bs=4k count=16 iflag=direct 2>/dev/null || exit 33
echo GUEST errors seen, disk still usable
exit 5"
	local rc=$?
	DM_DISABLE_UDEV=1 dmsetup remove --noudevsync "$dm" || true
	((rc == 0)) && has "$log" '^GUEST errors seen' &&
		has "$log" 'gpin-vmm: blk0-q[0-9]: I/O error'
}

# How often the guest's interrupt $2 fired, from the "GUEST irq:" copy of
# its /proc/interrupts in log $1: the per-CPU counts after "NN:".
irq_count() {
	PYTHONPATH="$TOP/tests/lib" python3 -m gpintest.guestirqs "$1" "$2"
}

# fio verify on a virtio-pci disk ($1: extra --disk options), then the
# guest's view: the disk's sysfs path (PCI bus 0) and its interrupts.
case_pci_with() {
	local name=$1 opts=$2 log=$OUT/blk-$1.log q n
	local script="set -e
[ -b /dev/vda ] || { echo GUEST no /dev/vda; exit 10; }
echo GUEST queues=\$(ls /sys/block/vda/mq | wc -l) path=\$(readlink -f /sys/block/vda)
$FIO_VERIFY
grep -E 'MSI|virtio' /proc/interrupts | sed 's/^/GUEST irq: /'
echo GUEST msi_irqs: \$(cat /sys/bus/pci/devices/*/msi_irqs/* | sort | uniq -c)
exit 0"
	boot "$name" 0 "$log" "$NULLB,transport=pci$opts" "$script" || return 1
	has "$log" '^GUEST queues=2 path=/sys/devices/pci0000:00/' ||
		{ echo "# guest saw no 2-queue disk on PCI bus 0"; return 1; }
	if ! has "$log" '^gpin-vmm: blk0-q0: [1-9]' ||
		! has "$log" '^gpin-vmm: blk0-q1: [1-9]'; then
		echo "# a queue served no request"
		return 1
	fi
	# 6.1 names MSI and MSI-X both PCI-MSI; msi_irqs/N tells them apart.
	has "$log" '^GUEST msi_irqs: 3 msix$' ||
		{ echo "# not 3 MSI-X vectors (config + 2 queues)"; return 1; }
	for q in 0 1; do
		has "$log" "^GUEST irq: .*MSI.*virtio0-req\.$q\$" ||
			{ echo "# no MSI-X vector for queue $q"; return 1; }
		n=$(irq_count "$log" "virtio0-req.$q")
		echo "# virtio0-req.$q: $n interrupts"
		((n > 0)) || { echo "# queue $q's vector never fired"; return 1; }
	done
	! has "$log" 'I/O error'
}

# What the VMM holds beyond guest RAM, sampled while the guest works.
readonly MEM_LIMIT_KIB=$((16 * 1024))
case_memory() {
	local log=$OUT/blk-memory.log rc=0 sampler
	"$TOP/tests/bench/vmm-memory" --name gpin-vmm --ram $((512 << 20)) \
		--image "$VMLINUZ" --image "$INITRD" --json "$OUT/memory.json" \
		--limit-kib "$MEM_LIMIT_KIB" >"$OUT/memory.txt" 2>&1 &
	sampler=$!
	boot memory 0 "$log" "$NULLB" "set -e; $FIO_VERIFY" || rc=1
	wait "$sampler" || rc=1
	sed 's/^/# /' "$OUT/memory.txt"
	return "$rc"
}

case_pci() { case_pci_with pci ""; }
case_pci_iothread() { case_pci_with pci-iothread ",service=iothread,queues=2"; }

# Runs in the test host, chrooted into the CI host's root.
inside() {
	VMM=$1 VMLINUZ=$2 INITRD=$3
	local cases=${4:-fio_ext4,iothread,verify_kernel,verify_fast,verify_locked,verify_registered,verify_registered_mmio,registered_memlock,ro,ioerr,pci,pci_iothread,memory}
	OUT=${RIG_OUT:-/tmp}
	[[ -c /dev/kvm ]] || { tap_not_ok "no /dev/kvm in the test host"; return 1; }
	modprobe -d "$RIG_MODDIR" null_blk nr_devices=1 memory_backed=1 \
		gb=$NULLB_GB bs=512 ||
		{ tap_not_ok "null_blk does not load"; return 1; }
	NULLB=/dev/nullb0
	[[ -b $NULLB ]] || { tap_not_ok "no $NULLB"; return 1; }
	echo "# test host $(uname -r), $(nproc) CPUs; guest $VMLINUZ; backing $NULLB"
	if [[ -c /dev/gpin ]]; then
		echo "# gpin.ko loaded: the default pin mode is fast"
	else
		echo "# no gpin.ko: the default pin mode is kernel"
	fi
	# shellcheck disable=SC2086 # one word per case, by design
	run_cases ${cases//,/ }
}

# gpin.ko for the test host's kernel (the guest's kernel is the same).
guest_test_rig_args() {
	rig_args_gpin_ko "$1"
}

if [[ ${1:-} == --inside ]]; then
	shift
	inside "$@"
else
	guest_test_main "$HERE/test-vmm-blk.sh" $((6 * GUEST_TIMEOUT)) "$@"
fi
