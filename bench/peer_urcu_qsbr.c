/* SPDX-License-Identifier: MIT */
/*
 * peer_urcu_qsbr.c - the liburcu QSBR peer (see peer_urcu.h): rcu_read_lock()
 * compiles to nothing, and a reader reports a quiescent state once per
 * burst of reads.
 */
#define _LGPL_SOURCE
#include <urcu-qsbr.h>

#define PEER_QSBR 1
#define PEER_NAME "urcu_qsbr"
#define PEER_OPS bench_peer_urcu_qsbr
#include "peer_urcu.h"
