/*
 * graph.c - the public job-builder API: every call adds one node to the logical graph.
 *
 * Construction errors are sticky: the first one is kept in job->err, the call returns NULL
 * (or -errno) and every later call given that NULL returns NULL too, so a builder sequence
 * can be written without checking each step and sl_job_run() reports the first cause.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "runtime.h"

void sl_job_set_error(struct sl_job *job, int code, const char *fmt, ...)
{
	va_list ap;

	if (job->err.code)
		return; /* keep the first cause */
	job->err.code = code;
	va_start(ap, fmt);
	vsnprintf(job->err.msg, sizeof job->err.msg, fmt, ap);
	va_end(ap);
}

struct sl_job *sl_job_create(const char *name)
{
	struct sl_job *job = calloc(1, sizeof(*job));

	if (!job)
		return NULL;
	job->name = strdup(name ? name : "job");
	if (!job->name) {
		free(job);
		return NULL;
	}
	return job;
}

void sl_job_destroy(struct sl_job *job)
{
	if (!job)
		return;
	sl_runtime_destroy(job->rt);
	for (int i = 0; i < job->nnodes; i++) {
		struct sl_stream *n = job->node[i];

		if (n->cfg_free)
			n->cfg_free(n->op_cfg);
		sl_schema_destroy(n->schema);
		free(n->name);
		free(n->uid);
		free(n);
	}
	free(job->node);
	for (int s = 0; job->stage && s < job->nstages; s++)
		free(job->stage[s].lanes);
	free(job->stage);
	free(job->name);
	free(job);
}

static struct sl_stream *node_add(struct sl_job *job, enum sl_node_kind kind, const char *name,
				  struct sl_stream *in, const struct sl_schema *schema)
{
	struct sl_stream *n, **grown;

	if (job->nnodes == job->cap) {
		int cap = job->cap ? job->cap * 2 : 16;

		grown = realloc(job->node, sizeof(*grown) * (size_t)cap);
		if (!grown)
			goto out_nomem;
		job->node = grown;
		job->cap = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		goto out_nomem;
	n->job = job;
	n->kind = kind;
	n->id = job->nnodes;
	n->in = in;
	n->name = strdup(name ? name : "op");
	n->schema = schema ? sl_schema_clone(schema) : NULL;
	if (!n->name || (schema && !n->schema)) {
		sl_schema_destroy(n->schema);
		free(n->name);
		free(n->uid);
		free(n);
		goto out_nomem;
	}
	job->node[job->nnodes++] = n;
	return n;

out_nomem:
	sl_job_set_error(job, -ENOMEM, "out of memory building the job");
	return NULL;
}

struct sl_stream *sl_job_source(struct sl_job *job, const char *name,
				const struct sl_source_ops *ops, const void *cfg,
				const struct sl_schema *schema, const struct sl_wm_strategy *wm)
{
	struct sl_stream *n;

	if (!ops || !schema) {
		sl_job_set_error(job, -EINVAL, "source '%s': no connector or schema", name);
		return NULL;
	}
	if (wm && wm->kind != SL_WM_NONE && wm->ts_field >= 0) {
		enum sl_type t;

		if (wm->ts_field >= sl_schema_nfields(schema)) {
			sl_job_set_error(job, -EINVAL,
					 "source '%s': event-time field %d out of range", name,
					 wm->ts_field);
			return NULL;
		}
		t = sl_schema_type(schema, wm->ts_field);
		if (t != SL_TYPE_TIMESTAMP && t != SL_TYPE_BIGINT) {
			sl_job_set_error(
				job, -EINVAL,
				"source '%s': event-time field '%s' is %s, not TIMESTAMP(3) "
				"or BIGINT",
				name, sl_schema_name(schema, wm->ts_field), sl_type_name(t));
			return NULL;
		}
	}
	if (wm && wm->kind != SL_WM_NONE && wm->ts_field < 0 && !wm->assign) {
		sl_job_set_error(job, -EINVAL,
				 "source '%s': watermarks need an event-time field "
				 "or a timestamp assigner",
				 name);
		return NULL;
	}
	n = node_add(job, SL_NODE_SOURCE, name, NULL, schema);
	if (!n)
		return NULL;
	n->src_ops = ops;
	n->cfg = cfg;
	if (wm)
		n->wm = *wm;
	else
		n->wm.ts_field = -1;
	return n;
}

/* Checks that `in` is usable as an input; reports a NULL input once. */
static bool input_ok(struct sl_stream *in, const char *what)
{
	if (!in)
		return false; /* the job already holds the cause */
	if (in->kind == SL_NODE_SINK) {
		sl_job_set_error(in->job, -EINVAL, "%s: input '%s' is a sink", what, in->name);
		return false;
	}
	return true;
}

struct sl_stream *sl_stream_filter(struct sl_stream *in, const char *name, sl_filter_fn fn,
				   void *arg)
{
	struct sl_stream *n;

	if (!input_ok(in, "filter"))
		return NULL;
	n = node_add(in->job, SL_NODE_FILTER, name, in, in->schema);
	if (n) {
		n->fn = (void *)fn;
		n->arg = arg;
	}
	return n;
}

struct sl_stream *sl_stream_map(struct sl_stream *in, const char *name, sl_map_fn fn, void *arg,
				const struct sl_schema *out)
{
	struct sl_stream *n;

	if (!input_ok(in, "map"))
		return NULL;
	n = node_add(in->job, SL_NODE_MAP, name, in, out);
	if (n) {
		n->fn = (void *)fn;
		n->arg = arg;
	}
	return n;
}

struct sl_stream *sl_stream_flat_map(struct sl_stream *in, const char *name, sl_flat_map_fn fn,
				     void *arg, const struct sl_schema *out)
{
	struct sl_stream *n;

	if (!input_ok(in, "flat_map"))
		return NULL;
	n = node_add(in->job, SL_NODE_FLATMAP, name, in, out);
	if (n) {
		n->fn = (void *)fn;
		n->arg = arg;
	}
	return n;
}

static bool fields_ok(struct sl_stream *in, const char *what, const int *fields, int nfields,
		      int max)
{
	int nf = sl_schema_nfields(in->schema);

	if (nfields <= 0 || nfields > max) {
		sl_job_set_error(in->job, -EINVAL, "%s: %d fields given, 1..%d allowed", what,
				 nfields, max);
		return false;
	}
	for (int i = 0; i < nfields; i++) {
		if (fields[i] < 0 || fields[i] >= nf) {
			sl_job_set_error(in->job, -EINVAL,
					 "%s: field %d out of range (stream '%s' "
					 "has %d)",
					 what, fields[i], in->name, nf);
			return false;
		}
	}
	return true;
}

struct sl_stream *sl_stream_project(struct sl_stream *in, const char *name, const int *fields,
				    int nfields)
{
	struct sl_schema *out;
	struct sl_stream *n;

	if (!input_ok(in, "project") ||
	    !fields_ok(in, "project", fields, nfields, SL_SCHEMA_MAX_FIELDS))
		return NULL;
	out = sl_schema_create();
	if (!out) {
		sl_job_set_error(in->job, -ENOMEM, "out of memory building the job");
		return NULL;
	}
	for (int i = 0; i < nfields; i++) {
		if (sl_schema_add_like(out, sl_schema_name(in->schema, fields[i]), in->schema,
				       fields[i]) < 0) {
			sl_job_set_error(in->job, -EINVAL, "project: field '%s' listed twice",
					 sl_schema_name(in->schema, fields[i]));
			sl_schema_destroy(out);
			return NULL;
		}
	}
	n = node_add(in->job, SL_NODE_PROJECT, name, in, out);
	sl_schema_destroy(out);
	if (n) {
		memcpy(n->fields, fields, sizeof(int) * (size_t)nfields);
		n->nfields = nfields;
	}
	return n;
}

/* Same field count, types and DECIMAL scales: rows of one are rows of the other. */
static bool schemas_match(const struct sl_schema *a, const struct sl_schema *b)
{
	if (sl_schema_nfields(a) != sl_schema_nfields(b))
		return false;
	for (int i = 0; i < sl_schema_nfields(a); i++)
		if (sl_schema_type(a, i) != sl_schema_type(b, i) ||
		    sl_schema_scale(a, i) != sl_schema_scale(b, i))
			return false;
	return true;
}

struct sl_stream *sl_stream_key_by(struct sl_stream *in, const int *fields, int nfields)
{
	struct sl_stream *n;

	if (!input_ok(in, "key_by") || !fields_ok(in, "key_by", fields, nfields, SL_MAX_KEY_FIELDS))
		return NULL;
	n = node_add(in->job, SL_NODE_KEYBY, "key_by", in, in->schema);
	if (n) {
		memcpy(n->fields, fields, sizeof(int) * (size_t)nfields);
		n->nfields = nfields;
		n->nlanes = 1;
	}
	return n;
}

struct sl_stream *sl_stream_union_key_by(struct sl_stream *const *ins, int nins, const int *fields,
					 int nfields)
{
	struct sl_stream *head;

	if (nins < 1 || !ins)
		return NULL;
	for (int i = 1; i < nins; i++) {
		if (!input_ok(ins[i], "union_key_by"))
			return NULL;
		if (!schemas_match(ins[0]->schema, ins[i]->schema)) {
			sl_job_set_error(
				ins[0]->job, -EINVAL,
				"union_key_by: input '%s' has other column types than '%s'",
				ins[i]->name, ins[0]->name);
			return NULL;
		}
	}
	head = sl_stream_key_by(ins[0], fields, nfields);
	if (!head)
		return NULL;
	head->nlanes = nins;
	for (int i = 1; i < nins; i++) {
		struct sl_stream *k = sl_stream_key_by(ins[i], fields, nfields);

		if (!k)
			return NULL;
		k->merge_into = head;
		k->lane = i;
		free(k->name);
		k->name = strdup("key_by(union)");
	}
	return head;
}

bool sl_stream_check_keyed(struct sl_stream *keyed, const char *what)
{
	if (!input_ok(keyed, what))
		return false;
	if (keyed->kind != SL_NODE_KEYBY) {
		sl_job_set_error(keyed->job, -EINVAL, "%s: input '%s' is not keyed (use key_by)",
				 what, keyed->name);
		return false;
	}
	return true;
}

struct sl_stream *sl_stream_keyed_op(struct sl_stream *keyed, const char *name,
				     const struct sl_op_ops *ops, void *cfg,
				     void (*cfg_free)(void *cfg), const struct sl_schema *out)
{
	struct sl_stream *n = NULL;

	if (sl_stream_check_keyed(keyed, ops->name)) /* checked by the callers, kept for others */
		n = node_add(keyed->job, SL_NODE_KEYED, name, keyed, out);
	if (!n) {
		if (cfg_free)
			cfg_free(cfg);
		return NULL;
	}
	n->ops = ops;
	n->op_cfg = cfg;
	n->cfg_free = cfg_free;
	return n;
}

struct sl_stream *sl_stream_side_output(struct sl_stream *of, int tag,
					const struct sl_schema *schema)
{
	struct sl_stream *n;

	if (!input_ok(of, "side_output"))
		return NULL;
	if (tag <= 0) {
		sl_job_set_error(of->job, -EINVAL, "side_output of '%s': tag must be > 0",
				 of->name);
		return NULL;
	}
	n = node_add(of->job, SL_NODE_SIDE, "side-output", of, schema ? schema : of->schema);
	if (n)
		n->side_tag = tag;
	return n;
}

/* Whether rows of schema a are rows of schema b: field for field the same type, precision
 * and scale (names aside). */
static bool same_fields(const struct sl_schema *a, const struct sl_schema *b)
{
	int n = sl_schema_nfields(a);

	if (n != sl_schema_nfields(b))
		return false;
	for (int i = 0; i < n; i++)
		if (sl_schema_type(a, i) != sl_schema_type(b, i) ||
		    sl_schema_precision(a, i) != sl_schema_precision(b, i) ||
		    sl_schema_scale(a, i) != sl_schema_scale(b, i))
			return false;
	return true;
}

int sl_stream_sink_as(struct sl_stream *in, const char *name, const struct sl_sink_ops *ops,
		      const void *cfg, const struct sl_schema *schema)
{
	struct sl_stream *n;

	if (!input_ok(in, "sink"))
		return in ? in->job->err.code : -EINVAL;
	if (!ops) {
		sl_job_set_error(in->job, -EINVAL, "sink '%s': no connector", name);
		return -EINVAL;
	}
	if (!schema)
		schema = in->schema;
	if (!same_fields(in->schema, schema)) {
		sl_job_set_error(in->job, -EINVAL,
				 "sink '%s': its schema's fields are not the stream's", name);
		return -EINVAL;
	}
	n = node_add(in->job, SL_NODE_SINK, name, in, schema);
	if (!n)
		return -ENOMEM;
	n->sink_ops = ops;
	n->cfg = cfg;
	return 0;
}

int sl_stream_sink(struct sl_stream *in, const char *name, const struct sl_sink_ops *ops,
		   const void *cfg)
{
	return sl_stream_sink_as(in, name, ops, cfg, in ? in->schema : NULL);
}

bool sl_uid_valid(const char *uid)
{
	size_t n = uid ? strlen(uid) : 0;

	if (n < 1 || n > 128)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)uid[i]) && !strchr("_.-/ ", uid[i]))
			return false;
	return true;
}

int sl_stream_uid(struct sl_stream *s, const char *uid)
{
	char *copy;

	if (!s || !sl_uid_valid(uid))
		return -EINVAL;
	copy = strdup(uid);
	if (!copy)
		return -ENOMEM;
	free(s->uid);
	s->uid = copy;
	return 0;
}

const char *sl_node_kind_name(const struct sl_stream *s)
{
	switch (s->kind) {
	case SL_NODE_SOURCE:
		return "source";
	case SL_NODE_FILTER:
		return "filter";
	case SL_NODE_MAP:
		return "map";
	case SL_NODE_PROJECT:
		return "project";
	case SL_NODE_FLATMAP:
		return "flat_map";
	case SL_NODE_KEYBY:
		return "exchange";
	case SL_NODE_KEYED:
		return s->ops && s->ops->name ? s->ops->name : "keyed";
	case SL_NODE_SIDE:
		return "side output";
	case SL_NODE_SINK:
		return "sink";
	}
	return "node";
}

/* The uid of s as a job id writes it: sl_stream_uid's, or its name with the characters
 * that separate an id's parts (":;=|") made '_'. */
static void node_uid(const struct sl_stream *s, char *out, size_t cap)
{
	snprintf(out, cap, "%s", s->uid ? s->uid : s->name ? s->name : "");
	for (char *p = out; *p; p++)
		if (strchr(":;=|", *p))
			*p = '_';
}

void sl_node_uid_token(const struct sl_job *job, int i, char *out, size_t cap)
{
	const struct sl_stream *s = job->node[i];
	char uid[256], other[256];
	int same = 1;

	node_uid(s, uid, sizeof uid);
	for (int j = 0; j < i; j++) {
		node_uid(job->node[j], other, sizeof other);
		same += !strcmp(other, uid) &&
			!strcmp(sl_node_kind_name(job->node[j]), sl_node_kind_name(s));
	}
	if (same > 1)
		snprintf(out, cap, "%s:%s#%d", sl_node_kind_name(s), uid, same);
	else
		snprintf(out, cap, "%s:%s", sl_node_kind_name(s), uid);
}

int sl_job_nnodes(const struct sl_job *job)
{
	return job->nnodes;
}

int sl_job_scope_uids(struct sl_job *job, int from, const char *scope, bool exclusive)
{
	size_t sl = scope ? strlen(scope) : 0;
	char uid[129];

	if (!sl_uid_valid(scope))
		return -EINVAL;
	for (int i = 0; exclusive && i < from && i < job->nnodes; i++)
		if (job->node[i]->uid && !strncmp(job->node[i]->uid, scope, sl) &&
		    job->node[i]->uid[sl] == '/')
			return -EEXIST;
	for (int i = from < 0 ? 0 : from; i < job->nnodes; i++) {
		struct sl_stream *n = job->node[i];
		int rc;

		if (n->uid)
			continue;
		/* a statement's sink is its sink whatever the table is called now */
		snprintf(uid, sizeof uid, "%s/%s", scope,
			 n->kind == SL_NODE_SINK ? "sink"
			 : n->name		 ? n->name
						 : "");
		for (char *p = uid; *p; p++)
			if (!isalnum((unsigned char)*p) && !strchr("_.-/ ", *p))
				*p = '_';
		if ((rc = sl_stream_uid(n, uid)))
			return rc;
	}
	return 0;
}

const struct sl_schema *sl_stream_schema(const struct sl_stream *s)
{
	return s ? s->schema : NULL;
}

const struct sl_error *sl_job_error(const struct sl_job *job)
{
	return &job->err;
}

void sl_job_stop(struct sl_job *job)
{
	atomic_store_explicit(&job->stop, true, memory_order_relaxed);
}
