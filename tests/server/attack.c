/*
 * attack.c - the hostile tests' client (tests/server/test_memory.sh,
 * test_deadlines.sh, bench/server.sh's memory section): what a server
 * exposed to the world meets from clients that do not play along. It opens
 * N connections, sends each the same bytes - all at once, or one byte at a
 * time (slow-loris) - reads the replies or leaves them unread, holds the
 * connections open, then closes them, and prints what it did and saw.
 *
 *   attack HOST:PORT [options]
 *
 *   --conns N        connections (default 1)
 *   --send TEXT      append TEXT to what each connection sends; the escapes
 *                    \r \n \t \\ and \xHH stand for their bytes
 *   --fill TEXT N    append TEXT as many whole times as fit in N bytes (at
 *                    least once): a pipeline, or padding
 *   --tls-hello N    append the first N bytes (0: all) of a ClientHello as
 *                    OpenSSL's client makes it (TLS 1.2 to 1.3, SNI
 *                    localhost): a handshake begun and never finished. All
 *                    connections send the same one (the server cannot tell)
 *   --split N        send the first N bytes, then the rest once every
 *                    connection has sent its first part and SPLIT_PAUSE_MS
 *                    have passed: a request that arrives in two reads
 *   --trickle-ms MS  send one byte every MS ms instead of all at once
 *   --read MODE      never (the default): read nothing, and close with the
 *                    replies unread; after: read a connection's replies
 *                    once it has sent everything (or its writes failed);
 *                    always: read the replies as they come
 *   --hold-ms MS     how long the connections stay open (default 10000),
 *                    counted from when they are all open; SIGTERM ends the
 *                    hold sooner, and so does the server closing every
 *                    connection (--read after or always)
 *   --expect TEXT    count the connections whose replies begin with TEXT
 *   --small-window   take in as little as a TCP peer can: a 4 KiB receive
 *                    buffer and 536-byte segments (TCP_MAXSEG). The
 *                    server's kernel then buffers only some kilobytes of
 *                    what it sends (on loopback it would otherwise take
 *                    megabytes per connection, autotuned), so replies that
 *                    are not read pile up where the server keeps them.
 *
 * Writes never block: a server that stops reading leaves the rest unsent
 * (counted). On stdout, as it happens:
 *
 *   opened N     every connection is open (N of them; the rest failed)
 *   sent N       every connection has sent all it had, or its writes failed
 *                (N sent it all)
 *
 * and at the end one line of key=value counts, then a line for each
 * distinct first line of the replies (at most 8), most frequent first:
 *
 *   summary: conns connect sent unsent full write_errors received replied
 *            matched closed resets open ms closed_ms_max
 *   reply COUNT FIRST-LINE
 *
 *   connect     connections that could not be opened
 *   sent        bytes sent over all connections; unsent: bytes left
 *   full        connections that sent all they had
 *   received    bytes received; replied: connections that received any
 *   closed      connections the server closed (EOF or reset) while read;
 *               resets: of them, by a reset; open: still open at the end
 *   ms          how long the hold lasted; closed_ms_max: the latest
 *               close by the server, from the connection's first byte
 *
 * Exit status 0, 1 when it cannot run (descriptors, memory, poll), 2 for a
 * usage error. Left out: IPv6, TLS beyond the ClientHello (loopback tests
 * only).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS   20000
#define FIRST_LINE  200
#define MAX_REPLIES 8
/* --small-window: a receive buffer the kernel rounds up to its minimum,
 * and the segment size of the oldest TCP (RFC 879). */
#define SMALL_RCVBUF 4096
#define SMALL_MSS    536
/* --split: the pause between the two parts, long enough for the server to
 * have read the first. */
#define SPLIT_PAUSE_MS 200

enum { READ_NEVER, READ_AFTER, READ_ALWAYS };

typedef struct conn {
    int fd;
    bool opened, open;
    size_t off; /* bytes of the payload sent */
    bool write_failed;
    int64_t first_ms; /* when its first byte went out */
    uint64_t received;
    char first[FIRST_LINE + 1]; /* the start of the replies */
    size_t first_len;
    bool closed, reset;
} conn;

static struct {
    struct sockaddr_in addr;
    int nconns;
    char *payload;
    size_t len;
    int64_t trickle_ms;
    int read;
    int64_t hold_ms;
    char *expect;
    size_t expect_len;
    bool small_window;
    size_t split; /* --split: the first part's length (0: one part) */
} opt = {.nconns = 1, .hold_ms = 10000};

static volatile sig_atomic_t stop_flag;

static void on_term(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: attack HOST:PORT [--conns N] [--send TEXT] [--fill TEXT N] [--tls-hello N]\n"
            "              [--split N] [--trickle-ms MS]\n"
            "              [--read never|after|always] [--hold-ms MS] [--expect TEXT] "
            "[--small-window]\n");
    exit(2);
}

static void die(const char *what)
{
    fprintf(stderr, "attack: %s: %s\n", what, strerror(errno));
    exit(1);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long long num_arg(const char *v, long long max)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || x < 0 || x > max)
        usage();
    return x;
}

static int hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* TEXT with its escapes decoded, into a new buffer of *len bytes. */
static char *unescape(const char *text, size_t *len)
{
    size_t n = strlen(text);
    char *out = malloc(n + 1);
    if (out == NULL)
        die("malloc");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (text[i] != '\\' || i + 1 == n) {
            out[k++] = text[i];
            continue;
        }
        char e = text[++i];
        if (e == 'r') {
            out[k++] = '\r';
        } else if (e == 'n') {
            out[k++] = '\n';
        } else if (e == 't') {
            out[k++] = '\t';
        } else if (e == 'x' && i + 2 < n && hex_digit(text[i + 1]) >= 0 &&
                   hex_digit(text[i + 2]) >= 0) {
            out[k++] = (char)(hex_digit(text[i + 1]) * 16 + hex_digit(text[i + 2]));
            i += 2;
        } else {
            out[k++] = e; /* \\ and anything else: the character itself */
        }
    }
    *len = k;
    return out;
}

static void append(const char *p, size_t n, size_t times)
{
    if (n != 0 && times > (SIZE_MAX - opt.len) / n)
        usage();
    char *q = realloc(opt.payload, opt.len + n * times + 1);
    if (q == NULL)
        die("realloc");
    opt.payload = q;
    for (size_t i = 0; i < times; i++) {
        memcpy(opt.payload + opt.len, p, n);
        opt.len += n;
    }
}

/* --tls-hello N: the first n bytes (0: all) of a ClientHello, made by
 * OpenSSL's client over memory BIOs. */
static void append_client_hello(size_t n)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL *ssl = ctx != NULL ? SSL_new(ctx) : NULL;
    BIO *in = BIO_new(BIO_s_mem()), *out = BIO_new(BIO_s_mem());
    if (ssl == NULL || in == NULL || out == NULL) {
        fprintf(stderr, "attack: cannot make a TLS client\n");
        exit(1);
    }
    SSL_set_bio(ssl, in, out);
    SSL_set_connect_state(ssl);
    SSL_set_tlsext_host_name(ssl, "localhost");
    (void)SSL_do_handshake(ssl); /* wants the server's reply */
    char *hello;
    long len = BIO_get_mem_data(out, &hello);
    if (len <= 0) {
        fprintf(stderr, "attack: OpenSSL made no ClientHello\n");
        exit(1);
    }
    if (n == 0 || n > (size_t)len)
        n = (size_t)len;
    append(hello, n, 1);
    SSL_free(ssl); /* and both BIOs */
    SSL_CTX_free(ctx);
}

/* Descriptors for every connection: the soft limit raised to the hard one. */
static void raise_nofile(int n)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        die("getrlimit");
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)n + 16) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            die("setrlimit");
    }
}

static bool open_conn(conn *c)
{
    memset(c, 0, sizeof *c);
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return false;
    if (opt.small_window) {
        /* Set before connect, so that the SYN announces them. */
        int rcvbuf = SMALL_RCVBUF, mss = SMALL_MSS;
        setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
        setsockopt(c->fd, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof mss);
    }
    if (connect(c->fd, (struct sockaddr *)&opt.addr, sizeof opt.addr) != 0) {
        close(c->fd);
        return false;
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    c->opened = c->open = true;
    return true;
}

static bool done_sending(const conn *c)
{
    return c->off == opt.len || c->write_failed;
}

/* Where sending stops for now: the end, or with --split the end of the
 * first part until the second may go. */
static size_t send_end;

/* Sends what the socket takes, at most max bytes. */
static void send_some(conn *c, size_t max)
{
    while (!done_sending(c) && c->off < send_end && max > 0) {
        size_t n = send_end - c->off < max ? send_end - c->off : max;
        ssize_t w = send(c->fd, opt.payload + c->off, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            /* EAGAIN: the server reads no more for now. Anything else (a
             * reset, EPIPE): it closed; what it answered may still be
             * there to read. */
            if (errno != EAGAIN)
                c->write_failed = true;
            return;
        }
        if (c->off == 0)
            c->first_ms = now_ms();
        c->off += (size_t)w;
        max -= (size_t)w;
    }
}

/* Reads what has arrived: the start is kept for the report, the rest
 * counted. */
static void read_some(conn *c, int64_t start_ms, int64_t *closed_ms_max)
{
    char buf[65536];
    for (;;) {
        ssize_t r = recv(c->fd, buf, sizeof buf, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return;
        if (r <= 0) {
            c->closed = true;
            c->reset = r < 0 && errno == ECONNRESET;
            int64_t t = now_ms() - (c->first_ms ? c->first_ms : start_ms);
            if (t > *closed_ms_max)
                *closed_ms_max = t;
            close(c->fd);
            c->open = false;
            return;
        }
        size_t keep = FIRST_LINE - c->first_len;
        if (keep > (size_t)r)
            keep = (size_t)r;
        memcpy(c->first + c->first_len, buf, keep);
        c->first_len += keep;
        c->received += (uint64_t)r;
    }
}

static bool reading(const conn *c)
{
    return opt.read == READ_ALWAYS || (opt.read == READ_AFTER && done_sending(c));
}

typedef struct reply {
    char line[FIRST_LINE + 1];
    int count;
} reply;

/* The distinct first lines of the replies, most frequent first. */
static void print_replies(const conn *conns)
{
    reply r[MAX_REPLIES];
    int nr = 0, other = 0;
    for (int i = 0; i < opt.nconns; i++) {
        const conn *c = &conns[i];
        if (c->first_len == 0)
            continue;
        size_t n = strcspn(c->first, "\r\n");
        int k = 0;
        while (k < nr && (strlen(r[k].line) != n || memcmp(r[k].line, c->first, n) != 0))
            k++;
        if (k == nr && nr == MAX_REPLIES) {
            other++;
            continue;
        }
        if (k == nr) {
            memcpy(r[nr].line, c->first, n);
            r[nr].line[n] = '\0';
            r[nr++].count = 0;
        }
        r[k].count++;
    }
    for (int i = 0; i < nr; i++) {
        int best = i;
        for (int j = i + 1; j < nr; j++) {
            if (r[j].count > r[best].count)
                best = j;
        }
        reply t = r[i];
        r[i] = r[best];
        r[best] = t;
        /* Control bytes shown as '?', so that the report stays one line each. */
        for (char *p = r[i].line; *p; p++) {
            if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f)
                *p = '?';
        }
        printf("reply %d %s\n", r[i].count, r[i].line);
    }
    if (other > 0)
        printf("reply %d (other first lines)\n", other);
}

static void parse_args(int argc, char **argv)
{
    if (argc < 2)
        usage();
    const char *addr = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--small-window") == 0) {
            opt.small_window = true;
            continue;
        }
        if (i + 1 >= argc)
            usage();
        const char *v = argv[++i];
        size_t n;
        if (strcmp(a, "--conns") == 0) {
            opt.nconns = (int)num_arg(v, MAX_CONNS);
        } else if (strcmp(a, "--send") == 0) {
            char *t = unescape(v, &n);
            append(t, n, 1);
            free(t);
        } else if (strcmp(a, "--fill") == 0) {
            if (i + 1 >= argc)
                usage();
            size_t bytes = (size_t)num_arg(argv[++i], 1 << 30);
            char *t = unescape(v, &n);
            if (n == 0)
                usage();
            append(t, n, bytes / n > 0 ? bytes / n : 1);
            free(t);
        } else if (strcmp(a, "--tls-hello") == 0) {
            append_client_hello((size_t)num_arg(v, 1 << 20));
        } else if (strcmp(a, "--split") == 0) {
            opt.split = (size_t)num_arg(v, 1 << 30);
        } else if (strcmp(a, "--trickle-ms") == 0) {
            opt.trickle_ms = num_arg(v, 3600000);
        } else if (strcmp(a, "--read") == 0) {
            if (strcmp(v, "never") == 0)
                opt.read = READ_NEVER;
            else if (strcmp(v, "after") == 0)
                opt.read = READ_AFTER;
            else if (strcmp(v, "always") == 0)
                opt.read = READ_ALWAYS;
            else
                usage();
        } else if (strcmp(a, "--hold-ms") == 0) {
            opt.hold_ms = num_arg(v, 3600000);
        } else if (strcmp(a, "--expect") == 0) {
            free(opt.expect);
            opt.expect = unescape(v, &opt.expect_len);
        } else {
            usage();
        }
    }
    if (opt.nconns < 1 || opt.expect_len > FIRST_LINE || (opt.split > 0 && opt.split >= opt.len) ||
        (opt.split > 0 && opt.trickle_ms > 0))
        usage();
    const char *colon = strrchr(addr, ':');
    if (colon == NULL || colon - addr >= 64)
        usage();
    char host[64];
    snprintf(host, sizeof host, "%.*s", (int)(colon - addr), addr);
    opt.addr.sin_family = AF_INET;
    opt.addr.sin_port = htons((uint16_t)num_arg(colon + 1, 65535));
    if (inet_pton(AF_INET, host, &opt.addr.sin_addr) != 1)
        usage();
}

int main(int argc, char **argv)
{
    parse_args(argc, argv);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term; /* no SA_RESTART: poll returns at once */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    raise_nofile(opt.nconns);

    conn *conns = calloc((size_t)opt.nconns, sizeof *conns);
    struct pollfd *pfds = calloc((size_t)opt.nconns, sizeof *pfds);
    int *idx = calloc((size_t)opt.nconns, sizeof *idx);
    if (conns == NULL || pfds == NULL || idx == NULL)
        die("calloc");
    int n_connect = 0, opened = 0;
    for (int i = 0; i < opt.nconns; i++) {
        if (open_conn(&conns[i]))
            opened++;
        else
            n_connect++;
    }
    printf("opened %d\n", opened);
    fflush(stdout);

    int64_t start = now_ms(), end = start + opt.hold_ms, next_tick = start, closed_ms_max = 0;
    int64_t first_part_ms = 0; /* --split: when every first part had gone */
    send_end = opt.split > 0 ? opt.split : opt.len;
    bool all_sent_said = false;
    while (!stop_flag) {
        int64_t now = now_ms();
        if (now >= end)
            break;
        /* Slow-loris: one more byte on every connection each tick. */
        bool tick = opt.trickle_ms > 0 && now >= next_tick;
        if (tick)
            next_tick = now + opt.trickle_ms;
        int n = 0, live = 0, sent_all = 0, sending = 0;
        for (int i = 0; i < opt.nconns; i++) {
            conn *c = &conns[i];
            if (!c->open)
                continue;
            live++;
            if (tick)
                send_some(c, 1);
            sent_all += c->off == opt.len;
            sending += !done_sending(c) && c->off < send_end;
            short ev = 0;
            if (!done_sending(c) && c->off < send_end && opt.trickle_ms == 0)
                ev |= POLLOUT;
            if (reading(c))
                ev |= POLLIN;
            if (ev != 0) {
                pfds[n].fd = c->fd;
                pfds[n].events = ev;
                idx[n++] = i;
            }
        }
        if (sending == 0 && send_end < opt.len) {
            /* Every first part has gone: the rest after the pause. */
            if (first_part_ms == 0)
                first_part_ms = now;
            if (now - first_part_ms >= SPLIT_PAUSE_MS) {
                send_end = opt.len;
                continue;
            }
        }
        if (sending == 0 && send_end == opt.len && !all_sent_said) {
            all_sent_said = true;
            printf("sent %d\n", sent_all);
            fflush(stdout);
        }
        /* Reading, the server has closed them all: nothing left to hold. */
        if (live == 0 && opt.read != READ_NEVER)
            break;
        int64_t wait = end - now;
        if (opt.trickle_ms > 0 && next_tick - now < wait)
            wait = next_tick - now;
        if (first_part_ms > 0 && send_end < opt.len && first_part_ms + SPLIT_PAUSE_MS - now < wait)
            wait = first_part_ms + SPLIT_PAUSE_MS - now;
        if (wait > 100)
            wait = 100;
        int r = poll(pfds, (nfds_t)n, (int)wait);
        if (r < 0 && errno != EINTR)
            die("poll");
        for (int k = 0; r > 0 && k < n; k++) {
            conn *c = &conns[idx[k]];
            short re = pfds[k].revents;
            if ((re & POLLOUT) || ((re & (POLLERR | POLLHUP)) && !done_sending(c)))
                send_some(c, SIZE_MAX);
            if (reading(c) && (re & (POLLIN | POLLERR | POLLHUP)))
                read_some(c, start, &closed_ms_max);
        }
    }
    int64_t held = now_ms() - start;
    /* What arrived by the end still counts. */
    for (int i = 0; i < opt.nconns; i++) {
        if (conns[i].open && reading(&conns[i]))
            read_some(&conns[i], start, &closed_ms_max);
    }

    uint64_t sent = 0, unsent = 0, received = 0;
    int full = 0, write_errors = 0, replied = 0, matched = 0, closed = 0, resets = 0, still = 0;
    for (int i = 0; i < opt.nconns; i++) {
        conn *c = &conns[i];
        if (!c->opened)
            continue;
        sent += c->off;
        unsent += opt.len - c->off;
        full += c->off == opt.len;
        write_errors += c->write_failed;
        received += c->received;
        replied += c->received > 0;
        matched += opt.expect != NULL && c->first_len >= opt.expect_len &&
                   memcmp(c->first, opt.expect, opt.expect_len) == 0;
        closed += c->closed;
        resets += c->reset;
        if (c->open) {
            still++;
            close(c->fd);
        }
    }
    printf(
        "summary: conns=%d connect=%d sent=%llu unsent=%llu full=%d write_errors=%d received=%llu "
        "replied=%d matched=%d closed=%d resets=%d open=%d ms=%lld closed_ms_max=%lld\n",
        opened, n_connect, (unsigned long long)sent, (unsigned long long)unsent, full, write_errors,
        (unsigned long long)received, replied, matched, closed, resets, still, (long long)held,
        (long long)closed_ms_max);
    print_replies(conns);
    free(conns);
    free(pfds);
    free(idx);
    free(opt.payload);
    free(opt.expect);
    return 0;
}
