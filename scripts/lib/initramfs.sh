# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Helpers shared by guest-images/build-guest and tests/rig/rig to assemble a
# busybox initramfs from a kernel extracted by scripts/kernel-pkg.  Sourced,
# not run.  Every function takes the staging root as its first argument.

# The project's Python library (tests/lib): ldd's output is read there.
IRD_PYLIB=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib" && pwd)

# Staging tree with busybox as the only userland.  dev/console must exist in
# the archive itself: the kernel opens it for init's stdio before /init runs,
# and it does not auto-mount devtmpfs when the root is an initramfs.
ird_init() {
	local root=$1
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,run,mnt,etc,lib/modules}
	cp /bin/busybox "$root/bin/busybox"
	# Applet links at build time, so /init can use plain names from line 1.
	local applet
	for applet in $(/bin/busybox --list); do
		[[ $applet == busybox ]] || ln -sf busybox "$root/bin/$applet"
	done
	mknod -m 600 "$root/dev/console" c 5 1
	mknod -m 666 "$root/dev/null" c 1 3
	: >"$root/etc/modules.order"
}

# Copies module NAME and, first, everything it depends on into lib/modules/
# and appends each to etc/modules.order (one file name a line, load order).
# The order comes from `modinfo -F depends` of this very kernel: Debian
# changes module dependencies between ABI bumps, so no list is hard-coded.
# Modules built into the kernel are skipped.  Returns 1 when NAME does not
# exist at all, so that callers decide whether that is fatal.
ird_add_module() {
	local root=$1 kdir=$2 kver=$3 name=$4 file stem dep deps
	file=$(modinfo -b "$kdir" -k "$kver" -F filename "$name" 2>/dev/null) || return 1
	[[ $file == "(builtin)" ]] && return 0
	[[ -n $file ]] || return 1
	stem=$(basename "$file")
	stem=${stem%.xz}
	stem=${stem%.ko}
	grep -qxF "$stem.ko" "$root/etc/modules.order" && return 0

	deps=$(modinfo -b "$kdir" -k "$kver" -F depends "$name")
	for dep in ${deps//,/ }; do
		ird_add_module "$root" "$kdir" "$kver" "$dep" ||
			{ echo "initramfs: $name needs $dep, which is missing" >&2; return 1; }
	done
	# busybox insmod reads only uncompressed modules (6.12 ships .ko.xz).
	case $file in
	*.xz) xz -dc "$file" >"$root/lib/modules/$stem.ko" ;;
	*)    cp "$file" "$root/lib/modules/$stem.ko" ;;
	esac
	echo "$stem.ko" >>"$root/etc/modules.order"
}

# ird_add_modules ROOT KDIR KVER REQUIRED-NAMES... [-- OPTIONAL-NAMES...]
ird_add_modules() {
	local root=$1 kdir=$2 kver=$3 optional=0 name
	shift 3
	for name in "$@"; do
		if [[ $name == -- ]]; then
			optional=1
			continue
		fi
		if ! ird_add_module "$root" "$kdir" "$kver" "$name"; then
			((optional)) || { echo "initramfs: module $name not in $kver" >&2; return 1; }
			echo "initramfs: optional module $name not in $kver, skipped" >&2
		fi
	done
}

# Copies executables and the shared libraries ldd reports for them, each at
# the path ldd printed (the dynamic loader has no ld.so.cache in the image
# and searches its built-in multiarch directories and RUNPATHs instead).
ird_add_binaries() {
	local root=$1 f lib
	shift
	for f in "$@"; do
		mkdir -p "$root$(dirname "$f")"
		cp -L "$f" "$root$f"
		for lib in $(PYTHONPATH="$IRD_PYLIB" python3 -m gpintest.ldd "$f"); do
			[[ -e $root$lib ]] && continue
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
	done
}

# Packs the tree as a newc cpio (owned by root) compressed with gzip, which
# every Debian kernel can unpack.  Written to a temp name first so a reader
# never sees half an archive.
ird_pack() {
	local root=$1 out=$2
	mkdir -p "$(dirname "$out")"
	(cd "$root" && find . -mindepth 1 | LC_ALL=C sort |
		cpio -o -H newc -R 0:0 --quiet) | gzip -6 -n >"$out.tmp"
	mv "$out.tmp" "$out"
}

# Hash of a recipe: the named files' contents plus free-form strings (kernel
# release, package versions).  A change in any of them triggers a rebuild.
ird_hash() {
	local item
	for item in "$@"; do
		if [[ -f $item ]]; then
			printf 'file %s\n' "$(basename "$item")"
			cat "$item"
		else
			printf 'str %s\n' "$item"
		fi
	done | sha256sum | cut -d' ' -f1
}

# Installed version of a Debian package, for ird_hash.
ird_pkg_version() {
	dpkg-query -W -f='${Package}=${Version}' "$1" 2>/dev/null || echo "$1=none"
}
