/* SPDX-License-Identifier: MIT */
/*
 * mem: the responder's memory-key path on requests of the fuzzer's bytes.
 * From the input: a QP (type, QPN, PD, access flags), a BTH and whatever
 * extension header its opcode carries, each in a heap block of exactly
 * its size (a RETH, an AtomicETH, a FETH and RETH for FLUSH, nothing for
 * the rest), and the object its R_Key names, or none.
 *  - ibk_mem_request_parse() must read the extension only when the
 *    opcode carries one, and fill the request as IBA 9.4 and rxe's
 *    check_rkey() read it: RDMA WRITE FIRST/ONLY(/IMM) (write access over
 *    the RETH), ATOMIC WRITE (the same, at least its 8 bytes), RDMA READ
 *    (read access), COMPARE SWAP and FETCH ADD (atomic access, 8 bytes),
 *    FLUSH refused, WRITE MIDDLE/LAST the QP's write access only
 *    (check_op_valid()), every other opcode without an R_Key; all after
 *    the header check;
 *  - ibk_mem_check() must give the verdict of rxe's order as the header
 *    comment lists it, written in model.h as an if-chain with exact
 *    128-bit arithmetic for the range (an end of exactly 2^64 inside)
 *    and, for a window, its bytes translated into the MR the input may
 *    give it;
 *  - ibk_mem_range_check() must give the first failing of its four
 *    checks, also in 128 bits; the key helpers must match ibv_inc_rkey()'s
 *    arithmetic; NAK and completion status must follow from the verdict;
 *  - a SEND with invalidate of the object on the QP against the rules:
 *    key, PD, a type 2 window's QP, then the invalidation's own.
 */
#include "model.h"

/* Bytes after the BTH that the opcode carries and the parse may read. */
static size_t ext_len(uint8_t op)
{
	if (op == IBK_OP_FLUSH)				/* RC FLUSH: FETH, RETH */
		return 4 + IBK_RETH_LEN;
	if (ibk_opcode_has_atomiceth(op))
		return IBK_ATOMICETH_LEN;
	return ibk_opcode_has_reth(op) ? IBK_RETH_LEN : 0;
}

static void check_parse(enum ibk_qp_type type, const uint8_t *bth,
			const uint8_t *ext, const struct ibk_mem_request *req,
			enum ibk_mem_verdict v)
{
	uint8_t op = bth[0];
	uint32_t access = 0;
	bool atomic = false, continues = false;

	if (model_rx_header(type, bth[0], bth[1] & 0x0fu) != IBK_RX_ACCEPT) {
		FZ_CHECK(v == IBK_MEM_DROP_HEADER, "header: %s",
			 ibk_mem_verdict_name(v));
	} else if ((op & 0x1f) >= 0x07 && (op & 0x1f) <= 0x09 && op < 0x40) {
		/* RC and UC WRITE MIDDLE, LAST, LAST_IMM: check_op_valid */
		access = IBK_ACCESS_REMOTE_WRITE;
		continues = true;
		FZ_CHECK(v == IBK_MEM_NO_RKEY, "opcode %02x: %s", op,
			 ibk_mem_verdict_name(v));
	} else if (op == 0x06 || op == 0x0a || op == 0x0b || op == 0x26 ||
		   op == 0x2a || op == 0x2b) {
		access = IBK_ACCESS_REMOTE_WRITE;
	} else if (op == 0x1d) {
		access = IBK_ACCESS_REMOTE_WRITE;
		atomic = true;
	} else if (op == 0x0c) {
		access = IBK_ACCESS_REMOTE_READ;
	} else if (op == 0x13 || op == 0x14) {
		access = IBK_ACCESS_REMOTE_ATOMIC;
		atomic = true;
	} else {
		FZ_CHECK(v == (op == 0x1c ? IBK_MEM_ERR_OPCODE : IBK_MEM_NO_RKEY),
			 "opcode %02x: %s", op, ibk_mem_verdict_name(v));
	}
	FZ_CHECK(req->opcode == op && req->access == access &&
		 req->atomic == atomic && req->continues == continues,
		 "opcode %02x: access %x atomic %d continues %d", op,
		 req->access, req->atomic, req->continues);
	if (!access || continues) {
		FZ_CHECK(req->va == 0 && req->rkey == 0 && req->length == 0,
			 "opcode %02x: fields left", op);
		return;
	}
	FZ_CHECK(v == IBK_MEM_OK, "opcode %02x: %s", op,
		 ibk_mem_verdict_name(v));
	FZ_CHECK(req->va == model_be(ext, 8) && req->rkey == model_be(ext + 8, 4),
		 "opcode %02x: va or rkey", op);
	/* an ATOMIC WRITE covers its RETH's range and the 8 bytes it
	 * writes (rxe check_rkey(), rxe_mr_do_atomic_write()) */
	FZ_CHECK(req->length == ((op == 0x13 || op == 0x14) ? 8 :
				 op == 0x1d && model_be(ext + 12, 4) < 8 ? 8 :
				 model_be(ext + 12, 4)), "opcode %02x: length", op);
}

/*
 * A SEND with invalidate of @key received on @qp, against the rules one
 * if each: the key, the QP's PD, a bound type 2 window's QP, then those
 * of any invalidation (a type 1 window never, a type 2 only while VALID,
 * a region only fast-register and without windows). On success the object
 * is FREE and a window's region loses it.
 */
static void check_remote_invalidate(const struct ibk_mem_attr *obj,
				    uint32_t key, const struct ibk_mem_qp *qp)
{
	struct ibk_mem_attr o, mr;
	bool window = obj->kind == IBK_MEM_MW1 || obj->kind == IBK_MEM_MW2;
	enum ibk_memop_verdict want, got;

	memcpy(&o, obj, sizeof(o));		/* padding too, for memcmp */
	memset(&mr, 0, sizeof(mr));
	mr.windows = 1;
	if (o.state == IBK_MEM_INVALID || o.rkey != key)
		want = IBK_MEMOP_ERR_KEY;
	else if (o.pd != qp->pd)
		want = IBK_MEMOP_ERR_PD;
	else if (o.kind == IBK_MEM_MW2 && o.state == IBK_MEM_VALID &&
		 o.qpn != qp->qpn)
		want = IBK_MEMOP_ERR_WINDOW_QP;
	else if (window)
		want = o.kind == IBK_MEM_MW1 ? IBK_MEMOP_ERR_TYPE :
		       o.state != IBK_MEM_VALID ? IBK_MEMOP_ERR_STATE :
		       IBK_MEMOP_OK;
	else
		want = o.windows ? IBK_MEMOP_ERR_WINDOWS_BOUND :
		       o.kind != IBK_MEM_MR_FAST ? IBK_MEMOP_ERR_TYPE :
		       IBK_MEMOP_OK;
	got = ibk_mem_invalidate_remote(&o, &mr, key, qp);
	FZ_CHECK(got == want, "remote invalidate %s, model %s",
		 ibk_memop_verdict_name(got), ibk_memop_verdict_name(want));
	FZ_CHECK(got != IBK_MEMOP_OK ? memcmp(&o, obj, sizeof(o)) == 0 :
		 o.state == IBK_MEM_FREE &&
		 mr.windows == (window ? 0u : 1u),
		 "remote invalidate effect");
}

static void check_range(uint64_t iova, uint64_t len, uint64_t base,
			uint64_t rlen)
{
	model_u128 top = (model_u128)1 << 64;
	enum ibk_range_verdict want =
		(model_u128)base + rlen > top ? IBK_RANGE_REGION_WRAPS :
		(model_u128)iova + len > top ? IBK_RANGE_WRAPS :
		iova < base ? IBK_RANGE_BELOW :
		(model_u128)iova + len > (model_u128)base + rlen ? IBK_RANGE_BEYOND :
		IBK_RANGE_IN;

	FZ_CHECK(ibk_mem_range_check(iova, len, base, rlen) == want,
		 "range %s", ibk_range_verdict_name(want));
	FZ_CHECK(ibk_mem_range_ok(iova, len, base, rlen) ==
		 (want == IBK_RANGE_IN), "range_ok");
}

static void check_key(uint32_t key)
{
	FZ_CHECK(ibk_rkey_index(key) == key >> 8 && ibk_rkey_byte(key) ==
		 (key & 0xff), "key fields");
	FZ_CHECK(ibk_rkey_make(key >> 8, (uint8_t)key) == key, "key make");
	FZ_CHECK(ibk_rkey_next(key) ==
		 ((key & 0xffffff00u) | ((key + 1) & 0xff)), "ibv_inc_rkey");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = fz_init(data, size);
	struct ibk_mem_qp qp;
	struct ibk_mem_request req;
	struct ibk_mem_attr obj, mr, *r = NULL, *pmr = NULL;
	enum ibk_mem_verdict v, want;
	uint8_t head[IBK_BTH_LEN], *pkt;
	size_t n;

	qp.type = fz_bool(&f) ? IBK_QPT_UC : IBK_QPT_RC;
	if (fz_u8(&f) == 0xff)			/* a datagram QP, now and then */
		qp.type = IBK_QPT_UD;
	qp.qpn = fz_u8(&f);
	qp.pd = fz_u8(&f) & 3;
	qp.access = fz_u8(&f) & 0x0f;

	/* one block of exactly the BTH and the extension its opcode carries */
	fz_bytes(&f, head, IBK_BTH_LEN);
	n = IBK_BTH_LEN + ext_len(head[0]);
	pkt = (uint8_t *)malloc(n);
	if (!pkt)
		abort();
	memcpy(pkt, head, IBK_BTH_LEN);
	fz_bytes(&f, pkt + IBK_BTH_LEN, n - IBK_BTH_LEN);
	memset(&req, 0xa5, sizeof(req));
	v = ibk_mem_request_parse(qp.type, pkt, &req);
	check_parse(qp.type, pkt, pkt + IBK_BTH_LEN, &req, v);

	if (fz_u8(&f) & 1) {
		obj.addr = fz_u64(&f);
		obj.length = fz_u64(&f);
		obj.rkey = fz_bool(&f) ? req.rkey : fz_u32(&f);
		obj.pd = fz_u8(&f) & 3;
		obj.access = fz_u16(&f);
		obj.qpn = fz_u8(&f);
		obj.mr_index = fz_u32(&f);
		obj.windows = fz_u32(&f);
		obj.kind = fz_u8(&f) & 3;
		obj.state = fz_below(&f, 3);
		if (fz_bool(&f)) {	/* a range near the object's */
			req.va = obj.addr + (int8_t)fz_u8(&f);
			req.length = (uint32_t)(obj.length + (int8_t)fz_u8(&f));
		}
		r = &obj;
		if (fz_bool(&f)) {	/* a window's MR, near the window */
			memset(&mr, 0, sizeof(mr));
			mr.addr = fz_bool(&f) ? obj.addr + (int8_t)fz_u8(&f) :
				  fz_u64(&f);
			mr.length = fz_bool(&f) ?
				    obj.length + (int8_t)fz_u8(&f) : fz_u64(&f);
			pmr = &mr;
		}
	}
	want = model_mem_check(&qp, &req, r, pmr);
	v = ibk_mem_check(&qp, &req, r, pmr);
	FZ_CHECK(v == want, "check %s, model %s", ibk_mem_verdict_name(v),
		 ibk_mem_verdict_name(want));
	FZ_CHECK(ibk_mem_verdict_nak(v) == (v <= IBK_MEM_DROP_HEADER ? 0 :
		 v == IBK_MEM_ERR_OPCODE || v == IBK_MEM_ERR_QP_ACCESS ||
		 v == IBK_MEM_ERR_LENGTH || v == IBK_MEM_ERR_ALIGN ? 0x61 : 0x62),
		 "NAK of %s", ibk_mem_verdict_name(v));
	if (r) {
		check_range(req.va, req.length, obj.addr, obj.length);
		check_remote_invalidate(&obj, fz_bool(&f) ? obj.rkey :
					fz_u32(&f), &qp);
	}
	check_range(fz_u64(&f), fz_u64(&f), fz_u64(&f), fz_u64(&f));
	check_key(fz_u32(&f));
	free(pkt);
	return 0;
}
