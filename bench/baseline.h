/* SPDX-License-Identifier: MIT */
/*
 * baseline.h - the code a user writes when not using ibkeys, written the
 * plain way: branches where the rule reads as a branch, a linear scan where
 * the table is a list, a pthread_rwlock around a shared cache as the Linux
 * kernel's RDMA core guards its P_Key and GID caches. None of it includes
 * ibkeys: each case checks that it gives the library's answers.
 */
#ifndef IBK_BENCH_BASELINE_H
#define IBK_BENCH_BASELINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t base_load_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t base_load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* P_Keys: equal non-zero bases, at least one full member. */
static inline bool base_pkey_match(uint16_t a, uint16_t b)
{
	if ((a & 0x7fff) != (b & 0x7fff))
		return false;
	if ((a & 0x7fff) == 0)
		return false;
	return (a & 0x8000) || (b & 0x8000);
}

enum base_verdict {
	BASE_ACCEPT, BASE_DROP_PKEY, BASE_DROP_QKEY,
	BASE_DROP_PKEY_INDEX,	/* the QP's P_Key index is out of range */
	BASE_DROP_TVER,		/* BTH TVer not 0 */
	BASE_DROP_OPCODE,	/* opcode not of the QP's transport */
	BASE_VERDICTS
};

/* A QP as a driver's receive path keeps it: RC or UD (QP1 is UD). */
struct base_qp {
	bool ud;
	uint16_t pkey_index;
	uint32_t qkey;			/* UD only */
	bool gsi;			/* QP1: rxe_check_keys() only */
};

/*
 * The checks of one packet to @qp, whose P_Key (the entry at its index)
 * is @qp_pkey, branch by branch in the receiver's order: TVer, the
 * opcode's transport (UD: SEND only, with or without immediate), the
 * P_Key, and for UD the DETH's Q_Key. @h is the BTH, the DETH after it.
 */
static inline enum base_verdict base_rx_packet(const struct base_qp *qp,
					       uint16_t qp_pkey,
					       const uint8_t *h)
{
	if ((h[1] & 0x0f) != 0)
		return BASE_DROP_TVER;
	if (qp->ud ? (h[0] & 0xfe) != 0x64 : (h[0] & 0xe0) != 0)
		return BASE_DROP_OPCODE;
	if (!base_pkey_match(base_load_be16(h + 2), qp_pkey))
		return BASE_DROP_PKEY;
	if (qp->ud && base_load_be32(h + 12) != qp->qkey)
		return BASE_DROP_QKEY;
	return BASE_ACCEPT;
}

/* UD receive, packet by packet: hdrs[i] is a BTH followed by its DETH. */
static inline size_t base_rx_ud(uint16_t qp_pkey, uint32_t qp_qkey,
				const void *const *hdrs, uint8_t *verdicts,
				size_t n)
{
	struct base_qp qp = { true, 0, qp_qkey, false };
	size_t accepted = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		verdicts[i] = (uint8_t)base_rx_packet(&qp, qp_pkey,
						      (const uint8_t *)hdrs[i]);
		accepted += verdicts[i] == BASE_ACCEPT;
	}
	return accepted;
}

/*
 * Find by value the kernel's way: scan for an equal base, return the first
 * full member at once, else the first limited one; -1 if none.
 */
static inline int base_pkey_find(const uint16_t *table, size_t len,
				 uint16_t pkey)
{
	int limited = -1;
	size_t i;

	if ((pkey & 0x7fff) == 0)
		return -1;
	for (i = 0; i < len; i++) {
		if ((table[i] & 0x7fff) != (pkey & 0x7fff))
			continue;
		if (table[i] & 0x8000)
			return (int)i;
		if (limited < 0)
			limited = (int)i;
	}
	return limited;
}

/* Find a GID: compare every 16-byte entry; -1 if none. */
static inline int base_gid_find(const uint8_t (*table)[16], size_t len,
				const uint8_t *gid)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!memcmp(table[i], gid, 16))
			return (int)i;
	return -1;
}

/* A P_Key cache shared by threads, guarded by a reader-writer lock. */
struct base_pkey_cache {
	pthread_rwlock_t lock;
	uint16_t *table;
	size_t len;
};

/* Index read: rdlock, bounds check, copy out, unlock. */
static inline int base_cache_get(struct base_pkey_cache *c, size_t index,
				 uint16_t *pkey)
{
	int ret = -1;

	pthread_rwlock_rdlock(&c->lock);
	if (index < c->len) {
		*pkey = c->table[index];
		ret = 0;
	}
	pthread_rwlock_unlock(&c->lock);
	return ret;
}

/* Find by value as the kernel's ib_find_cached_pkey(): rdlock, scan the
 * table (base_pkey_find()), unlock. */
static inline int base_cache_find(struct base_pkey_cache *c, uint16_t pkey)
{
	int index;

	pthread_rwlock_rdlock(&c->lock);
	index = base_pkey_find(c->table, c->len, pkey);
	pthread_rwlock_unlock(&c->lock);
	return index;
}

/* One entry changed: wrlock, bounds check, store, unlock. */
static inline int base_cache_set(struct base_pkey_cache *c, size_t index,
				 uint16_t pkey)
{
	int ret = -1;

	pthread_rwlock_wrlock(&c->lock);
	if (index < c->len) {
		c->table[index] = pkey;
		ret = 0;
	}
	pthread_rwlock_unlock(&c->lock);
	return ret;
}

/* Refill after a change event: wrlock, copy the new table in, unlock. */
static inline void base_cache_refill(struct base_pkey_cache *c,
				     const uint16_t *table, size_t len)
{
	pthread_rwlock_wrlock(&c->lock);
	memcpy(c->table, table, len * sizeof(*table));
	c->len = len;
	pthread_rwlock_unlock(&c->lock);
}

/* A port's violation counters, plain: one thread receives. */
struct base_port_counters {
	uint64_t pkey_violations;
	uint64_t qkey_violations;
};

/* Counts a violation verdict; returns 1 for an accepted packet. */
static inline size_t base_port_count(struct base_port_counters *counters,
				     enum base_verdict v)
{
	if (v == BASE_DROP_PKEY)
		counters->pkey_violations++;
	else if (v == BASE_DROP_QKEY)
		counters->qkey_violations++;
	return v == BASE_ACCEPT;
}

/* The verdict of one packet to @qp from a table read under the caller's
 * lock: the entry at the QP's P_Key index, bounds-checked. */
static inline enum base_verdict base_port_packet(const struct base_pkey_cache *c,
						 const struct base_qp *qp,
						 const uint8_t *h)
{
	if (qp->pkey_index >= c->len)
		return BASE_DROP_PKEY_INDEX;
	return base_rx_packet(qp, c->table[qp->pkey_index], h);
}

/*
 * A port's receive path with the QP's P_Key in a shared cache, the Linux
 * kernel's way, for one packet: rdlock, read the entry at the QP's P_Key
 * index (bounds-checked), unlock, then base_rx_packet()'s checks; a
 * violation bumps its counter. Returns 1 for an accepted packet.
 */
static inline size_t base_port_rx_one(struct base_pkey_cache *c,
				      struct base_port_counters *counters,
				      const struct base_qp *qp, const void *h,
				      uint8_t *verdict)
{
	enum base_verdict v = BASE_DROP_PKEY_INDEX;
	uint16_t qp_pkey;

	if (!base_cache_get(c, qp->pkey_index, &qp_pkey))
		v = base_rx_packet(qp, qp_pkey, (const uint8_t *)h);
	*verdict = (uint8_t)v;
	return base_port_count(counters, v);
}

/* base_port_rx_one() packet by packet, packet i to qps[i]. */
static inline size_t base_port_rx(struct base_pkey_cache *c,
				  struct base_port_counters *counters,
				  const struct base_qp *const *qps,
				  const void *const *hdrs, uint8_t *verdicts,
				  size_t n)
{
	size_t accepted = 0;
	size_t i;

	for (i = 0; i < n; i++)
		accepted += base_port_rx_one(c, counters, qps[i], hdrs[i],
					     &verdicts[i]);
	return accepted;
}

/* base_port_rx() with the rdlock taken once for the whole burst: what a
 * user who knows the cost of the lock writes. */
static inline size_t base_port_rx_locked_burst(struct base_pkey_cache *c,
					       struct base_port_counters *counters,
					       const struct base_qp *const *qps,
					       const void *const *hdrs,
					       uint8_t *verdicts, size_t n)
{
	size_t accepted = 0;
	size_t i;

	pthread_rwlock_rdlock(&c->lock);
	for (i = 0; i < n; i++) {
		verdicts[i] = (uint8_t)base_port_packet(c, qps[i],
						(const uint8_t *)hdrs[i]);
		accepted += base_port_count(counters,
					    (enum base_verdict)verdicts[i]);
	}
	pthread_rwlock_unlock(&c->lock);
	return accepted;
}

/* base_port_rx() for a burst to one UD QP. */
static inline size_t base_port_rx_ud(struct base_pkey_cache *c,
				     struct base_port_counters *counters,
				     size_t pkey_index, uint32_t qp_qkey,
				     const void *const *hdrs,
				     uint8_t *verdicts, size_t n)
{
	struct base_qp qp = { true, (uint16_t)pkey_index, qp_qkey, false };
	size_t accepted = 0;
	size_t i;

	for (i = 0; i < n; i++)
		accepted += base_port_rx_one(c, counters, &qp, hdrs[i],
					     &verdicts[i]);
	return accepted;
}

/* ------------------------------------------------------------------------
 * Soft-RoCE's per-packet key checks, restated
 *
 * What a stack has today: the Linux soft-RoCE driver's receive checks
 * (rxe_recv.c: hdr_check(), check_type_state(), then check_keys()),
 * written here from their rules, from check_keys() as it was while rxe
 * kept a P_Key table (torvalds/linux rxe_recv.c at 008ecca7921d, before
 * "RDMA/rxe: Remove pkey table"). Linux 6.1's check_keys() is the same
 * but for the P_Key, which it compares with the default key 0xffff alone:
 * its rxe has no table to look in.
 *  - TVer not 0: dropped (hdr_check());
 *  - the opcode's transport (bits 7-5) not the QP's: dropped
 *    (check_type_state(), the pkt->opcode & 0xe0 form);
 *  - P_Key, by pkey_match(): QP1 takes the first entry of the table that
 *    matches, scanning from index 0, any other QP the entry at its P_Key
 *    index; none is a P_Key violation (set_bad_pkey_cntr());
 *  - Q_Key, for UD and GSI QPs: equal to GSI_QKEY (0x80010000) for QP1,
 *    to the QP's own for the others, else a Q_Key violation
 *    (set_qkey_viol_cntr()).
 * Where it decides otherwise than the library, the cases never go:
 *  - a UD QP takes any opcode of the UD transport (0x60-0x7f), the
 *    library only the two SEND only ones (0x64, 0x65): the cases send a
 *    UD QP those two only;
 *  - the QP's P_Key index is not range-checked here (rxe checked it when
 *    the QP was modified), and the port's state is not looked at: the
 *    cases' QPs index inside an ACTIVE port's table;
 *  - rxe's counters saturate at 0xffff and take its port lock per bump;
 *    here they are base_port_counters, bumped by one receiving thread.
 * So on the cases' inputs every verdict is one the library gives too,
 * and the cases compare all of them.
 * ------------------------------------------------------------------------ */

#define BASE_RXE_GSI_QKEY 0x80010000u

/* hdr_check()'s TVer and check_type_state()'s transport, for @qp. */
static inline enum base_verdict base_rxe_header(const struct base_qp *qp,
						const uint8_t *h)
{
	if ((h[1] & 0x0f) != 0)
		return BASE_DROP_TVER;
	if ((h[0] & 0xe0) != (qp->ud ? 0x60 : 0x00))
		return BASE_DROP_OPCODE;
	return BASE_ACCEPT;
}

/* check_keys() for a packet @h to @qp on a port whose P_Key table is
 * @table, @len entries: the P_Key, then a datagram QP's Q_Key. */
static inline enum base_verdict base_rxe_check_keys(const uint16_t *table,
						    size_t len,
						    const struct base_qp *qp,
						    const uint8_t *h)
{
	uint16_t pkey = base_load_be16(h + 2);
	size_t i = 0;

	if (qp->gsi) {
		while (i < len && !base_pkey_match(pkey, table[i]))
			i++;
		if (i == len)
			return BASE_DROP_PKEY;
	} else if (!base_pkey_match(pkey, table[qp->pkey_index])) {
		return BASE_DROP_PKEY;
	}
	if (qp->ud && base_load_be32(h + 12) !=
		      (qp->gsi ? BASE_RXE_GSI_QKEY : qp->qkey))
		return BASE_DROP_QKEY;
	return BASE_ACCEPT;
}

/* UD receive as rxe checks it, packet by packet, the QP's key the one
 * entry of its table. */
static inline size_t base_rxe_rx_ud(uint16_t qp_pkey, uint32_t qp_qkey,
				    const void *const *hdrs, uint8_t *verdicts,
				    size_t n)
{
	struct base_qp qp = { true, 0, qp_qkey, false };
	size_t accepted = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		const uint8_t *h = (const uint8_t *)hdrs[i];
		enum base_verdict v = base_rxe_header(&qp, h);

		if (v == BASE_ACCEPT)
			v = base_rxe_check_keys(&qp_pkey, 1, &qp, h);
		verdicts[i] = (uint8_t)v;
		accepted += v == BASE_ACCEPT;
	}
	return accepted;
}

/*
 * A port's receive path as rxe checks it, packet i to qps[i], with the
 * table in the shared cache: the header checks, then check_keys() under
 * the cache's rdlock, taken and dropped per packet as in base_port_rx();
 * a violation bumps its counter. Returns the number accepted.
 */
static inline size_t base_rxe_port_rx(struct base_pkey_cache *c,
				      struct base_port_counters *counters,
				      const struct base_qp *const *qps,
				      const void *const *hdrs,
				      uint8_t *verdicts, size_t n)
{
	size_t accepted = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		const uint8_t *h = (const uint8_t *)hdrs[i];
		enum base_verdict v = base_rxe_header(qps[i], h);

		if (v == BASE_ACCEPT) {
			pthread_rwlock_rdlock(&c->lock);
			v = base_rxe_check_keys(c->table, c->len, qps[i], h);
			pthread_rwlock_unlock(&c->lock);
		}
		verdicts[i] = (uint8_t)v;
		accepted += base_port_count(counters, v);
	}
	return accepted;
}

/* ------------------------------------------------------------------------
 * Memory keys: the responder's R_Key check the plain way
 * ------------------------------------------------------------------------ */

enum base_mem_verdict {
	BASE_MEM_OK, BASE_MEM_NO_RKEY, BASE_MEM_DROP, BASE_MEM_BAD_OPCODE,
	BASE_MEM_QP_ACCESS, BASE_MEM_LENGTH, BASE_MEM_KEY, BASE_MEM_PD,
	BASE_MEM_WINDOW_QP, BASE_MEM_UNBOUND, BASE_MEM_ACCESS,
	BASE_MEM_STATE, BASE_MEM_RANGE, BASE_MEM_ALIGN
};

/* A region or window as a driver's array holds it. */
struct base_mem_object {
	uint64_t addr, length;
	uint32_t rkey, pd, access, qpn;
	uint8_t is_window, is_type2, valid, live;
};

struct base_mem_qp {
	uint32_t qpn, pd, access;	/* access: 2 write, 4 read, 8 atomic */
};

static inline uint64_t base_load_be64(const uint8_t *p)
{
	return (uint64_t)base_load_be32(p) << 32 | base_load_be32(p + 4);
}

/*
 * An RC request's check, branch by branch: opcode, the QP's access flags,
 * the DMA length, zero length, then the object at the key's index: key,
 * PD, window QP, unbound window, access, state, range (overflow-checked),
 * atomic alignment.
 */
static inline enum base_mem_verdict
base_mem_check(const struct base_mem_object *objects, size_t n,
	       const struct base_mem_qp *qp, const uint8_t *bth)
{
	const struct base_mem_object *o;
	const uint8_t *ext = bth + 12;
	uint64_t va, base, len;
	uint32_t rkey, access;
	size_t index;
	int atomic = 0;

	if ((bth[1] & 0x0f) != 0 || (bth[0] & 0xe0) != 0)
		return BASE_MEM_DROP;
	switch (bth[0]) {
	case 0x06: case 0x0a: case 0x0b:	/* RDMA WRITE first/only */
		access = 2;
		break;
	case 0x0c:				/* RDMA READ request */
		access = 4;
		break;
	case 0x13: case 0x14:			/* COMPARE SWAP, FETCH ADD */
		access = 8;
		atomic = 1;
		break;
	case 0x1c:				/* FLUSH */
		return BASE_MEM_BAD_OPCODE;
	default:
		return BASE_MEM_NO_RKEY;
	}
	if ((qp->access & access) != access)
		return BASE_MEM_QP_ACCESS;
	va = base_load_be64(ext);
	rkey = base_load_be32(ext + 8);
	len = atomic ? 8 : base_load_be32(ext + 12);
	if (!atomic) {
		if (len > 0x80000000u)
			return BASE_MEM_LENGTH;
		if (len == 0)
			return BASE_MEM_OK;
	}
	index = rkey >> 8;
	if (index >= n)
		return BASE_MEM_KEY;
	o = &objects[index];
	if (!o->live || o->rkey != rkey)
		return BASE_MEM_KEY;
	if (o->pd != qp->pd)
		return BASE_MEM_PD;
	if (o->is_type2 && o->qpn != qp->qpn)
		return BASE_MEM_WINDOW_QP;
	if (o->is_window && o->length == 0)
		return BASE_MEM_UNBOUND;
	if ((o->access & access) != access)
		return BASE_MEM_ACCESS;
	if (!o->valid)
		return BASE_MEM_STATE;
	base = (o->access & 0x20) ? 0 : o->addr;	/* zero-based */
	if (base + o->length < base || va + len < va || va < base ||
	    va + len > base + o->length)
		return BASE_MEM_RANGE;
	if (atomic && (va & 7))
		return BASE_MEM_ALIGN;
	return BASE_MEM_OK;
}

#endif
