// TinyIdClient.java - a client that behaves as tinyid's own (tinyid-client)
// does against idmintd's tinyid routes, written for idmintd's tests
// (tests/server/test_compat.sh): it asks a server for a whole segment
// (POST /tinyid/id/nextSegmentIdSimple?token=T&bizType=TAG, an empty body),
// parses the five numbers strictly (Long.parseLong, Integer.parseInt: no
// spaces, no line end), and hands out IDs from the segment itself by
// tinyid's rules: currentId + delta, + 2 delta, ... up to maxId, each
// congruent to remainder modulo delta; the next segment is fetched once an
// ID reaches loadingId, and used when the current one is spent. Servers
// are asked in turn, one fetch each.
//
// Usage:
//   java TinyIdClient mint TAG N TOKEN|- HOST:PORT[,HOST:PORT...]
//       prints N IDs, one per line; "# segments K" on stderr
//   java TinyIdClient parse KIND URL [METHOD]
//       fetches URL and parses its body strictly as KIND: long (one
//       decimal, Leaf's routes), longs (comma-joined, tinyid's
//       nextIdSimple; empty is none), segment (nextSegmentIdSimple's five);
//       prints the numbers one per line
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

public final class TinyIdClient
{
    private static final class Segment
    {
        long current, loading, max;
        int delta, remainder;
    }

    private TinyIdClient()
    {
    }

    static String fetch(String url, String method) throws IOException
    {
        HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
        c.setRequestMethod(method);
        c.setConnectTimeout(5000);
        c.setReadTimeout(5000);
        c.setUseCaches(false);
        if (method.equals("POST")) {
            c.setDoOutput(true);
            try (OutputStream os = c.getOutputStream()) {
                os.write(new byte[0]);
            }
        }
        int status = c.getResponseCode();
        if (status != 200) {
            throw new IOException(url + ": HTTP " + status);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (InputStream in = c.getInputStream()) {
            in.transferTo(out);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    // The five numbers, exactly: any other byte (a space, a line end, a
    // sixth part) makes parseLong or the count throw.
    static Segment parseSegment(String body)
    {
        String[] p = body.split(",", -1);
        if (p.length != 5) {
            throw new IllegalStateException("a segment is five numbers, got '" + body + "'");
        }
        Segment s = new Segment();
        s.current = Long.parseLong(p[0]);
        s.loading = Long.parseLong(p[1]);
        s.max = Long.parseLong(p[2]);
        s.delta = Integer.parseInt(p[3]);
        s.remainder = Integer.parseInt(p[4]);
        if (s.delta <= 0 || s.current >= s.max || s.loading < s.current || s.loading > s.max) {
            throw new IllegalStateException("not a segment: '" + body + "'");
        }
        return s;
    }

    // tinyid's rule before a segment's first ID: unless currentId is on
    // the residue already (Java's %), the first ID is the next value
    // above it that is (within delta + 1 steps), and currentId is put a
    // delta below that one, so that adding delta gives it.
    static void align(Segment s)
    {
        if (s.current % s.delta == s.remainder) {
            return;
        }
        for (long k = 1; k <= s.delta + 1L; k++) {
            if ((s.current + k) % s.delta == s.remainder) {
                s.current = s.current + k - s.delta;
                return;
            }
        }
    }

    static List<Long> parseLongs(String body)
    {
        List<Long> ids = new ArrayList<>();
        if (body.isEmpty()) {
            return ids;
        }
        for (String part : body.split(",", -1)) {
            ids.add(Long.parseLong(part));
        }
        return ids;
    }

    public static void main(String[] args) throws Exception
    {
        if (args.length >= 3 && args[0].equals("parse")) {
            String body = fetch(args[2], args.length > 3 ? args[3] : "GET");
            switch (args[1]) {
            case "long":
                System.out.println(Long.parseLong(body));
                break;
            case "longs":
                for (long id : parseLongs(body)) {
                    System.out.println(id);
                }
                break;
            case "segment":
                Segment s = parseSegment(body);
                System.out.println(s.current + "\n" + s.loading + "\n" + s.max + "\n" + s.delta +
                                   "\n" + s.remainder);
                break;
            default:
                throw new IllegalArgumentException("unknown kind " + args[1]);
            }
            return;
        }
        if (args.length != 5 || !args[0].equals("mint")) {
            System.err.println("usage: TinyIdClient mint TAG N TOKEN|- HOST:PORT[,...] | "
                               + "parse long|longs|segment URL [METHOD]");
            System.exit(2);
        }
        String tag = args[1];
        long n = Long.parseLong(args[2]);
        String token = args[3].equals("-") ? "" : args[3];
        String[] servers = args[4].split(",");
        int turn = 0;
        int fetched = 0;
        Segment current = null;
        Segment next = null;
        StringBuilder out = new StringBuilder();
        for (long i = 0; i < n;) {
            if (current == null) {
                if (next != null) {
                    current = next;
                    next = null;
                } else {
                    String url = "http://" + servers[turn++ % servers.length] +
                                 "/tinyid/id/nextSegmentIdSimple?token=" + token +
                                 "&bizType=" + tag;
                    current = parseSegment(fetch(url, "POST"));
                    fetched++;
                    align(current);
                }
            }
            long id = current.current + current.delta;
            current.current = id;
            if (id > current.max) {
                current = null;
                continue;
            }
            if (id >= current.loading && next == null) {
                String url = "http://" + servers[turn++ % servers.length] +
                             "/tinyid/id/nextSegmentIdSimple?token=" + token + "&bizType=" + tag;
                next = parseSegment(fetch(url, "POST"));
                fetched++;
                align(next);
            }
            out.append(id).append('\n');
            i++;
        }
        System.out.print(out);
        System.err.println("# segments " + fetched);
    }
}
