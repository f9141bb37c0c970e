/* SPDX-License-Identifier: MIT */
/*
 * variants.h - the library's fast paths built without their fast variant,
 * timed beside the library in the same run (bench/README.md's table
 * "variant vs the simpler path"). variants.c is compiled once per variant,
 * each defining what it is timed for:
 *
 *   scalar  IBK_NO_SIMD: the scalar loops of the R_Key burst (it has no
 *           SSE2 path: an SSE2 build runs this one), of the P_Key match
 *           burst and of the UD receive burst; and, in the same build,
 *           the plain loops those two scalar bursts' chunks of 16 replace
 *   sse2    BENCH_VARIANT_SSE2, -march=x86-64 (x86-64 AVX2 builds only,
 *           BENCH_HAVE_SSE2_VARIANT): the UD receive burst's SSE2 path,
 *           four headers a register where AVX2 takes eight
 *   cells   IBK__CELL_LOOPS: the refill's bulk loops cell by cell, as on a
 *           compiler without may_alias, instead of unrolled machine words
 *
 * Each function runs the case's loop itself, so that no call per operation
 * is timed that the library's side does not pay.
 */
#ifndef IBK_BENCH_VARIANTS_H
#define IBK_BENCH_VARIANTS_H

#include <stddef.h>
#include <stdint.h>

#include "ib_tables.h"

uint64_t variant_scalar_pkey_match_burst(ibk_pkey_t qp_pkey,
					 const ibk_pkey_t *keys, size_t seq,
					 size_t burst, uint8_t *match,
					 uint64_t iters);
uint64_t variant_plain_pkey_match_burst(ibk_pkey_t qp_pkey,
					const ibk_pkey_t *keys, size_t seq,
					size_t burst, uint8_t *match,
					uint64_t iters);
uint64_t variant_scalar_rx_ud_burst(ibk_pkey_t qp_pkey, ibk_qkey_t qp_qkey,
				    const void *const *hdrs, size_t seq,
				    size_t burst, uint8_t *verdicts,
				    uint64_t iters);
uint64_t variant_plain_rx_ud_burst(ibk_pkey_t qp_pkey, ibk_qkey_t qp_qkey,
				   const void *const *hdrs, size_t seq,
				   size_t burst, uint8_t *verdicts,
				   uint64_t iters);

uint64_t variant_scalar_rkey_burst(const struct ibk_mr_table *t,
				   const struct ibk_mem_qp *qp,
				   const void *const *hdrs, size_t seq,
				   size_t burst, uint8_t *verdicts,
				   uint64_t iters);
size_t variant_scalar_layout(void);

uint64_t variant_sse2_rx_ud_burst(ibk_pkey_t qp_pkey, ibk_qkey_t qp_qkey,
				  const void *const *hdrs, size_t seq,
				  size_t burst, uint8_t *verdicts,
				  uint64_t iters);

uint64_t variant_cells_refill(struct ibk_pkey_table *t,
			      const ibk_pkey_t *const contents[2],
			      uint32_t len, uint64_t iters);
size_t variant_cells_layout(void);

/* The sizes variants.c was built with, summed: a variant built with
 * another struct layout could not share the library's tables. */
static inline size_t variant_layout(void)
{
	return sizeof(struct ibk_mr_table) + 3 * sizeof(struct ibk_mem_qp) +
	       5 * sizeof(struct ibk_port) + 7 * sizeof(struct ibk_mr_cell) +
	       11 * sizeof(struct ibk_pkey_table);
}

#endif
