/*
 * eval_regex.c - REGEXP(s, re), REGEXP_EXTRACT(s, re[, group]) and REGEXP_REPLACE(s, re,
 * with) on PCRE2, with Flink's semantics (SqlFunctionUtils.regExp / regexpExtract /
 * regexpReplace over java.util.regex):
 *
 *   - a NULL argument gives NULL;
 *   - REGEXP is TRUE when some substring matches (Matcher.find), FALSE for an empty pattern
 *     and for a pattern that does not compile;
 *   - REGEXP_EXTRACT gives the group (default 0, the whole match) of the first match; NULL
 *     for no match, a group that took no part in the match, a group number out of range or
 *     a pattern that does not compile;
 *   - REGEXP_REPLACE replaces every match by the replacement taken literally (Flink quotes
 *     it with Matcher.quoteReplacement: `$1` is the text "$1", not a group reference); after
 *     an empty match the search goes on one character later, as Matcher.find does; NULL for
 *     a pattern that does not compile.
 *
 * Why PCRE2: Java's regular expressions are Perl's with a few additions, and PCRE2 is the
 * well-kept implementation of Perl's syntax; a hand-written matcher would differ from Java
 * in many more places. Options bring it closer still: UTF-8 (a `.` is a code point), ASCII
 * \d \w \s and POSIX classes (Java's default, no PCRE2_UCP), the newlines `.` and `$` stop
 * at include CR, NEL, LS and PS as Java's line terminators do (PCRE2_NEWLINE_ANY, which also
 * counts VT and FF), \uhhhh escapes (PCRE2_ALT_BSUX). Known differences from Java: Java-only
 * syntax (class intersection `[a-z&&[^x]]`, \p{Alpha}, \p{javaLowerCase}) does not compile
 * or, for `&&`, is read as literal characters; a case-insensitive match of non-ASCII letters
 * folds by Unicode as Java's UNICODE_CASE would.
 *
 * Costs: a literal pattern (the usual case) compiles once at plan time, JIT-compiled where
 * the platform allows it; a pattern read from a column compiles again for every record (no
 * JIT). Nothing here calls malloc per record: PCRE2 is given an allocator over the
 * evaluation scratch, so a record's match data and a column pattern's compiled code live in
 * the scratch and go with it. A JIT match runs on PCRE2's 32 KiB machine-stack area; a
 * pattern that needs more (or more scratch than there is) fails: NULL, counted in
 * ec->errors, as a pattern that does not compile is.
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval_int.h"

struct sl_regex {
	pcre2_code *code;
	uint32_t ngroups; /* capture groups; group numbers 0..ngroups */
	bool empty;	  /* the pattern is '': REGEXP is FALSE for it (Flink's regExp) */
};

/* What brings PCRE2 close to java.util.regex (see the top of the file). */
static const uint32_t re_options = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_ALT_BSUX;

static void set_java_like(pcre2_compile_context *cc)
{
	pcre2_set_newline(cc, PCRE2_NEWLINE_ANY);
	pcre2_set_compile_extra_options(cc, PCRE2_EXTRA_ALT_BSUX);
}

struct sl_regex *sl_eval_regex_compile_(const char *pat, uint32_t len, char *err, size_t errcap)
{
	pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
	struct sl_regex *re = calloc(1, sizeof(*re));
	PCRE2_UCHAR msg[160];
	PCRE2_SIZE off;
	int code;

	if (!cc || !re) {
		snprintf(err, errcap, "out of memory");
		goto out_free;
	}
	set_java_like(cc);
	re->code = pcre2_compile((PCRE2_SPTR)pat, len, re_options, &code, &off, cc);
	if (!re->code) {
		pcre2_get_error_message(code, msg, sizeof msg);
		snprintf(err, errcap, "%s at offset %zu", (const char *)msg, (size_t)off);
		goto out_free;
	}
	/* no JIT on this platform (or no executable memory): the interpreter matches */
	(void)pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE);
	pcre2_pattern_info(re->code, PCRE2_INFO_CAPTURECOUNT, &re->ngroups);
	re->empty = len == 0;
	pcre2_compile_context_free(cc);
	return re;
out_free:
	pcre2_compile_context_free(cc);
	free(re);
	return NULL;
}

void sl_eval_regex_free_(struct sl_regex *re)
{
	if (!re)
		return;
	pcre2_code_free(re->code);
	free(re);
}

/* ---- per record ------------------------------------------------------------------------ */

/*
 * PCRE2's allocator on the evaluation scratch. It takes from the top of the free part (and
 * lowers scratch_cap, which the kernel puts back) while results grow from the bottom as
 * everywhere else: the interpreter's frames, taken as a match needs them, never land in a
 * replacement being written. Aligned to 16 bytes.
 */
static void *scratch_malloc(size_t n, void *arg)
{
	struct sl_eval_ctx *ec = arg;
	uintptr_t base = (uintptr_t)ec->scratch, p;

	if (n > ec->scratch_cap - ec->scratch_used)
		return NULL;
	p = (base + ec->scratch_cap - n) & ~(uintptr_t)15;
	if (p < base + ec->scratch_used)
		return NULL;
	ec->scratch_cap = (uint32_t)(p - base);
	return (void *)p;
}

static void scratch_free(void *p, void *arg)
{
	(void)p;
	(void)arg;
}

/* The literal's compiled code, or the column pattern B compiled into the scratch. */
static const pcre2_code *pattern(const struct insn *in, const struct reg *b,
				 pcre2_general_context *gc, uint32_t *ngroups)
{
	const struct sl_regex *re = in->x.ptr;
	pcre2_compile_context *cc;
	pcre2_code *code;
	PCRE2_SIZE off;
	int err;

	if (re) {
		*ngroups = re->ngroups;
		return re->code;
	}
	cc = pcre2_compile_context_create(gc);
	if (!cc)
		return NULL;
	set_java_like(cc);
	code = pcre2_compile((PCRE2_SPTR)b->s.p, b->s.len, re_options, &err, &off, cc);
	if (code)
		pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, ngroups);
	return code;
}

/* Every match of s replaced by `with` into the scratch, as Java's replaceAll with a quoted
 * replacement. What is written is taken from the scratch at once (scratch_used), so frames
 * PCRE2 takes during a later match stay clear of it. False: out of scratch or a matching
 * failure (nothing kept). */
static bool put(struct sl_eval_ctx *ec, const char *p, uint32_t n)
{
	char *o = salloc(ec, n);

	if (!o)
		return false;
	memcpy(o, p, n);
	return true;
}

static bool replace_all(const pcre2_code *code, pcre2_match_data *md, const struct reg *s,
			const struct reg *with, struct reg *d, struct sl_eval_ctx *ec)
{
	const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
	uint32_t used = ec->scratch_used, last = 0, from = 0;
	int rc;

	for (;;) {
		uint32_t ms, me;

		rc = pcre2_match(code, (PCRE2_SPTR)s->s.p, s->s.len, from, 0, md, NULL);
		if (rc == PCRE2_ERROR_NOMATCH)
			break;
		ms = (uint32_t)ov[0];
		me = (uint32_t)ov[1];
		if (rc < 0 || !put(ec, s->s.p + last, ms - last) ||
		    !put(ec, with->s.p, with->s.len))
			goto out_fail;
		last = me;
		if (me > ms) {
			from = me;
			continue;
		}
		if (me >= s->s.len)
			break;
		from = me + cp_len((unsigned char)s->s.p[me]); /* past an empty match */
		if (from > s->s.len)
			from = s->s.len;
	}
	if (!put(ec, s->s.p + last, s->s.len - last))
		goto out_fail;
	d->null = false;
	d->s.p = ec->scratch + used;
	d->s.len = ec->scratch_used - used;
	return true;
out_fail:
	ec->scratch_used = used;
	return false;
}

bool sl_eval_regex_(const struct insn *in, const struct reg *a, const struct reg *b,
		    const struct reg *x, struct reg *d, struct sl_eval_ctx *ec)
{
	const struct sl_regex *re = in->x.ptr;
	uint32_t cap = ec->scratch_cap, ngroups = 0, pairs;
	pcre2_general_context *gc;
	const pcre2_code *code;
	pcre2_match_data *md;
	const PCRE2_SIZE *ov;
	int64_t g = 0;
	int rc;

	d->null = true;
	if (a->null || b->null || (x && x->null))
		return true;
	if (in->sub == RE_MATCH && (re ? re->empty : b->s.len == 0)) {
		d->null = false;
		d->i = 0;
		return true;
	}
	gc = pcre2_general_context_create(scratch_malloc, scratch_free, ec);
	code = gc ? pattern(in, b, gc, &ngroups) : NULL;
	if (!code)
		goto out_fail;
	if (in->sub == RE_EXTRACT && x)
		g = x->i;
	pairs = in->sub == RE_EXTRACT ? ngroups + 1 : 1;
	md = pcre2_match_data_create(pairs, gc);
	if (!md)
		goto out_fail;
	ov = pcre2_get_ovector_pointer(md);
	if (in->sub == RE_REPLACE) {
		if (!replace_all(code, md, a, x, d, ec))
			goto out_fail;
		ec->scratch_cap = cap;
		return true;
	}
	rc = pcre2_match(code, (PCRE2_SPTR)a->s.p, a->s.len, 0, 0, md, NULL);
	ec->scratch_cap = cap; /* the results point into a, not into the scratch */
	if (rc == PCRE2_ERROR_NOMATCH) {
		if (in->sub == RE_MATCH) {
			d->null = false;
			d->i = 0;
		}
		return true;
	}
	if (rc < 0)
		goto out_fail;
	if (in->sub == RE_MATCH) {
		d->null = false;
		d->i = 1;
		return true;
	}
	if (g < 0 || g > (int64_t)ngroups)
		return false; /* Java's IndexOutOfBoundsException: NULL, counted */
	if (ov[2 * g] == PCRE2_UNSET)
		return true; /* the group took no part in the match */
	d->null = false;
	d->s.p = a->s.p + ov[2 * g];
	d->s.len = (uint32_t)(ov[2 * g + 1] - ov[2 * g]);
	return true;
out_fail:
	ec->scratch_cap = cap;
	if (in->sub == RE_MATCH) { /* Flink's regExp: FALSE, the error logged */
		d->null = false;
		d->i = 0;
	}
	return false;
}
