/*
 * rocks_shim.cc - strict-capacity block cache and write buffer manager for the C side
 * (rocks_shim.h).
 *
 * The C API hands out opaque rocksdb_cache_t / rocksdb_options_t; their definitions live in
 * RocksDB's c.cc as one-member wrappers ({ std::shared_ptr<Cache> rep; } and
 * { Options rep; }). We declare the same layouts here so the objects made or changed here
 * are the C API's own (rocksdb_cache_destroy() deletes what we new). This ties the shim to
 * the library's c.cc, which has kept these two layouts unchanged since RocksDB 5; the
 * version is pinned by the build (librocksdb-dev 7.8).
 */
#include <memory>
#include <cerrno>
#include <new>

#include <rocksdb/cache.h>
#include <rocksdb/options.h>
#include <rocksdb/write_buffer_manager.h>

#include "rocks_shim.h"

struct rocksdb_cache_t {
	std::shared_ptr<rocksdb::Cache> rep;
};

struct rocksdb_options_t {
	rocksdb::Options rep;
};

extern "C" rocksdb_cache_t *sl_rocks_cache_create_strict(size_t capacity, double high_pri)
{
	rocksdb::LRUCacheOptions o;

	o.capacity = capacity;
	o.num_shard_bits = -1; /* RocksDB's choice: about one shard per 512 KiB, at most 64 */
	o.strict_capacity_limit = true;
	o.high_pri_pool_ratio = high_pri;
	try {
		auto c = rocksdb::NewLRUCache(o);

		if (!c)
			return nullptr;
		return new rocksdb_cache_t{ c };
	} catch (const std::bad_alloc &) {
		return nullptr;
	}
}

extern "C" int sl_rocks_options_set_wbm(rocksdb_options_t *opts, rocksdb_cache_t *cache,
					size_t bytes)
{
	try {
		/* allow_stall = false: writers never block on the shard thread; memtables over
		 * the limit are flushed (RocksDB switches the largest one) instead */
		opts->rep.write_buffer_manager =
			std::make_shared<rocksdb::WriteBufferManager>(bytes, cache->rep, false);
	} catch (const std::bad_alloc &) {
		return -ENOMEM;
	}
	return 0;
}

extern "C" size_t sl_rocks_cache_usage(rocksdb_cache_t *cache)
{
	return cache->rep->GetUsage();
}
