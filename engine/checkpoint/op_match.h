/*
 * op_match.h - which operator of a job takes which state of a checkpoint: operators are
 * matched by kind and uid (sl_stream_uid), and those with keyed state by their columns too,
 * never by their place in the plan (DESIGN §7, "A job's identity"). Pure functions over job
 * id strings and manifests.
 */
#ifndef SL_CHECKPOINT_OP_MATCH_H
#define SL_CHECKPOINT_OP_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sl_ckpt_manifest;

enum sl_ckpt_op_fate {
	SL_CKPT_OP_SAME,    /* the new job has it: its state is restored there */
	SL_CKPT_OP_CHANGED, /* same kind and uid, other columns: its state does not fit */
	SL_CKPT_OP_GONE,    /* not in the new job: its state would be dropped */
	SL_CKPT_OP_UNNAMED, /* the checkpoint's job id has no operator of that index */
};

/* True when the two job ids name the same job (the part before '|'). */
bool sl_ckpt_job_names_equal(const char *had, const char *want);

/*
 * Finds the operator `index` of job id `had` in job id `want`. *to gets its index there
 * (-1 if none); desc[0..cap) says which operator it is ("window 'out/tumble window'").
 */
enum sl_ckpt_op_fate sl_ckpt_op_find(const char *had, uint32_t index, const char *want, int *to,
				     char *desc, size_t cap);

/*
 * Maps manifest m (of job id m->job_id) onto the job whose id is `want`: every state file,
 * split position and sink commit gets the index of its operator there. A job of another name,
 * or state whose operator changed or is gone, refuses it: -ESTALE with the reason in
 * why[0..cap), m untouched. With allow_drop (Flink's --allowNonRestoredState) the state of
 * operators that are gone is removed from m instead, and why lists them. Returns how many
 * operators' state was dropped, -ESTALE, or -ENOMEM. Ids of another form than
 * "<name>|<op>;..." must be equal, and nothing is mapped.
 */
int sl_ckpt_manifest_map_ops(struct sl_ckpt_manifest *m, const char *want, bool allow_drop,
			     char *why, size_t cap);

#endif
