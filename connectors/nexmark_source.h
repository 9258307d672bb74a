/*
 * nexmark_source.h - the Nexmark generator (nexmark_gen.h) as a source: event numbers
 * 1..events dealt over a fixed number of splits (event n belongs to split (n - 1) mod
 * nsplits), each event one row of the table nexmark/nexmark's Flink DDL declares:
 * event_type, then the leaves of the ROWs person, auction, bid (only the event's own ROW
 * set, the other two NULL). Because an event is a pure function of (cfg, seed, n), the rows
 * do not depend on the split count, the shard count, or how polls were batched.
 *
 * Ownership: the caller owns the cfg and its column map; both must outlive the job.
 * Threads: one split, one shard (the source contract of sluice/job.h).
 */
#ifndef SL_NEXMARK_SOURCE_H
#define SL_NEXMARK_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/connectors.h>

#include "nexmark_gen.h"

/* The columns a Nexmark table may declare, by their flattened names ("person.id"). */
enum sl_nexmark_col {
	SL_NXC_EVENT_TYPE,
	SL_NXC_P_ID,
	SL_NXC_P_NAME,
	SL_NXC_P_EMAIL,
	SL_NXC_P_CARD,
	SL_NXC_P_CITY,
	SL_NXC_P_STATE,
	SL_NXC_P_TIME,
	SL_NXC_P_EXTRA,
	SL_NXC_A_ID,
	SL_NXC_A_ITEM,
	SL_NXC_A_DESC,
	SL_NXC_A_INITIAL,
	SL_NXC_A_RESERVE,
	SL_NXC_A_TIME,
	SL_NXC_A_EXPIRES,
	SL_NXC_A_SELLER,
	SL_NXC_A_CATEGORY,
	SL_NXC_A_EXTRA,
	SL_NXC_B_AUCTION,
	SL_NXC_B_BIDDER,
	SL_NXC_B_PRICE,
	SL_NXC_B_CHANNEL,
	SL_NXC_B_URL,
	SL_NXC_B_TIME,
	SL_NXC_B_EXTRA,
	SL_NXC_COUNT
};

/* The flattened name of column c ("event_type", "person.emailAddress", ...). */
const char *sl_nexmark_col_name(enum sl_nexmark_col c);

/* Finds the column named `name` (exact, case-sensitive as in Flink); -1 if none. */
int sl_nexmark_col_find(const char *name);

/* Whether a schema field of type t can hold column c (INT for event_type, BIGINT for the
 * numbers, STRING for the text, TIMESTAMP[_LTZ] for the times). */
bool sl_nexmark_col_fits(enum sl_nexmark_col c, enum sl_type t);

struct sl_nexmark_source_cfg {
	struct sl_nexmark_cfg gen;
	uint64_t events; /* events.num; UINT64_MAX: unbounded */
	int nsplits;	 /* >= 1, fixed by the table (not by the shard count) */
	bool paced;	 /* !max-emit-speed: emit at first-event.rate of wall clock */
	int nfields;	 /* schema fields */
	const enum sl_nexmark_col *cols; /* [nfields]: what each schema field holds */
};

extern const struct sl_source_ops sl_nexmark_source_ops;

#endif
