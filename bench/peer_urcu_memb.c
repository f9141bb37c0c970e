/* SPDX-License-Identifier: MIT */
/*
 * peer_urcu_memb.c - the liburcu memb peer (see peer_urcu.h), the default
 * flavour: rcu_read_lock() and rcu_read_unlock() per read, with the
 * writer's synchronize_rcu() issuing the memory barriers (membarrier()).
 */
#define _LGPL_SOURCE
#include <urcu.h>

#define PEER_QSBR 0
#define PEER_NAME "urcu_memb"
#define PEER_OPS bench_peer_urcu_memb
#include "peer_urcu.h"
