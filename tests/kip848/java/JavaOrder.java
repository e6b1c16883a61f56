import java.util.*;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.timeline.SnapshotRegistry;
import org.apache.kafka.timeline.TimelineHashMap;

/**
 * Prints the iteration orders tests/kip848/test_java_order.py checks model/kip848/java_order.py against,
 * from Kafka's own classes: for each line of stdin, "put KEY" or "remove KEY" on one TimelineHashMap (as
 * ModernGroup.members is made: new TimelineHashMap<>(snapshotRegistry, 0)), after which its key order; and
 * "hashmap K1 K2 ...": the key order of a new HashMap<>() the keys were put into in that order; and
 * "hash KEY": String.hashCode.
 */
public class JavaOrder {
    public static void main(String[] args) throws Exception {
        SnapshotRegistry registry = new SnapshotRegistry(new LogContext());
        TimelineHashMap<String, Integer> members = new TimelineHashMap<>(registry, 0);
        Scanner in = new Scanner(System.in);
        while (in.hasNextLine()) {
            String[] words = in.nextLine().trim().split(" ");
            switch (words[0]) {
                case "put": members.put(words[1], 1); System.out.println(String.join(" ", members.keySet())); break;
                case "remove": members.remove(words[1]); System.out.println(String.join(" ", members.keySet())); break;
                case "hashmap": {
                    Map<String, Integer> map = new HashMap<>();
                    for (int i = 1; i < words.length; i++) map.put(words[i], i);
                    System.out.println(String.join(" ", map.keySet()));
                    break;
                }
                case "hash": System.out.println(words[1].hashCode()); break;
                default: throw new IllegalArgumentException(words[0]);
            }
        }
    }
}
