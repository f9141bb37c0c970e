/* SPDX-License-Identifier: MIT */
/*
 * peer_ck.c - the Concurrency Kit peer: one copy of the table under a
 * ck_sequence (peer_seqlock.h). ck_sequence_read_begin() spins while the
 * count is odd and its load fence pairs with the writer's store fences in
 * ck_sequence_write_begin() and _end(); writers are serialised by a
 * ck_spinlock, as CK's manual asks ("after a successful mutex
 * acquisition").
 */
#include <ck_sequence.h>
#include <ck_spinlock.h>

struct peer_lock {
	ck_sequence_t seq;
	ck_spinlock_t writer;
};

#define PEER_LOCK_INIT(l) \
	(ck_sequence_init(&(l)->seq), ck_spinlock_init(&(l)->writer))
#define PEER_READ_BEGIN(l) ck_sequence_read_begin(&(l)->seq)
#define PEER_READ_RETRY(l, sn) ck_sequence_read_retry(&(l)->seq, sn)
#define PEER_WRITE_BEGIN(l) \
	(ck_spinlock_lock(&(l)->writer), ck_sequence_write_begin(&(l)->seq))
#define PEER_WRITE_END(l) \
	(ck_sequence_write_end(&(l)->seq), ck_spinlock_unlock(&(l)->writer))

#define PEER_NAME "ck_sequence"
#define PEER_OPS bench_peer_ck_sequence
#include "peer_seqlock.h"
