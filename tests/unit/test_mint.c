/*
 * test_mint.c - idmintd's mint service (server/mint.c) on its own: the
 * generators on a frozen clock, and a layer below (node, ceiling owner)
 * of the test's own, so that every stop is deterministic. It checks the
 * refusals, the sink's framing of a reply whole and in parts, the parks
 * (the next time unit, the ceiling: counted once per request, the job
 * resumed without an ID twice or lost), the 503s (no node, a ceiling
 * that will not rise, a clock stepped back past --max-rewind, the wait
 * for a mark resumed above), causal minting and the clock's readiness.
 * Links without libuv.
 */
#include "testlib.h"

#include "fakeclock.h"
#include "formats.h"
#include "mint.h"
#include "pause.h"
#include "services.h"

#include <idmint/idmint.h>

#define T0_MS INT64_C(1767225600000) /* 2026-01-01T00:00:00Z */

/* The layer below, as the test sets it. */
struct below {
    const char *no_node;  /* NULL: a node is held */
    bool rises;           /* the ceiling will rise */
    const char *stuck;    /* why it will not */
    int64_t resumed_ms;   /* the mark resumed above */
    int needs, needs_at_ceiling;
};

static const char *below_no_node(void *ctx)
{
    return ((struct below *)ctx)->no_node;
}

static void below_need(void *ctx, bool at_ceiling)
{
    struct below *b = ctx;
    b->needs++;
    b->needs_at_ceiling += at_ceiling;
}

static bool below_rises(void *ctx, bool snowflake, char *why, size_t cap)
{
    struct below *b = ctx;
    (void)snowflake;
    if (!b->rises)
        snprintf(why, cap, "%s", b->stuck);
    return b->rises;
}

static int64_t below_resumed(void *ctx, const char **whose)
{
    *whose = "the test's own mark";
    return ((struct below *)ctx)->resumed_ms;
}

/* A service over generators on a frozen clock at T0_MS. */
struct fixture {
    struct fake_clock clock;
    struct fake_entropy entropy;
    struct below below;
    idms_metrics metrics;
    idms_waitq ceiling;
    idm_sf_layout layout;
    idms_minter m;
    idms_mint_job job;
    idms_seg_share seg;
    idms_services svc; /* the mint service alone */
    idms_req q;
};

static bool fixture_open(struct fixture *f, int64_t resume_ms)
{
    memset(f, 0, sizeof *f);
    fake_clock_set_ms(&f->clock, T0_MS);
    idms_waitq_init(&f->ceiling);
    idm_error err = {0};
    if (idm_sf_layout_preset(&f->layout, "twitter", 7, &err) != IDM_OK)
        return false;
    idm_gen_config gc = {0};
    gc.clock = fake_clock_as_clock(&f->clock);
    gc.entropy = fake_entropy_as_entropy(&f->entropy);
    gc.flags = IDM_GEN_UNSHARED;
    idms_minter *m = &f->m;
    if (idm_gen_new(&m->gen, &gc, &err) != IDM_OK)
        return false;
    idm_snowflake_config sc;
    idm_snowflake_config_init(&sc);
    sc.gen.clock = gc.clock;
    sc.gen.entropy = gc.entropy;
    sc.layout = f->layout;
    sc.node = 5;
    sc.max_rewind_ms = 10;
    sc.resume_unix_ms = resume_ms;
    idm_snowflake *sf = NULL;
    if (idm_snowflake_new(&sf, &sc, &err) != IDM_OK)
        return false;
    m->clock = gc.clock;
    m->layout = &f->layout;
    m->max_count = 10000;
    m->max_rewind_ms = 10;
    m->max_offset_ms = 5000;
    m->ceiling_waiters = &f->ceiling;
    m->metrics = &f->metrics;
    f->below.resumed_ms = resume_ms;
    m->below = (idms_mint_below){&f->below, below_no_node, below_need, below_rises, below_resumed};
    idms_mint_set_snowflake(m, sf);
    f->svc.mint = m;
    f->svc.metrics = &f->metrics;
    f->q = (idms_req){&f->svc, &f->job, &f->seg, 0};
    return true;
}

static void fixture_close(struct fixture *f)
{
    idms_mint_job_free(&f->job);
    idm_snowflake_free(f->m.sf);
    idm_gen_free(f->m.gen);
}

static uint64_t count_lines(const idms_buf *b)
{
    uint64_t n = 0;
    for (size_t i = 0; i < b->len; i++)
        n += b->data[i] == '\n';
    return n;
}

/* Every line of b parses as format and they strictly ascend (snowflakes
 * by value, the rest as strings). */
static bool lines_ascend(const idms_buf *b, int format)
{
    const idm_format *lib = idmx_formats[format].lib;
    const char *p = b->data, *end = b->data + b->len, *prev = NULL;
    size_t prev_len = 0;
    uint64_t prev_n = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL)
            return false;
        idm_format_value v;
        idm_error err = {0};
        if (idm_format_parse(lib, p, (size_t)(nl - p), &v, &err) != IDM_OK)
            return false;
        if (format == IDMX_FMT_SNOWFLAKE) {
            if (prev != NULL && v.number <= prev_n)
                return false;
            prev_n = v.number;
        } else if (prev != NULL) {
            size_t n = prev_len < (size_t)(nl - p) ? prev_len : (size_t)(nl - p);
            int c = memcmp(prev, p, n);
            if (c > 0 || (c == 0 && prev_len >= (size_t)(nl - p)))
                return false;
        }
        prev = p;
        prev_len = (size_t)(nl - p);
        p = nl + 1;
    }
    return true;
}

static void test_refusals(void)
{
    struct fixture f;
    ASSERT_TRUE(fixture_open(&f, 0));
    idms_mint_result r;
    ASSERT_TRUE(!idms_mint_check(&f.m, IDMX_FMT_UUIDV7, NULL, 0, &r));
    ASSERT_EQ_INT(r.status, 400);
    ASSERT_EQ_STR(r.message, "count must be from 1 to 10000");
    ASSERT_TRUE(!idms_mint_check(&f.m, IDMX_FMT_UUIDV7, NULL, 10001, &r));
    ASSERT_EQ_INT(r.status, 400);
    ASSERT_TRUE(idms_mint_check(&f.m, IDMX_FMT_UUIDV7, NULL, 10000, &r));
    ASSERT_TRUE(!idms_mint_check(&f.m, IDMX_FMT_UUIDV7, "user", 1, &r));
    ASSERT_EQ_INT(r.status, 400);
    ASSERT_TRUE(strstr(r.message, "prefix applies only to") != NULL);
    ASSERT_TRUE(!idms_mint_check(&f.m, IDMX_FMT_TYPEID, NULL, 1, &r));
    ASSERT_EQ_STR(r.message, "typeid needs a prefix (e.g. prefix=user)");
    ASSERT_TRUE(!idms_mint_check(&f.m, IDMX_FMT_TYPEID, "User", 1, &r));
    ASSERT_TRUE(strncmp(r.message, "invalid prefix: ", 16) == 0);
    /* idms_mint refuses the same, appends nothing and keeps no job. */
    idms_buf out;
    idms_buf_init(&out);
    idms_mint(&f.q, IDMX_FMT_TYPEID, NULL, 3, &idms_sink_lines, 0, &out, &r);
    ASSERT_EQ_INT(r.status, 400);
    ASSERT_EQ_INT(out.len, 0);
    ASSERT_TRUE(!f.job.active);
    ASSERT_EQ_INT(f.below.needs, 0);
    idms_buf_free(&out);
    fixture_close(&f);
}

static void test_whole_reply(void)
{
    struct fixture f;
    ASSERT_TRUE(fixture_open(&f, 0));
    static const int formats[] = {IDMX_FMT_UUIDV7, IDMX_FMT_ULID, IDMX_FMT_KSUID,
                                  IDMX_FMT_SNOWFLAKE, IDMX_FMT_UUIDV4};
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        int fmt = formats[i];
        idms_buf out;
        idms_buf_init(&out);
        idms_mint_result r;
        int needs = f.below.needs;
        idms_mint(&f.q, fmt, NULL, 50, &idms_sink_lines, 0, &out, &r);
        ASSERT_EQ_INT(r.status, 200);
        ASSERT_EQ_INT(count_lines(&out), 50);
        if (fmt != IDMX_FMT_UUIDV4)
            ASSERT_TRUE(lines_ascend(&out, fmt));
        ASSERT_EQ_INT(f.metrics.minted[fmt], 50);
        ASSERT_TRUE(!f.job.active);
        /* A mark covering them is asked for once per reply of a
         * time-ordered format (UUIDv4 has no time). */
        ASSERT_EQ_INT(f.below.needs - needs, idmx_formats[fmt].time_ordered ? 1 : 0);
        idms_buf_free(&out);
    }
    ASSERT_EQ_INT(f.below.needs_at_ceiling, 0);
    fixture_close(&f);
}

/* A sink that frames a reply as "[" id "," id ... "]", and records the
 * indices it saw. */
static uint64_t sink_begins, sink_ends, sink_next_index, sink_bad_index;

static void sink_begin(idms_buf *out, uint64_t count)
{
    (void)count;
    sink_begins++;
    idms_buf_append(out, "[", 1);
}

static void sink_id(idms_buf *out, const char *text, size_t len, uint64_t index)
{
    if (index != sink_next_index)
        sink_bad_index++;
    sink_next_index = index + 1;
    if (index > 0)
        idms_buf_append(out, ",", 1);
    idms_buf_append(out, text, len);
}

static void sink_end(idms_buf *out, uint64_t count)
{
    (void)count;
    sink_ends++;
    idms_buf_append(out, "]", 1);
}

static const idms_sink list_sink = {sink_begin, sink_id, sink_end};

static void test_reply_in_parts(void)
{
    struct fixture f;
    ASSERT_TRUE(fixture_open(&f, 0));
    sink_begins = sink_ends = sink_next_index = sink_bad_index = 0;
    idms_buf out;
    idms_buf_init(&out);
    idms_mint_result r;
    int calls = 0;
    /* 1000 ULIDs in parts of about 1 KiB: each call mints one part. */
    do {
        idms_mint(&f.q, IDMX_FMT_ULID, NULL, 1000, &list_sink, 1024, &out, &r);
        ASSERT_TRUE(r.in_parts);
        ASSERT_EQ_INT(r.continued, calls > 0);
        calls++;
    } while (r.status == IDMS_MINT_PART && calls < 1000);
    ASSERT_EQ_INT(r.status, 200);
    ASSERT_TRUE(calls > 10);
    ASSERT_EQ_INT(sink_begins, 1);
    ASSERT_EQ_INT(sink_ends, 1);
    ASSERT_EQ_INT(sink_bad_index, 0);
    ASSERT_EQ_INT(sink_next_index, 1000);
    ASSERT_EQ_INT(out.len, 2 + 1000 * 26 + 999);
    ASSERT_EQ_INT(f.metrics.minted[IDMX_FMT_ULID], 1000);
    idms_buf_free(&out);
    fixture_close(&f);
}

/* The clock frozen: a snowflake unit's 4096 sequence numbers are used up,
 * and the request parks until the next millisecond with what it has. */
static void test_park_next_unit(void)
{
    struct fixture f;
    ASSERT_TRUE(fixture_open(&f, 0));
    idms_buf out;
    idms_buf_init(&out);
    idms_mint_result r;
    idms_mint(&f.q, IDMX_FMT_SNOWFLAKE, NULL, 5000, &idms_sink_lines, 0, &out, &r);
    ASSERT_EQ_INT(r.status, IDMS_MINT_PARKED);
    ASSERT_EQ_INT(r.park.why, IDMS_PARK_TIME);
    ASSERT_EQ_INT(r.park.until_ns, (T0_MS + 1) * 1000000);
    ASSERT_TRUE(f.job.active);
    ASSERT_EQ_INT(f.job.done, 4096);
    ASSERT_EQ_INT(f.metrics.parks, 1);
    ASSERT_EQ_INT(f.metrics.exhaustion_waits, 1);
    /* Offered again before the time: it parks again, counted once. */
    idms_mint(&f.q, IDMX_FMT_SNOWFLAKE, NULL, 5000, &idms_sink_lines, 0, &out, &r);
    ASSERT_EQ_INT(r.status, IDMS_MINT_PARKED);
    ASSERT_EQ_INT(f.metrics.parks, 1);
    ASSERT_EQ_INT(f.metrics.exhaustion_waits, 1);
    ASSERT_EQ_INT(out.len, 0);
    /* The next millisecond: the job goes on from where it stopped. */
    fake_clock_set_ms(&f.clock, T0_MS + 1);
    idms_mint(&f.q, IDMX_FMT_SNOWFLAKE, NULL, 5000, &idms_sink_lines, 0, &out, &r);
    ASSERT_EQ_INT(r.status, 200);
    ASSERT_EQ_INT(count_lines(&out), 5000);
    ASSERT_TRUE(lines_ascend(&out, IDMX_FMT_SNOWFLAKE));
    ASSERT_EQ_INT(f.metrics.minted[IDMX_FMT_SNOWFLAKE], 5000);
    ASSERT_TRUE(!f.job.active);
    idms_buf_free(&out);
    fixture_close(&f);
}

/* The ceiling below the clock: the request parks on the ceiling's list
 * and asks for a mark; raised, it finishes the job; a ceiling that will
 * not rise is a 503 with the below layer's reason. */
static void test_park_on_ceiling(void)
{
    struct fixture f;
    ASSERT_TRUE(fixture_open(&f, 0));
    idm_gen_set_ceiling(f.m.gen, T0_MS - 1);
    f.below.rises = true;
    idms_buf out;
    idms_buf_init(&out);
    idms_mint_result r;
    idms_mint(&f.q, IDMX_FMT_UUIDV7, NULL, 20, &idms_sink_lines, 0, &out, &r);
    ASSERT_EQ_INT(r.status, IDMS_MINT_PARKED);
    ASSERT_EQ_INT(r.park.why, IDMS_PARK_CEILING);
    ASSERT_TRUE(r.park.on == &f.ceiling);
    ASSERT_EQ_INT(f.below.needs_at_ceiling, 1);
    ASSERT_EQ_INT(f.metrics.ceiling_waits, 1);
    ASSERT_EQ_INT(f.metrics.parks, 1);
    ASSERT_EQ_INT(out.len, 0);
    idms_mint(&f.q, IDMX_FMT_UUIDV7, NULL, 20, &idms_sink_lines, 0, &out, &r);
    ASSERT_EQ_INT(r.status, IDMS_MINT_PARKED);
    ASSERT_EQ_INT(f.metrics.ceiling_waits, 1); /* once per request */
    idm_gen_set_ceiling(f.m.gen, T0_MS + 1000);
    idms_mint(&f.q, IDMX_FMT_UUIDV7, NULL, 20, &idms_sink_lines, 0, &out, &r);
    ASSERT_EQ_INT(r.status, 200);
    ASSERT_EQ_INT(count_lines(&out), 20);
    ASSERT_TRUE(lines_ascend(&out, IDMX_FMT_UUIDV7));

    out.len = 0;
    idm_gen_set_ceiling(f.m.gen, T0_MS - 1);
    f.below.rises = false;
    f.below.stuck = "the time high-water mark cannot be written: disk full";
    idms_mint(&f.q, IDMX_FMT_KSUID, NULL, 3, &idms_sink_lines, 0, &out, &r);
    ASSERT_EQ_INT(r.status, 503);
    ASSERT_EQ_INT(r.retry_after_s, 1);
    ASSERT_EQ_STR(r.message, "the time high-water mark cannot be written: disk full");
    ASSERT_EQ_INT(out.len, 0);
    ASSERT_TRUE(!f.job.active);
    idms_buf_free(&out);
    fixture_close(&f);
}

/* A reply sent in parts that meets a ceiling that will not rise after
 * its first part is cut short (the client must not take it as whole). */
static void test_cut_after_a_part(void)
{
    struct fixture f;
    ASSERT_TRUE(fixture_open(&f, 0));
    idms_buf out;
    idms_buf_init(&out);
    idms_mint_result r;
    idms_mint(&f.q, IDMX_FMT_UUIDV7, NULL, 500, &idms_sink_lines, 1024, &out, &r);
    ASSERT_EQ_INT(r.status, IDMS_MINT_PART);
    size_t sent = out.len;
    ASSERT_TRUE(sent > 0);
    idm_gen_set_ceiling(f.m.gen, T0_MS - 1);
    f.below.stuck = "no mark";
    idms_mint(&f.q, IDMX_FMT_UUIDV7, NULL, 500, &idms_sink_lines, 1024, &out, &r);
    ASSERT_EQ_INT(r.status, IDMS_MINT_CUT);
    ASSERT_EQ_INT(out.len, sent);
    ASSERT_EQ_INT(f.metrics.minted[IDMX_FMT_UUIDV7], count_lines(&out));
    idms_buf_free(&out);
    fixture_close(&f);
}

static void test_no_node(void)
{
    struct fixture f;
    ASSERT_TRUE(fixture_open(&f, 0));
    f.below.no_node = "every node of the registry is held";
    idms_buf out;
    idms_buf_init(&out);
    idms_mint_result r;
    idms_mint(&f.q, IDMX_FMT_SNOWFLAKE, NULL, 1, &idms_sink_lines, 0, &out, &r);
    ASSERT_EQ_INT(r.status, 503);
    ASSERT_EQ_STR(r.message, "every node of the registry is held");
    ASSERT_EQ_INT(out.len, 0);
    /* Other formats need no node. */
    idms_mint(&f.q, IDMX_FMT_ULID, NULL, 1, &idms_sink_lines, 0, &out, &r);
    ASSERT_EQ_INT(r.status, 200);
    idms_buf_free(&out);
    fixture_close(&f);
}

/* The clock stepped back: within --max-rewind the request parks until the
 * clock is back; past it, a 503 (counted, with Retry-After); and the
 * clock behind a mark resumed above is the wait for that mark. */
static void test_clock_rewind(void)
{
    struct fixture f;
    ASSERT_TRUE(fixture_open(&f, 0));
    idms_buf out;
    idms_buf_init(&out);
    idms_mint_result r;
    idms_pause_why w;
    idms_mint(&f.q, IDMX_FMT_SNOWFLAKE, NULL, 1, &idms_sink_lines, 0, &out, &r);
    ASSERT_EQ_INT(r.status, 200);
    ASSERT_TRUE(idms_mint_clock_ready(&f.m, T0_MS, &w));
    fake_clock_set_ms(&f.clock, T0_MS - 5);
    idms_mint(&f.q, IDMX_FMT_SNOWFLAKE, NULL, 1, &idms_sink_lines, 0, &out, &r);
    ASSERT_EQ_INT(r.status, IDMS_MINT_PARKED);
    ASSERT_EQ_INT(r.park.why, IDMS_PARK_TIME);
    ASSERT_EQ_INT(f.metrics.rewind_waits, 1);
    ASSERT_EQ_INT(f.metrics.clock_rewinds, 1);
    idms_mint_job_free(&f.job);
    fake_clock_set_ms(&f.clock, T0_MS - 2000);
    idms_mint(&f.q, IDMX_FMT_SNOWFLAKE, NULL, 1, &idms_sink_lines, 0, &out, &r);
    ASSERT_EQ_INT(r.status, 503);
    ASSERT_EQ_INT(r.retry_after_s, 3);
    ASSERT_EQ_INT(f.metrics.clock_refusals, 1);
    ASSERT_TRUE(!idms_mint_clock_ready(&f.m, T0_MS - 2000, &w));
    ASSERT_TRUE(strstr(w.why, "the clock is 2000 ms behind the latest time used") != NULL);
    /* What ends it: the clock within --max-rewind of the time used. */
    ASSERT_EQ_INT(w.cause, IDMS_PAUSE_CLOCK);
    ASSERT_EQ_INT(w.eta_ms, 2000 - f.m.max_rewind_ms);
    idms_buf_free(&out);
    fixture_close(&f);

    /* A mark 3 s ahead resumed above: the 503 names it, and a wait for
     * it is not a rewind. */
    ASSERT_TRUE(fixture_open(&f, T0_MS + 3000));
    idms_buf_init(&out);
    idms_mint(&f.q, IDMX_FMT_SNOWFLAKE, NULL, 1, &idms_sink_lines, 0, &out, &r);
    ASSERT_EQ_INT(r.status, 503);
    ASSERT_TRUE(strstr(r.message, "waiting for the clock to reach the time high-water mark of "
                                  "the test's own mark") != NULL);
    ASSERT_EQ_INT(f.metrics.clock_refusals, 0);
    ASSERT_TRUE(!idms_mint_clock_ready(&f.m, T0_MS, &w));
    ASSERT_TRUE(strstr(w.why, "of the test's own mark (3000 ms ahead)") != NULL);
    ASSERT_EQ_INT(w.eta_ms, 3000 - f.m.max_rewind_ms);
    idms_buf_free(&out);
    fixture_close(&f);
}

/* Causal minting: every ID sorts after the one seen, observed once;
 * one too far ahead is a 422, one that does not parse a 400. */
static void test_after(void)
{
    struct fixture f;
    ASSERT_TRUE(fixture_open(&f, 0));
    /* A UUIDv7 1 s ahead, minted by a second service on a clock ahead. */
    struct fixture g;
    ASSERT_TRUE(fixture_open(&g, 0));
    fake_clock_set_ms(&g.clock, T0_MS + 1000);
    idms_buf seen, out;
    idms_buf_init(&seen);
    idms_buf_init(&out);
    idms_mint_result r;
    idms_mint(&g.q, IDMX_FMT_UUIDV7, NULL, 1, &idms_sink_lines, 0, &seen, &r);
    ASSERT_EQ_INT(r.status, 200);
    ASSERT_EQ_INT(seen.len, 37);
    char after[37];
    memcpy(after, seen.data, 36);
    after[36] = '\0';
    idms_mint_after(&f.q, IDMX_FMT_UUIDV7, NULL, after, 3, &idms_sink_lines, 0, &out, &r);
    ASSERT_EQ_INT(r.status, 200);
    ASSERT_EQ_INT(f.metrics.observations, 1);
    idms_buf both;
    idms_buf_init(&both);
    idms_buf_append(&both, seen.data, seen.len);
    idms_buf_append(&both, out.data, out.len);
    ASSERT_TRUE(lines_ascend(&both, IDMX_FMT_UUIDV7));
    idms_buf_free(&both);

    /* 10 s ahead, past --max-offset 5 s. */
    fake_clock_set_ms(&g.clock, T0_MS + 10000);
    seen.len = 0;
    idms_mint(&g.q, IDMX_FMT_UUIDV7, NULL, 1, &idms_sink_lines, 0, &seen, &r);
    memcpy(after, seen.data, 36);
    out.len = 0;
    idms_mint_after(&f.q, IDMX_FMT_UUIDV7, NULL, after, 3, &idms_sink_lines, 0, &out, &r);
    ASSERT_EQ_INT(r.status, 422);
    ASSERT_EQ_INT(f.metrics.observations_refused, 1);
    ASSERT_EQ_INT(out.len, 0);

    ASSERT_TRUE(!idms_mint_check_after(&f.m, IDMX_FMT_UUIDV7, "not-a-uuid", &r));
    ASSERT_EQ_INT(r.status, 400);
    ASSERT_TRUE(strncmp(r.message, "the ID to mint after is not a uuidv7 ('not-a-uuid'):", 52) == 0);
    ASSERT_TRUE(!idms_mint_check_after(&f.m, IDMX_FMT_UUIDV4, after, &r));
    ASSERT_TRUE(strncmp(r.message, "after applies only to ", 22) == 0);
    idms_buf_free(&seen);
    idms_buf_free(&out);
    fixture_close(&g);
    fixture_close(&f);
}

static const struct test_case tests[] = {
    TEST(test_refusals),      TEST(test_whole_reply),    TEST(test_reply_in_parts),
    TEST(test_park_next_unit), TEST(test_park_on_ceiling), TEST(test_cut_after_a_part),
    TEST(test_no_node),       TEST(test_clock_rewind),   TEST(test_after),
    {0}};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
