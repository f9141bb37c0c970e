/* SPDX-License-Identifier: MIT */
/*
 * tables_gid.c - EVA harness of ib_tables.h's GID table of CAPACITY
 * entries, as tables_pkey.c is of the P_Key table: storage of exactly that
 * size, a hash index of the full and of the fewest slots, then any sequence
 * of the writers (set, refill, GUIDInfo blocks, GidPrefix, state) and
 * readers, each call's arguments unknown over their domain and NULL where
 * the call documents it.
 */
#include "harness.h"
#define IBK_ATOMICS_HEADER "atomics_plain.h"
#include "ib_tables.h"

static struct ibk_gid_cell cells[IBK_GID_CELLS(CAPACITY)];
static struct ibk_hash_slot slots[IBK_HASH_SLOTS(CAPACITY)];
static const uint32_t SLOTS = IBK_HASH_SLOTS(CAPACITY);
static const uint32_t SLOTS_MIN = IBK_HASH_SLOTS_MIN(CAPACITY);
static struct ibk_gid_entry in[CAPACITY + 1], out[CAPACITY + 1];

/* Every GID type, IBK_GID_TYPE_ANY and invalid values either side. */
#define ANY_GID_TYPE()							\
	((enum ibk_gid_type)Frama_C_interval(IBK_GID_TYPE_ANY - 1,	\
					     IBK_GID_TYPE_ROCE_V2 + 2))

/* What init refuses, writing nothing. */
static void init_cases(void)
{
	struct ibk_gid_table t;

	(void)ibk_gid_table_init(NULL, cells, CAPACITY, slots, SLOTS);
	(void)ibk_gid_table_init(&t, NULL, CAPACITY, slots, SLOTS);
	(void)ibk_gid_table_init(&t, cells, CAPACITY, NULL, SLOTS);
	(void)ibk_gid_table_init(&t, cells, 0, slots, SLOTS);
	(void)ibk_gid_table_init(&t, cells, IBK_TABLE_MAX_CAPACITY + 1, slots,
				 SLOTS);
	(void)ibk_gid_table_init(&t, cells, CAPACITY, slots, SLOTS_MIN - 1);
}

static void any_sequence(uint32_t slot_count)
{
	struct ibk_gid_table t;
	struct ibk_gid_entry entry;
	struct ibk_gid gid;
	struct ibk_gid_ref ref;
	enum ibk_gid_type type;
	ibk_guid_t guids[IBK_GUID_BLOCK_ENTRIES];
	uint32_t gen, ticket;

	(void)ibk_gid_table_init(&t, cells, CAPACITY, slots, slot_count);
	UNKNOWN(ref);
	ticket = ibk_gid_table_refill_ticket(&t);
	while (any_bool()) {
		UNKNOWN(gid);
		switch (Frama_C_interval(0, 13)) {
		case 0:
			(void)ibk_gid_table_set(maybe_null(&t), any_u32(),
						maybe_null(&gid),
						ANY_GID_TYPE());
			break;
		case 1:
			(void)ibk_gid_table_set_state(maybe_null(&t),
				ANY_ENUM(enum ibk_port_state, IBK_PORT_DOWN,
					 IBK_PORT_ACTIVE_DEFER));
			break;
		case 2:
			ticket = any_bool() ? ibk_gid_table_refill_ticket(&t) :
					      any_u32();
			break;
		case 3:
			/* NULL entries in a call of their own: a big table's
			 * loops merge the states that tell which count came
			 * with them */
			UNKNOWN(in);
			(void)ibk_gid_table_refill(maybe_null(&t), in,
				Frama_C_unsigned_int_interval(0, CAPACITY + 1),
				ticket);
			(void)ibk_gid_table_refill(maybe_null(&t), NULL,
						   any_u32(), ticket);
			break;
		case 4:
			(void)ibk_gid_table_invalidate(maybe_null(&t));
			break;
		case 5:
			(void)ibk_gid_table_ref_get(maybe_null(&t), any_u32(),
						    maybe_null(&ref));
			break;
		case 6:
			(void)ibk_gid_table_get(maybe_null(&t), any_u32(),
						maybe_null(&entry));
			break;
		case 7:
			(void)ibk_gid_table_ref_find(maybe_null(&t),
						     maybe_null(&gid),
						     ANY_GID_TYPE(),
						     maybe_null(&ref));
			break;
		case 8:
			(void)ibk_gid_table_find(maybe_null(&t),
						 maybe_null(&gid),
						 ANY_GID_TYPE(),
						 maybe_null(&type));
			break;
		case 9:
			(void)ibk_gid_table_snapshot(maybe_null(&t),
				Frama_C_unsigned_int_interval(0, CAPACITY + 1),
				maybe_null(out), maybe_null(&gen));
			break;
		case 10:
			(void)ibk_gid_table_ref_fresh(&t, &ref);
			break;
		case 11:
			UNKNOWN(guids);
			(void)ibk_gid_table_apply_guid_block(maybe_null(&t),
							     any_u32(),
							     any_u64(),
							     maybe_null(guids));
			break;
		case 12:
			(void)ibk_gid_table_apply_prefix(maybe_null(&t),
							 any_u64());
			break;
		default:
			(void)ibk_gid_table_read_guid_block(maybe_null(&t),
							    any_u32(),
							    maybe_null(guids));
			break;
		}
	}
}

int main(void)
{
	init_cases();
	any_sequence(SLOTS);
	any_sequence(SLOTS_MIN);
	return 0;
}
