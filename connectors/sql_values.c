/*
 * sql_values.c - the values of connector and SET options that are not connector-specific:
 * durations ('100 ms', '1 min') and memory sizes ('64m', '2 gb'), as Flink writes them
 * (sql_options.h). Split out of sql_options.c.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "format.h"
#include "sql_options.h"

int sl_sql_conn_parse_duration(const char *v, int64_t *ms)
{
	static const struct {
		const char *name;
		int64_t ms;
	} units[] = {
		{ "ms", 1 },	      { "milli", 1 },	     { "millis", 1 },
		{ "millisecond", 1 }, { "milliseconds", 1 }, { "s", 1000 },
		{ "sec", 1000 },      { "secs", 1000 },	     { "second", 1000 },
		{ "seconds", 1000 },  { "min", 60000 },	     { "m", 60000 },
		{ "minute", 60000 },  { "minutes", 60000 },  { "h", 3600000 },
		{ "hour", 3600000 },  { "hours", 3600000 },  { "d", 86400000 },
		{ "day", 86400000 },  { "days", 86400000 },
	};
	const char *u;
	int64_t n;
	size_t i;

	for (u = v; *u >= '0' && *u <= '9'; u++)
		;
	if (u == v || sl_fmt_parse_i64(v, (size_t)(u - v), 0, INT64_MAX / 86400000, &n) < 0)
		return -EINVAL;
	while (*u == ' ')
		u++;
	if (!*u) {
		*ms = n;
		return 0;
	}
	for (i = 0; i < sizeof units / sizeof units[0]; i++)
		if (!strcasecmp(u, units[i].name)) {
			*ms = n * units[i].ms;
			return 0;
		}
	return -EINVAL;
}

/* A Flink duration: '<n>' (ms) or '<n>[ ]<unit>'. */
int sl_sql_conn_parse_memory_size(const char *s, size_t *bytes)
{
	static const struct {
		const char *unit;
		unsigned shift;
	} units[] = {
		{ "", 0 },     { "b", 0 },    { "bytes", 0 }, { "k", 10 },   { "kb", 10 },
		{ "kib", 10 }, { "m", 20 },   { "mb", 20 },   { "mib", 20 }, { "g", 30 },
		{ "gb", 30 },  { "gib", 30 }, { "t", 40 },    { "tb", 40 },  { "tib", 40 },
	};
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(s, &end, 10);
	if (end == s || errno || *s == '-')
		return -EINVAL;
	while (*end == ' ')
		end++;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(end, units[i].unit))
			continue;
		if (n > (SIZE_MAX >> units[i].shift))
			return -ERANGE;
		*bytes = (size_t)n << units[i].shift;
		return 0;
	}
	return -EINVAL;
}
