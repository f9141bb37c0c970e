// SPDX-License-Identifier: MIT
/*
 * ibk_fastreg - the rows of the negative table only a kernel consumer can
 * make: an MR fast-registered by a REG_MR work request, as the kernel's
 * storage and file ULPs register theirs (NFS over RDMA, iSER, NVMe over
 * RDMA), then invalidated. Userspace verbs have no REG_MR.
 *
 * On rxe1, the responder: a PD, a page, an MR of type IB_MR_TYPE_MEM_REG
 * mapped over it, and an RC QP that posts the REG_MR and LOCAL_INV work
 * requests; on rxe0, the requester: an RC QP and a page of its own. The two
 * QPs are connected by hand over RoCE v2, between the GIDs at the indices
 * gid0 and gid1 (tests/vm/stack-init passes them). Each row is an RDMA
 * WRITE of 64 bytes through a key: its completion status, and whether the
 * bytes landed. A refused request moves both QPs to the error state, so
 * the pair is reset and connected again before the next row.
 *
 * The kernel log gets "ibk_fastreg: neg: REQUEST | RULE | OUTCOME" for
 * each row, then "ibk_fastreg: ok - ..." or "not ok - ..." against the
 * outcome the rule asks for: the same for Linux 6.1's rxe (rxe_reg_fast_mr(),
 * rxe_invalidate_mr(), check_rkey()) and for the second series of
 * examples/rxe. Everything is set up, run and torn down at load; loading
 * succeeds whatever the outcome, so that the module unloads clean.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/string.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static int gid0 = -1;
module_param(gid0, int, 0444);
MODULE_PARM_DESC(gid0, "index of rxe0's RoCE v2 GID, the requester's");
static int gid1 = -1;
module_param(gid1, int, 0444);
MODULE_PARM_DESC(gid1, "index of rxe1's RoCE v2 GID, the responder's");

#define FR_PORT		1
#define FR_LEN		64
#define FR_WAIT_MS	20000		/* for one completion, under TCG */
#define FR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_WRITE)

/* One end: a device's PD, CQ and RC QP, a page, the GID it sends from. */
struct fr_end {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u8 *page;
	u64 dma;
	const struct ib_gid_attr *gid;
	u8 mac[ETH_ALEN];
};

static struct fr_end fr_req, fr_resp;
static struct ib_mr *fr_mr;
static struct scatterlist fr_sg;
static bool fr_sg_mapped;

/* The status of the next completion on @cq, or -ETIMEDOUT. */
static int fr_wait(struct ib_cq *cq)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(FR_WAIT_MS);
	struct ib_wc wc;

	do {
		if (ib_poll_cq(cq, 1, &wc) == 1)
			return wc.status;
		usleep_range(500, 1000);
	} while (time_before(jiffies, deadline));
	return -ETIMEDOUT;
}

/* Posts @wr, signaled, on @e's QP: its completion's status, or -errno. */
static int fr_post(struct fr_end *e, struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad;
	int rc;

	wr->send_flags = IB_SEND_SIGNALED;
	rc = ib_post_send(e->qp, wr, &bad);
	return rc ? rc : fr_wait(e->cq);
}

/* @e's QP from any state to RTS, connected to @peer's; remote access on. */
static int fr_connect_end(struct fr_end *e, const struct fr_end *peer)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };
	int rc = ib_modify_qp(e->qp, &a, IB_QP_STATE);

	if (rc)
		return rc;
	a.qp_state = IB_QPS_INIT;
	a.port_num = FR_PORT;
	a.qp_access_flags = IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE;
	rc = ib_modify_qp(e->qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			  IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (rc)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, FR_PORT);
	rdma_ah_set_grh(&a.ah_attr, (union ib_gid *)&peer->gid->gid, 0,
			e->gid->index, 64, 0);
	/* a kernel consumer resolves the destination MAC itself */
	memcpy(a.ah_attr.roce.dmac, peer->mac, ETH_ALEN);
	rc = ib_modify_qp(e->qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			  IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			  IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (rc)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 12;
	a.retry_cnt = 1;
	a.rnr_retry = 1;
	a.max_rd_atomic = 1;
	return ib_modify_qp(e->qp, &a, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			    IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC);
}

/* The pair from any state to RTS, each CQ emptied first. 0, or -errno. */
static int fr_connect(void)
{
	struct ib_wc wc;

	while (ib_poll_cq(fr_req.cq, 1, &wc) == 1 ||
	       ib_poll_cq(fr_resp.cq, 1, &wc) == 1)
		;
	return fr_connect_end(&fr_req, &fr_resp) ?:
	       fr_connect_end(&fr_resp, &fr_req);
}

static int fr_end_open(struct fr_end *e, const char *name, int gid_index)
{
	struct ib_qp_init_attr ia = {
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};

	e->dev = ib_device_get_by_name(name, RDMA_DRIVER_RXE);
	if (!e->dev)
		return -ENODEV;
	e->gid = rdma_get_gid_attr(e->dev, FR_PORT, gid_index);
	if (IS_ERR(e->gid)) {
		int rc = PTR_ERR(e->gid);

		e->gid = NULL;
		return rc;
	}
	if (rdma_read_gid_l2_fields(e->gid, NULL, e->mac))
		return -ENODEV;
	e->pd = ib_alloc_pd(e->dev, 0);
	if (IS_ERR(e->pd))
		return PTR_ERR(e->pd);
	e->cq = ib_alloc_cq(e->dev, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(e->cq))
		return PTR_ERR(e->cq);
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	e->qp = ib_create_qp(e->pd, &ia);
	if (IS_ERR(e->qp))
		return PTR_ERR(e->qp);
	e->page = (u8 *)get_zeroed_page(GFP_KERNEL);
	if (!e->page)
		return -ENOMEM;
	e->dma = ib_dma_map_single(e->dev, e->page, PAGE_SIZE,
				   DMA_BIDIRECTIONAL);
	return ib_dma_mapping_error(e->dev, e->dma) ? -ENOMEM : 0;
}

/* Frees what fr_end_open() got, whichever step it stopped at. */
static void fr_end_close(struct fr_end *e)
{
	if (!IS_ERR_OR_NULL(e->qp))
		ib_destroy_qp(e->qp);
	if (e->page) {
		if (!ib_dma_mapping_error(e->dev, e->dma))
			ib_dma_unmap_single(e->dev, e->dma, PAGE_SIZE,
					    DMA_BIDIRECTIONAL);
		free_page((unsigned long)e->page);
	}
	if (!IS_ERR_OR_NULL(e->cq))
		ib_free_cq(e->cq);
	if (!IS_ERR_OR_NULL(e->pd))
		ib_dealloc_pd(e->pd);
	if (e->gid)
		rdma_put_gid_attr(e->gid);
	if (e->dev)
		ib_device_put(e->dev);
}

/*
 * REG_MR of the responder's page under the MR's key with its low byte
 * advanced (ib_inc_rkey()), on the responder's QP: the status.
 */
static int fr_reg(void)
{
	struct ib_reg_wr wr = {
		.wr.opcode = IB_WR_REG_MR,
		.mr = fr_mr,
		.access = FR_ACCESS,
	};
	int n = ib_map_mr_sg(fr_mr, &fr_sg, 1, NULL, PAGE_SIZE);

	if (n != 1)
		return n < 0 ? n : -EINVAL;
	ib_update_fast_reg_key(fr_mr, ib_inc_rkey(fr_mr->rkey) & 0xff);
	wr.key = fr_mr->rkey;
	return fr_post(&fr_resp, &wr.wr);
}

/* LOCAL_INV of @key on the responder's QP: the status. */
static int fr_local_inv(u32 key)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV,
		.ex.invalidate_rkey = key,
	};

	return fr_post(&fr_resp, &wr);
}

/*
 * A SEND with Invalidate of @key from the requester, into a receive posted
 * on the responder: the receive's status.
 */
static int fr_send_inv(u32 key)
{
	struct ib_sge sge = {
		.addr = fr_resp.dma + PAGE_SIZE / 2,
		.length = FR_LEN,
		.lkey = fr_resp.pd->local_dma_lkey,
	};
	struct ib_recv_wr rw = { .sg_list = &sge, .num_sge = 1 };
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND_WITH_INV,
		.ex.invalidate_rkey = key,
	};
	const struct ib_recv_wr *bad;
	int rc = ib_post_recv(fr_resp.qp, &rw, &bad);

	if (rc)
		return rc;
	rc = fr_post(&fr_req, &wr);
	return rc ? rc : fr_wait(fr_resp.cq);
}

/*
 * An RDMA WRITE of FR_LEN bytes through @rkey to the start of the MR,
 * from a pair connected afresh: its status as ib_wc_status_msg() words it,
 * and ", the bytes landed" when a refused WRITE changed the page or ",
 * the bytes did not land" when a granted one did not. In @out.
 */
static void fr_write(u32 rkey, char *out, size_t size)
{
	struct ib_sge sge = {
		.addr = fr_req.dma,
		.length = FR_LEN,
		.lkey = fr_req.pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr.opcode = IB_WR_RDMA_WRITE,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.remote_addr = fr_mr->iova,
		.rkey = rkey,
	};
	bool landed;
	int rc;

	get_random_bytes(fr_req.page, FR_LEN);
	fr_req.page[0] |= 1;		/* never the zeroes already there */
	memset(fr_resp.page, 0, FR_LEN);
	rc = fr_connect();
	if (rc) {
		snprintf(out, size, "no RC pair (%d)", rc);
		return;
	}
	rc = fr_post(&fr_req, &wr.wr);
	landed = memcmp(fr_req.page, fr_resp.page, FR_LEN) == 0;
	if (rc < 0)
		snprintf(out, size, "no completion (%d)", rc);
	else
		snprintf(out, size, "%s%s", ib_wc_status_msg(rc),
			 rc == IB_WC_SUCCESS ?
			 (landed ? "" : ", the bytes did not land") :
			 (landed ? ", the bytes landed" : ""));
}

/* A row of the table, and its check against what the rule asks. */
static void fr_row(const char *request, const char *rule, const char *got,
		   const char *must)
{
	pr_info("neg: %s | %s | %s\n", request, rule, got);
	pr_info("%s - fast-reg: %s: %s (must be: %s)\n",
		strcmp(got, must) ? "not ok" : "ok", request, got, must);
}

/* A step the rows need, failed: reported as a check that fails. */
static bool fr_step(int rc, const char *what)
{
	if (rc)
		pr_info("not ok - fast-reg: %s: %s (%d)\n", what,
			rc > 0 ? ib_wc_status_msg(rc) : "refused", rc);
	return rc == 0;
}

static void fr_rows(void)
{
	char got[96], inv[96];
	u32 old;
	int rc;

	if (!fr_step(fr_connect(), "the RC pair rxe0 -> rxe1") ||
	    !fr_step(fr_reg(), "REG_MR"))
		return;
	fr_write(fr_mr->rkey, got, sizeof(got));
	fr_row("RDMA WRITE through an MR fast-registered by REG_MR",
	       "REG_MR makes a FREE fast-reg MR VALID under its new key",
	       got, "success");
	if (!fr_step(fr_local_inv(fr_mr->rkey), "LOCAL_INV of the MR"))
		return;
	fr_write(fr_mr->rkey, got, sizeof(got));
	fr_row("RDMA WRITE through a fast-reg MR after LOCAL_INV",
	       "an invalidated MR is FREE, grants nothing", got,
	       "remote access error");

	/* the refused WRITE left both QPs in the error state */
	old = fr_mr->rkey;
	if (!fr_step(fr_connect(), "the RC pair again") ||
	    !fr_step(fr_reg(), "REG_MR again, the key byte advanced"))
		return;
	fr_write(old, got, sizeof(got));
	fr_row("RDMA WRITE with the key a second REG_MR replaced",
	       "a fast-reg MR answers only the key of its last REG_MR", got,
	       "remote access error");
	fr_write(fr_mr->rkey, got, sizeof(got));
	fr_row("RDMA WRITE with the key of the second REG_MR",
	       "the new key grants as the first did", got, "success");

	/* fr_write() left the pair connected, the WRITE granted */
	rc = fr_send_inv(fr_mr->rkey);
	snprintf(inv, sizeof(inv), "%s", rc < 0 ? "no completion" :
		 ib_wc_status_msg(rc));
	fr_write(fr_mr->rkey, got, sizeof(got));
	strlcat(inv, ", then ", sizeof(inv));
	strlcat(inv, got, sizeof(inv));
	fr_row("SEND with Invalidate of a fast-reg MR of the QP's PD, then an RDMA WRITE through it",
	       "a peer may invalidate what its QP reaches; then it grants nothing",
	       inv, "success, then remote access error");
}

static int __init fr_init(void)
{
	int rc = fr_end_open(&fr_req, "rxe0", gid0) ?:
		 fr_end_open(&fr_resp, "rxe1", gid1);

	if (!rc) {
		fr_mr = ib_alloc_mr(fr_resp.pd, IB_MR_TYPE_MEM_REG, 1);
		rc = IS_ERR(fr_mr) ? PTR_ERR(fr_mr) : 0;
	}
	if (!rc) {
		sg_init_one(&fr_sg, fr_resp.page, PAGE_SIZE);
		fr_sg_mapped = ib_dma_map_sg(fr_resp.dev, &fr_sg, 1,
					     DMA_BIDIRECTIONAL) == 1;
		rc = fr_sg_mapped ? 0 : -ENOMEM;
	}
	if (fr_step(rc, "rxe0 and rxe1: PD, CQ, QP, page; the MR"))
		fr_rows();
	else
		pr_info("gid0=%d gid1=%d\n", gid0, gid1);

	/* the QPs first: they may hold the MR */
	if (!IS_ERR_OR_NULL(fr_req.qp))
		ib_destroy_qp(fr_req.qp);
	if (!IS_ERR_OR_NULL(fr_resp.qp))
		ib_destroy_qp(fr_resp.qp);
	fr_req.qp = fr_resp.qp = NULL;
	if (fr_sg_mapped)
		ib_dma_unmap_sg(fr_resp.dev, &fr_sg, 1, DMA_BIDIRECTIONAL);
	if (!IS_ERR_OR_NULL(fr_mr))
		ib_dereg_mr(fr_mr);
	fr_end_close(&fr_resp);
	fr_end_close(&fr_req);
	pr_info("done\n");
	return 0;
}

static void __exit fr_exit(void)
{
}

module_init(fr_init);
module_exit(fr_exit);
MODULE_DESCRIPTION("ibkeys: negative rows of a fast-registered MR, in rxe");
MODULE_LICENSE("Dual MIT/GPL");
