/* SPDX-License-Identifier: MIT */
/*
 * peers.c - the peer caches this build has: each is compiled only when
 * meson found its library (BENCH_HAVE_*, bench/meson.build).
 */
#include "peers.h"

#include <string.h>

#include "ib_tables.h"

extern const struct bench_peer bench_peer_urcu_qsbr;
extern const struct bench_peer bench_peer_urcu_memb;
extern const struct bench_peer bench_peer_ck_sequence;
extern const struct bench_peer bench_peer_rte_seqlock;

const struct bench_peer *const bench_peers[] = {
#ifdef BENCH_HAVE_URCU
	&bench_peer_urcu_qsbr,
	&bench_peer_urcu_memb,
#endif
#ifdef BENCH_HAVE_CK
	&bench_peer_ck_sequence,
#endif
#ifdef BENCH_HAVE_RTE_SEQLOCK
	&bench_peer_rte_seqlock,
#endif
	NULL
};

const size_t bench_npeers = sizeof(bench_peers) / sizeof(bench_peers[0]) - 1;

const struct bench_peer *bench_peer_lookup(const char *name)
{
	size_t i;

	for (i = 0; i < bench_npeers; i++)
		if (!strcmp(bench_peers[i]->name, name))
			return bench_peers[i];
	return NULL;
}

int bench_peer_agrees(const struct bench_peer *peer, void *cache,
		      const struct ibk_pkey_table *t, uint32_t len,
		      const uint16_t *keys, size_t nkeys)
{
	uint16_t pkey = 0;
	uint32_t i;
	int ret = 0;

	if (peer->online)
		peer->online();
	for (i = 0; i < len && !ret; i++) {
		ibk_pkey_t lib = 0;

		if (ibk_pkey_table_get(t, i, &lib) ||
		    peer->get(cache, i, &pkey) || pkey != lib)
			ret = -1;
	}
	if (peer->get(cache, len, &pkey) != -1)
		ret = -1;
	for (i = 0; i < nkeys && !ret; i++) {
		int lib = ibk_pkey_table_find(t, keys[i], NULL);

		if (peer->find(cache, keys[i]) != (lib < 0 ? -1 : lib))
			ret = -1;
	}
	if (peer->offline)
		peer->offline();
	return ret;
}
