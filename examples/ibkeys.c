/* SPDX-License-Identifier: MIT */
/*
 * ibkeys - explain InfiniBand keys and identifiers from the command line.
 *
 *   ibkeys pkey 0x8001 0x0001     may QPs holding these two P_Keys talk?
 *   ibkeys qkey 0x80010000        range, control, send-side effect
 *   ibkeys gid fe80::2:c903:1:2345
 *   ibkeys mgid 0x8001 [GROUP] [SCOPE]  IPoIB MGID (default: IPv4 broadcast)
 *   ibkeys roce 52:54:00:12:34:56 | 192.168.1.2 | 2001:db8::1
 *   ibkeys guid 0x0002c90300012345
 *   ibkeys rkey 0x12345678        index, key byte, next key of an R_Key
 *   ibkeys range IOVA LEN BASE REGION_LEN
 *                                 is the access inside the region, and why
 *   ibkeys port [DEVICE[:PORT]] [--pkey P_KEY] [--sysfs DIR]
 *                                 a host's RDMA ports as sysfs shows them,
 *                                 decoded; may a port talk in a partition?
 *   ibkeys mkey PORT_MKEY SMP_MKEY METHOD
 *                                 what an SMP gets at each M_Key protect level
 *   ibkeys trap FILE|HEX          decode a Bad M_Key/P_Key/Q_Key Notice
 *
 * Every InfiniBand decision (membership, matching, Q_Key class and
 * selection, GID kinds and forms, text in and out) is ib_keys.h's; this
 * file parses numbers, MACs and IPv4 addresses with libc, reads sysfs and
 * prints.
 * Exit status: 0 done, 1 malformed argument (or a sysfs file missing or
 * malformed), 2 usage error.
 */
#define _POSIX_C_SOURCE 200809L	/* inet_pton(), strdup() */

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ib_keys.h"

#define EXIT_BAD_ARG	1
#define EXIT_USAGE	2

/* ---- argument parsing (libc only) ---- */

/* Print the one-line complaint about @arg and return the exit status. */
static int bad_arg(const char *what, const char *arg, const char *expected)
{
	fprintf(stderr, "ibkeys: bad %s '%s': expected %s\n", what, arg,
		expected);
	return EXIT_BAD_ARG;
}

/*
 * An unsigned number, decimal or 0x-prefixed hex, of at most @max. No sign,
 * no spaces, no empty digits, nothing after the digits.
 */
static bool parse_number(const char *s, unsigned long long max,
			 unsigned long long *out)
{
	unsigned long long v;
	int base = 10;
	char *end;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (base == 16 ? !isxdigit((unsigned char)*s) :
			 !isdigit((unsigned char)*s))
		return false;
	/* strtoull() reads an "0x" of its own in base 16: "0x0x12" */
	if (base == 16 && (s[1] == 'x' || s[1] == 'X'))
		return false;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno != 0 || *end != '\0' || v > max)
		return false;
	*out = v;
	return true;
}

static bool parse_pkey(const char *s, ibk_pkey_t *pkey)
{
	unsigned long long v;

	if (!parse_number(s, 0xffff, &v))
		return false;
	*pkey = (ibk_pkey_t)v;
	return true;
}

static bool parse_qkey(const char *s, ibk_qkey_t *qkey)
{
	unsigned long long v;

	if (!parse_number(s, 0xffffffffu, &v))
		return false;
	*qkey = (ibk_qkey_t)v;
	return true;
}

/* Exactly six ':'-separated pairs of hex digits: 52:54:00:12:34:56. */
static bool parse_mac(const char *s, uint8_t mac[6])
{
	int i;

	for (i = 0; i < 6; i++, s += 3) {
		char pair[3];

		if (!isxdigit((unsigned char)s[0]) ||
		    !isxdigit((unsigned char)s[1]) ||
		    s[2] != (i == 5 ? '\0' : ':'))
			return false;
		pair[0] = s[0];
		pair[1] = s[1];
		pair[2] = '\0';
		mac[i] = (uint8_t)strtoul(pair, NULL, 16);
	}
	return true;
}

/* A dotted quad, as inet_pton() reads it; 0xaabbccdd for a.b.c.d. */
static bool parse_ipv4(const char *s, uint32_t *ipv4)
{
	struct in_addr in;

	if (inet_pton(AF_INET, s, &in) != 1)
		return false;
	*ipv4 = ntohl(in.s_addr);
	return true;
}

/* Multicast scopes by name, for parsing and for printing. */
static const struct {
	const char *name;
	unsigned scope;
} scopes[] = {
	{ "link",   IBK_GID_SCOPE_LINK },
	{ "site",   IBK_GID_SCOPE_SITE },
	{ "org",    IBK_GID_SCOPE_ORG },
	{ "global", IBK_GID_SCOPE_GLOBAL },
};
#define NSCOPES (sizeof(scopes) / sizeof(scopes[0]))

static const char *scope_name(unsigned scope)
{
	size_t i;

	for (i = 0; i < NSCOPES; i++)
		if (scopes[i].scope == scope)
			return scopes[i].name;
	return "unnamed";
}

/* A scope nibble, 0-15, or one of the names above. */
static bool parse_scope(const char *s, unsigned *scope)
{
	unsigned long long v;
	size_t i;

	for (i = 0; i < NSCOPES; i++) {
		if (strcmp(s, scopes[i].name) == 0) {
			*scope = scopes[i].scope;
			return true;
		}
	}
	if (!parse_number(s, 0xf, &v))
		return false;
	*scope = (unsigned)v;
	return true;
}

/* ---- printing, every fact from ib_keys.h ---- */

/* One indented "label: value" line. */
static void __attribute__((format(printf, 2, 3)))
field(const char *label, const char *fmt, ...)
{
	va_list ap;

	printf("  %-14s ", label);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void describe_pkey(ibk_pkey_t pkey)
{
	uint16_t base = ibk_pkey_base(pkey);

	printf("P_Key 0x%04x\n", pkey);
	field("partition:", "0x%04x%s", base,
	      base == ibk_pkey_base(IBK_PKEY_DEFAULT) ?
	      " (the default partition)" : "");
	field("membership:", "%s", ibk_pkey_is_full(pkey) ? "full" : "limited");
	if (ibk_pkey_is_valid(pkey))
		field("valid:", "yes");
	else
		field("valid:", "no (base 0 matches no key, not even itself)%s",
		      pkey == IBK_PKEY_INVALID ?
		      "; empty table slots hold it" : "");
	field("full form:", "0x%04x", ibk_pkey_to_full(pkey));
	field("limited form:", "0x%04x", ibk_pkey_to_limited(pkey));
}

/* The verdict of ibk_pkey_match() and the rule that decides it. */
static void explain_pkey_pair(ibk_pkey_t a, ibk_pkey_t b)
{
	if (ibk_pkey_match(a, b)) {
		printf("may talk: yes (same partition 0x%04x, %s)\n",
		       ibk_pkey_base(a),
		       ibk_pkey_is_full(a) && ibk_pkey_is_full(b) ?
		       "both full members" : "one full member");
		return;
	}
	if (!ibk_pkey_is_valid(a) || !ibk_pkey_is_valid(b))
		printf("may talk: no (0x%04x is invalid and matches nothing)\n",
		       ibk_pkey_is_valid(a) ? b : a);
	else if (ibk_pkey_base(a) != ibk_pkey_base(b))
		printf("may talk: no (different partitions 0x%04x and 0x%04x)\n",
		       ibk_pkey_base(a), ibk_pkey_base(b));
	else
		printf("may talk: no (both limited members of partition 0x%04x)\n",
		       ibk_pkey_base(a));
}

static const char *qkey_range(enum ibk_qkey_class cls)
{
	switch (cls) {
	case IBK_QKEY_CLASS_FREE:
		return "0x00000000-0x7fffffff, free for any application";
	case IBK_QKEY_CLASS_APP_CONTROLLED:
		return "0x80000000-0x8000ffff, controlled, for applications";
	case IBK_QKEY_CLASS_RESERVED:
		return "0x80010000-0x8fffffff, controlled, reserved";
	case IBK_QKEY_CLASS_GSI:
		return "the well-known GSI (QP1) Q_Key, in the reserved range";
	case IBK_QKEY_CLASS_UNASSIGNED:
		return "0x90000000-0xffffffff, controlled, unassigned";
	}
	return "unknown";
}

static void describe_qkey(ibk_qkey_t qkey)
{
	enum ibk_qkey_class cls = ibk_qkey_classify(qkey);

	printf("Q_Key 0x%08x\n", qkey);
	field("class:", "%s (%s)", ibk_qkey_class_name(cls), qkey_range(cls));
	if (qkey == IBK_QKEY_IPOIB)
		field("note:", "IPoIB's customary Q_Key");
	field("controlled:", "%s", ibk_qkey_is_controlled(qkey) ? "yes" : "no");
	/* Select it against a QP context Q_Key that differs from it. */
	if (ibk_qkey_select(qkey, qkey ^ 1) == qkey)
		field("on the wire:", "a send WR carrying it sends 0x%08x",
		      qkey);
	else
		field("on the wire:",
		      "a send WR carrying it sends the QP context's Q_Key");
	field("who may set:", "%s",
	      ibk_qkey_may_set(qkey, false) ?
	      "any caller may put it in a QP context" :
	      "only a privileged caller may put it in a QP context");
}

static const char *gid_kind(const struct ibk_gid *gid)
{
	if (ibk_gid_is_zero(gid))
		return "zero (an empty GID table slot)";
	if (ibk_gid_is_multicast(gid))
		return "multicast";
	if (ibk_gid_is_v4mapped(gid))
		return "IPv4-mapped";
	if (ibk_gid_is_link_local(gid))
		return "link-local unicast";
	return "unicast, not link-local";
}

/* Which group an IPoIB MGID (RFC 4391) stands for. */
static void describe_ipoib(const struct ibk_gid *gid, ibk_pkey_t pkey,
			   unsigned scope, bool ipv6)
{
	uint32_t low = (uint32_t)gid->raw[12] << 24 |
		       (uint32_t)gid->raw[13] << 16 |
		       (uint32_t)gid->raw[14] << 8 | gid->raw[15];
	unsigned tail[5];
	int i;

	if (!ipv6 && low == 0xffffffffu) {
		field("IPoIB:", "IPv4 broadcast MGID of P_Key 0x%04x, scope "
		      "0x%x (%s)", pkey, scope, scope_name(scope));
	} else if (!ipv6) {
		/* the low 28 bits of a group in 224.0.0.0/4 */
		low |= 0xe0000000u;
		field("IPoIB:", "MGID of IPv4 group %u.%u.%u.%u in P_Key "
		      "0x%04x, scope 0x%x (%s)", low >> 24, low >> 16 & 0xff,
		      low >> 8 & 0xff, low & 0xff, pkey, scope,
		      scope_name(scope));
	} else {
		/* the low 80 bits of an IPv6 group: its last five groups */
		for (i = 0; i < 5; i++)
			tail[i] = (unsigned)gid->raw[6 + 2 * i] << 8 |
				  gid->raw[7 + 2 * i];
		field("IPoIB:", "MGID of an IPv6 group ending in "
		      ":%x:%x:%x:%x:%x (its low 80 bits) in P_Key 0x%04x, "
		      "scope 0x%x (%s)", tail[0], tail[1], tail[2], tail[3],
		      tail[4], pkey, scope, scope_name(scope));
	}
}

/* What else the GID is, when it is one of the derived forms. */
static void describe_gid_origin(const struct ibk_gid *gid)
{
	uint8_t mac[6];
	ibk_pkey_t pkey;
	unsigned scope;
	bool ipv6;

	if (ibk_gid_ipoib_mgid_parse(gid, &pkey, &scope, &ipv6) == IBK_OK) {
		describe_ipoib(gid, pkey, scope, ipv6);
	} else if (ibk_gid_is_v4mapped(gid)) {
		uint32_t a = ibk_gid_to_ipv4(gid);

		field("RoCE v2:", "GID of IPv4 address %u.%u.%u.%u",
		      a >> 24, a >> 16 & 0xff, a >> 8 & 0xff, a & 0xff);
	} else if (!ibk_gid_is_multicast(gid) &&
		   ibk_gid_to_mac(gid, mac) == IBK_OK) {
		field("MAC-derived:", "%s MAC %02x:%02x:%02x:%02x:%02x:%02x",
		      ibk_gid_is_link_local(gid) ? "the default GID of" :
		      "interface id of",
		      mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
	}
}

static void describe_gid(const struct ibk_gid *gid)
{
	char text[IBK_GID_STRLEN], full[IBK_GID_FULL_STRLEN];
	char guid_hex[IBK_GUID_STRLEN], guid_colon[IBK_GUID_STRLEN];
	uint64_t prefix = ibk_gid_subnet_prefix(gid);
	ibk_guid_t guid = ibk_gid_guid(gid);

	printf("GID %s\n", ibk_gid_ntop(gid, text));
	field("full form:", "%s", ibk_gid_ntop_full(gid, full));
	field("subnet prefix:", "0x%016llx%s", (unsigned long long)prefix,
	      prefix == IBK_GID_DEFAULT_PREFIX ?
	      " (the default subnet prefix)" : "");
	field("GUID:", "%s (%s)", ibk_guid_ntop(guid, guid_hex),
	      ibk_guid_ntop_colon(guid, guid_colon));
	field("kind:", "%s", gid_kind(gid));
	describe_gid_origin(gid);
}

/* Prints @start + @len exactly: "2^64" where the sum carries into bit 64
 * with nothing below it, which a u64 holds as 0. */
static void print_end(uint64_t start, uint64_t len)
{
	uint64_t end = start + len;

	if (end < start && end == 0)
		printf("2^64");
	else
		printf("0x%llx", (unsigned long long)end);
}

/*
 * The range verdict in words. The u64 form most drivers use (rxe's
 * mr_check_range(), siw_check_mem()) is computed too, to show where it
 * lets a wrapped access through.
 */
static void explain_range(uint64_t iova, uint64_t len, uint64_t base,
			  uint64_t region_len)
{
	enum ibk_range_verdict v = ibk_mem_range_check(iova, len, base,
						       region_len);
	uint64_t end = iova + len, region_end = base + region_len;
	bool u64_form_passes = !(iova < base || end > region_end);

	printf("access [0x%llx, +0x%llx) against region [0x%llx, +0x%llx)\n",
	       (unsigned long long)iova, (unsigned long long)len,
	       (unsigned long long)base, (unsigned long long)region_len);
	switch (v) {
	case IBK_RANGE_IN:
		printf("in: 0x%llx <= iova and iova + length = ",
		       (unsigned long long)base);
		print_end(iova, len);
		printf(" <= ");
		print_end(base, region_len);
		printf(", the region's end\n");
		return;
	case IBK_RANGE_REGION_WRAPS:
		printf("out: the region's end, base + length, is past 2^64\n");
		break;
	case IBK_RANGE_WRAPS:
		printf("out: iova + length is past 2^64 (a u64 sum wraps it "
		       "to 0x%llx)\n", (unsigned long long)end);
		break;
	case IBK_RANGE_BELOW:
		printf("out: iova is below the region's base 0x%llx\n",
		       (unsigned long long)base);
		break;
	case IBK_RANGE_BEYOND:
		printf("out: the access ends at ");
		print_end(iova, len);
		printf(", past the region's end ");
		print_end(base, region_len);
		printf("\n");
		break;
	}
	if (u64_form_passes)
		printf("note: the u64 test iova < base || iova + length > base "
		       "+ len (Linux rxe, siw) lets this access through\n");
}

/* ---- subnet management: the M_Key check and security notices ---- */

/* SMP methods by name, for parsing and for printing. */
static const struct {
	const char *name;
	const char *label;
	uint8_t method;
} smp_methods[] = {
	{ "get", "SubnGet", IBK_MAD_METHOD_GET },
	{ "set", "SubnSet", IBK_MAD_METHOD_SET },
	{ "send", "SubnSend", IBK_MAD_METHOD_SEND },
	{ "trap", "SubnTrap", IBK_MAD_METHOD_TRAP },
	{ "report", "Report", IBK_MAD_METHOD_REPORT },
	{ "trap-repress", "SubnTrapRepress", IBK_MAD_METHOD_TRAP_REPRESS },
	{ "getresp", "SubnGetResp", IBK_MAD_METHOD_GET_RESP },
};
#define NMETHODS (sizeof(smp_methods) / sizeof(smp_methods[0]))

static const char *method_label(uint8_t method)
{
	size_t i;

	for (i = 0; i < NMETHODS; i++)
		if (smp_methods[i].method == method)
			return smp_methods[i].label;
	return "unknown method";
}

/* A method name above or a number 0-255. */
static bool parse_method(const char *s, uint8_t *method)
{
	unsigned long long v;
	size_t i;

	for (i = 0; i < NMETHODS; i++) {
		if (strcmp(s, smp_methods[i].name) == 0) {
			*method = smp_methods[i].method;
			return true;
		}
	}
	if (!parse_number(s, 0xff, &v))
		return false;
	*method = (uint8_t)v;
	return true;
}

/* What ibk_mkey_check()'s verdict @v means for an SMP of @method. */
static const char *mkey_verdict_text(enum ibk_mkey_verdict v, uint8_t method)
{
	if (v == IBK_MKEY_VIOLATION)
		return "dropped without a reply (the requester times out), "
		       "M_KeyViolations + 1, trap 256, lease timer starts";
	if (v == IBK_MKEY_PROCESS_HIDE_MKEY)
		return "answered, PortInfo's M_Key as 0";
	if (method == IBK_MAD_METHOD_TRAP_REPRESS)
		return "processed, never answered";
	if (method == IBK_MAD_METHOD_GET || method == IBK_MAD_METHOD_SET)
		return "processed and answered";
	return "not checked: handed on, never answered";
}

/*
 * What an SMP carrying @smp_mkey with @method gets from a port whose M_Key
 * is @port_mkey, at each protect level, by ibk_mkey_check() with no lease
 * running.
 */
static void explain_mkey(uint64_t port_mkey, uint64_t smp_mkey,
			 uint8_t method)
{
	bool good = port_mkey == 0 || port_mkey == smp_mkey;
	uint8_t level;

	printf("SMP %s (0x%02x) with M_Key 0x%016llx to a port whose M_Key is "
	       "0x%016llx\n", method_label(method), method,
	       (unsigned long long)smp_mkey, (unsigned long long)port_mkey);
	field("key:", "%s", port_mkey == 0 ? "good (the port's M_Key is 0: "
	      "no protection)" : good ? "good (equal)" : "bad");
	for (level = 0; level < 4; level++) {
		struct ibk_mkey_state st = { port_mkey, 0, 60, level, false };
		enum ibk_mkey_verdict v = ibk_mkey_check(&st, method, smp_mkey,
							 0);
		char label[16];

		snprintf(label, sizeof(label), "level %u:", level);
		field(label, "%s: %s%s", ibk_mkey_verdict_name(v),
		      mkey_verdict_text(v, method),
		      level == 3 ? " (3 acts as 2)" : "");
	}
	if (method != IBK_MAD_METHOD_GET && method != IBK_MAD_METHOD_SET &&
	    method != IBK_MAD_METHOD_TRAP_REPRESS)
		puts("only SubnGet, SubnSet and SubnTrapRepress are checked "
		     "against the M_Key");
}

/*
 * The bytes of a Notice (64) or of the SMP carrying it (256) from @arg:
 * the file it names, or else hex digits (spaces, ':' and '-' between
 * bytes allowed). 0, or the exit status after the complaint.
 */
static int read_notice(const char *arg, uint8_t notice[IBK_NOTICE_LEN])
{
	uint8_t buf[IBK_MAD_LEN + 1];
	size_t n = 0;
	FILE *fp = fopen(arg, "rb");
	const char *s;

	if (fp) {
		n = fread(buf, 1, sizeof(buf), fp);
		fclose(fp);
	} else {
		for (s = arg; *s && n < sizeof(buf); ) {
			if (*s == ' ' || *s == ':' || *s == '-') {
				s++;
				continue;
			}
			if (!isxdigit((unsigned char)s[0]) ||
			    !isxdigit((unsigned char)s[1]))
				return bad_arg("notice", arg, "a file, or hex "
					       "bytes of a Notice (64) or SMP "
					       "(256)");
			sscanf(s, "%2hhx", &buf[n++]);
			s += 2;
		}
	}
	if (n == IBK_MAD_LEN &&
	    ibk_mad_attr_id(buf) == IBK_SMP_ATTR_NOTICE) {
		memcpy(notice, ibk_smp_data(buf), IBK_NOTICE_LEN);
		return 0;
	}
	if (n == IBK_NOTICE_LEN) {
		memcpy(notice, buf, IBK_NOTICE_LEN);
		return 0;
	}
	return bad_arg("notice", arg, "64 bytes of a Notice, or a 256-byte "
		       "SMP of attribute Notice (0x0002)");
}

static void describe_trap_256(const struct ibk_trap_256 *t)
{
	unsigned i;

	printf("Bad M_Key 0x%016llx from LID 0x%04x attempted %s (0x%02x) "
	       "with attribute 0x%04x, modifier 0x%08x\n",
	       (unsigned long long)t->mkey, t->lid, method_label(t->method),
	       t->method, t->attr_id, t->attr_mod);
	field("LIDADDR:", "0x%04x", t->lid);
	field("M_KEY:", "0x%016llx", (unsigned long long)t->mkey);
	field("METHOD:", "0x%02x (%s)", t->method, method_label(t->method));
	field("ATTRIBUTEID:", "0x%04x", t->attr_id);
	field("ATTRMODIFIER:", "0x%08x", t->attr_mod);
	if (!t->dr_notice) {
		field("DRNotice:", "no (the SMP was LID-routed)");
		return;
	}
	field("DRNotice:", "yes (the SMP was directed route)");
	field("DRSLID:", "0x%04x", t->dr_slid);
	field("DRHopCount:", "%u%s", t->dr_hop_cnt, t->dr_truncated ?
	      " (path truncated: it was longer)" : "");
	printf("  %-14s ", "return path:");
	for (i = 0; i < t->dr_hop_cnt && i < IBK_TRAP_DR_PATH_LEN; i++)
		printf("%s%u", i ? "," : "", t->dr_return_path[i]);
	putchar('\n');
}

static void describe_trap_key(int trap, const struct ibk_trap_key *t)
{
	char g1[IBK_GID_STRLEN], g2[IBK_GID_STRLEN];

	printf("Bad %s: a packet from LID 0x%04x QP 0x%06x to LID 0x%04x QP "
	       "0x%06x carried %s 0x%0*x\n", trap == IBK_TRAP_BAD_PKEY ?
	       "P_Key" : "Q_Key", t->lid1, t->qp1, t->lid2, t->qp2,
	       trap == IBK_TRAP_BAD_PKEY ? "P_Key" : "Q_Key",
	       trap == IBK_TRAP_BAD_PKEY ? 4 : 8,
	       trap == IBK_TRAP_BAD_PKEY ? t->key & 0xffffu : t->key);
	field("LIDADDR1:", "0x%04x (source)", t->lid1);
	field("LIDADDR2:", "0x%04x (destination)", t->lid2);
	field("KEY:", "0x%08x", t->key);
	field("SL:", "%u", t->sl);
	field("QP1:", "0x%06x (source)", t->qp1);
	field("QP2:", "0x%06x (destination)", t->qp2);
	field("GIDADDR1:", "%s", ibk_gid_ntop(&t->gid1, g1));
	field("GIDADDR2:", "%s", ibk_gid_ntop(&t->gid2, g2));
}

/* ---- ports, as the kernel's sysfs shows them ---- */

/*
 * Linux lists each RDMA device under /sys/class/infiniband/DEVICE, and each
 * port under ports/N: state ("4: ACTIVE"), link_layer ("InfiniBand",
 * "Ethernet"), pkeys/I (one P_Key per table index, "0xffff"), gids/I (the
 * GID in its full form, all zeros for an empty slot), and, since Linux 4.x,
 * gid_attrs/types/I ("IB/RoCE v1", "RoCE v2") and gid_attrs/ndevs/I (the
 * netdev of a RoCE GID). Reading an empty slot's attributes fails; a
 * non-empty slot's type must be there whenever gid_attrs is.
 */
#define SYSFS_DEFAULT	"/sys/class/infiniband"
#define SYSFS_LINE	128

struct gid_slot {
	struct ibk_gid gid;
	char type[SYSFS_LINE];		/* "" when gid_attrs is absent */
	char ndev[SYSFS_LINE];		/* "" when there is none */
};

struct port_info {
	char *dev;
	unsigned num;
	unsigned state;			/* 0 NOP .. 5 ACTIVE_DEFER */
	char link_layer[SYSFS_LINE];
	uint32_t npkeys, ngids;
	ibk_pkey_t *pkeys;
	struct gid_slot *gids;
};

static const char *const port_states[] = {
	"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
};

/* One complaint about sysfs on stderr; the exit status. */
static int __attribute__((format(printf, 1, 2))) sysfs_error(const char *fmt, ...)
{
	va_list ap;

	fputs("ibkeys: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_BAD_ARG;
}

/* snprintf() into a path buffer; false (complained) if it does not fit. */
static bool __attribute__((format(printf, 3, 4)))
make_path(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < size)
		return true;
	sysfs_error("path too long: %.60s...", buf);
	return false;
}

/* The first line of @path without its newline: 0, or an errno (ERANGE
 * for a line that does not fit). */
static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t len;
	int err = 0;

	if (!f)
		return errno;
	buf[0] = '\0';
	if (!fgets(buf, (int)size, f) && ferror(f))
		err = errno ? errno : EIO;
	fclose(f);
	if (err)
		return err;
	len = strlen(buf);
	if (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	else if (len == size - 1)
		return ERANGE;
	return 0;
}

/* read_line() of DIR/NAME, or the complaint naming the path. */
static int read_port_file(const char *dir, const char *name, char *buf,
			  size_t size)
{
	char path[4096];
	int err;

	buf[0] = '\0';
	if (!make_path(path, sizeof(path), "%s/%s", dir, name))
		return EXIT_BAD_ARG;
	err = read_line(path, buf, size);
	if (err)
		return sysfs_error("%s: %s", path, strerror(err));
	return 0;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* The number of entries of a table directory whose files are named 0, 1,
 * ...: the largest name plus one. -1 (complained) if it cannot be read. */
static long count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	long n = 0;

	if (!d) {
		sysfs_error("%s: %s", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		long v;

		if (!all_digits(e->d_name) || strlen(e->d_name) > 6)
			continue;
		v = strtol(e->d_name, NULL, 10) + 1;
		if (v > n)
			n = v;
	}
	closedir(d);
	return n;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_numbers(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return (x > y) - (x < y);
}

/* Sorted names of @dir's entries that pass @keep, in *@out (free both). */
static int list_dir(const char *dir, bool (*keep)(const char *), char ***out,
		    size_t *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;

	if (!d)
		return errno;
	while ((e = readdir(d)) != NULL) {
		char **more;

		if (!keep(e->d_name))
			continue;
		more = realloc(names, (n + 1) * sizeof(*names));
		if (!more || !(more[n] = strdup(e->d_name))) {
			names = more ? more : names;
			break;
		}
		names = more;
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	*out = names;
	*count = n;
	return 0;
}

static bool is_device_name(const char *s)
{
	return s[0] != '.' && strchr(s, '/') == NULL;
}

static bool is_port_name(const char *s)
{
	return all_digits(s) && strlen(s) <= 3;
}

static void free_names(char **names, size_t n)
{
	while (n)
		free(names[--n]);
	free(names);
}

static void port_free(struct port_info *p)
{
	free(p->dev);
	free(p->pkeys);
	free(p->gids);
	memset(p, 0, sizeof(*p));
}

/* "4: ACTIVE", the number and the name agreeing. */
static bool parse_state(const char *s, unsigned *state)
{
	unsigned long long v;
	char num[8];
	const char *colon = strchr(s, ':');

	if (!colon || colon == s || (size_t)(colon - s) >= sizeof(num) ||
	    colon[1] != ' ')
		return false;
	memcpy(num, s, (size_t)(colon - s));
	num[colon - s] = '\0';
	if (!parse_number(num, 5, &v) || strcmp(colon + 2, port_states[v]) != 0)
		return false;
	*state = (unsigned)v;
	return true;
}

static int read_pkeys(const char *portdir, struct port_info *p)
{
	char dir[4096], name[32], line[SYSFS_LINE];
	long n;
	uint32_t i;

	if (!make_path(dir, sizeof(dir), "%s/pkeys", portdir))
		return EXIT_BAD_ARG;
	n = count_entries(dir);
	if (n < 0)
		return EXIT_BAD_ARG;
	p->npkeys = (uint32_t)n;
	p->pkeys = calloc(n ? (size_t)n : 1, sizeof(*p->pkeys));
	if (!p->pkeys)
		return sysfs_error("out of memory");
	for (i = 0; i < p->npkeys; i++) {
		snprintf(name, sizeof(name), "pkeys/%u", (unsigned)i);
		if (read_port_file(portdir, name, line, sizeof(line)))
			return EXIT_BAD_ARG;
		if (!parse_pkey(line, &p->pkeys[i]))
			return sysfs_error("malformed P_Key '%s' in %s/%s: expected 0x0000-0xffff",
					   line, portdir, name);
	}
	return 0;
}

static int read_gids(const char *portdir, struct port_info *p)
{
	char dir[4096], name[48], line[SYSFS_LINE];
	bool have_attrs;
	long n;
	uint32_t i;

	if (!make_path(dir, sizeof(dir), "%s/gids", portdir))
		return EXIT_BAD_ARG;
	n = count_entries(dir);
	if (n < 0 || !make_path(dir, sizeof(dir), "%s/gid_attrs", portdir))
		return EXIT_BAD_ARG;
	have_attrs = access(dir, F_OK) == 0;
	p->ngids = (uint32_t)n;
	p->gids = calloc(n ? (size_t)n : 1, sizeof(*p->gids));
	if (!p->gids)
		return sysfs_error("out of memory");
	for (i = 0; i < p->ngids; i++) {
		struct gid_slot *g = &p->gids[i];
		char path[4096];

		snprintf(name, sizeof(name), "gids/%u", (unsigned)i);
		if (read_port_file(portdir, name, line, sizeof(line)))
			return EXIT_BAD_ARG;
		if (ibk_gid_pton(line, &g->gid) != 0)
			return sysfs_error("malformed GID '%s' in %s/%s: expected IPv6 address text",
					   line, portdir, name);
		if (ibk_gid_is_zero(&g->gid) || !have_attrs)
			continue;
		snprintf(name, sizeof(name), "gid_attrs/types/%u", (unsigned)i);
		if (read_port_file(portdir, name, g->type, sizeof(g->type)))
			return EXIT_BAD_ARG;
		if (strcmp(g->type, "IB/RoCE v1") != 0 &&
		    strcmp(g->type, "RoCE v2") != 0)
			return sysfs_error("malformed GID type '%s' in %s/%s: expected 'IB/RoCE v1' or 'RoCE v2'",
					   g->type, portdir, name);
		/* An IB GID has no netdev: reading it fails, and that is
		 * the answer. */
		if (!make_path(path, sizeof(path), "%s/gid_attrs/ndevs/%u",
			       portdir, (unsigned)i))
			return EXIT_BAD_ARG;
		if (read_line(path, g->ndev, sizeof(g->ndev)) != 0)
			g->ndev[0] = '\0';
	}
	return 0;
}

/* Reads @dev's port @num under @sysfs into *@p. 0, or the exit status. */
static int read_port(const char *sysfs, const char *dev, unsigned num,
		     struct port_info *p)
{
	char portdir[4096], line[SYSFS_LINE];
	int rc;

	memset(p, 0, sizeof(*p));
	p->dev = strdup(dev);
	p->num = num;
	if (!p->dev)
		return sysfs_error("out of memory");
	if (!make_path(portdir, sizeof(portdir), "%s/%s/ports/%u", sysfs, dev,
		       num))
		return EXIT_BAD_ARG;
	if (read_port_file(portdir, "state", line, sizeof(line)))
		return EXIT_BAD_ARG;
	if (!parse_state(line, &p->state))
		return sysfs_error("malformed port state '%s' in %s/state: expected 'N: NAME', N 0-5 (NOP, DOWN, INIT, ARMED, ACTIVE, ACTIVE_DEFER)",
				   line, portdir);
	if (read_port_file(portdir, "link_layer", p->link_layer,
			   sizeof(p->link_layer)))
		return EXIT_BAD_ARG;
	if (strcmp(p->link_layer, "InfiniBand") != 0 &&
	    strcmp(p->link_layer, "Ethernet") != 0)
		return sysfs_error("malformed link layer '%s' in %s/link_layer: expected InfiniBand or Ethernet",
				   p->link_layer, portdir);
	rc = read_pkeys(portdir, p);
	if (rc == 0)
		rc = read_gids(portdir, p);
	return rc;
}

/* What a GID in a port's table was made from, when the library can tell. */
static void gid_origin(const struct ibk_gid *gid, char *out, size_t size)
{
	uint8_t mac[6];

	out[0] = '\0';
	if (ibk_gid_is_v4mapped(gid)) {
		uint32_t a = ibk_gid_to_ipv4(gid);

		snprintf(out, size, "IPv4 %u.%u.%u.%u", a >> 24, a >> 16 & 0xff,
			 a >> 8 & 0xff, a & 0xff);
	} else if (ibk_gid_is_link_local(gid) &&
		   ibk_gid_to_mac(gid, mac) == IBK_OK) {
		snprintf(out, size, "MAC %02x:%02x:%02x:%02x:%02x:%02x",
			 mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
	} else if (ibk_gid_is_multicast(gid)) {
		snprintf(out, size, "multicast");
	}
}

static void print_port(const struct port_info *p)
{
	uint32_t i, valid = 0, used = 0;

	printf("%s port %u: %s, link layer %s\n", p->dev, p->num,
	       port_states[p->state], p->link_layer);
	for (i = 0; i < p->npkeys; i++)
		valid += ibk_pkey_is_valid(p->pkeys[i]);
	printf("  P_Key table: %u %s, %u valid\n", (unsigned)p->npkeys,
	       p->npkeys == 1 ? "entry" : "entries", (unsigned)valid);
	for (i = 0; i < p->npkeys; i++) {
		ibk_pkey_t k = p->pkeys[i];

		if (!ibk_pkey_is_valid(k))
			continue;
		printf("    [%u] 0x%04x  %s member of partition 0x%04x%s\n",
		       (unsigned)i, k, ibk_pkey_is_full(k) ? "full" : "limited",
		       ibk_pkey_base(k),
		       ibk_pkey_base(k) == ibk_pkey_base(IBK_PKEY_DEFAULT) ?
		       " (the default partition)" : "");
	}
	for (i = 0; i < p->ngids; i++)
		used += !ibk_gid_is_zero(&p->gids[i].gid);
	printf("  GID table: %u %s, %u in use\n", (unsigned)p->ngids,
	       p->ngids == 1 ? "entry" : "entries", (unsigned)used);
	for (i = 0; i < p->ngids; i++) {
		const struct gid_slot *g = &p->gids[i];
		char text[IBK_GID_STRLEN], origin[64];

		if (ibk_gid_is_zero(&g->gid))
			continue;
		gid_origin(&g->gid, origin, sizeof(origin));
		printf("    [%u] %s  %s  %s%s%s\n", (unsigned)i,
		       ibk_gid_ntop(&g->gid, text),
		       g->type[0] ? g->type : "type unknown",
		       g->ndev[0] ? g->ndev : "-", origin[0] ? "  " : "",
		       origin);
	}
}

/*
 * May this port talk with a peer holding P_Key @peer? Only while it is
 * ARMED or ACTIVE, and only through an entry that matches the peer's key:
 * the first full member of the partition, else the first limited one,
 * which matches a full peer only.
 */
static void explain_port_pkey(const struct port_info *p, ibk_pkey_t peer)
{
	int match = -1, same_base = -1;
	uint32_t i;

	if (!ibk_pkey_is_valid(peer)) {
		printf("may talk: no (0x%04x is invalid and matches nothing)\n",
		       peer);
		return;
	}
	if (p->state != 3 && p->state != 4 && p->state != 5) {
		printf("may talk: no (the port is %s: its P_Key table means nothing until it is ARMED or ACTIVE)\n",
		       port_states[p->state]);
		return;
	}
	for (i = 0; i < p->npkeys; i++) {
		ibk_pkey_t k = p->pkeys[i];

		if (!ibk_pkey_is_valid(k) || ibk_pkey_base(k) != ibk_pkey_base(peer))
			continue;
		if (same_base < 0)
			same_base = (int)i;
		if (ibk_pkey_match(k, peer) &&
		    (match < 0 || (ibk_pkey_is_full(k) &&
				   !ibk_pkey_is_full(p->pkeys[match]))))
			match = (int)i;
	}
	if (match >= 0) {
		ibk_pkey_t k = p->pkeys[match];

		printf("may talk: yes (entry [%d] 0x%04x of partition 0x%04x; %s)\n",
		       match, k, ibk_pkey_base(k),
		       ibk_pkey_is_full(k) && ibk_pkey_is_full(peer) ?
		       "both full members" :
		       ibk_pkey_is_full(k) ? "the port is a full member" :
		       "the peer is a full member");
	} else if (same_base >= 0) {
		printf("may talk: no (the port holds only limited 0x%04x of partition 0x%04x, and 0x%04x is limited too: limited members never talk)\n",
		       p->pkeys[same_base], ibk_pkey_base(peer), peer);
	} else {
		printf("may talk: no (partition 0x%04x is not in the port's P_Key table)\n",
		       ibk_pkey_base(peer));
	}
}

/* DEVICE or DEVICE:PORT. */
static int parse_port_arg(const char *arg, char **dev, unsigned *num)
{
	const char *colon = strrchr(arg, ':');
	unsigned long long v;
	size_t len = colon ? (size_t)(colon - arg) : strlen(arg);

	*num = 0;
	if (colon) {
		if (!parse_number(colon + 1, 255, &v) || v == 0)
			return bad_arg("port", arg, "DEVICE or DEVICE:PORT, PORT 1-255");
		*num = (unsigned)v;
	}
	*dev = malloc(len + 1);
	if (!*dev)
		return sysfs_error("out of memory");
	memcpy(*dev, arg, len);
	(*dev)[len] = '\0';
	if (!len || !is_device_name(*dev)) {
		free(*dev);
		return bad_arg("device", arg, "an RDMA device name such as mlx5_0 or rxe0");
	}
	return 0;
}

/* Every port of @dev, or only @only (0: all), appended to *@ports. */
static int read_device(const char *sysfs, const char *dev, unsigned only,
		       struct port_info **ports, size_t *nports)
{
	char dir[4096], **names;
	unsigned *nums;
	size_t n, i;
	int err, rc = 0;

	if (!make_path(dir, sizeof(dir), "%s/%s/ports", sysfs, dev))
		return EXIT_BAD_ARG;
	err = list_dir(dir, is_port_name, &names, &n);
	if (err) {
		char devdir[4096];

		if (make_path(devdir, sizeof(devdir), "%s/%s", sysfs, dev) &&
		    access(devdir, F_OK) != 0)
			return sysfs_error("no RDMA device '%s' in %s", dev, sysfs);
		return sysfs_error("%s: %s", dir, strerror(err));
	}
	nums = calloc(n ? n : 1, sizeof(*nums));
	if (!nums) {
		free_names(names, n);
		return sysfs_error("out of memory");
	}
	for (i = 0; i < n; i++)
		nums[i] = (unsigned)strtoul(names[i], NULL, 10);
	free_names(names, n);
	qsort(nums, n, sizeof(*nums), cmp_numbers);
	for (i = 0; i < n && rc == 0; i++) {
		struct port_info *more;

		if (only && nums[i] != only)
			continue;
		more = realloc(*ports, (*nports + 1) * sizeof(**ports));
		if (!more) {
			rc = sysfs_error("out of memory");
			break;
		}
		*ports = more;
		rc = read_port(sysfs, dev, nums[i], &(*ports)[(*nports)++]);
	}
	if (rc == 0 && only) {
		for (i = 0; i < n && nums[i] != only; i++)
			;
		if (i == n)
			rc = sysfs_error("%s has no port %u in %s", dev, only,
					 sysfs);
	}
	if (rc == 0 && n == 0)
		rc = sysfs_error("%s/%s/ports: no ports", sysfs, dev);
	free(nums);
	return rc;
}

/*
 * ibkeys port [DEVICE[:PORT]] [--pkey P_KEY] [--sysfs DIR]: every port
 * of every device, of one device, or one port. Everything is read before
 * anything is printed, so a missing or malformed file leaves stdout empty.
 */
static int cmd_port(int argc, char **argv)
{
	const char *sysfs = SYSFS_DEFAULT, *which = NULL;
	struct port_info *ports = NULL;
	size_t nports = 0, i;
	bool have_pkey = false;
	ibk_pkey_t peer = 0;
	unsigned num = 0;
	char *dev = NULL;
	int rc = 0, k;

	for (k = 0; k < argc; k++) {
		if (strcmp(argv[k], "--sysfs") == 0 ||
		    strcmp(argv[k], "--pkey") == 0) {
			if (k + 1 == argc) {
				fprintf(stderr, "usage: ibkeys port [DEVICE[:PORT]] [--pkey P_KEY] [--sysfs DIR]\n");
				return EXIT_USAGE;
			}
			if (argv[k][2] == 's') {
				sysfs = argv[++k];
			} else {
				if (!parse_pkey(argv[++k], &peer))
					return bad_arg("P_Key", argv[k], "0x0000-0xffff");
				have_pkey = true;
			}
		} else if (argv[k][0] == '-' || which) {
			fprintf(stderr, "usage: ibkeys port [DEVICE[:PORT]] [--pkey P_KEY] [--sysfs DIR]\n");
			return EXIT_USAGE;
		} else {
			which = argv[k];
		}
	}
	if (which) {
		rc = parse_port_arg(which, &dev, &num);
		if (rc)
			return rc;
		rc = read_device(sysfs, dev, num, &ports, &nports);
		free(dev);
	} else {
		char **names;
		size_t n;
		int err = list_dir(sysfs, is_device_name, &names, &n);

		if (err)
			return sysfs_error("%s: %s", sysfs, strerror(err));
		if (n == 0)
			printf("no RDMA devices in %s\n", sysfs);
		for (i = 0; i < n && rc == 0; i++)
			rc = read_device(sysfs, names[i], 0, &ports, &nports);
		free_names(names, n);
	}
	for (i = 0; rc == 0 && i < nports; i++) {
		print_port(&ports[i]);
		if (have_pkey)
			explain_port_pkey(&ports[i], peer);
	}
	for (i = 0; i < nports; i++)
		port_free(&ports[i]);
	free(ports);
	return rc;
}

/* ---- subcommands: argv[0] is the first argument after the name ---- */

static int cmd_pkey(int argc, char **argv)
{
	ibk_pkey_t key[2];
	int i;

	for (i = 0; i < argc; i++)
		if (!parse_pkey(argv[i], &key[i]))
			return bad_arg("P_Key", argv[i], "0x0000-0xffff");
	for (i = 0; i < argc; i++)
		describe_pkey(key[i]);
	if (argc == 2)
		explain_pkey_pair(key[0], key[1]);
	return 0;
}

static int cmd_qkey(int argc, char **argv)
{
	ibk_qkey_t qkey;

	(void)argc;
	if (!parse_qkey(argv[0], &qkey))
		return bad_arg("Q_Key", argv[0], "0x00000000-0xffffffff");
	describe_qkey(qkey);
	return 0;
}

static int cmd_gid(int argc, char **argv)
{
	struct ibk_gid gid;

	(void)argc;
	if (ibk_gid_pton(argv[0], &gid) != 0)
		return bad_arg("GID", argv[0],
			       "IPv6 address text such as fe80::2:c903:1:2345");
	describe_gid(&gid);
	return 0;
}

/*
 * The IPoIB MGID (RFC 4391) of multicast group GROUP, IPv4 or IPv6, in
 * partition P_KEY, or of the IPv4 broadcast group when there is no GROUP.
 */
static int cmd_mgid(int argc, char **argv)
{
	unsigned scope = IBK_GID_SCOPE_LINK;
	bool have_scope = false, have_group = false, ipv6 = false;
	const char *group_arg = NULL;
	struct ibk_gid mgid, group6;
	uint32_t group4 = 0;
	ibk_pkey_t pkey;
	int i, rc;

	if (!parse_pkey(argv[0], &pkey))
		return bad_arg("P_Key", argv[0], "0x0000-0xffff");
	for (i = 1; i < argc; i++) {
		if (!have_group && parse_ipv4(argv[i], &group4)) {
			have_group = true;
			group_arg = argv[i];
		} else if (!have_group && strchr(argv[i], ':') &&
			   ibk_gid_pton(argv[i], &group6) == 0) {
			have_group = ipv6 = true;
			group_arg = argv[i];
		} else if (!have_scope && parse_scope(argv[i], &scope)) {
			have_scope = true;
		} else {
			return bad_arg("group or scope", argv[i],
				       "one IPv4 or IPv6 multicast group and one scope (0-15, link, site, org, global)");
		}
	}
	if (!ibk_pkey_is_valid(pkey))
		return bad_arg("P_Key", argv[0],
			       "a valid P_Key (base 0 names no partition)");
	if (!have_group)
		rc = ibk_gid_ipoib_broadcast(pkey, scope, &mgid);
	else if (ipv6)
		rc = ibk_gid_ipoib_mgid_ipv6(pkey, scope, &group6, &mgid);
	else
		rc = ibk_gid_ipoib_mgid_ipv4(pkey, scope, group4, &mgid);
	if (rc != IBK_OK)
		return bad_arg("multicast group", group_arg, ipv6 ?
			       "an IPv6 multicast group, ff00::/8" :
			       "an IPv4 multicast group, 224.0.0.0/4");
	describe_gid(&mgid);
	return 0;
}

static int cmd_roce(int argc, char **argv)
{
	struct ibk_gid gid;
	uint8_t mac[6];
	uint32_t ipv4;

	(void)argc;
	if (parse_mac(argv[0], mac))
		gid = ibk_gid_from_mac(mac);
	else if (parse_ipv4(argv[0], &ipv4))
		gid = ibk_gid_from_ipv4(ipv4);
	else if (ibk_gid_pton(argv[0], &gid) != 0)
		return bad_arg("MAC or IP address", argv[0],
			       "aa:bb:cc:dd:ee:ff, a.b.c.d or an IPv6 address");
	describe_gid(&gid);
	return 0;
}

static int cmd_guid(int argc, char **argv)
{
	char hex[IBK_GUID_STRLEN], colon[IBK_GUID_STRLEN];
	struct ibk_gid port_gid;
	ibk_guid_t guid;

	(void)argc;
	if (ibk_guid_pton(argv[0], &guid) != 0)
		return bad_arg("GUID", argv[0],
			       "0x and 1-16 hex digits, or xxxx:xxxx:xxxx:xxxx");
	printf("GUID %s\n", ibk_guid_ntop(guid, hex));
	field("colon form:", "%s", ibk_guid_ntop_colon(guid, colon));
	puts("port GID (default subnet prefix):");
	port_gid = ibk_gid_make(IBK_GID_DEFAULT_PREFIX, guid);
	describe_gid(&port_gid);
	return 0;
}

static int cmd_rkey(int argc, char **argv)
{
	unsigned long long v;
	ibk_rkey_t key;

	(void)argc;
	if (!parse_number(argv[0], 0xffffffffu, &v))
		return bad_arg("R_Key", argv[0], "0x00000000-0xffffffff");
	key = (ibk_rkey_t)v;
	printf("R_Key 0x%08x\n", key);
	field("index:", "0x%06x (%u): the region or window it names",
	      ibk_rkey_index(key), ibk_rkey_index(key));
	field("key byte:", "0x%02x: the consumer's part, which fast "
	      "register and type 2 binds set", ibk_rkey_byte(key));
	field("next key:", "0x%08x (ibv_inc_rkey: key byte + 1, wrapping, "
	      "index kept)", ibk_rkey_next(key));
	return 0;
}

static int cmd_range(int argc, char **argv)
{
	static const char *const what[4] = {
		"IOVA", "length", "base", "region length",
	};
	unsigned long long v[4];
	int i;

	(void)argc;
	for (i = 0; i < 4; i++)
		if (!parse_number(argv[i], ~0ull, &v[i]))
			return bad_arg(what[i], argv[i],
				       "a 64-bit number, decimal or 0x-hex");
	explain_range(v[0], v[1], v[2], v[3]);
	return 0;
}

static int cmd_mkey(int argc, char **argv)
{
	unsigned long long port_mkey, smp_mkey;
	uint8_t method;

	(void)argc;
	if (!parse_number(argv[0], ~0ull, &port_mkey))
		return bad_arg("port M_Key", argv[0], "a 64-bit number");
	if (!parse_number(argv[1], ~0ull, &smp_mkey))
		return bad_arg("SMP M_Key", argv[1], "a 64-bit number");
	if (!parse_method(argv[2], &method))
		return bad_arg("method", argv[2], "get, set, trap-repress, "
			       "getresp, trap, report, send or 0-255");
	explain_mkey(port_mkey, smp_mkey, method);
	return 0;
}

/* The generic header of the notice @n, trap @trap. */
static void describe_notice(const uint8_t *n, int trap)
{
	printf("Notice: trap %d, type %u%s, producer %u, issuer LID 0x%04x, "
	       "count %u\n", trap, ibk_notice_type(n),
	       ibk_notice_type(n) == IBK_NOTICE_TYPE_SECURITY ?
	       " (security)" : "", (unsigned)ibk_notice_producer(n),
	       ibk_notice_issuer_lid(n), ibk_notice_count(n));
}

static int cmd_trap(int argc, char **argv)
{
	uint8_t n[IBK_NOTICE_LEN];
	struct ibk_trap_256 t256;
	struct ibk_trap_key tkey;
	int rc = read_notice(argv[0], n), trap;

	(void)argc;
	if (rc != 0)
		return rc;
	if (ibk_notice_parse_256(n, &t256) == IBK_OK) {
		describe_notice(n, IBK_TRAP_BAD_MKEY);
		describe_trap_256(&t256);
		return 0;
	}
	trap = ibk_notice_parse_key_trap(n, &tkey);
	if (trap < 0)
		return bad_arg("notice", argv[0], "a generic Notice of trap "
			       "256, 257 or 258");
	describe_notice(n, trap);
	describe_trap_key(trap, &tkey);
	return 0;
}

static const struct command {
	const char *name;
	int min_args, max_args;
	const char *args;
	const char *summary;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "pkey", 1, 2, "P_KEY [P_KEY]",
	  "decode; with two keys, may their QPs talk?", cmd_pkey },
	{ "qkey", 1, 1, "Q_KEY",
	  "range, control and send-side use of a Q_Key", cmd_qkey },
	{ "gid", 1, 1, "GID",
	  "prefix, GUID, text forms and kind of a GID", cmd_gid },
	{ "mgid", 1, 3, "P_KEY [GROUP] [SCOPE]",
	  "IPoIB MGID of a group (default: IPv4 broadcast)", cmd_mgid },
	{ "roce", 1, 1, "MAC|IPV4|IPV6",
	  "default GID of a MAC, or the GID of an IP address", cmd_roce },
	{ "guid", 1, 1, "GUID",
	  "both text forms of a GUID and its port GID", cmd_guid },
	{ "rkey", 1, 1, "KEY",
	  "index, key byte and next key of an L_Key or R_Key", cmd_rkey },
	{ "range", 4, 4, "IOVA LEN BASE REGION_LEN",
	  "is [IOVA, +LEN) inside the region, and why", cmd_range },
	{ "port", 0, 5, "[DEV[:PORT]] [--pkey P]",
	  "RDMA ports from sysfs; may one talk in P's partition?", cmd_port },
	{ "mkey", 3, 3, "PORT_MKEY SMP_MKEY METHOD",
	  "what the SMP gets at each M_Key protect level", cmd_mkey },
	{ "trap", 1, 1, "FILE|HEX",
	  "decode a trap 256, 257 or 258 Notice (or its SMP)", cmd_trap },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	size_t i;

	fputs("usage: ibkeys COMMAND ARG...\n"
	      "Explain InfiniBand keys and identifiers by the InfiniBand rules.\n\n",
	      out);
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-5s %-25s  %s\n", commands[i].name,
			commands[i].args, commands[i].summary);
	fputs("\nNumbers are decimal or 0x-prefixed hex. SCOPE is 0-15 or link,\n"
	      "site, org, global (default link). GROUP is an IPv4 (224.0.0.0/4)\n"
	      "or IPv6 (ff00::/8) multicast address.\n"
	      "A GUID is 0x0002c90300012345 or 0002:c903:0001:2345.\n"
	      "port reads " SYSFS_DEFAULT " (--sysfs DIR reads DIR instead);\n"
	      "with --pkey it says whether each port may talk with a peer\n"
	      "holding that P_Key, and why.\n"
	      "METHOD is get, set, trap-repress, getresp, trap, report, send\n"
	      "or a number. trap reads a file, or hex bytes, of a Notice (64)\n"
	      "or of the SMP carrying it (256).\n"
	      "Exit status: 0 done, 1 malformed argument or sysfs file, 2 usage error.\n",
	      out);
}

/* The whole program but for main(), so that tests/fuzz/explainer.c can
 * run it on the fuzzer's arguments (built with IBKEYS_NO_MAIN). */
static int ibkeys(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	for (i = 0; i < NCOMMANDS; i++) {
		const struct command *c = &commands[i];
		int nargs = argc - 2;

		if (strcmp(argv[1], c->name) != 0)
			continue;
		if (nargs < c->min_args || nargs > c->max_args) {
			fprintf(stderr, "usage: ibkeys %s %s\n", c->name,
				c->args);
			return EXIT_USAGE;
		}
		return c->run(nargs, argv + 2);
	}
	fprintf(stderr, "ibkeys: unknown command '%s' (see ibkeys --help)\n",
		argv[1]);
	return EXIT_USAGE;
}

#ifndef IBKEYS_NO_MAIN
int main(int argc, char **argv)
{
	return ibkeys(argc, argv);
}
#endif
