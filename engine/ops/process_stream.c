/*
 * process_stream.c - sl_stream_process (job.h): a keyed process function joins a job graph
 * as a keyed operator node running sl_process_ops. Its own file so that code using the
 * operator alone (tests, other operators) does not pull in the graph and the runtime.
 */
#include <errno.h>
#include <stdlib.h>

#include "graph.h"
#include "process.h"

struct sl_stream *sl_stream_process(struct sl_stream *keyed, const char *name,
				    const struct sl_process_fn *fn, const struct sl_schema *out)
{
	struct sl_process_fn *copy;

	if (!sl_stream_check_keyed(keyed, "process"))
		return NULL;
	if (!fn || !fn->process || !out) {
		sl_job_set_error(keyed->job, -EINVAL, "process '%s': no function or schema", name);
		return NULL;
	}
	copy = malloc(sizeof(*copy));
	if (copy)
		*copy = *fn;
	else
		sl_job_set_error(keyed->job, -ENOMEM, "process '%s': out of memory", name);
	return copy ? sl_stream_keyed_op(keyed, name, &sl_process_ops, copy, free, out) : NULL;
}
