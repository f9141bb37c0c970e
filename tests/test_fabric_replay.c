/* SPDX-License-Identifier: MIT */
/*
 * test_fabric_replay.c TOPOLOGY CAPTURE - a recorded run of stock OpenSM
 * against examples/fabric, replayed into the same SMAs without OpenSM,
 * libumad2sim or the simulator's sockets: every SMP OpenSM and the diags
 * sent goes into fab_request() at its recorded time, and every message
 * the fabric gives back (GetResps, status-110 returns of dropped SMPs,
 * traps 256) must equal the recorded one byte for byte. A change in how
 * the library's SMA answers, counts or traps shows up here.
 *
 * The capture (tests/fabric/sweep.capture) is what
 *   IBK_FABRIC_RECORD=$PWD/tests/fabric/sweep.capture tests/fabric/run
 * records: the first simulator's life in that script (opensm -o with
 * M_Key level 2, a lease, a subnet prefix and partitions; OpenSM again in
 * sweep mode; refused Gets, traps and TrapRepresses; the lease's expiry;
 * a wrong-key Set; SMInfo to OpenSM; a heavy sweep). Lines: ">" an SMP
 * a client sent, "<" one the fabric sent a client, "S" a SET_ISSM (its
 * int, host order); then the monotonic time in ns, the client's node and
 * slot, the bytes in hex. Re-record it when the SMA's behaviour changes
 * on purpose.
 *
 * Then bad input, on a fresh fabric: what a real agent answers (IBA's
 * MAD status codes), ETIMEDOUT for what no port answers, or a drop.
 */
#include <stdlib.h>
#include <string.h>

#include "fabric.h"
#include "tap.h"

struct rec {
	char tag;
	uint64_t t;
	unsigned node, slot;
	uint8_t msg[FAB_MSG_LEN];
};

static struct fabric fab;

/* @n bytes from the hex text @hex into @out; false if it is short or not
 * hex. */
static bool unhex(const char *hex, uint8_t *out, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return false;
		out[i] = (uint8_t)v;
	}
	return true;
}

/* One capture line into *@r; false if it is malformed or names a node
 * the topology lacks. */
static bool parse(const char *line, struct rec *r)
{
	char node[32];
	unsigned long long t;
	int off, n;

	if (sscanf(line, "%c %llu %31s %u %n", &r->tag, &t, node, &r->slot,
		   &off) != 4)
		return false;
	n = fab_find_node(&fab, node);
	if (n < 0)
		return false;
	r->t = t;
	r->node = (unsigned)n;
	memset(r->msg, 0, sizeof(r->msg));
	return unhex(line + off, r->msg, r->tag == 'S' ? sizeof(int) :
					 FAB_MSG_LEN);
}

/* The capture at @path; its record count in *@n, NULL if unreadable. */
static struct rec *load(const char *path, size_t *n)
{
	static char line[2 * FAB_MSG_LEN + 128];
	struct rec *r = NULL;
	size_t cap = 0;
	FILE *in = fopen(path, "r");

	*n = 0;
	if (!in)
		return NULL;
	while (fgets(line, sizeof(line), in)) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 1024;
			r = realloc(r, cap * sizeof(*r));
			if (!r)
				break;
		}
		if (!parse(line, &r[*n])) {
			tap_diag("bad capture line %zu", *n + 1);
			free(r);
			r = NULL;
			break;
		}
		(*n)++;
	}
	fclose(in);
	return r;
}

/* Whether the message @o of the core, for the request of the client in
 * @req, goes to the client of the recorded message @r: the sender, the
 * SM at the node, or the slot the response names. */
static bool same_client(const struct fab_out *o, const struct rec *req,
			const struct rec *r)
{
	switch (o->to) {
	case FAB_TO_SENDER:
		return r->slot == req->slot;
	case FAB_TO_SM:
		return r->node == o->node;
	default:
		return r->slot == o->slot;
	}
}

/* Replays request @i of @r: true if the messages the core makes are the
 * recorded ones that follow it; *@i moves past them. */
static bool replay_one(const struct rec *r, size_t n, size_t *i,
		       unsigned *bad_shown)
{
	struct fab_out out[FAB_MAX_OUT];
	const struct rec *req = &r[*i];
	unsigned cnt = fab_request(&fab, req->node, req->slot, req->msg,
				   req->t, out);
	unsigned k = 0;
	bool ok = true;

	for ((*i)++; *i < n && r[*i].tag == '<'; (*i)++, k++)
		ok = ok && k < cnt && same_client(&out[k], req, &r[*i]) &&
		     !memcmp(out[k].msg, r[*i].msg, FAB_MSG_LEN);
	ok = ok && k == cnt;
	if (!ok && (*bad_shown)++ < TAP_MAX_DIAG)
		tap_diag("request at %llu ns (attribute 0x%04x, method 0x%02x): "
			 "%u messages, %u recorded, or different bytes",
			 (unsigned long long)req->t,
			 ibk_mad_attr_id(req->msg + FAB_MSG_MAD),
			 ibk_mad_method(req->msg + FAB_MSG_MAD), cnt, k);
	return ok;
}

/* Counts the recorded messages whose MAD has @method and, for @attr not
 * 0, that attribute. */
static size_t count(const struct rec *r, size_t n, char tag, uint8_t method,
		    uint16_t attr)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		if (r[i].tag == tag &&
		    ibk_mad_method(r[i].msg + FAB_MSG_MAD) == method &&
		    (!attr || ibk_mad_attr_id(r[i].msg + FAB_MSG_MAD) == attr))
			c++;
	return c;
}

/* A directed-route SubnGet of @attr from h1 along @path (@hops hops,
 * path[0] unused) as a client sends it, into @msg. */
static void dr_get(uint8_t *msg, uint16_t attr, const uint8_t *path,
		   uint8_t hops)
{
	uint8_t *mad = msg + FAB_MSG_MAD;

	memset(msg, 0, FAB_MSG_LEN);
	memset(msg, 0xff, 2);			/* DLID, SLID permissive */
	memset(msg + 4, 0xff, 2);
	msg[FAB_MSG_LENGTH + 6] = IBK_MAD_LEN >> 8;
	ibk_mad_set_base_version(mad, IBK_MAD_BASE_VERSION);
	ibk_mad_set_mgmt_class(mad, IBK_MGMT_CLASS_SUBN_DR);
	ibk_mad_set_class_version(mad, IBK_SMP_CLASS_VERSION);
	ibk_mad_set_method(mad, IBK_MAD_METHOD_GET);
	ibk_mad_set_tid(mad, 0x1234);
	ibk_mad_set_attr_id(mad, attr);
	ibk_smp_set_hop_cnt(mad, hops);
	ibk_smp_set_dr_slid(mad, 0xffff);
	ibk_smp_set_dr_dlid(mad, 0xffff);
	memcpy(mad + IBK_SMP_INITIAL_PATH, path, (size_t)hops + 1);
}

/* The one message the fabric gives back for @msg from h1, or 0 if it
 * gives none or more: its big-endian status word @16, and the MAD
 * status in *@mad_status. */
static int answer(uint8_t *msg, uint16_t *mad_status)
{
	struct fab_out out[FAB_MAX_OUT];
	unsigned cnt = fab_request(&fab, 1, 0, msg, 1, out);

	if (cnt != 1 || out[0].to != FAB_TO_SENDER)
		return cnt == 0 ? 0 : -1;
	*mad_status = ibk_mad_status(out[0].msg + FAB_MSG_MAD);
	return out[0].msg[19] == FAB_ETIMEDOUT ? FAB_ETIMEDOUT : 1;
}

/* Bad input gets a real agent's status, ETIMEDOUT or nothing. */
static void test_bad_input(const char *topology)
{
	static const uint8_t out_of_fabric[] = { 0, 1, 7 };
	static const uint8_t through_ca[] = { 0, 1, 2, 1 };
	static const uint8_t to_switch[] = { 0, 1 };
	uint8_t msg[FAB_MSG_LEN], *mad = msg + FAB_MSG_MAD;
	uint16_t st = 0;
	bool ok;

	fab_load(&fab, topology);
	dr_get(msg, IBK_SMP_ATTR_NODE_INFO, out_of_fabric, 2);
	ok = answer(msg, &st) == FAB_ETIMEDOUT;
	dr_get(msg, IBK_SMP_ATTR_NODE_INFO, through_ca, 3);
	ok = ok && answer(msg, &st) == FAB_ETIMEDOUT;
	dr_get(msg, IBK_SMP_ATTR_NODE_INFO, to_switch, 1);
	ibk_smp_set_dr_slid(mad, 1);
	ok = ok && answer(msg, &st) == FAB_ETIMEDOUT;
	tap_ok(ok, "a directed route out of an unlinked port, through a CA, or "
	       "not purely directed: ETIMEDOUT at once");
	dr_get(msg, IBK_SMP_ATTR_NODE_INFO, to_switch, 1);
	ibk_mad_set_class_version(mad, 2);
	ok = answer(msg, &st) == 1 && st == (IBK_SMP_DIRECTION | 0x0004);
	dr_get(msg, IBK_SMP_ATTR_NODE_INFO, to_switch, 1);
	ibk_mad_set_method(mad, 0x04);
	ok = ok && answer(msg, &st) == 1 &&
	     st == (IBK_SMP_DIRECTION | 0x0008);
	dr_get(msg, 0x0099, to_switch, 1);
	ok = ok && answer(msg, &st) == 1 && st == (IBK_SMP_DIRECTION | 0x000c);
	dr_get(msg, IBK_SMP_ATTR_PORT_INFO, to_switch, 1);
	ibk_mad_set_attr_mod(mad, 9);
	ok = ok && answer(msg, &st) == 1 && st == (IBK_SMP_DIRECTION | 0x001c);
	tap_ok(ok, "class version 2, an unknown method, an unknown attribute, "
	       "PortInfo of port 9 of an 8-port switch: GetResp with status "
	       "0x0004, 0x0008, 0x000c, 0x001c and the D bit");
	dr_get(msg, IBK_SMP_ATTR_NODE_INFO, to_switch, 1);
	ibk_mad_set_base_version(mad, 2);
	ok = answer(msg, &st) == 0;
	dr_get(msg, IBK_SMP_ATTR_NODE_INFO, to_switch, 1);
	ibk_mad_set_method(mad, IBK_MAD_METHOD_TRAP);
	ok = ok && answer(msg, &st) == 0;
	tap_ok(ok, "base version 2, a SubnTrap from a client: dropped");
}

int main(int argc, char **argv)
{
	unsigned bad_shown = 0;
	size_t n = 0, i = 0, requests = 0, same = 0;
	struct rec *r;

	if (argc != 3 || fab_load(&fab, argv[1]) < 0) {
		tap_ok(false, "usage: test_fabric_replay TOPOLOGY CAPTURE");
		return tap_done();
	}
	r = load(argv[2], &n);
	tap_ok(r && count(r, n, '>', IBK_MAD_METHOD_SET,
			  IBK_SMP_ATTR_PKEY_TABLE) > 0 &&
	       count(r, n, '<', IBK_MAD_METHOD_TRAP, IBK_SMP_ATTR_NOTICE) > 0,
	       "the capture holds OpenSM's run: %zu lines, %zu Set(P_KeyTable), "
	       "%zu Set(PortInfo), %zu traps", n,
	       r ? count(r, n, '>', IBK_MAD_METHOD_SET, IBK_SMP_ATTR_PKEY_TABLE) : 0,
	       r ? count(r, n, '>', IBK_MAD_METHOD_SET, IBK_SMP_ATTR_PORT_INFO) : 0,
	       r ? count(r, n, '<', IBK_MAD_METHOD_TRAP, 0) : 0);
	while (r && i < n) {
		if (r[i].tag == 'S') {
			int issm;

			memcpy(&issm, r[i].msg, sizeof(issm));
			fab_set_issm(&fab, r[i].node, issm != 0);
			i++;
		} else if (r[i].tag == '>') {
			requests++;
			same += replay_one(r, n, &i, &bad_shown);
		} else {
			tap_diag("a recorded message with no request before it");
			i++;
		}
	}
	tap_ok(r && requests > 0 && same == requests,
	       "replayed into the SMAs: %zu of %zu SMPs get the recorded "
	       "answers, byte for byte", same, requests);
	free(r);
	test_bad_input(argv[1]);
	return tap_done();
}
