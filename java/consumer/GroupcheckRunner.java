// Apache Kafka's own KafkaConsumer (kafka-clients: the classic group protocol's ConsumerCoordinator, or
// with group.protocol=consumer KIP-848's AsyncKafkaConsumer) as a client under test of `groupcheck conform client`. It speaks the runner protocol of
// properties/clients/runners/__init__.py: subscribe, poll every 200 ms, commit a counter offset for
// the owned partitions every commit interval, print one JSON object per line on stdout, and on
// SIGTERM close the consumer (a LeaveGroup from a dynamic member) and exit.
//
// Arguments: NAME=VALUE pairs, already flattened by properties/clients/runners/java.py (so no JSON
// library is needed here). Names starting with "runner." are the runner's own (runner.topic,
// runner.commit.interval.ms); every other pair is a consumer property, passed on as it is.
//
// Needs only kafka-clients and an slf4j binding on the class path (java/consumer/pom.xml).

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.utils.AppInfoParser;

public final class GroupcheckRunner {
    private static final PrintStream OUT =
            new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
    private static final Duration POLL = Duration.ofMillis(200);
    // as groupcheck's own runner: a commit or a close that cannot finish gives up after 5 s, so
    // the loop keeps polling under a paused broker (commitSync's default would wait 60 s)
    private static final Duration COMMIT_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);

    private static volatile boolean stopRequested = false;

    /** Splits NAME=VALUE arguments: Kafka's settings go into props, the program's own ("runner."
     *  prefix, without it) are returned. */
    static Map<String, String> split(String[] args, Properties props) {
        Map<String, String> runner = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq <= 0)
                throw new IllegalArgumentException("expected NAME=VALUE, got " + arg);
            String name = arg.substring(0, eq), value = arg.substring(eq + 1);
            if (name.startsWith("runner."))
                runner.put(name.substring("runner.".length()), value);
            else
                props.put(name, value);
        }
        return runner;
    }

    public static void main(String[] args) throws InterruptedException {
        Properties props = new Properties();
        Map<String, String> runner = split(args, props);
        String topic = Objects.requireNonNull(runner.get("topic"), "runner.topic");
        long commitIntervalMs = Long.parseLong(Objects.requireNonNull(runner.get("commit.interval.ms"),
                "runner.commit.interval.ms"));

        protocol = props.getProperty("group.protocol", "classic").toLowerCase(java.util.Locale.ROOT);
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props);
        CountDownLatch finished = new CountDownLatch(1);
        Thread main = Thread.currentThread();
        // SIGTERM: wake the loop (a poll or commit under way throws WakeupException), let it close
        // the consumer and print "closed", and only then let the JVM go on exiting
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stopRequested = true;
            consumer.wakeup();
            try {
                finished.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "groupcheck-stop"));

        try {
            run(consumer, topic, commitIntervalMs);
        } finally {
            try {
                // close(Duration): in every kafka-clients release (4.1's CloseOptions, KIP-1092, is
                // not in older ones); it leaves the group as a dynamic member, like close(CloseOptions)
                consumer.close(CLOSE_TIMEOUT);
            } catch (RuntimeException e) {
                emit("error", "error", quote("close: " + describe(e)));
            }
            emit("closed");
            finished.countDown();
        }
    }

    /** The group protocol the consumer speaks: "classic" (ConsumerCoordinator) or "consumer" (KIP-848's
     *  AsyncKafkaConsumer), from its group.protocol setting (classic when unset); set once in main. */
    private static String protocol = "classic";

    private static void run(KafkaConsumer<byte[], byte[]> consumer, String topic, long commitIntervalMs)
            throws InterruptedException {
        consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                emit("revoked", "partitions", partitionList(partitions));
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                // KIP-848's protocol hands the callback only the partitions added (incremental)
                if (protocol.equals("consumer"))
                    emit("assigned", "partitions", partitionList(partitions), "incremental", "true");
                else
                    emit("assigned", "partitions", partitionList(partitions));
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> partitions) {
                emit("lost", "partitions", partitionList(partitions));  // the default would call onPartitionsRevoked
            }
        });
        emit("ready", "library", quote("kafka-clients"), "version", quote(AppInfoParser.getVersion()),
                "protocol", quote(protocol));
        String lastMember = null;
        long offset = 0;
        long nextCommit = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(commitIntervalMs);
        while (!stopRequested) {
            try {
                consumer.poll(POLL);
            } catch (WakeupException e) {
                continue;  // SIGTERM (or a stray wakeup): the loop's condition decides
            } catch (RuntimeException e) {  // what the library raises to the application
                emit("error", "error", quote(describe(e)));
                Thread.sleep(100);  // an error that comes back at once must not spin the loop
            }
            ConsumerGroupMetadata m = consumer.groupMetadata();
            String memberId = m.memberId() == null || m.memberId().isEmpty() ? null : m.memberId();
            String member = "\"member_id\":" + quote(memberId) + ",\"generation\":" + m.generationId()
                    + ",\"state\":null";
            if (!member.equals(lastMember)) {
                lastMember = member;
                emitRaw("member", member);
            }
            Set<TopicPartition> owned = consumer.assignment();
            if (owned.isEmpty() || System.nanoTime() < nextCommit)
                continue;
            nextCommit = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(commitIntervalMs);
            offset += 1;
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            Map<Integer, Long> byPartition = new TreeMap<>();
            for (TopicPartition tp : owned) {
                offsets.put(tp, new OffsetAndMetadata(offset));
                byPartition.put(tp.partition(), offset);
            }
            try {
                consumer.commitSync(offsets, COMMIT_TIMEOUT);
                StringBuilder json = new StringBuilder("{");
                for (Map.Entry<Integer, Long> e : byPartition.entrySet())
                    json.append(json.length() > 1 ? "," : "").append('"').append(e.getKey()).append("\":")
                            .append(e.getValue());
                emit("committed", "offsets", json.append('}').toString());
            } catch (WakeupException e) {
                // SIGTERM during the commit: the loop ends and closes
            } catch (RuntimeException e) {
                emit("commit-failed", "error", quote(describe(e)));
            }
        }
    }

    static String describe(Throwable e) {
        return e.getClass().getSimpleName() + ": " + e.getMessage();
    }

    static String partitionList(Collection<TopicPartition> partitions) {
        Set<Integer> sorted = new TreeSet<>();
        for (TopicPartition tp : partitions)
            sorted.add(tp.partition());
        StringBuilder json = new StringBuilder("[");
        for (int p : sorted)
            json.append(json.length() > 1 ? "," : "").append(p);
        return json.append(']').toString();
    }

    /** A JSON string (or null): quotes, backslashes and every control character escaped. */
    static String quote(String s) {
        if (s == null)
            return "null";
        StringBuilder json = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': json.append("\\\""); break;
                case '\\': json.append("\\\\"); break;
                case '\n': json.append("\\n"); break;
                case '\r': json.append("\\r"); break;
                case '\t': json.append("\\t"); break;
                default:
                    if (c < 0x20 || c == 0x2028 || c == 0x2029)
                        json.append(String.format("\\u%04x", (int) c));
                    else
                        json.append(c);
            }
        }
        return json.append('"').toString();
    }

    /** One line: the event, the wall clock, then NAME, JSON VALUE pairs (values already JSON). */
    static void emit(String event, String... fields) {
        StringBuilder rest = new StringBuilder();
        for (int i = 0; i + 1 < fields.length; i += 2)
            rest.append(rest.length() > 0 ? "," : "").append(quote(fields[i])).append(':').append(fields[i + 1]);
        emitRaw(event, rest.toString());
    }

    private static synchronized void emitRaw(String event, String fields) {
        OUT.println("{\"event\":" + quote(event) + ",\"wall_ms\":" + System.currentTimeMillis()
                + (fields.isEmpty() ? "" : "," + fields) + "}");
    }
}
