/* SPDX-License-Identifier: MIT */
/*
 * test_tables.c - single-threaded semantics of ib_tables.h, against the
 * rules and independent models:
 *
 *  - the latch protocol (which copy readers use, retry, writer exclusion);
 *  - IBK_HASH_SLOTS() against a doubling loop for every capacity;
 *  - P_Key find by value and exact find against linear-scan models of
 *    "compare bases, prefer full, lowest index" on thousands of random
 *    tables with duplicates and both memberships, capacities 1, 2, 3, 128
 *    and 65536, through refills and random single-entry sets;
 *  - GID find (any type, one type) against a linear scan, same way;
 *  - port states, events, the "awaiting refill" window, every error code;
 *  - references going stale after each kind of change, and only then;
 *  - snapshots, the generation across the 32-bit wrap;
 *  - saturating counters;
 *  - the receive checks: QP1 against the membership rule over all 65536
 *    packet P_Keys, QP-index checks, port gating, counting, bursts.
 *
 * Fixed seed, so a failure reproduces; the first mismatches of each check
 * are printed as TAP diagnostics.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ib_tables.h"
#include "rng.h"
#include "tap.h"

#define SEED		0x2545f4914f6cdd1dull
#define MAX_CAP		65536u
#define MAX_DIAG	5

/* ---- storage: one port as big as the largest table under test ---- */

static struct ibk_pkey_cell pk_cells[IBK_PKEY_CELLS(MAX_CAP)];
static struct ibk_hash_slot pk_slots[IBK_HASH_SLOTS(MAX_CAP)];
static struct ibk_gid_cell gid_cells[IBK_GID_CELLS(MAX_CAP)];
static struct ibk_hash_slot gid_slots[IBK_HASH_SLOTS(MAX_CAP)];
static struct ibk_port port;

static ibk_pkey_t model_pk[MAX_CAP];
static struct ibk_gid_entry model_gid[MAX_CAP];

/* Counts the failures of one check and prints the first few. */
struct check {
	unsigned long done;
	unsigned long bad;
};

static void check(struct check *c, bool ok, const char *fmt, ...)
{
	va_list ap;

	c->done++;
	if (ok)
		return;
	if (c->bad++ < MAX_DIAG) {
		fputs("# ", stdout);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		putchar('\n');
	}
}

static bool pkey_base_nonzero(unsigned k)
{
	return (k & 0x7fffu) != 0;
}

/* Port with capacities (pk_cap, gid_cap), ACTIVE, tables empty. */
static void port_setup(uint32_t pk_cap, uint32_t gid_cap, uint32_t slot_mult)
{
	int rc = ibk_port_init(&port, pk_cells, pk_cap, pk_slots,
			       slot_mult * IBK_PKEY_HASH_SLOTS(pk_cap),
			       gid_cells, gid_cap, gid_slots,
			       slot_mult * IBK_HASH_SLOTS(gid_cap));

	if (rc != IBK_OK || ibk_port_set_state(&port, IBK_PORT_ACTIVE) != IBK_OK)
		tap_diag("port_setup(%u, %u) failed: %d", pk_cap, gid_cap, rc);
}

/* ------------------------------------------------------------------------
 * Latch
 * ------------------------------------------------------------------------ */

static void test_latch(void)
{
	struct ibk_latch l;
	uint32_t s, mid;

	ibk_latch_init(&l, 7);
	s = ibk_latch_read_begin(&l);
	tap_ok(s == 6 && ibk_latch_copy(s) == 0,
	       "latch: init rounds an odd start down to even, readers on copy 0");
	tap_ok(!ibk_latch_read_retry(&l, s), "latch: no writer, no retry");

	tap_ok(ibk_latch_write_try_begin(&l) == IBK_OK,
	       "latch: try-begin on an idle latch takes it");
	mid = ibk_latch_read_begin(&l);
	tap_ok(mid == 7 && ibk_latch_copy(mid) == 1,
	       "latch: a writer's begin moves readers to copy 1 at once");
	tap_ok(ibk_latch_write_try_begin(&l) == IBK_EBUSY &&
	       ibk_latch_read_begin(&l) == 7,
	       "latch: a second writer gets IBK_EBUSY and moves nothing");
	tap_ok(ibk_latch_read_retry(&l, s),
	       "latch: a reader of copy 0 overlapping the writer's begin retries");
	tap_ok(!ibk_latch_read_retry(&l, mid),
	       "latch: a reader of copy 1 inside the write section completes");
	ibk_latch_write_switch(&l);
	s = ibk_latch_read_begin(&l);
	tap_ok(s == 8 && ibk_latch_copy(s) == 0 &&
	       ibk_latch_read_retry(&l, mid),
	       "latch: switch moves readers back to copy 0; a reader of copy 1 "
	       "across it retries");
	tap_ok(ibk_latch_write_try_begin(&l) == IBK_EBUSY,
	       "latch: the lock word is held until write_end");
	ibk_latch_write_end(&l);
	tap_ok(!ibk_latch_read_retry(&l, s) && ibk_latch_read_begin(&l) == 8,
	       "latch: write_end moves no reader; one update adds 2");
	ibk_latch_write_begin(&l);
	ibk_latch_write_switch(&l);
	ibk_latch_write_end(&l);
	tap_ok(ibk_latch_read_begin(&l) == 10,
	       "latch: the spinning begin takes an idle latch at once");

	ibk_latch_init(&l, 0xfffffffeu);
	ibk_latch_write_begin(&l);
	tap_ok(ibk_latch_copy(ibk_latch_read_begin(&l)) == 1,
	       "latch: 0xffffffff names copy 1");
	ibk_latch_write_switch(&l);
	ibk_latch_write_end(&l);
	tap_ok(ibk_latch_read_begin(&l) == 0,
	       "latch: 0xfffffffe + one update wraps to 0, copy 0");
}

/* ------------------------------------------------------------------------
 * Storage sizing
 * ------------------------------------------------------------------------ */

static void test_sizing(void)
{
	static struct ibk_hash_slot sized[IBK_HASH_SLOTS(100)];
	static struct ibk_hash_slot pk_sized[IBK_PKEY_HASH_SLOTS(40000)];
	static struct ibk_pkey_cell pk_c[IBK_PKEY_CELLS(100)];
	static struct ibk_gid_cell gid_c[IBK_GID_CELLS(100)];
	struct check c = { 0, 0 };
	uint32_t cap, want;

	for (cap = 1; cap <= MAX_CAP; cap++) {
		for (want = 1; want < 4 * cap; want *= 2)
			;
		check(&c, IBK_HASH_SLOTS(cap) == 2 * want,
		      "IBK_HASH_SLOTS(%u) = %u, want 2 x %u", cap,
		      IBK_HASH_SLOTS(cap), want);
		want = want < 65536 ? want : 65536;
		check(&c, IBK_PKEY_HASH_SLOTS(cap) == 2 * want,
		      "IBK_PKEY_HASH_SLOTS(%u) = %u, want 2 x %u", cap,
		      IBK_PKEY_HASH_SLOTS(cap), want);
		check(&c, IBK_HASH_SLOTS_MIN(cap) == IBK_HASH_SLOTS(cap) / 2 &&
		      IBK_PKEY_HASH_SLOTS_MIN(cap) == (cap > 16384 ? 131072u :
		      IBK_PKEY_HASH_SLOTS(cap) / 2),
		      "IBK_*HASH_SLOTS_MIN(%u) = %u, %u", cap,
		      IBK_HASH_SLOTS_MIN(cap), IBK_PKEY_HASH_SLOTS_MIN(cap));
		check(&c, IBK_PKEY_CELLS(cap) == 2 * cap &&
		      IBK_GID_CELLS(cap) == 2 * cap,
		      "IBK_*_CELLS(%u) != 2 x %u", cap, cap);
	}
	tap_ok(c.bad == 0, "for both latch copies: IBK_HASH_SLOTS(c) is twice "
	       "the least power of two >= 4c, IBK_PKEY_HASH_SLOTS(c) twice "
	       "that but at most 65536, the _MIN counts half those (P_Key: "
	       "65536 per copy from c > 16384 on), the cells 2c, "
	       "c = 1..65536 (%lu checked)", c.done);
	tap_ok(IBK_HASH_SLOTS(MAX_CAP + 1) == 0 &&
	       IBK_PKEY_HASH_SLOTS(MAX_CAP + 1) == 0,
	       "the sizes above capacity 65536 are 0");
	tap_ok(sizeof(sized) / sizeof(sized[0]) == 1024 &&
	       sizeof(pk_sized) / sizeof(pk_sized[0]) == 131072 &&
	       sizeof(pk_c) / sizeof(pk_c[0]) == 200 &&
	       sizeof(gid_c) / sizeof(gid_c[0]) == 200,
	       "the sizes are constant expressions (arrays of 1024, 131072, "
	       "200, 200)");
	tap_diag("index bytes per entry, both copies: P_Key %.2f at capacity "
		 "128, %.2f at 65, %.2f at 65536; GID %.2f at 128, %.2f at 65",
		 4.0 * IBK_PKEY_HASH_SLOTS(128) / 128,
		 4.0 * IBK_PKEY_HASH_SLOTS(65) / 65,
		 4.0 * IBK_PKEY_HASH_SLOTS(65536) / 65536,
		 4.0 * IBK_HASH_SLOTS(128) / 128, 4.0 * IBK_HASH_SLOTS(65) / 65);
}

/* ------------------------------------------------------------------------
 * P_Key table: find against linear-scan models
 * ------------------------------------------------------------------------ */

/* "compare bases, prefer a full-member entry, lowest index among equals" */
static int model_pkey_find(uint32_t cap, unsigned key)
{
	int best = -1;
	uint32_t i;

	if (!pkey_base_nonzero(key))
		return IBK_EINVAL;
	for (i = 0; i < cap; i++) {
		unsigned e = model_pk[i];

		if (!pkey_base_nonzero(e) || (e & 0x7fffu) != (key & 0x7fffu))
			continue;
		if (best < 0 || ((e & 0x8000u) && !(model_pk[best] & 0x8000u)))
			best = (int)i;
	}
	return best < 0 ? IBK_ENOENT : best;
}

static int model_pkey_find_exact(uint32_t cap, unsigned key)
{
	uint32_t i;

	if (!pkey_base_nonzero(key))
		return IBK_EINVAL;
	for (i = 0; i < cap; i++)
		if (model_pk[i] == key)
			return (int)i;
	return IBK_ENOENT;
}

/* The partitions random tables draw from: consecutive runs (how subnet
 * managers number them) or scattered over all 15 bits (long probe runs). */
static uint16_t base_pool[MAX_CAP];

static void base_pool_fill(uint32_t n)
{
	uint32_t i, start = 1 + test_rng_below(0x7000);
	bool scattered = test_rng64() & 1;

	for (i = 0; i < n; i++) {
		uint32_t b = scattered ? test_rng_below(0x8000) : start + i;

		base_pool[i] = (uint16_t)((b & 0x7fffu) ? b & 0x7fffu : 1u);
	}
}

/* A random entry from the first @nbases pool partitions (duplicates
 * likely), either membership, and sometimes one of the two invalid keys. */
static ibk_pkey_t rnd_pkey_entry(uint32_t nbases)
{
	uint32_t r = test_rng_below(16);

	if (r == 0)
		return 0x0000;
	if (r == 1)
		return 0x8000;
	return (ibk_pkey_t)(base_pool[test_rng_below(nbases)] |
			    (test_rng64() & 1 ? 0x8000u : 0));
}

/* Every find and exact find of @key against the models. */
static void check_pkey_key(struct check *c, uint32_t cap, unsigned key)
{
	ibk_pkey_t found = 0;
	int want = model_pkey_find(cap, key);
	int got = ibk_pkey_table_find(&port.pkeys, (ibk_pkey_t)key, &found);

	check(c, got == want && (got < 0 || found == model_pk[got]),
	      "cap %u find(0x%04x) = %d (0x%04x), model %d", cap, key, got,
	      found, want);
	want = model_pkey_find_exact(cap, key);
	got = ibk_pkey_table_find_exact(&port.pkeys, (ibk_pkey_t)key);
	check(c, got == want, "cap %u find_exact(0x%04x) = %d, model %d", cap,
	      key, got, want);
}

/* Keys worth asking: each entry's key in both memberships, both invalid
 * keys, and a random absent one. */
static void check_pkey_all(struct check *c, uint32_t cap)
{
	uint32_t i;

	for (i = 0; i < cap; i++) {
		check_pkey_key(c, cap, model_pk[i]);
		check_pkey_key(c, cap, model_pk[i] ^ 0x8000u);
	}
	check_pkey_key(c, cap, 0x0000);
	check_pkey_key(c, cap, 0x8000);
	check_pkey_key(c, cap, (unsigned)test_rng64() & 0xffffu);
}

static void test_pkey_find_model(uint32_t cap, unsigned tables,
				 unsigned sets, unsigned slot_mult)
{
	struct check c = { 0, 0 };
	unsigned t, s;
	uint32_t i, n, nbases;

	port_setup(cap, 1, slot_mult);
	for (t = 0; t < tables; t++) {
		/* few partitions for many entries: lots of duplicates */
		nbases = 1 + test_rng_below(cap / 2 + 2);
		base_pool_fill(nbases);
		n = test_rng_below(cap + 1);
		for (i = 0; i < cap; i++)
			model_pk[i] = i < n ? rnd_pkey_entry(nbases) : 0;
		check(&c, ibk_pkey_table_refill(&port.pkeys, model_pk, n, ibk_pkey_table_refill_ticket(&port.pkeys)) ==
			  IBK_OK, "refill cap %u n %u failed", cap, n);
		if (cap <= 128)
			check_pkey_all(&c, cap);
		for (s = 0; s < sets; s++) {
			unsigned old;

			i = test_rng_below(cap);
			old = model_pk[i];
			model_pk[i] = rnd_pkey_entry(nbases);
			check(&c, ibk_pkey_table_set(&port.pkeys, i,
						     model_pk[i]) == IBK_OK,
			      "set failed");
			check_pkey_key(&c, cap, old);
			check_pkey_key(&c, cap, old ^ 0x8000u);
			check_pkey_key(&c, cap, model_pk[i]);
			check_pkey_key(&c, cap, model_pk[i] ^ 0x8000u);
			if (cap <= 128 && s % 16 == 0)
				check_pkey_all(&c, cap);
		}
	}
	tap_ok(c.bad == 0, "P_Key find and find_exact match the linear-scan "
	       "models: capacity %u, %u tables x %u sets, %ux slots "
	       "(%lu checks)", cap, tables, sets, slot_mult, c.done);
}

/* A full 65536-entry table: every one of the 65536 keys, exhaustively,
 * against a direct-addressed model built in one ascending pass. */
static void test_pkey_find_exhaustive(void)
{
	static int first_full[0x8000], first_limited[0x8000];
	static int first_exact[0x10000];
	struct check c = { 0, 0 };
	uint32_t i, k;

	port_setup(MAX_CAP, 1, 1);
	base_pool_fill(20000);
	for (i = 0; i < MAX_CAP; i++)
		model_pk[i] = rnd_pkey_entry(20000);
	ibk_pkey_table_refill(&port.pkeys, model_pk, MAX_CAP, ibk_pkey_table_refill_ticket(&port.pkeys));
	for (k = 0; k < 0x10000; k++) {
		first_exact[k] = -1;
		if (k < 0x8000)
			first_full[k] = first_limited[k] = -1;
	}
	for (i = 0; i < MAX_CAP; i++) {
		unsigned e = model_pk[i], b = e & 0x7fffu;

		if (!b)
			continue;
		if (first_exact[e] < 0)
			first_exact[e] = (int)i;
		if ((e & 0x8000u) && first_full[b] < 0)
			first_full[b] = (int)i;
		if (!(e & 0x8000u) && first_limited[b] < 0)
			first_limited[b] = (int)i;
	}
	for (k = 0; k < 0x10000; k++) {
		unsigned b = k & 0x7fffu;
		int want = !b ? IBK_EINVAL : first_full[b] >= 0 ? first_full[b] :
			   first_limited[b] >= 0 ? first_limited[b] : IBK_ENOENT;
		int got = ibk_pkey_table_find(&port.pkeys, (ibk_pkey_t)k, NULL);

		check(&c, got == want, "find(0x%04x) = %d, want %d", k, got,
		      want);
		want = !b ? IBK_EINVAL : first_exact[k] >= 0 ? first_exact[k] :
		       IBK_ENOENT;
		got = ibk_pkey_table_find_exact(&port.pkeys, (ibk_pkey_t)k);
		check(&c, got == want, "find_exact(0x%04x) = %d, want %d", k,
		      got, want);
	}
	tap_ok(c.bad == 0, "65536-entry table: find and find_exact of all "
	       "65536 keys match a direct-addressed model (%lu checks)",
	       c.done);
	for (k = 0; k < 300; k++)
		check_pkey_key(&c, MAX_CAP, (unsigned)test_rng64() & 0xffffu);
	tap_ok(c.bad == 0, "65536-entry table: 300 random keys match the "
	       "linear scan");
}

/* ------------------------------------------------------------------------
 * P_Key table: get, states, errors, snapshot, references
 * ------------------------------------------------------------------------ */

static void test_pkey_basics(void)
{
	static const ibk_pkey_t keys[] = { 0xffff, 0x8001, 0x0002, 0x0000,
					   0x8000, 0x0001, 0x8001 };
	struct ibk_pkey_table *t = &port.pkeys;
	ibk_pkey_t v = 0, snap[8];
	uint32_t gen = 1;
	int rc;

	tap_ok(ibk_port_init(&port, pk_cells, 8, pk_slots,
			     IBK_PKEY_HASH_SLOTS(8), gid_cells, 4, gid_slots,
			     IBK_HASH_SLOTS(4)) == IBK_OK,
	       "port_init with exactly the slots the sizing macros give");
	tap_ok(ibk_pkey_table_get(t, 0, &v) == IBK_ENOTREADY &&
	       ibk_pkey_table_find(t, 0xffff, NULL) == IBK_ENOTREADY,
	       "a new table is DOWN: reads return IBK_ENOTREADY");
	tap_ok(ibk_pkey_table_refill(t, keys, 7, ibk_pkey_table_refill_ticket(t)) == IBK_OK,
	       "refill 7 keys into capacity 8");
	tap_ok(ibk_pkey_table_set_state(t, IBK_PORT_INIT) == IBK_OK &&
	       ibk_pkey_table_get(t, 0, &v) == IBK_ENOTREADY,
	       "INIT: reads refused with IBK_ENOTREADY");
	tap_ok(ibk_pkey_table_set_state(t, IBK_PORT_ARMED) == IBK_OK &&
	       ibk_pkey_table_get(t, 0, &v) == IBK_OK && v == 0xffff,
	       "ARMED: reads allowed (get 0 = 0xffff)");
	tap_ok(ibk_pkey_table_set_state(t, IBK_PORT_ACTIVE) == IBK_OK &&
	       ibk_pkey_table_get(t, 1, &v) == IBK_OK && v == 0x8001,
	       "ACTIVE: reads allowed (get 1 = 0x8001)");
	tap_ok(ibk_pkey_table_set_state(t, (enum ibk_port_state)0) ==
	       IBK_EINVAL &&
	       ibk_pkey_table_set_state(t, (enum ibk_port_state)5) ==
	       IBK_EINVAL, "set_state outside DOWN..ACTIVE is IBK_EINVAL");
	tap_ok(ibk_pkey_table_get(t, 3, &v) == IBK_ENOENT &&
	       ibk_pkey_table_get(t, 4, &v) == IBK_ENOENT &&
	       ibk_pkey_table_get(t, 7, &v) == IBK_ENOENT,
	       "get of 0x0000, 0x8000 and a slot past the refill: IBK_ENOENT");
	tap_ok(ibk_pkey_table_get(t, 8, &v) == IBK_ERANGE &&
	       ibk_pkey_table_get(t, 0xffffffffu, &v) == IBK_ERANGE,
	       "get at index >= capacity: IBK_ERANGE");
	tap_ok(ibk_pkey_table_find(t, 0x0001, &v) == 1 && v == 0x8001,
	       "find(0x0001) prefers full 0x8001 at 1 over limited at 5");
	tap_ok(ibk_pkey_table_find(t, 0x8002, &v) == 2 && v == 0x0002,
	       "find(0x8002) falls back to limited 0x0002");
	tap_ok(ibk_pkey_table_find_exact(t, 0x0001) == 5 &&
	       ibk_pkey_table_find_exact(t, 0x8002) == IBK_ENOENT,
	       "find_exact compares all 16 bits");
	tap_ok(ibk_pkey_table_find(t, 0x0000, NULL) == IBK_EINVAL &&
	       ibk_pkey_table_find(t, 0x8000, NULL) == IBK_EINVAL &&
	       ibk_pkey_table_find_exact(t, 0x8000) == IBK_EINVAL,
	       "an invalid key is never found: IBK_EINVAL");
	tap_ok(ibk_pkey_table_find(t, 0x0003, NULL) == IBK_ENOENT,
	       "an absent partition: IBK_ENOENT");

	/* bad arguments */
	tap_ok(ibk_pkey_table_get(NULL, 0, &v) == IBK_EINVAL &&
	       ibk_pkey_table_get(t, 0, NULL) == IBK_EINVAL &&
	       ibk_pkey_table_find(NULL, 1, NULL) == IBK_EINVAL &&
	       ibk_pkey_table_find_exact(NULL, 1) == IBK_EINVAL &&
	       ibk_pkey_table_ref_get(t, 0, NULL) == IBK_EINVAL &&
	       ibk_pkey_table_ref_find(t, 1, NULL) == IBK_EINVAL &&
	       ibk_pkey_table_snapshot(t, NULL, 8, NULL) == IBK_EINVAL &&
	       ibk_pkey_table_refill(NULL, keys, 1, 0) == IBK_EINVAL &&
	       ibk_pkey_table_refill(t, NULL, 1, ibk_pkey_table_refill_ticket(t)) == IBK_EINVAL &&
	       ibk_pkey_table_set(NULL, 0, 1) == IBK_EINVAL &&
	       ibk_pkey_table_set_state(NULL, IBK_PORT_ACTIVE) == IBK_EINVAL &&
	       ibk_pkey_table_invalidate(NULL) == IBK_EINVAL,
	       "NULL arguments: IBK_EINVAL");
	tap_ok(ibk_pkey_table_refill(t, keys, 9, ibk_pkey_table_refill_ticket(t)) == IBK_ENOSPC,
	       "refill of more entries than the capacity: IBK_ENOSPC");
	tap_ok(ibk_pkey_table_get(t, 1, &v) == IBK_OK && v == 0x8001,
	       "a refused refill leaves the table alone");
	tap_ok(ibk_pkey_table_set(t, 8, 0xffff) == IBK_ERANGE,
	       "set at index >= capacity: IBK_ERANGE");

	/* snapshot */
	rc = ibk_pkey_table_snapshot(t, snap, 7, &gen);
	tap_ok(rc == IBK_ERANGE, "snapshot into fewer than capacity: IBK_ERANGE");
	rc = ibk_pkey_table_snapshot(t, snap, 8, &gen);
	tap_ok(rc == 8 && memcmp(snap, keys, sizeof(keys)) == 0 &&
	       snap[7] == 0 && gen % 2 == 0,
	       "snapshot copies the refill plus an empty tail, even generation");
	tap_ok(ibk_pkey_table_refill(t, NULL, 0, ibk_pkey_table_refill_ticket(t)) == IBK_OK &&
	       ibk_pkey_table_snapshot(t, snap, 8, NULL) == 8 &&
	       snap[0] == 0 && snap[7] == 0 &&
	       ibk_pkey_table_find(t, 0xffff, NULL) == IBK_ENOENT,
	       "refill with 0 entries empties the table and its index");

	/* init errors */
	tap_ok(ibk_pkey_table_init(NULL, pk_cells, 8, pk_slots, 32) ==
	       IBK_EINVAL &&
	       ibk_pkey_table_init(t, NULL, 8, pk_slots, 32) == IBK_EINVAL &&
	       ibk_pkey_table_init(t, pk_cells, 8, NULL, 32) == IBK_EINVAL,
	       "init with a NULL pointer: IBK_EINVAL");
	tap_ok(ibk_pkey_table_init(t, pk_cells, 0, pk_slots, 32) == IBK_ERANGE &&
	       ibk_pkey_table_init(t, pk_cells, MAX_CAP + 1, pk_slots,
				   0xffffffffu) == IBK_ERANGE &&
	       ibk_pkey_table_init(t, pk_cells, 8, pk_slots,
				   IBK_PKEY_HASH_SLOTS_MIN(8) - 1) == IBK_ERANGE &&
	       ibk_pkey_table_init(t, pk_cells, 20000, pk_slots, 131071) ==
	       IBK_ERANGE,
	       "init with capacity 0, 65537 or too few slots: IBK_ERANGE");
	tap_ok(ibk_pkey_table_init(t, pk_cells, 20000, pk_slots, 131072) ==
	       IBK_OK, "a P_Key table of 20000 needs only 2 x 65536 slots");
}

/* Which changes make a reference stale, and which leave it fresh. */
static void test_pkey_refs(void)
{
	static const ibk_pkey_t keys[] = { 0xffff, 0x8001, 0x0002 };
	struct ibk_pkey_table *t = &port.pkeys;
	struct ibk_pkey_ref r, r2;
	ibk_pkey_t snap[4];
	uint32_t gen = 0;

	port_setup(4, 4, 1);
	ibk_pkey_table_refill(t, keys, 3, ibk_pkey_table_refill_ticket(t));
	tap_ok(ibk_pkey_table_ref_get(t, 1, &r) == IBK_OK && r.index == 1 &&
	       r.pkey == 0x8001 && ibk_pkey_table_ref_fresh(t, &r),
	       "ref_get: {1, 0x8001}, fresh");
	ibk_pkey_table_snapshot(t, snap, 4, &gen);
	tap_ok(gen == r.generation,
	       "a ref's generation is the snapshot generation of that table");
	tap_ok(ibk_pkey_table_ref_find(t, 0x0002, &r2) == IBK_OK &&
	       r2.index == 2 && r2.pkey == 0x0002 &&
	       ibk_pkey_table_ref_find(t, 0x0003, &r2) == IBK_ENOENT &&
	       ibk_pkey_table_ref_find(t, 0x8000, &r2) == IBK_EINVAL,
	       "ref_find: finds as find does, same errors");

	ibk_pkey_table_set(t, 3, 0x0005);
	tap_ok(!ibk_pkey_table_ref_fresh(t, &r),
	       "stale after a set of another entry");
	ibk_pkey_table_ref_get(t, 1, &r);
	ibk_pkey_table_set(t, 1, 0x8001);
	tap_ok(!ibk_pkey_table_ref_fresh(t, &r),
	       "stale after a set that rewrites the same value");
	ibk_pkey_table_ref_get(t, 1, &r);
	ibk_pkey_table_refill(t, keys, 3, ibk_pkey_table_refill_ticket(t));
	tap_ok(!ibk_pkey_table_ref_fresh(t, &r), "stale after a refill");
	ibk_pkey_table_ref_get(t, 1, &r);
	ibk_pkey_table_set_state(t, IBK_PORT_ACTIVE);
	tap_ok(!ibk_pkey_table_ref_fresh(t, &r), "stale after a state change");
	ibk_pkey_table_ref_get(t, 1, &r);
	ibk_pkey_table_invalidate(t);
	tap_ok(!ibk_pkey_table_ref_fresh(t, &r), "stale after invalidate");
	ibk_pkey_table_refill(t, keys, 3, ibk_pkey_table_refill_ticket(t));
	ibk_pkey_table_ref_get(t, 1, &r);
	ibk_gid_table_set_state(&port.gids, IBK_PORT_ARMED);
	ibk_port_event(&port, IBK_EVENT_GID_CHANGE);
	tap_ok(ibk_pkey_table_ref_fresh(t, &r),
	       "fresh after GID-table changes and GID_CHANGE");
	ibk_pkey_table_get(t, 0, &snap[0]);
	ibk_pkey_table_find(t, 0xffff, NULL);
	ibk_pkey_table_snapshot(t, snap, 4, NULL);
	tap_ok(ibk_pkey_table_ref_fresh(t, &r), "fresh after reads");
}

/* ------------------------------------------------------------------------
 * GID table
 * ------------------------------------------------------------------------ */

static struct ibk_gid gid_pool[512];

static void gid_pool_fill(unsigned n)
{
	unsigned i, k;

	for (i = 0; i < n; i++) {
		switch (test_rng_below(3)) {
		case 0:		/* IB: default prefix, a GUID */
			gid_pool[i] = ibk_gid_make(IBK_GID_DEFAULT_PREFIX,
						   test_rng64());
			break;
		case 1:		/* RoCE v2 for an IPv4 address */
			gid_pool[i] = ibk_gid_from_ipv4((uint32_t)test_rng64());
			break;
		default:	/* anything non-zero */
			for (k = 0; k < 16; k++)
				gid_pool[i].raw[k] = (uint8_t)test_rng64();
			gid_pool[i].raw[0] |= 1;
			break;
		}
	}
	/* near neighbours: differ from another pool GID in one bit */
	for (i = 1; i < n; i += 7) {
		gid_pool[i] = gid_pool[i - 1];
		gid_pool[i].raw[test_rng_below(16)] ^=
			(uint8_t)(1u << test_rng_below(8));
		if (ibk_gid_is_zero(&gid_pool[i]))
			gid_pool[i].raw[15] = 1;
	}
}

static struct ibk_gid_entry rnd_gid_entry(unsigned pool)
{
	struct ibk_gid_entry e;

	memset(&e, 0, sizeof(e));
	e.type = (enum ibk_gid_type)test_rng_below(3);
	if (test_rng_below(10) != 0)
		e.gid = gid_pool[test_rng_below(pool)];
	return e;
}

static bool gid_eq(const struct ibk_gid *a, const struct ibk_gid *b)
{
	return memcmp(a->raw, b->raw, 16) == 0;
}

static bool gid_zero(const struct ibk_gid *g)
{
	static const struct ibk_gid zero = { { 0 } };

	return gid_eq(g, &zero);
}

static int model_gid_find(uint32_t cap, const struct ibk_gid *g, int type)
{
	uint32_t i;

	if (gid_zero(g))
		return IBK_EINVAL;
	for (i = 0; i < cap; i++)
		if (gid_eq(&model_gid[i].gid, g) &&
		    (type < 0 || (int)model_gid[i].type == type))
			return (int)i;
	return IBK_ENOENT;
}

static void check_gid_key(struct check *c, uint32_t cap,
			  const struct ibk_gid *g)
{
	enum ibk_gid_type ft = (enum ibk_gid_type)-2;
	int type, want, got;

	for (type = -1; type <= 2; type++) {
		want = model_gid_find(cap, g, type);
		got = ibk_gid_table_find(&port.gids, g, (enum ibk_gid_type)type,
					 &ft);
		check(c, got == want &&
			 (got < 0 || ft == model_gid[got].type),
		      "cap %u gid find type %d = %d (type %d), model %d", cap,
		      type, got, (int)ft, want);
	}
}

static void test_gid_find_model(uint32_t cap, unsigned tables, unsigned sets,
				unsigned queries, unsigned slot_mult)
{
	struct check c = { 0, 0 };
	unsigned t, s, q, pool;
	uint32_t i, n;

	port_setup(1, cap, slot_mult);
	for (t = 0; t < tables; t++) {
		pool = 1 + test_rng_below(cap < 511 ? cap / 2 + 1 : 511);
		gid_pool_fill(pool);
		n = test_rng_below(cap + 1);
		for (i = 0; i < cap; i++) {
			if (i < n) {
				model_gid[i] = rnd_gid_entry(pool);
			} else {
				memset(&model_gid[i], 0, sizeof(model_gid[i]));
				model_gid[i].type = IBK_GID_TYPE_IB;
			}
		}
		check(&c, ibk_gid_table_refill(&port.gids, model_gid, n, ibk_gid_table_refill_ticket(&port.gids)) ==
			  IBK_OK, "gid refill failed");
		for (q = 0; q < pool && q < queries; q++)
			check_gid_key(&c, cap, &gid_pool[q]);
		for (s = 0; s < sets; s++) {
			struct ibk_gid_entry old;

			i = test_rng_below(cap);
			old = model_gid[i];
			model_gid[i] = rnd_gid_entry(pool);
			check(&c, ibk_gid_table_set(&port.gids, i,
						    &model_gid[i].gid,
						    model_gid[i].type) == IBK_OK,
			      "gid set failed");
			if (gid_zero(&model_gid[i].gid))
				model_gid[i].type = IBK_GID_TYPE_IB;
			if (!gid_zero(&old.gid))
				check_gid_key(&c, cap, &old.gid);
			if (!gid_zero(&model_gid[i].gid))
				check_gid_key(&c, cap, &model_gid[i].gid);
			if (cap <= 256 && s % 16 == 0)
				for (q = 0; q < pool; q++)
					check_gid_key(&c, cap, &gid_pool[q]);
		}
	}
	tap_ok(c.bad == 0, "GID find (any type and each type) matches the "
	       "linear-scan model: capacity %u, %u tables x %u sets, %ux slots "
	       "(%lu checks)", cap, tables, sets, slot_mult, c.done);
}

static void test_gid_basics(void)
{
	struct ibk_gid_table *t = &port.gids;
	struct ibk_gid_entry e[4], out, snap[4];
	struct ibk_gid a = ibk_gid_make(IBK_GID_DEFAULT_PREFIX,
					0x0002c90300012345ull);
	struct ibk_gid b = ibk_gid_from_ipv4(0xc0a80001u);
	struct ibk_gid zero;
	struct ibk_gid_ref r;
	enum ibk_gid_type ft = (enum ibk_gid_type)-2;
	uint32_t gen = 1;

	memset(&zero, 0, sizeof(zero));
	memset(e, 0, sizeof(e));
	port_setup(1, 4, 1);
	e[0].gid = a; e[0].type = IBK_GID_TYPE_ROCE_V1;
	e[1].gid = a; e[1].type = IBK_GID_TYPE_ROCE_V2;
	e[2].gid = b; e[2].type = IBK_GID_TYPE_ROCE_V2;
	e[3].gid = zero; e[3].type = (enum ibk_gid_type)7;
	tap_ok(ibk_gid_table_refill(t, e, 4, ibk_gid_table_refill_ticket(t)) == IBK_OK,
	       "gid refill: a zero GID's type is ignored");
	tap_ok(ibk_gid_table_get(t, 1, &out) == IBK_OK && gid_eq(&out.gid, &a) &&
	       out.type == IBK_GID_TYPE_ROCE_V2, "gid get returns GID and type");
	tap_ok(ibk_gid_table_get(t, 3, &out) == IBK_ENOENT &&
	       ibk_gid_table_get(t, 4, &out) == IBK_ERANGE,
	       "gid get: all-zero GID IBK_ENOENT, index >= capacity IBK_ERANGE");
	tap_ok(ibk_gid_table_find(t, &a, IBK_GID_TYPE_ANY, &ft) == 0 &&
	       ft == IBK_GID_TYPE_ROCE_V1 &&
	       ibk_gid_table_find(t, &a, IBK_GID_TYPE_ROCE_V2, &ft) == 1 &&
	       ibk_gid_table_find(t, &a, IBK_GID_TYPE_IB, NULL) == IBK_ENOENT,
	       "gid find: any type gives the lowest index; by type its own");
	tap_ok(ibk_gid_table_find(t, &zero, IBK_GID_TYPE_ANY, NULL) ==
	       IBK_EINVAL &&
	       ibk_gid_table_find(t, &a, (enum ibk_gid_type)3, NULL) ==
	       IBK_EINVAL &&
	       ibk_gid_table_find(t, NULL, IBK_GID_TYPE_ANY, NULL) == IBK_EINVAL,
	       "gid find: zero GID, bad type, NULL: IBK_EINVAL");
	e[0].type = (enum ibk_gid_type)3;
	tap_ok(ibk_gid_table_refill(t, e, 4, ibk_gid_table_refill_ticket(t)) == IBK_EINVAL &&
	       ibk_gid_table_find(t, &a, IBK_GID_TYPE_ANY, NULL) == 0,
	       "gid refill with a bad type: IBK_EINVAL, table unchanged");
	tap_ok(ibk_gid_table_set(t, 0, &a, (enum ibk_gid_type)3) == IBK_EINVAL &&
	       ibk_gid_table_set(t, 4, &a, IBK_GID_TYPE_IB) == IBK_ERANGE &&
	       ibk_gid_table_set(t, 0, NULL, IBK_GID_TYPE_IB) == IBK_EINVAL &&
	       ibk_gid_table_refill(t, e, 5, ibk_gid_table_refill_ticket(t)) == IBK_ENOSPC,
	       "gid set: bad type IBK_EINVAL, index IBK_ERANGE; "
	       "refill IBK_ENOSPC");
	tap_ok(ibk_gid_table_set(t, 0, &zero, (enum ibk_gid_type)9) == IBK_OK &&
	       ibk_gid_table_get(t, 0, &out) == IBK_ENOENT &&
	       ibk_gid_table_find(t, &a, IBK_GID_TYPE_ANY, &ft) == 1 &&
	       ft == IBK_GID_TYPE_ROCE_V2,
	       "gid set of the zero GID empties the slot; find moves on to 1");
	tap_ok(ibk_gid_table_snapshot(t, snap, 3, &gen) == IBK_ERANGE &&
	       ibk_gid_table_snapshot(t, snap, 4, &gen) == 4 &&
	       gid_zero(&snap[0].gid) && snap[0].type == IBK_GID_TYPE_IB &&
	       gid_eq(&snap[2].gid, &b) && snap[2].type == IBK_GID_TYPE_ROCE_V2,
	       "gid snapshot: every entry, empty ones zero with type IB");
	tap_ok(ibk_gid_table_ref_find(t, &b, IBK_GID_TYPE_ANY, &r) == IBK_OK &&
	       r.index == 2 && r.type == IBK_GID_TYPE_ROCE_V2 &&
	       gid_eq(&r.gid, &b) && r.generation == gen &&
	       ibk_gid_table_ref_fresh(t, &r),
	       "gid ref_find: index, type, GID, generation of the snapshot");
	ibk_gid_table_set(t, 3, &a, IBK_GID_TYPE_IB);
	tap_ok(!ibk_gid_table_ref_fresh(t, &r), "gid ref stale after a set");
	ibk_gid_table_ref_get(t, 2, &r);
	ibk_port_event(&port, IBK_EVENT_PKEY_CHANGE);
	ibk_pkey_table_set(&port.pkeys, 0, 0xffff);
	tap_ok(ibk_gid_table_ref_fresh(t, &r),
	       "gid ref fresh after PKEY_CHANGE and P_Key-table changes");
	tap_ok(ibk_gid_table_init(t, NULL, 4, gid_slots, 32) == IBK_EINVAL &&
	       ibk_gid_table_init(t, gid_cells, 4, gid_slots, 15) ==
	       IBK_ERANGE,
	       "gid init: NULL IBK_EINVAL, too few slots IBK_ERANGE");
}

/* ------------------------------------------------------------------------
 * Events and port state
 * ------------------------------------------------------------------------ */

struct event_case {
	enum ibk_port_event event;
	const char *name;
	int pkey_read;		/* what a P_Key read returns after it */
	int gid_read;
};

static void test_events(void)
{
	static const struct event_case cases[] = {
		{ IBK_EVENT_PKEY_CHANGE, "PKEY_CHANGE", IBK_ESTALE, IBK_OK },
		{ IBK_EVENT_GID_CHANGE, "GID_CHANGE", IBK_OK, IBK_ESTALE },
		{ IBK_EVENT_PORT_ERR, "PORT_ERR", IBK_ENOTREADY, IBK_ENOTREADY },
		{ IBK_EVENT_DEVICE_FATAL, "DEVICE_FATAL", IBK_ENOTREADY,
		  IBK_ENOTREADY },
		{ IBK_EVENT_PORT_ACTIVE, "PORT_ACTIVE", IBK_ESTALE, IBK_ESTALE },
		{ IBK_EVENT_LID_CHANGE, "LID_CHANGE", IBK_ESTALE, IBK_ESTALE },
		{ IBK_EVENT_SM_CHANGE, "SM_CHANGE", IBK_ESTALE, IBK_ESTALE },
		{ IBK_EVENT_CLIENT_REREGISTER, "CLIENT_REREGISTER", IBK_ESTALE,
		  IBK_ESTALE },
	};
	static const ibk_pkey_t keys[] = { 0xffff, 0x8001 };
	struct ibk_gid_entry ge;
	struct ibk_pkey_ref pr;
	struct ibk_gid_ref gr;
	ibk_pkey_t v;
	size_t i;

	memset(&ge, 0, sizeof(ge));
	memset(&pr, 0, sizeof(pr));
	memset(&gr, 0, sizeof(gr));
	ge.gid = ibk_gid_make(IBK_GID_DEFAULT_PREFIX, 1);
	tap_ok(IBK_EVENT_PORT_ACTIVE == 9 && IBK_EVENT_PKEY_CHANGE == 12 &&
	       IBK_EVENT_CLIENT_REREGISTER == 17 && IBK_EVENT_GID_CHANGE == 18 &&
	       IBK_PORT_DOWN == 1 && IBK_PORT_ACTIVE == 4,
	       "events and states are numbered as ibv_event_type/ibv_port_state");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct event_case *c = &cases[i];
		int pk, gd, pk_after, gd_after;

		port_setup(2, 2, 1);
		ibk_pkey_table_refill(&port.pkeys, keys, 2, ibk_pkey_table_refill_ticket(&port.pkeys));
		ibk_gid_table_refill(&port.gids, &ge, 1, ibk_gid_table_refill_ticket(&port.gids));
		ibk_pkey_table_ref_get(&port.pkeys, 0, &pr);
		ibk_gid_table_ref_get(&port.gids, 0, &gr);
		tap_ok(ibk_port_event(&port, c->event) == IBK_OK,
		       "%s accepted", c->name);
		pk = ibk_pkey_table_get(&port.pkeys, 0, &v);
		gd = ibk_gid_table_find(&port.gids, &ge.gid, IBK_GID_TYPE_ANY,
					NULL);
		tap_ok(pk == c->pkey_read && gd == c->gid_read,
		       "%s: P_Key reads %d, GID reads %d (want %d, %d)",
		       c->name, pk, gd, c->pkey_read, c->gid_read);
		tap_ok(ibk_pkey_table_ref_fresh(&port.pkeys, &pr) ==
		       (c->pkey_read == IBK_OK) &&
		       ibk_gid_table_ref_fresh(&port.gids, &gr) ==
		       (c->gid_read == IBK_OK),
		       "%s: references stale exactly in the affected tables",
		       c->name);
		ibk_pkey_table_refill(&port.pkeys, keys, 2, ibk_pkey_table_refill_ticket(&port.pkeys));
		ibk_gid_table_refill(&port.gids, &ge, 1, ibk_gid_table_refill_ticket(&port.gids));
		pk_after = ibk_pkey_table_get(&port.pkeys, 0, &v);
		gd_after = ibk_gid_table_find(&port.gids, &ge.gid,
					      IBK_GID_TYPE_ANY, NULL);
		if (c->pkey_read == IBK_ENOTREADY)
			tap_ok(pk_after == IBK_ENOTREADY &&
			       gd_after == IBK_ENOTREADY,
			       "%s: a refill does not bring a DOWN port back",
			       c->name);
		else
			tap_ok(pk_after == IBK_OK && gd_after == 0,
			       "%s: the refill ends the stale window", c->name);
	}
	port_setup(2, 2, 1);
	tap_ok(ibk_port_event(&port, (enum ibk_port_event)0) == IBK_EINVAL &&
	       ibk_port_event(&port, (enum ibk_port_event)14) == IBK_EINVAL &&
	       ibk_port_event(NULL, IBK_EVENT_PORT_ERR) == IBK_EINVAL,
	       "events outside the enum and a NULL port: IBK_EINVAL");
	tap_ok(ibk_pkey_table_invalidate(&port.pkeys) == IBK_OK &&
	       ibk_pkey_table_set(&port.pkeys, 0, 0xffff) == IBK_OK &&
	       ibk_pkey_table_get(&port.pkeys, 0, &v) == IBK_ESTALE,
	       "a single-entry set does not end the awaiting-refill window");
	tap_ok(ibk_port_set_state(&port, IBK_PORT_DOWN) == IBK_OK &&
	       ibk_pkey_table_get(&port.pkeys, 0, &v) == IBK_ENOTREADY,
	       "IBK_ENOTREADY takes precedence over IBK_ESTALE");
	tap_ok(ibk_port_set_state(&port, (enum ibk_port_state)9) == IBK_EINVAL &&
	       ibk_port_set_state(NULL, IBK_PORT_ACTIVE) == IBK_EINVAL,
	       "port_set_state: bad state or NULL: IBK_EINVAL");
}

/* ------------------------------------------------------------------------
 * Generation wrap
 * ------------------------------------------------------------------------ */

static void test_wrap(void)
{
	static const ibk_pkey_t keys[] = { 0xffff };
	struct ibk_pkey_table *t = &port.pkeys;
	struct ibk_pkey_ref r[6];
	struct check c = { 0, 0 };
	int i, j;

	port_setup(1, 1, 1);
	ibk_latch_init(&t->hdr.latch, 0xfffffff8u);
	ibk_pkey_table_set_state(t, IBK_PORT_ACTIVE);	/* 0xfffffffa */
	ibk_pkey_table_refill(t, keys, 1, ibk_pkey_table_refill_ticket(t));		/* 0xfffffffc */
	for (i = 0; i < 6; i++) {
		ibk_pkey_table_ref_get(t, 0, &r[i]);
		check(&c, ibk_pkey_table_ref_fresh(t, &r[i]),
		      "ref %d not fresh at 0x%08x", i, r[i].generation);
		for (j = 0; j < i; j++)
			check(&c, !ibk_pkey_table_ref_fresh(t, &r[j]),
			      "ref %d (0x%08x) fresh at step %d", j,
			      r[j].generation, i);
		ibk_pkey_table_set(t, 0, 0xffff);
	}
	tap_ok(c.bad == 0 && r[0].generation == 0xfffffffcu &&
	       r[2].generation == 0 && r[5].generation == 6,
	       "across the 32-bit wrap refs go stale and fresh ones stay fresh "
	       "(0x%08x .. 0x%08x)", r[0].generation, r[5].generation);
}

/* ------------------------------------------------------------------------
 * Counters
 * ------------------------------------------------------------------------ */

static void test_counters(void)
{
	struct ibk_counter16 c;
	unsigned i;

	ibk_counter16_reset(&c);
	for (i = 0; i < 0xfffe; i++)
		ibk_counter16_inc(&c);
	tap_ok(ibk_counter16_read(&c) == 0xfffe, "counter counts to 0xfffe");
	ibk_counter16_inc(&c);
	ibk_counter16_inc(&c);
	ibk_counter16_add(&c, 1000);
	tap_ok(ibk_counter16_read(&c) == 0xffff,
	       "counter saturates at 0xffff (16-bit PortInfo counters)");
	tap_ok(ibk_counter16_reset(&c) == 0xffff && ibk_counter16_read(&c) == 0,
	       "reset returns 0xffff and zeroes");
	ibk_counter16_add(&c, 0xffffffffu);
	ibk_counter16_add(&c, 0xffffffffu);
	tap_ok(ibk_counter16_read(&c) == 0xffff,
	       "huge adds saturate and do not wrap");
	ibk_counter16_reset(&c);
	ibk_counter16_add(&c, 5);
	tap_ok(ibk_counter16_reset(&c) == 5, "reset returns the count (5)");
}

/* ------------------------------------------------------------------------
 * Receive checks
 * ------------------------------------------------------------------------ */

#define HDR_LEN (IBK_BTH_LEN + IBK_DETH_LEN)

static void make_hdr(uint8_t *hdr, unsigned pkey, uint32_t qkey)
{
	memset(hdr, 0, HDR_LEN);
	ibk_bth_set_opcode(hdr, IBK_OPCODE_UD_SEND_ONLY);
	ibk_bth_set_pkey(hdr, (ibk_pkey_t)pkey);
	ibk_deth_set_qkey(hdr + IBK_BTH_LEN, qkey);
}

/* IBA 10.9: equal non-zero bases, at least one side full. */
static bool model_pkey_match(unsigned a, unsigned b)
{
	return pkey_base_nonzero(a) && (a & 0x7fffu) == (b & 0x7fffu) &&
	       ((a | b) & 0x8000u);
}

/* QP1: some valid entry of the table admits the packet's P_Key. */
static enum ibk_rx_verdict model_gsi(uint32_t cap, unsigned pkt, uint32_t qkey)
{
	uint32_t i;

	for (i = 0; i < cap; i++)
		if (model_pkey_match(pkt, model_pk[i]))
			return qkey == 0x80010000u ? IBK_RX_ACCEPT :
			       IBK_RX_DROP_QKEY;
	return IBK_RX_DROP_PKEY;
}

static enum ibk_rx_verdict model_qp(uint32_t cap,
				    const struct ibk_qp_keys *qp,
				    unsigned pkt, uint32_t qkey)
{
	if (qp->type == IBK_QPT_SMI)
		return IBK_RX_ACCEPT;
	if (qp->type == IBK_QPT_GSI)
		return model_gsi(cap, pkt, qkey);
	if (qp->pkey_index >= cap || !pkey_base_nonzero(model_pk[qp->pkey_index]))
		return IBK_RX_DROP_PKEY_INDEX;
	if (!model_pkey_match(pkt, model_pk[qp->pkey_index]))
		return IBK_RX_DROP_PKEY;
	if (qp->type == IBK_QPT_UD && qkey != qp->qkey)
		return IBK_RX_DROP_QKEY;
	return IBK_RX_ACCEPT;
}

static void test_rx_gsi_exhaustive(void)
{
	struct check c = { 0, 0 };
	unsigned long pkey_drops = 0, qkey_drops = 0;
	uint8_t hdr[HDR_LEN];
	uint32_t i, cap = 64;
	unsigned pkt, q;

	port_setup(cap, 1, 1);
	base_pool_fill(48);
	for (i = 0; i < cap; i++)
		model_pk[i] = rnd_pkey_entry(48);
	model_pk[0] = 0xffff;
	ibk_pkey_table_refill(&port.pkeys, model_pk, cap, ibk_pkey_table_refill_ticket(&port.pkeys));
	for (pkt = 0; pkt < 0x10000; pkt++) {
		for (q = 0; q < 2; q++) {
			uint32_t qkey = q ? 0x80010001u : IBK_QKEY_GSI;
			enum ibk_rx_verdict want = model_gsi(cap, pkt, qkey);
			enum ibk_rx_verdict got;

			make_hdr(hdr, pkt, qkey);
			got = ibk_port_rx_gsi(&port, hdr, hdr + IBK_BTH_LEN, NULL);
			check(&c, got == want, "QP1 pkt 0x%04x qkey 0x%08x: %s, "
			      "want %s", pkt, qkey, ibk_rx_verdict_name(got),
			      ibk_rx_verdict_name(want));
			pkey_drops += want == IBK_RX_DROP_PKEY;
			qkey_drops += want == IBK_RX_DROP_QKEY;
			if (pkey_drops == 0xfff0 || qkey_drops == 0xfff0) {
				check(&c, ibk_counter16_reset(
					  &port.pkey_violations) == pkey_drops &&
					  ibk_counter16_reset(
					  &port.qkey_violations) == qkey_drops,
				      "QP1 violation counters");
				pkey_drops = qkey_drops = 0;
			}
		}
	}
	check(&c, ibk_counter16_read(&port.pkey_violations) == pkey_drops &&
		  ibk_counter16_read(&port.qkey_violations) == qkey_drops,
	      "QP1 violation counters at the end");
	tap_ok(c.bad == 0, "QP1: all 65536 packet P_Keys x 2 Q_Keys against "
	       "the membership rule over a 64-entry table, counters exact "
	       "(%lu checks)", c.done);
}

static void test_rx_qp(void)
{
	static const ibk_pkey_t keys[] = { 0xffff, 0x8001, 0x0002, 0x0000,
					   0x7fff };
	struct check c = { 0, 0 };
	struct ibk_qp_keys qp;
	uint8_t hdr[HDR_LEN];
	uint32_t cap = 5;
	unsigned pkt, idx;
	int type;

	port_setup(cap, 1, 1);
	memcpy(model_pk, keys, sizeof(keys));
	ibk_pkey_table_refill(&port.pkeys, keys, cap, ibk_pkey_table_refill_ticket(&port.pkeys));
	memset(&qp, 0, sizeof(qp));
	qp.qkey = 0x11111111u;
	qp.pkey = 0xffff;	/* must not be used: the table decides */
	for (type = IBK_QPT_SMI; type <= IBK_QPT_UD; type++) {
		qp.type = (enum ibk_qp_type)type;
		for (idx = 0; idx < 7; idx++) {
			qp.pkey_index = (uint16_t)idx;
			for (pkt = 0; pkt < 0x10000; pkt += 1 + test_rng_below(7)) {
				uint32_t qkey = test_rng64() & 1 ? qp.qkey :
						IBK_QKEY_GSI;
				enum ibk_rx_verdict want, got;

				make_hdr(hdr, pkt, qkey);
				want = model_qp(cap, &qp, pkt, qkey);
				got = ibk_port_rx(&port, &qp, hdr,
						  type == IBK_QPT_RC ||
						  type == IBK_QPT_UC ? NULL :
						  hdr + IBK_BTH_LEN);
				check(&c, got == want, "type %d idx %u pkt "
				      "0x%04x: %s, want %s", type, idx, pkt,
				      ibk_rx_verdict_name(got),
				      ibk_rx_verdict_name(want));
			}
		}
	}
	tap_ok(c.bad == 0, "port rx for SMI/GSI/RC/UC/UD against the model: "
	       "P_Key from the entry at pkey_index, empty or out-of-range "
	       "index, UD Q_Key (%lu checks)", c.done);

	ibk_counter16_reset(&port.pkey_violations);
	ibk_counter16_reset(&port.qkey_violations);
	qp.type = IBK_QPT_UD;
	qp.pkey_index = 3;
	make_hdr(hdr, 0xffff, qp.qkey);
	tap_ok(ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN) ==
	       IBK_RX_DROP_PKEY_INDEX &&
	       ibk_counter16_read(&port.pkey_violations) == 0,
	       "DROP_PKEY_INDEX is not counted as a violation");
	qp.pkey_index = 1;
	make_hdr(hdr, 0x0002, qp.qkey);
	ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN);
	make_hdr(hdr, 0x0001, qp.qkey + 1);
	ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN);
	ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN);
	tap_ok(ibk_counter16_read(&port.pkey_violations) == 1 &&
	       ibk_counter16_read(&port.qkey_violations) == 2,
	       "UD drops are counted: 1 P_Key, 2 Q_Key violations");

	ibk_port_event(&port, IBK_EVENT_PKEY_CHANGE);
	make_hdr(hdr, 0x8001, qp.qkey);
	tap_ok(ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN) ==
	       IBK_RX_DROP_PORT &&
	       ibk_port_rx_gsi(&port, hdr, hdr + IBK_BTH_LEN, NULL) ==
	       IBK_RX_DROP_PORT,
	       "awaiting refill: UD and QP1 get DROP_PORT");
	ibk_port_set_state(&port, IBK_PORT_DOWN);
	qp.type = IBK_QPT_SMI;
	tap_ok(ibk_port_rx(&port, &qp, hdr, NULL) == IBK_RX_ACCEPT,
	       "port DOWN: QP0 still accepts (SMPs bring the port up)");
	qp.type = IBK_QPT_GSI;
	tap_ok(ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN) ==
	       IBK_RX_DROP_PORT &&
	       ibk_counter16_read(&port.pkey_violations) == 1 &&
	       ibk_counter16_read(&port.qkey_violations) == 2,
	       "port DOWN: QP1 gets DROP_PORT, not counted");
	tap_ok(ibk_port_rx(&port, &qp, NULL, NULL) == IBK_RX_DROP_MALFORMED &&
	       ibk_port_rx(&port, &qp, hdr, NULL) == IBK_RX_DROP_MALFORMED,
	       "NULL headers: DROP_MALFORMED");
}

static void test_rx_burst(void)
{
	static uint8_t hdrs[64][HDR_LEN];
	const void *ptrs[64];
	uint8_t verdicts[64];
	struct check c = { 0, 0 };
	struct ibk_qp_keys qp;
	uint32_t i, cap = 16, round;

	port_setup(cap, 1, 1);
	base_pool_fill(6);
	for (i = 0; i < cap; i++)
		model_pk[i] = rnd_pkey_entry(6);
	ibk_pkey_table_refill(&port.pkeys, model_pk, cap, ibk_pkey_table_refill_ticket(&port.pkeys));
	for (i = 0; i < 64; i++)
		ptrs[i] = hdrs[i];
	memset(&qp, 0, sizeof(qp));
	for (round = 0; round < 4000; round++) {
		size_t n = test_rng_below(65), got, want_acc = 0;
		unsigned long want_pk = 0, want_qk = 0;
		uint16_t pk0, qk0;

		qp.type = (enum ibk_qp_type)test_rng_below(5);
		qp.pkey_index = (uint16_t)test_rng_below(cap + 2);
		qp.qkey = test_rng64() & 1 ? 0x11111111u : IBK_QKEY_GSI;
		ibk_counter16_reset(&port.pkey_violations);
		ibk_counter16_reset(&port.qkey_violations);
		for (i = 0; i < n; i++) {
			unsigned pkt = test_rng64() & 1 ?
				       model_pk[test_rng_below(cap)] ^
				       (unsigned)(test_rng64() & 0x8000u) :
				       (unsigned)test_rng64() & 0xffffu;

			make_hdr(hdrs[i], pkt, test_rng64() & 1 ? 0x11111111u :
				 IBK_QKEY_GSI);
		}
		got = ibk_port_rx_burst(&port, &qp, ptrs, verdicts, n);
		for (i = 0; i < n; i++) {
			enum ibk_rx_verdict want = model_qp(cap, &qp,
				ibk_bth_pkey(hdrs[i]),
				ibk_deth_qkey(hdrs[i] + IBK_BTH_LEN));

			check(&c, verdicts[i] == want, "burst type %d idx %u "
			      "pkt %u: %s, want %s", qp.type, qp.pkey_index, i,
			      ibk_rx_verdict_name((enum ibk_rx_verdict)
						  verdicts[i]),
			      ibk_rx_verdict_name(want));
			want_acc += want == IBK_RX_ACCEPT;
			want_pk += want == IBK_RX_DROP_PKEY;
			want_qk += want == IBK_RX_DROP_QKEY;
		}
		pk0 = ibk_counter16_read(&port.pkey_violations);
		qk0 = ibk_counter16_read(&port.qkey_violations);
		check(&c, got == want_acc && pk0 == want_pk && qk0 == want_qk,
		      "burst of %zu: %zu accepted (want %zu), counters %u/%u "
		      "(want %lu/%lu)", n, got, want_acc, pk0, qk0, want_pk,
		      want_qk);
	}
	tap_ok(c.bad == 0, "rx burst: verdicts, accepted count and counters "
	       "match the model for 4000 random bursts of every QP type "
	       "(%lu checks)", c.done);

	ibk_port_set_state(&port, IBK_PORT_INIT);
	qp.type = IBK_QPT_UD;
	qp.pkey_index = 0;
	memset(verdicts, 0xee, sizeof(verdicts));
	tap_ok(ibk_port_rx_burst(&port, &qp, ptrs, verdicts, 64) == 0 &&
	       verdicts[0] == IBK_RX_DROP_PORT &&
	       verdicts[63] == IBK_RX_DROP_PORT,
	       "burst while INIT: all DROP_PORT, none accepted");
	qp.type = IBK_QPT_SMI;
	tap_ok(ibk_port_rx_burst(&port, &qp, ptrs, verdicts, 64) == 64 &&
	       verdicts[0] == IBK_RX_ACCEPT && verdicts[63] == IBK_RX_ACCEPT,
	       "QP0 burst while INIT: all accepted");
}

int main(void)
{
	test_rng_seed(SEED);
	tap_diag("seed 0x%016" PRIx64, (uint64_t)SEED);
	test_latch();
	test_sizing();
	test_pkey_basics();
	test_pkey_refs();
	test_pkey_find_model(1, 3000, 4, 1);
	test_pkey_find_model(2, 3000, 4, 1);
	test_pkey_find_model(3, 3000, 8, 1);
	test_pkey_find_model(3, 500, 8, 4);
	test_pkey_find_model(128, 1000, 64, 1);
	test_pkey_find_model(128, 200, 64, 8);
	test_pkey_find_model(128, 200, 64, 128);	/* 65536: direct */
	test_pkey_find_model(20000, 4, 300, 1);		/* 65536: direct */
	test_pkey_find_model(MAX_CAP, 3, 150, 1);
	test_pkey_find_exhaustive();
	test_gid_basics();
	test_gid_find_model(1, 2000, 4, 8, 1);
	test_gid_find_model(2, 2000, 4, 8, 1);
	test_gid_find_model(3, 2000, 8, 8, 1);
	test_gid_find_model(256, 300, 64, 512, 1);
	test_gid_find_model(256, 100, 64, 512, 4);
	test_gid_find_model(MAX_CAP, 2, 100, 512, 1);
	test_events();
	test_wrap();
	test_counters();
	test_rx_gsi_exhaustive();
	test_rx_qp();
	test_rx_burst();
	return tap_done();
}
