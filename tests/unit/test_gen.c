/*
 * test_gen.c - the generator core: UUIDv4/v7, ULID and KSUID minting.
 * Properties: strict order and uniqueness over a million IDs, across
 * threads and across fork; clock rewinds, frozen clocks, counter and
 * random-part overflow, range ends and failing sources, all through an
 * injected clock and randomness source.
 */
#include "fakeclock.h"
#include "internal.h"
#include "testlib.h"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#define MILLION 1000000
#define T2026_MS INT64_C(1795000000000) /* 2026-11-18 */

static idm_gen *new_gen(struct fake_clock *c, struct fake_entropy *e)
{
    idm_gen_config cfg = {0};
    if (c)
        cfg.clock = fake_clock_as_clock(c);
    if (e)
        cfg.entropy = fake_entropy_as_entropy(e);
    idm_gen *g = NULL;
    idm_error err;
    if (idm_gen_new(&g, &cfg, &err) != IDM_OK) {
        fprintf(stderr, "idm_gen_new: %s\n", err.msg);
        exit(2);
    }
    return g;
}

/* Returns the index of the first i with a[i-1] >= a[i], or 0 if strictly
 * increasing. */
static size_t first_disorder(const void *base, size_t n, size_t size)
{
    const uint8_t *p = base;
    for (size_t i = 1; i < n; i++) {
        if (memcmp(p + (i - 1) * size, p + i * size, size) >= 0)
            return i;
    }
    return 0;
}

static int cmp16(const void *a, const void *b)
{
    return memcmp(a, b, 16);
}

static int cmp20(const void *a, const void *b)
{
    return memcmp(a, b, 20);
}

static uint64_t v7_ms(const idm_uuid *u)
{
    return idm__get_be48(u->bytes);
}

static unsigned v7_counter(const idm_uuid *u)
{
    return (unsigned)((u->bytes[6] & 0x0F) << 12 | u->bytes[7] << 4 | (u->bytes[8] >> 2 & 0x0F));
}

/* ---- error paths first ---------------------------------------------------- */

static void test_gen_rejects_bad_config(void)
{
    idm_gen *g = NULL;
    idm_error err = {0};
    idm_gen_config cfg = {0};
    cfg.flags = 1u << 7;
    ASSERT_EQ_INT(idm_gen_new(&g, &cfg, &err), IDM_EINVAL);
    ASSERT_TRUE(g == NULL);
    ASSERT_TRUE(strstr(err.msg, "flags") != NULL);
    cfg.flags = 0;
    struct fake_clock c = {0};
    cfg.clock.now_ns = fake_clock_now;
    cfg.clock.ctx = &c;
    ASSERT_EQ_INT(idm_gen_new(&g, &cfg, &err), IDM_EINVAL);
    ASSERT_TRUE(strstr(err.msg, "sleep_ns") != NULL);
    idm_gen_free(NULL); /* harmless */
}

static void test_gen_clock_failure_is_reported(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T2026_MS);
    c.fail_reads = 3;
    idm_gen *g = new_gen(&c, NULL);
    idm_uuid u[2];
    idm_ulid l;
    idm_ksuid k;
    idm_error err = {0};
    ASSERT_EQ_INT(idm_uuidv7_next_n(g, u, 2, &err), IDM_ECLOCK);
    ASSERT_EQ_INT(idm_ulid_next_n(g, &l, 1, &err), IDM_ECLOCK);
    ASSERT_EQ_INT(idm_ksuid_next_n(g, &k, 1, &err), IDM_ECLOCK);
    ASSERT_OK(idm_uuidv7_next_n(g, u, 2, &err), &err);
    ASSERT_EQ_U64(v7_ms(&u[0]), (uint64_t)T2026_MS);
    idm_gen_free(g);
}

static void test_gen_entropy_failure_is_reported_then_recovers(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T2026_MS);
    struct fake_entropy e = {.fail_at = 1};
    idm_gen *g = new_gen(&c, &e);
    idm_uuid u[4];
    idm_error err = {0};
    ASSERT_EQ_INT(idm_uuidv4_next_n(g, u, 4, &err), IDM_ENOENTROPY);
    ASSERT_EQ_INT(err.code, IDM_ENOENTROPY);
    ASSERT_OK(idm_uuidv4_next_n(g, u, 4, &err), &err);
    ASSERT_OK(idm_uuidv7_next_n(g, u, 4, &err), &err);
    ASSERT_EQ_INT(first_disorder(u, 4, sizeof u[0]), 0);
    idm_gen_free(g);
}

static void test_gen_time_range_ends(void)
{
    /* The clock speaks int64 nanoseconds, which end in 2262: UUIDv7's and
     * ULID's 48-bit milliseconds (year 10889) cannot be reached through it,
     * but KSUID's 32-bit seconds end in 2150 and can. */
    struct fake_clock c = {0};
    int64_t ksuid_end_s = IDM_KSUID_EPOCH_S + INT64_C(0xFFFFFFFF);
    atomic_store(&c.now_ns, (ksuid_end_s + 1) * 1000000000);
    idm_gen *g = new_gen(&c, NULL);
    idm_uuid u;
    idm_ulid l;
    idm_ksuid k[2];
    idm_error err = {0};
    ASSERT_EQ_INT(idm_ksuid_next_n(g, k, 1, &err), IDM_ETIME_RANGE);
    ASSERT_TRUE(strstr(err.msg, "32-bit") != NULL);
    atomic_store(&c.now_ns, ksuid_end_s * 1000000000);
    ASSERT_OK(idm_ksuid_next_n(g, k, 2, &err), &err);
    ASSERT_EQ_U64(idm__get_be32(k[1].bytes), UINT32_C(0xFFFFFFFF));
    ASSERT_OK(idm_uuidv7_next_n(g, &u, 1, &err), &err);
    ASSERT_OK(idm_ulid_next_n(g, &l, 1, &err), &err);
    /* KSUID: before its 2014 epoch; every time-ordered format: before 1970. */
    fake_clock_set_ms(&c, INT64_C(1399999999999));
    idm_gen *g2 = new_gen(&c, NULL);
    ASSERT_EQ_INT(idm_ksuid_next_n(g2, k, 1, &err), IDM_ETIME_RANGE);
    ASSERT_TRUE(strstr(err.msg, "KSUID epoch") != NULL);
    fake_clock_set_ms(&c, -5);
    ASSERT_EQ_INT(idm_uuidv4_next_n(g2, &u, 1, &err), IDM_OK); /* v4 needs no time */
    ASSERT_EQ_INT(idm_ulid_next_n(g2, &l, 1, &err), IDM_ETIME_RANGE);
    ASSERT_EQ_INT(idm_uuidv7_next_n(g2, &u, 1, &err), IDM_ETIME_RANGE);
    idm_gen_free(g);
    idm_gen_free(g2);
}

static void *failing_alloc(void *ctx, size_t size, size_t align)
{
    (void)size;
    (void)align;
    (*(int *)ctx)++;
    return NULL;
}

static void never_free(void *ctx, void *p)
{
    (void)ctx;
    (void)p;
}

static void test_gen_allocation_failure_is_enomem(void)
{
    int calls = 0;
    idm_gen_config cfg = {0};
    cfg.allocator = (idm_allocator){failing_alloc, never_free, &calls};
    idm_gen *g = (idm_gen *)&calls; /* must be reset to NULL */
    idm_error err = {0};
    ASSERT_EQ_INT(idm_gen_new(&g, &cfg, &err), IDM_ENOMEM);
    ASSERT_TRUE(g == NULL);
    ASSERT_EQ_INT(calls, 1);
    ASSERT_TRUE(strstr(err.msg, "memory") != NULL);
}

/* ---- UUIDv4 --------------------------------------------------------------- */

static void test_uuidv4_version_variant_and_uniqueness(void)
{
    idm_gen *g = new_gen(NULL, NULL); /* real CSPRNG: uniqueness is its job */
    idm_uuid *u = malloc(MILLION * sizeof *u);
    idm_error err = {0};
    for (size_t i = 0; i < MILLION; i += 1000)
        ASSERT_OK(idm_uuidv4_next_n(g, u + i, 1000, &err), &err);
    for (size_t i = 0; i < MILLION; i++) {
        if ((u[i].bytes[6] >> 4) != 4 || (u[i].bytes[8] >> 6) != 2) {
            free(u);
            TEST_FAIL_("UUID %zu lacks version 4 / variant 10", i);
        }
    }
    qsort(u, MILLION, sizeof *u, cmp16);
    size_t dup = 0;
    for (size_t i = 1; i < MILLION; i++)
        dup += memcmp(&u[i - 1], &u[i], 16) == 0;
    free(u);
    idm_gen_free(g);
    ASSERT_EQ_INT(dup, 0);
}

/* ---- UUIDv7 --------------------------------------------------------------- */

static void test_uuidv7_layout(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T2026_MS);
    idm_gen *g = new_gen(&c, NULL);
    idm_uuid u[3];
    idm_error err = {0};
    ASSERT_OK(idm_uuidv7_next_n(g, u, 3, &err), &err);
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ_U64(v7_ms(&u[i]), (uint64_t)T2026_MS);
        ASSERT_EQ_INT(u[i].bytes[6] >> 4, 7);
        ASSERT_EQ_INT(u[i].bytes[8] >> 6, 2);
    }
    /* Fresh counter in a new millisecond has its guard bit clear; the
     * next ones in the same millisecond count up by one. */
    ASSERT_TRUE(v7_counter(&u[0]) < 0x8000);
    ASSERT_EQ_INT(v7_counter(&u[1]), v7_counter(&u[0]) + 1);
    ASSERT_EQ_INT(v7_counter(&u[2]), v7_counter(&u[0]) + 2);
    idm_gen_free(g);
}

static void test_uuidv7_million_strictly_increasing(void)
{
    /* The clock advances 1 us per read, so batches of 100 share a
     * millisecond ten times over: both the new-millisecond and the counter
     * paths run. */
    struct fake_clock c = {.step_ns = 1000};
    fake_clock_set_ms(&c, T2026_MS);
    idm_gen *g = new_gen(&c, NULL);
    idm_uuid *u = malloc(MILLION * sizeof *u);
    idm_error err = {0};
    for (size_t i = 0; i < MILLION; i += 100)
        ASSERT_OK(idm_uuidv7_next_n(g, u + i, 100, &err), &err);
    size_t bad = first_disorder(u, MILLION, sizeof *u);
    free(u);
    idm_gen_free(g);
    ASSERT_EQ_INT(bad, 0);
}

static void test_uuidv7_frozen_clock_overflows_into_next_ms(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T2026_MS);
    idm_gen *g = new_gen(&c, NULL);
    enum { N = 200000 };
    idm_uuid *u = malloc(N * sizeof *u);
    idm_error err = {0};
    for (size_t i = 0; i < N; i += 5000)
        ASSERT_OK(idm_uuidv7_next_n(g, u + i, 5000, &err), &err);
    size_t bad = first_disorder(u, N, sizeof *u);
    uint64_t last_ms = v7_ms(&u[N - 1]);
    free(u);
    idm_gen_free(g);
    ASSERT_EQ_INT(bad, 0);
    /* At least 32,768 per millisecond before borrowing the next one. */
    ASSERT_TRUE(last_ms > (uint64_t)T2026_MS);
    ASSERT_TRUE(last_ms <= (uint64_t)T2026_MS + N / 32768);
}

static void test_uuidv7_clock_rewind_never_goes_back(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T2026_MS);
    idm_gen *g = new_gen(&c, NULL);
    idm_uuid a, b, d;
    idm_error err = {0};
    ASSERT_OK(idm_uuidv7_next_n(g, &a, 1, &err), &err);
    fake_clock_set_ms(&c, T2026_MS - 5000); /* five seconds back */
    ASSERT_OK(idm_uuidv7_next_n(g, &b, 1, &err), &err);
    ASSERT_TRUE(memcmp(&a, &b, 16) < 0);
    ASSERT_EQ_U64(v7_ms(&b), (uint64_t)T2026_MS);
    fake_clock_set_ms(&c, T2026_MS + 1);
    ASSERT_OK(idm_uuidv7_next_n(g, &d, 1, &err), &err);
    ASSERT_EQ_U64(v7_ms(&d), (uint64_t)T2026_MS + 1);
    ASSERT_TRUE(memcmp(&b, &d, 16) < 0);
    ASSERT_EQ_INT(c.sleeps, 0); /* never stalls */
    idm_gen_free(g);
}

/* ---- ULID ------------------------------------------------------------------ */

static void test_ksuid_counts_in_first_96_payload_bits(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T2026_MS);
    idm_gen *g = new_gen(&c, NULL);
    idm_ksuid k[2];
    idm_error err = {0};
    ASSERT_OK(idm_ksuid_next_n(g, k, 2, &err), &err);
    uint8_t want[16];
    memcpy(want, k[0].bytes, 16);
    idm__increment_be(want, 16);
    ASSERT_EQ_MEM(k[1].bytes, want, 16);
    ASSERT_TRUE(memcmp(k[0].bytes + 16, k[1].bytes + 16, 4) != 0); /* fresh tails (2^-32 to fail) */
    idm_gen_free(g);
}

static void test_ulid_monotonic_increment_within_ms(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T2026_MS);
    idm_gen *g = new_gen(&c, NULL);
    idm_ulid l[3];
    idm_error err = {0};
    ASSERT_OK(idm_ulid_next_n(g, l, 3, &err), &err);
    ASSERT_EQ_U64(idm__get_be48(l[0].bytes), (uint64_t)T2026_MS);
    /* Spec: the random part of the next ULID is the previous plus one. */
    uint8_t want[10];
    memcpy(want, l[0].bytes + 6, 10);
    idm__increment_be(want, 10);
    ASSERT_EQ_MEM(l[1].bytes + 6, want, 10);
    idm__increment_be(want, 10);
    ASSERT_EQ_MEM(l[2].bytes + 6, want, 10);
    idm_gen_free(g);
}

static int all_ff(void *ctx, void *buf, size_t len)
{
    (void)ctx;
    memset(buf, 0xFF, len);
    return IDM_OK;
}

static void test_ulid_random_overflow_advances_timestamp(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T2026_MS);
    idm_gen_config cfg = {0};
    cfg.clock = fake_clock_as_clock(&c);
    cfg.entropy.fill = all_ff;
    idm_gen *g = NULL;
    idm_error err = {0};
    ASSERT_OK(idm_gen_new(&g, &cfg, &err), &err);
    idm_ulid l[5];
    idm_ksuid k[2];
    /* One at a time: every call's random part is all ones, so each one
     * carries into the next millisecond, with a fresh random part. */
    for (int i = 0; i < 3; i++)
        ASSERT_OK(idm_ulid_next_n(g, &l[i], 1, &err), &err);
    ASSERT_EQ_U64(idm__get_be48(l[0].bytes), (uint64_t)T2026_MS);
    ASSERT_EQ_U64(idm__get_be48(l[1].bytes), (uint64_t)T2026_MS + 1);
    ASSERT_EQ_U64(idm__get_be48(l[2].bytes), (uint64_t)T2026_MS + 2);
    ASSERT_EQ_U64(l[2].bytes[15], 0xFF); /* fresh, not the carry's zero */
    /* Within one bulk call too: the carry continues with fresh random
     * bits, not from zero (issue 7). */
    ASSERT_OK(idm_ulid_next_n(g, &l[3], 2, &err), &err);
    ASSERT_EQ_U64(idm__get_be48(l[3].bytes), (uint64_t)T2026_MS + 3);
    ASSERT_EQ_U64(idm__get_be48(l[4].bytes), (uint64_t)T2026_MS + 4);
    ASSERT_EQ_U64(l[4].bytes[15], 0xFF);
    ASSERT_EQ_U64(l[4].bytes[6], 0xFF);
    ASSERT_EQ_INT(first_disorder(l, 5, sizeof l[0]), 0);
    ASSERT_OK(idm_ksuid_next_n(g, &k[0], 1, &err), &err);
    ASSERT_OK(idm_ksuid_next_n(g, &k[1], 1, &err), &err);
    ASSERT_EQ_U64(idm__get_be32(k[1].bytes), idm__get_be32(k[0].bytes) + 1);
    idm_gen_free(g);
}

static void test_ulid_and_ksuid_million_strictly_increasing(void)
{
    struct fake_clock c = {.step_ns = 1000};
    fake_clock_set_ms(&c, T2026_MS);
    idm_gen *g = new_gen(&c, NULL);
    idm_ulid *l = malloc(MILLION * sizeof *l);
    idm_ksuid *k = malloc(MILLION * sizeof *k);
    idm_error err = {0};
    for (size_t i = 0; i < MILLION; i += 100) {
        ASSERT_OK(idm_ulid_next_n(g, l + i, 100, &err), &err);
        ASSERT_OK(idm_ksuid_next_n(g, k + i, 100, &err), &err);
    }
    size_t bad_l = first_disorder(l, MILLION, sizeof *l);
    size_t bad_k = first_disorder(k, MILLION, sizeof *k);
    free(l);
    free(k);
    idm_gen_free(g);
    ASSERT_EQ_INT(bad_l, 0);
    ASSERT_EQ_INT(bad_k, 0);
}

static void test_ulid_ksuid_clock_rewind_keep_order(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T2026_MS);
    idm_gen *g = new_gen(&c, NULL);
    idm_ulid l[2];
    idm_ksuid k[2];
    idm_error err = {0};
    ASSERT_OK(idm_ulid_next_n(g, &l[0], 1, &err), &err);
    ASSERT_OK(idm_ksuid_next_n(g, &k[0], 1, &err), &err);
    fake_clock_set_ms(&c, T2026_MS - 3600 * 1000);
    ASSERT_OK(idm_ulid_next_n(g, &l[1], 1, &err), &err);
    ASSERT_OK(idm_ksuid_next_n(g, &k[1], 1, &err), &err);
    ASSERT_TRUE(memcmp(&l[0], &l[1], 16) < 0);
    ASSERT_TRUE(memcmp(&k[0], &k[1], 20) < 0);
    ASSERT_EQ_U64(idm__get_be32(k[1].bytes), (uint64_t)(T2026_MS / 1000 - IDM_KSUID_EPOCH_S));
    idm_gen_free(g);
}

/* ---- threads ---------------------------------------------------------------- */

enum { THREADS = 4, PER_THREAD = 250000, BATCH = 50 };

struct thread_arg {
    idm_gen *g;
    int format; /* 0 v7, 1 ulid, 2 ksuid */
    uint8_t *out;
    int rc;
};

static void *mint_thread(void *p)
{
    struct thread_arg *a = p;
    idm_error err;
    for (size_t i = 0; i < PER_THREAD && a->rc == IDM_OK; i += BATCH) {
        if (a->format == 0)
            a->rc = idm_uuidv7_next_n(a->g, (idm_uuid *)a->out + i, BATCH, &err);
        else if (a->format == 1)
            a->rc = idm_ulid_next_n(a->g, (idm_ulid *)a->out + i, BATCH, &err);
        else
            a->rc = idm_ksuid_next_n(a->g, (idm_ksuid *)a->out + i, BATCH, &err);
    }
    return NULL;
}

static void test_gen_four_threads_share_one_generator(void)
{
    idm_gen *g = new_gen(NULL, NULL); /* the real clock: real contention */
    for (int format = 0; format < 3; format++) {
        size_t size = format == 2 ? 20 : 16;
        uint8_t *all = malloc((size_t)THREADS * PER_THREAD * size);
        pthread_t t[THREADS];
        struct thread_arg args[THREADS];
        for (int i = 0; i < THREADS; i++) {
            args[i] = (struct thread_arg){g, format, all + (size_t)i * PER_THREAD * size, IDM_OK};
            pthread_create(&t[i], NULL, mint_thread, &args[i]);
        }
        for (int i = 0; i < THREADS; i++)
            pthread_join(t[i], NULL);
        size_t disorder = 0;
        for (int i = 0; i < THREADS; i++) {
            ASSERT_EQ_INT(args[i].rc, IDM_OK);
            disorder += first_disorder(args[i].out, PER_THREAD, size);
        }
        size_t total = (size_t)THREADS * PER_THREAD, dup = 0;
        qsort(all, total, size, size == 16 ? cmp16 : cmp20);
        for (size_t i = 1; i < total; i++)
            dup += memcmp(all + (i - 1) * size, all + i * size, size) == 0;
        free(all);
        ASSERT_EQ_INT(disorder, 0); /* each thread sees increasing IDs */
        ASSERT_EQ_INT(dup, 0);      /* and the union has no duplicate */
    }
    idm_gen_free(g);
}

/* ---- fork ------------------------------------------------------------------- */

enum { FORK_N = 64 };

/* Mints FORK_N IDs of each kind in parent and child after fork and checks
 * that no ID of the child equals one of the parent. With the clock frozen,
 * a ULID/KSUID child that merely incremented the parent's state, or a v4
 * child that reused the parent's buffered bytes, would collide at once. */
static void test_gen_fork_child_never_repeats_parent(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T2026_MS);
    idm_gen *g = new_gen(&c, NULL); /* real CSPRNG, reseeded by OpenSSL */
    idm_error err = {0};
    struct {
        idm_uuid v4[FORK_N], v7[FORK_N];
        idm_ulid ulid[FORK_N];
        idm_ksuid ksuid[FORK_N];
    } parent, child, before;
    /* g2 mints only UUIDv4 before the fork, so nothing else draws random
     * bytes in the child first: a child reusing the thread's buffered bytes
     * would repeat the parent's UUIDs exactly. */
    idm_gen *g2 = new_gen(&c, NULL);
    idm_uuid v4_parent[FORK_N], v4_child[FORK_N];
    ASSERT_OK(idm_uuidv4_next_n(g2, before.v4, 1, &err), &err); /* fill the pool */
    ASSERT_OK(idm_uuidv4_next_n(g, before.v4, 1, &err), &err);
    ASSERT_OK(idm_ulid_next_n(g, before.ulid, 1, &err), &err);
    ASSERT_OK(idm_ksuid_next_n(g, before.ksuid, 1, &err), &err);
    int fds[2];
    ASSERT_TRUE(pipe(fds) == 0);
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0) {
        int rc = idm_uuidv4_next_n(g2, v4_child, FORK_N, NULL) |
                 idm_uuidv4_next_n(g, child.v4, FORK_N, NULL) | idm_uuidv7_next_n(g, child.v7, FORK_N, NULL) |
                 idm_ulid_next_n(g, child.ulid, FORK_N, NULL) | idm_ksuid_next_n(g, child.ksuid, FORK_N, NULL);
        ssize_t w = write(fds[1], &child, sizeof child);
        ssize_t w2 = write(fds[1], v4_child, sizeof v4_child);
        _exit(rc == 0 && w == (ssize_t)sizeof child && w2 == (ssize_t)sizeof v4_child ? 0 : 1);
    }
    close(fds[1]);
    ASSERT_OK(idm_uuidv4_next_n(g2, v4_parent, FORK_N, &err), &err);
    ASSERT_OK(idm_uuidv4_next_n(g, parent.v4, FORK_N, &err), &err);
    ASSERT_OK(idm_uuidv7_next_n(g, parent.v7, FORK_N, &err), &err);
    ASSERT_OK(idm_ulid_next_n(g, parent.ulid, FORK_N, &err), &err);
    ASSERT_OK(idm_ksuid_next_n(g, parent.ksuid, FORK_N, &err), &err);
    size_t got = 0;
    while (got < sizeof child) {
        ssize_t r = read(fds[0], (char *)&child + got, sizeof child - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    size_t got2 = 0;
    while (got2 < sizeof v4_child) {
        ssize_t r = read(fds[0], (char *)v4_child + got2, sizeof v4_child - got2);
        if (r <= 0)
            break;
        got2 += (size_t)r;
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_EQ_INT(got, sizeof child);
    ASSERT_EQ_INT(got2, sizeof v4_child);
    size_t same = 0;
    for (int i = 0; i < FORK_N; i++) {
        for (int j = 0; j < FORK_N; j++) {
            same += memcmp(&v4_parent[i], &v4_child[j], 16) == 0;
            same += memcmp(&parent.v4[i], &child.v4[j], 16) == 0;
            same += memcmp(&parent.v7[i], &child.v7[j], 16) == 0;
            same += memcmp(&parent.ulid[i], &child.ulid[j], 16) == 0;
            same += memcmp(&parent.ksuid[i], &child.ksuid[j], 20) == 0;
        }
    }
    ASSERT_EQ_INT(same, 0);
    /* The child's sequences still continue the generator's own order. */
    ASSERT_TRUE(memcmp(&before.ulid[0], &child.ulid[0], 16) < 0);
    ASSERT_TRUE(memcmp(&before.ksuid[0], &child.ksuid[0], 20) < 0);
    ASSERT_EQ_INT(first_disorder(child.ulid, FORK_N, 16), 0);
    idm_gen_free(g);
    idm_gen_free(g2);
}

static void test_gen_random_fills_any_length(void)
{
    idm_gen *g = new_gen(NULL, NULL);
    static uint8_t a[3 * IDM_ENTROPY_POOL_BYTES + 7], b[sizeof a];
    idm_error err = {0};
    ASSERT_OK(idm_gen_random(g, a, sizeof a, &err), &err);
    ASSERT_OK(idm_gen_random(g, b, sizeof b, &err), &err);
    ASSERT_TRUE(memcmp(a, b, sizeof a) != 0);
    ASSERT_OK(idm_gen_random(g, NULL, 0, &err), &err);
    idm_gen_free(g);
}

static void test_gen_ceiling_for_time_ordered_formats(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T2026_MS);
    idm_gen *g = new_gen(&c, NULL);
    idm_error err = {0};
    ASSERT_EQ_INT(idm_gen_ceiling(g), INT64_MAX);
    idm_gen_set_ceiling(g, T2026_MS);
    idm_uuid u[4];
    idm_ulid l[4];
    idm_ksuid k[4];
    ASSERT_OK(idm_uuidv7_next_n(g, u, 4, &err), &err);
    ASSERT_OK(idm_ulid_next_n(g, l, 4, &err), &err);
    ASSERT_OK(idm_ksuid_next_n(g, k, 4, &err), &err);
    /* The clock passes the ceiling: UUIDv7 and ULID stop, KSUID's second
     * (which started before the ceiling) goes on. */
    fake_clock_set_ms(&c, T2026_MS + 1);
    ASSERT_EQ_INT(idm_uuidv7_next_n(g, u, 1, &err), IDM_ECEILING);
    ASSERT_TRUE(strstr(err.msg, "ceiling") != NULL);
    ASSERT_EQ_INT(idm_ulid_next_n(g, l, 1, &err), IDM_ECEILING);
    ASSERT_OK(idm_ksuid_next_n(g, k, 1, &err), &err);
    fake_clock_set_ms(&c, T2026_MS + 1000);
    ASSERT_EQ_INT(idm_ksuid_next_n(g, k, 1, &err), IDM_ECEILING);
    char text[64 * 37];
    size_t len = 1;
    ASSERT_EQ_INT(idm_gen_next_text_n(g, IDM_FORMAT_UUIDV7, text, sizeof text, 2, 0, &len, &err),
                  IDM_ECEILING);
    ASSERT_EQ_INT(len, 0);
    /* UUIDv4 has no time: not affected. */
    ASSERT_OK(idm_uuidv4_next_n(g, u, 4, &err), &err);
    /* A UUIDv7 call whose counter would borrow a millisecond past the
     * ceiling mints nothing: all or none. */
    fake_clock_set_ms(&c, T2026_MS);
    enum { N = 70000 };
    idm_uuid *many = malloc(N * sizeof *many);
    ASSERT_TRUE(many != NULL);
    ASSERT_EQ_INT(idm_uuidv7_next_n(g, many, N, &err), IDM_ECEILING);
    idm_gen_set_ceiling(g, T2026_MS + 5);
    ASSERT_OK(idm_uuidv7_next_n(g, many, N, &err), &err);
    ASSERT_EQ_INT(first_disorder(many, N, sizeof *many), 0);
    ASSERT_TRUE(idm__get_be48(many[N - 1].bytes) <= (uint64_t)T2026_MS + 5);
    free(many);
    idm_gen_free(g);
}

static void test_gen_resume_after_keeps_order_with_clock_behind(void)
{
    /* A first run mints at M; a second one starts with its clock 200 ms
     * behind and resumes after M: each format's IDs sort after the first
     * run's, and their times lie after M. */
    const int64_t M = T2026_MS + 123456;
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, M);
    idm_gen *a = new_gen(&c, NULL);
    idm_uuid ua;
    idm_ulid la;
    idm_ksuid ka;
    idm_error err = {0};
    ASSERT_OK(idm_uuidv7_next_n(a, &ua, 1, &err), &err);
    ASSERT_OK(idm_ulid_next_n(a, &la, 1, &err), &err);
    ASSERT_OK(idm_ksuid_next_n(a, &ka, 1, &err), &err);
    idm_gen_free(a);

    fake_clock_set_ms(&c, M - 200);
    idm_gen *b = new_gen(&c, NULL);
    ASSERT_EQ_INT(idm_gen_resume_after(b, -1, &err), IDM_EINVAL);
    ASSERT_OK(idm_gen_resume_after(b, M, &err), &err);
    idm_uuid ub[2];
    idm_ulid lb[2];
    idm_ksuid kb[2];
    ASSERT_OK(idm_uuidv7_next_n(b, ub, 2, &err), &err);
    ASSERT_OK(idm_ulid_next_n(b, lb, 2, &err), &err);
    ASSERT_OK(idm_ksuid_next_n(b, kb, 2, &err), &err);
    ASSERT_TRUE(memcmp(ub[0].bytes, ua.bytes, 16) > 0);
    ASSERT_TRUE(memcmp(lb[0].bytes, la.bytes, 16) > 0);
    ASSERT_TRUE(memcmp(kb[0].bytes, ka.bytes, 20) > 0);
    ASSERT_EQ_U64(idm__get_be48(ub[0].bytes), (uint64_t)(M + 1));
    ASSERT_EQ_U64(idm__get_be48(lb[0].bytes), (uint64_t)(M + 1));
    ASSERT_EQ_U64(idm__get_be32(kb[0].bytes), (uint64_t)(M / 1000 - IDM_KSUID_EPOCH_S + 1));
    ASSERT_TRUE(memcmp(ub[1].bytes, ub[0].bytes, 16) > 0);
    ASSERT_TRUE(memcmp(lb[1].bytes, lb[0].bytes, 16) > 0);
    /* Resuming at an earlier time never moves a state back. */
    ASSERT_OK(idm_gen_resume_after(b, M - 5000, &err), &err);
    idm_uuid uc;
    ASSERT_OK(idm_uuidv7_next_n(b, &uc, 1, &err), &err);
    ASSERT_TRUE(memcmp(uc.bytes, ub[1].bytes, 16) > 0);
    idm_gen_free(b);
}

static void test_gen_clock_shift_reaches_the_year_10889(void)
{
    /* PostgreSQL 18's uuidv7(interval): the clock's int64 nanoseconds end
     * in 2262, a shift in microseconds reaches UUIDv7's and ULID's last
     * millisecond (2^48 - 1, in 10889) and stops there; before 1970 too. */
    const int64_t V7_LAST_MS = (INT64_C(1) << 48) - 1;
    struct fake_clock c = {0};
    atomic_store(&c.now_ns, T2026_MS * 1000000 + 999999); /* .999999 ms: floors */
    idm_gen *g = new_gen(&c, NULL);
    idm_uuid u[3];
    idm_ulid l;
    idm_error err = {0};
    /* To the last millisecond: shift = last - now (in us, plus 999 us of
     * the clock's sub-millisecond part that the floor drops). */
    idm_gen_set_clock_shift_us(g, (V7_LAST_MS - T2026_MS) * 1000);
    ASSERT_OK(idm_uuidv7_next_n(g, u, 1, &err), &err);
    ASSERT_EQ_U64(v7_ms(&u[0]), (uint64_t)V7_LAST_MS);
    ASSERT_EQ_INT(u[0].bytes[6] >> 4, 7);
    ASSERT_OK(idm_ulid_next_n(g, &l, 1, &err), &err);
    ASSERT_EQ_U64(idm__get_be48(l.bytes), (uint64_t)V7_LAST_MS);
    /* One millisecond further: out of range, not wrapped. */
    idm_gen_set_clock_shift_us(g, (V7_LAST_MS - T2026_MS + 1) * 1000);
    ASSERT_EQ_INT(idm_uuidv7_next_n(g, u, 1, &err), IDM_ETIME_RANGE);
    ASSERT_EQ_INT(idm_ulid_next_n(g, &l, 1, &err), IDM_ETIME_RANGE);
    /* 64-bit microseconds overflow: refused, not wrapped. */
    idm_gen_set_clock_shift_us(g, INT64_MAX);
    ASSERT_EQ_INT(idm_uuidv7_next_n(g, u, 1, &err), IDM_ETIME_RANGE);
    ASSERT_TRUE(strstr(err.msg, "64-bit") != NULL);
    idm_gen_free(g);

    /* Before 1970: refused; exactly 1970: the first millisecond. The
     * floor is taken of the shifted microseconds: now .999999 ms, shifted
     * back by now's whole microseconds minus 1, is Unix 1 us: ms 0. */
    g = new_gen(&c, NULL);
    idm_gen_set_clock_shift_us(g, -(T2026_MS * 1000 + 1000));
    ASSERT_EQ_INT(idm_uuidv7_next_n(g, u, 1, &err), IDM_ETIME_RANGE);
    ASSERT_TRUE(strstr(err.msg, "before 1970") != NULL);
    idm_gen_set_clock_shift_us(g, -(T2026_MS * 1000 + 998));
    ASSERT_OK(idm_uuidv7_next_n(g, u, 1, &err), &err);
    ASSERT_EQ_U64(v7_ms(&u[0]), 0);
    idm_gen_free(g);

    /* A year's shift, sub-millisecond: now + shift in microseconds, then
     * the floor; increasing while the shift stays the same. */
    g = new_gen(&c, NULL);
    const int64_t year_us = INT64_C(365) * 86400 * 1000000 + 1;
    idm_gen_set_clock_shift_us(g, year_us);
    ASSERT_OK(idm_uuidv7_next_n(g, u, 3, &err), &err);
    ASSERT_EQ_U64(v7_ms(&u[0]), (uint64_t)(T2026_MS + 365 * INT64_C(86400000) + 1));
    ASSERT_EQ_INT((int)first_disorder(u, 3, sizeof u[0]), 0);
    /* Back to no shift: the state stays ahead (documented), never back. */
    idm_uuid later;
    idm_gen_set_clock_shift_us(g, 0);
    ASSERT_OK(idm_uuidv7_next_n(g, &later, 1, &err), &err);
    ASSERT_TRUE(memcmp(later.bytes, u[2].bytes, 16) > 0);
    idm_gen_free(g);
}

static void test_uuidv7_at_time_and_random_part(void)
{
    /* pg_uuidv7's test value: 2023-01-02T04:26:40.637Z with zeros. */
    idm_uuid u;
    idm_error err = {0};
    char text[IDM_UUID_STRLEN + 1];
    ASSERT_OK(idm_uuidv7_at(INT64_C(1672633600637), NULL, &u, &err), &err);
    ASSERT_OK(idm_uuid_format(&u, text, sizeof text), NULL);
    ASSERT_EQ_STR(text, "018570bb-4a7d-7000-8000-000000000000");
    /* All ones: version and variant written over 6 of the 80 bits. */
    uint8_t ones[10];
    memset(ones, 0xFF, sizeof ones);
    ASSERT_OK(idm_uuidv7_at(0, ones, &u, &err), &err);
    ASSERT_OK(idm_uuid_format(&u, text, sizeof text), NULL);
    ASSERT_EQ_STR(text, "00000000-0000-7fff-bfff-ffffffffffff");
    /* The range's ends: 0 and 2^48 - 1 are in, around them out. */
    ASSERT_OK(idm_uuidv7_at((INT64_C(1) << 48) - 1, NULL, &u, &err), &err);
    ASSERT_OK(idm_uuid_format(&u, text, sizeof text), NULL);
    ASSERT_EQ_STR(text, "ffffffff-ffff-7000-8000-000000000000");
    ASSERT_EQ_INT(idm_uuidv7_at(INT64_C(1) << 48, NULL, &u, &err), IDM_ETIME_RANGE);
    ASSERT_TRUE(strstr(err.msg, "48-bit") != NULL);
    ASSERT_EQ_INT(idm_uuidv7_at(-1, NULL, &u, &err), IDM_ETIME_RANGE);
    ASSERT_EQ_INT(idm_uuidv7_at(0, NULL, NULL, &err), IDM_EINVAL);
    idm_uuid_fields f;
    ASSERT_OK(idm_uuidv7_at(INT64_C(1672633600637), ones, &u, &err), &err);
    idm_uuid_decode(&u, &f);
    ASSERT_EQ_INT(f.version, 7);
    ASSERT_EQ_INT(f.variant, IDM_UUID_VARIANT_RFC9562);
    ASSERT_EQ_U64((uint64_t)f.unix_ms, UINT64_C(1672633600637));
}

static const struct test_case tests[] = {
    TEST(test_gen_rejects_bad_config),
    TEST(test_gen_ceiling_for_time_ordered_formats),
    TEST(test_gen_resume_after_keeps_order_with_clock_behind),
    TEST(test_gen_clock_failure_is_reported),
    TEST(test_gen_entropy_failure_is_reported_then_recovers),
    TEST(test_gen_time_range_ends),
    TEST(test_gen_clock_shift_reaches_the_year_10889),
    TEST(test_uuidv7_at_time_and_random_part),
    TEST(test_gen_allocation_failure_is_enomem),
    TEST(test_uuidv4_version_variant_and_uniqueness),
    TEST(test_uuidv7_layout),
    TEST(test_uuidv7_million_strictly_increasing),
    TEST(test_uuidv7_frozen_clock_overflows_into_next_ms),
    TEST(test_uuidv7_clock_rewind_never_goes_back),
    TEST(test_ulid_monotonic_increment_within_ms),
    TEST(test_ksuid_counts_in_first_96_payload_bits),
    TEST(test_ulid_random_overflow_advances_timestamp),
    TEST(test_ulid_and_ksuid_million_strictly_increasing),
    TEST(test_ulid_ksuid_clock_rewind_keep_order),
    TEST(test_gen_four_threads_share_one_generator),
    TEST(test_gen_fork_child_never_repeats_parent),
    TEST(test_gen_random_fills_any_length),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
