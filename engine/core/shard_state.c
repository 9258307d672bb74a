/*
 * shard_state.c - what a shard tells its operators about state and checkpoints.
 *
 * Apart from shard.c on purpose: operator unit tests run instances without a runtime and
 * stand in for shard.c's services with weak symbols; linking these must not pull shard.c
 * (and its strong definitions) in. Both accept a NULL shard, as those tests pass.
 */
#include "runtime.h"

struct sl_state_db *sl_shard_state_db(const struct sl_shard *sh, int op_id)
{
	return sh && sh->state_dbs && op_id >= 0 && op_id < sh->rt->job->nnodes
		       ? sh->state_dbs[op_id]
		       : NULL;
}

bool sl_shard_final_checkpoint(const struct sl_shard *sh)
{
	return sh && atomic_load_explicit(&sh->rt->final_ckpt, memory_order_relaxed);
}
