/* SPDX-License-Identifier: MIT */
/*
 * ibk-bench - times every case, library beside baseline in the same run.
 *
 *   ibk-bench [--samples N] [--sample-ms MS] [--json PATH] [CASE...]
 *   ibk-bench --list
 *
 * Prints the machine, one `case=... lib_ns=... base=... base_ns=...` line
 * per case (median ns per operation over N samples of about MS each, lower
 * is better; for the threaded cases ns per read per thread), a summary
 * with speedups, and a MET/MISSED line per DESIGN.md performance target.
 * --json writes the rows as a JSON list. Exits 1 if a case's library and
 * baseline disagree on its inputs (its figures would compare nothing).
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct row {
	const struct bench_case *c;
	struct bench_result r;
	char note[192];
};

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

static void print_row(const struct row *w)
{
	printf("case=%s lib_ns=%.3f base=%s base_ns=%.3f\n", w->c->name,
	       w->r.lib.median_ns, w->c->base_name, w->r.base.median_ns);
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

static int run_case(const struct bench_case *c, const struct bench_opts *o,
		    struct row *w)
{
	void *ctx = c->setup(c);
	int err = c->check(ctx);

	w->c = c;
	w->note[0] = '\0';
	if (err) {
		printf("case=%s ERROR: library and %s baseline disagree\n",
		       c->name, c->base_name);
	} else {
		bench_measure(c, ctx, o, &w->r);
		if (c->note)
			c->note(ctx, w->note, sizeof(w->note));
	}
	c->teardown(ctx);
	return err;
}

static void print_summary(const struct row *rows, size_t n)
{
	size_t i;

	printf("\n%-24s %12s %12s %9s  %s\n", "case", "lib ns/op",
	       "base ns/op", "speedup", "baseline");
	for (i = 0; i < n; i++)
		printf("%-24s %12.3f %12.3f %8.2fx  %s\n", rows[i].c->name,
		       rows[i].r.lib.median_ns, rows[i].r.base.median_ns,
		       speedup(&rows[i]), rows[i].c->base_name);
	printf("\ninputs:\n");
	for (i = 0; i < n; i++)
		printf("  %-22s %s\n", rows[i].c->name, rows[i].c->inputs);
}

/* ------------------------------------------------------------------------
 * DESIGN.md performance targets
 * ------------------------------------------------------------------------ */

enum target_kind {
	TARGET_LIB_NS_AT_MOST,		/* lib ns/op of one case */
	TARGET_SPEEDUP_AT_LEAST,	/* base / lib of one case */
	TARGET_LIB_RATIO_AT_MOST,	/* lib ns/op of one case over another */
};

struct target {
	const char *what;
	enum target_kind kind;
	const char *name;
	const char *other;
	double limit;
};

static const struct target targets[] = {
	{ "UD receive burst >= 1 G packets/s (lib ns/packet <= 1.0)",
	  TARGET_LIB_NS_AT_MOST, "rx_ud_burst", NULL, 1.0 },
	{ "pkey_find_65536 / pkey_find_128 <= 1.5",
	  TARGET_LIB_RATIO_AT_MOST, "pkey_find_65536", "pkey_find_128", 1.5 },
	{ "pkey_find_128 >= 10x linear scan",
	  TARGET_SPEEDUP_AT_LEAST, "pkey_find_128", NULL, 10.0 },
	{ "gid_find_256 >= 10x linear scan",
	  TARGET_SPEEDUP_AT_LEAST, "gid_find_256", NULL, 10.0 },
	{ "cached_read_2t >= 5x pthread_rwlock read throughput",
	  TARGET_SPEEDUP_AT_LEAST, "cached_read_2t", NULL, 5.0 },
	{ "ref_check <= 1 ns",
	  TARGET_LIB_NS_AT_MOST, "ref_check", NULL, 1.0 },
};

static const struct row *find_row(const struct row *rows, size_t n,
				  const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(rows[i].c->name, name))
			return &rows[i];
	return NULL;
}

static void print_target(const struct target *t, const struct row *rows,
			 size_t n)
{
	const struct row *a = find_row(rows, n, t->name);
	const struct row *b = t->other ? find_row(rows, n, t->other) : NULL;
	double v;
	int met;

	if (!a || (t->other && !b)) {
		printf("target %s: NOT RUN\n", t->what);
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
		v = speedup(a);
		met = v >= t->limit;
		printf("target %s: %s (%.1fx: %.3f vs %.3f ns)\n", t->what,
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
	}
}

static void print_targets(const struct row *rows, size_t n)
{
	size_t i;

	printf("\nDESIGN.md performance targets:\n");
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

static void json_row(FILE *f, const struct row *w, const struct bench_opts *o)
{
	fputs("  {\"case\": ", f);
	json_string(f, w->c->name);
	fprintf(f, ", \"lib_ns\": %.4f, \"base\": ", w->r.lib.median_ns);
	json_string(f, w->c->base_name);
	fprintf(f, ", \"base_ns\": %.4f, \"speedup\": %.3f", w->r.base.median_ns,
		speedup(w));
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
	size_t i, n = 0;
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
	rows = bench_alloc(bench_case_count() * sizeof(*rows));
	for (i = 0; i < bench_case_count(); i++) {
		const struct bench_case *c = bench_case_at(i);

		if (!is_selected(c->name, argv + a, argc - a))
			continue;
		if (run_case(c, &opts, &rows[n])) {
			errors++;
			continue;
		}
		print_row(&rows[n++]);
	}
	print_summary(rows, n);
	print_targets(rows, n);
	if (json && write_json(json, rows, n, &opts))
		errors++;
	free(rows);
	return errors ? 1 : 0;
}
