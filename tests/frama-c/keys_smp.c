/* SPDX-License-Identifier: MIT */
/*
 * keys_smp.c - EVA harness of ib_keys.h's subnet management: every MAD,
 * SMP, PortInfo and Notice accessor on a buffer of exactly its length
 * holding any bytes, every setter with any value; the SMA's request
 * checks, replies and M_Key rules on any SMP, state and clock; attribute
 * modifiers, P_Key and GUID blocks at any index; traps built from and
 * parsed into any details, NULL where documented.
 */
#include "harness.h"
#include "ib_keys.h"

static void accessors(void)
{
	GET(ibk_mad_base_version, IBK_MAD_LEN);
	SET(ibk_mad_set_base_version, IBK_MAD_LEN, any_u8());
	GET(ibk_mad_mgmt_class, IBK_MAD_LEN);
	SET(ibk_mad_set_mgmt_class, IBK_MAD_LEN, any_u8());
	GET(ibk_mad_class_version, IBK_MAD_LEN);
	SET(ibk_mad_set_class_version, IBK_MAD_LEN, any_u8());
	GET(ibk_mad_method, IBK_MAD_LEN);
	SET(ibk_mad_set_method, IBK_MAD_LEN, any_u8());
	GET(ibk_mad_status, IBK_MAD_LEN);
	SET(ibk_mad_set_status, IBK_MAD_LEN, any_u16());
	GET(ibk_mad_tid, IBK_MAD_LEN);
	SET(ibk_mad_set_tid, IBK_MAD_LEN, any_u64());
	GET(ibk_mad_attr_id, IBK_MAD_LEN);
	SET(ibk_mad_set_attr_id, IBK_MAD_LEN, any_u16());
	GET(ibk_mad_attr_mod, IBK_MAD_LEN);
	SET(ibk_mad_set_attr_mod, IBK_MAD_LEN, any_u32());
	GET(ibk_smp_hop_ptr, IBK_MAD_LEN);
	SET(ibk_smp_set_hop_ptr, IBK_MAD_LEN, any_u8());
	GET(ibk_smp_hop_cnt, IBK_MAD_LEN);
	SET(ibk_smp_set_hop_cnt, IBK_MAD_LEN, any_u8());
	GET(ibk_smp_mkey, IBK_MAD_LEN);
	SET(ibk_smp_set_mkey, IBK_MAD_LEN, any_u64());
	GET(ibk_smp_dr_slid, IBK_MAD_LEN);
	SET(ibk_smp_set_dr_slid, IBK_MAD_LEN, any_u16());
	GET(ibk_smp_dr_dlid, IBK_MAD_LEN);
	SET(ibk_smp_set_dr_dlid, IBK_MAD_LEN, any_u16());
	GET(ibk_smp_data, IBK_MAD_LEN);
	GET(ibk_smp_is_dr, IBK_MAD_LEN);
	GET(ibk_portinfo_mkey, IBK_PORTINFO_LEN);
	SET(ibk_portinfo_set_mkey, IBK_PORTINFO_LEN, any_u64());
	GET(ibk_portinfo_gid_prefix, IBK_PORTINFO_LEN);
	SET(ibk_portinfo_set_gid_prefix, IBK_PORTINFO_LEN, any_u64());
	GET(ibk_portinfo_lid, IBK_PORTINFO_LEN);
	SET(ibk_portinfo_set_lid, IBK_PORTINFO_LEN, any_u16());
	GET(ibk_portinfo_master_sm_lid, IBK_PORTINFO_LEN);
	SET(ibk_portinfo_set_master_sm_lid, IBK_PORTINFO_LEN, any_u16());
	GET(ibk_portinfo_cap_mask, IBK_PORTINFO_LEN);
	SET(ibk_portinfo_set_cap_mask, IBK_PORTINFO_LEN, any_u32());
	GET(ibk_portinfo_mkey_lease_period, IBK_PORTINFO_LEN);
	SET(ibk_portinfo_set_mkey_lease_period, IBK_PORTINFO_LEN, any_u16());
	GET(ibk_portinfo_mkey_protect_bits, IBK_PORTINFO_LEN);
	SET(ibk_portinfo_set_mkey_protect_bits, IBK_PORTINFO_LEN, any_u8());
	GET(ibk_portinfo_enforcement, IBK_PORTINFO_LEN);
	SET(ibk_portinfo_set_enforcement, IBK_PORTINFO_LEN, any_u8());
	GET(ibk_portinfo_mkey_violations, IBK_PORTINFO_LEN);
	SET(ibk_portinfo_set_mkey_violations, IBK_PORTINFO_LEN, any_u16());
	GET(ibk_portinfo_pkey_violations, IBK_PORTINFO_LEN);
	SET(ibk_portinfo_set_pkey_violations, IBK_PORTINFO_LEN, any_u16());
	GET(ibk_portinfo_qkey_violations, IBK_PORTINFO_LEN);
	SET(ibk_portinfo_set_qkey_violations, IBK_PORTINFO_LEN, any_u16());
	GET(ibk_portinfo_guid_cap, IBK_PORTINFO_LEN);
	SET(ibk_portinfo_set_guid_cap, IBK_PORTINFO_LEN, any_u8());
	GET(ibk_portinfo_client_rereg, IBK_PORTINFO_LEN);
	SET(ibk_portinfo_set_client_rereg, IBK_PORTINFO_LEN, any_bool());
	GET(ibk_portinfo_subnet_timeout, IBK_PORTINFO_LEN);
	SET(ibk_portinfo_set_subnet_timeout, IBK_PORTINFO_LEN, any_u8());
	GET(ibk_notice_is_generic, IBK_NOTICE_LEN);
	SET(ibk_notice_set_generic, IBK_NOTICE_LEN, any_bool());
	GET(ibk_notice_type, IBK_NOTICE_LEN);
	SET(ibk_notice_set_type, IBK_NOTICE_LEN, any_u8());
	GET(ibk_notice_producer, IBK_NOTICE_LEN);
	SET(ibk_notice_set_producer, IBK_NOTICE_LEN, any_u32());
	GET(ibk_notice_trap_number, IBK_NOTICE_LEN);
	SET(ibk_notice_set_trap_number, IBK_NOTICE_LEN, any_u16());
	GET(ibk_notice_issuer_lid, IBK_NOTICE_LEN);
	SET(ibk_notice_set_issuer_lid, IBK_NOTICE_LEN, any_u16());
	GET(ibk_notice_toggle, IBK_NOTICE_LEN);
	SET(ibk_notice_set_toggle, IBK_NOTICE_LEN, any_bool());
	GET(ibk_notice_count, IBK_NOTICE_LEN);
	SET(ibk_notice_set_count, IBK_NOTICE_LEN, any_u16());
}

static void sma(void)
{
	uint8_t smp[IBK_MAD_LEN];
	struct ibk_mkey_state st;

	UNKNOWN(smp);
	(void)ibk_smp_data_mut(smp);
	(void)ibk_smp_request_status(maybe_null(smp),
				     Frama_C_size_t_interval(0, SIZE_MAX));
	(void)ibk_smp_make_reply(maybe_null(smp), any_u16());
	UNKNOWN(st);
	st.lease_running = any_bool();
	(void)ibk_mkey_verdict_name(ANY_ENUM(enum ibk_mkey_verdict,
					     IBK_MKEY_PROCESS,
					     IBK_MKEY_VIOLATION));
	(void)ibk_mkey_check(&st, any_u8(), any_u64(), any_u64());
}

static void blocks(void)
{
	uint8_t data[IBK_SMP_DATA_LEN];
	ibk_pkey_t pkeys[IBK_PKEY_BLOCK_ENTRIES];
	ibk_guid_t guids[IBK_GUID_BLOCK_ENTRIES];
	uint32_t mod = any_u32();

	(void)ibk_pkeytable_mod_block(mod);
	(void)ibk_pkeytable_mod_port(mod);
	(void)ibk_pkeytable_mod(any_u16(), any_u8());
	(void)ibk_guidinfo_mod_block(mod);
	UNKNOWN(data);
	(void)ibk_pkey_block_get(data, any_u32());
	ibk_pkey_block_set(data, any_u32(), any_u16());
	(void)ibk_guid_block_get(data, any_u32());
	ibk_guid_block_set(data, any_u32(), any_u64());
	ibk_pkey_block_decode(data, pkeys);
	ibk_pkey_block_encode(pkeys, data);
	ibk_guid_block_decode(data, guids);
	ibk_guid_block_encode(guids, data);
}

static void traps(void)
{
	uint8_t notice[IBK_NOTICE_LEN], smp[IBK_MAD_LEN];
	uint8_t pkt[IBK_LRH_LEN + IBK_GRH_LEN + IBK_BTH_LEN + IBK_DETH_LEN];
	struct ibk_trap_256 t256;
	struct ibk_trap_key tkey;
	struct ibk_pkt_headers h;

	UNKNOWN(notice);
	UNKNOWN(smp);
	UNKNOWN(pkt);
	ibk_notice_init(any_u8(), any_u32(), any_u16(), any_u16(), notice);
	UNKNOWN(t256);
	t256.dr_notice = any_bool();
	t256.dr_truncated = any_bool();
	ibk_notice_build_256(any_u32(), any_u16(), &t256, notice);
	ibk_trap_256_from_smp(smp, any_u16(), &t256);
	UNKNOWN(notice);
	(void)ibk_notice_parse_256(maybe_null(notice), maybe_null(&t256));
	UNKNOWN(tkey);
	(void)ibk_notice_build_key_trap(any_u16(), any_u32(), any_u16(),
					maybe_null(&tkey), maybe_null(notice));
	UNKNOWN(notice);
	(void)ibk_notice_parse_key_trap(maybe_null(notice), maybe_null(&tkey));
	/* the headers as ibk_pkt_locate() leaves them: a GRH and a DETH or
	 * none, inside the packet; a NULL LRH or BTH is refused */
	h.lrh = maybe_null(pkt);
	h.grh = Frama_C_nondet_ptr(pkt + IBK_LRH_LEN, NULL);
	h.bth = h.grh ? pkt + IBK_LRH_LEN + IBK_GRH_LEN : pkt + IBK_LRH_LEN;
	h.bth = maybe_null((void *)h.bth);
	h.deth = h.bth ? Frama_C_nondet_ptr((void *)(h.bth + IBK_BTH_LEN),
					    NULL) : NULL;
	(void)ibk_trap_key_from_headers(maybe_null(&h), any_u16(),
					maybe_null(&tkey));
	(void)ibk_trap_interval_ns(any_u8());
	(void)ibk_trap_rate_ok(any_u64(), any_u64(), any_bool(), any_u8());
}

int main(void)
{
	accessors();
	sma();
	blocks();
	traps();
	return 0;
}
