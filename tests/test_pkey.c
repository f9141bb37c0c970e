/* SPDX-License-Identifier: MIT */
/*
 * test_pkey.c - P_Key rules of ib_keys.h against the partitioning rule
 * (IBA 10.9) written out independently, over every pair of 16-bit keys.
 */
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "ib_keys.h"
#include "rng.h"

#define SEED		0x9e3779b97f4a7c15ull	/* of the random cases */

/*
 * The rule as the partitioning text states it, on decoded fields: the key
 * portions (low 15 bits) are equal and not the invalid value 0, and at least
 * one of the two membership bits (the MSB) says "full".
 */
static bool model_match(unsigned a, unsigned b)
{
	unsigned a_key = a % 32768, b_key = b % 32768;
	bool a_full = a >= 32768, b_full = b >= 32768;

	if (a_key == 0 || b_key == 0)
		return false;
	if (a_key != b_key)
		return false;
	if (!a_full && !b_full)
		return false;
	return true;
}

/*
 * The same rule stated as a peer list: the keys that @a may talk to. None
 * for an invalid key; the full member of its partition always; the limited
 * member too when @a itself is full.
 */
static unsigned model_peers(unsigned a, unsigned peers[2])
{
	unsigned key = a % 32768;
	unsigned n = 0;

	if (key == 0)
		return 0;
	peers[n++] = key + 32768;
	if (a >= 32768)
		peers[n++] = key;
	return n;
}

/*
 * Pairs (a, b), over all b, where ibk_pkey_match disagrees with the peer
 * list: the matches it reports outside the list plus the listed peers it
 * misses. Counting all matches of the row keeps the 2^32-pair loop to one
 * library call and one add per pair (unrolled by 4 for the emulated CI runs).
 */
static unsigned row_mismatches(unsigned a)
{
	const ibk_pkey_t k = (ibk_pkey_t)a;
	unsigned peers[2];
	unsigned n = model_peers(a, peers);
	unsigned ones = 0, hits = 0;
	unsigned b, i;

	for (b = 0; b < 65536; b += 4)
		ones += ibk_pkey_match(k, (ibk_pkey_t)b) +
			ibk_pkey_match(k, (ibk_pkey_t)(b + 1)) +
			ibk_pkey_match(k, (ibk_pkey_t)(b + 2)) +
			ibk_pkey_match(k, (ibk_pkey_t)(b + 3));
	for (i = 0; i < n; i++)
		hits += ibk_pkey_match(k, (ibk_pkey_t)peers[i]);
	return (ones - hits) + (n - hits);
}

/* Print the first disagreements of row @a, up to 5 in all. */
static void show_row(unsigned a, unsigned *shown)
{
	unsigned b;

	for (b = 0; *shown < 5 && b < 65536; b++) {
		bool got = ibk_pkey_match((ibk_pkey_t)a, (ibk_pkey_t)b);

		if (got != model_match(a, b)) {
			tap_diag("match(0x%04x, 0x%04x) = %d, rule says %d",
				 a, b, got, !got);
			++*shown;
		}
	}
}

static void test_exhaustive(void)
{
	uint64_t bad = 0;
	unsigned shown = 0;
	unsigned a;

	for (a = 0; a < 65536; a++) {
		unsigned row = row_mismatches(a);

		bad += row;
		if (row)
			show_row(a, &shown);
	}
	tap_ok(bad == 0,
	       "ibk_pkey_match agrees with the rule on all 2^32 pairs (%llu mismatches)",
	       (unsigned long long)bad);
}

/*
 * The two models state one rule: check that they agree on every key and
 * both members of its partition. (Keys of another partition are never in
 * the peer list, and the branchy model rejects them on the base compare.)
 */
static void test_models_agree(void)
{
	unsigned bad = 0;
	unsigned a, i;

	for (a = 0; a < 65536; a++) {
		unsigned peers[2];
		unsigned n = model_peers(a, peers);
		unsigned cands[2] = { (a % 32768) + 32768, a % 32768 };

		for (i = 0; i < 2; i++) {
			bool listed = (n > 0 && peers[0] == cands[i]) ||
				      (n > 1 && peers[1] == cands[i]);

			bad += listed != model_match(a, cands[i]);
		}
	}
	tap_ok(bad == 0, "the branchy model and the peer-list model agree (%u bad)",
	       bad);
}

static void test_seed_example(void)
{
	const ibk_pkey_t qpa = 0x8001, qpb = 0x0001, qpc = 0x0001, qpd = 0x8002;

	tap_ok(ibk_pkey_match(qpa, qpb) && ibk_pkey_match(qpb, qpa),
	       "QPA 0x8001 and QPB 0x0001 communicate (QPA is full)");
	tap_ok(ibk_pkey_match(qpa, qpc) && ibk_pkey_match(qpc, qpa),
	       "QPA 0x8001 and QPC 0x0001 communicate (QPA is full)");
	tap_ok(!ibk_pkey_match(qpb, qpc) && !ibk_pkey_match(qpc, qpb),
	       "QPB and QPC, both limited in partition 1, do not");
	tap_ok(!ibk_pkey_match(qpd, qpa) && !ibk_pkey_match(qpd, qpb) &&
	       !ibk_pkey_match(qpd, qpc) && !ibk_pkey_match(qpa, qpd) &&
	       !ibk_pkey_match(qpb, qpd) && !ibk_pkey_match(qpc, qpd),
	       "QPD 0x8002 talks to none of them (other partition)");
	tap_ok(ibk_pkey_match(qpd, qpd) && ibk_pkey_match(qpa, qpa),
	       "a full member matches its own key");
}

static void test_invalid(void)
{
	unsigned hits = 0;
	unsigned k;

	for (k = 0; k < 65536; k++)
		hits += ibk_pkey_match(0x0000, (ibk_pkey_t)k) +
			ibk_pkey_match(0x8000, (ibk_pkey_t)k) +
			ibk_pkey_match((ibk_pkey_t)k, 0x0000) +
			ibk_pkey_match((ibk_pkey_t)k, 0x8000);
	tap_ok(hits == 0, "invalid keys 0x0000 and 0x8000 match no key (%u hits)",
	       hits);
	tap_ok(!ibk_pkey_match(0x8000, 0x8000) && !ibk_pkey_match(0, 0) &&
	       !ibk_pkey_match(IBK_PKEY_INVALID, IBK_PKEY_INVALID),
	       "an invalid key does not match itself");
	tap_ok(!ibk_pkey_is_valid(0x0000) && !ibk_pkey_is_valid(0x8000) &&
	       ibk_pkey_is_valid(0x0001) && ibk_pkey_is_valid(0x8001) &&
	       ibk_pkey_is_valid(IBK_PKEY_DEFAULT) &&
	       ibk_pkey_is_valid(IBK_PKEY_DEFAULT_LIMITED),
	       "is_valid: false only for base 0");
}

static void test_defaults(void)
{
	tap_ok(IBK_PKEY_DEFAULT == 0xffff && IBK_PKEY_DEFAULT_LIMITED == 0x7fff &&
	       IBK_PKEY_FULL_MEMBER == 0x8000 && IBK_PKEY_BASE_MASK == 0x7fff &&
	       IBK_PKEY_INVALID == 0,
	       "P_Key constants have the IBA values");
	tap_ok(ibk_pkey_match(IBK_PKEY_DEFAULT, IBK_PKEY_DEFAULT_LIMITED) &&
	       ibk_pkey_match(IBK_PKEY_DEFAULT, IBK_PKEY_DEFAULT) &&
	       !ibk_pkey_match(IBK_PKEY_DEFAULT_LIMITED,
			       IBK_PKEY_DEFAULT_LIMITED),
	       "default partition: full~limited, full~full, not limited~limited");
}

static void test_fields(void)
{
	unsigned bad_make = 0, bad_split = 0, bad_conv = 0, bad_valid = 0;
	unsigned k;

	for (k = 0; k < 65536; k++) {
		unsigned base = k % 32768;
		bool full = k >= 32768;

		/* make() ignores bit 15 of its base argument */
		if (ibk_pkey_make((uint16_t)k, full) != base + 32768u * full ||
		    ibk_pkey_make((uint16_t)base, false) != base ||
		    ibk_pkey_make((uint16_t)(base + 32768), true) != base + 32768)
			bad_make++;
		if (ibk_pkey_base((ibk_pkey_t)k) != base ||
		    ibk_pkey_is_full((ibk_pkey_t)k) != full)
			bad_split++;
		if (ibk_pkey_to_full((ibk_pkey_t)k) != (full ? k : k + 32768) ||
		    ibk_pkey_to_limited((ibk_pkey_t)k) != (full ? k - 32768 : k))
			bad_conv++;
		if (ibk_pkey_is_valid((ibk_pkey_t)k) != (base != 0))
			bad_valid++;
	}
	tap_ok(bad_make == 0, "ibk_pkey_make for every base and membership (%u bad)",
	       bad_make);
	tap_ok(bad_split == 0, "ibk_pkey_base / is_full for every key (%u bad)",
	       bad_split);
	tap_ok(bad_conv == 0, "ibk_pkey_to_full / to_limited for every key (%u bad)",
	       bad_conv);
	tap_ok(bad_valid == 0, "ibk_pkey_is_valid for every key (%u bad)",
	       bad_valid);
}

/* A key that is often related to @qp, so matches and near-misses abound. */
static ibk_pkey_t related_key(ibk_pkey_t qp)
{
	uint64_t r = test_rng64();

	switch (r % 5) {
	case 0:
		return qp;
	case 1:
		return (ibk_pkey_t)(qp ^ 0x8000);
	case 2:
		return (ibk_pkey_t)(qp ^ (1u << (r >> 8) % 15));
	case 3:
		return (ibk_pkey_t)((r >> 16) & 0x8000);	/* invalid */
	default:
		return (ibk_pkey_t)(r >> 32);
	}
}

static void test_burst(void)
{
	static const ibk_pkey_t qps[] = {
		0x8001, 0x0001, 0xffff, 0x7fff, 0x0000, 0x8000, 0x1234, 0xc321,
	};
	ibk_pkey_t keys[68];
	uint8_t match[68 + 8];
	unsigned bad_len = 0, bad_rand = 0, trial;
	size_t q, n, i;

	for (q = 0; q < sizeof(qps) / sizeof(qps[0]); q++) {
		for (n = 0; n <= 67; n++) {
			size_t want = 0, got;

			for (i = 0; i < n; i++)
				keys[i] = related_key(qps[q]);
			memset(match, 0xee, sizeof(match));
			got = ibk_pkey_match_burst(qps[q], keys, n, match);
			for (i = 0; i < n; i++) {
				bool m = ibk_pkey_match(qps[q], keys[i]);

				want += m;
				if (match[i] != m)
					bad_len++;
			}
			for (i = n; i < sizeof(match); i++)
				if (match[i] != 0xee)
					bad_len++;
			if (got != want)
				bad_len++;
		}
	}
	tap_ok(bad_len == 0,
	       "match_burst == per-pair match for lengths 0..67, no write past n (%u bad)",
	       bad_len);

	for (trial = 0; trial < 2000; trial++) {
		ibk_pkey_t qp = trial & 1 ? (ibk_pkey_t)test_rng64()
					    : qps[trial % 8];
		size_t want = 0, got;

		n = test_rng_below(69);
		for (i = 0; i < n; i++)
			keys[i] = related_key(qp);
		got = ibk_pkey_match_burst(qp, keys, n, match);
		for (i = 0; i < n; i++) {
			bool m = model_match(qp, keys[i]);

			want += m;
			bad_rand += match[i] != m;
		}
		bad_rand += got != want;
	}
	tap_ok(bad_rand == 0,
	       "match_burst agrees with the rule on 2000 random bursts (%u bad)",
	       bad_rand);
	tap_ok(ibk_pkey_match_burst(0xffff, NULL, 0, NULL) == 0,
	       "an empty burst touches nothing and counts 0");
}

int main(void)
{
	test_rng_seed(SEED);
	test_seed_example();
	test_invalid();
	test_defaults();
	test_fields();
	test_burst();
	test_models_agree();
	test_exhaustive();
	return tap_done();
}
