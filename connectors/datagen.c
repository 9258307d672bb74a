/*
 * datagen.c - the datagen source: rows of random values, sequences and an event-time column
 * with bounded disorder and late records, for demos, tests and benchmarks (Flink's datagen
 * connector plus the event-time knobs the PyFlink lesson's jobs need).
 *
 * Record i of the source (0-based over all splits) belongs to split i mod nsplits (the
 * first run's split count: a restore keeps it, see "Checkpoints" below), so a
 * sequence field's range is dealt over the splits the way Flink's SequenceGenerator deals it,
 * and the event-time column advances at the same pace on every split (which keeps the
 * per-split watermarks together). Each split draws from its own xoshiro256** stream
 * (engine/base/rand.h) seeded by splitmix64(seed, split): a split's rows depend only on
 * (cfg, seed, split), never on how polls were batched or timed.
 *
 * Rate limiting reads the monotonic clock once per poll (vDSO, no syscall) and emits the
 * records due since the split started: rows_per_second / nsplits per split on average.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice/connectors.h>

#include "rand.h"
#include "source.h"

#define STR_DEFAULT	 10
#define STR_MAX		 1024
#define TS_DEFAULT_MAX	 4102444800000LL /* 2100-01-01: random timestamps stay printable */
#define DATE_DEFAULT_MAX 47481		 /* 2099-12-31 in days */

struct gen_split {
	const struct sl_datagen_cfg *cfg;
	int n; /* fields */
	enum sl_type type[SL_SCHEMA_MAX_FIELDS];
	int64_t unit[SL_SCHEMA_MAX_FIELDS];    /* DECIMAL: 10^scale (a sequence step) */
	int64_t dec_max[SL_SCHEMA_MAX_FIELDS]; /* DECIMAL: 10^precision - 1 */
	uint64_t nsplits, split;
	uint64_t rows;	/* records of the whole source; UINT64_MAX: unbounded */
	uint64_t s[4];	/* xoshiro256** state */
	uint64_t k;	/* records this split has produced */
	uint64_t total; /* records this split produces; UINT64_MAX: unbounded */
	uint64_t t0_ns; /* first poll, for rate accounting; 0: not started */
	uint64_t k0;	/* k at that poll: a restored split paces from there */
	char str[STR_MAX];
};

static int datagen_nsplits(const void *cfg)
{
	int n = ((const struct sl_datagen_cfg *)cfg)->nsplits;

	return n > 0 ? n : 1;
}

static int64_t pow10i(int n)
{
	int64_t p = 1;

	while (n-- > 0)
		p *= 10;
	return p;
}

/* |unscaled| < 10^prec */
static bool dec_fits_unscaled(int64_t v, int prec)
{
	int64_t lim = pow10i(prec);

	return v > -lim && v < lim;
}

/* An integer v as DECIMAL(prec, scale): |v| < 10^(prec - scale). */
static bool dec_fits(int64_t v, int prec, int scale)
{
	int64_t lim = pow10i(prec - scale);

	return v > -lim && v < lim;
}

static int bad_field(struct sl_error *err, const struct sl_schema *s, int i, const char *why)
{
	err->code = -EINVAL;
	snprintf(err->msg, sizeof err->msg, "datagen: field '%s' (%s): %s", sl_schema_name(s, i),
		 sl_type_name(sl_schema_type(s, i)), why);
	return -EINVAL;
}

/* Checks the field specs against the schema; returns the source's total record count
 * (UINT64_MAX: unbounded) or sets err. */
static int check_fields(const struct sl_datagen_cfg *cfg, uint64_t *total, struct sl_error *err)
{
	const struct sl_schema *s = cfg->schema;
	uint32_t bytes = SL_ROW_HDR + 8u * (uint32_t)sl_schema_nfields(s);
	uint64_t span;

	*total = cfg->number_of_rows > 0 ? (uint64_t)cfg->number_of_rows : UINT64_MAX;
	for (int i = 0; i < sl_schema_nfields(s); i++) {
		const struct sl_datagen_field *f = &cfg->fields[i];
		enum sl_type t = sl_schema_type(s, i);

		switch (f->kind) {
		case SL_GEN_SEQUENCE:
			if (t == SL_TYPE_BOOL)
				return bad_field(err, s, i, "a sequence needs a number or string");
			if (f->end < f->start)
				return bad_field(err, s, i, "sequence end is before its start");
			if (t == SL_TYPE_INT && (f->start < INT32_MIN || f->end > INT32_MAX))
				return bad_field(err, s, i, "sequence outside the INT range");
			if (t == SL_TYPE_DECIMAL &&
			    !dec_fits(f->start, sl_schema_precision(s, i), sl_schema_scale(s, i)))
				return bad_field(err, s, i, "sequence start outside the precision");
			if (t == SL_TYPE_DECIMAL &&
			    !dec_fits(f->end, sl_schema_precision(s, i), sl_schema_scale(s, i)))
				return bad_field(err, s, i, "sequence end outside the precision");
			/* the sequence ends the source (end - start + 1 records) */
			span = (uint64_t)f->end - (uint64_t)f->start; /* no signed overflow */
			if (span < *total)
				*total = span + 1;
			if (t == SL_TYPE_STRING)
				bytes += 24;
			break;
		case SL_GEN_EVENT_TIME:
			if (t != SL_TYPE_TIMESTAMP && t != SL_TYPE_TIMESTAMP_LTZ &&
			    t != SL_TYPE_BIGINT)
				return bad_field(err, s, i,
						 "event time needs TIMESTAMP[_LTZ] or BIGINT");
			if (f->step_ms < 0 || f->max_disorder_ms < 0 || f->late_ms < 0 ||
			    !(f->late_fraction >= 0 && f->late_fraction <= 1))
				return bad_field(err, s, i,
						 "negative step/disorder/late or bad fraction");
			break;
		case SL_GEN_RANDOM:
			if (f->max < f->min)
				return bad_field(err, s, i, "random max is below min");
			if (t == SL_TYPE_INT && (f->min < INT32_MIN || f->max > INT32_MAX))
				return bad_field(err, s, i, "random range outside the INT range");
			if ((t == SL_TYPE_DOUBLE || t == SL_TYPE_FLOAT) && !(f->dmin <= f->dmax))
				return bad_field(err, s, i, "random max is below min");
			if (t == SL_TYPE_DECIMAL &&
			    (!dec_fits_unscaled(f->min, sl_schema_precision(s, i)) ||
			     !dec_fits_unscaled(f->max, sl_schema_precision(s, i))))
				return bad_field(err, s, i, "random range outside the precision");
			if (t == SL_TYPE_STRING)
				bytes += f->length ? (f->length < STR_MAX ? f->length : STR_MAX)
						   : STR_DEFAULT;
			break;
		default:
			return bad_field(err, s, i, "unknown generator kind");
		}
	}
	if (bytes + 8 > SL_ROW_SCRATCH) {
		err->code = -EINVAL;
		snprintf(err->msg, sizeof err->msg, "datagen: rows of %u bytes exceed %d", bytes,
			 SL_ROW_SCRATCH);
		return -EINVAL;
	}
	return 0;
}

/* Split g->split's share of the records when they are dealt over n splits. */
static void deal(struct gen_split *g, uint64_t n)
{
	g->nsplits = n;
	if (g->rows == UINT64_MAX)
		g->total = UINT64_MAX;
	else
		g->total = g->rows > g->split ? (g->rows - g->split + n - 1) / n : 0;
}

static void *datagen_open(const void *cfgp, int split, struct sl_error *err)
{
	const struct sl_datagen_cfg *cfg = cfgp;
	uint64_t total, x;
	struct gen_split *g;

	if (!cfg->schema || !cfg->fields) {
		err->code = -EINVAL;
		snprintf(err->msg, sizeof err->msg, "datagen: cfg needs a schema and fields");
		return NULL;
	}
	if (check_fields(cfg, &total, err) < 0)
		return NULL;
	g = calloc(1, sizeof(*g));
	if (!g) {
		err->code = -ENOMEM;
		snprintf(err->msg, sizeof err->msg, "datagen: out of memory");
		return NULL;
	}
	g->cfg = cfg;
	g->n = sl_schema_nfields(cfg->schema);
	for (int i = 0; i < g->n; i++) {
		g->type[i] = sl_schema_type(cfg->schema, i);
		g->unit[i] = pow10i(sl_schema_scale(cfg->schema, i));
		g->dec_max[i] = pow10i(sl_schema_precision(cfg->schema, i)) - 1;
	}
	g->split = (uint64_t)split;
	g->rows = total;
	deal(g, (uint64_t)datagen_nsplits(cfg));
	x = cfg->seed ^ (0xd1b54a32d192ed03ull * (g->split + 1));
	sl_rand_seed(g->s, x);
	return g;
}

static void datagen_close(void *state)
{
	free(state);
}

/* Writes v in decimal into g->str; returns the length. */
static uint32_t dec(struct gen_split *g, int64_t v)
{
	char tmp[24];
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	uint32_t n = 0, len = 0;

	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		g->str[len++] = '-';
	while (n)
		g->str[len++] = tmp[--n];
	return len;
}

static void random_field(struct gen_split *g, struct sl_row_builder *b, int i,
			 const struct sl_datagen_field *f)
{
	static const char alnum[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	int64_t lo = f->min, hi = f->max;
	bool dflt = f->min == 0 && f->max == 0;
	uint32_t len;

	switch (g->type[i]) {
	case SL_TYPE_BOOL:
		sl_rowb_set_bool(b, i, sl_rand_next(g->s) >> 63);
		return;
	case SL_TYPE_INT:
		if (dflt) {
			lo = INT32_MIN;
			hi = INT32_MAX;
		}
		break;
	case SL_TYPE_BIGINT:
		if (dflt)
			hi = (1ll << 62) - 1;
		break;
	case SL_TYPE_TIMESTAMP:
	case SL_TYPE_TIMESTAMP_LTZ:
		if (dflt)
			hi = TS_DEFAULT_MAX - 1;
		break;
	case SL_TYPE_DATE:
		if (dflt)
			hi = DATE_DEFAULT_MAX;
		break;
	case SL_TYPE_DECIMAL:
		if (dflt) {
			lo = -g->dec_max[i];
			hi = g->dec_max[i];
		}
		break;
	case SL_TYPE_DOUBLE:
	case SL_TYPE_FLOAT: {
		/* dmin/dmax, else the integer bounds (the older way to bound a DOUBLE) */
		double lo_d = f->dmin || f->dmax ? f->dmin : (double)lo;
		double hi_d = f->dmin || f->dmax ? f->dmax : (double)hi;
		double d = lo_d == 0 && hi_d == 0 ? sl_rand_unit(g->s)
						  : lo_d + (hi_d - lo_d) * sl_rand_unit(g->s);

		sl_rowb_set_f64(b, i, g->type[i] == SL_TYPE_FLOAT ? (double)(float)d : d);
		return;
	}
	case SL_TYPE_STRING:
		len = f->length ? (f->length < STR_MAX ? f->length : STR_MAX) : STR_DEFAULT;
		for (uint32_t k = 0; k < len;) {
			uint64_t x = sl_rand_next(g->s);

			/* ten 6-bit draws per word, each scaled onto the 62 characters */
			for (int j = 0; j < 10 && k < len; j++, k++, x >>= 6)
				g->str[k] = alnum[((x & 63) * 62) >> 6];
		}
		sl_rowb_set_str(b, i, g->str, len);
		return;
	}
	sl_rowb_set_i64(b, i, lo + (int64_t)sl_rand_below(g->s, (uint64_t)hi - (uint64_t)lo + 1));
}

static sl_ts_t event_time(struct gen_split *g, const struct sl_datagen_field *f, uint64_t i)
{
	sl_ts_t ts = f->base_ts + (sl_ts_t)i * f->step_ms;

	if (f->max_disorder_ms)
		ts -= (sl_ts_t)sl_rand_below(g->s, (uint64_t)f->max_disorder_ms + 1);
	if (f->late_fraction > 0 && sl_rand_unit(g->s) < f->late_fraction)
		ts -= f->late_ms;
	return ts;
}

/* Builds record i (global index) of the source. Hot path: no allocation, no formatting. */
static const struct sl_row *build(struct gen_split *g, void *buf, uint64_t i)
{
	struct sl_row_builder b;

	sl_rowb_init(&b, buf, SL_ROW_SCRATCH, g->n);
	for (int f = 0; f < g->n; f++) {
		const struct sl_datagen_field *spec = &g->cfg->fields[f];
		int64_t v;

		switch (spec->kind) {
		case SL_GEN_SEQUENCE:
			v = spec->start + (int64_t)i;
			if (g->type[f] == SL_TYPE_STRING)
				sl_rowb_set_str(&b, f, g->str, dec(g, v));
			else if (g->type[f] == SL_TYPE_DOUBLE || g->type[f] == SL_TYPE_FLOAT)
				sl_rowb_set_f64(&b, f, (double)v);
			else if (g->type[f] == SL_TYPE_DECIMAL)
				sl_rowb_set_i64(&b, f, v * g->unit[f]);
			else
				sl_rowb_set_i64(&b, f, v);
			break;
		case SL_GEN_EVENT_TIME:
			sl_rowb_set_i64(&b, f, event_time(g, spec, i));
			break;
		case SL_GEN_RANDOM:
			random_field(g, &b, f, spec);
			break;
		}
	}
	return sl_rowb_finish(&b);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int datagen_poll(void *state, struct sl_src_ctx *c, int max)
{
	struct gen_split *g = state;
	uint64_t budget = (uint64_t)(max > 0 ? max : 0);
	int64_t rate = g->cfg->rows_per_second;
	int rc;

	if (g->k >= g->total)
		return SL_SRC_EOF;
	if (rate > 0) {
		uint64_t now = now_ns(), due;

		if (!g->t0_ns) {
			g->t0_ns = now - 1; /* never 0 again: 0 means "not started" */
			g->k0 = g->k;
		}
		/* records due since the start at this split's share of the rate; the first
		 * record is due at once */
		due = g->k0 + 1 +
		      (uint64_t)((unsigned __int128)(now - g->t0_ns) * (uint64_t)rate /
				 (1000000000ull * g->nsplits));
		if (due <= g->k)
			return 0;
		if (due - g->k < budget)
			budget = due - g->k;
	}
	if (g->total - g->k < budget)
		budget = g->total - g->k;
	for (uint64_t j = 0; j < budget; j++) {
		uint64_t i = g->k * g->nsplits + g->split;
		const struct sl_row *row = build(g, sl_src_scratch(c), i);

		g->k++;
		rc = sl_src_emit(c, row);
		if (rc < 0)
			return rc;
	}
	return (int)budget;
}

/*
 * Checkpoints: a split resumes from its record count and generator state, so a restored
 * job produces exactly the rows the uninterrupted one would have. The split count is the
 * first run's (its shard count, as Flink's generator source fixes its splits at the first
 * start) and travels in the position: a restore on any shard count opens the same splits
 * (datagen_restored_nsplits) and each deals the records as before, so the stream goes on
 * where it was instead of being dealt anew.
 */
struct gen_pos {
	uint64_t k;
	uint64_t s[4];
	uint64_t nsplits;
};

static int datagen_position(void *state, void *buf, size_t cap, size_t *len)
{
	const struct gen_split *g = state;
	struct gen_pos p = { .k = g->k, .nsplits = g->nsplits };

	if (cap < sizeof p)
		return -ENOSPC;
	memcpy(p.s, g->s, sizeof p.s);
	memcpy(buf, &p, sizeof p);
	*len = sizeof p;
	return 0;
}

static int datagen_seek(void *state, const void *pos, size_t len)
{
	struct gen_split *g = state;
	struct gen_pos p;

	if (len != sizeof p)
		return -EINVAL;
	memcpy(&p, pos, sizeof p);
	if (!p.nsplits || g->split >= p.nsplits)
		return -EINVAL;
	deal(g, p.nsplits);
	if (p.k > g->total)
		return -EINVAL;
	g->k = p.k;
	memcpy(g->s, p.s, sizeof g->s);
	g->t0_ns = 0; /* the rate counts from the restart */
	return 0;
}

/* Observers: rows made of the rows to make (unbounded: no end). */
static void datagen_progress(void *state, struct sl_src_progress *p)
{
	const struct gen_split *g = state;

	snprintf(p->name, sizeof p->name, "%llu of %llu", (unsigned long long)g->split,
		 (unsigned long long)g->nsplits);
	p->kind = "datagen split";
	p->pos = (int64_t)g->k;
	if (g->total != UINT64_MAX)
		p->end = (int64_t)g->total;
}

/* A restored job has the splits its checkpoint has, whatever its shard count now. */
static int datagen_restored_nsplits(const void *cfg, int n)
{
	(void)cfg;
	return n;
}

const struct sl_source_ops sl_datagen_source_ops = {
	.name = "datagen",
	.nsplits = datagen_nsplits,
	.open = datagen_open,
	.poll = datagen_poll,
	.close = datagen_close,
	.position = datagen_position,
	.seek = datagen_seek,
	.progress = datagen_progress,
	.restored_nsplits = datagen_restored_nsplits,
};
