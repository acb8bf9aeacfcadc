/*
 * healthz_probe: the latency of an HTTP server's cheapest route while
 * something else loads it (bench/server.sh, bench/SERVER.md).
 *
 *   healthz_probe HOST PORT PATH INTERVAL_MS DURATION_MS [OUTFILE]
 *
 * PATH is an HTTP path (a GET of it), or resp:COMMAND for a RESP server:
 * COMMAND sent as an inline command (resp:NEXT snowflake: a client asking
 * for one ID at a time, bench/server.sh's flood section).
 *
 * One keep-alive connection; a request for PATH is sent every INTERVAL_MS
 * for DURATION_MS, on time whether or not the replies to the earlier ones
 * have arrived (HTTP/1.1 pipelining: the replies come back in order). A
 * probe's latency runs from when it was due to when its reply was read, so
 * a server that stalls for 400 ms is charged for every probe that fell due
 * during the stall, as a health checker polling it would see, rather than
 * for one slow probe (the coordinated omission that a send-wait-send loop
 * makes; wrk2's correction).
 *
 * Prints one line on stdout:
 *
 *   probes N p50_us A p99_us B max_us C late_max_us D
 *
 * p50/p99/max of the latencies (nearest rank), and how late the probe
 * itself sent its latest request (this process's own scheduling delay on a
 * busy machine: it is part of every latency). OUTFILE, when given, gets
 * every latency in µs, one a line, in the order sent.
 *
 * Every reply must be an "HTTP/1.x 200" response with a Content-Length (or
 * a RESP reply that is not an error: a simple string, an integer, a bulk
 * string or an array of those); no
 * reply for 60 s while one is due, a closed connection or another status
 * ends the run with exit status 1 and a message on stderr. Exit status 2:
 * a usage error. Left out: TLS, chunked replies, IPv6 (loopback
 * benchmarks only).
 */
#define _GNU_SOURCE /* ppoll */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REPLY_TIMEOUT_MS 60000
#define MAX_HEAD         16384

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A whole number in [lo, hi], or -1. */
static long long parse_num(const char *s, long long lo, long long hi)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < (unsigned long long)lo ||
        v > (unsigned long long)hi) {
        return -1;
    }
    return (long long)v;
}

static int send_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/*
 * Parses one complete response at the start of p[0, len): returns its
 * length, 0 when more bytes are needed, or -1 with a message in err.
 */
static long long parse_reply(char *p, size_t len, char *err, size_t err_cap)
{
    char *end = NULL;
    for (size_t i = 0; i + 4 <= len; i++) {
        if (memcmp(p + i, "\r\n\r\n", 4) == 0) {
            end = p + i;
            break;
        }
    }
    if (end == NULL) {
        if (len >= MAX_HEAD) {
            snprintf(err, err_cap, "a reply head over %d bytes", MAX_HEAD);
            return -1;
        }
        return 0;
    }
    size_t head_len = (size_t)(end - p) + 4;
    if (head_len < 14 || memcmp(p, "HTTP/1.", 7) != 0 || memcmp(p + 8, " 200 ", 5) != 0) {
        size_t eol = 0;
        while (eol < head_len && p[eol] != '\r') {
            eol++;
        }
        snprintf(err, err_cap, "status line \"%.*s\"", (int)eol, p);
        return -1;
    }
    long long clen = -1;
    char *line = p;
    for (;;) {
        while (line < end && *line != '\n') {
            line++;
        }
        if (line >= end) {
            break;
        }
        line++;
        if (end - line > 15 && strncasecmp(line, "Content-Length:", 15) == 0) {
            char num[24];
            size_t k = 0;
            char *v = line + 15;
            while (v < end && *v == ' ') {
                v++;
            }
            while (v < end && *v != '\r' && k + 1 < sizeof num) {
                num[k++] = *v++;
            }
            num[k] = '\0';
            clen = parse_num(num, 0, 1 << 30);
        }
    }
    if (clen < 0) {
        snprintf(err, err_cap, "a reply without a valid Content-Length");
        return -1;
    }
    if (len < head_len + (size_t)clen) {
        return 0;
    }
    return (long long)(head_len + (size_t)clen);
}

/*
 * The same for one RESP reply: its length, 0 when more bytes are needed,
 * or -1 with a message in err (an error reply, or another type).
 */
static long long parse_resp(const char *p, size_t len, char *err, size_t err_cap)
{
    const char *eol = len > 0 ? memchr(p, '\n', len) : NULL;
    if (eol == NULL && len >= MAX_HEAD) {
        snprintf(err, err_cap, "a RESP line over %d bytes", MAX_HEAD);
        return -1;
    }
    if (eol == NULL) {
        return 0;
    }
    size_t line = (size_t)(eol - p) + 1;
    char num[24];
    size_t k = line >= 3 ? line - 3 : 0;
    if (k >= sizeof num) {
        k = sizeof num - 1;
    }
    memcpy(num, p + 1, k);
    num[k] = '\0';
    switch (p[0]) {
    case '+':
    case ':':
        return (long long)line;
    case '$': {
        long long n = parse_num(num, 0, 1 << 20);
        if (n < 0) {
            break;
        }
        return len < line + (size_t)n + 2 ? 0 : (long long)(line + (size_t)n + 2);
    }
    case '*': {
        long long n = parse_num(num, 0, 1 << 20);
        if (n < 0) {
            break;
        }
        size_t used = line;
        for (long long i = 0; i < n; i++) {
            long long e = parse_resp(p + used, len - used, err, err_cap);
            if (e <= 0) {
                return e;
            }
            used += (size_t)e;
        }
        return (long long)used;
    }
    default:
        break;
    }
    snprintf(err, err_cap, "RESP reply \"%.*s\"", (int)(line > 2 ? line - 2 : 0), p);
    return -1;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a;
    int64_t y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least p% of the values at or below it. */
static int64_t rank(const int64_t *v, size_t n, int pct)
{
    size_t k = (n * (size_t)pct + 99) / 100;
    return v[k > 0 ? k - 1 : 0];
}

int main(int argc, char **argv)
{
    if (argc != 6 && argc != 7) {
        fprintf(stderr, "usage: healthz_probe HOST PORT PATH INTERVAL_MS DURATION_MS [OUTFILE]\n");
        return 2;
    }
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    long long port = parse_num(argv[2], 1, 65535);
    long long interval_ms = parse_num(argv[4], 1, 60000);
    long long duration_ms = parse_num(argv[5], 1, 3600000);
    if (inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1 || port < 0 || interval_ms < 0 ||
        duration_ms < 0 || (argv[3][0] != '/' && strncmp(argv[3], "resp:", 5) != 0) ||
        strlen(argv[3]) > 1024) {
        fprintf(stderr, "healthz_probe: HOST must be an IPv4 address, PORT 1-65535, PATH start "
                        "with '/' or 'resp:', INTERVAL_MS 1-60000, DURATION_MS 1-3600000\n");
        return 2;
    }
    bool resp = argv[3][0] != '/';
    sa.sin_port = htons((uint16_t)port);

    size_t cap = (size_t)(duration_ms / interval_ms) + 1;
    int64_t *lat = calloc(cap, sizeof *lat);
    char req[1200];
    int req_len =
        resp ? snprintf(req, sizeof req, "%s\r\n", argv[3] + 5)
             : snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", argv[3], argv[1]);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (lat == NULL || fd < 0) {
        fprintf(stderr, "healthz_probe: %s\n", lat == NULL ? "out of memory" : strerror(errno));
        return 1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        fprintf(stderr, "healthz_probe: connect %s:%lld: %s\n", argv[1], port, strerror(errno));
        return 1;
    }

    /* Sending on time matters more than reading at once: a probe is sent
     * when due, then whatever replies have arrived are read, until the next
     * one is due. */
    static char buf[MAX_HEAD * 4];
    size_t have = 0;
    int64_t interval_ns = interval_ms * 1000000;
    int64_t t0 = now_ns() + interval_ns;
    int64_t late_max = 0;
    int64_t progress = t0; /* the last reply, or the start */
    size_t sent = 0;
    size_t n = 0;
    char err[256];
    while (n < cap) {
        int64_t now = now_ns();
        if (sent < cap && now >= t0 + (int64_t)sent * interval_ns) {
            if (n == sent) {
                progress = now; /* the reply timeout runs from here */
            }
            if (send_all(fd, req, (size_t)req_len) != 0) {
                fprintf(stderr, "healthz_probe: probe %zu: send: %s\n", sent + 1, strerror(errno));
                return 1;
            }
            if (now - (t0 + (int64_t)sent * interval_ns) > late_max) {
                late_max = now - (t0 + (int64_t)sent * interval_ns);
            }
            sent++;
            continue;
        }
        int64_t wait_ns = sent < cap ? t0 + (int64_t)sent * interval_ns - now
                                     : progress + (int64_t)REPLY_TIMEOUT_MS * 1000000 - now;
        if (n < sent && now - progress > (int64_t)REPLY_TIMEOUT_MS * 1000000) {
            fprintf(stderr, "healthz_probe: probe %zu: no reply within %d ms\n", n + 1,
                    REPLY_TIMEOUT_MS);
            return 1;
        }
        if (wait_ns < 0) {
            wait_ns = 0;
        }
        struct timespec ts = {.tv_sec = (time_t)(wait_ns / 1000000000),
                              .tv_nsec = (long)(wait_ns % 1000000000)};
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int pr = ppoll(&pfd, 1, &ts, NULL);
        if (pr < 0 && errno != EINTR) {
            fprintf(stderr, "healthz_probe: ppoll: %s\n", strerror(errno));
            return 1;
        }
        if (pr <= 0) {
            continue;
        }
        ssize_t r = recv(fd, buf + have, sizeof buf - have, 0);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            fprintf(stderr, "healthz_probe: probe %zu: %s\n", n + 1,
                    r == 0 ? "the server closed the connection" : strerror(errno));
            return 1;
        }
        int64_t done = now_ns();
        have += (size_t)r;
        size_t used = 0;
        for (;;) {
            long long len = resp ? parse_resp(buf + used, have - used, err, sizeof err)
                                 : parse_reply(buf + used, have - used, err, sizeof err);
            if (len < 0) {
                fprintf(stderr, "healthz_probe: probe %zu: %s\n", n + 1, err);
                return 1;
            }
            if (len == 0) {
                break;
            }
            if (n >= sent) {
                fprintf(stderr, "healthz_probe: a reply to no request\n");
                return 1;
            }
            lat[n] = done - (t0 + (int64_t)n * interval_ns);
            n++;
            progress = done;
            used += (size_t)len;
        }
        memmove(buf, buf + used, have - used);
        have -= used;
        if (have == sizeof buf) {
            fprintf(stderr, "healthz_probe: probe %zu: a reply over %zu bytes\n", n + 1,
                    sizeof buf);
            return 1;
        }
    }
    close(fd);

    if (argc == 7) {
        FILE *f = fopen(argv[6], "w");
        if (f == NULL) {
            fprintf(stderr, "healthz_probe: %s: %s\n", argv[6], strerror(errno));
            return 1;
        }
        for (size_t i = 0; i < n; i++) {
            fprintf(f, "%lld\n", (long long)(lat[i] / 1000));
        }
        if (fclose(f) != 0) {
            fprintf(stderr, "healthz_probe: %s: %s\n", argv[6], strerror(errno));
            return 1;
        }
    }
    qsort(lat, n, sizeof *lat, cmp_i64);
    printf("probes %zu p50_us %lld p99_us %lld max_us %lld late_max_us %lld\n", n,
           (long long)(rank(lat, n, 50) / 1000), (long long)(rank(lat, n, 99) / 1000),
           (long long)(lat[n - 1] / 1000), (long long)(late_max / 1000));
    free(lat);
    return 0;
}
