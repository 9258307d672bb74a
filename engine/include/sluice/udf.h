/*
 * sluice/udf.h - scalar SQL functions written in C and loaded from a shared object, the way
 * a Flink user registers a Java UDF:
 *
 *   CREATE [TEMPORARY] FUNCTION [IF NOT EXISTS] rot13 AS 'lib/libmyudf.so:my_rot13' LANGUAGE C;
 *   SELECT rot13(name) FROM users;
 *
 * The symbol after the ':' names a `const struct sl_udf` in the library. Flink reads a UDF's
 * types from its Java signature; a C library describes itself in that struct instead, so
 * the planner checks every call against it (argument count and types) and refuses a
 * mismatch at plan time, naming the file and the symbol. The library is opened with
 * dlopen(RTLD_NOW | RTLD_LOCAL) while the job file is planned and stays loaded until the
 * job is destroyed; a path without a '/' is searched as dlopen searches (LD_LIBRARY_PATH,
 * the system's directories), any other path is taken from the current directory.
 *
 * Build a library with: cc -shared -fPIC -o libmyudf.so myudf.c (examples/udf/ has one).
 *
 * The ABI is this header's: plain C types, fixed-width fields, no sluice symbol to link.
 * A library built against a different SL_UDF_ABI is refused, never called.
 */
#ifndef SLUICE_UDF_H
#define SLUICE_UDF_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any change to the structs below; sluice refuses a descriptor of another one. */
#define SL_UDF_ABI 1

/* At most this many arguments. */
#define SL_UDF_MAX_ARGS 16

/* Argument and result types, as SQL spells them; the values are part of the ABI. */
enum sl_udf_type {
	SL_UDF_BOOLEAN = 1, /* v.i: 0 or 1 */
	SL_UDF_INT = 2,	    /* v.i: a 32-bit value */
	SL_UDF_BIGINT = 3,  /* v.i */
	SL_UDF_DOUBLE = 4,  /* v.d */
	SL_UDF_STRING = 5,  /* v.s: UTF-8 bytes, not NUL-terminated */
};

/* One value. An argument's bytes are borrowed for the duration of the call only. */
struct sl_udf_value {
	bool is_null;
	union {
		int64_t i;
		double d;
		struct {
			const char *ptr;
			uint32_t len;
		} s;
	} v;
};

/*
 * The function. `args` holds the declared number of arguments, each converted to its
 * declared type (INT to BIGINT, numbers to DOUBLE, as SQL widens them). It writes *result
 * (type: the declared return type; is_null for SQL NULL) and returns 0, or returns any
 * other value for a failure: the result is then NULL and the failure is counted, as a
 * failed CAST is.
 *
 * A STRING result is written into buf[0..cap), memory sluice owns and lends for the call
 * (result->v.s.ptr = buf, len <= cap), or points into one of the string arguments (a
 * substring of it, say); nothing else. cap is what is left of the evaluation's scratch
 * memory (up to 64 KiB for one row's expressions, less where other results took some);
 * return a failure when the result does not fit.
 *
 * Called on any shard thread, several at once: it must be reentrant (no unguarded global
 * state) and must not block; it runs per record, so it should not allocate either.
 */
typedef int (*sl_udf_fn)(const struct sl_udf_value *args, struct sl_udf_value *result, char *buf,
			 uint32_t cap);

/* Flags */
#define SL_UDF_CALLED_ON_NULL                                                                      \
	1u /* call it with NULL arguments too; by default a NULL                                   \
	    * argument makes the result NULL without a call */

/* What the library exports under the symbol named in CREATE FUNCTION. */
struct sl_udf {
	uint32_t abi;				/* SL_UDF_ABI */
	uint32_t flags;				/* SL_UDF_* */
	const char *name;			/* for messages: the function's own name */
	enum sl_udf_type result;		/* the return type */
	uint32_t nargs;				/* 0 .. SL_UDF_MAX_ARGS */
	enum sl_udf_type args[SL_UDF_MAX_ARGS]; /* the first nargs are the argument types */
	sl_udf_fn fn;
};

#ifdef __cplusplus
}
#endif

#endif
