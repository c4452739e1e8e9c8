// Waits until a Kafka broker answers a real metadata request (DescribeCluster via the Admin client) naming
// at least BROKERS brokers [1], because an open port alone does not mean the KRaft controllers have elected
// a leader and registered the brokers (a cluster node answers before its peers have registered).
// Run with the broker's own jars: java -cp '.local/kafka/libs/*' Probe.java HOST:PORT TIMEOUT_SECONDS [BROKERS]
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

public class Probe {
    public static void main(String[] args) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(args[1]));
        int expected = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        int seen = 0;
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "2000");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "2000");
        try (Admin admin = Admin.create(props)) {
            while (true) {
                try {
                    seen = admin.describeCluster().nodes().get(2, TimeUnit.SECONDS).size();
                    if (seen >= expected) {
                        System.out.println("kafka answers on " + args[0] + " (" + seen + " broker)");
                        return;
                    }
                } catch (Exception e) {
                    if (System.nanoTime() > deadline) {
                        System.err.println("kafka did not answer on " + args[0] + ": " + e);
                        System.exit(1);
                    }
                }
                if (System.nanoTime() > deadline) {
                    System.err.println("kafka on " + args[0] + " sees " + seen + " of " + expected + " brokers");
                    System.exit(1);
                }
                Thread.sleep(200);
            }
        }
    }
}
