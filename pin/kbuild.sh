#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Build gpin.ko with Kbuild outside the source tree (called by meson):
#   kbuild.sh KDIR PIN_SRCDIR UAPI_HEADER WORKDIR OUTPUT_KO
set -eu
kdir=$1 src=$2 uapi=$3 work=$4 out=$5

[ -f "$kdir/Makefile" ] || { echo "kbuild.sh: no kernel build tree at $kdir" >&2; exit 1; }
mkdir -p "$work/include"
for f in "$src"/Kbuild "$src"/*.c "$src"/*.h; do
	cmp -s "$f" "$work/${f##*/}" || cp "$f" "$work/"
done
cmp -s "$uapi" "$work/include/gpin.h" || cp "$uapi" "$work/include/gpin.h"
# the version (Kbuild's MODULE_VERSION): the top of the source tree's
if [ -f "$src/../VERSION" ]; then
	cmp -s "$src/../VERSION" "$work/VERSION" || cp "$src/../VERSION" "$work/"
fi
make -s -C "$kdir" M="$(cd "$work" && pwd)" modules
cp "$work/gpin.ko" "$out"
