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

# A real (non-shmem) filesystem for the file-backed test: ext4 on a brd
# ramdisk.  Without it the test falls back to /tmp (tmpfs, i.e. shmem).
fsdir=/tmp/gpin-fs
if [ -n "${RIG_MODDIR:-}" ] &&
   modprobe -d "$RIG_MODDIR" brd rd_nr=1 rd_size=16384 2>/dev/null &&
   modprobe -d "$RIG_MODDIR" ext4 2>/dev/null &&
   mkfs.ext4 -q -F /dev/ram0 >/dev/null 2>&1 &&
   mkdir -p "$fsdir" && mount -t ext4 /dev/ram0 "$fsdir"; then
	export GPIN_TEST_FILEDIR="$fsdir"
	echo "# file-backed test on ext4 ($fsdir)"
else
	echo "# no ext4 ramdisk: file-backed test runs on /tmp (tmpfs)"
fi

"$bin"
rc=$?
umount "$fsdir" 2>/dev/null
[ "$rc" = 77 ] && exit 77

echo "# debugfs stats after the tests:"
sed 's/^/#   /' /sys/kernel/debug/gpin/stats 2>/dev/null
if ! rmmod gpin; then
	echo "FAIL: rmmod gpin"
	rc=1
fi
echo "# kernel log since the tests started: $(dmesg | wc -l) lines"
if dmesg | grep -E "BUG|WARNING|Oops|general protection|gpin.*leak" >/dev/null; then
	echo "FAIL: kernel log shows a problem:"
	dmesg | grep -E -B2 -A20 "BUG|WARNING|Oops|general protection" | head -80
	rc=1
fi
exit "$rc"
