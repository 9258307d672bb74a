/*
 * ckpt_util.h - helpers the checkpoint tests share: a scratch directory under $TMPDIR (on
 * the real disk, so fsync means something), removed at the end, and deterministic bytes.
 */
#ifndef SL_TESTS_CKPT_UTIL_H
#define SL_TESTS_CKPT_UTIL_H

#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/test.h"

static int util_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline void util_rm_rf(const char *path)
{
	nftw(path, util_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Fills buf with a scratch directory path, created. */
static inline void util_tmpdir(char *buf, size_t cap, const char *tag)
{
	const char *t = getenv("TMPDIR");

	snprintf(buf, cap, "%s/sl-%s-XXXXXX", t && *t ? t : "/tmp", tag);
	T_ASSERT(mkdtemp(buf));
}

/* xorshift bytes: the same seed gives the same content, so files can be checked. */
static inline void util_fill(uint8_t *p, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)x;
	}
}

/* Reads a whole file; returns its length or -1. Caller frees *out. */
static inline long util_read(const char *path, uint8_t **out)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	*out = malloc(n ? (size_t)n : 1);
	if (fread(*out, 1, (size_t)n, f) != (size_t)n)
		n = -1;
	fclose(f);
	return n;
}

/* Overwrites a file with n bytes. */
static inline void util_write(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	T_ASSERT(f);
	T_ASSERT(fwrite(p, 1, n, f) == n);
	T_ASSERT(fclose(f) == 0);
}

#endif
