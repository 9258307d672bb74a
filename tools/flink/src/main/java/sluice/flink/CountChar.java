package sluice.flink;

import org.apache.flink.table.functions.ScalarFunction;

/**
 * Nexmark q14's user function on Flink, as the Nexmark suite's CountChar: how many times the
 * first character of {@code character} occurs in {@code s}, 0 when s is null. The test oracle
 * registers it with CREATE FUNCTION count_char AS 'sluice.flink.CountChar' where sluice loads
 * bench/nexmark/count_char.c.
 */
public class CountChar extends ScalarFunction {
	public long eval(String s, String character) {
		long count = 0;
		if (s != null) {
			char c = character.charAt(0);
			for (int i = 0; i < s.length(); i++)
				if (s.charAt(i) == c)
					count++;
		}
		return count;
	}
}
