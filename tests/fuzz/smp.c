/* SPDX-License-Identifier: MIT */
/*
 * smp: the subnet-management parsers and the SMA on the fuzzer's bytes.
 * Every buffer lives in a heap block of exactly its size, so
 * AddressSanitizer catches a read past it. From the input, in turn:
 *  - an SMP of the fuzzer's length: ibk_smp_request_status() must give the
 *    verdict of the first checks qib's process_subn() and the MAD layer
 *    make (length, base version, class, hop count, then no-reply methods,
 *    class version, method), read here byte by byte; on a full MAD every
 *    header getter must return its IBA 13.4 / 14.2.1 field, the trap 256
 *    details taken from it must be its fields (DR: at most 30 hops,
 *    truncation said), and a reply must be the request with only the
 *    method, the status and the D bit changed (qib reply());
 *  - a run of M_Key checks against the rules of IBA 14.2.4 as qib and
 *    hfi1 check_mkey() apply them
 *    (protect level 3 acting as 2, lease started on a violation if the
 *    period is not 0, stopped by a good Get/Set/TrapRepress, ended lazily
 *    by the next SMP), with a clock that steps across the lease deadline
 *    and across the 64-bit wrap, the port counting violations up to
 *    0xffff;
 *  - a Notice of 64 bytes parsed as trap 256 and as 257/258: the fields
 *    of IBA 14.2.5.1 or IBK_EINVAL with the
 *    output untouched; then notices built from the fuzzer's details and
 *    parsed back;
 *  - a packet of the fuzzer's length: ibk_pkt_locate() must find LRH,
 *    GRH (LNH 3, NxtHdr 0x1b), BTH and the DETH of a UD SEND exactly when
 *    the length holds them, and the 257/258 details must be the packet's
 *    fields (qib_bad_pkey() callers); then ibk_port_rx_packet() to QP0,
 *    QP1 or a UD QP must apply qib_ud_rcv()'s management rules around
 *    ibk_port_rx()'s verdict (VL15 for QP0 only, 256-byte MADs, the
 *    permissive LID only to QP0 on a directed-route SMP, no immediate to
 *    QP0/QP1), counting exactly those drops in mad_drops;
 *  - a port whose tables answer up to 24 SubnGet/SubnSet SMPs of
 *    P_KeyTable, GUIDInfo or another attribute, checked against plain
 *    arrays: 32 P_Keys or 8 GUIDs a block, entries beyond the capacity
 *    ignored and read as 0, GUID entry 0 read-only, a block beyond the
 *    table 0x001c with the data zeroed, any other byte of the SMP
 *    untouched (qib subn_{get,set}_{pkeytable,guidinfo}()); a
 *    SubnSet(PortInfo) takes its GidPrefix to every non-empty entry (GID
 *    = GidPrefix || GUID on native IB), and later GUIDInfo Sets compose
 *    with it; at the end every entry and every find equals the arrays.
 */
#include "model.h"

#define MAD_LEN		256
#define NOTICE_LEN	64
#define PKEY_CAP_MAX	80u
#define GID_CAP_MAX	20u
#define SMA_OPS		24

/* ---- SMP header ------------------------------------------------------ */

static bool is_request_method(uint8_t m)
{
	return m == 0x01 || m == 0x02 || m == 0x07;	/* Get, Set, TrapRepress */
}

static bool is_no_reply_method(uint8_t m)
{
	return (m & 0x80) || m == 0x03 || m == 0x05 || m == 0x06;
}

static int model_request_status(const uint8_t *m, size_t len)
{
	if (len != MAD_LEN || m[0] != 1 || (m[1] != 0x01 && m[1] != 0x81) ||
	    (m[1] == 0x81 && m[7] > 63))
		return IBK_EINVAL;
	if (is_no_reply_method(m[3]))
		return IBK_ENOENT;
	if (m[2] != 1)
		return 0x0004;
	return is_request_method(m[3]) ? 0 : 0x0008;
}

static void check_header(const uint8_t *m)
{
	FZ_CHECK(ibk_mad_base_version(m) == m[0], "BaseVersion");
	FZ_CHECK(ibk_mad_mgmt_class(m) == m[1], "MgmtClass");
	FZ_CHECK(ibk_mad_class_version(m) == m[2], "ClassVersion");
	FZ_CHECK(ibk_mad_method(m) == m[3], "Method");
	FZ_CHECK(ibk_mad_status(m) == model_be(m + 4, 2), "Status");
	FZ_CHECK(ibk_smp_hop_ptr(m) == m[6], "HopPointer");
	FZ_CHECK(ibk_smp_hop_cnt(m) == m[7], "HopCount");
	FZ_CHECK(ibk_mad_tid(m) == model_be(m + 8, 8), "TID");
	FZ_CHECK(ibk_mad_attr_id(m) == model_be(m + 16, 2), "AttributeID");
	FZ_CHECK(ibk_mad_attr_mod(m) == model_be(m + 20, 4), "AttributeModifier");
	FZ_CHECK(ibk_smp_mkey(m) == model_be(m + 24, 8), "M_Key");
	FZ_CHECK(ibk_smp_dr_slid(m) == model_be(m + 32, 2), "DrSLID");
	FZ_CHECK(ibk_smp_dr_dlid(m) == model_be(m + 34, 2), "DrDLID");
	FZ_CHECK(ibk_smp_data(m) == m + 64, "data at byte 64");
	FZ_CHECK(ibk_smp_is_dr(m) == (m[1] == 0x81), "directed route");
}

static void check_trap_256_from(const uint8_t *m)
{
	struct ibk_trap_256 t;
	bool dr = m[1] == 0x81;
	unsigned hops = dr ? m[7] : 0, kept = hops > 30 ? 30 : hops, i;

	ibk_trap_256_from_smp(m, 0x1234, &t);
	FZ_CHECK(t.lid == 0x1234 && t.method == m[3] &&
		 t.attr_id == model_be(m + 16, 2) &&
		 t.attr_mod == model_be(m + 20, 4) &&
		 t.mkey == model_be(m + 24, 8), "trap 256 SMP fields");
	FZ_CHECK(t.dr_notice == dr &&
		 t.dr_slid == (dr ? model_be(m + 32, 2) : 0), "trap 256 DR");
	FZ_CHECK(t.dr_hop_cnt == kept && t.dr_truncated == (hops > 30),
		 "trap 256 hops %u", hops);
	for (i = 0; i < 30; i++)
		/* ReturnPath[1..hops]: entry 0 is unused (Linux smi.c) */
		FZ_CHECK(t.dr_return_path[i] == (i < kept ? m[193 + i] : 0),
			 "trap 256 return path byte %u", i);
}

static void check_reply(const uint8_t *m, uint16_t status)
{
	uint8_t *r = (uint8_t *)malloc(MAD_LEN);
	uint16_t want = (uint16_t)(model_be(m + 4, 2) | status |
				   (m[1] == 0x81 ? 0x8000 : 0));
	int rc, i;

	if (!r)
		abort();
	memcpy(r, m, MAD_LEN);
	rc = ibk_smp_make_reply(r, status);
	if (is_no_reply_method(m[3]) || m[3] == 0x07) {
		FZ_CHECK(rc == IBK_EINVAL && memcmp(r, m, MAD_LEN) == 0,
			 "method %02x must get no reply", m[3]);
	} else {
		FZ_CHECK(rc == IBK_OK, "reply to method %02x", m[3]);
		FZ_CHECK(r[3] == 0x81 && model_be(r + 4, 2) == want,
			 "reply method %02x status %04x", r[3],
			 (unsigned)model_be(r + 4, 2));
		for (i = 0; i < MAD_LEN; i++)
			FZ_CHECK(i == 3 || i == 4 || i == 5 || r[i] == m[i],
				 "reply byte %d changed", i);
	}
	free(r);
}

static void check_smp(struct fz *f)
{
	size_t len = fz_below(f, 4) ? MAD_LEN : fz_below(f, MAD_LEN + 8);
	uint8_t *m = fz_exact(f, len);
	int st = ibk_smp_request_status(m, len);

	FZ_CHECK(st == model_request_status(m, len),
		 "request status %d, len %zu", st, len);
	FZ_CHECK(ibk_smp_request_status(NULL, MAD_LEN) == IBK_EINVAL, "NULL");
	if (len == MAD_LEN) {
		check_header(m);
		check_trap_256_from(m);
		check_reply(m, (uint16_t)(st > 0 ? st : 0));
	}
	free(m);
}

/* ---- M_Key ----------------------------------------------------------- */

struct mkey_model {
	uint64_t mkey, deadline;
	uint16_t period;
	uint8_t level;		/* protect bits as written */
	bool running;
};

static enum ibk_mkey_verdict model_mkey(struct mkey_model *s, uint8_t method,
					uint64_t key, uint64_t now)
{
	unsigned level;

	if (s->running && (int64_t)(now - s->deadline) >= 0) {
		s->running = false;
		s->level = 0;
	}
	if (!is_request_method(method))
		return IBK_MKEY_PROCESS;
	if (s->mkey == 0 || key == s->mkey) {
		s->running = false;
		return IBK_MKEY_PROCESS;
	}
	level = s->level & 3;
	if (method == 0x01 && level == 0)
		return IBK_MKEY_PROCESS;
	if (method == 0x01 && level == 1)
		return IBK_MKEY_PROCESS_HIDE_MKEY;
	if (!s->running && s->period) {
		s->running = true;
		s->deadline = now + (uint64_t)s->period * 1000000000u;
	}
	return IBK_MKEY_VIOLATION;
}

static uint64_t pick_mkey(struct fz *f, uint64_t port_key)
{
	switch (fz_below(f, 4)) {
	case 0:  return port_key;
	case 1:  return 0;
	case 2:  return port_key ^ 1;
	default: return fz_u64(f);
	}
}

static uint64_t next_time(struct fz *f, uint64_t now, const struct mkey_model *s)
{
	uint64_t lease = (uint64_t)s->period * 1000000000u;

	switch (fz_below(f, 6)) {
	case 0:  return now;
	case 1:  return now + 1;
	case 2:  return s->deadline - 1;
	case 3:  return s->deadline;
	case 4:  return now + lease + fz_u8(f);
	default: return now + fz_u64(f);
	}
}

static void check_mkey(struct fz *f, struct ibk_port *port)
{
	static const uint8_t methods[] = { 0x01, 0x02, 0x07, 0x03, 0x05,
					   0x06, 0x81, 0x86, 0x04, 0xff };
	struct ibk_mkey_state st;
	struct mkey_model m;
	uint64_t now = fz_u64(f);
	uint32_t violations = 0;
	unsigned n = fz_below(f, 32), i;

	m.mkey = fz_bool(f) ? 0 : fz_u64(f);
	m.period = fz_below(f, 3) ? (uint16_t)fz_below(f, 4) : fz_u16(f);
	m.level = (uint8_t)fz_below(f, 8);
	m.running = false;
	m.deadline = 0;
	st.mkey = m.mkey;
	st.lease_period = m.period;
	st.protect_bits = m.level;
	st.lease_running = false;
	st.lease_deadline_ns = 0;
	ibk_port_reset(port);
	for (i = 0; i < n; i++) {
		uint8_t method = methods[fz_below(f, sizeof(methods))];
		uint64_t key = pick_mkey(f, m.mkey);
		enum ibk_mkey_verdict want, got;

		now = next_time(f, now, &m);
		want = model_mkey(&m, method, key, now);
		got = ibk_sma_mkey_check(port, &st, method, key, now);
		FZ_CHECK(got == want, "M_Key step %u method %02x level %u: "
			 "%s, want %s", i, method, m.level,
			 ibk_mkey_verdict_name(got), ibk_mkey_verdict_name(want));
		FZ_CHECK(st.lease_running == m.running &&
			 (!m.running || st.lease_deadline_ns == m.deadline) &&
			 (st.protect_bits & 3) == (m.level & 3),
			 "M_Key lease state after step %u", i);
		violations += want == IBK_MKEY_VIOLATION;
		FZ_CHECK(ibk_counter16_read(&port->mkey_violations) ==
			 (violations < 0xffff ? violations : 0xffff),
			 "M_KeyViolations");
	}
}

/* ---- Notices --------------------------------------------------------- */

static void check_notice_parse(struct fz *f)
{
	uint8_t *n = fz_exact(f, NOTICE_LEN);
	struct ibk_trap_256 t, t0;
	struct ibk_trap_key k, k0;
	uint16_t trap = (uint16_t)model_be(n + 4, 2);
	bool generic = n[0] & 0x80;
	const uint8_t *d = n + 10;
	unsigned i;
	int rc;

	FZ_CHECK(ibk_notice_is_generic(n) == generic &&
		 ibk_notice_type(n) == (n[0] & 0x7f) &&
		 ibk_notice_producer(n) == model_be(n + 1, 3) &&
		 ibk_notice_trap_number(n) == trap &&
		 ibk_notice_issuer_lid(n) == model_be(n + 6, 2) &&
		 ibk_notice_toggle(n) == (n[8] >> 7) &&
		 ibk_notice_count(n) == (model_be(n + 8, 2) & 0x7fff),
		 "notice header");

	memset(&t, 0x5a, sizeof(t));
	t0 = t;
	rc = ibk_notice_parse_256(n, &t);
	if (!generic || trap != 256) {
		FZ_CHECK(rc == IBK_EINVAL && memcmp(&t, &t0, sizeof(t)) == 0,
			 "not a trap 256: %d", rc);
	} else {
		FZ_CHECK(rc == IBK_OK && t.lid == model_be(d + 2, 2) &&
			 t.dr_slid == model_be(d + 4, 2) && t.method == d[6] &&
			 t.attr_id == model_be(d + 8, 2) &&
			 t.attr_mod == model_be(d + 10, 4) &&
			 t.mkey == model_be(d + 14, 8) &&
			 t.dr_notice == (d[23] >> 7) &&
			 t.dr_truncated == (d[23] >> 6 & 1) &&
			 t.dr_hop_cnt == (d[23] & 0x3f), "trap 256 fields");
		for (i = 0; i < 30; i++)
			FZ_CHECK(t.dr_return_path[i] == d[24 + i],
				 "trap 256 path byte %u", i);
	}

	memset(&k, 0x5a, sizeof(k));
	k0 = k;
	rc = ibk_notice_parse_key_trap(n, &k);
	if (!generic || (trap != 257 && trap != 258)) {
		FZ_CHECK(rc == IBK_EINVAL && memcmp(&k, &k0, sizeof(k)) == 0,
			 "not a trap 257/258: %d", rc);
	} else {
		FZ_CHECK(rc == trap && k.lid1 == model_be(d + 2, 2) &&
			 k.lid2 == model_be(d + 4, 2) &&
			 k.key == model_be(d + 6, 4) && k.sl == d[10] >> 4 &&
			 k.qp1 == model_be(d + 11, 3) &&
			 k.qp2 == model_be(d + 15, 3) &&
			 memcmp(k.gid1.raw, d + 18, 16) == 0 &&
			 memcmp(k.gid2.raw, d + 34, 16) == 0,
			 "trap %u fields", trap);
	}
	free(n);
}

static void check_notice_build(struct fz *f)
{
	uint8_t *n = (uint8_t *)malloc(NOTICE_LEN);
	struct ibk_trap_256 t, back;
	struct ibk_trap_key k, kb;
	uint32_t producer = fz_below(f, 5);
	uint16_t lid = fz_u16(f), trap;
	unsigned kept, i;
	int rc;

	if (!n)
		abort();
	memset(&t, 0, sizeof(t));
	t.lid = fz_u16(f);
	t.dr_slid = fz_u16(f);
	t.method = fz_u8(f);
	t.attr_id = fz_u16(f);
	t.attr_mod = fz_u32(f);
	t.mkey = fz_u64(f);
	t.dr_notice = fz_bool(f);
	t.dr_truncated = fz_bool(f);
	t.dr_hop_cnt = fz_u8(f);
	fz_bytes(f, t.dr_return_path, sizeof(t.dr_return_path));
	memset(n, 0xa5, NOTICE_LEN);
	ibk_notice_build_256(producer, lid, &t, n);
	FZ_CHECK(n[0] == 0x82 && model_be(n + 1, 3) == producer &&
		 model_be(n + 4, 2) == 256 && model_be(n + 6, 2) == lid &&
		 n[8] == 0 && n[9] == 0, "trap 256 notice header");
	FZ_CHECK(ibk_notice_parse_256(n, &back) == IBK_OK, "trap 256 parse");
	kept = t.dr_hop_cnt > 30 ? 30 : t.dr_hop_cnt;
	FZ_CHECK(back.lid == t.lid && back.dr_slid == t.dr_slid &&
		 back.method == t.method && back.attr_id == t.attr_id &&
		 back.attr_mod == t.attr_mod && back.mkey == t.mkey &&
		 back.dr_notice == t.dr_notice &&
		 back.dr_truncated == (t.dr_truncated || t.dr_hop_cnt > 30) &&
		 back.dr_hop_cnt == kept, "trap 256 round trip");
	for (i = 0; i < 30; i++)
		FZ_CHECK(back.dr_return_path[i] ==
			 (i < kept ? t.dr_return_path[i] : 0),
			 "trap 256 path byte %u after a round trip", i);

	trap = (uint16_t)(255 + fz_below(f, 5));
	k.lid1 = fz_u16(f);
	k.lid2 = fz_u16(f);
	k.key = fz_u32(f);
	k.sl = (uint8_t)fz_below(f, 16);
	k.qp1 = fz_u32(f) & 0xffffffu;
	k.qp2 = fz_u32(f) & 0xffffffu;
	fz_bytes(f, k.gid1.raw, 16);
	fz_bytes(f, k.gid2.raw, 16);
	memset(n, 0xa5, NOTICE_LEN);
	rc = ibk_notice_build_key_trap(trap, producer, lid, &k, n);
	if (trap != 257 && trap != 258) {
		for (i = 0; i < NOTICE_LEN; i++)
			FZ_CHECK(n[i] == 0xa5, "trap %u must write nothing",
				 trap);
		FZ_CHECK(rc == IBK_EINVAL, "trap %u build: %d", trap, rc);
	} else {
		FZ_CHECK(rc == IBK_OK && n[0] == 0x82 &&
			 model_be(n + 4, 2) == trap, "trap %u build", trap);
		FZ_CHECK(ibk_notice_parse_key_trap(n, &kb) == trap &&
			 kb.lid1 == k.lid1 && kb.lid2 == k.lid2 &&
			 kb.key == k.key && kb.sl == k.sl && kb.qp1 == k.qp1 &&
			 kb.qp2 == k.qp2 &&
			 memcmp(&kb.gid1, &k.gid1, 16) == 0 &&
			 memcmp(&kb.gid2, &k.gid2, 16) == 0,
			 "trap %u round trip", trap);
	}
	free(n);
}

/* ---- A dropped packet's trap details, the management rules ----------- */

/* qib_ud_rcv()'s rules, restated from its source: @before the keys or
 * after them, for a UD SEND at @p of @len bytes (DETH at @deth). */
static enum ibk_rx_verdict model_mad_rule(bool before, enum ibk_qp_type t,
					  const uint8_t *p, size_t len,
					  const uint8_t *deth)
{
	long tlen = (long)len - (long)(deth + 8 - p) - ((deth[-11] >> 4) & 3) - 4;
	unsigned vl = p[0] >> 4;
	bool permissive = model_be(p + 2, 2) == 0xffff ||
			  model_be(p + 6, 2) == 0xffff;

	if (before && t != IBK_QPT_SMI)
		return permissive ? IBK_RX_DROP_PERMISSIVE : IBK_RX_ACCEPT;
	if (before) {
		if (tlen != 256)
			return IBK_RX_DROP_MAD_LENGTH;
		if (vl != 15)
			return IBK_RX_DROP_MAD_VL;
		return permissive && deth[9] != 0x81 ? IBK_RX_DROP_PERMISSIVE :
		       IBK_RX_ACCEPT;
	}
	if (t == IBK_QPT_GSI && tlen != 256)
		return IBK_RX_DROP_MAD_LENGTH;
	if (t == IBK_QPT_GSI && vl == 15)
		return IBK_RX_DROP_MAD_VL;
	return t != IBK_QPT_UD && deth[-12] == 0x65 ? IBK_RX_DROP_MAD_IMM :
	       IBK_RX_ACCEPT;
}

static void check_rx_packet(struct fz *f, struct ibk_port *port,
			    const uint8_t *p, size_t len, const uint8_t *bth,
			    const uint8_t *deth)
{
	static const enum ibk_qp_type types[3] = {
		IBK_QPT_SMI, IBK_QPT_GSI, IBK_QPT_UD
	};
	const ibk_pkey_t def = IBK_PKEY_DEFAULT;
	struct ibk_qp_keys qp = { types[fz_below(f, 3)], 0, 0, 0 };
	enum ibk_rx_verdict want = IBK_RX_ACCEPT, got;
	uint16_t drops;

	qp.qkey = qp.type == IBK_QPT_GSI ? IBK_QKEY_GSI : fz_u32(f);
	ibk_port_set_state(port, IBK_PORT_ACTIVE);
	ibk_pkey_table_refill(&port->pkeys, &def, 1,
			      ibk_pkey_table_refill_ticket(&port->pkeys));
	drops = ibk_counter16_read(&port->mad_drops);
	if (deth)
		want = model_mad_rule(true, qp.type, p, len, deth);
	if (want == IBK_RX_ACCEPT) {
		want = ibk_port_rx(port, &qp, bth, deth);
		ibk_counter16_reset(&port->pkey_violations);
		ibk_counter16_reset(&port->qkey_violations);
	}
	if (want == IBK_RX_ACCEPT && deth)
		want = model_mad_rule(false, qp.type, p, len, deth);
	got = ibk_port_rx_packet(port, &qp, p, len, NULL);
	FZ_CHECK(got == want, "rx_packet to QP type %d: %s, model %s",
		 (int)qp.type, ibk_rx_verdict_name(got),
		 ibk_rx_verdict_name(want));
	FZ_CHECK(ibk_counter16_read(&port->mad_drops) ==
		 drops + (want >= IBK_RX_DROP_MAD_VL), "mad_drops");
}

static void check_packet(struct fz *f, struct ibk_port *port)
{
	size_t len = fz_below(f, 96), off = 8;
	uint8_t *p = fz_exact(f, len);
	const uint8_t *grh = NULL, *bth = NULL, *deth = NULL;
	struct ibk_pkt_headers h;
	struct ibk_trap_key k;
	int want = IBK_EINVAL, rc;
	uint16_t trap;

	if (len >= 8 && (p[1] & 3) >= 2) {
		want = IBK_OK;
		if ((p[1] & 3) == 3) {
			if (len < 48 || p[14] != 0x1b)
				want = IBK_EINVAL;
			grh = p + 8;
			off += 40;
		}
		if (want == IBK_OK && len < off + 12)
			want = IBK_EINVAL;
		bth = p + off;
		if (want == IBK_OK && (bth[0] & 0xfe) == 0x64) {
			if (len < off + 20)
				want = IBK_EINVAL;
			deth = bth + 12;
		}
	}
	rc = ibk_pkt_locate(p, len, &h);
	FZ_CHECK(rc == want, "locate: %d, want %d, len %zu", rc, want, len);
	if (rc == IBK_OK) {
		FZ_CHECK(h.lrh == p && h.grh == grh && h.bth == bth &&
			 h.deth == deth, "header pointers");
		for (trap = 257; trap <= 258; trap++) {
			memset(&k, 0x5a, sizeof(k));
			rc = ibk_trap_key_from_headers(&h, trap, &k);
			if (trap == 258 && !deth) {
				FZ_CHECK(rc == IBK_EINVAL, "258 without DETH");
				continue;
			}
			FZ_CHECK(rc == IBK_OK && k.lid1 == model_be(p + 6, 2) &&
				 k.lid2 == model_be(p + 2, 2) &&
				 k.sl == p[1] >> 4 &&
				 k.key == (trap == 257 ? model_be(bth + 2, 2) :
					   model_be(deth, 4)) &&
				 k.qp1 == (deth ? model_be(deth + 5, 3) : 0) &&
				 k.qp2 == model_be(bth + 5, 3),
				 "trap %u details", trap);
			FZ_CHECK(grh ? memcmp(k.gid1.raw, grh + 8, 16) == 0 &&
				       memcmp(k.gid2.raw, grh + 24, 16) == 0 :
				       model_gid_zero(k.gid1.raw) &&
				       model_gid_zero(k.gid2.raw),
				 "trap %u GIDs", trap);
		}
		check_rx_packet(f, port, p, len, bth, deth);
	}
	free(p);
}

/* ---- The SMA against plain arrays ------------------------------------ */

struct sma_world {
	uint32_t pcap, gcap;
	uint16_t pk[PKEY_CAP_MAX];
	uint64_t pre[GID_CAP_MAX], guid[GID_CAP_MAX];	/* both 0: empty */
	uint64_t prefix;			/* PortInfo:GidPrefix */
};

/* SubnSet(PortInfo) of GidPrefix @prefix: every non-empty GID takes it;
 * the number that changed. */
static int sma_model_prefix(struct sma_world *w, uint64_t prefix)
{
	uint32_t i;
	int n = 0;

	w->prefix = prefix;
	for (i = 0; i < w->gcap; i++) {
		if ((w->pre[i] == 0 && w->guid[i] == 0) || w->pre[i] == prefix)
			continue;
		w->pre[i] = prefix;
		n++;
	}
	return n;
}

/* Every GID entry and every find against the arrays. */
static void sma_check_gids(const struct ibk_port *port,
			   const struct sma_world *w)
{
	struct ibk_gid_entry e;
	struct ibk_gid gid;
	uint32_t i, first;

	for (i = 0; i < w->gcap; i++) {
		int rc = ibk_gid_table_get(&port->gids, i, &e);

		if (w->pre[i] == 0 && w->guid[i] == 0) {
			FZ_CHECK(rc == IBK_ENOENT, "GID %u not empty", i);
			continue;
		}
		FZ_CHECK(rc == IBK_OK && ibk_gid_subnet_prefix(&e.gid) ==
			 w->pre[i] && ibk_gid_guid(&e.gid) == w->guid[i],
			 "GID %u differs", i);
		for (first = 0; w->pre[first] != w->pre[i] ||
				w->guid[first] != w->guid[i]; first++)
			;
		ibk_gid_set(w->pre[i], w->guid[i], &gid);
		FZ_CHECK(ibk_gid_table_find(&port->gids, &gid,
					    IBK_GID_TYPE_IB, NULL) ==
			 (int)first, "find of GID %u", i);
	}
}

/* The SMP's data as the tables should leave it, and the MAD status. */
static int sma_model(struct sma_world *w, const uint8_t *m, uint8_t *data)
{
	uint16_t attr = (uint16_t)model_be(m + 16, 2);
	uint32_t mod = (uint32_t)model_be(m + 20, 4), first, i;
	bool set = m[3] == 0x02;

	memcpy(data, m + 64, 64);
	if (attr == 0x0016) {			/* P_KeyTable */
		first = (mod & 0xffff) * 32;
		if (first >= w->pcap)
			goto invalid;
		for (i = 0; i < 32; i++) {
			if (set && first + i < w->pcap)
				w->pk[first + i] =
					(uint16_t)model_be(data + 2 * i, 2);
			data[2 * i] = first + i < w->pcap ?
				      (uint8_t)(w->pk[first + i] >> 8) : 0;
			data[2 * i + 1] = first + i < w->pcap ?
					  (uint8_t)w->pk[first + i] : 0;
		}
		return 0;
	}
	if (attr == 0x0014) {			/* GUIDInfo */
		first = mod * 8;
		if (mod > 255 || first >= w->gcap)
			goto invalid;
		for (i = 0; i < 8; i++) {
			uint64_t g = model_be(data + 8 * i, 8);
			unsigned b;

			if (set && first + i < w->gcap && first + i != 0) {
				w->guid[first + i] = g;
				w->pre[first + i] = g ? w->prefix : 0;
			}
			g = first + i < w->gcap ? w->guid[first + i] : 0;
			for (b = 0; b < 8; b++)
				data[8 * i + b] = (uint8_t)(g >> (56 - 8 * b));
		}
		return 0;
	}
	return 0x000c;
invalid:
	memset(data, 0, 64);
	return 0x001c;
}

static void sma_smp(struct fz *f, uint8_t *m, const struct sma_world *w)
{
	static const uint16_t attrs[] = { 0x0016, 0x0014, 0x0015, 0x0011 };
	uint16_t attr = attrs[fz_below(f, 4)];
	uint32_t mod;

	memset(m, 0, MAD_LEN);
	m[0] = 1;
	m[1] = fz_bool(f) ? 0x81 : 0x01;
	m[2] = fz_below(f, 16) ? 1 : 2;
	m[3] = fz_below(f, 8) ? (uint8_t)(1 + fz_bool(f)) : fz_u8(f);
	m[7] = (uint8_t)fz_below(f, 64);
	m[16] = (uint8_t)(attr >> 8);
	m[17] = (uint8_t)attr;
	if (attr == 0x0016)
		mod = (uint32_t)fz_u8(f) << 16 | fz_below(f, w->pcap / 32 + 3);
	else if (fz_below(f, 8))
		mod = fz_below(f, w->gcap / 8 + 3);
	else
		mod = fz_u32(f);
	m[20] = (uint8_t)(mod >> 24);
	m[21] = (uint8_t)(mod >> 16);
	m[22] = (uint8_t)(mod >> 8);
	m[23] = (uint8_t)mod;
	fz_bytes(f, m + 24, 8);
	fz_bytes(f, m + 64, 64);
	if (attr == 0x0014 && fz_bool(f))	/* often-empty GUIDs */
		memset(m + 64 + 8 * fz_below(f, 8), 0, 8);
}

static void check_sma(struct fz *f)
{
	struct sma_world w;
	uint32_t pslots, gslots, i, k;
	struct ibk_pkey_cell *pc;
	struct ibk_gid_cell *gc;
	struct ibk_hash_slot *ps, *gs;
	struct ibk_gid_entry ge[GID_CAP_MAX];
	struct ibk_port *port;
	uint8_t *m = (uint8_t *)malloc(MAD_LEN), *before, data[64];
	unsigned n = fz_below(f, SMA_OPS + 1);

	w.pcap = 1 + fz_below(f, PKEY_CAP_MAX);
	w.gcap = 1 + fz_below(f, GID_CAP_MAX);
	pslots = IBK_PKEY_HASH_SLOTS(w.pcap);
	gslots = IBK_HASH_SLOTS(w.gcap);
	pc = (struct ibk_pkey_cell *)fz_storage(IBK_PKEY_CELLS(w.pcap) *
						sizeof(*pc));
	gc = (struct ibk_gid_cell *)fz_storage(IBK_GID_CELLS(w.gcap) *
					       sizeof(*gc));
	ps = (struct ibk_hash_slot *)fz_storage(pslots * sizeof(*ps));
	gs = (struct ibk_hash_slot *)fz_storage(gslots * sizeof(*gs));
	port = (struct ibk_port *)fz_storage(sizeof(*port));
	before = (uint8_t *)malloc(MAD_LEN);
	if (!m || !before)
		abort();
	FZ_CHECK(ibk_port_init(port, pc, w.pcap, ps, pslots, gc, w.gcap, gs,
			       gslots) == IBK_OK &&
		 ibk_port_set_state(port, IBK_PORT_ACTIVE) == IBK_OK,
		 "port init");
	for (i = 0; i < w.pcap; i++)
		w.pk[i] = fz_u16(f);
	for (i = 0; i < w.gcap; i++) {
		ge[i].type = IBK_GID_TYPE_IB;
		fz_bytes(f, ge[i].gid.raw, 16);
		w.pre[i] = model_be(ge[i].gid.raw, 8);
		w.guid[i] = model_be(ge[i].gid.raw + 8, 8);
	}
	w.prefix = fz_bool(f) ? UINT64_C(0xfe80000000000000) : fz_u64(f);
	FZ_CHECK(ibk_pkey_table_refill(&port->pkeys, w.pk, w.pcap,
		 ibk_pkey_table_refill_ticket(&port->pkeys)) == IBK_OK &&
		 ibk_gid_table_refill(&port->gids, ge, w.gcap,
		 ibk_gid_table_refill_ticket(&port->gids)) == IBK_OK,
		 "refill");
	for (k = 0; k < n; k++) {
		int want, got;

		sma_smp(f, m, &w);
		memcpy(before, m, MAD_LEN);
		if (model_request_status(m, MAD_LEN) != 0 ||
		    (m[3] != 0x01 && m[3] != 0x02)) {
			got = ibk_sma_answer_table(port, m, MAD_LEN, w.prefix);
			FZ_CHECK(got == IBK_EINVAL &&
				 memcmp(m, before, MAD_LEN) == 0,
				 "SMA must refuse method %02x: %d", m[3], got);
			continue;
		}
		want = sma_model(&w, m, data);
		got = ibk_sma_answer_table(port, m, MAD_LEN, w.prefix);
		FZ_CHECK(got == want, "SMA op %u attr %04x mod %08x: %d, "
			 "want %d", k, (unsigned)model_be(m + 16, 2),
			 (unsigned)model_be(m + 20, 4), got, want);
		FZ_CHECK(memcmp(m, before, 64) == 0, "SMA header changed");
		FZ_CHECK(memcmp(m + 64, data, 64) == 0, "SMA op %u data", k);
		FZ_CHECK(memcmp(m + 128, before + 128, MAD_LEN - 128) == 0,
			 "SMA changed bytes past the data");
		if (model_be(m + 16, 2) == 0x0015 && m[3] == 0x02) {
			uint64_t p = model_be(m + 64 + 8, 8);

			want = sma_model_prefix(&w, p);
			got = ibk_sma_apply_portinfo(port, m + 64);
			FZ_CHECK(got == want, "PortInfo GidPrefix %016llx: %d "
				 "changed, want %d", (unsigned long long)p,
				 got, want);
		}
	}
	sma_check_gids(port, &w);
	FZ_CHECK(ibk_sma_answer_table(port, m, MAD_LEN - 1, w.prefix) ==
		 IBK_EINVAL, "short SMP");
	FZ_CHECK(ibk_sma_answer_table(NULL, m, MAD_LEN, w.prefix) ==
		 IBK_EINVAL, "NULL port");
	free(before);
	free(m);
	free(port);
	free(gs);
	free(ps);
	free(gc);
	free(pc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = fz_init(data, size);
	struct ibk_port *port;
	struct ibk_pkey_cell pc[IBK_PKEY_CELLS(1)];
	struct ibk_gid_cell gc[IBK_GID_CELLS(1)];
	struct ibk_hash_slot ps[IBK_PKEY_HASH_SLOTS(1)], gs[IBK_HASH_SLOTS(1)];

	port = (struct ibk_port *)fz_storage(sizeof(*port));
	if (ibk_port_init(port, pc, 1, ps, IBK_PKEY_HASH_SLOTS(1), gc, 1, gs,
			  IBK_HASH_SLOTS(1)) != IBK_OK)
		abort();
	check_smp(&f);
	check_mkey(&f, port);
	check_notice_parse(&f);
	check_notice_build(&f);
	check_packet(&f, port);
	check_sma(&f);
	free(port);
	return 0;
}
