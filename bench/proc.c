/* SPDX-License-Identifier: MIT */
/*
 * ibk-bench-proc - one whole process doing n operations of one case, for
 * hyperfine and callgrind: `ibk-bench-proc CASE SIDE N [SIDE N]...`, SIDE
 * lib, base (or the baseline's name) or a peer's name as the case's rows
 * give it in base=, each side in turn after one set-up. Timing processes
 * for a range of N and fitting a line, the slope is the cost of one
 * operation with process start-up, page faults and input set-up in the
 * intercept. Under callgrind each side's work is counted on its own
 * (run_side()).
 *
 * N is rounded down to whole iterations of the case (32 packets for a
 * burst). Threaded and latency cases are not offered: their reader
 * threads and writers are timed by the in-process harness only.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_ZERO_STATS
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(what)
#endif

static int usage(void)
{
	size_t i;

	fprintf(stderr, "usage: ibk-bench-proc CASE lib|base|PEER N "
		"[SIDE N]...\ncases:");
	for (i = 0; i < bench_case_count(); i++)
		if (!bench_case_at(i)->threads && !bench_case_at(i)->latency)
			fprintf(stderr, " %s", bench_case_at(i)->name);
	fputc('\n', stderr);
	return 2;
}

/*
 * The timed work alone. Under callgrind (valgrind/callgrind.h's client
 * requests: a few instructions each outside valgrind), the counts start
 * from zero before it and are written out after it, named after the side,
 * so that one process counts each side's work and nothing else.
 */
static uint64_t run_side(const struct bench_side *side, uint64_t iters)
{
	uint64_t r;

	CALLGRIND_ZERO_STATS;
	r = side->run(side->ctx, iters);
	CALLGRIND_DUMP_STATS_AT(side->name);
	return r;
}

/* The side of @c called @name in @ctx: lib, base or one of its peers. */
static int pick_side(const struct bench_case *c, void *ctx, const char *name,
		     struct bench_side *side)
{
	struct bench_side peers[BENCH_MAX_PEERS];
	unsigned n = c->peers ? c->peers(ctx, peers) : 0, i;

	*side = (struct bench_side){ name, NULL, ctx };
	if (!strcmp(name, "lib"))
		side->run = c->lib;
	else if (!strcmp(name, "base") || !strcmp(name, c->base_name))
		side->run = c->base;
	for (i = 0; i < n && !side->run; i++)
		if (!strcmp(peers[i].name, name))
			*side = peers[i];
	return side->run ? 0 : -1;
}

/* @s as a count of operations into *@ops; -1 if it is not a number. */
static int parse_ops(const char *s, uint64_t *ops)
{
	char *end;

	*ops = strtoull(s, &end, 10);
	return *end || end == s ? -1 : 0;
}

int main(int argc, char **argv)
{
	const struct bench_case *c;
	struct bench_side side;
	uint64_t ops;
	void *ctx;
	int a, err = 0;

	if (argc < 4 || argc % 2)
		return usage();
	c = bench_case_lookup(argv[1]);
	if (!c || c->threads || c->latency)
		return usage();
	for (a = 3; a < argc; a += 2)
		if (parse_ops(argv[a], &ops))
			return usage();

	ctx = c->setup(c);
	for (a = 2; a < argc && !err; a += 2) {
		parse_ops(argv[a + 1], &ops);
		err = pick_side(c, ctx, argv[a], &side);
		if (!err)
			bench_consume(run_side(&side, ops / c->ops_per_iter));
	}
	c->teardown(ctx);
	return err ? usage() : 0;
}
