#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# test-virsh.sh: a real libvirt runs gpin-vmm through its Cloud Hypervisor
# driver.
#
# Usage: test-virsh.sh GPIN_VMM PAYLOAD_DIR        (TAP on stdout)
#        test-virsh.sh --build-only               (build libvirt, no test)
#
# Debian builds libvirt without the ch driver, so this builds Debian's own
# libvirt source with -Ddriver_ch=enabled (and nearly everything else off)
# into /var/cache/gpin/libvirt-ch/<source version>/, once per version: a
# rerun finds the stamp and skips the build.  It then starts that build's
# virtchd on a private socket (its state lives under the private prefix,
# never the system's /run/libvirt), puts gpin-vmm on PATH as
# `cloud-hypervisor`, and drives a payload guest (waiter: prints one line,
# then halts until stopped) through virsh: version, define, start, list,
# dominfo, vcpuinfo, console, suspend, resume, shutdown, destroy, undefine.
# The domain has a disk, whose pin mode only gpin-vmm's host defaults can
# choose on this route (libvirt passes no metadata): virtchd runs in a
# mount namespace whose /etc is a copy of this one with etc/gpin/vmm.conf
# (libvirt scrubs the environment of the VMM it starts, so GPIN_VMM_CONF
# would not reach it).  With gpin.ko loaded (the twin inserts it) the file
# says pin=fast and vm.counters must show gpin.ko's "blk0-gpin"; then
# pin=kernel, which must win over gpin-vmm's own default (fast when
# /dev/gpin exists).  Without gpin.ko, pin=kernel only.
#
# Skipped (a TAP skip plan, status 0) with the reason when it cannot run:
# not root, no /dev/kvm (its twin in the rig's test host, tests/rig/kvm-twin,
# then runs instead: it builds libvirt here with --build-only and runs the
# session there, where the cached prefix is read-only and used through
# writable copies of its etc/ and var/), no libvirt source reachable.  A
# libvirt that does not build or a virtchd that does not start fails.

set -uo pipefail

if [[ ${1:-} != --build-only ]] && (($# != 2)); then
	echo "usage: $0 GPIN_VMM PAYLOAD_DIR | --build-only" >&2
	exit 2
fi
GPIN_VMM=$(realpath -- "${1:-}")
PAYLOADS=$(realpath -- "${2:-.}")
readonly GPIN_VMM PAYLOADS
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
readonly TOP
readonly CACHE=${GPIN_LIBVIRT_CACHE:-/var/cache/gpin/libvirt-ch}
readonly NAME=gpin-virsh-test

# What building libvirt's source needs (measured with 9.0.0).
readonly LIBVIRT_BUILD_PKGS=(dpkg-dev meson ninja-build gcc pkg-config
	libxml2-dev libglib2.0-dev libgnutls28-dev libcurl4-gnutls-dev
	libyajl-dev libjson-c-dev libtirpc-dev xsltproc python3-docutils
	curl util-linux)

# shellcheck source=tests/lib/tap.sh
. "$TOP/tests/lib/tap.sh"
# Prints what `virsh console` shows until a line with PATTERN has come or
# SECONDS have passed, then ends the console (SIGTERM to script(1), ours).
console_until() {
	local pattern=$1 secs=$2 log=$RUN/console.out pid i
	: >"$log"
	timeout "$((secs + 10))" script -qfec \
		"virsh -c 'ch:///system?socket=$RUN/sock/virtchd-sock' console --force $NAME" \
		"$log" </dev/null >/dev/null 2>&1 &
	pid=$!
	for ((i = 0; i < secs * 5; i++)); do
		grep -q "$pattern" "$log" && break
		sleep 0.2
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	cat "$log"
}

# check DESCRIPTION COMMAND...: ok when the command succeeds.
check() {
	local what=$1 out
	shift
	if out=$("$@" 2>&1); then
		tap_ok "$what"
	else
		tap_not_ok "$what" "$out"
	fi
}

# ---- libvirt with the ch driver, built once per source version ----

build_libvirt() {
	local ver=$1 dir=$CACHE/$1
	local src build=$dir/build prefix=$dir/prefix
	[[ -f $dir/.built ]] && return 0
	"$TOP/scripts/deps" "${LIBVIRT_BUILD_PKGS[@]}" >&2 || return 1
	rm -rf "$dir/src" "$build" "$prefix"
	mkdir -p "$dir/src"
	(cd "$dir/src" && apt-get source -qq "libvirt=$ver") >&2 || return 1
	src=$(find "$dir/src" -mindepth 1 -maxdepth 1 -type d -name 'libvirt-*' | head -n 1)
	[[ -n $src ]] || return 1
	# Everything automatic off; the ch driver, the daemon, its RPC and
	# the client on.  No docs, no tests.
	meson setup "$build" "$src" --prefix="$prefix" \
		-Dauto_features=disabled -Ddriver_ch=enabled \
		-Ddriver_remote=enabled -Ddriver_libvirtd=enabled \
		-Dcurl=enabled -Dyajl=enabled -Ddocs=disabled -Dtests=disabled \
		-Dinit_script=none >"$dir/build.log" 2>&1 || return 1
	ninja -C "$build" >>"$dir/build.log" 2>&1 || return 1
	ninja -C "$build" install >>"$dir/build.log" 2>&1 || return 1
	touch "$dir/.built"
}

# ---- the test ----

RUN=''
DAEMON_PID=''
DISK=''
SOCK=''
MOUNTS=()
cleanup() {
	if [[ -n $DAEMON_PID ]]; then
		virsh_ destroy "$NAME" >/dev/null 2>&1
		virsh_ undefine "$NAME" >/dev/null 2>&1
		kill "$DAEMON_PID" 2>/dev/null
		wait "$DAEMON_PID" 2>/dev/null
	fi
	((${#MOUNTS[@]} == 0)) || umount "${MOUNTS[@]}"
	[[ -n $RUN ]] && rm -rf "$RUN"
	[[ -n $DISK ]] && rm -f "$DISK"
}

virsh_() {
	virsh -q -c "ch:///system?socket=$RUN/sock/virtchd-sock" "$@"
}

# dominfo's value for KEY ("State", "Id", ...).
dominfo() {
	virsh_ dominfo "$NAME" 2>/dev/null | sed -n "s/^$1: *//p"
}

wait_for() {	# SECONDS COMMAND...
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		"${@:2}" && return 0
		sleep 0.1
	done
	return 1
}

# After a destroy, libvirt 9.0 needs the domain defined again.
redefine() {
	virsh_ dominfo "$NAME" >/dev/null 2>&1 ||
		check "virsh define (again, after destroy)" \
			virsh_ define "$RUN/$NAME.xml"
}

state_is() {
	[[ $(dominfo State) == "$1" ]]
}

# The VMM's counters over libvirt's own API socket to it.
vm_counters() {
	curl -s --unix-socket "$SOCK" http://localhost/api/v1/vm.counters 2>&1
}

# The pin mode /etc/gpin/vmm.conf chose, as vm.counters shows it: the
# gpin.ko backends add a "blk0-gpin" object, pin=kernel has none.
check_pin() {	# PIN
	local out want='"blk0-gpin"'
	out=$(vm_counters)
	if [[ $1 == kernel && $out == *'"blk0-q0"'* && $out != *$want* ]] ||
	   [[ $1 != kernel && $out == *$want* ]]; then
		tap_ok "pin=$1 from /etc/gpin/vmm.conf: vm.counters shows it"
	else
		tap_not_ok "pin=$1 from /etc/gpin/vmm.conf: vm.counters shows it" "$out"
	fi
}

# The host defaults file the VMM sees (the namespace's /etc is $RUN/etc).
set_host_pin() {	# PIN
	printf '# written by test-virsh.sh\npin = "%s"\n' "$1" \
		>"$RUN/etc/gpin/vmm.conf"
}

# The libvirt build for this machine's source version, built once; sets
# LIBVIRT_VER.  Holds the cache's lock (fd 9) when the cache is writable.
LIBVIRT_VER=''
libvirt_ready() {
	local ver
	mkdir -p "$CACHE" 2>/dev/null
	if exec 9>"$CACHE/.lock"; then
		flock 9	# one build, one private daemon at a time
	fi 2>/dev/null
	# the newest source apt knows, deb-src entries added if need be
	ver=$(PYTHONPATH="$TOP/tests/lib" python3 -m gpintest.aptsrc version libvirt) ||
		tap_skip_all "no libvirt source package: apt knows none, and no deb-src entry could be set up"
	build_libvirt "$ver" ||
		tap_bail_out "building libvirt $ver with the ch driver failed (see $CACHE/$ver/build.log)"
	LIBVIRT_VER=$ver
}

# In the rig's test host the cache (this machine's /, over 9p) is
# read-only, and virtchd writes its state under the prefix: it gets
# writable copies of etc/ and var/, mounted over the originals.
writable_prefix() {
	local prefix=$1 d
	[[ -w $prefix/etc ]] && return 0
	for d in etc var; do
		mkdir -p "$RUN/prefix-$d"
		cp -a "$prefix/$d/." "$RUN/prefix-$d/"
		mount --bind "$RUN/prefix-$d" "$prefix/$d" ||
			tap_bail_out "cannot make $prefix/$d writable"
		MOUNTS+=("$prefix/$d")
	done
	echo "# read-only prefix: etc/ and var/ are writable copies in $RUN"
}

main() {
	if [[ ${1:-} == --build-only ]]; then
		((EUID == 0)) || { echo "needs root" >&2; exit 1; }
		libvirt_ready
		exit
	fi
	((EUID == 0)) || tap_skip_all "needs root (virtchd runs privileged)"
	[[ -r /dev/kvm && -w /dev/kvm ]] ||
		tap_skip_all "no usable /dev/kvm${GPIN_TWINS:+; its twin in the test host runs instead: $GPIN_TWINS}"
	[[ -f $PAYLOADS/waiter.bzImage ]] || tap_skip_all "no waiter payload in $PAYLOADS"
	command -v apt-get >/dev/null || tap_skip_all "not a Debian system (apt-get)"

	libvirt_ready
	local ver=$LIBVIRT_VER prefix=$CACHE/$LIBVIRT_VER/prefix

	RUN=$(mktemp -d /tmp/gpin-virsh.XXXXXX)
	trap cleanup EXIT
	writable_prefix "$prefix"
	mkdir -p "$RUN/bin" "$RUN/sock" "$RUN/etc"
	ln -s "$GPIN_VMM" "$RUN/bin/cloud-hypervisor"
	# /etc for virtchd's namespace: this one's, and gpin-vmm's defaults.
	cp -a /etc/. "$RUN/etc/" || tap_bail_out "cannot copy /etc to $RUN/etc"
	mkdir -p "$RUN/etc/gpin"
	local pin=kernel
	[[ -c /dev/gpin ]] && pin=fast
	set_host_pin "$pin"
	# O_DIRECT wants a real filesystem (kvm-twin's ext4, not /tmp).
	DISK=$(mktemp "${GPIN_TEST_DISKDIR:-/var/tmp}/gpin-virsh.XXXXXX") ||
		tap_bail_out "no disk image"
	truncate -s 1M "$DISK"
	SOCK=$prefix/var/run/libvirt/ch/$NAME-socket
	export PATH=$RUN/bin:$prefix/bin:$prefix/sbin:$PATH
	# Leftovers of an interrupted run in the private prefix.
	rm -rf "$prefix/etc/libvirt/ch" "$prefix/var/run/libvirt/ch"
	cat >"$RUN/virtchd.conf" <<-CONF
		unix_sock_dir = "$RUN/sock"
		auth_unix_rw = "none"
		auth_unix_ro = "none"
		log_outputs = "3:file:$RUN/virtchd.log"
	CONF
	# In a mount namespace of its own without the cgroup hierarchies:
	# libvirt then skips cgroup set-up (which this machine's hybrid
	# hierarchy refuses for threads) and leaves the system's alone; its
	# /etc is $RUN/etc, with gpin-vmm's host defaults.
	unshare -m --propagation private sh -c \
		'umount -R -l /sys/fs/cgroup 2>/dev/null
		 mount --bind "$0" /etc || exit 1
		 exec "$@"' "$RUN/etc" \
		virtchd -f "$RUN/virtchd.conf" >"$RUN/virtchd.out" 2>&1 &
	DAEMON_PID=$!
	wait_for 20 test -S "$RUN/sock/virtchd-sock" ||
		tap_bail_out "virtchd did not start: $(tail -n 3 "$RUN/virtchd.out" "$RUN/virtchd.log" 2>/dev/null | tr '\n' ' ')"

	echo "# libvirt $ver with the ch driver; gpin-vmm as cloud-hypervisor"
	local out
	out=$(virsh_ version 2>&1)
	if [[ $out == *"hypervisor: CH 32.0.0"* ]]; then
		tap_ok "virsh version: the ch driver parsed gpin-vmm --version"
	else
		tap_not_ok "virsh version: the ch driver parsed gpin-vmm --version" "$out"
	fi

	cat >"$RUN/$NAME.xml" <<-XML
		<domain type='kvm'>
		  <name>$NAME</name>
		  <memory unit='MiB'>128</memory>
		  <vcpu>2</vcpu>
		  <os>
		    <type arch='x86_64'>hvm</type>
		    <kernel>$PAYLOADS/waiter.bzImage</kernel>
		    <cmdline>console=ttyS0</cmdline>
		  </os>
		  <devices>
		    <disk type='file' device='disk'>
		      <driver name='qemu' type='raw' cache='none'/>
		      <source file='$DISK'/>
		      <target dev='vda' bus='virtio'/>
		    </disk>
		    <console type='pty'><target type='virtio' port='0'/></console>
		  </devices>
		</domain>
	XML
	check "virsh define" virsh_ define "$RUN/$NAME.xml"
	check "list --all: defined and shut off" \
		bash -c "virsh -q -c 'ch:///system?socket=$RUN/sock/virtchd-sock' list --all | grep -Eq '$NAME +shut off'"

	# ---- start: vm.create + vm.boot, vm.info for the console PTY ----
	check "virsh start" virsh_ start "$NAME"
	check "list: running" \
		bash -c "virsh -q -c 'ch:///system?socket=$RUN/sock/virtchd-sock' list | grep -Eq '$NAME +running'"
	local pid
	pid=$(dominfo Id)
	# -ef, not the link's text: virtchd runs in a mount namespace of
	# its own, where (chrooted, in the test host) the path reads
	# differently
	if [[ $pid =~ ^[0-9]+$ ]] && [[ /proc/$pid/exe -ef $GPIN_VMM ]]; then
		tap_ok "dominfo Id is the gpin-vmm process ($pid)"
	else
		tap_not_ok "dominfo Id is the gpin-vmm process" "Id '$pid'" \
			"exe '$(readlink "/proc/$pid/exe" 2>&1)', want '$GPIN_VMM'"
	fi
	check "dominfo: running, 2 CPUs, 131072 KiB" bash -c "
		i=\$(virsh -c 'ch:///system?socket=$RUN/sock/virtchd-sock' dominfo $NAME)
		grep -Eq '^State: +running' <<<\"\$i\" &&
		grep -Eq '^CPU\\(s\\): +2' <<<\"\$i\" &&
		grep -Eq '^Max memory: +131072 KiB' <<<\"\$i\""
	check_pin "$pin"
	# libvirt finds vCPUs by their thread names (vcpuN).
	out=$(virsh_ vcpuinfo "$NAME" 2>&1)
	if [[ $(grep -c '^VCPU:' <<<"$out") == 2 ]]; then
		tap_ok "vcpuinfo: two vCPU threads found by name"
	else
		tap_not_ok "vcpuinfo: two vCPU threads found by name" "$out"
	fi
	local pty
	pty=$(virsh_ ttyconsole "$NAME" 2>&1)
	if [[ $pty == /dev/pts/* && -c $pty ]]; then
		tap_ok "ttyconsole: the PTY from vm.info ($pty)"
	else
		tap_not_ok "ttyconsole: the PTY from vm.info" "$pty"
	fi
	# virsh console wants a terminal: give it one with script(1).  The
	# line was printed long ago and waits in the PTY; virsh itself takes
	# seconds to connect when the machine is busy (rig tests beside it).
	out=$(console_until "hello from gpin payload" 30)
	if [[ $out == *"hello from gpin payload, waiting for shutdown"* ]]; then
		tap_ok "virsh console: the guest's console output"
	else
		tap_not_ok "virsh console: the guest's console output" "$out"
	fi

	# ---- suspend/resume: vm.pause parks every vCPU, vm.resume lets them go ----
	check "virsh suspend" virsh_ suspend "$NAME"
	check "suspended: paused" state_is paused
	check "virsh resume" virsh_ resume "$NAME"
	check "resumed: running" state_is running
	check "the VMM survived pause and resume ($pid)" kill -0 "$pid"

	# ---- shutdown: vm.shutdown; libvirt 9.0 keeps the process ----
	check "virsh shutdown" virsh_ shutdown "$NAME"
	out=$(dominfo State)
	if [[ $out == "in shutdown" || $out == "shut off" ]]; then
		tap_ok "after shutdown: $out"
	else
		tap_not_ok "after shutdown: in shutdown or shut off" "State '$out'"
	fi
	out=$(curl -s --unix-socket "$SOCK" http://localhost/api/v1/vm.info 2>&1)
	if [[ $out == *'"state":"Shutdown"'* ]]; then
		tap_ok "vm.info on libvirt's socket: the VM is Shutdown"
	else
		tap_not_ok "vm.info on libvirt's socket: the VM is Shutdown" "$out"
	fi
	check "virsh destroy" virsh_ destroy "$NAME"
	# libvirt 9.0's ch driver drops a destroyed *persistent* domain from
	# its list (virCHDomainRemoveInactive tests persistent, not
	# transient); its definition stays on disk and define brings it back.
	if wait_for 5 state_is "shut off"; then
		tap_ok "shut off after destroy"
	elif ! virsh_ dominfo "$NAME" >/dev/null 2>&1; then
		tap_ok "after destroy: dropped from the list (libvirt 9.0 ch driver)"
	else
		tap_not_ok "shut off after destroy" "State '$(dominfo State)'"
	fi
	if wait_for 5 bash -c "! kill -0 $pid 2>/dev/null"; then
		tap_ok "gpin-vmm ($pid) is gone"
	else
		tap_not_ok "gpin-vmm ($pid) is gone"
	fi

	# ---- start again, destroy while running ----
	# With gpin.ko loaded gpin-vmm's own default is fast: pin=kernel in
	# the file must win over it.
	if [[ $pin == fast ]]; then
		pin=kernel
		set_host_pin "$pin"
	fi
	redefine
	check "virsh start (again)" virsh_ start "$NAME"
	pid=$(dominfo Id)
	check "running again" state_is running
	check_pin "$pin"
	check "virsh destroy (running)" virsh_ destroy "$NAME"
	if [[ $pid =~ ^[0-9]+$ ]] && wait_for 5 bash -c "! kill -0 $pid 2>/dev/null"; then
		tap_ok "gpin-vmm ($pid) is gone after destroy"
	else
		tap_not_ok "gpin-vmm is gone after destroy" "pid '$pid'"
	fi

	redefine
	check "virsh undefine" virsh_ undefine "$NAME"
	# libvirt 9.0's ch driver deletes the definition but, by the same
	# inverted test as on destroy, keeps the object in its list as a
	# transient domain: check what undefine means, not the list.
	out=$(virsh_ list --all --persistent --name 2>&1)
	if ! grep -qx "$NAME" <<<"$out" &&
	   [[ ! -e $prefix/etc/libvirt/ch/$NAME.xml ]]; then
		tap_ok "undefined: no persistent domain, no definition on disk"
	else
		tap_not_ok "undefined: no persistent domain, no definition on disk" "$out"
	fi
	if ((tap_failed)); then
		echo "# virtchd log: $RUN/virtchd.log (removed); last lines:"
		tail -n 20 "$RUN/virtchd.log" 2>/dev/null | sed 's/^/#   /'
	fi
	tap_done
}

main "$@"
