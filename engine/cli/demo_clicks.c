/*
 * demo_clicks.c - the default job: clicks per user per minute (the PyFlink lesson's canonical
 * windowed count), built with the C API from the embedded connectors only.
 *
 *   datagen clicks (user_id, url, ts; up to 5 s disorder, 0.2% up to 3 min late)
 *     -> WATERMARK ts - 5 s -> key_by user_id -> TUMBLE(ts, 1 min) COUNT(*)
 *     -> print                          (+I[user_id, window_start, window_end, clicks])
 *     -> late side output -> print      (late> +I[user_id, url, ts])
 */
#include <stdlib.h>

#include <sluice/connectors.h>

#include "demos.h"

#define LATE_TAG 1

struct sl_demo {
	struct sl_job *job;
	struct sl_schema *schema;
	struct sl_datagen_field fields[3];
	struct sl_datagen_cfg gen;
	struct sl_print_sink_cfg out;
	struct sl_print_sink_cfg late;
};

struct sl_demo *sl_demo_clicks_create(const struct sl_demo_opts *opts)
{
	struct sl_demo *d = calloc(1, sizeof(*d));
	struct sl_wm_strategy wm = {
		.kind = SL_WM_BOUNDED,
		.max_delay_ms = 5000,
		.ts_field = 2,
		.interval_ms = 0, /* after every record: the output is the same on every run */
	};
	struct sl_window_spec win = { .kind = SL_WIN_TUMBLE,
				      .size_ms = 60000,
				      .late_tag = LATE_TAG };
	struct sl_agg_spec count = { .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "clicks" };
	int user = 0;
	struct sl_stream *clicks, *counts;

	if (!d)
		return NULL;
	d->schema = sl_schema_create();
	d->job = sl_job_create("clicks per user per minute");
	if (!d->schema || !d->job)
		goto out_free;
	sl_schema_add(d->schema, "user_id", SL_TYPE_BIGINT);
	sl_schema_add(d->schema, "url", SL_TYPE_STRING);
	sl_schema_add(d->schema, "ts", SL_TYPE_TIMESTAMP);

	d->fields[0] = (struct sl_datagen_field){ .kind = SL_GEN_RANDOM, .min = 1, .max = 20 };
	d->fields[1] = (struct sl_datagen_field){ .kind = SL_GEN_RANDOM, .length = 12 };
	/* 2024-01-01 00:00:00 UTC, spread so the run covers ten minutes of event time */
	d->fields[2] = (struct sl_datagen_field){
		.kind = SL_GEN_EVENT_TIME,
		.base_ts = 1704067200000LL,
		.step_ms = opts->rows > 0 ? (600000 + opts->rows - 1) / opts->rows : 1,
		.max_disorder_ms = 5000,
		.late_fraction = 0.002,
		.late_ms = 180000,
	};
	d->gen = (struct sl_datagen_cfg){
		.schema = d->schema,
		.fields = d->fields,
		.rows_per_second = opts->rate,
		.number_of_rows = opts->rows,
		.nsplits =
			1, /* one generator stream: the same output on every run and core count */
		.seed = 42,
	};
	d->late.identifier = "late";

	clicks = sl_job_source(d->job, "clicks", &sl_datagen_source_ops, &d->gen, d->schema, &wm);
	counts = sl_stream_window(sl_stream_key_by(clicks, &user, 1), "clicks-per-minute", &win,
				  &count, 1);
	sl_stream_sink(counts, "print", &sl_print_sink_ops, &d->out);
	sl_stream_sink(sl_stream_side_output(counts, LATE_TAG, d->schema), "late-clicks",
		       &sl_print_sink_ops, &d->late);
	return d; /* construction errors surface from sl_job_run() */

out_free:
	sl_demo_destroy(d);
	return NULL;
}

struct sl_job *sl_demo_job(struct sl_demo *d)
{
	return d->job;
}

void sl_demo_destroy(struct sl_demo *d)
{
	if (!d)
		return;
	sl_job_destroy(d->job);
	sl_schema_destroy(d->schema);
	free(d);
}
