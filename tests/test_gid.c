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
	       "the default GID of MAC 52:54:00:12:34:56 is fe80::5054:ff:fe12:3456 (bytes)");
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
	/* RFC 4391 4: the IPv4 broadcast group 255.255.255.255 maps to
	 * ff1S:401b:PPPP::ffff:ffff, PPPP the P_Key with bit 15 set. */
	static const struct {
		ibk_pkey_t pkey;
		unsigned scope;
		const char *text;
	} bcast[] = {
		{ 0xffff, IBK_GID_SCOPE_LINK, "ff12:401b:ffff::ffff:ffff" },
		{ 0x7fff, IBK_GID_SCOPE_LINK, "ff12:401b:ffff::ffff:ffff" },
		{ 0x8001, IBK_GID_SCOPE_LINK, "ff12:401b:8001::ffff:ffff" },
		{ 0x0001, IBK_GID_SCOPE_LINK, "ff12:401b:8001::ffff:ffff" },
		{ 0x1234, IBK_GID_SCOPE_SITE, "ff15:401b:9234::ffff:ffff" },
		{ 0x8abc, IBK_GID_SCOPE_GLOBAL, "ff1e:401b:8abc::ffff:ffff" },
		{ 0xffff, 0x18, "ff18:401b:ffff::ffff:ffff" },	/* low 4 bits */
	};
	/* ip_ib_mc_map(): ff1S:401b:PPPP:0:0:0 and the low 28 bits of the
	 * group; the expected texts are worked out by hand from that rule. */
	static const struct {
		ibk_pkey_t pkey;
		unsigned scope;
		const char *group, *text;
	} v4[] = {
		{ 0x8001, IBK_GID_SCOPE_LINK, "224.0.0.1", "ff12:401b:8001::1" },
		{ 0x8001, IBK_GID_SCOPE_LINK, "224.0.0.251", "ff12:401b:8001::fb" },
		{ 0x8001, IBK_GID_SCOPE_LINK, "239.255.255.250",
		  "ff12:401b:8001::fff:fffa" },
		{ 0x0001, IBK_GID_SCOPE_LINK, "224.0.0.22", "ff12:401b:8001::16" },
		{ 0xffff, IBK_GID_SCOPE_SITE, "232.1.2.3",
		  "ff15:401b:ffff::801:203" },
		{ 0x7fff, IBK_GID_SCOPE_GLOBAL, "225.0.0.1",
		  "ff1e:401b:ffff::100:1" },
	};
	/* ipv6_ib_mc_map(): ff1S:601b:PPPP and the low 80 bits (bytes 6-15)
	 * of the group; the group's own scope is not carried. */
	static const struct {
		ibk_pkey_t pkey;
		unsigned scope;
		const char *group, *text;
	} v6[] = {
		{ 0x8001, IBK_GID_SCOPE_LINK, "ff02::1", "ff12:601b:8001::1" },
		{ 0x8001, IBK_GID_SCOPE_LINK, "ff02::2", "ff12:601b:8001::2" },
		{ 0xffff, IBK_GID_SCOPE_LINK, "ff05::1:3", "ff12:601b:ffff::1:3" },
		{ 0x8001, IBK_GID_SCOPE_LINK, "ff02::1:ff00:1234",
		  "ff12:601b:8001::1:ff00:1234" },
		{ 0x0001, IBK_GID_SCOPE_SITE, "ff15:1234:5678:9abc:def0:1:2:3",
		  "ff15:601b:8001:9abc:def0:1:2:3" },
		{ 0xffff, IBK_GID_SCOPE_ORG, "ff38:0:0:1::4",
		  "ff18:601b:ffff:1::4" },
	};
	struct in_addr a4;
	struct ibk_gid g, grp, o, keep;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(bcast) / sizeof(bcast[0]); i++) {
		memset(&g, 0x5a, sizeof(g));
		rc = ibk_gid_ipoib_broadcast(bcast[i].pkey, bcast[i].scope, &g);
		o = glibc_gid(bcast[i].text);
		tap_ok(rc == IBK_OK && same(&g, &o) && ibk_gid_is_multicast(&g),
		       "IPoIB broadcast MGID, P_Key 0x%04x scope 0x%x == %s",
		       bcast[i].pkey, bcast[i].scope, bcast[i].text);
	}
	for (i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		memset(&g, 0x5a, sizeof(g));
		if (inet_pton(AF_INET, v4[i].group, &a4) != 1)
			tap_diag("oracle cannot parse \"%s\"", v4[i].group);
		rc = ibk_gid_ipoib_mgid_ipv4(v4[i].pkey, v4[i].scope,
					     ntohl(a4.s_addr), &g);
		o = glibc_gid(v4[i].text);
		tap_ok(rc == IBK_OK && same(&g, &o),
		       "IPv4 group %s, P_Key 0x%04x scope 0x%x: MGID %s "
		       "(ip_ib_mc_map)", v4[i].group, v4[i].pkey, v4[i].scope,
		       v4[i].text);
	}
	for (i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		memset(&g, 0x5a, sizeof(g));
		grp = glibc_gid(v6[i].group);
		rc = ibk_gid_ipoib_mgid_ipv6(v6[i].pkey, v6[i].scope, &grp, &g);
		o = glibc_gid(v6[i].text);
		tap_ok(rc == IBK_OK && same(&g, &o),
		       "IPv6 group %s, P_Key 0x%04x scope 0x%x: MGID %s "
		       "(ipv6_ib_mc_map)", v6[i].group, v6[i].pkey, v6[i].scope,
		       v6[i].text);
	}

	/* refusals: base-0 P_Keys (no partition), non-multicast groups, NULL;
	 * *out left as it was */
	memset(&keep, 0x5a, sizeof(keep));
	g = keep;
	grp = glibc_gid("ff02::1");
	o = glibc_gid("fe80::1");
	tap_ok(ibk_gid_ipoib_broadcast(0x0000, 2, &g) == IBK_EINVAL &&
	       ibk_gid_ipoib_broadcast(0x8000, 2, &g) == IBK_EINVAL &&
	       ibk_gid_ipoib_mgid_ipv4(0x0000, 2, 0xe0000001u, &g) == IBK_EINVAL &&
	       ibk_gid_ipoib_mgid_ipv4(0x8000, 2, 0xe0000001u, &g) == IBK_EINVAL &&
	       ibk_gid_ipoib_mgid_ipv6(0x0000, 2, &grp, &g) == IBK_EINVAL &&
	       ibk_gid_ipoib_mgid_ipv6(0x8000, 2, &grp, &g) == IBK_EINVAL &&
	       same(&g, &keep),
	       "P_Keys 0x0000 and 0x8000 (base 0) are refused, *out untouched");
	tap_ok(ibk_gid_ipoib_mgid_ipv4(0x8001, 2, 0xdfffffffu, &g) == IBK_EINVAL &&
	       ibk_gid_ipoib_mgid_ipv4(0x8001, 2, 0xf0000000u, &g) == IBK_EINVAL &&
	       ibk_gid_ipoib_mgid_ipv4(0x8001, 2, 0xffffffffu, &g) == IBK_EINVAL &&
	       ibk_gid_ipoib_mgid_ipv4(0x8001, 2, 0x0a000001u, &g) == IBK_EINVAL &&
	       ibk_gid_ipoib_mgid_ipv6(0x8001, 2, &o, &g) == IBK_EINVAL &&
	       same(&g, &keep),
	       "groups outside 224.0.0.0/4 (223.255.255.255, 240.0.0.0, "
	       "255.255.255.255, 10.0.0.1) and ff00::/8 (fe80::1) are refused");
	tap_ok(ibk_gid_ipoib_broadcast(0x8001, 2, NULL) == IBK_EINVAL &&
	       ibk_gid_ipoib_mgid_ipv4(0x8001, 2, 0xe0000001u, NULL) == IBK_EINVAL &&
	       ibk_gid_ipoib_mgid_ipv6(0x8001, 2, NULL, &g) == IBK_EINVAL &&
	       ibk_gid_ipoib_mgid_ipv6(0x8001, 2, &grp, NULL) == IBK_EINVAL &&
	       same(&g, &keep), "NULL pointers are refused");
	tap_ok(IBK_GID_SCOPE_LINK == 2 && IBK_GID_SCOPE_SITE == 5 &&
	       IBK_GID_SCOPE_ORG == 8 && IBK_GID_SCOPE_GLOBAL == 0xe,
	       "scope constants are the RFC 4291 values");
}

/*
 * The kernel's mappings as byte arrays, written from ip_ib_mc_map() and
 * ipv6_ib_mc_map() (include/net/ip.h, include/net/if_inet6.h): the kernel
 * fills a 20-byte hardware address, 4 bytes of QPN then the MGID; these
 * are its last 16 bytes, with the interface's broadcast P_Key (full bit
 * set, as IPoIB sets it) and scope.
 */
static void model_mc_map_v4(uint8_t out[16], unsigned pkey, unsigned scope,
			    uint32_t addr)
{
	memset(out, 0, 16);
	out[0] = 0xff;
	out[1] = (uint8_t)(0x10 | (scope & 0xf));
	out[2] = 0x40;
	out[3] = 0x1b;
	out[4] = (uint8_t)((pkey | 0x8000) >> 8);
	out[5] = (uint8_t)pkey;
	out[15] = (uint8_t)(addr & 0xff);
	out[14] = (uint8_t)(addr >> 8 & 0xff);
	out[13] = (uint8_t)(addr >> 16 & 0xff);
	out[12] = (uint8_t)(addr >> 24 & 0x0f);
}

static void model_mc_map_v6(uint8_t out[16], unsigned pkey, unsigned scope,
			    const uint8_t group[16])
{
	out[0] = 0xff;
	out[1] = (uint8_t)(0x10 | (scope & 0xf));
	out[2] = 0x60;
	out[3] = 0x1b;
	out[4] = (uint8_t)((pkey | 0x8000) >> 8);
	out[5] = (uint8_t)pkey;
	memcpy(out + 6, group + 6, 10);
}

/* Random groups, keys and scopes against the byte models; everything made
 * parses back with the same P_Key (full), scope and family. */
static void test_mgid_random(void)
{
	unsigned bad4 = 0, bad6 = 0, badp = 0, refused = 0, i, k;

	for (i = 0; i < 100000; i++) {
		ibk_pkey_t pkey = (ibk_pkey_t)test_rng64();
		unsigned scope = test_rng_below(64), got_scope = 99;
		uint32_t addr = (uint32_t)test_rng64();
		struct ibk_gid g, grp;
		uint8_t want[16];
		ibk_pkey_t got_pkey = 0;
		bool ipv6 = true, valid = (pkey & 0x7fff) != 0;
		int rc;

		if (i & 1)
			addr = 0xe0000000u | (addr & 0x0fffffffu);
		rc = ibk_gid_ipoib_mgid_ipv4(pkey, scope, addr, &g);
		if (!valid || addr >> 28 != 0xe) {
			bad4 += rc != IBK_EINVAL;
			refused++;
		} else {
			model_mc_map_v4(want, pkey, scope, addr);
			bad4 += rc != IBK_OK || memcmp(g.raw, want, 16) != 0;
			badp += ibk_gid_ipoib_mgid_parse(&g, &got_pkey,
							 &got_scope, &ipv6) !=
				IBK_OK || got_pkey != (pkey | 0x8000) ||
				got_scope != (scope & 0xf) || ipv6;
		}

		for (k = 0; k < 16; k++)
			grp.raw[k] = (uint8_t)test_rng64();
		if (i & 1)
			grp.raw[0] = 0xff;
		rc = ibk_gid_ipoib_mgid_ipv6(pkey, scope, &grp, &g);
		if (!valid || grp.raw[0] != 0xff) {
			bad6 += rc != IBK_EINVAL;
			refused++;
		} else {
			model_mc_map_v6(want, pkey, scope, grp.raw);
			bad6 += rc != IBK_OK || memcmp(g.raw, want, 16) != 0;
			badp += ibk_gid_ipoib_mgid_parse(&g, &got_pkey,
							 &got_scope, &ipv6) !=
				IBK_OK || got_pkey != (pkey | 0x8000) ||
				got_scope != (scope & 0xf) || !ipv6;
		}
		if (valid && ibk_gid_ipoib_broadcast(pkey, scope, &g) == IBK_OK)
			badp += ibk_gid_ipoib_mgid_parse(&g, &got_pkey,
							 &got_scope, &ipv6) !=
				IBK_OK || got_pkey != (pkey | 0x8000) ||
				got_scope != (scope & 0xf) || ipv6;
	}
	tap_ok(bad4 == 0, "100000 random IPv4 groups, P_Keys, scopes: MGID == "
	       "ip_ib_mc_map() bytes, refused when not 224.0.0.0/4 or base 0 "
	       "(%u bad)", bad4);
	tap_ok(bad6 == 0, "100000 random IPv6 groups: MGID == ipv6_ib_mc_map() "
	       "bytes, refused when not ff00::/8 or base 0 (%u bad)", bad6);
	tap_ok(badp == 0 && refused > 10000,
	       "every MGID made (broadcast, IPv4, IPv6) parses back with its "
	       "full P_Key, scope and family (%u bad, %u refused)", badp,
	       refused);
}

/*
 * The MGID parser against glibc's parse of the RFC 4391 text: every
 * full-member P_Key, scope and family is recognised with its fields, and
 * texts that break one part of the layout are refused.
 */
static void test_mgid_parse(void)
{
	static const char *const not_broadcast[] = {
		"ff12:401b:0001::ffff:ffff",	/* limited key: never an IPoIB MGID */
		"ff12:601b:0001::1",		/* same for IPv6 */
		"ff12:601b:8000::1",		/* invalid key, base 0 */
		"ff12:401b:8001::1000:0",	/* 29 bits: not a group's low 28 */
		"ff12:401b:8000::ffff:ffff",	/* invalid key, base 0 */
		"ff12:501b:8001::ffff:ffff",	/* neither IPv4 nor IPv6 signature */
		"ff02:401b:8001::ffff:ffff",	/* flags 0: permanent, not IPoIB's */
		"ff12:401b:8001::1:ffff:ffff",	/* a non-zero middle group */
		"ff12:401b:8001::ffff:fffe",	/* neither 28 bits nor broadcast */
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
	tap_ok(bad == 0, "MGID parse recognises all %u full-key MGIDs of the form "
	       "ff1S:x01b:PPPP::ffff:ffff", checked);

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

/*
 * The Linux kernel's rdma_is_multicast_addr() (include/rdma/ib_addr.h),
 * from glibc's macros: first byte 0xff, or an IPv4-mapped address whose
 * IPv4 part is multicast (ipv4_is_multicast(): 224.0.0.0/4).
 */
static bool model_rdma_mc(const struct in6_addr *a)
{
	return IN6_IS_ADDR_MULTICAST(a) ||
	       (IN6_IS_ADDR_V4MAPPED(a) && (a->s6_addr[12] & 0xf0) == 0xe0);
}

static void test_predicates(void)
{
	static const struct {
		const char *text;
		bool mc, ll, v4;
	} fixed[] = {
		{ "ff02::1", true, false, false },
		{ "ff12:401b:ffff::ffff:ffff", true, false, false },
		{ "::ffff:224.0.0.1", true, false, true },
		{ "::ffff:239.255.255.255", true, false, true },
		{ "::ffff:223.255.255.255", false, false, true },
		{ "::ffff:240.0.0.0", false, false, true },
		{ "::224.0.0.1", false, false, false },
		{ "::fffe:224.0.0.1", false, false, false },
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
	unsigned bad = 0, mc = 0, ll = 0, v4 = 0, v4mc = 0, i;

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
		m = model_rdma_mc(&a);
		l = IN6_IS_ADDR_LINKLOCAL(&a);
		v = IN6_IS_ADDR_V4MAPPED(&a);
		mc += m;
		v4mc += m && v;
		ll += l;
		v4 += v;
		bad += ibk_gid_is_multicast(&g) != m ||
		       ibk_gid_is_link_local(&g) != l ||
		       ibk_gid_is_v4mapped(&g) != v;
	}
	tap_ok(bad == 0 && mc > 1000 && ll > 1000 && v4 > 1000 && v4mc > 500,
	       "is_multicast == rdma_is_multicast_addr, link_local/v4mapped == "
	       "IN6_IS_ADDR_* on 200000 GIDs (%u bad; %u mc of which %u "
	       "v4-mapped, %u ll, %u v4 seen)", bad, mc, v4mc, ll, v4);

	/* ::ffff:O.1.2.3 for every first octet O, parsed by glibc */
	bad = 0;
	for (i = 0; i < 256; i++) {
		char text[32];
		struct ibk_gid g;

		snprintf(text, sizeof(text), "::ffff:%u.1.2.3", i);
		g = glibc_gid(text);
		bad += ibk_gid_is_multicast(&g) != (i >= 224 && i <= 239);
	}
	tap_ok(bad == 0, "::ffff:O.1.2.3 is multicast exactly for O = 224..239 "
	       "(IPv4 class D, RFC 5771), all 256 first octets (%u bad)", bad);
}

int main(void)
{
	test_rng_seed(SEED);
	test_make_split();
	test_equal_zero();
	test_mac();
	test_ipv4();
	test_mgid();
	test_mgid_random();
	test_mgid_parse();
	test_predicates();
	return tap_done();
}
