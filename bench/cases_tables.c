/* SPDX-License-Identifier: MIT */
/*
 * cases_tables.c - the cases of ib_tables.h: find by value in P_Key and GID
 * tables of several sizes, index reads under a concurrent writer by one and
 * two reader threads, the freshness check of a cached reference, and a
 * port's receive path for bursts of UD packets.
 */
#include "bench.h"
#include "baseline.h"
#include "peers.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "ib_tables.h"

/* ------------------------------------------------------------------------
 * P_Key tables: the library's and the plain array a baseline scans
 * ------------------------------------------------------------------------ */

struct pkey_tables {
	struct ibk_pkey_table t;	/* first: 64-byte aligned */
	struct ibk_pkey_cell *cells;
	struct ibk_hash_slot *slots;
	uint32_t len;
};

static void pkey_tables_init(struct pkey_tables *p, uint32_t len)
{
	p->len = len;
	p->cells = bench_alloc(IBK_PKEY_CELLS(len) * sizeof(*p->cells));
	p->slots = bench_alloc(IBK_HASH_SLOTS(len) * sizeof(*p->slots));
	if (ibk_pkey_table_init(&p->t, p->cells, len, p->slots,
				IBK_HASH_SLOTS(len)) ||
	    ibk_pkey_table_set_state(&p->t, IBK_PORT_ACTIVE)) {
		fprintf(stderr, "bench: cannot set up a P_Key table of %u\n",
			len);
		exit(2);
	}
}

static void pkey_tables_fill(struct pkey_tables *p, const ibk_pkey_t *keys)
{
	if (ibk_pkey_table_refill(&p->t, keys, p->len,
				  ibk_pkey_table_refill_ticket(&p->t))) {
		fprintf(stderr, "bench: P_Key refill failed\n");
		exit(2);
	}
}

static void pkey_tables_free(struct pkey_tables *p)
{
	free(p->cells);
	free(p->slots);
}

static void random_pkeys(struct bench_rng *r, ibk_pkey_t *keys, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		keys[i] = bench_random_pkey(r);
}

/* ------------------------------------------------------------------------
 * pkey_find_N: find by value in a full table of N random keys
 * ------------------------------------------------------------------------ */

#define PKEY_LOOKUPS 65536	/* 128 KiB of keys, read in order */
#define CHECKED_LOOKUPS 1024	/* lib == base checked on these */

/* A find's index from the library and the baseline agree: the same index,
 * or IBK_ENOENT where the baseline found nothing. */
static bool same_answer(int lib, int base)
{
	return lib == base || (lib == IBK_ENOENT && base < 0);
}

struct pkey_find {
	struct pkey_tables p;
	ibk_pkey_t *values;		/* what the baseline scans */
	ibk_pkey_t keys[PKEY_LOOKUPS];
};

/*
 * A base not in the table, or 0 if every base is there. (The table holds
 * at most 65536 keys of 32767 bases: some are always missing at 4096
 * entries and below, about 1 in 7 at 65536.)
 */
static uint16_t absent_base(struct bench_rng *r, const uint8_t *present)
{
	unsigned tries;

	for (tries = 0; tries < 1000000; tries++) {
		uint16_t base = (uint16_t)(1 + bench_rng_below(r, 0x7fff));

		if (!present[base])
			return base;
	}
	return 0;
}

/*
 * Lookups: 7 in 8 take the base of a random entry (with a random
 * membership bit, which find ignores), 1 in 8 a base the table lacks.
 */
static void *pkey_find_setup(const struct bench_case *c)
{
	struct pkey_find *f = bench_alloc(sizeof(*f));
	struct bench_rng r = { 0x1b1b0010 + c->param };
	uint8_t *present = bench_alloc(0x8000);
	uint32_t len = (uint32_t)c->param;
	size_t i;

	pkey_tables_init(&f->p, len);
	f->values = bench_alloc(len * sizeof(*f->values));
	random_pkeys(&r, f->values, len);
	pkey_tables_fill(&f->p, f->values);
	for (i = 0; i < len; i++)
		present[ibk_pkey_base(f->values[i])] = 1;
	for (i = 0; i < PKEY_LOOKUPS; i++) {
		uint16_t base = ibk_pkey_base(f->values[bench_rng_below(&r, len)]);

		if (bench_rng_one_in(&r, 8))
			base = absent_base(&r, present);
		f->keys[i] = ibk_pkey_make(base, bench_rng_one_in(&r, 2));
	}
	free(present);
	return f;
}

static void pkey_find_teardown(void *ctx)
{
	struct pkey_find *f = ctx;

	pkey_tables_free(&f->p);
	free(f->values);
	free(f);
}

__attribute__((noinline))
static uint64_t pkey_find_lib(void *ctx, uint64_t iters)
{
	const struct pkey_find *f = ctx;
	uint64_t sum = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		sum += (uint64_t)ibk_pkey_table_find(&f->p.t,
				f->keys[i % PKEY_LOOKUPS], NULL);
		BENCH_BARRIER();
	}
	return sum;
}

__attribute__((noinline))
static uint64_t pkey_find_base(void *ctx, uint64_t iters)
{
	const struct pkey_find *f = ctx;
	uint64_t sum = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		sum += (uint64_t)base_pkey_find(f->values, f->p.len,
						f->keys[i % PKEY_LOOKUPS]);
		BENCH_BARRIER();
	}
	return sum;
}

static int pkey_find_check(void *ctx)
{
	const struct pkey_find *f = ctx;
	size_t i;

	for (i = 0; i < CHECKED_LOOKUPS; i++) {
		int lib = ibk_pkey_table_find(&f->p.t, f->keys[i], NULL);
		int base = base_pkey_find(f->values, f->p.len, f->keys[i]);

		if (!same_answer(lib, base))
			return -1;
	}
	return 0;
}

static void pkey_find_note(void *ctx, char *buf, size_t len)
{
	const struct pkey_find *f = ctx;
	size_t i, hits = 0;

	for (i = 0; i < PKEY_LOOKUPS; i++)
		hits += ibk_pkey_table_find(&f->p.t, f->keys[i], NULL) >= 0;
	snprintf(buf, len, "%.1f%% of %d lookups hit",
		 100.0 * (double)hits / PKEY_LOOKUPS, PKEY_LOOKUPS);
}

/* ------------------------------------------------------------------------
 * gid_find_N: find by GID in a full table of N distinct GIDs
 * ------------------------------------------------------------------------ */

#define GID_LOOKUPS 16384	/* 256 KiB of GIDs, read in order */

struct gid_find {
	struct ibk_gid_table t;		/* first: 64-byte aligned */
	struct ibk_gid_cell *cells;
	struct ibk_hash_slot *slots;
	uint32_t len;
	uint8_t (*raw)[16];		/* what the baseline scans */
	struct ibk_gid keys[GID_LOOKUPS];
};

/*
 * GIDs of the three kinds a RoCE or IB port lists, at random: link-local
 * fe80::/64 with a random interface id, IPv4-mapped ::ffff:a.b.c.d, and a
 * global address in a random 2001:db8:0:x::/64 with a random interface id.
 */
static struct ibk_gid random_gid(struct bench_rng *r)
{
	switch (bench_rng_below(r, 3)) {
	case 0:
		return ibk_gid_make(IBK_GID_DEFAULT_PREFIX, bench_rng_next(r));
	case 1:
		return ibk_gid_from_ipv4((uint32_t)bench_rng_next(r));
	default:
		return ibk_gid_make(0x20010db800000000ull | (uint16_t)
				    bench_rng_next(r), bench_rng_next(r));
	}
}

static void gid_find_tables(struct gid_find *g, struct bench_rng *r)
{
	struct ibk_gid_entry *e = bench_alloc(g->len * sizeof(*e));
	uint32_t i;

	for (i = 0; i < g->len; i++) {
		e[i].gid = random_gid(r);
		e[i].type = IBK_GID_TYPE_IB;
		memcpy(g->raw[i], e[i].gid.raw, 16);
	}
	if (ibk_gid_table_init(&g->t, g->cells, g->len, g->slots,
			       IBK_HASH_SLOTS(g->len)) ||
	    ibk_gid_table_set_state(&g->t, IBK_PORT_ACTIVE) ||
	    ibk_gid_table_refill(&g->t, e, g->len,
				 ibk_gid_table_refill_ticket(&g->t))) {
		fprintf(stderr, "bench: cannot set up a GID table of %u\n",
			g->len);
		exit(2);
	}
	free(e);
}

/* Lookups: 7 in 8 a random entry's GID, 1 in 8 a fresh random GID. */
static void *gid_find_setup(const struct bench_case *c)
{
	struct gid_find *g = bench_alloc(sizeof(*g));
	struct bench_rng r = { 0x1b1b0020 + c->param };
	size_t i;

	g->len = (uint32_t)c->param;
	g->cells = bench_alloc(IBK_GID_CELLS(g->len) * sizeof(*g->cells));
	g->slots = bench_alloc(IBK_HASH_SLOTS(g->len) * sizeof(*g->slots));
	g->raw = bench_alloc(g->len * sizeof(*g->raw));
	gid_find_tables(g, &r);
	for (i = 0; i < GID_LOOKUPS; i++) {
		if (bench_rng_one_in(&r, 8))
			g->keys[i] = random_gid(&r);
		else
			memcpy(g->keys[i].raw,
			       g->raw[bench_rng_below(&r, g->len)], 16);
	}
	return g;
}

static void gid_find_teardown(void *ctx)
{
	struct gid_find *g = ctx;

	free(g->cells);
	free(g->slots);
	free(g->raw);
	free(g);
}

__attribute__((noinline))
static uint64_t gid_find_lib(void *ctx, uint64_t iters)
{
	const struct gid_find *g = ctx;
	uint64_t sum = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		sum += (uint64_t)ibk_gid_table_find(&g->t,
				&g->keys[i % GID_LOOKUPS], IBK_GID_TYPE_ANY,
				NULL);
		BENCH_BARRIER();
	}
	return sum;
}

__attribute__((noinline))
static uint64_t gid_find_base(void *ctx, uint64_t iters)
{
	const struct gid_find *g = ctx;
	uint64_t sum = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		sum += (uint64_t)base_gid_find((const uint8_t (*)[16])g->raw,
				g->len, g->keys[i % GID_LOOKUPS].raw);
		BENCH_BARRIER();
	}
	return sum;
}

static int gid_find_check(void *ctx)
{
	const struct gid_find *g = ctx;
	size_t i;

	for (i = 0; i < CHECKED_LOOKUPS; i++) {
		int lib = ibk_gid_table_find(&g->t, &g->keys[i],
					     IBK_GID_TYPE_ANY, NULL);
		int base = base_gid_find((const uint8_t (*)[16])g->raw,
					 g->len, g->keys[i].raw);

		if (!same_answer(lib, base))
			return -1;
	}
	return 0;
}

static void gid_find_note(void *ctx, char *buf, size_t len)
{
	const struct gid_find *g = ctx;
	size_t i, hits = 0;

	for (i = 0; i < GID_LOOKUPS; i++)
		hits += ibk_gid_table_find(&g->t, &g->keys[i],
					   IBK_GID_TYPE_ANY, NULL) >= 0;
	snprintf(buf, len, "%.1f%% of %d lookups hit",
		 100.0 * (double)hits / GID_LOOKUPS, GID_LOOKUPS);
}

/* ------------------------------------------------------------------------
 * cached_read_Nt: index reads by N threads while a writer refills
 * ------------------------------------------------------------------------ */

#define CACHED_LEN 128		/* a typical HCA P_Key table */
#define CACHED_INDEXES 4096	/* random indexes each reader walks */
#define MAX_READERS 2
#define WRITER_PERIOD_NS 1000000	/* one refill a millisecond */
#define CACHED_SIDES (2 + BENCH_MAX_PEERS)	/* lib, base, the peers */
#define CACHED_IDLE (-1)	/* no side reading: writers wait */

struct cached;
struct cached_side;
typedef uint64_t (*cached_read_fn)(struct cached_side *s, unsigned thread,
				   uint64_t iters);

/*
 * One way of reading the table (the library, the rwlock cache or a peer)
 * and its writer, which refills that side's table every millisecond while
 * the side is being timed, alternating contents; idle otherwise, so that
 * no side's writer (or its synchronize_rcu()) lands on another side's
 * samples.
 */
struct cached_side {
	struct cached *c;
	int id;				/* index in c->sides */
	cached_read_fn read;
	void (*refill)(struct cached_side *s, const ibk_pkey_t *keys);
	const struct bench_peer *peer;	/* a peer's side, else NULL */
	void *peer_cache;
	pthread_t writer;
	uint64_t read_ns;		/* time spent reading, all runs */
	atomic_uint_fast64_t refills;
};

struct cached {
	struct pkey_tables p;		/* first: 64-byte aligned */
	_Alignas(64) struct base_pkey_cache cache;	/* own cache line */
	ibk_pkey_t contents[2][CACHED_LEN];
	uint32_t index[CACHED_INDEXES];
	unsigned readers;
	pthread_t helpers[MAX_READERS - 1];
	pthread_barrier_t start, done;
	struct cached_side sides[CACHED_SIDES];
	unsigned nsides;
	atomic_int active;		/* the side being timed */
	uint64_t iters;
	uint64_t helper_sum[MAX_READERS];
	atomic_bool stop;
};

static void cached_refill_lib(struct cached_side *s, const ibk_pkey_t *keys)
{
	pkey_tables_fill(&s->c->p, keys);
}

static void cached_refill_base(struct cached_side *s, const ibk_pkey_t *keys)
{
	base_cache_refill(&s->c->cache, keys, CACHED_LEN);
}

static void cached_refill_peer(struct cached_side *s, const ibk_pkey_t *keys)
{
	s->peer->refill(s->peer_cache, keys);
}

static void *cached_writer_main(void *arg)
{
	struct cached_side *s = arg;
	struct cached *c = s->c;
	struct timespec next;
	uint64_t n;

	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!atomic_load(&c->stop)) {
		if (atomic_load(&c->active) == s->id) {
			n = atomic_load_explicit(&s->refills,
						 memory_order_relaxed);
			s->refill(s, c->contents[n & 1]);
			atomic_store_explicit(&s->refills, n + 1,
					      memory_order_relaxed);
		}
		next.tv_nsec += WRITER_PERIOD_NS;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
				       NULL) == EINTR)
			;
	}
	return NULL;
}

/* Reader loops: each thread starts at its own place in the indexes. */
static uint64_t cached_first(unsigned thread)
{
	return thread * (CACHED_INDEXES / MAX_READERS);
}

static uint32_t cached_index(const struct cached *c, unsigned thread,
			     uint64_t i)
{
	return c->index[(i + cached_first(thread)) % CACHED_INDEXES];
}

static uint64_t cached_read_lib(struct cached_side *s, unsigned thread,
				uint64_t iters)
{
	struct cached *c = s->c;
	uint64_t sum = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		ibk_pkey_t pkey = 0;

		sum += (uint64_t)ibk_pkey_table_get(&c->p.t,
				cached_index(c, thread, i), &pkey) + pkey;
		BENCH_BARRIER();
	}
	return sum;
}

static uint64_t cached_read_base(struct cached_side *s, unsigned thread,
				 uint64_t iters)
{
	struct cached *c = s->c;
	uint64_t sum = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		uint16_t pkey = 0;

		sum += (uint64_t)base_cache_get(&c->cache,
				cached_index(c, thread, i), &pkey) + pkey;
		BENCH_BARRIER();
	}
	return sum;
}

/* A peer's own reader loop, over the same indexes in the same order. */
static uint64_t cached_read_peer(struct cached_side *s, unsigned thread,
				 uint64_t iters)
{
	return s->peer->get_loop(s->peer_cache, s->c->index,
				 CACHED_INDEXES - 1, cached_first(thread),
				 iters);
}

struct cached_helper {
	struct cached *c;
	unsigned thread;
};

/* Unregisters the calling thread from every peer's library. */
static void cached_exit_peers(struct cached *c)
{
	unsigned i;

	for (i = 2; i < c->nsides; i++)
		if (c->sides[i].peer->exit)
			c->sides[i].peer->exit();
}

/* Reader threads past the first (which is the timing thread itself). */
static void *cached_helper_main(void *arg)
{
	struct cached_helper *h = arg;
	struct cached *c = h->c;
	unsigned thread = h->thread;
	struct cached_side *s;

	free(h);
	for (;;) {
		pthread_barrier_wait(&c->start);
		if (atomic_load(&c->stop)) {
			cached_exit_peers(c);
			return NULL;
		}
		s = &c->sides[atomic_load(&c->active)];
		c->helper_sum[thread] = s->read(s, thread, c->iters);
		pthread_barrier_wait(&c->done);
	}
}

/* All readers do iters reads of side @s at once, its writer running;
 * returns when the last is done. */
static uint64_t cached_run(void *ctx, uint64_t iters)
{
	struct cached_side *s = ctx;
	struct cached *c = s->c;
	uint64_t sum, t0 = bench_now_ns();
	unsigned i;

	atomic_store(&c->active, s->id);
	c->iters = iters;
	pthread_barrier_wait(&c->start);
	sum = s->read(s, 0, iters);
	pthread_barrier_wait(&c->done);
	atomic_store(&c->active, CACHED_IDLE);
	s->read_ns += bench_now_ns() - t0;
	for (i = 1; i < c->readers; i++)
		sum += c->helper_sum[i];
	return sum;
}

__attribute__((noinline))
static uint64_t cached_lib(void *ctx, uint64_t iters)
{
	struct cached *c = ctx;

	return cached_run(&c->sides[0], iters);
}

__attribute__((noinline))
static uint64_t cached_base(void *ctx, uint64_t iters)
{
	struct cached *c = ctx;

	return cached_run(&c->sides[1], iters);
}

static unsigned cached_peers(void *ctx, struct bench_side *sides)
{
	struct cached *c = ctx;
	unsigned i;

	for (i = 2; i < c->nsides; i++)
		sides[i - 2] = (struct bench_side){ c->sides[i].peer->name,
						    cached_run, &c->sides[i] };
	return c->nsides - 2;
}

/* Side @id reads with @read, refills with @refill, and gets its writer. */
static void cached_add_side(struct cached *c, cached_read_fn read,
			    void (*refill)(struct cached_side *,
					   const ibk_pkey_t *),
			    const struct bench_peer *peer)
{
	struct cached_side *s = &c->sides[c->nsides];

	s->c = c;
	s->id = (int)c->nsides++;
	s->read = read;
	s->refill = refill;
	s->peer = peer;
	if (peer)
		s->peer_cache = peer->create(c->contents[0], CACHED_LEN);
	if (pthread_create(&s->writer, NULL, cached_writer_main, s)) {
		fprintf(stderr, "bench: cannot start a writer thread\n");
		exit(2);
	}
}

static void cached_start_helpers(struct cached *c)
{
	unsigned i;

	for (i = 1; i < c->readers; i++) {
		struct cached_helper *h = bench_alloc(sizeof(*h));

		h->c = c;
		h->thread = i;
		if (pthread_create(&c->helpers[i - 1], NULL,
				   cached_helper_main, h)) {
			fprintf(stderr, "bench: cannot start a reader\n");
			exit(2);
		}
	}
}

/*
 * The lock-free table, the rwlock cache (writer-preferring, as the
 * kernel's rwlock lets a waiting writer in ahead of new readers; glibc's
 * default would let readers starve the writer and skip the refills) and
 * every peer this build has, all holding contents[0].
 */
static void *cached_setup(const struct bench_case *c)
{
	struct cached *k = bench_alloc(sizeof(*k));
	struct bench_rng r = { 0x1b1b0030 };
	pthread_rwlockattr_t attr;
	size_t i;

	k->readers = c->threads;
	atomic_store(&k->active, CACHED_IDLE);
	random_pkeys(&r, k->contents[0], CACHED_LEN);
	random_pkeys(&r, k->contents[1], CACHED_LEN);
	for (i = 0; i < CACHED_INDEXES; i++)
		k->index[i] = bench_rng_below(&r, CACHED_LEN);
	pkey_tables_init(&k->p, CACHED_LEN);
	pkey_tables_fill(&k->p, k->contents[0]);
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr,
			PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&k->cache.lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	k->cache.table = bench_alloc(CACHED_LEN * sizeof(uint16_t));
	base_cache_refill(&k->cache, k->contents[0], CACHED_LEN);
	pthread_barrier_init(&k->start, NULL, k->readers);
	pthread_barrier_init(&k->done, NULL, k->readers);
	cached_start_helpers(k);
	cached_add_side(k, cached_read_lib, cached_refill_lib, NULL);
	cached_add_side(k, cached_read_base, cached_refill_base, NULL);
	for (i = 0; i < bench_npeers; i++)
		cached_add_side(k, cached_read_peer, cached_refill_peer,
				bench_peers[i]);
	return k;
}

static void cached_teardown(void *ctx)
{
	struct cached *c = ctx;
	unsigned i;

	atomic_store(&c->stop, true);
	pthread_barrier_wait(&c->start);
	for (i = 1; i < c->readers; i++)
		pthread_join(c->helpers[i - 1], NULL);
	for (i = 0; i < c->nsides; i++) {
		pthread_join(c->sides[i].writer, NULL);
		if (c->sides[i].peer)
			c->sides[i].peer->destroy(c->sides[i].peer_cache);
	}
	pthread_barrier_destroy(&c->start);
	pthread_barrier_destroy(&c->done);
	pthread_rwlock_destroy(&c->cache.lock);
	pkey_tables_free(&c->p);
	free(c->cache.table);
	free(c);
}

/*
 * Before any writer runs: the rwlock cache gives the library's entry at
 * every index, and every peer that and the library's index for every key
 * of both contents.
 */
static int cached_check(void *ctx)
{
	struct cached *c = ctx;
	uint32_t i;

	for (i = 0; i < CACHED_LEN; i++) {
		ibk_pkey_t lib = 0;
		uint16_t base = 0;

		if (ibk_pkey_table_get(&c->p.t, i, &lib) ||
		    base_cache_get(&c->cache, i, &base) || lib != base)
			return -1;
	}
	for (i = 2; i < c->nsides; i++)
		if (bench_peer_agrees(c->sides[i].peer, c->sides[i].peer_cache,
				      &c->p.t, CACHED_LEN, &c->contents[0][0],
				      2 * CACHED_LEN))
			return -1;
	return 0;
}

/* Refills a second of the side's reading. */
static double writer_rate(const struct cached_side *s)
{
	return s->read_ns ? 1e9 * (double)atomic_load(&s->refills) /
			    (double)s->read_ns : 0;
}

static void cached_note(void *ctx, char *buf, size_t len)
{
	struct cached *c = ctx;
	size_t at;
	unsigned i;

	at = (size_t)snprintf(buf, len, "writer refills a second of reading:");
	for (i = 0; i < c->nsides && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, " %s %.0f",
				       i ? i > 1 ? c->sides[i].peer->name :
				       "pthread_rwlock" : "lib",
				       writer_rate(&c->sides[i]));
}

/* ------------------------------------------------------------------------
 * ref_check: is a cached {index, value, generation} still current?
 * ------------------------------------------------------------------------ */

#define REFS 64

struct ref_check {
	struct pkey_tables p;		/* first: 64-byte aligned */
	struct base_pkey_cache cache;
	struct ibk_pkey_ref refs[REFS];
};

static void *ref_check_setup(const struct bench_case *c)
{
	struct ref_check *k = bench_alloc(sizeof(*k));
	struct bench_rng r = { 0x1b1b0040 };
	ibk_pkey_t keys[CACHED_LEN];
	size_t i;

	(void)c;
	random_pkeys(&r, keys, CACHED_LEN);
	pkey_tables_init(&k->p, CACHED_LEN);
	pkey_tables_fill(&k->p, keys);
	pthread_rwlock_init(&k->cache.lock, NULL);
	k->cache.table = bench_alloc(sizeof(keys));
	base_cache_refill(&k->cache, keys, CACHED_LEN);
	for (i = 0; i < REFS; i++)
		if (ibk_pkey_table_ref_get(&k->p.t,
				bench_rng_below(&r, CACHED_LEN), &k->refs[i])) {
			fprintf(stderr, "bench: cannot take a reference\n");
			exit(2);
		}
	return k;
}

static void ref_check_teardown(void *ctx)
{
	struct ref_check *k = ctx;

	pthread_rwlock_destroy(&k->cache.lock);
	pkey_tables_free(&k->p);
	free(k->cache.table);
	free(k);
}

__attribute__((noinline))
static uint64_t ref_check_lib(void *ctx, uint64_t iters)
{
	const struct ref_check *k = ctx;
	uint64_t fresh = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		fresh += ibk_pkey_table_ref_fresh(&k->p.t, &k->refs[i % REFS]);
		BENCH_BARRIER();
	}
	return fresh;
}

/* The value at the reference's index, re-read under the lock, unchanged? */
static int ref_reread(struct ref_check *k, const struct ibk_pkey_ref *ref)
{
	uint16_t pkey;

	return !base_cache_get(&k->cache, ref->index, &pkey) &&
	       pkey == ref->pkey;
}

__attribute__((noinline))
static uint64_t ref_check_base(void *ctx, uint64_t iters)
{
	struct ref_check *k = ctx;
	uint64_t fresh = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		fresh += (uint64_t)ref_reread(k, &k->refs[i % REFS]);
		BENCH_BARRIER();
	}
	return fresh;
}

static int ref_check_check(void *ctx)
{
	struct ref_check *k = ctx;
	size_t i;

	for (i = 0; i < REFS; i++)
		if (!ibk_pkey_table_ref_fresh(&k->p.t, &k->refs[i]) ||
		    !ref_reread(k, &k->refs[i]))
			return -1;
	return 0;
}

/* ------------------------------------------------------------------------
 * A port for the receive cases: the library's, and the rwlock cache
 * ------------------------------------------------------------------------ */

#define PORT_GIDS 16

struct port {
	struct ibk_port port;		/* first: 64-byte aligned */
	struct base_pkey_cache cache;
	struct base_port_counters counters;
	struct ibk_pkey_cell *pkey_cells;
	struct ibk_hash_slot *pkey_slots;
	struct ibk_gid_cell *gid_cells;
	struct ibk_hash_slot *gid_slots;
	uint8_t *buffers;		/* the packets */
};

/* An ACTIVE port whose 128-entry P_Key table holds @keys, and the rwlock
 * cache of the same table; buffers for @nbuffers packets. */
static void port_init(struct port *k, const ibk_pkey_t *keys,
		      unsigned nbuffers)
{
	k->pkey_cells = bench_alloc(IBK_PKEY_CELLS(CACHED_LEN) *
				    sizeof(*k->pkey_cells));
	k->pkey_slots = bench_alloc(IBK_HASH_SLOTS(CACHED_LEN) *
				    sizeof(*k->pkey_slots));
	k->gid_cells = bench_alloc(IBK_GID_CELLS(PORT_GIDS) *
				   sizeof(*k->gid_cells));
	k->gid_slots = bench_alloc(IBK_HASH_SLOTS(PORT_GIDS) *
				   sizeof(*k->gid_slots));
	if (ibk_port_init(&k->port, k->pkey_cells, CACHED_LEN, k->pkey_slots,
			  IBK_HASH_SLOTS(CACHED_LEN), k->gid_cells, PORT_GIDS,
			  k->gid_slots, IBK_HASH_SLOTS(PORT_GIDS)) ||
	    ibk_port_set_state(&k->port, IBK_PORT_ACTIVE) ||
	    ibk_pkey_table_refill(&k->port.pkeys, keys, CACHED_LEN,
		    ibk_pkey_table_refill_ticket(&k->port.pkeys))) {
		fprintf(stderr, "bench: cannot set up a port\n");
		exit(2);
	}
	pthread_rwlock_init(&k->cache.lock, NULL);
	k->cache.table = bench_alloc(CACHED_LEN * sizeof(uint16_t));
	base_cache_refill(&k->cache, keys, CACHED_LEN);
	k->buffers = bench_alloc(nbuffers * BENCH_RX_BUFFER_SIZE);
}

/* Frees what port_init() allocated. */
static void port_free(struct port *k)
{
	pthread_rwlock_destroy(&k->cache.lock);
	free(k->cache.table);
	free(k->pkey_cells);
	free(k->pkey_slots);
	free(k->gid_cells);
	free(k->gid_slots);
	free(k->buffers);
}

/* A receive case's teardown: its struct port comes first. */
static void port_teardown(void *ctx)
{
	port_free(ctx);
	free(ctx);
}

/* Both sides' counters to zero, before a burst that port_agrees() checks. */
static void port_counters_reset(struct port *k)
{
	ibk_counter16_reset(&k->port.pkey_violations);
	ibk_counter16_reset(&k->port.qkey_violations);
	memset(&k->counters, 0, sizeof(k->counters));
}

/* After one burst of @n from zeroed counters: the same number accepted,
 * the same verdicts, and each side's counters bumped by its drops. */
static int port_agrees(const struct port *k, const uint8_t *lib_verdicts,
		       const uint8_t *base_verdicts, size_t lib_n,
		       size_t base_n, size_t n)
{
	unsigned drops[BASE_VERDICTS] = { 0 };
	size_t i;

	if (lib_n != base_n)
		return -1;
	for (i = 0; i < n; i++) {
		if (!bench_rx_same_verdict(lib_verdicts[i], base_verdicts[i]))
			return -1;
		drops[base_verdicts[i]]++;
	}
	if (ibk_counter16_read(&k->port.pkey_violations) !=
	    drops[BASE_DROP_PKEY] ||
	    k->counters.pkey_violations != drops[BASE_DROP_PKEY] ||
	    ibk_counter16_read(&k->port.qkey_violations) !=
	    drops[BASE_DROP_QKEY] ||
	    k->counters.qkey_violations != drops[BASE_DROP_QKEY])
		return -1;
	return 0;
}

/* One iteration is one burst; bursts walk the packets in turn. */
static size_t port_burst_at(uint64_t i)
{
	return (i % (BENCH_RX_SEQUENCE / BENCH_RX_BURST)) * BENCH_RX_BURST;
}

/* ------------------------------------------------------------------------
 * port_rx_burst: a port's receive path, 32 UD packets per burst to one QP
 * ------------------------------------------------------------------------ */

#define PORT_QP_PKEY 0x8123	/* rx_ud_burst's QP keys and packets */
#define PORT_QP_QKEY 0x00000b1b
#define PORT_RX_SEED 0x1b1b0003

struct port_rx {
	struct port p;			/* first: 64-byte aligned */
	struct ibk_qp_keys qp;
	const void *hdrs[BENCH_RX_SEQUENCE];
	uint8_t verdicts[BENCH_RX_BURST];
	uint8_t lib_verdicts[BENCH_RX_SEQUENCE];
	uint8_t base_verdicts[BENCH_RX_SEQUENCE];
};

/*
 * The port's table holds random keys but the QP's, full, at a random
 * index. The packets are rx_ud_burst's (same seed), so the two cases
 * compare.
 */
static void *port_rx_setup(const struct bench_case *c)
{
	struct port_rx *k = bench_alloc(sizeof(*k));
	struct bench_rng r = { 0x1b1b0050 };
	struct bench_rng packets = { PORT_RX_SEED };
	ibk_pkey_t keys[CACHED_LEN];

	random_pkeys(&r, keys, CACHED_LEN);
	k->qp.type = IBK_QPT_UD;
	k->qp.pkey_index = (uint16_t)bench_rng_below(&r, CACHED_LEN);
	k->qp.qkey = PORT_QP_QKEY;
	keys[k->qp.pkey_index] = PORT_QP_PKEY;
	port_init(&k->p, keys, BENCH_RX_BUFFERS);
	bench_rx_packets(&packets, PORT_QP_PKEY, PORT_QP_QKEY,
			 (unsigned)c->param, k->p.buffers, k->hdrs);
	return k;
}

__attribute__((noinline))
static uint64_t port_rx_lib(void *ctx, uint64_t iters)
{
	struct port_rx *k = ctx;
	uint64_t accepted = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		accepted += ibk_port_rx_burst(&k->p.port, &k->qp,
					      k->hdrs + port_burst_at(i),
					      BENCH_RX_BURST, k->verdicts);
		BENCH_BARRIER();
	}
	return accepted;
}

__attribute__((noinline))
static uint64_t port_rx_base(void *ctx, uint64_t iters)
{
	struct port_rx *k = ctx;
	uint64_t accepted = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		accepted += base_port_rx_ud(&k->p.cache, &k->p.counters,
					    k->qp.pkey_index, k->qp.qkey,
					    k->hdrs + port_burst_at(i),
					    k->verdicts, BENCH_RX_BURST);
		BENCH_BARRIER();
	}
	return accepted;
}

/* Burst by burst, port_agrees(). */
static int port_rx_check(void *ctx)
{
	struct port_rx *k = ctx;
	size_t b, lib_n, base_n;

	for (b = 0; b < BENCH_RX_SEQUENCE; b += BENCH_RX_BURST) {
		port_counters_reset(&k->p);
		lib_n = ibk_port_rx_burst(&k->p.port, &k->qp, k->hdrs + b,
					  BENCH_RX_BURST, k->lib_verdicts + b);
		base_n = base_port_rx_ud(&k->p.cache, &k->p.counters,
					 k->qp.pkey_index, k->qp.qkey,
					 k->hdrs + b, k->base_verdicts + b,
					 BENCH_RX_BURST);
		if (port_agrees(&k->p, k->lib_verdicts + b,
				k->base_verdicts + b, lib_n, base_n,
				BENCH_RX_BURST))
			return -1;
	}
	return 0;
}

static void port_rx_note(void *ctx, char *buf, size_t len)
{
	struct port_rx *k = ctx;

	bench_rx_note(PORT_QP_PKEY, PORT_QP_QKEY, k->hdrs, k->base_verdicts,
		      buf, len);
}

/* ------------------------------------------------------------------------
 * port_rx_mixed: bursts of 32 to many QPs, UD and RC, each its own index
 * ------------------------------------------------------------------------ */

#define MIXED_QPS 64
#define MIXED_BUFFERS 1024	/* 64 KiB of packets, 16 per QP */

struct port_mixed {
	struct port p;			/* first: 64-byte aligned */
	struct ibk_qp_keys qps[MIXED_QPS];
	struct base_qp base_qps[MIXED_QPS];
	const void *hdrs[BENCH_RX_SEQUENCE];
	const struct ibk_qp_keys *lib_to[BENCH_RX_SEQUENCE];
	const struct base_qp *base_to[BENCH_RX_SEQUENCE];
	uint8_t verdicts[BENCH_RX_BURST];
	uint8_t lib_verdicts[BENCH_RX_SEQUENCE];
	uint8_t base_verdicts[BENCH_RX_SEQUENCE];
};

/* RC opcodes a responder receives: SEND only, RDMA WRITE only, RDMA READ
 * request, SEND first (IBA 9.2, table 38). */
static const uint8_t mixed_rc_opcodes[] = { 0x04, 0x0a, 0x0c, 0x00 };

/*
 * 64 QPs, even ones UD, odd ones RC, each with a random Q_Key (an RC QP's
 * is never checked) at its own random index of the port's 128-entry
 * table of random keys, its entry made a full member. Buffer b holds a
 * packet to QP b % 64 (a UD SEND only, or an RC opcode at random) with a
 * P_Key drop 1 in c->param and, for UD, a Q_Key drop 1 in c->param of the
 * rest; the 4 bytes where a DETH's Q_Key would sit never hold an RC QP's
 * Q_Key, so that a check reading them for RC shows. The packets arrive in
 * a random order of 2^20, each to its buffer's QP.
 */
static void *port_mixed_setup(const struct bench_case *c)
{
	struct port_mixed *k = bench_alloc(sizeof(*k));
	struct bench_rng r = { 0x1b1b0070 };
	uint8_t taken[CACHED_LEN] = { 0 };
	ibk_pkey_t keys[CACHED_LEN];
	unsigned q, b;
	size_t i;

	random_pkeys(&r, keys, CACHED_LEN);
	for (q = 0; q < MIXED_QPS; q++) {
		uint16_t index;

		do
			index = (uint16_t)bench_rng_below(&r, CACHED_LEN);
		while (taken[index]);
		taken[index] = 1;
		keys[index] |= IBK_PKEY_FULL_MEMBER;
		k->qps[q].type = q % 2 ? IBK_QPT_RC : IBK_QPT_UD;
		k->qps[q].pkey = keys[index];	/* unused: read from the table */
		k->qps[q].pkey_index = index;
		k->qps[q].qkey = (uint32_t)bench_rng_next(&r) & 0x7fffffffu;
		k->base_qps[q] = (struct base_qp){ q % 2 == 0, index,
						   k->qps[q].qkey, false };
	}
	port_init(&k->p, keys, MIXED_BUFFERS);
	for (b = 0; b < MIXED_BUFFERS; b++) {
		const struct ibk_qp_keys *qp = &k->qps[b % MIXED_QPS];
		uint8_t opcode = qp->type == IBK_QPT_UD ? 0x64 :
				 mixed_rc_opcodes[bench_rng_below(&r, 4)];

		bench_rx_write_packet(&r, opcode, qp->pkey,
				      qp->type == IBK_QPT_UD ? qp->qkey :
				      ~qp->qkey, (unsigned)c->param,
				      k->p.buffers + b * BENCH_RX_BUFFER_SIZE +
				      BENCH_LRH_LEN);
	}
	for (i = 0; i < BENCH_RX_SEQUENCE; i++) {
		b = bench_rng_below(&r, MIXED_BUFFERS);
		k->hdrs[i] = k->p.buffers + b * BENCH_RX_BUFFER_SIZE +
			     BENCH_LRH_LEN;
		k->lib_to[i] = &k->qps[b % MIXED_QPS];
		k->base_to[i] = &k->base_qps[b % MIXED_QPS];
	}
	return k;
}

__attribute__((noinline))
static uint64_t port_mixed_lib(void *ctx, uint64_t iters)
{
	struct port_mixed *k = ctx;
	uint64_t accepted = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		size_t at = port_burst_at(i);

		accepted += ibk_port_rx_mixed(&k->p.port, k->lib_to + at,
					      k->hdrs + at, BENCH_RX_BURST,
					      k->verdicts, NULL);
		BENCH_BARRIER();
	}
	return accepted;
}

/* A baseline's receive path for a burst to many QPs (baseline.h). */
typedef size_t (*port_base_fn)(struct base_pkey_cache *c,
			       struct base_port_counters *counters,
			       const struct base_qp *const *qps,
			       const void *const *hdrs, uint8_t *verdicts,
			       size_t n);

static inline uint64_t port_mixed_run(struct port_mixed *k, port_base_fn rx,
			       uint64_t iters)
{
	uint64_t accepted = 0;
	uint64_t i;

	for (i = 0; i < iters; i++) {
		size_t at = port_burst_at(i);

		accepted += rx(&k->p.cache, &k->p.counters, k->base_to + at,
			       k->hdrs + at, k->verdicts, BENCH_RX_BURST);
		BENCH_BARRIER();
	}
	return accepted;
}

__attribute__((noinline))
static uint64_t port_mixed_base(void *ctx, uint64_t iters)
{
	return port_mixed_run(ctx, base_port_rx, iters);
}

__attribute__((noinline))
static uint64_t port_mixed_burst_locked(void *ctx, uint64_t iters)
{
	return port_mixed_run(ctx, base_port_rx_locked_burst, iters);
}

__attribute__((noinline))
static uint64_t port_mixed_rxe(void *ctx, uint64_t iters)
{
	return port_mixed_run(ctx, base_rxe_port_rx, iters);
}

/* Burst by burst, port_agrees() for every baseline: the rwlock stacks
 * and soft-RoCE's checks (baseline.h says why all their verdicts are
 * comparable on these inputs). */
static int port_mixed_check(void *ctx)
{
	static const port_base_fn stacks[] = {
		base_port_rx, base_port_rx_locked_burst, base_rxe_port_rx,
	};
	struct port_mixed *k = ctx;
	size_t b, lib_n, base_n, s;

	for (s = 0; s < sizeof(stacks) / sizeof(stacks[0]); s++) {
		port_base_fn rx = stacks[s];

		for (b = 0; b < BENCH_RX_SEQUENCE; b += BENCH_RX_BURST) {
			port_counters_reset(&k->p);
			lib_n = ibk_port_rx_mixed(&k->p.port, k->lib_to + b,
						  k->hdrs + b, BENCH_RX_BURST,
						  k->lib_verdicts + b, NULL);
			base_n = rx(&k->p.cache, &k->p.counters,
				    k->base_to + b, k->hdrs + b,
				    k->base_verdicts + b, BENCH_RX_BURST);
			if (port_agrees(&k->p, k->lib_verdicts + b,
					k->base_verdicts + b, lib_n, base_n,
					BENCH_RX_BURST))
				return -1;
		}
	}
	return 0;
}

static unsigned port_mixed_peers(void *ctx, struct bench_side *sides)
{
	sides[0] = (struct bench_side){ "rwlock_per_burst",
					port_mixed_burst_locked, ctx };
	sides[1] = (struct bench_side){ "rxe_check_keys", port_mixed_rxe,
					ctx };
	return 2;
}

static void port_mixed_note(void *ctx, char *buf, size_t len)
{
	struct port_mixed *k = ctx;
	unsigned count[BASE_VERDICTS] = { 0 };
	size_t i;

	for (i = 0; i < BENCH_RX_SEQUENCE; i++)
		count[k->base_verdicts[i]]++;
	snprintf(buf, len, "%u packets: %u accept, %u P_Key drop, %u Q_Key "
		 "drop", BENCH_RX_SEQUENCE, count[BASE_ACCEPT],
		 count[BASE_DROP_PKEY], count[BASE_DROP_QKEY]);
}

/* ------------------------------------------------------------------------
 * The cases
 * ------------------------------------------------------------------------ */

#define PKEY_FIND(n) {							\
	.name = "pkey_find_" #n, .base_name = "linear_scan",		\
	.inputs = "full table of " #n " random valid keys; 7/8 of "	\
		  "lookups hit, 1/8 miss",				\
	.param = n, .ops_per_iter = 1,					\
	.setup = pkey_find_setup, .teardown = pkey_find_teardown,	\
	.lib = pkey_find_lib, .base = pkey_find_base,			\
	.check = pkey_find_check, .note = pkey_find_note,		\
}

#define GID_FIND(n) {							\
	.name = "gid_find_" #n, .base_name = "linear_memcmp",		\
	.inputs = "full table of " #n " random GIDs (link-local, "	\
		  "v4-mapped, global); 7/8 of lookups hit, 1/8 miss",	\
	.param = n, .ops_per_iter = 1,					\
	.setup = gid_find_setup, .teardown = gid_find_teardown,		\
	.lib = gid_find_lib, .base = gid_find_base,			\
	.check = gid_find_check, .note = gid_find_note,			\
}

#define CACHED_READ(t) {						\
	.name = "cached_read_" #t "t", .base_name = "pthread_rwlock",	\
	.inputs = #t " reader thread(s) get by index from a 128-entry "	\
		  "table; a writer refills it every 1 ms",		\
	.threads = t, .ops_per_iter = 1,				\
	.setup = cached_setup, .teardown = cached_teardown,		\
	.lib = cached_lib, .base = cached_base,				\
	.check = cached_check, .note = cached_note,			\
	.peers = cached_peers,						\
}

const struct bench_case bench_tables_cases[] = {
	PKEY_FIND(16),
	PKEY_FIND(128),
	PKEY_FIND(4096),
	PKEY_FIND(65536),
	GID_FIND(16),
	GID_FIND(128),
	GID_FIND(256),
	GID_FIND(1024),
	GID_FIND(4096),
	GID_FIND(65536),
	CACHED_READ(1),
	CACHED_READ(2),
	{
		.name = "ref_check", .base_name = "rwlock_reread",
		.inputs = "64 references into a 128-entry table, one thread, "
			  "no writer",
		.ops_per_iter = 1,
		.setup = ref_check_setup, .teardown = ref_check_teardown,
		.lib = ref_check_lib, .base = ref_check_base,
		.check = ref_check_check,
	},
	{
		.name = "port_rx_burst", .base_name = "rwlock_per_packet",
		.inputs = "bursts of 32 of rx_ud_burst's packets to a UD QP "
			  "whose P_Key index is in the 128-entry table of an "
			  "ACTIVE port; P_Key drop 1/16, Q_Key drop 1/16; one "
			  "thread, no writer",
		.param = 16, .ops_per_iter = BENCH_RX_BURST,
		.setup = port_rx_setup, .teardown = port_teardown,
		.lib = port_rx_lib, .base = port_rx_base,
		.check = port_rx_check, .note = port_rx_note,
	},
	{
		.name = "port_rx_mixed", .base_name = "rwlock_per_packet",
		.inputs = "bursts of 32 to 64 QPs (UD and RC alternately, "
			  "each at its own index of an ACTIVE port's "
			  "128-entry table) from 1024 packets in a random "
			  "order of 2^20; P_Key drop 1/16, UD Q_Key drop 1/16; "
			  "one thread, no writer",
		.param = 16, .ops_per_iter = BENCH_RX_BURST,
		.setup = port_mixed_setup, .teardown = port_teardown,
		.lib = port_mixed_lib, .base = port_mixed_base,
		.check = port_mixed_check, .note = port_mixed_note,
		.peers = port_mixed_peers,
	},
};

const size_t bench_tables_ncases =
	sizeof(bench_tables_cases) / sizeof(bench_tables_cases[0]);
