/* SPDX-License-Identifier: MIT */
/*
 * peer_template.h - the read operations every peer cache shares, written
 * once around the peer's own read section. The including file defines:
 *
 *   struct peer                  with a uint32_t len
 *   PEER_READ(p, t, body)        runs body with `const uint16_t *t` the
 *                                copy to read, inside one read section
 *                                (retried as the library requires)
 *   peer_create, peer_destroy, peer_refill, peer_set
 *   PEER_ONLINE, PEER_OFFLINE, PEER_EXIT, PEER_QUIESCE: functions, or NULL
 *   PEER_NAME, PEER_OPS          the rows' token and the ops' symbol
 *
 * and includes this at its end.
 */
#include "bench.h"
#include "baseline.h"
#include "peers.h"

/* Inlined into the loop below; the get op is its out-of-line copy. */
static inline int peer_get_inline(struct peer *p, uint32_t index,
				  uint16_t *pkey)
{
	int ret;

	PEER_READ(p, t, ret = index < p->len ? (*pkey = t[index], 0) : -1);
	return ret;
}

static int peer_get(void *cache, uint32_t index, uint16_t *pkey)
{
	return peer_get_inline(cache, index, pkey);
}

static int peer_find(void *cache, uint16_t pkey)
{
	struct peer *p = cache;
	int index;

	PEER_READ(p, t, index = base_pkey_find(t, p->len, pkey));
	return index;
}

static uint64_t peer_get_loop(void *cache, const uint32_t *index,
			      uint32_t mask, uint64_t first, uint64_t iters)
{
	void (*online)(void) = PEER_ONLINE;
	void (*offline)(void) = PEER_OFFLINE;
	void (*quiesce)(void) = PEER_QUIESCE;
	struct peer *p = cache;
	uint64_t sum = 0;
	uint64_t i;

	if (online)
		online();
	for (i = 0; i < iters; i++) {
		uint16_t pkey = 0;

		sum += (uint64_t)peer_get_inline(p,
				index[(first + i) & mask], &pkey) + pkey;
		if (quiesce && i % BENCH_RX_BURST == BENCH_RX_BURST - 1)
			quiesce();
		BENCH_BARRIER();
	}
	if (offline)
		offline();
	return sum;
}

const struct bench_peer PEER_OPS = {
	.name = PEER_NAME,
	.create = peer_create,
	.destroy = peer_destroy,
	.online = PEER_ONLINE,
	.offline = PEER_OFFLINE,
	.exit = PEER_EXIT,
	.quiesce = PEER_QUIESCE,
	.get = peer_get,
	.find = peer_find,
	.get_loop = peer_get_loop,
	.refill = peer_refill,
	.set = peer_set,
};
