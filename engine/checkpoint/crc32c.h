/*
 * crc32c.h - CRC32C (Castagnoli, the iSCSI / ext4 / RocksDB checksum) of checkpoint bytes.
 *
 * Every state file and every manifest carries one, so a flipped or missing byte is caught at
 * recovery. The x86 SSE4.2 `crc32` instruction computes exactly this polynomial, so it is used
 * when the CPU has it; elsewhere a table-driven (slicing-by-8) version gives the same values.
 */
#ifndef SL_CHECKPOINT_CRC32C_H
#define SL_CHECKPOINT_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/*
 * Extends `crc` (0 to start) over p[0..n). sl_crc32c(sl_crc32c(0, a, x), b, y) equals the
 * checksum of a followed by b. Any thread; no allocation.
 */
uint32_t sl_crc32c(uint32_t crc, const void *p, size_t n);

/* The portable table-driven version (what sl_crc32c uses without SSE4.2); for tests. */
uint32_t sl_crc32c_sw(uint32_t crc, const void *p, size_t n);

#endif
