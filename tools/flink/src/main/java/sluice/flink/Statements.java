/*
 * Statements - splits a Flink SQL job file into statements, as the SQL client does: at each
 * ';' outside quotes ('...', "...", `...`) and comments (-- to the end of the line, and
 * slash-star ... star-slash), except inside EXECUTE STATEMENT SET BEGIN ... END, which is one
 * statement ending at "END;". Comments are dropped; each statement keeps the line it starts on.
 */
package sluice.flink;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

final class Statements {
	private static final Pattern SET_BEGIN =
		Pattern.compile("(?is)^EXECUTE\\s+STATEMENT\\s+SET\\s+BEGIN\\b.*");
	private static final Pattern ENDS_WITH_END = Pattern.compile("(?is).*\\bEND\\s*$");

	static final class Stmt {
		final String sql; /* without comments or the closing ';' */
		final int line;   /* 1-based line of its first character */

		Stmt(String sql, int line) {
			this.sql = sql;
			this.line = line;
		}
	}

	private Statements() {
	}

	static List<Stmt> split(String text) {
		List<Stmt> out = new ArrayList<>();
		StringBuilder cur = new StringBuilder();
		int line = 1, startLine = -1;
		int n = text.length();
		for (int i = 0; i < n; i++) {
			char c = text.charAt(i);
			char next = i + 1 < n ? text.charAt(i + 1) : 0;
			if (c == '-' && next == '-') {
				while (i < n && text.charAt(i) != '\n')
					i++;
				if (i < n) {
					cur.append('\n');
					line++;
				}
				continue;
			}
			if (c == '/' && next == '*') {
				int end = text.indexOf("*/", i + 2);
				if (end < 0)
					throw new IllegalArgumentException(line + ": unterminated comment");
				for (int j = i; j < end; j++)
					if (text.charAt(j) == '\n') {
						line++;
						cur.append('\n');
					}
				cur.append(' ');
				i = end + 1;
				continue;
			}
			if (c == '\'' || c == '"' || c == '`') {
				if (startLine < 0)
					startLine = line;
				int j = i + 1;
				for (;;) {
					if (j >= n)
						throw new IllegalArgumentException(line + ": unterminated " + c);
					char d = text.charAt(j);
					if (d == c) {
						if (j + 1 < n && text.charAt(j + 1) == c) { /* doubled: escaped */
							j += 2;
							continue;
						}
						break;
					}
					j++;
				}
				String lit = text.substring(i, j + 1);
				line += lit.chars().filter(ch -> ch == '\n').count();
				cur.append(lit);
				i = j;
				continue;
			}
			if (c == ';') {
				String s = cur.toString().strip();
				if (SET_BEGIN.matcher(s).matches() && !ENDS_WITH_END.matcher(s).matches()) {
					cur.append(';'); /* a statement inside the set */
					continue;
				}
				if (!s.isEmpty())
					out.add(new Stmt(s, startLine));
				cur.setLength(0);
				startLine = -1;
				continue;
			}
			if (c == '\n')
				line++;
			else if (startLine < 0 && !Character.isWhitespace(c))
				startLine = line;
			cur.append(c);
		}
		String s = cur.toString().strip();
		if (!s.isEmpty())
			out.add(new Stmt(s, startLine));
		return out;
	}

	/** The statement's first keyword in upper case, or "(" for a parenthesised query. */
	static String firstWord(String sql) {
		int i = 0;
		while (i < sql.length() && Character.isLetter(sql.charAt(i)))
			i++;
		if (i == 0)
			return sql.isEmpty() ? "" : sql.substring(0, 1);
		return sql.substring(0, i).toUpperCase(Locale.ROOT);
	}
}
