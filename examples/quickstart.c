#include <stdio.h>
#include "ib_tables.h" /* quickstart: cache a port's P_Keys, check a UD packet */
static struct ibk_pkey_cell pkey_cells[IBK_PKEY_CELLS(16)];
static struct ibk_hash_slot pkey_slots[IBK_PKEY_HASH_SLOTS(16)];
static struct ibk_gid_cell gid_cells[IBK_GID_CELLS(4)];
static struct ibk_hash_slot gid_slots[IBK_HASH_SLOTS(4)];
static struct ibk_port port;

int main(void)
{
	const ibk_pkey_t pkeys[] = { 0xffff, 0x8001 };        /* ibv_query_pkey() */
	struct ibk_qp_keys qp = { IBK_QPT_UD, 0, 1, 0x1234 }; /* P_Key index 1 */
	uint8_t pkt[IBK_BTH_LEN + IBK_DETH_LEN] = { 0 };      /* BTH, DETH */
	ibk_port_init(&port, pkey_cells, 16, pkey_slots, IBK_PKEY_HASH_SLOTS(16),
		      gid_cells, 4, gid_slots, IBK_HASH_SLOTS(4));
	ibk_port_set_state(&port, IBK_PORT_ACTIVE);           /* ibv_query_port() */
	ibk_pkey_table_refill(&port.pkeys, pkeys, 2,          /* fill the cache */
			      ibk_pkey_table_refill_ticket(&port.pkeys));
	ibk_bth_set_opcode(pkt, IBK_OPCODE_UD_SEND_ONLY);     /* a packet arrives */
	ibk_bth_set_pkey(pkt, 0x0001);       /* limited member: meets 0x8001 */
	ibk_deth_set_qkey(pkt + IBK_BTH_LEN, 0x1234);
	enum ibk_rx_verdict v = ibk_port_rx(&port, &qp, pkt, pkt + IBK_BTH_LEN);
	printf("%s\n", ibk_rx_verdict_name(v));               /* "accept" */
	return v != IBK_RX_ACCEPT;
}
