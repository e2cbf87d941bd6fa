#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run-in-rig.sh: build gpin.ko for the test-host kernel and run the gpin
# tests (tests/pin/test_pin.c) inside the rig.
#
# Usage: tests/pin/run-in-rig.sh [KERNEL...]
#   KERNEL: 6.1 (default), 6.12, or an exact release; several run in turn.
#   GPIN_PIN_KERNELS="6.1 6.12" does the same as arguments.
#   GPIN_RACE_SECONDS=N (default 5) bounds the race test.
#   GPIN_STRESS_SECONDS=N (default 2) each stress cell (test_pin_stress.c).
#   GPIN_FUZZ_SECONDS=N (default 60) the ioctl fuzzer (gpin-fuzz.c).
#   GPIN_PIN_CASE=NAME runs that Check test case alone (e.g. stress).
#   GPIN_BATCH=N sets the module's batch parameter (1..512) before the tests.
#   GPIN_PIN_BUILDDIR (default <top>/build-pin) holds the builds.
#
# Exit: 0 all passed, 77 skipped (reason printed), anything else failed.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
readonly TOP
BUILD=${GPIN_PIN_BUILDDIR:-$TOP/build-pin}

skip() {
	echo "SKIP: $*"
	exit 77
}

# shellcheck disable=SC2206
kernels=(${GPIN_PIN_KERNELS:-})
[[ $# -gt 0 ]] && kernels=("$@")
[[ ${#kernels[@]} -gt 0 ]] || kernels=(6.1)

[[ -x $TOP/tests/rig/rig ]] || skip "no tests/rig/rig"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed"
pkg-config --exists check || skip "the Check library (check) is not installed"

mkdir -p "$BUILD"
BUILD=$(cd "$BUILD" && pwd)

# The test program does not depend on the kernel.
read -r -a check_flags <<<"$(pkg-config --cflags --libs check)"
cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
	-I "$TOP/include" -I "$TOP/pin/lib" \
	"$TOP"/tests/pin/test_pin*.c "$TOP/pin/lib/libgpin.c" \
	"${check_flags[@]}" -pthread -o "$BUILD/test_pin"
cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
	-I "$TOP/include" "$TOP/tests/pin/gpin-orphan.c" -o "$BUILD/gpin-orphan"
cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
	-I "$TOP/include" "$TOP/tests/pin/gpin-fuzz.c" -pthread \
	-o "$BUILD/gpin-fuzz"

# Check runs every case unless CK_RUN_CASE names one (an empty one: none).
case_env=()
[[ -n ${GPIN_PIN_CASE:-} ]] && case_env=(--env "CK_RUN_CASE=$GPIN_PIN_CASE")

status=0
for k in "${kernels[@]}"; do
	echo "=== gpin tests on kernel $k"
	pkg=$("$TOP/scripts/kernel-pkg" "$k") ||
		skip "no Debian kernel $k with headers (scripts/kernel-pkg $k failed)"
	KVER='' KHEADERS=''
	eval "$pkg"
	"$TOP/pin/kbuild.sh" "$KHEADERS" "$TOP/pin" "$TOP/include/gpin.h" \
		"$BUILD/$KVER/kmod" "$BUILD/$KVER/gpin.ko"
	rc=0
	# One 1 GiB huge page reserved at boot (test_hugetlb_1g) and two
	# NUMA nodes to migrate between (move_pages).  With numa=fake=2 on
	# 4 GiB no node keeps a free, aligned GiB once its memmap is placed
	# (the reservation fails); on 6 GiB the second node does.  Slab
	# debugging (sanity checks, red zones, poisoning, owners): a write to
	# a freed object is reported at the object's next allocation or free,
	# and a read of one finds poison, which in-host.sh's log check sees.
	"$TOP/tests/rig/rig" --kernel "$k" --timeout 1200 --mem 6G \
		--append "hugepagesz=1G hugepages=1 numa=fake=2 slub_debug=FZPU" \
		--insmod "$BUILD/$KVER/gpin.ko" \
		--env "GPIN_RACE_SECONDS=${GPIN_RACE_SECONDS:-5}" \
		--env "GPIN_STRESS_SECONDS=${GPIN_STRESS_SECONDS:-2}" \
		--env "GPIN_FUZZ_SECONDS=${GPIN_FUZZ_SECONDS:-60}" \
		--env "GPIN_BATCH=${GPIN_BATCH:-}" \
		--env "GPIN_KO=$BUILD/$KVER/gpin.ko" \
		--env "GPIN_ORPHAN=$BUILD/gpin-orphan" \
		--env "GPIN_FUZZ=$BUILD/gpin-fuzz" "${case_env[@]}" \
		-- "$TOP/tests/pin/in-host.sh" "$BUILD/test_pin" || rc=$?
	echo "=== kernel $k: exit $rc"
	case $rc in
	0) ;;
	77) [[ $status == 0 ]] && status=77 ;;
	*) status=1 ;;
	esac
done
exit "$status"
