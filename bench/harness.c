/* SPDX-License-Identifier: MIT */
/*
 * harness.c - the timing helper every case goes through, and the case
 * registry shared by the in-process harness and the process runner.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile uint64_t bench_sink;

/* 50 %, 90 %, 99 %, 99.9 %, 99.99 %, 99.999 %, 99.9999 %, the worst. */
const uint32_t bench_quantile_ppm[BENCH_QUANTILES] = {
	500000, 900000, 990000, 999000, 999900, 999990, 999999, 1000000
};

void bench_consume(uint64_t v)
{
	bench_sink += v;
}

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void *bench_alloc(size_t size)
{
	size_t rounded = (size + 63) & ~(size_t)63;
	void *p = aligned_alloc(64, rounded ? rounded : 64);

	if (!p) {
		fprintf(stderr, "bench: out of memory (%zu bytes)\n", size);
		exit(2);
	}
	return memset(p, 0, rounded);
}

void bench_variant_agrees(int same, const char *what)
{
	if (!same) {
		fprintf(stderr, "bench: variant %s differs from the library\n",
			what);
		exit(2);
	}
}

double bench_time_ns(bench_run_fn fn, void *ctx, uint64_t iters)
{
	uint64_t t0, t1, r;

	t0 = bench_now_ns();
	r = fn(ctx, iters);
	t1 = bench_now_ns();
	bench_consume(r);
	return (double)(t1 - t0);
}

/*
 * Iterations that take about target_ns. Doubles the count until a run
 * lasts an eighth of the target (so that the clock's granularity is noise)
 * and took at least 1.5 times the run before it: a fixed cost per run
 * (waking reader threads, a thread not yet scheduled) must not pass for
 * work. Then scales, and checks the count: a run that the machine's load
 * stretched (a reader thread woken late) makes the work look slower than
 * it is, and the count too small, so while a run of the count is shorter
 * than half the target (up to 8 times) it scales again from that run.
 * The runs double as the warm-up.
 */
static uint64_t bench_calibrate(bench_run_fn fn, void *ctx, double target_ns)
{
	uint64_t iters = 1;
	double t = bench_time_ns(fn, ctx, iters), t2;
	unsigned tries;

	for (;;) {
		iters *= 2;
		t2 = bench_time_ns(fn, ctx, iters);
		if (t2 >= target_ns * 4 ||
		    (t2 >= target_ns / 8 && t2 >= 1.5 * t))
			break;
		t = t2;
	}
	for (tries = 0; tries < 8; tries++) {
		iters = (uint64_t)((double)iters * target_ns / t2);
		iters = iters ? iters : 1;
		t2 = bench_time_ns(fn, ctx, iters);
		if (t2 >= target_ns / 2)
			break;
	}
	return iters;
}

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void bench_stats_of(double *ns, unsigned n, struct bench_stats *st)
{
	qsort(ns, n, sizeof(*ns), bench_cmp_double);
	st->min_ns = ns[0];
	st->max_ns = ns[n - 1];
	st->median_ns = n % 2 ? ns[n / 2] : (ns[n / 2 - 1] + ns[n / 2]) / 2;
}

void bench_measure(const struct bench_case *c, void *ctx,
		   const struct bench_side *peers, unsigned npeers,
		   const struct bench_opts *opts, struct bench_result *out)
{
	struct bench_side sides[2 + BENCH_MAX_PEERS];
	struct bench_stats *stats[2 + BENCH_MAX_PEERS];
	uint64_t iters[2 + BENCH_MAX_PEERS];
	unsigned nsides = 2 + npeers, s, i;
	double *ns = bench_alloc(nsides * opts->samples * sizeof(*ns));

	sides[0] = (struct bench_side){ "lib", c->lib, ctx };
	sides[1] = (struct bench_side){ c->base_name, c->base, ctx };
	stats[0] = &out->lib;
	stats[1] = &out->base;
	for (s = 0; s < npeers; s++) {
		sides[2 + s] = peers[s];
		stats[2 + s] = &out->peer[s];
	}
	for (s = 0; s < nsides; s++)
		iters[s] = bench_calibrate(sides[s].run, sides[s].ctx,
					   opts->sample_ns);
	for (i = 0; i < opts->samples; i++)
		for (s = 0; s < nsides; s++)
			ns[s * opts->samples + i] =
				bench_time_ns(sides[s].run, sides[s].ctx,
					      iters[s]) /
				((double)iters[s] * c->ops_per_iter);
	for (s = 0; s < nsides; s++)
		bench_stats_of(ns + s * opts->samples, opts->samples,
			       stats[s]);
	out->lib_iters = iters[0];
	out->base_iters = iters[1];
	free(ns);
}

size_t bench_case_count(void)
{
	return bench_keys_ncases + bench_tables_ncases + bench_latch_ncases +
	       bench_mem_ncases;
}

const struct bench_case *bench_case_at(size_t i)
{
	if (i < bench_keys_ncases)
		return &bench_keys_cases[i];
	i -= bench_keys_ncases;
	if (i < bench_tables_ncases)
		return &bench_tables_cases[i];
	i -= bench_tables_ncases;
	if (i < bench_latch_ncases)
		return &bench_latch_cases[i];
	return &bench_mem_cases[i - bench_latch_ncases];
}

const struct bench_case *bench_case_lookup(const char *name)
{
	size_t i;

	for (i = 0; i < bench_case_count(); i++)
		if (!strcmp(bench_case_at(i)->name, name))
			return bench_case_at(i);
	return NULL;
}
