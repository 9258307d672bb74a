/*
 * manifest.h - what checkpoint n consists of, and its self-checking byte encoding.
 *
 * A manifest names the job (an identity string the caller derives, e.g. a hash of the plan,
 * so a checkpoint of another job is refused), the format version, the checkpoint id, the shard
 * count and max parallelism (key groups) it was taken with, each source split's position, each
 * state file with its size and CRC32C, and each sink instance's pending commit. Positions and
 * commit metas are opaque bytes owned by the source or sink that wrote them.
 *
 * Encoding (integers little-endian):
 *
 *   "SLCKMAN\0" | u32 version | u32 0 | u64 body length | body | u32 CRC32C(all before it)
 *
 * so a truncated, extended or altered manifest is detected before a field is trusted.
 *
 * Ownership: a manifest owns copies of everything added to it; sl_ckpt_manifest_fini frees
 * them. Not thread-safe: the coordinator fills it from the shards' reports.
 */
#ifndef SL_CHECKPOINT_MANIFEST_H
#define SL_CHECKPOINT_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sl_snap_buf;

#define SL_CKPT_FORMAT_VERSION 1u

struct sl_ckpt_source_pos {
	uint32_t op_id; /* the source operator */
	uint32_t split; /* split index within it (partition, file, generator stream) */
	uint32_t len;
	uint8_t *bytes; /* the position, as the source encoded it */
};

struct sl_ckpt_state_file {
	uint32_t op_id;
	uint32_t shard;
	uint64_t size;
	uint32_t crc32c;
	char *path; /* relative to the checkpoint's directory; no "..", no leading / */
};

struct sl_ckpt_sink_meta {
	uint32_t op_id;	   /* the sink operator */
	uint32_t instance; /* its instance (shard) */
	uint32_t len;
	uint8_t *bytes; /* what commit must do, from the sink's precommit */
};

struct sl_ckpt_manifest {
	uint32_t version; /* SL_CKPT_FORMAT_VERSION when written */
	uint64_t ckpt_id;
	uint32_t nshards;
	uint32_t max_parallelism; /* key groups */
	char *job_id;
	uint32_t nsources, cap_sources;
	struct sl_ckpt_source_pos *sources;
	uint32_t nfiles, cap_files;
	struct sl_ckpt_state_file *files;
	uint32_t nsinks, cap_sinks;
	struct sl_ckpt_sink_meta *sinks;
};

/* An empty manifest for checkpoint `ckpt_id` of job `job_id` (copied). 0 or -ENOMEM. */
int sl_ckpt_manifest_init(struct sl_ckpt_manifest *m, const char *job_id, uint64_t ckpt_id,
			  uint32_t nshards, uint32_t max_parallelism);
/* Frees everything the manifest owns; the struct may be init'ed again. Accepts zeroed. */
void sl_ckpt_manifest_fini(struct sl_ckpt_manifest *m);

/* Adders copy their bytes. 0, -ENOMEM, or -EINVAL (a path escaping the directory). */
int sl_ckpt_manifest_add_source(struct sl_ckpt_manifest *m, uint32_t op_id, uint32_t split,
				const void *pos, uint32_t len);
int sl_ckpt_manifest_add_file(struct sl_ckpt_manifest *m, uint32_t op_id, uint32_t shard,
			      const char *path, uint64_t size, uint32_t crc32c);
int sl_ckpt_manifest_add_sink(struct sl_ckpt_manifest *m, uint32_t op_id, uint32_t instance,
			      const void *meta, uint32_t len);

/* Appends the encoding to `out`. 0 or -ENOMEM. */
int sl_ckpt_manifest_encode(const struct sl_ckpt_manifest *m, struct sl_snap_buf *out);

/*
 * Decodes p[0..len) into `m` (which must not hold anything: it is init'ed here). Returns 0,
 * or -EINVAL with a one-line cause in why[0..cap) ("truncated: 120 of 388 bytes", "checksum
 * mismatch", "format version 7 is newer than this build's 1", ...); on error m is empty.
 */
int sl_ckpt_manifest_decode(struct sl_ckpt_manifest *m, const void *p, size_t len, char *why,
			    size_t cap);

/*
 * Job ids: "<job name>|<op>;<op>;..." with each op "<index>:<kind>:<uid>[=<columns>]", the
 * runtime's sl_ckpt_job_identity (coordination/directory.c; op_match.h matches them).
 * Writes into why[0..cap) one line saying how the checkpoint's id `had` differs from this
 * job's `want`: the job names, or the first operator that differs (changed, added or gone).
 * Ids of another form: both quoted.
 */
void sl_ckpt_job_id_diff(const char *had, const char *want, char *why, size_t cap);

/* True if `path` is a safe relative path: non-empty, no leading '/', no ".." component. */
bool sl_ckpt_path_ok(const char *path);

#endif
