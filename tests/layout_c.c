/* SPDX-License-Identifier: MIT */
/*
 * The structure layouts as a C11 translation unit sees them. test_cxx.cpp
 * compares them with its own: a program may mix C and C++ files that share
 * one struct ibk_port, so <stdatomic.h> and <atomic> must agree on it.
 */
#include <stddef.h>
#include "ib_tables.h"

const size_t ibk_c_layout[] = {
	sizeof(struct ibk_gid),
	sizeof(struct ibk_qp_keys),
	sizeof(struct ibk_seqcount),
	sizeof(struct ibk_pkey_cell),
	sizeof(struct ibk_gid_cell),
	sizeof(struct ibk_hash_slot),
	sizeof(struct ibk_pkey_table),
	sizeof(struct ibk_gid_table),
	sizeof(struct ibk_counter16),
	sizeof(struct ibk_port),
	_Alignof(struct ibk_port),
	offsetof(struct ibk_port, gids),
	offsetof(struct ibk_port, pkey_violations),
	offsetof(struct ibk_port, qkey_violations),
};
const size_t ibk_c_layout_count = sizeof(ibk_c_layout) / sizeof(ibk_c_layout[0]);
