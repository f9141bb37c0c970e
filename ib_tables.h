/* SPDX-License-Identifier: MIT */
/*
 * ib_tables.h - lock-free cached P_Key and GID tables per InfiniBand port:
 * a latch that readers never wait on, O(1) lookups, port-state gating,
 * change events, generation-checked references, violation counters, and
 * the receive checks that need the port's table (QP1, and any QP by its
 * P_Key index); a lock-free table of memory regions and windows with the
 * responder's R_Key check against it; and the subnet management agent's
 * side that writes and answers the tables. Includes ib_keys.h.
 *
 * Sections, in reading order:
 *   Atomics port        C11, C++, the Linux kernel, single core, or yours
 *   Latch               the count readers never wait on, its read and
 *                       write sections
 *   16-bit counters     saturating, as PortInfo holds them
 *   Port states and change events
 *   Table storage       cells and hash slots, the copies' headers
 *   P_Key table         init, refill with tickets, set, get, find,
 *                       references, snapshot
 *   GID table           the same for GIDs and their types
 *   Port                both tables, the violation counters, events, reset,
 *                       the receive checks and bursts, whole packets
 *   Memory region and window table
 *                       register, bind, invalidate, the R_Key check
 *   Subnet management agent
 *                       P_KeyTable and GUIDInfo blocks into the tables,
 *                       the GID prefix, M_Key with the port's counter
 *
 * C11 (<stdatomic.h>) and C++17 (<atomic>), freestanding: no libc calls, no
 * allocation, no global state; the caller owns every byte of storage. Also
 * the Linux kernel and single-core firmware without compare-and-swap: see
 * "Atomics port" below.
 *
 * Concurrency model
 *   Each table is kept twice behind one latch (the Linux kernel's
 *   seqcount_latch): a 32-bit count whose low bit names the copy readers
 *   use. A writer applies each update to the copy readers have just left,
 *   moves them over to it, then applies the update to the other copy. A
 *   reader loads the count, reads its copy with relaxed atomics and
 *   retries only if the count moved meanwhile, that is, only if a writer
 *   finished half an update during the read. No reader ever waits for a
 *   writer: one preempted, stopped in a debugger, or interrupted in the
 *   middle of an update stalls nobody. Readers never write shared memory.
 *   Writers exclude one another with a lock word of their own: a second
 *   writer spins, or gets IBK_EBUSY from ibk_latch_write_try_begin().
 *
 * What may call what
 *   Every read (get, find, snapshot, reference, freshness check, receive
 *   check) may run in any thread, a signal handler or an interrupt
 *   handler, even one that interrupted a writer of the same table on its
 *   own CPU: it completes at once with the generation readers are on.
 *   Writes (refill, set, state, invalidate, events) spin on the lock word,
 *   so a handler must never write a table the code it interrupted may be
 *   writing.
 *
 * Port state, change events and refills
 *   Table contents mean something only while the port is ARMED or ACTIVE
 *   (ibv_query_pkey(3), ibv_query_gid(3); ACTIVE_DEFER counts as ACTIVE).
 *   Every read reports IBK_ENOTREADY in any other state, then IBK_ESTALE
 *   while the table awaits a refill: the state a change event (PKEY_CHANGE,
 *   GID_CHANGE, invalidate, leaving ARMED/ACTIVE, ...) leaves it in until
 *   the consumer has re-read the device and called the refill function. A
 *   table fresh from its init awaits its first refill the same way.
 *   Only a refill clears it, and only one that read the device after the
 *   last change event: the consumer takes a ticket
 *   (ibk_pkey_table_refill_ticket()) before its device reads and hands it
 *   to the refill, which returns IBK_ESTALE and changes nothing if an event
 *   came in between; the consumer then reads the device again.
 *
 * Generations
 *   A table's generation is its latch count: +2 per update (refill, set,
 *   state change, event). A reference {index, value, generation} is fresh
 *   while the count still equals its generation, so a check is one load
 *   and one compare. The count is 32 bits and never 0
 *   (IBK_GENERATION_NEVER, what a zeroed or failed reference holds): a
 *   reference reads falsely fresh only if about 2^31 updates ran between
 *   take and check, which at 1000 updates/s takes 24.8 days. A port that
 *   starts over (ibk_port_reset()) keeps counting forward. Tests start near
 *   the wrap with ibk_latch_init(&t->hdr.latch, start) right after the
 *   table's init, before any reader runs.
 *
 * Costs
 *   A read costs what a seqlock read costs: an acquire load of the count,
 *   the relaxed loads of its copy, an acquire fence and a reload (on x86
 *   the fence and the acquire are plain loads). A write does its work
 *   twice: a set updates each copy's entry and index, O(1) but for a key
 *   (a P_Key, or a GID and its type) that other indexes also hold, where
 *   it walks the chain of that key's indexes (O(copies of the key)); a
 *   refill builds one copy, O(capacity + hash slots), and copies its words
 *   into the other.
 *
 * Memory
 *   Both copies are the caller's: a P_Key table of capacity C takes
 *   IBK_PKEY_CELLS(C) 2-byte cells (per entry and copy its key and the
 *   writer's two chain links, 12 bytes per entry) and
 *   IBK_PKEY_HASH_SLOTS(C) 4-byte hash slots, 44 bytes per entry when C is
 *   a power of two up to 16384, less than 76 otherwise, and 20 bytes per
 *   entry at C = 65536 (1.25 MiB). A GID table takes IBK_GID_CELLS(C)
 *   24-byte cells and IBK_HASH_SLOTS(C) slots: 80 bytes per entry for a
 *   power of two, less than 112 otherwise. Each copy's index is at most a
 *   quarter full: a find usually reads one slot. With
 *   IBK_PKEY_HASH_SLOTS_MIN(C) and IBK_HASH_SLOTS_MIN(C) slots instead (an
 *   index at most half full, for firmware) the two take 28 and 64 bytes
 *   per entry for a power of two.
 *
 * Parameters
 *   In ib_keys.h's order: the table, port or latch acted on first; then
 *   the inputs, an input array followed at once by its count; then the
 *   outputs, each a pointer named for what it receives:
 *   ibk_pkey_table_snapshot(t, n, pkeys, generation),
 *   ibk_port_rx_mixed(port, qps, hdrs, n, verdicts, pkey_index).
 */
#ifndef IBKEYS_IB_TABLES_H
#define IBKEYS_IB_TABLES_H

/*
 * The release both headers belong to, VERSION's value (tests/version.py
 * checks it). Either header defines it, whichever comes first; the other
 * refuses to build beside a header of another release.
 */
#ifndef IBKEYS_VERSION
#define IBKEYS_VERSION_MAJOR	0
#define IBKEYS_VERSION_MINOR	3
#define IBKEYS_VERSION_PATCH	0
#define IBKEYS_VERSION		"0.3.0"
#endif
#if IBKEYS_VERSION_MAJOR != 0 || IBKEYS_VERSION_MINOR != 3 || \
    IBKEYS_VERSION_PATCH != 0
#error "ib_keys.h and ib_tables.h come from two releases"
#endif

#include "ib_keys.h"
#ifdef __FRAMAC__
#include "__fc_builtin.h"	/* see ibk__word_offset() */
#endif

/* ------------------------------------------------------------------------
 * Atomics port
 *
 * Everything below reaches shared memory through the handful of operations
 * this section defines, so that one of four ports can supply them:
 *
 *   C11          <stdatomic.h>; the default in C.
 *   C++          <atomic>; the default in C++ (same layout as C11).
 *   Linux kernel chosen by __KERNEL__ (or IBK_ATOMICS_KERNEL): READ_ONCE(),
 *                WRITE_ONCE(), smp_load_acquire(), smp_store_release(),
 *                try_cmpxchg_acquire(), smp_rmb(), smp_wmb(), cpu_relax();
 *                plain integer fields, the same layout as user space.
 *   single core  opt-in, #define IBK_ATOMICS_SINGLE_CORE before including,
 *                for one core without compare-and-swap (Cortex-M0/M0+,
 *                RISC-V without the A extension): see below.
 *
 * or an integrator's own: #define IBK_ATOMICS_HEADER "my_atomics.h", a
 * header that defines these macros (tests/atomics_builtin.h is one):
 *
 *   IBK_ATOMICS_TYPE(type)             the shared word's type, for uint16_t
 *                                      and uint32_t
 *   IBK_ATOMICS_LOAD(p, order)         the value at p; order relaxed or
 *                                      acquire
 *   IBK_ATOMICS_STORE(p, v, order)     order relaxed or release
 *   IBK_ATOMICS_FETCH_ADD(p, v, order) adds v, gives the old value; relaxed
 *   IBK_ATOMICS_EXCHANGE(p, v, order)  stores v, gives the old value; relaxed
 *   IBK_ATOMICS_CAS(p, expected, desired, success, failure)
 *                                      strong compare-and-swap, true if *p
 *                                      was *expected (then *p = desired),
 *                                      else *expected = *p; acquire, relaxed
 *   IBK_ATOMICS_FENCE(order)           a thread fence; acquire or release
 *   IBK_ATOMICS_CPU_RELAX()            a spinning writer's pause (may be
 *                                      ((void)0))
 *
 * An order comes as the bare word relaxed, acquire or release, and the
 * orders listed are the only ones used. Read-modify-writes (fetch-add,
 * exchange, CAS) only ever apply to 32-bit words; 16-bit words are only
 * loaded and stored. So a port needs lock-free 32-bit atomics and nothing
 * wider or narrower: GCC calls 16-bit atomics "sometimes lock-free" on
 * rv32imac (only their read-modify-writes would need a library), and that
 * is fine.
 *
 * Single core (IBK_ATOMICS_SINGLE_CORE)
 *   For firmware on one core whose readers may be interrupt handlers. The
 *   shared words are volatile; a load or store is one instruction, which
 *   an interrupt cannot split, and an interrupt handler on the same core
 *   sees the interrupted code's stores in program order, so the fences
 *   become compiler barriers. The read-modify-writes of the violation
 *   counters and of the writer's lock word run with interrupts masked, by
 *   IBK_ATOMICS_IRQ_SAVE() (an expression giving a uint32_t state) and
 *   IBK_ATOMICS_IRQ_RESTORE(state), defined by the integrator or else by
 *   default for Cortex-M (PRIMASK: mrs, cpsid i; msr) and for RISC-V in
 *   M-mode (mstatus.MIE: csrrci; csrs). Nothing else masks interrupts:
 *   gets, finds and snapshots never do, a receive check only to count a
 *   violation, and a write section runs with interrupts enabled.
 *   The integrator serialises writers. The lock word stays a flag: a
 *   writer that finds it taken is one that interrupted another writer of
 *   the same table, which on one core can never finish waiting, so
 *   instead of spinning it calls IBK_ATOMICS_WRITER_CONFLICT() (default:
 *   __builtin_trap(), a fault a debugger shows). ibk_latch_write_try_begin()
 *   still answers IBK_EBUSY: that is how a handler may try to write.
 *
 *	#define IBK_ATOMICS_SINGLE_CORE
 *	#define IBK_ATOMICS_IRQ_SAVE()		board_irq_save()
 *	#define IBK_ATOMICS_IRQ_RESTORE(state)	board_irq_restore(state)
 *	#include "ib_tables.h"
 *
 * API:
 *	IBK_ATOMICS_WRITER_CONFLICT()
 *	IBK_ATOMICS_IRQ_SAVE()
 *	IBK_ATOMICS_IRQ_RESTORE(state)
 * ------------------------------------------------------------------------ */

#if defined(__KERNEL__) && !defined(IBK_ATOMICS_SINGLE_CORE) && \
    !defined(IBK_ATOMICS_HEADER) && !defined(IBK_ATOMICS_KERNEL)
#define IBK_ATOMICS_KERNEL 1
#endif

/* Layout and platform checks at compile time, in either language. */
#ifdef __cplusplus
#define IBK__STATIC_ASSERT(cond, msg)	static_assert(cond, msg)
#else
#define IBK__STATIC_ASSERT(cond, msg)	_Static_assert(cond, msg)
#endif

#if defined(IBK_ATOMICS_HEADER)
#include IBK_ATOMICS_HEADER
#if !defined(IBK_ATOMICS_TYPE) || !defined(IBK_ATOMICS_LOAD) || \
    !defined(IBK_ATOMICS_STORE) || !defined(IBK_ATOMICS_FETCH_ADD) || \
    !defined(IBK_ATOMICS_EXCHANGE) || !defined(IBK_ATOMICS_CAS) || \
    !defined(IBK_ATOMICS_FENCE) || !defined(IBK_ATOMICS_CPU_RELAX)
#error "IBK_ATOMICS_HEADER: define every IBK_ATOMICS_* the Atomics port lists"
#endif
#define IBK__ATOMIC(type)		IBK_ATOMICS_TYPE(type)
#define ibk__load(p, order)		IBK_ATOMICS_LOAD(p, order)
#define ibk__store(p, v, order)		IBK_ATOMICS_STORE(p, v, order)
#define ibk__fetch_add(p, v, order)	IBK_ATOMICS_FETCH_ADD(p, v, order)
#define ibk__exchange(p, v, order)	IBK_ATOMICS_EXCHANGE(p, v, order)
#define ibk__cas(p, expected, desired, success, failure) \
	IBK_ATOMICS_CAS(p, expected, desired, success, failure)
#define ibk__fence(order)		IBK_ATOMICS_FENCE(order)
#define ibk__cpu_relax()		IBK_ATOMICS_CPU_RELAX()

#elif defined(IBK_ATOMICS_KERNEL)
#include <linux/compiler.h>
#include <linux/atomic.h>
#include <asm/barrier.h>
#include <asm/processor.h>
#define IBK__ATOMIC(type)		type
#define ibk__load(p, order)		ibk__kload_##order(p)
#define ibk__kload_relaxed(p)		READ_ONCE(*(p))
#define ibk__kload_acquire(p)		smp_load_acquire(p)
#define ibk__store(p, v, order)		ibk__kstore_##order((p), (v))
#define ibk__kstore_relaxed(p, v)	WRITE_ONCE(*(p), (v))
#define ibk__kstore_release(p, v)	smp_store_release((p), (v))
#define ibk__exchange(p, v, order)	xchg_##order((p), (v))
#define ibk__cas(p, expected, desired, success, failure) \
	try_cmpxchg_##success((p), (expected), (desired))
#define ibk__fetch_add(p, v, order)	ibk__kfetch_add((p), (v))
#define ibk__fence(order)		ibk__kfence_##order()
#define ibk__kfence_acquire()		smp_rmb()
#define ibk__kfence_release()		smp_wmb()
#define ibk__cpu_relax()		cpu_relax()

/* The kernel has no fetch-add on a plain word: a relaxed CAS loop. */
static inline uint32_t ibk__kfetch_add(uint32_t *p, uint32_t v)
{
	uint32_t old = READ_ONCE(*p);

	while (!try_cmpxchg_relaxed(p, &old, old + v))
		;
	return old;
}

#elif defined(IBK_ATOMICS_SINGLE_CORE)
#define IBK__ATOMIC(type)		volatile type
#define ibk__barrier()			__asm__ __volatile__("" ::: "memory")
#define ibk__load(p, order)		ibk__sc_load_##order(p)
#define ibk__sc_load_relaxed(p)		(*(p))
#define ibk__store(p, v, order)		ibk__sc_store_##order((p), (v))
#define ibk__sc_store_relaxed(p, v)	((void)(*(p) = (v)))
#define ibk__fetch_add(p, v, order)	ibk__sc_fetch_add((p), (v))
#define ibk__exchange(p, v, order)	ibk__sc_exchange((p), (v))
#define ibk__cas(p, expected, desired, success, failure) \
	ibk__sc_cas((p), (expected), (desired))
#define ibk__fence(order)		ibk__barrier()
#define ibk__cpu_relax()		IBK_ATOMICS_WRITER_CONFLICT()

#ifndef IBK_ATOMICS_WRITER_CONFLICT
/**
 * IBK_ATOMICS_WRITER_CONFLICT() - What a single-core writer does on a taken
 * lock word
 *
 * What a single-core writer does when it finds the lock word taken, defined by
 * the integrator or else a trap.
 *
 * On one core a writer that finds another writer's lock word interrupted
 * it, and could never finish waiting: a fault a debugger shows is the default.
 *
 * Context: a writer of IBK_ATOMICS_SINGLE_CORE that interrupted another.
 */
#define IBK_ATOMICS_WRITER_CONFLICT()	__builtin_trap()
#endif

#if defined(IBK_ATOMICS_IRQ_SAVE) != defined(IBK_ATOMICS_IRQ_RESTORE)
#error "define both IBK_ATOMICS_IRQ_SAVE() and IBK_ATOMICS_IRQ_RESTORE(state)"
#endif
#ifndef IBK_ATOMICS_IRQ_SAVE
#if defined(__arm__) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
/* PRIMASK set masks every interrupt but NMI and HardFault; the old value
 * comes back, so nested sections restore what they found. */
static inline uint32_t ibk__irq_save(void)
{
	uint32_t primask;

	__asm__ __volatile__("mrs %0, primask\n\tcpsid i"
			     : "=r"(primask) : : "memory");
	return primask;
}

static inline void ibk__irq_restore(uint32_t primask)
{
	__asm__ __volatile__("msr primask, %0" : : "r"(primask) : "memory");
}
#elif defined(__riscv)
/* Assemblers that split Zicsr out of the base ISA need it named, even for
 * -march=rv32imac. */
#ifdef __riscv_zicsr
#define IBK__ZICSR(insn)	insn
#else
#define IBK__ZICSR(insn) \
	".option push\n\t.option arch, +zicsr\n\t" insn "\n\t.option pop"
#endif
/* mstatus.MIE (bit 3) cleared, and set again only if it was set. */
static inline uint32_t ibk__irq_save(void)
{
	unsigned long mstatus;

	__asm__ __volatile__(IBK__ZICSR("csrrci %0, mstatus, 8")
			     : "=r"(mstatus) : : "memory");
	return (uint32_t)(mstatus & 8u);
}

static inline void ibk__irq_restore(uint32_t mie)
{
	__asm__ __volatile__(IBK__ZICSR("csrs mstatus, %0")
			     : : "r"((unsigned long)mie) : "memory");
}
#else
#error "IBK_ATOMICS_SINGLE_CORE: define IBK_ATOMICS_IRQ_SAVE() and IBK_ATOMICS_IRQ_RESTORE(state) for this core"
#endif
/**
 * IBK_ATOMICS_IRQ_SAVE() - Masks interrupts on a single-core build
 *
 * Masks interrupts on a single core, defined by the integrator or else for
 * Cortex-M (PRIMASK) and RISC-V M-mode (mstatus.MIE).
 *
 * Context: IBK_ATOMICS_SINGLE_CORE's read-modify-writes.
 * Return: the state to pass to IBK_ATOMICS_IRQ_RESTORE(), a uint32_t.
 */
#define IBK_ATOMICS_IRQ_SAVE()		ibk__irq_save()
/**
 * IBK_ATOMICS_IRQ_RESTORE() - Restores the interrupt mask
 * IBK_ATOMICS_IRQ_SAVE() saved
 * @state: what IBK_ATOMICS_IRQ_SAVE() returned
 *
 * Context: IBK_ATOMICS_SINGLE_CORE's read-modify-writes.
 */
#define IBK_ATOMICS_IRQ_RESTORE(state)	ibk__irq_restore(state)
#endif

/* Acquire and release on one core: the access, and no compiler motion of
 * other memory accesses across it. Used on 32-bit words only. */
static inline uint32_t ibk__sc_load_acquire(const volatile uint32_t *p)
{
	uint32_t v = *p;

	ibk__barrier();
	return v;
}

static inline void ibk__sc_store_release(volatile uint32_t *p, uint32_t v)
{
	ibk__barrier();
	*p = v;
}

static inline uint32_t ibk__sc_fetch_add(volatile uint32_t *p, uint32_t v)
{
	uint32_t irq = IBK_ATOMICS_IRQ_SAVE();
	uint32_t old = *p;

	*p = old + v;
	IBK_ATOMICS_IRQ_RESTORE(irq);
	return old;
}

static inline uint32_t ibk__sc_exchange(volatile uint32_t *p, uint32_t v)
{
	uint32_t irq = IBK_ATOMICS_IRQ_SAVE();
	uint32_t old = *p;

	*p = v;
	IBK_ATOMICS_IRQ_RESTORE(irq);
	return old;
}

static inline bool ibk__sc_cas(volatile uint32_t *p, uint32_t *expected,
			       uint32_t desired)
{
	uint32_t irq = IBK_ATOMICS_IRQ_SAVE();
	uint32_t old = *p;
	bool ok = old == *expected;

	if (ok)
		*p = desired;
	IBK_ATOMICS_IRQ_RESTORE(irq);
	*expected = old;
	return ok;
}

#elif defined(__cplusplus)
extern "C++" {		/* templates, even if included inside extern "C" */
#include <atomic>
}
#define IBK__ATOMIC(type)	std::atomic<type>
#define IBK__MO(order)		std::memory_order_##order
#define ibk__load(p, order)	std::atomic_load_explicit((p), IBK__MO(order))
#define ibk__store(p, v, order) \
	std::atomic_store_explicit((p), (v), IBK__MO(order))
#define ibk__fetch_add(p, v, order) \
	std::atomic_fetch_add_explicit((p), (v), IBK__MO(order))
#define ibk__exchange(p, v, order) \
	std::atomic_exchange_explicit((p), (v), IBK__MO(order))
#define ibk__cas(p, expected, desired, success, failure) \
	std::atomic_compare_exchange_strong_explicit((p), (expected), \
		(desired), IBK__MO(success), IBK__MO(failure))
#define ibk__fence(order)	std::atomic_thread_fence(IBK__MO(order))
#define IBK__STD_ATOMICS 1
IBK__STATIC_ASSERT(ATOMIC_INT_LOCK_FREE == 2 && sizeof(unsigned) == 4,
		   "ib_tables.h needs lock-free 32-bit atomics: on a single "
		   "core without them, #define IBK_ATOMICS_SINGLE_CORE");

#else
#include <stdatomic.h>
#define IBK__ATOMIC(type)	_Atomic(type)
#define IBK__MO(order)		memory_order_##order
#define ibk__load(p, order)	atomic_load_explicit((p), IBK__MO(order))
#define ibk__store(p, v, order)	atomic_store_explicit((p), (v), IBK__MO(order))
#define ibk__fetch_add(p, v, order) \
	atomic_fetch_add_explicit((p), (v), IBK__MO(order))
#define ibk__exchange(p, v, order) \
	atomic_exchange_explicit((p), (v), IBK__MO(order))
#define ibk__cas(p, expected, desired, success, failure) \
	atomic_compare_exchange_strong_explicit((p), (expected), (desired), \
		IBK__MO(success), IBK__MO(failure))
#define ibk__fence(order)	atomic_thread_fence(IBK__MO(order))
#define IBK__STD_ATOMICS 1
IBK__STATIC_ASSERT(ATOMIC_INT_LOCK_FREE == 2 && sizeof(unsigned) == 4,
		   "ib_tables.h needs lock-free 32-bit atomics: on a single "
		   "core without them, #define IBK_ATOMICS_SINGLE_CORE");
#endif

/* Keeps what receive paths write off the read-mostly table headers. */
#define IBK__CACHE_LINE 64

#ifdef IBK__STD_ATOMICS
/* A hint to the core that this thread is spinning on a shared word. */
static inline void ibk__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}
#endif

/*
 * GCC warns (-Wtsan) that ThreadSanitizer does not model fences. Every
 * datum a latch guards here is an atomic, so there is no plain access
 * for it to misjudge; the fences still order the real machine, and the
 * stress test checks the outcome. Under it the fences call the builtin
 * (which is what both <stdatomic.h> and <atomic> expand to), so that the
 * warning is raised here, where the pragma covers it.
 */
#if defined(__SANITIZE_THREAD__) && !defined(__clang__) && __GNUC__ >= 11 && \
    defined(IBK__STD_ATOMICS)
#define IBK__GCC_TSAN 1
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtsan"
#endif

/* The reader's fence: orders the loads before it (of a copy) before the
 * loads after it (of the count); smp_rmb() in the kernel. */
static inline void ibk__fence_acquire(void)
{
#ifdef IBK__GCC_TSAN
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
#else
	ibk__fence(acquire);
#endif
}

/* The writer's fence: orders the stores before it (of the count) before
 * the stores after it (of a copy); smp_wmb() in the kernel. */
static inline void ibk__fence_release(void)
{
#ifdef IBK__GCC_TSAN
	__atomic_thread_fence(__ATOMIC_RELEASE);
#else
	ibk__fence(release);
#endif
}

#ifdef IBK__GCC_TSAN
#pragma GCC diagnostic pop
#endif

/*
 * A lookup's rare path out of line and its common path inlined, where the
 * compiler allows it (the GID find's miss, the R_Key check's refusals): a
 * caller's loop keeps its registers for the common path, and a single
 * call costs no call. Spelt with underscores: the Linux kernel defines
 * noinline and __cold as macros.
 */
#if defined(__GNUC__) || defined(__clang__)
#define IBK__COLD \
	static __attribute__((__noinline__, __cold__, __unused__))
#define IBK__HOT	static inline __attribute__((__always_inline__))
#define IBK__LIKELY(x)	__builtin_expect(!!(x), 1)
#else
#define IBK__COLD	static inline
#define IBK__HOT	static inline
#define IBK__LIKELY(x)	(x)
#endif

/* ------------------------------------------------------------------------
 * Latch
 *
 * Two copies of the data and one 32-bit count whose low bit names the copy
 * readers use (the Linux kernel's seqcount_latch_t). At rest the count is
 * even and readers use copy 0. One update, by the writer holding the
 * latch's lock word:
 *
 *	ibk_latch_write_begin(&l);	count odd: readers move to copy 1
 *	update(&data[0]);
 *	ibk_latch_write_switch(&l);	count even: readers back on copy 0
 *	update(&data[1]);
 *	ibk_latch_write_end(&l);	lock word free, count moved by 2
 *
 * A reader never waits; it redoes its loads only if the count moved:
 *
 *	do {
 *		start = ibk_latch_read_begin(&l);
 *		x = atomic_load_explicit(&data[ibk_latch_copy(start)].x,
 *					 memory_order_relaxed);
 *	} while (ibk_latch_read_retry(&l, start));
 *
 * The copy a count names is written only after the count has moved off
 * it, so an unchanged count means the loads came from an untouched copy.
 * The data must be atomics accessed relaxed: a plain load racing with a
 * writer's store is a data race, undefined behaviour in C11 and C++.
 *
 * What a read costs: one acquire load of the count, the data's loads, an
 * acquire fence (no instruction on x86) and one reload and compare. A
 * redone read section is paid for by the writer: each retry saw the count
 * move during its own attempt, so a read retries at most as often as the
 * count moved while it ran (tests/test_tables_stress.c checks it). An
 * update moves the count twice, once before each copy is written, so a
 * reader whose attempts are shorter than the writing of one copy retries
 * at most once per update; one held up longer (preempted, interrupted)
 * may retry at both moves of one update.
 *
 * The count steps over 0 and 1 when it wraps (0xffffffff is followed by
 * 2, keeping the parity), so IBK_GENERATION_NEVER, 0, is a generation no
 * reader ever sees: a zeroed reference is never fresh.
 *
 * API:
 *	IBK_LATCH_RETRY_HOOK()
 *	ibk_latch_init(l, start)
 *	ibk_latch_read_begin(l)
 *	ibk_latch_copy(start)
 *	ibk_latch_read_retry(l, start)
 *	ibk_latch_write_try_begin(l)
 *	ibk_latch_write_begin(l)
 *	ibk_latch_write_switch(l)
 *	ibk_latch_write_end(l)
 * ------------------------------------------------------------------------ */

#ifndef IBK_LATCH_RETRY_HOOK
/**
 * IBK_LATCH_RETRY_HOOK() - Called each time a read section is redone
 *
 * Called each time a read section has to be redone; defined by the integrator
 * (a test counts them) or else nothing.
 *
 * Context: a reader, in ibk_latch_read_retry().
 */
#define IBK_LATCH_RETRY_HOOK() ((void)0)
#endif

/* A generation no latch count ever equals. */
#define IBK_GENERATION_NEVER 0u

/**
 * struct ibk_latch - The two-copy latch: a generation count and a writers'
 * lock word
 */
struct ibk_latch {
	/* private: */
	IBK__ATOMIC(uint32_t) count;
	IBK__ATOMIC(uint32_t) writer;
};

/**
 * ibk_latch_init() - Sets the count to @start rounded down to even (2 for 0 or
 * 1) and frees the lock word
 * @l: the latch
 * @start: the first count (rounded down to even; 0 and 1 start at 2)
 *
 * Not concurrent with any use.
 *
 * Context: Before any other use of the storage: concurrent with no reader or
 * writer.
 */
static inline void ibk_latch_init(struct ibk_latch *l, uint32_t start)
{
	start &= ~1u;
	ibk__store(&l->count, start ? start : 2u, relaxed);
	ibk__store(&l->writer, 0u, relaxed);
}

/**
 * ibk_latch_read_begin() - Opens a read section without waiting
 * @l: the latch
 *
 * Opens a read section without waiting: returns the count to pass to
 * ibk_latch_copy() and ibk_latch_read_retry().
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: the count to pass to ibk_latch_copy() and ibk_latch_read_retry()
 */
static inline uint32_t ibk_latch_read_begin(const struct ibk_latch *l)
{
	/* Acquire: pairs with the release store in ibk__latch_flip(), so
	 * every store made to the copy this count names is visible. */
	return ibk__load(&l->count, acquire);
}

/**
 * ibk_latch_copy() - The copy (0 or 1) a read section that began at @start
 * reads
 * @start: the count ibk_latch_read_begin() returned
 *
 * Context: Any context: touches only its argument.
 * Return: the copy (0 or 1) a read section that began at @start reads.
 */
static inline unsigned ibk_latch_copy(uint32_t start)
{
	return start & 1u;
}

/* Closes a read section as ibk_latch_read_retry() does, without counting
 * the retry: for a caller that redoes the section out of line and counts
 * it there. */
static inline bool ibk__latch_moved(const struct ibk_latch *l, uint32_t start)
{
	/* Acquire fence: pairs with the release fence in ibk__latch_flip().
	 * If a relaxed load above read a store made after that flip, the
	 * reload below sees the flip's count or a later one. */
	ibk__fence_acquire();
	return ibk__load(&l->count, relaxed) != start;
}

/**
 * ibk_latch_read_retry() - Closes a read section: whether it must be redone
 * @l: the latch
 * @start: the count ibk_latch_read_begin() returned
 *
 * Closes a read section: true if a writer moved the count since @start, so it
 * may have written the copy read and the loads must be redone.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: true if the read section must be redone, false if its loads stand.
 */
static inline bool ibk_latch_read_retry(const struct ibk_latch *l,
					uint32_t start)
{
	if (!ibk__latch_moved(l, start))
		return false;
	IBK_LATCH_RETRY_HOOK();
	return true;
}

/* Writer side: moves readers to the other copy, so that the copy they
 * were on may be written. */
static inline void ibk__latch_flip(struct ibk_latch *l)
{
	/* wraps on purpose: a count runs round, skipping NEVER below */
	uint32_t count = ibk__load(&l->count, relaxed) + 1u;

	count += (uint32_t)(count == 0) << 1;	/* never IBK_GENERATION_NEVER */
	/* Release: pairs with the acquire load in ibk_latch_read_begin();
	 * a reader that sees the new count sees every store made to the
	 * copy it names, by this writer or an earlier one. */
	ibk__store(&l->count, count, release);
	/* Release fence: pairs with the acquire fence in
	 * ibk_latch_read_retry(); the new count is ordered before every
	 * store to the copy the readers just left. */
	ibk__fence_release();
}

/* Writer side: takes the lock word unless another writer holds it. */
static inline bool ibk__latch_try_lock(struct ibk_latch *l)
{
	uint32_t idle = 0;

	/* Acquire on success: pairs with the release store in the previous
	 * writer's ibk_latch_write_end(), whose copies this writer updates. */
	return ibk__cas(&l->writer, &idle, 1u, acquire, relaxed);
}

/* Writer side: takes the lock word, spinning while another writer holds
 * it. Moves no reader: a writer may still decide to write nothing. */
static inline void ibk__latch_lock(struct ibk_latch *l)
{
	while (!ibk__latch_try_lock(l))
		while (ibk__load(&l->writer, relaxed) != 0)
			ibk__cpu_relax();
}

/**
 * ibk_latch_write_try_begin() - Takes the lock word unless another writer
 * holds it and moves readers to copy 1
 * @l: the latch
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: IBK_OK (write copy 0 next), or IBK_EBUSY.
 */
static inline int ibk_latch_write_try_begin(struct ibk_latch *l)
{
	if (!ibk__latch_try_lock(l))
		return IBK_EBUSY;
	ibk__latch_flip(l);
	return IBK_OK;
}

/**
 * ibk_latch_write_begin() - As ibk_latch_write_try_begin(), spinning while
 * another writer holds the lock word
 * @l: the latch
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 */
static inline void ibk_latch_write_begin(struct ibk_latch *l)
{
	ibk__latch_lock(l);
	ibk__latch_flip(l);
}

/**
 * ibk_latch_write_switch() - Once copy 0 has the update: moves readers back to
 * it (write copy 1 next)
 * @l: the latch
 *
 * Context: The writer holding the lock word (ibk_latch_write_begin()): never
 * waits.
 */
static inline void ibk_latch_write_switch(struct ibk_latch *l)
{
	ibk__latch_flip(l);
}

/**
 * ibk_latch_write_end() - Once both copies have the update (or, after
 * ibk__latch_lock(), none): frees the lock word
 * @l: the latch
 *
 * Context: The writer holding the lock word (ibk_latch_write_begin()): never
 * waits.
 */
static inline void ibk_latch_write_end(struct ibk_latch *l)
{
	/* Release: pairs with the acquire CAS of the next writer in
	 * ibk_latch_write_try_begin(). */
	ibk__store(&l->writer, 0u, release);
}

/* True if no writer has moved the count since @start was read: one load,
 * one compare. */
static inline bool ibk__latch_unchanged(const struct ibk_latch *l,
				       uint32_t start)
{
	/* Acquire: pairs with the release store in ibk__latch_flip(), like
	 * ibk_latch_read_begin(). */
	return ibk__load(&l->count, acquire) == start;
}

/* ------------------------------------------------------------------------
 * 16-bit saturating counters
 *
 * PortInfo holds P_KeyViolations and Q_KeyViolations as 16-bit counters
 * that stop at 0xffff (IBA 14.2.5.6). The count lives in a 32-bit atomic:
 * an add happens only while the value is below 0xffff, so each thread can
 * overshoot at most once, by at most 0xffff, and the value never wraps for
 * fewer than 65535 concurrent threads. Reads clamp it to 0xffff. All
 * accesses are relaxed: a counter orders nothing else.
 *
 * API:
 *	ibk_counter16_add(c, n)
 *	ibk_counter16_inc(c)
 *	ibk_counter16_read(c)
 *	ibk_counter16_reset(c)
 * ------------------------------------------------------------------------ */

#define IBK_COUNTER16_MAX 0xffffu

/**
 * struct ibk_counter16 - A 16-bit saturating counter, safe from any number of
 * threads
 *
 * Zero-initialise it (static storage) or ibk_counter16_reset() it first.
 */
struct ibk_counter16 {
	/* private: */
	IBK__ATOMIC(uint32_t) value;
};

/**
 * ibk_counter16_add() - Adds @n, stopping at IBK_COUNTER16_MAX
 * @c: the counter
 * @n: how many
 *
 * Safe from any number of threads.
 *
 * Context: Any context, interrupt handlers included: one atomic
 * read-modify-write.
 */
static inline void ibk_counter16_add(struct ibk_counter16 *c, uint32_t n)
{
	if (n > IBK_COUNTER16_MAX)
		n = IBK_COUNTER16_MAX;
	if (ibk__load(&c->value, relaxed) < IBK_COUNTER16_MAX)
		ibk__fetch_add(&c->value, n, relaxed);
}

/**
 * ibk_counter16_inc() - Adds one, stopping at IBK_COUNTER16_MAX
 * @c: the counter
 *
 * Context: Any context, interrupt handlers included: one atomic
 * read-modify-write.
 */
static inline void ibk_counter16_inc(struct ibk_counter16 *c)
{
	ibk_counter16_add(c, 1);
}

/* A stored count as PortInfo reports it: stopped at IBK_COUNTER16_MAX. */
static inline uint16_t ibk__counter16_clamp(uint32_t v)
{
	return (uint16_t)(v < IBK_COUNTER16_MAX ? v : IBK_COUNTER16_MAX);
}

/**
 * ibk_counter16_read() - The count as PortInfo would report it
 * @c: the counter
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: the count as PortInfo would report it: at most IBK_COUNTER16_MAX.
 */
static inline uint16_t ibk_counter16_read(const struct ibk_counter16 *c)
{
	return ibk__counter16_clamp(ibk__load(&c->value, relaxed));
}

/**
 * ibk_counter16_reset() - Zeroes the counter and returns what
 * ibk_counter16_read() would have
 * @c: the counter
 *
 * Context: Any context, interrupt handlers included: one atomic exchange.
 * Return: what ibk_counter16_read() would have.
 */
static inline uint16_t ibk_counter16_reset(struct ibk_counter16 *c)
{
	return ibk__counter16_clamp(ibk__exchange(&c->value, 0u, relaxed));
}

/* Writer side: @c, storage that holds no counter yet, starts at 0: a
 * store, where ibk_counter16_reset() would read what the storage held. */
static inline void ibk__counter16_init(struct ibk_counter16 *c)
{
	ibk__store(&c->value, 0u, relaxed);
}

/* ------------------------------------------------------------------------
 * Port states and change events
 * ------------------------------------------------------------------------ */

/**
 * enum ibk_port_state - PortInfo:PortState (IBA 14.2.5.6), numbered as enum
 * ibv_port_state
 * @IBK_PORT_DOWN: the link is down
 * @IBK_PORT_INIT: link up, not yet configured by the subnet manager
 * @IBK_PORT_ARMED: configured; only subnet management packets flow
 * @IBK_PORT_ACTIVE: configured and passing traffic
 * @IBK_PORT_ACTIVE_DEFER: active, its link deferred by the subnet manager
 *
 * Tables are readable in ARMED, ACTIVE and ACTIVE_DEFER, which the verbs
 * report for an active port whose link is deferred by the subnet manager (its
 * tables stay as they were). Leaving those states for any other marks the
 * tables awaiting a refill: what a port held before an outage is not what it
 * holds after.
 */
enum ibk_port_state {
	IBK_PORT_DOWN = 1,
	IBK_PORT_INIT = 2,
	IBK_PORT_ARMED = 3,
	IBK_PORT_ACTIVE = 4,
	IBK_PORT_ACTIVE_DEFER = 5,
};

/**
 * enum ibk_event_type - Asynchronous events that change what a port's tables
 * hold
 * @IBK_EVENT_DEVICE_FATAL: both: DOWN, awaiting refill
 * @IBK_EVENT_PORT_ACTIVE: both: ACTIVE, awaiting refill
 * @IBK_EVENT_PORT_ERR: both: DOWN, awaiting refill
 * @IBK_EVENT_LID_CHANGE: both tables awaiting refill
 * @IBK_EVENT_PKEY_CHANGE: P_Key table awaiting refill
 * @IBK_EVENT_SM_CHANGE: both tables awaiting refill
 * @IBK_EVENT_CLIENT_REREGISTER: both tables awaiting refill
 * @IBK_EVENT_GID_CHANGE: GID table awaiting refill
 *
 * The asynchronous events that change what a port's tables may hold, numbered
 * as enum ibv_event_type so a verbs event loop can pass event.event_type
 * straight through. Each value's line above says what ibk_port_event() does
 * on it.
 */
enum ibk_event_type {
	IBK_EVENT_DEVICE_FATAL = 8,
	IBK_EVENT_PORT_ACTIVE = 9,
	IBK_EVENT_PORT_ERR = 10,
	IBK_EVENT_LID_CHANGE = 11,
	IBK_EVENT_PKEY_CHANGE = 12,
	IBK_EVENT_SM_CHANGE = 13,
	IBK_EVENT_CLIENT_REREGISTER = 17,
	IBK_EVENT_GID_CHANGE = 18,
};

/* ------------------------------------------------------------------------
 * Table storage
 *
 * The caller provides, per table of capacity C (1..65536), the cells and
 * hash slots of both latch copies: IBK_PKEY_CELLS(C) or IBK_GID_CELLS(C)
 * cells and IBK_PKEY_HASH_SLOTS(C) (P_Key) or IBK_HASH_SLOTS(C) (GID, or
 * either) slots, static or allocated, alive as long as the table. Each
 * copy's hash index is open addressing with linear probing over a
 * power-of-two slot array; a slot packs a 16-bit key or tag with the
 * 16-bit lowest table index holding it, and 0 marks it empty. A P_Key
 * table takes three 2-byte cells per entry and copy: the entry's key,
 * which readers load, and the two links of its key's chain of duplicates,
 * which only the writer uses (see "P_Key table").
 *
 * The index is at most a quarter full with those slot counts. Where RAM
 * counts more than a few nanoseconds per find, as in firmware, a table
 * also takes as few as IBK_PKEY_HASH_SLOTS_MIN(C) or IBK_HASH_SLOTS_MIN(C)
 * slots, half as many: an index at most half full, whose finds read about
 * 1.5 slots when the key is there and 2.5 when it is not, against 1.2 and
 * 1.4 (linear probing's expected probe counts at load 1/2 and 1/4). For a
 * 128-entry P_Key table that is 2 KiB of index instead of 4 KiB, both
 * copies. Any slot count in between works too: init takes the largest
 * power of two per copy that fits, up to the quarter-full size.
 *
 * API:
 *	IBK_PKEY_CELLS(capacity)
 *	IBK_GID_CELLS(capacity)
 *	IBK_HASH_SLOTS(capacity)
 *	IBK_PKEY_HASH_SLOTS(capacity)
 *	IBK_HASH_SLOTS_MIN(capacity)
 *	IBK_PKEY_HASH_SLOTS_MIN(capacity)
 * ------------------------------------------------------------------------ */

#define IBK_TABLE_MAX_CAPACITY 65536u

/**
 * IBK_PKEY_CELLS() - The cells of a P_Key table of @capacity entries
 * @capacity: how many entries the table holds
 *
 * Per entry and copy, three cells: its key and its two chain links.
 *
 * Return: the count, a constant expression if @capacity is.
 */
#define IBK_PKEY_CELLS(capacity)	(6u * (capacity))
/**
 * IBK_GID_CELLS() - The cells of a GID table of @capacity entries
 * @capacity: how many entries the table holds
 *
 * Return: the count, one per entry and copy; a constant expression if
 * @capacity is.
 */
#define IBK_GID_CELLS(capacity)		(2u * (capacity))

#define IBK__SLOTS_IF(capacity, log2) \
	(capacity) <= (1u << (log2)) ? (4u << (log2)) :
/* One copy's hash slots: the power of two at least four times @capacity. */
#define IBK__COPY_SLOTS(capacity) \
	(IBK__SLOTS_IF(capacity, 0) IBK__SLOTS_IF(capacity, 1) \
	 IBK__SLOTS_IF(capacity, 2) IBK__SLOTS_IF(capacity, 3) \
	 IBK__SLOTS_IF(capacity, 4) IBK__SLOTS_IF(capacity, 5) \
	 IBK__SLOTS_IF(capacity, 6) IBK__SLOTS_IF(capacity, 7) \
	 IBK__SLOTS_IF(capacity, 8) IBK__SLOTS_IF(capacity, 9) \
	 IBK__SLOTS_IF(capacity, 10) IBK__SLOTS_IF(capacity, 11) \
	 IBK__SLOTS_IF(capacity, 12) IBK__SLOTS_IF(capacity, 13) \
	 IBK__SLOTS_IF(capacity, 14) IBK__SLOTS_IF(capacity, 15) \
	 IBK__SLOTS_IF(capacity, 16) 0u)

/**
 * IBK_HASH_SLOTS() - Hash slots of a table, both copies, each a quarter full
 * at most
 * @capacity: how many entries the table holds (evaluated more than once)
 *
 * The hash slots of a table of @capacity entries, both copies, each index at
 * most a quarter full; enough for either table.
 *
 * Return: twice the power of two at least four times @capacity, a constant
 * expression if @capacity is; 0 above IBK_TABLE_MAX_CAPACITY.
 */
#define IBK_HASH_SLOTS(capacity)	(2u * IBK__COPY_SLOTS(capacity))

/* A P_Key copy needs no more than 65536 slots, one per 16-bit key: from
 * there on a slot is found without hashing (see ibk__pkey_home()). */
#define IBK__PKEY_MAX_COPY_SLOTS 65536u
#define IBK__PKEY_COPY_SLOTS(capacity) \
	(IBK__COPY_SLOTS(capacity) < IBK__PKEY_MAX_COPY_SLOTS ? \
	 IBK__COPY_SLOTS(capacity) : IBK__PKEY_MAX_COPY_SLOTS)
/**
 * IBK_PKEY_HASH_SLOTS() - Hash slots of a P_Key table, both copies, a quarter
 * full at most
 * @capacity: how many entries the table holds (evaluated more than once)
 *
 * The hash slots of a P_Key table of @capacity entries, both copies, each
 * index at most a quarter full.
 *
 * Return: IBK_HASH_SLOTS(@capacity), but at most 65536 a copy: a P_Key copy
 * needs no more, one slot per 16-bit key.
 */
#define IBK_PKEY_HASH_SLOTS(capacity)	(2u * IBK__PKEY_COPY_SLOTS(capacity))

/**
 * IBK_HASH_SLOTS_MIN() - Fewest hash slots of a table, both copies: half full
 * at most
 * @capacity: how many entries the table holds (evaluated more than once)
 *
 * The fewest hash slots a table of @capacity entries takes, both copies: each
 * index at most half full.
 *
 * Return: half of IBK_HASH_SLOTS(@capacity), a constant expression if
 * @capacity is.
 */
#define IBK_HASH_SLOTS_MIN(capacity)	IBK__COPY_SLOTS(capacity)
/**
 * IBK_PKEY_HASH_SLOTS_MIN() - Fewest hash slots of a P_Key table, both copies
 * @capacity: how many entries the table holds (evaluated more than once)
 *
 * The fewest hash slots a P_Key table of @capacity entries takes, both copies:
 * each index at most half full.
 *
 * Return: half of IBK_HASH_SLOTS(@capacity), or IBK_PKEY_HASH_SLOTS(@capacity)
 * where that is fewer; a constant expression if @capacity is.
 */
#define IBK_PKEY_HASH_SLOTS_MIN(capacity) \
	(IBK__COPY_SLOTS(capacity) / 2u < IBK__PKEY_MAX_COPY_SLOTS ? \
	 IBK__COPY_SLOTS(capacity) : 2u * IBK__PKEY_MAX_COPY_SLOTS)

/**
 * struct ibk_hash_slot - One slot of a table's hash index; storage only
 *
 * One slot of a table's hash index.
 */
struct ibk_hash_slot {
	/* private: */
	IBK__ATOMIC(uint32_t) word;
};

/**
 * struct ibk_pkey_cell - One cell of a P_Key table's storage: an entry, or a
 * link of the writer's chains
 *
 * One P_Key table entry, an invalid key (base 0) for an empty one; or, in the
 * writer's chains, one link: a table index.
 */
struct ibk_pkey_cell {
	/* private: */
	IBK__ATOMIC(uint16_t) pkey;
};

/**
 * struct ibk_gid_cell - One cell of a GID table's storage: an entry as four
 * words, its type and the writer's links
 *
 * One GID table entry: the GID as four words (see ibk__gid_to_words()), its
 * type, and the writer's links between the entries holding the same GID and
 * type (see ibk__gid_prev()).
 */
struct ibk_gid_cell {
	/* private: */
	IBK__ATOMIC(uint32_t) word[4];
	IBK__ATOMIC(uint16_t) type;
	IBK__ATOMIC(uint16_t) prev;
	IBK__ATOMIC(uint16_t) next;
};

IBK__STATIC_ASSERT(sizeof(struct ibk_hash_slot) == 4 &&
		   sizeof(struct ibk_pkey_cell) == 2 &&
		   sizeof(struct ibk_gid_cell) == 24,
		   "table storage must have the same layout in C and C++");

/* What both tables share. Everything readers use that a writer changes
 * after init is kept per copy, status and limit included. In a table
 * aligned to a cache line, a get at rest reads that one line: the count,
 * copy 0's limit and a P_Key table's copy 0 cells pointer (copy 1's, read
 * only while a writer is between its flips, starts the next line). */
struct ibk__table {
	struct ibk_latch latch;
	IBK__ATOMIC(uint32_t) status[2]; /* see IBK__UNREADABLE */
	IBK__ATOMIC(uint32_t) limit[2];	/* see ibk__status_store() */
	IBK__ATOMIC(uint32_t) epoch;	/* change events so far: refill tickets */
	uint32_t capacity;
	uint32_t hash_mask;		/* one copy's hash slots - 1 */
	uint32_t hash_shift;		/* 32 - log2(one copy's hash slots) */
	struct ibk_hash_slot *slots[2];
};

/*
 * A copy's status word: the port state in the bits from IBK__STATE_SHIFT
 * up, and below them why readers may not use the copy, which the writer
 * works out once per update so that a read section makes one test: 0 in
 * the IBK__UNREADABLE bits is a readable port whose table readers may
 * use, fresh, or awaiting its refill on a port that serves stale tables
 * (ibk_port_serve_stale()). IBK__BLOCKED is derived, by
 * ibk__status_store() alone; writers reason on the other bits.
 */
#define IBK__NOT_READY		0x1u	/* not ARMED, ACTIVE or ACTIVE_DEFER */
#define IBK__AWAITING_REFILL	0x2u
#define IBK__SERVE_STALE	0x4u	/* ibk_port_serve_stale() */
#define IBK__BLOCKED		0x8u	/* not ready, or awaiting unserved */
#define IBK__UNREADABLE		(IBK__NOT_READY | IBK__BLOCKED)
#define IBK__STATE_SHIFT	8

/* A slot's word: an entry's index and its key (a P_Key, a GID's tag),
 * never 0, which marks an empty slot. The index is the high half, so that
 * an analyser bounding each value by an interval bounds every slot's
 * index by the capacity. */
#define IBK__SLOT_WORD(index, key)	((uint32_t)(index) << 16 | (key))
#define IBK__SLOT_INDEX(word)		((word) >> 16)
#define IBK__SLOT_KEY(word)		((word) & 0xffffu)

static inline bool ibk__state_readable(uint32_t state)
{
	return state == IBK_PORT_ARMED || state == IBK_PORT_ACTIVE ||
	       state == IBK_PORT_ACTIVE_DEFER;
}

/* The status word of port state @state with the @awaiting flag (0 or
 * IBK__AWAITING_REFILL), readiness worked out. */
static inline uint32_t ibk__status_make(uint32_t state, uint32_t awaiting)
{
	return (state << IBK__STATE_SHIFT) | awaiting |
	       (ibk__state_readable(state) ? 0u : IBK__NOT_READY);
}

/*
 * Writer side (or init): sets copy @c's status word to @status, and its
 * limit to what a get by index compares against: the capacity while the
 * copy is readable, 0 while it is not, so that one compare refuses both an
 * index out of range and an unreadable copy (see ibk__pkey_get()). Call
 * only after the capacity is set.
 */
static inline void ibk__status_store(struct ibk__table *h, unsigned c,
				     uint32_t status)
{
	status &= ~IBK__BLOCKED;
	if ((status & IBK__NOT_READY) ||
	    (status & (IBK__AWAITING_REFILL | IBK__SERVE_STALE)) ==
	    IBK__AWAITING_REFILL)
		status |= IBK__BLOCKED;
	ibk__store(&h->status[c], status, relaxed);
	ibk__store(&h->limit[c],
		   (status & IBK__UNREADABLE) ? 0u : h->capacity, relaxed);
}

/* Writer side: copy @c's status word as writers reason on it. */
static inline uint32_t ibk__status_load(const struct ibk__table *h,
					unsigned c)
{
	return ibk__load(&h->status[c], relaxed) & ~IBK__BLOCKED;
}

/* Inside a read section of copy @c: its IBK__UNREADABLE bits, 0 if reads
 * may proceed; ibk__unreadable_why() says why not. */
static inline uint32_t ibk__table_unreadable(const struct ibk__table *h,
					     unsigned c)
{
	return ibk__load(&h->status[c], relaxed) & IBK__UNREADABLE;
}

/* The error IBK__UNREADABLE bits @unreadable (not 0) stand for: a port
 * that is not readable comes before a table awaiting a refill. Never
 * IBK_OK, which compilers then need not track on the error paths. */
static inline int ibk__unreadable_why(uint32_t unreadable)
{
	if (unreadable & IBK__NOT_READY)
		return IBK_ENOTREADY;
	return IBK_ESTALE;
}

/* IBK_OK for @unreadable 0, else as ibk__unreadable_why(). */
static inline int ibk__unreadable_error(uint32_t unreadable)
{
	if (!unreadable)
		return IBK_OK;
	return ibk__unreadable_why(unreadable);
}

/* Inside a read section of copy @c: IBK_OK if reads may proceed, else why
 * not. */
static inline int ibk__table_readable(const struct ibk__table *h, unsigned c)
{
	return ibk__unreadable_error(ibk__table_unreadable(h, c));
}

/* Splits @slot_count slots between the copies: each uses the fewest for
 * @capacity entries, half full (IBK_HASH_SLOTS_MIN() / 2, but at most
 * @max_slots), or the largest power of two up to @max_slots that fits in
 * its half (a lower load factor). */
static inline int ibk__table_init(struct ibk__table *h, uint32_t capacity,
				  struct ibk_hash_slot *slots,
				  uint32_t slot_count, uint32_t max_slots)
{
	uint32_t n, min_slots = 1, log2 = 0, i, status;

	if (!slots)
		return IBK_EINVAL;
	if (capacity == 0 || capacity > IBK_TABLE_MAX_CAPACITY)
		return IBK_ERANGE;
	while (min_slots < 2 * capacity)
		min_slots *= 2;
	if (min_slots > max_slots)
		min_slots = max_slots;
	if (slot_count / 2 < min_slots)
		return IBK_ERANGE;
	for (n = min_slots; n <= slot_count / 4 && n < max_slots; n *= 2)
		;
	while ((1u << log2) < n)
		log2++;
	h->capacity = capacity;
	h->hash_mask = n - 1;
	h->hash_shift = 32 - log2;
	h->slots[0] = slots;
	h->slots[1] = slots + n;
	for (i = 0; i < 2 * n; i++)
		ibk__store(&slots[i].word, 0u, relaxed);
	ibk_latch_init(&h->latch, 0);
	/* nothing read from a device yet: awaiting the first refill */
	status = ibk__status_make(IBK_PORT_DOWN, IBK__AWAITING_REFILL);
	ibk__status_store(h, 0, status);
	ibk__status_store(h, 1, status);
	ibk__store(&h->epoch, 0u, relaxed);
	return IBK_OK;
}

/*
 * The status after replacing the state of @status with @state (0: keep
 * it) and adding the @awaiting flag. Leaving the readable states brings
 * the flag along, and so does entering them from any other state: what
 * was read from the device while the port was down is not what the
 * active port holds (ibv_query_pkey(3): the table is only defined while
 * ARMED or ACTIVE), whichever came first, that read or the state change.
 */
static inline uint32_t ibk__status_next(uint32_t status, uint32_t state,
					uint32_t awaiting)
{
	if (state) {
		if (!ibk__state_readable(state) ||
		    (status & IBK__NOT_READY))
			awaiting = IBK__AWAITING_REFILL;
	} else {
		state = status >> IBK__STATE_SHIFT;
	}
	return ibk__status_make(state,
				(status & IBK__AWAITING_REFILL) | awaiting) |
	       (status & IBK__SERVE_STALE);
}

/* Writer side: in copy @c, clears "awaiting refill". */
static inline void ibk__status_refilled(struct ibk__table *h, unsigned c)
{
	ibk__status_store(h, c, ibk__status_load(h, c) &
			       ~IBK__AWAITING_REFILL);
}

/* Writer side: one more change event; refills with older tickets are
 * refused from now on. */
static inline void ibk__epoch_advance(struct ibk__table *h)
{
	/* Release: pairs with the acquire load in ibk__refill_ticket(); a
	 * consumer whose ticket is this event's sees what was written before
	 * the event was applied (the device change that raised it). */
	ibk__store(&h->epoch, ibk__load(&h->epoch, relaxed) + 1u, release);
}

/*
 * One update of the state (@state, 0: keep it) and the @awaiting flag. An
 * update that marks the table awaiting a refill (the @awaiting flag, a
 * state that is not readable, or entering a readable one from one that is
 * not) is a change event, and so is a change of state while the table
 * awaits one: it moves the epoch, so that refills holding an older ticket
 * are refused. Setting the state a table already has, while it awaits a
 * refill, is none: a consumer that sets the port state inside its refill
 * loop must see its refill go through.
 */
static inline void ibk__table_update_status(struct ibk__table *h,
					    uint32_t state, uint32_t awaiting)
{
	uint32_t old, status;

	ibk_latch_write_begin(&h->latch);
	old = ibk__status_load(h, 0);
	status = ibk__status_next(old, state, awaiting);
	if (awaiting || (state && !ibk__state_readable(state)) ||
	    ((status & IBK__AWAITING_REFILL) && status != old))
		ibk__epoch_advance(h);
	ibk__status_store(h, 0, status);
	ibk_latch_write_switch(&h->latch);
	ibk__status_store(h, 1, status);
	ibk_latch_write_end(&h->latch);
}

/*
 * Writer side: takes @h's lock word for a refill with @ticket. IBK_OK,
 * with the lock held, if no change event came after the ticket was taken
 * and the port is ARMED or ACTIVE. Else, with the lock free and nothing
 * written: IBK_ESTALE if a change event came after the ticket;
 * IBK_ENOTREADY while the port is in another state (what the device holds
 * then is undefined, ibv_query_pkey(3), and entering ARMED or ACTIVE
 * marks the table awaiting a refill anyway).
 */
static inline int ibk__refill_begin(struct ibk__table *h, uint32_t ticket)
{
	int rc = IBK_OK;

	ibk__latch_lock(&h->latch);
	if (ibk__load(&h->epoch, relaxed) != ticket)
		rc = IBK_ESTALE;
	/* the state in copy 0, which only writers, under the lock, write */
	else if (ibk__load(&h->status[0], relaxed) & IBK__NOT_READY)
		rc = IBK_ENOTREADY;
	if (rc != IBK_OK) {
		ibk_latch_write_end(&h->latch);
		return rc;
	}
	ibk__latch_flip(&h->latch);
	return IBK_OK;
}

/* The ticket a refill of @h takes: the change events so far. */
static inline uint32_t ibk__refill_ticket(const struct ibk__table *h)
{
	/* Acquire: pairs with the release store of ibk__epoch_advance(), and
	 * keeps the caller's device reads that follow after the ticket. */
	return ibk__load(&h->epoch, acquire);
}

static inline bool ibk__port_state_valid(enum ibk_port_state state)
{
	return state >= IBK_PORT_DOWN && state <= IBK_PORT_ACTIVE_DEFER;
}

/* Either table's set_state: IBK_OK, or IBK_EINVAL for a bad @state. */
static inline int ibk__table_set_state(struct ibk__table *h,
				       enum ibk_port_state state)
{
	if (!ibk__port_state_valid(state))
		return IBK_EINVAL;
	ibk__table_update_status(h, (uint32_t)state, 0);
	return IBK_OK;
}

/* Either table's invalidate: marks it awaiting a refill, a change event.
 * IBK_OK. */
static inline int ibk__table_invalidate(struct ibk__table *h)
{
	ibk__table_update_status(h, 0, IBK__AWAITING_REFILL);
	return IBK_OK;
}

/*
 * Writer side: the bulk loops of a refill move whole machine words where
 * the compiler lets a word alias the cells it covers (GCC's and Clang's
 * may_alias): 64 bits where relaxed 64-bit atomics are lock-free on a
 * 64-bit host (in a 64-bit kernel, WRITE_ONCE() of a u64 is one store),
 * else 32 bits, which every port has lock-free. A word is still loaded
 * and stored as a relaxed atomic, so no access is a plain racing one; a
 * reader that loads a cell of a word being stored is on the copy being
 * written, which the latch makes it retry, so it does not matter which
 * cell value it saw. Relaxed atomics are neither merged nor vectorised:
 * the loops take several words a step, as the unrolling is what cuts a
 * loop's cost per word, and take cells one at a time before the first
 * word boundary, after the last, and where the compiler has no may_alias
 * (or the bench's IBK__CELL_LOOPS asks for cells, to time what words buy).
 */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(IBK__CELL_LOOPS)
#if defined(__SIZEOF_POINTER__) && __SIZEOF_POINTER__ == 8 && \
    (defined(IBK_ATOMICS_KERNEL) || \
     (defined(IBK__STD_ATOMICS) && ATOMIC_LLONG_LOCK_FREE == 2))
typedef uint64_t ibk__word_t;
#else
typedef uint32_t ibk__word_t;
#endif
#define IBK__WORDS 1
#define IBK__MAY_ALIAS __attribute__((__may_alias__))
#else
typedef uint32_t ibk__word_t;
#define IBK__WORDS 0	/* no word aliases a cell: cell by cell */
#define IBK__MAY_ALIAS
#endif
#define IBK__WORD_BYTES sizeof(ibk__word_t)

/* Whether bulk loops also take the writers' links between entries as
 * words. Frama-C's EVA (__FRAMAC__) reads a word it copied or added to as
 * any cells, and would then follow a link to any index: there links go one
 * cell at a time, as in an IBK__CELL_LOOPS build. */
#if IBK__WORDS && !defined(__FRAMAC__)
#define IBK__WORD_LINKS 1
#else
#define IBK__WORD_LINKS 0
#endif

/*
 * @p as an address the compiler cannot trace back to an object, as Linux's
 * OPTIMIZER_HIDE_VAR() does: for a short array it knows, GCC would warn
 * (-Warray-bounds) of the word loop that ibk__bulk_head() gives no words.
 * Frama-C (__FRAMAC__) reads the asm as writing any address: it gets @p.
 */
static inline const void *ibk__hide(const void *p)
{
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__FRAMAC__)
	__asm__("" : "+r"(p));
#endif
	return p;
}

/* One word of a bulk loop, over cells of any type. */
struct IBK__MAY_ALIAS ibk__word {
	IBK__ATOMIC(ibk__word_t) v;
};

/* One word of a caller's plain array that a bulk loop reads. */
struct IBK__MAY_ALIAS ibk__plain_word {
	ibk__word_t v;
};

/* The word at byte @at of @base, and of a @base to read only. */
#define IBK__WORD_AT(base, at) \
	((struct ibk__word *)(void *)((char *)(base) + (at)))
#define IBK__CONST_WORD_AT(base, at) \
	((const struct ibk__word *)(const void *)((const char *)(base) + (at)))

#define IBK__BULK_STEP 8u

/* log2 of a cell's size, 2 or 4 bytes, for ibk__bulk_head(): half the
 * size, for those two. */
#define IBK__CELL_SHIFT(cell)	((unsigned)sizeof(cell) / 2u)

/*
 * Where @p lies in its word: the low bits of its address. Frama-C's EVA
 * keeps an address symbolic and knows none of its bits: there it is any
 * offset a word has, so the analysis covers the split of every address.
 */
static inline unsigned ibk__word_offset(const void *p)
{
#ifdef __FRAMAC__
	return Frama_C_unsigned_int_interval(0, IBK__WORD_BYTES - 1);
#else
	return (unsigned)((uintptr_t)p & (IBK__WORD_BYTES - 1));
#endif
}

/*
 * Writer side: a bulk loop over @n cells of 2^@shift bytes, written at @to
 * and read at @from (@to again for a clear), takes this many cells one at
 * a time, up to @to's first word boundary; then whole words while one
 * fits below cell @n (ibk__words_clear(), ibk__words_copy()), then the
 * rest one at a time. All @n, so no words, if @to and @from are not
 * aligned alike, @to is not aligned to a cell, or words may not alias
 * cells. Shifts, not divisions by a cell size: a core without a divide
 * instruction (Cortex-M0) would call a library for them.
 */
static inline size_t ibk__bulk_head(const void *to, const void *from,
				    size_t n, unsigned shift)
{
#if IBK__WORDS
	unsigned at = ibk__word_offset(to);
	size_t skip;

	if ((at & ((1u << shift) - 1)) != 0 || at != ibk__word_offset(from))
		return n;
	skip = (IBK__WORD_BYTES - at) % IBK__WORD_BYTES >> shift;
	return skip < n ? skip : n;
#else
	(void)to;
	(void)from;
	(void)shift;
	return n;
#endif
}

/* Writer side: from byte @at of @to, whole words hold 0 while one fits
 * below byte @end; returns the byte they stop at. */
static inline size_t ibk__words_clear(void *to, size_t at, size_t end)
{
	const size_t step = IBK__BULK_STEP * IBK__WORD_BYTES;
	const ibk__word_t zero = 0;
	struct ibk__word *w;

	for (; end >= step && at <= end - step; at += step) {
		w = IBK__WORD_AT(to, at);
		ibk__store(&w[0].v, zero, relaxed);
		ibk__store(&w[1].v, zero, relaxed);
		ibk__store(&w[2].v, zero, relaxed);
		ibk__store(&w[3].v, zero, relaxed);
		ibk__store(&w[4].v, zero, relaxed);
		ibk__store(&w[5].v, zero, relaxed);
		ibk__store(&w[6].v, zero, relaxed);
		ibk__store(&w[7].v, zero, relaxed);
	}
	for (; at + IBK__WORD_BYTES <= end; at += IBK__WORD_BYTES)
		ibk__store(&IBK__WORD_AT(to, at)->v, zero, relaxed);
	return at;
}

/* Writer side: from byte @at on, whole words of @to take the values of
 * those of @from while one fits below byte @end; returns the byte they
 * stop at. */
static inline size_t ibk__words_copy(void *to, const void *from, size_t at,
				     size_t end)
{
	const size_t step = IBK__BULK_STEP * IBK__WORD_BYTES;
	const struct ibk__word *f;
	struct ibk__word *w;

	for (; end >= step && at <= end - step; at += step) {
		w = IBK__WORD_AT(to, at);
		f = IBK__CONST_WORD_AT(from, at);
		ibk__store(&w[0].v, ibk__load(&f[0].v, relaxed), relaxed);
		ibk__store(&w[1].v, ibk__load(&f[1].v, relaxed), relaxed);
		ibk__store(&w[2].v, ibk__load(&f[2].v, relaxed), relaxed);
		ibk__store(&w[3].v, ibk__load(&f[3].v, relaxed), relaxed);
		ibk__store(&w[4].v, ibk__load(&f[4].v, relaxed), relaxed);
		ibk__store(&w[5].v, ibk__load(&f[5].v, relaxed), relaxed);
		ibk__store(&w[6].v, ibk__load(&f[6].v, relaxed), relaxed);
		ibk__store(&w[7].v, ibk__load(&f[7].v, relaxed), relaxed);
	}
	for (; at + IBK__WORD_BYTES <= end; at += IBK__WORD_BYTES)
		ibk__store(&IBK__WORD_AT(to, at)->v,
			   ibk__load(&IBK__CONST_WORD_AT(from, at)->v, relaxed),
			   relaxed);
	return at;
}

/* Writer side: @n slots from @to empty. */
static inline void ibk__slots_clear(struct ibk_hash_slot *to, uint32_t n)
{
	const unsigned shift = IBK__CELL_SHIFT(*to);
	size_t head = ibk__bulk_head(to, to, n, shift);
	size_t i;

	for (i = 0; i < head; i++)
		ibk__store(&to[i].word, 0u, relaxed);
	i = ibk__words_clear(to, head << shift, (size_t)n << shift) >> shift;
	for (; i < n; i++)
		ibk__store(&to[i].word, 0u, relaxed);
}

/* Writer side: @n slots from @to take the words of those from @from. */
static inline void ibk__slots_copy(struct ibk_hash_slot *to,
				   const struct ibk_hash_slot *from,
				   uint32_t n)
{
	const unsigned shift = IBK__CELL_SHIFT(*to);
	size_t head = ibk__bulk_head(to, from, n, shift);
	size_t i;

	for (i = 0; i < head; i++)
		ibk__store(&to[i].word, ibk__load(&from[i].word, relaxed),
			   relaxed);
	i = ibk__words_copy(to, from, head << shift,
			    (size_t)n << shift) >> shift;
	for (; i < n; i++)
		ibk__store(&to[i].word, ibk__load(&from[i].word, relaxed),
			   relaxed);
}

/* Writer side: empties copy @c's index. */
static inline void ibk__hash_clear(struct ibk__table *h, unsigned c)
{
	ibk__slots_clear(h->slots[c], h->hash_mask + 1);
}

/* Writer side: puts @word in the first empty slot from @home. There is one:
 * an index holds fewer keys than slots (half of them at most, or, with one
 * slot per 16-bit P_Key, never the two invalid keys). */
static inline void ibk__hash_insert(struct ibk__table *h, unsigned c,
				    uint32_t home, uint32_t word)
{
	struct ibk_hash_slot *slots = h->slots[c];
	uint32_t pos = home;

	while (ibk__load(&slots[pos].word, relaxed) != 0)
		pos = (pos + 1) & h->hash_mask;
	ibk__store(&slots[pos].word, word, relaxed);
}

/* How far slot @to lies past slot @from, round an index of @mask + 1
 * slots (a power of two, 2^16 or fewer). */
static inline uint32_t ibk__hash_distance(uint32_t from, uint32_t to,
					  uint32_t mask)
{
	return (to + mask + 1 - from) & mask;
}

/*
 * Writer side: empties slot @hole without tombstones, by moving back each
 * later word of the run that may live there: one whose home is not
 * cyclically inside (hole, pos]. @home gives a word's home slot in copy
 * @c. A reader still probing copy @c may miss a word; it retries.
 */
static inline void ibk__hash_remove(struct ibk__table *h, unsigned c,
				    uint32_t hole, const void *table,
				    uint32_t (*home)(const void *, unsigned,
						     uint32_t))
{
	struct ibk_hash_slot *slots = h->slots[c];
	uint32_t mask = h->hash_mask;
	uint32_t pos = hole;
	uint32_t word;

	for (;;) {
		pos = (pos + 1) & mask;
		word = ibk__load(&slots[pos].word, relaxed);
		if (word == 0)
			break;
		if (ibk__hash_distance(home(table, c, word), pos, mask) >=
		    ibk__hash_distance(hole, pos, mask)) {
			ibk__store(&slots[hole].word, word, relaxed);
			hole = pos;
		}
	}
	ibk__store(&slots[hole].word, 0u, relaxed);
}

/* Writer side: copy @to's index becomes the other copy's, word for word.
 * A refill builds one copy's index and copies it, rather than probing
 * for every key twice. */
static inline void ibk__hash_copy(struct ibk__table *h, unsigned to)
{
	ibk__slots_copy(h->slots[to], h->slots[to ^ 1u], h->hash_mask + 1);
}

/* ------------------------------------------------------------------------
 * P_Key table
 *
 * The hash index holds one slot per distinct valid P_Key value: the exact
 * 16-bit key and the lowest index holding it. Its home slot comes from the
 * base alone, so the full and the limited key of a partition share one
 * probe run, and the writer keeps the full key's slot ahead of the limited
 * one's: the first slot of the partition in the run answers a find by
 * value, and a find costs the same whichever membership it finds.
 *
 * The writer keeps, per copy, each valid key's chain: the indexes holding
 * it, in index order, doubly linked; the index in the key's slot heads it.
 * An entry's two links, the previous and the next index of its chain (the
 * entry's own index at the tail; a head's previous link is unused), are
 * 16-bit cells after both copies' keys, which no reader loads: all
 * previous links, then all next links, each entry's two copies side by
 * side, so that a refill writes both copies' links at one address. Taking
 * an index out of its chain is O(1), and if it was the head the slot
 * takes the next one; putting one in walks its key's chain to its place:
 * O(1) but for duplicates of one key, which it walks. A refill builds
 * copy 0 from the top index down, each index heading its key's chain, so
 * O(1) each, and copies keys and slots into copy 1.
 *
 * API:
 *	ibk_pkey_table_init(t, cells, capacity, slots, slot_count)
 *	ibk_pkey_table_refill_ticket(t)
 *	ibk_pkey_table_refill(t, pkeys, n, ticket)
 *	ibk_pkey_table_set(t, index, pkey)
 *	ibk_pkey_table_set_state(t, state)
 *	ibk_pkey_table_invalidate(t)
 *	ibk_pkey_table_ref_get(t, index, ref)
 *	ibk_pkey_table_get(t, index, pkey)
 *	ibk_pkey_table_ref_find(t, pkey, ref)
 *	ibk_pkey_table_find(t, pkey, found)
 *	ibk_pkey_table_find_exact(t, pkey)
 *	ibk_pkey_table_snapshot(t, n, pkeys, generation)
 *	ibk_pkey_table_ref_fresh(t, ref)
 * ------------------------------------------------------------------------ */

/**
 * struct ibk_pkey_table - A cached P_Key table, on caller storage
 * (ibk_pkey_table_init())
 */
struct ibk_pkey_table {
	/* private: */
	struct ibk__table hdr;
	struct ibk_pkey_cell *cells[2];
	struct ibk_pkey_cell *links[2];
	uint32_t hash_mul;
};

/**
 * struct ibk_pkey_ref - A cached entry: valid while ibk_pkey_table_ref_fresh()
 * says so
 * @generation: the generation the entry was read in
 * @index: the entry's index
 * @pkey: the P_Key the entry held
 */
struct ibk_pkey_ref {
	uint32_t generation;
	uint16_t index;
	ibk_pkey_t pkey;
};

/*
 * The low 32 bits of @key x @mul: the product of Fibonacci hashing, which
 * wraps on purpose. Taken from the 64-bit product, which does not wrap
 * (compilers emit the one 32-bit multiply all the same), so that
 * Frama-C's EVA sees no overflow: past an unsigned overflow alarm it would
 * go on with only the products that do not wrap, a few home slots.
 */
static inline uint32_t ibk__hash_product(uint32_t key, uint32_t mul)
{
	return (uint32_t)((uint64_t)key * mul & 0xffffffffu);
}

/* hash_mul with one slot per 16-bit key: base * 2^17 >> 16 = base * 2. */
#define IBK__PKEY_DIRECT_MUL (1u << 17)

/*
 * The home slot of a partition: the top bits of its base times hash_mul.
 * Below 65536 slots that is Fibonacci hashing, which spreads consecutive
 * partitions; at 65536 hash_mul is 2^17, so the home is base * 2 and every
 * partition owns two slots of its own, its full key's and its limited
 * key's: no collisions, and a probe never reads past them.
 */
static inline uint32_t ibk__pkey_hash(ibk_pkey_t pkey, uint32_t mul,
				      uint32_t shift)
{
	return ibk__hash_product(ibk_pkey_base(pkey), mul) >> shift;
}

/* @t's home slot for @pkey (see ibk__pkey_hash()). */
static inline uint32_t ibk__pkey_home(const struct ibk_pkey_table *t,
				      ibk_pkey_t pkey)
{
	return ibk__pkey_hash(pkey, t->hash_mul, t->hdr.hash_shift);
}

static inline uint32_t ibk__pkey_word_home(const void *table, unsigned c,
					   uint32_t word)
{
	(void)c;
	return ibk__pkey_home((const struct ibk_pkey_table *)table,
			      (ibk_pkey_t)IBK__SLOT_KEY(word));
}

/*
 * Walks copy @c's run of @pkey's partition for the first slot whose key
 * equals @pkey in the bits of @keymask (IBK_PKEY_BASE_MASK: the partition;
 * 0xffff: the exact key): returns its position and sets *word, or returns
 * -1 with *word = 0. Safe inside a read section: the walk is bounded by
 * the slot count and every position is masked, as a writer that moves on
 * to this copy may leave a run half moved before the reader retries.
 */
static inline int ibk__pkey_probe(const struct ibk_pkey_table *t, unsigned c,
				  ibk_pkey_t pkey, uint32_t keymask,
				  uint32_t *word)
{
	const struct ibk_hash_slot *slots = t->hdr.slots[c];
	uint32_t mask = t->hdr.hash_mask;
	uint32_t pos = ibk__pkey_home(t, pkey) & mask;
	uint32_t want = pkey & keymask;
	uint32_t n, w;

	*word = 0;
	for (n = 0; n <= mask; n++, pos = (pos + 1) & mask) {
		w = ibk__load(&slots[pos].word, relaxed);
		if (w == 0)
			break;
		if ((IBK__SLOT_KEY(w) & keymask) == want) {
			*word = w;
			return (int)pos;
		}
	}
	return -1;
}

/* The slot word of the entry a find by value answers with in copy @c (0:
 * none): the lowest full-member entry of @pkey's base, else the lowest
 * limited one. An invalid @pkey finds nothing: no slot holds base 0. */
static inline uint32_t ibk__pkey_find_word(const struct ibk_pkey_table *t,
					   unsigned c, ibk_pkey_t pkey)
{
	uint32_t word;

	ibk__pkey_probe(t, c, pkey, IBK_PKEY_BASE_MASK, &word);
	return word;
}

/* Which link of an entry: the previous or the next index of its chain. */
#define IBK__PKEY_PREV 0u
#define IBK__PKEY_NEXT 1u

/*
 * Writer side: one copy of @t as its writer sees it, the table's fields
 * read once: the relaxed stores of an update would otherwise make the
 * compiler load them again from the table before each use.
 */
struct ibk__pkey_writer {
	struct ibk_pkey_table *t;
	struct ibk_hash_slot *slots;
	struct ibk_pkey_cell *keys;
	struct ibk_pkey_cell *links[2];	/* previous, next: both copies' */
	uint32_t mask, mul, shift;
	unsigned c;
};

/* Writer side: copy @c of @t, ready to update. */
static inline struct ibk__pkey_writer
ibk__pkey_writer_of(struct ibk_pkey_table *t, unsigned c)
{
	struct ibk__pkey_writer w;

	w.t = t;
	w.slots = t->hdr.slots[c];
	w.keys = t->cells[c];
	w.links[IBK__PKEY_PREV] = t->links[IBK__PKEY_PREV];
	w.links[IBK__PKEY_NEXT] = t->links[IBK__PKEY_NEXT];
	w.mask = t->hdr.hash_mask;
	w.mul = t->hash_mul;
	w.shift = t->hdr.hash_shift;
	w.c = c;
	return w;
}

/* Writer side: link @end of entry @index in both copies, copy 0's first
 * (the offset is a size_t so that the compiler may fold it into the
 * address). */
static inline struct ibk_pkey_cell *
ibk__pkey_link_pair(const struct ibk__pkey_writer *w, uint32_t index,
		    unsigned end)
{
	return &w->links[end][2 * (size_t)index];
}

/* Writer side: link @end of entry @index: the neighbouring index holding
 * the same key; the next link of the tail is @index itself, the previous
 * link of the head unused (the key's slot says which index heads). */
static inline uint32_t ibk__pkey_link(const struct ibk__pkey_writer *w,
				      uint32_t index, unsigned end)
{
	return ibk__load(&ibk__pkey_link_pair(w, index, end)[w->c].pkey,
			 relaxed);
}

/* Writer side: sets link @end of entry @index to @to. */
static inline void ibk__pkey_set_link(const struct ibk__pkey_writer *w,
				      uint32_t index, unsigned end,
				      uint32_t to)
{
	ibk__store(&ibk__pkey_link_pair(w, index, end)[w->c].pkey,
		   (uint16_t)to, relaxed);
}

/*
 * Writer side: where the walk for the valid @pkey from its home stops: at
 * the slot holding @pkey, at the first empty slot, or, for a full key, at
 * its partition's limited key, which a full key would stand ahead of.
 * Returns the position and sets *@word to the slot's word. There is an
 * empty slot: an index never fills up.
 */
static inline uint32_t ibk__pkey_seek(const struct ibk__pkey_writer *w,
				      ibk_pkey_t pkey, uint32_t *word)
{
	uint32_t full = pkey & IBK_PKEY_FULL_MEMBER;
	uint32_t pos = ibk__pkey_hash(pkey, w->mul, w->shift), v;

	for (;; pos = (pos + 1) & w->mask) {
		v = ibk__load(&w->slots[pos].word, relaxed);
		if (v == 0 || (IBK__SLOT_KEY(v) | full) == pkey)
			break;
	}
	*word = v;
	return pos;
}

/* Writer side: @index no longer holds @pkey: takes it out of the key's
 * chain, O(1); if it was the head, the key's slot takes the next index,
 * or empties. */
static inline void ibk__pkey_unindex(const struct ibk__pkey_writer *w,
				     uint32_t index, ibk_pkey_t pkey)
{
	uint32_t word, pos = ibk__pkey_seek(w, pkey, &word);
	uint32_t prev = ibk__pkey_link(w, index, IBK__PKEY_PREV);
	uint32_t next = ibk__pkey_link(w, index, IBK__PKEY_NEXT);

	if (IBK__SLOT_INDEX(word) != index) {
		ibk__pkey_set_link(w, prev, IBK__PKEY_NEXT,
				   next != index ? next : prev);
		if (next != index)
			ibk__pkey_set_link(w, next, IBK__PKEY_PREV, prev);
	} else if (next != index) {	/* the next index heads */
		ibk__store(&w->slots[pos].word, IBK__SLOT_WORD(next, pkey),
			   relaxed);
	} else {
		ibk__hash_remove(&w->t->hdr, w->c, pos, w->t,
				 ibk__pkey_word_home);
	}
}

/* Writer side: puts @index in the chain headed by @head, in index order.
 * True if @index is the new head, O(1); else walks the chain to its
 * place. */
static inline bool ibk__pkey_chain_add(const struct ibk__pkey_writer *w,
				       uint32_t index, uint32_t head)
{
	uint32_t prev = head, next;

	if (index < head) {
		ibk__pkey_set_link(w, index, IBK__PKEY_NEXT, head);
		ibk__pkey_set_link(w, head, IBK__PKEY_PREV, index);
		return true;
	}
	while ((next = ibk__pkey_link(w, prev, IBK__PKEY_NEXT)) != prev &&
	       next < index)
		prev = next;
	if (next != prev)
		ibk__pkey_set_link(w, next, IBK__PKEY_PREV, index);
	else
		next = index;	/* the new tail */
	ibk__pkey_set_link(w, index, IBK__PKEY_PREV, prev);
	ibk__pkey_set_link(w, index, IBK__PKEY_NEXT, next);
	ibk__pkey_set_link(w, prev, IBK__PKEY_NEXT, index);
	return false;
}

/* Writer side: puts @word, a new key's, in slot @pos, where the walk for
 * it stopped and @old stood. A limited key that stood there moves to the
 * end of the run: the full key of a partition stays first. Removal keeps
 * the order. */
static inline void ibk__pkey_take_slot(const struct ibk__pkey_writer *w,
				       uint32_t pos, uint32_t old,
				       uint32_t word)
{
	ibk__store(&w->slots[pos].word, word, relaxed);
	if (old)
		ibk__hash_insert(&w->t->hdr, w->c, (pos + 1) & w->mask, old);
}

/* Writer side: @index now holds the valid @pkey: it joins the key's chain,
 * and heads it if lower than the rest. */
static inline void ibk__pkey_index(const struct ibk__pkey_writer *w,
				   uint32_t index, ibk_pkey_t pkey)
{
	uint32_t word = IBK__SLOT_WORD(index, pkey), old;
	uint32_t pos = ibk__pkey_seek(w, pkey, &old);

	if (IBK__SLOT_KEY(old) != pkey) {
		ibk__pkey_set_link(w, index, IBK__PKEY_NEXT, index);
		ibk__pkey_take_slot(w, pos, old, word);
	} else if (ibk__pkey_chain_add(w, index, IBK__SLOT_INDEX(old))) {
		ibk__store(&w->slots[pos].word, word, relaxed);
	}
}

/* Writer side: sets link @end of entry @index to @to in both copies, for a
 * build whose copy the other then copies. */
static inline void ibk__pkey_set_links(const struct ibk__pkey_writer *w,
				       uint32_t index, unsigned end,
				       uint32_t to)
{
	struct ibk_pkey_cell *pair = ibk__pkey_link_pair(w, index, end);

	ibk__store(&pair[0].pkey, (uint16_t)to, relaxed);
	ibk__store(&pair[1].pkey, (uint16_t)to, relaxed);
}

/*
 * Writer side, as a build starts: entries 0..@n-1 are chains of their own
 * in both copies, each next link naming the entry itself, so that the
 * build links only the entries whose keys repeat. Whole words where the
 * entries' link pairs align (see ibk__bulk_head()): from one word to the
 * next every pair's cells count up by the pairs a word holds, so a word
 * is the one before plus that in each cell; the first word is stored cell
 * by cell and loaded back, so it comes in the host's byte order. No cell
 * carries into the next: each counts up to an index, below 65536. Returns
 * the entry the words stopped at; needs a whole word from @head.
 */
static inline size_t ibk__pkey_links_words(const struct ibk__pkey_writer *w,
					   struct ibk_pkey_cell *pairs,
					   size_t head, uint32_t n)
{
	const unsigned shift = IBK__CELL_SHIFT(*pairs) + 1;
	const size_t per = IBK__WORD_BYTES >> shift;
	const ibk__word_t step = (ibk__word_t)~(ibk__word_t)0 / 0xffffu * per;
	const size_t end = (size_t)n << shift;
	size_t i, at;
	ibk__word_t v;

	for (i = 0; i < head + per; i++)
		ibk__pkey_set_links(w, (uint32_t)i, IBK__PKEY_NEXT, (uint32_t)i);
	v = ibk__load(&IBK__WORD_AT(pairs, head << shift)->v, relaxed);
	for (at = (head + per) << shift;
	     end >= 4 * IBK__WORD_BYTES && at <= end - 4 * IBK__WORD_BYTES;
	     at += 4 * IBK__WORD_BYTES) {
		ibk__store(&IBK__WORD_AT(pairs, at)[0].v, v + step, relaxed);
		ibk__store(&IBK__WORD_AT(pairs, at)[1].v, v + 2 * step, relaxed);
		ibk__store(&IBK__WORD_AT(pairs, at)[2].v, v + 3 * step, relaxed);
		ibk__store(&IBK__WORD_AT(pairs, at)[3].v, v + 4 * step, relaxed);
		v += 4 * step;
	}
	for (; at + IBK__WORD_BYTES <= end; at += IBK__WORD_BYTES) {
		v += step;
		ibk__store(&IBK__WORD_AT(pairs, at)->v, v, relaxed);
	}
	return at >> shift;
}

/* Writer side: entries 0..@n-1 are chains of their own in both copies
 * (see ibk__pkey_links_words()), in words where they align. */
static inline void ibk__pkey_links_self(const struct ibk__pkey_writer *w,
					uint32_t n)
{
	struct ibk_pkey_cell *pairs = ibk__pkey_link_pair(w, 0, IBK__PKEY_NEXT);
	const unsigned shift = IBK__CELL_SHIFT(*pairs) + 1;
	size_t head = ibk__bulk_head(pairs, pairs, n, shift);
	size_t i = 0;

#if IBK__WORD_LINKS
	if (head + (IBK__WORD_BYTES >> shift) <= n)
		i = ibk__pkey_links_words(w, pairs, head, n);
#else
	(void)head;
#endif
	for (; i < n; i++)
		ibk__pkey_set_links(w, (uint32_t)i, IBK__PKEY_NEXT, (uint32_t)i);
}

/*
 * Writer side, building a copy from the top index down, its next links
 * set by ibk__pkey_links_self(): @index, below every index built so far,
 * holds the valid @pkey, whose slot held @old: @pkey's own word, or 0 if
 * no index held @pkey yet. @index heads the key's chain in both copies;
 * returns the slot's new word. O(1).
 */
static inline uint32_t ibk__pkey_build_head(const struct ibk__pkey_writer *w,
					    uint32_t index, ibk_pkey_t pkey,
					    uint32_t old)
{
	uint32_t next;

	if (old) {
		next = IBK__SLOT_INDEX(old);
		ibk__pkey_set_links(w, next, IBK__PKEY_PREV, index);
		ibk__pkey_set_links(w, index, IBK__PKEY_NEXT, next);
	}
	return IBK__SLOT_WORD(index, pkey);
}

/* Writer side: the index of @w's copy holds the keys @pkeys of entries
 * @n-1 down to 0 (ibk__pkey_cells_put() stores the keys themselves). */
static inline void ibk__pkey_build(const struct ibk__pkey_writer *w,
				   const ibk_pkey_t *pkeys, uint32_t n)
{
	uint32_t i, pos, old, word;

	for (i = n; i > 0; i--) {
		ibk_pkey_t pkey = pkeys[i - 1];

		if (!ibk_pkey_is_valid(pkey))
			continue;
		pos = ibk__pkey_seek(w, pkey, &old);
		if (IBK__SLOT_KEY(old) == pkey) {
			word = ibk__pkey_build_head(w, i - 1, pkey, old);
			ibk__store(&w->slots[pos].word, word, relaxed);
		} else {
			word = ibk__pkey_build_head(w, i - 1, pkey, 0);
			ibk__pkey_take_slot(w, pos, old, word);
		}
	}
}

/*
 * Writer side: ibk__pkey_build() with one slot per 16-bit key, for entry
 * @index down to which the build has come. Partition b owns slots 2b and
 * 2b + 1 (see ibk__pkey_home()), so nothing is probed: a key takes 2b,
 * where a walk starts, unless 2b holds its partition's other key; a full
 * key then moves that lone limited key on to 2b + 1, and a limited key
 * takes 2b + 1 behind the full one.
 */
static inline void ibk__pkey_build_direct_at(const struct ibk__pkey_writer *w,
					     uint32_t index, uint32_t pkey)
{
	uint32_t base = pkey & IBK_PKEY_BASE_MASK, old;
	struct ibk_hash_slot *slot;

	if (base == 0)		/* an invalid key: no slot */
		return;
	slot = &w->slots[2 * (size_t)base];
	old = ibk__load(&slot->word, relaxed);
	if (old && IBK__SLOT_KEY(old) != pkey) {
		if (pkey & IBK_PKEY_FULL_MEMBER) {
			ibk__store(&slot[1].word, old, relaxed);
			old = 0;
		} else {
			old = ibk__load(&(++slot)->word, relaxed);
		}
	}
	ibk__store(&slot->word, ibk__pkey_build_head(w, index, pkey, old),
		   relaxed);
}

/* Writer side: ibk__pkey_build() with one slot per 16-bit key, two
 * entries a step, which halves what the loop itself costs an entry. */
static inline void ibk__pkey_build_direct(const struct ibk__pkey_writer *w,
					  const ibk_pkey_t *pkeys, uint32_t n)
{
	uint32_t i;

	for (i = n; i >= 2; i -= 2) {
		ibk__pkey_build_direct_at(w, i - 1, pkeys[i - 1]);
		ibk__pkey_build_direct_at(w, i - 2, pkeys[i - 2]);
	}
	if (i)
		ibk__pkey_build_direct_at(w, 0, pkeys[0]);
}

/* Writer side: @n P_Key cells from @to hold the invalid key, in words as
 * ibk__slots_clear() (the invalid key is 0). */
static inline void ibk__pkey_cells_clear(struct ibk_pkey_cell *to, uint32_t n)
{
	const unsigned shift = IBK__CELL_SHIFT(*to);
	const uint16_t none = (uint16_t)IBK_PKEY_INVALID;
	size_t head = ibk__bulk_head(to, to, n, shift);
	size_t i;

	IBK__STATIC_ASSERT(IBK_PKEY_INVALID == 0, "a cleared word is empty");
	for (i = 0; i < head; i++)
		ibk__store(&to[i].pkey, none, relaxed);
	i = ibk__words_clear(to, head << shift, (size_t)n << shift) >> shift;
	for (; i < n; i++)
		ibk__store(&to[i].pkey, none, relaxed);
}

/* Writer side: @n P_Key cells from @to take the keys of those from @from,
 * in words as ibk__slots_copy(). */
static inline void ibk__pkey_cells_copy(struct ibk_pkey_cell *to,
					const struct ibk_pkey_cell *from,
					uint32_t n)
{
	const unsigned shift = IBK__CELL_SHIFT(*to);
	size_t head = ibk__bulk_head(to, from, n, shift);
	size_t i;

	for (i = 0; i < head; i++)
		ibk__store(&to[i].pkey, ibk__load(&from[i].pkey, relaxed),
			   relaxed);
	i = ibk__words_copy(to, from, head << shift,
			    (size_t)n << shift) >> shift;
	for (; i < n; i++)
		ibk__store(&to[i].pkey, ibk__load(&from[i].pkey, relaxed),
			   relaxed);
}

/* Writer side: @n P_Key cells from @to take the keys @pkeys (the caller's
 * array, loaded plain), in words as ibk__slots_copy(). @n > 0. */
static inline void ibk__pkey_cells_put(struct ibk_pkey_cell *to,
				       const ibk_pkey_t *pkeys, uint32_t n)
{
	const unsigned shift = IBK__CELL_SHIFT(*to);
	const size_t end = (size_t)n << shift;
	const char *from = (const char *)ibk__hide(pkeys);
	size_t head = ibk__bulk_head(to, pkeys, n, shift);
	size_t i, at;

#define IBK__PUT_WORD(k) \
	ibk__store(&IBK__WORD_AT(to, at)[k].v, \
		   ((const struct ibk__plain_word *)(const void *) \
		    (from + at))[k].v, relaxed)
	for (i = 0; i < head; i++)
		ibk__store(&to[i].pkey, pkeys[i], relaxed);
	for (at = head << shift;
	     end >= 4 * IBK__WORD_BYTES && at <= end - 4 * IBK__WORD_BYTES;
	     at += 4 * IBK__WORD_BYTES) {
		IBK__PUT_WORD(0);
		IBK__PUT_WORD(1);
		IBK__PUT_WORD(2);
		IBK__PUT_WORD(3);
	}
	for (; at + IBK__WORD_BYTES <= end; at += IBK__WORD_BYTES)
		IBK__PUT_WORD(0);
#undef IBK__PUT_WORD
	for (i = at >> shift; i < n; i++)
		ibk__store(&to[i].pkey, pkeys[i], relaxed);
}

/* Writer side: copy @c holds entries 0..@n-1 from @pkeys, the rest empty,
 * both copies' links their chains, and copy @c is no longer awaiting a
 * refill. O(capacity + hash slots). */
static inline void ibk__pkey_fill(struct ibk_pkey_table *t, unsigned c,
				  const ibk_pkey_t *pkeys, uint32_t n)
{
	struct ibk__pkey_writer w = ibk__pkey_writer_of(t, c);

	ibk__hash_clear(&t->hdr, c);
	ibk__pkey_cells_clear(w.keys + n, t->hdr.capacity - n);
	if (n > 0)	/* no offset from a NULL @pkeys */
		ibk__pkey_cells_put(w.keys, pkeys, n);
	ibk__pkey_links_self(&w, n);
	if (w.mask + 1 == IBK__PKEY_MAX_COPY_SLOTS)
		ibk__pkey_build_direct(&w, pkeys, n);
	else
		ibk__pkey_build(&w, pkeys, n);
	ibk__status_refilled(&t->hdr, c);
}

/* Writer side: copy @to becomes the other copy's twin, keys and index
 * word for word (the build wrote both copies' links), and is no longer
 * awaiting a refill. */
static inline void ibk__pkey_copy(struct ibk_pkey_table *t, unsigned to)
{
	ibk__pkey_cells_copy(t->cells[to], t->cells[to ^ 1u],
			     t->hdr.capacity);
	ibk__hash_copy(&t->hdr, to);
	ibk__status_refilled(&t->hdr, to);
}

/* Writer side: copy @c's entry @index holds @pkey. */
static inline void ibk__pkey_put(struct ibk_pkey_table *t, unsigned c,
				 uint32_t index, ibk_pkey_t pkey)
{
	struct ibk__pkey_writer w = ibk__pkey_writer_of(t, c);
	ibk_pkey_t old = ibk__load(&w.keys[index].pkey, relaxed);

	if (old == pkey)
		return;
	if (ibk_pkey_is_valid(old))
		ibk__pkey_unindex(&w, index, old);
	ibk__store(&w.keys[index].pkey, pkey, relaxed);
	if (ibk_pkey_is_valid(pkey))
		ibk__pkey_index(&w, index, pkey);
}

/**
 * ibk_pkey_table_init() - Attaches a P_Key table to caller storage
 * @t: the P_Key table
 * @cells: the table's cells (see "Table storage")
 * @capacity: how many entries the table holds
 * @slots: the hash index's slots
 * @slot_count: how many @slots there are
 *
 * Attaches @t to caller storage: @cells[IBK_PKEY_CELLS(@capacity)] and
 * @slots[@slot_count], @slot_count >= IBK_PKEY_HASH_SLOTS(@capacity)
 * (IBK_HASH_SLOTS() is enough too), or as few as
 * IBK_PKEY_HASH_SLOTS_MIN(@capacity) for an index up to half full (see "Table
 * storage").
 *
 * The table starts empty, DOWN and awaiting its first refill, generation 2
 * (never IBK_GENERATION_NEVER). Not concurrent with any use.
 *
 * Context: Before any other use of the storage: concurrent with no reader or
 * writer.
 * Return: IBK_OK; IBK_EINVAL for a NULL pointer; IBK_ERANGE for a capacity
 * outside 1..65536 or too few slots.
 */
static inline int ibk_pkey_table_init(struct ibk_pkey_table *t,
				      struct ibk_pkey_cell *cells,
				      uint32_t capacity,
				      struct ibk_hash_slot *slots,
				      uint32_t slot_count)
{
	uint32_t i;
	int rc;

	if (!t || !cells)
		return IBK_EINVAL;
	rc = ibk__table_init(&t->hdr, capacity, slots, slot_count,
			     IBK__PKEY_MAX_COPY_SLOTS);
	if (rc != IBK_OK)
		return rc;
	t->hash_mul = t->hdr.hash_mask + 1 == IBK__PKEY_MAX_COPY_SLOTS ?
		      IBK__PKEY_DIRECT_MUL : 0x9e3779b1u;
	t->cells[0] = cells;
	t->cells[1] = cells + capacity;
	t->links[IBK__PKEY_PREV] = cells + 2 * capacity;
	t->links[IBK__PKEY_NEXT] = cells + 4 * capacity;
	for (i = 0; i < IBK_PKEY_CELLS(capacity); i++)
		ibk__store(&cells[i].pkey, (uint16_t)IBK_PKEY_INVALID, relaxed);
	return IBK_OK;
}

/**
 * ibk_pkey_table_refill_ticket() - The ticket to take before reading the
 * device for a refill
 * @t: the P_Key table
 *
 * The ticket to take before reading the device's P_Key table for a refill:
 * ibk_pkey_table_refill() refuses it once a change event (PKEY_CHANGE,
 * invalidate, leaving ARMED/ACTIVE, any event that marks the table awaiting a
 * refill) has come after it.
 *
 * @t must be valid.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: the ticket.
 */
static inline uint32_t ibk_pkey_table_refill_ticket(const struct ibk_pkey_table *t)
{
	return ibk__refill_ticket(&t->hdr);
}

/**
 * ibk_pkey_table_refill() - Publishes a whole new P_Key table as one
 * generation
 * @t: the P_Key table
 * @pkeys: the P_Keys, entries 0..@n-1
 * @n: how many
 * @ticket: what the refill ticket function returned before the device was read
 *
 * Publishes a whole new table as one generation, what a PKEY_CHANGE handler
 * does once it has re-read the device: entries 0..@n-1 from @pkeys, the rest
 * empty; clears "awaiting refill".
 *
 * @ticket is what ibk_pkey_table_refill_ticket() returned before the device
 * was read.
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: IBK_OK; IBK_ESTALE, writing nothing, if a change event came after
 * the ticket (the device may have changed since it was read: read it again);
 * else IBK_ENOTREADY, writing nothing, unless the port is ARMED or ACTIVE (set
 * the state first: the table is undefined in any other, and what was read then
 * is never served); IBK_EINVAL for NULL @t, or NULL @pkeys with @n > 0;
 * IBK_ENOSPC if @n > capacity.
 */
static inline int ibk_pkey_table_refill(struct ibk_pkey_table *t,
					const ibk_pkey_t *pkeys, uint32_t n,
					uint32_t ticket)
{
	int rc;

	if (!t || (!pkeys && n))
		return IBK_EINVAL;
	if (n > t->hdr.capacity)
		return IBK_ENOSPC;
	rc = ibk__refill_begin(&t->hdr, ticket);
	if (rc != IBK_OK)
		return rc;
	ibk__pkey_fill(t, 0, pkeys, n);
	ibk_latch_write_switch(&t->hdr.latch);
	ibk__pkey_copy(t, 1);
	ibk_latch_write_end(&t->hdr.latch);
	return IBK_OK;
}

/**
 * ibk_pkey_table_set() - Sets one entry of the P_Key table as one generation
 * @t: the P_Key table
 * @index: the entry's index
 * @pkey: a P_Key, host order
 *
 * Sets entry @index to @pkey (an invalid key empties it) as one generation,
 * even if the entry already held it.
 *
 * Leaves "awaiting refill" as it is. A set is a change event: a refill holding
 * a ticket from before it read the device without this entry and is refused,
 * or it would revert the set.
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: IBK_OK; IBK_EINVAL for NULL @t; IBK_ERANGE if @index >= capacity.
 */
static inline int ibk_pkey_table_set(struct ibk_pkey_table *t, uint32_t index,
				     ibk_pkey_t pkey)
{
	if (!t)
		return IBK_EINVAL;
	if (index >= t->hdr.capacity)
		return IBK_ERANGE;
	ibk_latch_write_begin(&t->hdr.latch);
	ibk__epoch_advance(&t->hdr);
	ibk__pkey_put(t, 0, index, pkey);
	ibk_latch_write_switch(&t->hdr.latch);
	ibk__pkey_put(t, 1, index, pkey);
	ibk_latch_write_end(&t->hdr.latch);
	return IBK_OK;
}

/**
 * ibk_pkey_table_set_state() - Sets the port state the table's reads are gated
 * on, as one generation
 * @t: the P_Key table
 * @state: the port state (IBA 14.2.5.6 PortState)
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: IBK_OK; IBK_EINVAL for NULL @t or a state outside enum
 * ibk_port_state.
 */
static inline int ibk_pkey_table_set_state(struct ibk_pkey_table *t,
					   enum ibk_port_state state)
{
	return t ? ibk__table_set_state(&t->hdr, state) : IBK_EINVAL;
}

/**
 * ibk_pkey_table_invalidate() - Marks the P_Key table awaiting a refill
 * @t: the P_Key table
 *
 * Marks the table "awaiting refill" as one generation: references go stale and
 * reads return IBK_ESTALE until the next refill.
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: IBK_OK; IBK_EINVAL for NULL @t.
 */
static inline int ibk_pkey_table_invalidate(struct ibk_pkey_table *t)
{
	return t ? ibk__table_invalidate(&t->hdr) : IBK_EINVAL;
}

/* What a get by index read: IBK_OK with the entry's key and the
 * generation it was read in, or an error and nothing else. Returned by
 * value, so that an inlined get keeps it in registers. */
struct ibk__pkey_got {
	int rc;
	ibk_pkey_t pkey;
	uint32_t generation;
};

/*
 * ibk__pkey_get() when its one compare refused, a writer moved the count
 * during its read section (@moved: counted here as a retry) or the entry
 * is invalid: as many read sections as writers force, then the error that
 * applies, out of range first.
 */
IBK__COLD struct ibk__pkey_got
ibk__pkey_get_slow(const struct ibk_pkey_table *t, size_t index,
		   bool moved)
{
	struct ibk__pkey_got got = { IBK_ERANGE, 0, IBK_GENERATION_NEVER };
	uint32_t gen, unreadable;
	unsigned c;

	if (moved)
		IBK_LATCH_RETRY_HOOK();
	if (index >= t->hdr.capacity)
		return got;
	do {
		gen = ibk_latch_read_begin(&t->hdr.latch);
		c = ibk_latch_copy(gen);
		unreadable = ibk__table_unreadable(&t->hdr, c);
		/* read whatever the status: an unreadable copy's entry is
		 * dropped below, and the read needs no branch */
		got.pkey = ibk__load(&t->cells[c][index].pkey, relaxed);
	} while (ibk_latch_read_retry(&t->hdr.latch, gen));
	if (unreadable) {
		got.rc = ibk__unreadable_why(unreadable);
	} else if (!ibk_pkey_is_valid(got.pkey)) {
		got.rc = IBK_ENOENT;
	} else {
		got.rc = IBK_OK;
		got.generation = gen;
	}
	return got;
}

/*
 * Entry @index of @t and the generation it was read in, or why not (as
 * ibk_pkey_table_ref_get() says). One read section: the count, the copy's
 * limit and, if @index is below it, the entry; one compare against the
 * limit says both that @index is in range and that the copy is readable
 * (see ibk__status_store()). Anything else goes out of line.
 */
IBK__HOT struct ibk__pkey_got ibk__pkey_get(const struct ibk_pkey_table *t,
					   uint32_t index)
{
	uint32_t gen = ibk_latch_read_begin(&t->hdr.latch);
	size_t c = ibk_latch_copy(gen), i = index;
	ibk_pkey_t pkey;
	bool moved = false;

	/* size_t and t->hdr.limit + c, not &t->hdr.limit[c]: GCC then folds
	 * the offsets into the loads' addresses */
	if (i < ibk__load(t->hdr.limit + c, relaxed)) {
		pkey = ibk__load(&t->cells[c][i].pkey, relaxed);
		moved = ibk__latch_moved(&t->hdr.latch, gen);
		if (!moved && ibk_pkey_is_valid(pkey)) {
			struct ibk__pkey_got got = { IBK_OK, pkey, gen };

			return got;
		}
	}
	return ibk__pkey_get_slow(t, i, moved);
}

/**
 * ibk_pkey_table_ref_get() - Takes a reference to entry @index: its value and
 * the generation it was read in
 * @t: the P_Key table
 * @index: the entry's index
 * @ref: receives the reference
 *
 * On any error a non-NULL @ref gets the generation IBK_GENERATION_NEVER: it is
 * never fresh.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: IBK_OK; IBK_EINVAL for a NULL pointer; IBK_ERANGE if @index >=
 * capacity; IBK_ENOTREADY unless the port is ARMED, ACTIVE or ACTIVE_DEFER;
 * IBK_ESTALE while awaiting a refill; IBK_ENOENT if the entry holds an invalid
 * key.
 */
static inline int ibk_pkey_table_ref_get(const struct ibk_pkey_table *t,
					 uint32_t index,
					 struct ibk_pkey_ref *ref)
{
	struct ibk__pkey_got got;

	if (!ref)
		return IBK_EINVAL;
	if (!t) {
		ref->generation = IBK_GENERATION_NEVER;
		return IBK_EINVAL;
	}
	got = ibk__pkey_get(t, index);
	ref->generation = got.generation;	/* NEVER on an error */
	if (got.rc == IBK_OK) {
		ref->index = (uint16_t)(index & 0xffffu);	/* < 65536 */
		ref->pkey = got.pkey;
	}
	return got.rc;
}

/**
 * ibk_pkey_table_get() - The P_Key at entry @index into *@pkey
 * (ibv_query_pkey(3) from the cache)
 * @t: the P_Key table
 * @index: the entry's index
 * @pkey: receives the P_Key
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: IBK_OK; else an error as ibk_pkey_table_ref_get() returns it.
 */
static inline int ibk_pkey_table_get(const struct ibk_pkey_table *t,
				     uint32_t index, ibk_pkey_t *pkey)
{
	struct ibk__pkey_got got;

	if (!t || !pkey)
		return IBK_EINVAL;
	got = ibk__pkey_get(t, index);
	if (got.rc == IBK_OK)
		*pkey = got.pkey;
	return got.rc;
}

/*
 * One read section probing for @pkey in the bits of @keymask (see
 * ibk__pkey_probe()): IBK_OK with the slot word (0: not found) in *@word
 * and the generation in *@gen, or why the table cannot be read.
 */
static inline int ibk__pkey_lookup(const struct ibk_pkey_table *t,
				   ibk_pkey_t pkey, uint32_t keymask,
				   uint32_t *word, uint32_t *gen)
{
	uint32_t unreadable;
	unsigned c;

	do {
		*gen = ibk_latch_read_begin(&t->hdr.latch);
		c = ibk_latch_copy(*gen);
		unreadable = ibk__table_unreadable(&t->hdr, c);
		*word = 0;
		if (!unreadable)
			ibk__pkey_probe(t, c, pkey, keymask, word);
	} while (ibk_latch_read_retry(&t->hdr.latch, *gen));
	return ibk__unreadable_error(unreadable);
}

/**
 * ibk_pkey_table_ref_find() - Takes a reference to the entry
 * ibk_pkey_table_find() answers for @pkey
 * @t: the P_Key table
 * @pkey: a P_Key, host order
 * @ref: receives the reference
 *
 * O(1): one hash probe run. On any error a non-NULL @ref is never fresh, as
 * for ibk_pkey_table_ref_get().
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: IBK_OK; IBK_EINVAL for a NULL pointer or an invalid @pkey (it
 * matches nothing, IBA 10.9); IBK_ENOTREADY; IBK_ESTALE; IBK_ENOENT if no
 * valid entry has @pkey's base.
 */
static inline int ibk_pkey_table_ref_find(const struct ibk_pkey_table *t,
					  ibk_pkey_t pkey,
					  struct ibk_pkey_ref *ref)
{
	uint32_t gen, word;
	int rc;

	if (!ref)
		return IBK_EINVAL;
	ref->generation = IBK_GENERATION_NEVER;	/* until it succeeds */
	if (!t || !ibk_pkey_is_valid(pkey))
		return IBK_EINVAL;
	rc = ibk__pkey_lookup(t, pkey, IBK_PKEY_BASE_MASK, &word, &gen);
	if (rc != IBK_OK)
		return rc;
	if (!word)
		return IBK_ENOENT;
	ref->generation = gen;
	ref->index = (uint16_t)IBK__SLOT_INDEX(word);
	ref->pkey = (ibk_pkey_t)IBK__SLOT_KEY(word);
	return IBK_OK;
}

/**
 * ibk_pkey_table_find() - Finds an entry of a P_Key's partition, full members
 * first
 * @t: the P_Key table
 * @pkey: a P_Key, host order
 * @found: receives the table's key (full or limited); may be NULL
 *
 * Find by value: the index of an entry in @pkey's partition (bases equal,
 * membership of @pkey ignored), preferring a full-member entry and, among
 * equals, the lowest index; *@found (may be NULL) gets that entry's key.
 *
 * The Linux cache keeps the last limited index instead, its uncached twin the
 * first; lowest-index is the stable choice for every duplicate pattern. O(1)
 * in the table size.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: the index (0 or more); else a negative error as
 * ibk_pkey_table_ref_find() returns it.
 */
static inline int ibk_pkey_table_find(const struct ibk_pkey_table *t,
				      ibk_pkey_t pkey, ibk_pkey_t *found)
{
	struct ibk_pkey_ref ref;
	int rc = ibk_pkey_table_ref_find(t, pkey, &ref);

	if (rc != IBK_OK)
		return rc;
	if (found)
		*found = ref.pkey;
	return ref.index;
}

/**
 * ibk_pkey_table_find_exact() - The lowest index holding exactly @pkey (all 16
 * bits)
 * @t: the P_Key table
 * @pkey: a P_Key, host order
 *
 * O(1) in the table size.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: the index (0 or more); else a negative error as
 * ibk_pkey_table_ref_find() returns it.
 */
static inline int ibk_pkey_table_find_exact(const struct ibk_pkey_table *t,
					    ibk_pkey_t pkey)
{
	uint32_t gen, word;
	int rc;

	if (!t || !ibk_pkey_is_valid(pkey))
		return IBK_EINVAL;
	rc = ibk__pkey_lookup(t, pkey, 0xffffu, &word, &gen);
	if (rc != IBK_OK)
		return rc;
	return word ? (int)IBK__SLOT_INDEX(word) : IBK_ENOENT;
}

/**
 * ibk_pkey_table_snapshot() - Copies every entry of one generation of the
 * P_Key table
 * @t: the P_Key table
 * @n: how many
 * @pkeys: receives @n P_Keys
 * @generation: receives the generation the copy was read in; may be NULL
 *
 * Copies every entry of one generation into @pkeys[0..capacity-1] (empty
 * entries as stored, 0x0000 after a refill) and that generation into
 * *@generation (may be NULL).
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: the capacity; IBK_EINVAL for a NULL pointer; IBK_ERANGE if @n <
 * capacity; IBK_ENOTREADY; IBK_ESTALE.
 */
static inline int ibk_pkey_table_snapshot(const struct ibk_pkey_table *t,
					  uint32_t n, ibk_pkey_t *pkeys,
					  uint32_t *generation)
{
	uint32_t gen, i;
	unsigned c;
	int rc;

	if (!t || !pkeys)
		return IBK_EINVAL;
	if (n < t->hdr.capacity)
		return IBK_ERANGE;
	do {
		gen = ibk_latch_read_begin(&t->hdr.latch);
		c = ibk_latch_copy(gen);
		rc = ibk__table_readable(&t->hdr, c);
		for (i = 0; rc == IBK_OK && i < t->hdr.capacity; i++)
			pkeys[i] = ibk__load(&t->cells[c][i].pkey, relaxed);
	} while (ibk_latch_read_retry(&t->hdr.latch, gen));
	if (rc != IBK_OK)
		return rc;
	if (generation)
		*generation = gen;
	return (int)t->hdr.capacity;
}

/**
 * ibk_pkey_table_ref_fresh() - True while nothing has been written to @t since
 * @ref was taken: one load and one compare
 * @t: the P_Key table
 * @ref: a reference
 *
 * @t and @ref must be valid.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: true if @ref is still fresh.
 */
static inline bool ibk_pkey_table_ref_fresh(const struct ibk_pkey_table *t,
					    const struct ibk_pkey_ref *ref)
{
	return ibk__latch_unchanged(&t->hdr.latch, ref->generation);
}

/* ------------------------------------------------------------------------
 * GID table
 *
 * Entries carry the GID type of the verbs GID table; an all-zero GID is an
 * empty slot. The hash index holds one slot per distinct (GID, type) pair:
 * a 16-bit tag of the GID's hash and the lowest index holding the pair.
 * The home slot comes from the GID alone, so the types of one GID share a
 * probe run, and the writer keeps them there in the order of the indices
 * they name: the first slot of a GID in its run answers a find for any
 * type. A tag match is confirmed against the entry itself: four loads and
 * one branch for the 16 bytes. The indices holding one pair are chained
 * in index order through the entries (see ibk__gid_prev()), so a set
 * moves the pair's slot to the next index without a scan: O(1), but for
 * the walk that puts an index between others holding the same pair.
 *
 * API:
 *	ibk_gid_table_init(t, cells, capacity, slots, slot_count)
 *	ibk_gid_table_refill_ticket(t)
 *	ibk_gid_table_refill(t, e, n, ticket)
 *	ibk_gid_table_set(t, index, gid, type)
 *	ibk_gid_table_set_state(t, state)
 *	ibk_gid_table_invalidate(t)
 *	ibk_gid_table_ref_get(t, index, ref)
 *	ibk_gid_table_get(t, index, entry)
 *	ibk_gid_table_ref_find(t, gid, type, ref)
 *	ibk_gid_table_find(t, gid, type, found_type)
 *	ibk_gid_table_snapshot(t, n, entries, generation)
 *	ibk_gid_table_ref_fresh(t, ref)
 * ------------------------------------------------------------------------ */

/**
 * enum ibk_gid_type - GID types as enum ibv_gid_type (rdma-core)
 * @IBK_GID_TYPE_ANY: find argument only: any type
 * @IBK_GID_TYPE_IB: InfiniBand
 * @IBK_GID_TYPE_ROCE_V1: RoCE v1
 * @IBK_GID_TYPE_ROCE_V2: RoCE v2
 */
enum ibk_gid_type {
	IBK_GID_TYPE_ANY = -1,
	IBK_GID_TYPE_IB = 0,
	IBK_GID_TYPE_ROCE_V1 = 1,
	IBK_GID_TYPE_ROCE_V2 = 2,
};

/**
 * struct ibk_gid_entry - One GID table entry as a value: refill input, get and
 * snapshot output
 * @gid: the GID (all zero: an empty entry)
 * @type: its type
 */
struct ibk_gid_entry {
	struct ibk_gid gid;
	enum ibk_gid_type type;
};

/**
 * struct ibk_gid_table - A cached GID table, on caller storage
 * (ibk_gid_table_init())
 */
struct ibk_gid_table {
	/* private: */
	struct ibk__table hdr;
	struct ibk_gid_cell *cells[2];
};

/**
 * struct ibk_gid_ref - A cached entry: valid while ibk_gid_table_ref_fresh()
 * says so
 * @generation: the generation the entry was read in
 * @index: the entry's index
 * @type: its type
 * @gid: the GID the entry held
 */
struct ibk_gid_ref {
	uint32_t generation;
	uint16_t index;
	enum ibk_gid_type type;
	struct ibk_gid gid;
};

/* Whether a GID table holds @type (IB, RoCE v1, RoCE v2): a macro, whose
 * test bounds @type where it is used, as EVA sees (a call's would not) */
#define IBK__GID_TYPE_VALID(type) \
	((type) >= IBK_GID_TYPE_IB && (type) <= IBK_GID_TYPE_ROCE_V2)

/*
 * A cell holds the GID as four words, each four of its bytes read least
 * significant first: on a little-endian host a word is what a plain load
 * of those bytes gives, so a find compares the caller's 16 bytes with four
 * loads and no byte swap (a big-endian one loads them byte-reversed, one
 * instruction too). The helpers name each word rather than loop over them:
 * GCC at -O2 keeps such a loop and passes the words through the stack.
 */
static inline void ibk__gid_to_words(const struct ibk_gid *gid, uint32_t w[4])
{
	w[0] = ibk__load_le32(gid->raw);
	w[1] = ibk__load_le32(gid->raw + 4);
	w[2] = ibk__load_le32(gid->raw + 8);
	w[3] = ibk__load_le32(gid->raw + 12);
}

/* Stores word @v as the four GID bytes it was read from at @p. */
static inline void ibk__gid_word_put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v & 0xff);
	p[1] = (uint8_t)(v >> 8 & 0xff);
	p[2] = (uint8_t)(v >> 16 & 0xff);
	p[3] = (uint8_t)(v >> 24);
}

/*
 * Copies GID @src to @dst a word at a time: four loads and four stores,
 * where ibk__copy16() keeps sixteen of each (byte copies between pointers
 * that may overlap stay byte copies).
 */
static inline void ibk__gid_copy(struct ibk_gid *dst, const struct ibk_gid *src)
{
	ibk__gid_word_put(dst->raw, ibk__load_le32(src->raw));
	ibk__gid_word_put(dst->raw + 4, ibk__load_le32(src->raw + 4));
	ibk__gid_word_put(dst->raw + 8, ibk__load_le32(src->raw + 8));
	ibk__gid_word_put(dst->raw + 12, ibk__load_le32(src->raw + 12));
}

/* The GID whose words are @w, into *@gid. */
static inline void ibk__gid_from_words(const uint32_t w[4], struct ibk_gid *gid)
{
	ibk__gid_word_put(gid->raw, w[0]);
	ibk__gid_word_put(gid->raw + 4, w[1]);
	ibk__gid_word_put(gid->raw + 8, w[2]);
	ibk__gid_word_put(gid->raw + 12, w[3]);
}

/* The subnet prefix (upper 64 bits) and the GUID (lower 64) of words @w. */
static inline uint64_t ibk__gid_words_prefix(const uint32_t w[4])
{
	return (uint64_t)ibk__swap32(w[0]) << 32 | ibk__swap32(w[1]);
}

static inline ibk_guid_t ibk__gid_words_guid(const uint32_t w[4])
{
	return (uint64_t)ibk__swap32(w[2]) << 32 | ibk__swap32(w[3]);
}

static inline void ibk__gid_cell_load(const struct ibk_gid_cell *c,
				      uint32_t w[4])
{
	w[0] = ibk__load(&c->word[0], relaxed);
	w[1] = ibk__load(&c->word[1], relaxed);
	w[2] = ibk__load(&c->word[2], relaxed);
	w[3] = ibk__load(&c->word[3], relaxed);
}

/* True if GIDs @a and @b are equal: one branch for all 16 bytes. */
static inline bool ibk__gid_words_equal(const uint32_t a[4],
					const uint32_t b[4])
{
	return ((a[0] ^ b[0]) | (a[1] ^ b[1]) |
		(a[2] ^ b[2]) | (a[3] ^ b[3])) == 0;
}

static inline bool ibk__gid_cell_holds(const struct ibk_gid_cell *c,
				       const uint32_t w[4])
{
	uint32_t cw[4];

	ibk__gid_cell_load(c, cw);
	return ibk__gid_words_equal(cw, w);
}

static inline void ibk__gid_entry_load(const struct ibk_gid_cell *c,
				       struct ibk_gid_entry *e)
{
	uint32_t w[4];

	ibk__gid_cell_load(c, w);
	ibk__gid_from_words(w, &e->gid);
	e->type = (enum ibk_gid_type)ibk__load(&c->type, relaxed);
}

/*
 * Bits 32..63 of @key x 2^64/phi, which wraps on purpose, from products
 * of 32-bit halves, none of which wraps: what ibk__gid_hash() computes
 * under Frama-C's EVA (__FRAMAC__), which past an unsigned overflow alarm
 * would go on with only the keys whose product does not wrap, 0 and 1.
 * test_tables.c checks it against the 64-bit product.
 */
static inline uint32_t ibk__gid_product_parts(uint64_t key)
{
	const uint64_t lo = 0x7f4a7c15u, hi = 0x9e3779b9u;
	const uint64_t k_lo = key & 0xffffffffu, k_hi = key >> 32;

	return (uint32_t)(((k_lo * lo >> 32) + (k_lo * hi & 0xffffffffu) +
			   (k_hi * lo & 0xffffffffu)) & 0xffffffffu);
}

/*
 * The GID's 32-bit hash: its top bits pick the home slot, and
 * ibk__gid_tag() folds all 32 into the slot's tag. The GIDs of one table
 * differ mostly in the last bytes of each half: consecutive GUIDs under one
 * prefix, consecutive IPv4 addresses in ::ffff:a.b.c.d, subnets numbered
 * in the prefix's last bytes. So the key is the interface id read as a
 * big-endian number, which puts its last bytes at the low end, XOR the
 * prefix read so and rotated by 32 bits, which puts the prefix's last bytes
 * in bits 32-39, away from the interface id's; one multiply by 2^64 / phi
 * (Fibonacci hashing, which spreads runs of consecutive keys evenly) then
 * carries every key bit into the top half of the product, which is the
 * hash. Two GIDs meet on one key only if the prefixes differ exactly as
 * the rotated interface ids do.
 */
#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
/* Cortex-M0/M0+/M23 have no 32x32->64 multiply: a 64-bit product would
 * call __aeabi_lmul. Each word times its own odd constant, then a murmur3
 * style finish that mixes the top bits down. */
static inline uint32_t ibk__gid_hash(const uint32_t w[4])
{
	uint32_t x = w[0] * 0x9e3779b1u ^ w[1] * 0x85ebca77u ^
		     w[2] * 0xc2b2ae3du ^ w[3] * 0x27d4eb2fu;

	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	return x;
}
#else
/* @v's eight bytes in reverse order: one instruction where there is one. */
static inline uint64_t ibk__gid_swap64(uint64_t v)
{
	return (uint64_t)ibk__swap32((uint32_t)(v & 0xffffffffu)) << 32 |
	       ibk__swap32((uint32_t)(v >> 32));
}

static inline uint32_t ibk__gid_hash(const uint32_t w[4])
{
	/* each half as the little-endian number of its eight bytes, which
	 * a find loads whole: the prefix's rotation is then one rotate */
	uint64_t prefix = (uint64_t)w[1] << 32 | w[0];
	uint64_t iid = (uint64_t)w[3] << 32 | w[2];
	uint64_t key = ibk__gid_swap64(iid ^ ((prefix & 0xffffffffu) << 32 |
					      prefix >> 32));

#ifdef __FRAMAC__
	return ibk__gid_product_parts(key);	/* see there */
#else
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32);
#endif
}
#endif

/* The 16-bit tag of a GID's slot from its @hash: the low bits, below
 * those of the home slot; never 0, which marks an empty slot. */
static inline uint32_t ibk__gid_tag(uint32_t hash)
{
	return (hash & 0xffffu) | 1u;
}

/* The home slot of a GID from its @hash. */
static inline uint32_t ibk__gid_home(const struct ibk_gid_table *t,
				     uint32_t hash)
{
	return hash >> t->hdr.hash_shift;
}

static inline uint32_t ibk__gid_word_home(const void *table, unsigned c,
					  uint32_t word)
{
	const struct ibk_gid_table *t = (const struct ibk_gid_table *)table;
	uint32_t w[4];

	ibk__gid_cell_load(&t->cells[c][IBK__SLOT_INDEX(word)], w);
	return ibk__gid_home(t, ibk__gid_hash(w));
}

/*
 * True if cell @c holds GID @gid: one branch for all 16 bytes. The reader
 * compares against the caller's bytes, which x86 folds into the XORs,
 * rather than words kept in registers across the probe walk.
 */
static inline bool ibk__gid_cell_holds_gid(const struct ibk_gid_cell *c,
				    const struct ibk_gid *gid)
{
	return ((ibk__load(&c->word[0], relaxed) ^ ibk__load_le32(gid->raw)) |
		(ibk__load(&c->word[1], relaxed) ^
		 ibk__load_le32(gid->raw + 4)) |
		(ibk__load(&c->word[2], relaxed) ^
		 ibk__load_le32(gid->raw + 8)) |
		(ibk__load(&c->word[3], relaxed) ^
		 ibk__load_le32(gid->raw + 12))) == 0;
}

/*
 * Walks copy @c's run of @gid, which starts at slot @home and whose slots
 * carry @tag, for its first slot with type @type (any type for
 * IBK_GID_TYPE_ANY): the lowest index holding that pair, or, for any type,
 * the GID. Returns that index, its entry's type into *@found_type unless
 * that is NULL, or IBK_ENOENT. Safe inside a read section: bounded by the
 * slot count, every position below it (the home by construction, the next
 * ones masked), and a slot only ever names an index below the capacity.
 */
static inline int ibk__gid_probe(const struct ibk_gid_table *t, unsigned c,
				 const struct ibk_gid *gid, uint32_t home,
				 uint32_t tag, enum ibk_gid_type type,
				 uint32_t *found_type)
{
	const struct ibk_hash_slot *slots = t->hdr.slots[c];
	const struct ibk_gid_cell *cells = t->cells[c];
	uint32_t mask = t->hdr.hash_mask;
	uint32_t n, s, cell_type;

	/* the position from @home and @n each time: one register fewer
	 * than a position kept beside the count */
	for (n = 0; n <= mask; n++) {
		const struct ibk_gid_cell *cell;

		s = ibk__load(&slots[(home + n) & mask].word, relaxed);
		if (IBK__SLOT_KEY(s) != tag) {
			if (s == 0)	/* tested second: a tag is never 0 */
				break;
			continue;
		}
		cell = &cells[IBK__SLOT_INDEX(s)];
		if (!ibk__gid_cell_holds_gid(cell, gid))
			continue;
		if (type == IBK_GID_TYPE_ANY && !found_type)
			return (int)IBK__SLOT_INDEX(s);
		cell_type = ibk__load(&cell->type, relaxed);
		if (type == IBK_GID_TYPE_ANY || cell_type == (uint32_t)type) {
			if (found_type)
				*found_type = cell_type;
			return (int)IBK__SLOT_INDEX(s);
		}
	}
	return IBK_ENOENT;
}

/* A GID has at most one slot per type; a walk gathers them, and one more
 * entry for a slot to add. */
#define IBK__GID_TYPES 3
#define IBK__GID_RUN (IBK__GID_TYPES + 1)

/*
 * Writer side: copy @c's links of entry @i, the previous and the next.
 * Within a copy the indices holding one (GID, type) pair form a chain in
 * index order: the pair's slot names the head, the lowest; next of the
 * last is itself, prev of the head is the last (a refill appends in O(1)),
 * and an index alone is linked to itself both ways. Only writers read
 * links.
 */
static inline uint32_t ibk__gid_prev(const struct ibk_gid_table *t,
				     unsigned c, uint32_t i)
{
	return ibk__load(&t->cells[c][i].prev, relaxed);
}

static inline uint32_t ibk__gid_next(const struct ibk_gid_table *t,
				     unsigned c, uint32_t i)
{
	return ibk__load(&t->cells[c][i].next, relaxed);
}

static inline void ibk__gid_prev_set(struct ibk_gid_table *t, unsigned c,
				     uint32_t i, uint32_t prev)
{
	ibk__store(&t->cells[c][i].prev, (uint16_t)prev, relaxed);
}

static inline void ibk__gid_next_set(struct ibk_gid_table *t, unsigned c,
				     uint32_t i, uint32_t next)
{
	ibk__store(&t->cells[c][i].next, (uint16_t)next, relaxed);
}

static inline void ibk__gid_link_set(struct ibk_gid_table *t, unsigned c,
				     uint32_t i, uint32_t prev, uint32_t next)
{
	ibk__gid_prev_set(t, c, i, prev);
	ibk__gid_next_set(t, c, i, next);
}

/*
 * Writer side: links @x, in no chain, into copy @c's chain headed by
 * @head; returns the head afterwards (@x if it is lower). O(1) at either
 * end; in between, a walk from the head over the lower indices holding
 * the pair: O(duplicates), which a verbs GID table does not have (each
 * index holds one GID of one type, and the kernel lists a GID once per
 * type).
 */
static inline uint32_t ibk__gid_chain_add(struct ibk_gid_table *t,
					  unsigned c, uint32_t head,
					  uint32_t x)
{
	uint32_t last = ibk__gid_prev(t, c, head), at, next;

	if (x < head) {
		ibk__gid_link_set(t, c, x, last, head);
		ibk__gid_prev_set(t, c, head, x);
		return x;
	}
	if (x > last) {
		ibk__gid_next_set(t, c, last, x);
		ibk__gid_link_set(t, c, x, last, x);
		ibk__gid_prev_set(t, c, head, x);
		return head;
	}
	for (at = head; (next = ibk__gid_next(t, c, at)) < x; at = next)
		;
	ibk__gid_link_set(t, c, x, at, next);
	ibk__gid_next_set(t, c, at, x);
	ibk__gid_prev_set(t, c, next, x);
	return head;
}

/* Writer side: unlinks @x from copy @c's chain headed by @head; returns
 * the head afterwards, @x itself if it was alone. O(1). */
static inline uint32_t ibk__gid_chain_remove(struct ibk_gid_table *t,
					     unsigned c, uint32_t head,
					     uint32_t x)
{
	uint32_t prev = ibk__gid_prev(t, c, x), next = ibk__gid_next(t, c, x);

	if (x == head) {
		if (next != x)
			ibk__gid_prev_set(t, c, next, prev);
		return next;
	}
	if (next == x) {		/* the last: @prev is now */
		ibk__gid_next_set(t, c, prev, prev);
		ibk__gid_prev_set(t, c, head, prev);
	} else {
		ibk__gid_next_set(t, c, prev, next);
		ibk__gid_prev_set(t, c, next, prev);
	}
	return head;
}

/*
 * Writer side: walks copy @c's run from the home of GID @w (hash @hash) to
 * its first empty slot, whose position goes to *@end, gathering the GID's
 * slots (one per type it is held with) in run order: positions into @at,
 * words into @word, IBK__GID_RUN each, 0 past those gathered (an empty
 * slot, so no entry is left unwritten). Returns how many.
 */
static inline uint32_t ibk__gid_run(const struct ibk_gid_table *t,
				    unsigned c, const uint32_t w[4],
				    uint32_t hash, uint32_t *at,
				    uint32_t *word, uint32_t *end)
{
	const struct ibk_hash_slot *slots = t->hdr.slots[c];
	uint32_t mask = t->hdr.hash_mask, tag = ibk__gid_tag(hash);
	uint32_t pos = ibk__gid_home(t, hash), k = 0, s;

	IBK__STATIC_ASSERT(IBK__GID_RUN == 4, "a run's four entries zeroed");
	at[0] = at[1] = at[2] = at[3] = 0;
	word[0] = word[1] = word[2] = word[3] = 0;
	for (; (s = ibk__load(&slots[pos].word, relaxed)) != 0;
	     pos = (pos + 1) & mask) {
		if (IBK__SLOT_KEY(s) == tag && k < IBK__GID_TYPES &&
		    ibk__gid_cell_holds(&t->cells[c][IBK__SLOT_INDEX(s)], w)) {
			at[k] = pos;
			word[k++] = s;
		}
	}
	*end = pos;
	return k;
}

/* Writer side: which of the @k slot words @word of one GID in copy @c
 * names an entry of @type; @k if none. */
static inline uint32_t ibk__gid_slot_of_type(const struct ibk_gid_table *t,
					     unsigned c, const uint32_t *word,
					     uint32_t k, enum ibk_gid_type type)
{
	uint32_t j;

	for (j = 0; j < k; j++)
		if (ibk__load(&t->cells[c][IBK__SLOT_INDEX(word[j])].type,
			      relaxed) == (uint32_t)type)
			break;
	return j;
}

/*
 * Writer side: stores the @k slot words @word of one GID at its slot
 * positions @at in copy @c, sorted by the indices they name. They share
 * one home, so any order among their positions is a valid probe order;
 * this one lets a find for any type stop at the GID's first slot.
 */
static inline void ibk__gid_slots_put(struct ibk_gid_table *t, unsigned c,
				      const uint32_t *at, uint32_t *word,
				      uint32_t k)
{
	uint32_t i, j, s;

	for (i = 1; i < k; i++) {
		for (j = i; j > 0 && IBK__SLOT_INDEX(word[j - 1]) >
				     IBK__SLOT_INDEX(word[j]); j--) {
			s = word[j];
			word[j] = word[j - 1];
			word[j - 1] = s;
		}
	}
	for (i = 0; i < k; i++)
		ibk__store(&t->hdr.slots[c][at[i]].word, word[i], relaxed);
}

/* Writer side: in copy @c, @index (still holding the non-zero GID @w,
 * hash @hash, with @type) is about to change: it leaves its pair's chain,
 * and the pair's slot names the next index holding the pair or goes.
 * O(1). */
static inline void ibk__gid_unindex(struct ibk_gid_table *t, unsigned c,
				    uint32_t index, const uint32_t w[4],
				    uint32_t hash, enum ibk_gid_type type)
{
	uint32_t at[IBK__GID_RUN], word[IBK__GID_RUN], end, head;
	uint32_t k = ibk__gid_run(t, c, w, hash, at, word, &end);
	uint32_t j = ibk__gid_slot_of_type(t, c, word, k, type);

	head = ibk__gid_chain_remove(t, c, IBK__SLOT_INDEX(word[j]), index);
	if (head == index) {
		ibk__hash_remove(&t->hdr, c, at[j], t, ibk__gid_word_home);
	} else if (head != IBK__SLOT_INDEX(word[j])) {
		word[j] = IBK__SLOT_WORD(head, IBK__SLOT_KEY(word[j]));
		ibk__gid_slots_put(t, c, at, word, k);
	}
}

/* Writer side: in copy @c, @index now holds the non-zero GID @w, hash
 * @hash, with @type, and is in no chain: it joins its pair's, or the pair
 * takes the first empty slot of the run. O(1) but for
 * ibk__gid_chain_add(). */
static inline void ibk__gid_index(struct ibk_gid_table *t, unsigned c,
				  uint32_t index, const uint32_t w[4],
				  uint32_t hash, enum ibk_gid_type type)
{
	uint32_t at[IBK__GID_RUN], word[IBK__GID_RUN];
	uint32_t k = ibk__gid_run(t, c, w, hash, at, word, &at[IBK__GID_TYPES]);
	uint32_t j = ibk__gid_slot_of_type(t, c, word, k, type);

	if (j == k) {
		ibk__gid_link_set(t, c, index, index, index);
		at[k] = at[IBK__GID_TYPES];
		word[k++] = IBK__SLOT_WORD(index, ibk__gid_tag(hash));
	} else {
		word[j] = IBK__SLOT_WORD(ibk__gid_chain_add(t, c,
						IBK__SLOT_INDEX(word[j]), index),
					 IBK__SLOT_KEY(word[j]));
	}
	ibk__gid_slots_put(t, c, at, word, k);
}

/* Writer side: stores GID @w and @type in @c. */
static inline void ibk__gid_cell_store(struct ibk_gid_cell *c,
				       const uint32_t w[4],
				       enum ibk_gid_type type)
{
	ibk__store(&c->word[0], w[0], relaxed);
	ibk__store(&c->word[1], w[1], relaxed);
	ibk__store(&c->word[2], w[2], relaxed);
	ibk__store(&c->word[3], w[3], relaxed);
	ibk__store(&c->type, (uint16_t)type, relaxed);
}

static inline bool ibk__gid_words_zero(const uint32_t w[4])
{
	return (w[0] | w[1] | w[2] | w[3]) == 0;
}

/* A writer building copy @c's index keeps the table's fields at hand,
 * read once: after each atomic store a compiler would read them again. */
struct ibk__gid_build {
	struct ibk_gid_table *t;
	unsigned c;
	struct ibk_gid_cell *cells;
	struct ibk_hash_slot *slots;
	uint32_t mask, shift;
};

/* Writer side: starts a build of copy @c's index: empty, to be filled by
 * ibk__gid_append() in index order. */
static inline void ibk__gid_build_begin(struct ibk_gid_table *t, unsigned c,
					struct ibk__gid_build *b)
{
	b->t = t;
	b->c = c;
	b->cells = t->cells[c];
	b->slots = t->hdr.slots[c];
	b->mask = t->hdr.hash_mask;
	b->shift = t->hdr.hash_shift;
	ibk__hash_clear(&t->hdr, c);
}

/*
 * Writer side: in build @b, @index now holds the non-zero GID @w with
 * @type, every lower index being indexed already. A pair already indexed
 * gets @index as its last, in O(1); a new one takes the first empty slot
 * of its run, after the GID's other slots, whose indices are lower: the
 * order a find for any type needs, with no sorting.
 */
static inline void ibk__gid_append(const struct ibk__gid_build *b,
				   uint32_t index, const uint32_t w[4],
				   enum ibk_gid_type type)
{
	uint32_t hash = ibk__gid_hash(w), tag = ibk__gid_tag(hash);
	uint32_t pos = hash >> b->shift, s;
	const struct ibk_gid_cell *cell;

	for (; (s = ibk__load(&b->slots[pos].word, relaxed)) != 0;
	     pos = (pos + 1) & b->mask) {
		cell = &b->cells[IBK__SLOT_INDEX(s)];
		if (IBK__SLOT_KEY(s) == tag && ibk__gid_cell_holds(cell, w) &&
		    ibk__load(&cell->type, relaxed) == (uint32_t)type)
			break;
	}
	if (s != 0) {
		ibk__gid_chain_add(b->t, b->c, IBK__SLOT_INDEX(s), index);
		return;
	}
	ibk__gid_link_set(b->t, b->c, index, index, index);
	ibk__store(&b->slots[pos].word, IBK__SLOT_WORD(index, tag), relaxed);
}

/* Writer side: builds copy @c's hash index and chains afresh from its
 * cells. */
static inline void ibk__gid_reindex(struct ibk_gid_table *t, unsigned c)
{
	struct ibk__gid_build b;
	uint32_t w[4], i;

	ibk__gid_build_begin(t, c, &b);
	for (i = 0; i < t->hdr.capacity; i++) {
		ibk__gid_cell_load(&b.cells[i], w);
		if (!ibk__gid_words_zero(w))
			ibk__gid_append(&b, i, w, (enum ibk_gid_type)
					ibk__load(&b.cells[i].type, relaxed));
	}
}

/* Writer side: copy @c holds entries 0..@n-1 from @e, the rest empty,
 * and is no longer awaiting a refill. One pass builds the cells and the
 * index together. */
static inline void ibk__gid_fill(struct ibk_gid_table *t, unsigned c,
				 const struct ibk_gid_entry *e, uint32_t n)
{
	static const uint32_t zero[4] = { 0, 0, 0, 0 };
	uint32_t capacity = t->hdr.capacity, w[4], i;
	struct ibk__gid_build b;

	ibk__gid_build_begin(t, c, &b);
	for (i = 0; i < n; i++) {
		enum ibk_gid_type type = e[i].type;

		/* an empty entry is IB; ibk_gid_table_refill() has refused
		 * any other of no valid type, which the cells never hold */
		ibk__gid_to_words(&e[i].gid, w);
		if (ibk__gid_words_zero(w) || !IBK__GID_TYPE_VALID(type))
			type = IBK_GID_TYPE_IB;
		ibk__gid_cell_store(&b.cells[i], w, type);
		if (!ibk__gid_words_zero(w))
			ibk__gid_append(&b, i, w, type);
	}
	for (; i < capacity; i++)
		ibk__gid_cell_store(&b.cells[i], zero, IBK_GID_TYPE_IB);
	ibk__status_refilled(&t->hdr, c);
}

/* Writer side: copy @to becomes the other copy, cells, links and index
 * word for word, no longer awaiting a refill. A cell is a whole number of
 * bulk words (see ibk__words_copy()): where both copies start on a word
 * boundary the cells go as words, else cell by cell. */
static inline void ibk__gid_copy_over(struct ibk_gid_table *t, unsigned to)
{
	const struct ibk_gid_cell *from = t->cells[to ^ 1u];
	struct ibk_gid_cell *cells = t->cells[to];
	uint32_t n = t->hdr.capacity, w[4], i = 0;

	IBK__STATIC_ASSERT(sizeof(struct ibk_gid_cell) % 8 == 0,
			   "a GID cell is a whole number of bulk words");
#if IBK__WORD_LINKS
	if ((ibk__word_offset(cells) | ibk__word_offset(from)) == 0) {
		(void)ibk__words_copy(cells, from, 0, n * sizeof(*cells));
		i = n;
	}
#endif
	for (; i < n; i++) {
		ibk__gid_cell_load(&from[i], w);
		ibk__gid_cell_store(&cells[i], w, (enum ibk_gid_type)
				    ibk__load(&from[i].type, relaxed));
		ibk__store(&cells[i].prev, ibk__load(&from[i].prev, relaxed),
			   relaxed);
		ibk__store(&cells[i].next, ibk__load(&from[i].next, relaxed),
			   relaxed);
	}
	ibk__hash_copy(&t->hdr, to);
	ibk__status_refilled(&t->hdr, to);
}

/* One entry's change, worked out once for both copies: its GID and type
 * before and after, and the hashes of both. */
struct ibk__gid_change {
	uint32_t index;
	uint32_t old[4], w[4];
	uint32_t old_hash, hash;
	enum ibk_gid_type old_type, type;
};

/* Writer side: plans setting entry @index to GID @w with @type from what
 * copy @c holds (both copies do, until the first is written). False if
 * the entry holds them already. */
static inline bool ibk__gid_change_plan(const struct ibk_gid_table *t,
					unsigned c, uint32_t index,
					const uint32_t w[4],
					enum ibk_gid_type type,
					struct ibk__gid_change *x)
{
	const struct ibk_gid_cell *cell = &t->cells[c][index];

	ibk__gid_cell_load(cell, x->old);
	x->old_type = (enum ibk_gid_type)ibk__load(&cell->type, relaxed);
	if (ibk__gid_words_equal(x->old, w) && x->old_type == type)
		return false;
	x->index = index;
	x->w[0] = w[0];
	x->w[1] = w[1];
	x->w[2] = w[2];
	x->w[3] = w[3];
	x->type = type;
	x->old_hash = ibk__gid_hash(x->old);
	x->hash = ibk__gid_hash(w);
	return true;
}

/* Writer side: applies change @x to copy @c. */
static inline void ibk__gid_change_apply(struct ibk_gid_table *t, unsigned c,
					 const struct ibk__gid_change *x)
{
	if (!ibk__gid_words_zero(x->old))
		ibk__gid_unindex(t, c, x->index, x->old, x->old_hash,
				 x->old_type);
	ibk__gid_cell_store(&t->cells[c][x->index], x->w, x->type);
	if (!ibk__gid_words_zero(x->w))
		ibk__gid_index(t, c, x->index, x->w, x->hash, x->type);
}

/* Writer side: copy @c's entry @index holds GID @w with @type. */
static inline void ibk__gid_put(struct ibk_gid_table *t, unsigned c,
				uint32_t index, const uint32_t w[4],
				enum ibk_gid_type type)
{
	struct ibk__gid_change x;

	if (ibk__gid_change_plan(t, c, index, w, type, &x))
		ibk__gid_change_apply(t, c, &x);
}

/**
 * ibk_gid_table_init() - Attaches a GID table to caller storage
 * @t: the GID table
 * @cells: the table's cells (see "Table storage")
 * @capacity: how many entries the table holds
 * @slots: the hash index's slots
 * @slot_count: how many @slots there are
 *
 * As ibk_pkey_table_init(), for IBK_GID_CELLS(@capacity) GID cells and
 * IBK_HASH_SLOTS(@capacity) slots, or as few as IBK_HASH_SLOTS_MIN().
 *
 * Context: Before any other use of the storage: concurrent with no reader or
 * writer.
 * Return: IBK_OK; IBK_EINVAL for a NULL pointer; IBK_ERANGE for a capacity
 * outside 1..65536 or too few slots.
 */
static inline int ibk_gid_table_init(struct ibk_gid_table *t,
				     struct ibk_gid_cell *cells,
				     uint32_t capacity,
				     struct ibk_hash_slot *slots,
				     uint32_t slot_count)
{
	static const uint32_t zero[4] = { 0, 0, 0, 0 };
	uint32_t i;
	int rc;

	if (!t || !cells)
		return IBK_EINVAL;
	rc = ibk__table_init(&t->hdr, capacity, slots, slot_count, 1u << 31);
	if (rc != IBK_OK)
		return rc;
	t->cells[0] = cells;
	t->cells[1] = cells + capacity;
	for (i = 0; i < IBK_GID_CELLS(capacity); i++) {
		ibk__gid_cell_store(&cells[i], zero, IBK_GID_TYPE_IB);
		ibk__store(&cells[i].prev, 0, relaxed);
		ibk__store(&cells[i].next, 0, relaxed);
	}
	return IBK_OK;
}

/**
 * ibk_gid_table_refill_ticket() - As ibk_pkey_table_refill_ticket(), for the
 * GID table (GID_CHANGE)
 * @t: the GID table
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: the ticket.
 */
static inline uint32_t ibk_gid_table_refill_ticket(const struct ibk_gid_table *t)
{
	return ibk__refill_ticket(&t->hdr);
}

/**
 * ibk_gid_table_refill() - Publishes a whole new GID table as one generation
 * @t: the GID table
 * @e: the entries, 0..@n-1
 * @n: how many
 * @ticket: what the refill ticket function returned before the device was read
 *
 * Publishes a whole new table as one generation, what a GID_CHANGE handler
 * does once it has re-read the device: entries 0..@n-1 from @e (an all-zero
 * GID is an empty slot, its type ignored), the rest empty; clears "awaiting
 * refill".
 *
 * @ticket as for ibk_pkey_table_refill().
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: IBK_OK; IBK_ESTALE, writing nothing, if a change event came after
 * the ticket; else IBK_ENOTREADY, writing nothing, unless the port is ARMED or
 * ACTIVE; IBK_EINVAL for NULL @t, NULL @e with @n > 0, or a non-zero GID whose
 * type is not IB, RoCE v1 or RoCE v2 (nothing is written then); IBK_ENOSPC if
 * @n > capacity.
 */
static inline int ibk_gid_table_refill(struct ibk_gid_table *t,
				       const struct ibk_gid_entry *e,
				       uint32_t n, uint32_t ticket)
{
	uint32_t i;
	int rc;

	if (!t || (!e && n))
		return IBK_EINVAL;
	if (n > t->hdr.capacity)
		return IBK_ENOSPC;
	for (i = 0; i < n; i++)
		if (!IBK__GID_TYPE_VALID(e[i].type) &&
		    !ibk_gid_is_zero(&e[i].gid))
			return IBK_EINVAL;
	rc = ibk__refill_begin(&t->hdr, ticket);
	if (rc != IBK_OK)
		return rc;
	ibk__gid_fill(t, 0, e, n);
	ibk_latch_write_switch(&t->hdr.latch);
	ibk__gid_copy_over(t, 1);
	ibk_latch_write_end(&t->hdr.latch);
	return IBK_OK;
}

/**
 * ibk_gid_table_set() - Sets one entry of the GID table as one generation
 * @t: the GID table
 * @index: the entry's index
 * @gid: a GID
 * @type: the GID type
 *
 * Sets entry @index to @gid with @type (an all-zero GID empties it, its type
 * ignored) as one generation.
 *
 * Leaves "awaiting refill" as it is; a change event, as ibk_pkey_table_set()
 * is.
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: IBK_OK; IBK_EINVAL for a NULL pointer or a bad type; IBK_ERANGE if
 * @index >= capacity.
 */
static inline int ibk_gid_table_set(struct ibk_gid_table *t, uint32_t index,
				    const struct ibk_gid *gid,
				    enum ibk_gid_type type)
{
	struct ibk__gid_change x;
	uint32_t w[4];
	bool changes;

	if (!t || !gid)
		return IBK_EINVAL;
	if (index >= t->hdr.capacity)
		return IBK_ERANGE;
	ibk__gid_to_words(gid, w);
	if (ibk__gid_words_zero(w))
		type = IBK_GID_TYPE_IB;
	else if (!IBK__GID_TYPE_VALID(type))
		return IBK_EINVAL;
	ibk_latch_write_begin(&t->hdr.latch);
	ibk__epoch_advance(&t->hdr);
	changes = ibk__gid_change_plan(t, 0, index, w, type, &x);
	if (changes)
		ibk__gid_change_apply(t, 0, &x);
	ibk_latch_write_switch(&t->hdr.latch);
	if (changes)
		ibk__gid_change_apply(t, 1, &x);
	ibk_latch_write_end(&t->hdr.latch);
	return IBK_OK;
}

/**
 * ibk_gid_table_set_state() - As ibk_pkey_table_set_state()
 * @t: the GID table
 * @state: the port state (IBA 14.2.5.6 PortState)
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: IBK_OK; IBK_EINVAL for NULL @t or a state outside enum
 * ibk_port_state.
 */
static inline int ibk_gid_table_set_state(struct ibk_gid_table *t,
					  enum ibk_port_state state)
{
	return t ? ibk__table_set_state(&t->hdr, state) : IBK_EINVAL;
}

/**
 * ibk_gid_table_invalidate() - As ibk_pkey_table_invalidate()
 * @t: the GID table
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: IBK_OK; IBK_EINVAL for NULL @t.
 */
static inline int ibk_gid_table_invalidate(struct ibk_gid_table *t)
{
	return t ? ibk__table_invalidate(&t->hdr) : IBK_EINVAL;
}

/**
 * ibk_gid_table_ref_get() - Takes a reference to entry @index
 * @t: the GID table
 * @index: the entry's index
 * @ref: receives the reference
 *
 * On any error a non-NULL @ref gets the generation IBK_GENERATION_NEVER: it is
 * never fresh.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: IBK_OK; IBK_EINVAL for a NULL pointer; IBK_ERANGE if @index >=
 * capacity; IBK_ENOTREADY unless the port is ARMED, ACTIVE or ACTIVE_DEFER;
 * IBK_ESTALE while awaiting a refill; IBK_ENOENT if the entry's GID is all
 * zero.
 */
static inline int ibk_gid_table_ref_get(const struct ibk_gid_table *t,
					uint32_t index, struct ibk_gid_ref *ref)
{
	struct ibk_gid_entry e;
	uint32_t gen, unreadable;
	unsigned c;

	if (!ref)
		return IBK_EINVAL;
	ref->generation = IBK_GENERATION_NEVER;	/* until it succeeds */
	if (!t)
		return IBK_EINVAL;
	if (index >= t->hdr.capacity)
		return IBK_ERANGE;
	do {
		gen = ibk_latch_read_begin(&t->hdr.latch);
		c = ibk_latch_copy(gen);
		unreadable = ibk__table_unreadable(&t->hdr, c);
		/* as for P_Keys: read whatever the status */
		ibk__gid_entry_load(&t->cells[c][index], &e);
	} while (ibk_latch_read_retry(&t->hdr.latch, gen));
	if (unreadable)
		return ibk__unreadable_why(unreadable);
	if (ibk_gid_is_zero(&e.gid))
		return IBK_ENOENT;
	ref->generation = gen;
	ref->index = (uint16_t)index;
	ref->type = e.type;
	ibk__copy16(ref->gid.raw, e.gid.raw);
	return IBK_OK;
}

/**
 * ibk_gid_table_get() - Entry @index into *@entry (ibv_query_gid_ex(3) from
 * the cache)
 * @t: the GID table
 * @index: the entry's index
 * @entry: receives the entry
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: IBK_OK; else an error as ibk_gid_table_ref_get() returns it.
 */
static inline int ibk_gid_table_get(const struct ibk_gid_table *t,
				    uint32_t index, struct ibk_gid_entry *entry)
{
	struct ibk_gid_ref ref;
	int rc;

	if (!entry)
		return IBK_EINVAL;
	rc = ibk_gid_table_ref_get(t, index, &ref);
	if (rc == IBK_OK) {
		ibk__copy16(entry->gid.raw, ref.gid.raw);
		entry->type = ref.type;
	}
	return rc;
}

/* True if ibk_gid_table_find() may look up @gid with @type in @t: no NULL
 * pointer, and a valid type or IBK_GID_TYPE_ANY (the all-zero GID is
 * refused after the probe misses, see ibk__gid_miss_why()). */
static inline bool ibk__gid_find_args_valid(const struct ibk_gid_table *t,
					    const struct ibk_gid *gid,
					    enum ibk_gid_type type)
{
	return t && gid &&
	       (type == IBK_GID_TYPE_ANY || IBK__GID_TYPE_VALID(type));
}

/*
 * Why a lookup of @gid found nothing, @why the error its read section
 * gave: IBK_EINVAL for the all-zero GID first, as if it had been refused
 * before the read (no slot ever names an empty entry, so the probe cannot
 * have found it), then @why. Out of line, off the path of a hit.
 */
IBK__COLD int ibk__gid_miss_why(const struct ibk_gid *gid, int why)
{
	uint32_t w[4];

	ibk__gid_to_words(gid, w);	/* four loads, where a byte loop
					 * takes sixteen */
	if (ibk__gid_words_zero(w))
		return IBK_EINVAL;
	return why;
}

/*
 * One read section probing for @gid with @type (see ibk__gid_probe()):
 * the index found, its entry's type into *@found_type unless that is
 * NULL, and the generation into *@gen unless that is NULL; else why not,
 * as ibk_gid_table_ref_find(). The GID is hashed before the section and
 * the outputs are written after it. Always inlined, so that a caller's
 * NULL outputs drop their loads and a found index stays in a register.
 */
IBK__HOT int ibk__gid_lookup(const struct ibk_gid_table *t,
				 const struct ibk_gid *gid,
				 enum ibk_gid_type type, uint32_t *found_type,
				 uint32_t *gen)
{
	uint32_t w[4], hash, home, tag, start, unreadable;
	unsigned c;
	int found;

	ibk__gid_to_words(gid, w);
	hash = ibk__gid_hash(w);
	home = ibk__gid_home(t, hash);
	tag = ibk__gid_tag(hash);
	do {
		start = ibk_latch_read_begin(&t->hdr.latch);
		c = ibk_latch_copy(start);
		unreadable = ibk__table_unreadable(&t->hdr, c);
		if (unreadable)
			found = ibk__unreadable_why(unreadable);
		else
			found = ibk__gid_probe(t, c, gid, home, tag, type,
					       found_type);
	} while (ibk_latch_read_retry(&t->hdr.latch, start));
	if (found < 0)
		return ibk__gid_miss_why(gid, found);
	if (gen)
		*gen = start;
	return found;
}

/**
 * ibk_gid_table_ref_find() - Takes a reference to the entry
 * ibk_gid_table_find() answers
 * @t: the GID table
 * @gid: a GID
 * @type: the GID type
 * @ref: receives the reference
 *
 * O(1): one probe run. On any error a non-NULL @ref is never fresh, as for
 * ref_get.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: IBK_OK; IBK_EINVAL for a NULL pointer, the all-zero GID (an empty
 * slot is never found) or a type that is neither valid nor IBK_GID_TYPE_ANY;
 * IBK_ENOTREADY; IBK_ESTALE; IBK_ENOENT if absent.
 */
static inline int ibk_gid_table_ref_find(const struct ibk_gid_table *t,
					 const struct ibk_gid *gid,
					 enum ibk_gid_type type,
					 struct ibk_gid_ref *ref)
{
	uint32_t gen = IBK_GENERATION_NEVER, found_type = IBK_GID_TYPE_IB;
	int index;

	if (!ref)
		return IBK_EINVAL;
	ref->generation = IBK_GENERATION_NEVER;	/* until it succeeds */
	if (!ibk__gid_find_args_valid(t, gid, type))
		return IBK_EINVAL;
	index = ibk__gid_lookup(t, gid, type, &found_type, &gen);
	if (index < 0)
		return index;
	ref->generation = gen;
	ref->index = (uint16_t)index;
	ref->type = (enum ibk_gid_type)found_type;
	ibk__gid_copy(&ref->gid, gid);
	return IBK_OK;
}

/**
 * ibk_gid_table_find() - Finds the lowest index holding a GID
 * @t: the GID table
 * @gid: a GID
 * @type: the GID type
 * @found_type: receives the type of the entry found; may be NULL
 *
 * Find by GID: the lowest index holding @gid with type @type, or with any type
 * for IBK_GID_TYPE_ANY; *@found_type (may be NULL) gets the entry's type.
 *
 * O(1) in the table size; no reference is built.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: the index (0 or more); else a negative error as
 * ibk_gid_table_ref_find() returns it.
 */
static inline int ibk_gid_table_find(const struct ibk_gid_table *t,
				     const struct ibk_gid *gid,
				     enum ibk_gid_type type,
				     enum ibk_gid_type *found_type)
{
	uint32_t entry_type = IBK_GID_TYPE_IB;
	int index;

	if (!ibk__gid_find_args_valid(t, gid, type))
		return IBK_EINVAL;
	index = ibk__gid_lookup(t, gid, type,
				found_type ? &entry_type : NULL, NULL);
	if (index >= 0 && found_type)
		*found_type = (enum ibk_gid_type)entry_type;
	return index;
}

/**
 * ibk_gid_table_snapshot() - Copies every entry of one generation of the GID
 * table
 * @t: the GID table
 * @n: how many
 * @entries: receives @n entries
 * @generation: receives the generation the copy was read in; may be NULL
 *
 * As ibk_pkey_table_snapshot(): every entry of one generation, empty ones as
 * the all-zero GID with type IB.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: the capacity; else an error as ibk_pkey_table_snapshot() returns it.
 */
static inline int ibk_gid_table_snapshot(const struct ibk_gid_table *t,
					 uint32_t n,
					 struct ibk_gid_entry *entries,
					 uint32_t *generation)
{
	uint32_t gen, i;
	unsigned c;
	int rc;

	if (!t || !entries)
		return IBK_EINVAL;
	if (n < t->hdr.capacity)
		return IBK_ERANGE;
	do {
		gen = ibk_latch_read_begin(&t->hdr.latch);
		c = ibk_latch_copy(gen);
		rc = ibk__table_readable(&t->hdr, c);
		for (i = 0; rc == IBK_OK && i < t->hdr.capacity; i++)
			ibk__gid_entry_load(&t->cells[c][i], &entries[i]);
	} while (ibk_latch_read_retry(&t->hdr.latch, gen));
	if (rc != IBK_OK)
		return rc;
	if (generation)
		*generation = gen;
	return (int)t->hdr.capacity;
}

/**
 * ibk_gid_table_ref_fresh() - True while nothing has been written to @t since
 * @ref was taken: one load and one compare
 * @t: the GID table
 * @ref: a reference
 *
 * @t and @ref must be valid.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: true if @ref is still fresh.
 */
static inline bool ibk_gid_table_ref_fresh(const struct ibk_gid_table *t,
					   const struct ibk_gid_ref *ref)
{
	return ibk__latch_unchanged(&t->hdr.latch, ref->generation);
}

/* ------------------------------------------------------------------------
 * Port: both tables, the violation counters, events, receive checks
 *
 * What a verbs consumer keeps per port, and the receive checks that need
 * the P_Key table: a packet to QP1 matches against the whole table, any
 * other QP against the entry at its own P_Key index. Key violations are
 * counted in the port's 16-bit counters; every other drop is not. A whole
 * packet (ibk_port_rx_packet()) also meets the management datagram rules
 * of QP0 and QP1 first, counted apart, and hands back a dropped packet's
 * trap 257 or 258 details.
 *
 * API:
 *	ibk_port_init(port, pkey_cells, pkey_capacity, pkey_slots, pkey_slot_count, gid_cells, gid_capacity, gid_slots, gid_slot_count)
 *	IBK_PORT_STORAGE(pkey_capacity, gid_capacity)
 *	IBK_PORT_STORAGE_INIT(s)
 *	ibk_port_set_state(port, state)
 *	ibk_port_serve_stale(port, on)
 *	ibk_port_event(port, event)
 *	ibk_port_reset(port)
 *	ibk_port_rx(port, qp, bth, deth)
 *	ibk_port_rx_gsi(port, bth, deth, pkey_index)
 *	ibk_port_rx_burst(port, qp, hdrs, n, verdicts)
 *	ibk_port_rx_mixed(port, qps, hdrs, n, verdicts, pkey_index)
 *	ibk_port_rx_packet(port, qp, pkt, len, trap)
 * ------------------------------------------------------------------------ */

/**
 * struct ibk_port - One port's cache
 * @pkeys: the P_Key table
 * @ibk__gap0: padding: a cache line between the P_Key and GID headers
 * @gids: the GID table
 * @ibk__gap1: padding: a cache line between the GID header and the counters
 * @pkey_violations: PortInfo P_KeyViolations: packets dropped on their P_Key
 * @qkey_violations: PortInfo Q_KeyViolations: packets dropped on their Q_Key
 * @mkey_violations: counted by the SMA
 * @mad_drops: ibk_port_rx_packet()'s MAD rules, qib's n_pkt_drops
 * @stale_decisions: packets decided on a table awaiting its refill, served by
 * ibk_port_serve_stale()
 *
 * The P_Key header, the GID header and the counters are kept at least a cache
 * line apart, so receive paths bumping a counter, or a GID writer, never touch
 * a line P_Key readers load. Padding does it, not alignment: a port may live
 * in memory from malloc() or kmalloc().
 */
struct ibk_port {
	struct ibk_pkey_table pkeys;
	uint8_t ibk__gap0[IBK__CACHE_LINE];
	struct ibk_gid_table gids;
	uint8_t ibk__gap1[IBK__CACHE_LINE];
	struct ibk_counter16 pkey_violations;
	struct ibk_counter16 qkey_violations;
	struct ibk_counter16 mkey_violations;
	struct ibk_counter16 mad_drops;
	struct ibk_counter16 stale_decisions;
};

/**
 * ibk_port_init() - Initialises a port's two tables on caller storage
 * @port: the port
 * @pkey_cells: the P_Key table's cells
 * @pkey_capacity: how many P_Keys the port holds
 * @pkey_slots: the P_Key index's slots
 * @pkey_slot_count: how many @pkey_slots there are
 * @gid_cells: the GID table's cells
 * @gid_capacity: how many GIDs the port holds
 * @gid_slots: the GID index's slots
 * @gid_slot_count: how many @gid_slots there are
 *
 * Initialises both tables on caller storage (see ibk_pkey_table_init() and
 * ibk_gid_table_init()), then zeroes the counters; on an error the counters
 * are not written.
 *
 * Initialising a port again restarts its generations, so references from
 * before could read fresh: to start over on a live port, for a device
 * re-opened after DEVICE_FATAL, use ibk_port_reset().
 *
 * Context: Before any other use of the storage: concurrent with no reader or
 * writer.
 * Return: IBK_OK; IBK_EINVAL for a NULL pointer; IBK_ERANGE for a bad capacity
 * or too few hash slots.
 */
static inline int ibk_port_init(struct ibk_port *port,
				struct ibk_pkey_cell *pkey_cells,
				uint32_t pkey_capacity,
				struct ibk_hash_slot *pkey_slots,
				uint32_t pkey_slot_count,
				struct ibk_gid_cell *gid_cells,
				uint32_t gid_capacity,
				struct ibk_hash_slot *gid_slots,
				uint32_t gid_slot_count)
{
	int rc;

	if (!port)
		return IBK_EINVAL;
	rc = ibk_pkey_table_init(&port->pkeys, pkey_cells, pkey_capacity,
				 pkey_slots, pkey_slot_count);
	if (rc == IBK_OK)
		rc = ibk_gid_table_init(&port->gids, gid_cells, gid_capacity,
					gid_slots, gid_slot_count);
	if (rc != IBK_OK)
		return rc;
	ibk__counter16_init(&port->pkey_violations);
	ibk__counter16_init(&port->qkey_violations);
	ibk__counter16_init(&port->mkey_violations);
	ibk__counter16_init(&port->mad_drops);
	ibk__counter16_init(&port->stale_decisions);
	return IBK_OK;
}

/**
 * IBK_PORT_STORAGE() - A struct type holding a port and its tables' storage
 * @pkey_capacity: how many P_Keys the port holds, at least 1
 * @gid_capacity: how many GIDs the port holds, at least 1
 *
 * A struct type holding a port and the storage of its tables, every array
 * sized once from the two capacities.
 *
 * IBK_PORT_STORAGE_INIT() reads each capacity and slot count back from the
 * arrays' sizes, so none can disagree with its storage::
 *
 *	static IBK_PORT_STORAGE(64, 16) cache;	// 64 P_Keys, 16 GIDs
 *	IBK_PORT_STORAGE_INIT(&cache);		// then use &cache.port
 *
 * Storage of the caller's own (a kernel's kcalloc(), a firmware's linker
 * section) goes to ibk_port_init().
 *
 * Return: the struct type, with members port, pkey_cells, pkey_slots,
 * gid_cells and gid_slots.
 */
#define IBK_PORT_STORAGE(pkey_capacity, gid_capacity)			\
	struct {							\
		struct ibk_port port;					\
		struct ibk_pkey_cell					\
			pkey_cells[IBK_PKEY_CELLS(pkey_capacity)];	\
		struct ibk_hash_slot					\
			pkey_slots[IBK_PKEY_HASH_SLOTS(pkey_capacity)];	\
		struct ibk_gid_cell gid_cells[IBK_GID_CELLS(gid_capacity)]; \
		struct ibk_hash_slot gid_slots[IBK_HASH_SLOTS(gid_capacity)]; \
	}

/* The number of elements of array @a. */
#define IBK__COUNT_OF(a)	((uint32_t)(sizeof(a) / sizeof((a)[0])))

/**
 * IBK_PORT_STORAGE_INIT() - Initialises a port declared by IBK_PORT_STORAGE()
 * @s: a pointer to the storage (evaluated more than once)
 *
 * Initialises a port declared by IBK_PORT_STORAGE() by ibk_port_init(), each
 * capacity and slot count read back from its array.
 *
 * Context: Before any other use of the storage: concurrent with no reader or
 * writer.
 * Return: what ibk_port_init() returns.
 */
#define IBK_PORT_STORAGE_INIT(s)					\
	ibk_port_init(&(s)->port,					\
		      (s)->pkey_cells,					\
		      IBK__COUNT_OF((s)->pkey_cells) / IBK_PKEY_CELLS(1),	\
		      (s)->pkey_slots, IBK__COUNT_OF((s)->pkey_slots),	\
		      (s)->gid_cells,					\
		      IBK__COUNT_OF((s)->gid_cells) / IBK_GID_CELLS(1),	\
		      (s)->gid_slots, IBK__COUNT_OF((s)->gid_slots))

/**
 * ibk_port_set_state() - Sets the port state in both tables
 * @port: the port
 * @state: the port state (IBA 14.2.5.6 PortState)
 *
 * Sets the port state in both tables, each as one generation; a state other
 * than ARMED, ACTIVE or ACTIVE_DEFER marks them awaiting a refill.
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: IBK_OK; IBK_EINVAL for NULL @port or a state outside enum
 * ibk_port_state.
 */
static inline int ibk_port_set_state(struct ibk_port *port,
				     enum ibk_port_state state)
{
	if (!port || !ibk__port_state_valid(state))
		return IBK_EINVAL;
	ibk__table_update_status(&port->pkeys.hdr, (uint32_t)state, 0);
	ibk__table_update_status(&port->gids.hdr, (uint32_t)state, 0);
	return IBK_OK;
}

/* Writer side: turns the serving of a table awaiting its refill on or
 * off, as one generation. */
static inline void ibk__table_serve_stale(struct ibk__table *h, bool on)
{
	uint32_t status;

	ibk_latch_write_begin(&h->latch);
	status = ibk__status_load(h, 0) & ~IBK__SERVE_STALE;
	status |= on ? IBK__SERVE_STALE : 0u;
	ibk__status_store(h, 0, status);
	ibk_latch_write_switch(&h->latch);
	ibk__status_store(h, 1, status);
	ibk_latch_write_end(&h->latch);
}

/**
 * ibk_port_serve_stale() - Serves a port's last tables while they await a
 * refill
 * @port: the port
 * @on: true to serve, false to refuse
 *
 * With @on, the port keeps serving the tables it last published while they
 * await a refill (after PKEY_CHANGE, GID_CHANGE or any other event that asks
 * for one), as the Linux core's cache serves its last copy until
 * ib_cache_update() lands: reads answer from it instead of IBK_ESTALE, and
 * packets are decided on it instead of dropped with IBK_RX_DROP_PORT, each
 * counted in port->stale_decisions.
 *
 * The price is the window itself: a partition the subnet manager just removed
 * is still accepted, and a GID just deleted still found, until the refill. Off
 * (the default, and after ibk_port_init()), nothing awaiting a refill is
 * served: a change drops packets until the refill, but never admits one the
 * new table refuses. A port that is not ARMED or ACTIVE serves nothing either
 * way. Refill tickets work as before.
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: IBK_OK; IBK_EINVAL for NULL @port.
 */
static inline int ibk_port_serve_stale(struct ibk_port *port, bool on)
{
	if (!port)
		return IBK_EINVAL;
	ibk__table_serve_stale(&port->pkeys.hdr, on);
	ibk__table_serve_stale(&port->gids.hdr, on);
	return IBK_OK;
}

/**
 * ibk_port_event() - Applies an asynchronous event to a port's tables
 * @port: the port
 * @event: the event
 *
 * Applies an asynchronous event before the consumer re-reads the device: every
 * reference into an affected table goes stale at once, reads return IBK_ESTALE
 * (awaiting refill) or IBK_ENOTREADY (DOWN) until the refill or the next state
 * change, and refills holding a ticket from before are refused.
 *
 * PORT_ERR and DEVICE_FATAL take the port DOWN and, as every exit from
 * ARMED/ACTIVE does, mark both tables awaiting a refill. PORT_ACTIVE also
 * awaits one: what a port's tables hold is undefined unless it is ARMED or
 * ACTIVE (ibv_query_pkey(3)), and the Linux core's cache re-reads on it too,
 * as on LID_CHANGE, CLIENT_REREGISTER and (older kernels) SM_CHANGE.
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: IBK_OK; IBK_EINVAL for NULL @port or an event outside enum
 * ibk_event_type.
 */
static inline int ibk_port_event(struct ibk_port *port,
				 enum ibk_event_type event)
{
	/* Per event number: the new state << 4 (0: keep it), 1 for the P_Key
	 * table awaiting a refill, 2 for the GID table; 0 for a number that
	 * is no event. A table, not a switch: at -Os GCC compiles that switch
	 * for Cortex-M0 into a call to libgcc's __gnu_thumb1_case_uqi. */
	static const uint8_t effect[] = {
		0, 0, 0, 0, 0, 0, 0, 0,		/* below DEVICE_FATAL */
		IBK_PORT_DOWN << 4,		/* DEVICE_FATAL */
		IBK_PORT_ACTIVE << 4 | 3,	/* PORT_ACTIVE */
		IBK_PORT_DOWN << 4,		/* PORT_ERR */
		3,				/* LID_CHANGE */
		1,				/* PKEY_CHANGE */
		3,				/* SM_CHANGE */
		0, 0, 0,
		3,				/* CLIENT_REREGISTER */
		2,				/* GID_CHANGE */
	};
	uint32_t i = (uint32_t)event, state, pkeys, gids;

	IBK__STATIC_ASSERT(IBK_EVENT_DEVICE_FATAL == 8 &&
			   IBK_EVENT_GID_CHANGE == 18, "one effect per number");
	if (!port || i >= sizeof(effect) || effect[i] == 0)
		return IBK_EINVAL;
	state = effect[i] >> 4;
	pkeys = effect[i] & 1 ? IBK__AWAITING_REFILL : 0;
	gids = effect[i] & 2 ? IBK__AWAITING_REFILL : 0;
	if (state || pkeys)
		ibk__table_update_status(&port->pkeys.hdr, state, pkeys);
	if (state || gids)
		ibk__table_update_status(&port->gids.hdr, state, gids);
	return IBK_OK;
}

static inline void ibk__pkey_empty(void *t, unsigned c)
{
	ibk__pkey_fill((struct ibk_pkey_table *)t, c, NULL, 0);
}

static inline void ibk__gid_empty(void *t, unsigned c)
{
	ibk__gid_fill((struct ibk_gid_table *)t, c, NULL, 0);
}

/* One update emptying both copies of @table (by @empty), DOWN and awaiting
 * a refill: a change event, with the generation moving on. */
static inline void ibk__table_reset(struct ibk__table *h, void *table,
				    void (*empty)(void *, unsigned))
{
	uint32_t down = ibk__status_make(IBK_PORT_DOWN, IBK__AWAITING_REFILL);

	ibk_latch_write_begin(&h->latch);
	down |= ibk__status_load(h, 0) & IBK__SERVE_STALE;	/* kept */
	ibk__epoch_advance(h);
	empty(table, 0);
	ibk__status_store(h, 0, down);
	ibk_latch_write_switch(&h->latch);
	empty(table, 1);
	ibk__status_store(h, 1, down);
	ibk_latch_write_end(&h->latch);
}

/**
 * ibk_port_reset() - Starts a live port over after DEVICE_FATAL
 * @port: the port
 *
 * Starts an initialised port over, for a consumer re-opening its device after
 * DEVICE_FATAL: both tables empty, DOWN and awaiting a refill, each as one
 * more generation (never an earlier one: references taken before stay stale),
 * refill tickets from before refused, and the counters zero, as a reset
 * device's PortInfo counters are.
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: IBK_OK; IBK_EINVAL for NULL @port.
 */
static inline int ibk_port_reset(struct ibk_port *port)
{
	if (!port)
		return IBK_EINVAL;
	ibk__table_reset(&port->pkeys.hdr, &port->pkeys, ibk__pkey_empty);
	ibk__table_reset(&port->gids.hdr, &port->gids, ibk__gid_empty);
	ibk_counter16_reset(&port->pkey_violations);
	ibk_counter16_reset(&port->qkey_violations);
	ibk_counter16_reset(&port->mkey_violations);
	ibk_counter16_reset(&port->mad_drops);
	ibk_counter16_reset(&port->stale_decisions);
	return IBK_OK;
}

/*
 * In P_Key copy @c: the lowest index holding a key that admits packet key
 * @pkt (IBA 10.9), or -1. A limited @pkt needs a full entry of its base; a
 * full one is admitted by either membership, so the lower of the two
 * lowest indices wins: the first entry in table order that matches, the
 * index Linux soft-RoCE's check_keys() reports for QP1. An invalid @pkt
 * finds nothing: no slot holds base 0.
 */
static inline int ibk__pkey_first_admitting(const struct ibk_pkey_table *t,
					    unsigned c, ibk_pkey_t pkt)
{
	uint32_t full, limited;

	ibk__pkey_probe(t, c, ibk_pkey_to_full(pkt), 0xffffu, &full);
	if (!ibk_pkey_is_full(pkt))
		return full ? (int)IBK__SLOT_INDEX(full) : -1;
	ibk__pkey_probe(t, c, ibk_pkey_to_limited(pkt), 0xffffu, &limited);
	if (!full || (limited && IBK__SLOT_INDEX(limited) <
			       IBK__SLOT_INDEX(full)))
		full = limited;
	return full ? (int)IBK__SLOT_INDEX(full) : -1;
}

/*
 * Inside a read section of P_Key copy @c, for a packet that passed the
 * header checks: the QP1 verdict, and in *@index the P_Key index matched.
 */
static inline enum ibk_rx_verdict
ibk__gsi_verdict(const struct ibk_pkey_table *t, unsigned c, const void *bth,
		 const void *deth, uint16_t *index)
{
	int i = ibk__pkey_first_admitting(t, c, ibk_bth_pkey(bth));

	if (i < 0)
		return IBK_RX_DROP_PKEY;
	*index = (uint16_t)i;
	return ibk_qkey_match(ibk_deth_qkey(deth), IBK_QKEY_GSI) ?
	       IBK_RX_ACCEPT : IBK_RX_DROP_QKEY;
}

/*
 * Inside a read section of P_Key copy @c: the ibk_port_rx() verdict for
 * one packet to @qp, and in *@index the P_Key index it was checked against
 * (meaningful once the P_Key check has run).
 */
static inline enum ibk_rx_verdict
ibk__port_verdict(const struct ibk_pkey_table *t, unsigned c,
		  const struct ibk_qp_keys *qp, const void *bth,
		  const void *deth, uint16_t *index)
{
	struct ibk_qp_keys keys;
	enum ibk_rx_verdict v;
	uint16_t at;

	if (!bth || !ibk__qp_type_valid(qp->type))
		return IBK_RX_DROP_MALFORMED;
	v = ibk_rx_check_header(qp->type, bth);
	if (v != IBK_RX_ACCEPT || qp->type == IBK_QPT_SMI)
		return v;
	if (!deth && ibk__qp_is_datagram(qp->type))
		return IBK_RX_DROP_MALFORMED;
	if (ibk__table_readable(&t->hdr, c) != IBK_OK)
		return IBK_RX_DROP_PORT;
	if (qp->type == IBK_QPT_GSI)
		return ibk__gsi_verdict(t, c, bth, deth, index);
	at = qp->pkey_index;	/* read once: checked, then used */
	if (at >= t->hdr.capacity)
		return IBK_RX_DROP_PKEY_INDEX;
	/* field by field: a struct copy may become a memcpy() call */
	keys.type = qp->type;
	keys.pkey = ibk__load(&t->cells[c][at].pkey, relaxed);
	keys.pkey_index = at;
	keys.qkey = qp->qkey;
	*index = at;
	return ibk_rx_check(&keys, bth, deth);
}

/* Inside a read section of copy @c: true if it serves a table awaiting
 * its refill (ibk_port_serve_stale()). */
static inline bool ibk__serving_stale(const struct ibk__table *h, unsigned c)
{
	return (ibk__load(&h->status[c], relaxed) &
		(IBK__AWAITING_REFILL | IBK__BLOCKED)) == IBK__AWAITING_REFILL;
}

/* Counts verdict @v of one packet: its key violation, and, for a packet
 * accepted or dropped on a key while the table was served @stale, one
 * stale decision. */
static inline void ibk__port_count(struct ibk_port *port,
				   enum ibk_rx_verdict v, bool stale)
{
	if (v == IBK_RX_DROP_PKEY)
		ibk_counter16_inc(&port->pkey_violations);
	else if (v == IBK_RX_DROP_QKEY)
		ibk_counter16_inc(&port->qkey_violations);
	if (stale && (v == IBK_RX_ACCEPT || v == IBK_RX_DROP_PKEY ||
		      v == IBK_RX_DROP_QKEY))
		ibk_counter16_inc(&port->stale_decisions);
}

/* One read section for one packet: the verdict, counted, and the P_Key
 * index it was checked against in *@index. */
static inline enum ibk_rx_verdict
ibk__port_rx_one(struct ibk_port *port, const struct ibk_qp_keys *qp,
		 const void *bth, const void *deth, uint16_t *index)
{
	const struct ibk_pkey_table *t = &port->pkeys;
	enum ibk_rx_verdict v;
	uint32_t gen;
	bool stale;

	do {
		gen = ibk_latch_read_begin(&t->hdr.latch);
		stale = ibk__serving_stale(&t->hdr, ibk_latch_copy(gen));
		v = ibk__port_verdict(t, ibk_latch_copy(gen), qp, bth, deth,
				      index);
	} while (ibk_latch_read_retry(&t->hdr.latch, gen));
	ibk__port_count(port, v, stale);
	return v;
}

/**
 * ibk_port_rx() - The receive check for one packet to a QP on this port
 * @port: the port
 * @qp: the receiving QP's keys, type and P_Key index
 * @bth: the BTH, 12 bytes, any alignment
 * @deth: the DETH after it, 8 bytes, any alignment; read when the opcode
 *        carries one
 *
 * The checks run in a receiver's order (Linux soft-RoCE hdr_check(),
 * check_type_state(), check_keys()). IBK_RX_DROP_PKEY and IBK_RX_DROP_QKEY
 * are counted in the port's violation counters; no other verdict is. @port
 * and @qp must be valid.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: the first verdict that applies:
 *
 *  - IBK_RX_DROP_MALFORMED for a NULL @bth or a QP type outside the enum;
 *  - IBK_RX_DROP_TVER, IBK_RX_DROP_OPCODE: ibk_rx_check_header();
 *  - SMI (QP0): IBK_RX_ACCEPT in every port state; QP0 checks no key, and
 *    subnet management packets are what bring a port up (IBA 7.2);
 *  - IBK_RX_DROP_MALFORMED for a NULL @deth to a GSI or UD QP;
 *  - IBK_RX_DROP_PORT unless the port is ARMED, ACTIVE or ACTIVE_DEFER
 *    and the table is not awaiting a refill;
 *  - GSI (QP1): as ibk_port_rx_gsi();
 *  - RC, UC, UD: IBK_RX_DROP_PKEY_INDEX if qp->pkey_index is beyond the
 *    table (a configuration error), else ibk_rx_check() against the entry
 *    there (qp->pkey is not used): an empty entry matches no packet, a
 *    counted P_Key violation as in soft-RoCE and qib.
 */
static inline enum ibk_rx_verdict ibk_port_rx(struct ibk_port *port,
					      const struct ibk_qp_keys *qp,
					      const void *bth,
					      const void *deth)
{
	uint16_t index;

	return ibk__port_rx_one(port, qp, bth, deth, &index);
}

/**
 * ibk_port_rx_gsi() - QP1 (GSI) receive check
 * @port: the port
 * @bth: the BTH, 12 bytes, any alignment
 * @deth: the DETH, 8 bytes, any alignment
 * @pkey_index: receives the P_Key index the packet matched
 *
 * Else the verdicts of ibk_port_rx() for a GSI QP, counted the same way. @port
 * must be valid.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: IBK_RX_ACCEPT if the packet's P_Key matches some valid entry of the
 * port's table (a limited packet needs a full entry of its base, a full packet
 * any entry of it) and its Q_Key is IBK_QKEY_GSI, with the index of the first
 * matching entry in table order into *@pkey_index (may be NULL): what the work
 * completion's pkey_index carries.
 */
static inline enum ibk_rx_verdict ibk_port_rx_gsi(struct ibk_port *port,
						  const void *bth,
						  const void *deth,
						  uint16_t *pkey_index)
{
	struct ibk_qp_keys gsi;
	enum ibk_rx_verdict v;
	uint16_t index = 0;

	gsi.type = IBK_QPT_GSI;
	gsi.pkey = IBK_PKEY_INVALID;
	gsi.pkey_index = 0;
	gsi.qkey = IBK_QKEY_GSI;
	v = ibk__port_rx_one(port, &gsi, bth, deth, &index);
	if (v == IBK_RX_ACCEPT && pkey_index)
		*pkey_index = index;
	return v;
}

/*
 * The packet-to-QP checks of ibk__port_verdict() that a burst runs on
 * every packet, for an RC, UC or UD QP (@kind: its type minus IBK_QPT_RC)
 * whose table entry @entry is a valid key. BTH bytes 0-3 read as a
 * big-endian word w pass iff ((w ^ want) & mask) == 0: bits 16-31 take
 * the header (ibk_rx_check_header(): TVer, the opcode's transport, for UD
 * its SEND only), bits 0-15 the P_Key (IBA 10.9: the base, and for a
 * limited entry the packet's full bit). The DETH's Q_Key q passes iff
 * ((q ^ the QP's) & qkey_mask) == 0, a mask that is zero but for UD. An
 * entry of base 0 must not get here: it would pass a packet of base 0.
 */
struct ibk__keyed_filter {
	uint32_t want;
	uint32_t mask;
	uint32_t qkey_mask;
	uint32_t pad;		/* 16 bytes: one shift indexes the table */
};

static inline struct ibk__keyed_filter
ibk__keyed_filter_make(unsigned kind, ibk_pkey_t entry)
{
	/* per kind (RC, UC, UD): the header half, the full bit wanted and
	 * the whole P_Key taken; then the entry's base wanted, and a full
	 * entry's full bit left out */
	static const struct ibk__keyed_filter head[3] = {
		{ (uint32_t)IBK_TRANSPORT_RC << 24 | IBK_PKEY_FULL_MEMBER,
		  0xe00fffffu, 0, 0 },
		{ (uint32_t)IBK_TRANSPORT_UC << 24 | IBK_PKEY_FULL_MEMBER,
		  0xe00fffffu, 0, 0 },
		{ (uint32_t)IBK_OPCODE_UD_SEND_ONLY << 24 | IBK_PKEY_FULL_MEMBER,
		  0xfe0fffffu, 0xffffffffu, 0 },
	};
	struct ibk__keyed_filter f = head[kind];

	f.want ^= entry;
	f.mask ^= entry & IBK_PKEY_FULL_MEMBER;
	return f;
}

/*
 * The verdict of a packet at @bth to an RC, UC or UD QP whose type minus
 * IBK_QPT_RC is @kind, whose Q_Key is @qkey and whose entry @entry (read
 * inside a read section of a readable table) is a valid key, told apart
 * as far as a burst needs it, with no branch: a burst to many QPs mixes types,
 * opcodes and drops at random, which a branch mispredicts.
 * IBK_RX_ACCEPT, IBK_RX_DROP_QKEY (UD only), or IBK_RX_DROP_PKEY for a
 * packet that fails the P_Key or the header (ibk__keyed_filter_make());
 * *@heads gets the header bits that failed ORed in, and the caller
 * re-checks those packets, a rare case: a QP is sent what its type
 * receives. The Q_Key at @bth + IBK_BTH_LEN is read for every packet (a
 * burst's headers have IBK_DETH_LEN bytes after the BTH) and counts for
 * UD only.
 */
static inline unsigned ibk__port_verdict_keyed(unsigned kind,
					       ibk_pkey_t entry,
					       ibk_qkey_t qkey,
					       const uint8_t *bth,
					       uint32_t *heads)
{
	struct ibk__keyed_filter f = ibk__keyed_filter_make(kind, entry);
	uint32_t miss = (ibk__load_be32(bth) ^ f.want) & f.mask;
	uint32_t qkey_miss = (ibk__load_be32(bth + IBK_BTH_LEN) ^ qkey) &
			     f.qkey_mask;
	/* flags as 0 or 1, joined arithmetically: || and ?: would branch */
	unsigned first_bad = miss != 0;
	unsigned any_bad = (miss | qkey_miss) != 0;

	*heads |= miss;
	/* 0 accept; 1 P_Key or header (before the Q_Key); 2 Q_Key */
	return any_bad + (any_bad ^ first_bad);
}

/* A verdict byte no enum ibk_rx_verdict takes: "not decided yet". */
#define IBK__RX_UNDECIDED 0xffu

/*
 * Inside a read section of a readable P_Key copy whose cells are @cells,
 * of @capacity entries: for packet i of a burst, to qps[i],
 * ibk__port_verdict_keyed() when the QP is an RC, UC or UD QP whose P_Key
 * index holds a valid key, else IBK__RX_UNDECIDED (QP0, QP1, a bad QP or
 * index, an empty entry): a branch that goes the same way for a QP every
 * time. The QP's fields are read before the entry: no compiler reloads
 * them across an atomic load. True if some packet needs
 * ibk__port_verdict(): undecided, or IBK_RX_DROP_PKEY in a burst where
 * some header failed. Scalar on every build: an AVX2 pass, 16 packets a
 * step, was 7 % faster, below the bar a vector path must clear (bench/README.md,
 * "variant vs the simpler path").
 */
static inline bool ibk__port_burst_keyed(const struct ibk_pkey_cell *cells,
					 uint32_t capacity,
					 const struct ibk_qp_keys *const *qps,
					 const void *const *hdrs, size_t n,
					 uint8_t *verdicts)
{
	uint32_t heads = 0;
	size_t i;

#pragma GCC unroll 4
	for (i = 0; i < n; i++) {
		const struct ibk_qp_keys *qp = qps[i];
		const uint8_t *bth = (const uint8_t *)hdrs[i];
		enum ibk_qp_type type = qp->type;
		unsigned at = qp->pkey_index;
		ibk_qkey_t qkey = qp->qkey;
		unsigned v = IBK__RX_UNDECIDED;
		ibk_pkey_t entry;

		if (type >= IBK_QPT_RC && type <= IBK_QPT_UD && at < capacity) {
			entry = ibk__load(&cells[at].pkey, relaxed);
			if (ibk_pkey_is_valid(entry))
				v = ibk__port_verdict_keyed(
					(unsigned)type - IBK_QPT_RC, entry,
					qkey, bth, &heads);
		}
		if (v == IBK__RX_UNDECIDED)
			heads = ~0u;	/* re-check the burst */
		verdicts[i] = (uint8_t)v;
	}
	return heads >> 16 != 0;
}

/*
 * Inside a read section of P_Key copy @c: the verdicts of a burst, packet
 * i to qps[i], with the P_Key index each was checked against into
 * @index[i] when @index is not NULL: the QP's own, which QP1 overwrites
 * with its match. On a readable table ibk__port_burst_keyed() decides
 * what it can, ibk__port_verdict() the rest.
 */
static inline void ibk__port_burst(const struct ibk_pkey_table *t, unsigned c,
				   const struct ibk_qp_keys *const *qps,
				   const void *const *hdrs, size_t n,
				   uint8_t *verdicts, uint16_t *index)
{
	/* an unreadable table as one of no entries: nothing decided */
	uint32_t keyed = ibk__table_readable(&t->hdr, c) == IBK_OK ?
			 t->hdr.capacity : 0;
	bool recheck;
	uint16_t unused;
	size_t i;

	for (i = 0; index && i < n; i++)
		index[i] = qps[i]->pkey_index;
	recheck = ibk__port_burst_keyed(t->cells[c], keyed, qps, hdrs, n,
					verdicts);
	for (i = 0; recheck && i < n; i++) {
		const uint8_t *bth = (const uint8_t *)hdrs[i];

		if (verdicts[i] != IBK__RX_UNDECIDED &&
		    verdicts[i] != IBK_RX_DROP_PKEY)
			continue;
		verdicts[i] = (uint8_t)ibk__port_verdict(t, c, qps[i], bth,
				bth + IBK_BTH_LEN, index ? &index[i] : &unused);
	}
}

/* ibk__port_burst() for a burst of @n packets all to @qp, in chunks of
 * 16: it takes one QP per packet. */
static inline void ibk__port_burst_same(const struct ibk_pkey_table *t,
					unsigned c,
					const struct ibk_qp_keys *qp,
					const void *const *hdrs, size_t n,
					uint8_t *verdicts)
{
	const struct ibk_qp_keys *same[16];
	size_t i;

	for (i = 0; i < 16; i++)
		same[i] = qp;
	for (i = 0; i < n; i += 16)
		ibk__port_burst(t, c, same, hdrs + i,
				n - i < 16 ? n - i : 16, verdicts + i, NULL);
}

static inline uint32_t ibk__clamp16(size_t n)
{
	return n < IBK_COUNTER16_MAX ? (uint32_t)n : IBK_COUNTER16_MAX;
}

/*
 * Counts a burst's key violations with one add per counter; returns the
 * number accepted. The sums are byte-sized over whole chunks of 16 with a
 * fixed trip count, as in ibk__count_zero(), so that gcc's -O2 and clang
 * vectorise them without widening every byte to a size_t.
 */
static inline size_t ibk__port_count_burst(struct ibk_port *port,
					   const uint8_t *verdicts, size_t n,
					   bool stale)
{
	size_t whole = n & ~(size_t)15;
	size_t i = 0, j, accepted = 0, pkey_drops = 0, qkey_drops = 0;

	for (; i < whole; i += 16) {
		uint8_t a = 0, p = 0, q = 0;

		for (j = 0; j < 16; j++) {
			a = (uint8_t)(a + (verdicts[i + j] == IBK_RX_ACCEPT));
			p = (uint8_t)(p + (verdicts[i + j] == IBK_RX_DROP_PKEY));
			q = (uint8_t)(q + (verdicts[i + j] == IBK_RX_DROP_QKEY));
		}
		accepted += a;
		pkey_drops += p;
		qkey_drops += q;
	}
	for (; i < n; i++) {
		accepted += verdicts[i] == IBK_RX_ACCEPT;
		pkey_drops += verdicts[i] == IBK_RX_DROP_PKEY;
		qkey_drops += verdicts[i] == IBK_RX_DROP_QKEY;
	}
	if (pkey_drops)
		ibk_counter16_add(&port->pkey_violations,
				  ibk__clamp16(pkey_drops));
	if (qkey_drops)
		ibk_counter16_add(&port->qkey_violations,
				  ibk__clamp16(qkey_drops));
	if (stale)
		ibk_counter16_add(&port->stale_decisions,
				  ibk__clamp16(accepted + pkey_drops +
					       qkey_drops));
	return accepted;
}

/**
 * ibk_port_rx_burst() - ibk_port_rx() for a burst of packets to one QP
 * @port: the port
 * @qp: the receiving QP's keys and type
 * @hdrs: @n packets' headers: each a pointer to its BTH, followed by the DETH
 * where the QP is UD
 * @n: how many
 * @verdicts: receives @n verdicts, one byte each
 *
 * ibk_port_rx() for a burst of @n packets to one QP: hdrs[i] points at a BTH
 * and the IBK_DETH_LEN bytes after it (the DETH when the opcode carries one);
 * verdicts[i] gets the enum ibk_rx_verdict.
 *
 * The table is read in one read section for the whole burst, and each counter
 * takes at most one add. A burst to a UD QP whose entry can be read is checked
 * by the branch-free ibk_rx_ud_burst(); any other, as ibk_port_rx_mixed()
 * checks it. Every pointer, hdrs[i] included, must be valid.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: the number accepted.
 */
static inline size_t ibk_port_rx_burst(struct ibk_port *port,
				       const struct ibk_qp_keys *qp,
				       const void *const *hdrs, size_t n,
				       uint8_t *verdicts)
{
	const struct ibk_pkey_table *t = &port->pkeys;
	uint32_t gen;
	unsigned c;
	bool stale;

	do {
		gen = ibk_latch_read_begin(&t->hdr.latch);
		c = ibk_latch_copy(gen);
		stale = ibk__serving_stale(&t->hdr, c);
		if (qp->type == IBK_QPT_UD && qp->pkey_index < t->hdr.capacity &&
		    ibk__table_readable(&t->hdr, c) == IBK_OK)
			ibk_rx_ud_burst(ibk__load(&t->cells[c][qp->pkey_index].pkey,
						  relaxed),
					qp->qkey, hdrs, n, verdicts);
		else
			ibk__port_burst_same(t, c, qp, hdrs, n, verdicts);
	} while (ibk_latch_read_retry(&t->hdr.latch, gen));
	return ibk__port_count_burst(port, verdicts, n, stale);
}

/**
 * ibk_port_rx_mixed() - ibk_port_rx() for a burst of packets to many QPs
 * @port: the port
 * @qps: @n pointers, packet i's receiving QP at qps[i]
 * @hdrs: @n pointers, each to a BTH and the IBK_DETH_LEN bytes after it, as
 *        for ibk_port_rx_burst()
 * @n: how many packets
 * @verdicts: receives @n verdicts, one byte each
 * @pkey_index: receives @n P_Key indices, or NULL: for an accepted packet
 *              the index it matched, the QP's own or for QP1 the first
 *              matching entry; a dropped packet gets its QP's own, but for a
 *              QP1 packet dropped on its Q_Key, which gets the matching
 *              entry's
 *
 * As a receive queue shared by a port's QPs delivers them. One read section
 * of the table for the whole burst, at most one add per counter. Every
 * pointer but @pkey_index, hdrs[i] and qps[i] included, must be valid.
 *
 * Per packet, an RC, UC or UD QP whose entry holds a key takes one masked
 * compare of the BTH's first word and one of the Q_Key, no branch on the
 * packet (ibk__port_burst_keyed());
 * QP0, QP1 and the rare packet whose header does not fit its QP are then
 * checked one by one.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: the number accepted.
 */
static inline size_t ibk_port_rx_mixed(struct ibk_port *port,
				       const struct ibk_qp_keys *const *qps,
				       const void *const *hdrs, size_t n,
				       uint8_t *verdicts, uint16_t *pkey_index)
{
	const struct ibk_pkey_table *t = &port->pkeys;
	uint32_t gen;
	bool stale;

	do {
		gen = ibk_latch_read_begin(&t->hdr.latch);
		stale = ibk__serving_stale(&t->hdr, ibk_latch_copy(gen));
		ibk__port_burst(t, ibk_latch_copy(gen), qps, hdrs, n,
				verdicts, pkey_index);
	} while (ibk_latch_read_retry(&t->hdr.latch, gen));
	return ibk__port_count_burst(port, verdicts, n, stale);
}

/*
 * True if the payload of the UD packet *@h, @len bytes from its LRH
 * through its ICRC (what the LRH's PktLen counts), is one MAD: what is
 * left after the headers, the BTH's pad and the ICRC is IBK_MAD_LEN bytes
 * (qib_ud_rcv()'s tlen; the immediate data of a SEND with immediate is
 * payload here).
 */
static inline bool ibk__ud_payload_is_mad(const struct ibk_pkt_headers *h,
					  size_t len)
{
	size_t used = (size_t)(h->deth - h->lrh) + IBK_DETH_LEN +
		      ibk_bth_padcnt(h->bth) + IBK_ICRC_LEN;

	return len == used + IBK_MAD_LEN;
}

/* True if the LRH names the permissive LID as source or destination. */
static inline bool ibk__lrh_permissive(const uint8_t *lrh)
{
	return ibk_lrh_dlid(lrh) == IBK_LID_PERMISSIVE ||
	       ibk_lrh_slid(lrh) == IBK_LID_PERMISSIVE;
}

/*
 * The rules a UD packet meets before its keys, by qib_ud_rcv(): to QP0, a
 * MAD of exactly 256 bytes on VL15 (IBA 13.5.3.1), and the permissive LID
 * only on a directed-route SMP (class 0x81); to any other QP, never the
 * permissive LID (IBA 9.6.1.4.1, 9.6.1.5.1). IBK_RX_ACCEPT if they hold.
 */
static inline enum ibk_rx_verdict
ibk__mad_rx_before_keys(enum ibk_qp_type type, const struct ibk_pkt_headers *h,
			size_t len)
{
	if (type != IBK_QPT_SMI)
		return ibk__lrh_permissive(h->lrh) ? IBK_RX_DROP_PERMISSIVE :
		       IBK_RX_ACCEPT;
	if (!ibk__ud_payload_is_mad(h, len))
		return IBK_RX_DROP_MAD_LENGTH;
	if (ibk_lrh_vl(h->lrh) != IBK_VL_MANAGEMENT)
		return IBK_RX_DROP_MAD_VL;
	/* the payload is the MAD: its class is byte 1 */
	return ibk__lrh_permissive(h->lrh) &&
	       h->deth[IBK_DETH_LEN + 1] != IBK_MGMT_CLASS_SUBN_DR ?
	       IBK_RX_DROP_PERMISSIVE : IBK_RX_ACCEPT;
}

/*
 * The rules qib_ud_rcv() applies after the keys: to QP1, a MAD of exactly
 * 256 bytes never on VL15 (IBA 13.5.3.1); to QP0 and QP1, a SEND without
 * immediate data (a MAD has none). IBK_RX_ACCEPT if they hold.
 */
static inline enum ibk_rx_verdict
ibk__mad_rx_after_keys(enum ibk_qp_type type, const struct ibk_pkt_headers *h,
		       size_t len)
{
	if (type == IBK_QPT_GSI) {
		if (!ibk__ud_payload_is_mad(h, len))
			return IBK_RX_DROP_MAD_LENGTH;
		if (ibk_lrh_vl(h->lrh) == IBK_VL_MANAGEMENT)
			return IBK_RX_DROP_MAD_VL;
	}
	return (type == IBK_QPT_SMI || type == IBK_QPT_GSI) &&
	       ibk_bth_opcode(h->bth) == IBK_OPCODE_UD_SEND_ONLY_IMM ?
	       IBK_RX_DROP_MAD_IMM : IBK_RX_ACCEPT;
}

/* True for a verdict of the management datagram rules: the enum's last
 * four, from IBK_RX_DROP_MAD_VL to IBK_RX_DROP_MAD_IMM. */
static inline bool ibk__rx_verdict_is_mad_rule(enum ibk_rx_verdict v)
{
	return v >= IBK_RX_DROP_MAD_VL;
}

/**
 * ibk_port_rx_packet() - ibk_port_rx() for a whole packet, with the rules
 * only the LRH and the length allow
 * @port: the port
 * @qp: the receiving QP's keys, type and P_Key index
 * @pkt: the packet, from its LRH through its ICRC
 * @len: @pkt's length in bytes (the LRH's PktLen x 4)
 * @trap: receives the details of trap 257 or 258 on IBK_RX_DROP_PKEY or
 *        IBK_RX_DROP_QKEY (ibk_trap_key_from_headers()); may be NULL
 *
 * The four management drops are counted in the port's mad_drops, where qib
 * counts them (its n_pkt_drops, which no PortInfo field reports);
 * IBK_RX_DROP_PKEY and IBK_RX_DROP_QKEY as ibk_port_rx() counts them.
 * Whether and when to send a trap is the caller's (ibk_trap_rate_ok(), the
 * port ACTIVE). @port and @qp must be valid.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: the first verdict that applies, in qib_ud_rcv()'s order:
 *
 *  - IBK_RX_DROP_MALFORMED if ibk_pkt_locate() cannot find its headers;
 *  - to a UD, SMI or GSI QP, before the keys: QP0 takes only a MAD of
 *    exactly 256 bytes (IBK_RX_DROP_MAD_LENGTH) on VL15
 *    (IBK_RX_DROP_MAD_VL), and the permissive LID (0xffff) as DLID or
 *    SLID only on a directed-route SMP; any other QP never takes it
 *    (IBK_RX_DROP_PERMISSIVE; IBA 9.6.1.4.1, 9.6.1.5.1);
 *  - the verdict of ibk_port_rx() for its BTH and DETH;
 *  - after the keys: QP1 takes only a MAD of exactly 256 bytes, never on
 *    VL15 (IBA 13.5.3.1); QP0 and QP1 no SEND with immediate
 *    (IBK_RX_DROP_MAD_IMM).
 */
static inline enum ibk_rx_verdict ibk_port_rx_packet(struct ibk_port *port,
						     const struct ibk_qp_keys *qp,
						     const void *pkt,
						     size_t len,
						     struct ibk_trap_key *trap)
{
	struct ibk_pkt_headers h;
	enum ibk_rx_verdict v = IBK_RX_ACCEPT;

	if (ibk_pkt_locate(pkt, len, &h) != IBK_OK)
		return IBK_RX_DROP_MALFORMED;
	if (h.deth && ibk__qp_is_datagram(qp->type))
		v = ibk__mad_rx_before_keys(qp->type, &h, len);
	if (v == IBK_RX_ACCEPT)
		v = ibk_port_rx(port, qp, h.bth, h.deth);
	if (v == IBK_RX_ACCEPT && h.deth)
		v = ibk__mad_rx_after_keys(qp->type, &h, len);
	if (ibk__rx_verdict_is_mad_rule(v))
		ibk_counter16_inc(&port->mad_drops);
	if (trap && (v == IBK_RX_DROP_PKEY || v == IBK_RX_DROP_QKEY))
		ibk_trap_key_from_headers(&h, v == IBK_RX_DROP_PKEY ?
					  IBK_TRAP_BAD_PKEY :
					  IBK_TRAP_BAD_QKEY, trap);
	return v;
}

/* ------------------------------------------------------------------------
 * Memory region and window table
 *
 * The responder side of memory keys: the attributes of every region and
 * window of a device (or a protection domain's share of one), indexed by
 * the 24-bit index of their keys, as ib_keys.h's "Memory keys" section
 * describes them. A lookup reads the cell at the key's index, O(1), and
 * then compares the whole 32-bit key, as rxe's lookup_mr() does: an R_Key
 * whose key byte is from before a re-registration or a re-bind misses.
 *
 * The table sits behind a latch like the P_Key and GID tables: each cell
 * twice, one copy per latch side. Readers (lookups, references, the
 * responder check of one request or a burst of them) never wait for a
 * writer; a burst is checked in one read section, so all of it sees one
 * published state. Writers (register, re-register, fast register, bind,
 * invalidate, deregister) take the latch's lock word, read the objects
 * they touch, apply the rule of ib_keys.h and, only if it allows the
 * operation, publish the change of every object it touches (a bind moves
 * a window and up to two regions' window counts) as one generation. A
 * refused operation writes nothing and moves no generation.
 *
 * Generations: the latch count, +2 per published operation. A reference
 * {generation, attributes} is fresh while the count still equals its
 * generation: one load, one compare. Any change to the table makes every
 * reference stale, not only references to the object that changed. After
 * a device reset, ibk_mr_table_reset() empties the table as one more
 * generation; initialising it again would restart the count.
 *
 * Memory: the caller's, IBK_MR_CELLS(C) 64-byte cells for a table of
 * capacity C (1 to 2^24, the key's index space): 128 bytes per object.
 * Keys whose index is C or more name no object. A cell holds, besides
 * the attributes, what the responder check compares, derived when it is
 * written: a granted check reads one cell (one cache line when the
 * storage is 64-byte aligned), a window's included, whose reach is cut
 * to its region's bytes when the window is bound.
 *
 * The responder check takes the QP a request arrived on as struct
 * ibk_mem_qp, as the stack holds it: what the QP allows is worked out in
 * each read section (a QP prepared once was 6 % faster, below the bar a
 * variant must clear: bench/README.md).
 *
 *	static struct ibk_mr_cell cells[IBK_MR_CELLS(4096)];
 *	static struct ibk_mr_table mrs;
 *
 *	ibk_mr_table_init(&mrs, cells, 4096);
 *	ibk_mr_table_register(&mrs, &mr);	// 0, or the rule refusing
 *	n_ok = ibk_mr_table_check_burst(&mrs, &qp, hdrs, n, verdicts);
 *
 * API:
 *	IBK_MR_CELLS(capacity)
 *	IBK_MR_TABLE_STORAGE(capacity)
 *	IBK_MR_TABLE_STORAGE_INIT(s)
 *	ibk_mr_table_init(t, cells, capacity)
 *	ibk_mr_table_reset(t)
 *	ibk_mr_table_register(t, attr)
 *	ibk_mr_table_rereg(t, key, next)
 *	ibk_mr_table_fast_reg(t, qp_pd, next)
 *	ibk_mr_table_bind(t, wr)
 *	ibk_mr_table_invalidate(t, key)
 *	ibk_mr_table_invalidate_remote(t, key, qp)
 *	ibk_mr_table_deregister(t, key)
 *	ibk_mr_table_ref_get(t, key, ref)
 *	ibk_mr_table_get(t, key, attr)
 *	ibk_mr_table_ref_fresh(t, ref)
 *	ibk_mr_table_check(t, qp, bth)
 *	ibk_mr_table_check_burst(t, qp, hdrs, n, verdicts)
 * ------------------------------------------------------------------------ */

#define IBK_MR_MAX_CAPACITY	(IBK_RKEY_INDEX_MAX + 1u)

/**
 * IBK_MR_CELLS() - The cells of an MR table of @capacity objects
 * @capacity: how many objects the table holds
 *
 * Return: the count, one per object and copy; a constant expression if
 * @capacity is.
 */
#define IBK_MR_CELLS(capacity)	(2u * (capacity))

/*
 * A cell, 64 bytes: six 32-bit words, then five 64-bit values. What the
 * responder check reads comes first in each, derived from the attributes
 * whenever the cell is written; then the attributes themselves (struct
 * ibk_mem_attr, split), which lookups, references and writers read.
 * Storage aligned to 64 bytes puts each cell in one cache line.
 */
enum {
	IBK__MR_KEY_MASK,	/* the bits of IBK__MR_KEY a request must
				 * match, sign-extended to 64: all for a type
				 * 2 window, else all but the QPN's */
	IBK__MR_PEER,		/* a type 2 window's QPN; a region's count
				 * of windows bound to it (each 0 for the
				 * other kinds, as the memory key rules keep
				 * them) */
	IBK__MR_DENY,		/* IBK__MR_DENY_*: what the object refuses */
	IBK__MR_META,		/* state | kind << 4 | MR index << 8 */
	IBK__MR_ACCESS, IBK__MR_RKEY, IBK__MR_WORDS
};

enum {
	IBK__MR_KEY,		/* PD << 32 | key byte << 24 | a type 2
				 * window's QPN: the three compared at once
				 * (ibk__mr_key_of()) */
	IBK__MR_REACH,		/* the bytes a request may reach: [reach, */
	IBK__MR_SPAN,		/* reach + span), see ibk__mr_reach_of() */
	IBK__MR_ADDR, IBK__MR_LENGTH, IBK__MR_WIDES
};

/*
 * A 64-bit value of a cell: one atomic where 64-bit atomics are lock-free
 * on a 64-bit host (a relaxed load is one plain load), else two 32-bit
 * halves, high first, for every other port (they promise 32 bits only).
 * A read section may see the halves of two writes: the latch retries it.
 */
#if defined(IBK__STD_ATOMICS) && defined(__SIZEOF_POINTER__) && \
    __SIZEOF_POINTER__ == 8 && ATOMIC_LLONG_LOCK_FREE == 2
#define IBK__MR_WIDE_ATOMIC 1
struct ibk__mr_wide {
	IBK__ATOMIC(uint64_t) v;
};
#else
struct ibk__mr_wide {
	IBK__ATOMIC(uint32_t) half[2];
};
#endif

/*
 * A refused request's refusals, one bit each, the check that rxe makes
 * first highest (ibk__mem_object_verdict()'s order), so that the highest
 * bit set is the verdict; IBK__MR_TO_RULES, the highest, hands the
 * request to the rules. The AVX2 burst computes them in its lanes and
 * looks the verdict up (ibk__mr_refusal_verdict()); ibk__mr_check_one()
 * tests the same checks in the same order. Those an object has whatever
 * the request, the IBK__MR_DENY_* bits, are stored in IBK__MR_DENY when
 * the cell is written, laid out for one AND with the class of a
 * request's opcode (ibk__mem_op6_class()): besides those bits, which the
 * AND drops, IBK__MEM_KEYED when any of them is set, which every keyed
 * opcode has; the remote access the object does not grant where
 * IBK_ACCESS_REMOTE_* have it; and IBK__MEM_OTHER, which every other
 * opcode has. No bit shares a place with IBK__MEM_ATOMIC, IBK__MEM_FLUSH
 * or IBK__MEM_CONT.
 */
#define IBK__MR_NO_ALIGN	0x00100u	/* atomic not 8-byte aligned */
#define IBK__MR_NO_RANGE	0x00200u	/* outside the reach */
#define IBK__MR_DENY_STATE	0x00400u	/* not IBK_MEM_VALID */
#define IBK__MR_NO_ACCESS	0x00800u	/* access the object lacks */
#define IBK__MR_DENY_UNBOUND	0x01000u	/* window of length 0 */
#define IBK__MR_NO_WINDOW_QP	0x02000u	/* type 2 window, other QP */
#define IBK__MR_NO_PD		0x04000u	/* the QP's PD is not its */
#define IBK__MR_NO_KEY		0x08000u	/* R_Key not the object's */
#define IBK__MR_DENY_GONE	IBK__MR_NO_KEY	/* no object (INVALID) */
#define IBK__MR_TO_RULES	0x10000u	/* length outside [1, 2^31] */
#define IBK__MR_DENY_RULES	IBK__MR_TO_RULES /* what the rules decide:
						  * a window on a region
						  * that may change, a
						  * type 2 window's QPN
						  * past 24 bits */

/* The QPNs the fast path compares, the 24 bits of a BTH's DestQP; a QP or
 * a type 2 window with another number is left to the rules. */
#define IBK__MR_QPN_MAX		0xffffffu

/*
 * IBK__MR_KEY of an object, or what a request to a QP must match of it:
 * the PD, the R_Key's key byte (its index is the cell's), and a type 2
 * window's QPN (0 for the other kinds, whose IBK__MR_KEY_MASK leaves the
 * QP's out). Each has its own bits, so that ibk__mr_refused() can tell
 * which of them differ.
 */
static inline uint64_t ibk__mr_key_of(uint32_t pd, uint32_t rkey,
				      uint32_t qpn)
{
	return (uint64_t)pd << 32 | (rkey & 0xffu) << 24 |
	       (qpn & IBK__MR_QPN_MAX);
}

/**
 * struct ibk_mr_cell - One object of an MR table copy; a cleared cell is no
 * object
 *
 * One object of a table copy; a cleared cell is no object.
 */
struct ibk_mr_cell {
	/* private: */
	IBK__ATOMIC(uint32_t) word[IBK__MR_WORDS];
	struct ibk__mr_wide wide[IBK__MR_WIDES];
};

IBK__STATIC_ASSERT(sizeof(struct ibk_mr_cell) == 64,
		   "table storage must have the same layout in C and C++");

/**
 * struct ibk_mr_table - A memory region and window table, on caller storage
 * (ibk_mr_table_init())
 */
struct ibk_mr_table {
	/* private: */
	struct ibk_latch latch;
	uint32_t capacity;
	struct ibk_mr_cell *cells[2];
};

/**
 * struct ibk_mr_ref - An object's attributes as read in one generation: valid
 * while ibk_mr_table_ref_fresh() says so
 * @generation: the generation the attributes were read in
 * @attr: the object's attributes
 */
struct ibk_mr_ref {
	uint32_t generation;
	struct ibk_mem_attr attr;
};

/* Inside a read section: the 64-bit value @which (IBK__MR_REACH ...). */
static inline uint64_t ibk__mr_load64(const struct ibk_mr_cell *c,
				      unsigned which)
{
#ifdef IBK__MR_WIDE_ATOMIC
	return ibk__load(&c->wide[which].v, relaxed);
#else
	return (uint64_t)ibk__load(&c->wide[which].half[0], relaxed) << 32 |
	       ibk__load(&c->wide[which].half[1], relaxed);
#endif
}

/* Inside a read section: IBK__MR_KEY_MASK of @c, sign-extended: its
 * high half all ones, as each of the two masks ibk__mr_cell_store()
 * writes has its top bit set (the PD, which every object compares). */
static inline uint64_t ibk__mr_key_mask(const struct ibk_mr_cell *c)
{
	return (uint64_t)0xffffffffu << 32 |
	       ibk__load(&c->word[IBK__MR_KEY_MASK], relaxed);
}

/* Writer side: @v into the 64-bit value @which. */
static inline void ibk__mr_store64(struct ibk_mr_cell *c, unsigned which,
				   uint64_t v)
{
#ifdef IBK__MR_WIDE_ATOMIC
	ibk__store(&c->wide[which].v, v, relaxed);
#else
	ibk__store(&c->wide[which].half[0], (uint32_t)(v >> 32), relaxed);
	ibk__store(&c->wide[which].half[1], (uint32_t)(v & ~0u), relaxed);
#endif
}

/* Inside a read section, or by the writer: the attributes in @c. */
static inline void ibk__mr_cell_load(const struct ibk_mr_cell *c,
				     struct ibk_mem_attr *a)
{
	uint32_t meta = ibk__load(&c->word[IBK__MR_META], relaxed);
	uint32_t peer = ibk__load(&c->word[IBK__MR_PEER], relaxed);

	a->rkey = ibk__load(&c->word[IBK__MR_RKEY], relaxed);
	a->pd = (uint32_t)(ibk__mr_load64(c, IBK__MR_KEY) >> 32);
	a->access = ibk__load(&c->word[IBK__MR_ACCESS], relaxed);
	a->addr = ibk__mr_load64(c, IBK__MR_ADDR);
	a->length = ibk__mr_load64(c, IBK__MR_LENGTH);
	a->state = (uint8_t)(meta & 0xfu);
	a->kind = (uint8_t)(meta >> 4 & 0xfu);
	a->mr_index = meta >> 8;
	a->qpn = ibk__mem_is_window(a) ? peer : 0;
	/* a region's windows are at other indices of the table, each bound
	 * to one region: fewer than 2^24, so the mask keeps the count */
	a->windows = ibk__mem_is_window(a) ? 0 : peer & IBK_RKEY_INDEX_MAX;
}

/*
 * The bytes a request may reach: [lo, lo + span), lo + span at most 2^64
 * (exactly), span 0 when nothing can be reached. A request of length
 * len >= 1 at va lies inside iff va - lo + len, in 64-bit arithmetic,
 * neither carries nor exceeds span (ibk__mr_outside()).
 */
struct ibk__mr_reach {
	uint64_t lo;
	uint64_t span;
};

/* [base, base + length), or nothing if it ends past 2^64: what
 * ibk_mem_range_ok() lets a request reach in such a region. */
static inline struct ibk__mr_reach ibk__mr_reach_make(uint64_t base,
						      uint64_t length)
{
	struct ibk__mr_reach r;

	r.lo = base;
	r.span = ibk__range_past_2_64(base, length) ? 0 : length;
	return r;
}

/* @x - @y, or 0 where @y is above @x: the difference wraps on purpose
 * there, and its borrow (a difference above @x) says so. */
static inline uint64_t ibk__mr_less(uint64_t x, uint64_t y)
{
	return x - y > x ? 0 : x - y;	/* wraps on purpose: see above */
}

/* The bytes in both @a and @b, exactly: the higher start, each span cut
 * by how far its start lies below it, the nearer end kept. */
static inline struct ibk__mr_reach ibk__mr_reach_meet(struct ibk__mr_reach a,
						      struct ibk__mr_reach b)
{
	struct ibk__mr_reach r;

	r.lo = a.lo > b.lo ? a.lo : b.lo;
	a.span = ibk__mr_less(a.span, ibk__mr_less(b.lo, a.lo));
	b.span = ibk__mr_less(b.span, ibk__mr_less(a.lo, b.lo));
	r.span = a.span < b.span ? a.span : b.span;
	return r;
}

/*
 * Writer side: what a request may reach through object @a: its own range
 * (from 0 for a zero-based window, as ibk__mem_object_verdict() reads it) and,
 * for a bound window whose region @mr cannot change (ibk__mr_frozen()),
 * only the part whose translation lies in @mr, as ibk__mw_in_mr() checks
 * it: the window's offsets shifted by its start when zero-based, the
 * region's bytes below 0 after the shift cut. For a request of length at
 * least 1, inside this reach is exactly inside both.
 */
static inline struct ibk__mr_reach
ibk__mr_reach_of(const struct ibk_mem_attr *a, const struct ibk_mem_attr *mr)
{
	bool zero_based = ibk__mem_is_window(a) &&
			  (a->access & IBK_ACCESS_ZERO_BASED) != 0;
	struct ibk__mr_reach own = ibk__mr_reach_make(zero_based ? 0 : a->addr,
						      a->length);
	struct ibk__mr_reach in_mr;
	uint64_t shift = zero_based ? a->addr : 0;

	if (!mr)
		return own;
	in_mr = ibk__mr_reach_make(mr->addr, mr->length);
	in_mr.span = ibk__mr_less(in_mr.span, ibk__mr_less(shift, in_mr.lo));
	in_mr.lo = ibk__mr_less(in_mr.lo, shift);
	return ibk__mr_reach_meet(own, in_mr);
}

/*
 * Writer side: true if region @mr, the one bound window @mw names, keeps
 * its bytes while @mw stays bound: a live, VALID region with windows
 * counted. ibk_mr_rereg(), ibk_mem_invalidate() and ibk_mem_deregister()
 * refuse a region with windows; ibk_mr_fast_reg() wants it FREE. A
 * window bound to a FREE fast-register region is checked against the
 * region as read with the request instead.
 */
static inline bool ibk__mr_frozen(const struct ibk_mem_attr *mw,
				  const struct ibk_mem_attr *mr)
{
	return mr && mw->length != 0 && !ibk__mem_is_window(mr) &&
	       mr->state == IBK_MEM_VALID && mr->windows != 0;
}

/* Writer side: IBK__MR_DENY of object @a, bound to region @mr if it is a
 * window (NULL if there is none). */
static inline uint32_t ibk__mr_deny(const struct ibk_mem_attr *a,
				    const struct ibk_mem_attr *mr)
{
	bool window = ibk__mem_is_window(a);
	uint32_t deny =
		(a->state == IBK_MEM_INVALID ? IBK__MR_DENY_GONE : 0u) |
		(window && a->length == 0 ? IBK__MR_DENY_UNBOUND : 0u) |
		(a->state != IBK_MEM_VALID ? IBK__MR_DENY_STATE : 0u) |
		(window && a->length != 0 && !ibk__mr_frozen(a, mr) ?
		 IBK__MR_DENY_RULES : 0u) |
		(a->kind == IBK_MEM_MW2 && a->qpn > IBK__MR_QPN_MAX ?
		 IBK__MR_DENY_RULES : 0u);

	return deny | (deny ? IBK__MEM_KEYED : 0u) |
	       (~a->access & IBK_ACCESS_REMOTE) | IBK__MEM_OTHER;
}

/* Writer side: stores @a in @c, and what the check reads of it; @mr is
 * the region a window is bound to, as ibk__mr_deny() takes it. */
static inline void ibk__mr_cell_store(struct ibk_mr_cell *c,
				      const struct ibk_mem_attr *a,
				      const struct ibk_mem_attr *mr)
{
	uint32_t meta = (uint32_t)(a->state & 0xfu) |
			(uint32_t)(a->kind & 0xfu) << 4 |
			(a->mr_index & IBK_RKEY_INDEX_MAX) << 8;
	uint32_t deny = ibk__mr_deny(a, mr);
	struct ibk__mr_reach reach = ibk__mr_reach_of(a, deny &
		IBK__MR_DENY_RULES || !ibk__mem_is_window(a) ? NULL : mr);
	bool mw2 = a->kind == IBK_MEM_MW2;

	ibk__mr_store64(c, IBK__MR_KEY, ibk__mr_key_of(a->pd, a->rkey,
						      mw2 ? a->qpn : 0));
	ibk__store(&c->word[IBK__MR_KEY_MASK],
		   mw2 ? ~0u : ~IBK__MR_QPN_MAX, relaxed);
	ibk__store(&c->word[IBK__MR_PEER],
		   ibk__mem_is_window(a) ? a->qpn : a->windows, relaxed);
	ibk__store(&c->word[IBK__MR_DENY], deny, relaxed);
	ibk__store(&c->word[IBK__MR_META], meta, relaxed);
	ibk__mr_store64(c, IBK__MR_REACH, reach.lo);
	ibk__mr_store64(c, IBK__MR_SPAN, reach.span);
	ibk__mr_store64(c, IBK__MR_ADDR, a->addr);
	ibk__mr_store64(c, IBK__MR_LENGTH, a->length);
	ibk__store(&c->word[IBK__MR_ACCESS], a->access, relaxed);
	ibk__store(&c->word[IBK__MR_RKEY], a->rkey, relaxed);
}

/* No object: every attribute zero, IBK_MEM_INVALID. */
static inline const struct ibk_mem_attr *ibk__mr_none(void)
{
	static const struct ibk_mem_attr none = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };

	return &none;
}

/* Writer side: @n cells from @cells emptied: no object. */
static inline void ibk__mr_cells_clear(struct ibk_mr_cell *cells, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		ibk__mr_cell_store(&cells[i], ibk__mr_none(), NULL);
}

/**
 * IBK_MR_TABLE_STORAGE() - A struct type holding an MR table and its cells,
 * sized once from @capacity
 * @capacity: how many objects the table holds, 1..2^24
 *
 * IBK_MR_TABLE_STORAGE_INIT() reads the capacity back from the cells'
 * size::
 *
 *	static IBK_MR_TABLE_STORAGE(4096) mrs;
 *	IBK_MR_TABLE_STORAGE_INIT(&mrs);	// then use &mrs.table
 *
 * Return: the struct type, with members table and cells.
 */
#define IBK_MR_TABLE_STORAGE(capacity)					\
	struct {							\
		struct ibk_mr_table table;				\
		struct ibk_mr_cell cells[IBK_MR_CELLS(capacity)];	\
	}

/**
 * IBK_MR_TABLE_STORAGE_INIT() - Initialises an MR table declared by
 * IBK_MR_TABLE_STORAGE()
 * @s: a pointer to the storage (evaluated more than once)
 *
 * Initialises an MR table declared by IBK_MR_TABLE_STORAGE() by
 * ibk_mr_table_init(), the capacity read back from its cells.
 *
 * Context: Before any other use of the storage: concurrent with no reader or
 * writer.
 * Return: what ibk_mr_table_init() returns.
 */
#define IBK_MR_TABLE_STORAGE_INIT(s)					\
	ibk_mr_table_init(&(s)->table, (s)->cells,			\
			  IBK__COUNT_OF((s)->cells) / IBK_MR_CELLS(1))

/**
 * ibk_mr_table_init() - Attaches an MR table to caller storage
 * @t: the memory region and window table
 * @cells: the table's cells (see "Table storage")
 * @capacity: how many entries the table holds
 *
 * Attaches @t to caller storage @cells[IBK_MR_CELLS(@capacity)] and empties
 * it: every index free, generation 2.
 *
 * Not concurrent with any use. Only for storage no reference was ever taken
 * from: the count lives in @t, and a second init starts it again, so a
 * reference from before could read fresh against another object at its index.
 * To start a live table over (a device reset), use ibk_mr_table_reset().
 *
 * Context: Before any other use of the storage: concurrent with no reader or
 * writer.
 * Return: IBK_OK; IBK_EINVAL for a NULL pointer; IBK_ERANGE for a capacity
 * outside 1..2^24.
 */
static inline int ibk_mr_table_init(struct ibk_mr_table *t,
				    struct ibk_mr_cell *cells,
				    uint32_t capacity)
{
	if (!t || !cells)
		return IBK_EINVAL;
	if (capacity == 0 || capacity > IBK_MR_MAX_CAPACITY)
		return IBK_ERANGE;
	t->capacity = capacity;
	t->cells[0] = cells;
	t->cells[1] = cells + capacity;
	ibk__mr_cells_clear(cells, IBK_MR_CELLS(capacity));
	ibk_latch_init(&t->latch, 0);
	return IBK_OK;
}

/**
 * ibk_mr_table_reset() - Starts a live MR table over after a device reset
 * @t: the memory region and window table
 *
 * Starts an initialised table over, for a consumer re-opening its device after
 * a reset (DEVICE_FATAL): every index free, as one more published generation,
 * so the count moves forward and never comes back to one a reference was taken
 * in (a generation is never reused over a table's lifetime, as the latch
 * section says); a reference from before stays stale, also against an object
 * registered at its index afterwards.
 *
 * A writer: it takes the lock word like the others.
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: IBK_OK; IBK_EINVAL for NULL @t.
 */
static inline int ibk_mr_table_reset(struct ibk_mr_table *t)
{
	if (!t)
		return IBK_EINVAL;
	ibk_latch_write_begin(&t->latch);
	ibk__mr_cells_clear(t->cells[0], t->capacity);
	ibk_latch_write_switch(&t->latch);
	ibk__mr_cells_clear(t->cells[1], t->capacity);
	ibk_latch_write_end(&t->latch);
	return IBK_OK;
}

/* An index beyond every table (IBK_MR_MAX_CAPACITY is 2^24): none. */
#define IBK__MR_NO_INDEX	0xffffffffu

/*
 * A writer's work on up to three objects, one slot each: their indices
 * (IBK__MR_NO_INDEX for a slot with nothing to publish), their
 * attributes as read under the lock word, and which of them the
 * operation changed; and room for the region of a window it did not
 * touch (ibk__mr_txn_region()).
 */
struct ibk__mr_txn {
	uint32_t index[3];
	struct ibk_mem_attr obj[3];
	struct ibk_mem_attr region[3];
	unsigned n;
};

/*
 * Writer side: adds a slot for the object at @index, read from copy 0
 * (the copies agree while the lock word is held); returns it, or NULL
 * when @index is beyond the table: no object. An index already added
 * gives the object of the slot that added it, so one object is never
 * changed through two copies of it. Every call fills its slot, cell 0's
 * object standing in for none, and what publishes it says which: so each
 * writer has as many slots on every path, all of them read, which EVA
 * follows without tying a slot's contents to the path.
 */
static inline struct ibk_mem_attr *
ibk__mr_txn_slot(struct ibk_mr_table *t, struct ibk__mr_txn *x,
		 uint32_t index)
{
	bool inside = index < t->capacity;
	unsigned j = x->n++, k;

	ibk__mr_cell_load(&t->cells[0][inside ? index : 0], &x->obj[j]);
	x->index[j] = IBK__MR_NO_INDEX;
	if (!inside)
		return NULL;
	for (k = 0; k < j; k++)
		if (x->index[k] == index)
			return &x->obj[k];
	x->index[j] = index;
	return &x->obj[j];
}

/*
 * Writer side, with the lock word held and before copy 0 changes: the
 * region bound window @x->obj[@j] names, as the operation leaves it: from
 * @x if the operation holds it, else read from copy 0 into @x's room for
 * it, which is filled in any case as a slot is. NULL for an object that
 * is no bound window, or a region index beyond the table.
 */
static inline const struct ibk_mem_attr *
ibk__mr_txn_region(const struct ibk_mr_table *t, struct ibk__mr_txn *x,
		   unsigned j)
{
	uint32_t i = ibk__mem_is_window(&x->obj[j]) && x->obj[j].length ?
		     x->obj[j].mr_index : IBK__MR_NO_INDEX;
	unsigned k;

	ibk__mr_cell_load(&t->cells[0][i < t->capacity ? i : 0], &x->region[j]);
	if (i >= t->capacity)
		return NULL;
	for (k = 0; k < x->n; k++)
		if (x->index[k] == i)
			return &x->obj[k];
	return &x->region[j];
}

/*
 * Writer side, with the lock word held: publishes @x if @v is
 * IBK_MEMOP_OK, as one generation (copy 0 while readers use copy 1, then
 * copy 1), and frees the lock word either way. Returns @v.
 */
static inline enum ibk_memop_verdict
ibk__mr_txn_end(struct ibk_mr_table *t, struct ibk__mr_txn *x,
		enum ibk_memop_verdict v)
{
	const struct ibk_mem_attr *mr[3];
	unsigned c, k;

	if (v == IBK_MEMOP_OK) {
		for (k = 0; k < x->n; k++)	/* before copy 0 changes */
			mr[k] = ibk__mr_txn_region(t, x, k);
		ibk__latch_flip(&t->latch);
		for (c = 0; c < 2; c++) {
			if (c == 1)
				ibk_latch_write_switch(&t->latch);
			for (k = 0; k < x->n; k++)
				if (x->index[k] < t->capacity)
					ibk__mr_cell_store(
						&t->cells[c][x->index[k]],
						&x->obj[k], mr[k]);
		}
	}
	ibk_latch_write_end(&t->latch);
	return v;
}

/* Writer side: takes the lock word and starts an empty transaction. */
static inline void ibk__mr_txn_begin(struct ibk_mr_table *t,
				     struct ibk__mr_txn *x)
{
	ibk__latch_lock(&t->latch);
	x->n = 0;
}

/**
 * ibk_mr_table_register() - Registers an MR or window in the table
 * @t: the memory region and window table
 * @attr: the object's attributes
 *
 * Registers the object *@attr describes at the index of attr->rkey: an MR
 * (ibv_reg_mr), a fast-register MR (ibv_alloc_mr) or a window (ibv_alloc_mw),
 * in the state ibk_mem_register() gives it.
 *
 * Every writer below returns this way: the verdict of the rule it applies, as
 * the ibk_mem_*() rules return theirs, one enum whose every value
 * ibk_memop_verdict_name() names (no errno mixed in).
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: IBK_MEMOP_OK (0) once published; IBK_MEMOP_ERR_IN_USE if the index
 * holds a live object, or ibk_mem_register()'s refusal, writing nothing;
 * IBK_MEMOP_ERR_KEY for an index beyond the table, which no key names;
 * IBK_MEMOP_ERR_INVALID for a NULL pointer.
 */
static inline enum ibk_memop_verdict
ibk_mr_table_register(struct ibk_mr_table *t, const struct ibk_mem_attr *attr)
{
	struct ibk__mr_txn x;
	struct ibk_mem_attr *o;

	if (!t || !attr)
		return IBK_MEMOP_ERR_INVALID;
	ibk__mr_txn_begin(t, &x);
	o = ibk__mr_txn_slot(t, &x, ibk_rkey_index(attr->rkey));
	if (!o || o->state != IBK_MEM_INVALID)
		return ibk__mr_txn_end(t, &x, o ? IBK_MEMOP_ERR_IN_USE :
				       IBK_MEMOP_ERR_KEY);
	ibk__mem_attr_copy(o, attr);
	return ibk__mr_txn_end(t, &x, ibk_mem_register(o));
}

/**
 * ibk_mr_table_rereg() - Re-registers an MR in the table under a new key
 * @t: the memory region and window table
 * @key: an L_Key or R_Key
 * @next: the attributes to take on
 *
 * Re-registers the MR named by @key with the key, PD, access, address and
 * length of *@next, by ibk_mr_rereg(): the key byte must change, so every
 * R_Key handed out before misses from now on.
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: as ibk_mr_table_register(); IBK_MEMOP_ERR_KEY if no object has @key.
 */
static inline enum ibk_memop_verdict
ibk_mr_table_rereg(struct ibk_mr_table *t, ibk_rkey_t key,
		   const struct ibk_mem_attr *next)
{
	struct ibk__mr_txn x;
	struct ibk_mem_attr *o;

	if (!t || !next)
		return IBK_MEMOP_ERR_INVALID;
	ibk__mr_txn_begin(t, &x);
	o = ibk__mr_txn_slot(t, &x, ibk_rkey_index(key));
	if (!o || o->rkey != key)
		return ibk__mr_txn_end(t, &x, IBK_MEMOP_ERR_KEY);
	return ibk__mr_txn_end(t, &x, ibk_mr_rereg(o, next));
}

/**
 * ibk_mr_table_fast_reg() - A REG_MR work request through the table
 * @t: the memory region and window table
 * @qp_pd: the PD of the QP that posted the work request
 * @next: the attributes to take on
 *
 * A REG_MR work request posted on a QP in protection domain @qp_pd: the
 * fast-register MR at the index of next->rkey takes that key, the access,
 * address and length of *@next, by ibk_mr_fast_reg().
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: as ibk_mr_table_register(); IBK_MEMOP_ERR_KEY if the index holds
 * nothing.
 */
static inline enum ibk_memop_verdict
ibk_mr_table_fast_reg(struct ibk_mr_table *t, uint32_t qp_pd,
		      const struct ibk_mem_attr *next)
{
	struct ibk__mr_txn x;
	struct ibk_mem_attr *o;

	if (!t || !next)
		return IBK_MEMOP_ERR_INVALID;
	ibk__mr_txn_begin(t, &x);
	o = ibk__mr_txn_slot(t, &x, ibk_rkey_index(next->rkey));
	if (!o)
		return ibk__mr_txn_end(t, &x, IBK_MEMOP_ERR_KEY);
	return ibk__mr_txn_end(t, &x, ibk_mr_fast_reg(o, qp_pd, next));
}

/**
 * ibk_mr_table_bind() - Binds a window through the table
 * @t: the memory region and window table
 * @wr: the bind work request
 *
 * Binds the window named by wr->mw_rkey as *@wr asks, by ibk_mw_bind(): to the
 * MR named by wr->mr_lkey (none for length 0), moving the window counts of the
 * MR it leaves and the MR it joins, all in one generation.
 *
 * A type 2 window is tied to wr->qpn, a number: the table cannot tell a new QP
 * that reuses it from the one that bound. rxe holds a reference to the QP
 * while the window is bound (rxe_do_bind_mw()), so its number is not reused; a
 * stack does the same, or invalidates or deallocates the QP's type 2 windows
 * before its number is reused.
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: as ibk_mr_table_register().
 */
static inline enum ibk_memop_verdict
ibk_mr_table_bind(struct ibk_mr_table *t, const struct ibk_mw_bind_wr *wr)
{
	struct ibk_mem_attr *mw, *mr, *old_mr;
	struct ibk__mr_txn x;

	if (!t || !wr)
		return IBK_MEMOP_ERR_INVALID;
	ibk__mr_txn_begin(t, &x);
	mw = ibk__mr_txn_slot(t, &x, ibk_rkey_index(wr->mw_rkey));
	if (!mw)
		return ibk__mr_txn_end(t, &x, IBK_MEMOP_ERR_KEY);
	mr = ibk__mr_txn_slot(t, &x, wr->length != 0 ?
			      ibk_rkey_index(wr->mr_lkey) : IBK__MR_NO_INDEX);
	old_mr = ibk__mr_txn_slot(t, &x, mw->length && ibk__mem_is_window(mw) &&
				  mw->state == IBK_MEM_VALID ?
				  mw->mr_index : IBK__MR_NO_INDEX);
	return ibk__mr_txn_end(t, &x, ibk_mw_bind(mw, mr, old_mr, wr));
}

/* Invalidation of the object named by @key by ibk_mem_invalidate(), or
 * for a SEND with invalidate received on *@qp (not NULL) by
 * ibk_mem_invalidate_remote(); a bound type 2 window's MR loses it. */
static inline enum ibk_memop_verdict
ibk__mr_table_invalidate(struct ibk_mr_table *t, ibk_rkey_t key,
			 const struct ibk_mem_qp *qp)
{
	struct ibk_mem_attr *o, *mr;
	struct ibk__mr_txn x;

	ibk__mr_txn_begin(t, &x);
	o = ibk__mr_txn_slot(t, &x, ibk_rkey_index(key));
	if (!o)
		return ibk__mr_txn_end(t, &x, IBK_MEMOP_ERR_KEY);
	mr = ibk__mr_txn_slot(t, &x, o->length && o->kind == IBK_MEM_MW2 ?
			      o->mr_index : IBK__MR_NO_INDEX);
	return ibk__mr_txn_end(t, &x, qp ?
			       ibk_mem_invalidate_remote(o, mr, key, qp) :
			       ibk_mem_invalidate(o, mr, key));
}

/**
 * ibk_mr_table_invalidate() - LOCAL_INV through the table
 * @t: the memory region and window table
 * @key: an L_Key or R_Key
 *
 * Invalidates the object named by @key for a LOCAL_INV work request, by
 * ibk_mem_invalidate(): a type 2 window becomes FREE and leaves its MR, a
 * fast-register MR becomes FREE.
 *
 * Local: the poster owns what it names, so no QP or PD is compared
 * (rxe_invalidate_mr() and rxe_invalidate_mw() in Linux 6.1 compare none). For
 * the IETH of a received SEND with invalidate, use
 * ibk_mr_table_invalidate_remote().
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: as ibk_mr_table_register().
 */
static inline enum ibk_memop_verdict
ibk_mr_table_invalidate(struct ibk_mr_table *t, ibk_rkey_t key)
{
	if (!t)
		return IBK_MEMOP_ERR_INVALID;
	return ibk__mr_table_invalidate(t, key, NULL);
}

/**
 * ibk_mr_table_invalidate_remote() - A received SEND with invalidate through
 * the table
 * @t: the memory region and window table
 * @key: an L_Key or R_Key
 * @qp: the QP the request arrived on: its PD and number
 *
 * Invalidates the object named by @key, the IETH of a SEND with invalidate
 * received on *@qp, by ibk_mem_invalidate_remote(): a peer may free only what
 * it could reach through that QP, so an object of another PD is
 * IBK_MEMOP_ERR_PD and a type 2 window bound to another QP
 * IBK_MEMOP_ERR_WINDOW_QP, and nothing changes; else as
 * ibk_mr_table_invalidate().
 *
 * A refusal completes the receive with IBK_WC_REM_INV_REQ_ERR.
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: as ibk_mr_table_register(), IBK_MEMOP_ERR_INVALID for a NULL @t or
 * @qp.
 */
static inline enum ibk_memop_verdict
ibk_mr_table_invalidate_remote(struct ibk_mr_table *t, ibk_rkey_t key,
			       const struct ibk_mem_qp *qp)
{
	if (!t || !qp)
		return IBK_MEMOP_ERR_INVALID;
	return ibk__mr_table_invalidate(t, key, qp);
}

/**
 * ibk_mr_table_deregister() - Deregisters an MR or deallocates a window in the
 * table
 * @t: the memory region and window table
 * @key: an L_Key or R_Key
 *
 * Deregisters the MR or deallocates the window named by @key by
 * ibk_mem_deregister(): its index becomes free; a bound window leaves its MR.
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: as ibk_mr_table_register().
 */
static inline enum ibk_memop_verdict
ibk_mr_table_deregister(struct ibk_mr_table *t, ibk_rkey_t key)
{
	struct ibk_mem_attr *o, *mr;
	struct ibk__mr_txn x;

	if (!t)
		return IBK_MEMOP_ERR_INVALID;
	ibk__mr_txn_begin(t, &x);
	o = ibk__mr_txn_slot(t, &x, ibk_rkey_index(key));
	if (!o)
		return ibk__mr_txn_end(t, &x, IBK_MEMOP_ERR_KEY);
	mr = ibk__mr_txn_slot(t, &x, o->length && ibk__mem_is_window(o) ?
			      o->mr_index : IBK__MR_NO_INDEX);
	return ibk__mr_txn_end(t, &x, ibk_mem_deregister(o, mr, key));
}

/* Inside a read section of copy @c: the object @key names into *@a, and
 * true; false if there is none (index beyond the table: *@a zeroed; a free
 * index; another key there). */
static inline bool ibk__mr_lookup(const struct ibk_mr_table *t, unsigned c,
				  ibk_rkey_t key, struct ibk_mem_attr *a)
{
	uint32_t index = ibk_rkey_index(key);

	if (index >= t->capacity) {
		ibk__mem_attr_copy(a, ibk__mr_none());
		return false;
	}
	ibk__mr_cell_load(&t->cells[c][index], a);
	return a->rkey == key && a->state != IBK_MEM_INVALID;
}

/**
 * ibk_mr_table_ref_get() - Takes a reference to the object @key names: its
 * attributes and the generation they were read in
 * @t: the memory region and window table
 * @key: an L_Key or R_Key
 * @ref: receives the reference
 *
 * On error a non-NULL @ref gets IBK_GENERATION_NEVER: it is never fresh.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: IBK_OK; IBK_EINVAL for a NULL pointer; IBK_ENOENT if no object has
 * that key (the whole 32 bits compared: a key byte from before a
 * re-registration or re-bind finds nothing).
 */
static inline int ibk_mr_table_ref_get(const struct ibk_mr_table *t,
				       ibk_rkey_t key, struct ibk_mr_ref *ref)
{
	uint32_t gen;
	bool found;

	if (!ref)
		return IBK_EINVAL;
	ref->generation = IBK_GENERATION_NEVER;	/* until it succeeds */
	if (!t)
		return IBK_EINVAL;
	do {
		gen = ibk_latch_read_begin(&t->latch);
		found = ibk__mr_lookup(t, ibk_latch_copy(gen), key, &ref->attr);
	} while (ibk_latch_read_retry(&t->latch, gen));
	if (!found)
		return IBK_ENOENT;
	ref->generation = gen;
	return IBK_OK;
}

/**
 * ibk_mr_table_get() - The attributes of the object @key names into *@attr
 * @t: the memory region and window table
 * @key: an L_Key or R_Key
 * @attr: receives the object's attributes
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: IBK_OK; else an error as ibk_mr_table_ref_get() returns it.
 */
static inline int ibk_mr_table_get(const struct ibk_mr_table *t,
				   ibk_rkey_t key, struct ibk_mem_attr *attr)
{
	struct ibk_mr_ref ref;
	int rc;

	if (!attr)
		return IBK_EINVAL;
	rc = ibk_mr_table_ref_get(t, key, &ref);
	if (rc == IBK_OK)
		ibk__mem_attr_copy(attr, &ref.attr);
	return rc;
}

/**
 * ibk_mr_table_ref_fresh() - True while nothing has been published to @t since
 * @ref was taken: one load and one compare
 * @t: the memory region and window table
 * @ref: a reference
 *
 * @t and @ref must be valid.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: true if @ref is still fresh.
 */
static inline bool ibk_mr_table_ref_fresh(const struct ibk_mr_table *t,
					  const struct ibk_mr_ref *ref)
{
	return ibk__latch_unchanged(&t->latch, ref->generation);
}

/* Inside a read section of copy @c: ibk_mem_check() of @req against the
 * object at its R_Key's index (NULL beyond the table: no object) and, for
 * a window, the region at its MR index, read in the same generation. */
static inline enum ibk_mem_verdict
ibk__mr_check_in(const struct ibk_mr_table *t, unsigned c,
		 const struct ibk_mem_qp *qp, const struct ibk_mem_request *req)
{
	uint32_t index = ibk_rkey_index(req->rkey);
	struct ibk_mem_attr a, mr;

	if (index >= t->capacity)
		return ibk_mem_check(qp, req, NULL, NULL);
	ibk__mr_cell_load(&t->cells[c][index], &a);
	if (!ibk__mem_is_window(&a) || a.mr_index >= t->capacity)
		return ibk_mem_check(qp, req, &a, NULL);
	ibk__mr_cell_load(&t->cells[c][a.mr_index], &mr);
	return ibk_mem_check(qp, req, &a, &mr);
}

/*
 * Inside a read section begun at count @gen: the whole responder check of
 * @bth, done by the rules as ib_keys.h states them, one after the other:
 * the parse, then the QP-level rules, then the object and, for a window,
 * its region as read now. What the fast path hands over for what it does
 * not cover (the header, the opcode or the QP's access, the length, a
 * window of a region that may change), out of line. It takes the count,
 * not the copy: the hot path keeps one value fewer.
 */
IBK__COLD enum ibk_mem_verdict
ibk__mr_by_rules(const struct ibk_mr_table *t, uint32_t gen,
		 const struct ibk_mem_qp *qp, const void *bth)
{
	struct ibk_mem_request req;
	enum ibk_mem_verdict v = ibk_mem_request_parse(qp->type, bth, &req);

	if (v == IBK_MEM_NO_RKEY)	/* a WRITE MIDDLE/LAST: the QP's access */
		return ibk_mem_check(qp, &req, NULL, NULL);
	if (v != IBK_MEM_OK)
		return v;
	return ibk__mr_check_in(t, ibk_latch_copy(gen), qp, &req);
}

/*
 * What the first two BTH bytes, opcode | TVer byte << 8, must be for the
 * fast path under QP @qp, in the bits of IBK__MR_HEAD_MASK: TVer 0 and
 * the opcode's transport the QP's (RC 0x00-0x1f, UC 0x20-0x3f). For any
 * other type of QP, or a QPN past IBK__MR_QPN_MAX, no header passes (bit
 * 16 never does), and every request takes the rules' way.
 */
#define IBK__MR_HEAD_MASK	(0x10000u | 0x0f00u | IBK_OPCODE_TRANSPORT_MASK)

static inline uint32_t ibk__mr_head_want(const struct ibk_mem_qp *qp)
{
	/* by enum ibk_qp_type: SMI, GSI, RC, UC, UD */
	static const uint32_t want[IBK_QPT_UD + 1] = {
		0x10000u, 0x10000u, IBK_TRANSPORT_RC, IBK_TRANSPORT_UC,
		0x10000u,
	};

	return (unsigned)qp->type <= (unsigned)IBK_QPT_UD &&
	       qp->qpn <= IBK__MR_QPN_MAX ? want[qp->type] : 0x10000u;
}

/* The IBK_ACCESS_REMOTE_* bits that access flags @access lack: a keyed
 * opcode whose class has one is left to the rules. */
static inline uint32_t ibk__mr_lacks(uint32_t access)
{
	return ~access & IBK_ACCESS_REMOTE;
}

/* The header test of ibk__mr_probe_read() ORs an opcode's class into the
 * header's transport bits: those of the classes the fast path leaves to
 * the rules are among them, those of the keyed opcodes it checks not. */
IBK__STATIC_ASSERT(((IBK__MEM_OTHER | IBK__MEM_FLUSH | IBK__MEM_CONT) &
		    ~IBK_OPCODE_TRANSPORT_MASK) == 0 &&
		   ((IBK__MEM_KEYED | IBK_ACCESS_REMOTE | IBK__MEM_ATOMIC) &
		    IBK_OPCODE_TRANSPORT_MASK) == 0,
		   "the classes' bits and the transport's");

/* What the fast path compares every request of a read section with: the
 * copy's cells and the QP's fields, in locals a burst's verdict stores
 * cannot alias (a byte store may alias any field of @t or @qp). */
struct ibk__mr_view {
	const struct ibk_mr_cell *cells;
	const uint8_t *cls;	/* by op6, RC's 32 classes, then UC's:
				 * ibk__mem_op6_classes() */
	uint32_t capacity;
	uint32_t head_want;	/* ibk__mr_head_want() of the QP */
	uint32_t lacks;		/* the IBK_ACCESS_REMOTE_* bits the QP
				 * lacks, where the classes still have them */
	uint64_t key_want;	/* ibk__mr_key_of() the QP's PD and QPN */
};

/* Inside a read section of copy @c: the view of @t and of @qp. */
static inline struct ibk__mr_view
ibk__mr_view_of(const struct ibk_mr_table *t, unsigned c,
		const struct ibk_mem_qp *qp)
{
	struct ibk__mr_view v;

	v.cells = t->cells[c];
	v.capacity = t->capacity;
	v.cls = ibk__mem_op6_classes();
	v.head_want = ibk__mr_head_want(qp);
	v.lacks = ibk__mr_lacks(qp->access);
	v.key_want = ibk__mr_key_of(qp->pd, 0, qp->qpn);
	return v;
}

/* One request as the fast path reads it. */
struct ibk__mr_probe {
	uint32_t cls;		/* ibk__mem_op6_class() of the opcode */
	uint32_t len;		/* 8 for an atomic, else the RETH's */
	uint32_t rkey;
	uint32_t eight;		/* 8 for an atomic, else 0 */
	uint64_t va;
};

/*
 * Reads @bth as a keyed request (RDMA WRITE FIRST or ONLY, READ, COMPARE
 * SWAP, FETCH ADD) of the QP's transport, with TVer 0, that the QP's
 * access flags allow (all three from @v): false, reading no further
 * than the BTH, for any other; the rules check those. What else does
 * not fit shows up as a refusal in ibk__mr_check_one().
 */
static inline bool ibk__mr_probe_read(struct ibk__mr_probe *r,
				      const struct ibk__mr_view *v,
				      const void *bth)
{
	const uint8_t *p = (const uint8_t *)bth;
	const uint8_t *ext = p + IBK_BTH_LEN;
	uint32_t head = ibk__load_le16(p);
	uint32_t raw, eight, other;

	/* IBK__MEM_OTHER, FLUSH and CONT are among the transport's bits */
	r->cls = v->cls[head & 0x3fu];
	other = (((head ^ v->head_want) | r->cls) & IBK__MR_HEAD_MASK) |
		(r->cls & v->lacks);
	if (other != 0)
		return false;
	/* of the keyed opcodes, only the atomics ask for remote atomic
	 * access: 8 for those, 0 for the others */
	eight = r->cls & IBK_ACCESS_REMOTE_ATOMIC;
	/* both headers have the address at 0 and the R_Key at 8; an
	 * AtomicETH's bytes 12-15 are swap data, not a length */
	r->va = ibk__load_be64(ext);
	r->rkey = ibk__load_be32(ext + 8);
	raw = ibk__load_be32(ext + 12);
	/* an atomic's raw shifted out by two 16-bit shifts (one of 32 is
	 * undefined), and 8 in its place: no branch on the opcode */
	r->len = raw >> (eight * 2u) >> (eight * 2u) | eight;
	r->eight = eight;
	return true;
}

/*
 * Whether request @r reaches outside @cell's reach: va - lo + len carries
 * or exceeds the span. For len >= 1 and a reach with lo + span <= 2^64
 * that is exactly "outside", as below lo va - lo wraps to at least
 * 2^64 - lo >= span.
 */
static inline bool ibk__mr_outside(const struct ibk_mr_cell *cell,
				   const struct ibk__mr_probe *r)
{
	/* both wrap on purpose: below lo, and the carry, as above */
	uint64_t from = r->va - ibk__mr_load64(cell, IBK__MR_REACH);
	uint64_t to = from + r->len;

	return !IBK__LIKELY(to >= from) ||
	       !IBK__LIKELY(to <= ibk__mr_load64(cell, IBK__MR_SPAN));
}

/*
 * The verdict on request @r of @bth to the object in @cell when the OR
 * test of ibk__mr_check_one() refused it: @key and @deny are the values
 * that test ORed (@key: the bits of ibk__mr_key_of() that differ). Each
 * of its terms but the alignment is a check that rxe makes before the
 * reach, so the first of them that fails, in rxe's order
 * (ibk__mem_object_verdict()), is the verdict; where only the alignment
 * failed, the reach comes first.
 */
static inline enum ibk_mem_verdict
ibk__mr_refused(const struct ibk_mr_table *t, uint32_t gen,
		const struct ibk_mem_qp *qp, const void *bth,
		const struct ibk_mr_cell *cell, const struct ibk__mr_probe *r,
		uint64_t key, uint32_t deny)
{
	/* len - 1 wraps on purpose at 0, as in ibk__mr_check_one() */
	if (((r->len - 1u) >> 31) | (deny & IBK__MR_DENY_RULES))
		return ibk__mr_by_rules(t, gen, qp, bth);
	if ((key | (deny & r->cls)) == 0)	/* the alignment alone */
		return ibk__mr_outside(cell, r) ? IBK_MEM_ERR_RANGE :
						  IBK_MEM_ERR_ALIGN;
	if ((key & ibk__mr_key_of(0, 0xffu, 0)) || (deny & IBK__MR_DENY_GONE))
		return IBK_MEM_ERR_KEY;
	if (key & ibk__mr_key_of(~0u, 0, 0))
		return IBK_MEM_ERR_PD;
	if (key != 0)
		return IBK_MEM_ERR_WINDOW_QP;
	if (deny & IBK__MR_DENY_UNBOUND)
		return IBK_MEM_ERR_UNBOUND;
	if (deny & r->cls & IBK_ACCESS_REMOTE)
		return IBK_MEM_ERR_ACCESS;
	/* of deny & cls's bits only IBK__MEM_KEYED is left, for
	 * IBK__MR_DENY_STATE */
	return IBK_MEM_ERR_STATE;
}

/*
 * Inside a read section of @t begun at count @gen, seen through @v: the
 * verdict on @bth, by the fast path when its header lets it read the
 * request (ibk__mr_probe_read()). Three tests, each a branch a granted
 * request never takes: the R_Key's index inside the table, decided
 * before any cell is read, so that a request for no object costs a
 * mispredicted branch that resolves early; one OR of the terms checked
 * next (the key byte, PD and a type 2 window's QP as one 64-bit value,
 * the length in [1, 2^31], the object's refusals of the opcode's class,
 * an atomic's alignment); the reach. A test that fails says which checks
 * are left, so that the first and the last say the verdict alone, and
 * the second's terms, still at hand, say theirs in rxe's order
 * (ibk__mr_refused()); only what the rules decide leaves the function.
 */
IBK__HOT enum ibk_mem_verdict
ibk__mr_check_one(const struct ibk_mr_table *t, uint32_t gen,
		  const struct ibk__mr_view *v, const struct ibk_mem_qp *qp,
		  const void *bth)
{
	struct ibk__mr_probe r;
	const struct ibk_mr_cell *cell;
	uint64_t key;
	uint32_t index, deny;

	if (!ibk__mr_probe_read(&r, v, bth))
		return ibk__mr_by_rules(t, gen, qp, bth);
	index = ibk_rkey_index(r.rkey);
	/* no object: the R_Key's refusal, unless the length's comes first
	 * (len - 1 wraps on purpose at 0, as below); a branch, that an index
	 * past the table takes before any cell */
	if (!IBK__LIKELY(index < v->capacity))
		return (r.len - 1u) >> 31 ? ibk__mr_by_rules(t, gen, qp, bth) :
					    IBK_MEM_ERR_KEY;
	cell = &v->cells[index];
	key = ((uint64_t)((r.rkey & 0xffu) << 24) ^ v->key_want ^
	       ibk__mr_load64(cell, IBK__MR_KEY)) & ibk__mr_key_mask(cell);
	deny = ibk__load(&cell->word[IBK__MR_DENY], relaxed);
	/* eight is 0 or 8: an atomic's address & 7, times 8 (of the address's
	 * low 29 bits, so that the product fits 32); len - 1 wraps on purpose
	 * at 0, so that one shift refuses 0 and what is past 2^31 */
	if (!IBK__LIKELY((key | (r.len - 1u) >> 31 | (deny & r.cls) |
			  ((uint32_t)(r.va & 0x1fffffffu) * r.eight &
			   0x38u)) == 0))
		return ibk__mr_refused(t, gen, qp, bth, cell, &r, key, deny);
	return ibk__mr_outside(cell, &r) ? IBK_MEM_ERR_RANGE : IBK_MEM_OK;
}

/* One read section for ibk_mr_table_check(), begun at the count it puts
 * in *@gen: the verdict on @bth to @qp, as the copy it reads says. */
IBK__HOT enum ibk_mem_verdict
ibk__mr_check_section(const struct ibk_mr_table *t,
		      const struct ibk_mem_qp *qp, const void *bth,
		      uint32_t *gen)
{
	struct ibk__mr_view view;
	unsigned c;

	*gen = ibk_latch_read_begin(&t->latch);
	c = ibk_latch_copy(*gen);
	view = ibk__mr_view_of(t, c, qp);
	return ibk__mr_check_one(t, *gen, &view, qp, bth);
}

/* ibk_mr_table_check() once a writer finished a half-update during its
 * first read section: sections again until one reads a copy no writer
 * touched. Out of line, so that the first section is no loop. */
IBK__COLD enum ibk_mem_verdict
ibk__mr_check_retried(const struct ibk_mr_table *t,
		      const struct ibk_mem_qp *qp, const void *bth)
{
	enum ibk_mem_verdict v;
	uint32_t gen;

	do
		v = ibk__mr_check_section(t, qp, bth, &gen);
	while (ibk_latch_read_retry(&t->latch, gen));
	return v;
}

/**
 * ibk_mr_table_check() - The responder's R_Key check of one request,
 * through the table
 * @t: the memory region and window table
 * @qp: the QP the request arrived on: its type, PD, number and access flags
 * @bth: the BTH, followed by its RETH or AtomicETH when the opcode carries
 *       one
 *
 * The verdict of ibk_mem_request_parse() on @bth, then of ibk_mem_check()
 * against the object at the R_Key's index, read in one generation (for
 * IBK_MEM_NO_RKEY, the QP access check a WRITE MIDDLE or LAST still gets).
 * @t, @qp and @bth must be valid.
 *
 * A granted request costs one pass of loads, ORs and a few branches it
 * never takes: the header, the request's fields once, and one cell, which
 * holds everything the check compares (the key byte, PD and a type 2
 * window's QP as one 64-bit value, a window's reach already cut to its
 * region's). A refused one takes its verdict from the values the pass read,
 * in the same function; only what the pass does not cover goes, out of line,
 * through the rules one by one. One straight read section; its retry, rare,
 * out of line.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: the verdict, as ibk_mem_check() gives it.
 */
IBK__HOT enum ibk_mem_verdict
ibk_mr_table_check(const struct ibk_mr_table *t, const struct ibk_mem_qp *qp,
		   const void *bth)
{
	uint32_t gen;
	enum ibk_mem_verdict v = ibk__mr_check_section(t, qp, bth, &gen);

	if (!ibk_latch_read_retry(&t->latch, gen))
		return v;
	return ibk__mr_check_retried(t, qp, bth);
}

#if defined(IBK__SIMD_AVX2) && defined(IBK__MR_WIDE_ATOMIC) && defined(__GNUC__)
/*
 * The R_Key check on AVX2, four requests a step in 64-bit lanes, for a
 * burst to an RC or UC QP: a lane says "granted" only where
 * ibk__mr_probe_read() and ibk__mr_check_one() would, by the same
 * terms; each lane computes which checks fail, as refusal bits, and a
 * refused lane's verdict is its highest bit's (the rules' for
 * IBK__MR_TO_RULES), with no branch on which check it failed.
 * The BTHs' first bytes are gathered, the RETHs and the cells loaded in
 * rows and transposed (gathers cost more time on some CPUs, AMD's): a
 * cell's values are read as plain vector loads, each 64-bit value of
 * an aligned cell whole, as the scalar code's relaxed loads read them,
 * and what a writer changes under them the read section's retry
 * discards as it does the scalar reads'. Only where a cell's 64-bit
 * values are single atomics (64-bit hosts), so that a value loaded is
 * the value.
 */
#define IBK__MR_AVX2	1

/* The fields of four cells a lane compares, each cell's in its lane. */
struct ibk__avx2_mr_cells {
	__m256i mask;	/* IBK__MR_KEY_MASK | IBK__MR_PEER << 32 */
	__m256i deny;	/* deny | META << 32 */
	__m256i key, reach, span;
};

IBK__STATIC_ASSERT(IBK__MR_KEY_MASK == 0 && IBK__MR_PEER == 1 &&
		   IBK__MR_DENY == 2 && IBK__MR_WORDS == 6 &&
		   IBK__MR_KEY == 0 && IBK__MR_REACH == 1 &&
		   IBK__MR_SPAN == 2,
		   "the AVX2 burst reads a cell's first 48 bytes as laid out");

/*
 * The cells at byte offsets @off[0..3] into @cells, loaded row by row
 * (bytes 0-31: key mask and peer, deny and META, access and R_Key, key;
 * 32-47: reach and span) and transposed into lanes: on CPUs whose
 * gathers are slow, row loads and shuffles cost less time.
 */
static inline struct ibk__avx2_mr_cells
ibk__avx2_mr_cells4(const struct ibk_mr_cell *cells, const uint64_t *off)
{
	const char *base = (const char *)(const void *)cells;
	struct ibk__avx2_mr_cells r;
	__m256i a0 = _mm256_loadu_si256((const __m256i *)(const void *)
					(base + off[0]));
	__m256i a1 = _mm256_loadu_si256((const __m256i *)(const void *)
					(base + off[1]));
	__m256i a2 = _mm256_loadu_si256((const __m256i *)(const void *)
					(base + off[2]));
	__m256i a3 = _mm256_loadu_si256((const __m256i *)(const void *)
					(base + off[3]));
	__m256i lo01 = _mm256_unpacklo_epi64(a0, a1);
	__m256i hi01 = _mm256_unpackhi_epi64(a0, a1);
	__m256i lo23 = _mm256_unpacklo_epi64(a2, a3);
	__m256i hi23 = _mm256_unpackhi_epi64(a2, a3);
	__m256i b02 = _mm256_inserti128_si256(_mm256_castsi128_si256(
		_mm_loadu_si128((const __m128i *)(const void *)
				(base + off[0] + 32))),
		_mm_loadu_si128((const __m128i *)(const void *)
				(base + off[2] + 32)), 1);
	__m256i b13 = _mm256_inserti128_si256(_mm256_castsi128_si256(
		_mm_loadu_si128((const __m128i *)(const void *)
				(base + off[1] + 32))),
		_mm_loadu_si128((const __m128i *)(const void *)
				(base + off[3] + 32)), 1);

	r.mask = _mm256_permute2x128_si256(lo01, lo23, 0x20);
	r.deny = _mm256_permute2x128_si256(hi01, hi23, 0x20);
	r.key = _mm256_permute2x128_si256(hi01, hi23, 0x31);
	r.reach = _mm256_unpacklo_epi64(b02, b13);
	r.span = _mm256_unpackhi_epi64(b02, b13);
	return r;
}

/* The class of the opcode in the low byte of each 64-bit lane of
 * @head, by its low 5 bits in @table, its transport's 32 of
 * ibk__mem_op6_class(): 16 entries a shuffle, each of which reads 0
 * for an index byte with bit 7 set (the other half's, and bytes 1-7,
 * left 0). */
static inline __m256i ibk__avx2_mr_classes(const uint8_t *table,
					   __m256i head)
{
	__m256i idx = _mm256_add_epi64(
		_mm256_and_si256(head, _mm256_set1_epi64x(0x1f)),
		_mm256_set1_epi64x((long long)0x8080808080808070ull));
	__m256i low = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(
		_mm_loadu_si128((const __m128i *)(const void *)table)), idx);
	__m256i high = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(
		_mm_loadu_si128((const __m128i *)(const void *)(table + 16))),
		_mm256_xor_si256(idx, _mm256_set1_epi64x(0x80)));

	return _mm256_or_si256(low, high);
}

/*
 * The first 16 bytes after the BTH of @hdrs[0..3] in *@low (bytes 0-7)
 * and *@high (bytes 8-15), as they are on the wire, for the lanes set in
 * @ok, 0 in the others: loaded row by row and transposed when all four
 * are set, else gathered under the mask, which reads nothing for a
 * clear lane (its header may end with the BTH).
 */
static inline void ibk__avx2_mr_ext4(const void *const *hdrs, __m256i ok,
				     __m256i *low, __m256i *high)
{
	const uint8_t *const *p = (const uint8_t *const *)hdrs;
	const __m256i zero = _mm256_setzero_si256();
	__m256i ptrs, rows02, rows13;

	if (_mm256_movemask_pd(_mm256_castsi256_pd(ok)) == 0xf) {
		rows02 = _mm256_inserti128_si256(_mm256_castsi128_si256(
			_mm_loadu_si128((const __m128i *)(const void *)
					(p[0] + IBK_BTH_LEN))),
			_mm_loadu_si128((const __m128i *)(const void *)
					(p[2] + IBK_BTH_LEN)), 1);
		rows13 = _mm256_inserti128_si256(_mm256_castsi128_si256(
			_mm_loadu_si128((const __m128i *)(const void *)
					(p[1] + IBK_BTH_LEN))),
			_mm_loadu_si128((const __m128i *)(const void *)
					(p[3] + IBK_BTH_LEN)), 1);
		*low = _mm256_unpacklo_epi64(rows02, rows13);
		*high = _mm256_unpackhi_epi64(rows02, rows13);
		return;
	}
	/* the header pointers are the gathers' indexes, the offset into
	 * the header their base */
	ptrs = _mm256_loadu_si256((const __m256i *)(const void *)hdrs);
	*low = _mm256_mask_i64gather_epi64(zero,
		(const long long *)(uintptr_t)IBK_BTH_LEN, ptrs, ok, 1);
	*high = _mm256_mask_i64gather_epi64(zero,
		(const long long *)(uintptr_t)(IBK_BTH_LEN + 8), ptrs, ok, 1);
}

/* No verdict: what ibk__mr_refusal_verdict() gives IBK__MR_TO_RULES. */
#define IBK__MR_VERDICT_RULES	0xffu

/* The verdict of refusal bits @bits (not 0): that of the highest one, by
 * a lookup of bits 8-16, IBK__MR_VERDICT_RULES for IBK__MR_TO_RULES. */
static inline unsigned ibk__mr_refusal_verdict(uint32_t bits)
{
#define IBK__X2(v)	v, v
#define IBK__X4(v)	IBK__X2(v), IBK__X2(v)
#define IBK__X8(v)	IBK__X4(v), IBK__X4(v)
#define IBK__X16(v)	IBK__X8(v), IBK__X8(v)
#define IBK__X32(v)	IBK__X16(v), IBK__X16(v)
#define IBK__X64(v)	IBK__X32(v), IBK__X32(v)
#define IBK__X128(v)	IBK__X64(v), IBK__X64(v)
	static const uint8_t by_highest[512] = {
		IBK_MEM_OK, IBK_MEM_ERR_ALIGN, IBK__X2(IBK_MEM_ERR_RANGE),
		IBK__X4(IBK_MEM_ERR_STATE), IBK__X8(IBK_MEM_ERR_ACCESS),
		IBK__X16(IBK_MEM_ERR_UNBOUND),
		IBK__X32(IBK_MEM_ERR_WINDOW_QP), IBK__X64(IBK_MEM_ERR_PD),
		IBK__X128(IBK_MEM_ERR_KEY), IBK__X128(IBK__MR_VERDICT_RULES),
		IBK__X128(IBK__MR_VERDICT_RULES),
	};
#undef IBK__X2
#undef IBK__X4
#undef IBK__X8
#undef IBK__X16
#undef IBK__X32
#undef IBK__X64
#undef IBK__X128

	return by_highest[bits >> 8 & 0x1ffu];
}

/*
 * The refusal bits of requests @hdrs[0..3] as @v sees them, request j's
 * in bits 0-31 of 64-bit lane j: 0 where the request is granted, else
 * those of the checks it fails (more may sit above bit 31; only a
 * granted request has none). The opcode's class from the first two BTH
 * bytes, as in ibk__mr_probe_read(), decides which lanes read their RETH
 * or AtomicETH (ibk__avx2_mr_ext4() reads nothing for the others, which
 * get IBK__MR_TO_RULES); then the checks of ibk__mr_check_one(),
 * each to its bit: the length in [1, 2^31], the key and the PD, a type 2
 * window's QP, the access, the object's IBK__MR_DENY_* bits, the reach
 * (64-bit unsigned compares, as signed ones of the values with the top
 * bit flipped) and an atomic's alignment.
 */
IBK__HOT __m256i ibk__avx2_mr_refusals4(const struct ibk__mr_view *v,
					const uint8_t *table,
					const void *const *hdrs)
{
	const __m256i zero = _mm256_setzero_si256();
	const __m256i ones = _mm256_set1_epi64x(-1);
	const __m256i top = _mm256_set1_epi64x((long long)(1ull << 63));
	const __m256i swap64 = _mm256_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 15, 14,
						13, 12, 11, 10, 9, 8, 7, 6, 5,
						4, 3, 2, 1, 0, 15, 14, 13, 12,
						11, 10, 9, 8);
	const __m256i swap32 = _mm256_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10,
						9, 8, 15, 14, 13, 12, 3, 2, 1,
						0, 7, 6, 5, 4, 11, 10, 9, 8,
						15, 14, 13, 12);
	/* the first 8 BTH bytes, the header pointers the gather's indexes */
	__m256i head = _mm256_i64gather_epi64((const long long *)0,
		_mm256_loadu_si256((const __m256i *)(const void *)hdrs), 1);
	__m256i cls = ibk__avx2_mr_classes(table, head);
	__m256i ok = _mm256_cmpeq_epi64(zero, _mm256_or_si256(
		_mm256_and_si256(_mm256_xor_si256(head, _mm256_set1_epi64x(
						 v->head_want)),
				 _mm256_set1_epi64x(IBK__MR_HEAD_MASK &
						    0xffff)),
		_mm256_and_si256(cls, _mm256_set1_epi64x(v->lacks |
							 IBK__MEM_OTHER))));
	__m256i eight = _mm256_and_si256(cls, _mm256_set1_epi64x(
					       IBK_ACCESS_REMOTE_ATOMIC));
	__m256i keyed = _mm256_cmpeq_epi64(eight, zero);	/* not atomic */
	/* the key byte's bits in ibk__mr_key_of() */
	const __m256i byte = _mm256_set1_epi64x((long long)ibk__mr_key_of(0,
								0xffu, 0));
	__m256i va, fields, raw, len, off, inside, key, from, to, span, bits;
	__m256i term;
	struct ibk__avx2_mr_cells cell;
	uint64_t offs[4];

	/* both headers have the address at 0 and the R_Key at 8 */
	ibk__avx2_mr_ext4(hdrs, ok, &va, &fields);
	va = _mm256_shuffle_epi8(va, swap64);
	raw = fields;		/* the R_Key's key byte in bits 24-31 */
	fields = _mm256_shuffle_epi8(fields, swap32);	/* R_Key | length
							 * << 32 */
	len = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi64(fields, 32),
					       keyed), eight);
	/* the index times the cell size, the cell of index 0 beyond */
	off = _mm256_srli_epi64(_mm256_and_si256(fields,
				_mm256_set1_epi64x(0xffffff00)), 2);
	inside = _mm256_cmpgt_epi64(_mm256_set1_epi64x(
				(long long)v->capacity * 64), off);
	off = _mm256_and_si256(off, inside);
	_mm256_storeu_si256((__m256i *)(void *)offs, off);
	cell = ibk__avx2_mr_cells4(v->cells, offs);
	/* a header the rules check; a length outside [1, 2^31]: (len - 1)
	 * >> 31 is not 0, and its bits from 16 up IBK__MR_TO_RULES */
	bits = _mm256_or_si256(_mm256_andnot_si256(ok, _mm256_set1_epi64x(
						   IBK__MR_TO_RULES)),
		_mm256_slli_epi64(_mm256_srli_epi64(_mm256_sub_epi64(len,
					_mm256_set1_epi64x(1)), 31), 16));
	/* the bits of ibk__mr_key_of() that differ, under the cell's key
	 * mask (its high half all ones, as sign extension makes it) */
	key = _mm256_or_si256(_mm256_and_si256(raw, byte), _mm256_set1_epi64x(
					(long long)v->key_want));
	key = _mm256_and_si256(_mm256_xor_si256(cell.key, key),
			       _mm256_blend_epi32(cell.mask, ones, 0xaa));
	/* the PD in the high half, the key byte and a type 2 window's QP
	 * in the low one: each half that differs sets its bit, the PD's
	 * folded down; IBK__MR_NO_WINDOW_QP stands for the QP, as the key
	 * byte's IBK__MR_NO_KEY, above it, decides where both differ */
	term = _mm256_andnot_si256(_mm256_cmpeq_epi32(key, zero),
		_mm256_set1_epi64x((long long)((uint64_t)IBK__MR_NO_PD << 32 |
					       IBK__MR_NO_WINDOW_QP)));
	bits = _mm256_or_si256(bits, _mm256_or_si256(term,
					_mm256_srli_epi64(term, 32)));
	/* the key byte, or an index beyond the table, whose key no object
	 * has */
	term = _mm256_and_si256(_mm256_cmpeq_epi64(_mm256_and_si256(key,
						   byte), zero), inside);
	bits = _mm256_or_si256(bits, _mm256_andnot_si256(term,
				_mm256_set1_epi64x(IBK__MR_NO_KEY)));
	/* the access the object lacks, and its IBK__MR_DENY_* bits */
	term = _mm256_and_si256(_mm256_and_si256(cell.deny, cls),
				_mm256_set1_epi64x(IBK_ACCESS_REMOTE));
	bits = _mm256_or_si256(bits, _mm256_andnot_si256(
		_mm256_cmpeq_epi64(term, zero),
		_mm256_set1_epi64x(IBK__MR_NO_ACCESS)));
	bits = _mm256_or_si256(bits, _mm256_and_si256(cell.deny,
		_mm256_set1_epi64x(IBK__MR_DENY_STATE | IBK__MR_DENY_UNBOUND |
				   IBK__MR_DENY_GONE | IBK__MR_DENY_RULES)));
	/* as ibk__mr_check_one() tests the reach: va - reach + len carries
	 * or is above the span */
	from = _mm256_xor_si256(_mm256_sub_epi64(va, cell.reach), top);
	to = _mm256_add_epi64(from, len);	/* both with the top flipped */
	span = _mm256_xor_si256(cell.span, top);
	bits = _mm256_or_si256(bits, _mm256_and_si256(_mm256_or_si256(
		_mm256_cmpgt_epi64(from, to), _mm256_cmpgt_epi64(to, span)),
		_mm256_set1_epi64x(IBK__MR_NO_RANGE)));
	/* an atomic's address not 8-aligned */
	term = _mm256_andnot_si256(keyed, _mm256_and_si256(va,
					_mm256_set1_epi64x(7)));
	return _mm256_or_si256(bits, _mm256_andnot_si256(
		_mm256_cmpeq_epi64(term, zero),
		_mm256_set1_epi64x(IBK__MR_NO_ALIGN)));
}

/*
 * ibk__mr_check_many() of @n requests, 4 to 32 and a multiple of 4, on
 * AVX2: the vector pass first, every verdict set to IBK_MEM_OK and the
 * refusal bits of each lane kept; then each refused lane's verdict from
 * its bits, the rules' where they say so. Returns how many are
 * IBK_MEM_OK.
 */
static inline size_t ibk__mr_check_avx2(const struct ibk_mr_table *t,
					uint32_t gen,
					const struct ibk__mr_view *v,
					const struct ibk_mem_qp *qp,
					const uint8_t *table,
					const void *const *hdrs,
					uint8_t *verdicts, size_t n)
{
	const struct ibk__mr_view view = *v;	/* no verdict store aliases */
	uint64_t bits[32];
	uint32_t granted = 0, refused;
	unsigned verdict;
	size_t i, ok = n;

	for (i = 0; i < n; i += 4) {
		__m256i b = ibk__avx2_mr_refusals4(&view, table, hdrs + i);

		_mm256_storeu_si256((__m256i *)(void *)&bits[i], b);
		granted |= (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(
			_mm256_cmpeq_epi64(b, _mm256_setzero_si256()))) << i;
		verdicts[i] = IBK_MEM_OK;
		verdicts[i + 1] = IBK_MEM_OK;
		verdicts[i + 2] = IBK_MEM_OK;
		verdicts[i + 3] = IBK_MEM_OK;
	}
	refused = ~granted & (uint32_t)(((uint64_t)1 << n) - 1u);
	for (; refused != 0; refused &= refused - 1u) {
		i = (size_t)__builtin_ctz(refused);
		verdict = ibk__mr_refusal_verdict((uint32_t)bits[i]);
		if (verdict == IBK__MR_VERDICT_RULES)
			verdict = ibk__mr_by_rules(t, gen, qp, hdrs[i]);
		verdicts[i] = (uint8_t)verdict;
		ok -= verdict != IBK_MEM_OK;	/* the rules grant a 0-byte one */
	}
	return ok;
}
#endif

/* Inside a read section begun at count @gen, @t seen through @v: the verdicts
 * of @n requests, as ibk__mr_check_one() gives them; returns how many
 * are IBK_MEM_OK. On AVX2, for an RC or UC QP, whole groups of four in
 * ibk__mr_check_avx2(), 32 at a time. */
static inline size_t ibk__mr_check_many(const struct ibk_mr_table *t,
					uint32_t gen,
					const struct ibk__mr_view *v,
					const struct ibk_mem_qp *qp,
					const void *const *hdrs,
					uint8_t *verdicts, size_t n)
{
	enum ibk_mem_verdict verdict;
	size_t i = 0, ok = 0;

#if defined(IBK__MR_AVX2)
	const uint8_t *table = v->cls +
			       (v->head_want & IBK_OPCODE_TRANSPORT_MASK);
	size_t whole = (v->head_want & 0x10000u) ? 0 : n - n % 4;
	size_t m;

	for (; i < whole; i += m) {
		m = whole - i < 32 ? whole - i : 32;
		ok += ibk__mr_check_avx2(t, gen, v, qp, table, hdrs + i,
					 verdicts + i, m);
	}
#endif
	for (; i < n; i++) {
		verdict = ibk__mr_check_one(t, gen, v, qp, hdrs[i]);
		verdicts[i] = (uint8_t)verdict;
		ok += verdict == IBK_MEM_OK;
	}
	return ok;
}

/**
 * ibk_mr_table_check_burst() - The R_Key check for a burst of requests to one
 * QP
 * @t: the memory region and window table
 * @qp: the QP the request arrived on: its PD and number
 * @hdrs: @n pointers, each to a BTH followed by the RETH or AtomicETH its
 *        opcode carries, if any
 * @n: how many
 * @verdicts: receives @n verdicts, one byte each
 *
 * ibk_mr_table_check() for a burst of @n requests to one QP: hdrs[i] points at
 * a BTH and the RETH or AtomicETH after it when its opcode carries one;
 * verdicts[i] gets the enum ibk_mem_verdict.
 *
 * The whole burst is checked in one read section, against one published state
 * of the table, again while a writer finished a half-update during it. Every
 * pointer must be valid. AVX2 builds for 64-bit hosts
 * check four requests a step in vector lanes, the requests they do not grant
 * one by one; a BTH whose opcode carries no RETH is read no further than its
 * first 8 bytes there too.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: the number of IBK_MEM_OK.
 */
static inline size_t ibk_mr_table_check_burst(const struct ibk_mr_table *t,
					      const struct ibk_mem_qp *qp,
					      const void *const *hdrs, size_t n,
					      uint8_t *verdicts)
{
	struct ibk__mr_view view;
	size_t ok;
	uint32_t gen;
	unsigned c;

	do {
		gen = ibk_latch_read_begin(&t->latch);
		c = ibk_latch_copy(gen);
		view = ibk__mr_view_of(t, c, qp);
		ok = ibk__mr_check_many(t, gen, &view, qp, hdrs, verdicts, n);
	} while (ibk_latch_read_retry(&t->latch, gen));
	return ok;
}

/* ------------------------------------------------------------------------
 * Subnet management agent
 *
 * What a port's SMA (IBA 14.2; NIC or switch firmware, or a soft stack)
 * does with the cached tables: the subnet manager writes the P_Key table
 * 32 entries at a time with SubnSet(P_KeyTable) and the GID table's GUIDs
 * 8 at a time with SubnSet(GUIDInfo), and reads them back with SubnGet.
 * Each applied block is one generation, like ibk_pkey_table_set(): every
 * reference taken before goes stale as after a change event, and a refill
 * holding a ticket from before is refused (it read the table before the
 * SM changed it). Neither the port state nor "awaiting refill" changes:
 * the SMA programs a port in INIT, before it is ARMED, and the block
 * reads answer in any state, because for the SMA the table is the
 * device. A table starts awaiting its first refill: at boot the firmware
 * refills it once from its defaults or NVRAM, then applies blocks.
 *
 * On native IB a GID is PortInfo:GidPrefix || GUIDInfo entry: a
 * SubnSet(PortInfo) with a new prefix rewrites every IB entry in one
 * generation (ibk_sma_apply_portinfo()), and GUIDInfo blocks compose
 * with the prefix PortInfo holds.
 *
 * The port counts M_Key violations beside the P_Key and Q_Key ones
 * (ibk_sma_mkey_check()); the traps 257 and 258 a dropped packet causes
 * come from the Port section's ibk_port_rx_packet(). The M_Key state
 * itself (struct ibk_mkey_state) is the SMA's, a single writer: it lives
 * beside the port, not in it.
 *
 *	int st = ibk_smp_request_status(mad, len);	// < 0: drop
 *
 *	if (st == 0 && ibk_sma_mkey_check(&port, &mkey, ibk_mad_method(mad),
 *			ibk_smp_mkey(mad), now_ns) == IBK_MKEY_VIOLATION)
 *		return send_trap_256(mad);		// no reply
 *	if (st == 0)
 *		st = ibk_sma_answer_table(&port, mad, len,
 *					  ibk_portinfo_gid_prefix(portinfo));
 *	if (st >= 0 && ibk_smp_make_reply(mad, (uint16_t)st) == IBK_OK)
 *		send(mad);
 *
 * API:
 *	ibk_pkey_table_apply_block(t, block, pkeys)
 *	ibk_pkey_table_read_block(t, block, pkeys)
 *	ibk_gid_table_apply_guid_block(t, block, prefix, guids)
 *	ibk_gid_table_apply_prefix(t, prefix)
 *	ibk_gid_table_read_guid_block(t, block, guids)
 *	ibk_sma_answer_table(port, smp, len, gid_prefix)
 *	ibk_sma_mkey_check(port, st, method, smp_mkey, now_ns)
 *	ibk_sma_fill_portinfo_counters(port, pi)
 *	ibk_sma_apply_portinfo(port, pi)
 * ------------------------------------------------------------------------ */

/* The number of blocks of 2^@log2 entries that table @h answers for: the
 * last one may run past its capacity. A shift, not a division: Cortex-M0
 * has no divide instruction (libgcc's __aeabi_uidiv). */
static inline uint32_t ibk__table_blocks(const struct ibk__table *h,
					 unsigned log2)
{
	return (h->capacity + (1u << log2) - 1) >> log2;
}

#define IBK__PKEY_BLOCK_LOG2	5	/* 32 P_Keys a block */
#define IBK__GUID_BLOCK_LOG2	3	/* 8 GUIDs a block */

/* Writer side: copy @c's entries of @block from @pkeys, up to capacity. */
static inline void ibk__pkey_put_block(struct ibk_pkey_table *t, unsigned c,
				       uint32_t block, const ibk_pkey_t *pkeys)
{
	uint32_t first = block * IBK_PKEY_BLOCK_ENTRIES, i;

	for (i = 0; i < IBK_PKEY_BLOCK_ENTRIES &&
		    first + i < t->hdr.capacity; i++)
		ibk__pkey_put(t, c, first + i, pkeys[i]);
}

/**
 * ibk_pkey_table_apply_block() - Applies SubnSet(P_KeyTable) to the P_Key
 * table
 * @t: the P_Key table
 * @block: the block number
 * @pkeys: the block's 32 P_Keys, host order
 *
 * Applies SubnSet(P_KeyTable) block @block: entries 32 x @block onwards from
 * @pkeys[0..31] as written (an invalid key, base 0, matches nothing and reads
 * back as written, as from the device), those beyond the capacity ignored, as
 * one generation that also refuses older refill tickets (see above).
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: IBK_OK; IBK_EINVAL for a NULL pointer; IBK_ERANGE, writing nothing,
 * if the block starts beyond the table (the SMA answers
 * IBK_MAD_STATUS_INVALID_FIELD, qib subn_set_pkeytable()).
 */
static inline int ibk_pkey_table_apply_block(struct ibk_pkey_table *t,
					     uint32_t block,
					     const ibk_pkey_t pkeys[IBK_PKEY_BLOCK_ENTRIES])
{
	if (!t || !pkeys)
		return IBK_EINVAL;
	if (block >= ibk__table_blocks(&t->hdr, IBK__PKEY_BLOCK_LOG2))
		return IBK_ERANGE;
	ibk_latch_write_begin(&t->hdr.latch);
	ibk__epoch_advance(&t->hdr);
	ibk__pkey_put_block(t, 0, block, pkeys);
	ibk_latch_write_switch(&t->hdr.latch);
	ibk__pkey_put_block(t, 1, block, pkeys);
	ibk_latch_write_end(&t->hdr.latch);
	return IBK_OK;
}

/**
 * ibk_pkey_table_read_block() - SubnGet(P_KeyTable) from the P_Key table
 * @t: the P_Key table
 * @block: the block number
 * @pkeys: receives the block's 32 P_Keys
 *
 * SubnGet(P_KeyTable) from the cache: block @block into @pkeys[0..31], one
 * generation, entries beyond the capacity 0x0000 (empty), in any port state
 * and awaiting a refill or not (see above).
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: IBK_OK; IBK_EINVAL for a NULL pointer; IBK_ERANGE if the block
 * starts beyond the table.
 */
static inline int
ibk_pkey_table_read_block(const struct ibk_pkey_table *t, uint32_t block,
			  ibk_pkey_t pkeys[IBK_PKEY_BLOCK_ENTRIES])
{
	uint32_t gen, first, i;
	unsigned c;

	if (!t || !pkeys)
		return IBK_EINVAL;
	if (block >= ibk__table_blocks(&t->hdr, IBK__PKEY_BLOCK_LOG2))
		return IBK_ERANGE;
	first = block * IBK_PKEY_BLOCK_ENTRIES;
	do {
		gen = ibk_latch_read_begin(&t->hdr.latch);
		c = ibk_latch_copy(gen);
		for (i = 0; i < IBK_PKEY_BLOCK_ENTRIES; i++)
			pkeys[i] = first + i < t->hdr.capacity ?
				 ibk__load(&t->cells[c][first + i].pkey,
					   relaxed) :
				 (ibk_pkey_t)IBK_PKEY_INVALID;
	} while (ibk_latch_read_retry(&t->hdr.latch, gen));
	return IBK_OK;
}

/* Writer side: copy @c's entries of GUIDInfo @block, but entry 0. */
static inline void ibk__gid_put_guid_block(struct ibk_gid_table *t,
					   unsigned c, uint32_t block,
					   uint64_t prefix,
					   const ibk_guid_t *guids)
{
	uint32_t first = block * IBK_GUID_BLOCK_ENTRIES, i, w[4];
	struct ibk_gid gid;

	for (i = 0; i < IBK_GUID_BLOCK_ENTRIES &&
		    first + i < t->hdr.capacity; i++) {
		if (first + i == 0)
			continue;	/* the port GUID: read-only */
		ibk_gid_set(guids[i] ? prefix : 0, guids[i], &gid);
		ibk__gid_to_words(&gid, w);
		ibk__gid_put(t, c, first + i, w, IBK_GID_TYPE_IB);
	}
}

/**
 * ibk_gid_table_apply_guid_block() - Applies SubnSet(GUIDInfo) to the GID
 * table
 * @t: the GID table
 * @block: the block number
 * @prefix: the subnet prefix (upper 64 bits), host order
 * @guids: the block's 8 GUIDs, host order
 *
 * Applies SubnSet(GUIDInfo) block @block to the GID table: entry 8 x @block +
 * i becomes GID @prefix || @guids[i] of type IB, or empty for a GUID of 0,
 * those beyond the capacity ignored; entry 0 is the port GUID and read-only
 * (qib subn_set_guidinfo()): its @guids value is ignored.
 *
 * One generation, as ibk_pkey_table_apply_block().
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: IBK_OK; IBK_EINVAL for a NULL pointer; IBK_ERANGE, writing nothing,
 * if the block starts beyond the table.
 */
static inline int ibk_gid_table_apply_guid_block(struct ibk_gid_table *t,
						 uint32_t block,
						 uint64_t prefix,
						 const ibk_guid_t guids[IBK_GUID_BLOCK_ENTRIES])
{
	if (!t || !guids)
		return IBK_EINVAL;
	if (block >= ibk__table_blocks(&t->hdr, IBK__GUID_BLOCK_LOG2))
		return IBK_ERANGE;
	ibk_latch_write_begin(&t->hdr.latch);
	ibk__epoch_advance(&t->hdr);
	ibk__gid_put_guid_block(t, 0, block, prefix, guids);
	ibk_latch_write_switch(&t->hdr.latch);
	ibk__gid_put_guid_block(t, 1, block, prefix, guids);
	ibk_latch_write_end(&t->hdr.latch);
	return IBK_OK;
}

/* True if copy @c's entry @i, whose words are @w, is a GID of type IB:
 * one the GID prefix composes (an empty entry is none). */
static inline bool ibk__gid_composed(const struct ibk_gid_table *t,
				     unsigned c, uint32_t i, uint32_t w[4])
{
	ibk__gid_cell_load(&t->cells[c][i], w);
	return !ibk__gid_words_zero(w) &&
	       ibk__load(&t->cells[c][i].type, relaxed) == IBK_GID_TYPE_IB;
}

/* Writer side: the number of composed entries whose prefix is not
 * @prefix; the two copies agree outside a write section. */
static inline uint32_t ibk__gid_prefix_changes(const struct ibk_gid_table *t,
					       uint64_t prefix)
{
	uint32_t i, n = 0, w[4];

	for (i = 0; i < t->hdr.capacity; i++)
		n += ibk__gid_composed(t, 0, i, w) &&
		     ibk__gid_words_prefix(w) != prefix;
	return n;
}

/* Writer side: copy @c's composed entries take @prefix; its index is
 * built again, every entry having moved. */
static inline void ibk__gid_put_prefix(struct ibk_gid_table *t, unsigned c,
				       uint64_t prefix)
{
	uint32_t i, w[4];

	for (i = 0; i < t->hdr.capacity; i++) {
		if (!ibk__gid_composed(t, c, i, w))
			continue;
		ibk__store(&t->cells[c][i].word[0],
			   ibk__swap32((uint32_t)(prefix >> 32)), relaxed);
		ibk__store(&t->cells[c][i].word[1],
			   ibk__swap32((uint32_t)(prefix & 0xffffffffu)), relaxed);
	}
	ibk__gid_reindex(t, c);
}

/**
 * ibk_gid_table_apply_prefix() - Applies PortInfo:GidPrefix to the GID table's
 * IB entries
 * @t: the GID table
 * @prefix: the subnet prefix (upper 64 bits), host order
 *
 * Applies PortInfo:GidPrefix @prefix to the GID table: every entry of type IB
 * becomes @prefix || its GUID, as qib and hfi1 compose a native port's GIDs
 * from the current prefix; empty and RoCE entries stay.
 *
 * If an entry changes, that is one generation and a change event, as a
 * GUIDInfo block is: every reference goes stale at once (the consumer
 * re-reads, as the Linux core's cache does on the CLIENT_REREGISTER that
 * follows a prefix change) and refills holding an older ticket are refused. A
 * GUIDInfo Set afterwards must pass the same prefix (ibk_sma_answer_table()
 * takes PortInfo's).
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: the number of entries that changed, 0 (nothing written, no
 * generation) when the table holds @prefix already, as on each sweep's
 * PortInfo Set; IBK_EINVAL for NULL @t.
 */
static inline int ibk_gid_table_apply_prefix(struct ibk_gid_table *t,
					     uint64_t prefix)
{
	uint32_t changes;

	if (!t)
		return IBK_EINVAL;
	changes = ibk__gid_prefix_changes(t, prefix);
	if (changes == 0)
		return 0;
	ibk_latch_write_begin(&t->hdr.latch);
	ibk__epoch_advance(&t->hdr);
	ibk__gid_put_prefix(t, 0, prefix);
	ibk_latch_write_switch(&t->hdr.latch);
	ibk__gid_put_prefix(t, 1, prefix);
	ibk_latch_write_end(&t->hdr.latch);
	return (int)changes;
}

/**
 * ibk_gid_table_read_guid_block() - SubnGet(GUIDInfo) from the GID table
 * @t: the GID table
 * @block: the block number
 * @guids: receives the block's 8 GUIDs
 *
 * SubnGet(GUIDInfo) from the cache: the GUIDs (low 64 bits) of entries 8 x
 * @block onwards into @guids[0..7], one generation, 0 for an empty entry or
 * one beyond the capacity, in any port state (see above).
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 * Return: IBK_OK; IBK_EINVAL for a NULL pointer; IBK_ERANGE if the block
 * starts beyond the table.
 */
static inline int
ibk_gid_table_read_guid_block(const struct ibk_gid_table *t, uint32_t block,
			      ibk_guid_t guids[IBK_GUID_BLOCK_ENTRIES])
{
	uint32_t gen, first, i, w[4];
	unsigned c;

	if (!t || !guids)
		return IBK_EINVAL;
	if (block >= ibk__table_blocks(&t->hdr, IBK__GUID_BLOCK_LOG2))
		return IBK_ERANGE;
	first = block * IBK_GUID_BLOCK_ENTRIES;
	do {
		gen = ibk_latch_read_begin(&t->hdr.latch);
		c = ibk_latch_copy(gen);
		for (i = 0; i < IBK_GUID_BLOCK_ENTRIES; i++) {
			w[2] = w[3] = 0;
			if (first + i < t->hdr.capacity)
				ibk__gid_cell_load(&t->cells[c][first + i],
						   w);
			guids[i] = ibk__gid_words_guid(w);
		}
	} while (ibk_latch_read_retry(&t->hdr.latch, gen));
	return IBK_OK;
}

/* P_KeyTable Get or Set on @port's table; the MAD status. */
static inline int ibk__sma_pkey_table(struct ibk_port *port, uint8_t *smp)
{
	ibk_pkey_t keys[IBK_PKEY_BLOCK_ENTRIES];
	uint32_t block = ibk_pkeytable_mod_block(ibk_mad_attr_mod(smp));
	uint8_t *data = ibk_smp_data_mut(smp);

	if (ibk_mad_method(smp) == IBK_MAD_METHOD_SET) {
		ibk_pkey_block_decode(data, keys);
		if (ibk_pkey_table_apply_block(&port->pkeys, block, keys) !=
		    IBK_OK)
			return IBK_MAD_STATUS_INVALID_FIELD;
	}
	if (ibk_pkey_table_read_block(&port->pkeys, block, keys) != IBK_OK)
		return IBK_MAD_STATUS_INVALID_FIELD;
	ibk_pkey_block_encode(keys, data);
	return IBK_MAD_STATUS_OK;
}

/* GUIDInfo Get or Set on @port's GID table; the MAD status. */
static inline int ibk__sma_guid_info(struct ibk_port *port, uint8_t *smp,
				     uint64_t prefix)
{
	ibk_guid_t guids[IBK_GUID_BLOCK_ENTRIES];
	uint32_t mod = ibk_mad_attr_mod(smp);
	uint8_t *data = ibk_smp_data_mut(smp);

	if (mod != ibk_guidinfo_mod_block(mod))
		return IBK_MAD_STATUS_INVALID_FIELD;
	if (ibk_mad_method(smp) == IBK_MAD_METHOD_SET) {
		ibk_guid_block_decode(data, guids);
		if (ibk_gid_table_apply_guid_block(&port->gids, mod, prefix,
						   guids) != IBK_OK)
			return IBK_MAD_STATUS_INVALID_FIELD;
	}
	if (ibk_gid_table_read_guid_block(&port->gids, mod, guids) != IBK_OK)
		return IBK_MAD_STATUS_INVALID_FIELD;
	ibk_guid_block_encode(guids, data);
	return IBK_MAD_STATUS_OK;
}

/**
 * ibk_sma_answer_table() - Answers a SubnGet or SubnSet of P_KeyTable or
 * GUIDInfo
 * @port: the port
 * @smp: the SMP, 256 bytes, any alignment, changed in place
 * @len: @smp's length in bytes
 * @gid_prefix: the port's subnet prefix, host order
 *
 * Answers a SubnGet or SubnSet of P_KeyTable or GUIDInfo, the SMP @smp of @len
 * bytes, against @port's tables, after the caller's M_Key check: a Set applies
 * the block (GUIDInfo with GID prefix @gid_prefix, PortInfo's) and both leave
 * the resulting block in the SMP's data, as qib answers a Set with the Get of
 * the block.
 *
 * Or IBK_EINVAL, changing nothing, for a NULL pointer or an SMP that
 * ibk_smp_request_status() does not pass (a malformed length, a bad version)
 * or that is no Get or Set. A switch picks @port by the P_KeyTable modifier's
 * port field (ibk_pkeytable_mod_port()) first; a CA ignores that field, as
 * this function does.
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table. (a Get only reads)
 * Return: the MAD status for ibk_smp_make_reply(): IBK_MAD_STATUS_OK;
 * IBK_MAD_STATUS_INVALID_FIELD, with the data zeroed, for a block beyond the
 * table or a GUIDInfo modifier above 255; IBK_MAD_STATUS_UNSUP_METHOD_ATTR,
 * leaving the SMP untouched, for another attribute (the caller may answer it
 * itself).
 */
static inline int ibk_sma_answer_table(struct ibk_port *port, void *smp,
				       size_t len, uint64_t gid_prefix)
{
	uint8_t *p = (uint8_t *)smp;
	uint8_t method;
	int st;

	if (!port || ibk_smp_request_status(smp, len) != 0)
		return IBK_EINVAL;
	method = ibk_mad_method(smp);
	if (method != IBK_MAD_METHOD_GET && method != IBK_MAD_METHOD_SET)
		return IBK_EINVAL;
	switch (ibk_mad_attr_id(smp)) {
	case IBK_SMP_ATTR_PKEY_TABLE:
		st = ibk__sma_pkey_table(port, p);
		break;
	case IBK_SMP_ATTR_GUID_INFO:
		st = ibk__sma_guid_info(port, p, gid_prefix);
		break;
	default:
		return IBK_MAD_STATUS_UNSUP_METHOD_ATTR;
	}
	if (st != IBK_MAD_STATUS_OK) {
		unsigned i;

		for (i = 0; i < IBK_SMP_DATA_LEN; i++)
			p[IBK_SMP_DATA_OFFSET + i] = 0;
	}
	return st;
}

/**
 * ibk_sma_mkey_check() - The SMA's M_Key check, counting violations in the
 * port
 * @port: the port
 * @st: the port's M_Key state (key, protect bits, lease), updated by the check
 * @method: the MAD method
 * @smp_mkey: the SMP's M_Key, host order
 * @now_ns: the current time in nanoseconds, any monotonic clock
 *
 * The M_Key check of ibk_mkey_check() on the SMA's state *@st, counting a
 * violation in @port's M_KeyViolations (16 bits, stopping at 0xffff, as qib
 * check_mkey() counts).
 *
 * Every pointer must be valid.
 *
 * Context: Any context; the caller serialises the uses of one @st (one SMA per
 * port).
 * Return: the verdict of ibk_mkey_check().
 */
static inline enum ibk_mkey_verdict
ibk_sma_mkey_check(struct ibk_port *port, struct ibk_mkey_state *st,
		   uint8_t method, uint64_t smp_mkey, uint64_t now_ns)
{
	enum ibk_mkey_verdict v = ibk_mkey_check(st, method, smp_mkey, now_ns);

	if (v == IBK_MKEY_VIOLATION)
		ibk_counter16_inc(&port->mkey_violations);
	return v;
}

/**
 * ibk_sma_fill_portinfo_counters() - Writes the port's violation counters into
 * PortInfo
 * @port: the port
 * @pi: a PortInfo attribute to write, 64 bytes, any alignment
 *
 * Writes @port's three violation counters into the PortInfo at @pi, for a
 * SubnGet(PortInfo) answer.
 *
 * @port and @pi must be valid.
 *
 * Context: Any context, interrupt handlers included: lock-free, never waits
 * for a writer.
 */
static inline void ibk_sma_fill_portinfo_counters(const struct ibk_port *port,
						  void *pi)
{
	ibk_portinfo_set_mkey_violations(pi,
		ibk_counter16_read(&port->mkey_violations));
	ibk_portinfo_set_pkey_violations(pi,
		ibk_counter16_read(&port->pkey_violations));
	ibk_portinfo_set_qkey_violations(pi,
		ibk_counter16_read(&port->qkey_violations));
}

/**
 * ibk_sma_apply_portinfo() - Applies what the cache holds of a
 * SubnSet(PortInfo)
 * @port: the port
 * @pi: a PortInfo attribute, 64 bytes, any alignment
 *
 * What of a SubnSet(PortInfo) that passed the M_Key check the port's cache
 * holds (qib subn_set_portinfo()): each violation counter whose field in the
 * PortInfo at @pi is 0 is zeroed, the others are left; GidPrefix goes to every
 * IB entry of the GID table (ibk_gid_table_apply_prefix()).
 *
 * M_Key, its lease and the rest of PortInfo are the caller's.
 *
 * Context: Any context that may spin: waits while another writer of the same
 * table holds its lock word, never for a reader. Not from an interrupt handler
 * that may have interrupted a writer of the same table.
 * Return: the number of GID entries that changed; IBK_EINVAL for a NULL
 * pointer.
 */
static inline int ibk_sma_apply_portinfo(struct ibk_port *port,
					 const void *pi)
{
	if (!port || !pi)
		return IBK_EINVAL;
	if (ibk_portinfo_mkey_violations(pi) == 0)
		ibk_counter16_reset(&port->mkey_violations);
	if (ibk_portinfo_pkey_violations(pi) == 0)
		ibk_counter16_reset(&port->pkey_violations);
	if (ibk_portinfo_qkey_violations(pi) == 0)
		ibk_counter16_reset(&port->qkey_violations);
	return ibk_gid_table_apply_prefix(&port->gids,
					  ibk_portinfo_gid_prefix(pi));
}

/* Calls in 0.2's parameter order do not compile (C11): see ib_keys.h's
 * last section. Each burst's and snapshot's count is checked. */
#ifdef IBK__INTEGER_ARG
#define ibk_port_rx_burst(port, qp, hdrs, n, verdicts)			\
	ibk_port_rx_burst(port, qp, hdrs, IBK__INTEGER_ARG(n), verdicts)
#define ibk_port_rx_mixed(port, qps, hdrs, n, verdicts, pkey_index)	\
	ibk_port_rx_mixed(port, qps, hdrs, IBK__INTEGER_ARG(n), verdicts, \
			  pkey_index)
#define ibk_mr_table_check_burst(t, qp, hdrs, n, verdicts)		\
	ibk_mr_table_check_burst(t, qp, hdrs, IBK__INTEGER_ARG(n), verdicts)
#define ibk_pkey_table_snapshot(t, n, pkeys, generation)		\
	ibk_pkey_table_snapshot(t, IBK__INTEGER_ARG(n), pkeys, generation)
#define ibk_gid_table_snapshot(t, n, entries, generation)		\
	ibk_gid_table_snapshot(t, IBK__INTEGER_ARG(n), entries, generation)
#endif

#endif /* IBKEYS_IB_TABLES_H */
