/* SPDX-License-Identifier: MIT */
/*
 * ib_keys.h - InfiniBand access-control primitives that need no shared
 * state: the P_Key and Q_Key rules, GID/GUID values and text, the wire
 * headers, the per-packet receive checks and send-side key selection,
 * memory keys and the responder's R_Key check, and the subnet management
 * agent's MAD, M_Key, PortInfo, table-block and trap rules.
 *
 * Sections, in reading order:
 *   Vector paths      which SIMD the bursts use, and its few helpers
 *   Errors            IBK_E* codes and ibk_strerror()
 *   P_Key             membership, validity, matching, bursts (IBA 10.9)
 *   Q_Key             selection, matching, privilege, ranges
 *   GUID / GID values prefix and GUID, kinds, RoCE and IPoIB GIDs
 *   GID / GUID text   inet_ntop/inet_pton-exact text, both GUID forms
 *   Wire layouts      LRH, GRH, BTH, DETH, RETH, AtomicETH, IETH, AETH
 *                     fields; which opcode carries which header; a
 *                     whole packet's headers located
 *   Per-packet checks the receive checks without a table, UD bursts,
 *                     send-side keys
 *   Memory keys       L_Key/R_Key, access flags, exact ranges, the
 *                     responder's check, windows, invalidation
 *   Subnet management MADs and SMPs, M_Key with its lease, PortInfo,
 *                     P_KeyTable and GUIDInfo blocks, trap Notices
 *
 * C99, freestanding: needs only <stdint.h>, <stdbool.h> and <stddef.h>
 * (in the Linux kernel, __KERNEL__: <linux/types.h> and <linux/stddef.h>).
 * Everything is static inline, allocation-free and free of global state.
 * Keys are host order in the API and big-endian on the wire; the wire
 * accessors read and write byte by byte, so any alignment and any host
 * endianness work.
 *
 * The bursts of per-packet checks run on SSE2 or AVX2 where the
 * compiler targets one, with the same verdicts as their scalar loops;
 * IBK_NO_SIMD forces the scalar loops (ibk_simd_path() says which ran).
 *
 * Parameters come in one order everywhere, in both headers: first the
 * object acted on (a table, port, latch, memory object, or the header,
 * MAD or PortInfo buffer a setter changes a field of); then the inputs, an
 * input array followed at once by its count; then the outputs, each a
 * pointer named for what it receives (gid, mgid, pkeys, verdicts,
 * pkey_index, trap). A function that writes a whole value, not a field of
 * one (ibk_gid_set(), ibk_pkey_block_encode(), ibk_notice_build_256()),
 * takes the place it writes as an output, last; a burst takes
 * (..., hdrs, n, verdicts).
 *
 * "IBA" below is the InfiniBand Architecture Specification, Volume 1.
 */
#ifndef IBKEYS_IB_KEYS_H
#define IBKEYS_IB_KEYS_H

/*
 * The release both headers belong to, VERSION's value (tests/version.py
 * checks it). Either header defines it, whichever comes first; the other
 * refuses to build beside a header of another release.
 */
#ifndef IBKEYS_VERSION
#define IBKEYS_VERSION_MAJOR	0
#define IBKEYS_VERSION_MINOR	3
#define IBKEYS_VERSION_PATCH	0
#define IBKEYS_VERSION		"0.3.0"
#endif
#if IBKEYS_VERSION_MAJOR != 0 || IBKEYS_VERSION_MINOR != 3 || \
    IBKEYS_VERSION_PATCH != 0
#error "ib_keys.h and ib_tables.h come from two releases"
#endif

#ifdef __KERNEL__
/* Kbuild compiles with -nostdinc: the kernel's own types (bool, size_t,
 * uintN_t), NULL and true/false. */
#include <linux/types.h>
#include <linux/stddef.h>
#include <linux/errno.h>
#ifndef UINT64_C
#define UINT64_C(c)	c##ULL
#endif
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#endif

/*
 * The vector path of the per-packet bursts, chosen at compile time from
 * the compiler's own macros (see "Vector paths" below). IBK_NO_SIMD keeps
 * every burst scalar, and so does a kernel build: the kernel saves no
 * vector registers outside kernel_fpu_begin(). The intrinsic headers are
 * included here, outside extern "C", and need no libc when freestanding.
 */
#if !defined(IBK_NO_SIMD) && !defined(__KERNEL__)
#if defined(__AVX2__)
#define IBK__SIMD_AVX2	1
#define IBK__SIMD	1
#include <immintrin.h>
#elif defined(__SSE2__)
#define IBK__SIMD	1
#include <emmintrin.h>
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * typedef ibk_pkey_t - A partition key (IBA 10.9), host order
 */
typedef uint16_t ibk_pkey_t;
/**
 * typedef ibk_qkey_t - A queue key (IBA 10.2.4), host order
 */
typedef uint32_t ibk_qkey_t;
/**
 * typedef ibk_guid_t - An EUI-64 GUID, host order
 */
typedef uint64_t ibk_guid_t;

/* Big-endian field access, one byte at a time (compilers fuse these). */
static inline uint16_t ibk__load_be16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}

static inline uint32_t ibk__load_be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t ibk__load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t ibk__load_be64(const uint8_t *p)
{
	return (uint64_t)ibk__load_be32(p) << 32 | ibk__load_be32(p + 4);
}

static inline void ibk__store_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8 & 0xff);
	p[1] = (uint8_t)(v & 0xff);
}

static inline void ibk__store_be24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16 & 0xff);
	p[1] = (uint8_t)(v >> 8 & 0xff);
	p[2] = (uint8_t)(v & 0xff);
}

static inline void ibk__store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24 & 0xff);
	p[1] = (uint8_t)(v >> 16 & 0xff);
	p[2] = (uint8_t)(v >> 8 & 0xff);
	p[3] = (uint8_t)(v & 0xff);
}

static inline void ibk__store_be64(uint8_t *p, uint64_t v)
{
	ibk__store_be32(p, (uint32_t)(v >> 32));
	ibk__store_be32(p + 4, (uint32_t)(v & 0xffffffffu));
}

/*
 * Wire bytes taken least significant first, and the byte swaps that match
 * them: comparing a field loaded this way against a swapped constant needs
 * no per-packet swap on little-endian hosts, and stays exact on big-endian.
 */
static inline uint16_t ibk__load_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (unsigned)p[1] << 8);
}

static inline uint32_t ibk__load_le32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint16_t ibk__swap16(uint16_t v)
{
	return (uint16_t)((v >> 8 | (unsigned)v << 8) & 0xffff);
}

static inline uint32_t ibk__swap32(uint32_t v)
{
	return v >> 24 | (v >> 8 & 0xff00u) | (v & 0xff00u) << 8 |
	       (v & 0xffu) << 24;
}

/* Replace the bits of *p selected by @mask with those of @v. */
static inline void ibk__store_bits(uint8_t *p, unsigned mask, unsigned v)
{
	*p = (uint8_t)((*p & ~mask) | (v & mask));
}

/*
 * Copies the 16 bytes of a GID. Written out, neither a struct assignment
 * nor a loop: GCC turns both into a memcpy() call at -Os on Cortex-M0 and
 * rv32, and firmware has no memcpy() to give it.
 */
static inline void ibk__copy16(uint8_t *dst, const uint8_t *src)
{
	dst[0] = src[0];
	dst[1] = src[1];
	dst[2] = src[2];
	dst[3] = src[3];
	dst[4] = src[4];
	dst[5] = src[5];
	dst[6] = src[6];
	dst[7] = src[7];
	dst[8] = src[8];
	dst[9] = src[9];
	dst[10] = src[10];
	dst[11] = src[11];
	dst[12] = src[12];
	dst[13] = src[13];
	dst[14] = src[14];
	dst[15] = src[15];
}

/* ------------------------------------------------------------------------
 * Vector paths (SSE2, AVX2)
 *
 * Two kernels serve the bursts of the sections below: a masked compare of
 * 16-bit keys (ibk_pkey_match_burst()) and a check of two 32-bit words of
 * each of a burst of headers reached through pointers (ibk_rx_ud_burst()).
 * Each takes whole chunks of 16 and leaves the rest to the burst's scalar
 * loop, which every build keeps: ibk__*_scalar() are the reference that
 * tests/test_simd.c holds each vector path to, verdict for verdict.
 *
 * The path is the best the compiler targets, picked at compile time:
 *  - SSE2 (every x86-64; i686 with -msse2): each header's first 16 bytes
 *    are loaded and the two words of four headers transposed together;
 *  - AVX2 (e.g. -mavx2, -march=x86-64-v3): as SSE2, eight headers at a
 *    time in 256-bit registers.
 * Limits: there is no run-time dispatch, so a binary built with -mavx2
 * needs an AVX2 CPU; the P_Key kernel is SSE2's in AVX2 builds (wider
 * loads gain nothing there). Arm takes the scalar loops, whose chunks of
 * 16 GCC 12 -O2 vectorises for NEON itself (a hand-written NEON path
 * must first be timed against them on an Arm machine).
 * A UD header is read 16 bytes at a time, inside the IBK_BTH_LEN +
 * IBK_DETH_LEN bytes that ibk_rx_ud_burst() requires anyway.
 *
 * API:
 *	ibk_simd_path()
 * ------------------------------------------------------------------------ */

/**
 * ibk_simd_path() - The vector path this build's bursts take
 *
 * Context: Any context: touches only its arguments.
 * Return: the vector path this build's bursts take: "avx2", "sse2" or "none"
 * (the scalar loops: IBK_NO_SIMD, a kernel build, or not x86).
 */
static inline const char *ibk_simd_path(void)
{
#if defined(IBK__SIMD_AVX2)
	return "avx2";
#elif defined(IBK__SIMD)
	return "sse2";
#else
	return "none";
#endif
}

#if defined(IBK__SIMD)
/* The sum of the two 64-bit lanes of @v (the counts _mm_sad_epu8 left):
 * exact in a 32-bit size_t too, since no count exceeds the burst length. */
static inline size_t ibk__x86_sum64(__m128i v)
{
	__m128i both = _mm_add_epi64(v, _mm_unpackhi_epi64(v, v));
#if defined(__x86_64__)
	return (size_t)_mm_cvtsi128_si64(both);
#else
	return (size_t)(uint32_t)_mm_cvtsi128_si32(both);
#endif
}

/*
 * Sets match[i] to 1 if (keys[i] & @mask) == @want, else 0, for i < @n, a
 * multiple of 16; returns how many are 1. The byte results come from
 * saturating packs of the 16-bit compares and are summed by _mm_sad_epu8.
 */
static inline size_t ibk__vec_match16(const uint16_t *keys, size_t n,
				      uint16_t mask, uint16_t want,
				      uint8_t *match)
{
	const __m128i m = _mm_set1_epi16((short)mask);
	const __m128i w = _mm_set1_epi16((short)want);
	const __m128i zero = _mm_setzero_si128();
	__m128i sum = zero;
	size_t i;

	for (i = 0; i < n; i += 16) {
		__m128i lo = _mm_loadu_si128((const __m128i *)(keys + i));
		__m128i hi = _mm_loadu_si128((const __m128i *)(keys + i + 8));
		__m128i eq = _mm_packs_epi16(
			_mm_cmpeq_epi16(_mm_and_si128(lo, m), w),
			_mm_cmpeq_epi16(_mm_and_si128(hi, m), w));
		__m128i one = _mm_sub_epi8(zero, eq);	/* -1 -> 1 */

		_mm_storeu_si128((__m128i *)(match + i), one);
		sum = _mm_add_epi64(sum, _mm_sad_epu8(one, zero));
	}
	return ibk__x86_sum64(sum);
}

#if defined(IBK__SIMD_AVX2)
/* The first 16 bytes of header @lo in the low half, of @hi in the high. */
static inline __m256i ibk__avx2_rows(const void *lo, const void *hi)
{
	return _mm256_inserti128_si256(
		_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)lo)),
		_mm_loadu_si128((const __m128i *)hi), 1);
}

/*
 * The little-endian 32-bit words at bytes 0 and 12 of the headers
 * @hdrs[0..3] and @hdrs[8..11], into the lanes of *@a and *@b: the
 * transpose of ibk__vec_words4() on SSE2, the first four in the low
 * halves and the other four in the high ones (AVX2 unpacks within
 * halves). Loads, not gathers: gathering the words through the pointers
 * (_mm256_i64gather_epi32) took 2.7 times as long per packet on an AMD
 * EPYC, for 5% fewer instructions.
 */
static inline void ibk__avx2_words8(const void *const *hdrs, __m256i *a,
				    __m256i *b)
{
	__m256 r0 = _mm256_castsi256_ps(ibk__avx2_rows(hdrs[0], hdrs[8]));
	__m256 r1 = _mm256_castsi256_ps(ibk__avx2_rows(hdrs[1], hdrs[9]));
	__m256 r2 = _mm256_castsi256_ps(ibk__avx2_rows(hdrs[2], hdrs[10]));
	__m256 r3 = _mm256_castsi256_ps(ibk__avx2_rows(hdrs[3], hdrs[11]));
	__m256 ends01 = _mm256_shuffle_ps(r0, r1, _MM_SHUFFLE(3, 0, 3, 0));
	__m256 ends23 = _mm256_shuffle_ps(r2, r3, _MM_SHUFFLE(3, 0, 3, 0));

	*a = _mm256_castps_si256(_mm256_shuffle_ps(ends01, ends23,
						   _MM_SHUFFLE(2, 0, 2, 0)));
	*b = _mm256_castps_si256(_mm256_shuffle_ps(ends01, ends23,
						   _MM_SHUFFLE(3, 1, 3, 1)));
}

/*
 * For each header @hdrs[i], i < @n (a multiple of 16), with a and b its
 * little-endian words at bytes 0 and 12: @verdicts[i] becomes 1 if (a &
 * @a_mask) != @a_want, else 2 if b != @b_want, else 0. *@low_missed
 * becomes true if that first compare failed in the low 16 bits of some
 * a. Returns how many verdicts are 0.
 *
 * The first compare is made on 16-bit halves, and signed saturation
 * packs each 32-bit lane to 0xffff if both halves matched, 0x7fff if only
 * the low one did, 0x8000 if only the high one, else 0; the packed lanes
 * are ANDed over the burst, which keeps them among those four, and bit 7
 * says whether every low half matched. In the packed lanes, headers 0-7
 * in the low half and 8-15 in the high one, the 0/1 "some compare
 * failed" flags are summed, and the verdict is that flag doubled where
 * the first compare passed.
 */
static inline size_t ibk__vec_rx_words(const void *const *hdrs, size_t n,
				       uint32_t a_mask, uint32_t a_want,
				       uint32_t b_want, uint8_t *verdicts,
				       bool *low_missed)
{
	const __m256i mask = _mm256_set1_epi32((int)a_mask);
	const __m256i want = _mm256_set1_epi32((int)a_want);
	const __m256i b_ok = _mm256_set1_epi32((int)b_want);
	const __m256i zero = _mm256_setzero_si256();
	const __m256i ones = _mm256_cmpeq_epi32(zero, zero);
	__m256i low_ok = ones, failed_sum = zero;
	size_t i;

	for (i = 0; i < n; i += 16) {
		__m256i a0, a1, b0, b1, halves, first, failed, verdict;

		ibk__avx2_words8(hdrs + i, &a0, &b0);
		ibk__avx2_words8(hdrs + i + 4, &a1, &b1);
		halves = _mm256_packs_epi32(
			_mm256_cmpeq_epi16(_mm256_and_si256(a0, mask), want),
			_mm256_cmpeq_epi16(_mm256_and_si256(a1, mask), want));
		low_ok = _mm256_and_si256(low_ok, halves);
		first = _mm256_cmpeq_epi16(halves, ones);
		failed = _mm256_srli_epi16(_mm256_cmpeq_epi16(zero,
			_mm256_and_si256(first, _mm256_packs_epi32(
				_mm256_cmpeq_epi32(b0, b_ok),
				_mm256_cmpeq_epi32(b1, b_ok)))), 15);
		verdict = _mm256_add_epi16(failed,
					   _mm256_and_si256(failed, first));
		_mm_storeu_si128((__m128i *)(verdicts + i), _mm_packs_epi16(
			_mm256_castsi256_si128(verdict),
			_mm256_extracti128_si256(verdict, 1)));
		failed_sum = _mm256_add_epi64(failed_sum,
					      _mm256_sad_epu8(failed, zero));
	}
	/* bit 7 of each lane: set in 0xffff and 0x7fff, clear in the others */
	*low_missed = ((uint32_t)_mm256_movemask_epi8(low_ok) & 0x55555555u) !=
		      0x55555555u;
	return n - ibk__x86_sum64(_mm_add_epi64(
		_mm256_castsi256_si128(failed_sum),
		_mm256_extracti128_si256(failed_sum, 1)));
}
#else
/*
 * The little-endian 32-bit words at bytes 0 and 12 of the headers
 * @hdrs[0..3], into *@a and *@b in the order of @hdrs. Rows r0..r3 hold
 * words 0-3 of each header; a shuffle of two rows keeps their words 0
 * and 3 (the float shuffle takes two sources, the integer ones do not),
 * and two more part those into column 0 and column 3.
 */
static inline void ibk__vec_words4(const void *const *hdrs, __m128i *a,
				   __m128i *b)
{
	__m128 r0 = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)hdrs[0]));
	__m128 r1 = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)hdrs[1]));
	__m128 r2 = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)hdrs[2]));
	__m128 r3 = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)hdrs[3]));
	__m128 ends01 = _mm_shuffle_ps(r0, r1, _MM_SHUFFLE(3, 0, 3, 0));
	__m128 ends23 = _mm_shuffle_ps(r2, r3, _MM_SHUFFLE(3, 0, 3, 0));

	*a = _mm_castps_si128(_mm_shuffle_ps(ends01, ends23,
					     _MM_SHUFFLE(2, 0, 2, 0)));
	*b = _mm_castps_si128(_mm_shuffle_ps(ends01, ends23,
					     _MM_SHUFFLE(3, 1, 3, 1)));
}

/* Four vectors of 32-bit lane masks (all ones or zero) narrowed to the 16
 * byte masks of their lanes, in order: signed saturation keeps -1 and 0. */
static inline __m128i ibk__x86_narrow(__m128i a, __m128i b, __m128i c,
				      __m128i d)
{
	return _mm_packs_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d));
}

/*
 * As the AVX2 ibk__vec_rx_words() above, on SSE2: verdicts 0, 1 (first
 * compare fails) or 2 (only the second) for @n headers, a multiple of 16;
 * *@low_missed as there; returns the 0s. The compares are packed straight
 * to bytes, where the saturated halves leave 0xff only where both halves
 * matched, the 0/1 "some compare failed" flags are summed by
 * _mm_sad_epu8, and the verdict is that flag doubled where the first
 * compare passed.
 */
static inline size_t ibk__vec_rx_words(const void *const *hdrs, size_t n,
				       uint32_t a_mask, uint32_t a_want,
				       uint32_t b_want, uint8_t *verdicts,
				       bool *low_missed)
{
	const __m128i mask = _mm_set1_epi32((int)a_mask);
	const __m128i want = _mm_set1_epi32((int)a_want);
	const __m128i b_ok = _mm_set1_epi32((int)b_want);
	const __m128i zero = _mm_setzero_si128();
	const __m128i ones = _mm_cmpeq_epi8(zero, zero);
	__m128i low_ok = ones, failed_sum = zero;
	size_t i;

	for (i = 0; i < n; i += 16) {
		__m128i a0, a1, a2, a3, b0, b1, b2, b3, h0, h1, h2, h3;
		__m128i first, both, failed;

		ibk__vec_words4(hdrs + i, &a0, &b0);
		ibk__vec_words4(hdrs + i + 4, &a1, &b1);
		ibk__vec_words4(hdrs + i + 8, &a2, &b2);
		ibk__vec_words4(hdrs + i + 12, &a3, &b3);
		h0 = _mm_cmpeq_epi16(_mm_and_si128(a0, mask), want);
		h1 = _mm_cmpeq_epi16(_mm_and_si128(a1, mask), want);
		h2 = _mm_cmpeq_epi16(_mm_and_si128(a2, mask), want);
		h3 = _mm_cmpeq_epi16(_mm_and_si128(a3, mask), want);
		low_ok = _mm_and_si128(low_ok, _mm_and_si128(
			_mm_and_si128(h0, h1), _mm_and_si128(h2, h3)));
		first = _mm_cmpeq_epi8(ibk__x86_narrow(h0, h1, h2, h3), ones);
		both = _mm_and_si128(first, ibk__x86_narrow(
			_mm_cmpeq_epi32(b0, b_ok), _mm_cmpeq_epi32(b1, b_ok),
			_mm_cmpeq_epi32(b2, b_ok), _mm_cmpeq_epi32(b3, b_ok)));
		failed = _mm_sub_epi8(both, ones);	/* -1 -> 0, 0 -> 1 */
		_mm_storeu_si128((__m128i *)(verdicts + i),
				 _mm_add_epi8(failed,
					      _mm_and_si128(failed, first)));
		failed_sum = _mm_add_epi64(failed_sum,
					   _mm_sad_epu8(failed, zero));
	}
	/* bytes 0 and 1 of each 32-bit lane: the low halves */
	*low_missed = (_mm_movemask_epi8(low_ok) & 0x3333) != 0x3333;
	return n - ibk__x86_sum64(failed_sum);
}
#endif
#endif

/* ------------------------------------------------------------------------
 * Errors
 *
 * API:
 *	ibk_strerror(err)
 * ------------------------------------------------------------------------ */

/* ENETDOWN and ESTALE are numbered differently on alpha, MIPS, PA-RISC and
 * SPARC: a kernel build takes its architecture's own. */
#ifdef __KERNEL__
#define IBK__ENETDOWN	ENETDOWN
#define IBK__ESTALE	ESTALE
#else
#define IBK__ENETDOWN	100
#define IBK__ESTALE	116
#endif

/**
 * enum ibk_error - Errors of both headers: the negative errno of each meaning
 * @IBK_OK: success
 * @IBK_EINVAL: -EINVAL: bad argument: NULL, invalid key, malformed text
 * @IBK_ERANGE: -ERANGE: port, index or capacity argument out of range
 * @IBK_ENOENT: -ENOENT: empty slot, or value not in the table
 * @IBK_ENOTREADY: -ENETDOWN: port not ARMED or ACTIVE, as for a network
 *                 device whose link is down: table contents undefined
 * @IBK_ESTALE: -ESTALE: table changed (event pending refill, or reference
 *              stale)
 * @IBK_ENOSPC: -ENOSPC: more entries than the table's capacity
 * @IBK_EBUSY: -EBUSY: another writer holds the table (try-write only)
 *
 * The errors of every int-returning function of both headers: the negative
 * errno of the same meaning.
 *
 * A kernel function or a verbs provider returns them as they are. They are
 * Linux's numbers, written out, so no <errno.h> is needed: 1-34 are the same
 * on every Linux architecture, and a freestanding build gets x86's, Arm's,
 * RISC-V's and s390's ENETDOWN and ESTALE.
 */
enum ibk_error {
	IBK_OK        = 0,
	IBK_EINVAL    = -22,
	IBK_ERANGE    = -34,
	IBK_ENOENT    = -2,
	IBK_ENOTREADY = -IBK__ENETDOWN,
	IBK_ESTALE    = -IBK__ESTALE,
	IBK_ENOSPC    = -28,
	IBK_EBUSY     = -16,
};

/**
 * ibk_strerror() - Short constant text for every value an int-returning
 * function of the headers gives
 * @err: an IBK_* return value
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_OK, each IBK_E*, and the MAD statuses that
 * ibk_sma_answer_table() returns for ibk_smp_make_reply() (0x0004 bad version,
 * 0x0008 unsupported method, 0x000c unsupported method and attribute, 0x001c
 * invalid field: IBK_MAD_STATUS_*); "unknown error" for anything else.
 */
static inline const char *ibk_strerror(int err)
{
	/* a table, not a switch: -Os on Thumb-1 would call libgcc's case helper */
	static const struct { int code; const char *text; } names[] = {
		{ IBK_OK,		"success" },
		{ IBK_EINVAL,		"invalid argument" },
		{ IBK_ERANGE,		"argument out of range" },
		{ IBK_ENOENT,		"no such entry" },
		{ IBK_ENOTREADY,	"port not armed or active" },
		{ IBK_ESTALE,		"table changed" },
		{ IBK_ENOSPC,		"table full" },
		{ IBK_EBUSY,		"table busy" },
		{ 0x0004,		"MAD status: bad class version" },
		{ 0x0008,		"MAD status: method not supported" },
		{ 0x000c,		"MAD status: method and attribute not supported" },
		{ 0x001c,		"MAD status: invalid attribute field" },
	};
	unsigned i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].code == err)
			return names[i].text;
	return "unknown error";
}

/* ------------------------------------------------------------------------
 * P_Key (IBA 10.9, partitioning)
 *
 * Bit 15 is the membership type (1 full, 0 limited), bits 0-14 the base,
 * which names the partition. Base 0 is the invalid key (0x0000, 0x8000).
 *
 * API:
 *	ibk_pkey_make(base, full)
 *	ibk_pkey_base(pkey)
 *	ibk_pkey_is_full(pkey)
 *	ibk_pkey_is_valid(pkey)
 *	ibk_pkey_to_full(pkey)
 *	ibk_pkey_to_limited(pkey)
 *	ibk_pkey_match(a, b)
 *	ibk_pkey_match_burst(qp_pkey, pkt_pkeys, n, match)
 * ------------------------------------------------------------------------ */

#define IBK_PKEY_FULL_MEMBER		0x8000u
#define IBK_PKEY_BASE_MASK		0x7fffu
#define IBK_PKEY_DEFAULT		0xffffu	/* default partition, full */
#define IBK_PKEY_DEFAULT_LIMITED	0x7fffu	/* default partition, limited */
#define IBK_PKEY_INVALID		0x0000u	/* what an empty table slot holds */

/**
 * ibk_pkey_make() - The P_Key of partition @base (bit 15 of @base is ignored),
 * full or limited
 * @base: the partition, bits 0-14
 * @full: true for full membership, false for limited
 *
 * Context: Any context: touches only its arguments.
 * Return: the P_Key of partition @base (bit 15 of @base is ignored), full or
 * limited.
 */
static inline ibk_pkey_t ibk_pkey_make(uint16_t base, bool full)
{
	return (ibk_pkey_t)((base & IBK_PKEY_BASE_MASK) |
			    ((unsigned)full << 15));
}

/**
 * ibk_pkey_base() - The partition (bits 0-14) that @pkey names
 * @pkey: a P_Key, host order
 *
 * Context: Any context: touches only its arguments.
 * Return: the partition (bits 0-14) that @pkey names.
 */
static inline uint16_t ibk_pkey_base(ibk_pkey_t pkey)
{
	return (uint16_t)(pkey & IBK_PKEY_BASE_MASK);
}

/**
 * ibk_pkey_is_full() - Whether @pkey carries full membership (bit 15 set)
 * @pkey: a P_Key, host order
 *
 * Context: Any context: touches only its arguments.
 * Return: true if @pkey carries full membership (bit 15 set).
 */
static inline bool ibk_pkey_is_full(ibk_pkey_t pkey)
{
	return (pkey & IBK_PKEY_FULL_MEMBER) != 0;
}

/**
 * ibk_pkey_is_valid() - False for the invalid P_Key: base 0, with either
 * membership bit
 * @pkey: a P_Key, host order
 *
 * Context: Any context: touches only its arguments.
 * Return: false for the invalid P_Key: base 0, with either membership bit.
 */
static inline bool ibk_pkey_is_valid(ibk_pkey_t pkey)
{
	return (pkey & IBK_PKEY_BASE_MASK) != 0;
}

/**
 * ibk_pkey_to_full() - @pkey with the membership bit set: the full-member key
 * of its partition
 * @pkey: a P_Key, host order
 *
 * Context: Any context: touches only its arguments.
 * Return: @pkey with the membership bit set: the full-member key of its
 * partition.
 */
static inline ibk_pkey_t ibk_pkey_to_full(ibk_pkey_t pkey)
{
	return (ibk_pkey_t)(pkey | IBK_PKEY_FULL_MEMBER);
}

/**
 * ibk_pkey_to_limited() - @pkey with the membership bit clear: the limited key
 * of its partition
 * @pkey: a P_Key, host order
 *
 * Context: Any context: touches only its arguments.
 * Return: @pkey with the membership bit clear: the limited key of its
 * partition.
 */
static inline ibk_pkey_t ibk_pkey_to_limited(ibk_pkey_t pkey)
{
	return (ibk_pkey_t)(pkey & IBK_PKEY_BASE_MASK);
}

/*
 * The P_Key match rule folded into one masked compare against one side's
 * key: a peer key k passes iff (k & mask) == want. For a valid own key,
 * mask covers the base and, when the own key is limited, the peer's full
 * bit, which want then requires to be 1. For an invalid own key mask is 0
 * and want is 1, so nothing passes. Built without branches.
 */
struct ibk__pkey_filter {
	uint16_t mask;
	uint16_t want;
};

/* The filter of a valid own key; an invalid one is the caller's to shut
 * (ibk__pkey_filter_make() below; ibk_rx_ud_burst() uses a spare bit). */
static inline struct ibk__pkey_filter ibk__pkey_filter_valid(ibk_pkey_t own)
{
	struct ibk__pkey_filter f;

	/* want is own with its membership flipped: the base, and the full
	 * bit where own is limited, inside the mask either way */
	f.mask = (uint16_t)(IBK_PKEY_BASE_MASK |
			    (~(unsigned)own & IBK_PKEY_FULL_MEMBER));
	f.want = (uint16_t)(own ^ IBK_PKEY_FULL_MEMBER);
	return f;
}

static inline struct ibk__pkey_filter ibk__pkey_filter_make(ibk_pkey_t own)
{
	struct ibk__pkey_filter f = ibk__pkey_filter_valid(own);
	unsigned valid = ibk_pkey_is_valid(own);

	f.mask = (uint16_t)(f.mask * valid);
	f.want = (uint16_t)((f.want & f.mask) | (valid ^ 1u));
	return f;
}

static inline bool ibk__pkey_pass(struct ibk__pkey_filter f, ibk_pkey_t peer)
{
	return (peer & f.mask) == f.want;
}

/**
 * ibk_pkey_match() - Whether QPs holding @a and @b may talk (IBA 10.9)
 * @a: one P_Key
 * @b: the other P_Key
 *
 * Limited-limited never matches, and an invalid key matches nothing, itself
 * included. Symmetric; branch-free: the three conditions are combined with
 * '&', not '&&'. (Checks of many keys against one use the precomputed filter
 * above instead.)
 *
 * Context: Any context: touches only its arguments.
 * Return: true if QPs holding @a and @b may talk (IBA 10.9): equal, non-zero
 * bases and at least one full member.
 */
static inline bool ibk_pkey_match(ibk_pkey_t a, ibk_pkey_t b)
{
	unsigned same_base = ((a ^ b) & IBK_PKEY_BASE_MASK) == 0;
	unsigned valid = (a & IBK_PKEY_BASE_MASK) != 0;
	unsigned one_full = ((unsigned)(a | b) & IBK_PKEY_FULL_MEMBER) >> 15;

	return (same_base & valid & one_full) != 0;
}

/* match[i] = ibk__pkey_pass(@f, keys[i]) for @from <= i < @to; returns
 * how many pass. The scalar remainder of both burst paths. */
static inline size_t ibk__pkey_pass_range(struct ibk__pkey_filter f,
					  const ibk_pkey_t *keys, size_t from,
					  size_t to, uint8_t *match)
{
	size_t count = 0;
	size_t i;

	for (i = from; i < to; i++) {
		match[i] = (uint8_t)ibk__pkey_pass(f, keys[i]);
		count += match[i];
	}
	return count;
}

/*
 * ibk_pkey_match_burst() without vector instructions: whole chunks of 16
 * keys have a fixed trip count, results land in a chunk-local array (so
 * no aliasing check is needed) and are summed in a byte, which is what
 * lets gcc's -O2 cost model and clang vectorise the chunk on their own.
 */
static inline size_t ibk__pkey_match_burst_scalar(ibk_pkey_t qp_pkey,
						  const ibk_pkey_t *pkt_pkeys,
						  size_t n, uint8_t *match)
{
	struct ibk__pkey_filter f = ibk__pkey_filter_make(qp_pkey);
	size_t whole = n & ~(size_t)15;	/* see ibk__count_zero() */
	size_t count = 0;
	size_t i = 0;
	size_t j;

	for (; i < whole; i += 16) {
		uint8_t chunk[16];
		uint8_t chunk_count = 0;

		for (j = 0; j < 16; j++) {
			chunk[j] = (uint8_t)ibk__pkey_pass(f, pkt_pkeys[i + j]);
			chunk_count = (uint8_t)(chunk_count + chunk[j]);
		}
		for (j = 0; j < 16; j++)
			match[i + j] = chunk[j];
		count += chunk_count;
	}
	return count + ibk__pkey_pass_range(f, pkt_pkeys, whole, n, match);
}

#if defined(IBK__SIMD)
/* ibk_pkey_match_burst() on the vector path: the filter's masked compare
 * on 16 keys at a time (ibk__vec_match16()), the rest one by one. */
static inline size_t ibk__pkey_match_burst_vector(ibk_pkey_t qp_pkey,
						  const ibk_pkey_t *pkt_pkeys,
						  size_t n, uint8_t *match)
{
	struct ibk__pkey_filter f = ibk__pkey_filter_make(qp_pkey);
	size_t whole = n & ~(size_t)15;

	return ibk__vec_match16(pkt_pkeys, whole, f.mask, f.want, match) +
	       ibk__pkey_pass_range(f, pkt_pkeys, whole, n, match);
}
#endif

/**
 * ibk_pkey_match_burst() - Checks many packets' P_Keys against one QP's key
 * @qp_pkey: the QP's P_Key
 * @pkt_pkeys: the packets' P_Keys, @n of them
 * @n: how many
 * @match: receives @n bytes, 1 where the packet matches, else 0
 *
 * Checks n packet P_Keys against one QP's key by ibk_pkey_match(): sets
 * match[i] to 1 or 0 and returns the number of matches.
 *
 * @pkt_pkeys and @match may be NULL when n is 0. Branch-free; on the build's
 * vector path (ibk_simd_path()) when it has one.
 *
 * Context: Any context: touches only its arguments.
 * Return: the number of matches.
 */
static inline size_t ibk_pkey_match_burst(ibk_pkey_t qp_pkey,
					  const ibk_pkey_t *pkt_pkeys, size_t n,
					  uint8_t *match)
{
#if defined(IBK__SIMD)
	return ibk__pkey_match_burst_vector(qp_pkey, pkt_pkeys, n, match);
#else
	return ibk__pkey_match_burst_scalar(qp_pkey, pkt_pkeys, n, match);
#endif
}

/* ------------------------------------------------------------------------
 * Q_Key (datagram QPs; IBA Q_Key rules)
 *
 * 0x00000000-0x7fffffff  free for anyone
 * 0x80000000-0x8000ffff  controlled, for general use by applications
 * 0x80010000-0x8fffffff  controlled, reserved; 0x80010000 is the GSI key
 * 0x90000000-0xffffffff  controlled, unassigned
 *
 * API:
 *	ibk_qkey_is_controlled(qkey)
 *	ibk_qkey_select(wr_qkey, qp_qkey)
 *	ibk_qkey_match(pkt_qkey, qp_qkey)
 *	ibk_qkey_may_set(qkey, caller_privileged)
 *	ibk_qkey_classify(qkey)
 *	ibk_qkey_class_name(cls)
 * ------------------------------------------------------------------------ */

#define IBK_QKEY_CONTROLLED	0x80000000u	/* MSB: controlled Q_Key */
#define IBK_QKEY_GSI		0x80010000u	/* well-known QP1 (GSI) Q_Key */
#define IBK_QKEY_IPOIB		0x00000b1bu	/* customary IPoIB Q_Key */

/**
 * enum ibk_qkey_class - The ranges of Q_Key values (IBA 10.2.4.3)
 * @IBK_QKEY_CLASS_FREE: 0x00000000-0x7fffffff
 * @IBK_QKEY_CLASS_APP_CONTROLLED: 0x80000000-0x8000ffff
 * @IBK_QKEY_CLASS_RESERVED: 0x80010001-0x8fffffff
 * @IBK_QKEY_CLASS_GSI: 0x80010000
 * @IBK_QKEY_CLASS_UNASSIGNED: 0x90000000-0xffffffff
 */
enum ibk_qkey_class {
	IBK_QKEY_CLASS_FREE,
	IBK_QKEY_CLASS_APP_CONTROLLED,
	IBK_QKEY_CLASS_RESERVED,
	IBK_QKEY_CLASS_GSI,
	IBK_QKEY_CLASS_UNASSIGNED,
};

/**
 * ibk_qkey_is_controlled() - True for a controlled ("privileged") Q_Key: its
 * MSB is set
 * @qkey: a Q_Key, host order
 *
 * Context: Any context: touches only its arguments.
 * Return: true for a controlled ("privileged") Q_Key: its MSB is set.
 */
static inline bool ibk_qkey_is_controlled(ibk_qkey_t qkey)
{
	return (qkey & IBK_QKEY_CONTROLLED) != 0;
}

/**
 * ibk_qkey_select() - The Q_Key a datagram send puts in its DETH
 * @wr_qkey: the Q_Key of the send work request
 * @qp_qkey: the QP's own Q_Key
 *
 * This is how a controlled Q_Key stays under the control of whoever set up the
 * QP.
 *
 * Context: Any context: touches only its arguments.
 * Return: the Q_Key a datagram send puts in its DETH: the QP context's Q_Key
 * when the work request's has its MSB set, else the work request's own.
 */
static inline ibk_qkey_t ibk_qkey_select(ibk_qkey_t wr_qkey, ibk_qkey_t qp_qkey)
{
	return ibk_qkey_is_controlled(wr_qkey) ? qp_qkey : wr_qkey;
}

/**
 * ibk_qkey_match() - Whether a received datagram is accepted
 * @pkt_qkey: the DETH's Q_Key
 * @qp_qkey: the QP's own Q_Key
 *
 * A mismatch is a Q_Key violation: drop silently, count it, leave the QP be.
 *
 * Context: Any context: touches only its arguments.
 * Return: true if a received datagram is accepted: its Q_Key equals the QP's.
 */
static inline bool ibk_qkey_match(ibk_qkey_t pkt_qkey, ibk_qkey_t qp_qkey)
{
	return pkt_qkey == qp_qkey;
}

/**
 * ibk_qkey_may_set() - Whether @qkey may go into a QP context
 * @qkey: a Q_Key, host order
 * @caller_privileged: true if the caller may use controlled Q_Keys
 * (CAP_NET_RAW, as the kernel checks)
 *
 * Context: Any context: touches only its arguments.
 * Return: true if @qkey may go into a QP context: controlled keys need
 * privilege.
 */
static inline bool ibk_qkey_may_set(ibk_qkey_t qkey, bool caller_privileged)
{
	return !ibk_qkey_is_controlled(qkey) || caller_privileged;
}

/**
 * ibk_qkey_classify() - Which of the Q_Key ranges above @qkey falls in (GSI
 * key on its own)
 * @qkey: a Q_Key, host order
 *
 * Context: Any context: touches only its arguments.
 * Return: which of the Q_Key ranges above @qkey falls in (GSI key on its own).
 */
static inline enum ibk_qkey_class ibk_qkey_classify(ibk_qkey_t qkey)
{
	if (qkey < 0x80000000u)
		return IBK_QKEY_CLASS_FREE;
	if (qkey <= 0x8000ffffu)
		return IBK_QKEY_CLASS_APP_CONTROLLED;
	if (qkey == IBK_QKEY_GSI)
		return IBK_QKEY_CLASS_GSI;
	if (qkey <= 0x8fffffffu)
		return IBK_QKEY_CLASS_RESERVED;
	return IBK_QKEY_CLASS_UNASSIGNED;
}

/**
 * ibk_qkey_class_name() - Constant name of a Q_Key class; "unknown" for a
 * value outside the enum
 * @cls: a Q_Key class
 *
 * Context: Any context: touches only its arguments.
 * Return: constant text, never NULL.
 */
static inline const char *ibk_qkey_class_name(enum ibk_qkey_class cls)
{
	switch (cls) {
	case IBK_QKEY_CLASS_FREE:		return "free";
	case IBK_QKEY_CLASS_APP_CONTROLLED:	return "controlled-app";
	case IBK_QKEY_CLASS_RESERVED:		return "reserved";
	case IBK_QKEY_CLASS_GSI:		return "gsi";
	case IBK_QKEY_CLASS_UNASSIGNED:		return "controlled-unassigned";
	default:				return "unknown";
	}
}

/* ------------------------------------------------------------------------
 * GUID / GID values
 *
 * A GID is 128 bits in network order: subnet prefix (upper 64) then the
 * interface id, an EUI-64 GUID (lower 64). It has the IPv6 address layout
 * (RFC 4291), and struct ibk_gid is byte-compatible with libibverbs'
 * union ibv_gid.
 *
 * API:
 *	ibk_gid_set(subnet_prefix, guid, gid)
 *	ibk_gid_make(subnet_prefix, guid)
 *	ibk_gid_subnet_prefix(gid)
 *	ibk_gid_guid(gid)
 *	ibk_gid_equal(a, b)
 *	ibk_gid_is_zero(gid)
 *	ibk_gid_is_v4mapped(gid)
 *	ibk_gid_is_multicast(gid)
 *	ibk_gid_is_link_local(gid)
 *	ibk_gid_set_from_ipv4(ipv4, gid)
 *	ibk_gid_from_ipv4(ipv4)
 *	ibk_gid_to_ipv4(gid)
 *	ibk_gid_set_from_mac(mac, gid)
 *	ibk_gid_from_mac(mac)
 *	ibk_gid_to_mac(gid, mac)
 *	ibk_gid_ipoib_broadcast(pkey, scope, mgid)
 *	ibk_gid_ipoib_mgid_ipv4(pkey, scope, group, mgid)
 *	ibk_gid_ipoib_mgid_ipv6(pkey, scope, group, mgid)
 *	ibk_gid_ipoib_mgid_parse(gid, pkey, scope, ipv6)
 * ------------------------------------------------------------------------ */

#define IBK_GID_DEFAULT_PREFIX	UINT64_C(0xfe80000000000000)

/* Multicast scope nibbles (RFC 4291 2.7) for the IPoIB MGIDs below. */
#define IBK_GID_SCOPE_LINK	0x2u
#define IBK_GID_SCOPE_SITE	0x5u
#define IBK_GID_SCOPE_ORG	0x8u
#define IBK_GID_SCOPE_GLOBAL	0xeu

/**
 * struct ibk_gid - A GID, its 16 bytes in wire (big-endian) order
 * @raw: the GID, byte 0 first as on the wire
 */
struct ibk_gid {
	uint8_t raw[16];
};

/*
 * Each function below that returns a struct ibk_gid by value has a twin
 * that writes it through a pointer (ibk_gid_set(), ibk_gid_set_from_ipv4(),
 * ibk_gid_set_from_mac(), ibk_grh_get_sgid(), ibk_grh_get_dgid()). The
 * by-value ones build their result in one initialiser: GCC builds a
 * struct that is filled by stores in the function and then returned in a
 * local first and copies it out with memcpy() (at -Os on Cortex-M0 and
 * rv32), which firmware does not have.
 */
#define IBK__BE32_BYTES(v) \
	(uint8_t)((v) >> 24 & 0xff), (uint8_t)((v) >> 16 & 0xff), \
	(uint8_t)((v) >> 8 & 0xff), (uint8_t)((v) & 0xff)
#define IBK__BE64_BYTES(v) \
	IBK__BE32_BYTES((v) >> 32), IBK__BE32_BYTES(v)
#define IBK__BYTES16(p) \
	(p)[0], (p)[1], (p)[2], (p)[3], (p)[4], (p)[5], (p)[6], (p)[7], \
	(p)[8], (p)[9], (p)[10], (p)[11], (p)[12], (p)[13], (p)[14], (p)[15]

/**
 * ibk_gid_set() - Writes the GID @subnet_prefix:@guid, both big-endian, into
 * *@gid
 * @subnet_prefix: the subnet prefix (upper 64 bits), host order
 * @guid: a GUID (EUI-64), host order
 * @gid: receives the GID
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_gid_set(uint64_t subnet_prefix, ibk_guid_t guid,
			       struct ibk_gid *gid)
{
	ibk__store_be64(gid->raw, subnet_prefix);
	ibk__store_be64(gid->raw + 8, guid);
}

/**
 * ibk_gid_make() - The GID @subnet_prefix:@guid, both stored big-endian
 * @subnet_prefix: the subnet prefix (upper 64 bits), host order
 * @guid: a GUID (EUI-64), host order
 *
 * Context: Any context: touches only its arguments.
 * Return: the GID @subnet_prefix:@guid, both stored big-endian.
 */
static inline struct ibk_gid ibk_gid_make(uint64_t subnet_prefix,
					  ibk_guid_t guid)
{
	struct ibk_gid gid = {{ IBK__BE64_BYTES(subnet_prefix),
				IBK__BE64_BYTES(guid) }};

	return gid;
}

/**
 * ibk_gid_subnet_prefix() - The upper 64 bits of @gid
 * @gid: a GID
 *
 * Context: Any context: touches only its arguments.
 * Return: the upper 64 bits of @gid: its subnet prefix.
 */
static inline uint64_t ibk_gid_subnet_prefix(const struct ibk_gid *gid)
{
	return ibk__load_be64(gid->raw);
}

/**
 * ibk_gid_guid() - The lower 64 bits of @gid
 * @gid: a GID
 *
 * Context: Any context: touches only its arguments.
 * Return: the lower 64 bits of @gid: the interface id, a port GUID for IB.
 */
static inline ibk_guid_t ibk_gid_guid(const struct ibk_gid *gid)
{
	return ibk__load_be64(gid->raw + 8);
}

/**
 * ibk_gid_equal() - Whether all 128 bits are equal (compared without early
 * exit)
 * @a: one GID
 * @b: the other GID
 *
 * Context: Any context: touches only its arguments.
 * Return: true if all 128 bits are equal (compared without early exit).
 */
static inline bool ibk_gid_equal(const struct ibk_gid *a,
				 const struct ibk_gid *b)
{
	unsigned diff = 0;
	int i;

	for (i = 0; i < 16; i++)
		diff |= (unsigned)(a->raw[i] ^ b->raw[i]);
	return diff == 0;
}

/**
 * ibk_gid_is_zero() - True for the all-zero GID, which marks an empty GID
 * table slot
 * @gid: a GID
 *
 * Context: Any context: touches only its arguments.
 * Return: true for the all-zero GID, which marks an empty GID table slot.
 */
static inline bool ibk_gid_is_zero(const struct ibk_gid *gid)
{
	unsigned bits = 0;
	int i;

	for (i = 0; i < 16; i++)
		bits |= gid->raw[i];
	return bits == 0;
}

/**
 * ibk_gid_is_v4mapped() - True for an IPv4-mapped GID, ::ffff:0:0/96 (RFC 4291
 * 2.5.5.2)
 * @gid: a GID
 *
 * Context: Any context: touches only its arguments.
 * Return: true for an IPv4-mapped GID, ::ffff:0:0/96 (RFC 4291 2.5.5.2).
 */
static inline bool ibk_gid_is_v4mapped(const struct ibk_gid *gid)
{
	unsigned bits = 0;
	int i;

	for (i = 0; i < 10; i++)
		bits |= gid->raw[i];
	return bits == 0 && gid->raw[10] == 0xff && gid->raw[11] == 0xff;
}

/**
 * ibk_gid_is_multicast() - Whether a GID is an IB or RoCE v2 (IPv4-mapped)
 * multicast GID
 * @gid: a GID
 *
 * True for a multicast GID: first byte 0xff (RFC 4291 2.7), or the IPv4-mapped
 * GID of an IPv4 multicast address, ::ffff:224.0.0.0/100, as RoCE v2 carries
 * IPv4 groups (Linux rdma_is_multicast_addr()).
 *
 * Context: Any context: touches only its arguments.
 * Return: true for a multicast GID: first byte 0xff (RFC 4291 2.7), or the
 * IPv4-mapped GID of an IPv4 multicast address, ::ffff:224.0.0.0/100, as RoCE
 * v2 carries IPv4 groups (Linux rdma_is_multicast_addr()).
 */
static inline bool ibk_gid_is_multicast(const struct ibk_gid *gid)
{
	return gid->raw[0] == 0xff ||
	       (ibk_gid_is_v4mapped(gid) && (gid->raw[12] & 0xf0) == 0xe0);
}

/**
 * ibk_gid_is_link_local() - True for a link-local unicast GID, fe80::/10 (RFC
 * 4291 2.5.6)
 * @gid: a GID
 *
 * Context: Any context: touches only its arguments.
 * Return: true for a link-local unicast GID, fe80::/10 (RFC 4291 2.5.6).
 */
static inline bool ibk_gid_is_link_local(const struct ibk_gid *gid)
{
	return gid->raw[0] == 0xfe && (gid->raw[1] & 0xc0) == 0x80;
}

/**
 * ibk_gid_set_from_ipv4() - Writes the IPv4-mapped GID of an IPv4 address
 * @ipv4: an IPv4 address, host order
 * @gid: receives the GID
 *
 * The IPv4-mapped GID ::ffff:a.b.c.d for @ipv4 = 0xaabbccdd (host order), the
 * form a RoCE v2 GID takes for an IPv4 address (RFC 4291 2.5.5.2), into *@gid.
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_gid_set_from_ipv4(uint32_t ipv4, struct ibk_gid *gid)
{
	ibk__store_be64(gid->raw, 0);
	ibk__store_be32(gid->raw + 8, 0x0000ffffu);
	ibk__store_be32(gid->raw + 12, ipv4);
}

/**
 * ibk_gid_from_ipv4() - As ibk_gid_set_from_ipv4(), returned by value
 * @ipv4: an IPv4 address, host order
 *
 * Context: Any context: touches only its arguments.
 * Return: the IPv4-mapped GID.
 */
static inline struct ibk_gid ibk_gid_from_ipv4(uint32_t ipv4)
{
	struct ibk_gid gid = {{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
				IBK__BE32_BYTES(ipv4) }};

	return gid;
}

/**
 * ibk_gid_to_ipv4() - The IPv4 address in an IPv4-mapped GID
 * @gid: a GID
 *
 * The IPv4 address (host order) in the last 32 bits of @gid; the caller checks
 * ibk_gid_is_v4mapped() first.
 *
 * Context: Any context: touches only its arguments.
 * Return: the IPv4 address (host order) in the last 32 bits of @gid; the
 * caller checks ibk_gid_is_v4mapped() first.
 */
static inline uint32_t ibk_gid_to_ipv4(const struct ibk_gid *gid)
{
	return ibk__load_be32(gid->raw + 12);
}

/**
 * ibk_gid_set_from_mac() - Writes the default (link-local) GID of a RoCE
 * port's MAC
 * @mac: a 6-byte Ethernet MAC address
 * @gid: receives the GID
 *
 * The MAC's default GID, gid[0] of a RoCE port with Ethernet address @mac:
 * fe80::/64 followed by the modified EUI-64 interface id, i.e. ff:fe inserted
 * between the third and fourth bytes and the universal/local bit (0x02 of the
 * first byte) inverted (RFC 4291 appendix A, RFC 2464 4).
 *
 * The value does not say the GID's type: the kernel lists it once per type the
 * port supports (RoCE v1 and v2; soft-RoCE v2 only). Into *@gid.
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_gid_set_from_mac(const uint8_t mac[6],
					struct ibk_gid *gid)
{
	ibk__store_be64(gid->raw, IBK_GID_DEFAULT_PREFIX);
	gid->raw[8] = (uint8_t)(mac[0] ^ 0x02);
	gid->raw[9] = mac[1];
	gid->raw[10] = mac[2];
	gid->raw[11] = 0xff;
	gid->raw[12] = 0xfe;
	gid->raw[13] = mac[3];
	gid->raw[14] = mac[4];
	gid->raw[15] = mac[5];
}

/**
 * ibk_gid_from_mac() - As ibk_gid_set_from_mac(), returned by value
 * @mac: a 6-byte Ethernet MAC address
 *
 * Context: Any context: touches only its arguments.
 * Return: the link-local GID.
 */
static inline struct ibk_gid ibk_gid_from_mac(const uint8_t mac[6])
{
	struct ibk_gid gid = {{ 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				(uint8_t)(mac[0] ^ 0x02), mac[1], mac[2],
				0xff, 0xfe, mac[3], mac[4], mac[5] }};

	return gid;
}

/**
 * ibk_gid_to_mac() - The MAC address a link-local RoCE GID was made from
 * @gid: a GID
 * @mac: receives the 6-byte MAC address
 *
 * The inverse of ibk_gid_from_mac(): writes the MAC whose modified EUI-64 is
 * @gid's interface id and returns IBK_OK.
 *
 * The subnet prefix is not checked.
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_OK; IBK_EINVAL if either pointer is NULL or the interface id
 * lacks ff:fe at bytes 11-12 (it was not made from a MAC).
 */
static inline int ibk_gid_to_mac(const struct ibk_gid *gid, uint8_t mac[6])
{
	if (!gid || !mac || gid->raw[11] != 0xff || gid->raw[12] != 0xfe)
		return IBK_EINVAL;
	mac[0] = (uint8_t)(gid->raw[8] ^ 0x02);
	mac[1] = gid->raw[9];
	mac[2] = gid->raw[10];
	mac[3] = gid->raw[13];
	mac[4] = gid->raw[14];
	mac[5] = gid->raw[15];
	return IBK_OK;
}

/*
 * IPoIB multicast GIDs (RFC 4391 4): ff1S:SSSS:PPPP followed by a mapping
 * of the IP group, with S the scope nibble (only the low 4 bits of @scope
 * are used), SSSS the signature (401b IPv4, 601b IPv6) and PPPP the P_Key
 * with the full-member bit forced on. A P_Key of base 0 is refused: it
 * would give PPPP = 8000, which no partition has. Each returns IBK_OK, or
 * IBK_EINVAL and leaves *@mgid alone.
 */
#define IBK__IPOIB_SIGNATURE_IPV4 0x401bu
#define IBK__IPOIB_SIGNATURE_IPV6 0x601bu

static inline void ibk__ipoib_mgid_head(ibk_pkey_t pkey, unsigned scope,
					uint16_t signature,
					struct ibk_gid *mgid)
{
	mgid->raw[0] = 0xff;
	mgid->raw[1] = (uint8_t)(0x10 | (scope & 0x0f));
	ibk__store_be16(mgid->raw + 2, signature);
	ibk__store_be16(mgid->raw + 4, ibk_pkey_to_full(pkey));
}

/**
 * ibk_gid_ipoib_broadcast() - The IPv4 broadcast MGID of a partition
 * @pkey: a P_Key, host order
 * @scope: the multicast scope, 4 bits (IPoIB uses 2, link-local)
 * @mgid: receives the multicast GID
 *
 * ff1S:401b:PPPP::ffff:ffff, what an IPoIB interface joins first. IPv6 has
 * no broadcast MGID (Linux IPoIB never joins one).
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_OK; IBK_EINVAL, leaving *@mgid alone, for a NULL @mgid or a
 * P_Key of base 0.
 */
static inline int ibk_gid_ipoib_broadcast(ibk_pkey_t pkey, unsigned scope,
					  struct ibk_gid *mgid)
{
	if (!mgid || !ibk_pkey_is_valid(pkey))
		return IBK_EINVAL;
	ibk__ipoib_mgid_head(pkey, scope, IBK__IPOIB_SIGNATURE_IPV4, mgid);
	ibk__store_be16(mgid->raw + 6, 0);
	ibk__store_be32(mgid->raw + 8, 0);
	ibk__store_be32(mgid->raw + 12, 0xffffffffu);
	return IBK_OK;
}

/**
 * ibk_gid_ipoib_mgid_ipv4() - The MGID of IPv4 multicast group @group (host
 * order, 224.0.0.0/4) in partition @pkey into *@mgid: ff1S:401b:PPPP:0:0:0
 * followed by the low 28 bits of the group (Linux ip_ib_mc_map())
 * @pkey: a P_Key, host order
 * @scope: the multicast scope, 4 bits (IPoIB uses 2, link-local)
 * @group: the multicast group (IPv4 address, host order)
 * @mgid: receives the multicast GID
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_OK; IBK_EINVAL, leaving *@mgid alone, for a NULL pointer, a
 * P_Key of base 0, or a @group that is not multicast.
 */
static inline int ibk_gid_ipoib_mgid_ipv4(ibk_pkey_t pkey, unsigned scope,
					  uint32_t group, struct ibk_gid *mgid)
{
	if (!mgid || !ibk_pkey_is_valid(pkey) || (group >> 28) != 0xe)
		return IBK_EINVAL;
	ibk__ipoib_mgid_head(pkey, scope, IBK__IPOIB_SIGNATURE_IPV4, mgid);
	ibk__store_be16(mgid->raw + 6, 0);
	ibk__store_be32(mgid->raw + 8, 0);
	ibk__store_be32(mgid->raw + 12, group & 0x0fffffffu);
	return IBK_OK;
}

/**
 * ibk_gid_ipoib_mgid_ipv6() - The MGID of IPv6 multicast group @group
 * (ff00::/8, in the GID layout) in partition @pkey into *@mgid: ff1S:601b:PPPP
 * followed by the low 80 bits of the group (Linux ipv6_ib_mc_map()); all-nodes
 * ff02::1 gives ff12:601b:PPPP::1
 * @pkey: a P_Key, host order
 * @scope: the multicast scope, 4 bits (IPoIB uses 2, link-local)
 * @group: the IPv6 multicast group, as a GID
 * @mgid: receives the multicast GID
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_OK; IBK_EINVAL, leaving *@mgid alone, for a NULL pointer, a
 * P_Key of base 0, or a @group that is not multicast.
 */
static inline int ibk_gid_ipoib_mgid_ipv6(ibk_pkey_t pkey, unsigned scope,
					  const struct ibk_gid *group,
					  struct ibk_gid *mgid)
{
	if (!mgid || !group || !ibk_pkey_is_valid(pkey) ||
	    group->raw[0] != 0xff)
		return IBK_EINVAL;
	ibk__copy16(mgid->raw, group->raw);	/* then the head over it */
	ibk__ipoib_mgid_head(pkey, scope, IBK__IPOIB_SIGNATURE_IPV6, mgid);
	return IBK_OK;
}

/**
 * ibk_gid_ipoib_mgid_parse() - Recognises an IPoIB multicast GID of either
 * family
 * @gid: a GID
 * @pkey: receives the P_Key
 * @scope: receives the multicast scope; may be NULL
 * @ipv6: receives true for an IPv6 group, false for IPv4; may be NULL
 *
 * Recognises an IPoIB MGID of either family, as the functions above make them:
 * ff1S, a 401b or 601b signature, a valid full-member P_Key, and for IPv4
 * zeros up to the group's 28 bits or the broadcast ffff:ffff.
 *
 * Fills the non-NULL ones of @pkey, @scope and @ipv6 and returns IBK_OK; else
 * IBK_EINVAL.
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_OK for an IPoIB MGID, having filled the non-NULL ones of @pkey,
 * @scope and @ipv6; else IBK_EINVAL, filling nothing.
 */
static inline int ibk_gid_ipoib_mgid_parse(const struct ibk_gid *gid,
					   ibk_pkey_t *pkey, unsigned *scope,
					   bool *ipv6)
{
	uint16_t signature, key;
	uint32_t low;

	if (!gid || gid->raw[0] != 0xff || (gid->raw[1] & 0xf0) != 0x10)
		return IBK_EINVAL;
	signature = ibk__load_be16(gid->raw + 2);
	key = ibk__load_be16(gid->raw + 4);
	if (!ibk_pkey_is_full(key) || !ibk_pkey_is_valid(key))
		return IBK_EINVAL;
	if (signature == IBK__IPOIB_SIGNATURE_IPV4) {
		low = ibk__load_be32(gid->raw + 12);
		if (ibk__load_be16(gid->raw + 6) != 0 ||
		    ibk__load_be32(gid->raw + 8) != 0 ||
		    (low > 0x0fffffffu && low != 0xffffffffu))
			return IBK_EINVAL;
	} else if (signature != IBK__IPOIB_SIGNATURE_IPV6) {
		return IBK_EINVAL;
	}
	if (pkey)
		*pkey = key;
	if (scope)
		*scope = gid->raw[1] & 0x0fu;
	if (ipv6)
		*ipv6 = signature == IBK__IPOIB_SIGNATURE_IPV6;
	return IBK_OK;
}

/* ------------------------------------------------------------------------
 * GID / GUID text
 *
 * A GID is written two ways: compressed as RFC 5952 and glibc's inet_ntop()
 * do, "fe80::2:c903:1:2345" (tshark, the IP stack), and in full, eight
 * groups of four digits (RFC 4291 2.2 form 1),
 * "fe80:0000:0000:0000:0002:c903:0001:2345" (ibv_devinfo, sysfs). A GUID
 * as "0x0002c90300012345" (ibstat) or "0002:c903:0001:2345". Buffer sizes
 * count the terminating NUL. No function here calls libc.
 *
 * API:
 *	ibk_gid_ntop(g, text)
 *	ibk_gid_pton(text, gid)
 *	ibk_gid_ntop_full(g, text)
 *	ibk_guid_ntop(guid, text)
 *	ibk_guid_ntop_colon(guid, text)
 *	ibk_guid_pton(text, guid)
 * ------------------------------------------------------------------------ */

#define IBK_GID_STRLEN		46	/* == INET6_ADDRSTRLEN */
#define IBK_GID_FULL_STRLEN	40	/* 8 groups of 4, 7 ':' */
#define IBK_GUID_STRLEN		20	/* the longer of the two GUID forms */

/* The value of hex digit @c in either case, or -1 if @c is not one. */
static inline int ibk__hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * The length of the NUL-terminated @s, or @max if it is at least that long.
 * The parsers below read no further, and take a @max longer than any text
 * they accept: cut there, a longer text is still refused.
 */
static inline unsigned ibk__text_len(const char *s, unsigned max)
{
	unsigned len = 0;

	while (len < max && s[len] != '\0')
		len++;
	return len;
}

/*
 * Read up to @max_digits hex digits from @s[*@i] on, short of @s[@len], into
 * *@val and move *@i past them. Returns how many it read; the caller refuses
 * a longer run by the digit that follows.
 */
static inline int ibk__hex_digits(const char *s, unsigned *i, unsigned len,
				  int max_digits, uint64_t *val)
{
	uint64_t v = 0;
	int digits = 0, d;

	while (digits < max_digits && *i < len &&
	       (d = ibk__hex_value(s[*i])) >= 0) {
		v = v << 4 | (uint64_t)d;
		digits++;
		(*i)++;
	}
	*val = v;
	return digits;
}

/*
 * Write the 16-bit group @v in lowercase hex, with at least @min_digits
 * digits (1: leading zeros dropped, RFC 5952 4.1; 4: the full form).
 * Returns the position after the last digit written.
 */
static inline char *ibk__put_group(char *p, unsigned v, int min_digits)
{
	int shift;

	for (shift = 12; shift >= 0; shift -= 4)
		if ((v >> shift) != 0 || shift < 4 * min_digits)
			*p++ = "0123456789abcdef"[(v >> shift) & 0xf];
	return p;
}

/*
 * Write @n big-endian 16-bit groups from @be as four hex digits each,
 * ':'-separated if @colons. Returns the position after the last digit.
 */
static inline char *ibk__put_full_groups(char *p, const uint8_t *be,
					 unsigned n, bool colons)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		if (colons && i != 0)
			*p++ = ':';
		p = ibk__put_group(p, ibk__load_be16(be + 2 * i), 4);
	}
	return p;
}

/*
 * Write @v (0-255) in decimal, no leading zeros; returns the position after
 * it. Digits by subtraction: a core without a divider (Cortex-M0) would
 * otherwise call a library routine for '/' and '%'.
 */
static inline char *ibk__put_dec8(char *p, unsigned v)
{
	unsigned hundreds = 0, tens = 0;

	while (v >= 100) {
		v -= 100;
		hundreds++;
	}
	while (v >= 10) {
		v -= 10;
		tens++;
	}
	if (hundreds)
		*p++ = (char)('0' + hundreds);
	if (hundreds || tens)
		*p++ = (char)('0' + tens);
	*p++ = (char)('0' + v);
	return p;
}

/**
 * ibk_gid_ntop() - The compressed text of a GID, as inet_ntop() writes it
 * @g: the GID
 * @text: receives the NUL-terminated text, at most IBK_GID_STRLEN bytes
 *
 * Byte for byte what glibc's inet_ntop(AF_INET6) writes, so logs and tools
 * agree. RFC 5952: no leading zeros (4.1); the longest run of two or more
 * zero groups becomes "::" (4.2.1), a lone zero group stays "0" (4.2.2), the
 * first of equal runs wins (4.2.3); lowercase (4.3). Like glibc, the last 32
 * bits are written as a dotted quad in two cases only, both decided by the
 * zero run that opens the address (RFC 4291 2.5.5):
 *
 *  - IPv4-mapped: exactly five zero groups, then 0xffff: "::ffff:a.b.c.d"
 *    for every a.b.c.d ("::ffff:0:0" prints "::ffff:0.0.0.0");
 *  - IPv4-compatible: exactly six zero groups, i.e. group 6 is non-zero:
 *    "::0.1.0.0" prints dotted, but "::0.0.0.1" prints "::1", "::0.0.1.2"
 *    prints "::102" and "::" stays "::".
 *
 * Context: Any context: touches only its arguments.
 * Return: @text, or NULL if @g or @text is NULL.
 */
static inline char *ibk_gid_ntop(const struct ibk_gid *g,
				 char text[IBK_GID_STRLEN])
{
	unsigned best = 0, best_len = 0, run = 0, i, groups;
	char *p = text;

	if (g == NULL || text == NULL)
		return NULL;
	for (i = 0; i < 8; i++) {
		run = ibk__load_be16(g->raw + 2 * i) == 0 ? run + 1 : 0;
		if (run > best_len) {
			best = i + 1 - run;
			best_len = run;
		}
	}
	if (best_len < 2)
		best_len = 0;
	groups = best == 0 && (best_len == 6 || (best_len == 5 &&
			       ibk__load_be16(g->raw + 10) == 0xffff)) ? 6 : 8;

	for (i = 0; i < groups; i++) {
		if (i >= best && i < best + best_len) {
			/* The run "::" stands for: a ':' at its start, and
			 * another at the end if no group follows. */
			if (i == best || i == 7)
				*p++ = ':';
			continue;
		}
		if (i != 0)
			*p++ = ':';
		p = ibk__put_group(p, ibk__load_be16(g->raw + 2 * i), 1);
	}
	if (groups == 6) {
		*p++ = ':';
		for (i = 12; i < 16; i++) {
			if (i != 12)
				*p++ = '.';
			p = ibk__put_dec8(p, g->raw[i]);
		}
	}
	*p = '\0';
	return text;
}

/*
 * Parse the dotted quad from @s[@at] to the end of the @len-long text @s
 * into *@addr, with glibc's inet_pton() rules: exactly four decimal octets
 * of value 0-255, no empty octet, no leading zero ("0" alone is fine, "00"
 * and "01" are not).
 */
static inline int ibk__ipv4_pton(const char *s, unsigned at, unsigned len,
				 uint32_t *addr)
{
	uint32_t quad = 0, v;
	unsigned i, digits;
	int d;

	for (i = 0; i < 4; i++) {
		if (i != 0 && (at >= len || s[at++] != '.'))
			return IBK_EINVAL;
		for (v = 0, digits = 0; digits < 3 && at < len &&
		     (d = s[at] - '0') >= 0 && d <= 9; digits++, at++)
			v = v * 10 + (uint32_t)d;
		/* A leading zero leaves fewer digits than read: "01" is 1. */
		if (digits == 0 || v > 255 ||
		    (digits > 1 && v < (digits == 2 ? 10u : 100u)))
			return IBK_EINVAL;
		quad = quad << 8 | v;
	}
	*addr = quad;
	return at == len ? 0 : IBK_EINVAL;
}

/**
 * ibk_gid_pton() - Parse the RFC 4291 2.2 text @text into @gid
 * @text: NUL-terminated text
 * @gid: receives the GID
 *
 * Accepts exactly what glibc's inet_pton(AF_INET6) accepts, so a GID that a
 * tool printed always reads back: groups of one to four hex digits in either
 * case (five are refused, even "00001"); at most one "::", which stands for
 * one or more zero groups (so "1:2:3:4:5:6:7::" is valid, "1:2:3:4:5:6:7:8::"
 * is not); an optional dotted-quad IPv4 tail as the last 32 bits, octets 0-255
 * without leading zeros. No zone id ("%eth0"), prefix length, brackets, spaces
 * or other trailing characters; an embedded NUL ends the text.
 *
 * Context: Any context: touches only its arguments.
 * Return: 0, or IBK_EINVAL for NULL @text or @gid or malformed text, in which
 * case @gid is left untouched.
 */
static inline int ibk_gid_pton(const char *text, struct ibk_gid *gid)
{
	/* Bytes [0, n) parsed so far. Every byte is written before the copy,
	 * but EVA cannot follow that (tests/frama-c): zeroed first, by two
	 * stores (GCC -Os makes an initialiser a memcpy() for Cortex-M). */
	struct ibk_gid parsed;
	uint8_t *b = parsed.raw;
	unsigned n = 0, gap = 0, i, at = 0, len, field;
	bool have_gap = false;
	uint64_t v;
	uint32_t quad;
	int digits;

	if (text == NULL || gid == NULL)
		return IBK_EINVAL;
	ibk__store_be64(b, 0);
	ibk__store_be64(b + 8, 0);
	len = ibk__text_len(text, IBK_GID_STRLEN);
	/* A leading ':' only as "::" */
	if (text[0] == ':' && text[++at] != ':')
		return IBK_EINVAL;
	for (;;) {
		field = at;
		digits = ibk__hex_digits(text, &at, len, 4, &v);
		if (at < len && text[at] == '.')
			break;
		if (digits == 0) {
			/* Empty text, or the end or middle of a "::". */
			if (at >= len)
				break;
			if (text[at++] != ':' || have_gap)
				return IBK_EINVAL;
			have_gap = true;
			gap = n;
			continue;
		}
		if (n == 16)
			return IBK_EINVAL;
		ibk__store_be16(b + n, (uint16_t)v);
		n += 2;
		if (at >= len)
			break;
		if (text[at++] != ':' || at == len)	/* no trailing ':' */
			return IBK_EINVAL;
	}
	if (at < len) {		/* at a '.': the field starts a dotted quad */
		if (n > 12 || ibk__ipv4_pton(text, field, len, &quad) != 0)
			return IBK_EINVAL;
		ibk__store_be32(b + n, quad);
		n += 4;
	}

	if (have_gap) {
		if (n == 16)		/* "::" must stand for a zero group */
			return IBK_EINVAL;
		/* From the end down to it: the groups after it, then zeros. */
		for (i = 16; i > gap; i--)
			b[i - 1] = n > gap ? b[--n] : 0;
	} else if (n != 16) {
		return IBK_EINVAL;
	}
	ibk__copy16(gid->raw, parsed.raw);
	return 0;
}

/**
 * ibk_gid_ntop_full() - The full text of a GID, eight groups of four hex
 * digits
 * @g: a GID
 * @text: receives the NUL-terminated text
 *
 * The full text of @g, eight groups of exactly four lowercase hex digits
 * ("fe80:0000:0000:0000:0002:c903:0001:2345", RFC 4291 2.2 form 1), the form
 * ibv_devinfo prints and sysfs .../gids/N holds, so it compares equal to
 * theirs as a string.
 *
 * Context: Any context: touches only its arguments.
 * Return: @text, or NULL if @g or @text is NULL.
 */
static inline char *ibk_gid_ntop_full(const struct ibk_gid *g,
				      char text[IBK_GID_FULL_STRLEN])
{
	if (g == NULL || text == NULL)
		return NULL;
	*ibk__put_full_groups(text, g->raw, 8, true) = '\0';
	return text;
}

/**
 * ibk_guid_ntop() - A GUID as "0x" and sixteen hex digits, as ibstat prints it
 * @guid: a GUID (EUI-64), host order
 * @text: receives the NUL-terminated text
 *
 * @guid as "0x" and sixteen lowercase hex digits ("0x0002c90300012345"), the
 * form ibstat and OpenSM print.
 *
 * Context: Any context: touches only its arguments.
 * Return: @text, or NULL if it is NULL.
 */
static inline char *ibk_guid_ntop(ibk_guid_t guid, char text[IBK_GUID_STRLEN])
{
	uint8_t be[8];

	if (text == NULL)
		return NULL;
	ibk__store_be64(be, guid);
	text[0] = '0';
	text[1] = 'x';
	*ibk__put_full_groups(text + 2, be, 4, false) = '\0';
	return text;
}

/**
 * ibk_guid_ntop_colon() - A GUID as four colon-separated groups, as sysfs
 * shows it
 * @guid: a GUID (EUI-64), host order
 * @text: receives the NUL-terminated text
 *
 * @guid as four ':'-separated groups of four lowercase hex digits
 * ("0002:c903:0001:2345"), the interface-id half of a full-form GID as sysfs
 * node_guid/sys_image_guid show it.
 *
 * Context: Any context: touches only its arguments.
 * Return: @text, or NULL if it is NULL.
 */
static inline char *ibk_guid_ntop_colon(ibk_guid_t guid,
					char text[IBK_GUID_STRLEN])
{
	uint8_t be[8];

	if (text == NULL)
		return NULL;
	ibk__store_be64(be, guid);
	*ibk__put_full_groups(text, be, 4, true) = '\0';
	return text;
}

/**
 * ibk_guid_pton() - Parses a GUID in either printed form
 * @text: NUL-terminated text
 * @guid: receives the GUID; untouched on error
 *
 * Parse a GUID in either printed form into @guid: "0x" or "0X" and one to
 * sixteen hex digits (ibstat), or exactly four ':'-separated groups of exactly
 * four hex digits (sysfs); digits in either case.
 *
 * Nothing else: no sign, no spaces, no trailing characters, no bare digits.
 *
 * Context: Any context: touches only its arguments.
 * Return: 0, or IBK_EINVAL for NULL @text or @guid or any other text, in which
 * case @guid is left untouched.
 */
static inline int ibk_guid_pton(const char *text, ibk_guid_t *guid)
{
	uint64_t v = 0, group;
	unsigned i, at = 0, len;

	if (text == NULL || guid == NULL)
		return IBK_EINVAL;
	len = ibk__text_len(text, IBK_GUID_STRLEN);
	if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
		at = 2;
		if (ibk__hex_digits(text, &at, len, 16, &v) < 1)
			return IBK_EINVAL;
	} else {
		for (i = 0; i < 4; i++) {
			if (i != 0 && (at >= len || text[at++] != ':'))
				return IBK_EINVAL;
			if (ibk__hex_digits(text, &at, len, 4, &group) != 4)
				return IBK_EINVAL;
			v = v << 16 | group;
		}
	}
	if (at != len)
		return IBK_EINVAL;
	*guid = v;
	return 0;
}

/* ------------------------------------------------------------------------
 * Wire layouts (IBA 7.7 LRH, 8.3 GRH, 9.2 BTH, 9.3 DETH, RETH, AtomicETH,
 * IETH, AETH), all big-endian
 *
 * Getters take a pointer to the start of their header, setters likewise;
 * any alignment. A setter changes only its own field's bits and ignores
 * value bits beyond the field's width. Then which opcode carries which
 * extension header (IBA table 38), the AETH syndrome's parts, and the
 * headers of a whole received packet located (ibk_pkt_locate()).
 *
 * API:
 *	ibk_lrh_vl(lrh)
 *	ibk_lrh_set_vl(lrh, vl)
 *	ibk_lrh_lver(lrh)
 *	ibk_lrh_set_lver(lrh, lver)
 *	ibk_lrh_sl(lrh)
 *	ibk_lrh_set_sl(lrh, sl)
 *	ibk_lrh_lnh(lrh)
 *	ibk_lrh_set_lnh(lrh, lnh)
 *	ibk_lrh_dlid(lrh)
 *	ibk_lrh_set_dlid(lrh, dlid)
 *	ibk_lrh_pktlen(lrh)
 *	ibk_lrh_set_pktlen(lrh, pktlen)
 *	ibk_lrh_slid(lrh)
 *	ibk_lrh_set_slid(lrh, slid)
 *	ibk_grh_ipver(grh)
 *	ibk_grh_set_ipver(grh, ipver)
 *	ibk_grh_tclass(grh)
 *	ibk_grh_set_tclass(grh, tclass)
 *	ibk_grh_flow_label(grh)
 *	ibk_grh_set_flow_label(grh, flow_label)
 *	ibk_grh_paylen(grh)
 *	ibk_grh_set_paylen(grh, paylen)
 *	ibk_grh_nxthdr(grh)
 *	ibk_grh_set_nxthdr(grh, nxthdr)
 *	ibk_grh_hoplmt(grh)
 *	ibk_grh_set_hoplmt(grh, hoplmt)
 *	ibk_grh_get_sgid(grh, sgid)
 *	ibk_grh_sgid(grh)
 *	ibk_grh_set_sgid(grh, sgid)
 *	ibk_grh_get_dgid(grh, dgid)
 *	ibk_grh_dgid(grh)
 *	ibk_grh_set_dgid(grh, dgid)
 *	ibk_bth_opcode(bth)
 *	ibk_bth_set_opcode(bth, opcode)
 *	ibk_bth_se(bth)
 *	ibk_bth_set_se(bth, se)
 *	ibk_bth_mig(bth)
 *	ibk_bth_set_mig(bth, mig)
 *	ibk_bth_padcnt(bth)
 *	ibk_bth_set_padcnt(bth, padcnt)
 *	ibk_bth_tver(bth)
 *	ibk_bth_set_tver(bth, tver)
 *	ibk_bth_pkey(bth)
 *	ibk_bth_set_pkey(bth, pkey)
 *	ibk_bth_fecn(bth)
 *	ibk_bth_set_fecn(bth, fecn)
 *	ibk_bth_becn(bth)
 *	ibk_bth_set_becn(bth, becn)
 *	ibk_bth_dest_qp(bth)
 *	ibk_bth_set_dest_qp(bth, qpn)
 *	ibk_bth_ackreq(bth)
 *	ibk_bth_set_ackreq(bth, ackreq)
 *	ibk_bth_psn(bth)
 *	ibk_bth_set_psn(bth, psn)
 *	ibk_deth_qkey(deth)
 *	ibk_deth_set_qkey(deth, qkey)
 *	ibk_deth_src_qp(deth)
 *	ibk_deth_set_src_qp(deth, qpn)
 *	ibk_opcode_has_reth(opcode)
 *	ibk_opcode_has_atomiceth(opcode)
 *	ibk_opcode_has_ieth(opcode)
 *	ibk_opcode_has_aeth(opcode)
 *	ibk_opcode_has_immdt(opcode)
 *	ibk_opcode_is_ud_send(opcode)
 *	ibk_reth_va(reth)
 *	ibk_reth_set_va(reth, va)
 *	ibk_reth_rkey(reth)
 *	ibk_reth_set_rkey(reth, rkey)
 *	ibk_reth_dma_len(reth)
 *	ibk_reth_set_dma_len(reth, len)
 *	ibk_atomiceth_va(atm)
 *	ibk_atomiceth_set_va(atm, va)
 *	ibk_atomiceth_rkey(atm)
 *	ibk_atomiceth_set_rkey(atm, rkey)
 *	ibk_atomiceth_swap_add(atm)
 *	ibk_atomiceth_set_swap_add(atm, v)
 *	ibk_atomiceth_compare(atm)
 *	ibk_atomiceth_set_compare(atm, v)
 *	ibk_ieth_rkey(ieth)
 *	ibk_ieth_set_rkey(ieth, rkey)
 *	ibk_aeth_syndrome(aeth)
 *	ibk_aeth_set_syndrome(aeth, syndrome)
 *	ibk_aeth_msn(aeth)
 *	ibk_aeth_set_msn(aeth, msn)
 *	ibk_aeth_is_ack(syndrome)
 *	ibk_aeth_is_rnr_nak(syndrome)
 *	ibk_aeth_is_nak(syndrome)
 *	ibk_aeth_value(syndrome)
 *	ibk_pkt_locate(pkt, len, headers)
 * ------------------------------------------------------------------------ */

#define IBK_LRH_LEN	8
#define IBK_GRH_LEN	40
#define IBK_BTH_LEN	12
#define IBK_DETH_LEN	8
#define IBK_ICRC_LEN	4	/* after the payload and its pad */

#define IBK_LID_PERMISSIVE	0xffff	/* the LID a directed-route SMP uses */
#define IBK_VL_MANAGEMENT	15	/* VL15: subnet management only */

/* LRH Link Next Header: what follows the LRH. */
#define IBK_LNH_RAW	0	/* raw packet, no IBA transport */
#define IBK_LNH_IPV6	1	/* raw IPv6 */
#define IBK_LNH_BTH	2	/* IBA local: BTH next */
#define IBK_LNH_GRH	3	/* IBA global: GRH next */

#define IBK_GRH_NXTHDR_BTH	0x1b	/* GRH NxtHdr value for an IBA BTH */

/* BTH OpCode bits 7-5: the transport service (IBA 9.2, table 38). */
#define IBK_OPCODE_TRANSPORT_MASK	0xe0
#define IBK_TRANSPORT_RC		0x00	/* reliable connection */
#define IBK_TRANSPORT_UC		0x20	/* unreliable connection */
#define IBK_TRANSPORT_RD		0x40	/* reliable datagram */
#define IBK_TRANSPORT_UD		0x60	/* unreliable datagram */
#define IBK_TRANSPORT_CNP		0x80	/* congestion notification */

/* The only UD opcodes, both followed by a DETH. */
#define IBK_OPCODE_UD_SEND_ONLY		0x64
#define IBK_OPCODE_UD_SEND_ONLY_IMM	0x65

/* The BTH TVer every receiver accepts (IBA 9.2; rxe hdr_check()). */
#define IBK_BTH_TVER			0

/*
 * BTH OpCode bits 4-0: the operation (IBA 9.2 table 38, libibverbs
 * <infiniband/opcode.h>). An opcode is a transport ORed with one of these;
 * RC has every one listed here, UC the SENDs and RDMA WRITEs, RD all but
 * the invalidates, FLUSH and ATOMIC WRITE, UD SEND ONLY with or without
 * immediate. FLUSH and ATOMIC WRITE are RC only, and newer than the rest
 * (rxe_opcode.c has them, Wireshark 4.0 does not).
 */
#define IBK_OPCODE_OP_MASK		0x1f
#define IBK_OP_SEND_FIRST		0x00
#define IBK_OP_SEND_MIDDLE		0x01
#define IBK_OP_SEND_LAST		0x02
#define IBK_OP_SEND_LAST_IMM		0x03
#define IBK_OP_SEND_ONLY		0x04
#define IBK_OP_SEND_ONLY_IMM		0x05
#define IBK_OP_RDMA_WRITE_FIRST		0x06
#define IBK_OP_RDMA_WRITE_MIDDLE	0x07
#define IBK_OP_RDMA_WRITE_LAST		0x08
#define IBK_OP_RDMA_WRITE_LAST_IMM	0x09
#define IBK_OP_RDMA_WRITE_ONLY		0x0a
#define IBK_OP_RDMA_WRITE_ONLY_IMM	0x0b
#define IBK_OP_RDMA_READ_REQUEST	0x0c
#define IBK_OP_RDMA_READ_RESPONSE_FIRST	0x0d
#define IBK_OP_RDMA_READ_RESPONSE_MIDDLE 0x0e
#define IBK_OP_RDMA_READ_RESPONSE_LAST	0x0f
#define IBK_OP_RDMA_READ_RESPONSE_ONLY	0x10
#define IBK_OP_ACKNOWLEDGE		0x11
#define IBK_OP_ATOMIC_ACKNOWLEDGE	0x12
#define IBK_OP_COMPARE_SWAP		0x13
#define IBK_OP_FETCH_ADD		0x14
#define IBK_OP_SEND_LAST_INV		0x16
#define IBK_OP_SEND_ONLY_INV		0x17
#define IBK_OP_FLUSH			0x1c
#define IBK_OP_ATOMIC_WRITE		0x1d

/* Extension headers after the BTH (IBA 9.3; rxe_hdr.h). */
#define IBK_RETH_LEN		16	/* VA @0, R_Key @8, DMA length @12 */
#define IBK_ATOMICETH_LEN	28	/* VA @0, R_Key @8, swap/add @12, compare @20 */
#define IBK_IETH_LEN		4	/* R_Key to invalidate */
#define IBK_AETH_LEN		4	/* syndrome @0, MSN @1-3 */
#define IBK_IMMDT_LEN		4	/* immediate data */

/*
 * LRH, 8 bytes: byte 0 VL(4) LVer(4); byte 1 SL(4) reserved(2) LNH(2);
 * DLID @2; bytes 4-5 reserved(5) PktLen(11, in 4-byte words); SLID @6.
 */

/**
 * ibk_lrh_vl() - The LRH's virtual lane
 * @lrh: the LRH, 8 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_lrh_vl(const void *lrh)
{
	return (uint8_t)(((const uint8_t *)lrh)[0] >> 4);
}

/**
 * ibk_lrh_set_vl() - Sets the LRH's virtual lane
 * @lrh: the LRH to write, 8 bytes, any alignment
 * @vl: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_lrh_set_vl(void *lrh, uint8_t vl)
{
	ibk__store_bits((uint8_t *)lrh, 0xf0, (unsigned)vl << 4);
}

/**
 * ibk_lrh_lver() - The LRH's link version
 * @lrh: the LRH, 8 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_lrh_lver(const void *lrh)
{
	return (uint8_t)(((const uint8_t *)lrh)[0] & 0x0f);
}

/**
 * ibk_lrh_set_lver() - Sets the LRH's link version
 * @lrh: the LRH to write, 8 bytes, any alignment
 * @lver: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_lrh_set_lver(void *lrh, uint8_t lver)
{
	ibk__store_bits((uint8_t *)lrh, 0x0f, lver);
}

/**
 * ibk_lrh_sl() - The LRH's service level
 * @lrh: the LRH, 8 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_lrh_sl(const void *lrh)
{
	return (uint8_t)(((const uint8_t *)lrh)[1] >> 4);
}

/**
 * ibk_lrh_set_sl() - Sets the LRH's service level
 * @lrh: the LRH to write, 8 bytes, any alignment
 * @sl: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_lrh_set_sl(void *lrh, uint8_t sl)
{
	ibk__store_bits((uint8_t *)lrh + 1, 0xf0, (unsigned)sl << 4);
}

/**
 * ibk_lrh_lnh() - The LRH's link next header, one of IBK_LNH_*
 * @lrh: the LRH, 8 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_lrh_lnh(const void *lrh)
{
	return (uint8_t)(((const uint8_t *)lrh)[1] & 0x03);
}

/**
 * ibk_lrh_set_lnh() - Sets the LRH's link next header, one of IBK_LNH_*
 * @lrh: the LRH to write, 8 bytes, any alignment
 * @lnh: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_lrh_set_lnh(void *lrh, uint8_t lnh)
{
	ibk__store_bits((uint8_t *)lrh + 1, 0x03, lnh);
}

/**
 * ibk_lrh_dlid() - The LRH's destination LID
 * @lrh: the LRH, 8 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint16_t ibk_lrh_dlid(const void *lrh)
{
	return ibk__load_be16((const uint8_t *)lrh + 2);
}

/**
 * ibk_lrh_set_dlid() - Sets the LRH's destination LID
 * @lrh: the LRH to write, 8 bytes, any alignment
 * @dlid: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_lrh_set_dlid(void *lrh, uint16_t dlid)
{
	ibk__store_be16((uint8_t *)lrh + 2, dlid);
}

/**
 * ibk_lrh_pktlen() - The LRH's packet length in 4-byte words (11 bits)
 * @lrh: the LRH, 8 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint16_t ibk_lrh_pktlen(const void *lrh)
{
	return (uint16_t)(ibk__load_be16((const uint8_t *)lrh + 4) & 0x07ff);
}

/**
 * ibk_lrh_set_pktlen() - Sets the LRH's packet length in 4-byte words (11
 * bits)
 * @lrh: the LRH to write, 8 bytes, any alignment
 * @pktlen: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_lrh_set_pktlen(void *lrh, uint16_t pktlen)
{
	uint8_t *p = (uint8_t *)lrh + 4;

	ibk__store_bits(p, 0x07, (unsigned)pktlen >> 8);
	p[1] = (uint8_t)(pktlen & 0xff);
}

/**
 * ibk_lrh_slid() - The LRH's source LID
 * @lrh: the LRH, 8 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint16_t ibk_lrh_slid(const void *lrh)
{
	return ibk__load_be16((const uint8_t *)lrh + 6);
}

/**
 * ibk_lrh_set_slid() - Sets the LRH's source LID
 * @lrh: the LRH to write, 8 bytes, any alignment
 * @slid: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_lrh_set_slid(void *lrh, uint16_t slid)
{
	ibk__store_be16((uint8_t *)lrh + 6, slid);
}

/*
 * GRH, 40 bytes: IPVer(4) TClass(8) FlowLabel(20) in bytes 0-3; PayLen @4;
 * NxtHdr @6; HopLmt @7; SGID @8; DGID @24 (the IPv6 header layout).
 */

/**
 * ibk_grh_ipver() - The GRH's IP version (6 for an IBA GRH)
 * @grh: the GRH, 40 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_grh_ipver(const void *grh)
{
	return (uint8_t)(((const uint8_t *)grh)[0] >> 4);
}

/**
 * ibk_grh_set_ipver() - Sets the GRH's IP version (6 for an IBA GRH)
 * @grh: the GRH to write, 40 bytes, any alignment
 * @ipver: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_grh_set_ipver(void *grh, uint8_t ipver)
{
	ibk__store_bits((uint8_t *)grh, 0xf0, (unsigned)ipver << 4);
}

/**
 * ibk_grh_tclass() - The GRH's traffic class: low nibble of byte 0, high
 * nibble of byte 1
 * @grh: the GRH, 40 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_grh_tclass(const void *grh)
{
	const uint8_t *p = (const uint8_t *)grh;

	return (uint8_t)((p[0] & 0x0f) << 4 | p[1] >> 4);
}

/**
 * ibk_grh_set_tclass() - Sets the GRH's traffic class: low nibble of byte 0,
 * high nibble of byte 1
 * @grh: the GRH to write, 40 bytes, any alignment
 * @tclass: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_grh_set_tclass(void *grh, uint8_t tclass)
{
	uint8_t *p = (uint8_t *)grh;

	ibk__store_bits(p, 0x0f, (unsigned)tclass >> 4);
	ibk__store_bits(p + 1, 0xf0, (unsigned)tclass << 4);
}

/**
 * ibk_grh_flow_label() - The GRH's flow label (20 bits)
 * @grh: the GRH, 40 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint32_t ibk_grh_flow_label(const void *grh)
{
	return ibk__load_be32((const uint8_t *)grh) & 0x000fffffu;
}

/**
 * ibk_grh_set_flow_label() - Sets the GRH's flow label (20 bits)
 * @grh: the GRH to write, 40 bytes, any alignment
 * @flow_label: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_grh_set_flow_label(void *grh, uint32_t flow_label)
{
	uint8_t *p = (uint8_t *)grh;

	ibk__store_bits(p + 1, 0x0f, flow_label >> 16);
	ibk__store_be16(p + 2, (uint16_t)(flow_label & 0xffff));
}

/**
 * ibk_grh_paylen() - The GRH's payload length in bytes after the GRH
 * @grh: the GRH, 40 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint16_t ibk_grh_paylen(const void *grh)
{
	return ibk__load_be16((const uint8_t *)grh + 4);
}

/**
 * ibk_grh_set_paylen() - Sets the GRH's payload length in bytes after the GRH
 * @grh: the GRH to write, 40 bytes, any alignment
 * @paylen: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_grh_set_paylen(void *grh, uint16_t paylen)
{
	ibk__store_be16((uint8_t *)grh + 4, paylen);
}

/**
 * ibk_grh_nxthdr() - The GRH's next header (IBK_GRH_NXTHDR_BTH for IBA
 * transport)
 * @grh: the GRH, 40 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_grh_nxthdr(const void *grh)
{
	return ((const uint8_t *)grh)[6];
}

/**
 * ibk_grh_set_nxthdr() - Sets the GRH's next header (IBK_GRH_NXTHDR_BTH for
 * IBA transport)
 * @grh: the GRH to write, 40 bytes, any alignment
 * @nxthdr: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_grh_set_nxthdr(void *grh, uint8_t nxthdr)
{
	((uint8_t *)grh)[6] = nxthdr;
}

/**
 * ibk_grh_hoplmt() - The GRH's hop limit
 * @grh: the GRH, 40 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_grh_hoplmt(const void *grh)
{
	return ((const uint8_t *)grh)[7];
}

/**
 * ibk_grh_set_hoplmt() - Sets the GRH's hop limit
 * @grh: the GRH to write, 40 bytes, any alignment
 * @hoplmt: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_grh_set_hoplmt(void *grh, uint8_t hoplmt)
{
	((uint8_t *)grh)[7] = hoplmt;
}

/**
 * ibk_grh_get_sgid() - Source GID into *@sgid
 * @grh: the GRH, 40 bytes, any alignment
 * @sgid: receives the source GID
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_grh_get_sgid(const void *grh, struct ibk_gid *sgid)
{
	ibk__copy16(sgid->raw, (const uint8_t *)grh + 8);
}

/**
 * ibk_grh_sgid() - The GRH's source GID, by value
 * @grh: the GRH, 40 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline struct ibk_gid ibk_grh_sgid(const void *grh)
{
	const uint8_t *p = (const uint8_t *)grh + 8;
	struct ibk_gid gid = {{ IBK__BYTES16(p) }};

	return gid;
}

/**
 * ibk_grh_set_sgid() - Sets the GRH's source GID, by value
 * @grh: the GRH to write, 40 bytes, any alignment
 * @sgid: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_grh_set_sgid(void *grh, const struct ibk_gid *sgid)
{
	ibk__copy16((uint8_t *)grh + 8, sgid->raw);
}

/**
 * ibk_grh_get_dgid() - Destination GID into *@dgid
 * @grh: the GRH, 40 bytes, any alignment
 * @dgid: receives the destination GID
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_grh_get_dgid(const void *grh, struct ibk_gid *dgid)
{
	ibk__copy16(dgid->raw, (const uint8_t *)grh + 24);
}

/**
 * ibk_grh_dgid() - The GRH's destination GID, by value
 * @grh: the GRH, 40 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline struct ibk_gid ibk_grh_dgid(const void *grh)
{
	const uint8_t *p = (const uint8_t *)grh + 24;
	struct ibk_gid gid = {{ IBK__BYTES16(p) }};

	return gid;
}

/**
 * ibk_grh_set_dgid() - Sets the GRH's destination GID, by value
 * @grh: the GRH to write, 40 bytes, any alignment
 * @dgid: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_grh_set_dgid(void *grh, const struct ibk_gid *dgid)
{
	ibk__copy16((uint8_t *)grh + 24, dgid->raw);
}

/*
 * BTH, 12 bytes: OpCode @0; byte 1 SE 0x80, M 0x40, PadCnt 0x30, TVer 0x0f;
 * P_Key @2; byte 4 FECN 0x80, BECN 0x40 (rest reserved); DestQP @5-7;
 * byte 8 A 0x80 (rest reserved); PSN @9-11.
 */

/**
 * ibk_bth_opcode() - The BTH's operation code: transport service and operation
 * (e.g. 0x64 UD send)
 * @bth: the BTH, 12 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_bth_opcode(const void *bth)
{
	return ((const uint8_t *)bth)[0];
}

/**
 * ibk_bth_set_opcode() - Sets the BTH's operation code: transport service and
 * operation (e.g. 0x64 UD send)
 * @bth: the BTH to write, 12 bytes, any alignment
 * @opcode: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_bth_set_opcode(void *bth, uint8_t opcode)
{
	((uint8_t *)bth)[0] = opcode;
}

/**
 * ibk_bth_se() - The BTH's solicited event
 * @bth: the BTH, 12 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline bool ibk_bth_se(const void *bth)
{
	return (((const uint8_t *)bth)[1] & 0x80) != 0;
}

/**
 * ibk_bth_set_se() - Sets the BTH's solicited event
 * @bth: the BTH to write, 12 bytes, any alignment
 * @se: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_bth_set_se(void *bth, bool se)
{
	ibk__store_bits((uint8_t *)bth + 1, 0x80, (unsigned)se << 7);
}

/**
 * ibk_bth_mig() - The BTH's migReq: the sender's path migration state
 * @bth: the BTH, 12 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline bool ibk_bth_mig(const void *bth)
{
	return (((const uint8_t *)bth)[1] & 0x40) != 0;
}

/**
 * ibk_bth_set_mig() - Sets the BTH's migReq: the sender's path migration state
 * @bth: the BTH to write, 12 bytes, any alignment
 * @mig: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_bth_set_mig(void *bth, bool mig)
{
	ibk__store_bits((uint8_t *)bth + 1, 0x40, (unsigned)mig << 6);
}

/**
 * ibk_bth_padcnt() - The BTH's pad count: bytes (0-3) padding the payload to a
 * multiple of 4
 * @bth: the BTH, 12 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_bth_padcnt(const void *bth)
{
	return (uint8_t)((((const uint8_t *)bth)[1] >> 4) & 0x03);
}

/**
 * ibk_bth_set_padcnt() - Sets the BTH's pad count: bytes (0-3) padding the
 * payload to a multiple of 4
 * @bth: the BTH to write, 12 bytes, any alignment
 * @padcnt: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_bth_set_padcnt(void *bth, uint8_t padcnt)
{
	ibk__store_bits((uint8_t *)bth + 1, 0x30, (unsigned)padcnt << 4);
}

/**
 * ibk_bth_tver() - The BTH's transport header version
 * @bth: the BTH, 12 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_bth_tver(const void *bth)
{
	return (uint8_t)(((const uint8_t *)bth)[1] & 0x0f);
}

/**
 * ibk_bth_set_tver() - Sets the BTH's transport header version
 * @bth: the BTH to write, 12 bytes, any alignment
 * @tver: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_bth_set_tver(void *bth, uint8_t tver)
{
	ibk__store_bits((uint8_t *)bth + 1, 0x0f, tver);
}

/**
 * ibk_bth_pkey() - The BTH's P_Key, checked at the receiver against the QP's
 * (IBA 10.9)
 * @bth: the BTH, 12 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline ibk_pkey_t ibk_bth_pkey(const void *bth)
{
	return ibk__load_be16((const uint8_t *)bth + 2);
}

/**
 * ibk_bth_set_pkey() - Sets the BTH's P_Key, checked at the receiver against
 * the QP's (IBA 10.9)
 * @bth: the BTH to write, 12 bytes, any alignment
 * @pkey: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_bth_set_pkey(void *bth, ibk_pkey_t pkey)
{
	ibk__store_be16((uint8_t *)bth + 2, pkey);
}

/**
 * ibk_bth_fecn() - The BTH's forward explicit congestion notification
 * @bth: the BTH, 12 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline bool ibk_bth_fecn(const void *bth)
{
	return (((const uint8_t *)bth)[4] & 0x80) != 0;
}

/**
 * ibk_bth_set_fecn() - Sets the BTH's forward explicit congestion notification
 * @bth: the BTH to write, 12 bytes, any alignment
 * @fecn: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_bth_set_fecn(void *bth, bool fecn)
{
	ibk__store_bits((uint8_t *)bth + 4, 0x80, (unsigned)fecn << 7);
}

/**
 * ibk_bth_becn() - The BTH's backward explicit congestion notification
 * @bth: the BTH, 12 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline bool ibk_bth_becn(const void *bth)
{
	return (((const uint8_t *)bth)[4] & 0x40) != 0;
}

/**
 * ibk_bth_set_becn() - Sets the BTH's backward explicit congestion
 * notification
 * @bth: the BTH to write, 12 bytes, any alignment
 * @becn: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_bth_set_becn(void *bth, bool becn)
{
	ibk__store_bits((uint8_t *)bth + 4, 0x40, (unsigned)becn << 6);
}

/**
 * ibk_bth_dest_qp() - The BTH's destination QP number (24 bits)
 * @bth: the BTH, 12 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint32_t ibk_bth_dest_qp(const void *bth)
{
	return ibk__load_be24((const uint8_t *)bth + 5);
}

/**
 * ibk_bth_set_dest_qp() - Sets the BTH's destination QP number (24 bits)
 * @bth: the BTH to write, 12 bytes, any alignment
 * @qpn: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_bth_set_dest_qp(void *bth, uint32_t qpn)
{
	ibk__store_be24((uint8_t *)bth + 5, qpn);
}

/**
 * ibk_bth_ackreq() - The BTH's ackReq: the responder is asked to acknowledge
 * this packet
 * @bth: the BTH, 12 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline bool ibk_bth_ackreq(const void *bth)
{
	return (((const uint8_t *)bth)[8] & 0x80) != 0;
}

/**
 * ibk_bth_set_ackreq() - Sets the BTH's ackReq: the responder is asked to
 * acknowledge this packet
 * @bth: the BTH to write, 12 bytes, any alignment
 * @ackreq: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_bth_set_ackreq(void *bth, bool ackreq)
{
	ibk__store_bits((uint8_t *)bth + 8, 0x80, (unsigned)ackreq << 7);
}

/**
 * ibk_bth_psn() - The BTH's packet sequence number (24 bits)
 * @bth: the BTH, 12 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint32_t ibk_bth_psn(const void *bth)
{
	return ibk__load_be24((const uint8_t *)bth + 9);
}

/**
 * ibk_bth_set_psn() - Sets the BTH's packet sequence number (24 bits)
 * @bth: the BTH to write, 12 bytes, any alignment
 * @psn: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_bth_set_psn(void *bth, uint32_t psn)
{
	ibk__store_be24((uint8_t *)bth + 9, psn);
}

/* DETH, 8 bytes: Q_Key @0; reserved @4; SrcQP @5-7. */

/**
 * ibk_deth_qkey() - The DETH's Q_Key, checked at the receiver against the QP's
 * @deth: the DETH, 8 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline ibk_qkey_t ibk_deth_qkey(const void *deth)
{
	return ibk__load_be32((const uint8_t *)deth);
}

/**
 * ibk_deth_set_qkey() - Sets the DETH's Q_Key, checked at the receiver against
 * the QP's
 * @deth: the DETH to write, 8 bytes, any alignment
 * @qkey: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_deth_set_qkey(void *deth, ibk_qkey_t qkey)
{
	ibk__store_be32((uint8_t *)deth, qkey);
}

/**
 * ibk_deth_src_qp() - The DETH's source QP number (24 bits)
 * @deth: the DETH, 8 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint32_t ibk_deth_src_qp(const void *deth)
{
	return ibk__load_be24((const uint8_t *)deth + 5);
}

/**
 * ibk_deth_set_src_qp() - Sets the DETH's source QP number (24 bits)
 * @deth: the DETH to write, 8 bytes, any alignment
 * @qpn: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_deth_set_src_qp(void *deth, uint32_t qpn)
{
	ibk__store_be24((uint8_t *)deth + 5, qpn);
}

/*
 * Which opcodes carry which extension header (IBA 9.2 table 38, as
 * Linux rxe_opcode.c and Wireshark's dissector list them): one bit per
 * operation, one mask per transport, RC, UC, RD and UD in that order; CNP
 * and the vendor ranges carry none. A RETH or AtomicETH follows the BTH
 * directly in RC and UC packets; in RD packets it follows the RDETH and
 * DETH, and in FLUSH the 4-byte FETH.
 */
#define IBK__OPBIT(op)	(1u << (op))
#define IBK__OPS_RETH_RC (IBK__OPBIT(IBK_OP_RDMA_WRITE_FIRST) | \
	IBK__OPBIT(IBK_OP_RDMA_WRITE_ONLY) | \
	IBK__OPBIT(IBK_OP_RDMA_WRITE_ONLY_IMM) | \
	IBK__OPBIT(IBK_OP_RDMA_READ_REQUEST))
#define IBK__OPS_ATOMICETH (IBK__OPBIT(IBK_OP_COMPARE_SWAP) | \
	IBK__OPBIT(IBK_OP_FETCH_ADD))
#define IBK__OPS_AETH (IBK__OPBIT(IBK_OP_RDMA_READ_RESPONSE_FIRST) | \
	IBK__OPBIT(IBK_OP_RDMA_READ_RESPONSE_LAST) | \
	IBK__OPBIT(IBK_OP_RDMA_READ_RESPONSE_ONLY) | \
	IBK__OPBIT(IBK_OP_ACKNOWLEDGE) | \
	IBK__OPBIT(IBK_OP_ATOMIC_ACKNOWLEDGE))
#define IBK__OPS_IMMDT (IBK__OPBIT(IBK_OP_SEND_LAST_IMM) | \
	IBK__OPBIT(IBK_OP_SEND_ONLY_IMM) | \
	IBK__OPBIT(IBK_OP_RDMA_WRITE_LAST_IMM) | \
	IBK__OPBIT(IBK_OP_RDMA_WRITE_ONLY_IMM))

/* True if bit (opcode & 31) of ops[transport] is set, for RC, UC, RD, UD. */
static inline bool ibk__opcode_in(uint8_t opcode, const uint32_t ops[4])
{
	unsigned transport = (unsigned)opcode >> 5;

	return transport < 4 &&
	       ((ops[transport & 3] >> (opcode & IBK_OPCODE_OP_MASK)) & 1u);
}

/**
 * ibk_opcode_has_reth() - Whether @opcode carries a RETH
 * @opcode: a BTH opcode (transport in bits 5-7, operation in bits 0-4)
 *
 * Context: Any context: touches only its arguments.
 * Return: true if @opcode carries a RETH: RDMA WRITE FIRST and ONLY (with or
 * without immediate) of RC, UC and RD, RDMA READ request of RC and RD, and RC
 * FLUSH (after its FETH) and ATOMIC WRITE.
 */
static inline bool ibk_opcode_has_reth(uint8_t opcode)
{
	static const uint32_t ops[4] = {
		IBK__OPS_RETH_RC | IBK__OPBIT(IBK_OP_FLUSH) |
		IBK__OPBIT(IBK_OP_ATOMIC_WRITE),
		IBK__OPS_RETH_RC & ~IBK__OPBIT(IBK_OP_RDMA_READ_REQUEST),
		IBK__OPS_RETH_RC, 0,
	};

	return ibk__opcode_in(opcode, ops);
}

/**
 * ibk_opcode_has_atomiceth() - Whether @opcode carries an AtomicETH
 * @opcode: a BTH opcode (transport in bits 5-7, operation in bits 0-4)
 *
 * Context: Any context: touches only its arguments.
 * Return: true if @opcode carries an AtomicETH: COMPARE SWAP and FETCH ADD of
 * RC and RD.
 */
static inline bool ibk_opcode_has_atomiceth(uint8_t opcode)
{
	static const uint32_t ops[4] = {
		IBK__OPS_ATOMICETH, 0, IBK__OPS_ATOMICETH, 0,
	};

	return ibk__opcode_in(opcode, ops);
}

/**
 * ibk_opcode_has_ieth() - Whether @opcode carries an IETH
 * @opcode: a BTH opcode (transport in bits 5-7, operation in bits 0-4)
 *
 * Context: Any context: touches only its arguments.
 * Return: true if @opcode carries an IETH: RC SEND LAST and SEND ONLY with
 * invalidate.
 */
static inline bool ibk_opcode_has_ieth(uint8_t opcode)
{
	static const uint32_t ops[4] = {
		IBK__OPBIT(IBK_OP_SEND_LAST_INV) |
		IBK__OPBIT(IBK_OP_SEND_ONLY_INV), 0, 0, 0,
	};

	return ibk__opcode_in(opcode, ops);
}

/**
 * ibk_opcode_has_aeth() - Whether @opcode carries an AETH
 * @opcode: a BTH opcode (transport in bits 5-7, operation in bits 0-4)
 *
 * Context: Any context: touches only its arguments.
 * Return: true if @opcode carries an AETH: RC and RD acknowledgements and the
 * first, last and only RDMA READ responses (the middle one has none).
 */
static inline bool ibk_opcode_has_aeth(uint8_t opcode)
{
	static const uint32_t ops[4] = {
		IBK__OPS_AETH, 0, IBK__OPS_AETH, 0,
	};

	return ibk__opcode_in(opcode, ops);
}

/**
 * ibk_opcode_has_immdt() - Whether @opcode carries immediate data
 * @opcode: a BTH opcode (transport in bits 5-7, operation in bits 0-4)
 *
 * Context: Any context: touches only its arguments.
 * Return: true if @opcode carries immediate data: the SEND and RDMA WRITE LAST
 * and ONLY "with immediate" of RC, UC and RD, and UD SEND ONLY with immediate.
 */
static inline bool ibk_opcode_has_immdt(uint8_t opcode)
{
	static const uint32_t ops[4] = {
		IBK__OPS_IMMDT, IBK__OPS_IMMDT, IBK__OPS_IMMDT,
		IBK__OPBIT(IBK_OP_SEND_ONLY_IMM),
	};

	return ibk__opcode_in(opcode, ops);
}

/**
 * ibk_opcode_is_ud_send() - Whether @opcode is a UD SEND ONLY, with or without
 * immediate
 * @opcode: a BTH opcode (transport in bits 5-7, operation in bits 0-4)
 *
 * Context: Any context: touches only its arguments.
 * Return: true if @opcode is a UD SEND ONLY, with or without immediate: the
 * only UD opcodes, and the ones whose BTH a DETH follows (IBA 9.3; RD's DETH
 * comes after an RDETH, and RD is not modelled here).
 */
static inline bool ibk_opcode_is_ud_send(uint8_t opcode)
{
	return (opcode & 0xfe) == IBK_OPCODE_UD_SEND_ONLY;
}

/* RETH, 16 bytes: virtual address @0-7; R_Key @8-11; DMA length @12-15. */

/**
 * ibk_reth_va() - The RETH's remote virtual address an RDMA READ or WRITE
 * starts at
 * @reth: the RETH, IBK_RETH_LEN bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint64_t ibk_reth_va(const void *reth)
{
	return ibk__load_be64((const uint8_t *)reth);
}

/**
 * ibk_reth_set_va() - Sets the RETH's remote virtual address an RDMA READ or
 * WRITE starts at
 * @reth: the RETH to write, IBK_RETH_LEN bytes, any alignment
 * @va: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_reth_set_va(void *reth, uint64_t va)
{
	ibk__store_be64((uint8_t *)reth, va);
}

/**
 * ibk_reth_rkey() - The RETH's R_Key naming the remote memory region or window
 * @reth: the RETH, IBK_RETH_LEN bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint32_t ibk_reth_rkey(const void *reth)
{
	return ibk__load_be32((const uint8_t *)reth + 8);
}

/**
 * ibk_reth_set_rkey() - Sets the RETH's R_Key naming the remote memory region
 * or window
 * @reth: the RETH to write, IBK_RETH_LEN bytes, any alignment
 * @rkey: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_reth_set_rkey(void *reth, uint32_t rkey)
{
	ibk__store_be32((uint8_t *)reth + 8, rkey);
}

/**
 * ibk_reth_dma_len() - The RETH's length in bytes of the whole RDMA READ or
 * WRITE
 * @reth: the RETH, IBK_RETH_LEN bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint32_t ibk_reth_dma_len(const void *reth)
{
	return ibk__load_be32((const uint8_t *)reth + 12);
}

/**
 * ibk_reth_set_dma_len() - Sets the RETH's length in bytes of the whole RDMA
 * READ or WRITE
 * @reth: the RETH to write, IBK_RETH_LEN bytes, any alignment
 * @len: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_reth_set_dma_len(void *reth, uint32_t len)
{
	ibk__store_be32((uint8_t *)reth + 12, len);
}

/*
 * AtomicETH, 28 bytes: virtual address @0-7; R_Key @8-11; swap (or add)
 * data @12-19; compare data @20-27. VA and R_Key sit where the RETH has
 * them.
 */

/**
 * ibk_atomiceth_va() - The AtomicETH's remote virtual address of the 8-byte
 * atomic operand
 * @atm: the AtomicETH, IBK_ATOMICETH_LEN bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint64_t ibk_atomiceth_va(const void *atm)
{
	return ibk__load_be64((const uint8_t *)atm);
}

/**
 * ibk_atomiceth_set_va() - Sets the AtomicETH's remote virtual address of the
 * 8-byte atomic operand
 * @atm: the AtomicETH to write, IBK_ATOMICETH_LEN bytes, any alignment
 * @va: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_atomiceth_set_va(void *atm, uint64_t va)
{
	ibk__store_be64((uint8_t *)atm, va);
}

/**
 * ibk_atomiceth_rkey() - The AtomicETH's R_Key naming the remote memory region
 * or window
 * @atm: the AtomicETH, IBK_ATOMICETH_LEN bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint32_t ibk_atomiceth_rkey(const void *atm)
{
	return ibk__load_be32((const uint8_t *)atm + 8);
}

/**
 * ibk_atomiceth_set_rkey() - Sets the AtomicETH's R_Key naming the remote
 * memory region or window
 * @atm: the AtomicETH to write, IBK_ATOMICETH_LEN bytes, any alignment
 * @rkey: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_atomiceth_set_rkey(void *atm, uint32_t rkey)
{
	ibk__store_be32((uint8_t *)atm + 8, rkey);
}

/**
 * ibk_atomiceth_swap_add() - The AtomicETH's COMPARE SWAP's swap value, FETCH
 * ADD's addend
 * @atm: the AtomicETH, IBK_ATOMICETH_LEN bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint64_t ibk_atomiceth_swap_add(const void *atm)
{
	return ibk__load_be64((const uint8_t *)atm + 12);
}

/**
 * ibk_atomiceth_set_swap_add() - Sets the AtomicETH's COMPARE SWAP's swap
 * value, FETCH ADD's addend
 * @atm: the AtomicETH to write, IBK_ATOMICETH_LEN bytes, any alignment
 * @v: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_atomiceth_set_swap_add(void *atm, uint64_t v)
{
	ibk__store_be64((uint8_t *)atm + 12, v);
}

/**
 * ibk_atomiceth_compare() - The AtomicETH's COMPARE SWAP's compare value
 * @atm: the AtomicETH, IBK_ATOMICETH_LEN bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint64_t ibk_atomiceth_compare(const void *atm)
{
	return ibk__load_be64((const uint8_t *)atm + 20);
}

/**
 * ibk_atomiceth_set_compare() - Sets the AtomicETH's COMPARE SWAP's compare
 * value
 * @atm: the AtomicETH to write, IBK_ATOMICETH_LEN bytes, any alignment
 * @v: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_atomiceth_set_compare(void *atm, uint64_t v)
{
	ibk__store_be64((uint8_t *)atm + 20, v);
}

/**
 * ibk_ieth_rkey() - The IETH's R_Key, the key a SEND with invalidate
 * invalidates
 * @ieth: the IETH, IBK_IETH_LEN bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint32_t ibk_ieth_rkey(const void *ieth)
{
	return ibk__load_be32((const uint8_t *)ieth);
}

/**
 * ibk_ieth_set_rkey() - Sets the IETH's R_Key, the key a SEND with invalidate
 * invalidates
 * @ieth: the IETH to write, IBK_IETH_LEN bytes, any alignment
 * @rkey: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_ieth_set_rkey(void *ieth, uint32_t rkey)
{
	ibk__store_be32((uint8_t *)ieth, rkey);
}

/* AETH, 4 bytes: syndrome @0 (see "Memory keys" for its codes); MSN @1-3. */

/**
 * ibk_aeth_syndrome() - The AETH's syndrome: ACK, RNR NAK or NAK and its code
 * @aeth: the AETH, IBK_AETH_LEN bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_aeth_syndrome(const void *aeth)
{
	return ((const uint8_t *)aeth)[0];
}

/**
 * ibk_aeth_set_syndrome() - Sets the AETH's syndrome: ACK, RNR NAK or NAK and
 * its code
 * @aeth: the AETH to write, IBK_AETH_LEN bytes, any alignment
 * @syndrome: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_aeth_set_syndrome(void *aeth, uint8_t syndrome)
{
	((uint8_t *)aeth)[0] = syndrome;
}

/**
 * ibk_aeth_msn() - The AETH's message sequence number (24 bits): the
 * responder's count of messages
 * @aeth: the AETH, IBK_AETH_LEN bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint32_t ibk_aeth_msn(const void *aeth)
{
	return ibk__load_be24((const uint8_t *)aeth + 1);
}

/**
 * ibk_aeth_set_msn() - Sets the AETH's message sequence number (24 bits): the
 * responder's count of messages
 * @aeth: the AETH to write, IBK_AETH_LEN bytes, any alignment
 * @msn: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_aeth_set_msn(void *aeth, uint32_t msn)
{
	ibk__store_be24((uint8_t *)aeth + 1, msn);
}

/*
 * AETH syndrome (IBA 9.7.5; rxe_hdr.h): bit 7 reserved, bits 6-5 the
 * type, bits 4-0 its value: an ACK's credit count (0x1f unlimited), an
 * RNR NAK's timer, a NAK's code.
 */
#define IBK_AETH_TYPE_MASK		0xe0u	/* reserved bit included, as rxe */
#define IBK_AETH_VALUE_MASK		0x1fu
#define IBK_AETH_ACK			0x00u
#define IBK_AETH_RNR_NAK		0x20u
#define IBK_AETH_NAK			0x60u
#define IBK_AETH_ACK_UNLIMITED		0x1fu	/* ACK, no credit limit */
#define IBK_NAK_PSN_SEQUENCE		0x60u	/* PSN sequence error */
#define IBK_NAK_INVALID_REQUEST		0x61u
#define IBK_NAK_REMOTE_ACCESS		0x62u
#define IBK_NAK_REMOTE_OPERATIONAL	0x63u
#define IBK_NAK_INVALID_RD_REQUEST	0x64u

/**
 * ibk_aeth_is_ack() - True for an ACK syndrome (type 0)
 * @syndrome: an AETH syndrome byte
 *
 * Context: Any context: touches only its arguments.
 * Return: true for an ACK syndrome (type 0).
 */
static inline bool ibk_aeth_is_ack(uint8_t syndrome)
{
	return (syndrome & IBK_AETH_TYPE_MASK) == IBK_AETH_ACK;
}

/**
 * ibk_aeth_is_rnr_nak() - True for an RNR NAK (type 1): the responder had no
 * receive WQE
 * @syndrome: an AETH syndrome byte
 *
 * Context: Any context: touches only its arguments.
 * Return: true for an RNR NAK (type 1): the responder had no receive WQE.
 */
static inline bool ibk_aeth_is_rnr_nak(uint8_t syndrome)
{
	return (syndrome & IBK_AETH_TYPE_MASK) == IBK_AETH_RNR_NAK;
}

/**
 * ibk_aeth_is_nak() - True for a NAK (type 3); ibk_aeth_value() is its code
 * @syndrome: an AETH syndrome byte
 *
 * Context: Any context: touches only its arguments.
 * Return: true for a NAK (type 3); ibk_aeth_value() is its code.
 */
static inline bool ibk_aeth_is_nak(uint8_t syndrome)
{
	return (syndrome & IBK_AETH_TYPE_MASK) == IBK_AETH_NAK;
}

/**
 * ibk_aeth_value() - Bits 4-0: credit count, RNR timer or NAK code
 * @syndrome: an AETH syndrome byte
 *
 * Context: Any context: touches only its arguments.
 * Return: the syndrome's low 5 bits: a credit count, an RNR timer code or a
 * NAK code, as the type says.
 */
static inline uint8_t ibk_aeth_value(uint8_t syndrome)
{
	return (uint8_t)(syndrome & IBK_AETH_VALUE_MASK);
}

/**
 * struct ibk_pkt_headers - The headers of one received packet, located by
 * ibk_pkt_locate()
 * @lrh: the LRH, the packet's first byte
 * @grh: NULL unless LNH says a GRH follows
 * @bth: the BTH
 * @deth: NULL unless the opcode is a UD SEND
 */
struct ibk_pkt_headers {
	const uint8_t *lrh;
	const uint8_t *grh;
	const uint8_t *bth;
	const uint8_t *deth;
};

/**
 * ibk_pkt_locate() - Finds the headers of a received packet
 * @pkt: the packet as received: LRH first, up to the ICRC
 * @len: @pkt's length in bytes
 * @headers: receives the packet's headers; unchanged on error
 *
 * Finds the headers of the packet at @pkt, @len bytes from its LRH: a GRH when
 * the LRH's LNH is IBA global (its NxtHdr must be 0x1b), the BTH, and the DETH
 * of a UD SEND.
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_OK; IBK_EINVAL for a NULL pointer, a raw packet (LNH 0 or 1, no
 * IBA transport), another NxtHdr, or a @len too short for the headers it
 * names.
 */
static inline int ibk_pkt_locate(const void *pkt, size_t len,
				 struct ibk_pkt_headers *headers)
{
	const uint8_t *p = (const uint8_t *)pkt;
	size_t off = IBK_LRH_LEN;
	uint8_t lnh;

	if (!p || !headers || len < IBK_LRH_LEN)
		return IBK_EINVAL;
	lnh = ibk_lrh_lnh(p);
	if (lnh != IBK_LNH_BTH && lnh != IBK_LNH_GRH)
		return IBK_EINVAL;
	headers->lrh = p;
	headers->grh = NULL;
	headers->deth = NULL;
	if (lnh == IBK_LNH_GRH) {
		if (len < off + IBK_GRH_LEN ||
		    ibk_grh_nxthdr(p + off) != IBK_GRH_NXTHDR_BTH)
			return IBK_EINVAL;
		headers->grh = p + off;
		off += IBK_GRH_LEN;
	}
	if (len < off + IBK_BTH_LEN)
		return IBK_EINVAL;
	headers->bth = p + off;
	off += IBK_BTH_LEN;
	if (ibk_opcode_is_ud_send(ibk_bth_opcode(headers->bth))) {
		if (len < off + IBK_DETH_LEN)
			return IBK_EINVAL;
		headers->deth = p + off;
	}
	return IBK_OK;
}

/* ------------------------------------------------------------------------
 * Per-packet checks (no table: the caller resolved the QP's P_Key)
 *
 * API:
 *	ibk_rx_verdict_name(v)
 *	ibk_rx_check_header(type, bth)
 *	ibk_rx_check(qp, bth, deth)
 *	ibk_tx_fill_keys(bth, deth, qp_pkey, wr_qkey, qp_qkey)
 *	ibk_rx_ud_burst(qp_pkey, qp_qkey, hdrs, n, verdicts)
 * ------------------------------------------------------------------------ */

/**
 * enum ibk_qp_type - The QP types the receive checks tell apart
 * @IBK_QPT_SMI: QP0: no P_Key or Q_Key check
 * @IBK_QPT_GSI: QP1: P_Key against the whole table (ib_tables.h)
 * @IBK_QPT_RC: reliable connected
 * @IBK_QPT_UC: unreliable connected
 * @IBK_QPT_UD: unreliable datagram
 */
enum ibk_qp_type {
	IBK_QPT_SMI,
	IBK_QPT_GSI,
	IBK_QPT_RC,
	IBK_QPT_UC,
	IBK_QPT_UD,
};

/**
 * struct ibk_qp_keys - What a receive check needs of a QP context
 * @type: the QP's type
 * @pkey: value at the QP's P_Key index (resolved by caller)
 * @pkey_index: used by ib_tables.h's checks
 * @qkey: UD/GSI only
 */
struct ibk_qp_keys {
	enum ibk_qp_type type;
	ibk_pkey_t pkey;
	uint16_t   pkey_index;
	ibk_qkey_t qkey;
};

/**
 * enum ibk_rx_verdict - Only IBK_RX_DROP_PKEY and IBK_RX_DROP_QKEY are key
 * violations to count
 * @IBK_RX_ACCEPT: every check passed
 * @IBK_RX_DROP_PKEY: P_Key violation: count it (IBA 10.9)
 * @IBK_RX_DROP_QKEY: Q_Key violation: count it
 * @IBK_RX_DROP_NEED_TABLE: QP1 matches the port's whole table: ib_tables.h
 * @IBK_RX_DROP_PORT: port not ARMED/ACTIVE or table stale (ib_tables.h)
 * @IBK_RX_DROP_PKEY_INDEX: QP's P_Key index beyond the table (ib_tables.h)
 * @IBK_RX_DROP_MALFORMED: NULL header, unknown QP type
 * @IBK_RX_DROP_TVER: BTH TVer not 0
 * @IBK_RX_DROP_OPCODE: opcode's transport or operation not the QP's
 * @IBK_RX_DROP_MAD_VL: QP0 not on VL15, or QP1 on VL15
 * @IBK_RX_DROP_MAD_LENGTH: QP0/QP1 payload not exactly 256 bytes
 * @IBK_RX_DROP_PERMISSIVE: permissive LID not to QP0 as a DR SMP
 * @IBK_RX_DROP_MAD_IMM: SEND with immediate to QP0 or QP1
 */
enum ibk_rx_verdict {
	/* ibk_rx_ud_burst() computes these three values arithmetically */
	IBK_RX_ACCEPT = 0,
	IBK_RX_DROP_PKEY = 1,
	IBK_RX_DROP_QKEY = 2,
	IBK_RX_DROP_NEED_TABLE,
	IBK_RX_DROP_PORT,
	IBK_RX_DROP_PKEY_INDEX,
	IBK_RX_DROP_MALFORMED,
	IBK_RX_DROP_TVER,
	IBK_RX_DROP_OPCODE,
	/* management datagram rules, from the LRH (ibk_port_rx_packet()) */
	IBK_RX_DROP_MAD_VL,
	IBK_RX_DROP_MAD_LENGTH,
	IBK_RX_DROP_PERMISSIVE,
	IBK_RX_DROP_MAD_IMM,
};

/**
 * ibk_rx_verdict_name() - Constant name of a verdict; "unknown" for a value
 * outside the enum
 * @v: a verdict
 *
 * Context: Any context: touches only its arguments.
 * Return: constant text, never NULL.
 */
static inline const char *ibk_rx_verdict_name(enum ibk_rx_verdict v)
{
	switch (v) {
	case IBK_RX_ACCEPT:		return "accept";
	case IBK_RX_DROP_PKEY:		return "drop-pkey";
	case IBK_RX_DROP_QKEY:		return "drop-qkey";
	case IBK_RX_DROP_NEED_TABLE:	return "drop-need-table";
	case IBK_RX_DROP_PORT:		return "drop-port";
	case IBK_RX_DROP_PKEY_INDEX:	return "drop-pkey-index";
	case IBK_RX_DROP_MALFORMED:	return "drop-malformed";
	case IBK_RX_DROP_TVER:		return "drop-tver";
	case IBK_RX_DROP_OPCODE:	return "drop-opcode";
	case IBK_RX_DROP_MAD_VL:	return "drop-mad-vl";
	case IBK_RX_DROP_MAD_LENGTH:	return "drop-mad-length";
	case IBK_RX_DROP_PERMISSIVE:	return "drop-permissive";
	case IBK_RX_DROP_MAD_IMM:	return "drop-mad-imm";
	default:			return "unknown";
	}
}

/* True for a QP type that receives datagrams: SMI and GSI are UD QPs. */
static inline bool ibk__qp_is_datagram(enum ibk_qp_type type)
{
	return type == IBK_QPT_UD || type == IBK_QPT_SMI || type == IBK_QPT_GSI;
}

/**
 * ibk_rx_check_header() - The BTH checks a receiver makes before any key
 * @type: the QP type
 * @bth: the BTH, 12 bytes, any alignment
 *
 * The checks a receiver makes on the BTH before any key (IBA 9.2, 9.6; the
 * Linux soft-RoCE driver's hdr_check() and check_type_state()), for a QP of a
 * type in enum ibk_qp_type.
 *
 * Else IBK_RX_ACCEPT. RC and UC opcodes are checked for their transport only.
 * Neither drop is a key violation.
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_RX_DROP_TVER unless TVer is 0; IBK_RX_DROP_OPCODE unless the
 * opcode's transport is the QP's (RC, UC; UD for UD, SMI and GSI QPs) and, for
 * those datagram QPs, the opcode is a SEND only, with or without immediate:
 * the only UD opcodes, and the ones that carry a DETH.
 */
static inline enum ibk_rx_verdict ibk_rx_check_header(enum ibk_qp_type type,
						      const void *bth)
{
	uint8_t opcode = ibk_bth_opcode(bth);

	if (ibk_bth_tver(bth) != IBK_BTH_TVER)
		return IBK_RX_DROP_TVER;
	if (ibk__qp_is_datagram(type))
		return ibk_opcode_is_ud_send(opcode) ?
		       IBK_RX_ACCEPT : IBK_RX_DROP_OPCODE;
	if (type == IBK_QPT_RC)
		return (opcode & IBK_OPCODE_TRANSPORT_MASK) ==
		       IBK_TRANSPORT_RC ? IBK_RX_ACCEPT : IBK_RX_DROP_OPCODE;
	return (opcode & IBK_OPCODE_TRANSPORT_MASK) == IBK_TRANSPORT_UC ?
	       IBK_RX_ACCEPT : IBK_RX_DROP_OPCODE;
}

static inline bool ibk__qp_type_valid(enum ibk_qp_type type)
{
	/* unsigned: bare-metal ARM gives enums the smallest unsigned type */
	return (unsigned)type <= (unsigned)IBK_QPT_UD;
}

/**
 * ibk_rx_check() - The receive verdict for one packet to a QP, without a table
 * @qp: the receiving QP's keys and type
 * @bth: the BTH, 12 bytes, any alignment
 * @deth: the DETH after it, 8 bytes, any alignment; read only for a UD SEND
 *        to a UD QP
 *
 * The checks run in the order a receiver makes them (rxe hdr_check()).
 * Drops are silent; the caller counts the key violations; the QP's state is
 * left alone.
 *
 * Context: Any context: touches only its arguments.
 * Return: the first verdict that applies:
 *
 *  - IBK_RX_DROP_MALFORMED if @qp or @bth is NULL or the QP type is not
 *    in enum ibk_qp_type;
 *  - the header checks of ibk_rx_check_header(): TVer, then the opcode;
 *  - SMI (QP0): IBK_RX_ACCEPT; QP0 checks neither key;
 *  - GSI (QP1): IBK_RX_DROP_NEED_TABLE; QP1 accepts a P_Key matching any
 *    entry of the port's table, which only ib_tables.h can see;
 *  - UD: IBK_RX_DROP_MALFORMED if @deth is NULL;
 *  - RC, UC, UD: IBK_RX_DROP_PKEY unless ibk_pkey_match(QP, packet); an
 *    invalid QP key (an empty table entry) matches nothing;
 *  - UD: IBK_RX_DROP_QKEY unless the Q_Keys are equal;
 *  - else IBK_RX_ACCEPT.
 */
static inline enum ibk_rx_verdict ibk_rx_check(const struct ibk_qp_keys *qp,
					       const void *bth,
					       const void *deth)
{
	enum ibk_rx_verdict v;

	if (!qp || !bth || !ibk__qp_type_valid(qp->type))
		return IBK_RX_DROP_MALFORMED;
	v = ibk_rx_check_header(qp->type, bth);
	if (v != IBK_RX_ACCEPT || qp->type == IBK_QPT_SMI)
		return v;
	if (qp->type == IBK_QPT_GSI)
		return IBK_RX_DROP_NEED_TABLE;
	if (qp->type == IBK_QPT_UD && !deth)
		return IBK_RX_DROP_MALFORMED;
	if (!ibk_pkey_match(qp->pkey, ibk_bth_pkey(bth)))
		return IBK_RX_DROP_PKEY;
	if (qp->type != IBK_QPT_UD)
		return IBK_RX_ACCEPT;
	return ibk_qkey_match(ibk_deth_qkey(deth), qp->qkey) ?
	       IBK_RX_ACCEPT : IBK_RX_DROP_QKEY;
}

/**
 * ibk_tx_fill_keys() - Send side: writes the P_Key and Q_Key into the headers
 * @bth: the BTH to write, 12 bytes, any alignment
 * @deth: the DETH to write, 8 bytes, any alignment
 * @qp_pkey: the QP's P_Key
 * @wr_qkey: the Q_Key of the send work request
 * @qp_qkey: the QP's own Q_Key
 *
 * Send side: writes the QP's P_Key into @bth and, if @deth is not NULL, the
 * Q_Key chosen by ibk_qkey_select(@wr_qkey, @qp_qkey) into @deth: a work
 * request Q_Key with its MSB set sends the QP context's Q_Key instead.
 *
 * @bth must not be NULL.
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_tx_fill_keys(void *bth, void *deth, ibk_pkey_t qp_pkey,
				    ibk_qkey_t wr_qkey, ibk_qkey_t qp_qkey)
{
	ibk_bth_set_pkey(bth, qp_pkey);
	if (deth)
		ibk_deth_set_qkey(deth, ibk_qkey_select(wr_qkey, qp_qkey));
}

/*
 * The number of zero bytes in @v[0..n): whole chunks of 16 with a fixed
 * trip count and a byte-sized sum, so that gcc's -O2 and clang vectorise.
 */
static inline size_t ibk__count_zero(const uint8_t *v, size_t n)
{
	/* The chunks end at n rounded down to 16, not where n - i < 16: with
	 * that bound GCC 12 -O2 sees no end to the tail loop after a constant
	 * n and fails -Werror=aggressive-loop-optimizations. */
	size_t whole = n & ~(size_t)15;
	size_t count = 0, i = 0, j;

	for (; i < whole; i += 16) {
		uint8_t chunk_count = 0;

		for (j = 0; j < 16; j++)
			chunk_count = (uint8_t)(chunk_count + (v[i + j] == 0));
		count += chunk_count;
	}
	for (; i < n; i++)
		count += v[i] == 0;
	return count;
}

/*
 * A UD QP's keys as ibk_rx_ud_burst() compares them, in wire byte order.
 * BTH bytes 0-3 taken as one little-endian word are the opcode, then SE
 * M PadCnt TVer, then the P_Key as it sits on the wire: head_mask takes
 * TVer, the opcode but its low bit (0x64 and 0x65 both pass) and the
 * P_Key filter's bits, head_want what they must hold. An invalid QP key
 * sets the opcode's low bit in head_want, outside head_mask, so that no
 * packet passes (the verdict stays a P_Key drop: the second pass only
 * tells packets with a bad opcode or TVer apart). qkey is the DETH Q_Key
 * word as loaded the same way.
 */
struct ibk__rx_ud_keys {
	uint32_t head_mask;
	uint32_t head_want;
	uint32_t qkey;
};

/* The opcode and TVer bits of head_mask: a packet failing on these is no
 * UD SEND or has a TVer, not a P_Key violation. */
#define IBK__RX_UD_HEADER_BITS	0x0ffeu

static inline struct ibk__rx_ud_keys
ibk__rx_ud_keys_make(ibk_pkey_t qp_pkey, ibk_qkey_t qp_qkey)
{
	struct ibk__pkey_filter f = ibk__pkey_filter_valid(qp_pkey);
	struct ibk__rx_ud_keys k;

	k.head_mask = IBK__RX_UD_HEADER_BITS |
		      (uint32_t)ibk__swap16(f.mask) << 16;
	k.head_want = IBK_OPCODE_UD_SEND_ONLY |
		      (uint32_t)ibk__swap16(f.want) << 16 |
		      !ibk_pkey_is_valid(qp_pkey);
	k.qkey = ibk__swap32(qp_qkey);
	return k;
}

/*
 * The verdicts of packets @from <= i < @to by two masked compares, with
 * no byte swap and no branch: 0 accept; 1 header or P_Key (wins over the
 * Q_Key); 2 Q_Key. Returns the OR of every packet's head word that missed
 * @k, whose IBK__RX_UD_HEADER_BITS say whether a second pass must tell
 * header drops from P_Key drops.
 */
static inline uint32_t ibk__rx_ud_range(struct ibk__rx_ud_keys k,
					const void *const *hdrs, size_t from,
					size_t to, uint8_t *verdicts)
{
	uint32_t heads = 0;
	size_t i;

	for (i = from; i < to; i++) {
		const uint8_t *bth = (const uint8_t *)hdrs[i];
		uint32_t miss = (ibk__load_le32(bth) & k.head_mask) ^
				k.head_want;
		unsigned first_bad = miss != 0;		/* header or P_Key */
		unsigned qkey_bad =
			ibk__load_le32(bth + IBK_BTH_LEN) != k.qkey;

		verdicts[i] = (uint8_t)(first_bad | (qkey_bad & ~first_bad) << 1);
		heads |= miss;
	}
	return heads;
}

/* The second pass, for a burst holding a packet that is no UD SEND or
 * has a TVer: that packet's verdict, TVer first (ibk_rx_check()). */
static inline void ibk__rx_ud_header_drops(const void *const *hdrs, size_t n,
					   uint8_t *verdicts)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned head = ibk__load_le16((const uint8_t *)hdrs[i]);

		if ((head & IBK__RX_UD_HEADER_BITS) != IBK_OPCODE_UD_SEND_ONLY)
			verdicts[i] = (uint8_t)((head & 0x0f00u) ?
						IBK_RX_DROP_TVER :
						IBK_RX_DROP_OPCODE);
	}
}

/*
 * ibk_rx_ud_burst() without vector instructions: the first pass
 * (ibk__rx_ud_range()), the second where a packet needs it, and the
 * accepted packets counted afterwards in a vectorised pass.
 */
static inline size_t ibk__rx_ud_burst_scalar(ibk_pkey_t qp_pkey,
					     ibk_qkey_t qp_qkey,
					     const void *const *hdrs, size_t n,
					     uint8_t *verdicts)
{
	struct ibk__rx_ud_keys k = ibk__rx_ud_keys_make(qp_pkey, qp_qkey);

	if (ibk__rx_ud_range(k, hdrs, 0, n, verdicts) & IBK__RX_UD_HEADER_BITS)
		ibk__rx_ud_header_drops(hdrs, n, verdicts);
	return ibk__count_zero(verdicts, n);
}

#if defined(IBK__SIMD)
/*
 * ibk_rx_ud_burst() on the vector path: whole chunks of 16 packets by
 * ibk__vec_rx_words() (the same two compares, on four or eight packets
 * per instruction), the rest by ibk__rx_ud_range(), then the second pass
 * as in the scalar path.
 */
static inline size_t ibk__rx_ud_burst_vector(ibk_pkey_t qp_pkey,
					     ibk_qkey_t qp_qkey,
					     const void *const *hdrs, size_t n,
					     uint8_t *verdicts)
{
	struct ibk__rx_ud_keys k = ibk__rx_ud_keys_make(qp_pkey, qp_qkey);
	size_t whole = n & ~(size_t)15;
	bool odd_header;
	size_t accepted = ibk__vec_rx_words(hdrs, whole, k.head_mask,
					    k.head_want, k.qkey, verdicts,
					    &odd_header);

	if (odd_header | ((ibk__rx_ud_range(k, hdrs, whole, n, verdicts) &
			   IBK__RX_UD_HEADER_BITS) != 0))
		ibk__rx_ud_header_drops(hdrs, n, verdicts);
	if (whole < n)
		accepted += ibk__count_zero(verdicts + whole, n - whole);
	return accepted;
}
#endif

/**
 * ibk_rx_ud_burst() - The receive checks of ibk_rx_check() for a burst of
 * packets to one UD QP
 * @qp_pkey: the QP's P_Key
 * @qp_qkey: the QP's Q_Key
 * @hdrs: @n pointers, each to a BTH and the 8 bytes after it (its DETH, for a
 *        UD SEND): IBK_BTH_LEN + IBK_DETH_LEN readable bytes at any
 *        alignment, the last 8 deciding nothing unless the opcode carries a
 *        DETH
 * @n: how many packets
 * @verdicts: receives @n verdicts: IBK_RX_ACCEPT, IBK_RX_DROP_PKEY,
 *            IBK_RX_DROP_QKEY, IBK_RX_DROP_OPCODE or IBK_RX_DROP_TVER, the
 *            first check failing in the order of ibk_rx_check()
 *
 * The QP's keys are prepared once, in wire byte order, and the first four
 * BTH bytes (opcode, TVer, P_Key) are checked with one masked compare, the
 * DETH's Q_Key with another: no byte swap, and the verdict computed
 * arithmetically, leaving no branch in the loop body. A packet that fails
 * the first compare on its opcode or TVer rather than its P_Key (rare: no
 * UD QP is sent anything else) is told apart in a second pass, run only
 * for a burst that holds one. On the build's vector path (ibk_simd_path())
 * the compares run on whole chunks of 16 packets.
 *
 * Context: Any context: touches only its arguments.
 * Return: the number accepted.
 */
static inline size_t ibk_rx_ud_burst(ibk_pkey_t qp_pkey, ibk_qkey_t qp_qkey,
				     const void *const *hdrs, size_t n,
				     uint8_t *verdicts)
{
#if defined(IBK__SIMD)
	return ibk__rx_ud_burst_vector(qp_pkey, qp_qkey, hdrs, n, verdicts);
#else
	return ibk__rx_ud_burst_scalar(qp_pkey, qp_qkey, hdrs, n, verdicts);
#endif
}

/* ------------------------------------------------------------------------
 * Memory keys (IBA 10.6: L_Key, R_Key, memory regions and windows)
 *
 * An L_Key or R_Key names a memory region (MR) or a memory window (MW)
 * and decides who may touch which of its bytes: every RDMA READ, WRITE
 * and ATOMIC carries one in its RETH or AtomicETH, and the responder
 * checks it against the object before it moves a byte. A key is the
 * object's 24-bit index and an 8-bit key byte; the responder finds the
 * object by the index and then compares all 32 bits (Linux soft-RoCE
 * lookup_mr(), rxe_lookup_mw()), so the key byte is a generation: a key
 * kept from before a re-registration or a re-bind misses. The consumer
 * owns only the key byte (ibv_inc_rkey(), fast-register, type 2 bind).
 *
 * Everything here is a pure function of values: a region's or window's
 * attributes (struct ibk_mem_attr), a request parsed from the wire, a
 * QP's protection domain and access flags. Each returns a verdict naming
 * the rule that decided, in the order the Linux soft-RoCE driver (rxe)
 * applies them, with the NAK an RC responder sends and the completion
 * status the requester then sees. ib_tables.h keeps the attributes in a
 * lock-free table and checks bursts of requests against it.
 *
 * Limits: the responder check covers the key, the protection domain, the
 * window's QP, the access bits, the state, the bounds and atomic
 * alignment, and the QP-level rules in front of them (the QP's access
 * flags, the 2^31 DMA length limit). The checks that need the QP's
 * running state (PSN, responder resources, payload length against the
 * MTU and the DMA length) are the caller's, as are FLUSH's rules: a FLUSH
 * is refused as an invalid request. Where rxe and the rules differ, the
 * comments say which one the library follows.
 *
 *	struct ibk_mem_request req;
 *	enum ibk_mem_verdict v = ibk_mem_request_parse(qp.type, bth, &req);
 *
 *	if (v == IBK_MEM_OK) {	// the object at ibk_rkey_index(req.rkey)
 *		obj = lookup(ibk_rkey_index(req.rkey));
 *		v = ibk_mem_check(&qp, &req, obj, obj ? lookup(obj->mr_index) :
 *				  NULL);	// a window's MR
 *	}
 *	if (ibk_mem_verdict_nak(v))
 *		send_nak(ibk_mem_verdict_nak(v));	// 0x61 or 0x62
 *
 * API:
 *	ibk_rkey_make(index, key_byte)
 *	ibk_rkey_index(key)
 *	ibk_rkey_byte(key)
 *	ibk_rkey_next(key)
 *	ibk_access_reg_ok(access)
 *	ibk_access_allows(granted, requested)
 *	ibk_range_verdict_name(v)
 *	ibk_mem_range_check(iova, length, base, region_length)
 *	ibk_mem_range_ok(iova, length, base, region_length)
 *	ibk_aeth_wc_status(syndrome)
 *	ibk_mem_verdict_name(v)
 *	ibk_mem_verdict_nak(v)
 *	ibk_mem_verdict_wc_status(v)
 *	ibk_mem_request_parse(type, bth, req)
 *	ibk_mem_check(qp, req, r, mr)
 *	ibk_memop_verdict_name(v)
 *	ibk_mem_register(o)
 *	ibk_mr_rereg(mr, next)
 *	ibk_mr_fast_reg(mr, qp_pd, next)
 *	ibk_mw_bind_check(mw, mr, wr)
 *	ibk_mw_bind(mw, mr, old_mr, wr)
 *	ibk_mem_invalidate(o, mr, key)
 *	ibk_mem_invalidate_remote(o, mr, key, qp)
 *	ibk_mem_deregister(o, mr, key)
 * ------------------------------------------------------------------------ */

/**
 * typedef ibk_rkey_t - An L_Key or R_Key: its index << 8 | its key byte
 */
typedef uint32_t ibk_rkey_t;

#define IBK_RKEY_INDEX_MAX	0x00ffffffu

/**
 * ibk_rkey_make() - The key of object @index (bits above 24 ignored) with key
 * byte @key_byte
 * @index: the object's index, 24 bits
 * @key_byte: the key byte (bits 0-7), the consumer-owned part
 *
 * Context: Any context: touches only its arguments.
 * Return: the key of object @index (bits above 24 ignored) with key byte
 * @key_byte: index << 8 | key byte (rxe_mr_init(), rxe_alloc_mw()).
 */
static inline ibk_rkey_t ibk_rkey_make(uint32_t index, uint8_t key_byte)
{
	return (index & IBK_RKEY_INDEX_MAX) << 8 | key_byte;
}

/**
 * ibk_rkey_index() - The object index a key names
 * @key: an L_Key or R_Key
 *
 * Context: Any context: touches only its arguments.
 * Return: the object index a key names: its upper 24 bits.
 */
static inline uint32_t ibk_rkey_index(ibk_rkey_t key)
{
	return key >> 8;
}

/**
 * ibk_rkey_byte() - The consumer-owned key byte
 * @key: an L_Key or R_Key
 *
 * Context: Any context: touches only its arguments.
 * Return: the consumer-owned key byte: the low 8 bits.
 */
static inline uint8_t ibk_rkey_byte(ibk_rkey_t key)
{
	return (uint8_t)(key & 0xff);
}

/**
 * ibk_rkey_next() - The next key of the same object
 * @key: an L_Key or R_Key
 *
 * It never equals @key, so a key taken before a re-bind or re-registration
 * misses; it comes back after 256 steps.
 *
 * Context: Any context: touches only its arguments.
 * Return: the next key of the same object: the key byte plus one, 0xff
 * wrapping to 0x00, the index kept, exactly what libibverbs' ibv_inc_rkey()
 * returns.
 */
static inline ibk_rkey_t ibk_rkey_next(ibk_rkey_t key)
{
	return (key & ~0xffu) | (((key & 0xffu) + 1u) & 0xffu);
}

/* Access flags, numbered as enum ibv_access_flags (rdma-core verbs.h). */
#define IBK_ACCESS_LOCAL_WRITE		0x001u
#define IBK_ACCESS_REMOTE_WRITE		0x002u
#define IBK_ACCESS_REMOTE_READ		0x004u
#define IBK_ACCESS_REMOTE_ATOMIC	0x008u
#define IBK_ACCESS_MW_BIND		0x010u
#define IBK_ACCESS_ZERO_BASED		0x020u
#define IBK_ACCESS_ON_DEMAND		0x040u
#define IBK_ACCESS_HUGETLB		0x080u
#define IBK_ACCESS_FLUSH_GLOBAL		0x100u
#define IBK_ACCESS_FLUSH_PERSISTENT	0x200u
#define IBK_ACCESS_RELAXED_ORDERING	0x100000u	/* first optional bit */

/* What a request asks of a region: one of these three. */
#define IBK_ACCESS_REMOTE	(IBK_ACCESS_REMOTE_READ | \
				 IBK_ACCESS_REMOTE_WRITE | \
				 IBK_ACCESS_REMOTE_ATOMIC)

/* The flags a window may carry (ibv_bind_mw(3)). */
#define IBK_ACCESS_MW_FLAGS	(IBK_ACCESS_REMOTE | IBK_ACCESS_ZERO_BASED)

/**
 * ibk_access_reg_ok() - The registration rule
 * @access: IBK_ACCESS_* flags
 *
 * The same rule binds a window's remote write or atomic to its MR's local
 * write (C10-74).
 *
 * Context: Any context: touches only its arguments.
 * Return: false if @access grants remote write or remote atomic without local
 * write, which ibv_reg_mr(3) refuses (kernel ib_check_mr_access()); local read
 * is always granted.
 */
static inline bool ibk_access_reg_ok(uint32_t access)
{
	unsigned needs_local = (access & (IBK_ACCESS_REMOTE_WRITE |
					  IBK_ACCESS_REMOTE_ATOMIC)) != 0;

	return (needs_local & ~access & IBK_ACCESS_LOCAL_WRITE) == 0;
}

/**
 * ibk_access_allows() - Whether @granted includes every bit of @requested
 * @granted: the IBK_ACCESS_* flags the key grants
 * @requested: the IBK_ACCESS_* flag the request needs
 *
 * Newer rxe compares this way (lookup_mr(), rxe_lookup_mw()); older rxe
 * accepted any one bit in common, which passed a request whose bits were only
 * partly granted.
 *
 * Context: Any context: touches only its arguments.
 * Return: true if @granted includes every bit of @requested: requested is a
 * subset of granted.
 */
static inline bool ibk_access_allows(uint32_t granted, uint32_t requested)
{
	return (requested & ~granted) == 0;
}

/*
 * The first failing check, branch-free: @failed has bit i set when check
 * i (in the order they are made) fails; returns @first + i for the lowest
 * such i, or @ok when none fails. The bit is isolated and its index
 * looked up by multiplying with a de Bruijn sequence: no builtin, which
 * some freestanding targets would turn into a libgcc call.
 */
static inline unsigned ibk__first_failure(uint32_t failed, unsigned ok,
					  unsigned first)
{
	static const uint8_t index_of[32] = {
		0, 1, 28, 2, 29, 14, 24, 3, 30, 22, 20, 15, 25, 17, 4, 8,
		31, 27, 13, 23, 21, 19, 16, 7, 26, 12, 18, 6, 11, 5, 10, 9,
	};
	uint32_t f = failed | 0x80000000u;	/* not 0: ~f + 1 does not wrap */
	uint32_t lowest = f & (~f + 1u);
	/* wraps on purpose: the de Bruijn product's top 5 bits index */
	unsigned i = index_of[(uint32_t)(lowest * 0x077cb531u) >> 27];

	return failed ? first + i : ok;
}

/**
 * enum ibk_range_verdict - Why an access range is, or is not, inside a region
 * @IBK_RANGE_IN: base <= iova, iova + len <= end
 * @IBK_RANGE_REGION_WRAPS: base + region length past 2^64
 * @IBK_RANGE_WRAPS: iova + length past 2^64
 * @IBK_RANGE_BELOW: iova below the region's base
 * @IBK_RANGE_BEYOND: iova + length past the region's end
 */
enum ibk_range_verdict {
	IBK_RANGE_IN = 0,
	IBK_RANGE_REGION_WRAPS,
	IBK_RANGE_WRAPS,
	IBK_RANGE_BELOW,
	IBK_RANGE_BEYOND,
};

/**
 * ibk_range_verdict_name() - Constant name of a range verdict; "unknown"
 * outside the enum
 * @v: a verdict
 *
 * Context: Any context: touches only its arguments.
 * Return: constant text, never NULL.
 */
static inline const char *ibk_range_verdict_name(enum ibk_range_verdict v)
{
	switch (v) {
	case IBK_RANGE_IN:		return "in";
	case IBK_RANGE_REGION_WRAPS:	return "region-wraps";
	case IBK_RANGE_WRAPS:		return "wraps";
	case IBK_RANGE_BELOW:		return "below";
	case IBK_RANGE_BEYOND:		return "beyond";
	default:			return "unknown";
	}
}

/*
 * True if [@start, @start + @length) ends past 2^64: the sum carried out
 * of 64 bits and is not exactly 2^64 (which wraps to 0). A range whose
 * last byte is 2^64 - 1 ends exactly at 2^64 and is a range like any
 * other: stock soft-RoCE (Linux 6.1) registers an MR at iova 2^64 - 4096
 * of length 4096 and serves requests ending at its end.
 */
static inline uint32_t ibk__range_past_2_64(uint64_t start, uint64_t length)
{
	uint64_t end = start + length;	/* wraps on purpose: the carry */

	return (uint32_t)((end < start) & (end != 0));
}

/**
 * ibk_mem_range_check() - Where an access range lies against a region, exactly
 * @iova: the I/O virtual address
 * @length: the length in bytes
 * @base: the region's first address
 * @region_length: the region's length in bytes
 *
 * Where [@iova, @iova + @length) lies against the region [@base, @base +
 * @region_length), computed exactly in 64-bit arithmetic: a range may end at
 * 2^64 (its last byte 2^64 - 1), never past it, and ends are never compared
 * after wrapping. rxe's u64 form (iova + length > base + length) lets iova
 * 0xfffffffffffffc00 with length 0x400 (sum 0) pass against any region; the
 * rxe overflow series (May 2026) refuses wrapped sums; Linux 6.1's
 * mr_check_range() compares without summing and serves an MR ending at 2^64.
 *
 * Here, inside means iova >= base and iova - base <= region length - length,
 * with length <= region length: no sum is compared (the two differences
 * wrap on purpose where iova < base or length > region length, which the
 * other terms refuse, branch-free). A zero-length range is
 * inside when base <= iova <= end. In order: IBK_RANGE_REGION_WRAPS,
 * IBK_RANGE_WRAPS, IBK_RANGE_BELOW, IBK_RANGE_BEYOND, else IBK_RANGE_IN.
 * Branch-free.
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_RANGE_IN, or the enum ibk_range_verdict that says which bound
 * the range crosses.
 */
static inline enum ibk_range_verdict
ibk_mem_range_check(uint64_t iova, uint64_t length, uint64_t base,
		    uint64_t region_length)
{
	uint32_t failed = ibk__range_past_2_64(base, region_length) |
			  ibk__range_past_2_64(iova, length) << 1 |
			  (uint32_t)(iova < base) << 2 |
			  (uint32_t)((length > region_length) |
				     (iova - base > region_length - length))
				<< 3;

	return (enum ibk_range_verdict)ibk__first_failure(
		failed, IBK_RANGE_IN, IBK_RANGE_REGION_WRAPS);
}

/**
 * ibk_mem_range_ok() - Whether an access range lies in a region
 * @iova: the I/O virtual address
 * @length: the length in bytes
 * @base: the region's first address
 * @region_length: the region's length in bytes
 *
 * True iff [@iova, @iova + @length) lies in [@base, @base + @region_length),
 * neither range ending past 2^64: ibk_mem_range_check() says IBK_RANGE_IN.
 *
 * The same comparisons, without the reason.
 *
 * Context: Any context: touches only its arguments.
 * Return: true if the range lies in the region.
 */
static inline bool ibk_mem_range_ok(uint64_t iova, uint64_t length,
				    uint64_t base, uint64_t region_length)
{
	return (ibk__range_past_2_64(base, region_length) |
		ibk__range_past_2_64(iova, length) | (iova < base) |
		(length > region_length) |
		(iova - base > region_length - length)) == 0;
}

/**
 * enum ibk_wc_status - Work completion status, numbered as enum ibv_wc_status
 * (verbs.h)
 * @IBK_WC_SUCCESS: success
 * @IBK_WC_LOC_QP_OP_ERR: local QP operation error
 * @IBK_WC_MW_BIND_ERR: memory window bind error
 * @IBK_WC_BAD_RESP_ERR: bad response
 * @IBK_WC_REM_INV_REQ_ERR: remote invalid request (NAK 0x61)
 * @IBK_WC_REM_ACCESS_ERR: remote access error (NAK 0x62)
 * @IBK_WC_REM_OP_ERR: remote operation error (NAK 0x63)
 * @IBK_WC_RETRY_EXC_ERR: transport retry count exceeded
 * @IBK_WC_RNR_RETRY_EXC_ERR: RNR retry count exceeded
 */
enum ibk_wc_status {
	IBK_WC_SUCCESS = 0,
	IBK_WC_LOC_QP_OP_ERR = 2,
	IBK_WC_MW_BIND_ERR = 6,
	IBK_WC_BAD_RESP_ERR = 7,
	IBK_WC_REM_INV_REQ_ERR = 9,
	IBK_WC_REM_ACCESS_ERR = 10,
	IBK_WC_REM_OP_ERR = 11,
	IBK_WC_RETRY_EXC_ERR = 12,
	IBK_WC_RNR_RETRY_EXC_ERR = 13,
};

/**
 * ibk_aeth_wc_status() - The completion status an AETH syndrome gives the
 * requester
 * @syndrome: an AETH syndrome byte
 *
 * The status a requester completes the WQE with once @syndrome answered it
 * (rxe_comp.c check_ack()).
 *
 * An RNR NAK and a PSN sequence NAK make it retry: IBK_WC_RNR_RETRY_EXC_ERR
 * and IBK_WC_RETRY_EXC_ERR are what it ends with if the retries run out. The
 * reserved type gives IBK_WC_BAD_RESP_ERR (the library's choice: rxe fails the
 * WQE without naming a status).
 *
 * Context: Any context: touches only its arguments.
 * Return: the status a requester completes the WQE with once @syndrome
 * answered it (rxe_comp.c check_ack()): IBK_WC_SUCCESS for an ACK; for a NAK
 * 0x61 IBK_WC_REM_INV_REQ_ERR, 0x62 IBK_WC_REM_ACCESS_ERR, any other code but
 * 0x60 IBK_WC_REM_OP_ERR.
 */
static inline enum ibk_wc_status ibk_aeth_wc_status(uint8_t syndrome)
{
	if (ibk_aeth_is_ack(syndrome))
		return IBK_WC_SUCCESS;
	if (ibk_aeth_is_rnr_nak(syndrome))
		return IBK_WC_RNR_RETRY_EXC_ERR;
	if (!ibk_aeth_is_nak(syndrome))
		return IBK_WC_BAD_RESP_ERR;
	switch (syndrome) {
	case IBK_NAK_PSN_SEQUENCE:	return IBK_WC_RETRY_EXC_ERR;
	case IBK_NAK_INVALID_REQUEST:	return IBK_WC_REM_INV_REQ_ERR;
	case IBK_NAK_REMOTE_ACCESS:	return IBK_WC_REM_ACCESS_ERR;
	default:			return IBK_WC_REM_OP_ERR;
	}
}

/**
 * enum ibk_mem_kind - What a key names: numbered as ibv_mw_type for the
 * windows
 * @IBK_MEM_MR: registered region (ibv_reg_mr)
 * @IBK_MEM_MW1: type 1 window, bound by ibv_bind_mw()
 * @IBK_MEM_MW2: type 2 window, bound by a BIND_MW WR
 * @IBK_MEM_MR_FAST: fast-register region (ibv_alloc_mr)
 */
enum ibk_mem_kind {
	IBK_MEM_MR = 0,
	IBK_MEM_MW1 = 1,
	IBK_MEM_MW2 = 2,
	IBK_MEM_MR_FAST = 3,
};

/**
 * enum ibk_mem_state - Object states, as rxe names them
 * @IBK_MEM_INVALID: no object: never allocated, or freed
 * @IBK_MEM_FREE: allocated, not usable: unbound type 2 window, unregistered or
 * invalidated fast-register region
 * @IBK_MEM_VALID: usable
 */
enum ibk_mem_state {
	IBK_MEM_INVALID = 0,
	IBK_MEM_FREE = 1,
	IBK_MEM_VALID = 2,
};

/**
 * struct ibk_mem_attr - A region's or window's attributes, as a responder
 * keeps them
 * @addr: where the object starts: a region's iova, a window's address in its
 * MR
 * @length: its length in bytes
 * @rkey: R_Key (rxe: the L_Key too)
 * @pd: protection domain, any handle
 * @access: IBK_ACCESS_* granted
 * @qpn: type 2 window: the QP it is bound to (a number: not to be reused while
 * bound, see ibk_mr_table_bind())
 * @mr_index: window: the index of the MR it is bound to
 * @windows: region: windows bound to it
 * @kind: enum ibk_mem_kind
 * @state: enum ibk_mem_state
 *
 * Remote addresses are iovas in [addr, addr + length); for a window with
 * IBK_ACCESS_ZERO_BASED, offsets in [0, length), and its addr is where it
 * starts in its MR. A type 1 window of length 0 is unbound. A region's addr is
 * its iova, and IBK_ACCESS_ZERO_BASED on a region is not read at access, as in
 * Linux 6.1's rxe (check_rkey() offsets only a zero-based window;
 * mr_check_range() compares with the MR's iova): a zero-based region is one
 * whose iova is 0, the same effect the verbs give it (ibv_reg_mr(3):
 * ibv_reg_mr_iova() with hca_va 0 "has the same effect as
 * IBV_ACCESS_ZERO_BASED"; ib_map_mr_sg() users set mr->iova). A stack
 * registering with the flag stores addr 0. The flag still keeps a window from
 * binding to the region (ibk_mw_bind_check()).
 */
struct ibk_mem_attr {
	uint64_t addr;
	uint64_t length;
	ibk_rkey_t rkey;
	uint32_t pd;
	uint32_t access;
	uint32_t qpn;
	uint32_t mr_index;
	uint32_t windows;
	uint8_t kind;
	uint8_t state;
};

/**
 * struct ibk_mem_qp - What the responder check needs of the QP a request
 * arrived on
 * @type: IBK_QPT_RC or IBK_QPT_UC
 * @qpn: the QP's number
 * @pd: the QP's protection domain, any handle
 * @access: qp_access_flags: IBK_ACCESS_REMOTE_*
 */
struct ibk_mem_qp {
	enum ibk_qp_type type;
	uint32_t qpn;
	uint32_t pd;
	uint32_t access;
};

/**
 * struct ibk_mem_request - What a request asks for, from its BTH and RETH or
 * AtomicETH
 * @va: the remote virtual address the request starts at
 * @rkey: the R_Key it carries
 * @length: RETH DMA length; 8 for an atomic, at least 8 for an ATOMIC WRITE
 * @access: IBK_ACCESS_REMOTE_*; 0: no access asked
 * @opcode: its BTH opcode
 * @atomic: ATOMIC or ATOMIC WRITE: 8-aligned, no zero-length exemption
 * @continues: WRITE MIDDLE or LAST: the QP's access only, no R_Key (the first
 * packet's)
 */
struct ibk_mem_request {
	uint64_t va;
	uint32_t rkey;
	uint32_t length;
	uint32_t access;
	uint8_t opcode;
	bool atomic;
	bool continues;
};

/**
 * enum ibk_mem_verdict - The responder's verdict on a request, first failing
 * check first
 * @IBK_MEM_OK: access granted, or a 0-byte READ/WRITE
 * @IBK_MEM_NO_RKEY: the opcode carries no R_Key to check
 * @IBK_MEM_DROP_HEADER: ibk_rx_check_header() refused it
 * @IBK_MEM_ERR_OPCODE: FLUSH: not covered here (NAK 0x61)
 * @IBK_MEM_ERR_QP_ACCESS: QP's access flags lack the op (0x61)
 * @IBK_MEM_ERR_LENGTH: RETH DMA length above 2^31 (0x61)
 * @IBK_MEM_ERR_KEY: no object, or not this key (0x62)
 * @IBK_MEM_ERR_PD: object in another PD (0x62)
 * @IBK_MEM_ERR_WINDOW_QP: type 2 window of another QP (0x62)
 * @IBK_MEM_ERR_UNBOUND: window of length 0 (0x62)
 * @IBK_MEM_ERR_ACCESS: op not granted by the object (0x62)
 * @IBK_MEM_ERR_STATE: object not VALID (0x62)
 * @IBK_MEM_ERR_RANGE: bytes outside the object (0x62)
 * @IBK_MEM_ERR_ALIGN: atomic address not 8-aligned (0x61)
 */
enum ibk_mem_verdict {
	IBK_MEM_OK = 0,
	IBK_MEM_NO_RKEY,
	IBK_MEM_DROP_HEADER,
	IBK_MEM_ERR_OPCODE,
	IBK_MEM_ERR_QP_ACCESS,
	IBK_MEM_ERR_LENGTH,
	IBK_MEM_ERR_KEY,
	IBK_MEM_ERR_PD,
	IBK_MEM_ERR_WINDOW_QP,
	IBK_MEM_ERR_UNBOUND,
	IBK_MEM_ERR_ACCESS,
	IBK_MEM_ERR_STATE,
	IBK_MEM_ERR_RANGE,
	IBK_MEM_ERR_ALIGN,
};

/**
 * ibk_mem_verdict_name() - Constant name of a responder verdict; "unknown"
 * outside the enum
 * @v: a verdict
 *
 * Context: Any context: touches only its arguments.
 * Return: constant text, never NULL.
 */
static inline const char *ibk_mem_verdict_name(enum ibk_mem_verdict v)
{
	switch (v) {
	case IBK_MEM_OK:		return "ok";
	case IBK_MEM_NO_RKEY:		return "no-rkey";
	case IBK_MEM_DROP_HEADER:	return "drop-header";
	case IBK_MEM_ERR_OPCODE:	return "err-opcode";
	case IBK_MEM_ERR_QP_ACCESS:	return "err-qp-access";
	case IBK_MEM_ERR_LENGTH:	return "err-length";
	case IBK_MEM_ERR_KEY:		return "err-key";
	case IBK_MEM_ERR_PD:		return "err-pd";
	case IBK_MEM_ERR_WINDOW_QP:	return "err-window-qp";
	case IBK_MEM_ERR_UNBOUND:	return "err-unbound";
	case IBK_MEM_ERR_ACCESS:	return "err-access";
	case IBK_MEM_ERR_STATE:		return "err-state";
	case IBK_MEM_ERR_RANGE:		return "err-range";
	case IBK_MEM_ERR_ALIGN:		return "err-align";
	default:			return "unknown";
	}
}

/**
 * ibk_mem_verdict_nak() - The AETH syndrome an RC responder answers a verdict
 * with (rxe_resp.c rxe_responder())
 * @v: a verdict
 *
 * A UC responder sends nothing and drops the message instead.
 *
 * Context: Any context: touches only its arguments.
 * Return: 0 for none (IBK_MEM_OK, IBK_MEM_NO_RKEY, and the silent
 * IBK_MEM_DROP_HEADER); IBK_NAK_INVALID_REQUEST for the opcode, QP access,
 * length and alignment errors ("class C", QP to error); IBK_NAK_REMOTE_ACCESS
 * for every R_Key violation.
 */
static inline uint8_t ibk_mem_verdict_nak(enum ibk_mem_verdict v)
{
	switch (v) {
	case IBK_MEM_OK:
	case IBK_MEM_NO_RKEY:
	case IBK_MEM_DROP_HEADER:
		return 0;
	case IBK_MEM_ERR_OPCODE:
	case IBK_MEM_ERR_QP_ACCESS:
	case IBK_MEM_ERR_LENGTH:
	case IBK_MEM_ERR_ALIGN:
		return IBK_NAK_INVALID_REQUEST;
	default:
		return IBK_NAK_REMOTE_ACCESS;
	}
}

/**
 * ibk_mem_verdict_wc_status() - The status an RC requester completes its WQE
 * with after this verdict
 * @v: a verdict
 *
 * Context: Any context: touches only its arguments.
 * Return: the status an RC requester completes its WQE with after this
 * verdict: that of the NAK sent (ibk_aeth_wc_status()), IBK_WC_SUCCESS when
 * none is, and IBK_WC_RETRY_EXC_ERR for a silent drop, which the requester
 * retransmits until its retry count runs out.
 */
static inline enum ibk_wc_status
ibk_mem_verdict_wc_status(enum ibk_mem_verdict v)
{
	uint8_t nak = ibk_mem_verdict_nak(v);

	if (v == IBK_MEM_DROP_HEADER)
		return IBK_WC_RETRY_EXC_ERR;
	return nak ? ibk_aeth_wc_status(nak) : IBK_WC_SUCCESS;
}

/*
 * What a request's opcode asks of the object its R_Key names, by opcode
 * for RC (0x00-0x1f) and UC (0x20-0x3f); nothing for any other. The low
 * four bits are the access it needs (IBK_ACCESS_REMOTE_*); IBK__MEM_ATOMIC
 * marks an 8-byte atomic, IBK__MEM_FLUSH the FLUSH this check refuses,
 * IBK__MEM_CONT a WRITE MIDDLE or LAST, which has no RETH. The other two
 * bits serve ib_tables.h's fast path, which checks only the opcodes whose
 * whole check is the R_Key's (a RETH with its length: RDMA WRITE FIRST or
 * ONLY, READ; an AtomicETH's 8 bytes: COMPARE SWAP, FETCH ADD): they have
 * IBK__MEM_KEYED, every other opcode IBK__MEM_OTHER.
 */
#define IBK__MEM_W	(IBK_ACCESS_REMOTE_WRITE | IBK__MEM_KEYED)
#define IBK__MEM_R	(IBK_ACCESS_REMOTE_READ | IBK__MEM_KEYED)
#define IBK__MEM_A	(IBK_ACCESS_REMOTE_ATOMIC | IBK__MEM_ATOMIC | \
			 IBK__MEM_KEYED)
#define IBK__MEM_AW	(IBK_ACCESS_REMOTE_WRITE | IBK__MEM_ATOMIC | \
			 IBK__MEM_OTHER)
#define IBK__MEM_WC	(IBK_ACCESS_REMOTE_WRITE | IBK__MEM_CONT | \
			 IBK__MEM_OTHER)
#define IBK__MEM_FL	(IBK__MEM_FLUSH | IBK__MEM_OTHER)
#define IBK__MEM_NO	IBK__MEM_OTHER	/* nothing to check */
#define IBK__MEM_KEYED	0x01u
#define IBK__MEM_ATOMIC	0x10u
#define IBK__MEM_FLUSH	0x20u
#define IBK__MEM_CONT	0x40u
#define IBK__MEM_OTHER	0x80u

/* The classes of the RC and UC opcodes by their low six bits, RC's 32
 * first: ib_tables.h's AVX2 burst looks a transport's up 16 at a time. */
static inline const uint8_t *ibk__mem_op6_classes(void)
{
	static const uint8_t cls[64] = {
		/* RC: SENDs 0x00-0x05, WRITE FIRST 0x06, MIDDLE, LAST,
		 * LAST_IMM, ONLY 0x0a, ONLY_IMM, READ 0x0c, responses and
		 * ACKs 0x0d-0x12, COMPARE SWAP 0x13, FETCH ADD 0x14, ...,
		 * FLUSH 0x1c, ATOMIC WRITE 0x1d */
		IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_NO,
		IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_W, IBK__MEM_WC,
		IBK__MEM_WC, IBK__MEM_WC, IBK__MEM_W, IBK__MEM_W,
		IBK__MEM_R, IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_NO,
		IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_A,
		IBK__MEM_A, IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_NO,
		IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_NO,
		IBK__MEM_FL, IBK__MEM_AW, IBK__MEM_NO, IBK__MEM_NO,
		/* UC: WRITE FIRST 0x26, MIDDLE, LAST, LAST_IMM, ONLY 0x2a,
		 * ONLY_IMM 0x2b */
		IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_NO,
		IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_W, IBK__MEM_WC,
		IBK__MEM_WC, IBK__MEM_WC, IBK__MEM_W, IBK__MEM_W,
		IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_NO,
		IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_NO,
		IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_NO,
		IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_NO,
		IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_NO, IBK__MEM_NO,
	};

	return cls;
}

/* The class of an RC or UC opcode's low six bits (@op6 below 64). */
static inline unsigned ibk__mem_op6_class(unsigned op6)
{
	return ibk__mem_op6_classes()[op6];
}

static inline unsigned ibk__mem_op_class(uint8_t opcode)
{
	return opcode < 64 ? ibk__mem_op6_class(opcode) : 0;
}

/**
 * ibk_mem_request_parse() - The first steps of the responder check: the
 * header, then what the opcode asks for
 * @type: the QP's type
 * @bth: the BTH, followed by its RETH or AtomicETH when the opcode carries one
 * @req: receives the request, in every case
 *
 * RDMA WRITE FIRST and ONLY (with or without immediate) and ATOMIC WRITE ask
 * for IBK_ACCESS_REMOTE_WRITE over the RETH's range, RDMA READ for
 * IBK_ACCESS_REMOTE_READ, COMPARE SWAP and FETCH ADD for
 * IBK_ACCESS_REMOTE_ATOMIC over the 8 bytes at the AtomicETH's address (rxe
 * check_rkey()). An ATOMIC WRITE's range is the RETH's but never shorter
 * than the 8 bytes it writes: rxe checks the RETH's range in check_rkey() and
 * the 8 bytes again when it executes (rxe_mr_do_atomic_write(), oA19-28), and
 * the library checks both at once. WRITE MIDDLE and LAST (with or without
 * immediate) continue the first packet's checked range but still need the
 * QP's REMOTE_WRITE, which rxe's check_op_valid() tests on every WRITE packet
 * (an access change by ibv_modify_qp() mid-message counts): req->access
 * IBK_ACCESS_REMOTE_WRITE and req->continues, for ibk_mem_check(). SENDs and
 * opcodes the transport does not define (the header check passes them by
 * transport, as rxe's does) leave req->access 0. The RETH or AtomicETH is
 * read at @bth + IBK_BTH_LEN only when the opcode carries one.
 *
 * The opcode is classified by one table lookup; which of the two headers is
 * read makes no branch, as both have the address at 0 and the R_Key at 8 (an
 * AtomicETH's bytes 12-15, where a RETH has its length, are read and
 * dropped).
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_MEM_DROP_HEADER unless ibk_rx_check_header() accepts @bth for a
 * QP of @type (TVer, and an opcode of the QP's transport); IBK_MEM_OK for a
 * request that carries an R_Key to check; IBK_MEM_ERR_OPCODE for FLUSH;
 * IBK_MEM_NO_RKEY for any other opcode.
 */
static inline enum ibk_mem_verdict
ibk_mem_request_parse(enum ibk_qp_type type, const void *bth,
		      struct ibk_mem_request *req)
{
	const uint8_t *ext = (const uint8_t *)bth + IBK_BTH_LEN;
	uint8_t opcode = ibk_bth_opcode(bth);
	unsigned cls = ibk__mem_op_class(opcode);
	bool header_ok = ibk_rx_check_header(type, bth) == IBK_RX_ACCEPT;
	uint32_t len, eight;

	req->opcode = opcode;
	req->access = header_ok ? cls & IBK_ACCESS_REMOTE : 0;
	req->atomic = (cls & IBK__MEM_ATOMIC) != 0;
	req->continues = header_ok && (cls & IBK__MEM_CONT);
	if (req->access == 0 || req->continues) {
		req->va = 0;
		req->rkey = 0;
		req->length = 0;
		req->atomic = false;
		if (!header_ok)
			return IBK_MEM_DROP_HEADER;
		return (cls & IBK__MEM_FLUSH) ? IBK_MEM_ERR_OPCODE :
		       IBK_MEM_NO_RKEY;
	}
	/* 8 for an ATOMIC (an AtomicETH's bytes 12-15 are swap data) or an
	 * ATOMIC WRITE whose RETH names fewer, else the RETH's length:
	 * selected without a branch */
	len = ibk__load_be32(ext + 12);
	eight = (((cls & IBK_ACCESS_REMOTE_ATOMIC) != 0) |
		 (req->atomic & (len < 8u))) ? 0xffffffffu : 0;
	req->va = ibk__load_be64(ext);
	req->rkey = ibk__load_be32(ext + 8);
	req->length = (len & ~eight) | (8u & eight);
	return IBK_MEM_OK;
}

/* The largest RETH DMA length a responder accepts (rxe check_length()). */
#define IBK_MEM_DMA_LEN_MAX	0x80000000u

/*
 * A window's bytes lie in its MR: the request's range, translated to the
 * MR's addresses (a zero-based window's offsets start at the window's
 * addr, as rxe's check_rkey() sets resp.offset), inside [mr->addr,
 * mr->addr + mr->length), checked exactly as rxe's mr_check_range(mr, va
 * + offset, resid) does at access time. A translation past 2^64 is
 * outside; so is everything for @mr NULL (no region to reach).
 */
static inline uint32_t ibk__mw_in_mr(const struct ibk_mem_request *req,
				     const struct ibk_mem_attr *mw,
				     const struct ibk_mem_attr *mr)
{
	uint64_t offset = (mw->access & IBK_ACCESS_ZERO_BASED) ? mw->addr : 0;
	uint64_t va = req->va + offset;	/* wraps on purpose: see below */

	return mr && va >= req->va &&
	       ibk_mem_range_ok(va, req->length, mr->addr, mr->length);
}

/*
 * The checks on the object a request's R_Key names, for @r not NULL, in
 * rxe's order (lookup_mr(): key, PD, access, state; rxe_lookup_mw(): key,
 * PD, the type 2 window's QP, length 0, access, state; then the bounds of
 * the object and, for a window, of its MR, @mr (mr_check_range()); then
 * the atomic alignment of atomic_reply()): each computed into one bit,
 * the first failing one found without a branch.
 */
static inline enum ibk_mem_verdict
ibk__mem_object_verdict(const struct ibk_mem_qp *qp,
			const struct ibk_mem_request *req,
			const struct ibk_mem_attr *r,
			const struct ibk_mem_attr *mr)
{
	uint32_t window = (r->kind == IBK_MEM_MW1) | (r->kind == IBK_MEM_MW2);
	/* a zero-based window's remote addresses are offsets from 0 */
	uint32_t zero_based = window &
			      (uint32_t)!!(r->access & IBK_ACCESS_ZERO_BASED);
	uint64_t base = zero_based ? 0 : r->addr;
	uint32_t in = (uint32_t)ibk_mem_range_ok(req->va, req->length, base,
						 r->length) &
		      (ibk__mw_in_mr(req, r, mr) | !window);
	uint32_t failed =
		(uint32_t)((r->rkey != req->rkey) |
			   (r->state == IBK_MEM_INVALID)) |
		(uint32_t)(r->pd != qp->pd) << 1 |
		(uint32_t)((r->kind == IBK_MEM_MW2) & (r->qpn != qp->qpn))
			<< 2 |
		(window & (uint32_t)(r->length == 0)) << 3 |
		(uint32_t)!ibk_access_allows(r->access, req->access) << 4 |
		(uint32_t)(r->state != IBK_MEM_VALID) << 5 |
		(in ^ 1u) << 6 |
		(uint32_t)(req->atomic & ((req->va & 7u) != 0)) << 7;

	/* IBK_MEM_ERR_KEY .. IBK_MEM_ERR_ALIGN are consecutive, in order */
	return (enum ibk_mem_verdict)ibk__first_failure(failed, IBK_MEM_OK,
							IBK_MEM_ERR_KEY);
}

/**
 * ibk_mem_check() - The responder's R_Key check of a parsed request against
 * the object its key names
 * @qp: the QP the request arrived on: its PD, number and access flags
 * @req: the request, which ibk_mem_request_parse() answered IBK_MEM_OK (or
 *       IBK_MEM_NO_RKEY)
 * @r: the object at the index of req->rkey, or NULL if there is none
 * @mr: when @r is a window, the region at r->mr_index it is bound to (NULL if
 *      none); not read for a region
 *
 * A @req the parse answered IBK_MEM_NO_RKEY gives IBK_MEM_NO_RKEY, but for a
 * WRITE MIDDLE or LAST (req->continues) to a QP whose own access flags lack
 * REMOTE_WRITE: IBK_MEM_ERR_QP_ACCESS, as rxe's check_op_valid() answers on
 * every WRITE packet.
 *
 * Context: Any context: touches only its arguments.
 * Return: the first verdict that applies, in rxe's order:
 *
 *  - IBK_MEM_ERR_QP_ACCESS unless the QP's own access flags grant the
 *    operation (check_op_valid(): an invalid request, not an access
 *    error);
 *  - IBK_MEM_ERR_LENGTH for an RDMA READ or WRITE whose DMA length is
 *    above 2^31 (check_length(); the rxe copy read tests pkt->opcode where
 *    it means pkt->mask, so there the check never fires);
 *  - IBK_MEM_OK for an RDMA READ or WRITE of 0 bytes: it "is not required
 *    to set an addr or rkey" and neither is checked (check_rkey()); an
 *    ATOMIC WRITE is checked whatever its length, as in rxe;
 *  - IBK_MEM_ERR_KEY if @r is NULL, deregistered (IBK_MEM_INVALID) or
 *    holds another key: all 32 bits are compared;
 *  - IBK_MEM_ERR_PD, then for windows IBK_MEM_ERR_WINDOW_QP (type 2: only
 *    the QP it was bound to may use it) and IBK_MEM_ERR_UNBOUND;
 *  - IBK_MEM_ERR_ACCESS unless the object grants every bit asked
 *    (ibk_access_allows());
 *  - IBK_MEM_ERR_STATE unless the object is IBK_MEM_VALID;
 *  - IBK_MEM_ERR_RANGE unless [va, va + length) lies in the object, by
 *    ibk_mem_range_ok() (no range may end past 2^64), and, for a window,
 *    the bytes it translates to lie in @mr: a window covers a subset of
 *    its MR (ibv_alloc_mw(3), C10-75), and rxe checks the translated
 *    address against the MR on every access. The window's own range is
 *    the library's bound besides: rxe checks only the MR's, so there a
 *    window gives access to all of its MR;
 *  - IBK_MEM_ERR_ALIGN for an atomic whose address is not 8-aligned
 *    (rxe checks the host address it maps to);
 *  - else IBK_MEM_OK.
 */
static inline enum ibk_mem_verdict
ibk_mem_check(const struct ibk_mem_qp *qp, const struct ibk_mem_request *req,
	      const struct ibk_mem_attr *r, const struct ibk_mem_attr *mr)
{
	/* an RDMA READ or WRITE; not an ATOMIC, nor an ATOMIC WRITE */
	bool rw = !req->atomic;

	if (req->access == 0)
		return IBK_MEM_NO_RKEY;
	if (!ibk_access_allows(qp->access, req->access))
		return IBK_MEM_ERR_QP_ACCESS;
	if (req->continues)
		return IBK_MEM_NO_RKEY;
	/* '&', not '&&': no branch on the kind of operation */
	if (rw & (req->length > IBK_MEM_DMA_LEN_MAX))
		return IBK_MEM_ERR_LENGTH;
	if (rw & (req->length == 0))
		return IBK_MEM_OK;
	if (!r)
		return IBK_MEM_ERR_KEY;
	return ibk__mem_object_verdict(qp, req, r, mr);
}

/**
 * enum ibk_memop_verdict - The results of the management operations below
 * @IBK_MEMOP_OK: done
 * @IBK_MEMOP_ERR_KEY: no object, or not this key
 * @IBK_MEMOP_ERR_TYPE: not for an object of this kind
 * @IBK_MEMOP_ERR_STATE: not in the state it needs
 * @IBK_MEMOP_ERR_ACCESS: access bits refused
 * @IBK_MEMOP_ERR_PD: QP and object in different PDs
 * @IBK_MEMOP_ERR_INDEX: new key names another object
 * @IBK_MEMOP_ERR_SAME_KEY: new key byte equals the old one
 * @IBK_MEMOP_ERR_WINDOWS_BOUND: region still has windows bound
 * @IBK_MEMOP_ERR_ZERO_BASED: zero-based type 1 window
 * @IBK_MEMOP_ERR_NO_MR: type 2 bind without MR or length
 * @IBK_MEMOP_ERR_MR_KEY: bind: no MR with that L_Key
 * @IBK_MEMOP_ERR_MR_ZERO_BASED: bind to a zero-based MR
 * @IBK_MEMOP_ERR_MR_BIND: bind: MR lacks MW_BIND
 * @IBK_MEMOP_ERR_MR_LOCAL_WRITE: bind: MR lacks local write
 * @IBK_MEMOP_ERR_RANGE: bind: window outside the MR
 * @IBK_MEMOP_ERR_IN_USE: register: index holds an object
 * @IBK_MEMOP_ERR_MR_PD: bind: MR in another PD
 * @IBK_MEMOP_ERR_WINDOW_QP: type 2 window of another QP
 * @IBK_MEMOP_ERR_INVALID: ib_tables.h: a NULL argument
 */
enum ibk_memop_verdict {
	IBK_MEMOP_OK = 0,
	IBK_MEMOP_ERR_KEY,
	IBK_MEMOP_ERR_TYPE,
	IBK_MEMOP_ERR_STATE,
	IBK_MEMOP_ERR_ACCESS,
	IBK_MEMOP_ERR_PD,
	IBK_MEMOP_ERR_INDEX,
	IBK_MEMOP_ERR_SAME_KEY,
	IBK_MEMOP_ERR_WINDOWS_BOUND,
	IBK_MEMOP_ERR_ZERO_BASED,
	IBK_MEMOP_ERR_NO_MR,
	IBK_MEMOP_ERR_MR_KEY,
	IBK_MEMOP_ERR_MR_ZERO_BASED,
	IBK_MEMOP_ERR_MR_BIND,
	IBK_MEMOP_ERR_MR_LOCAL_WRITE,
	IBK_MEMOP_ERR_RANGE,
	IBK_MEMOP_ERR_IN_USE,
	IBK_MEMOP_ERR_MR_PD,
	IBK_MEMOP_ERR_WINDOW_QP,
	IBK_MEMOP_ERR_INVALID,
};

/**
 * ibk_memop_verdict_name() - Constant name of a management verdict; "unknown"
 * outside the enum
 * @v: a verdict
 *
 * Context: Any context: touches only its arguments.
 * Return: constant text, never NULL.
 */
static inline const char *ibk_memop_verdict_name(enum ibk_memop_verdict v)
{
	switch (v) {
	case IBK_MEMOP_OK:			return "ok";
	case IBK_MEMOP_ERR_KEY:			return "err-key";
	case IBK_MEMOP_ERR_TYPE:		return "err-type";
	case IBK_MEMOP_ERR_STATE:		return "err-state";
	case IBK_MEMOP_ERR_ACCESS:		return "err-access";
	case IBK_MEMOP_ERR_PD:			return "err-pd";
	case IBK_MEMOP_ERR_INDEX:		return "err-index";
	case IBK_MEMOP_ERR_SAME_KEY:		return "err-same-key";
	case IBK_MEMOP_ERR_WINDOWS_BOUND:	return "err-windows-bound";
	case IBK_MEMOP_ERR_ZERO_BASED:		return "err-zero-based";
	case IBK_MEMOP_ERR_NO_MR:		return "err-no-mr";
	case IBK_MEMOP_ERR_MR_KEY:		return "err-mr-key";
	case IBK_MEMOP_ERR_MR_ZERO_BASED:	return "err-mr-zero-based";
	case IBK_MEMOP_ERR_MR_BIND:		return "err-mr-bind";
	case IBK_MEMOP_ERR_MR_LOCAL_WRITE:	return "err-mr-local-write";
	case IBK_MEMOP_ERR_RANGE:		return "err-range";
	case IBK_MEMOP_ERR_IN_USE:		return "err-in-use";
	case IBK_MEMOP_ERR_MR_PD:		return "err-mr-pd";
	case IBK_MEMOP_ERR_WINDOW_QP:		return "err-window-qp";
	case IBK_MEMOP_ERR_INVALID:		return "err-invalid";
	default:				return "unknown";
	}
}

/* *@dst = *@src field by field: a struct copy may become a memcpy() call,
 * which a freestanding build does not have. */
static inline void ibk__mem_attr_copy(struct ibk_mem_attr *dst,
				      const struct ibk_mem_attr *src)
{
	dst->addr = src->addr;
	dst->length = src->length;
	dst->rkey = src->rkey;
	dst->pd = src->pd;
	dst->access = src->access;
	dst->qpn = src->qpn;
	dst->mr_index = src->mr_index;
	dst->windows = src->windows;
	dst->kind = src->kind;
	dst->state = src->state;
}

static inline bool ibk__mem_is_window(const struct ibk_mem_attr *o)
{
	return o->kind == IBK_MEM_MW1 || o->kind == IBK_MEM_MW2;
}

static inline bool ibk__mem_kind_valid(uint8_t kind)
{
	return kind <= IBK_MEM_MR_FAST;
}

/* A window's bind-dependent attributes cleared: unbound (rxe
 * rxe_do_invalidate_mw()). */
static inline void ibk__mw_clear(struct ibk_mem_attr *mw)
{
	mw->addr = 0;
	mw->length = 0;
	mw->access = 0;
	mw->qpn = 0;
	mw->mr_index = 0;
}

/**
 * ibk_mem_register() - Registers a new region or window
 * @o: the object, updated on success
 *
 * Registration of a new object, its attributes in *@o: a region by
 * ibv_reg_mr() (IBK_MEM_MR), ibv_alloc_mr() (IBK_MEM_MR_FAST) or a window by
 * ibv_alloc_mw().
 *
 * Else sets the state it starts in and returns IBK_MEMOP_OK: a region VALID, a
 * fast-register region FREE until its first REG_MR (rxe_mr_init_fast()), a
 * type 1 window VALID and unbound, a type 2 window FREE (rxe_alloc_mw()); no
 * window bound to a region, the QP and MR index cleared, and a window's range
 * and access.
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_MEMOP_OK, having set the state; IBK_MEMOP_ERR_TYPE for an
 * unknown kind; IBK_MEMOP_ERR_ACCESS for a region whose access breaks
 * ibk_access_reg_ok().
 */
static inline enum ibk_memop_verdict ibk_mem_register(struct ibk_mem_attr *o)
{
	if (!ibk__mem_kind_valid(o->kind))
		return IBK_MEMOP_ERR_TYPE;
	if (!ibk__mem_is_window(o) && !ibk_access_reg_ok(o->access))
		return IBK_MEMOP_ERR_ACCESS;
	o->windows = 0;
	o->qpn = 0;
	o->mr_index = 0;
	if (ibk__mem_is_window(o))
		ibk__mw_clear(o);
	o->state = o->kind == IBK_MEM_MR || o->kind == IBK_MEM_MW1 ?
		   IBK_MEM_VALID : IBK_MEM_FREE;
	return IBK_MEMOP_OK;
}

/**
 * ibk_mr_rereg() - Re-registration of region *@mr (ibv_rereg_mr()) with the
 * attributes of @next, under a new key
 * @mr: the memory region, updated on success
 * @next: the attributes to take on
 *
 * Else copies next's key, PD, access, address and length into *@mr, keeps it
 * VALID, returns IBK_MEMOP_OK.
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_MEMOP_ERR_KEY unless *@mr is a live object; IBK_MEMOP_ERR_TYPE
 * unless it is an IBK_MEM_MR; IBK_MEMOP_ERR_INDEX if next->rkey names another
 * index; IBK_MEMOP_ERR_SAME_KEY if it keeps the key byte (the old key must
 * miss from now on: ibk_rkey_next() gives one that does);
 * IBK_MEMOP_ERR_WINDOWS_BOUND while windows are bound (they were bound to the
 * old translation: the library's rule); IBK_MEMOP_ERR_ACCESS if next->access
 * breaks ibk_access_reg_ok().
 */
static inline enum ibk_memop_verdict
ibk_mr_rereg(struct ibk_mem_attr *mr, const struct ibk_mem_attr *next)
{
	if (mr->state == IBK_MEM_INVALID)
		return IBK_MEMOP_ERR_KEY;
	if (mr->kind != IBK_MEM_MR)
		return IBK_MEMOP_ERR_TYPE;
	if (ibk_rkey_index(next->rkey) != ibk_rkey_index(mr->rkey))
		return IBK_MEMOP_ERR_INDEX;
	if (next->rkey == mr->rkey)
		return IBK_MEMOP_ERR_SAME_KEY;
	if (mr->windows != 0)
		return IBK_MEMOP_ERR_WINDOWS_BOUND;
	if (!ibk_access_reg_ok(next->access))
		return IBK_MEMOP_ERR_ACCESS;
	mr->rkey = next->rkey;
	mr->pd = next->pd;
	mr->access = next->access;
	mr->addr = next->addr;
	mr->length = next->length;
	mr->state = IBK_MEM_VALID;
	return IBK_MEMOP_OK;
}

/**
 * ibk_mr_fast_reg() - A REG_MR work request on a fast-register region
 * @mr: the memory region, updated on success
 * @qp_pd: the PD of the QP that posted the work request
 * @next: the attributes to take on
 *
 * A REG_MR work request (fast register) on region *@mr, posted on a QP in
 * protection domain @qp_pd, with the key, access, address and length of @next
 * (rxe_reg_fast_mr()).
 *
 * Else applies them, makes it VALID and returns IBK_MEMOP_OK. A failed REG_MR
 * completes with IBK_WC_LOC_QP_OP_ERR.
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_MEMOP_ERR_KEY unless *@mr is a live object; IBK_MEMOP_ERR_TYPE
 * unless it is an IBK_MEM_MR_FAST; IBK_MEMOP_ERR_STATE unless it is FREE (a
 * valid region must be invalidated first); IBK_MEMOP_ERR_PD unless @qp_pd is
 * its PD; IBK_MEMOP_ERR_INDEX if next->rkey names another index (the consumer
 * owns only the key byte); IBK_MEMOP_ERR_ACCESS if next->access breaks
 * ibk_access_reg_ok().
 */
static inline enum ibk_memop_verdict
ibk_mr_fast_reg(struct ibk_mem_attr *mr, uint32_t qp_pd,
		const struct ibk_mem_attr *next)
{
	if (mr->state == IBK_MEM_INVALID)
		return IBK_MEMOP_ERR_KEY;
	if (mr->kind != IBK_MEM_MR_FAST)
		return IBK_MEMOP_ERR_TYPE;
	if (mr->state != IBK_MEM_FREE)
		return IBK_MEMOP_ERR_STATE;
	if (qp_pd != mr->pd)
		return IBK_MEMOP_ERR_PD;
	if (ibk_rkey_index(next->rkey) != ibk_rkey_index(mr->rkey))
		return IBK_MEMOP_ERR_INDEX;
	if (!ibk_access_reg_ok(next->access))
		return IBK_MEMOP_ERR_ACCESS;
	mr->rkey = next->rkey;
	mr->access = next->access;
	mr->addr = next->addr;
	mr->length = next->length;
	mr->state = IBK_MEM_VALID;
	return IBK_MEMOP_OK;
}

/**
 * struct ibk_mw_bind_wr - A bind work request (IBV_WR_BIND_MW, or
 * ibv_bind_mw() for type 1)
 * @addr: where the window starts in the MR
 * @length: 0 unbinds a type 1 window
 * @mw_rkey: the window's current key
 * @mr_lkey: the MR's L_Key (unused when length is 0)
 * @access: IBK_ACCESS_MW_FLAGS
 * @qpn: the QP posting it
 * @qp_pd: that QP's protection domain
 * @key_byte: the window's key byte once bound
 */
struct ibk_mw_bind_wr {
	uint64_t addr;
	uint64_t length;
	ibk_rkey_t mw_rkey;
	ibk_rkey_t mr_lkey;
	uint32_t access;
	uint32_t qpn;
	uint32_t qp_pd;
	uint8_t key_byte;
};

/*
 * Bind rules on the MR (rxe_check_bind_mw(), for a bind with an MR). The
 * window must lie in the MR (C10-75: a window covers a subset of the MR,
 * ibv_alloc_mw(3)), zero-based or not: wr->addr is where it starts in the
 * MR either way (rxe_do_bind_mw() keeps it as the window's addr, and a
 * zero-based window's offsets count from there). rxe tests only a
 * zero-based window's length against the MR's, so there a window bound
 * at 0x90000 to an MR at [0x20000, 0x21000) binds, and only the access
 * check stops what it reaches.
 */
static inline enum ibk_memop_verdict
ibk__mw_bind_mr_verdict(const struct ibk_mem_attr *mw,
			const struct ibk_mem_attr *mr,
			const struct ibk_mw_bind_wr *wr)
{
	if (mr->pd != mw->pd)		/* "Check PDs for memory window binds" */
		return IBK_MEMOP_ERR_MR_PD;
	if (mr->access & IBK_ACCESS_ZERO_BASED)
		return IBK_MEMOP_ERR_MR_ZERO_BASED;
	if (!(mr->access & IBK_ACCESS_MW_BIND))			/* C10-73 */
		return IBK_MEMOP_ERR_MR_BIND;
	if ((wr->access & (IBK_ACCESS_REMOTE_WRITE | IBK_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IBK_ACCESS_LOCAL_WRITE))		/* C10-74 */
		return IBK_MEMOP_ERR_MR_LOCAL_WRITE;
	return ibk_mem_range_ok(wr->addr, wr->length, mr->addr, mr->length) ?
	       IBK_MEMOP_OK : IBK_MEMOP_ERR_RANGE;		/* C10-75 */
}

/**
 * ibk_mw_bind_check() - The rules of a window bind, in rxe's order
 * @mw: the memory window
 * @mr: the region wr->mr_lkey names, NULL if none
 * @wr: the bind work request
 *
 * The rules of a bind (rxe_bind_mw(), rxe_check_bind_mw(), with the IBA rule
 * numbers rxe cites), in rxe's order.
 *
 * Type 1: IBK_MEMOP_ERR_STATE unless VALID, IBK_MEMOP_ERR_ZERO_BASED if
 * zero-based (o10-36.2.2). Type 2: IBK_MEMOP_ERR_STATE unless FREE
 * (o10-37.2.30). Both: IBK_MEMOP_ERR_PD unless the QP's PD is the window's
 * (C10-72; the verbs put the QP, the window and the MR of a bind in one
 * protection domain, and rxe checks it for both types since "RDMA/rxe: Check
 * PDs for memory window binds", 2026). Type 2: IBK_MEMOP_ERR_NO_MR for length
 * 0 (o10-37.2.40). With an MR: IBK_MEMOP_ERR_MR_PD unless it is in the
 * window's PD (same patch), IBK_MEMOP_ERR_MR_ZERO_BASED, IBK_MEMOP_ERR_MR_BIND
 * (C10-73), IBK_MEMOP_ERR_MR_LOCAL_WRITE for a remote write or atomic window
 * on an MR without local write (C10-74), IBK_MEMOP_ERR_RANGE unless the
 * window, zero-based or not, lies in the MR (C10-75, by ibk_mem_range_ok()).
 * Writes nothing. A failed bind completes with IBK_WC_MW_BIND_ERR.
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_MEMOP_ERR_KEY unless *@mw is live and wr->mw_rkey is its key;
 * IBK_MEMOP_ERR_TYPE unless it is a window; IBK_MEMOP_ERR_MR_KEY if wr->length
 * is not 0 and @mr is NULL or not a live region with key wr->mr_lkey;
 * IBK_MEMOP_ERR_ACCESS for a flag outside IBK_ACCESS_MW_FLAGS.
 */
static inline enum ibk_memop_verdict
ibk_mw_bind_check(const struct ibk_mem_attr *mw, const struct ibk_mem_attr *mr,
		  const struct ibk_mw_bind_wr *wr)
{
	if (mw->state == IBK_MEM_INVALID || mw->rkey != wr->mw_rkey)
		return IBK_MEMOP_ERR_KEY;
	if (!ibk__mem_is_window(mw))
		return IBK_MEMOP_ERR_TYPE;
	if (wr->length != 0 &&
	    (!mr || ibk__mem_is_window(mr) || mr->state == IBK_MEM_INVALID ||
	     mr->rkey != wr->mr_lkey))
		return IBK_MEMOP_ERR_MR_KEY;
	if (wr->access & ~IBK_ACCESS_MW_FLAGS)
		return IBK_MEMOP_ERR_ACCESS;
	if (mw->kind == IBK_MEM_MW1) {
		if (mw->state != IBK_MEM_VALID)
			return IBK_MEMOP_ERR_STATE;
		if (wr->access & IBK_ACCESS_ZERO_BASED)
			return IBK_MEMOP_ERR_ZERO_BASED;
	} else if (mw->state != IBK_MEM_FREE) {
		return IBK_MEMOP_ERR_STATE;
	}
	if (wr->qp_pd != mw->pd)
		return IBK_MEMOP_ERR_PD;
	if (mw->kind == IBK_MEM_MW2 && wr->length == 0)
		return IBK_MEMOP_ERR_NO_MR;
	return wr->length ? ibk__mw_bind_mr_verdict(mw, mr, wr) : IBK_MEMOP_OK;
}

/**
 * ibk_mw_bind() - Binds a window after ibk_mw_bind_check() allowed it
 * @mw: the memory window, updated on success
 * @mr: the region wr->mr_lkey names, which gains the window; NULL if none
 * @old_mr: the region the window was bound to, which loses it; NULL if none
 * @wr: the bind work request
 *
 * Binds window *@mw as @wr asks, after ibk_mw_bind_check() with the same
 * arguments said IBK_MEMOP_OK, and returns what it said (rxe_do_bind_mw()):
 * the window takes the new key byte (its index stays), wr's access, address
 * and length, becomes VALID, is bound to @mr (type 2: and to wr's QP); a type
 * 1 window of length 0 is unbound.
 *
 * The windows counts move: *@old_mr (the region the window was bound to, NULL
 * if none) loses it, *@mr gains it. On any other verdict nothing changes.
 *
 * Context: Any context: touches only its arguments.
 * Return: the verdict of ibk_mw_bind_check(), which it applies first.
 */
static inline enum ibk_memop_verdict
ibk_mw_bind(struct ibk_mem_attr *mw, struct ibk_mem_attr *mr,
	    struct ibk_mem_attr *old_mr, const struct ibk_mw_bind_wr *wr)
{
	enum ibk_memop_verdict v = ibk_mw_bind_check(mw, mr, wr);

	if (v != IBK_MEMOP_OK)
		return v;
	if (old_mr && old_mr->windows)
		old_mr->windows--;
	ibk__mw_clear(mw);
	mw->rkey = ibk_rkey_make(ibk_rkey_index(mw->rkey), wr->key_byte);
	mw->state = IBK_MEM_VALID;
	if (wr->length == 0)
		return v;
	mw->access = wr->access;
	mw->addr = wr->addr;
	mw->length = wr->length;
	mw->mr_index = ibk_rkey_index(mr->rkey);
	if (mw->kind == IBK_MEM_MW2)
		mw->qpn = wr->qpn;
	mr->windows++;
	return v;
}

/* True if *@o is live and @key is its current key: what every operation
 * by key asks first. */
static inline bool ibk__mem_named(const struct ibk_mem_attr *o,
				  ibk_rkey_t key)
{
	return o->state != IBK_MEM_INVALID && o->rkey == key;
}

/**
 * ibk_mem_invalidate() - Invalidates a region or window named by its key
 * @o: the object, updated on success
 * @mr: for a bound window, the region it is bound to, which loses it; NULL
 *      if none
 * @key: an L_Key or R_Key
 *
 * Invalidation of the object *@o names by @key: a LOCAL_INV work request, or a
 * remote SEND with invalidate naming it in its IETH.
 *
 * A window (rxe_invalidate_mw()): IBK_MEMOP_ERR_TYPE for type 1 (o10-37.2.26),
 * IBK_MEMOP_ERR_STATE unless VALID (rxe refuses only INVALID); then FREE,
 * unbound, and *@mr, the region it was bound to, loses it. A region
 * (rxe_invalidate_mr()): IBK_MEMOP_ERR_WINDOWS_BOUND while windows are bound,
 * IBK_MEMOP_ERR_TYPE unless a fast-register region; then FREE (@mr is not
 * used). A failed LOCAL_INV completes with IBK_WC_LOC_QP_OP_ERR; a failed SEND
 * with invalidate completes the receive with IBK_WC_REM_INV_REQ_ERR and moves
 * the QP to error. For a SEND with invalidate, ibk_mem_invalidate_remote()
 * checks the receiving QP first.
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_MEMOP_OK, or the verdict of the first rule above that the
 * invalidation breaks.
 */
static inline enum ibk_memop_verdict
ibk_mem_invalidate(struct ibk_mem_attr *o, struct ibk_mem_attr *mr,
		   ibk_rkey_t key)
{
	if (!ibk__mem_named(o, key))
		return IBK_MEMOP_ERR_KEY;
	if (ibk__mem_is_window(o)) {
		if (o->kind == IBK_MEM_MW1)
			return IBK_MEMOP_ERR_TYPE;
		if (o->state != IBK_MEM_VALID)
			return IBK_MEMOP_ERR_STATE;
		if (mr && mr->windows)
			mr->windows--;
		ibk__mw_clear(o);
	} else {
		if (o->windows != 0)
			return IBK_MEMOP_ERR_WINDOWS_BOUND;
		if (o->kind != IBK_MEM_MR_FAST)
			return IBK_MEMOP_ERR_TYPE;
	}
	o->state = IBK_MEM_FREE;
	return IBK_MEMOP_OK;
}

/**
 * ibk_mem_invalidate_remote() - ibk_mem_invalidate() for a SEND with
 * invalidate received on @qp
 * @o: the object, updated on success
 * @mr: for a bound window, the region it is bound to, which loses it; NULL
 *      if none
 * @key: an L_Key or R_Key
 * @qp: the QP the request arrived on: its PD and number
 *
 * A remote peer may invalidate only what it could access through this QP: a
 * type 2 window serves only the QP it was bound to (rxe_lookup_mw() refuses
 * RDMA through it from any other, as ibk_mem_check() does), and no object
 * serves a QP of another PD. rxe (Linux 6.1 rxe_invalidate_mw(),
 * rxe_invalidate_mr()) checks neither, so there a peer on any QP of the device
 * invalidates any key it guesses: the library is stricter on purpose, by that
 * reasoning; the IBA's own clause on it was not among the sources read. @qp
 * must be valid.
 *
 * Context: Any context: touches only its arguments.
 * Return: as ibk_mem_invalidate(), but the object must also be in the QP's PD
 * (IBK_MEMOP_ERR_PD), and a bound type 2 window must be bound to this QP
 * (IBK_MEMOP_ERR_WINDOW_QP), checked after the key and before the rest.
 */
static inline enum ibk_memop_verdict
ibk_mem_invalidate_remote(struct ibk_mem_attr *o, struct ibk_mem_attr *mr,
			  ibk_rkey_t key, const struct ibk_mem_qp *qp)
{
	if (!ibk__mem_named(o, key))
		return IBK_MEMOP_ERR_KEY;
	if (o->pd != qp->pd)
		return IBK_MEMOP_ERR_PD;
	if (o->kind == IBK_MEM_MW2 && o->state == IBK_MEM_VALID &&
	    o->qpn != qp->qpn)
		return IBK_MEMOP_ERR_WINDOW_QP;
	return ibk_mem_invalidate(o, mr, key);
}

/**
 * ibk_mem_deregister() - Deregisters a region or deallocates a window
 * @o: the object, updated on success
 * @mr: for a bound window, the region it is bound to, which loses it; NULL
 *      if none
 * @key: an L_Key or R_Key
 *
 * Deregistration of region *@o (ibv_dereg_mr()) or deallocation of window *@o
 * (ibv_dealloc_mw()), named by @key.
 *
 * Else the object becomes INVALID, its index free; a bound window's region
 * *@mr loses it (rxe_mw_cleanup()).
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_MEMOP_ERR_KEY unless *@o is live and @key is its key; a region
 * with windows bound: IBK_MEMOP_ERR_WINDOWS_BOUND (rxe_dereg_mr()).
 */
static inline enum ibk_memop_verdict
ibk_mem_deregister(struct ibk_mem_attr *o, struct ibk_mem_attr *mr,
		   ibk_rkey_t key)
{
	if (!ibk__mem_named(o, key))
		return IBK_MEMOP_ERR_KEY;
	if (!ibk__mem_is_window(o) && o->windows != 0)
		return IBK_MEMOP_ERR_WINDOWS_BOUND;
	if (ibk__mem_is_window(o) && o->length != 0 && mr && mr->windows)
		mr->windows--;
	o->state = IBK_MEM_INVALID;
	return IBK_MEMOP_OK;
}

/* ------------------------------------------------------------------------
 * Subnet management (IBA 13.4 MADs, 14.2 the SMA: M_Key, PortInfo,
 * P_KeyTable, GUIDInfo, Notices)
 *
 * The subnet manager (SM) programs every port with subnet management
 * packets (SMPs): 256-byte MADs on QP0, LID-routed (class 0x01) or
 * directed-route (0x81). The port's subnet management agent (SMA), in a
 * NIC's or a switch's firmware or in a soft stack, answers them. This
 * section holds what an SMA needs that is a pure function of bytes and
 * values: the MAD and SMP header fields, the checks a received SMP passes
 * before it is acted on (ibk_smp_request_status(), then the M_Key check
 * ibk_mkey_check()), the reply, the PortInfo fields around the keys, the
 * P_KeyTable (32 P_Keys) and GUIDInfo (8 GUIDs) blocks the SM writes the
 * port's tables with, and the security Notices a port raises: trap 256
 * (bad M_Key), 257 (bad P_Key), 258 (bad Q_Key), with their rate limit.
 * ib_tables.h applies the blocks to the cached tables, answers SubnGet
 * from them and counts M_Key violations beside the P_Key and Q_Key ones.
 *
 * The rules follow the Linux kernel's software SMAs (qib_mad.c and hfi1
 * mad.c: check_mkey(), process_subn(), subn_*_pkeytable(), the bad_*key
 * traps), OpenSM's include/iba/ib_types.h and libibmad's fields.c, which
 * the tests compare every field with. Limits: the directed-route hop
 * handling (hop pointer, path checks) is the SMI's job before the SMA's
 * and is not here; only the InfiniBand layouts are: OPA's (hfi1's)
 * Notices and SMPs differ (32-bit LIDs, another 257/258 layout). Times
 * are nanoseconds the caller passes in; nothing here reads a clock.
 *
 *	int st = ibk_smp_request_status(mad, len);	// < 0: no reply
 *	struct ibk_trap_256 t;
 *
 *	if (st == 0 && ibk_mkey_check(&mkey, ibk_mad_method(mad),
 *				      ibk_smp_mkey(mad), now_ns) ==
 *		       IBK_MKEY_VIOLATION) {	// no reply; count; trap 256
 *		ibk_trap_256_from_smp(mad, lrh_slid, &t);
 *		ibk_notice_build_256(IBK_NOTICE_PRODUCER_CA, my_lid, &t,
 *				     notice);
 *		return;
 *	}
 *	...					// answer the attribute: st
 *	if (st >= 0 && ibk_smp_make_reply(mad, (uint16_t)st) == IBK_OK)
 *		send(mad);
 *
 * API:
 *	ibk_mad_base_version(mad)
 *	ibk_mad_set_base_version(mad, v)
 *	ibk_mad_mgmt_class(mad)
 *	ibk_mad_set_mgmt_class(mad, mgmt_class)
 *	ibk_mad_class_version(mad)
 *	ibk_mad_set_class_version(mad, v)
 *	ibk_mad_method(mad)
 *	ibk_mad_set_method(mad, method)
 *	ibk_mad_status(mad)
 *	ibk_mad_set_status(mad, status)
 *	ibk_mad_tid(mad)
 *	ibk_mad_set_tid(mad, tid)
 *	ibk_mad_attr_id(mad)
 *	ibk_mad_set_attr_id(mad, attr_id)
 *	ibk_mad_attr_mod(mad)
 *	ibk_mad_set_attr_mod(mad, attr_mod)
 *	ibk_smp_hop_ptr(smp)
 *	ibk_smp_set_hop_ptr(smp, hop_ptr)
 *	ibk_smp_hop_cnt(smp)
 *	ibk_smp_set_hop_cnt(smp, hop_cnt)
 *	ibk_smp_mkey(smp)
 *	ibk_smp_set_mkey(smp, mkey)
 *	ibk_smp_dr_slid(smp)
 *	ibk_smp_set_dr_slid(smp, lid)
 *	ibk_smp_dr_dlid(smp)
 *	ibk_smp_set_dr_dlid(smp, lid)
 *	ibk_smp_data(smp)
 *	ibk_smp_data_mut(smp)
 *	ibk_smp_is_dr(smp)
 *	ibk_smp_request_status(mad, len)
 *	ibk_smp_make_reply(smp, status)
 *	ibk_mkey_verdict_name(v)
 *	ibk_mkey_check(st, method, smp_mkey, now_ns)
 *	ibk_portinfo_mkey(pi)
 *	ibk_portinfo_set_mkey(pi, mkey)
 *	ibk_portinfo_gid_prefix(pi)
 *	ibk_portinfo_set_gid_prefix(pi, prefix)
 *	ibk_portinfo_lid(pi)
 *	ibk_portinfo_set_lid(pi, lid)
 *	ibk_portinfo_master_sm_lid(pi)
 *	ibk_portinfo_set_master_sm_lid(pi, lid)
 *	ibk_portinfo_cap_mask(pi)
 *	ibk_portinfo_set_cap_mask(pi, mask)
 *	ibk_portinfo_mkey_lease_period(pi)
 *	ibk_portinfo_set_mkey_lease_period(pi, s)
 *	ibk_portinfo_mkey_protect_bits(pi)
 *	ibk_portinfo_set_mkey_protect_bits(pi, bits)
 *	ibk_portinfo_enforcement(pi)
 *	ibk_portinfo_set_enforcement(pi, bits)
 *	ibk_portinfo_mkey_violations(pi)
 *	ibk_portinfo_set_mkey_violations(pi, n)
 *	ibk_portinfo_pkey_violations(pi)
 *	ibk_portinfo_set_pkey_violations(pi, n)
 *	ibk_portinfo_qkey_violations(pi)
 *	ibk_portinfo_set_qkey_violations(pi, n)
 *	ibk_portinfo_guid_cap(pi)
 *	ibk_portinfo_set_guid_cap(pi, cap)
 *	ibk_portinfo_client_rereg(pi)
 *	ibk_portinfo_set_client_rereg(pi, rereg)
 *	ibk_portinfo_subnet_timeout(pi)
 *	ibk_portinfo_set_subnet_timeout(pi, t)
 *	ibk_pkeytable_mod_block(attr_mod)
 *	ibk_pkeytable_mod_port(attr_mod)
 *	ibk_pkeytable_mod(block, port)
 *	ibk_guidinfo_mod_block(attr_mod)
 *	ibk_pkey_block_get(data, i)
 *	ibk_pkey_block_set(data, i, pkey)
 *	ibk_guid_block_get(data, i)
 *	ibk_guid_block_set(data, i, guid)
 *	ibk_pkey_block_decode(data, pkeys)
 *	ibk_pkey_block_encode(pkeys, data)
 *	ibk_guid_block_decode(data, guids)
 *	ibk_guid_block_encode(guids, data)
 *	ibk_notice_is_generic(n)
 *	ibk_notice_set_generic(n, generic)
 *	ibk_notice_type(n)
 *	ibk_notice_set_type(n, type)
 *	ibk_notice_producer(n)
 *	ibk_notice_set_producer(n, producer)
 *	ibk_notice_trap_number(n)
 *	ibk_notice_set_trap_number(n, trap)
 *	ibk_notice_issuer_lid(n)
 *	ibk_notice_set_issuer_lid(n, lid)
 *	ibk_notice_toggle(n)
 *	ibk_notice_set_toggle(n, toggle)
 *	ibk_notice_count(n)
 *	ibk_notice_set_count(n, count)
 *	ibk_notice_init(type, producer, trap_number, issuer_lid, notice)
 *	ibk_notice_build_256(producer, issuer_lid, trap, notice)
 *	ibk_trap_256_from_smp(smp, lid, trap)
 *	ibk_notice_parse_256(notice, trap)
 *	ibk_notice_build_key_trap(trap_number, producer, issuer_lid, trap, notice)
 *	ibk_notice_parse_key_trap(notice, trap)
 *	ibk_trap_key_from_headers(h, trap_number, trap)
 *	ibk_trap_interval_ns(subnet_timeout)
 *	ibk_trap_rate_ok(now_ns, last_ns, sent_before, subnet_timeout)
 * ------------------------------------------------------------------------ */

#define IBK_MAD_LEN		256	/* every SMP, LID-routed or directed */
#define IBK_MAD_BASE_VERSION	1
#define IBK_SMP_CLASS_VERSION	1
#define IBK_SMP_DATA_OFFSET	64	/* the attribute: 64 bytes */
#define IBK_SMP_DATA_LEN	64
#define IBK_SMP_INITIAL_PATH	128	/* directed route only, 64 bytes */
#define IBK_SMP_RETURN_PATH	192	/* directed route only, 64 bytes */
#define IBK_SMP_MAX_HOPS	63	/* a path of 64 bytes, byte 0 unused */

/* Management classes of SMPs (IBA 13.4.4). */
#define IBK_MGMT_CLASS_SUBN_LID	0x01	/* LID-routed */
#define IBK_MGMT_CLASS_SUBN_DR	0x81	/* directed route */

/* MAD methods (IBA 13.4.5); bit 7 marks a response. */
#define IBK_MAD_METHOD_GET		0x01
#define IBK_MAD_METHOD_SET		0x02
#define IBK_MAD_METHOD_SEND		0x03
#define IBK_MAD_METHOD_TRAP		0x05
#define IBK_MAD_METHOD_REPORT		0x06
#define IBK_MAD_METHOD_TRAP_REPRESS	0x07
#define IBK_MAD_METHOD_RESP		0x80
#define IBK_MAD_METHOD_GET_RESP		0x81
#define IBK_MAD_METHOD_REPORT_RESP	0x86

/* SMP attribute IDs (IBA 14.2.5; ib_smi.h, ib_types.h). */
#define IBK_SMP_ATTR_NOTICE		0x0002
#define IBK_SMP_ATTR_NODE_INFO		0x0011
#define IBK_SMP_ATTR_SWITCH_INFO	0x0012
#define IBK_SMP_ATTR_GUID_INFO		0x0014
#define IBK_SMP_ATTR_PORT_INFO		0x0015
#define IBK_SMP_ATTR_PKEY_TABLE		0x0016

/* MAD status values an SMA answers with (IBA 13.4.7; qib_mad.h); each
 * one ibk_sma_answer_table() returns, ibk_strerror() names. */
#define IBK_MAD_STATUS_OK			0x0000
#define IBK_MAD_STATUS_BAD_VERSION		0x0004
#define IBK_MAD_STATUS_UNSUP_METHOD		0x0008
#define IBK_MAD_STATUS_UNSUP_METHOD_ATTR	0x000c
#define IBK_MAD_STATUS_INVALID_FIELD		0x001c
/* Directed route: the D bit of the status field, set in returning SMPs. */
#define IBK_SMP_DIRECTION			0x8000

/*
 * MAD base header, 24 bytes: BaseVersion @0; MgmtClass @1; ClassVersion
 * @2; R 0x80 | Method @3; Status @4-5; ClassSpecific @6-7 (for a
 * directed-route SMP: hop pointer @6, hop count @7); TID @8-15;
 * AttributeID @16-17; reserved @18-19; AttributeModifier @20-23. An SMP
 * goes on: M_Key @24-31; DrSLID @32-33 and DrDLID @34-35 (directed route;
 * reserved in a LID-routed SMP); reserved to @63; the attribute @64-127;
 * initial path @128-191 and return path @192-255 (directed route).
 */

/**
 * ibk_mad_base_version() - The MAD's baseVersion: 1 for every MAD an SMA
 * answers
 * @mad: the MAD, 256 bytes (its common header first), any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_mad_base_version(const void *mad)
{
	return ((const uint8_t *)mad)[0];
}

/**
 * ibk_mad_set_base_version() - Sets the MAD's baseVersion: 1 for every MAD an
 * SMA answers
 * @mad: the MAD to write, 256 bytes, any alignment
 * @v: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_mad_set_base_version(void *mad, uint8_t v)
{
	((uint8_t *)mad)[0] = v;
}

/**
 * ibk_mad_mgmt_class() - The MAD's mgmtClass: IBK_MGMT_CLASS_SUBN_LID or _DR
 * for an SMP
 * @mad: the MAD, 256 bytes (its common header first), any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_mad_mgmt_class(const void *mad)
{
	return ((const uint8_t *)mad)[1];
}

/**
 * ibk_mad_set_mgmt_class() - Sets the MAD's mgmtClass: IBK_MGMT_CLASS_SUBN_LID
 * or _DR for an SMP
 * @mad: the MAD to write, 256 bytes, any alignment
 * @mgmt_class: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_mad_set_mgmt_class(void *mad, uint8_t mgmt_class)
{
	((uint8_t *)mad)[1] = mgmt_class;
}

/**
 * ibk_mad_class_version() - The MAD's classVersion: 1 for SMPs
 * @mad: the MAD, 256 bytes (its common header first), any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_mad_class_version(const void *mad)
{
	return ((const uint8_t *)mad)[2];
}

/**
 * ibk_mad_set_class_version() - Sets the MAD's classVersion: 1 for SMPs
 * @mad: the MAD to write, 256 bytes, any alignment
 * @v: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_mad_set_class_version(void *mad, uint8_t v)
{
	((uint8_t *)mad)[2] = v;
}

/**
 * ibk_mad_method() - The MAD's whole method byte, the response bit 0x80
 * included (GetResp 0x81)
 * @mad: the MAD, 256 bytes (its common header first), any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_mad_method(const void *mad)
{
	return ((const uint8_t *)mad)[3];
}

/**
 * ibk_mad_set_method() - Sets the MAD's whole method byte, the response bit
 * 0x80 included (GetResp 0x81)
 * @mad: the MAD to write, 256 bytes, any alignment
 * @method: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_mad_set_method(void *mad, uint8_t method)
{
	((uint8_t *)mad)[3] = method;
}

/**
 * ibk_mad_status() - The MAD's 16-bit status, the directed-route D bit
 * included
 * @mad: the MAD, 256 bytes (its common header first), any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint16_t ibk_mad_status(const void *mad)
{
	return ibk__load_be16((const uint8_t *)mad + 4);
}

/**
 * ibk_mad_set_status() - Sets the MAD's 16-bit status, the directed-route D
 * bit included
 * @mad: the MAD to write, 256 bytes, any alignment
 * @status: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_mad_set_status(void *mad, uint16_t status)
{
	ibk__store_be16((uint8_t *)mad + 4, status);
}

/**
 * ibk_mad_tid() - The MAD's transaction ID: a reply carries the request's
 * @mad: the MAD, 256 bytes (its common header first), any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint64_t ibk_mad_tid(const void *mad)
{
	return ibk__load_be64((const uint8_t *)mad + 8);
}

/**
 * ibk_mad_set_tid() - Sets the MAD's transaction ID: a reply carries the
 * request's
 * @mad: the MAD to write, 256 bytes, any alignment
 * @tid: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_mad_set_tid(void *mad, uint64_t tid)
{
	ibk__store_be64((uint8_t *)mad + 8, tid);
}

/**
 * ibk_mad_attr_id() - The MAD's attributeID, one of IBK_SMP_ATTR_*
 * @mad: the MAD, 256 bytes (its common header first), any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint16_t ibk_mad_attr_id(const void *mad)
{
	return ibk__load_be16((const uint8_t *)mad + 16);
}

/**
 * ibk_mad_set_attr_id() - Sets the MAD's attributeID, one of IBK_SMP_ATTR_*
 * @mad: the MAD to write, 256 bytes, any alignment
 * @attr_id: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_mad_set_attr_id(void *mad, uint16_t attr_id)
{
	ibk__store_be16((uint8_t *)mad + 16, attr_id);
}

/**
 * ibk_mad_attr_mod() - The MAD's attributeModifier: which block, port or entry
 * the attribute is
 * @mad: the MAD, 256 bytes (its common header first), any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint32_t ibk_mad_attr_mod(const void *mad)
{
	return ibk__load_be32((const uint8_t *)mad + 20);
}

/**
 * ibk_mad_set_attr_mod() - Sets the MAD's attributeModifier: which block, port
 * or entry the attribute is
 * @mad: the MAD to write, 256 bytes, any alignment
 * @attr_mod: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_mad_set_attr_mod(void *mad, uint32_t attr_mod)
{
	ibk__store_be32((uint8_t *)mad + 20, attr_mod);
}

/**
 * ibk_smp_hop_ptr() - The SMP's directed route: the hop pointer, the index of
 * the current hop
 * @smp: the SMP, 256 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_smp_hop_ptr(const void *smp)
{
	return ((const uint8_t *)smp)[6];
}

/**
 * ibk_smp_set_hop_ptr() - Sets the SMP's directed route: the hop pointer, the
 * index of the current hop
 * @smp: the SMP, 256 bytes, any alignment, changed in place
 * @hop_ptr: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_smp_set_hop_ptr(void *smp, uint8_t hop_ptr)
{
	((uint8_t *)smp)[6] = hop_ptr;
}

/**
 * ibk_smp_hop_cnt() - The SMP's directed route: the number of hops of the path
 * (at most 63)
 * @smp: the SMP, 256 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_smp_hop_cnt(const void *smp)
{
	return ((const uint8_t *)smp)[7];
}

/**
 * ibk_smp_set_hop_cnt() - Sets the SMP's directed route: the number of hops of
 * the path (at most 63)
 * @smp: the SMP, 256 bytes, any alignment, changed in place
 * @hop_cnt: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_smp_set_hop_cnt(void *smp, uint8_t hop_cnt)
{
	((uint8_t *)smp)[7] = hop_cnt;
}

/**
 * ibk_smp_mkey() - The SMP's M_Key (IBA 14.2.4)
 * @smp: the SMP, 256 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint64_t ibk_smp_mkey(const void *smp)
{
	return ibk__load_be64((const uint8_t *)smp + 24);
}

/**
 * ibk_smp_set_mkey() - Sets the SMP's M_Key (IBA 14.2.4)
 * @smp: the SMP, 256 bytes, any alignment, changed in place
 * @mkey: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_smp_set_mkey(void *smp, uint64_t mkey)
{
	ibk__store_be64((uint8_t *)smp + 24, mkey);
}

/**
 * ibk_smp_dr_slid() - The SMP's directed route: the LID the LID-routed part
 * starts from
 * @smp: the SMP, 256 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint16_t ibk_smp_dr_slid(const void *smp)
{
	return ibk__load_be16((const uint8_t *)smp + 32);
}

/**
 * ibk_smp_set_dr_slid() - Sets the SMP's directed route: the LID the
 * LID-routed part starts from
 * @smp: the SMP, 256 bytes, any alignment, changed in place
 * @lid: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_smp_set_dr_slid(void *smp, uint16_t lid)
{
	ibk__store_be16((uint8_t *)smp + 32, lid);
}

/**
 * ibk_smp_dr_dlid() - The SMP's directed route: the LID the LID-routed part
 * ends at
 * @smp: the SMP, 256 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint16_t ibk_smp_dr_dlid(const void *smp)
{
	return ibk__load_be16((const uint8_t *)smp + 34);
}

/**
 * ibk_smp_set_dr_dlid() - Sets the SMP's directed route: the LID the
 * LID-routed part ends at
 * @smp: the SMP, 256 bytes, any alignment, changed in place
 * @lid: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_smp_set_dr_dlid(void *smp, uint16_t lid)
{
	ibk__store_be16((uint8_t *)smp + 34, lid);
}

/**
 * ibk_smp_data() - The SMP's 64-byte attribute
 * @smp: the SMP, 256 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the SMP's 64-byte attribute.
 */
static inline const uint8_t *ibk_smp_data(const void *smp)
{
	return (const uint8_t *)smp + IBK_SMP_DATA_OFFSET;
}

/**
 * ibk_smp_data_mut() - The SMP's 64-byte attribute, to write
 * @smp: the SMP, 256 bytes, any alignment, changed in place
 *
 * Context: Any context: touches only its arguments.
 * Return: a pointer to the SMP's 64-byte attribute, writable.
 */
static inline uint8_t *ibk_smp_data_mut(void *smp)
{
	return (uint8_t *)smp + IBK_SMP_DATA_OFFSET;
}

/**
 * ibk_smp_is_dr() - True for a directed-route SMP
 * @smp: the SMP, 256 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: true for a directed-route SMP.
 */
static inline bool ibk_smp_is_dr(const void *smp)
{
	return ibk_mad_mgmt_class(smp) == IBK_MGMT_CLASS_SUBN_DR;
}

/* A response, Trap, Report or Send: a message no SMA answers. */
static inline bool ibk__mad_is_no_request(uint8_t method)
{
	return (method & IBK_MAD_METHOD_RESP) || method == IBK_MAD_METHOD_TRAP ||
	       method == IBK_MAD_METHOD_REPORT || method == IBK_MAD_METHOD_SEND;
}

/**
 * ibk_smp_request_status() - The first check of a received SMP, before any
 * attribute
 * @mad: the MAD, 256 bytes (its common header first), any alignment
 * @len: the MAD's length in bytes
 *
 * What qib's process_subn() and the MAD layer check first. Responses, Traps,
 * Reports and Sends are recognised first, whatever their class version:
 * qib's process_subn() checks the version first and would answer a response
 * of another version with a status, a reply to a reply. This order never
 * does. Among requests the class version comes before the method, as in qib.
 *
 * Context: Any context: touches only its arguments.
 * Return: the first that applies:
 *
 *  - IBK_EINVAL, drop it: a NULL @mad, a length other than IBK_MAD_LEN, a
 *    base version other than 1, a class that is not an SMP class, or a
 *    directed-route hop count above IBK_SMP_MAX_HOPS (the Linux SMI discards
 *    those);
 *  - IBK_ENOENT, hand it on without a reply: a response (method bit 7),
 *    Trap, Report or Send. Answering a response would loop; qib's SMA passes
 *    them back for normal processing and never replies;
 *  - IBK_MAD_STATUS_BAD_VERSION: a class version other than 1; reply with it
 *    (ibk_smp_make_reply());
 *  - IBK_MAD_STATUS_UNSUP_METHOD: a method that is no SMP method; reply;
 *  - 0 for Get, Set and TrapRepress: check the M_Key next.
 */
static inline int ibk_smp_request_status(const void *mad, size_t len)
{
	uint8_t mclass, method;

	if (!mad || len != IBK_MAD_LEN ||
	    ibk_mad_base_version(mad) != IBK_MAD_BASE_VERSION)
		return IBK_EINVAL;
	mclass = ibk_mad_mgmt_class(mad);
	if (mclass != IBK_MGMT_CLASS_SUBN_LID &&
	    mclass != IBK_MGMT_CLASS_SUBN_DR)
		return IBK_EINVAL;
	if (mclass == IBK_MGMT_CLASS_SUBN_DR &&
	    ibk_smp_hop_cnt(mad) > IBK_SMP_MAX_HOPS)
		return IBK_EINVAL;
	method = ibk_mad_method(mad);
	if (ibk__mad_is_no_request(method))
		return IBK_ENOENT;
	if (ibk_mad_class_version(mad) != IBK_SMP_CLASS_VERSION)
		return IBK_MAD_STATUS_BAD_VERSION;
	if (method != IBK_MAD_METHOD_GET && method != IBK_MAD_METHOD_SET &&
	    method != IBK_MAD_METHOD_TRAP_REPRESS)
		return IBK_MAD_STATUS_UNSUP_METHOD;
	return 0;
}

/**
 * ibk_smp_make_reply() - Turns a request SMP into its reply, in place
 * @smp: the SMP, 256 bytes, any alignment, changed in place
 * @status: the MAD status
 *
 * Turns the request @smp, in place, into its reply with @status added, as
 * qib's reply() does: method GetResp, status |= @status, and the D bit for a
 * directed-route SMP; every other byte (TID, attribute, M_Key, paths) stays
 * the request's.
 *
 * The SMI then turns the hop pointer of a directed-route reply around; that is
 * not done here.
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_OK; IBK_EINVAL, changing nothing, for a NULL @smp or a method
 * that is never answered: a response, Trap, Report, Send and TrapRepress ("the
 * SMA shall not send any message in response to a valid SubnTrapRepress",
 * o14-3.a4).
 */
static inline int ibk_smp_make_reply(void *smp, uint16_t status)
{
	uint8_t method;

	if (!smp)
		return IBK_EINVAL;
	method = ibk_mad_method(smp);
	if (ibk__mad_is_no_request(method) ||
	    method == IBK_MAD_METHOD_TRAP_REPRESS)
		return IBK_EINVAL;
	if (ibk_smp_is_dr(smp))
		status |= IBK_SMP_DIRECTION;
	ibk_mad_set_method(smp, IBK_MAD_METHOD_GET_RESP);
	ibk_mad_set_status(smp, (uint16_t)(ibk_mad_status(smp) | status));
	return IBK_OK;
}

/**
 * struct ibk_mkey_state - The M_Key check (IBA 14.2.4), as the kernel's soft
 * SMAs make it (qib and hfi1 check_mkey())
 * @mkey: PortInfo M_Key; 0: no protection
 * @lease_deadline_ns: while lease_running
 * @lease_period: M_KeyLeasePeriod, s; 0: never expires
 * @protect_bits: M_KeyProtectBits 0-3; 3 acts as 2
 * @lease_running: a lease started by a violation runs until lease_deadline_ns
 *
 * A port's M_Key state; the SMA keeps it, one writer, and SubnSet(PortInfo)
 * with a good key writes its first three fields.
 */
struct ibk_mkey_state {
	uint64_t mkey;
	uint64_t lease_deadline_ns;
	uint16_t lease_period;
	uint8_t  protect_bits;
	bool     lease_running;
};

/**
 * enum ibk_mkey_verdict - What an SMA does with an SMP after ibk_mkey_check()
 * @IBK_MKEY_PROCESS: act on the SMP, reply as usual
 * @IBK_MKEY_PROCESS_HIDE_MKEY: Get at level 1 with another key: answer,
 * PortInfo M_Key as 0
 * @IBK_MKEY_VIOLATION: drop, no reply; count; trap 256
 */
enum ibk_mkey_verdict {
	IBK_MKEY_PROCESS = 0,
	IBK_MKEY_PROCESS_HIDE_MKEY = 1,
	IBK_MKEY_VIOLATION = 2,
};

/**
 * ibk_mkey_verdict_name() - Constant name of a verdict; "unknown" for a value
 * outside the enum
 * @v: a verdict
 *
 * Context: Any context: touches only its arguments.
 * Return: constant text, never NULL.
 */
static inline const char *ibk_mkey_verdict_name(enum ibk_mkey_verdict v)
{
	switch (v) {
	case IBK_MKEY_PROCESS:		 return "process";
	case IBK_MKEY_PROCESS_HIDE_MKEY: return "process-hide-mkey";
	case IBK_MKEY_VIOLATION:	 return "violation";
	default:			 return "unknown";
	}
}

/*
 * @s seconds in nanoseconds, s * 10^9 = (s * 15625) * 125 * 2^9, with no
 * product beyond 32 bits: Cortex-M0 has no 64-bit multiply and would call
 * libgcc's __aeabi_lmul, which firmware does not link.
 */
static inline uint64_t ibk__seconds_to_ns(uint16_t s)
{
	uint32_t a = (uint32_t)s * 15625u;		/* < 2^30 */
	uint64_t hi = (uint64_t)((a >> 16) * 125u) << 16;
	uint64_t lo = (a & 0xffffu) * 125u;

	return (hi + lo) << 9;
}

/* True once @now_ns has reached @deadline_ns, across a wrap of the clock
 * (the kernel's time_after_eq()). */
static inline bool ibk__time_reached(uint64_t now_ns, uint64_t deadline_ns)
{
	return now_ns - deadline_ns < UINT64_C(1) << 63;	/* wraps on purpose */
}

/**
 * ibk_mkey_check() - What the SMA does with an SMP, by its M_Key, updating
 * the lease
 * @st: the port's M_Key state (key, protect bits, lease), updated by the
 *      check; protect bits above 3 are read as their low 2 bits
 * @method: the SMP's method
 * @smp_mkey: the SMP's M_Key, host order
 * @now_ns: when the SMP was received, in ns of any monotonic clock
 *
 * The rules of qib's and hfi1's check_mkey():
 *
 *  1. A running lease whose deadline has passed ends first: the protect
 *     bits drop to 0 (the M_Key stays). The expiry is found here, when
 *     the next SMP comes, not by a timer.
 *  2. The key is good if the port's M_Key is 0 or equals @smp_mkey. A
 *     good Get, Set or TrapRepress stops a running lease.
 *  3. A bad key on a Set or TrapRepress, or on a Get at protect level 2
 *     or 3, is IBK_MKEY_VIOLATION: drop the SMP without a reply (the
 *     requester times out), count it in M_KeyViolations, send trap 256;
 *     the lease starts (deadline now + period) unless it runs already or
 *     the period is 0.
 *  4. A bad key on a Get at level 1: IBK_MKEY_PROCESS_HIDE_MKEY, answer
 *     with PortInfo's M_Key as 0 (qib subn_get_portinfo()); at level 0:
 *     IBK_MKEY_PROCESS, the M_Key in clear.
 *  5. Every other method (GetResp, Trap, Report, Send, unknown ones) is
 *     IBK_MKEY_PROCESS: the M_Key guards only requests.
 *
 * Context: Any context; the caller serialises the uses of one @st (one SMA
 * per port).
 * Return: IBK_MKEY_PROCESS, IBK_MKEY_PROCESS_HIDE_MKEY or IBK_MKEY_VIOLATION,
 * as the rules above decide.
 */
static inline enum ibk_mkey_verdict
ibk_mkey_check(struct ibk_mkey_state *st, uint8_t method, uint64_t smp_mkey,
	       uint64_t now_ns)
{
	bool guarded = method == IBK_MAD_METHOD_GET ||
		       method == IBK_MAD_METHOD_SET ||
		       method == IBK_MAD_METHOD_TRAP_REPRESS;
	unsigned level;

	if (st->lease_running && ibk__time_reached(now_ns,
						   st->lease_deadline_ns)) {
		st->lease_running = false;
		st->protect_bits = 0;
	}
	level = st->protect_bits & 3u;
	if (!guarded)
		return IBK_MKEY_PROCESS;
	if (st->mkey == 0 || st->mkey == smp_mkey) {
		st->lease_running = false;
		return IBK_MKEY_PROCESS;
	}
	if (method == IBK_MAD_METHOD_GET && level < 2)
		return level == 1 ? IBK_MKEY_PROCESS_HIDE_MKEY :
				    IBK_MKEY_PROCESS;
	if (!st->lease_running && st->lease_period != 0) {
		st->lease_deadline_ns = now_ns +	/* wraps with the clock */
					ibk__seconds_to_ns(st->lease_period);
		st->lease_running = true;
	}
	return IBK_MKEY_VIOLATION;
}

/*
 * PortInfo (IBA 14.2.5.6), the 64-byte attribute 0x0015, the fields
 * around the keys: M_Key @0-7; GidPrefix @8-15; LID @16-17; MasterSMLID
 * @18-19; CapabilityMask @20-23; M_KeyLeasePeriod @26-27; byte 34
 * M_KeyProtectBits 0xc0; byte 43 PartitionEnforcementInbound 0x08,
 * PartitionEnforcementOutbound 0x04, FilterRawInbound 0x02,
 * FilterRawOutbound 0x01; M_KeyViolations @44-45; P_KeyViolations
 * @46-47; Q_KeyViolations @48-49; GUIDCap @50; byte 51 ClientReregister
 * 0x80, SubnetTimeout 0x1f. The pointer is the attribute's first byte
 * (ibk_smp_data() of a PortInfo SMP).
 */
#define IBK_PORTINFO_LEN			64

/* CapabilityMask bits (ib_types.h IB_PORT_CAP_*). */
#define IBK_PORT_CAP_IS_TRAP_SUPPORTED		0x00000008u
#define IBK_PORT_CAP_HAS_NV_MKEY		0x00000080u
#define IBK_PORT_CAP_HAS_NV_PKEY		0x00000100u
#define IBK_PORT_CAP_HAS_PKEY_SW_EXT_PORT_TRAP	0x00001000u
#define IBK_PORT_CAP_HAS_CLIENT_REREG		0x02000000u
#define IBK_PORT_CAP_HAS_MCAST_PKEY_TRAP_SUPPRESS 0x20000000u

/* Byte 43: partition enforcement and raw packet filters. */
#define IBK_PORTINFO_PART_ENFORCE_IN	0x08
#define IBK_PORTINFO_PART_ENFORCE_OUT	0x04
#define IBK_PORTINFO_FILTER_RAW_IN	0x02
#define IBK_PORTINFO_FILTER_RAW_OUT	0x01

/**
 * ibk_portinfo_mkey() - The PortInfo's M_Key (0: no protection)
 * @pi: a PortInfo attribute, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint64_t ibk_portinfo_mkey(const void *pi)
{
	return ibk__load_be64((const uint8_t *)pi);
}

/**
 * ibk_portinfo_set_mkey() - Sets the PortInfo's M_Key (0: no protection)
 * @pi: a PortInfo attribute to write, 64 bytes, any alignment
 * @mkey: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_portinfo_set_mkey(void *pi, uint64_t mkey)
{
	ibk__store_be64((uint8_t *)pi, mkey);
}

/**
 * ibk_portinfo_gid_prefix() - The PortInfo's gidPrefix: the upper 64 bits of
 * every GID of the port
 * @pi: a PortInfo attribute, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint64_t ibk_portinfo_gid_prefix(const void *pi)
{
	return ibk__load_be64((const uint8_t *)pi + 8);
}

/**
 * ibk_portinfo_set_gid_prefix() - Sets the PortInfo's gidPrefix: the upper 64
 * bits of every GID of the port
 * @pi: a PortInfo attribute to write, 64 bytes, any alignment
 * @prefix: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_portinfo_set_gid_prefix(void *pi, uint64_t prefix)
{
	ibk__store_be64((uint8_t *)pi + 8, prefix);
}

/**
 * ibk_portinfo_lid() - The PortInfo's base LID
 * @pi: a PortInfo attribute, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint16_t ibk_portinfo_lid(const void *pi)
{
	return ibk__load_be16((const uint8_t *)pi + 16);
}

/**
 * ibk_portinfo_set_lid() - Sets the PortInfo's base LID
 * @pi: a PortInfo attribute to write, 64 bytes, any alignment
 * @lid: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_portinfo_set_lid(void *pi, uint16_t lid)
{
	ibk__store_be16((uint8_t *)pi + 16, lid);
}

/**
 * ibk_portinfo_master_sm_lid() - The PortInfo's masterSMLID: the SM's LID,
 * where traps go
 * @pi: a PortInfo attribute, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint16_t ibk_portinfo_master_sm_lid(const void *pi)
{
	return ibk__load_be16((const uint8_t *)pi + 18);
}

/**
 * ibk_portinfo_set_master_sm_lid() - Sets the PortInfo's masterSMLID: the SM's
 * LID, where traps go
 * @pi: a PortInfo attribute to write, 64 bytes, any alignment
 * @lid: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_portinfo_set_master_sm_lid(void *pi, uint16_t lid)
{
	ibk__store_be16((uint8_t *)pi + 18, lid);
}

/**
 * ibk_portinfo_cap_mask() - The PortInfo's capabilityMask, IBK_PORT_CAP_* bits
 * @pi: a PortInfo attribute, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint32_t ibk_portinfo_cap_mask(const void *pi)
{
	return ibk__load_be32((const uint8_t *)pi + 20);
}

/**
 * ibk_portinfo_set_cap_mask() - Sets the PortInfo's capabilityMask,
 * IBK_PORT_CAP_* bits
 * @pi: a PortInfo attribute to write, 64 bytes, any alignment
 * @mask: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_portinfo_set_cap_mask(void *pi, uint32_t mask)
{
	ibk__store_be32((uint8_t *)pi + 20, mask);
}

/**
 * ibk_portinfo_mkey_lease_period() - The PortInfo's M_KeyLeasePeriod, in
 * seconds; 0: the lease never expires
 * @pi: a PortInfo attribute, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint16_t ibk_portinfo_mkey_lease_period(const void *pi)
{
	return ibk__load_be16((const uint8_t *)pi + 26);
}

/**
 * ibk_portinfo_set_mkey_lease_period() - Sets the PortInfo's M_KeyLeasePeriod,
 * in seconds; 0: the lease never expires
 * @pi: a PortInfo attribute to write, 64 bytes, any alignment
 * @s: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_portinfo_set_mkey_lease_period(void *pi, uint16_t s)
{
	ibk__store_be16((uint8_t *)pi + 26, s);
}

/**
 * ibk_portinfo_mkey_protect_bits() - The PortInfo's M_KeyProtectBits, 0-3
 * (ibk_mkey_check() reads 3 as 2)
 * @pi: a PortInfo attribute, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_portinfo_mkey_protect_bits(const void *pi)
{
	return (uint8_t)(((const uint8_t *)pi)[34] >> 6);
}

/**
 * ibk_portinfo_set_mkey_protect_bits() - Sets the PortInfo's M_KeyProtectBits,
 * 0-3 (ibk_mkey_check() reads 3 as 2)
 * @pi: a PortInfo attribute to write, 64 bytes, any alignment
 * @bits: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_portinfo_set_mkey_protect_bits(void *pi, uint8_t bits)
{
	ibk__store_bits((uint8_t *)pi + 34, 0xc0, (unsigned)bits << 6);
}

/**
 * ibk_portinfo_enforcement() - The PortInfo's four low bits of byte 43:
 * IBK_PORTINFO_PART_ENFORCE_* and _FILTER_RAW_*
 * @pi: a PortInfo attribute, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_portinfo_enforcement(const void *pi)
{
	return (uint8_t)(((const uint8_t *)pi)[43] & 0x0f);
}

/**
 * ibk_portinfo_set_enforcement() - Sets the PortInfo's four low bits of byte
 * 43: IBK_PORTINFO_PART_ENFORCE_* and _FILTER_RAW_*
 * @pi: a PortInfo attribute to write, 64 bytes, any alignment
 * @bits: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_portinfo_set_enforcement(void *pi, uint8_t bits)
{
	ibk__store_bits((uint8_t *)pi + 43, 0x0f, bits);
}

/**
 * ibk_portinfo_mkey_violations() - The PortInfo's M_KeyViolations counter,
 * saturating at 0xffff
 * @pi: a PortInfo attribute, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint16_t ibk_portinfo_mkey_violations(const void *pi)
{
	return ibk__load_be16((const uint8_t *)pi + 44);
}

/**
 * ibk_portinfo_set_mkey_violations() - Sets the PortInfo's M_KeyViolations
 * counter, saturating at 0xffff
 * @pi: a PortInfo attribute to write, 64 bytes, any alignment
 * @n: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_portinfo_set_mkey_violations(void *pi, uint16_t n)
{
	ibk__store_be16((uint8_t *)pi + 44, n);
}

/**
 * ibk_portinfo_pkey_violations() - The PortInfo's P_KeyViolations counter,
 * saturating at 0xffff
 * @pi: a PortInfo attribute, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint16_t ibk_portinfo_pkey_violations(const void *pi)
{
	return ibk__load_be16((const uint8_t *)pi + 46);
}

/**
 * ibk_portinfo_set_pkey_violations() - Sets the PortInfo's P_KeyViolations
 * counter, saturating at 0xffff
 * @pi: a PortInfo attribute to write, 64 bytes, any alignment
 * @n: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_portinfo_set_pkey_violations(void *pi, uint16_t n)
{
	ibk__store_be16((uint8_t *)pi + 46, n);
}

/**
 * ibk_portinfo_qkey_violations() - The PortInfo's Q_KeyViolations counter,
 * saturating at 0xffff
 * @pi: a PortInfo attribute, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint16_t ibk_portinfo_qkey_violations(const void *pi)
{
	return ibk__load_be16((const uint8_t *)pi + 48);
}

/**
 * ibk_portinfo_set_qkey_violations() - Sets the PortInfo's Q_KeyViolations
 * counter, saturating at 0xffff
 * @pi: a PortInfo attribute to write, 64 bytes, any alignment
 * @n: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_portinfo_set_qkey_violations(void *pi, uint16_t n)
{
	ibk__store_be16((uint8_t *)pi + 48, n);
}

/**
 * ibk_portinfo_guid_cap() - The PortInfo's GUIDCap: the number of GUIDs (GID
 * table entries) of the port
 * @pi: a PortInfo attribute, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_portinfo_guid_cap(const void *pi)
{
	return ((const uint8_t *)pi)[50];
}

/**
 * ibk_portinfo_set_guid_cap() - Sets the PortInfo's GUIDCap: the number of
 * GUIDs (GID table entries) of the port
 * @pi: a PortInfo attribute to write, 64 bytes, any alignment
 * @cap: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_portinfo_set_guid_cap(void *pi, uint8_t cap)
{
	((uint8_t *)pi)[50] = cap;
}

/**
 * ibk_portinfo_client_rereg() - The PortInfo's clientReregister: the SM asks
 * the port's clients to register again
 * @pi: a PortInfo attribute, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline bool ibk_portinfo_client_rereg(const void *pi)
{
	return (((const uint8_t *)pi)[51] & 0x80) != 0;
}

/**
 * ibk_portinfo_set_client_rereg() - Sets the PortInfo's clientReregister: the
 * SM asks the port's clients to register again
 * @pi: a PortInfo attribute to write, 64 bytes, any alignment
 * @rereg: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_portinfo_set_client_rereg(void *pi, bool rereg)
{
	ibk__store_bits((uint8_t *)pi + 51, 0x80, (unsigned)rereg << 7);
}

/**
 * ibk_portinfo_subnet_timeout() - The PortInfo's subnetTimeout, 0-31: 4.096 us
 * x 2^SubnetTimeout (ibk_trap_interval_ns())
 * @pi: a PortInfo attribute, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_portinfo_subnet_timeout(const void *pi)
{
	return (uint8_t)(((const uint8_t *)pi)[51] & 0x1f);
}

/**
 * ibk_portinfo_set_subnet_timeout() - Sets the PortInfo's subnetTimeout, 0-31:
 * 4.096 us x 2^SubnetTimeout (ibk_trap_interval_ns())
 * @pi: a PortInfo attribute to write, 64 bytes, any alignment
 * @t: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_portinfo_set_subnet_timeout(void *pi, uint8_t t)
{
	ibk__store_bits((uint8_t *)pi + 51, 0x1f, t);
}

/*
 * P_KeyTable (attribute 0x0016): a block of 32 P_Keys, 2 bytes each, the
 * attribute modifier's bits 15-0 the block number, bits 23-16 the port
 * number, which only a switch's external ports use (OpenSM
 * osm_pkey_rcv_process(); a CA ignores it, as qib does). GUIDInfo
 * (0x0014): a block of 8 GUIDs, 8 bytes each, the modifier's bits 7-0 the
 * block number (OpenSM osm_gi_rcv_process()); entry 0 of block 0 is the
 * port GUID, read-only.
 */
#define IBK_PKEY_BLOCK_ENTRIES	32
#define IBK_PKEY_MAX_BLOCKS	2048	/* 65536 P_Keys (ib_types.h) */
#define IBK_GUID_BLOCK_ENTRIES	8

/**
 * ibk_pkeytable_mod_block() - The P_KeyTable block number in @attr_mod
 * @attr_mod: the attribute modifier
 *
 * Context: Any context: touches only its arguments.
 * Return: the P_KeyTable block number in @attr_mod.
 */
static inline uint16_t ibk_pkeytable_mod_block(uint32_t attr_mod)
{
	return (uint16_t)(attr_mod & 0xffff);
}

/**
 * ibk_pkeytable_mod_port() - The switch external port number in @attr_mod (0
 * for a CA)
 * @attr_mod: the attribute modifier
 *
 * Context: Any context: touches only its arguments.
 * Return: the switch external port number in @attr_mod (0 for a CA).
 */
static inline uint8_t ibk_pkeytable_mod_port(uint32_t attr_mod)
{
	return (uint8_t)(attr_mod >> 16 & 0xff);
}

/**
 * ibk_pkeytable_mod() - The P_KeyTable attribute modifier for @block of switch
 * port @port
 * @block: the block number
 * @port: the port number
 *
 * Context: Any context: touches only its arguments.
 * Return: the P_KeyTable attribute modifier for @block of switch port @port.
 */
static inline uint32_t ibk_pkeytable_mod(uint16_t block, uint8_t port)
{
	return (uint32_t)port << 16 | block;
}

/**
 * ibk_guidinfo_mod_block() - The GUIDInfo block number in @attr_mod
 * @attr_mod: the attribute modifier
 *
 * Context: Any context: touches only its arguments.
 * Return: the GUIDInfo block number in @attr_mod.
 */
static inline uint8_t ibk_guidinfo_mod_block(uint32_t attr_mod)
{
	return (uint8_t)(attr_mod & 0xff);
}

/**
 * ibk_pkey_block_get() - P_Key @i (0-31) of the P_KeyTable block at @data
 * @data: the attribute block, 64 bytes, any alignment
 * @i: the index in the block (only its low bits are used)
 *
 * Context: Any context: touches only its arguments.
 * Return: the P_Key, host order.
 */
static inline ibk_pkey_t ibk_pkey_block_get(const void *data, unsigned i)
{
	return ibk__load_be16((const uint8_t *)data + 2 * (i & 31u));
}

/**
 * ibk_pkey_block_set() - Sets P_Key @i (0-31) of the P_KeyTable block at @data
 * @data: the attribute block to write, 64 bytes, any alignment
 * @i: the index in the block (only its low bits are used)
 * @pkey: a P_Key, host order
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_pkey_block_set(void *data, unsigned i, ibk_pkey_t pkey)
{
	ibk__store_be16((uint8_t *)data + 2 * (i & 31u), pkey);
}

/**
 * ibk_guid_block_get() - GUID @i (0-7) of the GUIDInfo block at @data
 * @data: the attribute block, 64 bytes, any alignment
 * @i: the index in the block (only its low bits are used)
 *
 * Context: Any context: touches only its arguments.
 * Return: the GUID, host order.
 */
static inline ibk_guid_t ibk_guid_block_get(const void *data, unsigned i)
{
	return ibk__load_be64((const uint8_t *)data + 8 * (i & 7u));
}

/**
 * ibk_guid_block_set() - Sets GUID @i (0-7) of the GUIDInfo block at @data
 * @data: the attribute block to write, 64 bytes, any alignment
 * @i: the index in the block (only its low bits are used)
 * @guid: a GUID (EUI-64), host order
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_guid_block_set(void *data, unsigned i, ibk_guid_t guid)
{
	ibk__store_be64((uint8_t *)data + 8 * (i & 7u), guid);
}

/**
 * ibk_pkey_block_decode() - The 32 P_Keys of the block at @data into @pkeys,
 * host order
 * @data: the attribute block, 64 bytes, any alignment
 * @pkeys: receives the block's 32 P_Keys
 *
 * Context: Any context: touches only its arguments.
 */
static inline void
ibk_pkey_block_decode(const void *data,
		      ibk_pkey_t pkeys[IBK_PKEY_BLOCK_ENTRIES])
{
	unsigned i;

	for (i = 0; i < IBK_PKEY_BLOCK_ENTRIES; i++)
		pkeys[i] = ibk_pkey_block_get(data, i);
}

/**
 * ibk_pkey_block_encode() - The block at @data from the 32 P_Keys of @pkeys
 * @pkeys: the block's 32 P_Keys, host order
 * @data: receives the attribute block, 64 bytes
 *
 * Context: Any context: touches only its arguments.
 */
static inline void
ibk_pkey_block_encode(const ibk_pkey_t pkeys[IBK_PKEY_BLOCK_ENTRIES],
		      uint8_t *data)
{
	unsigned i;

	for (i = 0; i < IBK_PKEY_BLOCK_ENTRIES; i++)
		ibk_pkey_block_set(data, i, pkeys[i]);
}

/**
 * ibk_guid_block_decode() - The 8 GUIDs of the block at @data into @guids,
 * host order
 * @data: the attribute block, 64 bytes, any alignment
 * @guids: receives the block's 8 GUIDs
 *
 * Context: Any context: touches only its arguments.
 */
static inline void
ibk_guid_block_decode(const void *data,
		      ibk_guid_t guids[IBK_GUID_BLOCK_ENTRIES])
{
	unsigned i;

	for (i = 0; i < IBK_GUID_BLOCK_ENTRIES; i++)
		guids[i] = ibk_guid_block_get(data, i);
}

/**
 * ibk_guid_block_encode() - The block at @data from the 8 GUIDs of @guids
 * @guids: the block's 8 GUIDs, host order
 * @data: receives the attribute block, 64 bytes
 *
 * Context: Any context: touches only its arguments.
 */
static inline void
ibk_guid_block_encode(const ibk_guid_t guids[IBK_GUID_BLOCK_ENTRIES],
		      uint8_t *data)
{
	unsigned i;

	for (i = 0; i < IBK_GUID_BLOCK_ENTRIES; i++)
		ibk_guid_block_set(data, i, guids[i]);
}

/*
 * Notice (attribute 0x0002), the InfiniBand layout (IBA 14.2.5.1; OPA's,
 * hfi1's opa_mad_notice_attr, differs: 32-bit LIDs, another 257/258
 * layout): byte 0 IsGeneric 0x80, Type 0x7f; ProducerType @1-3; TrapNumber
 * @4-5; IssuerLID @6-7; NoticeToggle 0x8000 and NoticeCount 0x7fff @8-9;
 * DataDetails @10-63. The IssuerGID after it (@64-79) does not fit in an
 * SMP's 64 bytes and a SubnTrap carries none. The pointer is the
 * attribute's first byte (ibk_smp_data()).
 */
#define IBK_NOTICE_LEN			64	/* as an SMP carries it */
#define IBK_NOTICE_DETAILS		10	/* DataDetails offset, 54 bytes */

#define IBK_NOTICE_TYPE_SECURITY	0x02	/* Type; 0x82 with IsGeneric */
#define IBK_NOTICE_PRODUCER_CA		1
#define IBK_NOTICE_PRODUCER_SWITCH	2
#define IBK_NOTICE_PRODUCER_ROUTER	3
#define IBK_NOTICE_PRODUCER_CLASS_MGR	4

#define IBK_TRAP_BAD_MKEY		256
#define IBK_TRAP_BAD_PKEY		257
#define IBK_TRAP_BAD_QKEY		258

/* Trap 256's DataDetails byte 23: DRNotice, DRPathTruncated, DRHopCount. */
#define IBK_TRAP_DR_NOTICE		0x80
#define IBK_TRAP_DR_TRUNCATED		0x40
#define IBK_TRAP_DR_PATH_LEN		30	/* return path bytes it holds */

/**
 * ibk_notice_is_generic() - The Notice's isGeneric: a generic notice (trap
 * number) rather than a vendor one
 * @n: the Notice, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline bool ibk_notice_is_generic(const void *n)
{
	return (((const uint8_t *)n)[0] & 0x80) != 0;
}

/**
 * ibk_notice_set_generic() - Sets the Notice's isGeneric: a generic notice
 * (trap number) rather than a vendor one
 * @n: the Notice to write, 64 bytes, any alignment
 * @generic: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_notice_set_generic(void *n, bool generic)
{
	ibk__store_bits((uint8_t *)n, 0x80, (unsigned)generic << 7);
}

/**
 * ibk_notice_type() - The Notice's type, 7 bits: IBK_NOTICE_TYPE_SECURITY for
 * traps 256-258
 * @n: the Notice, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint8_t ibk_notice_type(const void *n)
{
	return (uint8_t)(((const uint8_t *)n)[0] & 0x7f);
}

/**
 * ibk_notice_set_type() - Sets the Notice's type, 7 bits:
 * IBK_NOTICE_TYPE_SECURITY for traps 256-258
 * @n: the Notice to write, 64 bytes, any alignment
 * @type: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_notice_set_type(void *n, uint8_t type)
{
	ibk__store_bits((uint8_t *)n, 0x7f, type);
}

/**
 * ibk_notice_producer() - The Notice's producerType of a generic notice
 * (VendorID of a vendor one), 24 bits
 * @n: the Notice, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint32_t ibk_notice_producer(const void *n)
{
	return ibk__load_be24((const uint8_t *)n + 1);
}

/**
 * ibk_notice_set_producer() - Sets the Notice's producerType of a generic
 * notice (VendorID of a vendor one), 24 bits
 * @n: the Notice to write, 64 bytes, any alignment
 * @producer: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_notice_set_producer(void *n, uint32_t producer)
{
	ibk__store_be24((uint8_t *)n + 1, producer);
}

/**
 * ibk_notice_trap_number() - The Notice's trapNumber of a generic notice
 * (DeviceID of a vendor one)
 * @n: the Notice, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint16_t ibk_notice_trap_number(const void *n)
{
	return ibk__load_be16((const uint8_t *)n + 4);
}

/**
 * ibk_notice_set_trap_number() - Sets the Notice's trapNumber of a generic
 * notice (DeviceID of a vendor one)
 * @n: the Notice to write, 64 bytes, any alignment
 * @trap: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_notice_set_trap_number(void *n, uint16_t trap)
{
	ibk__store_be16((uint8_t *)n + 4, trap);
}

/**
 * ibk_notice_issuer_lid() - The Notice's issuerLID: the LID of the port that
 * raised the notice
 * @n: the Notice, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint16_t ibk_notice_issuer_lid(const void *n)
{
	return ibk__load_be16((const uint8_t *)n + 6);
}

/**
 * ibk_notice_set_issuer_lid() - Sets the Notice's issuerLID: the LID of the
 * port that raised the notice
 * @n: the Notice to write, 64 bytes, any alignment
 * @lid: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_notice_set_issuer_lid(void *n, uint16_t lid)
{
	ibk__store_be16((uint8_t *)n + 6, lid);
}

/**
 * ibk_notice_toggle() - The Notice's noticeToggle, for notices queued at the
 * issuer
 * @n: the Notice, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline bool ibk_notice_toggle(const void *n)
{
	return (((const uint8_t *)n)[8] & 0x80) != 0;
}

/**
 * ibk_notice_set_toggle() - Sets the Notice's noticeToggle, for notices queued
 * at the issuer
 * @n: the Notice to write, 64 bytes, any alignment
 * @toggle: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_notice_set_toggle(void *n, bool toggle)
{
	ibk__store_bits((uint8_t *)n + 8, 0x80, (unsigned)toggle << 7);
}

/**
 * ibk_notice_count() - The Notice's noticeCount, for notices queued at the
 * issuer
 * @n: the Notice, 64 bytes, any alignment
 *
 * Context: Any context: touches only its arguments.
 * Return: the field's value, host order.
 */
static inline uint16_t ibk_notice_count(const void *n)
{
	return (uint16_t)(ibk__load_be16((const uint8_t *)n + 8) & 0x7fff);
}

/**
 * ibk_notice_set_count() - Sets the Notice's noticeCount, for notices queued
 * at the issuer
 * @n: the Notice to write, 64 bytes, any alignment
 * @count: the new value; bits beyond the field's width are ignored
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_notice_set_count(void *n, uint16_t count)
{
	uint8_t *p = (uint8_t *)n + 8;

	ibk__store_bits(p, 0x7f, (unsigned)count >> 8);
	p[1] = (uint8_t)(count & 0xff);
}

/**
 * struct ibk_trap_256 - Trap 256 (Bad M_Key) details
 * @lid: LIDADDR: who sent the SMP
 * @dr_slid: directed route: the SMP's DrSLID
 * @method: the SMP's method
 * @attr_id: its attribute ID
 * @attr_mod: its attribute modifier
 * @mkey: the bad M_Key received
 * @dr_notice: the SMP was directed route
 * @dr_truncated: its path was longer than 30 hops
 * @dr_hop_cnt: hops in dr_return_path, 0-30
 * @dr_return_path: the first dr_hop_cnt bytes of its return path
 *
 * Trap 256, Bad M_Key: DataDetails reserved @0-1; LIDADDR @2-3; DRSLID @4-5;
 * METHOD @6; reserved @7; ATTRIBUTEID @8-9; ATTRIBUTEMODIFIER @10-13; M_KEY
 * @14-21; reserved @22; byte 23 DRNotice 0x80, DRPathTruncated 0x40,
 * DRHopCount 0x3f; DRNoticeReturnPath @24-53.
 */
struct ibk_trap_256 {
	uint16_t lid;
	uint16_t dr_slid;
	uint8_t  method;
	uint16_t attr_id;
	uint32_t attr_mod;
	uint64_t mkey;
	bool     dr_notice;
	bool     dr_truncated;
	uint8_t  dr_hop_cnt;
	uint8_t  dr_return_path[IBK_TRAP_DR_PATH_LEN];
};

/**
 * struct ibk_trap_key - Trap 257 (Bad P_Key) and 258 (Bad Q_Key) details
 * @lid1: the bad packet's source LID
 * @lid2: its destination LID
 * @key: the P_Key (257) or Q_Key (258) it carried
 * @sl: its service level
 * @qp1: source QP (0 unless a DETH names it)
 * @qp2: destination QP
 * @gid1: source GID, zero without a GRH
 * @gid2: destination GID, zero without a GRH
 *
 * Traps 257, Bad P_Key, and 258, Bad Q_Key, one layout: DataDetails reserved
 * @0-1; LIDADDR1 @2-3; LIDADDR2 @4-5; KEY @6-9 (the P_Key in the low 16 bits
 * for 257); SL in bits 31-28 and QP1 in bits 23-0 @10-13; QP2 in bits 23-0
 * @14-17; GIDADDR1 @18-33; GIDADDR2 @34-49.
 */
struct ibk_trap_key {
	uint16_t lid1;
	uint16_t lid2;
	uint32_t key;
	uint8_t  sl;
	uint32_t qp1;
	uint32_t qp2;
	struct ibk_gid gid1;
	struct ibk_gid gid2;
};

/**
 * ibk_notice_init() - Writes a generic notice's header and zeroes its details
 * @type: the Notice type
 * @producer: the producer type (24 bits)
 * @trap_number: the trap number
 * @issuer_lid: the issuer's LID
 * @notice: a Notice attribute to write, 64 bytes, any alignment
 *
 * Writes the first 10 bytes of a generic notice at @notice, and zeroes its
 * DataDetails: IsGeneric, @type, @producer, trap @trap_number, @issuer_lid,
 * toggle and count 0.
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_notice_init(uint8_t type, uint32_t producer,
				   uint16_t trap_number, uint16_t issuer_lid,
				   void *notice)
{
	uint8_t *p = (uint8_t *)notice;
	unsigned i;

	for (i = 0; i < IBK_NOTICE_LEN; i++)
		p[i] = 0;
	ibk_notice_set_generic(notice, true);
	ibk_notice_set_type(notice, type);
	ibk_notice_set_producer(notice, producer);
	ibk_notice_set_trap_number(notice, trap_number);
	ibk_notice_set_issuer_lid(notice, issuer_lid);
}

/**
 * ibk_notice_build_256() - Builds the Bad M_Key notice (trap 256)
 * @producer: the producer type (24 bits)
 * @issuer_lid: the issuer's LID
 * @trap: the trap 256 details
 * @notice: a Notice attribute to write, 64 bytes, any alignment
 *
 * The Bad M_Key notice (security, trap 256) at @notice, IBK_NOTICE_LEN bytes,
 * from *@trap, as qib_bad_mkey() sends it: the hop count is written as at most
 * 30, with DRPathTruncated set when @trap says so or when it is above 30, and
 * only that many return path bytes.
 *
 * @producer is one of IBK_NOTICE_PRODUCER_*.
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_notice_build_256(uint32_t producer, uint16_t issuer_lid,
					const struct ibk_trap_256 *trap,
					void *notice)
{
	uint8_t *d = (uint8_t *)notice + IBK_NOTICE_DETAILS;
	unsigned hops = trap->dr_hop_cnt, i;
	unsigned dr = trap->dr_notice ? IBK_TRAP_DR_NOTICE : 0u;

	ibk_notice_init(IBK_NOTICE_TYPE_SECURITY, producer, IBK_TRAP_BAD_MKEY,
			issuer_lid, notice);
	ibk__store_be16(d + 2, trap->lid);
	ibk__store_be16(d + 4, trap->dr_slid);
	d[6] = trap->method;
	ibk__store_be16(d + 8, trap->attr_id);
	ibk__store_be32(d + 10, trap->attr_mod);
	ibk__store_be64(d + 14, trap->mkey);
	if (trap->dr_truncated || hops > IBK_TRAP_DR_PATH_LEN)
		dr |= IBK_TRAP_DR_TRUNCATED;
	if (hops > IBK_TRAP_DR_PATH_LEN)
		hops = IBK_TRAP_DR_PATH_LEN;
	d[23] = (uint8_t)(dr | hops);
	for (i = 0; i < hops; i++)
		d[24 + i] = trap->dr_return_path[i];
}

/**
 * ibk_trap_256_from_smp() - The trap 256 details of an SMP in M_Key violation
 * @smp: the SMP, 256 bytes, any alignment
 * @lid: LIDADDR: the requester, the SMP's LRH SLID
 * @trap: receives the trap 256 details
 *
 * The trap 256 details for the SMP @smp that ibk_mkey_check() found in
 * violation, as qib_bad_mkey() and hfi1 bad_mkey() fill them: method,
 * attribute, modifier and M_Key from the SMP; for a directed-route SMP also
 * DrSLID, DRNotice and the hop count with as much of the return path as fits
 * (30 hops; a longer path is truncated and says so).
 *
 * The path is the SMP's ReturnPath entries 1 to the hop count, one port per
 * hop, where the Linux SMI writes them (smi_handle_dr_smp_recv() stores hop
 * i's port at return_path[i]; entry 0 is never used): qib and hfi1 copy
 * entries 0 to hop count - 1 instead, an unused byte first and the last hop
 * lost, which no SM could route back by. @lid is LIDADDR: the requester, the
 * SMP's LRH SLID, as the IBA's trap text ("Bad M_Key, <M_KEY> from <LIDADDR>
 * attempted <METHOD> ...") and Wireshark read it; the kernel's SMAs put their
 * own LID there instead.
 *
 * Context: Any context: touches only its arguments.
 */
static inline void ibk_trap_256_from_smp(const void *smp, uint16_t lid,
					 struct ibk_trap_256 *trap)
{
	const uint8_t *path = (const uint8_t *)smp + IBK_SMP_RETURN_PATH;
	unsigned hops = 0, i;

	trap->lid = lid;
	trap->method = ibk_mad_method(smp);
	trap->attr_id = ibk_mad_attr_id(smp);
	trap->attr_mod = ibk_mad_attr_mod(smp);
	trap->mkey = ibk_smp_mkey(smp);
	trap->dr_notice = ibk_smp_is_dr(smp);
	trap->dr_slid = trap->dr_notice ? ibk_smp_dr_slid(smp) : 0;
	if (trap->dr_notice)
		hops = ibk_smp_hop_cnt(smp);
	trap->dr_truncated = hops > IBK_TRAP_DR_PATH_LEN;
	if (trap->dr_truncated)
		hops = IBK_TRAP_DR_PATH_LEN;
	trap->dr_hop_cnt = (uint8_t)hops;
	for (i = 0; i < IBK_TRAP_DR_PATH_LEN; i++)
		trap->dr_return_path[i] = i < hops ? path[1 + i] : 0;
}

/* True if @n is a generic notice of trap @trap. */
static inline bool ibk__notice_is_trap(const void *n, uint16_t trap)
{
	return ibk_notice_is_generic(n) && ibk_notice_trap_number(n) == trap;
}

/**
 * ibk_notice_parse_256() - Reads the trap 256 details of the notice @notice
 * into *@trap
 * @notice: a Notice attribute, 64 bytes, any alignment
 * @trap: receives the trap 256 details
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_OK; IBK_EINVAL for a NULL pointer or a notice that is not a
 * generic trap 256 (*@trap is then left alone).
 */
static inline int ibk_notice_parse_256(const void *notice,
				       struct ibk_trap_256 *trap)
{
	const uint8_t *d;
	unsigned i;

	if (!notice || !trap || !ibk__notice_is_trap(notice, IBK_TRAP_BAD_MKEY))
		return IBK_EINVAL;
	d = (const uint8_t *)notice + IBK_NOTICE_DETAILS;
	trap->lid = ibk__load_be16(d + 2);
	trap->dr_slid = ibk__load_be16(d + 4);
	trap->method = d[6];
	trap->attr_id = ibk__load_be16(d + 8);
	trap->attr_mod = ibk__load_be32(d + 10);
	trap->mkey = ibk__load_be64(d + 14);
	trap->dr_notice = (d[23] & IBK_TRAP_DR_NOTICE) != 0;
	trap->dr_truncated = (d[23] & IBK_TRAP_DR_TRUNCATED) != 0;
	trap->dr_hop_cnt = (uint8_t)(d[23] & 0x3f);
	for (i = 0; i < IBK_TRAP_DR_PATH_LEN; i++)
		trap->dr_return_path[i] = d[24 + i];
	return IBK_OK;
}

/**
 * ibk_notice_build_key_trap() - Builds the Bad P_Key or Bad Q_Key notice (trap
 * 257 or 258)
 * @trap_number: the trap number
 * @producer: the producer type (24 bits)
 * @issuer_lid: the issuer's LID
 * @trap: the trap 257 or 258 details
 * @notice: a Notice attribute to write, 64 bytes, any alignment
 *
 * The Bad P_Key (@trap_number 257) or Bad Q_Key (@trap_number 258) notice at
 * @notice, IBK_NOTICE_LEN bytes, from *@trap (qib_bad_pkey()).
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_OK; IBK_EINVAL, writing nothing, for a NULL pointer or another
 * @trap_number.
 */
static inline int ibk_notice_build_key_trap(uint16_t trap_number,
					    uint32_t producer,
					    uint16_t issuer_lid,
					    const struct ibk_trap_key *trap,
					    void *notice)
{
	uint8_t *d;

	if (!notice || !trap || (trap_number != IBK_TRAP_BAD_PKEY &&
			 trap_number != IBK_TRAP_BAD_QKEY))
		return IBK_EINVAL;
	d = (uint8_t *)notice + IBK_NOTICE_DETAILS;
	ibk_notice_init(IBK_NOTICE_TYPE_SECURITY, producer, trap_number,
			issuer_lid, notice);
	ibk__store_be16(d + 2, trap->lid1);
	ibk__store_be16(d + 4, trap->lid2);
	ibk__store_be32(d + 6, trap->key);
	ibk__store_be32(d + 10,
			(trap->sl & 0xfu) << 28 | (trap->qp1 & 0xffffffu));
	ibk__store_be24(d + 15, trap->qp2);
	ibk__copy16(d + 18, trap->gid1.raw);
	ibk__copy16(d + 34, trap->gid2.raw);
	return IBK_OK;
}

/**
 * ibk_notice_parse_key_trap() - Reads the details of a trap 257 or 258 notice
 * @notice into *@trap
 * @notice: a Notice attribute, 64 bytes, any alignment
 * @trap: receives the trap 257 or 258 details
 *
 * Context: Any context: touches only its arguments.
 * Return: the trap number; IBK_EINVAL for a NULL pointer or a notice that is
 * not a generic trap 257 or 258 (*@trap is then left alone).
 */
static inline int ibk_notice_parse_key_trap(const void *notice,
					    struct ibk_trap_key *trap)
{
	const uint8_t *d;

	if (!notice || !trap || !ibk_notice_is_generic(notice) ||
	    (ibk_notice_trap_number(notice) != IBK_TRAP_BAD_PKEY &&
	     ibk_notice_trap_number(notice) != IBK_TRAP_BAD_QKEY))
		return IBK_EINVAL;
	d = (const uint8_t *)notice + IBK_NOTICE_DETAILS;
	trap->lid1 = ibk__load_be16(d + 2);
	trap->lid2 = ibk__load_be16(d + 4);
	trap->key = ibk__load_be32(d + 6);
	trap->sl = (uint8_t)(d[10] >> 4);
	trap->qp1 = ibk__load_be24(d + 11);
	trap->qp2 = ibk__load_be24(d + 15);
	ibk__copy16(trap->gid1.raw, d + 18);
	ibk__copy16(trap->gid2.raw, d + 34);
	return ibk_notice_trap_number(notice);
}

/**
 * ibk_trap_key_from_headers() - The trap 257 or 258 details of a dropped
 * packet
 * @h: a packet's located headers (ibk_pkt_locate())
 * @trap_number: the trap number
 * @trap: receives the trap 257 or 258 details
 *
 * The trap 257 (@trap_number IBK_TRAP_BAD_PKEY) or 258 details, into *@trap,
 * for the dropped packet whose headers *@h holds, as qib_ud_rcv() and
 * qib_ruc_check_hdr() report them: LIDADDR1/2 the LRH's SLID/DLID, SL from the
 * LRH, KEY the packet's BTH P_Key (257) or DETH Q_Key (258), QP1 the DETH's
 * source QP (0 without a DETH, as for RC and UC), QP2 the BTH's destination
 * QP, GIDADDR1/2 the GRH's SGID/DGID (zero without a GRH).
 *
 * Context: Any context: touches only its arguments.
 * Return: IBK_OK; IBK_EINVAL for a NULL pointer, another @trap_number, or a
 * 258 without a DETH.
 */
static inline int ibk_trap_key_from_headers(const struct ibk_pkt_headers *h,
					    uint16_t trap_number,
					    struct ibk_trap_key *trap)
{
	static const uint8_t zero[16] = { 0 };

	if (!trap || !h || !h->lrh || !h->bth ||
	    (trap_number != IBK_TRAP_BAD_PKEY &&
	     trap_number != IBK_TRAP_BAD_QKEY) ||
	    (trap_number == IBK_TRAP_BAD_QKEY && !h->deth))
		return IBK_EINVAL;
	trap->lid1 = ibk_lrh_slid(h->lrh);
	trap->lid2 = ibk_lrh_dlid(h->lrh);
	trap->sl = ibk_lrh_sl(h->lrh);
	trap->key = trap_number == IBK_TRAP_BAD_PKEY ? ibk_bth_pkey(h->bth) :
						       ibk_deth_qkey(h->deth);
	trap->qp1 = h->deth ? ibk_deth_src_qp(h->deth) : 0;
	trap->qp2 = ibk_bth_dest_qp(h->bth);
	ibk__copy16(trap->gid1.raw, h->grh ? h->grh + 8 : zero);
	ibk__copy16(trap->gid2.raw, h->grh ? h->grh + 24 : zero);
	return IBK_OK;
}

/**
 * ibk_trap_interval_ns() - The least time between two traps (o14-2,
 * qib_send_trap())
 * @subnet_timeout: the subnet timeout, 5 bits (4.096 us x 2^value)
 *
 * Built from 32-bit shifts: a variable 64-bit shift is a libgcc call
 * (__aeabi_llsl) on Cortex-M0.
 *
 * Context: Any context: touches only its arguments.
 * Return: the least time between two traps (o14-2, qib_send_trap()): 4.096 us
 * x 2^@subnet_timeout (PortInfo SubnetTimeout, 0-31; higher bits ignored), in
 * ns: 2^(12 + timeout), from 4096 ns to 2^43 ns (about 2.4 hours).
 */
static inline uint64_t ibk_trap_interval_ns(uint8_t subnet_timeout)
{
	unsigned e = 12u + (subnet_timeout & 0x1fu);

	if (e < 32)
		return (uint64_t)(1u << e);
	return (uint64_t)(1u << (e - 32)) << 32;
}

/**
 * ibk_trap_rate_ok() - Whether a port may send a trap at @now_ns
 * @now_ns: the current time in nanoseconds, any monotonic clock
 * @last_ns: when the previous trap was sent, same clock as @now_ns
 * @sent_before: false if no trap was sent yet
 * @subnet_timeout: the subnet timeout, 5 bits (4.096 us x 2^value)
 *
 * A trap refused here is dropped, as qib_send_trap() drops it. Both times from
 * one clock; a wrap of it is harmless.
 *
 * Context: Any context: touches only its arguments.
 * Return: true if a port may send a trap at @now_ns: none was sent yet
 * (@sent_before false), or the last one, at @last_ns, is at least
 * ibk_trap_interval_ns(@subnet_timeout) ago.
 */
static inline bool ibk_trap_rate_ok(uint64_t now_ns, uint64_t last_ns,
				    bool sent_before, uint8_t subnet_timeout)
{
	return !sent_before ||	/* the difference wraps with the clock */
	       now_ns - last_ns >= ibk_trap_interval_ns(subnet_timeout);
}

/* ------------------------------------------------------------------------
 * Calls in 0.2's parameter order do not compile
 *
 * 0.3 moved counts before outputs and outputs last. In C++ a call in the
 * old order is an error by the language's rules (a pointer never
 * converts to an integer, nor one struct pointer to another); C only
 * warns (GCC 12, clang 14: -Wint-conversion, -Wincompatible-pointer-
 * types), and a caller without -Werror reads garbage. So in C11 each
 * reordered function is reached through a macro of its own name that
 * checks, at compile time, one argument whose type tells the orders
 * apart: an integer where 0.2 had a pointer, or the pointer type 0.3
 * takes there. A wrong one is a negative array size, an error under any
 * flags. The function itself is unchanged: its address, and a call
 * written (ibk_gid_set)(...), bypass the check. C99 has no _Generic and
 * keeps the warnings; nor does Frama-C 25 parse it (__FRAMAC__), whose
 * analysis of the functions the macros only wrap is unchanged.
 * ------------------------------------------------------------------------ */

#if !defined(__cplusplus) && defined(__STDC_VERSION__) && \
	__STDC_VERSION__ >= 201112L && !defined(__FRAMAC__)

/* 1 if @x has an integer type (an enum's is one), else 0. */
#define IBK__IS_INTEGER(x)						\
	_Generic((x), _Bool: 1, char: 1, signed char: 1,		\
		 unsigned char: 1, short: 1, unsigned short: 1, int: 1,	\
		 unsigned int: 1, long: 1, unsigned long: 1,		\
		 long long: 1, unsigned long long: 1, default: 0)

/* @x, refused at compile time unless @ok (a constant) is true. */
#define IBK__ORDER_CHECK(ok, x)	((void)sizeof(char[(ok) ? 1 : -1]), (x))
#define IBK__INTEGER_ARG(x)	IBK__ORDER_CHECK(IBK__IS_INTEGER(x), x)
/* @x, refused unless it points to a T (const or not). */
#define IBK__POINTER_ARG(T, x)						\
	IBK__ORDER_CHECK(_Generic((x), const T *: 1, T *: 1, default: 0), x)

#define ibk_gid_set(subnet_prefix, guid, gid)				\
	ibk_gid_set(IBK__INTEGER_ARG(subnet_prefix), guid, gid)
#define ibk_gid_set_from_ipv4(ipv4, gid)				\
	ibk_gid_set_from_ipv4(IBK__INTEGER_ARG(ipv4), gid)
#define ibk_gid_set_from_mac(mac, gid)					\
	ibk_gid_set_from_mac(mac, IBK__POINTER_ARG(struct ibk_gid, gid))
#define ibk_pkey_match_burst(qp_pkey, pkt_pkeys, n, match)		\
	ibk_pkey_match_burst(qp_pkey, pkt_pkeys, IBK__INTEGER_ARG(n), match)
#define ibk_rx_ud_burst(qp_pkey, qp_qkey, hdrs, n, verdicts)		\
	ibk_rx_ud_burst(qp_pkey, qp_qkey, hdrs, IBK__INTEGER_ARG(n), verdicts)
#define ibk_pkey_block_encode(pkeys, data)				\
	ibk_pkey_block_encode(IBK__POINTER_ARG(ibk_pkey_t, pkeys), data)
#define ibk_guid_block_encode(guids, data)				\
	ibk_guid_block_encode(IBK__POINTER_ARG(ibk_guid_t, guids), data)
#define ibk_notice_init(type, producer, trap_number, issuer_lid, notice) \
	ibk_notice_init(IBK__INTEGER_ARG(type), producer, trap_number,	\
			issuer_lid, notice)
#define ibk_notice_build_256(producer, issuer_lid, trap, notice)	\
	ibk_notice_build_256(IBK__INTEGER_ARG(producer), issuer_lid, trap, \
			     notice)
#define ibk_notice_build_key_trap(trap_number, producer, issuer_lid, trap, \
				  notice)				\
	ibk_notice_build_key_trap(IBK__INTEGER_ARG(trap_number), producer, \
				  issuer_lid, trap, notice)
#define ibk_trap_256_from_smp(smp, lid, trap)				\
	ibk_trap_256_from_smp(smp, IBK__INTEGER_ARG(lid), trap)
#define ibk_trap_key_from_headers(h, trap_number, trap)		\
	ibk_trap_key_from_headers(IBK__POINTER_ARG(struct ibk_pkt_headers, h), \
				  trap_number, trap)
#define ibk_mem_invalidate(o, mr, key)					\
	ibk_mem_invalidate(o, mr, IBK__INTEGER_ARG(key))
#define ibk_mem_invalidate_remote(o, mr, key, qp)			\
	ibk_mem_invalidate_remote(o, mr, IBK__INTEGER_ARG(key), qp)
#define ibk_mem_deregister(o, mr, key)					\
	ibk_mem_deregister(o, mr, IBK__INTEGER_ARG(key))

#endif /* C11 */

#ifdef __cplusplus
}
#endif

#endif /* IBKEYS_IB_KEYS_H */
