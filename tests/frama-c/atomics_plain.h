/* SPDX-License-Identifier: MIT */
/*
 * atomics_plain.h - ib_tables.h's atomics port for Frama-C's EVA
 * (#define IBK_ATOMICS_HEADER "atomics_plain.h"): plain loads and stores,
 * and read-modify-writes as the sequential code they are when one thread
 * runs. EVA analyses one thread; the orders, which only matter between
 * threads, are dropped. Read-modify-writes only apply to 32-bit words
 * (ib_tables.h, "Atomics port").
 */
#ifndef IBKEYS_FRAMA_C_ATOMICS_PLAIN_H
#define IBKEYS_FRAMA_C_ATOMICS_PLAIN_H

#include <stdbool.h>
#include <stdint.h>

static inline uint32_t plain_fetch_add(uint32_t *p, uint32_t v)
{
	uint32_t old = *p;

	*p = old + v;
	return old;
}

static inline uint32_t plain_exchange(uint32_t *p, uint32_t v)
{
	uint32_t old = *p;

	*p = v;
	return old;
}

static inline bool plain_cas(uint32_t *p, uint32_t *expected,
			     uint32_t desired)
{
	if (*p != *expected) {
		*expected = *p;
		return false;
	}
	*p = desired;
	return true;
}

#define IBK_ATOMICS_TYPE(type)			type
#define IBK_ATOMICS_LOAD(p, order)		(*(p))
#define IBK_ATOMICS_STORE(p, v, order)		((void)(*(p) = (v)))
#define IBK_ATOMICS_FETCH_ADD(p, v, order)	plain_fetch_add((p), (v))
#define IBK_ATOMICS_EXCHANGE(p, v, order)	plain_exchange((p), (v))
#define IBK_ATOMICS_CAS(p, expected, desired, success, failure) \
	plain_cas((p), (expected), (desired))
#define IBK_ATOMICS_FENCE(order)		((void)0)
#define IBK_ATOMICS_CPU_RELAX()			((void)0)

#endif
