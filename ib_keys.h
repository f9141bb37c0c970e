/* SPDX-License-Identifier: MIT */
/*
 * ib_keys.h - InfiniBand access-control primitives: P_Key and Q_Key rules,
 * GID/GUID values, wire accessors for LRH/GRH/BTH/DETH, and the per-packet
 * receive checks and send-side key selection that use them.
 *
 * C99, freestanding: needs only <stdint.h>, <stdbool.h> and <stddef.h>.
 * Everything is static inline, allocation-free and free of global state.
 * Keys are host order in the API and big-endian on the wire; the wire
 * accessors read and write byte by byte, so any alignment and any host
 * endianness work.
 *
 * "IBA" below is the InfiniBand Architecture Specification, Volume 1.
 */
#ifndef IBKEYS_IB_KEYS_H
#define IBKEYS_IB_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint16_t ibk_pkey_t;	/* partition key, host order */
typedef uint32_t ibk_qkey_t;	/* queue key, host order */
typedef uint64_t ibk_guid_t;	/* EUI-64 GUID, host order */

/* Big-endian field access, one byte at a time (compilers fuse these). */
static inline uint16_t ibk__load_be16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static inline uint32_t ibk__load_be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t ibk__load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t ibk__load_be64(const uint8_t *p)
{
	return (uint64_t)ibk__load_be32(p) << 32 | ibk__load_be32(p + 4);
}

static inline void ibk__store_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void ibk__store_be24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline void ibk__store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void ibk__store_be64(uint8_t *p, uint64_t v)
{
	ibk__store_be32(p, (uint32_t)(v >> 32));
	ibk__store_be32(p + 4, (uint32_t)v);
}

/*
 * Wire bytes taken least significant first, and the byte swaps that match
 * them: comparing a field loaded this way against a swapped constant needs
 * no per-packet swap on little-endian hosts, and stays exact on big-endian.
 */
static inline uint16_t ibk__load_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (unsigned)p[1] << 8);
}

static inline uint32_t ibk__load_le32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint16_t ibk__swap16(uint16_t v)
{
	return (uint16_t)(v >> 8 | (unsigned)v << 8);
}

static inline uint32_t ibk__swap32(uint32_t v)
{
	return v >> 24 | (v >> 8 & 0xff00u) | (v << 8 & 0xff0000u) | v << 24;
}

/* Replace the bits of *p selected by @mask with those of @v. */
static inline void ibk__store_bits(uint8_t *p, unsigned mask, unsigned v)
{
	*p = (uint8_t)((*p & ~mask) | (v & mask));
}

/* ------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------ */

enum ibk_error {
	IBK_OK        =  0,
	IBK_EINVAL    = -1,	/* bad argument: NULL, invalid key, malformed text */
	IBK_ERANGE    = -2,	/* port, index or capacity argument out of range */
	IBK_ENOENT    = -3,	/* empty slot, or value not in the table */
	IBK_ENOTREADY = -4,	/* port not ARMED/ACTIVE: table contents undefined */
	IBK_ESTALE    = -5,	/* table changed (event pending refill, or reference stale) */
	IBK_ENOSPC    = -6,	/* more entries than the table's capacity */
	IBK_EBUSY     = -7,	/* another writer holds the table (try-write only) */
};

/* Short constant text for an IBK_* code; "unknown error" for anything else. */
static inline const char *ibk_strerror(int err)
{
	switch (err) {
	case IBK_OK:		return "success";
	case IBK_EINVAL:	return "invalid argument";
	case IBK_ERANGE:	return "argument out of range";
	case IBK_ENOENT:	return "no such entry";
	case IBK_ENOTREADY:	return "port not armed or active";
	case IBK_ESTALE:	return "table changed";
	case IBK_ENOSPC:	return "table full";
	case IBK_EBUSY:		return "table busy";
	default:		return "unknown error";
	}
}

/* ------------------------------------------------------------------------
 * P_Key (IBA 10.9, partitioning)
 *
 * Bit 15 is the membership type (1 full, 0 limited), bits 0-14 the base,
 * which names the partition. Base 0 is the invalid key (0x0000, 0x8000).
 * ------------------------------------------------------------------------ */

#define IBK_PKEY_FULL_MEMBER		0x8000u
#define IBK_PKEY_BASE_MASK		0x7fffu
#define IBK_PKEY_DEFAULT		0xffffu	/* default partition, full */
#define IBK_PKEY_DEFAULT_LIMITED	0x7fffu	/* default partition, limited */
#define IBK_PKEY_INVALID		0x0000u	/* what an empty table slot holds */

/* The P_Key of partition @base (bit 15 of @base is ignored), full or limited. */
static inline ibk_pkey_t ibk_pkey_make(uint16_t base, bool full)
{
	return (ibk_pkey_t)((base & IBK_PKEY_BASE_MASK) |
			    ((unsigned)full << 15));
}

/* The partition (bits 0-14) that @pkey names. */
static inline uint16_t ibk_pkey_base(ibk_pkey_t pkey)
{
	return (uint16_t)(pkey & IBK_PKEY_BASE_MASK);
}

/* True if @pkey carries full membership (bit 15 set). */
static inline bool ibk_pkey_is_full(ibk_pkey_t pkey)
{
	return (pkey & IBK_PKEY_FULL_MEMBER) != 0;
}

/* False for the invalid P_Key: base 0, with either membership bit. */
static inline bool ibk_pkey_is_valid(ibk_pkey_t pkey)
{
	return (pkey & IBK_PKEY_BASE_MASK) != 0;
}

/* @pkey with the membership bit set: the full-member key of its partition. */
static inline ibk_pkey_t ibk_pkey_to_full(ibk_pkey_t pkey)
{
	return (ibk_pkey_t)(pkey | IBK_PKEY_FULL_MEMBER);
}

/* @pkey with the membership bit clear: the limited key of its partition. */
static inline ibk_pkey_t ibk_pkey_to_limited(ibk_pkey_t pkey)
{
	return (ibk_pkey_t)(pkey & IBK_PKEY_BASE_MASK);
}

/*
 * The P_Key match rule folded into one masked compare against one side's
 * key: a peer key k passes iff (k & mask) == want. For a valid own key,
 * mask covers the base and, when the own key is limited, the peer's full
 * bit, which want then requires to be 1. For an invalid own key mask is 0
 * and want is 1, so nothing passes. Built without branches.
 */
struct ibk__pkey_filter {
	uint16_t mask;
	uint16_t want;
};

static inline struct ibk__pkey_filter ibk__pkey_filter(ibk_pkey_t own)
{
	struct ibk__pkey_filter f;
	unsigned valid = (own & IBK_PKEY_BASE_MASK) != 0;
	unsigned need_full = ~(unsigned)own & IBK_PKEY_FULL_MEMBER;
	unsigned mask = (IBK_PKEY_BASE_MASK | need_full) & (0u - valid);

	f.mask = (uint16_t)mask;
	f.want = (uint16_t)((((unsigned)own ^ IBK_PKEY_FULL_MEMBER) & mask) |
			    (valid ^ 1u));
	return f;
}

static inline bool ibk__pkey_pass(struct ibk__pkey_filter f, ibk_pkey_t peer)
{
	return (peer & f.mask) == f.want;
}

/*
 * True if QPs holding @a and @b may talk (IBA 10.9): equal, non-zero bases
 * and at least one full member. Limited-limited never matches, and an
 * invalid key matches nothing, itself included. Symmetric; branch-free:
 * the three conditions are combined with '&', not '&&'. (Checks of many
 * keys against one use the precomputed filter above instead.)
 */
static inline bool ibk_pkey_match(ibk_pkey_t a, ibk_pkey_t b)
{
	unsigned same_base = ((a ^ b) & IBK_PKEY_BASE_MASK) == 0;
	unsigned valid = (a & IBK_PKEY_BASE_MASK) != 0;
	unsigned one_full = ((unsigned)(a | b) & IBK_PKEY_FULL_MEMBER) >> 15;

	return (same_base & valid & one_full) != 0;
}

/*
 * Checks n packet P_Keys against one QP's key by ibk_pkey_match(): sets
 * match[i] to 1 or 0 and returns the number of matches. @pkt_pkeys and
 * @match may be NULL when n is 0.
 *
 * Branch-free and vectorised: whole chunks of 16 keys have a fixed trip
 * count, results land in a chunk-local array (so no aliasing check is
 * needed) and are summed in a byte, which is what lets gcc's -O2 cost
 * model and clang turn the chunk into a few vector instructions.
 */
static inline size_t ibk_pkey_match_burst(ibk_pkey_t qp_pkey,
					  const ibk_pkey_t *pkt_pkeys,
					  uint8_t *match, size_t n)
{
	struct ibk__pkey_filter f = ibk__pkey_filter(qp_pkey);
	size_t count = 0;
	size_t i = 0;
	size_t j;

	for (; n - i >= 16; i += 16) {
		uint8_t chunk[16];
		uint8_t chunk_count = 0;

		for (j = 0; j < 16; j++) {
			chunk[j] = (uint8_t)ibk__pkey_pass(f, pkt_pkeys[i + j]);
			chunk_count = (uint8_t)(chunk_count + chunk[j]);
		}
		for (j = 0; j < 16; j++)
			match[i + j] = chunk[j];
		count += chunk_count;
	}
	for (; i < n; i++) {
		match[i] = (uint8_t)ibk__pkey_pass(f, pkt_pkeys[i]);
		count += match[i];
	}
	return count;
}

/* ------------------------------------------------------------------------
 * Q_Key (datagram QPs; IBA Q_Key rules)
 *
 * 0x00000000-0x7fffffff  free for anyone
 * 0x80000000-0x8000ffff  controlled, for general use by applications
 * 0x80010000-0x8fffffff  controlled, reserved; 0x80010000 is the GSI key
 * 0x90000000-0xffffffff  controlled, unassigned
 * ------------------------------------------------------------------------ */

#define IBK_QKEY_CONTROLLED	0x80000000u	/* MSB: controlled Q_Key */
#define IBK_QKEY_GSI		0x80010000u	/* well-known QP1 (GSI) Q_Key */
#define IBK_QKEY_IPOIB		0x00000b1bu	/* customary IPoIB Q_Key */

enum ibk_qkey_class {
	IBK_QKEY_CLASS_FREE,		/* 0x00000000-0x7fffffff */
	IBK_QKEY_CLASS_APP_CONTROLLED,	/* 0x80000000-0x8000ffff */
	IBK_QKEY_CLASS_RESERVED,	/* 0x80010001-0x8fffffff */
	IBK_QKEY_CLASS_GSI,		/* 0x80010000 */
	IBK_QKEY_CLASS_UNASSIGNED,	/* 0x90000000-0xffffffff */
};

/* True for a controlled ("privileged") Q_Key: its MSB is set. */
static inline bool ibk_qkey_is_controlled(ibk_qkey_t qkey)
{
	return (qkey & IBK_QKEY_CONTROLLED) != 0;
}

/*
 * The Q_Key a datagram send puts in its DETH: the QP context's Q_Key when
 * the work request's has its MSB set, else the work request's own. This is
 * how a controlled Q_Key stays under the control of whoever set up the QP.
 */
static inline ibk_qkey_t ibk_qkey_select(ibk_qkey_t wr_qkey, ibk_qkey_t qp_qkey)
{
	return ibk_qkey_is_controlled(wr_qkey) ? qp_qkey : wr_qkey;
}

/*
 * True if a received datagram is accepted: its Q_Key equals the QP's. A
 * mismatch is a Q_Key violation: drop silently, count it, leave the QP be.
 */
static inline bool ibk_qkey_match(ibk_qkey_t pkt_qkey, ibk_qkey_t qp_qkey)
{
	return pkt_qkey == qp_qkey;
}

/* True if @qkey may go into a QP context: controlled keys need privilege. */
static inline bool ibk_qkey_may_set(ibk_qkey_t qkey, bool caller_privileged)
{
	return !ibk_qkey_is_controlled(qkey) || caller_privileged;
}

/* Which of the Q_Key ranges above @qkey falls in (GSI key on its own). */
static inline enum ibk_qkey_class ibk_qkey_classify(ibk_qkey_t qkey)
{
	if (qkey < 0x80000000u)
		return IBK_QKEY_CLASS_FREE;
	if (qkey <= 0x8000ffffu)
		return IBK_QKEY_CLASS_APP_CONTROLLED;
	if (qkey == IBK_QKEY_GSI)
		return IBK_QKEY_CLASS_GSI;
	if (qkey <= 0x8fffffffu)
		return IBK_QKEY_CLASS_RESERVED;
	return IBK_QKEY_CLASS_UNASSIGNED;
}

/* Constant name of a Q_Key class; "unknown" for a value outside the enum. */
static inline const char *ibk_qkey_class_name(enum ibk_qkey_class cls)
{
	switch (cls) {
	case IBK_QKEY_CLASS_FREE:		return "free";
	case IBK_QKEY_CLASS_APP_CONTROLLED:	return "controlled-app";
	case IBK_QKEY_CLASS_RESERVED:		return "reserved";
	case IBK_QKEY_CLASS_GSI:		return "gsi";
	case IBK_QKEY_CLASS_UNASSIGNED:		return "controlled-unassigned";
	default:				return "unknown";
	}
}

/* ------------------------------------------------------------------------
 * GUID / GID values
 *
 * A GID is 128 bits in network order: subnet prefix (upper 64) then the
 * interface id, an EUI-64 GUID (lower 64). It has the IPv6 address layout
 * (RFC 4291), and struct ibk_gid is byte-compatible with libibverbs'
 * union ibv_gid.
 * ------------------------------------------------------------------------ */

#define IBK_GID_DEFAULT_PREFIX	UINT64_C(0xfe80000000000000)

/* Multicast scope nibbles (RFC 4291 2.7) for the IPoIB MGIDs below. */
#define IBK_GID_SCOPE_LINK	0x2u
#define IBK_GID_SCOPE_SITE	0x5u
#define IBK_GID_SCOPE_ORG	0x8u
#define IBK_GID_SCOPE_GLOBAL	0xeu

struct ibk_gid {
	uint8_t raw[16];
};

/* The GID @subnet_prefix:@guid, both stored big-endian. */
static inline struct ibk_gid ibk_gid_make(uint64_t subnet_prefix,
					  ibk_guid_t guid)
{
	struct ibk_gid gid;

	ibk__store_be64(gid.raw, subnet_prefix);
	ibk__store_be64(gid.raw + 8, guid);
	return gid;
}

/* The upper 64 bits of @gid: its subnet prefix. */
static inline uint64_t ibk_gid_subnet_prefix(const struct ibk_gid *gid)
{
	return ibk__load_be64(gid->raw);
}

/* The lower 64 bits of @gid: the interface id, a port GUID for IB. */
static inline ibk_guid_t ibk_gid_guid(const struct ibk_gid *gid)
{
	return ibk__load_be64(gid->raw + 8);
}

/* True if all 128 bits are equal (compared without early exit). */
static inline bool ibk_gid_equal(const struct ibk_gid *a,
				 const struct ibk_gid *b)
{
	unsigned diff = 0;
	int i;

	for (i = 0; i < 16; i++)
		diff |= (unsigned)(a->raw[i] ^ b->raw[i]);
	return diff == 0;
}

/* True for the all-zero GID, which marks an empty GID table slot. */
static inline bool ibk_gid_is_zero(const struct ibk_gid *gid)
{
	unsigned bits = 0;
	int i;

	for (i = 0; i < 16; i++)
		bits |= gid->raw[i];
	return bits == 0;
}

/* True for an IPv4-mapped GID, ::ffff:0:0/96 (RFC 4291 2.5.5.2). */
static inline bool ibk_gid_is_v4mapped(const struct ibk_gid *gid)
{
	unsigned bits = 0;
	int i;

	for (i = 0; i < 10; i++)
		bits |= gid->raw[i];
	return bits == 0 && gid->raw[10] == 0xff && gid->raw[11] == 0xff;
}

/*
 * True for a multicast GID: first byte 0xff (RFC 4291 2.7), or the
 * IPv4-mapped GID of an IPv4 multicast address, ::ffff:224.0.0.0/100, as
 * RoCE v2 carries IPv4 groups (Linux rdma_is_multicast_addr()).
 */
static inline bool ibk_gid_is_multicast(const struct ibk_gid *gid)
{
	return gid->raw[0] == 0xff ||
	       (ibk_gid_is_v4mapped(gid) && (gid->raw[12] & 0xf0) == 0xe0);
}

/* True for a link-local unicast GID, fe80::/10 (RFC 4291 2.5.6). */
static inline bool ibk_gid_is_link_local(const struct ibk_gid *gid)
{
	return gid->raw[0] == 0xfe && (gid->raw[1] & 0xc0) == 0x80;
}

/*
 * The IPv4-mapped GID ::ffff:a.b.c.d for @ipv4 = 0xaabbccdd (host order),
 * the form a RoCE v2 GID takes for an IPv4 address (RFC 4291 2.5.5.2).
 */
static inline struct ibk_gid ibk_gid_from_ipv4(uint32_t ipv4)
{
	struct ibk_gid gid;

	ibk__store_be64(gid.raw, 0);
	ibk__store_be32(gid.raw + 8, 0x0000ffffu);
	ibk__store_be32(gid.raw + 12, ipv4);
	return gid;
}

/*
 * The IPv4 address (host order) in the last 32 bits of @gid; the caller
 * checks ibk_gid_is_v4mapped() first.
 */
static inline uint32_t ibk_gid_to_ipv4(const struct ibk_gid *gid)
{
	return ibk__load_be32(gid->raw + 12);
}

/*
 * The MAC's default GID, gid[0] of a RoCE port with Ethernet address
 * @mac: fe80::/64 followed by the modified EUI-64 interface id, i.e. ff:fe
 * inserted between the third and fourth bytes and the universal/local bit
 * (0x02 of the first byte) inverted (RFC 4291 appendix A, RFC 2464 4).
 * The value does not say the GID's type: the kernel lists it once per type
 * the port supports (RoCE v1 and v2; soft-RoCE v2 only).
 */
static inline struct ibk_gid ibk_gid_from_mac(const uint8_t mac[6])
{
	struct ibk_gid gid;

	ibk__store_be64(gid.raw, IBK_GID_DEFAULT_PREFIX);
	gid.raw[8] = (uint8_t)(mac[0] ^ 0x02);
	gid.raw[9] = mac[1];
	gid.raw[10] = mac[2];
	gid.raw[11] = 0xff;
	gid.raw[12] = 0xfe;
	gid.raw[13] = mac[3];
	gid.raw[14] = mac[4];
	gid.raw[15] = mac[5];
	return gid;
}

/*
 * The inverse of ibk_gid_from_mac(): writes the MAC whose modified EUI-64
 * is @gid's interface id and returns IBK_OK. Returns IBK_EINVAL if either
 * pointer is NULL or the interface id lacks ff:fe at bytes 11-12 (it was
 * not made from a MAC). The subnet prefix is not checked.
 */
static inline int ibk_gid_to_mac(const struct ibk_gid *gid, uint8_t mac[6])
{
	if (!gid || !mac || gid->raw[11] != 0xff || gid->raw[12] != 0xfe)
		return IBK_EINVAL;
	mac[0] = (uint8_t)(gid->raw[8] ^ 0x02);
	mac[1] = gid->raw[9];
	mac[2] = gid->raw[10];
	mac[3] = gid->raw[13];
	mac[4] = gid->raw[14];
	mac[5] = gid->raw[15];
	return IBK_OK;
}

/*
 * IPoIB multicast GIDs (RFC 4391 4): ff1S:SSSS:PPPP followed by a mapping
 * of the IP group, with S the scope nibble (only the low 4 bits of @scope
 * are used), SSSS the signature (401b IPv4, 601b IPv6) and PPPP the P_Key
 * with the full-member bit forced on. A P_Key of base 0 is refused: it
 * would give PPPP = 8000, which no partition has. Each returns IBK_OK, or
 * IBK_EINVAL and leaves *@out alone.
 */
#define IBK__IPOIB_SIGNATURE_IPV4 0x401bu
#define IBK__IPOIB_SIGNATURE_IPV6 0x601bu

static inline void ibk__ipoib_mgid_head(struct ibk_gid *out, ibk_pkey_t pkey,
					unsigned scope, uint16_t signature)
{
	out->raw[0] = 0xff;
	out->raw[1] = (uint8_t)(0x10 | (scope & 0x0f));
	ibk__store_be16(out->raw + 2, signature);
	ibk__store_be16(out->raw + 4, ibk_pkey_to_full(pkey));
}

/*
 * The IPv4 broadcast MGID of partition @pkey into *@out:
 * ff1S:401b:PPPP::ffff:ffff, what an IPoIB interface joins first. IPv6 has
 * no broadcast MGID (Linux IPoIB never joins one).
 */
static inline int ibk_gid_ipoib_broadcast(ibk_pkey_t pkey, unsigned scope,
					  struct ibk_gid *out)
{
	if (!out || !ibk_pkey_is_valid(pkey))
		return IBK_EINVAL;
	ibk__ipoib_mgid_head(out, pkey, scope, IBK__IPOIB_SIGNATURE_IPV4);
	ibk__store_be16(out->raw + 6, 0);
	ibk__store_be32(out->raw + 8, 0);
	ibk__store_be32(out->raw + 12, 0xffffffffu);
	return IBK_OK;
}

/*
 * The MGID of IPv4 multicast group @group (host order, 224.0.0.0/4) in
 * partition @pkey into *@out: ff1S:401b:PPPP:0:0:0 followed by the low 28
 * bits of the group (Linux ip_ib_mc_map()). IBK_EINVAL also for a @group
 * that is not multicast.
 */
static inline int ibk_gid_ipoib_mgid_ipv4(ibk_pkey_t pkey, unsigned scope,
					  uint32_t group, struct ibk_gid *out)
{
	if (!out || !ibk_pkey_is_valid(pkey) || (group >> 28) != 0xe)
		return IBK_EINVAL;
	ibk__ipoib_mgid_head(out, pkey, scope, IBK__IPOIB_SIGNATURE_IPV4);
	ibk__store_be16(out->raw + 6, 0);
	ibk__store_be32(out->raw + 8, 0);
	ibk__store_be32(out->raw + 12, group & 0x0fffffffu);
	return IBK_OK;
}

/*
 * The MGID of IPv6 multicast group @group (ff00::/8, in the GID layout) in
 * partition @pkey into *@out: ff1S:601b:PPPP followed by the low 80 bits
 * of the group (Linux ipv6_ib_mc_map()); all-nodes ff02::1 gives
 * ff12:601b:PPPP::1. IBK_EINVAL also for a @group that is not multicast.
 */
static inline int ibk_gid_ipoib_mgid_ipv6(ibk_pkey_t pkey, unsigned scope,
					  const struct ibk_gid *group,
					  struct ibk_gid *out)
{
	int i;

	if (!out || !group || !ibk_pkey_is_valid(pkey) ||
	    group->raw[0] != 0xff)
		return IBK_EINVAL;
	ibk__ipoib_mgid_head(out, pkey, scope, IBK__IPOIB_SIGNATURE_IPV6);
	for (i = 6; i < 16; i++)
		out->raw[i] = group->raw[i];
	return IBK_OK;
}

/*
 * Recognises an IPoIB MGID of either family, as the functions above make
 * them: ff1S, a 401b or 601b signature, a valid full-member P_Key, and for
 * IPv4 zeros up to the group's 28 bits or the broadcast ffff:ffff. Fills
 * the non-NULL ones of @pkey, @scope and @ipv6 and returns IBK_OK; else
 * IBK_EINVAL.
 */
static inline int ibk_gid_ipoib_mgid_parse(const struct ibk_gid *gid,
					   ibk_pkey_t *pkey, unsigned *scope,
					   bool *ipv6)
{
	uint16_t signature, key;
	uint32_t low;

	if (!gid || gid->raw[0] != 0xff || (gid->raw[1] & 0xf0) != 0x10)
		return IBK_EINVAL;
	signature = ibk__load_be16(gid->raw + 2);
	key = ibk__load_be16(gid->raw + 4);
	if (!ibk_pkey_is_full(key) || !ibk_pkey_is_valid(key))
		return IBK_EINVAL;
	if (signature == IBK__IPOIB_SIGNATURE_IPV4) {
		low = ibk__load_be32(gid->raw + 12);
		if (ibk__load_be16(gid->raw + 6) != 0 ||
		    ibk__load_be32(gid->raw + 8) != 0 ||
		    (low > 0x0fffffffu && low != 0xffffffffu))
			return IBK_EINVAL;
	} else if (signature != IBK__IPOIB_SIGNATURE_IPV6) {
		return IBK_EINVAL;
	}
	if (pkey)
		*pkey = key;
	if (scope)
		*scope = gid->raw[1] & 0x0fu;
	if (ipv6)
		*ipv6 = signature == IBK__IPOIB_SIGNATURE_IPV6;
	return IBK_OK;
}

/* ------------------------------------------------------------------------
 * GID / GUID text
 *
 * A GID is written two ways: compressed as RFC 5952 and glibc's inet_ntop()
 * do, "fe80::2:c903:1:2345" (tshark, the IP stack), and in full, eight
 * groups of four digits (RFC 4291 2.2 form 1),
 * "fe80:0000:0000:0000:0002:c903:0001:2345" (ibv_devinfo, sysfs). A GUID
 * as "0x0002c90300012345" (ibstat) or "0002:c903:0001:2345". Buffer sizes
 * count the terminating NUL. No function here calls libc.
 * ------------------------------------------------------------------------ */

#define IBK_GID_STRLEN		46	/* == INET6_ADDRSTRLEN */
#define IBK_GID_FULL_STRLEN	40	/* 8 groups of 4, 7 ':' */
#define IBK_GUID_STRLEN		20	/* the longer of the two GUID forms */

/* The value of hex digit @c in either case, or -1 if @c is not one. */
static inline int ibk__hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Read the run of hex digits at *@sp into *@val and move *@sp past it.
 * Returns the number of digits (0 if none), or IBK_EINVAL if the run is
 * longer than @max_digits.
 */
static inline int ibk__hex_field(const char **sp, int max_digits,
				 uint64_t *val)
{
	const char *s = *sp;
	uint64_t v = 0;
	int digits = 0, d;

	while ((d = ibk__hex_value(*s)) >= 0) {
		if (digits == max_digits)
			return IBK_EINVAL;
		v = v << 4 | (uint64_t)d;
		digits++;
		s++;
	}
	*sp = s;
	*val = v;
	return digits;
}

/*
 * Write the 16-bit group @v in lowercase hex, with at least @min_digits
 * digits (1: leading zeros dropped, RFC 5952 4.1; 4: the full form).
 * Returns the position after the last digit written.
 */
static inline char *ibk__put_group(char *p, unsigned v, int min_digits)
{
	int shift;

	for (shift = 12; shift >= 0; shift -= 4)
		if ((v >> shift) != 0 || shift < 4 * min_digits)
			*p++ = "0123456789abcdef"[(v >> shift) & 0xf];
	return p;
}

/*
 * Write @n big-endian 16-bit groups from @be as four hex digits each,
 * ':'-separated if @colons. Returns the position after the last digit.
 */
static inline char *ibk__put_full_groups(char *p, const uint8_t *be,
					 unsigned n, bool colons)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		if (colons && i != 0)
			*p++ = ':';
		p = ibk__put_group(p, ibk__load_be16(be + 2 * i), 4);
	}
	return p;
}

/* Write @v in decimal, no leading zeros; returns the position after it. */
static inline char *ibk__put_dec8(char *p, unsigned v)
{
	if (v >= 100)
		*p++ = (char)('0' + v / 100);
	if (v >= 10)
		*p++ = (char)('0' + v / 10 % 10);
	*p++ = (char)('0' + v % 10);
	return p;
}

/*
 * The compressed text of @g into @buf, NUL-terminated: byte for byte what
 * glibc's inet_ntop(AF_INET6) writes, so logs and tools agree.
 * RFC 5952: no leading zeros (4.1); the longest run of two or more zero
 * groups becomes "::" (4.2.1), a lone zero group stays "0" (4.2.2), the
 * first of equal runs wins (4.2.3); lowercase (4.3). Like glibc, the last 32 bits are written as a dotted
 * quad in two cases only, both decided by the zero run that opens the
 * address (RFC 4291 2.5.5):
 *  - IPv4-mapped: exactly five zero groups, then 0xffff: "::ffff:a.b.c.d"
 *    for every a.b.c.d ("::ffff:0:0" prints "::ffff:0.0.0.0");
 *  - IPv4-compatible: exactly six zero groups, i.e. group 6 is non-zero:
 *    "::0.1.0.0" prints dotted, but "::0.0.0.1" prints "::1", "::0.0.1.2"
 *    prints "::102" and "::" stays "::".
 * Returns @buf, or NULL if @g or @buf is NULL.
 */
static inline char *ibk_gid_ntop(const struct ibk_gid *g,
				 char buf[IBK_GID_STRLEN])
{
	unsigned best = 0, best_len = 0, run = 0, i, groups;
	char *p = buf;

	if (g == NULL || buf == NULL)
		return NULL;
	for (i = 0; i < 8; i++) {
		run = ibk__load_be16(g->raw + 2 * i) == 0 ? run + 1 : 0;
		if (run > best_len) {
			best = i + 1 - run;
			best_len = run;
		}
	}
	if (best_len < 2)
		best_len = 0;
	groups = best == 0 && (best_len == 6 || (best_len == 5 &&
			       ibk__load_be16(g->raw + 10) == 0xffff)) ? 6 : 8;

	for (i = 0; i < groups; ) {
		if (best_len != 0 && i == best) {
			*p++ = ':';
			i += best_len;
			if (i == 8)
				*p++ = ':';
			continue;
		}
		if (i != 0)
			*p++ = ':';
		p = ibk__put_group(p, ibk__load_be16(g->raw + 2 * i), 1);
		i++;
	}
	if (groups == 6) {
		*p++ = ':';
		for (i = 12; i < 16; i++) {
			if (i != 12)
				*p++ = '.';
			p = ibk__put_dec8(p, g->raw[i]);
		}
	}
	*p = '\0';
	return buf;
}

/*
 * Parse a dotted quad ending the string at @s into @dst, with glibc's
 * inet_pton() rules: exactly four decimal octets of value 0-255, no empty
 * octet, no leading zero ("0" alone is fine, "00" and "01" are not).
 */
static inline int ibk__ipv4_pton(const char *s, uint8_t dst[4])
{
	unsigned i, v;
	int digits;

	for (i = 0; i < 4; i++) {
		if (i != 0 && *s++ != '.')
			return IBK_EINVAL;
		for (v = 0, digits = 0; *s >= '0' && *s <= '9'; s++) {
			if (digits++ != 0 && v == 0)
				return IBK_EINVAL;
			v = v * 10 + (unsigned)(*s - '0');
			if (v > 255)
				return IBK_EINVAL;
		}
		if (digits == 0)
			return IBK_EINVAL;
		dst[i] = (uint8_t)v;
	}
	return *s == '\0' ? 0 : IBK_EINVAL;
}

/*
 * Parse the RFC 4291 2.2 text @text into @out. Accepts exactly what glibc's
 * inet_pton(AF_INET6) accepts, so a GID that a tool printed always reads
 * back: groups of one to four hex digits in either case (five are refused,
 * even "00001"); at most one "::", which stands for one or more zero groups
 * (so "1:2:3:4:5:6:7::" is valid, "1:2:3:4:5:6:7:8::" is not); an optional
 * dotted-quad IPv4 tail as the last 32 bits, octets 0-255 without leading
 * zeros. No zone id ("%eth0"), prefix length, brackets, spaces or other
 * trailing characters; an embedded NUL ends the text.
 * Returns 0, or IBK_EINVAL for NULL @text or @out or malformed text, in
 * which case @out is left untouched.
 */
static inline int ibk_gid_pton(const char *text, struct ibk_gid *out)
{
	struct ibk_gid gid;	/* bytes [0, n) parsed so far */
	uint8_t *b = gid.raw;
	unsigned n = 0, gap = 0, i, tail;
	bool have_gap = false;
	const char *s = text;

	if (text == NULL || out == NULL)
		return IBK_EINVAL;
	if (*s == ':' && *++s != ':')	/* a leading ':' only as "::" */
		return IBK_EINVAL;
	for (;;) {
		const char *field = s;
		uint64_t v;
		int digits = ibk__hex_field(&s, 4, &v);

		if (digits < 0)
			return IBK_EINVAL;
		if (*s == '.') {
			if (n > 12 || ibk__ipv4_pton(field, b + n) != 0)
				return IBK_EINVAL;
			n += 4;
			break;
		}
		if (digits == 0) {
			/* Empty text, or the end or middle of a "::". */
			if (*s == '\0')
				break;
			if (*s != ':' || have_gap)
				return IBK_EINVAL;
			have_gap = true;
			gap = n;
			s++;
			continue;
		}
		if (n == 16)
			return IBK_EINVAL;
		ibk__store_be16(b + n, (uint16_t)v);
		n += 2;
		if (*s == '\0')
			break;
		if (*s != ':' || *++s == '\0')	/* no trailing single ':' */
			return IBK_EINVAL;
	}

	if (have_gap) {
		if (n == 16)		/* "::" must stand for a zero group */
			return IBK_EINVAL;
		tail = n - gap;
		for (i = 1; i <= tail; i++)
			b[16 - i] = b[n - i];
		for (i = gap; i < 16 - tail; i++)
			b[i] = 0;
	} else if (n != 16) {
		return IBK_EINVAL;
	}
	*out = gid;
	return 0;
}

/*
 * The full text of @g, eight groups of exactly four lowercase hex digits
 * ("fe80:0000:0000:0000:0002:c903:0001:2345", RFC 4291 2.2 form 1), the
 * form ibv_devinfo prints and sysfs .../gids/N holds, so it compares equal
 * to theirs as a string. Returns @buf, or NULL if @g or @buf is NULL.
 */
static inline char *ibk_gid_ntop_full(const struct ibk_gid *g,
				      char buf[IBK_GID_FULL_STRLEN])
{
	if (g == NULL || buf == NULL)
		return NULL;
	*ibk__put_full_groups(buf, g->raw, 8, true) = '\0';
	return buf;
}

/*
 * @guid as "0x" and sixteen lowercase hex digits ("0x0002c90300012345"),
 * the form ibstat and OpenSM print. Returns @buf, or NULL if it is NULL.
 */
static inline char *ibk_guid_ntop(ibk_guid_t guid, char buf[IBK_GUID_STRLEN])
{
	uint8_t be[8];

	if (buf == NULL)
		return NULL;
	ibk__store_be64(be, guid);
	buf[0] = '0';
	buf[1] = 'x';
	*ibk__put_full_groups(buf + 2, be, 4, false) = '\0';
	return buf;
}

/*
 * @guid as four ':'-separated groups of four lowercase hex digits
 * ("0002:c903:0001:2345"), the interface-id half of a full-form GID as
 * sysfs node_guid/sys_image_guid show it. Returns @buf, or NULL if it is
 * NULL.
 */
static inline char *ibk_guid_ntop_colon(ibk_guid_t guid,
					char buf[IBK_GUID_STRLEN])
{
	uint8_t be[8];

	if (buf == NULL)
		return NULL;
	ibk__store_be64(be, guid);
	*ibk__put_full_groups(buf, be, 4, true) = '\0';
	return buf;
}

/*
 * Parse a GUID in either printed form into @out: "0x" or "0X" and one to
 * sixteen hex digits (ibstat), or exactly four ':'-separated groups of
 * exactly four hex digits (sysfs); digits in either case. Nothing else:
 * no sign, no spaces, no trailing characters, no bare digits.
 * Returns 0, or IBK_EINVAL for NULL @text or @out or any other text, in
 * which case @out is left untouched.
 */
static inline int ibk_guid_pton(const char *text, ibk_guid_t *out)
{
	const char *s = text;
	uint64_t v = 0, group;
	unsigned i;

	if (text == NULL || out == NULL)
		return IBK_EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		if (ibk__hex_field(&s, 16, &v) < 1)
			return IBK_EINVAL;
	} else {
		for (i = 0; i < 4; i++) {
			if (i != 0 && *s++ != ':')
				return IBK_EINVAL;
			if (ibk__hex_field(&s, 4, &group) != 4)
				return IBK_EINVAL;
			v = v << 16 | group;
		}
	}
	if (*s != '\0')
		return IBK_EINVAL;
	*out = v;
	return 0;
}

/* ------------------------------------------------------------------------
 * Wire layouts (IBA 7.7 LRH, 8.3 GRH, 9.2 BTH, 9.3 DETH, RETH, AtomicETH,
 * IETH, AETH), all big-endian
 *
 * Getters take a pointer to the start of their header, setters likewise;
 * any alignment. A setter changes only its own field's bits and ignores
 * value bits beyond the field's width.
 * ------------------------------------------------------------------------ */

#define IBK_LRH_LEN	8
#define IBK_GRH_LEN	40
#define IBK_BTH_LEN	12
#define IBK_DETH_LEN	8

/* LRH Link Next Header: what follows the LRH. */
#define IBK_LNH_RAW	0	/* raw packet, no IBA transport */
#define IBK_LNH_IPV6	1	/* raw IPv6 */
#define IBK_LNH_BTH	2	/* IBA local: BTH next */
#define IBK_LNH_GRH	3	/* IBA global: GRH next */

#define IBK_GRH_NXTHDR_BTH	0x1b	/* GRH NxtHdr value for an IBA BTH */

/* BTH OpCode bits 7-5: the transport service (IBA 9.2, table 38). */
#define IBK_OPCODE_TRANSPORT_MASK	0xe0
#define IBK_TRANSPORT_RC		0x00	/* reliable connection */
#define IBK_TRANSPORT_UC		0x20	/* unreliable connection */
#define IBK_TRANSPORT_RD		0x40	/* reliable datagram */
#define IBK_TRANSPORT_UD		0x60	/* unreliable datagram */
#define IBK_TRANSPORT_CNP		0x80	/* congestion notification */

/* The only UD opcodes, both followed by a DETH. */
#define IBK_OPCODE_UD_SEND_ONLY		0x64
#define IBK_OPCODE_UD_SEND_ONLY_IMM	0x65

/* The BTH TVer every receiver accepts (IBA 9.2; rxe hdr_check()). */
#define IBK_BTH_TVER			0

/*
 * BTH OpCode bits 4-0: the operation (IBA 9.2 table 38, libibverbs
 * <infiniband/opcode.h>). An opcode is a transport ORed with one of these;
 * RC has every one, UC the SENDs and RDMA WRITEs, RD all but the
 * invalidates, FLUSH and ATOMIC WRITE, UD SEND ONLY with or without
 * immediate. FLUSH and ATOMIC WRITE are RC only (IBA 1.5, rxe_opcode.c).
 */
#define IBK_OPCODE_OP_MASK		0x1f
#define IBK_OP_SEND_FIRST		0x00
#define IBK_OP_SEND_MIDDLE		0x01
#define IBK_OP_SEND_LAST		0x02
#define IBK_OP_SEND_LAST_IMM		0x03
#define IBK_OP_SEND_ONLY		0x04
#define IBK_OP_SEND_ONLY_IMM		0x05
#define IBK_OP_RDMA_WRITE_FIRST		0x06
#define IBK_OP_RDMA_WRITE_MIDDLE	0x07
#define IBK_OP_RDMA_WRITE_LAST		0x08
#define IBK_OP_RDMA_WRITE_LAST_IMM	0x09
#define IBK_OP_RDMA_WRITE_ONLY		0x0a
#define IBK_OP_RDMA_WRITE_ONLY_IMM	0x0b
#define IBK_OP_RDMA_READ_REQUEST	0x0c
#define IBK_OP_RDMA_READ_RESPONSE_FIRST	0x0d
#define IBK_OP_RDMA_READ_RESPONSE_MIDDLE 0x0e
#define IBK_OP_RDMA_READ_RESPONSE_LAST	0x0f
#define IBK_OP_RDMA_READ_RESPONSE_ONLY	0x10
#define IBK_OP_ACKNOWLEDGE		0x11
#define IBK_OP_ATOMIC_ACKNOWLEDGE	0x12
#define IBK_OP_COMPARE_SWAP		0x13
#define IBK_OP_FETCH_ADD		0x14
#define IBK_OP_SEND_LAST_INV		0x16
#define IBK_OP_SEND_ONLY_INV		0x17
#define IBK_OP_FLUSH			0x1c
#define IBK_OP_ATOMIC_WRITE		0x1d

/* Extension headers after the BTH (IBA 9.3; rxe_hdr.h). */
#define IBK_RETH_LEN		16	/* VA @0, R_Key @8, DMA length @12 */
#define IBK_ATOMICETH_LEN	28	/* VA @0, R_Key @8, swap/add @12, compare @20 */
#define IBK_IETH_LEN		4	/* R_Key to invalidate */
#define IBK_AETH_LEN		4	/* syndrome @0, MSN @1-3 */
#define IBK_IMMDT_LEN		4	/* immediate data */

/*
 * LRH, 8 bytes: byte 0 VL(4) LVer(4); byte 1 SL(4) reserved(2) LNH(2);
 * DLID @2; bytes 4-5 reserved(5) PktLen(11, in 4-byte words); SLID @6.
 */

/* Virtual lane. */
static inline uint8_t ibk_lrh_vl(const void *lrh)
{
	return (uint8_t)(((const uint8_t *)lrh)[0] >> 4);
}

static inline void ibk_lrh_set_vl(void *lrh, uint8_t vl)
{
	ibk__store_bits((uint8_t *)lrh, 0xf0, (unsigned)vl << 4);
}

/* Link version. */
static inline uint8_t ibk_lrh_lver(const void *lrh)
{
	return (uint8_t)(((const uint8_t *)lrh)[0] & 0x0f);
}

static inline void ibk_lrh_set_lver(void *lrh, uint8_t lver)
{
	ibk__store_bits((uint8_t *)lrh, 0x0f, lver);
}

/* Service level. */
static inline uint8_t ibk_lrh_sl(const void *lrh)
{
	return (uint8_t)(((const uint8_t *)lrh)[1] >> 4);
}

static inline void ibk_lrh_set_sl(void *lrh, uint8_t sl)
{
	ibk__store_bits((uint8_t *)lrh + 1, 0xf0, (unsigned)sl << 4);
}

/* Link next header, one of IBK_LNH_*. */
static inline uint8_t ibk_lrh_lnh(const void *lrh)
{
	return (uint8_t)(((const uint8_t *)lrh)[1] & 0x03);
}

static inline void ibk_lrh_set_lnh(void *lrh, uint8_t lnh)
{
	ibk__store_bits((uint8_t *)lrh + 1, 0x03, lnh);
}

/* Destination LID. */
static inline uint16_t ibk_lrh_dlid(const void *lrh)
{
	return ibk__load_be16((const uint8_t *)lrh + 2);
}

static inline void ibk_lrh_set_dlid(void *lrh, uint16_t dlid)
{
	ibk__store_be16((uint8_t *)lrh + 2, dlid);
}

/* Packet length in 4-byte words (11 bits). */
static inline uint16_t ibk_lrh_pktlen(const void *lrh)
{
	return (uint16_t)(ibk__load_be16((const uint8_t *)lrh + 4) & 0x07ff);
}

static inline void ibk_lrh_set_pktlen(void *lrh, uint16_t pktlen)
{
	uint8_t *p = (uint8_t *)lrh + 4;

	ibk__store_bits(p, 0x07, (unsigned)pktlen >> 8);
	p[1] = (uint8_t)pktlen;
}

/* Source LID. */
static inline uint16_t ibk_lrh_slid(const void *lrh)
{
	return ibk__load_be16((const uint8_t *)lrh + 6);
}

static inline void ibk_lrh_set_slid(void *lrh, uint16_t slid)
{
	ibk__store_be16((uint8_t *)lrh + 6, slid);
}

/*
 * GRH, 40 bytes: IPVer(4) TClass(8) FlowLabel(20) in bytes 0-3; PayLen @4;
 * NxtHdr @6; HopLmt @7; SGID @8; DGID @24 (the IPv6 header layout).
 */

/* IP version (6 for an IBA GRH). */
static inline uint8_t ibk_grh_ipver(const void *grh)
{
	return (uint8_t)(((const uint8_t *)grh)[0] >> 4);
}

static inline void ibk_grh_set_ipver(void *grh, uint8_t ipver)
{
	ibk__store_bits((uint8_t *)grh, 0xf0, (unsigned)ipver << 4);
}

/* Traffic class: low nibble of byte 0, high nibble of byte 1. */
static inline uint8_t ibk_grh_tclass(const void *grh)
{
	const uint8_t *p = (const uint8_t *)grh;

	return (uint8_t)((p[0] & 0x0f) << 4 | p[1] >> 4);
}

static inline void ibk_grh_set_tclass(void *grh, uint8_t tclass)
{
	uint8_t *p = (uint8_t *)grh;

	ibk__store_bits(p, 0x0f, (unsigned)tclass >> 4);
	ibk__store_bits(p + 1, 0xf0, (unsigned)tclass << 4);
}

/* Flow label (20 bits). */
static inline uint32_t ibk_grh_flow_label(const void *grh)
{
	return ibk__load_be32((const uint8_t *)grh) & 0x000fffffu;
}

static inline void ibk_grh_set_flow_label(void *grh, uint32_t flow_label)
{
	uint8_t *p = (uint8_t *)grh;

	ibk__store_bits(p + 1, 0x0f, flow_label >> 16);
	ibk__store_be16(p + 2, (uint16_t)flow_label);
}

/* Payload length in bytes after the GRH. */
static inline uint16_t ibk_grh_paylen(const void *grh)
{
	return ibk__load_be16((const uint8_t *)grh + 4);
}

static inline void ibk_grh_set_paylen(void *grh, uint16_t paylen)
{
	ibk__store_be16((uint8_t *)grh + 4, paylen);
}

/* Next header (IBK_GRH_NXTHDR_BTH for IBA transport). */
static inline uint8_t ibk_grh_nxthdr(const void *grh)
{
	return ((const uint8_t *)grh)[6];
}

static inline void ibk_grh_set_nxthdr(void *grh, uint8_t nxthdr)
{
	((uint8_t *)grh)[6] = nxthdr;
}

/* Hop limit. */
static inline uint8_t ibk_grh_hoplmt(const void *grh)
{
	return ((const uint8_t *)grh)[7];
}

static inline void ibk_grh_set_hoplmt(void *grh, uint8_t hoplmt)
{
	((uint8_t *)grh)[7] = hoplmt;
}

static inline struct ibk_gid ibk__load_gid(const uint8_t *p)
{
	struct ibk_gid gid;
	int i;

	for (i = 0; i < 16; i++)
		gid.raw[i] = p[i];
	return gid;
}

static inline void ibk__store_gid(uint8_t *p, const struct ibk_gid *gid)
{
	int i;

	for (i = 0; i < 16; i++)
		p[i] = gid->raw[i];
}

/* Source GID. */
static inline struct ibk_gid ibk_grh_sgid(const void *grh)
{
	return ibk__load_gid((const uint8_t *)grh + 8);
}

static inline void ibk_grh_set_sgid(void *grh, const struct ibk_gid *sgid)
{
	ibk__store_gid((uint8_t *)grh + 8, sgid);
}

/* Destination GID. */
static inline struct ibk_gid ibk_grh_dgid(const void *grh)
{
	return ibk__load_gid((const uint8_t *)grh + 24);
}

static inline void ibk_grh_set_dgid(void *grh, const struct ibk_gid *dgid)
{
	ibk__store_gid((uint8_t *)grh + 24, dgid);
}

/*
 * BTH, 12 bytes: OpCode @0; byte 1 SE 0x80, M 0x40, PadCnt 0x30, TVer 0x0f;
 * P_Key @2; byte 4 FECN 0x80, BECN 0x40 (rest reserved); DestQP @5-7;
 * byte 8 A 0x80 (rest reserved); PSN @9-11.
 */

/* Operation code: transport service and operation (e.g. 0x64 UD send). */
static inline uint8_t ibk_bth_opcode(const void *bth)
{
	return ((const uint8_t *)bth)[0];
}

static inline void ibk_bth_set_opcode(void *bth, uint8_t opcode)
{
	((uint8_t *)bth)[0] = opcode;
}

/* Solicited event. */
static inline bool ibk_bth_se(const void *bth)
{
	return (((const uint8_t *)bth)[1] & 0x80) != 0;
}

static inline void ibk_bth_set_se(void *bth, bool se)
{
	ibk__store_bits((uint8_t *)bth + 1, 0x80, (unsigned)se << 7);
}

/* MigReq: the sender's path migration state. */
static inline bool ibk_bth_mig(const void *bth)
{
	return (((const uint8_t *)bth)[1] & 0x40) != 0;
}

static inline void ibk_bth_set_mig(void *bth, bool mig)
{
	ibk__store_bits((uint8_t *)bth + 1, 0x40, (unsigned)mig << 6);
}

/* Pad count: bytes (0-3) padding the payload to a multiple of 4. */
static inline uint8_t ibk_bth_padcnt(const void *bth)
{
	return (uint8_t)((((const uint8_t *)bth)[1] >> 4) & 0x03);
}

static inline void ibk_bth_set_padcnt(void *bth, uint8_t padcnt)
{
	ibk__store_bits((uint8_t *)bth + 1, 0x30, (unsigned)padcnt << 4);
}

/* Transport header version. */
static inline uint8_t ibk_bth_tver(const void *bth)
{
	return (uint8_t)(((const uint8_t *)bth)[1] & 0x0f);
}

static inline void ibk_bth_set_tver(void *bth, uint8_t tver)
{
	ibk__store_bits((uint8_t *)bth + 1, 0x0f, tver);
}

/* The packet's P_Key, checked at the receiver against the QP's (IBA 10.9). */
static inline ibk_pkey_t ibk_bth_pkey(const void *bth)
{
	return ibk__load_be16((const uint8_t *)bth + 2);
}

static inline void ibk_bth_set_pkey(void *bth, ibk_pkey_t pkey)
{
	ibk__store_be16((uint8_t *)bth + 2, pkey);
}

/* Forward explicit congestion notification. */
static inline bool ibk_bth_fecn(const void *bth)
{
	return (((const uint8_t *)bth)[4] & 0x80) != 0;
}

static inline void ibk_bth_set_fecn(void *bth, bool fecn)
{
	ibk__store_bits((uint8_t *)bth + 4, 0x80, (unsigned)fecn << 7);
}

/* Backward explicit congestion notification. */
static inline bool ibk_bth_becn(const void *bth)
{
	return (((const uint8_t *)bth)[4] & 0x40) != 0;
}

static inline void ibk_bth_set_becn(void *bth, bool becn)
{
	ibk__store_bits((uint8_t *)bth + 4, 0x40, (unsigned)becn << 6);
}

/* Destination QP number (24 bits). */
static inline uint32_t ibk_bth_dest_qp(const void *bth)
{
	return ibk__load_be24((const uint8_t *)bth + 5);
}

static inline void ibk_bth_set_dest_qp(void *bth, uint32_t qpn)
{
	ibk__store_be24((uint8_t *)bth + 5, qpn);
}

/* AckReq: the responder is asked to acknowledge this packet. */
static inline bool ibk_bth_ackreq(const void *bth)
{
	return (((const uint8_t *)bth)[8] & 0x80) != 0;
}

static inline void ibk_bth_set_ackreq(void *bth, bool ackreq)
{
	ibk__store_bits((uint8_t *)bth + 8, 0x80, (unsigned)ackreq << 7);
}

/* Packet sequence number (24 bits). */
static inline uint32_t ibk_bth_psn(const void *bth)
{
	return ibk__load_be24((const uint8_t *)bth + 9);
}

static inline void ibk_bth_set_psn(void *bth, uint32_t psn)
{
	ibk__store_be24((uint8_t *)bth + 9, psn);
}

/* DETH, 8 bytes: Q_Key @0; reserved @4; SrcQP @5-7. */

/* The datagram's Q_Key, checked at the receiver against the QP's. */
static inline ibk_qkey_t ibk_deth_qkey(const void *deth)
{
	return ibk__load_be32((const uint8_t *)deth);
}

static inline void ibk_deth_set_qkey(void *deth, ibk_qkey_t qkey)
{
	ibk__store_be32((uint8_t *)deth, qkey);
}

/* Source QP number (24 bits). */
static inline uint32_t ibk_deth_src_qp(const void *deth)
{
	return ibk__load_be24((const uint8_t *)deth + 5);
}

static inline void ibk_deth_set_src_qp(void *deth, uint32_t qpn)
{
	ibk__store_be24((uint8_t *)deth + 5, qpn);
}

/*
 * Which opcodes carry which extension header (IBA 9.2 table 38, as
 * Linux rxe_opcode.c and Wireshark's dissector list them): one bit per
 * operation, one mask per transport, RC, UC, RD and UD in that order; CNP
 * and the vendor ranges carry none. A RETH or AtomicETH follows the BTH
 * directly in RC and UC packets; in RD packets it follows the RDETH and
 * DETH, and in FLUSH the 4-byte FETH.
 */
#define IBK__OPBIT(op)	(1u << (op))
#define IBK__OPS_RETH_RC (IBK__OPBIT(IBK_OP_RDMA_WRITE_FIRST) | \
	IBK__OPBIT(IBK_OP_RDMA_WRITE_ONLY) | \
	IBK__OPBIT(IBK_OP_RDMA_WRITE_ONLY_IMM) | \
	IBK__OPBIT(IBK_OP_RDMA_READ_REQUEST))
#define IBK__OPS_ATOMICETH (IBK__OPBIT(IBK_OP_COMPARE_SWAP) | \
	IBK__OPBIT(IBK_OP_FETCH_ADD))
#define IBK__OPS_AETH (IBK__OPBIT(IBK_OP_RDMA_READ_RESPONSE_FIRST) | \
	IBK__OPBIT(IBK_OP_RDMA_READ_RESPONSE_LAST) | \
	IBK__OPBIT(IBK_OP_RDMA_READ_RESPONSE_ONLY) | \
	IBK__OPBIT(IBK_OP_ACKNOWLEDGE) | \
	IBK__OPBIT(IBK_OP_ATOMIC_ACKNOWLEDGE))
#define IBK__OPS_IMMDT (IBK__OPBIT(IBK_OP_SEND_LAST_IMM) | \
	IBK__OPBIT(IBK_OP_SEND_ONLY_IMM) | \
	IBK__OPBIT(IBK_OP_RDMA_WRITE_LAST_IMM) | \
	IBK__OPBIT(IBK_OP_RDMA_WRITE_ONLY_IMM))

/* True if bit (opcode & 31) of ops[transport] is set, for RC, UC, RD, UD. */
static inline bool ibk__opcode_in(uint8_t opcode, const uint32_t ops[4])
{
	unsigned transport = (unsigned)opcode >> 5;

	return transport < 4 &&
	       ((ops[transport & 3] >> (opcode & IBK_OPCODE_OP_MASK)) & 1u);
}

/* True if @opcode carries a RETH: RDMA WRITE FIRST and ONLY (with or
 * without immediate) of RC, UC and RD, RDMA READ request of RC and RD,
 * and RC FLUSH (after its FETH) and ATOMIC WRITE. */
static inline bool ibk_opcode_has_reth(uint8_t opcode)
{
	static const uint32_t ops[4] = {
		IBK__OPS_RETH_RC | IBK__OPBIT(IBK_OP_FLUSH) |
		IBK__OPBIT(IBK_OP_ATOMIC_WRITE),
		IBK__OPS_RETH_RC & ~IBK__OPBIT(IBK_OP_RDMA_READ_REQUEST),
		IBK__OPS_RETH_RC, 0,
	};

	return ibk__opcode_in(opcode, ops);
}

/* True if @opcode carries an AtomicETH: COMPARE SWAP and FETCH ADD of RC
 * and RD. */
static inline bool ibk_opcode_has_atomiceth(uint8_t opcode)
{
	static const uint32_t ops[4] = {
		IBK__OPS_ATOMICETH, 0, IBK__OPS_ATOMICETH, 0,
	};

	return ibk__opcode_in(opcode, ops);
}

/* True if @opcode carries an IETH: RC SEND LAST and SEND ONLY with
 * invalidate. */
static inline bool ibk_opcode_has_ieth(uint8_t opcode)
{
	static const uint32_t ops[4] = {
		IBK__OPBIT(IBK_OP_SEND_LAST_INV) |
		IBK__OPBIT(IBK_OP_SEND_ONLY_INV), 0, 0, 0,
	};

	return ibk__opcode_in(opcode, ops);
}

/* True if @opcode carries an AETH: RC and RD acknowledgements and the
 * first, last and only RDMA READ responses (the middle one has none). */
static inline bool ibk_opcode_has_aeth(uint8_t opcode)
{
	static const uint32_t ops[4] = {
		IBK__OPS_AETH, 0, IBK__OPS_AETH, 0,
	};

	return ibk__opcode_in(opcode, ops);
}

/* True if @opcode carries immediate data: the SEND and RDMA WRITE LAST
 * and ONLY "with immediate" of RC, UC and RD, and UD SEND ONLY with
 * immediate. */
static inline bool ibk_opcode_has_immdt(uint8_t opcode)
{
	static const uint32_t ops[4] = {
		IBK__OPS_IMMDT, IBK__OPS_IMMDT, IBK__OPS_IMMDT,
		IBK__OPBIT(IBK_OP_SEND_ONLY_IMM),
	};

	return ibk__opcode_in(opcode, ops);
}

/* RETH, 16 bytes: virtual address @0-7; R_Key @8-11; DMA length @12-15. */

/* The remote virtual address an RDMA READ or WRITE starts at. */
static inline uint64_t ibk_reth_va(const void *reth)
{
	return ibk__load_be64((const uint8_t *)reth);
}

static inline void ibk_reth_set_va(void *reth, uint64_t va)
{
	ibk__store_be64((uint8_t *)reth, va);
}

/* The R_Key naming the remote memory region or window. */
static inline uint32_t ibk_reth_rkey(const void *reth)
{
	return ibk__load_be32((const uint8_t *)reth + 8);
}

static inline void ibk_reth_set_rkey(void *reth, uint32_t rkey)
{
	ibk__store_be32((uint8_t *)reth + 8, rkey);
}

/* The length in bytes of the whole RDMA READ or WRITE. */
static inline uint32_t ibk_reth_dma_len(const void *reth)
{
	return ibk__load_be32((const uint8_t *)reth + 12);
}

static inline void ibk_reth_set_dma_len(void *reth, uint32_t len)
{
	ibk__store_be32((uint8_t *)reth + 12, len);
}

/*
 * AtomicETH, 28 bytes: virtual address @0-7; R_Key @8-11; swap (or add)
 * data @12-19; compare data @20-27. VA and R_Key sit where the RETH has
 * them.
 */

/* The remote virtual address of the 8-byte atomic operand. */
static inline uint64_t ibk_atomiceth_va(const void *atm)
{
	return ibk__load_be64((const uint8_t *)atm);
}

static inline void ibk_atomiceth_set_va(void *atm, uint64_t va)
{
	ibk__store_be64((uint8_t *)atm, va);
}

/* The R_Key naming the remote memory region or window. */
static inline uint32_t ibk_atomiceth_rkey(const void *atm)
{
	return ibk__load_be32((const uint8_t *)atm + 8);
}

static inline void ibk_atomiceth_set_rkey(void *atm, uint32_t rkey)
{
	ibk__store_be32((uint8_t *)atm + 8, rkey);
}

/* COMPARE SWAP's swap value, FETCH ADD's addend. */
static inline uint64_t ibk_atomiceth_swap_add(const void *atm)
{
	return ibk__load_be64((const uint8_t *)atm + 12);
}

static inline void ibk_atomiceth_set_swap_add(void *atm, uint64_t v)
{
	ibk__store_be64((uint8_t *)atm + 12, v);
}

/* COMPARE SWAP's compare value. */
static inline uint64_t ibk_atomiceth_compare(const void *atm)
{
	return ibk__load_be64((const uint8_t *)atm + 20);
}

static inline void ibk_atomiceth_set_compare(void *atm, uint64_t v)
{
	ibk__store_be64((uint8_t *)atm + 20, v);
}

/* IETH, 4 bytes: the R_Key a SEND with invalidate invalidates. */
static inline uint32_t ibk_ieth_rkey(const void *ieth)
{
	return ibk__load_be32((const uint8_t *)ieth);
}

static inline void ibk_ieth_set_rkey(void *ieth, uint32_t rkey)
{
	ibk__store_be32((uint8_t *)ieth, rkey);
}

/* AETH, 4 bytes: syndrome @0 (see "Memory keys" for its codes); MSN @1-3. */

/* The syndrome: ACK, RNR NAK or NAK and its code. */
static inline uint8_t ibk_aeth_syndrome(const void *aeth)
{
	return ((const uint8_t *)aeth)[0];
}

static inline void ibk_aeth_set_syndrome(void *aeth, uint8_t syndrome)
{
	((uint8_t *)aeth)[0] = syndrome;
}

/* Message sequence number (24 bits): the responder's count of messages. */
static inline uint32_t ibk_aeth_msn(const void *aeth)
{
	return ibk__load_be24((const uint8_t *)aeth + 1);
}

static inline void ibk_aeth_set_msn(void *aeth, uint32_t msn)
{
	ibk__store_be24((uint8_t *)aeth + 1, msn);
}

/* ------------------------------------------------------------------------
 * Per-packet checks (no table: the caller resolved the QP's P_Key)
 * ------------------------------------------------------------------------ */

enum ibk_qp_type {
	IBK_QPT_SMI,	/* QP0: no P_Key or Q_Key check */
	IBK_QPT_GSI,	/* QP1: P_Key against the whole table (ib_tables.h) */
	IBK_QPT_RC,
	IBK_QPT_UC,
	IBK_QPT_UD,
};

/* What a receive check needs of a QP context. */
struct ibk_qp_keys {
	enum ibk_qp_type type;
	ibk_pkey_t pkey;	/* value at the QP's P_Key index (resolved by caller) */
	uint16_t   pkey_index;	/* used by ib_tables.h's checks */
	ibk_qkey_t qkey;	/* UD/GSI only */
};

/* Only IBK_RX_DROP_PKEY and IBK_RX_DROP_QKEY are key violations to count. */
enum ibk_rx_verdict {
	/* ibk_rx_ud_burst() computes these three values arithmetically */
	IBK_RX_ACCEPT = 0,
	IBK_RX_DROP_PKEY = 1,	/* P_Key violation: count it (IBA 10.9) */
	IBK_RX_DROP_QKEY = 2,	/* Q_Key violation: count it */
	IBK_RX_DROP_NEED_TABLE,	/* QP1 matches the port's whole table: ib_tables.h */
	IBK_RX_DROP_PORT,	/* port not ARMED/ACTIVE or table stale (ib_tables.h) */
	IBK_RX_DROP_PKEY_INDEX,	/* QP's P_Key index beyond the table (ib_tables.h) */
	IBK_RX_DROP_MALFORMED,	/* NULL header, unknown QP type */
	IBK_RX_DROP_TVER,	/* BTH TVer not 0 */
	IBK_RX_DROP_OPCODE,	/* opcode's transport or operation not the QP's */
};

/* Constant name of a verdict; "unknown" for a value outside the enum. */
static inline const char *ibk_rx_verdict_name(enum ibk_rx_verdict v)
{
	switch (v) {
	case IBK_RX_ACCEPT:		return "accept";
	case IBK_RX_DROP_PKEY:		return "drop-pkey";
	case IBK_RX_DROP_QKEY:		return "drop-qkey";
	case IBK_RX_DROP_NEED_TABLE:	return "drop-need-table";
	case IBK_RX_DROP_PORT:		return "drop-port";
	case IBK_RX_DROP_PKEY_INDEX:	return "drop-pkey-index";
	case IBK_RX_DROP_MALFORMED:	return "drop-malformed";
	case IBK_RX_DROP_TVER:		return "drop-tver";
	case IBK_RX_DROP_OPCODE:	return "drop-opcode";
	default:			return "unknown";
	}
}

/* True for a QP type that receives datagrams: SMI and GSI are UD QPs. */
static inline bool ibk__qp_is_datagram(enum ibk_qp_type type)
{
	return type == IBK_QPT_UD || type == IBK_QPT_SMI || type == IBK_QPT_GSI;
}

/*
 * The checks a receiver makes on the BTH before any key (IBA 9.2, 9.6;
 * the Linux soft-RoCE driver's hdr_check() and check_type_state()), for a
 * QP of a type in enum ibk_qp_type: IBK_RX_DROP_TVER unless TVer is 0;
 * IBK_RX_DROP_OPCODE unless the opcode's transport is the QP's (RC, UC;
 * UD for UD, SMI and GSI QPs) and, for those datagram QPs, the opcode is
 * a SEND only, with or without immediate: the only UD opcodes, and the
 * ones that carry a DETH. Else IBK_RX_ACCEPT. RC and UC opcodes are
 * checked for their transport only. Neither drop is a key violation.
 */
static inline enum ibk_rx_verdict ibk_rx_check_header(enum ibk_qp_type type,
						      const void *bth)
{
	uint8_t opcode = ibk_bth_opcode(bth);

	if (ibk_bth_tver(bth) != IBK_BTH_TVER)
		return IBK_RX_DROP_TVER;
	if (ibk__qp_is_datagram(type))
		return (opcode & 0xfe) == IBK_OPCODE_UD_SEND_ONLY ?
		       IBK_RX_ACCEPT : IBK_RX_DROP_OPCODE;
	if (type == IBK_QPT_RC)
		return (opcode & IBK_OPCODE_TRANSPORT_MASK) ==
		       IBK_TRANSPORT_RC ? IBK_RX_ACCEPT : IBK_RX_DROP_OPCODE;
	return (opcode & IBK_OPCODE_TRANSPORT_MASK) == IBK_TRANSPORT_UC ?
	       IBK_RX_ACCEPT : IBK_RX_DROP_OPCODE;
}

static inline bool ibk__qp_type_valid(enum ibk_qp_type type)
{
	return type >= IBK_QPT_SMI && type <= IBK_QPT_UD;
}

/*
 * The receive verdict for one packet to @qp, from its @bth and, when the
 * opcode carries one, the @deth after it, in the order a receiver checks
 * (rxe hdr_check()):
 *  - IBK_RX_DROP_MALFORMED if @qp or @bth is NULL or the QP type is not
 *    in enum ibk_qp_type;
 *  - the header checks of ibk_rx_check_header(): TVer, then the opcode;
 *  - SMI (QP0): IBK_RX_ACCEPT; QP0 checks neither key.
 *  - GSI (QP1): IBK_RX_DROP_NEED_TABLE; QP1 accepts a P_Key matching any
 *    entry of the port's table, which only ib_tables.h can see.
 *  - UD: IBK_RX_DROP_MALFORMED if @deth is NULL;
 *  - RC, UC, UD: IBK_RX_DROP_PKEY unless ibk_pkey_match(QP, packet); an
 *    invalid QP key (an empty table entry) matches nothing;
 *  - UD: IBK_RX_DROP_QKEY unless the Q_Keys are equal;
 *  - else IBK_RX_ACCEPT.
 * @deth is read only for a UD SEND to a UD QP. Drops are silent; the
 * caller counts the key violations; the QP's state is left alone.
 */
static inline enum ibk_rx_verdict ibk_rx_check(const struct ibk_qp_keys *qp,
					       const void *bth,
					       const void *deth)
{
	enum ibk_rx_verdict v;

	if (!qp || !bth || !ibk__qp_type_valid(qp->type))
		return IBK_RX_DROP_MALFORMED;
	v = ibk_rx_check_header(qp->type, bth);
	if (v != IBK_RX_ACCEPT || qp->type == IBK_QPT_SMI)
		return v;
	if (qp->type == IBK_QPT_GSI)
		return IBK_RX_DROP_NEED_TABLE;
	if (qp->type == IBK_QPT_UD && !deth)
		return IBK_RX_DROP_MALFORMED;
	if (!ibk_pkey_match(qp->pkey, ibk_bth_pkey(bth)))
		return IBK_RX_DROP_PKEY;
	if (qp->type != IBK_QPT_UD)
		return IBK_RX_ACCEPT;
	return ibk_qkey_match(ibk_deth_qkey(deth), qp->qkey) ?
	       IBK_RX_ACCEPT : IBK_RX_DROP_QKEY;
}

/*
 * Send side: writes the QP's P_Key into @bth and, if @deth is not NULL, the
 * Q_Key chosen by ibk_qkey_select(@wr_qkey, @qp_qkey) into @deth: a work
 * request Q_Key with its MSB set sends the QP context's Q_Key instead.
 * @bth must not be NULL.
 */
static inline void ibk_tx_fill_keys(void *bth, void *deth, ibk_pkey_t qp_pkey,
				    ibk_qkey_t wr_qkey, ibk_qkey_t qp_qkey)
{
	ibk_bth_set_pkey(bth, qp_pkey);
	if (deth)
		ibk_deth_set_qkey(deth, ibk_qkey_select(wr_qkey, qp_qkey));
}

/*
 * The number of zero bytes in @v[0..n): whole chunks of 16 with a fixed
 * trip count and a byte-sized sum, so that gcc's -O2 and clang vectorise.
 */
static inline size_t ibk__count_zero(const uint8_t *v, size_t n)
{
	size_t count = 0, i = 0, j;

	for (; n - i >= 16; i += 16) {
		uint8_t chunk_count = 0;

		for (j = 0; j < 16; j++)
			chunk_count = (uint8_t)(chunk_count + (v[i + j] == 0));
		count += chunk_count;
	}
	for (; i < n; i++)
		count += v[i] == 0;
	return count;
}

/*
 * Receive checks for a burst of n packets to one UD QP, the verdicts of
 * ibk_rx_check() for it: hdrs[i] points at a BTH and the 8 bytes after it
 * (its DETH, for a UD SEND), and verdicts[i] becomes IBK_RX_ACCEPT,
 * IBK_RX_DROP_PKEY, IBK_RX_DROP_QKEY, IBK_RX_DROP_OPCODE or
 * IBK_RX_DROP_TVER, the first check failing in the order of
 * ibk_rx_check(). Returns the number accepted. Every hdrs[i] must have
 * IBK_BTH_LEN + IBK_DETH_LEN readable bytes; the last 8 decide nothing
 * unless the opcode carries a DETH.
 *
 * The QP's keys are prepared once, in wire byte order, so each packet
 * costs four masked compares and no byte swap; the verdict is computed
 * arithmetically, leaving no branch in the loop body, and the accepted
 * packets are counted afterwards in a vectorised pass over the verdicts.
 * Unrolling by four (GCC >= 8 and clang honour the pragma) lets the core
 * overlap the header loads of neighbouring packets.
 */
static inline size_t ibk_rx_ud_burst(ibk_pkey_t qp_pkey, ibk_qkey_t qp_qkey,
				     const void *const *hdrs, uint8_t *verdicts,
				     size_t n)
{
	struct ibk__pkey_filter f = ibk__pkey_filter(qp_pkey);
	uint16_t pkey_mask = ibk__swap16(f.mask);
	uint16_t pkey_want = ibk__swap16(f.want);
	uint32_t qkey_want = ibk__swap32(qp_qkey);
	size_t i;

#pragma GCC unroll 4
	for (i = 0; i < n; i++) {
		const uint8_t *bth = (const uint8_t *)hdrs[i];
		const uint8_t *deth = bth + IBK_BTH_LEN;
		unsigned head = ibk__load_le16(bth);	/* opcode, then TVer */
		unsigned tver_bad = (head & 0x0f00u) != 0;
		unsigned opcode_bad = (head & 0x00feu) != IBK_OPCODE_UD_SEND_ONLY;
		unsigned pkey_bad =
			(ibk__load_le16(bth + 2) & pkey_mask) != pkey_want;
		unsigned qkey_bad = ibk__load_le32(deth) != qkey_want;
		/* 0 accept; 1 P_Key (wins over Q_Key); 2 Q_Key only */
		unsigned v = 2 * (pkey_bad | qkey_bad) - pkey_bad;

		/* the header checks come first: the opcode, TVer before it */
		v ^= (v ^ IBK_RX_DROP_OPCODE) & (0u - opcode_bad);
		v ^= (v ^ IBK_RX_DROP_TVER) & (0u - tver_bad);
		verdicts[i] = (uint8_t)v;
	}
	return ibk__count_zero(verdicts, n);
}

#ifdef __cplusplus
}
#endif

#endif /* IBKEYS_IB_KEYS_H */
