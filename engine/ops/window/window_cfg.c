/*
 * window_cfg.c - plan-time binding of a window aggregation: checks the spec and the
 * aggregates against the input schema, binds each aggregate to its typed kernel and its
 * accumulator offset, and derives the output schema. Kept apart from the operator's runtime
 * code (STYLE: configuration binding out of the hot path); runs once, before any shard.
 *
 * Invariants of a built config: slice divides both size and slide (tumble: slide = size =
 * slice; cumulate: slide = slice = step, size = max_size a multiple of it, cum set), every
 * accumulator offset is 8-aligned, and nkey + 2 + naggs <= 64 output fields.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "window_int.h"

static void set_err(struct sl_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(struct sl_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
}

static sl_ts_t gcd(sl_ts_t a, sl_ts_t b)
{
	while (b) {
		sl_ts_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

static int check_spec(const struct sl_window_spec *s, struct sl_error *err)
{
	if (s->proctime && s->allowed_lateness_ms) {
		set_err(err, -EINVAL,
			"window: a processing-time window has no late records, "
			"so no allowed lateness");
		return -EINVAL;
	}
	if (s->allowed_lateness_ms < 0) {
		set_err(err, -EINVAL, "window: negative allowed lateness %lld",
			(long long)s->allowed_lateness_ms);
		return -EINVAL;
	}
	if (s->late_tag < 0) {
		set_err(err, -EINVAL, "window: negative late-data tag %d", s->late_tag);
		return -EINVAL;
	}
	if (s->agg_phase < SL_AGG_PHASE_AUTO || s->agg_phase > SL_AGG_PHASE_TWO) {
		set_err(err, -EINVAL, "window: unknown aggregation phase strategy %d",
			(int)s->agg_phase);
		return -EINVAL;
	}
	switch (s->kind) {
	case SL_WIN_TUMBLE:
		if (s->size_ms > 0)
			return 0;
		set_err(err, -EINVAL, "window: tumbling size must be > 0 ms, got %lld",
			(long long)s->size_ms);
		return -EINVAL;
	case SL_WIN_HOP:
		if (s->size_ms > 0 && s->slide_ms > 0)
			return 0;
		set_err(err, -EINVAL,
			"window: hopping size and slide must be > 0 ms, got %lld/%lld",
			(long long)s->size_ms, (long long)s->slide_ms);
		return -EINVAL;
	case SL_WIN_CUMULATE:
		if (s->size_ms > 0 && s->slide_ms > 0 && s->size_ms % s->slide_ms == 0)
			return 0;
		set_err(err, -EINVAL,
			"window: cumulating max size must be a positive multiple of the step "
			"(> 0 ms), got %lld/%lld",
			(long long)s->size_ms, (long long)s->slide_ms);
		return -EINVAL;
	case SL_WIN_SESSION:
		if (s->gap_ms > 0)
			return 0;
		set_err(err, -EINVAL, "window: session gap must be > 0 ms, got %lld",
			(long long)s->gap_ms);
		return -EINVAL;
	}
	set_err(err, -EINVAL, "window: unknown window kind %d", (int)s->kind);
	return -EINVAL;
}

/* The kind as error messages name it. */
static const char *kind_name(enum sl_win_kind k)
{
	switch (k) {
	case SL_WIN_TUMBLE:
		return "tumbling";
	case SL_WIN_HOP:
		return "hopping";
	case SL_WIN_SESSION:
		return "session";
	case SL_WIN_CUMULATE:
		return "cumulating";
	}
	return "unknown";
}

/* Binds aggregate `i` at offset *off. Returns 0 or -EINVAL with err set. */
static int bind_agg(struct sl_window_cfg *c, int i, const struct sl_agg_spec *a,
		    const struct sl_schema *in, uint32_t *off, struct sl_error *err)
{
	struct sl_agg_bound *b = &c->agg[i];
	char msg[200];
	uint32_t size;

	if (a->kind == SL_AGG_USER) {
		const struct sl_agg_fn *u = &a->user;
		bool merges = c->spec.kind == SL_WIN_SESSION || c->slice != c->spec.size_ms;

		if (!a->name || !a->name[0]) {
			set_err(err, -EINVAL, "window: aggregate %d has no output name", i);
			return -EINVAL;
		}
		if (!u->add || !u->result || u->acc_size == 0 || u->acc_size > (1u << 20) ||
		    u->result_type < SL_TYPE_BOOL || u->result_type > SL_TYPE_TIMESTAMP_LTZ ||
		    u->result_type == SL_TYPE_DECIMAL) {
			set_err(err, -EINVAL,
				"window: user aggregate '%s' needs add, result, an acc_size in "
				"1..1MiB and a result type (not DECIMAL)",
				a->name);
			return -EINVAL;
		}
		if (merges && !u->merge) {
			set_err(err, -EINVAL,
				"window: user aggregate '%s' needs merge for %s windows", a->name,
				kind_name(c->spec.kind));
			return -EINVAL;
		}
		b->k = sl_agg_kernel_find(SL_AGG_USER, 0, false);
		b->kind = SL_AGG_USER;
		b->user = *u;
		b->out_type = u->result_type;
		b->field = a->field;
		size = (uint32_t)u->acc_size;
		c->has_init = true;
	} else {
		if (sl_agg_bind(b, a, in, msg, sizeof msg)) {
			set_err(err, -EINVAL, "window: %s", msg);
			return -EINVAL;
		}
		size = b->k->acc_size;
		if (b->k->destroy)
			c->has_dyn = true;
	}
	b->off = *off;
	*off += (size + 7u) & ~7u;
	return 0;
}

static struct sl_schema *build_schema(const struct sl_window_cfg *c, const struct sl_agg_spec *aggs,
				      const struct sl_schema *in, const int *key_fields,
				      struct sl_error *err)
{
	struct sl_schema *s = sl_schema_create();
	const char *name = "";
	int rc = 0;

	if (!s) {
		set_err(err, -ENOMEM, "window: out of memory");
		return NULL;
	}
	for (int i = 0; i < c->nkey && rc >= 0; i++) {
		int k = key_fields[i];

		name = sl_schema_name(in, k);
		rc = sl_schema_add_like(s, name, in, k);
	}
	if (rc >= 0)
		rc = sl_schema_add(s, name = "window_start", SL_TYPE_TIMESTAMP);
	if (rc >= 0)
		rc = sl_schema_add(s, name = "window_end", SL_TYPE_TIMESTAMP);
	for (int i = 0; i < c->naggs && rc >= 0; i++) {
		const struct sl_agg_bound *b = &c->agg[i];

		name = aggs[i].name;
		rc = sl_agg_schema_add(s, name, b);
	}
	if (rc < 0) {
		set_err(err, rc,
			rc == -ENOMEM ? "window: out of memory"
				      : "window: duplicate output column '%s'",
			name);
		sl_schema_destroy(s);
		return NULL;
	}
	return s;
}

struct sl_window_cfg *sl_window_cfg_create(const struct sl_window_spec *spec,
					   const struct sl_agg_spec *aggs, int naggs,
					   const struct sl_schema *in, const int *key_fields,
					   int nkey, struct sl_schema **out_schema,
					   struct sl_error *err)
{
	struct sl_window_cfg *c;
	uint32_t off = 0;
	int nin;

	*out_schema = NULL;
	if (!spec || !in || naggs < 0 || (naggs && !aggs) || nkey < 0 || nkey > SL_MAX_KEY_FIELDS ||
	    (nkey && !key_fields)) {
		set_err(err, -EINVAL, "window: missing spec, schema, aggregates or key");
		return NULL;
	}
	if (check_spec(spec, err))
		return NULL;
	nin = sl_schema_nfields(in);
	for (int i = 0; i < nkey; i++) {
		if (key_fields[i] < 0 || key_fields[i] >= nin) {
			set_err(err, -EINVAL, "window: key field %d out of range (%d fields)",
				key_fields[i], nin);
			return NULL;
		}
	}
	if (nkey + 2 + naggs > SL_SCHEMA_MAX_FIELDS) {
		set_err(err, -EINVAL, "window: %d output columns, at most %d", nkey + 2 + naggs,
			SL_SCHEMA_MAX_FIELDS);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		goto out_nomem;
	c->agg = calloc((size_t)(naggs ? naggs : 1), sizeof(*c->agg));
	if (!c->agg)
		goto out_free_cfg;
	c->spec = *spec;
	c->lateness = spec->allowed_lateness_ms;
	c->naggs = naggs;
	c->nkey = nkey;
	c->nout = nkey + 2 + naggs;
	if (spec->kind == SL_WIN_TUMBLE) {
		c->slide = spec->size_ms;
		c->slice = spec->size_ms;
	} else if (spec->kind == SL_WIN_HOP) {
		c->slide = spec->slide_ms;
		c->slice = gcd(spec->size_ms, spec->slide_ms);
	} else if (spec->kind == SL_WIN_CUMULATE) {
		/* every slice end is a window end; windows differ in their start (window_int.h) */
		c->slide = spec->slide_ms;
		c->slice = spec->slide_ms;
		c->cum = true;
	}
	/* Flink aligns window starts on the slide (getWindowStartWithOffset(ts, offset, slide)),
	 * so ends fall on offset + size modulo the slide: HOP(slide 4, size 5) is [0, 5),
	 * [4, 9), ... Slices stay aligned on the offset: g divides the size too. */
	c->end_off = spec->offset_ms + spec->size_ms;
	for (int i = 0; i < naggs; i++) {
		if (bind_agg(c, i, &aggs[i], in, &off, err))
			goto out_destroy;
		/* Flink merges a hopping window's slices from its last one back
		 * (HoppingSlicesIterable); ours merge oldest first, so LISTAGG, the one
		 * aggregate that shows the order, puts each merged slice before the ones so far */
		c->agg[i].newest_first = spec->kind == SL_WIN_HOP;
	}
	c->acc_size = off;
	c->two_phase = sl_window_cfg_splits(c);
	*out_schema = build_schema(c, aggs, in, key_fields, err);
	if (!*out_schema)
		goto out_destroy;
	return c;

out_destroy:
	sl_window_cfg_destroy(c);
	return NULL;
out_free_cfg:
	free(c);
out_nomem:
	set_err(err, -ENOMEM, "window: out of memory");
	return NULL;
}

/* Which aggregates merge into the same result whatever the split (enum sl_agg_phase). */
static bool agg_splits(const struct sl_agg_bound *a, enum sl_agg_phase phase)
{
	bool fp = a->in_type == SL_TYPE_FLOAT || a->in_type == SL_TYPE_DOUBLE;

	if (!a->k->merge || a->k->destroy)
		return false; /* no merge, or out-of-line memory (COUNT DISTINCT, strings) */
	switch (a->kind) {
	case SL_AGG_COUNT_STAR:
	case SL_AGG_COUNT:
	case SL_AGG_MIN:
	case SL_AGG_MAX:
		return true;
	case SL_AGG_SUM:
	case SL_AGG_AVG:
		return !fp || phase == SL_AGG_PHASE_TWO;
	case SL_AGG_M2: /* merges in floating point, whatever the input */
		return phase == SL_AGG_PHASE_TWO;
	case SL_AGG_USER:
		return a->user.merge != NULL; /* Flink splits a UDAF that has merge */
	default:
		return false; /* FIRST_VALUE, LAST_VALUE: arrival order does not survive a split */
	}
}

bool sl_window_cfg_splits(const struct sl_window_cfg *c)
{
	if (c->spec.agg_phase == SL_AGG_PHASE_ONE || c->spec.kind == SL_WIN_SESSION)
		return false;
	for (int i = 0; i < c->naggs; i++)
		if (!agg_splits(&c->agg[i], c->spec.agg_phase))
			return false;
	return true;
}

void sl_window_cfg_destroy(struct sl_window_cfg *cfg)
{
	if (!cfg)
		return;
	free(cfg->agg);
	free(cfg);
}

void sl_window_explain(const void *cfgp, FILE *f)
{
	const struct sl_window_cfg *cfg = cfgp;
	const struct sl_window_spec *s = &cfg->spec;

	if (s->kind == SL_WIN_SESSION)
		fprintf(f, "state: per key, one accumulator per open session (gap %" PRId64 " ms)",
			s->gap_ms);
	else
		fprintf(f,
			"state: per key, one accumulator per %" PRId64 " ms slice "
			"(size %" PRId64 " ms%s)",
			cfg->slice, s->size_ms,
			s->kind == SL_WIN_HOP	     ? ", hopping"
			: s->kind == SL_WIN_CUMULATE ? ", cumulating"
						     : "");
	if (s->allowed_lateness_ms)
		fprintf(f, ", kept %" PRId64 " ms after firing for late updates",
			s->allowed_lateness_ms);
	if (s->proctime)
		fprintf(f, "; processing time: fires by the shard's clock");
}
