/* SPDX-License-Identifier: MIT */
/*
 * variants.c - built once per variant with the macro that selects the
 * simpler path (variants.h says which); the same loops as the library's
 * sides in cases_keys.c, cases_mem.c and cases_latch.c.
 */
#include "variants.h"

#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

/*
 * The loop of the library's side of the same case (cases_*.c): @iters
 * bursts of @burst, walking the @seq elements from the start in turn;
 * returns the sum of what @call gives for each, with AT(base) the burst's
 * first element. Every variant below is this loop around one call, so
 * that it pays for nothing the library's side does not.
 */
#define AT(base)	((base) + (i_ % (seq / burst)) * burst)
#define RETURN_SUM_OF_BURSTS(call)					\
	do {								\
		uint64_t sum_ = 0, i_;					\
									\
		for (i_ = 0; i_ < iters; i_++) {			\
			sum_ += (call);					\
			BENCH_BARRIER();				\
		}							\
		return sum_;						\
	} while (0)

#if defined(IBK_NO_SIMD)
__attribute__((noinline))
uint64_t variant_scalar_rkey_burst(const struct ibk_mr_table *t,
				   const struct ibk_mem_qp *qp,
				   const void *const *hdrs, size_t seq,
				   size_t burst, uint8_t *verdicts,
				   uint64_t iters)
{
	RETURN_SUM_OF_BURSTS(ibk_mr_table_check_burst(t, qp, AT(hdrs), burst,
						      verdicts));
}

__attribute__((noinline))
uint64_t variant_scalar_pkey_match_burst(ibk_pkey_t qp_pkey,
					 const ibk_pkey_t *keys, size_t seq,
					 size_t burst, uint8_t *match,
					 uint64_t iters)
{
	RETURN_SUM_OF_BURSTS(ibk_pkey_match_burst(qp_pkey, AT(keys), burst,
						  match));
}

/* The simpler path to the scalar burst's chunks of 16: ibk_pkey_match()
 * one key after the other, its result stored and counted. */
static inline size_t plain_pkey_match_burst(ibk_pkey_t qp_pkey,
					    const ibk_pkey_t *keys, size_t n,
					    uint8_t *match)
{
	size_t hits = 0;
	size_t k;

	for (k = 0; k < n; k++) {
		match[k] = ibk_pkey_match(qp_pkey, keys[k]);
		hits += match[k];
	}
	return hits;
}

__attribute__((noinline))
uint64_t variant_plain_pkey_match_burst(ibk_pkey_t qp_pkey,
					const ibk_pkey_t *keys, size_t seq,
					size_t burst, uint8_t *match,
					uint64_t iters)
{
	RETURN_SUM_OF_BURSTS(plain_pkey_match_burst(qp_pkey, AT(keys), burst,
						    match));
}

__attribute__((noinline))
uint64_t variant_scalar_rx_ud_burst(ibk_pkey_t qp_pkey, ibk_qkey_t qp_qkey,
				    const void *const *hdrs, size_t seq,
				    size_t burst, uint8_t *verdicts,
				    uint64_t iters)
{
	RETURN_SUM_OF_BURSTS(ibk_rx_ud_burst(qp_pkey, qp_qkey, AT(hdrs), burst,
					     verdicts));
}

/* The scalar burst (ibk__rx_ud_burst_scalar()) with its accepted packets
 * counted one by one instead of in chunks of 16 (ibk__count_zero()). */
static inline size_t plain_rx_ud_burst(ibk_pkey_t qp_pkey, ibk_qkey_t qp_qkey,
				       const void *const *hdrs, size_t n,
				       uint8_t *verdicts)
{
	struct ibk__rx_ud_keys k = ibk__rx_ud_keys_make(qp_pkey, qp_qkey);
	size_t accepted = 0;
	size_t i;

	if (ibk__rx_ud_range(k, hdrs, 0, n, verdicts) & IBK__RX_UD_HEADER_BITS)
		ibk__rx_ud_header_drops(hdrs, n, verdicts);
	for (i = 0; i < n; i++)
		accepted += verdicts[i] == IBK_RX_ACCEPT;
	return accepted;
}

__attribute__((noinline))
uint64_t variant_plain_rx_ud_burst(ibk_pkey_t qp_pkey, ibk_qkey_t qp_qkey,
				   const void *const *hdrs, size_t seq,
				   size_t burst, uint8_t *verdicts,
				   uint64_t iters)
{
	RETURN_SUM_OF_BURSTS(plain_rx_ud_burst(qp_pkey, qp_qkey, AT(hdrs),
					       burst, verdicts));
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
#elif defined(BENCH_VARIANT_SSE2)
#if !defined(IBK__SIMD) || defined(IBK__SIMD_AVX2)
#error "variants.c: the sse2 variant needs an SSE2 build without AVX2"
#endif
__attribute__((noinline))
uint64_t variant_sse2_rx_ud_burst(ibk_pkey_t qp_pkey, ibk_qkey_t qp_qkey,
				  const void *const *hdrs, size_t seq,
				  size_t burst, uint8_t *verdicts,
				  uint64_t iters)
{
	RETURN_SUM_OF_BURSTS(ibk_rx_ud_burst(qp_pkey, qp_qkey, AT(hdrs), burst,
					     verdicts));
}
#else
#error "variants.c: build it with IBK_NO_SIMD, IBK__CELL_LOOPS or BENCH_VARIANT_SSE2"
#endif
