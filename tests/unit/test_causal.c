/*
 * test_causal.c - causal minting (idm_uuidv7_observe, idm_ulid_observe,
 * idm_ksuid_observe, idm_snowflake_observe) on fake clocks: an ID minted by
 * a generator whose clock runs 200 ms ahead is observed by one 200 ms
 * behind, and everything the slow one mints afterwards sorts after it (as
 * bytes, as text, as numbers), in single and bulk calls and through a
 * snowflake unit's exhaustion; observing the past changes nothing; the
 * offset guard; snowflake node orders per layout; a real clock rewind after
 * an observation; host-wide state; threads.
 */
#include "fakeclock.h"
#include "testlib.h"

#include <idmint/idmint.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define T0    1767225600000 /* 2026-01-01T00:00:00Z, a KSUID second boundary */
#define T2025 1735689600000

enum { F_V7, F_ULID, F_KSUID, F_COUNT };
static const char *const fmt_name[F_COUNT] = {"uuidv7", "ulid", "ksuid"};
static const size_t fmt_size[F_COUNT] = {16, 16, 20};

typedef struct id20 {
    uint8_t b[20];
} id20;

static idm_gen *new_gen(struct fake_clock *c, struct fake_entropy *e, uint32_t flags,
                        const char *state_path)
{
    idm_gen_config cfg = {0};
    cfg.clock = fake_clock_as_clock(c);
    if (e != NULL)
        cfg.entropy = fake_entropy_as_entropy(e);
    cfg.flags = flags;
    cfg.state_path = state_path;
    idm_gen *g = NULL;
    idm_error err = {0};
    if (idm_gen_new(&g, &cfg, &err) != IDM_OK)
        fprintf(stderr, "idm_gen_new: %s\n", err.msg);
    return g;
}

/* Mints n IDs of format f into out (fmt_size[f] bytes apart). */
static int mint_n(idm_gen *g, int f, id20 *out, size_t n, idm_error *err)
{
    int rc = IDM_OK;
    for (size_t i = 0; i < n && rc == IDM_OK; i++) {
        memset(&out[i], 0, sizeof out[i]);
        if (f == F_V7) {
            idm_uuid u;
            rc = idm_uuidv7_next_n(g, &u, 1, err);
            memcpy(out[i].b, u.bytes, 16);
        } else if (f == F_ULID) {
            idm_ulid u;
            rc = idm_ulid_next_n(g, &u, 1, err);
            memcpy(out[i].b, u.bytes, 16);
        } else {
            idm_ksuid k;
            rc = idm_ksuid_next_n(g, &k, 1, err);
            memcpy(out[i].b, k.bytes, 20);
        }
    }
    return rc;
}

/* Mints n IDs with one bulk call. */
static int mint_bulk(idm_gen *g, int f, id20 *out, size_t n, idm_error *err)
{
    int rc;
    if (f == F_KSUID) {
        idm_ksuid *k = calloc(n, sizeof *k);
        rc = idm_ksuid_next_n(g, k, n, err);
        for (size_t i = 0; i < n; i++)
            memcpy(out[i].b, k[i].bytes, 20);
        free(k);
        return rc;
    }
    idm_uuid *u = calloc(n, sizeof *u);
    rc = f == F_V7 ? idm_uuidv7_next_n(g, u, n, err)
                   : idm_ulid_next_n(g, (idm_ulid *)(void *)u, n, err);
    for (size_t i = 0; i < n; i++) {
        memset(out[i].b, 0, 20);
        memcpy(out[i].b, u[i].bytes, 16);
    }
    free(u);
    return rc;
}

static int observe(idm_gen *g, int f, const id20 *seen, int64_t max_offset_ms, idm_error *err)
{
    if (f == F_V7) {
        idm_uuid u;
        memcpy(u.bytes, seen->b, 16);
        return idm_uuidv7_observe(g, &u, max_offset_ms, err);
    }
    if (f == F_ULID) {
        idm_ulid u;
        memcpy(u.bytes, seen->b, 16);
        return idm_ulid_observe(g, &u, max_offset_ms, err);
    }
    idm_ksuid k;
    memcpy(k.bytes, seen->b, 20);
    return idm_ksuid_observe(g, &k, max_offset_ms, err);
}

/* The canonical text of an ID (for the text-order checks). */
static void text_of(int f, const id20 *id, char *dst, size_t cap)
{
    int rc;
    if (f == F_V7) {
        idm_uuid u;
        memcpy(u.bytes, id->b, 16);
        rc = idm_uuid_format(&u, dst, cap);
    } else if (f == F_ULID) {
        idm_ulid u;
        memcpy(u.bytes, id->b, 16);
        rc = idm_ulid_format(&u, dst, cap);
    } else {
        idm_ksuid k;
        memcpy(k.bytes, id->b, 20);
        rc = idm_ksuid_format(&k, dst, cap);
    }
    if (rc != IDM_OK)
        dst[0] = '\0';
}

/* Whether a sorts after b in binary and in text order. */
static bool after(int f, const id20 *a, const id20 *b)
{
    char ta[40], tb[40];
    text_of(f, a, ta, sizeof ta);
    text_of(f, b, tb, sizeof tb);
    return memcmp(a->b, b->b, fmt_size[f]) > 0 && strcmp(ta, tb) > 0;
}

/* ---- errors first ---------------------------------------------------------- */

static void test_causal_gen_bad_arguments(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0);
    idm_gen *g = new_gen(&c, NULL, 0, NULL);
    idm_error err = {0};
    idm_uuid u = {{0}};
    idm_ulid l = {{0}};
    idm_ksuid k = {{0}};
    ASSERT_EQ_INT(idm_uuidv7_observe(NULL, &u, 0, &err), IDM_EINVAL);
    ASSERT_EQ_INT(idm_uuidv7_observe(g, NULL, 0, &err), IDM_EINVAL);
    ASSERT_EQ_INT(idm_ulid_observe(NULL, &l, 0, &err), IDM_EINVAL);
    ASSERT_EQ_INT(idm_ulid_observe(g, NULL, 0, &err), IDM_EINVAL);
    ASSERT_EQ_INT(idm_ksuid_observe(NULL, &k, 0, &err), IDM_EINVAL);
    ASSERT_EQ_INT(idm_ksuid_observe(g, NULL, 0, &err), IDM_EINVAL);
    ASSERT_EQ_INT(idm_ulid_observe(g, &l, -1, &err), IDM_EINVAL);
    ASSERT_EQ_STR(err.msg, "max_offset_ms must be 0 or more, got -1");
    ASSERT_EQ_INT(idm_ksuid_observe(g, &k, -5, &err), IDM_EINVAL);
    /* A UUIDv4 is not a UUIDv7. */
    ASSERT_OK(idm_uuidv4_next_n(g, &u, 1, &err), &err);
    ASSERT_EQ_INT(idm_uuidv7_observe(g, &u, 0, &err), IDM_EINVAL);
    ASSERT_EQ_STR(err.msg, "the UUID seen is version 4, not 7");
    u.bytes[6] = 0x7F;
    ASSERT_EQ_INT(idm_uuidv7_observe(g, &u, -1, &err), IDM_EINVAL);
    /* The last value of each format: nothing can follow it. */
    memset(u.bytes, 0xFF, 16);
    u.bytes[6] = 0x7F;
    u.bytes[8] = 0xBF;
    ASSERT_EQ_INT(idm_uuidv7_observe(g, &u, INT64_MAX, &err), IDM_ETIME_RANGE);
    memset(l.bytes, 0xFF, 16);
    ASSERT_EQ_INT(idm_ulid_observe(g, &l, INT64_MAX, &err), IDM_ETIME_RANGE);
    memset(k.bytes, 0xFF, 20);
    ASSERT_EQ_INT(idm_ksuid_observe(g, &k, INT64_MAX, &err), IDM_ETIME_RANGE);
    /* ... and none of those moved the state. */
    ASSERT_EQ_INT(idm_gen_high_water_ms(g), 0);
    /* A clock that cannot be read. */
    c.fail_reads = 1;
    memset(l.bytes, 0, 16);
    ASSERT_EQ_INT(idm_ulid_observe(g, &l, 0, &err), IDM_ECLOCK);
    idm_gen_free(g);
}

/* ---- 200 ms apart ------------------------------------------------------------ */

/* The case for the idm_gen formats: fast at T0 + 100, slow at
 * T0 - 100 (a KSUID second apart too). */
static void test_causal_gen_slow_observes_fast(void)
{
    for (int f = 0; f < F_COUNT; f++) {
        struct fake_clock fast = {0}, slow = {0};
        fake_clock_set_ms(&fast, T0 + 100);
        fake_clock_set_ms(&slow, T0 - 100);
        idm_gen *gf = new_gen(&fast, NULL, 0, NULL);
        idm_gen *gs = new_gen(&slow, NULL, IDM_GEN_UNSHARED, NULL);
        idm_error err = {0};
        id20 seen, before, ids[600];
        ASSERT_OK(mint_n(gf, f, &seen, 1, &err), &err);
        /* Without the observation the slow one sorts before: the test can fail. */
        ASSERT_OK(mint_n(gs, f, &before, 1, &err), &err);
        if (!after(f, &seen, &before))
            TEST_FAIL_("%s: the slow generator's ID does not sort before the fast one's",
                       fmt_name[f]);
        ASSERT_OK(observe(gs, f, &seen, 500, &err), &err);
        /* The lead counts in the high water (what idmintd persists). */
        int64_t want_hw = f == F_KSUID ? T0 : T0 + 100;
        ASSERT_EQ_INT(idm_gen_high_water_ms(gs), want_hw);
        ASSERT_OK(mint_n(gs, f, ids, 100, &err), &err);
        ASSERT_OK(mint_bulk(gs, f, ids + 100, 500, &err), &err);
        for (size_t i = 0; i < 600; i++) {
            if (!after(f, &ids[i], &seen))
                TEST_FAIL_("%s: ID %zu does not sort after the observed one", fmt_name[f], i);
            if (i > 0 && !after(f, &ids[i], &ids[i - 1]))
                TEST_FAIL_("%s: ID %zu does not sort after ID %zu", fmt_name[f], i, i - 1);
        }
        /* The text calls too. */
        char text[64 * 40];
        size_t len = 0;
        int lib = f == F_V7 ? IDM_FORMAT_UUIDV7 : f == F_ULID ? IDM_FORMAT_ULID : IDM_FORMAT_KSUID;
        ASSERT_OK(observe(gs, f, &seen, 500, &err), &err);
        ASSERT_OK(idm_gen_next_text_n(gs, lib, text, sizeof text, 64, IDM_TEXT_NEWLINE, &len, &err),
                  &err);
        char seen_text[40];
        text_of(f, &seen, seen_text, sizeof seen_text);
        size_t w = strlen(seen_text) + 1;
        ASSERT_EQ_INT(len, 64 * w);
        for (size_t i = 0; i < 64; i++)
            ASSERT_TRUE(memcmp(text + i * w, seen_text, w - 1) > 0);
        idm_gen_free(gf);
        idm_gen_free(gs);
    }
}

/* An observation with the same millisecond keeps it and counts on. */
static void test_causal_uuidv7_continues_in_the_same_millisecond(void)
{
    struct fake_clock fast = {0}, slow = {0};
    fake_clock_set_ms(&fast, T0 + 100);
    fake_clock_set_ms(&slow, T0 - 100);
    idm_gen *gf = new_gen(&fast, NULL, 0, NULL);
    idm_gen *gs = new_gen(&slow, NULL, 0, NULL);
    idm_error err = {0};
    idm_uuid seen, next;
    ASSERT_OK(idm_uuidv7_next_n(gf, &seen, 1, &err), &err);
    ASSERT_OK(idm_uuidv7_observe(gs, &seen, 500, &err), &err);
    ASSERT_OK(idm_uuidv7_next_n(gs, &next, 1, &err), &err);
    idm_uuid_fields a, b;
    idm_uuid_decode(&seen, &a);
    idm_uuid_decode(&next, &b);
    ASSERT_EQ_INT(b.unix_ms, T0 + 100);
    ASSERT_TRUE(memcmp(next.bytes, seen.bytes, 16) > 0);
    /* The counter (the 16 bits after the version) is seen's + 1. */
    unsigned ca =
        (unsigned)((seen.bytes[6] & 0x0F) << 12 | seen.bytes[7] << 4 | (seen.bytes[8] >> 2 & 0x0F));
    unsigned cb =
        (unsigned)((next.bytes[6] & 0x0F) << 12 | next.bytes[7] << 4 | (next.bytes[8] >> 2 & 0x0F));
    ASSERT_EQ_INT(cb, ca + 1);
    idm_gen_free(gf);
    idm_gen_free(gs);
}

/* Counter 0xFFFF seen: the next UUID is in the next millisecond. */
static void test_causal_uuidv7_full_counter_moves_to_the_next_millisecond(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0);
    idm_gen *g = new_gen(&c, NULL, 0, NULL);
    idm_error err = {0};
    idm_uuid seen, next;
    ASSERT_OK(idm_uuidv7_next_n(g, &seen, 1, &err), &err);
    idm_gen_free(g);
    uint64_t ms = T0 + 50;
    for (int i = 0; i < 6; i++)
        seen.bytes[i] = (uint8_t)(ms >> (40 - 8 * i));
    seen.bytes[6] = 0x7F;
    seen.bytes[7] = 0xFF;
    seen.bytes[8] = (uint8_t)(0x80 | 0x0F << 2 | (seen.bytes[8] & 0x03));
    g = new_gen(&c, NULL, 0, NULL);
    ASSERT_OK(idm_uuidv7_observe(g, &seen, 500, &err), &err);
    ASSERT_OK(idm_uuidv7_next_n(g, &next, 1, &err), &err);
    idm_uuid_fields d;
    idm_uuid_decode(&next, &d);
    ASSERT_EQ_INT(d.unix_ms, T0 + 51);
    ASSERT_TRUE(memcmp(next.bytes, seen.bytes, 16) > 0);
    idm_gen_free(g);
}

/* Observing the past changes nothing: twin generators on the same fake
 * clock and entropy mint the same IDs, one of them after observing an old
 * ID. */
static void test_causal_gen_past_changes_nothing(void)
{
    for (int f = 0; f < F_COUNT; f++) {
        struct fake_clock c = {0}, old = {0};
        fake_clock_set_ms(&c, T0 + 5000);
        fake_clock_set_ms(&old, T0 + 1000);
        struct fake_entropy e1 = {0}, e2 = {0}, e3 = {0};
        idm_gen *a = new_gen(&c, &e1, 0, NULL);
        idm_gen *b = new_gen(&c, &e2, 0, NULL);
        idm_gen *o = new_gen(&old, &e3, 0, NULL);
        idm_error err = {0};
        id20 ia, ib, seen;
        ASSERT_OK(mint_n(a, f, &ia, 1, &err), &err);
        ASSERT_OK(mint_n(b, f, &ib, 1, &err), &err);
        ASSERT_OK(mint_n(o, f, &seen, 1, &err), &err);
        int64_t hw = idm_gen_high_water_ms(b);
        ASSERT_OK(observe(b, f, &seen, 0, &err), &err);
        ASSERT_EQ_INT(idm_gen_high_water_ms(b), hw);
        ASSERT_OK(mint_n(a, f, &ia, 1, &err), &err);
        ASSERT_OK(mint_n(b, f, &ib, 1, &err), &err);
        ASSERT_EQ_MEM(ia.b, ib.b, fmt_size[f]);
        idm_gen_free(a);
        idm_gen_free(b);
        idm_gen_free(o);
    }
}

/* More than max_offset_ms ahead: IDM_EOFFSET, nothing moved; exactly at
 * the limit: accepted. */
static void test_causal_gen_offset_guard(void)
{
    for (int f = 0; f < F_COUNT; f++) {
        struct fake_clock c = {0}, ahead = {0};
        fake_clock_set_ms(&c, T0);
        /* KSUIDs compare the start of seen's second: 2 s ahead. */
        int64_t lead = f == F_KSUID ? 2000 : 300;
        fake_clock_set_ms(&ahead, T0 + lead);
        idm_gen *g = new_gen(&c, NULL, 0, NULL);
        idm_gen *h = new_gen(&ahead, NULL, 0, NULL);
        idm_error err = {0};
        id20 first, seen, next;
        ASSERT_OK(mint_n(g, f, &first, 1, &err), &err);
        ASSERT_OK(mint_n(h, f, &seen, 1, &err), &err);
        int64_t hw = idm_gen_high_water_ms(g);
        ASSERT_EQ_INT(observe(g, f, &seen, lead - 1, &err), IDM_EOFFSET);
        ASSERT_EQ_INT(err.code, IDM_EOFFSET);
        char want[160];
        snprintf(want, sizeof want,
                 "the %s seen is %lld ms ahead of the local clock, more than the limit of %lld ms",
                 f == F_V7     ? "UUIDv7"
                 : f == F_ULID ? "ULID"
                               : "KSUID",
                 (long long)lead, (long long)(lead - 1));
        ASSERT_EQ_STR(err.msg, want);
        ASSERT_EQ_INT(observe(g, f, &seen, 0, &err), IDM_EOFFSET);
        ASSERT_EQ_INT(idm_gen_high_water_ms(g), hw);
        ASSERT_OK(mint_n(g, f, &next, 1, &err), &err);
        ASSERT_TRUE(!after(f, &next, &seen));
        ASSERT_OK(observe(g, f, &seen, lead, &err), &err);
        ASSERT_EQ_INT(idm_gen_high_water_ms(g), T0 + lead);
        ASSERT_OK(mint_n(g, f, &next, 1, &err), &err);
        ASSERT_TRUE(after(f, &next, &seen));
        ASSERT_OK(observe(g, f, &seen, INT64_MAX, &err), &err);
        idm_gen_free(g);
        idm_gen_free(h);
    }
}

/* The lead is under the ceiling like any time (idmintd's durable mark). */
static void test_causal_gen_lead_stops_at_the_ceiling(void)
{
    struct fake_clock c = {0}, fast = {0};
    fake_clock_set_ms(&c, T0);
    fake_clock_set_ms(&fast, T0 + 200);
    idm_gen *g = new_gen(&c, NULL, 0, NULL);
    idm_gen *h = new_gen(&fast, NULL, 0, NULL);
    idm_error err = {0};
    id20 seen, next;
    ASSERT_OK(mint_n(h, F_ULID, &seen, 1, &err), &err);
    idm_gen_set_ceiling(g, T0 + 100);
    ASSERT_OK(observe(g, F_ULID, &seen, 500, &err), &err);
    ASSERT_EQ_INT(mint_n(g, F_ULID, &next, 1, &err), IDM_ECEILING);
    idm_gen_set_ceiling(g, idm_gen_high_water_ms(g));
    ASSERT_OK(mint_n(g, F_ULID, &next, 1, &err), &err);
    ASSERT_TRUE(after(F_ULID, &next, &seen));
    idm_gen_free(g);
    idm_gen_free(h);
}

/* A restart that resumes after the high water keeps the order. */
static void test_causal_gen_resume_after_high_water(void)
{
    for (int f = 0; f < F_COUNT; f++) {
        struct fake_clock c = {0}, fast = {0};
        fake_clock_set_ms(&c, T0 - 100);
        fake_clock_set_ms(&fast, T0 + 100);
        idm_gen *g = new_gen(&c, NULL, 0, NULL);
        idm_gen *h = new_gen(&fast, NULL, 0, NULL);
        idm_error err = {0};
        id20 seen, a, b;
        ASSERT_OK(mint_n(h, f, &seen, 1, &err), &err);
        ASSERT_OK(observe(g, f, &seen, 500, &err), &err);
        ASSERT_OK(mint_n(g, f, &a, 1, &err), &err);
        int64_t mark = idm_gen_high_water_ms(g);
        idm_gen_free(g);
        g = new_gen(&c, NULL, 0, NULL);
        ASSERT_OK(idm_gen_resume_after(g, mark, &err), &err);
        ASSERT_OK(mint_n(g, f, &b, 1, &err), &err);
        ASSERT_TRUE(after(f, &b, &a));
        idm_gen_free(g);
        idm_gen_free(h);
    }
}

/* Host-wide: an observation through one handle holds for another. */
static char tmpdir[200];

static const char *tmp_path(const char *name)
{
    static char path[300];
    if (tmpdir[0] == '\0') {
        snprintf(tmpdir, sizeof tmpdir, "%s/idm-causal-XXXXXX",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (mkdtemp(tmpdir) == NULL) {
            perror("mkdtemp");
            exit(1);
        }
    }
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return path;
}

static void test_causal_gen_hostwide_shared(void)
{
    const char *path = tmp_path("gen");
    unlink(path);
    struct fake_clock c = {0}, fast = {0};
    fake_clock_set_ms(&c, T0 - 100);
    fake_clock_set_ms(&fast, T0 + 100);
    idm_gen *a = new_gen(&c, NULL, 0, path);
    idm_gen *b = new_gen(&c, NULL, 0, path);
    idm_gen *h = new_gen(&fast, NULL, 0, NULL);
    ASSERT_TRUE(a != NULL && b != NULL);
    idm_error err = {0};
    for (int f = 0; f < F_COUNT; f++) {
        id20 seen, next;
        ASSERT_OK(mint_n(h, f, &seen, 1, &err), &err);
        ASSERT_OK(observe(a, f, &seen, 500, &err), &err);
        ASSERT_OK(mint_n(b, f, &next, 1, &err), &err);
        ASSERT_TRUE(after(f, &next, &seen));
    }
    idm_gen_free(a);
    idm_gen_free(b);
    idm_gen_free(h);
    unlink(path);
}

/* ---- snowflakes --------------------------------------------------------------- */

static idm_snowflake *new_sf(struct fake_clock *c, const char *layout, uint64_t node,
                             const char *state_path)
{
    idm_snowflake_config cfg;
    idm_snowflake_config_init(&cfg);
    cfg.gen.clock = fake_clock_as_clock(c);
    cfg.gen.state_path = state_path;
    idm_error err = {0};
    if (idm_sf_layout_parse(&cfg.layout, layout, strlen(layout), &err) != IDM_OK)
        fprintf(stderr, "layout %s: %s\n", layout, err.msg);
    cfg.node = node;
    idm_snowflake *g = NULL;
    if (idm_snowflake_new(&g, &cfg, &err) != IDM_OK)
        fprintf(stderr, "idm_snowflake_new: %s\n", err.msg);
    return g;
}

static idm_sf_parts parts_of(const idm_snowflake *g, uint64_t id)
{
    idm_sf_parts p;
    idm_error err = {0};
    memset(&p, 0xff, sizeof p);
    if (idm_sf_decode(idm_snowflake_layout(g), id, &p, &err) != IDM_OK)
        fprintf(stderr, "decode %" PRIu64 ": %s\n", id, err.msg);
    return p;
}

static uint64_t sf_one(idm_snowflake *g)
{
    uint64_t id = 0;
    idm_error err = {0};
    if (idm_snowflake_next_n(g, &id, 1, NULL, &err) != IDM_OK)
        fprintf(stderr, "idm_snowflake_next_n: %s\n", err.msg);
    return id;
}

static void test_causal_snowflake_bad_arguments(void)
{
    struct fake_clock c = {0};
    fake_clock_set_ms(&c, T0);
    idm_snowflake *g = new_sf(&c, "twitter", 5, NULL);
    idm_error err = {0};
    ASSERT_EQ_INT(idm_snowflake_observe(NULL, 1, 0, &err), IDM_EINVAL);
    ASSERT_EQ_INT(idm_snowflake_observe(g, 1, -1, &err), IDM_EINVAL);
    ASSERT_EQ_STR(err.msg, "max_offset_ms must be 0 or more, got -1");
    /* twitter's top bit is unused. */
    ASSERT_EQ_INT(idm_snowflake_observe(g, UINT64_C(1) << 63, INT64_MAX, &err), IDM_EPARSE);
    c.fail_reads = 1;
    ASSERT_EQ_INT(idm_snowflake_observe(g, 1, 0, &err), IDM_ECLOCK);
    ASSERT_EQ_INT(idm_snowflake_high_water_ms(g), 0);
    idm_snowflake_free(g);

    /* Node above time, seen's node greater: no ID of ours can follow it. */
    const char *top = "node=4,time=40,seq=12,unit=1ms,epoch=1735689600000";
    g = new_sf(&c, top, 3, NULL);
    idm_snowflake *o = new_sf(&c, top, 9, NULL);
    uint64_t seen = sf_one(o);
    ASSERT_EQ_INT(idm_snowflake_observe(g, seen, 500, &err), IDM_EUNSUPPORTED);
    idm_snowflake_free(g);
    idm_snowflake_free(o);

    /* The last unit of a tiny layout, a smaller node: no later position. */
    const char *tiny = "time=4,node=2,seq=2,unit=1ms,epoch=1767225600000";
    fake_clock_set_ms(&c, T0 + 15);
    g = new_sf(&c, tiny, 1, NULL);
    o = new_sf(&c, tiny, 3, NULL);
    seen = sf_one(o);
    ASSERT_EQ_INT(parts_of(o, seen).time_units, 15);
    ASSERT_EQ_INT(idm_snowflake_observe(g, seen, 500, &err), IDM_ETIME_RANGE);
    ASSERT_EQ_INT(idm_snowflake_high_water_ms(g), 0);
    idm_snowflake_free(g);
    idm_snowflake_free(o);
}

struct sf_case {
    const char *layout;
    uint64_t fast_node, slow_node;
    int want; /* where the slow one's first ID lands: 0 seen's unit, 1 the next */
};

/* The case for snowflakes: the fast node at T0 + 100, the slow one
 * at T0 - 100; greater, equal and smaller nodes in three layouts. */
static void test_causal_snowflake_node_orders(void)
{
    static const struct sf_case cases[] = {
        {"twitter", 5, 6, 0},
        {"twitter", 5, 5, 0},
        {"twitter", 5, 4, 1},
        {"sonyflake", 500, 501, 0},
        {"sonyflake", 500, 500, 0},
        {"sonyflake", 500, 499, 0},
        {"node=4,time=40,seq=12,unit=1ms,epoch=1735689600000", 5, 5, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const struct sf_case *t = &cases[k];
        struct fake_clock fast = {0}, slow = {0};
        fake_clock_set_ms(&fast, T0 + 100);
        fake_clock_set_ms(&slow, T0 - 100);
        idm_snowflake *gf = new_sf(&fast, t->layout, t->fast_node, NULL);
        idm_snowflake *gs = new_sf(&slow, t->layout, t->slow_node, NULL);
        idm_error err = {0};
        uint64_t ids[3];
        ASSERT_OK(idm_snowflake_next_n(gf, ids, 3, NULL, &err), &err);
        uint64_t seen = ids[2]; /* sequence 2 of its unit */
        uint64_t before = sf_one(gs);
        if (t->layout[0] != 'n' && before >= seen)
            TEST_FAIL_("case %zu: without observing, the slow node's ID is not before", k);
        ASSERT_OK(idm_snowflake_observe(gs, seen, 500, &err), &err);
        idm_sf_parts ps = parts_of(gf, seen);
        ASSERT_EQ_INT(idm_snowflake_high_water_ms(gs), ps.unix_ms);
        uint64_t next = sf_one(gs);
        idm_sf_parts pn = parts_of(gs, next);
        if (next <= seen)
            TEST_FAIL_("case %zu: %" PRIu64 " is not after %" PRIu64, k, next, seen);
        ASSERT_EQ_U64(pn.time_units, ps.time_units + (uint64_t)t->want);
        if (t->slow_node == t->fast_node)
            ASSERT_EQ_U64(pn.sequence, ps.sequence + 1);
        if (t->want == 1) {
            ASSERT_EQ_U64(pn.sequence, 0);
            ASSERT_TRUE(atomic_load(&slow.sleeps) > 0); /* it waited for the unit */
        } else {
            ASSERT_EQ_INT(atomic_load(&slow.sleeps), 0); /* no rewind wait for the lead */
        }
        /* And a bulk call after it, strictly increasing. */
        uint64_t more[100];
        ASSERT_OK(idm_snowflake_next_n(gs, more, 100, NULL, &err), &err);
        for (size_t i = 0; i < 100; i++)
            ASSERT_TRUE(more[i] > (i == 0 ? next : more[i - 1]));
        idm_snowflake_free(gf);
        idm_snowflake_free(gs);
    }
}

/* Node above time, a greater node of ours: nothing to move. */
static void test_causal_snowflake_node_above_time_greater_node(void)
{
    const char *top = "node=4,time=40,seq=12,unit=1ms,epoch=1735689600000";
    struct fake_clock fast = {0}, slow = {0};
    fake_clock_set_ms(&fast, T0 + 100);
    fake_clock_set_ms(&slow, T0 - 100);
    idm_snowflake *gf = new_sf(&fast, top, 3, NULL);
    idm_snowflake *gs = new_sf(&slow, top, 7, NULL);
    idm_error err = {0};
    uint64_t seen = sf_one(gf);
    ASSERT_OK(idm_snowflake_observe(gs, seen, 500, &err), &err);
    ASSERT_EQ_INT(idm_snowflake_high_water_ms(gs), 0);
    uint64_t next = sf_one(gs);
    ASSERT_TRUE(next > seen);
    ASSERT_EQ_INT(parts_of(gs, next).unix_ms, T0 - 100);
    /* Still refused when too far ahead. */
    ASSERT_EQ_INT(idm_snowflake_observe(gs, seen, 100, &err), IDM_EOFFSET);
    idm_snowflake_free(gf);
    idm_snowflake_free(gs);
}

/* The lead unit's sequence used up: next_n waits for the next unit (the
 * fake clock's sleeps move it), try_next_n stops with IDM_EAGAIN and the
 * next unit's start; never a duplicate, never out of order. */
static void test_causal_snowflake_exhaustion_after_observing(void)
{
    struct fake_clock fast = {0}, slow = {0};
    fake_clock_set_ms(&fast, T0 + 100);
    fake_clock_set_ms(&slow, T0 - 100);
    idm_snowflake *gf = new_sf(&fast, "twitter", 1, NULL);
    idm_snowflake *gs = new_sf(&slow, "twitter", 2, NULL);
    idm_error err = {0};
    uint64_t seen = sf_one(gf);
    ASSERT_OK(idm_snowflake_observe(gs, seen, 500, &err), &err);
    enum { N = 5000 };
    uint64_t *ids = calloc(N, sizeof *ids);
    size_t done = 0;
    int64_t retry = 0;
    ASSERT_EQ_INT(idm_snowflake_try_next_n(gs, ids, N, &done, &retry, &err), IDM_EAGAIN);
    ASSERT_EQ_INT(done, 4096);
    ASSERT_EQ_INT(retry, (int64_t)(T0 + 101) * 1000000);
    ASSERT_EQ_INT(atomic_load(&slow.sleeps), 0);
    /* Again before the clock moved: nothing more, the same time. */
    size_t again = 0;
    ASSERT_EQ_INT(idm_snowflake_try_next_n(gs, ids + done, N - done, &again, &retry, &err),
                  IDM_EAGAIN);
    ASSERT_EQ_INT(again, 0);
    ASSERT_EQ_INT(retry, (int64_t)(T0 + 101) * 1000000);
    /* The blocking call waits for it. */
    ASSERT_OK(idm_snowflake_next_n(gs, ids + done, N - done, NULL, &err), &err);
    ASSERT_TRUE(atomic_load(&slow.sleeps) > 0);
    ASSERT_TRUE(atomic_load(&slow.now_ns) >= (int64_t)(T0 + 101) * 1000000);
    for (size_t i = 0; i < N; i++) {
        if (ids[i] <= (i == 0 ? seen : ids[i - 1]))
            TEST_FAIL_("ID %zu out of order", i);
    }
    ASSERT_EQ_INT(parts_of(gs, ids[4095]).unix_ms, T0 + 100);
    ASSERT_EQ_INT(parts_of(gs, ids[4096]).unix_ms, T0 + 101);
    free(ids);
    idm_snowflake_free(gf);
    idm_snowflake_free(gs);
}

/* Observing the past changes nothing; the offset guard. */
static void test_causal_snowflake_past_and_offset_guard(void)
{
    struct fake_clock c = {0}, old = {0}, ahead = {0};
    fake_clock_set_ms(&c, T0);
    fake_clock_set_ms(&old, T0 - 1000);
    fake_clock_set_ms(&ahead, T0 + 300);
    idm_snowflake *a = new_sf(&c, "twitter", 3, NULL);
    idm_snowflake *b = new_sf(&c, "twitter", 3, NULL);
    idm_snowflake *o = new_sf(&old, "twitter", 9, NULL);
    idm_snowflake *h = new_sf(&ahead, "twitter", 9, NULL);
    idm_error err = {0};
    ASSERT_EQ_U64(sf_one(a), sf_one(b));
    ASSERT_OK(idm_snowflake_observe(b, sf_one(o), 0, &err), &err);
    ASSERT_EQ_INT(idm_snowflake_high_water_ms(b), T0);
    ASSERT_EQ_U64(sf_one(a), sf_one(b));

    uint64_t seen = sf_one(h);
    ASSERT_EQ_INT(idm_snowflake_observe(b, seen, 299, &err), IDM_EOFFSET);
    ASSERT_EQ_STR(err.msg, "the snowflake seen is 300 ms ahead of the local clock, more than the "
                           "limit of 299 ms");
    ASSERT_EQ_INT(idm_snowflake_high_water_ms(b), T0);
    ASSERT_EQ_U64(sf_one(a), sf_one(b));
    ASSERT_OK(idm_snowflake_observe(b, seen, 300, &err), &err);
    ASSERT_EQ_INT(idm_snowflake_high_water_ms(b), T0 + 300);
    ASSERT_TRUE(sf_one(b) > seen);
    idm_snowflake_free(a);
    idm_snowflake_free(b);
    idm_snowflake_free(o);
    idm_snowflake_free(h);
}

/* A real clock step back after an observation: within the observation's
 * bound it is the lead; beyond it, refused as ever. */
static void test_causal_snowflake_rewind_after_observing_still_refused(void)
{
    struct fake_clock c = {0}, fast = {0};
    fake_clock_set_ms(&c, T0);
    fake_clock_set_ms(&fast, T0 + 100);
    idm_snowflake *g = new_sf(&c, "twitter", 2, NULL);
    idm_snowflake *h = new_sf(&fast, "twitter", 1, NULL);
    idm_error err = {0};
    uint64_t seen = sf_one(h);
    ASSERT_OK(idm_snowflake_observe(g, seen, 200, &err), &err);
    ASSERT_TRUE(sf_one(g) > seen);
    fake_clock_set_ms(&c, T0 - 50); /* 150 ms behind the lead: within 200 */
    uint64_t id = 0;
    ASSERT_OK(idm_snowflake_next_n(g, &id, 1, NULL, &err), &err);
    ASSERT_EQ_INT(parts_of(g, id).unix_ms, T0 + 100);
    fake_clock_set_ms(&c, T0 - 500); /* 600 ms behind: a rewind */
    ASSERT_EQ_INT(idm_snowflake_next_n(g, &id, 1, NULL, &err), IDM_ECLOCK_REWIND);
    ASSERT_EQ_INT(err.rewind_ms, 600);
    /* Once the clock has passed the lead, a step back is measured as before. */
    fake_clock_set_ms(&c, T0 + 300);
    ASSERT_OK(idm_snowflake_next_n(g, &id, 1, NULL, &err), &err);
    fake_clock_set_ms(&c, T0 + 250);
    ASSERT_EQ_INT(idm_snowflake_next_n(g, &id, 1, NULL, &err), IDM_ECLOCK_REWIND);
    idm_snowflake_free(g);
    idm_snowflake_free(h);
}

/* The lead is under the ceiling, and a restart resumes after it. */
static void test_causal_snowflake_ceiling_and_resume(void)
{
    struct fake_clock c = {0}, fast = {0};
    fake_clock_set_ms(&c, T0);
    fake_clock_set_ms(&fast, T0 + 200);
    idm_snowflake *g = new_sf(&c, "twitter", 2, NULL);
    idm_snowflake *h = new_sf(&fast, "twitter", 1, NULL);
    idm_error err = {0};
    uint64_t seen = sf_one(h), id = 0;
    idm_snowflake_set_ceiling(g, T0 + 100);
    ASSERT_OK(idm_snowflake_observe(g, seen, 500, &err), &err);
    size_t done = 0;
    int64_t retry = -1;
    ASSERT_EQ_INT(idm_snowflake_try_next_n(g, &id, 1, &done, &retry, &err), IDM_ECEILING);
    ASSERT_EQ_INT(retry, 0);
    int64_t mark = idm_snowflake_high_water_ms(g);
    ASSERT_EQ_INT(mark, T0 + 200);
    idm_snowflake_set_ceiling(g, mark);
    ASSERT_OK(idm_snowflake_next_n(g, &id, 1, NULL, &err), &err);
    ASSERT_TRUE(id > seen);
    idm_snowflake_free(g);
    idm_snowflake_config cfg;
    idm_snowflake_config_init(&cfg);
    cfg.gen.clock = fake_clock_as_clock(&c);
    cfg.node = 2;
    cfg.max_rewind_ms = 1000;
    cfg.resume_unix_ms = mark;
    ASSERT_OK(idm_snowflake_new(&g, &cfg, &err), &err);
    uint64_t after_restart = sf_one(g);
    ASSERT_TRUE(after_restart > id);
    idm_snowflake_free(g);
    idm_snowflake_free(h);
}

/* Host-wide: two handles on one state file share the observation. */
static void test_causal_snowflake_hostwide_shared(void)
{
    const char *path = tmp_path("sf");
    unlink(path);
    struct fake_clock c = {0}, fast = {0};
    fake_clock_set_ms(&c, T0 - 100);
    fake_clock_set_ms(&fast, T0 + 100);
    idm_snowflake *a = new_sf(&c, "twitter", 2, path);
    idm_snowflake *b = new_sf(&c, "twitter", 2, path);
    idm_snowflake *h = new_sf(&fast, "twitter", 3, NULL);
    ASSERT_TRUE(a != NULL && b != NULL);
    idm_error err = {0};
    uint64_t seen = sf_one(h);
    ASSERT_OK(idm_snowflake_observe(a, seen, 500, &err), &err);
    ASSERT_EQ_INT(idm_snowflake_high_water_ms(b), T0 + 100);
    uint64_t id = sf_one(b);
    ASSERT_TRUE(id > seen);
    ASSERT_EQ_INT(parts_of(b, id).unix_ms, T0 + 101);
    ASSERT_TRUE(sf_one(a) > id);
    idm_snowflake_free(a);
    idm_snowflake_free(b);
    idm_snowflake_free(h);
    unlink(path);
    rmdir(tmpdir);
}

/* ---- threads ------------------------------------------------------------------ */

enum { THREADS = 4, ROUNDS = 2000 };

struct causal_arg {
    idm_gen *fast, *slow;
    idm_snowflake *sf_fast, *sf_slow;
    int format; /* F_* or F_COUNT for snowflakes */
    int failures;
};

static void *causal_thread(void *p)
{
    struct causal_arg *a = p;
    idm_error err = {0};
    id20 prev = {{0}};
    uint64_t sf_prev = 0;
    for (int r = 0; r < ROUNDS; r++) {
        if (a->format == F_COUNT) {
            uint64_t seen = 0, id = 0;
            if (idm_snowflake_next_n(a->sf_fast, &seen, 1, NULL, &err) != IDM_OK ||
                idm_snowflake_observe(a->sf_slow, seen, 500, &err) != IDM_OK ||
                idm_snowflake_next_n(a->sf_slow, &id, 1, NULL, &err) != IDM_OK || id <= seen ||
                id <= sf_prev) {
                a->failures++;
                break;
            }
            sf_prev = id;
            continue;
        }
        id20 seen, id;
        if (mint_n(a->fast, a->format, &seen, 1, &err) != IDM_OK ||
            observe(a->slow, a->format, &seen, 500, &err) != IDM_OK ||
            mint_n(a->slow, a->format, &id, 1, &err) != IDM_OK ||
            memcmp(id.b, seen.b, fmt_size[a->format]) <= 0 ||
            (r > 0 && memcmp(id.b, prev.b, fmt_size[a->format]) <= 0)) {
            a->failures++;
            break;
        }
        prev = id;
    }
    return NULL;
}

static void test_causal_threads_observe_and_mint(void)
{
    struct fake_clock fast = {0}, slow = {0};
    fake_clock_set_ms(&fast, T0 + 100);
    fake_clock_set_ms(&slow, T0 - 100);
    fast.step_ns = 2000;
    slow.step_ns = 2000;
    idm_gen *gf = new_gen(&fast, NULL, 0, NULL);
    idm_gen *gs = new_gen(&slow, NULL, 0, NULL);
    idm_snowflake *sf = new_sf(&fast, "twitter", 7, NULL);
    idm_snowflake *ss = new_sf(&slow, "twitter", 3, NULL);
    for (int f = 0; f <= F_COUNT; f++) {
        pthread_t t[THREADS];
        struct causal_arg args[THREADS];
        for (int i = 0; i < THREADS; i++) {
            args[i] = (struct causal_arg){gf, gs, sf, ss, f, 0};
            pthread_create(&t[i], NULL, causal_thread, &args[i]);
        }
        for (int i = 0; i < THREADS; i++) {
            pthread_join(t[i], NULL);
            ASSERT_EQ_INT(args[i].failures, 0);
        }
    }
    idm_gen_free(gf);
    idm_gen_free(gs);
    idm_snowflake_free(sf);
    idm_snowflake_free(ss);
}

static const struct test_case tests[] = {
    TEST(test_causal_gen_bad_arguments),
    TEST(test_causal_snowflake_bad_arguments),
    TEST(test_causal_gen_slow_observes_fast),
    TEST(test_causal_uuidv7_continues_in_the_same_millisecond),
    TEST(test_causal_uuidv7_full_counter_moves_to_the_next_millisecond),
    TEST(test_causal_gen_past_changes_nothing),
    TEST(test_causal_gen_offset_guard),
    TEST(test_causal_gen_lead_stops_at_the_ceiling),
    TEST(test_causal_gen_resume_after_high_water),
    TEST(test_causal_gen_hostwide_shared),
    TEST(test_causal_snowflake_node_orders),
    TEST(test_causal_snowflake_node_above_time_greater_node),
    TEST(test_causal_snowflake_exhaustion_after_observing),
    TEST(test_causal_snowflake_past_and_offset_guard),
    TEST(test_causal_snowflake_rewind_after_observing_still_refused),
    TEST(test_causal_snowflake_ceiling_and_resume),
    TEST(test_causal_snowflake_hostwide_shared),
    TEST(test_causal_threads_observe_and_mint),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
