/*
 * json_simdjson.cc - the JSON-lines decoder: a thin C++17 shim over simdjson's On Demand API
 * with a C interface (sluice/connectors.h). The only C++ in connectors/.
 *
 * One decoder per split keeps one ondemand::parser, so after the parser has grown to the
 * longest record no record allocates. A record is walked once, field by field; each key is
 * matched first against the field after the previously matched one (JSON producers write
 * keys in a fixed order, so this is one compare per key), then against every field. Values of
 * keys outside the schema are skipped without being converted; On Demand checks their
 * brackets and strings (stage 1) but not their literals, so `"other": nul` passes unnoticed
 * while the same in a schema field is an error. That is the price of not building a tape.
 *
 * Invariants: the input has SIMDJSON_PADDING readable bytes past its end (the caller's
 * contract, or the copy buffer here); no C++ exception crosses the C boundary (only the
 * error-code API is used and allocation is nothrow).
 */
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>
#include <utility>

#include <simdjson.h>

#include "format.h"

using namespace simdjson;

static_assert(SL_JSON_PADDING >= SIMDJSON_PADDING, "the C contract must cover simdjson's");

/* The parser is sized up front to this so ordinary records never grow it. */
static const size_t PARSER_INITIAL = 64 * 1024;

struct sl_json_dec {
	ondemand::parser parser;
	int n;                                      /* schema fields */
	int8_t after[SL_SCHEMA_MAX_FIELDS + 1];     /* key seen after field i last time;
						     * [n]: the first key */
	const char *name[SL_SCHEMA_MAX_FIELDS];     /* borrowed from the schema */
	std::string_view view[SL_SCHEMA_MAX_FIELDS];
	enum sl_type type[SL_SCHEMA_MAX_FIELDS];
	char *copy;                                 /* padded copies for sl_json_dec_row_copy */
	size_t copy_cap;
};

extern "C" struct sl_json_dec *sl_json_dec_create(const struct sl_schema *schema)
{
	struct sl_json_dec *d = new (std::nothrow) sl_json_dec();

	if (!d)
		return nullptr;
	d->n = sl_schema_nfields(schema);
	for (int i = 0; i <= d->n; i++)
		d->after[i] = (int8_t)(i < d->n ? i + 1 : 0);
	for (int i = 0; i < d->n; i++) {
		d->name[i] = sl_schema_name(schema, i);
		d->view[i] = std::string_view(d->name[i]);
		d->type[i] = sl_schema_type(schema, i);
	}
	d->copy = nullptr;
	d->copy_cap = 0;
	if (d->parser.allocate(PARSER_INITIAL) != SUCCESS) {
		delete d;
		return nullptr;
	}
	return d;
}

extern "C" void sl_json_dec_destroy(struct sl_json_dec *d)
{
	if (!d)
		return;
	free(d->copy);
	delete d;
}

static bool raw_has_escape(const char *p)
{
	for (;; p++) {
		if (*p == '"')
			return false;
		if (*p == '\\')
			return true;
	}
}

/* Returns the schema index of the field's key, or -1 for a key outside the schema. */
static int lookup(struct sl_json_dec *d, ondemand::field &f, int prev)
{
	ondemand::raw_json_string key = f.key();
	std::string_view unesc;
	int g = d->after[prev];

	if (g < d->n && key.unsafe_is_equal(d->view[g]))
		return g;
	for (int i = 0; i < d->n; i++)
		if (key.unsafe_is_equal(d->view[i]))
			return i;
	/* rare: an escaped key ("\u0061") can only be compared unescaped */
	if (!raw_has_escape(key.raw()) || f.unescaped_key().get(unesc) != SUCCESS)
		return -1;
	for (int i = 0; i < d->n; i++)
		if (unesc == d->view[i])
			return i;
	return -1;
}

static const char *json_type_name(ondemand::json_type t)
{
	switch (t) {
	case ondemand::json_type::array: return "array";
	case ondemand::json_type::object: return "object";
	case ondemand::json_type::number: return "number";
	case ondemand::json_type::string: return "string";
	case ondemand::json_type::boolean: return "boolean";
	case ondemand::json_type::null: return "null";
	}
	return "?";
}

static std::string_view trim_token(std::string_view s)
{
	while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' ||
			      s.back() == '\r'))
		s.remove_suffix(1);
	return s;
}

static int broken(char *why, error_code e)
{
	sl_fmt_why(why, "broken JSON: %s", error_message(e));
	return -EINVAL;
}

/* A number where an integer type is wanted: says whether it was a fraction or too big. */
static int bad_integer(struct sl_json_dec *d, int i, ondemand::value &v, error_code e, char *why)
{
	std::string_view tok;

	if (e != INCORRECT_TYPE && e != NUMBER_OUT_OF_RANGE)
		return broken(why, e);
	tok = trim_token(v.raw_json_token());
	sl_fmt_why(why, "field '%s': %.*s is not a valid %s", d->name[i],
		   (int)(tok.size() > 40 ? 40 : tok.size()), tok.data(), sl_type_name(d->type[i]));
	return -EINVAL;
}

static error_code raw_object(ondemand::value &v, std::string_view *s)
{
	ondemand::object o;
	error_code e = v.get_object().get(o);

	return e ? e : o.raw_json().get(*s);
}

static error_code raw_array(ondemand::value &v, std::string_view *s)
{
	ondemand::array a;
	error_code e = v.get_array().get(a);

	return e ? e : a.raw_json().get(*s);
}

/* Converts one value into field i. Hot path. */
static int set_field(struct sl_json_dec *d, struct sl_row_builder *b, int i, ondemand::value &v,
		     char *why)
{
	ondemand::json_type jt;
	std::string_view s;
	error_code e;
	int64_t iv;
	double dv;
	bool bv;

	if ((e = v.type().get(jt)) != SUCCESS)
		return broken(why, e);
	if (jt == ondemand::json_type::null) {
		/* type() only peeks at the first byte: check the literal really is null */
		if ((e = v.is_null().get(bv)) != SUCCESS || !bv)
			return broken(why, e ? e : N_ATOM_ERROR);
		sl_rowb_set_null(b, i);
		return 0;
	}
	if (jt == ondemand::json_type::string && d->type[i] != SL_TYPE_STRING) {
		/* numbers, booleans and timestamps may arrive quoted */
		if ((e = v.get_string().get(s)) != SUCCESS)
			return broken(why, e);
		return sl_fmt_set_text(b, i, d->type[i], d->name[i], s.data(), s.size(), why);
	}
	switch (d->type[i]) {
	case SL_TYPE_BOOL:
		if (jt != ondemand::json_type::boolean)
			break;
		if ((e = v.get_bool().get(bv)) != SUCCESS)
			return broken(why, e);
		sl_rowb_set_bool(b, i, bv);
		return 0;
	case SL_TYPE_INT:
	case SL_TYPE_BIGINT:
	case SL_TYPE_TIMESTAMP:
		if (jt != ondemand::json_type::number)
			break;
		if ((e = v.get_int64().get(iv)) != SUCCESS)
			return bad_integer(d, i, v, e, why);
		if (d->type[i] == SL_TYPE_INT && (iv < INT32_MIN || iv > INT32_MAX)) {
			sl_fmt_why(why, "field '%s': %lld out of range for INT", d->name[i],
				   (long long)iv);
			return -EINVAL;
		}
		sl_rowb_set_i64(b, i, iv);
		return 0;
	case SL_TYPE_DOUBLE:
		if (jt != ondemand::json_type::number)
			break;
		if ((e = v.get_double().get(dv)) != SUCCESS)
			return broken(why, e);
		sl_rowb_set_f64(b, i, dv);
		return 0;
	case SL_TYPE_STRING:
		/* Flink keeps nested JSON as its text and numbers as their literal */
		if (jt == ondemand::json_type::string)
			e = v.get_string().get(s);
		else if (jt == ondemand::json_type::object)
			e = raw_object(v, &s);
		else if (jt == ondemand::json_type::array)
			e = raw_array(v, &s);
		else
			s = trim_token(v.raw_json_token());
		if (e != SUCCESS)
			return broken(why, e);
		if (jt == ondemand::json_type::boolean) {
			/* validate the literal: type() only looked at its first byte */
			if ((e = v.get_bool().get(bv)) != SUCCESS)
				return broken(why, e);
		} else if (jt == ondemand::json_type::number) {
			if ((e = v.get_double().get(dv)) != SUCCESS)
				return broken(why, e);
		}
		sl_rowb_set_str(b, i, s.data(), (uint32_t)s.size());
		return 0;
	}
	sl_fmt_why(why, "field '%s': expected %s, got %s", d->name[i], sl_type_name(d->type[i]),
		   json_type_name(jt));
	return -EINVAL;
}

static const struct sl_row *decode(struct sl_json_dec *d, const char *line, size_t len,
				   void *buf, uint32_t cap, char *why)
{
	struct sl_row_builder b;
	ondemand::document doc;
	ondemand::object obj;
	const struct sl_row *row;
	int prev = d->n; /* "before the first key" */
	error_code e;

	if (len > d->parser.capacity()) {
		/* grow geometrically so a slowly growing record size reallocates rarely */
		size_t want = d->parser.capacity() * 2 > len ? d->parser.capacity() * 2 : len;

		if (d->parser.allocate(want) != SUCCESS) {
			sl_fmt_why(why, "record of %zu bytes: out of memory", len);
			return nullptr;
		}
	}
	sl_rowb_init(&b, buf, cap, d->n);
	if ((e = d->parser.iterate(line, len, len + SIMDJSON_PADDING).get(doc)) != SUCCESS) {
		broken(why, e);
		return nullptr;
	}
	if ((e = doc.get_object().get(obj)) != SUCCESS) {
		if (e == INCORRECT_TYPE)
			sl_fmt_why(why, "not a JSON object");
		else
			broken(why, e);
		return nullptr;
	}
	for (auto fr : obj) {
		ondemand::field f;
		ondemand::value v;
		int i;

		if ((e = std::move(fr).get(f)) != SUCCESS) {
			broken(why, e);
			return nullptr;
		}
		i = lookup(d, f, prev);
		if (i < 0)
			continue; /* the iterator skips the unread value */
		d->after[prev] = (int8_t)i;
		prev = i;
		v = f.value();
		if (set_field(d, &b, i, v, why) < 0)
			return nullptr;
	}
	/* On Demand stops after the object; anything behind it is still in bounds */
	if (doc.current_location().error() != OUT_OF_BOUNDS) {
		sl_fmt_why(why, "broken JSON: trailing content after the object");
		return nullptr;
	}
	row = sl_rowb_finish(&b);
	if (!row)
		sl_fmt_why(why, "row exceeds %u bytes", cap);
	return row;
}

extern "C" const struct sl_row *sl_json_dec_row(struct sl_json_dec *d, const char *line,
						size_t len, void *buf, uint32_t cap, char *why)
{
	return decode(d, line, len, buf, cap, why);
}

extern "C" const struct sl_row *sl_json_dec_row_copy(struct sl_json_dec *d, const char *line,
						     size_t len, void *buf, uint32_t cap,
						     char *why)
{
	if (len + SIMDJSON_PADDING > d->copy_cap) {
		size_t want = (len + SIMDJSON_PADDING) * 2;
		char *p = static_cast<char *>(realloc(d->copy, want));

		if (!p) {
			sl_fmt_why(why, "record of %zu bytes: out of memory", len);
			return nullptr;
		}
		d->copy = p;
		d->copy_cap = want;
	}
	memcpy(d->copy, line, len);
	memset(d->copy + len, ' ', SIMDJSON_PADDING);
	return decode(d, d->copy, len, buf, cap, why);
}

extern "C" uint64_t sl_json_dec_lines(struct sl_json_dec *d, const char *buf, size_t len,
				      void *rowbuf, uint32_t cap, uint64_t *nerr)
{
	const char *p = buf, *end = buf + len;
	uint64_t ok = 0, bad = 0;
	char why[SL_FMT_WHY_MAX];

	while (p < end) {
		const char *nl = static_cast<const char *>(memchr(p, '\n', (size_t)(end - p)));
		const char *le = nl ? nl : end;
		size_t n = (size_t)(le - p);

		if (n && p[n - 1] == '\r')
			n--;
		if (n) {
			if (decode(d, p, n, rowbuf, cap, why))
				ok++;
			else
				bad++;
		}
		p = le + 1;
	}
	if (nerr)
		*nerr = bad;
	return ok;
}

/* Shortest round-trip text of a finite double (simdjson's Grisu-based to_chars), for the
 * JSON writer. Writes at most 32 bytes; returns the length. */
extern "C" int sl_fmt_write_f64(double v, char *out)
{
	char *e = internal::to_chars(out, nullptr, v);

	return (int)(e - out);
}
