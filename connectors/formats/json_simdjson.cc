/*
 * json_simdjson.cc - the JSON and Debezium-JSON decoders: a thin C++17 shim over simdjson's
 * On Demand API with a C interface (sluice/connectors.h). The only C++ in connectors/.
 *
 * Nested objects: a schema field named "a.b.c" is the path a -> b -> c (the planner flattens
 * ROW columns so). At create the field names are turned into a tree of object levels
 * ("nodes"), each with its keys stored contiguously; a key is a leaf (a schema field) or a
 * nested node. A record is then walked once, depth first, each object's keys matched
 * against its node's keys only; a nested object that is null or missing leaves all fields
 * below it NULL (rows start all-NULL). No allocation per record.
 *
 * Key lookup: each key is matched first against the key that followed the previously
 * matched one in the last record (producers write keys in a fixed order, so this is one
 * compare per key), then against every key of the node. Values of keys outside the schema
 * are skipped without being converted; On Demand checks their brackets and strings (stage 1)
 * but not their literals, so `"other": nul` passes unnoticed while the same in a schema
 * field is an error. That is the price of not building a tape.
 *
 * Debezium: the envelope {before, after, op} (at top level or under "payload", the
 * schema-include form) gives 0..2 changelog rows; `before` and `after` are walked with the
 * same tree as a plain record, into two row buffers (the caller's and the decoder's own),
 * because `op` usually comes after them and On Demand cannot go back.
 *
 * Invariants: the input has SIMDJSON_PADDING readable bytes past its end (the caller's
 * contract, or the copy buffer here); no C++ exception crosses the C boundary (only the
 * error-code API is used, allocation is nothrow and create() catches what std::vector
 * throws).
 */
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "format.h"

using namespace simdjson;

static_assert(SL_JSON_PADDING >= SIMDJSON_PADDING, "the C contract must cover simdjson's");

/* The parser is sized up front to this so ordinary records never grow it. */
static const size_t PARSER_INITIAL = 64 * 1024;

#define MAX_KEYS (2 * SL_SCHEMA_MAX_FIELDS) /* leaves plus at most one node per leaf */

struct jkey {
	std::string_view name; /* one path component, inside the schema's field name */
	int16_t field;	       /* schema field, or -1: a nested object */
	int16_t node;	       /* nested object's node */
};

struct jnode {
	uint16_t first, n;     /* keys key[first .. first + n) */
	uint16_t pred;	       /* after[pred .. pred + n]: predicted next key, [n]: the first */
	uint64_t leaves;       /* schema fields below this level */
	std::string_view path; /* "payload.after", for messages; root: "" */
};

struct sl_json_dec {
	ondemand::parser parser;
	int n;		/* schema fields */
	unsigned flags; /* SL_JSON_* */
	uint64_t all;	/* one bit per schema field */
	int nnodes, nkeys;
	struct jnode node[SL_SCHEMA_MAX_FIELDS + 1]; /* [0]: the record itself */
	struct jkey key[MAX_KEYS];
	uint8_t after[MAX_KEYS + SL_SCHEMA_MAX_FIELDS + 1];
	struct sl_fmt_field f[SL_SCHEMA_MAX_FIELDS];
	void *buf2; /* Debezium before-image, SL_ROW_SCRATCH */
	char *copy; /* padded copies for sl_json_dec_row_copy */
	size_t copy_cap;
	uint64_t overflows; /* DECIMAL values made NULL */
};

/* Temporary tree for create(): children per node in first-seen order. */
struct tnode {
	std::vector<struct jkey> keys;
	std::string_view path;
};

/* Builds d->node/d->key from the dotted field names. Returns 0 or -EINVAL (a name that is
 * both a field and an object, or an empty component). */
static int build_tree(struct sl_json_dec *d, const struct sl_schema *schema)
{
	std::vector<struct tnode> t(1);

	for (int i = 0; i < d->n; i++) {
		std::string_view name(sl_schema_name(schema, i)), rest = name;
		int cur = 0;

		for (;;) {
			size_t dot = rest.find('.');
			std::string_view comp = rest.substr(0, dot);
			bool leaf = dot == std::string_view::npos;
			struct jkey *k = nullptr;

			if (comp.empty())
				return -EINVAL;
			for (auto &e : t[(size_t)cur].keys)
				if (e.name == comp)
					k = &e;
			if (k && (leaf || k->field >= 0))
				return -EINVAL; /* "a" and "a.b", or a duplicate */
			if (leaf) {
				t[(size_t)cur].keys.push_back({ comp, (int16_t)i, -1 });
				break;
			}
			if (!k) {
				int nn = (int)t.size();

				t[(size_t)cur].keys.push_back({ comp, -1, (int16_t)nn });
				t.push_back(tnode());
				t.back().path = name.substr(0, (size_t)(comp.data() - name.data()) +
								       comp.size());
				k = &t[(size_t)cur].keys.back();
			}
			cur = k->node;
			rest = rest.substr(dot + 1);
		}
	}
	if (t.size() > SL_SCHEMA_MAX_FIELDS + 1)
		return -EINVAL;
	d->nnodes = (int)t.size();
	d->nkeys = 0;
	for (size_t x = 0, pred = 0; x < t.size(); x++) {
		struct jnode *nd = &d->node[x];

		nd->first = (uint16_t)d->nkeys;
		nd->n = (uint16_t)t[x].keys.size();
		nd->pred = (uint16_t)pred;
		nd->path = t[x].path;
		for (uint16_t j = 0; j <= nd->n; j++)
			d->after[pred + j] = (uint8_t)(j < nd->n ? j + 1 : 0);
		pred += nd->n + 1u;
		for (auto &e : t[x].keys)
			d->key[d->nkeys++] = e;
	}
	/* leaves below each node, children before parents (nodes are numbered parents first) */
	for (int x = d->nnodes - 1; x >= 0; x--) {
		struct jnode *nd = &d->node[x];

		nd->leaves = 0;
		for (int j = 0; j < nd->n; j++) {
			struct jkey *k = &d->key[nd->first + j];

			nd->leaves |= k->field >= 0 ? 1ull << k->field : d->node[k->node].leaves;
		}
	}
	return 0;
}

extern "C" struct sl_json_dec *sl_json_dec_create_ex(const struct sl_schema *schema, unsigned flags,
						     int *err)
{
	struct sl_json_dec *d = new (std::nothrow) sl_json_dec();
	int rc = -ENOMEM;

	if (!d)
		goto out;
	d->n = sl_schema_nfields(schema);
	d->flags = flags;
	d->all = d->n >= 64 ? ~0ull : (1ull << d->n) - 1;
	for (int i = 0; i < d->n; i++)
		sl_fmt_field_init(&d->f[i], schema, i, &d->overflows,
				  (flags & SL_JSON_FAIL_ON_DEC_OVERFLOW) != 0);
	try {
		rc = build_tree(d, schema);
	} catch (...) {
		rc = -ENOMEM;
	}
	if (rc < 0)
		goto out_free;
	rc = -ENOMEM;
	if ((flags & SL_JSON_DEBEZIUM) && !(d->buf2 = aligned_alloc(8, SL_ROW_SCRATCH)))
		goto out_free;
	if (d->parser.allocate(PARSER_INITIAL) != SUCCESS)
		goto out_free;
	return d;

out_free:
	free(d->buf2);
	delete d;
out:
	if (err)
		*err = rc;
	return nullptr;
}

extern "C" struct sl_json_dec *sl_json_dec_create(const struct sl_schema *schema)
{
	return sl_json_dec_create_ex(schema, 0, nullptr);
}

extern "C" uint64_t sl_json_dec_overflows(const struct sl_json_dec *d)
{
	return d->overflows;
}

extern "C" void sl_json_dec_destroy(struct sl_json_dec *d)
{
	if (!d)
		return;
	free(d->copy);
	free(d->buf2);
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

/* Returns the index (within node nd) of the field's key, or -1 for a key outside the
 * schema. `prev` is the previously matched index, nd->n before the first. */
static int lookup(struct sl_json_dec *d, const struct jnode *nd, ondemand::field &f, int prev)
{
	ondemand::raw_json_string key = f.key();
	const struct jkey *k = &d->key[nd->first];
	std::string_view unesc;
	int g = d->after[nd->pred + prev];

	if (g < nd->n && key.unsafe_is_equal(k[g].name))
		return g;
	for (int i = 0; i < nd->n; i++)
		if (key.unsafe_is_equal(k[i].name))
			return i;
	/* rare: an escaped key ("\u0061") can only be compared unescaped */
	if (!raw_has_escape(key.raw()) || f.unescaped_key().get(unesc) != SUCCESS)
		return -1;
	for (int i = 0; i < nd->n; i++)
		if (unesc == k[i].name)
			return i;
	return -1;
}

static const char *json_type_name(ondemand::json_type t)
{
	switch (t) {
	case ondemand::json_type::array:
		return "array";
	case ondemand::json_type::object:
		return "object";
	case ondemand::json_type::number:
		return "number";
	case ondemand::json_type::string:
		return "string";
	case ondemand::json_type::boolean:
		return "boolean";
	case ondemand::json_type::null:
		return "null";
	}
	return "?";
}

static std::string_view trim_token(std::string_view s)
{
	while (!s.empty() &&
	       (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
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
	sl_fmt_why(why, "field '%s': %.*s is not a valid %s", d->f[i].name,
		   (int)(tok.size() > 40 ? 40 : tok.size()), tok.data(),
		   sl_type_name(d->f[i].type));
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
	if (jt == ondemand::json_type::string && d->f[i].type != SL_TYPE_STRING) {
		/* numbers, booleans, dates and timestamps may arrive quoted */
		if ((e = v.get_string().get(s)) != SUCCESS)
			return broken(why, e);
		return sl_fmt_set_text(b, i, &d->f[i], s.data(), s.size(), why);
	}
	switch (d->f[i].type) {
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
	case SL_TYPE_TIMESTAMP_LTZ:
		if (jt != ondemand::json_type::number)
			break;
		if ((e = v.get_int64().get(iv)) != SUCCESS)
			return bad_integer(d, i, v, e, why);
		if (d->f[i].type == SL_TYPE_INT && (iv < INT32_MIN || iv > INT32_MAX)) {
			sl_fmt_why(why, "field '%s': %lld out of range for INT", d->f[i].name,
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
	case SL_TYPE_FLOAT:
	case SL_TYPE_DECIMAL:
		/* from the literal's digits: exact decimals, floats rounded once */
		if (jt != ondemand::json_type::number)
			break;
		s = trim_token(v.raw_json_token());
		return sl_fmt_set_text(b, i, &d->f[i], s.data(), s.size(), why);
	case SL_TYPE_DATE:
		break; /* only as text */
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
	sl_fmt_why(why, "field '%s': expected %s, got %s", d->f[i].name, sl_type_name(d->f[i].type),
		   json_type_name(jt));
	return -EINVAL;
}

/* Walks object `obj` of level `ni` into b, marking in *seen the fields whose key (or a
 * null ancestor) was present. Returns 0 or -EINVAL with why filled. Hot path. */
static int walk(struct sl_json_dec *d, int ni, ondemand::object &obj, struct sl_row_builder *b,
		uint64_t *seen, char *why)
{
	const struct jnode *nd = &d->node[ni];
	int prev = nd->n; /* "before the first key" */
	error_code e;

	for (auto fr : obj) {
		ondemand::field f;
		ondemand::value v;
		ondemand::object sub;
		ondemand::json_type jt;
		const struct jkey *k;
		bool isnull;
		int i;

		if ((e = std::move(fr).get(f)) != SUCCESS)
			return broken(why, e);
		i = lookup(d, nd, f, prev);
		if (i < 0)
			continue; /* the iterator skips the unread value */
		d->after[nd->pred + prev] = (uint8_t)i;
		prev = i;
		k = &d->key[nd->first + i];
		v = f.value();
		if (k->field >= 0) {
			if (set_field(d, b, k->field, v, why) < 0)
				return -EINVAL;
			*seen |= 1ull << k->field;
			continue;
		}
		if ((e = v.type().get(jt)) != SUCCESS)
			return broken(why, e);
		if (jt == ondemand::json_type::null) {
			if ((e = v.is_null().get(isnull)) != SUCCESS || !isnull)
				return broken(why, e ? e : N_ATOM_ERROR);
			*seen |= d->node[k->node].leaves; /* they stay NULL */
			continue;
		}
		if (jt != ondemand::json_type::object) {
			sl_fmt_why(why, "field '%.*s': expected an object, got %s",
				   (int)d->node[k->node].path.size(), d->node[k->node].path.data(),
				   json_type_name(jt));
			return -EINVAL;
		}
		if ((e = v.get_object().get(sub)) != SUCCESS)
			return broken(why, e);
		if (walk(d, k->node, sub, b, seen, why) < 0)
			return -EINVAL;
	}
	return 0;
}

/* Reports the first schema field not in `seen` (json.fail-on-missing-field). */
static int missing(struct sl_json_dec *d, uint64_t seen, char *why)
{
	int i = __builtin_ctzll(~seen & d->all);

	sl_fmt_why(why, "field '%s' is missing (json.fail-on-missing-field)", d->f[i].name);
	return -EINVAL;
}

/* Grows the parser for a record of len bytes. Returns 0 or -ENOMEM with why filled. */
static int reserve(struct sl_json_dec *d, size_t len, char *why)
{
	/* grow geometrically so a slowly growing record size reallocates rarely */
	size_t want = d->parser.capacity() * 2 > len ? d->parser.capacity() * 2 : len;

	if (len <= d->parser.capacity())
		return 0;
	if (d->parser.allocate(want) != SUCCESS) {
		sl_fmt_why(why, "record of %zu bytes: out of memory", len);
		return -ENOMEM;
	}
	return 0;
}

/* Checks that nothing but blanks follows the document's value. */
static int trailing(ondemand::document &doc, char *why)
{
	/* On Demand stops after the value; anything behind it is still in bounds */
	if (doc.current_location().error() != OUT_OF_BOUNDS) {
		sl_fmt_why(why, "broken JSON: trailing content after the object");
		return -EINVAL;
	}
	return 0;
}

static const struct sl_row *decode(struct sl_json_dec *d, const char *line, size_t len, void *buf,
				   uint32_t cap, char *why)
{
	struct sl_row_builder b;
	ondemand::document doc;
	ondemand::object obj;
	const struct sl_row *row;
	uint64_t seen = 0;
	error_code e;

	if (reserve(d, len, why) < 0)
		return nullptr;
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
	if (walk(d, 0, obj, &b, &seen, why) < 0 || trailing(doc, why) < 0)
		return nullptr;
	if ((d->flags & SL_JSON_FAIL_ON_MISSING) && seen != d->all) {
		missing(d, seen, why);
		return nullptr;
	}
	row = sl_rowb_finish(&b);
	if (!row)
		sl_fmt_why(why, "row exceeds %u bytes", cap);
	return row;
}

/* What one Debezium envelope held. */
struct dbz_env {
	struct sl_row_builder before, after;
	bool has_before, has_after; /* an object was given (not null, not missing) */
	std::string_view op;
	bool has_op;
};

/* Walks `before`/`after` (a null or object) into bb. */
static int dbz_image(struct sl_json_dec *d, ondemand::value &v, struct sl_row_builder *bb,
		     bool *has, const char *which, char *why)
{
	ondemand::json_type jt;
	ondemand::object o;
	uint64_t seen = 0;
	bool isnull;
	error_code e;

	if ((e = v.type().get(jt)) != SUCCESS)
		return broken(why, e);
	if (jt == ondemand::json_type::null) {
		if ((e = v.is_null().get(isnull)) != SUCCESS || !isnull)
			return broken(why, e ? e : N_ATOM_ERROR);
		*has = false;
		return 0;
	}
	if (jt != ondemand::json_type::object) {
		sl_fmt_why(why, "\"%s\" is %s, expected an object or null", which,
			   json_type_name(jt));
		return -EINVAL;
	}
	if ((e = v.get_object().get(o)) != SUCCESS)
		return broken(why, e);
	*has = true;
	return walk(d, 0, o, bb, &seen, why);
}

/* Walks an envelope object; `top` allows one level of "payload" (schema-include). */
static int dbz_envelope(struct sl_json_dec *d, ondemand::object &obj, struct dbz_env *env, bool top,
			char *why)
{
	error_code e;

	for (auto fr : obj) {
		ondemand::field f;
		ondemand::value v;
		ondemand::raw_json_string key;
		ondemand::json_type jt;

		if ((e = std::move(fr).get(f)) != SUCCESS)
			return broken(why, e);
		key = f.key();
		v = f.value();
		if (key.unsafe_is_equal("before")) {
			if (dbz_image(d, v, &env->before, &env->has_before, "before", why) < 0)
				return -EINVAL;
		} else if (key.unsafe_is_equal("after")) {
			if (dbz_image(d, v, &env->after, &env->has_after, "after", why) < 0)
				return -EINVAL;
		} else if (key.unsafe_is_equal("op")) {
			if ((e = v.type().get(jt)) != SUCCESS)
				return broken(why, e);
			if (jt == ondemand::json_type::string) {
				if ((e = v.get_string().get(env->op)) != SUCCESS)
					return broken(why, e);
				env->has_op = true;
			}
		} else if (top && key.unsafe_is_equal("payload")) {
			ondemand::object p;

			if ((e = v.type().get(jt)) != SUCCESS)
				return broken(why, e);
			if (jt != ondemand::json_type::object)
				continue; /* a null payload: nothing, like a tombstone */
			if ((e = v.get_object().get(p)) != SUCCESS)
				return broken(why, e);
			if (dbz_envelope(d, p, env, false, why) < 0)
				return -EINVAL;
		}
	}
	return 0;
}

static const struct sl_row *seal(struct sl_row_builder *b, enum sl_row_kind k, uint32_t cap,
				 char *why)
{
	const struct sl_row *r;

	sl_rowb_set_kind(b, k);
	r = sl_rowb_finish(b);
	if (!r)
		sl_fmt_why(why, "row exceeds %u bytes", cap);
	return r;
}

static int no_before(const char *what, char *why)
{
	sl_fmt_why(why,
		   "the \"before\" field of a%s message is null: set REPLICA IDENTITY "
		   "FULL on the Postgres table (Debezium sends no before-image otherwise)",
		   what);
	return -EINVAL;
}

static int dbz_decode(struct sl_json_dec *d, const char *line, size_t len, void *buf, uint32_t cap,
		      const struct sl_row *rows[2], char *why)
{
	struct dbz_env env;
	ondemand::document doc;
	ondemand::json_type jt;
	ondemand::object obj;
	error_code e;
	char op;

	if (reserve(d, len, why) < 0)
		return -ENOMEM;
	if ((e = d->parser.iterate(line, len, len + SIMDJSON_PADDING).get(doc)) != SUCCESS)
		return broken(why, e);
	if ((e = doc.type().get(jt)) != SUCCESS)
		return broken(why, e);
	if (jt == ondemand::json_type::null) {
		bool isnull;

		if ((e = doc.is_null().get(isnull)) != SUCCESS || !isnull)
			return broken(why, e ? e : N_ATOM_ERROR);
		return trailing(doc, why) < 0 ? -EINVAL : 0; /* a tombstone */
	}
	if ((e = doc.get_object().get(obj)) != SUCCESS) {
		if (e == INCORRECT_TYPE) {
			sl_fmt_why(why, "not a JSON object");
			return -EINVAL;
		}
		return broken(why, e);
	}
	env.has_before = env.has_after = env.has_op = false;
	sl_rowb_init(&env.after, buf, cap, d->n);
	sl_rowb_init(&env.before, d->buf2, SL_ROW_SCRATCH, d->n);
	if (dbz_envelope(d, obj, &env, true, why) < 0 || trailing(doc, why) < 0)
		return -EINVAL;
	if (!env.has_op && !env.has_before && !env.has_after)
		return 0; /* {"payload": null}, {"schema":..,"payload":null}: a tombstone too */
	op = env.has_op && env.op.size() == 1 ? env.op[0] : '?';
	switch (op) {
	case 'c':
	case 'r':
		if (!env.has_after)
			break;
		return (rows[0] = seal(&env.after, SL_ROW_INSERT, cap, why)) ? 1 : -EINVAL;
	case 'u':
		if (!env.has_before)
			return no_before("n UPDATE", why);
		if (!env.has_after)
			break;
		rows[0] = seal(&env.before, SL_ROW_UPDATE_BEFORE, SL_ROW_SCRATCH, why);
		rows[1] = seal(&env.after, SL_ROW_UPDATE_AFTER, cap, why);
		return rows[0] && rows[1] ? 2 : -EINVAL;
	case 'd':
		if (!env.has_before)
			return no_before(" DELETE", why);
		return (rows[0] = seal(&env.before, SL_ROW_DELETE, SL_ROW_SCRATCH, why)) ? 1
											 : -EINVAL;
	default:
		sl_fmt_why(why, "unknown \"op\" value \"%.*s\"",
			   env.has_op ? (int)(env.op.size() > 20 ? 20 : env.op.size()) : 4,
			   env.has_op ? env.op.data() : "null");
		return -EINVAL;
	}
	sl_fmt_why(why, "the \"after\" field of an op \"%c\" message is null", op);
	return -EINVAL;
}

extern "C" int sl_dbz_dec_rows(struct sl_json_dec *d, const char *line, size_t len, void *buf,
			       uint32_t cap, const struct sl_row *rows[2], char *why)
{
	if (!d->buf2) {
		sl_fmt_why(why, "decoder not created with SL_JSON_DEBEZIUM");
		return -EINVAL;
	}
	return dbz_decode(d, line, len, buf, cap, rows, why);
}

/* Copies a record into the padded copy buffer. Returns it, or NULL with why filled. */
static const char *padded(struct sl_json_dec *d, const char *line, size_t len, char *why)
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
	return d->copy;
}

extern "C" int sl_dbz_dec_rows_copy(struct sl_json_dec *d, const char *line, size_t len, void *buf,
				    uint32_t cap, const struct sl_row *rows[2], char *why)
{
	const char *p = padded(d, line, len, why);

	return p ? sl_dbz_dec_rows(d, p, len, buf, cap, rows, why) : -ENOMEM;
}

extern "C" const struct sl_row *sl_json_dec_row(struct sl_json_dec *d, const char *line, size_t len,
						void *buf, uint32_t cap, char *why)
{
	return decode(d, line, len, buf, cap, why);
}

extern "C" const struct sl_row *sl_json_dec_row_copy(struct sl_json_dec *d, const char *line,
						     size_t len, void *buf, uint32_t cap, char *why)
{
	const char *p = padded(d, line, len, why);

	return p ? decode(d, p, len, buf, cap, why) : nullptr;
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
			const struct sl_row *rows[2];
			bool good = d->buf2 ? dbz_decode(d, p, n, rowbuf, cap, rows, why) >= 0
					    : decode(d, p, n, rowbuf, cap, why) != nullptr;

			ok += good;
			bad += !good;
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
