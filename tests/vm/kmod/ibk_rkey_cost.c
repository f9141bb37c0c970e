// SPDX-License-Identifier: MIT
/*
 * ibk_rkey_cost - what a responder's R_Key decision costs in the kernel:
 * soft-RoCE's own way against ibkeys' table, in the same boot.
 *
 * Both decide the same requests (RDMA WRITE ONLY, 64 bytes, to one of
 * `objects` MRs of one PD, the keys at random) against the same MRs:
 *
 *  - stock: as Linux 6.1's rxe check_rkey() with lookup_mr() and
 *    mr_check_range(): the object found by the key's index in an xarray
 *    under RCU with a reference taken (rxe_pool_get_index()), then its
 *    32-bit key, PD, access, state and range compared, and the reference
 *    dropped;
 *  - table: as the second series of examples/rxe: ibk_mr_table_check() on
 *    the request's BTH and RETH and the QP, then, once granted, the same
 *    fetch with its key and state confirmed.
 *
 * Each variant runs `requests` decisions a round, the two alternating for
 * `rounds` rounds; the kernel log gets each round's ns per request and the
 * medians, "ibk_rkey_cost: stock ... table ...". Every decision must grant
 * (they all name live MRs, in range): a line "ibk_rkey_cost: not ok"
 * otherwise. A figure, not a gate: under TCG the times are the emulator's.
 * Loading succeeds whatever the outcome, so that the module unloads clean.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kref.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>
#include <linux/xarray.h>

#include "ib_tables.h"

static unsigned int objects = 1024;
module_param(objects, uint, 0444);
MODULE_PARM_DESC(objects, "MRs to decide against (1-65536)");
static unsigned int requests = 1u << 20;
module_param(requests, uint, 0444);
MODULE_PARM_DESC(requests, "decisions per round (1-16M)");
static unsigned int rounds = 5;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "rounds per variant, alternating (1-15)");

#define COST_PD		7
#define COST_QPN	0x11
#define COST_LEN	64
#define COST_MR_LEN	(1u << 20)
#define COST_HDRS	4096		/* distinct requests, reused in turn */
#define COST_HDR_LEN	(IBK_BTH_LEN + IBK_RETH_LEN)

/* An MR as rxe keeps what check_rkey() reads of it. */
struct cost_mr {
	struct kref ref;
	u32 rkey;
	u32 pd;
	int access;
	int state;
	u64 iova;
	u64 length;
};

static DEFINE_XARRAY(cost_xa);
static struct ibk_mr_table cost_table;
static struct ibk_mr_cell *cost_cells;
static struct cost_mr *cost_mrs;
static u8 (*cost_hdrs)[COST_HDR_LEN];

/* The MRs live as long as the module: the last reference frees nothing. */
static void cost_mr_release(struct kref *ref)
{
}

/* rxe_pool_get_index(): the object at @index, referenced, or NULL. */
static struct cost_mr *cost_get(u32 index)
{
	struct cost_mr *mr;

	rcu_read_lock();
	mr = xa_load(&cost_xa, index);
	if (mr && !kref_get_unless_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

static void cost_put(struct cost_mr *mr)
{
	kref_put(&mr->ref, cost_mr_release);
}

/* The stock decision on the request @hdr: true if granted. */
static bool cost_stock(const u8 *hdr)
{
	const u8 *reth = hdr + IBK_BTH_LEN;
	u64 va = ibk_reth_va(reth);
	u32 rkey = ibk_reth_rkey(reth);
	u32 len = ibk_reth_dma_len(reth);
	struct cost_mr *mr = cost_get(rkey >> 8);
	bool ok;

	if (!mr)
		return false;
	ok = mr->rkey == rkey && mr->pd == COST_PD &&
	     (mr->access & IBK_ACCESS_REMOTE_WRITE) &&
	     mr->state == IBK_MEM_VALID &&
	     !(va < mr->iova || len > mr->length ||
	       va > mr->iova + mr->length - len);
	cost_put(mr);
	return ok;
}

/* The table's decision on @hdr, arriving on @qp: true if granted. */
static bool cost_table_check(const struct ibk_mem_qp *qp, const u8 *hdr)
{
	u32 rkey = ibk_reth_rkey(hdr + IBK_BTH_LEN);
	struct cost_mr *mr;
	bool ok;

	if (ibk_mr_table_check(&cost_table, qp, hdr) != IBK_MEM_OK)
		return false;
	mr = cost_get(rkey >> 8);
	if (!mr)
		return false;
	ok = mr->rkey == rkey && mr->state == IBK_MEM_VALID;
	cost_put(mr);
	return ok;
}

/* One round of one variant: ns per request ×100, and the grants. */
static u64 cost_round(bool table, unsigned int *granted)
{
	const struct ibk_mem_qp qp = {
		.type = IBK_QPT_RC, .qpn = COST_QPN, .pd = COST_PD,
		.access = IBK_ACCESS_REMOTE,
	};
	unsigned int i, n = 0;
	u64 t0, t1;

	t0 = ktime_get_ns();
	for (i = 0; i < requests; i++) {
		const u8 *hdr = cost_hdrs[i % COST_HDRS];

		n += table ? cost_table_check(&qp, hdr) : cost_stock(hdr);
	}
	t1 = ktime_get_ns();
	*granted = n;
	return div_u64((t1 - t0) * 100, requests);
}

static int cost_cmp(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* The MRs, in the xarray and in the table, and the requests to them. */
static int cost_setup(void)
{
	struct ibk_mem_attr attr;
	unsigned int i;

	cost_mrs = vcalloc(objects, sizeof(*cost_mrs));
	cost_cells = vmalloc(array_size(IBK_MR_CELLS(objects + 1),
					sizeof(*cost_cells)));
	cost_hdrs = vmalloc(array_size(COST_HDRS, sizeof(*cost_hdrs)));
	if (!cost_mrs || !cost_cells || !cost_hdrs)
		return -ENOMEM;
	ibk_mr_table_init(&cost_table, cost_cells, objects + 1);
	for (i = 0; i < objects; i++) {
		struct cost_mr *mr = &cost_mrs[i];
		u32 index = i + 1;

		kref_init(&mr->ref);
		mr->rkey = ibk_rkey_make(index, get_random_u32() & 0xff);
		mr->pd = COST_PD;
		mr->access = IBK_ACCESS_LOCAL_WRITE | IBK_ACCESS_REMOTE_WRITE |
			     IBK_ACCESS_REMOTE_READ;
		mr->state = IBK_MEM_VALID;
		mr->iova = (u64)index << 32;
		mr->length = COST_MR_LEN;
		if (xa_err(xa_store(&cost_xa, index, mr, GFP_KERNEL)))
			return -ENOMEM;
		memset(&attr, 0, sizeof(attr));
		attr.addr = mr->iova;
		attr.length = mr->length;
		attr.rkey = mr->rkey;
		attr.pd = mr->pd;
		attr.access = mr->access;
		attr.kind = IBK_MEM_MR;
		if (ibk_mr_table_register(&cost_table, &attr) != IBK_MEMOP_OK)
			return -EINVAL;
	}
	for (i = 0; i < COST_HDRS; i++) {
		const struct cost_mr *mr = &cost_mrs[get_random_u32() % objects];
		u8 *hdr = cost_hdrs[i];

		memset(hdr, 0, COST_HDR_LEN);
		ibk_bth_set_opcode(hdr, IBK_OP_RDMA_WRITE_ONLY);
		ibk_bth_set_pkey(hdr, 0xffff);
		ibk_bth_set_dest_qp(hdr, COST_QPN);
		ibk_reth_set_va(hdr + IBK_BTH_LEN, mr->iova +
				get_random_u32() % (COST_MR_LEN - COST_LEN));
		ibk_reth_set_rkey(hdr + IBK_BTH_LEN, mr->rkey);
		ibk_reth_set_dma_len(hdr + IBK_BTH_LEN, COST_LEN);
	}
	return 0;
}

static void cost_free(void)
{
	xa_destroy(&cost_xa);
	vfree(cost_hdrs);
	vfree(cost_cells);
	vfree(cost_mrs);
}

static int __init ibk_rkey_cost_init(void)
{
	u64 stock[15], table[15];
	unsigned int r, granted;
	bool all = true;
	int err;

	if (objects < 1 || objects > 65536 || requests < 1 ||
	    requests > (1u << 24) || rounds < 1 || rounds > 15)
		return -EINVAL;
	err = cost_setup();
	if (err) {
		cost_free();
		return err;
	}
	for (r = 0; r < rounds; r++) {
		stock[r] = cost_round(false, &granted);
		all &= granted == requests;
		table[r] = cost_round(true, &granted);
		all &= granted == requests;
		pr_info("round %u: stock %llu.%02llu ns, table %llu.%02llu ns per request\n",
			r + 1, stock[r] / 100, stock[r] % 100, table[r] / 100,
			table[r] % 100);
	}
	sort(stock, rounds, sizeof(stock[0]), cost_cmp, NULL);
	sort(table, rounds, sizeof(table[0]), cost_cmp, NULL);
	pr_info("%s - every request granted by both (%u MRs, %u requests a round)\n",
		all ? "ok" : "not ok", objects, requests);
	pr_info("stock %llu.%02llu ns table %llu.%02llu ns per request, medians of %u rounds\n",
		stock[rounds / 2] / 100, stock[rounds / 2] % 100,
		table[rounds / 2] / 100, table[rounds / 2] % 100, rounds);
	return 0;
}
module_init(ibk_rkey_cost_init);

static void __exit ibk_rkey_cost_exit(void)
{
	cost_free();
}
module_exit(ibk_rkey_cost_exit);

MODULE_DESCRIPTION("ibkeys: a responder's R_Key decision, rxe's way and the table's, timed");
MODULE_LICENSE("Dual MIT/GPL");
