/* SPDX-License-Identifier: MIT */
/*
 * core.c - the example fabric's nodes, their subnet management agents and
 * the routing between them (see fabric.h). Every port's M_Key check,
 * P_KeyTable, GUIDInfo, GID prefix, violation counters and trap 256 are
 * ibkeys' SMA, in the order of examples/README.md's walk; what is here is
 * what the library leaves to its caller: NodeInfo, NodeDescription, the
 * rest of PortInfo and its state machine, SwitchInfo and the linear
 * forwarding table, SMInfo handed to the SM, and moving MADs hop by hop.
 */
#include <stdio.h>
#include <string.h>

#include "fabric.h"

/* PortInfo bytes this file reads beyond ib_keys.h's accessors (IBA
 * 14.2.5.6, OpenSM ib_types.h ib_port_info_t). */
#define PI_LOCAL_PORT	28
#define PI_STATE	32	/* LinkSpeedSupported 0xf0, PortState 0x0f */
#define PI_PHYS		33	/* PortPhysicalState 0xf0, LinkDownDefault */
#define PI_LMC		34	/* M_KeyProtectBits 0xc0, LMC 0x07 */

#define ATTR_NODE_DESC	0x0010
#define ATTR_SM_INFO	0x0020
#define ATTR_LFT	0x0019
#define LFT_BLOCK	64

#define IS_SM		0x00000002u	/* PortInfo CapabilityMask IsSM */

/* ---- the message's fields ---- */

/* @v at @p, big-endian: QPs and status of the message. */
static void store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* The LID of a DLID or SLID field: network order in its first 2 bytes. */
static uint16_t msg_lid(const uint8_t *field)
{
	return (uint16_t)(field[0] << 8 | field[1]);
}

/* The DLID or SLID field @field set to @lid. */
static void msg_set_lid(uint8_t *field, uint16_t lid)
{
	field[0] = (uint8_t)(lid >> 8);
	field[1] = (uint8_t)lid;
	field[2] = field[3] = 0;
}

/* A fresh message of @mad to @dlid from @slid, QP @qp both ends. */
static void msg_build(uint8_t *msg, uint16_t dlid, uint16_t slid,
		      uint32_t qp, const uint8_t *mad)
{
	memset(msg, 0, FAB_MSG_LEN);
	msg_set_lid(msg, dlid);
	msg_set_lid(msg + 4, slid);
	store_be32(msg + 8, qp);
	store_be32(msg + 12, qp);
	fab_store_be64(msg + FAB_MSG_LENGTH, IBK_MAD_LEN);
	memcpy(msg + FAB_MSG_MAD, mad, IBK_MAD_LEN);
}

/* Swaps the 4 bytes at @a and @b. */
static void swap4(uint8_t *a, uint8_t *b)
{
	uint8_t t[4];

	memcpy(t, a, 4);
	memcpy(a, b, 4);
	memcpy(b, t, 4);
}

/* @msg turned, in place, into its own return with @status: LIDs and QPs
 * swapped (FAB_ETIMEDOUT: what a client sees for a request nobody
 * answers, at once instead of after its timeout, as ibsim does). */
void fab_bounce(uint8_t *msg, uint32_t status)
{
	swap4(msg, msg + 4);
	swap4(msg + 8, msg + 12);
	store_be32(msg + 16, status);
}

/* ---- ports ---- */

/* PortInfo's PortState of @p: IBK_PORT_DOWN to IBK_PORT_ACTIVE. */
static uint8_t port_state(const struct fab_port *p)
{
	return p->pi[PI_STATE] & 0x0f;
}

/* Both tables published again from what they hold, as firmware does
 * when its port enters ARMED (a change event: the tables await a
 * refill): the P_Key blocks as set, GID i = GidPrefix || GUIDInfo entry
 * i. Block reads answer in any state. */
static void port_refill(struct fab_port *p)
{
	ibk_pkey_t keys[FAB_PKEY_CAP];
	ibk_guid_t guids[IBK_GUID_BLOCK_ENTRIES];
	struct ibk_gid_entry e[FAB_GUID_CAP];
	uint32_t pt = ibk_pkey_table_refill_ticket(&p->tables.pkeys);
	uint32_t gt = ibk_gid_table_refill_ticket(&p->tables.gids), i;

	for (i = 0; i < FAB_PKEY_CAP / IBK_PKEY_BLOCK_ENTRIES; i++)
		ibk_pkey_table_read_block(&p->tables.pkeys, i,
					  keys + i * IBK_PKEY_BLOCK_ENTRIES);
	ibk_pkey_table_refill(&p->tables.pkeys, keys, FAB_PKEY_CAP, pt);
	ibk_gid_table_read_guid_block(&p->tables.gids, 0, guids);
	memset(e, 0, sizeof(e));
	for (i = 0; i < FAB_GUID_CAP; i++) {
		e[i].type = IBK_GID_TYPE_IB;
		if (guids[i])
			ibk_gid_set(ibk_portinfo_gid_prefix(p->pi), guids[i],
				    &e[i].gid);
	}
	ibk_gid_table_refill(&p->tables.gids, e, FAB_GUID_CAP, gt);
}

/* Port @p's state to @state, the tables' with it. */
static void port_put_state(struct fab_port *p, uint8_t state)
{
	uint8_t was = port_state(p);

	p->pi[PI_STATE] = (uint8_t)((p->pi[PI_STATE] & 0xf0) | state);
	ibk_port_set_state(&p->tables, (enum ibk_port_state)state);
	if (state == IBK_PORT_ARMED && was != IBK_PORT_ARMED)
		port_refill(p);
}

/* The port GUID: a CA's node GUID + port number, a switch's node GUID. */
static uint64_t port_guid(const struct fab_node *n, uint8_t port)
{
	return n->type == FAB_CA ? n->guid + port : n->guid;
}

/* The port whose M_Key state and LID stand for @n: port 1 of a CA, port
 * 0 of a switch. */
static uint8_t sma_port(const struct fab_node *n)
{
	return n->type == FAB_CA ? 1 : 0;
}

/* A port's PortInfo as it boots: no LID, INIT with a link (DOWN and
 * Polling without), 1x SDR, MTU 2048, one VL, SubnetTimeout 18. */
static void port_boot_portinfo(struct fab_node *n, uint8_t num)
{
	struct fab_port *p = &n->port[num];
	bool up = p->peer || (n->type == FAB_SWITCH && num == 0);
	uint8_t *pi = p->pi;

	memset(pi, 0, IBK_PORTINFO_LEN);
	ibk_portinfo_set_gid_prefix(pi, 0xfe80000000000000ull);
	ibk_portinfo_set_cap_mask(pi, IBK_PORT_CAP_IS_TRAP_SUPPORTED);
	pi[29] = pi[30] = pi[31] = 1;		/* link width 1x */
	pi[PI_STATE] = 0x10 | (up ? IBK_PORT_INIT : IBK_PORT_DOWN);
	pi[PI_PHYS] = (uint8_t)((up ? 5 : 2) << 4 | 2);
	pi[35] = 0x11;				/* SDR active, enabled */
	pi[36] = 4 << 4;			/* NeighborMTU 2048 */
	pi[37] = 1 << 4;			/* VLCap VL0 */
	pi[41] = 4;				/* MTUCap 2048 */
	pi[43] = 1 << 4;			/* OperationalVLs */
	ibk_portinfo_set_guid_cap(pi, n->type == FAB_CA ? FAB_GUID_CAP : 1);
	ibk_portinfo_set_subnet_timeout(pi, 18);
	pi[52] = 16;				/* RespTimeValue */
}

/* Port @num of @n at boot: PortInfo, the tables with the default P_Key
 * at index 0 and GID 0 = fe80:: || port GUID (what firmware loads), set
 * entry by entry: the port is not ARMED or ACTIVE yet, so no refill
 * publishes (port_refill() does once it is ARMED). */
static int port_boot(struct fab_node *n, uint8_t num)
{
	struct fab_port *p = &n->port[num];
	ibk_pkey_t def = IBK_PKEY_DEFAULT;
	struct ibk_gid_entry e;
	int rc;

	port_boot_portinfo(n, num);
	rc = ibk_port_init(&p->tables, p->pk_cells, FAB_PKEY_CAP, p->pk_slots,
			   IBK_HASH_SLOTS(FAB_PKEY_CAP), p->gid_cells,
			   FAB_GUID_CAP, p->gid_slots,
			   IBK_HASH_SLOTS(FAB_GUID_CAP));
	if (rc != IBK_OK)
		return rc;
	ibk_port_set_state(&p->tables, (enum ibk_port_state)port_state(p));
	rc = ibk_pkey_table_set(&p->tables.pkeys, 0, def);
	if (rc != IBK_OK)
		return rc;
	ibk_gid_set(ibk_portinfo_gid_prefix(p->pi), port_guid(n, num), &e.gid);
	e.type = IBK_GID_TYPE_IB;
	return ibk_gid_table_set(&p->tables.gids, 0, &e.gid, e.type);
}

/* ---- the topology file ---- */

/* A new node of @type from "NAME GUID [NPORTS]"; NULL if the line or
 * the table is bad. */
static struct fab_node *add_node(struct fabric *f, enum fab_node_type type,
				 const char *args)
{
	struct fab_node *n;
	unsigned long long guid;
	unsigned nports = 1;
	int want = type == FAB_SWITCH ? 3 : 2;

	if (f->nnodes == FAB_MAX_NODES)
		return NULL;
	n = &f->node[f->nnodes];
	memset(n, 0, sizeof(*n));
	if (sscanf(args, "%31s %llx %u", n->name, &guid, &nports) < want ||
	    nports < 1 || nports > FAB_MAX_PORTS || guid == 0)
		return NULL;
	n->type = type;
	n->nports = (uint8_t)nports;
	n->guid = guid;
	f->nnodes++;
	return n;
}

/* Links "NODE PORT NODE PORT"; false if either end is bad or taken. */
static bool add_link(struct fabric *f, const char *args)
{
	char a[32], b[32];
	unsigned pa, pb;
	int ia, ib;
	struct fab_port *x, *y;

	if (sscanf(args, "%31s %u %31s %u", a, &pa, b, &pb) != 4)
		return false;
	ia = fab_find_node(f, a);
	ib = fab_find_node(f, b);
	if (ia < 0 || ib < 0 || pa < 1 || pb < 1 ||
	    pa > f->node[ia].nports || pb > f->node[ib].nports)
		return false;
	x = &f->node[ia].port[pa];
	y = &f->node[ib].port[pb];
	if (x->peer || y->peer || x == y)
		return false;
	x->peer = &f->node[ib];
	x->peer_port = (uint8_t)pb;
	y->peer = &f->node[ia];
	y->peer_port = (uint8_t)pa;
	return true;
}

/* The switch's SwitchInfo at boot (IBA 14.2.5.4): LinearFDBCap, no
 * random or multicast table, P_Key enforcement on 32 keys per port,
 * inbound and outbound enforcement capable. */
static void switch_boot(struct fab_node *n)
{
	uint8_t *si = n->switch_info;

	memset(si, 0, sizeof(n->switch_info));
	si[0] = FAB_LFT_CAP >> 8;
	si[1] = FAB_LFT_CAP & 0xff;
	si[11] = 18 << 3;			/* LifeTimeValue */
	si[15] = IBK_PKEY_BLOCK_ENTRIES;	/* PartitionEnforcementCap */
	si[16] = 0xc0;
	memset(n->lft, 0xff, sizeof(n->lft));
}

/* Boots every port of every node; IBK_OK or the first failure. */
static int fab_boot(struct fabric *f)
{
	unsigned i, p;
	int rc;

	for (i = 0; i < f->nnodes; i++) {
		struct fab_node *n = &f->node[i];

		if (n->type == FAB_SWITCH)
			switch_boot(n);
		for (p = sma_port(n); p <= n->nports; p++)
			if ((rc = port_boot(n, (uint8_t)p)) != IBK_OK)
				return rc;
	}
	return IBK_OK;
}

/*
 * Reads the topology at @path: lines "switch NAME GUID NPORTS", "hca NAME
 * GUID" and "link NAME PORT NAME PORT", '#' comments. 0, or -1 after
 * saying which line is bad.
 */
int fab_load(struct fabric *f, const char *path)
{
	char line[256], kind[16];
	unsigned lineno = 0;
	int off;
	bool ok;
	FILE *in = fopen(path, "r");

	if (!in) {
		perror(path);
		return -1;
	}
	memset(f, 0, sizeof(*f));
	while (fgets(line, sizeof(line), in)) {
		lineno++;
		if (sscanf(line, "%15s %n", kind, &off) != 1 || kind[0] == '#')
			continue;
		if (!strcmp(kind, "switch"))
			ok = add_node(f, FAB_SWITCH, line + off) != NULL;
		else if (!strcmp(kind, "hca"))
			ok = add_node(f, FAB_CA, line + off) != NULL;
		else
			ok = !strcmp(kind, "link") && add_link(f, line + off);
		if (!ok) {
			fprintf(stderr, "%s:%u: bad line\n", path, lineno);
			fclose(in);
			return -1;
		}
	}
	fclose(in);
	return fab_boot(f) == IBK_OK && fab_default_node(f) >= 0 ? 0 : -1;
}

/* The index of the node named @name, or -1. */
int fab_find_node(const struct fabric *f, const char *name)
{
	unsigned i;

	for (i = 0; i < f->nnodes; i++)
		if (!strcmp(f->node[i].name, name))
			return (int)i;
	return -1;
}

/* Where a client that names no node attaches: the first CA, or -1. */
int fab_default_node(const struct fabric *f)
{
	unsigned i;

	for (i = 0; i < f->nnodes; i++)
		if (f->node[i].type == FAB_CA)
			return (int)i;
	return -1;
}

/* The port a client of @node sends from: a CA's port 1, a switch's 0. */
uint8_t fab_client_port(const struct fabric *f, unsigned node)
{
	return sma_port(&f->node[node]);
}

/* ---- attributes the library leaves to its caller ---- */

/* NodeInfo of @node as seen through @port (IBA 14.2.5.3). */
void fab_get_nodeinfo(const struct fabric *f, unsigned node, uint8_t port,
		      uint8_t ni[IBK_SMP_DATA_LEN])
{
	const struct fab_node *n = &f->node[node];

	memset(ni, 0, IBK_SMP_DATA_LEN);
	ni[0] = ni[1] = 1;			/* base, class version */
	ni[2] = (uint8_t)n->type;
	ni[3] = n->nports;
	fab_store_be64(ni + 4, n->guid);	/* SystemImageGUID */
	fab_store_be64(ni + 12, n->guid);
	fab_store_be64(ni + 20, port_guid(n, port));
	ni[28] = FAB_PKEY_CAP >> 8;		/* PartitionCap */
	ni[29] = FAB_PKEY_CAP & 0xff;
	ni[31] = 0x1b;				/* DeviceID */
	store_be32(ni + 36, (uint32_t)port << 24 | 0x0002c9u);
}

/* PortInfo @port of @node as a Get with the right key reads it. */
void fab_get_portinfo(struct fabric *f, unsigned node, uint8_t port,
		      uint8_t pi[IBK_PORTINFO_LEN])
{
	struct fab_node *n = &f->node[node];
	struct fab_port *p = &n->port[port];

	memcpy(pi, p->pi, IBK_PORTINFO_LEN);
	ibk_portinfo_set_mkey(pi, n->mkey.mkey);
	ibk_portinfo_set_mkey_lease_period(pi, n->mkey.lease_period);
	ibk_portinfo_set_mkey_protect_bits(pi, n->mkey.protect_bits);
	ibk_sma_fill_portinfo_counters(&p->tables, pi);
	pi[PI_LOCAL_PORT] = port;
}

/* SET_ISSM: the IsSM capability of @node's client port. */
void fab_set_issm(struct fabric *f, unsigned node, bool issm)
{
	uint8_t *pi = f->node[node].port[sma_port(&f->node[node])].pi;
	uint32_t cap = ibk_portinfo_cap_mask(pi) & ~IS_SM;

	ibk_portinfo_set_cap_mask(pi, cap | (issm ? IS_SM : 0));
}

/* The port a PortInfo modifier @mod names, reached through @in_port;
 * -1 if there is none. A CA reads 0 as the receiving port. */
static int portinfo_port(const struct fab_node *n, uint8_t in_port,
			 uint32_t mod)
{
	if (n->type == FAB_CA && mod == 0)
		return in_port;
	if (mod > n->nports || (n->type == FAB_CA && mod == 0))
		return -1;
	return (int)mod;
}

/* Whether a Set may take port @p from its state to @want (0: no
 * change; DOWN retrains the link, back to INIT at once). */
static bool state_change_ok(const struct fab_port *p, uint8_t want)
{
	uint8_t cur = port_state(p);

	switch (want) {
	case 0:
	case IBK_PORT_DOWN:
		return true;
	case IBK_PORT_ARMED:
		return cur == IBK_PORT_INIT || cur == IBK_PORT_ARMED;
	case IBK_PORT_ACTIVE:
		return cur == IBK_PORT_ARMED || cur == IBK_PORT_ACTIVE;
	default:
		return false;
	}
}

/* The writable PortInfo fields of the Set @pi into port @p: the keys'
 * state of @n through the library's rules, the rest stored as sent. */
static void portinfo_store(struct fab_node *n, uint8_t num, const uint8_t *pi)
{
	static const uint8_t writable[] = { 16, 17, 18, 19, 29, 34, 38, 42,
					    43, 51, 53 };
	struct fab_port *p = &n->port[num];
	uint8_t want = pi[PI_STATE] & 0x0f;
	unsigned i;

	if (num == sma_port(n)) {
		n->mkey.mkey = ibk_portinfo_mkey(pi);
		n->mkey.lease_period = ibk_portinfo_mkey_lease_period(pi);
		n->mkey.protect_bits = ibk_portinfo_mkey_protect_bits(pi);
	}
	ibk_sma_apply_portinfo(&p->tables, pi);
	ibk_portinfo_set_gid_prefix(p->pi, ibk_portinfo_gid_prefix(pi));
	for (i = 0; i < sizeof(writable); i++)
		p->pi[writable[i]] = pi[writable[i]];
	p->pi[PI_PHYS] = (uint8_t)((p->pi[PI_PHYS] & 0xf0) | (pi[PI_PHYS] & 0x0f));
	p->pi[35] = (uint8_t)((p->pi[35] & 0xf0) | (pi[35] & 0x0f));
	p->pi[36] = (uint8_t)((p->pi[36] & 0xf0) | (pi[36] & 0x0f));
	p->pi[51] &= 0x7f;			/* ClientReregister: an event */
	if (want == IBK_PORT_DOWN)
		want = IBK_PORT_INIT;
	if (want)
		port_put_state(p, want);
}

/* SubnGet/SubnSet(PortInfo); the MAD status. A CA answers a Set for
 * another port as a Get (qib subn_set_portinfo()). */
static int answer_portinfo(struct fabric *f, unsigned node, uint8_t in_port,
			   uint8_t *mad, enum ibk_mkey_verdict v)
{
	struct fab_node *n = &f->node[node];
	uint8_t *data = ibk_smp_data_mut(mad);
	int num = portinfo_port(n, in_port, ibk_mad_attr_mod(mad));
	int st = IBK_MAD_STATUS_OK;

	if (num < 0)
		return IBK_MAD_STATUS_INVALID_FIELD;
	if (ibk_mad_method(mad) == IBK_MAD_METHOD_SET &&
	    (n->type == FAB_SWITCH || num == in_port)) {
		if (state_change_ok(&n->port[num], data[PI_STATE] & 0x0f))
			portinfo_store(n, (uint8_t)num, data);
		else
			st = IBK_MAD_STATUS_INVALID_FIELD;
	}
	fab_get_portinfo(f, node, (uint8_t)num, data);
	data[PI_LOCAL_PORT] = in_port;
	if (v == IBK_MKEY_PROCESS_HIDE_MKEY)
		ibk_portinfo_set_mkey(data, 0);
	return st;
}

/* SubnGet/SubnSet(SwitchInfo); the MAD status. A Set writes
 * LinearFDBTop, the default ports, LifeTimeValue and MulticastFDBTop;
 * PortStateChange is cleared by writing 1. */
static int answer_switch_info(struct fab_node *n, uint8_t *mad)
{
	uint8_t *si = n->switch_info, *data = ibk_smp_data_mut(mad);

	if (n->type != FAB_SWITCH)
		return IBK_MAD_STATUS_UNSUP_METHOD_ATTR;
	if (ibk_mad_method(mad) == IBK_MAD_METHOD_SET) {
		memcpy(si + 6, data + 6, 5);
		si[11] = (uint8_t)((data[11] & 0xf8) |
				   (si[11] & ~data[11] & 0x04));
		memcpy(si + 18, data + 18, 2);
	}
	memcpy(data, si, IBK_SMP_DATA_LEN);
	return IBK_MAD_STATUS_OK;
}

/* SubnGet/SubnSet(LinearForwardingTable), 64 ports per block; the MAD
 * status. */
static int answer_lft(struct fab_node *n, uint8_t *mad)
{
	uint32_t block = ibk_mad_attr_mod(mad);
	uint8_t *data = ibk_smp_data_mut(mad);

	if (n->type != FAB_SWITCH)
		return IBK_MAD_STATUS_UNSUP_METHOD_ATTR;
	if (block >= FAB_LFT_CAP / LFT_BLOCK) {
		memset(data, 0, IBK_SMP_DATA_LEN);
		return IBK_MAD_STATUS_INVALID_FIELD;
	}
	if (ibk_mad_method(mad) == IBK_MAD_METHOD_SET)
		memcpy(n->lft + block * LFT_BLOCK, data, LFT_BLOCK);
	memcpy(data, n->lft + block * LFT_BLOCK, LFT_BLOCK);
	return IBK_MAD_STATUS_OK;
}

/* The attributes ibk_sma_answer_table() leaves to the caller; Sets of
 * read-only ones and unknown attributes are 0x000c. */
static int answer_other(struct fabric *f, unsigned node, uint8_t in_port,
			uint8_t *mad, enum ibk_mkey_verdict v)
{
	struct fab_node *n = &f->node[node];
	bool get = ibk_mad_method(mad) == IBK_MAD_METHOD_GET;
	uint8_t *data = ibk_smp_data_mut(mad);

	switch (ibk_mad_attr_id(mad)) {
	case IBK_SMP_ATTR_NODE_INFO:
		if (!get)
			break;
		fab_get_nodeinfo(f, node, in_port, data);
		return IBK_MAD_STATUS_OK;
	case ATTR_NODE_DESC:
		if (!get)
			break;
		memset(data, 0, IBK_SMP_DATA_LEN);
		snprintf((char *)data, IBK_SMP_DATA_LEN, "ibkeys-fabric %s",
			 n->name);
		return IBK_MAD_STATUS_OK;
	case IBK_SMP_ATTR_PORT_INFO:
		return answer_portinfo(f, node, in_port, mad, v);
	case IBK_SMP_ATTR_SWITCH_INFO:
		return answer_switch_info(n, mad);
	case ATTR_LFT:
		return answer_lft(n, mad);
	}
	return IBK_MAD_STATUS_UNSUP_METHOD_ATTR;
}

/* The port whose tables a P_KeyTable or GUIDInfo SMP reaches: a switch
 * picks it by the P_KeyTable modifier's port field (-1 beyond its
 * ports), a CA takes the receiving port. */
static int table_port(const struct fab_node *n, uint8_t in_port,
		      const uint8_t *mad)
{
	uint8_t num;

	if (n->type == FAB_CA)
		return in_port;
	if (ibk_mad_attr_id(mad) != IBK_SMP_ATTR_PKEY_TABLE)
		return 0;
	num = ibk_pkeytable_mod_port(ibk_mad_attr_mod(mad));
	return num <= n->nports ? num : -1;
}

/* ---- routing ---- */

/* Whether @lid is @n's: its CA port's LID range (LMC), its switch LID. */
static bool node_has_lid(const struct fab_node *n, uint16_t lid)
{
	const uint8_t *pi = n->port[sma_port(n)].pi;
	uint16_t mask = (uint16_t)~((1u << (pi[PI_LMC] & 7)) - 1);
	uint16_t base = ibk_portinfo_lid(pi);

	return base != 0 && (lid & mask) == base;
}

/* The node LID @dlid reaches from @node by the switches' forwarding
 * tables, or -1 (no route, a loop, a link that is not there). */
static int route_lid(struct fabric *f, unsigned node, uint16_t dlid)
{
	struct fab_node *n = &f->node[node];
	unsigned hops;

	if (dlid == 0 || dlid >= 0xc000)
		return -1;
	for (hops = 0; hops <= IBK_SMP_MAX_HOPS; hops++) {
		uint8_t out;

		if (node_has_lid(n, dlid))
			return (int)(n - f->node);
		out = n->type == FAB_CA ? 1 : n->lft[dlid % FAB_LFT_CAP];
		if (dlid >= FAB_LFT_CAP || out < 1 || out > n->nports ||
		    !n->port[out].peer)
			return -1;
		n = n->port[out].peer;
	}
	return -1;
}

/* Walks the directed-route SMP @mad's initial path from @node out of
 * @port: fills the return path, sets the hop pointer to hop count + 1 as
 * the destination sees it. The destination node, and its receiving port
 * in *@in_port; -1 if the path leaves the fabric, passes through a CA,
 * or is no pure directed route starting at hop 0 (as ibsim, the only
 * kind this simulator takes). */
static int route_dr(struct fabric *f, unsigned node, uint8_t port,
		    uint8_t *mad, uint8_t *in_port)
{
	struct fab_node *n = &f->node[node];
	uint8_t hops = ibk_smp_hop_cnt(mad), i;
	const uint8_t *path = mad + IBK_SMP_INITIAL_PATH;
	uint8_t *ret = mad + IBK_SMP_RETURN_PATH;

	if (ibk_smp_hop_ptr(mad) != 0 || hops > IBK_SMP_MAX_HOPS ||
	    ibk_smp_dr_slid(mad) != 0xffff || ibk_smp_dr_dlid(mad) != 0xffff)
		return -1;
	*in_port = port;
	for (i = 1; i <= hops; i++) {
		uint8_t out = path[i];

		if ((n->type == FAB_CA && (i > 1 || out != port)) ||
		    out < 1 || out > n->nports || !n->port[out].peer)
			return -1;
		*in_port = n->port[out].peer_port;
		ret[i] = *in_port;
		n = n->port[out].peer;
	}
	ibk_smp_set_hop_ptr(mad, (uint8_t)(hops + 1));
	return (int)(n - f->node);
}

/* ---- the SMA ---- */

/* The LID-routed SubnTrap(Notice) @notice from @node to its MasterSMLID,
 * into *@out for the SM's client there; false if the port may not send
 * it now (not ACTIVE, no SM, too soon after the last, no route). */
static bool build_trap(struct fabric *f, unsigned node, const uint8_t *notice,
		       uint64_t now_ns, struct fab_out *out)
{
	struct fab_node *n = &f->node[node];
	struct fab_port *p = &n->port[sma_port(n)];
	uint16_t sm = ibk_portinfo_master_sm_lid(p->pi);
	uint8_t mad[IBK_MAD_LEN] = { 0 };
	int to;

	if (port_state(p) != IBK_PORT_ACTIVE || sm == 0 ||
	    !ibk_trap_rate_ok(now_ns, p->last_trap_ns, p->trap_sent,
			      ibk_portinfo_subnet_timeout(p->pi)))
		return false;
	to = route_lid(f, node, sm);
	if (to < 0)
		return false;
	p->last_trap_ns = now_ns;
	p->trap_sent = true;
	ibk_mad_set_base_version(mad, IBK_MAD_BASE_VERSION);
	ibk_mad_set_mgmt_class(mad, IBK_MGMT_CLASS_SUBN_LID);
	ibk_mad_set_class_version(mad, IBK_SMP_CLASS_VERSION);
	ibk_mad_set_method(mad, IBK_MAD_METHOD_TRAP);
	ibk_mad_set_tid(mad, (uint64_t)(node + 1) << 16 | ++n->trap_tid);
	ibk_mad_set_attr_id(mad, IBK_SMP_ATTR_NOTICE);
	memcpy(ibk_smp_data_mut(mad), notice, IBK_NOTICE_LEN);
	out->to = FAB_TO_SM;
	out->node = (unsigned)to;
	msg_build(out->msg, sm, ibk_portinfo_lid(p->pi), 0, mad);
	return true;
}

/* What the SMA does with an SMP. */
enum sma_result {
	SMA_NONE,	/* no reply: malformed, TrapRepress, M_Key violation */
	SMA_REPLY,	/* the SMP now holds the reply */
	SMA_TO_SM,	/* SMInfo at a port with IsSM: the SM answers it */
};

/* Whether @n's port carries an SM (CapabilityMask IsSM, SET_ISSM). */
static bool node_is_sm(const struct fab_node *n)
{
	return (ibk_portinfo_cap_mask(n->port[sma_port(n)].pi) & IS_SM) != 0;
}

/*
 * The SMA of @node, the SMP @mad received on @in_port from LID @slid, in
 * the order of examples/README.md's walk; SMInfo, past the M_Key check,
 * goes to the SM where the port has one, as the Linux SMAs pass it on
 * (qib process_subn()), else is unsupported. A trap 256 to send goes to
 * *@trap, counted in *@ntrap.
 */
static enum sma_result sma(struct fabric *f, unsigned node, uint8_t in_port,
			   uint8_t *mad, uint16_t slid, uint64_t now_ns,
			   struct fab_out *trap, unsigned *ntrap)
{
	struct fab_node *n = &f->node[node];
	struct fab_port *sp = &n->port[sma_port(n)];
	enum ibk_mkey_verdict v = IBK_MKEY_PROCESS;
	int st = ibk_smp_request_status(mad, IBK_MAD_LEN), tp;

	if (st < 0)
		return SMA_NONE;
	if (st == 0) {
		v = ibk_sma_mkey_check(&sp->tables, &n->mkey,
				       ibk_mad_method(mad), ibk_smp_mkey(mad),
				       now_ns);
		if (v == IBK_MKEY_VIOLATION) {
			struct ibk_trap_256 t;
			uint8_t notice[IBK_NOTICE_LEN];

			ibk_trap_256_from_smp(mad, slid, &t);
			ibk_notice_build_256(n->type == FAB_CA ?
					     IBK_NOTICE_PRODUCER_CA :
					     IBK_NOTICE_PRODUCER_SWITCH,
					     ibk_portinfo_lid(sp->pi), &t,
					     notice);
			if (build_trap(f, node, notice, now_ns, trap))
				(*ntrap)++;
			return SMA_NONE;
		}
		if (ibk_mad_method(mad) == IBK_MAD_METHOD_TRAP_REPRESS)
			return SMA_NONE;
		if (ibk_mad_attr_id(mad) == ATTR_SM_INFO && node_is_sm(n))
			return SMA_TO_SM;
		tp = table_port(n, in_port, mad);
		st = tp < 0 ? IBK_MAD_STATUS_INVALID_FIELD :
		     ibk_sma_answer_table(&n->port[tp].tables, mad,
					  IBK_MAD_LEN,
					  ibk_portinfo_gid_prefix(n->port[tp].pi));
		if (st == IBK_MAD_STATUS_UNSUP_METHOD_ATTR)
			st = answer_other(f, node, in_port, mad, v);
	}
	return ibk_smp_make_reply(mad, (uint16_t)st) == IBK_OK ? SMA_REPLY :
								SMA_NONE;
}

/* ---- a client's request ---- */

/* @slot into bits 48-63 of @mad's TID, where a response finds its way
 * back to the requester (ibsim's convention). */
static void to_slot_in_tid(uint8_t *mad, unsigned slot)
{
	ibk_mad_set_tid(mad, (ibk_mad_tid(mad) & 0xffffffffffffull) |
			     (uint64_t)slot << 48);
}

/* A response, SMP or GMP: to the client in its TID's bits 48-63. */
static unsigned respond(const uint8_t *msg, struct fab_out *out)
{
	memcpy(out->msg, msg, FAB_MSG_LEN);
	out->to = FAB_TO_SLOT;
	out->slot = (unsigned)(ibk_mad_tid(msg + FAB_MSG_MAD) >> 48);
	return 1;
}

/* An SMP from the client at @node in @slot: walked or routed to its
 * node, the SMA's reply (or status ETIMEDOUT for none) back to the
 * sender, or the request on to the SM there; and the trap it raised.
 * The number of messages in @out. */
static unsigned request_smp(struct fabric *f, unsigned node, unsigned slot,
			    const uint8_t *msg, uint64_t now_ns,
			    struct fab_out *out)
{
	enum sma_result res;
	uint8_t *reply = out[0].msg, *mad = reply + FAB_MSG_MAD, in_port;
	uint8_t port = sma_port(&f->node[node]);
	uint16_t slid = msg_lid(msg + 4);
	unsigned ntrap = 0;
	int to;

	memcpy(reply, msg, FAB_MSG_LEN);
	out[0].to = FAB_TO_SENDER;
	if (slid == 0) {
		slid = ibk_portinfo_lid(f->node[node].port[port].pi);
		msg_set_lid(reply + 4, slid);
	}
	if (ibk_smp_is_dr(mad)) {
		to = route_dr(f, node, port, mad, &in_port);
	} else {
		to = route_lid(f, node, msg_lid(msg));
		in_port = to < 0 ? 0 : sma_port(&f->node[to]);
	}
	res = to < 0 ? SMA_NONE : sma(f, (unsigned)to, in_port, mad, slid,
				      now_ns, &out[1], &ntrap);
	if (res == SMA_TO_SM) {
		to_slot_in_tid(mad, slot);
		out[0].to = FAB_TO_SM;
		out[0].node = (unsigned)to;
	} else if (res == SMA_REPLY) {
		if (ibk_smp_is_dr(mad))
			ibk_smp_set_hop_ptr(mad, 0);	/* back at hop 0 */
		fab_bounce(reply, 0);
	} else if (ibk_mad_method(msg + FAB_MSG_MAD) ==
		   IBK_MAD_METHOD_TRAP_REPRESS) {
		memmove(&out[0], &out[1], sizeof(out[0]) * ntrap);
		return ntrap;		/* never answered, whatever it met */
	} else {
		memcpy(reply, msg, FAB_MSG_LEN);
		fab_bounce(reply, FAB_ETIMEDOUT);
	}
	return 1 + ntrap;
}

/* A GMP request from the client at @node in @slot: to the SM's client at
 * the node its DLID reaches, the slot in its TID; unroutable, back with
 * status ETIMEDOUT. */
static unsigned request_gmp(struct fabric *f, unsigned node, unsigned slot,
			    const uint8_t *msg, struct fab_out *out)
{
	uint8_t *mad = out->msg + FAB_MSG_MAD;
	int to;

	memcpy(out->msg, msg, FAB_MSG_LEN);
	if (msg_lid(msg + 4) == 0)
		msg_set_lid(out->msg + 4, ibk_portinfo_lid(
			f->node[node].port[sma_port(&f->node[node])].pi));
	to = route_lid(f, node, msg_lid(msg));
	if (to < 0) {
		out->to = FAB_TO_SENDER;
		fab_bounce(out->msg, FAB_ETIMEDOUT);
		return 1;
	}
	to_slot_in_tid(mad, slot);
	out->to = FAB_TO_SM;
	out->node = (unsigned)to;
	return 1;
}

/*
 * One data message @msg (FAB_MSG_LEN bytes) from the client in @slot,
 * attached at @node, at @now_ns: what goes where, into @out. Returns the
 * number of messages (0: dropped, a MAD no port takes). Responses go
 * back to the requester by the slot in their TID.
 */
unsigned fab_request(struct fabric *f, unsigned node, unsigned slot,
		     const uint8_t *msg, uint64_t now_ns,
		     struct fab_out out[FAB_MAX_OUT])
{
	const uint8_t *mad = msg + FAB_MSG_MAD;
	uint8_t mclass = ibk_mad_mgmt_class(mad), method = ibk_mad_method(mad);

	if (ibk_mad_base_version(mad) != IBK_MAD_BASE_VERSION)
		return 0;
	if (method & IBK_MAD_METHOD_RESP)
		return respond(msg, out);
	if (mclass != IBK_MGMT_CLASS_SUBN_LID &&
	    mclass != IBK_MGMT_CLASS_SUBN_DR)
		return request_gmp(f, node, slot, msg, out);
	if (method == IBK_MAD_METHOD_TRAP)
		return 0;	/* the SM's business; no client sends one */
	return request_smp(f, node, slot, msg, now_ns, out);
}
