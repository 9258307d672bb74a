/*
 * Passthrough - bench/peer.py's Kafka passthrough as a Kafka Streams application: order events
 * (JSON) read from a topic, decoded, kept when status <> 'void', projected to four columns,
 * encoded as JSON and written to another topic, at-least-once (Kafka Streams' default
 * processing guarantee), no state. The same work as the peer suite's SQL job
 *
 *   INSERT INTO dst SELECT order_id, customer_id, amount, ts_ms FROM src WHERE status <> 'void'
 *
 * runs on sluice and on Flink. A benchmark peer, never a dependency of the engine.
 *
 *   Passthrough BOOTSTRAP RUN...     RUN = NAME:IN:OUT:RECORDS:THREADS
 *
 * Each RUN, in turn in this one JVM: a fresh application (its own application.id, so it
 * reads IN from its earliest offset) with THREADS stream threads, started, stopped once
 * RECORDS input records went through the decode (a monitor reads the count every 2 ms), and
 * closed, which commits and flushes its producers: every output record is acknowledged when
 * the run's time is taken. One line per run on stdout:
 *
 *   run NAME RECORDS WALL_S CPU_S
 *
 * WALL_S from start() to close() returned; CPU_S the process's CPU time over the same span
 * (every thread of the JVM: stream threads, producer I/O threads, GC, JIT).
 * Decoding is Jackson data binding into a class (faster than its tree model), with one
 * reader and one writer shared by the threads (both are thread-safe).
 */
package sluice.kstreams;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.atomic.LongAdder;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;

public final class Passthrough {
	/** An input event; fields named as the JSON's keys. */
	public static final class Order {
		public long order_id;
		public int customer_id;
		public double amount;
		public String status;
		public long ts_ms;
	}

	/** The projection written out. */
	public static final class Out {
		public long order_id;
		public int customer_id;
		public double amount;
		public long ts_ms;
	}

	private static final ObjectMapper MAPPER =
		new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
	private static final ObjectReader READER = MAPPER.readerFor(Order.class);
	private static final ObjectWriter WRITER = MAPPER.writerFor(Out.class);

	private static Order decode(byte[] v, LongAdder seen) {
		seen.increment();
		try {
			return READER.readValue(v);
		} catch (java.io.IOException e) {
			throw new IllegalArgumentException("undecodable record: " + e.getMessage(), e);
		}
	}

	private static byte[] encode(Order o) {
		Out r = new Out();
		r.order_id = o.order_id;
		r.customer_id = o.customer_id;
		r.amount = o.amount;
		r.ts_ms = o.ts_ms;
		try {
			return WRITER.writeValueAsBytes(r);
		} catch (java.io.IOException e) {
			throw new IllegalStateException(e);
		}
	}

	private static long cpuNanos() {
		return ((com.sun.management.OperatingSystemMXBean)ManagementFactory
				.getOperatingSystemMXBean()).getProcessCpuTime();
	}

	private static void run(String bootstrap, String spec) throws Exception {
		String[] f = spec.split(":");
		if (f.length != 5)
			throw new IllegalArgumentException("want NAME:IN:OUT:RECORDS:THREADS, got " + spec);
		String name = f[0], in = f[1], out = f[2];
		long records = Long.parseLong(f[3]);
		int threads = Integer.parseInt(f[4]);

		Properties p = new Properties();
		p.put(StreamsConfig.APPLICATION_ID_CONFIG, "sluice-peer-" + name + "-" + System.nanoTime());
		p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
		p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
		p.put(StreamsConfig.STATE_DIR_CONFIG,
		      Files.createTempDirectory("sluice-kstreams-").toString());
		p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.ByteArray().getClass());
		p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.ByteArray().getClass());
		p.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
		// Each run is a new application id (a new consumer group). With two stream threads
		// the group's first rebalance could wait out the default 45 s session timeout of a
		// member that had already left (41 s of CPU spent meanwhile: peer.py's 1,000-record
		// runs took 45 s where 2M took 10 s). Failure detection is all these change: the
		// smallest session timeout the broker allows, and members leave the group on close.
		p.put(StreamsConfig.consumerPrefix("session.timeout.ms"), 6000);
		p.put(StreamsConfig.consumerPrefix("heartbeat.interval.ms"), 1500);
		p.put(StreamsConfig.consumerPrefix("internal.leave.group.on.close"), true);

		LongAdder seen = new LongAdder();
		StreamsBuilder b = new StreamsBuilder();
		b.stream(in, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
			.mapValues(v -> decode(v, seen))
			.filter((k, o) -> !"void".equals(o.status))
			.mapValues(Passthrough::encode)
			.to(out, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));

		long t0 = System.nanoTime(), c0 = cpuNanos();
		KafkaStreams ks = new KafkaStreams(b.build(), p);
		Throwable[] failed = new Throwable[1];
		ks.setUncaughtExceptionHandler(e -> {
			failed[0] = e;
			return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler
				.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
		});
		ks.start();
		long deadline = t0 + Duration.ofMinutes(10).toNanos();
		while (seen.sum() < records && failed[0] == null) {
			if (System.nanoTime() > deadline)
				throw new IllegalStateException(name + ": " + seen.sum() + " of " + records
								+ " records after 10 minutes");
			Thread.sleep(2);
		}
		if (!ks.close(Duration.ofSeconds(120)))
			throw new IllegalStateException(name + ": did not close within 120 s");
		if (failed[0] != null)
			throw new IllegalStateException(name + ": a stream thread failed", failed[0]);
		double wall = (System.nanoTime() - t0) / 1e9, cpu = (cpuNanos() - c0) / 1e9;
		System.out.printf(Locale.ROOT, "run %s %d %.4f %.4f%n", name, seen.sum(), wall, cpu);
		System.out.flush();
	}

	public static void main(String[] args) throws Exception {
		if (args.length < 2) {
			System.err.println("usage: Passthrough BOOTSTRAP NAME:IN:OUT:RECORDS:THREADS...");
			Runtime.getRuntime().halt(2);
		}
		int rc = 0;
		try {
			for (int i = 1; i < args.length; i++)
				run(args[0], args[i]);
		} catch (Exception e) {
			System.err.println("kafka-streams: " + e);
			if (e.getCause() != null)
				System.err.println("kafka-streams: cause: " + e.getCause());
			rc = 1;
		}
		System.out.flush();
		Runtime.getRuntime().halt(rc);
	}
}
