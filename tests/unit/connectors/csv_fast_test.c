/*
 * csv_fast_test.c - the CSV decoder's one-pass field readers against the general path:
 * random unquoted records (numbers of every length and sign, blanks, out-of-range values,
 * doubles the fast path refuses, non-ASCII and long text, empty fields and null literals
 * that look like numbers) must decode to the same row bytes, or fail with the same reason,
 * as a reference that splits at the delimiter and converts each field with
 * sl_fmt_set_text under the decoder's NULL rules, with delimiters a number could hold too. A fixed
 * seed: the same records every run.
 */
#include "conn_harness.h"
#include "format.h"
#include "utf8.h"

static _Alignas(8) char rowbuf[SL_ROW_SCRATCH], refbuf[SL_ROW_SCRATCH];
static char why[SL_FMT_WHY_MAX], refwhy[SL_FMT_WHY_MAX];

static uint64_t rng = 42;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static unsigned below(unsigned n)
{
	return (unsigned)(next() % n);
}

/* The general path, field by field, as sl_csv_dec_row's set_value applies it. */
static const struct sl_row *reference(const struct sl_schema *s, const struct sl_fmt_field *f,
				      const char *null_lit, char delim, const char *rec, size_t len)
{
	struct sl_row_builder b;
	int n = sl_schema_nfields(s), nf = 0;
	size_t p = 0;

	sl_rowb_init(&b, refbuf, sizeof refbuf, n);
	for (;;) {
		const char *e = memchr(rec + p, delim, len - p), *v = rec + p;
		size_t vlen = e ? (size_t)(e - v) : len - p, bad;

		if (nf == n) {
			sl_fmt_why(refwhy, "record has more than %d fields", n);
			return NULL;
		}
		if ((null_lit && vlen == strlen(null_lit) && !memcmp(v, null_lit, vlen)) ||
		    (vlen == 0 && f[nf].type != SL_TYPE_STRING)) {
			sl_rowb_set_null(&b, nf);
		} else if (f[nf].type == SL_TYPE_STRING && (bad = sl_utf8_check(v, vlen)) < vlen) {
			sl_fmt_why(refwhy,
				   "field '%s': not UTF-8 (byte %zu of the value is 0x%02x)",
				   f[nf].name, bad + 1, (unsigned char)v[bad]);
			return NULL;
		} else if (sl_fmt_set_text(&b, nf, &f[nf], v, vlen, refwhy) < 0) {
			return NULL;
		}
		nf++;
		p += vlen;
		if (p >= len)
			break;
		p++;
	}
	if (nf != n) {
		sl_fmt_why(refwhy, "record has %d field%s, schema has %d", nf, nf == 1 ? "" : "s",
			   n);
		return NULL;
	}
	return sl_rowb_finish(&b);
}

static size_t gen_digits(char *o, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		o[k] = (char)('0' + below(10));
	return n;
}

/* A field's text, mostly of its own type's shapes, sometimes another's. */
static size_t gen_field(char *o, enum sl_type t, const char *null_lit)
{
	size_t n = 0;

	if (below(25) == 0 && null_lit) {
		memcpy(o, null_lit, strlen(null_lit));
		return strlen(null_lit);
	}
	if (below(30) == 0)
		return 0;
	if (below(20) == 0)
		t = (enum sl_type)(below(2) ? SL_TYPE_STRING : SL_TYPE_BIGINT);
	if (below(40) == 0)
		o[n++] = below(2) ? ' ' : '\t';
	switch (t) {
	case SL_TYPE_INT:
	case SL_TYPE_BIGINT:
		if (below(3) == 0)
			o[n++] = below(2) ? '-' : '+';
		n += gen_digits(o + n, below(5) == 0 ? below(22) : 1 + below(12));
		break;
	case SL_TYPE_DOUBLE:
		if (below(3) == 0)
			o[n++] = '-';
		n += gen_digits(o + n, below(20));
		if (below(3)) {
			o[n++] = '.';
			n += gen_digits(o + n, below(6) == 0 ? below(30) : below(4));
		}
		if (below(6) == 0) {
			o[n++] = 'e';
			if (below(2))
				o[n++] = below(2) ? '-' : '+';
			n += gen_digits(o + n, below(4));
		}
		if (below(50) == 0) {
			static const char *const odd[] = { "NaN", "Infinity", "0x1p3", "1e", "." };
			const char *w = odd[below(5)];

			n = strlen(w);
			memcpy(o, w, n);
		}
		if (below(60) == 0) {
			memset(o, '0', 140);
			n = 140;
		}
		break;
	default: {
		static const char *const alpha[] = { "a",    "b",	 "Z",
						     " ",    "-",	 "1",
						     ".",    "\xc3\xa9", "\xe2\x82\xac",
						     "\xff", "\x80" };
		unsigned len = below(6) == 0 ? 20 + below(30) : below(10);

		for (unsigned k = 0; k < len; k++) {
			const char *w = alpha[below(7) == 0 ? below(11) : below(7)];

			memcpy(o + n, w, strlen(w));
			n += strlen(w);
		}
		break;
	}
	}
	if (below(40) == 0)
		o[n++] = " \tx\r"[below(4)];
	/* a byte just outside the digits (':' and '/' border '0'..'9') anywhere in the field:
	 * the eight-digit blocks must see it */
	if (n && below(20) == 0)
		o[below((unsigned)n)] = ":/ \xb0"[below(4)];
	return n;
}

static void run(const char *null_lit, char delim, int nrec)
{
	static const char *const spec[] = { "i",      "INT",	"b",	  "BIGINT", "d",
					    "DOUBLE", "s",	"STRING", "ok",	    "BOOL",
					    "b2",     "BIGINT", NULL };
	struct sl_schema *s = h_schema(spec);
	struct sl_csv_opts o = { .delimiter = delim, .null_literal = null_lit };
	struct sl_csv_dec *d = sl_csv_dec_create(s, &o);
	struct sl_fmt_field f[8];
	uint64_t ovf = 0;
	char rec[2048];
	int n = sl_schema_nfields(s);

	T_ASSERT(d);
	for (int i = 0; i < n; i++)
		sl_fmt_field_init(&f[i], s, i, &ovf, false);
	for (int r = 0; r < nrec; r++) {
		size_t len = 0;
		int nf = below(30) == 0 ? (int)below(8) : n;

		for (int i = 0; i < nf; i++) {
			if (i)
				rec[len++] = delim;
			len += gen_field(rec + len, i < n ? f[i].type : SL_TYPE_STRING, null_lit);
		}
		why[0] = refwhy[0] = '\0';
		const struct sl_row *got = sl_csv_dec_row(d, rec, len, rowbuf, sizeof rowbuf, why);
		const struct sl_row *want = reference(s, f, null_lit, delim, rec, len);

		if (!got != !want ||
		    (got && (got->size != want->size || memcmp(got, want, got->size) != 0)) ||
		    (!got && strcmp(why, refwhy) != 0)) {
			fprintf(stderr,
				"null literal %s, record [%.*s]: decoder %s '%s', general "
				"path %s '%s'\n",
				null_lit ? null_lit : "(none)", (int)len, rec,
				got ? "row" : "error", why, want ? "row" : "error", refwhy);
			exit(T_EXIT_FAIL);
		}
	}
	sl_csv_dec_destroy(d);
	sl_schema_destroy(s);
}

int main(void)
{
	run(NULL, ',', 100000);
	run("\\N", ',', 50000);
	run("0", ',', 50000);  /* a null literal a number spells */
	run("-1", ',', 50000); /* the same, signed */
	run("", ',', 50000);   /* empty text is NULL for strings too */
	run("a", ',', 50000);  /* one a string field can spell */
	run(NULL, '\t', 30000);
	run(NULL, '.', 30000); /* delimiters a number could hold */
	run(NULL, '-', 30000);
	run(NULL, 'e', 30000);
	run(NULL, '5', 30000);
	return T_EXIT_PASS;
}
