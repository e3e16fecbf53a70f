// One pass of Kafka 0.10.2.2's own ZooKeeper consumer (kafka.consumer.ZookeeperConsumerConnector)
// over a topic, timed as benchmarks/peer_child.py times the other consumers: from the first
// message to the last, with the process's CPU time over that span. Run by benchmarks/peers.py
// with Java's single-file launcher on the Kafka 0.10.2 classpath:
//   java -cp KAFKA_CP OriginalStream.java ZK TOPIC MESSAGES GROUP
// The consumer settings are those kafka.tools.ConsumerPerformance --zookeeper uses, except
// consumer.timeout.ms: 30 s instead of 1 s, so a slow first rebalance does not end the pass.
import java.lang.management.ManagementFactory;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import kafka.consumer.Consumer;
import kafka.consumer.ConsumerConfig;
import kafka.consumer.ConsumerIterator;
import kafka.consumer.KafkaStream;
import kafka.javaapi.consumer.ConsumerConnector;

public class OriginalStream {
    public static void main(String[] args) {
        String zk = args[0], topic = args[1], group = args[3];
        long wanted = Long.parseLong(args[2]);
        Properties props = new Properties();
        props.put("zookeeper.connect", zk);
        props.put("group.id", group);
        props.put("socket.receive.buffer.bytes", String.valueOf(2 * 1024 * 1024));
        props.put("fetch.message.max.bytes", String.valueOf(1024 * 1024));
        props.put("auto.offset.reset", "smallest");
        props.put("auto.commit.enable", "false");
        props.put("consumer.timeout.ms", "30000");
        props.put("num.consumer.fetchers", "1");
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        ConsumerConnector connector = Consumer.createJavaConsumerConnector(new ConsumerConfig(props));
        Map<String, List<KafkaStream<byte[], byte[]>>> streams =
            connector.createMessageStreams(Collections.singletonMap(topic, 1));
        ConsumerIterator<byte[], byte[]> it = streams.get(topic).get(0).iterator();
        long count = 0, bytes = 0, first = 0, cpu0 = 0;
        while (count < wanted && it.hasNext()) {
            byte[] value = it.next().message();
            if (count == 0) {
                first = System.nanoTime();
                cpu0 = os.getProcessCpuTime();
            }
            bytes += value == null ? 0 : value.length;
            count++;
        }
        long end = System.nanoTime(), cpu = os.getProcessCpuTime() - cpu0;
        System.out.println(String.format(java.util.Locale.ROOT,
            "RESULT {\"steady_s\": %.6f, \"cpu_s\": %.6f, \"count\": %d, \"bytes\": %d}",
            (end - first) / 1e9, cpu / 1e9, count, bytes));
        System.out.flush();
        connector.shutdown();
    }
}
