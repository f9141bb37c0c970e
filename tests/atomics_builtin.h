/* SPDX-License-Identifier: MIT */
/*
 * atomics_builtin.h - an integrator's own atomics port for ib_tables.h
 * (#define IBK_ATOMICS_HEADER "atomics_builtin.h"), built on the GCC and
 * Clang __atomic builtins over plain fields: the IBK_ATOMICS_* operations
 * of ib_tables.h's "Atomics port" section and nothing else. The
 * freestanding test compiles every function of ib_tables.h with it, and
 * the tables tests run with it (test_tables_own_port and the others named
 * *_own_port), so the contract the section states is one a port can meet.
 */
#ifndef IBKEYS_TESTS_ATOMICS_BUILTIN_H
#define IBKEYS_TESTS_ATOMICS_BUILTIN_H

/* relaxed, acquire, release: the __ATOMIC_ order of that name */
#define ATOMICS_BUILTIN_MO(order)	ATOMICS_BUILTIN_MO_##order
#define ATOMICS_BUILTIN_MO_relaxed	__ATOMIC_RELAXED
#define ATOMICS_BUILTIN_MO_acquire	__ATOMIC_ACQUIRE
#define ATOMICS_BUILTIN_MO_release	__ATOMIC_RELEASE

#define IBK_ATOMICS_TYPE(type)		type
#define IBK_ATOMICS_LOAD(p, order) \
	__atomic_load_n((p), ATOMICS_BUILTIN_MO(order))
#define IBK_ATOMICS_STORE(p, v, order) \
	__atomic_store_n((p), (v), ATOMICS_BUILTIN_MO(order))
#define IBK_ATOMICS_FETCH_ADD(p, v, order) \
	__atomic_fetch_add((p), (v), ATOMICS_BUILTIN_MO(order))
#define IBK_ATOMICS_EXCHANGE(p, v, order) \
	__atomic_exchange_n((p), (v), ATOMICS_BUILTIN_MO(order))
#define IBK_ATOMICS_CAS(p, expected, desired, success, failure) \
	__atomic_compare_exchange_n((p), (expected), (desired), 0, \
		ATOMICS_BUILTIN_MO(success), ATOMICS_BUILTIN_MO(failure))
#define IBK_ATOMICS_FENCE(order) \
	__atomic_thread_fence(ATOMICS_BUILTIN_MO(order))
#define IBK_ATOMICS_CPU_RELAX()		((void)0)

#endif /* IBKEYS_TESTS_ATOMICS_BUILTIN_H */
