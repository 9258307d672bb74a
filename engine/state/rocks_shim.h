/*
 * rocks_shim.h - the two things rocks_env.c needs that RocksDB 7.8's C API lacks: an LRU
 * cache with a strict capacity, and a write buffer manager charging memtables to it.
 * Implemented in C++ (rocks_shim.cc); callable from C.
 */
#ifndef SL_STATE_ROCKS_SHIM_H
#define SL_STATE_ROCKS_SHIM_H

#include <stddef.h>

#include <rocksdb/c.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Returns an LRU cache of `capacity` bytes whose inserts fail rather than exceed it, with
 * `high_pri` of it reserved for high-priority blocks (index and filter blocks), or NULL on
 * ENOMEM. Free with rocksdb_cache_destroy(). */
rocksdb_cache_t *sl_rocks_cache_create_strict(size_t capacity, double high_pri);
/* Gives `opts` (and every DB opened with a copy of them) one write buffer manager: all
 * memtables together flush at `bytes`, and their memory is reserved in `cache`, so it
 * counts against the cache's capacity. Returns 0 or -ENOMEM. */
int sl_rocks_options_set_wbm(rocksdb_options_t *opts, rocksdb_cache_t *cache, size_t bytes);
/* Bytes the cache holds now (blocks and memtable reservations) and its capacity. */
size_t sl_rocks_cache_usage(rocksdb_cache_t *cache);

#ifdef __cplusplus
}
#endif

#endif
