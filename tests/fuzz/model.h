/* SPDX-License-Identifier: MIT */
/*
 * model.h - the linear models the stateful fuzz targets check ib_tables.h
 * against, written from the rules and the headers' comments, not from
 * their code: plain arrays scanned front to back, a port state with an
 * "awaiting refill" flag and a count of change events, saturating
 * counters; the receive checks in a receiver's order are tests/
 * port_model.h's, shared with the unit tests. Nothing here hashes,
 * latches or touches a table's storage.
 */
#ifndef IBK_FUZZ_MODEL_H
#define IBK_FUZZ_MODEL_H

#include <ctype.h>

#include "fuzz.h"
#include "ib_tables.h"
#include "../port_model.h"	/* the receive checks: model_rx(), model_port_rx() */

#define MODEL_MAX_CAPACITY 16u

/* ---- The responder's memory-key check, in rxe's order ---- */

typedef unsigned __int128 model_u128;

/* [iova, iova + len) inside [base, base + rlen), neither end past 2^64
 * (an end of exactly 2^64 is one: Linux 6.1 rxe serves it). */
static inline bool model_in(uint64_t iova, uint64_t len, uint64_t base,
			    uint64_t rlen)
{
	model_u128 end = (model_u128)iova + len, rend = (model_u128)base + rlen;
	model_u128 top = (model_u128)1 << 64;

	return rend <= top && end <= top && iova >= base && end <= rend;
}

/* A window's bytes, translated as rxe's check_rkey() does (offset = the
 * window's addr when zero-based), inside its MR @mr (none: nothing is). */
static inline bool model_in_mr(const struct ibk_mem_request *req,
			       const struct ibk_mem_attr *w,
			       const struct ibk_mem_attr *mr)
{
	model_u128 va = (model_u128)req->va +
			((w->access & IBK_ACCESS_ZERO_BASED) ? w->addr : 0);

	return mr && va < ((model_u128)1 << 64) &&
	       model_in((uint64_t)va, req->length, mr->addr, mr->length);
}

/* ibk_mem_check() as its comment lists the checks, one if per rule; @mr
 * is a window's MR. */
static inline enum ibk_mem_verdict
model_mem_check(const struct ibk_mem_qp *qp, const struct ibk_mem_request *req,
		const struct ibk_mem_attr *r, const struct ibk_mem_attr *mr)
{
	bool rw = !req->atomic;
	bool window = r && (r->kind == IBK_MEM_MW1 || r->kind == IBK_MEM_MW2);
	uint64_t base;

	if (req->access == 0)
		return IBK_MEM_NO_RKEY;
	if (req->access & ~qp->access)
		return IBK_MEM_ERR_QP_ACCESS;
	if (req->continues)		/* WRITE MIDDLE/LAST: no R_Key */
		return IBK_MEM_NO_RKEY;
	if (rw && req->length > 0x80000000u)
		return IBK_MEM_ERR_LENGTH;
	if (rw && req->length == 0)
		return IBK_MEM_OK;
	if (!r || r->state == IBK_MEM_INVALID || r->rkey != req->rkey)
		return IBK_MEM_ERR_KEY;
	if (r->pd != qp->pd)
		return IBK_MEM_ERR_PD;
	if (r->kind == IBK_MEM_MW2 && r->qpn != qp->qpn)
		return IBK_MEM_ERR_WINDOW_QP;
	if (window && r->length == 0)
		return IBK_MEM_ERR_UNBOUND;
	if (req->access & ~r->access)
		return IBK_MEM_ERR_ACCESS;
	if (r->state != IBK_MEM_VALID)
		return IBK_MEM_ERR_STATE;
	/* zero-based: a window's offsets from 0; a region keeps its iova
	 * (rxe check_rkey(), mr_check_range()) */
	base = window && (r->access & IBK_ACCESS_ZERO_BASED) ? 0 : r->addr;
	if (!model_in(req->va, req->length, base, r->length))
		return IBK_MEM_ERR_RANGE;
	if (window && !model_in_mr(req, r, mr))
		return IBK_MEM_ERR_RANGE;
	if (req->atomic && (req->va & 7))
		return IBK_MEM_ERR_ALIGN;
	return IBK_MEM_OK;
}

/* ---- Text: GUIDs and the explainer's numbers ---- */

/* GUID text: the grammar of ibk_guid_pton()'s comment, checked character
 * by character; the value from glibc's strtoull(). */
static inline bool model_guid_pton(const char *s, uint64_t *out)
{
	char digits[17];
	size_t n = 0, i;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		for (i = 2; s[i]; i++) {
			if (!isxdigit((unsigned char)s[i]) || n == 16)
				return false;
			digits[n++] = s[i];
		}
		if (n == 0)
			return false;
	} else {
		if (strlen(s) != 19)
			return false;
		for (i = 0; i < 19; i++) {
			if (i % 5 == 4) {
				if (s[i] != ':')
					return false;
			} else if (!isxdigit((unsigned char)s[i])) {
				return false;
			} else {
				digits[n++] = s[i];
			}
		}
	}
	digits[n] = '\0';
	*out = strtoull(digits, NULL, 16);
	return true;
}

/* A number as the explainer's usage says: decimal, or "0x"/"0X" and hex
 * digits, nothing else, at most @max; the value accumulated here. */
static inline bool model_number(const char *s, uint64_t max, uint64_t *out)
{
	unsigned base = 10;
	model_u128 v = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		unsigned d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (base == 16 && isxdigit(c))
			d = (unsigned)(tolower(c) - 'a' + 10);
		else
			return false;
		v = v * base + d;
		if (v > max)
			return false;
	}
	*out = (uint64_t)v;
	return true;
}

/* ---- A table's port state, refill flag and change events ---- */

struct model_status {
	unsigned state;		/* enum ibk_port_state */
	bool awaiting;		/* awaiting a refill */
	uint32_t events;	/* change events: a ticket goes stale */
	uint32_t updates;	/* published updates: a reference goes stale */
};

static inline void model_status_init(struct model_status *s)
{
	s->state = IBK_PORT_DOWN;
	s->awaiting = true;	/* nothing read from a device yet */
	s->events = 0;
	s->updates = 0;
}

static inline bool model_state_readable(unsigned state)
{
	return state == IBK_PORT_ARMED || state == IBK_PORT_ACTIVE ||
	       state == IBK_PORT_ACTIVE_DEFER;
}

/* What every read answers before it looks at an entry. */
static inline int model_read_rc(const struct model_status *s)
{
	if (!model_state_readable(s->state))
		return IBK_ENOTREADY;
	return s->awaiting ? IBK_ESTALE : IBK_OK;
}

/*
 * One update of the state (0: keep it) and/or the refill flag: marking
 * the table awaiting a refill is a change event, leaving ARMED/ACTIVE
 * marks it, entering them from any other state marks it (a ticket from
 * before the port came up is refused, whatever the order),
 * and so does any change of state while it awaits one; setting the state
 * it already has is no event.
 */
static inline void model_status_update(struct model_status *s,
				       unsigned state, bool mark)
{
	bool event = mark;

	if (state) {
		if (!model_state_readable(state) ||
		    !model_state_readable(s->state))
			event = mark = true;
		else if (s->awaiting && state != s->state)
			event = true;
		s->state = state;
	}
	s->awaiting |= mark;
	s->events += event;
	s->updates++;
}

/* What a read of entry @index answers before it looks at the entry. */
static inline int model_entry_rc(const struct model_status *s,
				 uint32_t capacity, uint32_t index)
{
	return index >= capacity ? IBK_ERANGE : model_read_rc(s);
}

static inline int model_set_state(struct model_status *s, unsigned state)
{
	if (state < IBK_PORT_DOWN || state > IBK_PORT_ACTIVE_DEFER)
		return IBK_EINVAL;
	model_status_update(s, state, false);
	return IBK_OK;
}

/* A refill with a ticket taken when s->events was @ticket_events: a
 * change event since refuses it, and so does a port not ARMED or ACTIVE
 * (the device's table is undefined then). */
static inline int model_refill_begin(struct model_status *s,
				     uint32_t ticket_events)
{
	if (ticket_events != s->events)
		return IBK_ESTALE;
	if (!model_state_readable(s->state))
		return IBK_ENOTREADY;
	s->awaiting = false;
	s->updates++;
	return IBK_OK;
}

/* ---- P_Key table: entries as stored, scanned in index order ---- */

struct model_pkeys {
	uint32_t capacity;
	uint16_t e[MODEL_MAX_CAPACITY];
	struct model_status st;
};

static inline void model_pkeys_init(struct model_pkeys *m, uint32_t capacity)
{
	m->capacity = capacity;
	memset(m->e, 0, sizeof(m->e));
	model_status_init(&m->st);
}

static inline int model_pkeys_refill(struct model_pkeys *m,
				     const uint16_t *keys, uint32_t n,
				     uint32_t ticket_events)
{
	int rc;

	if (n > m->capacity)
		return IBK_ENOSPC;
	rc = model_refill_begin(&m->st, ticket_events);
	if (rc != IBK_OK)
		return rc;
	for (uint32_t i = 0; i < m->capacity; i++)
		m->e[i] = i < n ? keys[i] : 0;
	return IBK_OK;
}

static inline int model_pkeys_set(struct model_pkeys *m, uint32_t index,
				  uint16_t pkey)
{
	if (index >= m->capacity)
		return IBK_ERANGE;
	m->e[index] = pkey;
	m->st.updates++;
	m->st.events++;		/* a set is a change: older tickets go stale */
	return IBK_OK;
}

static inline int model_pkeys_get(const struct model_pkeys *m, uint32_t index,
				  uint16_t *pkey)
{
	int rc = model_entry_rc(&m->st, m->capacity, index);

	if (rc != IBK_OK)
		return rc;
	if (!model_pkey_valid(m->e[index]))
		return IBK_ENOENT;
	*pkey = m->e[index];
	return IBK_OK;
}

/* Find by value: the partition's full entry with the lowest index, else
 * its limited one with the lowest index. */
static inline int model_pkeys_find(const struct model_pkeys *m, uint16_t pkey,
				   uint16_t *found)
{
	int rc, limited = -1;

	if (!model_pkey_valid(pkey))
		return IBK_EINVAL;
	rc = model_read_rc(&m->st);
	if (rc != IBK_OK)
		return rc;
	for (uint32_t i = 0; i < m->capacity; i++) {
		if ((m->e[i] & 0x7fff) != (pkey & 0x7fff))
			continue;
		if (m->e[i] & 0x8000) {
			*found = m->e[i];
			return (int)i;
		}
		if (limited < 0)
			limited = (int)i;
	}
	if (limited < 0)
		return IBK_ENOENT;
	*found = m->e[limited];
	return limited;
}

static inline int model_pkeys_find_exact(const struct model_pkeys *m,
					 uint16_t pkey)
{
	int rc;

	if (!model_pkey_valid(pkey))
		return IBK_EINVAL;
	rc = model_read_rc(&m->st);
	if (rc != IBK_OK)
		return rc;
	for (uint32_t i = 0; i < m->capacity; i++)
		if (m->e[i] == pkey)
			return (int)i;
	return IBK_ENOENT;
}

/* ---- GID table ---- */

struct model_gid_entry {
	uint8_t raw[16];
	int type;
};

struct model_gids {
	uint32_t capacity;
	struct model_gid_entry e[MODEL_MAX_CAPACITY];
	struct model_status st;
};

static inline bool model_gid_zero(const uint8_t *raw)
{
	for (int i = 0; i < 16; i++)
		if (raw[i])
			return false;
	return true;
}

static inline bool model_gid_type_valid(int type)
{
	return type == IBK_GID_TYPE_IB || type == IBK_GID_TYPE_ROCE_V1 ||
	       type == IBK_GID_TYPE_ROCE_V2;
}

static inline void model_gids_init(struct model_gids *m, uint32_t capacity)
{
	m->capacity = capacity;
	memset(m->e, 0, sizeof(m->e));	/* zero GIDs, type IB (0) */
	model_status_init(&m->st);
}

/* An entry as stored: an all-zero GID is empty, with type IB. */
static inline void model_gid_store(struct model_gid_entry *e,
				   const uint8_t *raw, int type)
{
	memcpy(e->raw, raw, 16);
	e->type = model_gid_zero(raw) ? IBK_GID_TYPE_IB : type;
}

static inline int model_gids_refill(struct model_gids *m,
				    const struct model_gid_entry *in,
				    uint32_t n, uint32_t ticket_events)
{
	static const uint8_t zero[16];
	int rc;

	if (n > m->capacity)
		return IBK_ENOSPC;
	for (uint32_t i = 0; i < n; i++)
		if (!model_gid_type_valid(in[i].type) &&
		    !model_gid_zero(in[i].raw))
			return IBK_EINVAL;
	rc = model_refill_begin(&m->st, ticket_events);
	if (rc != IBK_OK)
		return rc;
	for (uint32_t i = 0; i < m->capacity; i++) {
		if (i < n)
			model_gid_store(&m->e[i], in[i].raw, in[i].type);
		else
			model_gid_store(&m->e[i], zero, IBK_GID_TYPE_IB);
	}
	return IBK_OK;
}

static inline int model_gids_set(struct model_gids *m, uint32_t index,
				 const uint8_t *raw, int type)
{
	if (index >= m->capacity)
		return IBK_ERANGE;
	if (!model_gid_zero(raw) && !model_gid_type_valid(type))
		return IBK_EINVAL;
	model_gid_store(&m->e[index], raw, type);
	m->st.updates++;
	m->st.events++;		/* a set is a change: older tickets go stale */
	return IBK_OK;
}

static inline int model_gids_get(const struct model_gids *m, uint32_t index)
{
	int rc = model_entry_rc(&m->st, m->capacity, index);

	if (rc != IBK_OK)
		return rc;
	return model_gid_zero(m->e[index].raw) ? IBK_ENOENT : IBK_OK;
}

/* The lowest index holding @raw with @type, or any type for ANY. */
static inline int model_gids_find(const struct model_gids *m,
				  const uint8_t *raw, int type)
{
	int rc;

	if (model_gid_zero(raw) ||
	    (type != IBK_GID_TYPE_ANY && !model_gid_type_valid(type)))
		return IBK_EINVAL;
	rc = model_read_rc(&m->st);
	if (rc != IBK_OK)
		return rc;
	for (uint32_t i = 0; i < m->capacity; i++)
		if (memcmp(m->e[i].raw, raw, 16) == 0 &&
		    (type == IBK_GID_TYPE_ANY || m->e[i].type == type))
			return (int)i;
	return IBK_ENOENT;
}

/* ---- A port: the receive checks that need its P_Key table ---- */

/* ibk_port_rx() on the port whose P_Key table @m models (port_model.h). */
static inline enum ibk_rx_verdict
model_pkeys_port_rx(const struct model_pkeys *m, const struct ibk_qp_keys *qp,
		    const uint8_t *bth, const uint8_t *deth, uint16_t *index)
{
	return model_port_rx(m->e, m->capacity,
			     model_read_rc(&m->st) == IBK_OK, qp, bth, deth,
			     index);
}

/* ---- PortInfo's 16-bit violation counters (IBA 14.2.5.6) ---- */

static inline void model_counter_add(uint32_t *c, uint32_t n)
{
	*c = *c + n > 0xffff ? 0xffff : *c + n;
}

/* ---- References: fresh exactly while their table published nothing ---- */

#define MODEL_REFS 8

struct model_ref {
	bool taken;		/* a successful take */
	uint32_t updates;	/* the table's updates when taken */
	uint32_t generation;	/* what the library put in it */
};

/*
 * Records a take of reference @k: @ok whether it succeeded, @generation
 * what it holds. A failed take holds IBK_GENERATION_NEVER; a successful
 * one a generation that is never that, and equal to another reference's
 * exactly when both were taken between the same two updates.
 */
static inline void model_ref_taken(struct model_ref *refs, unsigned k,
				   bool ok, uint32_t generation,
				   uint32_t updates)
{
	FZ_CHECK(ok ? generation != IBK_GENERATION_NEVER :
		 generation == IBK_GENERATION_NEVER,
		 "reference generation %u after %s", generation,
		 ok ? "a take" : "a failed take");
	for (unsigned j = 0; ok && j < MODEL_REFS; j++)
		if (j != k && refs[j].taken)
			FZ_CHECK((refs[j].updates == updates) ==
				 (refs[j].generation == generation),
				 "references %u and %u: updates %u and %u, "
				 "generations %u and %u", j, k,
				 refs[j].updates, updates, refs[j].generation,
				 generation);
	refs[k].taken = ok;
	refs[k].updates = updates;
	refs[k].generation = generation;
}

/* Whether reference @k should read fresh now, @updates later. */
static inline bool model_ref_fresh(const struct model_ref *refs, unsigned k,
				   uint32_t updates)
{
	return refs[k].taken && refs[k].updates == updates;
}

#endif /* IBK_FUZZ_MODEL_H */
