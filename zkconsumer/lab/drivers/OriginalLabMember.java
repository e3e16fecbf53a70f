// One lab member of the ORIGINAL Kafka 0.10.2 ZooKeeper consumer
// (kafka.consumer.ZookeeperConsumerConnector through its Java API), run by the lab's
// original-zk-* protocols in Java's source-file mode against a 0.10.2 build's classpath.
//
// It prints the lines of the build's own member driver (bin/zk-consumer-member.sh):
//   READY streams=<n>
//   REBALANCE_RELEASE Map(<topic> -> ArrayBuffer(<p>, ..))
//   REBALANCE_ASSIGN <consumer id> Map(<topic> -> Map(<partition> -> <thread id>, ..))
//   MSG stream=<i> topic=<t> partition=<p> offset=<o> key=<k|null> value=<v>
//   SHUTDOWN
// and differs in one thing the lab needs: SIGTERM is a clean leave (a shutdown hook calls the
// connector's shutdown, which commits and closes the ZooKeeper session, so the registration
// goes at once), where the build's driver leaves only after a fixed number of seconds.
// SIGKILL stays a crash.
//
// usage: java ... OriginalLabMember.java zk=H:P group=G topic=T [streams=N] [k=v ConsumerConfig]

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import kafka.consumer.ConsumerConfig;
import kafka.consumer.ConsumerIterator;
import kafka.consumer.ConsumerThreadId;
import kafka.consumer.ConsumerTimeoutException;
import kafka.consumer.KafkaStream;
import kafka.javaapi.consumer.ConsumerConnector;
import kafka.javaapi.consumer.ConsumerRebalanceListener;
import kafka.message.MessageAndMetadata;

public class OriginalLabMember {
    private static synchronized void out(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** A set's members as sorted ints: 0.10.2 hands Scala sets where Java sets are declared. */
    private static List<Integer> partitions(Object value) {
        List<Integer> out = new ArrayList<>();
        if (value instanceof java.util.Collection) {
            for (Object o : (java.util.Collection<?>) value) out.add(Integer.parseInt(o.toString()));
        } else if (value instanceof scala.collection.Iterable) {
            scala.collection.Iterator<?> it = ((scala.collection.Iterable<?>) value).iterator();
            while (it.hasNext()) out.add(Integer.parseInt(it.next().toString()));
        }
        out.sort(null);
        return out;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> kv = new HashMap<>();
        for (String a : args) {
            int i = a.indexOf('=');
            kv.put(a.substring(0, i), a.substring(i + 1));
        }
        Properties props = new Properties();
        props.put("zookeeper.connect", kv.getOrDefault("zk", "127.0.0.1:2181"));
        props.put("group.id", kv.get("group"));
        props.put("auto.offset.reset", "smallest");
        props.put("consumer.timeout.ms", "500");
        for (Map.Entry<String, String> e : kv.entrySet()) {
            if (!List.of("zk", "group", "topic", "streams").contains(e.getKey())) {
                props.put(e.getKey(), e.getValue());
            }
        }
        String topic = kv.get("topic");
        int nStreams = Integer.parseInt(kv.getOrDefault("streams", "1"));

        ConsumerConnector conn;
        try {
            conn = kafka.consumer.Consumer.createJavaConsumerConnector(new ConsumerConfig(props));
        } catch (Throwable e) {
            out("FATAL " + e);
            System.exit(1);
            return;
        }
        conn.setConsumerRebalanceListener(new ConsumerRebalanceListener() {
            @SuppressWarnings({"unchecked", "rawtypes"})
            public void beforeReleasingPartitions(Map<String, java.util.Set<Integer>> own) {
                StringBuilder sb = new StringBuilder("REBALANCE_RELEASE Map(");
                boolean first = true;
                for (Map.Entry e : new TreeMap<String, Object>((Map) own).entrySet()) {
                    if (!first) sb.append(", ");
                    first = false;
                    sb.append(e.getKey()).append(" -> ArrayBuffer(");
                    List<Integer> ps = partitions(e.getValue());
                    for (int i = 0; i < ps.size(); i++) sb.append(i == 0 ? "" : ", ").append(ps.get(i));
                    sb.append(")");
                }
                out(sb.append(")").toString());
            }

            public void beforeStartingFetchers(String consumerId,
                                               Map<String, Map<Integer, ConsumerThreadId>> a) {
                StringBuilder sb = new StringBuilder("REBALANCE_ASSIGN " + consumerId + " Map(");
                boolean first = true;
                for (Map.Entry<String, Map<Integer, ConsumerThreadId>> e : new TreeMap<>(a).entrySet()) {
                    if (!first) sb.append(", ");
                    first = false;
                    sb.append(e.getKey()).append(" -> Map(");
                    boolean inner = true;
                    for (Map.Entry<Integer, ConsumerThreadId> p : new TreeMap<>(e.getValue()).entrySet()) {
                        sb.append(inner ? "" : ", ").append(p.getKey()).append(" -> ").append(p.getValue());
                        inner = false;
                    }
                    sb.append(")");
                }
                out(sb.append(")").toString());
            }
        });

        Map<String, Integer> wanted = new HashMap<>();
        wanted.put(topic, nStreams);
        List<KafkaStream<byte[], byte[]>> streams;
        try {
            streams = conn.createMessageStreams(wanted).get(topic);
        } catch (Throwable e) {
            out("FATAL " + e);
            System.exit(1);
            return;
        }
        AtomicBoolean running = new AtomicBoolean(true);
        CountDownLatch done = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < streams.size(); i++) {
            final int index = i;
            final KafkaStream<byte[], byte[]> stream = streams.get(i);
            Thread th = new Thread(() -> {
                ConsumerIterator<byte[], byte[]> it = stream.iterator();
                while (running.get()) {
                    try {
                        while (running.get() && it.hasNext()) {
                            MessageAndMetadata<byte[], byte[]> m = it.next();
                            String key = m.key() == null ? "null" : new String(m.key(), StandardCharsets.UTF_8);
                            String value = m.message() == null ? "" : new String(m.message(), StandardCharsets.UTF_8);
                            out("MSG stream=" + index + " topic=" + m.topic() + " partition=" + m.partition()
                                + " offset=" + m.offset() + " key=" + key + " value=" + value);
                        }
                    } catch (ConsumerTimeoutException e) {
                        // poll again: the loop ends when running is cleared
                    }
                }
            }, "stream-" + i);
            th.setDaemon(true);
            th.start();
            threads.add(th);
        }
        // SIGTERM: stop the streams, then the connector's own clean shutdown (commit, close the
        // session); the JVM exits when the hook returns.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            running.set(false);
            for (Thread th : threads) {
                try {
                    th.join(2000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            // The streams are drained; the connector's shutdown stops the fetchers first, then
            // commits and closes the session (which wakes the next owner): fetching ends here.
            out("LEAVING");
            conn.shutdown();
            out("SHUTDOWN");
            done.countDown();
        }, "leave"));
        out("READY streams=" + streams.size());
        done.await();
    }
}
