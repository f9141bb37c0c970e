/* SPDX-License-Identifier: MIT */
/*
 * server.c - the example fabric simulator's process: speaks the protocol
 * of Debian's libumad2sim (package libumad2sim0), so that stock OpenSM and
 * infiniband-diags, run with LD_PRELOAD=libumad2sim.so, are its clients.
 *
 *   ibkeys-fabric [--record FILE] TOPOLOGY
 *
 * Local datagram sockets in the abstract namespace, named after
 * $IBSIM_SOCKNAME (default "sim"): "sim:ctl" takes the control messages,
 * "sim:out0" to "sim:out9" carry each client slot's MADs. --record writes
 * every SMP a client sends, every SMP the fabric sends a client (replies,
 * traps) and each SET_ISSM, for tests/test_fabric_replay.c: one line each,
 * ">", "<" or "S", the time (ns, monotonic), the node and slot of the
 * client, the message in hex (SET_ISSM: its data). SIGUSR1 prints
 * each CA port's cached P_Key and GID tables, as the library holds them,
 * on standard output: "NODE pkey INDEX 0xPKEY" and "NODE gid INDEX
 * PREFIX GUID" lines, then "end".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fabric.h"

#define MAX_CLIENTS	10
#define CTL_MAGIC	0xdeadbeefu
#define CTL_DATA	64

/* Control message types (ibsim's include/ibsim.h SIM_CTL_*). */
enum ctl_type {
	CTL_ERROR, CTL_CONNECT, CTL_DISCONNECT, CTL_GET_PORT, CTL_GET_VENDOR,
	CTL_GET_GID, CTL_GET_GUID, CTL_GET_NODEINFO, CTL_GET_PORTINFO,
	CTL_SET_ISSM, CTL_GET_PKEYS,
};

/* The control message, host byte order, as both ends lay it out. */
struct ctl_msg {
	uint32_t magic, clientid, type, len;
	uint8_t data[CTL_DATA];
};

/* CONNECT's data: the client's pid in, its slot out; the node asked
 * for in, the node attached out. */
struct ctl_connect {
	uint32_t id, qp, issm;
	char nodeid[32];
};

struct client {
	bool used, issm;
	unsigned node;
	uint32_t pid;
};

static struct fabric fab;
static struct client clients[MAX_CLIENTS];
static int ctl_fd, out_fd[MAX_CLIENTS];
static const char *base;
static FILE *record;
static volatile sig_atomic_t dump_asked;

/* The abstract socket address "<base>:<suffix>" into *@a; its length,
 * which counts the name's terminating NUL as libumad2sim's does. */
static socklen_t sock_name(struct sockaddr_un *a, const char *suffix)
{
	int n;

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "%s:%s", base,
		     suffix);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 2 + n);
}

/* A datagram socket bound to "<base>:<suffix>"; exits on failure. */
static int bind_socket(const char *suffix)
{
	struct sockaddr_un a;
	socklen_t len = sock_name(&a, suffix);
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, len) < 0) {
		fprintf(stderr, "ibkeys-fabric: bind %s:%s: %s\n", base,
			suffix, strerror(errno));
		exit(1);
	}
	return fd;
}

/* Nanoseconds of the monotonic clock: the lease's clock. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One line of the record: @tag, time, the node and @slot of the client,
 * @len bytes of @msg in hex. */
static void record_msg(char tag, uint64_t t, unsigned slot,
		       const uint8_t *msg, size_t len)
{
	unsigned i;

	if (!record)
		return;
	fprintf(record, "%c %llu %s %u ", tag, (unsigned long long)t,
		fab.node[clients[slot].node].name, slot);
	for (i = 0; i < len; i++)
		fprintf(record, "%02x", msg[i]);
	fputc('\n', record);
	fflush(record);
}

/* The cached tables of @n's port 1, as the dump prints them. */
static void dump_port(const struct fab_node *n)
{
	const struct ibk_port *t = &n->port[1].tables;
	ibk_pkey_t keys[IBK_PKEY_BLOCK_ENTRIES];
	struct ibk_gid_entry e;
	unsigned b, i;

	for (b = 0; b < FAB_PKEY_CAP / IBK_PKEY_BLOCK_ENTRIES; b++) {
		ibk_pkey_table_read_block(&t->pkeys, b, keys);
		for (i = 0; i < IBK_PKEY_BLOCK_ENTRIES; i++)
			if (keys[i])
				printf("%s pkey %u 0x%04x\n", n->name,
				       b * IBK_PKEY_BLOCK_ENTRIES + i, keys[i]);
	}
	for (i = 0; i < FAB_GUID_CAP; i++)
		if (ibk_gid_table_get(&t->gids, i, &e) == IBK_OK)
			printf("%s gid %u 0x%016llx 0x%016llx\n", n->name, i,
			       (unsigned long long)ibk_gid_subnet_prefix(&e.gid),
			       (unsigned long long)ibk_gid_guid(&e.gid));
}

/* SIGUSR1's dump: every CA port's cached tables, then "end". */
static void dump_tables(void)
{
	unsigned i;

	for (i = 0; i < fab.nnodes; i++)
		if (fab.node[i].type == FAB_CA)
			dump_port(&fab.node[i]);
	printf("end\n");
	fflush(stdout);
}

/* SIGUSR1: the next turn of the loop dumps the tables. */
static void on_usr1(int sig)
{
	(void)sig;
	dump_asked = 1;
}

/* Whether the message @msg carries an SMP, LID-routed or directed. */
static bool is_smp(const uint8_t *msg)
{
	return (ibk_mad_mgmt_class(msg + FAB_MSG_MAD) & 0x7f) ==
	       IBK_MGMT_CLASS_SUBN_LID;
}

/* ---- control ---- */

/* CONNECT: a free slot for the client, its node (SIM_HOST, else the
 * default), its out socket connected to the client's "in<pid>". */
static bool ctl_connect(struct ctl_msg *m)
{
	struct ctl_connect c;
	struct sockaddr_un a;
	char suffix[24];
	unsigned slot;
	int node;

	memcpy(&c, m->data, sizeof(c));
	c.nodeid[sizeof(c.nodeid) - 1] = 0;
	node = c.nodeid[0] ? fab_find_node(&fab, c.nodeid) :
			     fab_default_node(&fab);
	for (slot = 0; slot < MAX_CLIENTS && clients[slot].used; slot++)
		;
	if (node < 0 || slot == MAX_CLIENTS)
		return false;
	snprintf(suffix, sizeof(suffix), "in%u", c.id);
	if (connect(out_fd[slot], (struct sockaddr *)&a,
		    sock_name(&a, suffix)) < 0)
		return false;
	clients[slot] = (struct client){ true, c.issm != 0, (unsigned)node,
					 c.id };
	if (c.issm) {
		fab_set_issm(&fab, (unsigned)node, true);
		record_msg('S', now_ns(), slot, (const uint8_t *)&c.issm,
			   sizeof(c.issm));
	}
	c.id = slot;
	snprintf(c.nodeid, sizeof(c.nodeid), "%s", fab.node[node].name);
	memcpy(m->data, &c, sizeof(c));
	return true;
}

/* DISCONNECT: the slot freed, its socket unconnected. */
static bool ctl_disconnect(struct client *c, unsigned slot)
{
	struct sockaddr a = { .sa_family = AF_UNSPEC };

	c->used = false;
	connect(out_fd[slot], &a, sizeof(a));
	return true;
}

/* GET_VENDOR: ibsim's struct sim_vendor, host order. */
static bool ctl_vendor(struct ctl_msg *m)
{
	struct { uint32_t vendor, part, hw; uint64_t fw; } v =
		{ 0x0002c9, 0x1b, 1, 0x100 };

	memcpy(m->data, &v, sizeof(v));
	return true;
}

/* The rest of the queries about the client's node and port. */
static bool ctl_query(struct ctl_msg *m, const struct client *c)
{
	uint8_t port = fab_client_port(&fab, c->node), pi[IBK_PORTINFO_LEN];
	struct ibk_port *t = &fab.node[c->node].port[port].tables;
	ibk_pkey_t keys[IBK_PKEY_BLOCK_ENTRIES];
	uint16_t lid;

	fab_get_portinfo(&fab, c->node, port, pi);
	memset(m->data, 0, CTL_DATA);
	switch (m->type) {
	case CTL_GET_PORT:
		lid = ibk_portinfo_lid(pi);
		memcpy(m->data, &lid, 2);
		m->data[2] = pi[32] & 0x0f;
		return true;
	case CTL_GET_GID:
		memcpy(m->data, pi + 8, 8);
		fab_store_be64(m->data + 8, fab.node[c->node].guid + port);
		return true;
	case CTL_GET_GUID:
		fab_store_be64(m->data, fab.node[c->node].guid);
		return true;
	case CTL_GET_NODEINFO:
		fab_get_nodeinfo(&fab, c->node, port, m->data);
		return true;
	case CTL_GET_PORTINFO:
		memcpy(m->data, pi, sizeof(pi));
		return true;
	case CTL_GET_PKEYS:
		ibk_pkey_table_read_block(&t->pkeys, 0, keys);
		ibk_pkey_block_encode(keys, m->data);
		return true;
	}
	return false;
}

/* Answers one control message; type ERROR for a bad one. */
static void ctl_answer(struct ctl_msg *m)
{
	struct client *c = m->clientid < MAX_CLIENTS &&
			   clients[m->clientid].used ?
			   &clients[m->clientid] : NULL;
	bool ok;

	if (m->type == CTL_CONNECT)
		ok = ctl_connect(m);
	else if (m->type == CTL_GET_VENDOR)
		ok = ctl_vendor(m);
	else if (!c)
		ok = false;			/* unknown client */
	else if (m->type == CTL_DISCONNECT)
		ok = ctl_disconnect(c, m->clientid);
	else if (m->type == CTL_SET_ISSM) {
		int issm;

		memcpy(&issm, m->data, sizeof(issm));
		c->issm = issm != 0;
		fab_set_issm(&fab, c->node, c->issm);
		record_msg('S', now_ns(), m->clientid, m->data, sizeof(issm));
		ok = true;
	} else
		ok = ctl_query(m, c);
	if (!ok)
		m->type = CTL_ERROR;
}

/* Reads one control message and sends its answer back to its sender;
 * a short one or a wrong magic is dropped. */
static void ctl_receive(void)
{
	struct ctl_msg m;
	struct sockaddr_un from;
	socklen_t flen = sizeof(from);
	ssize_t n = recvfrom(ctl_fd, &m, sizeof(m), 0,
			     (struct sockaddr *)&from, &flen);

	if (n != (ssize_t)sizeof(m) || m.magic != CTL_MAGIC)
		return;
	ctl_answer(&m);
	sendto(ctl_fd, &m, sizeof(m), 0, (struct sockaddr *)&from, flen);
}

/* ---- data ---- */

/* The slot of the SM's client at @node, or -1. */
static int sm_slot(unsigned node)
{
	unsigned i;

	for (i = 0; i < MAX_CLIENTS; i++)
		if (clients[i].used && clients[i].issm &&
		    clients[i].node == node)
			return (int)i;
	return -1;
}

/* Sends @o, one message of the core, to its client; a request for a
 * client that is not there goes back to @slot with ETIMEDOUT (@req the
 * original). */
static void deliver(struct fab_out *o, unsigned slot, const uint8_t *req,
		    uint64_t t)
{
	int to = o->to == FAB_TO_SENDER ? (int)slot :
		 o->to == FAB_TO_SM ? sm_slot(o->node) : (int)o->slot;

	if (to < 0 || to >= MAX_CLIENTS || !clients[to].used) {
		if (o->to != FAB_TO_SM || !req)
			return;			/* a reply nobody waits for */
		memcpy(o->msg, req, FAB_MSG_LEN);
		fab_bounce(o->msg, FAB_ETIMEDOUT);
		to = (int)slot;
	}
	if (is_smp(o->msg))
		record_msg('<', t, (unsigned)to, o->msg, FAB_MSG_LEN);
	send(out_fd[to], o->msg, FAB_MSG_LEN, 0);
}

/* Reads one data message of the client in @slot and delivers what the
 * fabric makes of it; a short message or an unknown client's is
 * dropped. */
static void data_receive(unsigned slot)
{
	uint8_t msg[FAB_MSG_LEN];
	struct fab_out out[FAB_MAX_OUT];
	ssize_t n = recv(out_fd[slot], msg, sizeof(msg), 0);
	uint64_t t = now_ns();
	unsigned i, cnt;

	if (n != FAB_MSG_LEN || !clients[slot].used)
		return;
	if (is_smp(msg))
		record_msg('>', t, slot, msg, FAB_MSG_LEN);
	cnt = fab_request(&fab, clients[slot].node, slot, msg, t, out);
	for (i = 0; i < cnt; i++)
		deliver(&out[i], slot, i == 0 ? msg : NULL, t);
}

/* Serves the clients until a signal ends the process. */
static void serve(void)
{
	struct pollfd p[MAX_CLIENTS + 1];
	unsigned i;

	p[0] = (struct pollfd){ .fd = ctl_fd, .events = POLLIN };
	for (i = 0; i < MAX_CLIENTS; i++)
		p[i + 1] = (struct pollfd){ .fd = out_fd[i], .events = POLLIN };
	for (;;) {
		if (dump_asked) {
			dump_asked = 0;
			dump_tables();
		}
		if (poll(p, MAX_CLIENTS + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("poll");
			exit(1);
		}
		if (p[0].revents & POLLIN)
			ctl_receive();
		for (i = 0; i < MAX_CLIENTS; i++)
			if (p[i + 1].revents & POLLIN)
				data_receive(i);
	}
}

/* Parses the command line, loads the topology, binds and serves. */
int main(int argc, char **argv)
{
	char suffix[16];
	unsigned i;
	int a = 1;

	if (argc == 4 && !strcmp(argv[1], "--record")) {
		record = fopen(argv[2], "w");
		if (!record) {
			perror(argv[2]);
			return 1;
		}
		a = 3;
	}
	if (argc != a + 1) {
		fprintf(stderr, "usage: ibkeys-fabric [--record FILE] TOPOLOGY\n");
		return 2;
	}
	if (fab_load(&fab, argv[a]) < 0)
		return 1;
	base = getenv("IBSIM_SOCKNAME");
	if (!base || !*base)
		base = "sim";
	signal(SIGPIPE, SIG_IGN);
	signal(SIGUSR1, on_usr1);
	ctl_fd = bind_socket("ctl");
	for (i = 0; i < MAX_CLIENTS; i++) {
		snprintf(suffix, sizeof(suffix), "out%u", i);
		out_fd[i] = bind_socket(suffix);
	}
	fprintf(stderr, "ibkeys-fabric: %u nodes, listening on %s:ctl\n",
		fab.nnodes, base);
	serve();
}
