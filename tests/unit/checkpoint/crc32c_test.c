/*
 * crc32c_test.c - CRC32C against the published vectors (RFC 3720 B.4 and the "123456789"
 * check value), the hardware and table versions against each other on random buffers at
 * every alignment and at lengths that take the three-stream path (>= 24 KiB), and
 * incremental use.
 */
#include "crc32c.h"

#include "tests/test.h"
#include "tests/unit/checkpoint/ckpt_util.h"

int main(void)
{
	uint8_t buf[4096 + 16];

	T_ASSERT_EQ_I64(sl_crc32c(0, "123456789", 9), 0xE3069283u);
	T_ASSERT_EQ_I64(sl_crc32c_sw(0, "123456789", 9), 0xE3069283u);
	T_ASSERT_EQ_I64(sl_crc32c(0, "", 0), 0);

	memset(buf, 0, 32); /* RFC 3720 B.4: 32 bytes of zeros */
	T_ASSERT_EQ_I64(sl_crc32c(0, buf, 32), 0x8A9136AAu);
	memset(buf, 0xff, 32); /* 32 bytes of ones */
	T_ASSERT_EQ_I64(sl_crc32c(0, buf, 32), 0x62A8AB43u);
	for (int i = 0; i < 32; i++) /* incrementing */
		buf[i] = (uint8_t)i;
	T_ASSERT_EQ_I64(sl_crc32c(0, buf, 32), 0x46DD794Eu);
	for (int i = 0; i < 32; i++) /* decrementing */
		buf[i] = (uint8_t)(31 - i);
	T_ASSERT_EQ_I64(sl_crc32c(0, buf, 32), 0x113FDB5Cu);

	util_fill(buf, sizeof(buf), 7);
	for (size_t off = 0; off < 16; off++) {
		for (size_t n = 0; n < 300; n += 7)
			T_ASSERT_EQ_I64(sl_crc32c(0, buf + off, n), sl_crc32c_sw(0, buf + off, n));
		T_ASSERT_EQ_I64(sl_crc32c(0, buf + off, 4096), sl_crc32c_sw(0, buf + off, 4096));
	}
	/* The three-stream hardware path (3 x 8 KiB blocks) against the tables. */
	{
		size_t big = 200000;
		uint8_t *b = malloc(big + 8);

		util_fill(b, big + 8, 11);
		for (size_t n = 24575; n < big; n += 24571)
			for (size_t off = 0; off < 8; off += 3)
				T_ASSERT_EQ_I64(sl_crc32c(0, b + off, n),
						sl_crc32c_sw(0, b + off, n));
		T_ASSERT_EQ_I64(sl_crc32c(0x1234, b, big), sl_crc32c_sw(0x1234, b, big));
		free(b);
	}
	/* Incremental equals one shot, split anywhere. */
	for (size_t cut = 0; cut <= 4096; cut += 511)
		T_ASSERT_EQ_I64(sl_crc32c(sl_crc32c(0, buf, cut), buf + cut, 4096 - cut),
				sl_crc32c(0, buf, 4096));
	/* One flipped bit changes it. */
	{
		uint32_t c = sl_crc32c(0, buf, 4096);

		buf[1000] ^= 4;
		T_ASSERT(sl_crc32c(0, buf, 4096) != c);
	}
	return T_EXIT_PASS;
}
