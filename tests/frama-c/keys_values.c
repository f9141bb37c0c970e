/* SPDX-License-Identifier: MIT */
/*
 * keys_values.c - EVA harness of ib_keys.h's values: errors, P_Keys,
 * Q_Keys and GUID/GID values. Each public function is called once with
 * every argument unknown over its domain (harness.h).
 */
#include "harness.h"
#include "ib_keys.h"

static void errors(void)
{
	(void)ibk_simd_path();
	(void)ibk_strerror(any_int());
}

static void pkeys(void)
{
	ibk_pkey_t keys[64];
	uint8_t match[64];
	ibk_pkey_t k = any_u16();
	size_t n;

	(void)ibk_pkey_make(any_u16(), any_bool());
	(void)ibk_pkey_base(k);
	(void)ibk_pkey_is_full(k);
	(void)ibk_pkey_is_valid(k);
	(void)ibk_pkey_to_full(k);
	(void)ibk_pkey_to_limited(k);
	(void)ibk_pkey_match(k, any_u16());
	UNKNOWN(keys);
	/* each length on its own, so that EVA follows the matches written */
	/*@ loop unroll 65; */
	for (n = 0; n <= 64; n++)
		(void)ibk_pkey_match_burst(k, keys, n, match);
	(void)ibk_pkey_match_burst(k, NULL, 0, NULL);	/* documented */
}

static void qkeys(void)
{
	ibk_qkey_t q = any_u32();

	(void)ibk_qkey_is_controlled(q);
	(void)ibk_qkey_select(q, any_u32());
	(void)ibk_qkey_match(q, any_u32());
	(void)ibk_qkey_may_set(q, any_bool());
	(void)ibk_qkey_classify(q);
	(void)ibk_qkey_class_name(ANY_ENUM(enum ibk_qkey_class,
					   IBK_QKEY_CLASS_FREE,
					   IBK_QKEY_CLASS_UNASSIGNED));
}

static void gid_values(void)
{
	struct ibk_gid g, h, out;
	uint8_t mac[6];
	ibk_pkey_t pkey;
	unsigned scope;
	bool ipv6;

	UNKNOWN(g);
	UNKNOWN(h);
	UNKNOWN(mac);
	ibk_gid_set(any_u64(), any_u64(), &out);
	out = ibk_gid_make(any_u64(), any_u64());
	(void)ibk_gid_subnet_prefix(&g);
	(void)ibk_gid_guid(&g);
	(void)ibk_gid_equal(&g, &h);
	(void)ibk_gid_is_zero(&g);
	(void)ibk_gid_is_v4mapped(&g);
	(void)ibk_gid_is_multicast(&g);
	(void)ibk_gid_is_link_local(&g);
	ibk_gid_set_from_ipv4(any_u32(), &out);
	out = ibk_gid_from_ipv4(any_u32());
	(void)ibk_gid_to_ipv4(&g);
	ibk_gid_set_from_mac(mac, &out);
	out = ibk_gid_from_mac(mac);
	(void)ibk_gid_to_mac(maybe_null(&g), maybe_null(mac));
	(void)ibk_gid_ipoib_broadcast(any_u16(), Frama_C_unsigned_int_interval(
		0, UINT32_MAX), maybe_null(&out));
	(void)ibk_gid_ipoib_mgid_ipv4(any_u16(), Frama_C_unsigned_int_interval(
		0, UINT32_MAX), any_u32(), maybe_null(&out));
	(void)ibk_gid_ipoib_mgid_ipv6(any_u16(), Frama_C_unsigned_int_interval(
		0, UINT32_MAX), maybe_null(&h), maybe_null(&out));
	(void)ibk_gid_ipoib_mgid_parse(maybe_null(&g), maybe_null(&pkey),
				       maybe_null(&scope), maybe_null(&ipv6));
}

int main(void)
{
	errors();
	pkeys();
	qkeys();
	gid_values();
	return 0;
}
