# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# TAP for the tests written in shell (sourced); tests written in Python use
# gpintest.tap.Writer, which prints the same.  Results are numbered in
# order; a failed one's problem and details follow as comment lines; the
# plan comes last (tap_done), or alone as a skip plan (tap_skip_all).

tap_n=0
tap_failed=0

# ok N - NAME, with an optional directive ("SKIP no curl").
tap_ok() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $1${2:+ # $2}"
}

# not ok N - NAME, then each further argument's lines as comments (CRs
# from a tty dropped).
tap_not_ok() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $1"
	shift
	(($#)) && printf '%s\n' "$@" | tr -d '\r' | sed 's/^/#   /'
	return 0
}

# NAME PROBLEM [DETAIL...]: ok when PROBLEM is empty.
tap_result() {
	local name=$1 problem=$2
	shift 2
	if [[ -z $problem ]]; then
		tap_ok "$name"
	else
		tap_not_ok "$name" "$problem" "$@"
	fi
}

# The test cannot run here: a skip plan and status 0, which Meson counts
# as skipped for a TAP test (77 would be an ERROR).
tap_skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

tap_bail_out() {
	echo "Bail out! $*"
	exit 1
}

# The plan and a summary; the status: whether every result passed.
tap_done() {
	echo "1..$tap_n"
	((tap_failed == 0)) || echo "# $tap_failed of $tap_n failed"
	((tap_failed == 0))
}
