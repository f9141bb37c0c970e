/* SPDX-License-Identifier: MIT */
/*
 * test_rx.c - per-packet receive checks and send-side key filling of
 * ib_keys.h: the verdict for every QP type, the header checks (TVer, the
 * opcode's transport) for every opcode against a model of the Linux
 * soft-RoCE receiver, the UD burst against the single-packet check and
 * against the rules written out here.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "ib_keys.h"
#include "port_model.h"
#include "rng.h"

#define SEED		0x082efa98ec4e6c89ull	/* of the random cases */

/* A UD packet's transport headers: BTH then DETH, as they sit on the wire. */
struct pkt {
	uint8_t b[IBK_BTH_LEN + IBK_DETH_LEN];
};

/*
 * Written from the layout: OpCode at BTH byte 0, TVer the low nibble of
 * byte 1 (0, IBA 9.2; SE, M and PadCnt above it left random: they decide
 * nothing here), P_Key at bytes 2-3, Q_Key at DETH 0-3.
 */
static struct pkt make_pkt_op(uint8_t opcode, uint16_t pkey, uint32_t qkey)
{
	struct pkt p;
	unsigned i;

	for (i = 0; i < sizeof(p.b); i++)
		p.b[i] = (uint8_t)test_rng64();
	p.b[0] = opcode;
	p.b[1] &= 0xf0;
	p.b[2] = (uint8_t)(pkey >> 8);
	p.b[3] = (uint8_t)pkey;
	p.b[12] = (uint8_t)(qkey >> 24);
	p.b[13] = (uint8_t)(qkey >> 16);
	p.b[14] = (uint8_t)(qkey >> 8);
	p.b[15] = (uint8_t)qkey;
	return p;
}

/* A UD SEND Only (opcode 0x64, IBA 9.2 table 38): what a UD QP receives. */
static struct pkt make_pkt(uint16_t pkey, uint32_t qkey)
{
	return make_pkt_op(0x64, pkey, qkey);
}

/* A SEND Only of @type's transport: RC 0x04, UC 0x24, else UD 0x64. */
static uint8_t send_only(enum ibk_qp_type type)
{
	return type == IBK_QPT_RC ? 0x04 : type == IBK_QPT_UC ? 0x24 : 0x64;
}

static struct ibk_qp_keys qp_of(enum ibk_qp_type type, uint16_t pkey,
				uint32_t qkey)
{
	struct ibk_qp_keys qp;

	memset(&qp, 0, sizeof(qp));
	qp.type = type;
	qp.pkey = pkey;
	qp.pkey_index = 3;
	qp.qkey = qkey;
	return qp;
}

static enum ibk_rx_verdict check(enum ibk_qp_type type, uint16_t qp_pkey,
				 uint32_t qp_qkey, uint16_t pkt_pkey,
				 uint32_t pkt_qkey)
{
	struct ibk_qp_keys qp = qp_of(type, qp_pkey, qp_qkey);
	struct pkt p = make_pkt_op(send_only(type), pkt_pkey, pkt_qkey);

	return ibk_rx_check(&qp, p.b, p.b + IBK_BTH_LEN);
}

static void test_types(void)
{
	static const enum ibk_qp_type conn[] = { IBK_QPT_RC, IBK_QPT_UC };
	struct ibk_qp_keys qp;
	struct pkt p;
	size_t i;

	tap_ok(check(IBK_QPT_SMI, 0xffff, 0, 0x1234, 0x99) == IBK_RX_ACCEPT &&
	       check(IBK_QPT_SMI, 0x0000, 0, 0x8000, 0) == IBK_RX_ACCEPT,
	       "SMI (QP0) accepts without checking P_Key or Q_Key");
	qp = qp_of(IBK_QPT_SMI, 0xffff, 0);
	p = make_pkt(0x0001, 0);
	tap_ok(ibk_rx_check(&qp, p.b, NULL) == IBK_RX_ACCEPT,
	       "SMI needs no DETH");
	tap_ok(check(IBK_QPT_GSI, 0xffff, IBK_QKEY_GSI, 0xffff, IBK_QKEY_GSI) ==
	       IBK_RX_DROP_NEED_TABLE &&
	       check(IBK_QPT_GSI, 0xffff, IBK_QKEY_GSI, 0x0000, 0) ==
	       IBK_RX_DROP_NEED_TABLE,
	       "GSI (QP1) needs the port's whole table");

	for (i = 0; i < 2; i++) {
		const char *n = conn[i] == IBK_QPT_RC ? "RC" : "UC";

		tap_ok(check(conn[i], 0x8001, 7, 0x0001, 8) == IBK_RX_ACCEPT &&
		       check(conn[i], 0x0001, 7, 0x8001, 8) == IBK_RX_ACCEPT &&
		       check(conn[i], 0xffff, 7, 0xffff, 8) == IBK_RX_ACCEPT,
		       "%s: matching P_Key accepted, Q_Key not looked at", n);
		tap_ok(check(conn[i], 0x0001, 7, 0x0001, 7) == IBK_RX_DROP_PKEY,
		       "%s: limited~limited is a P_Key drop", n);
		tap_ok(check(conn[i], 0x8001, 7, 0x8002, 7) == IBK_RX_DROP_PKEY &&
		       check(conn[i], 0xffff, 7, 0x7ffe, 7) == IBK_RX_DROP_PKEY,
		       "%s: other partition is a P_Key drop", n);
		tap_ok(check(conn[i], 0x8000, 7, 0x8000, 7) == IBK_RX_DROP_PKEY &&
		       check(conn[i], 0x0000, 7, 0x0000, 7) == IBK_RX_DROP_PKEY &&
		       check(conn[i], 0xffff, 7, 0x8000, 7) == IBK_RX_DROP_PKEY,
		       "%s: invalid P_Keys never pass, not even equal ones", n);
		qp = qp_of(conn[i], 0xffff, 0);
		p = make_pkt_op(send_only(conn[i]), 0xffff, 0);
		tap_ok(ibk_rx_check(&qp, p.b, NULL) == IBK_RX_ACCEPT,
		       "%s needs no DETH", n);
	}

	tap_ok(check(IBK_QPT_UD, 0x8001, 0x1111, 0x0001, 0x1111) == IBK_RX_ACCEPT &&
	       check(IBK_QPT_UD, 0xffff, IBK_QKEY_IPOIB, 0x7fff, IBK_QKEY_IPOIB) ==
	       IBK_RX_ACCEPT,
	       "UD: matching P_Key and equal Q_Key accepted");
	tap_ok(check(IBK_QPT_UD, 0x8001, 0x1111, 0x8001, 0x1112) ==
	       IBK_RX_DROP_QKEY &&
	       check(IBK_QPT_UD, 0x8001, 0x80000001u, 0x8001, 0x00000001u) ==
	       IBK_RX_DROP_QKEY,
	       "UD: Q_Key mismatch (incl. MSB only) is a Q_Key drop");
	tap_ok(check(IBK_QPT_UD, 0x0001, 0x1111, 0x0001, 0x1111) ==
	       IBK_RX_DROP_PKEY &&
	       check(IBK_QPT_UD, 0x8001, 0x1111, 0x8002, 0x1111) ==
	       IBK_RX_DROP_PKEY,
	       "UD: P_Key mismatch with a good Q_Key is a P_Key drop");
	tap_ok(check(IBK_QPT_UD, 0x0001, 0x1111, 0x0001, 0x2222) ==
	       IBK_RX_DROP_PKEY,
	       "UD: failing both checks is a P_Key drop (P_Key checked first)");
	tap_ok(check(IBK_QPT_UD, 0x8000, 5, 0x8000, 5) == IBK_RX_DROP_PKEY &&
	       check(IBK_QPT_UD, 0x0000, 5, 0x0000, 5) == IBK_RX_DROP_PKEY,
	       "UD: invalid P_Keys drop even when identical");

	qp = qp_of(IBK_QPT_UD, 0xffff, 5);
	p = make_pkt(0xffff, 5);
	tap_ok(ibk_rx_check(&qp, p.b, NULL) == IBK_RX_DROP_MALFORMED,
	       "UD without a DETH is malformed, not a key violation");
	tap_ok(ibk_rx_check(NULL, p.b, p.b + 12) == IBK_RX_DROP_MALFORMED &&
	       ibk_rx_check(&qp, NULL, p.b + 12) == IBK_RX_DROP_MALFORMED,
	       "NULL QP or BTH is malformed");
	qp.type = (enum ibk_qp_type)42;
	tap_ok(ibk_rx_check(&qp, p.b, p.b + 12) == IBK_RX_DROP_MALFORMED,
	       "an unknown QP type is malformed");
}

/*
 * Every opcode 0..255, every QP type, TVer 0 and every other TVer, with
 * keys that would pass: the header verdict is the model's, and when the
 * header passes, the key verdict (QP0 accepts, QP1 needs the table).
 * ibk_rx_check(), ibk_rx_check_header() and, for UD, ibk_rx_ud_burst().
 */
static void test_header_model(void)
{
	static const char *const names[] = { "SMI", "GSI", "RC", "UC", "UD" };
	unsigned bad[5] = { 0, 0, 0, 0, 0 }, passed[5] = { 0, 0, 0, 0, 0 };
	unsigned type, opcode, tver;

	for (type = IBK_QPT_SMI; type <= IBK_QPT_UD; type++) {
		struct ibk_qp_keys qp = qp_of((enum ibk_qp_type)type, 0xffff,
					      0x11111111u);

		for (opcode = 0; opcode < 256; opcode++) {
			for (tver = 0; tver < 16; tver++) {
				struct pkt p = make_pkt_op((uint8_t)opcode,
							   0xffff, 0x11111111u);
				enum ibk_rx_verdict head, want;
				const void *hdrs[1];
				uint8_t v = 0xee;

				p.b[1] = (uint8_t)((p.b[1] & 0xf0) | tver);
				head = model_rx_header(type, opcode, tver);
				want = head != IBK_RX_ACCEPT ? head :
				       type == IBK_QPT_SMI ? IBK_RX_ACCEPT :
				       type == IBK_QPT_GSI ?
				       IBK_RX_DROP_NEED_TABLE : IBK_RX_ACCEPT;
				bad[type] += ibk_rx_check_header(
					(enum ibk_qp_type)type, p.b) != head;
				bad[type] += ibk_rx_check(&qp, p.b,
					p.b + IBK_BTH_LEN) != want;
				if (type == IBK_QPT_UD) {
					hdrs[0] = p.b;
					bad[type] += ibk_rx_ud_burst(0xffff,
						0x11111111u, hdrs, 1, &v) !=
						(want == IBK_RX_ACCEPT) ||
						v != want;
				}
				passed[type] += head == IBK_RX_ACCEPT;
			}
		}
		tap_ok(bad[type] == 0 && passed[type] ==
		       (type == IBK_QPT_RC || type == IBK_QPT_UC ? 32u : 2u),
		       "%s QP: all 256 opcodes x 16 TVer values as the rxe "
		       "model says (transport = opcode & 0xe0%s; TVer 0 only): "
		       "%u pass, %u bad", names[type],
		       type == IBK_QPT_RC || type == IBK_QPT_UC ? "" :
		       ", datagram QPs 0x64/0x65 only", passed[type], bad[type]);
	}
}

/* The cases issue 8 names, one by one. */
static void test_header_cases(void)
{
	struct ibk_qp_keys ud = qp_of(IBK_QPT_UD, 0xffff, 0x11111111u);
	struct ibk_qp_keys rc = qp_of(IBK_QPT_RC, 0xffff, 0);
	struct ibk_qp_keys qp;
	const void *hdrs[1];
	struct pkt p;
	uint8_t v;
	unsigned type, bad = 0;

	/* an RC SEND Only whose payload starts with the UD QP's Q_Key: the
	 * bytes after its BTH look like a DETH that would pass */
	p = make_pkt_op(0x04, 0xffff, 0x11111111u);
	hdrs[0] = p.b;
	v = 0xee;
	tap_ok(ibk_rx_check(&ud, p.b, p.b + IBK_BTH_LEN) == IBK_RX_DROP_OPCODE &&
	       ibk_rx_ud_burst(0xffff, 0x11111111u, hdrs, 1, &v) == 0 &&
	       v == IBK_RX_DROP_OPCODE,
	       "RC SEND (0x04) to a UD QP, payload starting with its Q_Key: "
	       "DROP_OPCODE by rx_check and rx_ud_burst (rxe check_type_state)");
	tap_ok(ibk_rx_check(&ud, p.b, NULL) == IBK_RX_DROP_OPCODE,
	       "... also with no DETH given: the opcode carries none, so it "
	       "is not malformed");
	p = make_pkt(0xffff, 0x11111111u);
	tap_ok(ibk_rx_check(&rc, p.b, p.b + IBK_BTH_LEN) == IBK_RX_DROP_OPCODE,
	       "a UD SEND (0x64) to an RC QP: DROP_OPCODE");
	p = make_pkt_op(0x24, 0xffff, 0);
	tap_ok(ibk_rx_check(&rc, p.b, NULL) == IBK_RX_DROP_OPCODE,
	       "a UC SEND (0x24) to an RC QP: DROP_OPCODE");
	p = make_pkt_op(0x81, 0xffff, 0x11111111u);
	tap_ok(ibk_rx_check(&ud, p.b, p.b + IBK_BTH_LEN) == IBK_RX_DROP_OPCODE &&
	       ibk_rx_check(&rc, p.b, NULL) == IBK_RX_DROP_OPCODE,
	       "CNP (0x81) to a UD or RC QP: DROP_OPCODE");
	p = make_pkt_op(0x44, 0xffff, 0x11111111u);
	tap_ok(ibk_rx_check(&ud, p.b, p.b + IBK_BTH_LEN) == IBK_RX_DROP_OPCODE,
	       "an RD SEND (0x44) to a UD QP: DROP_OPCODE (RD not supported)");
	for (type = IBK_QPT_SMI; type <= IBK_QPT_UD; type++) {
		qp = qp_of((enum ibk_qp_type)type, 0xffff, 0x11111111u);
		p = make_pkt_op(send_only((enum ibk_qp_type)type), 0xffff,
				0x11111111u);
		p.b[1] |= 0x0f;
		bad += ibk_rx_check(&qp, p.b, p.b + IBK_BTH_LEN) !=
		       IBK_RX_DROP_TVER;
	}
	p = make_pkt(0xffff, 0x11111111u);
	p.b[1] |= 0x0f;
	hdrs[0] = p.b;
	v = 0xee;
	tap_ok(bad == 0 && ibk_rx_ud_burst(0xffff, 0x11111111u, hdrs, 1, &v) ==
	       0 && v == IBK_RX_DROP_TVER,
	       "TVer 15: DROP_TVER for every QP type, QP0 included, and in "
	       "the burst (rxe hdr_check)");
	p = make_pkt_op(0x04, 0x0001, 0x22222222u);
	p.b[1] |= 0x0f;
	tap_ok(ibk_rx_check(&ud, p.b, p.b + IBK_BTH_LEN) == IBK_RX_DROP_TVER,
	       "TVer is checked before the opcode, and both before the keys");
	p = make_pkt_op(0x04, 0x0001, 0x22222222u);
	tap_ok(ibk_rx_check(&ud, p.b, p.b + IBK_BTH_LEN) == IBK_RX_DROP_OPCODE,
	       "the opcode is checked before the keys: not a P_Key violation");
}

static void test_names(void)
{
	static const enum ibk_rx_verdict all[] = {
		IBK_RX_ACCEPT, IBK_RX_DROP_PKEY, IBK_RX_DROP_QKEY,
		IBK_RX_DROP_NEED_TABLE, IBK_RX_DROP_PORT,
		IBK_RX_DROP_PKEY_INDEX, IBK_RX_DROP_MALFORMED,
		IBK_RX_DROP_TVER, IBK_RX_DROP_OPCODE,
	};
	const size_t n = sizeof(all) / sizeof(all[0]);
	bool ok = true;
	size_t i, j;

	for (i = 0; i < n; i++) {
		const char *a = ibk_rx_verdict_name(all[i]);

		if (!a || !*a || strcmp(a, "unknown") == 0)
			ok = false;
		for (j = 0; ok && j < i; j++)
			if (strcmp(a, ibk_rx_verdict_name(all[j])) == 0)
				ok = false;
	}
	tap_ok(ok, "verdict names are non-empty and distinct");
	tap_ok(strcmp(ibk_rx_verdict_name((enum ibk_rx_verdict)99), "unknown") == 0,
	       "an out-of-range verdict is named \"unknown\"");
	tap_ok(IBK_RX_ACCEPT == 0, "IBK_RX_ACCEPT is 0");
}

static void test_tx(void)
{
	struct pkt p, orig;
	struct ibk_qp_keys rx = qp_of(IBK_QPT_UD, 0x8005, 0x80001234u);

	p = make_pkt(0, 0);
	orig = p;
	ibk_tx_fill_keys(p.b, p.b + IBK_BTH_LEN, 0x0005, 0x80000000u,
			 0x80001234u);
	tap_ok(p.b[2] == 0x00 && p.b[3] == 0x05 && p.b[12] == 0x80 &&
	       p.b[13] == 0x00 && p.b[14] == 0x12 && p.b[15] == 0x34,
	       "controlled WR Q_Key: the DETH carries the QP's Q_Key");
	tap_ok(memcmp(p.b, orig.b, 2) == 0 && memcmp(p.b + 4, orig.b + 4, 8) == 0 &&
	       memcmp(p.b + 16, orig.b + 16, 4) == 0,
	       "only the P_Key and Q_Key bytes change");
	tap_ok(ibk_rx_check(&rx, p.b, p.b + IBK_BTH_LEN) == IBK_RX_ACCEPT,
	       "and a UD QP holding that controlled Q_Key accepts it");

	ibk_tx_fill_keys(p.b, p.b + IBK_BTH_LEN, 0x0005, 0x00000b1bu,
			 0x80001234u);
	tap_ok(p.b[12] == 0x00 && p.b[13] == 0x00 && p.b[14] == 0x0b &&
	       p.b[15] == 0x1b,
	       "uncontrolled WR Q_Key: the DETH carries the WR's own");
	tap_ok(ibk_rx_check(&rx, p.b, p.b + IBK_BTH_LEN) == IBK_RX_DROP_QKEY,
	       "which the controlled-key QP drops as a Q_Key violation");

	p = make_pkt(0x1111, 0x22222222u);
	orig = p;
	ibk_tx_fill_keys(p.b, NULL, 0xabcd, 0x80000000u, 0x12345678u);
	tap_ok(p.b[2] == 0xab && p.b[3] == 0xcd &&
	       memcmp(p.b + 4, orig.b + 4, sizeof(p.b) - 4) == 0 &&
	       memcmp(p.b, orig.b, 2) == 0,
	       "no DETH: only the BTH P_Key is written");
}

/* A QP key and packet keys that often match, often nearly match. */
static uint16_t near_pkey(uint16_t qp)
{
	uint64_t r = test_rng64();

	switch (r % 4) {
	case 0:
		return qp;
	case 1:
		return (uint16_t)(qp ^ 0x8000);
	case 2:
		return (uint16_t)(qp ^ (1u << (r >> 8) % 16));
	default:
		return (uint16_t)(r >> 16);
	}
}

static uint32_t near_qkey(uint32_t qp)
{
	uint64_t r = test_rng64();

	switch (r % 3) {
	case 0:
	case 1:
		return qp;
	default:
		return qp ^ (1u << (r >> 8) % 32);
	}
}

static void test_burst(void)
{
	static uint8_t pool[68 * 24 + 8];
	const void *hdrs[68];
	uint8_t verdicts[68 + 8];
	unsigned bad_check = 0, bad_model = 0, bad_count = 0, bad_tail = 0;
	unsigned seen[16] = { 0 };
	unsigned trial;
	size_t n, i;

	for (trial = 0; trial < 40; trial++) {
		uint16_t qp_pkey =
			trial % 8 == 0 ? (uint16_t)(test_rng64() & 0x8000) :
			trial % 8 == 1 ? 0x7fff : (uint16_t)test_rng64();
		uint32_t qp_qkey =
			trial & 1 ? (uint32_t)test_rng64() : IBK_QKEY_GSI;
		struct ibk_qp_keys qp = qp_of(IBK_QPT_UD, qp_pkey, qp_qkey);

		for (n = 0; n <= 67; n++) {
			size_t accepted = 0, got;

			/* headers at odd spots: any alignment must work */
			for (i = 0; i < n; i++) {
				uint8_t *h = pool + i * 24 + test_rng_below(5);
				struct pkt p = make_pkt(near_pkey(qp_pkey),
							near_qkey(qp_qkey));

				if (test_rng_below(8) == 0)	/* any opcode */
					p.b[0] = (uint8_t)test_rng64();
				else if (test_rng_below(8) == 0)
					p.b[0] = 0x65;	/* SEND Only Imm */
				if (test_rng_below(8) == 0)	/* any TVer */
					p.b[1] |= (uint8_t)(1 + test_rng_below(15));
				memcpy(h, p.b, sizeof(p.b));
				hdrs[i] = h;
			}
			memset(verdicts, 0xee, sizeof(verdicts));
			got = ibk_rx_ud_burst(qp_pkey, qp_qkey, hdrs, n,
					      verdicts);
			for (i = 0; i < n; i++) {
				const uint8_t *h = (const uint8_t *)hdrs[i];
				uint16_t pk = (uint16_t)(h[2] << 8 | h[3]);
				uint32_t qk = (uint32_t)h[12] << 24 |
					      (uint32_t)h[13] << 16 |
					      (uint32_t)h[14] << 8 | h[15];
				unsigned want = model_rx_header(IBK_QPT_UD, h[0],
								h[1] & 0x0fu);

				if (want == IBK_RX_ACCEPT)
					want = !model_pkey_match(qp_pkey, pk) ? 1 :
					       qk != qp_qkey ? 2 : 0;

				bad_check += verdicts[i] !=
					     ibk_rx_check(&qp, h, h + 12);
				bad_model += verdicts[i] != want;
				accepted += verdicts[i] == IBK_RX_ACCEPT;
				if (verdicts[i] < 16)
					seen[verdicts[i]]++;
			}
			for (i = n; i < sizeof(verdicts); i++)
				bad_tail += verdicts[i] != 0xee;
			bad_count += got != accepted;
		}
	}
	tap_ok(bad_check == 0,
	       "rx_ud_burst == ibk_rx_check per packet, lengths 0..67 (%u bad)",
	       bad_check);
	tap_ok(bad_model == 0,
	       "rx_ud_burst == the rules (TVer, then the opcode, then P_Key, "
	       "then Q_Key) (%u bad)", bad_model);
	tap_ok(bad_count == 0 && bad_tail == 0,
	       "returns the number accepted, writes no verdict past n "
	       "(%u bad counts, %u bad tail bytes)", bad_count, bad_tail);
	tap_ok(seen[0] > 1000 && seen[1] > 1000 && seen[2] > 1000 &&
	       seen[IBK_RX_DROP_TVER] > 1000 && seen[IBK_RX_DROP_OPCODE] > 1000,
	       "the random packets exercised every verdict (%u accept, %u P_Key, "
	       "%u Q_Key, %u TVer, %u opcode)", seen[0], seen[1], seen[2],
	       seen[IBK_RX_DROP_TVER], seen[IBK_RX_DROP_OPCODE]);
	tap_ok(ibk_rx_ud_burst(0xffff, 0, NULL, 0, NULL) == 0,
	       "an empty burst accepts nothing");
}

static void test_errors(void)
{
	static const int codes[] = {
		IBK_OK, IBK_EINVAL, IBK_ERANGE, IBK_ENOENT, IBK_ENOTREADY,
		IBK_ESTALE, IBK_ENOSPC, IBK_EBUSY,
	};
	const size_t n = sizeof(codes) / sizeof(codes[0]);
	bool ok = true;
	size_t i, j;

	for (i = 0; i < n; i++) {
		const char *a = ibk_strerror(codes[i]);

		if (!a || !*a || strcmp(a, "unknown error") == 0)
			ok = false;
		for (j = 0; ok && j < i; j++)
			if (strcmp(a, ibk_strerror(codes[j])) == 0)
				ok = false;
	}
	tap_ok(ok, "ibk_strerror: distinct non-empty text for every code");
	tap_ok(strcmp(ibk_strerror(-1), "unknown error") == 0 &&
	       strcmp(ibk_strerror(1), "unknown error") == 0 &&
	       strcmp(ibk_strerror(-1000000), "unknown error") == 0,
	       "ibk_strerror: \"unknown error\" outside the enum");
	/* the oracle: the C library's <errno.h> (glibc, Linux's numbers) */
	tap_ok(IBK_OK == 0 && IBK_EINVAL == -EINVAL && IBK_ERANGE == -ERANGE &&
	       IBK_ENOENT == -ENOENT && IBK_ENOTREADY == -ENETDOWN &&
	       IBK_ESTALE == -ESTALE && IBK_ENOSPC == -ENOSPC &&
	       IBK_EBUSY == -EBUSY,
	       "each IBK_E* is the negative errno of its meaning (<errno.h>)");
}

int main(void)
{
	test_rng_seed(SEED);
	test_errors();
	test_types();
	test_header_model();
	test_header_cases();
	test_names();
	test_tx();
	test_burst();
	return tap_done();
}
