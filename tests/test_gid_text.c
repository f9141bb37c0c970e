/* SPDX-License-Identifier: MIT */
/*
 * test_gid_text.c - GID and GUID text against independent oracles.
 *
 *  - ibk_gid_ntop() against glibc's inet_ntop(AF_INET6), byte for byte, on
 *    random GIDs and on GIDs built to hit every rule: every layout of zero
 *    groups, IPv4-mapped and IPv4-compatible edges, IB and multicast GIDs.
 *  - ibk_gid_pton() against glibc's inet_pton(AF_INET6): same acceptance,
 *    same 16 bytes, on printed, full, upper-case, dotted-tail, structured
 *    random and mutated texts, plus a list of malformed texts.
 *  - ibk_gid_ntop_full() and the GUID printers against snprintf() of the
 *    group values; ibk_guid_pton() against a strtoull()-based parser of the
 *    two documented forms.
 *
 * Fixed seed, so a failure reproduces; the first few mismatches of each
 * check are printed as TAP diagnostics.
 */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib_keys.h"
#include "rng.h"
#include "tap.h"

#define SEED		0x9e3779b97f4a7c15ull
#define N_NTOP		1000000	/* GIDs printed by both */
#define N_PTON		1000000	/* strings parsed by both */
#define N_FULL		1000000	/* full-form GIDs */
#define N_GUID		1000000	/* GUID values printed, strings parsed */

/* ---- random numbers: rng.h, seeded with SEED ---- */

/* A 16-bit value of 1 to 4 significant hex digits, or zero. */
static unsigned rnd_group(void)
{
	return (unsigned)(test_rng64() & (0xffffu >> (4 * test_rng_below(4))));
}

/* ---- a mismatch tally per check ---- */

struct tally {
	unsigned long tried;
	unsigned long bad;
	unsigned long valid;	/* how many inputs the oracle accepted */
};

static bool tally_fail(struct tally *t)
{
	return ++t->bad <= TAP_MAX_DIAG;
}

/* ---- GIDs ---- */

static void set_group(struct ibk_gid *g, unsigned i, unsigned v)
{
	g->raw[2 * i] = (uint8_t)(v >> 8);
	g->raw[2 * i + 1] = (uint8_t)v;
}

static unsigned get_group(const struct ibk_gid *g, unsigned i)
{
	return (unsigned)g->raw[2 * i] * 256u + g->raw[2 * i + 1];
}

/* The last 32 bits: each octet 0 with probability 1/4, else random. */
static void rnd_ipv4_tail(struct ibk_gid *g)
{
	unsigned i;

	for (i = 12; i < 16; i++)
		g->raw[i] = test_rng_below(4) == 0 ? 0 : (uint8_t)test_rng64();
}

static const unsigned edge_groups[] = { 0, 1, 0xfffe, 0xffff };

static unsigned rnd_edge_group(void)
{
	return test_rng_below(5) == 4 ? rnd_group()
				 : edge_groups[test_rng_below(4)];
}

enum gid_kind {
	GID_RANDOM,		/* 128 uniform bits */
	GID_ZERO_BIASED,	/* each group zero with probability 1/2 */
	GID_ZERO_LAYOUT,	/* zero groups as the bits of a counter */
	GID_V4MAPPED,		/* ::ffff:a.b.c.d */
	GID_V4COMPAT,		/* ::a.b.c.d */
	GID_V4_EDGES,		/* 64 zero bits, then 0/1/fffe/ffff groups */
	GID_IB,			/* fe80::/64 and a GUID */
	GID_MULTICAST,		/* ff00::/8, IPoIB MGIDs among them */
	GID_KINDS
};

static const char *const gid_kind_name[GID_KINDS] = {
	"random", "zero-biased", "zero-layout", "v4-mapped",
	"v4-compatible", "v4-edge", "IB fe80::/64", "multicast",
};

static struct ibk_gid make_gid(enum gid_kind kind, unsigned long n)
{
	struct ibk_gid g;
	unsigned i, layout;

	memset(&g, 0, sizeof(g));
	switch (kind) {
	case GID_RANDOM:
		for (i = 0; i < 16; i++)
			g.raw[i] = (uint8_t)test_rng64();
		break;
	case GID_ZERO_BIASED:
		for (i = 0; i < 8; i++)
			set_group(&g, i, test_rng_below(2) ? 0 : rnd_group());
		break;
	case GID_ZERO_LAYOUT:
		/* Bit i of the layout set: group i is zero; others non-zero. */
		layout = (unsigned)(n % 256);
		for (i = 0; i < 8; i++)
			if (!(layout >> i & 1))
				set_group(&g, i, 1 + test_rng_below(0xffff));
		break;
	case GID_V4MAPPED:
		set_group(&g, 5, 0xffff);
		rnd_ipv4_tail(&g);
		break;
	case GID_V4COMPAT:
		rnd_ipv4_tail(&g);
		break;
	case GID_V4_EDGES:
		for (i = 4; i < 8; i++)
			set_group(&g, i, rnd_edge_group());
		break;
	case GID_IB:
		set_group(&g, 0, 0xfe80);
		for (i = 4; i < 8; i++)
			set_group(&g, i, test_rng_below(2) ? 0 : rnd_group());
		break;
	case GID_MULTICAST:
		g.raw[0] = 0xff;
		g.raw[1] = (uint8_t)test_rng64();
		if (test_rng_below(2)) {	/* IPoIB broadcast/multicast MGID */
			set_group(&g, 1, test_rng_below(2) ? 0x401b : 0x601b);
			set_group(&g, 2, rnd_group());
			for (i = 3; i < 8; i++)
				set_group(&g, i, test_rng_below(2) ? 0 : 0xffff);
		} else {
			for (i = 1; i < 8; i++)
				set_group(&g, i,
					  test_rng_below(2) ? 0 : rnd_group());
		}
		break;
	case GID_KINDS:
		break;
	}
	return g;
}

static void gid_hex(const struct ibk_gid *g, char out[33])
{
	unsigned i;

	for (i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", g->raw[i]);
}

/* ---- ibk_gid_ntop() against inet_ntop() ---- */

static bool ntop_agrees(const struct ibk_gid *g, struct tally *t)
{
	char ours[IBK_GID_STRLEN], theirs[INET6_ADDRSTRLEN], hex[33];
	const char *r = ibk_gid_ntop(g, ours);

	t->tried++;
	if (inet_ntop(AF_INET6, g->raw, theirs, sizeof(theirs)) == NULL) {
		if (tally_fail(t))
			tap_diag("inet_ntop failed");
		return false;
	}
	if (r == ours && strcmp(ours, theirs) == 0)
		return true;
	if (tally_fail(t)) {
		gid_hex(g, hex);
		tap_diag("%s: ours \"%s\", glibc \"%s\"", hex, ours, theirs);
	}
	return false;
}

static void test_ntop_fixed(void)
{
	/* Facts of RFC 5952 4.2 and glibc's dotted-tail rule. */
	static const struct {
		uint8_t raw[16];
		const char *text;
	} cases[] = {
		{ { 0 }, "::" },
		{ { 0,0, 0,0, 0,0, 0,0, 0,0, 0,0, 0,0, 0,1 }, "::1" },
		{ { 0,1, 0,0, 0,0, 0,0, 0,0, 0,0, 0,0, 0,0 }, "1::" },
		{ { 0,0, 0,0, 0,0, 0,0, 0,0, 0xff,0xff, 0,0, 0,0 },
		  "::ffff:0.0.0.0" },
		{ { 0,0, 0,0, 0,0, 0,0, 0,0, 0xff,0xff, 1,2, 3,4 },
		  "::ffff:1.2.3.4" },
		{ { 0,0, 0,0, 0,0, 0,0, 0,0, 0xff,0xff, 255,255, 255,255 },
		  "::ffff:255.255.255.255" },
		{ { 0,0, 0,0, 0,0, 0,0, 0,0, 0xff,0xff, 0,0, 0,1 },
		  "::ffff:0.0.0.1" },
		{ { 0,0, 0,0, 0,0, 0,0, 0,0, 0,0, 1,2, 3,4 }, "::1.2.3.4" },
		{ { 0,0, 0,0, 0,0, 0,0, 0,0, 0,0, 0,1, 0,0 }, "::0.1.0.0" },
		{ { 0,0, 0,0, 0,0, 0,0, 0,0, 0,0, 0,0, 1,2 }, "::102" },
		{ { 0,0, 0,0, 0,0, 0,0, 0,0, 0,0, 0,0, 0xff,0xff }, "::ffff" },
		{ { 0,0, 0,0, 0,0, 0,0, 0,0, 0,1, 0,0, 0,0 }, "::1:0:0" },
		{ { 0,0, 0,0, 0,0, 0,0, 0,0, 0xff,0xfe, 1,2, 3,4 },
		  "::fffe:102:304" },
		{ { 0,0, 0,0, 0,0, 0,0, 0,1, 0xff,0xff, 1,2, 3,4 },
		  "::1:ffff:102:304" },
		{ { 0,1, 0,0, 0,2, 0,3, 0,4, 0,5, 0,6, 0,7 },
		  "1:0:2:3:4:5:6:7" },
		{ { 0,1, 0,0, 0,0, 0,2, 0,0, 0,0, 0,3, 0,4 },
		  "1::2:0:0:3:4" },
		{ { 0,1, 0,0, 0,0, 0,2, 0,0, 0,0, 0,0, 0,3 },
		  "1:0:0:2::3" },
		{ { 0,0, 0,0, 0,1, 0,0, 0,0, 0,0, 0,0, 0,0 }, "0:0:1::" },
		{ { 0xfe,0x80, 0,0, 0,0, 0,0, 0,2, 0xc9,3, 0,1, 0x23,0x45 },
		  "fe80::2:c903:1:2345" },
		{ { 0xff,0x12, 0x40,0x1b, 0xff,0xff, 0,0, 0,0, 0,0,
		    0xff,0xff, 0xff,0xff }, "ff12:401b:ffff::ffff:ffff" },
		{ { 0xab,0xcd, 0x0a,0xbc, 0,0x0a, 0,0, 0,0, 0,0, 0,0, 0,0x10 },
		  "abcd:abc:a::10" },
		{ { 0xff,0xff, 0xff,0xff, 0xff,0xff, 0xff,0xff, 0xff,0xff,
		    0xff,0xff, 0xff,0xff, 0xff,0xff },
		  "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" },
	};
	struct tally t = { 0, 0, 0 };
	char ours[IBK_GID_STRLEN], theirs[INET6_ADDRSTRLEN];
	struct ibk_gid g;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(g.raw, cases[i].raw, 16);
		ibk_gid_ntop(&g, ours);
		inet_ntop(AF_INET6, g.raw, theirs, sizeof(theirs));
		t.tried++;
		if (strcmp(ours, cases[i].text) != 0 ||
		    strcmp(theirs, cases[i].text) != 0) {
			if (tally_fail(&t))
				tap_diag("want \"%s\": ours \"%s\", glibc \"%s\"",
					 cases[i].text, ours, theirs);
		}
	}
	tap_ok(t.bad == 0, "ntop: %lu RFC 5952 / dotted-tail examples, "
	       "ours and glibc print the expected text", t.tried);
	tap_ok(ibk_gid_ntop(NULL, ours) == NULL &&
	       ibk_gid_ntop(&g, NULL) == NULL, "ntop: NULL gid or buffer -> NULL");
}

static void test_ntop_oracle(void)
{
	struct tally t[GID_KINDS];
	unsigned long n;
	unsigned k;
	struct ibk_gid g;

	memset(t, 0, sizeof(t));
	for (n = 0; n < N_NTOP; n++) {
		k = (unsigned)(n % GID_KINDS);
		g = make_gid((enum gid_kind)k, n / GID_KINDS);
		ntop_agrees(&g, &t[k]);
	}
	for (k = 0; k < GID_KINDS; k++)
		tap_ok(t[k].bad == 0, "ntop == inet_ntop on %lu %s GIDs "
		       "(%lu differ)", t[k].tried, gid_kind_name[k], t[k].bad);
}

/* ---- ibk_gid_pton() against inet_pton() ---- */

static const char sentinel_byte = 0x5a;

/* Both parse @s; acceptance and bytes must agree, a reject leave @out be. */
static bool pton_agrees(const char *s, struct tally *t)
{
	struct ibk_gid ours;
	unsigned char theirs[16];
	int r, r_glibc;
	unsigned i;
	bool ok;

	memset(&ours, sentinel_byte, sizeof(ours));
	t->tried++;
	r = ibk_gid_pton(s, &ours);
	r_glibc = inet_pton(AF_INET6, s, theirs);
	if (r_glibc == 1) {
		t->valid++;
		ok = r == 0 && memcmp(ours.raw, theirs, 16) == 0;
	} else {
		ok = r == IBK_EINVAL;
		for (i = 0; i < 16; i++)
			ok = ok && ours.raw[i] == (uint8_t)sentinel_byte;
	}
	if (!ok && tally_fail(t))
		tap_diag("\"%s\": ours %d, glibc %d", s, r, r_glibc);
	return ok;
}

static void full_text(const struct ibk_gid *g, char *out, size_t size,
		      bool upper)
{
	unsigned v[8], i;

	for (i = 0; i < 8; i++)
		v[i] = get_group(g, i);
	snprintf(out, size, upper ? "%04X:%04X:%04X:%04X:%04X:%04X:%04X:%04X"
				  : "%04x:%04x:%04x:%04x:%04x:%04x:%04x:%04x",
		 v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
}

static void str_upper(char *s)
{
	for (; *s; s++)
		*s = (char)toupper((unsigned char)*s);
}

/*
 * A text built from parts, valid or not: @before groups, optionally "::",
 * @after groups, optionally a dotted quad; each group 1-4 digits with
 * random leading zeros (rarely five), random case, and octets that are
 * rarely out of range, zero-padded or missing.
 */
static void structured_text(char *out, size_t size)
{
	unsigned before, after, i, total;
	bool gap = test_rng_below(3) != 0, tail = test_rng_below(3) == 0;
	size_t len = 0;

	total = tail ? 6 : 8;
	if (gap) {
		before = test_rng_below(total);
		after = test_rng_below(total - before);
		if (test_rng_below(8) == 0)	/* "::" standing for nothing */
			after = total - before;
	} else {
		before = total;
		after = 0;
		if (test_rng_below(8) == 0)	/* one group too many or too few */
			before = total + 1 - 2 * test_rng_below(2);
	}
	out[0] = '\0';
	for (i = 0; i < before + after; i++) {
		unsigned v = test_rng_below(3) == 0 ? 0 : rnd_group();
		int width = test_rng_below(16) == 0 ? 5 : (int)test_rng_below(5);

		if (gap && i == before)
			len += (size_t)snprintf(out + len, size - len, "::");
		else if (i != 0)
			len += (size_t)snprintf(out + len, size - len, ":");
		len += (size_t)snprintf(out + len, size - len,
					test_rng_below(2) ? "%0*x" : "%0*X",
					width, v);
	}
	if (gap && after == 0)
		len += (size_t)snprintf(out + len, size - len, "::");
	if (tail) {
		unsigned octets = test_rng_below(16) == 0 ?
				   3 + 2 * test_rng_below(2) : 4;

		if (len != 0 && out[len - 1] != ':')
			len += (size_t)snprintf(out + len, size - len, ":");
		for (i = 0; i < octets; i++) {
			unsigned v = test_rng_below(4) == 0 ? 0
							   : test_rng_below(256);
			const char *fmt = i ? ".%u" : "%u";

			if (test_rng_below(32) == 0)
				v = 256 + test_rng_below(800);
			if (test_rng_below(32) == 0)
				fmt = i ? ".0%u" : "0%u";
			len += (size_t)snprintf(out + len, size - len, fmt, v);
		}
	}
}

/* The strings the mutations draw from. */
static const char mutation_alphabet[] = "0123456789abcdefABCDEF:.x g%";

/* Insert, delete or replace one character at random; keeps @s a string. */
static void mutate(char *s, size_t size)
{
	size_t len = strlen(s), pos = len ? test_rng_below((unsigned)len + 1) : 0;
	char c = mutation_alphabet[test_rng_below(sizeof(mutation_alphabet) - 1)];

	switch (test_rng_below(3)) {
	case 0:
		if (len + 1 < size) {
			memmove(s + pos + 1, s + pos, len - pos + 1);
			s[pos] = c;
		}
		break;
	case 1:
		if (pos < len)
			memmove(s + pos, s + pos + 1, len - pos);
		break;
	default:
		if (pos < len)
			s[pos] = c;
		break;
	}
}

/* A short string over a few characters that make up GID text. */
static void dense_text(char *out)
{
	static const char alphabet[] = "0:1:f:.F0";
	unsigned len = test_rng_below(16), i;

	for (i = 0; i < len; i++)
		out[i] = alphabet[test_rng_below(sizeof(alphabet) - 1)];
	out[len] = '\0';
}

enum text_kind {
	TEXT_NTOP,		/* inet_ntop of a GID */
	TEXT_FULL,		/* %04x groups */
	TEXT_UPPER,		/* either, upper-cased */
	TEXT_STRUCTURED,	/* built from parts, dotted tails among them */
	TEXT_MUTATED,		/* a valid text with 1-3 random edits */
	TEXT_DENSE,		/* short strings over "0:1f.F" */
	TEXT_KINDS
};

static const char *const text_kind_name[TEXT_KINDS] = {
	"inet_ntop", "full-form", "upper-case", "structured/dotted",
	"mutated", "dense random",
};

static void make_text(enum text_kind kind, unsigned long n, char *out,
		      size_t size)
{
	struct ibk_gid g = make_gid((enum gid_kind)test_rng_below(GID_KINDS), n);
	unsigned edits;

	switch (kind) {
	case TEXT_NTOP:
		inet_ntop(AF_INET6, g.raw, out, (socklen_t)size);
		break;
	case TEXT_FULL:
		full_text(&g, out, size, false);
		break;
	case TEXT_UPPER:
		if (test_rng_below(2))
			full_text(&g, out, size, true);
		else
			inet_ntop(AF_INET6, g.raw, out, (socklen_t)size);
		str_upper(out);
		break;
	case TEXT_STRUCTURED:
		structured_text(out, size);
		break;
	case TEXT_MUTATED:
		switch (test_rng_below(3)) {
		case 0:
			inet_ntop(AF_INET6, g.raw, out, (socklen_t)size);
			break;
		case 1:
			full_text(&g, out, size, false);
			break;
		default:
			structured_text(out, size);
			break;
		}
		for (edits = 1 + test_rng_below(3); edits; edits--)
			mutate(out, size);
		break;
	case TEXT_DENSE:
		dense_text(out);
		break;
	case TEXT_KINDS:
		break;
	}
}

static void test_pton_oracle(void)
{
	struct tally t[TEXT_KINDS];
	unsigned long n;
	unsigned k;
	char s[96];

	memset(t, 0, sizeof(t));
	for (n = 0; n < N_PTON; n++) {
		k = (unsigned)(n % TEXT_KINDS);
		make_text((enum text_kind)k, n / TEXT_KINDS, s, sizeof(s));
		pton_agrees(s, &t[k]);
	}
	for (k = 0; k < TEXT_KINDS; k++)
		tap_ok(t[k].bad == 0, "pton == inet_pton on %lu %s strings, "
		       "%lu of them valid (%lu differ)", t[k].tried,
		       text_kind_name[k], t[k].valid, t[k].bad);
}

static void test_pton_fixed(void)
{
	static const char *const malformed[] = {
		"", ":", ":::", "::::", "1::2::3", "::1::", "1:::2",
		"12345::", "::12345", "00000::", "::00001", "1:2:3:4:5:6:7:00008",
		"1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8::",
		"::1:2:3:4:5:6:7:8", "1:2:3:4::5:6:7:8", "1:2:3:4:5:6:7:8:",
		"1:", ":1", ":1::", "1::2:", "::1:", "1:2:3:4:5:6:7:8 ",
		" ::1", "::1 ", "::1\t", "\n::1", ":: 1", "fe80::1%eth0",
		"fe80::1%1", "::1/128", "[::1]", "g::", "::g", "1:2:3:4:5:6:7:g",
		"0x1::", "::0x1", "+1::", "-1::", "1.2.3.4", "::1.2.3", "::1.2.3.",
		"::1.2.3.4.", "::1.2.3.4.5", "::ffff:1.2.3.256",
		"::ffff:256.1.1.1", "::ffff:01.2.3.4", "::ffff:1.2.3.04",
		"::ffff:00.0.0.0", "::ffff:1..3.4", "::ffff:.1.2.3",
		"::ffff:1.2.3.4:5", "::ffff:1.2.3.4::", "1.2.3.4::",
		"::ffff:1.2.3.4x", "::ffff:a.b.c.d", "::ffff:1.2.3.-4",
		"1:2:3:4:5:6:7:1.2.3.4", "1:2:3:4:5:6:7::1.2.3.4",
		"::1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:1.2.3.4:1",
		"1:2:3:4:5:1.2.3.4", "::1.2.3.4:5", "::ffff:1234.1.1.1",
		"::ffff:12345.1.1.1", ":ffff:1.2.3.4", "::ffff::1.2.3.4",
		"fe80:::1", "fe80::1::", "fe80::fffff",
		"fe80:0000:0000:0000:0002:c903:0001:2345:0000",
		"fe80-0000-0000-0000-0002-c903-0001-2345",
		"fe80.0.0.0", "localhost", "::1.", "::.", ".::", "::ffff:1.2.3.4 ",
		"\xc3\xa9::", "::\x80", "::ffff:1.2.3.\xb4",
	};
	static const char *const valid[] = {
		"::", "::0", "0::", "::1", "1::", "0000::", "::0000",
		"1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8", "1::3:4:5:6:7:8",
		"1:2:3:4:5:6::8", "1:2:3:4:5:6:7:8", "::ffff:1.2.3.4",
		"::FFFF:1.2.3.4", "::1.2.3.4", "::0.0.0.0", "1:2:3:4:5:6:1.2.3.4",
		"1::1.2.3.4", "::ffff:0.10.100.255", "FE80::2:C903:1:2345",
		"fe80:0000:0000:0000:0002:c903:0001:2345",
		"ff12:401b:ffff::ffff:ffff", "aBcD::eF01",
	};
	struct tally t = { 0, 0, 0 };
	struct ibk_gid g;
	unsigned char raw[16];
	int glibc_rejects = 0;
	size_t i;

	for (i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		glibc_rejects += inet_pton(AF_INET6, malformed[i], raw) == 0;
		pton_agrees(malformed[i], &t);
	}
	tap_ok(glibc_rejects == (int)i && t.bad == 0,
	       "pton: %zu malformed strings, glibc rejects %d, ours rejects "
	       "with IBK_EINVAL and leaves out untouched (%lu differ)",
	       i, glibc_rejects, t.bad);

	t.tried = t.bad = 0;
	for (i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		if (inet_pton(AF_INET6, valid[i], raw) != 1 &&
		    tally_fail(&t))
			tap_diag("glibc rejects \"%s\"", valid[i]);
		pton_agrees(valid[i], &t);
	}
	tap_ok(t.bad == 0, "pton: %zu valid edge strings give glibc's bytes",
	       i);

	memset(&g, sentinel_byte, sizeof(g));
	tap_ok(ibk_gid_pton(NULL, &g) == IBK_EINVAL &&
	       ibk_gid_pton("::1", NULL) == IBK_EINVAL &&
	       g.raw[0] == (uint8_t)sentinel_byte,
	       "pton: NULL text or out -> IBK_EINVAL");
}

/* ---- ibk_gid_ntop_full() ---- */

static void test_ntop_full(void)
{
	static const struct ibk_gid example = { {
		0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 2, 0xc9, 3, 0, 1, 0x23, 0x45 } };
	struct tally t = { 0, 0, 0 }, trip = { 0, 0, 0 };
	char ours[IBK_GID_FULL_STRLEN], want[64], hex[33];
	struct ibk_gid g, back;
	unsigned long n;

	ibk_gid_ntop_full(&example, ours);
	tap_ok(strcmp(ours, "fe80:0000:0000:0000:0002:c903:0001:2345") == 0,
	       "ntop_full: sysfs example gives \"%s\"", ours);

	for (n = 0; n < N_FULL; n++) {
		g = make_gid((enum gid_kind)(n % GID_KINDS), n / GID_KINDS);
		full_text(&g, want, sizeof(want), false);
		t.tried++;
		if ((ibk_gid_ntop_full(&g, ours) != ours ||
		     strcmp(ours, want) != 0) && tally_fail(&t))
			tap_diag("ours \"%s\", want \"%s\"", ours, want);
		memset(&back, 0, sizeof(back));
		trip.tried++;
		if ((ibk_gid_pton(ours, &back) != 0 ||
		     memcmp(back.raw, g.raw, 16) != 0) && tally_fail(&trip)) {
			gid_hex(&g, hex);
			tap_diag("%s does not read back from \"%s\"", hex, ours);
		}
	}
	tap_ok(t.bad == 0, "ntop_full == snprintf(\"%%04x\") of each group "
	       "on %lu GIDs (%lu differ)", t.tried, t.bad);
	tap_ok(trip.bad == 0, "pton(ntop_full(gid)) == gid on %lu GIDs",
	       trip.tried);
	tap_ok(ibk_gid_ntop_full(NULL, ours) == NULL &&
	       ibk_gid_ntop_full(&g, NULL) == NULL,
	       "ntop_full: NULL gid or buffer -> NULL");
}

/* ---- GUID text ---- */

/* A GUID whose nibbles are zero with probability 1/2 (leading zeros). */
static uint64_t rnd_guid(void)
{
	uint64_t v = test_rng64(), keep = test_rng64(), mask = 0;
	unsigned i;

	for (i = 0; i < 16; i++)
		if (keep >> i & 1)
			mask |= (uint64_t)0xf << (4 * i);
	return v & mask;
}

static bool all_xdigits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* The two documented forms, checked by shape, valued by strtoull(). */
static bool oracle_guid_pton(const char *s, uint64_t *out)
{
	size_t len = strlen(s);
	char digits[17];

	if (len >= 3 && len <= 18 && s[0] == '0' &&
	    (s[1] == 'x' || s[1] == 'X') && all_xdigits(s + 2, len - 2)) {
		*out = strtoull(s + 2, NULL, 16);
		return true;
	}
	if (len == 19 && s[4] == ':' && s[9] == ':' && s[14] == ':' &&
	    all_xdigits(s, 4) && all_xdigits(s + 5, 4) &&
	    all_xdigits(s + 10, 4) && all_xdigits(s + 15, 4)) {
		memcpy(digits, s, 4);
		memcpy(digits + 4, s + 5, 4);
		memcpy(digits + 8, s + 10, 4);
		memcpy(digits + 12, s + 15, 4);
		digits[16] = '\0';
		*out = strtoull(digits, NULL, 16);
		return true;
	}
	return false;
}

static bool guid_pton_agrees(const char *s, struct tally *t)
{
	const uint64_t sentinel = 0x5a5a5a5a5a5a5a5aull;
	uint64_t want = 0;
	ibk_guid_t got = sentinel;
	bool valid = oracle_guid_pton(s, &want), ok;
	int r = ibk_guid_pton(s, &got);

	t->tried++;
	if (valid)
		t->valid++;
	ok = valid ? r == 0 && got == want
		   : r == IBK_EINVAL && got == sentinel;
	if (!ok && tally_fail(t))
		tap_diag("\"%s\": ours %d 0x%016" PRIx64 ", oracle %d 0x%016"
			 PRIx64, s, r, got, (int)valid, want);
	return ok;
}

static const char guid_alphabet[] = "0123456789abcdefABCDEF:xX +-g";

/* A GUID text in one of the two forms, random case and width, maybe edited. */
static void make_guid_text(uint64_t v, char *out, size_t size)
{
	unsigned edits, i;

	if (test_rng_below(2)) {
		/* 1-16 digits, rarely 17; fewer than 16 drop the top digits */
		unsigned width = test_rng_below(16) == 0 ? 17
							 : 1 + test_rng_below(16);
		uint64_t shown = width < 16 ? v & ((UINT64_C(1) << (4 * width)) - 1)
					    : v;

		if (test_rng_below(2))
			snprintf(out, size, "0x%0*" PRIx64, (int)width, shown);
		else
			snprintf(out, size, "0X%0*" PRIX64, (int)width, shown);
	} else {
		snprintf(out, size, test_rng_below(2) ? "%04x:%04x:%04x:%04x"
			 : "%04X:%04X:%04X:%04X", (unsigned)(v >> 48),
			 (unsigned)(v >> 32 & 0xffff),
			 (unsigned)(v >> 16 & 0xffff), (unsigned)(v & 0xffff));
	}
	if (test_rng_below(2))
		return;
	for (edits = 1 + test_rng_below(2); edits; edits--) {
		size_t len = strlen(out), pos = test_rng_below((unsigned)len + 1);
		char c = guid_alphabet[test_rng_below(sizeof(guid_alphabet) - 1)];

		switch (test_rng_below(3)) {
		case 0:
			if (len + 1 < size) {
				for (i = (unsigned)len + 1; i > pos; i--)
					out[i] = out[i - 1];
				out[pos] = c;
			}
			break;
		case 1:
			if (pos < len)
				memmove(out + pos, out + pos + 1, len - pos);
			break;
		default:
			if (pos < len)
				out[pos] = c;
			break;
		}
	}
}

static void test_guid_fixed(void)
{
	static const char *const malformed[] = {
		"", "0", "0x", "0X", "x12", "0x 1", " 0x1", "0x1 ", "+0x1",
		"-0x1", "0x+1", "0x-1", "0x1g", "0xg", "00x1", "0x0x1",
		"0x00000000000000001", "0x12345678901234567",
		"0002c90300012345", "12345", "0002:c903:0001", "0002:c903:0001:234",
		"0002:c903:0001:23456", "2:c903:1:2345", "0002:c903:0001:2345:",
		":0002:c903:0001:2345", "0002::0001:2345",
		"0002:c903:0001:2345:0000", "0x0002:c903:0001:2345",
		"0002:c903:0001:234g", "0002-c903-0001-2345", "0002.c903.0001.2345",
		"0002:c903: 001:2345", "0xffffffffffffffff0",
	};
	static const struct {
		const char *text;
		uint64_t value;
	} valid[] = {
		{ "0x0002c90300012345", 0x0002c90300012345ull },
		{ "0X0002C90300012345", 0x0002c90300012345ull },
		{ "0x2c90300012345", 0x0002c90300012345ull },
		{ "0x0", 0 }, { "0x1", 1 },
		{ "0xffffffffffffffff", 0xffffffffffffffffull },
		{ "0x0000000000000000", 0 },
		{ "0002:c903:0001:2345", 0x0002c90300012345ull },
		{ "0002:C903:0001:2345", 0x0002c90300012345ull },
		{ "ffff:ffff:ffff:ffff", 0xffffffffffffffffull },
		{ "0000:0000:0000:0000", 0 },
	};
	struct tally t = { 0, 0, 0 };
	char buf[IBK_GUID_STRLEN];
	ibk_guid_t v;
	size_t i;

	tap_ok(strcmp(ibk_guid_ntop(0x0002c90300012345ull, buf),
		      "0x0002c90300012345") == 0 &&
	       strcmp(ibk_guid_ntop_colon(0x0002c90300012345ull, buf),
		      "0002:c903:0001:2345") == 0,
	       "guid_ntop: ibstat \"0x0002c90300012345\", sysfs "
	       "\"0002:c903:0001:2345\"");

	for (i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		v = 0x5a5a5a5a5a5a5a5aull;
		t.tried++;
		if ((ibk_guid_pton(malformed[i], &v) != IBK_EINVAL ||
		     v != 0x5a5a5a5a5a5a5a5aull) && tally_fail(&t))
			tap_diag("accepted \"%s\"", malformed[i]);
		guid_pton_agrees(malformed[i], &t);
	}
	tap_ok(t.bad == 0, "guid_pton: %zu malformed strings -> IBK_EINVAL, "
	       "out untouched", i);

	t.tried = t.bad = 0;
	for (i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
		t.tried++;
		if ((ibk_guid_pton(valid[i].text, &v) != 0 ||
		     v != valid[i].value) && tally_fail(&t))
			tap_diag("\"%s\" misread", valid[i].text);
		guid_pton_agrees(valid[i].text, &t);
	}
	tap_ok(t.bad == 0, "guid_pton: %zu valid strings read right", i);

	tap_ok(ibk_guid_pton(NULL, &v) == IBK_EINVAL &&
	       ibk_guid_pton("0x1", NULL) == IBK_EINVAL &&
	       ibk_guid_ntop(1, NULL) == NULL &&
	       ibk_guid_ntop_colon(1, NULL) == NULL,
	       "guid: NULL text, out or buffer -> IBK_EINVAL / NULL");
}

static void test_guid_oracle(void)
{
	struct tally hex = { 0, 0, 0 }, colon = { 0, 0, 0 }, trip = { 0, 0, 0 };
	struct tally parse = { 0, 0, 0 };
	char ours[IBK_GUID_STRLEN], want[32], text[40];
	unsigned long n;
	uint64_t v;
	ibk_guid_t back;

	for (n = 0; n < N_GUID; n++) {
		v = rnd_guid();

		snprintf(want, sizeof(want), "0x%016" PRIx64, v);
		hex.tried++;
		if ((ibk_guid_ntop(v, ours) != ours ||
		     strcmp(ours, want) != 0) && tally_fail(&hex))
			tap_diag("ours \"%s\", want \"%s\"", ours, want);
		trip.tried++;
		if ((ibk_guid_pton(ours, &back) != 0 || back != v) &&
		    tally_fail(&trip))
			tap_diag("\"%s\" does not read back", ours);

		snprintf(want, sizeof(want), "%04x:%04x:%04x:%04x",
			 (unsigned)(v >> 48), (unsigned)(v >> 32 & 0xffff),
			 (unsigned)(v >> 16 & 0xffff), (unsigned)(v & 0xffff));
		colon.tried++;
		if ((ibk_guid_ntop_colon(v, ours) != ours ||
		     strcmp(ours, want) != 0) && tally_fail(&colon))
			tap_diag("ours \"%s\", want \"%s\"", ours, want);
		trip.tried++;
		if ((ibk_guid_pton(ours, &back) != 0 || back != v) &&
		    tally_fail(&trip))
			tap_diag("\"%s\" does not read back", ours);

		make_guid_text(v, text, sizeof(text));
		guid_pton_agrees(text, &parse);
	}
	tap_ok(hex.bad == 0, "guid_ntop == snprintf(\"0x%%016\" PRIx64) on "
	       "%lu GUIDs (%lu differ)", hex.tried, hex.bad);
	tap_ok(colon.bad == 0, "guid_ntop_colon == snprintf(\"%%04x:...\") "
	       "on %lu GUIDs (%lu differ)", colon.tried, colon.bad);
	tap_ok(trip.bad == 0, "guid_pton reads both printed forms back "
	       "(%lu texts)", trip.tried);
	tap_ok(parse.bad == 0, "guid_pton == strtoull-based parser on %lu "
	       "strings, %lu of them valid (%lu differ)", parse.tried,
	       parse.valid, parse.bad);
}

int main(void)
{
	test_rng_seed(SEED);
	tap_diag("seed 0x%016llx", (unsigned long long)SEED);
	test_ntop_fixed();
	test_ntop_oracle();
	test_pton_fixed();
	test_pton_oracle();
	test_ntop_full();
	test_guid_fixed();
	test_guid_oracle();
	return tap_done();
}
