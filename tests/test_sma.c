/* SPDX-License-Identifier: MIT */
/*
 * test_sma.c - the subnet management agent section of ib_tables.h:
 *
 *  - SubnSet(P_KeyTable) and SubnSet(GUIDInfo) blocks applied to the
 *    tables against a table model written here from the rules (32 P_Keys
 *    or 8 GUIDs per block; entries beyond the capacity ignored; GID =
 *    prefix || GUID, a GUID of 0 an empty entry; entry 0 read-only), for
 *    capacities around the block sizes, read back by the block reads, a
 *    snapshot and the finds;
 *  - each block one generation: references go stale, older refill
 *    tickets are refused, the port state and "awaiting refill" stay;
 *  - whole SMPs answered (Get, Set, the Set answered with the resulting
 *    block) and bad input: a block beyond the table, a GUIDInfo modifier
 *    above 255, a malformed length, an unknown attribute, a TrapRepress;
 *  - M_KeyViolations counted and saturating, PortInfo's counters filled
 *    and cleared by a Set carrying 0;
 *  - the receive path handing back trap 257/258 details;
 *  - the README's walkthrough of a firmware SMA, run on SMPs;
 *  - readers of the block reads racing a writer applying blocks: every
 *    block read whole from one application (TSan covers it in the tsan
 *    configuration).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ib_tables.h"
#include "rng.h"
#include "tap.h"

#define SEED	0x5a5a1e55c0de0013ull
#define MAX_CAP	256u

static struct ibk_pkey_cell pk_cells[IBK_PKEY_CELLS(MAX_CAP)];
static struct ibk_hash_slot pk_slots[IBK_HASH_SLOTS(MAX_CAP)];
static struct ibk_gid_cell gid_cells[IBK_GID_CELLS(MAX_CAP)];
static struct ibk_hash_slot gid_slots[IBK_HASH_SLOTS(MAX_CAP)];
static struct ibk_port port;

/* The model: what the port's tables must hold. */
static ibk_pkey_t model_pk[MAX_CAP];
static uint64_t model_guid[MAX_CAP];	/* 0: empty */
static uint64_t model_prefix[MAX_CAP];

/* The SMA's PortInfo, GidPrefix its only field this test reads. */
static uint8_t portinfo[IBK_SMP_DATA_LEN];

static const uint64_t PORT_GUID = 0x0002c90300a1b2c3ull;
static const uint64_t PREFIX = 0xfe80000000000000ull;

/* A port of the given capacities, ACTIVE, refilled with the port GUID at
 * GID 0 and P_Key 0xffff at index 0: what firmware does at boot. */
static void setup(uint32_t pk_cap, uint32_t gid_cap)
{
	struct ibk_gid_entry e;
	ibk_pkey_t def = 0xffff;

	ibk_port_init(&port, pk_cells, pk_cap, pk_slots,
		      IBK_HASH_SLOTS(pk_cap), gid_cells, gid_cap, gid_slots,
		      IBK_HASH_SLOTS(gid_cap));
	ibk_port_set_state(&port, IBK_PORT_ACTIVE);
	ibk_pkey_table_refill(&port.pkeys, &def, 1,
			      ibk_pkey_table_refill_ticket(&port.pkeys));
	ibk_gid_set(PREFIX, PORT_GUID, &e.gid);
	e.type = IBK_GID_TYPE_IB;
	ibk_gid_table_refill(&port.gids, &e, 1,
			     ibk_gid_table_refill_ticket(&port.gids));
	memset(model_pk, 0, sizeof(model_pk));
	memset(model_guid, 0, sizeof(model_guid));
	memset(model_prefix, 0, sizeof(model_prefix));
	model_pk[0] = 0xffff;
	model_guid[0] = PORT_GUID;
	model_prefix[0] = PREFIX;
	memset(portinfo, 0, sizeof(portinfo));
	ibk_portinfo_set_gid_prefix(portinfo, PREFIX);
}

/* The rule for a P_KeyTable block, written out for the model: the 16 bits
 * as the SM wrote them, an invalid key included (it matches nothing). */
static void model_pkey_block(uint32_t cap, uint32_t block,
			     const ibk_pkey_t *keys)
{
	uint32_t i;

	for (i = 0; i < 32; i++)
		if (block * 32 + i < cap)
			model_pk[block * 32 + i] = keys[i];
}

static void model_guid_block(uint32_t cap, uint32_t block, uint64_t prefix,
			     const uint64_t *guids)
{
	uint32_t i, at;

	for (i = 0; i < 8; i++) {
		at = block * 8 + i;
		if (at == 0 || at >= cap)
			continue;
		model_guid[at] = guids[i];
		model_prefix[at] = guids[i] ? prefix : 0;
	}
}

/* PortInfo:GidPrefix @prefix for the model: every GID takes it (the
 * model holds only IB entries); the number that changed. */
static uint32_t model_apply_prefix(uint32_t cap, uint64_t prefix)
{
	uint32_t i, n = 0;

	for (i = 0; i < cap; i++) {
		if (model_guid[i] == 0 || model_prefix[i] == prefix)
			continue;
		model_prefix[i] = prefix;
		n++;
	}
	return n;
}

static ibk_pkey_t random_pkey(void)
{
	/* a small set of partitions, both memberships, some invalid keys */
	static const ibk_pkey_t pool[] = { 0xffff, 0x7fff, 0x8001, 0x0001,
					   0x8002, 0x0000, 0x8000, 0x1234 };

	return test_rng64() & 1 ? pool[test_rng_below(8)] :
				  (ibk_pkey_t)test_rng64();
}

/* Every view of the P_Key table against the model. */
static bool pkey_table_matches(uint32_t cap)
{
	static ibk_pkey_t snap[MAX_CAP];
	ibk_pkey_t block[32];
	uint32_t b, i;
	bool ok = ibk_pkey_table_snapshot(&port.pkeys, MAX_CAP, snap, NULL) ==
		  (int)cap;

	for (i = 0; ok && i < cap; i++)
		ok = snap[i] == model_pk[i];
	for (b = 0; ok && b < (cap + 31) / 32; b++) {
		ok = ibk_pkey_table_read_block(&port.pkeys, b, block) == IBK_OK;
		for (i = 0; ok && i < 32; i++)
			ok = block[i] == (b * 32 + i < cap ?
					  model_pk[b * 32 + i] : 0);
	}
	/* the index follows: the lowest index of each exact key */
	for (i = 0; ok && i < cap; i++) {
		uint32_t j;

		if (!(model_pk[i] & 0x7fff))
			continue;
		for (j = 0; model_pk[j] != model_pk[i]; j++)
			;
		ok = ibk_pkey_table_find_exact(&port.pkeys, model_pk[i]) ==
		     (int)j;
	}
	return ok;
}

static bool gid_table_matches(uint32_t cap)
{
	uint64_t block[8];
	uint32_t b, i;
	bool ok = true;

	for (i = 0; ok && i < cap; i++) {
		struct ibk_gid_ref ref;
		struct ibk_gid gid;
		int rc = ibk_gid_table_ref_get(&port.gids, i, &ref);
		uint32_t first = 0;

		if (model_guid[i] == 0) {
			ok = rc == IBK_ENOENT;
			continue;
		}
		ok = rc == IBK_OK && ref.type == IBK_GID_TYPE_IB &&
		     ibk_gid_subnet_prefix(&ref.gid) == model_prefix[i] &&
		     ibk_gid_guid(&ref.gid) == model_guid[i];
		/* a find answers the lowest index holding the GID */
		while (model_guid[first] != model_guid[i] ||
		       model_prefix[first] != model_prefix[i])
			first++;
		ibk_gid_set(model_prefix[i], model_guid[i], &gid);
		ok = ok && ibk_gid_table_find(&port.gids, &gid,
					      IBK_GID_TYPE_IB, NULL) ==
			   (int)first;
	}
	for (b = 0; ok && b < (cap + 7) / 8; b++) {
		ok = ibk_gid_table_read_guid_block(&port.gids, b, block) ==
		     IBK_OK;
		for (i = 0; ok && i < 8; i++)
			ok = block[i] == (b * 8 + i < cap ?
					  model_guid[b * 8 + i] : 0);
	}
	return ok;
}

static void test_blocks_vs_model(void)
{
	static const uint32_t pk_caps[] = { 1, 31, 32, 33, 64, 100, 256 };
	static const uint32_t gid_caps[] = { 1, 7, 8, 9, 20, 128 };
	size_t c;
	int r;

	for (c = 0; c < sizeof(pk_caps) / sizeof(pk_caps[0]); c++) {
		uint32_t cap = pk_caps[c], blocks = (cap + 31) / 32;
		bool ok = true;

		setup(cap, 8);
		for (r = 0; ok && r < 300; r++) {
			ibk_pkey_t keys[32];
			uint32_t b = test_rng_below(blocks), i;

			for (i = 0; i < 32; i++)
				keys[i] = random_pkey();
			ok = ibk_pkey_table_apply_block(&port.pkeys, b, keys) ==
			     IBK_OK;
			model_pkey_block(cap, b, keys);
			ok = ok && pkey_table_matches(cap);
		}
		tap_ok(ok, "P_Key table of %u entries (%u blocks): 300 random "
		       "SubnSet blocks, every view equals the model", cap,
		       blocks);
	}
	for (c = 0; c < sizeof(gid_caps) / sizeof(gid_caps[0]); c++) {
		uint32_t cap = gid_caps[c], blocks = (cap + 7) / 8;
		bool ok = true;

		setup(32, cap);
		for (r = 0; ok && r < 300; r++) {
			uint64_t guids[8];
			uint64_t prefix = r % 3 ? PREFIX : test_rng64();
			uint32_t b = test_rng_below(blocks), i;

			for (i = 0; i < 8; i++)
				guids[i] = test_rng64() & 1 ?
					   test_rng64() : 0;
			ok = ibk_gid_table_apply_guid_block(&port.gids, b,
							    prefix, guids) ==
			     IBK_OK;
			model_guid_block(cap, b, prefix, guids);
			if (r % 10 == 9) {
				ok = ok && ibk_gid_table_apply_prefix(
					&port.gids, prefix) ==
					(int)model_apply_prefix(cap, prefix);
			}
			ok = ok && gid_table_matches(cap);
		}
		tap_ok(ok, "GID table of %u entries (%u blocks): 300 random "
		       "SubnSet(GUIDInfo) blocks, prefix || GUID, entry 0 kept, "
		       "a new GidPrefix every 10th, every view and find equals "
		       "the model", cap, blocks);
	}
}

static void test_generations(void)
{
	struct ibk_pkey_ref pref;
	struct ibk_gid_ref gref;
	ibk_pkey_t keys[32] = { 0xffff, 0x8001 };
	uint64_t guids[8] = { 1, 2 };
	uint32_t pticket, gticket;
	ibk_pkey_t k;
	bool ok;

	setup(64, 16);
	ibk_pkey_table_ref_get(&port.pkeys, 0, &pref);
	ibk_gid_table_ref_get(&port.gids, 0, &gref);
	pticket = ibk_pkey_table_refill_ticket(&port.pkeys);
	gticket = ibk_gid_table_refill_ticket(&port.gids);
	/* block 1 does not even touch entry 0: the reference still goes */
	ibk_pkey_table_apply_block(&port.pkeys, 1, keys);
	ibk_gid_table_apply_guid_block(&port.gids, 1, PREFIX, guids);
	ok = !ibk_pkey_table_ref_fresh(&port.pkeys, &pref) &&
	     !ibk_gid_table_ref_fresh(&port.gids, &gref);
	tap_ok(ok, "an applied block makes references into the table stale, "
	       "as a change event does");
	ok = ibk_pkey_table_refill(&port.pkeys, keys, 1, pticket) ==
	     IBK_ESTALE &&
	     ibk_gid_table_refill(&port.gids, NULL, 0, gticket) == IBK_ESTALE;
	tap_ok(ok, "a refill with a ticket from before the block is refused "
	       "(IBK_ESTALE)");
	ok = ibk_pkey_table_get(&port.pkeys, 33, &k) == IBK_OK && k == 0x8001;
	tap_ok(ok, "the table stays readable: no refill awaited after a block");

	/* INIT, awaiting the first refill: blocks apply, state and flag stay */
	ibk_port_init(&port, pk_cells, 64, pk_slots, IBK_HASH_SLOTS(64),
		      gid_cells, 16, gid_slots, IBK_HASH_SLOTS(16));
	ibk_port_set_state(&port, IBK_PORT_INIT);
	ok = ibk_pkey_table_apply_block(&port.pkeys, 0, keys) == IBK_OK &&
	     ibk_pkey_table_get(&port.pkeys, 0, &k) == IBK_ENOTREADY;
	ibk_port_set_state(&port, IBK_PORT_ACTIVE);
	ok = ok && ibk_pkey_table_get(&port.pkeys, 0, &k) == IBK_ESTALE;
	memset(keys, 0, sizeof(keys));
	ok = ok && ibk_pkey_table_read_block(&port.pkeys, 0, keys) == IBK_OK &&
	     keys[0] == 0xffff && keys[1] == 0x8001 && keys[2] == 0;
	tap_ok(ok, "in INIT and awaiting its first refill, a block applies "
	       "and reads back by block; the port state and the awaiting "
	       "flag are left as they were");
}

static void test_guid_entry0(void)
{
	uint64_t guids[8] = { 0x1111, 0x2222, 0, 0x4444, 5, 6, 7, 8 };
	uint64_t back[8];
	bool ok;

	setup(8, 8);
	ok = ibk_gid_table_apply_guid_block(&port.gids, 0, PREFIX, guids) ==
	     IBK_OK &&
	     ibk_gid_table_read_guid_block(&port.gids, 0, back) == IBK_OK &&
	     back[0] == PORT_GUID && back[1] == 0x2222 && back[2] == 0 &&
	     back[3] == 0x4444;
	tap_ok(ok, "GUIDInfo block 0: entry 0 (the port GUID) is read-only, "
	       "the others are set, a GUID of 0 empties its entry");
}

static void make_smp(uint8_t *smp, uint8_t method, uint16_t attr,
		     uint32_t mod)
{
	memset(smp, 0, IBK_MAD_LEN);
	ibk_mad_set_base_version(smp, 1);
	ibk_mad_set_mgmt_class(smp, IBK_MGMT_CLASS_SUBN_LID);
	ibk_mad_set_class_version(smp, 1);
	ibk_mad_set_method(smp, method);
	ibk_mad_set_attr_id(smp, attr);
	ibk_mad_set_attr_mod(smp, mod);
}

static void test_answer(void)
{
	uint8_t smp[IBK_MAD_LEN], orig[IBK_MAD_LEN];
	uint8_t *d = smp + IBK_SMP_DATA_OFFSET;
	unsigned i;
	bool ok;
	int st;

	setup(40, 12);	/* 2 P_Key blocks, the second holding 8; 2 GUID blocks */
	make_smp(smp, IBK_MAD_METHOD_SET, IBK_SMP_ATTR_PKEY_TABLE, 0x00050001);
	for (i = 0; i < 32; i++) {
		d[2 * i] = (uint8_t)(0x80 | i);		/* 0x80nn */
		d[2 * i + 1] = 0x10;
	}
	st = ibk_sma_answer_table(&port, smp, IBK_MAD_LEN, PREFIX);
	for (i = 0; i < 8; i++)
		model_pk[32 + i] = (ibk_pkey_t)(0x8000 | i << 8 | 0x10);
	ok = st == IBK_MAD_STATUS_OK && pkey_table_matches(40);
	for (i = 0; ok && i < 32; i++)	/* entries 40..63 do not exist */
		ok = ibk_pkey_block_get(d, i) ==
		     (i < 8 ? (0x8000 | i << 8 | 0x10) : 0);
	ok = ok && ibk_smp_make_reply(smp, (uint16_t)st) == IBK_OK &&
	     smp[3] == 0x81 && ibk_mad_status(smp) == 0;
	tap_ok(ok, "SubnSet(P_KeyTable) block 1 (switch port field 5 ignored, "
	       "as a CA does) of a 40-entry table: answered with the "
	       "resulting block, entries past the table 0");
	make_smp(smp, IBK_MAD_METHOD_GET, IBK_SMP_ATTR_PKEY_TABLE, 0);
	ok = ibk_sma_answer_table(&port, smp, IBK_MAD_LEN, PREFIX) == 0 &&
	     ibk_pkey_block_get(d, 0) == 0xffff && ibk_pkey_block_get(d, 1) == 0;
	tap_ok(ok, "SubnGet(P_KeyTable) block 0 from the cache");

	make_smp(smp, IBK_MAD_METHOD_SET, IBK_SMP_ATTR_GUID_INFO, 1);
	ibk_guid_block_set(d, 0, 0xaaaa);
	ibk_guid_block_set(d, 3, 0xbbbb);
	ibk_guid_block_set(d, 4, 0xcccc);	/* entry 12: beyond */
	ok = ibk_sma_answer_table(&port, smp, IBK_MAD_LEN, 0xfe80000000000001ull)
	     == IBK_MAD_STATUS_OK &&
	     ibk_guid_block_get(d, 0) == 0xaaaa &&
	     ibk_guid_block_get(d, 3) == 0xbbbb &&
	     ibk_guid_block_get(d, 4) == 0;
	model_guid[8] = 0xaaaa;
	model_prefix[8] = 0xfe80000000000001ull;
	model_guid[11] = 0xbbbb;
	model_prefix[11] = 0xfe80000000000001ull;
	ok = ok && gid_table_matches(12);
	tap_ok(ok, "SubnSet(GUIDInfo) block 1 of a 12-entry table: GIDs "
	       "prefix || GUID, answered with the resulting block");

	make_smp(smp, IBK_MAD_METHOD_GET, IBK_SMP_ATTR_PKEY_TABLE, 2);
	memset(d, 0x5a, IBK_SMP_DATA_LEN);
	st = ibk_sma_answer_table(&port, smp, IBK_MAD_LEN, PREFIX);
	ok = st == IBK_MAD_STATUS_INVALID_FIELD;
	for (i = 0; i < IBK_SMP_DATA_LEN; i++)
		ok = ok && d[i] == 0;
	tap_ok(ok, "P_KeyTable block 2 of a 40-entry table: 0x001c, data "
	       "zeroed");
	make_smp(smp, IBK_MAD_METHOD_SET, IBK_SMP_ATTR_PKEY_TABLE, 0xffff);
	memset(d, 0x5a, IBK_SMP_DATA_LEN);
	ok = ibk_sma_answer_table(&port, smp, IBK_MAD_LEN, PREFIX) ==
	     IBK_MAD_STATUS_INVALID_FIELD && pkey_table_matches(40);
	tap_ok(ok, "SubnSet(P_KeyTable) block 65535: 0x001c, table unchanged");
	make_smp(smp, IBK_MAD_METHOD_GET, IBK_SMP_ATTR_GUID_INFO, 2);
	ok = ibk_sma_answer_table(&port, smp, IBK_MAD_LEN, PREFIX) ==
	     IBK_MAD_STATUS_INVALID_FIELD;
	make_smp(smp, IBK_MAD_METHOD_GET, IBK_SMP_ATTR_GUID_INFO, 0x100);
	ok = ok && ibk_sma_answer_table(&port, smp, IBK_MAD_LEN, PREFIX) ==
	     IBK_MAD_STATUS_INVALID_FIELD;
	tap_ok(ok, "GUIDInfo block 2 of a 12-entry table, and modifier 0x100: "
	       "0x001c");

	make_smp(smp, IBK_MAD_METHOD_GET, IBK_SMP_ATTR_NODE_INFO, 0);
	memset(d, 0x5a, IBK_SMP_DATA_LEN);
	memcpy(orig, smp, sizeof(smp));
	ok = ibk_sma_answer_table(&port, smp, IBK_MAD_LEN, PREFIX) ==
	     IBK_MAD_STATUS_UNSUP_METHOD_ATTR &&
	     memcmp(smp, orig, sizeof(smp)) == 0;
	make_smp(smp, IBK_MAD_METHOD_GET, 0x0099, 0);
	ok = ok && ibk_sma_answer_table(&port, smp, IBK_MAD_LEN, PREFIX) ==
	     IBK_MAD_STATUS_UNSUP_METHOD_ATTR;
	tap_ok(ok, "NodeInfo and unknown attribute 0x0099: 0x000c, SMP "
	       "untouched");

	make_smp(smp, IBK_MAD_METHOD_SET, IBK_SMP_ATTR_PKEY_TABLE, 0);
	memcpy(orig, smp, sizeof(smp));
	ok = ibk_sma_answer_table(&port, smp, IBK_MAD_LEN - 1, PREFIX) ==
	     IBK_EINVAL &&
	     ibk_sma_answer_table(&port, smp, IBK_MAD_LEN + 1, PREFIX) ==
	     IBK_EINVAL && memcmp(smp, orig, sizeof(smp)) == 0 &&
	     pkey_table_matches(40);
	tap_ok(ok, "an SMP of 255 or 257 bytes: IBK_EINVAL, nothing changed");
	ibk_mad_set_class_version(smp, 2);
	ok = ibk_sma_answer_table(&port, smp, IBK_MAD_LEN, PREFIX) ==
	     IBK_EINVAL;
	make_smp(smp, IBK_MAD_METHOD_TRAP_REPRESS, IBK_SMP_ATTR_PKEY_TABLE, 0);
	ok = ok && ibk_sma_answer_table(&port, smp, IBK_MAD_LEN, PREFIX) ==
	     IBK_EINVAL;
	ok = ok && ibk_sma_answer_table(NULL, smp, IBK_MAD_LEN, PREFIX) ==
	     IBK_EINVAL &&
	     ibk_sma_answer_table(&port, NULL, IBK_MAD_LEN, PREFIX) ==
	     IBK_EINVAL;
	tap_ok(ok, "class version 2, a TrapRepress, NULL port or SMP: "
	       "IBK_EINVAL");
	{
		/* every value the int return carries has a name */
		static const int rets[] = {
			IBK_MAD_STATUS_OK, IBK_MAD_STATUS_BAD_VERSION,
			IBK_MAD_STATUS_UNSUP_METHOD,
			IBK_MAD_STATUS_UNSUP_METHOD_ATTR,
			IBK_MAD_STATUS_INVALID_FIELD, IBK_EINVAL,
		};
		unsigned i, j;

		ok = true;
		for (i = 0; i < sizeof(rets) / sizeof(rets[0]); i++) {
			ok &= strcmp(ibk_strerror(rets[i]),
				     "unknown error") != 0;
			for (j = 0; j < i; j++)
				ok &= strcmp(ibk_strerror(rets[i]),
					     ibk_strerror(rets[j])) != 0;
		}
		tap_ok(ok, "ibk_strerror() names each status and error "
		       "ibk_sma_answer_table() returns, each differently");
	}

	ok = ibk_pkey_table_apply_block(&port.pkeys, 2, model_pk) ==
	     IBK_ERANGE &&
	     ibk_pkey_table_read_block(&port.pkeys, 2, model_pk) ==
	     IBK_ERANGE &&
	     ibk_gid_table_apply_guid_block(&port.gids, 2, 0, model_guid) ==
	     IBK_ERANGE &&
	     ibk_gid_table_read_guid_block(&port.gids, 0xffffffffu,
					   model_guid) == IBK_ERANGE &&
	     ibk_pkey_table_apply_block(NULL, 0, model_pk) == IBK_EINVAL &&
	     ibk_pkey_table_apply_block(&port.pkeys, 0, NULL) == IBK_EINVAL &&
	     ibk_gid_table_read_guid_block(&port.gids, 0, NULL) == IBK_EINVAL;
	tap_ok(ok, "block functions: a block beyond the table IBK_ERANGE, "
	       "NULL IBK_EINVAL");
}

static void test_mkey_counter(void)
{
	struct ibk_mkey_state st = { 0x1234, 0, 0, 2, false };
	uint8_t pi[IBK_PORTINFO_LEN];
	unsigned i;
	bool ok;

	setup(8, 8);
	ok = ibk_sma_mkey_check(&port, &st, IBK_MAD_METHOD_GET, 0x1234, 0) ==
	     IBK_MKEY_PROCESS &&
	     ibk_counter16_read(&port.mkey_violations) == 0 &&
	     ibk_sma_mkey_check(&port, &st, IBK_MAD_METHOD_GET, 1, 0) ==
	     IBK_MKEY_VIOLATION &&
	     ibk_counter16_read(&port.mkey_violations) == 1;
	for (i = 0; i < 70000; i++)
		ibk_sma_mkey_check(&port, &st, IBK_MAD_METHOD_SET, 1, 0);
	ok = ok && ibk_counter16_read(&port.mkey_violations) == 0xffff;
	tap_ok(ok, "M_KeyViolations: one per violation, none for a good key, "
	       "stopping at 0xffff");

	ibk_counter16_add(&port.pkey_violations, 7);
	ibk_counter16_add(&port.qkey_violations, 9);
	memset(pi, 0xee, sizeof(pi));
	ibk_sma_fill_portinfo_counters(&port, pi);
	ok = pi[44] == 0xff && pi[45] == 0xff && pi[46] == 0 && pi[47] == 7 &&
	     pi[48] == 0 && pi[49] == 9 && pi[43] == 0xee && pi[50] == 0xee;
	ibk_portinfo_set_mkey_violations(pi, 0);
	ibk_portinfo_set_qkey_violations(pi, 0);
	ibk_portinfo_set_gid_prefix(pi, PREFIX);
	ok = ok && ibk_sma_apply_portinfo(&port, pi) == 0 && ibk_counter16_read(&port.mkey_violations) == 0 &&
	     ibk_counter16_read(&port.pkey_violations) == 7 &&
	     ibk_counter16_read(&port.qkey_violations) == 0;
	tap_ok(ok, "PortInfo counters @44/46/48 filled from the port; a "
	       "SubnSet carrying 0 clears that counter only");
	ibk_sma_mkey_check(&port, &st, IBK_MAD_METHOD_SET, 1, 0);
	ibk_port_reset(&port);
	ok = ibk_counter16_read(&port.mkey_violations) == 0;
	ibk_sma_mkey_check(&port, &st, IBK_MAD_METHOD_SET, 1, 0);
	ibk_port_init(&port, pk_cells, 8, pk_slots, IBK_HASH_SLOTS(8),
		      gid_cells, 8, gid_slots, IBK_HASH_SLOTS(8));
	ok = ok && ibk_counter16_read(&port.mkey_violations) == 0;
	tap_ok(ok, "port reset and init zero M_KeyViolations");
}

/* A UD SEND from the IBA layouts: LRH (SL 3, DLID 0x0010, SLID 0x0020),
 * optional GRH, BTH (P_Key, dest QP 0x000abc), DETH (Q_Key, src QP 0x77). */
static size_t build_ud(uint8_t *pkt, bool grh, ibk_pkey_t pkey,
		       ibk_qkey_t qkey)
{
	size_t off = 8;

	memset(pkt, 0, 128);
	pkt[1] = (uint8_t)(0x30 | (grh ? 3 : 2));
	pkt[3] = 0x10;
	pkt[7] = 0x20;
	if (grh) {
		pkt[8] = 0x60;
		pkt[8 + 6] = 0x1b;
		pkt[8 + 8] = 0xfe;
		pkt[8 + 8 + 15] = 0x01;
		pkt[8 + 24] = 0xfe;
		pkt[8 + 24 + 15] = 0x02;
		off += 40;
	}
	pkt[off] = 0x64;
	pkt[off + 2] = (uint8_t)(pkey >> 8);
	pkt[off + 3] = (uint8_t)pkey;
	pkt[off + 7] = 0xbc;
	pkt[off + 6] = 0x0a;
	off += 12;
	pkt[off] = (uint8_t)(qkey >> 24);
	pkt[off + 1] = (uint8_t)(qkey >> 16);
	pkt[off + 2] = (uint8_t)(qkey >> 8);
	pkt[off + 3] = (uint8_t)qkey;
	pkt[off + 7] = 0x77;
	return off + 8 + 4;
}

static void test_rx_trap(void)
{
	struct ibk_qp_keys qp = { IBK_QPT_UD, 0, 1, 0x11112222u };
	ibk_pkey_t keys[32] = { 0xffff, 0x8005 };
	struct ibk_trap_key t;
	uint8_t pkt[128];
	size_t len;
	bool ok;

	setup(32, 8);
	ibk_pkey_table_apply_block(&port.pkeys, 0, keys);
	memset(&t, 0xee, sizeof(t));
	len = build_ud(pkt, true, 0x8006, 0x11112222u);
	ok = ibk_port_rx_packet(&port, &qp, pkt, len, &t) == IBK_RX_DROP_PKEY &&
	     t.lid1 == 0x20 && t.lid2 == 0x10 && t.sl == 3 && t.key == 0x8006 &&
	     t.qp1 == 0x77 && t.qp2 == 0xabc && t.gid1.raw[0] == 0xfe &&
	     t.gid1.raw[15] == 1 && t.gid2.raw[15] == 2 &&
	     ibk_counter16_read(&port.pkey_violations) == 1;
	tap_ok(ok, "receive: a P_Key violation is counted and hands back the "
	       "trap 257 details (LIDs, SL, the bad key, QPs, GIDs)");
	len = build_ud(pkt, false, 0x0005, 0x33334444u);
	ok = ibk_port_rx_packet(&port, &qp, pkt, len, &t) == IBK_RX_DROP_QKEY &&
	     t.key == 0x33334444u && t.qp1 == 0x77 && t.gid1.raw[0] == 0 &&
	     ibk_counter16_read(&port.qkey_violations) == 1;
	tap_ok(ok, "receive: a Q_Key violation hands back the trap 258 "
	       "details (no GRH: GIDs zero)");
	memset(&t, 0xee, sizeof(t));
	len = build_ud(pkt, false, 0x0005, 0x11112222u);
	ok = ibk_port_rx_packet(&port, &qp, pkt, len, &t) == IBK_RX_ACCEPT &&
	     t.lid1 == 0xeeee &&
	     ibk_port_rx_packet(&port, &qp, pkt, len, NULL) == IBK_RX_ACCEPT &&
	     ibk_port_rx_packet(&port, &qp, pkt, 8 + 12 + 7, &t) ==
	     IBK_RX_DROP_MALFORMED && t.lid1 == 0xeeee;
	tap_ok(ok, "receive: an accepted or truncated packet leaves the trap "
	       "details alone");
}

/* ---- the README's walkthrough, as an SMA would run it ---- */

struct sma_out {
	bool replied, trapped;
	uint8_t reply[IBK_MAD_LEN];
	uint8_t notice[IBK_NOTICE_LEN];
};

/* The caller's PortInfo answer, cut to what the cache holds: a Set
 * applies the counters and GidPrefix (the rest of PortInfo stays the
 * caller's), both answer the resulting attribute. */
static int sma_portinfo(uint8_t *mad)
{
	uint8_t *data = mad + IBK_SMP_DATA_OFFSET;

	if (ibk_mad_method(mad) == IBK_MAD_METHOD_SET) {
		if (ibk_sma_apply_portinfo(&port, data) < 0)
			return IBK_MAD_STATUS_INVALID_FIELD;
		ibk_portinfo_set_gid_prefix(portinfo,
					    ibk_portinfo_gid_prefix(data));
	}
	memcpy(data, portinfo, sizeof(portinfo));
	ibk_sma_fill_portinfo_counters(&port, data);
	return IBK_MAD_STATUS_OK;
}

/* One SMP through the pieces in the README's order; attributes other than
 * P_KeyTable, GUIDInfo and PortInfo are not this test's: they get
 * 0x000c. */
static void sma_receive(struct ibk_mkey_state *mkey, uint8_t *mad, size_t len,
			uint64_t now_ns, struct sma_out *out)
{
	int st = ibk_smp_request_status(mad, len);

	memset(out, 0, sizeof(*out));
	if (st < 0)
		return;
	if (st == 0) {
		if (ibk_sma_mkey_check(&port, mkey, ibk_mad_method(mad),
					ibk_smp_mkey(mad), now_ns) ==
		    IBK_MKEY_VIOLATION) {
			struct ibk_trap_256 t;

			ibk_trap_256_from_smp(mad, 0x0009, &t);
			ibk_notice_build_256(IBK_NOTICE_PRODUCER_CA,
					     0x0001, &t, out->notice);
			out->trapped = true;
			return;
		}
		if (ibk_mad_method(mad) == IBK_MAD_METHOD_TRAP_REPRESS)
			return;
		st = ibk_sma_answer_table(&port, mad, len,
					  ibk_portinfo_gid_prefix(portinfo));
		if (st == IBK_MAD_STATUS_UNSUP_METHOD_ATTR &&
		    ibk_mad_attr_id(mad) == IBK_SMP_ATTR_PORT_INFO)
			st = sma_portinfo(mad);
	}
	if (ibk_smp_make_reply(mad, (uint16_t)st) == IBK_OK) {
		memcpy(out->reply, mad, IBK_MAD_LEN);
		out->replied = true;
	}
}

static void test_sma_flow(void)
{
	struct ibk_mkey_state mkey = { 0xfeed, 0, 100, 2, false };
	uint8_t smp[IBK_MAD_LEN];
	struct sma_out out;
	ibk_pkey_t k;
	bool ok;

	setup(64, 16);
	make_smp(smp, IBK_MAD_METHOD_SET, IBK_SMP_ATTR_PKEY_TABLE, 1);
	ibk_smp_set_mkey(smp, 0xbad);
	ibk_pkey_block_set(smp + IBK_SMP_DATA_OFFSET, 0, 0x8123);
	sma_receive(&mkey, smp, IBK_MAD_LEN, 1000, &out);
	ok = !out.replied && out.trapped &&
	     ibk_counter16_read(&port.mkey_violations) == 1 &&
	     ibk_notice_trap_number(out.notice) == IBK_TRAP_BAD_MKEY &&
	     out.notice[IBK_NOTICE_DETAILS + 6] == IBK_MAD_METHOD_SET &&
	     ibk_pkey_table_get(&port.pkeys, 32, &k) == IBK_ENOENT &&
	     mkey.lease_running;
	tap_ok(ok, "SMA: SubnSet(P_KeyTable) with a bad M_Key at level 2: no "
	       "reply, the table untouched, M_KeyViolations 1, a trap 256 "
	       "naming the Set, the lease running");
	make_smp(smp, IBK_MAD_METHOD_SET, IBK_SMP_ATTR_PKEY_TABLE, 1);
	ibk_smp_set_mkey(smp, 0xfeed);
	ibk_pkey_block_set(smp + IBK_SMP_DATA_OFFSET, 0, 0x8123);
	sma_receive(&mkey, smp, IBK_MAD_LEN, 2000, &out);
	ok = out.replied && !out.trapped && out.reply[3] == 0x81 &&
	     ibk_mad_status(out.reply) == 0 &&
	     ibk_pkey_block_get(out.reply + IBK_SMP_DATA_OFFSET, 0) == 0x8123 &&
	     ibk_pkey_table_get(&port.pkeys, 32, &k) == IBK_OK && k == 0x8123 &&
	     !mkey.lease_running;
	tap_ok(ok, "SMA: the same Set with the port's M_Key: applied, answered "
	       "with the block, the lease stopped");
	make_smp(smp, IBK_MAD_METHOD_TRAP_REPRESS, IBK_SMP_ATTR_NOTICE, 0);
	ibk_smp_set_mkey(smp, 0xfeed);
	sma_receive(&mkey, smp, IBK_MAD_LEN, 3000, &out);
	ok = !out.replied && !out.trapped;
	make_smp(smp, IBK_MAD_METHOD_SEND, IBK_SMP_ATTR_PKEY_TABLE, 0);
	sma_receive(&mkey, smp, IBK_MAD_LEN, 3000, &out);
	ok = ok && !out.replied && !out.trapped;
	tap_ok(ok, "SMA: a good TrapRepress and a Send get no reply");
	make_smp(smp, IBK_MAD_METHOD_GET, IBK_SMP_ATTR_NODE_INFO, 0);
	ibk_smp_set_mkey(smp, 0xfeed);
	sma_receive(&mkey, smp, IBK_MAD_LEN, 3000, &out);
	ok = out.replied && ibk_mad_status(out.reply) == 0x000c;
	make_smp(smp, IBK_MAD_METHOD_GET, IBK_SMP_ATTR_PKEY_TABLE, 0);
	ibk_mad_set_class_version(smp, 2);
	sma_receive(&mkey, smp, IBK_MAD_LEN, 3000, &out);
	ok = ok && out.replied && ibk_mad_status(out.reply) == 0x0004;
	tap_ok(ok, "SMA: an attribute left to the caller is answered 0x000c, "
	       "a class version 2 SMP 0x0004");
}

/* A SubnSet(PortInfo) of GidPrefix @prefix with the port's M_Key 0xfeed,
 * through the walkthrough; true if answered with status 0 and the
 * prefix. */
static bool sma_set_prefix(struct ibk_mkey_state *mkey, uint64_t prefix)
{
	uint8_t smp[IBK_MAD_LEN];
	struct sma_out out;

	make_smp(smp, IBK_MAD_METHOD_SET, IBK_SMP_ATTR_PORT_INFO, 0);
	ibk_smp_set_mkey(smp, 0xfeed);
	ibk_portinfo_set_gid_prefix(smp + IBK_SMP_DATA_OFFSET, prefix);
	/* counters carried as 0xffff: none is cleared */
	memset(smp + IBK_SMP_DATA_OFFSET + 44, 0xff, 6);
	sma_receive(mkey, smp, IBK_MAD_LEN, 4000, &out);
	return out.replied && ibk_mad_status(out.reply) == 0 &&
	       ibk_portinfo_gid_prefix(out.reply + IBK_SMP_DATA_OFFSET) ==
	       prefix;
}

/* true if the GID table finds @prefix || @guid at @index, as type IB */
static bool finds(uint64_t prefix, uint64_t guid, int index)
{
	struct ibk_gid gid;

	ibk_gid_set(prefix, guid, &gid);
	return ibk_gid_table_find(&port.gids, &gid, IBK_GID_TYPE_IB, NULL) ==
	       index;
}

/* PortInfo:GidPrefix || GUIDInfo entry i is GID i on native IB (qib and
 * hfi1 compose GIDs from the current prefix): a new prefix reaches every
 * IB entry at once, as a change event; GUIDInfo Sets after it use it. */
static void test_gid_prefix(void)
{
	static const uint64_t NEW = 0xfec0000000001234ull;
	struct ibk_mkey_state mkey = { 0xfeed, 0, 100, 2, false };
	uint8_t smp[IBK_MAD_LEN];
	struct ibk_gid_entry roce, e;
	struct ibk_gid_ref ref;
	struct sma_out out;
	uint32_t ticket, i;
	bool ok;

	setup(64, 16);
	make_smp(smp, IBK_MAD_METHOD_SET, IBK_SMP_ATTR_GUID_INFO, 0);
	ibk_smp_set_mkey(smp, 0xfeed);
	ibk_guid_block_set(smp + IBK_SMP_DATA_OFFSET, 1, 0x1111);
	ibk_guid_block_set(smp + IBK_SMP_DATA_OFFSET, 2, 0x2222);
	sma_receive(&mkey, smp, IBK_MAD_LEN, 1000, &out);
	ibk_gid_set(0xfe80000000000000ull, 0x0200c0fffe000001ull, &roce.gid);
	roce.type = IBK_GID_TYPE_ROCE_V2;
	ibk_gid_table_set(&port.gids, 5, &roce.gid, roce.type);
	ok = out.replied && finds(PREFIX, PORT_GUID, 0) &&
	     finds(PREFIX, 0x1111, 1) && finds(PREFIX, 0x2222, 2);
	ibk_gid_table_ref_get(&port.gids, 1, &ref);
	ticket = ibk_gid_table_refill_ticket(&port.gids);
	ok = ok && sma_set_prefix(&mkey, NEW);
	tap_ok(ok && finds(NEW, PORT_GUID, 0) && finds(NEW, 0x1111, 1) &&
	       finds(NEW, 0x2222, 2) && finds(PREFIX, PORT_GUID, IBK_ENOENT) &&
	       finds(PREFIX, 0x2222, IBK_ENOENT),
	       "SubnSet(PortInfo) with a new GidPrefix: the port GID and the "
	       "GUIDInfo entries are found under it, not under the old one");
	ok = ibk_gid_table_get(&port.gids, 5, &e) == IBK_OK &&
	     e.type == IBK_GID_TYPE_ROCE_V2 &&
	     ibk_gid_equal(&e.gid, &roce.gid) &&
	     ibk_gid_table_get(&port.gids, 3, &e) == IBK_ENOENT;
	tap_ok(ok, "a RoCE entry and an empty entry stay as they were");
	ok = !ibk_gid_table_ref_fresh(&port.gids, &ref) &&
	     ibk_gid_table_refill(&port.gids, &roce, 1, ticket) ==
	     IBK_ESTALE && finds(NEW, 0x1111, 1);
	tap_ok(ok, "the prefix change is one change event: a reference "
	       "from before is stale, a refill with an older ticket is "
	       "refused and changes nothing");
	make_smp(smp, IBK_MAD_METHOD_SET, IBK_SMP_ATTR_GUID_INFO, 0);
	ibk_smp_set_mkey(smp, 0xfeed);
	for (i = 1; i < 8; i++)
		ibk_guid_block_set(smp + IBK_SMP_DATA_OFFSET, i,
				   i == 5 ? 0 : 0x5000 + i);
	sma_receive(&mkey, smp, IBK_MAD_LEN, 2000, &out);
	ok = out.replied;
	for (i = 0; i < 8; i++) {
		if (i == 5)
			continue;
		ok = ok && ibk_gid_table_get(&port.gids, i, &e) == IBK_OK &&
		     ibk_gid_subnet_prefix(&e.gid) == NEW;
	}
	tap_ok(ok, "a GUIDInfo Set after it composes with the new prefix: "
	       "no entry keeps the old one");
	ibk_gid_table_ref_get(&port.gids, 1, &ref);
	ok = sma_set_prefix(&mkey, NEW) &&
	     ibk_gid_table_ref_fresh(&port.gids, &ref) &&
	     ibk_gid_table_apply_prefix(&port.gids, NEW) == 0 &&
	     ibk_gid_table_apply_prefix(&port.gids, PREFIX) == 7 &&
	     ibk_gid_table_apply_prefix(NULL, PREFIX) == IBK_EINVAL &&
	     ibk_sma_apply_portinfo(&port, NULL) == IBK_EINVAL;
	tap_ok(ok, "the same prefix again (each sweep's PortInfo Set) writes "
	       "nothing: references stay fresh; 7 IB entries change back; "
	       "NULL is IBK_EINVAL");
}

/* ---- readers against a writer applying blocks ---- */

#define RACE_CAP	96u	/* 3 P_Key blocks, 12 GUID blocks */
#define RACE_ROUNDS	20000

static atomic_bool race_done;

/* Application @v of a block: P_Key i = full, base (v % 1000 + 1) << 5 | i;
 * GUID i = v << 8 | i + 1. A block read whole from one application has
 * one v throughout. */
static ibk_pkey_t race_pkey(unsigned v, unsigned i)
{
	return (ibk_pkey_t)(0x8000 | ((v % 1000 + 1) << 5 | i));
}

static void *race_reader(void *arg)
{
	unsigned long *torn = (unsigned long *)arg;
	ibk_pkey_t keys[32];
	uint64_t guids[8];
	uint32_t b = 0;

	while (!atomic_load_explicit(&race_done, memory_order_relaxed)) {
		unsigned i;

		b = (b + 1) % 3;
		ibk_pkey_table_read_block(&port.pkeys, b, keys);
		for (i = 1; i < 32; i++)
			*torn += (keys[i] >> 5) != (keys[0] >> 5) ||
				 (keys[i] & 31) != i;
		ibk_gid_table_read_guid_block(&port.gids, b + 1, guids);
		for (i = 1; i < 8; i++)
			*torn += guids[i] >> 8 != guids[0] >> 8 ||
				 (guids[i] & 0xff) != i + 1;
	}
	return NULL;
}

static void test_race(void)
{
	pthread_t readers[2];
	unsigned long torn[2] = { 0, 0 };
	ibk_pkey_t keys[32];
	uint64_t guids[8];
	unsigned v, i;
	bool started = true;

	setup(RACE_CAP, RACE_CAP);
	for (v = 0; v < 12; v++) {	/* every block whole before the race */
		for (i = 0; i < 32; i++)
			keys[i] = race_pkey(0, i);
		for (i = 0; i < 8; i++)
			guids[i] = (uint64_t)1 << 8 | (i + 1);
		if (v < 3)
			ibk_pkey_table_apply_block(&port.pkeys, v, keys);
		ibk_gid_table_apply_guid_block(&port.gids, v, PREFIX, guids);
	}
	atomic_store(&race_done, false);
	for (i = 0; i < 2; i++)
		started &= pthread_create(&readers[i], NULL, race_reader,
					  &torn[i]) == 0;
	for (v = 1; v <= RACE_ROUNDS; v++) {
		for (i = 0; i < 32; i++)
			keys[i] = race_pkey(v, i);
		for (i = 0; i < 8; i++)
			guids[i] = (uint64_t)(v + 1) << 8 | (i + 1);
		ibk_pkey_table_apply_block(&port.pkeys, v % 3, keys);
		ibk_gid_table_apply_guid_block(&port.gids, v % 3 + 1, PREFIX,
					       guids);
	}
	atomic_store(&race_done, true);
	for (i = 0; i < 2 && started; i++)
		pthread_join(readers[i], NULL);
	tap_ok(started && torn[0] + torn[1] == 0, "2 readers of P_KeyTable and "
	       "GUIDInfo blocks against %u block writes: every block read "
	       "whole from one write (%lu torn)", RACE_ROUNDS,
	       torn[0] + torn[1]);
}

/* A UD SEND carrying @payload bytes (a MAD when 256; byte 1 its class),
 * laid out by hand from IBA 7.7, 9.2 and 9.3: LRH (VL @vl, LNH BTH, DLID
 * @dlid, SLID @slid), BTH (@opcode, PadCnt @pad, P_Key 0xffff, dest QP
 * @qpn), DETH (Q_Key @qkey), the payload, @pad bytes and the ICRC. The
 * length from the LRH through the ICRC. */
static size_t build_mad(uint8_t *pkt, uint8_t vl, uint16_t dlid,
			uint16_t slid, uint8_t opcode, unsigned pad,
			uint32_t qpn, ibk_qkey_t qkey, size_t payload,
			uint8_t mgmt_class)
{
	memset(pkt, 0, 512);
	pkt[0] = (uint8_t)(vl << 4);
	pkt[1] = 0x02;
	pkt[2] = (uint8_t)(dlid >> 8);
	pkt[3] = (uint8_t)dlid;
	pkt[6] = (uint8_t)(slid >> 8);
	pkt[7] = (uint8_t)slid;
	pkt[8] = opcode;
	pkt[9] = (uint8_t)(pad << 4);
	pkt[10] = 0xff;
	pkt[11] = 0xff;
	pkt[13] = (uint8_t)(qpn >> 16);
	pkt[14] = (uint8_t)(qpn >> 8);
	pkt[15] = (uint8_t)qpn;
	pkt[20] = (uint8_t)(qkey >> 24);
	pkt[21] = (uint8_t)(qkey >> 16);
	pkt[22] = (uint8_t)(qkey >> 8);
	pkt[23] = (uint8_t)qkey;
	pkt[28] = 0x01;			/* MAD base version */
	pkt[29] = mgmt_class;
	return 8 + 12 + 8 + payload + pad + 4;
}

/*
 * The management datagram rules of qib_ud_rcv(), which a receive path that
 * has the LRH and the length applies: QP0 only on VL15, QP1 never on it,
 * a MAD payload of exactly 256 bytes (IBA 13.5.3.1), the permissive LID
 * only to QP0 and there only on a directed-route SMP (9.6.1.4.1,
 * 9.6.1.5.1), no SEND with immediate to QP0 or QP1; each a drop of its
 * own, counted where qib counts them (n_pkt_drops: the port's mad_drops),
 * never as a key violation.
 */
static void test_mad_rules(void)
{
	const struct ibk_qp_keys smi = { IBK_QPT_SMI, 0, 0, 0 };
	const struct ibk_qp_keys gsi = { IBK_QPT_GSI, 0, 0, IBK_QKEY_GSI };
	const struct ibk_qp_keys ud = { IBK_QPT_UD, 0, 0, 0x11112222u };
	const uint8_t lid = IBK_MGMT_CLASS_SUBN_LID, dr = IBK_MGMT_CLASS_SUBN_DR;
	static const struct {
		const char *what;
		int qp;			/* 0 QP0, 1 QP1, 2 a UD QP */
		uint8_t vl, opcode;
		uint16_t dlid, slid;
		unsigned pad;
		size_t payload;
		int dr_class;
		enum ibk_rx_verdict want;
	} cases[] = {
		{ "QP0: an SMP on VL15", 0, 15, 0x64, 0x10, 0x20, 0, 256, 0,
		  IBK_RX_ACCEPT },
		{ "QP0: an SMP on VL0", 0, 0, 0x64, 0x10, 0x20, 0, 256, 0,
		  IBK_RX_DROP_MAD_VL },
		{ "QP0: a 255-byte payload", 0, 15, 0x64, 0x10, 0x20, 0, 255, 0,
		  IBK_RX_DROP_MAD_LENGTH },
		{ "QP0: a 260-byte payload", 0, 15, 0x64, 0x10, 0x20, 0, 260, 0,
		  IBK_RX_DROP_MAD_LENGTH },
		{ "QP0: 253 bytes and 3 of pad", 0, 15, 0x64, 0x10, 0x20, 3, 253,
		  0, IBK_RX_DROP_MAD_LENGTH },
		{ "QP0: the length before the VL", 0, 0, 0x64, 0x10, 0x20, 0, 100,
		  0, IBK_RX_DROP_MAD_LENGTH },
		{ "QP0: a directed-route SMP from and to the permissive LID", 0,
		  15, 0x64, 0xffff, 0xffff, 0, 256, 1, IBK_RX_ACCEPT },
		{ "QP0: a LID-routed SMP to the permissive DLID", 0, 15, 0x64,
		  0xffff, 0x20, 0, 256, 0, IBK_RX_DROP_PERMISSIVE },
		{ "QP0: a LID-routed SMP from the permissive SLID", 0, 15, 0x64,
		  0x10, 0xffff, 0, 256, 0, IBK_RX_DROP_PERMISSIVE },
		{ "QP0: a SEND with immediate", 0, 15, 0x65, 0x10, 0x20, 0, 256,
		  0, IBK_RX_DROP_MAD_IMM },
		{ "QP1: a GMP on VL0", 1, 0, 0x64, 0x10, 0x20, 0, 256, 0,
		  IBK_RX_ACCEPT },
		{ "QP1: a GMP on VL15", 1, 15, 0x64, 0x10, 0x20, 0, 256, 0,
		  IBK_RX_DROP_MAD_VL },
		{ "QP1: a 300-byte payload", 1, 0, 0x64, 0x10, 0x20, 0, 300, 0,
		  IBK_RX_DROP_MAD_LENGTH },
		{ "QP1: the permissive DLID", 1, 0, 0x64, 0xffff, 0x20, 0, 256, 1,
		  IBK_RX_DROP_PERMISSIVE },
		{ "QP1: a SEND with immediate", 1, 0, 0x65, 0x10, 0x20, 0, 256, 0,
		  IBK_RX_DROP_MAD_IMM },
		{ "a UD QP: the permissive DLID", 2, 0, 0x64, 0xffff, 0x20, 0, 64,
		  0, IBK_RX_DROP_PERMISSIVE },
		{ "a UD QP: the permissive SLID", 2, 0, 0x64, 0x10, 0xffff, 0, 64,
		  0, IBK_RX_DROP_PERMISSIVE },
		{ "a UD QP: any length, any VL but 15, with immediate", 2, 3,
		  0x65, 0x10, 0x20, 1, 99, 0, IBK_RX_ACCEPT },
	};
	uint8_t pkt[512];
	size_t i, len;
	unsigned drops = 0;
	bool names = true;

	setup(32, 8);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ibk_qp_keys *qp = cases[i].qp == 0 ? &smi :
					       cases[i].qp == 1 ? &gsi : &ud;
		enum ibk_rx_verdict v;

		len = build_mad(pkt, cases[i].vl, cases[i].dlid, cases[i].slid,
				cases[i].opcode, cases[i].pad,
				(uint32_t)cases[i].qp, qp->qkey,
				cases[i].payload, cases[i].dr_class ? dr : lid);
		v = ibk_port_rx_packet(&port, qp, pkt, len, NULL);
		drops += cases[i].want != IBK_RX_ACCEPT;
		if (!tap_ok(v == cases[i].want &&
			    ibk_counter16_read(&port.mad_drops) == drops,
			    "%s: %s, counted in mad_drops", cases[i].what,
			    ibk_rx_verdict_name(cases[i].want)))
			tap_diag("got %s, mad_drops %u", ibk_rx_verdict_name(v),
				 ibk_counter16_read(&port.mad_drops));
		names &= strcmp(ibk_rx_verdict_name(cases[i].want),
				"unknown") != 0;
	}
	tap_ok(ibk_counter16_read(&port.pkey_violations) == 0 &&
	       ibk_counter16_read(&port.qkey_violations) == 0 && names,
	       "no management drop is a key violation; each has a name");

	/* qib's order for QP1: the keys, then the MAD rules */
	len = build_mad(pkt, 15, 0x10, 0x20, 0x64, 0, 1, 0x80010001u, 256, lid);
	tap_ok(ibk_port_rx_packet(&port, &gsi, pkt, len, NULL) ==
	       IBK_RX_DROP_QKEY &&
	       ibk_counter16_read(&port.qkey_violations) == 1 &&
	       ibk_counter16_read(&port.mad_drops) == drops,
	       "QP1, wrong Q_Key on VL15: the Q_Key violation, checked first, "
	       "is what is counted");
}

int main(void)
{
	test_rng_seed(SEED);
	test_blocks_vs_model();
	test_generations();
	test_guid_entry0();
	test_answer();
	test_mkey_counter();
	test_rx_trap();
	test_mad_rules();
	test_sma_flow();
	test_gid_prefix();
	test_race();
	return tap_done();
}
