/* SPDX-License-Identifier: MIT */
/*
 * tables_mr.c - EVA harness of ib_tables.h's memory region and window
 * table of CAPACITY objects (tests/frama-c/run passes each capacity it
 * analyses): storage of exactly that size, init's refusals, then any
 * sequence of the writers, readers and responder checks, of any length
 * (a loop EVA runs to its fixpoint), each call's attributes, work
 * requests, QPs and headers any bytes, NULL where the call documents it
 * (EVA runs one thread: atomics_plain.h).
 */
#include "harness.h"
#define IBK_ATOMICS_HEADER "atomics_plain.h"
#include "ib_tables.h"

/* the longest burst checked: its count any of 0..BURST */
#define BURST 5

static struct ibk_mr_cell cells[IBK_MR_CELLS(CAPACITY)];
/* a BTH and the longest extension after it, AtomicETH's */
static uint8_t hdr[BURST][IBK_BTH_LEN + IBK_ATOMICETH_LEN];
static const void *hdrs[BURST];
static uint8_t verdicts[BURST];

/* What init refuses, writing nothing. */
static void init_cases(void)
{
	struct ibk_mr_table t;

	(void)ibk_mr_table_init(NULL, cells, CAPACITY);
	(void)ibk_mr_table_init(&t, NULL, CAPACITY);
	(void)ibk_mr_table_init(&t, cells, 0);
	(void)ibk_mr_table_init(&t, cells, IBK_MR_MAX_CAPACITY + 1);
}

static void any_qp(struct ibk_mem_qp *qp)
{
	UNKNOWN(*qp);
	qp->type = ANY_ENUM(enum ibk_qp_type, IBK_QPT_SMI, IBK_QPT_UD);
}

static void any_sequence(void)
{
	struct ibk_mr_table t;
	struct ibk_mem_attr attr;
	struct ibk_mw_bind_wr wr;
	struct ibk_mem_qp qp;
	struct ibk_mr_ref ref;
	unsigned i;

	(void)ibk_mr_table_init(&t, cells, CAPACITY);
	UNKNOWN(ref);
	for (i = 0; i < BURST; i++)
		hdrs[i] = hdr[i];
	while (any_bool()) {
		switch (Frama_C_interval(0, 12)) {
		case 0:
			UNKNOWN(attr);
			(void)ibk_mr_table_register(maybe_null(&t),
						    maybe_null(&attr));
			break;
		case 1:
			UNKNOWN(attr);
			(void)ibk_mr_table_rereg(maybe_null(&t), any_u32(),
						 maybe_null(&attr));
			break;
		case 2:
			UNKNOWN(attr);
			(void)ibk_mr_table_fast_reg(maybe_null(&t), any_u32(),
						    maybe_null(&attr));
			break;
		case 3:
			UNKNOWN(wr);
			(void)ibk_mr_table_bind(maybe_null(&t),
						maybe_null(&wr));
			break;
		case 4:
			(void)ibk_mr_table_invalidate(maybe_null(&t),
						      any_u32());
			break;
		case 5:
			any_qp(&qp);
			(void)ibk_mr_table_invalidate_remote(maybe_null(&t),
							     any_u32(),
							     maybe_null(&qp));
			break;
		case 6:
			(void)ibk_mr_table_deregister(maybe_null(&t),
						      any_u32());
			break;
		case 7:
			(void)ibk_mr_table_reset(maybe_null(&t));
			break;
		case 8:
			(void)ibk_mr_table_ref_get(maybe_null(&t), any_u32(),
						   maybe_null(&ref));
			break;
		case 9:
			(void)ibk_mr_table_get(maybe_null(&t), any_u32(),
					       maybe_null(&attr));
			break;
		case 10:
			(void)ibk_mr_table_ref_fresh(&t, &ref);
			break;
		case 11:
			any_qp(&qp);
			UNKNOWN(hdr[0]);
			(void)ibk_mr_table_check(&t, &qp, hdr[0]);
			break;
		default:
			any_qp(&qp);
			UNKNOWN(hdr);
			(void)ibk_mr_table_check_burst(&t, &qp, hdrs,
				Frama_C_unsigned_int_interval(0, BURST),
				verdicts);
			break;
		}
	}
}

int main(void)
{
	init_cases();
	any_sequence();
	return 0;
}
