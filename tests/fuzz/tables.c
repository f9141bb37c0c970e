/* SPDX-License-Identifier: MIT */
/*
 * tables: operation sequences on one P_Key or one GID table, checked
 * after every step against the linear model of model.h. From the input:
 * which table, its capacity (1-16), its hash slot count (the fewest it
 * takes, the most it uses, or any count between; one too few must be
 * refused), a starting generation (often just below the 32-bit wrap),
 * then up to 256 operations: take a refill ticket, refill (with the held
 * ticket, or a fresh one), set an entry, set the port state (valid or
 * not), invalidate, get, find, find exact, take a reference by index or
 * by value, snapshot. Keys come mostly from a small pool, so that
 * partitions and GIDs repeat across entries and types. Every return
 * code, value and index must be the model's, and after every step each
 * of eight references must read fresh exactly when its table published
 * nothing since it was taken. Storage is heap blocks of exactly the
 * documented size.
 */
#include "model.h"

#define MAX_OPS 256

enum { OP_TICKET, OP_REFILL, OP_SET, OP_STATE, OP_INVALIDATE, OP_GET,
       OP_FIND, OP_FIND_EXACT, OP_REF_GET, OP_REF_FIND, OP_SNAPSHOT,
       OP_COUNT };

/* A slot count between the fewest and the most the table uses. */
static uint32_t pick_slots(struct fz *f, uint32_t fewest, uint32_t most)
{
	switch (fz_below(f, 3)) {
	case 0:  return fewest;
	case 1:  return most;
	default: return fewest + fz_below(f, most - fewest + 1);
	}
}

static uint32_t pick_start(struct fz *f)
{
	return fz_bool(f) ? 0xffffffffu - 2u * fz_u8(f) : fz_u32(f);
}

/* ---- P_Key table ---- */

static uint16_t pick_pkey(struct fz *f)
{
	uint8_t b = fz_u8(f);

	if (b >= 0xe0)
		return fz_u16(f);
	return (uint16_t)((b & 7) | (b & 8 ? 0x8000 : 0));	/* base 0-7 */
}

static void check_pkey_refs(const struct ibk_pkey_table *t,
			    const struct ibk_pkey_ref *refs,
			    const struct model_ref *mrefs, uint32_t updates)
{
	for (unsigned k = 0; k < MODEL_REFS; k++)
		FZ_CHECK(ibk_pkey_table_ref_fresh(t, &refs[k]) ==
			 model_ref_fresh(mrefs, k, updates),
			 "P_Key reference %u: fresh %d after %u updates", k,
			 ibk_pkey_table_ref_fresh(t, &refs[k]), updates);
}

static void fuzz_pkeys(struct fz *f)
{
	uint32_t cap = 1 + fz_below(f, MODEL_MAX_CAPACITY);
	uint32_t fewest = IBK_PKEY_HASH_SLOTS_MIN(cap);
	uint32_t slot_count = pick_slots(f, fewest, IBK_PKEY_HASH_SLOTS(cap));
	struct ibk_pkey_cell *cells =
		fz_storage(IBK_PKEY_CELLS(cap) * sizeof(*cells));
	struct ibk_hash_slot *slots = fz_storage(slot_count * sizeof(*slots));
	struct ibk_pkey_ref refs[MODEL_REFS];
	struct model_ref mrefs[MODEL_REFS] = { { false, 0, 0 } };
	struct ibk_pkey_table t;
	struct model_pkeys m;
	uint32_t ticket = 0, ticket_events = 0;

	FZ_CHECK(ibk_pkey_table_init(&t, cells, cap, slots, fewest - 1) ==
		 IBK_ERANGE, "capacity %u: %u slots taken", cap, fewest - 1);
	FZ_CHECK(ibk_pkey_table_init(&t, cells, cap, slots, slot_count) ==
		 IBK_OK, "capacity %u, %u slots refused", cap, slot_count);
	ibk_latch_init(&t.hdr.latch, pick_start(f));
	model_pkeys_init(&m, cap);
	for (unsigned k = 0; k < MODEL_REFS; k++)
		refs[k].generation = IBK_GENERATION_NEVER;

	for (unsigned step = 0; step < MAX_OPS && !fz_empty(f); step++) {
		unsigned op = fz_below(f, OP_COUNT), k = fz_below(f, MODEL_REFS);
		uint32_t index = fz_below(f, cap + 2), gen = 0;
		uint16_t key = pick_pkey(f), got = 0, want = 0;
		uint16_t keys[MODEL_MAX_CAPACITY + 1], snap[MODEL_MAX_CAPACITY];
		uint32_t n;
		int rc, mrc;

		switch (op) {
		case OP_TICKET:
			ticket = ibk_pkey_table_refill_ticket(&t);
			ticket_events = m.st.events;
			break;
		case OP_REFILL:
			n = fz_below(f, cap + 2);
			for (uint32_t i = 0; i < n; i++)
				keys[i] = pick_pkey(f);
			if (fz_bool(f)) {	/* a ticket taken just now */
				ticket = ibk_pkey_table_refill_ticket(&t);
				ticket_events = m.st.events;
			}
			rc = ibk_pkey_table_refill(&t, keys, n, ticket);
			mrc = model_pkeys_refill(&m, keys, n, ticket_events);
			FZ_CHECK(rc == mrc, "refill %u: %d, model %d", n, rc, mrc);
			break;
		case OP_SET:
			rc = ibk_pkey_table_set(&t, index, key);
			mrc = model_pkeys_set(&m, index, key);
			FZ_CHECK(rc == mrc, "set [%u] %04x: %d, model %d", index,
				 key, rc, mrc);
			break;
		case OP_STATE:
			n = fz_below(f, 7);
			rc = ibk_pkey_table_set_state(&t, (enum ibk_port_state)n);
			mrc = model_set_state(&m.st, n);
			FZ_CHECK(rc == mrc, "state %u: %d, model %d", n, rc, mrc);
			break;
		case OP_INVALIDATE:
			FZ_CHECK(ibk_pkey_table_invalidate(&t) == IBK_OK,
				 "invalidate");
			model_status_update(&m.st, 0, true);
			break;
		case OP_GET:
			rc = ibk_pkey_table_get(&t, index, &got);
			mrc = model_pkeys_get(&m, index, &want);
			FZ_CHECK(rc == mrc && (rc || got == want),
				 "get [%u]: %d %04x, model %d %04x", index, rc,
				 got, mrc, want);
			break;
		case OP_FIND:
			rc = ibk_pkey_table_find(&t, key, &got);
			mrc = model_pkeys_find(&m, key, &want);
			FZ_CHECK(rc == mrc && (rc < 0 || got == want),
				 "find %04x: %d %04x, model %d %04x", key, rc,
				 got, mrc, want);
			break;
		case OP_FIND_EXACT:
			rc = ibk_pkey_table_find_exact(&t, key);
			mrc = model_pkeys_find_exact(&m, key);
			FZ_CHECK(rc == mrc, "find exact %04x: %d, model %d", key,
				 rc, mrc);
			break;
		case OP_REF_GET:
			rc = ibk_pkey_table_ref_get(&t, index, &refs[k]);
			mrc = model_pkeys_get(&m, index, &want);
			FZ_CHECK(rc == mrc && (rc || (refs[k].index == index &&
						      refs[k].pkey == want)),
				 "ref get [%u]: %d, model %d", index, rc, mrc);
			model_ref_taken(mrefs, k, rc == IBK_OK,
					refs[k].generation, m.st.updates);
			break;
		case OP_REF_FIND:
			rc = ibk_pkey_table_ref_find(&t, key, &refs[k]);
			mrc = model_pkeys_find(&m, key, &want);
			FZ_CHECK(rc == (mrc < 0 ? mrc : IBK_OK) &&
				 (rc || (refs[k].index == mrc &&
					 refs[k].pkey == want)),
				 "ref find %04x: %d, model %d", key, rc, mrc);
			model_ref_taken(mrefs, k, rc == IBK_OK,
					refs[k].generation, m.st.updates);
			break;
		case OP_SNAPSHOT:
			n = fz_bool(f) ? cap : cap - 1;
			rc = ibk_pkey_table_snapshot(&t, n, snap, &gen);
			mrc = n < cap ? IBK_ERANGE : model_read_rc(&m.st);
			FZ_CHECK(rc == (mrc ? mrc : (int)cap),
				 "snapshot: %d, model %d", rc, mrc);
			if (rc < 0)
				break;
			FZ_CHECK(memcmp(snap, m.e, cap * sizeof(snap[0])) == 0,
				 "snapshot entries");
			/* its generation is a reference's */
			model_ref_taken(mrefs, k, true, gen, m.st.updates);
			refs[k].generation = gen;
			break;
		}
		check_pkey_refs(&t, refs, mrefs, m.st.updates);
	}
	free(cells);
	free(slots);
}

/* ---- GID table ---- */

static void pick_gid(struct fz *f, uint8_t raw[16])
{
	static const uint8_t pool[4][16] = {
		{ 0 },						/* empty */
		{ 0xfe, 0x80, [8] = 0x00, 0x02, 0xc9, 0x03, 0, 0, 0, 1 },
		{ 0xfe, 0x80, [15] = 2 },
		{ [10] = 0xff, 0xff, 10, 0, 0, 1 },		/* RoCE v2 */
	};
	uint8_t b = fz_u8(f);

	if (b >= 0xf0)
		fz_bytes(f, raw, 16);
	else
		memcpy(raw, pool[b & 3], 16);
}

static int pick_type(struct fz *f)
{
	return (int)fz_below(f, 5) - 1;		/* ANY, IB, v1, v2, bad */
}

static void check_gid_refs(const struct ibk_gid_table *t,
			   const struct ibk_gid_ref *refs,
			   const struct model_ref *mrefs, uint32_t updates)
{
	for (unsigned k = 0; k < MODEL_REFS; k++)
		FZ_CHECK(ibk_gid_table_ref_fresh(t, &refs[k]) ==
			 model_ref_fresh(mrefs, k, updates),
			 "GID reference %u: fresh %d after %u updates", k,
			 ibk_gid_table_ref_fresh(t, &refs[k]), updates);
}

static bool entry_is(const struct ibk_gid *gid, int type,
		     const struct model_gid_entry *e)
{
	return memcmp(gid->raw, e->raw, 16) == 0 && type == e->type;
}

static void fuzz_gids(struct fz *f)
{
	uint32_t cap = 1 + fz_below(f, MODEL_MAX_CAPACITY);
	uint32_t fewest = IBK_HASH_SLOTS_MIN(cap);
	uint32_t slot_count = pick_slots(f, fewest, IBK_HASH_SLOTS(cap));
	struct ibk_gid_cell *cells =
		fz_storage(IBK_GID_CELLS(cap) * sizeof(*cells));
	struct ibk_hash_slot *slots = fz_storage(slot_count * sizeof(*slots));
	struct ibk_gid_ref refs[MODEL_REFS];
	struct model_ref mrefs[MODEL_REFS] = { { false, 0, 0 } };
	struct ibk_gid_table t;
	struct model_gids m;
	uint32_t ticket = 0, ticket_events = 0;

	FZ_CHECK(ibk_gid_table_init(&t, cells, cap, slots, fewest - 1) ==
		 IBK_ERANGE, "capacity %u: %u slots taken", cap, fewest - 1);
	FZ_CHECK(ibk_gid_table_init(&t, cells, cap, slots, slot_count) ==
		 IBK_OK, "capacity %u, %u slots refused", cap, slot_count);
	ibk_latch_init(&t.hdr.latch, pick_start(f));
	model_gids_init(&m, cap);
	for (unsigned k = 0; k < MODEL_REFS; k++)
		refs[k].generation = IBK_GENERATION_NEVER;

	for (unsigned step = 0; step < MAX_OPS && !fz_empty(f); step++) {
		unsigned op = fz_below(f, OP_COUNT), k = fz_below(f, MODEL_REFS);
		uint32_t index = fz_below(f, cap + 2), gen = 0, n;
		struct ibk_gid_entry in[MODEL_MAX_CAPACITY + 1];
		struct model_gid_entry min[MODEL_MAX_CAPACITY + 1];
		struct ibk_gid_entry got, snap[MODEL_MAX_CAPACITY];
		enum ibk_gid_type found = IBK_GID_TYPE_ANY;
		struct ibk_gid gid;
		int type, rc, mrc;

		pick_gid(f, gid.raw);
		type = pick_type(f);
		switch (op == OP_FIND_EXACT ? OP_FIND : op) {
		case OP_TICKET:
			ticket = ibk_gid_table_refill_ticket(&t);
			ticket_events = m.st.events;
			break;
		case OP_REFILL:
			n = fz_below(f, cap + 2);
			for (uint32_t i = 0; i < n; i++) {
				pick_gid(f, in[i].gid.raw);
				in[i].type = (enum ibk_gid_type)pick_type(f);
				memcpy(min[i].raw, in[i].gid.raw, 16);
				min[i].type = in[i].type;
			}
			if (fz_bool(f)) {
				ticket = ibk_gid_table_refill_ticket(&t);
				ticket_events = m.st.events;
			}
			rc = ibk_gid_table_refill(&t, in, n, ticket);
			mrc = model_gids_refill(&m, min, n, ticket_events);
			FZ_CHECK(rc == mrc, "refill %u: %d, model %d", n, rc, mrc);
			break;
		case OP_SET:
			rc = ibk_gid_table_set(&t, index, &gid,
					       (enum ibk_gid_type)type);
			mrc = model_gids_set(&m, index, gid.raw, type);
			FZ_CHECK(rc == mrc, "set [%u] type %d: %d, model %d",
				 index, type, rc, mrc);
			break;
		case OP_STATE:
			n = fz_below(f, 7);
			rc = ibk_gid_table_set_state(&t, (enum ibk_port_state)n);
			mrc = model_set_state(&m.st, n);
			FZ_CHECK(rc == mrc, "state %u: %d, model %d", n, rc, mrc);
			break;
		case OP_INVALIDATE:
			FZ_CHECK(ibk_gid_table_invalidate(&t) == IBK_OK,
				 "invalidate");
			model_status_update(&m.st, 0, true);
			break;
		case OP_GET:
			rc = ibk_gid_table_get(&t, index, &got);
			mrc = model_gids_get(&m, index);
			FZ_CHECK(rc == mrc && (rc || entry_is(&got.gid, got.type,
							     &m.e[index])),
				 "get [%u]: %d, model %d", index, rc, mrc);
			break;
		case OP_FIND:
			rc = ibk_gid_table_find(&t, &gid, (enum ibk_gid_type)type,
						&found);
			mrc = model_gids_find(&m, gid.raw, type);
			FZ_CHECK(rc == mrc && (rc < 0 ||
					       (int)found == m.e[rc].type),
				 "find type %d: %d, model %d", type, rc, mrc);
			break;
		case OP_REF_GET:
			rc = ibk_gid_table_ref_get(&t, index, &refs[k]);
			mrc = model_gids_get(&m, index);
			FZ_CHECK(rc == mrc && (rc || (refs[k].index == index &&
				 entry_is(&refs[k].gid, refs[k].type,
					  &m.e[index]))),
				 "ref get [%u]: %d, model %d", index, rc, mrc);
			model_ref_taken(mrefs, k, rc == IBK_OK,
					refs[k].generation, m.st.updates);
			break;
		case OP_REF_FIND:
			rc = ibk_gid_table_ref_find(&t, &gid,
						    (enum ibk_gid_type)type,
						    &refs[k]);
			mrc = model_gids_find(&m, gid.raw, type);
			FZ_CHECK(rc == (mrc < 0 ? mrc : IBK_OK) &&
				 (rc || (refs[k].index == mrc &&
					 entry_is(&refs[k].gid, refs[k].type,
						  &m.e[mrc]))),
				 "ref find type %d: %d, model %d", type, rc, mrc);
			model_ref_taken(mrefs, k, rc == IBK_OK,
					refs[k].generation, m.st.updates);
			break;
		case OP_SNAPSHOT:
			n = fz_bool(f) ? cap : cap - 1;
			rc = ibk_gid_table_snapshot(&t, n, snap, &gen);
			mrc = n < cap ? IBK_ERANGE : model_read_rc(&m.st);
			FZ_CHECK(rc == (mrc ? mrc : (int)cap),
				 "snapshot: %d, model %d", rc, mrc);
			if (rc < 0)
				break;
			for (uint32_t i = 0; i < cap; i++)
				FZ_CHECK(entry_is(&snap[i].gid, snap[i].type,
						  &m.e[i]), "snapshot [%u]", i);
			model_ref_taken(mrefs, k, true, gen, m.st.updates);
			refs[k].generation = gen;
			break;
		}
		check_gid_refs(&t, refs, mrefs, m.st.updates);
	}
	free(cells);
	free(slots);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = fz_init(data, size);

	if (fz_u8(&f) & 1)
		fuzz_gids(&f);
	else
		fuzz_pkeys(&f);
	return 0;
}
