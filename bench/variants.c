/* SPDX-License-Identifier: MIT */
/*
 * variants.c - built once per variant with the macro that selects the
 * simpler path (variants.h says which); the same loops as the library's
 * sides in cases_mem.c and cases_latch.c.
 */
#include "variants.h"

#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#if defined(IBK_NO_SIMD)
__attribute__((noinline))
uint64_t variant_scalar_rkey_burst(const struct ibk_mr_table *t,
				   const struct ibk_mem_qp *qp,
				   const void *const *hdrs, size_t seq,
				   size_t burst, uint8_t *verdicts,
				   uint64_t iters)
{
	uint64_t ok = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		ok += ibk_mr_table_check_burst(t, qp,
				hdrs + (i % (seq / burst)) * burst, burst,
				verdicts);
		BENCH_BARRIER();
	}
	return ok;
}

size_t variant_scalar_layout(void)
{
	return variant_layout();
}
#elif defined(IBK__CELL_LOOPS)
__attribute__((noinline))
uint64_t variant_cells_refill(struct ibk_pkey_table *t,
			      const ibk_pkey_t *const contents[2],
			      uint32_t len, uint64_t iters)
{
	uint64_t i;

	for (i = 0; i < iters; i++) {
		if (ibk_pkey_table_refill(t, contents[i & 1], len,
					  ibk_pkey_table_refill_ticket(t))) {
			fprintf(stderr, "bench: variant refill failed\n");
			exit(2);
		}
		BENCH_BARRIER();
	}
	return iters;
}

size_t variant_cells_layout(void)
{
	return variant_layout();
}
#else
#error "variants.c: build it with IBK_NO_SIMD or IBK__CELL_LOOPS"
#endif
