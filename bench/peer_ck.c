/* SPDX-License-Identifier: MIT */
/*
 * peer_ck.c - the Concurrency Kit peer: one copy of the table under a
 * ck_sequence. Readers retry their read section while a write is in
 * progress or happened under them (ck_sequence_read_begin() spins while
 * the count is odd); writers, serialised by a ck_spinlock as CK's manual
 * asks ("after a successful mutex acquisition"), change the copy in place
 * between ck_sequence_write_begin() and ck_sequence_write_end().
 */
#include "bench.h"

#include <ck_sequence.h>
#include <ck_spinlock.h>
#include <stdlib.h>
#include <string.h>

struct peer {
	ck_sequence_t seq;
	ck_spinlock_t writer;
	uint32_t len;
	uint16_t *table;
};

/* The read section: ck_sequence_read_begin()'s load fence pairs with the
 * writer's store fences in ck_sequence_write_begin() and _end(). */
#define PEER_READ(p, t, body) do {					\
		const uint16_t *t = (p)->table;				\
		unsigned int seq_;					\
									\
		do {							\
			seq_ = ck_sequence_read_begin(&(p)->seq);	\
			body;						\
		} while (ck_sequence_read_retry(&(p)->seq, seq_));	\
	} while (0)

static void *peer_create(const uint16_t *table, uint32_t len)
{
	struct peer *p = bench_alloc(sizeof(*p));

	ck_sequence_init(&p->seq);
	ck_spinlock_init(&p->writer);
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

	ck_spinlock_lock(&p->writer);
	ck_sequence_write_begin(&p->seq);
	memcpy(p->table, table, p->len * sizeof(*p->table));
	ck_sequence_write_end(&p->seq);
	ck_spinlock_unlock(&p->writer);
}

static int peer_set(void *cache, uint32_t index, uint16_t pkey)
{
	struct peer *p = cache;

	if (index >= p->len)
		return -1;
	ck_spinlock_lock(&p->writer);
	ck_sequence_write_begin(&p->seq);
	p->table[index] = pkey;
	ck_sequence_write_end(&p->seq);
	ck_spinlock_unlock(&p->writer);
	return 0;
}

#define PEER_ONLINE NULL
#define PEER_OFFLINE NULL
#define PEER_EXIT NULL
#define PEER_QUIESCE NULL
#define PEER_NAME "ck_sequence"
#define PEER_OPS bench_peer_ck_sequence
#include "peer_template.h"
