/* SPDX-License-Identifier: MIT */
/*
 * test_gid.c - GID/GUID values of ib_keys.h against hand-worked byte
 * layouts and glibc's inet_pton and IN6_IS_ADDR_* as independent oracles.
 */
#define _POSIX_C_SOURCE 200112L

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "ib_keys.h"
#include "rng.h"

#define SEED		0x13198a2e03707344ull	/* of the random cases */

/* glibc's parse of @text; an unparsable oracle input is a test bug. */
static struct ibk_gid glibc_gid(const char *text)
{
	struct in6_addr a;
	struct ibk_gid g;

	memset(&g, 0xa5, sizeof(g));
	if (inet_pton(AF_INET6, text, &a) == 1)
		memcpy(g.raw, a.s6_addr, 16);
	else
		tap_diag("oracle cannot parse \"%s\"", text);
	return g;
}

static bool same(const struct ibk_gid *a, const struct ibk_gid *b)
{
	return memcmp(a->raw, b->raw, 16) == 0;
}

static void test_make_split(void)
{
	/* fe80::2:c903:1:2345, written out byte by byte */
	static const uint8_t want[16] = {
		0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x02, 0xc9, 0x03, 0x00, 0x01, 0x23, 0x45,
	};
	struct ibk_gid g = ibk_gid_make(IBK_GID_DEFAULT_PREFIX,
					0x0002c90300012345u);
	struct ibk_gid o = glibc_gid("fe80::2:c903:1:2345");
	unsigned bad = 0, i;

	tap_ok(sizeof(struct ibk_gid) == 16 && memcmp(g.raw, want, 16) == 0,
	       "gid_make(fe80::/64, 0x0002c90300012345) has the big-endian bytes");
	tap_ok(same(&g, &o), "... and equals inet_pton(\"fe80::2:c903:1:2345\")");
	tap_ok(ibk_gid_subnet_prefix(&g) == 0xfe80000000000000u &&
	       ibk_gid_guid(&g) == 0x0002c90300012345u,
	       "subnet_prefix / guid split it back");

	for (i = 0; i < 100000; i++) {
		uint64_t p = test_rng64(), q = test_rng64();
		struct ibk_gid x = ibk_gid_make(p, q);
		unsigned k;

		for (k = 0; k < 8; k++)
			bad += x.raw[k] != (uint8_t)(p >> (56 - 8 * k)) ||
			       x.raw[8 + k] != (uint8_t)(q >> (56 - 8 * k));
		bad += ibk_gid_subnet_prefix(&x) != p || ibk_gid_guid(&x) != q;
	}
	tap_ok(bad == 0, "make/split round-trip on 100000 random GIDs (%u bad)",
	       bad);
}

static void test_equal_zero(void)
{
	struct ibk_gid z, a, b;
	unsigned bad = 0, i;

	memset(&z, 0, sizeof(z));
	tap_ok(ibk_gid_is_zero(&z), "the all-zero GID is zero (empty slot)");
	for (i = 0; i < 128; i++) {
		a = z;
		a.raw[i / 8] = (uint8_t)(0x80u >> (i % 8));
		bad += ibk_gid_is_zero(&a) || ibk_gid_equal(&a, &z) ||
		       !ibk_gid_equal(&a, &a);
	}
	tap_ok(bad == 0, "any one set bit makes a GID non-zero and unequal (%u bad)",
	       bad);
	bad = 0;
	for (i = 0; i < 10000; i++) {
		a = ibk_gid_make(test_rng64(), test_rng64());
		b = a;
		bad += !ibk_gid_equal(&a, &b);
		b.raw[test_rng_below(16)] ^= (uint8_t)(1u << test_rng_below(8));
		bad += ibk_gid_equal(&a, &b) || ibk_gid_equal(&b, &a);
	}
	tap_ok(bad == 0, "gid_equal == memcmp on random GIDs (%u bad)", bad);
}

static void test_mac(void)
{
	static const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
	/* 52:54:00:12:34:56 -> flip 0x02 of 0x52 -> 0x50, ff:fe in the middle */
	static const uint8_t want[16] = {
		0xfe, 0x80, 0, 0, 0, 0, 0, 0,
		0x50, 0x54, 0x00, 0xff, 0xfe, 0x12, 0x34, 0x56,
	};
	struct ibk_gid g = ibk_gid_from_mac(mac);
	struct ibk_gid o = glibc_gid("fe80::5054:ff:fe12:3456");
	uint8_t back[6];
	unsigned bad = 0, i;

	tap_ok(memcmp(g.raw, want, 16) == 0,
	       "RoCE v1 GID of 52:54:00:12:34:56 is fe80::5054:ff:fe12:3456 (bytes)");
	tap_ok(same(&g, &o), "... and equals inet_pton of that text");
	tap_ok(ibk_gid_to_mac(&g, back) == IBK_OK && memcmp(back, mac, 6) == 0,
	       "gid_to_mac gives the MAC back");

	for (i = 0; i < 10000; i++) {
		uint8_t m[6], r[6];
		uint64_t x = test_rng64();
		unsigned k;

		for (k = 0; k < 6; k++)
			m[k] = (uint8_t)(x >> 8 * k);
		g = ibk_gid_from_mac(m);
		bad += !ibk_gid_is_link_local(&g) ||
		       ibk_gid_subnet_prefix(&g) != 0xfe80000000000000u;
		bad += g.raw[8] != (m[0] ^ 2) || g.raw[11] != 0xff ||
		       g.raw[12] != 0xfe;
		bad += ibk_gid_to_mac(&g, r) != IBK_OK || memcmp(r, m, 6) != 0;
	}
	tap_ok(bad == 0, "from_mac/to_mac round-trip on 10000 random MACs (%u bad)",
	       bad);

	g = glibc_gid("fe80::5054:ff:fe12:3456");
	g.raw[11] = 0xfe;
	tap_ok(ibk_gid_to_mac(&g, back) == IBK_EINVAL,
	       "to_mac rejects an interface id without ff at byte 11");
	g = glibc_gid("fe80::5054:ff:fe12:3456");
	g.raw[12] = 0xff;
	tap_ok(ibk_gid_to_mac(&g, back) == IBK_EINVAL,
	       "to_mac rejects an interface id without fe at byte 12");
	g = glibc_gid("fe80::2:c903:1:2345");
	tap_ok(ibk_gid_to_mac(&g, back) == IBK_EINVAL,
	       "to_mac rejects an IB port GUID (not MAC-derived)");
	tap_ok(ibk_gid_to_mac(NULL, back) == IBK_EINVAL &&
	       ibk_gid_to_mac(&o, NULL) == IBK_EINVAL,
	       "to_mac rejects NULL with IBK_EINVAL");
}

static void test_ipv4(void)
{
	struct ibk_gid g = ibk_gid_from_ipv4(0xc0a80a01u);
	struct ibk_gid o = glibc_gid("::ffff:192.168.10.1");
	unsigned bad = 0, i;
	char text[64];

	tap_ok(same(&g, &o), "from_ipv4(192.168.10.1) == inet_pton(\"::ffff:192.168.10.1\")");
	tap_ok(ibk_gid_is_v4mapped(&g) && ibk_gid_to_ipv4(&g) == 0xc0a80a01u,
	       "it is v4-mapped and gives the address back");
	for (i = 0; i < 2000; i++) {
		uint32_t a = (uint32_t)test_rng64();

		snprintf(text, sizeof(text), "::ffff:%u.%u.%u.%u", (unsigned)(a >> 24),
			(unsigned)(a >> 16 & 255), (unsigned)(a >> 8 & 255),
			(unsigned)(a & 255));
		g = ibk_gid_from_ipv4(a);
		o = glibc_gid(text);
		bad += !same(&g, &o) || ibk_gid_to_ipv4(&g) != a ||
		       !ibk_gid_is_v4mapped(&g);
	}
	tap_ok(bad == 0, "2000 random IPv4 addresses map as inet_pton does (%u bad)",
	       bad);
}

static void test_mgid(void)
{
	static const struct {
		ibk_pkey_t pkey;
		unsigned scope;
		bool ipv6;
		const char *text;
	} cases[] = {
		{ 0xffff, IBK_GID_SCOPE_LINK, false, "ff12:401b:ffff::ffff:ffff" },
		{ 0x7fff, IBK_GID_SCOPE_LINK, false, "ff12:401b:ffff::ffff:ffff" },
		{ 0x8001, IBK_GID_SCOPE_LINK, false, "ff12:401b:8001::ffff:ffff" },
		{ 0x0001, IBK_GID_SCOPE_LINK, false, "ff12:401b:8001::ffff:ffff" },
		{ 0xffff, IBK_GID_SCOPE_LINK, true, "ff12:601b:ffff::ffff:ffff" },
		{ 0x7fff, IBK_GID_SCOPE_LINK, true, "ff12:601b:ffff::ffff:ffff" },
		{ 0x8001, IBK_GID_SCOPE_LINK, true, "ff12:601b:8001::ffff:ffff" },
		{ 0x1234, IBK_GID_SCOPE_SITE, false, "ff15:401b:9234::ffff:ffff" },
		{ 0xffff, IBK_GID_SCOPE_ORG, true, "ff18:601b:ffff::ffff:ffff" },
		{ 0x8abc, IBK_GID_SCOPE_GLOBAL, false, "ff1e:401b:8abc::ffff:ffff" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ibk_gid g = ibk_gid_make(0, 0xffffffffu);
		struct ibk_gid group = g;	/* ff0S::ffff:ffff */
		struct ibk_gid o = glibc_gid(cases[i].text);

		group.raw[0] = 0xff;
		group.raw[1] = (uint8_t)(cases[i].scope & 0x0f);
		if (cases[i].ipv6)
			ibk_gid_ipoib_mgid_ipv6(cases[i].pkey, cases[i].scope,
						&group, &g);
		else
			ibk_gid_ipoib_broadcast(cases[i].pkey, cases[i].scope,
						&g);

		tap_ok(same(&g, &o) && ibk_gid_is_multicast(&g),
		       "IPoIB MGID P_Key 0x%04x scope %u %s == %s",
		       cases[i].pkey, cases[i].scope,
		       cases[i].ipv6 ? "IPv6" : "IPv4", cases[i].text);
	}
	tap_ok(IBK_GID_SCOPE_LINK == 2 && IBK_GID_SCOPE_SITE == 5 &&
	       IBK_GID_SCOPE_ORG == 8 && IBK_GID_SCOPE_GLOBAL == 0xe,
	       "scope constants are the RFC 4291 values");
}

/*
 * The MGID parser against glibc's parse of the RFC 4391 text: every
 * full-member P_Key, scope and family is recognised with its fields, and
 * texts that break one part of the layout are refused.
 */
static void test_mgid_parse(void)
{
	static const char *const not_broadcast[] = {
		"ff12:401b:0001::ffff:ffff",	/* limited key: never a broadcast MGID */
		"ff12:401b:8000::ffff:ffff",	/* invalid key, base 0 */
		"ff12:501b:8001::ffff:ffff",	/* neither IPv4 nor IPv6 signature */
		"ff02:401b:8001::ffff:ffff",	/* flags 0: permanent, not IPoIB's */
		"ff12:401b:8001::1:ffff:ffff",	/* a non-zero middle group */
		"ff12:401b:8001::ffff:fffe",	/* not the broadcast group id */
		"fe80:401b:8001::ffff:ffff",	/* not multicast */
	};
	unsigned bad = 0, checked = 0, key, scope, family;
	char text[64];
	size_t i;

	for (key = 0x8001; key <= 0xffff; key++) {
		for (scope = 0; scope < 16; scope++) {
			for (family = 0; family < 2; family++) {
				struct ibk_gid g;
				ibk_pkey_t pkey = 0;
				unsigned got_scope = 99;
				bool ipv6 = !family;

				snprintf(text, sizeof(text), "ff1%x:%s:%x::ffff:ffff",
					 scope, family ? "601b" : "401b", key);
				g = glibc_gid(text);
				checked++;
				if (ibk_gid_ipoib_mgid_parse(&g, &pkey, &got_scope, &ipv6) != 0 ||
				    pkey != key || got_scope != scope || ipv6 != (family == 1)) {
					if (bad++ < 5)
						tap_diag("%s: parsed as 0x%04x scope %u ipv6 %d",
							 text, pkey, got_scope, ipv6);
				}
			}
		}
	}
	tap_ok(bad == 0, "MGID parse recognises all %u full-key broadcast MGIDs", checked);

	for (i = 0; i < sizeof(not_broadcast) / sizeof(not_broadcast[0]); i++) {
		struct ibk_gid g = glibc_gid(not_broadcast[i]);

		tap_ok(ibk_gid_ipoib_mgid_parse(&g, NULL, NULL, NULL) == IBK_EINVAL,
		       "MGID parse refuses %s", not_broadcast[i]);
	}
	tap_ok(ibk_gid_ipoib_mgid_parse(NULL, NULL, NULL, NULL) == IBK_EINVAL,
	       "MGID parse refuses NULL");
}

/* A random GID biased towards the prefixes the predicates look at. */
static struct ibk_gid random_gid(void)
{
	struct ibk_gid g = ibk_gid_make(test_rng64(), test_rng64());
	uint64_t r = test_rng64();
	unsigned k;

	switch (r % 6) {
	case 0:
		g.raw[0] = 0xff;
		break;
	case 1:
		g.raw[0] = 0xfe;
		break;
	case 2:
		for (k = 0; k < 10; k++)
			g.raw[k] = 0;
		g.raw[10] = g.raw[11] = 0xff;
		if (r & 0x100)
			g.raw[(r >> 9) % 12] ^= (uint8_t)(1u << (r >> 16) % 8);
		break;
	case 3:
		g = ibk_gid_from_mac(g.raw);
		break;
	default:
		break;
	}
	return g;
}

static void test_predicates(void)
{
	static const struct {
		const char *text;
		bool mc, ll, v4;
	} fixed[] = {
		{ "ff02::1", true, false, false },
		{ "ff12:401b:ffff::ffff:ffff", true, false, false },
		{ "fe80::1", false, true, false },
		{ "febf:ffff::1", false, true, false },
		{ "fec0::1", false, false, false },
		{ "fe7f::1", false, false, false },
		{ "::ffff:10.0.0.1", false, false, true },
		{ "::fffe:10.0.0.1", false, false, false },
		{ "::1:ffff:10.0.0.1", false, false, false },
		{ "::", false, false, false },
		{ "2001:db8::1", false, false, false },
	};
	unsigned bad = 0, mc = 0, ll = 0, v4 = 0, i;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		struct ibk_gid g = glibc_gid(fixed[i].text);

		tap_ok(ibk_gid_is_multicast(&g) == fixed[i].mc &&
		       ibk_gid_is_link_local(&g) == fixed[i].ll &&
		       ibk_gid_is_v4mapped(&g) == fixed[i].v4,
		       "%s: multicast %d, link-local %d, v4-mapped %d",
		       fixed[i].text, fixed[i].mc, fixed[i].ll, fixed[i].v4);
	}

	for (i = 0; i < 200000; i++) {
		struct ibk_gid g = random_gid();
		struct in6_addr a;
		bool m, l, v;

		memcpy(a.s6_addr, g.raw, 16);
		m = IN6_IS_ADDR_MULTICAST(&a);
		l = IN6_IS_ADDR_LINKLOCAL(&a);
		v = IN6_IS_ADDR_V4MAPPED(&a);
		mc += m;
		ll += l;
		v4 += v;
		bad += ibk_gid_is_multicast(&g) != m ||
		       ibk_gid_is_link_local(&g) != l ||
		       ibk_gid_is_v4mapped(&g) != v;
	}
	tap_ok(bad == 0 && mc > 1000 && ll > 1000 && v4 > 1000,
	       "is_multicast/link_local/v4mapped == IN6_IS_ADDR_* on 200000 GIDs "
	       "(%u bad; %u mc, %u ll, %u v4 seen)", bad, mc, ll, v4);
}

int main(void)
{
	test_rng_seed(SEED);
	test_make_split();
	test_equal_zero();
	test_mac();
	test_ipv4();
	test_mgid();
	test_mgid_parse();
	test_predicates();
	return tap_done();
}
