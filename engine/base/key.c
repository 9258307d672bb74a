/*
 * key.c - the byte encoding of keys, used for hashing at the exchange and for state lookups.
 *
 * Each key field: a tag byte (0 NULL, 1 fixed 8-byte value, 2 string) then the value (8
 * bytes, or a 4-byte length and the bytes). The encoding is canonical (equal keys give equal
 * bytes), which lets state compare keys with memcmp and hash them once at the sender.
 */
#include <string.h>

#include "key.h"

uint32_t sl_key_encode(const struct sl_row *row, const int *fields, const enum sl_type *types,
		       int nfields, uint8_t *buf)
{
	uint32_t n = 0;

	for (int i = 0; i < nfields; i++) {
		int f = fields[i];
		uint32_t len;
		const char *s;

		if (sl_row_is_null(row, f)) {
			buf[n++] = 0;
		} else if (types[i] == SL_TYPE_STRING) {
			/* cap the whole key: the fields after this one need at most 13 bytes each
			 */
			uint32_t room = SL_KEY_MAX - n - 5 - 13u * (uint32_t)(nfields - 1 - i);

			s = sl_row_str(row, f, &len);
			if (len > room)
				len = room;
			buf[n++] = 2;
			memcpy(buf + n, &len, 4);
			memcpy(buf + n + 4, s, len);
			n += 4 + len;
		} else {
			buf[n++] = 1;
			memcpy(buf + n, &row->slot[f], 8);
			n += 8;
		}
	}
	return n;
}

void sl_key_decode_field(const uint8_t *key, uint32_t klen, int i, enum sl_type type,
			 struct sl_row_builder *out, int field)
{
	uint32_t n = 0, len;
	uint64_t v;

	for (;;) {
		if (n >= klen) {
			sl_rowb_set_null(out, field);
			return;
		}
		uint8_t tag = key[n++];

		if (i-- == 0) {
			if (tag == 0) {
				sl_rowb_set_null(out, field);
			} else if (tag == 2) {
				memcpy(&len, key + n, 4);
				sl_rowb_set_str(out, field, (const char *)key + n + 4, len);
			} else {
				memcpy(&v, key + n, 8);
				if (type == SL_TYPE_DOUBLE) {
					double d;
					memcpy(&d, &v, 8);
					sl_rowb_set_f64(out, field, d);
				} else {
					sl_rowb_set_i64(out, field, (int64_t)v);
				}
			}
			return;
		}
		if (tag == 1) {
			n += 8;
		} else if (tag == 2) {
			memcpy(&len, key + n, 4);
			n += 4 + len;
		}
	}
}
