/*
 * faultclient.c - the fault harness's client (tests/faults/run.sh): one
 * keep-alive connection to one idmintd that asks for IDs again and again
 * through every fault, and records each ID with the time it was received;
 * or a poller of /v1/node that records the node and its lease.
 *
 *   faultclient load --http|--resp HOST:PORT --req REQUEST --inst I
 *                    --client C --kind sf|seg --out FILE [--interval-ms N]
 *       REQUEST is an HTTP path (/v1/ids/snowflake?count=50) or a RESP
 *       command line (NEXT snowflake 50). Each ID goes to FILE as a
 *       24-byte record (checker.h's fc_rec): the ID, the receive time (Unix
 *       µs, CLOCK_REALTIME), the connection (C * 65536 + the how-many-th
 *       connection of this client), I and the kind. A connection that
 *       fails or closes is opened again 100 ms later as a new connection
 *       (IDs are promised to increase per connection only); an error reply
 *       (503 while paused) is retried after 20 ms on the same connection.
 *   faultclient poll --http HOST:PORT --inst I --out FILE [--interval-ms N]
 *       GET /v1/node every N ms (default 100) and appends a line
 *       "RECV_US INST STATE NODE GENERATION LEASE_MS_LEFT" (- for null;
 *       STATE "none" when no answer came within a second).
 *
 * Runs until SIGTERM or SIGINT, then flushes FILE and exits 0; exits 2 on
 * a usage error, 1 when FILE cannot be written. A reply that is neither
 * valid HTTP/1.1 with a Content-Length nor RESP2 is counted (printed at
 * exit as malformed=N) and the connection opened again.
 */
#include "checker.h"
#include "reply.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define IN_CAP (1u << 20)

static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
    (void)sig;
    stopping = 1;
}

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !stopping) {
    }
}

static int parse_hostport(const char *text, struct sockaddr_in *sa)
{
    char host[64];
    const char *colon = strrchr(text, ':');
    if (colon == NULL || (size_t)(colon - text) >= sizeof host)
        return -1;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    char *end;
    errno = 0;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (errno != 0 || *end != '\0' || port == 0 || port > 65535)
        return -1;
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

/* A connected socket whose reads time out after timeout_ms (so that
 * SIGTERM is seen), or -1. */
static int dial(const struct sockaddr_in *sa, int timeout_ms)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (const struct sockaddr *)sa, sizeof *sa) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

typedef struct opts {
    int load;
    int resp;
    struct sockaddr_in sa;
    const char *req;
    const char *out;
    unsigned inst, client, kind;
    int interval_ms;
} opts;

/* Reads one whole reply into in; 1 with *r set, 0 when the connection
 * ended or failed, -1 for a malformed reply. give_up_ms > 0: 0 after that
 * long without a reply (the poller); else waits through timeouts until
 * SIGTERM. */
static int read_reply(int fd, const opts *o, char *in, size_t *have, fr_reply *r, long *used,
                      int give_up_ms)
{
    int64_t start = now_us();
    for (;;) {
        long n = o->resp ? fr_resp(in, *have, r) : fr_http(in, *have, r);
        if (n > 0) {
            *used = n;
            return 1;
        }
        if (n == FR_BAD || *have == IN_CAP)
            return -1;
        if (stopping)
            return 0;
        ssize_t got = recv(fd, in + *have, IN_CAP - *have, 0);
        if (got > 0) {
            *have += (size_t)got;
            continue;
        }
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            if (give_up_ms > 0 && now_us() - start > (int64_t)give_up_ms * 1000)
                return 0;
            continue;
        }
        return 0;
    }
}

static int run(const opts *o, FILE *out)
{
    static char in[IN_CAP];
    char req[512];
    int rn;
    if (o->resp)
        rn = snprintf(req, sizeof req, "%s\r\n", o->req);
    else
        rn = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: idmint\r\n\r\n",
                      o->load ? o->req : "/v1/node");
    if (rn < 0 || (size_t)rn >= sizeof req) {
        fprintf(stderr, "faultclient: --req is too long\n");
        return 2;
    }
    uint32_t serial = 0;
    uint64_t malformed = 0, ids = 0;
    int fd = -1;
    size_t have = 0;
    int64_t last_flush = now_us();
    while (!stopping) {
        if (fd < 0) {
            fd = dial(&o->sa, o->load ? 500 : 200);
            if (fd < 0) {
                if (!o->load)
                    fprintf(out, "%lld %u none - - -\n", (long long)now_us(), o->inst);
                sleep_ms(o->load ? 100 : o->interval_ms);
                continue;
            }
            serial++;
            have = 0;
        }
        fr_reply r;
        long used = 0;
        int rc = send_all(fd, req, (size_t)rn);
        if (rc == 0)
            rc = read_reply(fd, o, in, &have, &r, &used, o->load ? 0 : 1000);
        int64_t t = now_us();
        if (rc <= 0) {
            if (rc < 0)
                malformed++;
            close(fd);
            fd = -1;
            if (!o->load && !stopping)
                fprintf(out, "%lld %u none - - -\n", (long long)t, o->inst);
            if (!stopping)
                sleep_ms(o->load ? 100 : o->interval_ms);
            continue;
        }
        if (o->load && r.status == 200) {
            size_t pos = 0;
            uint64_t id;
            int k = fr_next_id(&r, o->resp, &pos, &id);
            for (; k == 1; k = fr_next_id(&r, o->resp, &pos, &id)) {
                fc_rec rec = {id, t, o->client * 65536u + serial, (uint16_t)o->inst,
                              (uint8_t)o->kind, (uint8_t)o->resp};
                if (fwrite(&rec, sizeof rec, 1, out) != 1) {
                    fprintf(stderr, "faultclient: cannot write %s: %s\n", o->out, strerror(errno));
                    return 1;
                }
                ids++;
            }
            if (k < 0)
                malformed++;
        } else if (!o->load) {
            fr_node nd;
            if (r.status == 200 && fr_node_json(r.body, r.body_len, &nd) == 0) {
                fprintf(out, "%lld %u %s %lld %llu %lld\n", (long long)t, o->inst, nd.state,
                        (long long)nd.node, (unsigned long long)nd.generation,
                        (long long)nd.lease_ms_left);
            } else {
                fprintf(out, "%lld %u none - - -\n", (long long)t, o->inst);
            }
            fflush(out);
        }
        memmove(in, in + used, have - (size_t)used);
        have -= (size_t)used;
        if (t - last_flush > 1000000) {
            fflush(out);
            last_flush = t;
        }
        if (o->load && r.status != 200)
            sleep_ms(20);
        else if (o->interval_ms > 0)
            sleep_ms(o->interval_ms);
    }
    if (fd >= 0)
        close(fd);
    fprintf(stderr, "faultclient %u/%u: ids=%llu connections=%u malformed=%llu\n", o->inst,
            o->client, (unsigned long long)ids, serial, (unsigned long long)malformed);
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: faultclient load --http|--resp HOST:PORT --req REQUEST --inst I "
                    "--client C --kind sf|seg --out FILE [--interval-ms N]\n"
                    "       faultclient poll --http HOST:PORT --inst I --out FILE "
                    "[--interval-ms N]\n");
    return 2;
}

static int number(const char *text, unsigned max, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v > max)
        return -1;
    *out = (unsigned)v;
    return 0;
}

int main(int argc, char **argv)
{
    opts o = {0};
    int have_addr = 0;
    unsigned iv = 0;
    if (argc < 2)
        return usage();
    if (strcmp(argv[1], "load") == 0)
        o.load = 1;
    else if (strcmp(argv[1], "poll") != 0)
        return usage();
    o.interval_ms = o.load ? 0 : 100;
    for (int i = 2; i < argc; i += 2) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v == NULL)
            return usage();
        if (strcmp(a, "--http") == 0 || strcmp(a, "--resp") == 0) {
            o.resp = a[2] == 'r';
            if (parse_hostport(v, &o.sa) != 0) {
                fprintf(stderr, "faultclient: %s: expected IPV4:PORT, got '%s'\n", a, v);
                return 2;
            }
            have_addr = 1;
        } else if (strcmp(a, "--req") == 0) {
            o.req = v;
        } else if (strcmp(a, "--out") == 0) {
            o.out = v;
        } else if (strcmp(a, "--kind") == 0) {
            if (strcmp(v, "sf") == 0)
                o.kind = FC_KIND_SF;
            else if (strcmp(v, "seg") == 0)
                o.kind = FC_KIND_SEG;
            else
                return usage();
        } else if (strcmp(a, "--inst") == 0 && number(v, 65535, &o.inst) == 0) {
        } else if (strcmp(a, "--client") == 0 && number(v, 65535, &o.client) == 0) {
        } else if (strcmp(a, "--interval-ms") == 0 && number(v, 60000, &iv) == 0) {
            o.interval_ms = (int)iv;
        } else {
            fprintf(stderr, "faultclient: bad option or value: %s %s\n", a, v);
            return usage();
        }
    }
    if (!have_addr || o.out == NULL || (o.load && (o.req == NULL || o.kind == 0)) ||
        (!o.load && o.resp))
        return usage();
    FILE *out = fopen(o.out, "ae");
    if (out == NULL) {
        fprintf(stderr, "faultclient: cannot open %s: %s\n", o.out, strerror(errno));
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    int rc = run(&o, out);
    if (fclose(out) != 0 && rc == 0) {
        fprintf(stderr, "faultclient: cannot write %s\n", o.out);
        rc = 1;
    }
    return rc;
}
