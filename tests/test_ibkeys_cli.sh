#!/bin/sh
# SPDX-License-Identifier: MIT
#
# test_ibkeys_cli.sh IBKEYS - the explainer (examples/ibkeys.c) must state the
# InfiniBand facts for the inputs below, and refuse malformed input with
# exit status 1 and a one-line message on stderr naming the argument.
# The expected values are worked out from the rules in the comments, not
# copied from the program's output. TAP on stdout.

ibkeys=${1:?usage: test_ibkeys_cli.sh PATH-TO-IBKEYS}

cmd=
name=ibkeys-cli
. "$(dirname "$0")/cli_lib.sh"

# malformed ARG...: exit 1, nothing on stdout, one line on stderr quoting
# the last argument.
malformed() {
	run "$@"
	for bad; do :; done	# the last argument
	status=0
	[ "$rc" -eq 1 ] || status=1
	[ -s "$tmp/out" ] && status=1
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || status=1
	grep -Fq -- "'$bad'" "$tmp/err" || status=1
	check_case "$status" "ibkeys $1 ... '$bad' is refused (exit 1, message on stderr)"
}

# ---- P_Key: bit 15 membership, bits 0-14 the partition; base 0 invalid;
# ---- talk iff same non-zero base and at least one full member.
expect 'pkey 0x8001' 'partition: +0x0001' 'membership: +full' 'valid: +yes'
expect 'pkey 0x0001' 'partition: +0x0001' 'membership: +limited' 'valid: +yes'
expect 'pkey 0x8000' 'partition: +0x0000' 'valid: +no'
expect 'pkey 0x0000' 'valid: +no'
expect 'pkey 0xffff' 'partition: +0x7fff.*default'
expect 'pkey 0x7fff' 'partition: +0x7fff.*default' 'membership: +limited'
expect 'pkey 32769' '^P_Key 0x8001$'
expect_not 'pkey 0x8001' 'may talk'
expect 'pkey 0x8001 0x0001' '^may talk: yes'
expect 'pkey 0x0001 0x8001' '^may talk: yes'
expect 'pkey 0x8001 0x8001' '^may talk: yes'
expect 'pkey 0xffff 0x7fff' '^may talk: yes'
expect 'pkey 0x0001 0x0001' '^may talk: no'
expect 'pkey 0x7fff 0x7fff' '^may talk: no'
expect 'pkey 0x8002 0x0001' '^may talk: no'
expect 'pkey 0x8002 0x8001' '^may talk: no'
expect 'pkey 0x0000 0x0000' '^may talk: no'
expect 'pkey 0x8000 0x8000' '^may talk: no'
expect 'pkey 0x8000 0x0000' '^may talk: no'

# ---- Q_Key ranges: free < 0x80000000 <= app-controlled <= 0x8000ffff <
# ---- reserved (0x80010000 = GSI) <= 0x8fffffff < controlled-unassigned.
expect 'qkey 0x80010000' 'class:.*[Gg][Ss][Ii]' 'controlled: +yes' \
	"on the wire:.*QP context" 'who may set:.*privileged'
expect 'qkey 0x00000b1b' 'class: +free' 'IPoIB' 'controlled: +no' \
	'on the wire:.*0x00000b1b' 'who may set: +any'
expect 'qkey 0' 'class: +free' 'controlled: +no'
expect 'qkey 0x7fffffff' 'class: +free' 'controlled: +no'
expect 'qkey 0x80000000' 'class: +controlled-app' 'controlled: +yes' \
	'on the wire:.*QP context'
expect 'qkey 0x8000ffff' 'class: +controlled-app'
expect 'qkey 0x80010001' 'class: +reserved' 'controlled: +yes'
expect 'qkey 0x8fffffff' 'class: +reserved'
expect 'qkey 0x90000000' 'class: +controlled-unassigned'
expect 'qkey 0xffffffff' 'class: +controlled-unassigned' 'controlled: +yes'

# ---- GID = subnet prefix (upper 64) || GUID (lower 64); text per RFC 5952.
expect 'gid fe80::2:c903:1:2345' '^GID fe80::2:c903:1:2345$' \
	'full form: +fe80:0000:0000:0000:0002:c903:0001:2345$' \
	'subnet prefix: +0xfe80000000000000' \
	'GUID: +0x0002c90300012345 \(0002:c903:0001:2345\)' \
	'kind: +link-local'
expect 'gid FE80:0:0:0:2:C903:1:2345' '^GID fe80::2:c903:1:2345$'
expect 'gid ::' 'kind: +zero'
expect 'gid ff02::1' 'kind: +multicast'
expect_not 'gid ff02::1' 'IPoIB'
# 52:54:00:12:34:56 -> 5054:00ff:fe12:3456 (0x02 flipped, ff:fe inserted)
expect 'gid fe80::5054:ff:fe12:3456' 'MAC 52:54:00:12:34:56'
expect 'gid ::ffff:10.1.2.3' 'kind: +IPv4-mapped' '10\.1\.2\.3'
# an IPv4 group's GID is multicast (Linux rdma_is_multicast_addr)
expect 'gid ::ffff:224.0.0.1' 'kind: +multicast' '224\.0\.0\.1'
expect 'gid ff12:401b:ffff::ffff:ffff' 'IPoIB' 'P_Key 0xffff'
# The MGID carries only full-member P_Keys: 0x7fff there is not IPoIB's.
expect_not 'gid ff12:401b:7fff::ffff:ffff' 'IPoIB'

# ---- IPoIB MGIDs (RFC 4391), PPPP the P_Key with the full bit forced on:
# ---- broadcast ff1S:401b:PPPP:0:0:0:ffff:ffff; an IPv4 group: 401b and
# ---- its low 28 bits (Linux ip_ib_mc_map); an IPv6 group: 601b and its
# ---- low 80 bits (ipv6_ib_mc_map). 224.0.0.251 = e0.00.00.fb -> ::fb;
# ---- 239.255.255.250 -> low 28 bits 0fff:fffa; ff05::1:3 -> ...:1:3.
expect 'mgid 0x8001' '^GID ff12:401b:8001::ffff:ffff$' \
	'full form: +ff12:401b:8001:0000:0000:0000:ffff:ffff$' \
	'IPoIB:.*broadcast.*P_Key 0x8001'
expect 'mgid 0x0001' '^GID ff12:401b:8001::ffff:ffff$'
expect 'mgid 0x8001 2' '^GID ff12:401b:8001::ffff:ffff$'
expect 'mgid 0x7fff global' '^GID ff1e:401b:ffff::ffff:ffff$'
expect 'mgid 0x8001 224.0.0.251' '^GID ff12:401b:8001::fb$' \
	'IPoIB:.*IPv4 group 224\.0\.0\.251'
expect 'mgid 0x8001 239.255.255.250' '^GID ff12:401b:8001::fff:fffa$' \
	'IPv4 group 239\.255\.255\.250'
expect 'mgid 0x8001 site 224.0.0.1' '^GID ff15:401b:8001::1$'
expect 'mgid 0x8001 ff02::1' '^GID ff12:601b:8001::1$' 'IPoIB:.*IPv6'
expect 'mgid 0xffff ff05::1:3 5' '^GID ff15:601b:ffff::1:3$'
expect 'mgid 0x8001 ff02::1:ff00:1234' '^GID ff12:601b:8001::1:ff00:1234$'
expect 'gid ff12:401b:8001::fb' 'IPoIB:.*IPv4 group 224\.0\.0\.251'
# There is no IPv6 broadcast MGID, but 601b with any low 80 bits is IPoIB's.
expect 'gid ff12:601b:8001::1' 'IPoIB:.*IPv6 group'

# ---- The MAC's default GID: fe80::/64 || modified EUI-64; an IPv4
# ---- address's GID: ::ffff:a.b.c.d.
expect 'roce 52:54:00:12:34:56' '^GID fe80::5054:ff:fe12:3456$'
expect 'roce 00:02:c9:01:02:03' '^GID fe80::202:c9ff:fe01:203$'
expect 'roce 192.168.1.2' '^GID ::ffff:192\.168\.1\.2$' \
	'full form: +0000:0000:0000:0000:0000:ffff:c0a8:0102$'
expect 'roce 2001:db8::1' '^GID 2001:db8::1$'

# ---- GUID: both text forms; port GID under the default prefix fe80::/64.
expect 'guid 0x0002c90300012345' '^GUID 0x0002c90300012345$' \
	'colon form: +0002:c903:0001:2345$' '^GID fe80::2:c903:1:2345$'
expect 'guid 0002:c903:0001:2345' '^GUID 0x0002c90300012345$'
expect 'guid 0x1' '^GUID 0x0000000000000001$' '^GID fe80::1$'

# ---- memory keys: key = index << 8 | key byte; the next key is
# ---- ibv_inc_rkey(): key byte + 1 with wrap, index kept.
expect 'rkey 0x12345678' '^R_Key 0x12345678$' 'index: +0x123456 \(1193046\)' \
	'key byte: +0x78' 'next key: +0x12345679'
expect 'rkey 0x123456ff' 'next key: +0x12345600'
expect 'rkey 0xffffffff' 'index: +0xffffff' 'next key: +0xffffff00'
expect 'rkey 0' '^R_Key 0x00000000$' 'index: +0x000000' 'next key: +0x00000001'
expect 'rkey 305419896' '^R_Key 0x12345678$'

# ---- range: [iova, iova + len) inside [base, base + region_len), exactly:
# ---- an end of exactly 2^64 is an end (Linux 6.1 rxe serves an MR ending
# ---- there); an end past it is refused, never compared after wrapping.
expect 'range 0x1000 0x1000 0x1000 0x1000' '^in: '
expect 'range 0x2000 0 0x1000 0x1000' '^in: '
expect 'range 0x1fff 1 0x1000 0x1000' '^in: '
expect 'range 0x1000 0x1001 0x1000 0x1000' '^out: .*ends at 0x2001.*end 0x2000'
expect 'range 0xfff 1 0x1000 0x1000' '^out: .*below'
expect 'range 0x2001 0 0x1000 0x1000' '^out: .*past'
# the rxe wrap: 0xfffffffffffffc00 + 0x400 = 2^64, which u64 sees as 0
expect 'range 0xfffffffffffffc00 0x400 0x1000 0x1000' \
	"^out: the access ends at 2\\^64, past the region's end 0x2000" \
	'rxe.*lets this access through'
expect_not 'range 0xfff 1 0x1000 0x1000' 'lets this access through'
# a region ending exactly at 2^64, and requests up to its last byte
expect 'range 0xfffffffffffff000 0x1000 0xfffffffffffff000 0x1000' \
	'^in: .*= 2\^64 <= 2\^64'
expect 'range 0xffffffffffffffff 1 0xfffffffffffff000 0x1000' '^in: '
expect 'range 0xfffffffffffff000 0xfff 0xfffffffffffff000 0xfff' '^in: '
# one byte more: the region's end or the access's end past 2^64
expect 'range 0xfffffffffffff000 1 0xfffffffffffff000 0x1001' \
	"^out: the region's end"
expect 'range 0xffffffffffffff00 0x200 0 0xffffffffffffffff' \
	'^out: iova \+ length is past 2\^64.*0x100\)'

# ---- malformed values: exit 1
malformed pkey zz
malformed pkey ''
malformed pkey -1
malformed pkey +1
malformed pkey 0x
malformed pkey 0x10000
malformed pkey 65536
malformed pkey '1 '
malformed pkey 12abc
malformed pkey 0x8001 0xfffff
# one prefix only: strtoull() would read a second one (found by fuzzing)
malformed pkey 0x0x1
malformed rkey 0X0x12345678
malformed qkey 0x100000000
malformed qkey 18446744073709551616
malformed qkey ''
malformed gid fe80:::1
malformed gid fe80::1%eth0
malformed gid 1.2.3.4
malformed mgid 0x8001 16
malformed mgid 0x8001 ipv5
malformed mgid 0x8001 ipv6
malformed mgid 0x8001 2 5
malformed mgid 0x8001 224.0.0.1 ff02::1
malformed mgid zz
# base 0 is no partition; groups outside 224.0.0.0/4 and ff00::/8
malformed mgid 0x8000
malformed mgid 0x0000
malformed mgid 0x8001 10.0.0.1
malformed mgid 0x8001 255.255.255.255
malformed mgid 0x8001 fe80::1
malformed roce 52:54:00:12:34
malformed roce 52:54:00:12:34:567
malformed roce 1.2.3
malformed guid 0x
malformed guid 0x00000000000000001
malformed guid 2c9:3:1:2345
malformed rkey 0x100000000
malformed rkey zz
malformed range 1 2 3 0x10000000000000000
malformed range 1 2 3 -4

# ---- M_Key (IBA 14.2.4; qib/hfi1 check_mkey()): a bad key on a Get is
# ---- answered at level 0, answered with PortInfo's M_Key hidden at 1, a
# ---- violation at 2 and 3; a bad Set or TrapRepress violates at every
# ---- level; a port M_Key of 0 or an equal key is good; GetResp, Trap,
# ---- Report and Send are never checked.
expect 'mkey 0x1234 0x99 get' 'key: +bad' '^  level 0: +process:' \
	'^  level 1: +process-hide-mkey:' '^  level 2: +violation:' \
	'^  level 3: +violation:.*3 acts as 2'
expect 'mkey 0x1234 0x99 set' '^  level 0: +violation:' \
	'^  level 1: +violation:' '^  level 3: +violation:' 'without a reply' \
	'trap 256'
expect 'mkey 0x1234 0x99 trap-repress' '^  level 0: +violation:' \
	'^  level 1: +violation:'
expect 'mkey 0x1234 0x1234 set' 'key: +good' '^  level 3: +process:'
expect 'mkey 0x1234 0x1234 trap-repress' '^  level 3: +process:.*never answered'
expect 'mkey 0 0x99 set' 'key: +good.*0' '^  level 3: +process:'
expect 'mkey 0x1234 0x99 send' '^  level 3: +process:.*never answered'
expect 'mkey 0x1234 0x99 getresp' '^  level 2: +process:'
expect 'mkey 0x1234 0x99 0x05' 'SubnTrap \(0x05\)' '^  level 2: +process:'
expect_not 'mkey 0x1234 0x99 get' 'level 4'
malformed mkey 0x1234 0x99 bogus
run mkey 0x10000000000000000 1 get
status=0
[ "$rc" -eq 1 ] && [ ! -s "$tmp/out" ] &&
	grep -Fq "'0x10000000000000000'" "$tmp/err" || status=1
check_case "$status" "ibkeys mkey with a 65-bit port M_Key is refused (exit 1)"
malformed mkey 1 2 0x100

# ---- Notices (IBA 14.2.5.1, layouts of traps 256 and 257/258 as in
# ---- OpenSM's ib_types.h), written here byte by byte. Generic, type 2
# ---- (security), producer 1 (CA), trap 0x0101 = 257, issuer LID 0x0042;
# ---- DataDetails: reserved, LIDADDR1 0x1234, LIDADDR2 0x5678, KEY
# ---- 0x00008005, SL 9 | QP1 0xabcdef, QP2 0x000123, GIDADDR1, GIDADDR2.
n257="82000001 0101 0042 0000 0000 1234 5678 00008005 90abcdef 00000123"
n257="$n257 fe800000000000000002c90300012345 fe80000000000000000000000000abcd"
n257="$n257 00000000"
expect "trap $(echo $n257 | tr -d ' ')" 'trap 257' 'type 2 \(security\)' \
	'issuer LID 0x0042' 'LIDADDR1: +0x1234' 'LIDADDR2: +0x5678' \
	'KEY: +0x00008005' 'SL: +9$' 'QP1: +0xabcdef' 'QP2: +0x000123' \
	'GIDADDR1: +fe80::2:c903:1:2345$' 'GIDADDR2: +fe80::abcd$' \
	'carried P_Key 0x8005'
# 258: the same layout, the KEY a Q_Key
n258=$(echo "$n257" | sed 's/0101/0102/; s/00008005/80010000/')
expect "trap $(echo $n258 | tr -d ' ')" 'trap 258' 'KEY: +0x80010000' \
	'carried Q_Key 0x80010000'
# 256: LIDADDR 0x0042, DRSLID 0xffff, METHOD 0x02, ATTRIBUTEID 0x0016,
# ATTRIBUTEMODIFIER 0x00030001, M_KEY, byte 23 = DRNotice 0x80 |
# DRPathTruncated 0x40 | 3 hops, return path 1 2 3.
zeros=$(printf '%054d' 0)
n256="8200000101000007 0000 0000 0042 ffff 02 00 0016 00030001"
n256="$n256 0badc0ffee000001 00 c3 010203$zeros"
expect "trap $(echo $n256 | tr -d ' ')" 'trap 256' \
	'Bad M_Key 0x0badc0ffee000001 from LID 0x0042 attempted SubnSet' \
	'ATTRIBUTEID: +0x0016' 'ATTRMODIFIER: +0x00030001' \
	'DRNotice: +yes' 'DRSLID: +0xffff' 'DRHopCount: +3 .*truncated' \
	'return path: +1,2,3$'
# the same Notice inside a 256-byte SubnTrap SMP, from a file
smp="01010105 0000 0000 0000000000000001 0002 0000 00000000"
smp="$smp 0000000000000000 $(printf '%064d' 0)"
printf '%s%s%s' "$(echo $smp | tr -d ' ')" "$(echo $n256 | tr -d ' ')" \
	"$(printf '%0256d' 0)" | sed 's/../\\x&/g' | xargs -0 printf >"$tmp/smp.bin"
expect "trap $tmp/smp.bin" 'trap 256' 'DRHopCount: +3'
malformed trap 0011
malformed trap zz
malformed trap "$(echo "$n257" | tr -d ' ' | sed 's/0101/0100/')"

# ---- usage: --help on stdout (0); no or wrong arguments on stderr (2)
run --help
status=$rc
grep -q usage "$tmp/out" || status=1
check_case "$status" "ibkeys --help prints usage on stdout, exit 0"

run
status=0
[ "$rc" -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q usage "$tmp/err" || status=1
check_case "$status" "ibkeys with no arguments: usage on stderr, exit 2"

run frobnicate 1
status=0
[ "$rc" -eq 2 ] && grep -Fq frobnicate "$tmp/err" || status=1
check_case "$status" "ibkeys frobnicate: unknown command, exit 2"

run pkey 1 2 3
status=0
[ "$rc" -eq 2 ] && grep -q usage "$tmp/err" || status=1
check_case "$status" "ibkeys pkey with three keys: usage, exit 2"

run range 1 2 3
status=0
[ "$rc" -eq 2 ] && grep -q usage "$tmp/err" || status=1
check_case "$status" "ibkeys range with three numbers: usage, exit 2"

tap_done
