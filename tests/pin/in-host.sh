#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the rig's test host (gpin.ko already loaded by --insmod):
# the Check tests, then an unload (which WARNs if a page is still pinned),
# then a look at the kernel log.  Exit: the tests' status, 1 when the log
# shows BUG/WARNING/Oops, 77 when the test binary says skip.
#   in-host.sh TEST_BINARY
set -u
bin=$1

dmesg -c >/dev/null 2>&1 || true
if [ -n "${GPIN_BATCH:-}" ]; then
	echo "$GPIN_BATCH" >/sys/module/gpin/parameters/batch || exit 1
fi
echo "# kernel $(uname -r), gpin batch $(cat /sys/module/gpin/parameters/batch 2>/dev/null)"
mkdir -p /sys/kernel/debug 2>/dev/null
mount -t debugfs none /sys/kernel/debug 2>/dev/null || true

# Block devices: brd ramdisk 0 carries ext4 (the file-backed pin test, the
# DIO file target), ramdisk 1 is the raw DIO target, 2 the slow dm targets,
# 3 the filesystem that fsfreeze freezes, 4 the path of a dm multipath
# device; a memory-backed null_blk whose requests complete from a 200 us
# timer (interrupt context, after the submitter returned) is the
# asynchronous DIO target.  The host root over 9p cannot do O_DIRECT.
# Without them the tests skip those cases.
fsdir=/tmp/gpin-fs
if [ -n "${RIG_MODDIR:-}" ] &&
   modprobe -d "$RIG_MODDIR" brd rd_nr=5 rd_size=16384 2>/dev/null; then
	export GPIN_TEST_BLKDEV=/dev/ram1
	if modprobe -d "$RIG_MODDIR" ext4 2>/dev/null &&
	   mkfs.ext4 -q -F /dev/ram0 >/dev/null 2>&1 &&
	   mkdir -p "$fsdir" && mount -t ext4 /dev/ram0 "$fsdir"; then
		export GPIN_TEST_FILEDIR="$fsdir"
		echo "# file-backed tests on ext4 ($fsdir), DIO on /dev/ram1"
	fi
fi
[ -n "${GPIN_TEST_FILEDIR:-}" ] ||
	echo "# no ext4 ramdisk: file-backed test runs on /tmp (tmpfs)"
if [ -n "${RIG_MODDIR:-}" ] &&
   modprobe -d "$RIG_MODDIR" null_blk nr_devices=1 gb=1 memory_backed=1 \
	queue_mode=2 irqmode=2 completion_nsec=200000 2>/dev/null &&
   [ -b /dev/nullb0 ]; then
	export GPIN_TEST_NULLB=/dev/nullb0
	echo "# asynchronous DIO on /dev/nullb0 (timer completions)"
fi

# Slow devices, device-mapper `delay` targets on ramdisk 2: 300 ms per
# request (I/O still in flight when a test forks) and 3 s (I/O that
# outlives the process that started it).
slowdm=gpin-pin-slow stuckdm=gpin-pin-stuck
if [ -b /dev/ram2 ] && command -v dmsetup >/dev/null &&
   modprobe -d "$RIG_MODDIR" dm-delay 2>/dev/null &&
   DM_DISABLE_UDEV=1 dmsetup create "$slowdm" --noudevsync \
	--table "0 8192 delay /dev/ram2 0 300" 2>/dev/null &&
   DM_DISABLE_UDEV=1 dmsetup create "$stuckdm" --noudevsync \
	--table "0 8192 delay /dev/ram2 8192 3000" 2>/dev/null; then
	export GPIN_TEST_SLOWDEV=/dev/mapper/$slowdm
	export GPIN_TEST_STUCKDEV=/dev/mapper/$stuckdm
	echo "# slow DIO on /dev/mapper/$slowdm (300 ms), /dev/mapper/$stuckdm (3 s)"
fi

# A device-mapper `error` target: every request fails with EIO.
errdm=gpin-pin-err
if [ -n "${RIG_MODDIR:-}" ] && command -v dmsetup >/dev/null &&
   modprobe -d "$RIG_MODDIR" dm-mod 2>/dev/null &&
   DM_DISABLE_UDEV=1 dmsetup create "$errdm" --noudevsync \
	--table "0 8192 error" 2>/dev/null &&
   [ -b "/dev/mapper/$errdm" ]; then
	export GPIN_TEST_ERRDEV=/dev/mapper/$errdm
	echo "# device errors on /dev/mapper/$errdm (dm error target)"
fi

# Swap, for MADV_PAGEOUT racing pins: a zram device.
if [ -n "${RIG_MODDIR:-}" ] &&
   modprobe -d "$RIG_MODDIR" zram num_devices=1 2>/dev/null &&
   echo 256M >/sys/block/zram0/disksize &&
   mkswap /dev/zram0 >/dev/null 2>&1 && swapon /dev/zram0; then
	echo "# swap on /dev/zram0 (256 MiB)"
fi
echo "# NUMA nodes: $(find /sys/devices/system/node -maxdepth 1 -name "node[0-9]*" | wc -l)," \
	"free 1 GiB huge pages:" \
	"$(cat /sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages 2>/dev/null || echo none)"

# fsfreeze with writes in flight: ext4 made on ramdisk 3, mounted through a
# dm-delay device that delays writes by 100 ms.
frzdm=gpin-pin-frz frzdir=/tmp/gpin-frz
if [ -b /dev/ram3 ] && command -v fsfreeze >/dev/null &&
   mkfs.ext4 -q -F /dev/ram3 >/dev/null 2>&1 &&
   DM_DISABLE_UDEV=1 dmsetup create "$frzdm" --noudevsync \
	--table "0 32768 delay /dev/ram3 0 0 /dev/ram3 0 100" 2>/dev/null &&
   mkdir -p "$frzdir" && mount -t ext4 "/dev/mapper/$frzdm" "$frzdir"; then
	export GPIN_TEST_FREEZEDIR="$frzdir"
	echo "# fsfreeze target: ext4 on /dev/mapper/$frzdm (writes 100 ms)"
fi

# I/O that never completes on its own: dm multipath with queue_if_no_path
# over ramdisk 4 (bio-based: brd cannot stack under request-based dm); the
# test fails the path, and later the I/O.
mpdm=gpin-pin-mpath
if [ -b /dev/ram4 ] &&
   modprobe -d "$RIG_MODDIR" dm-multipath 2>/dev/null &&
   modprobe -d "$RIG_MODDIR" dm-round-robin 2>/dev/null &&
   DM_DISABLE_UDEV=1 dmsetup create "$mpdm" --noudevsync --table \
	"0 8192 multipath 3 queue_if_no_path queue_mode bio 0 1 1 round-robin 0 1 1 /dev/ram4 1" \
	2>/dev/null; then
	export GPIN_TEST_MPATH="$mpdm" GPIN_TEST_MPATH_PATH=/dev/ram4
	echo "# stuck I/O on /dev/mapper/$mpdm (multipath, queue_if_no_path)"
fi

"$bin"
rc=$?
[ "$rc" = 77 ] && exit 77

# The ioctl fuzzer, on the scratch devices the tests are done with: every
# command from several threads, with fork, close and munmap interleaved
# (tests/pin/gpin-fuzz.c); the unload and the log check below follow it.
if [ -x "${GPIN_FUZZ:-}" ] && [ -n "${GPIN_TEST_BLKDEV:-}" ]; then
	seed=$(date +%s)
	if ! "$GPIN_FUZZ" "${GPIN_FUZZ_SECONDS:-60}" "$seed" \
		"$GPIN_TEST_BLKDEV" ${GPIN_TEST_NULLB:-}; then
		echo "FAIL: gpin-fuzz (seed $seed)"
		rc=1
	fi
fi

echo "# debugfs stats after the tests:"
sed 's/^/#   /' /sys/kernel/debug/gpin/stats 2>/dev/null
# An open file holds the module.
exec 3</dev/gpin
if rmmod gpin 2>/dev/null; then
	echo "FAIL: rmmod gpin succeeded with /dev/gpin open"
	rc=1
fi
exec 3<&-
if ! rmmod gpin; then
	echo "FAIL: rmmod gpin"
	rc=1
fi

# Unload racing the last completions (pin/dio.c): each round loads the
# module, leaves 64 reads in flight at close (orphans) or reaps them all
# and closes, and unloads it in a tight loop as soon as it lets go.  On
# the 300 ms device with orphans, the first attempts must be refused.
if [ -n "${GPIN_KO:-}" ] && [ -x "${GPIN_ORPHAN:-}" ]; then
	for dev in ${GPIN_TEST_SLOWDEV:-} ${GPIN_TEST_NULLB:-}; do
		for how in close reap; do
			i=0 out=
			while [ $i -lt 5 ]; do
				i=$((i + 1))
				if ! insmod "$GPIN_KO"; then
					echo "FAIL: insmod $GPIN_KO"
					rc=1
					break
				fi
				if ! out=$("$GPIN_ORPHAN" "$dev" 64 "$how"); then
					echo "FAIL: gpin-orphan $dev 64 $how"
					rc=1
					rmmod gpin 2>/dev/null
					break
				fi
				if [ "$dev" = "${GPIN_TEST_SLOWDEV:-}" ] &&
				   [ "$how" = close ]; then
					case $out in
					*" after 0 refused"*)
						echo "FAIL: unloaded with I/O in flight: $out"
						rc=1 ;;
					esac
				fi
			done
			echo "$out (round $i)"
		done
	done
fi

[ -n "${GPIN_TEST_ERRDEV:-}" ] &&
	DM_DISABLE_UDEV=1 dmsetup remove --noudevsync "$errdm" 2>/dev/null
if [ -n "${GPIN_TEST_SLOWDEV:-}" ]; then
	DM_DISABLE_UDEV=1 dmsetup remove --noudevsync "$slowdm" "$stuckdm" \
		2>/dev/null
fi
umount "$fsdir" "$frzdir" 2>/dev/null
DM_DISABLE_UDEV=1 dmsetup remove --noudevsync "$frzdm" "$mpdm" 2>/dev/null
swapoff /dev/zram0 2>/dev/null
rmmod null_blk brd zram 2>/dev/null
echo "# kernel log since the tests started: $(dmesg | wc -l) lines"
# What a kernel bug leaves in the log: BUG and WARNING (with slub_debug a
# slab report is "BUG <cache>: Poison overwritten", "Redzone overwritten",
# ...), oopses, a page freed in use.
bad="BUG|WARNING|Oops|general protection|Poison overwritten|Redzone|Bad page|gpin.*leak"
if dmesg | grep -E "$bad" >/dev/null; then
	echo "FAIL: kernel log shows a problem:"
	dmesg | grep -E -B2 -A20 "$bad" | head -80
	rc=1
fi
exit "$rc"
