/* SPDX-License-Identifier: MIT */
/*
 * cases_latch.c - what the latch costs and buys in a P_Key table, beside a
 * pthread_rwlock cache of the same table and the peers (peers.h):
 *
 *   read_latency  single reads (get, find) of a 65536-entry table, each
 *                 timed on its own, while a writer refills the whole table
 *                 back to back: the worst read and the tail, not ns/op;
 *                 the peers' gets beside
 *   refill_N      the writer's cost of one full refill of an N-entry table
 *                 (both copies; a peer's whole write: a fresh copy and a
 *                 grace period for RCU, a write section for a sequence
 *                 lock), N 16, 128, 4096 and 65536
 *   set_one_N     the writer's cost of one entry set (the same), N as for
 *                 refill_N: a set's cost must not grow with N
 *   cached_get    cached_read_1t's gets in one thread and no writer, so
 *                 that ibk-bench-proc offers them (callgrind counts each
 *                 side's instructions per read, the peers' included)
 *
 * This file counts the latch's read retries (IBK_LATCH_RETRY_HOOK) and is
 * the only one that does: the other cases' reads stay as users build them.
 * The hook runs only when a read is redone, which cached_get's never are.
 */
#include "bench.h"
#include "baseline.h"
#include "peers.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* Read sections this thread redid: each reader reports its own. */
static _Thread_local uint64_t latch_retries;
#define IBK_LATCH_RETRY_HOOK() ((void)latch_retries++)

#include "ib_tables.h"
#include "variants.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define LAT_TSC 1
#endif

#define LATCH_LEN 65536		/* read_latency's entries: the most there are */
#define LATCH_INPUTS 65536	/* random indexes and keys, walked in order */
#define CHECKED_INPUTS 1024	/* lib == base checked on these */
#define PEER_CHECKED_KEYS 64	/* a peer's finds scan: fewer of them */

/* ------------------------------------------------------------------------
 * The tables: the latch's and the rwlock cache, both c->param entries
 * ------------------------------------------------------------------------ */

struct latch;

/* A peer's cache of the same table, and its sets done (set_one_N). */
struct latch_peer {
	const struct bench_peer *ops;
	void *cache;
	struct latch *k;
	uint64_t sets;
};

struct latch {
	struct ibk_pkey_table t;	/* first: 64-byte aligned */
	_Alignas(64) struct base_pkey_cache cache;	/* own cache line */
	struct ibk_pkey_cell *cells;
	struct ibk_hash_slot *slots;
	uint32_t len;			/* entries: the case's param */
	ibk_pkey_t *contents[2];	/* what writers refill, in turn */
	uint32_t *index;		/* LATCH_INPUTS random indexes */
	ibk_pkey_t *keys;		/* LATCH_INPUTS random valid keys */
	uint64_t sets[2];		/* set_one_N: sets done, lib and base */
	int cpu[2];			/* reader's and writer's CPU, or -1 */
	struct latch_peer peers[BENCH_MAX_PEERS];
	unsigned npeers;
};

/* The bench has nothing to fall back to: says what failed and exits. */
static void latch_fail(const char *what)
{
	fprintf(stderr, "bench: %s\n", what);
	exit(2);
}

/* The first two CPUs this process may run on, into cpu[]; -1 for none
 * (fewer than two: nothing is pinned). */
static void latch_cpus(int cpu[2])
{
	cpu_set_t set;
	int i, n = 0;

	cpu[0] = cpu[1] = -1;
	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	for (i = 0; i < CPU_SETSIZE && n < 2; i++)
		if (CPU_ISSET(i, &set))
			cpu[n++] = i;
	if (n < 2)
		cpu[0] = cpu[1] = -1;
}

/*
 * Both tables and every peer hold contents[0]: random valid keys (every
 * base about twice, random membership). The rwlock is writer-preferring,
 * as in cached_read_* (the kernel's rwlock lets a waiting writer in ahead
 * of new readers).
 */
static void *latch_setup(const struct bench_case *c)
{
	struct latch *k = bench_alloc(sizeof(*k));
	struct bench_rng r = { 0x1b1b0060 };
	pthread_rwlockattr_t attr;
	uint32_t i;

	k->len = (uint32_t)c->param;
	k->cells = bench_alloc(IBK_PKEY_CELLS(k->len) * sizeof(*k->cells));
	k->slots = bench_alloc(IBK_PKEY_HASH_SLOTS(k->len) *
			       sizeof(*k->slots));
	k->index = bench_alloc(LATCH_INPUTS * sizeof(*k->index));
	k->keys = bench_alloc(LATCH_INPUTS * sizeof(*k->keys));
	for (i = 0; i < 2; i++) {
		uint32_t j;

		k->contents[i] = bench_alloc(k->len * sizeof(ibk_pkey_t));
		for (j = 0; j < k->len; j++)
			k->contents[i][j] = bench_random_pkey(&r);
	}
	for (i = 0; i < LATCH_INPUTS; i++) {
		k->index[i] = bench_rng_below(&r, k->len);
		k->keys[i] = bench_random_pkey(&r);
	}
	if (ibk_pkey_table_init(&k->t, k->cells, k->len, k->slots,
				IBK_PKEY_HASH_SLOTS(k->len)) ||
	    ibk_pkey_table_set_state(&k->t, IBK_PORT_ACTIVE) ||
	    ibk_pkey_table_refill(&k->t, k->contents[0], k->len,
				  ibk_pkey_table_refill_ticket(&k->t)))
		latch_fail("cannot set up the latch's P_Key table");
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr,
			PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&k->cache.lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	k->cache.table = bench_alloc(k->len * sizeof(uint16_t));
	base_cache_refill(&k->cache, k->contents[0], k->len);
	for (i = 0; i < bench_npeers; i++) {
		struct latch_peer *p = &k->peers[k->npeers++];

		p->ops = bench_peers[i];
		p->cache = p->ops->create(k->contents[0], k->len);
		p->k = k;
	}
	latch_cpus(k->cpu);
	return k;
}

/* Frees what latch_setup() allocated. */
static void latch_teardown(void *ctx)
{
	struct latch *k = ctx;
	unsigned i;

	for (i = 0; i < k->npeers; i++)
		k->peers[i].ops->destroy(k->peers[i].cache);
	pthread_rwlock_destroy(&k->cache.lock);
	free(k->cache.table);
	free(k->cells);
	free(k->slots);
	free(k->contents[0]);
	free(k->contents[1]);
	free(k->index);
	free(k->keys);
	free(k);
}

/* Both tables give the same entry at every index, and every peer too,
 * with the library's index for the first @nkeys keys. */
static int latch_same_tables(struct latch *k, size_t nkeys)
{
	uint32_t i;

	for (i = 0; i < k->len; i++) {
		ibk_pkey_t lib = 0;
		uint16_t base = 0;

		if (ibk_pkey_table_get(&k->t, i, &lib) ||
		    base_cache_get(&k->cache, i, &base) || lib != base)
			return -1;
	}
	for (i = 0; i < k->npeers; i++)
		if (bench_peer_agrees(k->peers[i].ops, k->peers[i].cache,
				      &k->t, k->len, k->keys, nkeys))
			return -1;
	return 0;
}

/* A find's index from the library and the baseline agree: the same index,
 * or IBK_ENOENT where the baseline found nothing. */
static bool latch_same_find(int lib, int base)
{
	return lib == base || (lib == IBK_ENOENT && base < 0);
}

/* ------------------------------------------------------------------------
 * The reader's clock
 *
 * Each read is timed alone, so the clock must cost little and be steady:
 * on x86 the TSC, read with lfence on both sides so that the read cannot
 * leak out of the timed region, at a rate calibrated against
 * CLOCK_MONOTONIC, where the CPU says it ticks at a constant rate across
 * power states; elsewhere CLOCK_MONOTONIC itself (a vDSO call).
 * ------------------------------------------------------------------------ */

static bool lat_use_tsc;
static double lat_ticks_per_ns = 1.0;
static double lat_step_ns;		/* the smallest step the clock makes */

#ifdef LAT_TSC
/* The CPU's flags promise an invariant TSC: constant_tsc and nonstop_tsc. */
static bool lat_tsc_invariant(void)
{
	static char line[16384];
	FILE *f = fopen("/proc/cpuinfo", "r");
	bool ok = false;

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "flags", 5)) {
			ok = strstr(line, " constant_tsc") &&
			     strstr(line, " nonstop_tsc");
			break;
		}
	}
	if (f)
		fclose(f);
	return ok;
}
#endif

/* Now, in clock ticks. */
static inline uint64_t lat_ticks(void)
{
#ifdef LAT_TSC
	if (lat_use_tsc) {
		uint64_t t;

		_mm_lfence();
		t = __rdtsc();
		_mm_lfence();
		return t;
	}
#endif
	return bench_now_ns();
}

/* Greatest common divisor; gcd(a, 0) = a. */
static uint64_t lat_gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t r = a % b;

		a = b;
		b = r;
	}
	return a;
}

/*
 * Picks the clock and, for the TSC, measures its rate over 50 ms; then the
 * step it moves in, the greatest common divisor of the gaps between
 * consecutive reads, which is not always one tick (AMD's TSC moves every
 * 10 ns, by 10 ns of ticks): no figure is finer than that.
 */
static void lat_clock_init(void)
{
	uint64_t t0, t1, step = 0;
	unsigned i;
#ifdef LAT_TSC
	struct timespec pause = { 0, 50000000 };
	uint64_t ns0, ns1;

	if (!lat_use_tsc && lat_tsc_invariant()) {
		ns0 = bench_now_ns();
		t0 = __rdtsc();
		nanosleep(&pause, NULL);
		t1 = __rdtsc();
		ns1 = bench_now_ns();
		lat_ticks_per_ns = (double)(t1 - t0) / (double)(ns1 - ns0);
		lat_use_tsc = true;
	}
#endif
	for (i = 0; i < 1000; i++) {
		t0 = lat_ticks();
		t1 = lat_ticks();
		step = lat_gcd(t1 - t0, step);
	}
	lat_step_ns = (double)step / lat_ticks_per_ns;
}

/* ------------------------------------------------------------------------
 * Writers: refill the whole table back to back, no pause in between
 * ------------------------------------------------------------------------ */

/* A refill of the table @obj stands for: the latch's, the rwlock cache's
 * (both struct latch) or a peer's (struct latch_peer). */
typedef void (*latch_refill_fn)(void *obj, const ibk_pkey_t *keys);

/* One full refill of the latch's table: both copies. */
static void latch_refill_lib(void *obj, const ibk_pkey_t *keys)
{
	struct latch *k = obj;

	if (ibk_pkey_table_refill(&k->t, keys, k->len,
				  ibk_pkey_table_refill_ticket(&k->t)))
		latch_fail("P_Key refill failed");
}

/* One full refill of the rwlock cache: a memcpy under the write lock. */
static void latch_refill_base(void *obj, const ibk_pkey_t *keys)
{
	struct latch *k = obj;

	base_cache_refill(&k->cache, keys, k->len);
}

/* One full refill of a peer's cache, its library's way. */
static void latch_refill_peer(void *obj, const ibk_pkey_t *keys)
{
	struct latch_peer *p = obj;

	p->ops->refill(p->cache, keys);
}

/* A writer thread and how many refills it has completed. */
struct latch_writer {
	pthread_t thread;
	struct latch *k;
	void *obj;			/* what refill() refills */
	latch_refill_fn refill;
	atomic_uint_fast64_t refills;
	atomic_bool stop;
};

/* Refills with the two contents in turn until told to stop. */
static void *latch_writer_main(void *arg)
{
	struct latch_writer *w = arg;
	uint64_t n = 0;

	while (!atomic_load_explicit(&w->stop, memory_order_relaxed)) {
		w->refill(w->obj, w->k->contents[n & 1]);
		atomic_store_explicit(&w->refills, ++n, memory_order_relaxed);
	}
	return NULL;
}

/* Starts @fn on @cpu (-1: anywhere; so too if pinning is refused). */
static void latch_spawn(pthread_t *thread, void *(*fn)(void *), void *arg,
			int cpu)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	pthread_attr_init(&attr);
	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	err = pthread_create(thread, &attr, fn, arg);
	if (err && cpu >= 0)
		err = pthread_create(thread, NULL, fn, arg);
	pthread_attr_destroy(&attr);
	if (err)
		latch_fail("cannot start a thread");
}

/* ------------------------------------------------------------------------
 * read_latency: single reads, each timed alone, under a back-to-back writer
 *
 * What one read's figure holds: the read itself (an indirect call, the
 * read section, a retry if the latch moved under it; for the rwlock, the
 * lock and any wait for the writer), the clock's own cost (the _floor rows
 * time an empty call the same way), and whatever the machine did to the
 * reader meanwhile: an interrupt on its CPU, or the OS switching it out,
 * lands in the max. Batches of reads in which getrusage() saw an
 * involuntary context switch of the reader are left out of the _nocsw
 * rows (each statistic has one beside the raw one); interrupts that
 * switch nothing stay in, and so do voluntary switches (an rwlock reader
 * sleeping on the lock is the baseline's cost, not the machine's).
 *
 * The library's reads also count, each, how many times the read section
 * was redone (IBK_LATCH_RETRY_HOOK) against the latch's moves during it:
 * its count, read just before and just after the timed read (outside it),
 * moves by one per flip, and an update completes at the flip that makes
 * it even again (ibk_latch_write_switch()). A retry needs a flip in its
 * own attempt, so retries never exceed the moves; they exceed the updates
 * completed when a read is redone at an update's first flip (none
 * completed yet), or at both flips of one update (an attempt outlasting
 * the writing of a whole copy: a reader switched out or interrupted).
 *
 * Pinned: the reader on one CPU, the writer on another, when the process
 * may use two. Unpinned, the scheduler may migrate the reader mid-read or
 * stack it on the writer's CPU for a while; pinned, what is left in the
 * max is the machine's doing on the reader's own CPU, which the _floor
 * rows show. Reads run in LAT_ROUNDS rounds, library and baseline in
 * turn, each round with a fresh writer on the reader's table only.
 * ------------------------------------------------------------------------ */

#define LAT_BATCH 1024			/* reads between getrusage() calls */
#define LAT_ROUNDS 4
#define LAT_READS_PER_SAMPLE 200000	/* reads per side: samples * this */
#define LAT_BUDGET_PER_SAMPLE 10	/* time bound: samples * ms * this */

/* The reads, called through a pointer: the @i-th read of a run of the
 * table @obj stands for (as for latch_refill_fn). */
typedef uint64_t (*lat_read_fn)(void *obj, uint32_t i);

/* The latch's get of a random index. */
__attribute__((noinline))
static uint64_t lat_lib_get(void *obj, uint32_t i)
{
	struct latch *k = obj;
	ibk_pkey_t pkey = 0;

	return (uint64_t)ibk_pkey_table_get(&k->t,
			k->index[i % LATCH_INPUTS], &pkey) + pkey;
}

/* The rwlock cache's get: rdlock, read, unlock. */
__attribute__((noinline))
static uint64_t lat_base_get(void *obj, uint32_t i)
{
	struct latch *k = obj;
	uint16_t pkey = 0;

	return (uint64_t)base_cache_get(&k->cache,
			k->index[i % LATCH_INPUTS], &pkey) + pkey;
}

/* The latch's find of a random valid key (one hash probe run). */
__attribute__((noinline))
static uint64_t lat_lib_find(void *obj, uint32_t i)
{
	struct latch *k = obj;

	return (uint64_t)ibk_pkey_table_find(&k->t, k->keys[i % LATCH_INPUTS],
					     NULL);
}

/* The rwlock cache's find: rdlock, linear scan, unlock. */
__attribute__((noinline))
static uint64_t lat_base_find(void *obj, uint32_t i)
{
	struct latch *k = obj;

	return (uint64_t)base_cache_find(&k->cache,
					 k->keys[i % LATCH_INPUTS]);
}

/* A peer's get, through its ops: one call more than the others. */
__attribute__((noinline))
static uint64_t lat_peer_get(void *obj, uint32_t i)
{
	struct latch_peer *p = obj;
	uint16_t pkey = 0;

	return (uint64_t)p->ops->get(p->cache,
			p->k->index[i % LATCH_INPUTS], &pkey) + pkey;
}

/* The floor: the same timed call, reading nothing. */
__attribute__((noinline))
static uint64_t lat_nothing(void *obj, uint32_t i)
{
	(void)obj;
	BENCH_BARRIER();
	return i;
}

/* One side of one kind of read, over all rounds. */
struct lat_run {
	struct latch *k;
	void *obj;			/* what read() reads, refill() refills */
	const struct bench_peer *peer;	/* its reader hooks, or NULL */
	lat_read_fn read;
	latch_refill_fn refill;
	const struct ibk_latch *latch;	/* the library's, else NULL */
	uint32_t *ticks;		/* one per read */
	uint32_t *nocsw_ticks;		/* those of batches not switched out */
	uint64_t n;			/* reads done */
	uint64_t until;			/* this round: stop at this many */
	uint64_t deadline_ns;		/* or at this time */
	uint64_t nocsw_reads;
	uint64_t nivcsw, nvcsw;
	uint64_t retried, retries;
	uint64_t max_retries;		/* the most one read redid */
	int64_t max_over_updates;	/* most retries - updates completed */
	int64_t max_over_moves;		/* most retries - the count's moves */
	uint64_t writes;
	uint64_t read_ns;
	uint64_t sum;
};

/* A peer's reader hook, if it has one. */
static void lat_hook(void (*hook)(void))
{
	if (hook)
		hook();
}

/* The latch's count now, or 0 for a side without one. */
static uint32_t lat_count(const struct ibk_latch *latch)
{
	return latch ? ibk_latch_read_begin(latch) : 0;
}

/* The greater of *@max and @v. */
static void lat_keep_max(int64_t *max, int64_t v)
{
	*max = v > *max ? v : *max;
}

/* One read's retries against the latch's moves between counts @c0 and
 * @c1 and the updates completed meanwhile: an update completes when a
 * flip makes the count even, so those number c1 / 2 - c0 / 2 (the count
 * does not wrap in a run). Keeps the worst of each. */
static void lat_retries(struct lat_run *r, uint64_t retries, uint32_t c0,
			uint32_t c1)
{
	r->retried += retries != 0;
	if (retries > r->max_retries)
		r->max_retries = retries;
	lat_keep_max(&r->max_over_updates,
		     (int64_t)retries - (int64_t)(c1 / 2 - c0 / 2));
	lat_keep_max(&r->max_over_moves, (int64_t)retries - (int64_t)(c1 - c0));
}

/* Times reads one by one, a batch at a time, until the round's count or
 * deadline; getrusage() around each batch tells if the OS switched the
 * reader out during it, and a batch it did not goes to nocsw_ticks too.
 * A peer's reader registers with its library first and, for QSBR,
 * reports a quiescent state after each batch. */
static void *lat_reader_main(void *arg)
{
	struct lat_run *r = arg;
	const struct bench_peer *peer = r->peer;
	uint64_t start = bench_now_ns(), now = start;
	struct rusage ru0, ru1;

	latch_retries = 0;
	if (peer)
		lat_hook(peer->online);
	while (r->n < r->until && now < r->deadline_ns) {
		uint64_t end = r->n + LAT_BATCH < r->until ?
			       r->n + LAT_BATCH : r->until;
		uint64_t batch = end - r->n, first = r->n;

		getrusage(RUSAGE_THREAD, &ru0);
		for (; r->n < end; r->n++) {
			uint64_t before = latch_retries, t0, t1;
			uint32_t c0 = lat_count(r->latch), c1;

			t0 = lat_ticks();
			r->sum += r->read(r->obj, (uint32_t)r->n);
			t1 = lat_ticks();
			c1 = lat_count(r->latch);
			t1 -= t0;
			r->ticks[r->n] = t1 < UINT32_MAX ? (uint32_t)t1 :
				UINT32_MAX;
			lat_retries(r, latch_retries - before, c0, c1);
		}
		getrusage(RUSAGE_THREAD, &ru1);
		r->nivcsw += (uint64_t)(ru1.ru_nivcsw - ru0.ru_nivcsw);
		r->nvcsw += (uint64_t)(ru1.ru_nvcsw - ru0.ru_nvcsw);
		if (ru1.ru_nivcsw == ru0.ru_nivcsw) {
			memcpy(r->nocsw_ticks + r->nocsw_reads,
			       r->ticks + first, batch * sizeof(*r->ticks));
			r->nocsw_reads += batch;
		}
		if (peer)
			lat_hook(peer->quiesce);
		now = bench_now_ns();
	}
	if (peer) {
		lat_hook(peer->offline);
		lat_hook(peer->exit);
	}
	r->retries += latch_retries;
	r->read_ns += now - start;
	return NULL;
}

/* One round: a writer refilling back to back, and the reader until @until
 * reads or @budget_ns. */
static void lat_round(struct lat_run *r, uint64_t until, double budget_ns)
{
	struct latch *k = r->k;
	struct latch_writer w = { .k = k, .obj = r->obj, .refill = r->refill };
	struct timespec poll = { 0, 100000 };
	pthread_t reader;
	uint64_t first;

	latch_spawn(&w.thread, latch_writer_main, &w, k->cpu[1]);
	while (atomic_load(&w.refills) == 0)
		nanosleep(&poll, NULL);
	r->until = until;
	first = atomic_load(&w.refills);
	r->deadline_ns = bench_now_ns() + (uint64_t)budget_ns;
	latch_spawn(&reader, lat_reader_main, r, k->cpu[0]);
	pthread_join(reader, NULL);
	r->writes += atomic_load(&w.refills) - first;
	atomic_store(&w.stop, true);
	pthread_join(w.thread, NULL);
}

/* Sorts @a[0..@n-1], @tmp as long: LSD radix sort, two 16-bit digits. */
static void lat_sort(uint32_t *a, uint32_t *tmp, uint64_t n)
{
	uint64_t *start = bench_alloc(65536 * sizeof(*start));
	unsigned shift, d;
	uint64_t i, sum;

	for (shift = 0; shift < 32; shift += 16) {
		memset(start, 0, 65536 * sizeof(*start));
		for (i = 0; i < n; i++)
			start[(a[i] >> shift) & 0xffff]++;
		for (d = 0, sum = 0; d < 65536; d++) {
			uint64_t count = start[d];

			start[d] = sum;
			sum += count;
		}
		for (i = 0; i < n; i++)
			tmp[start[(a[i] >> shift) & 0xffff]++] = a[i];
		memcpy(a, tmp, n * sizeof(*a));
	}
	free(start);
}

/* The nearest-rank quantile @num / @den of the sorted @a[0..@n-1], in ns. */
static double lat_quantile(const uint32_t *a, uint64_t n, uint64_t num,
			   uint64_t den)
{
	uint64_t rank = (n * num + den - 1) / den;

	return (double)a[rank ? rank - 1 : 0] / lat_ticks_per_ns;
}

/* The statistics of the rows, from @n sorted ticks @a. */
static void lat_tail(const uint32_t *a, uint64_t n, struct bench_tail *out)
{
	if (!n)
		return;
	out->median_ns = lat_quantile(a, n, 1, 2);
	out->p99_ns = lat_quantile(a, n, 99, 100);
	out->p9999_ns = lat_quantile(a, n, 9999, 10000);
	out->max_ns = (double)a[n - 1] / lat_ticks_per_ns;
}

/* A run's distribution in ns (sorts its ticks, @tmp as scratch). */
static void lat_stats(struct lat_run *r, uint32_t *tmp,
		      struct bench_latency *out)
{
	unsigned i;

	memset(out, 0, sizeof(*out));
	out->reads = r->n;
	out->nocsw_reads = r->nocsw_reads;
	out->nivcsw = r->nivcsw;
	out->nvcsw = r->nvcsw;
	out->retried = r->retried;
	out->retries = r->retries;
	out->max_retries = r->max_retries;
	out->max_over_updates = r->max_over_updates;
	out->max_over_moves = r->max_over_moves;
	out->writes = r->writes;
	out->seconds = (double)r->read_ns / 1e9;
	lat_sort(r->nocsw_ticks, tmp, r->nocsw_reads);
	lat_tail(r->nocsw_ticks, r->nocsw_reads, &out->nocsw);
	if (!r->n)
		return;
	lat_sort(r->ticks, tmp, r->n);
	lat_tail(r->ticks, r->n, &out->all);
	for (i = 0; i < BENCH_QUANTILES; i++)
		out->quantile_ns[i] = lat_quantile(r->ticks, r->n,
						   bench_quantile_ppm[i],
						   1000000);
	while (out->over_2us < r->n &&
	       r->ticks[r->n - 1 - out->over_2us] > 2000 * lat_ticks_per_ns)
		out->over_2us++;
	bench_consume(r->sum);
}

/* A kind of read: its rows' suffix, the baseline's name, both reads, and
 * whether the peers' gets are timed beside (their finds are not: a 65536-
 * entry scan outlasts a sequence lock's gap between back-to-back writes,
 * and its reader would retry for ever). */
struct lat_kind {
	const char *suffix;
	const char *base_name;
	lat_read_fn lib, base;
	bool peers;
};

static const struct lat_kind lat_kinds[] = {
	{ "", "pthread_rwlock", lat_lib_get, lat_base_get, true },
	{ "_find", "rwlock_scan", lat_lib_find, lat_base_find, false },
	{ "_floor", "pthread_rwlock", lat_nothing, lat_nothing, false },
};

_Static_assert(sizeof(lat_kinds) / sizeof(lat_kinds[0]) <=
	       BENCH_LATENCY_KINDS, "more kinds of read than rows for them");

/* The runs of kind @kind: lib, base, then each peer's get if the kind
 * has them; returns how many. */
static unsigned lat_runs(struct latch *k, const struct lat_kind *kind,
			 struct lat_run *runs, uint32_t *const *ticks)
{
	unsigned n = 2, p;

	runs[0] = (struct lat_run){ .k = k, .obj = k, .read = kind->lib,
				    .refill = latch_refill_lib,
				    .latch = &k->t.hdr.latch };
	runs[1] = (struct lat_run){ .k = k, .obj = k, .read = kind->base,
				    .refill = latch_refill_base };
	for (p = 0; kind->peers && p < k->npeers; p++, n++)
		runs[n] = (struct lat_run){ .k = k, .obj = &k->peers[p],
					    .peer = k->peers[p].ops,
					    .read = lat_peer_get,
					    .refill = latch_refill_peer };
	for (p = 0; p < n; p++) {
		runs[p].ticks = ticks[2 * p];
		runs[p].nocsw_ticks = ticks[2 * p + 1];
	}
	return n;
}

/*
 * Per kind and side: up to samples * LAT_READS_PER_SAMPLE reads, or
 * samples * sample length * LAT_BUDGET_PER_SAMPLE of reading, whichever
 * ends first, in LAT_ROUNDS rounds that alternate which of lib and base
 * goes first, the peers after them.
 */
static unsigned latch_latency(void *ctx, const struct bench_opts *o,
			      struct bench_latency_kind *kinds)
{
	struct latch *k = ctx;
	uint64_t reads = (uint64_t)o->samples * LAT_READS_PER_SAMPLE;
	double budget = o->samples * o->sample_ns * LAT_BUDGET_PER_SAMPLE /
			LAT_ROUNDS;
	struct lat_run runs[2 + BENCH_MAX_PEERS];
	uint32_t *ticks[2 * (2 + BENCH_MAX_PEERS)];	/* all, nocsw per run */
	uint32_t *tmp = bench_alloc(reads * sizeof(uint32_t));
	unsigned n, round, nruns, i;

	for (i = 0; i < 2 * (2 + k->npeers); i++)
		ticks[i] = bench_alloc(reads * sizeof(uint32_t));
	lat_clock_init();
	for (n = 0; n < sizeof(lat_kinds) / sizeof(lat_kinds[0]); n++) {
		nruns = lat_runs(k, &lat_kinds[n], runs, ticks);
		for (round = 0; round < LAT_ROUNDS; round++) {
			uint64_t until = reads * (round + 1) / LAT_ROUNDS;

			lat_round(&runs[round & 1], until, budget);
			lat_round(&runs[!(round & 1)], until, budget);
			for (i = 2; i < nruns; i++)
				lat_round(&runs[i], until, budget);
		}
		kinds[n].suffix = lat_kinds[n].suffix;
		kinds[n].base_name = lat_kinds[n].base_name;
		lat_stats(&runs[0], tmp, &kinds[n].lib);
		lat_stats(&runs[1], tmp, &kinds[n].base);
		kinds[n].npeers = nruns - 2;
		for (i = 2; i < nruns; i++) {
			kinds[n].peer_name[i - 2] = runs[i].peer->name;
			lat_stats(&runs[i], tmp, &kinds[n].peer[i - 2]);
		}
	}
	for (i = 0; i < 2 * (2 + k->npeers); i++)
		free(ticks[i]);
	free(tmp);
	return n;
}

/* Gets agree at every index; finds agree on the first keys. */
static int latch_check(void *ctx)
{
	struct latch *k = ctx;
	uint32_t i;

	if (latch_same_tables(k, PEER_CHECKED_KEYS))
		return -1;
	for (i = 0; i < CHECKED_INPUTS; i++)
		if (!latch_same_find(ibk_pkey_table_find(&k->t, k->keys[i],
							 NULL),
				     base_cache_find(&k->cache, k->keys[i])))
			return -1;
	return 0;
}

/* Where the threads ran and what clock timed them. */
static void latch_latency_note(void *ctx, char *buf, size_t len)
{
	struct latch *k = ctx;
	char cpus[64] = "not pinned (one CPU)";

	if (k->cpu[0] >= 0)
		snprintf(cpus, sizeof(cpus), "reader pinned to CPU %d, "
			 "writer to CPU %d", k->cpu[0], k->cpu[1]);
	snprintf(buf, len, "%s; clock: %s at %.4f GHz, in steps of %.1f ns",
		 cpus, lat_use_tsc ? "TSC (lfence, rdtsc, lfence)" :
		 "CLOCK_MONOTONIC", lat_ticks_per_ns, lat_step_ns);
}

/* ------------------------------------------------------------------------
 * refill_N, set_one_N: what a writer pays
 * ------------------------------------------------------------------------ */

/* Refills back to back, the two contents in turn. */
__attribute__((noinline))
static uint64_t refill_lib(void *ctx, uint64_t iters)
{
	struct latch *k = ctx;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		latch_refill_lib(k, k->contents[i & 1]);
		BENCH_BARRIER();
	}
	return iters;
}

/* The same for the rwlock cache. */
__attribute__((noinline))
static uint64_t refill_base(void *ctx, uint64_t iters)
{
	struct latch *k = ctx;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		latch_refill_base(k, k->contents[i & 1]);
		BENCH_BARRIER();
	}
	return iters;
}

/* A peer's refills back to back, the same way. */
__attribute__((noinline))
static uint64_t refill_peer(void *ctx, uint64_t iters)
{
	struct latch_peer *p = ctx;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		latch_refill_peer(p, p->k->contents[i & 1]);
		BENCH_BARRIER();
	}
	return iters;
}

/* After the same refill, both tables and every peer hold the same
 * entries. */
static int refill_check(void *ctx)
{
	struct latch *k = ctx;
	unsigned i;

	latch_refill_lib(k, k->contents[1]);
	latch_refill_base(k, k->contents[1]);
	for (i = 0; i < k->npeers; i++)
		latch_refill_peer(&k->peers[i], k->contents[1]);
	return latch_same_tables(k, PEER_CHECKED_KEYS);
}

/*
 * The @n-th set of a side: both sides make the same sets in the same order,
 * carrying on from one run to the next (a set that repeated the entry's
 * value would cost nothing), and each pass over the indexes pairs them
 * with other keys.
 */
static uint32_t set_index(const struct latch *k, uint64_t n)
{
	return k->index[n % LATCH_INPUTS];
}

static ibk_pkey_t set_key(const struct latch *k, uint64_t n)
{
	return k->keys[(n + n / LATCH_INPUTS) % LATCH_INPUTS];
}

/* The latch's next sets, one generation each. */
__attribute__((noinline))
static uint64_t set_lib(void *ctx, uint64_t iters)
{
	struct latch *k = ctx;
	uint64_t sum = 0;
	uint64_t i, n;

	for (i = 0; i < iters; i++) {
		n = k->sets[0]++;
		sum += (uint64_t)ibk_pkey_table_set(&k->t, set_index(k, n),
						    set_key(k, n));
		BENCH_BARRIER();
	}
	return sum;
}

/* The rwlock cache's next sets: wrlock, store, unlock. */
__attribute__((noinline))
static uint64_t set_base(void *ctx, uint64_t iters)
{
	struct latch *k = ctx;
	uint64_t sum = 0;
	uint64_t i, n;

	for (i = 0; i < iters; i++) {
		n = k->sets[1]++;
		sum += (uint64_t)base_cache_set(&k->cache, set_index(k, n),
						set_key(k, n));
		BENCH_BARRIER();
	}
	return sum;
}

/* A peer's next sets, its library's way (a fresh copy for RCU). */
__attribute__((noinline))
static uint64_t set_peer(void *ctx, uint64_t iters)
{
	struct latch_peer *p = ctx;
	uint64_t sum = 0;
	uint64_t i, n;

	for (i = 0; i < iters; i++) {
		n = p->sets++;
		sum += (uint64_t)p->ops->set(p->cache, set_index(p->k, n),
					     set_key(p->k, n));
		BENCH_BARRIER();
	}
	return sum;
}

/* Every peer with @run as its side. */
static unsigned latch_peer_sides(struct latch *k, bench_run_fn run,
				 struct bench_side *sides)
{
	unsigned i;

	for (i = 0; i < k->npeers; i++)
		sides[i] = (struct bench_side){ k->peers[i].ops->name, run,
						&k->peers[i] };
	return k->npeers;
}

/* refill_lib() built with IBK__CELL_LOOPS (variants.c): cell by cell. */
__attribute__((noinline))
static uint64_t refill_cells(void *ctx, uint64_t iters)
{
	struct latch *k = ctx;
	const ibk_pkey_t *const contents[2] = { k->contents[0],
						k->contents[1] };

	return variant_cells_refill(&k->t, contents, k->len, iters);
}

/* After the cell-by-cell variant's refills, the table holds what the
 * last one wrote, read through the library; or the run stops. */
static void refill_cells_agrees(struct latch *k)
{
	const ibk_pkey_t *const contents[2] = { k->contents[0],
						k->contents[1] };
	ibk_pkey_t got;
	uint32_t i;

	if (variant_cells_layout() != variant_layout())
		latch_fail("variant cells: another struct layout");
	variant_cells_refill(&k->t, contents, k->len, 2);
	for (i = 0; i < k->len; i++)
		if (ibk_pkey_table_get(&k->t, i, &got) != IBK_OK ||
		    got != k->contents[1][i])
			latch_fail("variant cells: another table after refill");
}

static unsigned refill_peers(void *ctx, struct bench_side *sides)
{
	unsigned n = latch_peer_sides(ctx, refill_peer, sides);

	refill_cells_agrees(ctx);
	sides[n] = (struct bench_side){ "variant:cells", refill_cells, ctx };
	return n + 1;
}

static unsigned set_peers(void *ctx, struct bench_side *sides)
{
	return latch_peer_sides(ctx, set_peer, sides);
}

/* The same sets leave the same entries in both tables and every peer,
 * and finds agree after them. */
static int set_check(void *ctx)
{
	struct latch *k = ctx;
	uint32_t i;

	set_lib(k, CHECKED_INPUTS);
	set_base(k, CHECKED_INPUTS);
	for (i = 0; i < k->npeers; i++)
		set_peer(&k->peers[i], CHECKED_INPUTS);
	if (latch_same_tables(k, PEER_CHECKED_KEYS))
		return -1;
	for (i = 0; i < CHECKED_INPUTS; i++)
		if (!latch_same_find(ibk_pkey_table_find(&k->t, k->keys[i],
							 NULL),
				     base_cache_find(&k->cache, k->keys[i])))
			return -1;
	return 0;
}

/* ------------------------------------------------------------------------
 * cached_get: cached_read_1t's reads alone, one thread, no writer
 *
 * The table and the input mix of cached_read_1t (128 random valid keys,
 * 4096 random indexes walked in order), each peer reading with its own
 * reader loop (a QSBR quiescent state every BENCH_RX_BURST reads). Single
 * threaded, so that ibk-bench-proc and callgrind can run it.
 * ------------------------------------------------------------------------ */

#define GET_LEN 128		/* a typical HCA P_Key table */
#define GET_INDEXES 4096	/* random indexes, walked in order */

/* A peer's cache of the table, as a side's context. */
struct get_peer {
	const struct bench_peer *ops;
	void *cache;
	const uint32_t *index;
};

struct get_tables {
	struct ibk_pkey_table t;	/* first: 64-byte aligned */
	_Alignas(64) struct base_pkey_cache cache;	/* own cache line */
	struct ibk_pkey_cell cells[IBK_PKEY_CELLS(GET_LEN)];
	struct ibk_hash_slot slots[IBK_PKEY_HASH_SLOTS(GET_LEN)];
	ibk_pkey_t contents[GET_LEN];
	uint32_t index[GET_INDEXES];
	struct get_peer peers[BENCH_MAX_PEERS];
	unsigned npeers;
};

/* The library's table, the rwlock cache and every peer, all holding the
 * same random keys. */
static void *get_setup(const struct bench_case *c)
{
	struct get_tables *g = bench_alloc(sizeof(*g));
	struct bench_rng r = { 0x1b1b0031 };
	uint32_t i;

	(void)c;
	for (i = 0; i < GET_LEN; i++)
		g->contents[i] = bench_random_pkey(&r);
	for (i = 0; i < GET_INDEXES; i++)
		g->index[i] = bench_rng_below(&r, GET_LEN);
	if (ibk_pkey_table_init(&g->t, g->cells, GET_LEN, g->slots,
				IBK_PKEY_HASH_SLOTS(GET_LEN)) ||
	    ibk_pkey_table_set_state(&g->t, IBK_PORT_ACTIVE) ||
	    ibk_pkey_table_refill(&g->t, g->contents, GET_LEN,
				  ibk_pkey_table_refill_ticket(&g->t)))
		latch_fail("cannot set up a 128-entry P_Key table");
	pthread_rwlock_init(&g->cache.lock, NULL);
	g->cache.table = bench_alloc(GET_LEN * sizeof(uint16_t));
	base_cache_refill(&g->cache, g->contents, GET_LEN);
	for (i = 0; i < bench_npeers; i++) {
		struct get_peer *p = &g->peers[g->npeers++];

		p->ops = bench_peers[i];
		p->cache = p->ops->create(g->contents, GET_LEN);
		p->index = g->index;
	}
	return g;
}

static void get_teardown(void *ctx)
{
	struct get_tables *g = ctx;
	unsigned i;

	for (i = 0; i < g->npeers; i++) {
		if (g->peers[i].ops->exit)
			g->peers[i].ops->exit();
		g->peers[i].ops->destroy(g->peers[i].cache);
	}
	pthread_rwlock_destroy(&g->cache.lock);
	free(g->cache.table);
	free(g);
}

/* The library's gets, as cached_read_lib() does them. */
__attribute__((noinline))
static uint64_t get_lib(void *ctx, uint64_t iters)
{
	struct get_tables *g = ctx;
	uint64_t sum = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		ibk_pkey_t pkey = 0;

		sum += (uint64_t)ibk_pkey_table_get(&g->t,
				g->index[i % GET_INDEXES], &pkey) + pkey;
		BENCH_BARRIER();
	}
	return sum;
}

/* The rwlock cache's gets: rdlock, read, unlock. */
__attribute__((noinline))
static uint64_t get_base(void *ctx, uint64_t iters)
{
	struct get_tables *g = ctx;
	uint64_t sum = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		uint16_t pkey = 0;

		sum += (uint64_t)base_cache_get(&g->cache,
				g->index[i % GET_INDEXES], &pkey) + pkey;
		BENCH_BARRIER();
	}
	return sum;
}

/* A peer's own reader loop over the same indexes in the same order. */
__attribute__((noinline))
static uint64_t get_peer(void *ctx, uint64_t iters)
{
	struct get_peer *p = ctx;

	return p->ops->get_loop(p->cache, p->index, GET_INDEXES - 1, 0, iters);
}

static unsigned get_peers(void *ctx, struct bench_side *sides)
{
	struct get_tables *g = ctx;
	unsigned i;

	for (i = 0; i < g->npeers; i++)
		sides[i] = (struct bench_side){ g->peers[i].ops->name, get_peer,
						&g->peers[i] };
	return g->npeers;
}

/* The rwlock cache and every peer give the library's entry at every
 * index, and the peers its index for every key of the table. */
static int get_check(void *ctx)
{
	struct get_tables *g = ctx;
	uint32_t i;

	for (i = 0; i < GET_LEN; i++) {
		ibk_pkey_t lib = 0;
		uint16_t base = 0;

		if (ibk_pkey_table_get(&g->t, i, &lib) ||
		    base_cache_get(&g->cache, i, &base) || lib != base)
			return -1;
	}
	for (i = 0; i < g->npeers; i++)
		if (bench_peer_agrees(g->peers[i].ops, g->peers[i].cache,
				      &g->t, GET_LEN, g->contents, GET_LEN))
			return -1;
	return 0;
}

/* ------------------------------------------------------------------------
 * The cases
 * ------------------------------------------------------------------------ */

#define REFILL(n) {							\
	.name = "refill_" #n, .base_name = "rwlock_memcpy",		\
	.inputs = "refill a " #n "-entry table with " #n " random keys "	\
		  "(two sets in turn), no reader",			\
	.param = n, .ops_per_iter = 1,					\
	.setup = latch_setup, .teardown = latch_teardown,		\
	.lib = refill_lib, .base = refill_base, .check = refill_check,	\
	.peers = refill_peers,						\
}

#define SET_ONE(n) {							\
	.name = "set_one_" #n, .base_name = "rwlock_store",		\
	.inputs = "set one entry of a full " #n "-entry table of "	\
		  "random keys: random index, random valid key, a new "	\
		  "pair each set; no reader",				\
	.param = n, .ops_per_iter = 1,					\
	.setup = latch_setup, .teardown = latch_teardown,		\
	.lib = set_lib, .base = set_base, .check = set_check,		\
	.peers = set_peers,						\
}

const struct bench_case bench_latch_cases[] = {
	{
		.name = "read_latency", .base_name = "pthread_rwlock",
		.inputs = "one thread's single reads of a 65536-entry table "
			  "(get: random index; find: random valid key; floor: "
			  "no read), each timed alone, while a writer thread "
			  "refills all 65536 entries back to back",
		.param = LATCH_LEN,
		.setup = latch_setup, .teardown = latch_teardown,
		.check = latch_check, .note = latch_latency_note,
		.latency = latch_latency,
	},
	REFILL(16),
	REFILL(128),
	REFILL(4096),
	REFILL(65536),
	SET_ONE(16),
	SET_ONE(128),
	SET_ONE(4096),
	SET_ONE(65536),
	{
		.name = "cached_get", .base_name = "pthread_rwlock",
		.inputs = "get at random indexes of a 128-entry table, one "
			  "thread, no writer (cached_read_1t's reads alone)",
		.ops_per_iter = 1,
		.setup = get_setup, .teardown = get_teardown,
		.lib = get_lib, .base = get_base, .check = get_check,
		.peers = get_peers,
	},
};

const size_t bench_latch_ncases =
	sizeof(bench_latch_cases) / sizeof(bench_latch_cases[0]);
