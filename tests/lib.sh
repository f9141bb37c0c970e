# SPDX-License-Identifier: MIT
#
# lib.sh - the TAP lines every shell test and tests/*/run script prints
# (tests/tap.h is the same for C). POSIX sh; sourced, it defines:
#
#   tap STATUS DESCRIPTION  "ok N - DESCRIPTION" if STATUS is 0, else
#                           "not ok N - ..."; returns STATUS, so that a
#                           failure's detail can follow: tap $? "..." || ...
#   tap_diag TEXT           a "# TEXT" line
#   tap_diag_file FILE [N]  FILE's lines (its last N) as "# " lines
#   tap_done                the plan "1..N"; true only if every check passed
#   tap_summary             "N passed, N failed", the line tests/run counts
#                           from a tests/*/run script; same status

tap_count=0
tap_failed=0

tap() {
	tap_count=$((tap_count + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $tap_count - $2"
	else
		echo "not ok $tap_count - $2"
		tap_failed=$((tap_failed + 1))
	fi
	return "$1"
}

tap_diag() {
	echo "# $*"
}

tap_diag_file() {
	if [ -n "${2:-}" ]; then
		tail -n "$2" "$1"
	else
		cat "$1"
	fi | sed 's/^/# /'
}

tap_done() {
	echo "1..$tap_count"
	[ "$tap_failed" -eq 0 ]
}

tap_summary() {
	echo "$((tap_count - tap_failed)) passed, $tap_failed failed"
	[ "$tap_failed" -eq 0 ]
}
