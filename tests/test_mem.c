/* SPDX-License-Identifier: MIT */
/*
 * test_mem.c - the memory-key rules of ib_keys.h against their sources:
 *
 *  - key format and ibv_inc_rkey(): libibverbs' own inline function where
 *    the build has <infiniband/verbs.h>, worked examples everywhere;
 *  - access flags, completion statuses and opcodes: the values in verbs.h
 *    and opcode.h (native builds), and the opcode headers (IBA table 38,
 *    ib_pack.h), AETH syndromes (rxe_comp.c check_ack()) and access flags
 *    (verbs.h) written out here;
 *  - the range check against an exact 128-bit model on millions of random
 *    and edge values near 0 and 2^64, and the rxe wrap case, which the
 *    kernel's u64 form accepts and the library must refuse;
 *  - the responder check: one table row per rule of rxe_resp.c
 *    (check_op_valid(), check_length(), check_rkey()) and rxe_mr.c
 *    (mr_check_range()), rows where two rules fail (the earlier one in rxe's order must win),
 *    and random requests against that order written here as an if-chain;
 *  - windows (rxe_mw.c, with the IBA rules it cites), invalidation and
 *    fast registration (rxe_mr.c), the registration rule (ibv_reg_mr(3),
 *    ib_check_mr_access()): tables of cases, each naming its rule.
 *
 * Nothing here compares the library with its own output.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#ifdef IBK_TEST_HAVE_VERBS
#include <infiniband/opcode.h>
#include <infiniband/verbs.h>
#endif

#include "ib_keys.h"
#include "rng.h"
#include "tap.h"

#define SEED		0x6d656d6b65797321ull	/* "memkeys!" */

static unsigned long diags;	/* failing cases shown (tap_diag_first()) */

/* ------------------------------------------------------------------------
 * Key format: index << 8 | key byte (rdma-core ibv_inc_rkey(), the
 * kernel's ib_inc_rkey())
 * ------------------------------------------------------------------------ */

static void test_rkey_format(void)
{
	unsigned bad = 0, i, step;

	/* index << 8 | key byte (rxe_mr_init(), rxe_alloc_mw()) */
	tap_ok(ibk_rkey_make(0x123456, 0x78) == 0x12345678u &&
	       ibk_rkey_make(0, 0) == 0 &&
	       ibk_rkey_make(0xffffff, 0xff) == 0xffffffffu &&
	       ibk_rkey_make(0x1000001, 0x02) == 0x00000102u,
	       "rkey 0x123456|0x78 = 0x12345678; the index keeps 24 bits");
	tap_ok(ibk_rkey_index(0x12345678u) == 0x123456 &&
	       ibk_rkey_byte(0x12345678u) == 0x78 &&
	       ibk_rkey_index(0xffffffffu) == 0xffffff,
	       "split 0x12345678: index 0x123456, key byte 0x78");
	for (i = 0; i < 100000; i++) {
		uint32_t index = (uint32_t)test_rng64() & IBK_RKEY_INDEX_MAX;
		uint8_t byte = (uint8_t)test_rng64();
		ibk_rkey_t k = ibk_rkey_make(index, byte);

		bad += ibk_rkey_index(k) != index || ibk_rkey_byte(k) != byte;
	}
	tap_ok(bad == 0, "make/index/byte round-trip on 100000 random keys "
	       "(%u bad)", bad);

	/* ibv_inc_rkey(): 8 low bits + 1 with wrap, index kept */
	tap_ok(ibk_rkey_next(0x12345600u) == 0x12345601u &&
	       ibk_rkey_next(0x123456feu) == 0x123456ffu &&
	       ibk_rkey_next(0x123456ffu) == 0x12345600u &&
	       ibk_rkey_next(0xffffffffu) == 0xffffff00u,
	       "next key: 0x..00 -> 0x..01, 0x..ff wraps to 0x..00, the index "
	       "never carries");
	bad = 0;
	for (i = 0; i < 2000; i++) {
		ibk_rkey_t start = (ibk_rkey_t)test_rng64(), k = start;

		for (step = 1; step <= 256; step++) {
			ibk_rkey_t next = ibk_rkey_next(k);

			bad += next == k ||
			       ibk_rkey_index(next) != ibk_rkey_index(start) ||
			       (step < 256 && next == start) ||
			       (step == 256 && next != start);
			k = next;
		}
	}
	tap_ok(bad == 0, "next key never equals the previous one, keeps the "
	       "index, and comes back after exactly 256 steps (%u bad)", bad);
#ifdef IBK_TEST_HAVE_VERBS
	bad = 0;
	for (i = 0; i < 1000000; i++) {
		uint32_t k = i < 512 ? (i & 1 ? 0xffffff00u : 0) + i / 2 :
			     (uint32_t)test_rng64();

		bad += ibk_rkey_next(k) != ibv_inc_rkey(k);
	}
	tap_ok(bad == 0, "ibk_rkey_next == libibverbs ibv_inc_rkey on 10^6 "
	       "keys (%u differ)", bad);
#else
	tap_diag("no <infiniband/verbs.h> in this build: ibv_inc_rkey not "
		 "compared");
#endif
}

/* ------------------------------------------------------------------------
 * Access flags and the registration rule (rdma-core verbs.h, ibv_reg_mr(3),
 * the kernel's ib_check_mr_access())
 * ------------------------------------------------------------------------ */

static void test_access(void)
{
	uint32_t a, g, r, bit;
	unsigned bad = 0;

	tap_ok(IBK_ACCESS_LOCAL_WRITE == 0x1 && IBK_ACCESS_REMOTE_WRITE == 0x2 &&
	       IBK_ACCESS_REMOTE_READ == 0x4 && IBK_ACCESS_REMOTE_ATOMIC == 0x8 &&
	       IBK_ACCESS_MW_BIND == 0x10 && IBK_ACCESS_ZERO_BASED == 0x20 &&
	       IBK_ACCESS_ON_DEMAND == 0x40 && IBK_ACCESS_HUGETLB == 0x80 &&
	       IBK_ACCESS_FLUSH_GLOBAL == 0x100 &&
	       IBK_ACCESS_FLUSH_PERSISTENT == 0x200 &&
	       IBK_ACCESS_RELAXED_ORDERING == 1u << 20,
	       "access flags as rdma-core's verbs.h defines them");
#ifdef IBK_TEST_HAVE_VERBS
	tap_ok(IBK_ACCESS_LOCAL_WRITE == IBV_ACCESS_LOCAL_WRITE &&
	       IBK_ACCESS_REMOTE_WRITE == IBV_ACCESS_REMOTE_WRITE &&
	       IBK_ACCESS_REMOTE_READ == IBV_ACCESS_REMOTE_READ &&
	       IBK_ACCESS_REMOTE_ATOMIC == IBV_ACCESS_REMOTE_ATOMIC &&
	       IBK_ACCESS_MW_BIND == IBV_ACCESS_MW_BIND &&
	       IBK_ACCESS_ZERO_BASED == IBV_ACCESS_ZERO_BASED &&
	       IBK_ACCESS_ON_DEMAND == IBV_ACCESS_ON_DEMAND &&
	       IBK_ACCESS_HUGETLB == IBV_ACCESS_HUGETLB &&
	       IBK_ACCESS_RELAXED_ORDERING == IBV_ACCESS_RELAXED_ORDERING &&
	       (int)IBK_MEM_MW1 == (int)IBV_MW_TYPE_1 &&
	       (int)IBK_MEM_MW2 == (int)IBV_MW_TYPE_2,
	       "access flags and window types equal this host's verbs.h");
#endif

	/* ibv_reg_mr(3): remote write or remote atomic needs local write */
	for (a = 0; a < 1u << 11; a++) {
		uint32_t access = (a & 0x3ff) | (a >> 10) << 20;
		bool remote_w_or_a = (access & 0x2) || (access & 0x8);
		bool want = !remote_w_or_a || (access & 0x1);

		bad += ibk_access_reg_ok(access) != want;
	}
	tap_ok(bad == 0 && !ibk_access_reg_ok(IBK_ACCESS_REMOTE_WRITE) &&
	       !ibk_access_reg_ok(IBK_ACCESS_REMOTE_ATOMIC |
				  IBK_ACCESS_REMOTE_READ) &&
	       ibk_access_reg_ok(IBK_ACCESS_REMOTE_READ) &&
	       ibk_access_reg_ok(IBK_ACCESS_LOCAL_WRITE |
				 IBK_ACCESS_REMOTE_WRITE) && ibk_access_reg_ok(0),
	       "registration rule on all 2048 flag sets: remote write/atomic "
	       "needs local write, remote read alone is fine (%u bad)", bad);

	/* requested must be a subset of granted, all bits (newer lookup_mr) */
	bad = 0;
	for (g = 0; g < 1u << 10; g++) {
		for (r = 0; r < 1u << 10; r++) {
			bool all = true;

			for (bit = 1; bit < 1u << 10; bit <<= 1)
				if ((r & bit) && !(g & bit))
					all = false;
			bad += ibk_access_allows(g, r) != all;
		}
	}
	tap_ok(bad == 0 && !ibk_access_allows(IBK_ACCESS_REMOTE_READ,
					      IBK_ACCESS_REMOTE_READ |
					      IBK_ACCESS_REMOTE_WRITE),
	       "requested subset of granted on all 2^20 pairs: a request "
	       "sharing only one bit with the grant is refused, as newer rxe "
	       "does and older rxe did not (%u bad)", bad);
}

/* ------------------------------------------------------------------------
 * The range check against an exact model (rxe mr_check_range(), and the
 * u64 form of later kernels that wraps)
 * ------------------------------------------------------------------------ */

/* Exact sums: 128-bit where the compiler has it, two words elsewhere. */
struct u65 {
	uint64_t lo;
	unsigned hi;		/* the carry: 0 or 1 */
};

static struct u65 add65(uint64_t a, uint64_t b)
{
	struct u65 s;

#ifdef __SIZEOF_INT128__
	__extension__ typedef unsigned __int128 u128;
	u128 t = (u128)a + b;

	s.lo = (uint64_t)t;
	s.hi = (unsigned)(t >> 64);
#else
	s.lo = a + b;
	s.hi = s.lo < a;
#endif
	return s;
}

static bool le65(struct u65 a, struct u65 b)
{
	return a.hi < b.hi || (a.hi == b.hi && a.lo <= b.lo);
}

/* True if @v is above 2^64: a 65-bit value with bits above bit 64. */
static bool above_2_64(struct u65 v)
{
	return v.hi && v.lo;
}

/*
 * The rule: [iova, iova + len) inside [base, base + rlen), sums exact, an
 * end of exactly 2^64 allowed (Linux 6.1 rxe serves an MR at 2^64 - 4096
 * of length 4096 up to its last byte), an end past 2^64 a wrap. The
 * reason, in the documented order.
 */
static enum ibk_range_verdict model_range(uint64_t iova, uint64_t len,
					  uint64_t base, uint64_t rlen)
{
	struct u65 end = add65(iova, len), rend = add65(base, rlen);

	if (above_2_64(rend))
		return IBK_RANGE_REGION_WRAPS;
	if (above_2_64(end))
		return IBK_RANGE_WRAPS;
	if (iova < base)
		return IBK_RANGE_BELOW;
	if (!le65(end, rend))
		return IBK_RANGE_BEYOND;
	return IBK_RANGE_IN;
}

/* The current rxe / siw form, written as the kernel writes it (u64). */
static bool rxe_range_ok(uint64_t iova, uint64_t len, uint64_t base,
			 uint64_t rlen)
{
	return !(iova < base || iova + len > base + rlen);
}

static unsigned range_bad;

static void range_case(uint64_t iova, uint64_t len, uint64_t base,
		       uint64_t rlen)
{
	enum ibk_range_verdict want = model_range(iova, len, base, rlen);
	enum ibk_range_verdict got = ibk_mem_range_check(iova, len, base, rlen);

	if (got != want || ibk_mem_range_ok(iova, len, base, rlen) !=
			   (want == IBK_RANGE_IN)) {
		range_bad++;
		tap_diag_first(&diags,
			       "range iova 0x%llx len 0x%llx base 0x%llx "
			       "rlen 0x%llx: %s, model %s",
			       (unsigned long long)iova, (unsigned long long)len,
			       (unsigned long long)base,
			       (unsigned long long)rlen,
			       ibk_range_verdict_name(got),
			       ibk_range_verdict_name(want));
	}
}

/* A value near 0, near 2^63 or near 2^64, or anything. */
static uint64_t near_edge(void)
{
	uint64_t d = test_rng64() & 0xfff;

	switch (test_rng_below(5)) {
	case 0:  return d;
	case 1:  return 0 - d;
	case 2:  return (1ull << 63) + d - 0x800;
	case 3:  return 0 - (test_rng64() >> (test_rng64() & 63));
	default: return test_rng64();
	}
}

static void test_range(void)
{
	static const uint64_t edges[] = {
		0, 1, 2, 7, 8, 0x400, 0xfff, 0x1000, 0x7fffffff, 0x80000000,
		0xffffffff, 0x100000000ull, 0x7fffffffffffffffull,
		0x8000000000000000ull, 0xfffffffffffffc00ull,
		0xfffffffffffff000ull, 0xfffffffffffffffeull,
		0xffffffffffffffffull,
	};
	const size_t n = sizeof(edges) / sizeof(edges[0]);
	unsigned long cases = 0, i;
	size_t a, b, c, d;

	/* Linux 6.3+ mr_check_range(): iova 0xfffffffffffffc00 + 0x400 = 0 in u64; the range
	 * ends exactly at 2^64, far beyond the region */
	tap_ok(rxe_range_ok(0xfffffffffffffc00ull, 0x400, 0x1000, 0x1000) &&
	       !ibk_mem_range_ok(0xfffffffffffffc00ull, 0x400, 0x1000, 0x1000) &&
	       ibk_mem_range_check(0xfffffffffffffc00ull, 0x400, 0x1000,
				   0x1000) == IBK_RANGE_BEYOND,
	       "the rxe wrap: iova 0xfffffffffffffc00 len 0x400 against "
	       "[0x1000, 0x2000) passes rxe's u64 test and is refused here");
	tap_ok(rxe_range_ok(0xffffffffffffff00ull, 0x1100, 0x1000, 0x1000) &&
	       ibk_mem_range_check(0xffffffffffffff00ull, 0x1100, 0x1000,
				   0x1000) == IBK_RANGE_WRAPS,
	       "a 0x1100-byte write at 0xffffffffffffff00, far above the "
	       "region [0x1000, 0x2000): rxe's test passes it, refused here");
	tap_ok(ibk_mem_range_ok(0x1000, 0x1000, 0x1000, 0x1000) &&
	       !ibk_mem_range_ok(0x1000, 0x1001, 0x1000, 0x1000) &&
	       !ibk_mem_range_ok(0xfff, 1, 0x1000, 0x1000) &&
	       ibk_mem_range_ok(0x2000, 0, 0x1000, 0x1000) &&
	       !ibk_mem_range_ok(0x2001, 0, 0x1000, 0x1000) &&
	       ibk_mem_range_ok(0xfffffffffffffffeull, 1,
				0xfffffffffffff000ull, 0xfff),
	       "exact edges: the whole region, one byte past, one below, "
	       "zero bytes at the end, last byte below 2^64");
	/* Linux 6.1 rxe (as Debian 12 ships it): an MR at iova 2^64 - 4096,
	 * length 4096, registers, and RDMA WRITEs and READs ending exactly
	 * at 2^64 execute; its mr_check_range() never sums iova + length */
	tap_ok(ibk_mem_range_check(0xfffffffffffff000ull, 0x1000,
				   0xfffffffffffff000ull, 0x1000) ==
	       IBK_RANGE_IN &&
	       ibk_mem_range_check(0xffffffffffffff00ull, 0x100,
				   0xfffffffffffff000ull, 0x1000) ==
	       IBK_RANGE_IN &&
	       ibk_mem_range_ok(0xffffffffffffffffull, 1,
				0xfffffffffffff000ull, 0x1000),
	       "a region ending exactly at 2^64 and requests ending there "
	       "are inside (stock 6.1 rxe serves them)");
	tap_ok(ibk_mem_range_check(0xfffffffffffff000ull, 0x1001,
				   0xfffffffffffff000ull, 0x1000) ==
	       IBK_RANGE_WRAPS &&
	       ibk_mem_range_check(0xffffffffffffff00ull, 0x100,
				   0xfffffffffffff000ull, 0x1001) ==
	       IBK_RANGE_REGION_WRAPS &&
	       ibk_mem_range_check(0xffffffffffffff00ull, 0x200,
				   0xfffffffffffff000ull, 0x1000) ==
	       IBK_RANGE_WRAPS &&
	       !ibk_mem_range_ok(0xffffffffffffffffull, 2,
				 0xfffffffffffff000ull, 0x1000),
	       "one byte past 2^64 is out: the request's end, the region's "
	       "end, a wrapped end");

	for (a = 0; a < n; a++)
		for (b = 0; b < n; b++)
			for (c = 0; c < n; c++)
				for (d = 0; d < n; d++, cases++)
					range_case(edges[a], edges[b],
						   edges[c], edges[d]);
	for (i = 0; i < 3000000; i++, cases++) {
		uint64_t base = near_edge(), rlen = near_edge();
		uint64_t iova = test_rng_below(2) ? base + near_edge() :
				near_edge();

		range_case(iova, near_edge(), base, rlen);
	}
	for (i = 0; i < 1000000; i++, cases++) {	/* iova near the end */
		uint64_t base = test_rng64(), rlen = test_rng64() >> 1;
		uint64_t end = base + rlen;
		uint64_t len = test_rng64() & 0xffff;

		range_case(end - len + (test_rng64() & 3) - 1, len, base, rlen);
	}
	tap_ok(range_bad == 0, "range check and reason equal the exact model "
	       "on %lu cases: all 4-tuples of %u edge values, random values "
	       "near 0, 2^63 and 2^64, ends near the region's end (%u bad)",
	       cases, (unsigned)n, range_bad);
}

/* ------------------------------------------------------------------------
 * AETH syndromes (rxe_comp.c check_ack()) and completion statuses
 * ------------------------------------------------------------------------ */

static void test_aeth(void)
{
	unsigned s, bad = 0;

	tap_ok(IBK_NAK_PSN_SEQUENCE == 0x60 && IBK_NAK_INVALID_REQUEST == 0x61 &&
	       IBK_NAK_REMOTE_ACCESS == 0x62 &&
	       IBK_NAK_REMOTE_OPERATIONAL == 0x63 &&
	       IBK_NAK_INVALID_RD_REQUEST == 0x64 &&
	       IBK_AETH_ACK_UNLIMITED == 0x1f,
	       "NAK codes 0x60-0x64 and the unlimited-credit ACK 0x1f");
	tap_ok(IBK_WC_SUCCESS == 0 && IBK_WC_REM_INV_REQ_ERR == 9 &&
	       IBK_WC_REM_ACCESS_ERR == 10 && IBK_WC_REM_OP_ERR == 11,
	       "completion statuses 9, 10, 11 as enum ibv_wc_status numbers them");
#ifdef IBK_TEST_HAVE_VERBS
	tap_ok((int)IBK_WC_SUCCESS == (int)IBV_WC_SUCCESS &&
	       (int)IBK_WC_LOC_QP_OP_ERR == (int)IBV_WC_LOC_QP_OP_ERR &&
	       (int)IBK_WC_MW_BIND_ERR == (int)IBV_WC_MW_BIND_ERR &&
	       (int)IBK_WC_BAD_RESP_ERR == (int)IBV_WC_BAD_RESP_ERR &&
	       (int)IBK_WC_REM_INV_REQ_ERR == (int)IBV_WC_REM_INV_REQ_ERR &&
	       (int)IBK_WC_REM_ACCESS_ERR == (int)IBV_WC_REM_ACCESS_ERR &&
	       (int)IBK_WC_REM_OP_ERR == (int)IBV_WC_REM_OP_ERR &&
	       (int)IBK_WC_RETRY_EXC_ERR == (int)IBV_WC_RETRY_EXC_ERR &&
	       (int)IBK_WC_RNR_RETRY_EXC_ERR == (int)IBV_WC_RNR_RETRY_EXC_ERR,
	       "completion statuses equal this host's enum ibv_wc_status");
#endif
	/* 0b000xxxxx ACK, 0b001xxxxx RNR NAK, 0b011xxxxx NAK, rest reserved */
	for (s = 0; s < 256; s++) {
		uint8_t syn = (uint8_t)s;
		bool ack = s <= 0x1f, rnr = s >= 0x20 && s <= 0x3f;
		bool nak = s >= 0x60 && s <= 0x7f;
		enum ibk_wc_status want;

		if (ack)
			want = IBK_WC_SUCCESS;
		else if (rnr)
			want = IBK_WC_RNR_RETRY_EXC_ERR;	/* retried */
		else if (!nak)
			want = IBK_WC_BAD_RESP_ERR;
		else if (s == 0x60)
			want = IBK_WC_RETRY_EXC_ERR;		/* retried */
		else if (s == 0x61)
			want = IBK_WC_REM_INV_REQ_ERR;
		else if (s == 0x62)
			want = IBK_WC_REM_ACCESS_ERR;
		else		/* 0x63, and rxe check_ack()'s default */
			want = IBK_WC_REM_OP_ERR;
		bad += ibk_aeth_is_ack(syn) != ack ||
		       ibk_aeth_is_rnr_nak(syn) != rnr ||
		       ibk_aeth_is_nak(syn) != nak ||
		       ibk_aeth_value(syn) != (s & 0x1f) ||
		       ibk_aeth_wc_status(syn) != want;
	}
	tap_ok(bad == 0, "all 256 syndromes: type, value and the requester's "
	       "status as rxe_comp.c check_ack() gives it (%u bad)", bad);
}

/* ------------------------------------------------------------------------
 * Which opcodes carry which header (IBA table 38; rxe_opcode.c)
 * ------------------------------------------------------------------------ */

static bool in_list(unsigned op, const uint8_t *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (list[i] == op)
			return true;
	return false;
}

#define IN(op, list) in_list(op, list, sizeof(list))

static void test_opcodes(void)
{
	/* RC, UC and RD WRITE FIRST/ONLY/ONLY_IMM, RC and RD READ request,
	 * RC FLUSH and ATOMIC WRITE (rxe_opcode.c) */
	static const uint8_t reth[] = {
		0x06, 0x0a, 0x0b, 0x0c, 0x1c, 0x1d, 0x26, 0x2a, 0x2b,
		0x46, 0x4a, 0x4b, 0x4c,
	};
	static const uint8_t atomiceth[] = { 0x13, 0x14, 0x53, 0x54 };
	static const uint8_t ieth[] = { 0x16, 0x17 };
	/* READ RESPONSE FIRST, LAST, ONLY (not MIDDLE), ACK, ATOMIC ACK */
	static const uint8_t aeth[] = {
		0x0d, 0x0f, 0x10, 0x11, 0x12, 0x4d, 0x4f, 0x50, 0x51, 0x52,
	};
	static const uint8_t immdt[] = {
		0x03, 0x05, 0x09, 0x0b, 0x23, 0x25, 0x29, 0x2b,
		0x43, 0x45, 0x49, 0x4b, 0x65,
	};
	unsigned op, bad = 0;

	for (op = 0; op < 256; op++) {
		uint8_t o = (uint8_t)op;

		if (ibk_opcode_has_reth(o) != IN(op, reth) ||
		    ibk_opcode_has_atomiceth(o) != IN(op, atomiceth) ||
		    ibk_opcode_has_ieth(o) != IN(op, ieth) ||
		    ibk_opcode_has_aeth(o) != IN(op, aeth) ||
		    ibk_opcode_has_immdt(o) != IN(op, immdt)) {
			bad++;
			tap_diag_first(&diags,
				       "opcode 0x%02x: reth %d atomiceth %d "
				       "ieth %d aeth %d immdt %d", op,
				       ibk_opcode_has_reth(o),
				       ibk_opcode_has_atomiceth(o),
				       ibk_opcode_has_ieth(o),
				       ibk_opcode_has_aeth(o),
				       ibk_opcode_has_immdt(o));
		}
	}
	tap_ok(bad == 0, "all 256 opcodes: RETH, AtomicETH, IETH, AETH and "
	       "ImmDt exactly where IBA table 38 and rxe_opcode.c put them "
	       "(%u bad)", bad);
	tap_ok((IBK_TRANSPORT_RC | IBK_OP_RDMA_WRITE_ONLY) == 0x0a &&
	       (IBK_TRANSPORT_RC | IBK_OP_RDMA_READ_REQUEST) == 0x0c &&
	       (IBK_TRANSPORT_RC | IBK_OP_COMPARE_SWAP) == 0x13 &&
	       (IBK_TRANSPORT_RC | IBK_OP_FETCH_ADD) == 0x14 &&
	       (IBK_TRANSPORT_RC | IBK_OP_SEND_ONLY_INV) == 0x17 &&
	       (IBK_TRANSPORT_RC | IBK_OP_ACKNOWLEDGE) == 0x11 &&
	       (IBK_TRANSPORT_RC | IBK_OP_FLUSH) == 0x1c &&
	       (IBK_TRANSPORT_RC | IBK_OP_ATOMIC_WRITE) == 0x1d &&
	       (IBK_TRANSPORT_UC | IBK_OP_RDMA_WRITE_FIRST) == 0x26,
	       "opcode numbers of the kernel's ib_pack.h");
#ifdef IBK_TEST_HAVE_VERBS
	tap_ok(IBK_OP_SEND_LAST_IMM == IBV_OPCODE_SEND_LAST_WITH_IMMEDIATE &&
	       IBK_OP_SEND_ONLY_IMM == IBV_OPCODE_SEND_ONLY_WITH_IMMEDIATE &&
	       IBK_OP_RDMA_WRITE_FIRST == IBV_OPCODE_RDMA_WRITE_FIRST &&
	       IBK_OP_RDMA_WRITE_MIDDLE == IBV_OPCODE_RDMA_WRITE_MIDDLE &&
	       IBK_OP_RDMA_WRITE_LAST == IBV_OPCODE_RDMA_WRITE_LAST &&
	       IBK_OP_RDMA_WRITE_LAST_IMM ==
	       IBV_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE &&
	       IBK_OP_RDMA_WRITE_ONLY == IBV_OPCODE_RDMA_WRITE_ONLY &&
	       IBK_OP_RDMA_WRITE_ONLY_IMM ==
	       IBV_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE &&
	       IBK_OP_RDMA_READ_REQUEST == IBV_OPCODE_RDMA_READ_REQUEST &&
	       IBK_OP_RDMA_READ_RESPONSE_FIRST ==
	       IBV_OPCODE_RDMA_READ_RESPONSE_FIRST &&
	       IBK_OP_RDMA_READ_RESPONSE_MIDDLE ==
	       IBV_OPCODE_RDMA_READ_RESPONSE_MIDDLE &&
	       IBK_OP_RDMA_READ_RESPONSE_LAST ==
	       IBV_OPCODE_RDMA_READ_RESPONSE_LAST &&
	       IBK_OP_RDMA_READ_RESPONSE_ONLY ==
	       IBV_OPCODE_RDMA_READ_RESPONSE_ONLY &&
	       IBK_OP_ACKNOWLEDGE == IBV_OPCODE_ACKNOWLEDGE &&
	       IBK_OP_ATOMIC_ACKNOWLEDGE == IBV_OPCODE_ATOMIC_ACKNOWLEDGE &&
	       IBK_OP_COMPARE_SWAP == IBV_OPCODE_COMPARE_SWAP &&
	       IBK_OP_FETCH_ADD == IBV_OPCODE_FETCH_ADD &&
	       IBK_TRANSPORT_UC == IBV_OPCODE_UC &&
	       IBK_TRANSPORT_RD == IBV_OPCODE_RD &&
	       IBK_OPCODE_UD_SEND_ONLY_IMM ==
	       IBV_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE,
	       "operation numbers equal libibverbs' <infiniband/opcode.h>");
#endif
}

/* ------------------------------------------------------------------------
 * The responder check (rxe_resp.c check_op_valid(), check_length(),
 * check_rkey(); rxe_mr.c mr_check_range())
 * ------------------------------------------------------------------------ */

#define QPN	0x000123u
#define PD	7u
#define BASE	0x0000700000001000ull
#define LEN	0x10000ull
#define KEY	0x00012a5bu		/* index 0x12a, key byte 0x5b */

/* One request: a packet's BTH and RETH or AtomicETH, built with the
 * setters, the QP it arrives on, and the region a window it names is
 * bound to (unless no_mr). */
struct req {
	uint8_t pkt[IBK_BTH_LEN + IBK_ATOMICETH_LEN];
	struct ibk_mem_qp qp;
	struct ibk_mem_attr mr;
	bool no_mr;
};

static struct ibk_mem_attr good_mr(void);

static void req_init(struct req *q, uint8_t opcode, uint64_t va,
		     uint32_t rkey, uint32_t len)
{
	uint8_t *ext = q->pkt + IBK_BTH_LEN;

	memset(q, 0, sizeof(*q));
	ibk_bth_set_opcode(q->pkt, opcode);
	ibk_bth_set_pkey(q->pkt, 0xffff);
	ibk_bth_set_dest_qp(q->pkt, QPN);
	if (ibk_opcode_has_atomiceth(opcode)) {
		ibk_atomiceth_set_va(ext, va);
		ibk_atomiceth_set_rkey(ext, rkey);
		ibk_atomiceth_set_swap_add(ext, 1);
	} else {
		ibk_reth_set_va(ext, va);
		ibk_reth_set_rkey(ext, rkey);
		ibk_reth_set_dma_len(ext, len);
	}
	q->qp.type = IBK_QPT_RC;
	q->qp.qpn = QPN;
	q->qp.pd = PD;
	q->qp.access = IBK_ACCESS_REMOTE;
	q->mr = good_mr();
}

/* A registered region every request below may use. */
static struct ibk_mem_attr good_mr(void)
{
	struct ibk_mem_attr r;

	memset(&r, 0, sizeof(r));
	r.addr = BASE;
	r.length = LEN;
	r.rkey = KEY;
	r.pd = PD;
	r.access = IBK_ACCESS_LOCAL_WRITE | IBK_ACCESS_REMOTE;
	r.kind = IBK_MEM_MR;
	r.state = IBK_MEM_VALID;
	return r;
}

/* The library's verdict: parse, then check against @r (and q->mr, the
 * region a window is bound to). */
static enum ibk_mem_verdict lib_verdict(const struct req *q,
					const struct ibk_mem_attr *r)
{
	struct ibk_mem_request req;
	enum ibk_mem_verdict v = ibk_mem_request_parse(q->qp.type, q->pkt,
						       &req);

	return v == IBK_MEM_OK || v == IBK_MEM_NO_RKEY ?
	       ibk_mem_check(&q->qp, &req, r, q->no_mr ? NULL : &q->mr) : v;
}

enum mutation {
	M_NONE, M_QP_NO_WRITE, M_QP_NO_READ, M_QP_NO_ATOMIC, M_DMA_HUGE,
	M_ZERO_LEN, M_NO_OBJECT, M_KEY_BYTE, M_DEREGISTERED, M_PD, M_MW2,
	M_MW2_OTHER_QP, M_MW1_UNBOUND, M_NO_ACCESS, M_PARTIAL_ACCESS,
	M_FREE, M_BELOW, M_BEYOND, M_WRAP, M_MISALIGNED, M_ZERO_BASED,
	M_UD_QP, M_TVER, M_UC_READ, M_FLUSH, M_SEND, M_WRITE_MIDDLE,
	M_ATOMIC_WRITE_ZERO, M_MW_PAST_MR, M_MW_NO_MR, M_AW_8_PAST_END,
	M_AW_RETH_PAST_END, M_AT_BASE,
};

struct verdict_case {
	const char *rule;		/* what is being checked, and where */
	uint8_t opcode;
	enum mutation m[2];
	enum ibk_mem_verdict want;
};

#define OP_WRITE	(IBK_TRANSPORT_RC | IBK_OP_RDMA_WRITE_ONLY)
#define OP_READ		(IBK_TRANSPORT_RC | IBK_OP_RDMA_READ_REQUEST)
#define OP_CSWAP	(IBK_TRANSPORT_RC | IBK_OP_COMPARE_SWAP)
#define OP_FADD		(IBK_TRANSPORT_RC | IBK_OP_FETCH_ADD)
#define OP_AWRITE	(IBK_TRANSPORT_RC | IBK_OP_ATOMIC_WRITE)

/* Applies @m to the request, the QP or the object. *@r_null: no object. */
static void mutate(struct req *q, struct ibk_mem_attr *r, bool *r_null,
		   enum mutation m)
{
	uint8_t *ext = q->pkt + IBK_BTH_LEN;

	switch (m) {
	case M_NONE:
		break;
	case M_QP_NO_WRITE:
		q->qp.access &= ~IBK_ACCESS_REMOTE_WRITE;
		break;
	case M_QP_NO_READ:
		q->qp.access &= ~IBK_ACCESS_REMOTE_READ;
		break;
	case M_QP_NO_ATOMIC:
		q->qp.access &= ~IBK_ACCESS_REMOTE_ATOMIC;
		break;
	case M_DMA_HUGE:
		ibk_reth_set_dma_len(ext, 0x80000001u);
		break;
	case M_ZERO_LEN:
		ibk_reth_set_dma_len(ext, 0);
		break;
	case M_NO_OBJECT:
		*r_null = true;
		break;
	case M_KEY_BYTE:
		r->rkey = ibk_rkey_next(r->rkey);
		break;
	case M_DEREGISTERED:
		r->state = IBK_MEM_INVALID;
		break;
	case M_PD:
		r->pd = PD + 1;
		break;
	case M_MW2:
		r->kind = IBK_MEM_MW2;
		r->qpn = QPN;
		break;
	case M_MW2_OTHER_QP:
		r->kind = IBK_MEM_MW2;
		r->qpn = QPN + 1;
		break;
	case M_MW1_UNBOUND:
		r->kind = IBK_MEM_MW1;
		r->length = 0;
		break;
	case M_NO_ACCESS:
		r->access &= ~IBK_ACCESS_REMOTE;
		break;
	case M_PARTIAL_ACCESS:	/* shares LOCAL_WRITE only: "any bit" passed */
		r->access = IBK_ACCESS_LOCAL_WRITE;
		q->qp.access |= IBK_ACCESS_LOCAL_WRITE;
		break;
	case M_FREE:
		r->state = IBK_MEM_FREE;
		break;
	case M_AT_BASE:		/* the object's first byte */
		ibk_reth_set_va(ext, BASE);
		ibk_atomiceth_set_va(ext, BASE);
		break;
	case M_BELOW:
		ibk_reth_set_va(ext, BASE - 1);
		ibk_atomiceth_set_va(ext, BASE - 8);
		break;
	case M_BEYOND:	/* an atomic's 8 bytes straddle the end, unaligned */
		ibk_reth_set_va(ext, BASE + LEN - ibk_reth_dma_len(ext) + 1);
		ibk_atomiceth_set_va(ext, BASE + LEN - 4);
		break;
	case M_WRAP:		/* the rxe wrap, against a region at the top */
		r->addr = 0xfffffffffffff000ull;
		r->length = 0xfff;
		ibk_reth_set_va(ext, 0xfffffffffffffc00ull);
		ibk_reth_set_dma_len(ext, 0x400);
		ibk_atomiceth_set_va(ext, 0xfffffffffffffff8ull);
		break;
	case M_MISALIGNED:
		ibk_atomiceth_set_va(ext, BASE + 4);
		ibk_reth_set_va(ext, BASE + 4);
		break;
	case M_ZERO_BASED:	/* a window's addresses become offsets from
				 * 0; a region's stay its iova's */
		r->access |= IBK_ACCESS_ZERO_BASED;
		ibk_reth_set_va(ext, 0x100);
		ibk_atomiceth_set_va(ext, 0x100);
		break;
	case M_UD_QP:
		q->qp.type = IBK_QPT_UD;
		break;
	case M_TVER:
		ibk_bth_set_tver(q->pkt, 1);
		break;
	case M_UC_READ:
		q->qp.type = IBK_QPT_UC;
		ibk_bth_set_opcode(q->pkt, IBK_TRANSPORT_UC |
				   IBK_OP_RDMA_READ_REQUEST);
		break;
	case M_FLUSH:
		ibk_bth_set_opcode(q->pkt, IBK_TRANSPORT_RC | IBK_OP_FLUSH);
		break;
	case M_SEND:
		ibk_bth_set_opcode(q->pkt, IBK_TRANSPORT_RC | IBK_OP_SEND_ONLY);
		break;
	case M_WRITE_MIDDLE:
		ibk_bth_set_opcode(q->pkt, IBK_TRANSPORT_RC |
				   IBK_OP_RDMA_WRITE_MIDDLE);
		break;
	case M_ATOMIC_WRITE_ZERO:
		ibk_bth_set_opcode(q->pkt, OP_AWRITE);
		ibk_reth_set_dma_len(ext, 0);
		r->rkey ^= 1;
		break;
	case M_AW_8_PAST_END:	/* RETH length 0; the region ends 4 bytes
				 * into the 8 the ATOMIC WRITE writes */
		ibk_bth_set_opcode(q->pkt, OP_AWRITE);
		ibk_reth_set_va(ext, BASE + LEN - 8);
		ibk_reth_set_dma_len(ext, 0);
		r->length = LEN - 4;
		break;
	case M_AW_RETH_PAST_END: /* 8 bytes in; the RETH names 16 */
		ibk_bth_set_opcode(q->pkt, OP_AWRITE);
		ibk_reth_set_va(ext, BASE + LEN - 8);
		ibk_reth_set_dma_len(ext, 16);
		break;
	case M_MW_PAST_MR:	/* a zero-based type 2 window half past its MR */
		r->kind = IBK_MEM_MW2;
		r->qpn = QPN;
		r->access |= IBK_ACCESS_ZERO_BASED;
		r->addr = BASE + LEN / 2;
		ibk_reth_set_va(ext, LEN / 2);
		ibk_atomiceth_set_va(ext, LEN / 2);
		break;
	case M_MW_NO_MR:
		r->kind = IBK_MEM_MW1;
		q->no_mr = true;
		break;
	}
}

static const struct verdict_case verdict_cases[] = {
	/* the requests as built are granted */
	{ "WRITE ONLY inside the region", OP_WRITE, { M_NONE }, IBK_MEM_OK },
	{ "READ inside the region", OP_READ, { M_NONE }, IBK_MEM_OK },
	{ "COMPARE SWAP inside the region", OP_CSWAP, { M_NONE }, IBK_MEM_OK },
	{ "FETCH ADD inside the region", OP_FADD, { M_NONE }, IBK_MEM_OK },
	{ "ATOMIC WRITE inside the region (REMOTE_WRITE)", OP_AWRITE,
	  { M_NONE }, IBK_MEM_OK },
	/* header checks first (hdr_check, check_type_state): silent drop */
	{ "RC opcode to a UD QP: header drop", OP_WRITE, { M_UD_QP },
	  IBK_MEM_DROP_HEADER },
	{ "TVer 1: header drop", OP_READ, { M_TVER, M_KEY_BYTE },
	  IBK_MEM_DROP_HEADER },
	{ "UC defines no READ: 0x2c passes the transport check (rxe "
	  "check_type_state) and carries no R_Key", OP_READ, { M_UC_READ },
	  IBK_MEM_NO_RKEY },
	{ "SEND carries no R_Key", OP_WRITE, { M_SEND, M_KEY_BYTE },
	  IBK_MEM_NO_RKEY },
	{ "WRITE MIDDLE carries no R_Key", OP_WRITE,
	  { M_WRITE_MIDDLE, M_NO_OBJECT }, IBK_MEM_NO_RKEY },
	{ "FLUSH is refused as an invalid request", OP_WRITE, { M_FLUSH },
	  IBK_MEM_ERR_OPCODE },
	/* check_op_valid: QP access flags, NAK 0x61 not 0x62 */
	{ "rxe_resp.c check_op_valid: WRITE to a QP without REMOTE_WRITE", OP_WRITE,
	  { M_QP_NO_WRITE }, IBK_MEM_ERR_QP_ACCESS },
	{ "rxe_resp.c check_op_valid: READ to a QP without REMOTE_READ", OP_READ,
	  { M_QP_NO_READ }, IBK_MEM_ERR_QP_ACCESS },
	{ "rxe_resp.c check_op_valid: ATOMIC to a QP without REMOTE_ATOMIC",
	  OP_FADD, { M_QP_NO_ATOMIC }, IBK_MEM_ERR_QP_ACCESS },
	{ "rxe_resp.c check_op_valid: ATOMIC WRITE needs the QP's REMOTE_WRITE",
	  OP_AWRITE, { M_QP_NO_WRITE }, IBK_MEM_ERR_QP_ACCESS },
	{ "rxe_resp.c check_op_valid comes before the key", OP_READ,
	  { M_QP_NO_READ, M_NO_OBJECT }, IBK_MEM_ERR_QP_ACCESS },
	/* check_length: DMA length > 2^31 */
	{ "rxe_resp.c check_length: DMA length 2^31 + 1", OP_WRITE, { M_DMA_HUGE },
	  IBK_MEM_ERR_LENGTH },
	{ "rxe_resp.c check_length comes before the key", OP_READ,
	  { M_DMA_HUGE, M_KEY_BYTE }, IBK_MEM_ERR_LENGTH },
	{ "rxe_resp.c QP access comes before length", OP_WRITE,
	  { M_QP_NO_WRITE, M_DMA_HUGE }, IBK_MEM_ERR_QP_ACCESS },
	/* zero length: no key, no address */
	{ "rxe_resp.c zero-length WRITE: no R_Key check at all", OP_WRITE,
	  { M_ZERO_LEN, M_NO_OBJECT }, IBK_MEM_OK },
	{ "rxe_resp.c zero-length READ with a wrong key byte and PD: granted",
	  OP_READ, { M_ZERO_LEN, M_PD }, IBK_MEM_OK },
	{ "rxe_resp.c zero length still needs the QP's access", OP_READ,
	  { M_ZERO_LEN, M_QP_NO_READ }, IBK_MEM_ERR_QP_ACCESS },
	{ "rxe_resp.c an ATOMIC WRITE of length 0 is still checked", OP_WRITE,
	  { M_ATOMIC_WRITE_ZERO }, IBK_MEM_ERR_KEY },
	{ "oA19-28 an ATOMIC WRITE's 8 bytes lie in the region, whatever "
	  "its RETH's length (rxe_mr_do_atomic_write)", OP_WRITE,
	  { M_AW_8_PAST_END }, IBK_MEM_ERR_RANGE },
	{ "rxe_resp.c and so does the range its RETH names (rxe check_rkey)",
	  OP_WRITE, { M_AW_RETH_PAST_END }, IBK_MEM_ERR_RANGE },
	{ "check_op_valid on every WRITE packet: a WRITE MIDDLE to a QP "
	  "without REMOTE_WRITE", OP_WRITE, { M_WRITE_MIDDLE, M_QP_NO_WRITE },
	  IBK_MEM_ERR_QP_ACCESS },
	/* MR lookup: key, PD, access, state (lookup_mr) */
	{ "rxe_resp.c MR lookup: no object at the index", OP_WRITE, { M_NO_OBJECT },
	  IBK_MEM_ERR_KEY },
	{ "rxe lookup_mr(): the whole 32-bit key: other key byte", OP_READ, { M_KEY_BYTE },
	  IBK_MEM_ERR_KEY },
	{ "rxe_mr.c a deregistered region is no object", OP_READ,
	  { M_DEREGISTERED }, IBK_MEM_ERR_KEY },
	{ "rxe_resp.c MR PD != QP PD", OP_WRITE, { M_PD }, IBK_MEM_ERR_PD },
	{ "rxe_resp.c MR without REMOTE_WRITE", OP_WRITE, { M_NO_ACCESS },
	  IBK_MEM_ERR_ACCESS },
	{ "rxe_resp.c MR without REMOTE_READ", OP_READ, { M_NO_ACCESS },
	  IBK_MEM_ERR_ACCESS },
	{ "rxe_resp.c MR without REMOTE_ATOMIC", OP_CSWAP, { M_NO_ACCESS },
	  IBK_MEM_ERR_ACCESS },
	{ "rxe_resp.c all bits, not any: MR sharing only LOCAL_WRITE", OP_WRITE,
	  { M_PARTIAL_ACCESS }, IBK_MEM_ERR_ACCESS },
	{ "rxe_mr.c MR not VALID (FREE after invalidate)", OP_READ, { M_FREE },
	  IBK_MEM_ERR_STATE },
	{ "rxe_resp.c key comes before PD", OP_READ, { M_KEY_BYTE, M_PD },
	  IBK_MEM_ERR_KEY },
	{ "rxe_resp.c PD comes before access", OP_WRITE, { M_PD, M_NO_ACCESS },
	  IBK_MEM_ERR_PD },
	{ "rxe_resp.c access comes before state", OP_WRITE, { M_NO_ACCESS, M_FREE },
	  IBK_MEM_ERR_ACCESS },
	{ "rxe_resp.c state comes before bounds", OP_READ, { M_FREE, M_BEYOND },
	  IBK_MEM_ERR_STATE },
	/* MW lookup: key, PD, type 2 QP, length 0, access, state */
	{ "rxe_mw.c type 2 window used by its QP", OP_WRITE, { M_MW2 }, IBK_MEM_OK },
	{ "rxe_mw.c type 2 window used from another QP", OP_WRITE,
	  { M_MW2_OTHER_QP }, IBK_MEM_ERR_WINDOW_QP },
	{ "rxe_resp.c window PD before its QP", OP_READ, { M_MW2_OTHER_QP, M_PD },
	  IBK_MEM_ERR_PD },
	{ "rxe_resp.c window QP before access", OP_WRITE,
	  { M_MW2_OTHER_QP, M_NO_ACCESS }, IBK_MEM_ERR_WINDOW_QP },
	{ "rxe_resp.c window of length 0 (type 1 unbound)", OP_READ,
	  { M_MW1_UNBOUND }, IBK_MEM_ERR_UNBOUND },
	{ "rxe_resp.c unbound before access", OP_READ,
	  { M_MW1_UNBOUND, M_NO_ACCESS }, IBK_MEM_ERR_UNBOUND },
	/* bounds (mr_check_range) and the wrap of the u64 form */
	{ "rxe_resp.c bounds: one byte below the base", OP_WRITE, { M_BELOW },
	  IBK_MEM_ERR_RANGE },
	{ "rxe_resp.c bounds: one byte past the end", OP_READ, { M_BEYOND },
	  IBK_MEM_ERR_RANGE },
	{ "rxe_resp.c bounds: ATOMIC straddling the end", OP_FADD, { M_BEYOND },
	  IBK_MEM_ERR_RANGE },
	{ "rxe mr_check_range(): the rxe wrap: iova + length wraps to a small value", OP_WRITE,
	  { M_WRAP }, IBK_MEM_ERR_RANGE },
	{ "rxe mr_check_range(): the wrap on a READ", OP_READ, { M_WRAP }, IBK_MEM_ERR_RANGE },
	/* a region's zero-based flag is not read at access: its iova is
	 * the base (rxe check_rkey() offsets only a window;
	 * mr_check_range() compares with mr->ibmr.iova) */
	{ "rxe check_rkey(): a region registered zero-based, offset 0x100: "
	  "below its iova", OP_WRITE, { M_ZERO_BASED }, IBK_MEM_ERR_RANGE },
	{ "rxe check_rkey(): a region registered zero-based, READ at its "
	  "iova", OP_READ, { M_ZERO_BASED, M_AT_BASE }, IBK_MEM_OK },
	{ "rxe_resp.c zero-based window", OP_CSWAP, { M_ZERO_BASED, M_MW2 },
	  IBK_MEM_OK },
	/* a window reaches only its MR (C10-75; rxe check_rkey() then
	 * mr_check_range(mr, va + mw->addr, resid)) */
	{ "C10-75 a zero-based window's offset inside the window but past "
	  "its MR", OP_WRITE, { M_MW_PAST_MR }, IBK_MEM_ERR_RANGE },
	{ "C10-75 an ATOMIC through a window past its MR", OP_FADD,
	  { M_MW_PAST_MR }, IBK_MEM_ERR_RANGE },
	{ "a window with no MR reaches nothing", OP_READ, { M_MW_NO_MR },
	  IBK_MEM_ERR_RANGE },
	/* atomic alignment (atomic_reply): NAK 0x61, after the bounds */
	{ "rxe_resp.c ATOMIC at an address not 8-aligned", OP_CSWAP, { M_MISALIGNED },
	  IBK_MEM_ERR_ALIGN },
	{ "rxe_resp.c ATOMIC WRITE at an address not 8-aligned", OP_AWRITE,
	  { M_MISALIGNED }, IBK_MEM_ERR_ALIGN },
	{ "an RDMA WRITE need not be aligned", OP_WRITE, { M_MISALIGNED },
	  IBK_MEM_OK },
	{ "rxe_resp.c bounds come before alignment: the straddling ATOMIC is "
	  "4-aligned", OP_CSWAP, { M_BEYOND }, IBK_MEM_ERR_RANGE },
};

static void test_verdict_table(void)
{
	size_t i, n = sizeof(verdict_cases) / sizeof(verdict_cases[0]);
	unsigned bad = 0;

	for (i = 0; i < n; i++) {
		const struct verdict_case *c = &verdict_cases[i];
		struct ibk_mem_attr r = good_mr();
		bool r_null = false;
		struct req q;
		enum ibk_mem_verdict v;
		int k;

		req_init(&q, c->opcode, BASE + 0x40, KEY,
			 c->opcode == OP_AWRITE ? 8 : 0x100);
		for (k = 0; k < 2; k++)
			mutate(&q, &r, &r_null, c->m[k]);
		v = lib_verdict(&q, r_null ? NULL : &r);
		if (!tap_ok(v == c->want, "%s: %s", c->rule,
			    ibk_mem_verdict_name(c->want)))
			tap_diag("got %s", ibk_mem_verdict_name(v));
		bad += v != c->want;
	}
	(void)bad;
}

/* Which NAK each verdict sends (rxe_resp.c), what the requester sees
 * (rxe_comp.c check_ack()). */
static void test_verdict_naks(void)
{
	static const struct {
		enum ibk_mem_verdict v;
		uint8_t nak;
		enum ibk_wc_status status;
	} rows[] = {
		{ IBK_MEM_OK, 0, IBK_WC_SUCCESS },
		{ IBK_MEM_NO_RKEY, 0, IBK_WC_SUCCESS },
		{ IBK_MEM_DROP_HEADER, 0, IBK_WC_RETRY_EXC_ERR },
		{ IBK_MEM_ERR_OPCODE, 0x61, IBK_WC_REM_INV_REQ_ERR },
		{ IBK_MEM_ERR_QP_ACCESS, 0x61, IBK_WC_REM_INV_REQ_ERR },
		{ IBK_MEM_ERR_LENGTH, 0x61, IBK_WC_REM_INV_REQ_ERR },
		{ IBK_MEM_ERR_KEY, 0x62, IBK_WC_REM_ACCESS_ERR },
		{ IBK_MEM_ERR_PD, 0x62, IBK_WC_REM_ACCESS_ERR },
		{ IBK_MEM_ERR_WINDOW_QP, 0x62, IBK_WC_REM_ACCESS_ERR },
		{ IBK_MEM_ERR_UNBOUND, 0x62, IBK_WC_REM_ACCESS_ERR },
		{ IBK_MEM_ERR_ACCESS, 0x62, IBK_WC_REM_ACCESS_ERR },
		{ IBK_MEM_ERR_STATE, 0x62, IBK_WC_REM_ACCESS_ERR },
		{ IBK_MEM_ERR_RANGE, 0x62, IBK_WC_REM_ACCESS_ERR },
		{ IBK_MEM_ERR_ALIGN, 0x61, IBK_WC_REM_INV_REQ_ERR },
	};
	size_t i;
	unsigned bad = 0;
	bool names = true;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		bad += ibk_mem_verdict_nak(rows[i].v) != rows[i].nak ||
		       ibk_mem_verdict_wc_status(rows[i].v) != rows[i].status;
		names &= strcmp(ibk_mem_verdict_name(rows[i].v), "unknown") != 0;
	}
	tap_ok(bad == 0, "each verdict's NAK: 0x61 for the QP's access flags, "
	       "the length and atomic alignment (rxe class C invalid "
	       "request), 0x62 for every R_Key violation; the requester sees "
	       "REM_INV_REQ_ERR / REM_ACCESS_ERR (%u bad)", bad);
	tap_ok(names && strcmp(ibk_mem_verdict_name((enum ibk_mem_verdict)99),
			       "unknown") == 0 &&
	       strcmp(ibk_mem_verdict_name(IBK_MEM_ERR_KEY), "err-key") == 0,
	       "every verdict has a name; others are \"unknown\"");
}

/*
 * The order of rxe_resp.c's checks as an if-chain, over a request's facts and the
 * object's: the independent model for random requests.
 */
struct facts {
	bool header_ok, keyed, continues, flush, qp_allows, huge, zero_rw;
	bool object, key_eq, pd_eq, window, mw2, qp_eq, len0;
	bool grants_all, valid, in_range, in_mr, atomic, aligned;
};

static enum ibk_mem_verdict model_verdict(const struct facts *f)
{
	if (!f->header_ok)
		return IBK_MEM_DROP_HEADER;
	if (f->flush)
		return IBK_MEM_ERR_OPCODE;
	if (!f->keyed && !f->continues)
		return IBK_MEM_NO_RKEY;
	if (!f->qp_allows)			/* check_op_valid */
		return IBK_MEM_ERR_QP_ACCESS;
	if (f->continues)			/* no RETH: no R_Key */
		return IBK_MEM_NO_RKEY;
	if (f->huge)				/* check_length */
		return IBK_MEM_ERR_LENGTH;
	if (f->zero_rw)				/* check_rkey, 0 bytes */
		return IBK_MEM_OK;
	if (!f->object || !f->key_eq)		/* lookup by index, key */
		return IBK_MEM_ERR_KEY;
	if (!f->pd_eq)
		return IBK_MEM_ERR_PD;
	if (f->mw2 && !f->qp_eq)		/* rxe_lookup_mw() */
		return IBK_MEM_ERR_WINDOW_QP;
	if (f->window && f->len0)
		return IBK_MEM_ERR_UNBOUND;
	if (!f->grants_all)
		return IBK_MEM_ERR_ACCESS;
	if (!f->valid)
		return IBK_MEM_ERR_STATE;
	if (!f->in_range)			/* the object's own range */
		return IBK_MEM_ERR_RANGE;
	if (f->window && !f->in_mr)		/* mr_check_range() */
		return IBK_MEM_ERR_RANGE;
	if (f->atomic && !f->aligned)		/* atomic_reply() */
		return IBK_MEM_ERR_ALIGN;
	return IBK_MEM_OK;
}

/* A random request and object, and the facts about them. */
static void random_request(struct req *q, struct ibk_mem_attr *r,
			   bool *r_null, struct facts *f)
{
	static const uint8_t ops[] = {
		OP_WRITE, OP_READ, OP_CSWAP, OP_FADD, OP_AWRITE,
		IBK_TRANSPORT_RC | IBK_OP_RDMA_WRITE_FIRST,
		IBK_TRANSPORT_RC | IBK_OP_RDMA_WRITE_ONLY_IMM,
		IBK_TRANSPORT_UC | IBK_OP_RDMA_WRITE_ONLY,
		IBK_TRANSPORT_RC | IBK_OP_SEND_ONLY,
		IBK_TRANSPORT_RC | IBK_OP_FLUSH,
		IBK_TRANSPORT_RC | IBK_OP_RDMA_WRITE_LAST,
		IBK_TRANSPORT_UC | IBK_OP_RDMA_WRITE_MIDDLE,
	};
	uint8_t op = ops[test_rng_below(sizeof(ops))];
	uint32_t want_access, len = test_rng_below(4) == 0 ? 0 :
		(test_rng_below(16) == 0 ? 0x80000000u + test_rng_below(2) :
		 test_rng_below(0x2000));
	uint64_t va;
	bool reth = !ibk_opcode_has_atomiceth(op), zero_based;

	*r = good_mr();
	r->kind = (uint8_t)test_rng_below(4);
	r->length = test_rng_below(8) == 0 ? 0 : r->length;
	r->addr = test_rng_below(8) == 0 ? 0xfffffffffffff000ull : r->addr;
	r->access = (uint32_t)test_rng64() & 0x3f;
	r->qpn = QPN + test_rng_below(2);
	r->pd = PD + (test_rng_below(8) == 0);
	r->state = (uint8_t)(test_rng_below(8) == 0 ? test_rng_below(2) :
			     IBK_MEM_VALID);
	r->rkey = test_rng_below(8) == 0 ? ibk_rkey_next(KEY) : KEY;
	*r_null = test_rng_below(16) == 0;

	/* the zero-based flag offsets a window only (rxe check_rkey()) */
	zero_based = (r->kind == IBK_MEM_MW1 || r->kind == IBK_MEM_MW2) &&
		     (r->access & IBK_ACCESS_ZERO_BASED);
	va = zero_based ? 0 : r->addr;
	va += test_rng_below(4) == 0 ? (uint64_t)0 - test_rng_below(16) :
	      test_rng_below((uint32_t)LEN + 0x40) & ~(uint64_t)(test_rng64() & 7);
	req_init(q, op, va, KEY, len);
	if (test_rng_below(16) == 0)
		q->qp.type = IBK_QPT_UC;
	/* the window's MR: as large as the window, the test's region (which
	 * the moved windows leave), or none */
	if (test_rng_below(2)) {
		q->mr.addr = r->addr;
		q->mr.length = r->length;
	}
	q->no_mr = test_rng_below(16) == 0;
	q->qp.access = (uint32_t)test_rng64() & IBK_ACCESS_REMOTE;
	if (test_rng_below(2))
		q->qp.access = IBK_ACCESS_REMOTE;

	/* the facts, from the rules rather than from the code */
	memset(f, 0, sizeof(*f));
	f->header_ok = (op & 0xe0) == (q->qp.type == IBK_QPT_RC ? 0x00 : 0x20);
	f->flush = (op & 0x1f) == IBK_OP_FLUSH;
	f->keyed = op == OP_WRITE || op == OP_READ || op == OP_CSWAP ||
		   op == OP_FADD || op == OP_AWRITE ||
		   op == (IBK_TRANSPORT_RC | IBK_OP_RDMA_WRITE_FIRST) ||
		   op == (IBK_TRANSPORT_RC | IBK_OP_RDMA_WRITE_ONLY_IMM) ||
		   op == (IBK_TRANSPORT_UC | IBK_OP_RDMA_WRITE_ONLY);
	/* WRITE MIDDLE and LAST: check_op_valid() on every WRITE packet */
	f->continues = (op & 0x1f) == IBK_OP_RDMA_WRITE_MIDDLE ||
		       (op & 0x1f) == IBK_OP_RDMA_WRITE_LAST;
	f->atomic = op == OP_CSWAP || op == OP_FADD || op == OP_AWRITE;
	want_access = op == OP_READ ? IBK_ACCESS_REMOTE_READ :
		      op == OP_CSWAP || op == OP_FADD ?
		      IBK_ACCESS_REMOTE_ATOMIC : IBK_ACCESS_REMOTE_WRITE;
	f->qp_allows = (q->qp.access & want_access) != 0;
	f->huge = reth && !f->atomic && len > 0x80000000u;
	f->zero_rw = reth && !f->atomic && len == 0;
	f->object = !*r_null && r->state != IBK_MEM_INVALID;
	f->key_eq = r->rkey == KEY;
	f->pd_eq = r->pd == PD;
	f->window = r->kind == IBK_MEM_MW1 || r->kind == IBK_MEM_MW2;
	f->mw2 = r->kind == IBK_MEM_MW2;
	f->qp_eq = r->qpn == QPN;
	f->len0 = r->length == 0;
	f->grants_all = (r->access & want_access) == want_access;
	f->valid = r->state == IBK_MEM_VALID;
	/* an ATOMIC WRITE writes 8 bytes, whatever its RETH says */
	if (op == OP_AWRITE && len < 8)
		len = 8;
	f->in_range = model_range(va, reth ? len : 8, zero_based ? 0 : r->addr,
				  r->length) == IBK_RANGE_IN;
	/* a window's bytes translated into its MR: offsets from its addr
	 * when zero-based (rxe check_rkey()), exact in 65 bits */
	{
		struct u65 t = add65(va, zero_based ? r->addr : 0);

		f->in_mr = !q->no_mr && !t.hi &&
			   model_range(t.lo, reth ? len : 8, q->mr.addr,
				       q->mr.length) == IBK_RANGE_IN;
	}
	f->aligned = (va & 7) == 0;
}

static void test_verdict_random(void)
{
	unsigned long i, n = 400000, bad = 0;
	unsigned seen[IBK_MEM_ERR_ALIGN + 1] = { 0 };
	bool all_seen = true;
	unsigned v;

	for (i = 0; i < n; i++) {
		struct ibk_mem_attr r;
		struct facts f;
		struct req q;
		bool r_null;
		enum ibk_mem_verdict want, got;

		random_request(&q, &r, &r_null, &f);
		want = model_verdict(&f);
		got = lib_verdict(&q, r_null ? NULL : &r);
		seen[want]++;
		if (got != want) {
			bad++;
			tap_diag_first(&diags,
				       "random request %lu: opcode 0x%02x "
				       "got %s, model %s", i,
				       ibk_bth_opcode(q.pkt),
				       ibk_mem_verdict_name(got),
				       ibk_mem_verdict_name(want));
		}
	}
	for (v = 0; v <= IBK_MEM_ERR_ALIGN; v++)
		all_seen &= seen[v] > 0;
	tap_ok(bad == 0 && all_seen, "%lu random requests against the order "
	       "of rxe_resp.c's checks written as an if-chain; every verdict occurs "
	       "(%lu differ)", n, bad);
}

/* The parse reads the fields from where the wire puts them. */
static void test_parse(void)
{
	struct ibk_mem_request mr;
	struct req q;
	bool ok;

	req_init(&q, OP_WRITE, 0x1122334455667788ull, 0xa1b2c3d4u, 0x1234);
	ok = ibk_mem_request_parse(IBK_QPT_RC, q.pkt, &mr) == IBK_MEM_OK &&
	     mr.va == 0x1122334455667788ull && mr.rkey == 0xa1b2c3d4u &&
	     mr.length == 0x1234 && mr.access == IBK_ACCESS_REMOTE_WRITE &&
	     mr.opcode == OP_WRITE;
	req_init(&q, OP_READ, 8, 0x100, 64);
	ok &= ibk_mem_request_parse(IBK_QPT_RC, q.pkt, &mr) == IBK_MEM_OK &&
	      mr.access == IBK_ACCESS_REMOTE_READ && mr.length == 64;
	req_init(&q, OP_CSWAP, 0x8000000000000000ull, 0xffffff01u, 0);
	ibk_atomiceth_set_compare(q.pkt + IBK_BTH_LEN, 5);
	ok &= ibk_mem_request_parse(IBK_QPT_RC, q.pkt, &mr) == IBK_MEM_OK &&
	      mr.va == 0x8000000000000000ull && mr.rkey == 0xffffff01u &&
	      mr.length == 8 && mr.access == IBK_ACCESS_REMOTE_ATOMIC;
	req_init(&q, IBK_TRANSPORT_RC | IBK_OP_SEND_ONLY_INV, 1, 2, 3);
	ok &= ibk_mem_request_parse(IBK_QPT_RC, q.pkt, &mr) ==
	      IBK_MEM_NO_RKEY && mr.access == 0;
	tap_ok(ok, "request parse: RETH VA/R_Key/length for WRITE and READ, "
	       "AtomicETH VA/R_Key and 8 bytes for COMPARE SWAP, a SEND with "
	       "invalidate asks for nothing");
}

/* ------------------------------------------------------------------------
 * Windows, invalidation, fast registration (rxe_mw.c, rxe_mr.c)
 * ------------------------------------------------------------------------ */

#define MW_KEY	0x00040177u		/* index 0x401, key byte 0x77 */
#define MR_KEY	KEY

static struct ibk_mem_attr new_window(enum ibk_mem_kind kind)
{
	struct ibk_mem_attr w;

	memset(&w, 0, sizeof(w));
	w.rkey = MW_KEY;
	w.pd = PD;
	w.kind = (uint8_t)kind;
	w.qpn = 0xdead;		/* registration must clear these */
	w.length = 99;
	w.access = IBK_ACCESS_REMOTE;
	return w;
}

static struct ibk_mw_bind_wr bind_wr(void)
{
	struct ibk_mw_bind_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.mw_rkey = MW_KEY;
	wr.key_byte = 0x78;
	wr.mr_lkey = MR_KEY;
	wr.addr = BASE + 0x100;
	wr.length = 0x200;
	wr.access = IBK_ACCESS_REMOTE_READ | IBK_ACCESS_REMOTE_WRITE;
	wr.qpn = QPN;
	wr.qp_pd = PD;
	return wr;
}

static struct ibk_mem_attr bindable_mr(void)
{
	struct ibk_mem_attr r = good_mr();

	r.access |= IBK_ACCESS_MW_BIND;
	return r;
}

static void test_register(void)
{
	struct ibk_mem_attr w1 = new_window(IBK_MEM_MW1);
	struct ibk_mem_attr w2 = new_window(IBK_MEM_MW2);
	struct ibk_mem_attr mr = good_mr(), fast = good_mr(), bad = good_mr();

	fast.kind = IBK_MEM_MR_FAST;
	bad.access = IBK_ACCESS_REMOTE_WRITE;
	tap_ok(ibk_mem_register(&w1) == IBK_MEMOP_OK &&
	       w1.state == IBK_MEM_VALID && w1.length == 0 && w1.qpn == 0 &&
	       ibk_mem_register(&w2) == IBK_MEMOP_OK &&
	       w2.state == IBK_MEM_FREE && w2.length == 0,
	       "rxe_mw.c after alloc: type 1 window VALID (and unbound), type 2 "
	       "FREE (rxe_alloc_mw)");
	tap_ok(ibk_mem_register(&mr) == IBK_MEMOP_OK &&
	       mr.state == IBK_MEM_VALID && mr.windows == 0 &&
	       ibk_mem_register(&fast) == IBK_MEMOP_OK &&
	       fast.state == IBK_MEM_FREE,
	       "rxe_mr.c a registered MR is VALID; a fast-register MR FREE until "
	       "its REG_MR (rxe_mr_init_fast)");
	tap_ok(ibk_mem_register(&bad) == IBK_MEMOP_ERR_ACCESS &&
	       bad.state == IBK_MEM_VALID,
	       "ibv_reg_mr(3): registration refused: REMOTE_WRITE without LOCAL_WRITE");
}

struct bind_case {
	const char *rule;
	enum ibk_mem_kind kind;
	int setup;		/* which change to make, see run_bind_case */
	enum ibk_memop_verdict want;
};

enum {
	B_NONE, B_WRONG_MW_KEY, B_WRONG_MR_KEY, B_NO_MR, B_BAD_FLAGS,
	B_MW1_NOT_VALID, B_MW1_ZERO_BASED, B_MW2_NOT_FREE, B_MW2_OTHER_PD,
	B_MW2_NO_MR, B_MW1_UNBIND, B_MR_ZERO_BASED, B_MR_NO_BIND,
	B_MR_NO_LOCAL_WRITE, B_ZB_TOO_LONG, B_ZB_FITS, B_OUTSIDE, B_WRAP,
	B_ATOMIC_NO_LOCAL_WRITE, B_NOT_WINDOW, B_MR_LOCAL_FLAG,
	B_ZB_PAST_END, B_ZB_BELOW, B_MW1_OTHER_PD, B_MR_OTHER_PD, B_MR_END_2_64,
};

static const struct bind_case bind_cases[] = {
	{ "type 1 bind to a bindable MR", IBK_MEM_MW1, B_NONE, IBK_MEMOP_OK },
	{ "type 2 bind to a bindable MR", IBK_MEM_MW2, B_NONE, IBK_MEMOP_OK },
	{ "bind naming the window by a stale key", IBK_MEM_MW2,
	  B_WRONG_MW_KEY, IBK_MEMOP_ERR_KEY },
	{ "bind naming the MR by a wrong L_Key", IBK_MEM_MW1, B_WRONG_MR_KEY,
	  IBK_MEMOP_ERR_MR_KEY },
	{ "bind with length but no MR", IBK_MEM_MW1, B_NO_MR,
	  IBK_MEMOP_ERR_MR_KEY },
	{ "bind of an object that is not a window", IBK_MEM_MW1, B_NOT_WINDOW,
	  IBK_MEMOP_ERR_TYPE },
	{ "flags a window cannot carry (ibv_bind_mw(3); rxe -EOPNOTSUPP)",
	  IBK_MEM_MW1, B_BAD_FLAGS, IBK_MEMOP_ERR_ACCESS },
	{ "LOCAL_WRITE is not a window flag either", IBK_MEM_MW2,
	  B_MR_LOCAL_FLAG, IBK_MEMOP_ERR_ACCESS },
	{ "rxe_mw.c type 1 must be VALID to bind", IBK_MEM_MW1, B_MW1_NOT_VALID,
	  IBK_MEMOP_ERR_STATE },
	{ "rxe_mw.c o10-36.2.2 type 1 may not be zero-based", IBK_MEM_MW1,
	  B_MW1_ZERO_BASED, IBK_MEMOP_ERR_ZERO_BASED },
	{ "rxe_mw.c o10-37.2.30 type 2 must be FREE to bind", IBK_MEM_MW2,
	  B_MW2_NOT_FREE, IBK_MEMOP_ERR_STATE },
	{ "rxe_mw.c C10-72 type 2: QP PD must be the window's", IBK_MEM_MW2,
	  B_MW2_OTHER_PD, IBK_MEMOP_ERR_PD },
	/* IBTA verbs: QP, window and MR of a bind in one PD ("RDMA/rxe:
	 * Check PDs for memory window binds", 2026) */
	{ "QP, window, MR in one PD: a type 1 window bound by a QP of "
	  "another PD", IBK_MEM_MW1, B_MW1_OTHER_PD, IBK_MEMOP_ERR_PD },
	{ "QP, window, MR in one PD: a type 2 window bound to an MR of "
	  "another PD", IBK_MEM_MW2, B_MR_OTHER_PD, IBK_MEMOP_ERR_MR_PD },
	{ "QP, window, MR in one PD: a type 1 window to an MR of another PD",
	  IBK_MEM_MW1, B_MR_OTHER_PD, IBK_MEMOP_ERR_MR_PD },
	{ "rxe_mw.c o10-37.2.40 type 2 with no MR / zero length", IBK_MEM_MW2,
	  B_MW2_NO_MR, IBK_MEMOP_ERR_NO_MR },
	{ "rxe_mw.c type 1 with zero length: allowed (unbinds)", IBK_MEM_MW1,
	  B_MW1_UNBIND, IBK_MEMOP_OK },
	{ "rxe_mw.c the MR may not be zero-based", IBK_MEM_MW2, B_MR_ZERO_BASED,
	  IBK_MEMOP_ERR_MR_ZERO_BASED },
	{ "rxe_mw.c C10-73 the MR needs MW_BIND", IBK_MEM_MW1, B_MR_NO_BIND,
	  IBK_MEMOP_ERR_MR_BIND },
	{ "rxe_mw.c C10-74 remote write window on an MR without local write",
	  IBK_MEM_MW2, B_MR_NO_LOCAL_WRITE, IBK_MEMOP_ERR_MR_LOCAL_WRITE },
	{ "rxe_mw.c C10-74 remote atomic window on an MR without local write",
	  IBK_MEM_MW1, B_ATOMIC_NO_LOCAL_WRITE,
	  IBK_MEMOP_ERR_MR_LOCAL_WRITE },
	{ "rxe_mw.c C10-75 zero-based window longer than the MR", IBK_MEM_MW2,
	  B_ZB_TOO_LONG, IBK_MEMOP_ERR_RANGE },
	{ "rxe_mw.c C10-75 zero-based window as long as the MR, at its start",
	  IBK_MEM_MW2, B_ZB_FITS, IBK_MEMOP_OK },
	{ "C10-75 zero-based window starting inside the MR, ending past it",
	  IBK_MEM_MW2, B_ZB_PAST_END, IBK_MEMOP_ERR_RANGE },
	{ "C10-75 zero-based window placed below the MR (rxe tests only its "
	  "length)", IBK_MEM_MW2, B_ZB_BELOW, IBK_MEMOP_ERR_RANGE },
	{ "a window ending exactly at 2^64 in an MR ending there",
	  IBK_MEM_MW1, B_MR_END_2_64, IBK_MEMOP_OK },
	{ "rxe_mw.c C10-75 VA window past the MR's end", IBK_MEM_MW1, B_OUTSIDE,
	  IBK_MEMOP_ERR_RANGE },
	{ "rxe_mw.c C10-75 / mr_check_range(): VA window whose end wraps",
	  IBK_MEM_MW2, B_WRAP, IBK_MEMOP_ERR_RANGE },
};

static enum ibk_memop_verdict run_bind_case(const struct bind_case *c,
					    struct ibk_mem_attr *w,
					    struct ibk_mem_attr *mr,
					    struct ibk_mw_bind_wr *wr,
					    bool *mr_null)
{
	*w = new_window(c->kind);
	ibk_mem_register(w);
	*mr = bindable_mr();
	*wr = bind_wr();
	*mr_null = false;
	switch (c->setup) {
	case B_WRONG_MW_KEY:	wr->mw_rkey = ibk_rkey_next(MW_KEY); break;
	case B_WRONG_MR_KEY:	wr->mr_lkey = ibk_rkey_next(MR_KEY); break;
	case B_NO_MR:		*mr_null = true; break;
	case B_NOT_WINDOW:	w->kind = IBK_MEM_MR; break;
	case B_BAD_FLAGS:	wr->access |= IBK_ACCESS_MW_BIND; break;
	case B_MR_LOCAL_FLAG:	wr->access |= IBK_ACCESS_LOCAL_WRITE; break;
	case B_MW1_NOT_VALID:	w->state = IBK_MEM_FREE; break;
	case B_MW1_ZERO_BASED:	wr->access |= IBK_ACCESS_ZERO_BASED; break;
	case B_MW2_NOT_FREE:	w->state = IBK_MEM_VALID; break;
	case B_MW2_OTHER_PD:	wr->qp_pd = PD + 1; break;
	case B_MW2_NO_MR:	wr->length = 0; *mr_null = true; break;
	case B_MW1_UNBIND:	wr->length = 0; *mr_null = true; break;
	case B_MR_ZERO_BASED:	mr->access |= IBK_ACCESS_ZERO_BASED; break;
	case B_MR_NO_BIND:	mr->access &= ~IBK_ACCESS_MW_BIND; break;
	case B_MR_NO_LOCAL_WRITE:
		mr->access &= ~IBK_ACCESS_LOCAL_WRITE;
		break;
	case B_ATOMIC_NO_LOCAL_WRITE:
		mr->access &= ~IBK_ACCESS_LOCAL_WRITE;
		wr->access = IBK_ACCESS_REMOTE_ATOMIC;
		break;
	case B_ZB_TOO_LONG:
		wr->access |= IBK_ACCESS_ZERO_BASED;
		wr->length = LEN + 1;
		break;
	case B_ZB_FITS:
		wr->access |= IBK_ACCESS_ZERO_BASED;
		wr->addr = BASE;
		wr->length = LEN;
		break;
	case B_ZB_PAST_END:
		wr->access |= IBK_ACCESS_ZERO_BASED;
		wr->addr = BASE + 0x800;
		wr->length = LEN;
		break;
	case B_ZB_BELOW:
		wr->access |= IBK_ACCESS_ZERO_BASED;
		wr->addr = 0x800;
		wr->length = 0x1000;
		break;
	case B_MW1_OTHER_PD:	wr->qp_pd = PD + 1; break;
	case B_MR_OTHER_PD:	mr->pd = PD + 1; break;
	case B_MR_END_2_64:
		mr->addr = 0xfffffffffffff000ull;
		mr->length = 0x1000;
		wr->addr = 0xffffffffffffff00ull;
		wr->length = 0x100;
		break;
	case B_OUTSIDE:
		wr->addr = BASE + LEN - 0x100;
		break;
	case B_WRAP:
		mr->addr = 0xfffffffffffff000ull;
		mr->length = 0xfff;
		wr->addr = 0xfffffffffffffc00ull;
		wr->length = 0x400;
		break;
	default:
		break;
	}
	return ibk_mw_bind(w, *mr_null ? NULL : mr, NULL, wr);
}

static void test_bind(void)
{
	size_t i, n = sizeof(bind_cases) / sizeof(bind_cases[0]);
	struct ibk_mem_attr w, mr, w_before, mr_before;
	struct ibk_mw_bind_wr wr;
	struct req q;
	bool mr_null;

	for (i = 0; i < n; i++) {
		enum ibk_memop_verdict v;

		v = run_bind_case(&bind_cases[i], &w, &mr, &wr, &mr_null);
		if (!tap_ok(v == bind_cases[i].want, "bind: %s: %s",
			    bind_cases[i].rule,
			    ibk_memop_verdict_name(bind_cases[i].want)))
			tap_diag("got %s", ibk_memop_verdict_name(v));
	}

	/* a refused bind changes nothing */
	run_bind_case(&bind_cases[0], &w, &mr, &wr, &mr_null);
	w = new_window(IBK_MEM_MW2);
	ibk_mem_register(&w);
	mr = bindable_mr();
	wr = bind_wr();
	wr.qp_pd = PD + 1;
	w_before = w;
	mr_before = mr;
	tap_ok(ibk_mw_bind(&w, &mr, NULL, &wr) == IBK_MEMOP_ERR_PD &&
	       memcmp(&w, &w_before, sizeof(w)) == 0 &&
	       memcmp(&mr, &mr_before, sizeof(mr)) == 0,
	       "a refused bind leaves window and MR as they were");

	/* after a type 2 bind (rxe_do_bind_mw) */
	wr = bind_wr();
	tap_ok(ibk_mw_bind(&w, &mr, NULL, &wr) == IBK_MEMOP_OK &&
	       w.state == IBK_MEM_VALID && w.rkey == 0x00040178u &&
	       w.addr == wr.addr && w.length == wr.length &&
	       w.access == wr.access && w.qpn == QPN &&
	       w.mr_index == ibk_rkey_index(MR_KEY) && mr.windows == 1,
	       "rxe_mw.c after bind: key byte from the WR, index kept, range and "
	       "access stored, VALID, the QP remembered, the MR's count + 1");

	/* using it: inside the window, outside it, from another QP */
	req_init(&q, OP_READ, wr.addr, w.rkey, 0x200);
	tap_ok(lib_verdict(&q, &w) == IBK_MEM_OK,
	       "rxe_mw.c the bound window grants READ over its range");
	req_init(&q, OP_READ, wr.addr - 0x100, w.rkey, 0x100);
	tap_ok(lib_verdict(&q, &w) == IBK_MEM_ERR_RANGE,
	       "the window's own range bounds it: its MR's bytes before it "
	       "are refused (rxe checks only the MR's range)");
	req_init(&q, OP_READ, wr.addr, MW_KEY, 0x200);
	tap_ok(lib_verdict(&q, &w) == IBK_MEM_ERR_KEY,
	       "rxe lookup_mr(): the key from before the bind misses (pyverbs #1777)");
	req_init(&q, OP_WRITE, wr.addr, w.rkey, 8);
	q.qp.qpn = QPN + 1;
	tap_ok(lib_verdict(&q, &w) == IBK_MEM_ERR_WINDOW_QP,
	       "rxe_mw.c only the binding QP may use a type 2 window");
	req_init(&q, OP_CSWAP, wr.addr, w.rkey, 0);
	tap_ok(lib_verdict(&q, &w) == IBK_MEM_ERR_ACCESS,
	       "rxe_mw.c access on use: requested must be within the window's");

	/* type 1: rebinding moves the MR counts; length 0 unbinds */
	{
		struct ibk_mem_attr w1 = new_window(IBK_MEM_MW1);
		struct ibk_mem_attr mr2 = bindable_mr();

		ibk_mem_register(&w1);
		mr = bindable_mr();
		mr2.rkey = 0x00099901u;
		wr = bind_wr();
		ibk_mw_bind(&w1, &mr, NULL, &wr);
		wr.mw_rkey = w1.rkey;
		wr.mr_lkey = mr2.rkey;
		wr.key_byte = 0x79;
		tap_ok(ibk_mw_bind(&w1, &mr2, &mr, &wr) == IBK_MEMOP_OK &&
		       mr.windows == 0 && mr2.windows == 1 &&
		       w1.mr_index == 0x999 && w1.qpn == 0,
		       "rxe_mw.c a type 1 window rebound to another MR moves the "
		       "count; it remembers no QP");
		wr.mw_rkey = w1.rkey;
		wr.length = 0;
		tap_ok(ibk_mw_bind(&w1, NULL, &mr2, &wr) == IBK_MEMOP_OK &&
		       w1.state == IBK_MEM_VALID && w1.length == 0 &&
		       mr2.windows == 0,
		       "rxe_mw.c a type 1 bind of length 0 unbinds (ibv_alloc_mw(3))");
		req_init(&q, OP_READ, BASE, w1.rkey, 8);
		tap_ok(lib_verdict(&q, &w1) == IBK_MEM_ERR_UNBOUND,
		       "rxe_resp.c the unbound type 1 window grants nothing");
	}
}

/*
 * The review's examples: an MR at [0x20000, 0x21000); a window covers a
 * subset of the MR it is bound to (ibv_alloc_mw(3); C10-75 in rxe_mw.c),
 * and the QP, the window and the MR of a bind share one PD (IBTA verbs).
 */
static void test_window_in_mr(void)
{
	static const uint64_t outside[] = { 0x20800, 0x90000, 0x800 };
	struct ibk_mem_attr mr = bindable_mr(), w, before;
	struct ibk_mw_bind_wr wr = bind_wr();
	struct req q;
	unsigned i, bound = 0;

	mr.addr = 0x20000;
	mr.length = 0x1000;
	wr.access = IBK_ACCESS_REMOTE_WRITE | IBK_ACCESS_ZERO_BASED;
	wr.length = 0x1000;
	for (i = 0; i < 3; i++) {
		w = new_window(IBK_MEM_MW2);
		ibk_mem_register(&w);
		wr.addr = outside[i];
		bound += ibk_mw_bind(&w, &mr, NULL, &wr) != IBK_MEMOP_ERR_RANGE ||
			 w.state != IBK_MEM_FREE;
	}
	tap_ok(bound == 0 && mr.windows == 0, "C10-75: zero-based windows of "
	       "0x1000 bytes at 0x20800, 0x90000 and 0x800 do not bind to the "
	       "MR [0x20000, 0x21000)");

	/* one bound where it fits serves offsets 0 to 0xfff */
	w = new_window(IBK_MEM_MW2);
	ibk_mem_register(&w);
	wr.addr = 0x20000;
	req_init(&q, OP_WRITE, 0, ibk_rkey_make(ibk_rkey_index(MW_KEY),
						wr.key_byte), 0x1000);
	q.mr = mr;
	tap_ok(ibk_mw_bind(&w, &mr, NULL, &wr) == IBK_MEMOP_OK &&
	       lib_verdict(&q, &w) == IBK_MEM_OK,
	       "a zero-based window bound at the MR's start: a WRITE at "
	       "offset 0 of 0x1000 bytes is granted");

	/* a window whose attributes point past its MR (the bind above now
	 * refuses it; kept state or a caller's own may still hold one) */
	w.addr = 0x90000;
	tap_ok(lib_verdict(&q, &w) == IBK_MEM_ERR_RANGE,
	       "rxe's access rule (mr_check_range(mr, va + mw->addr)): a WRITE "
	       "at offset 0 through a window at 0x90000 is refused");
	w.addr = 0x20800;
	tap_ok(lib_verdict(&q, &w) == IBK_MEM_ERR_RANGE,
	       "and through one at 0x20800 whose last 0x800 bytes leave it");

	/* protection domains: PD 1 owns the MR, the window is PD 2's */
	mr = bindable_mr();
	mr.pd = 1;
	w = new_window(IBK_MEM_MW2);
	w.pd = 2;
	ibk_mem_register(&w);
	wr = bind_wr();
	wr.qp_pd = 2;
	before = w;
	tap_ok(ibk_mw_bind(&w, &mr, NULL, &wr) == IBK_MEMOP_ERR_MR_PD &&
	       memcmp(&w, &before, sizeof(w)) == 0 && mr.windows == 0,
	       "a PD-2 window bound by a PD-2 QP to a PD-1 MR is refused and "
	       "stays unbound");
	req_init(&q, OP_WRITE, wr.addr, ibk_rkey_make(ibk_rkey_index(MW_KEY),
						      wr.key_byte), 0x100);
	q.qp.pd = 2;
	q.mr = mr;
	tap_ok(lib_verdict(&q, &w) != IBK_MEM_OK,
	       "so a PD-2 QP's RDMA WRITE cannot reach PD 1's memory through it");
	w = new_window(IBK_MEM_MW1);
	w.pd = 2;
	ibk_mem_register(&w);
	wr = bind_wr();
	wr.qp_pd = 1;
	tap_ok(ibk_mw_bind(&w, &mr, NULL, &wr) == IBK_MEMOP_ERR_PD,
	       "a PD-2 type 1 window bound by a PD-1 QP is refused");
}

static void test_invalidate(void)
{
	struct ibk_mem_attr w1 = new_window(IBK_MEM_MW1);
	struct ibk_mem_attr w2 = new_window(IBK_MEM_MW2);
	struct ibk_mem_attr mr = bindable_mr(), fast = good_mr(), next;
	struct ibk_mw_bind_wr wr = bind_wr();
	const struct ibk_mem_qp q_self = { IBK_QPT_RC, QPN, PD,
					   IBK_ACCESS_REMOTE };
	ibk_rkey_t k;
	struct req q;

	ibk_mem_register(&w1);
	ibk_mem_register(&w2);
	ibk_mw_bind(&w2, &mr, NULL, &wr);
	k = w2.rkey;
	tap_ok(ibk_mem_invalidate(&w2, &mr, MW_KEY) == IBK_MEMOP_ERR_KEY,
	       "rxe_mw.c invalidation names the window's current key");
	{
		struct ibk_mem_qp other_qp = { IBK_QPT_RC, QPN + 1, PD,
					       IBK_ACCESS_REMOTE };
		struct ibk_mem_qp other_pd = { IBK_QPT_RC, QPN, PD + 1,
					       IBK_ACCESS_REMOTE };
		struct ibk_mem_attr before = w2;

		tap_ok(ibk_mem_invalidate_remote(&w2, &mr, k, &other_qp) ==
		       IBK_MEMOP_ERR_WINDOW_QP &&
		       ibk_mem_invalidate_remote(&w2, &mr, k, &other_pd) ==
		       IBK_MEMOP_ERR_PD &&
		       ibk_mem_invalidate_remote(&w2, &mr, MW_KEY,
						 &other_qp) ==
		       IBK_MEMOP_ERR_KEY &&
		       memcmp(&w2, &before, sizeof(w2)) == 0 &&
		       mr.windows == 1,
		       "SEND with invalidate of a type 2 window from a QP it "
		       "is not bound to, or from another PD, is refused and "
		       "leaves it bound (stricter than rxe 6.1, which checks "
		       "neither); a wrong key is still err-key first");
	}
	tap_ok(ibk_mem_invalidate(&mr, NULL, mr.rkey) ==
	       IBK_MEMOP_ERR_WINDOWS_BOUND,
	       "rxe_mr.c an MR with windows bound cannot be invalidated");
	tap_ok(ibk_mem_deregister(&mr, NULL, mr.rkey) ==
	       IBK_MEMOP_ERR_WINDOWS_BOUND,
	       "rxe_mr.c nor deregistered (rxe_dereg_mr)");
	tap_ok(ibk_mem_invalidate_remote(&w2, &mr, k, &q_self) ==
	       IBK_MEMOP_OK &&
	       w2.state == IBK_MEM_FREE && w2.length == 0 && w2.access == 0 &&
	       w2.addr == 0 && w2.qpn == 0 && mr.windows == 0,
	       "rxe_mw.c invalidating a type 2 window (a SEND with invalidate on "
	       "its own QP): FREE, address, length, access and QP cleared, "
	       "the MR's count - 1");
	req_init(&q, OP_READ, wr.addr, k, 8);
	tap_ok(lib_verdict(&q, &w2) == IBK_MEM_ERR_WINDOW_QP,
	       "rxe_mw.c a request with the invalidated window's key is refused "
	       "(0x62): in rxe_lookup_mw()'s order its cleared QP fails first");
	tap_ok(ibk_mem_invalidate(&w2, &mr, k) == IBK_MEMOP_ERR_STATE,
	       "a FREE window cannot be invalidated again (rxe refuses only "
	       "INVALID)");
	tap_ok(ibk_mem_invalidate(&w1, NULL, w1.rkey) == IBK_MEMOP_ERR_TYPE,
	       "rxe_mw.c o10-37.2.26 a type 1 window cannot be invalidated");
	tap_ok(ibk_mem_invalidate(&mr, NULL, mr.rkey) == IBK_MEMOP_ERR_TYPE,
	       "rxe_mr.c only a fast-register MR can be invalidated");

	fast.kind = IBK_MEM_MR_FAST;
	ibk_mem_register(&fast);
	next = good_mr();
	next.rkey = ibk_rkey_next(fast.rkey);
	tap_ok(ibk_mr_fast_reg(&fast, PD + 1, &next) == IBK_MEMOP_ERR_PD &&
	       fast.state == IBK_MEM_FREE,
	       "rxe_mr.c REG_MR: QP PD must equal the MR's");
	next.rkey = ibk_rkey_make(0x777, 0x01);
	tap_ok(ibk_mr_fast_reg(&fast, PD, &next) == IBK_MEMOP_ERR_INDEX,
	       "rxe_mr.c REG_MR may change only the key byte");
	next.rkey = ibk_rkey_next(fast.rkey);
	next.access = IBK_ACCESS_REMOTE_ATOMIC;
	tap_ok(ibk_mr_fast_reg(&fast, PD, &next) == IBK_MEMOP_ERR_ACCESS,
	       "ibv_reg_mr(3): REG_MR with remote atomic but no local write is refused");
	next.access = IBK_ACCESS_LOCAL_WRITE | IBK_ACCESS_REMOTE_WRITE;
	tap_ok(ibk_mr_fast_reg(&fast, PD, &next) == IBK_MEMOP_OK &&
	       fast.state == IBK_MEM_VALID && fast.rkey == next.rkey &&
	       fast.access == next.access,
	       "rxe_mr.c REG_MR from FREE: key, access, address set; VALID");
	tap_ok(ibk_mr_fast_reg(&fast, PD, &next) == IBK_MEMOP_ERR_STATE,
	       "rxe_mr.c REG_MR only from FREE");
	tap_ok(ibk_mem_invalidate(&fast, NULL, ibk_rkey_next(fast.rkey)) ==
	       IBK_MEMOP_ERR_KEY &&
	       ibk_mem_invalidate(&fast, NULL, fast.rkey) == IBK_MEMOP_OK &&
	       fast.state == IBK_MEM_FREE,
	       "rxe_mr.c LOCAL_INV of the fast MR by its key: VALID -> FREE");
	req_init(&q, OP_WRITE, BASE, fast.rkey, 8);
	tap_ok(lib_verdict(&q, &fast) == IBK_MEM_ERR_STATE,
	       "rxe_mr.c the invalidated MR refuses its old key (0x62)");
	tap_ok(ibk_mem_deregister(&fast, NULL, fast.rkey) == IBK_MEMOP_OK &&
	       fast.state == IBK_MEM_INVALID &&
	       ibk_mem_deregister(&fast, NULL, fast.rkey) == IBK_MEMOP_ERR_KEY,
	       "deregistration frees the index once");
	tap_ok(ibk_mem_invalidate(&fast, NULL, fast.rkey) == IBK_MEMOP_ERR_KEY,
	       "a deregistered object cannot be invalidated");
}

static void test_rereg(void)
{
	struct ibk_mem_attr mr = bindable_mr(), next = good_mr();
	struct req q;

	next.rkey = ibk_rkey_next(mr.rkey);
	next.access = IBK_ACCESS_REMOTE_READ;
	next.addr = BASE + 0x1000;
	tap_ok(ibk_mr_rereg(&mr, &next) == IBK_MEMOP_OK &&
	       mr.rkey == ibk_rkey_next(KEY) &&
	       mr.access == IBK_ACCESS_REMOTE_READ && mr.addr == BASE + 0x1000,
	       "re-registration: new key byte, new attributes");
	req_init(&q, OP_READ, BASE + 0x1000, KEY, 8);
	tap_ok(lib_verdict(&q, &mr) == IBK_MEM_ERR_KEY,
	       "rxe lookup_mr(): the key from before re-registration misses");
	req_init(&q, OP_READ, BASE + 0x1000, mr.rkey, 8);
	tap_ok(lib_verdict(&q, &mr) == IBK_MEM_OK,
	       "the new key is granted");
	next.rkey = mr.rkey;
	tap_ok(ibk_mr_rereg(&mr, &next) == IBK_MEMOP_ERR_SAME_KEY,
	       "re-registration must change the key byte");
	next.rkey = ibk_rkey_make(0x5, 0x01);
	tap_ok(ibk_mr_rereg(&mr, &next) == IBK_MEMOP_ERR_INDEX,
	       "re-registration keeps the index");
	next.rkey = ibk_rkey_next(mr.rkey);
	next.access = IBK_ACCESS_REMOTE_WRITE;
	tap_ok(ibk_mr_rereg(&mr, &next) == IBK_MEMOP_ERR_ACCESS,
	       "ibv_reg_mr(3): re-registration with remote write but no local write");
	mr.windows = 1;
	next.access = IBK_ACCESS_REMOTE_READ;
	tap_ok(ibk_mr_rereg(&mr, &next) == IBK_MEMOP_ERR_WINDOWS_BOUND,
	       "re-registration refused while windows are bound");
	tap_ok(strcmp(ibk_memop_verdict_name(IBK_MEMOP_ERR_MR_BIND),
		      "err-mr-bind") == 0 &&
	       strcmp(ibk_memop_verdict_name((enum ibk_memop_verdict)77),
		      "unknown") == 0 &&
	       strcmp(ibk_range_verdict_name(IBK_RANGE_WRAPS), "wraps") == 0,
	       "management and range verdicts have names");
}

int main(void)
{
	test_rng_seed(SEED);
	test_rkey_format();
	test_access();
	test_range();
	test_aeth();
	test_opcodes();
	test_parse();
	test_verdict_table();
	test_verdict_naks();
	test_verdict_random();
	test_register();
	test_bind();
	test_window_in_mr();
	test_invalidate();
	test_rereg();
	return tap_done();
}
