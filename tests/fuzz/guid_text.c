/* SPDX-License-Identifier: MIT */
/*
 * guid_text: GUID text against an independent reading of its two forms.
 * The input's first byte picks the side:
 *  - even: the rest is text; ibk_guid_pton() must accept it exactly when
 *    it is "0x"/"0X" and 1-16 hex digits, or four ':'-separated groups of
 *    exactly four hex digits (model.h checks them character by character
 *    with isxdigit()), with the value strtoull() reads, and leave its
 *    output alone otherwise;
 *  - odd: the next 8 bytes are a GUID.
 * Every GUID either side yields is then printed: ibk_guid_ntop() must
 * write printf's "0x%016llx", ibk_guid_ntop_colon() printf's four "%04x"
 * groups, and both must parse back to it.
 */
#include <inttypes.h>

#include "model.h"

static void check_prints(uint64_t guid)
{
	char ours[IBK_GUID_STRLEN], want[32];
	uint64_t back;

	FZ_CHECK(ibk_guid_ntop(guid, ours) == ours, "ntop pointer");
	snprintf(want, sizeof(want), "0x%016" PRIx64, guid);
	FZ_CHECK(strcmp(ours, want) == 0, "ntop '%s', printf '%s'", ours, want);
	FZ_CHECK(ibk_guid_pton(ours, &back) == 0 && back == guid,
		 "'%s' does not read back", ours);

	FZ_CHECK(ibk_guid_ntop_colon(guid, ours) == ours, "ntop_colon pointer");
	snprintf(want, sizeof(want), "%04x:%04x:%04x:%04x",
		 (unsigned)(guid >> 48), (unsigned)(guid >> 32 & 0xffff),
		 (unsigned)(guid >> 16 & 0xffff), (unsigned)(guid & 0xffff));
	FZ_CHECK(strcmp(ours, want) == 0, "colon '%s', printf '%s'", ours, want);
	FZ_CHECK(ibk_guid_pton(ours, &back) == 0 && back == guid,
		 "'%s' does not read back", ours);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = fz_init(data, size);

	if (fz_u8(&f) & 1) {
		check_prints(fz_u64(&f));
	} else {
		char *text = fz_string(&f);
		const uint64_t untouched = 0xa5a5a5a5a5a5a5a5u;
		uint64_t ours = untouched, want = 0;
		int rc = ibk_guid_pton(text, &ours);
		bool ok = model_guid_pton(text, &want);

		FZ_CHECK((rc == 0) == ok, "'%s': ibk_guid_pton %d, model %d",
			 text, rc, ok);
		if (ok) {
			FZ_CHECK(ours == want, "'%s': %" PRIx64 ", want %" PRIx64,
				 text, ours, want);
			check_prints(ours);
		} else {
			FZ_CHECK(rc == IBK_EINVAL && ours == untouched,
				 "'%s' refused: %d, output %" PRIx64, text, rc,
				 ours);
		}
		free(text);
	}
	return 0;
}
