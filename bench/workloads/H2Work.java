/*
 * H2Work — a database: the H2 SQL engine (Debian's libh2-java), in memory. Two
 * threads, each with its own database, run the same fixed transaction mix every
 * iteration: create two tables, insert ORDERS orders in batches, index them, run
 * grouped aggregates, a join, range counts and point look-ups, update and delete a
 * share of the rows, and drop the tables. The checks: every query's answer equals
 * what the same arithmetic computes in Java.
 *
 *   java -cp bench_workloads.jar:/usr/share/java/h2.jar H2Work SECONDS | -n ITERATIONS
 */
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;

public class H2Work {
    static final int ORDERS = 2_000, CUSTOMERS = 100, LOOKUPS = 400;
    static final Connection[] conns = new Connection[2];

    static int customer(int i) { return i * 7919 % CUSTOMERS; }
    static int amount(int i) { return (i * 31) % 997; }
    static int day(int i) { return i % 365; }

    static long query(Statement st, String sql) throws Exception {
        try (ResultSet rs = st.executeQuery(sql)) {
            Harness.check(rs.next(), "no row from " + sql);
            return rs.getLong(1);
        }
    }

    static long part(int part) throws Exception {
        Connection c = conns[part];
        long sum = 0;
        try (Statement st = c.createStatement()) {
            st.execute("CREATE TABLE customers(id INT PRIMARY KEY, name VARCHAR(40), region INT)");
            st.execute("CREATE TABLE orders(id INT PRIMARY KEY, customer INT, amount INT, dayno INT, note VARCHAR(60))");
            st.execute("CREATE INDEX orders_customer ON orders(customer)");
            st.execute("CREATE INDEX orders_day ON orders(dayno)");
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO customers VALUES(?, ?, ?)")) {
                for (int i = 0; i < CUSTOMERS; i++) {
                    ps.setInt(1, i);
                    ps.setString(2, "customer " + i);
                    ps.setInt(3, i % 7);
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO orders VALUES(?, ?, ?, ?, ?)")) {
                for (int i = 0; i < ORDERS; i++) {
                    ps.setInt(1, i);
                    ps.setInt(2, customer(i));
                    ps.setInt(3, amount(i));
                    ps.setInt(4, day(i));
                    ps.setString(5, "order " + i + " of customer " + customer(i));
                    ps.addBatch();
                    if (i % 1000 == 999)
                        ps.executeBatch();
                }
            }
            c.commit();

            long total = 0, region3 = 0, days = 0;
            for (int i = 0; i < ORDERS; i++) {
                total += amount(i);
                if (customer(i) % 7 == 3)
                    region3 += amount(i);
                if (day(i) >= 100 && day(i) < 200)
                    days++;
            }
            Harness.check(query(st, "SELECT SUM(amount) FROM orders") == total, "SUM(amount) is wrong");
            Harness.check(query(st, "SELECT SUM(o.amount) FROM orders o JOIN customers c ON o.customer = c.id"
                + " WHERE c.region = 3") == region3, "the join's sum is wrong");
            Harness.check(query(st, "SELECT COUNT(*) FROM orders WHERE dayno >= 100 AND dayno < 200") == days,
                "the range count is wrong");
            long groups = 0;
            try (ResultSet rs = st.executeQuery("SELECT customer, SUM(amount), COUNT(*) FROM orders"
                    + " GROUP BY customer ORDER BY SUM(amount) DESC")) {
                long prev = Long.MAX_VALUE, s = 0;
                while (rs.next()) {
                    Harness.check(rs.getLong(2) <= prev, "GROUP BY ... ORDER BY out of order");
                    prev = rs.getLong(2);
                    s += prev;
                    groups++;
                }
                Harness.check(s == total && groups == CUSTOMERS, "the grouped sums are wrong");
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT amount, note FROM orders WHERE id = ?")) {
                for (int k = 0; k < LOOKUPS; k++) {
                    int i = (k * 104_729) % ORDERS;
                    ps.setInt(1, i);
                    try (ResultSet rs = ps.executeQuery()) {
                        Harness.check(rs.next() && rs.getInt(1) == amount(i), "look-up of order " + i);
                        sum += rs.getString(2).length();
                    }
                }
            }
            int updated = st.executeUpdate("UPDATE orders SET amount = amount * 2 WHERE dayno < 50");
            int deleted = st.executeUpdate("DELETE FROM orders WHERE MOD(id, 10) = 0");
            c.commit();
            long left = query(st, "SELECT COUNT(*) FROM orders");
            Harness.check(left == ORDERS - ORDERS / 10, "rows left after DELETE: " + left);
            sum += query(st, "SELECT SUM(amount) FROM orders") + updated * 7L + deleted * 13L + total;
            st.execute("DROP TABLE orders");
            st.execute("DROP TABLE customers");
            c.commit();
        }
        return sum;
    }

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < conns.length; i++) {
            conns[i] = DriverManager.getConnection("jdbc:h2:mem:bench" + i, "sa", "");
            conns[i].setAutoCommit(false);
        }
        Harness.run("h2", args, () -> Harness.parallel(2, H2Work::part));
    }
}
