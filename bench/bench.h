/* SPDX-License-Identifier: MIT */
/*
 * bench.h - what the harness (bench.c) and the process runner (proc.c) share:
 * the case description, the timing helper and the fixed-seed generator.
 *
 * A case times one operation two ways in the same run: through the library
 * and through the code a user would otherwise write (its baseline). Both run
 * functions do `iters` iterations of `ops_per_iter` operations each over
 * inputs that setup() prepared outside the timed region, and return a value
 * folded from every result so that the compiler cannot drop the loop.
 */
#ifndef IBK_BENCH_H
#define IBK_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uint64_t (*bench_run_fn)(void *ctx, uint64_t iters);

struct bench_opts;
struct bench_latency_kind;

/* Most peers a case times beside its baseline (peers.h, and more). */
#define BENCH_MAX_PEERS 6

/*
 * A further baseline, timed in the same samples as lib and base: a real
 * library's way of doing the case's operation (peers.h), or another way a
 * user would write it. Each gives the case one more row.
 */
struct bench_side {
	const char *name;		/* the row's base= token */
	bench_run_fn run;
	void *ctx;
};

struct bench_case {
	const char *name;
	const char *base_name;		/* short token naming the baseline */
	const char *inputs;		/* the input mix, in one line */
	uint64_t param;			/* the case's own: table size... */
	unsigned ops_per_iter;		/* operations per iteration */
	unsigned threads;		/* reader threads timed at once */
	void *(*setup)(const struct bench_case *c);
	void (*teardown)(void *ctx);
	bench_run_fn lib;
	bench_run_fn base;
	/* 0 when lib and base give the same answers on the case's inputs */
	int (*check)(void *ctx);
	/* optional: a line about what ran (writer rate...) after the timing */
	void (*note)(void *ctx, char *buf, size_t len);
	/*
	 * Optional: fills up to BENCH_MAX_PEERS sides to time beside lib and
	 * base, each already checked to give the library's answers, and
	 * returns how many.
	 */
	unsigned (*peers)(void *ctx, struct bench_side *sides);
	/*
	 * A latency case instead (lib and base NULL): times single operations
	 * one by one, fills up to BENCH_LATENCY_KINDS kinds of read, library
	 * beside baseline, and returns how many.
	 */
	unsigned (*latency)(void *ctx, const struct bench_opts *opts,
			    struct bench_latency_kind *kinds);
};

/*
 * One side's latency distribution: every operation timed on its own, in
 * ns. The nocsw figures leave out batches of reads in which the OS
 * switched the reader out involuntarily (getrusage's ru_nivcsw moved);
 * every other figure counts every read.
 */
#define BENCH_QUANTILES 8

/* The levels of bench_latency's quantile_ns[], in parts per million. */
extern const uint32_t bench_quantile_ppm[BENCH_QUANTILES];

/* The statistics a latency case gives a row each. */
struct bench_tail {
	double median_ns;
	double p99_ns;
	double p9999_ns;
	double max_ns;
};

struct bench_latency {
	uint64_t reads;			/* operations timed */
	double quantile_ns[BENCH_QUANTILES];	/* the distribution's shape */
	struct bench_tail all;
	struct bench_tail nocsw;	/* batches not switched out only */
	uint64_t over_2us;		/* reads slower than 2 us */
	uint64_t nocsw_reads;		/* reads in those batches */
	uint64_t nivcsw;		/* involuntary context switches */
	uint64_t nvcsw;			/* voluntary ones: the reader slept */
	uint64_t retried;		/* reads that redid their read section */
	uint64_t retries;		/* read sections redone */
	uint64_t max_retries;		/* the most one read redid */
	/* the most one read's retries exceeded the writer updates completed
	 * during it, and the moves of the latch's count (0 if none did) */
	int64_t max_over_updates;
	int64_t max_over_moves;
	uint64_t writes;		/* the writer's updates meanwhile */
	double seconds;			/* spent reading */
};

/* One kind of read a latency case times, library beside baseline and
 * any peers. */
struct bench_latency_kind {
	const char *suffix;		/* rows: case name, suffix, _max... */
	const char *base_name;
	struct bench_latency lib;
	struct bench_latency base;
	unsigned npeers;
	const char *peer_name[BENCH_MAX_PEERS];
	struct bench_latency peer[BENCH_MAX_PEERS];
};

#define BENCH_LATENCY_KINDS 4

extern const struct bench_case bench_keys_cases[];
extern const size_t bench_keys_ncases;
extern const struct bench_case bench_tables_cases[];
extern const size_t bench_tables_ncases;
extern const struct bench_case bench_latch_cases[];
extern const size_t bench_latch_ncases;
extern const struct bench_case bench_mem_cases[];
extern const size_t bench_mem_ncases;

/* The case called name, from either list; NULL if there is none. */
const struct bench_case *bench_case_lookup(const char *name);

/* Every case, in report order: index 0 .. bench_case_count() - 1. */
size_t bench_case_count(void);
const struct bench_case *bench_case_at(size_t i);

struct bench_opts {
	unsigned samples;		/* timed samples per side (odd) */
	double sample_ns;		/* calibrated length of one sample */
};

struct bench_stats {
	double median_ns;		/* per operation */
	double min_ns;
	double max_ns;
};

struct bench_result {
	struct bench_stats lib;
	struct bench_stats base;
	uint64_t lib_iters;		/* iterations in one sample */
	uint64_t base_iters;
	struct bench_stats peer[BENCH_MAX_PEERS];
};

/*
 * The one timing helper: calibrates each side to opts->sample_ns per sample,
 * then takes opts->samples samples of each, alternating lib, base and the
 * @npeers @peers so that drift in the machine's speed hits all alike.
 */
void bench_measure(const struct bench_case *c, void *ctx,
		   const struct bench_side *peers, unsigned npeers,
		   const struct bench_opts *opts, struct bench_result *out);

/* Runs fn once for iters iterations and returns the wall time in ns. */
double bench_time_ns(bench_run_fn fn, void *ctx, uint64_t iters);

/* Folds a run's result into a volatile sink the compiler must keep. */
void bench_consume(uint64_t v);

/* A variant side (variants.h) gives the library's verdicts on every
 * request, with the library's struct layout, or the run stops naming it. */
void bench_variant_agrees(int same, const char *what);

/* Monotonic time in ns. */
uint64_t bench_now_ns(void);

/* splitmix64: a fixed-seed generator, so every run sees the same inputs. */
struct bench_rng {
	uint64_t s;
};

static inline uint64_t bench_rng_next(struct bench_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n) for n well below 2^32 (bias < 2^-32). */
static inline uint32_t bench_rng_below(struct bench_rng *r, uint32_t n)
{
	return (uint32_t)(((bench_rng_next(r) >> 32) * n) >> 32);
}

/* 1 with probability 1 / den. */
static inline int bench_rng_one_in(struct bench_rng *r, uint32_t den)
{
	return bench_rng_below(r, den) == 0;
}

/* A valid P_Key: base 1..0x7fff at random, membership bit at random. */
uint16_t bench_random_pkey(struct bench_rng *r);

/*
 * The UD packets of the receive cases (rx_ud_burst, port_rx_burst): 256
 * SEND-only packets of 64 bytes in L1, each a BTH (after an 8-byte LRH)
 * and its DETH, received in a random order of 2^20 in bursts of 32.
 */
#define BENCH_RX_BURST 32
#define BENCH_RX_BUFFERS 256
#define BENCH_RX_BUFFER_SIZE 64
#define BENCH_RX_SEQUENCE (1u << 20)

#define BENCH_LRH_LEN 8		/* each BTH sits after an 8-byte LRH */

/*
 * One packet's BTH and the 8 bytes after it (a DETH for a UD SEND),
 * written byte by byte (not with the library, so that the checks compare
 * two independent readings): opcode @opcode, TVer 0, the base of @qp_pkey
 * with a random membership bit; 1 in @drop_1_in a random other base
 * (none for 0), and for a UD SEND only (0x64) 1 in @drop_1_in of the rest
 * a Q_Key other than @qp_qkey.
 */
void bench_rx_write_packet(struct bench_rng *r, uint8_t opcode,
			   uint16_t qp_pkey, uint32_t qp_qkey,
			   unsigned drop_1_in, uint8_t *bth);

/*
 * Writes the packets into buffers (BENCH_RX_BUFFERS * BENCH_RX_BUFFER_SIZE
 * bytes) for a QP of P_Key qp_pkey (a full member) and Q_Key qp_qkey, the
 * P_Key random in membership, a P_Key drop 1 in drop_1_in and a Q_Key drop
 * 1 in drop_1_in (none for 0); then fills hdrs (BENCH_RX_SEQUENCE) with
 * pointers to their BTHs in a random order.
 */
void bench_rx_packets(struct bench_rng *r, uint16_t qp_pkey,
		      uint32_t qp_qkey, unsigned drop_1_in, uint8_t *buffers,
		      const void **hdrs);

/* 1 if the library's verdict @lib is the baseline's verdict @base. */
int bench_rx_same_verdict(uint8_t lib, uint8_t base);

/* The note of the receive cases: how the BENCH_RX_SEQUENCE packets fare
 * (verdicts: BENCH_RX_SEQUENCE bytes of scratch). */
void bench_rx_note(uint16_t qp_pkey, uint32_t qp_qkey,
		   const void *const *hdrs, uint8_t *verdicts, char *buf,
		   size_t len);

/*
 * Zeroed, 64-byte aligned (a cache line: each table header starts one);
 * exits on failure: the bench has nothing to fall back to. free() it.
 */
void *bench_alloc(size_t size);

/* Keeps the compiler from hoisting work across iterations of a timed loop. */
#define BENCH_BARRIER() __asm__ __volatile__("" ::: "memory")

#endif
