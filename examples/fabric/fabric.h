/* SPDX-License-Identifier: MIT */
/*
 * fabric.h - the core of the example fabric simulator: nodes, links, the
 * subnet management agent of every port (ibkeys' SMA), directed-route and
 * LID routing. No sockets here: examples/fabric/server.c carries the
 * messages of Debian's libumad2sim between this core and its clients, and
 * tests/test_fabric_replay.c replays a recorded sweep into it.
 */
#ifndef IBKEYS_FABRIC_H
#define IBKEYS_FABRIC_H

#include <stdbool.h>
#include <stdint.h>

#include "ib_tables.h"

#define FAB_MAX_NODES	16
#define FAB_MAX_PORTS	8	/* external ports of a switch */
#define FAB_PKEY_CAP	64	/* P_Keys per port: two blocks */
#define FAB_GUID_CAP	8	/* GUIDInfo entries per port: one block */
#define FAB_LFT_CAP	1024	/* LinearFDBCap */

/*
 * The data message of libumad2sim (288 bytes, ibsim's struct sim_request
 * as x86-64 lays it out): DLID @0 and SLID @4, the LID in network order
 * in the first two bytes; DQP @8, SQP @12, status @16, big-endian 32-bit;
 * 4 bytes of padding; MAD length @24, big-endian 64-bit; the MAD @32, 256
 * bytes.
 */
#define FAB_MSG_LEN	288
#define FAB_MSG_LENGTH	24
#define FAB_MSG_MAD	32
#define FAB_ETIMEDOUT	110	/* status of a request nobody answers */

enum fab_node_type { FAB_CA = 1, FAB_SWITCH = 2 };

struct fab_node;

struct fab_port {
	struct fab_node *peer;		/* NULL: no link */
	uint8_t peer_port;
	uint8_t pi[IBK_PORTINFO_LEN];	/* PortInfo but the keys' fields */
	struct ibk_port tables;		/* P_Key and GID tables, counters */
	struct ibk_pkey_cell pk_cells[IBK_PKEY_CELLS(FAB_PKEY_CAP)];
	struct ibk_hash_slot pk_slots[IBK_HASH_SLOTS(FAB_PKEY_CAP)];
	struct ibk_gid_cell gid_cells[IBK_GID_CELLS(FAB_GUID_CAP)];
	struct ibk_hash_slot gid_slots[IBK_HASH_SLOTS(FAB_GUID_CAP)];
	uint64_t last_trap_ns;
	bool trap_sent;
};

struct fab_node {
	char name[32];
	enum fab_node_type type;
	uint8_t nports;
	uint64_t guid;
	struct ibk_mkey_state mkey;	/* a CA's port 1, a switch's port 0 */
	uint16_t trap_tid;
	uint8_t switch_info[IBK_SMP_DATA_LEN];
	uint8_t lft[FAB_LFT_CAP];
	struct fab_port port[FAB_MAX_PORTS + 1];
};

struct fabric {
	unsigned nnodes;
	struct fab_node node[FAB_MAX_NODES];
};

/* Where a message the core produced goes. */
enum fab_to {
	FAB_TO_SENDER,		/* the client that sent the request */
	FAB_TO_SM,		/* the SM's client at node @node */
	FAB_TO_SLOT,		/* the client in slot @slot (a GMP reply) */
};

struct fab_out {
	enum fab_to to;
	unsigned node, slot;
	uint8_t msg[FAB_MSG_LEN];
};

#define FAB_MAX_OUT	2

/* @v at @p, big-endian: the GUIDs of the attributes, the length. */
static inline void fab_store_be64(uint8_t *p, uint64_t v)
{
	unsigned i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

int fab_load(struct fabric *f, const char *path);
int fab_find_node(const struct fabric *f, const char *name);
int fab_default_node(const struct fabric *f);
uint8_t fab_client_port(const struct fabric *f, unsigned node);
unsigned fab_request(struct fabric *f, unsigned node, unsigned slot,
		     const uint8_t *msg, uint64_t now_ns,
		     struct fab_out out[FAB_MAX_OUT]);
void fab_bounce(uint8_t *msg, uint32_t status);
void fab_set_issm(struct fabric *f, unsigned node, bool issm);
void fab_get_portinfo(struct fabric *f, unsigned node, uint8_t port,
		      uint8_t pi[IBK_PORTINFO_LEN]);
void fab_get_nodeinfo(const struct fabric *f, unsigned node, uint8_t port,
		      uint8_t ni[IBK_SMP_DATA_LEN]);

#endif /* IBKEYS_FABRIC_H */
