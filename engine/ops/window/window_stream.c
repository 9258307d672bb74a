/*
 * window_stream.c - sl_stream_window (job.h): a window aggregation joins a job graph as a
 * keyed operator node running sl_window_ops with its plan-time config. Its own file so that
 * code using the operator alone does not pull in the graph and the runtime.
 */
#include <errno.h>

#include "graph.h"
#include "window_int.h"

static void window_cfg_free(void *cfg)
{
	sl_window_cfg_destroy(cfg);
}

struct sl_stream *sl_stream_window(struct sl_stream *keyed, const char *name,
				   const struct sl_window_spec *win, const struct sl_agg_spec *aggs,
				   int naggs)
{
	struct sl_schema *out = NULL;
	struct sl_window_cfg *cfg;
	struct sl_stream *n;
	struct sl_error err = { 0 };

	if (!sl_stream_check_keyed(keyed, "window"))
		return NULL;
	cfg = sl_window_cfg_create(win, aggs, naggs, keyed->schema, keyed->fields, keyed->nfields,
				   &out, &err);
	if (!cfg) {
		sl_job_set_error(keyed->job, err.code ? err.code : -EINVAL, "window '%s': %s", name,
				 err.msg);
		return NULL;
	}
	n = sl_stream_keyed_op(keyed, name, &sl_window_ops, cfg, window_cfg_free, out);
	sl_schema_destroy(out);
	return n;
}
