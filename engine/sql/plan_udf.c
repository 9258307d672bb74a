/*
 * plan_udf.c - CREATE FUNCTION ... AS 'path:symbol' LANGUAGE C: the shared object opened
 * at plan time, its descriptor (sluice/udf.h) checked, and the function added to what
 * expressions can call (c->env.udfs, looked up after the built-in functions).
 *
 * Every refusal names the job file's place and the library: a file that does not load, a
 * missing symbol, a descriptor of another ABI or one that makes no sense. The library stays
 * loaded until the script is destroyed (after its jobs, whose programs call into it).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sluice/udf.h>

#include "plan_int.h"

static void close_lib(void *h)
{
	dlclose(h);
}

static bool valid_type(enum sl_udf_type t)
{
	return t >= SL_UDF_BOOLEAN && t <= SL_UDF_STRING;
}

/* The descriptor's own consistency; NULL when sound, else what is wrong. */
static const char *check_desc(const struct sl_udf *d)
{
	if (!d->fn)
		return "no function pointer (fn is NULL)";
	if (!valid_type(d->result))
		return "an unknown result type";
	if (d->nargs > SL_UDF_MAX_ARGS)
		return "more than SL_UDF_MAX_ARGS arguments";
	for (uint32_t i = 0; i < d->nargs; i++)
		if (!valid_type(d->args[i]))
			return "an unknown argument type";
	return NULL;
}

int sl_sql_plan_add_function(struct sl_sql_plan_ctx *c, const struct sl_ddl_function *fn)
{
	const char *name = fn->name.name, *colon = strrchr(fn->target, ':'), *why;
	uint32_t line = fn->line, col = fn->col;
	struct sl_sql_udf *u;
	const struct sl_udf *d;
	char *path;
	void *h;

	if (sl_sql_is_builtin_function(name))
		return sl_sql_plan_fail(c, fn->name.line, fn->name.col,
					"function %s: a built-in function has that name", name);
	for (int i = 0; i < c->nudfs; i++)
		if (!strcasecmp(c->udfs[i].name, name)) {
			if (fn->if_not_exists)
				return 0;
			return sl_sql_plan_fail(c, fn->name.line, fn->name.col,
						"function %s already exists (%s)", name,
						c->udfs[i].target);
		}
	if (!colon || colon == fn->target || !colon[1])
		return sl_sql_plan_fail(c, line, col,
					"'%s': expected 'path/lib.so:symbol', the shared object "
					"and the name of its struct sl_udf",
					fn->target);
	path = strndup(fn->target, (size_t)(colon - fn->target));
	if (!sl_sql_plan_own(c, path, free))
		return -ENOMEM;
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return sl_sql_plan_fail(c, line, col, "function %s: cannot load '%s': %s", name,
					path, dlerror());
	if (!sl_sql_plan_own(c, h, close_lib))
		return -ENOMEM;
	d = dlsym(h, colon + 1);
	if (!d)
		return sl_sql_plan_fail(c, line, col, "function %s: '%s' has no symbol '%s'", name,
					path, colon + 1);
	if (d->abi != SL_UDF_ABI)
		return sl_sql_plan_fail(c, line, col,
					"function %s: '%s' symbol '%s' is of UDF ABI %u, this "
					"sluice reads ABI %d (rebuild it against sluice/udf.h)",
					name, path, colon + 1, d->abi, SL_UDF_ABI);
	if ((why = check_desc(d)))
		return sl_sql_plan_fail(c, line, col, "function %s: '%s' symbol '%s' has %s", name,
					path, colon + 1, why);
	if (c->nudfs == c->capudfs) {
		int cap = c->capudfs ? c->capudfs * 2 : 8;

		u = realloc(c->udfs, (size_t)cap * sizeof(*u));
		if (!u)
			return sl_sql_plan_fail(c, 0, 0, "out of memory");
		c->udfs = u;
		c->capudfs = cap;
	}
	c->udfs[c->nudfs++] = (struct sl_sql_udf){ .name = name, .d = d, .target = fn->target };
	c->env.udfs = c->udfs;
	c->env.nudfs = c->nudfs;
	return 0;
}
