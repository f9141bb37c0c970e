/* SPDX-License-Identifier: MIT */
/*
 * keys_mem.c - EVA harness of ib_keys.h's memory keys: R_Keys, access
 * flags and ranges over every value; a request parsed from any BTH and
 * extension of any QP type; the access check and every memory operation
 * on regions, windows, QPs and work requests holding any values (their
 * enums over every value and two invalid ones), NULL where documented.
 */
#include "harness.h"
#include "ib_keys.h"

/*
 * A region or window holding anything, its kind and state any byte; its
 * count of bound windows at most 2^24, the number of keys' indices (IBA
 * 10.6.3.1: the upper 24 bits of an R_Key index the object).
 */
static void any_attr(struct ibk_mem_attr *a)
{
	UNKNOWN(*a);
	a->windows = Frama_C_unsigned_int_interval(0, 1u << 24);
}

static void any_qp(struct ibk_mem_qp *qp)
{
	UNKNOWN(*qp);
	qp->type = ANY_ENUM(enum ibk_qp_type, IBK_QPT_SMI, IBK_QPT_UD);
}

static void keys_and_ranges(void)
{
	ibk_rkey_t key = any_u32();

	(void)ibk_rkey_make(any_u32(), any_u8());
	(void)ibk_rkey_index(key);
	(void)ibk_rkey_byte(key);
	(void)ibk_rkey_next(key);
	(void)ibk_access_reg_ok(any_u32());
	(void)ibk_access_allows(any_u32(), any_u32());
	(void)ibk_range_verdict_name(ANY_ENUM(enum ibk_range_verdict,
					      IBK_RANGE_IN, IBK_RANGE_BEYOND));
	(void)ibk_mem_range_check(any_u64(), any_u64(), any_u64(), any_u64());
	(void)ibk_mem_range_ok(any_u64(), any_u64(), any_u64(), any_u64());
	(void)ibk_aeth_wc_status(any_u8());
}

static void verdicts(void)
{
	enum ibk_mem_verdict v = ANY_ENUM(enum ibk_mem_verdict, IBK_MEM_OK,
					  IBK_MEM_ERR_ALIGN);

	(void)ibk_mem_verdict_name(v);
	(void)ibk_mem_verdict_nak(v);
	(void)ibk_mem_verdict_wc_status(v);
	(void)ibk_memop_verdict_name(ANY_ENUM(enum ibk_memop_verdict,
					      IBK_MEMOP_OK,
					      IBK_MEMOP_ERR_INVALID));
}

static void requests(void)
{
	uint8_t bth[IBK_BTH_LEN + IBK_ATOMICETH_LEN];
	struct ibk_mem_request req;
	struct ibk_mem_attr r, mr;
	struct ibk_mem_qp qp;

	UNKNOWN(bth);
	any_qp(&qp);
	(void)ibk_mem_request_parse(qp.type, bth, &req);
	UNKNOWN(req);
	req.atomic = any_bool();
	req.continues = any_bool();
	any_attr(&r);
	any_attr(&mr);
	(void)ibk_mem_check(&qp, &req, maybe_null(&r), maybe_null(&mr));
}

static void operations(void)
{
	struct ibk_mem_attr o, mr, old_mr, next;
	struct ibk_mw_bind_wr wr;
	struct ibk_mem_qp qp;

	any_attr(&o);
	(void)ibk_mem_register(&o);
	any_attr(&mr);
	any_attr(&next);
	(void)ibk_mr_rereg(&mr, &next);
	any_attr(&mr);
	(void)ibk_mr_fast_reg(&mr, any_u32(), &next);
	any_attr(&o);
	any_attr(&mr);
	any_attr(&old_mr);
	UNKNOWN(wr);
	(void)ibk_mw_bind_check(&o, maybe_null(&mr), &wr);
	(void)ibk_mw_bind(&o, maybe_null(&mr), maybe_null(&old_mr), &wr);
	any_attr(&o);
	any_attr(&mr);
	(void)ibk_mem_invalidate(&o, maybe_null(&mr), any_u32());
	any_attr(&o);
	any_attr(&mr);
	any_qp(&qp);
	(void)ibk_mem_invalidate_remote(&o, maybe_null(&mr), any_u32(), &qp);
	any_attr(&o);
	any_attr(&mr);
	(void)ibk_mem_deregister(&o, maybe_null(&mr), any_u32());
}

int main(void)
{
	keys_and_ranges();
	verdicts();
	requests();
	operations();
	return 0;
}
