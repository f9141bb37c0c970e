/* SPDX-License-Identifier: MIT */
/*
 * ibk-bench-proc - one whole process doing n operations of one case, for
 * hyperfine: `ibk-bench-proc CASE lib|base N`. Timing processes for a range
 * of N and fitting a line, the slope is the cost of one operation with
 * process start-up, page faults and input set-up in the intercept.
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

	fprintf(stderr, "usage: ibk-bench-proc CASE lib|base N\ncases:");
	for (i = 0; i < bench_case_count(); i++)
		if (!bench_case_at(i)->threads && !bench_case_at(i)->latency)
			fprintf(stderr, " %s", bench_case_at(i)->name);
	fputc('\n', stderr);
	return 2;
}

int main(int argc, char **argv)
{
	const struct bench_case *c;
	bench_run_fn fn;
	uint64_t ops;
	char *end;
	void *ctx;

	if (argc != 4)
		return usage();
	c = bench_case_lookup(argv[1]);
	if (!c || c->threads || c->latency)
		return usage();
	if (!strcmp(argv[2], "lib"))
		fn = c->lib;
	else if (!strcmp(argv[2], "base"))
		fn = c->base;
	else
		return usage();
	ops = strtoull(argv[3], &end, 10);
	if (*end || end == argv[3])
		return usage();

	ctx = c->setup(c);
	bench_consume(fn(ctx, ops / c->ops_per_iter));
	c->teardown(ctx);
	return 0;
}
