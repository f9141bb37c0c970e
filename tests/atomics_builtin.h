/* SPDX-License-Identifier: MIT */
/*
 * atomics_builtin.h - an integrator's own atomics port for ib_tables.h
 * (#define IBK_ATOMICS_HEADER "atomics_builtin.h"), built on the GCC and
 * Clang __atomic builtins over plain fields. The freestanding test
 * compiles every function of ib_tables.h with it, so the contract the
 * "Atomics port" section states is one a port can meet.
 */
#ifndef IBKEYS_TESTS_ATOMICS_BUILTIN_H
#define IBKEYS_TESTS_ATOMICS_BUILTIN_H

#define IBK__ATOMIC(type)	type
#define IBK__BUILTIN_MO(order)	IBK__BUILTIN_MO_##order
#define IBK__BUILTIN_MO_relaxed	__ATOMIC_RELAXED
#define IBK__BUILTIN_MO_acquire	__ATOMIC_ACQUIRE
#define IBK__BUILTIN_MO_release	__ATOMIC_RELEASE
#define ibk__load(p, order)	__atomic_load_n((p), IBK__BUILTIN_MO(order))
#define ibk__store(p, v, order)	\
	__atomic_store_n((p), (v), IBK__BUILTIN_MO(order))
#define ibk__fetch_add(p, v, order) \
	__atomic_fetch_add((p), (v), IBK__BUILTIN_MO(order))
#define ibk__exchange(p, v, order) \
	__atomic_exchange_n((p), (v), IBK__BUILTIN_MO(order))
#define ibk__cas(p, expected, desired, success, failure) \
	__atomic_compare_exchange_n((p), (expected), (desired), 0, \
		IBK__BUILTIN_MO(success), IBK__BUILTIN_MO(failure))
#define ibk__fence(order)	__atomic_thread_fence(IBK__BUILTIN_MO(order))
#define ibk__cpu_relax()	((void)0)
#define IBK__STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)

#endif /* IBKEYS_TESTS_ATOMICS_BUILTIN_H */
