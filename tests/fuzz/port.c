/* SPDX-License-Identifier: MIT */
/*
 * port: operation sequences on one port (P_Key and GID tables, violation
 * counters), checked after every step against model.h. From the input:
 * the capacities, a starting generation per table, then up to 256
 * operations: set the port state, deliver an asynchronous event (every
 * number from 6 to 20, so the ones that are no event too), reset, take a
 * refill ticket and refill either table, set a P_Key, receive one packet
 * (any QP type, P_Key index in and beyond the table, a DETH or none),
 * receive through QP1, a burst to one QP, a mixed burst to several, add
 * to a counter, take references into either table. Headers live in heap
 * blocks of exactly their size. Every verdict, matched P_Key index,
 * return code and accepted count must be the model's; after every step
 * both counters must read as the model's saturating ones, and every
 * reference must read fresh exactly when its table published nothing
 * since it was taken (a GID_CHANGE leaves P_Key references fresh).
 */
#include "model.h"

#define MAX_OPS 256
#define BURST_MAX 16
#define PKEY_CAP_MAX 8u
#define GID_CAP_MAX 4u

enum { OP_STATE, OP_EVENT, OP_RESET, OP_TICKET, OP_REFILL_PKEYS,
       OP_REFILL_GIDS, OP_SET_PKEY, OP_RX, OP_RX_GSI, OP_RX_BURST,
       OP_RX_MIXED, OP_COUNTER_ADD, OP_REF_PKEY, OP_REF_GID, OP_COUNT };

struct world {
	struct ibk_port port;
	struct model_pkeys mp;
	struct model_gids mg;
	uint32_t pkey_violations, qkey_violations;
	uint32_t pkey_ticket, pkey_ticket_events;
	uint32_t gid_ticket, gid_ticket_events;
	struct ibk_pkey_ref pkey_refs[MODEL_REFS];
	struct ibk_gid_ref gid_refs[MODEL_REFS];
	struct model_ref mpkey_refs[MODEL_REFS], mgid_refs[MODEL_REFS];
};

static uint16_t pick_pkey(struct fz *f)
{
	uint8_t b = fz_u8(f);

	if (b >= 0xf0)
		return fz_u16(f);
	return (uint16_t)((b & 3) | (b & 4 ? 0x8000 : 0));	/* base 0-3 */
}

static uint32_t pick_qkey(struct fz *f)
{
	switch (fz_below(f, 4)) {
	case 0:  return IBK_QKEY_GSI;
	case 1:  return 0x11111111u;
	case 2:  return 0x80000000u;
	default: return fz_u32(f);
	}
}

/* A BTH and DETH in one exact block: mostly UD SENDs and RC/UC writes,
 * TVer 0, the P_Key and Q_Key from the pools. */
static uint8_t *pick_headers(struct fz *f)
{
	uint8_t *h = fz_exact(f, IBK_BTH_LEN + IBK_DETH_LEN);
	uint16_t pkey = pick_pkey(f);
	uint32_t qkey = pick_qkey(f);
	static const uint8_t ops[4] = { 0x64, 0x65, 0x0a, 0x2a };

	if (h[0] & 0x80) {
		h[0] = ops[h[0] & 3];
		h[1] &= 0xf0;
	}
	h[2] = (uint8_t)(pkey >> 8);
	h[3] = (uint8_t)pkey;
	for (int b = 0; b < 4; b++)
		h[IBK_BTH_LEN + b] = (uint8_t)(qkey >> (24 - 8 * b));
	return h;
}

static void pick_qp(struct fz *f, struct ibk_qp_keys *qp, uint32_t cap)
{
	qp->type = (enum ibk_qp_type)fz_below(f, IBK_QPT_UD + 2);
	qp->pkey = fz_u16(f);		/* not used: the table's entry is */
	qp->pkey_index = (uint16_t)fz_below(f, cap + 2);
	qp->qkey = pick_qkey(f);
}

static void count(struct world *w, enum ibk_rx_verdict v)
{
	if (v == IBK_RX_DROP_PKEY)
		model_counter_add(&w->pkey_violations, 1);
	if (v == IBK_RX_DROP_QKEY)
		model_counter_add(&w->qkey_violations, 1);
}

/* The event's effect on each table, as enum ibk_event_type lists it:
 * the state it brings (0: none) and which tables await a refill. */
static bool event_effect(unsigned e, unsigned *state, bool *pkeys, bool *gids)
{
	*state = 0;
	*pkeys = *gids = true;
	switch (e) {
	case IBK_EVENT_DEVICE_FATAL:
	case IBK_EVENT_PORT_ERR:	*state = IBK_PORT_DOWN; return true;
	case IBK_EVENT_PORT_ACTIVE:	*state = IBK_PORT_ACTIVE; return true;
	case IBK_EVENT_LID_CHANGE:
	case IBK_EVENT_SM_CHANGE:
	case IBK_EVENT_CLIENT_REREGISTER: return true;
	case IBK_EVENT_PKEY_CHANGE:	*gids = false; return true;
	case IBK_EVENT_GID_CHANGE:	*pkeys = false; return true;
	default:			return false;
	}
}

static void reset_status(struct model_status *s)
{
	s->state = IBK_PORT_DOWN;
	s->awaiting = true;
	s->events++;
	s->updates++;
}

static void check_rx(struct world *w, struct fz *f)
{
	struct ibk_qp_keys qp;
	uint8_t *h;
	const uint8_t *deth;
	enum ibk_rx_verdict v, want;
	uint16_t at;

	pick_qp(f, &qp, w->mp.capacity);
	h = pick_headers(f);
	deth = fz_u8(f) < 0x20 ? NULL : h + IBK_BTH_LEN;
	v = ibk_port_rx(&w->port, &qp, h, deth);
	want = model_pkeys_port_rx(&w->mp, &qp, h, deth, &at);
	FZ_CHECK(v == want, "rx type %u index %u opcode %02x: %s, model %s",
		 qp.type, qp.pkey_index, h[0], ibk_rx_verdict_name(v),
		 ibk_rx_verdict_name(want));
	count(w, want);
	free(h);
}

static void check_rx_gsi(struct world *w, struct fz *f)
{
	struct ibk_qp_keys gsi = { IBK_QPT_GSI, 0, 0, IBK_QKEY_GSI };
	uint16_t index = 0xbeef, at;
	uint8_t *h = pick_headers(f);
	enum ibk_rx_verdict v = ibk_port_rx_gsi(&w->port, h, h + IBK_BTH_LEN,
						&index);
	enum ibk_rx_verdict want = model_pkeys_port_rx(&w->mp, &gsi, h,
						 h + IBK_BTH_LEN, &at);

	FZ_CHECK(v == want && (v != IBK_RX_ACCEPT || index == at),
		 "QP1 P_Key %04x: %s at %u, model %s at %u",
		 h[2] << 8 | h[3], ibk_rx_verdict_name(v), index,
		 ibk_rx_verdict_name(want), at);
	count(w, want);
	free(h);
}

/* A burst to one QP (@mixed false) or to three (@mixed true). */
static void check_burst(struct world *w, struct fz *f, bool mixed)
{
	struct ibk_qp_keys qps[3];
	const struct ibk_qp_keys *to[BURST_MAX];
	const void *hdrs[BURST_MAX];
	uint8_t *blocks[BURST_MAX], verdicts[BURST_MAX];
	uint16_t index[BURST_MAX], at;
	size_t n = fz_below(f, BURST_MAX + 1), accepted = 0, got, i;

	for (i = 0; i < 3; i++)
		pick_qp(f, &qps[i], w->mp.capacity);
	for (i = 0; i < n; i++) {
		to[i] = &qps[mixed ? fz_below(f, 3) : 0];
		blocks[i] = pick_headers(f);
		hdrs[i] = blocks[i];
	}
	got = mixed ? ibk_port_rx_mixed(&w->port, to, hdrs, n, verdicts,
					index) :
	      ibk_port_rx_burst(&w->port, &qps[0], hdrs, n, verdicts);
	for (i = 0; i < n; i++) {
		enum ibk_rx_verdict want = model_pkeys_port_rx(&w->mp, to[i],
							 blocks[i],
							 blocks[i] + IBK_BTH_LEN,
							 &at);

		FZ_CHECK(verdicts[i] == want &&
			 (!mixed || index[i] == at),
			 "%s burst [%zu] type %u: %u at %u, model %s at %u",
			 mixed ? "mixed" : "one-QP", i, to[i]->type,
			 verdicts[i], mixed ? index[i] : 0,
			 ibk_rx_verdict_name(want), at);
		accepted += want == IBK_RX_ACCEPT;
		count(w, want);
		free(blocks[i]);
	}
	FZ_CHECK(got == accepted, "burst accepted %zu, model %zu", got,
		 accepted);
}

static void refill_gids(struct world *w, struct fz *f)
{
	struct ibk_gid_entry in[GID_CAP_MAX + 1];
	struct model_gid_entry min[GID_CAP_MAX + 1];
	uint32_t n = fz_below(f, w->mg.capacity + 2);
	int rc, mrc;

	for (uint32_t i = 0; i < n; i++) {
		memset(in[i].gid.raw, 0, 16);
		in[i].gid.raw[0] = 0xfe;
		in[i].gid.raw[1] = 0x80;
		in[i].gid.raw[15] = fz_u8(f) & 3;	/* 0: empty */
		in[i].type = (enum ibk_gid_type)fz_below(f, 3);
		memcpy(min[i].raw, in[i].gid.raw, 16);
		min[i].type = in[i].type;
	}
	rc = ibk_gid_table_refill(&w->port.gids, in, n, w->gid_ticket);
	mrc = model_gids_refill(&w->mg, min, n, w->gid_ticket_events);
	FZ_CHECK(rc == mrc, "GID refill %u: %d, model %d", n, rc, mrc);
}

static void check_after(struct world *w)
{
	FZ_CHECK(ibk_counter16_read(&w->port.pkey_violations) ==
		 w->pkey_violations, "P_Key violations %u, model %u",
		 ibk_counter16_read(&w->port.pkey_violations),
		 w->pkey_violations);
	FZ_CHECK(ibk_counter16_read(&w->port.qkey_violations) ==
		 w->qkey_violations, "Q_Key violations %u, model %u",
		 ibk_counter16_read(&w->port.qkey_violations),
		 w->qkey_violations);
	for (unsigned k = 0; k < MODEL_REFS; k++) {
		FZ_CHECK(ibk_pkey_table_ref_fresh(&w->port.pkeys,
						  &w->pkey_refs[k]) ==
			 model_ref_fresh(w->mpkey_refs, k, w->mp.st.updates),
			 "P_Key reference %u freshness", k);
		FZ_CHECK(ibk_gid_table_ref_fresh(&w->port.gids,
						 &w->gid_refs[k]) ==
			 model_ref_fresh(w->mgid_refs, k, w->mg.st.updates),
			 "GID reference %u freshness", k);
	}
}

static void step(struct world *w, struct fz *f)
{
	unsigned op = fz_below(f, OP_COUNT), k = fz_below(f, MODEL_REFS);
	uint16_t keys[PKEY_CAP_MAX + 1], want = 0;
	unsigned state;
	bool pkeys, gids;
	uint32_t n;
	int rc, mrc;

	switch (op) {
	case OP_STATE:
		n = fz_below(f, 7);
		rc = ibk_port_set_state(&w->port, (enum ibk_port_state)n);
		mrc = model_set_state(&w->mp.st, n);
		if (mrc == IBK_OK)
			model_set_state(&w->mg.st, n);
		FZ_CHECK(rc == mrc, "state %u: %d, model %d", n, rc, mrc);
		break;
	case OP_EVENT:
		n = 6 + fz_below(f, 15);
		rc = ibk_port_event(&w->port, (enum ibk_event_type)n);
		mrc = IBK_EINVAL;
		if (event_effect(n, &state, &pkeys, &gids)) {
			if (state || pkeys)
				model_status_update(&w->mp.st, state, pkeys);
			if (state || gids)
				model_status_update(&w->mg.st, state, gids);
			mrc = IBK_OK;
		}
		FZ_CHECK(rc == mrc, "event %u: %d, model %d", n, rc, mrc);
		break;
	case OP_RESET:
		FZ_CHECK(ibk_port_reset(&w->port) == IBK_OK, "reset");
		memset(w->mp.e, 0, sizeof(w->mp.e));
		memset(w->mg.e, 0, sizeof(w->mg.e));
		reset_status(&w->mp.st);
		reset_status(&w->mg.st);
		w->pkey_violations = w->qkey_violations = 0;
		break;
	case OP_TICKET:
		if (fz_bool(f)) {
			w->gid_ticket = ibk_gid_table_refill_ticket(&w->port.gids);
			w->gid_ticket_events = w->mg.st.events;
		} else {
			w->pkey_ticket =
				ibk_pkey_table_refill_ticket(&w->port.pkeys);
			w->pkey_ticket_events = w->mp.st.events;
		}
		break;
	case OP_REFILL_PKEYS:
		n = fz_below(f, w->mp.capacity + 2);
		for (uint32_t i = 0; i < n; i++)
			keys[i] = pick_pkey(f);
		rc = ibk_pkey_table_refill(&w->port.pkeys, keys, n,
					   w->pkey_ticket);
		mrc = model_pkeys_refill(&w->mp, keys, n, w->pkey_ticket_events);
		FZ_CHECK(rc == mrc, "P_Key refill %u: %d, model %d", n, rc, mrc);
		break;
	case OP_REFILL_GIDS:
		refill_gids(w, f);
		break;
	case OP_SET_PKEY:
		n = fz_below(f, w->mp.capacity + 1);
		keys[0] = pick_pkey(f);
		rc = ibk_pkey_table_set(&w->port.pkeys, n, keys[0]);
		mrc = model_pkeys_set(&w->mp, n, keys[0]);
		FZ_CHECK(rc == mrc, "set [%u]: %d, model %d", n, rc, mrc);
		break;
	case OP_RX:
		check_rx(w, f);
		break;
	case OP_RX_GSI:
		check_rx_gsi(w, f);
		break;
	case OP_RX_BURST:
	case OP_RX_MIXED:
		check_burst(w, f, op == OP_RX_MIXED);
		break;
	case OP_COUNTER_ADD:
		n = fz_u16(f);
		if (fz_bool(f)) {
			ibk_counter16_add(&w->port.qkey_violations, n);
			model_counter_add(&w->qkey_violations, n);
		} else {
			ibk_counter16_add(&w->port.pkey_violations, n);
			model_counter_add(&w->pkey_violations, n);
		}
		break;
	case OP_REF_PKEY:
		n = fz_below(f, w->mp.capacity + 1);
		rc = ibk_pkey_table_ref_get(&w->port.pkeys, n, &w->pkey_refs[k]);
		mrc = model_pkeys_get(&w->mp, n, &want);
		FZ_CHECK(rc == mrc && (rc || w->pkey_refs[k].pkey == want),
			 "P_Key ref [%u]: %d, model %d", n, rc, mrc);
		model_ref_taken(w->mpkey_refs, k, rc == IBK_OK,
				w->pkey_refs[k].generation, w->mp.st.updates);
		break;
	case OP_REF_GID:
		n = fz_below(f, w->mg.capacity + 1);
		rc = ibk_gid_table_ref_get(&w->port.gids, n, &w->gid_refs[k]);
		mrc = model_gids_get(&w->mg, n);
		FZ_CHECK(rc == mrc, "GID ref [%u]: %d, model %d", n, rc, mrc);
		model_ref_taken(w->mgid_refs, k, rc == IBK_OK,
				w->gid_refs[k].generation, w->mg.st.updates);
		break;
	}
	check_after(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = fz_init(data, size);
	uint32_t pcap = 1 + fz_below(&f, PKEY_CAP_MAX);
	uint32_t gcap = 1 + fz_below(&f, GID_CAP_MAX);
	struct ibk_pkey_cell *pcells =
		fz_storage(IBK_PKEY_CELLS(pcap) * sizeof(*pcells));
	struct ibk_hash_slot *pslots =
		fz_storage(IBK_PKEY_HASH_SLOTS_MIN(pcap) * sizeof(*pslots));
	struct ibk_gid_cell *gcells =
		fz_storage(IBK_GID_CELLS(gcap) * sizeof(*gcells));
	struct ibk_hash_slot *gslots =
		fz_storage(IBK_HASH_SLOTS_MIN(gcap) * sizeof(*gslots));
	struct world *w = calloc(1, sizeof(*w));

	if (!w)
		abort();
	FZ_CHECK(ibk_port_init(&w->port, pcells, pcap, pslots,
			       IBK_PKEY_HASH_SLOTS_MIN(pcap), gcells, gcap,
			       gslots, IBK_HASH_SLOTS_MIN(gcap)) == IBK_OK,
		 "port init");
	ibk_latch_init(&w->port.pkeys.hdr.latch, 0xffffffffu - 2u * fz_u8(&f));
	ibk_latch_init(&w->port.gids.hdr.latch, 0xffffffffu - 2u * fz_u8(&f));
	model_pkeys_init(&w->mp, pcap);
	model_gids_init(&w->mg, gcap);
	for (unsigned step_no = 0; step_no < MAX_OPS && !fz_empty(&f); step_no++)
		step(w, &f);
	free(w);
	free(pcells);
	free(pslots);
	free(gcells);
	free(gslots);
	return 0;
}
