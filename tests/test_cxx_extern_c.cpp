/* SPDX-License-Identifier: MIT */
/*
 * ib_tables.h included inside extern "C" { }, as C++ code that wraps the C
 * headers it includes does. <atomic> declares templates, which C linkage
 * forbids; the header must keep them in C++ linkage. Compiling this file is
 * most of the test; the checks show the functions behave as from C.
 */
#include <cstdint>

extern "C" {
#include "ib_tables.h"
}

#include "tap.h"

static struct ibk_pkey_cell pkey_cells[IBK_PKEY_CELLS(4)];
static struct ibk_hash_slot pkey_slots[IBK_PKEY_HASH_SLOTS(4)];
static struct ibk_gid_cell gid_cells[IBK_GID_CELLS(2)];
static struct ibk_hash_slot gid_slots[IBK_HASH_SLOTS(2)];
static struct ibk_port port;

int main()
{
	const ibk_pkey_t keys[] = { 0xffff, 0x8001 };
	uint8_t hdr[IBK_BTH_LEN + IBK_DETH_LEN] = { 0 };
	struct ibk_qp_keys qp = {};
	uint32_t ticket;

	tap_ok(ibk_port_init(&port, pkey_cells, 4, pkey_slots,
			     IBK_PKEY_HASH_SLOTS(4), gid_cells, 2, gid_slots,
			     IBK_HASH_SLOTS(2)) == IBK_OK,
	       "extern \"C\" include: port init");
	ticket = ibk_pkey_table_refill_ticket(&port.pkeys);
	ibk_port_event(&port, IBK_EVENT_PKEY_CHANGE);
	tap_ok(ibk_pkey_table_refill(&port.pkeys, keys, 2, ticket) ==
	       IBK_ESTALE,
	       "extern \"C\" include: a ticket from before PKEY_CHANGE is "
	       "refused");
	ibk_port_set_state(&port, IBK_PORT_ACTIVE);
	ticket = ibk_pkey_table_refill_ticket(&port.pkeys);
	tap_ok(ibk_pkey_table_refill(&port.pkeys, keys, 2, ticket) == IBK_OK,
	       "extern \"C\" include: a fresh ticket refills");
	qp.type = IBK_QPT_UD;
	qp.pkey_index = 1;
	qp.qkey = 0x0b1b;
	hdr[0] = 0x64;			/* UD SEND Only */
	hdr[2] = 0x00;			/* P_Key 0x0001, limited */
	hdr[3] = 0x01;
	hdr[14] = 0x0b;			/* Q_Key 0x00000b1b */
	hdr[15] = 0x1b;
	tap_ok(ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN) ==
	       IBK_RX_ACCEPT,
	       "extern \"C\" include: a limited member reaches a full one");
	hdr[0] = 0x04;			/* RC SEND Only: not a UD opcode */
	tap_ok(ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN) ==
	       IBK_RX_DROP_OPCODE,
	       "extern \"C\" include: an RC opcode to a UD QP is dropped");
	return tap_done();
}
