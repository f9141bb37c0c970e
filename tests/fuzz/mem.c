/* SPDX-License-Identifier: MIT */
/*
 * mem: the responder's memory-key path on requests of the fuzzer's bytes.
 * From the input: a QP (type, QPN, PD, access flags), a BTH and whatever
 * extension header its opcode carries, each in a heap block of exactly
 * its size (a RETH, an AtomicETH, a FETH and RETH for FLUSH, nothing for
 * the rest), and the object its R_Key names, or none.
 *  - ibk_mem_request_parse() must read the extension only when the
 *    opcode carries one, and fill the request as IBA 9.4 and rxe's
 *    check_rkey() read it: RDMA WRITE FIRST/ONLY(/IMM), ATOMIC WRITE
 *    (write access over the RETH), RDMA READ (read access), COMPARE SWAP
 *    and FETCH ADD (atomic access, 8 bytes), FLUSH refused, every other
 *    opcode without an R_Key; all after the header check;
 *  - ibk_mem_check() must give the verdict of rxe's order as the header
 *    comment lists it, written here as an if-chain with exact 128-bit
 *    arithmetic for the range;
 *  - ibk_mem_range_check() must give the first failing of its four
 *    checks, also in 128 bits; the key helpers must match ibv_inc_rkey()'s
 *    arithmetic; NAK and completion status must follow from the verdict.
 */
#include "fuzz.h"
#include "ib_keys.h"

typedef unsigned __int128 u128;

static uint64_t be(const uint8_t *b, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | b[i];
	return v;
}

static bool model_header_ok(enum ibk_qp_type type, const uint8_t *bth)
{
	unsigned op = bth[0];

	if (bth[1] & 0x0f)
		return false;
	if (type == IBK_QPT_RC)
		return op >> 5 == 0;
	if (type == IBK_QPT_UC)
		return op >> 5 == 1;
	return op == 0x64 || op == 0x65;
}

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
	bool atomic = false;

	if (!model_header_ok(type, bth)) {
		FZ_CHECK(v == IBK_MEM_DROP_HEADER, "header: %s",
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
		 req->atomic == atomic, "opcode %02x: access %x atomic %d",
		 op, req->access, req->atomic);
	if (!access) {
		FZ_CHECK(req->va == 0 && req->rkey == 0 && req->length == 0,
			 "opcode %02x: fields left", op);
		return;
	}
	FZ_CHECK(v == IBK_MEM_OK, "opcode %02x: %s", op,
		 ibk_mem_verdict_name(v));
	FZ_CHECK(req->va == be(ext, 8) && req->rkey == be(ext + 8, 4),
		 "opcode %02x: va or rkey", op);
	FZ_CHECK(req->length == ((op == 0x13 || op == 0x14) ? 8 :
				 be(ext + 12, 4)), "opcode %02x: length", op);
}

static bool model_in(uint64_t iova, uint64_t len, uint64_t base,
		     uint64_t rlen)
{
	u128 end = (u128)iova + len, rend = (u128)base + rlen;
	u128 top = (u128)1 << 64;

	return rend < top && end < top && iova >= base && end <= rend;
}

static enum ibk_mem_verdict model_check(const struct ibk_mem_qp *qp,
					const struct ibk_mem_request *req,
					const struct ibk_mem_attr *r)
{
	bool rw = !req->atomic;
	bool window = r && (r->kind == IBK_MEM_MW1 || r->kind == IBK_MEM_MW2);
	uint64_t base;

	if (req->access == 0)
		return IBK_MEM_NO_RKEY;
	if (req->access & ~qp->access)
		return IBK_MEM_ERR_QP_ACCESS;
	if (rw && req->length > 0x80000000u)
		return IBK_MEM_ERR_LENGTH;
	if (rw && req->length == 0)
		return IBK_MEM_OK;
	if (!r || r->state == IBK_MEM_INVALID || r->rkey != req->rkey)
		return IBK_MEM_ERR_KEY;
	if (r->pd != qp->pd)
		return IBK_MEM_ERR_PD;
	if (r->kind == IBK_MEM_MW2 && r->qpn != qp->qpn)
		return IBK_MEM_ERR_WINDOW_QP;
	if (window && r->length == 0)
		return IBK_MEM_ERR_UNBOUND;
	if (req->access & ~r->access)
		return IBK_MEM_ERR_ACCESS;
	if (r->state != IBK_MEM_VALID)
		return IBK_MEM_ERR_STATE;
	base = (r->access & IBK_ACCESS_ZERO_BASED) ? 0 : r->addr;
	if (!model_in(req->va, req->length, base, r->length))
		return IBK_MEM_ERR_RANGE;
	if (req->atomic && (req->va & 7))
		return IBK_MEM_ERR_ALIGN;
	return IBK_MEM_OK;
}

static void check_range(uint64_t iova, uint64_t len, uint64_t base,
			uint64_t rlen)
{
	u128 top = (u128)1 << 64;
	enum ibk_range_verdict want =
		(u128)base + rlen >= top ? IBK_RANGE_REGION_WRAPS :
		(u128)iova + len >= top ? IBK_RANGE_WRAPS :
		iova < base ? IBK_RANGE_BELOW :
		(u128)iova + len > (u128)base + rlen ? IBK_RANGE_BEYOND :
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
	struct ibk_mem_attr obj, *r = NULL;
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
	}
	want = model_check(&qp, &req, r);
	v = ibk_mem_check(&qp, &req, r);
	FZ_CHECK(v == want, "check %s, model %s", ibk_mem_verdict_name(v),
		 ibk_mem_verdict_name(want));
	FZ_CHECK(ibk_mem_verdict_nak(v) == (v <= IBK_MEM_DROP_HEADER ? 0 :
		 v == IBK_MEM_ERR_OPCODE || v == IBK_MEM_ERR_QP_ACCESS ||
		 v == IBK_MEM_ERR_LENGTH || v == IBK_MEM_ERR_ALIGN ? 0x61 : 0x62),
		 "NAK of %s", ibk_mem_verdict_name(v));
	if (r)
		check_range(req.va, req.length, obj.addr, obj.length);
	check_range(fz_u64(&f), fz_u64(&f), fz_u64(&f), fz_u64(&f));
	check_key(fz_u32(&f));
	free(pkt);
	return 0;
}
