/*
 * test_snowflake_gen.c - the snowflake generator, on the fake clock:
 * strict order, sequence exhaustion, clock rewinds below and above the
 * tolerance, the ends of a layout's time range, resume, random sequence
 * starts, threads and fork.
 */
#include "fakeclock.h"
#include "testlib.h"

#include <idmint/idmint.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#define T2025 1735689600000 /* 2025-01-01T00:00:00Z */
#define T2026 1767225600000 /* 2026-01-01T00:00:00Z */

static idm_sf_layout layout_of(const char *text)
{
    idm_sf_layout l;
    idm_error err = {0};
    memset(&l, 0, sizeof l);
    if (idm_sf_layout_parse(&l, text, strlen(text), &err) != IDM_OK)
        fprintf(stderr, "layout %s: %s\n", text, err.msg);
    return l;
}

static idm_snowflake_config config_with(struct fake_clock *fc, const char *layout, uint64_t node)
{
    idm_snowflake_config cfg;
    idm_snowflake_config_init(&cfg);
    cfg.gen.clock = fake_clock_as_clock(fc);
    cfg.layout = layout_of(layout);
    cfg.node = node;
    return cfg;
}

static idm_snowflake *new_gen(const idm_snowflake_config *cfg)
{
    idm_snowflake *g = NULL;
    idm_error err = {0};
    if (idm_snowflake_new(&g, cfg, &err) != IDM_OK)
        fprintf(stderr, "idm_snowflake_new: %s\n", err.msg);
    return g;
}

static idm_sf_parts decode(const idm_snowflake *g, uint64_t id)
{
    idm_sf_parts p;
    idm_error err = {0};
    memset(&p, 0xff, sizeof p);
    if (idm_sf_decode(idm_snowflake_layout(g), id, &p, &err) != IDM_OK)
        fprintf(stderr, "decode %" PRIu64 ": %s\n", id, err.msg);
    return p;
}

/* ---- errors first ---------------------------------------------------------- */

static void test_snowflake_gen_new_rejects_bad_config(void)
{
    struct fake_clock fc = {0};
    idm_snowflake *g = (idm_snowflake *)&fc; /* must be reset to NULL */
    idm_error err = {0};

    idm_snowflake_config cfg = config_with(&fc, "twitter", 1024);
    ASSERT_EQ_INT(idm_snowflake_new(&g, &cfg, &err), IDM_EINVAL);
    ASSERT_TRUE(g == NULL);
    ASSERT_EQ_STR(err.msg, "node 1024 is out of range for layout twitter (0 to 1023)");

    cfg = config_with(&fc, "time=41,node=4,seq=12", 16);
    ASSERT_EQ_INT(idm_snowflake_new(&g, &cfg, &err), IDM_EINVAL);
    ASSERT_EQ_STR(err.msg, "node 16 is out of range for layout "
                           "time=41,node=4,seq=12,unit=1ms,epoch=0 (0 to 15)");

    cfg = config_with(&fc, "twitter", 1);
    cfg.max_rewind_ms = -1;
    ASSERT_EQ_INT(idm_snowflake_new(&g, &cfg, &err), IDM_EINVAL);

    cfg = config_with(&fc, "twitter", 1);
    cfg.seq_start = 2;
    ASSERT_EQ_INT(idm_snowflake_new(&g, &cfg, &err), IDM_EINVAL);

    cfg = config_with(&fc, "twitter", 1);
    cfg.gen.flags = 1;
    ASSERT_EQ_INT(idm_snowflake_new(&g, &cfg, &err), IDM_EINVAL);

    cfg = config_with(&fc, "twitter", 1);
    cfg.resume_unix_ms = -1;
    ASSERT_EQ_INT(idm_snowflake_new(&g, &cfg, &err), IDM_EINVAL);

    /* A sequence above the time could not give increasing IDs. */
    cfg = config_with(&fc, "seq=12,time=41,node=10", 1);
    ASSERT_EQ_INT(idm_snowflake_new(&g, &cfg, &err), IDM_EINVAL);
    ASSERT_TRUE(strstr(err.msg, "seq above time") != NULL);

    /* A layout that no parser produced. */
    cfg = config_with(&fc, "twitter", 1);
    memset(&cfg.layout, 0, sizeof cfg.layout);
    ASSERT_EQ_INT(idm_snowflake_new(&g, &cfg, &err), IDM_EINVAL);
    cfg = config_with(&fc, "twitter", 1);
    cfg.layout.bits[IDM_SF_NODE] = 11; /* shifts no longer match */
    ASSERT_EQ_INT(idm_snowflake_new(&g, &cfg, &err), IDM_EINVAL);
    ASSERT_TRUE(g == NULL);

    /* The largest node is fine. */
    cfg = config_with(&fc, "twitter", 1023);
    ASSERT_OK(idm_snowflake_new(&g, &cfg, &err), &err);
    idm_snowflake_free(g);
    idm_snowflake_free(NULL);
}

static void test_snowflake_gen_clock_failure(void)
{
    struct fake_clock fc = {0};
    fake_clock_set_ms(&fc, T2025);
    idm_snowflake_config cfg = config_with(&fc, "twitter", 1);
    idm_snowflake *g = new_gen(&cfg);
    ASSERT_TRUE(g != NULL);
    uint64_t ids[4];
    size_t done = 99;
    idm_error err = {0};
    fc.fail_reads = 1;
    ASSERT_EQ_INT(idm_snowflake_next_n(g, ids, 4, &done, &err), IDM_ECLOCK);
    ASSERT_EQ_INT(done, 0);
    ASSERT_OK(idm_snowflake_next_n(g, ids, 4, &done, &err), &err);
    ASSERT_EQ_INT(done, 4);
    /* n = 0 reads no clock and writes nothing. */
    fc.fail_reads = 1;
    ASSERT_OK(idm_snowflake_next_n(g, NULL, 0, &done, &err), &err);
    ASSERT_EQ_INT(done, 0);
    idm_snowflake_free(g);
}

static void test_snowflake_gen_large_rewind_refuses_then_recovers(void)
{
    struct fake_clock fc = {0};
    fake_clock_set_ms(&fc, T2025 + 5000);
    idm_snowflake_config cfg = config_with(&fc, "twitter", 3);
    idm_snowflake *g = new_gen(&cfg);
    ASSERT_TRUE(g != NULL);
    uint64_t first, id;
    size_t done;
    idm_error err = {0};
    ASSERT_OK(idm_snowflake_next_n(g, &first, 1, &done, &err), &err);

    fake_clock_set_ms(&fc, T2025 + 3000);
    ASSERT_EQ_INT(idm_snowflake_next_n(g, &id, 1, &done, &err), IDM_ECLOCK_REWIND);
    ASSERT_EQ_INT(done, 0);
    ASSERT_EQ_INT(err.code, IDM_ECLOCK_REWIND);
    ASSERT_EQ_INT(err.rewind_ms, 2000);
    ASSERT_EQ_STR(err.msg, "clock moved back by 2000 ms (tolerance 10 ms); refusing to mint");
    ASSERT_EQ_INT(fc.sleeps, 0);
    /* Still refusing 11 ms back, one past the tolerance. */
    fake_clock_set_ms(&fc, T2025 + 4989);
    ASSERT_EQ_INT(idm_snowflake_next_n(g, &id, 1, &done, &err), IDM_ECLOCK_REWIND);
    ASSERT_EQ_INT(err.rewind_ms, 11);
    ASSERT_EQ_INT(idm_snowflake_high_water_ms(g), T2025 + 5000);

    /* Once the clock passes the old reading, minting resumes, in order. */
    fake_clock_set_ms(&fc, T2025 + 5001);
    ASSERT_OK(idm_snowflake_next_n(g, &id, 1, &done, &err), &err);
    ASSERT_TRUE(id > first);
    ASSERT_EQ_INT(decode(g, id).unix_ms, T2025 + 5001);
    idm_snowflake_free(g);
}

static void test_snowflake_gen_before_epoch(void)
{
    struct fake_clock fc = {0};
    fake_clock_set_ms(&fc, 946684800000); /* 2000-01-01 */
    idm_snowflake_config cfg = config_with(&fc, "twitter", 1);
    idm_snowflake *g = new_gen(&cfg);
    ASSERT_TRUE(g != NULL);
    uint64_t id;
    size_t done = 9;
    idm_error err = {0};
    ASSERT_EQ_INT(idm_snowflake_next_n(g, &id, 1, &done, &err), IDM_ETIME_RANGE);
    ASSERT_EQ_INT(done, 0);
    ASSERT_EQ_STR(err.msg, "the clock reads 2000-01-01T00:00:00.000Z, before the layout's epoch "
                           "2010-11-04T01:42:54.657Z");
    /* One millisecond before the epoch still fails; the epoch itself is unit 0. */
    fake_clock_set_ms(&fc, 1288834974656);
    ASSERT_EQ_INT(idm_snowflake_next_n(g, &id, 1, &done, &err), IDM_ETIME_RANGE);
    fake_clock_set_ms(&fc, 1288834974657);
    ASSERT_OK(idm_snowflake_next_n(g, &id, 1, &done, &err), &err);
    ASSERT_EQ_U64(id, 1u << 12);
    idm_snowflake_free(g);
}

static void test_snowflake_gen_baidu_ran_out(void)
{
    struct fake_clock fc = {0};
    fake_clock_set_ms(&fc, T2026);
    idm_snowflake_config cfg = config_with(&fc, "baidu", 7);
    idm_snowflake *g = new_gen(&cfg);
    ASSERT_TRUE(g != NULL);
    uint64_t id;
    size_t done = 9;
    idm_error err = {0};
    ASSERT_EQ_INT(idm_snowflake_next_n(g, &id, 1, &done, &err), IDM_ETIME_RANGE);
    ASSERT_EQ_INT(done, 0);
    ASSERT_TRUE(strstr(err.msg, "28-bit time field ran out at 2024-11-20T13:24:16.000Z") != NULL);
    ASSERT_TRUE(strstr(err.msg, "2026-01-01T00:00:00.000Z") != NULL);
    idm_snowflake_free(g);

    /* The last representable second still mints; the next does not. */
    fake_clock_set_ms(&fc, 1732109056000 - 1);
    g = new_gen(&cfg);
    ASSERT_OK(idm_snowflake_next_n(g, &id, 1, &done, &err), &err);
    ASSERT_EQ_U64(decode(g, id).time_units, (1u << 28) - 1);
    fake_clock_set_ms(&fc, 1732109056000);
    ASSERT_EQ_INT(idm_snowflake_next_n(g, &id, 1, &done, &err), IDM_ETIME_RANGE);
    idm_snowflake_free(g);

    /* Moving the epoch (--epoch) makes baidu usable again. */
    fake_clock_set_ms(&fc, T2026);
    ASSERT_OK(idm_sf_layout_set_epoch(&cfg.layout, T2025, &err), &err);
    g = new_gen(&cfg);
    ASSERT_OK(idm_snowflake_next_n(g, &id, 1, &done, &err), &err);
    idm_sf_parts p = decode(g, id);
    ASSERT_EQ_U64(p.time_units, (T2026 - T2025) / 1000);
    ASSERT_EQ_U64(p.node, 7);
    idm_snowflake_free(g);
}

static void test_snowflake_gen_tiny_layout_runs_off_its_end(void)
{
    /* 4 time bits x 2 seq bits: 16 units of 4 IDs, 64 IDs in all. With the
     * clock frozen at the epoch, exhaustion sleeps carry it to unit 15,
     * then the last unit's sequence runs out: no wrap to unit 0. */
    struct fake_clock fc = {0};
    fake_clock_set_ms(&fc, T2025);
    idm_snowflake_config cfg = config_with(&fc, "time=4,node=2,seq=2,epoch=1735689600000", 2);
    idm_snowflake *g = new_gen(&cfg);
    ASSERT_TRUE(g != NULL);
    uint64_t ids[100];
    size_t done = 0;
    idm_error err = {0};
    ASSERT_EQ_INT(idm_snowflake_next_n(g, ids, 100, &done, &err), IDM_ETIME_RANGE);
    ASSERT_EQ_INT(done, 64);
    ASSERT_TRUE(strstr(err.msg, "4-bit time field ran out at 2025-01-01T00:00:00.016Z") != NULL);
    for (size_t i = 0; i < done; i++) {
        idm_sf_parts p = decode(g, ids[i]);
        ASSERT_EQ_U64(p.time_units, i / 4);
        ASSERT_EQ_U64(p.sequence, i % 4);
        ASSERT_EQ_U64(p.node, 2);
        if (i > 0)
            ASSERT_TRUE(ids[i] > ids[i - 1]);
    }
    ASSERT_EQ_INT(fc.sleeps, 15);
    /* It stays refused, now because the clock is past the end. */
    ASSERT_EQ_INT(idm_snowflake_next_n(g, ids, 1, &done, &err), IDM_ETIME_RANGE);
    ASSERT_EQ_INT(done, 0);
    fake_clock_set_ms(&fc, T2025 + 16);
    ASSERT_EQ_INT(idm_snowflake_next_n(g, ids, 1, &done, &err), IDM_ETIME_RANGE);
    ASSERT_TRUE(strstr(err.msg, "the clock reads 2025-01-01T00:00:00.016Z") != NULL);
    idm_snowflake_free(g);
}

static void test_snowflake_gen_entropy_failure(void)
{
    struct fake_clock fc = {0};
    struct fake_entropy fe = {0};
    fe.fail_at = 1;
    fake_clock_set_ms(&fc, T2025);
    idm_snowflake_config cfg = config_with(&fc, "twitter", 1);
    cfg.gen.entropy = fake_entropy_as_entropy(&fe);
    cfg.seq_start = IDM_SF_SEQ_START_RANDOM;
    idm_snowflake *g = new_gen(&cfg);
    ASSERT_TRUE(g != NULL);
    uint64_t ids[8];
    size_t done = 9;
    idm_error err = {0};
    ASSERT_EQ_INT(idm_snowflake_next_n(g, ids, 8, &done, &err), IDM_ENOENTROPY);
    ASSERT_EQ_INT(done, 0);
    ASSERT_OK(idm_snowflake_next_n(g, ids, 8, &done, &err), &err);
    ASSERT_EQ_INT(done, 8);
    idm_snowflake_free(g);
}

/* ---- generation ------------------------------------------------------------ */

static void test_snowflake_gen_config_defaults(void)
{
    idm_snowflake_config cfg;
    memset(&cfg, 0x5a, sizeof cfg);
    idm_snowflake_config_init(&cfg);
    ASSERT_EQ_STR(cfg.layout.name, "twitter");
    ASSERT_EQ_U64(cfg.node, 0);
    ASSERT_EQ_INT(cfg.max_rewind_ms, 10);
    ASSERT_EQ_INT(cfg.seq_start, IDM_SF_SEQ_START_ZERO);
    ASSERT_EQ_INT(cfg.resume_unix_ms, 0);
    ASSERT_EQ_INT(cfg.gen.flags, 0);
    ASSERT_TRUE(cfg.gen.clock.now_ns == NULL);
    /* NULL config means the defaults (system clock: only create, no mint). */
    idm_snowflake *g = NULL;
    idm_error err = {0};
    ASSERT_OK(idm_snowflake_new(&g, NULL, &err), &err);
    ASSERT_EQ_STR(idm_snowflake_layout(g)->name, "twitter");
    idm_snowflake_free(g);
}

static void test_snowflake_gen_fields(void)
{
    static const struct {
        const char *layout;
        uint64_t node;
        int64_t offset_ms; /* clock minus epoch */
        uint64_t units;
    } cases[] = {
        {"twitter", 77, 289001719996, 289001719996},
        {"discord", 1023, 41944705796, 41944705796},
        {"instagram", 1341, 1387263000, 1387263000},
        {"sonyflake", 0xBEEF, 12345, 1234},
        {"sonyflake2", 1, 19, 1},
        {"baidu", 4000000, 99999, 99},
        {"safe53", 63, 1000, 1000},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fake_clock fc = {0};
        idm_snowflake_config cfg = config_with(&fc, cases[i].layout, cases[i].node);
        fake_clock_set_ms(&fc, cfg.layout.epoch_ms + cases[i].offset_ms);
        idm_snowflake *g = new_gen(&cfg);
        ASSERT_TRUE(g != NULL);
        uint64_t ids[3];
        size_t done;
        idm_error err = {0};
        ASSERT_OK(idm_snowflake_next_n(g, ids, 3, &done, &err), &err);
        ASSERT_EQ_INT(done, 3);
        for (uint64_t k = 0; k < 3; k++) {
            idm_sf_parts p = decode(g, ids[k]);
            ASSERT_EQ_U64(p.time_units, cases[i].units);
            ASSERT_EQ_INT(p.unix_ms,
                          cfg.layout.epoch_ms + (int64_t)cases[i].units * cfg.layout.unit_ms);
            ASSERT_EQ_U64(p.node, cases[i].node);
            ASSERT_EQ_U64(p.sequence, k);
        }
        ASSERT_EQ_INT(idm_snowflake_high_water_ms(g), cfg.layout.epoch_ms + cases[i].offset_ms);
        idm_snowflake_free(g);
    }
}

static void test_snowflake_gen_million_strictly_increasing(void)
{
    /* The clock advances 1 us per read, slower than twitter's 4096 IDs per
     * ms: both fresh units and exhaustion waits are exercised. */
    struct fake_clock fc = {0};
    fake_clock_set_ms(&fc, T2025);
    fc.step_ns = 1000;
    idm_snowflake_config cfg = config_with(&fc, "twitter", 513);
    idm_snowflake *g = new_gen(&cfg);
    ASSERT_TRUE(g != NULL);
    enum { TOTAL = 1000000 };
    uint64_t *ids = malloc(TOTAL * sizeof *ids);
    ASSERT_TRUE(ids != NULL);
    size_t batch = 1;
    for (size_t at = 0; at < TOTAL;) {
        size_t n = TOTAL - at < batch ? TOTAL - at : batch;
        size_t done = 0;
        idm_error err = {0};
        int rc = idm_snowflake_next_n(g, ids + at, n, &done, &err);
        if (rc != IDM_OK || done != n) {
            free(ids);
            TEST_FAIL_("at %zu: rc %d done %zu: %s", at, rc, done, err.msg);
        }
        at += n;
        batch = batch * 3 % 9973 + 1; /* batch sizes from 1 to ~10000 */
    }
    size_t bad = 0;
    for (size_t i = 1; i < TOTAL; i++)
        bad += ids[i] <= ids[i - 1];
    uint64_t node_mask = (uint64_t)1023 << 12;
    for (size_t i = 0; i < TOTAL; i++)
        bad += (ids[i] & node_mask) != (uint64_t)513 << 12;
    free(ids);
    ASSERT_EQ_INT(bad, 0);
    ASSERT_TRUE(fc.sleeps > 0);
    idm_snowflake_free(g);
}

static void test_snowflake_gen_sequence_exhaustion_waits(void)
{
    /* Frozen clock: 10000 IDs need three units of 4096 at 1 ms each. */
    struct fake_clock fc = {0};
    fake_clock_set_ms(&fc, T2025);
    idm_snowflake_config cfg = config_with(&fc, "twitter", 1);
    idm_snowflake *g = new_gen(&cfg);
    ASSERT_TRUE(g != NULL);
    enum { N = 10000 };
    static uint64_t ids[N];
    size_t done = 0;
    idm_error err = {0};
    ASSERT_OK(idm_snowflake_next_n(g, ids, N, &done, &err), &err);
    ASSERT_EQ_INT(done, N);
    ASSERT_EQ_INT(fc.sleeps, 2);
    ASSERT_EQ_INT(fc.slept_ns, 2000000);
    uint64_t per_unit[3] = {0};
    for (size_t i = 0; i < N; i++) {
        idm_sf_parts p = decode(g, ids[i]);
        uint64_t u = p.time_units - (uint64_t)(T2025 - 1288834974657);
        ASSERT_TRUE(u < 3);
        per_unit[u]++;
        ASSERT_EQ_U64(p.sequence, i % 4096);
        if (i > 0)
            ASSERT_TRUE(ids[i] > ids[i - 1]);
    }
    ASSERT_EQ_U64(per_unit[0], 4096);
    ASSERT_EQ_U64(per_unit[1], 4096);
    ASSERT_EQ_U64(per_unit[2], N - 8192);
    ASSERT_EQ_INT(idm_snowflake_high_water_ms(g), T2025 + 2);

    /* Across calls too: the next call continues the third unit. */
    uint64_t more;
    ASSERT_OK(idm_snowflake_next_n(g, &more, 1, &done, &err), &err);
    ASSERT_EQ_U64(decode(g, more).sequence, N - 8192);
    idm_snowflake_free(g);
}

static void test_snowflake_gen_exhaustion_with_coarse_units(void)
{
    /* Sonyflake: 256 IDs per 10 ms; a clock read 3 ms into a unit sleeps
     * only the 7 ms left. */
    struct fake_clock fc = {0};
    fake_clock_set_ms(&fc, 1409529600000 + 1003);
    idm_snowflake_config cfg = config_with(&fc, "sonyflake", 9);
    idm_snowflake *g = new_gen(&cfg);
    ASSERT_TRUE(g != NULL);
    uint64_t ids[300];
    size_t done;
    idm_error err = {0};
    ASSERT_OK(idm_snowflake_next_n(g, ids, 300, &done, &err), &err);
    ASSERT_EQ_INT(fc.sleeps, 1);
    ASSERT_EQ_INT(fc.slept_ns, 7000000);
    ASSERT_EQ_U64(decode(g, ids[255]).time_units, 100);
    ASSERT_EQ_U64(decode(g, ids[255]).sequence, 255);
    ASSERT_EQ_U64(decode(g, ids[256]).time_units, 101);
    ASSERT_EQ_U64(decode(g, ids[256]).sequence, 0);
    idm_snowflake_free(g);
}

static void test_snowflake_gen_small_rewind_waits(void)
{
    struct fake_clock fc = {0};
    fake_clock_set_ms(&fc, T2025 + 100);
    idm_snowflake_config cfg = config_with(&fc, "twitter", 1);
    idm_snowflake *g = new_gen(&cfg);
    ASSERT_TRUE(g != NULL);
    uint64_t a[2], b[2];
    size_t done;
    idm_error err = {0};
    ASSERT_OK(idm_snowflake_next_n(g, a, 2, &done, &err), &err);

    /* 5 ms back: sleep 5 ms, then continue the same unit. */
    fake_clock_set_ms(&fc, T2025 + 95);
    ASSERT_OK(idm_snowflake_next_n(g, b, 2, &done, &err), &err);
    ASSERT_EQ_INT(fc.sleeps, 1);
    ASSERT_EQ_INT(fc.slept_ns, 5000000);
    ASSERT_TRUE(b[0] > a[1]);
    ASSERT_TRUE(b[1] > b[0]);
    ASSERT_EQ_INT(decode(g, b[0]).unix_ms, T2025 + 100);
    ASSERT_EQ_U64(decode(g, b[0]).sequence, 2);

    /* Exactly the tolerance (10 ms) still waits. */
    fake_clock_set_ms(&fc, T2025 + 90);
    ASSERT_OK(idm_snowflake_next_n(g, a, 1, &done, &err), &err);
    ASSERT_EQ_INT(fc.sleeps, 2);
    ASSERT_EQ_INT(fc.slept_ns, 15000000);
    ASSERT_TRUE(a[0] > b[1]);

    /* Tolerance 0: any step back refuses. */
    idm_snowflake_free(g);
    cfg.max_rewind_ms = 0;
    g = new_gen(&cfg);
    fake_clock_set_ms(&fc, T2025 + 100);
    ASSERT_OK(idm_snowflake_next_n(g, a, 1, &done, &err), &err);
    fake_clock_set_ms(&fc, T2025 + 99);
    ASSERT_EQ_INT(idm_snowflake_next_n(g, a, 1, &done, &err), IDM_ECLOCK_REWIND);
    ASSERT_EQ_INT(err.rewind_ms, 1);
    ASSERT_EQ_STR(err.msg, "clock moved back by 1 ms (tolerance 0 ms); refusing to mint");
    idm_snowflake_free(g);
}

static void test_snowflake_gen_resume(void)
{
    struct fake_clock fc = {0};
    const int64_t resume = 1409529600000 + 12345; /* sonyflake unit 1234 */
    idm_snowflake_config cfg = config_with(&fc, "sonyflake", 5);
    cfg.resume_unix_ms = resume;

    /* A clock well before the mark is a rewind, measured from the mark. */
    fake_clock_set_ms(&fc, resume - 1000);
    idm_snowflake *g = new_gen(&cfg);
    ASSERT_TRUE(g != NULL);
    ASSERT_EQ_INT(idm_snowflake_high_water_ms(g), resume);
    uint64_t id;
    size_t done;
    idm_error err = {0};
    ASSERT_EQ_INT(idm_snowflake_next_n(g, &id, 1, &done, &err), IDM_ECLOCK_REWIND);
    ASSERT_EQ_INT(err.rewind_ms, 1000);
    idm_snowflake_free(g);

    /* At the mark itself its unit counts as used: the first ID waits for
     * unit 1235, which starts 5 ms later. */
    fake_clock_set_ms(&fc, resume);
    g = new_gen(&cfg);
    ASSERT_OK(idm_snowflake_next_n(g, &id, 1, &done, &err), &err);
    ASSERT_EQ_U64(decode(g, id).time_units, 1235);
    ASSERT_EQ_U64(decode(g, id).sequence, 0);
    ASSERT_EQ_INT(fc.sleeps, 1);
    ASSERT_EQ_INT(fc.slept_ns, 5000000);
    ASSERT_EQ_INT(idm_snowflake_high_water_ms(g), resume + 5);
    idm_snowflake_free(g);

    /* Within the tolerance before the mark: wait, then the next unit. */
    fc.sleeps = 0;
    fake_clock_set_ms(&fc, resume - 8);
    g = new_gen(&cfg);
    ASSERT_OK(idm_snowflake_next_n(g, &id, 1, &done, &err), &err);
    ASSERT_EQ_U64(decode(g, id).time_units, 1235);
    ASSERT_EQ_INT(fc.sleeps, 2);
    idm_snowflake_free(g);

    /* Later than the mark's unit: no wait. */
    fc.sleeps = 0;
    fake_clock_set_ms(&fc, resume + 20);
    g = new_gen(&cfg);
    ASSERT_OK(idm_snowflake_next_n(g, &id, 1, &done, &err), &err);
    ASSERT_EQ_U64(decode(g, id).time_units, 1236);
    ASSERT_EQ_INT(fc.sleeps, 0);
    idm_snowflake_free(g);
}

static void test_snowflake_gen_ceiling_stops_inside_a_bulk_call(void)
{
    /* Frozen clock and a ceiling one unit ahead: a call for 10000 IDs gets
     * the two units the ceiling allows (2 x 4096), then IDM_ECEILING; no ID
     * is past the ceiling. Raising it lets minting continue in order. */
    struct fake_clock fc = {0};
    fake_clock_set_ms(&fc, T2025);
    idm_snowflake_config cfg = config_with(&fc, "twitter", 1);
    idm_snowflake *g = new_gen(&cfg);
    ASSERT_TRUE(g != NULL);
    ASSERT_EQ_INT(idm_snowflake_ceiling(g), INT64_MAX);
    idm_snowflake_set_ceiling(g, T2025 + 1);
    ASSERT_EQ_INT(idm_snowflake_ceiling(g), T2025 + 1);
    enum { N = 10000 };
    static uint64_t ids[N];
    size_t done = 99;
    idm_error err = {0};
    ASSERT_EQ_INT(idm_snowflake_next_n(g, ids, N, &done, &err), IDM_ECEILING);
    ASSERT_EQ_INT(done, 8192);
    ASSERT_TRUE(strstr(err.msg, "ceiling") != NULL);
    for (size_t i = 0; i < done; i++) {
        ASSERT_TRUE(decode(g, ids[i]).unix_ms <= T2025 + 1);
        if (i > 0)
            ASSERT_TRUE(ids[i] > ids[i - 1]);
    }
    /* The clock does not matter: it may run far past the ceiling. */
    fake_clock_set_ms(&fc, T2025 + 5000);
    uint64_t more[4];
    ASSERT_EQ_INT(idm_snowflake_next_n(g, more, 4, &done, &err), IDM_ECEILING);
    ASSERT_EQ_INT(done, 0);
    idm_snowflake_set_ceiling(g, T2025 + 5000);
    ASSERT_OK(idm_snowflake_next_n(g, more, 4, &done, &err), &err);
    ASSERT_EQ_INT(done, 4);
    ASSERT_TRUE(more[0] > ids[8191]);
    ASSERT_EQ_INT(decode(g, more[3]).unix_ms, T2025 + 5000);
    /* A ceiling before the epoch allows nothing. */
    idm_snowflake_set_ceiling(g, 0);
    ASSERT_EQ_INT(idm_snowflake_next_n(g, more, 1, &done, &err), IDM_ECEILING);
    idm_snowflake_free(g);
}

static void test_snowflake_gen_ceiling_with_coarse_units(void)
{
    /* time=41,node=10,seq=8,unit=1s: an ID's time is its unit's start, so
     * a ceiling 500 ms into a unit allows that unit, not the next. */
    struct fake_clock fc = {0};
    const int64_t t0 = T2025 - T2025 % 1000;
    fake_clock_set_ms(&fc, t0 + 200);
    idm_snowflake_config cfg = config_with(&fc, "time=41,node=10,seq=8,unit=1s", 3);
    idm_snowflake *g = new_gen(&cfg);
    ASSERT_TRUE(g != NULL);
    idm_snowflake_set_ceiling(g, t0 + 500);
    uint64_t ids[600];
    size_t done = 0;
    idm_error err = {0};
    ASSERT_EQ_INT(idm_snowflake_next_n(g, ids, 600, &done, &err), IDM_ECEILING);
    ASSERT_EQ_INT(done, 256);
    ASSERT_EQ_INT(decode(g, ids[255]).unix_ms, t0);
    idm_snowflake_free(g);
}

static void test_snowflake_gen_try_never_sleeps(void)
{
    struct fake_clock fc = {0};
    fake_clock_set_ms(&fc, T2025);
    atomic_fetch_add(&fc.now_ns, 250000); /* 0.25 ms into the unit */
    idm_snowflake_config cfg = config_with(&fc, "twitter", 1);
    idm_snowflake *g = new_gen(&cfg);
    ASSERT_TRUE(g != NULL);
    enum { N = 5000 };
    static uint64_t ids[N];
    size_t done = 0;
    int64_t retry = -1;
    idm_error err = {0};
    /* Exhausted: the unit's 4096, then IDM_EAGAIN with the next unit's
     * start as the time to call again, and no sleep. */
    ASSERT_EQ_INT(idm_snowflake_try_next_n(g, ids, N, &done, &retry, &err), IDM_EAGAIN);
    ASSERT_EQ_INT(done, 4096);
    ASSERT_EQ_INT(retry, (T2025 + 1) * 1000000);
    ASSERT_EQ_INT(fc.sleeps, 0);
    /* Too early: still nothing, same answer. */
    size_t more = 0;
    ASSERT_EQ_INT(idm_snowflake_try_next_n(g, ids + done, N - done, &more, &retry, &err), IDM_EAGAIN);
    ASSERT_EQ_INT(more, 0);
    /* At the time given, the rest. */
    atomic_store(&fc.now_ns, retry);
    ASSERT_OK(idm_snowflake_try_next_n(g, ids + done, N - done, &more, &retry, &err), &err);
    ASSERT_EQ_INT(more, N - 4096);
    ASSERT_EQ_INT(retry, 0);
    for (size_t i = 1; i < N; i++)
        ASSERT_TRUE(ids[i] > ids[i - 1]);
    /* A small rewind: IDM_EAGAIN until the latest time used. */
    fake_clock_set_ms(&fc, T2025 - 4);
    ASSERT_EQ_INT(idm_snowflake_try_next_n(g, ids, 1, &more, &retry, &err), IDM_EAGAIN);
    ASSERT_EQ_INT(more, 0);
    ASSERT_EQ_INT(retry, (T2025 + 1) * 1000000);
    /* A large one still refuses outright. */
    fake_clock_set_ms(&fc, T2025 - 4000);
    ASSERT_EQ_INT(idm_snowflake_try_next_n(g, ids, 1, &more, &retry, &err), IDM_ECLOCK_REWIND);
    ASSERT_EQ_INT(fc.sleeps, 0);
    /* The text form stops alike, keeping what it wrote. */
    fake_clock_set_ms(&fc, T2025 + 10);
    static char text[N * 21 + 1];
    size_t len = 0;
    ASSERT_EQ_INT(idm_snowflake_try_next_text_n(g, text, sizeof text, N, IDM_TEXT_NEWLINE, &len,
                                                &retry, &err),
                  IDM_EAGAIN);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    ASSERT_EQ_INT(lines, 4096);
    ASSERT_EQ_INT(retry, (T2025 + 11) * 1000000);
    ASSERT_EQ_INT(fc.sleeps, 0);
    idm_snowflake_free(g);
}

static void test_snowflake_gen_resume_past_layout_refused(void)
{
    struct fake_clock fc = {0};
    fake_clock_set_ms(&fc, T2025);
    idm_snowflake_config cfg = config_with(&fc, "time=20,node=10,seq=12,unit=1ms", 1);
    cfg.resume_unix_ms = INT64_C(1) << 21;
    idm_snowflake *g = NULL;
    idm_error err = {0};
    ASSERT_EQ_INT(idm_snowflake_new(&g, &cfg, &err), IDM_EINVAL);
    ASSERT_TRUE(g == NULL);
}

static void test_snowflake_gen_seq_start_random_window(void)
{
    struct fake_clock fc = {0};
    struct fake_entropy fe = {0};
    fake_clock_set_ms(&fc, T2025);
    idm_snowflake_config cfg = config_with(&fc, "twitter", 1);
    cfg.gen.entropy = fake_entropy_as_entropy(&fe);
    cfg.seq_start = IDM_SF_SEQ_START_RANDOM;
    idm_snowflake *g = new_gen(&cfg);
    ASSERT_TRUE(g != NULL);
    /* 500 units, three IDs each: every unit starts below 128 (twitter's 12
     * sequence bits: a window of 2^7) and counts up from there; starts
     * differ between units, both parities among them. */
    uint64_t distinct_starts = 0, prev_start = UINT64_MAX, max_start = 0, odd = 0;
    uint64_t last = 0;
    for (int u = 0; u < 500; u++) {
        fake_clock_set_ms(&fc, T2025 + u);
        uint64_t ids[3];
        size_t done;
        idm_error err = {0};
        ASSERT_OK(idm_snowflake_next_n(g, ids, 3, &done, &err), &err);
        uint64_t start = decode(g, ids[0]).sequence;
        ASSERT_TRUE(start < 128);
        ASSERT_EQ_U64(decode(g, ids[1]).sequence, start + 1);
        ASSERT_EQ_U64(decode(g, ids[2]).sequence, start + 2);
        ASSERT_TRUE(ids[0] > last);
        last = ids[2];
        distinct_starts += start != prev_start;
        prev_start = start;
        odd += start & 1;
        if (start > max_start)
            max_start = start;
    }
    ASSERT_TRUE(distinct_starts > 400);
    ASSERT_TRUE(max_start >= 96); /* the whole window is used */
    ASSERT_TRUE(odd > 150 && odd < 350);
    ASSERT_EQ_INT(fe.calls, 1); /* drawn from the pool, not per ID */
    idm_snowflake_free(g);

    /* With a frozen clock the first unit holds 4096 - start IDs, then the
     * next unit starts at a fresh random value: one byte each. */
    struct fake_entropy fe2 = {0};
    fe2.next = 0xC7; /* bytes 0xC7, 0xC8: starts 0x47, 0x48 */
    cfg.gen.entropy = fake_entropy_as_entropy(&fe2);
    g = new_gen(&cfg);
    fake_clock_set_ms(&fc, T2025 + 1000);
    static uint64_t ids[5000];
    size_t done;
    idm_error err = {0};
    ASSERT_OK(idm_snowflake_next_n(g, ids, 5000, &done, &err), &err);
    uint64_t start = decode(g, ids[0]).sequence;
    ASSERT_EQ_U64(start, 0x47);
    size_t first_unit = 4096 - (size_t)start;
    ASSERT_EQ_U64(decode(g, ids[first_unit - 1]).sequence, 4095);
    ASSERT_EQ_U64(decode(g, ids[first_unit]).sequence, 0x48);
    ASSERT_EQ_INT(fc.sleeps, 1);
    idm_snowflake_free(g);

    /* sonyflake's 8 sequence bits: a window of 8 (0..7). */
    cfg.layout = layout_of("sonyflake");
    cfg.gen.entropy = fake_entropy_as_entropy(&fe);
    g = new_gen(&cfg);
    for (int u = 0; u < 100; u++) {
        fake_clock_set_ms(&fc, T2025 + 2000 + 10 * u);
        uint64_t id;
        ASSERT_OK(idm_snowflake_next_n(g, &id, 1, &done, &err), &err);
        ASSERT_TRUE(decode(g, id).sequence < 8);
    }
    idm_snowflake_free(g);

    /* Up to 5 sequence bits there is no window: every unit starts at 0. */
    cfg.layout = layout_of("time=41,node=10,seq=1");
    g = new_gen(&cfg);
    fake_clock_set_ms(&fc, T2025);
    uint64_t two[4];
    ASSERT_OK(idm_snowflake_next_n(g, two, 4, &done, &err), &err);
    ASSERT_EQ_U64(two[0] & 1, 0);
    ASSERT_EQ_U64(two[1] & 1, 1);
    ASSERT_EQ_U64(two[2] & 1, 0);
    idm_snowflake_free(g);
}

struct thread_arg {
    pthread_barrier_t *start;
    idm_snowflake *g;
    uint64_t *ids;
    size_t n;
    int failed;
};

static void *mint_thread(void *p)
{
    struct thread_arg *a = p;
    size_t at = 0, batch = 1;
    pthread_barrier_wait(a->start); /* all threads contend from the first call */
    while (at < a->n) {
        size_t n = a->n - at < batch ? a->n - at : batch;
        size_t done = 0;
        if (idm_snowflake_next_n(a->g, a->ids + at, n, &done, NULL) != IDM_OK || done != n) {
            a->failed = 1;
            return NULL;
        }
        for (size_t i = at > 0 ? at : 1; i < at + n; i++) {
            if (a->ids[i] <= a->ids[i - 1])
                a->failed = 2;
        }
        at += n;
        batch = batch % 97 + 1;
    }
    return NULL;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static void test_snowflake_gen_threads_share_one_generator(void)
{
    enum { THREADS = 4, PER = 250000 };
    struct fake_clock fc = {0};
    fake_clock_set_ms(&fc, T2025);
    fc.step_ns = 100;
    idm_snowflake_config cfg = config_with(&fc, "twitter", 42);
    idm_snowflake *g = new_gen(&cfg);
    ASSERT_TRUE(g != NULL);
    uint64_t *all = malloc(THREADS * PER * sizeof *all);
    ASSERT_TRUE(all != NULL);
    pthread_t th[THREADS];
    struct thread_arg args[THREADS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, THREADS);
    for (int t = 0; t < THREADS; t++) {
        args[t] = (struct thread_arg){&start, g, all + (size_t)t * PER, PER, 0};
        if (pthread_create(&th[t], NULL, mint_thread, &args[t]) != 0) {
            free(all);
            TEST_FAIL_("pthread_create failed");
        }
    }
    int failed = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        failed |= args[t].failed;
    }
    pthread_barrier_destroy(&start);
    qsort(all, THREADS * PER, sizeof *all, cmp_u64);
    size_t dups = 0;
    for (size_t i = 1; i < THREADS * PER; i++)
        dups += all[i] == all[i - 1];
    free(all);
    ASSERT_EQ_INT(failed, 0);
    ASSERT_EQ_INT(dups, 0);
    idm_snowflake_free(g);
}

/* Threads mint against a ceiling that another thread raises step by step:
 * every ID's time is at most the ceiling read after the call that minted
 * it returned (the ceiling only rises), none repeats, and the threads get
 * through once the ceiling passes the clock. */
struct ceiling_arg {
    idm_snowflake *g;
    uint64_t *out;
    size_t n;
    _Atomic size_t got;
    int failed;
};

static void *ceiling_thread(void *p)
{
    struct ceiling_arg *a = p;
    idm_error err;
    size_t got = 0;
    while (got < a->n) {
        size_t done = 0;
        uint64_t ids[64];
        size_t k = a->n - got < 64 ? a->n - got : 64;
        int rc = idm_snowflake_try_next_n(a->g, ids, k, &done, NULL, &err);
        int64_t ceiling = idm_snowflake_ceiling(a->g);
        for (size_t i = 0; i < done; i++) {
            idm_sf_parts parts;
            if (idm_sf_decode(idm_snowflake_layout(a->g), ids[i], &parts, NULL) != IDM_OK ||
                parts.unix_ms > ceiling)
                a->failed = 1;
            a->out[got++] = ids[i];
        }
        atomic_store(&a->got, got);
        if (rc != IDM_OK && rc != IDM_ECEILING && rc != IDM_EAGAIN)
            a->failed = 2;
    }
    return NULL;
}

static void test_snowflake_gen_ceiling_raised_while_threads_mint(void)
{
    enum { THREADS = 3, PER = 20000 };
    struct fake_clock fc = {0};
    fake_clock_set_ms(&fc, T2025);
    fc.step_ns = 1000;
    idm_snowflake_config cfg = config_with(&fc, "twitter", 7);
    idm_snowflake *g = new_gen(&cfg);
    ASSERT_TRUE(g != NULL);
    idm_snowflake_set_ceiling(g, T2025);
    uint64_t *all = malloc(THREADS * PER * sizeof *all);
    ASSERT_TRUE(all != NULL);
    pthread_t th[THREADS];
    struct ceiling_arg args[THREADS];
    for (int t = 0; t < THREADS; t++) {
        args[t].g = g;
        args[t].out = all + (size_t)t * PER;
        args[t].n = PER;
        atomic_init(&args[t].got, 0);
        args[t].failed = 0;
        ASSERT_EQ_INT(pthread_create(&th[t], NULL, ceiling_thread, &args[t]), 0);
    }
    /* The owner: raises the ceiling to where the clock is (the threads'
     * reads move the fake clock on), until everyone is done. */
    for (;;) {
        size_t got = 0;
        for (int t = 0; t < THREADS; t++)
            got += atomic_load(&args[t].got);
        if (got == (size_t)THREADS * PER)
            break;
        int64_t now_ms = atomic_load(&fc.now_ns) / 1000000;
        if (now_ms > idm_snowflake_ceiling(g))
            idm_snowflake_set_ceiling(g, now_ms);
        sched_yield();
    }
    int failed = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        failed |= args[t].failed;
    }
    qsort(all, THREADS * PER, sizeof *all, cmp_u64);
    size_t dups = 0;
    for (size_t i = 1; i < THREADS * PER; i++)
        dups += all[i] == all[i - 1];
    free(all);
    ASSERT_EQ_INT(failed, 0);
    ASSERT_EQ_INT(dups, 0);
    idm_snowflake_free(g);
}

static void test_snowflake_gen_fork_child_refuses(void)
{
    struct fake_clock fc = {0};
    fake_clock_set_ms(&fc, T2025);
    idm_snowflake_config cfg = config_with(&fc, "twitter", 1);
    idm_snowflake *g = new_gen(&cfg);
    ASSERT_TRUE(g != NULL);
    uint64_t id;
    size_t done;
    idm_error err = {0};
    ASSERT_OK(idm_snowflake_next_n(g, &id, 1, &done, &err), &err);
    fflush(NULL);
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0) {
        /* Exit codes: 0 refused as expected, 1 minted, 2 wrong message. */
        size_t d = 7;
        idm_error e = {0};
        int rc = idm_snowflake_next_n(g, &id, 1, &d, &e);
        if (rc != IDM_EFORKED || d != 0)
            _exit(1);
        _exit(strstr(e.msg, "fork") != NULL && strstr(e.msg, "node") != NULL ? 0 : 2);
    }
    int status = 0;
    ASSERT_EQ_INT(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ_INT(WEXITSTATUS(status), 0);
    /* The parent is unaffected. */
    uint64_t next;
    ASSERT_OK(idm_snowflake_next_n(g, &next, 1, &done, &err), &err);
    ASSERT_TRUE(next > id);
    idm_snowflake_free(g);
}

static const struct test_case tests[] = {
    TEST(test_snowflake_gen_new_rejects_bad_config),
    TEST(test_snowflake_gen_clock_failure),
    TEST(test_snowflake_gen_large_rewind_refuses_then_recovers),
    TEST(test_snowflake_gen_before_epoch),
    TEST(test_snowflake_gen_baidu_ran_out),
    TEST(test_snowflake_gen_tiny_layout_runs_off_its_end),
    TEST(test_snowflake_gen_entropy_failure),
    TEST(test_snowflake_gen_config_defaults),
    TEST(test_snowflake_gen_fields),
    TEST(test_snowflake_gen_million_strictly_increasing),
    TEST(test_snowflake_gen_sequence_exhaustion_waits),
    TEST(test_snowflake_gen_exhaustion_with_coarse_units),
    TEST(test_snowflake_gen_small_rewind_waits),
    TEST(test_snowflake_gen_resume),
    TEST(test_snowflake_gen_ceiling_stops_inside_a_bulk_call),
    TEST(test_snowflake_gen_ceiling_with_coarse_units),
    TEST(test_snowflake_gen_try_never_sleeps),
    TEST(test_snowflake_gen_resume_past_layout_refused),
    TEST(test_snowflake_gen_seq_start_random_window),
    TEST(test_snowflake_gen_threads_share_one_generator),
    TEST(test_snowflake_gen_ceiling_raised_while_threads_mint),
    TEST(test_snowflake_gen_fork_child_refuses),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
