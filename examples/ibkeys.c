/* SPDX-License-Identifier: MIT */
/*
 * ibkeys - explain InfiniBand keys and identifiers from the command line.
 *
 *   ibkeys pkey 0x8001 0x0001     may QPs holding these two P_Keys talk?
 *   ibkeys qkey 0x80010000        range, control, send-side effect
 *   ibkeys gid fe80::2:c903:1:2345
 *   ibkeys mgid 0x8001 [SCOPE] [ipv4|ipv6]
 *   ibkeys roce 52:54:00:12:34:56 | 192.168.1.2 | 2001:db8::1
 *   ibkeys guid 0x0002c90300012345
 *   ibkeys rkey 0x12345678        index, key byte, next key of an R_Key
 *   ibkeys range IOVA LEN BASE REGION_LEN
 *                                 is the access inside the region, and why
 *
 * Every InfiniBand decision (membership, matching, Q_Key class and
 * selection, GID kinds and forms, text in and out) is ib_keys.h's; this
 * file parses numbers, MACs and IPv4 addresses with libc and prints.
 * Exit status: 0 done, 1 malformed argument, 2 usage error.
 */
#define _POSIX_C_SOURCE 200112L	/* inet_pton() */

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* What else the GID is, when it is one of the derived forms. */
static void describe_gid_origin(const struct ibk_gid *gid)
{
	uint8_t mac[6];
	ibk_pkey_t pkey;
	unsigned scope;
	bool ipv6;

	if (ibk_gid_ipoib_mgid_parse(gid, &pkey, &scope, &ipv6) == IBK_OK) {
		field("IPoIB:", "%s broadcast MGID of P_Key 0x%04x, scope 0x%x (%s)",
		      ipv6 ? "IPv6" : "IPv4", pkey, scope, scope_name(scope));
	} else if (ibk_gid_is_v4mapped(gid)) {
		uint32_t a = ibk_gid_to_ipv4(gid);

		field("RoCE v2:", "GID of IPv4 address %u.%u.%u.%u",
		      a >> 24, a >> 16 & 0xff, a >> 8 & 0xff, a & 0xff);
	} else if (!ibk_gid_is_multicast(gid) &&
		   ibk_gid_to_mac(gid, mac) == IBK_OK) {
		field(ibk_gid_is_link_local(gid) ? "RoCE v1:" : "MAC-derived:",
		      "interface id of MAC %02x:%02x:%02x:%02x:%02x:%02x",
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
		printf("in: 0x%llx <= iova and iova + length = 0x%llx <= "
		       "0x%llx, the region's end\n", (unsigned long long)base,
		       (unsigned long long)end,
		       (unsigned long long)region_end);
		return;
	case IBK_RANGE_REGION_WRAPS:
		printf("out: the region's end, base + length, does not fit in "
		       "64 bits\n");
		break;
	case IBK_RANGE_WRAPS:
		printf("out: iova + length does not fit in 64 bits (it wraps "
		       "to 0x%llx)\n", (unsigned long long)end);
		break;
	case IBK_RANGE_BELOW:
		printf("out: iova is below the region's base 0x%llx\n",
		       (unsigned long long)base);
		break;
	case IBK_RANGE_BEYOND:
		printf("out: the access ends at 0x%llx, past the region's end "
		       "0x%llx\n", (unsigned long long)end,
		       (unsigned long long)region_end);
		break;
	}
	if (u64_form_passes)
		printf("note: the u64 test iova < base || iova + length > base "
		       "+ len (Linux rxe, siw) lets this access through\n");
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

static int cmd_mgid(int argc, char **argv)
{
	unsigned scope = IBK_GID_SCOPE_LINK;
	bool ipv6 = false, have_scope = false, have_family = false;
	struct ibk_gid mgid;
	ibk_pkey_t pkey;
	int i;

	if (!parse_pkey(argv[0], &pkey))
		return bad_arg("P_Key", argv[0], "0x0000-0xffff");
	for (i = 1; i < argc; i++) {
		if (!have_family && (strcmp(argv[i], "ipv4") == 0 ||
				     strcmp(argv[i], "ipv6") == 0)) {
			ipv6 = strcmp(argv[i], "ipv6") == 0;
			have_family = true;
		} else if (!have_scope && parse_scope(argv[i], &scope)) {
			have_scope = true;
		} else {
			return bad_arg("scope or family", argv[i],
				       "one scope (0-15, link, site, org, global) and one of ipv4, ipv6");
		}
	}
	if (ipv6) {
		/* the group ff0S::ffff:ffff, so the text stays what it was */
		struct ibk_gid group = ibk_gid_make(0, 0xffffffffu);

		group.raw[0] = 0xff;
		group.raw[1] = (uint8_t)(scope & 0x0f);
		ibk_gid_ipoib_mgid_ipv6(pkey, scope, &group, &mgid);
	} else {
		ibk_gid_ipoib_broadcast(pkey, scope, &mgid);
	}
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
	{ "mgid", 1, 3, "P_KEY [SCOPE] [ipv4|ipv6]",
	  "the IPoIB broadcast MGID of a partition", cmd_mgid },
	{ "roce", 1, 1, "MAC|IPV4|IPV6",
	  "RoCE GID of a MAC (v1) or an IP address (v2)", cmd_roce },
	{ "guid", 1, 1, "GUID",
	  "both text forms of a GUID and its port GID", cmd_guid },
	{ "rkey", 1, 1, "KEY",
	  "index, key byte and next key of an L_Key or R_Key", cmd_rkey },
	{ "range", 4, 4, "IOVA LEN BASE REGION_LEN",
	  "is [IOVA, +LEN) inside the region, and why", cmd_range },
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
	      "site, org, global (default link); the family defaults to ipv4.\n"
	      "A GUID is 0x0002c90300012345 or 0002:c903:0001:2345.\n"
	      "Exit status: 0 done, 1 malformed argument, 2 usage error.\n",
	      out);
}

int main(int argc, char **argv)
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
