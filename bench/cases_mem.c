/* SPDX-License-Identifier: MIT */
/*
 * cases_mem.c - the responder's R_Key check: RDMA WRITE, READ and ATOMIC
 * requests checked against a table of 1024 regions and windows, one at a
 * time and in bursts of 32, through ib_tables.h's lock-free table, beside
 * a plain array of structs and a chain of branches (baseline.h).
 */
#include "bench.h"
#include "baseline.h"

#include <stdlib.h>
#include <string.h>

#include "ib_tables.h"
#include "variants.h"

#define OBJECTS		1024u	/* 3/4 MRs, 1/8 type 1 and 1/8 type 2 MWs */
#define PACKETS		1024u	/* request buffers of 64 bytes: 64 KiB */
#define PKT_SIZE	64u
#define SEQUENCE	(1u << 20)
#define BURST		32u
#define PD		5u
#define QPN		0x77u

struct mem {
	struct ibk_mr_table t;		/* first: 64-byte aligned */
	struct ibk_mr_cell *cells;
	struct base_mem_object *objects;
	struct ibk_mem_qp qp;
	struct base_mem_qp base_qp;
	uint8_t *packets;
	const void *hdrs[SEQUENCE];
	uint8_t verdicts[BURST];
	uint8_t lib_verdicts[SEQUENCE];
};

static void put64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	int i;

	for (i = 3; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/* Object i: registered through the library, mirrored in the array. */
static void add_object(struct mem *m, struct bench_rng *r, uint32_t i)
{
	struct ibk_mem_attr a;
	struct base_mem_object *o = &m->objects[i];
	unsigned kind = bench_rng_below(r, 8);

	memset(&a, 0, sizeof(a));
	a.rkey = ibk_rkey_make(i, (uint8_t)bench_rng_next(r));
	a.pd = PD;
	a.addr = 0x7f0000000000ull + (uint64_t)i * 0x100000;
	a.length = 0x10000;
	a.access = IBK_ACCESS_LOCAL_WRITE | IBK_ACCESS_REMOTE;
	a.kind = kind == 0 ? IBK_MEM_MW1 : kind == 1 ? IBK_MEM_MW2 :
		 IBK_MEM_MR;
	if (ibk_mr_table_register(&m->t, &a) != IBK_MEMOP_OK) {
		fprintf(stderr, "bench: cannot register object %u\n", i);
		exit(2);
	}
	o->rkey = a.rkey;
	o->pd = a.pd;
	o->addr = a.addr;
	o->length = a.length;
	o->access = a.access;
	o->live = 1;
	o->valid = 1;
	if (kind < 2) {		/* bound to itself: its own "MR" range */
		struct ibk_mw_bind_wr wr;
		struct ibk_mem_attr mr = a;

		/* each window gets an MR of its own past the objects */
		mr.rkey = ibk_rkey_make(OBJECTS + i, 1);
		mr.kind = IBK_MEM_MR;
		mr.access |= IBK_ACCESS_MW_BIND;
		memset(&wr, 0, sizeof(wr));
		wr.mw_rkey = a.rkey;
		wr.mr_lkey = mr.rkey;
		wr.key_byte = (uint8_t)(a.rkey + 1);
		wr.addr = a.addr;
		wr.length = a.length;
		wr.access = IBK_ACCESS_REMOTE;
		wr.qpn = QPN;
		wr.qp_pd = PD;
		if (ibk_mr_table_register(&m->t, &mr) != IBK_MEMOP_OK ||
		    ibk_mr_table_bind(&m->t, &wr) != IBK_MEMOP_OK) {
			fprintf(stderr, "bench: cannot bind window %u\n", i);
			exit(2);
		}
		o->rkey = ibk_rkey_make(i, wr.key_byte);
		o->is_window = 1;
		o->is_type2 = kind == 1;
		o->qpn = QPN;
	}
}

/*
 * One request: WRITE ONLY, READ or FETCH ADD (1/3 each) on a random
 * object; with @fail_1_in > 0, 1 in @fail_1_in each has a stale key byte,
 * a range past the object's end, an address 4 off alignment (refused for
 * the atomics only) and an index past the table; the rest are granted.
 */
static void write_request(struct mem *m, struct bench_rng *r,
			  unsigned fail_1_in, uint8_t *p)
{
	static const uint8_t ops[3] = { 0x0a, 0x0c, 0x14 };
	uint32_t i = bench_rng_below(r, OBJECTS);
	const struct base_mem_object *o = &m->objects[i];
	uint8_t op = ops[bench_rng_below(r, 3)];
	uint32_t rkey = o->rkey, len = 8 + 8 * bench_rng_below(r, 512);
	uint64_t va = o->addr + 8 * bench_rng_below(r, 0x1000);
	unsigned fail = fail_1_in ? bench_rng_below(r, fail_1_in) : ~0u;

	switch (fail) {
	case 0:
		rkey ^= 1 + bench_rng_below(r, 0xff);	/* stale key byte */
		break;
	case 1:
		va = o->addr + o->length - len / 2;	/* past the end */
		break;
	case 2:
		va |= 4;		/* misaligned for an atomic only */
		break;
	case 3:
		rkey = ibk_rkey_make(4 * OBJECTS + i, 0); /* no object */
		break;
	}
	memset(p, 0, PKT_SIZE);
	p[0] = op;
	p[2] = 0xff;
	p[3] = 0xff;
	put32(p + 4, QPN);
	put64(p + 12, va);
	put32(p + 20, rkey);
	if (op != 0x14)
		put32(p + 24, len);
	else
		put64(p + 24, 1);	/* add 1 */
}

static void *mem_setup(const struct bench_case *c)
{
	struct mem *m = bench_alloc(sizeof(*m));
	struct bench_rng r = { 0x1b1b0070 };
	uint32_t cap = 2 * OBJECTS, i;

	m->cells = bench_alloc(IBK_MR_CELLS(cap) * sizeof(*m->cells));
	m->objects = bench_alloc(cap * sizeof(*m->objects));
	m->packets = bench_alloc(PACKETS * PKT_SIZE);
	if (ibk_mr_table_init(&m->t, m->cells, cap)) {
		fprintf(stderr, "bench: cannot set up the MR table\n");
		exit(2);
	}
	for (i = 0; i < OBJECTS; i++)
		add_object(m, &r, i);
	m->qp.type = IBK_QPT_RC;
	m->qp.qpn = QPN;
	m->qp.pd = PD;
	m->qp.access = IBK_ACCESS_REMOTE;
	m->base_qp.qpn = QPN;
	m->base_qp.pd = PD;
	m->base_qp.access = IBK_ACCESS_REMOTE;
	for (i = 0; i < PACKETS; i++)
		write_request(m, &r, (unsigned)c->param, m->packets +
			      i * PKT_SIZE);
	for (i = 0; i < SEQUENCE; i++)
		m->hdrs[i] = m->packets + bench_rng_below(&r, PACKETS) *
			     PKT_SIZE;
	return m;
}

static void mem_teardown(void *ctx)
{
	struct mem *m = ctx;

	free(m->cells);
	free(m->objects);
	free(m->packets);
	free(m);
}

__attribute__((noinline))
static uint64_t rkey_lib(void *ctx, uint64_t iters)
{
	const struct mem *m = ctx;
	uint64_t ok = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		const void *bth = m->hdrs[i & (SEQUENCE - 1)];

		ok += ibk_mr_table_check(&m->t, &m->qp, bth) == IBK_MEM_OK;
		BENCH_BARRIER();
	}
	return ok;
}

__attribute__((noinline))
static uint64_t rkey_base(void *ctx, uint64_t iters)
{
	const struct mem *m = ctx;
	uint64_t ok = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		ok += base_mem_check(m->objects, 2 * OBJECTS, &m->base_qp,
				     m->hdrs[i & (SEQUENCE - 1)]) ==
		      BASE_MEM_OK;
		BENCH_BARRIER();
	}
	return ok;
}

/* One iteration is one burst; bursts walk the sequence in turn. */
static const void *const *burst_at(const struct mem *m, uint64_t i)
{
	return m->hdrs + (i % (SEQUENCE / BURST)) * BURST;
}

__attribute__((noinline))
static uint64_t rkey_burst_lib(void *ctx, uint64_t iters)
{
	struct mem *m = ctx;
	uint64_t ok = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		ok += ibk_mr_table_check_burst(&m->t, &m->qp, burst_at(m, i),
					       BURST, m->verdicts);
		BENCH_BARRIER();
	}
	return ok;
}

__attribute__((noinline))
static uint64_t rkey_burst_base(void *ctx, uint64_t iters)
{
	struct mem *m = ctx;
	uint64_t ok = 0;
	uint64_t i;
	unsigned k;

	for (i = 0; i < iters; i++) {
		const void *const *b = burst_at(m, i);

		for (k = 0; k < BURST; k++) {
			m->verdicts[k] = (uint8_t)base_mem_check(m->objects,
				2 * OBJECTS, &m->base_qp, b[k]);
			ok += m->verdicts[k] == BASE_MEM_OK;
		}
		BENCH_BARRIER();
	}
	return ok;
}

/* rkey_burst_lib() built with IBK_NO_SIMD (variants.c). */
__attribute__((noinline))
static uint64_t rkey_burst_scalar(void *ctx, uint64_t iters)
{
	struct mem *m = ctx;

	return variant_scalar_rkey_burst(&m->t, &m->qp, m->hdrs, SEQUENCE,
					 BURST, m->verdicts, iters);
}

/* A burst as 32 single checks, the simpler path to the same verdicts. */
__attribute__((noinline))
static uint64_t rkey_burst_singles(void *ctx, uint64_t iters)
{
	struct mem *m = ctx;
	uint64_t ok = 0;
	uint64_t i;
	unsigned k;

	for (i = 0; i < iters; i++) {
		const void *const *b = burst_at(m, i);

		for (k = 0; k < BURST; k++) {
			m->verdicts[k] = (uint8_t)ibk_mr_table_check(&m->t,
								     &m->qp,
								     b[k]);
			ok += m->verdicts[k] == IBK_MEM_OK;
		}
		BENCH_BARRIER();
	}
	return ok;
}

static unsigned rkey_burst_variants(void *ctx, struct bench_side *sides)
{
	struct mem *m = ctx;
	uint8_t lib[BURST];
	size_t i;

	bench_variant_agrees(variant_scalar_layout() == variant_layout(),
		       "scalar's struct layout");
	for (i = 0; i < SEQUENCE; i += BURST) {
		ibk_mr_table_check_burst(&m->t, &m->qp, m->hdrs + i, BURST,
					 lib);
		variant_scalar_rkey_burst(&m->t, &m->qp, m->hdrs + i, BURST,
					  BURST, m->verdicts, 1);
		bench_variant_agrees(memcmp(lib, m->verdicts, BURST) == 0,
			       "scalar R_Key burst");
	}
	sides[0] = (struct bench_side){ "variant:scalar", rkey_burst_scalar,
					ctx };
	sides[1] = (struct bench_side){ "variant:singles",
					rkey_burst_singles, ctx };
	return 2;
}

/* The library's verdicts in the baseline's order of the same names. */
static int same_verdict(uint8_t lib, enum base_mem_verdict base)
{
	static const uint8_t map[] = {
		[BASE_MEM_OK] = IBK_MEM_OK,
		[BASE_MEM_NO_RKEY] = IBK_MEM_NO_RKEY,
		[BASE_MEM_DROP] = IBK_MEM_DROP_HEADER,
		[BASE_MEM_BAD_OPCODE] = IBK_MEM_ERR_OPCODE,
		[BASE_MEM_QP_ACCESS] = IBK_MEM_ERR_QP_ACCESS,
		[BASE_MEM_LENGTH] = IBK_MEM_ERR_LENGTH,
		[BASE_MEM_KEY] = IBK_MEM_ERR_KEY,
		[BASE_MEM_PD] = IBK_MEM_ERR_PD,
		[BASE_MEM_WINDOW_QP] = IBK_MEM_ERR_WINDOW_QP,
		[BASE_MEM_UNBOUND] = IBK_MEM_ERR_UNBOUND,
		[BASE_MEM_ACCESS] = IBK_MEM_ERR_ACCESS,
		[BASE_MEM_STATE] = IBK_MEM_ERR_STATE,
		[BASE_MEM_RANGE] = IBK_MEM_ERR_RANGE,
		[BASE_MEM_ALIGN] = IBK_MEM_ERR_ALIGN,
	};

	return lib == map[base];
}

/* Every packet of the sequence: the same verdict singly, in bursts and
 * from the baseline. */
static int mem_check(void *ctx)
{
	struct mem *m = ctx;
	size_t i, ok = 0, base_ok = 0;

	for (i = 0; i < SEQUENCE; i += BURST)
		ok += ibk_mr_table_check_burst(&m->t, &m->qp, m->hdrs + i,
					       BURST, m->lib_verdicts + i);
	for (i = 0; i < SEQUENCE; i++) {
		enum base_mem_verdict b = base_mem_check(m->objects,
			2 * OBJECTS, &m->base_qp, m->hdrs[i]);

		base_ok += b == BASE_MEM_OK;
		if (!same_verdict(m->lib_verdicts[i], b) ||
		    ibk_mr_table_check(&m->t, &m->qp, m->hdrs[i]) !=
		    m->lib_verdicts[i])
			return -1;
	}
	return ok == base_ok ? 0 : -1;
}

static void mem_note(void *ctx, char *buf, size_t len)
{
	struct mem *m = ctx;
	unsigned count[IBK_MEM_ERR_ALIGN + 1] = { 0 };
	size_t i;

	for (i = 0; i < SEQUENCE; i++)
		count[m->lib_verdicts[i] <= IBK_MEM_ERR_ALIGN ?
		      m->lib_verdicts[i] : 0]++;
	snprintf(buf, len, "%u requests: %u granted, %u key, %u range, "
		 "%u align", SEQUENCE, count[IBK_MEM_OK], count[IBK_MEM_ERR_KEY],
		 count[IBK_MEM_ERR_RANGE], count[IBK_MEM_ERR_ALIGN]);
}

const struct bench_case bench_mem_cases[] = {
	{
		.name = "rkey_check", .base_name = "array_branchy",
		.inputs = "one request per call: "
			  "WRITE/READ/FETCH ADD (1024 of 64 B, random order "
			  "of 2^20) against 1024 MRs and windows; stale key, "
			  "past the end, misaligned atomic, no object 1/16 "
			  "each",
		.param = 16, .ops_per_iter = 1,
		.setup = mem_setup, .teardown = mem_teardown,
		.lib = rkey_lib, .base = rkey_base,
		.check = mem_check, .note = mem_note,
	},
	{
		.name = "rkey_check_burst", .base_name = "array_branchy",
		.inputs = "bursts of 32 of rkey_check's requests, one read "
			  "section per burst",
		.param = 16, .ops_per_iter = BURST,
		.setup = mem_setup, .teardown = mem_teardown,
		.lib = rkey_burst_lib, .base = rkey_burst_base,
		.check = mem_check, .note = mem_note,
		.peers = rkey_burst_variants,
	},
	{
		.name = "rkey_check_all_ok", .base_name = "array_branchy",
		.inputs = "rkey_check with every request granted (the "
			  "checks' outcomes predictable, the opcode still "
			  "random)",
		.param = 0, .ops_per_iter = 1,
		.setup = mem_setup, .teardown = mem_teardown,
		.lib = rkey_lib, .base = rkey_base,
		.check = mem_check, .note = mem_note,
	},
};

const size_t bench_mem_ncases =
	sizeof(bench_mem_cases) / sizeof(bench_mem_cases[0]);
