#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_pick_kernel.sh PICK-KERNEL - tests/vm/pick-kernel against archives
# written out here, each as the apt-cache answers a Debian 12 mirror gives:
# the kernel linux-image-amd64 depends on when image, headers (and source)
# exist at its version; the newest complete older upload when the source
# moved ahead (as on 2026-11-28: linux-source-6.1 6.1.192-3 beside
# linux-image-6.1.0-56-amd64 6.1.192-2); one line and exit 1 when no
# version is complete. TAP on stdout.
set -u
pick=${1:?usage: test_pick_kernel.sh PATH-TO-PICK-KERNEL}
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# archive META ROWS...: a fake apt-cache on PATH. META: the ABI and version
# linux-image-amd64 points at ("56 6.1.192-2"); each ROW "PACKAGE VERSION".
archive() {
	local meta=$1
	shift
	printf '%s\n' "$@" >"$tmp/rows"
	cat >"$tmp/apt-cache" <<-EOF
		#!/usr/bin/env bash
		rows=$tmp/rows
		case \$1 in
		depends) echo "linux-image-amd64"
		         echo "  Depends: linux-image-6.1.0-${meta% *}-amd64" ;;
		policy)  echo "\$2:"
		         awk -v p="\$2" '\$1 == p { print "  Candidate: " \$2; exit }' "\$rows" ;;
		pkgnames) awk -v p="\$2" 'index(\$1, p) == 1 { print \$1 }' "\$rows" | sort -u ;;
		madison) shift
		         for p; do awk -v p="\$p" '\$1 == p { print " " \$1 " | " \$2 " | mirror" }' "\$rows"; done ;;
		esac
	EOF
	chmod +x "$tmp/apt-cache"
}

# expect 'ARGS' WANT WHAT: pick-kernel ARGS prints WANT (or, for WANT "fail",
# exits 1 with one line on stderr and nothing on stdout)
expect() {
	local out rc
	# shellcheck disable=SC2086
	out=$(PATH="$tmp:$PATH" "$pick" $1 2>"$tmp/err")
	rc=$?
	if [ "$2" = fail ]; then
		[ $rc -eq 1 ] && [ -z "$out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ]
	else
		[ $rc -eq 0 ] && [ "$out" = "$2" ]
	fi
	tap $? "$3 (got '$out', exit $rc)" || tap_diag_file "$tmp/err"
}

# the source one upload ahead of the image, the image's own still there
archive "56 6.1.192-2" \
	"linux-image-6.1.0-56-amd64 6.1.192-2" "linux-headers-6.1.0-56-amd64 6.1.192-2" \
	"linux-image-6.1.0-55-amd64 6.1.190-1" "linux-headers-6.1.0-55-amd64 6.1.190-1" \
	"linux-source-6.1 6.1.192-3" "linux-source-6.1 6.1.192-2" "linux-source-6.1 6.1.190-1"
expect "" "6.1.0-56-amd64 6.1.192-2" "the image linux-image-amd64 depends on"
expect --source "6.1.0-56-amd64 6.1.192-2" \
	"--source: the same kernel, its own source picked beside a newer one"

# the image's own source gone from the archive: the newest complete upload
archive "56 6.1.192-2" \
	"linux-image-6.1.0-56-amd64 6.1.192-2" "linux-headers-6.1.0-56-amd64 6.1.192-2" \
	"linux-image-6.1.0-54-amd64 6.1.187-1" "linux-headers-6.1.0-54-amd64 6.1.187-1" \
	"linux-image-6.1.0-55-amd64 6.1.190-1" "linux-headers-6.1.0-55-amd64 6.1.190-1" \
	"linux-source-6.1 6.1.192-3" "linux-source-6.1 6.1.190-1" "linux-source-6.1 6.1.187-1"
expect "" "6.1.0-56-amd64 6.1.192-2" "without --source the source's absence does not matter"
expect --source "6.1.0-55-amd64 6.1.190-1" \
	"--source, the image's own source gone: the newest upload with all three"

# headers not yet published for the new image: the previous kernel
archive "57 6.1.195-1" \
	"linux-image-6.1.0-57-amd64 6.1.195-1" \
	"linux-image-6.1.0-56-amd64 6.1.192-2" "linux-headers-6.1.0-56-amd64 6.1.192-2" \
	"linux-source-6.1 6.1.195-1" "linux-source-6.1 6.1.192-2"
expect "" "6.1.0-56-amd64 6.1.192-2" "headers missing for the new image: the previous kernel"

# ABI numbers compared as numbers, not as text (6.1.0-100 after 6.1.0-99)
archive "100 6.1.250-1" \
	"linux-image-6.1.0-100-amd64 6.1.250-1" \
	"linux-image-6.1.0-99-amd64 6.1.249-1" "linux-headers-6.1.0-99-amd64 6.1.249-1" \
	"linux-image-6.1.0-9-amd64 6.1.27-1" "linux-headers-6.1.0-9-amd64 6.1.27-1"
expect "" "6.1.0-99-amd64 6.1.249-1" "versions compared as versions (6.1.249 after 6.1.27)"

# nothing complete
archive "56 6.1.192-2" \
	"linux-image-6.1.0-56-amd64 6.1.192-2" "linux-headers-6.1.0-56-amd64 6.1.192-2" \
	"linux-source-6.1 6.1.192-3"
expect --source fail "--source with no source at any image's version: one line, exit 1"
archive "56 6.1.192-2"
expect "" fail "no image at all: one line, exit 1"

tap_done
