/* SPDX-License-Identifier: MIT */
/*
 * rx: the receive path on packets of the fuzzer's length. From the input:
 * a QP (type, including one outside the enum, P_Key, Q_Key), a packet
 * length and its bytes, then a burst of UD headers. The packet is walked
 * as a receiver walks it: the LRH's LNH says whether a GRH comes before
 * the BTH, and the headers are handed over only when the packet is long
 * enough for them; each header lives in a heap block of exactly its size,
 * so AddressSanitizer catches any read past it.
 *  - every LRH, GRH, BTH and DETH getter must return the field's bits as
 *    IBA 7.7, 8.3, 9.2 and 9.3 place them, read here byte by byte, and so
 *    must those of the RETH, AtomicETH, AETH and IETH an RC or UC opcode
 *    carries (9.3-9.5; an AETH's syndrome kinds and completion status
 *    too);
 *  - ibk_rx_check() must give the verdict of a model of rxe's hdr_check()
 *    order in model.h (type, TVer, opcode by transport, QP0, QP1, DETH,
 *    P_Key membership of IBA 10.9.3, Q_Key), reading the DETH only for a
 *    UD SEND to a UD QP (a shorter packet passes NULL);
 *  - ibk_rx_ud_burst() must give ibk_rx_check()'s verdict for each header
 *    of the burst, and count the accepted ones.
 */
#include "model.h"

#define BURST_MAX 24

static void check_lrh(const uint8_t *l)
{
	FZ_CHECK(ibk_lrh_vl(l) == l[0] >> 4, "VL");
	FZ_CHECK(ibk_lrh_lver(l) == (l[0] & 0x0f), "LVer");
	FZ_CHECK(ibk_lrh_sl(l) == l[1] >> 4, "SL");
	FZ_CHECK(ibk_lrh_lnh(l) == (l[1] & 3), "LNH");
	FZ_CHECK(ibk_lrh_dlid(l) == model_be(l + 2, 2), "DLID");
	FZ_CHECK(ibk_lrh_pktlen(l) == (model_be(l + 4, 2) & 0x7ff), "PktLen");
	FZ_CHECK(ibk_lrh_slid(l) == model_be(l + 6, 2), "SLID");
}

static void check_grh(const uint8_t *g)
{
	struct ibk_gid gid;

	FZ_CHECK(ibk_grh_ipver(g) == g[0] >> 4, "IPVer");
	FZ_CHECK(ibk_grh_tclass(g) == ((g[0] & 0x0f) << 4 | g[1] >> 4), "TClass");
	FZ_CHECK(ibk_grh_flow_label(g) == (model_be(g, 4) & 0xfffff), "FlowLabel");
	FZ_CHECK(ibk_grh_paylen(g) == model_be(g + 4, 2), "PayLen");
	FZ_CHECK(ibk_grh_nxthdr(g) == g[6], "NxtHdr");
	FZ_CHECK(ibk_grh_hoplmt(g) == g[7], "HopLmt");
	ibk_grh_get_sgid(g, &gid);
	FZ_CHECK(memcmp(gid.raw, g + 8, 16) == 0, "SGID");
	gid = ibk_grh_dgid(g);
	FZ_CHECK(memcmp(gid.raw, g + 24, 16) == 0, "DGID");
}

static void check_bth(const uint8_t *b)
{
	FZ_CHECK(ibk_bth_opcode(b) == b[0], "OpCode");
	FZ_CHECK(ibk_bth_se(b) == (b[1] >> 7), "SE");
	FZ_CHECK(ibk_bth_mig(b) == (b[1] >> 6 & 1), "M");
	FZ_CHECK(ibk_bth_padcnt(b) == (b[1] >> 4 & 3), "PadCnt");
	FZ_CHECK(ibk_bth_tver(b) == (b[1] & 0x0f), "TVer");
	FZ_CHECK(ibk_bth_pkey(b) == model_be(b + 2, 2), "P_Key");
	FZ_CHECK(ibk_bth_fecn(b) == (b[4] >> 7), "FECN");
	FZ_CHECK(ibk_bth_becn(b) == (b[4] >> 6 & 1), "BECN");
	FZ_CHECK(ibk_bth_dest_qp(b) == model_be(b + 5, 3), "DestQP");
	FZ_CHECK(ibk_bth_ackreq(b) == (b[8] >> 7), "AckReq");
	FZ_CHECK(ibk_bth_psn(b) == model_be(b + 9, 3), "PSN");
}

static void check_deth(const uint8_t *d)
{
	FZ_CHECK(ibk_deth_qkey(d) == model_be(d, 4), "Q_Key");
	FZ_CHECK(ibk_deth_src_qp(d) == model_be(d + 5, 3), "SrcQP");
}

/* AETH syndrome (IBA 9.7.5): type in bits 7-5, value in 4-0; the status
 * a requester completes with, as the header comment lists it. */
static void check_aeth(const uint8_t *a)
{
	uint8_t s = a[0];
	unsigned type = s & 0xe0;
	enum ibk_wc_status want =
		type == 0x00 ? IBK_WC_SUCCESS :
		type == 0x20 ? IBK_WC_RNR_RETRY_EXC_ERR :
		type != 0x60 ? IBK_WC_BAD_RESP_ERR :
		s == 0x60 ? IBK_WC_RETRY_EXC_ERR :
		s == 0x61 ? IBK_WC_REM_INV_REQ_ERR :
		s == 0x62 ? IBK_WC_REM_ACCESS_ERR : IBK_WC_REM_OP_ERR;

	FZ_CHECK(ibk_aeth_syndrome(a) == s, "syndrome");
	FZ_CHECK(ibk_aeth_msn(a) == model_be(a + 1, 3), "MSN");
	FZ_CHECK(ibk_aeth_is_ack(s) == (type == 0x00) &&
		 ibk_aeth_is_rnr_nak(s) == (type == 0x20) &&
		 ibk_aeth_is_nak(s) == (type == 0x60) &&
		 ibk_aeth_value(s) == (s & 0x1f), "syndrome %02x kind", s);
	FZ_CHECK(ibk_aeth_wc_status(s) == want, "syndrome %02x: status %d",
		 s, ibk_aeth_wc_status(s));
}

/*
 * The extension headers an RC or UC opcode carries after its BTH (IBA
 * 9.2 table 38), each its own exact block, and their fields read byte by
 * byte: RETH (after FLUSH's 4-byte FETH), AtomicETH, AETH, IETH.
 */
static void check_extensions(struct fz *f, uint8_t opcode)
{
	uint8_t *b;

	if (opcode >> 5 > 1)
		return;
	if (ibk_opcode_has_reth(opcode)) {
		b = fz_exact(f, IBK_RETH_LEN);
		FZ_CHECK(ibk_reth_va(b) == model_be(b, 8) &&
			 ibk_reth_rkey(b) == model_be(b + 8, 4) &&
			 ibk_reth_dma_len(b) == model_be(b + 12, 4), "RETH");
		free(b);
	}
	if (ibk_opcode_has_atomiceth(opcode)) {
		b = fz_exact(f, IBK_ATOMICETH_LEN);
		FZ_CHECK(ibk_atomiceth_va(b) == model_be(b, 8) &&
			 ibk_atomiceth_rkey(b) == model_be(b + 8, 4) &&
			 ibk_atomiceth_swap_add(b) == model_be(b + 12, 8) &&
			 ibk_atomiceth_compare(b) == model_be(b + 20, 8),
			 "AtomicETH");
		free(b);
	}
	if (ibk_opcode_has_aeth(opcode)) {
		b = fz_exact(f, IBK_AETH_LEN);
		check_aeth(b);
		free(b);
	}
	if (ibk_opcode_has_ieth(opcode)) {
		b = fz_exact(f, IBK_IETH_LEN);
		FZ_CHECK(ibk_ieth_rkey(b) == model_be(b, 4), "IETH");
		free(b);
	}
}

/* The packet: LRH, [GRH,] BTH, [DETH]: each header its own exact block. */
static void check_packet(struct fz *f, const struct ibk_qp_keys *qp)
{
	size_t len = fz_below(f, 96);
	uint8_t *lrh = NULL, *grh = NULL, *bth = NULL, *deth = NULL;
	size_t need = IBK_LRH_LEN;
	enum ibk_rx_verdict v;

	if (len < need)
		goto out;
	lrh = fz_exact(f, IBK_LRH_LEN);
	check_lrh(lrh);
	if ((lrh[1] & 3) != IBK_LNH_BTH && (lrh[1] & 3) != IBK_LNH_GRH)
		goto out;		/* raw: no IBA transport to check */
	if ((lrh[1] & 3) == IBK_LNH_GRH) {
		need += IBK_GRH_LEN;
		if (len < need)
			goto out;
		grh = fz_exact(f, IBK_GRH_LEN);
		check_grh(grh);
	}
	need += IBK_BTH_LEN;
	if (len < need)
		goto out;
	bth = fz_exact(f, IBK_BTH_LEN);
	check_bth(bth);
	check_extensions(f, bth[0]);
	if (len >= need + IBK_DETH_LEN) {
		deth = fz_exact(f, IBK_DETH_LEN);
		check_deth(deth);
	}
	v = ibk_rx_check(qp, bth, deth);
	FZ_CHECK(v == model_rx(qp->type, qp->pkey, qp->qkey, bth, deth),
		 "type %u opcode %02x: %s", qp->type, bth[0],
		 ibk_rx_verdict_name(v));
	FZ_CHECK(ibk_rx_check_header(qp->type <= IBK_QPT_UD ? qp->type :
				     IBK_QPT_UD, bth) <= IBK_RX_DROP_OPCODE,
		 "header verdict outside the enum");
out:
	free(lrh);
	free(grh);
	free(bth);
	free(deth);
}

static void check_burst(struct fz *f, ibk_pkey_t pkey, ibk_qkey_t qkey)
{
	struct ibk_qp_keys qp = { IBK_QPT_UD, pkey, 0, qkey };
	const void *hdrs[BURST_MAX];
	uint8_t *blocks[BURST_MAX], verdicts[BURST_MAX];
	size_t n = fz_below(f, BURST_MAX + 1), accepted = 0, i;

	for (i = 0; i < n; i++) {
		blocks[i] = fz_exact(f, IBK_BTH_LEN + IBK_DETH_LEN);
		/* mostly UD SENDs in the QP's partition, so that the Q_Key
		 * and P_Key decide as often as the header */
		if (blocks[i][0] & 0x80) {
			blocks[i][0] = (uint8_t)(0x64 | (blocks[i][0] & 1));
			blocks[i][1] &= 0xf0;
		}
		if (blocks[i][4] & 0x80)
			for (int b = 0; b < 4; b++)
				blocks[i][IBK_BTH_LEN + b] =
					(uint8_t)(qkey >> (24 - 8 * b));
		hdrs[i] = blocks[i];
	}
	size_t counted = ibk_rx_ud_burst(pkey, qkey, hdrs, n, verdicts);

	for (i = 0; i < n; i++) {
		enum ibk_rx_verdict one = ibk_rx_check(&qp, blocks[i],
						       blocks[i] + IBK_BTH_LEN);
		FZ_CHECK(verdicts[i] == one, "burst[%zu] %u, one by one %s", i,
			 verdicts[i], ibk_rx_verdict_name(one));
		accepted += one == IBK_RX_ACCEPT;
	}
	FZ_CHECK(counted == accepted, "burst counted %zu, accepted %zu",
		 counted, accepted);
	for (i = 0; i < n; i++)
		free(blocks[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = fz_init(data, size);
	struct ibk_qp_keys qp;

	qp.type = (enum ibk_qp_type)fz_below(&f, IBK_QPT_UD + 2);
	qp.pkey = fz_u16(&f);
	qp.pkey_index = 0;
	qp.qkey = fz_u32(&f);
	check_packet(&f, &qp);
	check_burst(&f, qp.pkey, qp.qkey);
	return 0;
}
