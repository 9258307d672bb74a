/*
 * kafka_splits.c - the split list of a Kafka source (kafka_source.h): which topic-partitions
 * the job reads. sl_kafka_source_prepare() asks the cluster at plan time (topics in name
 * order, then partitions); with discovery on, the coordinator appends partitions found
 * later (sl_kafka_splits_discover); a restore renumbers the list as its checkpoint had it
 * (sl_kafka_splits_restore_layout). The shards only read the list, when they open a split
 * (sl_kafka_split_at); a split's consumer itself is kafka_source.c.
 */
#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_props.h"
#include "kafka_source.h"
#include "kafka_source_int.h"

/*
 * The splits as the job runs them: the plan's (renumbered by a restore), then those found
 * later, in the order found. The coordinator appends (discover) and renumbers (restore,
 * before any shard), the shards read when they open a split: the lock is taken at those
 * moments only, never per record. A topic name found later is kept until cfg_fini, so
 * every split's `topic` stays valid while the job runs.
 */
struct topic_name {
	struct topic_name *next;
	char name[];
};

struct sl_kafka_splits {
	pthread_mutex_t lock;
	struct sl_kafka_split_ref *refs;
	int n, cap;
	int initial;		  /* splits >= initial were found after the start */
	struct topic_name *names; /* storage of the topics found later */
	rd_kafka_t *rk;		  /* metadata client of discover(), coordinator thread */
	int64_t next_at;	  /* wall clock (ms) of the next question to the cluster */
};

/* ---- the splits at the start --------------------------------------------------------- */

static void splits_destroy(struct sl_kafka_splits *ks)
{
	if (!ks)
		return;
	while (ks->names) {
		struct topic_name *t = ks->names;

		ks->names = t->next;
		free(t);
	}
	if (ks->rk)
		rd_kafka_destroy(ks->rk);
	pthread_mutex_destroy(&ks->lock);
	free(ks->refs);
	free(ks);
}

/* The registry of a freshly prepared cfg: a copy of its split_refs. NULL: out of memory. */
static struct sl_kafka_splits *splits_create(const struct sl_kafka_source_cfg *cfg)
{
	struct sl_kafka_splits *ks = calloc(1, sizeof(*ks));

	if (!ks)
		return NULL;
	pthread_mutex_init(&ks->lock, NULL);
	ks->cap = cfg->npartitions ? cfg->npartitions : 1;
	ks->refs = malloc((size_t)ks->cap * sizeof(*ks->refs));
	if (!ks->refs) {
		splits_destroy(ks);
		return NULL;
	}
	memcpy(ks->refs, cfg->split_refs, (size_t)cfg->npartitions * sizeof(*ks->refs));
	ks->n = ks->initial = cfg->npartitions;
	return ks;
}

void sl_kafka_source_cfg_fini(struct sl_kafka_source_cfg *cfg)
{
	if (!cfg)
		return;
	splits_destroy(cfg->splits);
	cfg->splits = NULL;
	free(cfg->split_refs);
	free(cfg->topic_names);
	cfg->split_refs = NULL;
	cfg->topic_names = NULL;
	cfg->npartitions = 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * The topic names to read, sorted and without duplicates, as malloc'd pointers into the
 * cfg's strings or the metadata (pattern: copied into *store). Returns the count or -errno.
 */
static int topic_names(struct sl_kafka_source_cfg *cfg, rd_kafka_t *rk, int timeout,
		       const char ***out, char **store, struct sl_error *err)
{
	const struct rd_kafka_metadata *md = NULL;
	const char **v;
	size_t bytes = 0;
	int n = 0, m = 0;
	rd_kafka_resp_err_t e;
	char pat[1024];
	regex_t re;
	char *p;

	if (!cfg->topic_pattern) {
		n = cfg->topic ? 1 : cfg->ntopics;
		v = malloc((size_t)n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (int t = 0; t < n; t++)
			v[t] = cfg->topic ? cfg->topic : cfg->topics[t];
		goto sort;
	}
	/* Java's Pattern.matches(): the whole name */
	snprintf(pat, sizeof pat, "^(%s)$", cfg->topic_pattern);
	if (regcomp(&re, pat, REG_EXTENDED | REG_NOSUB)) {
		sl_kafka_src_err(err, -EINVAL,
				 "kafka source: topic pattern '%s' is not a POSIX extended "
				 "regular expression",
				 cfg->topic_pattern);
		return -EINVAL;
	}
	e = rd_kafka_metadata(rk, 1, NULL, &md, timeout);
	if (e) {
		regfree(&re);
		sl_kafka_src_err(err, sl_kafka_errno(e),
				 "kafka source: topics for pattern '%s': %s", cfg->topic_pattern,
				 rd_kafka_err2str(e));
		return err->code;
	}
	v = malloc((size_t)(md->topic_cnt ? md->topic_cnt : 1) * sizeof(*v));
	for (int t = 0; v && t < md->topic_cnt; t++)
		if (strncmp(md->topics[t].topic, "__", 2) &&
		    !regexec(&re, md->topics[t].topic, 0, NULL, 0)) {
			v[n++] = md->topics[t].topic;
			bytes += strlen(md->topics[t].topic) + 1;
		}
	regfree(&re);
	/* copy the names out of the metadata before it is freed */
	*store = v ? malloc(bytes ? bytes : 1) : NULL;
	if (!*store) {
		free(v);
		rd_kafka_metadata_destroy(md);
		return -ENOMEM;
	}
	for (int t = 0, off = 0; t < n; t++) {
		p = *store + off;
		strcpy(p, v[t]);
		off += (int)strlen(p) + 1;
		v[t] = p;
	}
	rd_kafka_metadata_destroy(md);
	if (!n) {
		free(v);
		sl_kafka_src_err(err, -ENOENT, "kafka source: no topic matches the pattern '%s'",
				 cfg->topic_pattern);
		return -ENOENT;
	}
sort:
	qsort(v, (size_t)n, sizeof(*v), cmp_str);
	for (int t = 0; t < n; t++)
		if (!m || strcmp(v[m - 1], v[t]))
			v[m++] = v[t];
	*out = v;
	return m;
}

int sl_kafka_source_prepare(struct sl_kafka_source_cfg *cfg, struct sl_error *err)
{
	int timeout = cfg->timeout_ms > 0 ? cfg->timeout_ms : SL_KAFKA_DEFAULT_TIMEOUT_MS;
	int nt, *counts = NULL, total = 0, rc = 0, k = 0;
	const char **names = NULL;
	char *store = NULL, why[256];
	size_t bytes = 0, off = 0;
	rd_kafka_t *rk;

	sl_kafka_source_cfg_fini(cfg);
	if (sl_kafka_src_check_cfg(cfg, err) < 0)
		return err->code;
	if (!sl_kafka_src_has_prop(cfg, "bootstrap.servers")) {
		sl_kafka_src_err(err, -EINVAL, "kafka source '%s': needs bootstrap.servers",
				 sl_kafka_src_name(cfg));
		return -EINVAL;
	}
	rk = sl_kafka_src_consumer(cfg, err);
	if (!rk)
		return err->code;
	nt = topic_names(cfg, rk, timeout, &names, &store, err);
	if (nt < 0) {
		rc = nt;
		if (rc == -ENOMEM)
			sl_kafka_src_err(err, rc, "kafka source '%s': out of memory",
					 sl_kafka_src_name(cfg));
		goto out;
	}
	counts = calloc((size_t)nt, sizeof(*counts));
	if (!counts)
		goto nomem;
	for (int t = 0; t < nt; t++) {
		counts[t] = sl_kafka_partition_count(rk, names[t], timeout, why, sizeof why);
		if (counts[t] < 0) {
			rc = counts[t];
			sl_kafka_src_err(err, rc, "kafka source: %s", why);
			goto out;
		}
		total += counts[t];
		bytes += strlen(names[t]) + 1;
	}
	cfg->split_refs = calloc((size_t)total, sizeof(*cfg->split_refs));
	cfg->topic_names = malloc(bytes);
	if (!cfg->split_refs || !cfg->topic_names)
		goto nomem;
	for (int t = 0; t < nt; t++) {
		char *name = cfg->topic_names + off;

		memcpy(name, names[t], strlen(names[t]) + 1);
		off += strlen(names[t]) + 1;
		for (int p = 0; p < counts[t]; p++, k++) {
			cfg->split_refs[k].topic = name;
			cfg->split_refs[k].partition = p;
		}
	}
	cfg->npartitions = total;
	cfg->splits = splits_create(cfg);
	if (!cfg->splits)
		goto nomem;
	goto out;
nomem:
	rc = -ENOMEM;
	sl_kafka_src_err(err, rc, "kafka source '%s': out of memory", sl_kafka_src_name(cfg));
out:
	if (rc)
		sl_kafka_source_cfg_fini(cfg);
	free(counts);
	free(names);
	free(store);
	rd_kafka_destroy(rk);
	return rc;
}

/* ---- the split list as the shards read it ------------------------------------------ */

int sl_kafka_splits_count(const void *cfgp)
{
	const struct sl_kafka_source_cfg *cfg = cfgp;
	int n;

	if (!cfg->splits)
		return cfg->npartitions;
	pthread_mutex_lock(&cfg->splits->lock);
	n = cfg->splits->n;
	pthread_mutex_unlock(&cfg->splits->lock);
	return n;
}

/* Split `split` as the job runs it. false: there is no such split. */
bool sl_kafka_split_at(const struct sl_kafka_source_cfg *cfg, int split, const char **topic,
		       int32_t *partition, bool *discovered)
{
	struct sl_kafka_splits *ks = cfg->splits;
	bool ok;

	if (!ks) {
		if (split < 0 || split >= cfg->npartitions || !cfg->split_refs)
			return false;
		*topic = cfg->split_refs[split].topic;
		*partition = cfg->split_refs[split].partition;
		*discovered = false;
		return true;
	}
	pthread_mutex_lock(&ks->lock);
	ok = split >= 0 && split < ks->n;
	if (ok) {
		*topic = ks->refs[split].topic;
		*partition = ks->refs[split].partition;
		*discovered = split >= ks->initial;
	}
	pthread_mutex_unlock(&ks->lock);
	return ok;
}

/* ---- splits found later, and a restore's numbering ----------------------------------- */

/* Discovery blocks the coordinator while it waits for the cluster: bounded shorter than a
 * checkpoint should wait, and retried at the next interval. */
#define DISCOVER_TIMEOUT_MS 2000

bool sl_kafka_splits_grow(const void *cfgp)
{
	const struct sl_kafka_source_cfg *cfg = cfgp;

	return cfg->splits && cfg->discovery_interval_ms > 0 && cfg->bounded == SL_KAFKA_UNBOUNDED;
}

static bool has_split(const struct sl_kafka_splits *ks, const char *topic, int32_t part)
{
	for (int i = 0; i < ks->n; i++)
		if (ks->refs[i].partition == part && !strcmp(ks->refs[i].topic, topic))
			return true;
	return false;
}

/* The registry's copy of a topic name (one that already has a split, or a new copy kept
 * until cfg_fini). NULL: out of memory. */
static const char *keep_name(struct sl_kafka_splits *ks, const char *topic)
{
	struct topic_name *t;
	size_t len = strlen(topic) + 1;

	for (int i = 0; i < ks->n; i++)
		if (!strcmp(ks->refs[i].topic, topic))
			return ks->refs[i].topic;
	t = malloc(sizeof(*t) + len);
	if (!t)
		return NULL;
	memcpy(t->name, topic, len);
	t->next = ks->names;
	ks->names = t;
	return t->name;
}

/* Appends partition `part` of `topic` as the next split. 0 or -ENOMEM. */
static int add_split(struct sl_kafka_splits *ks, const char *topic, int32_t part)
{
	const char *name = keep_name(ks, topic);

	if (!name)
		return -ENOMEM;
	pthread_mutex_lock(&ks->lock); /* a shard may be reading refs */
	if (ks->n == ks->cap) {
		int cap = ks->cap ? 2 * ks->cap : 8;
		struct sl_kafka_split_ref *v = realloc(ks->refs, (size_t)cap * sizeof(*v));

		if (!v) {
			pthread_mutex_unlock(&ks->lock);
			return -ENOMEM;
		}
		ks->refs = v;
		ks->cap = cap;
	}
	ks->refs[ks->n].topic = name;
	ks->refs[ks->n].partition = part;
	ks->n++;
	pthread_mutex_unlock(&ks->lock);
	return 0;
}

/*
 * Coordinator thread. Every discovery_interval_ms: the topics (the pattern's, matched
 * again) and their partition counts; partitions without a split become new splits, topics
 * in name order, then partitions. O(splits) per partition, once an interval: fine for
 * thousands. The refs array is reallocated only here and in restore_layout, both on this
 * thread, but the shards read it, so it moves under the lock.
 */
int sl_kafka_splits_discover(const void *cfgp, int64_t now_ms)
{
	const struct sl_kafka_source_cfg *cfg = cfgp;
	struct sl_kafka_splits *ks = cfg->splits;
	int timeout = cfg->timeout_ms > 0 && cfg->timeout_ms < DISCOVER_TIMEOUT_MS
			      ? cfg->timeout_ms
			      : DISCOVER_TIMEOUT_MS;
	struct sl_error err = { 0 };
	const char **names = NULL;
	char *store = NULL, why[256];
	int nt, rc = 0, before;

	if (!sl_kafka_splits_grow(cfg))
		return sl_kafka_splits_count(cfg);
	before = ks->n; /* only this thread writes n */
	if (!ks->next_at || now_ms < ks->next_at) {
		/* the first call only starts the clock: prepare has just asked */
		if (!ks->next_at)
			ks->next_at = now_ms + cfg->discovery_interval_ms;
		return before;
	}
	ks->next_at = now_ms + cfg->discovery_interval_ms;
	if (!ks->rk && !(ks->rk = sl_kafka_src_consumer(cfg, &err))) {
		fprintf(stderr, "sluice: kafka source '%s': discovery: %s\n",
			sl_kafka_src_name(cfg), err.msg);
		return err.code ? err.code : -EIO;
	}
	nt = topic_names((struct sl_kafka_source_cfg *)cfg, ks->rk, timeout, &names, &store, &err);
	if (nt == -ENOENT && cfg->topic_pattern)
		return before; /* the pattern matches nothing now: nothing new */
	if (nt < 0) {
		fprintf(stderr, "sluice: kafka source '%s': discovery: %s\n",
			sl_kafka_src_name(cfg), err.msg[0] ? err.msg : strerror(-nt));
		return nt;
	}
	for (int t = 0; t < nt && !rc; t++) {
		int count = sl_kafka_partition_count(ks->rk, names[t], timeout, why, sizeof why);

		if (count < 0) {
			/* a pattern's topic may be deleted in between: skip it; a named one
			 * answers next time or the split's own consumer reports it */
			fprintf(stderr, "sluice: kafka source '%s': discovery: %s\n",
				sl_kafka_src_name(cfg), why);
			continue;
		}
		for (int32_t p = 0; p < count && !rc; p++)
			if (!has_split(ks, names[t], p)) {
				rc = add_split(ks, names[t], p);
				if (!rc)
					fprintf(stderr,
						"sluice: kafka source '%s': found %s/%d: "
						"split %d, read from its earliest offset\n",
						sl_kafka_src_name(cfg), names[t], p, ks->n - 1);
			}
	}
	free(names);
	free(store);
	return rc < 0 ? rc : ks->n;
}

/*
 * Restore, before any split opens: split k becomes the partition checkpoint position k
 * names (its partition and topic hash), whatever the plan's order now (splits found later
 * were appended, a fresh plan sorts them in). Partitions the checkpoint did not have follow,
 * and count as found later (they start at their earliest offset) when discovery is on. A
 * checkpointed partition that is gone fails the restore: its data would be skipped.
 */
int sl_kafka_splits_restore_layout(const void *cfgp, int n, const void *const *pos,
				   const size_t *len, struct sl_error *err)
{
	const struct sl_kafka_source_cfg *cfg = cfgp;
	struct sl_kafka_splits *ks = cfg->splits;
	struct sl_kafka_split_ref *v;
	bool *used;
	int m = 0;

	if (!ks)
		return 0;
	v = calloc((size_t)(ks->n > n ? ks->n : n) + 1, sizeof(*v));
	used = calloc((size_t)ks->n + 1, sizeof(*used));
	if (!v || !used) {
		free(v);
		free(used);
		sl_kafka_src_err(err, -ENOMEM, "kafka source '%s': out of memory",
				 sl_kafka_src_name(cfg));
		return -ENOMEM;
	}
	for (int k = 0; k < n; k++) {
		struct kafka_pos p;
		int j;

		if (!pos[k] || len[k] != sizeof p) {
			sl_kafka_src_err(err, -EINVAL,
					 "kafka source '%s': the checkpoint's split %d has "
					 "no Kafka position",
					 sl_kafka_src_name(cfg), k);
			goto fail;
		}
		memcpy(&p, pos[k], sizeof p);
		for (j = 0; j < ks->n; j++)
			if (!used[j] && ks->refs[j].partition == p.partition &&
			    sl_kafka_topic_hash(ks->refs[j].topic) == p.topic_hash)
				break;
		if (j == ks->n) {
			sl_kafka_src_err(
				err, -ESTALE,
				"kafka source '%s': the checkpoint's split %d "
				"(partition %d of a topic with hash %08x) is not among the "
				"topics' partitions now",
				sl_kafka_src_name(cfg), k, p.partition, p.topic_hash);
			goto fail;
		}
		used[j] = true;
		v[m++] = ks->refs[j];
	}
	for (int j = 0; j < ks->n; j++)
		if (!used[j])
			v[m++] = ks->refs[j];
	pthread_mutex_lock(&ks->lock);
	free(ks->refs);
	ks->refs = v;
	ks->cap = (ks->n > n ? ks->n : n) + 1;
	ks->n = m;
	ks->initial = sl_kafka_splits_grow(cfg) ? n : m;
	pthread_mutex_unlock(&ks->lock);
	free(used);
	return 0;
fail:
	free(v);
	free(used);
	return err->code;
}
