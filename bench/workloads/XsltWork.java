/*
 * XsltWork — an XML/XSLT processor: Saxon-HE (Debian's libsaxonhe-java) parses an
 * order book of ORDERS orders and runs an XSLT 2.0 stylesheet over it: grouping by
 * customer, sums, sorting, string functions, number formatting. Two threads, one
 * compiled stylesheet (Templates), each transform starting from the input's bytes.
 * The checks: the report names every customer once and its grand total equals the
 * one computed in Java.
 *
 *   java -cp bench_workloads.jar:/usr/share/java/Saxon-HE.jar XsltWork SECONDS | -n ITERATIONS
 */
import java.io.ByteArrayInputStream;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.transform.Templates;
import javax.xml.transform.stream.StreamResult;
import javax.xml.transform.stream.StreamSource;

public class XsltWork {
    static final int ORDERS = 1_600, CUSTOMERS = 150;

    static final String STYLESHEET = String.join("\n",
        "<xsl:stylesheet version='2.0' xmlns:xsl='http://www.w3.org/1999/XSL/Transform'>",
        "  <xsl:output method='xml' indent='yes'/>",
        "  <xsl:template match='/orders'>",
        "    <report>",
        "      <xsl:for-each-group select='order' group-by='@customer'>",
        "        <xsl:sort select='sum(current-group()/line/(@qty * @price))' order='descending'/>",
        "        <xsl:sort select='current-grouping-key()'/>",
        "        <customer name='{upper-case(replace(current-grouping-key(), \"-\", \" \"))}'",
        "                  orders='{count(current-group())}'",
        "                  total='{format-number(sum(current-group()/line/(@qty * @price)), \"0\")}'>",
        "          <xsl:for-each select='current-group()'>",
        "            <xsl:sort select='@date'/>",
        "            <order id='{@id}' month='{tokenize(@date, \"-\")[2]}'",
        "                   lines='{count(line)}' skus='{string-join(line/@sku, \",\")}'/>",
        "          </xsl:for-each>",
        "        </customer>",
        "      </xsl:for-each-group>",
        "      <grand total='{format-number(sum(order/line/(@qty * @price)), \"0\")}'/>",
        "    </report>",
        "  </xsl:template>",
        "</xsl:stylesheet>");

    static byte[] input;
    static long grandTotal;
    static Templates templates;

    /** The order book, and its grand total in integer arithmetic. */
    static void makeInput() {
        StringBuilder b = new StringBuilder("<?xml version='1.0'?>\n<orders>\n");
        for (int i = 0; i < ORDERS; i++) {
            b.append("  <order id='o").append(i).append("' customer='customer-").append(i * 7919 % CUSTOMERS)
             .append("' date='2026-").append(String.format("%02d-%02d", 1 + i % 12, 1 + i % 28)).append("'>\n");
            for (int k = 0; k < 1 + i % 6; k++) {
                int qty = 1 + (i + k) % 9, price = 100 + (i * 31 + k * 17) % 9900;
                grandTotal += (long) qty * price;
                b.append("    <line sku='sku-").append((i * 13 + k) % 500).append("' qty='").append(qty)
                 .append("' price='").append(price).append("'/>\n");
            }
            b.append("  </order>\n");
        }
        input = b.append("</orders>\n").toString().getBytes(StandardCharsets.UTF_8);
    }

    static final Pattern GRAND = Pattern.compile("<grand total=\"(\\d+)\"");
    static final Pattern CUSTOMER = Pattern.compile("<customer name=\"CUSTOMER \\d+\"");

    static long part(int part) throws Exception {
        StringWriter out = new StringWriter();
        templates.newTransformer().transform(new StreamSource(new ByteArrayInputStream(input)),
            new StreamResult(out));
        String report = out.toString();
        Matcher m = GRAND.matcher(report);
        Harness.check(m.find() && Long.parseLong(m.group(1)) == grandTotal,
            "grand total " + (m.find(0) ? m.group(1) : "missing") + ", not " + grandTotal);
        int customers = 0;
        for (Matcher c = CUSTOMER.matcher(report); c.find(); )
            customers++;
        Harness.check(customers == CUSTOMERS, customers + " customers in the report, not " + CUSTOMERS);
        return report.length();
    }

    public static void main(String[] args) throws Exception {
        makeInput();
        templates = new net.sf.saxon.TransformerFactoryImpl()
            .newTemplates(new StreamSource(new StringReader(STYLESHEET)));
        Harness.run("xslt", args, () -> Harness.parallel(2, XsltWork::part));
    }
}
