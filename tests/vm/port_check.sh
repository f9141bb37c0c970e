#!/bin/sh
# SPDX-License-Identifier: MIT
#
# port_check.sh IBKEYS - inside the VM of tests/vm/run: `ibkeys port` reads
# the real /sys/class/infiniband of two soft-RoCE ports. Its P_Keys are
# compared with the sysfs files themselves, its GIDs, types, state and link
# layer with what ibv_devinfo -v reports through libibverbs; --pkey verdicts
# with the port up and down. TAP (tests/lib.sh, beside it in the guest)
# and "# ..." notes.

ibkeys=${1:?usage: port_check.sh PATH-TO-IBKEYS}
IP=/usr/sbin/ip
sysfs=/sys/class/infiniband
tmp=$(mktemp -d) || exit 2
. "$(dirname "$0")/lib.sh"

result() {	# result STATUS DESCRIPTION: a TAP line of this check
	tap "$1" "port: $2"
}

"$ibkeys" port >"$tmp/all" 2>"$tmp/err"
rc=$?
grep -q '^rxe0 port 1: ACTIVE, link layer Ethernet$' "$tmp/all" &&
grep -q '^rxe1 port 1: ACTIVE, link layer Ethernet$' "$tmp/all"
result $(( rc != 0 || $? != 0 )) "\`ibkeys port\` lists rxe0 and rxe1, ACTIVE, Ethernet (exit $rc)"

for dev in rxe0 rxe1; do
	"$ibkeys" port "$dev:1" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	/usr/bin/ibv_devinfo -v -d "$dev" >"$tmp/devinfo" 2>&1

	# GIDs: index, compressed text and type, against libibverbs' view
	sed -n -E 's/^    \[([0-9]+)\] ([^ ]+)  (IB\/RoCE v1|RoCE v2)  .*/\1 \2 \3/p' \
		"$tmp/out" | sed 's/IB\/RoCE v1/RoCE v1/' >"$tmp/gids.ibkeys"
	sed -n -E 's/^[[:space:]]*GID\[ *([0-9]+)\]:[[:space:]]*([^,]+), (.*)$/\1 \2 \3/p' \
		"$tmp/devinfo" >"$tmp/gids.devinfo"
	n=$(wc -l <"$tmp/gids.devinfo")
	cmp -s "$tmp/gids.ibkeys" "$tmp/gids.devinfo"
	same=$?
	result $(( rc != 0 || same != 0 || n == 0 )) \
		"$dev:1: $n GIDs with index, text and type as ibv_devinfo -v lists them"
	[ $same -eq 0 ] || diff "$tmp/gids.ibkeys" "$tmp/gids.devinfo" | sed 's/^/# /'

	# P_Keys: every valid entry of pkeys/* decoded, with its index
	want=0
	got=0
	for f in "$sysfs/$dev/ports/1/pkeys/"*; do
		i=${f##*/}
		k=$(cat "$f")
		[ "$k" = 0x0000 ] && continue
		want=$((want + 1))
		grep -q "^    \[$i\] $k  " "$tmp/out" && got=$((got + 1))
	done
	result $(( want == 0 || got != want )) \
		"$dev:1: $got of $want valid P_Keys of sysfs listed at their index"

	state=$(sed -n 's/^[[:space:]]*state:[[:space:]]*PORT_\([A-Z_]*\) .*/\1/p' "$tmp/devinfo" | head -n 1)
	ll=$(sed -n 's/^[[:space:]]*link_layer:[[:space:]]*\(.*\)$/\1/p' "$tmp/devinfo" | head -n 1)
	grep -q "^$dev port 1: $state, link layer $ll\$" "$tmp/out"
	result $? "$dev:1: state $state and link layer $ll as ibv_devinfo says"
	echo "# port: $(head -n 1 "$tmp/out"); $(grep -c '^    \[' "$tmp/out") entries listed"
done

verdict() {	# verdict PORT P_KEY ERE
	"$ibkeys" port "$1" --pkey "$2" >"$tmp/out" 2>&1
	grep -Eq "$3" "$tmp/out"
	result $? "$1 --pkey $2: $(grep '^may talk' "$tmp/out")"
}

# rxe's table holds the default full key 0xffff only
verdict rxe0:1 0xffff '^may talk: yes \(entry \[0\] 0xffff.*both full'
verdict rxe0:1 0x7fff '^may talk: yes \(entry \[0\] 0xffff.*port is a full member'
verdict rxe0:1 0x8001 '^may talk: no \(partition 0x0001 is not in'
verdict rxe0:1 0x8000 '^may talk: no \(0x8000 is invalid'

# the same port while its netdev is down, then up again
$IP link set veth1 down
sleep 1
verdict rxe1:1 0xffff '^may talk: no \(the port is DOWN'
$IP link set veth1 up
sleep 2
verdict rxe1:1 0xffff '^may talk: yes'

"$ibkeys" port mlx5_0 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && [ ! -s "$tmp/out" ] && grep -q "no RDMA device 'mlx5_0'" "$tmp/err"
result $? "an absent device: exit $rc, $(cat "$tmp/err")"

rm -rf "$tmp"
tap_done
