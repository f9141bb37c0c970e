// SPDX-License-Identifier: MIT
/*
 * ibk_selftest - ib_keys.h and ib_tables.h inside the Linux kernel.
 *
 * Loaded with insmod in the VM of tests/vm/run, it checks, in kernel space
 * and with the kernel's port of the atomics (READ_ONCE, smp_load_acquire,
 * try_cmpxchg_acquire, smp_rmb/smp_wmb):
 *
 *  - the rules against models written here: P_Key matching for every key
 *    against 64 others, Q_Key selection, matching, privilege and class on
 *    edges and random keys;
 *  - GIDs against the kernel's own code: the text forms against printk's
 *    %pI6c and %pI6, the parser against in6_pton(), the RoCE GIDs of a MAC
 *    and an IPv4 address against addrconf_addr_eui48() and
 *    ipv6_addr_set_v4mapped(); wire fields against get_unaligned_be*();
 *  - the tables: P_Key and GID finds against linear scans of random tables
 *    with duplicates, the QP1 receive check against the membership rule,
 *    state gating and refill tickets;
 *  - a writer kthread refilling a P_Key and a GID table back to back for
 *    `seconds` seconds (module parameter, default 2) against a reader
 *    kthread and an hrtimer reading the same tables in hard interrupt
 *    context, which interrupts the writer mid-update on the same CPU: every
 *    snapshot must be one whole refill.
 *
 * Each check is a line "ibk_selftest: ok - ..." or "... not ok - ..." in
 * the kernel log, and the last line is "ibk_selftest: N passed, N failed".
 * Loading succeeds whatever the outcome, so that the module unloads clean.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/inet.h>
#include <linux/kernel.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <asm/unaligned.h>
#include <net/addrconf.h>
#include <net/ipv6.h>

#include "ib_tables.h"

static unsigned int seconds = 2;
module_param(seconds, uint, 0444);
MODULE_PARM_DESC(seconds, "how long the writer races the readers (1-60)");

static unsigned int n_passed, n_failed;

static __printf(2, 3) bool check(bool ok, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_info("%s - %pV\n", ok ? "ok" : "not ok", &vaf);
	va_end(args);
	if (ok)
		n_passed++;
	else
		n_failed++;
	return ok;
}

/* splitmix64: a fixed seed, so a failure reproduces. */
static u64 rng_state = 0x2545f4914f6cdd1dULL;

static u64 rng64(void)
{
	u64 z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static u32 rng_below(u32 n)
{
	return (u32)(rng64() % n);
}

/* ------------------------------------------------------------------------
 * Rules against models
 * ------------------------------------------------------------------------ */

static bool model_pkey_match(u16 a, u16 b)
{
	u16 base = a & 0x7fff;

	if (base == 0 || base != (b & 0x7fff))
		return false;
	return (a & 0x8000) || (b & 0x8000);
}

static void test_pkey_rules(void)
{
	static const u16 fixed[] = { 0x0000, 0x8000, 0x0001, 0x8001, 0x7fff,
				     0xffff, 0x0002, 0x8002 };
	u16 other[64];
	u32 a, i, pairs = 0, wrong = 0;

	for (i = 0; i < ARRAY_SIZE(other); i++)
		other[i] = i < ARRAY_SIZE(fixed) ? fixed[i] : (u16)rng64();
	for (a = 0; a <= 0xffff; a++) {
		for (i = 0; i < ARRAY_SIZE(other); i++) {
			pairs++;
			wrong += ibk_pkey_match((u16)a, other[i]) !=
				 model_pkey_match((u16)a, other[i]);
			wrong += ibk_pkey_match(other[i], (u16)a) !=
				 model_pkey_match(other[i], (u16)a);
		}
		if ((a & 0xfff) == 0)
			cond_resched();
	}
	check(wrong == 0,
	      "P_Key match: every key against 64 others both ways, %u pairs, %u differ from the model",
	      2 * pairs, wrong);
	check(ibk_pkey_match(0x8001, 0x0001) && !ibk_pkey_match(0x0001, 0x0001) &&
	      !ibk_pkey_match(0x8002, 0x0001) && !ibk_pkey_match(0x8000, 0x8000),
	      "P_Key match: 0x8001~0x0001 talk, 0x0001~0x0001 and 0x8002~0x0001 do not, base 0 never");
}

static int model_qkey_class(u32 k)
{
	if (k < 0x80000000u)
		return IBK_QKEY_CLASS_FREE;
	if (k <= 0x8000ffffu)
		return IBK_QKEY_CLASS_APP_CONTROLLED;
	if (k == 0x80010000u)
		return IBK_QKEY_CLASS_GSI;
	if (k <= 0x8fffffffu)
		return IBK_QKEY_CLASS_RESERVED;
	return IBK_QKEY_CLASS_UNASSIGNED;
}

static void test_qkey_rules(void)
{
	static const u32 edges[] = { 0, 1, 0xb1b, 0x7fffffff, 0x80000000,
				     0x8000ffff, 0x80010000, 0x80010001,
				     0x8fffffff, 0x90000000, 0xffffffff };
	u32 i, n = 0, wrong = 0;

	for (i = 0; i < 1000000; i++) {
		u32 wr = i < ARRAY_SIZE(edges) ? edges[i] : (u32)rng64();
		u32 qp = i < ARRAY_SIZE(edges) ?
			 edges[ARRAY_SIZE(edges) - 1 - i] : (u32)rng64();

		n++;
		wrong += ibk_qkey_select(wr, qp) != ((wr & 0x80000000u) ? qp : wr);
		wrong += ibk_qkey_match(wr, qp) != (wr == qp);
		wrong += ibk_qkey_match(wr, wr) != true;
		wrong += ibk_qkey_is_controlled(wr) != !!(wr >> 31);
		wrong += ibk_qkey_may_set(wr, false) != !(wr >> 31);
		wrong += ibk_qkey_may_set(wr, true) != true;
		wrong += (int)ibk_qkey_classify(wr) != model_qkey_class(wr);
		if ((i & 0xffff) == 0)
			cond_resched();
	}
	check(wrong == 0,
	      "Q_Key select, match, privilege and class: %u keys (edges and random), %u differ from the model",
	      n, wrong);
}

/* ------------------------------------------------------------------------
 * GIDs and wire fields against the kernel's own code
 * ------------------------------------------------------------------------ */

/* printk's %pI6c prints IPv4-compatible (::a.b.c.d) and ISATAP addresses
 * its own way where inet_ntop(), and so ibk_gid_ntop(), differ: those two
 * forms stay out of the random comparison. */
static bool kernel_prints_differently(const struct ibk_gid *g)
{
	const u8 *r = g->raw;
	static const u8 zero[12];

	if (memcmp(r, zero, 12) == 0)
		return true;
	return (r[8] == 0x00 || r[8] == 0x02) && r[9] == 0x00 &&
	       r[10] == 0x5e && r[11] == 0xfe;
}

static void random_gid(struct ibk_gid *g)
{
	u32 w;

	for (w = 0; w < 8; w++) {
		u16 v = rng_below(3) ? 0 : (u16)rng64();

		g->raw[2 * w] = v >> 8;
		g->raw[2 * w + 1] = v & 0xff;
	}
	switch (rng_below(8)) {
	case 0:		/* IPv4-mapped */
		memset(g->raw, 0, 10);
		g->raw[10] = 0xff;
		g->raw[11] = 0xff;
		break;
	case 1:		/* link-local, as RoCE's default GID */
		memset(g->raw, 0, 8);
		g->raw[0] = 0xfe;
		g->raw[1] = 0x80;
		break;
	}
}

static void test_gid_text(void)
{
	char mine[IBK_GID_FULL_STRLEN], kern[64];
	u32 i, n = 0, ntop_wrong = 0, full_wrong = 0, pton_wrong = 0;
	u32 in6_wrong = 0;
	struct ibk_gid g, back;
	const char *end;
	u8 parsed[16];

	for (i = 0; i < 200000; i++) {
		random_gid(&g);
		if (kernel_prints_differently(&g))
			continue;
		n++;
		snprintf(kern, sizeof(kern), "%pI6c", g.raw);
		ibk_gid_ntop(&g, mine);
		ntop_wrong += strcmp(mine, kern) != 0;
		if (ntop_wrong == 1 && strcmp(mine, kern) != 0)
			pr_info("  %%pI6c %s, ibk_gid_ntop %s\n", kern, mine);
		snprintf(kern, sizeof(kern), "%pI6", g.raw);
		full_wrong += strcmp(ibk_gid_ntop_full(&g, mine), kern) != 0;
		pton_wrong += ibk_gid_pton(kern, &back) != 0 ||
			      !ibk_gid_equal(&back, &g);
		ibk_gid_ntop(&g, mine);
		in6_wrong += in6_pton(mine, -1, parsed, '\0', &end) != 1 ||
			     memcmp(parsed, g.raw, 16) != 0;
		if ((i & 0x3fff) == 0)
			cond_resched();
	}
	check(ntop_wrong == 0,
	      "ibk_gid_ntop against printk's %%pI6c: %u GIDs, %u differ", n,
	      ntop_wrong);
	check(full_wrong == 0 && pton_wrong == 0,
	      "ibk_gid_ntop_full against %%pI6 and ibk_gid_pton of it: %u GIDs, %u and %u differ",
	      n, full_wrong, pton_wrong);
	check(in6_wrong == 0,
	      "in6_pton() reads ibk_gid_ntop's text back to the same GID: %u GIDs, %u differ",
	      n, in6_wrong);
}

static void test_roce_gids(void)
{
	u32 i, mac_wrong = 0, v4_wrong = 0;

	for (i = 0; i < 100000; i++) {
		u8 mac[6], eui[8];
		struct ibk_gid g, want;
		struct in6_addr mapped;
		u64 r = rng64();
		u32 ipv4 = (u32)rng64();

		memcpy(mac, &r, 6);
		g = ibk_gid_from_mac(mac);
		addrconf_addr_eui48(eui, (const char *)mac);
		memset(want.raw, 0, 8);
		want.raw[0] = 0xfe;
		want.raw[1] = 0x80;
		memcpy(want.raw + 8, eui, 8);
		mac_wrong += !ibk_gid_equal(&g, &want);

		g = ibk_gid_from_ipv4(ipv4);
		ipv6_addr_set_v4mapped(htonl(ipv4), &mapped);
		v4_wrong += memcmp(g.raw, mapped.s6_addr, 16) != 0 ||
			    !ibk_gid_is_v4mapped(&g) || ibk_gid_to_ipv4(&g) != ipv4;
	}
	check(mac_wrong == 0,
	      "ibk_gid_from_mac against the kernel's addrconf_addr_eui48() under fe80::/64 (RoCE's default GID): 100000 MACs, %u differ",
	      mac_wrong);
	check(v4_wrong == 0,
	      "ibk_gid_from_ipv4 against ipv6_addr_set_v4mapped() (an IPv4 RoCE v2 GID): 100000 addresses, %u differ",
	      v4_wrong);
}

static void test_wire(void)
{
	u8 buf[64];
	u32 i, wrong = 0;

	for (i = 0; i < 100000; i++) {
		u32 off = rng_below(32), qkey = (u32)rng64(), qpn = (u32)rng64();
		u16 pkey = (u16)rng64();
		u8 *bth = buf + off, *deth = bth + IBK_BTH_LEN;

		memset(buf, 0xa5, sizeof(buf));
		ibk_bth_set_pkey(bth, pkey);
		ibk_bth_set_dest_qp(bth, qpn);
		ibk_deth_set_qkey(deth, qkey);
		ibk_deth_set_src_qp(deth, qpn);
		wrong += get_unaligned_be16(bth + 2) != pkey;
		wrong += (get_unaligned_be32(bth + 4) & 0xffffff) != (qpn & 0xffffff);
		wrong += bth[4] != 0xa5;
		wrong += get_unaligned_be32(deth) != qkey;
		wrong += (get_unaligned_be32(deth + 4) & 0xffffff) != (qpn & 0xffffff);
		wrong += ibk_bth_pkey(bth) != pkey || ibk_deth_qkey(deth) != qkey ||
			 ibk_bth_dest_qp(bth) != (qpn & 0xffffff) ||
			 ibk_deth_src_qp(deth) != (qpn & 0xffffff);
	}
	check(wrong == 0,
	      "BTH P_Key and DestQP, DETH Q_Key and SrcQP at every alignment against get_unaligned_be16/be32: %u differ",
	      wrong);
}

/* ------------------------------------------------------------------------
 * Tables against linear scans
 * ------------------------------------------------------------------------ */

#define CAP 128u

/* One port's storage; also the one the race uses, after these tests. */
static struct ibk_port *port;
static struct ibk_pkey_cell *pk_cells;
static struct ibk_hash_slot *pk_slots;
static struct ibk_gid_cell *gid_cells;
static struct ibk_hash_slot *gid_slots;
static u16 *keys;
static struct ibk_gid_entry *gids;

static int model_pkey_find(u16 q)
{
	int best = -1;
	u32 i;

	if (!(q & 0x7fff))
		return IBK_EINVAL;
	for (i = 0; i < CAP; i++) {
		if (!(keys[i] & 0x7fff) || (keys[i] & 0x7fff) != (q & 0x7fff))
			continue;
		if (best < 0 || ((keys[i] & 0x8000) && !(keys[best] & 0x8000)))
			best = i;
	}
	return best < 0 ? IBK_ENOENT : best;
}

static int model_pkey_find_exact(u16 q)
{
	u32 i;

	if (!(q & 0x7fff))
		return IBK_EINVAL;
	for (i = 0; i < CAP; i++)
		if (keys[i] == q)
			return i;
	return IBK_ENOENT;
}

/* QP1 admits a packet key if a valid entry of its base is full, or the
 * packet's key is. */
static bool model_gsi_admits(u16 pkt)
{
	u32 i;

	for (i = 0; i < CAP; i++)
		if ((pkt & 0x7fff) && (keys[i] & 0x7fff) == (pkt & 0x7fff) &&
		    ((keys[i] | pkt) & 0x8000))
			return true;
	return false;
}

static int model_gid_find(const struct ibk_gid *g, int type)
{
	u32 i;

	if (ibk_gid_is_zero(g))
		return IBK_EINVAL;
	for (i = 0; i < CAP; i++)
		if (ibk_gid_equal(&gids[i].gid, g) &&
		    (type < 0 || (int)gids[i].type == type))
			return i;
	return IBK_ENOENT;
}

static void test_tables(void)
{
	u32 t, i, finds = 0, wrong = 0, gid_finds = 0, gid_wrong = 0;
	u32 rx = 0, rx_wrong = 0;
	u8 hdr[IBK_BTH_LEN + IBK_DETH_LEN];
	u16 bases[24];
	int rc;

	for (t = 0; t < 200; t++) {
		for (i = 0; i < ARRAY_SIZE(bases); i++)
			bases[i] = 1 + rng_below(0x7fff);
		for (i = 0; i < CAP; i++)
			keys[i] = rng_below(8) == 0 ? 0 :
				  bases[rng_below(ARRAY_SIZE(bases))] |
				  (rng64() & 1 ? 0x8000 : 0);
		rc = ibk_pkey_table_refill(&port->pkeys, keys, CAP,
					   ibk_pkey_table_refill_ticket(&port->pkeys));
		wrong += rc != IBK_OK;
		for (i = 0; i < 2 * ARRAY_SIZE(bases) + 8; i++) {
			u16 q = i < 2 * ARRAY_SIZE(bases) ?
				bases[i / 2] | (i & 1 ? 0x8000 : 0) : (u16)rng64();
			ibk_pkey_t found = 0;
			int got = ibk_pkey_table_find(&port->pkeys, q, &found);
			int want = model_pkey_find(q);

			finds += 2;
			wrong += got != want || (got >= 0 && found != keys[got]);
			wrong += ibk_pkey_table_find_exact(&port->pkeys, q) !=
				 model_pkey_find_exact(q);

			/* QP1: P_Key against the whole table, GSI Q_Key */
			memset(hdr, 0, sizeof(hdr));
			ibk_bth_set_opcode(hdr, IBK_OPCODE_UD_SEND_ONLY);
			ibk_bth_set_dest_qp(hdr, 1);
			ibk_bth_set_pkey(hdr, q);
			ibk_deth_set_qkey(hdr + IBK_BTH_LEN,
					  i & 2 ? IBK_QKEY_GSI : 0x1234);
			rx++;
			rx_wrong += ibk_port_rx_gsi(port, hdr, hdr + IBK_BTH_LEN,
						    NULL) !=
				    (!model_gsi_admits(q) ? IBK_RX_DROP_PKEY :
				     i & 2 ? IBK_RX_ACCEPT : IBK_RX_DROP_QKEY);
		}

		for (i = 0; i < CAP; i++) {
			if (i && rng_below(4) == 0) {
				gids[i] = gids[rng_below(i)];	/* a duplicate */
				gids[i].type = (enum ibk_gid_type)rng_below(3);
				continue;
			}
			random_gid(&gids[i].gid);
			if (rng_below(10) == 0)
				memset(gids[i].gid.raw, 0, 16);
			gids[i].type = (enum ibk_gid_type)rng_below(3);
		}
		rc = ibk_gid_table_refill(&port->gids, gids, CAP,
					  ibk_gid_table_refill_ticket(&port->gids));
		gid_wrong += rc != IBK_OK;
		for (i = 0; i < CAP; i++) {
			int type;

			if (ibk_gid_is_zero(&gids[i].gid))
				continue;
			for (type = -1; type <= 2; type++) {
				gid_finds++;
				gid_wrong += ibk_gid_table_find(&port->gids,
						&gids[i].gid, (enum ibk_gid_type)type,
						NULL) != model_gid_find(&gids[i].gid, type);
			}
		}
		cond_resched();
	}
	check(wrong == 0,
	      "P_Key find (full member first, lowest index) and exact find against a linear scan: 200 tables of %u with duplicates, %u finds, %u differ",
	      CAP, finds, wrong);
	check(rx_wrong == 0,
	      "QP1 receive check (P_Key against the whole table, Q_Key 0x80010000) against the membership rule: %u packets, %u differ",
	      rx, rx_wrong);
	check(gid_wrong == 0,
	      "GID find (any type and each type) against a linear scan: 200 tables of %u with duplicates and holes, %u finds, %u differ",
	      CAP, gid_finds, gid_wrong);
}

static void test_gating(void)
{
	u32 ticket = ibk_pkey_table_refill_ticket(&port->pkeys);
	ibk_pkey_t k;
	int a, b, c, d;

	ibk_port_event(port, IBK_EVENT_PKEY_CHANGE);
	a = ibk_pkey_table_get(&port->pkeys, 0, &k);
	b = ibk_pkey_table_refill(&port->pkeys, keys, CAP, ticket);
	c = ibk_pkey_table_refill(&port->pkeys, keys, CAP,
				  ibk_pkey_table_refill_ticket(&port->pkeys));
	ibk_port_event(port, IBK_EVENT_PORT_ERR);
	d = ibk_pkey_table_get(&port->pkeys, 0, &k);
	check(a == IBK_ESTALE && b == IBK_ESTALE && c == IBK_OK &&
	      d == IBK_ENOTREADY,
	      "events: PKEY_CHANGE makes reads IBK_ESTALE and refuses a refill with an older ticket; a new ticket refills; PORT_ERR gives IBK_ENOTREADY");
	ibk_port_set_state(port, IBK_PORT_ACTIVE);
	ibk_pkey_table_refill(&port->pkeys, keys, CAP,
			      ibk_pkey_table_refill_ticket(&port->pkeys));
	ibk_gid_table_refill(&port->gids, gids, CAP,
			     ibk_gid_table_refill_ticket(&port->gids));
}

/* ------------------------------------------------------------------------
 * The race: a writer kthread against a reader kthread and an hrtimer
 * ------------------------------------------------------------------------ */

#define RACE_CAP 64u

/* Refill number @g: entry i holds a key and a GID derived from g and i,
 * so that a snapshot mixing two refills shows. */
static u16 race_key(u32 g, u32 i)
{
	return (u16)(0x8000 | (1 + (g * 7 + i) % 0x7ffe));
}

/* The refill number (mod 0x7ffe) a P_Key entry 0 belongs to, as far as
 * race_key() tells: the entry i of the same refill follows from it. */
static u16 race_key_next(u16 first, u32 i)
{
	return (u16)(0x8000 | (1 + ((first & 0x7fffu) - 1 + i) % 0x7ffe));
}

static void race_gid(u32 g, u32 i, struct ibk_gid *out)
{
	put_unaligned_be32(0xfe800000, out->raw);
	put_unaligned_be32(g, out->raw + 4);
	put_unaligned_be32(g ^ 0x5a5a5a5a, out->raw + 8);
	put_unaligned_be32(i, out->raw + 12);
}

struct race_reader {
	u32 reads, torn, not_ok;
	ibk_pkey_t pk[RACE_CAP];
	struct ibk_gid_entry ge[RACE_CAP];
};

static struct race_reader irq_reader, thread_reader;
static u32 writer_refills;
static struct hrtimer race_timer;
static bool race_timer_on;

/* One snapshot of each table, checked for being whole. */
static void race_read(struct race_reader *r)
{
	int n = ibk_pkey_table_snapshot(&port->pkeys, RACE_CAP, r->pk, NULL);
	u32 i, g;

	r->reads++;
	if (n != (int)RACE_CAP) {
		r->not_ok++;
		return;
	}
	/* entry 0 names the refill; every other entry must be that one's */
	for (i = 1; i < RACE_CAP; i++)
		if (r->pk[i] != race_key_next(r->pk[0], i))
			break;
	r->torn += i != RACE_CAP;

	n = ibk_gid_table_snapshot(&port->gids, RACE_CAP, r->ge, NULL);
	r->reads++;
	if (n != (int)RACE_CAP) {
		r->not_ok++;
		return;
	}
	g = get_unaligned_be32(r->ge[0].gid.raw + 4);
	for (i = 0; i < RACE_CAP; i++) {
		struct ibk_gid want;

		race_gid(g, i, &want);
		if (!ibk_gid_equal(&want, &r->ge[i].gid)) {
			r->torn++;
			break;
		}
	}
}

static u32 irq_mid_update;

static enum hrtimer_restart race_tick(struct hrtimer *t)
{
	/* Did this interrupt stop the writer inside an update? */
	irq_mid_update += READ_ONCE(port->pkeys.hdr.latch.writer) != 0 ||
			  READ_ONCE(port->gids.hdr.latch.writer) != 0;
	race_read(&irq_reader);
	hrtimer_forward_now(t, ns_to_ktime(200 * NSEC_PER_USEC));
	return READ_ONCE(race_timer_on) ? HRTIMER_RESTART : HRTIMER_NORESTART;
}

/* Refill number @g of both tables, as one update each. */
static void race_refill(u32 g)
{
	u32 i;

	for (i = 0; i < RACE_CAP; i++) {
		keys[i] = race_key(g, i);
		race_gid(g, i, &gids[i].gid);
		gids[i].type = IBK_GID_TYPE_ROCE_V2;
	}
	ibk_pkey_table_refill(&port->pkeys, keys, RACE_CAP,
			      ibk_pkey_table_refill_ticket(&port->pkeys));
	ibk_gid_table_refill(&port->gids, gids, RACE_CAP,
			     ibk_gid_table_refill_ticket(&port->gids));
}

static int race_writer(void *unused)
{
	u32 g = 2;

	while (!kthread_should_stop()) {
		race_refill(g++);
		writer_refills += 2;
		if ((g & 63) == 0)
			cond_resched();
	}
	return 0;
}

static int race_reader_fn(void *unused)
{
	while (!kthread_should_stop()) {
		race_read(&thread_reader);
		if ((thread_reader.reads & 63) == 0)
			cond_resched();
	}
	return 0;
}

static void test_race(void)
{
	struct ibk_port *p = port;
	struct task_struct *w, *r;
	unsigned long until;
	int rc;

	rc = ibk_port_init(p, pk_cells, RACE_CAP, pk_slots,
			   IBK_PKEY_HASH_SLOTS(RACE_CAP), gid_cells, RACE_CAP,
			   gid_slots, IBK_HASH_SLOTS(RACE_CAP));
	race_refill(1);
	ibk_port_set_state(p, IBK_PORT_ACTIVE);
	w = kthread_run(race_writer, NULL, "ibk_writer");
	r = kthread_run(race_reader_fn, NULL, "ibk_reader");
	if (rc != IBK_OK || IS_ERR(w) || IS_ERR(r)) {
		check(false, "race: port and threads start");
		if (!IS_ERR(w))
			kthread_stop(w);
		if (!IS_ERR(r))
			kthread_stop(r);
		return;
	}
	WRITE_ONCE(race_timer_on, true);
	hrtimer_init(&race_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	race_timer.function = race_tick;
	hrtimer_start(&race_timer, ns_to_ktime(200 * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_HARD);
	until = jiffies + seconds * HZ;
	while (time_before(jiffies, until))
		msleep(50);
	WRITE_ONCE(race_timer_on, false);
	hrtimer_cancel(&race_timer);
	kthread_stop(r);
	kthread_stop(w);
	pr_info("race: %u s: writer %u refills; reader thread %u reads, interrupt %u reads\n",
		seconds, writer_refills, thread_reader.reads, irq_reader.reads);
	check(writer_refills > 0 && thread_reader.reads > 0 && irq_reader.reads > 0,
	      "race: the writer kthread, the reader kthread and the hrtimer all ran (%u refills, %u + %u reads)",
	      writer_refills, thread_reader.reads, irq_reader.reads);
	check(thread_reader.torn == 0 && thread_reader.not_ok == 0,
	      "race: reader kthread: %u snapshots, %u torn, %u not readable",
	      thread_reader.reads, thread_reader.torn, thread_reader.not_ok);
	check(irq_reader.torn == 0 && irq_reader.not_ok == 0,
	      "race: hard interrupt reader, on the CPU the writer runs on: %u snapshots (%u ticks in the middle of an update), %u torn, %u not readable",
	      irq_reader.reads, irq_mid_update, irq_reader.torn,
	      irq_reader.not_ok);
}

/* ------------------------------------------------------------------------
 * Module
 * ------------------------------------------------------------------------ */

static void free_storage(void)
{
	kvfree(pk_cells);
	kvfree(pk_slots);
	kvfree(gid_cells);
	kvfree(gid_slots);
	kfree(keys);
	kfree(gids);
	kfree(port);
}

static int __init ibk_selftest_init(void)
{
	int rc;

	if (seconds < 1 || seconds > 60)
		seconds = 2;
	port = kzalloc(sizeof(*port), GFP_KERNEL);
	pk_cells = kvcalloc(IBK_PKEY_CELLS(CAP), sizeof(*pk_cells), GFP_KERNEL);
	pk_slots = kvcalloc(IBK_PKEY_HASH_SLOTS(CAP), sizeof(*pk_slots), GFP_KERNEL);
	gid_cells = kvcalloc(IBK_GID_CELLS(CAP), sizeof(*gid_cells), GFP_KERNEL);
	gid_slots = kvcalloc(IBK_HASH_SLOTS(CAP), sizeof(*gid_slots), GFP_KERNEL);
	keys = kcalloc(CAP, sizeof(*keys), GFP_KERNEL);
	gids = kcalloc(CAP, sizeof(*gids), GFP_KERNEL);
	if (!port || !pk_cells || !pk_slots || !gid_cells || !gid_slots ||
	    !keys || !gids) {
		free_storage();
		return -ENOMEM;
	}
	rc = ibk_port_init(port, pk_cells, CAP, pk_slots,
			   IBK_PKEY_HASH_SLOTS(CAP), gid_cells, CAP, gid_slots,
			   IBK_HASH_SLOTS(CAP));
	check(rc == IBK_OK, "ibk_port_init on kvcalloc'd storage, capacity %u",
	      CAP);
	ibk_port_set_state(port, IBK_PORT_ACTIVE);

	test_pkey_rules();
	test_qkey_rules();
	test_gid_text();
	test_roce_gids();
	test_wire();
	test_tables();
	test_gating();
	test_race();

	pr_info("%u passed, %u failed\n", n_passed, n_failed);
	return 0;
}

static void __exit ibk_selftest_exit(void)
{
	free_storage();
	pr_info("unloaded\n");
}

module_init(ibk_selftest_init);
module_exit(ibk_selftest_exit);
MODULE_DESCRIPTION("ibkeys: both headers' self-test in kernel space");
MODULE_LICENSE("Dual MIT/GPL");
