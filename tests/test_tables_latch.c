/* SPDX-License-Identifier: MIT */
/*
 * test_tables_latch.c - what the latch promises readers, tested where a
 * seqlock breaks (issue 7):
 *
 *  1. A frozen writer stops no reader. A child process refills a
 *     65536-entry table back to back in a MAP_SHARED mapping; the parent's
 *     reader threads check every get, find, reference and full snapshot
 *     against the closed-form table of exactly one refill. Twenty times
 *     or more the writer runs 1-20 ms and is stopped (SIGSTOP) once the
 *     parent sees it hold the lock word, until 15 stops have landed
 *     inside a write section (at most 60 stops), and in every one the
 *     readers must complete at least
 *     1000 consistent reads, every thread some, within 1 s. P_Key
 *     table, then GID table.
 *  2. A reader inside its own thread's write section. A single-threaded
 *     child writes a P_Key and a GID table back to back while a periodic
 *     timer signal reads both from its handler. Each read must complete
 *     (the parent kills the child and fails the test if it hangs), match
 *     one published step, and, when the handler interrupted a write
 *     section, be the step before the one being written while the count
 *     is odd, the step being written once it is even.
 *  3. A model. A separately written linear model of a port (both tables,
 *     port state, awaiting-refill flags, generations) follows random
 *     operations of every kind; after each one every read API is checked
 *     against it, and references taken before it must read stale exactly
 *     when the count moved. Capacities 1 to 65536, generations across the
 *     32-bit wrap. Then one writer thread drives library and model while
 *     two readers check every result against the model states published
 *     in the window the read spanned (a history ring indexed by step).
 *
 * Each part is bounded by a count and by wall time and prints its figures
 * as TAP diagnostics. Linux (fork, SIGSTOP, setitimer, MAP_SHARED).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ib_tables.h"
#include "rng.h"
#include "tap.h"

/* ThreadSanitizer holds asynchronous signals until the thread reaches a
 * point it considers safe, so whether a handler ever lands inside a write
 * section is up to it (under GCC 12's and Clang 14's, about half of the
 * handler reads do: the section's atomic stores are such points). */
#if defined(__SANITIZE_THREAD__)
#define TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_TSAN 1
#endif
#endif
#ifndef TEST_TSAN
#define TEST_TSAN 0
#endif

#define MAX_DIAG	5
#define MS		1000000ull	/* nanoseconds */
#define SEC		1000000000ull

/* ------------------------------------------------------------------------
 * Common helpers
 * ------------------------------------------------------------------------ */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(ns / SEC);
	ts.tv_nsec = (long)(ns % SEC);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The latch fields the tests look at: the count (the generation; odd while
 * readers use copy 1) and whether a writer holds the lock word. */
static uint32_t latch_count(const struct ibk__table *h)
{
	return ibk__load(&h->latch.count, acquire);
}

static bool latch_writing(const struct ibk__table *h)
{
	return ibk__load(&h->latch.writer, relaxed) != 0;
}

/* The step a read sees at count @c, step 0 published at count @gen0: an
 * odd count (first half of an update) still shows the previous step. */
/* How far the count moved from @from to @c: it steps over 0 and 1 (the
 * generation no reader sees) when it wraps. */
static uint32_t count_moved(uint32_t c, uint32_t from)
{
	return c - from - (c < from ? 2u : 0u);
}

static uint32_t step_at(uint32_t c, uint32_t gen0)
{
	return count_moved(c, gen0) / 2;
}

/* True if count @gen lies in [@lo, @hi], across the wrap. */
static bool count_within(uint32_t gen, uint32_t lo, uint32_t hi)
{
	return gen - lo <= hi - lo;
}

/* murmur3's finaliser: the closed-form tables' source of variety. */
static uint32_t mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x85ebca6bu;
	x ^= x >> 13;
	x *= 0xc2b2ae35u;
	x ^= x >> 16;
	return x;
}

static bool pkey_valid(unsigned k)
{
	return (k & 0x7fffu) != 0;
}

static bool gid_eq(const struct ibk_gid *a, const struct ibk_gid *b)
{
	return memcmp(a->raw, b->raw, 16) == 0;
}

static bool gid_zero(const struct ibk_gid *g)
{
	static const struct ibk_gid zero;

	return gid_eq(g, &zero);
}

/* One "# ..." line, at most MAX_DIAG per @budget, whole even when several
 * threads print. */
__attribute__((format(printf, 2, 3)))
static void diag_limited(atomic_int *budget, const char *fmt, ...)
{
	char buf[600];
	va_list ap;

	if (atomic_fetch_add(budget, 1) >= MAX_DIAG)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("# %s\n", buf);
	fflush(stdout);
}

/* A TAP line for a check that does not apply here: "ok N # SKIP why". */
static void tap_skip(const char *why, const char *what)
{
	tap__count++;
	printf("ok %u - %s # SKIP %s\n", tap__count, what, why);
	fflush(stdout);
}

/* Waits up to @timeout for @pid to exit: true, with its status, if it did. */
static bool wait_exit(pid_t pid, uint64_t timeout, int *status)
{
	uint64_t end = now_ns() + timeout;
	pid_t r;

	for (;;) {
		r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return true;
		if (r < 0 && errno != EINTR)
			return false;
		if (now_ns() >= end)
			return false;
		sleep_ns(2 * MS);
	}
}

/* Kills @pid, stopped or not, and reaps it. */
static void kill_reap(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

/* In a child: die with the parent @parent (and exit if it is gone). */
static void child_setup(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(3);
}

static const char *exit_text(int status, char *buf, size_t n)
{
	if (WIFEXITED(status))
		snprintf(buf, n, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, n, "signal %d", WTERMSIG(status));
	else
		snprintf(buf, n, "status 0x%x", status);
	return buf;
}

/* Read kinds shared by the tests' readers. */
enum {
	RD_GET,
	RD_FIND,
	RD_EXACT,	/* P_Key only */
	RD_REF_GET,
	RD_REF_FIND,
	RD_SNAPSHOT,
};

/* ========================================================================
 * 1. A frozen writer (SIGSTOP) stops no reader
 * ======================================================================== */

#define FZ_CAP		65536u
#define FZ_FREEZES	20	/* at least this many freezes ... */
#define FZ_MIN_IN_SECTION 15	/* ... and more until this many landed
				 * inside a section (a loaded machine
				 * deschedules the writer outside one) */
#define FZ_FREEZES_MAX	60
#define FZ_MIN_READS	1000ul	/* per freeze, all readers */
#define FZ_WINDOW	(1000 * MS)	/* ... within this (a loaded CI machine
				   may not run every reader sooner) */
#define FZ_HOLD		(20 * MS)	/* a freeze lasts at least this */
#define FZ_AIM		(100 * MS)	/* wait for a section before SIGSTOP */
#define FZ_READERS	2
#define FZ_START	0xfffffff6u	/* step 0 at 0xfffffffa: step 3 wraps */
#define FZ_SHIFT	4099u		/* base rotation per refill */
#define FZ_WRITER_LIMIT	(300 * SEC)	/* a lost writer gives up */

/* The head of the shared mapping; the table's storage follows it. */
struct fz_shared {
	struct ibk_pkey_table pk;
	struct ibk_gid_table gid;
	_Alignas(64) atomic_uint stop;	/* parent -> writer: finish, exit */
	atomic_uint steps;		/* refills the writer has published */
};

struct fz_reader {
	_Alignas(64) atomic_ulong reads;
	atomic_ulong bad;
	atomic_ulong snapshots;
	uint64_t rng;
	int id;
	unsigned epoch;			/* freezes seen */
	void *snap;			/* FZ_CAP entries */
};

static struct fz_shared *fz;
static bool fz_is_gid;			/* the table this round freezes */
static uint32_t fz_gen0;
static atomic_uint fz_epoch;		/* freezes begun */
static atomic_uint fz_quit;
static atomic_int fz_diags;
static struct fz_reader fz_rd[FZ_READERS];
static ibk_pkey_t fz_keys[FZ_CAP];		/* the writer's refill input */
static struct ibk_gid_entry fz_entries[FZ_CAP];

/* A hash per index, computed once: the writer builds 65536 entries per
 * refill, and the cheaper that is, the more of its time it spends inside
 * the write section, where the freezes should land. */
static uint32_t fz_ihash[FZ_CAP];

static void fz_hash_init(void)
{
	uint32_t i;

	for (i = 0; i < FZ_CAP; i++)
		fz_ihash[i] = mix32(i * 0x85ebca77u ^ 0x5bd1e995u);
}

/* A hash of (s, i): the index's hash and the refill's, mixed. */
static uint32_t fz_hash(uint32_t s, uint32_t i)
{
	uint32_t x = fz_ihash[i] ^ (s * 0x9e3779b1u);

	return x ^ (x >> 15);
}

/*
 * P_Key entry @i of refill @s: entries 2j and 2j+1 hold base j + s * 4099
 * (mod 2^15), so every base lives at one known pair of indices that moves
 * with each refill; membership from a hash of (s, i); one entry in eight
 * empty, as 0x0000 or 0x8000, and so is the pair whose base comes out 0.
 */
static ibk_pkey_t fz_pk_entry(uint32_t s, uint32_t i)
{
	uint32_t base = ((i >> 1) + s * FZ_SHIFT) & 0x7fffu;
	uint32_t h = fz_hash(s, i);

	if (base == 0 || h % 8u == 0)
		return (ibk_pkey_t)(h & 0x10u ? 0x8000u : 0u);
	return (ibk_pkey_t)(base | (h & 0x20u ? 0x8000u : 0u));
}

/* Find by value in refill @s: the base's pair; full first, then lower. */
static int fz_pk_find(uint32_t s, unsigned key, ibk_pkey_t *found)
{
	uint32_t base = key & 0x7fffu, j, k;
	int best = IBK_ENOENT;
	ibk_pkey_t v;

	if (!base)
		return IBK_EINVAL;
	j = (base - s * FZ_SHIFT) & 0x7fffu;
	for (k = 0; k < 2; k++) {
		v = fz_pk_entry(s, 2 * j + k);
		if ((v & 0x7fffu) != base)
			continue;
		if (best < 0 || ((v & 0x8000u) && !(*found & 0x8000u))) {
			best = (int)(2 * j + k);
			*found = v;
		}
	}
	return best;
}

static int fz_pk_exact(uint32_t s, unsigned key)
{
	uint32_t j = ((key & 0x7fffu) - s * FZ_SHIFT) & 0x7fffu, k;

	if (!pkey_valid(key))
		return IBK_EINVAL;
	for (k = 0; k < 2; k++)
		if (fz_pk_entry(s, 2 * j + k) == key)
			return (int)(2 * j + k);
	return IBK_ENOENT;
}

/* The GID entries 2j and 2j+1 of refill @s share fe80::s:j. */
static struct ibk_gid fz_gid_value(uint32_t s, uint32_t j)
{
	return ibk_gid_make(IBK_GID_DEFAULT_PREFIX, (uint64_t)s << 32 | j);
}

/* GID entry @i of refill @s: fe80::s:(i/2) with a type from a hash of
 * (s, i), so a pair may repeat one (GID, type) or hold two types; one
 * entry in eight empty. */
static struct ibk_gid_entry fz_gid_entry(uint32_t s, uint32_t i)
{
	struct ibk_gid_entry e;
	uint32_t h = fz_hash(s, i);

	memset(&e, 0, sizeof(e));
	e.type = IBK_GID_TYPE_IB;
	if (h % 8u == 0)
		return e;
	e.gid = fz_gid_value(s, i >> 1);
	e.type = (enum ibk_gid_type)((h >> 3) % 3u);
	return e;
}

/* Find in refill @s: only its own GIDs are there, each at its pair. */
static int fz_gid_find(uint32_t s, const struct ibk_gid *q, int type,
		       enum ibk_gid_type *found)
{
	uint64_t guid = ibk_gid_guid(q);
	uint32_t j = (uint32_t)guid, k;
	struct ibk_gid_entry e;

	if (gid_zero(q) || type < -1 || type > 2)
		return IBK_EINVAL;
	if (ibk_gid_subnet_prefix(q) != IBK_GID_DEFAULT_PREFIX ||
	    (uint32_t)(guid >> 32) != s || j >= FZ_CAP / 2)
		return IBK_ENOENT;
	for (k = 0; k < 2; k++) {
		e = fz_gid_entry(s, 2 * j + k);
		if (!gid_zero(&e.gid) && (type < 0 || (int)e.type == type)) {
			*found = e.type;
			return (int)(2 * j + k);
		}
	}
	return IBK_ENOENT;
}

static bool fz_gid_entry_eq(const struct ibk_gid_entry *a,
			    const struct ibk_gid_entry *b)
{
	return gid_eq(&a->gid, &b->gid) && a->type == b->type;
}

/* ---- the writer: a child process refilling back to back ---- */

static void fz_writer(pid_t parent)
{
	uint64_t end = now_ns() + FZ_WRITER_LIMIT;
	uint32_t s, i;
	int rc;

	child_setup(parent);
	for (s = 1; !atomic_load(&fz->stop); s++) {
		if (fz_is_gid) {
			for (i = 0; i < FZ_CAP; i++)
				fz_entries[i] = fz_gid_entry(s, i);
			rc = ibk_gid_table_refill(&fz->gid, fz_entries, FZ_CAP,
						  ibk_gid_table_refill_ticket(&fz->gid));
		} else {
			for (i = 0; i < FZ_CAP; i++)
				fz_keys[i] = fz_pk_entry(s, i);
			rc = ibk_pkey_table_refill(&fz->pk, fz_keys, FZ_CAP,
						   ibk_pkey_table_refill_ticket(&fz->pk));
		}
		if (rc != IBK_OK)
			_exit(4);
		atomic_store(&fz->steps, s);
		if (getppid() != parent || now_ns() > end)
			_exit(5);
	}
	_exit(0);
}

/* ---- the readers ---- */

static bool fz_pk_expect(uint32_t g, unsigned op, uint32_t i, unsigned key,
			 int rc, ibk_pkey_t v)
{
	ibk_pkey_t want = 0;
	int w;

	switch (op) {
	case RD_GET:
	case RD_REF_GET:
		want = fz_pk_entry(g, i);
		return pkey_valid(want) ? rc == IBK_OK && v == want :
		       rc == IBK_ENOENT;
	case RD_FIND:
	case RD_REF_FIND:
		w = fz_pk_find(g, key, &want);
		return rc == w && (w < 0 || v == want);
	default:
		return rc == fz_pk_exact(g, key);
	}
}

static void fz_bad(struct fz_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fz_bad(struct fz_reader *r, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	atomic_fetch_add_explicit(&r->bad, 1, memory_order_relaxed);
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	diag_limited(&fz_diags, "inconsistent read: %s", buf);
}

/* A reference must read stale once the count has left its generation, and
 * fresh while the count stays on it. */
static bool fresh_ok(uint32_t gen, bool fresh, uint32_t before,
		     uint32_t after)
{
	return !((before != gen && fresh) || (after == gen && !fresh));
}

static void fz_pk_read(struct fz_reader *r, unsigned op)
{
	const struct ibk_pkey_table *t = &fz->pk;
	ibk_pkey_t *snap = (ibk_pkey_t *)r->snap;
	uint32_t c0 = latch_count(&t->hdr), c1, lo = step_at(c0, fz_gen0);
	uint32_t i = test_rng_below_r(&r->rng, FZ_CAP), g, gen = 0, b, a;
	unsigned key;
	struct ibk_pkey_ref ref;
	ibk_pkey_t v = 0;
	bool exact = false, ok = false, f;
	int rc;

	if (test_rng_below_r(&r->rng, 8) == 0)
		key = (unsigned)test_rng64_r(&r->rng) & 0xffffu;
	else
		key = fz_pk_entry(lo - test_rng_below_r(&r->rng, 2),
				  test_rng_below_r(&r->rng, FZ_CAP)) ^
		      ((unsigned)test_rng64_r(&r->rng) & 0x8000u);
	memset(&ref, 0, sizeof(ref));
	switch (op) {
	case RD_GET:
		rc = ibk_pkey_table_get(t, i, &v);
		break;
	case RD_FIND:
		rc = ibk_pkey_table_find(t, (ibk_pkey_t)key, &v);
		break;
	case RD_EXACT:
		rc = ibk_pkey_table_find_exact(t, (ibk_pkey_t)key);
		break;
	case RD_REF_GET:
		rc = ibk_pkey_table_ref_get(t, i, &ref);
		if (rc == IBK_OK) {
			exact = true;
			gen = ref.generation;
			v = ref.pkey;
			if (ref.index != i)
				rc = IBK_ERANGE;	/* never expected */
		}
		break;
	case RD_REF_FIND:
		rc = ibk_pkey_table_ref_find(t, (ibk_pkey_t)key, &ref);
		if (rc == IBK_OK) {
			exact = true;
			gen = ref.generation;
			v = ref.pkey;
			rc = ref.index;
		}
		break;
	default:
		rc = ibk_pkey_table_snapshot(t, FZ_CAP, snap, &gen);
		exact = true;
		break;
	}
	c1 = latch_count(&t->hdr);

	if (exact) {
		g = step_at(gen, fz_gen0);
		if (!count_within(gen, c0, c1)) {
			fz_bad(r, "P_Key op %u: generation 0x%08x outside "
			       "0x%08x..0x%08x", op, gen, c0, c1);
			goto done;
		}
		if (op == RD_SNAPSHOT) {
			ok = rc == (int)FZ_CAP;
			for (i = 0; ok && i < FZ_CAP; i++)
				ok = snap[i] == fz_pk_entry(g, i);
			if (rc != (int)FZ_CAP)
				fz_bad(r, "P_Key snapshot: rc %d", rc);
			else if (!ok)
				fz_bad(r, "P_Key snapshot of refill %u: entry "
				       "%u is 0x%04x, want 0x%04x", g, i - 1,
				       snap[i - 1], fz_pk_entry(g, i - 1));
			else
				atomic_fetch_add_explicit(&r->snapshots, 1,
							  memory_order_relaxed);
			goto done;
		}
		ok = fz_pk_expect(g, op, i, key, rc, v);
		b = latch_count(&t->hdr);
		f = ibk_pkey_table_ref_fresh(t, &ref);
		a = latch_count(&t->hdr);
		ok = ok && fresh_ok(gen, f, b, a);
	} else {
		for (g = lo;; g++) {
			if (fz_pk_expect(g, op, i, key, rc, v)) {
				ok = true;
				break;
			}
			if (g == step_at(c1, fz_gen0))
				break;
		}
	}
	if (!ok)
		fz_bad(r, "P_Key op %u index %u key 0x%04x: rc %d value "
		       "0x%04x, no refill in %u..%u has that", op, i, key, rc,
		       v, lo, step_at(c1, fz_gen0));
done:
	atomic_fetch_add_explicit(&r->reads, 1, memory_order_relaxed);
}

static bool fz_gid_expect(uint32_t g, unsigned op, uint32_t i,
			  const struct ibk_gid *q, int type, int rc,
			  const struct ibk_gid_entry *e)
{
	struct ibk_gid_entry want;
	enum ibk_gid_type ft = IBK_GID_TYPE_IB;
	int w;

	switch (op) {
	case RD_GET:
	case RD_REF_GET:
		want = fz_gid_entry(g, i);
		return gid_zero(&want.gid) ? rc == IBK_ENOENT :
		       rc == IBK_OK && fz_gid_entry_eq(e, &want);
	default:
		w = fz_gid_find(g, q, type, &ft);
		return rc == w && (w < 0 || e->type == ft);
	}
}

static void fz_gid_read(struct fz_reader *r, unsigned op)
{
	const struct ibk_gid_table *t = &fz->gid;
	struct ibk_gid_entry *snap = (struct ibk_gid_entry *)r->snap, e, want;
	uint32_t c0 = latch_count(&t->hdr), c1, lo = step_at(c0, fz_gen0);
	uint32_t i = test_rng_below_r(&r->rng, FZ_CAP), g, gen = 0, b, a;
	int type = (int)test_rng_below_r(&r->rng, 4) - 1, rc;
	enum ibk_gid_type ft = IBK_GID_TYPE_IB;
	struct ibk_gid_ref ref;
	struct ibk_gid q;
	bool exact = false, ok = false, f;

	if (test_rng_below_r(&r->rng, 8) == 0)
		q = ibk_gid_make(IBK_GID_DEFAULT_PREFIX, test_rng64_r(&r->rng));
	else
		q = fz_gid_value(lo + 1 - test_rng_below_r(&r->rng, 3),
				 test_rng_below_r(&r->rng, FZ_CAP / 2));
	memset(&e, 0, sizeof(e));
	memset(&ref, 0, sizeof(ref));
	if (op == RD_EXACT)
		op = RD_FIND;
	switch (op) {
	case RD_GET:
		rc = ibk_gid_table_get(t, i, &e);
		break;
	case RD_FIND:
		rc = ibk_gid_table_find(t, &q, (enum ibk_gid_type)type, &ft);
		e.type = ft;
		break;
	case RD_REF_GET:
		rc = ibk_gid_table_ref_get(t, i, &ref);
		if (rc == IBK_OK) {
			exact = true;
			gen = ref.generation;
			e.gid = ref.gid;
			e.type = ref.type;
			if (ref.index != i)
				rc = IBK_ERANGE;
		}
		break;
	case RD_REF_FIND:
		rc = ibk_gid_table_ref_find(t, &q, (enum ibk_gid_type)type,
					    &ref);
		if (rc == IBK_OK) {
			exact = true;
			gen = ref.generation;
			e.type = ref.type;
			rc = gid_eq(&ref.gid, &q) ? ref.index : IBK_ERANGE;
		}
		break;
	default:
		rc = ibk_gid_table_snapshot(t, FZ_CAP, snap, &gen);
		exact = true;
		break;
	}
	c1 = latch_count(&t->hdr);

	if (exact) {
		g = step_at(gen, fz_gen0);
		if (!count_within(gen, c0, c1)) {
			fz_bad(r, "GID op %u: generation 0x%08x outside "
			       "0x%08x..0x%08x", op, gen, c0, c1);
			goto done;
		}
		if (op == RD_SNAPSHOT) {
			ok = rc == (int)FZ_CAP;
			for (i = 0; ok && i < FZ_CAP; i++) {
				want = fz_gid_entry(g, i);
				ok = fz_gid_entry_eq(&snap[i], &want);
			}
			if (!ok)
				fz_bad(r, "GID snapshot (rc %d) of refill %u "
				       "differs at entry %u", rc, g, i);
			else
				atomic_fetch_add_explicit(&r->snapshots, 1,
							  memory_order_relaxed);
			goto done;
		}
		ok = fz_gid_expect(g, op, i, &q, type, rc, &e);
		b = latch_count(&t->hdr);
		f = ibk_gid_table_ref_fresh(t, &ref);
		a = latch_count(&t->hdr);
		ok = ok && fresh_ok(gen, f, b, a);
	} else {
		for (g = lo;; g++) {
			if (fz_gid_expect(g, op, i, &q, type, rc, &e)) {
				ok = true;
				break;
			}
			if (g == step_at(c1, fz_gen0))
				break;
		}
	}
	if (!ok)
		fz_bad(r, "GID op %u index %u type %d: rc %d, no refill in "
		       "%u..%u has that", op, i, type, rc, lo,
		       step_at(c1, fz_gen0));
done:
	atomic_fetch_add_explicit(&r->reads, 1, memory_order_relaxed);
}

/* Mostly gets and finds; a full snapshot one read in 65536 (it costs a
 * few thousand reads: 1 ms for 65536 GIDs, 17 ms under ThreadSanitizer),
 * and reader 0's first read after each freeze begins. */
static void *fz_reader_main(void *arg)
{
	struct fz_reader *r = (struct fz_reader *)arg;
	unsigned op, e, x;

	while (!atomic_load_explicit(&fz_quit, memory_order_relaxed)) {
		e = atomic_load_explicit(&fz_epoch, memory_order_relaxed);
		x = test_rng_below_r(&r->rng, 1024);
		if (e != r->epoch) {
			r->epoch = e;
			op = r->id == 0 ? RD_SNAPSHOT : RD_GET;
		} else if (x == 0 && test_rng_below_r(&r->rng, 64) == 0) {
			op = RD_SNAPSHOT;
		} else {
			op = x < 360 ? RD_GET : x < 640 ? RD_FIND :
			     x < 800 ? RD_EXACT : x < 912 ? RD_REF_GET :
			     RD_REF_FIND;
		}
		if (fz_is_gid)
			fz_gid_read(r, op);
		else
			fz_pk_read(r, op);
	}
	return NULL;
}

/* ---- one round: a table, a writer, 20 freezes ---- */

struct fz_freeze {
	bool stopped, in_section, still, met;
	uint32_t count;
	unsigned long reads, min_reader, bad, snapshots;
	double ms;
};

static unsigned long fz_sum(atomic_ulong *(*field)(struct fz_reader *),
			    unsigned long *each)
{
	unsigned long n = 0, v;
	int k;

	for (k = 0; k < FZ_READERS; k++) {
		v = atomic_load(field(&fz_rd[k]));
		if (each)
			each[k] = v;
		n += v;
	}
	return n;
}

static atomic_ulong *fz_f_reads(struct fz_reader *r) { return &r->reads; }
static atomic_ulong *fz_f_bad(struct fz_reader *r) { return &r->bad; }
static atomic_ulong *fz_f_snaps(struct fz_reader *r) { return &r->snapshots; }

/* Freezes the writer once, after it ran 1-20 ms; false if it would not
 * stop. */
static bool fz_freeze(pid_t pid, struct ibk__table *h, uint64_t *rng,
		      struct fz_freeze *fr)
{
	unsigned long r0[FZ_READERS], r1[FZ_READERS], bad0, snaps0, total;
	uint64_t t0, el;
	bool writing;
	int status, k;

	memset(fr, 0, sizeof(*fr));
	sleep_ns((1 + test_rng_below_r(rng, 20)) * MS);
	/* aim: stop it once it is seen holding the lock word. It spends
	 * 85-95% of its time there; polling (not spinning: under load that
	 * would take the CPU it needs) makes nearly every freeze count. */
	t0 = now_ns();
	while (!latch_writing(h) && now_ns() - t0 < FZ_AIM)
		sleep_ns(20000);
	if (kill(pid, SIGSTOP) != 0)
		return false;
	while (waitpid(pid, &status, WUNTRACED) < 0)
		if (errno != EINTR)
			return false;
	if (!WIFSTOPPED(status))
		return false;
	fr->stopped = true;
	writing = latch_writing(h);
	fr->in_section = writing;
	fr->count = latch_count(h);
	atomic_fetch_add(&fz_epoch, 1);
	fz_sum(fz_f_reads, r0);
	bad0 = fz_sum(fz_f_bad, NULL);
	snaps0 = fz_sum(fz_f_snaps, NULL);
	t0 = now_ns();
	for (;;) {
		sleep_ns(MS);
		el = now_ns() - t0;
		total = fz_sum(fz_f_reads, r1);
		fr->min_reader = r1[0] - r0[0];
		for (k = 1; k < FZ_READERS; k++)
			if (r1[k] - r0[k] < fr->min_reader)
				fr->min_reader = r1[k] - r0[k];
		fr->reads = total;
		for (k = 0; k < FZ_READERS; k++)
			fr->reads -= r0[k];
		fr->met = fr->reads >= FZ_MIN_READS && fr->min_reader >= 1 &&
			  el <= FZ_WINDOW;
		if ((fr->met && el >= FZ_HOLD) || el >= FZ_WINDOW)
			break;
	}
	fr->ms = (double)el / 1e6;
	fr->bad = fz_sum(fz_f_bad, NULL) - bad0;
	fr->snapshots = fz_sum(fz_f_snaps, NULL) - snaps0;
	fr->still = latch_count(h) == fr->count &&
		    latch_writing(h) == writing;
	kill(pid, SIGCONT);
	return true;
}

static void fz_round(bool gid)
{
	const char *name = gid ? "GID" : "P_Key";
	size_t head = (sizeof(struct fz_shared) + 63) & ~(size_t)63;
	size_t cells = gid ?
		       IBK_GID_CELLS(FZ_CAP) * sizeof(struct ibk_gid_cell) :
		       IBK_PKEY_CELLS(FZ_CAP) * sizeof(struct ibk_pkey_cell);
	uint32_t nslots = gid ? IBK_HASH_SLOTS(FZ_CAP) :
			  IBK_PKEY_HASH_SLOTS(FZ_CAP);
	size_t len = head + cells + nslots * sizeof(struct ibk_hash_slot);
	struct fz_freeze fr[FZ_FREEZES_MAX];
	pthread_t th[FZ_READERS];
	struct ibk_hash_slot *slots;
	struct ibk__table *h;
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ gid, t0;
	unsigned long reads, bad, snaps, frozen_snaps = 0;
	unsigned long minr = ~0ul, maxr = 0;
	int k, froze = 0, in_section = 0, met = 0, still = 0, status = 0;
	uint32_t c_first, c_last, steps;
	char line[FZ_FREEZES_MAX * 24 + 64], st[32];
	bool exited = false;
	size_t pos;
	void *map;
	pid_t pid, me = getpid();

	map = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		tap_ok(false, "%s frozen writer: mmap %zu bytes", name, len);
		return;
	}
	fz = (struct fz_shared *)map;
	fz_is_gid = gid;
	fz_hash_init();
	slots = (struct ibk_hash_slot *)((char *)map + head + cells);
	if (gid) {
		ibk_gid_table_init(&fz->gid, (struct ibk_gid_cell *)
				   ((char *)map + head), FZ_CAP, slots, nslots);
		h = &fz->gid.hdr;
		ibk_latch_init(&h->latch, FZ_START);
		ibk_gid_table_set_state(&fz->gid, IBK_PORT_ACTIVE);
		for (k = 0; k < (int)FZ_CAP; k++)
			fz_entries[k] = fz_gid_entry(0, (uint32_t)k);
		ibk_gid_table_refill(&fz->gid, fz_entries, FZ_CAP,
				     ibk_gid_table_refill_ticket(&fz->gid));
	} else {
		ibk_pkey_table_init(&fz->pk, (struct ibk_pkey_cell *)
				    ((char *)map + head), FZ_CAP, slots,
				    nslots);
		h = &fz->pk.hdr;
		ibk_latch_init(&h->latch, FZ_START);
		ibk_pkey_table_set_state(&fz->pk, IBK_PORT_ACTIVE);
		for (k = 0; k < (int)FZ_CAP; k++)
			fz_keys[k] = fz_pk_entry(0, (uint32_t)k);
		ibk_pkey_table_refill(&fz->pk, fz_keys, FZ_CAP,
				      ibk_pkey_table_refill_ticket(&fz->pk));
	}
	fz_gen0 = latch_count(h);
	c_first = fz_gen0;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		tap_ok(false, "%s frozen writer: fork", name);
		munmap(map, len);
		return;
	}
	if (pid == 0)
		fz_writer(me);

	atomic_store(&fz_quit, 0);
	atomic_store(&fz_epoch, 0);
	for (k = 0; k < FZ_READERS; k++) {
		atomic_store(&fz_rd[k].reads, 0);
		atomic_store(&fz_rd[k].bad, 0);
		atomic_store(&fz_rd[k].snapshots, 0);
		fz_rd[k].rng = 0x2545f4914f6cdd1dull *
			       (uint64_t)(k + 1 + 8 * gid);
		fz_rd[k].epoch = 0;
		fz_rd[k].id = k;
		fz_rd[k].snap = malloc(FZ_CAP *
				       (gid ? sizeof(struct ibk_gid_entry) :
					sizeof(ibk_pkey_t)));
		pthread_create(&th[k], NULL, fz_reader_main, &fz_rd[k]);
	}

	t0 = now_ns();
	for (k = 0; k < FZ_FREEZES_MAX &&
		    (k < FZ_FREEZES || in_section < FZ_MIN_IN_SECTION); k++) {
		if (!fz_freeze(pid, h, &rng, &fr[k]))
			break;
		froze++;
		in_section += fr[k].in_section;
		met += fr[k].met;
		still += fr[k].still;
		frozen_snaps += fr[k].snapshots;
		if (fr[k].reads < minr)
			minr = fr[k].reads;
		if (fr[k].reads > maxr)
			maxr = fr[k].reads;
	}

	/* stop the writer between refills, or kill it */
	atomic_store(&fz->stop, 1);
	kill(pid, SIGCONT);
	exited = wait_exit(pid, 30 * SEC, &status);
	if (!exited)
		kill_reap(pid);
	atomic_store(&fz_quit, 1);
	for (k = 0; k < FZ_READERS; k++) {
		pthread_join(th[k], NULL);
		free(fz_rd[k].snap);
	}
	c_last = latch_count(h);
	steps = atomic_load(&fz->steps);
	reads = fz_sum(fz_f_reads, NULL);
	bad = fz_sum(fz_f_bad, NULL);
	snaps = fz_sum(fz_f_snaps, NULL);

	tap_diag("%s %u entries: writer refilled %u times in %.2f s (count "
		 "0x%08x -> 0x%08x), %s; readers: %lu reads, %lu full "
		 "snapshots, %lu inconsistent", name, FZ_CAP, steps,
		 (double)(now_ns() - t0) / 1e9, c_first, c_last,
		 exited ? exit_text(status, st, sizeof(st)) : "killed", reads,
		 snaps, bad);
	for (pos = 0, k = 0; k < froze; k++)
		pos += (size_t)snprintf(line + pos, sizeof(line) - pos,
					" %lu%s", fr[k].reads,
					fr[k].in_section ? "*" : "");
	line[pos] = 0;
	tap_diag("%s reads per freeze (* = writer stopped inside a write "
		 "section):%s", name, line);
	for (pos = 0, k = 0; k < froze; k++)
		pos += (size_t)snprintf(line + pos, sizeof(line) - pos, " %.0f",
					fr[k].ms);
	line[pos] = 0;
	tap_diag("%s ms per freeze (a freeze ends once %lu reads are done and "
		 "%.0f ms passed, or at %.0f ms):%s", name, FZ_MIN_READS,
		 (double)FZ_HOLD / 1e6, (double)FZ_WINDOW / 1e6, line);
	for (k = 0; k < froze; k++)
		if (!fr[k].met)
			tap_diag("%s freeze %d: %lu reads in %.0f ms, slowest "
				 "reader %lu, writer %s a section, count "
				 "0x%08x", name, k + 1, fr[k].reads, fr[k].ms,
				 fr[k].min_reader,
				 fr[k].in_section ? "inside" : "outside",
				 fr[k].count);

	tap_ok(froze >= FZ_FREEZES && still == froze,
	       "%s frozen writer: stopped %d times, at least %d (SIGSTOP, "
	       "waitpid WUNTRACED), its count never moved while stopped (%d)",
	       name, froze, FZ_FREEZES, still);
	tap_ok(in_section >= FZ_MIN_IN_SECTION,
	       "%s frozen writer: %d of %d freezes landed inside a write "
	       "section (latch.writer == 1 once stopped; SIGSTOP follows a "
	       "look at the lock word), at least %d", name, in_section,
	       froze, FZ_MIN_IN_SECTION);
	tap_ok(froze >= FZ_FREEZES && met == froze,
	       "%s frozen writer: in each of %d freezes the readers completed "
	       ">= %lu consistent reads, every thread some, within %.0f ms "
	       "(%d did; reads per freeze %lu..%lu)", name, froze,
	       FZ_MIN_READS, (double)FZ_WINDOW / 1e6, met,
	       minr == ~0ul ? 0 : minr, maxr);
	tap_ok(bad == 0 && frozen_snaps >= FZ_FREEZES / 2,
	       "%s frozen writer: every read matches one refill (%lu reads, "
	       "%lu bad); %lu full %u-entry snapshots during freezes, at "
	       "least %d", name, reads, bad, frozen_snaps, FZ_CAP,
	       FZ_FREEZES / 2);
	tap_ok(exited && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	       steps >= 1 && count_moved(c_last, fz_gen0) == 2 * steps,
	       "%s frozen writer: published %u refills, count moved by "
	       "exactly 2 per refill, exited when asked", name, steps);
	munmap(map, len);
}

/* ========================================================================
 * 2. A signal handler reading the table its own thread is writing
 * ======================================================================== */

#define SG_PK_CAP	512u
#define SG_GID_CAP	128u
#define SG_REFILL_EVERY	4u
#define SG_START	0xfffff800u	/* wraps after 1024 updates */
#define SG_TICK_US	250
#define SG_MIN_READS	1000u		/* handler reads of each table */
#define SG_MIN_IN	50u		/* ... inside a write section */
#define SG_MIN_HALF	10u		/* ... in each half */
#define SG_TARGET_IN	400u		/* the child stops once it has these */
#define SG_RUN		(3 * SEC)
#define SG_HANG		(20 * SEC)

/* Where the handler found the interrupted writer of a table. */
enum {
	SG_OUTSIDE,	/* no write section open */
	SG_FIRST,	/* count odd: copy 0 being written, readers on copy 1 */
	SG_SECOND,	/* count even again: copy 1 being written */
	SG_LOCKED,	/* lock word taken, count not yet moved */
	SG_WHERE
};

struct sg_table_result {
	atomic_uint reads, bad;
	atomic_uint where[SG_WHERE];
};

/* What the child reports, in a mapping shared with the parent. */
struct sg_result {
	struct sg_table_result t[2];	/* P_Key, GID */
	atomic_uint ticks, steps, finished;
	atomic_uint first_bad;		/* the fields below are set */
	uint32_t bad_table, bad_op, bad_count, bad_writing, bad_writer;
	uint32_t bad_gen, bad_index, bad_where;
	int bad_rc;
};

static struct ibk_pkey_cell sg_pk_cells[IBK_PKEY_CELLS(SG_PK_CAP)];
static struct ibk_hash_slot sg_pk_slots[IBK_PKEY_HASH_SLOTS(SG_PK_CAP)];
static struct ibk_gid_cell sg_gid_cells[IBK_GID_CELLS(SG_GID_CAP)];
static struct ibk_hash_slot sg_gid_slots[IBK_HASH_SLOTS(SG_GID_CAP)];
static struct ibk_pkey_table sg_pk;
static struct ibk_gid_table sg_gid;
static uint32_t sg_gen0[2];
static atomic_uint sg_writing[2];	/* the step each table is being given */
static struct sg_result *sg_res;

/* P_Key entry @i as written at step @x: a base from a hash of (x, i) among
 * 256 per step (so entries repeat within a step, and steps differ),
 * either membership, one in nine empty. */
static ibk_pkey_t sg_pk_value(uint32_t x, uint32_t i)
{
	uint32_t h = mix32(x * 0x9e3779b1u + i * 0x85ebca77u);

	if (h % 9u == 0)
		return (ibk_pkey_t)(h & 0x200u ? 0x8000u : 0u);
	return (ibk_pkey_t)((1u + ((h >> 10) & 255u) + 256u * (x % 127u)) |
			    (h & 0x100u ? 0x8000u : 0u));
}

/* The entry a non-refill step @s sets: distinct within a refill period. */
static uint32_t sg_set_index(uint32_t s, uint32_t cap)
{
	return (s * 7u) % cap;
}

/* GID entry @i as written at step @x: fe80::x:k for one of 48 k per step,
 * so GIDs repeat, with any type; one in seven empty. */
static struct ibk_gid_entry sg_gid_value(uint32_t x, uint32_t i)
{
	uint32_t h = mix32(x * 0x85ebca77u + i * 0x9e3779b1u + 1u);
	struct ibk_gid_entry e;

	memset(&e, 0, sizeof(e));
	e.type = IBK_GID_TYPE_IB;
	if (h % 7u == 0)
		return e;
	e.gid = ibk_gid_make(IBK_GID_DEFAULT_PREFIX,
			     (uint64_t)x << 32 | ((h >> 8) % 48u));
	e.type = (enum ibk_gid_type)((h >> 3) % 3u);
	return e;
}

/* The P_Key table published at step @g: the last refill, then its sets. */
static void sg_pk_table(uint32_t g, ibk_pkey_t *out)
{
	uint32_t r = g - g % SG_REFILL_EVERY, s, i, n = g % SG_REFILL_EVERY;

	for (i = 0; i < SG_PK_CAP; i++)
		out[i] = sg_pk_value(r, i);
	for (s = 1; s <= n; s++)
		out[sg_set_index(r + s, SG_PK_CAP)] =
			sg_pk_value(r + s, sg_set_index(r + s, SG_PK_CAP));
}

static void sg_gid_table(uint32_t g, struct ibk_gid_entry *out)
{
	uint32_t r = g - g % SG_REFILL_EVERY, s, i, n = g % SG_REFILL_EVERY;

	for (i = 0; i < SG_GID_CAP; i++)
		out[i] = sg_gid_value(r, i);
	for (s = 1; s <= n; s++)
		out[sg_set_index(r + s, SG_GID_CAP)] =
			sg_gid_value(r + s, sg_set_index(r + s, SG_GID_CAP));
}

static void sg_publish_pk(uint32_t s)
{
	static ibk_pkey_t keys[SG_PK_CAP];
	uint32_t i;

	if (s % SG_REFILL_EVERY == 0) {
		for (i = 0; i < SG_PK_CAP; i++)
			keys[i] = sg_pk_value(s, i);
		ibk_pkey_table_refill(&sg_pk, keys, SG_PK_CAP,
				      ibk_pkey_table_refill_ticket(&sg_pk));
	} else {
		i = sg_set_index(s, SG_PK_CAP);
		ibk_pkey_table_set(&sg_pk, i, sg_pk_value(s, i));
	}
}

static void sg_publish_gid(uint32_t s)
{
	static struct ibk_gid_entry e[SG_GID_CAP];
	uint32_t i;

	if (s % SG_REFILL_EVERY == 0) {
		for (i = 0; i < SG_GID_CAP; i++)
			e[i] = sg_gid_value(s, i);
		ibk_gid_table_refill(&sg_gid, e, SG_GID_CAP,
				     ibk_gid_table_refill_ticket(&sg_gid));
	} else {
		i = sg_set_index(s, SG_GID_CAP);
		e[0] = sg_gid_value(s, i);
		ibk_gid_table_set(&sg_gid, i, &e[0].gid, e[0].type);
	}
}

/* Linear models over a table's entries. */
static int lin_pk_find(const ibk_pkey_t *e, uint32_t cap, unsigned key,
		       ibk_pkey_t *found)
{
	int best = IBK_ENOENT;
	uint32_t i;

	if (!pkey_valid(key))
		return IBK_EINVAL;
	for (i = 0; i < cap; i++) {
		if (!pkey_valid(e[i]) || ((e[i] ^ key) & 0x7fffu))
			continue;
		if (best < 0 || ((e[i] & 0x8000u) && !(*found & 0x8000u))) {
			best = (int)i;
			*found = e[i];
		}
	}
	return best;
}

static int lin_pk_exact(const ibk_pkey_t *e, uint32_t cap, unsigned key)
{
	uint32_t i;

	if (!pkey_valid(key))
		return IBK_EINVAL;
	for (i = 0; i < cap; i++)
		if (e[i] == key)
			return (int)i;
	return IBK_ENOENT;
}

static int lin_gid_find(const struct ibk_gid_entry *e, uint32_t cap,
			const struct ibk_gid *q, int type,
			enum ibk_gid_type *found)
{
	uint32_t i;

	if (gid_zero(q) || type < -1 || type > 2)
		return IBK_EINVAL;
	for (i = 0; i < cap; i++) {
		if (!gid_zero(&e[i].gid) && gid_eq(&e[i].gid, q) &&
		    (type < 0 || (int)e[i].type == type)) {
			*found = e[i].type;
			return (int)i;
		}
	}
	return IBK_ENOENT;
}

/* Where the writer of table @k was when the handler ran, from its lock
 * word, its count @c (step @g) and the step @ws it was given; *ok says if
 * that position is a possible one. */
static unsigned sg_where(bool writer, uint32_t c, uint32_t g, uint32_t ws,
			 bool *ok)
{
	if (!writer) {
		*ok = !(c & 1u) && (g == ws || g + 1 == ws);
		return SG_OUTSIDE;
	}
	if (c & 1u) {
		*ok = g + 1 == ws;	/* copy 1: the step before */
		return SG_FIRST;
	}
	if (g == ws) {
		*ok = true;		/* copy 0: already the new step */
		return SG_SECOND;
	}
	*ok = g + 1 == ws;		/* between the CAS and the first flip */
	return SG_LOCKED;
}

static void sg_record(unsigned k, bool ok, unsigned where, unsigned op,
		      uint32_t c, uint32_t ws, bool writer, uint32_t gen,
		      uint32_t index, int rc)
{
	struct sg_table_result *res = &sg_res->t[k];

	atomic_fetch_add_explicit(&res->reads, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&res->where[where], 1, memory_order_relaxed);
	if (ok)
		return;
	atomic_fetch_add_explicit(&res->bad, 1, memory_order_relaxed);
	if (atomic_exchange(&sg_res->first_bad, 1) == 0) {
		sg_res->bad_table = k;
		sg_res->bad_op = op;
		sg_res->bad_count = c;
		sg_res->bad_writing = ws;
		sg_res->bad_writer = writer;
		sg_res->bad_gen = gen;
		sg_res->bad_index = index;
		sg_res->bad_where = where;
		sg_res->bad_rc = rc;
	}
}

/* In the handler: one read of the P_Key table, checked. */
static void sg_read_pk(uint64_t *rng)
{
	static ibk_pkey_t want[SG_PK_CAP], snap[SG_PK_CAP];
	const struct ibk_pkey_table *t = &sg_pk;
	uint32_t ws = atomic_load(&sg_writing[0]);
	bool writer = latch_writing(&t->hdr), ok, same;
	uint32_t c = latch_count(&t->hdr), g = step_at(c, sg_gen0[0]);
	uint32_t gen, i = test_rng_below_r(rng, SG_PK_CAP), n;
	unsigned op = test_rng_below_r(rng, 5), key, where;
	struct ibk_pkey_ref ref;
	ibk_pkey_t v = 0, fv = 0;
	int rc, w;

	memset(&ref, 0, sizeof(ref));
	gen = c;
	where = sg_where(writer, c, g, ws, &ok);
	sg_pk_table(g, want);
	if (test_rng_below_r(rng, 8) == 0)
		key = (unsigned)test_rng64_r(rng) & 0xffffu;
	else
		key = want[test_rng_below_r(rng, SG_PK_CAP)] ^
		      ((unsigned)test_rng64_r(rng) & 0x8000u);
	switch (op) {
	case 0:
		rc = ibk_pkey_table_ref_get(t, i, &ref);
		if (rc == IBK_OK) {
			gen = ref.generation;
			ok = ok && ref.index == i && ref.pkey == want[i];
		} else {
			ok = ok && rc == IBK_ENOENT && !pkey_valid(want[i]);
		}
		break;
	case 1:
		rc = ibk_pkey_table_ref_find(t, (ibk_pkey_t)key, &ref);
		w = lin_pk_find(want, SG_PK_CAP, key, &fv);
		if (rc == IBK_OK) {
			gen = ref.generation;
			ok = ok && ref.index == w && ref.pkey == fv;
		} else {
			ok = ok && rc == w;
		}
		break;
	case 2:
		rc = ibk_pkey_table_snapshot(t, SG_PK_CAP, snap, &gen);
		ok = ok && rc == (int)SG_PK_CAP;
		for (n = 0; ok && n < SG_PK_CAP; n++)
			ok = snap[n] == want[n];
		break;
	case 3:
		rc = ibk_pkey_table_get(t, i, &v);
		ok = ok && (pkey_valid(want[i]) ? rc == IBK_OK && v == want[i] :
			    rc == IBK_ENOENT);
		break;
	default:
		rc = ibk_pkey_table_find_exact(t, (ibk_pkey_t)key);
		ok = ok && rc == lin_pk_exact(want, SG_PK_CAP, key);
		break;
	}
	/* the writer is interrupted: nothing can move during the handler */
	same = gen == c && latch_count(&t->hdr) == c;
	sg_record(0, ok && same, where, op, c, ws, writer, gen, i, rc);
}

/* In the handler: one read of the GID table, checked. */
static void sg_read_gid(uint64_t *rng)
{
	static struct ibk_gid_entry want[SG_GID_CAP], snap[SG_GID_CAP];
	const struct ibk_gid_table *t = &sg_gid;
	uint32_t ws = atomic_load(&sg_writing[1]);
	bool writer = latch_writing(&t->hdr), ok, same;
	uint32_t c = latch_count(&t->hdr), g = step_at(c, sg_gen0[1]);
	uint32_t gen, i = test_rng_below_r(rng, SG_GID_CAP), n;
	unsigned op = test_rng_below_r(rng, 5), where;
	int type = (int)test_rng_below_r(rng, 4) - 1, rc, w;
	enum ibk_gid_type ft = IBK_GID_TYPE_IB, wt = IBK_GID_TYPE_IB;
	struct ibk_gid_entry e;
	struct ibk_gid_ref ref;
	struct ibk_gid q;

	memset(&ref, 0, sizeof(ref));
	gen = c;
	where = sg_where(writer, c, g, ws, &ok);
	sg_gid_table(g, want);
	q = want[test_rng_below_r(rng, SG_GID_CAP)].gid;
	if (gid_zero(&q) || test_rng_below_r(rng, 8) == 0)
		q = ibk_gid_make(IBK_GID_DEFAULT_PREFIX,
				 (uint64_t)(g + 1) << 32 |
				 test_rng_below_r(rng, 48));
	switch (op) {
	case 0:
		rc = ibk_gid_table_ref_get(t, i, &ref);
		if (rc == IBK_OK) {
			gen = ref.generation;
			ok = ok && ref.index == i &&
			     gid_eq(&ref.gid, &want[i].gid) &&
			     ref.type == want[i].type;
		} else {
			ok = ok && rc == IBK_ENOENT && gid_zero(&want[i].gid);
		}
		break;
	case 1:
		rc = ibk_gid_table_ref_find(t, &q, (enum ibk_gid_type)type,
					    &ref);
		w = lin_gid_find(want, SG_GID_CAP, &q, type, &wt);
		if (rc == IBK_OK) {
			gen = ref.generation;
			ok = ok && ref.index == w && ref.type == wt &&
			     gid_eq(&ref.gid, &q);
		} else {
			ok = ok && rc == w;
		}
		break;
	case 2:
		rc = ibk_gid_table_snapshot(t, SG_GID_CAP, snap, &gen);
		ok = ok && rc == (int)SG_GID_CAP;
		for (n = 0; ok && n < SG_GID_CAP; n++)
			ok = gid_eq(&snap[n].gid, &want[n].gid) &&
			     snap[n].type == want[n].type;
		break;
	case 3:
		rc = ibk_gid_table_get(t, i, &e);
		ok = ok && (gid_zero(&want[i].gid) ? rc == IBK_ENOENT :
			    rc == IBK_OK && gid_eq(&e.gid, &want[i].gid) &&
			    e.type == want[i].type);
		break;
	default:
		rc = ibk_gid_table_find(t, &q, (enum ibk_gid_type)type, &ft);
		w = lin_gid_find(want, SG_GID_CAP, &q, type, &wt);
		ok = ok && rc == w && (w < 0 || ft == wt);
		break;
	}
	same = gen == c && latch_count(&t->hdr) == c;
	sg_record(1, ok && same, where, op, c, ws, writer, gen, i, rc);
}

static void sg_handler(int sig)
{
	static uint64_t rng = 0x7b1d5e3fa9c20001ull;
	int saved = errno;

	(void)sig;
	atomic_fetch_add_explicit(&sg_res->ticks, 1, memory_order_relaxed);
	sg_read_pk(&rng);
	sg_read_gid(&rng);
	errno = saved;
}

static unsigned sg_inside(unsigned k)
{
	return atomic_load(&sg_res->t[k].where[SG_FIRST]) +
	       atomic_load(&sg_res->t[k].where[SG_SECOND]) +
	       atomic_load(&sg_res->t[k].where[SG_LOCKED]);
}

static bool sg_enough(uint64_t t0)
{
	if (now_ns() - t0 >= SG_RUN)
		return true;
	if (atomic_load(&sg_res->t[0].reads) < SG_MIN_READS ||
	    atomic_load(&sg_res->t[1].reads) < SG_MIN_READS)
		return false;
	return sg_inside(0) >= SG_TARGET_IN && sg_inside(1) >= SG_TARGET_IN;
}

/* The child: writes both tables back to back, step after step, while the
 * timer's handler reads them. */
static void sg_child(pid_t parent)
{
	struct sigaction sa;
	struct itimerval it;
	sigset_t block;
	uint64_t t0;
	uint32_t s;

	child_setup(parent);
	ibk_pkey_table_init(&sg_pk, sg_pk_cells, SG_PK_CAP, sg_pk_slots,
			    IBK_PKEY_HASH_SLOTS(SG_PK_CAP));
	ibk_gid_table_init(&sg_gid, sg_gid_cells, SG_GID_CAP, sg_gid_slots,
			   IBK_HASH_SLOTS(SG_GID_CAP));
	ibk_latch_init(&sg_pk.hdr.latch, SG_START);
	ibk_latch_init(&sg_gid.hdr.latch, SG_START + 0x100u);
	ibk_pkey_table_set_state(&sg_pk, IBK_PORT_ACTIVE);
	ibk_gid_table_set_state(&sg_gid, IBK_PORT_ACTIVE);
	sg_publish_pk(0);
	sg_publish_gid(0);
	sg_gen0[0] = latch_count(&sg_pk.hdr);
	sg_gen0[1] = latch_count(&sg_gid.hdr);
	atomic_store(&sg_writing[0], 0);
	atomic_store(&sg_writing[1], 0);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sg_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGALRM, &sa, NULL) != 0)
		_exit(6);
	it.it_interval.tv_sec = 0;
	it.it_interval.tv_usec = SG_TICK_US;
	it.it_value = it.it_interval;
	if (setitimer(ITIMER_REAL, &it, NULL) != 0)
		_exit(7);
	t0 = now_ns();
	for (s = 1;; s++) {
		atomic_store(&sg_writing[0], s);
		sg_publish_pk(s);
		atomic_store(&sg_writing[1], s);
		sg_publish_gid(s);
		atomic_store_explicit(&sg_res->steps, s, memory_order_relaxed);
		if (s % 4 == 0 && sg_enough(t0))
			break;
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	sigprocmask(SIG_BLOCK, &block, NULL);
	if (count_moved(latch_count(&sg_pk.hdr), sg_gen0[0]) != 2 * s ||
	    count_moved(latch_count(&sg_gid.hdr), sg_gen0[1]) != 2 * s)
		_exit(8);
	atomic_store(&sg_res->finished, 1);
	_exit(0);
}

static void test_signal_handler(void)
{
	static const char *const where_name[SG_WHERE] = {
		"outside", "first half", "second half", "locked"
	};
	static const char *const table_name[2] = { "P_Key", "GID" };
	bool exited, clean, enough;
	int status = 0;
	uint64_t t0;
	unsigned k, reads[2], bad[2], in[2], where[2][SG_WHERE], w;
	char st[32];
	pid_t pid, me = getpid();

	sg_res = (struct sg_result *)mmap(NULL, sizeof(*sg_res),
					  PROT_READ | PROT_WRITE,
					  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if ((void *)sg_res == MAP_FAILED) {
		tap_ok(false, "signal handler: mmap");
		return;
	}
	fflush(stdout);
	t0 = now_ns();
	pid = fork();
	if (pid < 0) {
		tap_ok(false, "signal handler: fork");
		return;
	}
	if (pid == 0)
		sg_child(me);
	exited = wait_exit(pid, SG_HANG, &status);
	if (!exited)
		kill_reap(pid);
	clean = exited && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
		atomic_load(&sg_res->finished);

	for (k = 0; k < 2; k++) {
		reads[k] = atomic_load(&sg_res->t[k].reads);
		bad[k] = atomic_load(&sg_res->t[k].bad);
		for (w = 0; w < SG_WHERE; w++)
			where[k][w] = atomic_load(&sg_res->t[k].where[w]);
		in[k] = where[k][SG_FIRST] + where[k][SG_SECOND] +
			where[k][SG_LOCKED];
		tap_diag("signal handler, %s table: %u handler reads, %u "
			 "inside a write section (first half %u, second half "
			 "%u, lock taken before the first flip %u), %u "
			 "outside, %u bad",
			 table_name[k], reads[k], in[k], where[k][SG_FIRST],
			 where[k][SG_SECOND], where[k][SG_LOCKED],
			 where[k][SG_OUTSIDE], bad[k]);
	}
	tap_diag("signal handler: %u timer signals every %d us, %u steps per "
		 "table written, child %s after %.2f s",
		 atomic_load(&sg_res->ticks), SG_TICK_US,
		 atomic_load(&sg_res->steps),
		 exited ? exit_text(status, st, sizeof(st)) : "hung, killed",
		 (double)(now_ns() - t0) / 1e9);
	if (atomic_load(&sg_res->first_bad))
		tap_diag("first bad handler read: %s op %u index %u, writer "
			 "%s (lock word %u, given step %u), count 0x%08x, "
			 "generation 0x%08x, rc %d",
			 table_name[sg_res->bad_table % 2], sg_res->bad_op,
			 sg_res->bad_index,
			 where_name[sg_res->bad_where % SG_WHERE],
			 sg_res->bad_writer, sg_res->bad_writing,
			 sg_res->bad_count, sg_res->bad_gen, sg_res->bad_rc);

	tap_ok(clean, "signal handler: the writing child finished within %.0f "
	       "s: no read from the handler hung", (double)SG_HANG / 1e9);
	tap_ok(clean && reads[0] >= SG_MIN_READS && reads[1] >= SG_MIN_READS &&
	       bad[0] == 0 && bad[1] == 0,
	       "signal handler: %u P_Key and %u GID handler reads (at least "
	       "%u each) all completed with one published step, the one "
	       "the interrupted writer's position implies", reads[0],
	       reads[1], SG_MIN_READS);
	for (k = 0; k < 2; k++) {
		char what[200];

		snprintf(what, sizeof(what), "signal handler, %s table: at "
			 "least %u reads landed inside a write section, %u "
			 "in each half, and read the right copy (%u: %u + %u "
			 "+ %u)", table_name[k], SG_MIN_IN, SG_MIN_HALF, in[k],
			 where[k][SG_FIRST], where[k][SG_SECOND],
			 where[k][SG_LOCKED]);
		enough = in[k] >= SG_MIN_IN &&
			 where[k][SG_FIRST] >= SG_MIN_HALF &&
			 where[k][SG_SECOND] >= SG_MIN_HALF;
		if (TEST_TSAN && !enough)
			tap_skip("ThreadSanitizer defers asynchronous "
				 "signals to points of its choosing, which "
				 "decide whether a handler ever runs inside a "
				 "write section", what);
		else
			tap_ok(clean && bad[k] == 0 && enough, "%s", what);
	}
	munmap(sg_res, sizeof(*sg_res));
}

/* ========================================================================
 * 3. A model of the port, single-threaded, then under concurrency
 * ======================================================================== */

#define MD_MAX_PK	65536u
#define MD_MAX_GID	256u

struct md_gid {
	struct ibk_gid gid;
	int type;
};

/* The model: what each read must return, written from the rules. */
struct model {
	uint32_t pk_cap, gid_cap;
	ibk_pkey_t pk[MD_MAX_PK];
	struct md_gid gid[MD_MAX_GID];
	int pk_state, gid_state;
	bool pk_await, gid_await;
	uint32_t pk_gen, gid_gen;
};

enum md_kind {
	OP_PK_REFILL, OP_GID_REFILL, OP_PK_SET, OP_GID_SET, OP_PK_STATE,
	OP_GID_STATE, OP_PORT_STATE, OP_PK_INVAL, OP_GID_INVAL, OP_EVENT,
	OP_KINDS
};

static const char *const op_name[OP_KINDS] = {
	"pkey refill", "gid refill", "pkey set", "gid set", "pkey set_state",
	"gid set_state", "port set_state", "pkey invalidate", "gid invalidate",
	"port event"
};

struct md_op {
	enum md_kind kind;
	uint32_t n;		/* refill length (may exceed the capacity) */
	uint32_t index;		/* set (may be out of range) */
	ibk_pkey_t pkey;
	struct ibk_gid gid;
	int type;
	int state;		/* set_state (0 and 6 are invalid) */
	int event;
	ibk_pkey_t *keys;	/* refill input */
	struct ibk_gid_entry *entries;
};

static const int md_events[] = {
	IBK_EVENT_DEVICE_FATAL, IBK_EVENT_PORT_ACTIVE, IBK_EVENT_PORT_ERR,
	IBK_EVENT_LID_CHANGE, IBK_EVENT_PKEY_CHANGE, IBK_EVENT_SM_CHANGE,
	IBK_EVENT_CLIENT_REREGISTER, IBK_EVENT_GID_CHANGE,
	0, 14, 16, 19,		/* not port events: IBK_EINVAL */
};
#define MD_EVENTS	(sizeof(md_events) / sizeof(md_events[0]))

/* ARMED, ACTIVE and ACTIVE_DEFER are the states a port's tables are
 * defined in (ibv_query_pkey(3)); any other marks them awaiting a refill. */
static bool md_readable(int state)
{
	return state == IBK_PORT_ARMED || state == IBK_PORT_ACTIVE ||
	       state == IBK_PORT_ACTIVE_DEFER;
}

static int md_ready(int state, bool await)
{
	if (!md_readable(state))
		return IBK_ENOTREADY;
	return await ? IBK_ESTALE : IBK_OK;
}

/* A generation is even between updates and never 0 or 1, the count
 * IBK_GENERATION_NEVER names: from 0xfffffffe an update goes to 2. */
static uint32_t md_gen_start(uint32_t start)
{
	start &= ~1u;
	return start ? start : 2u;
}

static void md_gen_next(uint32_t *gen)
{
	*gen += 2;
	if (*gen == 0)
		*gen = 2;
}

static void md_init(struct model *m, uint32_t pk_cap, uint32_t gid_cap,
		    uint32_t pk_start, uint32_t gid_start)
{
	uint32_t i;

	m->pk_cap = pk_cap;
	m->gid_cap = gid_cap;
	for (i = 0; i < pk_cap; i++)
		m->pk[i] = 0;
	for (i = 0; i < gid_cap; i++) {
		memset(&m->gid[i], 0, sizeof(m->gid[i]));
		m->gid[i].type = IBK_GID_TYPE_IB;
	}
	m->pk_state = m->gid_state = IBK_PORT_DOWN;
	m->pk_await = m->gid_await = true;	/* never refilled */
	m->pk_gen = md_gen_start(pk_start);
	m->gid_gen = md_gen_start(gid_start);
}

/* Applies @op to the model: returns what the library must return. */
static int md_apply(struct model *m, const struct md_op *op)
{
	uint32_t i;
	bool pk = false, gid = false;
	int st = 0;

	switch (op->kind) {
	case OP_PK_REFILL:
		if (op->n > m->pk_cap)
			return IBK_ENOSPC;
		if (!md_readable(m->pk_state))	/* undefined unless ARMED/ACTIVE */
			return IBK_ENOTREADY;
		for (i = 0; i < m->pk_cap; i++)
			m->pk[i] = i < op->n ? op->keys[i] : 0;
		m->pk_await = false;
		md_gen_next(&m->pk_gen);
		return IBK_OK;
	case OP_GID_REFILL:
		if (op->n > m->gid_cap)
			return IBK_ENOSPC;
		for (i = 0; i < op->n; i++)
			if (!gid_zero(&op->entries[i].gid) &&
			    (op->entries[i].type < 0 ||
			     op->entries[i].type > 2))
				return IBK_EINVAL;
		if (!md_readable(m->gid_state))
			return IBK_ENOTREADY;
		for (i = 0; i < m->gid_cap; i++) {
			memset(&m->gid[i], 0, sizeof(m->gid[i]));
			m->gid[i].type = IBK_GID_TYPE_IB;
			if (i < op->n && !gid_zero(&op->entries[i].gid)) {
				m->gid[i].gid = op->entries[i].gid;
				m->gid[i].type = op->entries[i].type;
			}
		}
		m->gid_await = false;
		md_gen_next(&m->gid_gen);
		return IBK_OK;
	case OP_PK_SET:
		if (op->index >= m->pk_cap)
			return IBK_ERANGE;
		m->pk[op->index] = op->pkey;
		md_gen_next(&m->pk_gen);
		return IBK_OK;
	case OP_GID_SET:
		if (op->index >= m->gid_cap)
			return IBK_ERANGE;
		if (gid_zero(&op->gid)) {
			memset(&m->gid[op->index], 0, sizeof(m->gid[0]));
			m->gid[op->index].type = IBK_GID_TYPE_IB;
		} else if (op->type < 0 || op->type > 2) {
			return IBK_EINVAL;
		} else {
			m->gid[op->index].gid = op->gid;
			m->gid[op->index].type = op->type;
		}
		md_gen_next(&m->gid_gen);
		return IBK_OK;
	case OP_PK_STATE:
	case OP_GID_STATE:
	case OP_PORT_STATE:
		if (op->state < IBK_PORT_DOWN ||
		    op->state > IBK_PORT_ACTIVE_DEFER)
			return IBK_EINVAL;
		/* leaving ARMED/ACTIVE, or entering them from another
		 * state: the tables await a refill */
		if (op->kind != OP_GID_STATE) {
			m->pk_await |= !md_readable(op->state) ||
				       !md_readable(m->pk_state);
			m->pk_state = op->state;
			md_gen_next(&m->pk_gen);
		}
		if (op->kind != OP_PK_STATE) {
			m->gid_await |= !md_readable(op->state) ||
					!md_readable(m->gid_state);
			m->gid_state = op->state;
			md_gen_next(&m->gid_gen);
		}
		return IBK_OK;
	case OP_PK_INVAL:
		m->pk_await = true;
		md_gen_next(&m->pk_gen);
		return IBK_OK;
	case OP_GID_INVAL:
		m->gid_await = true;
		md_gen_next(&m->gid_gen);
		return IBK_OK;
	case OP_EVENT:
		switch (op->event) {
		case IBK_EVENT_DEVICE_FATAL:
		case IBK_EVENT_PORT_ERR:
			st = IBK_PORT_DOWN;
			pk = gid = true;
			break;
		case IBK_EVENT_PORT_ACTIVE:
			st = IBK_PORT_ACTIVE;
			pk = gid = true;
			break;
		case IBK_EVENT_LID_CHANGE:
		case IBK_EVENT_SM_CHANGE:
		case IBK_EVENT_CLIENT_REREGISTER:
			pk = gid = true;
			break;
		case IBK_EVENT_PKEY_CHANGE:
			pk = true;
			break;
		case IBK_EVENT_GID_CHANGE:
			gid = true;
			break;
		default:
			return IBK_EINVAL;
		}
		if (st || pk) {
			if (st)
				m->pk_state = st;
			m->pk_await |= pk;
			md_gen_next(&m->pk_gen);
		}
		if (st || gid) {
			if (st)
				m->gid_state = st;
			m->gid_await |= gid;
			md_gen_next(&m->gid_gen);
		}
		return IBK_OK;
	default:
		return IBK_EINVAL;
	}
}

static int md_lib(struct ibk_port *p, const struct md_op *op)
{
	switch (op->kind) {
	case OP_PK_REFILL:
		return ibk_pkey_table_refill(&p->pkeys, op->keys, op->n,
					     ibk_pkey_table_refill_ticket(&p->pkeys));
	case OP_GID_REFILL:
		return ibk_gid_table_refill(&p->gids, op->entries, op->n,
					    ibk_gid_table_refill_ticket(&p->gids));
	case OP_PK_SET:
		return ibk_pkey_table_set(&p->pkeys, op->index, op->pkey);
	case OP_GID_SET:
		return ibk_gid_table_set(&p->gids, op->index, &op->gid,
					 (enum ibk_gid_type)op->type);
	case OP_PK_STATE:
		return ibk_pkey_table_set_state(&p->pkeys,
						(enum ibk_port_state)op->state);
	case OP_GID_STATE:
		return ibk_gid_table_set_state(&p->gids,
					       (enum ibk_port_state)op->state);
	case OP_PORT_STATE:
		return ibk_port_set_state(p, (enum ibk_port_state)op->state);
	case OP_PK_INVAL:
		return ibk_pkey_table_invalidate(&p->pkeys);
	case OP_GID_INVAL:
		return ibk_gid_table_invalidate(&p->gids);
	default:
		return ibk_port_event(p, (enum ibk_event_type)op->event);
	}
}

/* ---- random operations ---- */

/* A P_Key: mostly from a pool of bases a quarter the capacity (so entries
 * repeat, in both memberships), sometimes a default key, any key, or an
 * empty one (0x0000 or 0x8000). */
static ibk_pkey_t md_draw_pkey(uint64_t *rng, uint32_t cap)
{
	uint32_t r = test_rng_below_r(rng, 24), pool = 1 + cap / 4;
	uint32_t full = test_rng_below_r(rng, 2) ? 0x8000u : 0u;

	if (pool > 0x7ffe)
		pool = 0x7ffe;
	if (r < 3)
		return (ibk_pkey_t)(r == 0 ? 0x8000u : 0u);
	if (r == 3)
		return (ibk_pkey_t)(0x7fffu | full);
	if (r == 4)
		return (ibk_pkey_t)((1 + test_rng_below_r(rng, 0x7fff)) | full);
	return (ibk_pkey_t)((1 + test_rng_below_r(rng, pool)) | full);
}

/* GID @k of the pool: link-local, IPoIB multicast, IPv4-mapped, global. */
static struct ibk_gid md_gid_pool(uint32_t k)
{
	struct ibk_gid g;

	memset(&g, 0, sizeof(g));
	switch (k & 3u) {
	case 0:
		g = ibk_gid_make(IBK_GID_DEFAULT_PREFIX,
				 0x0002c90300000000ull | k);
		break;
	case 1:
		g.raw[0] = 0xff;
		g.raw[1] = 0x12;
		g.raw[2] = 0x40;
		g.raw[3] = 0x1b;
		g.raw[14] = (uint8_t)(k >> 8);
		g.raw[15] = (uint8_t)k;
		break;
	case 2:
		g.raw[10] = g.raw[11] = 0xff;
		g.raw[12] = 10;
		g.raw[14] = (uint8_t)(k >> 8);
		g.raw[15] = (uint8_t)k;
		break;
	default:
		g.raw[0] = 0x20;
		g.raw[1] = 0x01;
		g.raw[2] = 0x0d;
		g.raw[3] = 0xb8;
		g.raw[8] = (uint8_t)(k >> 8);
		g.raw[9] = (uint8_t)k;
		break;
	}
	return g;
}

static uint32_t md_gid_pool_size(uint32_t cap)
{
	return 2 + cap / 2;
}

/* A GID entry: from the pool with a valid type, or the all-zero GID with
 * any type (ignored); one in @bad gets a type that is not one. */
static void md_draw_gid(uint64_t *rng, uint32_t cap, uint32_t bad,
			struct ibk_gid *gid, int *type)
{
	static const int bad_types[] = { -1, 3, 7 };

	if (test_rng_below_r(rng, 6) == 0) {
		memset(gid, 0, sizeof(*gid));
		*type = (int)test_rng_below_r(rng, 5) - 1;
		return;
	}
	*gid = md_gid_pool(test_rng_below_r(rng, md_gid_pool_size(cap)));
	*type = (int)test_rng_below_r(rng, 3);
	if (bad && test_rng_below_r(rng, bad) == 0)
		*type = bad_types[test_rng_below_r(rng, 3)];
}

/* A port state: ACTIVE and ARMED most, then DOWN and INIT, now and then
 * one outside the enum. @calm: ACTIVE nearly always. */
static int md_draw_state(uint64_t *rng, bool calm)
{
	uint32_t r = test_rng_below_r(rng, 20);

	if (calm)
		return r < 16 ? IBK_PORT_ACTIVE : r < 17 ? IBK_PORT_ARMED :
		       r < 18 ? IBK_PORT_ACTIVE_DEFER :
		       r < 19 ? IBK_PORT_INIT : 6;
	return r < 7 ? IBK_PORT_ACTIVE : r < 10 ? IBK_PORT_ARMED :
	       r < 11 ? IBK_PORT_ACTIVE_DEFER : r < 14 ? IBK_PORT_DOWN :
	       r < 17 ? IBK_PORT_INIT : r < 18 ? 0 : 6;
}

static uint32_t md_draw_len(uint64_t *rng, uint32_t cap)
{
	uint32_t r = test_rng_below_r(rng, 30);

	if (r == 0)
		return cap + 1;			/* IBK_ENOSPC */
	if (r < 10)
		return cap;
	if (r < 12)
		return 0;
	return test_rng_below_r(rng, cap + 1);
}

static uint32_t md_draw_index(uint64_t *rng, uint32_t cap)
{
	if (test_rng_below_r(rng, 30) == 0)
		return cap + test_rng_below_r(rng, 3);	/* IBK_ERANGE */
	return test_rng_below_r(rng, cap);
}

/* A random operation on model @m's port; @calm keeps the port readable
 * more often (the concurrent phase). */
static void md_draw_op(uint64_t *rng, const struct model *m, bool calm,
		       struct md_op *op)
{
	uint32_t r = test_rng_below_r(rng, 100), i;
	ibk_pkey_t *keys = op->keys;
	struct ibk_gid_entry *entries = op->entries;
	int t;

	memset(op, 0, sizeof(*op));
	op->keys = keys;
	op->entries = entries;
	if (calm && r >= 80)
		r = r < 92 ? test_rng_below_r(rng, 72) : r;
	if (r < 16) {
		op->kind = OP_PK_REFILL;
		op->n = md_draw_len(rng, m->pk_cap);
		for (i = 0; i < op->n; i++)
			op->keys[i] = md_draw_pkey(rng, m->pk_cap);
	} else if (r < 32) {
		op->kind = OP_GID_REFILL;
		op->n = md_draw_len(rng, m->gid_cap);
		for (i = 0; i < op->n; i++) {
			md_draw_gid(rng, m->gid_cap, 0, &op->entries[i].gid,
				    &t);
			op->entries[i].type = (enum ibk_gid_type)t;
		}
		if (op->n && test_rng_below_r(rng, 25) == 0) {
			i = test_rng_below_r(rng, op->n);
			op->entries[i].gid = md_gid_pool(1);
			op->entries[i].type = (enum ibk_gid_type)
				(test_rng_below_r(rng, 2) ? 3 : -1);
		}
	} else if (r < 52) {
		op->kind = OP_PK_SET;
		op->index = md_draw_index(rng, m->pk_cap);
		op->pkey = md_draw_pkey(rng, m->pk_cap);
	} else if (r < 72) {
		op->kind = OP_GID_SET;
		op->index = md_draw_index(rng, m->gid_cap);
		md_draw_gid(rng, m->gid_cap, 25, &op->gid, &op->type);
	} else if (r < 76) {
		op->kind = OP_PK_STATE;
		op->state = md_draw_state(rng, calm);
	} else if (r < 80) {
		op->kind = OP_GID_STATE;
		op->state = md_draw_state(rng, calm);
	} else if (r < 84) {
		op->kind = OP_PORT_STATE;
		op->state = md_draw_state(rng, calm);
	} else if (r < 87) {
		op->kind = OP_PK_INVAL;
	} else if (r < 90) {
		op->kind = OP_GID_INVAL;
	} else {
		op->kind = OP_EVENT;
		op->event = md_events[test_rng_below_r(rng, MD_EVENTS)];
	}
}

/* ---- single-threaded checks ---- */

struct md_check {
	unsigned long reads;	/* read calls checked */
	unsigned long bad;
	int diags;
};

static void md_fail(struct md_check *ck, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void md_fail(struct md_check *ck, const char *fmt, ...)
{
	va_list ap;

	ck->bad++;
	if (ck->diags++ >= MAX_DIAG)
		return;
	fputs("# model mismatch: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

#define MD_EXPECT(ck, cond, ...) do {				\
		(ck)->reads++;					\
		if (!(cond))					\
			md_fail((ck), __VA_ARGS__);		\
	} while (0)

static struct ibk_pkey_cell md_pk_cells[IBK_PKEY_CELLS(MD_MAX_PK)];
static struct ibk_hash_slot md_pk_slots[IBK_PKEY_HASH_SLOTS(MD_MAX_PK)];
static struct ibk_gid_cell md_gid_cells[IBK_GID_CELLS(MD_MAX_GID)];
static struct ibk_hash_slot md_gid_slots[IBK_HASH_SLOTS(MD_MAX_GID)];
static struct ibk_port md_port;
static struct model md;
static ibk_pkey_t md_keys[MD_MAX_PK + 1];
static struct ibk_gid_entry md_entries[MD_MAX_GID + 1];
static ibk_pkey_t md_snap[MD_MAX_PK];
static struct ibk_gid_entry md_gsnap[MD_MAX_GID];

/* The lowest index holding each 16-bit value, from one scan of the model
 * (a stamp per value instead of clearing 65536 words each time). */
static uint32_t md_low[65536], md_stamp[65536], md_stamp_now;

static void md_index_pk(const struct model *m)
{
	uint32_t i = m->pk_cap;

	md_stamp_now++;
	while (i-- > 0) {
		md_stamp[m->pk[i]] = md_stamp_now;
		md_low[m->pk[i]] = i;
	}
}

static int md_lowest(unsigned key)
{
	return md_stamp[key] == md_stamp_now ? (int)md_low[key] : -1;
}

/* Find by value in the model: compare bases, a full entry first, then a
 * limited one, the lowest index of each. */
static int md_pk_find(const struct model *m, unsigned key, ibk_pkey_t *found)
{
	int rdy = md_ready(m->pk_state, m->pk_await), at;

	if (!pkey_valid(key))
		return IBK_EINVAL;
	if (rdy != IBK_OK)
		return rdy;
	at = md_lowest(key | 0x8000u);
	if (at >= 0) {
		*found = (ibk_pkey_t)(key | 0x8000u);
		return at;
	}
	at = md_lowest(key & 0x7fffu);
	if (at >= 0) {
		*found = (ibk_pkey_t)(key & 0x7fffu);
		return at;
	}
	return IBK_ENOENT;
}

static int md_pk_exact(const struct model *m, unsigned key)
{
	int rdy = md_ready(m->pk_state, m->pk_await), at;

	if (!pkey_valid(key))
		return IBK_EINVAL;
	if (rdy != IBK_OK)
		return rdy;
	at = md_lowest(key);
	return at >= 0 ? at : IBK_ENOENT;
}

static int md_gid_find(const struct model *m, const struct ibk_gid *q,
		       int type, int *found)
{
	int rdy = md_ready(m->gid_state, m->gid_await);
	uint32_t i;

	if (gid_zero(q) || type < -1 || type > 2)
		return IBK_EINVAL;
	if (rdy != IBK_OK)
		return rdy;
	for (i = 0; i < m->gid_cap; i++) {
		if (!gid_zero(&m->gid[i].gid) && gid_eq(&m->gid[i].gid, q) &&
		    (type < 0 || m->gid[i].type == type)) {
			*found = m->gid[i].type;
			return (int)i;
		}
	}
	return IBK_ENOENT;
}

static void md_check_pk_key(struct md_check *ck, unsigned key)
{
	const struct ibk_pkey_table *t = &md_port.pkeys;
	ibk_pkey_t found = 0, want_v = 0;
	struct ibk_pkey_ref ref;
	int want = md_pk_find(&md, key, &want_v), rc;

	rc = ibk_pkey_table_find(t, (ibk_pkey_t)key, &found);
	MD_EXPECT(ck, rc == want && (rc < 0 || found == want_v),
		  "pkey find 0x%04x: %d/0x%04x, model %d/0x%04x", key, rc,
		  found, want, want_v);
	memset(&ref, 0, sizeof(ref));
	rc = ibk_pkey_table_ref_find(t, (ibk_pkey_t)key, &ref);
	MD_EXPECT(ck, want >= 0 ? rc == IBK_OK && ref.index == want &&
		  ref.pkey == want_v && ref.generation == md.pk_gen &&
		  ibk_pkey_table_ref_fresh(t, &ref) : rc == want,
		  "pkey ref_find 0x%04x: rc %d index %u 0x%04x gen 0x%08x, "
		  "model %d/0x%04x gen 0x%08x", key, rc, ref.index, ref.pkey,
		  ref.generation, want, want_v, md.pk_gen);
	want = md_pk_exact(&md, key);
	rc = ibk_pkey_table_find_exact(t, (ibk_pkey_t)key);
	MD_EXPECT(ck, rc == want, "pkey find_exact 0x%04x: %d, model %d", key,
		  rc, want);
}

static void md_check_gid_query(struct md_check *ck, const struct ibk_gid *q,
			       int type)
{
	const struct ibk_gid_table *t = &md_port.gids;
	enum ibk_gid_type ft = IBK_GID_TYPE_IB;
	struct ibk_gid_ref ref;
	int want_t = 0, want = md_gid_find(&md, q, type, &want_t), rc;
	char buf[IBK_GID_STRLEN];

	rc = ibk_gid_table_find(t, q, (enum ibk_gid_type)type, &ft);
	MD_EXPECT(ck, rc == want && (rc < 0 || (int)ft == want_t),
		  "gid find %s type %d: %d/%d, model %d/%d",
		  ibk_gid_ntop(q, buf), type, rc, ft, want, want_t);
	memset(&ref, 0, sizeof(ref));
	rc = ibk_gid_table_ref_find(t, q, (enum ibk_gid_type)type, &ref);
	MD_EXPECT(ck, want >= 0 ? rc == IBK_OK && ref.index == want &&
		  (int)ref.type == want_t && gid_eq(&ref.gid, q) &&
		  ref.generation == md.gid_gen &&
		  ibk_gid_table_ref_fresh(t, &ref) : rc == want,
		  "gid ref_find %s type %d: rc %d index %u type %d, model "
		  "%d/%d",
		  ibk_gid_ntop(q, buf), type, rc, ref.index, ref.type, want,
		  want_t);
}

/* Every read API against the model, single-threaded. */
static void md_check_reads(struct md_check *ck, uint64_t *rng)
{
	const struct ibk_pkey_table *pt = &md_port.pkeys;
	const struct ibk_gid_table *gt = &md_port.gids;
	int prdy = md_ready(md.pk_state, md.pk_await);
	int grdy = md_ready(md.gid_state, md.gid_await);
	uint32_t i, k, n, gen;
	struct ibk_pkey_ref pref;
	struct ibk_gid_ref gref;
	struct ibk_gid_entry e;
	ibk_pkey_t v;
	int rc, want, types;

	MD_EXPECT(ck, latch_count(&pt->hdr) == md.pk_gen &&
		  latch_count(&gt->hdr) == md.gid_gen,
		  "generations 0x%08x/0x%08x, model 0x%08x/0x%08x",
		  latch_count(&pt->hdr), latch_count(&gt->hdr), md.pk_gen,
		  md.gid_gen);

	/* P_Key: every index by get and by reference, one past the end */
	for (i = 0; i <= md.pk_cap; i++) {
		want = i == md.pk_cap ? IBK_ERANGE : prdy != IBK_OK ? prdy :
		       pkey_valid(md.pk[i]) ? IBK_OK : IBK_ENOENT;
		v = 0;
		rc = ibk_pkey_table_get(pt, i, &v);
		MD_EXPECT(ck, rc == want && (rc != IBK_OK || v == md.pk[i]),
			  "pkey get %u: %d/0x%04x, model %d/0x%04x", i, rc, v,
			  want, i < md.pk_cap ? md.pk[i] : 0);
		memset(&pref, 0, sizeof(pref));
		rc = ibk_pkey_table_ref_get(pt, i, &pref);
		MD_EXPECT(ck, rc == want && (rc != IBK_OK ||
			  (pref.pkey == md.pk[i] && pref.index == i &&
			   pref.generation == md.pk_gen &&
			   ibk_pkey_table_ref_fresh(pt, &pref))),
			  "pkey ref_get %u: %d/0x%04x gen 0x%08x, model %d", i,
			  rc, pref.pkey, pref.generation, want);
	}

	/* P_Key finds: every entry's key in both memberships (a sample of
	 * them in a large table), random keys, the two invalid keys */
	md_index_pk(&md);
	n = md.pk_cap <= 256 ? md.pk_cap : 512;
	for (k = 0; k < n; k++) {
		i = md.pk_cap <= 256 ? k : test_rng_below_r(rng, md.pk_cap);
		md_check_pk_key(ck, md.pk[i]);
		md_check_pk_key(ck, md.pk[i] ^ 0x8000u);
	}
	for (k = 0; k < 16; k++)
		md_check_pk_key(ck, (unsigned)test_rng64_r(rng) & 0xffffu);
	md_check_pk_key(ck, 0x0000);
	md_check_pk_key(ck, 0x8000);

	/* P_Key snapshot: every entry as stored, and the generation */
	gen = 0;
	rc = ibk_pkey_table_snapshot(pt, md.pk_cap, md_snap, &gen);
	want = prdy != IBK_OK ? prdy : (int)md.pk_cap;
	for (i = 0; rc == want && rc > 0 && i < md.pk_cap; i++)
		if (md_snap[i] != md.pk[i])
			break;
	MD_EXPECT(ck, rc == want && (rc < 0 || (i == md.pk_cap &&
		  gen == md.pk_gen)), "pkey snapshot: rc %d (model %d), "
		  "entry %u, gen 0x%08x (model 0x%08x)", rc, want, i, gen,
		  md.pk_gen);
	rc = ibk_pkey_table_snapshot(pt, md.pk_cap - 1, md_snap, &gen);
	MD_EXPECT(ck, rc == IBK_ERANGE, "pkey snapshot into %u: %d",
		  md.pk_cap - 1, rc);

	/* GID: every index by get and by reference, one past the end */
	for (i = 0; i <= md.gid_cap; i++) {
		want = i == md.gid_cap ? IBK_ERANGE : grdy != IBK_OK ? grdy :
		       !gid_zero(&md.gid[i].gid) ? IBK_OK : IBK_ENOENT;
		memset(&e, 0, sizeof(e));
		rc = ibk_gid_table_get(gt, i, &e);
		MD_EXPECT(ck, rc == want && (rc != IBK_OK ||
			  (gid_eq(&e.gid, &md.gid[i].gid) &&
			   (int)e.type == md.gid[i].type)),
			  "gid get %u: %d, model %d", i, rc, want);
		memset(&gref, 0, sizeof(gref));
		rc = ibk_gid_table_ref_get(gt, i, &gref);
		MD_EXPECT(ck, rc == want && (rc != IBK_OK ||
			  (gid_eq(&gref.gid, &md.gid[i].gid) &&
			   (int)gref.type == md.gid[i].type &&
			   gref.index == i && gref.generation == md.gid_gen &&
			   ibk_gid_table_ref_fresh(gt, &gref))),
			  "gid ref_get %u: %d, model %d", i, rc, want);
	}

	/* GID finds: each entry's GID (a sample in a large table), pool
	 * GIDs and one outside it, the zero GID; every type, ANY and two
	 * that are neither */
	n = md.gid_cap <= 64 ? md.gid_cap : 64;
	for (k = 0; k < n + 6; k++) {
		struct ibk_gid q;

		if (k < n)
			q = md.gid[md.gid_cap <= 64 ? k :
				   test_rng_below_r(rng, md.gid_cap)].gid;
		else if (k < n + 4)
			q = md_gid_pool(test_rng_below_r(rng,
				md_gid_pool_size(md.gid_cap) + 2));
		else if (k == n + 4)
			q = md_gid_pool(0x7ffu);
		else
			memset(&q, 0, sizeof(q));
		types = k < n && gid_zero(&q) ? 1 : 6;
		md_check_gid_query(ck, &q, -1);
		if (types > 1) {
			md_check_gid_query(ck, &q, IBK_GID_TYPE_IB);
			md_check_gid_query(ck, &q, IBK_GID_TYPE_ROCE_V1);
			md_check_gid_query(ck, &q, IBK_GID_TYPE_ROCE_V2);
			md_check_gid_query(ck, &q, 3);
			md_check_gid_query(ck, &q, -2);
		}
	}

	/* GID snapshot */
	gen = 0;
	rc = ibk_gid_table_snapshot(gt, md.gid_cap, md_gsnap, &gen);
	want = grdy != IBK_OK ? grdy : (int)md.gid_cap;
	for (i = 0; rc == want && rc > 0 && i < md.gid_cap; i++)
		if (!gid_eq(&md_gsnap[i].gid, &md.gid[i].gid) ||
		    (int)md_gsnap[i].type != md.gid[i].type)
			break;
	MD_EXPECT(ck, rc == want && (rc < 0 || (i == md.gid_cap &&
		  gen == md.gid_gen)), "gid snapshot: rc %d (model %d), entry "
		  "%u, gen 0x%08x (model 0x%08x)", rc, want, i, gen,
		  md.gid_gen);
	rc = ibk_gid_table_snapshot(gt, md.gid_cap - 1, md_gsnap, &gen);
	MD_EXPECT(ck, rc == IBK_ERANGE, "gid snapshot into %u: %d",
		  md.gid_cap - 1, rc);
}

struct md_config {
	uint32_t pk_cap, gid_cap, ops;
};

static const struct md_config md_configs[] = {
	{ 1, 1, 3000 },
	{ 3, 3, 3000 },
	{ 16, 16, 2000 },
	{ 128, 128, 600 },
	{ 1000, 256, 150 },
	{ MD_MAX_PK, 64, 40 },
};
#define MD_CONFIGS	(sizeof(md_configs) / sizeof(md_configs[0]))

static unsigned long md_kind_count[OP_KINDS], md_event_count[MD_EVENTS];
static unsigned long md_rc_count[8];	/* by md_rc_slot() */

/* The counting slot of result @rc: 0 OK, 1 EINVAL, 2 ERANGE, 6 ENOSPC;
 * 7 any other. */
static unsigned md_rc_slot(int rc)
{
	switch (rc) {
	case IBK_OK:		return 0;
	case IBK_EINVAL:	return 1;
	case IBK_ERANGE:	return 2;
	case IBK_ENOSPC:	return 6;
	default:		return 7;
	}
}

/* One configuration: @ops random operations, every read checked after
 * each. Returns true if nothing disagreed. */
static bool md_run(const struct md_config *cfg, uint64_t seed)
{
	uint32_t pk_start = 0u - 2u * (cfg->ops / 8 + 2);
	uint32_t gid_start = 0u - 2u * (cfg->ops / 10 + 3);
	struct md_check ck = { 0, 0, 0 };
	struct ibk_pkey_ref pref[2];
	struct ibk_gid_ref gref[2];
	bool have_p[2], have_g[2], f;
	const struct ibk_pkey_table *pt = &md_port.pkeys;
	const struct ibk_gid_table *gt = &md_port.gids;
	uint32_t pk_before, gid_before, o, e, i, fresh_checks = 0;
	uint64_t rng = seed, t0 = now_ns();
	struct md_op op;
	int rc, want, k;
	unsigned key;
	struct ibk_gid q;

	rc = ibk_port_init(&md_port, md_pk_cells, cfg->pk_cap, md_pk_slots,
			   IBK_PKEY_HASH_SLOTS(cfg->pk_cap), md_gid_cells,
			   cfg->gid_cap, md_gid_slots,
			   IBK_HASH_SLOTS(cfg->gid_cap));
	if (rc != IBK_OK) {
		tap_ok(false, "model: port init %u/%u: %d", cfg->pk_cap,
		       cfg->gid_cap, rc);
		return false;
	}
	ibk_latch_init(&md_port.pkeys.hdr.latch, pk_start);
	ibk_latch_init(&md_port.gids.hdr.latch, gid_start);
	md_init(&md, cfg->pk_cap, cfg->gid_cap, pk_start, gid_start);
	op.keys = md_keys;
	op.entries = md_entries;
	md_check_reads(&ck, &rng);

	for (o = 0; o < cfg->ops; o++) {
		/* references to keep across the operation */
		i = test_rng_below_r(&rng, cfg->pk_cap);
		have_p[0] = ibk_pkey_table_ref_get(pt, i, &pref[0]) == IBK_OK;
		key = md.pk[test_rng_below_r(&rng, cfg->pk_cap)];
		have_p[1] = pkey_valid(key) &&
			    ibk_pkey_table_ref_find(pt, (ibk_pkey_t)key,
						    &pref[1]) == IBK_OK;
		i = test_rng_below_r(&rng, cfg->gid_cap);
		have_g[0] = ibk_gid_table_ref_get(gt, i, &gref[0]) == IBK_OK;
		q = md.gid[test_rng_below_r(&rng, cfg->gid_cap)].gid;
		have_g[1] = !gid_zero(&q) &&
			    ibk_gid_table_ref_find(gt, &q, IBK_GID_TYPE_ANY,
						   &gref[1]) == IBK_OK;
		pk_before = md.pk_gen;
		gid_before = md.gid_gen;

		md_draw_op(&rng, &md, false, &op);
		want = md_apply(&md, &op);
		rc = md_lib(&md_port, &op);
		md_kind_count[op.kind]++;
		md_rc_count[md_rc_slot(rc)]++;
		if (op.kind == OP_EVENT)
			for (e = 0; e < MD_EVENTS; e++)
				md_event_count[e] += md_events[e] == op.event;
		MD_EXPECT(&ck, rc == want, "op %u (%s n %u index %u state %d "
			  "event %d): rc %d, model %d", o, op_name[op.kind],
			  op.n, op.index, op.state, op.event, rc, want);
		MD_EXPECT(&ck, latch_count(&pt->hdr) == md.pk_gen &&
			  latch_count(&gt->hdr) == md.gid_gen,
			  "op %u (%s): counts 0x%08x/0x%08x, model "
			  "0x%08x/0x%08x (each table it touches +2)", o,
			  op_name[op.kind], latch_count(&pt->hdr),
			  latch_count(&gt->hdr), md.pk_gen, md.gid_gen);

		/* stale exactly when the count moved */
		for (k = 0; k < 2; k++) {
			if (have_p[k]) {
				fresh_checks++;
				f = ibk_pkey_table_ref_fresh(pt, &pref[k]);
				MD_EXPECT(&ck, pref[k].generation == pk_before
					  && f == (md.pk_gen == pk_before),
					  "op %u (%s): pkey ref fresh wrong", o,
					  op_name[op.kind]);
			}
			if (have_g[k]) {
				fresh_checks++;
				f = ibk_gid_table_ref_fresh(gt, &gref[k]);
				MD_EXPECT(&ck, gref[k].generation == gid_before
					  && f == (md.gid_gen == gid_before),
					  "op %u (%s): gid ref fresh wrong", o,
					  op_name[op.kind]);
			}
		}
		md_check_reads(&ck, &rng);
	}
	tap_diag("model %u/%u: %u ops, %lu reads checked (%u reference "
		 "freshness checks across ops), %lu mismatches, generations "
		 "0x%08x -> 0x%08x / 0x%08x -> 0x%08x, %.2f s", cfg->pk_cap,
		 cfg->gid_cap, cfg->ops, ck.reads, fresh_checks, ck.bad,
		 pk_start, md.pk_gen, gid_start, md.gid_gen,
		 (double)(now_ns() - t0) / 1e9);
	tap_ok(ck.bad == 0 && md.pk_gen < pk_start && md.gid_gen < gid_start,
	       "model, P_Key capacity %u, GID capacity %u: %u random ops, "
	       "every read API agrees after each, refs stale exactly when the "
	       "count moved, both generations crossed 2^32", cfg->pk_cap,
	       cfg->gid_cap, cfg->ops);
	return ck.bad == 0;
}

static void test_model(void)
{
	unsigned long kinds_seen = 0, events_seen = 0;
	size_t c;
	unsigned k;

	for (c = 0; c < MD_CONFIGS; c++)
		md_run(&md_configs[c], 0x6a09e667f3bcc908ull + c);
	for (k = 0; k < OP_KINDS; k++)
		kinds_seen += md_kind_count[k] > 0;
	for (k = 0; k < MD_EVENTS; k++)
		events_seen += md_event_count[k] > 0;
	tap_diag("model ops by kind: %lu refill, %lu refill (GID), %lu set, "
		 "%lu set (GID), %lu + %lu + %lu set_state, %lu + %lu "
		 "invalidate, %lu events; results: %lu OK, %lu EINVAL, %lu "
		 "ERANGE, %lu ENOSPC", md_kind_count[OP_PK_REFILL],
		 md_kind_count[OP_GID_REFILL], md_kind_count[OP_PK_SET],
		 md_kind_count[OP_GID_SET], md_kind_count[OP_PK_STATE],
		 md_kind_count[OP_GID_STATE], md_kind_count[OP_PORT_STATE],
		 md_kind_count[OP_PK_INVAL], md_kind_count[OP_GID_INVAL],
		 md_kind_count[OP_EVENT], md_rc_count[0], md_rc_count[1],
		 md_rc_count[2], md_rc_count[6]);
	tap_ok(kinds_seen == OP_KINDS && events_seen == MD_EVENTS &&
	       md_rc_count[0] && md_rc_count[1] && md_rc_count[2] &&
	       md_rc_count[6],
	       "model: every kind of op (%lu of %d), every event value and "
	       "three outside the enum (%lu of %zu), and OK, EINVAL, ERANGE, "
	       "ENOSPC results all exercised", kinds_seen, OP_KINDS,
	       events_seen, MD_EVENTS);
}

/* ---- concurrent phase: one writer, two readers, a history ring ---- */

#define CC_PK_CAP	64u
#define CC_GID_CAP	32u
#define CC_RING		2048u		/* steps kept per table */
#define CC_READERS	2
#define CC_MIN_STEPS	30000ul		/* ops by the writer */
#define CC_MIN_READS	300000ul	/* per reader */
#define CC_FLOOR_STEPS	2000ul		/* what every config must reach */
#define CC_FLOOR_READS	20000ul
#define CC_READS_PER_STEP 16
#define CC_RUN		(4 * SEC)
#define CC_START	0xfffffe00u	/* wraps after 256 updates */

struct cc_pk_slot {
	atomic_uint stamp;		/* step + 1 once written, 0 while not */
	atomic_uint status;		/* state | 8 if awaiting */
	_Atomic uint16_t e[CC_PK_CAP];
};

struct cc_gid_slot {
	atomic_uint stamp;
	atomic_uint status;
	atomic_uint w[CC_GID_CAP][4];
	atomic_uint type[CC_GID_CAP];
};

struct cc_pk_state {
	uint32_t status;
	ibk_pkey_t e[CC_PK_CAP];
};

struct cc_gid_state {
	uint32_t status;
	struct ibk_gid_entry e[CC_GID_CAP];
};

struct cc_reader {
	_Alignas(64) atomic_ulong reads;
	unsigned long checked, unverifiable, bad, exact, wide;
	uint64_t rng;
};

static struct ibk_pkey_cell cc_pk_cells[IBK_PKEY_CELLS(CC_PK_CAP)];
static struct ibk_hash_slot cc_pk_slots[IBK_PKEY_HASH_SLOTS(CC_PK_CAP)];
static struct ibk_gid_cell cc_gid_cells[IBK_GID_CELLS(CC_GID_CAP)];
static struct ibk_hash_slot cc_gid_slots[IBK_HASH_SLOTS(CC_GID_CAP)];
static struct ibk_port cc_port;
static struct model cc_md;
static ibk_pkey_t cc_keys[CC_PK_CAP + 1];
static struct ibk_gid_entry cc_entries[CC_GID_CAP + 1];
static struct cc_pk_slot cc_pk_ring[CC_RING];
static struct cc_gid_slot cc_gid_ring[CC_RING];
static uint32_t cc_pk_gen0, cc_gid_gen0;
static atomic_ulong cc_steps, cc_bad_writes;
static atomic_int cc_readers_running, cc_diags;
static uint64_t cc_deadline;
static struct cc_reader cc_rd[CC_READERS];

static uint32_t cc_status(int state, bool await)
{
	return (uint32_t)state | (await ? 8u : 0u);
}

static int cc_ready(uint32_t status)
{
	return md_ready((int)(status & 7u), (status & 8u) != 0);
}

/* Writer: publishes the model's tables as step @step of the ring before
 * the library makes that step visible. Per element release stores: a
 * reader that loads a newer element then sees the cleared stamp. */
static void cc_put_pk(uint32_t step, const struct model *m)
{
	struct cc_pk_slot *sl = &cc_pk_ring[step % CC_RING];
	uint32_t i;

	atomic_store_explicit(&sl->stamp, 0, memory_order_relaxed);
	for (i = 0; i < CC_PK_CAP; i++)
		atomic_store_explicit(&sl->e[i], m->pk[i],
				      memory_order_release);
	atomic_store_explicit(&sl->status, cc_status(m->pk_state, m->pk_await),
			      memory_order_release);
	atomic_store_explicit(&sl->stamp, step + 1, memory_order_release);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void cc_put_gid(uint32_t step, const struct model *m)
{
	struct cc_gid_slot *sl = &cc_gid_ring[step % CC_RING];
	uint32_t i, k;

	atomic_store_explicit(&sl->stamp, 0, memory_order_relaxed);
	for (i = 0; i < CC_GID_CAP; i++) {
		for (k = 0; k < 4; k++)
			atomic_store_explicit(&sl->w[i][k],
					      be32(m->gid[i].gid.raw + 4 * k),
					      memory_order_release);
		atomic_store_explicit(&sl->type[i], (uint32_t)m->gid[i].type,
				      memory_order_release);
	}
	atomic_store_explicit(&sl->status,
			      cc_status(m->gid_state, m->gid_await),
			      memory_order_release);
	atomic_store_explicit(&sl->stamp, step + 1, memory_order_release);
}

/* Reader: the model state of step @step, or false if the ring no longer
 * holds it. */
static bool cc_get_pk(uint32_t step, struct cc_pk_state *st)
{
	const struct cc_pk_slot *sl = &cc_pk_ring[step % CC_RING];
	uint32_t i;

	if (atomic_load_explicit(&sl->stamp, memory_order_acquire) != step + 1)
		return false;
	for (i = 0; i < CC_PK_CAP; i++)
		st->e[i] = atomic_load_explicit(&sl->e[i],
						memory_order_acquire);
	st->status = atomic_load_explicit(&sl->status, memory_order_acquire);
	return atomic_load_explicit(&sl->stamp, memory_order_relaxed) ==
	       step + 1;
}

static bool cc_get_gid(uint32_t step, struct cc_gid_state *st)
{
	const struct cc_gid_slot *sl = &cc_gid_ring[step % CC_RING];
	uint32_t i, k, w;

	if (atomic_load_explicit(&sl->stamp, memory_order_acquire) != step + 1)
		return false;
	for (i = 0; i < CC_GID_CAP; i++) {
		for (k = 0; k < 4; k++) {
			w = atomic_load_explicit(&sl->w[i][k],
						 memory_order_acquire);
			st->e[i].gid.raw[4 * k] = (uint8_t)(w >> 24);
			st->e[i].gid.raw[4 * k + 1] = (uint8_t)(w >> 16);
			st->e[i].gid.raw[4 * k + 2] = (uint8_t)(w >> 8);
			st->e[i].gid.raw[4 * k + 3] = (uint8_t)w;
		}
		st->e[i].type = (enum ibk_gid_type)atomic_load_explicit(
			&sl->type[i], memory_order_acquire);
	}
	st->status = atomic_load_explicit(&sl->status, memory_order_acquire);
	return atomic_load_explicit(&sl->stamp, memory_order_relaxed) ==
	       step + 1;
}

static unsigned long cc_reads_so_far(void)
{
	unsigned long n = 0;
	int k;

	for (k = 0; k < CC_READERS; k++)
		n += atomic_load_explicit(&cc_rd[k].reads,
					  memory_order_relaxed);
	return n;
}

static void *cc_writer(void *arg)
{
	uint64_t rng = 0xbb67ae8584caa73bull;
	uint32_t pk_before, gid_before;
	unsigned long steps = 0;
	struct md_op op;
	int want, rc;

	(void)arg;
	op.keys = cc_keys;
	op.entries = cc_entries;
	while (now_ns() < cc_deadline &&
	       (steps < CC_MIN_STEPS || atomic_load(&cc_readers_running) > 0)) {
		if (atomic_load(&cc_readers_running) > 0 &&
		    steps * CC_READS_PER_STEP > cc_reads_so_far() + 2048) {
			sched_yield();
			continue;
		}
		pk_before = cc_md.pk_gen;
		gid_before = cc_md.gid_gen;
		md_draw_op(&rng, &cc_md, true, &op);
		want = md_apply(&cc_md, &op);
		if (cc_md.pk_gen != pk_before)
			cc_put_pk(step_at(cc_md.pk_gen, cc_pk_gen0), &cc_md);
		if (cc_md.gid_gen != gid_before)
			cc_put_gid(step_at(cc_md.gid_gen, cc_gid_gen0), &cc_md);
		rc = md_lib(&cc_port, &op);
		if (rc != want ||
		    latch_count(&cc_port.pkeys.hdr) != cc_md.pk_gen ||
		    latch_count(&cc_port.gids.hdr) != cc_md.gid_gen) {
			atomic_fetch_add(&cc_bad_writes, 1);
			diag_limited(&cc_diags, "writer: %s returned %d, model "
				     "%d", op_name[op.kind], rc, want);
		}
		atomic_store_explicit(&cc_steps, ++steps, memory_order_relaxed);
	}
	return NULL;
}

/* Whether P_Key read @op gave what model state @st gives. */
static bool cc_pk_match(const struct cc_pk_state *st, unsigned op, uint32_t i,
			unsigned key, int rc, ibk_pkey_t v,
			const ibk_pkey_t *snap)
{
	int rdy = cc_ready(st->status), want;
	ibk_pkey_t fv = 0;
	uint32_t k;

	switch (op) {
	case RD_GET:
	case RD_REF_GET:
		if (i >= CC_PK_CAP)
			return rc == IBK_ERANGE;
		if (rdy != IBK_OK)
			return rc == rdy;
		if (!pkey_valid(st->e[i]))
			return rc == IBK_ENOENT;
		return rc == IBK_OK && v == st->e[i];
	case RD_FIND:
	case RD_REF_FIND:
		if (!pkey_valid(key))
			return rc == IBK_EINVAL;
		if (rdy != IBK_OK)
			return rc == rdy;
		want = lin_pk_find(st->e, CC_PK_CAP, key, &fv);
		return rc == want && (want < 0 || v == fv);
	case RD_EXACT:
		if (!pkey_valid(key))
			return rc == IBK_EINVAL;
		if (rdy != IBK_OK)
			return rc == rdy;
		return rc == lin_pk_exact(st->e, CC_PK_CAP, key);
	default:
		if (rdy != IBK_OK)
			return rc == rdy;
		if (rc != (int)CC_PK_CAP)
			return false;
		for (k = 0; k < CC_PK_CAP; k++)
			if (snap[k] != st->e[k])
				return false;
		return true;
	}
}

static bool cc_gid_match(const struct cc_gid_state *st, unsigned op,
			 uint32_t i, const struct ibk_gid *q, int type, int rc,
			 const struct ibk_gid_entry *e,
			 const struct ibk_gid_entry *snap)
{
	int rdy = cc_ready(st->status), want;
	enum ibk_gid_type ft = IBK_GID_TYPE_IB;
	uint32_t k;

	switch (op) {
	case RD_GET:
	case RD_REF_GET:
		if (i >= CC_GID_CAP)
			return rc == IBK_ERANGE;
		if (rdy != IBK_OK)
			return rc == rdy;
		if (gid_zero(&st->e[i].gid))
			return rc == IBK_ENOENT;
		return rc == IBK_OK && gid_eq(&e->gid, &st->e[i].gid) &&
		       e->type == st->e[i].type;
	case RD_FIND:
	case RD_REF_FIND:
		if (gid_zero(q) || type < -1 || type > 2)
			return rc == IBK_EINVAL;
		if (rdy != IBK_OK)
			return rc == rdy;
		want = lin_gid_find(st->e, CC_GID_CAP, q, type, &ft);
		return rc == want && (want < 0 || e->type == ft);
	default:
		if (rdy != IBK_OK)
			return rc == rdy;
		if (rc != (int)CC_GID_CAP)
			return false;
		for (k = 0; k < CC_GID_CAP; k++)
			if (!gid_eq(&snap[k].gid, &st->e[k].gid) ||
			    snap[k].type != st->e[k].type)
				return false;
		return true;
	}
}

/* Outcome of checking one result against the ring. */
enum { CC_OK, CC_BAD, CC_UNVERIFIABLE };

static int cc_pk_read(struct cc_reader *r)
{
	const struct ibk_pkey_table *t = &cc_port.pkeys;
	unsigned op = test_rng_below_r(&r->rng, 6), key;
	uint32_t i = test_rng_below_r(&r->rng, CC_PK_CAP + 1);
	uint32_t c0, c1, lo, hi, g, gen = 0, b, a;
	ibk_pkey_t v = 0, snap[CC_PK_CAP];
	struct ibk_pkey_ref ref;
	struct cc_pk_state st;
	bool exact = false, any = false, f;
	int rc;

	if (test_rng_below_r(&r->rng, 10) == 0)
		key = (unsigned)test_rng64_r(&r->rng) & 0xffffu;
	else
		key = md_draw_pkey(&r->rng, CC_PK_CAP);
	memset(&ref, 0, sizeof(ref));
	c0 = latch_count(&t->hdr);
	switch (op) {
	case RD_GET:
		rc = ibk_pkey_table_get(t, i, &v);
		break;
	case RD_FIND:
		rc = ibk_pkey_table_find(t, (ibk_pkey_t)key, &v);
		break;
	case RD_EXACT:
		rc = ibk_pkey_table_find_exact(t, (ibk_pkey_t)key);
		break;
	case RD_REF_GET:
		rc = ibk_pkey_table_ref_get(t, i, &ref);
		if (rc == IBK_OK) {
			exact = true;
			gen = ref.generation;
			v = ref.pkey;
			if (ref.index != i)
				rc = IBK_EBUSY;		/* never expected */
		}
		break;
	case RD_REF_FIND:
		rc = ibk_pkey_table_ref_find(t, (ibk_pkey_t)key, &ref);
		if (rc == IBK_OK) {
			exact = true;
			gen = ref.generation;
			v = ref.pkey;
			rc = ref.index;
		}
		break;
	default:
		rc = ibk_pkey_table_snapshot(t, CC_PK_CAP, snap, &gen);
		exact = rc >= 0;
		break;
	}
	c1 = latch_count(&t->hdr);

	if (exact) {
		r->exact++;
		if (!count_within(gen, c0, c1))
			return CC_BAD;
		if (!cc_get_pk(step_at(gen, cc_pk_gen0), &st))
			return CC_UNVERIFIABLE;
		if (!cc_pk_match(&st, op, i, key, rc, v, snap))
			return CC_BAD;
		if (op == RD_SNAPSHOT)
			return CC_OK;
		b = latch_count(&t->hdr);
		f = ibk_pkey_table_ref_fresh(t, &ref);
		a = latch_count(&t->hdr);
		return fresh_ok(gen, f, b, a) ? CC_OK : CC_BAD;
	}
	lo = step_at(c0, cc_pk_gen0);
	hi = step_at(c1, cc_pk_gen0);
	if (hi - lo >= CC_RING / 2)
		return CC_UNVERIFIABLE;
	if (hi - lo > 16)
		r->wide++;
	for (g = lo;; g++) {
		if (cc_get_pk(g, &st)) {
			any = true;
			if (cc_pk_match(&st, op, i, key, rc, v, snap))
				return CC_OK;
		} else {
			any = false;	/* the answer may be in a lost step */
			break;
		}
		if (g == hi)
			break;
	}
	if (!any)
		return CC_UNVERIFIABLE;
	diag_limited(&cc_diags, "P_Key op %u index %u key 0x%04x: rc %d "
		     "value 0x%04x, no step in %u..%u has that", op, i, key,
		     rc, v, lo, hi);
	return CC_BAD;
}

static int cc_gid_read(struct cc_reader *r)
{
	const struct ibk_gid_table *t = &cc_port.gids;
	unsigned op = test_rng_below_r(&r->rng, 5);
	uint32_t i = test_rng_below_r(&r->rng, CC_GID_CAP + 1);
	uint32_t c0, c1, lo, hi, g, gen = 0, b, a;
	int type = (int)test_rng_below_r(&r->rng, 5) - 1, rc;
	struct ibk_gid_entry e, snap[CC_GID_CAP];
	enum ibk_gid_type ft = IBK_GID_TYPE_IB;
	struct ibk_gid_ref ref;
	struct cc_gid_state st;
	struct ibk_gid q;
	bool exact = false, any = false, f;

	if (op == RD_EXACT)
		op = RD_SNAPSHOT;
	if (test_rng_below_r(&r->rng, 16) == 0)
		memset(&q, 0, sizeof(q));
	else
		q = md_gid_pool(test_rng_below_r(&r->rng,
				md_gid_pool_size(CC_GID_CAP) + 2));
	memset(&e, 0, sizeof(e));
	memset(&ref, 0, sizeof(ref));
	c0 = latch_count(&t->hdr);
	switch (op) {
	case RD_GET:
		rc = ibk_gid_table_get(t, i, &e);
		break;
	case RD_FIND:
		rc = ibk_gid_table_find(t, &q, (enum ibk_gid_type)type, &ft);
		e.type = ft;
		break;
	case RD_REF_GET:
		rc = ibk_gid_table_ref_get(t, i, &ref);
		if (rc == IBK_OK) {
			exact = true;
			gen = ref.generation;
			e.gid = ref.gid;
			e.type = ref.type;
			if (ref.index != i)
				rc = IBK_EBUSY;
		}
		break;
	case RD_REF_FIND:
		rc = ibk_gid_table_ref_find(t, &q, (enum ibk_gid_type)type,
					    &ref);
		if (rc == IBK_OK) {
			exact = true;
			gen = ref.generation;
			e.type = ref.type;
			rc = gid_eq(&ref.gid, &q) ? ref.index : IBK_EBUSY;
		}
		break;
	default:
		rc = ibk_gid_table_snapshot(t, CC_GID_CAP, snap, &gen);
		exact = rc >= 0;
		break;
	}
	c1 = latch_count(&t->hdr);

	if (exact) {
		r->exact++;
		if (!count_within(gen, c0, c1))
			return CC_BAD;
		if (!cc_get_gid(step_at(gen, cc_gid_gen0), &st))
			return CC_UNVERIFIABLE;
		if (!cc_gid_match(&st, op, i, &q, type, rc, &e, snap))
			return CC_BAD;
		if (op == RD_SNAPSHOT)
			return CC_OK;
		b = latch_count(&t->hdr);
		f = ibk_gid_table_ref_fresh(t, &ref);
		a = latch_count(&t->hdr);
		return fresh_ok(gen, f, b, a) ? CC_OK : CC_BAD;
	}
	lo = step_at(c0, cc_gid_gen0);
	hi = step_at(c1, cc_gid_gen0);
	if (hi - lo >= CC_RING / 2)
		return CC_UNVERIFIABLE;
	if (hi - lo > 16)
		r->wide++;
	for (g = lo;; g++) {
		if (cc_get_gid(g, &st)) {
			any = true;
			if (cc_gid_match(&st, op, i, &q, type, rc, &e, snap))
				return CC_OK;
		} else {
			any = false;
			break;
		}
		if (g == hi)
			break;
	}
	if (!any)
		return CC_UNVERIFIABLE;
	diag_limited(&cc_diags, "GID op %u index %u type %d: rc %d, no step "
		     "in %u..%u has that", op, i, type, rc, lo, hi);
	return CC_BAD;
}

static void *cc_reader_main(void *arg)
{
	struct cc_reader *r = (struct cc_reader *)arg;
	unsigned long n = 0;
	int out;

	while (now_ns() < cc_deadline &&
	       (n < CC_MIN_READS ||
		atomic_load_explicit(&cc_steps, memory_order_relaxed) <
		CC_MIN_STEPS)) {
		out = test_rng_below_r(&r->rng, 2) ? cc_pk_read(r) :
		      cc_gid_read(r);
		if (out == CC_OK)
			r->checked++;
		else if (out == CC_BAD)
			r->bad++;
		else
			r->unverifiable++;
		atomic_store_explicit(&r->reads, ++n, memory_order_relaxed);
	}
	atomic_fetch_sub(&cc_readers_running, 1);
	return NULL;
}

static void test_model_concurrent(void)
{
	pthread_t rd[CC_READERS], wr;
	unsigned long reads = 0, checked = 0, unver = 0, bad = 0, exact = 0;
	unsigned long wide = 0, steps;
	uint64_t t0;
	int k;

	ibk_port_init(&cc_port, cc_pk_cells, CC_PK_CAP, cc_pk_slots,
		      IBK_PKEY_HASH_SLOTS(CC_PK_CAP), cc_gid_cells, CC_GID_CAP,
		      cc_gid_slots, IBK_HASH_SLOTS(CC_GID_CAP));
	ibk_latch_init(&cc_port.pkeys.hdr.latch, CC_START);
	ibk_latch_init(&cc_port.gids.hdr.latch, CC_START + 0x40u);
	md_init(&cc_md, CC_PK_CAP, CC_GID_CAP, CC_START, CC_START + 0x40u);
	cc_pk_gen0 = cc_md.pk_gen;
	cc_gid_gen0 = cc_md.gid_gen;
	cc_put_pk(0, &cc_md);
	cc_put_gid(0, &cc_md);

	atomic_store(&cc_readers_running, CC_READERS);
	t0 = now_ns();
	cc_deadline = t0 + CC_RUN;
	for (k = 0; k < CC_READERS; k++) {
		cc_rd[k].rng = 0x3c6ef372fe94f82bull * (uint64_t)(k + 1);
		pthread_create(&rd[k], NULL, cc_reader_main, &cc_rd[k]);
	}
	pthread_create(&wr, NULL, cc_writer, NULL);
	for (k = 0; k < CC_READERS; k++)
		pthread_join(rd[k], NULL);
	pthread_join(wr, NULL);

	steps = atomic_load(&cc_steps);
	for (k = 0; k < CC_READERS; k++) {
		reads += atomic_load(&cc_rd[k].reads);
		checked += cc_rd[k].checked;
		unver += cc_rd[k].unverifiable;
		bad += cc_rd[k].bad;
		exact += cc_rd[k].exact;
		wide += cc_rd[k].wide;
	}
	tap_diag("model, concurrent: %lu writer ops (%u P_Key + %u GID "
		 "updates), %lu reads by %d readers in %.2f s: %lu checked "
		 "(%lu against the exact generation they carry), %lu "
		 "inconsistent, %lu unverifiable (ring overrun), %lu windows "
		 "over 16 steps; generations 0x%08x -> 0x%08x, 0x%08x -> "
		 "0x%08x", steps, step_at(cc_md.pk_gen, cc_pk_gen0),
		 step_at(cc_md.gid_gen, cc_gid_gen0), reads, CC_READERS,
		 (double)(now_ns() - t0) / 1e9, checked, exact, bad, unver,
		 wide, cc_pk_gen0, cc_md.pk_gen, cc_gid_gen0, cc_md.gid_gen);
	tap_ok(bad == 0 && atomic_load(&cc_bad_writes) == 0,
	       "model, concurrent: every result matches a model state "
	       "published while the read ran (results with a generation: "
	       "exactly that state), writer results and counts as modelled");
	tap_ok(steps >= CC_FLOOR_STEPS && checked >= CC_FLOOR_READS &&
	       unver * 100 <= reads && cc_md.pk_gen < cc_pk_gen0 &&
	       cc_md.gid_gen < cc_gid_gen0,
	       "model, concurrent: at least %lu ops and %lu checked reads "
	       "(%lu, %lu), at most 1%% unverifiable, both generations "
	       "wrapped", CC_FLOOR_STEPS, CC_FLOOR_READS, steps, checked);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	fz_round(false);
	fz_round(true);
	test_signal_handler();
	test_model();
	test_model_concurrent();
	return tap_done();
}
