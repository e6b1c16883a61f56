// Apache Kafka's own KafkaProducer with its defaults (kafka-clients 3.0+: enable.idempotence=true,
// acks=all, so InitProducerId, then sequenced batches), for tests of `groupcheck broker`
// (tests/live/test_broker_producers.py). It sends runner.records records to runner.topic, record i
// with key "i" and value runner.value.prefix + i, flushes (also after every runner.flush.every
// records, if above 0: more batches, so later ones carry sequences well past 0 and past the five
// batches a partition retains per producer), closes, and prints one JSON object per line on stdout:
// "ready", then one "delivered" (index, partition, offset, value) or "error" (index, error) per
// record, in the order the callbacks ran, then "done" (delivered, errors). Exit status 0 when every
// record was delivered, 1 otherwise.
//
// Arguments: NAME=VALUE pairs, as GroupcheckRunner's (properties/clients/runners/java.py:
// producer_arguments). Names starting with "runner." are the program's own (runner.topic,
// runner.records, runner.value.prefix, runner.flush.every); every other pair is a producer property, passed on as it
// is. The program itself sets only the String serializers; everything else is Kafka's default.
//
// Needs only kafka-clients and an slf4j binding on the class path (java/consumer/pom.xml).

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.AppInfoParser;

public final class GroupcheckProducer {
    private static final PrintStream OUT =
            new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(10);

    public static void main(String[] args) {
        Properties props = new Properties();
        Map<String, String> runner = GroupcheckRunner.split(args, props);
        String topic = Objects.requireNonNull(runner.get("topic"), "runner.topic");
        int records = Integer.parseInt(Objects.requireNonNull(runner.get("records"), "runner.records"));
        String prefix = runner.getOrDefault("value.prefix", "");
        int flushEvery = Integer.parseInt(runner.getOrDefault("flush.every", "0"));
        props.putIfAbsent(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.putIfAbsent(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());

        AtomicInteger delivered = new AtomicInteger(), failed = new AtomicInteger();
        KafkaProducer<String, String> producer = new KafkaProducer<>(props);
        try {
            emit("ready", "library", GroupcheckRunner.quote("kafka-clients"),
                    "version", GroupcheckRunner.quote(AppInfoParser.getVersion()));
            for (int i = 0; i < records; i++) {
                final int index = i;
                final String value = prefix + i;
                try {
                    producer.send(new ProducerRecord<>(topic, Integer.toString(i), value), (metadata, e) -> {
                        if (e == null) {
                            delivered.incrementAndGet();
                            emit("delivered", "index", Integer.toString(index),
                                    "partition", Integer.toString(metadata.partition()),
                                    "offset", Long.toString(metadata.offset()), "value", GroupcheckRunner.quote(value));
                        } else {
                            failed.incrementAndGet();
                            emit("error", "index", Integer.toString(index),
                                    "error", GroupcheckRunner.quote(GroupcheckRunner.describe(e)));
                        }
                    });
                } catch (RuntimeException e) {  // what send itself throws (a fatal producer state, a timeout)
                    failed.incrementAndGet();
                    emit("error", "index", Integer.toString(index),
                            "error", GroupcheckRunner.quote(GroupcheckRunner.describe(e)));
                }
                if (flushEvery > 0 && (i + 1) % flushEvery == 0)
                    producer.flush();
            }
            producer.flush();
        } catch (RuntimeException e) {
            emit("error", "index", "null", "error", GroupcheckRunner.quote("flush: " + GroupcheckRunner.describe(e)));
            failed.incrementAndGet();
        } finally {
            try {
                producer.close(CLOSE_TIMEOUT);
            } catch (RuntimeException e) {
                emit("error", "index", "null",
                        "error", GroupcheckRunner.quote("close: " + GroupcheckRunner.describe(e)));
                failed.incrementAndGet();
            }
        }
        emit("done", "delivered", Integer.toString(delivered.get()), "errors", Integer.toString(failed.get()));
        System.exit(delivered.get() == records && failed.get() == 0 ? 0 : 1);
    }

    /** One line: the event, the wall clock, then NAME, JSON VALUE pairs (values already JSON). */
    static synchronized void emit(String event, String... fields) {
        StringBuilder line = new StringBuilder("{\"event\":").append(GroupcheckRunner.quote(event))
                .append(",\"wall_ms\":").append(System.currentTimeMillis());
        for (int i = 0; i + 1 < fields.length; i += 2)
            line.append(',').append(GroupcheckRunner.quote(fields[i])).append(':').append(fields[i + 1]);
        OUT.println(line.append('}'));
    }
}
