/*
 * window_assign.c - a window TVF read without aggregation: SELECT ... FROM
 * TABLE(TUMBLE|HOP(TABLE t, DESCRIPTOR(ts), ...)) gives every row once per window it falls
 * in, with window_start, window_end and window_time (window_end - 1 ms) appended, as Flink
 * does. window_time is the new time attribute, so each copy is sent with it as event time.
 * The three columns are marked as the window's properties (struct sl_sql_col.win_prop), so
 * that a ranking or a join over them can be a window Top-N or a window join.
 */
#include <errno.h>
#include <stdlib.h>

#include "plan_int.h"
#include "window_assign.h"

struct window_assigner {
	struct sl_window_spec win;
	int nin;
	enum sl_type types[SL_SCHEMA_MAX_FIELDS];
};

static sl_ts_t floor_to(sl_ts_t ts, sl_ts_t step, sl_ts_t offset)
{
	sl_ts_t a = ts - offset;

	return (a >= 0 ? a / step : -((-a + step - 1) / step)) * step + offset;
}

static void emit_copy(struct sl_ctx *ctx, const struct window_assigner *w, const struct sl_row *in,
		      sl_ts_t start, sl_ts_t end)
{
	struct sl_row_builder *b = sl_ctx_out(ctx);
	const struct sl_row *row;

	for (int i = 0; i < w->nin; i++)
		sl_rowb_copy_field(b, i, in, i, w->types[i]);
	sl_rowb_set_i64(b, w->nin, start);
	sl_rowb_set_i64(b, w->nin + 1, end);
	sl_rowb_set_i64(b, w->nin + 2, end - 1);
	sl_rowb_set_kind(b, (enum sl_row_kind)in->kind);
	row = sl_rowb_finish(b);
	if (row)
		sl_emit(ctx, end - 1, row);
}

static void assign(struct sl_ctx *ctx, sl_ts_t ts, const struct sl_row *in, void *arg)
{
	const struct window_assigner *w = arg;

	if (w->win.kind == SL_WIN_TUMBLE) {
		sl_ts_t s = floor_to(ts, w->win.size_ms, w->win.offset_ms);

		emit_copy(ctx, w, in, s, s + w->win.size_ms);
		return;
	}
	if (w->win.kind == SL_WIN_CUMULATE) {
		/* every window of ts's period [p, p + size) that ends after ts, shortest first */
		sl_ts_t p = floor_to(ts, w->win.size_ms, w->win.offset_ms);

		for (sl_ts_t e = floor_to(ts, w->win.slide_ms, w->win.offset_ms) + w->win.slide_ms;
		     e <= p + w->win.size_ms; e += w->win.slide_ms)
			emit_copy(ctx, w, in, p, e);
		return;
	}
	/* hop: every window [s, s + size) with s on the slide grid and s <= ts < s + size,
	 * earliest first */
	sl_ts_t last = floor_to(ts, w->win.slide_ms, w->win.offset_ms);
	sl_ts_t first = last;

	while (first - w->win.slide_ms + w->win.size_ms > ts)
		first -= w->win.slide_ms;
	for (sl_ts_t s = first; s <= last; s += w->win.slide_ms)
		emit_copy(ctx, w, in, s, s + w->win.size_ms);
}

int sl_sql_plan_window_assign(struct sl_sql_plan_ctx *c, struct sl_sql_plan_rel *rel, uint32_t line,
			      uint32_t col)
{
	struct window_assigner *w;
	struct sl_schema *s;
	const struct sl_schema *in = sl_stream_schema(rel->s);
	struct sl_sql_type ts = { .type = SL_TYPE_TIMESTAMP, .prec = SL_TS_PREC_DEFAULT };
	static const char *const names[3] = { "window_start", "window_end", "window_time" };

	if (rel->tvf_win.kind == SL_WIN_SESSION)
		return sl_sql_plan_fail(c, line, col,
					"a SESSION window TVF must be aggregated (GROUP BY "
					"window_start, window_end)");
	if (rel->tvf_win.proctime)
		return sl_sql_plan_fail(c, line, col,
					"a window TVF on processing time is supported only "
					"aggregated (GROUP BY window_start, window_end)");
	if (rel->ncols + 3 > SL_PLAN_MAX_COLS)
		return sl_sql_plan_fail(c, line, col, "too many columns with the window's three");
	w = sl_sql_plan_own(c, calloc(1, sizeof(*w)), free);
	s = sl_sql_plan_new_schema(c);
	if (!w || !s)
		return -ENOMEM;
	w->win = rel->tvf_win;
	w->nin = sl_schema_nfields(in);
	for (int i = 0; i < w->nin; i++) {
		struct sl_sql_type t = { .type = sl_schema_type(in, i),
					 .prec = sl_schema_precision(in, i),
					 .scale = sl_schema_scale(in, i) };

		w->types[i] = t.type;
		if (sl_sql_plan_schema_add(c, s, sl_schema_name(in, i), &t, NULL) < 0)
			return -EINVAL;
	}
	for (int k = 0; k < 3; k++) {
		struct sl_sql_col *nc = &rel->cols[rel->ncols++];
		int f = sl_sql_plan_schema_add(c, s, names[k], &ts, &nc->name);

		if (f < 0)
			return -EINVAL;
		/* qualified as the TVF's columns are: FROM TABLE(TUMBLE(...)) t has
		 * t.window_start */
		*nc = (struct sl_sql_col){ .qual = rel->cols[rel->tvf_time_col].qual,
					   .name = names[k],
					   .type = ts,
					   .field = f,
					   .rowtime = k == 2,
					   .win_prop = SL_SQL_WIN_START + k,
					   .win = &w->win };
	}
	/* the input's time column stops being the stream's event time (window_time is), but
	 * stays a time attribute as in Flink: ORDER BY it is deduplication */
	rel->cols[rel->tvf_time_col].rowtime = false;
	rel->cols[rel->tvf_time_col].win_prop = SL_SQL_WIN_TIMECOL;
	rel->cols[rel->tvf_time_col].win = &w->win;
	rel->s = sl_stream_flat_map(rel->s, "window assign", assign, w, s);
	if (!rel->s)
		return sl_sql_plan_fail(c, line, col, "cannot add the window assigner");
	rel->tvf = false;
	return 0;
}
