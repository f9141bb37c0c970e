/* SPDX-License-Identifier: MIT */
/*
 * port_model.h - the one model of a port's receive checks that the unit
 * tests and the fuzz targets hold ibk_rx_check() and ibk_port_rx*() to,
 * written from the rules (IBA 9.6, 10.9.3) and the Linux soft-RoCE
 * receiver's order (rxe hdr_check(), check_type_state(), check_keys()),
 * not from the library's code: plain values and a plain array of P_Key
 * entries scanned front to back. Needs ib_keys.h only (C99).
 */
#ifndef IBK_TESTS_PORT_MODEL_H
#define IBK_TESTS_PORT_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "ib_keys.h"

/* A valid P_Key: a non-zero base (IBA 10.9.1). */
static inline bool model_pkey_valid(uint16_t k)
{
	return (k & 0x7fff) != 0;
}

/* IBA 10.9.3: the same valid base, and at least one full member (rxe
 * pkey_match()). */
static inline bool model_pkey_match(uint16_t a, uint16_t b)
{
	return (a & 0x7fff) == (b & 0x7fff) && model_pkey_valid(a) &&
	       ((a | b) & 0x8000) != 0;
}

/* The big-endian value of the @n <= 8 bytes at @b. */
static inline uint64_t model_be(const uint8_t *b, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = v << 8 | b[i];
	return v;
}

/*
 * The header checks of a QP of @type (SMI..UD) as the Linux soft-RoCE
 * receiver makes them, written from its code (drivers/infiniband/sw/rxe/
 * rxe_recv.c): hdr_check() drops a packet whose BTH TVer is not BTH_TVER
 * (0, IBA 9.2); check_type_state() one whose transport, opcode & 0xe0, is
 * not the QP's: IB_OPCODE_RC (0x00) for an RC QP, IB_OPCODE_UC (0x20) for
 * UC, IB_OPCODE_UD (0x60) for UD, SMI and GSI QPs. The UD transport defines
 * only SEND Only (0x64) and SEND Only with Immediate (0x65) (IBA 9.2 table
 * 38; rxe_opcode[] has no other UD entry), the two opcodes followed by a
 * DETH, so a datagram QP takes those only.
 */
static inline enum ibk_rx_verdict model_rx_header(unsigned type,
						  unsigned opcode,
						  unsigned tver)
{
	bool datagram = type == IBK_QPT_SMI || type == IBK_QPT_GSI ||
			type == IBK_QPT_UD;

	if (tver != 0)
		return IBK_RX_DROP_TVER;
	if (datagram)
		return opcode == 0x64 || opcode == 0x65 ? IBK_RX_ACCEPT :
		       IBK_RX_DROP_OPCODE;
	return (opcode >> 5) == (type == IBK_QPT_RC ? 0u : 1u) ?
	       IBK_RX_ACCEPT : IBK_RX_DROP_OPCODE;
}

/* ibk_rx_check(): the caller knows the QP's P_Key; QP1 needs a table.
 * A type outside the enum is malformed; QP0 checks no key; a datagram
 * needs its DETH; then the P_Key, then (UD) the Q_Key. */
static inline enum ibk_rx_verdict model_rx(unsigned type, uint16_t qp_pkey,
					   uint32_t qp_qkey,
					   const uint8_t *bth,
					   const uint8_t *deth)
{
	enum ibk_rx_verdict v;

	if (type > IBK_QPT_UD)
		return IBK_RX_DROP_MALFORMED;
	v = model_rx_header(type, bth[0], bth[1] & 0x0fu);
	if (v != IBK_RX_ACCEPT || type == IBK_QPT_SMI)
		return v;
	if (type == IBK_QPT_GSI)
		return IBK_RX_DROP_NEED_TABLE;
	if (type == IBK_QPT_UD && !deth)
		return IBK_RX_DROP_MALFORMED;
	if (!model_pkey_match(qp_pkey, (uint16_t)model_be(bth + 2, 2)))
		return IBK_RX_DROP_PKEY;
	if (type != IBK_QPT_UD || model_be(deth, 4) == qp_qkey)
		return IBK_RX_ACCEPT;
	return IBK_RX_DROP_QKEY;
}

/* QP1: the first of the @capacity entries at @e, in table order, that
 * admits packet key @pkt (rxe's linear scan), or -1. */
static inline int model_first_admitting(const uint16_t *e, uint32_t capacity,
					uint16_t pkt)
{
	uint32_t i;

	for (i = 0; i < capacity; i++)
		if (model_pkey_match(e[i], pkt))
			return (int)i;
	return -1;
}

/*
 * ibk_port_rx() on a port whose P_Key table holds the @capacity entries at
 * @e, readable or not (@readable): the QP type, the header, QP0 (no key,
 * any port state), a DETH for the datagram QPs, a readable table, then QP1
 * against the first entry admitting the packet's key with the GSI Q_Key,
 * or any other QP against the entry at its own P_Key index (an index
 * beyond the table is a configuration error; an empty entry matches
 * nothing). *@index gets the index checked against: the QP's own, or
 * QP1's match.
 */
static inline enum ibk_rx_verdict
model_port_rx(const uint16_t *e, uint32_t capacity, bool readable,
	      const struct ibk_qp_keys *qp, const uint8_t *bth,
	      const uint8_t *deth, uint16_t *index)
{
	enum ibk_rx_verdict v;
	int i;

	*index = qp->pkey_index;
	if ((unsigned)qp->type > IBK_QPT_UD)
		return IBK_RX_DROP_MALFORMED;
	v = model_rx_header(qp->type, bth[0], bth[1] & 0x0fu);
	if (v != IBK_RX_ACCEPT || qp->type == IBK_QPT_SMI)
		return v;
	if (!deth && qp->type != IBK_QPT_RC && qp->type != IBK_QPT_UC)
		return IBK_RX_DROP_MALFORMED;
	if (!readable)
		return IBK_RX_DROP_PORT;
	if (qp->type == IBK_QPT_GSI) {
		i = model_first_admitting(e, capacity,
					  (uint16_t)model_be(bth + 2, 2));
		if (i < 0)
			return IBK_RX_DROP_PKEY;
		*index = (uint16_t)i;
		return model_be(deth, 4) == IBK_QKEY_GSI ? IBK_RX_ACCEPT :
		       IBK_RX_DROP_QKEY;
	}
	if (qp->pkey_index >= capacity)
		return IBK_RX_DROP_PKEY_INDEX;
	return model_rx(qp->type, e[qp->pkey_index], qp->qkey, bth, deth);
}

#endif /* IBK_TESTS_PORT_MODEL_H */
