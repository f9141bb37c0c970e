/* SPDX-License-Identifier: MIT */
/*
 * ibk-bench - times every case, library beside baseline and peers in the
 * same run.
 *
 *   ibk-bench [--samples N] [--sample-ms MS] [--json PATH] [CASE...]
 *   ibk-bench --list
 *
 * Prints the machine, one `case=... lib_ns=... base=... base_ns=...` line
 * per case and baseline or peer (median ns per operation over N samples of
 * about MS each, lower is better; for the threaded cases ns per read per
 * thread), a summary with speedups, and a MET/MISSED line per
 * performance target (the README's Performance section). A latency case (read_latency) prints one row per
 * kind of read, statistic and baseline or peer instead: read_latency_max,
 * _p9999, _p99, _median, each beside its _nocsw twin (batches of reads the
 * OS switched out left out), in ns for one read; its reads per
 * side scale with N and MS. --json writes the rows as a JSON list, each
 * with a unique "row" (case.base). Exits 1 if a case's library and a
 * baseline or peer disagree on its inputs (its figures would compare
 * nothing).
 */
#include "bench.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct row {
	const struct bench_case *c;
	char name[64];
	const char *base_name;		/* the baseline's or a peer's */
	struct bench_result r;		/* a latency row: its statistic (x3) */
	const char *stat;		/* a latency row's statistic, else NULL */
	bool first;			/* first row of its case or kind */
	struct bench_latency lib_lat;	/* a latency row's distributions */
	struct bench_latency base_lat;
	char note[256];
};

/* The rows of a latency case, per kind of read, in this order. */
static const struct {
	const char *name;
	size_t offset;
} lat_stats[] = {
	{ "max", offsetof(struct bench_latency, all.max_ns) },
	{ "max_nocsw", offsetof(struct bench_latency, nocsw.max_ns) },
	{ "p9999", offsetof(struct bench_latency, all.p9999_ns) },
	{ "p9999_nocsw", offsetof(struct bench_latency, nocsw.p9999_ns) },
	{ "p99", offsetof(struct bench_latency, all.p99_ns) },
	{ "p99_nocsw", offsetof(struct bench_latency, nocsw.p99_ns) },
	{ "median", offsetof(struct bench_latency, all.median_ns) },
	{ "median_nocsw", offsetof(struct bench_latency, nocsw.median_ns) },
};

#define LAT_NSTATS (sizeof(lat_stats) / sizeof(lat_stats[0]))

/* Rows a case can fill: one per baseline and peer (and statistic). */
static size_t case_rows(const struct bench_case *c)
{
	return (c->latency ? BENCH_LATENCY_KINDS * LAT_NSTATS : 1) *
	       (1 + BENCH_MAX_PEERS);
}

static void print_machine(void)
{
	char line[256], model[256] = "unknown";
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && colon) {
			snprintf(model, sizeof(model), "%s", colon + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
	printf("cpu: %s, %ld cores online\n", model,
	       sysconf(_SC_NPROCESSORS_ONLN));
#ifdef __clang__
	printf("compiler: clang %s\n", __clang_version__);
#else
	printf("compiler: gcc %s\n", __VERSION__);
#endif
}

static double speedup(const struct row *w)
{
	return w->r.base.median_ns / w->r.lib.median_ns;
}

/* Reads per microsecond over all reader threads: threads / ns per read. */
static double total_mreads(const struct row *w, double ns)
{
	return 1e3 * w->c->threads / ns;
}

/* Where a latency row's distributions came from, one line per side. */
static void print_latency(const char *side, const struct bench_latency *l)
{
	printf("    %s: %llu reads in %.2f s, writer %llu refills; ", side,
	       (unsigned long long)l->reads, l->seconds,
	       (unsigned long long)l->writes);
	if (!strcmp(side, "lib"))
		printf("%llu reads retried (%llu retries, at most %llu in one "
		       "read, %lld more than the updates completed and %lld "
		       "more than the count's moves during it); ",
		       (unsigned long long)l->retried,
		       (unsigned long long)l->retries,
		       (unsigned long long)l->max_retries,
		       (long long)l->max_over_updates,
		       (long long)l->max_over_moves);
	printf("%llu over 2 us; switched out %llu times, slept %llu\n",
	       (unsigned long long)l->over_2us, (unsigned long long)l->nivcsw,
	       (unsigned long long)l->nvcsw);
}

static void print_row(const struct row *w)
{
	printf("case=%s lib_ns=%.3f base=%s base_ns=%.3f\n", w->name,
	       w->r.lib.median_ns, w->base_name, w->r.base.median_ns);
	if (w->stat) {
		if (w->first) {
			print_latency("lib", &w->lib_lat);
			print_latency(w->base_name, &w->base_lat);
		}
		if (w->note[0])
			printf("    %s\n", w->note);
		fflush(stdout);
		return;
	}
	printf("    spread over samples: lib %.3f..%.3f, base %.3f..%.3f ns\n",
	       w->r.lib.min_ns, w->r.lib.max_ns, w->r.base.min_ns,
	       w->r.base.max_ns);
	if (w->c->threads)
		printf("    %u reader thread(s): total %.1f M reads/s lib, "
		       "%.1f M reads/s base\n", w->c->threads,
		       total_mreads(w, w->r.lib.median_ns),
		       total_mreads(w, w->r.base.median_ns));
	if (w->note[0])
		printf("    %s\n", w->note);
	fflush(stdout);
}

/* A latency row: statistic @s of the library's and the other side's
 * distributions. */
static void latency_row(struct row *w, const struct bench_case *c,
			const struct bench_latency_kind *kind, unsigned s,
			const char *base_name, const struct bench_latency *base)
{
	const char *lib_stats = (const char *)&kind->lib;
	const char *base_stats = (const char *)base;
	double v;

	w->c = c;
	snprintf(w->name, sizeof(w->name), "%s%s_%s", c->name, kind->suffix,
		 lat_stats[s].name);
	w->base_name = base_name;
	w->stat = lat_stats[s].name;
	w->first = s == 0;
	w->lib_lat = kind->lib;
	w->base_lat = *base;
	memcpy(&v, lib_stats + lat_stats[s].offset, sizeof(v));
	w->r.lib.median_ns = w->r.lib.min_ns = w->r.lib.max_ns = v;
	memcpy(&v, base_stats + lat_stats[s].offset, sizeof(v));
	w->r.base.median_ns = w->r.base.min_ns = w->r.base.max_ns = v;
	w->note[0] = '\0';
}

/* One row per kind of read, statistic and baseline or peer; returns how
 * many. */
static size_t latency_rows(const struct bench_case *c,
			   const struct bench_latency_kind *kinds,
			   unsigned nkinds, struct row *w)
{
	size_t n = 0;
	unsigned k, s, p;

	for (k = 0; k < nkinds; k++) {
		for (s = 0; s < LAT_NSTATS; s++)
			latency_row(&w[n++], c, &kinds[k], s,
				    kinds[k].base_name, &kinds[k].base);
		for (p = 0; p < kinds[k].npeers; p++)
			for (s = 0; s < LAT_NSTATS; s++)
				latency_row(&w[n++], c, &kinds[k], s,
					    kinds[k].peer_name[p],
					    &kinds[k].peer[p]);
	}
	return n;
}

/* The rows of an ns/op case: the baseline's, then one per peer, all with
 * the same library figure. Returns how many. */
static size_t timed_rows(const struct bench_case *c, void *ctx,
			 const struct bench_opts *o, struct row *w)
{
	struct bench_side peers[BENCH_MAX_PEERS];
	unsigned npeers = c->peers ? c->peers(ctx, peers) : 0, p;

	bench_measure(c, ctx, peers, npeers, o, &w->r);
	for (p = 0; p <= npeers; p++) {
		w[p].c = c;
		snprintf(w[p].name, sizeof(w[p].name), "%s", c->name);
		w[p].base_name = p ? peers[p - 1].name : c->base_name;
		w[p].stat = NULL;
		w[p].first = p == 0;
		w[p].note[0] = '\0';
		if (p) {
			w[p].r = w->r;
			w[p].r.base = w->r.peer[p - 1];
		}
	}
	return 1 + npeers;
}

/* Runs case @c into rows @w (case_rows(c) of them at most); sets *@n to
 * the rows filled. Returns 0, or -1 if library and a baseline or peer
 * disagree. */
static int run_case(const struct bench_case *c, const struct bench_opts *o,
		    struct row *w, size_t *n)
{
	struct bench_latency_kind kinds[BENCH_LATENCY_KINDS];
	void *ctx = c->setup(c);
	int err = c->check(ctx);

	*n = 0;
	if (err) {
		printf("case=%s ERROR: the library and the %s baseline or a "
		       "peer disagree\n", c->name, c->base_name);
	} else if (c->latency) {
		memset(kinds, 0, sizeof(kinds));
		*n = latency_rows(c, kinds, c->latency(ctx, o, kinds), w);
	} else {
		*n = timed_rows(c, ctx, o, w);
	}
	if (*n && c->note)
		c->note(ctx, w->note, sizeof(w->note));
	c->teardown(ctx);
	return err;
}

static void print_summary(const struct row *rows, size_t n)
{
	size_t i;

	printf("\n%-28s %12s %12s %9s  %s\n", "case", "lib ns/op",
	       "base ns/op", "speedup", "baseline");
	for (i = 0; i < n; i++)
		printf("%-28s %12.3f %12.3f %8.2fx  %s\n", rows[i].name,
		       rows[i].r.lib.median_ns, rows[i].r.base.median_ns,
		       speedup(&rows[i]), rows[i].base_name);
	printf("(read_latency_* rows: ns for one read, not per operation)\n");
	printf("\ninputs:\n");
	for (i = 0; i < n; i++)
		if (!i || rows[i].c != rows[i - 1].c)
			printf("  %-22s %s\n", rows[i].c->name,
			       rows[i].c->inputs);
}

/* ------------------------------------------------------------------------
 * Performance targets (the README's Performance section)
 * ------------------------------------------------------------------------ */

enum target_kind {
	TARGET_LIB_NS_AT_MOST,		/* lib ns/op of one case */
	TARGET_SPEEDUP_AT_LEAST,	/* base / lib of one row */
	TARGET_LIB_OVER_BASE_AT_MOST,	/* lib / base of one row */
	TARGET_LIB_RATIO_AT_MOST,	/* lib ns/op of one case over another */
	TARGET_WORST_READ_AT_MOST,	/* lib's worst of two latency rows */
	TARGET_READ_NS_AT_MOST,		/* lib's figure of one latency row */
	TARGET_READ_OVER_FLOOR_AT_MOST,	/* the same over the floor's */
	TARGET_RETRIES_AT_MOST,		/* lib's most retries in one read */
};

/* A performance target (the README's Performance section), on the row of case
 * @name whose baseline or peer is @base (NULL: the case's first row). */
struct target {
	const char *what;
	enum target_kind kind;
	const char *name;
	const char *base;
	const char *other;
	double limit;
};

static const struct target targets[] = {
	{ "UD receive burst with the header checks <= 0.5 ns/packet",
	  TARGET_LIB_NS_AT_MOST, "rx_ud_burst", NULL, NULL, 0.5 },
	{ "mixed-QP port burst >= 4x a per-packet pthread_rwlock stack",
	  TARGET_SPEEDUP_AT_LEAST, "port_rx_mixed", "rwlock_per_packet", NULL,
	  4.0 },
	{ "mixed-QP port burst >= 1.5x an rwlock taken once per burst",
	  TARGET_SPEEDUP_AT_LEAST, "port_rx_mixed", "rwlock_per_burst", NULL,
	  1.5 },
	{ "pkey_find_65536 / pkey_find_128 <= 1.5",
	  TARGET_LIB_RATIO_AT_MOST, "pkey_find_65536", NULL, "pkey_find_128",
	  1.5 },
	{ "pkey_find_128 >= 10x linear scan",
	  TARGET_SPEEDUP_AT_LEAST, "pkey_find_128", NULL, NULL, 10.0 },
	{ "gid_find_256 >= 15x linear scan",
	  TARGET_SPEEDUP_AT_LEAST, "gid_find_256", NULL, NULL, 15.0 },
	{ "gid_find_16 >= 2x linear scan",
	  TARGET_SPEEDUP_AT_LEAST, "gid_find_16", NULL, NULL, 2.0 },
	{ "cached read (1 reader) within 1.3x of liburcu QSBR",
	  TARGET_LIB_OVER_BASE_AT_MOST, "cached_read_1t", "urcu_qsbr", NULL,
	  1.3 },
	{ "cached read (1 reader) faster than liburcu memb",
	  TARGET_SPEEDUP_AT_LEAST, "cached_read_1t", "urcu_memb", NULL, 1.0 },
	{ "cached read (1 reader) faster than ck_sequence",
	  TARGET_SPEEDUP_AT_LEAST, "cached_read_1t", "ck_sequence", NULL,
	  1.0 },
	{ "cached read (1 reader) faster than rte_seqlock",
	  TARGET_SPEEDUP_AT_LEAST, "cached_read_1t", "rte_seqlock", NULL,
	  1.0 },
	{ "cached read (2 readers) >= 5x pthread_rwlock",
	  TARGET_SPEEDUP_AT_LEAST, "cached_read_2t", "pthread_rwlock", NULL,
	  5.0 },
	{ "R_Key check >= 2x a naive array check",
	  TARGET_SPEEDUP_AT_LEAST, "rkey_check", NULL, NULL, 2.0 },
	{ "R_Key check in bursts >= 2x a naive array check",
	  TARGET_SPEEDUP_AT_LEAST, "rkey_check_burst", NULL, NULL, 2.0 },
	{ "ref_check <= 1 ns",
	  TARGET_LIB_NS_AT_MOST, "ref_check", NULL, NULL, 1.0 },
	{ "worst read <= 2 us under back-to-back 65536-entry refills",
	  TARGET_WORST_READ_AT_MOST, "read_latency_max", NULL,
	  "read_latency_find_max", 2000.0 },
	{ "worst read <= 2 us under back-to-back 65536-entry refills, "
	  "not counting batches of reads the OS switched out",
	  TARGET_WORST_READ_AT_MOST, "read_latency_max_nocsw", NULL,
	  "read_latency_find_max_nocsw", 2000.0 },
	{ "read tail: p99.99 get <= 0.5 us under back-to-back refills",
	  TARGET_READ_NS_AT_MOST, "read_latency_p9999", NULL, NULL, 500.0 },
	{ "read tail: worst get not switched out <= 3x the empty timed "
	  "region's", TARGET_READ_OVER_FLOOR_AT_MOST, "read_latency_max_nocsw",
	  NULL, "read_latency_floor_max_nocsw", 3.0 },
	{ "read tail: <= 1 retry per get", TARGET_RETRIES_AT_MOST,
	  "read_latency_max", NULL, NULL, 1.0 },
};

/* The row of case @name with baseline or peer @base (NULL: its first). */
static const struct row *find_row(const struct row *rows, size_t n,
				  const char *name, const char *base)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name) &&
		    (!base || !strcmp(rows[i].base_name, base)))
			return &rows[i];
	return NULL;
}

/* The peers' gets beside the library's: their worst (the row's
 * statistic) and their 99.99th percentile. */
static void print_peer_worst(const struct row *a, const struct row *rows,
			     size_t n)
{
	const char *sep = "    peers' get";
	size_t i;

	for (i = 0; i < n; i++) {
		if (strcmp(rows[i].name, a->name) ||
		    !strcmp(rows[i].base_name, a->base_name))
			continue;
		printf("%s %s %.1f us (p99.99 %.3f us)", sep,
		       rows[i].base_name, rows[i].r.base.median_ns / 1e3,
		       rows[i].base_lat.all.p9999_ns / 1e3);
		sep = ",";
	}
	if (strcmp(sep, "    peers' get"))
		printf(": %s\n", a->stat);
}

/* The library's worst read: the get's and the find's, with the tail, the
 * rwlock's worst and the empty timed region's worst beside it. */
static void print_worst_read(const struct target *t, const struct row *a,
			     const struct row *b, const struct row *rows,
			     size_t n)
{
	const struct row *p_get = find_row(rows, n, "read_latency_p9999",
					   NULL);
	const struct row *p_find = find_row(rows, n,
					    "read_latency_find_p9999", NULL);
	const struct row *empty;
	char name[64];
	double v = a->r.lib.median_ns > b->r.lib.median_ns ?
		   a->r.lib.median_ns : b->r.lib.median_ns;
	int met = v <= t->limit;

	snprintf(name, sizeof(name), "read_latency_floor_%s", a->stat);
	empty = find_row(rows, n, name, NULL);
	printf("target %s: %s (%.3f us: get %.3f, find %.3f us over %llu + "
	       "%llu reads", t->what, met ? "MET" : "MISSED", v / 1e3,
	       a->r.lib.median_ns / 1e3, b->r.lib.median_ns / 1e3,
	       (unsigned long long)a->lib_lat.reads,
	       (unsigned long long)b->lib_lat.reads);
	if (p_get && p_find)
		printf("; p99.99 get %.3f, find %.3f us",
		       p_get->r.lib.median_ns / 1e3,
		       p_find->r.lib.median_ns / 1e3);
	printf("; %s get worst %.1f us", a->base_name,
	       a->r.base.median_ns / 1e3);
	if (empty)
		printf("; empty timed region worst %.3f us",
		       empty->r.lib.median_ns / 1e3);
	printf(")\n");
	if (empty && !strcmp(a->stat, "max"))
		printf("    reads over 2 us: get %llu, find %llu, empty timed "
		       "region %llu (the machine's share)\n",
		       (unsigned long long)a->lib_lat.over_2us,
		       (unsigned long long)b->lib_lat.over_2us,
		       (unsigned long long)empty->lib_lat.over_2us);
	print_peer_worst(a, rows, n);
}

static void print_target(const struct target *t, const struct row *rows,
			 size_t n)
{
	const struct row *a = find_row(rows, n, t->name, t->base);
	const struct row *b = t->other ? find_row(rows, n, t->other, NULL) :
			      NULL;
	double v;
	int met;

	if (!a || (t->other && !b)) {
		printf("target %s: NOT RUN (the case, or the peer's library, "
		       "is not in this run)\n", t->what);
		return;
	}
	switch (t->kind) {
	case TARGET_LIB_NS_AT_MOST:
		v = a->r.lib.median_ns;
		met = v <= t->limit;
		printf("target %s: %s (median %.3f ns = %.2f G/s; best "
		       "sample %.3f ns)\n", t->what, met ? "MET" : "MISSED",
		       v, 1.0 / v, a->r.lib.min_ns);
		break;
	case TARGET_SPEEDUP_AT_LEAST:
	case TARGET_LIB_OVER_BASE_AT_MOST:
		v = speedup(a);
		met = v >= t->limit;
		if (t->kind == TARGET_LIB_OVER_BASE_AT_MOST) {
			v = 1.0 / v;
			met = v <= t->limit;
		}
		printf("target %s: %s (%.2fx: %.3f vs %.3f ns)\n", t->what,
		       met ? "MET" : "MISSED", v, a->r.lib.median_ns,
		       a->r.base.median_ns);
		break;
	case TARGET_LIB_RATIO_AT_MOST:
		v = a->r.lib.median_ns / b->r.lib.median_ns;
		met = v <= t->limit;
		printf("target %s: %s (%.2f: %.3f vs %.3f ns)\n", t->what,
		       met ? "MET" : "MISSED", v, a->r.lib.median_ns,
		       b->r.lib.median_ns);
		break;
	case TARGET_WORST_READ_AT_MOST:
		print_worst_read(t, a, b, rows, n);
		break;
	case TARGET_READ_NS_AT_MOST:
		v = a->r.lib.median_ns;
		printf("target %s: %s (%.3f us over %llu reads)\n", t->what,
		       v <= t->limit ? "MET" : "MISSED", v / 1e3,
		       (unsigned long long)a->lib_lat.reads);
		break;
	case TARGET_READ_OVER_FLOOR_AT_MOST:
		v = a->r.lib.median_ns / b->r.lib.median_ns;
		printf("target %s: %s (%.2fx: %.3f vs %.3f us)\n", t->what,
		       v <= t->limit ? "MET" : "MISSED", v,
		       a->r.lib.median_ns / 1e3, b->r.lib.median_ns / 1e3);
		break;
	case TARGET_RETRIES_AT_MOST:
		met = a->lib_lat.max_retries <= t->limit;
		printf("target %s: %s (at most %llu retries in one read, "
		       "%lld more than the writer updates completed and %lld "
		       "more than the count's moves during it; %llu of %llu "
		       "reads retried)\n", t->what, met ? "MET" : "MISSED",
		       (unsigned long long)a->lib_lat.max_retries,
		       (long long)a->lib_lat.max_over_updates,
		       (long long)a->lib_lat.max_over_moves,
		       (unsigned long long)a->lib_lat.retried,
		       (unsigned long long)a->lib_lat.reads);
		break;
	}
}

static void print_targets(const struct row *rows, size_t n)
{
	size_t i;

	printf("\nPerformance targets:\n");
	for (i = 0; i < sizeof(targets) / sizeof(targets[0]); i++)
		print_target(&targets[i], rows, n);
}

/* ------------------------------------------------------------------------
 * JSON
 * ------------------------------------------------------------------------ */

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* A latency row's side: how many reads, and what else happened. */
static void json_latency(FILE *f, const char *side,
			 const struct bench_latency *l)
{
	unsigned i;

	fprintf(f, ", \"%s_reads\": %llu, \"%s_seconds\": %.3f, "
		"\"%s_writes\": %llu, \"%s_nocsw_reads\": %llu, "
		"\"%s_nivcsw\": %llu, \"%s_nvcsw\": %llu, "
		"\"%s_over_2us\": %llu", side,
		(unsigned long long)l->reads, side, l->seconds, side,
		(unsigned long long)l->writes, side,
		(unsigned long long)l->nocsw_reads, side,
		(unsigned long long)l->nivcsw, side,
		(unsigned long long)l->nvcsw, side,
		(unsigned long long)l->over_2us);
	if (!strcmp(side, "lib"))
		fprintf(f, ", \"lib_retried_reads\": %llu, "
			"\"lib_retries\": %llu, "
			"\"lib_max_retries_per_read\": %llu, "
			"\"lib_max_retries_over_updates\": %lld, "
			"\"lib_max_retries_over_moves\": %lld",
			(unsigned long long)l->retried,
			(unsigned long long)l->retries,
			(unsigned long long)l->max_retries,
			(long long)l->max_over_updates,
			(long long)l->max_over_moves);
	fprintf(f, ", \"%s_quantiles_ns\": [", side);
	for (i = 0; i < BENCH_QUANTILES; i++)
		fprintf(f, "%s%.1f", i ? ", " : "", l->quantile_ns[i]);
	fputc(']', f);
}

/* What an ns/op row adds: the spread, and reads/s for threaded cases. */
static void json_samples(FILE *f, const struct row *w,
			 const struct bench_opts *o)
{
	fprintf(f, ", \"lib_ns_min\": %.4f, \"lib_ns_max\": %.4f",
		w->r.lib.min_ns, w->r.lib.max_ns);
	fprintf(f, ", \"base_ns_min\": %.4f, \"base_ns_max\": %.4f",
		w->r.base.min_ns, w->r.base.max_ns);
	fprintf(f, ", \"samples\": %u", o->samples);
	if (w->c->threads)
		fprintf(f, ", \"threads\": %u, \"lib_mreads_per_s\": %.2f, "
			"\"base_mreads_per_s\": %.2f", w->c->threads,
			total_mreads(w, w->r.lib.median_ns),
			total_mreads(w, w->r.base.median_ns));
}

/* One row as a JSON object. */
static void json_row(FILE *f, const struct row *w, const struct bench_opts *o)
{
	unsigned i;

	fputs("  {\"case\": ", f);
	json_string(f, w->name);
	fprintf(f, ", \"row\": \"%s.%s\"", w->name, w->base_name);
	fprintf(f, ", \"lib_ns\": %.4f, \"base\": ", w->r.lib.median_ns);
	json_string(f, w->base_name);
	fprintf(f, ", \"base_ns\": %.4f, \"speedup\": %.3f", w->r.base.median_ns,
		speedup(w));
	if (w->stat) {
		fputs(", \"stat\": ", f);
		json_string(f, w->stat);
		fputs(", \"unit\": \"ns for one read\"", f);
		json_latency(f, "lib", &w->lib_lat);
		json_latency(f, "base", &w->base_lat);
		fputs(", \"quantiles_ppm\": [", f);
		for (i = 0; i < BENCH_QUANTILES; i++)
			fprintf(f, "%s%u", i ? ", " : "",
				(unsigned)bench_quantile_ppm[i]);
		fputc(']', f);
	} else {
		json_samples(f, w, o);
	}
	fputs(", \"inputs\": ", f);
	json_string(f, w->c->inputs);
	if (w->note[0]) {
		fputs(", \"note\": ", f);
		json_string(f, w->note);
	}
	fputc('}', f);
}

static int write_json(const char *path, const struct row *rows, size_t n,
		      const struct bench_opts *o)
{
	FILE *f = fopen(path, "w");
	size_t i;

	if (!f) {
		perror(path);
		return -1;
	}
	fputs("[\n", f);
	for (i = 0; i < n; i++) {
		json_row(f, &rows[i], o);
		fputs(i + 1 < n ? ",\n" : "\n", f);
	}
	fputs("]\n", f);
	return fclose(f);
}

/* ------------------------------------------------------------------------
 * main
 * ------------------------------------------------------------------------ */

static void usage(void)
{
	fprintf(stderr, "usage: ibk-bench [--samples N] [--sample-ms MS] "
		"[--json PATH] [CASE...]\n       ibk-bench --list\n");
	exit(2);
}

static int is_selected(const char *name, char **names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return 1;
	return n == 0;
}

int main(int argc, char **argv)
{
	struct bench_opts opts = { 11, 30e6 };
	const char *json = NULL;
	struct row *rows;
	size_t i, n = 0, max_rows = 0, got;
	int errors = 0, a;

	for (a = 1; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "--list")) {
			for (i = 0; i < bench_case_count(); i++)
				printf("%s\n", bench_case_at(i)->name);
			return 0;
		} else if (!strcmp(argv[a], "--samples") && a + 1 < argc) {
			opts.samples = (unsigned)atoi(argv[++a]);
		} else if (!strcmp(argv[a], "--sample-ms") && a + 1 < argc) {
			opts.sample_ns = atof(argv[++a]) * 1e6;
		} else if (!strcmp(argv[a], "--json") && a + 1 < argc) {
			json = argv[++a];
		} else {
			usage();
		}
	}
	if (opts.samples < 1 || opts.sample_ns <= 0)
		usage();

	print_machine();
	printf("%u samples of ~%.0f ms per side, lib and base alternating; "
	       "figures are medians\n\n", opts.samples, opts.sample_ns / 1e6);
	for (i = 0; i < bench_case_count(); i++)
		max_rows += case_rows(bench_case_at(i));
	rows = bench_alloc(max_rows * sizeof(*rows));
	for (i = 0; i < bench_case_count(); i++) {
		const struct bench_case *c = bench_case_at(i);

		if (!is_selected(c->name, argv + a, argc - a))
			continue;
		if (run_case(c, &opts, &rows[n], &got))
			errors++;
		for (; got; got--)
			print_row(&rows[n++]);
	}
	print_summary(rows, n);
	print_targets(rows, n);
	if (json && write_json(json, rows, n, &opts))
		errors++;
	free(rows);
	return errors ? 1 : 0;
}
