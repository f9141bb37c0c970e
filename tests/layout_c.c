/* SPDX-License-Identifier: MIT */
/*
 * The structure layouts as a C11 translation unit sees them. test_cxx.cpp
 * compares them with its own: a program may mix C and C++ files that share
 * one struct ibk_port, so <stdatomic.h> and <atomic> must agree on it.
 */
#include "layout.h"

/* One item of IBK_TEST_LAYOUT as an array element: its value. */
#define IBK_LAYOUT_VALUE(expr)	expr,

const size_t ibk_c_layout[] = { IBK_TEST_LAYOUT(IBK_LAYOUT_VALUE) };
const size_t ibk_c_layout_count = sizeof(ibk_c_layout) / sizeof(ibk_c_layout[0]);
