/* SPDX-License-Identifier: MIT */
/*
 * harness.h - what the EVA harnesses of tests/frama-c/ call the public
 * functions with: every value of an argument's type at once, buffers of
 * the documented length holding any bytes, and NULL or not where the
 * function documents what NULL does (tests/frama-c/run says how they are
 * analysed and what must come out).
 *
 * Frama_C_*_interval() and Frama_C_make_unknown() are Frama-C's builtins
 * (__fc_builtin.h): EVA takes the result as every value in the range, so
 * one call of a function stands for all of its calls in that domain.
 */
#ifndef IBK_FRAMA_C_HARNESS_H
#define IBK_FRAMA_C_HARNESS_H

#include "__fc_builtin.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline uint8_t any_u8(void)
{
	return (uint8_t)Frama_C_interval(0, UINT8_MAX);
}

static inline uint16_t any_u16(void)
{
	return Frama_C_unsigned_short_interval(0, UINT16_MAX);
}

static inline uint32_t any_u32(void)
{
	return Frama_C_unsigned_int_interval(0, UINT32_MAX);
}

static inline uint64_t any_u64(void)
{
	uint64_t v;

	Frama_C_make_unknown((char *)&v, sizeof(v));
	return v;
}

static inline int any_int(void)
{
	return Frama_C_int_interval(INT32_MIN, INT32_MAX);
}

static inline bool any_bool(void)
{
	return Frama_C_interval(0, 1) != 0;
}

/* Every value of an enum from @lo to @hi, and invalid ones: two past it,
 * and the one below it if that is not negative. */
#define ANY_ENUM(type, lo, hi)						\
	((type)Frama_C_interval((int)(lo) - ((int)(lo) > 0), (int)(hi) + 2))

/* Any bytes in the whole of @x (an object, not a pointer). */
#define UNKNOWN(x) Frama_C_make_unknown((char *)&(x), sizeof(x))

/* @p or NULL: for an argument whose NULL the function documents. */
static inline void *maybe_null(void *p)
{
	return Frama_C_nondet_ptr(p, NULL);
}

/* A getter on @len bytes of anything, a setter writing any value there:
 * a header, MAD or attribute of exactly its length. */
#define GET(fn, len)							\
	do {								\
		uint8_t buf_[len];					\
		UNKNOWN(buf_);						\
		(void)fn(buf_);						\
	} while (0)
#define SET(fn, len, value)						\
	do {								\
		uint8_t buf_[len];					\
		UNKNOWN(buf_);						\
		fn(buf_, value);					\
	} while (0)

#endif
