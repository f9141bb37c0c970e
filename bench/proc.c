/* SPDX-License-Identifier: MIT */
/*
 * ibk-bench-proc - one whole process doing n operations of one case, for
 * hyperfine and callgrind: `ibk-bench-proc CASE lib|base|PEER N`, PEER a
 * name the case's peer rows give as base=. Timing processes for a range
 * of N and fitting a line, the slope is the cost of one operation with
 * process start-up, page faults and input set-up in the intercept; the
 * same difference of callgrind's counts gives instructions per operation.
 *
 * N is rounded down to whole iterations of the case (32 packets for a
 * burst). Threaded and latency cases are not offered: their reader
 * threads and writers are timed by the in-process harness only.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

static int usage(void)
{
	size_t i;

	fprintf(stderr, "usage: ibk-bench-proc CASE lib|base|PEER N\n"
		"cases:");
	for (i = 0; i < bench_case_count(); i++)
		if (!bench_case_at(i)->threads && !bench_case_at(i)->latency)
			fprintf(stderr, " %s", bench_case_at(i)->name);
	fputc('\n', stderr);
	return 2;
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
	else if (!strcmp(name, "base"))
		side->run = c->base;
	for (i = 0; i < n && !side->run; i++)
		if (!strcmp(peers[i].name, name))
			*side = peers[i];
	return side->run ? 0 : -1;
}

int main(int argc, char **argv)
{
	const struct bench_case *c;
	struct bench_side side;
	uint64_t ops;
	char *end;
	void *ctx;

	if (argc != 4)
		return usage();
	c = bench_case_lookup(argv[1]);
	if (!c || c->threads || c->latency)
		return usage();
	ops = strtoull(argv[3], &end, 10);
	if (*end || end == argv[3])
		return usage();

	ctx = c->setup(c);
	if (pick_side(c, ctx, argv[2], &side)) {
		c->teardown(ctx);
		return usage();
	}
	bench_consume(side.run(side.ctx, ops / c->ops_per_iter));
	c->teardown(ctx);
	return 0;
}
