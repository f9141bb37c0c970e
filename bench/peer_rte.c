/* SPDX-License-Identifier: MIT */
/*
 * peer_rte.c - the DPDK peer: one copy of the table under an rte_seqlock
 * (peer_seqlock.h; rte_seqlock.h is header only: no EAL, no library to
 * link). rte_seqlock_read_begin()'s acquire load and _read_retry()'s
 * acquire fence pair with the write lock's release stores;
 * rte_seqlock_write_lock() serialises writers with its spinlock.
 */
#include <rte_seqlock.h>

struct peer_lock {
	rte_seqlock_t sl;
};

#define PEER_LOCK_INIT(l) rte_seqlock_init(&(l)->sl)
#define PEER_READ_BEGIN(l) rte_seqlock_read_begin(&(l)->sl)
#define PEER_READ_RETRY(l, sn) rte_seqlock_read_retry(&(l)->sl, sn)
#define PEER_WRITE_BEGIN(l) rte_seqlock_write_lock(&(l)->sl)
#define PEER_WRITE_END(l) rte_seqlock_write_unlock(&(l)->sl)

#define PEER_NAME "rte_seqlock"
#define PEER_OPS bench_peer_rte_seqlock
#include "peer_seqlock.h"
