/* SPDX-License-Identifier: MIT */
/*
 * fw_test.c - both headers on a bare-metal board under QEMU, checked
 * against models written here, with a timer interrupt reading a table
 * that the main loop keeps refilling.
 *
 * Built by tests/firmware/run with picolibc and its semihosting crt0 for
 * one of four boards (FW_BOARD_MPS2_AN386: Cortex-M4; FW_BOARD_MPS2_AN505:
 * Cortex-M33 running Cortex-M23 code; FW_BOARD_MICROBIT: Cortex-M0,
 * IBK_ATOMICS_SINGLE_CORE; FW_BOARD_RISCV_VIRT: rv32imac). It
 * prints TAP on the semihosting console and exits with 0 only if every
 * check passed, which QEMU passes on as its own exit status.
 *
 * RAM is what the micro:bit has, 16 KiB, stack included: tables stay small.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ib_tables.h"
#include "rng.h"
#include "tap.h"

struct fw_ntop_vector {
	uint8_t raw[16];
	const char *text;
};

struct fw_pton_vector {
	const char *text;
	int ok;
	uint8_t raw[16];
};

#include "gid_vectors.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------------
 * TAP
 * ------------------------------------------------------------------------ */

/* One TAP line (tests/tap.h); a failure says how many cases were bad. */
static bool check(bool cond, const char *what, unsigned long detail)
{
	if (cond)
		return tap_ok(true, "%s", what);
	return tap_ok(false, "%s (%lu bad)", what, detail);
}

/* ------------------------------------------------------------------------
 * Board: one periodic timer interrupt that calls fw_tick()
 * ------------------------------------------------------------------------ */

static void fw_tick(void);

#if defined(FW_BOARD_MPS2_AN386) || defined(FW_BOARD_MPS2_AN505) || \
    defined(FW_BOARD_MICROBIT)
/* SysTick, in every M-profile core QEMU models (the micro:bit's M0 too). */
#define SYST_CSR (*(volatile uint32_t *)0xe000e010u)
#define SYST_RVR (*(volatile uint32_t *)0xe000e014u)
#define SYST_CVR (*(volatile uint32_t *)0xe000e018u)

void arm_systick_isr(void);
void arm_systick_isr(void)
{
	fw_tick();
}

static void timer_start(uint32_t period)
{
	SYST_RVR = period - 1;
	SYST_CVR = 0;
	SYST_CSR = 7;		/* enable, interrupt, processor clock */
}

static void timer_stop(void)
{
	SYST_CSR = 0;
}

#define TIMER_PERIOD 4000u	/* core clock cycles */

#elif defined(FW_BOARD_RISCV_VIRT)
/* The CLINT's machine timer (10 MHz on QEMU virt), hart 0. */
#define CLINT_MTIMECMP_LO (*(volatile uint32_t *)0x02004000u)
#define CLINT_MTIMECMP_HI (*(volatile uint32_t *)0x02004004u)
#define CLINT_MTIME_LO (*(volatile uint32_t *)0x0200bff8u)
#define CLINT_MTIME_HI (*(volatile uint32_t *)0x0200bffcu)

static uint32_t timer_period;

/* Zicsr named for assemblers that split it from the base ISA. */
#define CSR(insn) ".option push\n\t.option arch, +zicsr\n\t" insn \
		  "\n\t.option pop"

static void timer_arm(void)
{
	uint32_t hi, lo;
	uint64_t next;

	do {
		hi = CLINT_MTIME_HI;
		lo = CLINT_MTIME_LO;
	} while (hi != CLINT_MTIME_HI);
	next = ((uint64_t)hi << 32 | lo) + timer_period;
	CLINT_MTIMECMP_HI = 0xffffffffu;	/* no early match meanwhile */
	CLINT_MTIMECMP_LO = (uint32_t)next;
	CLINT_MTIMECMP_HI = (uint32_t)(next >> 32);
}

void fw_trap(void) __attribute__((interrupt("machine"), aligned(4)));
void fw_trap(void)
{
	unsigned long cause;

	__asm__ __volatile__(CSR("csrr %0, mcause") : "=r"(cause));
	if (cause == (1ul << 31 | 7)) {		/* machine timer */
		fw_tick();
		timer_arm();
		return;
	}
	printf("Bail out! trap, mcause %lx\n", cause);
	exit(3);
}

static void timer_start(uint32_t period)
{
	timer_period = period;
	__asm__ __volatile__(CSR("csrw mtvec, %0") : : "r"(fw_trap));
	timer_arm();
	__asm__ __volatile__(CSR("csrs mie, %0") : : "r"(1ul << 7));	/* MTIE */
	__asm__ __volatile__(CSR("csrsi mstatus, 8"));		/* MIE */
}

static void timer_stop(void)
{
	__asm__ __volatile__(CSR("csrci mstatus, 8"));
	__asm__ __volatile__(CSR("csrc mie, %0") : : "r"(1ul << 7));
}

#define TIMER_PERIOD 400u	/* 40 us of mtime */

#else
#error "define FW_BOARD_MPS2_AN386, FW_BOARD_MPS2_AN505, FW_BOARD_MICROBIT or FW_BOARD_RISCV_VIRT"
#endif

/* ------------------------------------------------------------------------
 * P_Key and Q_Key rules against their models
 * ------------------------------------------------------------------------ */

static bool model_pkey_match(uint16_t a, uint16_t b)
{
	uint16_t base = a & 0x7fff;

	return base != 0 && base == (b & 0x7fff) && ((a | b) & 0x8000);
}

static void test_pkeys(void)
{
	static const uint16_t partners[] = {
		0x0000, 0x8000, 0x0001, 0x8001, 0x0002, 0x8002, 0x1234,
		0x9234, 0x4000, 0xc000, 0x7fff, 0xffff,
	};
	static ibk_pkey_t keys[256];
	static uint8_t match[256];
	unsigned long bad = 0, bad_burst = 0, bad_parts = 0;
	uint32_t k, p, i;

	for (p = 0; p < N_ELEMS(partners); p++) {
		for (k = 0; k < 0x10000; k++) {
			bool want = model_pkey_match(partners[p],
						     (uint16_t)k);

			bad += ibk_pkey_match(partners[p], (ibk_pkey_t)k) != want;
			bad += ibk_pkey_match((ibk_pkey_t)k, partners[p]) != want;
		}
	}
	check(bad == 0, "P_Key match: all 65536 keys both ways against 12 "
	      "partners, as the model", bad);

	for (p = 0; p < N_ELEMS(partners); p++) {
		for (k = 0; k < 0x10000; k += 256) {
			size_t n = 256 - (k >> 8) % 17;	/* odd tails too */
			size_t want = 0, got;

			for (i = 0; i < n; i++)
				keys[i] = (ibk_pkey_t)(k + i);
			got = ibk_pkey_match_burst(partners[p], keys, n,
						   match);
			for (i = 0; i < n; i++) {
				bool m = model_pkey_match(partners[p],
							  keys[i]);

				want += m;
				bad_burst += match[i] != m;
			}
			bad_burst += got != want;
		}
	}
	check(bad_burst == 0, "P_Key match burst: every key against 12 "
	      "partners, verdicts and count", bad_burst);

	for (k = 0; k < 0x10000; k++) {
		ibk_pkey_t key = (ibk_pkey_t)k;

		bad_parts += ibk_pkey_base(key) != (k & 0x7fff);
		bad_parts += ibk_pkey_is_full(key) != ((k & 0x8000) != 0);
		bad_parts += ibk_pkey_is_valid(key) != ((k & 0x7fff) != 0);
		bad_parts += ibk_pkey_make((uint16_t)k, (k & 0x8000) != 0) !=
			     key;
	}
	check(bad_parts == 0, "P_Key base, membership, validity, make: "
	      "all 65536 keys", bad_parts);
}

static int model_qkey_class(uint32_t q)
{
	if (q < 0x80000000u)
		return IBK_QKEY_CLASS_FREE;
	if (q <= 0x8000ffffu)
		return IBK_QKEY_CLASS_APP_CONTROLLED;
	if (q == 0x80010000u)
		return IBK_QKEY_CLASS_GSI;
	if (q <= 0x8fffffffu)
		return IBK_QKEY_CLASS_RESERVED;
	return IBK_QKEY_CLASS_UNASSIGNED;
}

static void test_qkeys(void)
{
	static const uint32_t edges[] = {
		0x00000000u, 0x00000001u, 0x00000b1bu, 0x7fffffffu,
		0x80000000u, 0x80000001u, 0x8000ffffu, 0x80010000u,
		0x80010001u, 0x8fffffffu, 0x90000000u, 0xfffffffeu,
		0xffffffffu,
	};
	unsigned long bad = 0;
	uint32_t i, j;

	for (i = 0; i < N_ELEMS(edges); i++) {
		uint32_t a = edges[i];
		bool controlled = a >> 31;

		bad += ibk_qkey_is_controlled(a) != controlled;
		bad += ibk_qkey_may_set(a, false) != !controlled;
		bad += ibk_qkey_may_set(a, true) != true;
		bad += (int)ibk_qkey_classify(a) != model_qkey_class(a);
		for (j = 0; j < N_ELEMS(edges); j++) {
			uint32_t b = edges[j];

			bad += ibk_qkey_select(a, b) != (controlled ? b : a);
			bad += ibk_qkey_match(a, b) != (a == b);
		}
	}
	check(bad == 0, "Q_Key edges: controlled, may_set, class, select, "
	      "match against the model", bad);
}

/* ------------------------------------------------------------------------
 * GIDs: text against glibc's answers, and the by-value/pointer twins
 * ------------------------------------------------------------------------ */

static bool same16(const uint8_t *a, const uint8_t *b)
{
	unsigned i, d = 0;

	for (i = 0; i < 16; i++)
		d |= (unsigned)(a[i] ^ b[i]);
	return d == 0;
}

/* The full form written here, one hex digit at a time. */
static void model_ntop_full(const uint8_t raw[16], char out[40])
{
	static const char hex[] = "0123456789abcdef";
	unsigned i, o = 0;

	for (i = 0; i < 16; i++) {
		if (i && !(i & 1))
			out[o++] = ':';
		out[o++] = hex[raw[i] >> 4];
		out[o++] = hex[raw[i] & 15];
	}
	out[o] = '\0';
}

static void test_gid_text(void)
{
	char text[IBK_GID_STRLEN], full[IBK_GID_FULL_STRLEN], want[40];
	unsigned long bad_ntop = 0, bad_back = 0, bad_full = 0, bad_pton = 0;
	unsigned long rejected = 0, accepted = 0;
	struct ibk_gid g;
	size_t i;

	for (i = 0; i < N_ELEMS(fw_ntop_vectors); i++) {
		const struct fw_ntop_vector *v = &fw_ntop_vectors[i];

		memcpy(g.raw, v->raw, 16);
		if (ibk_gid_ntop(&g, text) != text ||
		    strcmp(text, v->text) != 0) {
			if (!bad_ntop)
				printf("# ntop: \"%s\", glibc \"%s\"\n", text,
				       v->text);
			bad_ntop++;
		}
		memset(g.raw, 0x5a, 16);
		bad_back += ibk_gid_pton(v->text, &g) != 0 ||
			    !same16(g.raw, v->raw);
		memcpy(g.raw, v->raw, 16);
		model_ntop_full(v->raw, want);
		bad_full += ibk_gid_ntop_full(&g, full) != full ||
			    strcmp(full, want) != 0;
	}
	check(bad_ntop == 0, "ibk_gid_ntop() == glibc inet_ntop() on every "
	      "vector", bad_ntop);
	check(bad_back == 0, "ibk_gid_pton() reads every inet_ntop() text "
	      "back to its bytes", bad_back);
	check(bad_full == 0, "ibk_gid_ntop_full() == the model's full form",
	      bad_full);

	for (i = 0; i < N_ELEMS(fw_pton_vectors); i++) {
		const struct fw_pton_vector *v = &fw_pton_vectors[i];
		int rc;

		memset(g.raw, 0x5a, 16);
		rc = ibk_gid_pton(v->text, &g);
		if (v->ok) {
			accepted++;
			bad_pton += rc != 0 || !same16(g.raw, v->raw);
		} else {
			static const uint8_t untouched[16] = {
				0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a,
				0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a,
			};

			rejected++;
			bad_pton += rc != IBK_EINVAL ||
				    !same16(g.raw, untouched);
		}
	}
	printf("# pton: %lu texts glibc accepts, %lu malformed\n", accepted,
	       rejected);
	check(bad_pton == 0 && rejected > 20, "ibk_gid_pton() == glibc "
	      "inet_pton() on typed and malformed texts", bad_pton);
}

static void test_gid_twins(void)
{
	static const uint8_t mac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
	uint8_t grh[IBK_GRH_LEN];
	struct ibk_gid a, b, c;
	unsigned long bad = 0;
	uint64_t state = 7;
	unsigned i, j;

	for (i = 0; i < 64; i++) {
		uint64_t prefix = test_rng64_r(&state);
		uint64_t guid = test_rng64_r(&state);
		uint32_t ipv4 = (uint32_t)test_rng64_r(&state);

		a = ibk_gid_make(prefix, guid);
		ibk_gid_set(prefix, guid, &b);
		bad += !same16(a.raw, b.raw) ||
		       ibk_gid_subnet_prefix(&a) != prefix ||
		       ibk_gid_guid(&a) != guid;
		a = ibk_gid_from_ipv4(ipv4);
		ibk_gid_set_from_ipv4(ipv4, &b);
		bad += !same16(a.raw, b.raw) || !ibk_gid_is_v4mapped(&a) ||
		       ibk_gid_to_ipv4(&a) != ipv4;
		for (j = 0; j < IBK_GRH_LEN; j++)
			grh[j] = (uint8_t)test_rng64_r(&state);
		a = ibk_grh_sgid(grh);
		ibk_grh_get_sgid(grh, &b);
		c = ibk_grh_dgid(grh);
		bad += !same16(a.raw, grh + 8) || !same16(b.raw, grh + 8) ||
		       !same16(c.raw, grh + 24);
		ibk_grh_get_dgid(grh, &b);
		bad += !same16(b.raw, grh + 24);
	}
	a = ibk_gid_from_mac(mac);
	ibk_gid_set_from_mac(mac, &b);
	bad += !same16(a.raw, b.raw) || ibk_gid_guid(&a) !=
	       UINT64_C(0x001122fffe334455) ||
	       ibk_gid_subnet_prefix(&a) != IBK_GID_DEFAULT_PREFIX;
	check(bad == 0, "GID makers by value == their output-pointer twins",
	      bad);
}

/* ------------------------------------------------------------------------
 * Tables against a linear model
 * ------------------------------------------------------------------------ */

#define PK_CAP 32
#define GID_CAP 8

static struct ibk_pkey_cell pkey_cells[IBK_PKEY_CELLS(PK_CAP)];
static struct ibk_hash_slot pkey_slots[IBK_PKEY_HASH_SLOTS(PK_CAP)];
static struct ibk_gid_cell gid_cells[IBK_GID_CELLS(GID_CAP)];
static struct ibk_hash_slot gid_slots[IBK_HASH_SLOTS(GID_CAP)];
static struct ibk_port port;

static ibk_pkey_t model_pk[PK_CAP];
static struct ibk_gid_entry model_gid[GID_CAP];
static uint64_t rng = 0x10f1a5eedull;

/* Keys of a few partitions, both memberships, and the invalid ones. */
static ibk_pkey_t random_pkey(void)
{
	uint32_t base = test_rng_below_r(&rng, 12);

	return (ibk_pkey_t)(base | (test_rng_below_r(&rng, 2) << 15));
}

static int model_find(ibk_pkey_t key, bool exact, ibk_pkey_t *found)
{
	int i, limited = -1;

	if (!(key & 0x7fff))
		return IBK_EINVAL;
	for (i = 0; i < PK_CAP; i++) {
		ibk_pkey_t e = model_pk[i];

		if (!(e & 0x7fff))
			continue;
		if (exact ? e == key : (e & 0x7fff) == (key & 0x7fff)) {
			if (exact || (e & 0x8000)) {
				*found = e;
				return i;
			}
			if (limited < 0)
				limited = i;
		}
	}
	if (limited >= 0)
		*found = model_pk[limited];
	return limited >= 0 ? limited : IBK_ENOENT;
}

static unsigned long compare_pkeys(void)
{
	unsigned long bad = 0;
	ibk_pkey_t got = 0, want = 0;
	uint32_t i, k;

	for (i = 0; i < PK_CAP; i++) {
		int rc = ibk_pkey_table_get(&port.pkeys, i, &got);

		if (model_pk[i] & 0x7fff)
			bad += rc != IBK_OK || got != model_pk[i];
		else
			bad += rc != IBK_ENOENT;
	}
	for (k = 0; k < 14; k++) {
		ibk_pkey_t keys[2] = { (ibk_pkey_t)k, (ibk_pkey_t)(k | 0x8000) };
		unsigned m;

		for (m = 0; m < 2; m++) {
			int w = model_find(keys[m], false, &want);
			int r = ibk_pkey_table_find(&port.pkeys, keys[m], &got);

			bad += r != w || (w >= 0 && got != want);
			w = model_find(keys[m], true, &want);
			bad += ibk_pkey_table_find_exact(&port.pkeys,
							 keys[m]) != w;
		}
	}
	return bad;
}

static const struct ibk_gid *gid_universe(unsigned i)
{
	static struct ibk_gid u[6];
	static bool made;
	unsigned j;

	if (!made) {
		for (j = 0; j < 6; j++)
			ibk_gid_set(IBK_GID_DEFAULT_PREFIX,
				    UINT64_C(0x0002c90300012340) + j, &u[j]);
		ibk_gid_set(0, 0, &u[5]);	/* the empty slot */
		made = true;
	}
	return &u[i];
}

static unsigned long compare_gids(void)
{
	unsigned long bad = 0;
	struct ibk_gid_entry got;
	enum ibk_gid_type ft = IBK_GID_TYPE_IB;
	unsigned i, t;
	int want, r;

	for (i = 0; i < GID_CAP; i++) {
		int rc = ibk_gid_table_get(&port.gids, i, &got);

		if (ibk_gid_is_zero(&model_gid[i].gid))
			bad += rc != IBK_ENOENT;
		else
			bad += rc != IBK_OK ||
			       !same16(got.gid.raw, model_gid[i].gid.raw) ||
			       got.type != model_gid[i].type;
	}
	for (i = 0; i < 5; i++) {
		for (t = 0; t < 4; t++) {
			enum ibk_gid_type type = t == 3 ? IBK_GID_TYPE_ANY :
						 (enum ibk_gid_type)t;
			unsigned j;

			want = IBK_ENOENT;
			for (j = 0; j < GID_CAP && want < 0; j++)
				if (same16(model_gid[j].gid.raw,
					   gid_universe(i)->raw) &&
				    (type == IBK_GID_TYPE_ANY ||
				     model_gid[j].type == type))
					want = (int)j;
			r = ibk_gid_table_find(&port.gids, gid_universe(i),
					       type, &ft);
			bad += r != want ||
			       (r >= 0 && ft != model_gid[r].type);
		}
	}
	return bad;
}

/* With the default index (at most a quarter full), or the smallest one
 * (at most half full). */
static void test_tables(bool small)
{
	unsigned long bad_pk = 0, bad_gid = 0;
	unsigned round, i, n;

	check(ibk_port_init(&port, pkey_cells, PK_CAP, pkey_slots,
			    small ? IBK_PKEY_HASH_SLOTS_MIN(PK_CAP) :
				    IBK_PKEY_HASH_SLOTS(PK_CAP),
			    gid_cells, GID_CAP, gid_slots,
			    small ? IBK_HASH_SLOTS_MIN(GID_CAP) :
				    IBK_HASH_SLOTS(GID_CAP)) == IBK_OK &&
	      ibk_port_set_state(&port, IBK_PORT_ACTIVE) == IBK_OK &&
	      port.pkeys.hdr.hash_mask + 1 == (small ? 2u : 4u) * PK_CAP &&
	      port.gids.hdr.hash_mask + 1 == (small ? 2u : 4u) * GID_CAP,
	      small ? "port init, index at most half full, ACTIVE" :
		      "port init, index at most a quarter full, ACTIVE", 1);

	for (round = 0; round < 150; round++) {
		n = test_rng_below_r(&rng, PK_CAP + 1);
		for (i = 0; i < PK_CAP; i++)
			model_pk[i] = i < n ? random_pkey() : 0;
		bad_pk += ibk_pkey_table_refill(&port.pkeys, model_pk, n,
			ibk_pkey_table_refill_ticket(&port.pkeys)) != IBK_OK;
		bad_pk += compare_pkeys();
		for (i = 0; i < 24; i++) {
			uint32_t at = test_rng_below_r(&rng, PK_CAP);

			model_pk[at] = random_pkey();
			bad_pk += ibk_pkey_table_set(&port.pkeys, at,
						     model_pk[at]) != IBK_OK;
			if (i % 4 == 3)
				bad_pk += compare_pkeys();
		}

		n = test_rng_below_r(&rng, GID_CAP + 1);
		for (i = 0; i < GID_CAP; i++) {
			ibk_gid_set(0, 0, &model_gid[i].gid);
			model_gid[i].type = IBK_GID_TYPE_IB;
			if (i < n) {
				ibk__copy16(model_gid[i].gid.raw, gid_universe(
					test_rng_below_r(&rng, 6))->raw);
				model_gid[i].type = (enum ibk_gid_type)
					test_rng_below_r(&rng, 3);
			}
			if (ibk_gid_is_zero(&model_gid[i].gid))
				model_gid[i].type = IBK_GID_TYPE_IB;
		}
		bad_gid += ibk_gid_table_refill(&port.gids, model_gid, n,
			ibk_gid_table_refill_ticket(&port.gids)) != IBK_OK;
		bad_gid += compare_gids();
		for (i = 0; i < 8; i++) {
			uint32_t at = test_rng_below_r(&rng, GID_CAP);

			ibk__copy16(model_gid[at].gid.raw, gid_universe(
				test_rng_below_r(&rng, 6))->raw);
			model_gid[at].type = ibk_gid_is_zero(&model_gid[at].gid) ?
				IBK_GID_TYPE_IB :
				(enum ibk_gid_type)test_rng_below_r(&rng, 3);
			bad_gid += ibk_gid_table_set(&port.gids, at,
				&model_gid[at].gid, model_gid[at].type) != IBK_OK;
			bad_gid += compare_gids();
		}
	}
	check(bad_pk == 0, "P_Key table: get, find, find_exact == a linear "
	      "model over 150 refills and 3600 sets", bad_pk);
	check(bad_gid == 0, "GID table: get, find by type and any == a linear "
	      "model over 150 refills and 1200 sets", bad_gid);
}

/* ------------------------------------------------------------------------
 * Port receive and counters against the model
 * ------------------------------------------------------------------------ */

static void make_packet(uint8_t hdr[IBK_BTH_LEN + IBK_DETH_LEN],
			ibk_pkey_t pkey, ibk_qkey_t qkey)
{
	memset(hdr, 0, IBK_BTH_LEN + IBK_DETH_LEN);
	ibk_bth_set_opcode(hdr, IBK_OPCODE_UD_SEND_ONLY);
	ibk_bth_set_dest_qp(hdr, 0x12);
	ibk_bth_set_pkey(hdr, pkey);
	ibk_deth_set_qkey(hdr + IBK_BTH_LEN, qkey);
}

static enum ibk_rx_verdict model_ud(const struct ibk_qp_keys *qp,
				    ibk_pkey_t pkt_pkey, ibk_qkey_t pkt_qkey)
{
	if (qp->pkey_index >= PK_CAP)
		return IBK_RX_DROP_PKEY_INDEX;
	if (!model_pkey_match(model_pk[qp->pkey_index], pkt_pkey))
		return IBK_RX_DROP_PKEY;
	return pkt_qkey == qp->qkey ? IBK_RX_ACCEPT : IBK_RX_DROP_QKEY;
}

static enum ibk_rx_verdict model_gsi(ibk_pkey_t pkt_pkey, ibk_qkey_t qkey,
				     uint16_t *index)
{
	uint16_t i;

	for (i = 0; i < PK_CAP; i++) {
		if (model_pkey_match(model_pk[i], pkt_pkey)) {
			*index = i;
			return qkey == IBK_QKEY_GSI ? IBK_RX_ACCEPT :
						      IBK_RX_DROP_QKEY;
		}
	}
	return IBK_RX_DROP_PKEY;
}

static void test_port_rx(void)
{
	static const ibk_qkey_t qkeys[] = { 0x11, 0x80000000u, IBK_QKEY_GSI };
	static uint8_t hdrs[16][IBK_BTH_LEN + IBK_DETH_LEN];
	static const void *hdr_ptrs[16];
	static struct ibk_qp_keys qps[16];
	static const struct ibk_qp_keys *qp_ptrs[16];
	static uint8_t verdicts[16];
	unsigned long bad = 0, bad_gsi = 0, bad_burst = 0, bad_state = 0;
	uint32_t pkey_drops = 0, qkey_drops = 0;
	unsigned round, i;

	ibk_counter16_reset(&port.pkey_violations);
	ibk_counter16_reset(&port.qkey_violations);
	for (round = 0; round < 200; round++) {
		size_t accepted = 0, got;

		for (i = 0; i < PK_CAP; i++)
			model_pk[i] = random_pkey();
		ibk_pkey_table_refill(&port.pkeys, model_pk, PK_CAP,
				      ibk_pkey_table_refill_ticket(&port.pkeys));
		for (i = 0; i < 16; i++) {
			ibk_pkey_t pk = random_pkey();
			ibk_qkey_t qk = qkeys[test_rng_below_r(&rng, 3)];
			struct ibk_qp_keys qp;
			enum ibk_rx_verdict want, v;
			uint16_t index = 0xffff, want_index = 0;

			qp.type = IBK_QPT_UD;
			qp.pkey = 0;
			qp.pkey_index = (uint16_t)test_rng_below_r(&rng,
								 PK_CAP + 2);
			qp.qkey = qkeys[test_rng_below_r(&rng, 3)];
			make_packet(hdrs[i], pk, qk);
			want = model_ud(&qp, pk, qk);
			v = ibk_port_rx(&port, &qp, hdrs[i],
					hdrs[i] + IBK_BTH_LEN);
			bad += v != want;
			pkey_drops += want == IBK_RX_DROP_PKEY;
			qkey_drops += want == IBK_RX_DROP_QKEY;

			want = model_gsi(pk, qk, &want_index);
			v = ibk_port_rx_gsi(&port, hdrs[i],
					    hdrs[i] + IBK_BTH_LEN, &index);
			bad_gsi += v != want ||
				   (v == IBK_RX_ACCEPT && index != want_index);
			pkey_drops += want == IBK_RX_DROP_PKEY;
			qkey_drops += want == IBK_RX_DROP_QKEY;

			qps[i] = qp;
			qp_ptrs[i] = &qps[i];
			hdr_ptrs[i] = hdrs[i];
		}
		/* The same packets again, as one mixed burst. */
		got = ibk_port_rx_mixed(&port, qp_ptrs, hdr_ptrs, 16,
					verdicts, NULL);
		for (i = 0; i < 16; i++) {
			enum ibk_rx_verdict want = model_ud(&qps[i],
				ibk_bth_pkey(hdrs[i]),
				ibk_deth_qkey(hdrs[i] + IBK_BTH_LEN));

			bad_burst += verdicts[i] != want;
			accepted += want == IBK_RX_ACCEPT;
			pkey_drops += want == IBK_RX_DROP_PKEY;
			qkey_drops += want == IBK_RX_DROP_QKEY;
		}
		bad_burst += got != accepted;
	}
	check(bad == 0, "port rx, UD QPs: verdicts == the model over 3200 "
	      "packets", bad);
	check(bad_gsi == 0, "port rx, QP1: verdict and first matching index "
	      "== the model", bad_gsi);
	check(bad_burst == 0, "port rx, mixed bursts: verdicts and accepted "
	      "count == the model", bad_burst);
	check(ibk_counter16_read(&port.pkey_violations) == pkey_drops &&
	      ibk_counter16_read(&port.qkey_violations) == qkey_drops,
	      "violation counters == the model's drops", 1);
	printf("# %lu P_Key and %lu Q_Key violations counted\n",
	       (unsigned long)pkey_drops, (unsigned long)qkey_drops);

	ibk_counter16_add(&port.qkey_violations, 0x20000);
	bad_state += ibk_counter16_read(&port.qkey_violations) != 0xffff;
	bad_state += ibk_counter16_reset(&port.qkey_violations) != 0xffff;
	bad_state += ibk_counter16_read(&port.qkey_violations) != 0;
	/* Out of ACTIVE: drops of the port's own kind, then a refill. */
	qps[0].pkey_index = 0;
	qps[0].qkey = 0x11;
	make_packet(hdrs[0], model_pk[0], 0x11);
	ibk_port_set_state(&port, IBK_PORT_INIT);
	bad_state += ibk_port_rx(&port, &qps[0], hdrs[0],
				 hdrs[0] + IBK_BTH_LEN) != IBK_RX_DROP_PORT;
	ibk_port_set_state(&port, IBK_PORT_ACTIVE);
	bad_state += ibk_port_rx(&port, &qps[0], hdrs[0],
				 hdrs[0] + IBK_BTH_LEN) != IBK_RX_DROP_PORT;
	ibk_pkey_table_refill(&port.pkeys, model_pk, PK_CAP,
			      ibk_pkey_table_refill_ticket(&port.pkeys));
	bad_state += ibk_port_rx(&port, &qps[0], hdrs[0],
				 hdrs[0] + IBK_BTH_LEN) !=
		     model_ud(&qps[0], model_pk[0], 0x11);
	check(bad_state == 0, "counters saturate at 0xffff and reset; a port "
	      "out of ACTIVE drops until refilled", bad_state);
}

/* ------------------------------------------------------------------------
 * The interrupt-driven reader
 *
 * The main loop refills the P_Key and GID tables back to back; every
 * generation's entries follow from one seed. A timer interrupt reads both,
 * with the main loop frozen wherever it was, often inside a write section:
 * a latch read completes at once on the copy the writer is not writing.
 * ------------------------------------------------------------------------ */

#define IRQ_READS 1500u		/* interrupt reads wanted */
#define IRQ_INSIDE 300u		/* of which inside a write section */
#define IRQ_MAX_REFILLS 3000000u

static volatile uint32_t irq_reads, irq_inside, irq_gid_inside, irq_torn;
static volatile uint32_t irq_drops;
static volatile uint32_t irq_counting, irq_counts;

static ibk_pkey_t seed_key(uint32_t seed, uint32_t i)
{
	return (ibk_pkey_t)(0x8000u | (((seed & 0x1ffu) + 1) << 5) | i);
}

static void seed_gid(uint32_t seed, uint32_t i, struct ibk_gid_entry *e)
{
	ibk_gid_set(IBK_GID_DEFAULT_PREFIX, ((uint64_t)seed + 1) << 8 | i,
		    &e->gid);
	e->type = IBK_GID_TYPE_ROCE_V2;
}

/* The GID table as the interrupt sees it: one seed's entries, and a find
 * that agrees. Returns the number of wrong answers. */
static uint32_t irq_check_gids(void)
{
	static struct ibk_gid_entry snap[GID_CAP];
	struct ibk_gid_entry want;
	enum ibk_gid_type type = IBK_GID_TYPE_IB;
	uint32_t gen, seed, i, torn = 0;

	if (ibk__load(&port.gids.hdr.latch.writer, relaxed))
		irq_gid_inside++;
	if (ibk_gid_table_snapshot(&port.gids, GID_CAP, snap, &gen) != GID_CAP)
		return 1;
	seed = (uint32_t)(ibk_gid_guid(&snap[0].gid) >> 8) - 1;
	for (i = 0; i < GID_CAP; i++) {
		seed_gid(seed, i, &want);
		torn += !same16(snap[i].gid.raw, want.gid.raw) ||
			snap[i].type != want.type;
	}
	torn += ibk_gid_table_find(&port.gids, &snap[5].gid, IBK_GID_TYPE_ANY,
				   &type) != 5 || type != IBK_GID_TYPE_ROCE_V2;
	return torn;
}

static void fw_tick(void)
{
	static ibk_pkey_t snap[PK_CAP];
	uint32_t gen, seed, i, torn = 0;
	uint8_t hdr[IBK_BTH_LEN + IBK_DETH_LEN];
	struct ibk_qp_keys qp;
	ibk_pkey_t found = 0;

	if (irq_counting) {	/* the counter phase: bump what main bumps */
		ibk_counter16_inc(&port.pkey_violations);
		irq_counts++;
		return;
	}
	if (irq_reads >= IRQ_READS && irq_inside >= IRQ_INSIDE &&
	    irq_gid_inside >= IRQ_INSIDE / 3)
		return;
	/* The lock word: set from write_begin to write_end. */
	if (ibk__load(&port.pkeys.hdr.latch.writer, relaxed))
		irq_inside++;
	if (ibk_pkey_table_snapshot(&port.pkeys, PK_CAP, snap, &gen) !=
	    PK_CAP) {
		irq_torn++;
		return;
	}
	seed = (uint32_t)(((snap[0] & 0x7fffu) >> 5) - 1);
	for (i = 0; i < PK_CAP; i++)
		torn += snap[i] != seed_key(seed, i);
	torn += ibk_pkey_table_find(&port.pkeys, snap[7], &found) != 7 ||
		found != snap[7];
	/* A packet whose Q_Key the QP refuses: counted from here. */
	qp.type = IBK_QPT_UD;
	qp.pkey = 0;
	qp.pkey_index = 3;
	qp.qkey = 0x22;
	make_packet(hdr, snap[3], 0x23);
	torn += ibk_port_rx(&port, &qp, hdr, hdr + IBK_BTH_LEN) !=
		IBK_RX_DROP_QKEY;
	irq_drops++;
	torn += irq_check_gids();
	irq_torn += torn != 0;
	irq_reads++;
}

static void test_irq_reader(void)
{
	ibk_pkey_t keys[PK_CAP];
	struct ibk_gid_entry gids[GID_CAP];
	uint32_t refills = 0, main_counts = 0, main_incs = 0, counted = 0, i;

	ibk_counter16_reset(&port.qkey_violations);
	for (i = 0; i < PK_CAP; i++)
		keys[i] = seed_key(0, i);
	for (i = 0; i < GID_CAP; i++)
		seed_gid(0, i, &gids[i]);
	ibk_pkey_table_refill(&port.pkeys, keys, PK_CAP,
			      ibk_pkey_table_refill_ticket(&port.pkeys));
	ibk_gid_table_refill(&port.gids, gids, GID_CAP,
			     ibk_gid_table_refill_ticket(&port.gids));
	timer_start(TIMER_PERIOD);
	while ((irq_reads < IRQ_READS || irq_inside < IRQ_INSIDE ||
		irq_gid_inside < IRQ_INSIDE / 3) &&
	       refills < IRQ_MAX_REFILLS) {
		refills++;
		for (i = 0; i < PK_CAP; i++)
			keys[i] = seed_key(refills, i);
		ibk_pkey_table_refill(&port.pkeys, keys, PK_CAP,
				      ibk_pkey_table_refill_ticket(&port.pkeys));
		for (i = 0; i < GID_CAP; i++)
			seed_gid(refills, i, &gids[i]);
		ibk_gid_table_refill(&port.gids, gids, GID_CAP,
				     ibk_gid_table_refill_ticket(&port.gids));
		if ((refills & 7) == 0) {	/* the main loop counts too */
			ibk_counter16_inc(&port.qkey_violations);
			main_counts++;
		}
	}
	/* Then only the counter, from both sides, in a tight loop: a
	 * read-modify-write the interrupt can split loses counts. Reset
	 * (an exchange) every 32000 to stay clear of saturation. QEMU's
	 * timer runs on host time and a starved QEMU coalesces its ticks,
	 * so the bound on the main loop is generous: on a loaded host 4
	 * million increments saw only 11 interrupts. */
	ibk_counter16_reset(&port.pkey_violations);
	irq_counting = 1;
	while (irq_counts < 200 && main_incs < 32000000) {
		for (i = 0; i < 1000; i++)
			ibk_counter16_inc(&port.pkey_violations);
		main_incs += 1000;
		if (main_incs % 32000 == 0)
			counted += ibk_counter16_reset(&port.pkey_violations);
	}
	irq_counting = 0;
	counted += ibk_counter16_reset(&port.pkey_violations);
	timer_stop();
	printf("# %lu refills, %lu interrupt reads, %lu inside a P_Key and "
	       "%lu inside a GID write section\n", (unsigned long)refills,
	       (unsigned long)irq_reads, (unsigned long)irq_inside,
	       (unsigned long)irq_gid_inside);
	check(irq_reads >= IRQ_READS, "the timer interrupt read the table "
	      "while the main loop refilled it", irq_reads);
	check(irq_inside >= IRQ_INSIDE && irq_gid_inside >= IRQ_INSIDE / 3,
	      "interrupt reads landed inside P_Key and GID write sections "
	      "(lock word set) and completed", irq_inside);
	check(irq_torn == 0, "every interrupt read saw one generation of each "
	      "table: snapshots, finds and rx", irq_torn);
	check(ibk_counter16_read(&port.qkey_violations) ==
	      main_counts + irq_drops, "a counter bumped by the main loop and "
	      "the interrupt lost no count", main_counts + irq_drops);
	printf("# counter: %lu from the main loop, %lu from the interrupt, "
	       "%lu counted\n", (unsigned long)main_incs,
	       (unsigned long)irq_counts, (unsigned long)counted);
	check(irq_counts >= 20 && counted == main_incs + irq_counts,
	      "a counter bumped back to back by the main loop and the "
	      "interrupt (at least 20 times) lost no count",
	      main_incs + irq_counts - counted);
}

int main(void)
{
	printf("# ibkeys firmware test: %s\n", FW_NAME);
	test_pkeys();
	test_qkeys();
	test_gid_text();
	test_gid_twins();
	test_tables(false);
	test_tables(true);	/* the port stays on the small index */
	test_port_rx();
	test_irq_reader();
	return tap_done();
}
