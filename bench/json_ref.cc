/*
 * json_ref.cc - the references of json_bench.c: plain simdjson On Demand loops over the same
 * JSON lines, with a C interface. The only C++ in bench/ besides the Google Benchmark shim.
 *
 *   jref_walk_lines  parses every line and visits every value of the document, recursively:
 *                    keys unescaped, strings unescaped, numbers converted, booleans and nulls
 *                    read. What fully decoding a Debezium envelope costs with simdjson.
 *   jref_top_lines   visits the top-level fields only and takes nested objects and arrays as
 *                    their raw JSON text, strings unescaped, numbers converted: the work
 *                    sl_json_dec does for a schema of top-level fields, minus building a row.
 *
 * Both split lines with memchr, as sl_json_dec_lines() does, and fold what they read into a
 * checksum so nothing is optimized away. A line that fails to parse counts as an error.
 */
#include <simdjson.h>

#include <cstdint>
#include <cstring>

using namespace simdjson;

namespace {

error_code walk(ondemand::value v, uint64_t &acc, int depth);

error_code walk_object(ondemand::object o, uint64_t &acc, int depth)
{
	for (auto fr : o) {
		ondemand::field f;
		std::string_view k;
		error_code e;

		if ((e = std::move(fr).get(f)) != SUCCESS)
			return e;
		if ((e = f.unescaped_key().get(k)) != SUCCESS)
			return e;
		acc += k.size();
		if ((e = walk(f.value(), acc, depth + 1)) != SUCCESS)
			return e;
	}
	return SUCCESS;
}

error_code walk(ondemand::value v, uint64_t &acc, int depth)
{
	ondemand::json_type t;
	error_code e;

	if ((e = v.type().get(t)) != SUCCESS)
		return e;
	switch (t) {
	case ondemand::json_type::object: {
		ondemand::object o;

		if ((e = v.get_object().get(o)) != SUCCESS)
			return e;
		return walk_object(o, acc, depth);
	}
	case ondemand::json_type::array: {
		ondemand::array a;

		if ((e = v.get_array().get(a)) != SUCCESS)
			return e;
		for (auto el : a) {
			ondemand::value x;

			if ((e = el.get(x)) != SUCCESS || (e = walk(x, acc, depth + 1)) != SUCCESS)
				return e;
		}
		return SUCCESS;
	}
	case ondemand::json_type::string: {
		std::string_view s;

		if ((e = v.get_string().get(s)) != SUCCESS)
			return e;
		acc += s.size();
		return SUCCESS;
	}
	case ondemand::json_type::number: {
		ondemand::number_type nt;

		if ((e = v.get_number_type().get(nt)) != SUCCESS)
			return e;
		if (nt == ondemand::number_type::signed_integer) {
			int64_t i;

			if ((e = v.get_int64().get(i)) != SUCCESS)
				return e;
			acc += (uint64_t)i;
		} else {
			double d;

			if ((e = v.get_double().get(d)) != SUCCESS)
				return e;
			acc += (uint64_t)d;
		}
		return SUCCESS;
	}
	case ondemand::json_type::boolean: {
		bool b;

		if ((e = v.get_bool().get(b)) != SUCCESS)
			return e;
		acc += b;
		return SUCCESS;
	}
	case ondemand::json_type::null: {
		bool n;

		if ((e = v.is_null().get(n)) != SUCCESS)
			return e;
		acc += n;
		return SUCCESS;
	}
	}
	return INCORRECT_TYPE;
}

error_code top_fields(ondemand::object o, uint64_t &acc)
{
	for (auto fr : o) {
		ondemand::field f;
		ondemand::value v;
		ondemand::json_type t;
		std::string_view s;
		error_code e;

		if ((e = std::move(fr).get(f)) != SUCCESS)
			return e;
		acc += f.key().raw()[0];
		v = f.value();
		if ((e = v.type().get(t)) != SUCCESS)
			return e;
		if (t == ondemand::json_type::object) {
			ondemand::object x;

			if ((e = v.get_object().get(x)) != SUCCESS || (e = x.raw_json().get(s)))
				return e;
			acc += s.size();
		} else if (t == ondemand::json_type::null) {
			acc++;
		} else if ((e = walk(v, acc, 1)) != SUCCESS) {
			return e;
		}
	}
	return SUCCESS;
}

template <bool FULL>
uint64_t lines(const char *buf, size_t len, uint64_t *nerr, uint64_t *sum)
{
	ondemand::parser parser;
	const char *p = buf, *end = buf + len;
	uint64_t ok = 0, bad = 0, acc = 0;

	while (p < end) {
		const char *nl = static_cast<const char *>(memchr(p, '\n', (size_t)(end - p)));
		const char *le = nl ? nl : end;
		size_t n = (size_t)(le - p);
		ondemand::document doc;
		ondemand::object o;

		if (n) {
			if (parser.iterate(p, n, n + SIMDJSON_PADDING).get(doc) == SUCCESS &&
			    doc.get_object().get(o) == SUCCESS &&
			    (FULL ? walk_object(o, acc, 0) : top_fields(o, acc)) == SUCCESS)
				ok++;
			else
				bad++;
		}
		p = le + 1;
	}
	*nerr = bad;
	*sum = acc;
	return ok;
}

} // namespace

extern "C" uint64_t jref_walk_lines(const char *buf, size_t len, uint64_t *nerr, uint64_t *sum)
{
	return lines<true>(buf, len, nerr, sum);
}

extern "C" uint64_t jref_top_lines(const char *buf, size_t len, uint64_t *nerr, uint64_t *sum)
{
	return lines<false>(buf, len, nerr, sum);
}
