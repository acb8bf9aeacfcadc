/*
 * backend_test.c - the coordinators for several hosts (etcd.c, zk.c)
 * against a real server, through the public API of idmint_coord.h only.
 * tests/coord/test_backends.sh starts the servers and runs it.
 *
 *   backend_test URL [TEST_NAME]
 *       every test (or one) against URL, e.g.
 *       etcd://127.0.0.1:PORT/idmint-test/RANDOM or zk://...; each test
 *       works under a path of its own below URL's.
 *   backend_test URL cut PROXY_PID DIRECT_URL
 *       URL leads through tests/coord/silentproxy (PID PROXY_PID) to the
 *       server that DIRECT_URL reaches directly: a lease claimed through
 *       the proxy, then the network cut (SIGUSR1): keepalive, record_mark
 *       and a new claim fail with IDMC_ERROR within a bound instead of
 *       hanging, and the hold stays; reopened (SIGUSR2): the lease is
 *       confirmed again and a mark can be written.
 *   backend_test URL restart [TTL_MS]
 *       a lease (TTL_MS, default 8000) held while the server restarts, driven over stdin by
 *       test_backends.sh: it prints "held GEN"; on the line "down" (the
 *       server is stopped) it tries a keepalive and prints "down RC MS";
 *       on "up" (the server runs again) it keeps trying until the lease is
 *       confirmed or lost, and checks that the node has one holder at
 *       most: confirmed, a second claim of it is IDMC_BUSY; lost, the old
 *       lease can write nothing.
 *
 * Lines starting with "# " report what was measured (times of takeovers,
 * of failing calls); they are not judged beyond the bounds asserted. The
 * exit status is non-zero when any test failed.
 */
#include "idmint_coord.h"
#include "testlib.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef BT_HAVE_ZK
#include <zookeeper/zookeeper.h>
#endif

/* A call that fails for want of a server must give up within this (ms).
 * A bound on a hang, not a performance figure. */
#define HANG_BOUND_MS 10000

static const char *base_url; /* argv[1] */
static char scheme[16];      /* "etcd" or "zk" */
static char servers[1024];   /* HOST:PORT[,HOST:PORT...] */
static char base_path[512];  /* /PATH */
static bool is_zk;
static pid_t cut_proxy_pid;        /* cut: silentproxy's PID */
static const char *cut_direct_url; /* cut: the same path, not through the proxy */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Splits base_url into scheme, servers and path; 0 or -1. */
static int split_url(const char *url)
{
    const char *sep = strstr(url, "://");
    if (sep == NULL || (size_t)(sep - url) >= sizeof scheme)
        return -1;
    memcpy(scheme, url, (size_t)(sep - url));
    scheme[sep - url] = '\0';
    const char *hosts = sep + 3;
    const char *slash = strchr(hosts, '/');
    if (slash == NULL || (size_t)(slash - hosts) >= sizeof servers ||
        strlen(slash) >= sizeof base_path)
        return -1;
    memcpy(servers, hosts, (size_t)(slash - hosts));
    servers[slash - hosts] = '\0';
    snprintf(base_path, sizeof base_path, "%s", slash);
    is_zk = strcmp(scheme, "zk") == 0;
    return 0;
}

/* The URL of the test's own ID space: base_url + "/" + sub. */
static void sub_url(char *dst, size_t cap, const char *sub)
{
    snprintf(dst, cap, "%s/%s", base_url, sub);
}

static idmc_coord *open_url(const char *url, int64_t ttl_ms)
{
    idmc_coord *c = NULL;
    idmc_error err;
    int rc = idmc_open(url, ttl_ms, &c, &err);
    if (rc != 0) {
        TEST_REPORT_("idmc_open %s: rc %d (%s)", url, rc, err.msg);
        return NULL;
    }
    return c;
}

static idmc_coord *open_sub(const char *sub, int64_t ttl_ms)
{
    char url[1024];
    sub_url(url, sizeof url, sub);
    return open_url(url, ttl_ms);
}

/* Claims lo..hi expecting want_rc; err gets the result's detail. */
static idmc_lease *claim(idmc_coord *c, uint64_t lo, uint64_t hi, const char *holder, int want_rc,
                         idmc_error *err)
{
    idmc_lease *l = NULL;
    int rc = idmc_claim(c, lo, hi, holder, &l, err);
    if (rc != want_rc || err->code != rc) {
        TEST_REPORT_("claim %llu..%llu: rc %d (record %d), expected %d (%s)",
                     (unsigned long long)lo, (unsigned long long)hi, rc, err->code, want_rc,
                     err->msg);
    }
    if (rc == 0 && l == NULL)
        TEST_REPORT_("claim returned 0 without a lease");
    if (rc != 0 && l != NULL)
        TEST_REPORT_("claim returned %d with a lease", rc);
    return rc == 0 ? l : NULL;
}

static bool is_decimal(const char *s)
{
    if (s == NULL || *s == '\0' || strlen(s) > 20)
        return false;
    for (; *s != '\0'; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

/* a < b as decimal numbers (both is_decimal). */
static bool dec_less(const char *a, const char *b)
{
    return strtoull(a, NULL, 10) < strtoull(b, NULL, 10);
}

/* A message names a number when the number appears in it as a whole
 * (not inside a longer number). */
static bool names_number(const char *msg, uint64_t v)
{
    char want[24];
    snprintf(want, sizeof want, "%llu", (unsigned long long)v);
    size_t n = strlen(want);
    for (const char *p = strstr(msg, want); p != NULL; p = strstr(p + 1, want)) {
        bool left = p == msg || p[-1] < '0' || p[-1] > '9';
        bool right = p[n] < '0' || p[n] > '9';
        if (left && right)
            return true;
    }
    return false;
}

/* ---- idmc_list into an array ------------------------------------------- */

struct seen {
    uint64_t node;
    bool held;
    char generation[64];
    char holder[256];
    bool has_gen, has_holder;
    int64_t mark_ms;
    int64_t ttl_ms_left;
};

struct seen_list {
    struct seen s[16];
    int n;
    bool overflow;
};

static void collect(void *ctx, const idmc_slot_info *slot)
{
    struct seen_list *sl = ctx;
    if (sl->n == 16) {
        sl->overflow = true;
        return;
    }
    struct seen *s = &sl->s[sl->n++];
    memset(s, 0, sizeof *s);
    s->node = slot->node;
    s->held = slot->held;
    s->has_gen = slot->generation != NULL;
    s->has_holder = slot->holder != NULL;
    if (slot->generation != NULL)
        snprintf(s->generation, sizeof s->generation, "%s", slot->generation);
    if (slot->holder != NULL)
        snprintf(s->holder, sizeof s->holder, "%s", slot->holder);
    s->mark_ms = slot->mark_ms;
    s->ttl_ms_left = slot->ttl_ms_left;
}

static const struct seen *find_seen(const struct seen_list *sl, uint64_t node)
{
    for (int i = 0; i < sl->n; i++)
        if (sl->s[i].node == node)
            return &sl->s[i];
    return NULL;
}

/* ---- the tests ---------------------------------------------------------- */

static void test_claim_lowest_free_then_busy(void)
{
    idmc_coord *c = open_sub("lowest", 5000);
    ASSERT_TRUE(c != NULL);
    idmc_error err;
    idmc_lease *a = claim(c, 0, 1, "pid=1 host=a", 0, &err);
    idmc_lease *b = claim(c, 0, 1, "pid=2 host=b", 0, &err);
    ASSERT_TRUE(a != NULL && b != NULL);
    ASSERT_EQ_U64(idmc_lease_node(a), 0);
    ASSERT_EQ_U64(idmc_lease_node(b), 1);
    ASSERT_TRUE(claim(c, 0, 1, "pid=3 host=c", IDMC_BUSY, &err) == NULL);
    ASSERT_TRUE(names_number(err.msg, 0) && names_number(err.msg, 1));
    /* The lowest free again once node 0 is given up. */
    idmc_release(a);
    idmc_lease *a2 = claim(c, 0, 1, "pid=4 host=d", 0, &err);
    ASSERT_TRUE(a2 != NULL);
    ASSERT_EQ_U64(idmc_lease_node(a2), 0);
    idmc_release(a2);
    idmc_release(b);
    idmc_close(c);
}

static void test_busy_names_a_range_not_starting_at_zero(void)
{
    idmc_coord *c = open_sub("range", 5000);
    ASSERT_TRUE(c != NULL);
    idmc_error err;
    idmc_lease *a = claim(c, 40, 41, "pid=1 host=a", 0, &err);
    idmc_lease *b = claim(c, 40, 41, "pid=2 host=b", 0, &err);
    ASSERT_TRUE(a != NULL && b != NULL);
    ASSERT_EQ_U64(idmc_lease_node(a), 40);
    ASSERT_EQ_U64(idmc_lease_node(b), 41);
    ASSERT_TRUE(claim(c, 40, 41, "pid=3 host=c", IDMC_BUSY, &err) == NULL);
    ASSERT_TRUE(names_number(err.msg, 40) && names_number(err.msg, 41));
    /* A wider range skips the held nodes. */
    idmc_lease *d = claim(c, 40, 50, "pid=5 host=e", 0, &err);
    ASSERT_TRUE(d != NULL);
    ASSERT_EQ_U64(idmc_lease_node(d), 42);
    idmc_release(d);
    idmc_release(a);
    idmc_release(b);
    idmc_close(c);
}

static void test_exact_claim_of_held_node_names_holder(void)
{
    idmc_coord *c = open_sub("exact", 5000);
    idmc_coord *other = open_sub("exact", 5000);
    ASSERT_TRUE(c != NULL && other != NULL);
    idmc_error err;
    char holder[128];
    snprintf(holder, sizeof holder, "pid=%d host=backend-test since=%lld", (int)getpid(),
             (long long)now_ms());
    idmc_lease *a = claim(c, 3, 3, holder, 0, &err);
    ASSERT_TRUE(a != NULL);
    ASSERT_EQ_U64(idmc_lease_node(a), 3);
    /* Another coordinator (another process, as far as the service knows). */
    ASSERT_TRUE(claim(other, 3, 3, "pid=2 host=other", IDMC_BUSY, &err) == NULL);
    ASSERT_TRUE(strstr(err.msg, holder) != NULL);
    ASSERT_TRUE(names_number(err.msg, 3));
    /* The same coordinator is refused too. */
    ASSERT_TRUE(claim(c, 3, 3, "pid=3 host=again", IDMC_BUSY, &err) == NULL);
    ASSERT_TRUE(strstr(err.msg, holder) != NULL);
    /* A neighbour is free. */
    idmc_lease *b = claim(other, 4, 4, "pid=2 host=other", 0, &err);
    ASSERT_TRUE(b != NULL);
    ASSERT_EQ_U64(idmc_lease_node(b), 4);
    idmc_release(b);
    idmc_release(a);
    /* Released: the exact claim succeeds. */
    idmc_lease *a2 = claim(other, 3, 3, "pid=2 host=other", 0, &err);
    ASSERT_TRUE(a2 != NULL);
    idmc_release(a2);
    idmc_close(other);
    idmc_close(c);
}

static void test_generations_decimal_distinct_increasing(void)
{
    idmc_coord *c = open_sub("gen", 5000);
    ASSERT_TRUE(c != NULL);
    idmc_error err;
    char gen[4][64];
    /* Node 0 three times, then node 1: every claim a new generation. */
    const uint64_t nodes[4] = {0, 0, 1, 0};
    for (int i = 0; i < 4; i++) {
        idmc_lease *l = claim(c, nodes[i], nodes[i], "pid=1 host=gen", 0, &err);
        ASSERT_TRUE(l != NULL);
        snprintf(gen[i], sizeof gen[i], "%s", idmc_lease_generation(l));
        idmc_release(l);
        ASSERT_TRUE(is_decimal(gen[i]));
        if (i > 0 && !dec_less(gen[i - 1], gen[i]))
            TEST_FAIL_("generation %s after %s: not increasing", gen[i], gen[i - 1]);
    }
    /* Two leases held at once differ as well. */
    idmc_lease *a = claim(c, 0, 9, "pid=1 host=gen", 0, &err);
    idmc_lease *b = claim(c, 0, 9, "pid=1 host=gen", 0, &err);
    ASSERT_TRUE(a != NULL && b != NULL);
    ASSERT_TRUE(strcmp(idmc_lease_generation(a), idmc_lease_generation(b)) != 0);
    ASSERT_TRUE(dec_less(gen[3], idmc_lease_generation(a)));
    idmc_release(a);
    idmc_release(b);
    idmc_close(c);
}

static void test_mark_carried_raised_and_shrunk(void)
{
    idmc_coord *c = open_sub("mark", 5000);
    ASSERT_TRUE(c != NULL);
    idmc_error err;
    idmc_lease *l = claim(c, 5, 5, "pid=1 host=mark", 0, &err);
    ASSERT_TRUE(l != NULL);
    ASSERT_EQ_INT(idmc_lease_mark_ms(l), 0); /* none recorded yet */
    ASSERT_EQ_INT(idmc_record_mark(l, 1000, &err), 0);
    idmc_release(l);

    /* The next holder resumes above it. */
    l = claim(c, 5, 5, "pid=2 host=mark", 0, &err);
    ASSERT_TRUE(l != NULL);
    ASSERT_TRUE(idmc_lease_mark_ms(l) >= 1000);
    /* Recording a lower mark never lowers it; a higher one raises it. */
    ASSERT_EQ_INT(idmc_record_mark(l, 500, &err), 0);
    idmc_release(l);
    l = claim(c, 5, 5, "pid=3 host=mark", 0, &err);
    ASSERT_TRUE(l != NULL);
    ASSERT_TRUE(idmc_lease_mark_ms(l) >= 1000);
    ASSERT_EQ_INT(idmc_record_mark(l, 3000, &err), 0);
    ASSERT_EQ_INT(idmc_record_mark(l, 2000, &err), 0);
    idmc_release(l);
    l = claim(c, 5, 5, "pid=4 host=mark", 0, &err);
    ASSERT_TRUE(l != NULL);
    ASSERT_TRUE(idmc_lease_mark_ms(l) >= 3000);
    /* At a clean stop the mark is lowered to what was used. */
    ASSERT_EQ_INT(idmc_record_mark(l, 4000, &err), 0);
    ASSERT_EQ_INT(idmc_shrink_mark(l, 3500, &err), 0);
    idmc_release(l);
    l = claim(c, 5, 5, "pid=5 host=mark", 0, &err);
    ASSERT_TRUE(l != NULL);
    ASSERT_EQ_INT(idmc_lease_mark_ms(l), 3500);
    idmc_release(l);
    /* The marks are per node: node 6 has none. */
    l = claim(c, 6, 6, "pid=6 host=mark", 0, &err);
    ASSERT_TRUE(l != NULL);
    ASSERT_EQ_INT(idmc_lease_mark_ms(l), 0);
    idmc_release(l);
    idmc_close(c);
}

static void test_keepalive_reports_ttl(void)
{
    idmc_coord *c = open_sub("keepalive", 3000);
    ASSERT_TRUE(c != NULL);
    idmc_error err;
    idmc_lease *l = claim(c, 0, 0, "pid=1 host=ka", 0, &err);
    ASSERT_TRUE(l != NULL);
    /* A ZooKeeper server may negotiate the session timeout (within its
     * bounds: tickTime 500 allows 1 s to 60 s); etcd grants the TTL asked. */
    int64_t floor_ms = is_zk ? 1000 : 2000;
    ASSERT_TRUE(idmc_lease_ttl_ms(l) >= floor_ms);
    for (int i = 0; i < 3; i++) {
        int64_t ttl = -12345;
        int rc = idmc_keepalive(l, &ttl, &err);
        if (rc != 0)
            TEST_FAIL_("keepalive %d: rc %d (%s)", i, rc, err.msg);
        if (ttl < floor_ms || ttl > 60000)
            TEST_FAIL_("keepalive %d: ttl %lld ms", i, (long long)ttl);
        sleep_ms(500);
    }
    /* Kept alive past its TTL: still held. */
    int64_t ttl = 0;
    for (int i = 0; i < 6; i++) {
        ASSERT_EQ_INT(idmc_keepalive(l, &ttl, &err), 0);
        sleep_ms(600);
    }
    ASSERT_EQ_INT(idmc_keepalive(l, &ttl, &err), 0);
    ASSERT_TRUE(claim(c, 0, 0, "pid=2 host=ka", IDMC_BUSY, &err) == NULL);
    ASSERT_EQ_INT(idmc_record_mark(l, 1234, &err), 0);
    idmc_release(l);
    idmc_close(c);
}

/* Reads one line from fd into buf within timeout_ms; 0 or -1 (timeout,
 * end of file, error). */
static int read_line(int fd, char *buf, size_t cap, int64_t timeout_ms)
{
    size_t len = 0;
    int64_t deadline = now_ms() + timeout_ms;
    while (len + 1 < cap) {
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return -1;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int n = poll(&p, 1, (int)left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        ssize_t k = read(fd, buf + len, 1);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        if (buf[len] == '\n') {
            buf[len] = '\0';
            return 0;
        }
        len++;
    }
    return -1;
}

/* Retries a call while it fails with IDMC_ERROR (the service not reached
 * yet), up to bound_ms; the last result. */
#define RETRY_ON_ERROR(rc, call, bound_ms)                                                         \
    do {                                                                                           \
        int64_t until_ = now_ms() + (bound_ms);                                                    \
        for (;;) {                                                                                 \
            (rc) = (call);                                                                         \
            if ((rc) != IDMC_ERROR || now_ms() >= until_)                                          \
                break;                                                                             \
            sleep_ms(200);                                                                         \
        }                                                                                          \
    } while (0)

/* The child of test_expired_lease_is_fenced: holds nodes 7 and 8 with
 * marks 5000, says "held GEN7 GEN8", waits (stopped by the parent, so that
 * nothing refreshes its leases: not even ZooKeeper's client threads) for a
 * byte, then tries to write with the leases the parent has taken over and
 * reports the results. Never returns. */
static void expiry_child(const char *url, int64_t ttl_ms, int wfd, int rfd)
{
    idmc_error err;
    idmc_coord *c = NULL;
    idmc_lease *l7 = NULL, *l8 = NULL;
    int rc = idmc_open(url, ttl_ms, &c, &err);
    if (rc == 0)
        rc = idmc_claim(c, 7, 7, "pid=child host=old", &l7, &err);
    if (rc == 0)
        rc = idmc_claim(c, 8, 8, "pid=child host=old", &l8, &err);
    if (rc == 0)
        rc = idmc_record_mark(l7, 5000, &err);
    if (rc == 0)
        rc = idmc_record_mark(l8, 5000, &err);
    if (rc != 0) {
        dprintf(wfd, "error %d %s\n", rc, err.msg);
        exit(1);
    }
    dprintf(wfd, "held %s %s\n", idmc_lease_generation(l7), idmc_lease_generation(l8));
    char b;
    if (read(rfd, &b, 1) != 1)
        exit(1);
    /* The first calls on each lease reach the backend (no IDMC_LOST has
     * been seen yet): the fencing of the write itself is what is tried. */
    int64_t t0 = now_ms();
    int rc7, rc8, ka7, ka8;
    RETRY_ON_ERROR(rc7, idmc_record_mark(l7, 9000, &err), 10000);
    dprintf(wfd, "record %d %lld %s\n", rc7, (long long)(now_ms() - t0), err.msg);
    t0 = now_ms();
    RETRY_ON_ERROR(rc8, idmc_shrink_mark(l8, 1, &err), 10000);
    dprintf(wfd, "shrink %d %lld %s\n", rc8, (long long)(now_ms() - t0), err.msg);
    int64_t ttl = 0;
    RETRY_ON_ERROR(ka7, idmc_keepalive(l7, &ttl, &err), 10000);
    RETRY_ON_ERROR(ka8, idmc_keepalive(l8, &ttl, &err), 10000);
    dprintf(wfd, "keepalive %d %d\n", ka7, ka8);
    idmc_release(l7);
    idmc_release(l8);
    idmc_close(c);
    exit(0);
}

static void test_expired_lease_is_fenced(void)
{
    char url[1024], line[512];
    idmc_error err;
    sub_url(url, sizeof url, "expiry");
    int up[2], down[2];
    ASSERT_TRUE(pipe(up) == 0 && pipe(down) == 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0) {
        close(up[0]);
        close(down[1]);
        expiry_child(url, 2000, up[1], down[0]);
    }
    close(up[1]);
    close(down[0]);
    int got_held = read_line(up[0], line, sizeof line, 15000);
    char old7[64] = "", old8[64] = "";
    bool held = got_held == 0 && sscanf(line, "held %63s %63s", old7, old8) == 2;
    /* Stopped, the old holder refreshes nothing (ZooKeeper's client pings
     * from threads of its own). */
    kill(pid, SIGSTOP);
    int64_t t_stop = now_ms();
    idmc_coord *c = open_url(url, 2000);
    idmc_lease *n7 = NULL, *n8 = NULL;
    int rc = IDMC_BUSY;
    if (held && c != NULL) {
        while (now_ms() - t_stop < 15000) {
            if (n7 == NULL) {
                rc = idmc_claim(c, 7, 7, "pid=parent host=new", &n7, &err);
                if (rc != 0 && rc != IDMC_BUSY)
                    TEST_REPORT_("claim 7: rc %d (%s)", rc, err.msg);
            }
            if (n8 == NULL) {
                rc = idmc_claim(c, 8, 8, "pid=parent host=new", &n8, &err);
                if (rc != 0 && rc != IDMC_BUSY)
                    TEST_REPORT_("claim 8: rc %d (%s)", rc, err.msg);
            }
            if (n7 != NULL && n8 != NULL)
                break;
            sleep_ms(100);
        }
    }
    int64_t t_taken = now_ms();
    if (n7 != NULL && n8 != NULL)
        printf("# %s: an unrefreshed lease of 2000 ms was taken over %lld ms after its holder "
               "stopped\n",
               scheme, (long long)(t_taken - t_stop));
    /* The new holder of 7 writes its mark; 8's stays the old holder's. */
    int rc_new = n7 != NULL ? idmc_record_mark(n7, 6000, &err) : -1;
    kill(pid, SIGCONT);
    if (write(down[1], "g", 1) != 1)
        TEST_REPORT_("cannot wake the child");
    char rec[512] = "", shr[512] = "", ka[512] = "";
    int r1 = read_line(up[0], rec, sizeof rec, 30000);
    int r2 = r1 == 0 ? read_line(up[0], shr, sizeof shr, 30000) : -1;
    int r3 = r2 == 0 ? read_line(up[0], ka, sizeof ka, 30000) : -1;
    int status = 0;
    if (r3 != 0)
        kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    close(up[0]);
    close(down[1]);
    if (!held)
        TEST_FAIL_("the child did not claim nodes 7 and 8: '%s'", got_held == 0 ? line : "");
    ASSERT_TRUE(c != NULL);
    if (n7 == NULL || n8 == NULL)
        TEST_FAIL_("nodes 7 and 8 not taken over 15 s after their holder stopped (last rc %d: %s)",
                   rc, err.msg);
    ASSERT_TRUE(dec_less(old7, idmc_lease_generation(n7)));
    ASSERT_TRUE(dec_less(old8, idmc_lease_generation(n8)));
    ASSERT_TRUE(idmc_lease_mark_ms(n7) >= 5000);
    ASSERT_TRUE(idmc_lease_mark_ms(n8) >= 5000);
    ASSERT_EQ_INT(rc_new, 0);
    printf("# %s: the old holder: %s; %s; %s\n", scheme, rec, shr, ka);
    int rc7 = -1, rc8 = -1, ka7 = -1, ka8 = -1;
    ASSERT_TRUE(sscanf(rec, "record %d", &rc7) == 1);
    ASSERT_TRUE(sscanf(shr, "shrink %d", &rc8) == 1);
    ASSERT_TRUE(sscanf(ka, "keepalive %d %d", &ka7, &ka8) == 2);
    ASSERT_EQ_INT(rc7, IDMC_LOST);
    ASSERT_EQ_INT(rc8, IDMC_LOST);
    ASSERT_EQ_INT(ka7, IDMC_LOST);
    ASSERT_EQ_INT(ka8, IDMC_LOST);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* The old holder's writes changed nothing: 7 has the new holder's
     * mark, 8 the old one's last good write; both held by the new leases. */
    struct seen_list sl = {0};
    ASSERT_TRUE(idmc_list(c, collect, &sl, &err) >= 2);
    const struct seen *s7 = find_seen(&sl, 7), *s8 = find_seen(&sl, 8);
    ASSERT_TRUE(s7 != NULL && s8 != NULL);
    ASSERT_EQ_INT(s7->mark_ms, 6000);
    ASSERT_EQ_INT(s8->mark_ms, 5000);
    ASSERT_TRUE(s7->held && s8->held);
    ASSERT_EQ_STR(s7->generation, idmc_lease_generation(n7));
    ASSERT_EQ_STR(s8->generation, idmc_lease_generation(n8));
    ASSERT_EQ_STR(s7->holder, "pid=parent host=new");
    idmc_release(n7);
    idmc_release(n8);
    idmc_close(c);
}

static void test_list_reports_holds_and_marks(void)
{
    idmc_coord *c = open_sub("list", 5000);
    ASSERT_TRUE(c != NULL);
    idmc_error err;
    struct seen_list sl = {0};
    ASSERT_EQ_INT(idmc_list(c, collect, &sl, &err), 0); /* nothing yet */
    idmc_lease *a = claim(c, 0, 0, "pid=10 host=list-a", 0, &err);
    idmc_lease *b = claim(c, 2, 2, "pid=12 host=list-b", 0, &err);
    idmc_lease *d = claim(c, 11, 11, "pid=13 host=list-d", 0, &err);
    ASSERT_TRUE(a != NULL && b != NULL && d != NULL);
    ASSERT_EQ_INT(idmc_record_mark(a, 1111, &err), 0);
    ASSERT_EQ_INT(idmc_record_mark(b, 2222, &err), 0);
    char gen_a[64];
    snprintf(gen_a, sizeof gen_a, "%s", idmc_lease_generation(a));
    idmc_release(b); /* its mark stays */

    memset(&sl, 0, sizeof sl);
    int n = idmc_list(c, collect, &sl, &err);
    if (n != 3)
        TEST_FAIL_("idmc_list: %d (%s), expected 3 slots", n, err.msg);
    ASSERT_EQ_INT(sl.n, 3);
    /* In node order: 0 (held, marked), 2 (marked), 11 (held, no mark). */
    ASSERT_EQ_U64(sl.s[0].node, 0);
    ASSERT_EQ_U64(sl.s[1].node, 2);
    ASSERT_EQ_U64(sl.s[2].node, 11);
    const struct seen *s0 = &sl.s[0], *s2 = &sl.s[1], *s11 = &sl.s[2];
    ASSERT_TRUE(s0->held);
    ASSERT_EQ_STR(s0->holder, "pid=10 host=list-a");
    ASSERT_EQ_STR(s0->generation, gen_a);
    ASSERT_EQ_INT(s0->mark_ms, 1111);
    ASSERT_TRUE(s0->ttl_ms_left == -1 || (s0->ttl_ms_left > 0 && s0->ttl_ms_left <= 60000));
    ASSERT_TRUE(!s2->held);
    ASSERT_TRUE(!s2->has_gen && !s2->has_holder);
    ASSERT_EQ_INT(s2->mark_ms, 2222);
    ASSERT_EQ_INT(s2->ttl_ms_left, -1);
    ASSERT_TRUE(s11->held);
    ASSERT_EQ_STR(s11->holder, "pid=13 host=list-d");
    ASSERT_EQ_STR(s11->generation, idmc_lease_generation(d));
    ASSERT_EQ_INT(s11->mark_ms, 0);

    /* Another coordinator on the same path sees the same. */
    idmc_coord *other = open_sub("list", 5000);
    ASSERT_TRUE(other != NULL);
    struct seen_list s2l = {0};
    ASSERT_EQ_INT(idmc_list(other, collect, &s2l, &err), 3);
    ASSERT_EQ_STR(s2l.s[0].generation, gen_a);
    idmc_close(other);
    /* A different path is a different ID space. */
    idmc_coord *elsewhere = open_sub("list-elsewhere", 5000);
    ASSERT_TRUE(elsewhere != NULL);
    ASSERT_EQ_INT(idmc_list(elsewhere, collect, &s2l, &err), 0);
    idmc_close(elsewhere);
    idmc_release(a);
    idmc_release(d);
    idmc_close(c);
}

/* N processes claim from a range of N at the same moment: each gets a
 * node of its own. */
static void test_racing_claims_get_distinct_nodes(void)
{
    enum { N = 4 };
    char url[1024];
    idmc_error err;
    sub_url(url, sizeof url, "race");
    int up[2], go[2];
    ASSERT_TRUE(pipe(up) == 0 && pipe(go) == 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pids[N];
    int forked = 0;
    for (int i = 0; i < N; i++) {
        pids[i] = fork();
        if (pids[i] < 0)
            break;
        forked++;
        if (pids[i] == 0) {
            close(up[0]);
            close(go[1]);
            idmc_coord *c = NULL;
            idmc_lease *l = NULL;
            idmc_error e;
            char b;
            int rc = idmc_open(url, 5000, &c, &e);
            if (read(go[0], &b, 1) != 1)
                exit(1);
            if (rc == 0)
                rc = idmc_claim(c, 0, N - 1, "pid=racer", &l, &e);
            if (rc == 0)
                dprintf(up[1], "node %llu\n", (unsigned long long)idmc_lease_node(l));
            else
                dprintf(up[1], "error %d %s\n", rc, e.msg);
            /* Hold until told to release (end of file on go). */
            while (read(go[0], &b, 1) > 0) {
            }
            idmc_release(l);
            idmc_close(c);
            exit(0);
        }
    }
    close(up[1]);
    close(go[0]);
    sleep_ms(300); /* the children open their coordinators */
    char bytes[N] = {0};
    if (write(go[1], bytes, (size_t)forked) != forked)
        TEST_REPORT_("cannot start the racers");
    bool seen[N] = {false};
    int ok = 0;
    char line[IDMC_MSG_CAP + 32];
    for (int i = 0; i < forked; i++) {
        if (read_line(up[0], line, sizeof line, 20000) != 0) {
            TEST_REPORT_("racer %d did not answer", i);
            break;
        }
        unsigned long long node;
        if (sscanf(line, "node %llu", &node) == 1 && node < N && !seen[node]) {
            seen[node] = true;
            ok++;
        } else {
            TEST_REPORT_("racer: '%s'", line);
        }
    }
    /* Every node of the range held: one more is refused. */
    idmc_coord *c = open_url(url, 5000);
    int rc_more = -1;
    if (c != NULL) {
        idmc_lease *l = NULL;
        rc_more = idmc_claim(c, 0, N - 1, "pid=late", &l, &err);
        idmc_release(l);
    }
    close(go[1]); /* the racers release and exit */
    int bad_exit = 0;
    for (int i = 0; i < forked; i++) {
        int status;
        waitpid(pids[i], &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            bad_exit++;
    }
    close(up[0]);
    ASSERT_EQ_INT(forked, N);
    ASSERT_EQ_INT(ok, N);
    ASSERT_EQ_INT(rc_more, IDMC_BUSY);
    ASSERT_EQ_INT(bad_exit, 0);
    /* All released: the lowest is free again. */
    idmc_lease *again = claim(c, 0, N - 1, "pid=after", 0, &err);
    ASSERT_TRUE(again != NULL);
    ASSERT_EQ_U64(idmc_lease_node(again), 0);
    idmc_release(again);
    idmc_close(c);
}

static void expect_usage(const char *url, int64_t ttl_ms)
{
    idmc_coord *c = NULL;
    idmc_error err;
    int rc = idmc_open(url, ttl_ms, &c, &err);
    if (rc != IDMC_USAGE || c != NULL || err.msg[0] == '\0')
        TEST_REPORT_("idmc_open('%s', %lld): rc %d (%s), expected IDMC_USAGE with a message", url,
                     (long long)ttl_ms, rc, err.msg);
    idmc_close(c);
}

static void test_open_rejects_bad_urls(void)
{
    char u[2400];
    snprintf(u, sizeof u, "%s://%s", scheme, servers); /* no path */
    expect_usage(u, 5000);
    snprintf(u, sizeof u, "%s://%s/", scheme, servers); /* the root */
    expect_usage(u, 5000);
    snprintf(u, sizeof u, "%s://%s//", scheme, servers);
    expect_usage(u, 5000);
    snprintf(u, sizeof u, "%s://127.0.0.1:99999/idmint-test", scheme);
    expect_usage(u, 5000);
    snprintf(u, sizeof u, "%s://127.0.0.1:0/idmint-test", scheme);
    expect_usage(u, 5000);
    snprintf(u, sizeof u, "%s://127.0.0.1:port/idmint-test", scheme);
    expect_usage(u, 5000);
    snprintf(u, sizeof u, "%s://127.0.0.1/idmint-test", scheme); /* no port */
    expect_usage(u, 5000);
    snprintf(u, sizeof u, "%s:///idmint-test", scheme); /* no server */
    expect_usage(u, 5000);
    snprintf(u, sizeof u, "%s://%s,/idmint-test", scheme, servers); /* an empty server */
    expect_usage(u, 5000);
    snprintf(u, sizeof u, "%s://%s/idmint test", scheme, servers);
    expect_usage(u, 5000);
    snprintf(u, sizeof u, "consul://%s%s", servers, base_path);
    expect_usage(u, 5000);
    snprintf(u, sizeof u, "http://%s%s", servers, base_path);
    expect_usage(u, 5000);
    expect_usage("", 5000);
    expect_usage(base_url, 1999);
    expect_usage(base_url, 0);
    expect_usage(base_url, -5000);
    /* The good one opens, with no I/O, and says what it is. */
    idmc_coord *c = NULL;
    idmc_error err;
    ASSERT_EQ_INT(idmc_open(base_url, 2000, &c, &err), 0);
    ASSERT_EQ_STR(idmc_kind(c), is_zk ? "zookeeper" : "etcd");
    ASSERT_EQ_STR(idmc_url(c), base_url);
    idmc_close(c);
    idmc_close(NULL);
    idmc_release(NULL);
}

/* A loopback port where nothing listens (bound, then closed). */
static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sin;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0 ||
        getsockname(fd, (struct sockaddr *)&sin, &len) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return ntohs(sin.sin_port);
}

/* A loopback server that accepts connections (the kernel does) and never
 * answers: requests vanish. *fd_out must be closed by the caller. */
static int silent_port(int *fd_out)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sin;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof sin) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&sin, &len) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *fd_out = fd;
    return ntohs(sin.sin_port);
}

/* Claims through url expecting IDMC_ERROR within HANG_BOUND_MS; reports the
 * time taken. */
static void expect_error_in_bound(const char *what, const char *url)
{
    idmc_coord *c = open_url(url, 2000);
    if (c == NULL)
        return;
    idmc_error err;
    idmc_lease *l = NULL;
    int64_t t0 = now_ms();
    int rc = idmc_claim(c, 0, 3, "pid=1 host=nowhere", &l, &err);
    int64_t dt = now_ms() - t0;
    printf("# %s: claim against %s: rc %d after %lld ms (%s)\n", scheme, what, rc, (long long)dt,
           err.msg);
    if (rc != IDMC_ERROR || l != NULL)
        TEST_REPORT_("claim against %s: rc %d, expected IDMC_ERROR (%s)", what, rc, err.msg);
    if (dt >= HANG_BOUND_MS)
        TEST_REPORT_("claim against %s took %lld ms", what, (long long)dt);
    if (rc == IDMC_ERROR && err.msg[0] == '\0')
        TEST_REPORT_("claim against %s: IDMC_ERROR without a message", what);
    idmc_release(l);
    struct seen_list sl = {0};
    t0 = now_ms();
    int n = idmc_list(c, collect, &sl, &err);
    dt = now_ms() - t0;
    if (n != -1 || dt >= HANG_BOUND_MS)
        TEST_REPORT_("list against %s: %d after %lld ms", what, n, (long long)dt);
    idmc_close(c);
}

static void test_unreachable_server_fails_in_bounded_time(void)
{
    char u[2400];
    int port = closed_port();
    ASSERT_TRUE(port > 0);
    snprintf(u, sizeof u, "%s://127.0.0.1:%d/idmint-test/closed", scheme, port);
    int before = test_failures_;
    expect_error_in_bound("a closed port", u);
    int sfd = -1;
    int sport = silent_port(&sfd);
    ASSERT_TRUE(sport > 0);
    snprintf(u, sizeof u, "%s://127.0.0.1:%d/idmint-test/silent", scheme, sport);
    expect_error_in_bound("a server that never answers", u);
    close(sfd);
    ASSERT_EQ_INT(test_failures_, before);
}

/* With a dead server (one that refuses, one that never answers) listed
 * before the live one, the first claim gets through: an ensemble of three
 * keeps its quorum with one server down, whichever way it is down.
 * ZooKeeper's client shuffles the list; here it keeps the list's order
 * (this process only), so every run meets the silent server before the
 * live one. A claim that still fails must have got past the silent server
 * (its message names the live one, which was slow to answer): that is
 * load, not the failover, and the claim is tried again, as the header asks
 * of callers. */
static void test_next_server_is_tried(void)
{
    char u[2400];
    idmc_error err;
    int port = closed_port();
    int sfd = -1;
    int sport = silent_port(&sfd);
    ASSERT_TRUE(port > 0 && sport > 0);
    snprintf(u, sizeof u, "%s://127.0.0.1:%d,127.0.0.1:%d,%s%s/failover", scheme, port, sport,
             servers, base_path);
#ifdef BT_HAVE_ZK
    if (is_zk)
        zoo_deterministic_conn_order(1);
#endif
    idmc_coord *c = open_url(u, 4000);
    ASSERT_TRUE(c != NULL);
    int64_t t0 = now_ms();
    idmc_lease *l = NULL;
    int rc = IDMC_ERROR;
    int tries = 0;
    while (rc == IDMC_ERROR && now_ms() - t0 < 2 * HANG_BOUND_MS) {
        rc = idmc_claim(c, 0, 0, "pid=1 host=failover", &l, &err);
        tries++;
        if (rc != IDMC_ERROR)
            break;
        printf("# %s: failover claim: IDMC_ERROR (%s), again\n", scheme, err.msg);
        if (is_zk && (strstr(err.msg, servers) == NULL || strstr(err.msg, "waiting for") == NULL))
            TEST_REPORT_("try %d: the claim did not get past the dead servers: %s", tries, err.msg);
    }
    int64_t dt = now_ms() - t0;
    printf("# %s: claim with a closed and a silent server listed first: rc %d after %lld ms, "
           "%d tries\n",
           scheme, rc, (long long)dt, tries);
#ifdef BT_HAVE_ZK
    if (is_zk)
        zoo_deterministic_conn_order(0);
#endif
    ASSERT_EQ_INT(rc, 0);
    int64_t ttl = 0;
    RETRY_ON_ERROR(rc, idmc_keepalive(l, &ttl, &err), HANG_BOUND_MS);
    ASSERT_EQ_INT(rc, 0);
    RETRY_ON_ERROR(rc, idmc_record_mark(l, 777, &err), HANG_BOUND_MS);
    ASSERT_EQ_INT(rc, 0);
    idmc_release(l);
    close(sfd);
    idmc_close(c);
    /* What was written is there for a coordinator of the live server alone. */
    idmc_coord *d = open_sub("failover", 5000);
    ASSERT_TRUE(d != NULL);
    idmc_lease *l2 = claim(d, 0, 0, "pid=2 host=direct", 0, &err);
    ASSERT_TRUE(l2 != NULL);
    ASSERT_EQ_INT(idmc_lease_mark_ms(l2), 777);
    idmc_release(l2);
    idmc_close(d);
}

static const struct test_case tests[] = {
    TEST(test_open_rejects_bad_urls),
    TEST(test_claim_lowest_free_then_busy),
    TEST(test_busy_names_a_range_not_starting_at_zero),
    TEST(test_exact_claim_of_held_node_names_holder),
    TEST(test_generations_decimal_distinct_increasing),
    TEST(test_mark_carried_raised_and_shrunk),
    TEST(test_keepalive_reports_ttl),
    TEST(test_list_reports_holds_and_marks),
    TEST(test_racing_claims_get_distinct_nodes),
    TEST(test_expired_lease_is_fenced),
    TEST(test_unreachable_server_fails_in_bounded_time),
    TEST(test_next_server_is_tried),
    {0},
};

/* ---- cut: through silentproxy ------------------------------------------- */

static void test_cut(void)
{
    const int64_t ttl_ms = 15000;
    idmc_error err;
    idmc_coord *c = open_url(base_url, ttl_ms);
    idmc_coord *direct = open_url(cut_direct_url, ttl_ms);
    ASSERT_TRUE(c != NULL && direct != NULL);
    idmc_lease *l = claim(c, 0, 0, "pid=1 host=behind-proxy", 0, &err);
    ASSERT_TRUE(l != NULL);
    int64_t ttl = 0;
    ASSERT_EQ_INT(idmc_keepalive(l, &ttl, &err), 0);
    int64_t last_ok = now_ms();
    ASSERT_EQ_INT(idmc_record_mark(l, 5000, &err), 0);

    ASSERT_EQ_INT(kill(cut_proxy_pid, SIGUSR1), 0);
    int64_t t_cut = now_ms();
    sleep_ms(200);
    int64_t t0 = now_ms();
    int rc = idmc_keepalive(l, &ttl, &err);
    int64_t dt = now_ms() - t0;
    printf("# %s: keepalive during the cut: rc %d after %lld ms (%s)\n", scheme, rc, (long long)dt,
           err.msg);
    ASSERT_EQ_INT(rc, IDMC_ERROR);
    ASSERT_TRUE(dt < HANG_BOUND_MS);
    t0 = now_ms();
    rc = idmc_record_mark(l, 6000, &err);
    dt = now_ms() - t0;
    printf("# %s: record_mark during the cut: rc %d after %lld ms (%s)\n", scheme, rc,
           (long long)dt, err.msg);
    ASSERT_EQ_INT(rc, IDMC_ERROR);
    ASSERT_TRUE(dt < HANG_BOUND_MS);
    /* A new coordinator's first connection waits in the proxy's queue. */
    idmc_coord *late = open_url(base_url, ttl_ms);
    ASSERT_TRUE(late != NULL);
    idmc_lease *l2 = NULL;
    t0 = now_ms();
    rc = idmc_claim(late, 1, 1, "pid=2 host=late", &l2, &err);
    dt = now_ms() - t0;
    printf("# %s: a new claim during the cut: rc %d after %lld ms (%s)\n", scheme, rc,
           (long long)dt, err.msg);
    idmc_release(l2);
    idmc_close(late);
    ASSERT_EQ_INT(rc, IDMC_ERROR);
    ASSERT_TRUE(dt < HANG_BOUND_MS);
    /* The service itself still has the hold (the lease has not run out). */
    int64_t cut_for = now_ms() - last_ok;
    rc = idmc_claim(direct, 0, 0, "pid=3 host=direct", &l2, &err);
    if (now_ms() - last_ok < ttl_ms - 1000) {
        ASSERT_EQ_INT(rc, IDMC_BUSY);
        ASSERT_TRUE(strstr(err.msg, "host=behind-proxy") != NULL);
    } else {
        printf("# %s: the cut lasted %lld ms, too long to check the hold\n", scheme,
               (long long)cut_for);
        idmc_release(l2);
    }

    ASSERT_EQ_INT(kill(cut_proxy_pid, SIGUSR2), 0);
    int64_t t_open = now_ms();
    printf("# %s: the cut lasted %lld ms (%lld since the last confirmation)\n", scheme,
           (long long)(t_open - t_cut), (long long)(t_open - last_ok));
    /* Reopened: the lease is confirmed again (it had time left), after the
     * backend reconnects. */
    int tries = 0;
    for (;;) {
        tries++;
        rc = idmc_keepalive(l, &ttl, &err);
        if (rc != IDMC_ERROR || now_ms() - t_open > HANG_BOUND_MS)
            break;
        sleep_ms(200);
    }
    printf("# %s: keepalive after reopening: rc %d after %lld ms, %d tries (%s)\n", scheme, rc,
           (long long)(now_ms() - t_open), tries, err.msg);
    if (rc == IDMC_LOST && now_ms() - last_ok < ttl_ms)
        TEST_FAIL_("the lease was lost after a cut shorter than its TTL");
    ASSERT_EQ_INT(rc, 0);
    RETRY_ON_ERROR(rc, idmc_record_mark(l, 7000, &err), HANG_BOUND_MS);
    ASSERT_EQ_INT(rc, 0);
    struct seen_list sl = {0};
    ASSERT_EQ_INT(idmc_list(direct, collect, &sl, &err), 1);
    ASSERT_EQ_INT(sl.s[0].mark_ms, 7000);
    ASSERT_EQ_STR(sl.s[0].generation, idmc_lease_generation(l));
    idmc_release(l);
    /* Released through the proxy: the node is free. */
    l2 = claim(direct, 0, 0, "pid=3 host=direct", 0, &err);
    ASSERT_TRUE(l2 != NULL);
    ASSERT_EQ_INT(idmc_lease_mark_ms(l2), 7000);
    idmc_release(l2);
    idmc_close(direct);
    idmc_close(c);
}

/* ---- restart: driven by test_backends.sh ----------------------------------- */

static int64_t restart_ttl_ms = 8000;

static void test_restart(void)
{
    const int64_t ttl_ms = restart_ttl_ms;
    idmc_error err;
    char line[64];
    setvbuf(stdout, NULL, _IOLBF, 0);
    idmc_coord *c = open_url(base_url, ttl_ms);
    ASSERT_TRUE(c != NULL);
    idmc_lease *l = claim(c, 0, 0, "pid=1 host=restart", 0, &err);
    ASSERT_TRUE(l != NULL);
    ASSERT_EQ_INT(idmc_record_mark(l, 5000, &err), 0);
    int64_t ttl = 0;
    ASSERT_EQ_INT(idmc_keepalive(l, &ttl, &err), 0);
    printf("held %s\n", idmc_lease_generation(l));

    /* "down": the server is stopped. */
    if (read_line(0, line, sizeof line, 60000) != 0 || strcmp(line, "down") != 0)
        TEST_FAIL_("expected 'down' on stdin, got '%s'", line);
    int64_t t0 = now_ms();
    int rc = idmc_keepalive(l, &ttl, &err);
    int64_t dt = now_ms() - t0;
    printf("down %d %lld\n", rc, (long long)dt);
    printf("# %s: keepalive with the server stopped: rc %d after %lld ms (%s)\n", scheme, rc,
           (long long)dt, err.msg);
    ASSERT_EQ_INT(rc, IDMC_ERROR);
    ASSERT_TRUE(dt < HANG_BOUND_MS);

    /* "up": it runs again, on the same data. */
    if (read_line(0, line, sizeof line, 60000) != 0 || strcmp(line, "up") != 0)
        TEST_FAIL_("expected 'up' on stdin, got '%s'", line);
    int64_t t_up = now_ms();
    int tries = 0;
    for (;;) {
        tries++;
        rc = idmc_keepalive(l, &ttl, &err);
        if (rc != IDMC_ERROR || now_ms() - t_up > 2 * HANG_BOUND_MS)
            break;
        sleep_ms(200);
    }
    printf("# %s: keepalive after the restart: rc %d after %lld ms, %d tries (%s)\n", scheme, rc,
           (long long)(now_ms() - t_up), tries, err.msg);
    ASSERT_TRUE(rc == 0 || rc == IDMC_LOST);
    /* One holder at most, whichever way it went. */
    idmc_coord *other = open_url(base_url, ttl_ms);
    ASSERT_TRUE(other != NULL);
    idmc_lease *l2 = NULL;
    int rc2;
    RETRY_ON_ERROR(rc2, idmc_claim(other, 0, 0, "pid=2 host=second", &l2, &err), HANG_BOUND_MS);
    printf("# %s: a second claim of the node: rc %d (%s)\n", scheme, rc2, err.msg);
    if (rc == 0) {
        ASSERT_EQ_INT(rc2, IDMC_BUSY);
        ASSERT_TRUE(strstr(err.msg, "host=restart") != NULL);
        RETRY_ON_ERROR(rc, idmc_record_mark(l, 6000, &err), HANG_BOUND_MS);
        ASSERT_EQ_INT(rc, 0);
    } else {
        ASSERT_TRUE(rc2 == 0 || rc2 == IDMC_BUSY);
        ASSERT_EQ_INT(idmc_record_mark(l, 6000, &err), IDMC_LOST);
    }
    idmc_release(l);
    idmc_release(l2);
    /* The mark written before the restart survived it. */
    RETRY_ON_ERROR(rc2, idmc_claim(other, 0, 0, "pid=2 host=second", &l2, &err), HANG_BOUND_MS);
    ASSERT_EQ_INT(rc2, 0);
    ASSERT_TRUE(idmc_lease_mark_ms(l2) >= 5000);
    printf("restart-result %s\n", rc == 0 ? "confirmed" : "lost");
    idmc_release(l2);
    idmc_close(other);
    idmc_close(c);
}

int main(int argc, char **argv)
{
    if (argc < 2 || split_url(argv[1]) != 0) {
        fprintf(stderr,
                "usage: backend_test URL [TEST | cut PROXY_PID DIRECT_URL | restart [TTL_MS]]\n");
        return 2;
    }
    base_url = argv[1];
    static const struct test_case cut[] = {TEST(test_cut), {0}};
    static const struct test_case restart[] = {TEST(test_restart), {0}};
    char *args[3] = {argv[0], "-", NULL};
    if (argc >= 3 && strcmp(argv[2], "cut") == 0) {
        if (argc != 5) {
            fprintf(stderr, "usage: backend_test URL cut PROXY_PID DIRECT_URL\n");
            return 2;
        }
        cut_proxy_pid = (pid_t)strtol(argv[3], NULL, 10);
        cut_direct_url = argv[4];
        return test_main(2, args, cut);
    }
    if (argc >= 3 && strcmp(argv[2], "restart") == 0) {
        if (argc == 4)
            restart_ttl_ms = strtoll(argv[3], NULL, 10);
        return test_main(2, args, restart);
    }
    args[2] = argc >= 3 ? argv[2] : NULL;
    return test_main(argc >= 3 ? 3 : 2, args, tests);
}
