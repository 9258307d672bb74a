/*
 * test.h - the tiny harness every test binary uses: exit 0 pass, 1 fail, 77 skip (the
 * convention meson understands, as liburing's test/helpers.h).
 */
#ifndef SL_TESTS_TEST_H
#define SL_TESTS_TEST_H

#include <stdio.h>
#include <stdlib.h>

#define T_EXIT_PASS 0
#define T_EXIT_FAIL 1
#define T_EXIT_SKIP 77

/* Fails the test with file:line and the expression when `cond` is false. */
#define T_ASSERT(cond)                                                                   \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                  \
			exit(T_EXIT_FAIL);                                               \
		}                                                                        \
	} while (0)

#define T_ASSERT_EQ_I64(a, b)                                                            \
	do {                                                                             \
		long long a_ = (long long)(a), b_ = (long long)(b);                      \
		if (a_ != b_) {                                                          \
			fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, \
				__LINE__, #a, a_, #b, b_);                               \
			exit(T_EXIT_FAIL);                                               \
		}                                                                        \
	} while (0)

#endif
