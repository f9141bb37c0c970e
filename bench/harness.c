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
 * work. Then scales. The runs double as the warm-up.
 */
static uint64_t bench_calibrate(bench_run_fn fn, void *ctx, double target_ns)
{
	uint64_t iters = 1;
	double t = bench_time_ns(fn, ctx, iters), t2;

	for (;;) {
		iters *= 2;
		t2 = bench_time_ns(fn, ctx, iters);
		if (t2 >= target_ns * 4 ||
		    (t2 >= target_ns / 8 && t2 >= 1.5 * t))
			break;
		t = t2;
	}
	iters = (uint64_t)((double)iters * target_ns / t2);
	return iters ? iters : 1;
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
		   const struct bench_opts *opts, struct bench_result *out)
{
	double *lib = bench_alloc(opts->samples * sizeof(*lib));
	double *base = bench_alloc(opts->samples * sizeof(*base));
	double lib_ops, base_ops;
	unsigned i;

	out->lib_iters = bench_calibrate(c->lib, ctx, opts->sample_ns);
	out->base_iters = bench_calibrate(c->base, ctx, opts->sample_ns);
	lib_ops = (double)out->lib_iters * c->ops_per_iter;
	base_ops = (double)out->base_iters * c->ops_per_iter;
	for (i = 0; i < opts->samples; i++) {
		lib[i] = bench_time_ns(c->lib, ctx, out->lib_iters) / lib_ops;
		base[i] = bench_time_ns(c->base, ctx, out->base_iters) /
			  base_ops;
	}
	bench_stats_of(lib, opts->samples, &out->lib);
	bench_stats_of(base, opts->samples, &out->base);
	free(lib);
	free(base);
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
