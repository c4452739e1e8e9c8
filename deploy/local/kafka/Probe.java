// Waits until a Kafka broker answers a real metadata request (DescribeCluster via the Admin client),
// because an open port alone does not mean the KRaft controller has elected itself and registered the broker.
// Run with the broker's own jars: java -cp '.local/kafka/libs/*' Probe.java HOST:PORT TIMEOUT_SECONDS
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

public class Probe {
    public static void main(String[] args) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(args[1]));
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "2000");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "2000");
        try (Admin admin = Admin.create(props)) {
            while (true) {
                try {
                    int brokers = admin.describeCluster().nodes().get(2, TimeUnit.SECONDS).size();
                    if (brokers > 0) {
                        System.out.println("kafka answers on " + args[0] + " (" + brokers + " broker)");
                        return;
                    }
                } catch (Exception e) {
                    if (System.nanoTime() > deadline) {
                        System.err.println("kafka did not answer on " + args[0] + ": " + e);
                        System.exit(1);
                    }
                }
                Thread.sleep(200);
            }
        }
    }
}
