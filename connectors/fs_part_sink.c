/*
 * fs_part_sink.c - the partitioned filesystem sink (Flink's `PARTITIONED BY`): each row goes
 * to the partition directory its partition columns name, `<root>/c1=v1/c2=v2/`, and is
 * written there without those columns by one sl_jsonl_sink_ops instance per partition (a
 * "bucket", as Flink's FileSink calls it), so every directory gets the part files, the
 * two-phase commit and the recovery of the unpartitioned sink (jsonl_sink.c), unchanged.
 *
 * A bucket's life (function of each transition in brackets):
 *
 *   (none) --[write: first row of its partition]--> OPEN (instance, directory made)
 *   OPEN --[precommit: no row since the last one, no file left to publish;
 *           or, without checkpoints, idle for inactivity_ms (tick)]--> CLOSED (no fd)
 *   CLOSED --[write]--> OPEN
 *   CLOSED, committed (_SUCCESS seen) --[precommit]--> forgotten
 *
 * Partition commit (success file): a bucket with rows not yet covered by a _SUCCESS is
 * "unsettled"; at a precommit where its trigger holds on this shard (process time past its
 * creation + delay; or this shard's watermark past its partition time + delay) its record
 * in the meta carries the flag 'S', and commit() creates the success file after that
 * checkpoint's renames once every shard allows it (the commit records, below), so the
 * marker never precedes any shard's files. It stays flagged in every later meta until a
 * precommit finds the file there (a checkpoint that fails does not lose the commit).
 *
 * Meta: "sluice-fs-part 1 <n> <shard> <nshards> <watermark>\n" then n records
 * "<flag> <rel-len> <meta-len> <partition time>\n<rel><meta>" (rel: the partition directory
 * relative to the root; meta: that bucket's jsonl meta). It is
 * checked whole before anything is renamed. Recovery (abort_pending) walks every partition
 * directory under the root and runs the jsonl recovery in each.
 *
 * Cost: per row, the partition path is built (escaping the values) and compared with the
 * previous row's (consecutive rows of one partition, the usual case, skip the hash lookup),
 * and the row is copied without its partition columns. Each open bucket holds two fds and
 * a 64 KiB buffer; the meta of all buckets must fit the checkpoint's 64 KiB sink meta.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sluice/connectors.h>

#include "file_partitions.h"
#include "sink_io.h"

#define PART_META_MAGIC "sluice-fs-part 1 "
#define REL_MAX		1024
#define BUCKET_BUF	(64u << 10)
#define NHASH		256  /* heads; chains grow past it, fine for thousands of partitions */
#define TICK_ROWS	1024 /* rows between looks at the clock */
#define INNER_MAX	65536

struct bucket {
	struct bucket *next; /* hash chain */
	char *rel;	     /* "c1=v1/c2=v2" */
	uint64_t hash;
	struct sl_jsonl_sink_cfg cfg; /* file cfg with path = root/rel */
	void *inst;		      /* NULL: CLOSED */
	sl_ts_t ptime;		      /* partition time (partition-time trigger) */
	int64_t created_ms;	      /* processing time of its first row (process-time) */
	int64_t last_row_ms;	      /* processing time of the latest tick that saw a row */
	bool tick_rows;		      /* rows since the last tick */
	int64_t file_since_ms;	      /* when the current part file got its first row; 0: none */
	bool rows;		      /* rows since the last precommit */
	bool unsettled;		      /* rows no success file covers yet */
	bool flagged;		      /* 'S' in a meta; the file may not exist yet */
	bool rows_after_flag;
};

struct fspart_sink {
	const struct sl_fspart_sink_cfg *cfg;
	const struct sl_schema *schema; /* the table's */
	struct sl_schema *data;		/* without the partition columns */
	bool is_part[SL_SCHEMA_MAX_FIELDS];
	int shard, nshards;
	struct bucket *heads[NHASH];
	struct bucket *last; /* the previous row's bucket */
	char rel[REL_MAX];
	void *rowbuf;
	uint32_t rowcap;
	char *inner; /* a bucket's jsonl meta, INNER_MAX bytes */
	sl_ts_t wm;
	uint32_t rows_to_tick;
	int64_t last_tick_ms;
	int err; /* sticky */
};

static int64_t now_ms(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static const char *default_name(const struct sl_fspart_sink_cfg *cfg)
{
	return cfg->default_name ? cfg->default_name : "__DEFAULT_PARTITION__";
}

static const char *success_name(const struct sl_fspart_sink_cfg *cfg)
{
	return cfg->success_name ? cfg->success_name : "_SUCCESS";
}

/* ---- partition paths ------------------------------------------------------------------- */

/* The characters Flink's PartitionPathUtils escapes as %XX (bytes >= 0x80 stay). */
static bool must_escape(unsigned char c)
{
	return (c >= 0x01 && c <= 0x1f) || c == 0x7f || (c && strchr("\"#%'*/:=?\\{[]}^", c));
}

static int put_escaped(char *out, size_t *n, const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (*n + 4 >= REL_MAX)
			return -ENAMETOOLONG;
		if (must_escape(c)) {
			out[(*n)++] = '%';
			out[(*n)++] = hex[c >> 4];
			out[(*n)++] = hex[c & 15];
		} else {
			out[(*n)++] = (char)c;
		}
	}
	return 0;
}

/* The value of field f as Flink's partition computer turns it into text (toString()). */
static int value_text(const struct fspart_sink *p, const struct sl_row *row, int f, char *tmp,
		      const char **s, size_t *len)
{
	uint32_t l;

	if (sl_row_is_null(row, f)) {
		*s = default_name(p->cfg);
		*len = strlen(*s);
		return 0;
	}
	switch (sl_schema_type(p->schema, f)) {
	case SL_TYPE_STRING:
		*s = sl_row_str(row, f, &l);
		*len = l;
		break;
	case SL_TYPE_INT:
	case SL_TYPE_BIGINT:
		*len = (size_t)snprintf(tmp, 24, "%" PRId64, sl_row_i64(row, f));
		*s = tmp;
		break;
	case SL_TYPE_BOOL:
		*s = sl_row_bool(row, f) ? "true" : "false";
		*len = strlen(*s);
		break;
	case SL_TYPE_DATE: {
		time_t t = (time_t)sl_row_i64(row, f) * 86400;
		struct tm tm;

		gmtime_r(&t, &tm);
		*len = (size_t)snprintf(tmp, 24, "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1,
					tm.tm_mday);
		*s = tmp;
		break;
	}
	default:
		return -EINVAL; /* refused at plan time */
	}
	if (*len == 0) {
		*s = default_name(p->cfg);
		*len = strlen(*s);
	}
	return 0;
}

/* Builds p->rel for row. Hot path: no allocation; snprintf only for integer values. */
static int make_rel(struct fspart_sink *p, const struct sl_row *row, size_t *out)
{
	size_t n = 0, len;
	const char *s;
	char tmp[24];
	int rc;

	for (int i = 0; i < p->cfg->npart; i++) {
		int f = p->cfg->part[i];
		const char *name = sl_schema_name(p->schema, f);

		if (i)
			p->rel[n++] = '/';
		if ((rc = put_escaped(p->rel, &n, name, strlen(name))) < 0)
			return rc;
		p->rel[n++] = '=';
		if ((rc = value_text(p, row, f, tmp, &s, &len)) < 0 ||
		    (rc = put_escaped(p->rel, &n, s, len)) < 0)
			return rc;
	}
	p->rel[n] = '\0';
	*out = n;
	return 0;
}

static uint64_t hash_rel(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

/* The value of partition column `name` in rel (unescaped) into out; false when rel has
 * none (or it does not fit). */
static bool rel_value(const char *rel, const char *name, char *out, size_t cap)
{
	size_t nl = strlen(name);

	for (const char *c = rel; c && *c; c = strchr(c, '/') ? strchr(c, '/') + 1 : NULL) {
		const char *end = strchr(c, '/');
		size_t cl = end ? (size_t)(end - c) : strlen(c);

		if (cl > nl && !strncmp(c, name, nl) && c[nl] == '=')
			return sl_fs_unescape(c + nl + 1, cl - nl - 1, out, cap) >= 0;
	}
	return false;
}

/* Reads 'yyyy-MM-dd[ HH:mm[:ss[.SSS]]]' (one-digit month, day, hour accepted) as UTC ms. */
static int parse_time(const char *s, sl_ts_t *ms)
{
	int y, mo, d, h = 0, mi = 0, sec = 0, n = 0, frac = 0;
	struct tm tm = { 0 };

	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3)
		return -EINVAL;
	s += n;
	if (*s == ' ' || *s == 'T') {
		if (sscanf(s + 1, "%2d:%2d%n", &h, &mi, &n) != 2)
			return -EINVAL;
		s += 1 + n;
		if (*s == ':') {
			if (sscanf(s + 1, "%2d%n", &sec, &n) != 1)
				return -EINVAL;
			s += 1 + n;
			if (*s == '.') {
				for (int k = 0; k < 3; k++)
					frac = frac * 10 +
					       (s[1] >= '0' && s[1] <= '9' ? *++s - '0' : 0);
				while (s[1] >= '0' && s[1] <= '9')
					s++;
				s++;
			}
		}
	}
	if (*s || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59)
		return -EINVAL;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	*ms = (sl_ts_t)timegm(&tm) * 1000 + frac;
	return 0;
}

/* The partition time of rel: time_pattern with each $name replaced by its value. */
static int partition_time(const struct fspart_sink *p, const char *rel, sl_ts_t *ms)
{
	const char *pat = p->cfg->time_pattern;
	char text[256], val[256];
	size_t n = 0;

	if (!pat) {
		if (!rel_value(rel, sl_schema_name(p->schema, p->cfg->part[0]), val, sizeof val))
			return -EINVAL;
		return parse_time(val, ms);
	}
	while (*pat && n + 1 < sizeof text) {
		if (*pat == '$') {
			size_t l = 1;

			while (pat[l] == '_' || (pat[l] >= '0' && pat[l] <= '9') ||
			       ((pat[l] | 32) >= 'a' && (pat[l] | 32) <= 'z'))
				l++;
			char name[128];

			snprintf(name, sizeof name, "%.*s", (int)(l - 1), pat + 1);
			if (!rel_value(rel, name, val, sizeof val))
				return -EINVAL;
			n += (size_t)snprintf(text + n, sizeof text - n, "%s", val);
			if (n >= sizeof text)
				return -EINVAL;
			pat += l;
		} else {
			text[n++] = *pat++;
		}
	}
	text[n] = '\0';
	return parse_time(text, ms);
}

/* ---- buckets --------------------------------------------------------------------------- */

static int mkdirs(char *path)
{
	for (char *s = path + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		int rc = mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
		*s = '/';
		if (rc < 0)
			return rc;
	}
	return mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

static int bucket_open(struct fspart_sink *p, struct bucket *b)
{
	char *path = (char *)b->cfg.path;
	struct sl_error err = { 0 };
	int rc;

	/* a few mkdir(2) per bucket opened, each EEXIST but the new levels */
	if ((rc = mkdirs(path)) < 0)
		return rc;
	b->inst = sl_jsonl_sink_ops.open(&b->cfg, p->data, p->shard, p->nshards, &err);
	if (!b->inst) {
		fprintf(stderr, "filesystem sink: partition '%s': %s\n", b->rel, err.msg);
		return err.code ? err.code : -EIO;
	}
	return 0;
}

static void bucket_free(struct bucket *b)
{
	if (!b)
		return;
	if (b->inst)
		sl_jsonl_sink_ops.close(b->inst);
	free((char *)b->cfg.path);
	free(b->rel);
	free(b);
}

/* CLOSED: at-least-once rows are written out, exactly-once files wait for their commit
 * (close() publishes nothing), so call it only when the bucket's meta is empty. */
static int bucket_close(struct bucket *b)
{
	int rc = 0;

	if (!b->inst)
		return 0;
	if (!b->cfg.exactly_once)
		rc = sl_jsonl_sink_ops.flush(b->inst);
	sl_jsonl_sink_ops.close(b->inst);
	b->inst = NULL;
	return rc;
}

static struct bucket *bucket_get(struct fspart_sink *p, size_t n, int *rc)
{
	uint64_t h = hash_rel(p->rel, n);
	struct bucket **head = &p->heads[h % NHASH], *b;
	size_t rl = strlen(p->cfg->file.path);
	char *path;

	for (b = *head; b; b = b->next)
		if (b->hash == h && !strcmp(b->rel, p->rel))
			return b;
	b = calloc(1, sizeof(*b));
	path = malloc(rl + n + 2);
	if (!b || !path || !(b->rel = strdup(p->rel))) {
		free(path);
		if (b)
			free(b->rel);
		free(b);
		*rc = -ENOMEM;
		return NULL;
	}
	sprintf(path, "%s/%s", p->cfg->file.path, p->rel);
	b->cfg = p->cfg->file;
	b->cfg.path = path;
	b->cfg.buf_bytes = BUCKET_BUF;
	b->hash = h;
	b->created_ms = now_ms(CLOCK_REALTIME);
	if (p->cfg->partition_time && (*rc = partition_time(p, b->rel, &b->ptime)) < 0) {
		fprintf(stderr,
			"filesystem sink: partition '%s': its values do not make a time "
			"of 'partition.time-extractor.timestamp-pattern' "
			"(yyyy-MM-dd[ HH:mm:ss])\n",
			b->rel);
		bucket_free(b);
		return NULL;
	}
	b->next = *head;
	*head = b;
	return b;
}

/* ---- instance -------------------------------------------------------------------------- */

static void *fspart_open(const void *cfgp, const struct sl_schema *schema, int shard, int nshards,
			 struct sl_error *err)
{
	const struct sl_fspart_sink_cfg *cfg = cfgp;
	struct fspart_sink *p = calloc(1, sizeof(*p));
	int nf = sl_schema_nfields(schema);

	if (!p)
		goto out_nomem;
	p->cfg = cfg;
	p->schema = schema;
	p->shard = shard;
	p->nshards = nshards;
	p->wm = INT64_MIN;
	p->rows_to_tick = TICK_ROWS;
	p->last_tick_ms = now_ms(CLOCK_MONOTONIC);
	p->data = sl_schema_create();
	if (!p->data)
		goto out_nomem;
	for (int i = 0; i < cfg->npart; i++)
		p->is_part[cfg->part[i]] = true;
	for (int i = 0; i < nf; i++)
		if (!p->is_part[i] &&
		    sl_schema_add_like(p->data, sl_schema_name(schema, i), schema, i) < 0)
			goto out_nomem;
	p->rowcap = 4096;
	p->rowbuf = malloc(p->rowcap);
	p->inner = malloc(INNER_MAX);
	if (!p->rowbuf || !p->inner)
		goto out_nomem;
	return p;

out_nomem:
	if (p) {
		sl_schema_destroy(p->data);
		free(p->rowbuf);
		free(p->inner);
		free(p);
	}
	err->code = -ENOMEM;
	snprintf(err->msg, sizeof err->msg, "filesystem sink '%.160s': out of memory",
		 cfg->file.path);
	return NULL;
}

static void fspart_close(void *state)
{
	struct fspart_sink *p = state;

	if (!p)
		return;
	for (int h = 0; h < NHASH; h++)
		for (struct bucket *b = p->heads[h], *nx; b; b = nx) {
			nx = b->next;
			bucket_free(b);
		}
	sl_schema_destroy(p->data);
	free(p->rowbuf);
	free(p->inner);
	free(p);
}

/* Every check_ms: without checkpoints, close buckets idle for inactivity_ms; with
 * exactly-once, roll files open for rollover_ms. O(buckets), once a check interval. */
static int tick(struct fspart_sink *p)
{
	int64_t now = now_ms(CLOCK_MONOTONIC);
	int rc;

	p->rows_to_tick = TICK_ROWS;
	if (!p->cfg->check_ms || now - p->last_tick_ms < p->cfg->check_ms)
		return 0;
	p->last_tick_ms = now;
	for (int h = 0; h < NHASH; h++)
		for (struct bucket *b = p->heads[h]; b; b = b->next) {
			if (!b->inst)
				continue;
			if (b->cfg.exactly_once && p->cfg->rollover_ms && b->file_since_ms &&
			    now - b->file_since_ms >= p->cfg->rollover_ms) {
				if ((rc = sl_jsonl_sink_roll(b->inst)) < 0)
					return rc;
				b->file_since_ms = 0;
			}
			if (b->tick_rows) {
				b->tick_rows = false;
				b->last_row_ms = now;
			} else if (!b->cfg.exactly_once && p->cfg->inactivity_ms &&
				   now - b->last_row_ms >= p->cfg->inactivity_ms) {
				if (p->last == b)
					p->last = NULL;
				if ((rc = bucket_close(b)) < 0)
					return rc;
			}
		}
	return 0;
}

/* Hot path: the partition path, a compare (or a hash lookup on a change of partition), a
 * copy of the other columns, the bucket's encoding. */
static int fspart_write(void *state, sl_ts_t ts, const struct sl_row *row)
{
	struct fspart_sink *p = state;
	struct sl_row_builder rb;
	const struct sl_row *out;
	struct bucket *b;
	size_t n;
	int rc, k = 0;

	if (p->err)
		return p->err;
	if ((rc = make_rel(p, row, &n)) < 0)
		return p->err = rc;
	b = p->last;
	if (!b || strcmp(b->rel, p->rel)) {
		if (!(b = bucket_get(p, n, &rc)))
			return p->err = rc;
		p->last = b;
	}
	if (!b->inst && (rc = bucket_open(p, b)) < 0)
		return p->err = rc;
	if (row->size > p->rowcap) {
		void *nb = realloc(p->rowbuf, row->size);

		if (!nb)
			return -ENOMEM;
		p->rowbuf = nb;
		p->rowcap = row->size;
	}
	sl_rowb_init(&rb, p->rowbuf, p->rowcap, row->nfields - p->cfg->npart);
	for (int i = 0; i < row->nfields; i++)
		if (!p->is_part[i])
			sl_rowb_copy_field(&rb, k++, row, i, sl_schema_type(p->schema, i));
	sl_rowb_set_kind(&rb, (enum sl_row_kind)row->kind);
	if (!(out = sl_rowb_finish(&rb)))
		return p->err = -E2BIG;
	if ((rc = sl_jsonl_sink_ops.write(b->inst, ts, out)) < 0)
		return p->err = rc;
	if (!b->file_since_ms)
		b->file_since_ms = b->last_row_ms = now_ms(CLOCK_MONOTONIC);
	b->rows = b->tick_rows = true;
	if (p->cfg->success_file) {
		b->unsettled = true;
		if (b->flagged)
			b->rows_after_flag = true;
	}
	if (--p->rows_to_tick == 0 && (rc = tick(p)) < 0)
		return p->err = rc;
	return 0;
}

static void fspart_watermark(void *state, sl_ts_t wm)
{
	struct fspart_sink *p = state;

	p->wm = wm;
}

static bool committable(const struct fspart_sink *p, const struct bucket *b)
{
	if (p->cfg->partition_time)
		return p->wm != INT64_MIN && p->wm > b->ptime + p->cfg->delay_ms;
	return now_ms(CLOCK_REALTIME) >= b->created_ms + p->cfg->delay_ms;
}

static bool success_present(const struct fspart_sink *p, const struct bucket *b)
{
	char path[4096];

	snprintf(path, sizeof path, "%s/%s", b->cfg.path, success_name(p->cfg));
	return access(path, F_OK) == 0;
}

static int fspart_precommit(void *state, uint64_t ckpt, void *meta, size_t cap, size_t *len)
{
	struct fspart_sink *p = state;
	char *m = meta, *inner = p->inner;
	size_t off, ilen, nrec = 0;
	int rc;

	*len = 0;
	if (p->err)
		return p->err;
	/* the count is written last, into a fixed-width field; the header says whose meta it
	 * is and how far its watermark was (for the commit records, below) */
	off = (size_t)snprintf(m, cap, PART_META_MAGIC "%08d %d %d %" PRId64 "\n", 0, p->shard,
			       p->nshards, (int64_t)p->wm);
	if (off >= cap)
		return -ENOSPC;
	for (int h = 0; h < NHASH; h++)
		for (struct bucket **pb = &p->heads[h], *b; (b = *pb);) {
			bool flag;

			ilen = 0;
			if (b->inst && (rc = sl_jsonl_sink_ops.precommit(b->inst, ckpt, inner,
									 INNER_MAX, &ilen)) < 0)
				return p->err = rc;
			b->file_since_ms = 0;
			if (b->flagged && !b->rows_after_flag && success_present(p, b))
				b->unsettled = b->flagged = false;
			flag = b->unsettled && committable(p, b);
			if (flag) {
				b->flagged = true;
				b->rows_after_flag = false;
			}
			if (!b->rows && b->inst && sl_jsonl_meta_empty(inner, ilen)) {
				if (p->last == b)
					p->last = NULL;
				if ((rc = bucket_close(b)) < 0)
					return p->err = rc;
			}
			b->rows = false;
			if (!flag && sl_jsonl_meta_empty(inner, ilen)) {
				if (!b->inst && !b->unsettled) {
					*pb = b->next; /* committed and closed: forgotten */
					if (p->last == b)
						p->last = NULL;
					bucket_free(b);
					continue;
				}
				pb = &b->next;
				continue;
			}
			pb = &b->next;
			if (off + strlen(b->rel) + ilen + 48 > cap)
				return -ENOSPC;
			off += (size_t)sprintf(m + off, "%c %zu %zu %" PRId64 "\n",
					       flag ? 'S' : '-', strlen(b->rel), ilen,
					       (int64_t)b->ptime);
			memcpy(m + off, b->rel, strlen(b->rel));
			off += strlen(b->rel);
			memcpy(m + off, inner, ilen);
			off += ilen;
			nrec++;
		}
	if (nrec > 99999999)
		return -ENOSPC;
	char cnt[9];

	snprintf(cnt, sizeof cnt, "%08zu", nrec);
	memcpy(m + strlen(PART_META_MAGIC), cnt, 8);
	*len = off;
	return 0;
}

/* Whether rel is a path this sink makes: "a=b[/c=d...]", no empty, '.' or '..' part. */
static bool valid_rel(const char *rel, size_t n)
{
	size_t start = 0;

	if (!n || memchr(rel, '\0', n))
		return false;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && rel[i] != '/')
			continue;
		if (i == start || !memchr(rel + start, '=', i - start))
			return false;
		start = i + 1;
	}
	return true;
}

static int touch_success(const char *dir, const char *name)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd, rc;

	if (dfd < 0)
		return -errno;
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	rc = fd < 0 ? -errno : 0;
	if (fd >= 0)
		close(fd);
	if (!rc)
		rc = sl_sink_fsync(dfd);
	close(dfd);
	return rc;
}

static int walk_parts(const struct sl_fspart_sink_cfg *cfg, char *dir, size_t dl, int depth,
		      int (*fn)(const struct sl_fspart_sink_cfg *cfg, const char *dir, void *arg),
		      void *arg);
static int success_one(const struct sl_fspart_sink_cfg *cfg, const char *dir, void *argp);

/*
 * Commit records: a partition's rows come from every shard, so its success file may only
 * be made once all shards' files for it are published. Each shard's commit, after its
 * renames, writes `<root>/.sluice-commit/<shard>` = "<run> <nshards> <ckpt> <wm>": this run
 * (cfg->run) published shard's files up to checkpoint ckpt, whose barrier came after its
 * watermark wm (so no row of an older time, but late ones, is still to come). A partition
 * flagged in a meta is committed when every shard's record of this run says so: for
 * partition-time the least wm is past its time + delay, for process-time every shard has
 * published the flagging checkpoint. Records of another run (or shard count) count as
 * missing: after a restart the first commits wait for every shard's new record, which
 * delays a commit, never advances one. Once every shard's watermark is +inf (its input
 * ended; the final checkpoint) every partition is committed; flush() at the end of input
 * writes "done" (ckpt and wm at their maximum) for runs without checkpoints.
 */
#define REC_DIR	 ".sluice-commit"
#define REC_DONE UINT64_MAX

static int write_record(const struct sl_fspart_sink_cfg *cfg, int shard, int nshards, uint64_t ckpt,
			int64_t wm)
{
	char dir[4096], tmp[64], name[32], text[96];
	int dfd, fd, rc, n;

	/* a shard without rows may get here before any other made the root */
	snprintf(dir, sizeof dir, "%s/" REC_DIR, cfg->file.path);
	if ((rc = mkdirs(dir)) < 0)
		return rc;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	snprintf(name, sizeof name, "%d", shard);
	snprintf(tmp, sizeof tmp, ".%d.tmp", shard);
	n = snprintf(text, sizeof text, "%016" PRIx64 " %d %" PRIu64 " %" PRId64 "\n", cfg->run,
		     nshards, ckpt, wm);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	rc = fd < 0 ? -errno : sl_sink_write_all(fd, text, (size_t)n, NULL);
	if (fd >= 0) {
		if (!rc && fdatasync(fd) < 0)
			rc = -errno;
		close(fd);
	}
	if (!rc && renameat(dfd, tmp, dfd, name) < 0)
		rc = -errno;
	if (!rc)
		rc = sl_sink_fsync(dfd);
	close(dfd);
	return rc;
}

/* The least checkpoint and watermark over every shard's record of this run; false when a
 * shard has none yet. */
static bool read_records(const struct sl_fspart_sink_cfg *cfg, int nshards, uint64_t *ckpt,
			 int64_t *wm)
{
	char path[4096], text[96];

	*ckpt = REC_DONE;
	*wm = INT64_MAX;
	for (int k = 0; k < nshards; k++) {
		unsigned long long run, c;
		long long w;
		int n, fd;
		ssize_t got;

		snprintf(path, sizeof path, "%s/" REC_DIR "/%d", cfg->file.path, k);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return false;
		got = read(fd, text, sizeof text - 1);
		close(fd);
		if (got <= 0)
			return false;
		text[got] = '\0';
		if (sscanf(text, "%llx %d %llu %lld", &run, &n, &c, &w) != 4 || run != cfg->run ||
		    n != nshards)
			return false;
		if (c < *ckpt)
			*ckpt = c;
		if (w < *wm)
			*wm = w;
	}
	return true;
}

/* Walks the meta; with `apply`, commits each bucket's files, writes this shard's record,
 * then makes the success file of each flagged partition whose commit every shard allows. */
static int meta_walk(const struct sl_fspart_sink_cfg *cfg, uint64_t ckpt, const char *m, size_t len,
		     bool apply)
{
	const char *p = m, *end = m + len, *recs;
	size_t ml = strlen(PART_META_MAGIC);
	char path[4096];
	long long wm;
	int64_t min_wm;
	uint64_t min_ckpt;
	bool all;
	int shard, nshards, used = 0, rc;
	long n;

	if (len < ml + 9 || memcmp(p, PART_META_MAGIC, ml))
		return -EINVAL;
	if (sscanf(p + ml, "%ld %d %d %lld\n%n", &n, &shard, &nshards, &wm, &used) != 4 || !used ||
	    n < 0 || shard < 0 || nshards <= shard || nshards > 1 << 20)
		return -EINVAL;
	p += ml + (size_t)used;
	recs = p;
	for (int pass = 0; pass < (apply ? 2 : 1); pass++) {
		if (pass == 1) {
			if (!cfg->success_file)
				break;
			if ((rc = write_record(cfg, shard, nshards, ckpt, (int64_t)wm)) < 0)
				return rc;
			all = read_records(cfg, nshards, &min_ckpt, &min_wm);
			if (!all)
				break;
			/* every shard's input ended (watermark +inf): every partition is committed,
			 * also those this run never wrote to (a final checkpoint ends the job) */
			if (min_wm == INT64_MAX) {
				snprintf(path, sizeof path, "%s", cfg->file.path);
				return walk_parts(cfg, path, strlen(path), 0, success_one, NULL);
			}
			p = recs;
		}
		for (long i = 0; i < n; i++) {
			char flag;
			unsigned long rl, il;
			long long ptime;

			used = 0;
			if (sscanf(p, "%c %lu %lu %lld\n%n", &flag, &rl, &il, &ptime, &used) != 4 ||
			    !used || (flag != 'S' && flag != '-') ||
			    (size_t)(end - p) < (size_t)used + rl + il || rl >= REL_MAX)
				return -EINVAL;
			p += used;
			if (!valid_rel(p, rl))
				return -EINVAL;
			if (snprintf(path, sizeof path, "%s/%.*s", cfg->file.path, (int)rl, p) >=
			    (int)sizeof path)
				return -ENAMETOOLONG;
			p += rl;
			if (apply && pass == 0 && il) {
				struct sl_jsonl_sink_cfg fc = cfg->file;

				fc.path = path;
				if ((rc = sl_jsonl_sink_ops.commit(&fc, ckpt, p, il)) < 0)
					return rc;
			}
			if (pass == 1 && flag == 'S' &&
			    (cfg->partition_time ? min_wm > ptime + cfg->delay_ms
						 : min_ckpt >= ckpt) &&
			    (rc = touch_success(path, success_name(cfg))) < 0)
				return rc;
			p += il;
		}
		if (pass == 0 && p != end)
			return -EINVAL;
	}
	return 0;
}

static int fspart_commit(const void *cfgp, uint64_t ckpt, const void *meta, size_t len)
{
	int rc;

	if (!len)
		return 0;
	if ((rc = meta_walk(cfgp, ckpt, meta, len, false)) < 0)
		return rc;
	return meta_walk(cfgp, ckpt, meta, len, true);
}

/* Calls fn on every partition directory (depth npart, names "col=...") under dir. */
static int walk_parts(const struct sl_fspart_sink_cfg *cfg, char *dir, size_t dl, int depth,
		      int (*fn)(const struct sl_fspart_sink_cfg *cfg, const char *dir, void *arg),
		      void *arg)
{
	struct dirent *de;
	int rc = 0;
	DIR *d;

	if (depth == cfg->npart)
		return fn(cfg, dir, arg);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	while (!rc && (de = readdir(d))) {
		size_t nl = strlen(de->d_name);

		if (de->d_name[0] == '.' || !strchr(de->d_name, '=') || dl + nl + 2 > 4096)
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		dir[dl] = '/';
		memcpy(dir + dl + 1, de->d_name, nl + 1);
		rc = walk_parts(cfg, dir, dl + nl + 1, depth + 1, fn, arg);
		dir[dl] = '\0';
	}
	closedir(d);
	return rc;
}

struct abort_arg {
	int shard, nshards;
	uint64_t ckpt;
};

static int abort_one(const struct sl_fspart_sink_cfg *cfg, const char *dir, void *argp)
{
	const struct abort_arg *a = argp;
	struct sl_jsonl_sink_cfg fc = cfg->file;

	fc.path = dir;
	return sl_jsonl_sink_ops.abort_pending(&fc, a->shard, a->nshards, a->ckpt);
}

static int fspart_abort_pending(const void *cfgp, int shard, int nshards, uint64_t ckpt)
{
	const struct sl_fspart_sink_cfg *cfg = cfgp;
	struct abort_arg a = { shard, nshards, ckpt };
	char dir[4096];

	if (!cfg->file.exactly_once)
		return 0;
	snprintf(dir, sizeof dir, "%s", cfg->file.path);
	return walk_parts(cfg, dir, strlen(dir), 0, abort_one, &a);
}

/* At end of input, once every shard is done, every partition holding a visible part file
 * is committed, also those written before a restart that this run never touched. */
static int success_one(const struct sl_fspart_sink_cfg *cfg, const char *dir, void *argp)
{
	struct dirent *de;
	bool any = false;
	DIR *d = opendir(dir);

	(void)argp;
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!any && (de = readdir(d)))
		any = !strncmp(de->d_name, "part-", 5);
	closedir(d);
	return any ? touch_success(dir, success_name(cfg)) : 0;
}

static int fspart_flush(void *state)
{
	struct fspart_sink *p = state;
	char dir[4096];
	uint64_t ck;
	int64_t wm;
	int rc;

	if (p->err)
		return p->err;
	for (int h = 0; h < NHASH; h++)
		for (struct bucket *b = p->heads[h]; b; b = b->next)
			if (b->inst && (rc = sl_jsonl_sink_ops.flush(b->inst)) < 0)
				return p->err = rc;
	if (!p->cfg->success_file)
		return 0;
	/* this shard is done; the last shard to get here commits every partition */
	if ((rc = write_record(p->cfg, p->shard, p->nshards, REC_DONE, INT64_MAX)) < 0)
		return p->err = rc;
	if (!read_records(p->cfg, p->nshards, &ck, &wm) || ck != REC_DONE)
		return 0;
	snprintf(dir, sizeof dir, "%s", p->cfg->file.path);
	if ((rc = walk_parts(p->cfg, dir, strlen(dir), 0, success_one, p)) < 0)
		return p->err = rc;
	for (int h = 0; h < NHASH; h++)
		for (struct bucket *b = p->heads[h]; b; b = b->next)
			b->unsettled = b->flagged = false;
	return 0;
}

const struct sl_sink_ops sl_fspart_sink_ops = {
	.name = "filesystem-partitioned",
	.open = fspart_open,
	.write = fspart_write,
	.flush = fspart_flush,
	.close = fspart_close,
	.precommit = fspart_precommit,
	.commit = fspart_commit,
	.abort_pending = fspart_abort_pending,
	.watermark = fspart_watermark,
};
