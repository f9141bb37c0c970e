/* SPDX-License-Identifier: MIT */
/*
 * peers.h - the P_Key cache a performance-minded user builds on a real
 * library instead of ibkeys, one per library, behind one set of operations
 * so that every case can time each beside the library:
 *
 *   urcu_qsbr    liburcu, QSBR flavour: readers pay nothing but a quiescent
 *                state per burst; the floor of what a reader can cost
 *   urcu_memb    liburcu, memb flavour (the default): read lock and unlock
 *   ck_sequence  Concurrency Kit's sequence lock around one copy
 *   rte_seqlock  DPDK's seqlock (rte_seqlock.h, header only) around one copy
 *
 * The RCU caches publish a fresh copy of the table for each change with
 * rcu_assign_pointer() and free the old one after synchronize_rcu(); the
 * sequence locks change their one copy inside the write section, which a
 * reader retries. Each has one writer at a time (the cases' writer thread).
 * Find is the Linux kernel's linear scan (base_pkey_find()) inside the
 * library's read section: none of them indexes by value.
 *
 * A peer is built only when its library's development package is installed
 * (bench/meson.build); bench_peers lists those that were.
 */
#ifndef IBK_BENCH_PEERS_H
#define IBK_BENCH_PEERS_H

#include <stddef.h>
#include <stdint.h>

struct bench_peer {
	const char *name;		/* the rows' base= token */
	/* a cache of @len entries holding @table; exits on failure */
	void *(*create)(const uint16_t *table, uint32_t len);
	void (*destroy)(void *cache);
	/*
	 * A reader thread's life: online before its reads (registers the
	 * thread with the library the first time), offline after them
	 * (QSBR: no longer holds grace periods back), exit before the thread
	 * ends (unregisters it). NULL where the library needs none of it.
	 */
	void (*online)(void);
	void (*offline)(void);
	void (*exit)(void);
	/* a QSBR reader's quiescent state between bursts, else NULL */
	void (*quiesce)(void);
	/* one read section: 0 and the entry, or -1 for an index too large */
	int (*get)(void *cache, uint32_t index, uint16_t *pkey);
	/* one read section: the kernel's scan; the index, or -1 */
	int (*find)(void *cache, uint16_t pkey);
	/*
	 * @iters gets at index[(first + i) & mask] as a reader loop does
	 * them, online and offline around the loop and a quiescent state
	 * every BENCH_RX_BURST reads: the sum of the entries read.
	 */
	uint64_t (*get_loop)(void *cache, const uint32_t *index, uint32_t mask,
			     uint64_t first, uint64_t iters);
	/* writers: all @len entries, or one */
	void (*refill)(void *cache, const uint16_t *table);
	int (*set)(void *cache, uint32_t index, uint16_t pkey);
};

extern const struct bench_peer *const bench_peers[];
extern const size_t bench_npeers;

/* The peer called @name, or NULL. */
const struct bench_peer *bench_peer_lookup(const char *name);

struct ibk_pkey_table;

/*
 * 0 if @peer's @cache gives the library's answers from table @t: the same
 * entry at every index below @len, -1 past it, and for each of the @nkeys
 * @keys the index ibk_pkey_table_find() returns (-1 where it finds none).
 * Neither may be written meanwhile.
 */
int bench_peer_agrees(const struct bench_peer *peer, void *cache,
		      const struct ibk_pkey_table *t, uint32_t len,
		      const uint16_t *keys, size_t nkeys);

#endif
