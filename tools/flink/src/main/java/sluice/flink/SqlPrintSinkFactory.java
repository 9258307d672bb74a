/*
 * SqlPrintSinkFactory - connector 'sluice-sql-print': Flink's 'print' connector (same options,
 * same "identifier:subtask> " prefix, same "+I[...]" envelope) with each value written as
 * Flink's CAST(value AS STRING) writes it (2024-01-01 00:00:00.000, NULL, TRUE), which is what
 * sluice prints. Flink's own print connector writes the Java objects' toString()
 * (2024-01-01T00:00, null, true); `--format sql` swaps this connector in for 'print' so that
 * the two engines' changelogs compare value for value, with Flink's cast rules deciding each
 * value's text.
 */
package sluice.flink;

import java.io.PrintStream;
import java.time.ZoneId;
import java.util.HashSet;
import java.util.Set;

import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.config.TableConfigOptions;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.sink.SinkV2Provider;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.planner.codegen.CodeGeneratorContext;
import org.apache.flink.table.planner.functions.casting.RowDataToStringConverterImpl;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.utils.print.PrintStyle;
import org.apache.flink.table.utils.print.RowDataToStringConverter;

public final class SqlPrintSinkFactory implements DynamicTableSinkFactory {
	public static final String IDENTIFIER = "sluice-sql-print";

	static final ConfigOption<String> PRINT_IDENTIFIER =
		ConfigOptions.key("print-identifier").stringType().noDefaultValue();
	static final ConfigOption<Boolean> STANDARD_ERROR =
		ConfigOptions.key("standard-error").booleanType().defaultValue(false);

	@Override
	public String factoryIdentifier() {
		return IDENTIFIER;
	}

	@Override
	public Set<ConfigOption<?>> requiredOptions() {
		return new HashSet<>();
	}

	@Override
	public Set<ConfigOption<?>> optionalOptions() {
		Set<ConfigOption<?>> o = new HashSet<>();
		o.add(PRINT_IDENTIFIER);
		o.add(STANDARD_ERROR);
		o.add(FactoryUtil.SINK_PARALLELISM);
		return o;
	}

	@Override
	public DynamicTableSink createDynamicTableSink(Context context) {
		FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
		helper.validate();
		ReadableConfig opts = helper.getOptions();
		String zone = context.getConfiguration().get(TableConfigOptions.LOCAL_TIME_ZONE);
		if (TableConfigOptions.LOCAL_TIME_ZONE.defaultValue().equals(zone))
			zone = ZoneId.systemDefault().getId();
		return new SqlPrintSink(
			context.getCatalogTable().getResolvedSchema().toPhysicalRowDataType(),
			opts.get(PRINT_IDENTIFIER), opts.get(STANDARD_ERROR),
			opts.getOptional(FactoryUtil.SINK_PARALLELISM).orElse(null), zone);
	}

	private static final class SqlPrintSink implements DynamicTableSink {
		private final DataType type;
		private final String identifier;
		private final boolean stdErr;
		private final Integer parallelism;
		private final String zone;

		SqlPrintSink(DataType type, String identifier, boolean stdErr, Integer parallelism,
			     String zone) {
			this.type = type;
			this.identifier = identifier;
			this.stdErr = stdErr;
			this.parallelism = parallelism;
			this.zone = zone;
		}

		@Override
		public ChangelogMode getChangelogMode(ChangelogMode requested) {
			return requested;
		}

		@Override
		public SinkRuntimeProvider getSinkRuntimeProvider(DynamicTableSink.Context context) {
			return SinkV2Provider.of(new PrintSqlSink(type, identifier, stdErr, zone),
						 parallelism);
		}

		@Override
		public DynamicTableSink copy() {
			return new SqlPrintSink(type, identifier, stdErr, parallelism, zone);
		}

		@Override
		public String asSummaryString() {
			return "Print (as CAST to STRING) to " + (stdErr ? "System.err" : "System.out");
		}
	}

	private static final class PrintSqlSink implements Sink<RowData> {
		private static final long serialVersionUID = 1L;
		private final DataType type;
		private final String identifier;
		private final boolean stdErr;
		private final String zone;

		PrintSqlSink(DataType type, String identifier, boolean stdErr, String zone) {
			this.type = type;
			this.identifier = identifier;
			this.stdErr = stdErr;
			this.zone = zone;
		}

		@Override
		public SinkWriter<RowData> createWriter(WriterInitContext ctx) {
			/* the prefix as Flink's PrintSinkOutputWriter builds it */
			String prefix = identifier == null ? "" : identifier;
			int n = ctx.getTaskInfo().getNumberOfParallelSubtasks();
			if (n > 1)
				prefix += (prefix.isEmpty() ? "" : ":")
					  + (ctx.getTaskInfo().getIndexOfThisSubtask() + 1);
			if (!prefix.isEmpty())
				prefix += "> ";
			/* not the job's class loader (see write()) */
			ClassLoader cl = SqlPrintSinkFactory.class.getClassLoader();
			RowDataToStringConverter conv = new RowDataToStringConverterImpl(
				type, ZoneId.of(zone), cl, false,
				new CodeGeneratorContext(new Configuration(), cl));
			return new Writer(prefix, conv, stdErr ? System.err : System.out);
		}
	}

	private static final class Writer implements SinkWriter<RowData> {
		private final String prefix;
		private final RowDataToStringConverter conv;
		private final PrintStream out;
		private final StringBuilder sb = new StringBuilder();

		Writer(String prefix, RowDataToStringConverter conv, PrintStream out) {
			this.prefix = prefix;
			this.conv = conv;
			this.out = out;
		}

		@Override
		public void write(RowData row, Context context) {
			/* the casts are compiled (once per JVM, then cached) and run against the
			 * thread's context class loader: make it this JVM's, not the job's, which
			 * closes when the job ends */
			Thread t = Thread.currentThread();
			ClassLoader jobs = t.getContextClassLoader();
			t.setContextClassLoader(SqlPrintSinkFactory.class.getClassLoader());
			String[] f;
			try {
				f = conv.convert(row);
			} finally {
				t.setContextClassLoader(jobs);
			}
			sb.setLength(0);
			sb.append(prefix).append(row.getRowKind().shortString()).append('[');
			for (int i = 0; i < f.length; i++) {
				if (i > 0)
					sb.append(", ");
				/* the converter spells NULL as the SQL client's table does */
				sb.append(row.isNullAt(i) && PrintStyle.NULL_VALUE.equals(f[i]) ? "NULL" : f[i]);
			}
			out.println(sb.append(']'));
		}

		@Override
		public void flush(boolean endOfInput) {
			out.flush();
		}

		@Override
		public void close() {
			out.flush();
		}
	}
}
