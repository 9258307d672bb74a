/*
 * state_int.h - what state.c (the dispatcher) shares with the backends behind it. Never
 * included from outside engine/state.
 *
 * Every backend's kstate struct begins with struct sl_kstate, whose `backend` picks the
 * implementation: state.c casts to the backend's type and calls it directly (one
 * predictable branch per call; no table of pointers on the record path).
 */
#ifndef SL_STATE_STATE_INT_H
#define SL_STATE_STATE_INT_H

#include "backend.h"
#include "snap.h"
#include "state.h"

struct sl_kstate {
	enum sl_state_backend_kind backend;
};

/* The keyed state section (format described in heap_state.c, which writes version 2 and
 * reads both; rocks_state.c writes version 1). */
#define KS_MAGIC     0x534b4c53u /* "SLKS" */
#define KS_VERSION   2u
#define KS_VERSION_1 1u
#define KIND_VALUE   1u
#define KIND_MAP     2u
#define SEC_HDR	     SL_SNAP_SEC_HDR
#define NAME_LEN_MAX 4096u

/* The keyed state section of a native checkpoint (rocks_state.c): the same layout fields
 * as KS_MAGIC's (max parallelism, descriptors), then u64 entries and the u32 [lo, hi)
 * key-group range the instance held; no entries: those are in the checkpoint's RocksDB
 * directory. */
#define KN_MAGIC   0x4e4b4c53u /* "SLKN" */
#define KN_VERSION 1u

/* A record's header in a keyed state section. */
struct rec_hdr {
	uint64_t hash;
	uint16_t kg;
	uint16_t rsv; /* 0 */
	uint32_t klen;
};

_Static_assert(sizeof(struct rec_hdr) == 16, "a record header has no padding");

/* ---- heap_state.c ---- */
struct heap_kstate;

struct heap_kstate *sl_heap_create(const struct sl_state_desc *descs, int n, uint32_t max_par,
				   int *err);
void sl_heap_destroy(struct heap_kstate *ks);
size_t sl_heap_entries(const struct heap_kstate *ks);
size_t sl_heap_bytes(const struct heap_kstate *ks);
bool sl_heap_has_ttl(const struct heap_kstate *ks);
bool sl_heap_desc_ttl(const struct heap_kstate *ks, int id);
void *sl_heap_value_get(struct heap_kstate *ks, int id, const struct sl_kkey *k, sl_ts_t now);
void *sl_heap_value_put(struct heap_kstate *ks, int id, const struct sl_kkey *k, sl_ts_t now);
void sl_heap_value_clear(struct heap_kstate *ks, int id, const struct sl_kkey *k);
void *sl_heap_map_get(struct heap_kstate *ks, int id, const struct sl_kkey *k, const void *mkey,
		      uint32_t mklen, sl_ts_t now);
void *sl_heap_map_put(struct heap_kstate *ks, int id, const struct sl_kkey *k, const void *mkey,
		      uint32_t mklen, sl_ts_t now);
void sl_heap_map_remove(struct heap_kstate *ks, int id, const struct sl_kkey *k, const void *mkey,
			uint32_t mklen);
void sl_heap_map_foreach(struct heap_kstate *ks, int id, const struct sl_kkey *k,
			 bool (*fn)(const void *mkey, uint32_t mklen, void *value, void *arg),
			 void *arg, sl_ts_t now);
void sl_heap_map_clear(struct heap_kstate *ks, int id, const struct sl_kkey *k);
int sl_heap_snapshot(const struct heap_kstate *ks, sl_ts_t now, struct sl_snap_buf *out);
int sl_heap_snapshot_begin(struct heap_kstate *ks, sl_ts_t now, struct sl_snap_buf *out);
int sl_heap_snapshot_step(struct heap_kstate *ks, size_t budget);
bool sl_heap_snapshot_pending(const struct heap_kstate *ks);
int sl_heap_restore(struct heap_kstate *ks, struct sl_snap_reader *r, uint32_t kg_lo,
		    uint32_t kg_hi);
const char *sl_heap_error(const struct heap_kstate *ks);
/* Refuses a native (RocksDB) checkpoint section: -EPROTO with the reason in sl_heap_error. */
int sl_heap_refuse_native(struct heap_kstate *ks);
void sl_heap_foreach(const struct heap_kstate *ks, bool (*fn)(const struct sl_kentry *e, void *arg),
		     void *arg);

/* ---- rocks_env.c: the process env and the operator instances' DBs ---- */
#include <rocksdb/c.h>

struct sl_state_env {
	enum sl_state_backend_kind kind;
	int nshards;
	int dbs_per_shard;
	size_t memory;	  /* the whole budget */
	size_t kcache_db; /* kstate entry caches of one db */
	char *dir;
	rocksdb_cache_t *cache; /* strict, shared by every db; memtables charged */
	rocksdb_block_based_table_options_t *bbto;
	rocksdb_compactionfilter_t *ttl_filter;
	rocksdb_options_t *opts; /* copied by each db open */
};

struct sl_rocks_db {
	struct sl_state_env *env;
	int shard;
	uint32_t op_uid; /* the operator instance it holds (its path's name) */
	char *path;
	rocksdb_t *db;
	rocksdb_writeoptions_t *wo;	/* WAL off */
	rocksdb_readoptions_t *ro;	/* point reads and map loads */
	rocksdb_readoptions_t *ro_scan; /* whole-state scans: no block cache fill */
	rocksdb_writebatch_t *wb;	/* write-backs, committed by sl_rocks_commit */
	struct rocks_kstate *kstates;	/* live kstates of this db (list through ->next) */
	int nks;
	bool written;  /* anything ever written: a load can no longer link */
	bool loaded;   /* sl_rocks_db_load ran: kstates count their entries */
	int error;     /* sticky: first failed write or read, -EIO */
	char msg[256]; /* its RocksDB message */
	/* the last checkpoint's files, sorted by name; their SSTs' checksums are the cache the
	 * next checkpoint takes unchanged SSTs' CRC32C from (computed once per file) */
	struct sl_state_ckpt_file *ck;
	size_t nck;
	size_t ck_at;	  /* sl_rocks_db_checkpoint_crc: the file it is on */
	uint64_t ck_off;  /* ... and the bytes of it checksummed */
	char *ck_dir;	  /* the last checkpoint's directory */
	uint8_t *crc_buf; /* a 1 MiB read slice, allocated on first use */
};

/* Records a RocksDB failure (frees msg; first one wins) and returns -EIO. */
int sl_rocks_fail(struct sl_rocks_db *db, const char *what, char *msg);
/* Bytes queued in a write batch. */
size_t sl_rocks_wb_bytes(rocksdb_writebatch_t *wb);
/* Writes db->wb (if not empty) and clears it. 0 or the sticky error. */
int sl_rocks_commit(struct sl_rocks_db *db);

/* ---- rocks_state.c ---- */
struct rocks_kstate;

struct rocks_kstate *sl_rocks_kstate_create(struct sl_rocks_db *db, uint32_t op_uid,
					    const struct sl_state_desc *descs, int n,
					    uint32_t max_par, int *err);
void sl_rocks_kstate_destroy(struct rocks_kstate *ks);
size_t sl_rocks_kstate_entries(const struct rocks_kstate *ks);
size_t sl_rocks_kstate_bytes(const struct rocks_kstate *ks);
bool sl_rocks_kstate_has_ttl(const struct rocks_kstate *ks);
bool sl_rocks_kstate_desc_ttl(const struct rocks_kstate *ks, int id);
void *sl_rocks_kstate_value_get(struct rocks_kstate *ks, int id, const struct sl_kkey *k,
				sl_ts_t now);
void *sl_rocks_kstate_value_put(struct rocks_kstate *ks, int id, const struct sl_kkey *k,
				sl_ts_t now);
void sl_rocks_kstate_value_clear(struct rocks_kstate *ks, int id, const struct sl_kkey *k);
void *sl_rocks_kstate_map_get(struct rocks_kstate *ks, int id, const struct sl_kkey *k,
			      const void *mkey, uint32_t mklen, sl_ts_t now);
void *sl_rocks_kstate_map_put(struct rocks_kstate *ks, int id, const struct sl_kkey *k,
			      const void *mkey, uint32_t mklen, sl_ts_t now);
void sl_rocks_kstate_map_remove(struct rocks_kstate *ks, int id, const struct sl_kkey *k,
				const void *mkey, uint32_t mklen);
void sl_rocks_kstate_map_foreach(struct rocks_kstate *ks, int id, const struct sl_kkey *k,
				 bool (*fn)(const void *mkey, uint32_t mklen, void *value,
					    void *arg),
				 void *arg, sl_ts_t now);
void sl_rocks_kstate_map_clear(struct rocks_kstate *ks, int id, const struct sl_kkey *k);
int sl_rocks_kstate_snapshot(const struct rocks_kstate *ks, sl_ts_t now, struct sl_snap_buf *out);
int sl_rocks_kstate_restore(struct rocks_kstate *ks, struct sl_snap_reader *r, uint32_t kg_lo,
			    uint32_t kg_hi);
int sl_rocks_kstate_snapshot_native(const struct rocks_kstate *ks, uint32_t kg_lo, uint32_t kg_hi,
				    struct sl_snap_buf *out);
int sl_rocks_kstate_restore_native(struct rocks_kstate *ks, struct sl_snap_reader *r,
				   uint32_t kg_lo, uint32_t kg_hi);
const char *sl_rocks_kstate_error(const struct rocks_kstate *ks);
void sl_rocks_kstate_foreach(const struct rocks_kstate *ks,
			     bool (*fn)(const struct sl_kentry *e, void *arg), void *arg);
/* Writes every dirty cached entry of ks into db->wb (then committed). 0 or -errno. */
int sl_rocks_kstate_writeback(struct rocks_kstate *ks);
/* Shares db's entry cache budget out between its kstates again. */
void sl_rocks_kstate_rebudget(struct sl_rocks_db *db);
/* Every kstate of db written back (the barrier), and their cache bytes together. */
int sl_rocks_kstate_writeback_all(struct sl_rocks_db *db);
size_t sl_rocks_kstate_cache_bytes_all(const struct sl_rocks_db *db);
/* The prefix byte of a RocksDB key marking a descriptor with TTL: its value then begins with
 * the expiry (sl_ts_t, native byte order), which the compaction filter reads. */
#define RK_TTL_BIT 0x80u
#define RK_PREFIX  7u  /* [kg u16 BE][op_uid u32 BE][desc id | RK_TTL_BIT] */
#define RK_HDR	   17u /* prefix, [key hash u64 BE][key length u16 BE], then key, map key */

#endif
