/*
 * op_match_test.c - matching a checkpoint's operators to a job's by kind and uid
 * (op_match.h): state follows its operator to another index, a gone operator refuses the
 * restore unless its state may be dropped, an operator whose columns changed refuses it,
 * and another job's name refuses it.
 */
#include <errno.h>
#include <string.h>

#include "manifest.h"
#include "op_match.h"
#include "tests/test.h"

#define HAD "j|0:source:t/gen;1:exchange:t/key_by;2:window:t/w=0000abcd;3:sink:t/sink;"

/* A manifest of HAD: a split of the source, state files of the window on two shards, a
 * pending commit of the sink. */
static void fill(struct sl_ckpt_manifest *m)
{
	T_ASSERT_EQ_I64(sl_ckpt_manifest_init(m, HAD, 5, 2, 128), 0);
	T_ASSERT_EQ_I64(sl_ckpt_manifest_add_source(m, 0, 0, "p", 1), 0);
	T_ASSERT_EQ_I64(sl_ckpt_manifest_add_file(m, 2, 0, "op2-s0.state", 10, 1), 0);
	T_ASSERT_EQ_I64(sl_ckpt_manifest_add_file(m, 2, 1, "op2-s1/000001.sst", 10, 1), 0);
	T_ASSERT_EQ_I64(sl_ckpt_manifest_add_sink(m, 3, 0, "c", 1), 0);
}

static void test_moved(void)
{
	struct sl_ckpt_manifest m;
	char why[512];

	fill(&m);
	/* a filter before the window, another statement's operators before everything */
	T_ASSERT_EQ_I64(sl_ckpt_manifest_map_ops(&m,
						 "j|0:source:u/gen;1:sink:u/sink;2:source:t/gen;"
						 "3:filter:t/where;4:exchange:t/key_by;"
						 "5:window:t/w=0000abcd;6:sink:t/sink;",
						 false, why, sizeof why),
			0);
	T_ASSERT_EQ_I64(m.sources[0].op_id, 2);
	T_ASSERT_EQ_I64(m.files[0].op_id, 5);
	T_ASSERT_EQ_I64(m.files[1].op_id, 5);
	/* the file keeps its name: it lies where it was written */
	T_ASSERT(!strcmp(m.files[1].path, "op2-s1/000001.sst"));
	T_ASSERT_EQ_I64(m.sinks[0].op_id, 6);
	sl_ckpt_manifest_fini(&m);
}

static void test_gone(void)
{
	const char *want = "j|0:source:t/gen;1:exchange:t/key_by;2:window:t/hop=0000abcd;"
			   "3:sink:t/sink;";
	struct sl_ckpt_manifest m;
	char why[512];

	fill(&m);
	T_ASSERT_EQ_I64(sl_ckpt_manifest_map_ops(&m, want, false, why, sizeof why), -ESTALE);
	T_ASSERT(strstr(why, "window 't/w'") && strstr(why, "--allow-non-restored-state"));
	T_ASSERT_EQ_I64(m.nfiles, 2); /* untouched */
	T_ASSERT_EQ_I64(sl_ckpt_manifest_map_ops(&m, want, true, why, sizeof why), 1);
	T_ASSERT(strstr(why, "window 't/w'"));
	T_ASSERT_EQ_I64(m.nfiles, 0);
	T_ASSERT_EQ_I64(m.nsources, 1);
	T_ASSERT_EQ_I64(m.nsinks, 1);
	T_ASSERT_EQ_I64(m.sinks[0].op_id, 3);
	sl_ckpt_manifest_fini(&m);
}

static void test_refused(void)
{
	struct sl_ckpt_manifest m;
	char why[512];

	fill(&m);
	/* same uid, other columns: never dropped, even when dropping is allowed */
	T_ASSERT_EQ_I64(sl_ckpt_manifest_map_ops(&m,
						 "j|0:source:t/gen;1:exchange:t/key_by;"
						 "2:window:t/w=00001234;3:sink:t/sink;",
						 true, why, sizeof why),
			-ESTALE);
	T_ASSERT(strstr(why, "columns changed"));
	/* another job */
	T_ASSERT_EQ_I64(sl_ckpt_manifest_map_ops(&m, "k|0:source:t/gen;", true, why, sizeof why),
			-ESTALE);
	T_ASSERT(strstr(why, "'j'") && strstr(why, "'k'"));
	/* the same kind and uid must both match: a source is not a sink */
	T_ASSERT_EQ_I64(sl_ckpt_manifest_map_ops(&m,
						 "j|0:sink:t/gen;1:exchange:t/key_by;"
						 "2:window:t/w=0000abcd;3:sink:t/sink;",
						 false, why, sizeof why),
			-ESTALE);
	T_ASSERT(strstr(why, "source 't/gen'"));
	sl_ckpt_manifest_fini(&m);
}

static void test_fate(void)
{
	char desc[128];
	int to;

	T_ASSERT_EQ_I64(sl_ckpt_op_find(HAD, 2, "j|0:window:t/w;", &to, desc, sizeof desc),
			SL_CKPT_OP_SAME); /* an id without columns: kind and uid decide */
	T_ASSERT_EQ_I64(to, 0);
	T_ASSERT(!strcmp(desc, "window 't/w'"));
	T_ASSERT_EQ_I64(sl_ckpt_op_find(HAD, 9, "j|0:window:t/w;", &to, desc, sizeof desc),
			SL_CKPT_OP_UNNAMED);
	T_ASSERT_EQ_I64(to, -1);
}

int main(void)
{
	test_moved();
	test_gone();
	test_refused();
	test_fate();
	return T_EXIT_PASS;
}
