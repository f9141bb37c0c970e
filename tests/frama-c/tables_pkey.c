/* SPDX-License-Identifier: MIT */
/*
 * tables_pkey.c - EVA harness of ib_tables.h's P_Key table of CAPACITY
 * entries (tests/frama-c/run passes each capacity it analyses): storage
 * of exactly that size, with a hash index of the full and of the fewest
 * slots, then any sequence of the writers and readers, of any length (a
 * loop EVA runs to its fixpoint), in every port state, each call's
 * arguments unknown over their domain and NULL where the call documents
 * it (EVA runs one thread: atomics_plain.h).
 */
#include "harness.h"
#define IBK_ATOMICS_HEADER "atomics_plain.h"
#include "ib_tables.h"

static struct ibk_pkey_cell cells[IBK_PKEY_CELLS(CAPACITY)];
static struct ibk_hash_slot slots[IBK_HASH_SLOTS(CAPACITY)];
/* the macros' chains of constants, folded here rather than in a function */
static const uint32_t SLOTS = IBK_PKEY_HASH_SLOTS(CAPACITY);
static const uint32_t SLOTS_MIN = IBK_PKEY_HASH_SLOTS_MIN(CAPACITY);
static const uint32_t SLOTS_ANY_TABLE = IBK_HASH_SLOTS(CAPACITY);
static ibk_pkey_t in[CAPACITY + 1], out[CAPACITY + 1];

/* What init refuses, writing nothing, and the index it makes of the slots
 * enough for any table, which it caps at one slot per 16-bit key. */
static void init_cases(void)
{
	struct ibk_pkey_table t;

	(void)ibk_pkey_table_init(&t, cells, CAPACITY, slots, SLOTS_ANY_TABLE);

	(void)ibk_pkey_table_init(NULL, cells, CAPACITY, slots, SLOTS);
	(void)ibk_pkey_table_init(&t, NULL, CAPACITY, slots, SLOTS);
	(void)ibk_pkey_table_init(&t, cells, CAPACITY, NULL, SLOTS);
	(void)ibk_pkey_table_init(&t, cells, 0, slots, SLOTS);
	(void)ibk_pkey_table_init(&t, cells, IBK_TABLE_MAX_CAPACITY + 1, slots,
				  SLOTS);
	(void)ibk_pkey_table_init(&t, cells, CAPACITY, slots, SLOTS_MIN - 1);
}

static void any_sequence(uint32_t slot_count)
{
	struct ibk_pkey_table t;
	ibk_pkey_t block[IBK_PKEY_BLOCK_ENTRIES], pkey;
	struct ibk_pkey_ref ref;
	uint32_t gen, ticket;

	(void)ibk_pkey_table_init(&t, cells, CAPACITY, slots, slot_count);
	UNKNOWN(ref);
	ticket = ibk_pkey_table_refill_ticket(&t);
	while (any_bool()) {
		switch (Frama_C_interval(0, 13)) {
		case 0:
			(void)ibk_pkey_table_set(maybe_null(&t), any_u32(),
						 any_u16());
			break;
		case 1:
			(void)ibk_pkey_table_set_state(maybe_null(&t),
				ANY_ENUM(enum ibk_port_state, IBK_PORT_DOWN,
					 IBK_PORT_ACTIVE_DEFER));
			break;
		case 2:
			ticket = any_bool() ? ibk_pkey_table_refill_ticket(&t) :
					      any_u32();
			break;
		case 3:
			UNKNOWN(in);
			(void)ibk_pkey_table_refill(maybe_null(&t),
				maybe_null(in),
				Frama_C_unsigned_int_interval(0, CAPACITY + 1),
				ticket);
			break;
		case 4:
			(void)ibk_pkey_table_invalidate(maybe_null(&t));
			break;
		case 5:
			(void)ibk_pkey_table_ref_get(maybe_null(&t), any_u32(),
						     maybe_null(&ref));
			break;
		case 6:
			(void)ibk_pkey_table_get(maybe_null(&t), any_u32(),
						 maybe_null(&pkey));
			break;
		case 7:
			(void)ibk_pkey_table_ref_find(maybe_null(&t), any_u16(),
						      maybe_null(&ref));
			break;
		case 8:
			(void)ibk_pkey_table_find(maybe_null(&t), any_u16(),
						  maybe_null(&pkey));
			break;
		case 9:
			(void)ibk_pkey_table_find_exact(maybe_null(&t),
							any_u16());
			break;
		case 10:
			(void)ibk_pkey_table_snapshot(maybe_null(&t),
				Frama_C_unsigned_int_interval(0, CAPACITY + 1),
				maybe_null(out), maybe_null(&gen));
			break;
		case 11:
			(void)ibk_pkey_table_ref_fresh(&t, &ref);
			break;
		case 12:
			UNKNOWN(block);
			(void)ibk_pkey_table_apply_block(maybe_null(&t),
							 any_u32(),
							 maybe_null(block));
			break;
		default:
			(void)ibk_pkey_table_read_block(maybe_null(&t),
							any_u32(),
							maybe_null(block));
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
