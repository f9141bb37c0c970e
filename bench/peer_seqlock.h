/* SPDX-License-Identifier: MIT */
/*
 * peer_seqlock.h - a peer cache of one copy under a sequence lock (see
 * peer_ck.c, peer_rte.c): readers retry their read section while a write
 * is in progress or happened under them; writers change the copy in place
 * inside the write section. The including file defines:
 *
 *   struct peer_lock                    the library's lock
 *   PEER_LOCK_INIT(l)
 *   PEER_READ_BEGIN(l), PEER_READ_RETRY(l, sn)    (sn an unsigned)
 *   PEER_WRITE_BEGIN(l), PEER_WRITE_END(l)
 *   PEER_NAME, PEER_OPS
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

struct peer {
	struct peer_lock lock;
	uint32_t len;
	uint16_t *table;
};

#define PEER_READ(p, t, body) do {					\
		const uint16_t *t = (p)->table;				\
		unsigned seq_;						\
									\
		do {							\
			seq_ = PEER_READ_BEGIN(&(p)->lock);		\
			body;						\
		} while (PEER_READ_RETRY(&(p)->lock, seq_));		\
	} while (0)

static void *peer_create(const uint16_t *table, uint32_t len)
{
	struct peer *p = bench_alloc(sizeof(*p));

	PEER_LOCK_INIT(&p->lock);
	p->len = len;
	p->table = bench_alloc(len * sizeof(*p->table));
	memcpy(p->table, table, len * sizeof(*p->table));
	return p;
}

static void peer_destroy(void *cache)
{
	struct peer *p = cache;

	free(p->table);
	free(p);
}

static void peer_refill(void *cache, const uint16_t *table)
{
	struct peer *p = cache;

	PEER_WRITE_BEGIN(&p->lock);
	memcpy(p->table, table, p->len * sizeof(*p->table));
	PEER_WRITE_END(&p->lock);
}

static int peer_set(void *cache, uint32_t index, uint16_t pkey)
{
	struct peer *p = cache;

	if (index >= p->len)
		return -1;
	PEER_WRITE_BEGIN(&p->lock);
	p->table[index] = pkey;
	PEER_WRITE_END(&p->lock);
	return 0;
}

#define PEER_ONLINE NULL
#define PEER_OFFLINE NULL
#define PEER_EXIT NULL
#define PEER_QUIESCE NULL
#include "peer_template.h"
