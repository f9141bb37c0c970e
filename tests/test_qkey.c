/* SPDX-License-Identifier: MIT */
/*
 * test_qkey.c - Q_Key rules of ib_keys.h: send-side selection, receive
 * match, who may set a controlled key, and the five ranges, at every range
 * edge and on random keys against a model written from the range table.
 */
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "ib_keys.h"
#include "rng.h"

#define SEED		0x243f6a8885a308d3ull	/* of the random cases */

/* The ranges as the Q_Key rules list them, first and last value each. */
static const struct {
	uint32_t first, last;
	enum ibk_qkey_class cls;
	bool controlled;
} ranges[] = {
	{ 0x00000000u, 0x7fffffffu, IBK_QKEY_CLASS_FREE, false },
	{ 0x80000000u, 0x8000ffffu, IBK_QKEY_CLASS_APP_CONTROLLED, true },
	{ 0x80010000u, 0x80010000u, IBK_QKEY_CLASS_GSI, true },
	{ 0x80010001u, 0x8fffffffu, IBK_QKEY_CLASS_RESERVED, true },
	{ 0x90000000u, 0xffffffffu, IBK_QKEY_CLASS_UNASSIGNED, true },
};
#define NRANGES (sizeof(ranges) / sizeof(ranges[0]))

static size_t model_range(uint32_t qkey)
{
	size_t i;

	for (i = 0; i < NRANGES; i++)
		if (qkey >= ranges[i].first && qkey <= ranges[i].last)
			return i;
	return NRANGES;	/* unreachable: the table covers all 2^32 keys */
}

/* Check every rule for one key; return the number of rules it breaks. */
static unsigned check_key(uint32_t qkey, bool verbose)
{
	size_t r = model_range(qkey);
	uint32_t other = qkey ^ 0x5a5a5a5au;
	unsigned bad = 0;

	if (r == NRANGES)
		return 1;
	/* MSB set is exactly "controlled" */
	bad += ibk_qkey_is_controlled(qkey) != ranges[r].controlled;
	bad += ibk_qkey_classify(qkey) != ranges[r].cls;
	/* send: a controlled WR Q_Key is replaced by the QP context's */
	bad += ibk_qkey_select(qkey, other) !=
	       (ranges[r].controlled ? other : qkey);
	/* receive: equality only */
	bad += !ibk_qkey_match(qkey, qkey);
	bad += ibk_qkey_match(qkey, other) || ibk_qkey_match(other, qkey);
	bad += ibk_qkey_match(qkey, qkey ^ 1u) ||
	       ibk_qkey_match(qkey, qkey ^ 0x80000000u);
	/* only a privileged caller may set a controlled key */
	bad += !ibk_qkey_may_set(qkey, true);
	bad += ibk_qkey_may_set(qkey, false) != !ranges[r].controlled;
	if (bad && verbose)
		tap_diag("Q_Key 0x%08lx breaks %u rule(s) (class %d, model %d)",
			 (unsigned long)qkey, bad, (int)ibk_qkey_classify(qkey),
			 (int)ranges[r].cls);
	return bad;
}

static void test_edges(void)
{
	static const uint32_t edges[] = {
		0x00000000u, 0x00000001u, 0x7fffffffu, 0x80000000u,
		0x80000001u, 0x8000fffeu, 0x8000ffffu, 0x80010000u,
		0x80010001u, 0x8ffffffeu, 0x8fffffffu, 0x90000000u,
		0x90000001u, 0xfffffffeu, 0xffffffffu, IBK_QKEY_IPOIB,
	};
	size_t i;

	for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		tap_ok(check_key(edges[i], true) == 0,
		       "Q_Key 0x%08lx: class, controlled, select, match, may_set",
		       (unsigned long)edges[i]);

	tap_ok(ibk_qkey_classify(0x7fffffffu) == IBK_QKEY_CLASS_FREE &&
	       ibk_qkey_classify(0x80000000u) == IBK_QKEY_CLASS_APP_CONTROLLED &&
	       ibk_qkey_classify(0x8000ffffu) == IBK_QKEY_CLASS_APP_CONTROLLED &&
	       ibk_qkey_classify(0x80010000u) == IBK_QKEY_CLASS_GSI &&
	       ibk_qkey_classify(0x80010001u) == IBK_QKEY_CLASS_RESERVED &&
	       ibk_qkey_classify(0x8fffffffu) == IBK_QKEY_CLASS_RESERVED &&
	       ibk_qkey_classify(0x90000000u) == IBK_QKEY_CLASS_UNASSIGNED &&
	       ibk_qkey_classify(0xffffffffu) == IBK_QKEY_CLASS_UNASSIGNED &&
	       ibk_qkey_classify(0) == IBK_QKEY_CLASS_FREE,
	       "range edges fall on the documented side");
	tap_ok(IBK_QKEY_GSI == 0x80010000u && IBK_QKEY_IPOIB == 0x00000b1bu &&
	       IBK_QKEY_CONTROLLED == 0x80000000u,
	       "well-known Q_Key constants");
	tap_ok(ibk_qkey_is_controlled(IBK_QKEY_GSI) &&
	       !ibk_qkey_is_controlled(IBK_QKEY_IPOIB),
	       "the GSI key is controlled, the IPoIB key is not");
	tap_ok(ibk_qkey_select(0x80000000u, 0x11111111u) == 0x11111111u &&
	       ibk_qkey_select(0x7fffffffu, 0x11111111u) == 0x7fffffffu &&
	       ibk_qkey_select(IBK_QKEY_GSI, 0x8000abcdu) == 0x8000abcdu,
	       "select: the WR's MSB decides between QP context and WR key");
}

static void test_random(void)
{
	unsigned bad = 0, shown = 0;
	unsigned long i;

	for (i = 0; i < 4000000ul; i++) {
		uint64_t r = test_rng64();
		uint32_t qkey = (uint32_t)r;
		unsigned b;

		/* half the draws land near the top byte boundaries */
		if (r >> 63)
			qkey = (qkey & 0xf000ffffu) | (uint32_t)((r >> 32) & 1) << 16;
		b = check_key(qkey, shown < 5);
		shown += b != 0;
		bad += b;
	}
	tap_ok(bad == 0, "4 million random Q_Keys follow the rules (%u broken)",
	       bad);
}

static void test_names(void)
{
	static const enum ibk_qkey_class all[] = {
		IBK_QKEY_CLASS_FREE, IBK_QKEY_CLASS_APP_CONTROLLED,
		IBK_QKEY_CLASS_RESERVED, IBK_QKEY_CLASS_GSI,
		IBK_QKEY_CLASS_UNASSIGNED,
	};
	const size_t n = sizeof(all) / sizeof(all[0]);
	bool ok = true;
	size_t i, j;

	for (i = 0; i < n; i++) {
		const char *a = ibk_qkey_class_name(all[i]);

		if (!a || !*a)
			ok = false;
		for (j = 0; ok && j < i; j++)
			if (strcmp(a, ibk_qkey_class_name(all[j])) == 0)
				ok = false;
	}
	tap_ok(ok, "class names are non-empty and distinct");
	tap_ok(strcmp(ibk_qkey_class_name((enum ibk_qkey_class)99), "unknown") == 0,
	       "an out-of-range class is named \"unknown\"");
}

int main(void)
{
	test_rng_seed(SEED);
	test_edges();
	test_random();
	test_names();
	return tap_done();
}
