/* SPDX-License-Identifier: MIT */
/*
 * layout.h - the structure layout facts that C (layout_c.c) and C++
 * (test_cxx.cpp) must agree on, listed once as an X-macro:
 * IBK_TEST_LAYOUT(X) expands X(expr) for each size, alignment and offset,
 * in a fixed order, so both sides build their arrays item for item.
 */
#ifndef IBKEYS_TESTS_LAYOUT_H
#define IBKEYS_TESTS_LAYOUT_H

#include <stddef.h>
#ifndef __cplusplus
#include <stdalign.h>
#endif

#include "ib_tables.h"

#define IBK_TEST_LAYOUT(X)					\
	X(sizeof(struct ibk_gid))				\
	X(sizeof(struct ibk_qp_keys))				\
	X(sizeof(struct ibk_latch))				\
	X(sizeof(struct ibk_pkey_cell))				\
	X(sizeof(struct ibk_gid_cell))				\
	X(sizeof(struct ibk_hash_slot))				\
	X(sizeof(struct ibk_pkey_table))			\
	X(sizeof(struct ibk_gid_table))				\
	X(sizeof(struct ibk_counter16))				\
	X(sizeof(struct ibk_port))				\
	X(alignof(struct ibk_port))				\
	X(offsetof(struct ibk_port, gids))			\
	X(offsetof(struct ibk_port, pkey_violations))		\
	X(offsetof(struct ibk_port, qkey_violations))		\
	X(offsetof(struct ibk_port, mkey_violations))		\
	X(offsetof(struct ibk_port, mad_drops))			\
	X(offsetof(struct ibk_port, stale_decisions))		\
	X(sizeof(struct ibk_mem_attr))				\
	X(offsetof(struct ibk_mem_attr, rkey))			\
	X(offsetof(struct ibk_mem_attr, state))			\
	X(sizeof(struct ibk_mem_qp))				\
	X(sizeof(struct ibk_mem_request))			\
	X(sizeof(struct ibk_mw_bind_wr))				\
	X(sizeof(struct ibk_mr_cell))				\
	X(sizeof(struct ibk_mr_table))				\
	X(offsetof(struct ibk_mr_table, cells))			\
	X(sizeof(struct ibk_mr_ref))

#endif /* IBKEYS_TESTS_LAYOUT_H */
