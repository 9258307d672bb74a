/*
 * sql_fuzz.c - the SQL parsers over mutated job files: sl_ddl_parse on the whole file,
 * sl_stmt_parse on every statement it keeps as a span (and on every ';'-separated chunk, so
 * the query parser is reached even when a mutation breaks the DDL), sl_expr_parse_str on
 * computed columns, watermarks and chunks. Each must return a tree or a one-line error:
 * never crash, read past its input or leak. The meson test runs it under the ASan build of
 * `tools/dev test`; the input is copied into a buffer of exactly its length, so an
 * over-read is caught.
 *
 * Replay (the meson test):  sql_fuzz CORPUS_DIR MUTATIONS
 *   every file is parsed as is (a *.sql file must parse without error: the corpus is valid
 *   SQL, other names hold crash reproducers), then MUTATIONS deterministic mutants of it:
 *   byte flips, truncations, deleted or duplicated ranges, keyword and token splices from
 *   the other corpus files. The random state derives from the file name, so a failure reproduces.
 * Guided: clang -fsanitize=fuzzer,address -DSL_LIBFUZZER -Iengine -Itests/fuzz ... builds
 *   LLVMFuzzerTestOneInput over the same check.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddl.h"
#include "expr.h"
#include "planner.h"
#include "query.h"

static char err[512];
static unsigned long n_parsed, n_trees, n_multiline, n_planned;
static FILE *notices; /* /dev/null: the planner's notices */

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "sql_fuzz: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	exit(1);
}

/*
 * A failed parse must say why. The statement parser's message must be one line; the DDL
 * and expression parsers quote a string token whole, line breaks included, which is only
 * counted here (their owners decide).
 */
static void check_err(bool one_line)
{
	if (!err[0])
		die("empty error message", NULL);
	if (strchr(err, '\n') && one_line)
		die("error message not one line", err);
	n_multiline += !!strchr(err, '\n');
}

static void check_pos(uint32_t line, uint32_t col)
{
	if (!line || !col)
		die("node without a position", NULL);
}

/* Walks a tree: every node positioned, printable, with its invariants. */
static void walk_expr(const struct sl_expr *e)
{
	char buf[256];

	check_pos(e->line, e->col);
	sl_expr_print(e, buf, sizeof buf);
	for (uint32_t i = 0; i < e->npartition; i++)
		walk_expr(e->partition[i]);
}

static void walk_query(const struct sl_query *q);

static void walk_from(const struct sl_from *f)
{
	check_pos(f->line, f->col);
	switch (f->kind) {
	case SL_FROM_TABLE:
		if (!f->name || !f->name[0])
			die("table without a name", NULL);
		if (f->system_time)
			walk_expr(f->system_time);
		break;
	case SL_FROM_SUBQUERY:
		walk_query(f->sub);
		break;
	case SL_FROM_TVF:
		if (f->call->kind != SL_EXPR_CALL)
			die("window TVF that is not a call", NULL);
		walk_expr(f->call);
		for (uint32_t i = 0; f->arg_names && i < f->call->nargs; i++)
			if (f->arg_names[i] && !f->arg_names[i][0])
				die("empty TVF argument name", NULL);
		break;
	case SL_FROM_JOIN:
		if ((f->join == SL_JOIN_CROSS) != !f->on)
			die("join condition does not match the join kind", NULL);
		walk_from(f->left);
		walk_from(f->right);
		if (f->on)
			walk_expr(f->on);
		break;
	}
}

static void walk_query(const struct sl_query *q)
{
	check_pos(q->line, q->col);
	if (q->set_op != SL_SET_NONE) {
		walk_query(q->left);
		walk_query(q->right);
	}
	for (uint32_t i = 0; i < q->nitems; i++) {
		check_pos(q->items[i].line, q->items[i].col);
		if (q->items[i].star == !!q->items[i].expr)
			die("select item both star and expression, or neither", NULL);
		if (q->items[i].expr)
			walk_expr(q->items[i].expr);
	}
	if (q->from)
		walk_from(q->from);
	if (q->where)
		walk_expr(q->where);
	for (uint32_t i = 0; i < q->ngroup_by; i++)
		walk_expr(q->group_by[i]);
	if (q->having)
		walk_expr(q->having);
	for (uint32_t i = 0; i < q->norder_by; i++)
		walk_expr(q->order_by[i].expr);
}

static void walk_stmt(const struct sl_stmt *s)
{
	check_pos(s->line, s->col);
	if (s->query)
		walk_query(s->query);
	if (!s->wm_for != !s->wm_expr)
		die("view watermark half set", NULL);
	if (s->wm_for) {
		walk_expr(s->wm_for);
		walk_expr(s->wm_expr);
	}
	if (s->inner)
		walk_stmt(s->inner);
	for (uint32_t i = 0; i < s->nsub; i++)
		walk_stmt(s->sub[i]);
}

/* Returns false when the statement did not parse. */
static bool stmt_once(const char *src, size_t len, uint32_t line, uint32_t col)
{
	struct sl_stmt *s = sl_stmt_parse(src, len, line, col, err, sizeof err);

	n_parsed++;
	if (!s) {
		check_err(true);
		return false;
	}
	n_trees++;
	walk_stmt(s);
	sl_stmt_destroy(s);
	return true;
}

static void expr_once(const char *src, size_t len)
{
	struct sl_expr *e = sl_expr_parse_str(src, len, err, sizeof err);

	n_parsed++;
	if (!e) {
		check_err(false);
		return;
	}
	n_trees++;
	walk_expr(e);
	sl_expr_destroy(e);
}

/* The whole check for one input; returns the number of statements or expressions that
 * failed to parse (0 for a valid job file). */
static unsigned check_input(const uint8_t *data, size_t len)
{
	char *src = malloc(len ? len : 1); /* exactly len bytes: no NUL to lean on */
	struct sl_ddl_script *sc;
	unsigned failed = 0;
	size_t start = 0;

	if (!src)
		die("out of memory", NULL);
	memcpy(src, data, len);
	sc = sl_ddl_parse(src, len, err, sizeof err);
	n_parsed++;
	if (!sc) {
		check_err(false);
		failed++;
	}
	for (uint32_t i = 0; sc && i < sc->nstmts; i++) {
		const struct sl_ddl_stmt *st = &sc->stmts[i];

		if (st->span.end < st->span.start || st->span.end > len)
			die("statement span outside the input", NULL);
		if (st->kind == SL_DDL_OTHER) {
			failed += !stmt_once(src + st->span.start, st->span.end - st->span.start,
					     st->span.line, st->span.col);
			continue;
		}
		if (st->kind != SL_DDL_CREATE_TABLE)
			continue;
		for (uint32_t c = 0; c < st->table.ncols; c++) {
			const struct sl_ddl_span *sp = &st->table.cols[c].expr;

			if (!st->table.cols[c].computed)
				continue;
			if (sp->end < sp->start || sp->end > len)
				die("column span outside the input", NULL);
			expr_once(src + sp->start, sp->end - sp->start);
		}
		if (st->table.has_watermark)
			expr_once(src + st->table.wm_expr.start,
				  st->table.wm_expr.end - st->table.wm_expr.start);
	}
	sl_ddl_destroy(sc);
	/* the planner (catalog, scans, expression compiler, operators) on the whole file: it
	 * must plan it or refuse it with a message, never crash; nothing runs */
	{
		struct sl_sql_opts o = { .nshards = 2, .notices = notices, .offline = true };
		struct sl_sql_script *s = sl_sql_load("fuzz.sql", src, len, &o, err, sizeof err);

		n_planned += s != NULL;
		if (!s && !err[0])
			die("the planner failed without a message", NULL);
		sl_sql_destroy(s);
	}
	/* chunks between ';': the statement and expression parsers on whatever they get */
	for (size_t i = 0; i <= len; i++) {
		if (i < len && src[i] != ';')
			continue;
		stmt_once(src + start, i - start, 1, 1);
		expr_once(src + start, i - start);
		start = i + 1;
	}
	free(src);
	return failed;
}

#ifdef SL_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	check_input(data, len);
	return 0;
}
#else

struct file {
	char *name;
	uint8_t *data;
	size_t len;
};

/* xorshift64*: deterministic, seeded per file and mutant */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static size_t rng_below(uint64_t *s, size_t n)
{
	return n ? (size_t)(rng_next(s) % n) : 0;
}

/* Bytes and words that steer the parsers into their corners. */
/* clang-format off */
static const char *const splices[] = {
	"SELECT ", " FROM ", " WHERE ", " GROUP BY ", " HAVING ", " ORDER BY ", " LIMIT 1",
	" UNION ALL ", " JOIN ", " LEFT JOIN ", " CROSS JOIN ", " ON ", " AS ", ", ", "(", ")",
	"((((", "))))", ";", "'", "`", "--", "/*", "*/", ".", "*", " TABLE(", "TUMBLE(",
	"TABLE t", " DESCRIPTOR(", " => ", " PARTITION BY ", " FOR SYSTEM_TIME AS OF ",
	" WATERMARK FOR ", " INTERVAL '5' SECOND", " ROW<", ">", " OVER (", " CASE WHEN ",
	" END", " EXECUTE STATEMENT SET BEGIN ", " BEGIN STATEMENT SET;", " INSERT INTO t ",
	" EXPLAIN ", " CREATE VIEW v AS ", " CAST(", " NOT ", " IN (", " BETWEEN ", "\n",
	"\"", "\\", "\xff", "", "99999999999999999999", "1e", "0.5",
};
/* clang-format on */

/* One mutation of buf[0..*len) in place (cap bytes available). */
static void mutate_once(uint64_t *rs, uint8_t *buf, size_t *len, size_t cap,
			const struct file *files, size_t nfiles)
{
	size_t n = *len, at = rng_below(rs, n + 1), k;
	const uint8_t *ins = NULL;
	size_t inslen = 0;

	switch (rng_below(rs, 6)) {
	case 0: /* flip a few bytes */
		for (k = rng_below(rs, 4) + 1; k-- && n;)
			buf[rng_below(rs, n)] = (uint8_t)rng_next(rs);
		return;
	case 1: /* truncate */
		*len = at;
		return;
	case 2: /* delete a range */
		k = rng_below(rs, n - at + 1) % 64;
		memmove(buf + at, buf + at + k, n - at - k);
		*len = n - k;
		return;
	case 3: { /* splice a keyword or token */
		const char *w = splices[rng_below(rs, sizeof splices / sizeof splices[0])];

		ins = (const uint8_t *)w;
		inslen = strlen(w);
		break;
	}
	case 4: { /* splice a range of any corpus file */
		const struct file *f = &files[rng_below(rs, nfiles)];
		size_t from = rng_below(rs, f->len + 1);

		ins = f->data + from;
		inslen = rng_below(rs, f->len - from + 1) % 128;
		break;
	}
	default: /* duplicate a range of this one */
		k = rng_below(rs, n - at + 1) % 128;
		if (n + k > cap)
			return;
		memmove(buf + at + k, buf + at, n - at);
		*len = n + k;
		return;
	}
	if (n + inslen > cap)
		return;
	memmove(buf + at + inslen, buf + at, n - at);
	memcpy(buf + at, ins, inslen);
	*len = n + inslen;
}

static int cmp_files(const void *a, const void *b)
{
	return strcmp(((const struct file *)a)->name, ((const struct file *)b)->name);
}

static size_t load_corpus(const char *dir, struct file **out)
{
	struct file *files = NULL;
	size_t n = 0;
	struct dirent *d;
	DIR *dh = opendir(dir);

	if (!dh)
		die("cannot open the corpus directory", dir);
	while ((d = readdir(dh))) {
		char path[4096];
		struct file *f;
		FILE *fh;
		long len;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, d->d_name);
		fh = fopen(path, "rb");
		if (!fh)
			continue;
		files = realloc(files, (n + 1) * sizeof *files);
		if (!files)
			die("out of memory", NULL);
		f = &files[n++];
		if (fseek(fh, 0, SEEK_END) || (len = ftell(fh)) < 0)
			die("cannot size", path);
		rewind(fh);
		f->len = (size_t)len;
		f->data = malloc(f->len + 1);
		f->name = strdup(d->d_name);
		if (!f->data || !f->name || fread(f->data, 1, f->len, fh) != f->len)
			die("cannot read", path);
		fclose(fh);
	}
	closedir(dh);
	if (!n)
		die("empty corpus", dir);
	qsort(files, n, sizeof *files, cmp_files); /* readdir order is not stable */
	*out = files;
	return n;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

int main(int argc, char **argv)
{
	struct file *files;
	unsigned long mutations;
	size_t nfiles;

	if (argc != 3)
		die("usage: sql_fuzz CORPUS_DIR MUTATIONS", NULL);
	mutations = strtoul(argv[2], NULL, 10);
	notices = fopen("/dev/null", "w");
	if (!notices)
		die("cannot open /dev/null", NULL);
	nfiles = load_corpus(argv[1], &files);
	for (size_t i = 0; i < nfiles; i++) {
		const struct file *f = &files[i];
		size_t cap = f->len * 2 + 4096;
		uint8_t *buf = malloc(cap);
		uint64_t seed = 1469598103934665603ULL;

		if (!buf)
			die("out of memory", NULL);
		for (const char *c = f->name; *c; c++)
			seed = (seed ^ (uint8_t)*c) * 1099511628211ULL;
		if (check_input(f->data, f->len) && ends_with(f->name, ".sql"))
			die("a corpus job does not parse", f->name);
		for (unsigned long m = 0; m < mutations; m++) {
			uint64_t rs = seed ^ (m + 1) * 0x9E3779B97F4A7C15ULL;
			size_t len = f->len;

			rs = rs ? rs : 1;
			memcpy(buf, f->data, f->len);
			for (size_t k = rng_below(&rs, 3) + 1; k--;)
				mutate_once(&rs, buf, &len, cap, files, nfiles);
			check_input(buf, len);
		}
		free(buf);
	}
	printf("sql_fuzz: %zu files, %lu mutants each, %lu parses, %lu trees, %lu DDL or "
	       "expression errors spanning lines, %lu job files planned\n",
	       nfiles, mutations, n_parsed, n_trees, n_multiline, n_planned);
	fclose(notices);
	for (size_t i = 0; i < nfiles; i++) {
		free(files[i].data);
		free(files[i].name);
	}
	free(files);
	return 0;
}
#endif
