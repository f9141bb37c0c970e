/* SPDX-License-Identifier: MIT */
/*
 * cases_keys.c - the per-packet cases of ib_keys.h: one P_Key match, and
 * the UD receive check over bursts of 32 packets whose headers are in cache.
 */
#include "bench.h"
#include "baseline.h"

#include <stdlib.h>
#include <string.h>

#include "ib_keys.h"
#include "variants.h"

/* ------------------------------------------------------------------------
 * pkey_match: one P_Key pair per operation
 * ------------------------------------------------------------------------ */

/*
 * 2^20 pairs (4 MiB, read in order, so the prefetcher streams them): the
 * branch predictor of this machine learns much of a repeating sequence of
 * 65536 random outcomes, which makes "random" inputs predictable; at 2^20
 * it does not, and the library's loop runs as fast as at 65536.
 */
#define PAIRS (1u << 20)

struct pairs {
	ibk_pkey_t a[PAIRS];
	ibk_pkey_t b[PAIRS];
};

uint16_t bench_random_pkey(struct bench_rng *r)
{
	uint16_t base = (uint16_t)(1 + bench_rng_below(r, 0x7fff));

	return ibk_pkey_make(base, bench_rng_one_in(r, 2));
}

/*
 * Mixed pairs: a is valid with a random membership bit; b shares a's base
 * 3 times in 4 (random membership) and has another base otherwise; each
 * side is an invalid key (base 0) 1 time in 32. About half the pairs match,
 * at random, so a branch cannot learn the outcome.
 */
static void *pairs_setup_mixed(const struct bench_case *c)
{
	struct pairs *p = bench_alloc(sizeof(*p));
	struct bench_rng r = { 0x1b1b0001 };
	size_t i;

	(void)c;
	for (i = 0; i < PAIRS; i++) {
		p->a[i] = bench_random_pkey(&r);
		p->b[i] = bench_random_pkey(&r);
		if (!bench_rng_one_in(&r, 4))
			p->b[i] = (ibk_pkey_t)((p->b[i] & IBK_PKEY_FULL_MEMBER) |
					       ibk_pkey_base(p->a[i]));
		if (bench_rng_one_in(&r, 32))
			p->a[i] &= IBK_PKEY_FULL_MEMBER;
		if (bench_rng_one_in(&r, 32))
			p->b[i] &= IBK_PKEY_FULL_MEMBER;
	}
	return p;
}

/*
 * Pairs that all match (the steady state of a receive path): same valid
 * base, at least one full member. A branch predicts every outcome.
 */
static void *pairs_setup_all_match(const struct bench_case *c)
{
	struct pairs *p = bench_alloc(sizeof(*p));
	struct bench_rng r = { 0x1b1b0002 };
	size_t i;

	(void)c;
	for (i = 0; i < PAIRS; i++) {
		p->a[i] = bench_random_pkey(&r);
		p->b[i] = ibk_pkey_make(ibk_pkey_base(p->a[i]),
					!ibk_pkey_is_full(p->a[i]) ||
					bench_rng_one_in(&r, 2));
	}
	return p;
}

__attribute__((noinline))
static uint64_t pkey_match_lib(void *ctx, uint64_t iters)
{
	const struct pairs *p = ctx;
	uint64_t hits = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		size_t k = i & (PAIRS - 1);

		hits += ibk_pkey_match(p->a[k], p->b[k]);
		BENCH_BARRIER();
	}
	return hits;
}

__attribute__((noinline))
static uint64_t pkey_match_base(void *ctx, uint64_t iters)
{
	const struct pairs *p = ctx;
	uint64_t hits = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		size_t k = i & (PAIRS - 1);

		hits += base_pkey_match(p->a[k], p->b[k]);
		BENCH_BARRIER();
	}
	return hits;
}

static int pairs_check(void *ctx)
{
	const struct pairs *p = ctx;
	size_t i;

	for (i = 0; i < PAIRS; i++)
		if (ibk_pkey_match(p->a[i], p->b[i]) !=
		    base_pkey_match(p->a[i], p->b[i]))
			return -1;
	return 0;
}

static void pairs_note(void *ctx, char *buf, size_t len)
{
	const struct pairs *p = ctx;
	size_t i, hits = 0;

	for (i = 0; i < PAIRS; i++)
		hits += ibk_pkey_match(p->a[i], p->b[i]);
	snprintf(buf, len, "%.1f%% of the %u pairs match",
		 100.0 * (double)hits / PAIRS, PAIRS);
}

/* ------------------------------------------------------------------------
 * pkey_match_burst: one QP's P_Key against bursts of 32 packet P_Keys
 * ------------------------------------------------------------------------ */

#define KEY_BURST 32
#define KEY_QP_PKEY 0x0123	/* limited: the packet's membership decides */

struct key_bursts {
	ibk_pkey_t keys[PAIRS];
	uint8_t match[KEY_BURST];
	uint8_t lib_match[PAIRS];
	uint8_t base_match[PAIRS];
};

/*
 * 2^20 packet keys, read in order (see PAIRS): the QP's base 3 times in 4
 * with a random membership bit, a random base otherwise, an invalid key
 * 1 time in 32. About 3/8 match, at random.
 */
static void *key_bursts_setup(const struct bench_case *c)
{
	struct key_bursts *k = bench_alloc(sizeof(*k));
	struct bench_rng r = { 0x1b1b0004 };
	size_t i;

	(void)c;
	for (i = 0; i < PAIRS; i++) {
		k->keys[i] = bench_random_pkey(&r);
		if (!bench_rng_one_in(&r, 4))
			k->keys[i] = (ibk_pkey_t)((k->keys[i] &
						   IBK_PKEY_FULL_MEMBER) |
						  KEY_QP_PKEY);
		if (bench_rng_one_in(&r, 32))
			k->keys[i] &= IBK_PKEY_FULL_MEMBER;
	}
	return k;
}

/* The baseline: the branchy match of each key, one by one. */
static size_t base_pkey_match_burst(ibk_pkey_t qp, const ibk_pkey_t *keys,
				    uint8_t *match, size_t n)
{
	size_t count = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		match[i] = base_pkey_match(qp, keys[i]);
		count += match[i];
	}
	return count;
}

/* One iteration is one burst; bursts walk the keys in turn. */
static const ibk_pkey_t *key_burst_at(const struct key_bursts *k, uint64_t i)
{
	return k->keys + (i % (PAIRS / KEY_BURST)) * KEY_BURST;
}

__attribute__((noinline))
static uint64_t key_bursts_lib(void *ctx, uint64_t iters)
{
	struct key_bursts *k = ctx;
	uint64_t hits = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		hits += ibk_pkey_match_burst(KEY_QP_PKEY, key_burst_at(k, i),
					     KEY_BURST, k->match);
		BENCH_BARRIER();
	}
	return hits;
}

__attribute__((noinline))
static uint64_t key_bursts_base(void *ctx, uint64_t iters)
{
	struct key_bursts *k = ctx;
	uint64_t hits = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		hits += base_pkey_match_burst(KEY_QP_PKEY, key_burst_at(k, i),
					      k->match, KEY_BURST);
		BENCH_BARRIER();
	}
	return hits;
}

/* key_bursts_lib() built with IBK_NO_SIMD (variants.c). */
__attribute__((noinline))
static uint64_t key_bursts_scalar(void *ctx, uint64_t iters)
{
	struct key_bursts *k = ctx;

	return variant_scalar_pkey_match_burst(KEY_QP_PKEY, k->keys, PAIRS,
					       KEY_BURST, k->match, iters);
}

/* ibk_pkey_match() key by key in a plain loop (variants.c). */
__attribute__((noinline))
static uint64_t key_bursts_plain(void *ctx, uint64_t iters)
{
	struct key_bursts *k = ctx;

	return variant_plain_pkey_match_burst(KEY_QP_PKEY, k->keys, PAIRS,
					      KEY_BURST, k->match, iters);
}

/* A variant's burst of KEY_BURST keys from keys[i], as variants.h has it. */
typedef uint64_t (*key_variant_fn)(ibk_pkey_t qp_pkey, const ibk_pkey_t *keys,
				   size_t seq, size_t burst, uint8_t *match,
				   uint64_t iters);

static unsigned key_bursts_variants(void *ctx, struct bench_side *sides)
{
	static const key_variant_fn fns[] = {
		variant_scalar_pkey_match_burst, variant_plain_pkey_match_burst
	};
	struct key_bursts *k = ctx;
	size_t i, v;

	ibk_pkey_match_burst(KEY_QP_PKEY, k->keys, PAIRS, k->lib_match);
	for (v = 0; v < 2; v++)
		for (i = 0; i < PAIRS; i += KEY_BURST) {
			fns[v](KEY_QP_PKEY, k->keys + i, KEY_BURST, KEY_BURST,
			       k->match, 1);
			bench_variant_agrees(!memcmp(k->lib_match + i, k->match,
						     KEY_BURST),
					     v ? "plain P_Key burst" :
						 "scalar P_Key burst");
		}
	sides[0] = (struct bench_side){ "variant:scalar", key_bursts_scalar,
					ctx };
	sides[1] = (struct bench_side){ "variant:plain", key_bursts_plain,
					ctx };
	return 2;
}

static int key_bursts_check(void *ctx)
{
	struct key_bursts *k = ctx;

	if (ibk_pkey_match_burst(KEY_QP_PKEY, k->keys, PAIRS, k->lib_match) !=
	    base_pkey_match_burst(KEY_QP_PKEY, k->keys, k->base_match, PAIRS))
		return -1;
	return memcmp(k->lib_match, k->base_match, PAIRS) ? -1 : 0;
}

static void key_bursts_note(void *ctx, char *buf, size_t len)
{
	struct key_bursts *k = ctx;
	size_t hits = base_pkey_match_burst(KEY_QP_PKEY, k->keys,
					    k->base_match, PAIRS);

	snprintf(buf, len, "%.1f%% of the %u keys match; vector path: %s",
		 100.0 * (double)hits / PAIRS, PAIRS, ibk_simd_path());
}

/* ------------------------------------------------------------------------
 * rx_ud_burst: UD receive check (P_Key then Q_Key), 32 packets per burst
 * ------------------------------------------------------------------------ */

/*
 * 256 packet buffers of 64 bytes (16 KiB, in L1) received in a random
 * order of 2^20 packets: the header pointers are read in order (8 MiB,
 * streamed by the prefetcher), and the sequence of verdicts is too long
 * for the branch predictor to learn (see PAIRS).
 */
#define BURST BENCH_RX_BURST
#define BUFFERS BENCH_RX_BUFFERS
#define BUFFER_SIZE BENCH_RX_BUFFER_SIZE
#define SEQUENCE BENCH_RX_SEQUENCE
#define LRH_LEN BENCH_LRH_LEN

struct rx {
	ibk_pkey_t qp_pkey;
	ibk_qkey_t qp_qkey;
	uint8_t *buffers;
	const void *hdrs[SEQUENCE];
	uint8_t verdicts[BURST];
	uint8_t lib_verdicts[SEQUENCE];
	uint8_t base_verdicts[SEQUENCE];
};

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	put_be16(p, (uint16_t)(v >> 16));
	put_be16(p + 2, (uint16_t)v);
}

void bench_rx_write_packet(struct bench_rng *r, uint8_t opcode,
			   uint16_t qp_pkey, uint32_t qp_qkey,
			   unsigned drop_1_in, uint8_t *bth)
{
	uint16_t pkey = (uint16_t)(qp_pkey & IBK_PKEY_BASE_MASK);
	uint32_t qkey = qp_qkey;

	if (bench_rng_one_in(r, 2))
		pkey |= IBK_PKEY_FULL_MEMBER;
	if (drop_1_in && bench_rng_one_in(r, drop_1_in))
		pkey = (uint16_t)(pkey ^ (1 + bench_rng_below(r, 0x7ffe)));
	else if (drop_1_in && opcode == 0x64 &&
		 bench_rng_one_in(r, drop_1_in - 1))
		qkey ^= 1u + bench_rng_below(r, 0xfffffffe);
	bth[0] = opcode;
	put_be16(bth + 2, pkey);
	put_be32(bth + 4, 42);			/* dest QP */
	put_be32(bth + 8, bench_rng_below(r, 1u << 24));
	put_be32(bth + 12, qkey);		/* DETH Q_Key */
	put_be32(bth + 16, 0x000107);		/* source QP */
}

void bench_rx_packets(struct bench_rng *r, uint16_t qp_pkey,
		      uint32_t qp_qkey, unsigned drop_1_in, uint8_t *buffers,
		      const void **hdrs)
{
	size_t i;

	for (i = 0; i < BUFFERS; i++)
		bench_rx_write_packet(r, 0x64, qp_pkey, qp_qkey, drop_1_in,
				      buffers + i * BUFFER_SIZE + LRH_LEN);
	for (i = 0; i < SEQUENCE; i++)
		hdrs[i] = buffers + bench_rng_below(r, BUFFERS) * BUFFER_SIZE +
			  LRH_LEN;
}

static void *rx_setup(const struct bench_case *c)
{
	struct rx *rx = bench_alloc(sizeof(*rx));
	struct bench_rng r = { 0x1b1b0003 };

	rx->qp_pkey = 0x8123;
	rx->qp_qkey = 0x00000b1b;
	rx->buffers = bench_alloc(BUFFERS * BUFFER_SIZE);
	bench_rx_packets(&r, rx->qp_pkey, rx->qp_qkey, (unsigned)c->param,
			 rx->buffers, rx->hdrs);
	return rx;
}

static void rx_teardown(void *ctx)
{
	struct rx *rx = ctx;

	free(rx->buffers);
	free(rx);
}

/* One iteration is one burst; bursts walk the packets in turn. */
static const void *const *rx_burst_at(const struct rx *rx, uint64_t i)
{
	return rx->hdrs + (i % (SEQUENCE / BURST)) * BURST;
}

__attribute__((noinline))
static uint64_t rx_lib(void *ctx, uint64_t iters)
{
	struct rx *rx = ctx;
	uint64_t accepted = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		accepted += ibk_rx_ud_burst(rx->qp_pkey, rx->qp_qkey,
					    rx_burst_at(rx, i), BURST,
					    rx->verdicts);
		BENCH_BARRIER();
	}
	return accepted;
}

__attribute__((noinline))
static uint64_t rx_base(void *ctx, uint64_t iters)
{
	struct rx *rx = ctx;
	uint64_t accepted = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		accepted += base_rx_ud(rx->qp_pkey, rx->qp_qkey,
				       rx_burst_at(rx, i), rx->verdicts, BURST);
		BENCH_BARRIER();
	}
	return accepted;
}

__attribute__((noinline))
static uint64_t rx_rxe(void *ctx, uint64_t iters)
{
	struct rx *rx = ctx;
	uint64_t accepted = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		accepted += base_rxe_rx_ud(rx->qp_pkey, rx->qp_qkey,
					   rx_burst_at(rx, i), rx->verdicts,
					   BURST);
		BENCH_BARRIER();
	}
	return accepted;
}

/* rx_lib() built with IBK_NO_SIMD (variants.c). */
__attribute__((noinline))
static uint64_t rx_scalar(void *ctx, uint64_t iters)
{
	struct rx *rx = ctx;

	return variant_scalar_rx_ud_burst(rx->qp_pkey, rx->qp_qkey, rx->hdrs,
					  SEQUENCE, BURST, rx->verdicts,
					  iters);
}

/* The scalar burst counting its accepted packets one by one (variants.c). */
__attribute__((noinline))
static uint64_t rx_plain(void *ctx, uint64_t iters)
{
	struct rx *rx = ctx;

	return variant_plain_rx_ud_burst(rx->qp_pkey, rx->qp_qkey, rx->hdrs,
					 SEQUENCE, BURST, rx->verdicts, iters);
}

#if defined(BENCH_HAVE_SSE2_VARIANT)
/* rx_lib() on the SSE2 path of an -march=x86-64 build (variants.c). */
__attribute__((noinline))
static uint64_t rx_sse2(void *ctx, uint64_t iters)
{
	struct rx *rx = ctx;

	return variant_sse2_rx_ud_burst(rx->qp_pkey, rx->qp_qkey, rx->hdrs,
					SEQUENCE, BURST, rx->verdicts, iters);
}
#endif

/* A variant's burst of BURST packets from hdrs, as variants.h has it. */
typedef uint64_t (*rx_variant_fn)(ibk_pkey_t qp_pkey, ibk_qkey_t qp_qkey,
				  const void *const *hdrs, size_t seq,
				  size_t burst, uint8_t *verdicts,
				  uint64_t iters);

/* Soft-RoCE's checks beside the branchy baseline, and the simpler paths
 * of the library's burst, which must give its verdicts and counts. */
static unsigned rx_peers(void *ctx, struct bench_side *sides)
{
	static const struct {
		const char *name;
		rx_variant_fn burst;
		bench_run_fn run;
	} variants[] = {
#if defined(BENCH_HAVE_SSE2_VARIANT)
		{ "variant:sse2", variant_sse2_rx_ud_burst, rx_sse2 },
#endif
		{ "variant:scalar", variant_scalar_rx_ud_burst, rx_scalar },
		{ "variant:plain", variant_plain_rx_ud_burst, rx_plain },
	};
	const unsigned nvariants = sizeof(variants) / sizeof(variants[0]);
	struct rx *rx = ctx;
	size_t i, lib_n;
	unsigned v;

	for (i = 0; i < SEQUENCE; i += BURST) {
		lib_n = ibk_rx_ud_burst(rx->qp_pkey, rx->qp_qkey,
					rx->hdrs + i, BURST,
					rx->lib_verdicts + i);
		for (v = 0; v < nvariants; v++)
			bench_variant_agrees(variants[v].burst(rx->qp_pkey,
						rx->qp_qkey, rx->hdrs + i,
						BURST, BURST, rx->verdicts,
						1) == lib_n &&
					     !memcmp(rx->lib_verdicts + i,
						     rx->verdicts, BURST),
					     variants[v].name);
	}
	sides[0] = (struct bench_side){ "rxe_check_keys", rx_rxe, ctx };
	for (v = 0; v < nvariants; v++)
		sides[1 + v] = (struct bench_side){ variants[v].name,
						    variants[v].run, ctx };
	return 1 + nvariants;
}

int bench_rx_same_verdict(uint8_t lib, uint8_t base)
{
	switch (base) {
	case BASE_ACCEPT:		return lib == IBK_RX_ACCEPT;
	case BASE_DROP_PKEY:		return lib == IBK_RX_DROP_PKEY;
	case BASE_DROP_QKEY:		return lib == IBK_RX_DROP_QKEY;
	case BASE_DROP_PKEY_INDEX:	return lib == IBK_RX_DROP_PKEY_INDEX;
	case BASE_DROP_TVER:		return lib == IBK_RX_DROP_TVER;
	case BASE_DROP_OPCODE:		return lib == IBK_RX_DROP_OPCODE;
	default:			return 0;
	}
}

/* A UD burst check of a baseline: base_rx_ud() or base_rxe_rx_ud(). */
typedef size_t (*rx_base_fn)(uint16_t qp_pkey, uint32_t qp_qkey,
			     const void *const *hdrs, uint8_t *verdicts,
			     size_t n);

/* The library's verdicts and count against each baseline's: the branchy
 * one and soft-RoCE's (baseline.h says why all are comparable here). */
static int rx_check(void *ctx)
{
	static const rx_base_fn bases[] = { base_rx_ud, base_rxe_rx_ud };
	struct rx *rx = ctx;
	size_t i, b, lib_n, base_n;

	lib_n = ibk_rx_ud_burst(rx->qp_pkey, rx->qp_qkey, rx->hdrs,
				SEQUENCE, rx->lib_verdicts);
	for (b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		base_n = bases[b](rx->qp_pkey, rx->qp_qkey, rx->hdrs,
				  rx->base_verdicts, SEQUENCE);
		if (lib_n != base_n)
			return -1;
		for (i = 0; i < SEQUENCE; i++)
			if (!bench_rx_same_verdict(rx->lib_verdicts[i],
						   rx->base_verdicts[i]))
				return -1;
	}
	return 0;
}

void bench_rx_note(uint16_t qp_pkey, uint32_t qp_qkey,
		   const void *const *hdrs, uint8_t *verdicts, char *buf,
		   size_t len)
{
	unsigned count[BASE_VERDICTS] = { 0 };
	size_t i;

	base_rx_ud(qp_pkey, qp_qkey, hdrs, verdicts, SEQUENCE);
	for (i = 0; i < SEQUENCE; i++)
		count[verdicts[i]]++;
	snprintf(buf, len,
		 "%u packets: %u accept, %u P_Key drop, %u Q_Key drop; "
		 "vector path: %s", SEQUENCE, count[BASE_ACCEPT],
		 count[BASE_DROP_PKEY], count[BASE_DROP_QKEY], ibk_simd_path());
}

static void rx_note(void *ctx, char *buf, size_t len)
{
	struct rx *rx = ctx;

	bench_rx_note(rx->qp_pkey, rx->qp_qkey, rx->hdrs, rx->base_verdicts,
		      buf, len);
}

const struct bench_case bench_keys_cases[] = {
	{
		.name = "pkey_match", .base_name = "branchy",
		.inputs = "2^20 random pairs, ~half match at random "
			  "(same base 3/4, invalid key 1/32 per side)",
		.ops_per_iter = 1,
		.setup = pairs_setup_mixed, .teardown = free,
		.lib = pkey_match_lib, .base = pkey_match_base,
		.check = pairs_check, .note = pairs_note,
	},
	{
		.name = "pkey_match_all_match", .base_name = "branchy",
		.inputs = "2^20 random pairs that all match "
			  "(predictable branches)",
		.ops_per_iter = 1,
		.setup = pairs_setup_all_match, .teardown = free,
		.lib = pkey_match_lib, .base = pkey_match_base,
		.check = pairs_check, .note = pairs_note,
	},
	{
		.name = "pkey_match_burst", .base_name = "per_key_branchy",
		.inputs = "bursts of 32 of 2^20 packet keys against a limited "
			  "QP key, ~3/8 match at random",
		.ops_per_iter = KEY_BURST,
		.setup = key_bursts_setup, .teardown = free,
		.lib = key_bursts_lib, .base = key_bursts_base,
		.check = key_bursts_check, .note = key_bursts_note,
		.peers = key_bursts_variants,
	},
	{
		.name = "rx_ud_burst", .base_name = "per_packet_branchy",
		.inputs = "bursts of 32 from 256 UD packets in L1, in a random "
			  "order of 2^20; P_Key drop 1/16, Q_Key drop 1/16",
		.param = 16, .ops_per_iter = BURST,
		.setup = rx_setup, .teardown = rx_teardown,
		.lib = rx_lib, .base = rx_base,
		.check = rx_check, .note = rx_note, .peers = rx_peers,
	},
	{
		.name = "rx_ud_burst_all_accept",
		.base_name = "per_packet_branchy",
		.inputs = "bursts of 32 from 256 UD packets in L1, in a random "
			  "order of 2^20; all accepted (predictable branches)",
		.param = 0, .ops_per_iter = BURST,
		.setup = rx_setup, .teardown = rx_teardown,
		.lib = rx_lib, .base = rx_base,
		.check = rx_check, .note = rx_note, .peers = rx_peers,
	},
};

const size_t bench_keys_ncases =
	sizeof(bench_keys_cases) / sizeof(bench_keys_cases[0]);
