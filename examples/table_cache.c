/* SPDX-License-Identifier: MIT */
/*
 * table_cache - a subnet manager rewriting a port's tables while workers
 * check packets against the cached copy.
 *
 * One thread plays the subnet manager (SM): at random intervals it refills
 * the P_Key or GID table as one generation, sets single entries, raises
 * PKEY_CHANGE / GID_CHANGE followed by a refill, and now and then takes the
 * port DOWN and back to ACTIVE. Two worker threads play the receive side of
 * a UD QP and of QP1: each holds a reference to its QP's P_Key table entry,
 * builds packets from it with the library's BTH/DETH setters, and runs them
 * through the port-level checks (ibk_port_rx_burst() for its UD QP,
 * ibk_port_rx() one packet at a time for QP1).
 *
 * A worker knows each packet's verdict only from how it built it and the
 * InfiniBand rules. The verdicts are compared with that only when the
 * reference is still fresh after the check, that is, when no table update
 * ran between building the packet and checking it; otherwise the packets
 * raced an update and are counted as such. When the QP's entry is empty
 * there is no reference to take: the worker then brackets the check with
 * two snapshots of the table and, if both have one generation, expects
 * every UD packet to be a P_Key violation (an empty entry matches nothing:
 * Linux rxe check_keys(), qib_ud_rcv()) and each QP1 packet what a scan of
 * the snapshot gives. At the end the program prints what happened and
 * checks that the counts agree with one another and that the port's
 * violation counters hold the violations the packets were built to be.
 * Exit 0 if they all agree, 1 if any does not.
 *
 * Usage: table_cache [--seconds N] [--packets N] [--help]
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ib_tables.h"

#define NWORKERS	2
#define PKEY_CAPACITY	32	/* one PortInfo-sized block of P_Keys */
#define GID_CAPACITY	8
#define BURST		32	/* UD packets per ibk_port_rx_burst() call */
#define GSI_PER_BURST	2	/* QP1 packets checked after each burst */
#define PKT_LEN		(IBK_BTH_LEN + IBK_DETH_LEN)
#define VERDICTS	(IBK_RX_DROP_OPCODE + 1)
#define MAX_REPORTED	5	/* mismatches printed in full per worker */

/*
 * The SM only ever installs the default partition and bases 1..SM_BASES;
 * bases from FOREIGN_BASE up are partitions this port is not a member of,
 * so a packet carrying one is a P_Key violation by construction.
 */
#define SM_BASES	63u
#define FOREIGN_BASE	0x4000u

#define PORT_GUID	UINT64_C(0x0002c90300012345)
#define GSI_QPN		1u
#define WORKER_QPN(i)	(0x100u + (i))
#define WORKER_QKEY(i)	(0x00420000u + (i))	/* free (uncontrolled) range */

/* ------------------------------------------------------------------------
 * Deterministic per-thread randomness (xorshift64*)
 * ------------------------------------------------------------------------ */

struct rng {
	uint64_t s;
};

/* Thread @index gets the same sequence on every run. */
static struct rng rng_for_thread(unsigned index)
{
	struct rng r = { UINT64_C(0x9e3779b97f4a7c15) * (index + 1) };

	return r;
}

static uint64_t rng_next(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * UINT64_C(0x2545f4914f6cdd1d);
}

/* Uniform enough in [0, n) for n far below 2^32. */
static uint32_t rng_below(struct rng *r, uint32_t n)
{
	return (uint32_t)((rng_next(r) >> 32) % n);
}

static void pause_for(time_t seconds, long microseconds)
{
	struct timespec ts = { seconds, microseconds * 1000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* ------------------------------------------------------------------------
 * What the threads share: the port, its storage, and the stop flag
 * ------------------------------------------------------------------------ */

struct fabric {
	struct ibk_port port;
	struct ibk_pkey_cell pkey_cells[IBK_PKEY_CELLS(PKEY_CAPACITY)];
	struct ibk_hash_slot pkey_slots[IBK_HASH_SLOTS(PKEY_CAPACITY)];
	struct ibk_gid_cell gid_cells[IBK_GID_CELLS(GID_CAPACITY)];
	struct ibk_hash_slot gid_slots[IBK_HASH_SLOTS(GID_CAPACITY)];
	atomic_bool stop;
	atomic_uint first_rounds;	/* workers done with their first round */
};

/* GID[0] is the port's own GID, built from its GUID; the SM never moves it. */
static struct ibk_gid port_gid(void)
{
	return ibk_gid_make(IBK_GID_DEFAULT_PREFIX, PORT_GUID);
}

/* ------------------------------------------------------------------------
 * The subnet manager
 * ------------------------------------------------------------------------ */

struct sm_stats {
	uint64_t pkey_refills;
	uint64_t pkey_sets;
	uint64_t gid_refills;
	uint64_t gid_sets;
	uint64_t pkey_change_events;
	uint64_t gid_change_events;
	uint64_t port_flips;		/* PORT_ERR then PORT_ACTIVE */
};

struct sm {
	struct fabric *f;
	struct rng rng;
	struct sm_stats stats;
	int failures;			/* library calls that did not return 0 */
};

/*
 * Write sections the SM ran on each table: every refill, set and event
 * that concerns it (TABLES_API: +2 generations each). A port flip is two
 * events on both tables; its refills are counted as refills.
 */
static uint64_t pkey_publishes(const struct sm_stats *s)
{
	return s->pkey_refills + s->pkey_sets + s->pkey_change_events +
	       2 * s->port_flips;
}

static uint64_t gid_publishes(const struct sm_stats *s)
{
	return s->gid_refills + s->gid_sets + s->gid_change_events +
	       2 * s->port_flips;
}

static void sm_expect_ok(struct sm *sm, int rc, const char *what)
{
	if (rc == IBK_OK)
		return;
	fprintf(stderr, "table_cache: SM: %s failed: %s\n", what,
		ibk_strerror(rc));
	sm->failures++;
}

/* A table slot as the SM lays it out: mostly members, some empty. */
static ibk_pkey_t sm_random_pkey(struct rng *r)
{
	switch (rng_below(r, 8)) {
	case 0:
		return IBK_PKEY_INVALID;
	case 1:
		return IBK_PKEY_DEFAULT_LIMITED;
	default:
		return ibk_pkey_make((uint16_t)(1 + rng_below(r, SM_BASES)),
				     rng_below(r, 2) != 0);
	}
}

/* An alias GID of this port under one of two subnet prefixes, or empty. */
static struct ibk_gid sm_random_gid(struct rng *r)
{
	static const uint64_t prefixes[2] = {
		IBK_GID_DEFAULT_PREFIX, UINT64_C(0xfec0000000000000)
	};
	struct ibk_gid empty = { { 0 } };

	if (rng_below(r, 8) == 0)
		return empty;
	return ibk_gid_make(prefixes[rng_below(r, 2)],
			    PORT_GUID + 1 + rng_below(r, 16));
}

/*
 * Bulk refill, as after re-reading the whole table from the device: a new
 * table of between half and all of capacity entries, published as one
 * generation. Index 0 keeps the default partition, as SMs lay tables out.
 * The ticket is taken before the "device read"; the SM raises its events
 * from this same thread, so none can come in between and the refill must
 * succeed.
 */
static void sm_refill_pkeys(struct sm *sm)
{
	ibk_pkey_t pkeys[PKEY_CAPACITY];
	uint32_t ticket = ibk_pkey_table_refill_ticket(&sm->f->port.pkeys);
	uint32_t n = PKEY_CAPACITY / 2 + rng_below(&sm->rng, PKEY_CAPACITY / 2 + 1);
	uint32_t i;

	pkeys[0] = IBK_PKEY_DEFAULT;
	for (i = 1; i < n; i++)
		pkeys[i] = sm_random_pkey(&sm->rng);
	sm_expect_ok(sm, ibk_pkey_table_refill(&sm->f->port.pkeys, pkeys, n,
					       ticket),
		     "P_Key refill");
	sm->stats.pkey_refills++;
}

static void sm_set_pkey(struct sm *sm)
{
	uint32_t index = 1 + rng_below(&sm->rng, PKEY_CAPACITY - 1);

	sm_expect_ok(sm, ibk_pkey_table_set(&sm->f->port.pkeys, index,
					    sm_random_pkey(&sm->rng)),
		     "P_Key set");
	sm->stats.pkey_sets++;
}

static void sm_refill_gids(struct sm *sm)
{
	struct ibk_gid_entry gids[GID_CAPACITY];
	uint32_t ticket = ibk_gid_table_refill_ticket(&sm->f->port.gids);
	uint32_t n = GID_CAPACITY / 2 + rng_below(&sm->rng, GID_CAPACITY / 2 + 1);
	uint32_t i;

	gids[0].gid = port_gid();
	gids[0].type = IBK_GID_TYPE_IB;
	for (i = 1; i < n; i++) {
		gids[i].gid = sm_random_gid(&sm->rng);
		gids[i].type = IBK_GID_TYPE_IB;
	}
	sm_expect_ok(sm, ibk_gid_table_refill(&sm->f->port.gids, gids, n,
					      ticket),
		     "GID refill");
	sm->stats.gid_refills++;
}

static void sm_set_gid(struct sm *sm)
{
	uint32_t index = 1 + rng_below(&sm->rng, GID_CAPACITY - 1);
	struct ibk_gid gid = sm_random_gid(&sm->rng);

	sm_expect_ok(sm, ibk_gid_table_set(&sm->f->port.gids, index, &gid,
					   IBK_GID_TYPE_IB),
		     "GID set");
	sm->stats.gid_sets++;
}

/*
 * What a verbs consumer does on a change event: tell the cache first, so
 * references go stale at once, then re-query (here: a short pause) and
 * refill.
 */
static void sm_pkey_change(struct sm *sm)
{
	sm_expect_ok(sm, ibk_port_event(&sm->f->port, IBK_EVENT_PKEY_CHANGE),
		     "PKEY_CHANGE event");
	sm->stats.pkey_change_events++;
	pause_for(0, 20);
	sm_refill_pkeys(sm);
}

static void sm_gid_change(struct sm *sm)
{
	sm_expect_ok(sm, ibk_port_event(&sm->f->port, IBK_EVENT_GID_CHANGE),
		     "GID_CHANGE event");
	sm->stats.gid_change_events++;
	pause_for(0, 20);
	sm_refill_gids(sm);
}

/* The link drops and comes back: DOWN, then ACTIVE with both tables re-read. */
static void sm_port_flip(struct sm *sm)
{
	sm_expect_ok(sm, ibk_port_event(&sm->f->port, IBK_EVENT_PORT_ERR),
		     "PORT_ERR event");
	pause_for(0, 200);
	sm_expect_ok(sm, ibk_port_event(&sm->f->port, IBK_EVENT_PORT_ACTIVE),
		     "PORT_ACTIVE event");
	sm->stats.port_flips++;
	sm_refill_pkeys(sm);
	sm_refill_gids(sm);
}

/* One change, chosen with these weights (out of 100). */
static void sm_change_something(struct sm *sm)
{
	uint32_t pick = rng_below(&sm->rng, 100);

	if (pick < 30)
		sm_refill_pkeys(sm);
	else if (pick < 60)
		sm_set_pkey(sm);
	else if (pick < 70)
		sm_refill_gids(sm);
	else if (pick < 80)
		sm_set_gid(sm);
	else if (pick < 90)
		sm_pkey_change(sm);
	else if (pick < 95)
		sm_gid_change(sm);
	else
		sm_port_flip(sm);
}

static void *sm_thread(void *arg)
{
	struct sm *sm = (struct sm *)arg;

	/* the first round of each worker runs on the table fabric_init()
	 * left: one with its entry empty, so that case is always verified */
	while (atomic_load(&sm->f->first_rounds) < NWORKERS &&
	       !atomic_load_explicit(&sm->f->stop, memory_order_relaxed))
		pause_for(0, 20);
	while (!atomic_load_explicit(&sm->f->stop, memory_order_relaxed)) {
		pause_for(0, 50 + (long)rng_below(&sm->rng, 500));
		sm_change_something(sm);
	}
	return NULL;
}

/* ------------------------------------------------------------------------
 * The workers
 * ------------------------------------------------------------------------ */

/* How a UD packet is built; each kind fixes its verdict. */
enum ud_kind {
	UD_MEMBER,		/* the QP's partition, full member: accept */
	UD_LIMITED,		/* the QP's partition, limited member */
	UD_OTHER_PARTITION,	/* a partition the port is not in: drop-pkey */
	UD_WRONG_QKEY,		/* right partition, wrong Q_Key: drop-qkey */
	UD_KINDS
};

/* How a QP1 packet is built. */
enum gsi_kind {
	GSI_MEMBER,		/* a partition in the table, GSI Q_Key: accept */
	GSI_OTHER_PARTITION,	/* drop-pkey */
	GSI_WRONG_QKEY,		/* a UD QP's Q_Key sent to QP1: drop-qkey */
	GSI_KINDS
};

struct worker_stats {
	uint64_t checked;
	uint64_t accepted;		/* as the checks reported it */
	uint64_t verdicts[VERDICTS];	/* as the verdicts said it */
	uint64_t verified;		/* verdict compared with construction */
	uint64_t verified_empty;	/* of which on an empty P_Key entry */
	uint64_t pkey_built;		/* verified, built as P_Key violations */
	uint64_t qkey_built;		/* verified, built as Q_Key violations */
	uint64_t pkey_unverified;	/* not verified, dropped on the P_Key */
	uint64_t qkey_unverified;	/* not verified, dropped on the Q_Key */
	uint64_t raced;			/* a table update ran during the check */
	uint64_t no_ref;		/* built with no entry to refer to */
	uint64_t mismatches;		/* verified, and not what was built */
	uint64_t pkey_stale;		/* P_Key references caught stale */
	uint64_t gid_stale;
	uint64_t false_stale;		/* stale, yet the generation had not moved */
	uint64_t wrong_port_gid;	/* GID[0] read back as another GID */
};

struct worker {
	struct fabric *f;
	unsigned index;
	struct rng rng;
	uint64_t packet_limit;		/* 0: run until told to stop */

	struct ibk_qp_keys ud_qp;	/* this worker's UD QP */
	struct ibk_qp_keys gsi_qp;	/* the port's QP1 */
	struct ibk_pkey_ref pkey_ref;	/* the UD QP's P_Key table entry */
	bool have_pkey_ref;
	int pkey_ref_rc;		/* why there is none: IBK_ENOENT, ... */
	ibk_pkey_t snap[PKEY_CAPACITY];	/* the table while the entry is empty */
	uint32_t snap_generation;
	struct ibk_gid_ref gid_ref;	/* GID[0]: the source GID of replies */
	bool have_gid_ref;

	uint8_t pkts[BURST][PKT_LEN];
	const void *hdrs[BURST];
	uint8_t expect[BURST];
	uint8_t verdicts[BURST];
	struct worker_stats stats;
};

/*
 * Take a reference to the UD QP's P_Key entry, or learn that there is none
 * to take: port not ACTIVE, table awaiting refill, or the slot empty. The
 * packets still arrive then, and the port check drops them.
 */
static void take_pkey_ref(struct worker *w)
{
	w->pkey_ref_rc = ibk_pkey_table_ref_get(&w->f->port.pkeys,
						w->ud_qp.pkey_index,
						&w->pkey_ref);
	w->have_pkey_ref = w->pkey_ref_rc == IBK_OK;
	if (w->have_pkey_ref)
		w->ud_qp.pkey = w->pkey_ref.pkey;
}

/*
 * The per-packet question: is the cached entry still what the table holds?
 * One load and one compare while it is; when it is not, re-take it (then
 * have_pkey_ref says whether there was one to take). A ref caught stale
 * must re-take at a new generation: the same one would mean a stale report
 * with no update behind it.
 */
static bool pkey_ref_fresh(struct worker *w)
{
	uint32_t old;

	if (w->have_pkey_ref &&
	    ibk_pkey_table_ref_fresh(&w->f->port.pkeys, &w->pkey_ref))
		return true;
	if (!w->have_pkey_ref) {
		take_pkey_ref(w);
		return false;
	}
	w->stats.pkey_stale++;
	old = w->pkey_ref.generation;
	take_pkey_ref(w);
	if (w->have_pkey_ref && w->pkey_ref.generation == old)
		w->stats.false_stale++;
	return false;
}

/* The same for GID[0], which must read back as the port GID every time. */
static void take_gid_ref(struct worker *w)
{
	struct ibk_gid expected = port_gid();

	w->have_gid_ref = ibk_gid_table_ref_get(&w->f->port.gids, 0,
						&w->gid_ref) == IBK_OK;
	if (w->have_gid_ref && !ibk_gid_equal(&w->gid_ref.gid, &expected))
		w->stats.wrong_port_gid++;
}

static void refresh_gid_ref(struct worker *w)
{
	uint32_t old;

	if (w->have_gid_ref &&
	    ibk_gid_table_ref_fresh(&w->f->port.gids, &w->gid_ref))
		return;
	if (!w->have_gid_ref) {
		take_gid_ref(w);
		return;
	}
	w->stats.gid_stale++;
	old = w->gid_ref.generation;
	take_gid_ref(w);
	if (w->have_gid_ref && w->gid_ref.generation == old)
		w->stats.false_stale++;
}

/* BTH + DETH of a UD SEND Only packet, written with the library's setters. */
static void write_packet(uint8_t *pkt, uint32_t dest_qp, uint32_t src_qp,
			 ibk_pkey_t pkey, ibk_qkey_t qkey, uint32_t psn)
{
	uint8_t *deth = pkt + IBK_BTH_LEN;

	ibk_bth_set_opcode(pkt, IBK_OPCODE_UD_SEND_ONLY);
	ibk_bth_set_pkey(pkt, pkey);
	ibk_bth_set_dest_qp(pkt, dest_qp);
	ibk_bth_set_psn(pkt, psn & 0xffffffu);
	ibk_deth_set_qkey(deth, qkey);
	ibk_deth_set_src_qp(deth, src_qp);
}

/* A partition the SM never installs, full or limited. */
static ibk_pkey_t foreign_pkey(struct rng *r)
{
	return ibk_pkey_make((uint16_t)(FOREIGN_BASE + rng_below(r, SM_BASES)),
			     rng_below(r, 2) != 0);
}

/*
 * Build one UD packet to our QP, from the P_Key of the entry we hold a
 * reference to, and return the verdict the rules give it. Membership
 * decides only the UD_LIMITED case: a limited sender reaches a full-member
 * QP, never a limited one.
 */
static enum ibk_rx_verdict build_ud_packet(struct worker *w, uint8_t *pkt,
					   uint32_t psn)
{
	ibk_pkey_t qp_pkey = w->ud_qp.pkey;
	ibk_qkey_t qkey = w->ud_qp.qkey;
	uint32_t src_qp = WORKER_QPN(w->index) ^ 0x800u;

	switch ((enum ud_kind)rng_below(&w->rng, UD_KINDS)) {
	case UD_MEMBER:
		write_packet(pkt, WORKER_QPN(w->index), src_qp,
			     ibk_pkey_to_full(qp_pkey), qkey, psn);
		return IBK_RX_ACCEPT;
	case UD_LIMITED:
		write_packet(pkt, WORKER_QPN(w->index), src_qp,
			     ibk_pkey_to_limited(qp_pkey), qkey, psn);
		return ibk_pkey_is_full(qp_pkey) ? IBK_RX_ACCEPT :
						   IBK_RX_DROP_PKEY;
	case UD_OTHER_PARTITION:
		write_packet(pkt, WORKER_QPN(w->index), src_qp,
			     foreign_pkey(&w->rng), qkey, psn);
		return IBK_RX_DROP_PKEY;
	default:
		write_packet(pkt, WORKER_QPN(w->index), src_qp,
			     ibk_pkey_to_full(qp_pkey),
			     qkey ^ (0x100u << rng_below(&w->rng, 16)), psn);
		return IBK_RX_DROP_QKEY;
	}
}

/*
 * A packet to QP1. The full-member form of our own entry's key matches
 * that entry whatever its membership, so QP1 must accept it.
 */
static enum ibk_rx_verdict build_gsi_packet(struct worker *w, uint8_t *pkt,
					    uint32_t psn)
{
	ibk_pkey_t member = ibk_pkey_to_full(w->ud_qp.pkey);
	uint32_t src_qp = WORKER_QPN(w->index);

	switch ((enum gsi_kind)rng_below(&w->rng, GSI_KINDS)) {
	case GSI_MEMBER:
		write_packet(pkt, GSI_QPN, src_qp, member, IBK_QKEY_GSI, psn);
		return IBK_RX_ACCEPT;
	case GSI_OTHER_PARTITION:
		write_packet(pkt, GSI_QPN, src_qp, foreign_pkey(&w->rng),
			     IBK_QKEY_GSI, psn);
		return IBK_RX_DROP_PKEY;
	default:
		write_packet(pkt, GSI_QPN, src_qp, member, w->ud_qp.qkey, psn);
		return IBK_RX_DROP_QKEY;
	}
}

static void report_mismatch(struct worker *w, const uint8_t *pkt,
			    const struct ibk_qp_keys *qp,
			    enum ibk_rx_verdict expected,
			    enum ibk_rx_verdict got)
{
	if (++w->stats.mismatches > MAX_REPORTED)
		return;
	fprintf(stderr,
		"table_cache: worker %u: packet to QP 0x%06" PRIx32
		" P_Key 0x%04x Q_Key 0x%08" PRIx32 ", QP P_Key 0x%04x"
		" Q_Key 0x%08" PRIx32 ": built to get %s, got %s\n",
		w->index, ibk_bth_dest_qp(pkt), (unsigned)ibk_bth_pkey(pkt),
		ibk_deth_qkey(pkt + IBK_BTH_LEN), (unsigned)qp->pkey, qp->qkey,
		ibk_rx_verdict_name(expected), ibk_rx_verdict_name(got));
}

/* IBA 10.9, written out: equal non-zero bases, at least one full member. */
static bool rule_pkey_match(ibk_pkey_t a, ibk_pkey_t b)
{
	return (a & 0x7fffu) != 0 && ((a ^ b) & 0x7fffu) == 0 &&
	       ((a | b) & 0x8000u) != 0;
}

/*
 * While the QP's entry is empty there is no reference to build packets
 * from: take the table as a snapshot instead, true if it could be read and
 * the entry is still empty in it. Its generation tells afterwards whether
 * the table changed while the packets were checked.
 */
static bool snapshot_empty_entry(struct worker *w)
{
	return w->pkey_ref_rc == IBK_ENOENT &&
	       ibk_pkey_table_snapshot(&w->f->port.pkeys, PKEY_CAPACITY,
				       w->snap, &w->snap_generation) ==
	       PKEY_CAPACITY &&
	       !ibk_pkey_is_valid(w->snap[w->ud_qp.pkey_index]);
}

static bool snapshot_unchanged(struct worker *w)
{
	ibk_pkey_t now[PKEY_CAPACITY];
	uint32_t generation;

	return ibk_pkey_table_snapshot(&w->f->port.pkeys, PKEY_CAPACITY, now,
				       &generation) == PKEY_CAPACITY &&
	       generation == w->snap_generation;
}

/* What QP1 does with a packet, by the rules, on the snapshot's table: it
 * accepts a P_Key some entry admits, and then wants the GSI Q_Key. */
static enum ibk_rx_verdict snapshot_gsi_verdict(const struct worker *w,
						const uint8_t *pkt)
{
	ibk_pkey_t pkey = ibk_bth_pkey(pkt);
	unsigned i;

	for (i = 0; i < PKEY_CAPACITY; i++)
		if (rule_pkey_match(pkey, w->snap[i]))
			return ibk_deth_qkey(pkt + IBK_BTH_LEN) == IBK_QKEY_GSI ?
			       IBK_RX_ACCEPT : IBK_RX_DROP_QKEY;
	return IBK_RX_DROP_PKEY;
}

/*
 * Count @n verdicts. If the packets were built from a reference that is
 * still fresh now, or on an empty entry (@on_empty) of a table whose
 * generation has not moved since, no update ran in between, and each
 * verdict must be the one its packet was built to get.
 */
static void settle(struct worker *w, bool built_on_ref, bool on_empty,
		   const struct ibk_qp_keys *qp, size_t n, size_t accepted)
{
	bool verify = built_on_ref ? pkey_ref_fresh(w) :
		      on_empty && snapshot_unchanged(w);
	size_t i;

	w->stats.checked += n;
	w->stats.accepted += accepted;
	for (i = 0; i < n; i++) {
		/* a value outside the enum counts as malformed: a check fails */
		w->stats.verdicts[w->verdicts[i] < VERDICTS ?
				  w->verdicts[i] : IBK_RX_DROP_MALFORMED]++;
		if (verify) {
			w->stats.pkey_built += w->expect[i] == IBK_RX_DROP_PKEY;
			w->stats.qkey_built += w->expect[i] == IBK_RX_DROP_QKEY;
		} else {
			w->stats.pkey_unverified +=
				w->verdicts[i] == IBK_RX_DROP_PKEY;
			w->stats.qkey_unverified +=
				w->verdicts[i] == IBK_RX_DROP_QKEY;
		}
		if (verify && w->verdicts[i] != w->expect[i])
			report_mismatch(w, w->pkts[i], qp,
					(enum ibk_rx_verdict)w->expect[i],
					(enum ibk_rx_verdict)w->verdicts[i]);
	}
	if (verify) {
		w->stats.verified += n;
		w->stats.verified_empty += on_empty ? n : 0;
	} else if (built_on_ref || on_empty) {
		w->stats.raced += n;
	} else {
		w->stats.no_ref += n;
	}
}

/* BURST packets to our UD QP through the port's burst check. */
static void ud_burst(struct worker *w, uint32_t *psn)
{
	size_t i, accepted;
	bool built_on_ref, on_empty;

	pkey_ref_fresh(w);
	built_on_ref = w->have_pkey_ref;
	on_empty = !built_on_ref && snapshot_empty_entry(w);
	for (i = 0; i < BURST; i++) {
		w->expect[i] = (uint8_t)build_ud_packet(w, w->pkts[i], (*psn)++);
		/* an empty entry matches nothing, whatever was built */
		if (on_empty)
			w->expect[i] = IBK_RX_DROP_PKEY;
	}
	accepted = ibk_port_rx_burst(&w->f->port, &w->ud_qp, w->hdrs,
				     BURST, w->verdicts);
	settle(w, built_on_ref, on_empty, &w->ud_qp, BURST, accepted);
}

/* QP1 packets one at a time through the port's single-packet check. */
static void gsi_packets(struct worker *w, uint32_t *psn)
{
	unsigned i;

	for (i = 0; i < GSI_PER_BURST; i++) {
		enum ibk_rx_verdict v;
		bool built_on_ref, on_empty;

		pkey_ref_fresh(w);
		built_on_ref = w->have_pkey_ref;
		on_empty = !built_on_ref && snapshot_empty_entry(w);
		w->expect[0] = (uint8_t)build_gsi_packet(w, w->pkts[0], (*psn)++);
		if (on_empty)
			w->expect[0] = (uint8_t)snapshot_gsi_verdict(w,
								     w->pkts[0]);
		v = ibk_port_rx(&w->f->port, &w->gsi_qp, w->pkts[0],
				w->pkts[0] + IBK_BTH_LEN);
		w->verdicts[0] = (uint8_t)v;
		settle(w, built_on_ref, on_empty, &w->gsi_qp, 1,
		       v == IBK_RX_ACCEPT);
	}
}

static void worker_init(struct worker *w, struct fabric *f, unsigned index,
			uint64_t packet_limit)
{
	size_t i;

	memset(w, 0, sizeof(*w));
	w->f = f;
	w->index = index;
	w->rng = rng_for_thread(index);
	w->packet_limit = packet_limit;

	/* Worker i's QP uses P_Key index 1 + i; index 0 is the default. */
	w->ud_qp.type = IBK_QPT_UD;
	w->ud_qp.pkey = IBK_PKEY_DEFAULT;
	w->ud_qp.pkey_index = (uint16_t)(1 + index);
	w->ud_qp.qkey = WORKER_QKEY(index);
	w->gsi_qp.type = IBK_QPT_GSI;
	w->gsi_qp.qkey = IBK_QKEY_GSI;
	for (i = 0; i < BURST; i++)
		w->hdrs[i] = w->pkts[i];
}

static bool worker_done(const struct worker *w)
{
	return atomic_load_explicit(&w->f->stop, memory_order_relaxed) ||
	       (w->packet_limit && w->stats.checked >= w->packet_limit);
}

static void *worker_thread(void *arg)
{
	struct worker *w = (struct worker *)arg;
	uint32_t psn = 0;

	take_pkey_ref(w);
	take_gid_ref(w);
	while (!worker_done(w)) {
		refresh_gid_ref(w);
		ud_burst(w, &psn);
		gsi_packets(w, &psn);
		if (psn == BURST + GSI_PER_BURST)
			atomic_fetch_add(&w->f->first_rounds, 1);
	}
	return NULL;
}

/* ------------------------------------------------------------------------
 * The report, and the checks that the numbers agree
 * ------------------------------------------------------------------------ */

static void sum_stats(struct worker_stats *sum, const struct worker *w,
		      unsigned n)
{
	unsigned i, v;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < n; i++) {
		const struct worker_stats *s = &w[i].stats;

		sum->checked += s->checked;
		sum->accepted += s->accepted;
		for (v = 0; v < VERDICTS; v++)
			sum->verdicts[v] += s->verdicts[v];
		sum->verified += s->verified;
		sum->verified_empty += s->verified_empty;
		sum->pkey_built += s->pkey_built;
		sum->qkey_built += s->qkey_built;
		sum->pkey_unverified += s->pkey_unverified;
		sum->qkey_unverified += s->qkey_unverified;
		sum->raced += s->raced;
		sum->no_ref += s->no_ref;
		sum->mismatches += s->mismatches;
		sum->pkey_stale += s->pkey_stale;
		sum->gid_stale += s->gid_stale;
		sum->false_stale += s->false_stale;
		sum->wrong_port_gid += s->wrong_port_gid;
	}
}

static void print_report(const struct worker_stats *sum,
			 const struct worker *w, const struct sm_stats *sm,
			 uint16_t pkey_violations, uint16_t qkey_violations)
{
	unsigned v, i;

	printf("packets checked          %" PRIu64 "\n", sum->checked);
	printf("  verified against how they were built   %" PRIu64
	       " (%" PRIu64 " on an empty P_Key entry)\n",
	       sum->verified, sum->verified_empty);
	printf("  raced a table update (not verified)    %" PRIu64 "\n",
	       sum->raced);
	printf("  built with no entry to refer to        %" PRIu64
	       " (port not ACTIVE or refill pending)\n", sum->no_ref);
	printf("verdicts\n");
	for (v = 0; v < VERDICTS; v++)
		printf("  %-38s %" PRIu64 "\n",
		       ibk_rx_verdict_name((enum ibk_rx_verdict)v),
		       sum->verdicts[v]);
	printf("table updates published  P_Key %" PRIu64 ", GID %" PRIu64 "\n",
	       pkey_publishes(sm), gid_publishes(sm));
	printf("  P_Key refills %" PRIu64 ", sets %" PRIu64
	       ", PKEY_CHANGE events %" PRIu64 "\n",
	       sm->pkey_refills, sm->pkey_sets, sm->pkey_change_events);
	printf("  GID refills %" PRIu64 ", sets %" PRIu64
	       ", GID_CHANGE events %" PRIu64 "\n",
	       sm->gid_refills, sm->gid_sets, sm->gid_change_events);
	printf("  port DOWN->ACTIVE flips %" PRIu64 "\n", sm->port_flips);
	printf("stale references caught  P_Key %" PRIu64 " (", sum->pkey_stale);
	for (i = 0; i < NWORKERS; i++)
		printf("%sworker %u: %" PRIu64, i ? ", " : "", i,
		       w[i].stats.pkey_stale);
	printf("), GID %" PRIu64 "\n", sum->gid_stale);
	printf("port counters            P_Key violations %u, Q_Key violations %u\n",
	       (unsigned)pkey_violations, (unsigned)qkey_violations);
}

static bool check(bool ok, const char *what)
{
	printf("%s %s\n", ok ? "ok:  " : "FAIL:", what);
	return ok;
}

/*
 * A 16-bit violation counter must hold the violations the verified packets
 * were built to be, plus the drops of the same kind among the packets that
 * raced an update (their verdict is all there is to go by), while that is
 * below 0xffff, and read 0xffff from then on (IBA PortInfo).
 */
static bool check_counter(const char *name, uint64_t built,
			  uint64_t unverified, uint16_t counter)
{
	uint64_t drops = built + unverified;
	uint64_t want = drops < IBK_COUNTER16_MAX ? drops : IBK_COUNTER16_MAX;
	char what[200];

	snprintf(what, sizeof(what),
		 "%s violation counter %u == min(%" PRIu64 " built as such + %"
		 PRIu64 " unverified drops, 0xffff)%s",
		 name, (unsigned)counter, built, unverified,
		 drops >= IBK_COUNTER16_MAX ? " (saturated)" : "");
	return check(counter == want, what);
}

static bool check_all(const struct worker_stats *sum, const struct worker *w,
		      const struct sm *sm, uint16_t pkey_violations,
		      uint16_t qkey_violations)
{
	uint64_t drops = 0, pkey_max = pkey_publishes(&sm->stats);
	uint64_t gid_max = gid_publishes(&sm->stats);
	bool ok = true, within = true;
	unsigned v, i;

	for (v = IBK_RX_ACCEPT + 1; v < VERDICTS; v++)
		drops += sum->verdicts[v];
	/* Each update moves the count twice, at the latch switch and at its
	 * end: a reference taken between the two (on the new copy) goes
	 * stale at the end, so a worker can catch two per update. */
	for (i = 0; i < NWORKERS; i++)
		within = within && w[i].stats.pkey_stale <= 2 * pkey_max &&
			 w[i].stats.gid_stale <= 2 * gid_max;

	ok &= check(sm->failures == 0, "every SM table update succeeded");
	ok &= check(sum->accepted + drops == sum->checked &&
		    sum->verdicts[IBK_RX_ACCEPT] == sum->accepted,
		    "accepted + drops == checked");
	ok &= check(sum->verified > 0 && sum->mismatches == 0,
		    "every verified verdict is the one its packet was built for");
	ok &= check(sum->verified_empty > 0,
		    "some packets were verified on an empty P_Key entry");
	ok &= check(sum->verdicts[IBK_RX_DROP_NEED_TABLE] == 0 &&
		    sum->verdicts[IBK_RX_DROP_MALFORMED] == 0 &&
		    sum->verdicts[IBK_RX_DROP_TVER] == 0 &&
		    sum->verdicts[IBK_RX_DROP_OPCODE] == 0,
		    "well-formed UD SENDs never get drop-need-table, "
		    "drop-malformed, drop-tver or drop-opcode");
	ok &= check(sum->verdicts[IBK_RX_DROP_PKEY_INDEX] == 0,
		    "no drop-pkey-index: the QPs' P_Key indices are inside "
		    "the table (an empty entry is a P_Key violation)");
	ok &= check_counter("P_Key", sum->pkey_built, sum->pkey_unverified,
			    pkey_violations);
	ok &= check_counter("Q_Key", sum->qkey_built, sum->qkey_unverified,
			    qkey_violations);
	ok &= check(sum->false_stale == 0,
		    "every stale reference re-took at a new generation");
	ok &= check(within,
		    "no worker caught more stale references than twice the updates "
		    "published (a reference taken mid-update goes stale at its end)");
	ok &= check(sum->wrong_port_gid == 0,
		    "GID[0] always read back as the port GID");
	return ok;
}

/* ------------------------------------------------------------------------
 * Setup and main
 * ------------------------------------------------------------------------ */

struct options {
	unsigned long seconds;
	uint64_t packets;	/* per worker; 0 = run for --seconds */
};

static void usage(FILE *to)
{
	fprintf(to,
		"usage: table_cache [--seconds N] [--packets N] [--help]\n"
		"  A subnet-manager thread changes one port's P_Key and GID tables\n"
		"  while %d workers check packets against the cached tables.\n"
		"  --seconds N  run for N seconds (default 3)\n"
		"  --packets N  instead, stop each worker after N packets\n"
		"Exit status: 0 if every count agrees, 1 if not, 2 on bad usage.\n",
		NWORKERS);
}

static bool parse_number(const char *text, unsigned long long max,
			 unsigned long long *out)
{
	char *end;

	if (!text || *text < '0' || *text > '9')
		return false;
	errno = 0;
	*out = strtoull(text, &end, 10);
	return errno == 0 && *end == '\0' && *out >= 1 && *out <= max;
}

/* 0 to run, 1 to exit 0 (--help), -1 on bad usage. */
static int parse_options(int argc, char **argv, struct options *opt)
{
	unsigned long long n;
	int i;

	opt->seconds = 3;
	opt->packets = 0;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 1;
		} else if (strcmp(argv[i], "--seconds") == 0) {
			if (!parse_number(argv[++i], 86400, &n)) {
				fprintf(stderr, "table_cache: --seconds takes"
					" a whole number from 1 to 86400\n");
				return -1;
			}
			opt->seconds = (unsigned long)n;
		} else if (strcmp(argv[i], "--packets") == 0) {
			if (!parse_number(argv[++i], UINT64_MAX / 2, &n)) {
				fprintf(stderr, "table_cache: --packets takes"
					" a whole number from 1\n");
				return -1;
			}
			opt->packets = n;
		} else {
			fprintf(stderr, "table_cache: bad argument '%s'\n",
				argv[i]);
			usage(stderr);
			return -1;
		}
	}
	return 0;
}

/* The port as the SM first brings it up: ACTIVE, then both tables filled
 * (entering ACTIVE is a change event: a refill must read after it). */
static bool fabric_init(struct fabric *f, struct sm *sm)
{
	int rc;

	memset(f, 0, sizeof(*f));
	atomic_init(&f->stop, false);
	atomic_init(&f->first_rounds, 0u);
	rc = ibk_port_init(&f->port, f->pkey_cells, PKEY_CAPACITY,
			   f->pkey_slots, IBK_HASH_SLOTS(PKEY_CAPACITY),
			   f->gid_cells, GID_CAPACITY,
			   f->gid_slots, IBK_HASH_SLOTS(GID_CAPACITY));
	if (rc != IBK_OK) {
		fprintf(stderr, "table_cache: ibk_port_init: %s\n",
			ibk_strerror(rc));
		return false;
	}
	memset(sm, 0, sizeof(*sm));
	sm->f = f;
	sm->rng = rng_for_thread(NWORKERS);
	sm_expect_ok(sm, ibk_port_set_state(&f->port, IBK_PORT_ACTIVE),
		     "set state ACTIVE");
	sm_refill_pkeys(sm);
	sm_refill_gids(sm);
	/* worker 1's QP (P_Key index 2) starts on an empty entry */
	sm_expect_ok(sm, ibk_pkey_table_set(&f->port.pkeys, 2,
					    IBK_PKEY_INVALID),
		     "P_Key set");
	sm->stats.pkey_sets++;
	return sm->failures == 0;
}

/*
 * Runs the SM and the workers until --seconds have passed or every worker
 * has checked its --packets. False if a thread could not be started.
 */
static bool run_threads(struct fabric *f, struct sm *sm, struct worker *w,
			const struct options *opt)
{
	pthread_t sm_tid, tid[NWORKERS];
	unsigned started = 0;
	bool sm_started;
	int rc;

	rc = pthread_create(&sm_tid, NULL, sm_thread, sm);
	sm_started = rc == 0;
	while (rc == 0 && started < NWORKERS) {
		rc = pthread_create(&tid[started], NULL, worker_thread,
				    &w[started]);
		started += rc == 0;
	}
	if (rc != 0)
		fprintf(stderr, "table_cache: pthread_create: %s\n",
			strerror(rc));

	/* With --packets the workers stop themselves; else time them. */
	if (rc != 0 || !opt->packets) {
		if (rc == 0)
			pause_for((time_t)opt->seconds, 0);
		atomic_store_explicit(&f->stop, true, memory_order_relaxed);
	}
	while (started > 0)
		pthread_join(tid[--started], NULL);
	atomic_store_explicit(&f->stop, true, memory_order_relaxed);
	if (sm_started)
		pthread_join(sm_tid, NULL);
	return rc == 0;
}

int main(int argc, char **argv)
{
	struct options opt;
	struct fabric f;
	struct sm sm;
	struct worker w[NWORKERS];
	struct worker_stats sum;
	uint16_t pkey_violations, qkey_violations;
	unsigned i;
	bool ok;
	int rc = parse_options(argc, argv, &opt);

	if (rc != 0)
		return rc > 0 ? 0 : 2;
	if (!fabric_init(&f, &sm))
		return 1;
	for (i = 0; i < NWORKERS; i++)
		worker_init(&w[i], &f, i, opt.packets);
	if (!run_threads(&f, &sm, w, &opt))
		return 1;

	printf("table_cache: %d workers, one port (P_Key table %d, GID table %d), ",
	       NWORKERS, PKEY_CAPACITY, GID_CAPACITY);
	if (opt.packets)
		printf("%" PRIu64 " packets per worker\n", opt.packets);
	else
		printf("%lu s\n", opt.seconds);
	pkey_violations = ibk_counter16_read(&f.port.pkey_violations);
	qkey_violations = ibk_counter16_read(&f.port.qkey_violations);
	sum_stats(&sum, w, NWORKERS);
	print_report(&sum, w, &sm.stats, pkey_violations, qkey_violations);
	ok = check_all(&sum, w, &sm, pkey_violations, qkey_violations);
	printf("table_cache: %s\n", ok ? "all counts agree" :
	       "COUNTS DISAGREE (see FAIL lines above)");
	return ok ? 0 : 1;
}
