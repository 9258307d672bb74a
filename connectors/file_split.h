/*
 * file_split.h - planning a file source's byte-range splits (file_split.c) with the file
 * source's own record reader (file_source.c), so a range begins exactly where a sequential
 * read would find a record. Internal to the connectors layer.
 */
#ifndef SL_FILE_SPLIT_H
#define SL_FILE_SPLIT_H

#include <stdint.h>

#include <sluice/connectors.h>

/* Wanted boundaries and what a scan found: starts[i] becomes the first record start at or
 * after targets[i] (targets ascending), UINT64_MAX when the file has none. */
struct sl_file_scan {
	const uint64_t *targets;
	uint64_t *starts;
	int n, next;
};

/* A record starts at `offset`: fills the targets it reaches. Offsets come ascending. */
static inline void sl_file_scan_note(struct sl_file_scan *s, uint64_t offset)
{
	while (s->next < s->n && offset >= s->targets[s->next])
		s->starts[s->next++] = offset;
}

/* Reads file cfg->paths[path] from its start with the file source's reader, cutting records
 * without decoding them, and notes every record start in scan. 0 or -errno with err set. */
int sl_file_scan_starts(const struct sl_file_source_cfg *cfg, int path, struct sl_file_scan *scan,
			struct sl_error *err);

#endif
