/*
 * shard_state.c - what a shard tells its operators about state and checkpoints.
 *
 * Apart from shard.c on purpose: operator unit tests run instances without a runtime and
 * stand in for shard.c's services with weak symbols; linking these must not pull shard.c
 * (and its strong definitions) in. Both accept a NULL shard, as those tests pass.
 */
#include <errno.h>

#include "store.h"
#include "runtime.h"

struct sl_rocks_db *sl_shard_state_db(const struct sl_shard *sh, int op_id)
{
	return sh && sh->state_dbs && op_id >= 0 && op_id < sh->rt->job->nnodes
		       ? sh->state_dbs[op_id]
		       : NULL;
}

bool sl_shard_final_checkpoint(const struct sl_shard *sh)
{
	return sh && atomic_load_explicit(&sh->rt->final_ckpt, memory_order_relaxed);
}

int sl_shard_native_ckpt_dir(const struct sl_shard *sh, uint64_t ckpt, int op_id, char *buf,
			     size_t cap)
{
	struct sl_runtime *rt = sh ? sh->rt : NULL;
	char rel[64];

	/* the coordinator stored ckpt_savepoint before its release of ckpt_req, which this
	 * shard acquired before starting checkpoint `ckpt` */
	if (!rt || !rt->ckpt_store ||
	    atomic_load_explicit(&rt->ckpt_savepoint, memory_order_relaxed) == ckpt)
		return 0;
	if (sl_ckpt_state_dir_name((uint32_t)op_id, (uint32_t)sh->index, rt->ckpt_run, rel,
				   sizeof rel) ||
	    sl_ckpt_store_path(rt->ckpt_store, ckpt, rel, buf, cap))
		return -ENAMETOOLONG;
	return 1;
}
