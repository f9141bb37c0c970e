/* SPDX-License-Identifier: MIT */
/*
 * peer_rte.c - the DPDK peer: one copy of the table under an rte_seqlock
 * (rte_seqlock.h is header only: no EAL, no library to link). Readers
 * retry their read section as rte_seqlock_read_begin() and
 * rte_seqlock_read_retry() say; writers take rte_seqlock_write_lock(),
 * which serialises them with its spinlock, and change the copy in place.
 */
#include "bench.h"

#include <rte_seqlock.h>
#include <stdlib.h>
#include <string.h>

struct peer {
	rte_seqlock_t lock;
	uint32_t len;
	uint16_t *table;
};

/* The read section: rte_seqlock_read_begin()'s acquire load and
 * _read_retry()'s acquire fence pair with the write lock's release
 * stores. */
#define PEER_READ(p, t, body) do {					\
		const uint16_t *t = (p)->table;				\
		uint32_t sn_;						\
									\
		do {							\
			sn_ = rte_seqlock_read_begin(&(p)->lock);	\
			body;						\
		} while (rte_seqlock_read_retry(&(p)->lock, sn_));	\
	} while (0)

static void *peer_create(const uint16_t *table, uint32_t len)
{
	struct peer *p = bench_alloc(sizeof(*p));

	rte_seqlock_init(&p->lock);
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

	rte_seqlock_write_lock(&p->lock);
	memcpy(p->table, table, p->len * sizeof(*p->table));
	rte_seqlock_write_unlock(&p->lock);
}

static int peer_set(void *cache, uint32_t index, uint16_t pkey)
{
	struct peer *p = cache;

	if (index >= p->len)
		return -1;
	rte_seqlock_write_lock(&p->lock);
	p->table[index] = pkey;
	rte_seqlock_write_unlock(&p->lock);
	return 0;
}

#define PEER_ONLINE NULL
#define PEER_OFFLINE NULL
#define PEER_EXIT NULL
#define PEER_QUIESCE NULL
#define PEER_NAME "rte_seqlock"
#define PEER_OPS bench_peer_rte_seqlock
#include "peer_template.h"
