/*
 * key.h - the encoded form of a record's key: the bytes keyed state, timers and exchanges
 * hash and compare. Fields are laid out one after another in a fixed form per type, so two
 * equal keys have equal bytes and a key can be decoded without its schema's row.
 */
#ifndef SL_BASE_KEY_H
#define SL_BASE_KEY_H

#include <stdint.h>

#include <sluice/types.h>

#define SL_MAX_KEY_FIELDS 8
#define SL_KEY_MAX	  1024 /* bytes of an encoded key */

/* Encodes key fields of `row` into buf (SL_KEY_MAX bytes; strings are cut so the whole key
 * fits, which only merges keys sharing a ~1000-byte prefix). Returns the length. */
uint32_t sl_key_encode(const struct sl_row *row, const int *fields, const enum sl_type *types,
		       int nfields, uint8_t *buf);
/* Decodes key field `i` of an encoded key into builder field `field` (type from schema). */
void sl_key_decode_field(const uint8_t *key, uint32_t klen, int i, enum sl_type type,
			 struct sl_row_builder *out, int field);

#endif
