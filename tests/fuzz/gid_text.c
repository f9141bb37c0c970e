/* SPDX-License-Identifier: MIT */
/*
 * gid_text: GID text against glibc, differentially. The input's first
 * byte picks the side:
 *  - even: the rest is text; ibk_gid_pton() must accept exactly what
 *    inet_pton(AF_INET6) accepts, with the same 16 bytes, and leave its
 *    output alone when it refuses;
 *  - odd: the next 16 bytes are a GID.
 * Every GID either side yields is then printed: ibk_gid_ntop() must write
 * inet_ntop(AF_INET6)'s text byte for byte, ibk_gid_ntop_full() the eight
 * four-digit groups of RFC 4291 2.2 (as printf writes them), and both
 * texts must parse back to the same GID, by ibk_gid_pton() and by glibc.
 */
#include <arpa/inet.h>

#include "fuzz.h"
#include "ib_keys.h"

static void check_prints(const struct ibk_gid *g)
{
	char ours[IBK_GID_STRLEN], glibc[INET6_ADDRSTRLEN];
	char full[IBK_GID_FULL_STRLEN], want_full[IBK_GID_FULL_STRLEN + 8];
	struct ibk_gid back;
	uint8_t raw[16];
	int i, len = 0;

	FZ_CHECK(ibk_gid_ntop(g, ours) == ours, "ntop returned another pointer");
	FZ_CHECK(inet_ntop(AF_INET6, g->raw, glibc, sizeof(glibc)), "inet_ntop");
	FZ_CHECK(strcmp(ours, glibc) == 0, "ntop '%s', glibc '%s'", ours, glibc);

	FZ_CHECK(ibk_gid_ntop_full(g, full) == full, "ntop_full pointer");
	for (i = 0; i < 8; i++)
		len += snprintf(want_full + len, sizeof(want_full) - (size_t)len,
				i ? ":%04x" : "%04x",
				(unsigned)(g->raw[2 * i] << 8 | g->raw[2 * i + 1]));
	FZ_CHECK(strcmp(full, want_full) == 0, "full '%s', want '%s'", full,
		 want_full);

	FZ_CHECK(ibk_gid_pton(ours, &back) == 0 && ibk_gid_equal(&back, g),
		 "'%s' does not read back", ours);
	FZ_CHECK(ibk_gid_pton(full, &back) == 0 && ibk_gid_equal(&back, g),
		 "'%s' does not read back", full);
	FZ_CHECK(inet_pton(AF_INET6, full, raw) == 1 &&
		 memcmp(raw, g->raw, 16) == 0, "glibc cannot read '%s'", full);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = fz_init(data, size);
	struct ibk_gid g;

	if (fz_u8(&f) & 1) {
		fz_bytes(&f, g.raw, sizeof(g.raw));
		check_prints(&g);
	} else {
		char *text = fz_string(&f);
		uint8_t glibc[16];
		int ours, theirs;

		memset(g.raw, 0xa5, sizeof(g.raw));
		ours = ibk_gid_pton(text, &g);
		theirs = inet_pton(AF_INET6, text, glibc);
		FZ_CHECK((ours == 0) == (theirs == 1),
			 "'%s': ibk_gid_pton %d, inet_pton %d", text, ours,
			 theirs);
		if (ours == 0) {
			FZ_CHECK(memcmp(g.raw, glibc, 16) == 0,
				 "'%s' parsed to other bytes", text);
			check_prints(&g);
		} else {
			FZ_CHECK(ours == IBK_EINVAL, "'%s': error %d", text, ours);
			for (int i = 0; i < 16; i++)
				FZ_CHECK(g.raw[i] == 0xa5,
					 "'%s' refused but output written", text);
		}
		free(text);
	}
	return 0;
}
