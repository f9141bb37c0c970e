/* SPDX-License-Identifier: MIT */
/*
 * The program every consumer project of tests/consumers/run builds, however
 * it found the headers: it must compile against both and get the
 * partitioning rule of IBA 10.9 right, alone and through a cached table.
 * Exit 0 and "ok" when every check holds.
 */
#include <stdio.h>

#include "ib_tables.h"	/* includes ib_keys.h */

#define CAPACITY 4u

static int failures;

static void check(int cond, const char *what)
{
	if (!cond) {
		printf("FAIL: %s\n", what);
		failures++;
	}
}

int main(void)
{
	static struct ibk_pkey_cell cells[IBK_PKEY_CELLS(CAPACITY)];
	static struct ibk_hash_slot slots[IBK_PKEY_HASH_SLOTS(CAPACITY)];
	static const ibk_pkey_t device[] = { 0xffff, 0x8001 };
	struct ibk_pkey_table t;
	ibk_pkey_t found = 0;

	/* IBA 10.9.3: same base and at least one full member. */
	check(ibk_pkey_match(0x8001, 0x0001), "full 0x8001 ~ limited 0x0001");
	check(!ibk_pkey_match(0x0001, 0x0001), "two limited members do not talk");
	check(!ibk_pkey_match(0x8002, 0x8001), "different partitions do not talk");

	/* A table answers for the port only once ACTIVE and refilled. */
	check(ibk_pkey_table_init(&t, cells, CAPACITY, slots,
				  IBK_PKEY_HASH_SLOTS(CAPACITY)) == IBK_OK, "init");
	check(ibk_pkey_table_find(&t, 0x0001, NULL) == IBK_ENOTREADY,
	      "DOWN port: contents undefined");
	check(ibk_pkey_table_set_state(&t, IBK_PORT_ACTIVE) == IBK_OK, "ACTIVE");
	check(ibk_pkey_table_find(&t, 0x0001, NULL) == IBK_ESTALE,
	      "no refill yet");
	check(ibk_pkey_table_refill(&t, device, 2,
				    ibk_pkey_table_refill_ticket(&t)) == IBK_OK,
	      "refill");
	check(ibk_pkey_table_find(&t, 0x0001, &found) == 1 && found == 0x8001,
	      "limited 0x0001 finds its partition's full key at index 1");
	check(ibk_pkey_table_find(&t, 0x0002, NULL) == IBK_ENOENT,
	      "partition 0x0002 is not on the port");

	if (!failures)
		printf("ok\n");
	return failures ? 1 : 0;
}
