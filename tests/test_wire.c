/* SPDX-License-Identifier: MIT */
/*
 * test_wire.c - LRH/GRH/BTH/DETH/RETH/AtomicETH/IETH/AETH accessors of
 * ib_keys.h against the header
 * layouts written here as a bit table (big-endian, bit 0 = MSB of byte 0),
 * read and written by a bit-at-a-time model. Every field is checked at
 * every offset 0..7 of a larger buffer, with the rest of the buffer random,
 * and the setters must leave every bit outside their field alone.
 */
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "ib_keys.h"
#include "rng.h"

#define SEED		0xa4093822299f31d0ull	/* of the random cases */

static void fill_random(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)test_rng64();
}

/* Model: @width bits starting at bit @bit, MSB first. */
static uint64_t model_get(const uint8_t *p, unsigned bit, unsigned width)
{
	uint64_t v = 0;
	unsigned i;

	for (i = bit; i < bit + width; i++)
		v = v << 1 | (uint64_t)(p[i / 8] >> (7 - i % 8) & 1);
	return v;
}

static void model_put(uint8_t *p, unsigned bit, unsigned width, uint64_t v)
{
	unsigned i;

	for (i = bit + width; i-- > bit; v >>= 1) {
		uint8_t m = (uint8_t)(1u << (7 - i % 8));

		p[i / 8] = (uint8_t)((v & 1) ? (p[i / 8] | m) : (p[i / 8] & ~m));
	}
}

/*
 * Uniform adapters: get returns the field, set returns the value the
 * setter was actually handed after conversion to its parameter type.
 */
#define ACCESSOR(hdr, field, type)					\
static uint64_t get_##hdr##_##field(const void *p)			\
{									\
	return (uint64_t)ibk_##hdr##_##field(p);			\
}									\
static uint64_t set_##hdr##_##field(void *p, uint64_t v)		\
{									\
	type t = (type)v;						\
	ibk_##hdr##_set_##field(p, t);					\
	return (uint64_t)t;						\
}

ACCESSOR(lrh, vl, uint8_t)
ACCESSOR(lrh, lver, uint8_t)
ACCESSOR(lrh, sl, uint8_t)
ACCESSOR(lrh, lnh, uint8_t)
ACCESSOR(lrh, dlid, uint16_t)
ACCESSOR(lrh, pktlen, uint16_t)
ACCESSOR(lrh, slid, uint16_t)
ACCESSOR(grh, ipver, uint8_t)
ACCESSOR(grh, tclass, uint8_t)
ACCESSOR(grh, flow_label, uint32_t)
ACCESSOR(grh, paylen, uint16_t)
ACCESSOR(grh, nxthdr, uint8_t)
ACCESSOR(grh, hoplmt, uint8_t)
ACCESSOR(bth, opcode, uint8_t)
ACCESSOR(bth, se, bool)
ACCESSOR(bth, mig, bool)
ACCESSOR(bth, padcnt, uint8_t)
ACCESSOR(bth, tver, uint8_t)
ACCESSOR(bth, pkey, ibk_pkey_t)
ACCESSOR(bth, fecn, bool)
ACCESSOR(bth, becn, bool)
ACCESSOR(bth, dest_qp, uint32_t)
ACCESSOR(bth, ackreq, bool)
ACCESSOR(bth, psn, uint32_t)
ACCESSOR(deth, qkey, ibk_qkey_t)
ACCESSOR(deth, src_qp, uint32_t)
ACCESSOR(reth, va, uint64_t)
ACCESSOR(reth, rkey, uint32_t)
ACCESSOR(reth, dma_len, uint32_t)
ACCESSOR(atomiceth, va, uint64_t)
ACCESSOR(atomiceth, rkey, uint32_t)
ACCESSOR(atomiceth, swap_add, uint64_t)
ACCESSOR(atomiceth, compare, uint64_t)
ACCESSOR(ieth, rkey, uint32_t)
ACCESSOR(aeth, syndrome, uint8_t)
ACCESSOR(aeth, msn, uint32_t)

/* The layouts: header length, first bit (0 = MSB of byte 0), width. */
static const struct field {
	const char *name;
	unsigned hdr_len, bit, width;
	uint64_t (*get)(const void *);
	uint64_t (*set)(void *, uint64_t);
} fields[] = {
#define F(hdr, field, len, bit, width) \
	{ #hdr "_" #field, len, bit, width, get_##hdr##_##field, set_##hdr##_##field }
	F(lrh, vl, 8, 0, 4),
	F(lrh, lver, 8, 4, 4),
	F(lrh, sl, 8, 8, 4),		/* then 2 reserved bits */
	F(lrh, lnh, 8, 14, 2),
	F(lrh, dlid, 8, 16, 16),
	F(lrh, pktlen, 8, 37, 11),	/* after 5 reserved bits */
	F(lrh, slid, 8, 48, 16),
	F(grh, ipver, 40, 0, 4),
	F(grh, tclass, 40, 4, 8),
	F(grh, flow_label, 40, 12, 20),
	F(grh, paylen, 40, 32, 16),
	F(grh, nxthdr, 40, 48, 8),
	F(grh, hoplmt, 40, 56, 8),
	F(bth, opcode, 12, 0, 8),
	F(bth, se, 12, 8, 1),
	F(bth, mig, 12, 9, 1),
	F(bth, padcnt, 12, 10, 2),
	F(bth, tver, 12, 12, 4),
	F(bth, pkey, 12, 16, 16),
	F(bth, fecn, 12, 32, 1),
	F(bth, becn, 12, 33, 1),	/* then 6 reserved bits */
	F(bth, dest_qp, 12, 40, 24),
	F(bth, ackreq, 12, 64, 1),	/* then 7 reserved bits */
	F(bth, psn, 12, 72, 24),
	F(deth, qkey, 8, 0, 32),	/* then 8 reserved bits */
	F(deth, src_qp, 8, 40, 24),
	/* IBA 9.3.3.3 RETH, 9.3.3.4 AtomicETH, 9.3.3.5 IETH, 9.3.5 AETH;
	 * rxe_hdr.h struct rxe_reth, rxe_atmeth, rxe_ieth, rxe_aeth */
	F(reth, va, 16, 0, 64),
	F(reth, rkey, 16, 64, 32),
	F(reth, dma_len, 16, 96, 32),
	F(atomiceth, va, 28, 0, 64),
	F(atomiceth, rkey, 28, 64, 32),
	F(atomiceth, swap_add, 28, 96, 64),
	F(atomiceth, compare, 28, 160, 64),
	F(ieth, rkey, 4, 0, 32),
	F(aeth, syndrome, 4, 0, 8),
	F(aeth, msn, 4, 8, 24),
#undef F
};

#define BUF 64

static void test_field(const struct field *f)
{
	unsigned bad_get = 0, bad_set = 0, bad_reget = 0;
	uint64_t mask = f->width < 64 ? (1ull << f->width) - 1 : ~0ull;
	unsigned off, trial;

	for (off = 0; off < 8; off++) {
		for (trial = 0; trial < 300; trial++) {
			uint8_t buf[BUF], want[BUF];
			uint8_t *h = buf + 8 + off;
			uint64_t v, passed;

			fill_random(buf, BUF);
			if (f->get(h) != model_get(h, f->bit, f->width))
				bad_get++;

			v = trial < 8 ? (trial & 1 ? ~0ull : 0) : test_rng64();
			memcpy(want, buf, BUF);
			passed = f->set(h, v);
			model_put(want + 8 + off, f->bit, f->width, passed & mask);
			if (memcmp(buf, want, BUF) != 0)
				bad_set++;
			if (f->get(h) != (passed & mask))
				bad_reget++;
		}
	}
	tap_ok(bad_get + bad_set + bad_reget == 0,
	       "%s (bits %u..%u of %u bytes): get %u / set %u / re-get %u bad "
	       "over offsets 0..7", f->name, f->bit, f->bit + f->width - 1,
	       f->hdr_len, bad_get, bad_set, bad_reget);
}

/* Every bit of each header is a field or reserved: the table tiles them. */
static void test_layout_table(void)
{
	static const struct { const char *hdr; unsigned len, used; } hdrs[] = {
		{ "lrh", 8, 64 - 2 - 5 }, { "grh", 40, 64 },
		{ "bth", 12, 96 - 6 - 7 }, { "deth", 8, 64 - 8 },
		{ "reth", 16, 128 }, { "atomiceth", 28, 224 },
		{ "ieth", 4, 32 }, { "aeth", 4, 32 },
	};
	bool ok = true;
	size_t h, i, j;

	for (h = 0; h < sizeof(hdrs) / sizeof(hdrs[0]); h++) {
		unsigned used = 0;

		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			if (strncmp(fields[i].name, hdrs[h].hdr,
				    strlen(hdrs[h].hdr)) != 0 ||
			    fields[i].name[strlen(hdrs[h].hdr)] != '_')
				continue;
			used += fields[i].width;
			ok &= fields[i].hdr_len == hdrs[h].len &&
			      fields[i].bit + fields[i].width <= 8 * hdrs[h].len;
			for (j = 0; j < i; j++)	/* no overlaps */
				if (fields[j].hdr_len == fields[i].hdr_len &&
				    strncmp(fields[j].name, hdrs[h].hdr,
					    strlen(hdrs[h].hdr)) == 0 &&
				    fields[j].bit < fields[i].bit + fields[i].width &&
				    fields[i].bit < fields[j].bit + fields[j].width)
					ok = false;
		}
		ok &= used == hdrs[h].used;
	}
	tap_ok(ok, "the layout table tiles each header (GRH GIDs tested apart)");
	tap_ok(IBK_LRH_LEN == 8 && IBK_GRH_LEN == 40 && IBK_BTH_LEN == 12 &&
	       IBK_DETH_LEN == 8, "header lengths 8/40/12/8");
	/* IBA 9.3 (the extended transport headers); ib_pack.h
	 * IB_EXT_ATOMICETH_BYTES 28 */
	tap_ok(IBK_RETH_LEN == 16 && IBK_ATOMICETH_LEN == 28 &&
	       IBK_IETH_LEN == 4 && IBK_AETH_LEN == 4 && IBK_IMMDT_LEN == 4,
	       "extension header lengths: RETH 16, AtomicETH 28, IETH 4, "
	       "AETH 4, ImmDt 4");
}

static void test_gids(void)
{
	unsigned bad = 0, off, trial;

	for (off = 0; off < 8; off++) {
		for (trial = 0; trial < 200; trial++) {
			uint8_t buf[BUF + 16], want[BUF + 16];
			uint8_t *h = buf + 8 + off;
			struct ibk_gid s, d, g;

			fill_random(buf, sizeof(buf));
			s = ibk_grh_sgid(h);
			d = ibk_grh_dgid(h);
			bad += memcmp(s.raw, h + 8, 16) != 0 ||
			       memcmp(d.raw, h + 24, 16) != 0;

			g = ibk_gid_make(test_rng64(), test_rng64());
			memcpy(want, buf, sizeof(buf));
			memcpy(want + 8 + off + 8, g.raw, 16);
			ibk_grh_set_sgid(h, &g);
			bad += memcmp(buf, want, sizeof(buf)) != 0;

			g = ibk_gid_make(test_rng64(), test_rng64());
			memcpy(want + 8 + off + 24, g.raw, 16);
			ibk_grh_set_dgid(h, &g);
			bad += memcmp(buf, want, sizeof(buf)) != 0;
			d = ibk_grh_dgid(h);
			bad += !ibk_gid_equal(&d, &g);
		}
	}
	tap_ok(bad == 0, "grh sgid @8 / dgid @24: get and set at offsets 0..7, "
	       "nothing else touched (%u bad)", bad);
}

/* The extension headers of RDMA requests and acknowledgements, by hand. */
static void test_hand_built_ext(void)
{
	static const uint8_t reth[16] = {
		0x00, 0x00, 0x7f, 0xff, 0x12, 0x34, 0x56, 0x78,
		0xde, 0xad, 0xbe, 0xef, 0x00, 0x00, 0x10, 0x00,
	};
	static const uint8_t atm[28] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfc, 0x00,
		0x00, 0x01, 0x23, 0x07, 0x01, 0x02, 0x03, 0x04,
		0x05, 0x06, 0x07, 0x08, 0x80, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x01,
	};
	static const uint8_t aeth[4] = { 0x62, 0x00, 0x00, 0x2a };
	static const uint8_t ieth[4] = { 0x00, 0x12, 0x34, 0x56 };
	uint8_t built[32];

	tap_ok(ibk_reth_va(reth) == 0x00007fff12345678ull &&
	       ibk_reth_rkey(reth) == 0xdeadbeefu &&
	       ibk_reth_dma_len(reth) == 4096,
	       "RETH 00007fff12345678 deadbeef 00001000: VA, R_Key, DMA length");
	tap_ok(ibk_atomiceth_va(atm) == 0xfffffffffffffc00ull &&
	       ibk_atomiceth_rkey(atm) == 0x00012307u &&
	       ibk_atomiceth_swap_add(atm) == 0x0102030405060708ull &&
	       ibk_atomiceth_compare(atm) == 0x8000000000000001ull,
	       "AtomicETH: VA, R_Key, swap/add, compare big-endian");
	tap_ok(ibk_aeth_syndrome(aeth) == 0x62 && ibk_aeth_msn(aeth) == 42,
	       "AETH 62 00 00 2a: NAK remote access error, MSN 42");
	tap_ok(ibk_ieth_rkey(ieth) == 0x00123456u, "IETH 00 12 34 56");

	memset(built, 0xee, sizeof(built));
	ibk_reth_set_va(built, 0x00007fff12345678ull);
	ibk_reth_set_rkey(built, 0xdeadbeefu);
	ibk_reth_set_dma_len(built, 4096);
	tap_ok(memcmp(built, reth, 16) == 0 && built[16] == 0xee,
	       "RETH setters build those bytes, nothing after them");
	memset(built, 0xee, sizeof(built));
	ibk_atomiceth_set_va(built, 0xfffffffffffffc00ull);
	ibk_atomiceth_set_rkey(built, 0x00012307u);
	ibk_atomiceth_set_swap_add(built, 0x0102030405060708ull);
	ibk_atomiceth_set_compare(built, 0x8000000000000001ull);
	tap_ok(memcmp(built, atm, 28) == 0 && built[28] == 0xee,
	       "AtomicETH setters build those bytes, nothing after them");
	memset(built, 0xee, sizeof(built));
	ibk_aeth_set_syndrome(built, 0x62);
	ibk_aeth_set_msn(built, 0xff00002au);	/* 24-bit: high byte dropped */
	ibk_ieth_set_rkey(built + 4, 0x00123456u);
	tap_ok(memcmp(built, aeth, 4) == 0 && memcmp(built + 4, ieth, 4) == 0 &&
	       built[8] == 0xee,
	       "AETH and IETH setters build those bytes; MSN masked to 24 bits");
}

/* Headers built by hand from the layout, read back field by field. */
static void test_hand_built(void)
{
	static const uint8_t lrh[8] = {
		0x3a, 0x92, 0x12, 0x34, 0xfd, 0x23, 0xab, 0xcd,
	};
	static const uint8_t grh_head[8] = {
		0x6b, 0xc1, 0x23, 0x45, 0x01, 0x00, 0x1b, 0x40,
	};
	static const uint8_t bth1[12] = {
		0x64, 0xb5, 0xff, 0xff, 0xc0, 0x12, 0x34, 0x56,
		0x80, 0xab, 0xcd, 0xef,
	};
	static const uint8_t bth2[12] = {
		0x0a, 0x4a, 0x80, 0x01, 0x3f, 0xff, 0xff, 0xff,
		0x7f, 0x00, 0x00, 0x01,
	};
	static const uint8_t deth[8] = {
		0x80, 0x01, 0x00, 0x00, 0xee, 0x00, 0x00, 0x01,
	};
	uint8_t grh[40], built[40];
	unsigned i;

	tap_ok(ibk_lrh_vl(lrh) == 3 && ibk_lrh_lver(lrh) == 0xa &&
	       ibk_lrh_sl(lrh) == 9 && ibk_lrh_lnh(lrh) == IBK_LNH_BTH &&
	       ibk_lrh_dlid(lrh) == 0x1234 && ibk_lrh_pktlen(lrh) == 0x523 &&
	       ibk_lrh_slid(lrh) == 0xabcd,
	       "LRH 3a 92 12 34 fd 23 ab cd: VL 3 LVer 10 SL 9 LNH 2 DLID 0x1234 "
	       "PktLen 0x523 SLID 0xabcd");

	for (i = 0; i < 8; i++)
		grh[i] = grh_head[i];
	for (i = 8; i < 40; i++)
		grh[i] = (uint8_t)i;
	tap_ok(ibk_grh_ipver(grh) == 6 && ibk_grh_tclass(grh) == 0xbc &&
	       ibk_grh_flow_label(grh) == 0x12345 &&
	       ibk_grh_paylen(grh) == 0x100 &&
	       ibk_grh_nxthdr(grh) == IBK_GRH_NXTHDR_BTH &&
	       ibk_grh_hoplmt(grh) == 0x40,
	       "GRH 6b c1 23 45 01 00 1b 40: IPVer 6 TClass 0xbc Flow 0x12345 "
	       "PayLen 256 NxtHdr 0x1b HopLmt 64");

	tap_ok(ibk_bth_opcode(bth1) == IBK_OPCODE_UD_SEND_ONLY &&
	       ibk_bth_se(bth1) && !ibk_bth_mig(bth1) &&
	       ibk_bth_padcnt(bth1) == 3 && ibk_bth_tver(bth1) == 5 &&
	       ibk_bth_pkey(bth1) == 0xffff && ibk_bth_fecn(bth1) &&
	       ibk_bth_becn(bth1) && ibk_bth_dest_qp(bth1) == 0x123456 &&
	       ibk_bth_ackreq(bth1) && ibk_bth_psn(bth1) == 0xabcdef,
	       "BTH 64 b5 ff ff c0 12 34 56 80 ab cd ef read field by field");
	tap_ok(ibk_bth_opcode(bth2) == 0x0a && !ibk_bth_se(bth2) &&
	       ibk_bth_mig(bth2) && ibk_bth_padcnt(bth2) == 0 &&
	       ibk_bth_tver(bth2) == 0xa && ibk_bth_pkey(bth2) == 0x8001 &&
	       !ibk_bth_fecn(bth2) && !ibk_bth_becn(bth2) &&
	       ibk_bth_dest_qp(bth2) == 0xffffff && !ibk_bth_ackreq(bth2) &&
	       ibk_bth_psn(bth2) == 1,
	       "BTH 0a 4a 80 01 3f ff ff ff 7f 00 00 01: reserved bits ignored");
	tap_ok(ibk_deth_qkey(deth) == IBK_QKEY_GSI &&
	       ibk_deth_src_qp(deth) == 1,
	       "DETH 80 01 00 00 ee 00 00 01: Q_Key 0x80010000, SrcQP 1");

	memset(built, 0, sizeof(built));
	ibk_lrh_set_vl(built, 3);
	ibk_lrh_set_lver(built, 0xa);
	ibk_lrh_set_sl(built, 9);
	ibk_lrh_set_lnh(built, IBK_LNH_BTH);
	ibk_lrh_set_dlid(built, 0x1234);
	ibk_lrh_set_pktlen(built, 0x523);
	ibk_lrh_set_slid(built, 0xabcd);
	built[4] |= 0xf8;	/* the reserved bits the hand-built LRH has set */
	tap_ok(memcmp(built, lrh, 8) == 0, "LRH setters build those bytes");

	memset(built, 0, sizeof(built));
	ibk_bth_set_opcode(built, IBK_OPCODE_UD_SEND_ONLY);
	ibk_bth_set_se(built, true);
	ibk_bth_set_mig(built, false);
	ibk_bth_set_padcnt(built, 3);
	ibk_bth_set_tver(built, 5);
	ibk_bth_set_pkey(built, 0xffff);
	ibk_bth_set_fecn(built, true);
	ibk_bth_set_becn(built, true);
	ibk_bth_set_dest_qp(built, 0x123456);
	ibk_bth_set_ackreq(built, true);
	ibk_bth_set_psn(built, 0xabcdef);
	tap_ok(memcmp(built, bth1, 12) == 0, "BTH setters build those bytes");

	memset(built, 0, sizeof(built));
	ibk_grh_set_ipver(built, 6);
	ibk_grh_set_tclass(built, 0xbc);
	ibk_grh_set_flow_label(built, 0x12345);
	ibk_grh_set_paylen(built, 0x100);
	ibk_grh_set_nxthdr(built, IBK_GRH_NXTHDR_BTH);
	ibk_grh_set_hoplmt(built, 0x40);
	tap_ok(memcmp(built, grh_head, 8) == 0, "GRH setters build those bytes");

	memset(built, 0xee, sizeof(built));
	ibk_deth_set_qkey(built, IBK_QKEY_GSI);
	ibk_deth_set_src_qp(built, 0xff000001u);	/* 24-bit: high byte dropped */
	tap_ok(memcmp(built, deth, 8) == 0 && built[8] == 0xee,
	       "DETH setters build those bytes; SrcQP masked to 24 bits");
	test_hand_built_ext();
}

int main(void)
{
	size_t i;

	test_rng_seed(SEED);
	test_layout_table();
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		test_field(&fields[i]);
	test_gids();
	test_hand_built();
	return tap_done();
}
