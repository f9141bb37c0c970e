/* SPDX-License-Identifier: MIT */
/*
 * verbs_cache - keep ibkeys' port caches in step with real RDMA devices.
 *
 * Opens every RDMA device, gives each port an ibk_port on storage sized
 * from what the device reports, fills its P_Key and GID tables from
 * libibverbs and sets the port state. Then it follows the devices' async
 * events: on each one it tells the cache first (ibk_port_event(), so every
 * reference into a changed table goes stale at once), then re-reads what
 * the cache now says needs a refill, then acknowledges the event. Each
 * re-read takes a refill ticket before its first ibv_query_*() call, so a
 * refill never publishes what the device held before a later event.
 *
 * Usage: verbs_cache [--once] [--help]
 *   --once  fill the caches, print each port's tables and exit
 *   default fill, print, then follow events until SIGINT or SIGTERM
 *
 * With no RDMA device (or no kernel RDMA support) it says so and exits 0.
 * Build: cc -std=c11 -I. examples/verbs_cache.c -libverbs
 */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "ib_tables.h"

/* A signal arriving just before poll() is noticed within this time. */
#define POLL_TIMEOUT_MS 500

_Static_assert(sizeof(union ibv_gid) == sizeof(struct ibk_gid),
	       "struct ibk_gid is byte-compatible with union ibv_gid");
_Static_assert((int)IBK_PORT_DOWN == (int)IBV_PORT_DOWN &&
	       (int)IBK_PORT_INIT == (int)IBV_PORT_INIT &&
	       (int)IBK_PORT_ARMED == (int)IBV_PORT_ARMED &&
	       (int)IBK_PORT_ACTIVE == (int)IBV_PORT_ACTIVE &&
	       (int)IBK_PORT_ACTIVE_DEFER == (int)IBV_PORT_ACTIVE_DEFER,
	       "port states are numbered as enum ibv_port_state");
_Static_assert((int)IBK_EVENT_DEVICE_FATAL == (int)IBV_EVENT_DEVICE_FATAL &&
	       (int)IBK_EVENT_PORT_ACTIVE == (int)IBV_EVENT_PORT_ACTIVE &&
	       (int)IBK_EVENT_PORT_ERR == (int)IBV_EVENT_PORT_ERR &&
	       (int)IBK_EVENT_LID_CHANGE == (int)IBV_EVENT_LID_CHANGE &&
	       (int)IBK_EVENT_PKEY_CHANGE == (int)IBV_EVENT_PKEY_CHANGE &&
	       (int)IBK_EVENT_SM_CHANGE == (int)IBV_EVENT_SM_CHANGE &&
	       (int)IBK_EVENT_CLIENT_REREGISTER == (int)IBV_EVENT_CLIENT_REREGISTER &&
	       (int)IBK_EVENT_GID_CHANGE == (int)IBV_EVENT_GID_CHANGE,
	       "events are numbered as enum ibv_event_type");

/* One port's cache and the storage behind it, all owned by this program. */
struct port_cache {
	struct ibk_port port;		/* any alignment malloc() gives */
	uint8_t num;			/* verbs port number, from 1 */
	uint32_t pkey_len;		/* entries the device reports */
	uint32_t gid_len;
	struct ibk_pkey_cell *pkey_cells;
	struct ibk_hash_slot *pkey_slots;
	struct ibk_gid_cell *gid_cells;
	struct ibk_hash_slot *gid_slots;
	ibk_pkey_t *pkeys;		/* staging for a refill, and for printing */
	struct ibk_gid_entry *gids;
};

struct device_cache {
	struct ibv_context *ctx;
	const char *name;
	uint8_t nports;
	struct port_cache **ports;	/* ports[i] is port i + 1 */
	bool watching;			/* open and still delivering events */
};

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

/* ------------------------------------------------------------------------
 * Errors: each names the device and, where there is one, the port
 * ------------------------------------------------------------------------ */

static void report(const struct device_cache *d, unsigned port,
		   const char *what, const char *why)
{
	if (port)
		fprintf(stderr, "verbs_cache: %s port %u: %s: %s\n",
			d->name, port, what, why);
	else
		fprintf(stderr, "verbs_cache: %s: %s: %s\n", d->name, what, why);
}

static void report_errno(const struct device_cache *d, unsigned port,
			 const char *what, int err)
{
	report(d, port, what, strerror(err ? err : EIO));
}

static void report_ibk(const struct device_cache *d, unsigned port,
		       const char *what, int rc)
{
	report(d, port, what, ibk_strerror(rc));
}

/* For a call about one table index: "ibv_query_pkey(index 3)". */
static void report_index(const struct device_cache *d, unsigned port,
			 const char *call, uint32_t index, const char *why)
{
	char what[64];

	snprintf(what, sizeof(what), "%s(index %u)", call, (unsigned)index);
	report(d, port, what, why);
}

/* ------------------------------------------------------------------------
 * From verbs values to the library's
 * ------------------------------------------------------------------------ */

static enum ibk_port_state port_state_from_verbs(enum ibv_port_state s)
{
	switch (s) {
	case IBV_PORT_INIT:
		return IBK_PORT_INIT;
	case IBV_PORT_ARMED:
		return IBK_PORT_ARMED;
	case IBV_PORT_ACTIVE:
		return IBK_PORT_ACTIVE;
	case IBV_PORT_ACTIVE_DEFER:	/* logically active: tables are valid */
		return IBK_PORT_ACTIVE_DEFER;
	default:			/* DOWN, NOP */
		return IBK_PORT_DOWN;
	}
}

static bool gid_type_from_verbs(uint32_t type, enum ibk_gid_type *out)
{
	switch (type) {
	case IBV_GID_TYPE_IB:
		*out = IBK_GID_TYPE_IB;
		return true;
	case IBV_GID_TYPE_ROCE_V1:
		*out = IBK_GID_TYPE_ROCE_V1;
		return true;
	case IBV_GID_TYPE_ROCE_V2:
		*out = IBK_GID_TYPE_ROCE_V2;
		return true;
	default:
		return false;
	}
}

static const char *gid_type_name(enum ibk_gid_type type)
{
	switch (type) {
	case IBK_GID_TYPE_IB:
		return "IB";
	case IBK_GID_TYPE_ROCE_V1:
		return "RoCE v1";
	case IBK_GID_TYPE_ROCE_V2:
		return "RoCE v2";
	default:
		return "?";
	}
}

/* The async events that change what a port's tables hold. */
static bool port_event_from_verbs(enum ibv_event_type type,
				  enum ibk_event_type *out)
{
	switch (type) {
	case IBV_EVENT_PORT_ACTIVE:
		*out = IBK_EVENT_PORT_ACTIVE;
		return true;
	case IBV_EVENT_PORT_ERR:
		*out = IBK_EVENT_PORT_ERR;
		return true;
	case IBV_EVENT_LID_CHANGE:
		*out = IBK_EVENT_LID_CHANGE;
		return true;
	case IBV_EVENT_PKEY_CHANGE:
		*out = IBK_EVENT_PKEY_CHANGE;
		return true;
	case IBV_EVENT_SM_CHANGE:
		*out = IBK_EVENT_SM_CHANGE;
		return true;
	case IBV_EVENT_CLIENT_REREGISTER:
		*out = IBK_EVENT_CLIENT_REREGISTER;
		return true;
	case IBV_EVENT_GID_CHANGE:
		*out = IBK_EVENT_GID_CHANGE;
		return true;
	default:
		return false;
	}
}

/* ------------------------------------------------------------------------
 * Filling the tables from the device
 * ------------------------------------------------------------------------ */

/* How often a refill is retried when a change event came in while the
 * device was being read (IBK_ESTALE): each retry reads it again. */
#define REFILL_TRIES 8

/*
 * Reads the whole P_Key table into p->pkeys. ibv_query_pkey() returns the
 * P_Key in network byte order: rdma-core's libibverbs/verbs.c parses the
 * sysfs value and stores htobe16() of it (the prototype says __be16), and
 * ibv_query_pkey(3) says "in network byte order". The cache holds host
 * order, hence ntohs().
 */
static int read_pkeys(const struct device_cache *d, struct port_cache *p)
{
	uint32_t i;

	for (i = 0; i < p->pkey_len; i++) {
		__be16 wire;

		if (ibv_query_pkey(d->ctx, p->num, (int)i, &wire) != 0) {
			report_index(d, p->num, "ibv_query_pkey", i,
				     strerror(errno ? errno : EIO));
			return -1;
		}
		p->pkeys[i] = ntohs(wire);
	}
	return 0;
}

/*
 * Re-reads the P_Key table and publishes it as one generation. The ticket
 * comes first: if a change event reaches the cache while the device is
 * being read (another thread handling events, say), the refill is refused
 * with IBK_ESTALE rather than publish what the subnet manager has already
 * replaced, and the table is read again.
 */
static int refill_pkeys(const struct device_cache *d, struct port_cache *p)
{
	int rc = IBK_ESTALE, tries;

	for (tries = 0; tries < REFILL_TRIES && rc == IBK_ESTALE; tries++) {
		uint32_t ticket = ibk_pkey_table_refill_ticket(&p->port.pkeys);

		if (read_pkeys(d, p) != 0)
			return -1;
		rc = ibk_pkey_table_refill(&p->port.pkeys, p->pkeys,
					   p->pkey_len, ticket);
	}
	/* a port not ARMED/ACTIVE has no table to cache: PORT_ACTIVE asks */
	if (rc != IBK_OK && rc != IBK_ENOTREADY) {
		report_ibk(d, p->num, "ibk_pkey_table_refill", rc);
		return -1;
	}
	return 0;
}

/*
 * Reads the GID table into p->gids with ibv_query_gid_ex() (rdma-core v32
 * and later), one index at a time: an index maps straight onto the
 * cache's slot, ENODATA marks an empty one, and an event re-reads only its
 * own port (ibv_query_gid_table() would return every port's valid
 * entries).
 */
static int read_gids(const struct device_cache *d, struct port_cache *p)
{
	struct ibk_gid_entry empty = { { { 0 } }, IBK_GID_TYPE_IB };
	uint32_t i;

	for (i = 0; i < p->gid_len; i++) {
		struct ibv_gid_entry e;
		int err = ibv_query_gid_ex(d->ctx, p->num, i, &e, 0);

		p->gids[i] = empty;
		if (err == ENODATA)
			continue;
		if (err != 0) {
			report_index(d, p->num, "ibv_query_gid_ex", i,
				     strerror(err));
			return -1;
		}
		if (!gid_type_from_verbs(e.gid_type, &p->gids[i].type)) {
			report_index(d, p->num, "ibv_query_gid_ex", i,
				     "unknown GID type; slot left empty");
			continue;
		}
		memcpy(p->gids[i].gid.raw, e.gid.raw, sizeof(e.gid.raw));
	}
	return 0;
}

/* As refill_pkeys(), for the GID table. */
static int refill_gids(const struct device_cache *d, struct port_cache *p)
{
	int rc = IBK_ESTALE, tries;

	for (tries = 0; tries < REFILL_TRIES && rc == IBK_ESTALE; tries++) {
		uint32_t ticket = ibk_gid_table_refill_ticket(&p->port.gids);

		if (read_gids(d, p) != 0)
			return -1;
		rc = ibk_gid_table_refill(&p->port.gids, p->gids, p->gid_len,
					  ticket);
	}
	if (rc != IBK_OK && rc != IBK_ENOTREADY) {
		report_ibk(d, p->num, "ibk_gid_table_refill", rc);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Per-port storage
 * ------------------------------------------------------------------------ */

static void port_free(struct port_cache *p)
{
	if (!p)
		return;
	free(p->pkey_cells);
	free(p->pkey_slots);
	free(p->gid_cells);
	free(p->gid_slots);
	free(p->pkeys);
	free(p->gids);
	free(p);
}

/*
 * Storage for tables of @pkey_len and @gid_len entries: per table, the
 * cells and hash slots of both latch copies (IBK_PKEY_CELLS(),
 * IBK_GID_CELLS(), IBK_HASH_SLOTS()). A table holds at least one
 * entry, so a port that reports none (iWARP has no P_Keys) gets one,
 * left empty. The library allocates nothing; this is where it happens.
 */
static struct port_cache *port_alloc(uint32_t pkey_len, uint32_t gid_len)
{
	uint32_t pkey_cap = pkey_len ? pkey_len : 1;
	uint32_t gid_cap = gid_len ? gid_len : 1;
	struct port_cache *p;

	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pkey_len = pkey_len;
	p->gid_len = gid_len;
	p->pkey_cells = malloc(IBK_PKEY_CELLS(pkey_cap) * sizeof(*p->pkey_cells));
	p->pkey_slots = malloc(IBK_HASH_SLOTS(pkey_cap) * sizeof(*p->pkey_slots));
	p->gid_cells = malloc(IBK_GID_CELLS(gid_cap) * sizeof(*p->gid_cells));
	p->gid_slots = malloc(IBK_HASH_SLOTS(gid_cap) * sizeof(*p->gid_slots));
	p->pkeys = malloc(pkey_cap * sizeof(*p->pkeys));
	p->gids = malloc(gid_cap * sizeof(*p->gids));
	if (!p->pkey_cells || !p->pkey_slots || !p->gid_cells ||
	    !p->gid_slots || !p->pkeys || !p->gids ||
	    ibk_port_init(&p->port, p->pkey_cells, pkey_cap, p->pkey_slots,
			  IBK_HASH_SLOTS(pkey_cap), p->gid_cells, gid_cap,
			  p->gid_slots, IBK_HASH_SLOTS(gid_cap)) != IBK_OK) {
		port_free(p);
		return NULL;
	}
	return p;
}

/* Queries port @num, builds its cache, fills both tables, sets the state. */
static struct port_cache *port_open(const struct device_cache *d, uint8_t num,
				    struct ibv_port_attr *attr)
{
	struct port_cache *p;
	int err, rc;

	err = ibv_query_port(d->ctx, num, attr);
	if (err) {
		report_errno(d, num, "ibv_query_port", err);
		return NULL;
	}
	if (attr->gid_tbl_len < 0 ||
	    (uint32_t)attr->gid_tbl_len > IBK_TABLE_MAX_CAPACITY) {
		report(d, num, "ibv_query_port", "GID table length out of range");
		return NULL;
	}
	p = port_alloc(attr->pkey_tbl_len, (uint32_t)attr->gid_tbl_len);
	if (!p) {
		report_errno(d, num, "allocating the port cache", ENOMEM);
		return NULL;
	}
	p->num = num;
	/* the state first: entering ARMED or ACTIVE is a change event, so a
	 * table read before it would be refused (and not served) */
	rc = ibk_port_set_state(&p->port, port_state_from_verbs(attr->state));
	if (rc != IBK_OK) {
		report_ibk(d, num, "ibk_port_set_state", rc);
		port_free(p);
		return NULL;
	}
	if (refill_pkeys(d, p) != 0 || refill_gids(d, p) != 0) {
		port_free(p);
		return NULL;
	}
	return p;
}

/* ------------------------------------------------------------------------
 * Printing a port's tables, read back from the cache
 * ------------------------------------------------------------------------ */

static void print_pkeys(struct port_cache *p)
{
	uint32_t i, shown = 0;
	int n = ibk_pkey_table_snapshot(&p->port.pkeys,
					p->pkey_len ? p->pkey_len : 1,
					p->pkeys, NULL);

	for (i = 0; n > 0 && i < (uint32_t)n; i++) {
		if (!ibk_pkey_is_valid(p->pkeys[i]))
			continue;
		printf("  pkey[%u] 0x%04x\n", (unsigned)i, (unsigned)p->pkeys[i]);
		shown++;
	}
	if (n < 0)
		printf("  P_Keys not shown: %s\n", ibk_strerror(n));
	else if (!shown)
		printf("  P_Keys: all %u entries empty\n", (unsigned)p->pkey_len);
}

static void print_gids(struct port_cache *p)
{
	char text[IBK_GID_STRLEN];
	uint32_t i, shown = 0;
	int n = ibk_gid_table_snapshot(&p->port.gids,
				       p->gid_len ? p->gid_len : 1,
				       p->gids, NULL);

	for (i = 0; n > 0 && i < (uint32_t)n; i++) {
		if (ibk_gid_is_zero(&p->gids[i].gid))
			continue;
		printf("  gid[%u] %s %s\n", (unsigned)i,
		       ibk_gid_ntop(&p->gids[i].gid, text),
		       gid_type_name(p->gids[i].type));
		shown++;
	}
	if (n < 0)
		printf("  GIDs not shown: %s\n", ibk_strerror(n));
	else if (!shown)
		printf("  GIDs: all %u entries empty\n", (unsigned)p->gid_len);
}

/* A port not ARMED or ACTIVE has tables that mean nothing: the cache
 * answers IBK_ENOTREADY, and that is what gets printed. */
static void print_port(const struct device_cache *d, struct port_cache *p,
		       const struct ibv_port_attr *attr)
{
	printf("%s port %u: %s, %s, P_Key table %u, GID table %u\n",
	       d->name, (unsigned)p->num, ibv_port_state_str(attr->state),
	       attr->link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" :
							     "InfiniBand",
	       (unsigned)p->pkey_len, (unsigned)p->gid_len);
	print_pkeys(p);
	print_gids(p);
}

/* ------------------------------------------------------------------------
 * Devices
 * ------------------------------------------------------------------------ */

static void device_close(struct device_cache *d)
{
	unsigned i;

	for (i = 0; d->ports && i < d->nports; i++)
		port_free(d->ports[i]);
	free(d->ports);
	d->ports = NULL;
	if (d->ctx && ibv_close_device(d->ctx) != 0)
		report_errno(d, 0, "ibv_close_device", errno);
	d->ctx = NULL;
	d->watching = false;
}

/* Opens @dev and caches every port, printing each. 0, or -1 reported. */
static int device_open(struct device_cache *d, struct ibv_device *dev)
{
	struct ibv_device_attr dev_attr;
	struct ibv_port_attr attr;
	const char *name = ibv_get_device_name(dev);
	unsigned num;
	int err;

	memset(d, 0, sizeof(*d));
	d->name = name ? name : "(unnamed device)";
	d->ctx = ibv_open_device(dev);
	if (!d->ctx) {
		report_errno(d, 0, "ibv_open_device", errno);
		return -1;
	}
	err = ibv_query_device(d->ctx, &dev_attr);
	if (err) {
		report_errno(d, 0, "ibv_query_device", err);
		device_close(d);
		return -1;
	}
	d->nports = dev_attr.phys_port_cnt;
	d->ports = calloc(d->nports ? d->nports : 1, sizeof(*d->ports));
	if (!d->ports) {
		report_errno(d, 0, "allocating the port list", ENOMEM);
		device_close(d);
		return -1;
	}
	for (num = 1; num <= d->nports; num++) {
		d->ports[num - 1] = port_open(d, (uint8_t)num, &attr);
		if (!d->ports[num - 1]) {
			device_close(d);
			return -1;
		}
		print_port(d, d->ports[num - 1], &attr);
	}
	d->watching = true;
	return 0;
}

/* ------------------------------------------------------------------------
 * Events
 * ------------------------------------------------------------------------ */

/*
 * After an event, re-read each table the cache reports as awaiting a
 * refill: a read answers IBK_ESTALE exactly then, so this code keeps no
 * list of which event touches which table. While the port is down a read
 * answers IBK_ENOTREADY instead, and the PORT_ACTIVE event that ends the
 * outage asks for both tables again.
 */
static int refresh_port(const struct device_cache *d, struct port_cache *p)
{
	struct ibk_gid_entry gid;
	ibk_pkey_t pkey;
	int rc = 0, state = ibk_pkey_table_get(&p->port.pkeys, 0, &pkey);

	if (state == IBK_ENOTREADY)
		printf("%s port %u: not ARMED/ACTIVE; tables re-read when it is\n",
		       d->name, (unsigned)p->num);
	if (state == IBK_ESTALE) {
		rc |= refill_pkeys(d, p);
		printf("%s port %u: P_Key table re-read%s\n", d->name,
		       (unsigned)p->num, rc ? " FAILED" : "");
	}
	if (ibk_gid_table_get(&p->port.gids, 0, &gid) == IBK_ESTALE) {
		int grc = refill_gids(d, p);

		printf("%s port %u: GID table re-read%s\n", d->name,
		       (unsigned)p->num, grc ? " FAILED" : "");
		rc |= grc;
	}
	return rc;
}

/* The device is gone: its ports are DOWN, stop watching it. A program that
 * re-opens the device would call ibk_port_reset() on each port and refill:
 * its generations move on, so no reference from before reads fresh. */
static void device_fatal(struct device_cache *d)
{
	unsigned i;

	for (i = 0; i < d->nports; i++)
		ibk_port_event(&d->ports[i]->port, IBK_EVENT_DEVICE_FATAL);
	report(d, 0, "async event", "device fatal error; no longer watched");
	d->watching = false;
}

static int handle_event(struct device_cache *d,
			const struct ibv_async_event *ev)
{
	enum ibk_event_type kind;
	unsigned num = (unsigned)ev->element.port_num;
	struct port_cache *p;
	int rc;

	if (ev->event_type == IBV_EVENT_DEVICE_FATAL) {
		device_fatal(d);
		return -1;
	}
	if (!port_event_from_verbs(ev->event_type, &kind)) {
		/* about a QP, CQ or SRQ: this program creates none */
		printf("%s: %s: not about a port's tables, ignored\n", d->name,
		       ibv_event_type_str(ev->event_type));
		return 0;
	}
	if (num < 1 || num > d->nports) {
		report(d, num, ibv_event_type_str(ev->event_type),
		       "event for a port the device did not report");
		return -1;
	}
	p = d->ports[num - 1];
	printf("%s port %u: %s\n", d->name, num,
	       ibv_event_type_str(ev->event_type));
	/* First the cache, so references into what changed go stale now. */
	rc = ibk_port_event(&p->port, kind);
	if (rc != IBK_OK) {
		report_ibk(d, num, "ibk_port_event", rc);
		return -1;
	}
	return refresh_port(d, p);
}

/* Handles every event queued on @d; its async_fd is non-blocking. */
static int drain_events(struct device_cache *d)
{
	struct ibv_async_event ev;
	int rc = 0;

	while (d->watching && ibv_get_async_event(d->ctx, &ev) == 0) {
		rc |= handle_event(d, &ev);
		/* Acknowledged once the cache is consistent again. */
		ibv_ack_async_event(&ev);
	}
	if (d->watching && errno != EAGAIN && errno != EWOULDBLOCK) {
		report_errno(d, 0, "ibv_get_async_event", errno);
		d->watching = false;
		rc = -1;
	}
	return rc;
}

static int set_nonblocking(const struct device_cache *d, int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		report_errno(d, 0, "making async_fd non-blocking", errno);
		return -1;
	}
	return 0;
}

static int install_stop_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: poll() returns EINTR at once */
	if (sigaction(SIGINT, &sa, NULL) != 0 ||
	    sigaction(SIGTERM, &sa, NULL) != 0) {
		perror("verbs_cache: sigaction");
		return -1;
	}
	return 0;
}

/*
 * Follows every watched device's async events until SIGINT/SIGTERM or no
 * device is left. poll() with a timeout rather than a bare blocking
 * ibv_get_async_event(), so a stop request is always noticed.
 */
static int watch_events(struct device_cache *devs, unsigned ndevs)
{
	struct pollfd *fds = calloc(ndevs, sizeof(*fds));
	unsigned i, watched;
	int rc = 0;

	if (!fds || install_stop_handlers() != 0) {
		if (!fds)
			fprintf(stderr, "verbs_cache: out of memory\n");
		free(fds);
		return -1;
	}
	for (i = 0; i < ndevs; i++) {
		if (devs[i].watching &&
		    set_nonblocking(&devs[i], devs[i].ctx->async_fd) != 0) {
			devs[i].watching = false;
			rc = -1;
		}
		fds[i].fd = devs[i].watching ? devs[i].ctx->async_fd : -1;
		fds[i].events = POLLIN;
	}
	printf("verbs_cache: following port events; SIGINT or SIGTERM stops\n");
	fflush(stdout);
	for (;;) {
		for (i = 0, watched = 0; i < ndevs; i++)
			watched += fds[i].fd >= 0;
		if (stop_signal || !watched)
			break;
		if (poll(fds, ndevs, POLL_TIMEOUT_MS) < 0) {
			if (errno == EINTR)
				continue;
			perror("verbs_cache: poll");
			rc = -1;
			break;
		}
		for (i = 0; i < ndevs; i++) {
			if (fds[i].revents & POLLIN)
				rc |= drain_events(&devs[i]);
			if (fds[i].revents & (POLLERR | POLLHUP | POLLNVAL)) {
				report(&devs[i], 0, "async_fd", "closed");
				devs[i].watching = false;
				rc = -1;
			}
			if (!devs[i].watching)
				fds[i].fd = -1;
		}
		fflush(stdout);
	}
	if (stop_signal)
		printf("verbs_cache: stopped by signal %d\n", (int)stop_signal);
	free(fds);
	return rc;
}

/* ------------------------------------------------------------------------
 * main
 * ------------------------------------------------------------------------ */

static void usage(FILE *to)
{
	fprintf(to,
		"usage: verbs_cache [--once] [--help]\n"
		"  Caches every RDMA port's P_Key and GID tables with ibkeys and\n"
		"  keeps them current from the devices' async events.\n"
		"  --once  fill the caches, print each port's tables, exit\n");
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct device_cache *devs;
	bool once = false;
	int ndevs = 0, i, opened = 0, rc = 0;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--once") == 0) {
			once = true;
		} else if (strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "verbs_cache: bad argument '%s'\n",
				argv[i]);
			usage(stderr);
			return 2;
		}
	}

	/* NULL with ENOSYS: the kernel has no RDMA support, so no devices. */
	list = ibv_get_device_list(&ndevs);
	if (!list && errno != ENOSYS) {
		perror("verbs_cache: ibv_get_device_list");
		return 1;
	}
	if (!list || ndevs <= 0) {
		printf("verbs_cache: no RDMA devices found; nothing to cache\n");
		if (list)
			ibv_free_device_list(list);
		return 0;
	}

	devs = calloc((size_t)ndevs, sizeof(*devs));
	if (!devs) {
		fprintf(stderr, "verbs_cache: out of memory\n");
		ibv_free_device_list(list);
		return 1;
	}
	for (i = 0; i < ndevs; i++) {
		if (device_open(&devs[i], list[i]) == 0)
			opened++;
		else
			rc = -1;
	}
	if (!once && opened)
		rc |= watch_events(devs, (unsigned)ndevs);
	for (i = 0; i < ndevs; i++)
		device_close(&devs[i]);
	free(devs);
	ibv_free_device_list(list);
	return rc == 0 && opened ? 0 : 1;
}
