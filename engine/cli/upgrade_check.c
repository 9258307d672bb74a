/*
 * upgrade_check.c - `sluice upgrade-check NEW.sql (--from-savepoint DIR | --checkpoint-dir
 * DIR)`: before anything runs, says operator by operator what a restore of the newest
 * complete checkpoint in DIR into the jobs of NEW.sql would do with each operator's state:
 * restored, or refused and why (DESIGN §7, "A job's identity").
 *
 * The rule it reports is the restore's own: a checkpoint is restored only into a job of
 * the same identity (its name and, operator by operator, place, kind and name), whole;
 * otherwise the restore is refused, naming the first difference (sl_ckpt_job_id_diff). So
 * an operator whose state would be dropped is reported as refusing the restore, which is
 * what `sluice run` would do. Exit 0 when every job of the file would restore, 1 when one
 * would be refused, 2 on bad arguments.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "directory.h"
#include "graph.h"
#include "manifest.h"
#include "planner.h"
#include "store.h"
#include "upgrade_check.h"

/* "<index>:<kind>:<name>;" of op `i` in id (after the '|'); NULL if there is none. */
static const char *id_op(const char *id, int i, size_t *len)
{
	const char *p = strchr(id, '|');

	for (int k = 0; p && k <= i; k++) {
		const char *e = strchr(p + 1, ';');

		if (!e)
			return NULL;
		if (k == i) {
			*len = (size_t)(e - p - 1);
			return p + 1;
		}
		p = e;
	}
	return NULL;
}

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

static int check_job(struct sl_job *job, const char *title, const struct sl_ckpt_manifest *m,
		     const char *dir)
{
	char *id = malloc(8192), why[1024];
	bool same;
	int nops = 0;

	if (!id) {
		fprintf(stderr, "sluice: out of memory\n");
		return 1;
	}
	sl_ckpt_job_identity(job, id, 8192);
	same = !strcmp(id, m->job_id);
	if (!same)
		sl_ckpt_job_id_diff(m->job_id, id, why, sizeof why);
	printf("job %s, against checkpoint %llu of %s:\n", title, (unsigned long long)m->ckpt_id,
	       dir);
	/* every operator with state in the checkpoint, then the new job's others */
	for (int i = 0;; i++) {
		size_t hl = 0, wl = 0;
		const char *h = id_op(m->job_id, i, &hl), *w = id_op(id, i, &wl);
		int files = 0, sinks = 0;

		if (!h && !w)
			break;
		if (h)
			state_of(m, (uint32_t)i, &files, &sinks);
		if (!files && !sinks &&
		    (!w || i >= job->nnodes || !sl_node_keeps_keyed_state(job->node[i])))
			continue; /* stateless then and now */
		nops++;
		if (h && w && hl == wl && !strncmp(h, w, hl))
			printf("  %.*s: %s%s\n", (int)wl, w,
			       same ? "restored" : "unchanged, but the job is refused",
			       files   ? " (state)"
			       : sinks ? " (pending sink commit)"
				       : " (no state in the checkpoint: starts empty)");
		else if (h && w)
			printf("  %.*s: refused: the checkpoint has %.*s here\n", (int)wl, w,
			       (int)hl, h);
		else if (h)
			printf("  %.*s: refused: not in the new job (its state would be dropped)\n",
			       (int)hl, h);
		else
			printf("  %.*s: refused: new, the checkpoint has no state for it\n",
			       (int)wl, w);
	}
	if (!nops)
		printf("  (no operator with state)\n");
	if (same)
		printf("  verdict: restored\n");
	else
		printf("  verdict: refused: %s\n", why);
	free(id);
	return same ? 0 : 1;
}

int sl_cli_upgrade_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "from-savepoint", required_argument, NULL, 'f' },
		{ "checkpoint-dir", required_argument, NULL, 'k' },
		{ "shards", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct sl_sql_opts so = { .offline = true };
	const char *dir = NULL;
	struct sl_ckpt_manifest m = { 0 };
	struct sl_sql_script *script;
	struct sl_ckpt_store *st;
	char err[1024];
	int c, rc = 0, e = 0;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'f' || c == 'k')
			dir = optarg;
		else if (c == 's')
			so.nshards = atoi(optarg);
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
			rc |= check_job(sl_sql_job(script, i), sl_sql_job_title(script, i), &m,
					dir);
	sl_ckpt_manifest_fini(&m);
	sl_ckpt_store_close(st);
	sl_sql_destroy(script);
	return rc;
}
