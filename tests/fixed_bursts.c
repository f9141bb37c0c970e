/* SPDX-License-Identifier: MIT */
/*
 * A compile test: callers that hand the burst functions fixed-size arrays
 * and a constant count, built at -O2 with -Werror. GCC 12 used to reject
 * this (-Waggressive-loop-optimizations) when a chunk loop ended where
 * n - i < 16: it then saw no bound on the tail loop.
 */
#include "ib_tables.h"

size_t fixed_pkey_burst(ibk_pkey_t qp_pkey, const ibk_pkey_t keys[256]);
size_t fixed_ud_burst(const void *const hdrs[256]);
size_t fixed_port_burst(struct ibk_port *port, const struct ibk_qp_keys *qp,
			const void *const hdrs[64]);

size_t fixed_pkey_burst(ibk_pkey_t qp_pkey, const ibk_pkey_t keys[256])
{
	uint8_t match[256];

	return ibk_pkey_match_burst(qp_pkey, keys, 256, match) + match[255];
}

size_t fixed_ud_burst(const void *const hdrs[256])
{
	uint8_t verdicts[256];

	return ibk_rx_ud_burst(0xffff, IBK_QKEY_IPOIB, hdrs, 256, verdicts) +
	       verdicts[17];
}

size_t fixed_port_burst(struct ibk_port *port, const struct ibk_qp_keys *qp,
			const void *const hdrs[64])
{
	uint8_t verdicts[64];

	return ibk_port_rx_burst(port, qp, hdrs, 64, verdicts) + verdicts[63];
}
