/* SPDX-License-Identifier: MIT */
/*
 * peer_urcu.h - the liburcu peer cache, for the flavour whose header the
 * including file took (<urcu-qsbr.h> or <urcu.h>, memb) with _LGPL_SOURCE,
 * so that the read side inlines as liburcu's documentation advises for
 * speed. PEER_QSBR is 1 for QSBR: its readers are online only while they
 * read and report a quiescent state between bursts; memb's take
 * rcu_read_lock() per read. Every change publishes a fresh copy.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct peer {
	uint16_t *table;		/* RCU-protected: the current copy */
	uint32_t len;
};

#define PEER_READ(p, t, body) do {					\
		const uint16_t *t;					\
									\
		rcu_read_lock();					\
		t = rcu_dereference((p)->table);			\
		body;							\
		rcu_read_unlock();					\
	} while (0)

/* Whether this thread registered with this flavour. */
static _Thread_local int peer_registered;

static void peer_online(void)
{
	if (!peer_registered) {
		rcu_register_thread();
		peer_registered = 1;
#if PEER_QSBR
		return;			/* registered QSBR threads are online */
#endif
	}
#if PEER_QSBR
	rcu_thread_online();
#endif
}

static void peer_exit(void)
{
	if (peer_registered)
		rcu_unregister_thread();
	peer_registered = 0;
}

static uint16_t *peer_copy(const uint16_t *table, uint32_t len)
{
	uint16_t *t = malloc(len * sizeof(*t));

	if (!t) {
		fprintf(stderr, "bench: out of memory for an RCU copy\n");
		exit(2);
	}
	return memcpy(t, table, len * sizeof(*t));
}

static void *peer_create(const uint16_t *table, uint32_t len)
{
	struct peer *p = bench_alloc(sizeof(*p));

	p->len = len;
	p->table = peer_copy(table, len);
	return p;
}

static void peer_destroy(void *cache)
{
	struct peer *p = cache;

	free(p->table);
	free(p);
}

/* Publishes @t and frees the copy it replaces once no reader can hold it:
 * rcu_assign_pointer() pairs with the readers' rcu_dereference(). */
static void peer_publish(struct peer *p, uint16_t *t)
{
	uint16_t *old = p->table;

	rcu_assign_pointer(p->table, t);
	synchronize_rcu();
	free(old);
}

static void peer_refill(void *cache, const uint16_t *table)
{
	struct peer *p = cache;

	peer_publish(p, peer_copy(table, p->len));
}

static int peer_set(void *cache, uint32_t index, uint16_t pkey)
{
	struct peer *p = cache;
	uint16_t *t;

	if (index >= p->len)
		return -1;
	t = peer_copy(p->table, p->len);
	t[index] = pkey;
	peer_publish(p, t);
	return 0;
}

#if PEER_QSBR
static void peer_offline(void)
{
	rcu_thread_offline();
}

static void peer_quiesce(void)
{
	rcu_quiescent_state();
}

#define PEER_OFFLINE peer_offline
#define PEER_QUIESCE peer_quiesce
#else
#define PEER_OFFLINE NULL
#define PEER_QUIESCE NULL
#endif
#define PEER_ONLINE peer_online
#define PEER_EXIT peer_exit

#include "peer_template.h"
