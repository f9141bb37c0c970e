/* SPDX-License-Identifier: MIT */
/*
 * tables_latch.c - EVA harness of ib_tables.h's latch and saturating
 * counters: any count, a lock word that another writer may hold, and the
 * reader's and the writer's calls in any order a bounded loop picks (EVA
 * runs one thread: atomics_plain.h; a writer that finds the lock held
 * spins for ever here, as it would until the other writer ends).
 */
#include "harness.h"
#define IBK_ATOMICS_HEADER "atomics_plain.h"
#include "ib_tables.h"

int main(void)
{
	struct ibk_latch l;
	struct ibk_counter16 c;
	uint32_t start;
	int step;

	ibk_latch_init(&l, any_u32());
	l.writer = (uint32_t)Frama_C_interval(0, 1);	/* another writer */
	UNKNOWN(c);
	start = ibk_latch_read_begin(&l);
	/*@ loop unroll 8; */
	for (step = 0; step < 8; step++) {
		switch (Frama_C_interval(0, 9)) {
		case 0: start = ibk_latch_read_begin(&l); break;
		case 1: (void)ibk_latch_copy(start); break;
		case 2: (void)ibk_latch_read_retry(&l, start); break;
		case 3:
			if (ibk_latch_write_try_begin(&l) == IBK_OK) {
				ibk_latch_write_switch(&l);
				ibk_latch_write_end(&l);
			}
			break;
		case 4:
			ibk_latch_write_begin(&l);
			ibk_latch_write_switch(&l);
			ibk_latch_write_end(&l);
			break;
		case 5: ibk_counter16_add(&c, any_u32()); break;
		case 6: ibk_counter16_inc(&c); break;
		case 7: (void)ibk_counter16_read(&c); break;
		case 8: (void)ibk_counter16_reset(&c); break;
		default: ibk_latch_init(&l, any_u32()); break;
		}
	}
	return 0;
}
