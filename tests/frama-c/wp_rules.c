/* SPDX-License-Identifier: MIT */
/*
 * wp_rules.c - ACSL contracts of ib_keys.h's access rules, proven by WP
 * (Frama-C 25, Z3 4.8 through Why3), with -wp-rte: each function
 * proven also free of runtime errors.
 *
 * The contracts are put on redeclarations of the header's functions: Frama-C
 * merges them with the definitions, so the header stays as it is. Whatever
 * a function calls has a contract here too, proven with it: WP proves a
 * call by the callee's contract. The rules are stated in mathematical
 * integers; where a rule is about bits (a P_Key's base and membership bit)
 * in the bits the documentation names.
 *
 * The provers know nothing of bitwise operators and of C's conversions but
 * their bit-by-bit axioms; the lemmas first give them the few facts the
 * code needs, each proven, from those axioms, by WP's tactics (-wp-auto:
 * wp:bitrange, wp:bitwised, wp:bitshift, wp:split, wp:bittestrange,
 * wp:range, and wp_strategies.ml's ibk:overflow, ibk:split-if and
 * ibk:mask; the shift lemmas by wp:bitshift alone). Nothing is admitted or
 * assumed but the documented preconditions. tests/frama-c/run gives the
 * options: WP's Typed+cast memory model, in which the header's reads of a
 * const void * header through uint8_t * are casts of char * to uint8_t *.
 */
#include "ib_keys.h"

#define TWO_64		0x10000000000000000

/* IBA 10.9: bits 0-14 are the partition (the base), bit 15 the membership
 * type, 1 full and 0 limited. */
#define PKEY_BASE(k)		((k) & IBK_PKEY_BASE_MASK)
#define PKEY_FULL(k)		(((k) & IBK_PKEY_FULL_MEMBER) != 0)

/* IBA 10.2.4.3: 0x80000000-0xffffffff, the Q_Keys with the MSB set, are
 * controlled. */
#define QKEY_CONTROLLED(q)	((q) >= IBK_QKEY_CONTROLLED)

/* Big-endian fields, one byte at a time, as on the wire. BE16()'s
 * conversion changes no value (lemma be16_range): it is the code's, for
 * the provers to match. */
#define BYTES(p)	((const uint8_t *)(p))
#define BE16(p)		((uint16_t)((p)[0] << 8 | (p)[1]))
#define BE24(p)		((p)[0] << 16 | (p)[1] << 8 | (p)[2])
#define BE32(p)		((p)[0] << 24 | (p)[1] << 16 | (p)[2] << 8 | (p)[3])

/*@ // the base of a key, by bits
    lemma base_range: \forall integer k;
	0 <= PKEY_BASE(k) <= IBK_PKEY_BASE_MASK;
    lemma base_xor: \forall integer a, b;
	PKEY_BASE(a ^ b) == PKEY_BASE(PKEY_BASE(a) ^ PKEY_BASE(b));
    lemma base_xor_back: \forall integer a, b;
	PKEY_BASE(a) == PKEY_BASE(PKEY_BASE(b) ^ PKEY_BASE(a ^ b));
    lemma base_eq: \forall integer a, b;
	PKEY_BASE(a ^ b) == 0 <==> PKEY_BASE(a) == PKEY_BASE(b);

    // bit 0 of a C bool
    lemma bool_bit0: \forall integer b; 0 <= b <= 1 ==>
	((b & 1) != 0 <==> b != 0);

    // the MSB of a 32-bit word is its value from 2^31 up
    lemma msb32: \forall integer q; 0 <= q <= UINT32_MAX ==>
	((q & IBK_QKEY_CONTROLLED) != 0 <==> q >= IBK_QKEY_CONTROLLED);

    // C's conversions as arithmetic
    lemma wrap64: \forall integer x; TWO_64 <= x < 2 * TWO_64 ==>
	(uint64_t)x == x - TWO_64;
    lemma low16_mod: \forall integer x; 0 <= x ==>
	(uint16_t)x == x % 0x10000;
    lemma low16: \forall integer x; 0 <= x ==> (x & 0xffff) == x % 0x10000;
    lemma low2_range: \forall integer x; 0 <= (x & 3) <= 3;

    // shifts as arithmetic
    lemma shr16: \forall integer x; 0 <= x ==> (x >> 16) == x / 0x10000;
    lemma shl8: \forall integer x; 0 <= x ==> (x << 8) == x * 0x100;
    lemma shl9: \forall integer x; 0 <= x ==> (x << 9) == x * 0x200;
    lemma shl16: \forall integer x; 0 <= x ==> (x << 16) == x * 0x10000;
    lemma shl24: \forall integer x; 0 <= x ==> (x << 24) == x * 0x1000000;

    // two bytes side by side fit in 16 bits: BE16()'s conversion, there
    // for the provers, changes no value
    lemma be16_range: \forall integer a, b; 0 <= a <= 0xff && 0 <= b <= 0xff
	==> 0 <= ((a << 8) | b) <= 0xffff;

    // ibk__seconds_to_ns()'s split product
    lemma ns_split: \forall integer x; 0 <= x < 0x40000000 ==>
	((uint64_t)((x >> 16) * 125 << 16) + (x & 0xffff) * 125) << 9 ==
	x * 64000;
 */

/* ------------------------------------------------------------------------
 * P_Key (IBA 10.9)
 * ------------------------------------------------------------------------ */

/*@ assigns \nothing;
    ensures PKEY_BASE(\result) == PKEY_BASE(base);
    ensures PKEY_FULL(\result) <==> full;
 */
static inline ibk_pkey_t ibk_pkey_make(uint16_t base, bool full);

/*@ assigns \nothing;
    ensures \result == PKEY_BASE(pkey);
 */
static inline uint16_t ibk_pkey_base(ibk_pkey_t pkey);

/*@ assigns \nothing;
    ensures \result <==> PKEY_FULL(pkey);
 */
static inline bool ibk_pkey_is_full(ibk_pkey_t pkey);

/* Base 0 is the invalid key, with either membership bit. */
/*@ assigns \nothing;
    ensures \result <==> PKEY_BASE(pkey) != 0;
 */
static inline bool ibk_pkey_is_valid(ibk_pkey_t pkey);

/*@ assigns \nothing;
    ensures PKEY_BASE(\result) == PKEY_BASE(pkey) && PKEY_FULL(\result);
 */
static inline ibk_pkey_t ibk_pkey_to_full(ibk_pkey_t pkey);

/*@ assigns \nothing;
    ensures PKEY_BASE(\result) == PKEY_BASE(pkey) && !PKEY_FULL(\result);
 */
static inline ibk_pkey_t ibk_pkey_to_limited(ibk_pkey_t pkey);

/* IBA 10.9: two QPs may talk iff their keys name the same partition, not
 * the invalid one, and at least one of them is a full member. */
/*@ assigns \nothing;
    ensures \result <==> PKEY_BASE(a) == PKEY_BASE(b) && PKEY_BASE(a) != 0 &&
			 (PKEY_FULL(a) || PKEY_FULL(b));
 */
static inline bool ibk_pkey_match(ibk_pkey_t a, ibk_pkey_t b);

/* ------------------------------------------------------------------------
 * Q_Key (IBA 10.2.4)
 * ------------------------------------------------------------------------ */

/*@ assigns \nothing;
    ensures \result <==> QKEY_CONTROLLED(qkey);
 */
static inline bool ibk_qkey_is_controlled(ibk_qkey_t qkey);

/* A datagram send with a controlled Q_Key in its work request sends the
 * QP's own Q_Key instead, so that a controlled key stays with whoever set
 * up the QP. */
/*@ assigns \nothing;
    ensures QKEY_CONTROLLED(wr_qkey) ==> \result == qp_qkey;
    ensures !QKEY_CONTROLLED(wr_qkey) ==> \result == wr_qkey;
 */
static inline ibk_qkey_t ibk_qkey_select(ibk_qkey_t wr_qkey, ibk_qkey_t qp_qkey);

/* Only a privileged caller (CAP_NET_RAW, as the kernel checks) may put a
 * controlled Q_Key into a QP context. */
/*@ assigns \nothing;
    ensures \result <==> !QKEY_CONTROLLED(qkey) || caller_privileged;
 */
static inline bool ibk_qkey_may_set(ibk_qkey_t qkey, bool caller_privileged);

/* ------------------------------------------------------------------------
 * Memory ranges (IBA 10.6): [iova, iova + length) against the region
 * [base, base + region_length), computed in 128 bits, where a range may
 * end at 2^64 but never past it.
 * ------------------------------------------------------------------------ */

/*@ assigns \nothing;
    ensures \result == (start + length > TWO_64 ? 1 : 0);
 */
static inline uint32_t ibk__range_past_2_64(uint64_t start, uint64_t length);

/* The index of the lowest bit set, for the 4 checks of a range. */
#define LOWEST4(f)	((f) % 2 == 1 ? 0 : (f) % 4 == 2 ? 1 : \
			 (f) % 8 == 4 ? 2 : 3)
/*@ assigns \nothing;
    ensures failed == 0 ==> \result == ok;
    ensures 0 < failed < 16 ==>
	    \result == (unsigned)(first + LOWEST4(failed));
 */
static inline unsigned ibk__first_failure(uint32_t failed, unsigned ok,
					  unsigned first);

/* The first bound crossed, in the documented order. */
/*@ assigns \nothing;
    behavior region_wraps:
	assumes base + region_length > TWO_64;
	ensures \result == IBK_RANGE_REGION_WRAPS;
    behavior wraps:
	assumes base + region_length <= TWO_64;
	assumes iova + length > TWO_64;
	ensures \result == IBK_RANGE_WRAPS;
    behavior below:
	assumes base + region_length <= TWO_64 && iova + length <= TWO_64;
	assumes iova < base;
	ensures \result == IBK_RANGE_BELOW;
    behavior beyond:
	assumes base + region_length <= TWO_64 && iova + length <= TWO_64;
	assumes base <= iova && iova + length > base + region_length;
	ensures \result == IBK_RANGE_BEYOND;
    behavior in:
	assumes base + region_length <= TWO_64 && iova + length <= TWO_64;
	assumes base <= iova && iova + length <= base + region_length;
	ensures \result == IBK_RANGE_IN;
    complete behaviors;
    disjoint behaviors;
 */
static inline enum ibk_range_verdict
ibk_mem_range_check(uint64_t iova, uint64_t length, uint64_t base,
		    uint64_t region_length);

/*@ assigns \nothing;
    ensures \result <==> base + region_length <= TWO_64 && base <= iova &&
			 iova + length <= base + region_length;
 */
static inline bool ibk_mem_range_ok(uint64_t iova, uint64_t length,
				    uint64_t base, uint64_t region_length);

/* ------------------------------------------------------------------------
 * Wire accessors (IBA 9.2 BTH, 12 bytes; 9.3 DETH, 8 bytes): no byte read
 * outside the header, the field's bytes in network order.
 * ------------------------------------------------------------------------ */

/*@ requires \valid_read(p + (0 .. 1));
    assigns \nothing;
    ensures \result == BE16(p);
 */
static inline uint16_t ibk__load_be16(const uint8_t *p);

/*@ requires \valid_read(p + (0 .. 2));
    assigns \nothing;
    ensures \result == BE24(p);
 */
static inline uint32_t ibk__load_be24(const uint8_t *p);

/*@ requires \valid_read(p + (0 .. 3));
    assigns \nothing;
    ensures \result == BE32(p);
 */
static inline uint32_t ibk__load_be32(const uint8_t *p);

/*@ requires \valid_read(BYTES(bth) + (0 .. 11));
    assigns \nothing;
    ensures \result == BYTES(bth)[0];
 */
static inline uint8_t ibk_bth_opcode(const void *bth);

/*@ requires \valid_read(BYTES(bth) + (0 .. 11));
    assigns \nothing;
    ensures \result <==> (BYTES(bth)[1] & 0x80) != 0;
 */
static inline bool ibk_bth_se(const void *bth);

/*@ requires \valid_read(BYTES(bth) + (0 .. 11));
    assigns \nothing;
    ensures \result <==> (BYTES(bth)[1] & 0x40) != 0;
 */
static inline bool ibk_bth_mig(const void *bth);

/*@ requires \valid_read(BYTES(bth) + (0 .. 11));
    assigns \nothing;
    ensures \result == (BYTES(bth)[1] >> 4 & 3);
 */
static inline uint8_t ibk_bth_padcnt(const void *bth);

/*@ requires \valid_read(BYTES(bth) + (0 .. 11));
    assigns \nothing;
    ensures \result == (BYTES(bth)[1] & 0x0f);
 */
static inline uint8_t ibk_bth_tver(const void *bth);

/*@ requires \valid_read(BYTES(bth) + (0 .. 11));
    assigns \nothing;
    ensures \result == BE16(BYTES(bth) + 2);
 */
static inline ibk_pkey_t ibk_bth_pkey(const void *bth);

/*@ requires \valid_read(BYTES(bth) + (0 .. 11));
    assigns \nothing;
    ensures \result <==> (BYTES(bth)[4] & 0x80) != 0;
 */
static inline bool ibk_bth_fecn(const void *bth);

/*@ requires \valid_read(BYTES(bth) + (0 .. 11));
    assigns \nothing;
    ensures \result <==> (BYTES(bth)[4] & 0x40) != 0;
 */
static inline bool ibk_bth_becn(const void *bth);

/*@ requires \valid_read(BYTES(bth) + (0 .. 11));
    assigns \nothing;
    ensures \result == BE24(BYTES(bth) + 5);
 */
static inline uint32_t ibk_bth_dest_qp(const void *bth);

/*@ requires \valid_read(BYTES(bth) + (0 .. 11));
    assigns \nothing;
    ensures \result <==> (BYTES(bth)[8] & 0x80) != 0;
 */
static inline bool ibk_bth_ackreq(const void *bth);

/*@ requires \valid_read(BYTES(bth) + (0 .. 11));
    assigns \nothing;
    ensures \result == BE24(BYTES(bth) + 9);
 */
static inline uint32_t ibk_bth_psn(const void *bth);

/*@ requires \valid_read(BYTES(deth) + (0 .. 7));
    assigns \nothing;
    ensures \result == BE32(BYTES(deth));
 */
static inline ibk_qkey_t ibk_deth_qkey(const void *deth);

/*@ requires \valid_read(BYTES(deth) + (0 .. 7));
    assigns \nothing;
    ensures \result == BE24(BYTES(deth) + 5);
 */
static inline uint32_t ibk_deth_src_qp(const void *deth);

/* ------------------------------------------------------------------------
 * SMP checks (IBA 13.4 MADs, 14.2 the SMA; qib's process_subn())
 * ------------------------------------------------------------------------ */

/*@ requires \valid_read(BYTES(mad) + (0 .. IBK_MAD_LEN - 1));
    assigns \nothing;
    ensures \result == BYTES(mad)[0];
 */
static inline uint8_t ibk_mad_base_version(const void *mad);

/*@ requires \valid_read(BYTES(mad) + (0 .. IBK_MAD_LEN - 1));
    assigns \nothing;
    ensures \result == BYTES(mad)[1];
 */
static inline uint8_t ibk_mad_mgmt_class(const void *mad);

/*@ requires \valid_read(BYTES(mad) + (0 .. IBK_MAD_LEN - 1));
    assigns \nothing;
    ensures \result == BYTES(mad)[2];
 */
static inline uint8_t ibk_mad_class_version(const void *mad);

/*@ requires \valid_read(BYTES(mad) + (0 .. IBK_MAD_LEN - 1));
    assigns \nothing;
    ensures \result == BYTES(mad)[3];
 */
static inline uint8_t ibk_mad_method(const void *mad);

/*@ requires \valid_read(BYTES(smp) + (0 .. IBK_MAD_LEN - 1));
    assigns \nothing;
    ensures \result == BYTES(smp)[7];
 */
static inline uint8_t ibk_smp_hop_cnt(const void *smp);

/* A response (method bit 7), Trap, Report or Send: never answered. */
#define NO_REQUEST(m)	(((m) & IBK_MAD_METHOD_RESP) != 0 ||		\
			 (m) == IBK_MAD_METHOD_TRAP ||			\
			 (m) == IBK_MAD_METHOD_REPORT ||		\
			 (m) == IBK_MAD_METHOD_SEND)
/*@ assigns \nothing;
    ensures \result <==> NO_REQUEST(method);
 */
static inline bool ibk__mad_is_no_request(uint8_t method);

/* Dropped before anything else: no MAD, a length other than 256, a base
 * version other than 1, a class other than the two SMP classes, or a
 * directed route of more than 63 hops. */
#define DROPPED(mad, len)						\
	((mad) == \null || (len) != IBK_MAD_LEN ||			\
	 BYTES(mad)[0] != IBK_MAD_BASE_VERSION ||			\
	 (BYTES(mad)[1] != IBK_MGMT_CLASS_SUBN_LID &&			\
	  BYTES(mad)[1] != IBK_MGMT_CLASS_SUBN_DR) ||			\
	 (BYTES(mad)[1] == IBK_MGMT_CLASS_SUBN_DR &&			\
	  BYTES(mad)[7] > IBK_SMP_MAX_HOPS))
/* The methods an SMA acts on: Get, Set and TrapRepress. */
#define SMP_REQUEST(m)	((m) == IBK_MAD_METHOD_GET ||			\
			 (m) == IBK_MAD_METHOD_SET ||			\
			 (m) == IBK_MAD_METHOD_TRAP_REPRESS)

/* The checks in their order: dropped; a response, Trap, Report or Send
 * (whatever its class version); the class version; the method. */
/*@ requires mad != \null && len == IBK_MAD_LEN ==>
	     \valid_read(BYTES(mad) + (0 .. IBK_MAD_LEN - 1));
    assigns \nothing;
    behavior dropped:
	assumes DROPPED(mad, len);
	ensures \result == IBK_EINVAL;
    behavior no_request:
	assumes !DROPPED(mad, len) && NO_REQUEST(BYTES(mad)[3]);
	ensures \result == IBK_ENOENT;
    behavior bad_version:
	assumes !DROPPED(mad, len) && !NO_REQUEST(BYTES(mad)[3]);
	assumes BYTES(mad)[2] != IBK_SMP_CLASS_VERSION;
	ensures \result == IBK_MAD_STATUS_BAD_VERSION;
    behavior unsupported:
	assumes !DROPPED(mad, len) && !NO_REQUEST(BYTES(mad)[3]);
	assumes BYTES(mad)[2] == IBK_SMP_CLASS_VERSION;
	assumes !SMP_REQUEST(BYTES(mad)[3]);
	ensures \result == IBK_MAD_STATUS_UNSUP_METHOD;
    behavior request:
	assumes !DROPPED(mad, len) && !NO_REQUEST(BYTES(mad)[3]);
	assumes BYTES(mad)[2] == IBK_SMP_CLASS_VERSION;
	assumes SMP_REQUEST(BYTES(mad)[3]);
	ensures \result == 0;
    complete behaviors;
    disjoint behaviors;
 */
static inline int ibk_smp_request_status(const void *mad, size_t len);

/* ------------------------------------------------------------------------
 * M_Key (IBA 14.2.4; qib's and hfi1's check_mkey())
 * ------------------------------------------------------------------------ */

/*@ assigns \nothing;
    ensures \result == s * 1000000000;
 */
static inline uint64_t ibk__seconds_to_ns(uint16_t s);

/* The kernel's time_after_eq(now, deadline), across a wrap of the clock. */
#define TIME_REACHED(now, deadline)					\
	((uint64_t)((now) - (deadline)) < 0x8000000000000000)
/*@ assigns \nothing;
    ensures \result <==> TIME_REACHED(now_ns, deadline_ns);
 */
static inline bool ibk__time_reached(uint64_t now_ns, uint64_t deadline_ns);

/* Of the state before the check: a running lease that has expired, the
 * protect level then in force (0 after an expiry; bits above 3 ignored),
 * and a lease still running. */
#define EXPIRED(st, now)						\
	((st)->lease_running && TIME_REACHED(now, (st)->lease_deadline_ns))
#define LEVEL(st, now)	(EXPIRED(st, now) ? 0 : (st)->protect_bits & 3)
#define RUNNING(st, now) ((st)->lease_running && !EXPIRED(st, now))
#define GOOD_KEY(st, key) ((st)->mkey == 0 || (st)->mkey == (key))

/* The verdict table: a method other than Get, Set and TrapRepress, or a
 * good key, is processed (a good key stops the lease); a bad key on a Get
 * is processed at level 0, with the M_Key hidden at level 1; every other
 * bad key is a violation, which starts the lease (now + the period) unless
 * it runs or its period is 0. */
/*@ requires \valid(st);
    assigns st->lease_running, st->protect_bits, st->lease_deadline_ns;
    ensures \old(EXPIRED(st, now_ns)) ==> st->protect_bits == 0;
    ensures !\old(EXPIRED(st, now_ns)) ==>
	    st->protect_bits == \old(st->protect_bits);
    behavior unguarded:
	assumes !SMP_REQUEST(method);
	ensures \result == IBK_MKEY_PROCESS;
	ensures st->lease_running == \old(RUNNING(st, now_ns));
	ensures st->lease_deadline_ns == \old(st->lease_deadline_ns);
    behavior good_key:
	assumes SMP_REQUEST(method) && GOOD_KEY(st, smp_mkey);
	ensures \result == IBK_MKEY_PROCESS;
	ensures !st->lease_running;
	ensures st->lease_deadline_ns == \old(st->lease_deadline_ns);
    behavior get_level_0:
	assumes method == IBK_MAD_METHOD_GET && !GOOD_KEY(st, smp_mkey);
	assumes LEVEL(st, now_ns) == 0;
	ensures \result == IBK_MKEY_PROCESS;
	ensures st->lease_running == \old(RUNNING(st, now_ns));
	ensures st->lease_deadline_ns == \old(st->lease_deadline_ns);
    behavior get_level_1:
	assumes method == IBK_MAD_METHOD_GET && !GOOD_KEY(st, smp_mkey);
	assumes LEVEL(st, now_ns) == 1;
	ensures \result == IBK_MKEY_PROCESS_HIDE_MKEY;
	ensures st->lease_running == \old(RUNNING(st, now_ns));
	ensures st->lease_deadline_ns == \old(st->lease_deadline_ns);
    behavior violation:
	assumes SMP_REQUEST(method) && !GOOD_KEY(st, smp_mkey);
	assumes method != IBK_MAD_METHOD_GET || LEVEL(st, now_ns) >= 2;
	ensures \result == IBK_MKEY_VIOLATION;
	ensures \old(RUNNING(st, now_ns)) ==>
		st->lease_running &&
		st->lease_deadline_ns == \old(st->lease_deadline_ns);
	ensures !\old(RUNNING(st, now_ns)) && st->lease_period == 0 ==>
		!st->lease_running &&
		st->lease_deadline_ns == \old(st->lease_deadline_ns);
	ensures !\old(RUNNING(st, now_ns)) && st->lease_period != 0 ==>
		st->lease_running &&
		st->lease_deadline_ns ==
		(uint64_t)(now_ns + st->lease_period * 1000000000);
    complete behaviors;
    disjoint behaviors;
 */
static inline enum ibk_mkey_verdict
ibk_mkey_check(struct ibk_mkey_state *st, uint8_t method, uint64_t smp_mkey,
	       uint64_t now_ns);
