#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Boot-time benchmark (not a test): how long from starting the VMM until
# the guest's init runs its workload, gpin-vmm against QEMU with KVM, same
# kernel, same initramfs, same vCPUs and memory, in the same test host.
# Figures under the rig's TCG are not absolute: only the ratio means
# something, and only within one run.
#
# Usage: tests/bench/boot-time.sh GPIN_VMM [--kernel 6.1|6.12] [--runs N]
#                                 [--cpus N] [--json FILE]
# Prints a table; --json also writes the figures.

set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
readonly HERE TOP
readonly MARKER='hello from the gpin guest'
readonly LIMIT=300

usage() {
	sed -n '4,14s/^# \{0,1\}//p' "$0"
	exit "${1:-0}"
}

# Runs one VMM command line; prints "<to-init> <to-exit>" in seconds.
# The VMM's output is read line by line as it comes, so the moment the
# workload's first line appears is the moment init ran it.
time_boot() {
	local t0 t_init='' line
	t0=$EPOCHREALTIME
	while IFS= read -r line; do
		if [[ -z $t_init && $line == *"$MARKER"* ]]; then
			t_init=$EPOCHREALTIME
		fi
	done < <(timeout "$LIMIT" "$@" </dev/null 2>&1)
	[[ -n $t_init ]] || { echo "boot-time: no '$MARKER' from: $*" >&2; return 1; }
	echo "$(bc <<<"$t_init - $t0") $(bc <<<"$EPOCHREALTIME - $t0")"
}

median() {
	sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

inside() {
	local vmm=$1 vmlinuz=$2 initrd=$3 runs=$4 cpus=$5 json=$6 i
	local cmdline="console=ttyS0 quiet gpin.workload=hello"
	local -a gpin_init=() gpin_exit=() qemu_init=() qemu_exit=()
	echo "# test host $(uname -r), $(nproc) CPUs; guest: $cpus vCPUs, 512M, $runs runs each"
	for ((i = 1; i <= runs; i++)); do
		read -r a b < <(time_boot "$vmm" --test-exit-port \
			--kernel "$vmlinuz" --initrd "$initrd" \
			--cpus "$cpus" --mem 512M --cmdline "$cmdline")
		gpin_init+=("$a") gpin_exit+=("$b")
		printf '# run %d gpin-vmm: init after %.2f s, exit after %.2f s\n' "$i" "$a" "$b"
		read -r a b < <(time_boot qemu-system-x86_64 -accel kvm -cpu host \
			-smp "$cpus" -m 512M -nographic -no-reboot -nodefaults \
			-serial stdio -kernel "$vmlinuz" -initrd "$initrd" \
			-append "$cmdline" -device isa-debug-exit,iobase=0x501,iosize=1)
		qemu_init+=("$a") qemu_exit+=("$b")
		printf '# run %d qemu:     init after %.2f s, exit after %.2f s\n' "$i" "$a" "$b"
	done
	local gi ge qi qe
	gi=$(printf '%s\n' "${gpin_init[@]}" | median)
	ge=$(printf '%s\n' "${gpin_exit[@]}" | median)
	qi=$(printf '%s\n' "${qemu_init[@]}" | median)
	qe=$(printf '%s\n' "${qemu_exit[@]}" | median)
	printf '\n| VMM | start -> guest init (median s) | start -> exit (median s) |\n'
	printf '|---|---|---|\n'
	printf '| gpin-vmm | %.2f | %.2f |\n' "$gi" "$ge"
	printf '| qemu-system-x86_64 -accel kvm | %.2f | %.2f |\n' "$qi" "$qe"
	printf '\nboot-time ratio (QEMU / gpin-vmm, start -> init): %.2f\n' "$(bc -l <<<"$qi / $gi")"
	if [[ -n $json ]]; then
		printf '{"kernel": "%s", "cpus": %d, "runs": %d, "gpin_init_s": %s, "gpin_exit_s": %s, "qemu_init_s": %s, "qemu_exit_s": %s, "ratio_qemu_over_gpin": %s}\n' \
			"$(uname -r)" "$cpus" "$runs" "$gi" "$ge" "$qi" "$qe" \
			"$(bc -l <<<"$qi / $gi")" >"$json"
	fi
}

main() {
	if [[ ${1:-} == --inside ]]; then
		shift
		inside "$@"
		return
	fi
	[[ ${1:-} == -h || ${1:-} == --help ]] && usage 0
	local vmm=${1:-} kernel=6.1 runs=3 cpus=2 json='' img
	[[ -n $vmm ]] || usage 2
	shift
	while (($#)); do
		case $1 in
		--kernel) kernel=$2; shift 2 ;;
		--runs) runs=$2; shift 2 ;;
		--cpus) cpus=$2; shift 2 ;;
		--json) json=$(realpath -m "$2"); shift 2 ;;
		-h | --help) usage 0 ;;
		*) echo "boot-time: unknown option '$1'" >&2; usage 2 ;;
		esac
	done
	vmm=$(realpath "$vmm")
	img=$("$TOP/guest-images/build-guest" "$kernel")
	local KVER='' VMLINUZ='' INITRD=''
	eval "$img"
	local out
	out=$(mktemp -d /var/tmp/gpin-boot-time.XXXXXX)
	"$TOP/tests/rig/rig" --kernel "$KVER" --out "$out" \
		--timeout $((runs * 2 * LIMIT)) -- \
		"$HERE/boot-time.sh" --inside "$vmm" "$VMLINUZ" "$INITRD" "$runs" \
		"$cpus" "${json:+$out/boot-time.json}"
	[[ -z $json ]] || cp "$out/boot-time.json" "$json"
}

main "$@"
