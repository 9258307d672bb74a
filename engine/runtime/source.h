/*
 * source.h - the context a source split is polled with. The runtime fills it in for each
 * split; tests fill it in with their own callbacks to drive a connector without a job.
 */
#ifndef SL_RUNTIME_SOURCE_H
#define SL_RUNTIME_SOURCE_H

#include <sluice/job.h>

struct sl_src_ctx {
	/* Takes one decoded row of the split being polled. Returns 0 or -errno. */
	int (*emit)(struct sl_src_ctx *c, const struct sl_row *row);
	/* Takes one undecodable record. */
	void (*dead_letter)(struct sl_src_ctx *c, const char *where, const char *why,
			    const char *raw, size_t rawlen);
	void *scratch;	     /* SL_ROW_SCRATCH bytes for building a row */
	void *owner;	     /* the runtime's (or test's) own state */
	int split;	     /* the split being polled */
	uint64_t *overflows; /* the source operator's DECIMAL overflow count; NULL: none */
};

#endif
