/* SPDX-License-Identifier: MIT */
/*
 * tap.h - the smallest Test Anything Protocol emitter the suites need.
 *
 * Each tap_ok() is one numbered TAP line; tap_done() prints the plan and
 * turns the tally into the process exit status, so meson's TAP parser and a
 * plain exit-code runner agree. A failing check may add detail with tap_diag().
 */
#ifndef IBKEYS_TESTS_TAP_H
#define IBKEYS_TESTS_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

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

/* A "# ..." diagnostic line, shown by meson beside a failure. */
static inline void __attribute__((format(printf, 1, 2)))
tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* Print the trailing plan; the exit status is 0 only if every check passed. */
static inline int tap_done(void)
{
	printf("1..%u\n", tap__count);
	return tap__failed ? 1 : 0;
}

#endif /* IBKEYS_TESTS_TAP_H */
