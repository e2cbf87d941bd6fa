#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Host-direct tests: boot the payload guests of tests/payloads on this
# machine's /dev/kvm with gpin-vmm and check exit status and console output.
#
#   run.sh GPIN_VMM PAYLOAD_DIR
#
# PAYLOAD_DIR holds the *.bzImage and *.bin files tests/payloads builds.
# Output is TAP, one line per case; exit 0 only when every case passes,
# or with a skip plan (1..0 # SKIP) when /dev/kvm is not usable: then its
# twin, the same script in the rig's test host (tests/rig/kvm-twin,
# GPIN_TWINS), runs instead.  Each VMM run gets `timeout 30`
# (the ones signalled while they run: SIGTERM, and KILL 5 s later).
#
# The contract under test (what gpin-vmm promises a bzImage):
#  - the 64-bit entry (load address + 0x200) in long mode, RSI = zero page
#    0x7000, CS 0x10, DS/ES/SS 0x18, IF = 0, RSP = 0x8ff0, 0..4 GiB
#    identity-mapped (bootstate);
#  - loaded at pref_address when relocatable and it fits, else 0x100000
#    (where-*); --params and --initrd reach boot_params (exitcode, initrd);
#  - the command line holds up to 4095 bytes, a longer one is refused;
#  - COM1 output on stdout; with --test-exit-port (every run here passes
#    it but one), port 0x501 ends the VMM with the byte written; without
#    it the port is not there;
#    i8042 reset and triple fault end it with 0 (reset, triplefault);
#  - any vCPU may end the VM through the exit port; SIGTERM ends it even
#    when every vCPU is halted;
#  - APs wait for INIT-SIPI-SIPI; the MADT lists one LAPIC per vCPU (smp,
#    madt);
#  - anything but a bzImage >= 2.12 with XLF_KERNEL_64: exit 2, one line on
#    stderr (bad-*);
#  - --disk is a virtio-mmio v2 block device at 0xd0000000 with
#    transport=mmio (the payload drives no PCI; every run here gets it from
#    a host defaults file, GPIN_VMM_CONF, as the API's vm.create has no
#    such word): writes reach
#    the backing, reads return them, errors come back as status (virtio);
#    SIGUSR1 prints its per-queue counters while the guest runs, and
#    --api-socket's GET vm.counters returns them.
set -u

if [ $# -ne 2 ]; then
	echo "usage: $0 GPIN_VMM PAYLOAD_DIR" >&2
	exit 2
fi
vmm=$1
dir=$2
# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"

twins=''
[ -n "${GPIN_TWINS:-}" ] && twins="; its twin in the test host runs instead: $GPIN_TWINS"
if [ ! -c /dev/kvm ]; then
	tap_skip_all "/dev/kvm is missing$twins"
fi
if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
	tap_skip_all "/dev/kvm is not readable and writable by $(id -un)$twins"
fi
if [ ! -x "$vmm" ]; then
	tap_bail_out "$vmm is not an executable"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpin-hostdirect.XXXXXX") || exit 1
echo "transport = mmio" >"$tmp/vmm.conf"
export GPIN_VMM_CONF=$tmp/vmm.conf
trap 'rm -rf "$tmp"' EXIT

out=$tmp/stdout
err=$tmp/stderr

# vmm_run ARGS...: run the VMM on no terminal; sets $status.
vmm_run() {
	timeout 30 "$vmm" --test-exit-port "$@" <"/dev/null" >"$out" 2>"$err"
	status=$?
}

# result NAME PROBLEM: PROBLEM empty = pass; a failure shows what the
# VMM printed.
result() {
	tap_result "$1" "$2" "$(sed -n '1,20s/^/stdout: /p' "$out")" \
		"$(sed -n '1,10s/^/stderr: /p' "$err")"
}

# expect NAME STATUS STDOUT-SUBSTRING [FORBIDDEN-SUBSTRING] -- VMM-ARGS...
# STDOUT-SUBSTRING may be empty (status only).
expect() {
	local name=$1 want=$2 text=$3 forbidden='' problem=''
	shift 3
	if [ "$1" != "--" ]; then
		forbidden=$1
		shift
	fi
	shift
	vmm_run "$@"
	if [ "$status" -eq 124 ]; then
		problem="timed out after 30 s"
	elif [ "$status" -ne "$want" ]; then
		problem="exit status $status, expected $want"
	elif [ -n "$text" ] && ! grep -qF -- "$text" "$out"; then
		problem="stdout lacks '$text'"
	elif [ -n "$forbidden" ] && grep -qF -- "$forbidden" "$out"; then
		problem="stdout has '$forbidden'"
	fi
	result "$name" "$problem"
}

# reject NAME KERNEL-FILE: the loader must refuse it: status 2, one line on
# stderr, the guest never runs (no console output).
reject() {
	local name=$1 problem=''
	vmm_run --kernel "$2"
	if [ "$status" -ne 2 ]; then
		problem="exit status $status, expected 2"
	elif [ "$(wc -l <"$err")" -ne 1 ]; then
		problem="stderr has $(wc -l <"$err") lines, expected one"
	elif [ -s "$out" ]; then
		problem="stdout is not empty"
	fi
	result "$name" "$problem"
}

# smp N: N vCPUs all come up, each AP once with its own APIC id.
smp() {
	local cpus=$1 problem='' aps ids
	vmm_run --kernel "$dir/smp.bzImage" --cpus "$cpus" --params "cpus=$cpus"
	aps=$(grep -c '^ap: apic id ' "$out")
	ids=$(grep '^ap: apic id ' "$out" | sort -u | wc -l)
	if [ "$status" -eq 124 ]; then
		problem="timed out after 30 s"
	elif [ "$status" -ne 0 ]; then
		problem="exit status $status, expected 0"
	elif ! grep -qF "smp: $cpus cpus up" "$out"; then
		problem="stdout lacks 'smp: $cpus cpus up'"
	elif [ "$aps" -ne $((cpus - 1)) ] || [ "$ids" -ne "$aps" ]; then
		problem="$aps AP lines with $ids distinct ids, expected $((cpus - 1))"
	fi
	result "smp --cpus $cpus" "$problem"
}

# wait_for FILE TEXT: up to 10 s for TEXT to appear in FILE.
wait_for() {
	local i
	for i in $(seq 100); do
		grep -qF -- "$2" "$1" && return 0
		sleep 0.1
	done
	return 1
}

# stop_vmm PID: SIGTERM, KILL after 5 s; sets $status.
stop_vmm() {
	local i
	kill -TERM "$1" 2>/dev/null
	for i in $(seq 50); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null
	wait "$1"
	status=$?
}

# SIGUSR1 while the guest runs (virtio payload, wait=1: it halts after its
# 5 requests) prints the counter line of the exit, the queue's ring (idle:
# all 5 taken and used, none in flight) and where vCPU 0 is (in the guest,
# halted, and its registers), and the VMM goes on until SIGTERM, which
# prints the counters once more.
counters_on_sigusr1() {
	# irq_hold=auto (the default) adds its interrupts and holds
	local want="^gpin-vmm: blk0-q0: 5 requests, 1024 bytes, 2 errors(, [0-9]+ interrupts, [0-9]+ holds)?\$"
	local problem='' pid running=yes
	"$vmm" --test-exit-port --kernel "$dir/virtio.bzImage" \
		--disk "$tmp/disk" --params "wait=1" <"/dev/null" >"$out" 2>"$err" &
	pid=$!
	if ! wait_for "$out" "virtio: waiting"; then
		problem="the guest never reached its wait"
	else
		kill -USR1 "$pid"
		wait_for "$err" "blk0-q0:" || problem="no blk0-q0 line on SIGUSR1"
		# The halted vCPU: its place, then its registers (its own
		# thread prints them once kicked out of KVM_RUN).
		wait_for "$err" "gpin-vmm: vcpu0: rip 0x" ||
			problem="no vcpu0 registers on SIGUSR1"
		grep -q "^gpin-vmm: vcpu0: [0-9]* exits, in the guest" "$err" ||
			problem="no vcpu0 state line on SIGUSR1"
		# the ring of a queue that served its 5 and is idle
		grep -q "^gpin-vmm: blk0-q0-ring: avail 5, taken 5, used 5, .*, inflight 0," "$err" ||
			problem="no idle blk0-q0 ring line on SIGUSR1"
		sleep 0.2
		kill -0 "$pid" 2>/dev/null || running=no
	fi
	stop_vmm "$pid"
	if [ -n "$problem" ]; then
		:
	elif [ "$running" = no ]; then
		problem="SIGUSR1 ended the VMM (status $status)"
	elif [ "$(grep -cE -- "$want" "$err")" -ne 2 ]; then
		problem="stderr lacks '$want' twice (SIGUSR1, exit)"
	elif [ "$status" -ne 143 ]; then
		problem="exit status $status after SIGTERM, expected 143"
	fi
	result "virtio-blk: SIGUSR1 prints the queue counters, the ring and vCPU state while it runs" \
		"$problem"
}

# api METHOD ENDPOINT [JSON]: one request on $tmp/api.sock; prints the body.
api() {
	curl -s --max-time 10 --unix-socket "$tmp/api.sock" -X "$1" \
		${3:+-H 'Content-Type: application/json' -d "$3"} \
		"http://localhost/api/v1/$2"
}

# The same counters through Cloud Hypervisor's GET vm.counters, by device
# id, from a VM that vm.create / vm.boot made.
counters_over_api() {
	local name="--api-socket: GET vm.counters while the guest runs"
	local want='^\{"blk0-q0":\{"requests":5,"bytes":1024,"errors":2(,"interrupts":[0-9]+,"holds":[0-9]+)?\}\}$'
	local problem='' pid body i
	if ! command -v curl >/dev/null; then
		tap_ok "$name" "SKIP no curl"
		return
	fi
	"$vmm" --test-exit-port --api-socket "path=$tmp/api.sock" \
		<"/dev/null" >"$out" 2>"$err" &
	pid=$!
	for i in $(seq 100); do
		[ -S "$tmp/api.sock" ] && break
		sleep 0.1
	done
	api PUT vm.create "{\"payload\":{\"kernel\":\"$dir/virtio.bzImage\",
		\"cmdline\":\"wait=1\"},\"disks\":[{\"path\":\"$tmp/disk\"}],
		\"serial\":{\"mode\":\"Tty\"},\"console\":{\"mode\":\"Off\"}}" \
		>/dev/null
	api PUT vm.boot >/dev/null
	if ! wait_for "$out" "virtio: waiting"; then
		problem="the guest never reached its wait"
	else
		body=$(api GET vm.counters)
		[[ $body =~ $want ]] || problem="vm.counters: '$body', expected '$want'"
	fi
	stop_vmm "$pid"
	result "$name" "$problem"
}

# initrd SIZE: the payload sees the file's size and the sum of its bytes.
initrd() {
	local size=$1 problem='' sum
	head -c "$size" /dev/urandom >"$tmp/initrd"
	# the payload's own checksum: the bytes' sum modulo 2^32
	sum=$(python3 -c 'import sys; print(sum(open(sys.argv[1], "rb").read()) % 2**32)' \
	      "$tmp/initrd")
	expect "initrd of $size bytes" 0 "initrd: size $size sum $sum" -- \
		--kernel "$dir/initrd.bzImage" --initrd "$tmp/initrd"
}

expect "hello" 0 "hello from gpin payload" -- --kernel "$dir/hello.bzImage"

for code in 0 1 42 200 255; do
	expect "exit device: code=$code" "$code" "exitcode: $code" -- \
		--kernel "$dir/exitcode.bzImage" \
		--params "console=ttyS0 code=$code quiet"
done
expect "exit device: no code= (default command line)" 254 "no code=" -- \
	--kernel "$dir/exitcode.bzImage"
# The exit device is a test hook: without --test-exit-port the payload's
# write goes nowhere and it halts (cli; hlt) until SIGTERM (timeout: 124).
timeout -k 5 5 "$vmm" --kernel "$dir/exitcode.bzImage" --params "code=42" \
	<"/dev/null" >"$out" 2>"$err"
status=$?
if [ "$status" -ne 124 ]; then
	result "no exit device without --test-exit-port" \
		"status $status, expected 124 (the write ended the VMM)"
elif ! grep -qF "exitcode: 42" "$out"; then
	result "no exit device without --test-exit-port" \
		"the payload never reached its write"
else
	result "no exit device without --test-exit-port" ""
fi
# The command line holds 4095 bytes and its NUL; code= sits at the very end.
long=$(printf '%4088s' '')
expect "command line of 4095 bytes reaches the guest" 7 "exitcode: 7" -- \
	--kernel "$dir/exitcode.bzImage" --params "$long code=7"
expect "command line of 4096 bytes refused" 2 "" -- \
	--kernel "$dir/exitcode.bzImage" --params "$long code=77"

# The guest must not run on past the reset or the triple fault.
expect "i8042 reset ends the VMM with 0" 0 "reset: via i8042" \
	"still running" -- --kernel "$dir/reset.bzImage"
expect "triple fault ends the VMM with 0" 0 "triplefault: ud2" \
	"survived" -- --kernel "$dir/triplefault.bzImage"
grep -q 'gpin-vmm: vcpu0: rip 0x.* cr2 [0-9a-fx]* cr3 ' "$err" &&
	problem='' || problem="stderr lacks vcpu0's registers"
result "triple fault prints where the vCPU died" "$problem"

expect "entry state and zero page" 0 "bootstate: ok" -- \
	--kernel "$dir/bootstate.bzImage" --params "bootstate=1"
expect "entry state with --cpus 2 --mem 1G" 0 "bootstate: ok" -- \
	--kernel "$dir/bootstate.bzImage" --params "bootstate=1" \
	--cpus 2 --mem 1G

expect "load address: non-relocatable" 0 "where: loaded at 0x100000" -- \
	--kernel "$dir/where-default.bzImage"
expect "load address: relocatable, pref_address 16 MiB" 0 \
	"where: loaded at 0x1000000" -- --kernel "$dir/where-pref.bzImage"
expect "load address: pref_address ignored when not relocatable" 0 \
	"where: loaded at 0x100000" -- --kernel "$dir/where-fixed.bzImage"
expect "load address: pref_address 2 GiB beyond --mem 128M" 0 \
	"where: loaded at 0x100000" -- \
	--kernel "$dir/where-nofit.bzImage" --mem 128M

initrd 1
initrd 100003

for cpus in 1 2 4 8; do
	smp "$cpus"
done
for cpus in 2 4; do
	expect "exit device written by an AP, BSP halted (--cpus $cpus)" 42 "" \
		-- --kernel "$dir/smp.bzImage" --cpus "$cpus" \
		--params "cpus=$cpus apexit=42"
done

# A guest whose only vCPU sits in cli; hlt never exits KVM_RUN by itself:
# SIGTERM must still end the VMM (timeout reports 124 when its TERM did it,
# 137 when it had to send KILL 5 s later).
timeout -k 5 2 "$vmm" --test-exit-port --kernel "$dir/smp.bzImage" \
	--params "cpus=1 apexit=1" \
	<"/dev/null" >"$out" 2>"$err"
status=$?
if [ "$status" -eq 124 ]; then
	result "SIGTERM ends a VMM whose vCPU is halted" ""
else
	result "SIGTERM ends a VMM whose vCPU is halted" \
		"timeout status $status, expected 124 (VMM gone on SIGTERM)"
fi

for cpus in 1 2 4 16; do
	expect "madt --cpus $cpus" 0 "madt: $cpus lapics" -- \
		--kernel "$dir/madt.bzImage" --cpus "$cpus" --params "cpus=$cpus"
done

expect "boot protocol 2.12 accepted" 0 "hello from gpin payload" -- \
	--kernel "$dir/proto-2.12.bzImage"
reject "reject: flat binary, not a bzImage" "$dir/hello.bin"
reject "reject: boot protocol 2.00" "$dir/bad-proto-2.00.bzImage"
reject "reject: boot protocol 2.11" "$dir/bad-proto-2.11.bzImage"
reject "reject: no XLF_KERNEL_64" "$dir/bad-no-kernel64.bzImage"
: >"$tmp/empty"
reject "reject: empty file" "$tmp/empty"
head -c 1024 "$dir/hello.bzImage" >"$tmp/setup-only"
reject "reject: setup sectors only, no kernel" "$tmp/setup-only"
head -c 544 "$dir/hello.bzImage" >"$tmp/cut-header"	# 0x220: mid-header
reject "reject: file ends inside the setup header" "$tmp/cut-header"
reject "reject: no such file" "$tmp/does-not-exist"

# virtio-blk driven by hand (virtio payload): the disk is a file here.
head -c 1048576 /dev/zero >"$tmp/disk"
expect "virtio-blk: write, flush, read back, IOERR, UNSUPP" 0 \
	"virtio: write, flush, read back, errors: ok" -- \
	--kernel "$dir/virtio.bzImage" --disk "$tmp/disk"
# Sector 1 holds the payload's pattern, byte i = i * 7 + 3.
if [ "$(od -An -tu1 -j512 -N4 "$tmp/disk" | tr -s ' ')" = " 3 10 17 24" ]; then
	result "virtio-blk: the write reached the backing file" ""
else
	result "virtio-blk: the write reached the backing file" \
		"sector 1 starts with$(od -An -tu1 -j512 -N4 "$tmp/disk")"
fi
expect "virtio-blk service=iothread" 0 "virtio: write, flush, read back" -- \
	--kernel "$dir/virtio.bzImage" --disk "$tmp/disk,service=iothread"
counters_on_sigusr1
counters_over_api
expect "virtio-blk read-only: the write fails with IOERR" 13 \
	"virtio: write failed" -- --kernel "$dir/virtio.bzImage" \
	--disk "$tmp/disk,ro"
expect "--disk on a missing file: VMM error" 1 "" -- \
	--kernel "$dir/virtio.bzImage" --disk "$tmp/no-such-disk"
if [ -e /dev/gpin ]; then
	expect "virtio-blk pin=fast (gpin.ko's async DIO)" 0 \
		"virtio: write, flush, read back" -- \
		--kernel "$dir/virtio.bzImage" --disk "$tmp/disk,pin=fast"
else
	expect "--disk pin=fast without /dev/gpin: VMM error" 1 "" -- \
		--kernel "$dir/virtio.bzImage" --disk "$tmp/disk,pin=fast"
fi

tap_done
