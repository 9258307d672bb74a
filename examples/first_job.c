/*
 * first_job.c - README's "first job in C", whole: clicks per user per minute from the
 * datagen source, a late-data side output, both printed. Build it against an installed
 * sluice with
 *
 *   cc -o first_job first_job.c $(pkg-config --cflags --libs sluice)
 *
 * (tests/examples/first_job.sh builds it exactly so, after `meson install`).
 */
#include <stdio.h>

#include <sluice/connectors.h>

int main(void)
{
	struct sl_schema *schema = sl_schema_create();
	struct sl_job *job = sl_job_create("clicks");
	struct sl_datagen_field fields[3] = {
		{ .kind = SL_GEN_RANDOM, .min = 1, .max = 20 },	/* user_id */
		{ .kind = SL_GEN_RANDOM, .length = 12 },	/* url */
		{ .kind = SL_GEN_EVENT_TIME, .base_ts = 1704067200000LL, .step_ms = 60,
		  .max_disorder_ms = 5000, .late_fraction = 0.002, .late_ms = 180000 },
	};
	struct sl_datagen_cfg gen = { .schema = schema, .fields = fields,
				      .number_of_rows = 10000, .nsplits = 1, .seed = 42 };
	struct sl_wm_strategy wm = { .kind = SL_WM_BOUNDED, .max_delay_ms = 5000, .ts_field = 2 };
	struct sl_window_spec win = { .kind = SL_WIN_TUMBLE, .size_ms = 60000, .late_tag = 1 };
	struct sl_agg_spec count = { .kind = SL_AGG_COUNT_STAR, .field = -1, .name = "clicks" };
	struct sl_print_sink_cfg print = { 0 }, late = { .identifier = "late" };
	int user = 0, rc;

	sl_schema_add(schema, "user_id", SL_TYPE_BIGINT);
	sl_schema_add(schema, "url", SL_TYPE_STRING);
	sl_schema_add(schema, "ts", SL_TYPE_TIMESTAMP);

	struct sl_stream *clicks = sl_job_source(job, "clicks", &sl_datagen_source_ops, &gen,
						 schema, &wm);
	struct sl_stream *counts = sl_stream_window(sl_stream_key_by(clicks, &user, 1),
						    "per-minute", &win, &count, 1);
	sl_stream_sink(counts, "print", &sl_print_sink_ops, &print);
	sl_stream_sink(sl_stream_side_output(counts, 1, schema), "late", &sl_print_sink_ops,
		       &late);

	rc = sl_job_run(job, &(struct sl_run_opts){ .nshards = 2 });
	if (rc)
		fprintf(stderr, "first_job: %s\n", sl_job_error(job)->msg);
	sl_job_destroy(job);
	sl_schema_destroy(schema);
	return rc ? 1 : 0;
}
