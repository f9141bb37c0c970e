/* SPDX-License-Identifier: MIT */
/*
 * Both headers as C++17: the same rules hold, and a C++ file sees the same
 * structure layout as a C file (layout_c.c), so the two can share a port.
 */
#include <cstddef>
#include <cstring>

#include "ib_tables.h"

#include "layout.h"
#include "tap.h"

extern "C" const size_t ibk_c_layout[];
extern "C" const size_t ibk_c_layout_count;

/* One item of IBK_TEST_LAYOUT as an array element: its value, its text. */
#define IBK_LAYOUT_VALUE(expr)	expr,
#define IBK_LAYOUT_NAME(expr)	#expr,

static void check_layout(void)
{
	const size_t cxx_layout[] = { IBK_TEST_LAYOUT(IBK_LAYOUT_VALUE) };
	const char *const names[] = { IBK_TEST_LAYOUT(IBK_LAYOUT_NAME) };
	const size_t n = sizeof(cxx_layout) / sizeof(cxx_layout[0]);
	size_t differ = 0;

	for (size_t i = 0; i < n && i < ibk_c_layout_count; i++) {
		if (cxx_layout[i] != ibk_c_layout[i]) {
			tap_diag("layout item %zu, %s: C %zu, C++ %zu", i,
				 names[i], ibk_c_layout[i], cxx_layout[i]);
			differ++;
		}
	}
	tap_ok(n == ibk_c_layout_count && differ == 0,
	       "C and C++ agree on %zu sizes and offsets", n);
}

/* The seed page's example (IBA 10.9): QPA 0x8001, QPB/QPC 0x0001, QPD 0x8002. */
static void check_pkey_rules(void)
{
	tap_ok(ibk_pkey_match(0x8001, 0x0001), "C++: full and limited of one partition talk");
	tap_ok(!ibk_pkey_match(0x0001, 0x0001), "C++: limited and limited never talk");
	tap_ok(!ibk_pkey_match(0x8002, 0x0001), "C++: different partitions never talk");
	tap_ok(!ibk_pkey_match(0x8000, 0x8000), "C++: an invalid key matches not even itself");
}

/* A controlled WR Q_Key sends the QP context's Q_Key, any other its own. */
static void check_qkey_rules(void)
{
	tap_ok(ibk_qkey_select(0x80000000u, 0x1234u) == 0x1234u,
	       "C++: controlled WR Q_Key sends the QP's");
	tap_ok(ibk_qkey_select(0x7fffffffu, 0x1234u) == 0x7fffffffu,
	       "C++: uncontrolled WR Q_Key sends its own");
}

/* fe80::2:c903:1:2345 is the default prefix and port GUID 0x0002c90300012345. */
static void check_gid_text(void)
{
	struct ibk_gid g;
	char full[IBK_GID_FULL_STRLEN], text[IBK_GID_STRLEN];

	tap_ok(ibk_gid_pton("fe80::2:c903:1:2345", &g) == 0 &&
	       ibk_gid_subnet_prefix(&g) == IBK_GID_DEFAULT_PREFIX &&
	       ibk_gid_guid(&g) == 0x0002c90300012345ull,
	       "C++: pton splits into default prefix and GUID");
	tap_ok(std::strcmp(ibk_gid_ntop_full(&g, full),
			   "fe80:0000:0000:0000:0002:c903:0001:2345") == 0 &&
	       std::strcmp(ibk_gid_ntop(&g, text), "fe80::2:c903:1:2345") == 0,
	       "C++: both text forms");
}

/* BTH bytes 2-3 hold the P_Key big-endian (IBA 9.2). */
static void check_wire(void)
{
	unsigned char bth[IBK_BTH_LEN + 1] = { 0 };

	ibk_bth_set_pkey(bth + 1, 0x8001);
	tap_ok(bth[3] == 0x80 && bth[4] == 0x01 && ibk_bth_pkey(bth + 1) == 0x8001,
	       "C++: BTH P_Key is big-endian at bytes 2-3, any alignment");
}

static struct ibk_pkey_cell pkey_cells[IBK_PKEY_CELLS(8)];
static struct ibk_hash_slot pkey_slots[IBK_HASH_SLOTS(8)];
static struct ibk_gid_cell gid_cells[IBK_GID_CELLS(4)];
static struct ibk_hash_slot gid_slots[IBK_HASH_SLOTS(4)];
static struct ibk_port port;

/* Find prefers the full member of a base; a write makes a reference stale. */
static void check_tables(void)
{
	const ibk_pkey_t table[] = { 0xffff, 0x0001, 0x8001 };
	struct ibk_pkey_ref ref = {};

	tap_ok(ibk_port_init(&port, pkey_cells, 8, pkey_slots, IBK_HASH_SLOTS(8),
			     gid_cells, 4, gid_slots, IBK_HASH_SLOTS(4)) == 0,
	       "C++: port init");
	tap_ok(ibk_pkey_table_find(&port.pkeys, 0xffff, nullptr) == IBK_ENOTREADY,
	       "C++: a DOWN port refuses reads");
	ibk_port_set_state(&port, IBK_PORT_ACTIVE);
	tap_ok(ibk_pkey_table_refill(&port.pkeys, table, 3,
				     ibk_pkey_table_refill_ticket(&port.pkeys)) ==
	       IBK_OK, "C++: refill with a ticket taken once ACTIVE");
	tap_ok(ibk_pkey_table_find(&port.pkeys, 0x0001, nullptr) == 2,
	       "C++: find prefers the full member 0x8001 at index 2");
	tap_ok(ibk_pkey_table_ref_get(&port.pkeys, 1, &ref) == 0 &&
	       ibk_pkey_table_ref_fresh(&port.pkeys, &ref),
	       "C++: a new reference is fresh");
	ibk_pkey_table_set(&port.pkeys, 5, 0x8005);
	tap_ok(!ibk_pkey_table_ref_fresh(&port.pkeys, &ref),
	       "C++: any write makes it stale");
	ibk_counter16_add(&port.pkey_violations, 0x20000);
	tap_ok(ibk_counter16_read(&port.pkey_violations) == 0xffff,
	       "C++: the violation counter saturates at 0xffff");
}

int main()
{
	check_layout();
	check_pkey_rules();
	check_qkey_rules();
	check_gid_text();
	check_wire();
	check_tables();
	return tap_done();
}
