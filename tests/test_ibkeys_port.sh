#!/bin/sh
# SPDX-License-Identifier: MIT
#
# test_ibkeys_port.sh IBKEYS - `ibkeys port` against small fake sysfs trees
# laid out as Linux lays out /sys/class/infiniband (the VM suite checks it
# against the real one): decoding, the --pkey verdicts by the membership
# rule, and a clear one-line refusal with exit status 1 for every missing
# file and malformed content. TAP on stdout.

ibkeys=${1:?usage: test_ibkeys_port.sh PATH-TO-IBKEYS}

cmd=port
name=ibkeys-port
. "$(dirname "$0")/cli_lib.sh"

# refused STATUS 'ARGS' TEXT: exits STATUS with nothing on stdout and one
# line on stderr containing TEXT
refused() {
	# shellcheck disable=SC2086
	run $2
	status=0
	[ "$rc" -eq "$1" ] || status=1
	[ -s "$tmp/out" ] && status=1
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || status=1
	grep -Fq -- "$3" "$tmp/err" || status=1
	check_case "$status" "ibkeys port $2: exit $1, says '$3'"
}

# ---- the trees -------------------------------------------------------------

# port DIR STATE LINK_LAYER: a port directory with its two state files
port() {
	mkdir -p "$1/pkeys" "$1/gids" "$1/gid_attrs/types" "$1/gid_attrs/ndevs"
	echo "$2" >"$1/state"
	echo "$3" >"$1/link_layer"
}

# gid DIR INDEX TEXT [TYPE [NDEV]]: one GID slot; no TYPE for an empty one
gid() {
	echo "$3" >"$1/gids/$2"
	[ -n "${4:-}" ] && echo "$4" >"$1/gid_attrs/types/$2"
	[ -n "${5:-}" ] && echo "$5" >"$1/gid_attrs/ndevs/$2"
	:
}

good=$tmp/good
zero=0000:0000:0000:0000:0000:0000:0000:0000

# An InfiniBand HCA with two ports: 1 ACTIVE with four P_Keys (one slot
# empty), 2 DOWN.
ib=$good/mlx5_0/ports/1
port "$ib" "4: ACTIVE" InfiniBand
printf '0xffff\n' >"$ib/pkeys/0"
printf '0x8001\n' >"$ib/pkeys/1"
printf '0x0002\n' >"$ib/pkeys/2"
printf '0x0000\n' >"$ib/pkeys/3"
gid "$ib" 0 fe80:0000:0000:0000:0002:c903:0001:2345 "IB/RoCE v1"
gid "$ib" 1 $zero
ib2=$good/mlx5_0/ports/2
port "$ib2" "1: DOWN" InfiniBand
printf '0xffff\n' >"$ib2/pkeys/0"
gid "$ib2" 0 fe80:0000:0000:0000:0002:c903:0001:2346 "IB/RoCE v1"

# A soft-RoCE port as the VM shows one: the MAC's GID, a hole, IPv4, IPv6.
rxe=$good/rxe0/ports/1
port "$rxe" "4: ACTIVE" Ethernet
printf '0xffff\n' >"$rxe/pkeys/0"
gid "$rxe" 0 fe80:0000:0000:0000:0000:00ff:fe00:00a1 "RoCE v2" veth0
gid "$rxe" 1 $zero
gid "$rxe" 2 0000:0000:0000:0000:0000:ffff:c000:0201 "RoCE v2" veth0
gid "$rxe" 3 2001:0db8:0000:0000:0000:0000:0000:0001 "RoCE v2" veth0
gid "$rxe" 4 $zero

# ---- decoding ----------------------------------------------------------------

expect "--sysfs $good" '^mlx5_0 port 1: ACTIVE, link layer InfiniBand$' \
	'^mlx5_0 port 2: DOWN, link layer InfiniBand$' \
	'^rxe0 port 1: ACTIVE, link layer Ethernet$'
expect "mlx5_0:1 --sysfs $good" \
	'^  P_Key table: 4 entries, 3 valid$' \
	'^    \[0\] 0xffff  full member of partition 0x7fff \(the default partition\)$' \
	'^    \[1\] 0x8001  full member of partition 0x0001$' \
	'^    \[2\] 0x0002  limited member of partition 0x0002$' \
	'^  GID table: 2 entries, 1 in use$' \
	'^    \[0\] fe80::2:c903:1:2345  IB/RoCE v1  -'
expect_not "mlx5_0:1 --sysfs $good" '^    \[3\]'
expect_not "mlx5_0:1 --sysfs $good" '^mlx5_0 port 2'
expect "mlx5_0 --sysfs $good" '^mlx5_0 port 1:' '^mlx5_0 port 2: DOWN'
# fe80::ff:fe00:a1 is the modified EUI-64 of 02:00:00:00:00:a1 (0x02 flipped)
expect "rxe0:1 --sysfs $good" '^  GID table: 5 entries, 3 in use$' \
	'^    \[0\] fe80::ff:fe00:a1  RoCE v2  veth0  MAC 02:00:00:00:00:a1$' \
	'^    \[2\] ::ffff:192\.0\.2\.1  RoCE v2  veth0  IPv4 192\.0\.2\.1$' \
	'^    \[3\] 2001:db8::1  RoCE v2  veth0$'
expect_not "rxe0:1 --sysfs $good" '^    \[[14]\]'

# ---- may the port talk with a peer holding this P_Key? ------------------------
# Same non-zero base and at least one full member; only while ARMED/ACTIVE.
expect "mlx5_0:1 --pkey 0x8001 --sysfs $good" '^may talk: yes \(entry \[1\] 0x8001 .*both full'
expect "mlx5_0:1 --pkey 0x0001 --sysfs $good" '^may talk: yes \(entry \[1\] 0x8001 .*port is a full member'
expect "mlx5_0:1 --pkey 0x8002 --sysfs $good" '^may talk: yes \(entry \[2\] 0x0002 .*peer is a full member'
expect "mlx5_0:1 --pkey 0x0002 --sysfs $good" '^may talk: no \(.*limited.*never talk'
expect "mlx5_0:1 --pkey 0x8003 --sysfs $good" '^may talk: no \(partition 0x0003 is not in'
expect "mlx5_0:1 --pkey 0x7fff --sysfs $good" '^may talk: yes \(entry \[0\] 0xffff'
expect "mlx5_0:1 --pkey 0x8000 --sysfs $good" '^may talk: no \(0x8000 is invalid'
expect "mlx5_0:1 --pkey 0 --sysfs $good" '^may talk: no \(0x0000 is invalid'
expect "mlx5_0:2 --pkey 0xffff --sysfs $good" '^may talk: no \(the port is DOWN'
expect "--pkey 32769 --sysfs $good" '^may talk: yes \(entry \[1\] 0x8001'

# ---- arguments ---------------------------------------------------------------
refused 1 "nosuch --sysfs $good" "no RDMA device 'nosuch'"
refused 1 "mlx5_0:3 --sysfs $good" "mlx5_0 has no port 3"
refused 1 "mlx5_0:0 --sysfs $good" "'mlx5_0:0'"
refused 1 "mlx5_0:x --sysfs $good" "'mlx5_0:x'"
refused 1 ":1 --sysfs $good" "':1'"
refused 1 "mlx5_0 --pkey 0x10000 --sysfs $good" "'0x10000'"
refused 1 "--sysfs $tmp/nowhere" "$tmp/nowhere: No such file or directory"
refused 2 "mlx5_0 --pkey" "usage: ibkeys port"
refused 2 "mlx5_0 rxe0" "usage: ibkeys port"
refused 2 "--frobnicate" "usage: ibkeys port"

# ---- missing files and malformed contents: exit 1, nothing on stdout ------------

# broken NAME: a copy of the good tree to damage; its path in $bad
broken() {
	bad=$tmp/$1
	rm -rf "$bad"
	cp -R "$good" "$bad"
}

broken no-state;     rm "$bad/rxe0/ports/1/state"
refused 1 "--sysfs $bad" "$bad/rxe0/ports/1/state: No such file or directory"
broken no-ll;        rm "$bad/rxe0/ports/1/link_layer"
refused 1 "rxe0 --sysfs $bad" "rxe0/ports/1/link_layer: No such file or directory"
broken no-pkeys;     rm -r "$bad/mlx5_0/ports/1/pkeys"
refused 1 "mlx5_0:1 --sysfs $bad" "mlx5_0/ports/1/pkeys: No such file or directory"
broken gap;          rm "$bad/mlx5_0/ports/1/pkeys/2"
refused 1 "mlx5_0:1 --sysfs $bad" "mlx5_0/ports/1/pkeys/2: No such file or directory"
broken no-gids;      rm -r "$bad/rxe0/ports/1/gids"
refused 1 "rxe0 --sysfs $bad" "rxe0/ports/1/gids: No such file or directory"
broken no-type;      rm "$bad/rxe0/ports/1/gid_attrs/types/2"
refused 1 "rxe0 --sysfs $bad" "rxe0/ports/1/gid_attrs/types/2: No such file or directory"
broken no-ports;     rm -r "$bad/rxe0/ports"
refused 1 "rxe0 --sysfs $bad" "rxe0/ports: No such file or directory"
broken state-text;   echo "banana" >"$bad/rxe0/ports/1/state"
refused 1 "rxe0 --sysfs $bad" "malformed port state 'banana'"
broken state-name;   echo "4: DOWN" >"$bad/rxe0/ports/1/state"
refused 1 "rxe0 --sysfs $bad" "malformed port state '4: DOWN'"
broken state-num;    echo "9: ACTIVE" >"$bad/rxe0/ports/1/state"
refused 1 "rxe0 --sysfs $bad" "malformed port state '9: ACTIVE'"
broken ll-text;      : >"$bad/rxe0/ports/1/link_layer"
refused 1 "rxe0 --sysfs $bad" "malformed link layer ''"
broken pkey-big;     echo "0x10000" >"$bad/mlx5_0/ports/1/pkeys/1"
refused 1 "mlx5_0 --sysfs $bad" "malformed P_Key '0x10000' in $bad/mlx5_0/ports/1/pkeys/1"
broken pkey-text;    echo "full" >"$bad/mlx5_0/ports/1/pkeys/0"
refused 1 "mlx5_0 --sysfs $bad" "malformed P_Key 'full'"
broken pkey-empty;   : >"$bad/mlx5_0/ports/1/pkeys/0"
refused 1 "mlx5_0 --sysfs $bad" "malformed P_Key ''"
broken gid-text;     echo "fe80:::1" >"$bad/rxe0/ports/1/gids/3"
refused 1 "rxe0 --sysfs $bad" "malformed GID 'fe80:::1' in $bad/rxe0/ports/1/gids/3"
broken gid-v4;       echo "192.0.2.1" >"$bad/rxe0/ports/1/gids/3"
refused 1 "rxe0 --sysfs $bad" "malformed GID '192.0.2.1'"
broken type-text;    echo "RoCE v3" >"$bad/rxe0/ports/1/gid_attrs/types/0"
refused 1 "rxe0 --sysfs $bad" "malformed GID type 'RoCE v3'"
broken long-line;    head -c 300 /dev/zero | tr '\0' 'f' >"$bad/rxe0/ports/1/gids/0"
refused 1 "rxe0 --sysfs $bad" "rxe0/ports/1/gids/0: Numerical result out of range"

# A tree from before gid_attrs (Linux 4.x): types unknown, not an error.
broken old;          rm -r "$bad/rxe0/ports/1/gid_attrs"
expect "rxe0 --sysfs $bad" '^    \[2\] ::ffff:192\.0\.2\.1  type unknown  -  IPv4 192\.0\.2\.1$'

# No devices at all: said, exit 0.
mkdir -p "$tmp/empty"
expect "--sysfs $tmp/empty" "^no RDMA devices in $tmp/empty\$"

tap_done
