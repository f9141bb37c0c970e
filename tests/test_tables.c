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
 *    and 65536, through refills and random single-entry sets; and on
 *    tables of a few partitions (long chains of duplicates) through sets,
 *    SubnSet blocks and refills, capacities 16 to 65536;
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
#include <stdlib.h>
#include <string.h>

#include "ib_tables.h"
#include "port_model.h"
#include "rng.h"
#include "tap.h"

#define SEED		0x2545f4914f6cdd1dull
#define MAX_CAP		65536u

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
	if (ok || c->bad++ >= TAP_MAX_DIAG)
		return;
	va_start(ap, fmt);
	tap_vdiag(fmt, ap);
	va_end(ap);
}

static bool pkey_base_nonzero(unsigned k)
{
	return (k & 0x7fffu) != 0;
}

/*
 * Refills as a single-threaded consumer makes them: the ticket taken right
 * before (its device reads), so no change event comes in between.
 */
static int pk_refill(struct ibk_pkey_table *t, const ibk_pkey_t *keys,
		     uint32_t n)
{
	return ibk_pkey_table_refill(t, keys, n,
				     ibk_pkey_table_refill_ticket(t));
}

static int gid_refill(struct ibk_gid_table *t, const struct ibk_gid_entry *e,
		      uint32_t n)
{
	return ibk_gid_table_refill(t, e, n, ibk_gid_table_refill_ticket(t));
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
	tap_ok(ibk_latch_read_begin(&l) == 2,
	       "latch: 0xfffffffe + one update wraps to 2, copy 0: the count "
	       "skips 0 (IBK_GENERATION_NEVER) and 1");
	ibk_latch_init(&l, 0);
	s = ibk_latch_read_begin(&l);
	ibk_latch_init(&l, 1);
	tap_ok(s == 2 && ibk_latch_read_begin(&l) == 2 &&
	       IBK_GENERATION_NEVER == 0,
	       "latch: init at 0 or 1 starts at 2, never at IBK_GENERATION_NEVER");
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
		check(&c, IBK_PKEY_CELLS(cap) == 6 * cap &&
		      IBK_GID_CELLS(cap) == 2 * cap,
		      "IBK_PKEY_CELLS(%u) != 6 x %u or IBK_GID_CELLS != 2 x",
		      cap, cap);
	}
	tap_ok(c.bad == 0, "for both latch copies: IBK_HASH_SLOTS(c) is twice "
	       "the least power of two >= 4c, IBK_PKEY_HASH_SLOTS(c) twice "
	       "that but at most 65536, the _MIN counts half those (P_Key: "
	       "65536 per copy from c > 16384 on), the cells 6c (P_Key: key "
	       "and two chain links) and 2c (GID), c = 1..65536 (%lu "
	       "checked)", c.done);
	tap_ok(IBK_HASH_SLOTS(MAX_CAP + 1) == 0 &&
	       IBK_PKEY_HASH_SLOTS(MAX_CAP + 1) == 0,
	       "the sizes above capacity 65536 are 0");
	tap_ok(sizeof(sized) / sizeof(sized[0]) == 1024 &&
	       sizeof(pk_sized) / sizeof(pk_sized[0]) == 131072 &&
	       sizeof(pk_c) / sizeof(pk_c[0]) == 600 &&
	       sizeof(gid_c) / sizeof(gid_c[0]) == 200,
	       "the sizes are constant expressions (arrays of 1024, 131072, "
	       "600, 200)");
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
		check(&c, pk_refill(&port.pkeys, model_pk, n) ==
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

/*
 * Where entry @i stands among the entries holding its key in the model, as
 * the writer's chain of that key must see it: 0 alone, 1 first of several
 * (the key's slot moves on), 2 in between, 3 last of several.
 */
static unsigned model_chain_place(uint32_t cap, uint32_t i)
{
	unsigned key = model_pk[i];
	bool before = false, after = false;
	uint32_t j;

	for (j = 0; j < cap; j++)
		if (j != i && model_pk[j] == key) {
			before = before || j < i;
			after = after || j > i;
		}
	return before ? (after ? 2u : 3u) : (after ? 1u : 0u);
}

/* The key of a chain test: one of @nbases pool partitions, either
 * membership, or one of the two invalid keys, 1 in 8. */
static ibk_pkey_t chain_key(uint32_t nbases)
{
	uint32_t r = test_rng_below(16);

	if (r < 2)
		return r ? 0x8000 : 0x0000;
	return (ibk_pkey_t)(base_pool[test_rng_below(nbases)] |
			    (r & 1 ? 0x8000u : 0));
}

/* Every find and exact find of @key's partition, both memberships. */
static void check_pkey_partition(struct check *c, uint32_t cap, unsigned key)
{
	check_pkey_key(c, cap, key);
	check_pkey_key(c, cap, key ^ 0x8000u);
}

/*
 * One refill of a @cap-entry table whose cells and index start @cell_off
 * cells (and slots) past a word boundary, from keys @key_off cells past
 * one, then a few sets: after each, get of every entry, and find and
 * find_exact of every key in both memberships, against the model.
 */
static void refill_at_offsets(struct check *c, uint32_t cap,
			      uint32_t cell_off, uint32_t key_off)
{
	static ibk_pkey_t input[MAX_CAP + 4];
	struct ibk_pkey_table *t = &port.pkeys;
	uint32_t nbases = cap / 2 + 1, i, n, s;
	ibk_pkey_t got;
	int rc;

	check(c, ibk_pkey_table_init(t, pk_cells + cell_off, cap,
				     pk_slots + cell_off,
				     IBK_PKEY_HASH_SLOTS(cap)) == IBK_OK &&
		 ibk_pkey_table_set_state(t, IBK_PORT_ACTIVE) == IBK_OK,
	      "init at offset %u failed", cell_off);
	base_pool_fill(nbases);
	n = cap - test_rng_below(2) * test_rng_below(cap + 1);
	for (i = 0; i < cap; i++) {
		model_pk[i] = i < n ? rnd_pkey_entry(nbases) : 0;
		input[key_off + i] = model_pk[i];
	}
	check(c, pk_refill(t, input + key_off, n) == IBK_OK,
	      "refill cap %u n %u failed", cap, n);
	for (s = 0; s <= 4; s++) {
		for (i = 0; i < cap; i++) {
			got = 0;
			rc = ibk_pkey_table_get(t, i, &got);
			check(c, pkey_base_nonzero(model_pk[i]) ?
				 rc == IBK_OK && got == model_pk[i] :
				 rc == IBK_ENOENT,
			      "cap %u offsets %u/%u: get(%u) = %d 0x%04x, "
			      "model 0x%04x", cap, cell_off, key_off, i, rc,
			      got, model_pk[i]);
		}
		check_pkey_all(c, cap);
		i = test_rng_below(cap);
		model_pk[i] = rnd_pkey_entry(nbases);
		check(c, ibk_pkey_table_set(t, i, model_pk[i]) == IBK_OK,
		      "set failed");
	}
}

/*
 * Refills whose cells, index and input start at every 2-byte offset from
 * a word boundary, on capacities whose copies do not align alike too: the
 * refill's word loops leave their cell-by-cell parts to cover.
 */
static void test_pkey_refill_offsets(void)
{
	static const uint32_t caps[] = { 1, 2, 3, 5, 6, 13, 64, 67 };
	struct check c = { 0, 0 };
	uint32_t k, cell_off, key_off;

	for (k = 0; k < sizeof(caps) / sizeof(caps[0]); k++)
		for (cell_off = 0; cell_off < 4; cell_off++)
			for (key_off = 0; key_off < 4; key_off++)
				refill_at_offsets(&c, caps[k], cell_off,
						  key_off);
	tap_ok(c.bad == 0, "P_Key refills with cells, slots and keys at every "
	       "2-byte offset match the models of get, find and find_exact "
	       "(%lu checks)", c.done);
}

/*
 * Sets, SubnSet(P_KeyTable) blocks and refills in random order on tables
 * drawn from few partitions (one for 16 entries), so every key has a chain
 * of duplicates and most partitions both memberships: after each step,
 * find and
 * find_exact of every key the step touched (both memberships) against the
 * plain-array model, whose find takes the lowest full-member index of the
 * partition, else the lowest limited one (the kernel's
 * ib_find_cached_pkey()). Counts where in its key's chain each entry a
 * step overwrote stood, and requires every place to have been seen.
 */
static void test_pkey_chain_model(uint32_t cap, unsigned steps,
				  uint32_t slot_mult)
{
	struct check c = { 0, 0 };
	unsigned long place[4] = { 0, 0, 0, 0 };
	ibk_pkey_t block[IBK_PKEY_BLOCK_ENTRIES], old[IBK_PKEY_BLOCK_ENTRIES];
	uint32_t nbases = cap / 16 + 2 + test_rng_below(6), i, k, first;
	unsigned step, op;

	port_setup(cap, 1, slot_mult);
	base_pool_fill(nbases);
	for (i = 0; i < cap; i++)
		model_pk[i] = chain_key(nbases);
	check(&c, pk_refill(&port.pkeys, model_pk, cap) == IBK_OK,
	      "first refill failed");
	for (step = 0; step < steps; step++) {
		op = test_rng_below(16);
		if (op == 0) {		/* a refill, sometimes shorter */
			uint32_t n = test_rng_below(cap + 1);

			for (i = 0; i < cap; i++)
				model_pk[i] = i < n ? chain_key(nbases) : 0;
			check(&c, pk_refill(&port.pkeys, model_pk, n) == IBK_OK,
			      "refill failed");
			for (k = 0; k < 64; k++)	/* 64 of the partitions */
				check_pkey_partition(&c, cap, base_pool[
					test_rng_below(nbases)]);
		} else if (op == 1) {	/* a block, as the SMA applies it */
			first = test_rng_below((cap + 31) / 32) * 32;
			for (k = 0; k < IBK_PKEY_BLOCK_ENTRIES; k++) {
				block[k] = chain_key(nbases);
				old[k] = first + k < cap ? model_pk[first + k] : 0;
				if (first + k < cap && old[k] != block[k] &&
				    pkey_base_nonzero(old[k]))
					place[model_chain_place(cap,
								first + k)]++;
			}
			for (k = 0; k < IBK_PKEY_BLOCK_ENTRIES &&
				    first + k < cap; k++)
				model_pk[first + k] = block[k];
			check(&c, ibk_pkey_table_apply_block(&port.pkeys,
							     first / 32,
							     block) == IBK_OK,
			      "apply_block failed");
			for (k = 0; k < IBK_PKEY_BLOCK_ENTRIES; k++) {
				check_pkey_partition(&c, cap, old[k]);
				check_pkey_partition(&c, cap, block[k]);
			}
		} else {		/* one entry */
			unsigned was, key = chain_key(nbases);

			i = test_rng_below(cap);
			was = model_pk[i];
			if (was != key && pkey_base_nonzero(was))
				place[model_chain_place(cap, i)]++;
			model_pk[i] = (ibk_pkey_t)key;
			check(&c, ibk_pkey_table_set(&port.pkeys, i,
						     (ibk_pkey_t)key) == IBK_OK,
			      "set failed");
			check_pkey_partition(&c, cap, was);
			check_pkey_partition(&c, cap, key);
		}
	}
	tap_ok(c.bad == 0 && place[1] && place[2] && place[3],
	       "P_Key sets, blocks and refills on %u partitions with "
	       "duplicate chains match the plain-array model: capacity %u, "
	       "%ux slots, %u steps; entries overwritten alone %lu, first %lu, "
	       "in between %lu, last %lu of their key's chain (%lu checks)",
	       nbases, cap, slot_mult, steps, place[0], place[1], place[2],
	       place[3], c.done);
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
	pk_refill(&port.pkeys, model_pk, MAX_CAP);
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

/* ibk_port_init() writes the counters only once both tables took their
 * storage: a refusal leaves them as they were (it once zeroed them by an
 * exchange, reading storage that held no counter yet). */
static void test_port_init_refused(void)
{
	struct ibk_port p, before;

	memset(&p, 0xa5, sizeof(p));
	memcpy(&before, &p, sizeof(p));
	tap_ok(ibk_port_init(&p, pk_cells, 8, pk_slots, IBK_PKEY_HASH_SLOTS(8),
			     gid_cells, 0, gid_slots, IBK_HASH_SLOTS(4)) ==
	       IBK_ERANGE &&
	       memcmp(&p.pkey_violations, &before.pkey_violations,
		      sizeof(p) - offsetof(struct ibk_port,
					   pkey_violations)) == 0,
	       "port_init refusing a GID capacity of 0: IBK_ERANGE, the "
	       "counters not written");
}

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
	tap_ok(ibk_pkey_table_get(t, 8, &v) == IBK_ERANGE &&
	       ibk_pkey_table_get(t, 0xffffffffu, &v) == IBK_ERANGE,
	       "DOWN, index >= capacity: IBK_ERANGE comes before "
	       "IBK_ENOTREADY");
	gen = ibk__load(&t->hdr.latch.count, acquire);
	tap_ok(pk_refill(t, keys, 7) == IBK_ENOTREADY &&
	       ibk__load(&t->hdr.latch.count, acquire) == gen,
	       "a refill of a DOWN table: IBK_ENOTREADY, nothing published "
	       "(what the device holds then is undefined, ibv_query_pkey(3))");
	tap_ok(ibk_pkey_table_set_state(t, IBK_PORT_INIT) == IBK_OK &&
	       ibk_pkey_table_get(t, 0, &v) == IBK_ENOTREADY &&
	       pk_refill(t, keys, 7) == IBK_ENOTREADY,
	       "INIT: reads and refills refused with IBK_ENOTREADY");
	tap_ok(ibk_pkey_table_set_state(t, IBK_PORT_ARMED) == IBK_OK &&
	       ibk_pkey_table_get(t, 0, &v) == IBK_ESTALE,
	       "INIT -> ARMED: what was cached before awaits a refill");
	tap_ok(pk_refill(t, keys, 7) == IBK_OK &&
	       ibk_pkey_table_get(t, 0, &v) == IBK_OK && v == 0xffff,
	       "ARMED after the refill: reads allowed (get 0 = 0xffff)");
	tap_ok(ibk_pkey_table_set_state(t, IBK_PORT_ACTIVE) == IBK_OK &&
	       ibk_pkey_table_get(t, 1, &v) == IBK_OK && v == 0x8001,
	       "ACTIVE: reads allowed (get 1 = 0x8001)");
	tap_ok(ibk_pkey_table_set_state(t, (enum ibk_port_state)0) ==
	       IBK_EINVAL &&
	       ibk_pkey_table_set_state(t, (enum ibk_port_state)6) ==
	       IBK_EINVAL, "set_state outside DOWN..ACTIVE_DEFER is IBK_EINVAL");
	tap_ok(IBK_PORT_ACTIVE_DEFER == 5 &&
	       ibk_pkey_table_set_state(t, IBK_PORT_ACTIVE_DEFER) == IBK_OK &&
	       ibk_pkey_table_get(t, 1, &v) == IBK_OK && v == 0x8001 &&
	       ibk_pkey_table_set_state(t, IBK_PORT_ACTIVE) == IBK_OK &&
	       ibk_pkey_table_get(t, 1, &v) == IBK_OK,
	       "ACTIVE_DEFER (5, IBV_PORT_ACTIVE_DEFER): reads allowed as in "
	       "ACTIVE, and the table stays as it was");
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
	       ibk_pkey_table_snapshot(t, 8, NULL, NULL) == IBK_EINVAL &&
	       ibk_pkey_table_refill(NULL, keys, 1, 0) == IBK_EINVAL &&
	       pk_refill(t, NULL, 1) == IBK_EINVAL &&
	       ibk_pkey_table_set(NULL, 0, 1) == IBK_EINVAL &&
	       ibk_pkey_table_set_state(NULL, IBK_PORT_ACTIVE) == IBK_EINVAL &&
	       ibk_pkey_table_invalidate(NULL) == IBK_EINVAL,
	       "NULL arguments: IBK_EINVAL");
	tap_ok(pk_refill(t, keys, 9) == IBK_ENOSPC,
	       "refill of more entries than the capacity: IBK_ENOSPC");
	tap_ok(ibk_pkey_table_get(t, 1, &v) == IBK_OK && v == 0x8001,
	       "a refused refill leaves the table alone");
	tap_ok(ibk_pkey_table_set(t, 8, 0xffff) == IBK_ERANGE,
	       "set at index >= capacity: IBK_ERANGE");

	/* snapshot */
	rc = ibk_pkey_table_snapshot(t, 7, snap, &gen);
	tap_ok(rc == IBK_ERANGE, "snapshot into fewer than capacity: IBK_ERANGE");
	rc = ibk_pkey_table_snapshot(t, 8, snap, &gen);
	tap_ok(rc == 8 && memcmp(snap, keys, sizeof(keys)) == 0 &&
	       snap[7] == 0 && gen % 2 == 0,
	       "snapshot copies the refill plus an empty tail, even generation");
	tap_ok(pk_refill(t, NULL, 0) == IBK_OK &&
	       ibk_pkey_table_snapshot(t, 8, snap, NULL) == 8 &&
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
	pk_refill(t, keys, 3);
	tap_ok(ibk_pkey_table_ref_get(t, 1, &r) == IBK_OK && r.index == 1 &&
	       r.pkey == 0x8001 && ibk_pkey_table_ref_fresh(t, &r),
	       "ref_get: {1, 0x8001}, fresh");
	ibk_pkey_table_snapshot(t, 4, snap, &gen);
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
	pk_refill(t, keys, 3);
	tap_ok(!ibk_pkey_table_ref_fresh(t, &r), "stale after a refill");
	ibk_pkey_table_ref_get(t, 1, &r);
	ibk_pkey_table_set_state(t, IBK_PORT_ACTIVE);
	tap_ok(!ibk_pkey_table_ref_fresh(t, &r), "stale after a state change");
	ibk_pkey_table_ref_get(t, 1, &r);
	ibk_pkey_table_invalidate(t);
	tap_ok(!ibk_pkey_table_ref_fresh(t, &r), "stale after invalidate");
	pk_refill(t, keys, 3);
	ibk_pkey_table_ref_get(t, 1, &r);
	ibk_gid_table_set_state(&port.gids, IBK_PORT_ARMED);
	ibk_port_event(&port, IBK_EVENT_GID_CHANGE);
	tap_ok(ibk_pkey_table_ref_fresh(t, &r),
	       "fresh after GID-table changes and GID_CHANGE");
	ibk_pkey_table_get(t, 0, &snap[0]);
	ibk_pkey_table_find(t, 0xffff, NULL);
	ibk_pkey_table_snapshot(t, 4, snap, NULL);
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

/*
 * The GID hash's product, which wraps on purpose, as Frama-C's EVA computes
 * it (ibk__gid_product_parts(), from 32-bit halves that do not wrap):
 * against the top half of the low 64 bits of the 128-bit product where the
 * compiler has one, else of C's 64-bit product, over edges and random keys.
 */
#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 test_u128;
#endif

static void test_gid_product_parts(void)
{
	static const uint64_t edges[] = {
		0, 1, 0xffffffffu, 0x100000000ull, 0x8000000000000000ull,
		0xffffffffffffffffull, 0x9e3779b97f4a7c15ull,
	};
	const uint64_t phi = 0x9e3779b97f4a7c15ull;
	const unsigned nedges = sizeof(edges) / sizeof(edges[0]);
	unsigned long bad = 0;
	uint32_t got, want;
	uint64_t key;
	unsigned i;

	for (i = 0; i < 1000000; i++) {
		key = i < nedges ? edges[i] : test_rng64();
#ifdef __SIZEOF_INT128__
		want = (uint32_t)((test_u128)key * phi >> 32);
#else
		want = (uint32_t)(key * phi >> 32);
#endif
		got = ibk__gid_product_parts(key);
		if (got != want)
			tap_diag_first(&bad, "key 0x%016" PRIx64 ": 0x%08" PRIx32
				       ", not 0x%08" PRIx32, key, got, want);
	}
	tap_ok(bad == 0, "GID hash: the product by parts EVA takes is bits "
	       "32..63 of key x 2^64/phi, 1000000 keys and the edges");
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
		check(&c, gid_refill(&port.gids, model_gid, n) ==
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
	tap_ok(gid_refill(t, e, 4) == IBK_OK,
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
	tap_ok(gid_refill(t, e, 4) == IBK_EINVAL &&
	       ibk_gid_table_find(t, &a, IBK_GID_TYPE_ANY, NULL) == 0,
	       "gid refill with a bad type: IBK_EINVAL, table unchanged");
	tap_ok(ibk_gid_table_set(t, 0, &a, (enum ibk_gid_type)3) == IBK_EINVAL &&
	       ibk_gid_table_set(t, 4, &a, IBK_GID_TYPE_IB) == IBK_ERANGE &&
	       ibk_gid_table_set(t, 0, NULL, IBK_GID_TYPE_IB) == IBK_EINVAL &&
	       gid_refill(t, e, 5) == IBK_ENOSPC,
	       "gid set: bad type IBK_EINVAL, index IBK_ERANGE; "
	       "refill IBK_ENOSPC");
	tap_ok(ibk_gid_table_set(t, 0, &zero, (enum ibk_gid_type)9) == IBK_OK &&
	       ibk_gid_table_get(t, 0, &out) == IBK_ENOENT &&
	       ibk_gid_table_find(t, &a, IBK_GID_TYPE_ANY, &ft) == 1 &&
	       ft == IBK_GID_TYPE_ROCE_V2,
	       "gid set of the zero GID empties the slot; find moves on to 1");
	tap_ok(ibk_gid_table_snapshot(t, 3, snap, &gen) == IBK_ERANGE &&
	       ibk_gid_table_snapshot(t, 4, snap, &gen) == 4 &&
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

/*
 * Many indices holding one (GID, type) pair: three GIDs, three types, a
 * table of @cap entries, so each pair is held some @cap / 10 times and
 * sets keep taking entries out of the head, the middle and the end of
 * a pair's indices and putting them back anywhere. After each set, every
 * find (each type and any) must give the model's lowest index holding it.
 */
static void test_gid_duplicates(uint32_t cap, unsigned tables, unsigned sets)
{
	struct check c = { 0, 0 };
	unsigned t, s, q;
	uint32_t i;

	port_setup(1, cap, 1);
	gid_pool[0] = ibk_gid_make(IBK_GID_DEFAULT_PREFIX, 0x0002c90300012345ull);
	gid_pool[1] = ibk_gid_from_ipv4(0xc0a80001u);
	gid_pool[2] = gid_pool[0];
	gid_pool[2].raw[15] ^= 1;
	for (t = 0; t < tables; t++) {
		for (i = 0; i < cap; i++)
			model_gid[i] = rnd_gid_entry(3);
		for (i = 0; i < cap; i++)
			if (gid_zero(&model_gid[i].gid))
				model_gid[i].type = IBK_GID_TYPE_IB;
		check(&c, gid_refill(&port.gids, model_gid, cap) == IBK_OK,
		      "gid refill failed");
		for (s = 0; s < sets; s++) {
			i = test_rng_below(cap);
			model_gid[i] = rnd_gid_entry(3);
			check(&c, ibk_gid_table_set(&port.gids, i,
						    &model_gid[i].gid,
						    model_gid[i].type) == IBK_OK,
			      "gid set failed");
			if (gid_zero(&model_gid[i].gid))
				model_gid[i].type = IBK_GID_TYPE_IB;
			for (q = 0; q < 3; q++)
				check_gid_key(&c, cap, &gid_pool[q]);
		}
	}
	tap_ok(c.bad == 0, "GID find with every pair held by many indices, "
	       "capacity %u: each set out of and into the head, middle or "
	       "end of a pair's indices matches the model (%lu checks)", cap,
	       c.done);
}

/* The longest run of occupied slots in either copy of the GID index. */
static uint32_t gid_longest_run(void)
{
	uint32_t n = port.gids.hdr.hash_mask + 1, longest = 0, run, i;
	unsigned c;

	for (c = 0; c < 2; c++) {
		run = 0;
		for (i = 0; i < 2 * n; i++) {	/* twice round: runs wrap */
			run = ibk__load(&port.gids.hdr.slots[c][i % n].word,
					relaxed) ? run + 1 : 0;
			if (run > longest && run <= n)
				longest = run;
		}
	}
	return longest;
}

/* e^@x by its power series (no libm); exact enough for 0 <= @x <= 1. */
static double exp_series(double x)
{
	double sum = 1, term = 1;
	int k;

	for (k = 1; k < 30; k++) {
		term *= x / k;
		sum += term;
	}
	return sum;
}

/*
 * The fewest slots L such that a random hash would make a run of L or more
 * occupied slots with probability below 10^-6, for @keys keys in @slots
 * slots (load a = keys / slots). A run of length l starting at a given
 * slot needs at least l of the keys to hash into those l slots; the count
 * is binomial with mean a l, and the Chernoff bound P(X >= l) <=
 * (a e^(1 - a))^l = q^l makes the union over the start slots and the
 * lengths from L up at most slots q^L / (1 - q).
 */
static uint32_t gid_run_bound(uint32_t keys, uint32_t slots)
{
	double a = (double)keys / slots, q = a * exp_series(1 - a);
	double p = slots / (1 - q);
	uint32_t l = 0;

	while (p >= 1e-6) {
		p *= q;
		l++;
	}
	return l;
}

/*
 * Realistic GID tables must not cluster in the index: 1024 IB GIDs under
 * one prefix with consecutive GUIDs, and 1024 RoCE GIDs ::ffff:a.b.c.d of
 * consecutive IPv4 addresses, filled in by a refill and by single sets,
 * at load 1/4 (IBK_HASH_SLOTS) and 1/2 (IBK_HASH_SLOTS_MIN). Every probe
 * stays inside one run, so the longest run bounds every find's walk. For
 * a random hash a run of 36 slots or more at load 1/4, or 121 or more at
 * 1/2, has a probability below 10^-6 (gid_run_bound()); a hash that put
 * such GIDs on few homes would make runs of hundreds.
 */
static void test_gid_runs(void)
{
	const uint32_t n = 1024;
	struct ibk_gid_table *t = &port.gids;
	unsigned kind, half, by_set;
	uint32_t i, slots, bound, longest;
	bool ok;

	for (kind = 0; kind < 2; kind++) {
		for (half = 0; half < 2; half++) {
			for (by_set = 0; by_set < 2; by_set++) {
				slots = half ? IBK_HASH_SLOTS_MIN(n) :
					       IBK_HASH_SLOTS(n);
				ok = ibk_gid_table_init(t, gid_cells, n,
							gid_slots, slots) ==
				     IBK_OK &&
				     ibk_gid_table_set_state(t,
							     IBK_PORT_ACTIVE) ==
				     IBK_OK &&
				     gid_refill(t, NULL, 0) == IBK_OK;
				for (i = 0; i < n; i++) {
					model_gid[i].gid = kind ?
						ibk_gid_from_ipv4(0x0a000000u + i) :
						ibk_gid_make(IBK_GID_DEFAULT_PREFIX,
							     0x0002c90300a00000ull + i);
					model_gid[i].type = kind ?
						IBK_GID_TYPE_ROCE_V2 :
						IBK_GID_TYPE_IB;
					if (by_set)
						ok &= ibk_gid_table_set(t, i,
							&model_gid[i].gid,
							model_gid[i].type) ==
						      IBK_OK;
				}
				if (!by_set)
					ok &= gid_refill(t, model_gid, n) ==
					      IBK_OK;
				bound = gid_run_bound(n, t->hdr.hash_mask + 1);
				longest = gid_longest_run();
				tap_ok(ok && longest < bound,
				       "GID index of %u %s GIDs (%s), %u slots "
				       "a copy: longest run %u, under the %u slots "
				       "linear probing allows a random hash", n,
				       kind ? "consecutive IPv4-mapped" :
					      "consecutive-GUID fe80::",
				       by_set ? "set one by one" : "refill",
				       t->hdr.hash_mask + 1, longest, bound);
			}
		}
	}
}

/* ------------------------------------------------------------------------
 * Events and port state
 * ------------------------------------------------------------------------ */

struct event_case {
	enum ibk_event_type event;
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
		pk_refill(&port.pkeys, keys, 2);
		gid_refill(&port.gids, &ge, 1);
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
		pk_refill(&port.pkeys, keys, 2);
		gid_refill(&port.gids, &ge, 1);
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
	tap_ok(ibk_port_event(&port, (enum ibk_event_type)0) == IBK_EINVAL &&
	       ibk_port_event(&port, (enum ibk_event_type)14) == IBK_EINVAL &&
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
	pk_refill(t, keys, 1);		/* 0xfffffffc */
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
	       r[1].generation == 0xfffffffeu && r[2].generation == 2 &&
	       r[5].generation == 8,
	       "across the 32-bit wrap refs go stale and fresh ones stay fresh; "
	       "0xfffffffe is followed by 2 (0x%08x .. 0x%08x)",
	       r[0].generation, r[5].generation);
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

/* A SEND Only of the QP type's transport (IBA 9.2 table 38): RC 0x04, UC
 * 0x24, UD 0x64, the last also for QP0 and QP1, which are UD QPs. */
static uint8_t send_only(enum ibk_qp_type type)
{
	return type == IBK_QPT_RC ? 0x04 : type == IBK_QPT_UC ? 0x24 : 0x64;
}

/* BTH and DETH written byte by byte from the layout (IBA 9.2, 9.3): OpCode
 * at byte 0, TVer 0 in byte 1, P_Key at 2-3; the DETH's Q_Key at 12-15. */
static void make_hdr_op(uint8_t *hdr, uint8_t opcode, unsigned pkey,
			uint32_t qkey)
{
	memset(hdr, 0, HDR_LEN);
	hdr[0] = opcode;
	hdr[2] = (uint8_t)(pkey >> 8);
	hdr[3] = (uint8_t)pkey;
	hdr[12] = (uint8_t)(qkey >> 24);
	hdr[13] = (uint8_t)(qkey >> 16);
	hdr[14] = (uint8_t)(qkey >> 8);
	hdr[15] = (uint8_t)qkey;
}

static void make_hdr(uint8_t *hdr, unsigned pkey, uint32_t qkey)
{
	make_hdr_op(hdr, 0x64, pkey, qkey);
}

static unsigned hdr_pkey(const uint8_t *hdr)
{
	return (unsigned)hdr[2] << 8 | hdr[3];
}

/* QP1's match in the table model_pk (port_model.h), or -1. */
static int model_gsi_index(uint32_t cap, unsigned pkt)
{
	return model_first_admitting(model_pk, cap, (uint16_t)pkt);
}

/* A whole port receive on the table model_pk (port_model.h): rxe's
 * order, the port gate, then the keys. */
static enum ibk_rx_verdict model_port(uint32_t cap, bool readable,
				      const struct ibk_qp_keys *qp,
				      const uint8_t *hdr, bool have_deth)
{
	uint16_t index;

	return model_port_rx(model_pk, cap, readable, qp, hdr,
			     have_deth ? hdr + IBK_BTH_LEN : NULL, &index);
}

static void reset_counters(void)
{
	ibk_counter16_reset(&port.pkey_violations);
	ibk_counter16_reset(&port.qkey_violations);
}

static void test_rx_gsi_exhaustive(void)
{
	struct check c = { 0, 0 };
	unsigned long pkey_drops = 0, qkey_drops = 0;
	struct ibk_qp_keys gsi;
	uint8_t hdr[HDR_LEN];
	uint32_t i, cap = 64;
	unsigned pkt, q;

	memset(&gsi, 0, sizeof(gsi));
	gsi.type = IBK_QPT_GSI;
	port_setup(cap, 1, 1);
	base_pool_fill(48);
	for (i = 0; i < cap; i++)
		model_pk[i] = rnd_pkey_entry(48);
	model_pk[0] = 0xffff;
	pk_refill(&port.pkeys, model_pk, cap);
	for (pkt = 0; pkt < 0x10000; pkt++) {
		for (q = 0; q < 2; q++) {
			uint32_t qkey = q ? 0x80010001u : IBK_QKEY_GSI;
			enum ibk_rx_verdict want, got;
			uint16_t index = 0xeeee;
			int want_index;

			make_hdr(hdr, pkt, qkey);
			want = model_port(cap, true, &gsi, hdr, true);
			want_index = want == IBK_RX_ACCEPT ?
				     model_gsi_index(cap, pkt) : 0xeeee;
			got = ibk_port_rx_gsi(&port, hdr, hdr + IBK_BTH_LEN,
					      &index);
			check(&c, got == want && index == want_index,
			      "QP1 pkt 0x%04x qkey 0x%08x: %s index %u, "
			      "want %s index %d", pkt, qkey,
			      ibk_rx_verdict_name(got), index,
			      ibk_rx_verdict_name(want), want_index);
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
	       "the membership rule over a 64-entry table, the index of the "
	       "first matching entry reported on accept and nothing written "
	       "on a drop, counters exact (%lu checks)", c.done);
}

/* QP1's reported index on random tables full of duplicates: every
 * capacity up to 40, a few partitions in both memberships and empty
 * entries, against rxe's linear scan. */
static void test_rx_gsi_index(void)
{
	struct check c = { 0, 0 };
	uint8_t hdr[HDR_LEN];
	unsigned t, k, accepted = 0, not_lowest_full = 0;

	for (t = 0; t < 600; t++) {
		uint32_t cap = 1 + t % 40, nbases = 1 + test_rng_below(4), i;

		port_setup(cap, 1, 1);
		base_pool_fill(nbases);
		for (i = 0; i < cap; i++)
			model_pk[i] = rnd_pkey_entry(nbases);
		pk_refill(&port.pkeys, model_pk, cap);
		for (k = 0; k < 64; k++) {
			unsigned pkt = k < 48 ? model_pk[test_rng_below(cap)] ^
					   (unsigned)(test_rng64() & 0x8000u) :
					   (unsigned)test_rng64() & 0xffffu;
			int want = model_gsi_index(cap, pkt);
			uint16_t index = 0xeeee;
			enum ibk_rx_verdict v;

			make_hdr(hdr, pkt, IBK_QKEY_GSI);
			v = ibk_port_rx_gsi(&port, hdr, hdr + IBK_BTH_LEN,
					    &index);
			check(&c, want < 0 ? v == IBK_RX_DROP_PKEY &&
					     index == 0xeeee :
					     v == IBK_RX_ACCEPT && index == want,
			      "cap %u pkt 0x%04x: %s index %u, want %d", cap,
			      pkt, ibk_rx_verdict_name(v), index, want);
			accepted += want >= 0;
			/* cases where "first in table order" is not "full
			 * member first": a limited entry before the full one */
			not_lowest_full += want >= 0 && (pkt & 0x8000u) &&
					   !(model_pk[want] & 0x8000u);
			check(&c, ibk_port_rx_gsi(&port, hdr, hdr + IBK_BTH_LEN,
						  NULL) == v,
			      "NULL pkey_index changes nothing");
		}
	}
	tap_ok(c.bad == 0 && accepted > 10000 && not_lowest_full > 1000,
	       "QP1 reports the first matching index in table order (rxe "
	       "check_keys() scan) on 600 random tables with duplicates "
	       "(%u accepted, %u where a limited entry comes first; %lu "
	       "checks)", accepted, not_lowest_full, c.done);
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
	pk_refill(&port.pkeys, keys, cap);
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

				make_hdr_op(hdr, send_only(qp.type), pkt, qkey);
				want = model_port(cap, true, &qp, hdr,
						  type != IBK_QPT_RC &&
						  type != IBK_QPT_UC);
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
	       "P_Key from the entry at pkey_index, an empty entry matching "
	       "nothing, an index beyond the table, UD Q_Key (%lu checks)",
	       c.done);

	reset_counters();
	qp.type = IBK_QPT_UD;
	qp.pkey_index = 3;	/* holds 0x0000 */
	make_hdr(hdr, 0xffff, qp.qkey);
	tap_ok(ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN) ==
	       IBK_RX_DROP_PKEY &&
	       ibk_counter16_read(&port.pkey_violations) == 1,
	       "an empty entry at the QP's P_Key index: DROP_PKEY, counted as "
	       "a P_Key violation (rxe check_keys, qib_ud_rcv)");
	qp.type = IBK_QPT_RC;
	make_hdr_op(hdr, 0x04, 0x8000, 0);
	tap_ok(ibk_port_rx(&port, &qp, hdr, NULL) == IBK_RX_DROP_PKEY &&
	       ibk_counter16_read(&port.pkey_violations) == 2,
	       "... also for an RC QP and a packet carrying the invalid key "
	       "0x8000: an invalid key matches nothing, not even itself");
	qp.type = IBK_QPT_UD;
	qp.pkey_index = 5;	/* == capacity */
	make_hdr(hdr, 0xffff, qp.qkey);
	tap_ok(ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN) ==
	       IBK_RX_DROP_PKEY_INDEX &&
	       (qp.pkey_index = 0xffff,
		ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN)) ==
	       IBK_RX_DROP_PKEY_INDEX &&
	       ibk_counter16_read(&port.pkey_violations) == 2,
	       "an index at or beyond the capacity: DROP_PKEY_INDEX, a "
	       "configuration error, not counted");
	reset_counters();
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
	       ibk_port_rx(&port, &qp, hdr, NULL) == IBK_RX_DROP_MALFORMED &&
	       ibk_port_rx_gsi(&port, hdr, NULL, NULL) ==
	       IBK_RX_DROP_MALFORMED,
	       "NULL headers: DROP_MALFORMED, before the port gate");
}

/* Runs @n packets to qps[i] through every entry point that takes them and
 * compares each with @want (and the counters with nothing counted). */
static bool rx_all_paths(const struct ibk_qp_keys *qp, uint8_t (*hdrs)[HDR_LEN],
			 size_t n, enum ibk_rx_verdict want)
{
	const struct ibk_qp_keys *qps[8];
	const void *ptrs[8];
	uint8_t verdicts[8], mixed[8];
	bool ok = true;
	size_t i;

	reset_counters();
	for (i = 0; i < n; i++) {
		qps[i] = qp;
		ptrs[i] = hdrs[i];
		ok &= ibk_port_rx(&port, qp, hdrs[i], hdrs[i] + IBK_BTH_LEN) ==
		      want;
		if (qp->type == IBK_QPT_GSI)
			ok &= ibk_port_rx_gsi(&port, hdrs[i],
					      hdrs[i] + IBK_BTH_LEN, NULL) ==
			      want;
	}
	memset(verdicts, 0xee, sizeof(verdicts));
	memset(mixed, 0xee, sizeof(mixed));
	ok &= ibk_port_rx_burst(&port, qp, ptrs, n, verdicts) ==
	      (want == IBK_RX_ACCEPT ? n : 0);
	ok &= ibk_port_rx_mixed(&port, qps, ptrs, n, mixed, NULL) ==
	      (want == IBK_RX_ACCEPT ? n : 0);
	for (i = 0; i < n; i++)
		ok &= verdicts[i] == want && mixed[i] == want;
	ok &= ibk_counter16_read(&port.pkey_violations) == 0 &&
	      ibk_counter16_read(&port.qkey_violations) == 0;
	return ok;
}

/* The header checks on the port paths: before the keys, before the port
 * gate, never counted. */
static void test_rx_headers(void)
{
	static const ibk_pkey_t keys[] = { 0xffff, 0x8001, 0x0000, 0x7fff };
	static uint8_t hdrs[8][HDR_LEN];
	static const enum ibk_port_state states[] = {
		IBK_PORT_DOWN, IBK_PORT_INIT, IBK_PORT_ARMED, IBK_PORT_ACTIVE,
		IBK_PORT_ACTIVE_DEFER,
	};
	struct ibk_qp_keys ud, rc, gsi, smi;
	unsigned i, bad = 0;

	port_setup(4, 1, 1);
	pk_refill(&port.pkeys, keys, 4);
	memset(&ud, 0, sizeof(ud));
	ud.type = IBK_QPT_UD;
	ud.pkey_index = 0;
	ud.qkey = 0x11111111u;
	rc = ud;
	rc.type = IBK_QPT_RC;
	gsi = ud;
	gsi.type = IBK_QPT_GSI;
	gsi.qkey = IBK_QKEY_GSI;
	smi = ud;
	smi.type = IBK_QPT_SMI;

	/* RC SEND Only whose payload (where a DETH would be) starts with the
	 * UD QP's Q_Key: every entry point drops it on its opcode */
	for (i = 0; i < 8; i++)
		make_hdr_op(hdrs[i], 0x04, 0xffff, ud.qkey);
	tap_ok(rx_all_paths(&ud, hdrs, 8, IBK_RX_DROP_OPCODE),
	       "RC SEND (0x04) to a UD QP, payload starting with the QP's "
	       "Q_Key: DROP_OPCODE by port_rx, port_rx_burst, port_rx_mixed; "
	       "not counted (rxe check_type_state)");
	for (i = 0; i < 8; i++)
		make_hdr_op(hdrs[i], 0x04, 0xffff, IBK_QKEY_GSI);
	tap_ok(rx_all_paths(&gsi, hdrs, 8, IBK_RX_DROP_OPCODE),
	       "RC SEND to QP1 with the GSI Q_Key in its payload: DROP_OPCODE "
	       "by every entry point, port_rx_gsi included");
	for (i = 0; i < 8; i++)
		make_hdr(hdrs[i], 0xffff, 0);
	tap_ok(rx_all_paths(&rc, hdrs, 8, IBK_RX_DROP_OPCODE),
	       "UD SEND (0x64) to an RC QP: DROP_OPCODE by every entry point");
	for (i = 0; i < 8; i++) {
		make_hdr(hdrs[i], 0xffff, ud.qkey);
		hdrs[i][1] = 0x0f;
	}
	tap_ok(rx_all_paths(&ud, hdrs, 8, IBK_RX_DROP_TVER) &&
	       rx_all_paths(&smi, hdrs, 8, IBK_RX_DROP_TVER),
	       "TVer 15 to a UD QP and to QP0: DROP_TVER by every entry point "
	       "(rxe hdr_check)");

	/* before the port gate: the same drops while the port is DOWN */
	ibk_port_set_state(&port, IBK_PORT_DOWN);
	for (i = 0; i < 8; i++)
		make_hdr_op(hdrs[i], 0x04, 0xffff, ud.qkey);
	bad += !rx_all_paths(&ud, hdrs, 8, IBK_RX_DROP_OPCODE);
	for (i = 0; i < 8; i++)
		hdrs[i][1] = 0x01;
	bad += !rx_all_paths(&ud, hdrs, 8, IBK_RX_DROP_TVER);
	make_hdr(hdrs[0], 0xffff, ud.qkey);
	bad += ibk_port_rx(&port, &ud, hdrs[0], NULL) != IBK_RX_DROP_MALFORMED;
	bad += ibk_port_rx(&port, &gsi, hdrs[0], NULL) != IBK_RX_DROP_MALFORMED;
	bad += ibk_port_rx(&port, &ud, hdrs[0], hdrs[0] + IBK_BTH_LEN) !=
	       IBK_RX_DROP_PORT;
	tap_ok(bad == 0, "port DOWN: TVer and opcode drops and a missing DETH "
	       "come before DROP_PORT");

	/* every opcode and a TVer or none, to each QP type, on a readable
	 * table: ibk_port_rx() and a one-packet mixed burst as the model */
	ibk_port_set_state(&port, IBK_PORT_ACTIVE);
	pk_refill(&port.pkeys, keys, 4);
	memcpy(model_pk, keys, sizeof(keys));
	bad = 0;
	for (i = 0; i < 5 * 256 * 2; i++) {
		struct ibk_qp_keys q = ud;
		const struct ibk_qp_keys *qs[1] = { &q };
		const void *p[1] = { hdrs[0] };
		enum ibk_rx_verdict want;
		uint8_t v = 0xee;

		q.type = (enum ibk_qp_type)(i / 512);
		q.qkey = q.type == IBK_QPT_GSI ? IBK_QKEY_GSI : ud.qkey;
		make_hdr_op(hdrs[0], (uint8_t)(i / 2 % 256), 0xffff, q.qkey);
		hdrs[0][1] = (uint8_t)(i % 2 ? 0x0f : 0x00);
		want = model_port(4, true, &q, hdrs[0], true);
		bad += ibk_port_rx(&port, &q, hdrs[0], hdrs[0] + IBK_BTH_LEN) !=
		       want;
		bad += ibk_port_rx_mixed(&port, qs, p, 1, &v, NULL) !=
		       (want == IBK_RX_ACCEPT) || v != want;
	}
	tap_ok(bad == 0, "all 256 opcodes x TVer 0/15 x every QP type through "
	       "ibk_port_rx and ibk_port_rx_mixed: the rxe model's verdicts");

	/* QP0 in every port state, awaiting a refill or not */
	bad = 0;
	for (i = 0; i < 10; i++) {
		ibk_port_set_state(&port, states[i % 5]);
		if (i >= 5)
			ibk_port_event(&port, IBK_EVENT_PKEY_CHANGE);
		make_hdr(hdrs[0], 0x0000, 0);
		bad += ibk_port_rx(&port, &smi, hdrs[0], NULL) != IBK_RX_ACCEPT;
		make_hdr_op(hdrs[0], 0x04, 0xffff, 0);
		bad += ibk_port_rx(&port, &smi, hdrs[0], NULL) !=
		       IBK_RX_DROP_OPCODE;
	}
	tap_ok(bad == 0, "QP0: a UD SEND accepted in DOWN, INIT, ARMED, ACTIVE "
	       "and ACTIVE_DEFER, awaiting a refill or not; an RC opcode "
	       "dropped in each");
}

/* A burst of more P_Key violations than a 16-bit counter holds: one add
 * that saturates it at 0xffff, as PortInfo's P_KeyViolations stops
 * (IBA 14.2.5.6), never wrapping. */
static void test_rx_burst_saturates(void)
{
	enum { N = 65537 };
	static const ibk_pkey_t keys[] = { 0x8001 };
	static uint8_t hdr[HDR_LEN];
	static const void *ptrs[N];
	static uint8_t verdicts[N];
	struct ibk_qp_keys qp;
	size_t i;

	port_setup(8, 1, 1);
	pk_refill(&port.pkeys, keys, 1);
	memset(&qp, 0, sizeof(qp));
	qp.type = IBK_QPT_UD;
	qp.qkey = 0x11111111u;
	make_hdr(hdr, 0x8002, 0x11111111u);
	for (i = 0; i < N; i++)
		ptrs[i] = hdr;
	tap_ok(ibk_port_rx_burst(&port, &qp, ptrs, N, verdicts) == 0 &&
	       verdicts[0] == IBK_RX_DROP_PKEY &&
	       verdicts[N - 1] == IBK_RX_DROP_PKEY &&
	       ibk_counter16_read(&port.pkey_violations) == 0xffff,
	       "a burst of 65537 P_Key violations: P_KeyViolations "
	       "saturated at 0xffff");
}

static void test_rx_burst(void)
{
	static uint8_t hdrs[64][HDR_LEN];
	const void *ptrs[64];
	uint8_t verdicts[64];
	struct check c = { 0, 0 };
	struct ibk_qp_keys qp;
	uint32_t i, cap = 16, round;
	unsigned long empties = 0, headers = 0;

	port_setup(cap, 1, 1);
	base_pool_fill(6);
	for (i = 0; i < cap; i++)
		model_pk[i] = rnd_pkey_entry(6);
	model_pk[3] = 0x0000;
	pk_refill(&port.pkeys, model_pk, cap);
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
		reset_counters();
		for (i = 0; i < n; i++) {
			unsigned pkt = test_rng64() & 1 ?
				       model_pk[test_rng_below(cap)] ^
				       (unsigned)(test_rng64() & 0x8000u) :
				       (unsigned)test_rng64() & 0xffffu;
			uint8_t op = send_only(qp.type);

			if (test_rng_below(16) == 0)
				op = (uint8_t)test_rng64();
			make_hdr_op(hdrs[i], op, pkt, test_rng64() & 1 ?
				    0x11111111u : IBK_QKEY_GSI);
			if (test_rng_below(16) == 0)
				hdrs[i][1] = (uint8_t)(1 + test_rng_below(15));
		}
		got = ibk_port_rx_burst(&port, &qp, ptrs, n, verdicts);
		for (i = 0; i < n; i++) {
			enum ibk_rx_verdict want = model_port(cap, true, &qp,
							      hdrs[i], true);

			check(&c, verdicts[i] == want, "burst type %d idx %u "
			      "pkt %u: %s, want %s", qp.type, qp.pkey_index, i,
			      ibk_rx_verdict_name((enum ibk_rx_verdict)
						  verdicts[i]),
			      ibk_rx_verdict_name(want));
			want_acc += want == IBK_RX_ACCEPT;
			want_pk += want == IBK_RX_DROP_PKEY;
			want_qk += want == IBK_RX_DROP_QKEY;
			headers += want == IBK_RX_DROP_TVER ||
				   want == IBK_RX_DROP_OPCODE;
			empties += qp.pkey_index == 3 &&
				   want == IBK_RX_DROP_PKEY;
		}
		pk0 = ibk_counter16_read(&port.pkey_violations);
		qk0 = ibk_counter16_read(&port.qkey_violations);
		check(&c, got == want_acc && pk0 == want_pk && qk0 == want_qk,
		      "burst of %zu: %zu accepted (want %zu), counters %u/%u "
		      "(want %lu/%lu)", n, got, want_acc, pk0, qk0, want_pk,
		      want_qk);
	}
	tap_ok(c.bad == 0 && empties > 1000 && headers > 1000,
	       "rx burst: verdicts, accepted count and counters match the "
	       "model for 4000 random bursts of every QP type, with bad "
	       "opcodes and TVer (%lu), an empty entry counted (%lu) "
	       "(%lu checks)", headers, empties, c.done);

	ibk_port_set_state(&port, IBK_PORT_INIT);
	qp.type = IBK_QPT_UD;
	qp.pkey_index = 0;
	for (i = 0; i < 64; i++)
		make_hdr(hdrs[i], 0xffff, 0x11111111u);
	memset(verdicts, 0xee, sizeof(verdicts));
	tap_ok(ibk_port_rx_burst(&port, &qp, ptrs, 64, verdicts) == 0 &&
	       verdicts[0] == IBK_RX_DROP_PORT &&
	       verdicts[63] == IBK_RX_DROP_PORT,
	       "burst while INIT: all DROP_PORT, none accepted");
	qp.type = IBK_QPT_SMI;
	tap_ok(ibk_port_rx_burst(&port, &qp, ptrs, 64, verdicts) == 64 &&
	       verdicts[0] == IBK_RX_ACCEPT && verdicts[63] == IBK_RX_ACCEPT,
	       "QP0 burst while INIT: all accepted");
}

/* ibk_port_rx_mixed() on a burst of @n from zeroed counters, the 64
 * verdicts poisoned first: the number accepted, with the P_Key and Q_Key
 * violations it counted in *@pk and *@qk; the counters are zeroed again
 * for the per-packet checks that follow. */
static size_t rx_mixed_counted(const struct ibk_qp_keys *const *qps,
			       const void *const *ptrs, uint8_t verdicts[64],
			       uint16_t *index, size_t n, uint16_t *pk,
			       uint16_t *qk)
{
	size_t got;

	reset_counters();
	memset(verdicts, 0xee, 64);
	got = ibk_port_rx_mixed(&port, qps, ptrs, n, verdicts, index);
	*pk = ibk_counter16_read(&port.pkey_violations);
	*qk = ibk_counter16_read(&port.qkey_violations);
	reset_counters();
	return got;
}

/* A burst of @n packets accepted @got and left the port's P_Key and Q_Key
 * violation counters at @pk_burst and @qk_burst; the same packets checked
 * one by one since the counters were reset: @want_acc accepted, and the
 * counters must read the same. */
static void check_burst_counts(struct check *c, const char *what,
			       const struct ibk_port *port, size_t n,
			       size_t got, size_t want_acc, uint16_t pk_burst,
			       uint16_t qk_burst)
{
	uint16_t pk = ibk_counter16_read(&port->pkey_violations);
	uint16_t qk = ibk_counter16_read(&port->qkey_violations);

	check(c, got == want_acc && pk_burst == pk && qk_burst == qk,
	      "%s burst of %zu: %zu accepted (want %zu), counters %u/%u, "
	      "per packet %u/%u", what, n, got, want_acc, pk_burst, qk_burst,
	      pk, qk);
}

/*
 * Mixed-QP bursts: each packet to its own QP context (every type, indices
 * in and beyond the table, on empty entries), some with bad opcodes or
 * TVer, the port sometimes not readable. Each verdict must be what
 * ibk_port_rx() says of that packet alone and what the model says; each
 * accepted packet's index the QP's own, or for QP1 the first match; the
 * counters must move as the per-packet calls move them.
 */
static void test_rx_mixed(void)
{
	static uint8_t hdrs[64][HDR_LEN];
	struct ibk_qp_keys pool[16];
	const struct ibk_qp_keys *qps[64];
	const void *ptrs[64];
	uint8_t verdicts[64];
	uint16_t index[64];
	struct check c = { 0, 0 };
	uint32_t i, cap = 16, round;
	unsigned long gsi_accepts = 0, kinds[16] = { 0 };

	port_setup(cap, 1, 1);
	base_pool_fill(5);
	for (i = 0; i < cap; i++)
		model_pk[i] = rnd_pkey_entry(5);
	model_pk[2] = 0x0000;
	model_pk[7] = 0x8000;
	pk_refill(&port.pkeys, model_pk, cap);
	for (i = 0; i < 16; i++) {
		memset(&pool[i], 0, sizeof(pool[i]));
		pool[i].type = (enum ibk_qp_type)(i % 5);
		pool[i].pkey_index = (uint16_t)(i == 3 ? cap : i == 4 ?
			0xffff : test_rng_below(cap + 2));
		pool[i].qkey = pool[i].type == IBK_QPT_GSI ? IBK_QKEY_GSI :
			       0x100u + i;
	}
	for (i = 0; i < 64; i++)
		ptrs[i] = hdrs[i];
	for (round = 0; round < 3000; round++) {
		size_t n = test_rng_below(65), got, want_acc = 0;
		uint16_t pk_burst, qk_burst;
		bool readable = round % 10 < 7;

		/* ACTIVE, ACTIVE_DEFER, or not readable: awaiting a refill,
		 * INIT or DOWN */
		ibk_port_set_state(&port, round % 10 == 6 ?
				   IBK_PORT_ACTIVE_DEFER : IBK_PORT_ACTIVE);
		pk_refill(&port.pkeys, model_pk, cap);
		if (round % 10 == 7)
			ibk_port_event(&port, IBK_EVENT_PKEY_CHANGE);
		else if (round % 10 == 8)
			ibk_port_set_state(&port, IBK_PORT_INIT);
		else if (round % 10 == 9)
			ibk_port_set_state(&port, IBK_PORT_DOWN);
		for (i = 0; i < n; i++) {
			const struct ibk_qp_keys *q = &pool[test_rng_below(16)];
			unsigned pkt = test_rng64() & 1 ?
				       model_pk[test_rng_below(cap)] ^
				       (unsigned)(test_rng64() & 0x8000u) :
				       (unsigned)test_rng64() & 0xffffu;
			uint32_t r = test_rng_below(3);
			uint8_t op = send_only(q->type);

			if (test_rng_below(16) == 0)
				op = (uint8_t)test_rng64();
			make_hdr_op(hdrs[i], op, pkt, r == 0 ? q->qkey :
				    r == 1 ? IBK_QKEY_GSI : 0x11111111u);
			if (test_rng_below(32) == 0)
				hdrs[i][1] = (uint8_t)(1 + test_rng_below(15));
			qps[i] = q;
		}
		got = rx_mixed_counted(qps, ptrs, verdicts,
				       round & 1 ? index : NULL, n, &pk_burst,
				       &qk_burst);
		for (i = 0; i < n; i++) {
			enum ibk_rx_verdict one = ibk_port_rx(&port, qps[i],
				hdrs[i], hdrs[i] + IBK_BTH_LEN);
			enum ibk_rx_verdict want = model_port(cap, readable,
				qps[i], hdrs[i], true);
			int want_index = qps[i]->pkey_index;

			if (qps[i]->type == IBK_QPT_GSI &&
			    want == IBK_RX_ACCEPT) {
				uint16_t gi = 0xeeee;

				want_index = model_gsi_index(cap,
							     hdr_pkey(hdrs[i]));
				ibk_port_rx_gsi(&port, hdrs[i],
						hdrs[i] + IBK_BTH_LEN, &gi);
				check(&c, gi == want_index,
				      "port_rx_gsi index %u, want %d", gi,
				      want_index);
				gsi_accepts++;
				/* the extra call counts nothing: accepted */
			}
			check(&c, verdicts[i] == one && one == want,
			      "mixed pkt %u to type %d idx %u: %s, alone %s, "
			      "model %s", i, qps[i]->type, qps[i]->pkey_index,
			      ibk_rx_verdict_name((enum ibk_rx_verdict)
						  verdicts[i]),
			      ibk_rx_verdict_name(one),
			      ibk_rx_verdict_name(want));
			check(&c, !(round & 1) || want != IBK_RX_ACCEPT ||
				  index[i] == want_index,
			      "mixed pkt %u to type %d: index %u, want %d", i,
			      qps[i]->type, index[i], want_index);
			want_acc += want == IBK_RX_ACCEPT;
			kinds[want & 15]++;
		}
		check_burst_counts(&c, "mixed", &port, n, got, want_acc,
				   pk_burst, qk_burst);
	}
	tap_ok(c.bad == 0 && gsi_accepts > 1000 &&
	       kinds[IBK_RX_ACCEPT] > 1000 && kinds[IBK_RX_DROP_PKEY] > 1000 &&
	       kinds[IBK_RX_DROP_QKEY] > 1000 && kinds[IBK_RX_DROP_PORT] > 1000 &&
	       kinds[IBK_RX_DROP_PKEY_INDEX] > 500 &&
	       kinds[IBK_RX_DROP_OPCODE] > 500 && kinds[IBK_RX_DROP_TVER] > 100,
	       "mixed-QP bursts == ibk_port_rx per packet == the model, "
	       "indices (QP1: first match) and counters as per packet, 3000 "
	       "bursts (%lu checks; %lu accept, %lu pkey, %lu qkey, %lu port, "
	       "%lu index, %lu opcode, %lu tver)", c.done,
	       kinds[IBK_RX_ACCEPT], kinds[IBK_RX_DROP_PKEY],
	       kinds[IBK_RX_DROP_QKEY], kinds[IBK_RX_DROP_PORT],
	       kinds[IBK_RX_DROP_PKEY_INDEX], kinds[IBK_RX_DROP_OPCODE],
	       kinds[IBK_RX_DROP_TVER]);
	tap_ok(ibk_port_rx_mixed(&port, qps, ptrs, 0, verdicts, index) == 0,
	       "an empty mixed burst accepts nothing");
}

/*
 * Mixed-QP bursts to RC, UC and UD QPs only, each on an index holding a
 * key, so that ibk_port_rx_mixed() decides whole bursts with its
 * branch-free compare: limited and full entries, packet keys of the
 * entry's base with either membership, random and invalid (0x0000,
 * 0x8000) keys, right and wrong Q_Keys (read for RC and UC too, where
 * they must not count). One packet in 128 gets a bad opcode or TVer, and
 * some rounds put one QP on an empty entry, so both the bursts decided
 * whole and the ones re-checked packet by packet occur. Each verdict must
 * be the model's and ibk_port_rx()'s, the counters as per packet.
 */
static void test_rx_mixed_keyed(void)
{
	static uint8_t hdrs[64][HDR_LEN];
	struct ibk_qp_keys pool[12];
	const struct ibk_qp_keys *qps[64];
	const void *ptrs[64];
	uint8_t verdicts[64];
	struct check c = { 0, 0 };
	uint32_t i, cap = 16, round;
	unsigned long kinds[16] = { 0 }, whole = 0;

	port_setup(cap, 1, 1);
	base_pool_fill(6);
	for (i = 0; i < 64; i++)
		ptrs[i] = hdrs[i];
	for (round = 0; round < 3000; round++) {
		size_t n = 1 + test_rng_below(64), got, want_acc = 0;
		uint16_t pk_burst, qk_burst;
		bool clean = true;

		for (i = 0; i < cap; i++) {
			model_pk[i] = rnd_pkey_entry(6);
			if (!(model_pk[i] & 0x7fffu) && round % 4)
				model_pk[i] |= base_pool[0];
		}
		pk_refill(&port.pkeys, model_pk, cap);
		for (i = 0; i < 12; i++) {
			memset(&pool[i], 0, sizeof(pool[i]));
			pool[i].type = (enum ibk_qp_type)(IBK_QPT_RC + i % 3);
			pool[i].pkey_index = (uint16_t)test_rng_below(cap);
			pool[i].qkey = (uint32_t)test_rng64();
		}
		for (i = 0; i < n; i++) {
			const struct ibk_qp_keys *q = &pool[test_rng_below(12)];
			unsigned entry = model_pk[q->pkey_index];
			uint32_t r = test_rng_below(8);
			unsigned pkt = r < 5 ? (entry ^ (r & 1 ? 0x8000u : 0)) :
				       r == 5 ? (unsigned)test_rng64() & 0xffffu :
				       r == 6 ? 0x0000 : 0x8000;
			uint8_t op = (uint8_t)(send_only(q->type) +
					       (q->type == IBK_QPT_UD ?
						test_rng_below(2) :
						test_rng_below(24)));

			if (test_rng_below(128) == 0) {
				op = (uint8_t)test_rng64();
				clean = false;
			}
			make_hdr_op(hdrs[i], op, pkt, test_rng64() & 1 ?
				    q->qkey : (uint32_t)test_rng64());
			if (test_rng_below(128) == 0) {
				hdrs[i][1] = (uint8_t)(1 + test_rng_below(15));
				clean = false;
			}
			clean &= (entry & 0x7fffu) != 0;
			qps[i] = q;
		}
		whole += clean;
		got = rx_mixed_counted(qps, ptrs, verdicts, NULL, n, &pk_burst,
				       &qk_burst);
		for (i = 0; i < n; i++) {
			enum ibk_rx_verdict one = ibk_port_rx(&port, qps[i],
				hdrs[i], hdrs[i] + IBK_BTH_LEN);
			enum ibk_rx_verdict want = model_port(cap, true,
				qps[i], hdrs[i], true);

			check(&c, verdicts[i] == one && one == want,
			      "keyed pkt %u to type %d entry %04x key %04x: "
			      "%s, alone %s, model %s", i, qps[i]->type,
			      model_pk[qps[i]->pkey_index], hdr_pkey(hdrs[i]),
			      ibk_rx_verdict_name((enum ibk_rx_verdict)
						  verdicts[i]),
			      ibk_rx_verdict_name(one),
			      ibk_rx_verdict_name(want));
			want_acc += want == IBK_RX_ACCEPT;
			kinds[want & 15]++;
		}
		check_burst_counts(&c, "keyed", &port, n, got, want_acc,
				   pk_burst, qk_burst);
	}
	tap_ok(c.bad == 0 && whole > 500 && kinds[IBK_RX_ACCEPT] > 1000 &&
	       kinds[IBK_RX_DROP_PKEY] > 1000 &&
	       kinds[IBK_RX_DROP_QKEY] > 1000 &&
	       kinds[IBK_RX_DROP_OPCODE] > 100 && kinds[IBK_RX_DROP_TVER] > 100,
	       "RC/UC/UD-only mixed bursts (%lu decided whole) == "
	       "ibk_port_rx per packet == the model, counters as per packet "
	       "(%lu checks; %lu accept, %lu pkey, %lu qkey, %lu opcode, "
	       "%lu tver)", whole, c.done, kinds[IBK_RX_ACCEPT],
	       kinds[IBK_RX_DROP_PKEY], kinds[IBK_RX_DROP_QKEY],
	       kinds[IBK_RX_DROP_OPCODE], kinds[IBK_RX_DROP_TVER]);
}

/* ------------------------------------------------------------------------
 * Refill tickets (issue 8 item 1)
 * ------------------------------------------------------------------------ */

static uint32_t count_of(const struct ibk__table *h)
{
	return ibk_latch_read_begin(&h->latch);
}

/* The exact scenario: the consumer takes its ticket and reads the device;
 * the subnet manager removes a partition and PKEY_CHANGE arrives; the
 * refill of what was read before must not end the stale window. */
static void test_ticket_scenario(void)
{
	static const ibk_pkey_t before[] = { 0xffff, 0x8001, 0x8002 };
	static const ibk_pkey_t after[] = { 0xffff, 0x8001 };
	struct ibk_pkey_table *t = &port.pkeys;
	struct ibk_gid_table *gt = &port.gids;
	struct ibk_gid_entry ge[2];
	struct ibk_qp_keys qp;
	uint8_t hdr[HDR_LEN];
	uint32_t ticket, count;
	ibk_pkey_t v;

	port_setup(4, 4, 1);
	pk_refill(t, before, 3);
	memset(&qp, 0, sizeof(qp));
	qp.type = IBK_QPT_UD;
	qp.pkey_index = 2;
	qp.qkey = 0x11111111u;
	make_hdr(hdr, 0x8002, qp.qkey);

	ticket = ibk_pkey_table_refill_ticket(t);
	/* ... the consumer reads the device: it still holds 0x8002 ... */
	ibk_port_event(&port, IBK_EVENT_PKEY_CHANGE);	/* 0x8002 removed */
	count = count_of(&t->hdr);
	tap_ok(ibk_pkey_table_refill(t, before, 3, ticket) == IBK_ESTALE,
	       "ticket, PKEY_CHANGE, refill with the old ticket: IBK_ESTALE");
	tap_ok(count_of(&t->hdr) == count,
	       "the refused refill wrote nothing: the count did not move");
	tap_ok(ibk_pkey_table_get(t, 2, &v) == IBK_ESTALE &&
	       ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN) ==
	       IBK_RX_DROP_PORT,
	       "the table still awaits a refill: reads IBK_ESTALE, the "
	       "removed partition's packet gets DROP_PORT, not ACCEPT");
	ticket = ibk_pkey_table_refill_ticket(t);
	tap_ok(ibk_pkey_table_refill(t, after, 2, ticket) == IBK_OK &&
	       ibk_pkey_table_get(t, 2, &v) == IBK_ENOENT &&
	       ibk_pkey_table_find(t, 0x8002, NULL) == IBK_ENOENT &&
	       ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN) ==
	       IBK_RX_DROP_PKEY,
	       "a fresh ticket, the device read again: refill IBK_OK, 0x8002 "
	       "gone, its packet a P_Key violation");

	memset(ge, 0, sizeof(ge));
	ge[0].gid = ibk_gid_make(IBK_GID_DEFAULT_PREFIX, 0x1111);
	ge[1].gid = ibk_gid_from_ipv4(0xc0a80001u);
	ge[0].type = IBK_GID_TYPE_ROCE_V2;
	ge[1].type = IBK_GID_TYPE_ROCE_V2;
	gid_refill(gt, ge, 2);
	ticket = ibk_gid_table_refill_ticket(gt);
	ibk_port_event(&port, IBK_EVENT_GID_CHANGE);	/* address deleted */
	count = count_of(&gt->hdr);
	tap_ok(ibk_gid_table_refill(gt, ge, 2, ticket) == IBK_ESTALE &&
	       count_of(&gt->hdr) == count &&
	       ibk_gid_table_find(gt, &ge[1].gid, IBK_GID_TYPE_ANY, NULL) ==
	       IBK_ESTALE,
	       "GID: ticket, GID_CHANGE, old ticket: IBK_ESTALE, count "
	       "unchanged, still awaiting");
	ticket = ibk_gid_table_refill_ticket(gt);
	tap_ok(ibk_gid_table_refill(gt, ge, 1, ticket) == IBK_OK &&
	       ibk_gid_table_find(gt, &ge[1].gid, IBK_GID_TYPE_ANY, NULL) ==
	       IBK_ENOENT,
	       "GID: a fresh ticket works and the deleted address is gone");
}

/* Every change that marks a table awaiting a refill refuses a ticket taken
 * before it, for the tables it marks and those only. */
enum change_kind { CH_EVENT, CH_PORT_STATE, CH_INVALIDATE, CH_TABLE_STATE,
		   CH_RESET };

struct change {
	const char *name;
	enum change_kind kind;
	int arg;
	bool pkeys, gids;	/* the tables it marks */
	bool down;		/* leaves the port not readable */
};

static void apply_change(const struct change *ch)
{
	switch (ch->kind) {
	case CH_EVENT:
		ibk_port_event(&port, (enum ibk_event_type)ch->arg);
		break;
	case CH_PORT_STATE:
		ibk_port_set_state(&port, (enum ibk_port_state)ch->arg);
		break;
	case CH_INVALIDATE:
		if (ch->pkeys)
			ibk_pkey_table_invalidate(&port.pkeys);
		else
			ibk_gid_table_invalidate(&port.gids);
		break;
	case CH_TABLE_STATE:
		if (ch->pkeys)
			ibk_pkey_table_set_state(&port.pkeys,
						 (enum ibk_port_state)ch->arg);
		else
			ibk_gid_table_set_state(&port.gids,
						(enum ibk_port_state)ch->arg);
		break;
	case CH_RESET:
		ibk_port_reset(&port);
		break;
	}
}

static void test_ticket_changes(void)
{
	static const struct change changes[] = {
		{ "PKEY_CHANGE", CH_EVENT, IBK_EVENT_PKEY_CHANGE, 1, 0, 0 },
		{ "GID_CHANGE", CH_EVENT, IBK_EVENT_GID_CHANGE, 0, 1, 0 },
		{ "LID_CHANGE", CH_EVENT, IBK_EVENT_LID_CHANGE, 1, 1, 0 },
		{ "SM_CHANGE", CH_EVENT, IBK_EVENT_SM_CHANGE, 1, 1, 0 },
		{ "CLIENT_REREGISTER", CH_EVENT, IBK_EVENT_CLIENT_REREGISTER,
		  1, 1, 0 },
		{ "PORT_ACTIVE", CH_EVENT, IBK_EVENT_PORT_ACTIVE, 1, 1, 0 },
		{ "PORT_ERR", CH_EVENT, IBK_EVENT_PORT_ERR, 1, 1, 1 },
		{ "DEVICE_FATAL", CH_EVENT, IBK_EVENT_DEVICE_FATAL, 1, 1, 1 },
		{ "port_set_state(DOWN)", CH_PORT_STATE, IBK_PORT_DOWN, 1, 1, 1 },
		{ "port_set_state(INIT)", CH_PORT_STATE, IBK_PORT_INIT, 1, 1, 1 },
		{ "pkey_table_invalidate", CH_INVALIDATE, 0, 1, 0, 0 },
		{ "gid_table_invalidate", CH_INVALIDATE, 0, 0, 1, 0 },
		{ "pkey_table_set_state(DOWN)", CH_TABLE_STATE, IBK_PORT_DOWN,
		  1, 0, 1 },
		{ "gid_table_set_state(INIT)", CH_TABLE_STATE, IBK_PORT_INIT,
		  0, 1, 1 },
		{ "ibk_port_reset", CH_RESET, 0, 1, 1, 1 },
	};
	static const ibk_pkey_t keys[] = { 0xffff, 0x8001 };
	struct ibk_gid_entry ge;
	size_t i;

	memset(&ge, 0, sizeof(ge));
	ge.gid = ibk_gid_make(IBK_GID_DEFAULT_PREFIX, 7);
	ge.type = IBK_GID_TYPE_IB;
	for (i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
		const struct change *ch = &changes[i];
		uint32_t pt, gt, pc, gc;
		int prc, grc, pread, gread;
		ibk_pkey_t v;
		bool ok;

		port_setup(2, 2, 1);
		pk_refill(&port.pkeys, keys, 2);
		gid_refill(&port.gids, &ge, 1);
		pt = ibk_pkey_table_refill_ticket(&port.pkeys);
		gt = ibk_gid_table_refill_ticket(&port.gids);
		apply_change(ch);
		pc = count_of(&port.pkeys.hdr);
		gc = count_of(&port.gids.hdr);
		prc = ibk_pkey_table_refill(&port.pkeys, keys, 2, pt);
		grc = ibk_gid_table_refill(&port.gids, &ge, 1, gt);
		ok = prc == (ch->pkeys ? IBK_ESTALE : IBK_OK) &&
		     grc == (ch->gids ? IBK_ESTALE : IBK_OK) &&
		     (!ch->pkeys || count_of(&port.pkeys.hdr) == pc) &&
		     (!ch->gids || count_of(&port.gids.hdr) == gc);
		if (ch->down) {
			/* back up, as the port comes back: still awaiting */
			if (ch->kind == CH_TABLE_STATE)
				apply_change(&(struct change){ ch->name,
					CH_TABLE_STATE, IBK_PORT_ACTIVE,
					ch->pkeys, ch->gids, 0 });
			else
				ibk_port_set_state(&port, IBK_PORT_ACTIVE);
		}
		pread = ibk_pkey_table_get(&port.pkeys, 0, &v);
		gread = ibk_gid_table_find(&port.gids, &ge.gid,
					   IBK_GID_TYPE_ANY, NULL);
		ok = ok && pread == (ch->pkeys ? IBK_ESTALE : IBK_OK) &&
		     gread == (ch->gids ? IBK_ESTALE : 0);
		tap_ok(ok, "%s: a ticket from before it is refused (IBK_ESTALE, "
		       "count unchanged) for %s%s%s only; the table%s still "
		       "await%s a refill (refills %d/%d, reads %d/%d)",
		       ch->name, ch->pkeys ? "P_Key" : "",
		       ch->pkeys && ch->gids ? " and " : "",
		       ch->gids ? "GID" : "", ch->pkeys && ch->gids ? "s" : "",
		       ch->pkeys && ch->gids ? "" : "s", prc, grc, pread,
		       gread);
		tap_ok(pk_refill(&port.pkeys, keys, 2) == IBK_OK &&
		       gid_refill(&port.gids, &ge, 1) == IBK_OK &&
		       ibk_pkey_table_get(&port.pkeys, 1, &v) == IBK_OK &&
		       v == 0x8001 &&
		       ibk_gid_table_find(&port.gids, &ge.gid,
					  IBK_GID_TYPE_ANY, NULL) == 0,
		       "%s: then fresh tickets refill and end the window",
		       ch->name);
	}
}

/* What is not a change event leaves a ticket good. */
static void test_ticket_non_events(void)
{
	static const ibk_pkey_t keys[] = { 0xffff, 0x8001 };
	struct ibk_gid_entry ge;
	struct ibk_gid g;
	uint32_t pt, gt;
	ibk_pkey_t v;

	memset(&ge, 0, sizeof(ge));
	ge.gid = ibk_gid_make(IBK_GID_DEFAULT_PREFIX, 7);
	g = ibk_gid_make(IBK_GID_DEFAULT_PREFIX, 8);
	port_setup(2, 2, 1);
	pk_refill(&port.pkeys, keys, 2);
	gid_refill(&port.gids, &ge, 1);
	pt = ibk_pkey_table_refill_ticket(&port.pkeys);
	gt = ibk_gid_table_refill_ticket(&port.gids);
	ibk_port_set_state(&port, IBK_PORT_ACTIVE);
	ibk_port_set_state(&port, IBK_PORT_ARMED);
	ibk_port_set_state(&port, IBK_PORT_ACTIVE_DEFER);
	ibk_pkey_table_get(&port.pkeys, 0, &v);
	ibk_gid_table_find(&port.gids, &g, IBK_GID_TYPE_ANY, NULL);
	tap_ok(ibk_pkey_table_refill(&port.pkeys, keys, 2, pt) == IBK_OK &&
	       ibk_gid_table_refill(&port.gids, &ge, 1, gt) == IBK_OK,
	       "moves between ARMED, ACTIVE and ACTIVE_DEFER and reads are "
	       "not change events: the tickets still refill");

	/* A consumer that sets the port state inside its refill loop:
	 * ticket, query_port, set_state, read the tables, refill. Setting
	 * the state the port already has is no event, or the loop would
	 * never end. */
	ibk_port_event(&port, IBK_EVENT_PKEY_CHANGE);
	pt = ibk_pkey_table_refill_ticket(&port.pkeys);
	ibk_port_set_state(&port, IBK_PORT_ACTIVE_DEFER);
	tap_ok(ibk_pkey_table_refill(&port.pkeys, keys, 2, pt) == IBK_OK &&
	       ibk_pkey_table_get(&port.pkeys, 1, &v) == IBK_OK,
	       "awaiting a refill, setting the state the port already has "
	       "refuses no ticket (a set-state-then-refill loop ends)");

	/* but a ticket taken while the port was DOWN read the device when
	 * its tables meant nothing (ibv_query_pkey(3)) */
	ibk_port_set_state(&port, IBK_PORT_DOWN);
	pt = ibk_pkey_table_refill_ticket(&port.pkeys);
	ibk_port_set_state(&port, IBK_PORT_ACTIVE);
	tap_ok(ibk_pkey_table_refill(&port.pkeys, keys, 2, pt) == IBK_ESTALE &&
	       ibk_pkey_table_get(&port.pkeys, 1, &v) == IBK_ESTALE,
	       "a ticket taken while DOWN is refused once the port is ACTIVE "
	       "again: what was read then is not the active port's table");
	tap_ok(ibk_pkey_table_refill(NULL, keys, 2, 0) == IBK_EINVAL &&
	       ibk_gid_table_refill(NULL, &ge, 1, 0) == IBK_EINVAL &&
	       ibk_pkey_table_refill(&port.pkeys, keys, 3,
				     ibk_pkey_table_refill_ticket(&port.pkeys))
	       == IBK_ENOSPC &&
	       ibk_pkey_table_get(&port.pkeys, 1, &v) == IBK_ESTALE,
	       "a refill refused for its arguments changes nothing either");
}

/*
 * An entry set is a change (ib_tables.h, the refill tickets): a refill whose ticket
 * was taken before it read the device without the set's entry, and would
 * silently revert it; it is refused, and the set entry stays.
 */
static void test_ticket_entry_set(void)
{
	static const ibk_pkey_t keys[] = { 0xffff, 0x8001 };
	struct ibk_gid_entry ge;
	struct ibk_gid g;
	struct ibk_qp_keys qp;
	uint8_t hdr[HDR_LEN];
	uint32_t pt, gt;
	ibk_pkey_t v;

	memset(&ge, 0, sizeof(ge));
	ge.gid = ibk_gid_make(IBK_GID_DEFAULT_PREFIX, 7);
	ge.type = IBK_GID_TYPE_IB;
	g = ibk_gid_make(IBK_GID_DEFAULT_PREFIX, 8);
	port_setup(2, 2, 1);
	pk_refill(&port.pkeys, keys, 2);
	gid_refill(&port.gids, &ge, 1);
	pt = ibk_pkey_table_refill_ticket(&port.pkeys);	/* device read ... */
	gt = ibk_gid_table_refill_ticket(&port.gids);
	ibk_pkey_table_set(&port.pkeys, 1, 0x8003);	/* ... the set ... */
	ibk_gid_table_set(&port.gids, 1, &g, IBK_GID_TYPE_IB);
	tap_ok(ibk_pkey_table_refill(&port.pkeys, keys, 2, pt) == IBK_ESTALE &&
	       ibk_gid_table_refill(&port.gids, &ge, 1, gt) == IBK_ESTALE,
	       "an entry set is a change event: a refill with a ticket from "
	       "before it is refused (IBK_ESTALE), P_Key and GID table");
	memset(&qp, 0, sizeof(qp));
	qp.type = IBK_QPT_UD;
	qp.pkey_index = 1;
	qp.qkey = 0x11111111u;
	make_hdr(hdr, 0x8003, qp.qkey);
	reset_counters();
	tap_ok(ibk_pkey_table_get(&port.pkeys, 1, &v) == IBK_OK &&
	       v == 0x8003 &&
	       ibk_gid_table_find(&port.gids, &g, IBK_GID_TYPE_ANY, NULL) == 1 &&
	       ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN) ==
	       IBK_RX_ACCEPT &&
	       ibk_counter16_read(&port.pkey_violations) == 0,
	       "the set entries stay: a packet of the new key 0x8003 is "
	       "accepted, not dropped and counted");
	tap_ok(pk_refill(&port.pkeys, keys, 2) == IBK_OK &&
	       gid_refill(&port.gids, &ge, 1) == IBK_OK,
	       "a ticket taken after the set refills");
}

/*
 * Refill during an outage: entering ARMED or ACTIVE from any other state
 * is a change event (ib_tables.h, the refill tickets), so what a ticket taken while
 * the port was down read is never served, whether its refill came before
 * or after the port came up (ibv_query_pkey(3): the table is only defined
 * while ARMED or ACTIVE).
 */
static void test_ticket_outage(void)
{
	static const ibk_pkey_t keys[] = { 0xffff, 0x8001 };
	static const enum ibk_port_state up[] = {
		IBK_PORT_ARMED, IBK_PORT_ACTIVE, IBK_PORT_ACTIVE_DEFER,
	};
	struct ibk_gid_entry ge;
	uint32_t pt, gt;
	unsigned i, bad_before = 0, bad_after = 0, bad_fresh = 0;
	ibk_pkey_t v;

	memset(&ge, 0, sizeof(ge));
	ge.gid = ibk_gid_make(IBK_GID_DEFAULT_PREFIX, 7);
	ge.type = IBK_GID_TYPE_IB;
	for (i = 0; i < 2 * 3; i++) {
		enum ibk_port_state down = i < 3 ? IBK_PORT_DOWN : IBK_PORT_INIT;

		/* the refill first, then the port comes up */
		port_setup(2, 2, 1);
		ibk_port_set_state(&port, down);
		pt = ibk_pkey_table_refill_ticket(&port.pkeys);
		gt = ibk_gid_table_refill_ticket(&port.gids);
		ibk_pkey_table_refill(&port.pkeys, keys, 2, pt);
		ibk_gid_table_refill(&port.gids, &ge, 1, gt);
		ibk_port_set_state(&port, up[i % 3]);
		bad_before += ibk_pkey_table_get(&port.pkeys, 1, &v) !=
			      IBK_ESTALE ||
			      ibk_gid_table_find(&port.gids, &ge.gid,
						 IBK_GID_TYPE_ANY, NULL) !=
			      IBK_ESTALE;

		/* the port comes up, then the refill */
		port_setup(2, 2, 1);
		ibk_port_set_state(&port, down);
		pt = ibk_pkey_table_refill_ticket(&port.pkeys);
		gt = ibk_gid_table_refill_ticket(&port.gids);
		ibk_port_set_state(&port, up[i % 3]);
		bad_after += ibk_pkey_table_refill(&port.pkeys, keys, 2, pt) !=
			     IBK_ESTALE ||
			     ibk_gid_table_refill(&port.gids, &ge, 1, gt) !=
			     IBK_ESTALE ||
			     ibk_pkey_table_get(&port.pkeys, 1, &v) != IBK_ESTALE;

		/* a ticket taken once the port is up is honoured */
		bad_fresh += pk_refill(&port.pkeys, keys, 2) != IBK_OK ||
			     gid_refill(&port.gids, &ge, 1) != IBK_OK ||
			     ibk_pkey_table_get(&port.pkeys, 1, &v) != IBK_OK ||
			     v != 0x8001;
	}
	tap_ok(bad_before == 0, "ticket while DOWN or INIT, refill, then "
	       "ARMED, ACTIVE or ACTIVE_DEFER: the tables await a refill "
	       "(%u of 6 did not)", bad_before);
	tap_ok(bad_after == 0, "ticket while DOWN or INIT, the port up, then "
	       "the refill: refused with IBK_ESTALE, still awaiting (%u of 6 "
	       "not)", bad_after);
	tap_ok(bad_fresh == 0, "a ticket taken after the port came up refills "
	       "(%u of 6 not)", bad_fresh);
}

/* ------------------------------------------------------------------------
 * State bounce (issue 8 item 2)
 * ------------------------------------------------------------------------ */

struct bounce {
	const char *name;
	int down_kind, down_arg;	/* 0 port set_state, 1 event, 2 table set_state */
	int up_kind, up_arg;
};

static void bounce_apply(int kind, int arg)
{
	if (kind == 0)
		ibk_port_set_state(&port, (enum ibk_port_state)arg);
	else if (kind == 1)
		ibk_port_event(&port, (enum ibk_event_type)arg);
	else {
		ibk_pkey_table_set_state(&port.pkeys,
					 (enum ibk_port_state)arg);
		ibk_gid_table_set_state(&port.gids, (enum ibk_port_state)arg);
	}
}

/*
 * The subnet manager removes partition 0x8005 while the port is down. The
 * cache cannot know: whatever path brings the port back, its tables must
 * await a refill, and a 0x8005 packet must not be accepted meanwhile.
 */
static void test_state_bounce(void)
{
	static const struct bounce paths[] = {
		{ "set_state ACTIVE -> DOWN -> ACTIVE", 0, IBK_PORT_DOWN, 0,
		  IBK_PORT_ACTIVE },
		{ "set_state ACTIVE -> INIT -> ACTIVE", 0, IBK_PORT_INIT, 0,
		  IBK_PORT_ACTIVE },
		{ "set_state ACTIVE -> DOWN -> ARMED", 0, IBK_PORT_DOWN, 0,
		  IBK_PORT_ARMED },
		{ "set_state ACTIVE -> DOWN -> ACTIVE_DEFER", 0, IBK_PORT_DOWN,
		  0, IBK_PORT_ACTIVE_DEFER },
		{ "PORT_ERR then PORT_ACTIVE", 1, IBK_EVENT_PORT_ERR, 1,
		  IBK_EVENT_PORT_ACTIVE },
		{ "PORT_ERR then set_state ACTIVE", 1, IBK_EVENT_PORT_ERR, 0,
		  IBK_PORT_ACTIVE },
		{ "DEVICE_FATAL then set_state ACTIVE", 1,
		  IBK_EVENT_DEVICE_FATAL, 0, IBK_PORT_ACTIVE },
		{ "table set_state ACTIVE -> DOWN -> ACTIVE", 2, IBK_PORT_DOWN,
		  2, IBK_PORT_ACTIVE },
		{ "table set_state ACTIVE -> INIT -> ARMED", 2, IBK_PORT_INIT,
		  2, IBK_PORT_ARMED },
	};
	static const ibk_pkey_t before[] = { 0xffff, 0x8005 };
	static const ibk_pkey_t after[] = { 0xffff };
	struct ibk_gid_entry ge;
	struct ibk_qp_keys qp;
	struct ibk_pkey_ref pr;
	struct ibk_gid_ref gr;
	uint8_t hdr[HDR_LEN], gsi_hdr[HDR_LEN];
	ibk_pkey_t v;
	size_t i;

	memset(&ge, 0, sizeof(ge));
	ge.gid = ibk_gid_make(IBK_GID_DEFAULT_PREFIX, 5);
	memset(&qp, 0, sizeof(qp));
	qp.type = IBK_QPT_UD;
	qp.pkey_index = 1;
	qp.qkey = 0x11111111u;
	make_hdr(hdr, 0x8005, qp.qkey);
	make_hdr(gsi_hdr, 0x8005, IBK_QKEY_GSI);
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		const struct bounce *b = &paths[i];

		port_setup(2, 2, 1);
		pk_refill(&port.pkeys, before, 2);
		gid_refill(&port.gids, &ge, 1);
		ibk_pkey_table_ref_get(&port.pkeys, 1, &pr);
		ibk_gid_table_ref_get(&port.gids, 0, &gr);
		bounce_apply(b->down_kind, b->down_arg);
		bounce_apply(b->up_kind, b->up_arg);
		reset_counters();
		tap_ok(ibk_pkey_table_get(&port.pkeys, 1, &v) == IBK_ESTALE &&
		       ibk_gid_table_find(&port.gids, &ge.gid,
					  IBK_GID_TYPE_ANY, NULL) == IBK_ESTALE &&
		       !ibk_pkey_table_ref_fresh(&port.pkeys, &pr) &&
		       !ibk_gid_table_ref_fresh(&port.gids, &gr),
		       "%s: both tables await a refill, references stale",
		       b->name);
		tap_ok(ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN) ==
		       IBK_RX_DROP_PORT &&
		       ibk_port_rx_gsi(&port, gsi_hdr, gsi_hdr + IBK_BTH_LEN,
				       NULL) == IBK_RX_DROP_PORT &&
		       ibk_counter16_read(&port.pkey_violations) == 0,
		       "%s: a packet of the pre-outage partition 0x8005 gets "
		       "DROP_PORT (UD and QP1), not ACCEPT", b->name);
		tap_ok(pk_refill(&port.pkeys, after, 1) == IBK_OK &&
		       ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN) ==
		       IBK_RX_DROP_PKEY &&
		       ibk_port_rx_gsi(&port, gsi_hdr, gsi_hdr + IBK_BTH_LEN,
				       NULL) == IBK_RX_DROP_PKEY &&
		       ibk_counter16_read(&port.pkey_violations) == 2,
		       "%s: after the refill from the device, 0x8005 is a "
		       "counted P_Key violation", b->name);
	}

	/* moves among the readable states are no outage */
	port_setup(2, 2, 1);
	pk_refill(&port.pkeys, before, 2);
	ibk_port_set_state(&port, IBK_PORT_ARMED);
	ibk_port_set_state(&port, IBK_PORT_ACTIVE);
	ibk_port_set_state(&port, IBK_PORT_ACTIVE_DEFER);
	tap_ok(ibk_pkey_table_get(&port.pkeys, 1, &v) == IBK_OK &&
	       v == 0x8005 &&
	       ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN) ==
	       IBK_RX_ACCEPT,
	       "ACTIVE -> ARMED -> ACTIVE -> ACTIVE_DEFER keeps the table: "
	       "all three are readable states (ACTIVE_DEFER = 5 reads and "
	       "receives as ACTIVE)");

	/* a port that came up before its first refill serves nothing */
	port_setup(2, 2, 1);
	reset_counters();
	tap_ok(ibk_pkey_table_get(&port.pkeys, 0, &v) == IBK_ESTALE &&
	       ibk_gid_table_find(&port.gids, &ge.gid, IBK_GID_TYPE_ANY,
				  NULL) == IBK_ESTALE &&
	       ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN) ==
	       IBK_RX_DROP_PORT &&
	       ibk_counter16_read(&port.pkey_violations) == 0,
	       "init then ACTIVE, no refill yet: reads IBK_ESTALE, packets "
	       "DROP_PORT uncounted (the table is not the device's yet)");
	tap_ok(pk_refill(&port.pkeys, before, 2) == IBK_OK &&
	       ibk_pkey_table_get(&port.pkeys, 1, &v) == IBK_OK &&
	       v == 0x8005 &&
	       ibk_gid_table_find(&port.gids, &ge.gid, IBK_GID_TYPE_ANY,
				  NULL) == IBK_ESTALE,
	       "init then ACTIVE: the first P_Key refill makes that table "
	       "readable; the GID table still awaits its own");
}

/* ------------------------------------------------------------------------
 * Generations never reused, never-fresh references (issue 8 item 3)
 * ------------------------------------------------------------------------ */

/* A zeroed reference, and one a failed call handed back, is never fresh. */
static void test_never_fresh(void)
{
	static const ibk_pkey_t keys[] = { 0xffff, 0x0000, 0x8001 };
	struct ibk_pkey_table *t = &port.pkeys;
	struct ibk_gid_table *gt = &port.gids;
	struct ibk_pkey_ref zero_p, r;
	struct ibk_gid_ref zero_g, g;
	struct ibk_gid_entry ge;
	struct ibk_gid zgid;
	struct check c = { 0, 0 };
	uint32_t prev = 0, now, step;
	int rc;

	memset(&zero_p, 0, sizeof(zero_p));
	memset(&zero_g, 0, sizeof(zero_g));
	memset(&zgid, 0, sizeof(zgid));
	memset(&ge, 0, sizeof(ge));
	ge.gid = ibk_gid_make(IBK_GID_DEFAULT_PREFIX, 9);
	ibk_port_init(&port, pk_cells, 3, pk_slots, IBK_PKEY_HASH_SLOTS(3),
		      gid_cells, 2, gid_slots, IBK_HASH_SLOTS(2));
	tap_ok(!ibk_pkey_table_ref_fresh(t, &zero_p) &&
	       !ibk_gid_table_ref_fresh(gt, &zero_g),
	       "right after init a zeroed reference is not fresh");
	ibk_port_set_state(&port, IBK_PORT_ACTIVE);

	/* each failing call, given a reference that read fresh before */
	pk_refill(t, keys, 3);
	gid_refill(gt, &ge, 1);
#define FAILS_P(call, want, what)					\
	do {								\
		ibk_pkey_table_ref_get(t, 0, &r);			\
		rc = (call);						\
		check(&c, rc == (want) && !ibk_pkey_table_ref_fresh(t, &r), \
		      "%s: rc %d, fresh %d", what, rc,			\
		      ibk_pkey_table_ref_fresh(t, &r));			\
	} while (0)
#define FAILS_G(call, want, what)					\
	do {								\
		ibk_gid_table_ref_get(gt, 0, &g);			\
		rc = (call);						\
		check(&c, rc == (want) && !ibk_gid_table_ref_fresh(gt, &g), \
		      "%s: rc %d, fresh %d", what, rc,			\
		      ibk_gid_table_ref_fresh(gt, &g));			\
	} while (0)
	FAILS_P(ibk_pkey_table_ref_get(t, 3, &r), IBK_ERANGE, "ref_get ERANGE");
	FAILS_P(ibk_pkey_table_ref_get(t, 1, &r), IBK_ENOENT, "ref_get ENOENT");
	FAILS_P(ibk_pkey_table_ref_get(NULL, 0, &r), IBK_EINVAL,
		"ref_get NULL table");
	FAILS_P(ibk_pkey_table_ref_find(t, 0x8000, &r), IBK_EINVAL,
		"ref_find invalid key");
	FAILS_P(ibk_pkey_table_ref_find(t, 0x0007, &r), IBK_ENOENT,
		"ref_find ENOENT");
	FAILS_P(ibk_pkey_table_ref_find(NULL, 0xffff, &r), IBK_EINVAL,
		"ref_find NULL table");
	FAILS_G(ibk_gid_table_ref_get(gt, 2, &g), IBK_ERANGE,
		"gid ref_get ERANGE");
	FAILS_G(ibk_gid_table_ref_get(gt, 1, &g), IBK_ENOENT,
		"gid ref_get ENOENT");
	FAILS_G(ibk_gid_table_ref_find(gt, &zgid, IBK_GID_TYPE_ANY, &g),
		IBK_EINVAL, "gid ref_find zero GID");
	FAILS_G(ibk_gid_table_ref_find(gt, &ge.gid, (enum ibk_gid_type)5, &g),
		IBK_EINVAL, "gid ref_find bad type");
	FAILS_G(ibk_gid_table_ref_find(gt, &zero_g.gid, IBK_GID_TYPE_IB, &g),
		IBK_EINVAL, "gid ref_find zero GID, a type");
	FAILS_G(ibk_gid_table_ref_find(NULL, &ge.gid, IBK_GID_TYPE_ANY, &g),
		IBK_EINVAL, "gid ref_find NULL table");
	g.generation = count_of(&gt->hdr);
	ge.gid.raw[15] ^= 1;
	rc = ibk_gid_table_ref_find(gt, &ge.gid, IBK_GID_TYPE_ANY, &g);
	ge.gid.raw[15] ^= 1;
	check(&c, rc == IBK_ENOENT && !ibk_gid_table_ref_fresh(gt, &g),
	      "gid ref_find ENOENT");
	/* awaiting a refill, then DOWN: a reference holding the generation
	 * the table is at must not come back fresh from the failure */
	ibk_port_event(&port, IBK_EVENT_PKEY_CHANGE);
	ibk_port_event(&port, IBK_EVENT_GID_CHANGE);
	r.generation = count_of(&t->hdr);
	check(&c, ibk_pkey_table_ref_get(t, 0, &r) == IBK_ESTALE &&
	      !ibk_pkey_table_ref_fresh(t, &r), "ref_get ESTALE");
	r.generation = count_of(&t->hdr);
	check(&c, ibk_pkey_table_ref_find(t, 0xffff, &r) == IBK_ESTALE &&
	      !ibk_pkey_table_ref_fresh(t, &r), "ref_find ESTALE");
	g.generation = count_of(&gt->hdr);
	check(&c, ibk_gid_table_ref_get(gt, 0, &g) == IBK_ESTALE &&
	      !ibk_gid_table_ref_fresh(gt, &g), "gid ref_get ESTALE");
	/* an argument error comes before the table's state, whatever it is */
	FAILS_G(ibk_gid_table_ref_find(gt, &zgid, IBK_GID_TYPE_ANY, &g),
		IBK_EINVAL, "gid ref_find zero GID, awaiting a refill");
	check(&c, ibk_gid_table_find(gt, &zgid, IBK_GID_TYPE_IB, NULL) ==
	      IBK_EINVAL, "gid find zero GID, awaiting a refill");
	ibk_port_set_state(&port, IBK_PORT_DOWN);
	FAILS_G(ibk_gid_table_ref_find(gt, &zgid, IBK_GID_TYPE_ANY, &g),
		IBK_EINVAL, "gid ref_find zero GID, port DOWN");
	check(&c, ibk_gid_table_find(gt, &zgid, IBK_GID_TYPE_ANY, NULL) ==
	      IBK_EINVAL, "gid find zero GID, port DOWN");
	r.generation = count_of(&t->hdr);
	check(&c, ibk_pkey_table_ref_get(t, 0, &r) == IBK_ENOTREADY &&
	      !ibk_pkey_table_ref_fresh(t, &r), "ref_get ENOTREADY");
	g.generation = count_of(&gt->hdr);
	check(&c, ibk_gid_table_ref_find(gt, &ge.gid, IBK_GID_TYPE_ANY, &g) ==
	      IBK_ENOTREADY && !ibk_gid_table_ref_fresh(gt, &g),
	      "gid ref_find ENOTREADY");
#undef FAILS_P
#undef FAILS_G
	tap_ok(c.bad == 0, "a reference a failed ref_get/ref_find handed back "
	       "is never fresh, whatever the error (%lu checks)", c.done);

	/* across the wrap: the count never takes 0 or 1, so a zeroed or a
	 * failed reference never reads fresh, at any step */
	c.bad = c.done = 0;
	port_setup(3, 2, 1);
	ibk_latch_init(&t->hdr.latch, 0xfffffff0u);
	ibk_latch_init(&gt->hdr.latch, 0xfffffff1u);
	ibk_port_set_state(&port, IBK_PORT_ACTIVE);
	for (step = 0; step < 40; step++) {
		if (step % 3 == 0)
			pk_refill(t, keys, 3);
		else
			ibk_pkey_table_set(t, 2, (ibk_pkey_t)(0x8001 + step));
		gid_refill(gt, &ge, 1);
		now = count_of(&t->hdr);
		check(&c, now > 1 && count_of(&gt->hdr) > 1,
		      "step %u: count 0x%08x", step, now);
		if (step > 0)
			check(&c, now - prev == (prev == 0xfffffffeu ? 4u : 2u),
			      "step %u: 0x%08x after 0x%08x", step, now, prev);
		check(&c, !ibk_pkey_table_ref_fresh(t, &zero_p) &&
		      !ibk_gid_table_ref_fresh(gt, &zero_g),
		      "step %u: zeroed ref fresh at 0x%08x", step, now);
		ibk_pkey_table_ref_get(t, 0, &r);
		ibk_pkey_table_ref_get(t, 1, &r);	/* ENOENT */
		ibk_gid_table_ref_get(gt, 0, &g);
		ibk_gid_table_ref_get(gt, 7, &g);	/* ERANGE */
		check(&c, !ibk_pkey_table_ref_fresh(t, &r) &&
		      !ibk_gid_table_ref_fresh(gt, &g),
		      "step %u: failed ref fresh at 0x%08x", step, now);
		prev = now;
	}
	tap_ok(c.bad == 0 && prev < 0x100u,
	       "from 0xfffffff0 across the 32-bit wrap: the count skips 0 and "
	       "1 (0xfffffffe is followed by 2), zeroed and failed references "
	       "never fresh (%lu checks, ended at 0x%08x)", c.done, prev);
}

/* True if every entry and hash slot of both copies of both tables is empty
 * (white box: what ibk_port_reset() must leave). */
static bool port_storage_empty(uint32_t pk_cap, uint32_t gid_cap)
{
	uint32_t i, k;

	for (i = 0; i < pk_cap; i++)	/* the keys; links are no contents */
		if (ibk__load(&port.pkeys.cells[0][i].pkey, relaxed) != 0 ||
		    ibk__load(&port.pkeys.cells[1][i].pkey, relaxed) != 0)
			return false;
	for (i = 0; i < IBK_GID_CELLS(gid_cap); i++)
		for (k = 0; k < 4; k++)
			if (ibk__load(&gid_cells[i].word[k], relaxed) != 0)
				return false;
	for (i = 0; i <= port.pkeys.hdr.hash_mask; i++)
		if (ibk__load(&port.pkeys.hdr.slots[0][i].word, relaxed) ||
		    ibk__load(&port.pkeys.hdr.slots[1][i].word, relaxed))
			return false;
	for (i = 0; i <= port.gids.hdr.hash_mask; i++)
		if (ibk__load(&port.gids.hdr.slots[0][i].word, relaxed) ||
		    ibk__load(&port.gids.hdr.slots[1][i].word, relaxed))
			return false;
	return true;
}

/*
 * ibk_port_reset() after many updates, from two starting counts (the one
 * init gives, and one just below the wrap): every reference taken before
 * stays stale through the refill and as many updates again as ran before,
 * where restarting the generations would have brought each back to fresh.
 */
static void test_port_reset(void)
{
	static struct ibk_pkey_ref pold[200];
	static struct ibk_gid_ref gold[200];
	struct ibk_pkey_table *t = &port.pkeys;
	struct ibk_gid_table *gt = &port.gids;
	struct ibk_gid_entry ge[2];
	ibk_pkey_t keys[8], v;
	struct check c = { 0, 0 };
	unsigned pass, k, i, np, ng;
	uint32_t pc, gc, pt, gtk;
	uint8_t hdr[HDR_LEN];
	struct ibk_qp_keys qp;

	memset(ge, 0, sizeof(ge));
	memset(&qp, 0, sizeof(qp));
	qp.type = IBK_QPT_UD;
	for (pass = 0; pass < 2; pass++) {
		port_setup(8, 2, 1);
		if (pass == 1) {
			ibk_latch_init(&t->hdr.latch, 0xffffff00u);
			ibk_latch_init(&gt->hdr.latch, 0xffffff80u);
		}
		np = ng = 0;
		for (k = 0; k < 400; k++) {
			for (i = 0; i < 8; i++)
				keys[i] = (ibk_pkey_t)(0x8000 | (1 + (k + i) % 50));
			if (k % 2)
				pk_refill(t, keys, 8);
			else
				ibk_pkey_table_set(t, k % 8, keys[0]);
			ge[0].gid = ibk_gid_make(IBK_GID_DEFAULT_PREFIX, k);
			gid_refill(gt, ge, 1);
			if (k % 2 && np < 200 &&
			    ibk_pkey_table_ref_get(t, k % 8, &pold[np]) == IBK_OK)
				np++;
			if (k % 2 && ng < 200 &&
			    ibk_gid_table_ref_get(gt, 0, &gold[ng]) == IBK_OK)
				ng++;
		}
		make_hdr(hdr, 0x7777, 0);
		ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN);	/* counted */
		pc = count_of(&t->hdr);
		gc = count_of(&gt->hdr);
		pt = ibk_pkey_table_refill_ticket(t);
		gtk = ibk_gid_table_refill_ticket(gt);

		check(&c, ibk_port_reset(&port) == IBK_OK, "reset failed");
		check(&c, count_of(&t->hdr) - pc == (pc == 0xfffffffeu ? 4u : 2u) &&
		      count_of(&gt->hdr) - gc == (gc == 0xfffffffeu ? 4u : 2u),
		      "pass %u: reset moved the counts 0x%08x -> 0x%08x, 0x%08x "
		      "-> 0x%08x, not one generation on", pass, pc,
		      count_of(&t->hdr), gc, count_of(&gt->hdr));
		check(&c, ibk_pkey_table_get(t, 0, &v) == IBK_ENOTREADY &&
		      ibk_counter16_read(&port.pkey_violations) == 0 &&
		      port_storage_empty(8, 2),
		      "pass %u: reset leaves the tables empty, DOWN, counters "
		      "zero", pass);
		check(&c, ibk_pkey_table_refill(t, keys, 8, pt) == IBK_ESTALE &&
		      ibk_gid_table_refill(gt, ge, 1, gtk) == IBK_ESTALE,
		      "pass %u: tickets from before the reset refused", pass);
		ibk_port_set_state(&port, IBK_PORT_ACTIVE);
		check(&c, ibk_pkey_table_get(t, 0, &v) == IBK_ESTALE,
		      "pass %u: ACTIVE after reset still awaits a refill", pass);
		check(&c, pk_refill(t, keys, 8) == IBK_OK &&
		      gid_refill(gt, ge, 1) == IBK_OK &&
		      ibk_pkey_table_get(t, 0, &v) == IBK_OK,
		      "pass %u: refill with fresh tickets", pass);
		/* as many updates again: the counts pass through every value
		 * the old references hold if the generations restarted */
		for (k = 0; k < 1300; k++) {
			for (i = 0; i < np; i++)
				check(&c, !ibk_pkey_table_ref_fresh(t, &pold[i]),
				      "pass %u step %u: old P_Key ref 0x%08x "
				      "fresh", pass, k, pold[i].generation);
			for (i = 0; i < ng; i++)
				check(&c, !ibk_gid_table_ref_fresh(gt, &gold[i]),
				      "pass %u step %u: old GID ref 0x%08x "
				      "fresh", pass, k, gold[i].generation);
			ibk_pkey_table_set(t, k % 8, keys[k % 8]);
			ibk_gid_table_set(gt, 1, &ge[0].gid, IBK_GID_TYPE_IB);
		}
	}
	tap_ok(c.bad == 0, "ibk_port_reset after 400 updates (from 2 and from "
	       "0xffffff00): one generation on, tables empty and DOWN, old "
	       "tickets refused, counters zero; 200 old references per table "
	       "stay stale through the refill and 1300 more updates (%lu "
	       "checks)", c.done);
	tap_ok(ibk_port_reset(NULL) == IBK_EINVAL, "ibk_port_reset(NULL): "
	       "IBK_EINVAL");
}

/* ------------------------------------------------------------------------
 * A port in memory from malloc() (issue 8 item 6)
 * ------------------------------------------------------------------------ */

/* Not 64-byte aligned: malloc's alignment, then 16 bytes on. Every access
 * the receive path and the writers make runs under UBSan's alignment
 * check in the asan-ubsan configuration. */
static void test_malloc_port(void)
{
	static const ibk_pkey_t keys[] = { 0xffff, 0x8001 };
	unsigned char *buf = malloc(sizeof(struct ibk_port) + 64);
	size_t off = buf && ((uintptr_t)buf + 16) % 64 == 0 ? 32 : 16;
	struct ibk_port *p = (struct ibk_port *)(void *)(buf + off);
	struct ibk_gid_entry ge;
	struct ibk_qp_keys qp;
	uint8_t hdr[HDR_LEN];
	ibk_pkey_t v = 0;
	bool ok;

	memset(&ge, 0, sizeof(ge));
	ge.gid = ibk_gid_make(IBK_GID_DEFAULT_PREFIX, 3);
	memset(&qp, 0, sizeof(qp));
	qp.type = IBK_QPT_UD;
	qp.pkey_index = 1;
	qp.qkey = 5;
	ok = buf && (uintptr_t)p % 64 != 0 &&
	     ibk_port_init(p, pk_cells, 2, pk_slots, IBK_PKEY_HASH_SLOTS(2),
			   gid_cells, 2, gid_slots, IBK_HASH_SLOTS(2)) == IBK_OK &&
	     ibk_port_set_state(p, IBK_PORT_ACTIVE) == IBK_OK &&
	     ibk_pkey_table_refill(&p->pkeys, keys, 2,
				   ibk_pkey_table_refill_ticket(&p->pkeys)) ==
	     IBK_OK &&
	     ibk_gid_table_refill(&p->gids, &ge, 1,
				  ibk_gid_table_refill_ticket(&p->gids)) ==
	     IBK_OK &&
	     ibk_pkey_table_get(&p->pkeys, 1, &v) == IBK_OK && v == 0x8001 &&
	     ibk_gid_table_find(&p->gids, &ge.gid, IBK_GID_TYPE_ANY, NULL) == 0;
	make_hdr(hdr, 0x0001, 5);
	ok = ok && ibk_port_rx(p, &qp, hdr, hdr + IBK_BTH_LEN) == IBK_RX_ACCEPT;
	make_hdr(hdr, 0x0002, 5);
	ok = ok && ibk_port_rx(p, &qp, hdr, hdr + IBK_BTH_LEN) ==
	     IBK_RX_DROP_PKEY &&
	     ibk_counter16_read(&p->pkey_violations) == 1 &&
	     ibk_port_event(p, IBK_EVENT_PKEY_CHANGE) == IBK_OK &&
	     ibk_port_reset(p) == IBK_OK;
	tap_ok(ok, "a struct ibk_port at malloc() + %zu (address %% 64 = %u): "
	       "init, refill, reads, receive, counters, events, reset",
	       off, buf ? (unsigned)((uintptr_t)p % 64) : 0u);
	free(buf);
}

/*
 * Storage declared once: a port of IBK_PORT_STORAGE(16, 4) holds exactly
 * 16 P_Keys and 4 GIDs, and an MR table of IBK_MR_TABLE_STORAGE(8)
 * indexes 0..7, the capacities read back from the arrays by the INIT
 * macros (a capacity passed apart from its array could disagree with it,
 * and a refill would write past it).
 */
static void test_storage_declared_once(void)
{
	static IBK_PORT_STORAGE(16, 4) s;
	static IBK_MR_TABLE_STORAGE(8) m;
	ibk_pkey_t pkeys[17];
	struct ibk_gid_entry gids[5];
	struct ibk_mem_attr mr;
	uint32_t i;

	for (i = 0; i < 17; i++)
		pkeys[i] = (ibk_pkey_t)(0x8001 + i);
	memset(gids, 0, sizeof(gids));
	for (i = 0; i < 5; i++) {
		gids[i].gid.raw[0] = 0xfe;
		gids[i].gid.raw[15] = (uint8_t)(i + 1);
		gids[i].type = IBK_GID_TYPE_IB;
	}
	tap_ok(IBK_PORT_STORAGE_INIT(&s) == IBK_OK &&
	       ibk_port_set_state(&s.port, IBK_PORT_ACTIVE) == IBK_OK &&
	       sizeof(s.pkey_cells) == IBK_PKEY_CELLS(16) *
	       sizeof(struct ibk_pkey_cell) &&
	       sizeof(s.gid_slots) == IBK_HASH_SLOTS(4) *
	       sizeof(struct ibk_hash_slot),
	       "IBK_PORT_STORAGE(16, 4): arrays of IBK_*_CELLS and "
	       "IBK_*HASH_SLOTS of the capacities; INIT: IBK_OK");
	tap_ok(ibk_pkey_table_refill(&s.port.pkeys, pkeys, 16,
		   ibk_pkey_table_refill_ticket(&s.port.pkeys)) == IBK_OK &&
	       ibk_pkey_table_refill(&s.port.pkeys, pkeys, 17,
		   ibk_pkey_table_refill_ticket(&s.port.pkeys)) == IBK_ENOSPC &&
	       ibk_gid_table_refill(&s.port.gids, gids, 4,
		   ibk_gid_table_refill_ticket(&s.port.gids)) == IBK_OK &&
	       ibk_gid_table_refill(&s.port.gids, gids, 5,
		   ibk_gid_table_refill_ticket(&s.port.gids)) == IBK_ENOSPC,
	       "its port holds 16 P_Keys and 4 GIDs, one more is IBK_ENOSPC");
	memset(&mr, 0, sizeof(mr));
	mr.pd = 1;
	mr.access = IBK_ACCESS_LOCAL_WRITE;
	mr.length = 0x1000;
	mr.rkey = ibk_rkey_make(7, 1);
	tap_ok(IBK_MR_TABLE_STORAGE_INIT(&m) == IBK_OK &&
	       ibk_mr_table_register(&m.table, &mr) == IBK_MEMOP_OK &&
	       (mr.rkey = ibk_rkey_make(8, 1),
		ibk_mr_table_register(&m.table, &mr) == IBK_MEMOP_ERR_KEY),
	       "IBK_MR_TABLE_STORAGE(8): index 7 registers; 8, past the "
	       "table, IBK_MEMOP_ERR_KEY");
}

/*
 * ibk_port_serve_stale(): off, a PKEY_CHANGE drops every packet until the
 * refill; on, the last published tables are served meanwhile, as the
 * Linux core cache serves its last copy, so a partition the subnet
 * manager just removed is still accepted (the trade-off the option
 * takes), and each such decision is counted; a port not ARMED or ACTIVE
 * serves nothing either way.
 */
static void test_serve_stale(void)
{
	static IBK_PORT_STORAGE(8, 4) s;
	static const ibk_pkey_t before[] = { 0xffff, 0x8001 };
	static const ibk_pkey_t after[] = { 0xffff };
	struct ibk_port *p = &s.port;
	struct ibk_qp_keys qp = { IBK_QPT_UD, 0, 1, 0x1234 };
	const struct ibk_qp_keys *qps[4] = { &qp, &qp, &qp, &qp };
	uint8_t hdr[HDR_LEN], v[4];
	const void *hdrs[4] = { hdr, hdr, hdr, hdr };
	ibk_pkey_t k = 0;
	uint32_t ticket;

	IBK_PORT_STORAGE_INIT(&s);
	ibk_port_set_state(p, IBK_PORT_ACTIVE);
	pk_refill(&p->pkeys, before, 2);
	make_hdr_op(hdr, send_only(IBK_QPT_UD), 0x0001, 0x1234);
	tap_ok(ibk_port_rx(p, &qp, hdr, hdr + IBK_BTH_LEN) == IBK_RX_ACCEPT,
	       "serve stale: a limited 0x0001 packet meets 0x8001 at index 1");
	ibk_port_event(p, IBK_EVENT_PKEY_CHANGE);
	tap_ok(ibk_port_rx(p, &qp, hdr, hdr + IBK_BTH_LEN) ==
	       IBK_RX_DROP_PORT &&
	       ibk_pkey_table_get(&p->pkeys, 1, &k) == IBK_ESTALE &&
	       ibk_counter16_read(&p->stale_decisions) == 0,
	       "default: after PKEY_CHANGE, dropped until the refill "
	       "(IBK_RX_DROP_PORT, reads IBK_ESTALE), nothing counted");

	pk_refill(&p->pkeys, before, 2);
	ticket = ibk_pkey_table_refill_ticket(&p->pkeys);
	tap_ok(ibk_port_serve_stale(p, true) == IBK_OK &&
	       ibk_port_serve_stale(NULL, true) == IBK_EINVAL,
	       "ibk_port_serve_stale(port, true): IBK_OK; NULL: IBK_EINVAL");
	ibk_port_event(p, IBK_EVENT_PKEY_CHANGE);	/* 0x8001 removed */
	tap_ok(ibk_pkey_table_get(&p->pkeys, 1, &k) == IBK_OK && k == 0x8001 &&
	       ibk_port_rx(p, &qp, hdr, hdr + IBK_BTH_LEN) == IBK_RX_ACCEPT &&
	       ibk_counter16_read(&p->stale_decisions) == 1,
	       "serving stale: after PKEY_CHANGE the last table answers, the "
	       "removed partition is still accepted, 1 stale decision");
	tap_ok(ibk_port_rx_burst(p, &qp, hdrs, 4, v) == 4 &&
	       ibk_port_rx_mixed(p, qps, hdrs, 4, v, NULL) == 4 &&
	       ibk_counter16_read(&p->stale_decisions) == 9,
	       "a burst of 4 and a mixed burst of 4: 8 more stale decisions");
	tap_ok(ibk_pkey_table_refill(&p->pkeys, after, 1, ticket) ==
	       IBK_ESTALE,
	       "a refill with a ticket from before the event: IBK_ESTALE");
	pk_refill(&p->pkeys, after, 1);
	tap_ok(ibk_port_rx(p, &qp, hdr, hdr + IBK_BTH_LEN) ==
	       IBK_RX_DROP_PKEY &&
	       ibk_counter16_read(&p->stale_decisions) == 9,
	       "once the refill lands: dropped on the P_Key (index 1 now "
	       "empty), no stale decision");
	ibk_port_event(p, IBK_EVENT_PORT_ERR);
	tap_ok(ibk_port_rx(p, &qp, hdr, hdr + IBK_BTH_LEN) ==
	       IBK_RX_DROP_PORT &&
	       ibk_pkey_table_get(&p->pkeys, 0, &k) == IBK_ENOTREADY &&
	       ibk_counter16_read(&p->stale_decisions) == 9,
	       "serving stale, port DOWN: nothing served (IBK_RX_DROP_PORT)");
	ibk_port_set_state(p, IBK_PORT_ACTIVE);
	pk_refill(&p->pkeys, before, 2);
	ibk_port_serve_stale(p, false);
	ibk_port_event(p, IBK_EVENT_PKEY_CHANGE);
	tap_ok(ibk_port_rx(p, &qp, hdr, hdr + IBK_BTH_LEN) ==
	       IBK_RX_DROP_PORT,
	       "turned off: a PKEY_CHANGE drops again until the refill");
}

int main(void)
{
	test_rng_seed(SEED);
	tap_diag("seed 0x%016" PRIx64, (uint64_t)SEED);
	test_latch();
	test_sizing();
	test_storage_declared_once();
	test_serve_stale();
	test_port_init_refused();
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
	test_pkey_chain_model(16, 4000, 1);
	test_pkey_chain_model(100, 4000, 1);
	test_pkey_chain_model(100, 2000, 4);
	test_pkey_chain_model(1000, 2000, 16);		/* 65536: direct */
	test_pkey_chain_model(4096, 600, 1);
	test_pkey_chain_model(MAX_CAP, 150, 1);
	test_pkey_find_exhaustive();
	test_pkey_refill_offsets();
	test_gid_basics();
	test_gid_product_parts();
	test_gid_find_model(1, 2000, 4, 8, 1);
	test_gid_find_model(2, 2000, 4, 8, 1);
	test_gid_find_model(3, 2000, 8, 8, 1);
	test_gid_find_model(256, 300, 64, 512, 1);
	test_gid_find_model(256, 100, 64, 512, 4);
	test_gid_find_model(MAX_CAP, 2, 100, 512, 1);
	test_gid_duplicates(64, 20, 2000);
	test_gid_duplicates(4096, 2, 300);
	test_gid_runs();
	test_events();
	test_wrap();
	test_counters();
	test_rx_gsi_exhaustive();
	test_rx_gsi_index();
	test_rx_qp();
	test_rx_headers();
	test_rx_burst();
	test_rx_burst_saturates();
	test_rx_mixed();
	test_rx_mixed_keyed();
	test_ticket_scenario();
	test_ticket_changes();
	test_ticket_non_events();
	test_ticket_entry_set();
	test_ticket_outage();
	test_state_bounce();
	test_never_fresh();
	test_port_reset();
	test_malloc_port();
	return tap_done();
}
