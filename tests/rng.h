/* SPDX-License-Identifier: MIT */
/*
 * rng.h - the tests' deterministic random numbers: splitmix64.
 *
 * Each test seeds it once with its own fixed seed, so a failure reproduces.
 * The plain functions draw from one generator per test program; the _r
 * variants draw from a state the caller owns (one per thread, say) and give
 * the same sequence for the same seed. C99 and C++17.
 */
#ifndef IBKEYS_TESTS_RNG_H
#define IBKEYS_TESTS_RNG_H

#include <stdint.h>

static uint64_t test_rng_state;

/* Advance @state; return the next 64-bit splitmix64 value. */
static inline uint64_t test_rng64_r(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * Return a value in [0, @n), @n > 0, from @state. Modulo of the 64-bit
 * draw: the bias is at most n / 2^64, and it keeps the sequences the tests
 * drew before this header existed.
 */
static inline uint32_t test_rng_below_r(uint64_t *state, uint32_t n)
{
	return (uint32_t)(test_rng64_r(state) % n);
}

/* Restart the program's generator at @seed; returns nothing. */
static inline void test_rng_seed(uint64_t seed)
{
	test_rng_state = seed;
}

/* Return the next 64-bit value of the program's generator. */
static inline uint64_t test_rng64(void)
{
	return test_rng64_r(&test_rng_state);
}

/* Return a value in [0, @n), @n > 0, from the program's generator. */
static inline uint32_t test_rng_below(uint32_t n)
{
	return test_rng_below_r(&test_rng_state, n);
}

#endif /* IBKEYS_TESTS_RNG_H */
