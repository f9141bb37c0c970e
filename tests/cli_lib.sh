# SPDX-License-Identifier: MIT
#
# cli_lib.sh - what the explainer's shell tests share. Sourced after the
# test sets $ibkeys (the program), $cmd (the words before every case's
# arguments, may be empty) and $name (for the temporary directory): running
# one case, its TAP line (tests/lib.sh) with its output on a failure, and
# the two checks on its standard output. The test ends with tap_done.

. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

check_case() {	# check_case STATUS DESCRIPTION: a failure shows the case's output
	tap "$1" "$2" && return
	sed 's/^/# stdout: /' "$tmp/out"
	sed 's/^/# stderr: /' "$tmp/err"
}

run() {	# run ARG...: stdout in $tmp/out, stderr in $tmp/err, status in $rc
	# shellcheck disable=SC2086 # $cmd is split on purpose
	"$ibkeys" $cmd "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# expect 'ARGS' ERE...: exit 0, and every ERE matches a line of stdout
expect() {
	args=$1
	shift
	# shellcheck disable=SC2086 # ARGS is split on purpose
	run $args
	status=$rc
	for re; do
		grep -Eq -- "$re" "$tmp/out" || status=1
	done
	check_case "$status" "ibkeys${cmd:+ $cmd} $args: $*"
}

# expect_not 'ARGS' ERE: exit 0, and no line of stdout matches ERE
expect_not() {
	# shellcheck disable=SC2086
	run $1
	status=$rc
	grep -Eq -- "$2" "$tmp/out" && status=1
	check_case "$status" "ibkeys${cmd:+ $cmd} $1: no line '$2'"
}
