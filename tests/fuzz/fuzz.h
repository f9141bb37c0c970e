/* SPDX-License-Identifier: MIT */
/*
 * fuzz.h - what every libFuzzer target of tests/fuzz shares: a reader that
 * turns the fuzzer's bytes into values (zeros once they run out, so every
 * input is a complete run), and the check that turns a mismatch against
 * an oracle into a crash libFuzzer saves the input of.
 *
 * A target is one file, tests/fuzz/NAME.c, defining
 * LLVMFuzzerTestOneInput(), and one line, NAME, in tests/fuzz/targets;
 * tests/fuzz/run builds it with clang -fsanitize=fuzzer,address,undefined.
 */
#ifndef IBK_FUZZ_H
#define IBK_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz {
	const uint8_t *p;
	size_t n;
};

static inline struct fz fz_init(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	return f;
}

static inline bool fz_empty(const struct fz *f)
{
	return f->n == 0;
}

static inline uint8_t fz_u8(struct fz *f)
{
	if (f->n == 0)
		return 0;
	f->n--;
	return *f->p++;
}

/* Multi-byte values are taken big-endian, as they sit on the wire. */
static inline uint16_t fz_u16(struct fz *f)
{
	uint16_t v = fz_u8(f);
	return (uint16_t)(v << 8 | fz_u8(f));
}

static inline uint32_t fz_u32(struct fz *f)
{
	uint32_t v = fz_u16(f);
	return v << 16 | fz_u16(f);
}

static inline uint64_t fz_u64(struct fz *f)
{
	uint64_t v = fz_u32(f);
	return v << 32 | fz_u32(f);
}

static inline bool fz_bool(struct fz *f)
{
	return fz_u8(f) & 1;
}

/* A value in [0, n), n >= 1, from one byte (two above 256). */
static inline uint32_t fz_below(struct fz *f, uint32_t n)
{
	return (n <= 256 ? fz_u8(f) : fz_u16(f)) % n;
}

/* @n bytes into @dst, zeros past the end of the input. */
static inline void fz_bytes(struct fz *f, void *dst, size_t n)
{
	size_t take = n < f->n ? n : f->n;

	memcpy(dst, f->p, take);
	memset((uint8_t *)dst + take, 0, n - take);
	f->p += take;
	f->n -= take;
}

/*
 * A heap copy of the next @n bytes (zeros past the input), exactly @n
 * long, so that AddressSanitizer catches a read one byte past a header:
 * free() it.
 */
static inline uint8_t *fz_exact(struct fz *f, size_t n)
{
	uint8_t *b = (uint8_t *)malloc(n ? n : 1);

	if (!b)
		abort();
	fz_bytes(f, b, n);
	return b;
}

/* Caller storage for a table: a heap block of exactly @n bytes, filled
 * with a pattern that is no valid state, so that whatever an init leaves
 * uncleared shows: free() it. */
static inline void *fz_storage(size_t n)
{
	void *b = malloc(n ? n : 1);

	if (!b)
		abort();
	memset(b, 0xa5, n);
	return b;
}

/* The rest of the input as a NUL-terminated heap string: free() it. */
static inline char *fz_string(struct fz *f)
{
	char *s = (char *)malloc(f->n + 1);

	if (!s)
		abort();
	memcpy(s, f->p, f->n);
	s[f->n] = '\0';
	f->p += f->n;
	f->n = 0;
	return s;
}

/* A mismatch against the oracle: say what, and crash, so libFuzzer keeps
 * the input (tests/fuzz/run leaves it in a file). */
#define FZ_CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "MISMATCH %s:%d: %s: ",		\
				__FILE__, __LINE__, #cond);		\
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			abort();					\
		}							\
	} while (0)

#endif /* IBK_FUZZ_H */
