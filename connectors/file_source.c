/*
 * file_source.c - the file source: one split per path or per byte range of a file
 * (file_split.c plans the ranges), JSON lines, Debezium JSON change events or CSV records
 * decoded into rows of the configured schema (a Debezium event gives 0..2 rows, each emitted
 * with its changelog kind).
 *
 * A range split starts at its begin, which is a record start, and takes the records that
 * start before its end; the last one may run past the end, and the next split starts just
 * after it. Line numbers (for dead-letter places) count from the range's begin; the lines
 * before it are counted only when a dead letter needs the absolute number, so a clean file
 * never pays for it.
 *
 * A split reads its file in large chunks (cfg.read_bytes, 1 MiB by default) into one buffer
 * and cuts records out of it in place, so the per-record cost is a memchr and the decoder,
 * never a syscall. Bytes not yet consumed are moved to the front before the next read; a
 * record longer than the buffer grows it (doubling, up to MAX_RECORD), and a record beyond
 * that is dead-lettered and skipped up to its newline.
 *
 * Invariants: buf holds cap + SL_JSON_PADDING bytes and unconsumed data lies in [head, tail)
 * with tail <= cap, so every record handed to the JSON decoder has its padding readable.
 * `line` is the 1-based line number, counted from the range's begin, of the record
 * starting at head.
 *
 * poll() returns the number of records taken from the file, whether emitted, dead-lettered
 * or skipped, so a run of bad lines still counts as progress.
 *
 * A DECIMAL beyond its precision is NULL (Flink) and counted for the source operator, or
 * with cfg.fail_on_decimal_overflow a record error. Undecodable records go to the
 * dead-letter output, or with cfg.ignore_parse_errors are skipped and counted (Flink's
 * *.ignore-parse-errors): the split's count is added to *cfg.skipped at close and announced
 * in one stderr line then, so a skip is never silent and costs nothing per record.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source.h"
#include "file_split.h"
#include "format.h"

#define DEFAULT_READ (1u << 20)
#define MAX_RECORD   ((size_t)64 << 20)
#define DL_RAW_MAX   4096 /* bytes of an oversized record shown in its dead letter */

struct file_split {
	const struct sl_file_source_cfg *cfg;
	const char *path;
	int fd;
	char *buf; /* cap + SL_JSON_PADDING bytes */
	size_t cap;
	size_t head, tail; /* unconsumed bytes */
	bool eof;
	bool skipping;		  /* dropping the rest of an oversized record */
	uint64_t line;		  /* line number of the record at head */
	struct sl_json_dec *json; /* JSON and Debezium JSON */
	struct sl_csv_dec *csv;
	bool dbz;
	uint64_t skipped;	   /* bad records dropped (ignore_parse_errors) */
	uint64_t read_total;	   /* bytes read from the file: the offset of buf[tail] */
	uint64_t begin, end;	   /* the range: records starting in [begin, end) */
	uint64_t lines_before;	   /* lines in [0, begin); UINT64_MAX: not counted yet */
	struct sl_file_scan *scan; /* planning a split (sl_file_scan_starts): no decoding */
	bool started;		   /* fd, buf and the decoder are there */
	bool finished;		   /* read to its end; released */
	uint64_t overflow_base;	   /* DECIMAL overflows of decoders already released */
	int pidx;		   /* index of path in cfg->paths */
	void *wide;		   /* a partitioned table's widened row (SL_ROW_SCRATCH) */
};

static int file_nsplits(const void *cfgp)
{
	const struct sl_file_source_cfg *cfg = cfgp;

	return cfg->ranges ? cfg->nranges : cfg->npaths;
}

/* The file offset of the record at head. */
static uint64_t head_offset(const struct file_split *f)
{
	return f->read_total - (f->tail - f->head);
}

/* Gives back what reading needs (descriptor, buffer, decoder), keeping the position and
 * counts: a split not started or finished holds none, so a file cut in thousands of ranges
 * costs a descriptor and a buffer per shard, not per split. */
static void file_release(struct file_split *f)
{
	if (f->csv)
		f->overflow_base += sl_csv_dec_overflows(f->csv);
	if (f->json)
		f->overflow_base += sl_json_dec_overflows(f->json);
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	sl_json_dec_destroy(f->json);
	sl_csv_dec_destroy(f->csv);
	f->json = NULL;
	f->csv = NULL;
	free(f->buf);
	f->buf = NULL;
	free(f->wide);
	f->wide = NULL;
	f->started = false;
}

static void file_close(void *state)
{
	struct file_split *f = state;

	if (!f)
		return;
	if (f->skipped) {
		if (f->cfg->skipped)
			atomic_fetch_add_explicit((_Atomic uint64_t *)f->cfg->skipped, f->skipped,
						  memory_order_relaxed);
		fprintf(stderr,
			"sluice: %s: skipped %llu undecodable record%s (ignore-parse-errors)\n",
			f->path, (unsigned long long)f->skipped, f->skipped == 1 ? "" : "s");
	}
	file_release(f);
	free(f);
}

/* Opens the file at the split's position (read_total) with its buffer and decoder. 0, or
 * -errno with err set naming the file and the cause. */
static int file_start(struct file_split *f, struct sl_error *err)
{
	const struct sl_file_source_cfg *cfg = f->cfg;
	struct stat st;
	int jerr = -ENOMEM;

	f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0 || (fstat(f->fd, &st) == 0 && S_ISDIR(st.st_mode))) {
		int e = f->fd < 0 ? errno : EISDIR;

		err->code = -e;
		snprintf(err->msg, sizeof err->msg, "file source: cannot open '%s': %s%s", f->path,
			 strerror(e), e == EISDIR ? " (list it with sl_file_list_dir())" : "");
		file_release(f);
		return err->code;
	}
	posix_fadvise(f->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	if (f->read_total && lseek(f->fd, (off_t)f->read_total, SEEK_SET) < 0) {
		err->code = -errno;
		snprintf(err->msg, sizeof err->msg, "file source: cannot seek '%s' to %llu: %s",
			 f->path, (unsigned long long)f->read_total, strerror(errno));
		file_release(f);
		return err->code;
	}
	f->buf = malloc(f->cap + SL_JSON_PADDING);
	if (!f->buf || (cfg->table && !(f->wide = malloc(SL_ROW_SCRATCH))))
		goto out_nomem;
	if (cfg->format == SL_FORMAT_CSV) {
		struct sl_csv_opts o = cfg->csv;

		o.fail_on_decimal_overflow |= cfg->fail_on_decimal_overflow;
		f->csv = sl_csv_dec_create(cfg->schema, &o);
	} else {
		f->json = sl_json_dec_create_ex(
			cfg->schema,
			(f->dbz ? SL_JSON_DEBEZIUM : 0) |
				(cfg->json_fail_on_missing ? SL_JSON_FAIL_ON_MISSING : 0) |
				(cfg->fail_on_decimal_overflow ? SL_JSON_FAIL_ON_DEC_OVERFLOW : 0),
			&jerr);
	}
	if (!f->csv && !f->json && jerr == -EINVAL) {
		err->code = -EINVAL;
		snprintf(err->msg, sizeof err->msg,
			 "file source: field names do not form a tree of JSON objects");
		file_release(f);
		return err->code;
	}
	if (!f->csv && !f->json)
		goto out_nomem;
	f->started = true;
	return 0;

out_nomem:
	file_release(f);
	err->code = -ENOMEM;
	snprintf(err->msg, sizeof err->msg, "file source: out of memory");
	return err->code;
}

/* Opens split `split`: checks that its file opens and decodes (the error names it now, not
 * at the first poll), then gives the resources back until the split's turn comes. */
static void *file_open(const void *cfgp, int split, struct sl_error *err)
{
	const struct sl_file_source_cfg *cfg = cfgp;
	struct file_split *f;

	if (split < 0 || split >= file_nsplits(cfg) || !cfg->schema ||
	    (cfg->ranges &&
	     (cfg->ranges[split].path < 0 || cfg->ranges[split].path >= cfg->npaths))) {
		err->code = -EINVAL;
		snprintf(err->msg, sizeof err->msg, "file source: no path for split %d%s", split,
			 cfg->schema ? "" : " (no schema)");
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		err->code = -ENOMEM;
		snprintf(err->msg, sizeof err->msg, "file source: out of memory");
		return NULL;
	}
	f->cfg = cfg;
	f->fd = -1;
	f->pidx = cfg->ranges ? cfg->ranges[split].path : split;
	f->path = cfg->paths[f->pidx];
	f->begin = cfg->ranges ? cfg->ranges[split].begin : 0;
	f->end = cfg->ranges ? cfg->ranges[split].end : UINT64_MAX;
	f->read_total = f->begin;
	f->lines_before = f->begin ? UINT64_MAX : 0;
	f->line = 1;
	f->cap = cfg->read_bytes ? cfg->read_bytes : DEFAULT_READ;
	f->dbz = cfg->format == SL_FORMAT_DEBEZIUM_JSON;
	if (file_start(f, err) < 0) {
		free(f);
		return NULL;
	}
	file_release(f);
	return f;
}

/* Counts the lines before the range's begin, once, for the first dead letter of a range
 * split: a read of the file up to begin. On a read error the place names the byte offset. */
static void count_lines_before(struct file_split *f)
{
	char buf[1 << 16];
	uint64_t off = 0, n = 0;

	while (off < f->begin) {
		size_t want = f->begin - off < sizeof buf ? (size_t)(f->begin - off) : sizeof buf;
		ssize_t got = pread(f->fd, buf, want, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return; /* stays unknown */
		for (const char *p = buf, *e = buf + got; (p = memchr(p, '\n', (size_t)(e - p)));
		     p++)
			n++;
		off += (uint64_t)got;
	}
	f->lines_before = n;
}

static void dead_letter(struct file_split *f, struct sl_src_ctx *c, uint64_t line, const char *why,
			const char *raw, size_t len)
{
	char where[512];

	if (f->scan)
		return; /* planning: the split that reads the record reports it */
	if (f->cfg->ignore_parse_errors) {
		f->skipped++;
		return;
	}
	if (f->lines_before == UINT64_MAX)
		count_lines_before(f);
	if (f->lines_before != UINT64_MAX)
		snprintf(where, sizeof where, "%s:%llu", f->path,
			 (unsigned long long)(f->lines_before + line));
	else
		snprintf(where, sizeof where, "%s:@%llu (range from byte %llu, line %llu)", f->path,
			 (unsigned long long)head_offset(f), (unsigned long long)f->begin,
			 (unsigned long long)line);
	sl_src_dead_letter(c, where, why, raw, len);
}

/*
 * Makes room and reads once. Returns 0 (data or EOF arrived) or -errno. Grows the buffer when
 * one record fills it; past MAX_RECORD, dead-letters the record and starts skipping it.
 */
static int fill(struct file_split *f, struct sl_src_ctx *c)
{
	ssize_t n;

	if (f->head) {
		memmove(f->buf, f->buf + f->head, f->tail - f->head);
		f->tail -= f->head;
		f->head = 0;
	}
	if (f->tail == f->cap && f->skipping) {
		f->tail = 0;
	} else if (f->tail == f->cap && f->cap * 2 > MAX_RECORD) {
		dead_letter(f, c, f->line, "record longer than 64 MiB", f->buf, DL_RAW_MAX);
		f->skipping = true;
		f->tail = 0;
	} else if (f->tail == f->cap) {
		char *nb = realloc(f->buf, f->cap * 2 + SL_JSON_PADDING);

		if (!nb)
			return -ENOMEM;
		f->buf = nb;
		f->cap *= 2;
	}
	do
		n = read(f->fd, f->buf + f->tail, f->cap - f->tail);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		f->eof = true;
	f->tail += (size_t)n;
	f->read_total += (uint64_t)n;
	return 0;
}

/* Length of the record at head including its newline, or 0 if it is not complete (a CSV
 * record at EOF is complete: the decoder decides where a bad quote ends it). */
/* The next record's length (0: not complete yet) and, for CSV, the line breaks it holds. */
static size_t record_len(struct file_split *f, uint64_t *breaks)
{
	const char *p = f->buf + f->head;
	size_t avail = f->tail - f->head;
	const char *nl;

	if (f->csv)
		return sl_csv_dec_record(f->csv, p, avail, f->eof, breaks);
	nl = memchr(p, '\n', avail);
	return nl ? (size_t)(nl - p) + 1 : 0;
}

static uint64_t count_lines(const char *p, size_t len)
{
	uint64_t n = 0;
	const char *e = p + len, *q;

	while ((q = memchr(p, '\n', (size_t)(e - p)))) {
		n++;
		p = q + 1;
	}
	return n;
}

/* A partitioned table's row (cfg->table): the decoded row's fields and the file's
 * partition values, in the table's order; NULL when it outgrows the buffer. */
static const struct sl_row *widen(struct file_split *f, const struct sl_row *row)
{
	const struct sl_file_source_cfg *cfg = f->cfg;
	const struct sl_row *part = cfg->part_rows[f->pidx];
	int n = sl_schema_nfields(cfg->table);
	struct sl_row_builder b;

	sl_rowb_init(&b, f->wide, SL_ROW_SCRATCH, n);
	for (int j = 0; j < n; j++) {
		enum sl_type t = sl_schema_type(cfg->table, j);

		if (cfg->phys[j] >= 0)
			sl_rowb_copy_field(&b, j, row, cfg->phys[j], t);
		else
			sl_rowb_copy_field(&b, j, part, j, t);
	}
	sl_rowb_set_kind(&b, (enum sl_row_kind)row->kind);
	return sl_rowb_finish(&b);
}

/* Emits one decoded row. Returns 0, or -errno from emit; a row too large for a frame is
 * dead-lettered. */
static int emit(struct file_split *f, struct sl_src_ctx *c, const struct sl_row *row,
		const char *rec, size_t len, uint64_t line)
{
	int rc;

	if (f->cfg->table && !(row = widen(f, row))) {
		dead_letter(f, c, line, "row with its partition values larger than a row buffer",
			    rec, len);
		return 0;
	}
	rc = sl_src_emit(c, row);

	if (rc == -ENOSPC) {
		dead_letter(f, c, line, "row larger than a ring frame", rec, len);
		return 0;
	}
	return rc;
}

/* Decodes and emits one record (without terminator). Returns 1, or -errno from emit. */
static int take(struct file_split *f, struct sl_src_ctx *c, const char *rec, size_t len,
		uint64_t line)
{
	char why[SL_FMT_WHY_MAX];
	const struct sl_row *row, *rows[2];
	int rc = 0, n;

	if (f->dbz) {
		n = sl_dbz_dec_rows(f->json, rec, len, sl_src_scratch(c), SL_ROW_SCRATCH, rows,
				    why);
		if (n < 0) {
			dead_letter(f, c, line, why, rec, len);
			return 1;
		}
		for (int k = 0; k < n && rc >= 0; k++)
			rc = emit(f, c, rows[k], rec, len, line);
		return rc < 0 ? rc : 1;
	}
	if (f->json)
		row = sl_json_dec_row(f->json, rec, len, sl_src_scratch(c), SL_ROW_SCRATCH, why);
	else
		row = sl_csv_dec_row(f->csv, rec, len, sl_src_scratch(c), SL_ROW_SCRATCH, why);
	if (!row) {
		dead_letter(f, c, line, why, rec, len);
		return 1;
	}
	rc = emit(f, c, row, rec, len, line);
	return rc < 0 ? rc : 1;
}

static uint64_t overflows(const struct file_split *f)
{
	return f->overflow_base + (f->csv    ? sl_csv_dec_overflows(f->csv)
				   : f->json ? sl_json_dec_overflows(f->json)
					     : 0);
}

static int poll_records(struct file_split *f, struct sl_src_ctx *c, int max)
{
	int taken = 0, rc;

	while (taken < max) {
		size_t n, len;
		uint64_t line = f->line, breaks = 0;
		const char *rec;

		/* a record starts here: past the range's end it is the next split's */
		if (!f->skipping && head_offset(f) >= f->end)
			return taken ? taken : SL_SRC_EOF;
		if (f->scan && !f->skipping)
			sl_file_scan_note(f->scan, head_offset(f));
		n = f->skipping ? 0 : record_len(f, &breaks);

		if (f->skipping) {
			const char *nl = memchr(f->buf + f->head, '\n', f->tail - f->head);

			if (nl) {
				f->head = (size_t)(nl - f->buf) + 1;
				f->line++;
				f->skipping = false;
				continue;
			}
			f->head = f->tail;
		}
		if (!n) {
			if (!f->eof) {
				rc = fill(f, c);
				if (rc < 0)
					return rc;
				continue;
			}
			if (f->skipping || f->head == f->tail)
				return taken ? taken : SL_SRC_EOF;
			n = f->tail - f->head; /* the last record has no newline */
			breaks = f->csv ? count_lines(f->buf + f->head, n) : 0;
		}
		rec = f->buf + f->head;
		f->head += n;
		len = n;
		if (len && rec[len - 1] == '\n')
			len--;
		if (len && rec[len - 1] == '\r')
			len--;
		/* a CSV record may span lines inside quotes */
		f->line += f->csv ? breaks + (rec[n - 1] != '\n') : 1;
		if (len == 0)
			continue; /* blank lines separate nothing */
		if (line == 1 && !f->begin && f->csv && f->cfg->csv.header)
			continue;
		if (f->csv && f->cfg->csv_allow_comments && rec[0] == '#')
			continue;
		if (f->scan) {
			taken++; /* planning: the record's bounds are all it needs */
			continue;
		}
		rc = take(f, c, rec, len, line);
		if (rc < 0)
			return rc;
		taken++;
	}
	return taken;
}

/* Polls up to max records; DECIMAL values the decoder made NULL are counted for the source
 * operator once a poll, not per record. */
static int file_poll(void *state, struct sl_src_ctx *c, int max)
{
	struct file_split *f = state;
	uint64_t before;
	int rc;

	if (f->finished)
		return SL_SRC_EOF;
	if (!f->started) {
		struct sl_error err = { 0 };

		if ((rc = file_start(f, &err)) < 0) {
			fprintf(stderr, "sluice: %s\n", err.msg);
			return rc;
		}
	}
	before = overflows(f);
	rc = poll_records(f, c, max);
	if (overflows(f) != before)
		sl_src_count_overflow(c, overflows(f) - before);
	if (rc == SL_SRC_EOF) {
		file_release(f);
		f->finished = true;
	}
	return rc;
}

/*
 * Checkpoints: between polls head sits at a record boundary, so the split's position is the
 * file offset of head, with the line number there (for dead-letter places) and whether an
 * oversized record is being skipped.
 */
struct file_pos {
	uint64_t offset;
	uint64_t line;
	uint64_t skipping;
	uint64_t begin, end; /* the range it belongs to: a restore checks it is the same */
};

static int file_position(void *state, void *buf, size_t cap, size_t *len)
{
	const struct file_split *f = state;
	struct file_pos p = {
		.offset = f->read_total - (f->tail - f->head),
		.line = f->line,
		.skipping = f->skipping,
		.begin = f->begin,
		.end = f->end,
	};

	if (cap < sizeof p)
		return -ENOSPC;
	memcpy(buf, &p, sizeof p);
	*len = sizeof p;
	return 0;
}

static int file_seek(void *state, const void *pos, size_t len)
{
	struct file_split *f = state;
	struct file_pos p;

	if (len != sizeof p)
		return -EINVAL;
	memcpy(&p, pos, sizeof p);
	/* the file was cut differently (another split size, or it changed): the position
	 * means nothing here */
	if (p.begin != f->begin || p.end != f->end || p.offset < f->begin)
		return -ESTALE;
	file_release(f); /* the next poll opens the file at the position */
	f->finished = false;
	f->head = f->tail = 0;
	f->read_total = p.offset;
	f->line = p.line;
	f->skipping = p.skipping != 0;
	f->eof = false;
	return 0;
}

/* Observers: bytes read of the file's size now (fstat: only when asked, never per record). */
static void file_progress(void *state, struct sl_src_progress *p)
{
	const struct file_split *f = state;
	uint64_t end = f->end, at = f->started ? f->read_total - (f->tail - f->head) : f->begin;
	struct stat st;

	/* a whole file's end is its size now (fstat: only when asked, never per record) */
	if (end == UINT64_MAX) {
		if (f->started && f->fd >= 0 && fstat(f->fd, &st) == 0)
			end = (uint64_t)st.st_size;
		else if (stat(f->path, &st) == 0)
			end = (uint64_t)st.st_size;
	}
	if (f->begin || f->end != UINT64_MAX)
		snprintf(p->name, sizeof p->name, "%s [%llu, %llu)", f->path,
			 (unsigned long long)f->begin, (unsigned long long)f->end);
	else
		snprintf(p->name, sizeof p->name, "%s", f->path);
	p->kind = "file";
	if (f->finished)
		at = end;
	if (end != UINT64_MAX && end >= f->begin) {
		p->end = (int64_t)(end - f->begin);
		p->pos = (int64_t)((at > end ? end : at) - f->begin);
	}
}

const struct sl_source_ops sl_file_source_ops = {
	.name = "filesystem",
	.nsplits = file_nsplits,
	.open = file_open,
	.poll = file_poll,
	.close = file_close,
	.position = file_position,
	.seek = file_seek,
	.splits_in_order = true,
	.progress = file_progress,
};

int sl_file_scan_starts(const struct sl_file_source_cfg *cfg, int path, struct sl_file_scan *scan,
			struct sl_error *err)
{
	struct sl_file_source_cfg whole = *cfg;
	struct file_split *f;
	int rc;

	whole.ranges = NULL;
	whole.nranges = 0;
	f = file_open(&whole, path, err);
	if (!f)
		return err->code;
	if (file_start(f, err) < 0) {
		file_close(f);
		return err->code;
	}
	f->scan = scan;
	do
		rc = poll_records(f, NULL, 1 << 20);
	while (rc > 0);
	file_close(f);
	if (rc == SL_SRC_EOF)
		return 0;
	err->code = rc;
	snprintf(err->msg, sizeof err->msg, "file source: cannot read '%s': %s", cfg->paths[path],
		 strerror(-rc));
	return rc;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void sl_file_list_free(char **paths, int n)
{
	if (!paths)
		return;
	for (int i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

int sl_file_list_dir(const char *path, char ***out, int *nout)
{
	char **v = NULL, **nv;
	int n = 0, cap = 0, rc = 0;
	struct dirent *de;
	struct stat st;
	DIR *dir;

	*out = NULL;
	*nout = 0;
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		/* a file, or nothing: one split that reports a missing file when it opens */
		v = malloc(sizeof(*v));
		if (!v || !(v[0] = strdup(path))) {
			free(v);
			return -ENOMEM;
		}
		*out = v;
		*nout = 1;
		return 0;
	}
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		size_t len = strlen(path) + strlen(de->d_name) + 2;
		char *full;

		if (de->d_name[0] == '.' || de->d_name[0] == '_')
			continue; /* hidden, and Flink's _SUCCESS / in-progress markers */
		full = malloc(len);
		if (!full) {
			rc = -ENOMEM;
			break;
		}
		snprintf(full, len, "%s/%s", path, de->d_name);
		if (stat(full, &st) < 0 || !S_ISREG(st.st_mode)) {
			free(full);
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			nv = realloc(v, (size_t)cap * sizeof(*v));
			if (!nv) {
				free(full);
				rc = -ENOMEM;
				break;
			}
			v = nv;
		}
		v[n++] = full;
	}
	closedir(dir);
	if (rc < 0) {
		sl_file_list_free(v, n);
		return rc;
	}
	if (n)
		qsort(v, (size_t)n, sizeof(*v), cmp_names);
	*out = v;
	*nout = n;
	return 0;
}
