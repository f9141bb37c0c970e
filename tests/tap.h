/* SPDX-License-Identifier: MIT */
/*
 * tap.h - the smallest Test Anything Protocol emitter the suites need.
 *
 * Each tap_ok() is one numbered TAP line; tap_done() prints the plan and
 * turns the tally into the process exit status, so meson's TAP parser and a
 * plain exit-code runner agree. A failing check may add detail with
 * tap_diag(), or with tap_diag_first() for the first few of many cases.
 */
#ifndef IBKEYS_TESTS_TAP_H
#define IBKEYS_TESTS_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned tap__count;
static unsigned tap__failed;

/* Print one "ok"/"not ok" line named by a printf format; return @cond. */
static inline bool __attribute__((format(printf, 2, 3)))
tap_ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	tap__count++;
	if (!cond)
		tap__failed++;
	printf("%sok %u - ", cond ? "" : "not ", tap__count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return cond;
}

/* How many failing cases of one check (or program) show their detail. */
#define TAP_MAX_DIAG	5

/* tap_diag() with a va_list. */
static inline void tap_vdiag(const char *fmt, va_list ap)
{
	fputs("# ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
}

/* A "# ..." diagnostic line, shown by meson beside a failure. */
static inline void __attribute__((format(printf, 1, 2)))
tap_diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vdiag(fmt, ap);
	va_end(ap);
}

/* A failing case's "# ..." line, printed only while *@shown, the caller's
 * count for one check or one program, is below TAP_MAX_DIAG: the first
 * few cases say what failed, the check's tally how many did. */
static inline void __attribute__((format(printf, 2, 3)))
tap_diag_first(unsigned long *shown, const char *fmt, ...)
{
	va_list ap;

	if ((*shown)++ >= TAP_MAX_DIAG)
		return;
	va_start(ap, fmt);
	tap_vdiag(fmt, ap);
	va_end(ap);
}

/* Print the trailing plan; the exit status is 0 only if every check passed. */
static inline int tap_done(void)
{
	printf("1..%u\n", tap__count);
	return tap__failed ? 1 : 0;
}

/* Ends the program with TAP's "1..0 # SKIP" plan when it was built for a
 * vector path (the -mavx2 builds of the SIMD tests) that this CPU cannot
 * run; else returns and the tests go on. */
static inline void tap_skip_unless_cpu_runs_build(void)
{
#if defined(__AVX2__) && !defined(IBK_NO_SIMD) && \
    (defined(__GNUC__) || defined(__clang__))
	if (!__builtin_cpu_supports("avx2")) {
		printf("1..0 # SKIP vector path avx2: this CPU has no AVX2\n");
		exit(0);
	}
#endif
}

#endif /* IBKEYS_TESTS_TAP_H */
