/*
 * kafka_sink.c - the Kafka sink (kafka_sink.h): rows encoded into a key and a value and
 * produced with librdkafka, at-most, at-least or exactly once.
 *
 * none / at-least-once: each instance owns a producer. At-least-once precommit() waits
 * (rd_kafka_flush) until every row produced so far is acknowledged; a failed delivery is a
 * sticky error, so the checkpoint and then the job fail and a restart writes the rows again.
 *
 * Exactly-once: the commit-marker protocol of DESIGN §7 with one transaction per checkpoint
 * epoch *for the whole sink*, not one per instance: two instances' transactions of one
 * checkpoint cannot commit atomically, and a crash between them would leave epoch n
 * committed on one shard and not on another, which neither restoring n (loss) nor n-1
 * (duplicates) repairs. So the instances of a sink share a group (one per cfg and run,
 * found in a process registry) of two transactional producers, "<prefix>-0" and
 * "<prefix>-1", alternating by epoch: while the coordinator commits epoch e on one, the
 * shards already write epoch e+1 on the other. Epochs are counted per run (the instance's
 * number of precommits), which every running instance counts alike because every barrier
 * reaches every running instance. The life of one producer slot:
 *
 *   OPEN(e) --[writes of every instance in epoch e]--> OPEN(e)
 *   OPEN(e) --[precommit of each instance: flush, report rows]--> SEALED(e)
 *   SEALED(e) --[commit(n) from the first meta: marker (prefix, n) produced into the same
 *               transaction, commit_transaction, begin_transaction]--> OPEN(e+2)
 *   SEALED(e), no rows --[checkpoint n failed: the next precommit finds it]--> OPEN(e+2)
 *   SEALED(e) with rows --[checkpoint n failed]--> sticky error: the job restarts
 *   any --[crash]--> aborted by fencing (init_transactions on both ids) in recovery
 *
 * The marker makes the transaction itself the record of the decision: a recovery-time
 * commit(n) (no group of this run exists) fences both ids, so nothing is left in flight,
 * then reads the marker topic read_committed: the marker of n is there exactly when epoch
 * n's rows were committed (0), otherwise they died with the producer (-ESTALE: restore the
 * checkpoint before). A failed checkpoint whose transaction holds rows cannot be carried
 * into the next one (that would again be two transactions for one checkpoint), so it
 * fails the run (as Flink's default tolerable-failed-checkpoints = 0 does). Commits are
 * idempotent: a meta whose epoch a slot has passed is done.
 *
 * Invariants: a slot receives rows of one epoch at a time; commit(n) runs only after every
 * instance precommitted n (the coordinator completes checkpoints one at a time), so nothing
 * writes into a slot being committed; the group lock serialises precommit bookkeeping,
 * commit and end-of-input, never write(). Every failure is sticky per producer (or group)
 * and printed once, naming topic, partition and librdkafka's reason.
 *
 * Hot path: one encoding into per-instance buffers and one rd_kafka_producev() (librdkafka
 * copies the message: its allocation, not ours) per row; delivery reports are served every
 * 1024 rows; a full queue is served for at most timeout_ms. Exactly-once stages the encoded
 * rows and produces them in bursts of 256, one instance at a time (see "staging").
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "fault.h"
#include "kafka_props.h"
#include "kafka_sink.h"

#define META_MAGIC  "sluice-kafka-sink 1"
#define ENC_BUF	    (64u << 10)
#define POLL_EVERY  1024u /* rows between serving delivery reports */
#define BURST	    256	  /* exactly-once: rows staged before an instance tries to produce */
#define BURST_RETRY 64	  /* ... and between its tries while another instance produces */
#define STAGE_MAX   2048  /* ... and at most: then it waits for its turn */
#define STAGE_BUF   (256u << 10)
#define SCAN_WINDOW 1024 /* marker offsets read per look back */

/* ---- sticky errors ---------------------------------------------------------------------- */

/* The first failure of a producer (or of a whole exactly-once group). */
struct kerr {
	atomic_int code;   /* -errno of the first failure; 0 if none */
	atomic_bool ready; /* msg complete (release; pairs with kerr_msg's acquire) */
	char msg[256];
	atomic_uint_least64_t lost; /* none: deliveries that failed */
};

static void kerr_set(struct kerr *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Records the failure if it is the first, and prints it (once). Error path only. */
static void kerr_set(struct kerr *e, int code, const char *fmt, ...)
{
	int zero = 0;
	va_list ap;

	if (!atomic_compare_exchange_strong(&e->code, &zero, code))
		return;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "sluice: %s\n", e->msg);
	atomic_store_explicit(&e->ready, true, memory_order_release);
}

static const char *kerr_msg(struct kerr *e)
{
	return atomic_load_explicit(&e->ready, memory_order_acquire) ? e->msg : "";
}

static int kerr_code(struct kerr *e)
{
	return atomic_load_explicit(&e->code, memory_order_relaxed);
}

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int timeout_of(const struct sl_kafka_sink_cfg *cfg)
{
	return cfg->timeout_ms > 0 ? cfg->timeout_ms : 60000;
}

static int64_t txn_timeout_of(const struct sl_kafka_sink_cfg *cfg)
{
	int64_t t = 3 * cfg->checkpoint_interval_ms + 10000;

	if (cfg->transaction_timeout_ms > 0)
		return cfg->transaction_timeout_ms;
	return t > 60000 ? t : 60000;
}

static bool fenced(rd_kafka_resp_err_t e)
{
	return e == RD_KAFKA_RESP_ERR__FENCED || e == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
	       e == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH;
}

/* ---- producers -------------------------------------------------------------------------- */

/* One librdkafka producer and where its callbacks report. */
struct kprod {
	rd_kafka_t *rk;
	rd_kafka_topic_t *rkt; /* the output topic */
	rd_kafka_topic_t *mkt; /* exactly-once: the marker topic */
	struct kerr *err;      /* own, or the group's */
	const struct sl_kafka_sink_cfg *cfg;
	char txid[192]; /* exactly-once: transactional.id, "" otherwise */
	/* exactly-once slot state, under the group lock */
	uint64_t epoch; /* the epoch its open transaction serves */
	uint64_t rows;	/* rows the instances reported for it at precommit */
	uint64_t ckpt;	/* the checkpoint it was precommitted under; 0: not yet */
	bool open;	/* a transaction is begun */
};

/* Records p's fatal error (fencing among them) with its cause: librdkafka's own code for
 * it is only RD_KAFKA_RESP_ERR__FATAL ("Local: Fatal error"). Error path only. */
static void set_fatal(struct kprod *p, rd_kafka_t *rk)
{
	rd_kafka_resp_err_t e;
	char why[256];

	e = rd_kafka_fatal_error(rk, why, sizeof why);
	kerr_set(p->err, fenced(e) ? -EPERM : -EIO, "kafka sink: topic '%s'%s%s: %s", p->cfg->topic,
		 p->txid[0] ? ": producer " : "", p->txid,
		 fenced(e) ? "fenced by a newer producer with the same transactional id "
			     "(another run of this job?)"
			   : why);
}

/* Delivery reports, on whichever thread polls the producer. */
static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	struct kprod *p = opaque;

	if (!m->err)
		return;
	if (p->cfg->guarantee == SL_KAFKA_NONE) {
		if (atomic_fetch_add(&p->err->lost, 1) == 0)
			fprintf(stderr,
				"sluice: kafka sink: topic '%s' partition %" PRId32 ": "
				"delivery failed: %s (delivery guarantee none: counted, "
				"further failures not printed)\n",
				rd_kafka_topic_name(m->rkt), m->partition,
				rd_kafka_err2str(m->err));
		return;
	}
	if (m->err == RD_KAFKA_RESP_ERR__FATAL) {
		set_fatal(p, rk); /* the cause, not "Fatal error" */
		return;
	}
	kerr_set(p->err, fenced(m->err) ? -EPERM : -EIO,
		 "kafka sink: topic '%s' partition %" PRId32 ": delivery failed: %s",
		 rd_kafka_topic_name(m->rkt), m->partition, rd_kafka_err2str(m->err));
}

/* Fatal errors (fencing among them) come here; the rest librdkafka retries itself. */
static void on_error(rd_kafka_t *rk, int code, const char *reason, void *opaque)
{
	struct kprod *p = opaque;

	(void)reason;
	if (code == RD_KAFKA_RESP_ERR__FATAL)
		set_fatal(p, rk);
}

/* The sink's defaults, then the user's properties, then what the mode needs. `txid`
 * non-NULL: a transactional producer. Returns conf or NULL with why filled. */
static rd_kafka_conf_t *make_conf(const struct sl_kafka_sink_cfg *cfg, const char *txid, char *why,
				  size_t cap)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char num[32];
	int rc = 0;

	if (!conf) {
		snprintf(why, cap, "out of memory");
		return NULL;
	}
	rc = sl_kafka_props_set(conf, "partitioner", "murmur2_random", why, cap);
	if (!rc && txid) {
		snprintf(num, sizeof num, "%" PRId64, txn_timeout_of(cfg));
		rc = sl_kafka_props_set(conf, "transaction.timeout.ms", num, why, cap);
		if (!rc) /* a message may not outlive its transaction */
			rc = sl_kafka_props_set(conf, "message.timeout.ms", num, why, cap);
	}
	if (!rc)
		rc = sl_kafka_props_apply(conf, cfg->prop_keys, cfg->prop_vals, cfg->nprops, why,
					  cap);
	if (!rc && txid)
		rc = sl_kafka_props_set(conf, "transactional.id", txid, why, cap);
	if (rc) {
		rd_kafka_conf_destroy(conf);
		return NULL;
	}
	return conf;
}

static void prod_fini(struct kprod *p)
{
	if (p->mkt)
		rd_kafka_topic_destroy(p->mkt);
	if (p->rkt)
		rd_kafka_topic_destroy(p->rkt);
	if (p->rk)
		rd_kafka_destroy(p->rk);
	p->rk = NULL;
	p->rkt = p->mkt = NULL;
}

static const char *marker_topic(const struct sl_kafka_sink_cfg *cfg, char *buf, size_t cap)
{
	if (cfg->marker_topic && cfg->marker_topic[0])
		return cfg->marker_topic;
	snprintf(buf, cap, "%s__sluice_markers", cfg->transactional_id_prefix);
	return buf;
}

static void txid_of(const struct sl_kafka_sink_cfg *cfg, int slot, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s-%d", cfg->transactional_id_prefix, slot);
}

/* Makes p a producer (transactional with slot >= 0: init_transactions fences the previous
 * holder of the id and aborts what it left open). Returns 0 or -errno with why filled. */
static int prod_init(struct kprod *p, const struct sl_kafka_sink_cfg *cfg, struct kerr *err,
		     int slot, char *why, size_t cap)
{
	rd_kafka_conf_t *conf;
	rd_kafka_error_t *e;
	char mt[256];
	int rc;

	memset(p, 0, sizeof(*p));
	p->cfg = cfg;
	p->err = err;
	if (slot >= 0)
		txid_of(cfg, slot, p->txid, sizeof p->txid);
	conf = make_conf(cfg, slot >= 0 ? p->txid : NULL, why, cap);
	if (!conf)
		return -EINVAL;
	rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
	rd_kafka_conf_set_error_cb(conf, on_error);
	rd_kafka_conf_set_opaque(conf, p);
	p->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, why, cap);
	if (!p->rk) {
		rd_kafka_conf_destroy(conf);
		return -EINVAL;
	}
	p->rkt = rd_kafka_topic_new(p->rk, cfg->topic, NULL);
	if (slot >= 0)
		p->mkt = rd_kafka_topic_new(p->rk, marker_topic(cfg, mt, sizeof mt), NULL);
	if (!p->rkt || (slot >= 0 && !p->mkt)) {
		rc = sl_kafka_errno(rd_kafka_last_error());
		snprintf(why, cap, "topic handle: %s", rd_kafka_err2str(rd_kafka_last_error()));
		goto out_fini;
	}
	if (slot < 0)
		return 0;
	e = rd_kafka_init_transactions(p->rk, timeout_of(cfg));
	if (e) {
		rc = rd_kafka_error_code(e) == RD_KAFKA_RESP_ERR__TIMED_OUT ? -ETIMEDOUT : -EIO;
		snprintf(why, cap, "producer %s: init_transactions: %s", p->txid,
			 rd_kafka_error_string(e));
		rd_kafka_error_destroy(e);
		goto out_fini;
	}
	return 0;

out_fini:
	prod_fini(p);
	return rc;
}

static int begin(struct kprod *p)
{
	rd_kafka_error_t *e = rd_kafka_begin_transaction(p->rk);

	if (!e) {
		p->open = true;
		return 0;
	}
	kerr_set(p->err, -EIO, "kafka sink: topic '%s': producer %s: begin_transaction: %s",
		 p->cfg->topic, p->txid, rd_kafka_error_string(e));
	rd_kafka_error_destroy(e);
	return -EIO;
}

/* Commits p's open transaction, retrying what librdkafka calls retriable until the
 * timeout; an abortable failure aborts it. `what` names it for messages. */
static int txn_commit(struct kprod *p, const char *what)
{
	int64_t deadline = now_ms() + timeout_of(p->cfg);
	rd_kafka_error_t *e;
	int rc;

	for (;;) {
		int64_t left = deadline - now_ms();

		e = rd_kafka_commit_transaction(p->rk, left > 0 ? (int)left : 1);
		if (!e) {
			p->open = false;
			return 0;
		}
		if (!rd_kafka_error_is_retriable(e) || now_ms() >= deadline)
			break;
		rd_kafka_error_destroy(e);
	}
	if (rd_kafka_error_is_fatal(e) || fenced(rd_kafka_error_code(e)))
		rc = fenced(rd_kafka_error_code(e)) ? -EPERM : -EIO;
	else if (rd_kafka_error_code(e) == RD_KAFKA_RESP_ERR__TIMED_OUT)
		rc = -ETIMEDOUT;
	else
		rc = -EIO;
	kerr_set(p->err, rc, "kafka sink: topic '%s': committing %s (producer %s): %s%s",
		 p->cfg->topic, what, p->txid, rd_kafka_error_string(e),
		 rc == -EPERM ? " (fenced by a newer producer with the same transactional id)"
			      : "");
	if (rd_kafka_error_txn_requires_abort(e)) {
		rd_kafka_error_t *a = rd_kafka_abort_transaction(p->rk, timeout_of(p->cfg));

		if (a)
			rd_kafka_error_destroy(a);
		p->open = false;
	}
	rd_kafka_error_destroy(e);
	return rc;
}

/* ---- exactly-once groups ---------------------------------------------------------------- */

struct kgroup {
	struct kgroup *next; /* registry list, under reg_lock */
	const struct sl_kafka_sink_cfg *cfg;
	uint64_t run; /* random, in every meta of this run */
	int refs;     /* open instances and commits in progress (reg_lock) */
	int nshards;
	pthread_mutex_t lock; /* everything below: precommit, commit, end of input */
	/* one instance at a time hands its staged rows to the slots' producers, so that
	 * librdkafka's per-message locks (its message counter, the topic's and partitions')
	 * are taken by one shard in a burst instead of bouncing between shards per row;
	 * never held with `lock`, never taken by commits (the committing slot is not the
	 * one being written: see the invariants) */
	pthread_mutex_t produce_lock;
	struct kerr err; /* sticky: any failure dooms the run's transactions */
	struct kprod slot[2];
	int ended;		  /* instances at end of input */
	uint64_t ended_min_epoch; /* fewest precommits of an ended instance */
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kgroup *reg_head;

static void group_free(struct kgroup *g)
{
	for (int s = 0; s < 2; s++) {
		struct kprod *p = &g->slot[s];

		/* what an unfinished run wrote is aborted now rather than at the transaction
		 * timeout, which would hold read_committed consumers back until then */
		if (p->rk && p->open) {
			rd_kafka_error_t *e = rd_kafka_abort_transaction(p->rk, timeout_of(g->cfg));

			if (e)
				rd_kafka_error_destroy(e);
		}
		prod_fini(p);
	}
	pthread_mutex_destroy(&g->lock);
	pthread_mutex_destroy(&g->produce_lock);
	free(g);
}

/* Drops a reference taken under reg_lock; the last one frees the group. */
static void group_put(struct kgroup *g)
{
	bool last;

	pthread_mutex_lock(&reg_lock);
	last = --g->refs == 0;
	if (last) {
		struct kgroup **pp = &reg_head;

		while (*pp != g)
			pp = &(*pp)->next;
		*pp = g->next;
	}
	pthread_mutex_unlock(&reg_lock);
	if (last)
		group_free(g);
}

/* The group of cfg's current run, made (both producers fenced in and begun) by the first
 * instance to open. Returns it with a reference, or NULL with why filled. */
static struct kgroup *group_get(const struct sl_kafka_sink_cfg *cfg, int nshards, int *rc,
				char *why, size_t cap)
{
	struct kgroup *g;

	pthread_mutex_lock(&reg_lock);
	for (g = reg_head; g; g = g->next)
		if (g->cfg == cfg)
			break;
	if (g) {
		g->refs++;
		pthread_mutex_unlock(&reg_lock);
		return g;
	}
	g = calloc(1, sizeof(*g));
	if (!g) {
		*rc = -ENOMEM;
		snprintf(why, cap, "out of memory");
		goto out_unlock;
	}
	g->cfg = cfg;
	g->nshards = nshards;
	g->refs = 1;
	g->ended_min_epoch = UINT64_MAX;
	if (getrandom(&g->run, sizeof g->run, 0) != sizeof g->run)
		g->run = (uint64_t)now_ms() * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	pthread_mutex_init(&g->lock, NULL);
	pthread_mutex_init(&g->produce_lock, NULL);
	for (int s = 0; s < 2; s++) {
		*rc = prod_init(&g->slot[s], cfg, &g->err, s, why, cap);
		if (!*rc)
			*rc = begin(&g->slot[s]);
		if (*rc) {
			group_free(g);
			g = NULL;
			goto out_unlock;
		}
		g->slot[s].epoch = (uint64_t)s;
	}
	g->next = reg_head;
	reg_head = g;
out_unlock:
	pthread_mutex_unlock(&reg_lock);
	return g;
}

/* The group of cfg's run `run` if it is still open in this process, with a reference;
 * *live: some run of cfg is open. */
static struct kgroup *group_find(const struct sl_kafka_sink_cfg *cfg, uint64_t run, bool *live)
{
	struct kgroup *g;

	*live = false;
	pthread_mutex_lock(&reg_lock);
	for (g = reg_head; g; g = g->next) {
		*live |= g->cfg == cfg;
		if (g->cfg == cfg && g->run == run) {
			g->refs++;
			break;
		}
	}
	pthread_mutex_unlock(&reg_lock);
	return g;
}

/* ---- instances -------------------------------------------------------------------------- */

/* How one part of a message (key or value) is written: a projection and a format. */
struct enc {
	enum sl_kafka_sink_fmt fmt;
	struct sl_schema *schema; /* the projected fields' schema, owned */
	int *fields;		  /* projection; NULL: the row as it is */
	int n;
	char *buf; /* encoding, grown when a row does not fit */
	size_t cap;
};

/* Exactly-once: an instance's rows since its last burst, encoded and copied (the encoders'
 * buffers are reused per row) until they are produced under the group's produce_lock. */
struct staged {
	uint32_t koff, voff; /* into stage.buf */
	int32_t klen, vlen;  /* -1: null */
	int32_t part;
	sl_ts_t ts;
};

struct stage {
	char *buf;
	size_t len, cap;
	struct staged *rows;
	int n;
};

struct ksink {
	const struct sl_kafka_sink_cfg *cfg;
	const struct sl_schema *schema;
	int shard;
	struct kprod own; /* none, at-least-once */
	struct kerr own_err;
	struct kgroup *g; /* exactly-once */
	uint64_t epoch;	  /* exactly-once: precommits done */
	uint64_t rows;	  /* rows written in this epoch */
	bool ended;
	struct enc key, val;
	void *proj; /* projected row scratch */
	uint32_t proj_cap;
	int32_t npart; /* fixed, round-robin: partitions of the topic */
	uint32_t rr;   /* round-robin position */
	uint32_t since_poll;
	struct stage st; /* exactly-once: rows encoded, not yet produced */
};

static int stage_init(struct stage *st)
{
	st->cap = STAGE_BUF;
	st->buf = malloc(st->cap);
	st->rows = malloc(STAGE_MAX * sizeof(*st->rows));
	return st->buf && st->rows ? 0 : -ENOMEM;
}

static void stage_fini(struct stage *st)
{
	free(st->buf);
	free(st->rows);
}

static void enc_fini(struct enc *e)
{
	sl_schema_destroy(e->schema);
	free(e->fields);
	free(e->buf);
}

/* Sets e up for `fields` of schema (all fields when fields is NULL). */
static int enc_init(struct enc *e, enum sl_kafka_sink_fmt fmt, const struct sl_schema *schema,
		    const int *fields, int n, char *why, size_t cap)
{
	int nf = sl_schema_nfields(schema);

	memset(e, 0, sizeof(*e));
	e->fmt = fmt;
	e->cap = ENC_BUF;
	e->buf = malloc(e->cap);
	if (!e->buf)
		return -ENOMEM;
	if (fields) {
		e->fields = malloc(sizeof(int) * (size_t)(n ? n : 1));
		e->schema = sl_schema_create();
		if (!e->fields || !e->schema)
			return -ENOMEM;
		e->n = n;
		for (int i = 0; i < n; i++) {
			int f = fields[i], rc;

			if (f < 0 || f >= nf) {
				snprintf(why, cap, "key field %d out of range", f);
				return -EINVAL;
			}
			e->fields[i] = f;
			rc = sl_schema_add_like(e->schema, sl_schema_name(schema, f), schema, f);
			if (rc < 0) {
				snprintf(why, cap, "field '%s' twice", sl_schema_name(schema, f));
				return rc;
			}
		}
	}
	if (fmt == SL_KSINK_RAW) {
		const struct sl_schema *s = e->schema ? e->schema : schema;

		if (sl_schema_nfields(s) != 1 || sl_schema_type(s, 0) != SL_TYPE_STRING) {
			snprintf(why, cap,
				 "format 'raw' needs exactly one STRING field, not %d "
				 "fields",
				 sl_schema_nfields(s));
			return -EINVAL;
		}
	}
	return 0;
}

static const char *kind_name(uint8_t kind)
{
	static const char *const names[] = { "+I", "-U", "+U", "-D" };

	return kind < 4 ? names[kind] : "?";
}

/* Encodes row (projected for e) into e->buf. Returns the length, or -1 for a null (raw
 * NULL), or -errno. Hot path: no allocation unless a row outgrows the buffers. */
static int encode(struct ksink *k, struct enc *e, const struct sl_row *row, const char **out)
{
	const struct sl_schema *s = k->schema;
	int n;

	if (e->fields) {
		struct sl_row_builder b;
		const struct sl_row *r;

		for (;;) {
			sl_rowb_init(&b, k->proj, k->proj_cap, e->n);
			for (int i = 0; i < e->n; i++)
				sl_rowb_copy_field(&b, i, row, e->fields[i],
						   sl_schema_type(k->schema, e->fields[i]));
			if ((r = sl_rowb_finish(&b)))
				break;
			void *np = realloc(k->proj, (size_t)k->proj_cap * 2);

			if (!np)
				return -ENOMEM;
			k->proj = np;
			k->proj_cap *= 2;
		}
		row = r;
		s = e->schema;
	}
	if (e->fmt == SL_KSINK_RAW) {
		uint32_t len;

		if (sl_row_is_null(row, 0))
			return -1;
		*out = sl_row_str(row, 0, &len);
		return (int)len;
	}
	for (;;) {
		n = e->fmt == SL_KSINK_CSV ? sl_csv_write_row(row, s, &k->cfg->csv, e->buf, e->cap)
					   : sl_json_write_row(row, s, e->buf, e->cap);
		if (n >= 0)
			break;
		if (e->cap >= (1u << 30))
			return -E2BIG;
		char *nb = realloc(e->buf, e->cap * 2);

		if (!nb)
			return -ENOMEM;
		e->buf = nb;
		e->cap *= 2;
	}
	if (n > 0 && e->buf[n - 1] == '\n')
		n--; /* a message is one record: no line terminator */
	*out = e->buf;
	return n;
}

static struct kprod *cur_prod(struct ksink *k)
{
	return k->g ? &k->g->slot[k->epoch & 1] : &k->own;
}

static void *fail_open(struct ksink *k, struct sl_error *err, int code, const char *why)
{
	err->code = code;
	snprintf(err->msg, sizeof err->msg, "kafka sink: topic '%.100s': %s",
		 k && k->cfg->topic ? k->cfg->topic : "", why);
	return NULL;
}

static void ks_close(void *state);

static void *ks_open(const void *cfgp, const struct sl_schema *schema, int shard, int nshards,
		     struct sl_error *err)
{
	const struct sl_kafka_sink_cfg *cfg = cfgp;
	struct ksink *k;
	char why[512] = "";
	int rc;

	if (!cfg || !cfg->topic || !cfg->topic[0]) {
		err->code = -EINVAL;
		snprintf(err->msg, sizeof err->msg, "kafka sink: no topic");
		return NULL;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		err->code = -ENOMEM;
		snprintf(err->msg, sizeof err->msg, "kafka sink: out of memory");
		return NULL;
	}
	k->cfg = cfg;
	k->schema = schema;
	k->shard = shard;
	if (cfg->upsert && (!cfg->nkey_fields || cfg->key_format == SL_KSINK_NONE)) {
		fail_open(k, err, -EINVAL, "upsert needs key fields and a key format");
		goto out_close;
	}
	if (cfg->guarantee == SL_KAFKA_EXACTLY_ONCE &&
	    (!cfg->transactional_id_prefix || !cfg->transactional_id_prefix[0])) {
		fail_open(k, err, -EINVAL, "exactly-once needs a transactional id prefix");
		goto out_close;
	}
	k->proj_cap = SL_ROW_SCRATCH;
	k->proj = aligned_alloc(8, k->proj_cap);
	rc = k->proj ? 0 : -ENOMEM;
	if (!rc && cfg->key_format != SL_KSINK_NONE)
		rc = enc_init(&k->key, cfg->key_format, schema, cfg->key_fields, cfg->nkey_fields,
			      why, sizeof why);
	if (!rc) {
		int vf[SL_SCHEMA_MAX_FIELDS], nv = 0, nf = sl_schema_nfields(schema);

		for (int i = 0; cfg->value_except_key && i < nf; i++) {
			bool key = false;

			for (int j = 0; j < cfg->nkey_fields; j++)
				key |= cfg->key_fields[j] == i;
			if (!key)
				vf[nv++] = i;
		}
		rc = enc_init(&k->val, cfg->value_format ? cfg->value_format : SL_KSINK_JSON,
			      schema, cfg->value_except_key ? vf : NULL, nv, why, sizeof why);
	}
	if (rc) {
		fail_open(k, err, rc, why[0] ? why : strerror(-rc));
		goto out_close;
	}
	if (cfg->guarantee == SL_KAFKA_EXACTLY_ONCE) {
		if (stage_init(&k->st) < 0) {
			fail_open(k, err, -ENOMEM, "out of memory");
			goto out_close;
		}
		k->g = group_get(cfg, nshards, &rc, why, sizeof why);
		if (!k->g) {
			fail_open(k, err, rc, why);
			goto out_close;
		}
	} else {
		rc = prod_init(&k->own, cfg, &k->own_err, -1, why, sizeof why);
		if (rc) {
			fail_open(k, err, rc, why);
			goto out_close;
		}
	}
	if (cfg->partitioner != SL_KAFKA_PART_DEFAULT) {
		rc = sl_kafka_partition_count(cur_prod(k)->rk, cfg->topic, timeout_of(cfg), why,
					      sizeof why);
		if (rc < 0) {
			fail_open(k, err, rc, why);
			goto out_close;
		}
		k->npart = rc;
		k->rr = (uint32_t)shard;
	}
	return k;

out_close:
	ks_close(k);
	return NULL;
}

/* Produces one message, serving a full queue for at most timeout_ms. */
static int produce(struct ksink *k, struct kprod *p, int32_t part, const char *key, int klen,
		   const char *val, int vlen, sl_ts_t ts)
{
	const void *kp = klen >= 0 ? key : NULL;
	void *vp = vlen >= 0 ? (void *)val : NULL; /* copied: F_COPY */
	size_t kl = klen >= 0 ? (size_t)klen : 0, vl = vlen >= 0 ? (size_t)vlen : 0;
	int64_t deadline = 0;
	rd_kafka_resp_err_t e;

	for (;;) {
		e = rd_kafka_producev(p->rk, RD_KAFKA_V_RKT(p->rkt), RD_KAFKA_V_PARTITION(part),
				      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
				      RD_KAFKA_V_KEY(kp, kl), RD_KAFKA_V_VALUE(vp, vl),
				      RD_KAFKA_V_TIMESTAMP(ts > 0 ? ts : 0), RD_KAFKA_V_END);
		if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL)
			break;
		/* the broker is slow or away: serve reports, wait, but not forever */
		if (!deadline)
			deadline = now_ms() + timeout_of(k->cfg);
		else if (now_ms() >= deadline) {
			kerr_set(p->err, -ETIMEDOUT,
				 "kafka sink: topic '%s': producer queue full "
				 "for %d ms (%d messages unacknowledged): broker unreachable?",
				 k->cfg->topic, timeout_of(k->cfg), rd_kafka_outq_len(p->rk));
			return -ETIMEDOUT;
		}
		rd_kafka_poll(p->rk, 10);
	}
	if (e == RD_KAFKA_RESP_ERR__STATE && p->txid[0]) {
		/* the transaction is doomed by a request of it that failed: its delivery
		 * report names the cause, so serve the reports before saying anything
		 * (error path only) */
		rd_kafka_poll(p->rk, 100);
		if (kerr_code(p->err))
			return kerr_code(p->err);
	}
	if (e == RD_KAFKA_RESP_ERR__FATAL) {
		/* the producer failed for good before the error callback was served: name
		 * the cause (a newer run fencing this one, most likely) rather than "Fatal
		 * error" */
		set_fatal(p, p->rk);
		return kerr_code(p->err);
	}
	if (e) {
		char where[32] = "";

		if (part != RD_KAFKA_PARTITION_UA)
			snprintf(where, sizeof where, " partition %" PRId32, part);
		kerr_set(p->err,
			 fenced(e)	     ? -EPERM
			 : sl_kafka_errno(e) ? sl_kafka_errno(e)
					     : -EIO,
			 "kafka sink: topic '%s'%s: produce failed: %s", k->cfg->topic, where,
			 rd_kafka_err2str(e));
		return kerr_code(p->err);
	}
	if (++k->since_poll >= POLL_EVERY) {
		k->since_poll = 0;
		rd_kafka_poll(p->rk, 0);
	}
	return 0;
}

/* ---- exactly-once staging ---------------------------------------------------------------
 *
 * Both shards write into the group's one transactional producer. Row by row, two threads
 * in rd_kafka_producev() took the same librdkafka locks per message (the handle's message
 * counter, the topic's rwlock, the partitions' locks), and perf showed them contended
 * (futex waits and wakes, the lock cache lines moving between cores). So an instance copies
 * its encoded rows into its stage and produces them in bursts, one instance at a time:
 * the locks are then taken by one thread back to back. Still one producev per row
 * (rd_kafka_produce_batch() cannot carry the rows' timestamps), no change to the epochs:
 * the stage belongs to the current epoch and is emptied before its precommit and at the end
 * of input. Rows left in it when a run fails die with the run's transaction, as every row
 * of an uncommitted epoch does.
 */

/* Copies one encoded row in (room for a row must exist: n < STAGE_MAX). 0 or -ENOMEM.
 * Hot path: no allocation unless the rows outgrow the buffer. */
static int stage_put(struct stage *st, int32_t part, const char *key, int klen, const char *val,
		     int vlen, sl_ts_t ts)
{
	size_t kl = klen > 0 ? (size_t)klen : 0, vl = vlen > 0 ? (size_t)vlen : 0;
	struct staged *r = &st->rows[st->n];

	if (st->len + kl + vl > st->cap) {
		size_t cap = 2 * st->cap > st->len + kl + vl ? 2 * st->cap : st->len + kl + vl;
		char *nb = cap <= UINT32_MAX ? realloc(st->buf, cap) : NULL;

		if (!nb)
			return -ENOMEM;
		st->buf = nb;
		st->cap = cap;
	}
	r->koff = (uint32_t)st->len;
	if (kl) /* a null key or value has no pointer to copy from */
		memcpy(st->buf + st->len, key, kl);
	st->len += kl;
	r->voff = (uint32_t)st->len;
	if (vl)
		memcpy(st->buf + st->len, val, vl);
	st->len += vl;
	r->klen = klen;
	r->vlen = vlen;
	r->part = part;
	r->ts = ts;
	st->n++;
	return 0;
}

/* Produces the staged rows into the current epoch's producer, waiting for the group's
 * produce_lock or (wait false) only if it is free. 0 (also: not this time) or -errno (the
 * producer's sticky error; the rest of the stage is dropped with its doomed epoch). */
static int stage_flush(struct ksink *k, bool wait)
{
	struct stage *st = &k->st;
	struct kprod *p = cur_prod(k);
	int rc = 0;

	if (!st->n)
		return 0;
	if (wait)
		pthread_mutex_lock(&k->g->produce_lock);
	else if (pthread_mutex_trylock(&k->g->produce_lock))
		return 0; /* another instance's burst: keep staging */
	for (int i = 0; i < st->n && !rc; i++) {
		const struct staged *r = &st->rows[i];

		rc = produce(k, p, r->part, st->buf + r->koff, r->klen, st->buf + r->voff, r->vlen,
			     r->ts);
	}
	pthread_mutex_unlock(&k->g->produce_lock);
	st->n = 0;
	st->len = 0;
	return rc;
}

/* Exactly-once write: stage, then a burst once BURST rows wait. Hot path. */
static int stage_write(struct ksink *k, int32_t part, const char *key, int klen, const char *val,
		       int vlen, sl_ts_t ts)
{
	struct stage *st = &k->st;
	int rc;

	if (st->n == STAGE_MAX && (rc = stage_flush(k, true)) < 0)
		return rc;
	if ((rc = stage_put(st, part, key, klen, val, vlen, ts)) < 0)
		return rc;
	k->rows++;
	if (st->n >= BURST && (st->n - BURST) % BURST_RETRY == 0)
		return stage_flush(k, st->n == STAGE_MAX);
	return 0;
}

/* Hot path. */
static int ks_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	struct ksink *k = state;
	const struct sl_kafka_sink_cfg *cfg = k->cfg;
	struct kprod *p = cur_prod(k);
	const char *key = NULL, *val = NULL;
	int klen = -1, vlen = -1, rc;
	int32_t part = RD_KAFKA_PARTITION_UA;

	if ((rc = kerr_code(p->err)))
		return rc;
	if (row->kind != SL_ROW_INSERT && !cfg->upsert) {
		kerr_set(p->err, -EINVAL,
			 "kafka sink: topic '%s': got a %s row: 'kafka' takes "
			 "inserts only; write a changelog with 'upsert-kafka'",
			 cfg->topic, kind_name(row->kind));
		return -EINVAL;
	}
	if (cfg->key_format != SL_KSINK_NONE) {
		klen = encode(k, &k->key, row, &key);
		if (klen < -1)
			return klen;
	}
	/* upsert: a retraction or deletion is a tombstone for its key */
	if (!cfg->upsert || row->kind == SL_ROW_INSERT || row->kind == SL_ROW_UPDATE_AFTER) {
		vlen = encode(k, &k->val, row, &val);
		if (vlen < -1)
			return vlen;
	}
	if (cfg->partitioner == SL_KAFKA_PART_FIXED)
		part = k->shard % k->npart;
	else if (cfg->partitioner == SL_KAFKA_PART_ROUND_ROBIN)
		part = (int32_t)(k->rr++ % (uint32_t)k->npart);
	if (k->g)
		return stage_write(k, part, key, klen, val, vlen, ts);
	rc = produce(k, p, part, key, klen, val, vlen, ts);
	if (!rc)
		k->rows++;
	return rc;
}

/* Waits until everything p holds is acknowledged. 0 or the sticky error. */
static int drain(struct ksink *k, struct kprod *p)
{
	rd_kafka_resp_err_t e = rd_kafka_flush(p->rk, timeout_of(k->cfg));

	if (e == RD_KAFKA_RESP_ERR__TIMED_OUT)
		kerr_set(p->err, -ETIMEDOUT,
			 "kafka sink: topic '%s': %d messages not "
			 "acknowledged within %d ms: broker unreachable?",
			 k->cfg->topic, rd_kafka_outq_len(p->rk), timeout_of(k->cfg));
	return kerr_code(p->err);
}

static int put_meta(struct ksink *k, uint64_t ckpt, int slot, void *meta, size_t cap, size_t *len)
{
	int n = snprintf(meta, cap, META_MAGIC " %016" PRIx64 " %d %" PRIu64 " %" PRIu64 " %d\n",
			 k->g->run, slot, k->epoch, ckpt, k->shard);

	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	*len = (size_t)n;
	return 0;
}

static int ks_precommit(void *state, uint64_t ckpt, void *meta, size_t cap, size_t *len)
{
	struct ksink *k = state;
	struct kgroup *g = k->g;
	struct kprod *p = cur_prod(k), *q;
	int rc, slot = (int)(k->epoch & 1);

	*len = 0;
	if (k->cfg->guarantee == SL_KAFKA_NONE) {
		rd_kafka_poll(p->rk, 0);
		return 0;
	}
	if (g && (rc = stage_flush(k, true)) < 0)
		return rc;
	if ((rc = drain(k, p)) < 0)
		return rc;
	if (!g)
		return 0; /* at-least-once: acknowledged is all a checkpoint needs */
	pthread_mutex_lock(&g->lock);
	if ((rc = kerr_code(&g->err)))
		goto out_unlock;
	if (g->ended && g->ended_min_epoch <= k->epoch) {
		/* an instance ended without this barrier: the checkpoint cannot complete; rows
		 * stay in this epoch for the end of input's commit */
		goto out_unlock;
	}
	p->rows += k->rows;
	p->ckpt = ckpt;
	k->rows = 0;
	q = &g->slot[(k->epoch + 1) & 1];
	if (q->epoch + 2 == k->epoch + 1) {
		/* epoch - 1's checkpoint never committed (it failed) */
		if (q->rows) {
			kerr_set(&g->err, -EIO,
				 "kafka sink: topic '%s': checkpoint before %" PRIu64
				 " failed after its transaction was filled; exactly-once needs a "
				 "restart from the last complete checkpoint",
				 k->cfg->topic, ckpt);
			rc = -EIO;
			goto out_unlock;
		}
		q->epoch += 2; /* empty: it serves the next epoch as it is */
	}
	if (q->epoch != k->epoch + 1) {
		kerr_set(&g->err, -EPROTO,
			 "kafka sink: topic '%s': instance %d at epoch %" PRIu64
			 " finds the next transaction at epoch %" PRIu64,
			 k->cfg->topic, k->shard, k->epoch, q->epoch);
		rc = -EPROTO;
		goto out_unlock;
	}
	rc = put_meta(k, ckpt, slot, meta, cap, len);
	if (!rc)
		k->epoch++;
out_unlock:
	pthread_mutex_unlock(&g->lock);
	return rc;
}

/* Under g->lock: commits slot p (epoch's transaction), with the marker "<ckpt> <run>"
 * unless ckpt is 0, and begins the slot's next one. The run in the marker keeps a
 * checkpoint id that a later run reuses from matching an earlier run's marker. */
static int slot_commit(struct kgroup *g, struct kprod *p, uint64_t ckpt)
{
	char what[64], num[48];
	rd_kafka_resp_err_t e;
	int rc, n;

	if (ckpt) {
		n = snprintf(num, sizeof num, "%" PRIu64 " %016" PRIx64, ckpt, g->run);
		e = rd_kafka_producev(p->rk, RD_KAFKA_V_RKT(p->mkt), RD_KAFKA_V_PARTITION(0),
				      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
				      RD_KAFKA_V_KEY(g->cfg->transactional_id_prefix,
						     strlen(g->cfg->transactional_id_prefix)),
				      RD_KAFKA_V_VALUE(num, (size_t)n), RD_KAFKA_V_END);
		if (e) {
			kerr_set(&g->err, -EIO,
				 "kafka sink: topic '%s': producing the marker of "
				 "checkpoint %" PRIu64 " to '%s': %s",
				 g->cfg->topic, ckpt, rd_kafka_topic_name(p->mkt),
				 rd_kafka_err2str(e));
			return -EIO;
		}
		snprintf(what, sizeof what, "checkpoint %" PRIu64, ckpt);
	} else {
		snprintf(what, sizeof what, "the end of input");
	}
	rc = txn_commit(p, what);
	if (rc)
		return rc;
	sl_fault_point("kafka-txn-ended", ckpt);
	p->epoch += 2;
	p->rows = 0;
	p->ckpt = 0;
	rc = begin(p);
	if (!rc)
		sl_fault_point("kafka-txn-begun", ckpt);
	return rc;
}

struct meta {
	uint64_t run, epoch, ckpt;
	int slot, shard;
};

static int parse_meta(const void *meta, size_t len, struct meta *m)
{
	char buf[160];
	int end = 0;

	if (len >= sizeof buf)
		return -EINVAL;
	memcpy(buf, meta, len);
	buf[len] = '\0';
	if (sscanf(buf, META_MAGIC " %" SCNx64 " %d %" SCNu64 " %" SCNu64 " %d\n%n", &m->run,
		   &m->slot, &m->epoch, &m->ckpt, &m->shard, &end) != 5 ||
	    (size_t)end != len || (m->slot != 0 && m->slot != 1) ||
	    (m->epoch & 1) != (uint64_t)m->slot)
		return -EINVAL;
	return 0;
}

/* ---- recovery: fencing and the marker topic --------------------------------------------- */

/* Fences both transactional ids: whatever a dead run left open is aborted (or, if it was
 * already committing, completed) before this returns. */
static int fence(const struct sl_kafka_sink_cfg *cfg)
{
	char why[512];

	for (int s = 0; s < 2; s++) {
		struct kerr err = { 0 };
		struct kprod p;
		int rc = prod_init(&p, cfg, &err, s, why, sizeof why);

		if (rc) {
			fprintf(stderr, "sluice: kafka sink: topic '%s': fencing: %s\n", cfg->topic,
				why);
			return rc;
		}
		prod_fini(&p);
	}
	return 0;
}

/* Looks for the committed marker (prefix, "ckpt run") in partition 0 of the marker topic,
 * reading back in windows from the end until it is found or an older marker of ours shows
 * that it would have been seen (markers of one prefix are committed in checkpoint order).
 * Returns 1 found, 0 not, or -errno. */
static int marker_find(const struct sl_kafka_sink_cfg *cfg, uint64_t ckpt, uint64_t run,
		       uint64_t *newest)
{
	const char *pfx = cfg->transactional_id_prefix;
	size_t plen = strlen(pfx);
	int64_t lo, hi, from, window = SCAN_WINDOW, deadline = now_ms() + timeout_of(cfg);
	rd_kafka_topic_partition_list_t *tp;
	rd_kafka_resp_err_t e;
	rd_kafka_conf_t *conf;
	char why[512], mt[256];
	const char *topic = marker_topic(cfg, mt, sizeof mt);
	rd_kafka_t *rk;
	int rc = 0;

	conf = rd_kafka_conf_new();
	if (!conf)
		return -ENOMEM;
	if (sl_kafka_props_apply(conf, cfg->prop_keys, cfg->prop_vals, cfg->nprops, why,
				 sizeof why) ||
	    sl_kafka_props_set(conf, "isolation.level", "read_committed", why, sizeof why) ||
	    sl_kafka_props_set(conf, "enable.partition.eof", "true", why, sizeof why) ||
	    sl_kafka_props_set(conf, "enable.auto.commit", "false", why, sizeof why) ||
	    sl_kafka_props_set(conf, "group.id", "sluice-marker-reader", why, sizeof why)) {
		rd_kafka_conf_destroy(conf);
		fprintf(stderr, "sluice: kafka sink: reading markers: %s\n", why);
		return -EINVAL;
	}
	rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, why, sizeof why);
	if (!rk) {
		rd_kafka_conf_destroy(conf);
		fprintf(stderr, "sluice: kafka sink: reading markers: %s\n", why);
		return -EINVAL;
	}
	e = rd_kafka_query_watermark_offsets(rk, topic, 0, &lo, &hi, timeout_of(cfg));
	if (e == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || e == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
	    e == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION)
		goto out_destroy; /* never a marker written: not found */
	if (e) {
		rc = sl_kafka_errno(e) ? sl_kafka_errno(e) : -EIO;
		fprintf(stderr, "sluice: kafka sink: marker topic '%s': %s\n", topic,
			rd_kafka_err2str(e));
		goto out_destroy;
	}
	for (int64_t end = hi; end > lo && rc == 0; end = from, window *= 2) {
		bool older = false, eof = false;

		from = end - window > lo ? end - window : lo;
		tp = rd_kafka_topic_partition_list_new(1);
		rd_kafka_topic_partition_list_add(tp, topic, 0)->offset = from;
		e = rd_kafka_assign(rk, tp);
		rd_kafka_topic_partition_list_destroy(tp);
		while (!e && !eof && rc == 0) {
			rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);

			if (now_ms() > deadline) {
				rc = -ETIMEDOUT;
				fprintf(stderr,
					"sluice: kafka sink: marker topic '%s': no answer "
					"within %d ms\n",
					topic, timeout_of(cfg));
			}
			if (!m)
				continue;
			if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
				eof = true;
			} else if (m->err) {
				rc = sl_kafka_errno(m->err) ? sl_kafka_errno(m->err) : -EIO;
				fprintf(stderr, "sluice: kafka sink: marker topic '%s': %s\n",
					topic, rd_kafka_message_errstr(m));
			} else if (m->offset >= end) {
				eof = true; /* the window before was read already */
			} else if (m->key_len == plen && !memcmp(m->key, pfx, plen) && m->len &&
				   m->len < 48) {
				char num[48];
				uint64_t v, r = 0;

				memcpy(num, m->payload, m->len);
				num[m->len] = '\0';
				if (sscanf(num, "%" SCNu64 " %" SCNx64, &v, &r) == 2) {
					if (v > *newest)
						*newest = v;
					if (v == ckpt && r == run)
						rc = 1;
					older |= v < ckpt;
				}
			}
			rd_kafka_message_destroy(m);
		}
		if (e) {
			rc = -EIO;
			fprintf(stderr, "sluice: kafka sink: marker topic '%s': assign: %s\n",
				topic, rd_kafka_err2str(e));
		}
		if (older)
			break;
	}
out_destroy:
	rd_kafka_consumer_close(rk);
	rd_kafka_destroy(rk);
	return rc;
}

/* ---- commit, abort, end of input -------------------------------------------------------- */

static int ks_commit(const void *cfgp, uint64_t ckpt, const void *meta, size_t len)
{
	const struct sl_kafka_sink_cfg *cfg = cfgp;
	struct kgroup *g;
	struct kprod *p;
	uint64_t newest = 0;
	struct meta m;
	bool live;
	int rc;

	if (!len)
		return 0; /* at-least-once or none: nothing pre-committed */
	if (parse_meta(meta, len, &m) < 0)
		return -EINVAL;
	g = group_find(cfg, m.run, &live);
	if (!g) {
		/* recovery: the run that wrote this is gone; its transaction decided once its
		 * producers are fenced (never those of a run still open in this process) */
		rc = live ? 0 : fence(cfg);
		if (rc < 0)
			return rc;
		rc = marker_find(cfg, ckpt, m.run, &newest);
		if (rc == 0) {
			fprintf(stderr,
				"sluice: kafka sink: topic '%s': checkpoint %" PRIu64 " was "
				"not committed to Kafka before the run ended; going back "
				"one checkpoint\n",
				cfg->topic, ckpt);
			return -ESTALE;
		}
		return rc < 0 ? rc : 0;
	}
	pthread_mutex_lock(&g->lock);
	p = &g->slot[m.slot];
	if ((rc = kerr_code(&g->err)))
		;
	else if (p->epoch > m.epoch)
		rc = 0; /* another instance's meta committed it, or the end of input did */
	else if (p->epoch < m.epoch)
		rc = -EINVAL;
	else
		rc = slot_commit(g, p, ckpt);
	pthread_mutex_unlock(&g->lock);
	group_put(g);
	return rc;
}

static int ks_abort_pending(const void *cfgp, int shard, int nshards, uint64_t ckpt)
{
	const struct sl_kafka_sink_cfg *cfg = cfgp;
	uint64_t newest = 0;
	int rc;

	(void)nshards;
	if (cfg->guarantee != SL_KAFKA_EXACTLY_ONCE || shard != 0)
		return 0; /* the ids are the sink's, not a shard's: fence them once */
	rc = fence(cfg);
	if (rc || !ckpt)
		return rc;
	/* Kafka cannot take committed output back: if recovery skipped a newer checkpoint
	 * whose transaction committed (a broken manifest, an older savepoint), its rows will
	 * be written again. Say so; refusing would leave no way to restore at all. */
	rc = marker_find(cfg, ckpt, 0, &newest);
	if (rc >= 0 && newest > ckpt)
		fprintf(stderr,
			"sluice: kafka sink: topic '%s': checkpoint %" PRIu64 "'s output is "
			"already committed, restoring %" PRIu64 " writes the rows in between "
			"again\n",
			cfg->topic, newest, ckpt);
	return rc < 0 ? rc : 0;
}

/* End of input: rows become visible. Exactly-once: the last instance to end commits what
 * no checkpoint did, oldest transaction first (as the filesystem sink's flush, this is not
 * covered by a checkpoint). */
static int ks_flush(void *state)
{
	struct ksink *k = state;
	struct kgroup *g = k->g;
	int rc;

	if (!g)
		return drain(k, &k->own);
	if ((rc = stage_flush(k, true)) < 0 || (rc = drain(k, cur_prod(k))) < 0)
		return rc;
	pthread_mutex_lock(&g->lock);
	if ((rc = kerr_code(&g->err)))
		goto out_unlock;
	if (!k->ended) {
		k->ended = true;
		g->ended++;
		if (k->epoch < g->ended_min_epoch)
			g->ended_min_epoch = k->epoch;
	}
	cur_prod(k)->rows += k->rows;
	k->rows = 0;
	if (g->ended < g->nshards)
		goto out_unlock;
	for (int i = 0; i < 2 && !rc; i++) {
		struct kprod *p = &g->slot[g->slot[0].epoch < g->slot[1].epoch ? i : 1 - i];

		if (p->rows)
			rc = slot_commit(g, p, p->ckpt);
	}
out_unlock:
	pthread_mutex_unlock(&g->lock);
	return rc;
}

static void ks_close(void *state)
{
	struct ksink *k = state;

	if (!k)
		return;
	if (k->g)
		group_put(k->g);
	if (k->own.rk) {
		rd_kafka_poll(k->own.rk, 0);
		if (k->cfg->errors)
			__atomic_fetch_add(k->cfg->errors, atomic_load(&k->own_err.lost),
					   __ATOMIC_RELAXED);
	}
	prod_fini(&k->own);
	enc_fini(&k->key);
	enc_fini(&k->val);
	stage_fini(&k->st);
	free(k->proj);
	free(k);
}

const char *sl_kafka_sink_error(void *state)
{
	struct ksink *k = state;

	return k->g ? kerr_msg(&k->g->err) : kerr_msg(&k->own_err);
}

const struct sl_sink_ops sl_kafka_sink_ops = {
	.name = "kafka",
	.open = ks_open,
	.write = ks_write,
	.flush = ks_flush,
	.close = ks_close,
	.precommit = ks_precommit,
	.commit = ks_commit,
	.abort_pending = ks_abort_pending,
	.commit_may_be_lost = true, /* an epoch dies with its producer: -ESTALE */
};
