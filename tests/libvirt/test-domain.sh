#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# test-domain.sh: the direct route, gpin-vmm --domain, with
# docs/examples/domain.xml and payload guests on this machine's /dev/kvm.
#
# Usage: test-domain.sh GPIN_VMM PAYLOAD_DIR EXAMPLE_XML      (TAP)

set -uo pipefail

VMM=${1:?usage: $0 GPIN_VMM PAYLOAD_DIR EXAMPLE_XML}
PAYLOADS=${2:?}
EXAMPLE=${3:?}
readonly VMM PAYLOADS EXAMPLE

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"
expect() {	# DESCRIPTION HAYSTACK NEEDLE
	if [[ $2 == *"$3"* ]]; then tap_ok "$1"; else tap_not_ok "$1" "wanted: $3" "got: $2"; fi
}

# O_DIRECT needs a real filesystem (not tmpfs): keep images off /tmp
# (GPIN_TEST_DISKDIR: where tests/rig/kvm-twin made one in the test host).
DIR=$(mktemp -d "${GPIN_TEST_DISKDIR:-/var/tmp}/gpin-domain.XXXXXX")
PID=''
cleanup() {
	[[ -n $PID ]] && kill "$PID" 2>/dev/null
	rm -rf "$DIR"
}
trap cleanup EXIT
truncate -s 1M "$DIR/root.img"
truncate -s 1M "$DIR/data.img"

# The example with this machine's paths: payload kernels, images here;
# and the test exit port, through which a payload's status comes back
# (gpin's metadata: <gpin:test-exit-port/>, --test-exit-port).
adapt() {	# KERNEL OUT
	sed -e "s|/var/lib/gpin/vmlinuz|$PAYLOADS/$1.bzImage|" \
	    -e "s|<gpin:vmm>|<gpin:vmm><gpin:test-exit-port/>|" \
	    -e "s|/var/lib/gpin/initrd.img|$PAYLOADS/hello.bin|" \
	    -e "s|/var/lib/gpin/root.img|$DIR/root.img|" \
	    -e "s|<memory unit='GiB'>1</memory>|<memory unit='MiB'>128</memory>|" \
	    -e "s|<currentMemory unit='GiB'>1</currentMemory>|<currentMemory unit='KiB'>131072</currentMemory>|" \
	    -e "s|<disk type='block' device='disk'>|<disk type='file' device='disk'>|" \
	    -e "s|<source dev='/dev/nullb0'/>|<source file='$DIR/data.img'/>|" \
	    "$EXAMPLE" >"$2"
}

# Skips are TAP skip plans with status 0 (Meson's TAP skip).
if ! [[ -r /dev/kvm && -w /dev/kvm ]]; then
	tap_skip_all "no usable /dev/kvm${GPIN_TWINS:+; its twin in the test host runs instead: $GPIN_TWINS}"
fi
if ! [[ -r ${GPIN_DOMAIN_SCHEMA:-/usr/share/libvirt/schemas/domain.rng} ]]; then
	tap_skip_all "libvirt's schema is not installed (Debian: libvirt0)"
fi

if command -v virt-xml-validate >/dev/null; then
	out=$(virt-xml-validate "$EXAMPLE" domain 2>&1)
	expect "virt-xml-validate docs/examples/domain.xml" "$out" "validates"
fi

adapt hello "$DIR/hello.xml"
out=$("$VMM" --domain "$DIR/hello.xml" --print-config 2>&1)
expect "--print-config: vcpus" "$out" "vcpus: 4"
expect "--print-config: memory" "$out" "memory: 134217728 bytes"
expect "--print-config: locked" "$out" "memory-locked: yes"
expect "--print-config: console" "$out" "console: pty"
expect "--print-config: the test exit port (metadata)" "$out" "test-exit-port: on"
expect "--print-config: disk vda" "$out" "disk vda: file $DIR/root.img, io=io_uring, queues=4, pin=kernel, service=vcpu"
expect "--print-config: disk vdb" "$out" "disk vdb: file $DIR/data.img (read-only), io=threads, queues=2, pin=kernel, service=iothread"

# Boot it: console on stdio for this run, so drop the PTY console.
sed -i '/<console type=/,/<\/console>/d' "$DIR/hello.xml"
out=$(timeout 60 "$VMM" --domain "$DIR/hello.xml" </dev/null 2>&1)
rc=$?
expect "--domain boots the hello payload (4 vCPUs, 2 disks, locked RAM)" "$out" "hello from gpin payload"
if ((rc == 0)); then tap_ok "exit status 0"; else tap_not_ok "exit status 0" "rc=$rc" "$out"; fi

# A PTY console, read from outside while the guest waits; SIGTERM ends it.
adapt waiter "$DIR/waiter.xml"
"$VMM" --domain "$DIR/waiter.xml" </dev/null >"$DIR/out" 2>"$DIR/err" &
PID=$!
for _ in $(seq 50); do grep -q 'console on' "$DIR/err" && break; sleep 0.1; done
pty=$(sed -n 's/^gpin-vmm: console on //p' "$DIR/err")
out=$( [[ -c $pty ]] && timeout 5 head -c 47 "$pty")
expect "type='pty': the guest's output on $pty" "$out" "hello from gpin payload, waiting for shutdown"
kill -TERM "$PID"
wait "$PID"
rc=$?
PID=''
if ((rc == 143)); then tap_ok "SIGTERM ends it (143)"; else tap_not_ok "SIGTERM ends it (143)" "rc=$rc"; fi

# Rejections: exit 2 and one line naming the problem.
reject() {	# DESCRIPTION SED-EXPRESSION NEEDLE
	adapt hello "$DIR/bad.xml"
	sed -i "$2" "$DIR/bad.xml"
	out=$("$VMM" --domain "$DIR/bad.xml" --print-config 2>&1)
	rc=$?
	if ((rc == 2)) && [[ $out == *"$3"* ]] && (($(wc -l <<<"$out") == 1)); then
		tap_ok "$1"
	else
		tap_not_ok "$1" "rc=$rc" "$out"
	fi
}
reject "unsupported element" "s|<devices>|<devices><sound model='ich9'/>|" "<devices><sound> is not supported"
reject "schema-invalid" "s|<vcpu placement='static'>4</vcpu>|<vcpu>four</vcpu>|" "libvirt's schema"
reject "missing disk image" "s|$DIR/root.img|$DIR/none.img|" "none.img: No such file"
reject "not XML" "s|</domain>||" "bad.xml"

tap_done
