/*
 * test_hlc.c - the hybrid logical clock: the paper's rules, a simulated
 * exchange between skewed nodes, the offset guard, logical overflow, the
 * encoding and text form, and one handle shared by threads. All time comes
 * from fake clocks: no sleeps, no timing assertions.
 */
#include "fakeclock.h"
#include "testlib.h"

#include <pthread.h>

#define T0 1764590000000LL /* 2025-12-01, Unix ms */

static uint64_t rng_state = 0x5eed0013;

static idm_hlc *make(struct fake_clock *c, int64_t max_offset_ms)
{
    idm_hlc_config cfg;
    idm_hlc_config_init(&cfg);
    cfg.clock = fake_clock_as_clock(c);
    cfg.max_offset_ms = max_offset_ms;
    idm_hlc *h = NULL;
    idm_error err;
    if (idm_hlc_new(&h, &cfg, &err) != IDM_OK) {
        fprintf(stderr, "idm_hlc_new: %s\n", err.msg);
        abort();
    }
    return h;
}

static uint64_t st(int64_t wall, unsigned logical)
{
    return (uint64_t)wall << 16 | logical;
}

static void test_config(void)
{
    idm_hlc_config cfg;
    idm_hlc_config_init(&cfg);
    ASSERT_EQ_INT(cfg.max_offset_ms, 500);
    idm_hlc *h = NULL;
    idm_error err;
    cfg.max_offset_ms = -1;
    ASSERT_EQ_INT(idm_hlc_new(&h, &cfg, &err), IDM_EINVAL);
    ASSERT_TRUE(h == NULL);
    idm_hlc_config_init(&cfg);
    cfg.flags = 1;
    ASSERT_EQ_INT(idm_hlc_new(&h, &cfg, &err), IDM_EINVAL);
    ASSERT_EQ_INT(idm_hlc_new(NULL, NULL, &err), IDM_EINVAL);
    /* NULL config: the system clock. */
    ASSERT_OK(idm_hlc_new(&h, NULL, &err), &err);
    uint64_t s;
    ASSERT_OK(idm_hlc_now(h, &s, &err), &err);
    ASSERT_TRUE((int64_t)(s >> 16) > T0);
    ASSERT_EQ_U64(idm_hlc_last(h), s);
    idm_hlc_free(h);
    idm_hlc_free(NULL);
    ASSERT_EQ_STR(idm_strerror(IDM_EOFFSET), "remote clock too far ahead");
}

/* The paper's rules, one case each, and monotonicity through a rewind. */
static void test_rules(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0);
    idm_hlc *h = make(&c, 500);
    idm_error err;
    uint64_t s;
    ASSERT_OK(idm_hlc_now(h, &s, &err), &err);
    ASSERT_EQ_U64(s, st(T0, 0));
    ASSERT_OK(idm_hlc_now(h, &s, &err), &err); /* same ms: c + 1 */
    ASSERT_EQ_U64(s, st(T0, 1));
    fake_clock_set_ms(&c, T0 - 1000); /* clock steps back: physical part stays */
    ASSERT_OK(idm_hlc_now(h, &s, &err), &err);
    ASSERT_EQ_U64(s, st(T0, 2));
    fake_clock_set_ms(&c, T0 + 5); /* clock ahead: c = 0 */
    ASSERT_OK(idm_hlc_now(h, &s, &err), &err);
    ASSERT_EQ_U64(s, st(T0 + 5, 0));
    /* update, all equal: max(c, rc) + 1 */
    ASSERT_OK(idm_hlc_update(h, st(T0 + 5, 7), &s, &err), &err);
    ASSERT_EQ_U64(s, st(T0 + 5, 8));
    ASSERT_OK(idm_hlc_update(h, st(T0 + 5, 3), &s, &err), &err);
    ASSERT_EQ_U64(s, st(T0 + 5, 9));
    /* only the local l: c + 1 (a remote from the past changes nothing else) */
    ASSERT_OK(idm_hlc_update(h, st(T0 - 100, 40), &s, &err), &err);
    ASSERT_EQ_U64(s, st(T0 + 5, 10));
    /* only the remote: rc + 1 */
    ASSERT_OK(idm_hlc_update(h, st(T0 + 50, 4), &s, &err), &err);
    ASSERT_EQ_U64(s, st(T0 + 50, 5));
    /* the wall clock wins: 0 */
    fake_clock_set_ms(&c, T0 + 60);
    ASSERT_OK(idm_hlc_update(h, st(T0 + 55, 9), &s, &err), &err);
    ASSERT_EQ_U64(s, st(T0 + 60, 0));
    idm_hlc_free(h);
}

static void test_offset_guard(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0);
    idm_hlc *h = make(&c, 500);
    idm_error err;
    uint64_t s, before;
    ASSERT_OK(idm_hlc_now(h, &before, &err), &err);
    memset(&err, 0, sizeof err);
    s = 12345;
    ASSERT_EQ_INT(idm_hlc_update(h, st(T0 + 501, 0), &s, &err), IDM_EOFFSET);
    ASSERT_EQ_INT(err.code, IDM_EOFFSET);
    ASSERT_TRUE(strstr(err.msg, "501 ms ahead") != NULL);
    ASSERT_TRUE(strstr(err.msg, "limit of 500 ms") != NULL);
    ASSERT_EQ_U64(s, 12345);                /* not written */
    ASSERT_EQ_U64(idm_hlc_last(h), before); /* state unchanged */
    ASSERT_EQ_INT(idm_hlc_update(h, UINT64_MAX, &s, NULL), IDM_EOFFSET);
    ASSERT_OK(idm_hlc_now(h, &s, &err), &err);
    ASSERT_EQ_U64(s, before + 1);
    /* exactly max_offset ahead: accepted */
    ASSERT_OK(idm_hlc_update(h, st(T0 + 500, 3), &s, &err), &err);
    ASSERT_EQ_U64(s, st(T0 + 500, 4));
    idm_hlc_free(h);

    /* max_offset 0: only stamps not ahead of the wall clock */
    h = make(&c, 0);
    ASSERT_EQ_INT(idm_hlc_update(h, st(T0 + 1, 0), &s, &err), IDM_EOFFSET);
    ASSERT_OK(idm_hlc_update(h, st(T0, 9), &s, &err), &err);
    ASSERT_EQ_U64(s, st(T0, 10));
    idm_hlc_free(h);
}

/* 65536+ events in one frozen ms: the physical part moves on, c never wraps. */
static void test_overflow(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0);
    idm_hlc *h = make(&c, 500);
    idm_error err;
    uint64_t prev = 0, s = 0;
    for (long i = 0; i < 65536 * 3 + 10; i++) {
        ASSERT_OK(idm_hlc_now(h, &s, &err), &err);
        if (s <= prev)
            TEST_FAIL_("stamp %ld: %" PRIx64 " after %" PRIx64, i, s, prev);
        int64_t w;
        uint16_t l;
        idm_hlc_decode(s, &w, &l);
        if (w != T0 + i / 65536 || l != (uint16_t)(i % 65536))
            TEST_FAIL_("stamp %ld: wall %" PRId64 " logical %u", i, w, (unsigned)l);
        prev = s;
    }
    ASSERT_EQ_U64(s, st(T0 + 3, 9));
    /* update overflows the same way */
    ASSERT_OK(idm_hlc_update(h, st(T0 + 3, 0xFFFF), &s, &err), &err);
    ASSERT_EQ_U64(s, st(T0 + 4, 0));
    idm_hlc_free(h);

    /* at the last stamp: a range error, not a wrap (a remote stamp takes
     * it there: an int64 ns clock ends in 2262, long before 2^48 ms) */
    h = make(&c, INT64_MAX);
    ASSERT_OK(idm_hlc_update(h, st(IDM_HLC_MAX_WALL_MS, 0xFFFE), &s, &err), &err);
    ASSERT_EQ_U64(s, UINT64_MAX);
    ASSERT_EQ_INT(idm_hlc_now(h, &s, &err), IDM_ETIME_RANGE);
    ASSERT_EQ_INT(idm_hlc_update(h, st(T0, 0), &s, &err), IDM_ETIME_RANGE);
    ASSERT_EQ_U64(idm_hlc_last(h), UINT64_MAX);
    idm_hlc_free(h);
}

/* 4 nodes, skews within +-200 ms, random delays, clocks stepping back. */
#define NODES    4
#define MSGS     20000
#define INFLIGHT 64

struct msg {
    int to;
    int64_t deliver_at;
    uint64_t stamp;
};

static void test_exchange(void)
{
    struct fake_clock clk[NODES];
    idm_hlc *h[NODES];
    int64_t skew[NODES];
    uint64_t last[NODES] = {0};
    memset(clk, 0, sizeof clk);
    for (int i = 0; i < NODES; i++) {
        skew[i] = (int64_t)(test_rng_next(&rng_state) % 401) - 200;
        h[i] = make(&clk[i], 1000);
    }
    struct msg q[INFLIGHT];
    int nq = 0;
    int64_t t = T0;
    long sent = 0, received = 0, steps_back = 0, ahead_of_wall = 0;
    idm_error err;
    while (sent < MSGS || nq > 0) {
        uint64_t r = test_rng_next(&rng_state);
        t += (int64_t)(r % 3); /* true time; sometimes stands still */
        int node = (int)((r >> 8) % NODES);
        /* now and then a node's clock steps back (NTP), or drifts forward */
        if ((r >> 16) % 50 == 0) {
            skew[node] -= (int64_t)((r >> 24) % 150);
            if (skew[node] < -200)
                skew[node] = -200;
            steps_back++;
        } else if ((r >> 16) % 50 == 1) {
            skew[node] += (int64_t)((r >> 24) % 50);
            if (skew[node] > 200)
                skew[node] = 200;
        }
        fake_clock_set_ms(&clk[node], t + skew[node]);
        uint64_t s;
        int deliver = nq > 0 && (sent >= MSGS || nq == INFLIGHT || (r >> 40) % 2 == 0);
        if (deliver) {
            /* the earliest due message for any node, else wait for it */
            int k = (int)((r >> 44) % (uint64_t)nq);
            if (q[k].deliver_at > t)
                t = q[k].deliver_at;
            struct msg m = q[k];
            q[k] = q[--nq];
            fake_clock_set_ms(&clk[m.to], t + skew[m.to]);
            ASSERT_OK(idm_hlc_update(h[m.to], m.stamp, &s, &err), &err);
            if (s <= m.stamp)
                TEST_FAIL_("receive %" PRIx64 " not after send %" PRIx64, s, m.stamp);
            node = m.to;
            received++;
        } else {
            ASSERT_OK(idm_hlc_now(h[node], &s, &err), &err);
            int to = (int)((r >> 48) % (NODES - 1));
            if (to >= node)
                to++;
            q[nq].to = to;
            q[nq].deliver_at = t + (int64_t)((r >> 52) % 80);
            q[nq].stamp = s;
            nq++;
            sent++;
        }
        if (s <= last[node])
            TEST_FAIL_("node %d: %" PRIx64 " after %" PRIx64, node, s, last[node]);
        last[node] = s;
        if ((int64_t)(s >> 16) > t + skew[node])
            ahead_of_wall++;
        /* never further ahead of true time than the largest skew */
        if ((int64_t)(s >> 16) > t + 200)
            TEST_FAIL_("node %d runs %" PRId64 " ms ahead of true time", node,
                       (int64_t)(s >> 16) - t);
    }
    ASSERT_EQ_INT(received, MSGS);
    ASSERT_TRUE(steps_back > 100);
    ASSERT_TRUE(ahead_of_wall > 0); /* the skews did matter */
    for (int i = 0; i < NODES; i++)
        idm_hlc_free(h[i]);
}

static void test_encoding_order(void)
{
    uint64_t st_;
    idm_error err;
    ASSERT_EQ_INT(idm_hlc_encode(-1, 0, &st_, &err), IDM_ETIME_RANGE);
    ASSERT_EQ_INT(idm_hlc_encode(IDM_HLC_MAX_WALL_MS + 1, 0, &st_, &err), IDM_ETIME_RANGE);
    ASSERT_OK(idm_hlc_encode(IDM_HLC_MAX_WALL_MS, 0xFFFF, &st_, &err), &err);
    ASSERT_EQ_U64(st_, UINT64_MAX);
    for (int i = 0; i < 100000; i++) {
        uint64_t r1 = test_rng_next(&rng_state), r2 = test_rng_next(&rng_state);
        int64_t w1 = (int64_t)(r1 >> 16),
                w2 = (i % 3) ? w1 + (int64_t)(r2 % 3) - 1 : (int64_t)(r2 >> 16);
        if (w2 < 0 || w2 > IDM_HLC_MAX_WALL_MS)
            w2 = w1;
        uint16_t c1 = (uint16_t)r1, c2 = (uint16_t)(r2 >> 3);
        uint64_t a, b;
        ASSERT_OK(idm_hlc_encode(w1, c1, &a, &err), &err);
        ASSERT_OK(idm_hlc_encode(w2, c2, &b, &err), &err);
        int tuple = w1 != w2 ? (w1 < w2 ? -1 : 1) : (c1 != c2 ? (c1 < c2 ? -1 : 1) : 0);
        int num = a != b ? (a < b ? -1 : 1) : 0;
        if (tuple != num)
            TEST_FAIL_("(%" PRId64 ",%u) vs (%" PRId64 ",%u)", w1, c1, w2, c2);
        int64_t w;
        uint16_t c;
        idm_hlc_decode(a, &w, &c);
        if (w != w1 || c != c1)
            TEST_FAIL_("decode %" PRIx64, a);
    }
}

static int parse_adapter(const char *text, size_t len, void *out, idm_error *err)
{
    return idm_hlc_parse(text, len, out, err);
}

static int sign(int x)
{
    return (x > 0) - (x < 0);
}

static void test_text(void)
{
    char a[IDM_HLC_STRLEN + 1], b[IDM_HLC_STRLEN + 1];
    idm_error err;
    uint64_t v;
    ASSERT_OK(idm_hlc_format(0, a, sizeof a), NULL);
    ASSERT_EQ_STR(a, "0000000000000000");
    ASSERT_OK(idm_hlc_format(st(T0, 1), a, sizeof a), NULL);
    ASSERT_EQ_STR(a, "019ad9c297800001");
    ASSERT_EQ_INT(idm_hlc_format(1, a, IDM_HLC_STRLEN), IDM_ENOSPC);
    uint64_t edges[] = {0, 1, 0xFFFF, 0x10000, UINT64_MAX, UINT64_MAX - 1, 0x8000000000000000u};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        ASSERT_OK(idm_hlc_format(edges[i], a, sizeof a), NULL);
        ASSERT_OK(idm_hlc_parse(a, strlen(a), &v, &err), &err);
        ASSERT_EQ_U64(v, edges[i]);
    }
    for (int i = 0; i < 100000; i++) {
        uint64_t x = test_rng_next(&rng_state), y = test_rng_next(&rng_state);
        if (i % 4 == 0)
            y = x + (y % 5) - 2; /* neighbours too */
        ASSERT_OK(idm_hlc_format(x, a, sizeof a), NULL);
        ASSERT_OK(idm_hlc_format(y, b, sizeof b), NULL);
        ASSERT_EQ_INT(strlen(a), IDM_HLC_STRLEN);
        if (sign(strcmp(a, b)) != (x < y ? -1 : x > y ? 1 : 0))
            TEST_FAIL_("text order of %s and %s", a, b);
        char *copy = test_exact_copy(a, IDM_HLC_STRLEN);
        int rc = idm_hlc_parse(copy, IDM_HLC_STRLEN, &v, &err);
        free(copy);
        ASSERT_OK(rc, &err);
        ASSERT_EQ_U64(v, x);
    }
    /* bad text */
    const char *valid = "019ad9c297800001";
    ASSERT_TRUE(test_check_bad_bytes(parse_adapter, &v, valid, 16, "0123456789abcdef"));
    ASSERT_EQ_INT(idm_hlc_parse("019AD9C297800001", 16, &v, &err), IDM_EPARSE);
    ASSERT_EQ_INT(err.offset, 3);
    ASSERT_EQ_INT(idm_hlc_parse(valid, 15, &v, &err), IDM_EPARSE);
    ASSERT_EQ_INT(err.offset, 15);
    ASSERT_TRUE(strstr(err.msg, "16 characters, got 15") != NULL);
    ASSERT_EQ_INT(idm_hlc_parse("019ad9c2978000010", 17, &v, &err), IDM_EPARSE);
    ASSERT_EQ_INT(err.offset, 16);
    ASSERT_EQ_INT(idm_hlc_parse("", 0, &v, &err), IDM_EPARSE);
    ASSERT_EQ_INT(err.offset, 0);
    ASSERT_EQ_INT(idm_hlc_parse("0x9ad9c297800001", 16, &v, &err), IDM_EPARSE);
    ASSERT_EQ_INT(err.offset, 1);
    ASSERT_EQ_INT(idm_hlc_parse(" 19ad9c297800001", 16, &v, &err), IDM_EPARSE);
    ASSERT_EQ_INT(err.offset, 0);
    ASSERT_EQ_INT(idm_hlc_parse(NULL, 16, &v, &err), IDM_EINVAL);
}

/* 4 threads x 100k now() on one handle: all stamps distinct. */
#define THREADS    4
#define PER_THREAD 100000

struct worker {
    idm_hlc *h;
    uint64_t *out;
    int failed;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    uint64_t prev = 0;
    for (int i = 0; i < PER_THREAD; i++) {
        if (idm_hlc_now(w->h, &w->out[i], NULL) != IDM_OK || w->out[i] <= prev) {
            w->failed = 1;
            return NULL;
        }
        prev = w->out[i];
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void test_threads(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0);
    c.step_ns = 997; /* about 1000 reads per ms: both rules and overflow-free */
    idm_hlc *h = make(&c, 500);
    uint64_t *all = malloc(sizeof *all * THREADS * PER_THREAD);
    ASSERT_TRUE(all != NULL);
    pthread_t tid[THREADS];
    struct worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i].h = h;
        w[i].out = all + (size_t)i * PER_THREAD;
        w[i].failed = 0;
        ASSERT_EQ_INT(pthread_create(&tid[i], NULL, work, &w[i]), 0);
    }
    int failed = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(tid[i], NULL);
        failed |= w[i].failed;
    }
    qsort(all, (size_t)THREADS * PER_THREAD, sizeof *all, cmp_u64);
    size_t dups = 0;
    for (size_t i = 1; i < (size_t)THREADS * PER_THREAD; i++)
        dups += all[i] == all[i - 1];
    uint64_t top = all[(size_t)THREADS * PER_THREAD - 1];
    free(all);
    ASSERT_EQ_INT(failed, 0);
    ASSERT_EQ_INT(dups, 0);
    ASSERT_EQ_U64(idm_hlc_last(h), top);
    idm_hlc_free(h);
}

/* idm_hlc_resume_after: the next stamps lie past the mark whatever the
 * clock reads; it never lowers the state; the range is checked. */
static void test_resume_after(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0);
    idm_hlc *h = make(&c, 500);
    idm_error err;
    uint64_t s;
    /* Errors first: the range, and the state is untouched. */
    ASSERT_EQ_INT(idm_hlc_resume_after(h, -1, &err), IDM_ETIME_RANGE);
    ASSERT_EQ_INT(idm_hlc_resume_after(h, IDM_HLC_MAX_WALL_MS, &err), IDM_ETIME_RANGE);
    ASSERT_TRUE(strstr(err.msg, "resume after") != NULL);
    ASSERT_EQ_INT(idm_hlc_resume_after(h, INT64_MIN, NULL), IDM_ETIME_RANGE);
    ASSERT_EQ_U64(idm_hlc_last(h), 0);
    /* A restart after the clock stepped back 3 s: the mark is ahead. */
    ASSERT_OK(idm_hlc_resume_after(h, T0 + 3000, &err), &err);
    ASSERT_EQ_U64(idm_hlc_last(h), st(T0 + 3000, 0xFFFF));
    ASSERT_OK(idm_hlc_now(h, &s, &err), &err);
    ASSERT_EQ_U64(s, st(T0 + 3001, 0));
    ASSERT_OK(idm_hlc_now(h, &s, &err), &err);
    ASSERT_EQ_U64(s, st(T0 + 3001, 1));
    /* A remote from the past: still after the mark. */
    ASSERT_OK(idm_hlc_update(h, st(T0 - 10, 5), &s, &err), &err);
    ASSERT_EQ_U64(s, st(T0 + 3001, 2));
    /* Never down: a mark below the state changes nothing. */
    ASSERT_OK(idm_hlc_resume_after(h, T0, &err), &err);
    ASSERT_EQ_U64(idm_hlc_last(h), st(T0 + 3001, 2));
    ASSERT_OK(idm_hlc_resume_after(h, T0 + 3001, &err), &err); /* same ms: to its end */
    ASSERT_EQ_U64(idm_hlc_last(h), st(T0 + 3001, 0xFFFF));
    /* The clock passes the mark: stamps follow the clock again. */
    fake_clock_set_ms(&c, T0 + 4000);
    ASSERT_OK(idm_hlc_now(h, &s, &err), &err);
    ASSERT_EQ_U64(s, st(T0 + 4000, 0));
    /* Not a remote stamp: max_offset_ms does not apply (1 day ahead). */
    ASSERT_OK(idm_hlc_resume_after(h, T0 + 86400000, &err), &err);
    ASSERT_OK(idm_hlc_now(h, &s, &err), &err);
    ASSERT_EQ_U64(s, st(T0 + 86400001, 0));
    idm_hlc_free(h);
    /* The last mark allowed: the next stamp is the very last one. */
    h = make(&c, 500);
    ASSERT_OK(idm_hlc_resume_after(h, IDM_HLC_MAX_WALL_MS - 1, &err), &err);
    ASSERT_OK(idm_hlc_now(h, &s, &err), &err);
    ASSERT_EQ_U64(s, st(IDM_HLC_MAX_WALL_MS, 0));
    ASSERT_OK(idm_hlc_resume_after(h, 0, &err), &err);
    ASSERT_EQ_U64(idm_hlc_last(h), s);
    idm_hlc_free(h);
}

static const struct test_case tests[] = {
    TEST(test_config),       TEST(test_rules),
    TEST(test_offset_guard), TEST(test_overflow),
    TEST(test_exchange),     TEST(test_encoding_order),
    TEST(test_text),         TEST(test_threads),
    TEST(test_resume_after), {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
