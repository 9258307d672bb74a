/*
 * planner.c - a job file to jobs: statements in order, the catalog of tables and views, SET
 * options, sinks, and one job per INSERT, bare SELECT or statement set (planner.h).
 *
 * The catalog keeps the DDL trees (owned by the ddl script) and a flattened view of each
 * table: nested ROW columns become leaves named by their dotted path, which is how rows
 * carry them (one slot per leaf). Queries are planned in plan_query.c and plan_agg.c; table
 * scans in plan_scan.c. The first error stops planning; nothing runs until the whole file
 * has planned.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sql_options.h"
#include "plan_int.h"

int sl_sql_plan_fail(struct sl_sql_plan_ctx *c, uint32_t line, uint32_t col, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (c->failed)
		return -EINVAL;
	c->failed = true;
	n = line ? snprintf(c->err, c->errcap, "%s:%u:%u: ", c->file, line, col)
		 : snprintf(c->err, c->errcap, "%s: ", c->file);
	if (n < 0 || (size_t)n >= c->errcap)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errcap - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void *sl_sql_plan_own(struct sl_sql_plan_ctx *c, void *p, void (*fn)(void *))
{
	if (!p) {
		sl_sql_plan_fail(c, 0, 0, "out of memory");
		return NULL;
	}
	if (c->nowned == c->capowned) {
		int cap = c->capowned ? c->capowned * 2 : 64;
		void **o = realloc(c->owned, sizeof(*o) * (size_t)cap);
		void (**f)(void *) = o ? realloc(c->owned_free, sizeof(*f) * (size_t)cap) : NULL;

		if (o)
			c->owned = o;
		if (!o || !f) {
			fn(p);
			sl_sql_plan_fail(c, 0, 0, "out of memory");
			return NULL;
		}
		c->owned_free = f;
		c->capowned = cap;
	}
	c->owned[c->nowned] = p;
	c->owned_free[c->nowned++] = fn;
	return p;
}

char *sl_sql_plan_strdup(struct sl_sql_plan_ctx *c, const char *s)
{
	return sl_sql_plan_own(c, strdup(s), free);
}

/* ---- durations and SET options --------------------------------------------------------- */

/* Flink's duration text: "10 ms", "200ms", "5 s", "1 min", "2 h", "1 d", a bare number is ms. */
int sl_sql_plan_parse_duration(const char *s, sl_ts_t *ms)
{
	static const struct {
		const char *unit;
		sl_ts_t ms;
	} units[] = {
		{ "ms", 1 },	      { "milli", 1 },	     { "millis", 1 },
		{ "millisecond", 1 }, { "milliseconds", 1 }, { "s", 1000 },
		{ "sec", 1000 },      { "secs", 1000 },	     { "second", 1000 },
		{ "seconds", 1000 },  { "min", 60000 },	     { "m", 60000 },
		{ "minute", 60000 },  { "minutes", 60000 },  { "h", 3600000 },
		{ "hour", 3600000 },  { "hours", 3600000 },  { "d", 86400000 },
		{ "day", 86400000 },  { "days", 86400000 },
	};
	char *end;
	long long v;

	while (isspace((unsigned char)*s))
		s++;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	v = strtoll(s, &end, 10);
	while (isspace((unsigned char)*end))
		end++;
	if (!*end) {
		*ms = v;
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t n = strlen(units[i].unit);

		if (strncasecmp(end, units[i].unit, n) == 0) {
			const char *rest = end + n;

			while (isspace((unsigned char)*rest))
				rest++;
			if (!*rest) {
				*ms = v * units[i].ms;
				return 0;
			}
		}
	}
	return -EINVAL;
}

/* table.local-time-zone: UTC or a fixed offset (+08:00, GMT+8). */
static int parse_zone(const char *s, int64_t *off_ms)
{
	int sign = 1, h = 0, m = 0;

	if (!strcasecmp(s, "UTC") || !strcasecmp(s, "GMT") || !strcasecmp(s, "Z") ||
	    !strcasecmp(s, "Etc/UTC") || !strcasecmp(s, "UTC+0") || !strcasecmp(s, "GMT+0")) {
		*off_ms = 0;
		return 0;
	}
	if (!strncasecmp(s, "UTC", 3) || !strncasecmp(s, "GMT", 3))
		s += 3;
	if (*s == '+' || *s == '-') {
		sign = *s == '-' ? -1 : 1;
		s++;
		if (sscanf(s, "%d:%d", &h, &m) >= 1 && h <= 18 && m < 60) {
			*off_ms = sign * ((int64_t)h * 3600000 + (int64_t)m * 60000);
			return 0;
		}
	}
	return -EINVAL;
}

static int apply_set(struct sl_sql_plan_ctx *c, const struct sl_ddl_stmt *st)
{
	const char *k = st->set.key, *v = st->set.value;
	sl_ts_t ms;

	if (!strcmp(k, "parallelism.default")) {
		char *end;
		long n = strtol(v, &end, 10);

		if (*end || n < 1 || n > 1024)
			return sl_sql_plan_fail(
				c, st->span.line, st->span.col,
				"'parallelism.default' must be a number of shards from 1 to "
				"1024, not '%s'",
				v);
		c->parallelism = (int)n;
		return 0;
	}
	if (!strcmp(k, "execution.checkpointing.tolerable-failed-checkpoints")) {
		char *end;
		long n = strtol(v, &end, 10);

		if (!*v || *end || n < 0 || n > INT32_MAX)
			return sl_sql_plan_fail(
				c, st->span.line, st->span.col,
				"'%s' must be a number of checkpoints, 0 or more, not '%s'", k, v);
		c->ckpt_tolerable = (int)n;
		return 0;
	}
	if (!strcmp(k, "execution.savepoint.ignore-unclaimed-state")) {
		/* Flink's name for --allowNonRestoredState */
		if (strcasecmp(v, "true") && strcasecmp(v, "false"))
			return sl_sql_plan_fail(c, st->span.line, st->span.col,
						"'%s' must be true or false, not '%s'", k, v);
		c->allow_non_restored = !strcasecmp(v, "true");
		return 0;
	}
	if (!strcmp(k, "pipeline.name")) {
		c->pipeline_name = sl_sql_plan_strdup(c, v);
		return c->pipeline_name ? 0 : -ENOMEM;
	}
	static const struct {
		const char *key;
		size_t off;
	} strings[] = {
		{ "state.checkpoints.dir", offsetof(struct sl_sql_plan_ctx, ckpt_dir) },
		{ "execution.checkpointing.dir", offsetof(struct sl_sql_plan_ctx, ckpt_dir) },
		{ "state.savepoints.dir", offsetof(struct sl_sql_plan_ctx, savepoint_dir) },
		{ "execution.checkpointing.savepoint-dir",
		  offsetof(struct sl_sql_plan_ctx, savepoint_dir) },
		{ "execution.savepoint.path", offsetof(struct sl_sql_plan_ctx, savepoint_path) },
		{ "execution.state-recovery.path",
		  offsetof(struct sl_sql_plan_ctx, savepoint_path) },
	};
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
		char **dst = (char **)((char *)c + strings[i].off);

		if (strcmp(k, strings[i].key))
			continue;
		/* Flink takes URIs; a local path may come as file:///x */
		if (!strncmp(v, "file://", 7))
			v += 7;
		*dst = sl_sql_plan_strdup(c, v);
		return *dst ? 0 : -ENOMEM;
	}
	if (!strcmp(k, "state.backend") || !strcmp(k, "state.backend.type")) {
		const char *b = !strcasecmp(v, "hashmap") || !strcasecmp(v, "heap") ? "heap"
				: !strcasecmp(v, "rocksdb")			    ? "rocksdb"
										    : NULL;

		if (!b)
			return sl_sql_plan_fail(c, st->span.line, st->span.col,
						"%s '%s': expected 'hashmap' (heap) or 'rocksdb'",
						k, v);
		c->state_backend = sl_sql_plan_strdup(c, b);
		return c->state_backend ? 0 : -ENOMEM;
	}
	if (!strcmp(k, "sluice.state.memory") ||
	    !strcmp(k, "state.backend.rocksdb.memory.fixed-per-tm")) {
		if (sl_sql_conn_parse_memory_size(v, &c->state_memory) < 0)
			return sl_sql_plan_fail(
				c, st->span.line, st->span.col,
				"%s '%s': expected a memory size such as '512 mb' or '2g'", k, v);
		return 0;
	}
	if (!strcmp(k, "table.optimizer.agg-phase-strategy")) {
		/* Flink's values and meaning; window aggregations only so far (window.h) */
		if (!strcasecmp(v, "AUTO"))
			c->agg_phase = SL_AGG_PHASE_AUTO;
		else if (!strcasecmp(v, "ONE_PHASE"))
			c->agg_phase = SL_AGG_PHASE_ONE;
		else if (!strcasecmp(v, "TWO_PHASE"))
			c->agg_phase = SL_AGG_PHASE_TWO;
		else
			return sl_sql_plan_fail(c, st->span.line, st->span.col,
						"%s '%s': expected AUTO, ONE_PHASE or TWO_PHASE", k,
						v);
		return 0;
	}
	/* mini-batch drives the updating GROUP BY's local stage (group_agg.h); Flink's
	 * batching of the one-phase updates is not done */
	if (!strcmp(k, "table.exec.mini-batch.enabled")) {
		if (strcasecmp(v, "true") && strcasecmp(v, "false"))
			return sl_sql_plan_fail(c, st->span.line, st->span.col,
						"%s '%s': expected true or false", k, v);
		c->mini_batch = !strcasecmp(v, "true");
		return 0;
	}
	if (!strcmp(k, "table.exec.mini-batch.size")) {
		char *end;
		long long n = strtoll(v, &end, 10);

		if (*end || (n < 1 && n != -1) || n > 1 << 20)
			return sl_sql_plan_fail(c, st->span.line, st->span.col,
						"%s '%s': expected a row count from 1 to 1048576 "
						"(or -1: the default)",
						k, v);
		c->mini_batch_size = n < 0 ? 0 : (uint32_t)n;
		return 0;
	}
	if (!strcmp(k, "sluice.late-data.table")) {
		c->late_table = sl_sql_plan_strdup(c, v);
		return c->late_table ? 0 : -ENOMEM;
	}
	if (!strcmp(k, "table.local-time-zone")) {
		if (parse_zone(v, &c->env.local_tz_offset_ms) < 0)
			return sl_sql_plan_fail(
				c, st->span.line, st->span.col,
				"table.local-time-zone '%s' is not supported: use UTC or a "
				"fixed offset like +08:00",
				v);
		return 0;
	}
	static const struct {
		const char *key;
		size_t off;
	} durations[] = {
		{ "pipeline.auto-watermark-interval",
		  offsetof(struct sl_sql_plan_ctx, wm_interval) },
		{ "table.exec.source.idle-timeout",
		  offsetof(struct sl_sql_plan_ctx, idle_timeout) },
		{ "table.exec.state.ttl", offsetof(struct sl_sql_plan_ctx, state_ttl) },
		{ "table.exec.emit.allow-lateness",
		  offsetof(struct sl_sql_plan_ctx, allow_lateness) },
		{ "table.exec.mini-batch.allow-latency",
		  offsetof(struct sl_sql_plan_ctx, mini_batch_latency) },
		{ "execution.checkpointing.interval",
		  offsetof(struct sl_sql_plan_ctx, ckpt_interval) },
		{ "execution.checkpointing.timeout",
		  offsetof(struct sl_sql_plan_ctx, ckpt_timeout) },
		{ "execution.checkpointing.min-pause",
		  offsetof(struct sl_sql_plan_ctx, ckpt_min_pause) },
	};
	for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
		if (strcmp(k, durations[i].key))
			continue;
		if (sl_sql_plan_parse_duration(v, &ms) < 0)
			return sl_sql_plan_fail(
				c, st->span.line, st->span.col,
				"'%s' must be a duration such as '200 ms' or '5 s', not '%s'", k,
				v);
		*(sl_ts_t *)((char *)c + durations[i].off) = ms;
		return 0;
	}
	if (!strcmp(k, "table.exec.emit.late-fire.enabled") ||
	    !strcmp(k, "table.exec.emit.late-fire.delay")) {
		/* late firing is immediate, once per late row, as with delay 0 */
		return 0;
	}
	if (!strcmp(k, "table.exec.emit.early-fire.enabled") && !strcasecmp(v, "true"))
		return sl_sql_plan_fail(c, st->span.line, st->span.col,
					"early firing of windows is not supported");
	if (!strcmp(k, "execution.runtime-mode") && strcasecmp(v, "streaming"))
		return sl_sql_plan_fail(
			c, st->span.line, st->span.col,
			"execution.runtime-mode '%s': sluice runs every job in streaming "
			"mode",
			v);
	/* Flink accepts any key; so do we, but say so when it changes nothing here */
	fprintf(c->opts.notices ? c->opts.notices : stderr,
		"%s:%u:%u: notice: SET '%s' has no effect in sluice\n", c->file, st->span.line,
		st->span.col, k);
	return 0;
}

/* ---- catalog -------------------------------------------------------------------------- */

int sl_sql_plan_type_from_ddl(struct sl_sql_plan_ctx *c, const struct sl_ddl_type *t,
			      struct sl_sql_type *out)
{
	memset(out, 0, sizeof(*out));
	out->nullable = !t->not_null;
	switch (t->kind) {
	case SL_DDL_BOOLEAN:
		out->type = SL_TYPE_BOOL;
		return 0;
	case SL_DDL_INT:
		out->type = SL_TYPE_INT;
		return 0;
	case SL_DDL_BIGINT:
		out->type = SL_TYPE_BIGINT;
		return 0;
	case SL_DDL_FLOAT:
		out->type = SL_TYPE_FLOAT;
		return 0;
	case SL_DDL_DOUBLE:
		out->type = SL_TYPE_DOUBLE;
		return 0;
	case SL_DDL_STRING:
	case SL_DDL_VARCHAR:
		out->type = SL_TYPE_STRING;
		return 0;
	case SL_DDL_TIMESTAMP:
	case SL_DDL_TIMESTAMP_LTZ:
		out->type = t->kind == SL_DDL_TIMESTAMP ? SL_TYPE_TIMESTAMP : SL_TYPE_TIMESTAMP_LTZ;
		out->prec = (int)t->precision; /* printed digits; the slot holds milliseconds */
		return 0;
	case SL_DDL_DATE:
		out->type = SL_TYPE_DATE;
		return 0;
	case SL_DDL_DECIMAL:
		out->type = SL_TYPE_DECIMAL;
		out->scale = (int)t->scale;
		/* precision above 18 is kept exact while values fit 18 digits (NULL beyond) */
		out->prec = t->precision > SL_DECIMAL_MAX_PREC ? SL_DECIMAL_MAX_PREC
							       : (int)t->precision;
		if (out->scale > out->prec)
			return sl_sql_plan_fail(
				c, t->line, t->col,
				"DECIMAL(%u, %u): sluice keeps at most %d digits, so the scale "
				"must be at most %d",
				t->precision, t->scale, SL_DECIMAL_MAX_PREC, SL_DECIMAL_MAX_PREC);
		return 0;
	case SL_DDL_ROW:
		break;
	}
	return sl_sql_plan_fail(c, t->line, t->col, "a ROW type cannot be used here");
}

/* Adds the leaves of one column (a ROW is walked depth first). */
static int flatten(struct sl_sql_plan_ctx *c, struct sl_sql_plan_table *t, const char *prefix,
		   const struct sl_ddl_type *type, uint32_t line, uint32_t col)
{
	if (type->kind == SL_DDL_ROW) {
		for (uint32_t i = 0; i < type->nfields; i++) {
			const struct sl_ddl_field *f = &type->fields[i];
			size_t n = strlen(prefix) + strlen(f->name) + 2;
			char *name = malloc(n);
			int rc;

			if (!name)
				return sl_sql_plan_fail(c, 0, 0, "out of memory");
			snprintf(name, n, "%s.%s", prefix, f->name);
			rc = flatten(c, t, name, &f->type, f->line, f->col);
			free(name);
			if (rc)
				return rc;
		}
		return 0;
	}
	if (t->nphys == SL_PLAN_MAX_COLS)
		return sl_sql_plan_fail(c, line, col,
					"table '%s' has more than %d columns (ROW fields "
					"count one each)",
					t->ddl->name, SL_PLAN_MAX_COLS);
	if (sl_sql_plan_type_from_ddl(c, type, &t->phys_type[t->nphys]))
		return -EINVAL;
	t->phys_name[t->nphys] = sl_sql_plan_strdup(c, prefix);
	if (!t->phys_name[t->nphys])
		return -ENOMEM;
	t->nphys++;
	return 0;
}

static bool name_taken(struct sl_sql_plan_ctx *c, const char *name)
{
	for (int i = 0; i < c->ntables; i++)
		if (!strcasecmp(c->tables[i]->ddl->name, name))
			return true;
	for (int i = 0; i < c->nviews; i++)
		if (!strcasecmp(c->views[i]->name, name))
			return true;
	return false;
}

const struct sl_ddl_option *sl_sql_plan_table_option(const struct sl_ddl_table *t, const char *key)
{
	for (uint32_t i = 0; i < t->nopts; i++)
		if (!strcmp(t->opts[i].key, key))
			return &t->opts[i];
	return NULL;
}

static int add_table(struct sl_sql_plan_ctx *c, const struct sl_ddl_stmt *st)
{
	const struct sl_ddl_table *d = &st->table;
	struct sl_sql_plan_table *t, **grown;
	const struct sl_ddl_option *o;

	if (name_taken(c, d->name)) {
		if (d->if_not_exists)
			return 0;
		return sl_sql_plan_fail(c, st->span.line, st->span.col, "table '%s' already exists",
					d->name);
	}
	t = sl_sql_plan_own(c, calloc(1, sizeof(*t)), free);
	grown = t ? realloc(c->tables, sizeof(*grown) * (size_t)(c->ntables + 1)) : NULL;
	if (!grown)
		return sl_sql_plan_fail(c, 0, 0, "out of memory");
	c->tables = grown;
	c->tables[c->ntables++] = t;
	t->ddl = d;
	for (uint32_t i = 0; i < d->ncols; i++) {
		if (d->cols[i].computed)
			continue;
		if (flatten(c, t, d->cols[i].name, &d->cols[i].type, d->cols[i].line,
			    d->cols[i].col))
			return -EINVAL;
	}
	t->idle_timeout = c->idle_timeout;
	if ((o = sl_sql_plan_table_option(d, "scan.watermark.emit.strategy"))) {
		if (!strcasecmp(o->value, "on-event"))
			t->on_event = true;
		else if (strcasecmp(o->value, "on-periodic"))
			return sl_sql_plan_fail(c, o->line, o->col,
						"'scan.watermark.emit.strategy' must be "
						"'on-event' or 'on-periodic', not '%s'",
						o->value);
	}
	if ((o = sl_sql_plan_table_option(d, "scan.watermark.idle-timeout")) &&
	    sl_sql_plan_parse_duration(o->value, &t->idle_timeout) < 0)
		return sl_sql_plan_fail(c, o->line, o->col,
					"'scan.watermark.idle-timeout' must be a "
					"duration such as '5 s', not '%s'",
					o->value);
	if (d->has_watermark) {
		bool found = false;

		for (uint32_t i = 0; i < d->ncols; i++)
			found |= !strcmp(d->cols[i].name, d->wm_col.name);
		if (!found)
			return sl_sql_plan_fail(c, d->wm_col.line, d->wm_col.col,
						"WATERMARK FOR '%s': no such column in table '%s'",
						d->wm_col.name, d->name);
		t->wm_col = d->wm_col.name;
	}
	for (uint32_t i = 0; i < d->npk; i++) {
		bool found = false;

		for (uint32_t j = 0; j < d->ncols; j++)
			found |= !strcmp(d->cols[j].name, d->pk[i].name);
		if (!found)
			return sl_sql_plan_fail(c, d->pk[i].line, d->pk[i].col,
						"PRIMARY KEY column '%s' is not a column of '%s'",
						d->pk[i].name, d->name);
	}
	return 0;
}

static void view_free(void *p)
{
	struct sl_sql_plan_view *v = p;

	sl_stmt_destroy(v->stmt);
	free(v->name);
	free(v);
}

static int add_view(struct sl_sql_plan_ctx *c, struct sl_stmt *st)
{
	struct sl_sql_plan_view *v, **grown;

	if (name_taken(c, st->target)) {
		if (st->if_not_exists) {
			sl_stmt_destroy(st);
			return 0;
		}
		sl_sql_plan_fail(c, st->line, st->col, "a table or view named '%s' already exists",
				 st->target);
		sl_stmt_destroy(st);
		return -EINVAL;
	}
	v = calloc(1, sizeof(*v));
	if (!v || !(v->name = strdup(st->target))) {
		free(v);
		sl_stmt_destroy(st);
		return sl_sql_plan_fail(c, 0, 0, "out of memory");
	}
	v->stmt = st;
	if (!sl_sql_plan_own(c, v, view_free))
		return -ENOMEM;
	grown = realloc(c->views, sizeof(*grown) * (size_t)(c->nviews + 1));
	if (!grown)
		return sl_sql_plan_fail(c, 0, 0, "out of memory");
	c->views = grown;
	c->views[c->nviews++] = v;
	if (st->wm_for) {
		fprintf(c->opts.notices ? c->opts.notices : stderr,
			"%s:%u:%u: notice: WATERMARK in CREATE VIEW is a sluice extension; Flink "
			"declares it in CREATE TABLE: WATERMARK FOR col AS col - INTERVAL ...\n",
			c->file, st->wm_line, st->wm_col);
	}
	return 0;
}

struct sl_sql_plan_table *sl_sql_plan_find_table(struct sl_sql_plan_ctx *c, const char *name)
{
	for (int i = 0; i < c->ntables; i++)
		if (!strcasecmp(c->tables[i]->ddl->name, name))
			return c->tables[i];
	return NULL;
}

struct sl_sql_plan_view *sl_sql_plan_find_view(struct sl_sql_plan_ctx *c, const char *name)
{
	for (int i = 0; i < c->nviews; i++)
		if (!strcasecmp(c->views[i]->name, name))
			return c->views[i];
	return NULL;
}

/* ---- sinks ---------------------------------------------------------------------------- */

/* The table's WITH options as the connectors take them (`used` marks what the planner
 * itself consumed), followed by one option "sluice.metadata.<column>" = key per METADATA
 * column (the connector's way of being asked for it, placed at the column for messages).
 * *n gets the count. */
static struct sl_sql_conn_opt *conn_opts(struct sl_sql_plan_ctx *c, const struct sl_ddl_table *d,
					 int *n)
{
	uint32_t nmeta = 0;
	struct sl_sql_conn_opt *o;

	for (uint32_t i = 0; i < d->ncols; i++)
		nmeta += d->cols[i].metadata;
	o = sl_sql_plan_own(c, calloc((size_t)(d->nopts + nmeta) + 1, sizeof(*o)), free);
	if (!o)
		return NULL;
	for (uint32_t i = 0; i < d->nopts; i++) {
		o[i].key = d->opts[i].key;
		o[i].value = d->opts[i].value;
		o[i].line = d->opts[i].line;
		o[i].col = d->opts[i].col;
		o[i].used = !strncmp(o[i].key, "scan.watermark.", 15);
	}
	*n = (int)d->nopts;
	for (uint32_t i = 0; i < d->ncols; i++) {
		const struct sl_ddl_column *col = &d->cols[i];
		char key[300];

		if (!col->metadata)
			continue;
		snprintf(key, sizeof key, "sluice.metadata.%s", col->name);
		o[*n].key = sl_sql_plan_strdup(c, key);
		o[*n].value = col->meta_key ? col->meta_key : col->name;
		o[*n].line = col->line;
		o[*n].col = col->col;
		if (!o[*n].key)
			return NULL;
		(*n)++;
	}
	return o;
}

static void connector_free(void *p)
{
	struct sl_sql_conn *k = p;

	sl_sql_conn_fini(k);
	free(k);
}

struct sl_sql_conn *sl_sql_plan_connector(struct sl_sql_plan_ctx *c, const struct sl_ddl_table *d,
					  const struct sl_schema *schema, bool sink)
{
	struct sl_sql_conn *k = calloc(1, sizeof(*k));
	struct sl_sql_conn_table tb = { .schema = schema, .file = c->file };
	int pk[SL_SCHEMA_MAX_FIELDS], npk = 0;
	int part[SL_SCHEMA_MAX_FIELDS], npart = 0;
	char msg[512];
	int rc;

	tb.opts = conn_opts(c, d, &tb.nopts);
	if (!k || !tb.opts) {
		free(k);
		sl_sql_plan_fail(c, 0, 0, "out of memory");
		return NULL;
	}
	msg[0] = 0;
	for (uint32_t i = 0; i < d->ncols; i++)
		if (sink && d->cols[i].metadata) {
			free(k);
			sl_sql_plan_fail(c, d->cols[i].line, d->cols[i].col,
					 "column '%s': METADATA columns "
					 "are read from a source; this table is written to",
					 d->cols[i].name);
			return NULL;
		}
	/* what only the planner knows: the key of an upsert sink, the checkpoint interval (a
	 * Kafka sink's transaction timeout), the parallelism, whether to ask external systems */
	for (uint32_t i = 0; i < d->npk && npk < SL_SCHEMA_MAX_FIELDS; i++)
		pk[npk++] = sl_schema_find(schema, d->pk[i].name);
	tb.pk = pk;
	tb.npk = npk;
	for (uint32_t i = 0; i < d->npart && i < SL_SCHEMA_MAX_FIELDS; i++) {
		int f = sl_schema_find(schema, d->part[i].name);
		enum sl_type ty = f < 0 ? 0 : sl_schema_type(schema, f);

		/* the types whose text in a directory name is plain (Flink's toString()) */
		if (ty != SL_TYPE_STRING && ty != SL_TYPE_INT && ty != SL_TYPE_BIGINT &&
		    ty != SL_TYPE_BOOL && ty != SL_TYPE_DATE) {
			free(k);
			sl_sql_plan_fail(c, d->part[i].line, d->part[i].col,
					 "PARTITIONED BY column '%s': partition columns must be "
					 "STRING, an integer, BOOLEAN or DATE",
					 d->part[i].name);
			return NULL;
		}
		part[npart++] = f;
	}
	if (npart && npart == sl_schema_nfields(schema)) {
		free(k);
		sl_sql_plan_fail(c, d->part[0].line, d->part[0].col,
				 "table '%s': every column is a partition column; the files "
				 "would hold no column",
				 d->name);
		return NULL;
	}
	tb.part = part;
	tb.npart = npart;
	tb.checkpoint_interval_ms = c->ckpt_interval;
	tb.nshards = c->nshards;
	tb.offline = c->opts.offline;
	rc = sink ? sl_sql_conn_bind_sink(&tb, k, msg, sizeof msg)
		  : sl_sql_conn_bind_source(&tb, k, msg, sizeof msg);
	if (rc < 0) {
		free(k);
		if (!c->failed) {
			/* the connector's message already names FILE:LINE:COL */
			c->failed = true;
			snprintf(c->err, c->errcap, "%s", msg[0] ? msg : "bad connector options");
		}
		return NULL;
	}
	return sl_sql_plan_own(c, k, connector_free);
}

/* The schema of a table's physical leaves. */
struct sl_schema *sl_sql_plan_table_schema(struct sl_sql_plan_ctx *c,
					   const struct sl_sql_plan_table *t)
{
	struct sl_schema *s = sl_schema_create();

	if (!s) {
		sl_sql_plan_fail(c, 0, 0, "out of memory");
		return NULL;
	}
	for (int i = 0; i < t->nphys; i++) {
		int rc = sl_sql_plan_schema_put(s, t->phys_name[i], &t->phys_type[i]);
		if (rc < 0) {
			sl_schema_destroy(s);
			sl_sql_plan_fail(c, t->ddl->cols ? t->ddl->cols[0].line : 0, 0,
					 "table '%s': bad column '%s'", t->ddl->name,
					 t->phys_name[i]);
			return NULL;
		}
	}
	return sl_sql_plan_own(c, s, (void (*)(void *))sl_schema_destroy);
}

/* ---- statements ----------------------------------------------------------------------- */

static struct sl_sql_plan_job *new_job(struct sl_sql_plan_ctx *c, const char *what, uint32_t line)
{
	struct sl_sql_plan_job *grown = realloc(c->jobs, sizeof(*grown) * (size_t)(c->njobs + 1));
	const char *base = strrchr(c->file, '/');
	char name[256], ident[256];
	struct sl_sql_plan_job *j;

	if (!grown) {
		sl_sql_plan_fail(c, 0, 0, "out of memory");
		return NULL;
	}
	c->jobs = grown;
	j = &c->jobs[c->njobs];
	memset(j, 0, sizeof(*j));
	/* the job's identity, which its checkpoints carry: the pipeline name, by default the
	 * file's name (not its path as typed, nor the statement's line), and the job's place
	 * among the file's jobs when it is not the first */
	if (c->pipeline_name)
		snprintf(ident, sizeof ident, "%s", c->pipeline_name);
	else
		snprintf(ident, sizeof ident, "%s", base ? base + 1 : c->file);
	if (c->njobs)
		snprintf(ident + strlen(ident), sizeof ident - strlen(ident), "#%d", c->njobs + 1);
	/* what explain shows */
	if (c->pipeline_name)
		snprintf(name, sizeof name, "%s", c->pipeline_name);
	else
		snprintf(name, sizeof name, "%s:%u %s", c->file, line, what);
	j->job = sl_job_create(ident);
	j->name = strdup(name);
	if (!j->job || !j->name) {
		sl_job_destroy(j->job);
		free(j->name);
		sl_sql_plan_fail(c, 0, 0, "out of memory");
		return NULL;
	}
	c->njobs++;
	return j;
}

static int plan_stmt(struct sl_sql_plan_ctx *c, struct sl_stmt *st, struct sl_sql_plan_job *into);

/*
 * Gives the operators a statement added to `job` (nodes from..) their uids (DESIGN §7, "A
 * job's identity"): "<scope>/<name>", the scope being the statement's UID hint, else the
 * table it inserts into ("print" for a SELECT). So one statement's state stays its own when
 * statements are added to or removed from a statement set, or operators elsewhere.
 */
static int scope_uids(struct sl_sql_plan_ctx *c, struct sl_job *job, int from,
		      const struct sl_stmt *st, const struct sl_query *hinted)
{
	const char *scope = hinted			 ? hinted->uid
			    : st->kind == SL_STMT_SELECT ? "print"
							 : st->target;
	char table[64];
	int rc;

	if (!hinted) { /* a table's name made a uid: what is outside the alphabet is '_' */
		snprintf(table, sizeof table, "%s", scope);
		for (char *p = table; *p; p++)
			if (!isalnum((unsigned char)*p) && !strchr("_.-/ ", *p))
				*p = '_';
		scope = table;
	}
	rc = sl_job_scope_uids(job, from, scope, hinted != NULL);
	if (rc == -EINVAL)
		return sl_sql_plan_fail(c, hinted ? hinted->uid_line : st->line,
					hinted ? hinted->uid_col : st->col,
					"UID '%s': a name of 1 to 128 letters, digits, spaces "
					"and _ . - /",
					scope);
	if (rc == -EEXIST)
		return sl_sql_plan_fail(c, hinted->uid_line, hinted->uid_col,
					"UID '%s': another statement of this job has that name",
					scope);
	return rc ? sl_sql_plan_fail(c, 0, 0, "out of memory") : 0;
}

static int plan_insert_or_select(struct sl_sql_plan_ctx *c, struct sl_stmt *st,
				 struct sl_sql_plan_job *into)
{
	struct sl_sql_plan_job *j = into;
	const struct sl_query *hinted = st->query;
	int from, rc;

	if (!j) {
		j = new_job(c, st->kind == SL_STMT_SELECT ? "SELECT" : "INSERT", st->line);
		if (!j)
			return -ENOMEM;
	}
	/* a UNION's hint sits on its first SELECT */
	while (hinted && hinted->set_op != SL_SET_NONE)
		hinted = hinted->left;
	c->uid_query = hinted;
	from = sl_job_nnodes(j->job);
	if (st->kind == SL_STMT_SELECT)
		rc = sl_sql_plan_select_print(c, j->job, st);
	else
		rc = sl_sql_plan_insert(c, j->job, st);
	if (!rc)
		rc = scope_uids(c, j->job, from, st, hinted && hinted->uid ? c->uid_query : NULL);
	c->uid_query = NULL;
	return rc;
}

static int plan_stmt(struct sl_sql_plan_ctx *c, struct sl_stmt *st, struct sl_sql_plan_job *into)
{
	switch (st->kind) {
	case SL_STMT_SELECT:
	case SL_STMT_INSERT:
		return plan_insert_or_select(c, st, into);
	case SL_STMT_STATEMENT_SET: {
		struct sl_sql_plan_job *j = new_job(c, "STATEMENT SET", st->line);

		if (!j)
			return -ENOMEM;
		for (uint32_t i = 0; i < st->nsub; i++) {
			if (st->sub[i]->kind != SL_STMT_INSERT)
				return sl_sql_plan_fail(
					c, st->sub[i]->line, st->sub[i]->col,
					"a statement set holds only INSERT statements");
			if (plan_insert_or_select(c, st->sub[i], j))
				return -EINVAL;
		}
		return 0;
	}
	case SL_STMT_EXPLAIN: {
		int before = c->njobs;
		int rc;

		if (st->inner->kind == SL_STMT_CREATE_VIEW || st->inner->kind == SL_STMT_EXPLAIN)
			return sl_sql_plan_fail(c, st->line, st->col,
						"EXPLAIN takes a query, an INSERT or a "
						"statement set");
		rc = plan_stmt(c, st->inner, NULL);
		if (rc)
			return rc;
		for (int i = before; i < c->njobs; i++)
			c->jobs[i].explain_only = true;
		return 0;
	}
	case SL_STMT_EXPLAIN_WATERMARK:
		return sl_sql_plan_wm_explain(c, st);
	default:
		return sl_sql_plan_fail(c, st->line, st->col, "this statement cannot appear here");
	}
}

static int plan_script(struct sl_sql_plan_ctx *c)
{
	struct sl_sql_plan_job *set_job = NULL; /* open BEGIN STATEMENT SET */
	uint32_t set_line = 0, set_col = 0;

	for (uint32_t i = 0; i < c->ddl->nstmts && !c->failed; i++) {
		const struct sl_ddl_stmt *d = &c->ddl->stmts[i];
		struct sl_stmt *st;
		char msg[512];
		int rc;

		if (d->kind == SL_DDL_SET) {
			if (apply_set(c, d))
				return -EINVAL;
			continue;
		}
		if (d->kind == SL_DDL_CREATE_TABLE) {
			if (add_table(c, d))
				return -EINVAL;
			continue;
		}
		if (d->kind == SL_DDL_SHOW) {
			if (sl_sql_plan_show(c, &d->show))
				return -EINVAL;
			continue;
		}
		if (d->kind == SL_DDL_CREATE_FUNCTION) {
			if (sl_sql_plan_add_function(c, &d->fn))
				return -EINVAL;
			continue;
		}
		st = sl_stmt_parse(c->src + d->span.start, d->span.end - d->span.start,
				   d->span.line, d->span.col, msg, sizeof msg);
		if (!st) {
			if (!c->failed) {
				c->failed = true;
				snprintf(c->err, c->errcap, "%s:%s", c->file, msg);
			}
			return -EINVAL;
		}
		if (st->kind == SL_STMT_CREATE_VIEW) {
			if (add_view(c, st))
				return -EINVAL;
			continue;
		}
		if (!sl_sql_plan_own(c, st, (void (*)(void *))sl_stmt_destroy))
			return -ENOMEM;
		if (st->kind == SL_STMT_BEGIN_SET) {
			if (set_job)
				return sl_sql_plan_fail(c, st->line, st->col,
							"statement sets do not nest");
			set_job = new_job(c, "STATEMENT SET", st->line);
			if (!set_job)
				return -ENOMEM;
			set_line = st->line;
			set_col = st->col;
			continue;
		}
		if (st->kind == SL_STMT_END) {
			if (!set_job)
				return sl_sql_plan_fail(c, st->line, st->col,
							"END without BEGIN STATEMENT SET");
			set_job = NULL;
			continue;
		}
		if (set_job && st->kind != SL_STMT_INSERT)
			return sl_sql_plan_fail(c, st->line, st->col,
						"a statement set holds only INSERT statements");
		/* set_job may move when new_job grows the array: index it afresh */
		rc = plan_stmt(c, st, set_job ? &c->jobs[c->njobs - 1] : NULL);
		if (rc)
			return rc;
	}
	if (set_job)
		return sl_sql_plan_fail(c, set_line, set_col, "BEGIN STATEMENT SET without END");
	return c->failed ? -EINVAL : 0;
}

/* ---- loading -------------------------------------------------------------------------- */

struct sl_sql_script {
	struct sl_sql_plan_ctx c;
	char *src;
};

/* The job file whole. Read to its end rather than to st_size: a pipe or a FIFO
 * (`sluice run <(...)`) has no size. */
static char *read_file(const char *path, size_t *len, char *err, size_t errcap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	size_t got = 0, cap;
	char *buf;

	if (fd < 0 || fstat(fd, &sb) < 0) {
		snprintf(err, errcap, "%s: cannot read the job file: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	cap = S_ISREG(sb.st_mode) && sb.st_size > 0 ? (size_t)sb.st_size + 1 : 4096;
	buf = malloc(cap);
	for (;;) {
		ssize_t n;

		if (buf && got + 1 >= cap) {
			char *grown = realloc(buf, cap * 2);

			if (!grown)
				free(buf);
			buf = grown;
			cap *= 2;
		}
		if (!buf) {
			close(fd);
			snprintf(err, errcap, "%s: out of memory", path);
			return NULL;
		}
		n = read(fd, buf + got, cap - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errcap, "%s: cannot read the job file: %s", path,
				 strerror(errno));
			free(buf);
			close(fd);
			return NULL;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = 0;
	*len = got;
	return buf;
}

static int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

/* Defaults that depend on whether the jobs take checkpoints (the filesystem sink's delivery
 * guarantee), settled once the whole file is planned: a SET anywhere applies to all. */
static void settle_connectors(struct sl_sql_plan_ctx *c)
{
	bool ckpt = c->opts.checkpoint_dir || c->ckpt_dir || c->ckpt_interval > 0;

	for (int i = 0; i < c->nowned; i++)
		if (c->owned_free[i] == connector_free)
			sl_sql_conn_checkpointing(c->owned[i], ckpt);
}

struct sl_sql_script *sl_sql_load(const char *path, const char *src, size_t len,
				  const struct sl_sql_opts *opts, char *err, size_t errcap)
{
	struct sl_sql_script *s = calloc(1, sizeof(*s));
	struct sl_sql_plan_ctx *c;
	char msg[512];

	if (!s) {
		snprintf(err, errcap, "out of memory");
		return NULL;
	}
	c = &s->c;
	if (src) {
		s->src = malloc(len + 1);
		if (s->src) {
			memcpy(s->src, src, len);
			s->src[len] = 0;
		}
	} else {
		s->src = read_file(path, &len, err, errcap);
		if (!s->src) {
			free(s);
			return NULL;
		}
	}
	if (!s->src) {
		free(s);
		snprintf(err, errcap, "out of memory");
		return NULL;
	}
	c->file = path;
	c->src = s->src;
	c->len = len;
	if (opts)
		c->opts = *opts;
	c->env.file = path;
	c->err = err;
	c->errcap = errcap;
	c->wm_interval = 200;
	c->ddl = sl_ddl_parse(s->src, len, msg, sizeof msg);
	if (!c->ddl) {
		snprintf(err, errcap, "%s:%s", path, msg);
		sl_sql_destroy(s);
		return NULL;
	}
	/* SETs come first in the file's order, but the shard count is needed while planning
	 * (calc operators size per-shard state): take parallelism.default up front */
	for (uint32_t i = 0; i < c->ddl->nstmts; i++) {
		const struct sl_ddl_stmt *d = &c->ddl->stmts[i];

		if (d->kind == SL_DDL_SET && !strcmp(d->set.key, "parallelism.default"))
			c->parallelism = atoi(d->set.value);
	}
	c->nshards = c->opts.nshards > 0  ? c->opts.nshards
		     : c->parallelism > 0 ? c->parallelism
					  : online_cpus();
	if (plan_script(c)) {
		sl_sql_destroy(s);
		return NULL;
	}
	settle_connectors(c);
	return s;
}

void sl_sql_destroy(struct sl_sql_script *s)
{
	struct sl_sql_plan_ctx *c;

	if (!s)
		return;
	c = &s->c;
	for (int i = 0; i < c->njobs; i++) {
		sl_job_destroy(c->jobs[i].job);
		free(c->jobs[i].name);
	}
	free(c->jobs);
	for (int i = c->nowned - 1; i >= 0; i--)
		c->owned_free[i](c->owned[i]);
	free(c->owned);
	free(c->owned_free);
	free(c->tables);
	free(c->views);
	free(c->udfs);
	for (int i = 0; i < c->nexplains; i++)
		free(c->explains[i]);
	free(c->explains);
	free(c->wmx); /* its entries are owned */
	for (int i = 0; i < c->ninfos; i++)
		free(c->infos[i].text);
	free(c->infos);
	sl_ddl_destroy(c->ddl);
	free(s->src);
	free(s);
}

int sl_sql_nwatermark_explains(const struct sl_sql_script *s)
{
	return s->c.nwmx;
}

const char *sl_sql_watermark_explain(const struct sl_sql_script *s, int k, int *after,
				     const char *const **tables, int *ntables)
{
	const struct sl_sql_wm_explain *x = s->c.wmx[k];

	*after = x->after;
	*tables = x->tables;
	*ntables = x->ntables;
	return x->name;
}

int sl_sql_ninfos(const struct sl_sql_script *s)
{
	return s->c.ninfos;
}

const char *sl_sql_info(const struct sl_sql_script *s, int k, int *after)
{
	*after = s->c.infos[k].after;
	return s->c.infos[k].text;
}

int sl_sql_njobs(const struct sl_sql_script *s)
{
	return s->c.njobs;
}

struct sl_job *sl_sql_job(const struct sl_sql_script *s, int i)
{
	return s->c.jobs[i].job;
}

const char *sl_sql_job_title(const struct sl_sql_script *s, int i)
{
	return s->c.jobs[i].name;
}

bool sl_sql_job_explain_only(const struct sl_sql_script *s, int i)
{
	return s->c.jobs[i].explain_only;
}

void sl_sql_run_opts(const struct sl_sql_script *s, struct sl_run_opts *out)
{
	memset(out, 0, sizeof(*out));
	out->nshards = s->c.nshards;
	out->dead_letter_path = s->c.opts.dead_letter_path;
	out->checkpoint_interval_ms = s->c.ckpt_interval;
	out->checkpoint_timeout_ms = s->c.ckpt_timeout;
	out->checkpoint_min_pause_ms = s->c.ckpt_min_pause;
	out->tolerable_failed_checkpoints = s->c.ckpt_tolerable;
	out->allow_non_restored_state = s->c.allow_non_restored;
	/* the command line wins over the file's SET */
	out->checkpoint_dir = s->c.opts.checkpoint_dir ? s->c.opts.checkpoint_dir : s->c.ckpt_dir;
	out->from_savepoint =
		s->c.opts.from_savepoint ? s->c.opts.from_savepoint : s->c.savepoint_path;
	out->state_backend = s->c.opts.state_backend ? s->c.opts.state_backend : s->c.state_backend;
	out->state_memory = s->c.opts.state_memory ? s->c.opts.state_memory : s->c.state_memory;
}

const char *sl_sql_savepoint_dir(const struct sl_sql_script *s)
{
	return s->c.savepoint_dir;
}
