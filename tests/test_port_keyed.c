/* SPDX-License-Identifier: MIT */
/*
 * test_port_keyed.c - the port bursts' keyed pass (ib_tables.h's
 * ibk__port_burst_keyed(), which ibk_port_rx_mixed() and
 * ibk_port_rx_burst() run on a readable table) against the port model
 * (port_model.h).
 *
 * The pass decides, per packet to an RC, UC or UD QP whose P_Key index
 * holds a valid key, accept, a P_Key drop (or a header drop, reported as
 * one and flagged for the re-check) or a Q_Key drop, and leaves every
 * other packet undecided (0xff). Every burst length 0..64 is tried, with
 * QPs of every type and some outside the enum (one wrapping
 * to a small kind), P_Key indices inside, at and beyond the capacity,
 * empty and invalid entries (0x0000, 0x8000), full and limited entries
 * against packets of either membership, opcodes of every transport, TVer
 * not 0, Q_Keys near the QP's, and headers at every alignment.
 */
#include "ib_tables.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "port_model.h"
#include "rng.h"
#include "tap.h"

#define MAX_BURST	64
#define CAPACITY	16
#define HDR_BYTES	(IBK_BTH_LEN + IBK_DETH_LEN)
#define GUARD		0xee	/* what no path may write past n */
#define UNDECIDED	0xff	/* IBK__RX_UNDECIDED */

static struct ibk_pkey_cell cells[CAPACITY];
static ibk_pkey_t entries[CAPACITY];

/* QP types: the five, then values outside the enum (the second's kind,
 * 0x80000000, is negative to a signed compare). */
static const uint32_t qp_types[] = {
	IBK_QPT_SMI, IBK_QPT_GSI, IBK_QPT_RC, IBK_QPT_UC, IBK_QPT_UD,
	IBK_QPT_RC, IBK_QPT_UC, IBK_QPT_UD, 5, 0x80000002u, 0xffffffffu,
};

/* Fills the table: empty and invalid entries, full and limited keys. */
static void fill_entries(void)
{
	static const ibk_pkey_t some[] = { 0x0000, 0x8000, 0x0123, 0x8123,
					   0x7fff, 0xffff, 0x0001, 0x8001 };
	unsigned i;

	for (i = 0; i < CAPACITY; i++) {
		entries[i] = test_rng_below(2) ?
			     some[test_rng_below(sizeof(some) / sizeof(some[0]))] :
			     (ibk_pkey_t)test_rng64();
		ibk__store(&cells[i].pkey, entries[i], relaxed);
	}
}

/* A random QP: any type, an index mostly inside the table. */
static void random_qp(struct ibk_qp_keys *qp)
{
	uint32_t r = test_rng_below(16);

	memset(qp, 0, sizeof(*qp));
	qp->type = (enum ibk_qp_type)(uint32_t)
		   qp_types[test_rng_below(sizeof(qp_types) /
					   sizeof(qp_types[0]))];
	qp->pkey_index = (uint16_t)(r < 13 ? test_rng_below(CAPACITY) :
				    r == 13 ? CAPACITY :
				    r == 14 ? 0xffff : test_rng64());
	qp->qkey = test_rng_below(4) ? (uint32_t)test_rng64() :
		   0x80000000u | (uint32_t)test_rng64();
}

/* An opcode for @type: mostly one it receives, else any. */
static uint8_t edge_opcode(uint32_t type)
{
	uint32_t r = test_rng_below(8);

	if (r == 0)
		return (uint8_t)test_rng64();
	if (type == IBK_QPT_UD || r == 1)
		return (uint8_t)(IBK_OPCODE_UD_SEND_ONLY + test_rng_below(2));
	if (type == IBK_QPT_UC || r == 2)
		return (uint8_t)(0x20 + test_rng_below(32));
	return (uint8_t)test_rng_below(32);	/* RC */
}

/* Writes a packet to @qp at @h: P_Key near its entry, Q_Key near its. */
static void write_packet(uint8_t *h, const struct ibk_qp_keys *qp)
{
	ibk_pkey_t entry = qp->pkey_index < CAPACITY ?
			   entries[qp->pkey_index] : 0x8123;
	uint32_t r = test_rng_below(8);
	unsigned i;

	for (i = 0; i < HDR_BYTES; i++)
		h[i] = (uint8_t)test_rng64();
	h[0] = edge_opcode((uint32_t)qp->type);
	h[1] &= 0xf0;
	if (test_rng_below(8) == 0)
		h[1] |= (uint8_t)(1 + test_rng_below(15));	/* TVer */
	ibk_bth_set_pkey(h, r < 3 ? entry : r == 3 ? entry ^ 0x8000u :
			    r == 4 ? (ibk_pkey_t)(test_rng_below(2) << 15) :
			    r == 5 ? entry ^ (1u << test_rng_below(15)) :
			    (ibk_pkey_t)(entry | 0x8000u));
	ibk_deth_set_qkey(h + IBK_BTH_LEN, test_rng_below(2) ? qp->qkey :
			  qp->qkey ^ (1u << test_rng_below(32)));
}

struct tally {
	unsigned vs_rule;	/* a verdict the port model refutes */
	unsigned past_n;	/* a byte written past n */
	unsigned seen[4];	/* accept, P_Key, Q_Key, undecided met */
};

/* True if the keyed pass must decide a packet to @qp. */
static bool decidable(const struct ibk_qp_keys *qp)
{
	uint32_t kind = (uint32_t)qp->type - IBK_QPT_RC;

	return kind <= IBK_QPT_UD - IBK_QPT_RC &&
	       qp->pkey_index < CAPACITY &&
	       ibk_pkey_is_valid(entries[qp->pkey_index]);
}

/* Checks verdict @v of the packet at @h to @qp against the port model
 * (port_model.h) on the table; a header drop must be reported as a P_Key
 * drop and flagged by @recheck. Returns 1 if refuted. */
static unsigned refuted(unsigned v, const struct ibk_qp_keys *qp,
			const uint8_t *h, bool recheck)
{
	enum ibk_rx_verdict rule;
	uint16_t index;

	if (!decidable(qp))
		return v != UNDECIDED;
	rule = model_port_rx(entries, CAPACITY, true, qp, h, h + IBK_BTH_LEN,
			     &index);
	if (rule == IBK_RX_DROP_TVER || rule == IBK_RX_DROP_OPCODE)
		return v != IBK_RX_DROP_PKEY || !recheck;
	return v != (unsigned)rule;
}

/* Runs the pass on one burst of @n and checks it. */
static void check_burst(struct tally *t, const struct ibk_qp_keys *const *qps,
			const void *const *hdrs, size_t n)
{
	uint8_t v[MAX_BURST + 16];
	bool recheck;
	size_t i;

	memset(v, GUARD, sizeof(v));
	recheck = ibk__port_burst_keyed(cells, CAPACITY, qps, hdrs, n, v);
	for (i = 0; i < n; i++) {
		t->vs_rule += refuted(v[i], qps[i], (const uint8_t *)hdrs[i],
				      recheck);
		t->seen[v[i] == UNDECIDED ? 3 : v[i] & 3]++;
	}
	for (i = n; i < sizeof(v); i++)
		t->past_n += v[i] != GUARD;
}

static uint8_t pool[MAX_BURST][HDR_BYTES + 16];
static struct ibk_qp_keys qp_pool[MAX_BURST];

/* Random bursts of every length 0..64, headers at random offsets. */
static void test_random(void)
{
	const struct ibk_qp_keys *qps[MAX_BURST];
	const void *hdrs[MAX_BURST];
	struct tally t;
	unsigned round;
	size_t n, i;

	memset(&t, 0, sizeof(t));
	for (round = 0; round < 300; round++) {
		fill_entries();
		for (i = 0; i < MAX_BURST; i++)
			random_qp(&qp_pool[i]);
		for (n = 0; n <= MAX_BURST; n++) {
			for (i = 0; i < n; i++) {
				uint8_t *h = pool[i] + test_rng_below(16);

				qps[i] = &qp_pool[test_rng_below(MAX_BURST)];
				write_packet(h, qps[i]);
				hdrs[i] = h;
			}
			check_burst(&t, qps, hdrs, n);
		}
	}
	tap_ok(t.vs_rule == 0 && t.past_n == 0, "port keyed pass: every "
	       "verdict == the port model's, undecided where "
	       "the pass must not decide, nothing past n (%u refuted, %u "
	       "bytes past n)", t.vs_rule, t.past_n);
	tap_ok(t.seen[0] && t.seen[1] && t.seen[2] && t.seen[3],
	       "port keyed pass: accepts, P_Key drops, Q_Key drops and "
	       "undecided packets all met (%u %u %u %u)", t.seen[0],
	       t.seen[1], t.seen[2], t.seen[3]);
}

/*
 * Bursts of accepted packets to one UD and one RC QP, every length 1..64,
 * with one packet at each place made a header drop (TVer 1) or sent to a
 * QP the pass leaves undecided (QP1): the re-check flag must be raised
 * from every place, and only then.
 */
static void test_one_odd(void)
{
	struct ibk_qp_keys ud = { IBK_QPT_UD, 0, 1, 0x80010000u };
	struct ibk_qp_keys rc = { IBK_QPT_RC, 0, 2, 0 };
	struct ibk_qp_keys gsi = { IBK_QPT_GSI, 0, 1, IBK_QKEY_GSI };
	const struct ibk_qp_keys *qps[MAX_BURST];
	const void *hdrs[MAX_BURST];
	struct tally t;
	unsigned flags_bad = 0, kind;
	size_t n, at, i;

	memset(&t, 0, sizeof(t));
	for (i = 0; i < CAPACITY; i++) {
		entries[i] = (ibk_pkey_t)(0x8000u | (0x100u + i));
		ibk__store(&cells[i].pkey, entries[i], relaxed);
	}
	for (kind = 0; kind < 3; kind++)
		for (n = 1; n <= MAX_BURST; n++)
			for (at = 0; at < n; at++) {
				uint8_t sv[MAX_BURST];
				bool flag;

				for (i = 0; i < n; i++) {
					qps[i] = i % 2 ? &rc : &ud;
					hdrs[i] = pool[i] + i % 16;
					write_packet(pool[i] + i % 16, qps[i]);
					pool[i][i % 16] = i % 2 ? 0x04 : 0x64;
					pool[i][i % 16 + 1] = 0;
					ibk_bth_set_pkey(pool[i] + i % 16,
							 entries[qps[i]->pkey_index]);
					ibk_deth_set_qkey(pool[i] + i % 16 +
							  IBK_BTH_LEN, ud.qkey);
				}
				if (kind == 0)
					pool[at][at % 16 + 1] = 1;	/* TVer */
				else if (kind == 1)
					qps[at] = &gsi;
				check_burst(&t, qps, hdrs, n);
				flag = ibk__port_burst_keyed(cells, CAPACITY,
							     qps, hdrs, n, sv);
				flags_bad += flag != (kind < 2);
			}
	tap_ok(t.vs_rule == 0 && t.past_n == 0 && flags_bad == 0,
	       "port keyed pass: one header drop or undecided packet at every "
	       "place of every length 1..%d raises the re-check flag, a clean "
	       "burst does not (%u refuted, %u past n, %u flags)", MAX_BURST,
	       t.vs_rule, t.past_n, flags_bad);
}

int main(void)
{
	test_rng_seed(0x51d0002);
	test_random();
	test_one_odd();
	return tap_done();
}
