#include <stdio.h>
#include "ib_tables.h" /* quickstart: cache a port's P_Keys, check a UD packet */
static IBK_PORT_STORAGE(16, 4) cache;    /* room for 16 P_Keys and 4 GIDs */

int main(void)
{
	struct ibk_port *port = &cache.port;
	const ibk_pkey_t pkeys[] = { 0xffff, 0x8001 };        /* ibv_query_pkey() */
	const struct ibk_qp_keys qp = { .type = IBK_QPT_UD, .pkey_index = 1,
					.qkey = 0x1234 };     /* the receiving QP */
	uint8_t pkt[IBK_BTH_LEN + IBK_DETH_LEN] = { 0 };      /* BTH, DETH */
	IBK_PORT_STORAGE_INIT(&cache);
	ibk_port_set_state(port, IBK_PORT_ACTIVE);            /* ibv_query_port() */
	ibk_pkey_table_refill(&port->pkeys, pkeys, 2,         /* fill the cache */
			      ibk_pkey_table_refill_ticket(&port->pkeys));
	ibk_bth_set_opcode(pkt, IBK_OPCODE_UD_SEND_ONLY);     /* a packet arrives */
	ibk_bth_set_pkey(pkt, 0x0001);       /* limited member: meets 0x8001 */
	ibk_deth_set_qkey(pkt + IBK_BTH_LEN, 0x1234);
	enum ibk_rx_verdict v = ibk_port_rx(port, &qp, pkt, pkt + IBK_BTH_LEN);
	printf("%s\n", ibk_rx_verdict_name(v));               /* "accept" */
	return v != IBK_RX_ACCEPT;
}
