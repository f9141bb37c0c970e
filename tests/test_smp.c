/* SPDX-License-Identifier: MIT */
/*
 * test_smp.c - the subnet management section of ib_keys.h.
 *
 * Part 1, the layouts, against two independent oracles where they are
 * installed (native builds with libibmad-dev and libopensm-dev): every MAD,
 * SMP, PortInfo, P_KeyTable, GUIDInfo and Notice field the library reads
 * or writes, with random values, must read back through libibmad's
 * mad_get_field()/mad_get_field64() and through OpenSM's iba/ib_types.h
 * structs, and what mad_set_field() writes must read back through the
 * library; no setter may touch another byte or bit. Builds without the
 * two (cross builds, or a machine without them) say so with a TAP SKIP.
 *
 * Part 2, the behaviour, written from the rules (IBA 14.2.4 and 14.2.5,
 * the kernel's qib/hfi1 check_mkey(), process_subn(), reply(),
 * qib_bad_mkey(), qib_bad_pkey(), qib_send_trap()): the M_Key table, one
 * case per row, with the lease timer driven by the time passed in; the
 * request checks and the reply; trap 256, 257 and 258 notices; the trap
 * rate limit.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ib_keys.h"
#include "rng.h"
#include "tap.h"

#ifdef IBK_TEST_HAVE_ORACLES
#include <infiniband/mad.h>
#include <iba/ib_types.h>
#endif

#define SEED	0x5e11a5a5d00dfeedull
#define ROUNDS	2000

static void random_bytes(uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)test_rng64();
}

/* Bytes of @a and @b outside [off, off + len) that differ. */
static unsigned others_differ(const uint8_t *a, const uint8_t *b, size_t n,
			      size_t off, size_t len)
{
	unsigned d = 0;
	size_t i;

	for (i = 0; i < n; i++)
		d += (i < off || i >= off + len) && a[i] != b[i];
	return d;
}

#ifdef IBK_TEST_HAVE_ORACLES
/* ------------------------------------------------------------------------
 * Part 1: layouts against libibmad and OpenSM
 * ------------------------------------------------------------------------ */

/*
 * One field: the library's accessors on a buffer of @buf_len bytes, the
 * libibmad field, and the byte range it lives in (for the untouched-bytes
 * check) and its width in bits.
 */
struct field {
	const char *name;
	enum MAD_FIELDS mad;
	unsigned off, len, bits;
	uint64_t (*get)(const void *);
	void (*set)(void *, uint64_t);
};

#define ACCESSORS(name, type, getter, setter)				\
	static uint64_t get_##name(const void *p)			\
	{								\
		return (uint64_t)getter(p);				\
	}								\
	static void set_##name(void *p, uint64_t v)			\
	{								\
		setter(p, (type)v);					\
	}

ACCESSORS(basever, uint8_t, ibk_mad_base_version, ibk_mad_set_base_version)
ACCESSORS(mclass, uint8_t, ibk_mad_mgmt_class, ibk_mad_set_mgmt_class)
ACCESSORS(classver, uint8_t, ibk_mad_class_version, ibk_mad_set_class_version)
ACCESSORS(status, uint16_t, ibk_mad_status, ibk_mad_set_status)
ACCESSORS(hopptr, uint8_t, ibk_smp_hop_ptr, ibk_smp_set_hop_ptr)
ACCESSORS(hopcnt, uint8_t, ibk_smp_hop_cnt, ibk_smp_set_hop_cnt)
ACCESSORS(tid, uint64_t, ibk_mad_tid, ibk_mad_set_tid)
ACCESSORS(attrid, uint16_t, ibk_mad_attr_id, ibk_mad_set_attr_id)
ACCESSORS(attrmod, uint32_t, ibk_mad_attr_mod, ibk_mad_set_attr_mod)
ACCESSORS(smpmkey, uint64_t, ibk_smp_mkey, ibk_smp_set_mkey)
ACCESSORS(drslid, uint16_t, ibk_smp_dr_slid, ibk_smp_set_dr_slid)
ACCESSORS(drdlid, uint16_t, ibk_smp_dr_dlid, ibk_smp_set_dr_dlid)

ACCESSORS(pimkey, uint64_t, ibk_portinfo_mkey, ibk_portinfo_set_mkey)
ACCESSORS(prefix, uint64_t, ibk_portinfo_gid_prefix, ibk_portinfo_set_gid_prefix)
ACCESSORS(lid, uint16_t, ibk_portinfo_lid, ibk_portinfo_set_lid)
ACCESSORS(smlid, uint16_t, ibk_portinfo_master_sm_lid, ibk_portinfo_set_master_sm_lid)
ACCESSORS(capmask, uint32_t, ibk_portinfo_cap_mask, ibk_portinfo_set_cap_mask)
ACCESSORS(lease, uint16_t, ibk_portinfo_mkey_lease_period, ibk_portinfo_set_mkey_lease_period)
ACCESSORS(protect, uint8_t, ibk_portinfo_mkey_protect_bits, ibk_portinfo_set_mkey_protect_bits)
ACCESSORS(mviol, uint16_t, ibk_portinfo_mkey_violations, ibk_portinfo_set_mkey_violations)
ACCESSORS(pviol, uint16_t, ibk_portinfo_pkey_violations, ibk_portinfo_set_pkey_violations)
ACCESSORS(qviol, uint16_t, ibk_portinfo_qkey_violations, ibk_portinfo_set_qkey_violations)
ACCESSORS(guidcap, uint8_t, ibk_portinfo_guid_cap, ibk_portinfo_set_guid_cap)
ACCESSORS(rereg, bool, ibk_portinfo_client_rereg, ibk_portinfo_set_client_rereg)
ACCESSORS(timeout, uint8_t, ibk_portinfo_subnet_timeout, ibk_portinfo_set_subnet_timeout)

ACCESSORS(generic, bool, ibk_notice_is_generic, ibk_notice_set_generic)
ACCESSORS(ntype, uint8_t, ibk_notice_type, ibk_notice_set_type)
ACCESSORS(producer, uint32_t, ibk_notice_producer, ibk_notice_set_producer)
ACCESSORS(trapnum, uint16_t, ibk_notice_trap_number, ibk_notice_set_trap_number)
ACCESSORS(issuer, uint16_t, ibk_notice_issuer_lid, ibk_notice_set_issuer_lid)
ACCESSORS(toggle, bool, ibk_notice_toggle, ibk_notice_set_toggle)
ACCESSORS(count, uint16_t, ibk_notice_count, ibk_notice_set_count)

/* Byte 43's four enforcement bits, one libibmad field each. */
#define ENFORCE_BIT(name, bit)						\
	static uint64_t get_##name(const void *p)			\
	{								\
		return (ibk_portinfo_enforcement(p) & (bit)) != 0;	\
	}								\
	static void set_##name(void *p, uint64_t v)			\
	{								\
		uint8_t e = ibk_portinfo_enforcement(p);		\
		ibk_portinfo_set_enforcement(p, (uint8_t)(v ? e | (bit) : \
						e & ~(bit)));	\
	}
ENFORCE_BIT(pei, IBK_PORTINFO_PART_ENFORCE_IN)
ENFORCE_BIT(peo, IBK_PORTINFO_PART_ENFORCE_OUT)
ENFORCE_BIT(fri, IBK_PORTINFO_FILTER_RAW_IN)
ENFORCE_BIT(fro, IBK_PORTINFO_FILTER_RAW_OUT)

#define F(n, mad, off, len, bits) { #n, mad, off, len, bits, get_##n, set_##n }

/* The SMP header: byte ranges from the IBA MAD and SMP layouts. */
static const struct field smp_fields[] = {
	F(basever, IB_MAD_BASEVER_F, 0, 1, 8),
	F(mclass, IB_MAD_MGMTCLASS_F, 1, 1, 8),
	F(classver, IB_MAD_CLASSVER_F, 2, 1, 8),
	F(status, IB_MAD_STATUS_F, 4, 2, 16),
	F(hopptr, IB_DRSMP_HOPPTR_F, 6, 1, 8),
	F(hopcnt, IB_DRSMP_HOPCNT_F, 7, 1, 8),
	F(tid, IB_MAD_TRID_F, 8, 8, 64),
	F(attrid, IB_MAD_ATTRID_F, 16, 2, 16),
	F(attrmod, IB_MAD_ATTRMOD_F, 20, 4, 32),
	F(smpmkey, IB_MAD_MKEY_F, 24, 8, 64),
	F(drslid, IB_DRSMP_DRSLID_F, 32, 2, 16),
	F(drdlid, IB_DRSMP_DRDLID_F, 34, 2, 16),
};

static const struct field pi_fields[] = {
	F(pimkey, IB_PORT_MKEY_F, 0, 8, 64),
	F(prefix, IB_PORT_GID_PREFIX_F, 8, 8, 64),
	F(lid, IB_PORT_LID_F, 16, 2, 16),
	F(smlid, IB_PORT_SMLID_F, 18, 2, 16),
	F(capmask, IB_PORT_CAPMASK_F, 20, 4, 32),
	F(lease, IB_PORT_MKEY_LEASE_F, 26, 2, 16),
	F(protect, IB_PORT_MKEY_PROT_BITS_F, 34, 1, 2),
	F(pei, IB_PORT_PART_EN_INB_F, 43, 1, 1),
	F(peo, IB_PORT_PART_EN_OUTB_F, 43, 1, 1),
	F(fri, IB_PORT_FILTER_RAW_INB_F, 43, 1, 1),
	F(fro, IB_PORT_FILTER_RAW_OUTB_F, 43, 1, 1),
	F(mviol, IB_PORT_MKEY_VIOL_F, 44, 2, 16),
	F(pviol, IB_PORT_PKEY_VIOL_F, 46, 2, 16),
	F(qviol, IB_PORT_QKEY_VIOL_F, 48, 2, 16),
	F(guidcap, IB_PORT_GUID_CAP_F, 50, 1, 8),
	F(rereg, IB_PORT_CLIENT_REREG_F, 51, 1, 1),
	F(timeout, IB_PORT_SUBN_TIMEOUT_F, 51, 1, 5),
};

static const struct field notice_fields[] = {
	F(generic, IB_NOTICE_IS_GENERIC_F, 0, 1, 1),
	F(ntype, IB_NOTICE_TYPE_F, 0, 1, 7),
	F(producer, IB_NOTICE_PRODUCER_F, 1, 3, 24),
	F(trapnum, IB_NOTICE_TRAP_NUMBER_F, 4, 2, 16),
	F(issuer, IB_NOTICE_ISSUER_LID_F, 6, 2, 16),
	F(toggle, IB_NOTICE_TOGGLE_F, 8, 1, 1),
	F(count, IB_NOTICE_COUNT_F, 8, 2, 15),
};

static uint64_t mad_get(uint8_t *buf, const struct field *f)
{
	return f->bits > 32 ? mad_get_field64(buf, 0, f->mad) :
			      mad_get_field(buf, 0, f->mad);
}

static void mad_set(uint8_t *buf, const struct field *f, uint64_t v)
{
	if (f->bits > 32)
		mad_set_field64(buf, 0, f->mad, v);
	else
		mad_set_field(buf, 0, f->mad, (uint32_t)v);
}

/*
 * Each field, ROUNDS random values over random bytes: the library's
 * setter must be read back by libibmad, change nothing outside the
 * field's bytes nor, inside them, anything libibmad's setter would not
 * (both applied to the same bytes must agree), and the library's getter
 * must read what libibmad wrote.
 */
static void check_fields(const char *what, const struct field *fs, size_t nf,
			 size_t buf_len)
{
	uint8_t a[IBK_MAD_LEN], b[IBK_MAD_LEN], orig[IBK_MAD_LEN];
	size_t i;
	int r;

	for (i = 0; i < nf; i++) {
		const struct field *f = &fs[i];
		uint64_t mask = f->bits == 64 ? ~0ull : (1ull << f->bits) - 1;
		unsigned bad_read = 0, bad_write = 0, bad_other = 0;

		for (r = 0; r < ROUNDS; r++) {
			uint64_t v = test_rng64() & mask;

			random_bytes(orig, buf_len);
			memcpy(a, orig, buf_len);
			memcpy(b, orig, buf_len);
			f->set(a, v);
			mad_set(b, f, v);
			bad_write += mad_get(a, f) != v;
			bad_other += memcmp(a, b, buf_len) != 0 ||
				     others_differ(a, orig, buf_len, f->off,
						   f->len) != 0;
			bad_read += f->get(b) != v;
		}
		tap_ok(bad_read + bad_write + bad_other == 0,
		       "%s %s: library and libibmad agree on %u random values "
		       "(%u reads, %u writes, %u stray bits wrong)", what,
		       f->name, ROUNDS, bad_read, bad_write, bad_other);
	}
}

/* The method byte is libibmad's Method (7 bits) and Response (1 bit). */
static void check_method_field(void)
{
	uint8_t buf[IBK_MAD_LEN];
	unsigned bad = 0, v;

	for (v = 0; v < 256; v++) {
		random_bytes(buf, sizeof(buf));
		ibk_mad_set_method(buf, (uint8_t)v);
		bad += (mad_get_field(buf, 0, IB_MAD_METHOD_F) |
			mad_get_field(buf, 0, IB_MAD_RESPONSE_F) << 7) != v;
		random_bytes(buf, sizeof(buf));
		mad_set_field(buf, 0, IB_MAD_METHOD_F, v & 0x7f);
		mad_set_field(buf, 0, IB_MAD_RESPONSE_F, v >> 7);
		bad += ibk_mad_method(buf) != v;
	}
	tap_ok(bad == 0, "SMP method byte = libibmad Response << 7 | Method "
	       "for all 256 values (%u wrong)", bad);
}

/* The D bit is libibmad's DRSMP direction, the rest its DRSMP status. */
static void check_dr_status(void)
{
	uint8_t buf[IBK_MAD_LEN];
	unsigned bad = 0;
	int r;

	for (r = 0; r < ROUNDS; r++) {
		uint16_t v = (uint16_t)test_rng64();

		random_bytes(buf, sizeof(buf));
		ibk_mad_set_status(buf, v);
		bad += mad_get_field(buf, 0, IB_DRSMP_DIRECTION_F) !=
		       (unsigned)((v & IBK_SMP_DIRECTION) != 0);
		bad += mad_get_field(buf, 0, IB_DRSMP_STATUS_F) !=
		       (v & 0x7fffu);
	}
	tap_ok(bad == 0, "status: IBK_SMP_DIRECTION is libibmad's DRSMP "
	       "direction bit, the rest its DRSMP status (%u wrong)", bad);
}

/* GUIDInfo entries are libibmad's IB_GI_GUID0_F..IB_GI_GUID7_F. */
static void check_guid_block_mad(void)
{
	uint8_t buf[IBK_SMP_DATA_LEN];
	ibk_guid_t in[IBK_GUID_BLOCK_ENTRIES], out[IBK_GUID_BLOCK_ENTRIES];
	unsigned bad = 0, i;
	int r;

	for (r = 0; r < ROUNDS / 10; r++) {
		for (i = 0; i < IBK_GUID_BLOCK_ENTRIES; i++)
			in[i] = test_rng64();
		random_bytes(buf, sizeof(buf));
		ibk_guid_block_encode(in, buf);
		for (i = 0; i < IBK_GUID_BLOCK_ENTRIES; i++)
			bad += mad_get_field64(buf, 0, (enum MAD_FIELDS)
					       (IB_GI_GUID0_F + i)) != in[i];
		random_bytes(buf, sizeof(buf));
		for (i = 0; i < IBK_GUID_BLOCK_ENTRIES; i++)
			mad_set_field64(buf, 0, (enum MAD_FIELDS)
					(IB_GI_GUID0_F + i), in[i]);
		ibk_guid_block_decode(buf, out);
		bad += memcmp(in, out, sizeof(in)) != 0;
	}
	tap_ok(bad == 0, "GUIDInfo block: encode/decode agree with libibmad's "
	       "GUID0..GUID7 (%u wrong)", bad);
}

/* OpenSM: the same bytes through ib_types.h's structs and helpers. */
static void check_opensm_smp(void)
{
	uint8_t buf[IBK_MAD_LEN];
	ib_smp_t smp;
	unsigned bad = 0;
	int r;

	tap_ok(sizeof(ib_smp_t) == IBK_MAD_LEN &&
	       offsetof(ib_smp_t, data) == IBK_SMP_DATA_OFFSET &&
	       sizeof(smp.data) == IBK_SMP_DATA_LEN &&
	       offsetof(ib_smp_t, initial_path) == IBK_SMP_INITIAL_PATH &&
	       offsetof(ib_smp_t, return_path) == IBK_SMP_RETURN_PATH,
	       "OpenSM ib_smp_t: 256 bytes, data @64 (64 bytes), paths @128 "
	       "and @192");
	for (r = 0; r < ROUNDS; r++) {
		uint64_t tid = test_rng64(), mkey = test_rng64();
		uint32_t mod = (uint32_t)test_rng64();
		uint16_t st = (uint16_t)test_rng64(), id = (uint16_t)test_rng64();
		uint16_t slid = (uint16_t)test_rng64();
		uint16_t dlid = (uint16_t)test_rng64();
		uint8_t m = (uint8_t)test_rng64(), hp = (uint8_t)test_rng64();
		uint8_t hc = (uint8_t)test_rng64();

		random_bytes(buf, sizeof(buf));
		ibk_mad_set_base_version(buf, 1);
		ibk_mad_set_mgmt_class(buf, IBK_MGMT_CLASS_SUBN_DR);
		ibk_mad_set_class_version(buf, 1);
		ibk_mad_set_method(buf, m);
		ibk_mad_set_status(buf, st);
		ibk_smp_set_hop_ptr(buf, hp);
		ibk_smp_set_hop_cnt(buf, hc);
		ibk_mad_set_tid(buf, tid);
		ibk_mad_set_attr_id(buf, id);
		ibk_mad_set_attr_mod(buf, mod);
		ibk_smp_set_mkey(buf, mkey);
		ibk_smp_set_dr_slid(buf, slid);
		ibk_smp_set_dr_dlid(buf, dlid);
		memcpy(&smp, buf, sizeof(smp));
		bad += smp.base_ver != 1 ||
		       smp.mgmt_class != IB_MCLASS_SUBN_DIR ||
		       smp.class_ver != 1 || smp.method != m ||
		       cl_ntoh16(smp.status) != st ||
		       ib_smp_is_d(&smp) != ((st & IBK_SMP_DIRECTION) != 0) ||
		       smp.hop_ptr != hp || smp.hop_count != hc ||
		       cl_ntoh64(smp.trans_id) != tid ||
		       cl_ntoh16(smp.attr_id) != id ||
		       cl_ntoh32(smp.attr_mod) != mod ||
		       cl_ntoh64(smp.m_key) != mkey ||
		       cl_ntoh16(smp.dr_slid) != slid ||
		       cl_ntoh16(smp.dr_dlid) != dlid ||
		       ibk_smp_data(buf) != buf + offsetof(ib_smp_t, data);
	}
	tap_ok(bad == 0, "SMP header: every field as OpenSM's ib_smp_t reads "
	       "it (%u of %u wrong)", bad, ROUNDS);
	tap_ok(IBK_MGMT_CLASS_SUBN_LID == IB_MCLASS_SUBN_LID &&
	       IBK_MGMT_CLASS_SUBN_DR == IB_MCLASS_SUBN_DIR &&
	       IBK_MAD_METHOD_GET == IB_MAD_METHOD_GET &&
	       IBK_MAD_METHOD_SET == IB_MAD_METHOD_SET &&
	       IBK_MAD_METHOD_SEND == IB_MAD_METHOD_SEND &&
	       IBK_MAD_METHOD_TRAP == IB_MAD_METHOD_TRAP &&
	       IBK_MAD_METHOD_REPORT == IB_MAD_METHOD_REPORT &&
	       IBK_MAD_METHOD_TRAP_REPRESS == IB_MAD_METHOD_TRAP_REPRESS &&
	       IBK_MAD_METHOD_GET_RESP == IB_MAD_METHOD_GET_RESP &&
	       IBK_MAD_METHOD_REPORT_RESP == IB_MAD_METHOD_REPORT_RESP &&
	       IBK_SMP_ATTR_NOTICE == cl_ntoh16(IB_MAD_ATTR_NOTICE) &&
	       IBK_SMP_ATTR_NODE_INFO == cl_ntoh16(IB_MAD_ATTR_NODE_INFO) &&
	       IBK_SMP_ATTR_SWITCH_INFO == cl_ntoh16(IB_MAD_ATTR_SWITCH_INFO) &&
	       IBK_SMP_ATTR_GUID_INFO == cl_ntoh16(IB_MAD_ATTR_GUID_INFO) &&
	       IBK_SMP_ATTR_PORT_INFO == cl_ntoh16(IB_MAD_ATTR_PORT_INFO) &&
	       IBK_SMP_ATTR_PKEY_TABLE == cl_ntoh16(IB_MAD_ATTR_P_KEY_TABLE) &&
	       IBK_MAD_STATUS_BAD_VERSION ==
		       cl_ntoh16(IB_MAD_STATUS_UNSUP_CLASS_VER) &&
	       IBK_MAD_STATUS_UNSUP_METHOD ==
		       cl_ntoh16(IB_MAD_STATUS_UNSUP_METHOD) &&
	       IBK_MAD_STATUS_UNSUP_METHOD_ATTR ==
		       cl_ntoh16(IB_MAD_STATUS_UNSUP_METHOD_ATTR) &&
	       IBK_MAD_STATUS_INVALID_FIELD ==
		       cl_ntoh16(IB_MAD_STATUS_INVALID_FIELD) &&
	       IBK_PKEY_BLOCK_ENTRIES == IB_NUM_PKEY_ELEMENTS_IN_BLOCK &&
	       IBK_PKEY_MAX_BLOCKS == IB_PKEY_MAX_BLOCKS &&
	       IBK_GUID_BLOCK_ENTRIES == GUID_TABLE_MAX_ENTRIES,
	       "classes, methods, attribute IDs, status values and block sizes "
	       "equal OpenSM's");
}

static void check_opensm_portinfo(void)
{
	uint8_t buf[IBK_PORTINFO_LEN];
	ib_port_info_t pi;
	unsigned bad = 0;
	int r;

	tap_ok(sizeof(ib_port_info_t) == IBK_PORTINFO_LEN,
	       "OpenSM ib_port_info_t is 64 bytes");
	for (r = 0; r < ROUNDS; r++) {
		uint64_t mkey = test_rng64(), prefix = test_rng64();
		uint32_t cap = (uint32_t)test_rng64();
		uint16_t lid = (uint16_t)test_rng64();
		uint16_t sm = (uint16_t)test_rng64();
		uint16_t lease = (uint16_t)test_rng64();
		uint16_t mv = (uint16_t)test_rng64(), pv = (uint16_t)test_rng64();
		uint16_t qv = (uint16_t)test_rng64();
		uint8_t prot = (uint8_t)(test_rng64() & 3);
		uint8_t enf = (uint8_t)(test_rng64() & 15);
		uint8_t gcap = (uint8_t)test_rng64();
		uint8_t to = (uint8_t)(test_rng64() & 31);
		bool rereg = test_rng64() & 1;

		random_bytes(buf, sizeof(buf));
		ibk_portinfo_set_mkey(buf, mkey);
		ibk_portinfo_set_gid_prefix(buf, prefix);
		ibk_portinfo_set_lid(buf, lid);
		ibk_portinfo_set_master_sm_lid(buf, sm);
		ibk_portinfo_set_cap_mask(buf, cap);
		ibk_portinfo_set_mkey_lease_period(buf, lease);
		ibk_portinfo_set_mkey_protect_bits(buf, prot);
		ibk_portinfo_set_enforcement(buf, enf);
		ibk_portinfo_set_mkey_violations(buf, mv);
		ibk_portinfo_set_pkey_violations(buf, pv);
		ibk_portinfo_set_qkey_violations(buf, qv);
		ibk_portinfo_set_guid_cap(buf, gcap);
		ibk_portinfo_set_client_rereg(buf, rereg);
		ibk_portinfo_set_subnet_timeout(buf, to);
		memcpy(&pi, buf, sizeof(pi));
		bad += cl_ntoh64(pi.m_key) != mkey ||
		       cl_ntoh64(pi.subnet_prefix) != prefix ||
		       cl_ntoh16(pi.base_lid) != lid ||
		       cl_ntoh16(pi.master_sm_base_lid) != sm ||
		       cl_ntoh32(pi.capability_mask) != cap ||
		       cl_ntoh16(pi.m_key_lease_period) != lease ||
		       ib_port_info_get_mpb(&pi) != prot ||
		       (pi.vl_enforce & 0x0f) != enf ||
		       cl_ntoh16(pi.m_key_violations) != mv ||
		       cl_ntoh16(pi.p_key_violations) != pv ||
		       cl_ntoh16(pi.q_key_violations) != qv ||
		       pi.guid_cap != gcap ||
		       ib_port_info_get_client_rereg(&pi) != rereg ||
		       ib_port_info_get_timeout(&pi) != to;
	}
	tap_ok(bad == 0, "PortInfo: every security field as OpenSM's "
	       "ib_port_info_t and its helpers read it (%u of %u wrong)",
	       bad, ROUNDS);
	tap_ok(IBK_PORT_CAP_IS_TRAP_SUPPORTED ==
		       cl_ntoh32(IB_PORT_CAP_HAS_TRAP) &&
	       IBK_PORT_CAP_HAS_NV_MKEY == cl_ntoh32(IB_PORT_CAP_HAS_NV_MKEY) &&
	       IBK_PORT_CAP_HAS_NV_PKEY == cl_ntoh32(IB_PORT_CAP_HAS_NV_PKEY) &&
	       IBK_PORT_CAP_HAS_PKEY_SW_EXT_PORT_TRAP ==
		       cl_ntoh32(IB_PORT_CAP_HAS_PKEY_SW_EXT_PORT_TRAP) &&
	       IBK_PORT_CAP_HAS_CLIENT_REREG ==
		       cl_ntoh32(IB_PORT_CAP_HAS_CLIENT_REREG) &&
	       IBK_PORT_CAP_HAS_MCAST_PKEY_TRAP_SUPPRESS ==
		       cl_ntoh32(IB_PORT_CAP_HAS_MCAST_PKEY_TRAP_SUPPRESS),
	       "CapabilityMask bits equal OpenSM's IB_PORT_CAP_*");
}

static void check_opensm_blocks(void)
{
	uint8_t buf[IBK_SMP_DATA_LEN];
	ibk_pkey_t keys[IBK_PKEY_BLOCK_ENTRIES], back[IBK_PKEY_BLOCK_ENTRIES];
	ibk_guid_t guids[IBK_GUID_BLOCK_ENTRIES];
	ib_pkey_table_t pt;
	ib_guid_info_t gi;
	unsigned bad = 0, i;
	int r;

	for (r = 0; r < ROUNDS / 10; r++) {
		for (i = 0; i < IBK_PKEY_BLOCK_ENTRIES; i++)
			keys[i] = (ibk_pkey_t)test_rng64();
		for (i = 0; i < IBK_GUID_BLOCK_ENTRIES; i++)
			guids[i] = test_rng64();
		ibk_pkey_block_encode(keys, buf);
		memcpy(&pt, buf, sizeof(pt));
		for (i = 0; i < IBK_PKEY_BLOCK_ENTRIES; i++)
			bad += cl_ntoh16(pt.pkey_entry[i]) != keys[i];
		for (i = 0; i < IBK_PKEY_BLOCK_ENTRIES; i++)
			pt.pkey_entry[i] = cl_hton16(keys[i] ^ 0x5a5a);
		memcpy(buf, &pt, sizeof(pt));
		ibk_pkey_block_decode(buf, back);
		for (i = 0; i < IBK_PKEY_BLOCK_ENTRIES; i++)
			bad += back[i] != (keys[i] ^ 0x5a5a);
		ibk_guid_block_encode(guids, buf);
		memcpy(&gi, buf, sizeof(gi));
		for (i = 0; i < IBK_GUID_BLOCK_ENTRIES; i++)
			bad += cl_ntoh64(gi.guid[i]) != guids[i];
	}
	tap_ok(sizeof(pt) == IBK_SMP_DATA_LEN && sizeof(gi) == IBK_SMP_DATA_LEN &&
	       bad == 0, "P_KeyTable and GUIDInfo blocks as OpenSM's "
	       "ib_pkey_table_t and ib_guid_info_t hold them (%u wrong)", bad);
}

/* Trap 256 and 257/258 DataDetails through OpenSM's ntc_256 and
 * ntc_257_258, with the generic header through its notice helpers. */
static void check_opensm_notices(void)
{
	uint8_t buf[IBK_NOTICE_LEN];
	ib_mad_notice_attr_t n;
	struct ibk_trap_256 t, p;
	struct ibk_trap_key k;
	unsigned bad256 = 0, bad257 = 0, i;
	int r;

	tap_ok(offsetof(ib_mad_notice_attr_t, data_details) ==
	       IBK_NOTICE_DETAILS && sizeof(n.data_details) == 54,
	       "OpenSM: DataDetails @10, 54 bytes");
	for (r = 0; r < ROUNDS; r++) {
		uint16_t issuer = (uint16_t)test_rng64();

		memset(&t, 0, sizeof(t));
		t.lid = (uint16_t)test_rng64();
		t.dr_slid = (uint16_t)test_rng64();
		t.method = (uint8_t)test_rng64();
		t.attr_id = (uint16_t)test_rng64();
		t.attr_mod = (uint32_t)test_rng64();
		t.mkey = test_rng64();
		t.dr_notice = test_rng64() & 1;
		t.dr_truncated = false;
		t.dr_hop_cnt = (uint8_t)test_rng_below(31);
		random_bytes(t.dr_return_path, t.dr_hop_cnt);
		random_bytes(buf, sizeof(buf));
		ibk_notice_build_256(IBK_NOTICE_PRODUCER_CA, issuer, &t, buf);
		memcpy(&n, buf, sizeof(n) < sizeof(buf) ? sizeof(n) :
		       sizeof(buf));
		bad256 += !ib_notice_is_generic(&n) ||
			  ib_notice_get_type(&n) != IB_NOTICE_TYPE_SECURITY ||
			  cl_ntoh32(ib_notice_get_prod_type(&n)) !=
				  IB_NODE_TYPE_CA ||
			  cl_ntoh16(n.g_or_v.generic.trap_num) != 256 ||
			  cl_ntoh16(n.issuer_lid) != issuer ||
			  n.toggle_count != 0 ||
			  cl_ntoh16(n.data_details.ntc_256.lid) != t.lid ||
			  cl_ntoh16(n.data_details.ntc_256.dr_slid) !=
				  t.dr_slid ||
			  n.data_details.ntc_256.method != t.method ||
			  cl_ntoh16(n.data_details.ntc_256.attr_id) !=
				  t.attr_id ||
			  cl_ntoh32(n.data_details.ntc_256.attr_mod) !=
				  t.attr_mod ||
			  cl_ntoh64(n.data_details.ntc_256.mkey) != t.mkey ||
			  n.data_details.ntc_256.dr_trunc_hop !=
				  ((t.dr_notice ? 0x80 : 0) | t.dr_hop_cnt) ||
			  memcmp(n.data_details.ntc_256.dr_rtn_path,
				 t.dr_return_path, t.dr_hop_cnt) != 0;
		for (i = t.dr_hop_cnt; i < 30; i++)
			bad256 += n.data_details.ntc_256.dr_rtn_path[i] != 0;
		bad256 += ibk_notice_parse_256(buf, &p) != IBK_OK ||
			  p.lid != t.lid || p.dr_slid != t.dr_slid ||
			  p.method != t.method || p.attr_id != t.attr_id ||
			  p.attr_mod != t.attr_mod || p.mkey != t.mkey ||
			  p.dr_notice != t.dr_notice || p.dr_truncated ||
			  p.dr_hop_cnt != t.dr_hop_cnt ||
			  memcmp(p.dr_return_path, t.dr_return_path,
				 t.dr_hop_cnt) != 0;

		k.lid1 = (uint16_t)test_rng64();
		k.lid2 = (uint16_t)test_rng64();
		k.key = (uint32_t)test_rng64();
		k.sl = (uint8_t)(test_rng64() & 15);
		k.qp1 = (uint32_t)test_rng64() & 0xffffff;
		k.qp2 = (uint32_t)test_rng64() & 0xffffff;
		random_bytes(k.gid1.raw, 16);
		random_bytes(k.gid2.raw, 16);
		random_bytes(buf, sizeof(buf));
		bad257 += ibk_notice_build_key_trap((uint16_t)(257 + r % 2),
						    IBK_NOTICE_PRODUCER_SWITCH,
						    issuer, &k, buf) != IBK_OK;
		memcpy(&n, buf, sizeof(buf));
		bad257 += !ib_notice_is_generic(&n) ||
			  ib_notice_get_type(&n) != IB_NOTICE_TYPE_SECURITY ||
			  cl_ntoh32(ib_notice_get_prod_type(&n)) !=
				  IB_NODE_TYPE_SWITCH ||
			  cl_ntoh16(n.g_or_v.generic.trap_num) != 257 + r % 2 ||
			  cl_ntoh16(n.data_details.ntc_257_258.lid1) !=
				  k.lid1 ||
			  cl_ntoh16(n.data_details.ntc_257_258.lid2) !=
				  k.lid2 ||
			  cl_ntoh32(n.data_details.ntc_257_258.key) != k.key ||
			  cl_ntoh32(n.data_details.ntc_257_258.qp1) !=
				  ((uint32_t)k.sl << 28 | k.qp1) ||
			  cl_ntoh32(n.data_details.ntc_257_258.qp2) != k.qp2 ||
			  memcmp(&n.data_details.ntc_257_258.gid1, k.gid1.raw,
				 16) != 0 ||
			  memcmp(&n.data_details.ntc_257_258.gid2, k.gid2.raw,
				 16) != 0;
	}
	tap_ok(bad256 == 0, "trap 256: built notices read by OpenSM's "
	       "ib_mad_notice_attr_t as built, parsed back (%u wrong)",
	       bad256);
	tap_ok(bad257 == 0, "traps 257/258: built notices read by OpenSM's "
	       "ntc_257_258 as built (%u wrong)", bad257);
}

static void test_oracles(void)
{
	check_fields("SMP", smp_fields,
		     sizeof(smp_fields) / sizeof(smp_fields[0]), IBK_MAD_LEN);
	check_method_field();
	check_dr_status();
	check_fields("PortInfo", pi_fields,
		     sizeof(pi_fields) / sizeof(pi_fields[0]),
		     IBK_PORTINFO_LEN);
	check_fields("Notice", notice_fields,
		     sizeof(notice_fields) / sizeof(notice_fields[0]),
		     IBK_NOTICE_LEN);
	check_guid_block_mad();
	check_opensm_smp();
	check_opensm_portinfo();
	check_opensm_blocks();
	check_opensm_notices();
}
#else
static void test_oracles(void)
{
	tap_ok(true, "layouts against libibmad and OpenSM # SKIP this build "
	       "has no libibmad-dev/libopensm-dev for its target (cross, or "
	       "not found: -Dlibibmad)");
}
#endif

/* ------------------------------------------------------------------------
 * Part 2: behaviour
 * ------------------------------------------------------------------------ */

#define NS	1000000000ull	/* one second */
#define KEY	0x1122334455667788ull
#define BAD	0x0badc0ffee000001ull

enum { GET = IBK_MAD_METHOD_GET, SET = IBK_MAD_METHOD_SET,
       REPRESS = IBK_MAD_METHOD_TRAP_REPRESS };

/*
 * One row of the M_Key behaviour (IBA 14.2.4: protect levels and the
 * lease, as qib/hfi1 check_mkey() apply them). Before: the port's state; the SMP; then what the SMA
 * must do and the state after.
 */
struct mkey_row {
	const char *rule;
	uint64_t port_mkey;
	uint8_t prot;
	uint16_t period;
	bool running;
	uint64_t deadline;
	uint8_t method;
	uint64_t smp_mkey;
	uint64_t now;
	enum ibk_mkey_verdict want;
	bool want_running;
	uint64_t want_deadline;	/* checked when want_running */
	uint8_t want_prot;
};

#define V IBK_MKEY_VIOLATION
#define P IBK_MKEY_PROCESS
#define H IBK_MKEY_PROCESS_HIDE_MKEY

static const struct mkey_row mkey_rows[] = {
	/* 1.2 table, bad key, by protect level and method */
	{ "level 0, SubnGet, bad key: processed, M_Key in clear",
	  KEY, 0, 0, false, 0, GET, BAD, 5 * NS, P, false, 0, 0 },
	{ "level 0, SubnSet, bad key: violation",
	  KEY, 0, 0, false, 0, SET, BAD, 5 * NS, V, false, 0, 0 },
	{ "level 0, SubnTrapRepress, bad key: violation",
	  KEY, 0, 0, false, 0, REPRESS, BAD, 5 * NS, V, false, 0, 0 },
	{ "level 1, SubnGet, bad key: processed, M_Key returned as 0",
	  KEY, 1, 0, false, 0, GET, BAD, 5 * NS, H, false, 0, 1 },
	{ "level 1, SubnSet, bad key: violation",
	  KEY, 1, 0, false, 0, SET, BAD, 5 * NS, V, false, 0, 1 },
	{ "level 1, SubnTrapRepress, bad key: violation",
	  KEY, 1, 0, false, 0, REPRESS, BAD, 5 * NS, V, false, 0, 1 },
	{ "level 2, SubnGet, bad key: violation",
	  KEY, 2, 0, false, 0, GET, BAD, 5 * NS, V, false, 0, 2 },
	{ "level 2, SubnSet, bad key: violation",
	  KEY, 2, 0, false, 0, SET, BAD, 5 * NS, V, false, 0, 2 },
	{ "level 2, SubnTrapRepress, bad key: violation",
	  KEY, 2, 0, false, 0, REPRESS, BAD, 5 * NS, V, false, 0, 2 },
	{ "level 3 as 2, SubnGet, bad key: violation",
	  KEY, 3, 0, false, 0, GET, BAD, 5 * NS, V, false, 0, 3 },
	{ "level 3 as 2, SubnSet, bad key: violation",
	  KEY, 3, 0, false, 0, SET, BAD, 5 * NS, V, false, 0, 3 },
	{ "level 3 as 2, SubnTrapRepress, bad key: violation",
	  KEY, 3, 0, false, 0, REPRESS, BAD, 5 * NS, V, false, 0, 3 },
	/* 1.2 point 2: a good key */
	{ "level 3, SubnSet, the port's key: processed",
	  KEY, 3, 0, false, 0, SET, KEY, 5 * NS, P, false, 0, 3 },
	{ "level 1, SubnGet, the port's key: processed, M_Key shown",
	  KEY, 1, 0, false, 0, GET, KEY, 5 * NS, P, false, 0, 1 },
	{ "port M_Key 0: any key is good, level 3 SubnSet processed",
	  0, 3, 60, false, 0, SET, BAD, 5 * NS, P, false, 0, 3 },
	/* 1.2 point 5: other methods never violate */
	{ "level 3, SubnGetResp, bad key: processed normally",
	  KEY, 3, 60, false, 0, IBK_MAD_METHOD_GET_RESP, BAD, 5 * NS, P,
	  false, 0, 3 },
	{ "level 3, SubnTrap, bad key: processed normally",
	  KEY, 3, 60, false, 0, IBK_MAD_METHOD_TRAP, BAD, 5 * NS, P,
	  false, 0, 3 },
	{ "level 3, Report, bad key: processed normally",
	  KEY, 3, 60, false, 0, IBK_MAD_METHOD_REPORT, BAD, 5 * NS, P,
	  false, 0, 3 },
	{ "level 3, Send, bad key: processed normally",
	  KEY, 3, 60, false, 0, IBK_MAD_METHOD_SEND, BAD, 5 * NS, P,
	  false, 0, 3 },
	/* 1.3: the lease */
	{ "violation with lease period 0: no timer (never expires)",
	  KEY, 2, 0, false, 0, SET, BAD, 7 * NS, V, false, 0, 2 },
	{ "violation with period 60 s: the timer starts, deadline now + 60 s",
	  KEY, 2, 60, false, 0, SET, BAD, 7 * NS, V, true, 67 * NS, 2 },
	{ "violation with the longest period, 65535 s: deadline exact",
	  KEY, 2, 65535, false, 0, GET, BAD, 3, V, true,
	  65535 * NS + 3, 2 },
	{ "violation while the timer runs: the deadline stays",
	  KEY, 2, 60, true, 50 * NS, SET, BAD, 20 * NS, V, true, 50 * NS, 2 },
	{ "a good SubnGet stops a running timer",
	  KEY, 2, 60, true, 50 * NS, GET, KEY, 20 * NS, P, false, 0, 2 },
	{ "a good SubnSet stops a running timer",
	  KEY, 2, 60, true, 50 * NS, SET, KEY, 20 * NS, P, false, 0, 2 },
	{ "a good SubnTrapRepress stops a running timer",
	  KEY, 2, 60, true, 50 * NS, REPRESS, KEY, 20 * NS, P, false, 0, 2 },
	{ "a SubnGetResp with the good key leaves the timer running",
	  KEY, 2, 60, true, 50 * NS, IBK_MAD_METHOD_GET_RESP, KEY, 20 * NS,
	  P, true, 50 * NS, 2 },
	{ "a level-1 SubnGet with a bad key leaves the timer running",
	  KEY, 1, 60, true, 50 * NS, GET, BAD, 20 * NS, H, true, 50 * NS, 1 },
	{ "1 ns before the deadline the protection holds",
	  KEY, 2, 60, true, 50 * NS, GET, BAD, 50 * NS - 1, V, true, 50 * NS,
	  2 },
	{ "at the deadline the lease expires: protect bits 0, M_Key readable",
	  KEY, 2, 60, true, 50 * NS, GET, BAD, 50 * NS, P, false, 0, 0 },
	{ "expired lease, then a bad SubnSet: violation, a new timer",
	  KEY, 3, 60, true, 50 * NS, SET, BAD, 90 * NS, V, true, 150 * NS,
	  0 },
	{ "expiry is found across a wrap of the clock",
	  KEY, 2, 60, true, ~0ull - NS, GET, BAD, 5, P, false, 0, 0 },
};

static void test_mkey_table(void)
{
	size_t i;

	for (i = 0; i < sizeof(mkey_rows) / sizeof(mkey_rows[0]); i++) {
		const struct mkey_row *r = &mkey_rows[i];
		struct ibk_mkey_state st;
		enum ibk_mkey_verdict v;
		bool ok;

		st.mkey = r->port_mkey;
		st.protect_bits = r->prot;
		st.lease_period = r->period;
		st.lease_running = r->running;
		st.lease_deadline_ns = r->deadline;
		v = ibk_mkey_check(&st, r->method, r->smp_mkey, r->now);
		ok = v == r->want && st.lease_running == r->want_running &&
		     (!r->want_running ||
		      st.lease_deadline_ns == r->want_deadline) &&
		     st.protect_bits == r->want_prot && st.mkey == r->port_mkey;
		if (!tap_ok(ok, "M_Key: %s", r->rule))
			tap_diag("verdict %s (want %s), running %d, deadline "
				 "%llu, protect %u", ibk_mkey_verdict_name(v),
				 ibk_mkey_verdict_name(r->want),
				 st.lease_running,
				 (unsigned long long)st.lease_deadline_ns,
				 st.protect_bits);
	}
}

/* The lease, as a sequence: recovery of a port whose M_Key is lost. */
static void test_mkey_lease_sequence(void)
{
	struct ibk_mkey_state st = { KEY, 0, 10, 2, false };
	bool ok = true;

	ok &= ibk_mkey_check(&st, GET, BAD, 100 * NS) == V;
	ok &= ibk_mkey_check(&st, SET, BAD, 105 * NS) == V;
	ok &= st.lease_running && st.lease_deadline_ns == 110 * NS;
	ok &= st.protect_bits == 2;	/* lazily: nothing until an SMP */
	ok &= ibk_mkey_check(&st, SET, BAD, 110 * NS) == V;
	ok &= st.protect_bits == 0;	/* expired, then a new lease */
	ok &= st.lease_running && st.lease_deadline_ns == 120 * NS;
	ok &= ibk_mkey_check(&st, GET, BAD, 111 * NS) == P;
	tap_ok(ok, "M_Key lease: violations at 100 s and 105 s start one "
	       "10 s timer; at 110 s the bits drop to 0 on the next SMP, whose "
	       "bad Set starts a new timer; a bad Get is then answered");
}

static void make_smp(uint8_t *smp, uint8_t mclass, uint8_t method)
{
	random_bytes(smp, IBK_MAD_LEN);
	ibk_mad_set_base_version(smp, 1);
	ibk_mad_set_mgmt_class(smp, mclass);
	ibk_mad_set_class_version(smp, 1);
	ibk_mad_set_method(smp, method);
	ibk_mad_set_status(smp, 0);
	ibk_smp_set_hop_cnt(smp, 5);
}

static void test_request_status(void)
{
	static const struct {
		const char *what;
		uint8_t mclass, method, classver, basever, hops;
		size_t len;
		int want;
	} cases[] = {
		{ "SubnGet", 0x01, 0x01, 1, 1, 0, 256, 0 },
		{ "SubnSet, directed route", 0x81, 0x02, 1, 1, 63, 256, 0 },
		{ "SubnTrapRepress", 0x01, 0x07, 1, 1, 0, 256, 0 },
		{ "255 bytes", 0x01, 0x01, 1, 1, 0, 255, IBK_EINVAL },
		{ "257 bytes", 0x01, 0x01, 1, 1, 0, 257, IBK_EINVAL },
		{ "0 bytes", 0x01, 0x01, 1, 1, 0, 0, IBK_EINVAL },
		{ "base version 2", 0x01, 0x01, 1, 2, 0, 256, IBK_EINVAL },
		{ "class 0x04 (performance)", 0x04, 0x01, 1, 1, 0, 256,
		  IBK_EINVAL },
		{ "directed route, 64 hops", 0x81, 0x01, 1, 1, 64, 256,
		  IBK_EINVAL },
		{ "class version 2: bad version status", 0x01, 0x01, 2, 1, 0,
		  256, IBK_MAD_STATUS_BAD_VERSION },
		{ "method 0x10: unsupported method", 0x01, 0x10, 1, 1, 0, 256,
		  IBK_MAD_STATUS_UNSUP_METHOD },
		{ "SubnGetResp: no reply", 0x01, 0x81, 1, 1, 0, 256,
		  IBK_ENOENT },
		{ "SubnTrap: no reply", 0x01, 0x05, 1, 1, 0, 256, IBK_ENOENT },
		{ "Report: no reply", 0x01, 0x06, 1, 1, 0, 256, IBK_ENOENT },
		{ "Send: no reply", 0x01, 0x03, 1, 1, 0, 256, IBK_ENOENT },
		{ "response of an unknown method: no reply", 0x81, 0x90, 1, 1,
		  0, 256, IBK_ENOENT },
		/* responses before the class version: qib's process_subn()
		 * would answer this one with status 0x0004, a reply to a
		 * reply */
		{ "SubnGetResp of class version 2: no reply", 0x01, 0x81, 2,
		  1, 0, 256, IBK_ENOENT },
		{ "SubnTrap of class version 2: no reply", 0x01, 0x05, 2, 1,
		  0, 256, IBK_ENOENT },
	};
	uint8_t smp[IBK_MAD_LEN];
	size_t i;
	int got;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		make_smp(smp, cases[i].mclass, cases[i].method);
		ibk_mad_set_class_version(smp, cases[i].classver);
		ibk_mad_set_base_version(smp, cases[i].basever);
		ibk_smp_set_hop_cnt(smp, cases[i].hops);
		got = ibk_smp_request_status(smp, cases[i].len);
		tap_ok(got == cases[i].want, "request status: %s -> %d (want "
		       "%d)", cases[i].what, got, cases[i].want);
	}
	tap_ok(ibk_smp_request_status(NULL, 256) == IBK_EINVAL,
	       "request status: NULL -> IBK_EINVAL");
}

static void test_make_reply(void)
{
	static const uint8_t no_reply[] = { 0x03, 0x05, 0x06, 0x07, 0x81,
					    0x86 };
	uint8_t smp[IBK_MAD_LEN], orig[IBK_MAD_LEN];
	unsigned other, bad = 0;
	size_t i;

	make_smp(smp, IBK_MGMT_CLASS_SUBN_LID, IBK_MAD_METHOD_GET);
	memcpy(orig, smp, sizeof(smp));
	other = ibk_smp_make_reply(smp, 0) != IBK_OK;
	tap_ok(!other && smp[3] == 0x81 && smp[4] == 0 && smp[5] == 0 &&
	       others_differ(smp, orig, IBK_MAD_LEN, 3, 1) == 0,
	       "reply to a LID-routed SubnGet: method 0x81, status 0, every "
	       "other byte the request's");

	make_smp(smp, IBK_MGMT_CLASS_SUBN_DR, IBK_MAD_METHOD_SET);
	memcpy(orig, smp, sizeof(smp));
	other = ibk_smp_make_reply(smp, IBK_MAD_STATUS_INVALID_FIELD) !=
		IBK_OK;
	tap_ok(!other && smp[3] == 0x81 && smp[4] == 0x80 && smp[5] == 0x1c &&
	       others_differ(smp, orig, IBK_MAD_LEN, 3, 3) == 0,
	       "reply to a directed-route SubnSet with 0x001c: D bit set, "
	       "status 0x801c on the wire");

	for (i = 0; i < sizeof(no_reply); i++) {
		make_smp(smp, IBK_MGMT_CLASS_SUBN_DR, no_reply[i]);
		memcpy(orig, smp, sizeof(smp));
		bad += ibk_smp_make_reply(smp, 0) != IBK_EINVAL ||
		       memcmp(smp, orig, sizeof(smp)) != 0;
	}
	tap_ok(bad == 0, "no reply is made to Send, Trap, Report, "
	       "TrapRepress, GetResp or ReportResp: IBK_EINVAL, SMP untouched "
	       "(%u wrong)", bad);
	tap_ok(ibk_smp_make_reply(NULL, 0) == IBK_EINVAL,
	       "reply: NULL -> IBK_EINVAL");
}

/* Trap 256 from the offending SMP, by the DR hop count. */
static void test_trap_256(void)
{
	static const struct {
		uint8_t hops;
		bool truncated;
		uint8_t written;
	} cases[] = {
		{ 0, false, 0 }, { 1, false, 1 }, { 30, false, 30 },
		{ 31, true, 30 }, { 63, true, 30 }, { 64, true, 30 },
		{ 255, true, 30 },
	};
	uint8_t smp[IBK_MAD_LEN], n[IBK_NOTICE_LEN];
	struct ibk_trap_256 t, p;
	size_t i;
	unsigned k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool ok;

		make_smp(smp, IBK_MGMT_CLASS_SUBN_DR, IBK_MAD_METHOD_SET);
		ibk_smp_set_hop_cnt(smp, cases[i].hops);
		ibk_mad_set_attr_id(smp, IBK_SMP_ATTR_PKEY_TABLE);
		ibk_mad_set_attr_mod(smp, 0x00030001);
		ibk_smp_set_mkey(smp, BAD);
		ibk_smp_set_dr_slid(smp, 0xffff);
		ibk_trap_256_from_smp(smp, 0x0042, &t);
		ibk_notice_build_256(IBK_NOTICE_PRODUCER_CA, 7, &t, n);
		/* byte by byte from the IBA layout: DataDetails at 10 */
		ok = n[0] == 0x82 && n[1] == 0 && n[2] == 0 && n[3] == 1 &&
		     n[4] == 0x01 && n[5] == 0x00 && n[6] == 0 && n[7] == 7 &&
		     n[12] == 0x00 && n[13] == 0x42 && n[14] == 0xff &&
		     n[15] == 0xff && n[16] == IBK_MAD_METHOD_SET &&
		     n[18] == 0x00 && n[19] == 0x16 && n[20] == 0x00 &&
		     n[21] == 0x03 && n[22] == 0x00 && n[23] == 0x01 &&
		     n[24] == 0x0b && n[31] == 0x01 &&
		     n[33] == (0x80 | (cases[i].truncated ? 0x40 : 0) |
			       cases[i].written);
		for (k = 0; k < 30; k++)
			ok &= n[34 + k] == (k < cases[i].written ?
					    smp[IBK_SMP_RETURN_PATH + 1 + k] :
					    0);
		ok &= ibk_notice_parse_256(n, &p) == IBK_OK &&
		      p.dr_truncated == cases[i].truncated &&
		      p.dr_hop_cnt == cases[i].written && p.dr_notice &&
		      p.mkey == BAD && p.lid == 0x42;
		tap_ok(ok, "trap 256 from a directed-route SMP of %u hops: "
		       "hop count %u%s, %u return path bytes", cases[i].hops,
		       cases[i].written, cases[i].truncated ? ", truncated" :
		       "", cases[i].written);
	}
	/* a SubnSet that came through three switches, its ReturnPath as the
	 * Linux SMI writes it on the way (smi_handle_dr_smp_recv(): hop i's
	 * port at return_path[i]); entry 0 is unused, here 0xee */
	make_smp(smp, IBK_MGMT_CLASS_SUBN_DR, IBK_MAD_METHOD_SET);
	ibk_smp_set_hop_cnt(smp, 3);
	smp[IBK_SMP_RETURN_PATH] = 0xee;
	smp[IBK_SMP_RETURN_PATH + 1] = 5;
	smp[IBK_SMP_RETURN_PATH + 2] = 17;
	smp[IBK_SMP_RETURN_PATH + 3] = 2;
	ibk_trap_256_from_smp(smp, 0x0042, &t);
	ibk_notice_build_256(IBK_NOTICE_PRODUCER_CA, 7, &t, n);
	tap_ok(t.dr_hop_cnt == 3 && t.dr_return_path[0] == 5 &&
	       t.dr_return_path[1] == 17 && t.dr_return_path[2] == 2 &&
	       t.dr_return_path[3] == 0 && n[33] == (0x80 | 3) &&
	       n[34] == 5 && n[35] == 17 && n[36] == 2 && n[37] == 0,
	       "trap 256 of a 3-hop SMP: DRNoticeReturnPath is the ports of "
	       "hops 1-3 (ReturnPath[1..3]), not qib's ReturnPath[0..2]");
	/* details filled by the caller: a hop count of 64 must not spill into
	 * the truncated bit (0x40) and leave a hop count of 0 */
	memset(&t, 0, sizeof(t));
	t.dr_notice = true;
	t.dr_hop_cnt = 64;
	random_bytes(t.dr_return_path, sizeof(t.dr_return_path));
	ibk_notice_build_256(IBK_NOTICE_PRODUCER_CA, 7, &t, n);
	tap_ok(n[33] == (0x80 | 0x40 | 30) &&
	       memcmp(n + 34, t.dr_return_path, 30) == 0,
	       "trap 256 built from details with 64 hops: DRNotice, "
	       "DRPathTruncated, hop count 30, 30 path bytes");
	make_smp(smp, IBK_MGMT_CLASS_SUBN_LID, IBK_MAD_METHOD_GET);
	ibk_smp_set_hop_cnt(smp, 40);	/* meaningless when LID-routed */
	ibk_trap_256_from_smp(smp, 9, &t);
	ibk_notice_build_256(IBK_NOTICE_PRODUCER_CA, 7, &t, n);
	tap_ok(n[14] == 0 && n[15] == 0 && n[33] == 0 && n[34] == 0,
	       "trap 256 from a LID-routed SMP: no DRSLID, DRNotice, hop count "
	       "or path");
	n[5] = 0x01;	/* trap 257 */
	tap_ok(ibk_notice_parse_256(n, &p) == IBK_EINVAL,
	       "parsing a trap 257 as 256: IBK_EINVAL");
}

/* A UD packet built from the IBA layouts, with or without a GRH. */
static size_t build_packet(uint8_t *pkt, bool grh, uint8_t opcode)
{
	size_t off = 8;

	memset(pkt, 0, 128);
	pkt[0] = 0x00;			/* VL 0, LVer 0 */
	pkt[1] = (uint8_t)(0x90 | (grh ? 3 : 2));	/* SL 9, LNH */
	pkt[2] = 0x12; pkt[3] = 0x34;	/* DLID */
	pkt[6] = 0x56; pkt[7] = 0x78;	/* SLID */
	if (grh) {
		pkt[off] = 0x60;
		pkt[off + 6] = 0x1b;
		memset(pkt + off + 8, 0xa1, 16);	/* SGID */
		memset(pkt + off + 24, 0xb2, 16);	/* DGID */
		off += 40;
	}
	pkt[off] = opcode;
	pkt[off + 2] = 0x80; pkt[off + 3] = 0x05;	/* P_Key 0x8005 */
	pkt[off + 5] = 0x00; pkt[off + 6] = 0x01; pkt[off + 7] = 0x23;
	off += 12;
	if ((opcode & 0xfe) == 0x64) {
		pkt[off] = 0x80; pkt[off + 1] = 0x01;	/* Q_Key 0x8001abcd */
		pkt[off + 2] = 0xab; pkt[off + 3] = 0xcd;
		pkt[off + 5] = 0xfe; pkt[off + 6] = 0xdc; pkt[off + 7] = 0xba;
		off += 8;
	}
	return off + 16;	/* payload */
}

static void test_key_traps(void)
{
	uint8_t pkt[128], n[IBK_NOTICE_LEN];
	struct ibk_pkt_headers h;
	struct ibk_trap_key t, p;
	uint8_t zero[16] = { 0 }, sgid[16], dgid[16];
	size_t len;
	bool ok;

	memset(sgid, 0xa1, 16);
	memset(dgid, 0xb2, 16);
	len = build_packet(pkt, true, 0x64);
	ok = ibk_pkt_locate(pkt, len, &h) == IBK_OK &&
	     h.grh == pkt + 8 && h.bth == pkt + 48 && h.deth == pkt + 60 &&
	     ibk_trap_key_from_headers(&h, 258, &t) == IBK_OK &&
	     t.lid1 == 0x5678 && t.lid2 == 0x1234 && t.sl == 9 &&
	     t.key == 0x8001abcd && t.qp1 == 0xfedcba && t.qp2 == 0x000123 &&
	     memcmp(t.gid1.raw, sgid, 16) == 0 &&
	     memcmp(t.gid2.raw, dgid, 16) == 0;
	tap_ok(ok, "trap 258 from a UD packet with a GRH: SLID, DLID, SL, "
	       "Q_Key, source and destination QP, SGID, DGID");
	ok = ibk_notice_build_key_trap(258, IBK_NOTICE_PRODUCER_CA, 0x77, &t,
				       n) == IBK_OK &&
	     n[0] == 0x82 && n[3] == 1 && n[4] == 0x01 && n[5] == 0x02 &&
	     n[12] == 0x56 && n[13] == 0x78 && n[14] == 0x12 && n[15] == 0x34 &&
	     n[16] == 0x80 && n[17] == 0x01 && n[18] == 0xab && n[19] == 0xcd &&
	     n[20] == 0x90 && n[21] == 0xfe && n[22] == 0xdc && n[23] == 0xba &&
	     n[24] == 0 && n[25] == 0x00 && n[26] == 0x01 && n[27] == 0x23 &&
	     memcmp(n + 28, sgid, 16) == 0 && memcmp(n + 44, dgid, 16) == 0 &&
	     ibk_notice_parse_key_trap(n, &p) == 258 && p.qp1 == t.qp1 &&
	     p.sl == 9 && p.key == t.key;
	tap_ok(ok, "trap 258 notice: the IBA 257/258 layout byte by byte, "
	       "parsed back");

	len = build_packet(pkt, false, 0x64);
	ok = ibk_pkt_locate(pkt, len, &h) == IBK_OK && h.grh == NULL &&
	     ibk_trap_key_from_headers(&h, 257, &t) == IBK_OK &&
	     t.key == 0x8005 && t.qp1 == 0xfedcba &&
	     memcmp(t.gid1.raw, zero, 16) == 0 &&
	     memcmp(t.gid2.raw, zero, 16) == 0;
	tap_ok(ok, "trap 257 from a UD packet without a GRH: the BTH P_Key, "
	       "GIDs zero");
	len = build_packet(pkt, false, 0x04);	/* RC SEND only */
	ok = ibk_pkt_locate(pkt, len, &h) == IBK_OK && h.deth == NULL &&
	     ibk_trap_key_from_headers(&h, 257, &t) == IBK_OK &&
	     t.qp1 == 0 && t.qp2 == 0x000123 &&
	     ibk_trap_key_from_headers(&h, 258, &t) == IBK_EINVAL &&
	     ibk_trap_key_from_headers(&h, 259, &t) == IBK_EINVAL;
	tap_ok(ok, "an RC packet: trap 257 with QP1 0; no trap 258 without a "
	       "DETH; no trap 259 here");

	len = build_packet(pkt, true, 0x64);
	ok = ibk_pkt_locate(pkt, 7, &h) == IBK_EINVAL &&
	     ibk_pkt_locate(pkt, 8 + 40 + 11, &h) == IBK_EINVAL &&
	     ibk_pkt_locate(pkt, 8 + 40 + 12 + 7, &h) == IBK_EINVAL &&
	     ibk_pkt_locate(pkt, 8 + 40 + 12 + 8, &h) == IBK_OK;
	pkt[8 + 6] = 0x11;	/* NxtHdr UDP */
	ok &= ibk_pkt_locate(pkt, len, &h) == IBK_EINVAL;
	pkt[1] = 0x91;		/* LNH raw IPv6 */
	ok &= ibk_pkt_locate(pkt, len, &h) == IBK_EINVAL;
	tap_ok(ok, "locating headers: too short for the LRH, GRH, BTH or DETH, "
	       "a NxtHdr other than 0x1b, or a raw packet: IBK_EINVAL");
	ibk_notice_init(2, 1, 256, 1, n);
	tap_ok(ibk_notice_parse_key_trap(n, &p) == IBK_EINVAL &&
	       ibk_notice_build_key_trap(256, 1, 1, &t, n) == IBK_EINVAL,
	       "257/258 codec refuses trap 256");
}

static void test_trap_rate(void)
{
	unsigned t, bad = 0;

	for (t = 0; t < 32; t++) {
		/* 4.096 us x 2^t, in ns, from the rule in decimal */
		long double want = 4.096e3L * (long double)(1ull << t);

		bad += (long double)ibk_trap_interval_ns((uint8_t)t) != want;
	}
	tap_ok(bad == 0 && ibk_trap_interval_ns(0x20 | 3) == 32768,
	       "trap interval 4.096 us x 2^SubnetTimeout for 0-31, high bits "
	       "ignored (%u wrong)", bad);
	tap_ok(ibk_trap_rate_ok(5, 0, false, 31) &&
	       !ibk_trap_rate_ok(1000 + 4095, 1000, true, 0) &&
	       ibk_trap_rate_ok(1000 + 4096, 1000, true, 0) &&
	       !ibk_trap_rate_ok(1000 + 8191, 1000, true, 1) &&
	       ibk_trap_rate_ok((1ull << 43) + 7, 7, true, 31) &&
	       !ibk_trap_rate_ok((1ull << 43) + 6, 7, true, 31),
	       "trap rate: the first trap goes; the next one only a whole "
	       "interval later");
}

int main(void)
{
	test_rng_seed(SEED);
	test_oracles();
	test_mkey_table();
	test_mkey_lease_sequence();
	test_request_status();
	test_make_reply();
	test_trap_256();
	test_key_traps();
	test_trap_rate();
	return tap_done();
}
