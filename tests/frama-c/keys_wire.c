/* SPDX-License-Identifier: MIT */
/*
 * keys_wire.c - EVA harness of ib_keys.h's wire layouts and per-packet
 * checks: every accessor on a header buffer of exactly its IBK_*_LEN bytes
 * holding any bytes (one byte more read would be an alarm), every setter
 * with any value; the opcode and AETH predicates over every byte; packets
 * of every length up to 128 bytes for ibk_pkt_locate(); the receive checks
 * on any headers, QP keys and QP type, NULL where documented.
 */
#include "harness.h"
#include "ib_keys.h"

static void accessors(void)
{
	uint8_t grh[IBK_GRH_LEN];
	struct ibk_gid gid;

	GET(ibk_lrh_vl, IBK_LRH_LEN);
	SET(ibk_lrh_set_vl, IBK_LRH_LEN, any_u8());
	GET(ibk_lrh_lver, IBK_LRH_LEN);
	SET(ibk_lrh_set_lver, IBK_LRH_LEN, any_u8());
	GET(ibk_lrh_sl, IBK_LRH_LEN);
	SET(ibk_lrh_set_sl, IBK_LRH_LEN, any_u8());
	GET(ibk_lrh_lnh, IBK_LRH_LEN);
	SET(ibk_lrh_set_lnh, IBK_LRH_LEN, any_u8());
	GET(ibk_lrh_dlid, IBK_LRH_LEN);
	SET(ibk_lrh_set_dlid, IBK_LRH_LEN, any_u16());
	GET(ibk_lrh_pktlen, IBK_LRH_LEN);
	SET(ibk_lrh_set_pktlen, IBK_LRH_LEN, any_u16());
	GET(ibk_lrh_slid, IBK_LRH_LEN);
	SET(ibk_lrh_set_slid, IBK_LRH_LEN, any_u16());
	GET(ibk_grh_ipver, IBK_GRH_LEN);
	SET(ibk_grh_set_ipver, IBK_GRH_LEN, any_u8());
	GET(ibk_grh_tclass, IBK_GRH_LEN);
	SET(ibk_grh_set_tclass, IBK_GRH_LEN, any_u8());
	GET(ibk_grh_flow_label, IBK_GRH_LEN);
	SET(ibk_grh_set_flow_label, IBK_GRH_LEN, any_u32());
	GET(ibk_grh_paylen, IBK_GRH_LEN);
	SET(ibk_grh_set_paylen, IBK_GRH_LEN, any_u16());
	GET(ibk_grh_nxthdr, IBK_GRH_LEN);
	SET(ibk_grh_set_nxthdr, IBK_GRH_LEN, any_u8());
	GET(ibk_grh_hoplmt, IBK_GRH_LEN);
	SET(ibk_grh_set_hoplmt, IBK_GRH_LEN, any_u8());
	GET(ibk_grh_sgid, IBK_GRH_LEN);
	GET(ibk_grh_dgid, IBK_GRH_LEN);
	GET(ibk_bth_opcode, IBK_BTH_LEN);
	SET(ibk_bth_set_opcode, IBK_BTH_LEN, any_u8());
	GET(ibk_bth_se, IBK_BTH_LEN);
	SET(ibk_bth_set_se, IBK_BTH_LEN, any_bool());
	GET(ibk_bth_mig, IBK_BTH_LEN);
	SET(ibk_bth_set_mig, IBK_BTH_LEN, any_bool());
	GET(ibk_bth_padcnt, IBK_BTH_LEN);
	SET(ibk_bth_set_padcnt, IBK_BTH_LEN, any_u8());
	GET(ibk_bth_tver, IBK_BTH_LEN);
	SET(ibk_bth_set_tver, IBK_BTH_LEN, any_u8());
	GET(ibk_bth_pkey, IBK_BTH_LEN);
	SET(ibk_bth_set_pkey, IBK_BTH_LEN, any_u16());
	GET(ibk_bth_fecn, IBK_BTH_LEN);
	SET(ibk_bth_set_fecn, IBK_BTH_LEN, any_bool());
	GET(ibk_bth_becn, IBK_BTH_LEN);
	SET(ibk_bth_set_becn, IBK_BTH_LEN, any_bool());
	GET(ibk_bth_dest_qp, IBK_BTH_LEN);
	SET(ibk_bth_set_dest_qp, IBK_BTH_LEN, any_u32());
	GET(ibk_bth_ackreq, IBK_BTH_LEN);
	SET(ibk_bth_set_ackreq, IBK_BTH_LEN, any_bool());
	GET(ibk_bth_psn, IBK_BTH_LEN);
	SET(ibk_bth_set_psn, IBK_BTH_LEN, any_u32());
	GET(ibk_deth_qkey, IBK_DETH_LEN);
	SET(ibk_deth_set_qkey, IBK_DETH_LEN, any_u32());
	GET(ibk_deth_src_qp, IBK_DETH_LEN);
	SET(ibk_deth_set_src_qp, IBK_DETH_LEN, any_u32());
	GET(ibk_reth_va, IBK_RETH_LEN);
	SET(ibk_reth_set_va, IBK_RETH_LEN, any_u64());
	GET(ibk_reth_rkey, IBK_RETH_LEN);
	SET(ibk_reth_set_rkey, IBK_RETH_LEN, any_u32());
	GET(ibk_reth_dma_len, IBK_RETH_LEN);
	SET(ibk_reth_set_dma_len, IBK_RETH_LEN, any_u32());
	GET(ibk_atomiceth_va, IBK_ATOMICETH_LEN);
	SET(ibk_atomiceth_set_va, IBK_ATOMICETH_LEN, any_u64());
	GET(ibk_atomiceth_rkey, IBK_ATOMICETH_LEN);
	SET(ibk_atomiceth_set_rkey, IBK_ATOMICETH_LEN, any_u32());
	GET(ibk_atomiceth_swap_add, IBK_ATOMICETH_LEN);
	SET(ibk_atomiceth_set_swap_add, IBK_ATOMICETH_LEN, any_u64());
	GET(ibk_atomiceth_compare, IBK_ATOMICETH_LEN);
	SET(ibk_atomiceth_set_compare, IBK_ATOMICETH_LEN, any_u64());
	GET(ibk_ieth_rkey, IBK_IETH_LEN);
	SET(ibk_ieth_set_rkey, IBK_IETH_LEN, any_u32());
	GET(ibk_aeth_syndrome, IBK_AETH_LEN);
	SET(ibk_aeth_set_syndrome, IBK_AETH_LEN, any_u8());
	GET(ibk_aeth_msn, IBK_AETH_LEN);
	SET(ibk_aeth_set_msn, IBK_AETH_LEN, any_u32());
	UNKNOWN(grh);
	UNKNOWN(gid);
	ibk_grh_get_sgid(grh, &gid);
	ibk_grh_set_sgid(grh, &gid);
	ibk_grh_get_dgid(grh, &gid);
	ibk_grh_set_dgid(grh, &gid);
}

static void opcodes(void)
{
	uint8_t op = any_u8();

	(void)ibk_opcode_has_reth(op);
	(void)ibk_opcode_has_atomiceth(op);
	(void)ibk_opcode_has_ieth(op);
	(void)ibk_opcode_has_aeth(op);
	(void)ibk_opcode_has_immdt(op);
	(void)ibk_opcode_is_ud_send(op);
	(void)ibk_aeth_is_ack(op);
	(void)ibk_aeth_is_rnr_nak(op);
	(void)ibk_aeth_is_nak(op);
	(void)ibk_aeth_value(op);
}

static void locate(void)
{
	uint8_t pkt[128];
	struct ibk_pkt_headers h;

	UNKNOWN(pkt);
	(void)ibk_pkt_locate(maybe_null(pkt), Frama_C_size_t_interval(0,
		sizeof(pkt)), maybe_null(&h));
}

static void receive(void)
{
	uint8_t bth[IBK_BTH_LEN + IBK_DETH_LEN];
	uint8_t tx[IBK_BTH_LEN], deth[IBK_DETH_LEN];
	uint8_t pkts[4][IBK_BTH_LEN + IBK_DETH_LEN];
	const void *hdrs[64];
	uint8_t verdicts[64];
	struct ibk_qp_keys qp;
	size_t i;

	UNKNOWN(bth);
	UNKNOWN(pkts);
	UNKNOWN(qp);
	qp.type = ANY_ENUM(enum ibk_qp_type, IBK_QPT_SMI, IBK_QPT_UD);
	(void)ibk_rx_verdict_name(ANY_ENUM(enum ibk_rx_verdict, IBK_RX_ACCEPT,
					   IBK_RX_DROP_MAD_IMM));
	(void)ibk_rx_check_header(qp.type, bth);
	(void)ibk_rx_check(maybe_null(&qp), maybe_null(bth),
			   maybe_null(bth + IBK_BTH_LEN));
	UNKNOWN(tx);
	UNKNOWN(deth);
	ibk_tx_fill_keys(tx, maybe_null(deth), any_u16(), any_u32(),
			 any_u32());
	for (i = 0; i < 64; i++)
		hdrs[i] = pkts[Frama_C_interval(0, 3)];
	/* each length on its own, so that EVA follows the verdicts written */
	/*@ loop unroll 65; */
	for (i = 0; i <= 64; i++)
		(void)ibk_rx_ud_burst(any_u16(), any_u32(), hdrs, i, verdicts);
}

int main(void)
{
	accessors();
	opcodes();
	locate();
	receive();
	return 0;
}
