/*
 * upgrade_check.c - `sluice upgrade-check NEW.sql (--from-savepoint DIR | --checkpoint-dir
 * DIR) [--allow-non-restored-state]`: before anything runs, says operator by operator what
 * a restore of the newest complete checkpoint in DIR into the jobs of NEW.sql would do with
 * each operator's state: restored, dropped, or refused and why, and which new operators
 * start empty (DESIGN §7, "A job's identity").
 *
 * The rule it reports is the restore's own (op_match.h): each operator's state goes to the
 * operator of the new job with its kind and uid; state whose operator changed its columns,
 * or is gone, refuses the restore, unless --allow-non-restored-state (or SET
 * 'execution.savepoint.ignore-unclaimed-state') drops the state of those that are gone.
 * Exit 0 when every job of the file would restore, 1 when one would be refused, 2 on bad
 * arguments.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "directory.h"
#include "graph.h"
#include "manifest.h"
#include "op_match.h"
#include "planner.h"
#include "store.h"
#include "upgrade_check.h"

/* How many of the manifest's state files, split positions and sink commits are operator
 * op's (files and positions both count as its state). */
static void state_of(const struct sl_ckpt_manifest *m, uint32_t op, int *files, int *sinks)
{
	*files = *sinks = 0;
	for (uint32_t i = 0; i < m->nfiles; i++)
		*files += m->files[i].op_id == op;
	for (uint32_t i = 0; i < m->nsources; i++)
		*files += m->sources[i].op_id == op;
	for (uint32_t i = 0; i < m->nsinks; i++)
		*sinks += m->sinks[i].op_id == op;
}

/* The largest operator index m's state names, plus one. */
static uint32_t state_ops_end(const struct sl_ckpt_manifest *m)
{
	uint32_t end = 0;

	for (uint32_t i = 0; i < m->nfiles; i++)
		end = m->files[i].op_id >= end ? m->files[i].op_id + 1 : end;
	for (uint32_t i = 0; i < m->nsources; i++)
		end = m->sources[i].op_id >= end ? m->sources[i].op_id + 1 : end;
	for (uint32_t i = 0; i < m->nsinks; i++)
		end = m->sinks[i].op_id >= end ? m->sinks[i].op_id + 1 : end;
	return end;
}

static int check_job(struct sl_job *job, const char *title, const struct sl_ckpt_manifest *m,
		     const char *dir, bool allow_drop)
{
	char *id = malloc(8192), why[1024] = "", first[400] = "";
	bool *taken = calloc((size_t)job->nnodes + 1, sizeof(*taken));
	bool refused = false;
	int nops = 0;

	if (!id || !taken) {
		free(id);
		free(taken);
		fprintf(stderr, "sluice: out of memory\n");
		return 1;
	}
	sl_ckpt_job_identity(job, id, 8192);
	printf("job %s, against checkpoint %llu of %s:\n", title, (unsigned long long)m->ckpt_id,
	       dir);
	if (!sl_ckpt_job_names_equal(m->job_id, id)) {
		sl_ckpt_job_id_diff(m->job_id, id, why, sizeof why);
		refused = true;
	}
	/* every operator with state in the checkpoint, by the rule of the restore (op_match.h) */
	for (uint32_t op = 0, end = state_ops_end(m); op < end && !*why; op++) {
		int files = 0, sinks = 0, to = -1;
		char desc[300];
		enum sl_ckpt_op_fate f;

		state_of(m, op, &files, &sinks);
		if (!files && !sinks)
			continue;
		nops++;
		f = sl_ckpt_op_find(m->job_id, op, id, &to, desc, sizeof desc);
		if (to >= 0 && to < job->nnodes)
			taken[to] = true;
		switch (f) {
		case SL_CKPT_OP_SAME:
			printf("  %s: restored%s\n", desc,
			       files ? " (state)" : " (pending sink commit)");
			break;
		case SL_CKPT_OP_CHANGED:
			printf("  %s: refused: its input or output columns changed, so its state "
			       "does not fit (another UID starts it empty)\n",
			       desc);
			if (!refused)
				snprintf(first, sizeof first, "%s: its columns changed", desc);
			refused = true;
			break;
		case SL_CKPT_OP_GONE:
			if (allow_drop) {
				printf("  %s: dropped: not in the new job "
				       "(--allow-non-restored-state)\n",
				       desc);
				break;
			}
			printf("  %s: refused: not in the new job (--allow-non-restored-state "
			       "would drop its state)\n",
			       desc);
			if (!refused)
				snprintf(first, sizeof first, "%s is not in the new job", desc);
			refused = true;
			break;
		case SL_CKPT_OP_UNNAMED:
			printf("  %s: refused: the checkpoint's job id does not name it "
			       "(damaged?)\n",
			       desc);
			if (!refused)
				snprintf(first, sizeof first, "%s is not named by the checkpoint",
					 desc);
			refused = true;
			break;
		}
	}
	/* then the new job's stateful operators that take nothing */
	for (int i = 0; i < job->nnodes && !*why; i++) {
		const struct sl_stream *s = job->node[i];

		if (taken[i] || s->kind != SL_NODE_KEYED)
			continue;
		nops++;
		printf("  %s '%s': new: starts empty\n",
		       s->ops && s->ops->name ? s->ops->name : "keyed", s->uid ? s->uid : s->name);
	}
	if (!nops && !*why)
		printf("  (no operator with state)\n");
	if (!refused)
		printf("  verdict: restored\n");
	else if (*why)
		printf("  verdict: refused: %s\n", why);
	else
		printf("  verdict: refused: %s\n", first);
	free(taken);
	free(id);
	return refused ? 1 : 0;
}

int sl_cli_upgrade_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "from-savepoint", required_argument, NULL, 'f' },
		{ "checkpoint-dir", required_argument, NULL, 'k' },
		{ "shards", required_argument, NULL, 's' },
		{ "allow-non-restored-state", no_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	struct sl_sql_opts so = { .offline = true };
	const char *dir = NULL;
	struct sl_ckpt_manifest m = { 0 };
	struct sl_sql_script *script;
	struct sl_ckpt_store *st;
	char err[1024];
	int c, rc = 0, e = 0;
	bool allow_drop = false;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'f' || c == 'k')
			dir = optarg;
		else if (c == 's')
			so.nshards = atoi(optarg);
		else if (c == 'N')
			allow_drop = true;
		else
			return 2;
	}
	if (optind != argc - 1 || !dir) {
		fprintf(stderr, "sluice: upgrade-check takes one job file and --from-savepoint DIR "
				"or --checkpoint-dir DIR\n");
		return 2;
	}
	script = sl_sql_load(argv[optind], NULL, 0, &so, err, sizeof err);
	if (!script) {
		fprintf(stderr, "sluice: %s\n", err);
		return 1;
	}
	{ /* SET 'execution.savepoint.ignore-unclaimed-state' says it too */
		struct sl_run_opts ro = { 0 };

		sl_sql_run_opts(script, &ro);
		allow_drop |= ro.allow_non_restored_state;
	}
	st = sl_ckpt_store_open(dir, &e);
	if (!st || sl_ckpt_store_find_latest(st, NULL, &m)) {
		fprintf(stderr, "sluice: %s: no usable checkpoint to check against%s\n", dir,
			st ? " (see above)" : "");
		sl_ckpt_store_close(st);
		sl_sql_destroy(script);
		return 1;
	}
	for (int i = 0; i < sl_sql_njobs(script); i++)
		if (!sl_sql_job_explain_only(script, i))
			rc |= check_job(sl_sql_job(script, i), sl_sql_job_title(script, i), &m, dir,
					allow_drop);
	sl_ckpt_manifest_fini(&m);
	sl_ckpt_store_close(st);
	sl_sql_destroy(script);
	return rc;
}
