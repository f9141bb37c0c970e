/* SPDX-License-Identifier: MIT */
/*
 * test_mr_stress.c - the memory region and window table under a writer.
 *
 * One writer changes the table step after step while two readers look
 * objects up and check requests against it. Each step g changes one of 40
 * objects, object g mod 40, and what every object holds after any step is
 * a closed-form function of the step number:
 *  - 24 MRs, re-registered at each of their steps with the next key byte,
 *    a new address, length and access;
 *  - 8 fast-register MRs, invalidated and fast-registered in turn (a new
 *    key byte each time they come back);
 *  - 8 type 2 windows, invalidated and bound in turn (new key byte, range
 *    and QP), each on an MR of its own whose window count goes 1, 0, 1...
 * So a reader can compute the whole table for any step. A reference and
 * its generation must match that step's object exactly; a lookup or a
 * single check must match some step published while it ran; a burst of 16
 * checks must match one single step for all 16 (one read section). A
 * reference must read stale once the count moved past it, fresh while it
 * has not. The count starts below 2^32 and wraps during the run.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ib_tables.h"
#include "rng.h"
#include "tap.h"

#define N_STEPPED	40u	/* objects the steps go round */
#define N_MR		24u	/* 0..23: re-registered MRs */
#define N_FAST		8u	/* 24..31: fast-register MRs */
#define N_MW		8u	/* 32..39: type 2 windows, on MRs 40..47 */
#define CAP		64u	/* 48..63: never registered */
#define PD		3u
#define QP_A		0x11u
#define QP_B		0x22u
#define GEN_START	0xfffe0000u	/* wraps after ~65000 steps */
#define READERS		2
#define MIN_READS	3000000ul	/* per reader */
#define MIN_UPDATES	100000ul
#define READS_PER_STEP	20
#define BURST		16
#define MAX_DIAG	5

#include "stress.h"

static struct ibk_mr_cell cells[IBK_MR_CELLS(CAP)];
static struct ibk_mr_table table;
static uint32_t gen0;			/* the count once step 0 is set up */
static atomic_ulong steps;		/* published steps */
static atomic_ulong write_failures;

/* ------------------------------------------------------------------------
 * The table at step g, in closed form
 * ------------------------------------------------------------------------ */

/* How many steps in 1..g changed object i (its version at step g). */
static uint32_t version(uint32_t i, uint32_t g)
{
	return (g + N_STEPPED - i) / N_STEPPED - (i == 0);
}

static uint64_t mr_base(uint32_t i)
{
	return 0x0000100000000000ull * (i + 1);
}

/* Object @i at version @v (for MRs 40..47: @v is their window's). */
static struct ibk_mem_attr object_at(uint32_t i, uint32_t v)
{
	static const uint32_t access[3] = {
		IBK_ACCESS_LOCAL_WRITE | IBK_ACCESS_REMOTE,
		IBK_ACCESS_REMOTE_READ,
		IBK_ACCESS_LOCAL_WRITE | IBK_ACCESS_REMOTE_WRITE,
	};
	struct ibk_mem_attr a;

	memset(&a, 0, sizeof(a));
	if (i >= N_STEPPED + N_MW)		/* never registered */
		return a;
	a.pd = PD;
	a.state = IBK_MEM_VALID;
	if (i < N_MR) {
		a.kind = IBK_MEM_MR;
		a.rkey = ibk_rkey_make(i, (uint8_t)v);
		a.addr = mr_base(i) + (uint64_t)(v & 7) * 0x1000;
		a.length = 0x4000 + (uint64_t)(v & 3) * 0x1000;
		a.access = access[v % 3];
	} else if (i < N_MR + N_FAST) {
		/* even versions fast-registered, odd ones invalidated */
		uint32_t last = v & ~1u;

		a.kind = IBK_MEM_MR_FAST;
		a.rkey = ibk_rkey_make(i, (uint8_t)last);
		a.addr = mr_base(i) + (uint64_t)(last & 7) * 0x800;
		a.length = 0x2000;
		a.access = access[last % 3];
		a.state = v & 1 ? IBK_MEM_FREE : IBK_MEM_VALID;
	} else if (i < N_STEPPED) {
		/* even versions bound, odd ones invalidated: FREE, cleared */
		a.kind = IBK_MEM_MW2;
		a.rkey = ibk_rkey_make(i, (uint8_t)(v & ~1u));
		a.state = v & 1 ? IBK_MEM_FREE : IBK_MEM_VALID;
		if (!(v & 1)) {
			a.addr = mr_base(i + N_MW) + (uint64_t)(v & 7) * 0x100;
			a.length = 0x100 + (uint64_t)(v & 3) * 0x80;
			a.access = v & 2 ? IBK_ACCESS_REMOTE_READ :
				   IBK_ACCESS_REMOTE_READ |
				   IBK_ACCESS_REMOTE_WRITE;
			a.qpn = v & 4 ? QP_B : QP_A;
			a.mr_index = i + N_MW;
		}
	} else {
		/* 40..47: the windows' MRs, one window bound at even @v */
		a.kind = IBK_MEM_MR;
		a.rkey = ibk_rkey_make(i, 0x5a);
		a.addr = mr_base(i);
		a.length = 0x10000;
		a.access = IBK_ACCESS_LOCAL_WRITE | IBK_ACCESS_REMOTE |
			   IBK_ACCESS_MW_BIND;
		a.windows = !(v & 1);
	}
	return a;
}

/* Object @i of the table published at step @g. */
static struct ibk_mem_attr object_at_step(uint32_t i, uint32_t g)
{
	uint32_t stepped = i >= N_STEPPED && i < N_STEPPED + N_MW ?
			   i - N_MW : i;

	return object_at(i, i < N_STEPPED + N_MW ? version(stepped, g) : 0);
}

static bool same_attr(const struct ibk_mem_attr *a,
		      const struct ibk_mem_attr *b)
{
	return a->addr == b->addr && a->length == b->length &&
	       a->rkey == b->rkey && a->pd == b->pd && a->access == b->access &&
	       a->qpn == b->qpn && a->mr_index == b->mr_index &&
	       a->windows == b->windows && a->kind == b->kind &&
	       a->state == b->state;
}

/* ------------------------------------------------------------------------
 * Writer
 * ------------------------------------------------------------------------ */

/* Binds window @i, now holding key @mw_rkey, to be @next, on its MR. */
static enum ibk_memop_verdict bind_window(uint32_t i, ibk_rkey_t mw_rkey,
					     const struct ibk_mem_attr *next)
{
	struct ibk_mw_bind_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.mw_rkey = mw_rkey;
	wr.mr_lkey = object_at(i + N_MW, 0).rkey;
	wr.key_byte = ibk_rkey_byte(next->rkey);
	wr.addr = next->addr;
	wr.length = next->length;
	wr.access = next->access;
	wr.qpn = next->qpn;
	wr.qp_pd = PD;
	return ibk_mr_table_bind(&table, &wr);
}

/* Step g's operation on object g mod 40: from version v - 1 to v. */
static int apply_step(uint32_t g)
{
	uint32_t i = g % N_STEPPED, v = version(i, g);
	struct ibk_mem_attr prev = object_at(i, v - 1), next = object_at(i, v);

	if (i < N_MR)
		return ibk_mr_table_rereg(&table, prev.rkey, &next);
	if (i < N_MR + N_FAST)
		return v & 1 ? ibk_mr_table_invalidate(&table, prev.rkey) :
		       ibk_mr_table_fast_reg(&table, PD, &next);
	return v & 1 ? ibk_mr_table_invalidate(&table, prev.rkey) :
	       bind_window(i, prev.rkey, &next);
}

/* Step 0: every object at version 0, by the operations a consumer uses. */
static bool setup(void)
{
	struct ibk_mem_attr a;
	bool ok = true;
	uint32_t i;

	ibk_mr_table_init(&table, cells, CAP);
	ibk_latch_init(&table.latch, GEN_START);
	for (i = 0; i < N_STEPPED + N_MW; i++) {
		a = object_at(i, 0);
		ok &= ibk_mr_table_register(&table, &a) == IBK_MEMOP_OK;
		if (a.kind == IBK_MEM_MR_FAST)
			ok &= ibk_mr_table_fast_reg(&table, PD, &a) ==
			      IBK_MEMOP_OK;
	}
	for (i = N_MR + N_FAST; i < N_STEPPED; i++) {
		a = object_at(i, 0);
		ok &= bind_window(i, a.rkey, &a) == IBK_MEMOP_OK;
	}
	gen0 = atomic_load(&table.latch.count);
	for (i = 0; i < CAP; i++) {
		struct ibk_mem_attr want = object_at_step(i, 0);

		ibk__mr_cell_load(&table.cells[0][i], &a);
		ok &= same_attr(&a, &want);
	}
	return ok;
}

/* One step g: its operation applied, then the step count published. */
static void publish(uint32_t g)
{
	if (apply_step(g) != IBK_MEMOP_OK)
		atomic_fetch_add(&write_failures, 1);
	atomic_store_explicit(&steps, g, memory_order_relaxed);
}

static void *writer(void *arg)
{
	(void)arg;
	stress_write_paced(publish);
	return NULL;
}

/* ------------------------------------------------------------------------
 * Readers
 * ------------------------------------------------------------------------ */

struct reader_stats {
	int id;
	uint64_t rng;
	unsigned long reads, torn, found, granted;
};

static uint32_t count_now(void)
{
	return stress_count(&table.latch);
}

static uint32_t step_at(uint32_t c)
{
	return stress_step_at(c, gen0);
}

/* A key worth asking for near step @g: object i's key at its version,
 * one before or one after, or now and then an unused index. */
static ibk_rkey_t query_key(struct reader_stats *st, uint32_t g)
{
	uint32_t i = test_rng_below_r(&st->rng, CAP - 8);
	uint32_t stepped = i >= N_STEPPED && i < N_STEPPED + N_MW ?
			   i - N_MW : i;
	uint32_t v = i < N_STEPPED + N_MW ? version(stepped, g) : 0;

	v += test_rng_below_r(&st->rng, 3) + 0x100 - 1;	/* v-1..v+1 */
	v = i >= N_MR && i < N_STEPPED ? v & ~1u : v;
	return ibk_rkey_make(i, (uint8_t)v);
}

/* A request for the object @key names, from QP A or B of PD. */
static void make_request(struct reader_stats *st, uint32_t g, uint8_t *pkt,
			 ibk_rkey_t key)
{
	static const uint8_t ops[] = {
		IBK_TRANSPORT_RC | IBK_OP_RDMA_WRITE_ONLY,
		IBK_TRANSPORT_RC | IBK_OP_RDMA_READ_REQUEST,
		IBK_TRANSPORT_RC | IBK_OP_FETCH_ADD,
	};
	struct ibk_mem_attr o = object_at_step(ibk_rkey_index(key), g);
	uint8_t op = ops[test_rng_below_r(&st->rng, 3)];
	uint64_t va = o.addr + (test_rng_below_r(&st->rng, 0x600) & ~7u);
	uint8_t *ext = pkt + IBK_BTH_LEN;

	memset(pkt, 0, IBK_BTH_LEN + IBK_ATOMICETH_LEN);
	ibk_bth_set_opcode(pkt, op);
	if (ibk_opcode_has_atomiceth(op)) {
		ibk_atomiceth_set_va(ext, va);
		ibk_atomiceth_set_rkey(ext, key);
	} else {
		ibk_reth_set_va(ext, va);
		ibk_reth_set_rkey(ext, key);
		ibk_reth_set_dma_len(ext, 8 + test_rng_below_r(&st->rng, 0x100));
	}
}

/* The verdict at step @g: the rule on that step's object. */
static enum ibk_mem_verdict verdict_at(const struct ibk_mem_qp *qp,
				       const uint8_t *pkt, uint32_t g)
{
	struct ibk_mem_request req;
	struct ibk_mem_attr o, mr;
	enum ibk_mem_verdict v = ibk_mem_request_parse(qp->type, pkt, &req);

	if (v == IBK_MEM_NO_RKEY)
		return ibk_mem_check(qp, &req, NULL, NULL);
	if (v != IBK_MEM_OK)
		return v;
	o = object_at_step(ibk_rkey_index(req.rkey), g);
	mr = object_at_step(o.mr_index < CAP ? o.mr_index : 0, g);
	return ibk_mem_check(qp, &req, ibk_rkey_index(req.rkey) < CAP ? &o :
			     NULL, o.mr_index < CAP ? &mr : NULL);
}

static void op_ref(struct reader_stats *st)
{
	uint32_t g = step_at(count_now());
	ibk_rkey_t key = query_key(st, g);
	struct ibk_mr_ref ref;
	struct ibk_mem_attr want;
	uint32_t lo = count_now(), before, after, s;
	int rc = ibk_mr_table_ref_get(&table, key, &ref);
	bool fresh;

	if (rc == IBK_OK) {
		st->found++;
		s = step_at(ref.generation);
		want = object_at_step(ibk_rkey_index(key), s);
		if (!same_attr(&ref.attr, &want) || want.rkey != key)
			torn(st, "ref 0x%08x at step %u: state %u key 0x%08x, "
			     "step has state %u key 0x%08x", key, s,
			     ref.attr.state, ref.attr.rkey, want.state,
			     want.rkey);
		before = count_now();
		fresh = ibk_mr_table_ref_fresh(&table, &ref);
		after = count_now();
		if ((before != ref.generation && fresh) ||
		    (after == ref.generation && !fresh))
			torn(st, "ref gen 0x%08x fresh=%d, count 0x%08x..0x%08x",
			     ref.generation, fresh, before, after);
		return;
	}
	/* ENOENT: some step while it ran had no live object with the key */
	after = count_now();
	for (s = step_at(after);; s--) {
		want = object_at_step(ibk_rkey_index(key), s);
		if (want.rkey != key || want.state == IBK_MEM_INVALID)
			return;
		if (s == step_at(lo))
			break;
	}
	torn(st, "ref 0x%08x: %d, but every step in %u..%u has it", key, rc,
	     step_at(lo), step_at(after));
}

static void op_check(struct reader_stats *st, size_t n)
{
	uint8_t pkts[BURST][IBK_BTH_LEN + IBK_ATOMICETH_LEN];
	const void *hdrs[BURST];
	uint8_t verdicts[BURST];
	struct ibk_mem_qp qp;
	uint32_t lo = count_now(), g = step_at(lo), hi, s;
	size_t k, granted;
	bool match = false;

	qp.type = IBK_QPT_RC;
	qp.qpn = test_rng_below_r(&st->rng, 2) ? QP_A : QP_B;
	qp.pd = PD;
	qp.access = IBK_ACCESS_REMOTE;
	for (k = 0; k < n; k++) {
		make_request(st, g, pkts[k], query_key(st, g));
		hdrs[k] = pkts[k];
	}
	if (n == 1) {
		verdicts[0] = (uint8_t)ibk_mr_table_check(&table, &qp, pkts[0]);
		granted = verdicts[0] == IBK_MEM_OK;
	} else {
		granted = ibk_mr_table_check_burst(&table, &qp, hdrs, n,
						   verdicts);
	}
	st->granted += granted;
	hi = count_now();
	/* one step, the same for every request of the burst */
	for (s = step_at(hi); !match; s--) {
		match = true;
		for (k = 0; k < n && match; k++)
			match = verdicts[k] == verdict_at(&qp, pkts[k], s);
		if (s == step_at(lo))
			break;
	}
	if (!match)
		torn(st, "%s of %zu: no step in %u..%u gives its verdicts "
		     "(first %s)", n == 1 ? "check" : "burst", n, step_at(lo),
		     step_at(hi), ibk_mem_verdict_name(
			     (enum ibk_mem_verdict)verdicts[0]));
}

static void *reader(void *arg)
{
	struct reader_stats *st = (struct reader_stats *)arg;

	while (st->reads < MIN_READS ||
	       atomic_load_explicit(&steps, memory_order_relaxed) <
	       MIN_UPDATES) {
		unsigned op = test_rng_below_r(&st->rng, 8);

		if (op < 4)
			op_ref(st);
		else if (op < 7)
			op_check(st, 1);
		else
			op_check(st, BURST);
		stress_reader_progress(st->id, ++st->reads);
	}
	atomic_fetch_sub(&readers_running, 1);
	return NULL;
}

int main(void)
{
	struct reader_stats st[READERS];
	pthread_t rd[READERS], wr;
	unsigned long reads = 0, torn_reads = 0, found = 0, granted = 0;
	uint32_t end;
	double t0, secs;
	int k;

	tap_ok(setup(), "step 0: 40 objects registered, fast-registered and "
	       "bound, exactly as the closed form says");
	atomic_store(&readers_running, READERS);
	t0 = stress_now_seconds();
	for (k = 0; k < READERS; k++) {
		memset(&st[k], 0, sizeof(st[k]));
		st[k].id = k;
		st[k].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(k + 3);
		pthread_create(&rd[k], NULL, reader, &st[k]);
	}
	pthread_create(&wr, NULL, writer, NULL);
	for (k = 0; k < READERS; k++)
		pthread_join(rd[k], NULL);
	pthread_join(wr, NULL);
	secs = stress_now_seconds() - t0;
	for (k = 0; k < READERS; k++) {
		reads += st[k].reads;
		torn_reads += st[k].torn;
		found += st[k].found;
		granted += st[k].granted;
	}
	end = count_now();
	tap_diag("reads %lu (%d readers; %lu refs found, %lu requests "
		 "granted), steps %lu, torn %lu, %.2f s", reads, READERS, found,
		 granted, (unsigned long)atomic_load(&steps), torn_reads, secs);
	tap_ok(atomic_load(&write_failures) == 0, "every step's operation "
	       "(re-register, invalidate, fast register, bind) was applied "
	       "(%lu refused)", (unsigned long)atomic_load(&write_failures));
	tap_ok(torn_reads == 0, "no torn read: every reference matches its "
	       "generation's table, every check and every whole burst one "
	       "published table");
	tap_ok(reads >= READERS * MIN_READS &&
	       atomic_load(&steps) >= MIN_UPDATES && found > 0 && granted > 0,
	       "at least %lu reads against at least %lu updates",
	       READERS * MIN_READS, MIN_UPDATES);
	tap_ok(end < gen0, "the generation wrapped past 2^32 during the run "
	       "(0x%08x -> 0x%08x)", gen0, end);
	return tap_done();
}
