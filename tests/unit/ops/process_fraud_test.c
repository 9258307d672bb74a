/*
 * process_fraud_test.c - the fraud detector example (examples/fraud_detector.c, included so
 * the test runs the example's own job) through sl_job_run on 2 shards: exactly one alert,
 * U123's 2000 at 30000 after its 1500 at 1000; U456 (small) and U123's third transaction
 * (90 s later) raise none. Run twice to check the result does not depend on the run.
 */
#define FRAUD_DETECTOR_NO_MAIN
#include "examples/fraud_detector.c"

#include "tests/test.h"

int main(void)
{
	for (int run = 0; run < 2; run++) {
		struct alerts a = { .quiet = 1 };

		T_ASSERT_EQ_I64(fraud_run(2, &a), 0);
		T_ASSERT_EQ_I64(atomic_load(&a.n), 1);
		T_ASSERT(strcmp(a.user, "U123") == 0);
		T_ASSERT_EQ_I64(a.first_ts, 1000);
		T_ASSERT_EQ_I64(a.second_ts, 30000);
		T_ASSERT_EQ_I64(a.amount, 2000);
	}
	return T_EXIT_PASS;
}
