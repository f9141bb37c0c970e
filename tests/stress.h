/* SPDX-License-Identifier: MIT */
/*
 * stress.h - the frame the torn-read stress tests share: READERS reader
 * threads and one writer paced to about one step per READS_PER_STEP reads,
 * each step a closed-form function of its number g, so that a reader can
 * tell which published step a read saw from the latch count.
 *
 * Define READERS, READS_PER_STEP, MIN_UPDATES and MAX_DIAG before
 * including it, after ib_tables.h.
 */
#ifndef IBK_TESTS_STRESS_H
#define IBK_TESTS_STRESS_H

#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static atomic_int readers_running;
static atomic_int torn_diags;

/* each reader's read count, published now and then for the writer */
static struct {
	_Alignas(64) atomic_ulong reads;
} progress[READERS];

/* Reader @id has done @reads reads: tells the writer every 256. */
static inline void stress_reader_progress(int id, unsigned long reads)
{
	if (reads % 256 == 0)
		atomic_store_explicit(&progress[id].reads, reads,
				      memory_order_relaxed);
}

static inline unsigned long stress_reads_so_far(void)
{
	unsigned long n = 0;
	int k;

	for (k = 0; k < READERS; k++)
		n += atomic_load_explicit(&progress[k].reads,
					  memory_order_relaxed);
	return n;
}

/* Publishes step after step by @publish until every reader is done and
 * MIN_UPDATES steps are out. Paced to about one step per READS_PER_STEP
 * reads, yielding the CPU when ahead, so that the run has one shape on 2
 * cores and under qemu, and no core is left to a writer nobody reads. */
static inline void stress_write_paced(void (*publish)(uint32_t g))
{
	uint32_t g = 0;

	while (atomic_load(&readers_running) > 0 || g < MIN_UPDATES) {
		if (atomic_load(&readers_running) > 0 &&
		    (unsigned long)g * READS_PER_STEP >
		    stress_reads_so_far() + 4096) {
			sched_yield();
			continue;
		}
		publish(++g);
	}
}

/* The count of latch @l now. */
static inline uint32_t stress_count(const struct ibk_latch *l)
{
	return atomic_load_explicit(&l->count, memory_order_acquire);
}

/* How far the count moved from @from to @c: at the wrap it steps over 0
 * and 1 (0xfffffffe is followed by 2), two counts no step stands for. The
 * runs are far shorter than 2^31 steps, so a count below @from is past
 * the wrap. */
static inline uint32_t stress_count_moved(uint32_t c, uint32_t from)
{
	return c - from - (c < from ? 2u : 0u);
}

/* The step published at count @c (the last one before, if c is odd), step
 * 0 having been published at count @gen0. */
static inline uint32_t stress_step_at(uint32_t c, uint32_t gen0)
{
	return stress_count_moved(c, gen0) / 2;
}

/* Counts a torn read in *@torn and prints the first MAX_DIAG of them;
 * torn(st, ...) for a reader whose stats have a member torn. */
static inline void stress_torn(unsigned long *torn, const char *fmt, ...)
{
	va_list ap;

	++*torn;
	if (atomic_fetch_add(&torn_diags, 1) < MAX_DIAG) {
		fputs("# torn: ", stdout);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		putchar('\n');
	}
}

#define torn(st, ...) stress_torn(&(st)->torn, __VA_ARGS__)

static inline double stress_now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif /* IBK_TESTS_STRESS_H */
