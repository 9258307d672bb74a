/*
 * csv.c - CSV records (RFC 4180) to rows: columns map to schema fields by position.
 *
 * A STRING must be UTF-8: other bytes make the record an error (dead letter), as Flink's CSV
 * format fails on them, so no sink ever receives text that is not UTF-8 from here.
 *
 * A quoted field may hold the delimiter, line breaks and doubled quotes; it is used in place
 * unless it holds a doubled quote, in which case it is unescaped into the decoder's own
 * buffer (allocated once, as large as a row can be). Unquoted fields are taken as they are,
 * a stray quote inside one included (lenient, as most CSV readers are).
 *
 * Record boundaries (sl_csv_dec_record_len): a '\n' ends a record outside quotes, where a
 * quote opens a field only at the field's start and closes it unless doubled, exactly as the
 * decoder reads them, so a stray quote inside an unquoted field is text and changes nothing.
 * A line without a quote - nearly every line - costs two memchr; a line with one is scanned.
 *
 * One bad quote costs one record, never the rest of the input. A quoted field that holds a
 * line break but does not close properly - its closing quote is followed by something other
 * than the delimiter or the line end, the input ends inside it, or it grows past
 * SL_ROW_SCRATCH bytes, more than any row can hold - is an unterminated quote: the record
 * ends at the end of the line where that field opened (the decoder then reports it as
 * unterminated) and the next line starts a new record. A well-formed record is never cut.
 */
#include <errno.h>
#include <stdlib.h>

#include "format.h"
#include "utf8.h"

struct sl_csv_dec {
	int n;
	struct sl_fmt_field f[SL_SCHEMA_MAX_FIELDS];
	char delim;
	const char *null_lit; /* borrowed; NULL: no null literal */
	size_t null_len;
	bool fast;	    /* the one-pass field readers may run (see read_fast) */
	char *unq;	    /* SL_ROW_SCRATCH bytes for unescaping */
	uint64_t overflows; /* DECIMAL values made NULL */
};

struct sl_csv_dec *sl_csv_dec_create(const struct sl_schema *schema, const struct sl_csv_opts *opts)
{
	struct sl_csv_dec *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->unq = malloc(SL_ROW_SCRATCH);
	if (!d->unq) {
		free(d);
		return NULL;
	}
	d->n = sl_schema_nfields(schema);
	for (int i = 0; i < d->n; i++)
		sl_fmt_field_init(&d->f[i], schema, i, &d->overflows,
				  opts && opts->fail_on_decimal_overflow);
	d->delim = opts && opts->delimiter ? opts->delimiter : ',';
	d->null_lit = opts ? opts->null_literal : NULL;
	d->null_len = d->null_lit ? strlen(d->null_lit) : 0;
	/* a null literal a number could spell ('0', '-1') must be compared before parsing, and
	 * a delimiter a number could hold ('.', '-') must end the field before the number */
	d->fast = (!d->null_lit || !d->null_len ||
		   strspn(d->null_lit, "0123456789+-.eE") < d->null_len) &&
		  !memchr("0123456789+-.eE", d->delim, 15);
	return d;
}

uint64_t sl_csv_dec_overflows(const struct sl_csv_dec *d)
{
	return d->overflows;
}

void sl_csv_dec_destroy(struct sl_csv_dec *d)
{
	if (!d)
		return;
	free(d->unq);
	free(d);
}

static void set_value(struct sl_csv_dec *d, struct sl_row_builder *b, int i, const char *s,
		      size_t len, bool quoted, int *rc, char *why)
{
	size_t bad;

	if (!quoted && ((d->null_lit && len == d->null_len && memcmp(s, d->null_lit, len) == 0) ||
			(len == 0 && d->f[i].type != SL_TYPE_STRING))) {
		sl_rowb_set_null(b, i);
		return;
	}
	if (d->f[i].type == SL_TYPE_STRING && (bad = sl_utf8_check(s, len)) < len) {
		sl_fmt_why(why, "field '%s': not UTF-8 (byte %zu of the value is 0x%02x)",
			   d->f[i].name, bad + 1, (unsigned char)s[bad]);
		*rc = -EINVAL;
		return;
	}
	*rc = sl_fmt_set_text(b, i, &d->f[i], s, len, why);
}

/*
 * The one-pass field readers: an unquoted INT, BIGINT, DOUBLE or short STRING field is read
 * while its end is found, instead of a memchr for the delimiter, then a second pass that
 * parses (and for text, one that checks UTF-8). They take only what they can decide alone:
 * an optional sign and at most 18 digits within the type's range, a number of the double
 * fast path's shape (sl_fmt_f64_fast), ASCII text up to 32 bytes other than the null
 * literal, each ended by the delimiter or the record's end. Anything else - blanks, an empty
 * field, too many digits, a range error, a byte >= 0x80, the null literal - returns false
 * without touching the row, and the general path (set_value) reads the field from its start
 * and decides exactly as it always has. Hot path: no calls but the double's.
 */
static bool is_digit(char c)
{
	return (unsigned)((unsigned char)c - '0') <= 9;
}

/*
 * Eight digits at once (SWAR): whether the 8 bytes at s are all ASCII digits - each byte's
 * high nibble is 3, and stays 3 when 6 is added (so its low nibble is at most 9) - and their
 * value, combined pairwise in three multiplications. Little-endian only: the first digit
 * must be the lowest byte. A third of the instructions of eight steps of the digit loop.
 */
static bool digits8(const char *s, uint64_t *out)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t x;

	memcpy(&x, s, 8);
	if (((x & 0xf0f0f0f0f0f0f0f0u) |
	     (((x + 0x0606060606060606u) & 0xf0f0f0f0f0f0f0f0u) >> 4)) != 0x3333333333333333u)
		return false;
	x -= 0x3030303030303030u;
	x = (x * 10 + (x >> 8)) & 0x00ff00ff00ff00ffu;
	x = (x * 100 + (x >> 16)) & 0x0000ffff0000ffffu;
	*out = (x * 10000 + (x >> 32)) & 0xffffffffu;
	return true;
#else
	(void)s;
	(void)out;
	return false;
#endif
}

static bool fast_int(const struct sl_csv_dec *d, struct sl_row_builder *b, int i, const char *rec,
		     size_t len, size_t *p)
{
	uint64_t v8;
	size_t q = *p, start;
	uint64_t v = 0; /* wraps harmlessly past 19 digits: refused below */
	bool neg = false;
	int64_t r;

	if (q < len && (rec[q] == '-' || rec[q] == '+')) {
		neg = rec[q] == '-';
		q++;
	}
	start = q;
	/* at most two blocks: more than 18 digits is refused anyway */
	for (int k = 0; k < 2 && len - q >= 8 && digits8(rec + q, &v8); k++, q += 8)
		v = v * 100000000 + v8;
	for (; q < len && is_digit(rec[q]); q++)
		v = v * 10 + (unsigned)(rec[q] - '0');
	if (q == start || q - start > 18 || (q < len && rec[q] != d->delim))
		return false;
	r = neg ? -(int64_t)v : (int64_t)v;
	if (d->f[i].type == SL_TYPE_INT && (r < INT32_MIN || r > INT32_MAX))
		return false; /* the general path words the range error */
	sl_rowb_set_i64(b, i, r);
	*p = q;
	return true;
}

static bool fast_f64(const struct sl_csv_dec *d, struct sl_row_builder *b, int i, const char *rec,
		     size_t len, size_t *p)
{
	size_t q;
	double v;

	/* the field is the number alone, under 128 bytes as sl_fmt_parse_f64 requires */
	if (!sl_fmt_f64_fast_prefix(rec + *p, len - *p, &v, &q) || q == 0 || q >= 128 ||
	    (*p + q < len && rec[*p + q] != d->delim))
		return false;
	q += *p;
	sl_rowb_set_f64(b, i, v);
	*p = q;
	return true;
}

static bool fast_str(const struct sl_csv_dec *d, struct sl_row_builder *b, int i, const char *rec,
		     size_t len, size_t *p)
{
	size_t q = *p, end = len - *p > 32 ? *p + 32 : len;
	unsigned char high = 0;

	for (; q < end && rec[q] != d->delim; q++)
		high |= (unsigned char)rec[q];
	if ((q == end && end < len) || (high & 0x80) ||
	    (d->null_lit && q - *p == d->null_len &&
	     memcmp(rec + *p, d->null_lit, d->null_len) == 0))
		return false;
	sl_rowb_set_str(b, i, rec + *p, (uint32_t)(q - *p));
	*p = q;
	return true;
}

static bool read_fast(const struct sl_csv_dec *d, struct sl_row_builder *b, int i, const char *rec,
		      size_t len, size_t *p)
{
	if (!d->fast)
		return false;
	switch (d->f[i].type) {
	case SL_TYPE_INT:
	case SL_TYPE_BIGINT:
		return fast_int(d, b, i, rec, len, p);
	case SL_TYPE_DOUBLE:
		return fast_f64(d, b, i, rec, len, p);
	case SL_TYPE_STRING:
		return fast_str(d, b, i, rec, len, p);
	default:
		return false;
	}
}

/*
 * Reads the quoted field starting at rec[*p] (the opening quote). On success points *s, *vlen
 * at its value and leaves *p after the closing quote. Returns 0 or -EINVAL (why filled).
 */
static int quoted_field(struct sl_csv_dec *d, const char *rec, size_t len, size_t *p,
			const char **s, size_t *vlen, int field, char *why)
{
	size_t start = *p + 1, q;
	const char *cq = memchr(rec + start, '"', len - start);
	size_t o = 0;

	if (!cq)
		goto unterminated;
	q = (size_t)(cq - rec);
	if (q + 1 >= len || rec[q + 1] != '"') {
		/* common case: no doubled quote, use the bytes in place */
		*s = rec + start;
		*vlen = q - start;
		*p = q + 1;
		return 0;
	}
	for (size_t j = start; j < len; j++) {
		if (rec[j] == '"') {
			if (j + 1 < len && rec[j + 1] == '"') {
				j++;
			} else {
				*s = d->unq;
				*vlen = o;
				*p = j + 1;
				return 0;
			}
		}
		if (o == SL_ROW_SCRATCH) {
			sl_fmt_why(why, "column %d ('%s'): quoted field longer than %d bytes",
				   field + 1, d->f[field].name, SL_ROW_SCRATCH);
			return -EINVAL;
		}
		d->unq[o++] = rec[j];
	}
unterminated:
	sl_fmt_why(why, "column %d ('%s'): unterminated quoted field", field + 1,
		   field < d->n ? d->f[field].name : "?");
	return -EINVAL;
}

const struct sl_row *sl_csv_dec_row(struct sl_csv_dec *d, const char *rec, size_t len, void *buf,
				    uint32_t cap, char *why)
{
	struct sl_row_builder b;
	const struct sl_row *row;
	size_t p = 0;
	int nf = 0, rc = 0;

	sl_rowb_init(&b, buf, cap, d->n);
	for (;;) {
		const char *s;
		size_t vlen;
		bool quoted = p < len && rec[p] == '"';

		if (nf == d->n) {
			sl_fmt_why(why, "record has more than %d fields", d->n);
			return NULL;
		}
		if (quoted) {
			if (quoted_field(d, rec, len, &p, &s, &vlen, nf, why) < 0)
				return NULL;
			if (p < len && rec[p] != d->delim) {
				sl_fmt_why(why, "column %d ('%s'): '%c' after closing quote",
					   nf + 1, d->f[nf].name, rec[p]);
				return NULL;
			}
			set_value(d, &b, nf, s, vlen, quoted, &rc, why);
		} else if (!read_fast(d, &b, nf, rec, len, &p)) {
			const char *e = memchr(rec + p, d->delim, len - p);

			s = rec + p;
			vlen = e ? (size_t)(e - s) : len - p;
			p += vlen;
			set_value(d, &b, nf, s, vlen, quoted, &rc, why);
		}
		if (rc < 0)
			return NULL;
		nf++;
		if (p >= len)
			break;
		p++; /* the delimiter; a trailing one starts an empty last field */
	}
	if (nf != d->n) {
		sl_fmt_why(why, "record has %d field%s, schema has %d", nf, nf == 1 ? "" : "s",
			   d->n);
		return NULL;
	}
	row = sl_rowb_finish(&b);
	if (!row)
		sl_fmt_why(why, "row exceeds %u bytes", cap);
	return row;
}

/*
 * Scans the record at buf[0..len) that holds a quote (see the file comment). Returns its
 * length including the '\n', the length of the line where a bad multi-line quoted field
 * opened, or 0 when more input is needed.
 */
static size_t scan_quoted(char delim, const char *buf, size_t len, bool eof)
{
	enum { FIELD_START, UNQUOTED, QUOTED, CLOSED } st = FIELD_START;
	size_t i = 0, qstart = 0, open_nl = 0; /* open_nl: end + 1 of the line where the open
						  quoted field began, once it spans lines */

	while (i < len) {
		char ch = buf[i];

		switch (st) {
		case FIELD_START:
			if (ch == '"') {
				st = QUOTED;
				qstart = i++;
				open_nl = 0;
				continue;
			}
			st = UNQUOTED;
			/* fall through */
		case UNQUOTED:
			if (ch == '\n')
				return i + 1;
			if (ch == delim)
				st = FIELD_START;
			i++;
			continue;
		case QUOTED: {
			const char *q = memchr(buf + i, '"', len - i);
			size_t e = q ? (size_t)(q - buf) : len;

			if (!open_nl) {
				const char *nl = memchr(buf + i, '\n', e - i);

				if (nl)
					open_nl = (size_t)(nl - buf) + 1;
			}
			if (open_nl && e - qstart > SL_ROW_SCRATCH)
				return open_nl;
			i = e + (q != NULL);
			if (q)
				st = CLOSED;
			continue;
		}
		case CLOSED:
			if (ch == '"') {
				st = QUOTED; /* a doubled quote */
			} else if (ch == delim) {
				st = FIELD_START;
			} else if (ch == '\n') {
				return i + 1;
			} else if (ch == '\r' && (i + 1 == len || buf[i + 1] == '\n')) {
				/* CRLF after the closing quote */
			} else if (open_nl) {
				return open_nl;
			} else {
				st = UNQUOTED; /* one line: the decoder reports the character */
			}
			i++;
			continue;
		}
	}
	if (!eof)
		return 0;
	return st == QUOTED && open_nl ? open_nl : len;
}

size_t sl_csv_dec_record(const struct sl_csv_dec *d, const char *buf, size_t len, bool eof,
			 uint64_t *breaks)
{
	const char *nl = memchr(buf, '\n', len);
	size_t e = nl ? (size_t)(nl - buf) : len, n;

	if (!memchr(buf, '"', e)) {
		*breaks = nl != NULL;
		return nl ? e + 1 : eof ? len : 0;
	}
	n = scan_quoted(d->delim, buf, len, eof);
	*breaks = 0;
	for (size_t i = 0; i < n; i++)
		*breaks += buf[i] == '\n';
	return n;
}

size_t sl_csv_dec_record_len(const struct sl_csv_dec *d, const char *buf, size_t len, bool eof)
{
	uint64_t breaks;

	return sl_csv_dec_record(d, buf, len, eof, &breaks);
}

/* A STRING needs quotes when it holds the delimiter, a quote or a line break, or is empty
 * (so that it reads back as "" and not as NULL). */
static bool needs_quotes(const char *s, uint32_t len, char delim)
{
	if (!len)
		return true;
	for (uint32_t i = 0; i < len; i++)
		if (s[i] == delim || s[i] == '"' || s[i] == '\n' || s[i] == '\r')
			return true;
	return false;
}

int sl_csv_write_row(const struct sl_row *r, const struct sl_schema *s,
		     const struct sl_csv_opts *opts, char *buf, size_t cap)
{
	char delim = opts && opts->delimiter ? opts->delimiter : ',';
	const char *nl = opts ? opts->null_literal : NULL;
	size_t nll = nl ? strlen(nl) : 0;
	char *o = buf, *end = buf + cap;

	for (int i = 0; i < r->nfields; i++) {
		enum sl_type t = sl_schema_type(s, i);
		size_t need = 2 + nll + SL_FMT_SCALAR_MAX;
		const char *str = NULL;
		uint32_t len = 0;

		if (!sl_row_is_null(r, i) && t == SL_TYPE_STRING) {
			str = sl_row_str(r, i, &len);
			need += 2 * (size_t)len + 2;
		}
		if (need > (size_t)(end - o))
			return -ENOSPC;
		if (i)
			*o++ = delim;
		if (sl_row_is_null(r, i)) {
			memcpy(o, nl ? nl : "", nll);
			o += nll;
		} else if (t != SL_TYPE_STRING) {
			o += sl_fmt_write_scalar(r, i, t, sl_schema_scale(s, i), o);
		} else if (!needs_quotes(str, len, delim)) {
			memcpy(o, str, len);
			o += len;
		} else {
			*o++ = '"';
			for (uint32_t k = 0; k < len; k++) {
				if (str[k] == '"')
					*o++ = '"';
				*o++ = str[k];
			}
			*o++ = '"';
		}
	}
	if (end - o < 1)
		return -ENOSPC;
	*o++ = '\n';
	return (int)(o - buf);
}
