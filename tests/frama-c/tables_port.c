/* SPDX-License-Identifier: MIT */
/*
 * tables_port.c - EVA harness of ib_tables.h's port (its P_Key table of
 * CAPACITY entries and GID table of GID_CAPACITY), its receive checks and
 * its SMA: init's refusals, then any sequence of the port's writers, its
 * tables' writers (tables_pkey.c and tables_gid.c take those apart) and
 * its readers, on packets and MADs of any bytes and of every length up to
 * a bound past the longest each reads.
 */
#include "harness.h"
#define IBK_ATOMICS_HEADER "atomics_plain.h"
#include "ib_tables.h"

/* two GIDs: the port reads its GID table only through the SMA's GUIDInfo
 * and prefix, whose every statement two entries reach (tables_gid.c takes
 * the table apart; more entries only cost time here) */
#if CAPACITY < 2
#define GID_CAPACITY CAPACITY
#else
#define GID_CAPACITY 2
#endif
#define BURST 4
#define PKT_MAX 320	/* a 256-byte MAD behind an LRH, GRH, BTH, DETH */

static IBK_PORT_STORAGE(CAPACITY, GID_CAPACITY) storage;
static ibk_pkey_t pkeys[CAPACITY];
/* the packets and QPs every burst points into; a burst of two whole
 * chunks of 16 and one packet more */
static uint8_t pkts[BURST][IBK_BTH_LEN + IBK_DETH_LEN];
static struct ibk_qp_keys qp[2];
#define MANY 33
static const void *many_hdrs[MANY];
static const struct ibk_qp_keys *many_qps[MANY];
static uint8_t many_verdicts[MANY];
static uint16_t many_index[MANY];
/* the macros' chains of constants, folded here rather than in a function */
static const uint32_t pn = IBK_PKEY_HASH_SLOTS(CAPACITY);
static const uint32_t gn = IBK_HASH_SLOTS(GID_CAPACITY);
static const uint32_t gn_min = IBK_HASH_SLOTS_MIN(GID_CAPACITY);

static void init_cases(void)
{
	struct ibk_port p;
	struct ibk_pkey_cell *pc = storage.pkey_cells;
	struct ibk_gid_cell *gc = storage.gid_cells;
	struct ibk_hash_slot *ps = storage.pkey_slots, *gs = storage.gid_slots;

	(void)ibk_port_init(NULL, pc, CAPACITY, ps, pn, gc, GID_CAPACITY, gs,
			    gn);
	(void)ibk_port_init(&p, NULL, CAPACITY, ps, pn, gc, GID_CAPACITY, gs,
			    gn);
	(void)ibk_port_init(&p, pc, CAPACITY, ps, pn, NULL, GID_CAPACITY, gs,
			    gn);
	(void)ibk_port_init(&p, pc, 0, ps, pn, gc, GID_CAPACITY, gs, gn);
	(void)ibk_port_init(&p, pc, CAPACITY, ps, pn, gc, 0, gs, gn);
	(void)ibk_port_init(&p, pc, CAPACITY, ps, pn, gc, GID_CAPACITY, gs,
			    gn_min - 1);
}

static void receive(struct ibk_port *port)
{
	uint8_t pkt[PKT_MAX];
	const void *hdrs[BURST];
	const struct ibk_qp_keys *qps[BURST];
	struct ibk_trap_key trap;
	uint8_t verdicts[BURST];
	uint16_t index[BURST];
	size_t i;

	UNKNOWN(pkts);
	UNKNOWN(qp);
	qp[0].type = ANY_ENUM(enum ibk_qp_type, IBK_QPT_SMI, IBK_QPT_UD);
	qp[1].type = ANY_ENUM(enum ibk_qp_type, IBK_QPT_SMI, IBK_QPT_UD);
	for (i = 0; i < BURST; i++) {
		hdrs[i] = pkts[Frama_C_interval(0, BURST - 1)];
		qps[i] = &qp[Frama_C_interval(0, 1)];
	}
	(void)ibk_port_rx(port, &qp[0], maybe_null(pkts[0]),
			  maybe_null(pkts[0] + IBK_BTH_LEN));
	(void)ibk_port_rx_gsi(port, pkts[0], pkts[0] + IBK_BTH_LEN,
			      maybe_null(index));
	/* each length on its own, so that EVA follows the verdicts written */
	/*@ loop unroll BURST + 1; */
	for (i = 0; i <= BURST; i++) {
		(void)ibk_port_rx_burst(port, &qp[0], hdrs, i, verdicts);
		(void)ibk_port_rx_mixed(port, qps, hdrs, i, verdicts,
					maybe_null(index));
	}
	/*@ loop unroll MANY; */
	for (i = 0; i < MANY; i++) {
		many_hdrs[i] = pkts[Frama_C_interval(0, BURST - 1)];
		many_qps[i] = &qp[Frama_C_interval(0, 1)];
	}
	(void)ibk_port_rx_burst(port, &qp[0], many_hdrs, MANY, many_verdicts);
	(void)ibk_port_rx_mixed(port, many_qps, many_hdrs, MANY, many_verdicts,
				maybe_null(many_index));
	UNKNOWN(pkt);
	(void)ibk_port_rx_packet(port, &qp[0], pkt,
				 Frama_C_size_t_interval(0, sizeof(pkt)),
				 maybe_null(&trap));
}

static void sma(struct ibk_port *port)
{
	uint8_t smp[IBK_MAD_LEN], pi[IBK_PORTINFO_LEN];
	struct ibk_mkey_state st;

	UNKNOWN(smp);
	(void)ibk_sma_answer_table(maybe_null(port), maybe_null(smp),
				   Frama_C_size_t_interval(0, SIZE_MAX),
				   any_u64());
	UNKNOWN(st);
	st.lease_running = any_bool();
	(void)ibk_sma_mkey_check(port, &st, any_u8(), any_u64(), any_u64());
	UNKNOWN(pi);
	ibk_sma_fill_portinfo_counters(port, pi);
	(void)ibk_sma_apply_portinfo(maybe_null(port), maybe_null(pi));
}

static void any_sequence(void)
{
	struct ibk_port *port = &storage.port;
	struct ibk_gid gid;

	(void)IBK_PORT_STORAGE_INIT(&storage);
	while (any_bool()) {
		switch (Frama_C_interval(0, 8)) {
		case 0:
			(void)ibk_port_set_state(maybe_null(port),
				ANY_ENUM(enum ibk_port_state, IBK_PORT_DOWN,
					 IBK_PORT_ACTIVE_DEFER));
			break;
		case 1:
			(void)ibk_port_serve_stale(maybe_null(port),
						   any_bool());
			break;
		case 2:
			(void)ibk_port_event(maybe_null(port),
				ANY_ENUM(enum ibk_event_type,
					 IBK_EVENT_DEVICE_FATAL,
					 IBK_EVENT_GID_CHANGE));
			break;
		case 3:
			(void)ibk_port_reset(maybe_null(port));
			break;
		case 4:
			UNKNOWN(pkeys);
			(void)ibk_pkey_table_refill(&port->pkeys, pkeys,
				Frama_C_unsigned_int_interval(0, CAPACITY),
				ibk_pkey_table_refill_ticket(&port->pkeys));
			break;
		case 5:
			(void)ibk_pkey_table_set(&port->pkeys, any_u32(),
						 any_u16());
			break;
		case 6:
			UNKNOWN(gid);
			(void)ibk_gid_table_set(&port->gids, any_u32(), &gid,
				ANY_ENUM(enum ibk_gid_type, IBK_GID_TYPE_IB,
					 IBK_GID_TYPE_ROCE_V2));
			break;
		case 7:
			receive(port);
			break;
		default:
			sma(port);
			break;
		}
	}
}

int main(void)
{
	init_cases();
	any_sequence();
	return 0;
}
