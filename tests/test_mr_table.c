/* SPDX-License-Identifier: MIT */
/*
 * test_mr_table.c - the memory region and window table of ib_tables.h
 * against a linear model, single-threaded:
 *
 *  - the model is a plain array of struct ibk_mem_attr; each operation
 *    applies the rule of ib_keys.h (tested on its own in test_mem.c) to
 *    the objects it names, and an MR's window count is recounted from
 *    scratch by scanning every window after each one, never maintained;
 *  - lookups in the model scan the whole array for a live object with the
 *    whole 32-bit key; the table reads one cell by the key's index;
 *  - 200000 random operations (register, re-register, fast register,
 *    bind, local and remote invalidate, deregister) with keys current,
 *    stale and wrong, remote ones from QPs of either PD:
 *    the table must return what the model returns, hold exactly the
 *    model's objects in both latch copies after each, move its generation
 *    by one update per published operation and by none for a refused one;
 *  - references, the single and the burst responder check against the
 *    model's verdict for random requests.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ib_tables.h"
#include "rng.h"
#include "tap.h"

#define SEED		0x3d7ab1e5eed12345ull
#define CAP		64u
#define OPS		200000ul

static struct ibk_mr_cell cells[IBK_MR_CELLS(CAP)];
static struct ibk_mr_table table;
static struct ibk_mem_attr model[CAP];
static unsigned long diags;	/* failing cases shown (tap_diag_first()) */

static bool same_attr(const struct ibk_mem_attr *a,
		      const struct ibk_mem_attr *b)
{
	return a->addr == b->addr && a->length == b->length &&
	       a->rkey == b->rkey && a->pd == b->pd && a->access == b->access &&
	       a->qpn == b->qpn && a->mr_index == b->mr_index &&
	       a->windows == b->windows && a->kind == b->kind &&
	       a->state == b->state;
}

static bool is_window(const struct ibk_mem_attr *o)
{
	return o->kind == IBK_MEM_MW1 || o->kind == IBK_MEM_MW2;
}

/* Recount every MR's windows: live windows with a range, by MR index. */
static void model_recount(void)
{
	unsigned i;

	for (i = 0; i < CAP; i++)
		if (!is_window(&model[i]))
			model[i].windows = 0;
	for (i = 0; i < CAP; i++)
		if (is_window(&model[i]) && model[i].state == IBK_MEM_VALID &&
		    model[i].length != 0 && model[i].mr_index < CAP)
			model[model[i].mr_index].windows++;
}

/* The live object with exactly @key, by scanning; NULL if none. */
static const struct ibk_mem_attr *model_find(ibk_rkey_t key)
{
	unsigned i;

	for (i = 0; i < CAP; i++)
		if (model[i].state != IBK_MEM_INVALID && model[i].rkey == key)
			return &model[i];
	return NULL;
}

static uint32_t count_now(void)
{
	return ibk__load(&table.latch.count, acquire);
}

/* ---- the model's operations: the rule, then recount ---- */

static int model_register(const struct ibk_mem_attr *attr)
{
	uint32_t i = ibk_rkey_index(attr->rkey);
	struct ibk_mem_attr o = *attr;
	enum ibk_memop_verdict v;

	if (i >= CAP)		/* no key names an index past the table */
		return IBK_MEMOP_ERR_KEY;
	if (model[i].state != IBK_MEM_INVALID)
		return IBK_MEMOP_ERR_IN_USE;
	v = ibk_mem_register(&o);
	if (v == IBK_MEMOP_OK)
		model[i] = o;
	model_recount();
	return (int)v;
}

/* The object at @key's index if it holds @key, else NULL. */
static struct ibk_mem_attr *model_at(ibk_rkey_t key)
{
	uint32_t i = ibk_rkey_index(key);

	return i < CAP && model[i].rkey == key ? &model[i] : NULL;
}

static int model_rereg(ibk_rkey_t key, const struct ibk_mem_attr *next)
{
	struct ibk_mem_attr *o = model_at(key), copy;
	enum ibk_memop_verdict v;

	if (!o)
		return IBK_MEMOP_ERR_KEY;
	copy = *o;
	v = ibk_mr_rereg(&copy, next);
	if (v == IBK_MEMOP_OK)
		*o = copy;
	return (int)v;
}

static int model_fast_reg(uint32_t pd, const struct ibk_mem_attr *next)
{
	uint32_t i = ibk_rkey_index(next->rkey);
	struct ibk_mem_attr copy;
	enum ibk_memop_verdict v;

	if (i >= CAP)
		return IBK_MEMOP_ERR_KEY;
	copy = model[i];
	v = ibk_mr_fast_reg(&copy, pd, next);
	if (v == IBK_MEMOP_OK)
		model[i] = copy;
	return (int)v;
}

static int model_bind(const struct ibk_mw_bind_wr *wr)
{
	uint32_t w = ibk_rkey_index(wr->mw_rkey);
	uint32_t m = ibk_rkey_index(wr->mr_lkey);
	struct ibk_mem_attr mw, mr;
	enum ibk_memop_verdict v;

	if (w >= CAP)
		return IBK_MEMOP_ERR_KEY;
	mw = model[w];
	if (wr->length != 0 && m < CAP)
		mr = model[m];
	/* the rule decides; the counts are recounted below, not moved */
	v = ibk_mw_bind(&mw, wr->length != 0 && m < CAP ? &mr : NULL, NULL,
			wr);
	if (v == IBK_MEMOP_OK)
		model[w] = mw;
	model_recount();
	return (int)v;
}

/* Invalidation or deregistration by @key: @rule on the object at its
 * index; the MR a window leaves is recounted, not passed. */
static int model_by_key(ibk_rkey_t key,
			enum ibk_memop_verdict (*rule)(struct ibk_mem_attr *,
						       struct ibk_mem_attr *,
						       ibk_rkey_t))
{
	uint32_t i = ibk_rkey_index(key);
	struct ibk_mem_attr copy;
	enum ibk_memop_verdict v;

	if (i >= CAP)
		return IBK_MEMOP_ERR_KEY;
	copy = model[i];
	v = rule(&copy, NULL, key);
	if (v == IBK_MEMOP_OK)
		model[i] = copy;
	model_recount();
	return (int)v;
}

/* A SEND with invalidate of @key received on *@qp:
 * ibk_mem_invalidate_remote() on the object at its index. */
static int model_invalidate_remote(ibk_rkey_t key,
				   const struct ibk_mem_qp *qp)
{
	uint32_t i = ibk_rkey_index(key);
	struct ibk_mem_attr copy;
	enum ibk_memop_verdict v;

	if (i >= CAP)
		return IBK_MEMOP_ERR_KEY;
	copy = model[i];
	v = ibk_mem_invalidate_remote(&copy, NULL, key, qp);
	if (v == IBK_MEMOP_OK)
		model[i] = copy;
	model_recount();
	return (int)v;
}

/* ---- random arguments: mostly sensible, often stale, sometimes wrong ---- */

/* A key: an object's current one, its next or previous key byte, or any. */
static ibk_rkey_t random_key(void)
{
	uint32_t i = test_rng_below(CAP + 2);
	ibk_rkey_t k = i < CAP ? model[i].rkey : ibk_rkey_make(i, 0);

	switch (test_rng_below(8)) {
	case 0:  return ibk_rkey_next(k);
	case 1:  return (k & ~0xffu) | ((k - 1) & 0xffu);
	case 2:  return (ibk_rkey_t)test_rng64();
	default: return k;
	}
}

static uint32_t random_access(void)
{
	static const uint32_t sets[] = {
		IBK_ACCESS_LOCAL_WRITE | IBK_ACCESS_REMOTE |
		IBK_ACCESS_MW_BIND,
		IBK_ACCESS_REMOTE_READ,
		IBK_ACCESS_LOCAL_WRITE | IBK_ACCESS_REMOTE_WRITE,
		IBK_ACCESS_REMOTE_WRITE,	/* breaks the registration rule */
		IBK_ACCESS_LOCAL_WRITE | IBK_ACCESS_REMOTE_READ |
		IBK_ACCESS_ZERO_BASED,
	};

	return test_rng_below(8) == 0 ? (uint32_t)test_rng64() & 0x3f :
	       sets[test_rng_below(sizeof(sets) / sizeof(sets[0]))];
}

static void random_attr(struct ibk_mem_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->rkey = ibk_rkey_make(test_rng_below(CAP + 1),
				(uint8_t)test_rng64());
	a->pd = 1 + test_rng_below(2);
	a->access = random_access();
	a->addr = (uint64_t)test_rng_below(16) << 12;
	a->length = (uint64_t)(1 + test_rng_below(16)) << 12;
	a->kind = (uint8_t)test_rng_below(5);	/* 4: not a kind */
	a->qpn = (uint32_t)test_rng64();	/* registration clears it */
}

static void random_bind(struct ibk_mw_bind_wr *wr)
{
	memset(wr, 0, sizeof(*wr));
	wr->mw_rkey = random_key();
	wr->mr_lkey = random_key();
	wr->key_byte = (uint8_t)test_rng64();
	wr->addr = (uint64_t)test_rng_below(20) << 12;
	wr->length = test_rng_below(6) == 0 ? 0 :
		     (uint64_t)test_rng_below(4) << 12;
	wr->access = test_rng_below(2) ? IBK_ACCESS_REMOTE_READ :
		     random_access() & IBK_ACCESS_MW_FLAGS;
	wr->qpn = 10 + test_rng_below(2);
	wr->qp_pd = 1 + test_rng_below(2);
}

/* Both latch copies hold exactly the model. */
static bool table_is_model(void)
{
	struct ibk_mem_attr a;
	unsigned c, i;

	for (c = 0; c < 2; c++) {
		for (i = 0; i < CAP; i++) {
			ibk__mr_cell_load(&table.cells[c][i], &a);
			if (!same_attr(&a, &model[i])) {
				tap_diag_first(&diags,
					       "copy %u index %u: key 0x%08x "
					       "state %u windows %u, model "
					       "key 0x%08x state %u windows %u",
					       c, i, a.rkey, a.state, a.windows,
					       model[i].rkey, model[i].state,
					       model[i].windows);
				return false;
			}
		}
	}
	return true;
}

static void test_random_ops(void)
{
	unsigned long i, bad_rc = 0, bad_state = 0, bad_gen = 0;
	unsigned long applied = 0, refused = 0;
	unsigned long per_op[7] = { 0 };

	for (i = 0; i < OPS; i++) {
		unsigned op = test_rng_below(7);
		struct ibk_mem_attr a;
		struct ibk_mw_bind_wr wr;
		struct ibk_mem_qp qp;
		uint32_t before = count_now(), after;
		ibk_rkey_t key;
		int want, got;

		switch (op) {
		case 0:
			random_attr(&a);
			want = model_register(&a);
			got = ibk_mr_table_register(&table, &a);
			break;
		case 1:
			random_attr(&a);
			key = random_key();
			a.rkey = test_rng_below(4) ? ibk_rkey_next(key) :
				 random_key();
			want = model_rereg(key, &a);
			got = ibk_mr_table_rereg(&table, key, &a);
			break;
		case 2:
			random_attr(&a);
			a.rkey = random_key();
			key = 1 + test_rng_below(2);
			want = model_fast_reg(key, &a);
			got = ibk_mr_table_fast_reg(&table, key, &a);
			break;
		case 3:
			random_bind(&wr);
			want = model_bind(&wr);
			got = ibk_mr_table_bind(&table, &wr);
			break;
		case 4:
			key = random_key();
			want = model_by_key(key, ibk_mem_invalidate);
			got = ibk_mr_table_invalidate(&table, key);
			break;
		case 5:
			key = random_key();
			want = model_by_key(key, ibk_mem_deregister);
			got = ibk_mr_table_deregister(&table, key);
			break;
		default:	/* the QPs and PDs random_bind() binds for */
			memset(&qp, 0, sizeof(qp));
			qp.type = IBK_QPT_RC;
			qp.qpn = 10 + test_rng_below(2);
			qp.pd = 1 + test_rng_below(2);
			key = random_key();
			want = model_invalidate_remote(key, &qp);
			got = ibk_mr_table_invalidate_remote(&table, key, &qp);
			break;
		}
		after = count_now();
		if (got != want) {
			bad_rc++;
			tap_diag_first(&diags,
				       "op %lu (kind %u): table %d, "
				       "model %d", i, op, got, want);
		}
		if (!table_is_model())
			bad_state++;
		if (after - before != (got == IBK_MEMOP_OK ? 2u : 0u) &&
		    !(got == IBK_MEMOP_OK && before > after))
			bad_gen++;
		if (got == IBK_MEMOP_OK) {
			applied++;
			per_op[op]++;
		} else {
			refused++;
		}
	}
	tap_diag("%lu operations: %lu applied (register %lu, rereg %lu, "
		 "fast reg %lu, bind %lu, invalidate %lu, deregister %lu, "
		 "remote invalidate %lu), %lu refused", OPS, applied,
		 per_op[0], per_op[1], per_op[2], per_op[3], per_op[4],
		 per_op[5], per_op[6], refused);
	tap_ok(bad_rc == 0, "every operation returns what the rules give the "
	       "model (%lu differ)", bad_rc);
	tap_ok(bad_state == 0, "after each, both latch copies hold the model's "
	       "objects, window counts equal to a recount (%lu differ)",
	       bad_state);
	tap_ok(bad_gen == 0, "a published operation is one update (two "
	       "flips), a refused one moves no generation (%lu wrong)",
	       bad_gen);
	tap_ok(per_op[0] && per_op[1] && per_op[2] && per_op[3] && per_op[4] &&
	       per_op[5] && per_op[6],
	       "every kind of operation was applied at least once");
}

/* ---- reads against the model ---- */

static void test_lookups(void)
{
	unsigned long i, bad = 0, found = 0;

	for (i = 0; i < 200000; i++) {
		ibk_rkey_t key = random_key();
		const struct ibk_mem_attr *m = model_find(key);
		struct ibk_mr_ref ref;
		struct ibk_mem_attr a;
		int rc = ibk_mr_table_ref_get(&table, key, &ref);
		int rc2 = ibk_mr_table_get(&table, key, &a);

		if (m) {
			found++;
			bad += rc != IBK_OK || rc2 != IBK_OK ||
			       !same_attr(&ref.attr, m) || !same_attr(&a, m) ||
			       ref.generation != count_now();
		} else {
			bad += rc != IBK_ENOENT || rc2 != IBK_ENOENT ||
			       ref.generation != IBK_GENERATION_NEVER;
		}
	}
	tap_ok(bad == 0 && found > 1000, "ref_get and get find exactly the "
	       "objects a scan for the whole key finds (%lu of 200000 found, "
	       "%lu bad)", found, bad);
}

#define QPN_A	10u

/*
 * A random request into @pkt, 3 times in 4 aimed at a live object: its
 * key, an address inside it, its PD and QP on @qp; otherwise anything.
 */
static void random_request(uint8_t *pkt, struct ibk_mem_qp *qp)
{
	static const uint8_t ops[] = {
		IBK_TRANSPORT_RC | IBK_OP_RDMA_WRITE_ONLY,
		IBK_TRANSPORT_RC | IBK_OP_RDMA_READ_REQUEST,
		IBK_TRANSPORT_RC | IBK_OP_COMPARE_SWAP,
		IBK_TRANSPORT_RC | IBK_OP_FETCH_ADD,
		IBK_TRANSPORT_RC | IBK_OP_SEND_ONLY,
	};
	uint8_t op = ops[test_rng_below(sizeof(ops))];
	uint8_t *ext = pkt + IBK_BTH_LEN;
	uint64_t va = (uint64_t)test_rng_below(24) << 12 |
		      (test_rng_below(2) ? 0 : test_rng_below(0x1000));
	uint32_t len = test_rng_below(0x3000);
	ibk_rkey_t key = random_key();
	const struct ibk_mem_attr *o = &model[test_rng_below(CAP)];

	if (test_rng_below(4) != 0 && o->state == IBK_MEM_VALID) {
		key = o->rkey;
		va = is_window(o) && (o->access & IBK_ACCESS_ZERO_BASED) ?
		     0 : o->addr;
		len = (uint32_t)(o->length >> test_rng_below(4));
		va += test_rng_below(2) ? 0 : o->length - len;
		qp->pd = o->pd;
		if (o->kind == IBK_MEM_MW2)
			qp->qpn = o->qpn;
	}
	memset(pkt, 0, IBK_BTH_LEN + IBK_ATOMICETH_LEN);
	ibk_bth_set_opcode(pkt, op);
	if (ibk_opcode_has_atomiceth(op)) {
		ibk_atomiceth_set_va(ext, va & ~(uint64_t)(test_rng_below(4) ?
							   7 : 0));
		ibk_atomiceth_set_rkey(ext, key);
	} else {
		ibk_reth_set_va(ext, va);
		ibk_reth_set_rkey(ext, key);
		ibk_reth_set_dma_len(ext, len);
	}
}

static enum ibk_mem_verdict model_verdict(const struct ibk_mem_qp *qp,
					  const uint8_t *pkt)
{
	struct ibk_mem_request req;
	enum ibk_mem_verdict v = ibk_mem_request_parse(qp->type, pkt, &req);

	const struct ibk_mem_attr *o = model_find(req.rkey);

	if (v == IBK_MEM_NO_RKEY)
		return ibk_mem_check(qp, &req, NULL, NULL);
	if (v != IBK_MEM_OK)
		return v;
	/* a window is checked against its MR too: the slot its MR index
	 * names */
	return ibk_mem_check(qp, &req, o, o && o->mr_index < CAP ?
			     &model[o->mr_index] : NULL);
}

static void test_checks(void)
{
	static uint8_t pkts[32][IBK_BTH_LEN + IBK_ATOMICETH_LEN];
	const void *hdrs[32];
	uint8_t verdicts[32];
	struct ibk_mem_qp qp;
	unsigned long i, bad = 0, bad_burst = 0, ok = 0;
	unsigned k;

	qp.type = IBK_QPT_RC;
	qp.qpn = QPN_A;
	qp.pd = 1;
	qp.access = IBK_ACCESS_REMOTE;
	for (i = 0; i < 4000; i++) {
		size_t want_ok = 0, got_ok;

		qp.pd = 1 + test_rng_below(2);
		qp.qpn = 10 + test_rng_below(2);
		for (k = 0; k < 32; k++) {
			enum ibk_mem_verdict want, got;
			struct ibk_mem_qp aim = qp;

			/* one QP for the whole burst: aim at objects the
			 * first packet's QP may use */
			random_request(pkts[k], k ? &aim : &qp);
			hdrs[k] = pkts[k];
			want = model_verdict(&qp, pkts[k]);
			got = ibk_mr_table_check(&table, &qp, pkts[k]);
			want_ok += want == IBK_MEM_OK;
			if (got != want) {
				bad++;
				tap_diag_first(&diags,
					       "request: table %s, model %s",
					       ibk_mem_verdict_name(got),
					       ibk_mem_verdict_name(want));
			}
		}
		got_ok = ibk_mr_table_check_burst(&table, &qp, hdrs, 32,
						  verdicts);
		for (k = 0; k < 32; k++)
			bad_burst += verdicts[k] != model_verdict(&qp, pkts[k]);
		bad_burst += got_ok != want_ok;
		ok += want_ok;
		/* the table keeps changing between bursts */
		if (i % 4 == 0) {
			struct ibk_mw_bind_wr wr;

			struct ibk_mem_attr next = model[i % CAP];
			ibk_rkey_t key = next.rkey;

			random_bind(&wr);
			model_bind(&wr);
			ibk_mr_table_bind(&table, &wr);
			next.rkey = ibk_rkey_next(key);
			model_rereg(key, &next);
			ibk_mr_table_rereg(&table, key, &next);
		}
	}
	tap_ok(bad == 0 && ok > 1000, "ibk_mr_table_check on 128000 random "
	       "requests equals ibk_mem_check against the object a scan finds "
	       "(%lu granted, %lu differ)", ok, bad);
	tap_ok(bad_burst == 0, "bursts of 32: the same verdicts, the count of "
	       "IBK_MEM_OK returned (%lu wrong)", bad_burst);
}

/* ---- a scenario, step by step, with references ---- */

static void test_scenario(void)
{
	struct ibk_mem_attr mr, mw, next;
	struct ibk_mw_bind_wr wr;
	struct ibk_mr_ref ref, wref;
	uint8_t pkt[IBK_BTH_LEN + IBK_ATOMICETH_LEN];
	struct ibk_mem_qp qp;
	uint32_t gen;

	ibk_mr_table_init(&table, cells, CAP);
	memset(model, 0, sizeof(model));
	memset(&mr, 0, sizeof(mr));
	mr.rkey = ibk_rkey_make(5, 0x10);
	mr.pd = 1;
	mr.access = IBK_ACCESS_LOCAL_WRITE | IBK_ACCESS_REMOTE |
		    IBK_ACCESS_MW_BIND;
	mr.addr = 0x10000;
	mr.length = 0x10000;
	mw = mr;
	mw.rkey = ibk_rkey_make(6, 0x20);
	mw.kind = IBK_MEM_MW2;
	tap_ok(ibk_mr_table_register(&table, &mr) == IBK_MEMOP_OK &&
	       ibk_mr_table_register(&table, &mw) == IBK_MEMOP_OK &&
	       ibk_mr_table_register(&table, &mr) == IBK_MEMOP_ERR_IN_USE,
	       "register an MR and a type 2 window; the MR's index again: "
	       "in use");
	tap_ok(ibk_mr_table_ref_get(&table, mr.rkey, &ref) == IBK_OK &&
	       ref.attr.state == IBK_MEM_VALID &&
	       ibk_mr_table_ref_fresh(&table, &ref),
	       "a reference to the MR: VALID, fresh");

	gen = count_now();
	memset(&wr, 0, sizeof(wr));
	wr.mw_rkey = mw.rkey;
	wr.mr_lkey = mr.rkey;
	wr.key_byte = 0x21;
	wr.addr = 0x11000;
	wr.length = 0x1000;
	wr.access = IBK_ACCESS_REMOTE_WRITE;
	wr.qpn = QPN_A;
	wr.qp_pd = 1;
	tap_ok(ibk_mr_table_bind(&table, &wr) == IBK_MEMOP_OK &&
	       count_now() == gen + 2 && !ibk_mr_table_ref_fresh(&table, &ref),
	       "bind: one generation for the window and its MR's count; the "
	       "MR's reference goes stale");
	tap_ok(ibk_mr_table_ref_get(&table, mr.rkey, &ref) == IBK_OK &&
	       ref.attr.windows == 1 &&
	       ibk_mr_table_ref_get(&table, ibk_rkey_make(6, 0x21), &wref) ==
	       IBK_OK && wref.attr.qpn == QPN_A && wref.attr.mr_index == 5 &&
	       ibk_mr_table_ref_get(&table, mw.rkey, &wref) == IBK_ENOENT &&
	       wref.generation == IBK_GENERATION_NEVER,
	       "after it: the MR counts one window; the window answers to its "
	       "new key only");

	gen = count_now();
	tap_ok(ibk_mr_table_deregister(&table, mr.rkey) ==
	       IBK_MEMOP_ERR_WINDOWS_BOUND && count_now() == gen &&
	       ibk_mr_table_ref_fresh(&table, &ref),
	       "deregistering the MR with a window bound is refused: nothing "
	       "published, references stay fresh");

	memset(&qp, 0, sizeof(qp));
	qp.type = IBK_QPT_RC;
	qp.qpn = QPN_A;
	qp.pd = 1;
	qp.access = IBK_ACCESS_REMOTE;
	memset(pkt, 0, sizeof(pkt));
	ibk_bth_set_opcode(pkt, IBK_TRANSPORT_RC | IBK_OP_RDMA_WRITE_ONLY);
	ibk_reth_set_va(pkt + IBK_BTH_LEN, 0x11000);
	ibk_reth_set_rkey(pkt + IBK_BTH_LEN, ibk_rkey_make(6, 0x21));
	ibk_reth_set_dma_len(pkt + IBK_BTH_LEN, 0x1000);
	tap_ok(ibk_mr_table_check(&table, &qp, pkt) == IBK_MEM_OK,
	       "a WRITE through the window by its QP is granted");
	qp.qpn = QPN_A + 1;
	tap_ok(ibk_mr_table_check(&table, &qp, pkt) == IBK_MEM_ERR_WINDOW_QP,
	       "the same WRITE from another QP: refused (type 2 window)");
	/* the BTH's DestQP has 24 bits; the verbs' qp_num 32 */
	qp.qpn = QPN_A | 0x1000000u;
	tap_ok(ibk_mr_table_check(&table, &qp, pkt) == IBK_MEM_ERR_WINDOW_QP,
	       "from QPN 0x%x, whose low 24 bits are the window's QP's: "
	       "refused, as ibk_mem_check() compares all 32", qp.qpn);
	qp.qpn = QPN_A;
	tap_ok(ibk_mr_table_invalidate(&table, ibk_rkey_make(6, 0x21)) ==
	       IBK_MEMOP_OK &&
	       ibk_mr_table_check(&table, &qp, pkt) != IBK_MEM_OK &&
	       ibk_mr_table_ref_get(&table, mr.rkey, &ref) == IBK_OK &&
	       ref.attr.windows == 0,
	       "SEND with invalidate of the window: the WRITE is refused now, "
	       "the MR counts no window");

	next = mr;
	next.rkey = ibk_rkey_next(mr.rkey);
	tap_ok(ibk_mr_table_rereg(&table, mr.rkey, &next) == IBK_MEMOP_OK &&
	       !ibk_mr_table_ref_fresh(&table, &ref) &&
	       ibk_mr_table_ref_get(&table, mr.rkey, &ref) == IBK_ENOENT &&
	       ibk_mr_table_ref_get(&table, next.rkey, &ref) == IBK_OK,
	       "re-registration: the old R_Key finds nothing, the new one "
	       "the MR");
	tap_ok(ibk_mr_table_deregister(&table, next.rkey) == IBK_MEMOP_OK &&
	       ibk_mr_table_ref_get(&table, next.rkey, &ref) == IBK_ENOENT &&
	       ibk_mr_table_register(&table, &mr) == IBK_MEMOP_OK,
	       "deregistered: the index is free and can be registered again");

	tap_ok(ibk_mr_table_init(&table, cells, 0) == IBK_ERANGE &&
	       ibk_mr_table_init(&table, cells, IBK_MR_MAX_CAPACITY + 1) ==
	       IBK_ERANGE && ibk_mr_table_init(NULL, cells, 1) == IBK_EINVAL &&
	       ibk_mr_table_init(&table, NULL, 1) == IBK_EINVAL &&
	       IBK_MR_MAX_CAPACITY == 1u << 24 && IBK_MR_CELLS(7) == 14,
	       "init: capacity 1..2^24 (the key's index space), both copies' "
	       "cells");
	ibk_mr_table_init(&table, cells, CAP);
	mr.rkey = ibk_rkey_make(CAP - 1, 1);
	tap_ok(ibk_mr_table_register(&table, &mr) == IBK_MEMOP_OK &&
	       (mr.rkey = ibk_rkey_make(CAP, 1),
		ibk_mr_table_register(&table, &mr) == IBK_MEMOP_ERR_KEY) &&
	       ibk_mr_table_ref_get(&table, mr.rkey, &ref) == IBK_ENOENT &&
	       ibk_mr_table_register(NULL, &mr) == IBK_MEMOP_ERR_INVALID &&
	       ibk_mr_table_bind(&table, NULL) == IBK_MEMOP_ERR_INVALID &&
	       ibk_mr_table_invalidate(&table, mr.rkey) == IBK_MEMOP_ERR_KEY,
	       "the last index registers; one past it is out of range, and a "
	       "key naming it finds nothing");
	ibk_reth_set_rkey(pkt + IBK_BTH_LEN, ibk_rkey_make(CAP + 5, 0));
	tap_ok(ibk_mr_table_check(&table, &qp, pkt) == IBK_MEM_ERR_KEY,
	       "a request whose R_Key indexes past the table: key violation");
}

/*
 * LOCAL_INV and the IETH of a SEND with invalidate through the table: the
 * remote form refuses what the receiving QP could not reach (an object of
 * another PD, a type 2 window bound to another QP) and changes nothing;
 * from the QP that could reach it, and locally, the object is freed.
 */
static void test_invalidate_remote(void)
{
	struct ibk_mem_attr mr, fast, mw, next;
	struct ibk_mw_bind_wr wr;
	struct ibk_mem_qp qp1, qp2, other;
	struct ibk_mr_ref ref;
	ibk_rkey_t bound = ibk_rkey_make(6, 0x21), fast_key;
	uint32_t gen;

	ibk_mr_table_init(&table, cells, CAP);
	memset(&mr, 0, sizeof(mr));
	mr.rkey = ibk_rkey_make(5, 0x10);
	mr.pd = 1;
	mr.access = IBK_ACCESS_LOCAL_WRITE | IBK_ACCESS_REMOTE |
		    IBK_ACCESS_MW_BIND;
	mr.addr = 0x10000;
	mr.length = 0x10000;
	mw = mr;
	mw.rkey = ibk_rkey_make(6, 0x20);
	mw.kind = IBK_MEM_MW2;
	fast = mr;
	fast.rkey = ibk_rkey_make(7, 0x30);
	fast.pd = 2;
	fast.kind = IBK_MEM_MR_FAST;
	next = fast;
	fast_key = next.rkey = ibk_rkey_make(7, 0x31);
	memset(&wr, 0, sizeof(wr));
	wr.mw_rkey = mw.rkey;
	wr.mr_lkey = mr.rkey;
	wr.key_byte = 0x21;
	wr.addr = 0x11000;
	wr.length = 0x1000;
	wr.access = IBK_ACCESS_REMOTE_WRITE;
	wr.qpn = QPN_A;
	wr.qp_pd = 1;
	memset(&qp1, 0, sizeof(qp1));
	qp1.type = IBK_QPT_RC;
	qp1.qpn = QPN_A;
	qp1.pd = 1;
	other = qp1;
	other.qpn = QPN_A + 1;
	qp2 = qp1;
	qp2.qpn = QPN_A + 2;
	qp2.pd = 2;
	tap_ok(ibk_mr_table_register(&table, &mr) == IBK_MEMOP_OK &&
	       ibk_mr_table_register(&table, &mw) == IBK_MEMOP_OK &&
	       ibk_mr_table_register(&table, &fast) == IBK_MEMOP_OK &&
	       ibk_mr_table_fast_reg(&table, 2, &next) == IBK_MEMOP_OK &&
	       ibk_mr_table_bind(&table, &wr) == IBK_MEMOP_OK,
	       "remote invalidation: an MR and a type 2 window bound by QP "
	       "0x%x in PD 1, a fast-register MR in PD 2", QPN_A);

	gen = count_now();
	tap_ok(ibk_mr_table_invalidate_remote(&table, fast_key, &qp1) ==
	       IBK_MEMOP_ERR_PD && count_now() == gen &&
	       ibk_mr_table_ref_get(&table, fast_key, &ref) == IBK_OK &&
	       ref.attr.state == IBK_MEM_VALID,
	       "an IETH on a QP of PD 1 naming PD 2's fast-register MR: "
	       "ERR_PD, nothing published, the MR stays VALID");
	tap_ok(ibk_mr_table_invalidate_remote(&table, bound, &other) ==
	       IBK_MEMOP_ERR_WINDOW_QP && count_now() == gen &&
	       ibk_mr_table_ref_get(&table, bound, &ref) == IBK_OK &&
	       ref.attr.state == IBK_MEM_VALID && ref.attr.qpn == QPN_A,
	       "an IETH on another QP of the PD naming the type 2 window: "
	       "ERR_WINDOW_QP, the window stays bound");
	tap_ok(ibk_mr_table_invalidate_remote(&table, bound, &qp2) ==
	       IBK_MEMOP_ERR_PD,
	       "an IETH on a QP of PD 2 naming the window: ERR_PD");
	tap_ok(ibk_mr_table_invalidate_remote(&table, bound, &qp1) ==
	       IBK_MEMOP_OK &&
	       ibk_mr_table_ref_get(&table, bound, &ref) == IBK_OK &&
	       ref.attr.state == IBK_MEM_FREE &&
	       ibk_mr_table_ref_get(&table, mr.rkey, &ref) == IBK_OK &&
	       ref.attr.windows == 0,
	       "the IETH on the window's own QP: FREE, its MR counts no "
	       "window");
	tap_ok(ibk_mr_table_invalidate_remote(&table, fast_key, &qp2) ==
	       IBK_MEMOP_OK &&
	       ibk_mr_table_ref_get(&table, fast_key, &ref) == IBK_OK &&
	       ref.attr.state == IBK_MEM_FREE,
	       "the IETH on a QP of PD 2 naming PD 2's fast-register MR: "
	       "FREE");
	tap_ok(ibk_mr_table_invalidate_remote(&table, fast_key, NULL) ==
	       IBK_MEMOP_ERR_INVALID &&
	       ibk_mr_table_invalidate_remote(NULL, fast_key, &qp2) ==
	       IBK_MEMOP_ERR_INVALID,
	       "remote invalidation without a table or a QP: "
	       "IBK_MEMOP_ERR_INVALID");

	/* LOCAL_INV: the poster's own objects, no QP or PD compared */
	next.rkey = fast_key = ibk_rkey_make(7, 0x32);
	wr.key_byte = 0x22;
	wr.mw_rkey = bound;
	bound = ibk_rkey_make(6, 0x22);
	tap_ok(ibk_mr_table_fast_reg(&table, 2, &next) == IBK_MEMOP_OK &&
	       ibk_mr_table_bind(&table, &wr) == IBK_MEMOP_OK &&
	       ibk_mr_table_invalidate(&table, fast_key) == IBK_MEMOP_OK &&
	       ibk_mr_table_invalidate(&table, bound) == IBK_MEMOP_OK &&
	       ibk_mr_table_ref_get(&table, mr.rkey, &ref) == IBK_OK &&
	       ref.attr.windows == 0,
	       "LOCAL_INV of both, registered and bound again: both FREE");
}

/*
 * A device reset: the table starts over empty, and a reference taken
 * before never reads fresh again, not even against the object registered
 * at its index afterwards (a generation is never reused over a table's
 * lifetime: ib_tables.h, the latch section). Re-running init would restart the count at 2.
 */
static void test_reset(void)
{
	struct ibk_mem_attr mr, other, got;
	struct ibk_mr_ref before, after;
	uint32_t gen;
	int i;

	ibk_mr_table_init(&table, cells, CAP);
	memset(&mr, 0, sizeof(mr));
	mr.rkey = ibk_rkey_make(3, 0x31);
	mr.pd = 1;
	mr.access = IBK_ACCESS_LOCAL_WRITE | IBK_ACCESS_REMOTE;
	mr.addr = 0x10000;
	mr.length = 0x1000;
	ibk_mr_table_register(&table, &mr);
	ibk_mr_table_ref_get(&table, mr.rkey, &before);
	gen = count_now();
	tap_ok(ibk_mr_table_reset(&table) == IBK_OK && count_now() == gen + 2 &&
	       ibk_mr_table_get(&table, mr.rkey, &got) == IBK_ENOENT &&
	       !ibk_mr_table_ref_fresh(&table, &before),
	       "reset: one more generation, every index free, the reference "
	       "from before stale");
	/* as many publications as the table had before the reset, and the
	 * same key again: a restarted count would meet the old generation */
	other = mr;
	other.addr = 0x90000;
	for (i = 0; i < 4; i++) {
		ibk_mr_table_register(&table, &other);
		if (i < 3)
			ibk_mr_table_deregister(&table, other.rkey);
	}
	tap_ok(ibk_mr_table_ref_get(&table, mr.rkey, &after) == IBK_OK &&
	       after.attr.addr == 0x90000 &&
	       after.generation != before.generation &&
	       !ibk_mr_table_ref_fresh(&table, &before),
	       "another region at the same index and key after the reset: "
	       "the old reference stays stale");
	tap_ok(ibk_mr_table_reset(NULL) == IBK_EINVAL,
	       "reset of NULL: IBK_EINVAL");
}

/* A READ of 0x100 bytes at @va through @rkey, by a QP of PD 1. */
static enum ibk_mem_verdict read_at(uint64_t va, ibk_rkey_t rkey)
{
	struct ibk_mem_qp qp;
	uint8_t pkt[IBK_BTH_LEN + IBK_RETH_LEN];

	memset(&qp, 0, sizeof(qp));
	qp.type = IBK_QPT_RC;
	qp.pd = 1;
	qp.access = IBK_ACCESS_REMOTE;
	memset(pkt, 0, sizeof(pkt));
	ibk_bth_set_opcode(pkt, IBK_TRANSPORT_RC | IBK_OP_RDMA_READ_REQUEST);
	ibk_reth_set_va(pkt + IBK_BTH_LEN, va);
	ibk_reth_set_rkey(pkt + IBK_BTH_LEN, rkey);
	ibk_reth_set_dma_len(pkt + IBK_BTH_LEN, 0x100);
	return ibk_mr_table_check(&table, &qp, pkt);
}

/*
 * A window's bytes must lie in its region as the region is when the
 * request comes (ibk_mem_check()), not as it was at the bind: a type 1
 * window bound to a fast-register region still FREE (the bind allows
 * it), then a REG_MR that moves the region away from the window's bytes.
 */
static void test_window_region_moves(void)
{
	struct ibk_mem_attr mr, mw, next;
	struct ibk_mw_bind_wr wr;

	ibk_mr_table_init(&table, cells, CAP);
	memset(&mr, 0, sizeof(mr));
	mr.rkey = ibk_rkey_make(1, 0x10);
	mr.pd = 1;
	mr.access = IBK_ACCESS_LOCAL_WRITE | IBK_ACCESS_REMOTE |
		    IBK_ACCESS_MW_BIND;
	mr.addr = 0x40000;
	mr.length = 0x10000;
	mr.kind = IBK_MEM_MR_FAST;
	mw = mr;
	mw.rkey = ibk_rkey_make(2, 0x20);
	mw.kind = IBK_MEM_MW1;
	memset(&wr, 0, sizeof(wr));
	wr.mw_rkey = mw.rkey;
	wr.mr_lkey = mr.rkey;
	wr.addr = 0x44000;
	wr.length = 0x1000;
	wr.access = IBK_ACCESS_REMOTE_READ;
	wr.qp_pd = 1;
	wr.key_byte = 0x21;
	tap_ok(ibk_mr_table_register(&table, &mr) == IBK_MEMOP_OK &&
	       ibk_mr_table_register(&table, &mw) == IBK_MEMOP_OK &&
	       ibk_mr_table_bind(&table, &wr) == IBK_MEMOP_OK &&
	       read_at(0x44000, ibk_rkey_make(2, 0x21)) == IBK_MEM_OK,
	       "a window bound to a FREE fast-register region: a READ inside "
	       "both is granted");
	next = mr;
	next.rkey = ibk_rkey_make(1, 0x11);
	next.addr = 0x80000;
	tap_ok(ibk_mr_table_fast_reg(&table, 1, &next) == IBK_MEMOP_OK &&
	       read_at(0x44000, ibk_rkey_make(2, 0x21)) == IBK_MEM_ERR_RANGE &&
	       read_at(0x84000, ibk_rkey_make(2, 0x21)) == IBK_MEM_ERR_RANGE,
	       "REG_MR moves the region away: the window's bytes are outside "
	       "it now, and a READ through the window is refused");
}

int main(void)
{
	test_rng_seed(SEED);
	test_scenario();
	test_invalidate_remote();
	test_reset();
	test_window_region_moves();
	ibk_mr_table_init(&table, cells, CAP);
	memset(model, 0, sizeof(model));
	test_random_ops();
	test_lookups();
	test_checks();
	return tap_done();
}
