/* SPDX-License-Identifier: MIT */
/*
 * test_irq_masks.c - what the single-core atomics port (for firmware on a
 * core without compare-and-swap) masks interrupts for, counted.
 *
 * The port masks interrupts around each read-modify-write it makes, through
 * the integrator's IBK_ATOMICS_IRQ_SAVE()/IBK_ATOMICS_IRQ_RESTORE(), which
 * this test defines to count. The contract the README's firmware section
 * states, checked here: gets, finds, references, snapshots, block reads
 * and every accepted packet mask nothing (an interrupt handler's read
 * never delays a higher-priority one); a receive check masks once for each
 * violation counter it bumps (P_KeyViolations and Q_KeyViolations, IBA
 * 14.2.5.6): once for a dropped packet, at most once per counter for a
 * burst, and not at all for a drop no counter counts or once the counter
 * saturated at 0xffff.
 */
#include <string.h>

static unsigned irq_saves, irq_restores, irq_depth;

static unsigned irq_save(void)
{
	irq_saves++;
	return irq_depth++;
}

static void irq_restore(unsigned depth)
{
	irq_restores++;
	irq_depth = depth;
}

#define IBK_ATOMICS_SINGLE_CORE
#define IBK_ATOMICS_IRQ_SAVE()		irq_save()
#define IBK_ATOMICS_IRQ_RESTORE(state)	irq_restore(state)
#include "ib_tables.h"
#include "tap.h"

#define NPKEYS 32u
#define NGIDS 8u
#define BURST 8u

static struct ibk_pkey_cell pkey_cells[IBK_PKEY_CELLS(NPKEYS)];
static struct ibk_hash_slot pkey_slots[IBK_PKEY_HASH_SLOTS(NPKEYS)];
static struct ibk_gid_cell gid_cells[IBK_GID_CELLS(NGIDS)];
static struct ibk_hash_slot gid_slots[IBK_HASH_SLOTS(NGIDS)];
static struct ibk_port port;

/* A UD SEND ONLY's BTH and DETH, back to back, as the bursts take them. */
static void ud_packet(uint8_t *hdr, ibk_pkey_t pkey, ibk_qkey_t qkey)
{
	memset(hdr, 0, IBK_BTH_LEN + IBK_DETH_LEN);
	ibk_bth_set_opcode(hdr, IBK_OPCODE_UD_SEND_ONLY);
	ibk_bth_set_pkey(hdr, pkey);
	ibk_deth_set_qkey(hdr + IBK_BTH_LEN, qkey);
}

static unsigned irq_left_masked;

/* The masks made since the last call; one left open is remembered for
 * main()'s last check. */
static unsigned masks_since(void)
{
	unsigned n = irq_saves;

	irq_left_masked += irq_saves != irq_restores || irq_depth != 0;
	irq_saves = irq_restores = 0;
	return n;
}

static void setup(void)
{
	static const ibk_pkey_t pkeys[] = { 0xffff, 0x8001, 0x0002 };
	struct ibk_gid_entry gids[2];

	ibk_port_init(&port, pkey_cells, NPKEYS, pkey_slots,
		      IBK_PKEY_HASH_SLOTS(NPKEYS), gid_cells, NGIDS, gid_slots,
		      IBK_HASH_SLOTS(NGIDS));
	ibk_port_set_state(&port, IBK_PORT_ACTIVE);
	gids[0].gid = ibk_gid_make(IBK_GID_DEFAULT_PREFIX, 0x0002c90300012345u);
	gids[0].type = IBK_GID_TYPE_IB;
	gids[1].gid = ibk_gid_make(0xfec0000000000000u, 0x0002c90300012345u);
	gids[1].type = IBK_GID_TYPE_IB;
	tap_ok(ibk_pkey_table_refill(&port.pkeys, pkeys, 3,
				     ibk_pkey_table_refill_ticket(&port.pkeys)) ==
	       IBK_OK && ibk_gid_table_refill(&port.gids, gids, 2,
			ibk_gid_table_refill_ticket(&port.gids)) == IBK_OK,
	       "setup: both tables filled on an ACTIVE port");
	tap_ok(masks_since() > 0,
	       "writers mask interrupts (the lock word's compare-and-swap)");
}

static void test_reads(void)
{
	ibk_pkey_t pk, pkeys[NPKEYS], block[IBK_PKEY_BLOCK_ENTRIES];
	ibk_guid_t guids[IBK_GUID_BLOCK_ENTRIES];
	struct ibk_gid_entry e, entries[NGIDS];
	struct ibk_gid gid = ibk_gid_make(IBK_GID_DEFAULT_PREFIX,
					  0x0002c90300012345u);
	struct ibk_pkey_ref pref;
	struct ibk_gid_ref gref;
	enum ibk_gid_type type;
	uint32_t gen;
	int bad = 0;	/* a read that failed: every one returns < 0 then */

	bad |= ibk_pkey_table_get(&port.pkeys, 1, &pk) < 0;
	bad |= ibk_pkey_table_find(&port.pkeys, 0x0001, &pk) < 0;
	bad |= ibk_pkey_table_find_exact(&port.pkeys, 0x8001) < 0;
	bad |= ibk_pkey_table_ref_get(&port.pkeys, 0, &pref) < 0;
	bad |= ibk_pkey_table_ref_find(&port.pkeys, 0xffff, &pref) < 0;
	bad |= !ibk_pkey_table_ref_fresh(&port.pkeys, &pref);
	bad |= ibk_pkey_table_snapshot(&port.pkeys, NPKEYS, pkeys, &gen) < 0;
	bad |= ibk_pkey_table_read_block(&port.pkeys, 0, block) < 0;
	bad |= ibk_gid_table_get(&port.gids, 0, &e) < 0;
	bad |= ibk_gid_table_find(&port.gids, &gid, IBK_GID_TYPE_ANY, &type) < 0;
	bad |= ibk_gid_table_ref_get(&port.gids, 1, &gref) < 0;
	bad |= ibk_gid_table_ref_find(&port.gids, &gid, IBK_GID_TYPE_IB, &gref) < 0;
	bad |= !ibk_gid_table_ref_fresh(&port.gids, &gref);
	bad |= ibk_gid_table_snapshot(&port.gids, NGIDS, entries, &gen) < 0;
	bad |= ibk_gid_table_read_guid_block(&port.gids, 0, guids) < 0;
	bad |= ibk_counter16_read(&port.pkey_violations) != 0;
	tap_ok(bad == 0, "every table read succeeded");
	tap_ok(masks_since() == 0,
	       "gets, finds, references, snapshots, block reads: no mask");
}

static void test_accepted(void)
{
	struct ibk_qp_keys ud = { IBK_QPT_UD, 0, 1, 0x11111111u };
	const struct ibk_qp_keys *qps[BURST];
	uint8_t hdr[BURST][IBK_BTH_LEN + IBK_DETH_LEN], verdicts[BURST];
	const void *hdrs[BURST];
	uint16_t index;
	unsigned i, ok = 0;

	for (i = 0; i < BURST; i++) {
		ud_packet(hdr[i], 0x0001, ud.qkey);
		hdrs[i] = hdr[i];
		qps[i] = &ud;
	}
	ok += ibk_port_rx(&port, &ud, hdr[0], hdr[0] + IBK_BTH_LEN) ==
	      IBK_RX_ACCEPT;
	ok += ibk_port_rx_burst(&port, &ud, hdrs, BURST, verdicts) == BURST;
	ok += ibk_port_rx_mixed(&port, qps, hdrs, BURST, verdicts, NULL) ==
	      BURST;
	ud_packet(hdr[0], 0x7fff, IBK_QKEY_GSI);
	ok += ibk_port_rx_gsi(&port, hdr[0], hdr[0] + IBK_BTH_LEN, &index) ==
	      IBK_RX_ACCEPT;
	tap_ok(ok == 4, "single, burst, mixed and QP1 packets accepted");
	tap_ok(masks_since() == 0, "accepted packets: no mask");
}

static void test_drops(void)
{
	struct ibk_qp_keys ud = { IBK_QPT_UD, 0, 1, 0x11111111u };
	uint8_t hdr[BURST][IBK_BTH_LEN + IBK_DETH_LEN], verdicts[BURST];
	const void *hdrs[BURST];
	unsigned i;

	ud_packet(hdr[0], 0x0003, ud.qkey);
	tap_ok(ibk_port_rx(&port, &ud, hdr[0], hdr[0] + IBK_BTH_LEN) ==
	       IBK_RX_DROP_PKEY, "a packet of a P_Key the QP's entry lacks: dropped");
	tap_ok(masks_since() == 1, "one mask: P_KeyViolations counted");

	ud_packet(hdr[0], 0x0001, 0x22222222u);
	tap_ok(ibk_port_rx(&port, &ud, hdr[0], hdr[0] + IBK_BTH_LEN) ==
	       IBK_RX_DROP_QKEY, "a packet of another Q_Key: dropped");
	tap_ok(masks_since() == 1, "one mask: Q_KeyViolations counted");

	ud_packet(hdr[0], 0x0001, ud.qkey);
	ibk_bth_set_opcode(hdr[0], 0x04);	/* RC SEND ONLY to a UD QP */
	tap_ok(ibk_port_rx(&port, &ud, hdr[0], hdr[0] + IBK_BTH_LEN) ==
	       IBK_RX_DROP_OPCODE, "an RC opcode to a UD QP: dropped");
	tap_ok(masks_since() == 0, "no mask: no key counter counts it");

	/* 3 P_Key and 2 Q_Key violations in one burst */
	for (i = 0; i < BURST; i++) {
		ud_packet(hdr[i], i < 3 ? 0x0003 : 0x0001,
			  i >= 3 && i < 5 ? 0x22222222u : ud.qkey);
		hdrs[i] = hdr[i];
	}
	tap_ok(ibk_port_rx_burst(&port, &ud, hdrs, BURST, verdicts) == 3,
	       "a burst of 3 P_Key and 2 Q_Key violations: 3 accepted");
	tap_ok(masks_since() == 2, "two masks: one add per counter");
	tap_ok(ibk_counter16_read(&port.pkey_violations) == 4 &&
	       ibk_counter16_read(&port.qkey_violations) == 3,
	       "counters: 4 P_Key and 3 Q_Key violations");

	ibk_counter16_add(&port.pkey_violations, IBK_COUNTER16_MAX);
	masks_since();
	ud_packet(hdr[0], 0x0003, ud.qkey);
	tap_ok(ibk_port_rx(&port, &ud, hdr[0], hdr[0] + IBK_BTH_LEN) ==
	       IBK_RX_DROP_PKEY && masks_since() == 0,
	       "a saturated counter (0xffff) is not added to: no mask");
}

int main(void)
{
	setup();
	test_reads();
	test_accepted();
	test_drops();
	tap_ok(irq_left_masked == 0, "every mask was lifted again");
	return tap_done();
}
