/* SPDX-License-Identifier: MIT */
/*
 * rxe_check - ibkeys against a real verbs device: Linux soft-RoCE (rdma_rxe)
 * inside the VM that tests/vm/run boots. Every verdict the library gives is
 * set beside what the kernel did with the same device, the same table, the
 * same packet.
 *
 *   rxe_check cache DEV NETDEV
 *	An ibk_port cache of DEV's port 1 follows the device through address
 *	changes, a MAC change, an address removal and a link flap made on
 *	NETDEV with iproute2: after every async event the cache's snapshot
 *	equals a fresh ibv_query_pkey()/ibv_query_gid_ex() read; a reference
 *	to an address GID's index goes stale when the MAC changes and
 *	find-by-GID returns its new index; a removed address leaves a hole
 *	the cache reports as empty.
 *   rxe_check gids DEV NETDEV
 *	DEV's GID table against what the library derives from NETDEV's MAC
 *	and addresses (ibk_gid_from_mac(), ibk_gid_from_ipv4(), IPv6 as is),
 *	entry by entry, with sysfs's view of each entry.
 *   rxe_check ud SEND_DEV RECV_DEV RECV_NETDEV
 *	UD sends from SEND_DEV to a UD QP and to QP1 of RECV_DEV: the Q_Key
 *	the kernel put on the wire (captured on RECV_NETDEV) against
 *	ibk_qkey_select(), and the library's receive verdict on the captured
 *	header against what the kernel did: passed its checks (rcvd_pkts)
 *	or not, delivered or not, and the port's qkey_viol_cntr before and
 *	after. One case sends as uid 65534. Needs root.
 *   rxe_check qkey DEV
 *	ibv_modify_qp() to free and controlled Q_Keys as root and as uid
 *	65534, with the kernel's privileged-qkey switch off and on, against
 *	ibk_qkey_may_set(). Needs root to start.
 *   rxe_check mem REQUESTER_DEV RESPONDER_DEV
 *	RC RDMA WRITE, READ and FETCH ADD from the first device to MRs and a
 *	type 2 window of the second, mirrored in an ibk_mr_table: a stale
 *	key byte, another PD, missing access, out of bounds, misalignment,
 *	the window from another QP, the iova + length wrap. The completion
 *	status the requester gets against the verdict of
 *	ibk_mr_table_check() on the same request; where rxe does otherwise
 *	(a window's range, a misaligned atomic), that is checked as noted.
 *   rxe_check neg stock|ibkeys
 *	The requests the rules refuse (and their edges), rxe0 -> rxe1, each
 *	outcome against what the named module must give: Debian's own
 *	rdma_rxe as its source behaves, or examples/rxe's as the rule says.
 *	Needs the addresses and neighbours tests/vm/stack-init sets.
 *   rxe_check race stock|ibkeys SECONDS
 *	One thread keeps RDMA WRITE and READ going, rxe0 -> rxe1, through
 *	keys another revokes and grants anew (an MR deregistered, a window
 *	unbound, a window deallocated): every completion success or remote
 *	access error, no byte written and no request granted once its key
 *	was revoked; the counts of each outcome.
 *
 * Output: TAP (tests/tap.h) with "# ..." lines giving the counts; the VM's
 * init runs several of these in a row and counts their "ok" lines.
 * Exit status: 0 every check passed, 1 some failed, 2 could not run.
 */
#define _GNU_SOURCE		/* setgroups(), if_nametoindex() */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include <infiniband/verbs.h>

#include "ib_tables.h"
#include "tap.h"

/*
 * The netlink attribute of the kernel's privileged_qkey setting: in the
 * uapi enum right after RDMA_NLDEV_ATTR_STAT_HWCOUNTER_DYNAMIC (upstream
 * 6.5, Debian's 6.1 from 6.1.192). Older linux-libc-dev headers lack the
 * name, so it is spelled here; where the header has it, the build checks
 * that the two agree.
 */
#define NLDEV_SYS_ATTR_PRIVILEGED_QKEY_MODE \
	(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_DYNAMIC + 1)
#ifdef HAVE_RDMA_NLDEV_SYS_ATTR_PRIVILEGED_QKEY_MODE
_Static_assert(NLDEV_SYS_ATTR_PRIVILEGED_QKEY_MODE ==
	       RDMA_NLDEV_SYS_ATTR_PRIVILEGED_QKEY_MODE,
	       "the privileged_qkey attribute moved in rdma_netlink.h");
#endif

#define PORT_NUM	1
#define EXIT_CANNOT_RUN	2

_Static_assert(sizeof(union ibv_gid) == sizeof(struct ibk_gid),
	       "struct ibk_gid is byte-compatible with union ibv_gid");

/* ------------------------------------------------------------------------
 * Reporting
 * ------------------------------------------------------------------------ */

/* Setup failures: on stderr (the console) and as one failed check. */
static int __attribute__((format(printf, 1, 2))) cannot_run(const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	fprintf(stderr, "rxe_check: %s\n", what);
	tap_ok(false, "%s", what);
	return EXIT_CANNOT_RUN;
}

static const char *gid_text(const struct ibk_gid *gid, char buf[IBK_GID_STRLEN])
{
	return ibk_gid_ntop(gid, buf);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Runs a shell command with its output on the console, not in the results. */
static int __attribute__((format(printf, 1, 2))) shell(const char *fmt, ...)
{
	char cmd[512], full[600];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "%s >&2", cmd);
	fprintf(stderr, "rxe_check: $ %s\n", cmd);
	rc = system(full);
	return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

static const char *ip_tool(void)
{
	const char *ip = getenv("IBK_IP");

	return ip ? ip : "/usr/sbin/ip";	/* iproute2's, not busybox's */
}

/* ------------------------------------------------------------------------
 * One device port and its ibkeys cache
 * ------------------------------------------------------------------------ */

struct dev {
	const char *name;
	struct ibv_context *ctx;
	uint32_t pkey_len, gid_len;
	struct ibk_port *port;			/* the cache */
	struct ibk_pkey_cell *pkey_cells;
	struct ibk_hash_slot *pkey_slots;
	struct ibk_gid_cell *gid_cells;
	struct ibk_hash_slot *gid_slots;
	ibk_pkey_t *pkeys;			/* a device read */
	struct ibk_gid_entry *gids;
	ibk_pkey_t *snap_pkeys;			/* a cache snapshot */
	struct ibk_gid_entry *snap_gids;
	unsigned refills, refills_refused;
};

static struct ibv_context *open_by_name(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (strcmp(ibv_get_device_name(list[i]), name) == 0)
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

static enum ibk_port_state state_from_verbs(enum ibv_port_state s)
{
	switch (s) {
	case IBV_PORT_INIT:		return IBK_PORT_INIT;
	case IBV_PORT_ARMED:		return IBK_PORT_ARMED;
	case IBV_PORT_ACTIVE:		return IBK_PORT_ACTIVE;
	case IBV_PORT_ACTIVE_DEFER:	return IBK_PORT_ACTIVE_DEFER;
	default:			return IBK_PORT_DOWN;
	}
}

/* The device's P_Key table, host order. 0 or an errno. */
static int read_pkeys(const struct dev *d, ibk_pkey_t *out)
{
	uint32_t i;

	for (i = 0; i < d->pkey_len; i++) {
		__be16 wire;

		if (ibv_query_pkey(d->ctx, PORT_NUM, (int)i, &wire) != 0)
			return errno ? errno : EIO;
		out[i] = ntohs(wire);
	}
	return 0;
}

/* The device's GID table, one ibv_query_gid_ex() per index; an empty
 * index (ENODATA) as the zero GID. 0 or an errno. */
static int read_gids(const struct dev *d, struct ibk_gid_entry *out,
		     uint32_t *ifindex)
{
	uint32_t i;

	for (i = 0; i < d->gid_len; i++) {
		struct ibv_gid_entry e;
		int err = ibv_query_gid_ex(d->ctx, PORT_NUM, i, &e, 0);

		memset(&out[i], 0, sizeof(out[i]));
		out[i].type = IBK_GID_TYPE_IB;
		if (ifindex)
			ifindex[i] = 0;
		if (err == ENODATA)
			continue;
		if (err)
			return err;
		memcpy(out[i].gid.raw, e.gid.raw, 16);
		out[i].type = (enum ibk_gid_type)e.gid_type;
		if (ifindex)
			ifindex[i] = e.ndev_ifindex;
	}
	return 0;
}

/* The consumer's refills: a ticket, then the device read, then the
 * refill, again while a change event makes the refill refuse the read. */
static int refill_pkeys(struct dev *d)
{
	int rc, err, tries;

	for (tries = 0; tries < 50; tries++) {
		uint32_t ticket = ibk_pkey_table_refill_ticket(&d->port->pkeys);

		err = read_pkeys(d, d->pkeys);
		if (err)
			return -err;
		rc = ibk_pkey_table_refill(&d->port->pkeys, d->pkeys,
					   d->pkey_len, ticket);
		d->refills++;
		if (rc != IBK_ESTALE)
			return rc;
		d->refills_refused++;
	}
	return IBK_ESTALE;
}

static int refill_gids(struct dev *d)
{
	int rc, err, tries;

	for (tries = 0; tries < 50; tries++) {
		uint32_t ticket = ibk_gid_table_refill_ticket(&d->port->gids);

		err = read_gids(d, d->gids, NULL);
		if (err)
			return -err;
		rc = ibk_gid_table_refill(&d->port->gids, d->gids, d->gid_len,
					  ticket);
		d->refills++;
		if (rc != IBK_ESTALE)
			return rc;
		d->refills_refused++;
	}
	return IBK_ESTALE;
}

static int dev_set_state(struct dev *d)
{
	struct ibv_port_attr attr;

	if (ibv_query_port(d->ctx, PORT_NUM, &attr))
		return -1;
	return ibk_port_set_state(d->port, state_from_verbs(attr.state)) ==
	       IBK_OK ? 0 : -1;
}

/* Opens @name, sizes and fills its cache. 0, or -1 reported. */
static int dev_open(struct dev *d, const char *name)
{
	struct ibv_port_attr attr;
	uint32_t pc, gc;

	memset(d, 0, sizeof(*d));
	d->name = name;
	d->ctx = open_by_name(name);
	if (!d->ctx)
		return cannot_run("open device %s: %s", name, strerror(errno));
	if (ibv_query_port(d->ctx, PORT_NUM, &attr))
		return cannot_run("ibv_query_port %s", name);
	d->pkey_len = attr.pkey_tbl_len;
	d->gid_len = (uint32_t)attr.gid_tbl_len;
	pc = d->pkey_len ? d->pkey_len : 1;
	gc = d->gid_len ? d->gid_len : 1;
	d->port = calloc(1, sizeof(*d->port));
	d->pkey_cells = calloc(IBK_PKEY_CELLS(pc), sizeof(*d->pkey_cells));
	d->pkey_slots = calloc(IBK_PKEY_HASH_SLOTS(pc), sizeof(*d->pkey_slots));
	d->gid_cells = calloc(IBK_GID_CELLS(gc), sizeof(*d->gid_cells));
	d->gid_slots = calloc(IBK_HASH_SLOTS(gc), sizeof(*d->gid_slots));
	d->pkeys = calloc(pc, sizeof(*d->pkeys));
	d->snap_pkeys = calloc(pc, sizeof(*d->snap_pkeys));
	d->gids = calloc(gc, sizeof(*d->gids));
	d->snap_gids = calloc(gc, sizeof(*d->snap_gids));
	if (!d->port || !d->pkey_cells || !d->pkey_slots || !d->gid_cells ||
	    !d->gid_slots || !d->pkeys || !d->snap_pkeys || !d->gids ||
	    !d->snap_gids)
		return cannot_run("out of memory");
	if (ibk_port_init(d->port, d->pkey_cells, pc, d->pkey_slots,
			  IBK_PKEY_HASH_SLOTS(pc), d->gid_cells, gc,
			  d->gid_slots, IBK_HASH_SLOTS(gc)) != IBK_OK)
		return cannot_run("ibk_port_init %s (P_Keys %u, GIDs %u)",
				  name, pc, gc);
	/* the state first: entering ACTIVE is a change event, which a
	 * refill from before it would not survive */
	if (dev_set_state(d) != 0 || refill_pkeys(d) != IBK_OK ||
	    refill_gids(d) != IBK_OK)
		return cannot_run("fill the cache of %s", name);
	return 0;
}

/* Index of @gid in the device's table (a fresh read), or -1. */
static int device_gid_index(const struct dev *d, const struct ibk_gid *gid)
{
	uint32_t i;

	for (i = 0; i < d->gid_len; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(d->ctx, PORT_NUM, i, &e, 0) == 0 &&
		    memcmp(e.gid.raw, gid->raw, 16) == 0)
			return (int)i;
	}
	return -1;
}

static struct ibk_gid gid_of_ipv4_text(const char *text)
{
	struct in_addr a;

	inet_pton(AF_INET, text, &a);
	return ibk_gid_from_ipv4(ntohl(a.s_addr));
}

static struct ibk_gid gid_of_ipv6_text(const char *text)
{
	struct ibk_gid g;

	ibk_gid_pton(text, &g);
	return g;
}

/* ------------------------------------------------------------------------
 * cache: the cache follows the device through its events
 * ------------------------------------------------------------------------ */

enum cmp_result { CMP_EQUAL, CMP_DOWN_AGREES, CMP_DIFFERS };

struct cache_stats {
	unsigned events, gid_change, port_err, port_active, other;
	unsigned compared, equal, down_agrees, superseded, differs;
};

/*
 * The cache against the device: every P_Key and GID entry of a snapshot
 * against a fresh read. While the port is not ARMED/ACTIVE the cache must
 * answer IBK_ENOTREADY and the device must say so too.
 */
static enum cmp_result compare_with_device(struct dev *d, bool verbose)
{
	struct ibv_port_attr attr;
	char a[IBK_GID_STRLEN], b[IBK_GID_STRLEN];
	int np, ng, err;
	uint32_t i;
	unsigned diffs = 0;

	if (ibv_query_port(d->ctx, PORT_NUM, &attr))
		return CMP_DIFFERS;
	np = ibk_pkey_table_snapshot(&d->port->pkeys,
				     d->pkey_len ? d->pkey_len : 1,
				     d->snap_pkeys, NULL);
	ng = ibk_gid_table_snapshot(&d->port->gids,
				    d->gid_len ? d->gid_len : 1,
				    d->snap_gids, NULL);
	if (attr.state != IBV_PORT_ACTIVE && attr.state != IBV_PORT_ARMED)
		return np == IBK_ENOTREADY && ng == IBK_ENOTREADY ?
		       CMP_DOWN_AGREES : CMP_DIFFERS;
	if (np < 0 || ng < 0) {
		if (verbose)
			tap_diag("  cache answers %s / %s with the port %s",
			     ibk_strerror(np), ibk_strerror(ng),
			     ibv_port_state_str(attr.state));
		return CMP_DIFFERS;
	}
	err = read_pkeys(d, d->pkeys);
	if (!err)
		err = read_gids(d, d->gids, NULL);
	if (err)
		return CMP_DIFFERS;
	for (i = 0; i < d->pkey_len; i++) {
		if (d->pkeys[i] == d->snap_pkeys[i])
			continue;
		if (verbose && diffs++ < 4)
			tap_diag("  pkey[%u]: cache 0x%04x, device 0x%04x", i,
			     d->snap_pkeys[i], d->pkeys[i]);
	}
	for (i = 0; i < d->gid_len; i++) {
		bool zero = ibk_gid_is_zero(&d->gids[i].gid);

		if (ibk_gid_equal(&d->gids[i].gid, &d->snap_gids[i].gid) &&
		    (zero || d->gids[i].type == d->snap_gids[i].type))
			continue;
		if (verbose && diffs++ < 8)
			tap_diag("  gid[%u]: cache %s, device %s", i,
			     gid_text(&d->snap_gids[i].gid, a),
			     gid_text(&d->gids[i].gid, b));
		else
			diffs++;
	}
	return diffs ? CMP_DIFFERS : CMP_EQUAL;
}

static bool port_event_kind(enum ibv_event_type t, enum ibk_event_type *k)
{
	switch (t) {
	case IBV_EVENT_PORT_ACTIVE:	*k = IBK_EVENT_PORT_ACTIVE; return true;
	case IBV_EVENT_PORT_ERR:	*k = IBK_EVENT_PORT_ERR; return true;
	case IBV_EVENT_LID_CHANGE:	*k = IBK_EVENT_LID_CHANGE; return true;
	case IBV_EVENT_PKEY_CHANGE:	*k = IBK_EVENT_PKEY_CHANGE; return true;
	case IBV_EVENT_SM_CHANGE:	*k = IBK_EVENT_SM_CHANGE; return true;
	case IBV_EVENT_CLIENT_REREGISTER:
		*k = IBK_EVENT_CLIENT_REREGISTER;
		return true;
	case IBV_EVENT_GID_CHANGE:	*k = IBK_EVENT_GID_CHANGE; return true;
	default:			return false;
	}
}

/* As a consumer does: the cache first, then the re-reads it asks for. */
static void handle_event(struct dev *d, const struct ibv_async_event *ev,
			 struct cache_stats *st)
{
	enum ibk_event_type kind;
	struct ibk_gid_entry e;
	ibk_pkey_t k;

	st->events++;
	switch (ev->event_type) {
	case IBV_EVENT_GID_CHANGE:	st->gid_change++; break;
	case IBV_EVENT_PORT_ERR:	st->port_err++; break;
	case IBV_EVENT_PORT_ACTIVE:	st->port_active++; break;
	default:			st->other++; break;
	}
	if (!port_event_kind(ev->event_type, &kind))
		return;
	ibk_port_event(d->port, kind);
	if (ibk_pkey_table_get(&d->port->pkeys, 0, &k) == IBK_ESTALE)
		refill_pkeys(d);
	if (ibk_gid_table_get(&d->port->gids, 0, &e) == IBK_ESTALE)
		refill_gids(d);
}

/*
 * Handles the events a change brings: waits up to @first_ms for the first,
 * then until @quiet_ms pass without one. After each event the cache is
 * compared with the device. A difference counts only if no later event
 * explains it: the kernel sends GID_CHANGE after every change to the
 * table, so a read that raced a change is always followed by an event.
 * Returns the number of events.
 */
static unsigned settle(struct dev *d, unsigned first_ms, unsigned quiet_ms,
		       struct cache_stats *st)
{
	struct pollfd pfd = { d->ctx->async_fd, POLLIN, 0 };
	unsigned n = 0, wait = first_ms;
	bool pending_diff = false;

	for (;;) {
		struct ibv_async_event ev;
		enum cmp_result r;

		if (poll(&pfd, 1, (int)wait) <= 0)
			break;
		if (ibv_get_async_event(d->ctx, &ev) != 0)
			break;
		if (pending_diff) {
			st->superseded++;
			pending_diff = false;
		}
		handle_event(d, &ev, st);
		ibv_ack_async_event(&ev);
		n++;
		r = compare_with_device(d, false);
		st->compared++;
		if (r == CMP_EQUAL)
			st->equal++;
		else if (r == CMP_DOWN_AGREES)
			st->down_agrees++;
		else
			pending_diff = true;
		wait = quiet_ms;
	}
	if (pending_diff) {
		st->differs++;
		compare_with_device(d, true);
	}
	return n;
}

/* One change made with iproute2, its events, and the comparison. */
static bool step(struct dev *d, struct cache_stats *st, const char *what,
		 const char *args)
{
	struct cache_stats before = *st;
	unsigned n;
	int rc = shell("%s %s", ip_tool(), args);

	if (!tap_ok(rc == 0, "cache: `ip %s` (%s)", args, what))
		return false;
	n = settle(d, 5000, 1500, st);
	return tap_ok(n > 0 && st->differs == before.differs,
		     "cache: after `ip %s`: %u events (GID_CHANGE %u, PORT_ERR %u, PORT_ACTIVE %u), the cache equals a fresh device read after each (%u equal, %u port-down agreements, %u superseded by a later event, %u differ)",
		     args, n, st->gid_change - before.gid_change,
		     st->port_err - before.port_err,
		     st->port_active - before.port_active,
		     st->equal - before.equal,
		     st->down_agrees - before.down_agrees,
		     st->superseded - before.superseded,
		     st->differs - before.differs);
}

/* Cache and device agree on where @gid is: the index find returns. */
static int check_found_at_device_index(struct dev *d, const struct ibk_gid *gid,
				       const char *when)
{
	char t[IBK_GID_STRLEN];
	int found = ibk_gid_table_find(&d->port->gids, gid, IBK_GID_TYPE_ANY,
				       NULL);
	int dev_index = device_gid_index(d, gid);

	tap_ok(found >= 0 && found == dev_index,
	      "cache: %s: find-by-GID %s returns index %d, the kernel's index %d",
	      when, gid_text(gid, t), found, dev_index);
	return found;
}

static int read_mac(const char *netdev, uint8_t mac[6])
{
	char path[128];
	unsigned m[6];
	FILE *f;
	int n, i;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", netdev);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fscanf(f, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4],
		   &m[5]);
	fclose(f);
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)m[i];
	return n == 6 ? 0 : -1;
}

static int cmd_cache(const char *devname, const char *netdev)
{
	struct ibk_gid v4 = gid_of_ipv4_text("192.0.2.1");
	struct ibk_gid v6 = gid_of_ipv6_text("2001:db8::1");
	struct ibk_gid_entry e, before_del[64];
	struct ibk_gid_ref ref4 = { 0 };	/* its index is reported even if
						 * ref_find fails */
	struct cache_stats st;
	char args[160], t[IBK_GID_STRLEN], t2[IBK_GID_STRLEN];
	uint8_t mac[6];
	struct dev d;
	int idx4, idx6, new4, old_at, rc, i, moved;
	double t0 = now_s();

	memset(&st, 0, sizeof(st));
	if (dev_open(&d, devname))
		return EXIT_CANNOT_RUN;
	fcntl(d.ctx->async_fd, F_SETFL,
	      fcntl(d.ctx->async_fd, F_GETFL) | O_NONBLOCK);
	tap_diag("cache: %s port %d: P_Key table %u, GID table %u entries",
	     devname, PORT_NUM, d.pkey_len, d.gid_len);
	tap_ok(compare_with_device(&d, true) == CMP_EQUAL,
	      "cache: the filled cache equals a fresh device read");

	/* IPv6 first: the kernel re-adds IPv4 addresses first when it
	 * rebuilds the table, so the IPv4 GID changes index with the MAC. */
	snprintf(args, sizeof(args),
		 "addr add 2001:db8::1/64 dev %s nodad", netdev);
	step(&d, &st, "an IPv6 address", args);
	snprintf(args, sizeof(args), "addr add 192.0.2.1/24 dev %s", netdev);
	step(&d, &st, "an IPv4 address", args);
	idx6 = check_found_at_device_index(&d, &v6, "IPv6 address added");
	idx4 = check_found_at_device_index(&d, &v4, "IPv4 address added");

	/* The stale-GID-index hazard: hold the index across a MAC change. */
	rc = ibk_gid_table_ref_find(&d.port->gids, &v4, IBK_GID_TYPE_ROCE_V2,
				    &ref4);
	tap_ok(rc == IBK_OK && ibk_gid_table_ref_fresh(&d.port->gids, &ref4),
	      "cache: reference to %s at index %d taken, fresh",
	      gid_text(&v4, t), idx4);
	snprintf(args, sizeof(args), "link set %s address 02:00:00:00:00:a1",
		 netdev);
	step(&d, &st, "a new MAC", args);
	tap_ok(!ibk_gid_table_ref_fresh(&d.port->gids, &ref4),
	      "cache: after the MAC change the reference to index %u reads stale",
	      (unsigned)ref4.index);
	new4 = check_found_at_device_index(&d, &v4, "after the MAC change");
	old_at = rc == IBK_OK ? (int)ref4.index : -1;
	if (new4 >= 0 && new4 != old_at) {
		struct ibv_gid_entry ge;
		int err = ibv_query_gid_ex(d.ctx, PORT_NUM, (uint32_t)old_at,
					   &ge, 0);
		struct ibk_gid now;

		memcpy(now.raw, ge.gid.raw, 16);
		tap_diag("cache: the kernel moved %s from index %d to %d; index %d now holds %s",
		     gid_text(&v4, t), old_at, new4, old_at,
		     err == ENODATA ? "nothing" : gid_text(&now, t2));
		tap_ok(err == ENODATA || !ibk_gid_equal(&now, &v4),
		      "cache: the old index %d no longer holds the address GID in the kernel: a stale index would address another GID",
		      old_at);
	} else {
		tap_diag("cache: the kernel kept %s at index %d across the MAC change",
		     gid_text(&v4, t), new4);
	}
	if (read_mac(netdev, mac) == 0) {
		struct ibk_gid mg = ibk_gid_from_mac(mac);

		tap_ok(ibk_gid_table_get(&d.port->gids, 0, &e) == IBK_OK &&
		      ibk_gid_equal(&e.gid, &mg),
		      "cache: gid[0] is the new MAC's GID %s",
		      gid_text(&mg, t));
	}

	/* A removed address leaves a hole; nothing else moves. */
	idx6 = ibk_gid_table_find(&d.port->gids, &v6, IBK_GID_TYPE_ANY, NULL);
	for (i = 0; i < 64 && (uint32_t)i < d.gid_len; i++)
		if (ibk_gid_table_get(&d.port->gids, (uint32_t)i,
				      &before_del[i]) != IBK_OK)
			memset(&before_del[i], 0, sizeof(before_del[i]));
	snprintf(args, sizeof(args), "addr del 2001:db8::1/64 dev %s", netdev);
	step(&d, &st, "remove the IPv6 address", args);
	if (idx6 >= 0) {
		struct ibv_gid_entry ge;
		int err = ibv_query_gid_ex(d.ctx, PORT_NUM, (uint32_t)idx6,
					   &ge, 0);

		rc = ibk_gid_table_get(&d.port->gids, (uint32_t)idx6, &e);
		tap_ok(err == ENODATA && rc == IBK_ENOENT,
		      "cache: the removed address leaves a hole at index %d: the kernel answers %s, the cache %s",
		      idx6, err == ENODATA ? "ENODATA" : strerror(err),
		      ibk_strerror(rc));
		tap_ok(ibk_gid_table_find(&d.port->gids, &v6, IBK_GID_TYPE_ANY,
					 NULL) == IBK_ENOENT,
		      "cache: find-by-GID of the removed address: IBK_ENOENT");
	} else {
		tap_ok(false, "cache: the IPv6 address GID was in the table before removal");
	}
	for (i = 0, moved = 0; i < 64 && (uint32_t)i < d.gid_len; i++) {
		if (i == idx6 || ibk_gid_is_zero(&before_del[i].gid))
			continue;
		if (ibk_gid_table_get(&d.port->gids, (uint32_t)i, &e) != IBK_OK ||
		    !ibk_gid_equal(&e.gid, &before_del[i].gid))
			moved++;
	}
	tap_ok(moved == 0,
	      "cache: no other GID changed index when the address went (%d moved)",
	      moved);

	/* A link flap: down drops the address GIDs and the tables mean
	 * nothing; up brings the addresses back, maybe elsewhere. */
	snprintf(args, sizeof(args), "link set %s down", netdev);
	step(&d, &st, "link down", args);
	rc = ibk_gid_table_get(&d.port->gids, 0, &e);
	tap_ok(rc == IBK_ENOTREADY && st.port_err > 0,
	      "cache: link down: PORT_ERR seen (%u), reads answer %s",
	      st.port_err, ibk_strerror(rc));
	if (read_gids(&d, d.gids, NULL) == 0) {
		char list[256] = "";
		unsigned left = 0;
		uint32_t j;

		for (j = 0; j < d.gid_len; j++) {
			size_t len = strlen(list);

			if (ibk_gid_is_zero(&d.gids[j].gid))
				continue;
			left++;
			snprintf(list + len, sizeof(list) - len, " [%u] %s", j,
				 gid_text(&d.gids[j].gid, t));
		}
		tap_diag("cache: while the link is down the kernel's table holds %u GIDs:%s",
		     left, list);
	}
	snprintf(args, sizeof(args), "link set %s up", netdev);
	step(&d, &st, "link up", args);
	tap_ok(st.port_active > 0 && compare_with_device(&d, true) == CMP_EQUAL,
	      "cache: link up: PORT_ACTIVE seen (%u), cache equals the device",
	      st.port_active);
	check_found_at_device_index(&d, &v4, "after the link flap");

	tap_diag("cache: %u events (GID_CHANGE %u, PORT_ERR %u, PORT_ACTIVE %u, other %u); %u comparisons: %u equal, %u port-down agreements, %u superseded, %u differ; %u refills, %u refused (IBK_ESTALE) and redone; %.1f s",
	     st.events, st.gid_change, st.port_err, st.port_active, st.other,
	     st.compared, st.equal, st.down_agrees, st.superseded, st.differs,
	     d.refills, d.refills_refused, now_s() - t0);
	tap_ok(st.differs == 0 && st.compared == st.events,
	      "cache: %u of %u comparisons after events agree with the device",
	      st.equal + st.down_agrees + st.superseded, st.compared);
	return tap_done();
}

/* ------------------------------------------------------------------------
 * gids: the kernel's GID table against the library's derivation
 * ------------------------------------------------------------------------ */

#define MAX_DERIVED 32

struct derived {
	struct ibk_gid gid;
	char from[64];
	unsigned seen;
};

static unsigned add_derived(struct derived *d, unsigned n,
			    const struct ibk_gid *gid, const char *from)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (ibk_gid_equal(&d[i].gid, gid))
			return n;	/* an EUI-64 link-local equals the MAC's */
	if (n == MAX_DERIVED)
		return n;
	d[n].gid = *gid;
	snprintf(d[n].from, sizeof(d[n].from), "%s", from);
	d[n].seen = 0;
	return n + 1;
}

/* NETDEV's IPv4 addresses, with `ip -4 -o addr show`. */
static unsigned derive_ipv4(const char *netdev, struct derived *d, unsigned n)
{
	char cmd[160], line[256];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s -4 -o addr show dev %s", ip_tool(),
		 netdev);
	p = popen(cmd, "r");
	if (!p)
		return n;
	while (fgets(line, sizeof(line), p)) {
		char *s = strstr(line, " inet "), from[64];
		struct ibk_gid g;
		char addr[32];

		if (!s || sscanf(s, " inet %31[0-9.]", addr) != 1)
			continue;
		snprintf(from, sizeof(from), "IPv4 %s", addr);
		g = gid_of_ipv4_text(addr);
		n = add_derived(d, n, &g, from);
	}
	pclose(p);
	return n;
}

/* NETDEV's IPv6 addresses, from /proc/net/if_inet6, skipping those DAD
 * has not finished with (the kernel lists only usable addresses). */
static unsigned derive_ipv6(const char *netdev, struct derived *d, unsigned n)
{
	char hex[33], name[IFNAMSIZ + 1], line[256];
	unsigned ifindex, plen, scope, flags;
	FILE *f = fopen("/proc/net/if_inet6", "r");

	if (!f)
		return n;
	while (fgets(line, sizeof(line), f)) {
		struct ibk_gid g;
		char text[IBK_GID_STRLEN], from[80];
		int i;

		if (sscanf(line, "%32s %x %x %x %x %16s", hex, &ifindex, &plen,
			   &scope, &flags, name) != 6 ||
		    strcmp(name, netdev) != 0 || (flags & 0x48))
			continue;	/* IFA_F_TENTATIVE | IFA_F_DADFAILED */
		for (i = 0; i < 16; i++) {
			unsigned byte;

			sscanf(hex + 2 * i, "%2x", &byte);
			g.raw[i] = (uint8_t)byte;
		}
		snprintf(from, sizeof(from), "IPv6 %s", gid_text(&g, text));
		n = add_derived(d, n, &g, from);
	}
	fclose(f);
	return n;
}

/* sysfs's text for one entry: gids/N, gid_attrs/types/N, gid_attrs/ndevs/N. */
static bool sysfs_entry(const char *dev, uint32_t i, char *gid, char *type,
			char *ndev)
{
	const char *what[3] = { "gids", "gid_attrs/types", "gid_attrs/ndevs" };
	char *out[3] = { gid, type, ndev };
	int k;

	for (k = 0; k < 3; k++) {
		char path[160];
		FILE *f;

		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/%d/%s/%u", dev,
			 PORT_NUM, what[k], i);
		out[k][0] = '\0';
		f = fopen(path, "r");
		if (!f)
			return false;
		if (!fgets(out[k], 64, f))
			out[k][0] = '\0';
		fclose(f);
		out[k][strcspn(out[k], "\n")] = '\0';
	}
	return true;
}

static int cmd_gids(const char *devname, const char *netdev)
{
	struct derived want[MAX_DERIVED];
	struct ibk_gid_entry *table;
	uint32_t *ifindex, i, entries = 0, matched = 0, sysfs_ok = 0;
	unsigned n = 0, k, missing = 0, v4 = 0, v6 = 0;
	unsigned netdev_index = if_nametoindex(netdev);
	uint8_t mac[6];
	char t[IBK_GID_STRLEN], from[64];
	struct dev d;
	int err;

	if (dev_open(&d, devname))
		return EXIT_CANNOT_RUN;
	if (read_mac(netdev, mac) != 0)
		return cannot_run("read the MAC of %s", netdev);
	{
		struct ibk_gid g = ibk_gid_from_mac(mac);

		snprintf(from, sizeof(from), "MAC %02x:%02x:%02x:%02x:%02x:%02x",
			 mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
		n = add_derived(want, n, &g, from);
	}
	n = derive_ipv4(netdev, want, n);
	n = derive_ipv6(netdev, want, n);
	table = calloc(d.gid_len, sizeof(*table));
	ifindex = calloc(d.gid_len, sizeof(*ifindex));
	if (!table || !ifindex)
		return cannot_run("out of memory");
	err = read_gids(&d, table, ifindex);
	if (err)
		return cannot_run("ibv_query_gid_ex: %s", strerror(err));

	tap_ok(ibk_gid_equal(&table[0].gid, &want[0].gid),
	      "gids: gid[0] %s is the GID the library derives from the %s",
	      gid_text(&table[0].gid, t), want[0].from);
	for (i = 0; i < d.gid_len; i++) {
		char sg[64], sty[64], snd[64], sysfs_gid_text[64];
		struct ibk_gid sysfs_gid;
		bool ok = false;

		if (ibk_gid_is_zero(&table[i].gid))
			continue;
		entries++;
		for (k = 0; k < n; k++) {
			if (!ibk_gid_equal(&want[k].gid, &table[i].gid))
				continue;
			want[k].seen++;
			ok = table[i].type == IBK_GID_TYPE_ROCE_V2 &&
			     ifindex[i] == netdev_index;
			tap_diag("gids:   [%u] %s RoCE v%d ifindex %u <- %s", i,
			     gid_text(&table[i].gid, t),
			     table[i].type == IBK_GID_TYPE_ROCE_V2 ? 2 : 1,
			     ifindex[i], want[k].from);
			v4 += strncmp(want[k].from, "IPv4", 4) == 0;
			v6 += strncmp(want[k].from, "IPv6", 4) == 0;
			break;
		}
		if (k == n)
			tap_diag("gids:   [%u] %s: derived from nothing on %s", i,
			     gid_text(&table[i].gid, t), netdev);
		matched += ok;
		/* sysfs, where `ibkeys port` reads, says the same */
		if (sysfs_entry(devname, i, sg, sty, snd) &&
		    ibk_gid_pton(sg, &sysfs_gid) == 0 &&
		    ibk_gid_equal(&sysfs_gid, &table[i].gid) &&
		    strcmp(sty, "RoCE v2") == 0 && strcmp(snd, netdev) == 0 &&
		    strcmp(ibk_gid_ntop_full(&table[i].gid, sysfs_gid_text),
			   sg) == 0)
			sysfs_ok++;
	}
	for (k = 0; k < n; k++)
		if (want[k].seen != 1) {
			missing++;
			tap_diag("gids: %s (%s) appears %u times in the kernel's table",
			     gid_text(&want[k].gid, t), want[k].from,
			     want[k].seen);
		}
	tap_diag("gids: kernel %u entries, library derived %u (MAC 1, IPv4 %u, IPv6 %u): %u equal, %u derived but absent or repeated",
	     entries, n, v4, v6, matched, missing);
	tap_ok(matched == entries && missing == 0 && entries == n,
	      "gids: every kernel entry is one the library derives from %s's MAC and addresses, RoCE v2 on %s, and every derived GID is there once (%u of %u)",
	      netdev, netdev, matched, entries);
	tap_ok(sysfs_ok == entries,
	      "gids: sysfs gids/N (full form of ibk_gid_ntop_full), gid_attrs/types/N and gid_attrs/ndevs/N agree for %u of %u entries",
	      sysfs_ok, entries);
	free(table);
	free(ifindex);
	return tap_done();
}

/* ------------------------------------------------------------------------
 * ud: UD packets between two soft-RoCE ports, verdicts against the kernel
 * ------------------------------------------------------------------------ */

#define UD_SEND_ADDR	"192.0.2.1"	/* what tests/vm/init gives the ports */
#define UD_RECV_ADDR	"192.0.2.2"
#define UD_PAYLOAD	32
#define UD_BUF		(40 + 256)	/* a UD receive starts with the GRH */
#define ROCE_V2_PORT	4791

struct ud_end {
	struct dev d;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
};

static struct ibv_qp *ud_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			    ibk_qkey_t qkey, int *err)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct ibv_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.cap.max_send_wr = 16;
	ia.cap.max_recv_wr = 16;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.qp_type = IBV_QPT_UD;
	qp = ibv_create_qp(pd, &ia);
	if (!qp) {
		*err = errno;
		return NULL;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = PORT_NUM;
	a.qkey = qkey;
	*err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				     IBV_QP_PORT | IBV_QP_QKEY);
	if (*err)
		return qp;
	a.qp_state = IBV_QPS_RTR;
	*err = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	if (*err)
		return qp;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	*err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	return qp;
}

static int set_qkey(struct ibv_qp *qp, ibk_qkey_t qkey)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qkey = qkey;
	return ibv_modify_qp(qp, &a, IBV_QP_QKEY);
}

static int ud_end_open(struct ud_end *u, const char *name)
{
	int err;

	if (dev_open(&u->d, name))
		return -1;
	u->pd = ibv_alloc_pd(u->d.ctx);
	u->cq = u->pd ? ibv_create_cq(u->d.ctx, 64, NULL, NULL, 0) : NULL;
	u->buf = calloc(16, UD_BUF);
	u->mr = u->pd && u->buf ? ibv_reg_mr(u->pd, u->buf, 16 * UD_BUF,
					      IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!u->mr || !u->cq)
		return cannot_run("PD, CQ or MR on %s: %s", name,
				  strerror(errno));
	u->qp = ud_qp(u->pd, u->cq, 0x1234, &err);
	if (!u->qp || err)
		return cannot_run("UD QP to RTS on %s: %s", name,
				  strerror(err));
	return 0;
}

/* Waits until @deadline for one completion of @opcode on @cq. */
static bool wait_cqe(struct ibv_cq *cq, enum ibv_wc_opcode opcode,
		     double deadline, struct ibv_wc *out)
{
	do {
		struct ibv_wc wc;

		while (ibv_poll_cq(cq, 1, &wc) == 1) {
			if (wc.opcode == opcode ||
			    (opcode == IBV_WC_RECV && (wc.opcode & IBV_WC_RECV))) {
				*out = wc;
				return true;
			}
		}
		sleep_ms(2);
	} while (now_s() < deadline);
	return false;
}

/* One of rxe's hw_counters: rcvd_pkts counts the packets that passed its
 * header and key checks (rxe_rcv() counts after hdr_check()). */
static unsigned long long hw_counter(const struct dev *d, const char *name)
{
	char path[160];
	unsigned long long v = ULLONG_MAX;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/%d/hw_counters/%s", d->name,
		 PORT_NUM, name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = ULLONG_MAX;
		fclose(f);
	}
	return v;
}

static uint32_t qkey_viol_cntr(const struct dev *d)
{
	struct ibv_port_attr attr;

	if (ibv_query_port(d->ctx, PORT_NUM, &attr))
		return UINT32_MAX;
	return attr.qkey_viol_cntr;
}

/* An AF_PACKET socket on @netdev: what arrives there, before IP sees it. */
static int capture_open(const char *netdev)
{
	struct sockaddr_ll sll;
	int s = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));

	if (s < 0)
		return -1;
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)if_nametoindex(netdev);
	if (bind(s, (struct sockaddr *)&sll, sizeof(sll)) != 0) {
		close(s);
		return -1;
	}
	return s;
}

static void capture_drain(int s)
{
	uint8_t buf[2048];

	while (recv(s, buf, sizeof(buf), 0) > 0)
		;
}

/* The BTH and DETH of the next RoCE v2 packet over IPv4 to QP @qpn. */
static bool capture_ud(int s, uint32_t qpn, double deadline, uint8_t hdr[20])
{
	uint8_t buf[2048];

	while (now_s() < deadline) {
		struct pollfd p = { s, POLLIN, 0 };
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		const uint8_t *ip, *udp;
		ssize_t n;

		if (poll(&p, 1, 50) <= 0)
			continue;
		n = recvfrom(s, buf, sizeof(buf), 0, (struct sockaddr *)&from,
			     &fl);
		if (n < 14 + 20 + 8 + 20 || from.sll_pkttype == PACKET_OUTGOING ||
		    buf[12] != 0x08 || buf[13] != 0x00)
			continue;
		ip = buf + 14;
		if (ip[9] != 17 || 14 + (ip[0] & 0x0f) * 4 + 8 + 20 > n)
			continue;
		udp = ip + (ip[0] & 0x0f) * 4;
		if ((udp[2] << 8 | udp[3]) != ROCE_V2_PORT ||
		    ibk_bth_dest_qp(udp + 8) != qpn)
			continue;
		memcpy(hdr, udp + 8, 20);
		return true;
	}
	return false;
}

struct ud_case {
	const char *what;
	bool to_qp1;
	bool unprivileged;	/* sent by a process running as uid 65534 */
	ibk_qkey_t send_qkey;	/* the sender's QP context */
	ibk_qkey_t wr_qkey;	/* the work request's remote_qkey */
	ibk_qkey_t recv_qkey;	/* the receiving QP's (QP1: 0x80010000) */
};

/* What each case sends is named by its inputs, not by what should happen:
 * the library and the kernel each say that. */
static const struct ud_case ud_cases[] = {
	{ "free WR key = receiver's", false, false,
	  0x00005555, 0x00001234, 0x00001234 },
	{ "free WR key != receiver's", false, false,
	  0x00005555, 0x00001234, 0x00004321 },
	{ "controlled WR key, QP key = receiver's", false, false,
	  0x00004321, 0x80000000, 0x00004321 },
	{ "controlled WR key, QP key != receiver's", false, false,
	  0x00001111, 0x80000000, 0x00004321 },
	{ "receiver's controlled key in the WR only", false, false,
	  0x00005555, 0x80000001, 0x80000001 },
	{ "receiver's controlled key in WR and QP", false, false,
	  0x80000001, 0x80000001, 0x80000001 },
	{ "to QP1, free WR key", true, false,
	  0x00005555, 0x00001234, IBK_QKEY_GSI },
	{ "to QP1, GSI key in the WR only", true, false,
	  0x00004321, 0x80010000, IBK_QKEY_GSI },
	{ "to QP1, GSI key in the QP, controlled WR key", true, false,
	  0x80010000, 0x80000000, IBK_QKEY_GSI },
	{ "to QP1, GSI key in WR and QP", true, false,
	  0x80010000, 0x80010000, IBK_QKEY_GSI },
	{ "to QP1 from uid 65534, GSI key in the WR only", true, true,
	  0x00004321, 0x80010000, IBK_QKEY_GSI },
};
#define N_UD_CASES (sizeof(ud_cases) / sizeof(ud_cases[0]))

struct ud_tally {
	unsigned sent, captured, select_agree, wr_as_is, verdict_agree;
	unsigned counter_agree, kernel_accept, kernel_drop;
};

/* Posts one signalled SEND and waits for its completion. 0 or -1. */
static int ud_send(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr,
		   uint8_t *buf, struct ibv_ah *ah, uint32_t qpn,
		   ibk_qkey_t wr_qkey, unsigned n)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;

	snprintf((char *)buf, UD_PAYLOAD, "ibkeys ud case %u", n);
	sge.addr = (uintptr_t)buf;
	sge.length = UD_PAYLOAD;
	sge.lkey = mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = n;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = wr_qkey;
	if (ibv_post_send(qp, &wr, &bad) != 0 ||
	    !wait_cqe(cq, IBV_WC_SEND, now_s() + 3, &wc) ||
	    wc.status != IBV_WC_SUCCESS)
		return -1;
	return 0;
}

/* The same send from a child process running as uid 65534, on its own
 * QP, PD and address handle. 0 or -1. */
static int ud_send_unprivileged(const char *devname, const struct ibv_ah_attr *aa,
				const struct ud_case *c, uint32_t qpn, unsigned n)
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct ibv_context *ctx;
		struct ibv_pd *pd;
		struct ibv_cq *cq;
		struct ibv_qp *qp;
		struct ibv_mr *mr;
		struct ibv_ah *ah;
		static uint8_t buf[UD_BUF];
		struct ibv_ah_attr attr = *aa;
		int err;

		if (setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
		    setuid(65534) != 0)
			_exit(3);
		ctx = open_by_name(devname);
		pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		cq = pd ? ibv_create_cq(ctx, 8, NULL, NULL, 0) : NULL;
		mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
		ah = pd ? ibv_create_ah(pd, &attr) : NULL;
		qp = cq ? ud_qp(pd, cq, c->send_qkey, &err) : NULL;
		if (!qp || err || !mr || !ah)
			_exit(4);
		_exit(ud_send(qp, cq, mr, buf, ah, qpn, c->wr_qkey, n) ? 5 : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static void ud_one(struct ud_end *s, struct ud_end *r, struct ibv_ah *ah,
		   const struct ibv_ah_attr *aa, int cap, unsigned n,
		   struct ud_tally *tl)
{
	const struct ud_case *c = &ud_cases[n];
	uint32_t qpn = c->to_qp1 ? 1 : r->qp->qp_num;
	uint8_t hdr[20], want_bth[12] = { 0 }, want_deth[8] = { 0 };
	struct ibv_recv_wr rwr, *bad_r;
	struct ibv_sge rsge;
	struct ibv_wc wc;
	struct ibk_qp_keys qk;
	enum ibk_rx_verdict lib, kern;
	uint32_t before, after;
	unsigned long long rcvd_before, rcvd = 0;
	uint16_t lib_before, lib_after, idx = 0;
	ibk_pkey_t send_pkey = 0;
	ibk_qkey_t wire, selected;
	bool delivered = false, send_ok, wire_explained;
	const char *send_side;
	double t;

	if ((!c->unprivileged && set_qkey(s->qp, c->send_qkey)) ||
	    (!c->to_qp1 && set_qkey(r->qp, c->recv_qkey))) {
		tap_ok(false, "ud: %s: set the QPs' Q_Keys: %s", c->what,
		      strerror(errno));
		return;
	}
	capture_drain(cap);
	before = qkey_viol_cntr(&r->d);
	rcvd_before = hw_counter(&r->d, "rcvd_pkts");
	lib_before = ibk_counter16_read(&r->d.port->qkey_violations);
	if (!c->to_qp1) {
		memset(&rwr, 0, sizeof(rwr));
		rsge.addr = (uintptr_t)(r->buf + n * UD_BUF);
		rsge.length = UD_BUF;
		rsge.lkey = r->mr->lkey;
		rwr.wr_id = n;
		rwr.sg_list = &rsge;
		rwr.num_sge = 1;
		ibv_post_recv(r->qp, &rwr, &bad_r);
	}
	if (c->unprivileged)
		send_ok = ud_send_unprivileged(s->d.name, aa, c, qpn, n) == 0;
	else
		send_ok = ud_send(s->qp, s->cq, s->mr, s->buf, ah, qpn,
				  c->wr_qkey, n) == 0;
	if (!send_ok) {
		tap_ok(false, "ud: %s: the send completes", c->what);
		return;
	}
	tl->sent++;
	if (!capture_ud(cap, qpn, now_s() + 3, hdr)) {
		tap_ok(false, "ud: %s: the packet reaches the receiver's netdev",
		      c->what);
		return;
	}
	tl->captured++;

	/* Send side: the keys the library would put in the headers. The
	 * kernel's soft-RoCE fills the DETH from the work request as it is,
	 * where IBA (and ibk_qkey_select()) take the QP context's Q_Key for
	 * a controlled one: that difference is expected, anything else not. */
	ibk_pkey_table_get(&s->d.port->pkeys, 0, &send_pkey);
	ibk_tx_fill_keys(want_bth, want_deth, send_pkey, c->wr_qkey,
			 c->send_qkey);
	wire = ibk_deth_qkey(hdr + 12);
	selected = ibk_qkey_select(c->wr_qkey, c->send_qkey);
	if (wire == selected) {
		tl->select_agree++;
		send_side = "as ibk_qkey_select()";
		wire_explained = true;
	} else {
		wire_explained = wire == c->wr_qkey &&
				 ibk_qkey_is_controlled(c->wr_qkey);
		tl->wr_as_is += wire_explained;
		send_side = wire_explained ?
			"the WR's controlled key as is; ibk_qkey_select() (IBA) takes the QP's" :
			"UNEXPLAINED";
	}

	/* Receive side: the library's verdict on the captured header. */
	if (c->to_qp1) {
		lib = ibk_port_rx_gsi(r->d.port, hdr, hdr + 12, &idx);
	} else {
		qk.type = IBK_QPT_UD;
		qk.pkey = 0;
		qk.pkey_index = 0;
		qk.qkey = c->recv_qkey;
		lib = ibk_port_rx(r->d.port, &qk, hdr, hdr + 12);
	}
	lib_after = ibk_counter16_read(&r->d.port->qkey_violations);

	/* The kernel's: the packet passed rxe's checks (rcvd_pkts + 1) or
	 * broke the Q_Key rule (qkey_viol_cntr + 1), whichever moves first;
	 * for a UD QP also delivered (a receive completion carrying this
	 * case's payload) or not. QP1's completions go to the MAD layer:
	 * there the counters alone tell. */
	t = now_s() + 2;
	do {
		after = qkey_viol_cntr(&r->d);
		rcvd = hw_counter(&r->d, "rcvd_pkts");
		if (after != before || rcvd != rcvd_before)
			break;
		sleep_ms(10);
	} while (now_s() < t);
	if (!c->to_qp1) {
		delivered = wait_cqe(r->cq, IBV_WC_RECV,
				     now_s() + (rcvd != rcvd_before ? 2 : 0.3),
				     &wc) && wc.status == IBV_WC_SUCCESS;
		if (delivered) {
			char want[UD_PAYLOAD];

			snprintf(want, sizeof(want), "ibkeys ud case %u", n);
			delivered = strcmp((char *)r->buf + wc.wr_id * UD_BUF + 40,
					   want) == 0;
		}
	}
	if (rcvd - rcvd_before == 1 && after == before &&
	    (c->to_qp1 || delivered))
		kern = IBK_RX_ACCEPT;
	else if (rcvd == rcvd_before && after - before == 1 && !delivered)
		kern = IBK_RX_DROP_QKEY;
	else
		kern = IBK_RX_DROP_MALFORMED;	/* neither: no verdict */
	tl->kernel_accept += kern == IBK_RX_ACCEPT;
	tl->kernel_drop += kern == IBK_RX_DROP_QKEY;
	tl->verdict_agree += lib == kern;
	tl->counter_agree += (uint32_t)(lib_after - lib_before) ==
			     after - before;
	tap_ok(wire_explained && ibk_bth_pkey(hdr) == ibk_bth_pkey(want_bth) &&
	      lib == kern && (uint32_t)(lib_after - lib_before) == after - before,
	      "ud: %s: QP 0x%08x WR 0x%08x -> wire Q_Key 0x%08x P_Key 0x%04x (%s: 0x%08x); at QP%s %u (0x%08x): library %s, kernel %s (%s, rcvd_pkts +%u, qkey_viol_cntr %u -> %u, library's counter +%u)",
	      c->what, c->send_qkey, c->wr_qkey, wire, ibk_bth_pkey(hdr),
	      send_side, selected, c->to_qp1 ? "" : " number", qpn, c->recv_qkey,
	      ibk_rx_verdict_name(lib),
	      kern == IBK_RX_DROP_MALFORMED ? "no clear verdict" :
	      ibk_rx_verdict_name(kern),
	      c->to_qp1 ? "QP1: to the MAD layer" :
	      delivered ? "delivered" : "not delivered",
	      (unsigned)(rcvd - rcvd_before), before, after,
	      (unsigned)(uint16_t)(lib_after - lib_before));
}

static int cmd_ud(const char *send_dev, const char *recv_dev,
		  const char *recv_netdev)
{
	struct ibk_gid sgid = gid_of_ipv4_text(UD_SEND_ADDR);
	struct ibk_gid dgid = gid_of_ipv4_text(UD_RECV_ADDR);
	struct ud_end s, r;
	struct ibv_ah_attr aa;
	struct ibv_ah *ah;
	struct ud_tally tl;
	char path[160];
	int sidx, cap;
	unsigned i;
	double t0 = now_s();

	memset(&tl, 0, sizeof(tl));
	if (ud_end_open(&s, send_dev) || ud_end_open(&r, recv_dev))
		return EXIT_CANNOT_RUN;
	sidx = device_gid_index(&s.d, &sgid);
	if (sidx < 0 || device_gid_index(&r.d, &dgid) < 0)
		return cannot_run("ud: %s and %s need the GIDs of %s and %s",
				  send_dev, recv_dev, UD_SEND_ADDR,
				  UD_RECV_ADDR);
	memset(&aa, 0, sizeof(aa));
	aa.is_global = 1;
	memcpy(aa.grh.dgid.raw, dgid.raw, 16);
	aa.grh.sgid_index = (uint8_t)sidx;
	aa.grh.hop_limit = 64;
	aa.port_num = PORT_NUM;
	ah = ibv_create_ah(s.pd, &aa);
	if (!ah)
		return cannot_run("ud: ibv_create_ah to %s: %s", UD_RECV_ADDR,
				  strerror(errno));
	cap = capture_open(recv_netdev);
	if (cap < 0)
		return cannot_run("ud: packet socket on %s: %s", recv_netdev,
				  strerror(errno));

	/* Where rxe shows the Q_Key violation counter: PortInfo's
	 * QKeyViolations reaches user space through ibv_query_port() only. */
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/counters",
		 recv_dev, PORT_NUM);
	tap_diag("ud: %s: %s; qkey_viol_cntr read with ibv_query_port()", path,
	     access(path, F_OK) == 0 ? "present" :
	     "absent (rxe has no PMA counters; hw_counters has no Q_Key counter)");
	tap_diag("ud: %s QP %u (GID index %d, %s) -> %s QP %u and QP1 (%s), captured on %s",
	     send_dev, s.qp->qp_num, sidx, UD_SEND_ADDR, recv_dev,
	     r.qp->qp_num, UD_RECV_ADDR, recv_netdev);
	for (i = 0; i < N_UD_CASES; i++)
		ud_one(&s, &r, ah, &aa, cap, i, &tl);
	tap_diag("ud: %zu cases, %u sent, %u captured; send side: wire Q_Key as ibk_qkey_select() %u, the WR's controlled key sent as is %u; receive: library and kernel verdicts agree %u (kernel accepted %u, dropped %u for the Q_Key), violation counters agree %u; %.1f s",
	     N_UD_CASES, tl.sent, tl.captured, tl.select_agree, tl.wr_as_is,
	     tl.verdict_agree, tl.kernel_accept, tl.kernel_drop,
	     tl.counter_agree, now_s() - t0);
	tap_ok(tl.verdict_agree == N_UD_CASES && tl.counter_agree == N_UD_CASES,
	      "ud: the library's receive verdict on each captured packet is the kernel's (%u of %zu), and so is its Q_Key violation count",
	      tl.verdict_agree, N_UD_CASES);
	close(cap);
	return tap_done();
}

/* ------------------------------------------------------------------------
 * qkey: who may put a controlled Q_Key into a QP context
 * ------------------------------------------------------------------------ */

static const ibk_qkey_t priv_keys[] = {
	0x00000000, 0x00001234, 0x7fffffff, 0x80000000, 0x8000ffff,
	0x80010000, 0x8fffffff, 0x90000000, 0xffffffff,
};
#define N_PRIV_KEYS (sizeof(priv_keys) / sizeof(priv_keys[0]))

/* One rdma netlink request about the system settings; @mode < 0 asks for
 * them. Returns the kernel's privileged-qkey mode (0, 1), or -errno, or
 * -ENOTSUP if the kernel has no such setting. */
static int privileged_qkey_mode(int mode)
{
	struct {
		struct nlmsghdr nh;
		struct nlattr na;
		uint8_t value[4];
	} req;
	union {
		struct nlmsghdr nh;
		uint8_t raw[8192];
	} resp;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	int result = -ENOTSUP;
	int op = mode < 0 ? RDMA_NLDEV_CMD_SYS_GET : RDMA_NLDEV_CMD_SYS_SET;
	ssize_t n;

	if (s < 0)
		return -errno;
	memset(&req, 0, sizeof(req));
	/* the macro does not parenthesise its arguments */
	req.nh.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op);
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.nh.nlmsg_seq = 1;
	req.nh.nlmsg_len = NLMSG_LENGTH(0);
	if (mode >= 0) {
		req.na.nla_type = NLDEV_SYS_ATTR_PRIVILEGED_QKEY_MODE;
		req.na.nla_len = NLA_HDRLEN + 1;
		req.value[0] = (uint8_t)mode;
		req.nh.nlmsg_len = NLMSG_LENGTH(NLA_HDRLEN + 4);
	}
	if (sendto(s, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0) {
		result = -errno;
		close(s);
		return result;
	}
	while ((n = recv(s, &resp, sizeof(resp), 0)) > 0) {
		size_t off = 0;

		while (off + NLMSG_HDRLEN <= (size_t)n) {
			struct nlmsghdr *h = (struct nlmsghdr *)(resp.raw + off);

			if (h->nlmsg_len < NLMSG_HDRLEN ||
			    off + h->nlmsg_len > (size_t)n)
				break;
			off += NLMSG_ALIGN(h->nlmsg_len);

			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (e->error)
					result = e->error;
				else if (mode >= 0)
					result = mode;
				close(s);
				return result;
			}
			if (h->nlmsg_type == NLMSG_DONE)
				break;
			{
				struct nlattr *a = (struct nlattr *)NLMSG_DATA(h);
				int alen = (int)(h->nlmsg_len - NLMSG_HDRLEN);

				while (alen >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
				       a->nla_len <= alen) {
					if ((a->nla_type & NLA_TYPE_MASK) ==
					    NLDEV_SYS_ATTR_PRIVILEGED_QKEY_MODE)
						result = *((uint8_t *)a + NLA_HDRLEN);
					alen -= NLA_ALIGN(a->nla_len);
					a = (struct nlattr *)((uint8_t *)a +
							      NLA_ALIGN(a->nla_len));
				}
			}
		}
	}
	close(s);
	return result;
}

/*
 * In a child running as @uid: for each key, a new UD QP taken RESET ->
 * INIT with it, and a QP in RTS given it with a QKEY-only modify. Writes
 * 2 * N_PRIV_KEYS errno values (0 = accepted) to @fd.
 */
static void qkey_child(const char *devname, uid_t uid, int fd)
{
	int res[2 * N_PRIV_KEYS];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	unsigned i;

	if (uid != 0 && (setgroups(0, NULL) != 0 || setgid(uid) != 0 ||
			 setuid(uid) != 0 || geteuid() != uid))
		_exit(3);
	ctx = open_by_name(devname);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = pd ? ibv_create_cq(ctx, 8, NULL, NULL, 0) : NULL;
	if (!cq)
		_exit(4);
	for (i = 0; i < N_PRIV_KEYS; i++) {
		struct ibv_qp *qp;
		int err;

		qp = ud_qp(pd, cq, priv_keys[i], &err);
		res[i] = qp ? err : -1;
		if (qp)
			ibv_destroy_qp(qp);
		qp = ud_qp(pd, cq, 0x00001234, &err);
		res[N_PRIV_KEYS + i] = qp && !err ? set_qkey(qp, priv_keys[i]) : -1;
		if (qp)
			ibv_destroy_qp(qp);
	}
	if (write(fd, res, sizeof(res)) != (ssize_t)sizeof(res))
		_exit(5);
	_exit(0);
}

static int qkey_run(const char *devname, uid_t uid, int res[2 * N_PRIV_KEYS])
{
	int fds[2], status;
	pid_t pid;
	ssize_t n;

	if (pipe(fds) != 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		qkey_child(devname, uid, fds[1]);
	}
	close(fds[1]);
	n = read(fds[0], res, 2 * N_PRIV_KEYS * sizeof(int));
	close(fds[0]);
	waitpid(pid, &status, 0);
	return n == (ssize_t)(2 * N_PRIV_KEYS * sizeof(int)) ? 0 :
	       -(WIFEXITED(status) ? WEXITSTATUS(status) : 128);
}

static int cmd_qkey(const char *devname)
{
	static const uid_t uids[2] = { 0, 65534 };
	int mode0 = privileged_qkey_mode(-1), mode, m, u;
	unsigned lib_agree_iba = 0, lib_agree_policy = 0, kernel_as_promised = 0;
	unsigned total = 0, refused_unpriv = 0;

	tap_diag("qkey: the kernel's privileged-qkey setting (rdma netlink): %s",
	     mode0 >= 0 ? (mode0 ? "on" : "off") : strerror(-mode0));
	for (m = 0; m < 2; m++) {
		mode = mode0;
		if (m == 1) {
			if (mode0 < 0)
				break;
			mode = privileged_qkey_mode(1);
			if (!tap_ok(mode == 1,
				   "qkey: `privileged-qkey on` over rdma netlink: %s",
				   mode < 0 ? strerror(-mode) : "set"))
				break;
		}
		for (u = 0; u < 2; u++) {
			int res[2 * N_PRIV_KEYS], rc;
			unsigned i, agree = 0, refused = 0;
			bool priv = uids[u] == 0;

			rc = qkey_run(devname, uids[u], res);
			if (!tap_ok(rc == 0, "qkey: QPs of %s as uid %u", devname,
				   (unsigned)uids[u]))
				continue;
			for (i = 0; i < 2 * N_PRIV_KEYS; i++) {
				ibk_qkey_t k = priv_keys[i % N_PRIV_KEYS];
				bool kernel_ok = res[i] == 0;
				bool promised = !ibk_qkey_is_controlled(k) ||
						priv || mode == 1;

				total++;
				refused += !kernel_ok;
				kernel_as_promised += kernel_ok == promised &&
					(kernel_ok || res[i] == EPERM);
				lib_agree_iba += kernel_ok ==
						 ibk_qkey_may_set(k, priv);
				lib_agree_policy += kernel_ok ==
					ibk_qkey_may_set(k, priv || mode == 1);
				agree += kernel_ok ==
					 ibk_qkey_may_set(k, priv || mode == 1);
				if (i < N_PRIV_KEYS || res[i] != res[i - N_PRIV_KEYS])
					tap_diag("qkey:   uid %u, privileged-qkey %s, 0x%08x at %s: kernel %s, ibk_qkey_may_set(key, %s) %s",
					     (unsigned)uids[u], mode ? "on" : "off", k,
					     i < N_PRIV_KEYS ? "RESET->INIT" : "RTS",
					     kernel_ok ? "accepts" : strerror(res[i]),
					     priv ? "true" : "false",
					     ibk_qkey_may_set(k, priv) ? "may" : "may not");
			}
			if (!priv && mode == 0)
				refused_unpriv += refused;
			tap_ok(agree == 2 * N_PRIV_KEYS,
			      "qkey: uid %u, privileged-qkey %s: the kernel accepts %u and refuses %u of %zu modifies (QP creation and RTS), each as ibk_qkey_may_set(key, %s) says",
			      (unsigned)uids[u], mode ? "on" : "off",
			      2 * (unsigned)N_PRIV_KEYS - refused, refused,
			      2 * N_PRIV_KEYS,
			      priv ? "true: root" :
			      mode ? "true: the administrator's setting" :
				     "false");
		}
	}
	if (mode0 >= 0 && mode0 != privileged_qkey_mode(-1))
		tap_ok(privileged_qkey_mode(mode0) == mode0,
		      "qkey: privileged-qkey set back to %s",
		      mode0 ? "on" : "off");
	tap_diag("qkey: %u modifies: the kernel did as its setting promises %u, agreed with ibk_qkey_may_set(key, uid == 0) %u, with ibk_qkey_may_set(key, uid == 0 || privileged-qkey on) %u; an unprivileged caller was refused %u controlled keys (EPERM)",
	     total, kernel_as_promised, lib_agree_iba, lib_agree_policy,
	     refused_unpriv);
	tap_ok(kernel_as_promised == total,
	      "qkey: the kernel refuses controlled Q_Keys to uid 65534 with EPERM exactly when privileged-qkey is off (%u of %u)",
	      kernel_as_promised, total);
	return tap_done();
}

/* ------------------------------------------------------------------------
 * mem: RDMA WRITE, READ and ATOMIC against soft-RoCE's R_Key checks
 * ------------------------------------------------------------------------ */

#define MEM_BUF		4096		/* each region: one page */
#define MEM_WAIT_S	20.0		/* for one completion, under TCG */
#define MEM_REMOTE	(IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_ATOMIC)
/* completion statuses, as ibv_wc_status_str() prints them */
#define OK_WC		"success"
#define ACC_ERR		"remote access error"

/* The requester (A, the send side of the UD test) and the responder (B),
 * and on B the objects the requests name, mirrored in an ibk_mr_table. */
struct mem_env {
	struct dev a, b;
	int a_gid, b_gid;		/* GID indices of 192.0.2.1 and .2 */
	struct ibv_pd *pd_a, *pd_b, *pd_b2;
	struct ibv_cq *cq_a, *cq_b;
	uint8_t *buf_a, *buf_all, *buf_ro, *buf_pd2, *buf_top;
	struct ibv_mr *mr_a, *mr_all, *mr_ro, *mr_pd2;
	struct ibv_mr *mr_top;		/* at iova 2^64 - MEM_BUF */
	struct ibv_mw *mw;
	uint32_t mw_rkey;		/* its key once bound */
	uint64_t mw_addr, mw_len;
	struct ibv_qp *mw_qp_a, *mw_qp_b; /* the pair the window is bound on */
	struct ibk_mr_table table;
	struct ibk_mr_cell *cells;
};

/* An RC QP on @pd with both queues on @cq. */
static struct ibv_qp *mem_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.cap.max_send_wr = 8;
	ia.cap.max_recv_wr = 8;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.qp_type = IBV_QPT_RC;
	return ibv_create_qp(pd, &ia);
}

/* @qp to RTS, connected to @dest_qpn at @dgid, remote access allowed. */
static int mem_connect(struct ibv_qp *qp, uint32_t dest_qpn,
		       const union ibv_gid *dgid, int sgid_index)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = PORT_NUM;
	a.qp_access_flags = MEM_REMOTE;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *dgid;
	a.ah_attr.grh.sgid_index = (uint8_t)sgid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = PORT_NUM;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 12;
	a.retry_cnt = 1;
	a.rnr_retry = 1;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* A connected pair, requester on A, responder on B in @pd_b. 0, or -1. */
static int mem_pair_in(struct mem_env *e, struct ibv_pd *pd_b,
		       struct ibv_qp **qa, struct ibv_qp **qb)
{
	union ibv_gid ga, gb;

	*qa = mem_qp(e->pd_a, e->cq_a);
	*qb = mem_qp(pd_b, e->cq_b);
	if (!*qa || !*qb ||
	    ibv_query_gid(e->a.ctx, PORT_NUM, e->a_gid, &ga) ||
	    ibv_query_gid(e->b.ctx, PORT_NUM, e->b_gid, &gb))
		return -1;
	return mem_connect(*qa, (*qb)->qp_num, &gb, e->a_gid) ||
	       mem_connect(*qb, (*qa)->qp_num, &ga, e->b_gid) ? -1 : 0;
}

/* A connected pair, requester on A, responder on B. 0, or -1. */
static int mem_pair(struct mem_env *e, struct ibv_qp **qa, struct ibv_qp **qb)
{
	return mem_pair_in(e, e->pd_b, qa, qb);
}

static void mem_unpair(struct ibv_qp *qa, struct ibv_qp *qb)
{
	if (qa)
		ibv_destroy_qp(qa);
	if (qb)
		ibv_destroy_qp(qb);
}

/* An MR of B registered with the device at @iova (0: the buffer's own
 * address) and mirrored in the table. */
static struct ibv_mr *mem_reg_at(struct mem_env *e, struct ibv_pd *pd,
				 uint8_t **buf, uint64_t iova, int access)
{
	struct ibk_mem_attr a;
	struct ibv_mr *mr;

	if (posix_memalign((void **)buf, MEM_BUF, MEM_BUF))
		return NULL;
	memset(*buf, 0, MEM_BUF);
	if (!iova)
		iova = (uintptr_t)*buf;
	mr = ibv_reg_mr_iova(pd, *buf, MEM_BUF, iova, access);
	if (!mr)
		return NULL;
	memset(&a, 0, sizeof(a));
	a.rkey = mr->rkey;
	a.pd = pd->handle;
	a.access = (uint32_t)access;
	a.addr = iova;
	a.length = MEM_BUF;
	a.kind = IBK_MEM_MR;
	return ibk_mr_table_register(&e->table, &a) == IBK_MEMOP_OK ? mr : NULL;
}

static struct ibv_mr *mem_reg(struct mem_env *e, struct ibv_pd *pd,
			      uint8_t **buf, int access)
{
	return mem_reg_at(e, pd, buf, 0, access);
}

/* The table must hold every index the device hands out: size it from the
 * keys of probe objects, with room to spare. */
static uint32_t mem_capacity(struct ibv_pd *pd)
{
	uint32_t most = 0;
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	uint8_t probe[64];
	struct ibv_mr *mr = ibv_reg_mr(pd, probe, sizeof(probe), 0);

	if (mr) {
		most = ibk_rkey_index(mr->lkey);
		ibv_dereg_mr(mr);
	}
	if (mw) {
		if (ibk_rkey_index(mw->rkey) > most)
			most = ibk_rkey_index(mw->rkey);
		ibv_dealloc_mw(mw);
	}
	return most + 64;
}

/* Waits for the completion of the one WR posted on @cq. */
static bool mem_wait(struct ibv_cq *cq, struct ibv_wc *wc)
{
	double deadline = now_s() + MEM_WAIT_S;

	do {
		if (ibv_poll_cq(cq, 1, wc) == 1)
			return true;
		sleep_ms(1);
	} while (now_s() < deadline);
	return false;
}

/* Posts @wr on @qp: its completion's status on @cq, or why there is none. */
static const char *mem_post(struct ibv_qp *qp, struct ibv_send_wr *wr,
			    struct ibv_cq *cq)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	if (ibv_post_send(qp, wr, &bad))
		return "post refused";
	if (!mem_wait(cq, &wc))
		return "no completion";
	return ibv_wc_status_str(wc.status);
}

/* A type 2 bind of @mw on @qp over [addr, addr + length) of @mr: its
 * completion status on @cq; the window's key once bound in *@rkey. */
static const char *mem_bind_on(struct ibv_qp *qp, struct ibv_cq *cq,
			       struct ibv_mw *mw, struct ibv_mr *mr,
			       uint64_t addr, uint64_t length, unsigned access,
			       uint32_t *rkey)
{
	struct ibv_send_wr wr;

	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = addr;
	wr.bind_mw.bind_info.length = length;
	wr.bind_mw.bind_info.mw_access_flags = access;
	*rkey = wr.bind_mw.rkey;
	return mem_post(qp, &wr, cq);
}

/* Binds type 1 window @mw over @length bytes of @mr at @addr (0: unbinds
 * it) on @qp, completions on @cq. 0, or -1. */
static int mem_bind_type1(struct ibv_qp *qp, struct ibv_cq *cq,
			  struct ibv_mw *mw, struct ibv_mr *mr, uint64_t addr,
			  uint64_t length)
{
	struct ibv_mw_bind bind;
	struct ibv_wc wc;

	memset(&bind, 0, sizeof(bind));
	bind.send_flags = IBV_SEND_SIGNALED;
	bind.bind_info.mr = mr;
	bind.bind_info.addr = addr;
	bind.bind_info.length = length;
	bind.bind_info.mw_access_flags = length ? IBV_ACCESS_REMOTE_READ |
						  IBV_ACCESS_REMOTE_WRITE : 0;
	if (ibv_bind_mw(qp, mw, &bind) || !mem_wait(cq, &wc))
		return -1;
	return wc.status == IBV_WC_SUCCESS ? 0 : -1;
}

/* Binds the type 2 window on the pair's responder QP, in the device and in
 * the table, over [addr, addr + len) of mr_all, remote read and write. */
static int mem_bind(struct mem_env *e, uint64_t addr, uint64_t len)
{
	struct ibk_mw_bind_wr bw;
	uint32_t rkey;

	if (strcmp(mem_bind_on(e->mw_qp_b, e->cq_b, e->mw, e->mr_all, addr, len,
			       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE,
			       &rkey), OK_WC) != 0)
		return -1;
	memset(&bw, 0, sizeof(bw));
	bw.mw_rkey = e->mw->rkey;
	bw.mr_lkey = e->mr_all->lkey;
	bw.key_byte = ibk_rkey_byte(rkey);
	bw.addr = addr;
	bw.length = len;
	bw.access = IBK_ACCESS_REMOTE_READ | IBK_ACCESS_REMOTE_WRITE;
	bw.qpn = e->mw_qp_b->qp_num;
	bw.qp_pd = e->pd_b->handle;
	if (ibk_mr_table_bind(&e->table, &bw) != IBK_MEMOP_OK)
		return -1;
	e->mw_rkey = rkey;
	e->mw_addr = addr;
	e->mw_len = len;
	return 0;
}

static int mem_setup(struct mem_env *e, const char *dev_a, const char *dev_b)
{
	struct ibk_gid ga = gid_of_ipv4_text(UD_SEND_ADDR);
	struct ibk_gid gb = gid_of_ipv4_text(UD_RECV_ADDR);
	struct ibk_mem_attr w;
	uint32_t cap;

	memset(e, 0, sizeof(*e));
	if (dev_open(&e->a, dev_a) || dev_open(&e->b, dev_b))
		return EXIT_CANNOT_RUN;
	e->a_gid = device_gid_index(&e->a, &ga);
	e->b_gid = device_gid_index(&e->b, &gb);
	if (e->a_gid < 0 || e->b_gid < 0)
		return cannot_run("mem: %s and %s need the GIDs of %s and %s",
				  dev_a, dev_b, UD_SEND_ADDR, UD_RECV_ADDR);
	e->pd_a = ibv_alloc_pd(e->a.ctx);
	e->pd_b = ibv_alloc_pd(e->b.ctx);
	e->pd_b2 = ibv_alloc_pd(e->b.ctx);
	e->cq_a = ibv_create_cq(e->a.ctx, 16, NULL, NULL, 0);
	e->cq_b = ibv_create_cq(e->b.ctx, 16, NULL, NULL, 0);
	if (!e->pd_a || !e->pd_b || !e->pd_b2 || !e->cq_a || !e->cq_b)
		return cannot_run("mem: PDs and CQs: %s", strerror(errno));
	cap = mem_capacity(e->pd_b);
	e->cells = calloc(IBK_MR_CELLS(cap), sizeof(*e->cells));
	if (!e->cells || ibk_mr_table_init(&e->table, e->cells, cap))
		return cannot_run("mem: an ibk_mr_table of %u objects", cap);
	if (posix_memalign((void **)&e->buf_a, MEM_BUF, MEM_BUF))
		return cannot_run("mem: out of memory");
	e->mr_a = ibv_reg_mr(e->pd_a, e->buf_a, MEM_BUF,
			     IBV_ACCESS_LOCAL_WRITE);
	e->mr_all = mem_reg(e, e->pd_b, &e->buf_all, IBV_ACCESS_LOCAL_WRITE |
			    MEM_REMOTE | IBV_ACCESS_MW_BIND);
	e->mr_ro = mem_reg(e, e->pd_b, &e->buf_ro, IBV_ACCESS_REMOTE_READ);
	e->mr_pd2 = mem_reg(e, e->pd_b2, &e->buf_pd2,
			    IBV_ACCESS_LOCAL_WRITE | MEM_REMOTE);
	/* the last MEM_BUF bytes of the 64-bit address space: its end is
	 * 2^64 */
	e->mr_top = mem_reg_at(e, e->pd_b, &e->buf_top, 0 - (uint64_t)MEM_BUF,
			       IBV_ACCESS_LOCAL_WRITE | MEM_REMOTE);
	if (!e->mr_a || !e->mr_all || !e->mr_ro || !e->mr_pd2 || !e->mr_top)
		return cannot_run("mem: register the MRs: %s", strerror(errno));
	e->mw = ibv_alloc_mw(e->pd_b, IBV_MW_TYPE_2);
	if (!e->mw)
		return cannot_run("mem: ibv_alloc_mw type 2: %s", strerror(errno));
	memset(&w, 0, sizeof(w));
	w.rkey = e->mw->rkey;
	w.pd = e->pd_b->handle;
	w.kind = IBK_MEM_MW2;
	if (ibk_mr_table_register(&e->table, &w) != IBK_MEMOP_OK)
		return cannot_run("mem: the window in the table");
	if (mem_pair(e, &e->mw_qp_a, &e->mw_qp_b))
		return cannot_run("mem: connect an RC pair: %s", strerror(errno));
	if (mem_bind(e, (uintptr_t)e->buf_all + 0x400, 0x400))
		return cannot_run("mem: bind the type 2 window (rxe_bind_mw)");
	tap_diag("mem: %s QP -> %s; MRs 0x%08x (all), 0x%08x (read only), "
	     "0x%08x (another PD); type 2 window 0x%08x on QP %u over "
	     "[+0x400, +0x800) of the first; table of %u objects",
	     dev_a, dev_b, e->mr_all->rkey, e->mr_ro->rkey, e->mr_pd2->rkey,
	     e->mw_rkey, e->mw_qp_b->qp_num, cap);
	return 0;
}

enum mem_target { T_ALL, T_RO, T_PD2, T_MW, T_NONE, T_TOP };

struct mem_case {
	const char *what;
	enum ibv_wr_opcode op;
	enum mem_target target;
	bool stale_key;		/* the next key byte: a re-bind's or rereg's */
	int64_t offset;		/* from the target's start */
	uint64_t va;		/* used instead when not 0 */
	uint32_t length;
	bool window_qp;		/* on the pair the window is bound to */
	enum { AGREE, KERNEL_GRANTS, POST_REFUSED } expect;
	const char *why;	/* why rxe does not do what the library says */
};

static const struct mem_case mem_cases[] = {
	{ "WRITE inside the MR", IBV_WR_RDMA_WRITE, T_ALL, false, 0x100, 0,
	  256, false, AGREE, NULL },
	{ "READ inside the MR", IBV_WR_RDMA_READ, T_ALL, false, 0x200, 0, 128,
	  false, AGREE, NULL },
	{ "FETCH ADD inside the MR", IBV_WR_ATOMIC_FETCH_AND_ADD, T_ALL, false,
	  0x300, 0, 8, false, AGREE, NULL },
	{ "WRITE with a stale key byte", IBV_WR_RDMA_WRITE, T_ALL, true, 0x100,
	  0, 64, false, AGREE, NULL },
	{ "WRITE with the key of an MR in another PD", IBV_WR_RDMA_WRITE,
	  T_PD2, false, 0, 0, 64, false, AGREE, NULL },
	{ "WRITE to an MR without remote write", IBV_WR_RDMA_WRITE, T_RO,
	  false, 0, 0, 64, false, AGREE, NULL },
	{ "FETCH ADD on an MR without remote atomic",
	  IBV_WR_ATOMIC_FETCH_AND_ADD, T_RO, false, 0, 0, 8, false, AGREE, NULL },
	{ "READ from an MR with remote read", IBV_WR_RDMA_READ, T_RO, false,
	  0x10, 0, 64, false, AGREE, NULL },
	{ "READ 16 bytes past the MR's end", IBV_WR_RDMA_READ, T_ALL, false,
	  MEM_BUF - 16, 0, 32, false, AGREE, NULL },
	{ "WRITE starting 8 bytes below the MR", IBV_WR_RDMA_WRITE, T_ALL,
	  false, -8, 0, 16, false, AGREE, NULL },
	{ "FETCH ADD at an address 4 off alignment",
	  IBV_WR_ATOMIC_FETCH_AND_ADD, T_ALL, false, 0x304, 0, 8, false,
	  POST_REFUSED, "the rxe provider refuses to post an atomic whose "
	  "remote address is not 8-aligned, so no responder ever sees it" },
	{ "WRITE with a key naming no object", IBV_WR_RDMA_WRITE, T_NONE,
	  false, 0, 0, 64, false, AGREE, NULL },
	{ "WRITE of 0 bytes with a stale key", IBV_WR_RDMA_WRITE, T_ALL, true,
	  0, 0, 0, false, AGREE, NULL },
	{ "WRITE through the type 2 window, from its QP", IBV_WR_RDMA_WRITE,
	  T_MW, false, 0x100, 0, 64, true, AGREE, NULL },
	{ "WRITE through the type 2 window from another QP",
	  IBV_WR_RDMA_WRITE, T_MW, false, 0x100, 0, 64, false, AGREE, NULL },
	{ "WRITE through the window past its end, inside its MR",
	  IBV_WR_RDMA_WRITE, T_MW, false, 0x500, 0, 64, true, KERNEL_GRANTS,
	  "rxe checks a window's access against its MR's range only "
	  "(check_rkey() calls mr_check_range() on the MR)" },
	{ "WRITE of 0x400 bytes at 0xfffffffffffffc00 (iova + length wraps "
	  "to 0)", IBV_WR_RDMA_WRITE, T_ALL, false, 0, 0xfffffffffffffc00ull,
	  0x400, false, AGREE, NULL },
	/* an MR whose last byte is 2^64 - 1: requests ending exactly at 2^64
	 * execute, one byte more does not */
	{ "WRITE ending exactly at 2^64, in an MR ending there",
	  IBV_WR_RDMA_WRITE, T_TOP, false, MEM_BUF - 0x100, 0, 0x100, false,
	  AGREE, NULL },
	{ "READ of the MR at 2^64 - MEM_BUF, whole", IBV_WR_RDMA_READ, T_TOP,
	  false, 0, 0, MEM_BUF, false, AGREE, NULL },
	{ "FETCH ADD on the last 8 bytes below 2^64",
	  IBV_WR_ATOMIC_FETCH_AND_ADD, T_TOP, false, MEM_BUF - 8, 0, 8, false,
	  AGREE, NULL },
	{ "WRITE one byte past 2^64", IBV_WR_RDMA_WRITE, T_TOP, false,
	  MEM_BUF - 0x100, 0, 0x101, false, AGREE, NULL },
};
#define N_MEM_CASES (sizeof(mem_cases) / sizeof(mem_cases[0]))

/* A kernel whose mr_check_range() sums iova + length in u64 (the form
 * since early 2023, v6.3) without the May 2026 fix would write past the
 * MR: the wrap case runs on older kernels only, which test the range as
 * length > mr length || iova > base + mr length - length. */
static bool mem_wrap_is_safe(void)
{
	struct utsname u;
	unsigned major = 0, minor = 0;

	return uname(&u) == 0 && sscanf(u.release, "%u.%u", &major, &minor) == 2 &&
	       (major < 6 || (major == 6 && minor < 3));
}

/* A signalled @op of @length bytes between A's buffer and @remote under
 * @rkey, into *@wr and its *@sge (FETCH ADD adds 1). */
static void mem_request(const struct mem_env *e, enum ibv_wr_opcode op,
			uint64_t remote, uint32_t rkey, uint32_t length,
			struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	memset(wr, 0, sizeof(*wr));
	sge->addr = (uintptr_t)e->buf_a;
	sge->length = length;
	sge->lkey = e->mr_a->lkey;
	wr->opcode = op;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->sg_list = length ? sge : NULL;
	wr->num_sge = length ? 1 : 0;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr->wr.atomic.remote_addr = remote;
		wr->wr.atomic.rkey = rkey;
		wr->wr.atomic.compare_add = 1;
	} else {
		wr->wr.rdma.remote_addr = remote;
		wr->wr.rdma.rkey = rkey;
	}
}

/* The request's BTH and RETH or AtomicETH as the requester sends it. */
static void mem_packet(uint8_t *pkt, const struct ibv_send_wr *wr,
		       uint32_t dest_qpn)
{
	uint8_t *ext = pkt + IBK_BTH_LEN;
	uint8_t op = wr->opcode == IBV_WR_RDMA_WRITE ?
		     IBK_OP_RDMA_WRITE_ONLY : wr->opcode == IBV_WR_RDMA_READ ?
		     IBK_OP_RDMA_READ_REQUEST : IBK_OP_FETCH_ADD;

	memset(pkt, 0, IBK_BTH_LEN + IBK_ATOMICETH_LEN);
	ibk_bth_set_opcode(pkt, (uint8_t)(IBK_TRANSPORT_RC | op));
	ibk_bth_set_pkey(pkt, IBK_PKEY_DEFAULT);
	ibk_bth_set_dest_qp(pkt, dest_qpn);
	if (op == IBK_OP_FETCH_ADD) {
		ibk_atomiceth_set_va(ext, wr->wr.atomic.remote_addr);
		ibk_atomiceth_set_rkey(ext, wr->wr.atomic.rkey);
		ibk_atomiceth_set_swap_add(ext, wr->wr.atomic.compare_add);
	} else {
		ibk_reth_set_va(ext, wr->wr.rdma.remote_addr);
		ibk_reth_set_rkey(ext, wr->wr.rdma.rkey);
		ibk_reth_set_dma_len(ext, wr->sg_list ? wr->sg_list->length : 0);
	}
}

struct mem_tally {
	unsigned run, agree, differ_as_noted, skipped;
};

static void mem_one(struct mem_env *e, const struct mem_case *c,
		    struct mem_tally *t)
{
	uint8_t pkt[IBK_BTH_LEN + IBK_ATOMICETH_LEN];
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibk_mem_qp lib_qp;
	enum ibk_mem_verdict v;
	enum ibk_wc_status want;
	struct ibv_wc wc;
	uint64_t start = 0;
	uint32_t rkey = 0;
	int posted;

	if (c->va && !mem_wrap_is_safe()) {
		t->skipped++;
		tap_diag("mem: %s: not run on this kernel: its u64 range test "
		     "would write out of bounds", c->what);
		return;
	}
	switch (c->target) {
	case T_ALL:  rkey = e->mr_all->rkey; start = (uintptr_t)e->buf_all; break;
	case T_RO:   rkey = e->mr_ro->rkey; start = (uintptr_t)e->buf_ro; break;
	case T_PD2:  rkey = e->mr_pd2->rkey; start = (uintptr_t)e->buf_pd2; break;
	case T_MW:   rkey = e->mw_rkey; start = e->mw_addr; break;
	case T_NONE: rkey = ibk_rkey_make(e->table.capacity - 1, 0x42);
		     start = (uintptr_t)e->buf_all; break;
	case T_TOP:  rkey = e->mr_top->rkey; start = 0 - (uint64_t)MEM_BUF; break;
	}
	if (c->stale_key)
		rkey = ibk_rkey_next(rkey);
	if (c->window_qp) {
		qa = e->mw_qp_a;
		qb = e->mw_qp_b;
	} else if (mem_pair(e, &qa, &qb)) {
		tap_ok(false, "mem: %s: connect an RC pair", c->what);
		mem_unpair(qa, qb);
		return;
	}

	mem_request(e, c->op, c->va ? c->va : start + (uint64_t)c->offset,
		    rkey, c->length, &wr, &sge);

	/* the library first: the request against the table, on B's QP */
	mem_packet(pkt, &wr, qb->qp_num);
	lib_qp.type = IBK_QPT_RC;
	lib_qp.qpn = qb->qp_num;
	lib_qp.pd = e->pd_b->handle;
	lib_qp.access = IBK_ACCESS_REMOTE;
	v = ibk_mr_table_check(&e->table, &lib_qp, pkt);
	want = ibk_mem_verdict_wc_status(v);

	posted = ibv_post_send(qa, &wr, &bad);
	t->run++;
	if (c->expect == POST_REFUSED) {
		bool as_noted = posted != 0 && v != IBK_MEM_OK;

		t->differ_as_noted += as_noted;
		tap_ok(as_noted, "mem: %s: library %s (NAK 0x%02x), "
		      "ibv_post_send %s: %s", c->what, ibk_mem_verdict_name(v),
		      ibk_mem_verdict_nak(v), posted ? strerror(posted) :
		      "accepted it", c->why);
	} else if (posted) {
		tap_ok(false, "mem: %s: ibv_post_send: %s", c->what,
		      strerror(posted));
	} else if (!mem_wait(e->cq_a, &wc)) {
		tap_ok(false, "mem: %s: no completion in %.0f s", c->what,
		      MEM_WAIT_S);
	} else if (c->expect == KERNEL_GRANTS) {
		bool as_noted = v != IBK_MEM_OK && wc.status == IBV_WC_SUCCESS;

		t->differ_as_noted += as_noted;
		tap_ok(as_noted, "mem: %s: library %s (NAK 0x%02x), kernel %s: "
		      "%s", c->what, ibk_mem_verdict_name(v),
		      ibk_mem_verdict_nak(v), ibv_wc_status_str(wc.status),
		      c->why);
	} else {
		t->agree += (int)wc.status == (int)want;
		tap_ok((int)wc.status == (int)want,
		      "mem: %s: library %s (NAK 0x%02x), requester completes "
		      "%s as the library says", c->what,
		      ibk_mem_verdict_name(v), ibk_mem_verdict_nak(v),
		      ibv_wc_status_str(wc.status));
	}
	if (!c->window_qp)
		mem_unpair(qa, qb);
}

/* Frees what mem_setup() made, window first (it holds its QP and MR),
 * then the QPs, regions, domains and queues, timing each step. */
static void mem_teardown(struct mem_env *e)
{
	double t0 = now_s(), t1, t2;

	ibv_dealloc_mw(e->mw);
	mem_unpair(e->mw_qp_a, e->mw_qp_b);
	t1 = now_s();
	ibv_dereg_mr(e->mr_a);
	ibv_dereg_mr(e->mr_all);
	ibv_dereg_mr(e->mr_ro);
	ibv_dereg_mr(e->mr_pd2);
	ibv_dereg_mr(e->mr_top);
	ibv_dealloc_pd(e->pd_a);
	ibv_dealloc_pd(e->pd_b);
	ibv_dealloc_pd(e->pd_b2);
	ibv_destroy_cq(e->cq_a);
	ibv_destroy_cq(e->cq_b);
	t2 = now_s();
	ibv_close_device(e->a.ctx);
	ibv_close_device(e->b.ctx);
	tap_diag("mem: teardown: window and its pair %.1f s, regions, domains "
	     "and queues %.1f s, devices %.1f s", t1 - t0, t2 - t1,
	     now_s() - t2);
}

static int cmd_mem(const char *dev_a, const char *dev_b)
{
	struct mem_env e;
	struct mem_tally t;
	double t0 = now_s();
	unsigned i;
	int rc = mem_setup(&e, dev_a, dev_b);

	if (rc)
		return rc;
	memset(&t, 0, sizeof(t));
	for (i = 0; i < N_MEM_CASES; i++)
		mem_one(&e, &mem_cases[i], &t);
	tap_diag("mem: %u requests, %u completed as the library says, %u where rxe "
	     "differs as noted, %u not run; %.1f s", t.run, t.agree,
	     t.differ_as_noted, t.skipped, now_s() - t0);
	mem_teardown(&e);
	return tap_done();
}

/* ------------------------------------------------------------------------
 * neg: requests the rules refuse, against whichever rdma_rxe is loaded
 * ------------------------------------------------------------------------ */

/*
 * Each case says what Debian's own rxe (Linux 6.1.192) does with it and
 * what the rule says, which is what rxe must do once ibkeys decides. The
 * stock column is the kernel's behaviour read from its source
 * (rxe_resp.c check_rkey(), rxe_mw.c, and this file's mem and ud); the rule
 * column the IBA rule or the library's documented stricter one. Each
 * outcome is a completion status, or what happened to a datagram.
 */
enum neg_kind { N_RDMA, N_BIND_ZB_OUTSIDE, N_BIND_MR_PD, N_PKEY, N_QKEY,
		N_QKEY_UNPRIV, N_DEREGISTERED, N_MW_INVALIDATED, N_MW_OTHER_QP,
		N_INV_OTHER_PD, N_MW_UNBOUND };

struct neg_case {
	const char *request;
	const char *rule;
	enum neg_kind kind;
	enum ibv_wr_opcode op;		/* N_RDMA */
	enum mem_target target;
	int64_t offset;
	uint64_t va;			/* used instead when not 0 */
	uint32_t length;
	const char *stock, *ibkeys;	/* the outcome each must give */
};

#define NEG_TOP		(0 - (uint64_t)MEM_BUF)
#define BIND_ERR	"memory management operation error"	/* MW_BIND_ERR */
#define INV_ERR		"remote invalid request error"	/* REM_INV_REQ_ERR */

static const struct neg_case neg_cases[] = {
	{ "RDMA WRITE at 2^64 - 0x100, 0x200 bytes (wraps past 2^64)",
	  "range inside the MR, never past 2^64", N_RDMA,
	  IBV_WR_RDMA_WRITE, T_TOP, 0, 0 - (uint64_t)0x100, 0x200, ACC_ERR,
	  ACC_ERR },
	{ "RDMA READ at 2^64 - 0x100, 0x200 bytes (wraps past 2^64)",
	  "range inside the MR, never past 2^64", N_RDMA, IBV_WR_RDMA_READ,
	  T_TOP, 0, 0 - (uint64_t)0x100, 0x200, ACC_ERR, ACC_ERR },
	{ "RDMA WRITE one byte past the MR's end",
	  "range inside the MR", N_RDMA, IBV_WR_RDMA_WRITE, T_ALL,
	  MEM_BUF - 0x100, 0, 0x101, ACC_ERR, ACC_ERR },
	{ "RDMA WRITE exactly to the MR's end", "range inside the MR",
	  N_RDMA, IBV_WR_RDMA_WRITE, T_ALL, MEM_BUF - 0x100, 0, 0x100, OK_WC,
	  OK_WC },
	{ "RDMA WRITE of 0 bytes inside the MR", "0 bytes: nothing to check",
	  N_RDMA, IBV_WR_RDMA_WRITE, T_ALL, 0x10, 0, 0, OK_WC, OK_WC },
	{ "RDMA WRITE of 0 bytes, no such key, address 0xdead0000",
	  "0 bytes need no R_Key or address (rxe check_rkey())", N_RDMA,
	  IBV_WR_RDMA_WRITE, T_NONE, 0, 0xdead0000, 0, OK_WC, OK_WC },
	{ "RDMA READ of 0 bytes, no such key, address 0xdead0000",
	  "0 bytes need no R_Key or address", N_RDMA, IBV_WR_RDMA_READ,
	  T_NONE, 0, 0xdead0000, 0, OK_WC, OK_WC },
	{ "RDMA WRITE to the MR at 2^64 - 4096, up to its end",
	  "a range may end exactly at 2^64", N_RDMA, IBV_WR_RDMA_WRITE, T_TOP,
	  MEM_BUF - 0x100, 0, 0x100, OK_WC, OK_WC },
	{ "RDMA READ of the whole MR at 2^64 - 4096",
	  "a range may end exactly at 2^64", N_RDMA, IBV_WR_RDMA_READ, T_TOP,
	  0, 0, MEM_BUF, OK_WC, OK_WC },
	{ "FETCH ADD on the last 8 bytes below 2^64",
	  "a range may end exactly at 2^64", N_RDMA,
	  IBV_WR_ATOMIC_FETCH_AND_ADD, T_TOP, MEM_BUF - 8, 0, 8, OK_WC,
	  OK_WC },
	{ "UD SEND with a P_Key in no table entry (0x8001)",
	  "P_Key matches a table entry (IBA 10.9); count it", N_PKEY,
	  0, T_ALL, 0, 0, 0, "dropped, bad_pkey_cntr +1",
	  "dropped, bad_pkey_cntr +1" },
	{ "UD SEND with the wrong Q_Key", "Q_Key equals the QP's; count it", N_QKEY,
	  0, T_ALL, 0, 0, 0, "dropped, qkey_viol_cntr +1",
	  "dropped, qkey_viol_cntr +1" },
	{ "UD SEND from uid 65534 naming a controlled Q_Key in the WR only",
	  "a controlled WR Q_Key sends the QP's own",
	  N_QKEY_UNPRIV, 0, T_ALL, 0, 0, 0, "delivered",
	  "dropped, qkey_viol_cntr +1" },
	{ "type 2 zero-based window bound at 64 KiB past its MR",
	  "a window lies inside its MR (C10-75)", N_BIND_ZB_OUTSIDE, 0, T_ALL,
	  0, 0, 0, OK_WC, BIND_ERR },
	{ "type 2 window bound to an MR of another PD",
	  "window, MR and QP in one PD (C10-72)", N_BIND_MR_PD, 0, T_ALL, 0,
	  0, 0, OK_WC, BIND_ERR },
	{ "RDMA WRITE through the R_Key of a deregistered MR",
	  "a deregistered MR's key names nothing", N_DEREGISTERED, 0, T_ALL,
	  0, 0, 0, ACC_ERR, ACC_ERR },
	{ "RDMA WRITE through a type 2 window after LOCAL_INV",
	  "an invalidated window is FREE, grants nothing", N_MW_INVALIDATED, 0,
	  T_ALL, 0, 0, 0, ACC_ERR, ACC_ERR },
	{ "RDMA WRITE through a type 1 window unbound by a bind of length 0",
	  "an unbound window covers no byte, grants nothing", N_MW_UNBOUND, 0,
	  T_ALL, 0, 0, 0, ACC_ERR, ACC_ERR },
	{ "RDMA WRITE through a type 2 window bound to another QP",
	  "a type 2 window serves only its QP", N_MW_OTHER_QP, 0, T_ALL, 0, 0,
	  0, ACC_ERR, ACC_ERR },
	{ "SEND with Invalidate naming a window of another PD",
	  "a peer invalidates only what its QP reaches (ibkeys, stricter)",
	  N_INV_OTHER_PD, 0, T_ALL, 0, 0, 0, OK_WC, INV_ERR },
};
#define N_NEG_CASES (sizeof(neg_cases) / sizeof(neg_cases[0]))

/* One RDMA request from a fresh pair: the requester's completion status. */
static const char *neg_rdma(struct mem_env *e, const struct neg_case *c)
{
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	uint64_t start = 0;
	uint32_t rkey = 0;
	const char *out;

	switch (c->target) {
	case T_ALL:  rkey = e->mr_all->rkey; start = (uintptr_t)e->buf_all; break;
	case T_TOP:  rkey = e->mr_top->rkey; start = NEG_TOP; break;
	default:     rkey = ibk_rkey_make(e->table.capacity - 1, 0x42); break;
	}
	if (mem_pair(e, &qa, &qb)) {
		mem_unpair(qa, qb);
		return "no RC pair";
	}
	mem_request(e, c->op, c->va ? c->va : start + (uint64_t)c->offset,
		    rkey, c->length, &wr, &sge);
	out = mem_post(qa, &wr, e->cq_a);
	mem_unpair(qa, qb);
	return out;
}

/* A type 2 bind on a fresh pair's responder QP: its completion status. */
static const char *neg_bind(struct mem_env *e, struct ibv_mr *mr,
			    uint64_t addr, unsigned access)
{
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_mw *mw = ibv_alloc_mw(e->pd_b, IBV_MW_TYPE_2);
	const char *out;
	uint32_t rkey;

	if (!mw || mem_pair(e, &qa, &qb)) {
		mem_unpair(qa, qb);
		if (mw)
			ibv_dealloc_mw(mw);
		return "no window or RC pair";
	}
	out = mem_bind_on(qb, e->cq_b, mw, mr, addr, 0x100, access, &rkey);
	/* the window first: bound, it holds a reference on its QP */
	ibv_dealloc_mw(mw);
	mem_unpair(qa, qb);
	return out;
}

/* A SEND with Invalidate of @rkey from @qa to @qb, which has a receive
 * posted: the receive's completion status. */
static const char *neg_send_inv(struct mem_env *e, struct ibv_qp *qa,
				struct ibv_qp *qb, uint32_t rkey)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rw, *rbad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	const char *out;

	sge.addr = (uintptr_t)e->buf_all;
	sge.length = 64;
	sge.lkey = e->mr_all->lkey;
	memset(&rw, 0, sizeof(rw));
	rw.sg_list = &sge;
	rw.num_sge = 1;
	if (ibv_post_recv(qb, &rw, &rbad))
		return "post a receive";
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	if (ibv_post_send(qa, &wr, &bad))
		return "post refused";
	out = mem_wait(e->cq_b, &wc) ? ibv_wc_status_str(wc.status) :
				       "no completion";
	/* the requester's, whatever it is, so that no later case reads it */
	(void)mem_wait(e->cq_a, &wc);
	return out;
}

/*
 * A request through a key revoked or out of the requester's reach: an RDMA
 * WRITE from a fresh pair's requester (its completion status) through the
 * R_Key of a deregistered MR, of a type 1 window unbound by a bind of
 * length 0 (the key that bind gave it), of a type 2 window invalidated by
 * LOCAL_INV, or of one bound on another pair's responder; or a SEND with
 * Invalidate naming a window bound in another PD (@mr_pd2 is an MR there),
 * the receive's completion status.
 */
static const char *neg_revoked(struct mem_env *e, const struct neg_case *c,
			       struct ibv_mr *mr_pd2)
{
	struct ibv_qp *qa = NULL, *qb = NULL, *qa2 = NULL, *qb2 = NULL;
	bool other_pd = c->kind == N_INV_OTHER_PD;
	struct ibv_mw *mw = NULL;
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct ibv_mr *mr;
	const char *out;
	uint32_t rkey;

	if (mem_pair(e, &qa, &qb) ||
	    ((c->kind == N_MW_OTHER_QP || other_pd) &&
	     mem_pair_in(e, other_pd ? e->pd_b2 : e->pd_b, &qa2, &qb2))) {
		out = "no RC pairs";
		goto done;
	}
	if (c->kind == N_DEREGISTERED) {
		mr = ibv_reg_mr(e->pd_b, e->buf_all, MEM_BUF,
				IBV_ACCESS_LOCAL_WRITE | MEM_REMOTE);
		if (!mr) {
			out = "no MR";
			goto done;
		}
		rkey = mr->rkey;
		if (ibv_dereg_mr(mr)) {
			out = "deregistration refused";
			goto done;
		}
	} else if (c->kind == N_MW_UNBOUND) {
		mw = ibv_alloc_mw(e->pd_b, IBV_MW_TYPE_1);
		if (!mw ||
		    mem_bind_type1(qb, e->cq_b, mw, e->mr_all,
				   (uintptr_t)e->buf_all, MEM_BUF) ||
		    mem_bind_type1(qb, e->cq_b, mw, e->mr_all, 0, 0)) {
			out = "no window, or a bind refused";
			goto done;
		}
		rkey = mw->rkey;	/* the unbinding bind's */
	} else {
		mw = ibv_alloc_mw(other_pd ? e->pd_b2 : e->pd_b, IBV_MW_TYPE_2);
		if (!mw) {
			out = "no window";
			goto done;
		}
		/* bound on the invalidating pair's responder, or on the
		 * other pair's */
		out = mem_bind_on(c->kind == N_MW_INVALIDATED ? qb : qb2,
				  e->cq_b, mw, other_pd ? mr_pd2 : e->mr_all,
				  other_pd ? (uintptr_t)mr_pd2->addr :
					     (uintptr_t)e->buf_all, 0x100,
				  IBV_ACCESS_REMOTE_READ |
				  IBV_ACCESS_REMOTE_WRITE, &rkey);
		if (strcmp(out, OK_WC) != 0)
			goto done;
	}
	if (other_pd) {
		out = neg_send_inv(e, qa, qb, rkey);
		goto done;
	}
	if (c->kind == N_MW_INVALIDATED) {
		memset(&wr, 0, sizeof(wr));
		wr.opcode = IBV_WR_LOCAL_INV;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.invalidate_rkey = rkey;
		out = mem_post(qb, &wr, e->cq_b);
		if (strcmp(out, OK_WC) != 0)
			goto done;
	}
	mem_request(e, IBV_WR_RDMA_WRITE, (uintptr_t)e->buf_all, rkey, 64,
		    &wr, &sge);
	out = mem_post(qa, &wr, e->cq_a);
done:
	/* the window first: bound, it holds a reference on its QP */
	if (mw)
		ibv_dealloc_mw(mw);
	mem_unpair(qa, qb);
	mem_unpair(qa2, qb2);
	return out;
}

static uint32_t port_counter(const struct dev *d, bool pkey)
{
	struct ibv_port_attr attr;

	if (ibv_query_port(d->ctx, PORT_NUM, &attr))
		return UINT32_MAX;
	return pkey ? attr.bad_pkey_cntr : attr.qkey_viol_cntr;
}

static uint16_t ip_checksum(const uint8_t *p, size_t n)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * A RoCEv2 UD SEND to @qpn with P_Key @pkey and Q_Key @qkey, written by
 * hand onto veth0 (a packet socket: no verbs sender ever puts another
 * P_Key than the default on the wire): Ethernet, IPv4 192.0.2.1 ->
 * 192.0.2.2, UDP to 4791, BTH, DETH, 32 bytes, a zero ICRC (rxe checks
 * the keys before the ICRC, and a dropped packet never reaches it).
 */
static int neg_raw_send(uint32_t qpn, uint16_t pkey, uint32_t qkey)
{
	uint8_t f[14 + 20 + 8 + 12 + 8 + 32 + 4];
	uint8_t *ip = f + 14, *udp = ip + 20, *bth = udp + 8;
	struct sockaddr_ll sll;
	uint16_t ck;
	int s, rc;

	memset(f, 0, sizeof(f));
	memcpy(f, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00", 14);
	ip[0] = 0x45;
	ip[2] = (uint8_t)((sizeof(f) - 14) >> 8);
	ip[3] = (uint8_t)(sizeof(f) - 14);
	ip[6] = 0x40;			/* don't fragment */
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, "\xc0\x00\x02\x01\xc0\x00\x02\x02", 8);
	ck = ip_checksum(ip, 20);
	ip[10] = (uint8_t)(ck >> 8);
	ip[11] = (uint8_t)ck;
	udp[0] = 0xc0;
	udp[2] = ROCE_V2_PORT >> 8;
	udp[3] = ROCE_V2_PORT & 0xff;
	udp[4] = (uint8_t)((sizeof(f) - 34) >> 8);
	udp[5] = (uint8_t)(sizeof(f) - 34);
	ibk_bth_set_opcode(bth, IBK_OPCODE_UD_SEND_ONLY);
	ibk_bth_set_pkey(bth, pkey);
	ibk_bth_set_dest_qp(bth, qpn);
	ibk_deth_set_qkey(bth + IBK_BTH_LEN, qkey);
	ibk_deth_set_src_qp(bth + IBK_BTH_LEN, 0x42);

	s = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_IP));
	if (s < 0)
		return -1;
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = (int)if_nametoindex("veth0");
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, f, 6);
	rc = sendto(s, f, sizeof(f), 0, (struct sockaddr *)&sll,
		    sizeof(sll)) == (ssize_t)sizeof(f) ? 0 : -1;
	close(s);
	return rc;
}

/* A UD case: a datagram to a fresh UD QP of rxe1 with Q_Key @recv_qkey;
 * what happened to it, with the port counter it moved. */
static const char *neg_ud(struct mem_env *e, const struct neg_case *c,
			  struct ud_end *s, struct ud_end *r,
			  const struct ibv_ah_attr *aa, struct ibv_ah *ah)
{
	static const struct ud_case unpriv = {
		"controlled WR key from uid 65534", false, true,
		0x00001111, 0x80000001, 0x80000001
	};
	bool pkey = c->kind == N_PKEY;
	ibk_qkey_t recv_qkey = c->kind == N_QKEY_UNPRIV ? 0x80000001 : 0x5678;
	struct ibv_recv_wr rw, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	uint32_t before, after;
	bool got;
	int sent;

	(void)e;
	if (set_qkey(r->qp, recv_qkey))
		return "set the receiver's Q_Key";
	sge.addr = (uintptr_t)r->buf;
	sge.length = UD_BUF;
	sge.lkey = r->mr->lkey;
	memset(&rw, 0, sizeof(rw));
	rw.sg_list = &sge;
	rw.num_sge = 1;
	if (ibv_post_recv(r->qp, &rw, &bad))
		return "post a receive";
	before = port_counter(&r->d, pkey);
	if (c->kind == N_PKEY)
		sent = neg_raw_send(r->qp->qp_num, 0x8001, recv_qkey);
	else if (c->kind == N_QKEY)
		sent = ud_send(s->qp, s->cq, s->mr, s->buf, ah, r->qp->qp_num,
			       0x1111, 0);
	else
		sent = ud_send_unprivileged(s->d.name, aa, &unpriv,
					    r->qp->qp_num, 0);
	if (sent)
		return "not sent";
	got = wait_cqe(r->cq, IBV_WC_RECV, now_s() + 2, &wc);
	after = port_counter(&r->d, pkey);
	if (got)
		return after == before ? "delivered" : "delivered, counter moved";
	if (after == before + 1)
		return pkey ? "dropped, bad_pkey_cntr +1" :
			      "dropped, qkey_viol_cntr +1";
	return after == before ? "dropped, no counter moved" :
				 "dropped, counter moved by more than 1";
}

/*
 * neg MODULE: every case of neg_cases on rxe0 -> rxe1, each outcome
 * against the one MODULE (stock or ibkeys) must give; a "# neg: " line
 * per case (request, rule, outcome) for the table that tests/vm/stack-init
 * prints across both modules.
 */
static int cmd_neg(const char *module)
{
	struct ibk_gid dgid = gid_of_ipv4_text(UD_RECV_ADDR);
	struct ibk_gid sgid = gid_of_ipv4_text(UD_SEND_ADDR);
	bool ibkeys = strcmp(module, "ibkeys") == 0;
	struct ibv_mr *mr_bind2;
	struct ibv_ah_attr aa;
	struct ibv_ah *ah;
	struct ud_end s, r;
	struct mem_env e;
	uint8_t *buf2;
	unsigned i;
	int rc = mem_setup(&e, "rxe0", "rxe1");

	if (rc)
		return rc;
	/* an MR of the second PD that windows may bind to */
	if (posix_memalign((void **)&buf2, MEM_BUF, MEM_BUF))
		return cannot_run("neg: out of memory");
	mr_bind2 = ibv_reg_mr(e.pd_b2, buf2, MEM_BUF, IBV_ACCESS_LOCAL_WRITE |
			      MEM_REMOTE | IBV_ACCESS_MW_BIND);
	if (!mr_bind2)
		return cannot_run("neg: MR in the second PD: %s",
				  strerror(errno));
	if (ud_end_open(&s, "rxe0") || ud_end_open(&r, "rxe1"))
		return EXIT_CANNOT_RUN;
	memset(&aa, 0, sizeof(aa));
	aa.is_global = 1;
	memcpy(aa.grh.dgid.raw, dgid.raw, 16);
	aa.grh.sgid_index = (uint8_t)device_gid_index(&s.d, &sgid);
	aa.grh.hop_limit = 64;
	aa.port_num = PORT_NUM;
	ah = ibv_create_ah(s.pd, &aa);
	if (!ah)
		return cannot_run("neg: address handle: %s", strerror(errno));

	for (i = 0; i < N_NEG_CASES; i++) {
		const struct neg_case *c = &neg_cases[i];
		const char *want = ibkeys ? c->ibkeys : c->stock;
		const char *got;

		switch (c->kind) {
		case N_RDMA:
			got = neg_rdma(&e, c);
			break;
		case N_BIND_ZB_OUTSIDE:
			got = neg_bind(&e, e.mr_all,
				       (uintptr_t)e.buf_all + 0x10000,
				       IBV_ACCESS_REMOTE_READ |
				       IBV_ACCESS_ZERO_BASED);
			break;
		case N_BIND_MR_PD:
			got = neg_bind(&e, mr_bind2, (uintptr_t)buf2,
				       IBV_ACCESS_REMOTE_READ);
			break;
		case N_DEREGISTERED:
		case N_MW_INVALIDATED:
		case N_MW_OTHER_QP:
		case N_INV_OTHER_PD:
		case N_MW_UNBOUND:
			got = neg_revoked(&e, c, mr_bind2);
			break;
		default:
			got = neg_ud(&e, c, &s, &r, &aa, ah);
			break;
		}
		tap_diag("neg: %s\t%s\t%s", c->request, c->rule, got);
		tap_ok(strcmp(got, want) == 0, "neg on %s: %s: %s (must be: %s)",
		       module, c->request, got, want);
	}
	ibv_dereg_mr(mr_bind2);
	free(buf2);
	mem_teardown(&e);
	return tap_done();
}

/* ------------------------------------------------------------------------
 * race: keys revoked while another thread's requests run through them
 * ------------------------------------------------------------------------ */

/*
 * One thread (the requester) keeps RDMA WRITEs and READs of 64 bytes going
 * from rxe0 to a page of rxe1 through whichever key was published last;
 * the other (the owner of the page) grants that key and revokes it, cycle
 * after cycle, in five ways: an MR registered and deregistered; a type 1
 * window bound, then unbound by a bind of length 0, or deallocated; a
 * type 2 window bound on the requester's responder QP, then invalidated by
 * LOCAL_INV (posted on another QP of the PD) or deallocated. Once a
 * revocation has returned and the request in flight at that moment has
 * completed, the owner marks the key revoked, zeroes the page and waits:
 * any byte that changes after that was written through a key that no
 * longer grants it, and any request posted after the mark that succeeds
 * was granted by a revoked key. A refused request (remote access error)
 * moves both QPs of the requester's pair to the error state: it takes a
 * fresh pair and, if the key was already marked revoked, waits idle for
 * the next one; a type 2 window is bound only then.
 */
#define RACE_LEN	64
#define RACE_KINDS	5

static const char *const race_kind[RACE_KINDS] = {
	"MR dereg", "type 1 unbind", "type 1 dealloc", "type 2 LOCAL_INV",
	"type 2 dealloc",
};

struct race {
	struct mem_env *e;
	uint8_t *page;			/* rxe1's bytes the keys grant */
	/* the key to use, last published, and its kind (bits 32 up) */
	_Atomic uint64_t key;
	_Atomic uint32_t revoked;	/* the last key known revoked */
	_Atomic unsigned long posted, done;
	/* the requester waits for the next key on a fresh pair, posting nothing */
	_Atomic bool idle;
	_Atomic bool stop;
	/*
	 * Under lock: the requester's responder QP (NULL between pairs), the
	 * one a type 2 window is bound on, and a pair the requester has left
	 * whose responder still has a window bound: destroying a QP waits for
	 * the windows' references (rxe_cleanup()), so the owner destroys it
	 * once the window is revoked.
	 */
	pthread_mutex_t lock;
	struct ibv_qp *qb, *bound_qb, *left_qa, *left_qb;
	/* the requester's, read once it has stopped */
	unsigned long ok[2], refused[2], granted[RACE_KINDS], late_grants;
	unsigned long other;
	char other_status[64];
};

/* The requester's fresh pair, its responder published. 0, or -1 with
 * both NULL. */
static int race_pair(struct race *r, struct ibv_qp **qa, struct ibv_qp **qb)
{
	int rc;

	pthread_mutex_lock(&r->lock);
	rc = mem_pair(r->e, qa, qb);
	if (rc) {
		mem_unpair(*qa, *qb);
		*qa = *qb = NULL;
	}
	r->qb = *qb;
	pthread_mutex_unlock(&r->lock);
	return rc;
}

/* The requester leaves its pair: destroyed, or left to the owner while a
 * type 2 window is bound on its responder. */
static void race_unpair(struct race *r, struct ibv_qp *qa, struct ibv_qp *qb)
{
	pthread_mutex_lock(&r->lock);
	r->qb = NULL;
	if (qb && qb == r->bound_qb) {
		r->left_qa = qa;
		r->left_qb = qb;
	} else {
		mem_unpair(qa, qb);
	}
	pthread_mutex_unlock(&r->lock);
}

static void *race_requester(void *arg)
{
	struct race *r = arg;
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	unsigned long i;

	for (i = 0; !atomic_load(&r->stop); i++) {
		bool read = i & 1;
		uint64_t pub = atomic_load(&r->key);
		uint32_t key = (uint32_t)pub;
		bool revoked = key == atomic_load(&r->revoked);

		if (!qa && race_pair(r, &qa, &qb)) {
			snprintf(r->other_status, sizeof(r->other_status),
				 "no RC pair");
			r->other++;
			break;
		}
		if (!read)
			memset(r->e->buf_a, (int)(i % 255) + 1, RACE_LEN);
		mem_request(r->e, read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
			    (uintptr_t)r->page, key, RACE_LEN, &wr, &sge);
		atomic_fetch_add(&r->posted, 1);
		if (ibv_post_send(qa, &wr, &bad) || !mem_wait(r->e->cq_a, &wc)) {
			snprintf(r->other_status, sizeof(r->other_status),
				 "post refused or no completion");
			r->other++;
			break;
		}
		atomic_fetch_add(&r->done, 1);
		if (wc.status == IBV_WC_SUCCESS) {
			r->ok[read]++;
			r->granted[(pub >> 32) % RACE_KINDS]++;
			r->late_grants += revoked;
			continue;
		}
		if (wc.status == IBV_WC_REM_ACCESS_ERR) {
			r->refused[read]++;
		} else {
			snprintf(r->other_status, sizeof(r->other_status),
				 "%s", ibv_wc_status_str(wc.status));
			r->other++;
		}
		race_unpair(r, qa, qb);
		qa = qb = NULL;
		if (race_pair(r, &qa, &qb) || !revoked)
			continue;	/* a failed pair counted at the top */
		atomic_store(&r->idle, true);
		while (atomic_load(&r->key) == pub && !atomic_load(&r->stop))
			sleep_ms(1);
		atomic_store(&r->idle, false);
	}
	atomic_store(&r->done, ULONG_MAX);	/* no request in flight now */
	race_unpair(r, qa, qb);
	return NULL;
}

/*
 * Binds type 2 window @mw over the page of @mr on the requester's responder
 * QP, once the requester waits idle on a fresh pair: a request of its
 * refused under the bind would move that QP to the error state, and a bind
 * that the QP's flush then reports as failed may have taken effect. The
 * window's key in *@key; 0, or -1.
 */
static int race_bind_type2(struct race *r, struct ibv_mw *mw,
			   struct ibv_mr *mr, uint32_t *key)
{
	double deadline = now_s() + MEM_WAIT_S;
	bool bound = false;

	while (!atomic_load(&r->idle)) {
		if (now_s() > deadline || atomic_load(&r->done) == ULONG_MAX)
			return -1;
		sleep_ms(1);
	}
	pthread_mutex_lock(&r->lock);
	if (r->qb)
		bound = strcmp(mem_bind_on(r->qb, r->e->cq_b, mw, mr,
					   (uintptr_t)r->page, MEM_BUF,
					   IBV_ACCESS_REMOTE_READ |
					   IBV_ACCESS_REMOTE_WRITE, key),
			       OK_WC) == 0;
	if (bound)
		r->bound_qb = r->qb;
	pthread_mutex_unlock(&r->lock);
	return bound ? 0 : -1;
}

/* The type 2 window is revoked: a pair the requester left behind it goes. */
static void race_type2_revoked(struct race *r)
{
	pthread_mutex_lock(&r->lock);
	r->bound_qb = NULL;
	mem_unpair(r->left_qa, r->left_qb);
	r->left_qa = r->left_qb = NULL;
	pthread_mutex_unlock(&r->lock);
}

/* Revokes the key of cycle @kind (the MR or window it names) on owner's
 * QP @qm. 0, or -1. */
static int race_revoke(struct race *r, unsigned kind, struct ibv_mr *mr,
		       struct ibv_mw *mw, struct ibv_mr *mr_bind,
		       struct ibv_qp *qm, uint32_t key)
{
	struct ibv_send_wr wr;
	int rc;

	switch (kind) {
	case 0:
		return ibv_dereg_mr(mr);
	case 1:
		return mem_bind_type1(qm, r->e->cq_b, mw, mr_bind, 0, 0);
	case 2:
		return ibv_dealloc_mw(mw);
	case 3:
		memset(&wr, 0, sizeof(wr));
		wr.opcode = IBV_WR_LOCAL_INV;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.invalidate_rkey = key;
		rc = strcmp(mem_post(qm, &wr, r->e->cq_b), OK_WC) ? -1 : 0;
		break;
	default:
		rc = ibv_dealloc_mw(mw);
		break;
	}
	if (rc == 0)
		race_type2_revoked(r);
	return rc;
}

/* A pause of 1 to 8 ms, a different one each time. */
static void race_pause(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	sleep_ms(1 + (*seed >> 16) % 8);
}

/*
 * One cycle of kind @kind (race_kind[]): grant a key, let the requester use
 * it, revoke it, fence, mark, zero and watch. The bytes that changed while
 * watched, or -1 if a step failed.
 */
static int race_cycle(struct race *r, unsigned kind, struct ibv_mr *mr_bind,
		      struct ibv_qp *qm, unsigned *seed)
{
	struct mem_env *e = r->e;
	struct ibv_mr *mr = NULL;
	struct ibv_mw *mw = NULL;
	unsigned long in_flight;
	int changed = 0;
	unsigned i;
	uint32_t key;

	if (kind == 0) {
		mr = ibv_reg_mr(e->pd_b, r->page, MEM_BUF,
				IBV_ACCESS_LOCAL_WRITE | MEM_REMOTE);
		if (!mr)
			return -1;
		key = mr->rkey;
	} else if (kind < 3) {
		mw = ibv_alloc_mw(e->pd_b, IBV_MW_TYPE_1);
		if (!mw || mem_bind_type1(qm, e->cq_b, mw, mr_bind,
				     (uintptr_t)r->page, MEM_BUF))
			return -1;
		key = mw->rkey;
	} else {
		mw = ibv_alloc_mw(e->pd_b, IBV_MW_TYPE_2);
		if (!mw || race_bind_type2(r, mw, mr_bind, &key))
			return -1;
	}
	atomic_store(&r->key, key | (uint64_t)kind << 32);
	race_pause(seed);

	in_flight = atomic_load(&r->posted);
	if (race_revoke(r, kind, mr, mw, mr_bind, qm, key))
		return -1;
	while (atomic_load(&r->done) < in_flight)
		sleep_ms(1);
	atomic_store(&r->revoked, key);
	memset(r->page, 0, MEM_BUF);
	race_pause(seed);
	for (i = 0; i < MEM_BUF; i++)
		changed += r->page[i] != 0;
	if ((kind == 1 || kind == 3) && ibv_dealloc_mw(mw))
		return -1;
	return changed;
}

/*
 * race MODULE SECONDS: cycles for SECONDS, then the counts: each outcome
 * of each kind of request, the bytes written after a revocation and the
 * late grants (both must be 0), anything else the requester saw (must be
 * nothing); and both outcomes must have occurred, each kind of key having
 * granted, or the race was not run.
 */
static int cmd_race(const char *module, const char *seconds)
{
	double until = now_s() + atof(seconds);
	unsigned cycles[RACE_KINDS] = { 0 }, seed = 1, kind = 0, total = 0;
	struct ibv_qp *qma = NULL, *qmb = NULL;
	bool every_kind = true;
	long written = 0;
	struct ibv_mr *mr_bind;
	struct mem_env e;
	struct race r;
	pthread_t t;
	int rc = mem_setup(&e, "rxe0", "rxe1");

	if (rc)
		return rc;
	memset(&r, 0, sizeof(r));
	r.e = &e;
	pthread_mutex_init(&r.lock, NULL);
	if (posix_memalign((void **)&r.page, MEM_BUF, MEM_BUF))
		return cannot_run("race: out of memory");
	memset(r.page, 0, MEM_BUF);
	/* the MR the windows bind to: its own key is never published */
	mr_bind = ibv_reg_mr(e.pd_b, r.page, MEM_BUF, IBV_ACCESS_LOCAL_WRITE |
			     MEM_REMOTE | IBV_ACCESS_MW_BIND);
	if (!mr_bind || mem_pair(&e, &qma, &qmb))
		return cannot_run("race: an MR to bind to, a pair to bind on");
	atomic_store(&r.key, mr_bind->lkey ^ 0xff);	/* no object's */
	if (pthread_create(&t, NULL, race_requester, &r))
		return cannot_run("race: a thread");
	/* until the time is up or the requester has stopped */
	while (now_s() < until && atomic_load(&r.done) != ULONG_MAX) {
		int n = race_cycle(&r, kind, mr_bind, qmb, &seed);

		if (n < 0)
			break;
		written += n;
		cycles[kind]++;
		kind = (kind + 1) % RACE_KINDS;
	}
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);

	for (kind = 0; kind < RACE_KINDS; kind++) {
		tap_diag("race on %s: %s: %u cycles, %lu requests granted",
			 module, race_kind[kind], cycles[kind],
			 r.granted[kind]);
		every_kind = every_kind && cycles[kind] && r.granted[kind];
		total += cycles[kind];
	}
	tap_diag("race on %s: WRITE %lu ok %lu refused, READ %lu ok %lu "
		 "refused", module, r.ok[0], r.refused[0], r.ok[1],
		 r.refused[1]);
	tap_ok(every_kind && total >= 3 * RACE_KINDS,
	       "race on %s: every kind of cycle ran, each step succeeding, "
	       "each kind's key granting (%u cycles)", module, total);
	tap_ok(r.other == 0, "race on %s: every completion success or remote "
	       "access error (%lu others%s%s)", module, r.other,
	       r.other ? ": " : "", r.other_status);
	tap_ok(r.ok[0] && r.ok[1] && r.refused[0] + r.refused[1],
	       "race on %s: requests granted and refused both", module);
	tap_ok(written == 0, "race on %s: no byte written once its key was "
	       "revoked (%ld)", module, written);
	tap_ok(r.late_grants == 0, "race on %s: no request granted by a key "
	       "already revoked (%lu)", module, r.late_grants);
	mem_unpair(qma, qmb);
	ibv_dereg_mr(mr_bind);
	free(r.page);
	mem_teardown(&e);
	return tap_done();
}

/* ------------------------------------------------------------------------
 * main
 * ------------------------------------------------------------------------ */

static int usage(void)
{
	fputs("usage: rxe_check cache DEV NETDEV\n"
	      "       rxe_check gids DEV NETDEV\n"
	      "       rxe_check ud SEND_DEV RECV_DEV RECV_NETDEV\n"
	      "       rxe_check qkey DEV\n"
	      "       rxe_check mem REQUESTER_DEV RESPONDER_DEV\n"
	      "       rxe_check neg stock|ibkeys\n"
	      "       rxe_check race stock|ibkeys SECONDS\n", stderr);
	return EXIT_CANNOT_RUN;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && strcmp(argv[1], "cache") == 0)
		return cmd_cache(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "gids") == 0)
		return cmd_gids(argv[2], argv[3]);
	if (argc == 5 && strcmp(argv[1], "ud") == 0)
		return cmd_ud(argv[2], argv[3], argv[4]);
	if (argc == 3 && strcmp(argv[1], "qkey") == 0)
		return cmd_qkey(argv[2]);
	if (argc == 4 && strcmp(argv[1], "mem") == 0)
		return cmd_mem(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "neg") == 0)
		return cmd_neg(argv[2]);
	if (argc == 4 && strcmp(argv[1], "race") == 0)
		return cmd_race(argv[2], argv[3]);
	return usage();
}
