/*
 * crc32c.c - CRC32C, hardware where the CPU has it, slicing-by-8 tables elsewhere.
 *
 * Hardware: three interleaved crc32q streams combined by GF(2) shifts (~3x one stream).
 *
 * Why our own: no CRC32C library is installed on the project's machines (zlib's crc32 is the
 * other polynomial; ISA-L's crc32_iscsi would add a package for ~80 lines). The checksum is
 * the reflected Castagnoli polynomial 0x82F63B78 with initial value and final xor 0xFFFFFFFF,
 * as in RFC 3720 B.4, whose test vectors tests/unit/checkpoint/crc32c_test.c checks.
 *
 * Invariants: both versions give the same value for every input (the test compares them on
 * random buffers); the tables are built once, before main, so no call races on them.
 */
#include "crc32c.h"

#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <nmmintrin.h>
#endif

#define POLY 0x82F63B78u

static uint32_t table[8][256];
static uint32_t (*impl)(uint32_t, const uint8_t *, size_t);

/* Slicing-by-8: eight bytes a step through eight tables; ~1 GB/s, fine as a fallback. */
static uint32_t crc_sw(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n && ((uintptr_t)p & 7)) {
		crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
		n--;
	}
	while (n >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		w ^= crc; /* little-endian: the low 4 bytes take the running crc */
		crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^ table[5][(w >> 16) & 0xff] ^
		      table[4][(w >> 24) & 0xff] ^ table[3][(w >> 32) & 0xff] ^
		      table[2][(w >> 40) & 0xff] ^ table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
		p += 8;
		n -= 8;
	}
	while (n--)
		crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__)
/*
 * Multiplies a and b modulo the polynomial (reflected bit order, x^0 in bit 31): the tool to
 * shift a CRC register over n zero bytes, so independent streams can be combined (zlib's
 * crc32_combine does the same for its polynomial). ~32 steps: per block, not per byte.
 */
static uint32_t multmodp(uint32_t a, uint32_t b)
{
	uint32_t m = 1u << 31, p = 0;

	for (;;) {
		if (a & m) {
			p ^= b;
			if ((a & (m - 1)) == 0)
				break;
		}
		m >>= 1;
		b = b & 1 ? (b >> 1) ^ POLY : b >> 1;
	}
	return p;
}

#define BLK 8192u		/* bytes per stream per block */
static uint32_t shift1, shift2; /* x^(8 BLK), x^(16 BLK) mod P */

/*
 * crc32q has a latency of 3 cycles but a throughput of one a cycle, so three independent
 * streams over three adjacent blocks run ~3x faster than one; their registers are then
 * combined by shifting the earlier ones over the bytes that follow them (linear algebra over
 * GF(2): reg(A|B) = reg(A) * x^(8|B|) + reg_from_zero(B)).
 */
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t n)
{
	uint64_t c = crc;

	while (n && ((uintptr_t)p & 7)) {
		c = _mm_crc32_u8((uint32_t)c, *p++);
		n--;
	}
	while (n >= 3 * BLK) {
		uint64_t c1 = 0, c2 = 0;

		for (size_t i = 0; i < BLK; i += 8) {
			uint64_t w0, w1, w2;

			memcpy(&w0, p + i, 8);
			memcpy(&w1, p + BLK + i, 8);
			memcpy(&w2, p + 2 * BLK + i, 8);
			c = _mm_crc32_u64(c, w0);
			c1 = _mm_crc32_u64(c1, w1);
			c2 = _mm_crc32_u64(c2, w2);
		}
		c = multmodp(shift2, (uint32_t)c) ^ multmodp(shift1, (uint32_t)c1) ^ (uint32_t)c2;
		p += 3 * BLK;
		n -= 3 * BLK;
	}
	while (n >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c = _mm_crc32_u64(c, w);
		p += 8;
		n -= 8;
	}
	while (n--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return (uint32_t)c;
}

/* x^(8 n) mod P by repeated squaring. */
static uint32_t x8nmodp(size_t n)
{
	uint32_t p = 1u << 31, sq = 1u << 23; /* x^0; x^8 */

	while (n) {
		if (n & 1)
			p = multmodp(sq, p);
		sq = multmodp(sq, sq);
		n >>= 1;
	}
	return p;
}

static int have_sse42(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d))
		return 0;
	return (c & bit_SSE4_2) != 0;
}
#endif

__attribute__((constructor)) static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = table[0][table[t - 1][i] & 0xff] ^ (table[t - 1][i] >> 8);
	impl = crc_sw;
#if defined(__x86_64__)
	shift1 = x8nmodp(BLK);
	shift2 = x8nmodp(2 * BLK);
	if (have_sse42())
		impl = crc_hw;
#endif
}

uint32_t sl_crc32c(uint32_t crc, const void *p, size_t n)
{
	return ~impl(~crc, (const uint8_t *)p, n);
}

uint32_t sl_crc32c_sw(uint32_t crc, const void *p, size_t n)
{
	return ~crc_sw(~crc, (const uint8_t *)p, n);
}
