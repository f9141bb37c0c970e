/* SPDX-License-Identifier: MIT */
/*
 * mr_table: operation sequences on a memory-region table, checked after
 * every step against a plain array of struct ibk_mem_attr to which the
 * same rules of ib_keys.h are applied directly, on a copy that is kept
 * only when the rule allows the operation. From the input: a capacity
 * (1-8), a starting generation near the wrap, then up to 256 operations:
 * register (any kind, including none, and junk in the fields register
 * must clear), re-register, fast-register, bind and unbind windows,
 * invalidate, deregister, reset the whole table, get, take a reference,
 * check one request and a burst of requests (headers in exact heap
 * blocks). Keys mostly name live
 * objects, with their current key byte or another. Checked:
 *  - every return code, and every object's attributes as get reads them,
 *    are the array's;
 *  - the responder verdicts are model.h's if-chain on the array's object;
 *  - references read fresh exactly when nothing was published since;
 *  - the rules' own invariant: a region's window count is the number of
 *    bound windows naming it, and a bound window's region is live.
 */
#include "model.h"

#define MAX_OPS 256
#define CAP_MAX 8u
#define BURST_MAX 8

enum { OP_REGISTER, OP_REREG, OP_FAST_REG, OP_BIND, OP_INVALIDATE,
       OP_DEREGISTER, OP_GET, OP_REF, OP_CHECK, OP_BURST, OP_RESET,
       OP_COUNT };

struct world {
	struct ibk_mr_table t;
	struct ibk_mem_attr m[CAP_MAX];	/* the model */
	uint32_t cap;
	uint32_t updates;
	struct ibk_mr_ref refs[MODEL_REFS];
	struct model_ref mrefs[MODEL_REFS];
};

static bool is_window(const struct ibk_mem_attr *o)
{
	return o->kind == IBK_MEM_MW1 || o->kind == IBK_MEM_MW2;
}

static bool attr_equal(const struct ibk_mem_attr *a,
		       const struct ibk_mem_attr *b)
{
	return a->addr == b->addr && a->length == b->length &&
	       a->rkey == b->rkey && a->pd == b->pd &&
	       a->access == b->access && a->qpn == b->qpn &&
	       a->mr_index == b->mr_index && a->windows == b->windows &&
	       a->kind == b->kind && a->state == b->state;
}

/* A key: mostly the current one of an object in (or just beyond) the
 * table, sometimes with another key byte. */
static ibk_rkey_t pick_key(const struct world *w, struct fz *f)
{
	uint32_t index = fz_below(f, w->cap + 1);
	uint8_t b = fz_u8(f);

	if (index < w->cap && b < 0xc0)
		return w->m[index].rkey;
	return ibk_rkey_make(index, (uint8_t)(b & 3));
}

static uint64_t pick_u64(struct fz *f)
{
	static const uint64_t pool[] = { 0, 0x1000, 0x2000, 0xfff8,
					 0xfffffffffffff000u };
	uint8_t b = fz_u8(f);

	return b < 0xf0 ? pool[b % 5] : fz_u64(f);
}

static void pick_attr(const struct world *w, struct fz *f,
		      struct ibk_mem_attr *a)
{
	a->addr = pick_u64(f);
	a->length = pick_u64(f);
	a->rkey = pick_key(w, f);
	a->pd = fz_below(f, 3);
	a->access = fz_u8(f) < 0xf0 ? fz_u8(f) & 0x3f : fz_u32(f);
	a->qpn = fz_u8(f);			/* junk register must clear */
	a->mr_index = fz_u32(f);
	a->windows = fz_u8(f);
	a->kind = (uint8_t)fz_below(f, 5);	/* 4: no such kind */
	a->state = (uint8_t)fz_below(f, 3);
}

static struct ibk_mem_attr *at(struct ibk_mem_attr *c, uint32_t cap,
			       uint32_t index)
{
	return index < cap ? &c[index] : NULL;
}

/* Applies one management operation to the model: the rule on a copy of
 * the array, kept if it allows the operation. Returns the table's code. */
static int model_op(struct world *w, unsigned op, ibk_rkey_t key,
		    const struct ibk_mem_attr *attr, uint32_t qp_pd,
		    const struct ibk_mw_bind_wr *wr)
{
	struct ibk_mem_attr c[CAP_MAX], *o, *mr = NULL, *old = NULL;
	enum ibk_memop_verdict v;

	memcpy(c, w->m, sizeof(c));
	switch (op) {
	case OP_REGISTER:
		o = at(c, w->cap, ibk_rkey_index(attr->rkey));
		if (!o)		/* no key names an index past the table */
			return IBK_MEMOP_ERR_KEY;
		if (o->state != IBK_MEM_INVALID)
			return IBK_MEMOP_ERR_IN_USE;
		*o = *attr;
		v = ibk_mem_register(o);
		break;
	case OP_REREG:
		o = at(c, w->cap, ibk_rkey_index(key));
		if (!o || o->rkey != key)
			return IBK_MEMOP_ERR_KEY;
		v = ibk_mr_rereg(o, attr);
		break;
	case OP_FAST_REG:
		o = at(c, w->cap, ibk_rkey_index(attr->rkey));
		if (!o)
			return IBK_MEMOP_ERR_KEY;
		v = ibk_mr_fast_reg(o, qp_pd, attr);
		break;
	case OP_BIND:
		o = at(c, w->cap, ibk_rkey_index(wr->mw_rkey));
		if (!o)
			return IBK_MEMOP_ERR_KEY;
		if (wr->length)
			mr = at(c, w->cap, ibk_rkey_index(wr->mr_lkey));
		if (o->length && o->state == IBK_MEM_VALID && is_window(o))
			old = at(c, w->cap, o->mr_index);
		v = ibk_mw_bind(o, mr, old, wr);
		break;
	case OP_INVALIDATE:
		o = at(c, w->cap, ibk_rkey_index(key));
		if (!o)
			return IBK_MEMOP_ERR_KEY;
		if (o->length && o->kind == IBK_MEM_MW2)
			mr = at(c, w->cap, o->mr_index);
		v = ibk_mem_invalidate(o, mr, key);
		break;
	default:		/* OP_DEREGISTER */
		o = at(c, w->cap, ibk_rkey_index(key));
		if (!o)
			return IBK_MEMOP_ERR_KEY;
		if (o->length && is_window(o))
			mr = at(c, w->cap, o->mr_index);
		v = ibk_mem_deregister(o, mr, key);
		break;
	}
	if (v == IBK_MEMOP_OK) {
		memcpy(w->m, c, sizeof(c));
		w->updates++;
	}
	return (int)v;
}

static int table_op(struct world *w, unsigned op, ibk_rkey_t key,
		    const struct ibk_mem_attr *attr, uint32_t qp_pd,
		    const struct ibk_mw_bind_wr *wr)
{
	switch (op) {
	case OP_REGISTER:	return ibk_mr_table_register(&w->t, attr);
	case OP_REREG:		return ibk_mr_table_rereg(&w->t, key, attr);
	case OP_FAST_REG:	return ibk_mr_table_fast_reg(&w->t, qp_pd, attr);
	case OP_BIND:		return ibk_mr_table_bind(&w->t, wr);
	case OP_INVALIDATE:	return ibk_mr_table_invalidate(&w->t, key);
	default:		return ibk_mr_table_deregister(&w->t, key);
	}
}

/* A request to a QP: a BTH and the extension its opcode carries, in one
 * exact block, addressed mostly to a live object's range. */
static uint8_t *pick_request(const struct world *w, struct fz *f)
{
	static const uint8_t ops[8] = { 0x0a, 0x06, 0x0c, 0x13, 0x14, 0x1d,
					0x2a, 0x04 };
	uint8_t op = fz_u8(f) < 0xf0 ? ops[fz_u8(f) & 7] : fz_u8(f);
	size_t ext = ibk_opcode_has_atomiceth(op) ? IBK_ATOMICETH_LEN :
		     op == IBK_OP_FLUSH ? 4 + IBK_RETH_LEN :
		     ibk_opcode_has_reth(op) ? IBK_RETH_LEN : 0;
	uint8_t *p = fz_storage(IBK_BTH_LEN + ext);
	ibk_rkey_t key = pick_key(w, f);
	uint64_t va = pick_u64(f) + (fz_u8(f) & 0x0f);
	uint32_t len = fz_u8(f) < 0xf0 ? fz_u8(f) : fz_u32(f);

	memset(p, 0, IBK_BTH_LEN);
	p[0] = op;
	if (ext >= IBK_RETH_LEN) {
		for (int i = 0; i < 8; i++)
			p[IBK_BTH_LEN + i] = (uint8_t)(va >> (56 - 8 * i));
		for (int i = 0; i < 4; i++) {
			p[IBK_BTH_LEN + 8 + i] = (uint8_t)(key >> (24 - 8 * i));
			p[IBK_BTH_LEN + 12 + i] = (uint8_t)(len >> (24 - 8 * i));
		}
	}
	return p;
}

static enum ibk_mem_verdict model_request(const struct world *w,
					  const struct ibk_mem_qp *qp,
					  const uint8_t *pkt)
{
	struct ibk_mem_request req;
	enum ibk_mem_verdict v = ibk_mem_request_parse(qp->type, pkt, &req);
	uint32_t index = ibk_rkey_index(req.rkey);
	const struct ibk_mem_attr *o, *mr;

	if (v == IBK_MEM_NO_RKEY)
		return model_mem_check(qp, &req, NULL, NULL);
	if (v != IBK_MEM_OK)
		return v;
	o = index < w->cap ? &w->m[index] : NULL;
	/* a window's MR, where its MR index names a slot of the table */
	mr = o && o->mr_index < w->cap ? &w->m[o->mr_index] : NULL;
	return model_mem_check(qp, &req, o, mr);
}

static void pick_qp(struct fz *f, struct ibk_mem_qp *qp)
{
	qp->type = fz_u8(f) < 0xe0 ? IBK_QPT_RC : IBK_QPT_UC;
	qp->qpn = fz_u8(f) | (fz_u8(f) < 0x20 ? 0x1000000u : 0);
	qp->pd = fz_below(f, 3);
	qp->access = fz_u8(f) < 0xc0 ? IBK_ACCESS_REMOTE : fz_u8(f) & 0x0f;
}

static void check_requests(struct world *w, struct fz *f, bool burst)
{
	struct ibk_mem_qp qp;
	uint8_t *pkts[BURST_MAX], verdicts[BURST_MAX];
	const void *hdrs[BURST_MAX];
	size_t n = burst ? fz_below(f, BURST_MAX + 1) : 1, ok = 0, got = 0, i;

	pick_qp(f, &qp);
	for (i = 0; i < n; i++) {
		pkts[i] = pick_request(w, f);
		hdrs[i] = pkts[i];
	}
	if (burst)
		got = ibk_mr_table_check_burst(&w->t, &qp, hdrs, n, verdicts);
	else
		verdicts[0] = (uint8_t)ibk_mr_table_check(&w->t, &qp, pkts[0]);
	for (i = 0; i < n; i++) {
		enum ibk_mem_verdict want = model_request(w, &qp, pkts[i]);

		FZ_CHECK(verdicts[i] == want, "request %zu opcode %02x: %u, "
			 "model %s", i, pkts[i][0], verdicts[i],
			 ibk_mem_verdict_name(want));
		ok += want == IBK_MEM_OK;
		free(pkts[i]);
	}
	FZ_CHECK(!burst || got == ok, "burst: %zu OK, model %zu", got, ok);
}

/* The table holds the array; the array keeps the rules' invariants. */
static void check_after(struct world *w)
{
	struct ibk_mem_attr got;
	uint32_t i, j, bound;

	for (i = 0; i < w->cap; i++) {
		const struct ibk_mem_attr *o = &w->m[i];
		/* a free index: any key byte; a live object: its own key */
		int rc = ibk_mr_table_get(&w->t, ibk_rkey_make(i, (uint8_t)o->rkey),
					  &got);

		FZ_CHECK(rc == (o->state == IBK_MEM_INVALID ? IBK_ENOENT : IBK_OK),
			 "get [%u]: %d", i, rc);
		FZ_CHECK(rc || attr_equal(&got, o), "[%u] attributes", i);
		if (o->state == IBK_MEM_INVALID)
			continue;
		FZ_CHECK(ibk_rkey_index(o->rkey) == i, "[%u] holds key %08x", i,
			 o->rkey);
		if (is_window(o) && o->state == IBK_MEM_VALID && o->length)
			FZ_CHECK(o->mr_index < w->cap &&
				 w->m[o->mr_index].state != IBK_MEM_INVALID &&
				 !is_window(&w->m[o->mr_index]),
				 "window [%u] bound to no live region", i);
		if (is_window(o))
			continue;
		for (j = 0, bound = 0; j < w->cap; j++)
			bound += w->m[j].state == IBK_MEM_VALID &&
				 is_window(&w->m[j]) && w->m[j].length &&
				 w->m[j].mr_index == i;
		FZ_CHECK(o->windows == bound, "region [%u]: %u windows, %u bound",
			 i, o->windows, bound);
	}
	for (unsigned k = 0; k < MODEL_REFS; k++)
		FZ_CHECK(ibk_mr_table_ref_fresh(&w->t, &w->refs[k]) ==
			 model_ref_fresh(w->mrefs, k, w->updates),
			 "reference %u freshness", k);
}

static void step(struct world *w, struct fz *f)
{
	unsigned op = fz_below(f, OP_COUNT), k = fz_below(f, MODEL_REFS);
	struct ibk_mem_attr attr, got;
	struct ibk_mw_bind_wr wr;
	ibk_rkey_t key = pick_key(w, f);
	uint32_t qp_pd = fz_below(f, 3);
	int rc, mrc;

	switch (op) {
	case OP_GET:
		rc = ibk_mr_table_get(&w->t, key, &got);
		mrc = ibk_rkey_index(key) < w->cap &&
		      w->m[ibk_rkey_index(key)].rkey == key &&
		      w->m[ibk_rkey_index(key)].state != IBK_MEM_INVALID ?
		      IBK_OK : IBK_ENOENT;
		FZ_CHECK(rc == mrc && (rc || attr_equal(&got,
				&w->m[ibk_rkey_index(key)])),
			 "get %08x: %d, model %d", key, rc, mrc);
		break;
	case OP_REF:
		rc = ibk_mr_table_ref_get(&w->t, key, &w->refs[k]);
		FZ_CHECK(rc == IBK_OK || rc == IBK_ENOENT, "ref: %d", rc);
		model_ref_taken(w->mrefs, k, rc == IBK_OK,
				w->refs[k].generation, w->updates);
		break;
	case OP_CHECK:
	case OP_BURST:
		check_requests(w, f, op == OP_BURST);
		break;
	case OP_RESET:		/* every index free, one publication */
		FZ_CHECK(ibk_mr_table_reset(&w->t) == IBK_OK, "reset");
		memset(w->m, 0, sizeof(w->m));
		w->updates++;
		break;
	default:
		pick_attr(w, f, &attr);
		if (op == OP_REREG && fz_bool(f))	/* the next key byte */
			attr.rkey = ibk_rkey_next(key);
		wr.addr = pick_u64(f);
		wr.length = pick_u64(f);
		wr.mw_rkey = key;
		wr.mr_lkey = pick_key(w, f);
		wr.access = fz_u8(f) < 0xe0 ? fz_u8(f) & IBK_ACCESS_MW_FLAGS :
			    fz_u32(f);
		wr.qpn = fz_u8(f) | (fz_u8(f) < 0x20 ? 0x1000000u : 0);
		wr.qp_pd = qp_pd;
		wr.key_byte = fz_u8(f);
		rc = table_op(w, op, key, &attr, qp_pd, &wr);
		mrc = model_op(w, op, key, &attr, qp_pd, &wr);
		FZ_CHECK(rc == mrc, "operation %u on %08x: %d, model %d", op,
			 key, rc, mrc);
		break;
	}
	check_after(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = fz_init(data, size);
	struct world *w = calloc(1, sizeof(*w));
	struct ibk_mr_cell *cells;

	if (!w)
		abort();
	w->cap = 1 + fz_below(&f, CAP_MAX);
	cells = fz_storage(IBK_MR_CELLS(w->cap) * sizeof(*cells));
	FZ_CHECK(ibk_mr_table_init(&w->t, cells, w->cap) == IBK_OK, "init");
	ibk_latch_init(&w->t.latch, 0xffffffffu - 2u * fz_u8(&f));
	for (unsigned n = 0; n < MAX_OPS && !fz_empty(&f); n++)
		step(w, &f);
	free(cells);
	free(w);
	return 0;
}
