/*
 * AllocWork — allocation-heavy: two threads each build ORDERS small order objects
 * (boxed keys, strings, arrays), index them in a hash map, sort them, group them into
 * lists and render a report, then drop everything: a few hundred MB/s of short-lived
 * garbage, the shape of a request-handling service. The checks: every order is found
 * again by key, the sort is in order, and the grouped totals add up to the total
 * computed without allocating.
 *
 *   java AllocWork SECONDS | -n ITERATIONS
 */
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class AllocWork {
    static final int ORDERS = 80_000, CUSTOMERS = 500;

    static final class Order {
        final String id, customer;
        final int[] lines;
        final long amount;

        Order(int i) {
            id = "order-" + i;
            customer = "customer-" + (i * 7919 % CUSTOMERS);
            lines = new int[4 + i % 8];
            long a = 0;
            for (int k = 0; k < lines.length; k++)
                a += lines[k] = (i * 31 + k * 17) % 1000;
            amount = a;
        }
    }

    /** The total of all amounts, computed without allocating, to check against. */
    static long expectedTotal(int part) {
        long t = 0;
        for (int i = part; i < ORDERS * 2; i += 2)
            for (int k = 0; k < 4 + i % 8; k++)
                t += (i * 31 + k * 17) % 1000;
        return t;
    }

    static long part(int part) {
        List<Order> orders = new ArrayList<>();
        Map<String, Order> byId = new HashMap<>();
        for (int i = part; i < ORDERS * 2; i += 2) {
            Order o = new Order(i);
            orders.add(o);
            byId.put(o.id, o);
        }
        for (int i = part; i < ORDERS * 2; i += 2) {
            Order o = byId.get("order-" + i);
            if (o == null || o.lines.length != 4 + i % 8)
                Harness.check(false, "order-" + i + " lost");
        }
        orders.sort((a, b) -> a.amount != b.amount ? Long.compare(a.amount, b.amount) : a.id.compareTo(b.id));
        for (int i = 1; i < orders.size(); i++)
            Harness.check(orders.get(i - 1).amount <= orders.get(i).amount, "sort out of order");
        Map<String, List<Order>> byCustomer = new HashMap<>();
        for (Order o : orders)
            byCustomer.computeIfAbsent(o.customer, c -> new ArrayList<>()).add(o);
        long total = 0, chars = 0;
        for (Map.Entry<String, List<Order>> e : byCustomer.entrySet()) {
            long sum = 0;
            StringBuilder b = new StringBuilder(e.getKey()).append(':');
            for (Order o : e.getValue()) {
                sum += o.amount;
                b.append(' ').append(o.id).append('=').append(o.amount);
            }
            total += sum;
            chars += b.toString().length();
        }
        Harness.check(total == expectedTotal(part), "grouped total " + total + " != " + expectedTotal(part));
        return total * 1_000_003 + chars;
    }

    public static void main(String[] args) {
        Harness.run("alloc", args, () -> Harness.parallel(2, AllocWork::part));
    }
}
