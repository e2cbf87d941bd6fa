#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Issue 33's control: the kernel's FOLL_PIN counters around O_DIRECT I/O
# that does not involve gpin, on brd raw, ext4 (iomap direct I/O) and vfat
# (the kernel's older fs/direct-io.c).  Run in the test host, as root:
#
#   tests/rig/rig --kernel 6.12 -- tests/pin/legacy-dio-drift.sh
#
# Each line: pins acquired, released, and released minus acquired
# (gpintest/follpin.py).  Results and reading: docs/results/pin-lifetime.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
export PYTHONPATH="$here/../lib"
around() { /usr/bin/python3 -m gpintest.follpin -- "$@"; }

for tool in mkfs.vfat mkfs.ext4; do
	command -v $tool >/dev/null || { echo "SKIP: no $tool (dosfstools, e2fsprogs)"; exit 77; }
done
modprobe -d "${RIG_MODDIR:-/}" brd rd_nr=2 rd_size=65536
for m in vfat nls_cp437 nls_ascii ext4 crc32c_generic; do modprobe -d "${RIG_MODDIR:-/}" $m; done
mkfs.vfat /dev/ram0 >/dev/null
mkfs.ext4 -q -F /dev/ram1
mkdir -p /tmp/vfat /tmp/ext4
mount -t vfat -o iocharset=ascii /dev/ram0 /tmp/vfat
mount -t ext4 /dev/ram1 /tmp/ext4
for fs in vfat ext4; do
	# the file exists first: a direct write that extends a vfat file
	# falls back to buffered I/O
	dd if=/dev/zero of=/tmp/$fs/f bs=4k count=1024 2>/dev/null
	sync
	echo "$(uname -r) $fs O_DIRECT write 1024 x 4k: $(around dd if=/dev/zero of=/tmp/$fs/f bs=4k count=1024 oflag=direct conv=notrunc 2>/dev/null)"
	echo "$(uname -r) $fs O_DIRECT read 1024 x 4k: $(around dd if=/tmp/$fs/f of=/dev/null bs=4k count=1024 iflag=direct 2>/dev/null)"
done
umount /tmp/vfat /tmp/ext4
echo "$(uname -r) brd O_DIRECT read 1024 x 4k: $(around dd if=/dev/ram0 of=/dev/null bs=4k count=1024 iflag=direct 2>/dev/null)"
echo "$(uname -r) idle 5 s: $(around sleep 5)"
