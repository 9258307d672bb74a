/*
 * manifest_test.c - a manifest with several sources, operators x shards and sinks survives
 * encode/decode field for field; every truncation, every single flipped byte, a newer
 * format version and a path escaping the directory are refused with a reason.
 */
#include "crc32c.h"
#include "manifest.h"
#include "snap.h"

#include "tests/test.h"
#include "tests/unit/checkpoint/ckpt_util.h"

#include <errno.h>

static void build(struct sl_ckpt_manifest *m)
{
	char name[64];

	T_ASSERT(sl_ckpt_manifest_init(m, "plan:3f9a1c", 42, 4, 128) == 0);
	for (uint32_t s = 0; s < 6; s++) {
		uint64_t off = 1000 * s + 7;

		T_ASSERT(sl_ckpt_manifest_add_source(m, 1, s, &off, sizeof(off)) == 0);
	}
	T_ASSERT(sl_ckpt_manifest_add_source(m, 9, 0, "", 0) == 0); /* empty position */
	for (uint32_t op = 2; op < 5; op++)
		for (uint32_t sh = 0; sh < 4; sh++) {
			snprintf(name, sizeof(name), "op%u-s%u.state", op, sh);
			T_ASSERT(sl_ckpt_manifest_add_file(m, op, sh, name, op * 1000003ull + sh,
							   0xC0FFEE00u + op * 16 + sh) == 0);
		}
	T_ASSERT(sl_ckpt_manifest_add_file(m, 7, 1, "op7-s1.rocks/000012.sst", 1ull << 33, 1) == 0);
	for (uint32_t i = 0; i < 4; i++) {
		char meta[80];
		int n = snprintf(meta, sizeof(meta), ".part-%u-42.inprogress -> part-%u-42", i, i);

		T_ASSERT(sl_ckpt_manifest_add_sink(m, 11, i, meta, (uint32_t)n) == 0);
	}
}

static void same(const struct sl_ckpt_manifest *a, const struct sl_ckpt_manifest *b)
{
	T_ASSERT_EQ_I64(a->version, SL_CKPT_FORMAT_VERSION);
	T_ASSERT_EQ_I64(a->ckpt_id, b->ckpt_id);
	T_ASSERT_EQ_I64(a->nshards, b->nshards);
	T_ASSERT_EQ_I64(a->max_parallelism, b->max_parallelism);
	T_ASSERT(!strcmp(a->job_id, b->job_id));
	T_ASSERT_EQ_I64(a->nsources, b->nsources);
	for (uint32_t i = 0; i < a->nsources; i++) {
		T_ASSERT_EQ_I64(a->sources[i].op_id, b->sources[i].op_id);
		T_ASSERT_EQ_I64(a->sources[i].split, b->sources[i].split);
		T_ASSERT_EQ_I64(a->sources[i].len, b->sources[i].len);
		T_ASSERT(!memcmp(a->sources[i].bytes, b->sources[i].bytes, a->sources[i].len));
	}
	T_ASSERT_EQ_I64(a->nfiles, b->nfiles);
	for (uint32_t i = 0; i < a->nfiles; i++) {
		T_ASSERT_EQ_I64(a->files[i].op_id, b->files[i].op_id);
		T_ASSERT_EQ_I64(a->files[i].shard, b->files[i].shard);
		T_ASSERT_EQ_I64(a->files[i].size, b->files[i].size);
		T_ASSERT_EQ_I64(a->files[i].crc32c, b->files[i].crc32c);
		T_ASSERT(!strcmp(a->files[i].path, b->files[i].path));
	}
	T_ASSERT_EQ_I64(a->nsinks, b->nsinks);
	for (uint32_t i = 0; i < a->nsinks; i++) {
		T_ASSERT_EQ_I64(a->sinks[i].op_id, b->sinks[i].op_id);
		T_ASSERT_EQ_I64(a->sinks[i].instance, b->sinks[i].instance);
		T_ASSERT_EQ_I64(a->sinks[i].len, b->sinks[i].len);
		T_ASSERT(!memcmp(a->sinks[i].bytes, b->sinks[i].bytes, a->sinks[i].len));
	}
}

int main(void)
{
	struct sl_ckpt_manifest m, d;
	struct sl_snap_buf buf;
	char why[256];
	uint32_t crc;

	build(&m);
	T_ASSERT_EQ_I64(m.nfiles, 13);
	sl_snap_init(&buf);
	T_ASSERT(sl_ckpt_manifest_encode(&m, &buf) == 0);
	T_ASSERT(sl_ckpt_manifest_decode(&d, buf.data, buf.len, why, sizeof(why)) == 0);
	same(&d, &m);
	sl_ckpt_manifest_fini(&d);

	/* Every truncation is refused, and says so. */
	for (size_t n = 0; n < buf.len; n++) {
		T_ASSERT(sl_ckpt_manifest_decode(&d, buf.data, n, why, sizeof(why)) == -EINVAL);
		T_ASSERT(strstr(why, "truncated") || strstr(why, "magic"));
		T_ASSERT_EQ_I64(d.nfiles, 0);
	}
	/* Every single flipped byte is refused. */
	for (size_t i = 0; i < buf.len; i++) {
		buf.data[i] ^= 0x20;
		T_ASSERT(sl_ckpt_manifest_decode(&d, buf.data, buf.len, why, sizeof(why)) ==
			 -EINVAL);
		T_ASSERT(why[0]);
		buf.data[i] ^= 0x20;
	}
	/* A newer format, with a valid checksum, is refused by version. */
	{
		uint32_t v = SL_CKPT_FORMAT_VERSION + 1;

		memcpy(buf.data + 8, &v, 4);
		crc = sl_crc32c(0, buf.data, buf.len - 4);
		memcpy(buf.data + buf.len - 4, &crc, 4);
		T_ASSERT(sl_ckpt_manifest_decode(&d, buf.data, buf.len, why, sizeof(why)) ==
			 -EINVAL);
		T_ASSERT(strstr(why, "newer"));
	}
	sl_snap_free(&buf);

	/* Paths that leave the checkpoint directory are refused at add time. */
	T_ASSERT(sl_ckpt_manifest_add_file(&m, 1, 0, "../chk-1/op1-s0.state", 1, 1) == -EINVAL);
	T_ASSERT(sl_ckpt_manifest_add_file(&m, 1, 0, "/etc/passwd", 1, 1) == -EINVAL);
	T_ASSERT(sl_ckpt_manifest_add_file(&m, 1, 0, "a/../../b", 1, 1) == -EINVAL);
	T_ASSERT(sl_ckpt_manifest_add_file(&m, 1, 0, "", 1, 1) == -EINVAL);
	T_ASSERT(sl_ckpt_path_ok("op1-s0.state") && sl_ckpt_path_ok("db/..x/000001.sst"));

	/* An empty manifest round-trips too. */
	sl_ckpt_manifest_fini(&m);
	T_ASSERT(sl_ckpt_manifest_init(&m, "", 1, 1, 1) == 0);
	sl_snap_init(&buf);
	T_ASSERT(sl_ckpt_manifest_encode(&m, &buf) == 0);
	T_ASSERT(sl_ckpt_manifest_decode(&d, buf.data, buf.len, why, sizeof(why)) == 0);
	same(&d, &m);
	sl_ckpt_manifest_fini(&d);
	sl_ckpt_manifest_fini(&m);
	sl_snap_free(&buf);
	return T_EXIT_PASS;
}
