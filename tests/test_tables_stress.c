/* SPDX-License-Identifier: MIT */
/*
 * test_tables_stress.c - ib_tables.h under concurrency.
 *
 *  - Torn reads: one writer publishes P_Key and GID tables while two
 *    readers read them. Every table the writer publishes is a closed-form
 *    function of its step number g: a refill every fourth step rewrites
 *    every entry from g, the steps between set one entry each, from g.
 *    So for any g a reader can compute what every entry, every find and
 *    every receive verdict must be. Reads that report a generation (refs,
 *    snapshots) are checked against exactly that table; reads that do not
 *    (get, find, QP1 rx, bursts) must agree with some table published
 *    between the generation seen just before and just after the call.
 *    References are checked too: stale once the count has moved past
 *    their generation, fresh while it has not.
 *  - The generation starts just below 2^32 and wraps during the run (the
 *    count skips 0 and 1 there).
 *  - Refill tickets: a consumer refilling while change events arrive never
 *    publishes a device read older than an event applied before a read.
 *  - The latch on its own: a spinning and a trying writer never lose an
 *    update of each other's, a reader never sees a torn pair.
 *  - Retries are paid for: under a writer updating back to back, no read
 *    redoes its read section more often than the count moved during it.
 *  - Saturating counters under concurrent increments: exact below 0xffff,
 *    exactly 0xffff after more than 0xffff increments from four threads.
 *
 * The figures (reads, updates, read retries, torn reads) are printed as
 * TAP diagnostics. Sized to run in a few seconds natively and within the
 * budget under sanitizers and qemu-user; the minimums (10 million reads,
 * 100 thousand updates per table) hold in every configuration.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* count read-section retries per thread (see ib_tables.h) */
static _Thread_local unsigned long tls_retries;
#define IBK_LATCH_RETRY_HOOK() ((void)tls_retries++)

#include "ib_tables.h"
#include "port_model.h"
#include "rng.h"
#include "tap.h"

#define PK_CAP		64u
#define GID_CAP		32u
#define GEN_START	0xffff0000u	/* wraps after 32768 updates */
#define READERS		2
#define MIN_READS	5000000ul	/* per reader: 10 million in all */
#define MIN_UPDATES	100000ul	/* per table */
#define REFILL_EVERY	4u		/* other steps set one entry */
#define QP_QKEY		0x00000b1bu
#define BURST		16
#define READS_PER_STEP	40		/* writer pacing, see writer() */
#define MAX_DIAG	5

#include "stress.h"

static struct ibk_pkey_cell pk_cells[IBK_PKEY_CELLS(PK_CAP)];
static struct ibk_hash_slot pk_slots[IBK_PKEY_HASH_SLOTS(PK_CAP)];
static struct ibk_gid_cell gid_cells[IBK_GID_CELLS(GID_CAP)];
static struct ibk_hash_slot gid_slots[IBK_HASH_SLOTS(GID_CAP)];
static struct ibk_port port;

/* count values of each table once its step 0 is published */
static uint32_t pk_gen0, gid_gen0;

static atomic_ulong pk_steps, gid_steps;	/* published steps */

/* ------------------------------------------------------------------------
 * The published tables, as functions of the step number
 * ------------------------------------------------------------------------ */

/* Entry @i as written at step @x: base from x (mod 1023) and i's class
 * (i mod 32), so a base names its class; membership from a bit of x that
 * depends on which copy of the class i is; empty for some (x, i). */
static ibk_pkey_t pk_value(uint32_t x, uint32_t i)
{
	uint32_t base = (x % 1023u) * 32u + (i & 31u) + 1u;

	if ((x + i) % 13u == 0)
		return IBK_PKEY_INVALID;
	return (ibk_pkey_t)(base | ((x >> (i >> 5)) & 1u ? 0x8000u : 0));
}

/* The entry a set step @g writes (distinct within one refill period). */
static uint32_t pk_set_index(uint32_t g)
{
	return (g * 7u) % PK_CAP;
}

/* Entry @i of the table published at step @g. */
static ibk_pkey_t pk_entry(uint32_t g, uint32_t i)
{
	uint32_t refill = g - g % REFILL_EVERY, s;

	for (s = g; s != refill; s--)
		if (pk_set_index(s) == i)
			return pk_value(s, i);
	return pk_value(refill, i);
}

/* Find by value at step @g: only the two entries of the base's class can
 * hold it; prefer full, then lower index. Index, or IBK_ENOENT/EINVAL. */
static int pk_model_find(uint32_t g, unsigned key, ibk_pkey_t *found)
{
	unsigned base = key & 0x7fffu, c = (base - 1) & 31u, k;
	int best = IBK_ENOENT;
	ibk_pkey_t v[2];

	if (!base)
		return IBK_EINVAL;
	v[0] = pk_entry(g, c);
	v[1] = pk_entry(g, c + 32);
	for (k = 0; k < 2; k++) {
		if ((v[k] & 0x7fffu) != base)
			continue;
		if (best < 0 || ((v[k] & 0x8000u) && !(*found & 0x8000u))) {
			best = (int)(c + 32 * k);
			*found = v[k];
		}
	}
	return best;
}

static int pk_model_find_exact(uint32_t g, unsigned key)
{
	unsigned c = ((key & 0x7fffu) - 1) & 31u;

	if (!(key & 0x7fffu))
		return IBK_EINVAL;
	if (pk_entry(g, c) == key)
		return (int)c;
	if (pk_entry(g, c + 32) == key)
		return (int)(c + 32);
	return IBK_ENOENT;
}

static enum ibk_rx_verdict pk_model_gsi(uint32_t g, unsigned pkt,
					uint32_t qkey)
{
	unsigned c = ((pkt & 0x7fffu) - 1) & 31u;

	if (!model_pkey_match(pkt, pk_entry(g, c)) &&
	    !model_pkey_match(pkt, pk_entry(g, c + 32)))
		return IBK_RX_DROP_PKEY;
	return qkey == IBK_QKEY_GSI ? IBK_RX_ACCEPT : IBK_RX_DROP_QKEY;
}

/* QP1's P_Key index: the first entry in table order that admits @pkt (rxe
 * check_keys()); of the two that can, c comes before c + 32. */
static uint32_t pk_model_gsi_index(uint32_t g, unsigned pkt)
{
	unsigned c = ((pkt & 0x7fffu) - 1) & 31u;

	return model_pkey_match(pkt, pk_entry(g, c)) ? c : c + 32;
}

/* A UD QP at @index: an empty entry matches nothing, a counted P_Key
 * violation (rxe check_keys(), qib_ud_rcv()). */
static enum ibk_rx_verdict pk_model_ud(uint32_t g, uint32_t index,
				       unsigned pkt, uint32_t qkey)
{
	ibk_pkey_t own = pk_entry(g, index);

	if (!model_pkey_match(pkt, own))
		return IBK_RX_DROP_PKEY;
	return qkey == QP_QKEY ? IBK_RX_ACCEPT : IBK_RX_DROP_QKEY;
}

/* GID entry @i as written at step @x: fe80::x:c (x the upper half of the
 * interface id, c = i mod 16), a type from x and the copy (the two copies
 * of a class share it half the time), empty for some (x, i). */
static struct ibk_gid_entry gid_value(uint32_t x, uint32_t i)
{
	struct ibk_gid_entry e;
	uint32_t c = i & 15u;

	memset(&e, 0, sizeof(e));
	e.type = IBK_GID_TYPE_IB;
	if ((x + i) % 11u == 0)
		return e;
	e.gid = ibk_gid_make(IBK_GID_DEFAULT_PREFIX, (uint64_t)x << 32 | c);
	e.type = (enum ibk_gid_type)((x + c + (i >> 4) * ((x >> 1) & 1u)) % 3u);
	return e;
}

static uint32_t gid_set_index(uint32_t g)
{
	return (g * 5u) % GID_CAP;
}

static struct ibk_gid_entry gid_entry(uint32_t g, uint32_t i)
{
	uint32_t refill = g - g % REFILL_EVERY, s;

	for (s = g; s != refill; s--)
		if (gid_set_index(s) == i)
			return gid_value(s, i);
	return gid_value(refill, i);
}

static bool gid_entry_eq(const struct ibk_gid_entry *a,
			 const struct ibk_gid_entry *b)
{
	return memcmp(a->gid.raw, b->gid.raw, 16) == 0 && a->type == b->type;
}

/* Find at step @g: only class c = low bits of the interface id can hold
 * it, at c and c + 16; lowest index whose GID (and type) match. */
static int gid_model_find(uint32_t g, const struct ibk_gid *gid, int type,
			  enum ibk_gid_type *found_type)
{
	uint32_t c = ibk_gid_guid(gid) & 15u, k;

	for (k = 0; k < 2; k++) {
		struct ibk_gid_entry e = gid_entry(g, c + 16 * k);

		if (memcmp(e.gid.raw, gid->raw, 16) == 0 &&
		    (type < 0 || (int)e.type == type)) {
			*found_type = e.type;
			return (int)(c + 16 * k);
		}
	}
	return IBK_ENOENT;
}

/* ------------------------------------------------------------------------
 * Writer
 * ------------------------------------------------------------------------ */

static void pk_publish(uint32_t g)
{
	ibk_pkey_t keys[PK_CAP];
	uint32_t i;

	if (g % REFILL_EVERY == 0) {
		for (i = 0; i < PK_CAP; i++)
			keys[i] = pk_value(g, i);
		ibk_pkey_table_refill(&port.pkeys, keys, PK_CAP,
				      ibk_pkey_table_refill_ticket(&port.pkeys));
	} else {
		i = pk_set_index(g);
		ibk_pkey_table_set(&port.pkeys, i, pk_value(g, i));
	}
}

static void gid_publish(uint32_t g)
{
	struct ibk_gid_entry e[GID_CAP];
	uint32_t i;

	if (g % REFILL_EVERY == 0) {
		for (i = 0; i < GID_CAP; i++)
			e[i] = gid_value(g, i);
		ibk_gid_table_refill(&port.gids, e, GID_CAP,
				     ibk_gid_table_refill_ticket(&port.gids));
	} else {
		i = gid_set_index(g);
		e[0] = gid_value(g, i);
		ibk_gid_table_set(&port.gids, i, &e[0].gid, e[0].type);
	}
}

/* One step g: both tables in turn, each step count published after it. */
static void publish(uint32_t g)
{
	pk_publish(g);
	atomic_store_explicit(&pk_steps, g, memory_order_relaxed);
	gid_publish(g);
	atomic_store_explicit(&gid_steps, g, memory_order_relaxed);
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
	uint64_t rng;			/* this reader's rng.h state */
	unsigned long reads;
	unsigned long torn;
	unsigned long retries;
	unsigned long wide;		/* windows spanning > 64 steps */
};

/* Once a reference's count has moved on, it must read stale; while the
 * count stays put, fresh. Checked around the one-load freshness check. */
static void check_fresh(struct reader_stats *st, const struct ibk__table *h,
			uint32_t generation,
			bool (*fresh)(const void *, const void *),
			const void *table, const void *ref)
{
	uint32_t before = stress_count(&h->latch);
	bool f = fresh(table, ref);
	uint32_t after = stress_count(&h->latch);

	if ((before != generation && f) || (after == generation && !f))
		torn(st, "ref gen 0x%08x fresh=%d, count 0x%08x..0x%08x",
		     generation, f, before, after);
}

static bool pk_fresh(const void *t, const void *r)
{
	return ibk_pkey_table_ref_fresh((const struct ibk_pkey_table *)t,
					(const struct ibk_pkey_ref *)r);
}

static bool gid_fresh(const void *t, const void *r)
{
	return ibk_gid_table_ref_fresh((const struct ibk_gid_table *)t,
				       (const struct ibk_gid_ref *)r);
}

/* A P_Key worth asking about at step ~@g: an entry's, either membership,
 * or now and then anything. */
static unsigned pk_query(struct reader_stats *st, uint32_t g)
{
	if (test_rng_below_r(&st->rng, 8) == 0)
		return (unsigned)test_rng64_r(&st->rng) & 0xffffu;
	return pk_entry(g - test_rng_below_r(&st->rng, 4),
			test_rng_below_r(&st->rng, PK_CAP)) ^
	       (unsigned)(test_rng64_r(&st->rng) & 0x8000u);
}

static struct ibk_gid gid_query(struct reader_stats *st, uint32_t g)
{
	struct ibk_gid_entry e = gid_entry(g - test_rng_below_r(&st->rng, 4),
					   test_rng_below_r(&st->rng, GID_CAP));

	if (test_rng_below_r(&st->rng, 8) == 0 || ibk_gid_is_zero(&e.gid))
		e.gid = ibk_gid_make(IBK_GID_DEFAULT_PREFIX, (uint64_t)g << 32 |
				     test_rng_below_r(&st->rng, 20));
	return e.gid;
}

/* One P_Key operation, checked against the table(s) it may have seen. */
static void pk_op(struct reader_stats *st, unsigned op)
{
	const struct ibk_pkey_table *t = &port.pkeys;
	uint32_t lo_count = stress_count(&t->hdr.latch), lo, hi, g, i;
	unsigned key = pk_query(st, stress_step_at(lo_count, pk_gen0));
	uint8_t hdr[BURST][IBK_BTH_LEN + IBK_DETH_LEN];
	const void *hdrs[BURST];
	uint8_t verdicts[BURST];
	struct ibk_pkey_ref ref;
	struct ibk_qp_keys qp;
	ibk_pkey_t v = 0, want_v = 0, snap[PK_CAP];
	uint32_t gen = 0, qkey = 0;
	uint16_t gsi_index = 0xffff;
	int rc, want;
	bool ok = false;
	size_t acc = 0, k;

	i = test_rng_below_r(&st->rng, PK_CAP);
	switch (op) {
	case 0:		/* get: window */
		rc = ibk_pkey_table_get(t, i, &v);
		break;
	case 1:		/* find by value: window */
		rc = ibk_pkey_table_find(t, (ibk_pkey_t)key, &v);
		break;
	case 2:		/* exact find: window */
		rc = ibk_pkey_table_find_exact(t, (ibk_pkey_t)key);
		break;
	case 3:		/* QP1 receive check: window */
		qkey = test_rng64_r(&st->rng) & 1 ? IBK_QKEY_GSI : QP_QKEY;
		memset(hdr[0], 0, sizeof(hdr[0]));
		ibk_bth_set_opcode(hdr[0], IBK_OPCODE_UD_SEND_ONLY);
		ibk_bth_set_pkey(hdr[0], (ibk_pkey_t)key);
		ibk_deth_set_qkey(hdr[0] + IBK_BTH_LEN, qkey);
		rc = ibk_port_rx_gsi(&port, hdr[0], hdr[0] + IBK_BTH_LEN,
				     &gsi_index);
		break;
	case 4:		/* UD burst: one table for all packets */
		memset(&qp, 0, sizeof(qp));
		qp.type = IBK_QPT_UD;
		qp.pkey_index = (uint16_t)i;
		qp.qkey = QP_QKEY;
		for (k = 0; k < BURST; k++) {
			memset(hdr[k], 0, sizeof(hdr[k]));
			ibk_bth_set_opcode(hdr[k], IBK_OPCODE_UD_SEND_ONLY);
			ibk_bth_set_pkey(hdr[k], (ibk_pkey_t)pk_query(st,
					 stress_step_at(lo_count, pk_gen0)));
			ibk_deth_set_qkey(hdr[k] + IBK_BTH_LEN,
					  test_rng64_r(&st->rng) & 3 ?
					  QP_QKEY : 0);
			hdrs[k] = hdr[k];
		}
		acc = ibk_port_rx_burst(&port, &qp, hdrs, BURST, verdicts);
		rc = 0;
		break;
	case 5:		/* ref by index: exact */
		rc = ibk_pkey_table_ref_get(t, i, &ref);
		if (rc == IBK_OK) {
			g = stress_step_at(ref.generation, pk_gen0);
			if (ref.pkey != pk_entry(g, i) || ref.index != i)
				torn(st, "pkey ref_get %u: 0x%04x, step %u has "
				     "0x%04x", i, ref.pkey, g, pk_entry(g, i));
			check_fresh(st, &t->hdr, ref.generation, pk_fresh, t,
				    &ref);
			return;
		}
		break;
	case 6:		/* ref by value: exact */
		rc = ibk_pkey_table_ref_find(t, (ibk_pkey_t)key, &ref);
		if (rc == IBK_OK) {
			g = stress_step_at(ref.generation, pk_gen0);
			want = pk_model_find(g, key, &want_v);
			if (want != ref.index || want_v != ref.pkey)
				torn(st, "pkey ref_find 0x%04x: %u/0x%04x, step "
				     "%u has %d/0x%04x", key, ref.index,
				     ref.pkey, g, want, want_v);
			check_fresh(st, &t->hdr, ref.generation, pk_fresh, t,
				    &ref);
			return;
		}
		break;
	default:	/* snapshot: exact */
		rc = ibk_pkey_table_snapshot(t, PK_CAP, snap, &gen);
		if (rc == (int)PK_CAP) {
			g = stress_step_at(gen, pk_gen0);
			for (i = 0; i < PK_CAP; i++)
				if (snap[i] != pk_entry(g, i))
					break;
			if (i < PK_CAP)
				torn(st, "pkey snapshot step %u: entry %u "
				     "0x%04x, want 0x%04x", g, i, snap[i],
				     pk_entry(g, i));
			return;
		}
		break;
	}

	/* window checks; a failed exact read falls through to here too */
	lo = stress_step_at(lo_count, pk_gen0);
	hi = stress_step_at(stress_count(&t->hdr.latch), pk_gen0);
	if (hi - lo > 64)
		st->wide++;
	for (g = hi; !ok; g--) {
		switch (op) {
		case 0:
			want_v = pk_entry(g, i);
			ok = (want_v & 0x7fffu) ? rc == IBK_OK && v == want_v :
			     rc == IBK_ENOENT;
			break;
		case 5:		/* ref_get refused: the entry was empty */
			ok = rc == IBK_ENOENT && !(pk_entry(g, i) & 0x7fffu);
			break;
		case 1:
			want = pk_model_find(g, key, &want_v);
			ok = rc == want && (rc < 0 || v == want_v);
			break;
		case 6:		/* ref_find refused: no such partition */
			ok = rc == pk_model_find(g, key, &want_v) && rc < 0;
			break;
		case 2:
			ok = rc == pk_model_find_exact(g, key);
			break;
		case 3:
			ok = rc == (int)pk_model_gsi(g, key, qkey) &&
			     (rc != IBK_RX_ACCEPT ||
			      gsi_index == pk_model_gsi_index(g, key));
			break;
		case 4: {
			size_t want_acc = 0;

			ok = true;
			for (k = 0; k < BURST; k++) {
				enum ibk_rx_verdict w = pk_model_ud(g, i,
					ibk_bth_pkey(hdr[k]),
					ibk_deth_qkey(hdr[k] + IBK_BTH_LEN));

				ok = ok && verdicts[k] == w;
				want_acc += w == IBK_RX_ACCEPT;
			}
			ok = ok && acc == want_acc;
			break;
		}
		default:	/* a snapshot refused: never expected */
			ok = false;
			break;
		}
		if (g == lo)
			break;
	}
	if (!ok)
		torn(st, "pkey op %u (index %u key 0x%04x): rc %d value 0x%04x, "
		     "no step in %u..%u has that", op, i, key, rc, v, lo, hi);
}

/* One GID operation. */
static void gid_op(struct reader_stats *st, unsigned op)
{
	const struct ibk_gid_table *t = &port.gids;
	uint32_t lo_count = stress_count(&t->hdr.latch), lo, hi, g, i;
	struct ibk_gid q = gid_query(st, stress_step_at(lo_count, gid_gen0));
	struct ibk_gid_entry e, want_e, snap[GID_CAP];
	enum ibk_gid_type ft = IBK_GID_TYPE_IB, want_ft = IBK_GID_TYPE_IB;
	int type = (int)test_rng_below_r(&st->rng, 4) - 1, rc, want;
	struct ibk_gid_ref ref;
	uint32_t gen = 0;
	bool ok = false;

	memset(&e, 0, sizeof(e));
	i = test_rng_below_r(&st->rng, GID_CAP);
	switch (op) {
	case 0:		/* get: window */
		rc = ibk_gid_table_get(t, i, &e);
		break;
	case 1:		/* find, any type or one: window */
		rc = ibk_gid_table_find(t, &q, (enum ibk_gid_type)type, &ft);
		break;
	case 2:		/* ref by value: exact */
		rc = ibk_gid_table_ref_find(t, &q, (enum ibk_gid_type)type,
					    &ref);
		if (rc == IBK_OK) {
			g = stress_step_at(ref.generation, gid_gen0);
			want = gid_model_find(g, &q, type, &want_ft);
			if (want != ref.index || want_ft != ref.type ||
			    memcmp(ref.gid.raw, q.raw, 16) != 0)
				torn(st, "gid ref_find: %u type %d, step %u "
				     "has %d type %d", ref.index, ref.type, g,
				     want, want_ft);
			check_fresh(st, &t->hdr, ref.generation, gid_fresh, t,
				    &ref);
			return;
		}
		break;
	case 3:		/* ref by index: exact */
		rc = ibk_gid_table_ref_get(t, i, &ref);
		if (rc == IBK_OK) {
			g = stress_step_at(ref.generation, gid_gen0);
			want_e = gid_entry(g, i);
			e.gid = ref.gid;
			e.type = ref.type;
			if (!gid_entry_eq(&e, &want_e))
				torn(st, "gid ref_get %u at step %u", i, g);
			check_fresh(st, &t->hdr, ref.generation, gid_fresh, t,
				    &ref);
			return;
		}
		break;
	default:	/* snapshot: exact */
		rc = ibk_gid_table_snapshot(t, GID_CAP, snap, &gen);
		if (rc == (int)GID_CAP) {
			g = stress_step_at(gen, gid_gen0);
			for (i = 0; i < GID_CAP; i++) {
				want_e = gid_entry(g, i);
				if (!gid_entry_eq(&snap[i], &want_e))
					break;
			}
			if (i < GID_CAP)
				torn(st, "gid snapshot step %u: entry %u", g, i);
			return;
		}
		break;
	}

	lo = stress_step_at(lo_count, gid_gen0);
	hi = stress_step_at(stress_count(&t->hdr.latch), gid_gen0);
	if (hi - lo > 64)
		st->wide++;
	for (g = hi; !ok; g--) {
		switch (op) {
		case 0:
			want_e = gid_entry(g, i);
			ok = ibk_gid_is_zero(&want_e.gid) ? rc == IBK_ENOENT :
			     rc == IBK_OK && gid_entry_eq(&e, &want_e);
			break;
		case 1:
			want = gid_model_find(g, &q, type, &want_ft);
			ok = rc == want && (rc < 0 || ft == want_ft);
			break;
		case 2:		/* ref_find refused: absent */
			ok = rc == IBK_ENOENT &&
			     gid_model_find(g, &q, type, &want_ft) == rc;
			break;
		case 3:		/* ref_get refused: the entry was empty */
			want_e = gid_entry(g, i);
			ok = rc == IBK_ENOENT && ibk_gid_is_zero(&want_e.gid);
			break;
		default:	/* a snapshot refused: never expected */
			ok = false;
			break;
		}
		if (g == lo)
			break;
	}
	if (!ok)
		torn(st, "gid op %u (index %u type %d): rc %d, no step in "
		     "%u..%u has that", op, i, type, rc, lo, hi);
}

static void *reader(void *arg)
{
	struct reader_stats *st = (struct reader_stats *)arg;

	while (st->reads < MIN_READS ||
	       atomic_load_explicit(&pk_steps, memory_order_relaxed) <
	       MIN_UPDATES ||
	       atomic_load_explicit(&gid_steps, memory_order_relaxed) <
	       MIN_UPDATES) {
		unsigned op = test_rng_below_r(&st->rng, 32);

		/* gets and finds most, snapshots and bursts least */
		if (op < 6)
			pk_op(st, 0);
		else if (op < 10)
			pk_op(st, 1);
		else if (op < 12)
			pk_op(st, 2);
		else if (op < 14)
			pk_op(st, 3);
		else if (op < 15)
			pk_op(st, 4);
		else if (op < 17)
			pk_op(st, 5);
		else if (op < 19)
			pk_op(st, 6);
		else if (op < 20)
			pk_op(st, 7);
		else if (op < 24)
			gid_op(st, 0);
		else if (op < 28)
			gid_op(st, 1);
		else if (op < 30)
			gid_op(st, 2);
		else if (op < 31)
			gid_op(st, 3);
		else
			gid_op(st, 4);
		stress_reader_progress(st->id, ++st->reads);
	}
	st->retries = tls_retries;
	atomic_fetch_sub(&readers_running, 1);
	return NULL;
}

static void test_torn_reads(void)
{
	struct reader_stats st[READERS];
	pthread_t rd[READERS], wr;
	unsigned long reads = 0, torn_reads = 0, retries = 0, wide = 0;
	uint32_t pk_end, gid_end;
	double t0, secs;
	int k;

	ibk_port_init(&port, pk_cells, PK_CAP, pk_slots,
		      IBK_PKEY_HASH_SLOTS(PK_CAP), gid_cells, GID_CAP, gid_slots,
		      IBK_HASH_SLOTS(GID_CAP));
	ibk_latch_init(&port.pkeys.hdr.latch, GEN_START);
	ibk_latch_init(&port.gids.hdr.latch, GEN_START + 0x100u);
	ibk_port_set_state(&port, IBK_PORT_ACTIVE);
	pk_publish(0);
	gid_publish(0);
	pk_gen0 = stress_count(&port.pkeys.hdr.latch);
	gid_gen0 = stress_count(&port.gids.hdr.latch);

	atomic_store(&readers_running, READERS);
	t0 = stress_now_seconds();
	for (k = 0; k < READERS; k++) {
		memset(&st[k], 0, sizeof(st[k]));
		st[k].id = k;
		st[k].rng = 0x853c49e6748fea9bull * (uint64_t)(k + 1);
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
		retries += st[k].retries;
		wide += st[k].wide;
	}
	pk_end = stress_count(&port.pkeys.hdr.latch);
	gid_end = stress_count(&port.gids.hdr.latch);
	tap_diag("reads %lu (%d readers), updates %lu P_Key + %lu GID "
		 "(refill 1 in %u, else one set), read retries %lu, "
		 "torn reads %lu, %.2f s", reads, READERS,
		 (unsigned long)atomic_load(&pk_steps),
		 (unsigned long)atomic_load(&gid_steps), REFILL_EVERY, retries,
		 torn_reads, secs);
	tap_diag("generations: P_Key 0x%08x -> 0x%08x, GID 0x%08x -> 0x%08x; "
		 "%lu reads overlapped more than 64 updates", pk_gen0, pk_end,
		 gid_gen0, gid_end, wide);
	tap_ok(torn_reads == 0, "no torn read: every get, find, rx verdict, "
	       "burst, ref and snapshot matches one published table");
	tap_ok(reads >= READERS * MIN_READS &&
	       atomic_load(&pk_steps) >= MIN_UPDATES &&
	       atomic_load(&gid_steps) >= MIN_UPDATES,
	       "at least %lu reads against at least %lu updates per table",
	       READERS * MIN_READS, MIN_UPDATES);
	tap_ok(pk_end < pk_gen0 && gid_end < gid_gen0,
	       "both generations wrapped past 2^32 during the run, refs "
	       "checked across it");
}

/* ------------------------------------------------------------------------
 * Refill tickets under concurrency. A subnet-manager thread changes the
 * "device" (a version number its P_Key table encodes) and raises
 * PKEY_CHANGE after each change; a consumer thread loops: ticket, read the
 * device, refill. Readers note the last version whose event was applied,
 * then read the table: a readable table must hold that version or a later
 * one. Without tickets, a refill of a device read made before an event,
 * published after it, serves the old version with IBK_OK.
 * ------------------------------------------------------------------------ */

#define TICKET_EVENTS	20000u		/* below 0x7fff: one version per base */
#define TICKET_READERS	1

static struct ibk_pkey_cell tk_pk_cells[IBK_PKEY_CELLS(2)];
static struct ibk_hash_slot tk_pk_slots[IBK_PKEY_HASH_SLOTS(2)];
static struct ibk_gid_cell tk_gid_cells[IBK_GID_CELLS(1)];
static struct ibk_hash_slot tk_gid_slots[IBK_HASH_SLOTS(1)];
static struct ibk_port tport;
static atomic_uint dev_version;		/* what the device holds now */
static atomic_uint events_applied;	/* last version whose event is in */
static atomic_int sm_done, consumer_done;
static atomic_uint attempts;		/* tickets the consumer has taken */

struct ticket_stats {
	uint64_t rng;			/* rng.h state */
	unsigned long reads, fresh_reads, old_reads, refused, published;
};

static struct ticket_stats sm_stats;	/* the SM's own reads */

static ibk_pkey_t version_key(unsigned v)
{
	return (ibk_pkey_t)(0x8000u | (v + 1));
}

static void *ticket_sm(void *arg)
{
	ibk_pkey_t k;
	unsigned v;

	(void)arg;
	for (v = 1; v <= TICKET_EVENTS; v++) {
		unsigned before = atomic_load(&attempts);

		atomic_store_explicit(&dev_version, v, memory_order_relaxed);
		ibk_port_event(&tport, IBK_EVENT_PKEY_CHANGE);
		atomic_store_explicit(&events_applied, v, memory_order_release);
		/* the next change once the consumer has taken a ticket for
		 * this one (or the table reads as refilled) */
		while (atomic_load(&attempts) == before &&
		       ibk_pkey_table_get(&tport.pkeys, 1, &k) == IBK_ESTALE)
			sched_yield();
		/* the SM reads too: it knows exactly which event is the last */
		if (ibk_pkey_table_get(&tport.pkeys, 1, &k) == IBK_OK) {
			sm_stats.fresh_reads++;
			if ((unsigned)(k & 0x7fffu) - 1 < v &&
			    sm_stats.old_reads++ < MAX_DIAG)
				tap_diag("ticket: SM read version %u after its "
					 "event %u", (k & 0x7fffu) - 1, v);
		}
	}
	atomic_store(&sm_done, 1);
	return NULL;
}

static void *ticket_consumer(void *arg)
{
	struct ticket_stats *st = (struct ticket_stats *)arg;
	ibk_pkey_t keys[2], k;
	unsigned spin, v;
	uint32_t ticket;
	int last, rc;

	for (;;) {
		last = atomic_load(&sm_done);
		/* as an event loop does: refill when the cache says so */
		if (ibk_pkey_table_get(&tport.pkeys, 1, &k) != IBK_ESTALE) {
			if (last)
				break;
			sched_yield();
			continue;
		}
		ticket = ibk_pkey_table_refill_ticket(&tport.pkeys);
		v = atomic_load_explicit(&dev_version, memory_order_relaxed);
		/* the device reads take a while (ibv_query_pkey() per entry);
		 * every other time the subnet manager's next change, and its
		 * event, come in while they run */
		if ((atomic_fetch_add(&attempts, 1) + 1) % 2 == 0)
			while (atomic_load(&events_applied) <= v &&
			       !atomic_load(&sm_done))
				sched_yield();
		for (spin = test_rng_below_r(&st->rng, 2000); spin; spin--)
			atomic_signal_fence(memory_order_seq_cst);
		keys[0] = IBK_PKEY_DEFAULT;
		keys[1] = version_key(v);
		rc = ibk_pkey_table_refill(&tport.pkeys, keys, 2, ticket);
		st->refused += rc == IBK_ESTALE;
		st->published += rc == IBK_OK;
	}
	atomic_store(&consumer_done, 1);
	return NULL;
}

static void *ticket_reader(void *arg)
{
	struct ticket_stats *st = (struct ticket_stats *)arg;

	while (!atomic_load(&consumer_done)) {
		unsigned e = atomic_load_explicit(&events_applied,
						  memory_order_acquire);
		ibk_pkey_t k = 0;
		int rc = ibk_pkey_table_get(&tport.pkeys, 1, &k);

		if (++st->reads % 16 == 0)
			sched_yield();
		if (rc != IBK_OK)
			continue;
		st->fresh_reads++;
		if ((unsigned)(k & 0x7fffu) - 1 < e) {
			if (st->old_reads++ < MAX_DIAG)
				tap_diag("ticket: read version %u after event "
					 "%u was applied", (k & 0x7fffu) - 1, e);
		}
	}
	return NULL;
}

static void test_tickets(void)
{
	struct ticket_stats cs, rs[TICKET_READERS];
	pthread_t sm, consumer, rd[TICKET_READERS];
	unsigned long reads = 0, fresh = 0, old = 0;
	ibk_pkey_t k = 0;
	int i, rc;

	memset(&cs, 0, sizeof(cs));
	memset(&sm_stats, 0, sizeof(sm_stats));
	cs.rng = 0x6a09e667f3bcc909ull;
	ibk_port_init(&tport, tk_pk_cells, 2, tk_pk_slots,
		      IBK_PKEY_HASH_SLOTS(2), tk_gid_cells, 1, tk_gid_slots,
		      IBK_HASH_SLOTS(1));
	ibk_port_set_state(&tport, IBK_PORT_ACTIVE);
	atomic_store(&dev_version, 0);
	atomic_store(&events_applied, 0);
	atomic_store(&attempts, 0);
	for (i = 0; i < TICKET_READERS; i++) {
		memset(&rs[i], 0, sizeof(rs[i]));
		pthread_create(&rd[i], NULL, ticket_reader, &rs[i]);
	}
	pthread_create(&consumer, NULL, ticket_consumer, &cs);
	pthread_create(&sm, NULL, ticket_sm, NULL);
	pthread_join(sm, NULL);
	pthread_join(consumer, NULL);
	for (i = 0; i < TICKET_READERS; i++) {
		pthread_join(rd[i], NULL);
		reads += rs[i].reads;
		fresh += rs[i].fresh_reads;
		old += rs[i].old_reads;
	}
	rc = ibk_pkey_table_get(&tport.pkeys, 1, &k);
	tap_diag("tickets: %u events, %lu refills published, %lu refused "
		 "(IBK_ESTALE), %lu reads of which %lu readable", TICKET_EVENTS,
		 cs.published, cs.refused, reads, fresh);
	/* the SM finds the table readable only when the consumer's refill
	 * beat its look: about half the time natively, 4 % to 20 % of the
	 * events under qemu-user's s390x (894 and 3914 of 20000 seen);
	 * 1 in 200 still proves its reads were checked */
	tap_ok(old == 0 && sm_stats.old_reads == 0 &&
	       sm_stats.fresh_reads > TICKET_EVENTS / 200 &&
	       cs.refused > TICKET_EVENTS / 4,
	       "refill tickets: no read was served a device read older than "
	       "an event applied before it (%lu of %lu readable reads by "
	       "readers, %lu of %lu by the SM after its own event; %lu "
	       "refills refused)", old, fresh, sm_stats.old_reads,
	       sm_stats.fresh_reads, cs.refused);
	tap_ok(rc == IBK_OK && k == version_key(TICKET_EVENTS),
	       "after the last event the table holds the device's last "
	       "version (rc %d, 0x%04x)", rc, k);
}

/* ------------------------------------------------------------------------
 * The latch on its own: two writers, one spinning and one trying, and a
 * reader, over two copies of a pair of words that must always read as
 * (n, 3n + 1).
 * ------------------------------------------------------------------------ */

#define PAIR_UPDATES	200000ul	/* per writer */

static struct ibk_latch pair_latch;
static struct {
	_Atomic uint32_t lo, hi;
} pair[2];
static atomic_int pair_writers, pair_go;

static void pair_store(unsigned c, uint32_t n)
{
	atomic_store_explicit(&pair[c].lo, n, memory_order_relaxed);
	atomic_store_explicit(&pair[c].hi, 3 * n + 1, memory_order_relaxed);
}

/* One update, in both copies, by the writer that began a write. */
static void pair_bump(void)
{
	uint32_t n = atomic_load_explicit(&pair[0].lo, memory_order_relaxed) + 1;

	pair_store(0, n);
	ibk_latch_write_switch(&pair_latch);
	pair_store(1, n);
	ibk_latch_write_end(&pair_latch);
}

static void *pair_spinner(void *arg)
{
	unsigned long i;

	(void)arg;
	while (!atomic_load(&pair_go))
		;
	for (i = 0; i < PAIR_UPDATES; i++) {
		ibk_latch_write_begin(&pair_latch);
		pair_bump();
	}
	atomic_fetch_sub(&pair_writers, 1);
	return NULL;
}

static void *pair_trier(void *arg)
{
	unsigned long *busy = (unsigned long *)arg, done = 0;

	while (!atomic_load(&pair_go))
		;
	while (done < PAIR_UPDATES) {
		if (ibk_latch_write_try_begin(&pair_latch) != IBK_OK) {
			++*busy;
			continue;
		}
		pair_bump();
		done++;
	}
	atomic_fetch_sub(&pair_writers, 1);
	return NULL;
}

static void test_latch_alone(void)
{
	pthread_t spin, try_;
	unsigned long busy = 0, reads = 0, torn_pairs = 0;
	uint32_t start, lo, hi, end;
	unsigned c;

	ibk_latch_init(&pair_latch, 0);
	for (c = 0; c < 2; c++) {
		atomic_store(&pair[c].lo, 0);
		atomic_store(&pair[c].hi, 1);
	}
	atomic_store(&pair_writers, 2);
	pthread_create(&spin, NULL, pair_spinner, NULL);
	pthread_create(&try_, NULL, pair_trier, &busy);
	atomic_store(&pair_go, 1);
	while (atomic_load(&pair_writers) > 0) {
		do {
			start = ibk_latch_read_begin(&pair_latch);
			c = ibk_latch_copy(start);
			lo = atomic_load_explicit(&pair[c].lo,
						  memory_order_relaxed);
			hi = atomic_load_explicit(&pair[c].hi,
						  memory_order_relaxed);
		} while (ibk_latch_read_retry(&pair_latch, start));
		torn_pairs += hi != 3 * lo + 1;
		reads++;
	}
	pthread_join(spin, NULL);
	pthread_join(try_, NULL);
	end = ibk_latch_read_begin(&pair_latch);
	tap_diag("latch alone: %lu pair reads, %lu torn, %lu IBK_EBUSY "
		 "from try-begin", reads, torn_pairs, busy);
	tap_ok(torn_pairs == 0, "latch alone: no reader saw a torn pair");
	/* init at 0 starts the count at 2: it never takes 0 */
	tap_ok(atomic_load(&pair[0].lo) == 2 * PAIR_UPDATES &&
	       atomic_load(&pair[1].lo) == 2 * PAIR_UPDATES &&
	       end == 2 + 4 * PAIR_UPDATES,
	       "latch alone: two writers, no lost update (%u of %lu), "
	       "count %u", atomic_load(&pair[0].lo), 2 * PAIR_UPDATES, end);
}

/* ------------------------------------------------------------------------
 * Retries are paid for by writer updates
 *
 * From the latch alone: a read section is redone only when the count it
 * began at differs from the one it ends at, so some flip (a move of the
 * count by one) landed inside that very attempt; attempts follow one
 * another, so each retry has a flip of its own, and a read's retries never
 * exceed the moves of the count between just before and just after it.
 * A writer's update is two moves, one per copy written, and completes at
 * the second (the count even again).
 *
 * Moves / 2, the updates completed during the read, is not a bound:
 * an attempt that began just before an update's first flip is redone
 * with no update completed yet, and a reader held up longer than the
 * writer takes to write one copy (preempted, or under a sanitizer) is
 * redone at both flips of the same update. A read retries at most once
 * per update only while its attempts are shorter than one copy's write
 * (ibk-bench's read_latency shows how often that holds). The test checks
 * the bound that always holds, for gets and finds, and shows the other.
 * A seqlock's rule (also retry while the count is odd) breaks it: a read
 * that begins during a write retries with no move at all.
 * ------------------------------------------------------------------------ */

#define RB_CAP		64u
#define RB_MIN_READS	200000ul
#define RB_MIN_RETRIED	100ul	/* reads that retried, to have tested */
#define RB_MAX_SECONDS	20.0

static struct ibk_pkey_cell rb_cells[IBK_PKEY_CELLS(RB_CAP)];
static struct ibk_hash_slot rb_slots[IBK_PKEY_HASH_SLOTS(RB_CAP)];
static struct ibk_pkey_table rb_table;
static atomic_int rb_stop;

/* Updates back to back: a refill every REFILL_EVERY steps, else one set. */
static void *rb_writer(void *arg)
{
	ibk_pkey_t keys[RB_CAP];
	uint32_t g, i;

	(void)arg;
	for (g = 1; !atomic_load_explicit(&rb_stop, memory_order_relaxed);
	     g++) {
		if (g % REFILL_EVERY) {
			i = pk_set_index(g);
			ibk_pkey_table_set(&rb_table, i, pk_value(g, i));
			continue;
		}
		for (i = 0; i < RB_CAP; i++)
			keys[i] = pk_value(g, i);
		ibk_pkey_table_refill(&rb_table, keys, RB_CAP,
				      ibk_pkey_table_refill_ticket(&rb_table));
	}
	return NULL;
}

struct rb_stats {
	unsigned long reads, retried, over_moves, over_updates;
	unsigned long max_retries;
};

/* One get or find, its retries against the count's moves around it. */
static void rb_read(struct rb_stats *st, uint64_t *rng)
{
	const struct ibk_latch *l = &rb_table.hdr.latch;
	uint32_t c0 = stress_count(l), moves, updates, i;
	unsigned long r0 = tls_retries, retries;
	ibk_pkey_t pkey;

	i = test_rng_below_r(rng, RB_CAP);
	if (test_rng_below_r(rng, 2))
		ibk_pkey_table_get(&rb_table, i, &pkey);
	else
		ibk_pkey_table_find(&rb_table,
				    pk_value(test_rng_below_r(rng, 1023), i),
				    NULL);
	moves = stress_count_moved(stress_count(l), c0);
	retries = tls_retries - r0;
	updates = (moves + (c0 & 1u)) / 2;	/* flips to an even count */
	st->reads++;
	st->retried += retries != 0;
	st->max_retries = retries > st->max_retries ? retries :
			  st->max_retries;
	if (retries > moves && st->over_moves++ < MAX_DIAG)
		tap_diag("read %lu retried %lu times, count moved %u",
			 st->reads, retries, moves);
	st->over_updates += retries > updates;
}

static void test_retry_bound(void)
{
	struct rb_stats st = { 0 };
	uint64_t rng = 0x2545f4914f6cdd1dull;
	double t0 = stress_now_seconds(), secs = 0;
	pthread_t wr;

	ibk_pkey_table_init(&rb_table, rb_cells, RB_CAP, rb_slots,
			    IBK_PKEY_HASH_SLOTS(RB_CAP));
	ibk_latch_init(&rb_table.hdr.latch, GEN_START);
	ibk_pkey_table_set_state(&rb_table, IBK_PORT_ACTIVE);
	atomic_store(&rb_stop, 0);
	pthread_create(&wr, NULL, rb_writer, NULL);
	while ((st.reads < RB_MIN_READS || st.retried < RB_MIN_RETRIED) &&
	       secs < RB_MAX_SECONDS) {
		rb_read(&st, &rng);
		if (st.reads % 1024 == 0)
			secs = stress_now_seconds() - t0;
	}
	atomic_store(&rb_stop, 1);
	pthread_join(wr, NULL);
	tap_diag("retry bound: %lu reads, %lu retried, at most %lu retries "
		 "in one read; %lu retried more often than updates completed "
		 "during them (not a bound, see above), %.2f s", st.reads,
		 st.retried, st.max_retries, st.over_updates, secs);
	tap_ok(st.over_moves == 0 && st.retried >= RB_MIN_RETRIED,
	       "retry bound: no read's retries exceed the count's moves "
	       "during it (%lu did, over %lu retried reads)", st.over_moves,
	       st.retried);
}

/* ------------------------------------------------------------------------
 * Saturating counters under concurrent increments
 * ------------------------------------------------------------------------ */

#define COUNT_THREADS 4

static struct ibk_counter16 shared_counter;
static unsigned long per_thread;

static void *incrementer(void *arg)
{
	unsigned long i;

	(void)arg;
	for (i = 0; i < per_thread; i++) {
		if (i % 16 == 15)
			ibk_counter16_add(&shared_counter, 3);
		else
			ibk_counter16_inc(&shared_counter);
	}
	return NULL;
}

/* @n increments (some as adds of 3) from each of COUNT_THREADS threads. */
static unsigned long run_incrementers(unsigned long n)
{
	pthread_t th[COUNT_THREADS];
	int k;

	ibk_counter16_reset(&shared_counter);
	per_thread = n;
	for (k = 0; k < COUNT_THREADS; k++)
		pthread_create(&th[k], NULL, incrementer, NULL);
	for (k = 0; k < COUNT_THREADS; k++)
		pthread_join(th[k], NULL);
	return COUNT_THREADS * (n + 2 * (n / 16));
}

static void test_counters(void)
{
	unsigned long total;
	uint16_t got;

	total = run_incrementers(10000);
	got = ibk_counter16_read(&shared_counter);
	tap_ok(got == total, "%d threads, %lu counts below the limit: exactly "
	       "%lu (%u)", COUNT_THREADS, total, total, got);
	total = run_incrementers(50000);
	got = ibk_counter16_read(&shared_counter);
	tap_ok(got == 0xffff, "%d threads, %lu counts: saturated at exactly "
	       "0xffff (0x%04x)", COUNT_THREADS, total, got);
	tap_ok(ibk_counter16_reset(&shared_counter) == 0xffff &&
	       ibk_counter16_read(&shared_counter) == 0,
	       "reset after saturation returns 0xffff, reads 0");
}

int main(void)
{
	test_torn_reads();
	test_tickets();
	test_latch_alone();
	test_retry_bound();
	test_counters();
	return tap_done();
}
