/* SPDX-License-Identifier: MIT */
/*
 * mgid: IPoIB multicast GIDs against RFC 4391 4, written here byte by
 * byte. From the input: a 16-byte GID, a P_Key, a scope and an IPv4
 * group.
 *  - ibk_gid_ipoib_mgid_parse() must recognise the GID exactly when it is
 *    ff1S:401b:PPPP:0:0:0:GGGG:GGGG (G the low 28 bits of a group, or the
 *    broadcast ffff:ffff) or ff1S:601b:PPPP:..., PPPP a full-member
 *    P_Key of a non-zero base, report that P_Key, scope and family, and
 *    the builders must make the same GID again from them;
 *  - the builders must refuse a P_Key of base 0 and a group outside
 *    224.0.0.0/4 (IPv4) or ff00::/8 (IPv6), leaving the output alone, and
 *    else write the RFC's bytes (Linux ip_ib_mc_map(), ipv6_ib_mc_map()),
 *    which parse back to what they were made of.
 */
#include "fuzz.h"
#include "ib_keys.h"

static uint32_t be32_at(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

/* RFC 4391's layout, byte by byte: 4 for IPv4, 6 for IPv6, 0 for none. */
static int model_family(const uint8_t *b)
{
	uint32_t low = be32_at(b + 12);
	bool full_valid = (b[4] & 0x80) && ((b[4] & 0x7f) || b[5]);

	if (b[0] != 0xff || (b[1] >> 4) != 1 || !full_valid)
		return 0;
	if (b[2] == 0x60 && b[3] == 0x1b)
		return 6;
	if (b[2] != 0x40 || b[3] != 0x1b)
		return 0;
	for (int i = 6; i < 12; i++)
		if (b[i])
			return 0;
	return (low >> 28) == 0 || low == 0xffffffffu ? 4 : 0;
}

static void check_parse(const struct ibk_gid *g)
{
	int family = model_family(g->raw);
	ibk_pkey_t pkey = 0;
	unsigned scope = 99;
	bool ipv6 = false;
	struct ibk_gid again;
	int rc = ibk_gid_ipoib_mgid_parse(g, &pkey, &scope, &ipv6);

	FZ_CHECK((rc == IBK_OK) == (family != 0), "parse %d, model family %d",
		 rc, family);
	FZ_CHECK(ibk_gid_ipoib_mgid_parse(g, NULL, NULL, NULL) == rc,
		 "parse with NULL outputs differs");
	if (rc != IBK_OK) {
		FZ_CHECK(rc == IBK_EINVAL, "error %d", rc);
		return;
	}
	FZ_CHECK(pkey == (g->raw[4] << 8 | g->raw[5]), "P_Key %04x", pkey);
	FZ_CHECK(scope == (g->raw[1] & 0x0fu), "scope %u", scope);
	FZ_CHECK(ipv6 == (family == 6), "family");
	if (ipv6) {
		rc = ibk_gid_ipoib_mgid_ipv6(pkey, scope, g, &again);
	} else if (be32_at(g->raw + 12) == 0xffffffffu) {
		rc = ibk_gid_ipoib_broadcast(pkey, scope, &again);
	} else {
		rc = ibk_gid_ipoib_mgid_ipv4(pkey, scope,
					     0xe0000000u | be32_at(g->raw + 12),
					     &again);
	}
	FZ_CHECK(rc == IBK_OK && ibk_gid_equal(&again, g),
		 "not made again from its parts");
}

/* The bytes a builder must write, and that they parse back. */
static void check_made(const struct ibk_gid *out, ibk_pkey_t pkey,
		       unsigned scope, int family, const uint8_t *tail)
{
	uint8_t want[16];

	want[0] = 0xff;
	want[1] = (uint8_t)(0x10 | (scope & 0x0f));
	want[2] = family == 6 ? 0x60 : 0x40;
	want[3] = 0x1b;
	want[4] = (uint8_t)(pkey >> 8 | 0x80);
	want[5] = (uint8_t)pkey;
	memcpy(want + 6, tail, 10);
	FZ_CHECK(memcmp(out->raw, want, 16) == 0, "family %d: wrong bytes",
		 family);
	check_parse(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = fz_init(data, size);
	struct ibk_gid g, out, untouched;
	ibk_pkey_t pkey;
	unsigned scope;
	uint32_t group;
	uint8_t tail[10];
	bool pkey_ok;
	int rc;

	fz_bytes(&f, g.raw, 16);
	pkey = fz_u16(&f);
	scope = fz_u8(&f);
	group = fz_u32(&f);
	pkey_ok = (pkey & 0x7fff) != 0;
	memset(untouched.raw, 0x5a, 16);

	check_parse(&g);

	/* IPv4 group */
	out = untouched;
	rc = ibk_gid_ipoib_mgid_ipv4(pkey, scope, group, &out);
	if (pkey_ok && (group >> 28) == 0xe) {
		FZ_CHECK(rc == IBK_OK, "ipv4 refused: %d", rc);
		memset(tail, 0, 6);
		tail[6] = (uint8_t)(group >> 24 & 0x0f);
		tail[7] = (uint8_t)(group >> 16);
		tail[8] = (uint8_t)(group >> 8);
		tail[9] = (uint8_t)group;
		check_made(&out, pkey, scope, 4, tail);
	} else {
		FZ_CHECK(rc == IBK_EINVAL && ibk_gid_equal(&out, &untouched),
			 "ipv4 accepted P_Key %04x group %08x", pkey, group);
	}

	/* IPv4 broadcast */
	out = untouched;
	rc = ibk_gid_ipoib_broadcast(pkey, scope, &out);
	if (pkey_ok) {
		memset(tail, 0, 6);
		memset(tail + 6, 0xff, 4);
		FZ_CHECK(rc == IBK_OK, "broadcast refused: %d", rc);
		check_made(&out, pkey, scope, 4, tail);
	} else {
		FZ_CHECK(rc == IBK_EINVAL && ibk_gid_equal(&out, &untouched),
			 "broadcast accepted P_Key %04x", pkey);
	}

	/* IPv6 group: the input GID */
	out = untouched;
	rc = ibk_gid_ipoib_mgid_ipv6(pkey, scope, &g, &out);
	if (pkey_ok && g.raw[0] == 0xff) {
		FZ_CHECK(rc == IBK_OK, "ipv6 refused: %d", rc);
		check_made(&out, pkey, scope, 6, g.raw + 6);
	} else {
		FZ_CHECK(rc == IBK_EINVAL && ibk_gid_equal(&out, &untouched),
			 "ipv6 accepted P_Key %04x group byte %02x", pkey,
			 g.raw[0]);
	}
	return 0;
}
