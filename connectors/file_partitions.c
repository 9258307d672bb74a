/*
 * file_partitions.c - a PARTITIONED BY filesystem table's files and their partition values
 * (file_partitions.h), walked level by level in name order, so the split list and thus
 * every restore's split positions are the same on any run over the same tree.
 *
 * Cost: plan time only, one readdir and one stat per entry.
 */
#include "file_partitions.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_LEVELS SL_SCHEMA_MAX_FIELDS

struct walk {
	const char *const *cols;
	int ncols;
	const char *def;
	struct sl_file_parts *out;
	int cap;
	char *vals[MAX_LEVELS]; /* the values of the directories above, NULL: default */
	struct sl_error *err;
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int sl_fs_unescape(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		int hi = s[i] == '%' && i + 2 < n ? hexval(s[i + 1]) : -1;
		int lo = hi >= 0 ? hexval(s[i + 2]) : -1;

		if (o + 1 >= cap)
			return -ENAMETOOLONG;
		if (hi >= 0 && lo >= 0) {
			out[o++] = (char)(hi << 4 | lo);
			i += 2;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	return (int)o;
}

/* Sets the error (cut to the message's size: a long path loses its tail, not the cause). */
static int fail(struct walk *w, int code, const char *fmt, ...)
{
	va_list ap;

	w->err->code = code;
	va_start(ap, fmt);
	vsnprintf(w->err->msg, sizeof w->err->msg, fmt, ap);
	va_end(ap);
	return code;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The visible entries of dir (not '.' or '_' first), sorted. 0 or -errno. */
static int list(const char *dir, char ***out, int *nout)
{
	char **v = NULL, **nv;
	int n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	*out = NULL;
	*nout = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || de->d_name[0] == '_')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			if (!(nv = realloc(v, (size_t)cap * sizeof(*v))))
				goto out_nomem;
			v = nv;
		}
		if (!(v[n] = strdup(de->d_name)))
			goto out_nomem;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, (size_t)n, sizeof(*v), cmp_names);
	*out = v;
	*nout = n;
	return 0;

out_nomem:
	closedir(d);
	free_names(v, n);
	return -ENOMEM;
}

/* Appends file `path` with the values of the directories above it. */
static int add_file(struct walk *w, const char *path)
{
	struct sl_file_parts *p = w->out;

	if (p->n == w->cap) {
		int cap = w->cap ? 2 * w->cap : 64;
		char **np = realloc(p->paths, (size_t)cap * sizeof(*np)), **nv;

		if (!np)
			return -ENOMEM;
		p->paths = np;
		nv = realloc(p->values, (size_t)cap * (size_t)w->ncols * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		p->values = nv;
		w->cap = cap;
	}
	if (!(p->paths[p->n] = strdup(path)))
		return -ENOMEM;
	for (int k = 0; k < w->ncols; k++) {
		char **slot = &p->values[(size_t)p->n * (size_t)w->ncols + (size_t)k];

		*slot = NULL;
		if (w->vals[k] && !(*slot = strdup(w->vals[k]))) {
			for (int j = 0; j < k; j++)
				free(p->values[(size_t)p->n * (size_t)w->ncols + (size_t)j]);
			free(p->paths[p->n]);
			return -ENOMEM;
		}
	}
	p->n++;
	return 0;
}

/* The partition directory `name` at level `depth`: its value into w->vals[depth]. */
static int enter(struct walk *w, const char *full, const char *name, int depth)
{
	const char *eq = strchr(name, '=');
	char col[256], val[4096];
	int rc;

	if (!eq || sl_fs_unescape(name, (size_t)(eq - name), col, sizeof col) < 0 ||
	    strcmp(col, w->cols[depth]))
		return fail(w, -EINVAL,
			    "'%s' is not a partition directory of column '%s' (expected "
			    "<column>=<value>, as the filesystem sink writes them)",
			    full, w->cols[depth]);
	rc = sl_fs_unescape(eq + 1, strlen(eq + 1), val, sizeof val);
	if (rc < 0)
		return fail(w, rc, "'%s': partition value too long", full);
	w->vals[depth] = NULL;
	if (strcmp(val, w->def) && !(w->vals[depth] = strdup(val)))
		return -ENOMEM;
	return 0;
}

static int walk(struct walk *w, const char *dir, int depth)
{
	char **names, full[4096];
	int n, rc = list(dir, &names, &n);

	if (rc < 0)
		return fail(w, rc, "cannot list '%s': %s", dir, strerror(-rc));
	for (int i = 0; i < n && !rc; i++) {
		struct stat st;

		if ((size_t)snprintf(full, sizeof full, "%s/%s", dir, names[i]) >= sizeof full) {
			rc = fail(w, -ENAMETOOLONG, "'%s/%s': path too long", dir, names[i]);
			break;
		}
		if (stat(full, &st) < 0) {
			rc = fail(w, -errno, "cannot stat '%s': %s", full, strerror(errno));
			break;
		}
		if (depth < w->ncols) {
			if (!S_ISDIR(st.st_mode)) {
				rc = fail(w, -EINVAL,
					  "'%s' is a file where a partition directory of column "
					  "'%s' is expected",
					  full, w->cols[depth]);
				break;
			}
			if (!(rc = enter(w, full, names[i], depth)))
				rc = walk(w, full, depth + 1);
			free(w->vals[depth]);
			w->vals[depth] = NULL;
		} else if (S_ISDIR(st.st_mode)) {
			rc = fail(w, -EINVAL,
				  "'%s' is a directory below the last partition level (column "
				  "'%s')",
				  full, w->cols[w->ncols - 1]);
		} else if (S_ISREG(st.st_mode)) {
			rc = add_file(w, full);
		}
	}
	free_names(names, n);
	return rc;
}

void sl_file_parts_free(struct sl_file_parts *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->n; i++) {
		free(p->paths[i]);
		for (int k = 0; k < p->ncols; k++)
			free(p->values[(size_t)i * (size_t)p->ncols + (size_t)k]);
	}
	free(p->paths);
	free(p->values);
	memset(p, 0, sizeof(*p));
}

int sl_file_list_partitions(const char *root, const char *const *cols, int ncols,
			    const char *default_name, struct sl_file_parts *out,
			    struct sl_error *err)
{
	struct walk w = {
		.cols = cols, .ncols = ncols, .def = default_name, .out = out, .err = err
	};
	struct stat st;
	int rc;

	memset(out, 0, sizeof(*out));
	out->ncols = ncols;
	if (ncols < 1 || ncols > MAX_LEVELS)
		return fail(&w, -EINVAL, "'%s': %d partition columns", root, ncols);
	/* a missing directory is a mistyped path more often than a table never written */
	if (stat(root, &st) < 0)
		return fail(&w, -errno, "'%s': %s", root, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return fail(&w, -ENOTDIR, "'%s': %s", root, strerror(ENOTDIR));
	rc = walk(&w, root, 0);
	if (rc == -ENOMEM)
		fail(&w, rc, "listing '%s': %s", root, strerror(ENOMEM));
	if (rc < 0)
		sl_file_parts_free(out);
	return rc;
}
