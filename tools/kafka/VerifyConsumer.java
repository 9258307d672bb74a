/*
 * VerifyConsumer - Kafka's own Java consumer reading a topic from its start to its end, for
 * the real-broker tests: a second client beside kcat (librdkafka), so an isolation claim
 * is checked by two independent implementations of the protocol.
 *
 *   java -cp 'LIB/*:CLASSES' VerifyConsumer BOOTSTRAP TOPIC read_committed|read_uncommitted
 *
 * Prints each record's value (UTF-8; a null value prints as an empty line), one a line,
 * partition by partition in offset order. The end is taken once at the start: the high
 * watermark, or with read_committed the last stable offset (endOffsets answers by the
 * consumer's isolation level), so records of an open transaction are waited for only up
 * to that point. Exit 0, or 1 with one line on stderr naming the topic and the cause.
 */
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class VerifyConsumer {
	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	public static void main(String[] args) {
		if (args.length != 3 || !(args[2].equals("read_committed") ||
					  args[2].equals("read_uncommitted"))) {
			System.err.println("usage: VerifyConsumer BOOTSTRAP TOPIC "
					   + "read_committed|read_uncommitted");
			System.exit(2);
		}
		try {
			System.exit(run(args[0], args[1], args[2]));
		} catch (Exception e) {
			System.err.println("VerifyConsumer: topic '" + args[1] + "' at " + args[0] + ": "
					   + e);
			System.exit(1);
		}
	}

	private static int run(String bootstrap, String topic, String isolation) {
		Properties p = new Properties();
		p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
		p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
		p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
		p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
		p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
		p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
		StringBuilder out = new StringBuilder();
		try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
			List<PartitionInfo> parts = c.partitionsFor(topic, TIMEOUT);
			if (parts == null || parts.isEmpty()) {
				System.err.println("VerifyConsumer: topic '" + topic + "' at " + bootstrap
						   + ": no such topic");
				return 1;
			}
			List<TopicPartition> tps = new ArrayList<>();
			for (PartitionInfo pi : parts)
				tps.add(new TopicPartition(topic, pi.partition()));
			tps.sort((a, b) -> Integer.compare(a.partition(), b.partition()));
			Map<TopicPartition, Long> end = c.endOffsets(tps, TIMEOUT);
			Map<Integer, StringBuilder> vals = new HashMap<>();
			c.assign(tps);
			c.seekToBeginning(tps);
			long deadline = System.nanoTime() + TIMEOUT.toNanos();
			for (;;) {
				/* position() passes control records and aborted batches too */
				TopicPartition behind = null;
				for (TopicPartition tp : tps)
					if (c.position(tp, TIMEOUT) < end.get(tp))
						behind = tp;
				if (behind == null)
					break;
				if (System.nanoTime() > deadline) {
					System.err.println("VerifyConsumer: topic '" + topic + "' partition "
							   + behind.partition() + ": end offset "
							   + end.get(behind) + " not reached within "
							   + TIMEOUT);
					return 1;
				}
				for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
					TopicPartition tp = new TopicPartition(r.topic(), r.partition());
					if (r.offset() >= end.get(tp))
						continue;
					StringBuilder b = vals.computeIfAbsent(r.partition(),
									       k -> new StringBuilder());
					if (r.value() != null)
						b.append(new String(r.value(), StandardCharsets.UTF_8));
					b.append('\n');
				}
			}
			for (TopicPartition tp : tps)
				out.append(vals.getOrDefault(tp.partition(), new StringBuilder()));
		}
		System.out.print(out);
		System.out.flush();
		return 0;
	}
}
