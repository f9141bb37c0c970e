/* SPDX-License-Identifier: MIT */
/*
 * test_simd.c - the vector paths of the bursts against their scalar loops
 * and against the one-packet rules.
 *
 * ibk_rx_ud_burst() and ibk_pkey_match_burst() run whole chunks of 16 on
 * the build's vector path (SSE2, AVX2) and the rest in scalar code.
 * Every burst length 0..64 puts the chunk boundary, and the tail after it,
 * at every place; the packets are drawn from the cases where a vector
 * compare could go wrong: invalid keys (base 0) on either side, the four
 * full/limited pairs of one base, other bases, controlled Q_Keys (MSB set)
 * on either side, a Q_Key one bit off, opcodes that are no UD SEND, SEND
 * with immediate (0x65, accepted as 0x64), TVer not 0, SE/M/PadCnt bits
 * (which decide nothing), and headers at every alignment. Each verdict is
 * checked three ways: vector == scalar, == ibk_rx_check() of the packet
 * alone, and each P_Key match == ibk_pkey_match().
 *
 * meson builds this file three times: as the compiler targets by default
 * (SSE2 on x86-64, the scalar loops elsewhere), with -mavx2 where the compiler takes
 * it (skipped on a CPU without AVX2), and with IBK_NO_SIMD (the scalar
 * loops against the rules alone). The first line says which path ran.
 */
#include "ib_keys.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rng.h"
#include "tap.h"

#define MAX_BURST	64
#define HDR_BYTES	(IBK_BTH_LEN + IBK_DETH_LEN)
#define GUARD		0xee	/* what no path may write past n */

/* The P_Keys a QP holds in the tests: invalid, limited, full, defaults. */
static const uint16_t qp_pkeys[] = {
	0x0000, 0x8000, 0x0123, 0x8123, 0x7fff, 0xffff, 0x0001, 0x8001,
};

/* Q_Keys of a QP: free, IPoIB's, controlled (GSI, general, top, MSB). */
static const uint32_t qp_qkeys[] = {
	0x00000000, 0x00000b1b, 0x80010000, 0x80000001, 0xffffffff,
	0x80000000, 0x7fffffff,
};

/* A packet P_Key near @qp: same base either membership, invalid, or not. */
static uint16_t edge_pkey(uint16_t qp)
{
	switch (test_rng_below(8)) {
	case 0:	return (uint16_t)(qp | 0x8000);		/* full, same base */
	case 1:	return (uint16_t)(qp & 0x7fff);		/* limited, same base */
	case 2:	return (uint16_t)(test_rng_below(2) << 15);	/* invalid */
	case 3:	return (uint16_t)(qp ^ (1u << test_rng_below(15)));
	case 4:	return (uint16_t)test_rng64();
	default: return qp;
	}
}

/* A packet Q_Key near @qp: equal, MSB flipped, one bit off, any. */
static uint32_t edge_qkey(uint32_t qp)
{
	switch (test_rng_below(6)) {
	case 0:	return qp ^ 0x80000000u;
	case 1:	return qp ^ (1u << test_rng_below(32));
	case 2:	return (uint32_t)test_rng64();
	default: return qp;
	}
}

/* An opcode: mostly UD SEND Only, then with immediate, then any other. */
static uint8_t edge_opcode(void)
{
	static const uint8_t others[] = { 0x00, 0x04, 0x24, 0x60, 0x66, 0x67,
					  0x6c, 0x74, 0xe4, 0xe5, 0x81, 0xff };

	switch (test_rng_below(10)) {
	case 0:	return others[test_rng_below(sizeof(others))];
	case 1:	return (uint8_t)test_rng64();
	case 2:
	case 3:	return IBK_OPCODE_UD_SEND_ONLY_IMM;
	default: return IBK_OPCODE_UD_SEND_ONLY;
	}
}

/* Writes a BTH and DETH at @h: random SE, M, PadCnt and rest; TVer 0 in
 * 7 of 8. */
static void write_packet(uint8_t *h, uint16_t qp_pkey, uint32_t qp_qkey)
{
	unsigned i;

	for (i = 0; i < HDR_BYTES; i++)
		h[i] = (uint8_t)test_rng64();
	h[0] = edge_opcode();
	h[1] &= 0xf0;				/* SE M PadCnt: no verdict */
	if (test_rng_below(8) == 0)
		h[1] |= (uint8_t)(1 + test_rng_below(15));
	ibk_bth_set_pkey(h, edge_pkey(qp_pkey));
	ibk_deth_set_qkey(h + IBK_BTH_LEN, edge_qkey(qp_qkey));
}

struct tally {
	unsigned vs_scalar;	/* verdict or count differs from scalar */
	unsigned vs_check;	/* verdict differs from ibk_rx_check() */
	unsigned count;		/* returned count is not the accepted one */
	unsigned past_n;	/* a byte written past n */
	unsigned seen[16];	/* verdicts met, by value */
};

/* Runs one burst on @path into @v (guarded past n); returns its count. */
typedef size_t rx_path(ibk_pkey_t, ibk_qkey_t, const void *const *, size_t,
		       uint8_t *);

/* The build's vector path, or the scalar loop again where it has none. */
#if defined(IBK__SIMD)
static rx_path *const vector_rx = ibk__rx_ud_burst_vector;
#else
static rx_path *const vector_rx = ibk__rx_ud_burst_scalar;
#endif

static size_t run_rx(rx_path *path, uint16_t pkey, uint32_t qkey,
		     const void *const *hdrs, uint8_t *v, size_t n)
{
	memset(v, GUARD, MAX_BURST + 16);
	return path(pkey, qkey, hdrs, n, v);
}

/* Checks the paths on one burst of @n headers to a UD QP. */
static void check_rx_burst(struct tally *t, uint16_t qp_pkey, uint32_t qp_qkey,
			   const void *const *hdrs, size_t n)
{
	struct ibk_qp_keys qp = { IBK_QPT_UD, qp_pkey, 0, qp_qkey };
	uint8_t sv[MAX_BURST + 16], vv[MAX_BURST + 16];
	size_t s_count, v_count, accepted = 0, i;

	s_count = run_rx(ibk__rx_ud_burst_scalar, qp_pkey, qp_qkey, hdrs, sv,
			 n);
	v_count = run_rx(vector_rx, qp_pkey, qp_qkey, hdrs, vv, n);
	t->vs_scalar += s_count != v_count || memcmp(sv, vv, sizeof(sv)) != 0;
	for (i = 0; i < n; i++) {
		const uint8_t *h = (const uint8_t *)hdrs[i];

		t->vs_check += vv[i] != ibk_rx_check(&qp, h, h + IBK_BTH_LEN) ||
			       sv[i] != vv[i];
		accepted += vv[i] == IBK_RX_ACCEPT;
		t->seen[vv[i] & 15]++;
	}
	for (i = n; i < sizeof(vv); i++)
		t->past_n += vv[i] != GUARD || sv[i] != GUARD;
	t->count += v_count != accepted || s_count != accepted;
}

#define NQP_PKEYS (sizeof(qp_pkeys) / sizeof(qp_pkeys[0]))
#define NQP_QKEYS (sizeof(qp_qkeys) / sizeof(qp_qkeys[0]))

/*
 * Writes @n random packets near the QP's keys into @pool, each at a
 * random offset 0..15 from a 16-byte boundary, and points @hdrs at them;
 * returns the offsets used, one bit each.
 */
static unsigned random_burst(uint8_t *pool, const void **hdrs, size_t n,
			     uint16_t qp_pkey, uint32_t qp_qkey)
{
	unsigned offsets = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		size_t off = test_rng_below(16);
		uint8_t *h = pool + 16 + i * 48 + off;

		offsets |= 1u << off;
		write_packet(h, qp_pkey, qp_qkey);
		hdrs[i] = h;
	}
	return offsets;
}

/* Random bursts of every length 0..64 for every QP key pair. */
static void test_rx_random(void)
{
	static uint8_t pool[MAX_BURST * 48 + 64];
	const void *hdrs[MAX_BURST];
	struct tally t;
	unsigned p, q, round, offsets = 0;
	size_t n;

	memset(&t, 0, sizeof(t));
	for (p = 0; p < NQP_PKEYS; p++)
		for (q = 0; q < NQP_QKEYS; q++)
			for (round = 0; round < 3; round++)
				for (n = 0; n <= MAX_BURST; n++) {
					offsets |= random_burst(pool, hdrs, n,
								qp_pkeys[p],
								qp_qkeys[q]);
					check_rx_burst(&t, qp_pkeys[p],
						       qp_qkeys[q], hdrs, n);
				}
	tap_ok(t.vs_scalar == 0, "rx_ud_burst: %s path == scalar, verdicts "
	       "and count, every length 0..%d (%u bad bursts)",
	       ibk_simd_path(), MAX_BURST, t.vs_scalar);
	tap_ok(t.vs_check == 0, "rx_ud_burst: every verdict == ibk_rx_check() "
	       "of the packet alone (%u bad)", t.vs_check);
	tap_ok(t.count == 0 && t.past_n == 0, "rx_ud_burst: returns the number "
	       "accepted, writes nothing past n (%u bad counts, %u bytes)",
	       t.count, t.past_n);
	tap_ok(offsets == 0xffff && t.seen[IBK_RX_ACCEPT] > 1000 &&
	       t.seen[IBK_RX_DROP_PKEY] > 1000 &&
	       t.seen[IBK_RX_DROP_QKEY] > 1000 &&
	       t.seen[IBK_RX_DROP_TVER] > 1000 &&
	       t.seen[IBK_RX_DROP_OPCODE] > 1000,
	       "rx_ud_burst: headers at all 16 offsets, every verdict met (%u "
	       "accept, %u P_Key, %u Q_Key, %u TVer, %u opcode)",
	       t.seen[IBK_RX_ACCEPT], t.seen[IBK_RX_DROP_PKEY],
	       t.seen[IBK_RX_DROP_QKEY], t.seen[IBK_RX_DROP_TVER],
	       t.seen[IBK_RX_DROP_OPCODE]);
}

/* Writes @n accepted UD SENDs (alternately full and limited P_Keys of
 * @pkey's base) at offsets 0..3 into @pool, pointed at by @hdrs. */
static void accepted_burst(uint8_t (*pool)[HDR_BYTES + 3], const void **hdrs,
			   size_t n, uint16_t pkey, uint32_t qkey)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint8_t *h = pool[i] + i % 4;

		memset(h, 0, HDR_BYTES);
		h[0] = IBK_OPCODE_UD_SEND_ONLY;
		ibk_bth_set_pkey(h, (uint16_t)(i & 1 ? pkey : pkey & 0x7fff));
		ibk_deth_set_qkey(h + IBK_BTH_LEN, qkey);
		hdrs[i] = h;
	}
}

/* Makes header @h odd in one of five ways, by @kind. */
static void make_odd(uint8_t *h, unsigned kind)
{
	switch (kind) {
	case 0:	h[0] = 0x04; break;			/* RC SEND Only */
	case 1:	h[1] = 0x01; break;			/* TVer 1 */
	case 2:	ibk_bth_set_pkey(h, 0x0124); break;	/* another base */
	case 3:	h[IBK_BTH_LEN] ^= 0x80; break;		/* Q_Key's MSB */
	default: h[0] = IBK_OPCODE_UD_SEND_ONLY_IMM;	/* accepted */
	}
}

/*
 * One odd packet at each place of an otherwise accepted burst of each
 * length 1..64: in a vector chunk's every lane and in the scalar tail,
 * the burst's one header drop (which starts the second pass), one P_Key
 * drop, one Q_Key drop and one accepted SEND with immediate.
 */
static void test_rx_one_odd(void)
{
	static uint8_t pool[MAX_BURST][HDR_BYTES + 3];
	const void *hdrs[MAX_BURST];
	const uint16_t pkey = 0x8123;
	const uint32_t qkey = 0x80010000;
	struct tally t;
	unsigned kind;
	size_t n, at;

	memset(&t, 0, sizeof(t));
	for (kind = 0; kind < 5; kind++)
		for (n = 1; n <= MAX_BURST; n++)
			for (at = 0; at < n; at++) {
				accepted_burst(pool, hdrs, n, pkey, qkey);
				make_odd(pool[at] + at % 4, kind);
				check_rx_burst(&t, pkey, qkey, hdrs, n);
			}
	tap_ok(t.vs_scalar == 0 && t.vs_check == 0 && t.count == 0 &&
	       t.past_n == 0,
	       "rx_ud_burst: one opcode, TVer, P_Key or Q_Key drop or SEND "
	       "with immediate at every place of every length 1..%d (%u vs "
	       "scalar, %u vs rx_check, %u counts, %u bytes past n)",
	       MAX_BURST, t.vs_scalar, t.vs_check, t.count, t.past_n);
}

/* Checks both P_Key burst paths on @n keys against one QP key. */
static unsigned check_pkey_burst(uint16_t qp, const ibk_pkey_t *keys, size_t n)
{
	uint8_t sm[MAX_BURST + 16], vm[MAX_BURST + 16];
	size_t s_count, v_count, matches = 0, i;
	unsigned bad = 0;

	memset(sm, GUARD, sizeof(sm));
	memset(vm, GUARD, sizeof(vm));
	s_count = ibk__pkey_match_burst_scalar(qp, keys, n, sm);
#if defined(IBK__SIMD)
	v_count = ibk__pkey_match_burst_vector(qp, keys, n, vm);
#else
	v_count = ibk__pkey_match_burst_scalar(qp, keys, n, vm);
#endif
	for (i = 0; i < n; i++) {
		bad += vm[i] != ibk_pkey_match(qp, keys[i]) || sm[i] != vm[i];
		matches += vm[i];
	}
	for (i = n; i < sizeof(vm); i++)
		bad += vm[i] != GUARD || sm[i] != GUARD;
	return bad + (v_count != matches) + (s_count != matches);
}

/*
 * Random keys near each QP key (same base either membership, invalid,
 * other bases) at every length 0..64, from a 16-byte boundary and one key
 * past it; and the
 * whole 16-bit key space against each QP key, 64 keys per burst.
 */
static void test_pkey_burst(void)
{
	static ibk_pkey_t keys[MAX_BURST + 1];
	static ibk_pkey_t all[65536];
	unsigned bad = 0, bad_all = 0, p, round;
	size_t n, i, start;

	for (p = 0; p < sizeof(qp_pkeys) / sizeof(qp_pkeys[0]); p++)
		for (round = 0; round < 20; round++)
			for (n = 0; n <= MAX_BURST; n++) {
				for (i = 0; i <= n; i++)
					keys[i] = edge_pkey(qp_pkeys[p]);
				bad += check_pkey_burst(qp_pkeys[p],
							keys + round % 2, n);
			}
	for (i = 0; i < 65536; i++)
		all[i] = (ibk_pkey_t)i;
	for (p = 0; p < sizeof(qp_pkeys) / sizeof(qp_pkeys[0]); p++)
		for (start = 0; start < 65536; start += MAX_BURST)
			bad_all += check_pkey_burst(qp_pkeys[p], all + start,
						    MAX_BURST);
	tap_ok(bad == 0, "pkey_match_burst: %s path == scalar == "
	       "ibk_pkey_match per key, counts, nothing past n, lengths 0..%d "
	       "(%u bad)", ibk_simd_path(), MAX_BURST, bad);
	tap_ok(bad_all == 0, "pkey_match_burst: all 65536 packet keys against "
	       "invalid, limited, full and default QP keys (%u bad)", bad_all);
}

int main(void)
{
	const char *path = ibk_simd_path();

	tap_skip_unless_cpu_runs_build();
	tap_diag("vector path: %s", path);
#if defined(IBK_NO_SIMD)
	tap_ok(strcmp(path, "none") == 0, "IBK_NO_SIMD keeps the scalar loops "
	       "(path %s)", path);
#elif defined(__AVX2__)
	tap_ok(strcmp(path, "avx2") == 0, "an AVX2 build takes the AVX2 path "
	       "(path %s)", path);
#elif defined(__SSE2__)
	tap_ok(strcmp(path, "sse2") == 0, "an SSE2 build takes the SSE2 path "
	       "(path %s)", path);
#else
	tap_ok(strcmp(path, "none") == 0, "not x86: the scalar loops "
	       "(path %s)", path);
#endif
	test_rng_seed(0x51d0001);
	test_rx_random();
	test_rx_one_odd();
	test_pkey_burst();
	return tap_done();
}
