/* SPDX-License-Identifier: MIT */
/*
 * test_tshark.c - Wireshark's InfiniBand dissector as the oracle for the
 * wire accessors and the opcode tables.
 *
 * Part 1, BTH and DETH. Each packet is a RoCEv2 UD SEND Only (Ethernet /
 * IPv4 / UDP 4791 / BTH / DETH / payload / ICRC) whose header fields the
 * test draws at random. The
 * headers are built twice, once with the library's setters and
 * ibk_tx_fill_keys() and once with byte stores written here from the IBA
 * layout (vol. 1, 9.2 BTH and 9.3.3 DETH); both builds start from the same
 * random bytes, so equal images also show that no setter touches a reserved
 * bit. The library's getters must read every field back, and tshark, reading
 * the packets from a pcap file, must decode the values the test chose.
 *
 * Part 2, the headers of memory access: RC RDMA WRITE with a RETH, RDMA
 * READ requests, COMPARE SWAP and FETCH ADD with an AtomicETH, SEND with
 * invalidate with an IETH, acknowledgements with an AETH (ACKs, RNR NAKs,
 * NAKs), every field random, built with the setters; tshark must decode
 * the values chosen, and the AETH syndrome's type and value as
 * ibk_aeth_is_*() and ibk_aeth_value() read them.
 *
 * Part 3, which opcodes carry which header: one packet for each of the 128
 * RC, UC, RD and UD opcodes; tshark must show a RETH, AtomicETH, IETH,
 * AETH or ImmDt exactly where ibk_opcode_has_*() say one is.
 *
 * Part 4, subnet management: SMPs (PortInfo, P_KeyTable, GUIDInfo,
 * LID-routed and directed-route) and SubnTrap Notices (traps 256, 257,
 * 258) built with the library, as native InfiniBand frames from the LRH
 * on (pcap link type 147, DLT_USER0, mapped to the infiniband dissector
 * with tshark's user_dlts table); tshark must decode every field as
 * chosen, P_Keys, GUIDs and GIDs included.
 *
 * Wireshark 4.0 dissects UDP port 4791 as RoCEv2 ("RRoCE") with no options
 * and does not verify the ICRC (nor a native frame's VCRC), so the
 * trailers are left zero.
 */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ib_keys.h"
#include "rng.h"
#include "tap.h"

#define NPKT		64
#define SEED		0x1b1b5eedc0ffee00ull
#define ROCEV2_PORT	4791
#define ETH_LEN		14
#define IPV4_LEN	20
#define UDP_LEN		8
#define PAYLOAD_LEN	16
#define ICRC_LEN	4
#define IB_HDR_LEN	(IBK_BTH_LEN + IBK_DETH_LEN)
#define IB_MAX		(IBK_BTH_LEN + IBK_ATOMICETH_LEN + 64)
#define ROCE_FRAME_MAX	(ETH_LEN + IPV4_LEN + UDP_LEN + IB_MAX + ICRC_LEN)
/* part 4: LRH, BTH, DETH, a MAD, ICRC and VCRC */
#define SMP_FRAME_LEN	(IBK_LRH_LEN + IBK_BTH_LEN + IBK_DETH_LEN + \
			 IBK_MAD_LEN + ICRC_LEN + 2)
#define FRAME_MAX	(SMP_FRAME_LEN > ROCE_FRAME_MAX ? SMP_FRAME_LEN : \
			 ROCE_FRAME_MAX)
#define MAX_DIAG	4
#define NMEM		96	/* part 2 packets */
#define NOPS		128	/* part 3: opcodes 0x00-0x7f */

/* One Ethernet frame of a capture. */
struct frame {
	size_t len;
	uint8_t b[FRAME_MAX];
};

/* What the test chose for one packet. */
struct pkt {
	uint8_t    opcode;
	bool       se, mig;
	uint8_t    padcnt, tver;
	ibk_pkey_t pkey;
	bool       fecn, becn;
	uint32_t   dest_qp;
	bool       ackreq;
	uint32_t   psn;
	ibk_qkey_t wr_qkey;	/* the send work request's Q_Key */
	ibk_qkey_t qp_qkey;	/* the sending QP context's Q_Key */
	ibk_qkey_t wire_qkey;	/* what the DETH must carry */
	uint32_t   src_qp;
};

/*
 * A QP number of 2..0xffffff: QP0 and QP1 would make the dissector parse
 * the payload as a MAD.
 */
static uint32_t random_qp(void)
{
	return 2 + test_rng_below(0xffffffu - 1);
}

/*
 * The Q_Key a UD send puts on the wire (IBA 10.2.5): the QP context's own
 * when the work request's has its high-order bit set, else the request's.
 */
static ibk_qkey_t qkey_on_wire(ibk_qkey_t wr_qkey, ibk_qkey_t qp_qkey)
{
	return (wr_qkey & 0x80000000u) ? qp_qkey : wr_qkey;
}

static void choose_random(struct pkt *p)
{
	p->opcode = IBK_OPCODE_UD_SEND_ONLY;
	p->se = test_rng64() & 1;
	p->mig = test_rng64() & 1;
	p->padcnt = (uint8_t)(test_rng64() & 3);
	p->tver = (uint8_t)(test_rng64() & 15);
	p->pkey = (ibk_pkey_t)test_rng64();
	p->fecn = test_rng64() & 1;
	p->becn = test_rng64() & 1;
	p->dest_qp = random_qp();
	p->ackreq = test_rng64() & 1;
	p->psn = (uint32_t)test_rng64() & 0xffffff;
	p->wr_qkey = (ibk_qkey_t)test_rng64();
	p->qp_qkey = (ibk_qkey_t)test_rng64();
	p->src_qp = random_qp();
}

/*
 * The first packets pin the edges: the default partition's full and limited
 * keys, the lowest valid full key, the GSI Q_Key (put by a QP context behind
 * a controlled work-request Q_Key), IPoIB's Q_Key, the all-ones Q_Key, and
 * the largest and smallest QP numbers the test allows.
 */
static void choose_edges(struct pkt *p)
{
	p[0].pkey = 0xffff;
	p[0].wr_qkey = 0x80000000u | (ibk_qkey_t)test_rng64();
	p[0].qp_qkey = 0x80010000u;
	p[0].dest_qp = 0xffffff;
	p[0].src_qp = 2;
	p[0].psn = 0xffffff;

	p[1].pkey = 0x7fff;
	p[1].wr_qkey = 0x00000b1bu;
	p[1].dest_qp = 2;
	p[1].src_qp = 0xffffff;
	p[1].psn = 0;

	p[2].pkey = 0x8001;
	p[2].wr_qkey = 0xffffffffu;
	p[2].qp_qkey = 0xffffffffu;
	p[2].dest_qp = 0xffffff;
	p[2].src_qp = 0xffffff;
}

/* (a) The library builds the headers. */
static void build_with_library(uint8_t *hdr, const struct pkt *p)
{
	uint8_t *bth = hdr, *deth = hdr + IBK_BTH_LEN;

	ibk_bth_set_opcode(bth, p->opcode);
	ibk_bth_set_se(bth, p->se);
	ibk_bth_set_mig(bth, p->mig);
	ibk_bth_set_padcnt(bth, p->padcnt);
	ibk_bth_set_tver(bth, p->tver);
	ibk_bth_set_fecn(bth, p->fecn);
	ibk_bth_set_becn(bth, p->becn);
	ibk_bth_set_dest_qp(bth, p->dest_qp);
	ibk_bth_set_ackreq(bth, p->ackreq);
	ibk_bth_set_psn(bth, p->psn);
	ibk_deth_set_src_qp(deth, p->src_qp);
	ibk_tx_fill_keys(bth, deth, p->pkey, p->wr_qkey, p->qp_qkey);
}

static void put_be24(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 16);
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)v;
}

static void put_be32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	put_be24(b + 1, v);
}

/*
 * (b) The headers by hand from the IBA layout. BTH: OpCode @0; SE 0x80,
 * M 0x40, PadCnt 0x30, TVer 0x0f @1; P_Key @2-3; FECN 0x80, BECN 0x40 and
 * six reserved bits @4; DestQP @5-7; AckReq 0x80 and seven reserved bits @8;
 * PSN @9-11. DETH: Q_Key @0-3; reserved @4; SrcQP @5-7. Reserved bits are
 * left as they were.
 */
static void build_by_hand(uint8_t *hdr, const struct pkt *p)
{
	uint8_t *bth = hdr, *deth = hdr + IBK_BTH_LEN;

	bth[0] = p->opcode;
	bth[1] = (uint8_t)(p->se << 7 | p->mig << 6 | p->padcnt << 4 | p->tver);
	bth[2] = (uint8_t)(p->pkey >> 8);
	bth[3] = (uint8_t)p->pkey;
	bth[4] = (uint8_t)(p->fecn << 7 | p->becn << 6 | (bth[4] & 0x3f));
	put_be24(bth + 5, p->dest_qp);
	bth[8] = (uint8_t)(p->ackreq << 7 | (bth[8] & 0x7f));
	put_be24(bth + 9, p->psn);
	put_be32(deth, p->wire_qkey);
	put_be24(deth + 5, p->src_qp);
}

/* Every getter must return what the test chose. */
static bool getters_agree(const uint8_t *hdr, const struct pkt *p)
{
	const uint8_t *bth = hdr, *deth = hdr + IBK_BTH_LEN;

	return ibk_bth_opcode(bth) == p->opcode &&
	       ibk_bth_se(bth) == p->se &&
	       ibk_bth_mig(bth) == p->mig &&
	       ibk_bth_padcnt(bth) == p->padcnt &&
	       ibk_bth_tver(bth) == p->tver &&
	       ibk_bth_pkey(bth) == p->pkey &&
	       ibk_bth_fecn(bth) == p->fecn &&
	       ibk_bth_becn(bth) == p->becn &&
	       ibk_bth_dest_qp(bth) == p->dest_qp &&
	       ibk_bth_ackreq(bth) == p->ackreq &&
	       ibk_bth_psn(bth) == p->psn &&
	       ibk_deth_qkey(deth) == p->wire_qkey &&
	       ibk_deth_src_qp(deth) == p->src_qp;
}

static void diag_bytes(const char *what, const uint8_t *b, size_t n)
{
	char line[3 * IB_HDR_LEN + 1];
	size_t i;

	for (i = 0; i < n && i < IB_HDR_LEN; i++)
		sprintf(line + 3 * i, "%02x ", b[i]);
	line[3 * i] = '\0';
	tap_diag("%s: %s", what, line);
}

static uint16_t ipv4_checksum(const uint8_t *h)
{
	uint32_t sum = 0;
	int i;

	for (i = 0; i < IPV4_LEN; i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * Ethernet / IPv4 / UDP around @ib_len bytes of InfiniBand transport
 * (headers and payload) and a zero ICRC.
 */
static void build_frame(struct frame *fr, const uint8_t *ib_bytes,
			size_t ib_len, unsigned idx)
{
	static const uint8_t macs[12] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x02,	/* destination */
		0x02, 0x00, 0x00, 0x00, 0x00, 0x01,	/* source */
	};
	uint8_t *f = fr->b, *ip = f + ETH_LEN, *udp = ip + IPV4_LEN;
	uint8_t *ib = udp + UDP_LEN;
	size_t len = ETH_LEN + IPV4_LEN + UDP_LEN + ib_len + ICRC_LEN;
	uint16_t sum;

	fr->len = len;
	memset(f, 0, FRAME_MAX);
	memcpy(f, macs, sizeof(macs));
	f[12] = 0x08;				/* EtherType IPv4 */
	f[13] = 0x00;

	ip[0] = 0x45;				/* version 4, 5 words */
	ip[2] = (uint8_t)((len - ETH_LEN) >> 8);
	ip[3] = (uint8_t)(len - ETH_LEN);
	ip[6] = 0x40;				/* don't fragment */
	ip[8] = 64;				/* TTL */
	ip[9] = 17;				/* UDP */
	put_be32(ip + 12, 0x0a000001);		/* 10.0.0.1 */
	put_be32(ip + 16, 0x0a000002);		/* 10.0.0.2 */
	sum = ipv4_checksum(ip);
	ip[10] = (uint8_t)(sum >> 8);
	ip[11] = (uint8_t)sum;

	udp[0] = 0xc0;				/* source port 49152 + idx */
	udp[1] = (uint8_t)idx;
	udp[2] = ROCEV2_PORT >> 8;
	udp[3] = ROCEV2_PORT & 0xff;
	udp[4] = (uint8_t)((len - ETH_LEN - IPV4_LEN) >> 8);
	udp[5] = (uint8_t)(len - ETH_LEN - IPV4_LEN);
	/* UDP checksum 0: none, as RoCEv2 senders commonly send it */

	memcpy(ib, ib_bytes, ib_len);
}

/* The UD headers of part 1 and their payload. */
static void build_ud_frame(struct frame *fr, const uint8_t *ib_hdr,
			   unsigned idx)
{
	uint8_t ib[IB_HDR_LEN + PAYLOAD_LEN];
	int i;

	memcpy(ib, ib_hdr, IB_HDR_LEN);
	for (i = 0; i < PAYLOAD_LEN; i++)
		ib[IB_HDR_LEN + i] = (uint8_t)(0xa0 + i);
	build_frame(fr, ib, sizeof(ib), idx);
}

static bool put32(FILE *fp, uint32_t v)
{
	return fwrite(&v, sizeof(v), 1, fp) == 1;
}

static bool put16(FILE *fp, uint16_t v)
{
	return fwrite(&v, sizeof(v), 1, fp) == 1;
}

/* A classic pcap file in host byte order (readers detect it by the magic),
 * of link type @linktype. */
static bool write_pcap_linktype(const char *path, const struct frame *frames,
				unsigned n, uint32_t linktype)
{
	FILE *fp = fopen(path, "wb");
	bool ok;
	unsigned i;

	if (!fp)
		return false;
	ok = put32(fp, 0xa1b2c3d4) && put16(fp, 2) && put16(fp, 4) &&
	     put32(fp, 0) && put32(fp, 0) &&	/* thiszone, sigfigs */
	     put32(fp, 65535) && put32(fp, linktype);	/* snaplen */
	for (i = 0; ok && i < n; i++)
		ok = put32(fp, i) && put32(fp, 0) &&
		     put32(fp, (uint32_t)frames[i].len) &&
		     put32(fp, (uint32_t)frames[i].len) &&
		     fwrite(frames[i].b, frames[i].len, 1, fp) == 1;
	return fclose(fp) == 0 && ok;
}

/* An Ethernet capture (LINKTYPE_ETHERNET). */
static bool write_pcap(const char *path, const struct frame *frames,
		       unsigned n)
{
	return write_pcap_linktype(path, frames, n, 1);
}

/* The fields tshark prints for each packet, in this order. */
enum field {
	F_OPCODE, F_SE, F_MIG, F_PADCNT, F_TVER, F_PKEY, F_DESTQP, F_ACKREQ,
	F_PSN, F_QKEY, F_SRCQP, NFIELDS
};

static const struct {
	const char *name;	/* tshark field */
	const char *what;	/* for the TAP line */
} fields[NFIELDS] = {
	{ "infiniband.bth.opcode", "BTH OpCode" },
	{ "infiniband.bth.se",     "BTH SE" },
	{ "infiniband.bth.m",      "BTH MigReq" },
	{ "infiniband.bth.padcnt", "BTH PadCnt" },
	{ "infiniband.bth.tver",   "BTH TVer" },
	{ "infiniband.bth.p_key",  "BTH P_Key" },
	{ "infiniband.bth.destqp", "BTH DestQP" },
	{ "infiniband.bth.a",      "BTH AckReq" },
	{ "infiniband.bth.psn",    "BTH PSN" },
	{ "infiniband.deth.q_key", "DETH Q_Key" },
	{ "infiniband.deth.srcqp", "DETH SrcQP" },
};

static uint64_t expected(const struct pkt *p, enum field f)
{
	switch (f) {
	case F_OPCODE:	return p->opcode;
	case F_SE:	return p->se;
	case F_MIG:	return p->mig;
	case F_PADCNT:	return p->padcnt;
	case F_TVER:	return p->tver;
	case F_PKEY:	return p->pkey;
	case F_DESTQP:	return p->dest_qp;
	case F_ACKREQ:	return p->ackreq;
	case F_PSN:	return p->psn;
	case F_QKEY:	return p->wire_qkey;
	case F_SRCQP:	return p->src_qp;
	case NFIELDS:	break;
	}
	return ~0ull;
}

/*
 * One tshark value: a number in any base tshark picks ("0x..." or decimal),
 * or a boolean, which some tshark versions print as True/False.
 */
static bool parse_value(const char *s, uint64_t *out)
{
	char *end;

	if (strcmp(s, "True") == 0 || strcmp(s, "False") == 0) {
		*out = s[0] == 'T';
		return true;
	}
	if (*s < '0' || *s > '9')
		return false;
	*out = strtoull(s, &end, 0);
	return *end == '\0';
}

/*
 * Split one output line at the separators into its @n fields (empty
 * strings where the packet has no such field). False if the count is off.
 */
static bool split_line(char *line, char **vals, int n)
{
	char *s = line;
	int f;

	for (f = 0; f < n; f++) {
		char *sep = strchr(s, ';');

		if ((sep == NULL) != (f == n - 1))
			return false;
		if (sep)
			*sep = '\0';
		vals[f] = s;
		s = sep + 1;
	}
	return true;
}

static const char *tshark_program(void)
{
	const char *env = getenv("TSHARK");

	return env && *env ? env : "tshark";
}

/*
 * The shell command: tshark's path and the capture's are single-quoted, so
 * neither may hold a quote. stderr is dropped: tshark warns when run as
 * root. False if the command does not fit in @size.
 */
static bool tshark_command(char *cmd, size_t size, const char *path,
			   const char *opts, const char *const *names, int n)
{
	const char *prog = tshark_program();
	size_t len;
	int f;

	if (strchr(prog, '\'') || strchr(path, '\''))
		return false;
	/* ';' between fields, then @opts (which occurrences, a link type) */
	len = (size_t)snprintf(cmd, size, "'%s' -n -r '%s' -T fields "
			       "-E separator=';' %s", prog, path, opts);
	for (f = 0; f < n && len < size; f++)
		len += (size_t)snprintf(cmd + len, size - len, " -e %s",
					names[f]);
	if (len < size)
		len += (size_t)snprintf(cmd + len, size - len, " 2>/dev/null");
	return len < size;
}

static bool tshark_installed(void)
{
	const char *prog = tshark_program();
	char cmd[1024];
	int len;

	if (strchr(prog, '\''))
		return false;
	len = snprintf(cmd, sizeof(cmd), "command -v '%s' >/dev/null 2>&1",
		       prog);
	return len > 0 && (size_t)len < sizeof(cmd) && system(cmd) == 0;
}

/* Checks one decoded packet: row @i's @n fields; counts mismatches. */
typedef void (*row_check)(unsigned i, char **vals, void *ctx);

/*
 * Run tshark with @opts over @path printing the fields @names[0..n) of
 * each packet and hand each line to @check. Returns the number of packets
 * decoded (lines with the right number of fields, of the @npkt expected).
 */
static unsigned run_tshark_opts(const char *path, const char *opts,
				const char *const *names, int n,
				unsigned npkt, row_check check, void *ctx)
{
	char cmd[4096];
	char line[4096];
	char *vals[32];
	unsigned row = 0, decoded = 0;
	FILE *out;
	int status;

	if (n > 32 || !tshark_command(cmd, sizeof(cmd), path, opts, names,
				      n)) {
		tap_diag("cannot quote %s for the shell", path);
		return 0;
	}
	tap_diag("%s", cmd);

	out = popen(cmd, "r");
	if (!out)
		return 0;
	while (fgets(line, sizeof(line), out)) {
		unsigned i = row++;

		line[strcspn(line, "\r\n")] = '\0';
		if (i >= npkt || !split_line(line, vals, n)) {
			if (i < MAX_DIAG || i >= npkt)
				tap_diag("packet %u not decoded: %s", i, line);
			continue;
		}
		decoded++;
		check(i, vals, ctx);
	}
	status = pclose(out);
	if (!tap_ok(status != -1 && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 0, "tshark exits 0"))
		tap_diag("pclose status %d", status);
	if (row != npkt)
		tap_diag("tshark printed %u lines for %u packets", row, npkt);
	return decoded;
}

/* run_tshark_opts() printing each field's first occurrence only. */
static unsigned run_tshark(const char *path, const char *const *names, int n,
			   unsigned npkt, row_check check, void *ctx)
{
	return run_tshark_opts(path, "-E occurrence=f", names, n, npkt, check,
			       ctx);
}

/* Part 1: every field of UD packet @i against what the test chose. */
struct ud_ctx {
	const struct pkt *pkts;
	unsigned bad[NFIELDS];
};

static void check_ud_row(unsigned i, char **vals, void *arg)
{
	struct ud_ctx *ctx = (struct ud_ctx *)arg;
	int f;

	for (f = 0; f < NFIELDS; f++) {
		uint64_t want = expected(&ctx->pkts[i], (enum field)f), got;

		if (parse_value(vals[f], &got) && got == want)
			continue;
		if (ctx->bad[f]++ < MAX_DIAG)
			tap_diag("packet %u %s: tshark '%s', chosen 0x%llx",
				 i, fields[f].what, vals[f],
				 (unsigned long long)want);
	}
}

static bool make_temp_dir(char *dir, size_t size)
{
	const char *tmp = getenv("TMPDIR");
	int len;

	if (!tmp || !*tmp)
		tmp = "/tmp";
	len = snprintf(dir, size, "%s/ibkeys-tshark-XXXXXX", tmp);
	return len > 0 && (size_t)len < size && mkdtemp(dir) != NULL;
}

/* ------------------------------------------------------------------------
 * Part 2: RETH, AtomicETH, IETH and AETH
 * ------------------------------------------------------------------------ */

enum mem_kind { MK_WRITE, MK_READ, MK_CSWAP, MK_FADD, MK_SEND_INV, MK_ACK,
		MK_KINDS };

/* What the test chose for one RC packet. */
struct mem_pkt {
	enum mem_kind kind;
	uint8_t opcode;
	uint64_t va, swap_add, compare;
	uint32_t rkey, dma_len, msn;
	uint8_t syndrome;
};

enum mem_field {
	MF_OPCODE, MF_VA, MF_RKEY, MF_DMALEN, MF_SWAP, MF_CMP, MF_IETH,
	MF_SYNDROME, MF_MSN, MF_SYN_TYPE, MF_SYN_ERROR, MF_SYN_CREDITS,
	MF_SYN_TIMER, MF_COUNT
};

static const char *const mem_fields[MF_COUNT] = {
	"infiniband.bth.opcode",
	"infiniband.reth.va",		/* AtomicETH's VA decodes here too */
	"infiniband.reth.r_key",	/* and its R_Key here */
	"infiniband.reth.dmalen",
	"infiniband.atomiceth.swapdt",
	"infiniband.atomiceth.cmpdt",
	"infiniband.ieth",		/* bytes, in hex */
	"infiniband.aeth.syndrome",
	"infiniband.aeth.msn",
	"infiniband.aeth.syndrome.opcode",	/* the type, bits 6-5 */
	"infiniband.aeth.syndrome.error_code",	/* NAK code */
	"infiniband.aeth.syndrome.credit_count",	/* ACK credits */
	"infiniband.aeth.syndrome.timer",	/* RNR timer */
};

/* A syndrome with bit 7 clear (reserved): ACK, RNR NAK, NAK 0x60-0x64 or
 * the reserved type 2, at random. */
static uint8_t random_syndrome(void)
{
	switch (test_rng_below(4)) {
	case 0:  return (uint8_t)test_rng_below(0x20);
	case 1:  return (uint8_t)(0x20 + test_rng_below(0x20));
	case 2:  return (uint8_t)(0x60 + test_rng_below(5));
	default: return (uint8_t)test_rng_below(0x80);
	}
}

static void choose_mem(struct mem_pkt *m, unsigned i)
{
	static const uint8_t opcodes[MK_KINDS] = {
		IBK_TRANSPORT_RC | IBK_OP_RDMA_WRITE_ONLY,
		IBK_TRANSPORT_RC | IBK_OP_RDMA_READ_REQUEST,
		IBK_TRANSPORT_RC | IBK_OP_COMPARE_SWAP,
		IBK_TRANSPORT_RC | IBK_OP_FETCH_ADD,
		IBK_TRANSPORT_RC | IBK_OP_SEND_ONLY_INV,
		IBK_TRANSPORT_RC | IBK_OP_ACKNOWLEDGE,
	};

	m->kind = (enum mem_kind)(i % MK_KINDS);
	m->opcode = opcodes[m->kind];
	m->va = i < MK_KINDS ? 0xfffffffffffffc00ull : test_rng64();
	m->rkey = (uint32_t)test_rng64();
	m->dma_len = i < MK_KINDS ? 0x80000000u : (uint32_t)test_rng64();
	m->swap_add = test_rng64();
	m->compare = test_rng64();
	m->msn = (uint32_t)test_rng64() & 0xffffff;
	m->syndrome = i < MK_KINDS ? IBK_NAK_REMOTE_ACCESS : random_syndrome();
}

/* The packet's transport bytes, built with the library's setters. */
static size_t build_mem(uint8_t *ib, const struct mem_pkt *m, unsigned i)
{
	uint8_t *ext = ib + IBK_BTH_LEN;
	size_t len = IBK_BTH_LEN;
	int k;

	memset(ib, 0, IB_MAX);
	ibk_bth_set_opcode(ib, m->opcode);
	ibk_bth_set_pkey(ib, 0xffff);
	ibk_bth_set_dest_qp(ib, 2 + i);
	ibk_bth_set_ackreq(ib, true);
	ibk_bth_set_psn(ib, i);
	switch (m->kind) {
	case MK_WRITE:
	case MK_READ:
		ibk_reth_set_va(ext, m->va);
		ibk_reth_set_rkey(ext, m->rkey);
		ibk_reth_set_dma_len(ext, m->dma_len);
		len += IBK_RETH_LEN;
		break;
	case MK_CSWAP:
	case MK_FADD:
		ibk_atomiceth_set_va(ext, m->va);
		ibk_atomiceth_set_rkey(ext, m->rkey);
		ibk_atomiceth_set_swap_add(ext, m->swap_add);
		ibk_atomiceth_set_compare(ext, m->compare);
		len += IBK_ATOMICETH_LEN;
		break;
	case MK_SEND_INV:
		ibk_ieth_set_rkey(ext, m->rkey);
		len += IBK_IETH_LEN;
		break;
	case MK_ACK:
		ibk_aeth_set_syndrome(ext, m->syndrome);
		ibk_aeth_set_msn(ext, m->msn);
		len += IBK_AETH_LEN;
		break;
	case MK_KINDS:
		break;
	}
	if (m->kind == MK_WRITE || m->kind == MK_SEND_INV)
		for (k = 0; k < PAYLOAD_LEN; k++)
			ib[len++] = (uint8_t)(0xa0 + k);
	return len;
}

/* The value tshark must print for field @f of @m; false if none. */
static bool mem_expected(const struct mem_pkt *m, enum mem_field f,
			 uint64_t *want)
{
	bool reth = m->kind == MK_WRITE || m->kind == MK_READ;
	bool atomic = m->kind == MK_CSWAP || m->kind == MK_FADD;
	bool ack = m->kind == MK_ACK;
	uint8_t syn = m->syndrome;

	switch (f) {
	case MF_OPCODE:	*want = m->opcode; return true;
	case MF_VA:	*want = m->va; return reth || atomic;
	case MF_RKEY:	*want = m->rkey; return reth || atomic;
	case MF_DMALEN:	*want = m->dma_len; return reth;
	case MF_SWAP:	*want = m->swap_add; return atomic;
	case MF_CMP:	*want = m->compare; return atomic;
	case MF_IETH:	*want = m->rkey; return m->kind == MK_SEND_INV;
	case MF_SYNDROME: *want = syn; return ack;
	case MF_MSN:	*want = m->msn; return ack;
	/* the type as the library reads it: ACK 0, RNR NAK 1, NAK 3, else 2 */
	case MF_SYN_TYPE:
		*want = ibk_aeth_is_ack(syn) ? 0 : ibk_aeth_is_rnr_nak(syn) ?
			1 : ibk_aeth_is_nak(syn) ? 3 : 2;
		return ack;
	case MF_SYN_ERROR:
		*want = ibk_aeth_value(syn);
		return ack && ibk_aeth_is_nak(syn);
	case MF_SYN_CREDITS:
		*want = ibk_aeth_value(syn);
		return ack && ibk_aeth_is_ack(syn);
	case MF_SYN_TIMER:
		*want = ibk_aeth_value(syn);
		return ack && ibk_aeth_is_rnr_nak(syn);
	case MF_COUNT:
		break;
	}
	return false;
}

struct mem_ctx {
	const struct mem_pkt *pkts;
	unsigned bad[MF_COUNT];
};

static void check_mem_row(unsigned i, char **vals, void *arg)
{
	struct mem_ctx *ctx = (struct mem_ctx *)arg;
	int f;

	for (f = 0; f < MF_COUNT; f++) {
		uint64_t want = 0, got = 0;
		bool present = mem_expected(&ctx->pkts[i], (enum mem_field)f,
					    &want);
		bool ok;
		char *end;

		if (!present) {
			ok = vals[f][0] == '\0';
		} else if (f == MF_IETH) {	/* hex bytes, no 0x */
			got = strtoull(vals[f], &end, 16);
			ok = vals[f][0] && *end == '\0' && got == want;
		} else {
			ok = parse_value(vals[f], &got) && got == want;
		}
		if (!ok && ctx->bad[f]++ < MAX_DIAG)
			tap_diag("packet %u (opcode 0x%02x) %s: tshark '%s', "
				 "want %s0x%llx", i, ctx->pkts[i].opcode,
				 mem_fields[f], vals[f],
				 present ? "" : "nothing, not ",
				 (unsigned long long)want);
	}
}

static void test_mem_headers(const char *dir)
{
	static struct mem_pkt pkts[NMEM];
	static struct frame frames[NMEM];
	struct mem_ctx ctx;
	uint8_t ib[IB_MAX];
	char path[1100];
	unsigned i, decoded;
	int f;

	for (i = 0; i < NMEM; i++) {
		choose_mem(&pkts[i], i);
		build_frame(&frames[i], ib, build_mem(ib, &pkts[i], i), i);
	}
	snprintf(path, sizeof(path), "%s/rocev2-rc.pcap", dir);
	if (!tap_ok(write_pcap(path, frames, NMEM), "wrote %s", path))
		return;
	memset(&ctx, 0, sizeof(ctx));
	ctx.pkts = pkts;
	decoded = run_tshark(path, mem_fields, MF_COUNT, NMEM, check_mem_row,
			     &ctx);
	tap_ok(decoded == NMEM, "tshark decoded %u RC packets (of %u): WRITE, "
	       "READ, COMPARE SWAP, FETCH ADD, SEND with invalidate, ACK",
	       decoded, NMEM);
	for (f = 0; f < MF_COUNT; f++)
		tap_ok(decoded > 0 && ctx.bad[f] == 0,
		       "tshark reads %s as chosen, and only where the opcode "
		       "carries it (%u mismatches)", mem_fields[f], ctx.bad[f]);
	unlink(path);
}

/* ------------------------------------------------------------------------
 * Part 3: which opcodes carry which header
 * ------------------------------------------------------------------------ */

static const char *const op_fields[] = {
	"infiniband.bth.opcode", "infiniband.reth", "infiniband.atomiceth",
	"infiniband.ieth", "infiniband.aeth", "infiniband.immdt",
};

struct op_ctx {
	unsigned bad, skipped;
};

static void check_op_row(unsigned i, char **vals, void *arg)
{
	struct op_ctx *ctx = (struct op_ctx *)arg;
	uint8_t op = (uint8_t)i;
	bool want[5], got[5];
	int h;

	/* FLUSH and ATOMIC WRITE are newer than Wireshark 4.0's opcode table:
	 * their RETH is checked against rxe_opcode.c in test_mem.c only */
	if (op == (IBK_TRANSPORT_RC | IBK_OP_FLUSH) ||
	    op == (IBK_TRANSPORT_RC | IBK_OP_ATOMIC_WRITE)) {
		ctx->skipped++;
		return;
	}
	want[0] = ibk_opcode_has_reth(op);
	want[1] = ibk_opcode_has_atomiceth(op);
	want[2] = ibk_opcode_has_ieth(op);
	want[3] = ibk_opcode_has_aeth(op);
	want[4] = ibk_opcode_has_immdt(op);
	for (h = 0; h < 5; h++) {
		got[h] = vals[h + 1][0] != '\0';
		if (got[h] != want[h] && ctx->bad++ < MAX_DIAG)
			tap_diag("opcode 0x%02x: tshark %s %s, library says "
				 "%s", op, got[h] ? "shows" : "has no",
				 op_fields[h + 1], want[h] ? "yes" : "no");
	}
}

static void test_opcode_headers(const char *dir)
{
	static struct frame frames[NOPS];
	uint8_t ib[IBK_BTH_LEN + 64];
	struct op_ctx ctx = { 0, 0 };
	char path[1100];
	unsigned i, decoded;
	int k;

	for (i = 0; i < NOPS; i++) {
		memset(ib, 0, sizeof(ib));
		ibk_bth_set_opcode(ib, (uint8_t)i);
		ibk_bth_set_pkey(ib, 0xffff);
		ibk_bth_set_dest_qp(ib, 0x42);
		for (k = IBK_BTH_LEN; k < (int)sizeof(ib); k++)
			ib[k] = (uint8_t)(0x10 + k);
		build_frame(&frames[i], ib, sizeof(ib), i);
	}
	snprintf(path, sizeof(path), "%s/rocev2-opcodes.pcap", dir);
	if (!tap_ok(write_pcap(path, frames, NOPS), "wrote %s", path))
		return;
	decoded = run_tshark(path, op_fields, 6, NOPS, check_op_row, &ctx);
	tap_ok(decoded == NOPS && ctx.bad == 0, "opcodes 0x00-0x7f (RC, UC, "
	       "RD, UD): tshark shows a RETH, AtomicETH, IETH, AETH or ImmDt "
	       "exactly where ibk_opcode_has_*() say (%u decoded, %u "
	       "mismatches, %u skipped: FLUSH, ATOMIC WRITE)", decoded,
	       ctx.bad, ctx.skipped);
	unlink(path);
}

/* ------------------------------------------------------------------------
 * Part 4: SMPs and Notices as native InfiniBand frames
 * ------------------------------------------------------------------------ */

#define LINKTYPE_USER0	147	/* mapped to the infiniband dissector */
#define NSMP		60
#define MAX_LIST	32	/* P_Keys in a block */

/* DLT_USER0 decoded by the infiniband dissector, every occurrence. */
static const char native_ib_opts[] =
	"-E occurrence=a -o 'uat:user_dlts:\"User 0 (DLT=147)\","
	"\"infiniband\",\"0\",\"\",\"0\",\"\"'";

enum smp_kind { SK_PORTINFO, SK_PKEYS, SK_GUIDS, SK_TRAP256, SK_TRAP257,
		SK_TRAP258, SK_KINDS };

/* What the test chose for one SMP. */
struct smp_pkt {
	enum smp_kind kind;
	bool dr;
	uint8_t method, hops;
	uint16_t attr_id, dr_slid;
	uint32_t attr_mod;
	uint64_t tid, mkey;
	/* PortInfo */
	uint64_t pi_mkey, prefix;
	uint32_t cap;
	uint16_t lid, sm_lid, lease, viol[3];
	uint8_t protect, enforce, guid_cap, timeout;
	bool rereg;
	/* blocks */
	ibk_pkey_t pkeys[IBK_PKEY_BLOCK_ENTRIES];
	ibk_guid_t guids[IBK_GUID_BLOCK_ENTRIES];
	/* notices */
	uint16_t issuer;
	struct ibk_trap_256 t256;
	struct ibk_trap_key tkey;
};

static void choose_smp(struct smp_pkt *m, unsigned i)
{
	unsigned k;

	memset(m, 0, sizeof(*m));
	m->kind = (enum smp_kind)(i % SK_KINDS);
	m->dr = (i / SK_KINDS) & 1;
	m->hops = m->dr ? (uint8_t)(1 + test_rng_below(IBK_SMP_MAX_HOPS)) : 0;
	m->dr_slid = 0xffff;
	m->tid = test_rng64();
	m->mkey = test_rng64();
	m->attr_mod = 0;
	m->issuer = (uint16_t)test_rng64();
	switch (m->kind) {
	case SK_PORTINFO:
		m->method = test_rng64() & 1 ? IBK_MAD_METHOD_SET :
					       IBK_MAD_METHOD_GET_RESP;
		m->attr_id = IBK_SMP_ATTR_PORT_INFO;
		m->attr_mod = test_rng_below(3);
		m->pi_mkey = test_rng64();
		m->prefix = test_rng64();
		m->cap = (uint32_t)test_rng64();
		m->lid = (uint16_t)test_rng64();
		m->sm_lid = (uint16_t)test_rng64();
		m->lease = (uint16_t)test_rng64();
		for (k = 0; k < 3; k++)
			m->viol[k] = (uint16_t)test_rng64();
		m->protect = (uint8_t)test_rng_below(4);
		m->enforce = (uint8_t)test_rng_below(16);
		m->guid_cap = (uint8_t)test_rng64();
		m->timeout = (uint8_t)test_rng_below(32);
		m->rereg = test_rng64() & 1;
		break;
	case SK_PKEYS:
		m->method = IBK_MAD_METHOD_SET;
		m->attr_id = IBK_SMP_ATTR_PKEY_TABLE;
		m->attr_mod = ibk_pkeytable_mod((uint16_t)test_rng_below(2048),
						(uint8_t)test_rng64());
		for (k = 0; k < IBK_PKEY_BLOCK_ENTRIES; k++)
			m->pkeys[k] = (ibk_pkey_t)test_rng64();
		m->pkeys[0] = 0xffff;
		m->pkeys[1] = 0x7fff;
		break;
	case SK_GUIDS:
		m->method = IBK_MAD_METHOD_GET_RESP;
		m->attr_id = IBK_SMP_ATTR_GUID_INFO;
		m->attr_mod = test_rng_below(32);
		for (k = 0; k < IBK_GUID_BLOCK_ENTRIES; k++)
			m->guids[k] = test_rng64();
		break;
	case SK_TRAP256:
		m->method = IBK_MAD_METHOD_TRAP;
		m->attr_id = IBK_SMP_ATTR_NOTICE;
		m->t256.lid = (uint16_t)test_rng64();
		m->t256.dr_slid = (uint16_t)test_rng64();
		m->t256.method = (uint8_t)(1 + test_rng_below(2));
		m->t256.attr_id = (uint16_t)test_rng64();
		m->t256.attr_mod = (uint32_t)test_rng64();
		m->t256.mkey = test_rng64();
		m->t256.dr_notice = test_rng64() & 1;
		/* past 30 hops the notice says the path is truncated */
		m->t256.dr_hop_cnt = i == SK_TRAP256 ? 64 :
				     (uint8_t)test_rng_below(IBK_SMP_MAX_HOPS + 2);
		for (k = 0; k < IBK_TRAP_DR_PATH_LEN; k++)
			m->t256.dr_return_path[k] = (uint8_t)test_rng64();
		break;
	case SK_TRAP257:
	case SK_TRAP258:
		m->method = IBK_MAD_METHOD_TRAP;
		m->attr_id = IBK_SMP_ATTR_NOTICE;
		m->tkey.lid1 = (uint16_t)test_rng64();
		m->tkey.lid2 = (uint16_t)test_rng64();
		m->tkey.key = m->kind == SK_TRAP257 ? (uint16_t)test_rng64() :
						      (uint32_t)test_rng64();
		m->tkey.sl = (uint8_t)test_rng_below(16);
		m->tkey.qp1 = (uint32_t)test_rng64() & 0xffffff;
		m->tkey.qp2 = (uint32_t)test_rng64() & 0xffffff;
		for (k = 0; k < 16; k++) {
			m->tkey.gid1.raw[k] = (uint8_t)test_rng64();
			m->tkey.gid2.raw[k] = (uint8_t)test_rng64();
		}
		m->tkey.gid1.raw[0] = 0xfe;	/* not multicast */
		break;
	case SK_KINDS:
		break;
	}
}

/* The MAD of @m, built with the library's setters and builders. */
static void build_smp(uint8_t *mad, const struct smp_pkt *m)
{
	uint8_t *d = ibk_smp_data_mut(mad);
	unsigned k;

	memset(mad, 0, IBK_MAD_LEN);
	ibk_mad_set_base_version(mad, IBK_MAD_BASE_VERSION);
	ibk_mad_set_mgmt_class(mad, m->dr ? IBK_MGMT_CLASS_SUBN_DR :
					    IBK_MGMT_CLASS_SUBN_LID);
	ibk_mad_set_class_version(mad, IBK_SMP_CLASS_VERSION);
	ibk_mad_set_method(mad, m->method);
	ibk_mad_set_tid(mad, m->tid);
	ibk_mad_set_attr_id(mad, m->attr_id);
	ibk_mad_set_attr_mod(mad, m->attr_mod);
	ibk_smp_set_mkey(mad, m->mkey);
	if (m->dr) {
		ibk_smp_set_hop_cnt(mad, m->hops);
		ibk_smp_set_dr_slid(mad, m->dr_slid);
		ibk_smp_set_dr_dlid(mad, 0xffff);
		for (k = 1; k <= m->hops; k++)
			mad[IBK_SMP_INITIAL_PATH + k] = (uint8_t)k;
	}
	switch (m->kind) {
	case SK_PORTINFO:
		ibk_portinfo_set_mkey(d, m->pi_mkey);
		ibk_portinfo_set_gid_prefix(d, m->prefix);
		ibk_portinfo_set_lid(d, m->lid);
		ibk_portinfo_set_master_sm_lid(d, m->sm_lid);
		ibk_portinfo_set_cap_mask(d, m->cap);
		ibk_portinfo_set_mkey_lease_period(d, m->lease);
		ibk_portinfo_set_mkey_protect_bits(d, m->protect);
		ibk_portinfo_set_enforcement(d, m->enforce);
		ibk_portinfo_set_mkey_violations(d, m->viol[0]);
		ibk_portinfo_set_pkey_violations(d, m->viol[1]);
		ibk_portinfo_set_qkey_violations(d, m->viol[2]);
		ibk_portinfo_set_guid_cap(d, m->guid_cap);
		ibk_portinfo_set_client_rereg(d, m->rereg);
		ibk_portinfo_set_subnet_timeout(d, m->timeout);
		break;
	case SK_PKEYS:
		ibk_pkey_block_encode(m->pkeys, d);
		break;
	case SK_GUIDS:
		ibk_guid_block_encode(m->guids, d);
		break;
	case SK_TRAP256:
		ibk_notice_build_256(IBK_NOTICE_PRODUCER_CA, m->issuer,
				     &m->t256, d);
		break;
	case SK_TRAP257:
	case SK_TRAP258:
		ibk_notice_build_key_trap(m->kind == SK_TRAP257 ?
					  IBK_TRAP_BAD_PKEY : IBK_TRAP_BAD_QKEY,
					  IBK_NOTICE_PRODUCER_SWITCH,
					  m->issuer, &m->tkey, d);
		break;
	case SK_KINDS:
		break;
	}
}

/* A native frame: LRH (VL15, LNH BTH), BTH (UD SEND only to QP0), DETH,
 * the MAD, zero ICRC and VCRC. */
static void build_smp_frame(struct frame *fr, const struct smp_pkt *m)
{
	uint8_t *lrh = fr->b, *bth = lrh + IBK_LRH_LEN;
	uint8_t *deth = bth + IBK_BTH_LEN, *mad = deth + IBK_DETH_LEN;

	memset(fr->b, 0, FRAME_MAX);
	fr->len = SMP_FRAME_LEN;
	ibk_lrh_set_vl(lrh, 15);
	ibk_lrh_set_lnh(lrh, IBK_LNH_BTH);
	ibk_lrh_set_dlid(lrh, 1);
	ibk_lrh_set_slid(lrh, 2);
	/* in 4-byte words, up to the ICRC, without the VCRC */
	ibk_lrh_set_pktlen(lrh, (SMP_FRAME_LEN - 2) / 4);
	ibk_bth_set_opcode(bth, IBK_OPCODE_UD_SEND_ONLY);
	ibk_bth_set_pkey(bth, IBK_PKEY_DEFAULT);
	build_smp(mad, m);
}

/* The fields tshark prints, in this order. */
enum smp_field {
	SF_METHOD, SF_ATTR_ID, SF_ATTR_MOD, SF_TID, SF_MKEY, SF_HOPCNT,
	SF_DRSLID, SF_PI_MKEY, SF_PREFIX, SF_LID, SF_SMLID, SF_CAP, SF_LEASE,
	SF_PROTECT, SF_PEI, SF_PEO, SF_FRI, SF_FRO, SF_MVIOL, SF_PVIOL,
	SF_QVIOL, SF_GUIDCAP, SF_REREG, SF_TIMEOUT, SF_PK_FULL, SF_PK_BASE,
	SF_GUIDS, SF_COUNT_A,
	SF_GENERIC = SF_COUNT_A, SF_TYPE, SF_PRODUCER, SF_TRAPNUM, SF_ISSUER,
	SF_T_LID, SF_T_DRSLID, SF_T_METHOD, SF_T_ATTR_ID, SF_T_ATTR_MOD,
	SF_T_MKEY, SF_T_DRNOTICE, SF_T_TRUNC, SF_T_HOPS, SF_T_PATH,
	SF_T_LID1, SF_T_LID2, SF_T_KEY, SF_T_SL, SF_T_QP1, SF_T_QP2,
	SF_T_GID1, SF_T_GID2, SF_COUNT
};

static const char *const smp_fields[SF_COUNT] = {
	"infiniband.mad.method", "infiniband.mad.attributeid",
	"infiniband.mad.attributemodifier", "infiniband.mad.transactionid",
	"infiniband.smplid.mkey",	/* both routings decode it here */
	"infiniband.smpdirected.hopcount", "infiniband.smpdirected.drslid",
	"infiniband.portinfo.m_key", "infiniband.portinfo.guid",
	"infiniband.portinfo.lid", "infiniband.portinfo.mastersmlid",
	"infiniband.portinfo.capabilitymask",
	"infiniband.portinfo.m_keyleaseperiod",
	"infiniband.portinfo.m_keyprotectbits",
	"infiniband.portinfo.partitionenforcementinbound",
	"infiniband.portinfo.partitionenforcementoutbound",
	"infiniband.portinfo.filterrawinbound",
	"infiniband.portinfo.filterrawoutbound",
	"infiniband.portinfo.m_keyviolations",
	"infiniband.portinfo.p_keyviolations",
	"infiniband.portinfo.q_keyviolations",
	"infiniband.portinfo.guidcap", "infiniband.portinfo.clientreregister",
	"infiniband.portinfo.subnettimeout",
	"infiniband.p_keytable.membershiptype",
	"infiniband.p_keytable.p_keybase",
	"infiniband.switchinfo.guid",	/* (sic) GUIDInfo's entries */
	"infiniband.notice.isgeneric", "infiniband.notice.type",
	"infiniband.notice.producertypevendorid",
	"infiniband.notice.trapnumberdeviceid", "infiniband.notice.issuerlid",
	"infiniband.trap.lidaddr", "infiniband.trap.drslid",
	"infiniband.trap.method", "infiniband.trap.attributeid",
	"infiniband.trap.attributemodifier", "infiniband.trap.mkey",
	"infiniband.trap.drnotice", "infiniband.trap.drpathtruncated",
	"infiniband.trap.drhopcount", "infiniband.trap.drnoticereturnpath",
	"infiniband.trap.lidaddr1", "infiniband.trap.lidaddr2",
	"infiniband.trap.key", "infiniband.trap.sl", "infiniband.trap.qp1",
	"infiniband.trap.qp2", "infiniband.trap.gidaddr1",
	"infiniband.trap.gidaddr2",
};

/* What tshark must print for one field: nothing, a list of numbers, or
 * text (GIDs as inet_ntop() writes them, the path as hex bytes). */
struct smp_want {
	unsigned n;		/* 0: the field is absent */
	uint64_t v[MAX_LIST];
	bool text;
	char s[INET6_ADDRSTRLEN > 2 * IBK_TRAP_DR_PATH_LEN + 1 ?
	       INET6_ADDRSTRLEN : 2 * IBK_TRAP_DR_PATH_LEN + 1];
};

static void want1(struct smp_want *w, uint64_t v)
{
	w->n = 1;
	w->v[0] = v;
}

static void want_gid(struct smp_want *w, const struct ibk_gid *g)
{
	w->n = 1;
	w->text = true;
	inet_ntop(AF_INET6, g->raw, w->s, sizeof(w->s));
}

/* The expected value of field @f of @m, from the choices alone. */
static void smp_expected(const struct smp_pkt *m, enum smp_field f,
			 struct smp_want *w)
{
	const struct ibk_trap_256 *t = &m->t256;
	const struct ibk_trap_key *k = &m->tkey;
	bool pi = m->kind == SK_PORTINFO, t256 = m->kind == SK_TRAP256;
	bool tkey = m->kind == SK_TRAP257 || m->kind == SK_TRAP258;
	bool trunc = t->dr_hop_cnt > IBK_TRAP_DR_PATH_LEN;
	unsigned hops = trunc ? IBK_TRAP_DR_PATH_LEN : t->dr_hop_cnt, i;

	memset(w, 0, sizeof(*w));
	switch (f) {
	case SF_METHOD:	want1(w, m->method); break;
	case SF_ATTR_ID: want1(w, m->attr_id); break;
	case SF_ATTR_MOD: want1(w, m->attr_mod); break;
	case SF_TID:	want1(w, m->tid); break;
	case SF_MKEY:	want1(w, m->mkey); break;
	case SF_HOPCNT:	if (m->dr) want1(w, m->hops); break;
	case SF_DRSLID:	if (m->dr) want1(w, m->dr_slid); break;
	case SF_PI_MKEY: if (pi) want1(w, m->pi_mkey); break;
	case SF_PREFIX:	if (pi) want1(w, m->prefix); break;
	case SF_LID:	if (pi) want1(w, m->lid); break;
	case SF_SMLID:	if (pi) want1(w, m->sm_lid); break;
	case SF_CAP:	if (pi) want1(w, m->cap); break;
	case SF_LEASE:	if (pi) want1(w, m->lease); break;
	case SF_PROTECT: if (pi) want1(w, m->protect); break;
	case SF_PEI:	if (pi) want1(w, (m->enforce >> 3) & 1); break;
	case SF_PEO:	if (pi) want1(w, (m->enforce >> 2) & 1); break;
	case SF_FRI:	if (pi) want1(w, (m->enforce >> 1) & 1); break;
	case SF_FRO:	if (pi) want1(w, m->enforce & 1); break;
	case SF_MVIOL:	if (pi) want1(w, m->viol[0]); break;
	case SF_PVIOL:	if (pi) want1(w, m->viol[1]); break;
	case SF_QVIOL:	if (pi) want1(w, m->viol[2]); break;
	case SF_GUIDCAP: if (pi) want1(w, m->guid_cap); break;
	case SF_REREG:	if (pi) want1(w, m->rereg); break;
	case SF_TIMEOUT: if (pi) want1(w, m->timeout); break;
	case SF_PK_FULL:
	case SF_PK_BASE:
		if (m->kind != SK_PKEYS)
			break;
		w->n = IBK_PKEY_BLOCK_ENTRIES;
		for (i = 0; i < w->n; i++)
			w->v[i] = f == SF_PK_FULL ? m->pkeys[i] >> 15 :
				  m->pkeys[i] & 0x7fffu;
		break;
	case SF_GUIDS:
		if (m->kind != SK_GUIDS)
			break;
		w->n = IBK_GUID_BLOCK_ENTRIES;
		for (i = 0; i < w->n; i++)
			w->v[i] = m->guids[i];
		break;
	case SF_GENERIC: if (t256 || tkey) want1(w, 1); break;
	case SF_TYPE:	if (t256 || tkey) want1(w, 2); break;	/* security */
	case SF_PRODUCER: if (t256 || tkey) want1(w, t256 ? 1 : 2); break;
	case SF_TRAPNUM:
		if (t256 || tkey)
			want1(w, t256 ? 256 : m->kind == SK_TRAP257 ? 257 : 258);
		break;
	case SF_ISSUER:	if (t256 || tkey) want1(w, m->issuer); break;
	case SF_T_LID:	if (t256) want1(w, t->lid); break;
	case SF_T_DRSLID: if (t256) want1(w, t->dr_slid); break;
	case SF_T_METHOD: if (t256) want1(w, t->method); break;
	case SF_T_ATTR_ID: if (t256) want1(w, t->attr_id); break;
	case SF_T_ATTR_MOD: if (t256) want1(w, t->attr_mod); break;
	case SF_T_MKEY:	if (t256) want1(w, t->mkey); break;
	case SF_T_DRNOTICE: if (t256) want1(w, t->dr_notice); break;
	case SF_T_TRUNC: if (t256) want1(w, trunc); break;
	case SF_T_HOPS:	if (t256) want1(w, hops); break;
	case SF_T_PATH:
		if (!t256)
			break;
		w->n = 1;
		w->text = true;
		for (i = 0; i < IBK_TRAP_DR_PATH_LEN; i++)
			sprintf(w->s + 2 * i, "%02x",
				i < hops ? t->dr_return_path[i] : 0);
		break;
	case SF_T_LID1:	if (tkey) want1(w, k->lid1); break;
	case SF_T_LID2:	if (tkey) want1(w, k->lid2); break;
	case SF_T_KEY:	if (tkey) want1(w, k->key); break;
	case SF_T_SL:	if (tkey) want1(w, k->sl); break;
	case SF_T_QP1:	if (tkey) want1(w, k->qp1); break;
	case SF_T_QP2:	if (tkey) want1(w, k->qp2); break;
	case SF_T_GID1:	if (tkey) want_gid(w, &k->gid1); break;
	case SF_T_GID2:	if (tkey) want_gid(w, &k->gid2); break;
	case SF_COUNT:	break;
	}
}

/* True if tshark's @val (a ','-separated list) is what @w wants. */
static bool smp_value_ok(char *val, const struct smp_want *w)
{
	char *item = val, *next;
	uint64_t got;
	unsigned i;

	if (w->n == 0)
		return val[0] == '\0';
	if (w->text)
		return strcmp(val, w->s) == 0;
	for (i = 0; i < w->n; i++, item = next) {
		next = strchr(item, ',');
		if ((next == NULL) != (i == w->n - 1))
			return false;
		if (next)
			*next++ = '\0';
		if (!parse_value(item, &got) || got != w->v[i])
			return false;
	}
	return true;
}

struct smp_ctx {
	const struct smp_pkt *pkts;
	int first;		/* the fields of this run: first.. */
	unsigned bad[SF_COUNT];
};

static void check_smp_row(unsigned i, char **vals, void *arg)
{
	struct smp_ctx *ctx = (struct smp_ctx *)arg;
	const struct smp_pkt *m = &ctx->pkts[i];
	int end = ctx->first == 0 ? SF_COUNT_A : SF_COUNT, f;
	struct smp_want w;

	for (f = ctx->first; f < end; f++) {
		char copy[4096];

		smp_expected(m, (enum smp_field)f, &w);
		snprintf(copy, sizeof(copy), "%s", vals[f - ctx->first]);
		if (smp_value_ok(vals[f - ctx->first], &w))
			continue;
		if (ctx->bad[f]++ < MAX_DIAG)
			tap_diag("SMP %u (kind %d, %s): %s: tshark '%s', want "
				 "%u value(s), first 0x%llx %s", i, m->kind,
				 m->dr ? "directed" : "LID-routed",
				 smp_fields[f], copy, w.n,
				 (unsigned long long)w.v[0], w.text ? w.s : "");
	}
}

static void test_smp_frames(const char *dir)
{
	static struct smp_pkt pkts[NSMP];
	static struct frame frames[NSMP];
	static struct smp_ctx ctx;
	char path[1100];
	unsigned i, decoded[2];
	int f, run;

	for (i = 0; i < NSMP; i++) {
		choose_smp(&pkts[i], i);
		build_smp_frame(&frames[i], &pkts[i]);
	}
	snprintf(path, sizeof(path), "%s/ib-smp.pcap", dir);
	if (!tap_ok(write_pcap_linktype(path, frames, NSMP, LINKTYPE_USER0),
		    "wrote %s (link type 147, native InfiniBand)", path))
		return;
	memset(&ctx, 0, sizeof(ctx));
	ctx.pkts = pkts;
	for (run = 0; run < 2; run++) {
		ctx.first = run ? SF_COUNT_A : 0;
		decoded[run] = run_tshark_opts(path, native_ib_opts,
					       smp_fields + ctx.first,
					       (run ? SF_COUNT : SF_COUNT_A) -
					       ctx.first, NSMP, check_smp_row,
					       &ctx);
	}
	tap_ok(decoded[0] == NSMP && decoded[1] == NSMP, "tshark decoded %u "
	       "and %u native SMPs (of %u): PortInfo, P_KeyTable, GUIDInfo, "
	       "traps 256, 257, 258, LID-routed and directed", decoded[0],
	       decoded[1], NSMP);
	for (f = 0; f < SF_COUNT; f++)
		tap_ok(decoded[f >= SF_COUNT_A] > 0 && ctx.bad[f] == 0,
		       "tshark reads %s as chosen, and only where the SMP "
		       "carries it (%u mismatches)", smp_fields[f], ctx.bad[f]);
	unlink(path);
}

int main(void)
{
	static struct pkt pkts[NPKT];
	static struct frame frames[NPKT];
	static struct ud_ctx ctx;
	unsigned i, differ = 0, unread = 0, decoded;
	const char *names[NFIELDS];
	char dir[1024], path[1100];
	int f;

	test_rng_seed(SEED);
	tap_diag("seed 0x%llx, %u packets", (unsigned long long)SEED, NPKT);
	for (i = 0; i < NPKT; i++)
		choose_random(&pkts[i]);
	choose_edges(pkts);

	for (i = 0; i < NPKT; i++) {
		uint8_t a[IB_HDR_LEN], b[IB_HDR_LEN];
		unsigned j;

		pkts[i].wire_qkey = qkey_on_wire(pkts[i].wr_qkey,
						 pkts[i].qp_qkey);
		for (j = 0; j < IB_HDR_LEN; j++)
			a[j] = b[j] = (uint8_t)test_rng64();
		build_with_library(a, &pkts[i]);
		build_by_hand(b, &pkts[i]);
		if (memcmp(a, b, IB_HDR_LEN) != 0 && differ++ < MAX_DIAG) {
			tap_diag("packet %u differs", i);
			diag_bytes("library", a, IB_HDR_LEN);
			diag_bytes("by hand", b, IB_HDR_LEN);
		}
		if ((!getters_agree(a, &pkts[i]) ||
		     !getters_agree(b, &pkts[i])) && unread++ < MAX_DIAG) {
			tap_diag("packet %u: a getter disagrees on %s", i,
				 getters_agree(b, &pkts[i]) ?
				 "the library's build only" : "the IBA layout");
			diag_bytes("headers", b, IB_HDR_LEN);
		}
		build_ud_frame(&frames[i], a, i);
	}
	tap_ok(differ == 0,
	       "setters and ibk_tx_fill_keys write the IBA layout (%u of %u differ)",
	       differ, NPKT);
	tap_ok(unread == 0, "getters read back every field (%u of %u wrong)",
	       unread, NPKT);

	if (!tshark_installed()) {
		tap_ok(false, "tshark not found (install tshark)");
		return tap_done();
	}
	if (!tap_ok(make_temp_dir(dir, sizeof(dir)), "temporary directory"))
		return tap_done();
	snprintf(path, sizeof(path), "%s/rocev2-ud.pcap", dir);

	if (tap_ok(write_pcap(path, frames, NPKT), "wrote %s", path)) {
		for (f = 0; f < NFIELDS; f++)
			names[f] = fields[f].name;
		ctx.pkts = pkts;
		decoded = run_tshark(path, names, NFIELDS, NPKT, check_ud_row,
				     &ctx);
		tap_ok(decoded == NPKT, "tshark decoded %u packets (of %u)",
		       decoded, NPKT);
		for (f = 0; f < NFIELDS; f++)
			tap_ok(decoded > 0 && ctx.bad[f] == 0,
			       "tshark reads the chosen %s (%u mismatches)",
			       fields[f].what, ctx.bad[f]);
	}
	unlink(path);
	test_mem_headers(dir);
	test_opcode_headers(dir);
	test_smp_frames(dir);
	rmdir(dir);
	return tap_done();
}
