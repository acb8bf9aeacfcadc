/*
 * loadclient.c - the server tests' client: loads idmintd over several
 * keep-alive connections (HTTP/1.1 or RESP2), pipelining a batch of
 * requests per write, and records every ID it receives, per connection.
 *
 *   loadclient --http HOST:PORT --path PATH [--path PATH...] [options]
 *   loadclient --resp HOST:PORT --cmd "NEXT snowflake 4" [--cmd ...] [options]
 *
 *   --conns N        connections (default 4); connection i uses path/cmd
 *                    i mod (number given)
 *   --pipeline N     requests per batch, sent in one write (default 1); the
 *                    next batch goes once the whole batch is answered
 *   --batches N      batches per connection (default 0: until the duration)
 *   --duration-ms N  stop sending after this long (default 5000); answers
 *                    are awaited 5 s more at most
 *   --interval-ms N  wait N ms after a batch is answered before sending
 *                    the next (default 0)
 *   --ids FILE       write every ID received, one per line
 *   --quiet-phases   do not print phase lines on SIGUSR1
 *   --hwm FILE       after each reply that carried IDs, read the time
 *                    high-water mark in FILE (idmintd's STATE_DIR/mark,
 *                    libidmint's mark file: include/idmint/mark.h) and
 *                    check the reply's last (greatest) ID against it; needs
 *                    --hwm-time
 *   --hwm-time SHIFT:UNIT_MS:EPOCH_MS
 *                    how an ID's time is read for --hwm: (ID >> SHIFT) *
 *                    UNIT_MS + EPOCH_MS Unix ms (sonyflake: 24:10:1409529600000)
 *
 * The mark read after a reply arrived is at or above the mark that was
 * durable when the server sent it (a running server only raises it), so an
 * ID past the mark read is an ID past what was durable.
 *
 * SIGTERM stops sending, as the end of the duration does. SIGUSR1 prints the counts of the phase
 * that ends ("phase K: ...") and starts a new one, so that a test can tell what was answered while
 * the server's clock was stepped. At the end it prints one line of key=value counts, "summary:
 * ...", and exits 1 if any check failed:
 *
 *   malformed   a reply that is not valid HTTP/1.1 or RESP2
 *   truncated   the server closed in the middle of a reply
 *   invalid     an ID line with bytes outside [0-9A-Za-z_-] or empty
 *   order       an ID not strictly greater than the previous ID on the same
 *               connection (all-digit IDs compare as numbers, others
 *               bytewise; compare only like with like: one path per
 *               connection)
 *   dups        an ID received twice, over all connections
 *   connect     a connection that could not be opened
 *   hung        a connection still waiting for replies 5 s after the end
 *   pasthwm     (--hwm) a reply whose last ID has a time above the mark
 *   nohwm       (--hwm) a reply after which FILE held no valid mark
 *
 * and reports, without judging (the test decides), how connections ended:
 *
 *   partial      the server closed while some, but not all, requests of a
 *                batch it had been sent were answered
 *   cut          partial, and the last reply did not announce the close:
 *                a batch is sent in one write, so the server read it all
 *                and left some of it unanswered without saying so
 *   unannounced  the server closed with requests outstanding and its last
 *                reply did not say Connection: close (HTTP) or was no
 *                QUIT +OK (RESP)
 *   resets       ECONNRESET on read
 *   eof          connections the server closed
 *
 * HTTP statuses are counted as s200, s4xx, s503 (with retry503: how many
 * of them had Retry-After, and clock503: a body naming the clock) and
 * sother. A RESP error reply counts as s503 if it names the clock (with
 * retry503 if it says "retry in"), else s4xx. A RESP integer reply (INCR
 * of a segment tag) is an ID.
 */
#include <idmint/mark.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_TARGETS 16
#define MAX_CONNS   1024
#define MAX_REPLY   (8u << 20)
#define GRACE_MS    5000

typedef struct counts {
    uint64_t s200, s4xx, s503, retry503, clock503, sother, ids;
} counts;

typedef struct conn {
    int fd;
    int index;
    int target;
    bool open;
    char *in;
    size_t in_len, in_cap;
    char *out;
    size_t out_len, out_off;
    int outstanding;    /* requests of the batch not yet answered */
    int batch_answered; /* replies to the current batch */
    uint64_t batches;
    int64_t next_send_ms; /* > 0: the next batch waits until then */
    bool last_close;      /* the last reply announced the close */
    char *prev;           /* the previous ID on this connection */
    size_t prev_len;
} conn;

static struct {
    bool http;
    struct sockaddr_in addr;
    const char *targets[MAX_TARGETS];
    int ntargets;
    int nconns;
    int pipeline;
    uint64_t max_batches;
    int64_t duration_ms;
    int64_t interval_ms;
    const char *ids_path;
    bool quiet_phases;
    const char *hwm_path;
    bool hwm_time;
    int hwm_shift;
    int64_t hwm_unit_ms, hwm_epoch_ms;
} opt = {.nconns = 4, .pipeline = 1, .duration_ms = 5000};

static counts total, phase;
static uint64_t n_malformed, n_truncated, n_invalid, n_order, n_dups, n_connect;
static uint64_t n_partial, n_cut, n_unannounced, n_resets, n_eof, n_requests;
static uint64_t n_pasthwm, n_nohwm;
static int phase_no;
static volatile sig_atomic_t phase_flag, stop_flag;
static FILE *ids_file;

/* Every ID, for the duplicate check: an arena of NUL-terminated strings. */
static char *arena;
static size_t arena_len, arena_cap;
static size_t *id_offs;
static size_t n_ids, ids_cap;

static void die(const char *msg)
{
    fprintf(stderr, "loadclient: %s\n", msg);
    exit(2);
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (q == NULL)
        die("out of memory");
    return q;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_usr1(int sig)
{
    (void)sig;
    phase_flag = 1;
}

static void on_term(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void print_counts(const char *label, const counts *c)
{
    printf("%s s200=%llu s4xx=%llu s503=%llu retry503=%llu clock503=%llu sother=%llu ids=%llu\n",
           label, (unsigned long long)c->s200, (unsigned long long)c->s4xx,
           (unsigned long long)c->s503, (unsigned long long)c->retry503,
           (unsigned long long)c->clock503, (unsigned long long)c->sother,
           (unsigned long long)c->ids);
    fflush(stdout);
}

static void end_phase(void)
{
    char label[32];
    snprintf(label, sizeof label, "phase %d:", phase_no++);
    if (!opt.quiet_phases)
        print_counts(label, &phase);
    memset(&phase, 0, sizeof phase);
}

static bool all_digits(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return false;
    }
    return n > 0;
}

/* <0, 0, >0 as a is below, equal to or above b. */
static int compare_ids(const char *a, size_t an, const char *b, size_t bn)
{
    if (all_digits(a, an) && all_digits(b, bn)) {
        while (an > 1 && *a == '0') {
            a++;
            an--;
        }
        while (bn > 1 && *b == '0') {
            b++;
            bn--;
        }
        if (an != bn)
            return an < bn ? -1 : 1;
        return memcmp(a, b, an);
    }
    size_t n = an < bn ? an : bn;
    int r = memcmp(a, b, n);
    if (r != 0)
        return r;
    return an < bn ? -1 : an > bn ? 1 : 0;
}

static void record_id(conn *c, const char *p, size_t n)
{
    bool ok = n > 0 && n <= 256;
    for (size_t i = 0; ok && i < n; i++) {
        char ch = p[i];
        ok = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
             ch == '_' || ch == '-';
    }
    if (!ok) {
        if (n_invalid++ < 5)
            fprintf(stderr, "loadclient: invalid ID line '%.*s'\n", (int)(n > 80 ? 80 : n), p);
        return;
    }
    if (c->prev != NULL && compare_ids(p, n, c->prev, c->prev_len) <= 0) {
        if (n_order++ < 5)
            fprintf(stderr, "loadclient: connection %d: '%.*s' after '%.*s' is not increasing\n",
                    c->index, (int)n, p, (int)c->prev_len, c->prev);
    }
    c->prev = xrealloc(c->prev, n);
    memcpy(c->prev, p, n);
    c->prev_len = n;
    if (arena_len + n + 1 > arena_cap) {
        arena_cap = arena_cap ? arena_cap * 2 : (1u << 20);
        while (arena_len + n + 1 > arena_cap)
            arena_cap *= 2;
        arena = xrealloc(arena, arena_cap);
    }
    if (n_ids == ids_cap) {
        ids_cap = ids_cap ? ids_cap * 2 : 65536;
        id_offs = xrealloc(id_offs, ids_cap * sizeof *id_offs);
    }
    id_offs[n_ids++] = arena_len;
    memcpy(arena + arena_len, p, n);
    arena[arena_len + n] = '\0';
    arena_len += n + 1;
    if (ids_file != NULL)
        fprintf(ids_file, "%.*s\n", (int)n, p);
    total.ids++;
    phase.ids++;
}

/* The body of a 200 reply: IDs one per line (the Leaf route has no final
 * newline). */
static void record_lines(conn *c, const char *p, size_t n)
{
    while (n > 0) {
        const char *nl = memchr(p, '\n', n);
        size_t len = nl ? (size_t)(nl - p) : n;
        record_id(c, p, len);
        if (nl == NULL)
            break;
        n -= len + 1;
        p += len + 1;
    }
}

static void count_status(int status, bool retry, bool clock)
{
    counts *cs[2] = {&total, &phase};
    for (int i = 0; i < 2; i++) {
        counts *k = cs[i];
        if (status == 200) {
            k->s200++;
        } else if (status == 503) {
            k->s503++;
            k->retry503 += retry;
            k->clock503 += clock;
        } else if (status >= 400 && status < 500) {
            k->s4xx++;
        } else {
            k->sother++;
        }
    }
}

static bool mem_has(const char *p, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++) {
        if (strncasecmp(p + i, needle, k) == 0)
            return true;
    }
    return false;
}

/* Finds a header's value in head[0..n) (lines after the status line). */
static bool header(const char *head, size_t n, const char *name, const char **v, size_t *vlen)
{
    size_t k = strlen(name);
    const char *p = head, *end = head + n;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (eol == NULL)
            eol = end;
        size_t len = (size_t)(eol - p);
        if (len > k && p[k] == ':' && strncasecmp(p, name, k) == 0) {
            const char *s = p + k + 1, *e = eol;
            while (s < e && (*s == ' ' || *s == '\t'))
                s++;
            while (e > s && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
                e--;
            *v = s;
            *vlen = (size_t)(e - s);
            return true;
        }
        p = eol + 1;
    }
    return false;
}

/* Parses one HTTP response at in[0..len). Returns its length, 0 when
 * incomplete, -1 when malformed. */
static long parse_http(conn *c, const char *in, size_t len)
{
    const char *end = NULL;
    for (size_t i = 0; i + 3 < len; i++) {
        if (in[i] == '\r' && in[i + 1] == '\n' && in[i + 2] == '\r' && in[i + 3] == '\n') {
            end = in + i + 4;
            break;
        }
    }
    if (end == NULL)
        return len > 65536 ? -1 : 0;
    if (len < 12 || memcmp(in, "HTTP/1.1 ", 9) != 0)
        return -1;
    int status = 0;
    for (int i = 9; i < 12; i++) {
        if (in[i] < '0' || in[i] > '9')
            return -1;
        status = status * 10 + (in[i] - '0');
    }
    const char *v;
    size_t vlen;
    size_t head_len = (size_t)(end - in);
    if (!header(in, head_len, "Content-Length", &v, &vlen) || vlen == 0 || vlen > 9)
        return -1;
    size_t body = 0;
    for (size_t i = 0; i < vlen; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        body = body * 10 + (size_t)(v[i] - '0');
    }
    if (len - head_len < body)
        return 0;
    bool retry = header(in, head_len, "Retry-After", &v, &vlen) && vlen > 0;
    c->last_close = header(in, head_len, "Connection", &v, &vlen) && vlen == 5 &&
                    strncasecmp(v, "close", 5) == 0;
    bool clock = mem_has(end, body, "clock");
    count_status(status, retry, clock);
    if (status == 200)
        record_lines(c, end, body);
    return (long)(head_len + body);
}

/* A RESP line at p[0..len): its length without CRLF, or -1 if incomplete. */
static long resp_line(const char *p, size_t len)
{
    for (size_t i = 0; i + 1 < len; i++) {
        if (p[i] == '\r' && p[i + 1] == '\n')
            return (long)i;
    }
    return -1;
}

static bool parse_num(const char *p, long n, long *out)
{
    if (n <= 0 || n > 9)
        return false;
    long v = 0;
    for (long i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return false;
        v = v * 10 + (p[i] - '0');
    }
    *out = v;
    return true;
}

/* One bulk string at p; with ids, records it. Returns its length, 0 when
 * incomplete, -1 when malformed. */
static long parse_bulk(conn *c, const char *p, size_t len, bool record)
{
    long l = resp_line(p, len);
    if (l < 0)
        return 0;
    long n;
    if (p[0] != '$' || !parse_num(p + 1, l - 1, &n))
        return -1;
    size_t need = (size_t)l + 2 + (size_t)n + 2;
    if (len < need)
        return 0;
    if (p[l + 2 + n] != '\r' || p[l + 3 + n] != '\n')
        return -1;
    if (record)
        record_id(c, p + l + 2, (size_t)n);
    return (long)need;
}

static long parse_resp(conn *c, const char *in, size_t len)
{
    long l = resp_line(in, len);
    if (l < 0)
        return len > 65536 ? -1 : 0;
    switch (in[0]) {
    case '+':
        count_status(200, false, false);
        c->last_close = l == 3 && memcmp(in, "+OK", 3) == 0;
        return l + 2;
    case '-': {
        bool clock = mem_has(in, (size_t)l, "clock");
        count_status(clock ? 503 : 400, mem_has(in, (size_t)l, "retry in"), clock);
        c->last_close = false;
        return l + 2;
    }
    case ':':
        /* An integer reply: INCR's ID (segments). */
        record_id(c, in + 1, (size_t)l - 1);
        count_status(200, false, false);
        c->last_close = false;
        return l + 2;
    case '$': {
        /* Check completeness first: IDs are recorded once. */
        long n = parse_bulk(c, in, len, false);
        if (n <= 0)
            return n;
        parse_bulk(c, in, len, true);
        count_status(200, false, false);
        c->last_close = false;
        return n;
    }
    case '*': {
        long k;
        if (!parse_num(in + 1, l - 1, &k))
            return -1;
        size_t off = (size_t)l + 2;
        for (long i = 0; i < k; i++) {
            long n = parse_bulk(c, in + off, len - off, false);
            if (n <= 0)
                return n;
            off += (size_t)n;
        }
        off = (size_t)l + 2;
        for (long i = 0; i < k; i++)
            off += (size_t)parse_bulk(c, in + off, len - off, true);
        count_status(200, false, false);
        c->last_close = false;
        return (long)off;
    }
    default:
        return -1;
    }
}

/* The mark in opt.hwm_path (idmintd's STATE_DIR/mark, as libidmint's
 * idm_mark_decode reads it: the newest slot whose checksum holds), or -1
 * if there is none. The file is opened anew each time: a server may
 * replace it. */
static int64_t read_hwm(void)
{
    int fd = open(opt.hwm_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    unsigned char buf[IDM_MARK_FILE_BYTES];
    ssize_t r;
    do {
        r = pread(fd, buf, sizeof buf, 0);
    } while (r < 0 && errno == EINTR);
    close(fd);
    int64_t mark = 0;
    if (r <= 0 || idm_mark_decode(buf, (size_t)r, &mark, NULL, NULL, NULL) != IDM_OK || mark == 0)
        return -1;
    return mark;
}

/* --hwm: the last ID of the reply just parsed (c->prev) against the mark. */
static void check_hwm(const conn *c)
{
    if (c->prev == NULL || !all_digits(c->prev, c->prev_len) || c->prev_len > 20)
        return;
    char num[21];
    memcpy(num, c->prev, c->prev_len);
    num[c->prev_len] = '\0';
    errno = 0;
    unsigned long long id = strtoull(num, NULL, 10);
    if (errno != 0)
        return;
    int64_t t = (int64_t)(id >> opt.hwm_shift) * opt.hwm_unit_ms + opt.hwm_epoch_ms;
    int64_t mark = read_hwm();
    if (mark < 0) {
        if (n_nohwm++ < 5)
            fprintf(stderr, "loadclient: no valid high-water mark in %s after a reply\n",
                    opt.hwm_path);
        return;
    }
    if (t > mark && n_pasthwm++ < 5)
        fprintf(
            stderr,
            "loadclient: connection %d: %s has time %lld, %lld ms past the high-water mark %lld\n",
            c->index, num, (long long)t, (long long)(t - mark), (long long)mark);
}

static void build_batch(conn *c)
{
    const char *t = opt.targets[c->target];
    char req[4096];
    int n;
    if (opt.http) {
        n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: idmintd\r\n\r\n", t);
    } else {
        /* Words separated by single spaces. */
        char words[16][256];
        int argc = 0;
        const char *p = t;
        while (*p && argc < 16) {
            while (*p == ' ')
                p++;
            size_t w = strcspn(p, " ");
            if (w == 0)
                break;
            snprintf(words[argc++], sizeof words[0], "%.*s", (int)w, p);
            p += w;
        }
        n = snprintf(req, sizeof req, "*%d\r\n", argc);
        for (int i = 0; i < argc; i++)
            n += snprintf(req + n, sizeof req - (size_t)n, "$%zu\r\n%s\r\n", strlen(words[i]),
                          words[i]);
    }
    if (n <= 0 || (size_t)n >= sizeof req)
        die("request too long");
    size_t total_len = (size_t)n * (size_t)opt.pipeline;
    c->out = xrealloc(c->out, total_len);
    for (int i = 0; i < opt.pipeline; i++)
        memcpy(c->out + (size_t)i * (size_t)n, req, (size_t)n);
    c->out_len = total_len;
    c->out_off = 0;
    c->outstanding = opt.pipeline;
    c->batch_answered = 0;
    n_requests += (uint64_t)opt.pipeline;
}

static void conn_end(conn *c, bool by_server, bool reset)
{
    if (!c->open)
        return;
    c->open = false;
    close(c->fd);
    if (!by_server)
        return;
    n_eof++;
    if (reset)
        n_resets++;
    if (c->in_len > 0)
        n_truncated++;
    if (c->outstanding > 0 && c->batch_answered > 0) {
        n_partial++;
        n_cut += !c->last_close;
    }
    if (c->outstanding > 0 && !c->last_close)
        n_unannounced++;
}

static void flush_out(conn *c)
{
    while (c->out_off < c->out_len) {
        ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                return;
            conn_end(c, true, errno == ECONNRESET);
            return;
        }
        c->out_off += (size_t)w;
    }
}

static bool open_conn(conn *c, int i)
{
    memset(c, 0, sizeof *c);
    c->index = i;
    c->target = i % opt.ntargets;
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return false;
    if (connect(c->fd, (struct sockaddr *)&opt.addr, sizeof opt.addr) != 0) {
        close(c->fd);
        return false;
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    c->open = true;
    return true;
}

static void on_readable(conn *c, bool sending)
{
    for (;;) {
        if (c->in_cap - c->in_len < 65536) {
            if (c->in_cap >= MAX_REPLY) {
                n_malformed++;
                conn_end(c, false, false);
                return;
            }
            c->in_cap = c->in_cap ? c->in_cap * 2 : 131072;
            c->in = xrealloc(c->in, c->in_cap);
        }
        ssize_t r = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return;
        if (r <= 0) {
            conn_end(c, true, r < 0 && errno == ECONNRESET);
            return;
        }
        c->in_len += (size_t)r;
        size_t off = 0;
        while (off < c->in_len) {
            uint64_t ids_before = total.ids;
            long n = opt.http ? parse_http(c, c->in + off, c->in_len - off)
                              : parse_resp(c, c->in + off, c->in_len - off);
            if (n == 0)
                break;
            if (n > 0 && opt.hwm_path != NULL && total.ids > ids_before)
                check_hwm(c);
            if (n < 0 || c->outstanding == 0) {
                /* Garbage, or a reply to nothing. */
                if (n_malformed++ < 5)
                    fprintf(stderr, "loadclient: malformed reply: '%.*s'\n",
                            (int)(c->in_len - off > 80 ? 80 : c->in_len - off), c->in + off);
                c->in_len = 0;
                conn_end(c, false, false);
                return;
            }
            off += (size_t)n;
            c->outstanding--;
            c->batch_answered++;
        }
        memmove(c->in, c->in + off, c->in_len - off);
        c->in_len -= off;
        if (c->outstanding == 0) {
            c->batches++;
            if (!sending || (opt.max_batches > 0 && c->batches >= opt.max_batches)) {
                conn_end(c, false, false);
                return;
            }
            if (opt.interval_ms > 0) {
                c->next_send_ms = now_ms() + opt.interval_ms;
                return;
            }
            build_batch(c);
            flush_out(c);
            if (!c->open)
                return;
        }
    }
}

static int by_string(const void *a, const void *b)
{
    const char *x = arena + *(const size_t *)a, *y = arena + *(const size_t *)b;
    return strcmp(x, y);
}

static void usage(void)
{
    fprintf(
        stderr,
        "usage: loadclient --http|--resp HOST:PORT --path P|--cmd C [--conns N] [--pipeline N]\n"
        "                  [--batches N] [--duration-ms N] [--interval-ms N] [--ids FILE]\n"
        "                  [--quiet-phases] [--hwm FILE --hwm-time SHIFT:UNIT_MS:EPOCH_MS]\n");
    exit(2);
}

static long long num_arg(const char *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno != 0 || *end != '\0' || x < 0)
        usage();
    return x;
}

int main(int argc, char **argv)
{
    const char *addr = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--quiet-phases") == 0) {
            opt.quiet_phases = true;
            continue;
        }
        if (i + 1 >= argc)
            usage();
        const char *v = argv[++i];
        if (strcmp(a, "--http") == 0 || strcmp(a, "--resp") == 0) {
            opt.http = strcmp(a, "--http") == 0;
            addr = v;
        } else if (strcmp(a, "--path") == 0 || strcmp(a, "--cmd") == 0) {
            if (opt.ntargets == MAX_TARGETS)
                usage();
            opt.targets[opt.ntargets++] = v;
        } else if (strcmp(a, "--conns") == 0) {
            opt.nconns = (int)num_arg(v);
        } else if (strcmp(a, "--pipeline") == 0) {
            opt.pipeline = (int)num_arg(v);
        } else if (strcmp(a, "--batches") == 0) {
            opt.max_batches = (uint64_t)num_arg(v);
        } else if (strcmp(a, "--duration-ms") == 0) {
            opt.duration_ms = num_arg(v);
        } else if (strcmp(a, "--interval-ms") == 0) {
            opt.interval_ms = num_arg(v);
        } else if (strcmp(a, "--ids") == 0) {
            opt.ids_path = v;
        } else if (strcmp(a, "--hwm") == 0) {
            opt.hwm_path = v;
        } else if (strcmp(a, "--hwm-time") == 0) {
            char *end;
            errno = 0;
            long shift = strtol(v, &end, 10);
            if (errno != 0 || *end != ':' || shift < 0 || shift > 63)
                usage();
            long long unit = strtoll(end + 1, &end, 10);
            if (errno != 0 || *end != ':' || unit < 1)
                usage();
            long long epoch = strtoll(end + 1, &end, 10);
            if (errno != 0 || *end != '\0')
                usage();
            opt.hwm_time = true;
            opt.hwm_shift = (int)shift;
            opt.hwm_unit_ms = unit;
            opt.hwm_epoch_ms = epoch;
        } else {
            usage();
        }
    }
    if ((opt.hwm_path != NULL) != opt.hwm_time)
        usage();
    if (addr == NULL || opt.ntargets == 0 || opt.nconns < 1 || opt.nconns > MAX_CONNS ||
        opt.pipeline < 1 || opt.pipeline > 100000)
        usage();
    const char *colon = strrchr(addr, ':');
    if (colon == NULL || colon - addr >= 64)
        usage();
    char host[64];
    snprintf(host, sizeof host, "%.*s", (int)(colon - addr), addr);
    opt.addr.sin_family = AF_INET;
    opt.addr.sin_port = htons((uint16_t)num_arg(colon + 1));
    if (inet_pton(AF_INET, host, &opt.addr.sin_addr) != 1)
        usage();
    if (opt.ids_path != NULL) {
        ids_file = fopen(opt.ids_path, "w");
        if (ids_file == NULL)
            die("cannot open the --ids file");
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    static conn conns[MAX_CONNS];
    static struct pollfd pfds[MAX_CONNS];
    for (int i = 0; i < opt.nconns; i++) {
        if (!open_conn(&conns[i], i)) {
            n_connect++;
            continue;
        }
        build_batch(&conns[i]);
        flush_out(&conns[i]);
    }
    int64_t start = now_ms();
    int64_t stop_sending = start + opt.duration_ms;
    int64_t hard_stop = stop_sending + GRACE_MS;
    for (;;) {
        if (phase_flag) {
            phase_flag = 0;
            end_phase();
        }
        int64_t now = now_ms();
        if (stop_flag && stop_sending > now) {
            stop_sending = now;
            hard_stop = now + GRACE_MS;
        }
        bool sending = now < stop_sending;
        int64_t wake = sending ? stop_sending : hard_stop;
        int n = 0;
        int idx[MAX_CONNS];
        for (int i = 0; i < opt.nconns; i++) {
            conn *c = &conns[i];
            if (!c->open)
                continue;
            /* Past the duration, idle connections end; busy ones finish
             * their batch. */
            if (!sending && c->outstanding == 0) {
                conn_end(c, false, false);
                continue;
            }
            if (c->next_send_ms > 0 && c->outstanding == 0) {
                if (now >= c->next_send_ms) {
                    c->next_send_ms = 0;
                    build_batch(c);
                    flush_out(c);
                    if (!c->open)
                        continue;
                } else if (c->next_send_ms < wake) {
                    wake = c->next_send_ms;
                }
            }
            pfds[n].fd = c->fd;
            pfds[n].events = POLLIN | (c->out_off < c->out_len ? POLLOUT : 0);
            idx[n++] = i;
        }
        if (n == 0 || now >= hard_stop)
            break;
        int64_t wait = wake - now;
        int r = poll(pfds, (nfds_t)n, (int)(wait > 100 ? 100 : wait < 0 ? 0 : wait));
        if (r < 0 && errno != EINTR)
            die("poll failed");
        for (int k = 0; r > 0 && k < n; k++) {
            conn *c = &conns[idx[k]];
            if (pfds[k].revents & POLLOUT)
                flush_out(c);
            if (c->open && (pfds[k].revents & (POLLIN | POLLHUP | POLLERR)))
                on_readable(c, now_ms() < stop_sending);
        }
    }
    uint64_t still_open = 0;
    for (int i = 0; i < opt.nconns; i++) {
        if (conns[i].open && conns[i].outstanding > 0)
            still_open++;
        conn_end(&conns[i], false, false);
        free(conns[i].in);
        free(conns[i].out);
        free(conns[i].prev);
    }
    if (phase_no > 0)
        end_phase();
    if (ids_file != NULL && fclose(ids_file) != 0)
        die("cannot write the --ids file");

    if (n_ids > 0) /* none received: id_offs is NULL, which qsort may not take */
        qsort(id_offs, n_ids, sizeof *id_offs, by_string);
    for (size_t i = 1; i < n_ids; i++) {
        if (strcmp(arena + id_offs[i - 1], arena + id_offs[i]) == 0 && n_dups++ < 5)
            fprintf(stderr, "loadclient: duplicate ID %s\n", arena + id_offs[i]);
    }
    free(id_offs);
    free(arena);

    print_counts("total:", &total);
    printf(
        "summary: requests=%llu ids=%llu s200=%llu s4xx=%llu s503=%llu retry503=%llu clock503=%llu "
        "sother=%llu malformed=%llu truncated=%llu invalid=%llu order=%llu dups=%llu connect=%llu "
        "partial=%llu cut=%llu unannounced=%llu resets=%llu eof=%llu hung=%llu pasthwm=%llu "
        "nohwm=%llu\n",
        (unsigned long long)n_requests, (unsigned long long)total.ids,
        (unsigned long long)total.s200, (unsigned long long)total.s4xx,
        (unsigned long long)total.s503, (unsigned long long)total.retry503,
        (unsigned long long)total.clock503, (unsigned long long)total.sother,
        (unsigned long long)n_malformed, (unsigned long long)n_truncated,
        (unsigned long long)n_invalid, (unsigned long long)n_order, (unsigned long long)n_dups,
        (unsigned long long)n_connect, (unsigned long long)n_partial, (unsigned long long)n_cut,
        (unsigned long long)n_unannounced, (unsigned long long)n_resets, (unsigned long long)n_eof,
        (unsigned long long)still_open, (unsigned long long)n_pasthwm, (unsigned long long)n_nohwm);
    bool bad = n_malformed || n_truncated || n_invalid || n_order || n_dups || n_connect ||
               still_open || n_pasthwm || n_nohwm;
    return bad ? 1 : 0;
}
