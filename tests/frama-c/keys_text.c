/* SPDX-License-Identifier: MIT */
/*
 * keys_text.c - EVA harness of ib_keys.h's GID and GUID text: the printers
 * on any GID or GUID into a buffer of exactly the documented size (one byte
 * more written would be an alarm), the parsers on text of every length up
 * to TEXT_MAX, any bytes (NUL included) before a NUL at [len] and nothing
 * written after it (one byte read past it would be an alarm); NULL where
 * documented.
 */
#include "harness.h"
#include "ib_keys.h"

/*
 * Past the longest valid text (45 characters: six groups and a dotted quad)
 * and past IBK_GID_STRLEN (46), where the parsers stop reading.
 */
#define TEXT_MAX	48

static void printers(void)
{
	char gid_text[IBK_GID_STRLEN], full[IBK_GID_FULL_STRLEN];
	char guid_text[IBK_GUID_STRLEN];
	struct ibk_gid g;

	UNKNOWN(g);
	(void)ibk_gid_ntop(maybe_null(&g), maybe_null(gid_text));
	(void)ibk_gid_ntop_full(maybe_null(&g), maybe_null(full));
	(void)ibk_guid_ntop(any_u64(), maybe_null(guid_text));
	(void)ibk_guid_ntop_colon(any_u64(), maybe_null(guid_text));
}

static void parsers(void)
{
	char text[TEXT_MAX + 1];
	struct ibk_gid gid;
	ibk_guid_t guid;
	size_t len;

	/* each length on its own, so that EVA knows where the last NUL is;
	 * the lengths go up, so that text[len + 1...] is never written */
	/*@ loop unroll TEXT_MAX + 1; */
	for (len = 0; len <= TEXT_MAX; len++) {
		Frama_C_make_unknown(text, len);
		text[len] = '\0';
		(void)ibk_gid_pton(maybe_null(text), maybe_null(&gid));
		(void)ibk_guid_pton(maybe_null(text), maybe_null(&guid));
	}
}

int main(void)
{
	printers();
	parsers();
	return 0;
}
