/*
 * SqlRunner - runs Flink SQL job files on Flink's MiniCluster in streaming mode: the oracle
 * sluice's differential tests compare against (tests/flink/), and the peer of bench/peer.
 *
 *   SqlRunner [OPTIONS] JOB.sql
 *       runs JOB.sql; the changelog of every bare SELECT, and whatever print tables write,
 *       goes to stdout; exit 1 with the failing statement's place and cause on stderr
 *   SqlRunner [OPTIONS] --batch LIST
 *       LIST has one "JOB.sql<TAB>OUT" a line: each job runs in turn in this one JVM, on one
 *       MiniCluster (the JVM's start, the cluster's and the planner's warm-up are paid
 *       once), stdout goes to OUT, and on failure the cause goes to OUT.err; the exit status
 *       is 0 unless LIST could not be read. After each job one line on stderr:
 *       "flink-sql: JOB ok|FAILED (WALL s, cpu CPU s)": its time from planning to its end,
 *       and the JVM's CPU time over that span (bench/peer.py's measure)
 *   SqlRunner [OPTIONS] --serve
 *       the same for "JOB.sql<TAB>OUT" lines read from stdin as they come; after each job
 *       one line "done OUT" on stdout (the fuzz test's shrinking asks job after job)
 *   OPTIONS: --parallelism N   whatever the job SETs
 *            --timeout S       per Flink job (default 300); the job is cancelled after it
 *            --format print    (default) rows as Flink's print connector writes them: each
 *                              value's Java toString() (2024-01-01T00:00, null)
 *            --format sql      each value as CAST(v AS STRING) writes it (2024-01-01
 *                              00:00:00.000, NULL), as sluice prints: 'print' tables become
 *                              'sluice-sql-print' (SqlPrintSinkFactory)
 *
 * A job file is what `sluice run` takes: SET, CREATE TABLE/VIEW, INSERT INTO, EXECUTE
 * STATEMENT SET BEGIN ... END, and bare SELECTs. Statements run in file order, each INSERT,
 * statement set and SELECT as one Flink job awaited before the next, as sluice does. A bare
 * SELECT is inserted into an anonymous 'print' table, so its rows are printed by Flink's own
 * print connector: "+I[a, 1]", "-U[...]", "+U[...]", "-D[...]", without the "N> " prefix
 * while the sink runs with parallelism 1.
 *
 * Defaults that differ from a bare TableEnvironment, each sluice's own default, so that a
 * job file means the same on both sides: table.local-time-zone UTC, parallelism.default 1
 * (--parallelism N overrides the job's own SET; the oracle runs with 1 so that which rows
 * are late is decided by one watermark, as on one sluice shard).
 */
package sluice.flink;

import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.TableDescriptor;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;

public final class SqlRunner {
	private static final Pattern SET =
		Pattern.compile("(?is)^SET\\s+'((?:[^']|'')*)'\\s*=\\s*'((?:[^']|'')*)'\\s*$");

	private static final Pattern PRINT_CONNECTOR =
		Pattern.compile("(?i)('connector'\\s*=\\s*)'print'");

	private final Integer parallelism; /* --parallelism, or null: the job's own */
	private final long timeoutSec;     /* per Flink job; the job is cancelled after it */
	private final boolean sqlFormat;   /* --format sql */
	private URI cluster;               /* the shared MiniCluster's REST address, or null */

	private SqlRunner(Integer parallelism, long timeoutSec, boolean sqlFormat) {
		this.parallelism = parallelism;
		this.timeoutSec = timeoutSec;
		this.sqlFormat = sqlFormat;
	}

	/** A failure that names the statement (FILE:LINE) and the cause, in one line. */
	static final class JobError extends Exception {
		JobError(String msg, Throwable cause) {
			super(msg, cause);
		}
	}

	public static void main(String[] args) throws Exception {
		Integer par = null;
		long timeout = 300;
		String batch = null;
		String job = null;
		boolean sql = false;
		for (int i = 0; i < args.length; i++) {
			switch (args[i]) {
			case "--parallelism":
				par = Integer.parseInt(args[++i]);
				break;
			case "--timeout":
				timeout = Long.parseLong(args[++i]);
				break;
			case "--format":
				String fmt = args[++i];
				if (!fmt.equals("sql") && !fmt.equals("print"))
					usage();
				sql = fmt.equals("sql");
				break;
			case "--batch":
				batch = args[++i];
				break;
			case "--serve":
				batch = "-";
				break;
			default:
				if (args[i].startsWith("-") || job != null)
					usage();
				job = args[i];
			}
		}
		if ((batch == null) == (job == null))
			usage();
		SqlRunner r = new SqlRunner(par, timeout, sql);
		int rc = batch != null ? r.runBatch(batch) : r.runOne(Path.of(job));
		System.out.flush();
		/* MiniCluster threads are not all daemons: leave at once, as the job is done */
		Runtime.getRuntime().halt(rc);
	}

	private static void usage() {
		System.err.println("usage: SqlRunner [--parallelism N] [--timeout S] [--format print|sql] "
				   + "JOB.sql | --batch LIST | --serve");
		Runtime.getRuntime().halt(2);
	}

	private int runOne(Path job) {
		try {
			runFile(job);
			return 0;
		} catch (JobError e) {
			System.out.flush();
			System.err.println(e.getMessage());
			return 1;
		}
	}

	private int runBatch(String list) throws Exception {
		startCluster();
		PrintStream stdout = System.out;
		boolean serve = list.equals("-");
		BufferedReader in = serve
			? new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))
			: Files.newBufferedReader(Path.of(list), StandardCharsets.UTF_8);
		int n = 0, failed = 0;
		for (String line; (line = in.readLine()) != null;) {
			if (line.isBlank())
				continue;
			String[] f = line.split("\t");
			if (f.length != 2)
				throw new IOException(list + ": want JOB<TAB>OUT, got: " + line);
			Path job = Path.of(f[0]), out = Path.of(f[1]);
			Path err = Path.of(f[1] + ".err");
			Files.deleteIfExists(err);
			long t0 = System.nanoTime(), c0 = cpuNanos();
			String status = "ok";
			try (PrintStream ps = new PrintStream(new FileOutputStream(out.toFile()), true,
							      StandardCharsets.UTF_8)) {
				/* the print sink takes System.out when it opens, so each job's rows
				 * land in its own OUT */
				System.setOut(ps);
				try {
					runFile(job);
				} catch (JobError e) {
					/* the cause on the first line, then the whole trace */
					StringWriter w = new StringWriter();
					e.getCause().printStackTrace(new PrintWriter(w));
					Files.writeString(err, e.getMessage() + "\n" + w, StandardCharsets.UTF_8);
					status = "FAILED";
					failed++;
				} finally {
					System.setOut(stdout);
				}
			}
			n++;
			/* the wall and the process's CPU time of the job (bench/peer.py reads both) */
			System.err.printf(Locale.ROOT, "flink-sql: %s %s (%.4f s, cpu %.4f s)%n", job,
					  status, (System.nanoTime() - t0) / 1e9, (cpuNanos() - c0) / 1e9);
			if (serve) {
				stdout.println("done " + out);
				stdout.flush();
			}
		}
		System.err.printf(Locale.ROOT, "flink-sql: %d jobs, %d failed%n", n, failed);
		return 0;
	}

	/** CPU time of this JVM so far, every thread (tasks, GC, JIT, the cluster's own). */
	private static long cpuNanos() {
		return ((com.sun.management.OperatingSystemMXBean)ManagementFactory
				.getOperatingSystemMXBean()).getProcessCpuTime();
	}

	/*
	 * One MiniCluster for every job of a batch, reached through its REST endpoint as a remote
	 * cluster: a job then costs its planning and its run, not a cluster's start and stop
	 * (about a second each). Jobs ship no jars: the cluster runs in this JVM, whose class
	 * path has the runner, Flink and the connectors.
	 */
	private void startCluster() throws Exception {
		Configuration conf = new Configuration();
		conf.setString("rest.bind-address", "127.0.0.1");
		conf.setString("rest.address", "127.0.0.1");
		conf.setString("rest.bind-port", "0");
		int slots = Math.max(4, parallelism == null ? 1 : parallelism);
		MiniCluster mc = new MiniCluster(new MiniClusterConfiguration.Builder()
							.setConfiguration(conf)
							.setNumTaskManagers(1)
							.setNumSlotsPerTaskManager(slots)
							.build());
		mc.start();
		cluster = mc.getRestAddress().get();
	}

	private TableEnvironment newEnv() {
		Configuration conf = new Configuration();
		conf.setString("table.local-time-zone", "UTC");
		conf.setString("parallelism.default", "1");
		if (cluster != null) {
			conf.setString("execution.target", "remote");
			conf.setString("rest.address", cluster.getHost());
			conf.setString("rest.port", Integer.toString(cluster.getPort()));
		}
		EnvironmentSettings s =
			EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build();
		return TableEnvironment.create(s);
	}

	/** Runs every statement of one job file in a fresh TableEnvironment (a fresh catalog). */
	void runFile(Path job) throws JobError {
		String text;
		try {
			text = Files.readString(job, StandardCharsets.UTF_8);
		} catch (IOException e) {
			throw new JobError(job + ": " + e, e);
		}
		List<Statements.Stmt> stmts;
		try {
			stmts = Statements.split(text);
		} catch (IllegalArgumentException e) {
			throw new JobError(job + ":" + e.getMessage(), e);
		}
		TableEnvironment env = newEnv();
		for (Statements.Stmt st : stmts) {
			try {
				runStatement(env, st.sql);
			} catch (Throwable e) {
				throw new JobError(job + ":" + st.line + ": " + describe(e), e);
			}
		}
	}

	private void runStatement(TableEnvironment env, String sql) throws Exception {
		Matcher m = SET.matcher(sql);
		if (m.matches()) {
			env.getConfig().set(m.group(1).replace("''", "'"), m.group(2).replace("''", "'"));
			return;
		}
		if (parallelism != null)
			env.getConfig().set("parallelism.default", parallelism.toString());
		String kw = Statements.firstWord(sql);
		switch (kw) {
		case "SELECT":
		case "WITH":
		case "VALUES":
		case "(": {
			Table t = env.sqlQuery(sql);
			String conn = sqlFormat ? SqlPrintSinkFactory.IDENTIFIER : "print";
			await(t.executeInsert(TableDescriptor.forConnector(conn).build()));
			break;
		}
		case "CREATE":
			if (sqlFormat)
				sql = PRINT_CONNECTOR.matcher(sql).replaceAll(
					"$1'" + SqlPrintSinkFactory.IDENTIFIER + "'");
			env.executeSql(sql);
			break;
		case "INSERT":
		case "EXECUTE":
			await(env.executeSql(sql));
			break;
		default: {
			TableResult r = env.executeSql(sql);
			if (kw.equals("SHOW") || kw.equals("EXPLAIN") || kw.equals("DESCRIBE")
			    || kw.equals("DESC"))
				r.print();
		}
		}
	}

	private void await(TableResult r) throws Exception {
		try {
			r.await(timeoutSec, TimeUnit.SECONDS);
		} catch (TimeoutException e) {
			Optional<JobClient> c = r.getJobClient();
			if (c.isPresent())
				c.get().cancel().get(30, TimeUnit.SECONDS);
			throw new Exception("job did not end within " + timeoutSec + " s (cancelled)");
		}
	}

	/** The error and its innermost cause, on one line. */
	private static String describe(Throwable e) {
		Throwable root = e;
		while (root.getCause() != null && root.getCause() != root)
			root = root.getCause();
		String top = oneLine(e.getMessage()), cause = oneLine(root.getMessage());
		if (top.isEmpty())
			top = e.getClass().getName();
		if (root == e || cause.isEmpty() || top.contains(cause))
			return top;
		return top + " (cause: " + root.getClass().getSimpleName() + ": " + cause + ")";
	}

	private static String oneLine(String s) {
		if (s == null)
			return "";
		s = s.strip().replaceAll("\\s*\\n\\s*", " ");
		return s.length() > 800 ? s.substring(0, 800) + "..." : s;
	}
}
