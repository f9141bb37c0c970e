/* SPDX-License-Identifier: MIT */
/*
 * test_simd_mr.c - the R_Key check of a burst (ib_tables.h's
 * ibk_mr_table_check_burst(), whose AVX2 build grants four requests a
 * step in vector lanes) against the check of one request at a time,
 * ibk_mr_table_check(), and that against the rules of ib_keys.h on the
 * object's attributes (ibk_mem_request_parse() and ibk_mem_check() on
 * what ibk_mr_table_get() returns, with the window's region).
 *
 * The table holds objects picked for their edges: regions of every
 * remote access, of another PD, zero-based, ending exactly at 2^64 or
 * starting at 0, a fast-register region not yet registered, windows of
 * type 1 and 2 bound (one zero-based, one to another QP, one to a QPN
 * past 24 bits, one ending at 2^64) and unbound, a deregistered region
 * whose key requests still carry, and empty indexes. Bursts of every length 0..64
 * carry requests of every kind of opcode (with and without a RETH,
 * atomics, other transports), TVer not 0, P_Key bytes of any value,
 * keys of the object, of another key byte or index or beyond the table,
 * lengths 0, 1, 2^31 and beyond, addresses at the ends of the object's
 * reach, past them, wrapping past 2^64 and misaligned for an atomic,
 * to QPs of every type and access, one with a QPN past 24 bits; half the
 * bursts with few edges, so that whole groups of four are granted. A
 * header whose opcode carries
 * no RETH or AtomicETH is a BTH alone in memory of its own, for the
 * address sanitizer. Built like test_simd.c: by default,
 * with -mavx2 and with IBK_NO_SIMD (then both sides are scalar).
 */
#include "ib_tables.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "tap.h"

#define CAP		24u
#define MAX_BURST	64
#define ROUNDS		400
#define PKT_LEN		(IBK_BTH_LEN + IBK_ATOMICETH_LEN)
#define GUARD		0xee	/* what no check may write past n */
#define QPN_A		0x11
#define QPN_B		0x22
#define QPN_HIGH	(QPN_A | 0x1000000u)	/* QPN_A's low 24 bits */
#define TOP		0xffffffffffffffffull	/* 2^64 - 1 */

static struct ibk_mr_cell cells[IBK_MR_CELLS(CAP)];
static struct ibk_mr_table table;
static ibk_rkey_t keys[CAP];	/* each index's key, 0 if none */
static uint32_t edges;	/* a burst's edge cases: 1 in edges per field */

/* Registers a region (or, with @kind, a window or a fast-register MR)
 * at @index; false if the table refuses it. */
static bool add(uint32_t index, uint8_t kind, uint32_t pd, uint32_t access,
		uint64_t addr, uint64_t length)
{
	struct ibk_mem_attr a;

	memset(&a, 0, sizeof(a));
	a.rkey = ibk_rkey_make(index, (uint8_t)(0x40 + index));
	a.pd = pd;
	a.access = access;
	a.addr = addr;
	a.length = length;
	a.kind = kind;
	if (ibk_mr_table_register(&table, &a) != IBK_MEMOP_OK)
		return false;
	keys[index] = a.rkey;
	return true;
}

/* Binds the window at @mw to the region at @mr; false if refused. */
static bool bind(uint32_t mw, uint32_t mr, uint32_t access, uint32_t qpn,
		 uint64_t addr, uint64_t length)
{
	struct ibk_mw_bind_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.mw_rkey = keys[mw];
	wr.mr_lkey = keys[mr];
	wr.key_byte = (uint8_t)(keys[mw] + 0x11);
	wr.addr = addr;
	wr.length = length;
	wr.access = access;
	wr.qpn = qpn;
	wr.qp_pd = 1;
	if (ibk_mr_table_bind(&table, &wr) != IBK_MEMOP_OK)
		return false;
	keys[mw] = ibk_rkey_make(mw, wr.key_byte);
	return true;
}

/* The objects; indexes 21 to CAP - 1 stay empty. */
static bool fill_table(void)
{
	const uint32_t rw = IBK_ACCESS_LOCAL_WRITE | IBK_ACCESS_REMOTE;
	const uint32_t host = rw | IBK_ACCESS_MW_BIND;
	bool ok = ibk_mr_table_init(&table, cells, CAP) == IBK_OK;

	ok &= add(0, IBK_MEM_MR, 1, rw, 0x10000, 0x4000);
	ok &= add(1, IBK_MEM_MR, 1, rw, 0 - 0x2000ull, 0x2000); /* to 2^64 */
	ok &= add(2, IBK_MEM_MR, 1, rw | IBK_ACCESS_ZERO_BASED, 0x50000,
		  0x3000);
	ok &= add(3, IBK_MEM_MR, 2, rw, 0x10000, 0x4000);	/* other PD */
	ok &= add(4, IBK_MEM_MR, 1, IBK_ACCESS_REMOTE_READ, 0x20000, 0x1000);
	ok &= add(5, IBK_MEM_MR, 1, IBK_ACCESS_LOCAL_WRITE |
		  IBK_ACCESS_REMOTE_WRITE, 0x30000, 0x1000);
	ok &= add(6, IBK_MEM_MR, 1, IBK_ACCESS_LOCAL_WRITE |
		  IBK_ACCESS_REMOTE_ATOMIC, 0x40000, 0x1000);
	ok &= add(7, IBK_MEM_MR, 1, host, 0x100000, 0x10000);
	ok &= add(8, IBK_MEM_MW1, 1, 0, 0, 0);
	ok &= add(9, IBK_MEM_MW2, 1, 0, 0, 0);
	ok &= add(10, IBK_MEM_MW2, 1, 0, 0, 0);
	ok &= add(11, IBK_MEM_MW2, 1, 0, 0, 0);	/* never bound */
	ok &= add(12, IBK_MEM_MR_FAST, 1, rw, 0x60000, 0x1000);
	ok &= add(13, IBK_MEM_MW1, 1, 0, 0, 0);	/* never bound */
	ok &= add(14, IBK_MEM_MR, 1, rw, 0, 0x1000);	/* from 0 */
	ok &= add(15, IBK_MEM_MR, 1, rw, 0x8000000000000000ull,
		  0x8000000000000000ull);		/* the top half */
	ok &= add(16, IBK_MEM_MR, 1, host, 0 - 0x4000ull, 0x4000);
	ok &= add(17, IBK_MEM_MW1, 1, 0, 0, 0);
	ok &= add(18, IBK_MEM_MR, 1, rw | IBK_ACCESS_ZERO_BASED, 0, 0x800);
	/* deregistered: its key, PD and access stay, its state INVALID */
	ok &= add(19, IBK_MEM_MR, 1, rw, 0x70000, 0x1000);
	ok &= ibk_mr_table_deregister(&table, keys[19]) == IBK_MEMOP_OK;
	ok &= add(20, IBK_MEM_MW2, 1, 0, 0, 0);
	ok &= bind(8, 7, IBK_ACCESS_REMOTE, QPN_A, 0x101000, 0x2000);
	ok &= bind(9, 7, IBK_ACCESS_REMOTE | IBK_ACCESS_ZERO_BASED, QPN_A,
		   0x104000, 0x1000);
	ok &= bind(10, 7, IBK_ACCESS_REMOTE, QPN_B, 0x108000, 0x1000);
	ok &= bind(17, 16, IBK_ACCESS_REMOTE, QPN_A, 0 - 0x1000ull, 0x1000);
	ok &= bind(20, 7, IBK_ACCESS_REMOTE, QPN_HIGH, 0x10c000, 0x1000);
	return ok;
}

/* A key: mostly an object's own, else another key byte, another index's,
 * an index at or beyond the table, or any. */
static ibk_rkey_t random_key(uint32_t index)
{
	ibk_rkey_t k = keys[index % CAP] ? keys[index % CAP] :
		       ibk_rkey_make(index, 0x40);

	switch (test_rng_below(10 * edges)) {
	case 0: return k ^ (1 + test_rng_below(0xff));
	case 1: return (k & 0xffu) | (uint32_t)test_rng_below(CAP) << 8;
	case 2: return ibk_rkey_make(CAP + test_rng_below(3), (uint8_t)k);
	case 3: return ibk_rkey_make(IBK_RKEY_INDEX_MAX - test_rng_below(2),
				     (uint8_t)k);
	case 4: return (ibk_rkey_t)test_rng64();
	default: return k;
	}
}

/* An address for an object of @attr: at or near either end of its reach
 * (offsets from 0 for a zero-based window), past it, near 2^64, or any. */
static uint64_t random_va(const struct ibk_mem_attr *a, uint32_t len)
{
	bool window = a->kind == IBK_MEM_MW1 || a->kind == IBK_MEM_MW2;
	uint64_t lo = window && (a->access & IBK_ACCESS_ZERO_BASED) ? 0 :
		      a->addr;
	uint64_t end = lo + a->length;

	switch (test_rng_below(8 * edges)) {
	case 0: return lo + test_rng_below(4) - 2;
	case 1: return end - len + test_rng_below(3) - 1;
	case 2: return end - test_rng_below(3);
	case 3: return TOP - test_rng_below(16);
	case 4: return test_rng64();
	default: return lo + test_rng_below(0x80) * 8 +
			(test_rng_below(8) ? 0 : test_rng_below(8));
	}
}

/* A DMA length: 0, 1, small, 2^31 and next to it, or any. */
static uint32_t random_len(void)
{
	switch (test_rng_below(10 * edges)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return 0x80000000u - test_rng_below(2);
	case 3: return 0x80000001u;
	case 4: return (uint32_t)test_rng64();
	default: return 1 + test_rng_below(0x400);
	}
}

/* Writes a request into @pkt: an opcode of any class, TVer mostly 0,
 * P_Key bytes random, a RETH or AtomicETH aimed at a random object. */
static void random_request(uint8_t *pkt)
{
	static const uint8_t ops[] = {
		0x06, 0x0a, 0x0b, 0x0c, 0x13, 0x14,	/* RC keyed */
		0x06, 0x0a, 0x0c, 0x14,
		0x07, 0x08, 0x09, 0x04, 0x10, 0x16, 0x1c, 0x1d,
		0x26, 0x2a, 0x2b, 0x2c, 0x33, 0x34, 0x27, 0x64, 0x81,
	};
	struct ibk_mem_attr a;
	uint32_t index = test_rng_below(CAP + 2);
	uint8_t op = test_rng_below(16) ? ops[test_rng_below(edges > 1 ? 10 :
							     sizeof(ops))] :
		     (uint8_t)test_rng64();
	uint32_t len = random_len();
	uint8_t *ext = pkt + IBK_BTH_LEN;
	unsigned i;

	for (i = 0; i < PKT_LEN; i++)
		pkt[i] = (uint8_t)test_rng64();
	if (ibk_mr_table_get(&table, keys[index % CAP], &a) != IBK_OK)
		memset(&a, 0, sizeof(a));
	pkt[0] = op;
	pkt[1] = test_rng_below(8 * edges) ? (uint8_t)(test_rng64() & 0xf0) :
		 (uint8_t)test_rng64();		/* TVer 0 mostly */
	ibk_reth_set_va(ext, random_va(&a, len));
	ibk_reth_set_rkey(ext, random_key(index));
	ibk_reth_set_dma_len(ext, len);
}

/* The verdict the rules give: the parse, then ibk_mem_check() on the
 * object the table holds at the key's index and its window's region. */
static enum ibk_mem_verdict rule_verdict(const struct ibk_mem_qp *qp,
					 const uint8_t *pkt)
{
	struct ibk_mem_attr o, mr;
	struct ibk_mem_request req;
	enum ibk_mem_verdict v = ibk_mem_request_parse(qp->type, pkt, &req);
	bool has_mr;

	if (v == IBK_MEM_NO_RKEY)
		return ibk_mem_check(qp, &req, NULL, NULL);
	if (v != IBK_MEM_OK)
		return v;
	if (ibk_rkey_index(req.rkey) >= CAP)
		return ibk_mem_check(qp, &req, NULL, NULL);
	/* the object at the index, whatever its key byte */
	if (ibk_mr_table_get(&table, keys[ibk_rkey_index(req.rkey)], &o) !=
	    IBK_OK)
		return ibk_mem_check(qp, &req, NULL, NULL);
	has_mr = (o.kind == IBK_MEM_MW1 || o.kind == IBK_MEM_MW2) &&
		 o.mr_index < CAP && keys[o.mr_index] &&
		 ibk_mr_table_get(&table, keys[o.mr_index], &mr) == IBK_OK;
	return ibk_mem_check(qp, &req, &o, has_mr ? &mr : NULL);
}

/* @pkt, or a copy of its BTH alone in memory of its own when its
 * opcode carries neither a RETH nor an AtomicETH (then nothing may read
 * past the BTH: an address sanitizer build sees any check that does);
 * NULL if memory ran out. */
static const void *header_of(const uint8_t *pkt, void **own)
{
	*own = NULL;
	if (ibk_opcode_has_reth(pkt[0]) || ibk_opcode_has_atomiceth(pkt[0]))
		return pkt;
	*own = malloc(IBK_BTH_LEN);
	if (*own)
		memcpy(*own, pkt, IBK_BTH_LEN);
	return *own;
}

/* A QP: RC mostly, else UC, UD or another type; access of any set. */
static void random_qp(struct ibk_mem_qp *qp)
{
	static const enum ibk_qp_type types[] = {
		IBK_QPT_RC, IBK_QPT_RC, IBK_QPT_RC, IBK_QPT_UC, IBK_QPT_UD,
		IBK_QPT_GSI,
	};

	qp->type = types[edges > 1 ? 0 : test_rng_below(sizeof(types) /
							sizeof(types[0]))];
	qp->qpn = test_rng_below(4 * edges) ? QPN_A :
		  test_rng_below(2) ? QPN_B : QPN_HIGH;
	qp->pd = test_rng_below(8 * edges) ? 1 : 2;
	qp->access = test_rng_below(2 * edges) ? IBK_ACCESS_REMOTE :
		     (uint32_t)test_rng64() & IBK_ACCESS_REMOTE;
}

static void test_bursts(void)
{
	static uint8_t pkts[MAX_BURST][PKT_LEN + 1];
	const void *hdrs[MAX_BURST];
	void *own[MAX_BURST];
	uint8_t verdicts[MAX_BURST + 1];
	unsigned long vs_one = 0, vs_rule = 0, counts = 0, past_n = 0;
	unsigned long granted = 0, total = 0, no_memory = 0;
	struct ibk_mem_qp qp;
	unsigned round, n, i;

	for (round = 0; round < ROUNDS; round++)
		for (n = 0; n <= MAX_BURST; n++) {
			size_t ok = 0, got;

			/* half the bursts mostly of granted requests */
			edges = round % 2 ? 1 : 4 + test_rng_below(8);
			random_qp(&qp);
			for (i = 0; i < n; i++) {
				/* headers at odd places too */
				random_request(pkts[i] + (i & 1));
				hdrs[i] = header_of(pkts[i] + (i & 1), &own[i]);
				if (!hdrs[i]) {
					no_memory++;
					hdrs[i] = pkts[i] + (i & 1);
				}
			}
			memset(verdicts, GUARD, sizeof(verdicts));
			got = ibk_mr_table_check_burst(&table, &qp, hdrs, n,
						       verdicts);
			for (i = 0; i < n; i++) {
				enum ibk_mem_verdict one = ibk_mr_table_check(
					&table, &qp, hdrs[i]);

				vs_one += verdicts[i] != one;
				vs_rule += one != rule_verdict(&qp, hdrs[i]);
				ok += one == IBK_MEM_OK;
			}
			counts += got != ok;
			past_n += verdicts[n] != GUARD;
			for (i = 0; i < n; i++)
				free(own[i]);
			granted += ok;
			total += n;
		}
	tap_ok(vs_one == 0 && past_n == 0 && granted > total / 8 &&
	       no_memory == 0,
	       "bursts of every length 0..%d: each verdict the one-request "
	       "check's, nothing written past n (%lu of %lu granted, %lu "
	       "differ, %lu past n)", MAX_BURST, granted, total, vs_one,
	       past_n);
	tap_ok(counts == 0, "each burst returns its count of IBK_MEM_OK "
	       "(%lu wrong)", counts);
	tap_ok(vs_rule == 0, "the one-request check equals the rules on the "
	       "object's attributes (%lu differ)", vs_rule);
}

int main(void)
{
	tap_skip_unless_cpu_runs_build();
	tap_diag("vector path: %s", ibk_simd_path());
	test_rng_seed(0x51d0003);
	tap_ok(fill_table(), "the table takes every edge object");
	test_bursts();
	return tap_done();
}
